// A ZeRO step through --mw-bufferize and --mw-static-arena like any step: the
// linear classifier of mw-zero.mlir at stage 3 on 2 ranks with overlap. Each
// collective becomes an mw.kernel writing a buffer of its own (its result
// never aliases its input), and mw.wait is in place in that buffer, so the
// buffer is live (in flight) from the collective through the wait to its
// last use, and the arena holds it there.
// RUN: mw-opt %s --mw-autodiff --mw-zero="stage=3 ranks=2 persistence-threshold=0 overlap=on" --mw-bufferize | FileCheck %s --check-prefix=BUF
// RUN: mw-opt %s --mw-autodiff --mw-zero="stage=3 ranks=2 persistence-threshold=0 overlap=on" --mw-bufferize --mw-test-print-buffer-liveness -o /dev/null 2>&1 | FileCheck %s --check-prefix=LIVE
// RUN: mw-opt %s --mw-autodiff --mw-zero="stage=3 ranks=2 persistence-threshold=0 overlap=on" --mw-train-pipeline 2>/dev/null | FileCheck %s --check-prefix=ARENA
// Without overlap there is no wait: a collective's buffer lives from the
// collective to its last use.
// RUN: mw-opt %s --mw-autodiff --mw-zero="stage=2 ranks=2" --mw-train-pipeline 2>/dev/null | FileCheck %s --check-prefix=NOWAIT

