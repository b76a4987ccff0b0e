// --mw-hoist-updates moves each optimizer update up to right after the last
// of its operands' definitions and the other reads of the buffers it
// overwrites (the parameter and states), with the ops that only feed it.
// RUN: mw-opt %s -split-input-file --mw-hoist-updates | FileCheck %s
// RUN: mw-opt %s -split-input-file --mw-hoist-updates=report -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: mw-opt %s -split-input-file --mw-hoist-updates=group=parameter | FileCheck %s --check-prefix=PARAM
// RUN: not mw-opt %s -split-input-file --mw-hoist-updates=group=layer -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADGROUP
// BADGROUP: error: mw-hoist-updates: group=layer (expected block or parameter)
// Bufferized IR (ops with memory effects) is left alone.
// RUN: mw-opt %s -split-input-file --mw-bufferize --mw-hoist-updates=report -o /dev/null | FileCheck %s --check-prefix=BUF --allow-empty
// BUF-NOT: mw-hoist-updates
//
// Only the order changes: mw-eval gives the same outputs, bit for bit, on
// gpt2-tiny's step (every update moves but wte's), on its fp16 step (none
// moves: each select reads the old parameter after its update) and on its
// ZeRO stage-0 step on two ranks (overlap off: the updates follow the
// all-reduces).
// RUN: mw-models gpt --preset gpt2-tiny --train -o %t.mlir
// RUN: mw-opt %t.mlir --mw-hoist-updates=report -o %t.h.mlir | FileCheck %s --check-prefix=GPT
// RUN: mw-eval %t.mlir --entry train_step --random-inputs 3 --save-inputs %t.in --print > %t.ref
// RUN: mw-eval %t.h.mlir --entry train_step --inputs %t.in --print | diff %t.ref -
// RUN: mw-models gpt --preset gpt2-tiny --train --precision fp16 -o %t.fp16.mlir
// RUN: mw-opt %t.fp16.mlir --mw-hoist-updates=report -o %t.fp16.h.mlir | FileCheck %s --check-prefix=FP16 --allow-empty
// RUN: mw-opt %t.fp16.mlir -o %t.fp16.0.mlir
// RUN: cmp %t.fp16.0.mlir %t.fp16.h.mlir
// RUN: mw-opt %t.mlir --mw-zero="stage=0 ranks=2 reduce-bucket=20000" -o %t.z.mlir
// RUN: mw-opt %t.z.mlir --mw-hoist-updates=report -o %t.z.h.mlir | FileCheck %s --check-prefix=ZERO0
// RUN: mw-eval %t.z.mlir --entry train_step --ranks 2 --random-inputs 3 --print > %t.z.ref
// RUN: mw-eval %t.z.h.mlir --entry train_step --ranks 2 --random-inputs 3 --print | diff %t.z.ref -
// ZeRO stages 1 and 2 update shards in transient buffers (an all-slice of
// the parameters), and with overlap=on every update waits for its mw.wait,
// which stays where --mw-zero put it: nothing moves.
// RUN: mw-opt %t.mlir --mw-zero="stage=2 ranks=2 reduce-bucket=20000" --mw-hoist-updates=report -o /dev/null | FileCheck %s --check-prefix=NONE --allow-empty
// RUN: mw-opt %t.mlir --mw-zero="stage=0 ranks=2 reduce-bucket=20000 overlap=on" --mw-hoist-updates=report -o /dev/null | FileCheck %s --check-prefix=NONE --allow-empty
// GPT: mw-hoist-updates @train_step: 27 of 28 updates moved earlier, live tensor peak 774916 -> 774412 bytes
// FP16-NOT: mw-hoist-updates
// ZERO0: mw-hoist-updates @train_step: 27 of 28 updates moved earlier
// NONE-NOT: mw-hoist-updates

