// A linear classifier used as input by several autodiff tests.
func.func @forward(%w: tensor<8x4xf32> {mw.role = #mw.role<param>, mw.name = "fc.weight"},
                   %b: tensor<4xf32> {mw.role = #mw.role<param>, mw.name = "fc.bias"},
                   %x: tensor<2x8xf32> {mw.role = #mw.role<input>, mw.name = "x"},
                   %y: tensor<2xi32> {mw.role = #mw.role<label>, mw.name = "y"})
    -> (tensor<f32> {mw.role = #mw.role<output>, mw.name = "loss"}) {
  %h = mw.matmul %x, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %hb = mw.add %h, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %loss = mw.cross_entropy %hb, %y : (tensor<2x4xf32>, tensor<2xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
