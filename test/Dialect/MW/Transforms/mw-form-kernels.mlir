// RUN: mw-opt %s --mw-form-kernels | FileCheck %s
// RUN: mw-opt %s --mw-form-kernels | mw-opt --mw-form-kernels | FileCheck %s
// RUN: mw-opt %s --mw-bufferize | FileCheck %s --check-prefix=NOCOPY
// Destinations: a dying input for elementwise ops, the replaced state for
// optimizer updates, tensor.empty otherwise; never a function argument except
// for updates and fp16's keep-on-overflow select (at the end). The pass is idempotent (the second RUN line).

// CHECK-LABEL: func.func @elementwise
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// The add's inputs are arguments: a fresh destination.
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[A:.*]] = mw.kernel ins(%[[X]], %[[Y]] : {{.*}}) outs(%[[E]] : tensor<4xf32>)
// %a is still used by the mul: exp may not take it, and there is no other.
// CHECK: %[[B:.*]] = mw.kernel ins(%[[A]] : tensor<4xf32>) outs(%[[A]] : tensor<4xf32>)
// CHECK:   mw.exp
// %a dies at the mul (its second operand): the mul takes it over %b.
// CHECK: %[[C:.*]] = mw.kernel ins(%[[B]], %[[A]] : {{.*}}) outs(%[[A]] : tensor<4xf32>)
// CHECK:   mw.mul
// Reshapes stay outside kernels (they bufferize to views).
// CHECK: %[[R:.*]] = mw.reshape %[[C]]
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK: mw.kernel ins(%[[R]], %{{.*}} : {{.*}}) outs(%[[E2]] : tensor<2x2xf32>)
// CHECK:   mw.matmul
func.func @elementwise(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<2x2xf32>) {
  %a = mw.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = mw.exp %a : tensor<4xf32>
  %c = mw.mul %b, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = mw.reshape %c : tensor<4xf32> -> tensor<2x2xf32>
  %m = mw.matmul %r, %r : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %b, %m : tensor<4xf32>, tensor<2x2xf32>
}

