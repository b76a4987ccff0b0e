// No planned function (mw-plan-function.mlir).
func.func @init() {
  return
}

func.func @step() {
  return
}
