// mw.fetch and its mw.wait are the identity: a step whose weight is offloaded
// gives bit for bit what the same step with the weight resident gives.
//
// RUN: python3 %S/Inputs/safetensors_tool.py write %t.in w:F32:2x2:1.5,-2,0.25,4 x:F32:1x2:3,-1
// RUN: mw-eval %s --entry offloaded --inputs %t.in --print > %t.off
// RUN: mw-eval %s --entry resident --inputs %t.in --print > %t.res
// RUN: diff %t.off %t.res
// RUN: FileCheck %s --input-file %t.off

// CHECK: y: f32 [1, 2] {{.*}} values=[4.25, -10]{{$}}

func.func @offloaded(%w: tensor<2x2xf32> {mw.name = "w", mw.role = #mw.role<param>, mw.offload = "cpu"},
                     %x: tensor<1x2xf32> {mw.name = "x"}) -> (tensor<1x2xf32> {mw.name = "y"}) {
  %f = mw.fetch %w {layer = 0 : i64} : tensor<2x2xf32>
  %d = mw.wait %f : tensor<2x2xf32>
  %y = mw.matmul %x, %d : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

func.func @resident(%w: tensor<2x2xf32> {mw.name = "w", mw.role = #mw.role<param>},
                    %x: tensor<1x2xf32> {mw.name = "x"}) -> (tensor<1x2xf32> {mw.name = "y"}) {
  %y = mw.matmul %x, %w : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}
