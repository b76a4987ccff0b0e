// --mw-form-kernels turns each mw.fusion into one mw.kernel whose body is the
// fusion's, and picks destinations by the fusion contract's aliasing rule:
// a loop kernel may write an input it reads only at the output's own index
// (one that dies there first), never a function argument; so may a row
// kernel's result of the iteration shape, where the row ops read the input
// along its rows (the runtime reads whole rows before writing them); so may
// a matmul kernel's epilogue result (an accumulator, C += A B: the epilogue
// reads it after the product), never the matmul's own; a horizontal kernel
// updates the parameters and states in place. One-Shot Bufferize then gives buffers only to the
// kernels' inputs and outputs.
// RUN: mw-opt %s -split-input-file --mw-form-kernels | FileCheck %s
// RUN: mw-opt %s -split-input-file --mw-bufferize | FileCheck %s --check-prefix=BUF

// CHECK-LABEL: func.func @loop_in_place
// CHECK:       %[[E:.*]] = mw.kernel ins(%arg0 : tensor<8xf32>) outs(%{{.*}} : tensor<8xf32>)
// CHECK:       mw.kernel ins(%[[E]], %arg1 : tensor<8xf32>, tensor<8xf32>) outs(%[[E]] : tensor<8xf32>)
// CHECK-NEXT:  ^bb0(
// CHECK-NEXT:    mw.mul
// CHECK-NEXT:    mw.tanh
// BUF-LABEL:   func.func @loop_in_place
// BUF:         %[[A:.*]] = memref.alloc() {{.*}} : memref<8xf32>
// BUF-NOT:     memref.alloc
// BUF:         mw.kernel ins(%[[A]], %arg1 : memref<8xf32>, memref<8xf32>) outs(%[[A]] : memref<8xf32>)
func.func @loop_in_place(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %e = mw.exp %x : tensor<8xf32>
  %r = mw.fusion loop ins(%e, %y : tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>) {
  ^bb0(%a: tensor<8xf32>, %b: tensor<8xf32>):
    %m = mw.mul %a, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t = mw.tanh %m : tensor<8xf32>
    mw.yield %t : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

// The input is read transposed: it cannot be the destination.
// CHECK-LABEL: func.func @loop_transposed
// CHECK:       %[[E:.*]] = mw.kernel ins(%arg0
// CHECK:       %[[D:.*]] = tensor.empty() : tensor<8x8xf32>
// CHECK:       mw.kernel ins(%[[E]] : tensor<8x8xf32>) outs(%[[D]] : tensor<8x8xf32>)
func.func @loop_transposed(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %e = mw.exp %x : tensor<8x8xf32>
  %r = mw.fusion loop ins(%e : tensor<8x8xf32>) -> (tensor<8x8xf32>) {
  ^bb0(%a: tensor<8x8xf32>):
    %t = mw.transpose %a permutation = [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
    %n = mw.neg %t : tensor<8x8xf32>
    mw.yield %n : tensor<8x8xf32>
  }
  return %r : tensor<8x8xf32>
}

// -----

// The row kernel's input %e dies here and is read at the iteration index,
// then along its rows by the softmax: the result is written over it, and
// One-Shot Bufferize keeps it there (no second buffer).
// CHECK-LABEL: func.func @row_in_place
// CHECK:       %[[E:.*]] = mw.kernel ins(%arg0
// CHECK-NOT:   tensor.empty
// CHECK:       mw.kernel ins(%[[E]], %arg1 : tensor<4x8xf32>, tensor<8xf32>) outs(%[[E]] : tensor<4x8xf32>)
// CHECK-NEXT:  ^bb0(
// CHECK-NEXT:    mw.add
// CHECK-NEXT:    mw.softmax
// BUF-LABEL:   func.func @row_in_place
// BUF:         %[[A:.*]] = memref.alloc() {{.*}} : memref<4x8xf32>
// BUF-NOT:     memref.alloc
// BUF:         mw.kernel ins(%[[A]], %arg1 : memref<4x8xf32>, memref<8xf32>) outs(%[[A]] : memref<4x8xf32>)
func.func @row_in_place(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %e = mw.exp %x : tensor<4x8xf32>
  %r = mw.fusion row ins(%e, %b : tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>) {
  ^bb0(%a: tensor<4x8xf32>, %c: tensor<8xf32>):
    %s = mw.add %a, %c : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %p = mw.softmax %s axis = 1 : tensor<4x8xf32>
    mw.yield %p : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

// The fused softmax_grad of attention's backward: both inputs die here; the
// result goes into the first (the saved probabilities).
// CHECK-LABEL: func.func @row_softmax_grad_in_place
// CHECK:       %[[Y:.*]] = mw.kernel ins(%arg0
// CHECK:       %[[DY:.*]] = mw.kernel ins(%arg1
// CHECK-NOT:   tensor.empty
// CHECK:       mw.kernel ins(%[[Y]], %[[DY]] : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%[[Y]] : tensor<2x4x4xf32>)
func.func @row_softmax_grad_in_place(%x: tensor<2x4x4xf32>, %g: tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  %y = mw.softmax %x axis = 2 : tensor<2x4x4xf32>
  %dy = mw.neg %g : tensor<2x4x4xf32>
  %r = mw.fusion row ins(%y, %dy : tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> (tensor<2x4x4xf32>) {
  ^bb0(%a: tensor<2x4x4xf32>, %b: tensor<2x4x4xf32>):
    %d = mw.softmax_grad %a, %b axis = 2 : tensor<2x4x4xf32>
    %s = mw.splat 1.250000e-01 : tensor<f32>
    %m = mw.mul %d, %s : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
    mw.yield %m : tensor<2x4x4xf32>
  }
  return %r : tensor<2x4x4xf32>
}

// -----

// Not in place: the row kernel reads its input transposed (another row's
// elements), so the result gets a fresh tensor.
// CHECK-LABEL: func.func @row_transposed
// CHECK:       %[[D:.*]] = tensor.empty() : tensor<4x4xf32>
// CHECK-NEXT:  mw.kernel ins(%{{.*}} : tensor<4x4xf32>) outs(%[[D]] : tensor<4x4xf32>)
func.func @row_transposed(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = mw.exp %x : tensor<4x4xf32>
  %r = mw.fusion row ins(%e : tensor<4x4xf32>) -> (tensor<4x4xf32>) {
  ^bb0(%a: tensor<4x4xf32>):
    %t = mw.transpose %a permutation = [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
    %p = mw.softmax %t axis = 1 : tensor<4x4xf32>
    mw.yield %p : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

// Not in place: a row-shaped result (a row reduction) never takes a
// row-shaped input's buffer; only results of the iteration shape do.
// CHECK-LABEL: func.func @row_reduction_fresh
// CHECK:       %[[D0:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK:       %[[D1:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:  mw.kernel ins(%arg0, %{{.*}} : tensor<4x8xf32>, tensor<4xf32>) outs(%[[D0]], %[[D1]] : tensor<4x8xf32>, tensor<4xf32>)
func.func @row_reduction_fresh(%x: tensor<4x8xf32>, %v: tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %w = mw.neg %v : tensor<4xf32>
  %r:2 = mw.fusion row ins(%x, %w : tensor<4x8xf32>, tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<4xf32>):
    %e = mw.exp %a : tensor<4x8xf32>
    %s = mw.reduce_sum %e axes = [1] : tensor<4x8xf32> -> tensor<4xf32>
    %t = mw.add %s, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    mw.yield %e, %t : tensor<4x8xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<4xf32>
}

// -----

// Not in place: the input is a function argument (a parameter or the
// caller's tensor), which a kernel never overwrites.
// CHECK-LABEL: func.func @row_argument_fresh
// CHECK:       %[[D:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT:  mw.kernel ins(%arg0 : tensor<4x8xf32>) outs(%[[D]] : tensor<4x8xf32>)
func.func @row_argument_fresh(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = mw.fusion row ins(%x : tensor<4x8xf32>) -> (tensor<4x8xf32>) {
  ^bb0(%a: tensor<4x8xf32>):
    %n = mw.neg %a : tensor<4x8xf32>
    %p = mw.softmax %n axis = 1 : tensor<4x8xf32>
    mw.yield %p : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @horizontal_in_place
// CHECK:       mw.kernel ins(%arg0, %arg1, %arg2, %arg3, %arg4 : {{.*}}) outs(%arg0, %arg2, %arg3 :
// BUF-LABEL:   func.func @horizontal_in_place
// BUF-NOT:     memref.alloc
// BUF:         mw.kernel ins(%arg0, %arg1, %arg2, %arg3, %arg4 : {{.*}}) outs(%arg0, %arg2, %arg3 :
func.func @horizontal_in_place(%p: tensor<8xf32> {mw.role = #mw.role<param>}, %g: tensor<8xf32> {mw.role = #mw.role<grad>},
                               %m: tensor<8xf32> {mw.role = #mw.role<optimizer_state>},
                               %q: tensor<4xf32> {mw.role = #mw.role<param>}, %h: tensor<4xf32> {mw.role = #mw.role<grad>})
    -> (tensor<8xf32> {mw.role = #mw.role<param>}, tensor<8xf32> {mw.role = #mw.role<optimizer_state>}, tensor<4xf32> {mw.role = #mw.role<param>}) {
  %r:3 = mw.fusion horizontal ins(%p, %g, %m, %q, %h : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<4xf32>) {
  ^bb0(%p0: tensor<8xf32>, %g0: tensor<8xf32>, %m0: tensor<8xf32>, %q0: tensor<4xf32>, %h0: tensor<4xf32>):
    %a:2 = mw.sgd %p0, %g0, %m0 {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
    %b = mw.sgd %q0, %h0 {lr = 1.0e-01 : f64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    mw.yield %a#0, %a#1, %b : tensor<8xf32>, tensor<8xf32>, tensor<4xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<8xf32>, tensor<8xf32>, tensor<4xf32>
}

// -----

// A matmul kernel whose epilogue adds the product to an accumulator that
// dies there (--mw-chunk-loss's weight gradient): the sum goes into the
// accumulator's buffer, and One-Shot Bufferize keeps it there. The product
// itself, yielded too, gets a buffer of its own.
// CHECK-LABEL: func.func @matmul_accumulate
// CHECK:       %[[ACC:.*]] = mw.kernel ins(%arg2
// CHECK:       %[[P:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK:       mw.kernel ins(%arg0, %arg1, %[[ACC]] : tensor<4x6xf32>, tensor<6x8xf32>, tensor<4x8xf32>) outs(%[[ACC]], %[[P]] : tensor<4x8xf32>, tensor<4x8xf32>)
// BUF-LABEL:   func.func @matmul_accumulate
// BUF:         %[[A:.*]] = memref.alloc() {{.*}} : memref<4x8xf32>
// BUF:         %[[B:.*]] = memref.alloc() {{.*}} : memref<4x8xf32>
// BUF-NOT:     memref.alloc
// BUF:         mw.kernel ins(%arg0, %arg1, %[[A]] : {{.*}}) outs(%[[A]], %[[B]] : memref<4x8xf32>, memref<4x8xf32>)
func.func @matmul_accumulate(%a: tensor<4x6xf32>, %b: tensor<6x8xf32>, %c: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %acc = mw.exp %c : tensor<4x8xf32>
  %r:2 = mw.fusion matmul ins(%a, %b, %acc : tensor<4x6xf32>, tensor<6x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%x: tensor<4x6xf32>, %y: tensor<6x8xf32>, %z: tensor<4x8xf32>):
    %p = mw.matmul %x, %y : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
    %s = mw.add %z, %p : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    mw.yield %s, %p : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// The accumulator is a function argument: never a destination.
// CHECK-LABEL: func.func @matmul_accumulate_argument
// CHECK:       %[[D:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK:       mw.kernel ins(%arg0, %arg1, %arg2 : {{.*}}) outs(%[[D]] : tensor<4x8xf32>)
func.func @matmul_accumulate_argument(%a: tensor<4x6xf32>, %b: tensor<6x8xf32>, %c: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = mw.fusion matmul ins(%a, %b, %c : tensor<4x6xf32>, tensor<6x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>) {
  ^bb0(%x: tensor<4x6xf32>, %y: tensor<6x8xf32>, %z: tensor<4x8xf32>):
    %p = mw.matmul %x, %y : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
    %s = mw.add %z, %p : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    mw.yield %s : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}
