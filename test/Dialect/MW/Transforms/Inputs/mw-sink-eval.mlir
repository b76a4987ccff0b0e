// mw-sink.mlir's @sink, which --mw-sink reorders: mw-eval before and after.
func.func @sink(%a: tensor<64x64xf32>, %x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %big = mw.exp %a : tensor<64x64xf32>
  %c = mw.tanh %x : tensor<64x64xf32>
  %d = mw.matmul %c, %c : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %e = mw.add %big, %d : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %e : tensor<64x64xf32>
}
