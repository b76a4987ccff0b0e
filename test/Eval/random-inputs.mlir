// --random-inputs SEED is deterministic: the same seed gives bit-identical
// outputs, another seed different ones. --save-inputs writes the inputs
// used, and --inputs on that file reproduces the run bit for bit.
//
// RUN: mw-eval %s --random-inputs 7 --print > %t.a
// RUN: mw-eval %s --random-inputs 7 --print > %t.b
// RUN: diff %t.a %t.b
// RUN: mw-eval %s --random-inputs 8 --print > %t.c
// RUN: not diff %t.a %t.c
// RUN: FileCheck %s --input-file %t.a
//
// RUN: mw-eval %s --random-inputs 7 --save-inputs %t.in --print > %t.d
// RUN: diff %t.a %t.d
// RUN: mw-eval %s --inputs %t.in --print > %t.e
// RUN: diff %t.a %t.e
// RUN: python3 %S/Inputs/safetensors_tool.py dump %t.in | FileCheck %s --check-prefix=SAVED

// CHECK: h: f32 [6, 4] checksum=0x{{[0-9a-f]+}} sum={{.*}} values=[
// CHECK: norm: f32 [] checksum=0x{{[0-9a-f]+}} sum=

// Inputs are saved under their argument names. Token ids are uniform over
// the table's 16 rows; the rank-1 '...weight' scale is 1 + normal(0, 0.02).
// SAVED:      ln.weight F32 [4] [{{(1\.0|0\.9)[0-9]*}}, {{(1\.0|0\.9)[0-9]*}}, {{(1\.0|0\.9)[0-9]*}}, {{(1\.0|0\.9)[0-9]*}}]
// SAVED-NEXT: tokens I32 [6] [{{(1[0-5]|[0-9])}}, {{(1[0-5]|[0-9])}}, {{(1[0-5]|[0-9])}}, {{(1[0-5]|[0-9])}}, {{(1[0-5]|[0-9])}}, {{(1[0-5]|[0-9])}}]
// SAVED-NEXT: wte F32 [16, 4] [

func.func @embed(%wte: tensor<16x4xf32> {mw.name = "wte"},
                 %tokens: tensor<6xi32> {mw.name = "tokens"},
                 %g: tensor<4xf32> {mw.name = "ln.weight"})
    -> (tensor<6x4xf32> {mw.name = "h"}, tensor<f32> {mw.name = "norm"}) {
  %e = mw.embedding %wte, %tokens : (tensor<16x4xf32>, tensor<6xi32>) -> tensor<6x4xf32>
  %h = mw.mul %e, %g : (tensor<6x4xf32>, tensor<4xf32>) -> tensor<6x4xf32>
  %sq = mw.mul %h, %h : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
  %n = mw.reduce_sum %sq axes = [0, 1] : tensor<6x4xf32> -> tensor<f32>
  return %h, %n : tensor<6x4xf32>, tensor<f32>
}