// group=block (the default): the updates of block 0 ("h.0.") share one
// point, after the last of their own (the bias's gradient %db), so
// --mw-fuse makes one horizontal kernel of them; the update outside blocks
// ("ln_f.w", whose gradient is an argument) keeps its own point, first. With group=parameter
// the weight's update runs as soon as %dw and its last read exist.
// CHECK-LABEL: func.func @block_point
// CHECK-NEXT:  mw.sgd %arg2
// CHECK-NEXT:  %[[DW:.*]] = mw.matmul
// CHECK-NEXT:  mw.tanh
// CHECK-NEXT:  mw.exp
// CHECK-NEXT:  %[[DB:.*]] = mw.reduce_sum
// CHECK-NEXT:  mw.sgd %arg0, %[[DW]]
// CHECK-NEXT:  mw.sgd %arg1, %[[DB]]
// PARAM-LABEL: func.func @block_point
// PARAM-NEXT:  mw.sgd %arg2
// PARAM-NEXT:  %[[DW:.*]] = mw.matmul
// PARAM-NEXT:  mw.sgd %arg0, %[[DW]]
// PARAM-NEXT:  mw.tanh
func.func @block_point(%w: tensor<64x64xf32> {mw.name = "h.0.mlp.w"}, %b: tensor<64xf32> {mw.name = "h.0.mlp.b"},
                       %g: tensor<64xf32> {mw.name = "ln_f.w"}, %x: tensor<64x64xf32>, %dy: tensor<64x64xf32>, %dg: tensor<64xf32>)
    -> (tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
  %dw = mw.matmul %x, %dy {transpose_lhs} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %a = mw.tanh %dy : tensor<64x64xf32>
  %e = mw.exp %a : tensor<64x64xf32>
  %db = mw.reduce_sum %e axes = [0] : tensor<64x64xf32> -> tensor<64xf32>
  %w1 = mw.sgd %w, %dw {lr = 1.0e-02 : f64} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %b1 = mw.sgd %b, %db {lr = 1.0e-02 : f64} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %g1 = mw.sgd %g, %dg {lr = 1.0e-02 : f64} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %w1, %b1, %g1, %e : tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
}

// -----

// The weight's gradient %dw is final at once; the update waits only for the
// last read of %w (the input gradient %dx) and moves above the rest of the
// backward pass (a matmul that needs two buffers of its own). Its step
// counter's increment comes with it.
// CHECK-LABEL: func.func @moved
// CHECK:       %[[DW:.*]] = mw.matmul %{{.*}}, %{{.*}} {transpose_lhs}
// CHECK-NEXT:  %[[DX:.*]] = mw.matmul %{{.*}}, %arg1 {transpose_rhs}
// CHECK-NEXT:  mw.splat
// CHECK-NEXT:  %[[T:.*]] = mw.add %arg4
// CHECK-NEXT:  mw.adamw %arg1, %[[DW]], %arg2, %arg3, %[[T]]
// CHECK-NEXT:  mw.tanh %[[DX]]
// CHECK-NEXT:  mw.matmul
// CHECK-NEXT:  return
// REPORT: mw-hoist-updates @moved: 1 of 1 updates moved earlier, live tensor peak 49152 -> 32784 bytes
func.func @moved(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>, %m: tensor<64x64xf32>, %v: tensor<64x64xf32>, %step: tensor<i64>, %dy: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<i64>) {
  %dw = mw.matmul %x, %dy {transpose_lhs} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %dx = mw.matmul %dy, %w {transpose_rhs} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %a = mw.tanh %dx : tensor<64x64xf32>
  %b = mw.matmul %a, %a : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %one = mw.splat 1.0 : tensor<i64>
  %t = mw.add %step, %one : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %w1, %m1, %v1 = mw.adamw %w, %dw, %m, %v, %t : (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<i64>) -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>)
  return %b, %w1, %m1, %v1, %t : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<i64>
}

// -----

