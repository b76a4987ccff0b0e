// RUN: mw-opt %s -split-input-file --mw-one-shot-bufferize | FileCheck %s
// RUN: mw-opt %s -split-input-file --mw-one-shot-bufferize=analysis=upstream | FileCheck %s
// RUN: mw-opt %s -split-input-file --mw-one-shot-bufferize -o %t.linear.mlir
// RUN: mw-opt %s -split-input-file --mw-one-shot-bufferize=analysis=upstream -o %t.upstream.mlir
// RUN: diff %t.linear.mlir %t.upstream.mlir
// RUN: not mw-opt %s -split-input-file --mw-one-shot-bufferize=analysis=bogus 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: mw-one-shot-bufferize: analysis=bogus (expected linear or upstream)
//
// The in-place rule of --mw-one-shot-bufferize (linear: one bottom-up pass)
// decides as One-Shot Analysis (analysis=upstream) does: the same CHECK
// lines hold for both and the two outputs are identical. A kernel writes
// into its destination's buffer iff nothing uses that value or a view of it
// afterwards and the kernel reads it only as itself, elementwise; otherwise
// the destination gets a fresh buffer (no copy: destinations are not read).

// CHECK-LABEL: func.func @decisions
// The add's destination is a tensor.empty: a buffer of its own, A.
// CHECK: %[[A:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK: mw.kernel ins(%arg0, %arg1 : {{.*}}) outs(%[[A]] : memref<4xf32>)
// exp would write over %a, which the mul still reads: a fresh buffer B.
// CHECK: %[[B:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK: mw.kernel ins(%[[A]] : memref<4xf32>) outs(%[[B]] : memref<4xf32>)
// CHECK:   mw.exp
// %a dies at the mul, which reads it at the output's index: in place.
// CHECK: mw.kernel ins(%[[B]], %[[A]] : {{.*}}) outs(%[[A]] : memref<4xf32>)
// CHECK:   mw.mul
// The reshape is a view of A. The transpose reads its destination at other
// indices (not elementwise): a fresh buffer T.
// CHECK: %[[V:.*]] = memref.expand_shape %[[A]]
// CHECK: %[[T:.*]] = memref.alloc() {{.*}} : memref<2x2xf32>
// CHECK: mw.kernel ins(%[[V]] : memref<2x2xf32>) outs(%[[T]] : memref<2x2xf32>)
// CHECK:   mw.transpose
// The view's last read was the transpose: exp writes %c's buffer (A) in place.
// CHECK: mw.kernel ins(%[[A]] : memref<4xf32>) outs(%[[A]] : memref<4xf32>)
// CHECK:   mw.exp
// %t is returned, so neg may not overwrite it: a fresh buffer W.
// CHECK: %[[W:.*]] = memref.alloc() {{.*}} : memref<2x2xf32>
// CHECK: mw.kernel ins(%[[T]] : memref<2x2xf32>) outs(%[[W]] : memref<2x2xf32>)
// CHECK:   mw.neg
// CHECK: return %[[B]], %[[A]], %[[T]], %[[W]]
func.func @decisions(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %a = mw.kernel ins(%x, %y : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%p: tensor<4xf32>, %q: tensor<4xf32>):
    %s = mw.add %p, %q : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    mw.yield %s : tensor<4xf32>
  }
  %b = mw.kernel ins(%a : tensor<4xf32>) outs(%a : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%p: tensor<4xf32>):
    %s = mw.exp %p : tensor<4xf32>
    mw.yield %s : tensor<4xf32>
  }
  %c = mw.kernel ins(%b, %a : tensor<4xf32>, tensor<4xf32>) outs(%a : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%p: tensor<4xf32>, %q: tensor<4xf32>):
    %s = mw.mul %p, %q : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    mw.yield %s : tensor<4xf32>
  }
  %v = mw.reshape %c : tensor<4xf32> -> tensor<2x2xf32>
  %t = mw.kernel ins(%v : tensor<2x2xf32>) outs(%v : tensor<2x2xf32>) -> tensor<2x2xf32> {
  ^bb0(%p: tensor<2x2xf32>):
    %s = mw.transpose %p permutation = [1, 0] : tensor<2x2xf32> -> tensor<2x2xf32>
    mw.yield %s : tensor<2x2xf32>
  }
  %d = mw.kernel ins(%c : tensor<4xf32>) outs(%c : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%p: tensor<4xf32>):
    %s = mw.exp %p : tensor<4xf32>
    mw.yield %s : tensor<4xf32>
  }
  %w = mw.kernel ins(%t : tensor<2x2xf32>) outs(%t : tensor<2x2xf32>) -> tensor<2x2xf32> {
  ^bb0(%p: tensor<2x2xf32>):
    %s = mw.neg %p : tensor<2x2xf32>
    mw.yield %s : tensor<2x2xf32>
  }
  return %b, %d, %t, %w : tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// Not kernel form (a tensor.extract_slice at the top level): One-Shot
// Analysis decides, and writes the slice of the argument in place.
// CHECK-LABEL: func.func @not_kernel_form
// CHECK: %[[S:.*]] = memref.subview %arg0[0] [4] [1]
// CHECK: mw.kernel ins(%[[S]] : {{.*}}) outs(%[[S]] : {{.*}})
func.func @not_kernel_form(%x: tensor<8xf32>) -> tensor<4xf32> {
  %s = tensor.extract_slice %x[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %k = mw.kernel ins(%s : tensor<4xf32>) outs(%s : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%p: tensor<4xf32>):
    %r = mw.exp %p : tensor<4xf32>
    mw.yield %r : tensor<4xf32>
  }
  return %k : tensor<4xf32>
}

// -----

// A read-only argument is not kernel form either; One-Shot Analysis gives
// the write a buffer of its own.
// CHECK-LABEL: func.func @read_only_argument
// CHECK: %[[R:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK: mw.kernel ins(%arg0 : memref<4xf32>) outs(%[[R]] : memref<4xf32>)
func.func @read_only_argument(%x: tensor<4xf32> {bufferization.writable = false}) -> tensor<4xf32> {
  %k = mw.kernel ins(%x : tensor<4xf32>) outs(%x : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%p: tensor<4xf32>):
    %r = mw.exp %p : tensor<4xf32>
    mw.yield %r : tensor<4xf32>
  }
  return %k : tensor<4xf32>
}