// A broadcasting op takes the operand of the result's type.
// CHECK-LABEL: func.func @broadcast
// CHECK: %[[S:.*]] = mw.kernel ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK: mw.kernel ins(%{{.*}}, %[[S]] : tensor<3xf32>, tensor<2x3xf32>) outs(%[[S]] : tensor<2x3xf32>)
func.func @broadcast(%b: tensor<3xf32>, %x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %s = mw.exp %x : tensor<2x3xf32>
  %r = mw.add %b, %s : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// AdamW updates its parameter and moments in their own buffers, arguments
// included.
// CHECK-LABEL: func.func @adamw
// CHECK-SAME: (%[[P:.*]]: tensor<8xf32>, %[[G:.*]]: tensor<8xf32>, %[[M:.*]]: tensor<8xf32>, %[[V:.*]]: tensor<8xf32>, %[[T:.*]]: tensor<i64>)
// CHECK: mw.kernel ins(%[[P]], %[[G]], %[[M]], %[[V]], %[[T]] : {{.*}}) outs(%[[P]], %[[M]], %[[V]] : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
func.func @adamw(%p: tensor<8xf32>, %g: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>, %t: tensor<i64>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %p1, %m1, %v1 = mw.adamw %p, %g, %m, %v, %t : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<i64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %p1, %m1, %v1 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// SGD with momentum: the parameter and the momentum buffer.
// CHECK-LABEL: func.func @sgd
// CHECK-SAME: (%[[P:.*]]: tensor<8xf32>, %[[G:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK: outs(%[[P]], %[[B]] : tensor<8xf32>, tensor<8xf32>)
func.func @sgd(%p: tensor<8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %p1, %b1 = mw.sgd %p, %g, %b {lr = 1.0e-02 : f64, momentum = 9.0e-01 : f64} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  return %p1, %b1 : tensor<8xf32>, tensor<8xf32>
}

// fp16's skip-on-overflow select returns the new value of an argument (the
// result carries the argument's mw.name): it writes into that argument, as
// the updates do, so the parameter needs no second buffer. A select whose
// result is returned under another name keeps the general rule.
// CHECK-LABEL: func.func @keep_on_overflow
// CHECK-SAME: (%[[F:.*]]: tensor<f32>, %[[P:[a-z0-9]+]]: tensor<8xf32> {mw.name = "w"
// CHECK: %[[NEW:.*]] = mw.kernel ins(%[[P]], %{{.*}} : {{.*}}) outs(%{{.*}} : tensor<8xf32>)
// CHECK:   mw.sgd
// CHECK: mw.kernel ins(%[[F]], %[[P]], %[[NEW]] : {{.*}}) outs(%[[P]] : tensor<8xf32>)
// CHECK:   mw.select
// CHECK: mw.kernel ins(%[[F]], %[[P]], %[[NEW]] : {{.*}}) outs(%[[NEW]] : tensor<8xf32>)
// CHECK:   mw.select
func.func @keep_on_overflow(%f: tensor<f32>, %p: tensor<8xf32> {mw.name = "w"}, %g: tensor<8xf32>)
    -> (tensor<8xf32> {mw.name = "w"}, tensor<8xf32> {mw.name = "other"}) {
  %n = mw.sgd %p, %g {lr = 1.0e-02 : f64} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %k = mw.select %f, %p, %n : (tensor<f32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %o = mw.select %f, %p, %n : (tensor<f32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %k, %o : tensor<8xf32>, tensor<8xf32>
}

// cross_entropy_grad writes its result into the logits where they die there
// (a training step's logits: the loss and the gradient are their last
// readers), and into a fresh buffer where they are still needed.
// CHECK-LABEL: func.func @cross_entropy_grad
// CHECK:       %[[Z:.*]] = mw.kernel ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf32>)
// CHECK:         mw.add
// CHECK:       %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK:       %[[G1:.*]] = mw.kernel ins(%[[Z]], %{{.*}}, %{{.*}} : {{.*}}) outs(%[[E]] : tensor<4x8xf32>)
// CHECK-NEXT:  ^bb0
// CHECK-NEXT:    mw.cross_entropy_grad
// CHECK:       %[[G2:.*]] = mw.kernel ins(%[[Z]], %{{.*}}, %{{.*}} : {{.*}}) outs(%[[Z]] : tensor<4x8xf32>)
// CHECK-NEXT:  ^bb0
// CHECK-NEXT:    mw.cross_entropy_grad
func.func @cross_entropy_grad(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %y: tensor<4xi32>, %d: tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %z = mw.add %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %g1 = mw.cross_entropy_grad %z, %y, %d : (tensor<4x8xf32>, tensor<4xi32>, tensor<f32>) -> tensor<4x8xf32>
  %g2 = mw.cross_entropy_grad %z, %y, %d : (tensor<4x8xf32>, tensor<4xi32>, tensor<f32>) -> tensor<4x8xf32>
  return %g1, %g2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// A reshape is a view of its input's buffer: %a does not die at the add
// while its reshape %r is read later (by the matmul), so the add takes a
// fresh destination instead of writing over %a, and --mw-bufferize needs no
// copy of the view (a plan has none). This is the order --mw-sink makes in
// a grad-accum step: a weight-gradient matmul moved past the residual add
// that reuses its input.
// CHECK-LABEL: func.func @reshape_alias_read_later
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<2x2xf32>)
// CHECK: %[[A:.*]] = mw.kernel ins(%[[X]] : tensor<4xf32>)
// CHECK: %[[R:.*]] = mw.reshape %[[A]]
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: mw.kernel ins(%[[A]], %[[Y]] : {{.*}}) outs(%[[E]] : tensor<4xf32>)
// CHECK:   mw.add
// CHECK: mw.kernel ins(%[[R]], %[[W]] : {{.*}})
// CHECK:   mw.matmul
// NOCOPY-LABEL: func.func @reshape_alias_read_later
// NOCOPY-NOT: memref.copy
// NOCOPY: return
func.func @reshape_alias_read_later(%x: tensor<4xf32>, %y: tensor<4xf32>, %w: tensor<2x2xf32>) -> (tensor<4xf32>, tensor<2x2xf32>) {
  %a = mw.exp %x : tensor<4xf32>
  %r = mw.reshape %a : tensor<4xf32> -> tensor<2x2xf32>
  %s = mw.add %a, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %m = mw.matmul %r, %w : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %s, %m : tensor<4xf32>, tensor<2x2xf32>
}
