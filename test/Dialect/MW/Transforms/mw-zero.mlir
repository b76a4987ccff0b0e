// --mw-zero on a hand-written linear classifier (w: 3x2, b: 2; a batch of 4
// rows) after --mw-autodiff, over 2 ranks. Each rank runs the same program on
// its 2 rows; gradients are summed across the ranks and halved.
// RUN: mw-opt %s --mw-autodiff --mw-zero="stage=0 ranks=2" | FileCheck %s --check-prefix=S0
// RUN: mw-opt %s --mw-autodiff --mw-zero="stage=1 ranks=2" | FileCheck %s --check-prefix=S1
// RUN: mw-opt %s --mw-autodiff --mw-zero="stage=2 ranks=2 overlap=on" | FileCheck %s --check-prefix=S2
// RUN: mw-opt %s --mw-autodiff --mw-zero="stage=3 ranks=2 persistence-threshold=0 overlap=on" | FileCheck %s --check-prefix=S3
// RUN: mw-opt %s --mw-autodiff --mw-zero="stage=3 ranks=2" | FileCheck %s --check-prefix=S3-SMALL
// RUN: mw-opt %s --mw-autodiff --mw-zero="stage=2 ranks=2" | mw-opt | FileCheck %s --check-prefix=S1
// Output is deterministic: the same input gives the same IR, byte for byte.
// RUN: mw-opt %s --mw-autodiff --mw-zero="stage=3 ranks=2 persistence-threshold=0" > %t.a
// RUN: mw-opt %s --mw-autodiff --mw-zero="stage=3 ranks=2 persistence-threshold=0" > %t.b
// RUN: cmp %t.a %t.b

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

// The mesh is made once; the batch arguments hold the rank's 2 rows.
// S0: mesh.mesh @dp(shape = 2)
// S0-LABEL: func.func @train_step
// S0-SAME: tensor<2x3xf32> {mw.name = "x"
// S0-SAME: tensor<2xi32> {mw.name = "y"
// Stage 0: every rank holds w, b and their AdamW state whole (16 floats);
// b's and w's gradients (in the order backward makes them) go out as one
// 8-float bucket, all-reduced, halved, and unpacked for the usual updates.
// S0: %[[DB:.*]] = mw.reduce_sum
// S0: %[[DW:.*]] = mw.matmul {{.*}}transpose_lhs
// S0: %[[FW:.*]] = mw.reshape %[[DW]] : tensor<3x2xf32> -> tensor<6xf32>
// S0: %[[BUCKET:.*]] = mw.concat %[[DB]], %[[FW]] axis = 0 : (tensor<2xf32>, tensor<6xf32>) -> tensor<8xf32>
// S0: %[[SUM:.*]] = mesh.all_reduce %[[BUCKET]] on @dp mesh_axes = [0] : tensor<8xf32> -> tensor<8xf32>
// S0: %[[HALF:.*]] = mw.splat 5.000000e-01 : tensor<8xf32>
// S0: %[[MEAN:.*]] = mw.mul %[[SUM]], %[[HALF]]
// S0: mw.slice %[[MEAN]] offsets = [0] sizes = [2]
// S0: mw.slice %[[MEAN]] offsets = [2] sizes = [6]
// S0-COUNT-2: mw.adamw
// The loss is the mean of the ranks' means.
// S0: %[[L:.*]] = mesh.all_reduce %{{.*}} on @dp mesh_axes = [0] : tensor<f32> -> tensor<f32>
// S0: %[[LM:.*]] = mw.mul %[[L]]
// S0: return %[[LM]]

