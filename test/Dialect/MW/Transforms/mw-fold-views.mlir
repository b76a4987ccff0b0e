// --mw-fold-views (the last pass of --mw-bufferize): kernels that only
// transpose, slice or reshape become strided views where a layout expresses
// them, and stay kernels where it does not. Each case computes the same
// outputs before and after (mw-eval; the whole model steps are in
// mw-bufferize-same-outputs.mlir and mw-fuse-same-outputs.mlir).
// RUN: mw-opt %s -split-input-file --mw-fold-views | FileCheck %s
// RUN: mw-opt %s --mw-fold-views -o %t.folded.mlir
// RUN: for f in split_heads merge_heads_matmul transpose_to_matmul written_in_place copying_reshape returned produced_twice not_a_matmul concat_pieces concat_piece_read_twice concat_same_twice; do mw-eval %s --entry $f --random-inputs 3 --print > %t.$f.ref && mw-eval %t.folded.mlir --entry $f --random-inputs 3 --print | diff %t.$f.ref - || exit 1; done

// Consumer side: attention's split of the QKV projection into heads, a
// fused loop kernel of slices, reshapes and transposes, becomes three views
// of the projection (offsets 0, 4 and 8 of each row of 12; rows 12 apart).
// CHECK-LABEL: func.func @split_heads
// CHECK-NOT:   mw.slice
// CHECK:       %[[Q:.*]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [1, 2, 4, 2], strides: [48, 2, 12, 1]
// CHECK:       %[[K:.*]] = memref.reinterpret_cast %arg0 to offset: [4], sizes: [1, 2, 4, 2], strides: [48, 2, 12, 1]
// CHECK:       %[[V:.*]] = memref.reinterpret_cast %arg0 to offset: [8], sizes: [1, 2, 4, 2], strides: [48, 2, 12, 1]
// CHECK:       mw.kernel ins(%[[Q]], %[[K]] : memref<1x2x4x2xf32, strided<[48, 2, 12, 1]>>, memref<1x2x4x2xf32, strided<[48, 2, 12, 1], offset: 4>>)
// CHECK:       mw.kernel ins(%{{.*}}, %[[V]] :
func.func @split_heads(%qkv: memref<1x4x12xf32>) -> memref<1x2x4x2xf32> {
  %q = memref.alloc() : memref<1x2x4x2xf32>
  %k = memref.alloc() : memref<1x2x4x2xf32>
  %v = memref.alloc() : memref<1x2x4x2xf32>
  mw.kernel ins(%qkv : memref<1x4x12xf32>) outs(%q, %k, %v : memref<1x2x4x2xf32>, memref<1x2x4x2xf32>, memref<1x2x4x2xf32>) {
  ^bb0(%x: tensor<1x4x12xf32>):
    %0 = mw.slice %x offsets = [0, 0, 0] sizes = [1, 4, 4] : tensor<1x4x12xf32> -> tensor<1x4x4xf32>
    %1 = mw.reshape %0 : tensor<1x4x4xf32> -> tensor<1x4x2x2xf32>
    %2 = mw.transpose %1 permutation = [0, 2, 1, 3] : tensor<1x4x2x2xf32> -> tensor<1x2x4x2xf32>
    %3 = mw.slice %x offsets = [0, 0, 4] sizes = [1, 4, 4] : tensor<1x4x12xf32> -> tensor<1x4x4xf32>
    %4 = mw.reshape %3 : tensor<1x4x4xf32> -> tensor<1x4x2x2xf32>
    %5 = mw.transpose %4 permutation = [0, 2, 1, 3] : tensor<1x4x2x2xf32> -> tensor<1x2x4x2xf32>
    %6 = mw.slice %x offsets = [0, 0, 8] sizes = [1, 4, 4] : tensor<1x4x12xf32> -> tensor<1x4x4xf32>
    %7 = mw.reshape %6 : tensor<1x4x4xf32> -> tensor<1x4x2x2xf32>
    %8 = mw.transpose %7 permutation = [0, 2, 1, 3] : tensor<1x4x2x2xf32> -> tensor<1x2x4x2xf32>
    mw.yield %2, %5, %8 : tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>
  }
  %s = memref.alloc() : memref<1x2x4x2xf32>
  mw.kernel ins(%q, %k : memref<1x2x4x2xf32>, memref<1x2x4x2xf32>) outs(%s : memref<1x2x4x2xf32>) {
  ^bb0(%a: tensor<1x2x4x2xf32>, %b: tensor<1x2x4x2xf32>):
    %0 = mw.mul %a, %b : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x2xf32>
    mw.yield %0 : tensor<1x2x4x2xf32>
  }
  %r = memref.alloc() : memref<1x2x4x2xf32>
  mw.kernel ins(%s, %v : memref<1x2x4x2xf32>, memref<1x2x4x2xf32>) outs(%r : memref<1x2x4x2xf32>) {
  ^bb0(%a: tensor<1x2x4x2xf32>, %b: tensor<1x2x4x2xf32>):
    %0 = mw.add %a, %b : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x2xf32>
    mw.yield %0 : tensor<1x2x4x2xf32>
  }
  return %r : memref<1x2x4x2xf32>
}

