// RUN: mw-opt %s --mw-bufferize -split-input-file | FileCheck %s
// RUN: mw-opt %s --mw-bufferize -split-input-file | mw-opt --mw-static-arena --mw-verify-plan -split-input-file -o /dev/null

// One memref.alloc per transient buffer; the mul is written in place into the
// add's buffer (the add dies there), the exp is not (the add is still live).
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: memref<4xf32>, %[[Y:.*]]: memref<4xf32>, %[[W:.*]]: memref<2x2xf32>) -> (memref<4xf32>, memref<2x2xf32>)
// CHECK: %[[A:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK: mw.kernel ins(%[[X]], %[[Y]] : memref<4xf32>, memref<4xf32>) outs(%[[A]] : memref<4xf32>) {
// CHECK:   mw.add
// CHECK: %[[B:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK: mw.kernel ins(%[[A]] : memref<4xf32>) outs(%[[B]] : memref<4xf32>) {
// CHECK:   mw.exp
// CHECK: mw.kernel ins(%[[B]], %[[A]] : memref<4xf32>, memref<4xf32>) outs(%[[B]] : memref<4xf32>) {
// CHECK:   mw.mul
// The reshape is a view.
// CHECK: %[[R:.*]] = memref.expand_shape %[[B]] {{\[\[}}0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
// CHECK: %[[M:.*]] = memref.alloc() {{.*}} : memref<2x2xf32>
// CHECK: mw.kernel ins(%[[R]], %[[W]] : memref<2x2xf32>, memref<2x2xf32>) outs(%[[M]] : memref<2x2xf32>) {
// CHECK: return %[[B]], %[[M]] : memref<4xf32>, memref<2x2xf32>
// CHECK-NOT: memref.copy
func.func @chain(%x: tensor<4xf32>, %y: tensor<4xf32>, %w: tensor<2x2xf32>) -> (tensor<4xf32>, tensor<2x2xf32>) {
  %a = mw.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = mw.exp %a : tensor<4xf32>
  %c = mw.mul %b, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = mw.reshape %c : tensor<4xf32> -> tensor<2x2xf32>
  %m = mw.matmul %r, %w : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %c, %m : tensor<4xf32>, tensor<2x2xf32>
}

// -----

// Reshapes of any rank, rank 0 included, are collapse/expand views.
// CHECK-LABEL: func.func @reshapes
// CHECK: %[[C:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1, 2]] : memref<2x3x4xf32> into memref<24xf32>
// CHECK: memref.expand_shape %[[C]] {{\[\[}}0, 1]] output_shape [4, 6] : memref<24xf32> into memref<4x6xf32>
// CHECK: %[[S:.*]] = memref.expand_shape %{{.*}} [] output_shape [1] : memref<f32> into memref<1xf32>
// CHECK: memref.expand_shape %[[S]] {{\[\[}}0, 1]] output_shape [1, 1] : memref<1xf32> into memref<1x1xf32>
// CHECK: %[[F:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1]] : memref<1x1xf32> into memref<1xf32>
// CHECK: memref.collapse_shape %[[F]] [] : memref<1xf32> into memref<f32>
func.func @reshapes(%x: tensor<2x3x4xf32>, %s: tensor<f32>) -> (tensor<4x6xf32>, tensor<f32>) {
  %e = mw.exp %x : tensor<2x3x4xf32>
  %r = mw.reshape %e : tensor<2x3x4xf32> -> tensor<4x6xf32>
  %n = mw.neg %s : tensor<f32>
  %a = mw.reshape %n : tensor<f32> -> tensor<1x1xf32>
  %b = mw.exp %a : tensor<1x1xf32>
  %c = mw.reshape %b : tensor<1x1xf32> -> tensor<f32>
  return %r, %c : tensor<4x6xf32>, tensor<f32>
}

// -----

// The optimizer updates parameters and state in place: no allocation, and
// the results are the arguments' buffers.
// CHECK-LABEL: func.func @adamw
// CHECK-SAME: (%[[P:.*]]: memref<8xf32>, %[[G:.*]]: memref<8xf32>, %[[M:.*]]: memref<8xf32>, %[[V:.*]]: memref<8xf32>, %[[T:.*]]: memref<i64>)
// CHECK-NOT: memref.alloc
// CHECK: mw.kernel ins(%[[P]], %[[G]], %[[M]], %[[V]], %[[T]] : {{.*}}) outs(%[[P]], %[[M]], %[[V]] : memref<8xf32>, memref<8xf32>, memref<8xf32>)
// CHECK: return %[[P]], %[[M]], %[[V]]
func.func @adamw(%p: tensor<8xf32>, %g: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>, %t: tensor<i64>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %p1, %m1, %v1 = mw.adamw %p, %g, %m, %v, %t : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<i64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %p1, %m1, %v1 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// A parameter read after the update cannot be overwritten: the update gets
// a fresh buffer for it (no copy: destinations are never read).
// CHECK-LABEL: func.func @read_after_update
// CHECK: %[[NEW:.*]] = memref.alloc() {{.*}} : memref<8xf32>
// CHECK-NOT: memref.copy
// CHECK: outs(%[[NEW]], %{{.*}}, %{{.*}} :
func.func @read_after_update(%p: tensor<8xf32>, %g: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>, %t: tensor<i64>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %p1, %m1, %v1 = mw.adamw %p, %g, %m, %v, %t : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<i64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  %d = mw.sub %p1, %p : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %p1, %m1, %v1, %d : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
