// A step whose one saved activation, %a, is also returned: --mw-remat must
// keep it (a forced value), whatever the strategy.
func.func @train_step(%w: tensor<8x8xf32> {mw.role = #mw.role<param>, mw.name = "w"},
                      %x: tensor<4x8xf32> {mw.role = #mw.role<input>, mw.name = "x"})
    -> (tensor<f32> {mw.role = #mw.role<output>, mw.name = "loss"},
        tensor<4x8xf32> {mw.role = #mw.role<output>, mw.name = "a"},
        tensor<8x8xf32> {mw.role = #mw.role<grad>, mw.name = "w"}) {
  %a = mw.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %h = mw.gelu %a : tensor<4x8xf32>
  %loss = mw.reduce_sum %h axes = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  %dh = mw.splat 1.000000e+00 : tensor<4x8xf32>
  %da = mw.gelu_grad %a, %dh : tensor<4x8xf32>
  %dw = mw.matmul %x, %da {transpose_lhs} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  return %loss, %a, %dw : tensor<f32>, tensor<4x8xf32>, tensor<8x8xf32>
}
