// Input of mlir-opt-plugin.mlir: a verifier error seen through the plugin.
func.func @g(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %y = mw.matmul %x, %w : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
