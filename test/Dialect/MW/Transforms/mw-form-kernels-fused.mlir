// --mw-form-kernels turns each mw.fusion into one mw.kernel whose body is the
// fusion's, and picks destinations by the fusion contract's aliasing rule:
// a loop kernel may write an input it reads only at the output's own index
// (one that dies there first), never a function argument; a row or matmul
// kernel writes fresh tensors; a horizontal kernel updates the parameters and
// states in place. One-Shot Bufferize then gives buffers only to the
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

// CHECK-LABEL: func.func @row_fresh
// CHECK:       mw.exp
// CHECK:       %[[D0:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT:  mw.kernel ins(%{{.*}}, %arg1 : tensor<4x8xf32>, tensor<8xf32>) outs(%[[D0]] : tensor<4x8xf32>)
// CHECK-NEXT:  ^bb0(
// CHECK-NEXT:    mw.add
// CHECK-NEXT:    mw.softmax
func.func @row_fresh(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
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
