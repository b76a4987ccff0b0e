// --mw-fuse forms each kind of fused kernel of docs/fusion.md, and keeps to
// its legality rules. Each case says what fused and why.
// RUN: mw-opt %s -split-input-file --mw-fuse | FileCheck %s
// RUN: mw-opt %s -split-input-file --mw-fuse=kinds=loop | FileCheck %s --check-prefix=LOOP
// The IR verifies after each case (mw.fusion's verifier holds every kind to
// its rules), and mw-eval gives the same outputs: see mw-fuse-same-outputs.

// matmul epilogue: bias + gelu; the pre-activation is also returned.
// CHECK-LABEL: func.func @matmul_epilogue
// CHECK:      %[[F:.*]]:2 = mw.fusion matmul ins(%arg0, %arg1, %arg2 :
// CHECK-NEXT: ^bb0(
// CHECK-NEXT:   %[[M:.*]] = mw.matmul
// CHECK-NEXT:   %[[B:.*]] = mw.add %[[M]],
// CHECK-NEXT:   %[[G:.*]] = mw.gelu %[[B]]
// CHECK-NEXT:   mw.yield %[[B]], %[[G]]
// CHECK:      return %[[F]]#0, %[[F]]#1
func.func @matmul_epilogue(%x: tensor<8x64xf32>, %w: tensor<64x256xf32>, %b: tensor<256xf32>) -> (tensor<8x256xf32>, tensor<8x256xf32>) {
  %0 = mw.matmul %x, %w : (tensor<8x64xf32>, tensor<64x256xf32>) -> tensor<8x256xf32>
  %1 = mw.add %0, %b : (tensor<8x256xf32>, tensor<256xf32>) -> tensor<8x256xf32>
  %2 = mw.gelu %1 : tensor<8x256xf32>
  return %1, %2 : tensor<8x256xf32>, tensor<8x256xf32>
}

// -----

// backward: dX matmul, gelu_grad with the saved pre-activation, and the
// bias gradient as a column reduction (DGELU_BGRAD).
// CHECK-LABEL: func.func @dgelu_bgrad
// CHECK:      mw.fusion matmul ins(%arg0, %arg1, %arg2 :
// CHECK:        %[[M:.*]] = mw.matmul {{.*}}transpose_rhs
// CHECK-NEXT:   %[[D:.*]] = mw.gelu_grad %{{.*}}, %[[M]]
// CHECK-NEXT:   %[[S:.*]] = mw.reduce_sum %[[D]] axes = [0]
// CHECK-NEXT:   mw.yield %[[D]], %[[S]] : tensor<8x256xf32>, tensor<256xf32>
func.func @dgelu_bgrad(%dy: tensor<8x64xf32>, %w: tensor<256x64xf32>, %pre: tensor<8x256xf32>) -> (tensor<8x256xf32>, tensor<256xf32>) {
  %0 = mw.matmul %dy, %w {transpose_rhs} : (tensor<8x64xf32>, tensor<256x64xf32>) -> tensor<8x256xf32>
  %1 = mw.gelu_grad %pre, %0 : tensor<8x256xf32>
  %2 = mw.reduce_sum %1 axes = [0] : tensor<8x256xf32> -> tensor<256xf32>
  return %1, %2 : tensor<8x256xf32>, tensor<256xf32>
}

// -----