// A later read of the parameter (a recompute clone reading %w through a
// view) holds the update until it is done: an update before it would
// overwrite what it reads, and One-Shot Bufferize would copy %w. The update
// moves above the exp only.
// CHECK-LABEL: func.func @later_read
// CHECK:       mw.matmul
// CHECK-NEXT:  mw.tanh
// CHECK-NEXT:  mw.reshape %arg1
// CHECK-NEXT:  mw.neg
// CHECK-NEXT:  mw.sgd %arg1
// CHECK-NEXT:  mw.exp
// REPORT: mw-hoist-updates @later_read: 1 of 1 updates moved earlier
func.func @later_read(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>, %dy: tensor<64x64xf32>) -> (tensor<4096xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {
  %dw = mw.matmul %x, %dy {transpose_lhs} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %a = mw.tanh %dy : tensor<64x64xf32>
  %flat = mw.reshape %w : tensor<64x64xf32> -> tensor<4096xf32>
  %r = mw.neg %flat {mw.recompute} : tensor<4096xf32>
  %b = mw.exp %a : tensor<64x64xf32>
  %w1 = mw.sgd %w, %dw {lr = 1.0e-02 : f64} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r, %b, %w1 : tensor<4096xf32>, tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// Gradient clipping: both updates read the scale computed from the norm of
// every gradient, so neither can run before the last gradient (%dw1) and
// the norm exist; dataflow alone keeps them there. The scaled gradients
// (pointwise, feeding one update each) come with their updates.
// CHECK-LABEL: func.func @clipping
// CHECK:       mw.matmul
// CHECK-NEXT:  mw.tanh
// CHECK-NEXT:  mw.matmul
// CHECK:       %[[S:.*]] = mw.rsqrt
// CHECK-NEXT:  mw.mul %{{.*}}, %[[S]]
// CHECK-NEXT:  mw.mul %{{.*}}, %[[S]]
// CHECK-NEXT:  mw.sgd %arg2
// CHECK-NEXT:  mw.sgd %arg3
// CHECK-NEXT:  mw.exp
// REPORT: mw-hoist-updates @clipping: 2 of 2 updates moved earlier
func.func @clipping(%x: tensor<64x64xf32>, %dy: tensor<64x64xf32>, %w0: tensor<64x64xf32>, %w1: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {
  %dw0 = mw.matmul %x, %dy {transpose_lhs} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %a = mw.tanh %dy : tensor<64x64xf32>
  %dw1 = mw.matmul %a, %dy {transpose_lhs} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %sq0 = mw.mul %dw0, %dw0 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %n0 = mw.reduce_sum %sq0 axes = [0, 1] : tensor<64x64xf32> -> tensor<f32>
  %sq1 = mw.mul %dw1, %dw1 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %n1 = mw.reduce_sum %sq1 axes = [0, 1] : tensor<64x64xf32> -> tensor<f32>
  %n = mw.add %n0, %n1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %scale = mw.rsqrt %n : tensor<f32>
  %b = mw.exp %a : tensor<64x64xf32>
  %g0 = mw.mul %dw0, %scale : (tensor<64x64xf32>, tensor<f32>) -> tensor<64x64xf32>
  %g1 = mw.mul %dw1, %scale : (tensor<64x64xf32>, tensor<f32>) -> tensor<64x64xf32>
  %u0 = mw.sgd %w0, %g0 {lr = 1.0e-02 : f64} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %u1 = mw.sgd %w1, %g1 {lr = 1.0e-02 : f64} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %b, %u0, %u1 : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// fp16's skip-on-overflow: the select reads the old parameter after the
// update (which therefore is not in place), so the update stays where it
// is, after found_inf, whatever it could otherwise skip.
// CHECK-LABEL: func.func @found_inf
// CHECK:       mw.found_inf
// CHECK-NEXT:  mw.exp
// CHECK-NEXT:  mw.sgd %arg1
// CHECK-NEXT:  mw.select
// REPORT-NOT: @found_inf
func.func @found_inf(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>, %dy: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %dw = mw.matmul %x, %dy {transpose_lhs} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %inf = mw.found_inf %dw : (tensor<64x64xf32>) -> tensor<f32>
  %b = mw.exp %x : tensor<64x64xf32>
  %w1 = mw.sgd %w, %dw {lr = 1.0e-02 : f64} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %kept = mw.select %inf, %w, %w1 : (tensor<f32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %b, %kept : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// A ZeRO stage-2 update: it writes this rank's shard of the parameters into
// the all-slice's transient buffer, which moving it up would keep alive
// longer; it stays where it is, and so do the reduce-scatter and its wait.
// CHECK-LABEL: func.func @zero_shard
// CHECK:       mesh.reduce_scatter
// CHECK-NEXT:  mw.exp
// CHECK-NEXT:  mw.wait
// CHECK-NEXT:  mesh.all_slice
// CHECK-NEXT:  mw.sgd
// REPORT-NOT: @zero_shard
mesh.mesh @dp(shape = 2)
func.func @zero_shard(%x: tensor<64x64xf32>, %w: tensor<64xf32>, %dy: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<32xf32>) {
  %dw = mw.reduce_sum %dy axes = [0] : tensor<64x64xf32> -> tensor<64xf32>
  %rs = mesh.reduce_scatter %dw on @dp mesh_axes = [0] scatter_axis = 0 : tensor<64xf32> -> tensor<32xf32>
  %b = mw.exp %x : tensor<64x64xf32>
  %g = mw.wait %rs reading %dw : tensor<32xf32>, tensor<64xf32>
  %p = mesh.all_slice %w on @dp mesh_axes = [0] slice_axis = 0 : tensor<64xf32> -> tensor<32xf32>
  %p1 = mw.sgd %p, %g {lr = 1.0e-02 : f64} : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
  return %b, %p1 : tensor<64x64xf32>, tensor<32xf32>
}