// -----

// Consumer side: the upstream gradient's heads, [B, S, H, D] -> [B, H, S, D],
// read by two matmuls through one view.
// CHECK-LABEL: func.func @merge_heads_matmul
// CHECK-NOT:   mw.transpose
// CHECK:       %[[T:.*]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [1, 2, 4, 2], strides: [16, 2, 4, 1]
// CHECK:       mw.kernel ins(%[[T]], %arg1 :
// CHECK:       mw.kernel ins(%arg1, %[[T]] :
func.func @merge_heads_matmul(%x: memref<1x4x2x2xf32>, %y: memref<1x2x4x2xf32>) -> (memref<1x2x4x4xf32>, memref<1x2x2x2xf32>) {
  %t = memref.alloc() : memref<1x2x4x2xf32>
  mw.kernel ins(%x : memref<1x4x2x2xf32>) outs(%t : memref<1x2x4x2xf32>) {
  ^bb0(%a: tensor<1x4x2x2xf32>):
    %0 = mw.transpose %a permutation = [0, 2, 1, 3] : tensor<1x4x2x2xf32> -> tensor<1x2x4x2xf32>
    mw.yield %0 : tensor<1x2x4x2xf32>
  }
  %p = memref.alloc() : memref<1x2x4x4xf32>
  mw.kernel ins(%t, %y : memref<1x2x4x2xf32>, memref<1x2x4x2xf32>) outs(%p : memref<1x2x4x4xf32>) {
  ^bb0(%a: tensor<1x2x4x2xf32>, %b: tensor<1x2x4x2xf32>):
    %0 = mw.matmul %a, %b {transpose_rhs} : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x4xf32>
    mw.yield %0 : tensor<1x2x4x4xf32>
  }
  %g = memref.alloc() : memref<1x2x2x2xf32>
  mw.kernel ins(%y, %t : memref<1x2x4x2xf32>, memref<1x2x4x2xf32>) outs(%g : memref<1x2x2x2xf32>) {
  ^bb0(%a: tensor<1x2x4x2xf32>, %b: tensor<1x2x4x2xf32>):
    %0 = mw.matmul %a, %b {transpose_lhs} : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x2x2xf32>
    mw.yield %0 : tensor<1x2x2x2xf32>
  }
  return %p, %g : memref<1x2x4x4xf32>, memref<1x2x2x2xf32>
}

// -----