// row: bias + residual + layer_norm; the residual sum is needed elsewhere.
// CHECK-LABEL: func.func @residual_layer_norm
// CHECK:      mw.fusion row
// CHECK:        %[[B:.*]] = mw.add %arg5, %arg6
// CHECK-NEXT:   %[[R:.*]] = mw.add %arg7, %[[B]]
// CHECK-NEXT:   %[[Y:.*]], %[[MEAN:.*]], %[[RSTD:.*]] = mw.layer_norm %[[R]]
// CHECK-NEXT:   mw.yield %[[R]], %[[Y]], %[[MEAN]], %[[RSTD]]
func.func @residual_layer_norm(%x: tensor<8x64xf32>, %b: tensor<64xf32>, %r: tensor<8x64xf32>, %g: tensor<64xf32>, %beta: tensor<64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = mw.add %x, %b : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  %1 = mw.add %r, %0 : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  %y, %mean, %rstd = mw.layer_norm %1, %g, %beta : (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<8x64xf32>, tensor<8xf32>, tensor<8xf32>)
  return %1, %y, %mean, %rstd : tensor<8x64xf32>, tensor<8x64xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// row: scale + mask + softmax; the scale's splat is computed in the kernel.
// CHECK-LABEL: func.func @scale_mask_softmax
// CHECK-NOT:  mw.splat
// CHECK:      mw.fusion row ins(%arg0, %arg1 :
// CHECK-NEXT: ^bb0(
// CHECK-NEXT:   mw.splat 2.5
// CHECK-NEXT:   mw.mul
// CHECK-NEXT:   mw.add
// CHECK-NEXT:   mw.softmax
// CHECK-NEXT:   mw.yield
func.func @scale_mask_softmax(%s: tensor<2x4x16x16xf32>, %mask: tensor<16x16xf32>) -> tensor<2x4x16x16xf32> {
  %c = mw.splat 2.5e-01 : tensor<f32>
  %0 = mw.mul %s, %c : (tensor<2x4x16x16xf32>, tensor<f32>) -> tensor<2x4x16x16xf32>
  %1 = mw.add %0, %mask : (tensor<2x4x16x16xf32>, tensor<16x16xf32>) -> tensor<2x4x16x16xf32>
  %2 = mw.softmax %1 axis = 3 : tensor<2x4x16x16xf32>
  return %2 : tensor<2x4x16x16xf32>
}

// -----

// row: softmax_grad and its epilogue (the scale).
// CHECK-LABEL: func.func @softmax_grad_scale
// CHECK:      mw.fusion row ins(%arg0, %arg1 :
// CHECK:        mw.softmax_grad
// CHECK-NEXT:   mw.splat
// CHECK-NEXT:   mw.mul
// CHECK-NEXT:   mw.yield
func.func @softmax_grad_scale(%p: tensor<2x4x16x16xf32>, %dp: tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32> {
  %c = mw.splat 2.5e-01 : tensor<f32>
  %0 = mw.softmax_grad %p, %dp axis = 3 : tensor<2x4x16x16xf32>
  %1 = mw.mul %0, %c : (tensor<2x4x16x16xf32>, tensor<f32>) -> tensor<2x4x16x16xf32>
  return %1 : tensor<2x4x16x16xf32>
}

// -----

// loop: a chain, a sibling that reads the same input, an intermediate that
// is also returned (multi-output).
// CHECK-LABEL: func.func @loop
// CHECK:      %[[F:.*]]:3 = mw.fusion loop ins(%arg0, %arg1 :
// CHECK:        mw.exp
// CHECK-NEXT:   %[[MUL:.*]] = mw.mul
// CHECK-NEXT:   %[[TANH:.*]] = mw.tanh %[[MUL]]
// CHECK-NEXT:   %[[NEG:.*]] = mw.neg %arg2
// CHECK-NEXT:   mw.yield %[[MUL]], %[[TANH]], %[[NEG]]
// CHECK:      return %[[F]]#0, %[[F]]#1, %[[F]]#2
func.func @loop(%x: tensor<8x64xf32>, %y: tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>) {
  %0 = mw.exp %x : tensor<8x64xf32>
  %1 = mw.mul %0, %y : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  %2 = mw.tanh %1 : tensor<8x64xf32>
  %3 = mw.neg %x : tensor<8x64xf32>
  return %1, %2, %3 : tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>
}

// -----

// loop: three slices of one input, each reshaped and transposed (the
// query, key and value heads).
// CHECK-LABEL: func.func @qkv_heads
// CHECK:      mw.fusion loop ins(%arg0 : tensor<2x16x192xf32>) -> (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>)
// CHECK-COUNT-3: mw.transpose
// CHECK:        mw.yield
// CHECK-NOT:  mw.slice
func.func @qkv_heads(%qkv: tensor<2x16x192xf32>) -> (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) {
  %0 = mw.slice %qkv offsets = [0, 0, 0] sizes = [2, 16, 64] : tensor<2x16x192xf32> -> tensor<2x16x64xf32>
  %1 = mw.reshape %0 : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
  %2 = mw.transpose %1 permutation = [0, 2, 1, 3] : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %3 = mw.slice %qkv offsets = [0, 0, 64] sizes = [2, 16, 64] : tensor<2x16x192xf32> -> tensor<2x16x64xf32>
  %4 = mw.reshape %3 : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
  %5 = mw.transpose %4 permutation = [0, 2, 1, 3] : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %6 = mw.slice %qkv offsets = [0, 0, 128] sizes = [2, 16, 64] : tensor<2x16x192xf32> -> tensor<2x16x64xf32>
  %7 = mw.reshape %6 : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
  %8 = mw.transpose %7 permutation = [0, 2, 1, 3] : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  return %2, %5, %8 : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>
}

// -----

// loop: a residual gradient sum and its bias gradient.
// CHECK-LABEL: func.func @grad_sum_bias
// CHECK:      mw.fusion loop
// CHECK:        %[[S:.*]] = mw.add
// CHECK-NEXT:   %[[B:.*]] = mw.reduce_sum %[[S]] axes = [0, 1]
// CHECK-NEXT:   mw.yield %[[S]], %[[B]] : tensor<2x8x64xf32>, tensor<64xf32>
func.func @grad_sum_bias(%a: tensor<2x8x64xf32>, %b: tensor<2x8x64xf32>) -> (tensor<2x8x64xf32>, tensor<64xf32>) {
  %0 = mw.add %a, %b : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  %1 = mw.reduce_sum %0 axes = [0, 1] : tensor<2x8x64xf32> -> tensor<64xf32>
  return %0, %1 : tensor<2x8x64xf32>, tensor<64xf32>
}

// -----

// horizontal: every AdamW update of the step in one kernel.
// CHECK-LABEL: func.func @optimizer
// CHECK:      mw.fusion horizontal
// CHECK-COUNT-2: mw.adamw
// CHECK:        mw.yield
// CHECK-NOT:  mw.adamw
func.func @optimizer(%p0: tensor<64xf32>, %g0: tensor<64xf32>, %m0: tensor<64xf32>, %v0: tensor<64xf32>,
                     %p1: tensor<8x64xf32>, %g1: tensor<8x64xf32>, %m1: tensor<8x64xf32>, %v1: tensor<8x64xf32>,
                     %t: tensor<i64>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>) {
  %a:3 = mw.adamw %p0, %g0, %m0, %v0, %t : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<i64>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  %b:3 = mw.adamw %p1, %g1, %m1, %v1, %t : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<i64>) -> (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>)
  return %a#0, %a#1, %a#2, %b#0, %b#1, %b#2 : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>
}

// -----

// horizontal, fp16's keep-on-overflow: an update whose new values go
// through mw.select (the old value kept on overflow) cannot write over its
// parameter, so its results are transient until the select; side by side,
// every update's transients would be live at once. Such updates stay one
// kernel each; the others still fuse.
// CHECK-LABEL: func.func @optimizer_keep_on_overflow
// CHECK-NOT:  mw.fusion horizontal
// CHECK:      mw.adamw %arg0
// CHECK:      mw.select
// CHECK:      mw.adamw %arg4
// CHECK:      mw.select
func.func @optimizer_keep_on_overflow(%p0: tensor<64xf32>, %g0: tensor<64xf32>, %m0: tensor<64xf32>, %v0: tensor<64xf32>,
                     %p1: tensor<8x64xf32>, %g1: tensor<8x64xf32>, %m1: tensor<8x64xf32>, %v1: tensor<8x64xf32>,
                     %t: tensor<i64>, %inf: tensor<f32>) -> (tensor<64xf32>, tensor<8x64xf32>) {
  %a:3 = mw.adamw %p0, %g0, %m0, %v0, %t : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<i64>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  %ka = mw.select %inf, %p0, %a#0 : (tensor<f32>, tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %b:3 = mw.adamw %p1, %g1, %m1, %v1, %t : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<i64>) -> (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>)
  %kb = mw.select %inf, %p1, %b#0 : (tensor<f32>, tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  return %ka, %kb : tensor<64xf32>, tensor<8x64xf32>
}

// -----

// horizontal, updates at two points (as --mw-hoist-updates places them): a
// kernel runs where its first update is, so %c, whose gradient comes later,
// does not join %a and %b's kernel (that would hold their gradients until
// %g2), and alone it is no fusion. The tanh stays before it.
// CHECK-LABEL: func.func @optimizer_at_two_points
// CHECK:      mw.fusion horizontal
// CHECK-COUNT-2: mw.adamw
// CHECK:        mw.yield
// CHECK:      mw.tanh
// CHECK-NEXT: mw.adamw
func.func @optimizer_at_two_points(%p0: tensor<64xf32>, %g0: tensor<64xf32>, %m0: tensor<64xf32>, %v0: tensor<64xf32>,
                     %p1: tensor<64xf32>, %g1: tensor<64xf32>, %m1: tensor<64xf32>, %v1: tensor<64xf32>,
                     %p2: tensor<64xf32>, %m2: tensor<64xf32>, %v2: tensor<64xf32>,
                     %t: tensor<i64>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %a:3 = mw.adamw %p0, %g0, %m0, %v0, %t : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<i64>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  %b:3 = mw.adamw %p1, %g1, %m1, %v1, %t : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<i64>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  %g2 = mw.tanh %g1 : tensor<64xf32>
  %c:3 = mw.adamw %p2, %g2, %m2, %v2, %t : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<i64>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  return %a#0, %b#0, %c#0 : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// -----

// no cycle: %2 reads %0 and %1 = matmul(%0), so %2 cannot join %0's kernel
// (the matmul would need the kernel's result and the kernel the matmul's).
// CHECK-LABEL: func.func @no_cycle
// CHECK:      %[[E:.*]] = mw.exp %arg0
// CHECK-NEXT: mw.fusion matmul ins(%[[E]], %arg1
// LOOP-LABEL: func.func @no_cycle
// LOOP:       %[[E:.*]] = mw.exp %arg0
// LOOP-NEXT:  %[[M:.*]] = mw.matmul %[[E]], %arg1
// LOOP-NEXT:  mw.fusion loop ins(%[[E]], %[[M]] :
// LOOP-NEXT:  ^bb0(
// LOOP-NEXT:    mw.mul
// LOOP-NEXT:    mw.tanh
func.func @no_cycle(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = mw.exp %x : tensor<8x8xf32>
  %1 = mw.matmul %0, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = mw.mul %0, %1 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = mw.tanh %2 : tensor<8x8xf32>
  return %3 : tensor<8x8xf32>
}

// -----

// a matmul is never duplicated: its result feeds two row kernels and is
// computed once, a result of its own kernel.
// CHECK-LABEL: func.func @matmul_once
// CHECK:      %[[MM:.*]] = mw.fusion matmul
// CHECK-COUNT-1: mw.matmul
// CHECK-NOT:  mw.matmul
// CHECK:      mw.softmax %[[MM]]
// CHECK-NEXT: mw.log_softmax %[[MM]]
func.func @matmul_once(%x: tensor<8x16xf32>, %w: tensor<16x16xf32>, %b: tensor<16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = mw.matmul %x, %w : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %1 = mw.add %0, %b : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %2 = mw.softmax %1 axis = 1 : tensor<8x16xf32>
  %3 = mw.log_softmax %1 axis = 1 : tensor<8x16xf32>
  return %2, %3 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// a reduction is never duplicated: the row sum feeds two kernels and is
// computed once.
// CHECK-LABEL: func.func @reduction_once
// CHECK:      %[[F:.*]]:2 = mw.fusion row
// CHECK:        %[[S:.*]] = mw.reduce_sum
// CHECK:        mw.yield %{{.*}}, %[[S]] : tensor<8x16xf32>, tensor<8x1xf32>
// CHECK-NOT:  mw.reduce_sum
// CHECK:      mw.mul %arg0, %[[F]]#1
func.func @reduction_once(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = mw.exp %x : tensor<8x16xf32>
  %1 = mw.reduce_sum %0 axes = [1] {keepdims} : tensor<8x16xf32> -> tensor<8x1xf32>
  %2 = mw.div %0, %1 : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
  %3 = mw.mul %x, %1 : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
  return %2, %3 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// a training step: the forward value %a that the backward pass reads (a
// value --mw-remat keeps) stays a result of the forward kernel, and forward
// and backward ops never share a kernel, even as siblings reading %x.
// CHECK-LABEL: func.func @train_step
// CHECK:      %[[FWD:.*]]:2 = mw.fusion loop ins(%arg0 :
// CHECK-NEXT: ^bb0(
// CHECK-NEXT:   %[[A:.*]] = mw.exp
// CHECK-NEXT:   %[[B:.*]] = mw.mul %[[A]], %[[A]]
// CHECK-NEXT:   mw.yield %[[A]], %[[B]]
// CHECK:      mw.reduce_sum %[[FWD]]#1
// CHECK:      mw.fusion loop ins(%arg0, %[[FWD]]#0 :
// CHECK-NOT:    mw.exp
func.func @train_step(%x: tensor<8x16xf32> {mw.role = #mw.role<input>})
    -> (tensor<f32> {mw.role = #mw.role<output>, mw.name = "loss"}, tensor<8x16xf32> {mw.role = #mw.role<grad>}) {
  %a = mw.exp %x : tensor<8x16xf32>
  %b = mw.mul %a, %a : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %loss = mw.reduce_sum %b axes = [0, 1] : tensor<8x16xf32> -> tensor<f32>
  %two = mw.splat 2.0 : tensor<f32>
  %n = mw.neg %x : tensor<8x16xf32>
  %d = mw.mul %a, %two : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
  %g = mw.mul %d, %n : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %loss, %g : tensor<f32>, tensor<8x16xf32>
}

// -----

// a shape change ends a loop kernel's results: the transpose's result has
// another shape than the chain's, so it is not fused with it.
// CHECK-LABEL: func.func @shapes
// CHECK:      %[[F:.*]] = mw.fusion loop ins(%arg0 : tensor<8x16xf32>) -> (tensor<8x16xf32>)
// CHECK:      mw.transpose %[[F]]
func.func @shapes(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<16x8xf32>) {
  %0 = mw.exp %x : tensor<8x16xf32>
  %1 = mw.tanh %0 : tensor<8x16xf32>
  %2 = mw.transpose %1 permutation = [1, 0] : tensor<8x16xf32> -> tensor<16x8xf32>
  return %1, %2 : tensor<8x16xf32>, tensor<16x8xf32>
}

// -----

// ops excluded from fused kernels stay kernels of their own.
// CHECK-LABEL: func.func @not_fused
// CHECK-NOT:  mw.fusion
func.func @not_fused(%x: tensor<8x16xf32>, %g: tensor<16xf32>, %m: tensor<8xf32>, %r: tensor<8xf32>, %dy: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %0 = mw.exp %dy : tensor<8x16xf32>
  %dx, %dg, %db = mw.layer_norm_grad %x, %g, %m, %r, %0 : (tensor<8x16xf32>, tensor<16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>)
  %1 = mw.neg %dx : tensor<8x16xf32>
  return %1, %dg, %db : tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>
}
