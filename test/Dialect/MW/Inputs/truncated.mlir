// A step cut off before its closing brace; used by ../bad-input.mlir.
func.func @truncated(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = mw.exp %x : tensor<4xf32>
  return %0 : tensor<4xf32>
