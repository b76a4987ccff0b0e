// A step --mw-train-pipeline cannot plan: an op without a bufferization.
func.func @train_step(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "test.unknown"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
