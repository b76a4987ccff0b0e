// --outputs writes every result under its name (mw.name, else resultN) in a
// file an independent reader decodes, with the checksums --print reports;
// the file then feeds a function whose arguments have those names (bound by
// name, not position; extra tensors are ignored with a note). A file written
// by the independent writer is read the same way.
//
// RUN: mw-eval %s --entry producer --outputs %t.out --print > %t.p
// RUN: python3 %S/Inputs/safetensors_tool.py dump %t.out | FileCheck %s --check-prefix=DUMP
// RUN: python3 %S/Inputs/safetensors_tool.py checksum %t.out >> %t.p
// RUN: FileCheck %s --check-prefix=SUM --input-file %t.p
// RUN: mw-eval %s --entry consumer --inputs %t.out --print 2>&1 | FileCheck %s --check-prefix=CONSUME
// RUN: python3 %S/Inputs/safetensors_tool.py write %t.ext h:F32:2x3:1,2,3,4,5,6 c:I64:-:-2
// RUN: mw-eval %s --entry consumer --inputs %t.ext --print 2>&1 | FileCheck %s --check-prefix=EXT

// DUMP:      c I64 [] [3]
// DUMP-NEXT: h F32 [2, 3] [0.5, 1, 1.5, 2, 2.5, 3]
// DUMP-NEXT: result2 BF16 [2] [1.5, -0.25]
// DUMP-NOT:  {{.}}

// SUM:      h: f32 [2, 3] checksum=[[H:0x[0-9a-f]+]] sum=1.050000e+01
// SUM-NEXT: c: i64 [] checksum=[[C:0x[0-9a-f]+]] sum=3.000000e+00
// SUM-NEXT: result2: bf16 [2] checksum=[[R:0x[0-9a-f]+]] sum=1.250000e+00
// SUM-NEXT: c: checksum=[[C]]
// SUM-NEXT: h: checksum=[[H]]
// SUM-NEXT: result2: checksum=[[R]]

// CONSUME: mw-eval: note: ignoring 'result2' in {{.*}}: no argument has that name
// CONSUME: prod: f32 [2, 3] {{.*}} values=[1.5, 3, 4.5, 6, 7.5, 9]{{$}}

// EXT: prod: f32 [2, 3] {{.*}} values=[-2, -4, -6, -8, -10, -12]{{$}}

func.func @producer() -> (tensor<2x3xf32> {mw.name = "h"}, tensor<i64> {mw.name = "c"}, tensor<2xbf16>) {
  %h = mw.constant dense<[[0.5, 1.0, 1.5], [2.0, 2.5, 3.0]]> : tensor<2x3xf32>
  %c = mw.constant dense<3> : tensor<i64>
  %b = mw.constant dense<[1.5, -0.25]> : tensor<2xbf16>
  return %h, %c, %b : tensor<2x3xf32>, tensor<i64>, tensor<2xbf16>
}

func.func @consumer(%c: tensor<i64> {mw.name = "c"}, %h: tensor<2x3xf32> {mw.name = "h"})
    -> (tensor<2x3xf32> {mw.name = "prod"}) {
  %cf = mw.cast %c : tensor<i64> to tensor<f32>
  %p = mw.mul %h, %cf : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %p : tensor<2x3xf32>
}
