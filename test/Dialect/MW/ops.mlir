// Round trip of every mw op in its custom form, through a second parse, and
// through the generic form.
// RUN: mw-opt %s | FileCheck %s
// RUN: mw-opt %s | mw-opt | FileCheck %s
// RUN: mw-opt %s -mlir-print-op-generic | mw-opt | FileCheck %s

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @constants()
// CHECK-SAME: -> (tensor<2xf32>, tensor<2x2xf16>, tensor<3xbf16>, tensor<2xi32>, tensor<i64>)
// CHECK: %[[F32:.*]] = mw.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: %[[F16:.*]] = mw.constant dense<5.000000e-01> : tensor<2x2xf16>
// CHECK: %[[BF16:.*]] = mw.constant dense<[1.000000e+00, -2.000000e+00, 3.500000e+00]> : tensor<3xbf16>
// CHECK: %[[I32:.*]] = mw.constant dense<[1, -2]> : tensor<2xi32>
// CHECK: %[[I64:.*]] = mw.constant dense<7> : tensor<i64>
// CHECK: return %[[F32]], %[[F16]], %[[BF16]], %[[I32]], %[[I64]]
func.func @constants() -> (tensor<2xf32>, tensor<2x2xf16>, tensor<3xbf16>, tensor<2xi32>, tensor<i64>) {
  %f32 = mw.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %f16 = mw.constant dense<0.5> : tensor<2x2xf16>
  %bf16 = mw.constant dense<[1.0, -2.0, 3.5]> : tensor<3xbf16>
  %i32 = mw.constant dense<[1, -2]> : tensor<2xi32>
  %i64 = mw.constant dense<7> : tensor<i64>
  return %f32, %f16, %bf16, %i32, %i64 : tensor<2xf32>, tensor<2x2xf16>, tensor<3xbf16>, tensor<2xi32>, tensor<i64>
}

