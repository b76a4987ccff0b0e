// A step whose batch leaves dimension 0 (mw-zero-errors.mlir).
func.func @forward(%w: tensor<4x2xf32> {mw.role = #mw.role<param>, mw.name = "w"},
                   %x: tensor<4x4xf32> {mw.role = #mw.role<input>, mw.name = "x"},
                   %y: tensor<4xi32> {mw.role = #mw.role<label>, mw.name = "y"})
    -> (tensor<f32> {mw.role = #mw.role<output>, mw.name = "loss"}) {
  %t = mw.transpose %x permutation = [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  %h = mw.matmul %t, %w : (tensor<4x4xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %l = mw.cross_entropy %h, %y : (tensor<4x2xf32>, tensor<4xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