// Producer side: attention's P V back to [B, S, H, D]: the matmul writes the
// transpose's destination through the inverse view, and its own buffer goes.
// CHECK-LABEL: func.func @transpose_to_matmul
// CHECK:       %[[D:.*]] = memref.alloc() : memref<1x4x2x2xf32>
// CHECK-NEXT:  %[[V:.*]] = memref.reinterpret_cast %[[D]] to offset: [0], sizes: [1, 2, 4, 2], strides: [16, 2, 4, 1]
// CHECK-NEXT:  mw.kernel ins(%arg0, %arg1 : {{.*}}) outs(%[[V]] : memref<1x2x4x2xf32, strided<[16, 2, 4, 1]>>)
// CHECK-NOT:   mw.transpose
// CHECK:       memref.collapse_shape %[[D]]
func.func @transpose_to_matmul(%p: memref<1x2x4x4xf32>, %v: memref<1x2x4x2xf32>) -> memref<1x4x4xf32> {
  %o = memref.alloc() : memref<1x2x4x2xf32>
  mw.kernel ins(%p, %v : memref<1x2x4x4xf32>, memref<1x2x4x2xf32>) outs(%o : memref<1x2x4x2xf32>) {
  ^bb0(%a: tensor<1x2x4x4xf32>, %b: tensor<1x2x4x2xf32>):
    %0 = mw.matmul %a, %b : (tensor<1x2x4x4xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x2xf32>
    mw.yield %0 : tensor<1x2x4x2xf32>
  }
  %t = memref.alloc() : memref<1x4x2x2xf32>
  mw.kernel ins(%o : memref<1x2x4x2xf32>) outs(%t : memref<1x4x2x2xf32>) {
  ^bb0(%a: tensor<1x2x4x2xf32>):
    %0 = mw.transpose %a permutation = [0, 2, 1, 3] : tensor<1x2x4x2xf32> -> tensor<1x4x2x2xf32>
    mw.yield %0 : tensor<1x4x2x2xf32>
  }
  %c = memref.collapse_shape %t [[0, 1, 2, 3]] : memref<1x4x2x2xf32> into memref<16xf32>
  %e = memref.expand_shape %c [[0, 1, 2]] output_shape [1, 4, 4] : memref<16xf32> into memref<1x4x4xf32>
  %r = memref.alloc() : memref<1x4x4xf32>
  mw.kernel ins(%e : memref<1x4x4xf32>) outs(%r : memref<1x4x4xf32>) {
  ^bb0(%a: tensor<1x4x4xf32>):
    %0 = mw.neg %a : tensor<1x4x4xf32>
    mw.yield %0 : tensor<1x4x4xf32>
  }
  return %r : memref<1x4x4xf32>
}

// -----

// Negative: the input is overwritten in place before the transpose's last
// reader, which would then read the new values through a view.
// CHECK-LABEL: func.func @written_in_place
// CHECK-NOT:   memref.reinterpret_cast
// CHECK:       mw.transpose
func.func @written_in_place(%x: memref<2x3xf32>) -> (memref<3x2xf32>, memref<2x3xf32>) {
  %e = memref.alloc() : memref<2x3xf32>
  mw.kernel ins(%x : memref<2x3xf32>) outs(%e : memref<2x3xf32>) {
  ^bb0(%a: tensor<2x3xf32>):
    %0 = mw.exp %a : tensor<2x3xf32>
    mw.yield %0 : tensor<2x3xf32>
  }
  %t = memref.alloc() : memref<3x2xf32>
  mw.kernel ins(%e : memref<2x3xf32>) outs(%t : memref<3x2xf32>) {
  ^bb0(%a: tensor<2x3xf32>):
    %0 = mw.transpose %a permutation = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
    mw.yield %0 : tensor<3x2xf32>
  }
  mw.kernel ins(%e : memref<2x3xf32>) outs(%e : memref<2x3xf32>) {
  ^bb0(%a: tensor<2x3xf32>):
    %0 = mw.neg %a : tensor<2x3xf32>
    mw.yield %0 : tensor<2x3xf32>
  }
  %r = memref.alloc() : memref<3x2xf32>
  mw.kernel ins(%t : memref<3x2xf32>) outs(%r : memref<3x2xf32>) {
  ^bb0(%a: tensor<3x2xf32>):
    %0 = mw.tanh %a : tensor<3x2xf32>
    mw.yield %0 : tensor<3x2xf32>
  }
  return %r, %e : memref<3x2xf32>, memref<2x3xf32>
}

// -----

// Negative: a transpose then a reshape that merges the permuted dimensions
// moves elements (no strided layout has them), so the kernel stays.
// CHECK-LABEL: func.func @copying_reshape
// CHECK-NOT:   memref.reinterpret_cast
// CHECK:       mw.transpose
func.func @copying_reshape(%x: memref<2x3xf32>) -> memref<6xf32> {
  %t = memref.alloc() : memref<6xf32>
  mw.kernel ins(%x : memref<2x3xf32>) outs(%t : memref<6xf32>) {
  ^bb0(%a: tensor<2x3xf32>):
    %0 = mw.transpose %a permutation = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
    %1 = mw.reshape %0 : tensor<3x2xf32> -> tensor<6xf32>
    mw.yield %1 : tensor<6xf32>
  }
  %r = memref.alloc() : memref<6xf32>
  mw.kernel ins(%t : memref<6xf32>) outs(%r : memref<6xf32>) {
  ^bb0(%a: tensor<6xf32>):
    %0 = mw.neg %a : tensor<6xf32>
    mw.yield %0 : tensor<6xf32>
  }
  return %r : memref<6xf32>
}

// -----

// Negative: a destination the function returns is a buffer of its own (the
// runtime binds results by buffer), not a view.
// CHECK-LABEL: func.func @returned
// CHECK-NOT:   memref.reinterpret_cast
// CHECK:       mw.transpose
func.func @returned(%x: memref<2x3xf32>) -> memref<3x2xf32> {
  %t = memref.alloc() : memref<3x2xf32>
  mw.kernel ins(%x : memref<2x3xf32>) outs(%t : memref<3x2xf32>) {
  ^bb0(%a: tensor<2x3xf32>):
    %0 = mw.transpose %a permutation = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
    mw.yield %0 : tensor<3x2xf32>
  }
  return %t : memref<3x2xf32>
}

// -----

// Negative (producer side): the matmul's result is also read by another
// kernel, so it must stay in its own layout (and the transpose's result is
// returned, so the consumer side does not apply either).
// CHECK-LABEL: func.func @produced_twice
// CHECK-NOT:   memref.reinterpret_cast
// CHECK:       mw.transpose
func.func @produced_twice(%a: memref<2x2xf32>, %b: memref<2x3xf32>) -> (memref<3x2xf32>, memref<2x3xf32>) {
  %m = memref.alloc() : memref<2x3xf32>
  mw.kernel ins(%a, %b : memref<2x2xf32>, memref<2x3xf32>) outs(%m : memref<2x3xf32>) {
  ^bb0(%x: tensor<2x2xf32>, %y: tensor<2x3xf32>):
    %0 = mw.matmul %x, %y : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    mw.yield %0 : tensor<2x3xf32>
  }
  %t = memref.alloc() : memref<3x2xf32>
  mw.kernel ins(%m : memref<2x3xf32>) outs(%t : memref<3x2xf32>) {
  ^bb0(%x: tensor<2x3xf32>):
    %0 = mw.transpose %x permutation = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
    mw.yield %0 : tensor<3x2xf32>
  }
  %n = memref.alloc() : memref<2x3xf32>
  mw.kernel ins(%m : memref<2x3xf32>) outs(%n : memref<2x3xf32>) {
  ^bb0(%x: tensor<2x3xf32>):
    %0 = mw.neg %x : tensor<2x3xf32>
    mw.yield %0 : tensor<2x3xf32>
  }
  return %t, %n : memref<3x2xf32>, memref<2x3xf32>
}

// -----

// Negative (producer side): only a matmul writes through a transposed view;
// an elementwise producer keeps its layout (the result is returned, as
// above).
// CHECK-LABEL: func.func @not_a_matmul
// CHECK-NOT:   memref.reinterpret_cast
// CHECK:       mw.transpose
func.func @not_a_matmul(%a: memref<2x3xf32>) -> memref<3x2xf32> {
  %m = memref.alloc() : memref<2x3xf32>
  mw.kernel ins(%a : memref<2x3xf32>) outs(%m : memref<2x3xf32>) {
  ^bb0(%x: tensor<2x3xf32>):
    %0 = mw.exp %x : tensor<2x3xf32>
    mw.yield %0 : tensor<2x3xf32>
  }
  %t = memref.alloc() : memref<3x2xf32>
  mw.kernel ins(%m : memref<2x3xf32>) outs(%t : memref<3x2xf32>) {
  ^bb0(%x: tensor<2x3xf32>):
    %0 = mw.transpose %x permutation = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
    mw.yield %0 : tensor<3x2xf32>
  }
  return %t : memref<3x2xf32>
}

// -----

// Concat side: the Q, K and V gradients' products, written back to
// [B, S, H, D] through the producer-side views, then reshaped and
// concatenated into the QKV gradient: each matmul writes its piece of the
// concat's destination directly (rows 12 apart, at columns 0 and 4 of 8 here).
// CHECK-LABEL: func.func @concat_pieces
// CHECK:       %[[C:.*]] = memref.alloc() : memref<1x4x8xf32>
// CHECK-NEXT:  %[[A:.*]] = memref.reinterpret_cast %[[C]] to offset: [0], sizes: [1, 2, 4, 2], strides: [{{[0-9]+}}, 2, 8, 1]
// CHECK-NEXT:  mw.kernel ins(%arg0, %arg1 : {{.*}}) outs(%[[A]] :
// CHECK:       %[[B:.*]] = memref.reinterpret_cast %[[C]] to offset: [4], sizes: [1, 2, 4, 2], strides: [{{[0-9]+}}, 2, 8, 1]
// CHECK-NEXT:  mw.kernel ins(%arg0, %arg2 : {{.*}}) outs(%[[B]] :
// CHECK-NOT:   mw.concat
// CHECK:       mw.kernel ins(%[[C]] : memref<1x4x8xf32>)
func.func @concat_pieces(%p: memref<1x2x4x4xf32>, %v: memref<1x2x4x2xf32>, %w: memref<1x2x4x2xf32>) -> memref<1x4x8xf32> {
  %o = memref.alloc() : memref<1x2x4x2xf32>
  mw.kernel ins(%p, %v : memref<1x2x4x4xf32>, memref<1x2x4x2xf32>) outs(%o : memref<1x2x4x2xf32>) {
  ^bb0(%a: tensor<1x2x4x4xf32>, %b: tensor<1x2x4x2xf32>):
    %0 = mw.matmul %a, %b : (tensor<1x2x4x4xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x2xf32>
    mw.yield %0 : tensor<1x2x4x2xf32>
  }
  %t = memref.alloc() : memref<1x4x2x2xf32>
  mw.kernel ins(%o : memref<1x2x4x2xf32>) outs(%t : memref<1x4x2x2xf32>) {
  ^bb0(%a: tensor<1x2x4x2xf32>):
    %0 = mw.transpose %a permutation = [0, 2, 1, 3] : tensor<1x2x4x2xf32> -> tensor<1x4x2x2xf32>
    mw.yield %0 : tensor<1x4x2x2xf32>
  }
  %o2 = memref.alloc() : memref<1x2x4x2xf32>
  mw.kernel ins(%p, %w : memref<1x2x4x4xf32>, memref<1x2x4x2xf32>) outs(%o2 : memref<1x2x4x2xf32>) {
  ^bb0(%a: tensor<1x2x4x4xf32>, %b: tensor<1x2x4x2xf32>):
    %0 = mw.matmul %a, %b : (tensor<1x2x4x4xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x2xf32>
    mw.yield %0 : tensor<1x2x4x2xf32>
  }
  %t2 = memref.alloc() : memref<1x4x2x2xf32>
  mw.kernel ins(%o2 : memref<1x2x4x2xf32>) outs(%t2 : memref<1x4x2x2xf32>) {
  ^bb0(%a: tensor<1x2x4x2xf32>):
    %0 = mw.transpose %a permutation = [0, 2, 1, 3] : tensor<1x2x4x2xf32> -> tensor<1x4x2x2xf32>
    mw.yield %0 : tensor<1x4x2x2xf32>
  }
  %c1 = memref.collapse_shape %t [[0, 1, 2, 3]] : memref<1x4x2x2xf32> into memref<16xf32>
  %e1 = memref.expand_shape %c1 [[0, 1, 2]] output_shape [1, 4, 4] : memref<16xf32> into memref<1x4x4xf32>
  %c2 = memref.collapse_shape %t2 [[0, 1, 2, 3]] : memref<1x4x2x2xf32> into memref<16xf32>
  %e2 = memref.expand_shape %c2 [[0, 1, 2]] output_shape [1, 4, 4] : memref<16xf32> into memref<1x4x4xf32>
  %cat = memref.alloc() : memref<1x4x8xf32>
  mw.kernel ins(%e1, %e2 : memref<1x4x4xf32>, memref<1x4x4xf32>) outs(%cat : memref<1x4x8xf32>) {
  ^bb0(%a: tensor<1x4x4xf32>, %b: tensor<1x4x4xf32>):
    %0 = mw.concat %a, %b axis = 2 : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x8xf32>
    mw.yield %0 : tensor<1x4x8xf32>
  }
  %r = memref.alloc() : memref<1x4x8xf32>
  mw.kernel ins(%cat : memref<1x4x8xf32>) outs(%r : memref<1x4x8xf32>) {
  ^bb0(%a: tensor<1x4x8xf32>):
    %0 = mw.neg %a : tensor<1x4x8xf32>
    mw.yield %0 : tensor<1x4x8xf32>
  }
  return %r : memref<1x4x8xf32>
}

// -----

// Negative (concat side): a piece is also read by another kernel, so it
// stays a buffer of its own and the concat copies it.
// CHECK-LABEL: func.func @concat_piece_read_twice
// CHECK-NOT:   memref.reinterpret_cast
// CHECK:       mw.concat
func.func @concat_piece_read_twice(%x: memref<2x2xf32>, %y: memref<2x2xf32>) -> (memref<2x4xf32>, memref<2x2xf32>) {
  %a = memref.alloc() : memref<2x2xf32>
  mw.kernel ins(%x : memref<2x2xf32>) outs(%a : memref<2x2xf32>) {
  ^bb0(%s: tensor<2x2xf32>):
    %0 = mw.exp %s : tensor<2x2xf32>
    mw.yield %0 : tensor<2x2xf32>
  }
  %b = memref.alloc() : memref<2x2xf32>
  mw.kernel ins(%y : memref<2x2xf32>) outs(%b : memref<2x2xf32>) {
  ^bb0(%s: tensor<2x2xf32>):
    %0 = mw.tanh %s : tensor<2x2xf32>
    mw.yield %0 : tensor<2x2xf32>
  }
  %n = memref.alloc() : memref<2x2xf32>
  mw.kernel ins(%a : memref<2x2xf32>) outs(%n : memref<2x2xf32>) {
  ^bb0(%s: tensor<2x2xf32>):
    %0 = mw.neg %s : tensor<2x2xf32>
    mw.yield %0 : tensor<2x2xf32>
  }
  %cat = memref.alloc() : memref<2x4xf32>
  mw.kernel ins(%a, %b : memref<2x2xf32>, memref<2x2xf32>) outs(%cat : memref<2x4xf32>) {
  ^bb0(%s: tensor<2x2xf32>, %t: tensor<2x2xf32>):
    %0 = mw.concat %s, %t axis = 1 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x4xf32>
    mw.yield %0 : tensor<2x4xf32>
  }
  return %cat, %n : memref<2x4xf32>, memref<2x2xf32>
}

// -----

// Negative (concat side): the same buffer twice (concat %a, %a) cannot be
// written into two places.
// CHECK-LABEL: func.func @concat_same_twice
// CHECK-NOT:   memref.reinterpret_cast
// CHECK:       mw.concat
func.func @concat_same_twice(%x: memref<2x2xf32>) -> memref<2x4xf32> {
  %a = memref.alloc() : memref<2x2xf32>
  mw.kernel ins(%x : memref<2x2xf32>) outs(%a : memref<2x2xf32>) {
  ^bb0(%s: tensor<2x2xf32>):
    %0 = mw.exp %s : tensor<2x2xf32>
    mw.yield %0 : tensor<2x2xf32>
  }
  %cat = memref.alloc() : memref<2x4xf32>
  mw.kernel ins(%a, %a : memref<2x2xf32>, memref<2x2xf32>) outs(%cat : memref<2x4xf32>) {
  ^bb0(%s: tensor<2x2xf32>, %t: tensor<2x2xf32>):
    %0 = mw.concat %s, %t axis = 1 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x4xf32>
    mw.yield %0 : tensor<2x4xf32>
  }
  return %cat : memref<2x4xf32>
}
