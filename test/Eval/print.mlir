// `mw-eval --print` writes one line per output: name, dtype, shape, the
// FNV-1a 64 checksum of its little-endian bytes in its own dtype (the values
// below were computed independently with Python's struct), the sum, and at
// most six values, each the shortest decimal that reads back as the same
// value of its type. A function without arguments needs no inputs.
//
// RUN: mw-eval %s --print | FileCheck %s

// CHECK:      y: f32 [2, 2] checksum=0x54f152dd6eeaa6a2 sum=1.150000e+01 values=[1.25, 2.25, 3.25, 4.75]{{$}}
// CHECK-NEXT: result1: i32 [3] checksum=0xce573b3dd2bb6c6c sum=2.000000e+00 values=[1, -2, 3]{{$}}
// bf16 0.1 is 0x3DCD = 0.10009765625, printed as "0.1" (it reads back as
// the same bf16 value).
// CHECK-NEXT: tenth: bf16 [] checksum=0x99b52200c4affdf5 sum=1.000977e-01 values=[0.1]{{$}}
// CHECK-NEXT: result3: f32 [8] checksum=0x5313096b9ff0edc3 sum=1.200000e+01 values=[1.5, 1.5, 1.5, 1.5, 1.5, 1.5, ...]{{$}}
// The checksum keeps its leading zero: always 16 hex digits.
// CHECK-NEXT: result4: i64 [] checksum=0x0ba322e9aaacc69d sum=-7.000000e+00 values=[-7]{{$}}
// CHECK-NEXT: result5: f16 [2] checksum=0x769f5ea0ade0e04b sum=-1.500000e+00 values=[0.5, -2]{{$}}
// CHECK-NOT:  {{.}}

func.func @outputs() -> (tensor<2x2xf32> {mw.name = "y"}, tensor<3xi32>,
                         tensor<bf16> {mw.name = "tenth"}, tensor<8xf32>,
                         tensor<i64>, tensor<2xf16>) {
  %a = mw.constant dense<[[1.0, 2.0], [3.0, 4.5]]> : tensor<2x2xf32>
  %b = mw.splat 0.25 : tensor<2x2xf32>
  %y = mw.add %a, %b : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %i = mw.constant dense<[1, -2, 3]> : tensor<3xi32>
  %t = mw.splat 0.1 : tensor<bf16>
  %e = mw.splat 1.5 : tensor<8xf32>
  %n = mw.constant dense<-7> : tensor<i64>
  %h = mw.constant dense<[0.5, -2.0]> : tensor<2xf16>
  return %y, %i, %t, %e, %n, %h : tensor<2x2xf32>, tensor<3xi32>, tensor<bf16>, tensor<8xf32>, tensor<i64>, tensor<2xf16>
}