func.func @forward(%w: tensor<3x2xf32> {mw.role = #mw.role<param>, mw.name = "w"},
                   %b: tensor<2xf32> {mw.role = #mw.role<param>, mw.name = "b"},
                   %x: tensor<4x3xf32> {mw.role = #mw.role<input>, mw.name = "x"},
                   %y: tensor<4xi32> {mw.role = #mw.role<label>, mw.name = "y"})
    -> (tensor<f32> {mw.role = #mw.role<output>, mw.name = "loss"}) {
  %h = mw.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %z = mw.add %h, %b : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %l = mw.cross_entropy %z, %y : (tensor<4x2xf32>, tensor<4xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// The gather of the parameter piece %arg3 writes a new 8-float buffer; the
// wait reads and writes that same buffer, and reads the piece the engine
// sends until then; the forward pass reads the gathered buffer.
// BUF-LABEL: func.func @train_step
// BUF:      %[[G:.*]] = memref.alloc() {{.*}} : memref<8xf32>
// BUF-NEXT: mw.kernel ins(%arg3 : memref<4xf32>) outs(%[[G]] : memref<8xf32>)
// BUF:        mesh.all_gather %{{.*}} on @dp mesh_axes = [0] gather_axis = 0 : tensor<4xf32> -> tensor<8xf32>
// BUF:      mw.kernel ins(%[[G]], %arg3 : memref<8xf32>, memref<4xf32>) outs(%[[G]] : memref<8xf32>)
// BUF-NEXT: ^bb0
// BUF-NEXT:   mw.wait
// BUF:      mw.kernel ins(%[[G]] : memref<8xf32>)
// BUF-NEXT: ^bb0
// BUF-NEXT:   mw.slice
// The bias and weight gradients write their pieces of the 8-float gradient
// bucket through views (--mw-fold-views: no concat copies them); the
// reduce-scatter of the bucket into a 4-float piece is waited for in place
// before the update reads it.
// BUF:      %[[B:.*]] = memref.alloc() {{.*}} : memref<8xf32>
// BUF-NEXT: %[[BB:.*]] = memref.reinterpret_cast %[[B]] to offset: [0], sizes: [2], strides: [1]
// BUF-NEXT: mw.kernel ins(%{{.*}} : memref<2x2xf32>) outs(%[[BB]] : memref<2xf32>)
// BUF:      %[[BW:.*]] = memref.reinterpret_cast %[[B]] to offset: [2], sizes: [3, 2], strides: [2, 1]
// BUF-NEXT: mw.kernel ins(%arg1, %{{.*}} : memref<2x3xf32>, memref<2x2xf32>) outs(%[[BW]] :
// BUF-NOT:  mw.concat
// BUF:      %[[RS:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// BUF-NEXT: mw.kernel ins(%[[B]] : memref<8xf32>) outs(%[[RS]] : memref<4xf32>)
// BUF:        mesh.reduce_scatter
// BUF:      mw.kernel ins(%[[RS]], %[[B]] : memref<4xf32>, memref<8xf32>) outs(%[[RS]] : memref<4xf32>)
// BUF-NEXT: ^bb0
// BUF-NEXT:   mw.wait
// BUF:      mw.kernel ins(%arg3, %[[RS]], %arg4, %arg5, %{{.*}} : {{.*}}) outs(%arg3, %arg4, %arg5 :
// BUF-NEXT: ^bb0
// BUF-NEXT:   mw.adamw
// The loss's all-reduce (no wait: nothing overlaps it) into its own buffer.
// BUF:      %[[L:.*]] = memref.alloc() {{.*}} : memref<f32>
// BUF-NEXT: mw.kernel ins(%{{.*}} : memref<f32>) outs(%[[L]] : memref<f32>)
// BUF:        mesh.all_reduce

// Positions are the top-level ops of @train_step: the gathered parameters
// (the first buffer) are allocated at 0, gathered at 1 and waited for at 2;
// the weight's slice at 5 copies, the bias's is a view (--mw-fold-views) that
// the bias add at 9 reads; the logits (16 bytes a rank) are allocated at 7
// and hold their gradient too (mw.cross_entropy_grad at 14 writes in place)
// until the weight gradient reads it at 19; the reduce-scatter's piece (16
// bytes) is allocated at 20.
// LIVE-LABEL: buffer liveness of @train_step: 36 ops
// LIVE-NEXT:    {{[a-z_0-9]+}}: 32 B, [0, 10)
// LIVE:         {{[a-z_0-9]+}}: 16 B, [7, 20)
// LIVE:         {{[a-z_0-9]+}}: 16 B, [20, 30)

// The arena (768 B, 256-byte alignment): the gathered parameters at +0
// from the gather to the bias add (which reads the bias through a view), the
// bucket at +512 (its pieces written through views) and the piece at +256
// from the reduce-scatter through its wait to the update.
// ARENA-LABEL: func.func @train_step
// ARENA-SAME:    mw.arena_size = 768 : i64
// ARENA:         %[[C0:.*]] = arith.constant 0 : index
// ARENA:         %[[C256:.*]] = arith.constant 256 : index
// ARENA:         %[[C512:.*]] = arith.constant 512 : index
// ARENA:         %[[G:.*]] = memref.view %{{.*}}[%[[C0]]][] {{.*}} to memref<8xf32>
// ARENA-NEXT:    mw.kernel ins(%arg3 : memref<4xf32>) outs(%[[G]] : memref<8xf32>)
// ARENA:         mw.kernel ins(%[[G]], %arg3 : memref<8xf32>, memref<4xf32>) outs(%[[G]] : memref<8xf32>)
// ARENA:         %[[B:.*]] = memref.view %{{.*}}[%[[C512]]][] {{.*}} to memref<8xf32>
// ARENA:         %[[RS:.*]] = memref.view %{{.*}}[%[[C256]]][] {{.*}} to memref<4xf32>
// ARENA-NEXT:    mw.kernel ins(%[[B]] : memref<8xf32>) outs(%[[RS]] : memref<4xf32>)
// ARENA:         mw.kernel ins(%[[RS]], %[[B]] : memref<4xf32>, memref<8xf32>) outs(%[[RS]] : memref<4xf32>)
// ARENA-NEXT:    ^bb0
// ARENA-NEXT:      mw.wait

// NOWAIT-LABEL: func.func @train_step
// NOWAIT-NOT:     mw.wait
// NOWAIT:         mesh.reduce_scatter
// NOWAIT-NOT:     mw.wait
// NOWAIT:         mesh.all_gather
// NOWAIT-NOT:     mw.wait
// NOWAIT:         return