// CHECK-LABEL: func.func @splats()
// CHECK: %[[F32:.*]] = mw.splat 1.500000e+00 : tensor<4x8xf32>
// CHECK: %[[BF16:.*]] = mw.splat 0.000000e+00 : tensor<4x8xbf16>
// CHECK: %[[I32:.*]] = mw.splat -3.000000e+00 : tensor<3xi32>
// CHECK: %[[I64:.*]] = mw.splat 4.200000e+01 : tensor<i64>
// CHECK: %[[F16:.*]] = mw.splat 2.500000e-01 : tensor<2xf16>
// CHECK: return %[[F32]], %[[BF16]], %[[I32]], %[[I64]], %[[F16]]
func.func @splats() -> (tensor<4x8xf32>, tensor<4x8xbf16>, tensor<3xi32>, tensor<i64>, tensor<2xf16>) {
  %f32 = mw.splat 1.5 : tensor<4x8xf32>
  %bf16 = mw.splat 0.0 : tensor<4x8xbf16>
  %i32 = mw.splat -3.0 : tensor<3xi32>
  %i64 = mw.splat 42.0 : tensor<i64>
  %f16 = mw.splat 2.5e-01 : tensor<2xf16>
  return %f32, %bf16, %i32, %i64, %f16 : tensor<4x8xf32>, tensor<4x8xbf16>, tensor<3xi32>, tensor<i64>, tensor<2xf16>
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @binary(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x1xf32>,
// CHECK-SAME: %[[B:[a-zA-Z0-9_]+]]: tensor<8xf32>,
// CHECK-SAME: %[[C:[a-zA-Z0-9_]+]]: tensor<4x8xf32>,
// CHECK-SAME: %[[I:[a-zA-Z0-9_]+]]: tensor<2x3xi32>,
// CHECK-SAME: %[[J:[a-zA-Z0-9_]+]]: tensor<3xi32>,
// CHECK-SAME: %[[H:[a-zA-Z0-9_]+]]: tensor<2x3xf16>,
// CHECK-SAME: %[[S:[a-zA-Z0-9_]+]]: tensor<f32>,
// CHECK-SAME: %[[L:[a-zA-Z0-9_]+]]: tensor<5xi64>)
// CHECK: %[[ADD:.*]] = mw.add %[[A]], %[[B]] : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK: %[[SUB:.*]] = mw.sub %[[C]], %[[B]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK: %[[MUL:.*]] = mw.mul %[[C]], %[[S]] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
// CHECK: %[[DIV:.*]] = mw.div %[[C]], %[[C]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[MAX:.*]] = mw.maximum %[[A]], %[[C]] : (tensor<4x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[IADD:.*]] = mw.add %[[I]], %[[J]] : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK: %[[IDIV:.*]] = mw.div %[[J]], %[[I]] : (tensor<3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK: %[[HMUL:.*]] = mw.mul %[[H]], %[[H]] : (tensor<2x3xf16>, tensor<2x3xf16>) -> tensor<2x3xf16>
// CHECK: %[[LSUB:.*]] = mw.sub %[[L]], %[[L]] : (tensor<5xi64>, tensor<5xi64>) -> tensor<5xi64>
// CHECK: %[[IMAX:.*]] = mw.maximum %[[I]], %[[I]] : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK: return %[[ADD]], %[[SUB]], %[[MUL]], %[[DIV]], %[[MAX]], %[[IADD]], %[[IDIV]], %[[HMUL]], %[[LSUB]], %[[IMAX]]
func.func @binary(%a: tensor<4x1xf32>, %b: tensor<8xf32>, %c: tensor<4x8xf32>, %i: tensor<2x3xi32>,
                  %j: tensor<3xi32>, %h: tensor<2x3xf16>, %s: tensor<f32>, %l: tensor<5xi64>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>,
        tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xf16>, tensor<5xi64>, tensor<2x3xi32>) {
  %add = mw.add %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %sub = mw.sub %c, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %mul = mw.mul %c, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %div = mw.div %c, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %max = mw.maximum %a, %c : (tensor<4x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %iadd = mw.add %i, %j : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %idiv = mw.div %j, %i : (tensor<3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  %hmul = mw.mul %h, %h : (tensor<2x3xf16>, tensor<2x3xf16>) -> tensor<2x3xf16>
  %lsub = mw.sub %l, %l : (tensor<5xi64>, tensor<5xi64>) -> tensor<5xi64>
  %imax = mw.maximum %i, %i : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  return %add, %sub, %mul, %div, %max, %iadd, %idiv, %hmul, %lsub, %imax
      : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>,
        tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xf16>, tensor<5xi64>, tensor<2x3xi32>
}

// CHECK-LABEL: func.func @unary(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x8xf32>,
// CHECK-SAME: %[[H:[a-zA-Z0-9_]+]]: tensor<4xf16>,
// CHECK-SAME: %[[B:[a-zA-Z0-9_]+]]: tensor<2x2xbf16>,
// CHECK-SAME: %[[I:[a-zA-Z0-9_]+]]: tensor<3xi32>,
// CHECK-SAME: %[[L:[a-zA-Z0-9_]+]]: tensor<3xi64>)
// CHECK: %[[NEG:.*]] = mw.neg %[[X]] : tensor<4x8xf32>
// CHECK: %[[INEG:.*]] = mw.neg %[[I]] : tensor<3xi32>
// CHECK: %[[LNEG:.*]] = mw.neg %[[L]] : tensor<3xi64>
// CHECK: %[[EXP:.*]] = mw.exp %[[X]] : tensor<4x8xf32>
// CHECK: %[[LOG:.*]] = mw.log %[[H]] : tensor<4xf16>
// CHECK: %[[TANH:.*]] = mw.tanh %[[B]] : tensor<2x2xbf16>
// CHECK: %[[SQRT:.*]] = mw.sqrt %[[X]] : tensor<4x8xf32>
// CHECK: %[[RSQRT:.*]] = mw.rsqrt %[[H]] : tensor<4xf16>
// CHECK: %[[RECIP:.*]] = mw.reciprocal %[[B]] : tensor<2x2xbf16>
// CHECK: %[[RELU:.*]] = mw.relu %[[X]] : tensor<4x8xf32>
// CHECK: %[[SIGMOID:.*]] = mw.sigmoid %[[H]] : tensor<4xf16>
// CHECK: %[[SILU:.*]] = mw.silu %[[B]] : tensor<2x2xbf16>
// CHECK: return %[[NEG]], %[[INEG]], %[[LNEG]], %[[EXP]], %[[LOG]], %[[TANH]], %[[SQRT]], %[[RSQRT]], %[[RECIP]], %[[RELU]], %[[SIGMOID]], %[[SILU]]
func.func @unary(%x: tensor<4x8xf32>, %h: tensor<4xf16>, %b: tensor<2x2xbf16>, %i: tensor<3xi32>, %l: tensor<3xi64>)
    -> (tensor<4x8xf32>, tensor<3xi32>, tensor<3xi64>, tensor<4x8xf32>, tensor<4xf16>, tensor<2x2xbf16>,
        tensor<4x8xf32>, tensor<4xf16>, tensor<2x2xbf16>, tensor<4x8xf32>, tensor<4xf16>, tensor<2x2xbf16>) {
  %neg = mw.neg %x : tensor<4x8xf32>
  %ineg = mw.neg %i : tensor<3xi32>
  %lneg = mw.neg %l : tensor<3xi64>
  %exp = mw.exp %x : tensor<4x8xf32>
  %log = mw.log %h : tensor<4xf16>
  %tanh = mw.tanh %b : tensor<2x2xbf16>
  %sqrt = mw.sqrt %x : tensor<4x8xf32>
  %rsqrt = mw.rsqrt %h : tensor<4xf16>
  %recip = mw.reciprocal %b : tensor<2x2xbf16>
  %relu = mw.relu %x : tensor<4x8xf32>
  %sigmoid = mw.sigmoid %h : tensor<4xf16>
  %silu = mw.silu %b : tensor<2x2xbf16>
  return %neg, %ineg, %lneg, %exp, %log, %tanh, %sqrt, %rsqrt, %recip, %relu, %sigmoid, %silu
      : tensor<4x8xf32>, tensor<3xi32>, tensor<3xi64>, tensor<4x8xf32>, tensor<4xf16>, tensor<2x2xbf16>,
        tensor<4x8xf32>, tensor<4xf16>, tensor<2x2xbf16>, tensor<4x8xf32>, tensor<4xf16>, tensor<2x2xbf16>
}

// CHECK-LABEL: func.func @clamp
// CHECK: mw.clamp %{{.*}} {max = 1.000000e+00 : f64, min = -1.000000e+00 : f64} : tensor<4x8xf32>
// CHECK: mw.clamp_grad %{{.*}}, %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<2x2xbf16>
func.func @clamp(%x: tensor<4x8xf32>, %b: tensor<2x2xbf16>) -> (tensor<4x8xf32>, tensor<2x2xbf16>) {
  %c = mw.clamp %x {min = -1.0, max = 1.0} : tensor<4x8xf32>
  %g = mw.clamp_grad %b, %b {min = 0.0, max = 6.0} : tensor<2x2xbf16>
  return %c, %g : tensor<4x8xf32>, tensor<2x2xbf16>
}

// The default erf form is elided when printed, even when written explicitly.
// CHECK-LABEL: func.func @gelu(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x8xf32>,
// CHECK-SAME: %[[B:[a-zA-Z0-9_]+]]: tensor<4x8xbf16>)
// CHECK: %[[ERF:.*]] = mw.gelu %[[X]] : tensor<4x8xf32>{{$}}
// CHECK: %[[ERF2:.*]] = mw.gelu %[[X]] : tensor<4x8xf32>{{$}}
// CHECK: %[[TANH:.*]] = mw.gelu %[[B]] {approximate = #mw.gelu_approximation<tanh>} : tensor<4x8xbf16>
// CHECK: return %[[ERF]], %[[ERF2]], %[[TANH]]
func.func @gelu(%x: tensor<4x8xf32>, %b: tensor<4x8xbf16>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xbf16>) {
  %erf = mw.gelu %x : tensor<4x8xf32>
  %erf2 = mw.gelu %x {approximate = #mw.gelu_approximation<erf>} : tensor<4x8xf32>
  %tanh = mw.gelu %b {approximate = #mw.gelu_approximation<tanh>} : tensor<4x8xbf16>
  return %erf, %erf2, %tanh : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xbf16>
}

// CHECK-LABEL: func.func @cast(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x8xf32>,
// CHECK-SAME: %[[L:[a-zA-Z0-9_]+]]: tensor<3xi64>,
// CHECK-SAME: %[[I:[a-zA-Z0-9_]+]]: tensor<3xi32>)
// CHECK: %[[TOBF16:.*]] = mw.cast %[[X]] : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK: %[[TOF16:.*]] = mw.cast %[[X]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK: %[[TOI32:.*]] = mw.cast %[[X]] : tensor<4x8xf32> to tensor<4x8xi32>
// CHECK: %[[ITOF16:.*]] = mw.cast %[[L]] : tensor<3xi64> to tensor<3xf16>
// CHECK: %[[ITOI64:.*]] = mw.cast %[[I]] : tensor<3xi32> to tensor<3xi64>
// CHECK: %[[SAME:.*]] = mw.cast %[[X]] : tensor<4x8xf32> to tensor<4x8xf32>
// CHECK: return %[[TOBF16]], %[[TOF16]], %[[TOI32]], %[[ITOF16]], %[[ITOI64]], %[[SAME]]
func.func @cast(%x: tensor<4x8xf32>, %l: tensor<3xi64>, %i: tensor<3xi32>)
    -> (tensor<4x8xbf16>, tensor<4x8xf16>, tensor<4x8xi32>, tensor<3xf16>, tensor<3xi64>, tensor<4x8xf32>) {
  %tobf16 = mw.cast %x : tensor<4x8xf32> to tensor<4x8xbf16>
  %tof16 = mw.cast %x : tensor<4x8xf32> to tensor<4x8xf16>
  %toi32 = mw.cast %x : tensor<4x8xf32> to tensor<4x8xi32>
  %itof16 = mw.cast %l : tensor<3xi64> to tensor<3xf16>
  %itoi64 = mw.cast %i : tensor<3xi32> to tensor<3xi64>
  %same = mw.cast %x : tensor<4x8xf32> to tensor<4x8xf32>
  return %tobf16, %tof16, %toi32, %itof16, %itoi64, %same
      : tensor<4x8xbf16>, tensor<4x8xf16>, tensor<4x8xi32>, tensor<3xf16>, tensor<3xi64>, tensor<4x8xf32>
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<32x64xf32>,
// CHECK-SAME: %[[W:[a-zA-Z0-9_]+]]: tensor<64x256xf32>,
// CHECK-SAME: %[[WT:[a-zA-Z0-9_]+]]: tensor<256x64xf32>,
// CHECK-SAME: %[[XT:[a-zA-Z0-9_]+]]: tensor<64x32xf32>,
// CHECK-SAME: %[[BX:[a-zA-Z0-9_]+]]: tensor<8x1x32x64xf32>,
// CHECK-SAME: %[[BW:[a-zA-Z0-9_]+]]: tensor<4x64x16xf32>,
// CHECK-SAME: %[[HX:[a-zA-Z0-9_]+]]: tensor<8x32x64xbf16>,
// CHECK-SAME: %[[HW:[a-zA-Z0-9_]+]]: tensor<256x64xbf16>,
// CHECK-SAME: %[[FX:[a-zA-Z0-9_]+]]: tensor<2x3xf16>,
// CHECK-SAME: %[[FW:[a-zA-Z0-9_]+]]: tensor<3x5xf16>)
// CHECK: %[[PLAIN:.*]] = mw.matmul %[[X]], %[[W]] : (tensor<32x64xf32>, tensor<64x256xf32>) -> tensor<32x256xf32>
// CHECK: %[[TL:.*]] = mw.matmul %[[XT]], %[[W]] {transpose_lhs} : (tensor<64x32xf32>, tensor<64x256xf32>) -> tensor<32x256xf32>
// CHECK: %[[TR:.*]] = mw.matmul %[[X]], %[[WT]] {transpose_rhs} : (tensor<32x64xf32>, tensor<256x64xf32>) -> tensor<32x256xf32>
// CHECK: %[[TLR:.*]] = mw.matmul %[[XT]], %[[WT]] {transpose_lhs, transpose_rhs} : (tensor<64x32xf32>, tensor<256x64xf32>) -> tensor<32x256xf32>
// CHECK: %[[BATCH:.*]] = mw.matmul %[[BX]], %[[BW]] : (tensor<8x1x32x64xf32>, tensor<4x64x16xf32>) -> tensor<8x4x32x16xf32>
// CHECK: %[[BF16:.*]] = mw.matmul %[[HX]], %[[HW]] {transpose_rhs} : (tensor<8x32x64xbf16>, tensor<256x64xbf16>) -> tensor<8x32x256xbf16>
// CHECK: %[[F16:.*]] = mw.matmul %[[FX]], %[[FW]] : (tensor<2x3xf16>, tensor<3x5xf16>) -> tensor<2x5xf16>
// CHECK: return %[[PLAIN]], %[[TL]], %[[TR]], %[[TLR]], %[[BATCH]], %[[BF16]], %[[F16]]
func.func @matmul(%x: tensor<32x64xf32>, %w: tensor<64x256xf32>, %wt: tensor<256x64xf32>, %xt: tensor<64x32xf32>,
                  %bx: tensor<8x1x32x64xf32>, %bw: tensor<4x64x16xf32>, %hx: tensor<8x32x64xbf16>,
                  %hw: tensor<256x64xbf16>, %fx: tensor<2x3xf16>, %fw: tensor<3x5xf16>)
    -> (tensor<32x256xf32>, tensor<32x256xf32>, tensor<32x256xf32>, tensor<32x256xf32>,
        tensor<8x4x32x16xf32>, tensor<8x32x256xbf16>, tensor<2x5xf16>) {
  %plain = mw.matmul %x, %w : (tensor<32x64xf32>, tensor<64x256xf32>) -> tensor<32x256xf32>
  %tl = mw.matmul %xt, %w {transpose_lhs} : (tensor<64x32xf32>, tensor<64x256xf32>) -> tensor<32x256xf32>
  %tr = mw.matmul %x, %wt {transpose_rhs} : (tensor<32x64xf32>, tensor<256x64xf32>) -> tensor<32x256xf32>
  %tlr = mw.matmul %xt, %wt {transpose_lhs, transpose_rhs} : (tensor<64x32xf32>, tensor<256x64xf32>) -> tensor<32x256xf32>
  %batch = mw.matmul %bx, %bw : (tensor<8x1x32x64xf32>, tensor<4x64x16xf32>) -> tensor<8x4x32x16xf32>
  %bf16 = mw.matmul %hx, %hw {transpose_rhs} : (tensor<8x32x64xbf16>, tensor<256x64xbf16>) -> tensor<8x32x256xbf16>
  %f16 = mw.matmul %fx, %fw : (tensor<2x3xf16>, tensor<3x5xf16>) -> tensor<2x5xf16>
  return %plain, %tl, %tr, %tlr, %batch, %bf16, %f16
      : tensor<32x256xf32>, tensor<32x256xf32>, tensor<32x256xf32>, tensor<32x256xf32>,
        tensor<8x4x32x16xf32>, tensor<8x32x256xbf16>, tensor<2x5xf16>
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reductions(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x8x16xf32>,
// CHECK-SAME: %[[I:[a-zA-Z0-9_]+]]: tensor<4x8xi32>,
// CHECK-SAME: %[[L:[a-zA-Z0-9_]+]]: tensor<4x8xi64>,
// CHECK-SAME: %[[H:[a-zA-Z0-9_]+]]: tensor<4x8xbf16>)
// CHECK: %[[SUM:.*]] = mw.reduce_sum %[[X]] axes = [1] : tensor<4x8x16xf32> -> tensor<4x16xf32>
// CHECK: %[[SUMK:.*]] = mw.reduce_sum %[[X]] axes = [0, 2] {keepdims} : tensor<4x8x16xf32> -> tensor<1x8x1xf32>
// CHECK: %[[ISUM:.*]] = mw.reduce_sum %[[I]] axes = [0, 1] : tensor<4x8xi32> -> tensor<i32>
// CHECK: %[[MAXK:.*]] = mw.reduce_max %[[X]] axes = [2] {keepdims} : tensor<4x8x16xf32> -> tensor<4x8x1xf32>
// CHECK: %[[LMAX:.*]] = mw.reduce_max %[[L]] axes = [1] : tensor<4x8xi64> -> tensor<4xi64>
// CHECK: %[[MAXALL:.*]] = mw.reduce_max %[[X]] axes = [0, 1, 2] : tensor<4x8x16xf32> -> tensor<f32>
// CHECK: %[[MEAN:.*]] = mw.reduce_mean %[[H]] axes = [1] : tensor<4x8xbf16> -> tensor<4xbf16>
// CHECK: %[[MEANK:.*]] = mw.reduce_mean %[[X]] axes = [0, 1, 2] {keepdims} : tensor<4x8x16xf32> -> tensor<1x1x1xf32>
// CHECK: %[[MEANALL:.*]] = mw.reduce_mean %[[X]] axes = [0, 1, 2] : tensor<4x8x16xf32> -> tensor<f32>
// CHECK: return %[[SUM]], %[[SUMK]], %[[ISUM]], %[[MAXK]], %[[LMAX]], %[[MAXALL]], %[[MEAN]], %[[MEANK]], %[[MEANALL]]
func.func @reductions(%x: tensor<4x8x16xf32>, %i: tensor<4x8xi32>, %l: tensor<4x8xi64>, %h: tensor<4x8xbf16>)
    -> (tensor<4x16xf32>, tensor<1x8x1xf32>, tensor<i32>, tensor<4x8x1xf32>, tensor<4xi64>, tensor<f32>,
        tensor<4xbf16>, tensor<1x1x1xf32>, tensor<f32>) {
  %sum = mw.reduce_sum %x axes = [1] : tensor<4x8x16xf32> -> tensor<4x16xf32>
  %sumk = mw.reduce_sum %x axes = [0, 2] {keepdims} : tensor<4x8x16xf32> -> tensor<1x8x1xf32>
  %isum = mw.reduce_sum %i axes = [0, 1] : tensor<4x8xi32> -> tensor<i32>
  %maxk = mw.reduce_max %x axes = [2] {keepdims} : tensor<4x8x16xf32> -> tensor<4x8x1xf32>
  %lmax = mw.reduce_max %l axes = [1] : tensor<4x8xi64> -> tensor<4xi64>
  %maxall = mw.reduce_max %x axes = [0, 1, 2] : tensor<4x8x16xf32> -> tensor<f32>
  %mean = mw.reduce_mean %h axes = [1] : tensor<4x8xbf16> -> tensor<4xbf16>
  %meank = mw.reduce_mean %x axes = [0, 1, 2] {keepdims} : tensor<4x8x16xf32> -> tensor<1x1x1xf32>
  %meanall = mw.reduce_mean %x axes = [0, 1, 2] : tensor<4x8x16xf32> -> tensor<f32>
  return %sum, %sumk, %isum, %maxk, %lmax, %maxall, %mean, %meank, %meanall
      : tensor<4x16xf32>, tensor<1x8x1xf32>, tensor<i32>, tensor<4x8x1xf32>, tensor<4xi64>, tensor<f32>,
        tensor<4xbf16>, tensor<1x1x1xf32>, tensor<f32>
}

//===----------------------------------------------------------------------===//
// Softmax and normalizations
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @softmax(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x8xf32>,
// CHECK-SAME: %[[H:[a-zA-Z0-9_]+]]: tensor<2x4x8xf16>)
// CHECK: %[[SM:.*]] = mw.softmax %[[X]] axis = 1 : tensor<4x8xf32>
// CHECK: %[[SM0:.*]] = mw.softmax %[[H]] axis = 0 : tensor<2x4x8xf16>
// CHECK: %[[LSM:.*]] = mw.log_softmax %[[X]] axis = 1 : tensor<4x8xf32>
// CHECK: %[[LSM2:.*]] = mw.log_softmax %[[H]] axis = 2 : tensor<2x4x8xf16>
// CHECK: return %[[SM]], %[[SM0]], %[[LSM]], %[[LSM2]]
func.func @softmax(%x: tensor<4x8xf32>, %h: tensor<2x4x8xf16>)
    -> (tensor<4x8xf32>, tensor<2x4x8xf16>, tensor<4x8xf32>, tensor<2x4x8xf16>) {
  %sm = mw.softmax %x axis = 1 : tensor<4x8xf32>
  %sm0 = mw.softmax %h axis = 0 : tensor<2x4x8xf16>
  %lsm = mw.log_softmax %x axis = 1 : tensor<4x8xf32>
  %lsm2 = mw.log_softmax %h axis = 2 : tensor<2x4x8xf16>
  return %sm, %sm0, %lsm, %lsm2 : tensor<4x8xf32>, tensor<2x4x8xf16>, tensor<4x8xf32>, tensor<2x4x8xf16>
}

// Default epsilons (1e-5 for layer_norm, 1e-6 for rms_norm) are elided.
// CHECK-LABEL: func.func @norms(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x8xf32>,
// CHECK-SAME: %[[G:[a-zA-Z0-9_]+]]: tensor<8xf32>,
// CHECK-SAME: %[[B:[a-zA-Z0-9_]+]]: tensor<8xf32>,
// CHECK-SAME: %[[HX:[a-zA-Z0-9_]+]]: tensor<2x4x8xbf16>,
// CHECK-SAME: %[[HG:[a-zA-Z0-9_]+]]: tensor<8xbf16>)
// CHECK: %[[Y0:.*]], %[[MEAN0:.*]], %[[RSTD0:.*]] = mw.layer_norm %[[X]], %[[G]], %[[B]] : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK: %[[Y1:.*]], %[[MEAN1:.*]], %[[RSTD1:.*]] = mw.layer_norm %[[HX]], %[[HG]], %[[HG]] {epsilon = 1.000000e-03 : f64} : (tensor<2x4x8xbf16>, tensor<8xbf16>, tensor<8xbf16>) -> (tensor<2x4x8xbf16>, tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK: %[[Y2:.*]], %[[MEAN2:.*]], %[[RSTD2:.*]] = mw.layer_norm %[[X]], %[[G]], %[[B]] : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK: %[[Y3:.*]], %[[RSTD3:.*]] = mw.rms_norm %[[X]], %[[G]] : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
// CHECK: %[[Y4:.*]], %[[RSTD4:.*]] = mw.rms_norm %[[HX]], %[[HG]] {epsilon = 1.000000e-05 : f64} : (tensor<2x4x8xbf16>, tensor<8xbf16>) -> (tensor<2x4x8xbf16>, tensor<2x4xf32>)
// CHECK: return %[[Y0]], %[[MEAN0]], %[[RSTD0]], %[[Y1]], %[[MEAN1]], %[[RSTD1]], %[[Y2]], %[[Y3]], %[[RSTD3]], %[[Y4]], %[[RSTD4]]
func.func @norms(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %hx: tensor<2x4x8xbf16>, %hg: tensor<8xbf16>)
    -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x4x8xbf16>, tensor<2x4xf32>, tensor<2x4xf32>,
        tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<2x4x8xbf16>, tensor<2x4xf32>) {
  %y0, %mean0, %rstd0 = mw.layer_norm %x, %g, %b : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
  %y1, %mean1, %rstd1 = mw.layer_norm %hx, %hg, %hg {epsilon = 1.0e-03 : f64}
      : (tensor<2x4x8xbf16>, tensor<8xbf16>, tensor<8xbf16>) -> (tensor<2x4x8xbf16>, tensor<2x4xf32>, tensor<2x4xf32>)
  %y2, %mean2, %rstd2 = mw.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
  %y3, %rstd3 = mw.rms_norm %x, %g : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
  %y4, %rstd4 = mw.rms_norm %hx, %hg {epsilon = 1.0e-05 : f64} : (tensor<2x4x8xbf16>, tensor<8xbf16>) -> (tensor<2x4x8xbf16>, tensor<2x4xf32>)
  return %y0, %mean0, %rstd0, %y1, %mean1, %rstd1, %y2, %y3, %rstd3, %y4, %rstd4
      : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x4x8xbf16>, tensor<2x4xf32>, tensor<2x4xf32>,
        tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<2x4x8xbf16>, tensor<2x4xf32>
}

//===----------------------------------------------------------------------===//
// Embedding, loss, attention
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @embedding_and_loss(
// CHECK-SAME: %[[WTE:[a-zA-Z0-9_]+]]: tensor<256x64xf32>,
// CHECK-SAME: %[[TOK:[a-zA-Z0-9_]+]]: tensor<2x32xi32>,
// CHECK-SAME: %[[TOK64:[a-zA-Z0-9_]+]]: tensor<64xi64>,
// CHECK-SAME: %[[HW:[a-zA-Z0-9_]+]]: tensor<16x8xbf16>,
// CHECK-SAME: %[[LOGITS:[a-zA-Z0-9_]+]]: tensor<64x256xf32>,
// CHECK-SAME: %[[LABELS:[a-zA-Z0-9_]+]]: tensor<64xi32>,
// CHECK-SAME: %[[HLOGITS:[a-zA-Z0-9_]+]]: tensor<2x32x256xf16>,
// CHECK-SAME: %[[HLABELS:[a-zA-Z0-9_]+]]: tensor<2x32xi64>)
// CHECK: %[[E:.*]] = mw.embedding %[[WTE]], %[[TOK]] : (tensor<256x64xf32>, tensor<2x32xi32>) -> tensor<2x32x64xf32>
// CHECK: %[[HE:.*]] = mw.embedding %[[HW]], %[[TOK64]] : (tensor<16x8xbf16>, tensor<64xi64>) -> tensor<64x8xbf16>
// CHECK: %[[LOSS:.*]] = mw.cross_entropy %[[LOGITS]], %[[LABELS]] : (tensor<64x256xf32>, tensor<64xi32>) -> tensor<f32>
// CHECK: %[[HLOSS:.*]] = mw.cross_entropy %[[HLOGITS]], %[[HLABELS]] {ignore_index = -1 : i64} : (tensor<2x32x256xf16>, tensor<2x32xi64>) -> tensor<f32>
// CHECK: return %[[E]], %[[HE]], %[[LOSS]], %[[HLOSS]]
func.func @embedding_and_loss(%wte: tensor<256x64xf32>, %tok: tensor<2x32xi32>, %tok64: tensor<64xi64>,
                              %hw: tensor<16x8xbf16>, %logits: tensor<64x256xf32>, %labels: tensor<64xi32>,
                              %hlogits: tensor<2x32x256xf16>, %hlabels: tensor<2x32xi64>)
    -> (tensor<2x32x64xf32>, tensor<64x8xbf16>, tensor<f32>, tensor<f32>) {
  %e = mw.embedding %wte, %tok : (tensor<256x64xf32>, tensor<2x32xi32>) -> tensor<2x32x64xf32>
  %he = mw.embedding %hw, %tok64 : (tensor<16x8xbf16>, tensor<64xi64>) -> tensor<64x8xbf16>
  %loss = mw.cross_entropy %logits, %labels : (tensor<64x256xf32>, tensor<64xi32>) -> tensor<f32>
  %hloss = mw.cross_entropy %hlogits, %hlabels {ignore_index = -1 : i64} : (tensor<2x32x256xf16>, tensor<2x32xi64>) -> tensor<f32>
  return %e, %he, %loss, %hloss : tensor<2x32x64xf32>, tensor<64x8xbf16>, tensor<f32>, tensor<f32>
}

// CHECK-LABEL: func.func @attention(
// CHECK-SAME: %[[Q:[a-zA-Z0-9_]+]]: tensor<2x4x32x16xf32>,
// CHECK-SAME: %[[K:[a-zA-Z0-9_]+]]: tensor<2x4x48x16xf32>,
// CHECK-SAME: %[[V:[a-zA-Z0-9_]+]]: tensor<2x4x48x8xf32>,
// CHECK-SAME: %[[HQ:[a-zA-Z0-9_]+]]: tensor<1x2x8x4xbf16>)
// CHECK: %[[O0:.*]], %[[LSE0:.*]] = mw.attention %[[Q]], %[[K]], %[[V]] : (tensor<2x4x32x16xf32>, tensor<2x4x48x16xf32>, tensor<2x4x48x8xf32>) -> (tensor<2x4x32x8xf32>, tensor<2x4x32xf32>)
// CHECK: %[[O1:.*]], %[[LSE1:.*]] = mw.attention %[[Q]], %[[Q]], %[[Q]] {causal} : (tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>) -> (tensor<2x4x32x16xf32>, tensor<2x4x32xf32>)
// CHECK: %[[O2:.*]], %[[LSE2:.*]] = mw.attention %[[HQ]], %[[HQ]], %[[HQ]] {causal, scale = 1.250000e-01 : f64} : (tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>) -> (tensor<1x2x8x4xbf16>, tensor<1x2x8xf32>)
// CHECK: return %[[O0]], %[[LSE0]], %[[O1]], %[[LSE1]], %[[O2]], %[[LSE2]]
func.func @attention(%q: tensor<2x4x32x16xf32>, %k: tensor<2x4x48x16xf32>, %v: tensor<2x4x48x8xf32>, %hq: tensor<1x2x8x4xbf16>)
    -> (tensor<2x4x32x8xf32>, tensor<2x4x32xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32xf32>,
        tensor<1x2x8x4xbf16>, tensor<1x2x8xf32>) {
  %o0, %lse0 = mw.attention %q, %k, %v
      : (tensor<2x4x32x16xf32>, tensor<2x4x48x16xf32>, tensor<2x4x48x8xf32>) -> (tensor<2x4x32x8xf32>, tensor<2x4x32xf32>)
  %o1, %lse1 = mw.attention %q, %q, %q {causal}
      : (tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>) -> (tensor<2x4x32x16xf32>, tensor<2x4x32xf32>)
  %o2, %lse2 = mw.attention %hq, %hq, %hq {causal, scale = 0.125 : f64}
      : (tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>) -> (tensor<1x2x8x4xbf16>, tensor<1x2x8xf32>)
  return %o0, %lse0, %o1, %lse1, %o2, %lse2
      : tensor<2x4x32x8xf32>, tensor<2x4x32xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32xf32>,
        tensor<1x2x8x4xbf16>, tensor<1x2x8xf32>
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @shape_ops(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<2x32x64xf32>,
// CHECK-SAME: %[[Y:[a-zA-Z0-9_]+]]: tensor<2x32x4x16xf32>,
// CHECK-SAME: %[[BIAS:[a-zA-Z0-9_]+]]: tensor<64xf32>,
// CHECK-SAME: %[[ONE:[a-zA-Z0-9_]+]]: tensor<4x1xi32>,
// CHECK-SAME: %[[QKV:[a-zA-Z0-9_]+]]: tensor<2x32x192xf32>,
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x8xf32>,
// CHECK-SAME: %[[B:[a-zA-Z0-9_]+]]: tensor<4x2xf32>,
// CHECK-SAME: %[[C:[a-zA-Z0-9_]+]]: tensor<4x6xf32>,
// CHECK-SAME: %[[HL:[a-zA-Z0-9_]+]]: tensor<3x1xf16>)
// CHECK: %[[R:.*]] = mw.reshape %[[X]] : tensor<2x32x64xf32> -> tensor<64x64xf32>
// CHECK: %[[IR:.*]] = mw.reshape %[[ONE]] : tensor<4x1xi32> -> tensor<4xi32>
// CHECK: %[[T:.*]] = mw.transpose %[[Y]] permutation = [0, 2, 1, 3] : tensor<2x32x4x16xf32> -> tensor<2x4x32x16xf32>
// CHECK: %[[IT:.*]] = mw.transpose %[[ONE]] permutation = [1, 0] : tensor<4x1xi32> -> tensor<1x4xi32>
// CHECK: %[[BC:.*]] = mw.broadcast_to %[[BIAS]] : tensor<64xf32> -> tensor<8x64xf32>
// CHECK: %[[IBC:.*]] = mw.broadcast_to %[[ONE]] : tensor<4x1xi32> -> tensor<3x4x5xi32>
// CHECK: %[[HBC:.*]] = mw.broadcast_to %[[HL]] : tensor<3x1xf16> -> tensor<3x7xf16>
// CHECK: %[[S:.*]] = mw.slice %[[QKV]] offsets = [0, 0, 64] sizes = [2, 32, 64] : tensor<2x32x192xf32> -> tensor<2x32x64xf32>
// CHECK: %[[SS:.*]] = mw.slice %[[QKV]] offsets = [1, 1, 0] sizes = [1, 16, 64] strides = [1, 2, 3] : tensor<2x32x192xf32> -> tensor<1x16x64xf32>
// CHECK: %[[C2:.*]] = mw.concat %[[A]], %[[B]] axis = 1 : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x10xf32>
// CHECK: %[[C3:.*]] = mw.concat %[[A]], %[[B]], %[[C]] axis = 1 : (tensor<4x8xf32>, tensor<4x2xf32>, tensor<4x6xf32>) -> tensor<4x16xf32>
// CHECK: %[[IC:.*]] = mw.concat %[[ONE]], %[[ONE]] axis = 0 : (tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<8x1xi32>
// CHECK: %[[C1:.*]] = mw.concat %[[A]] axis = 0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: return %[[R]], %[[IR]], %[[T]], %[[IT]], %[[BC]], %[[IBC]], %[[HBC]], %[[S]], %[[SS]], %[[C2]], %[[C3]], %[[IC]], %[[C1]]
func.func @shape_ops(%x: tensor<2x32x64xf32>, %y: tensor<2x32x4x16xf32>, %bias: tensor<64xf32>, %one: tensor<4x1xi32>,
                     %qkv: tensor<2x32x192xf32>, %a: tensor<4x8xf32>, %b: tensor<4x2xf32>, %c: tensor<4x6xf32>,
                     %hl: tensor<3x1xf16>)
    -> (tensor<64x64xf32>, tensor<4xi32>, tensor<2x4x32x16xf32>, tensor<1x4xi32>, tensor<8x64xf32>,
        tensor<3x4x5xi32>, tensor<3x7xf16>, tensor<2x32x64xf32>, tensor<1x16x64xf32>, tensor<4x10xf32>,
        tensor<4x16xf32>, tensor<8x1xi32>, tensor<4x8xf32>) {
  %r = mw.reshape %x : tensor<2x32x64xf32> -> tensor<64x64xf32>
  %ir = mw.reshape %one : tensor<4x1xi32> -> tensor<4xi32>
  %t = mw.transpose %y permutation = [0, 2, 1, 3] : tensor<2x32x4x16xf32> -> tensor<2x4x32x16xf32>
  %it = mw.transpose %one permutation = [1, 0] : tensor<4x1xi32> -> tensor<1x4xi32>
  %bc = mw.broadcast_to %bias : tensor<64xf32> -> tensor<8x64xf32>
  %ibc = mw.broadcast_to %one : tensor<4x1xi32> -> tensor<3x4x5xi32>
  %hbc = mw.broadcast_to %hl : tensor<3x1xf16> -> tensor<3x7xf16>
  %s = mw.slice %qkv offsets = [0, 0, 64] sizes = [2, 32, 64] : tensor<2x32x192xf32> -> tensor<2x32x64xf32>
  %ss = mw.slice %qkv offsets = [1, 1, 0] sizes = [1, 16, 64] strides = [1, 2, 3] : tensor<2x32x192xf32> -> tensor<1x16x64xf32>
  %c2 = mw.concat %a, %b axis = 1 : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x10xf32>
  %c3 = mw.concat %a, %b, %c axis = 1 : (tensor<4x8xf32>, tensor<4x2xf32>, tensor<4x6xf32>) -> tensor<4x16xf32>
  %ic = mw.concat %one, %one axis = 0 : (tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<8x1xi32>
  %c1 = mw.concat %a axis = 0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r, %ir, %t, %it, %bc, %ibc, %hbc, %s, %ss, %c2, %c3, %ic, %c1
      : tensor<64x64xf32>, tensor<4xi32>, tensor<2x4x32x16xf32>, tensor<1x4xi32>, tensor<8x64xf32>,
        tensor<3x4x5xi32>, tensor<3x7xf16>, tensor<2x32x64xf32>, tensor<1x16x64xf32>, tensor<4x10xf32>,
        tensor<4x16xf32>, tensor<8x1xi32>, tensor<4x8xf32>
}

//===----------------------------------------------------------------------===//
// Backward ops
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @activation_grads(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x8xf32>,
// CHECK-SAME: %[[DY:[a-zA-Z0-9_]+]]: tensor<4x8xf32>,
// CHECK-SAME: %[[H:[a-zA-Z0-9_]+]]: tensor<4xbf16>,
// CHECK-SAME: %[[DH:[a-zA-Z0-9_]+]]: tensor<4xbf16>,
// CHECK-SAME: %[[F:[a-zA-Z0-9_]+]]: tensor<2x3xf16>)
// CHECK: %[[RELU:.*]] = mw.relu_grad %[[X]], %[[DY]] : tensor<4x8xf32>
// CHECK: %[[SILU:.*]] = mw.silu_grad %[[H]], %[[DH]] : tensor<4xbf16>
// CHECK: %[[GELU:.*]] = mw.gelu_grad %[[X]], %[[DY]] : tensor<4x8xf32>{{$}}
// CHECK: %[[GELUT:.*]] = mw.gelu_grad %[[F]], %[[F]] {approximate = #mw.gelu_approximation<tanh>} : tensor<2x3xf16>
// CHECK: %[[SM:.*]] = mw.softmax_grad %[[X]], %[[DY]] axis = 1 : tensor<4x8xf32>
// CHECK: %[[LSM:.*]] = mw.log_softmax_grad %[[H]], %[[DH]] axis = 0 : tensor<4xbf16>
// CHECK: return %[[RELU]], %[[SILU]], %[[GELU]], %[[GELUT]], %[[SM]], %[[LSM]]
func.func @activation_grads(%x: tensor<4x8xf32>, %dy: tensor<4x8xf32>, %h: tensor<4xbf16>, %dh: tensor<4xbf16>, %f: tensor<2x3xf16>)
    -> (tensor<4x8xf32>, tensor<4xbf16>, tensor<4x8xf32>, tensor<2x3xf16>, tensor<4x8xf32>, tensor<4xbf16>) {
  %relu = mw.relu_grad %x, %dy : tensor<4x8xf32>
  %silu = mw.silu_grad %h, %dh : tensor<4xbf16>
  %gelu = mw.gelu_grad %x, %dy : tensor<4x8xf32>
  %gelut = mw.gelu_grad %f, %f {approximate = #mw.gelu_approximation<tanh>} : tensor<2x3xf16>
  %sm = mw.softmax_grad %x, %dy axis = 1 : tensor<4x8xf32>
  %lsm = mw.log_softmax_grad %h, %dh axis = 0 : tensor<4xbf16>
  return %relu, %silu, %gelu, %gelut, %sm, %lsm
      : tensor<4x8xf32>, tensor<4xbf16>, tensor<4x8xf32>, tensor<2x3xf16>, tensor<4x8xf32>, tensor<4xbf16>
}

// CHECK-LABEL: func.func @reduce_and_norm_grads(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x8xf32>,
// CHECK-SAME: %[[M:[a-zA-Z0-9_]+]]: tensor<4xf32>,
// CHECK-SAME: %[[DM:[a-zA-Z0-9_]+]]: tensor<4xf32>,
// CHECK-SAME: %[[MK:[a-zA-Z0-9_]+]]: tensor<4x1xf32>,
// CHECK-SAME: %[[G:[a-zA-Z0-9_]+]]: tensor<8xf32>,
// CHECK-SAME: %[[MEAN:[a-zA-Z0-9_]+]]: tensor<4xf32>,
// CHECK-SAME: %[[RSTD:[a-zA-Z0-9_]+]]: tensor<4xf32>,
// CHECK-SAME: %[[DY:[a-zA-Z0-9_]+]]: tensor<4x8xf32>,
// CHECK-SAME: %[[HX:[a-zA-Z0-9_]+]]: tensor<2x4xbf16>,
// CHECK-SAME: %[[HG:[a-zA-Z0-9_]+]]: tensor<4xbf16>,
// CHECK-SAME: %[[HS:[a-zA-Z0-9_]+]]: tensor<2xf32>)
// CHECK: %[[RMG:.*]] = mw.reduce_max_grad %[[X]], %[[M]], %[[DM]] axes = [1] : (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4x8xf32>
// CHECK: %[[RMGK:.*]] = mw.reduce_max_grad %[[X]], %[[MK]], %[[MK]] axes = [1] {keepdims} : (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK: %[[DX:.*]], %[[DG:.*]], %[[DB:.*]] = mw.layer_norm_grad %[[X]], %[[G]], %[[MEAN]], %[[RSTD]], %[[DY]] : (tensor<4x8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK: %[[HDX:.*]], %[[HDG:.*]], %[[HDB:.*]] = mw.layer_norm_grad %[[HX]], %[[HG]], %[[HS]], %[[HS]], %[[HX]] : (tensor<2x4xbf16>, tensor<4xbf16>, tensor<2xf32>, tensor<2xf32>, tensor<2x4xbf16>) -> (tensor<2x4xbf16>, tensor<4xbf16>, tensor<4xbf16>)
// CHECK: %[[RDX:.*]], %[[RDG:.*]] = mw.rms_norm_grad %[[X]], %[[G]], %[[RSTD]], %[[DY]] : (tensor<4x8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>)
// CHECK: return %[[RMG]], %[[RMGK]], %[[DX]], %[[DG]], %[[DB]], %[[HDX]], %[[HDG]], %[[HDB]], %[[RDX]], %[[RDG]]
func.func @reduce_and_norm_grads(%x: tensor<4x8xf32>, %m: tensor<4xf32>, %dm: tensor<4xf32>, %mk: tensor<4x1xf32>,
                                 %g: tensor<8xf32>, %mean: tensor<4xf32>, %rstd: tensor<4xf32>, %dy: tensor<4x8xf32>,
                                 %hx: tensor<2x4xbf16>, %hg: tensor<4xbf16>, %hs: tensor<2xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>,
        tensor<2x4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4x8xf32>, tensor<8xf32>) {
  %rmg = mw.reduce_max_grad %x, %m, %dm axes = [1] : (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  %rmgk = mw.reduce_max_grad %x, %mk, %mk axes = [1] {keepdims} : (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %dx, %dg, %db = mw.layer_norm_grad %x, %g, %mean, %rstd, %dy
      : (tensor<4x8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x8xf32>)
      -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  %hdx, %hdg, %hdb = mw.layer_norm_grad %hx, %hg, %hs, %hs, %hx
      : (tensor<2x4xbf16>, tensor<4xbf16>, tensor<2xf32>, tensor<2xf32>, tensor<2x4xbf16>)
      -> (tensor<2x4xbf16>, tensor<4xbf16>, tensor<4xbf16>)
  %rdx, %rdg = mw.rms_norm_grad %x, %g, %rstd, %dy
      : (tensor<4x8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>)
  return %rmg, %rmgk, %dx, %dg, %db, %hdx, %hdg, %hdb, %rdx, %rdg
      : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>,
        tensor<2x4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4x8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @embedding_and_loss_grads(
// CHECK-SAME: %[[TOK:[a-zA-Z0-9_]+]]: tensor<2x32xi32>,
// CHECK-SAME: %[[DE:[a-zA-Z0-9_]+]]: tensor<2x32x64xf32>,
// CHECK-SAME: %[[TOK64:[a-zA-Z0-9_]+]]: tensor<8xi64>,
// CHECK-SAME: %[[HDE:[a-zA-Z0-9_]+]]: tensor<8x4xbf16>,
// CHECK-SAME: %[[LOGITS:[a-zA-Z0-9_]+]]: tensor<64x256xf32>,
// CHECK-SAME: %[[LABELS:[a-zA-Z0-9_]+]]: tensor<64xi64>,
// CHECK-SAME: %[[DLOSS:[a-zA-Z0-9_]+]]: tensor<f32>)
// CHECK: %[[DWTE:.*]] = mw.embedding_grad %[[TOK]], %[[DE]] : (tensor<2x32xi32>, tensor<2x32x64xf32>) -> tensor<256x64xf32>
// CHECK: %[[HDWTE:.*]] = mw.embedding_grad %[[TOK64]], %[[HDE]] : (tensor<8xi64>, tensor<8x4xbf16>) -> tensor<16x4xbf16>
// CHECK: %[[DL:.*]] = mw.cross_entropy_grad %[[LOGITS]], %[[LABELS]], %[[DLOSS]] : (tensor<64x256xf32>, tensor<64xi64>, tensor<f32>) -> tensor<64x256xf32>
// CHECK: %[[DL0:.*]] = mw.cross_entropy_grad %[[LOGITS]], %[[LABELS]], %[[DLOSS]] {ignore_index = 0 : i64} : (tensor<64x256xf32>, tensor<64xi64>, tensor<f32>) -> tensor<64x256xf32>
// CHECK: return %[[DWTE]], %[[HDWTE]], %[[DL]], %[[DL0]]
func.func @embedding_and_loss_grads(%tok: tensor<2x32xi32>, %de: tensor<2x32x64xf32>, %tok64: tensor<8xi64>,
                                    %hde: tensor<8x4xbf16>, %logits: tensor<64x256xf32>, %labels: tensor<64xi64>,
                                    %dloss: tensor<f32>)
    -> (tensor<256x64xf32>, tensor<16x4xbf16>, tensor<64x256xf32>, tensor<64x256xf32>) {
  %dwte = mw.embedding_grad %tok, %de : (tensor<2x32xi32>, tensor<2x32x64xf32>) -> tensor<256x64xf32>
  %hdwte = mw.embedding_grad %tok64, %hde : (tensor<8xi64>, tensor<8x4xbf16>) -> tensor<16x4xbf16>
  %dl = mw.cross_entropy_grad %logits, %labels, %dloss : (tensor<64x256xf32>, tensor<64xi64>, tensor<f32>) -> tensor<64x256xf32>
  %dl0 = mw.cross_entropy_grad %logits, %labels, %dloss {ignore_index = 0 : i64}
      : (tensor<64x256xf32>, tensor<64xi64>, tensor<f32>) -> tensor<64x256xf32>
  return %dwte, %hdwte, %dl, %dl0 : tensor<256x64xf32>, tensor<16x4xbf16>, tensor<64x256xf32>, tensor<64x256xf32>
}

// CHECK-LABEL: func.func @attention_grad(
// CHECK-SAME: %[[Q:[a-zA-Z0-9_]+]]: tensor<2x4x32x16xf32>,
// CHECK-SAME: %[[K:[a-zA-Z0-9_]+]]: tensor<2x4x48x16xf32>,
// CHECK-SAME: %[[V:[a-zA-Z0-9_]+]]: tensor<2x4x48x8xf32>,
// CHECK-SAME: %[[O:[a-zA-Z0-9_]+]]: tensor<2x4x32x8xf32>,
// CHECK-SAME: %[[LSE:[a-zA-Z0-9_]+]]: tensor<2x4x32xf32>,
// CHECK-SAME: %[[DO:[a-zA-Z0-9_]+]]: tensor<2x4x32x8xf32>,
// CHECK-SAME: %[[HQ:[a-zA-Z0-9_]+]]: tensor<1x2x8x4xbf16>,
// CHECK-SAME: %[[HLSE:[a-zA-Z0-9_]+]]: tensor<1x2x8xf32>)
// CHECK: %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] = mw.attention_grad %[[Q]], %[[K]], %[[V]], %[[O]], %[[LSE]], %[[DO]] : (tensor<2x4x32x16xf32>, tensor<2x4x48x16xf32>, tensor<2x4x48x8xf32>, tensor<2x4x32x8xf32>, tensor<2x4x32xf32>, tensor<2x4x32x8xf32>) -> (tensor<2x4x32x16xf32>, tensor<2x4x48x16xf32>, tensor<2x4x48x8xf32>)
// CHECK: %[[HDQ:.*]], %[[HDK:.*]], %[[HDV:.*]] = mw.attention_grad %[[HQ]], %[[HQ]], %[[HQ]], %[[HQ]], %[[HLSE]], %[[HQ]] {causal, scale = 2.500000e-01 : f64} : (tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8xf32>, tensor<1x2x8x4xbf16>) -> (tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>)
// CHECK: return %[[DQ]], %[[DK]], %[[DV]], %[[HDQ]], %[[HDK]], %[[HDV]]
func.func @attention_grad(%q: tensor<2x4x32x16xf32>, %k: tensor<2x4x48x16xf32>, %v: tensor<2x4x48x8xf32>,
                          %o: tensor<2x4x32x8xf32>, %lse: tensor<2x4x32xf32>, %do: tensor<2x4x32x8xf32>,
                          %hq: tensor<1x2x8x4xbf16>, %hlse: tensor<1x2x8xf32>)
    -> (tensor<2x4x32x16xf32>, tensor<2x4x48x16xf32>, tensor<2x4x48x8xf32>,
        tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>) {
  %dq, %dk, %dv = mw.attention_grad %q, %k, %v, %o, %lse, %do
      : (tensor<2x4x32x16xf32>, tensor<2x4x48x16xf32>, tensor<2x4x48x8xf32>,
         tensor<2x4x32x8xf32>, tensor<2x4x32xf32>, tensor<2x4x32x8xf32>)
      -> (tensor<2x4x32x16xf32>, tensor<2x4x48x16xf32>, tensor<2x4x48x8xf32>)
  %hdq, %hdk, %hdv = mw.attention_grad %hq, %hq, %hq, %hq, %hlse, %hq {causal, scale = 0.25 : f64}
      : (tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>,
         tensor<1x2x8x4xbf16>, tensor<1x2x8xf32>, tensor<1x2x8x4xbf16>)
      -> (tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>)
  return %dq, %dk, %dv, %hdq, %hdk, %hdv
      : tensor<2x4x32x16xf32>, tensor<2x4x48x16xf32>, tensor<2x4x48x8xf32>,
        tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>
}

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

// Default hyperparameters are elided; the others print sorted by name.
// CHECK-LABEL: func.func @optimizers(
// CHECK-SAME: %[[P:[a-zA-Z0-9_]+]]: tensor<64xf32>,
// CHECK-SAME: %[[G:[a-zA-Z0-9_]+]]: tensor<64xf32>,
// CHECK-SAME: %[[HG:[a-zA-Z0-9_]+]]: tensor<64xbf16>,
// CHECK-SAME: %[[M:[a-zA-Z0-9_]+]]: tensor<64xf32>,
// CHECK-SAME: %[[V:[a-zA-Z0-9_]+]]: tensor<64xf32>,
// CHECK-SAME: %[[T:[a-zA-Z0-9_]+]]: tensor<i64>,
// CHECK-SAME: %[[TF:[a-zA-Z0-9_]+]]: tensor<f32>,
// CHECK-SAME: %[[TI:[a-zA-Z0-9_]+]]: tensor<i32>,
// CHECK-SAME: %[[BUF:[a-zA-Z0-9_]+]]: tensor<64xf32>,
// CHECK-SAME: %[[HP:[a-zA-Z0-9_]+]]: tensor<8xf16>)
// CHECK: %[[P1:.*]], %[[M1:.*]], %[[V1:.*]] = mw.adamw %[[P]], %[[G]], %[[M]], %[[V]], %[[T]] : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<i64>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
// CHECK: %[[P2:.*]], %[[M2:.*]], %[[V2:.*]] = mw.adamw %[[P]], %[[HG]], %[[M]], %[[V]], %[[TF]] {beta1 = 5.000000e-01 : f64, beta2 = 7.500000e-01 : f64, eps = 1.000000e-05 : f64, lr = 3.000000e-04 : f64, weight_decay = 1.000000e-01 : f64} : (tensor<64xf32>, tensor<64xbf16>, tensor<64xf32>, tensor<64xf32>, tensor<f32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
// CHECK: %[[P3:.*]], %[[M3:.*]], %[[V3:.*]] = mw.adamw %[[HP]], %[[HP]], %[[HP]], %[[HP]], %[[TI]] {weight_decay = 0.000000e+00 : f64} : (tensor<8xf16>, tensor<8xf16>, tensor<8xf16>, tensor<8xf16>, tensor<i32>) -> (tensor<8xf16>, tensor<8xf16>, tensor<8xf16>)
// CHECK: %[[P4:.*]] = mw.sgd %[[P]], %[[G]] {lr = 1.000000e-02 : f64} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
// CHECK: %[[P5:.*]] = mw.sgd %[[P]], %[[HG]] {lr = 1.000000e-02 : f64, weight_decay = 1.000000e-04 : f64} : (tensor<64xf32>, tensor<64xbf16>) -> tensor<64xf32>
// CHECK: %[[P6:.*]], %[[B6:.*]] = mw.sgd %[[P]], %[[G]], %[[BUF]] {lr = 1.000000e-02 : f64, momentum = 9.000000e-01 : f64} : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>)
// CHECK: %[[P7:.*]], %[[B7:.*]] = mw.sgd %[[P]], %[[G]], %[[BUF]] {lr = 1.000000e-02 : f64, momentum = 9.000000e-01 : f64, nesterov} : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>)
// CHECK: %[[P8:.*]], %[[B8:.*]] = mw.sgd %[[P]], %[[G]], %[[BUF]] {dampening = 1.000000e-01 : f64, lr = 1.000000e-02 : f64, momentum = 5.000000e-01 : f64} : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>)
// CHECK: return %[[P1]], %[[M1]], %[[V1]], %[[P2]], %[[M2]], %[[V2]], %[[P3]], %[[M3]], %[[V3]], %[[P4]], %[[P5]], %[[P6]], %[[B6]], %[[P7]], %[[B7]], %[[P8]], %[[B8]]
func.func @optimizers(%p: tensor<64xf32>, %g: tensor<64xf32>, %hg: tensor<64xbf16>, %m: tensor<64xf32>, %v: tensor<64xf32>,
                      %t: tensor<i64>, %tf: tensor<f32>, %ti: tensor<i32>, %buf: tensor<64xf32>, %hp: tensor<8xf16>)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>,
        tensor<8xf16>, tensor<8xf16>, tensor<8xf16>, tensor<64xf32>, tensor<64xf32>,
        tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %p1, %m1, %v1 = mw.adamw %p, %g, %m, %v, %t
      : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<i64>)
      -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  // Mixed precision: a bf16 gradient updates f32 master weights.
  %p2, %m2, %v2 = mw.adamw %p, %hg, %m, %v, %tf {lr = 3.0e-04 : f64, beta1 = 0.5 : f64, beta2 = 0.75 : f64, eps = 1.0e-05 : f64, weight_decay = 0.1 : f64}
      : (tensor<64xf32>, tensor<64xbf16>, tensor<64xf32>, tensor<64xf32>, tensor<f32>)
      -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  %p3, %m3, %v3 = mw.adamw %hp, %hp, %hp, %hp, %ti {lr = 1.0e-03 : f64, weight_decay = 0.0 : f64}
      : (tensor<8xf16>, tensor<8xf16>, tensor<8xf16>, tensor<8xf16>, tensor<i32>)
      -> (tensor<8xf16>, tensor<8xf16>, tensor<8xf16>)
  %p4 = mw.sgd %p, %g {lr = 1.0e-02 : f64} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %p5 = mw.sgd %p, %hg {lr = 1.0e-02 : f64, weight_decay = 1.0e-04 : f64, momentum = 0.0 : f64}
      : (tensor<64xf32>, tensor<64xbf16>) -> tensor<64xf32>
  %p6, %b6 = mw.sgd %p, %g, %buf {lr = 1.0e-02 : f64, momentum = 0.9 : f64}
      : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>)
  %p7, %b7 = mw.sgd %p, %g, %buf {lr = 1.0e-02 : f64, momentum = 0.9 : f64, nesterov}
      : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>)
  %p8, %b8 = mw.sgd %p, %g, %buf {lr = 1.0e-02 : f64, momentum = 0.5 : f64, dampening = 0.1 : f64}
      : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>)
  return %p1, %m1, %v1, %p2, %m2, %v2, %p3, %m3, %v3, %p4, %p5, %p6, %b6, %p7, %b7, %p8, %b8
      : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>,
        tensor<8xf16>, tensor<8xf16>, tensor<8xf16>, tensor<64xf32>, tensor<64xf32>,
        tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

//===----------------------------------------------------------------------===//
// Mixed precision: overflow checks and dynamic loss scaling
//===----------------------------------------------------------------------===//

// found_inf takes any float tensors; select chooses whole tensors of any type;
// loss_scale_update elides its DeepSpeed defaults (window 1000, hysteresis 2,
// min_scale 1, factor 2) and prints the others sorted by name.
// CHECK-LABEL: func.func @loss_scaling(
// CHECK-SAME: %[[G:[a-zA-Z0-9_]+]]: tensor<64x256xf32>,
// CHECK-SAME: %[[B:[a-zA-Z0-9_]+]]: tensor<256xf32>,
// CHECK-SAME: %[[H:[a-zA-Z0-9_]+]]: tensor<8xf16>,
// CHECK-SAME: %[[BH:[a-zA-Z0-9_]+]]: tensor<bf16>,
// CHECK-SAME: %[[T:[a-zA-Z0-9_]+]]: tensor<i64>,
// CHECK-SAME: %[[S:[a-zA-Z0-9_]+]]: tensor<f32>,
// CHECK-SAME: %[[N:[a-zA-Z0-9_]+]]: tensor<i64>,
// CHECK-SAME: %[[L:[a-zA-Z0-9_]+]]: tensor<i64>,
// CHECK-SAME: %[[HY:[a-zA-Z0-9_]+]]: tensor<i64>)
// CHECK: %[[O:.*]] = mw.found_inf %[[G]], %[[B]] : (tensor<64x256xf32>, tensor<256xf32>) -> tensor<f32>
// CHECK: %[[O2:.*]] = mw.found_inf %[[H]], %[[BH]], %[[G]] : (tensor<8xf16>, tensor<bf16>, tensor<64x256xf32>) -> tensor<f32>
// CHECK: %[[P:.*]] = mw.select %[[O]], %[[G]], %[[G]] : (tensor<f32>, tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<64x256xf32>
// CHECK: %[[Q:.*]] = mw.select %[[O2]], %[[T]], %[[N]] : (tensor<f32>, tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK: %[[R:.*]] = mw.select %[[O]], %[[H]], %[[H]] : (tensor<f32>, tensor<8xf16>, tensor<8xf16>) -> tensor<8xf16>
// CHECK: %[[NS:[a-zA-Z0-9_]+]], %[[NI:[a-zA-Z0-9_]+]], %[[NL:[a-zA-Z0-9_]+]], %[[NH:[a-zA-Z0-9_]+]] = mw.loss_scale_update %[[O]], %[[S]], %[[N]], %[[L]], %[[HY]] : (tensor<f32>, tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>) -> (tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>)
// CHECK: %[[NS2:[a-zA-Z0-9_]+]], %{{.*}} = mw.loss_scale_update %[[O]], %[[S]], %[[N]], %[[L]], %[[HY]] {factor = 4.000000e+00 : f64, hysteresis = 1 : i64, min_scale = 1.250000e-01 : f64, window = 3 : i64} : (tensor<f32>, tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>) -> (tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>)
// CHECK: return %[[O]], %[[O2]], %[[P]], %[[Q]], %[[R]], %[[NS]], %[[NI]], %[[NL]], %[[NH]], %[[NS2]]
func.func @loss_scaling(%g: tensor<64x256xf32>, %b: tensor<256xf32>, %h: tensor<8xf16>, %bh: tensor<bf16>, %t: tensor<i64>,
                        %scale: tensor<f32>, %iter: tensor<i64>, %last: tensor<i64>, %hyst: tensor<i64>)
    -> (tensor<f32>, tensor<f32>, tensor<64x256xf32>, tensor<i64>, tensor<8xf16>,
        tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<f32>) {
  %o = mw.found_inf %g, %b : (tensor<64x256xf32>, tensor<256xf32>) -> tensor<f32>
  %o2 = mw.found_inf %h, %bh, %g : (tensor<8xf16>, tensor<bf16>, tensor<64x256xf32>) -> tensor<f32>
  %p = mw.select %o, %g, %g : (tensor<f32>, tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<64x256xf32>
  %q = mw.select %o2, %t, %iter : (tensor<f32>, tensor<i64>, tensor<i64>) -> tensor<i64>
  %r = mw.select %o, %h, %h : (tensor<f32>, tensor<8xf16>, tensor<8xf16>) -> tensor<8xf16>
  // Explicit defaults are elided when printed.
  %s1, %n1, %l1, %h1 = mw.loss_scale_update %o, %scale, %iter, %last, %hyst {window = 1000 : i64, min_scale = 1.0 : f64}
      : (tensor<f32>, tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>) -> (tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>)
  %s2, %n2, %l2, %h2 = mw.loss_scale_update %o, %scale, %iter, %last, %hyst {window = 3 : i64, hysteresis = 1 : i64, min_scale = 0.125 : f64, factor = 4.0 : f64}
      : (tensor<f32>, tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>) -> (tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>)
  return %o, %o2, %p, %q, %r, %s1, %n1, %l1, %h1, %s2
      : tensor<f32>, tensor<f32>, tensor<64x256xf32>, tensor<i64>, tensor<8xf16>,
        tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<f32>
}

//===----------------------------------------------------------------------===//
// Roles and names on function arguments and results
//===----------------------------------------------------------------------===//

// Every role where it is allowed; names are unique among the arguments and
// among the results, but an updated parameter result may carry its argument's
// name ("w"). Attributes print sorted (mw.name before mw.role); annotated
// memrefs and unannotated non-tensor arguments are fine.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W:[a-zA-Z0-9_]+]]: tensor<64x256xf32> {mw.name = "w", mw.role = #mw.role<param>},
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<32x64xf32> {mw.name = "x", mw.role = #mw.role<input>},
// CHECK-SAME: %[[LABELS:[a-zA-Z0-9_]+]]: tensor<32xi32> {mw.name = "labels", mw.role = #mw.role<label>},
// CHECK-SAME: %[[M:[a-zA-Z0-9_]+]]: tensor<64x256xf32> {mw.name = "w.exp_avg", mw.role = #mw.role<optimizer_state>},
// CHECK-SAME: %[[V:[a-zA-Z0-9_]+]]: tensor<64x256xf32> {mw.name = "w.exp_avg_sq", mw.role = #mw.role<optimizer_state>},
// CHECK-SAME: %[[STEP:[a-zA-Z0-9_]+]]: tensor<i64> {mw.role = #mw.role<optimizer_state>},
// CHECK-SAME: %[[GIN:[a-zA-Z0-9_]+]]: tensor<64x256xbf16> {mw.role = #mw.role<grad>},
// CHECK-SAME: %[[SCRATCH:[a-zA-Z0-9_]+]]: memref<4xf32> {mw.name = "scratch", mw.role = #mw.role<param>},
// CHECK-SAME: %[[PLAIN:[a-zA-Z0-9_]+]]: i32)
// CHECK-SAME: -> (tensor<f32> {mw.name = "loss", mw.role = #mw.role<output>},
// CHECK-SAME: tensor<64x256xf32> {mw.name = "w", mw.role = #mw.role<param>},
// CHECK-SAME: tensor<64x256xf32> {mw.name = "w.exp_avg", mw.role = #mw.role<optimizer_state>},
// CHECK-SAME: tensor<64x256xf32> {mw.name = "w.exp_avg_sq", mw.role = #mw.role<optimizer_state>},
// CHECK-SAME: tensor<64x256xf32> {mw.name = "w.grad", mw.role = #mw.role<grad>},
// CHECK-SAME: tensor<64x256xbf16> {mw.name = "x"})
// CHECK: %[[Y:.*]] = mw.matmul %[[X]], %[[W]] : (tensor<32x64xf32>, tensor<64x256xf32>) -> tensor<32x256xf32>
// CHECK: %[[LOSS:.*]] = mw.cross_entropy %[[Y]], %[[LABELS]] : (tensor<32x256xf32>, tensor<32xi32>) -> tensor<f32>
// CHECK: %[[ONE:.*]] = mw.splat 1.000000e+00 : tensor<f32>
// CHECK: %[[DY:.*]] = mw.cross_entropy_grad %[[Y]], %[[LABELS]], %[[ONE]] : (tensor<32x256xf32>, tensor<32xi32>, tensor<f32>) -> tensor<32x256xf32>
// CHECK: %[[DW:.*]] = mw.matmul %[[X]], %[[DY]] {transpose_lhs} : (tensor<32x64xf32>, tensor<32x256xf32>) -> tensor<64x256xf32>
// CHECK: %[[W1:.*]], %[[M1:.*]], %[[V1:.*]] = mw.adamw %[[W]], %[[DW]], %[[M]], %[[V]], %[[STEP]] : (tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>, tensor<i64>) -> (tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>)
// CHECK: return %[[LOSS]], %[[W1]], %[[M1]], %[[V1]], %[[DW]], %[[GIN]]
func.func @train_step(
    %w: tensor<64x256xf32> {mw.role = #mw.role<param>, mw.name = "w"},
    %x: tensor<32x64xf32> {mw.role = #mw.role<input>, mw.name = "x"},
    %labels: tensor<32xi32> {mw.role = #mw.role<label>, mw.name = "labels"},
    %m: tensor<64x256xf32> {mw.role = #mw.role<optimizer_state>, mw.name = "w.exp_avg"},
    %v: tensor<64x256xf32> {mw.role = #mw.role<optimizer_state>, mw.name = "w.exp_avg_sq"},
    %step: tensor<i64> {mw.role = #mw.role<optimizer_state>},
    %gin: tensor<64x256xbf16> {mw.role = #mw.role<grad>},
    %scratch: memref<4xf32> {mw.role = #mw.role<param>, mw.name = "scratch"},
    %plain: i32)
    -> (tensor<f32> {mw.role = #mw.role<output>, mw.name = "loss"},
        tensor<64x256xf32> {mw.role = #mw.role<param>, mw.name = "w"},
        tensor<64x256xf32> {mw.role = #mw.role<optimizer_state>, mw.name = "w.exp_avg"},
        tensor<64x256xf32> {mw.role = #mw.role<optimizer_state>, mw.name = "w.exp_avg_sq"},
        tensor<64x256xf32> {mw.role = #mw.role<grad>, mw.name = "w.grad"},
        tensor<64x256xbf16> {mw.name = "x"}) {
  %y = mw.matmul %x, %w : (tensor<32x64xf32>, tensor<64x256xf32>) -> tensor<32x256xf32>
  %loss = mw.cross_entropy %y, %labels : (tensor<32x256xf32>, tensor<32xi32>) -> tensor<f32>
  %one = mw.splat 1.0 : tensor<f32>
  %dy = mw.cross_entropy_grad %y, %labels, %one : (tensor<32x256xf32>, tensor<32xi32>, tensor<f32>) -> tensor<32x256xf32>
  %dw = mw.matmul %x, %dy {transpose_lhs} : (tensor<32x64xf32>, tensor<32x256xf32>) -> tensor<64x256xf32>
  %w1, %m1, %v1 = mw.adamw %w, %dw, %m, %v, %step
      : (tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>, tensor<i64>)
      -> (tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>)
  return %loss, %w1, %m1, %v1, %dw, %gin
      : tensor<f32>, tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xbf16>
}

// Roles on a declaration are verified too.
// CHECK-LABEL: func.func private @external_step(
// CHECK-SAME: tensor<8xf16> {mw.role = #mw.role<param>},
// CHECK-SAME: tensor<8xf16> {mw.role = #mw.role<grad>})
// CHECK-SAME: -> (tensor<8xf16> {mw.role = #mw.role<param>}, tensor<f32> {mw.role = #mw.role<output>})
func.func private @external_step(tensor<8xf16> {mw.role = #mw.role<param>}, tensor<8xf16> {mw.role = #mw.role<grad>})
    -> (tensor<8xf16> {mw.role = #mw.role<param>}, tensor<f32> {mw.role = #mw.role<output>})

// -----

// CHECK-LABEL: func.func @wait
// CHECK: %[[G:.*]] = mesh.all_gather
// CHECK: mw.wait %[[G]] : tensor<8xf32>
mesh.mesh @dp(shape = 4)
func.func @wait(%x: tensor<2xf32>) -> tensor<8xf32> {
  %g = mesh.all_gather %x on @dp mesh_axes = [0] gather_axis = 0 : tensor<2xf32> -> tensor<8xf32>
  %w = mw.wait %g : tensor<8xf32>
  return %w : tensor<8xf32>
}

// The wait keeps the collective's operand live until it completes.
// CHECK-LABEL: func.func @wait_reading
// CHECK: %[[G:.*]] = mesh.all_gather %[[X:.*]] on
// CHECK: mw.wait %[[G]] reading %[[X]] : tensor<8xf32>, tensor<2xf32>
func.func @wait_reading(%x: tensor<2xf32>) -> tensor<8xf32> {
  %g = mesh.all_gather %x on @dp mesh_axes = [0] gather_axis = 0 : tensor<2xf32> -> tensor<8xf32>
  %w = mw.wait %g reading %x : tensor<8xf32>, tensor<2xf32>
  return %w : tensor<8xf32>
}

// -----

// An offloaded weight is fetched into device memory and waited for.
// CHECK-LABEL: func.func @fetch
// CHECK-SAME: mw.offload = "cpu"
// CHECK: %[[F:.*]] = mw.fetch %{{.*}} {layer = 3 : i64} : tensor<4x4xf32>
// CHECK: mw.wait %[[F]] : tensor<4x4xf32>
func.func @fetch(%w: tensor<4x4xf32> {mw.name = "h.3.w", mw.role = #mw.role<param>, mw.offload = "cpu"},
                 %x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %f = mw.fetch %w {layer = 3 : i64} : tensor<4x4xf32>
  %d = mw.wait %f : tensor<4x4xf32>
  %y = mw.matmul %x, %d : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