// Stage 1: the 8-float bucket is reduce-scattered after the backward pass:
// rank r receives floats [4r, 4r+4) of the sum, updates that piece of the
// parameters with its own 4-float exp_avg and exp_avg_sq (b's 2 floats and
// w's first 2 on rank 0, w's last 4 on rank 1), and the pieces are
// all-gathered back into w and b.
// S1-LABEL: func.func @train_step
// S1-SAME: %[[M:arg[0-9]+]]: tensor<4xf32> {mw.name = "zero.bucket0.exp_avg", mw.role = #mw.role<optimizer_state>, mw.shard = {members = ["b", "w"], ranks = 2 : i64, shapes = [array<i64: 2>, array<i64: 3, 2>], sizes = array<i64: 2, 6>, sources = ["b.exp_avg", "w.exp_avg"]}}
// S1-SAME: %[[V:arg[0-9]+]]: tensor<4xf32> {mw.name = "zero.bucket0.exp_avg_sq"
// S1-NOT: mw.name = "w.exp_avg"
// S1: %[[RS:.*]] = mesh.reduce_scatter %{{.*}} on @dp mesh_axes = [0] scatter_axis = 0 : tensor<8xf32> -> tensor<4xf32>
// S1: %[[G:.*]] = mw.mul %[[RS]]
// S1: %[[P:.*]] = mesh.all_slice %{{.*}} on @dp mesh_axes = [0] slice_axis = 0 : tensor<8xf32> -> tensor<4xf32>
// S1: %[[NP:.*]], %{{.*}}, %{{.*}} = mw.adamw %[[P]], %[[G]], %[[M]], %[[V]]
// S1: %[[ALL:.*]] = mesh.all_gather %[[NP]] on @dp mesh_axes = [0] gather_axis = 0 : tensor<4xf32> -> tensor<8xf32>
// S1-NOT: mw.adamw
// S1: return
// S1-SAME: tensor<3x2xf32>, tensor<2xf32>, tensor<i64>, tensor<4xf32>, tensor<4xf32>

// Stage 2 with overlap: the reduce-scatter starts as soon as the bucket's
// last gradient exists and is waited for where the update needs it; the
// all-gather of the updated pieces is waited for at the return.
// S2-LABEL: func.func @train_step
// Each wait also reads the collective's operand (`reading`), which the
// engine sends until then, so its memory stays untouched.
// S2: %[[RS:.*]] = mesh.reduce_scatter %[[BK:[^ ]+]]
// S2-NEXT: mw.splat 1.000000e+00 : tensor<i64>
// S2: %[[W:.*]] = mw.wait %[[RS]] reading %[[BK]] : tensor<4xf32>, tensor<8xf32>
// S2: %[[NP:.*]], %{{.*}}, %{{.*}} = mw.adamw
// S2: %[[AG:.*]] = mesh.all_gather %[[NP]]
// S2: mw.wait %[[AG]] reading %[[NP]] : tensor<8xf32>, tensor<4xf32>
// S2: return

// Stage 3: the parameters themselves persist as the rank's 4-float piece;
// the forward pass gathers them (waited for right before the first use),
// and the update writes the piece back. Nothing gathers them for the
// backward pass, which needs only the activations here.
// S3-LABEL: func.func @train_step
// S3-SAME: %[[PP:arg[0-9]+]]: tensor<4xf32> {mw.name = "zero.bucket0.param", mw.role = #mw.role<param>
// S3-NOT: mw.name = "w"
// S3: %[[AG:.*]] = mesh.all_gather %[[PP]] on @dp mesh_axes = [0] gather_axis = 0 : tensor<4xf32> -> tensor<8xf32>
// S3-NEXT: %[[FULL:.*]] = mw.wait %[[AG]]
// S3: mw.matmul
// S3: mesh.reduce_scatter
// S3-NOT: mesh.all_gather
// S3: %[[NP:.*]], %{{.*}}, %{{.*}} = mw.adamw %[[PP]]
// S3: return {{.*}}, %[[NP]],

// With DeepSpeed's default persistence threshold (100000 elements), these
// tiny parameters stay whole on every rank, as in stage 0.
// S3-SMALL-LABEL: func.func @train_step
// S3-SMALL-NOT: mesh.all_gather
// S3-SMALL: mesh.all_reduce
// S3-SMALL-COUNT-2: mw.adamw
