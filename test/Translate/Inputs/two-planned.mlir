// Two planned functions, neither named train_step (mw-plan-function.mlir).
func.func @forward() attributes {mw.arena_size = 0 : i64,
    mw.arena_alignment = 256 : i64, mw.lower_bound = 0 : i64} {
  return
}

func.func @backward() attributes {mw.arena_size = 0 : i64,
    mw.arena_alignment = 256 : i64, mw.lower_bound = 0 : i64} {
  return
}
