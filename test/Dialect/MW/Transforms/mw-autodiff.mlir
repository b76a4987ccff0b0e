// RUN: mw-opt %s -split-input-file --mw-autodiff="optimizer=sgd lr=1" | FileCheck %s --check-prefix=SGD
// RUN: mw-opt %s -split-input-file --mw-autodiff | FileCheck %s --check-prefix=ADAM
// RUN: mw-opt %s -split-input-file --mw-autodiff="grad-accum=2" | FileCheck %s --check-prefix=ACCUM
// RUN: mw-opt %s -split-input-file --mw-autodiff="optimizer=sgd lr=0.1 momentum=0.9 nesterov=true" | FileCheck %s --check-prefix=MOM
// The step verifies and round-trips.
// RUN: mw-opt %s -split-input-file --mw-autodiff | mw-opt -split-input-file | FileCheck %s --check-prefix=ADAM

// A linear classifier: the step keeps the forward function, takes params,
// then optimizer state, then data; returns the loss, new params, new state,
// with the updated values named like the arguments they replace.

// SGD-LABEL: func.func @forward(
// SGD-LABEL: func.func @train_step(
// SGD-SAME:    %[[W:[a-z0-9]+]]: tensor<8x4xf32> {mw.name = "fc.weight", mw.role = #mw.role<param>}
// SGD-SAME:    %[[B:[a-z0-9]+]]: tensor<4xf32> {mw.name = "fc.bias", mw.role = #mw.role<param>}
// SGD-SAME:    %[[X:[a-z0-9]+]]: tensor<2x8xf32> {mw.name = "x", mw.role = #mw.role<input>}
// SGD-SAME:    %[[Y:[a-z0-9]+]]: tensor<2xi32> {mw.name = "y", mw.role = #mw.role<label>}
// SGD-SAME:    -> (tensor<f32> {mw.name = "loss", mw.role = #mw.role<output>},
// SGD-SAME:        tensor<8x4xf32> {mw.name = "fc.weight", mw.role = #mw.role<param>},
// SGD-SAME:        tensor<4xf32> {mw.name = "fc.bias", mw.role = #mw.role<param>})
// SGD:         %[[H:.*]] = mw.matmul %[[X]], %[[W]]
// SGD:         %[[HB:.*]] = mw.add %[[H]], %[[B]]
// SGD:         %[[LOSS:.*]] = mw.cross_entropy %[[HB]], %[[Y]]
// SGD:         %[[SEED:.*]] = mw.splat 1.000000e+00 : tensor<f32>
// SGD:         %[[DLOGITS:.*]] = mw.cross_entropy_grad %[[HB]], %[[Y]], %[[SEED]]
// The bias was broadcast over the batch: its gradient sums over it.
// SGD:         %[[DB:.*]] = mw.reduce_sum %[[DLOGITS]] axes = [0] : tensor<2x4xf32> -> tensor<4xf32>
// The input needs no gradient: no matmul for it survives.
// SGD-NOT:     {transpose_rhs}
// SGD:         %[[DW:.*]] = mw.matmul %[[X]], %[[DLOGITS]] {transpose_lhs} : (tensor<2x8xf32>, tensor<2x4xf32>) -> tensor<8x4xf32>
// SGD:         %[[NW:.*]] = mw.sgd %[[W]], %[[DW]] {lr = 1.000000e+00 : f64}
// SGD:         %[[NB:.*]] = mw.sgd %[[B]], %[[DB]] {lr = 1.000000e+00 : f64}
// SGD:         return %[[LOSS]], %[[NW]], %[[NB]]

// ADAM-LABEL: func.func @train_step(
// ADAM-SAME:    {mw.name = "fc.weight", mw.role = #mw.role<param>}
// ADAM-SAME:    {mw.name = "fc.bias", mw.role = #mw.role<param>}
// ADAM-SAME:    {mw.name = "fc.weight.exp_avg", mw.role = #mw.role<optimizer_state>}
// ADAM-SAME:    {mw.name = "fc.weight.exp_avg_sq", mw.role = #mw.role<optimizer_state>}
// ADAM-SAME:    {mw.name = "fc.bias.exp_avg", mw.role = #mw.role<optimizer_state>}
// ADAM-SAME:    {mw.name = "fc.bias.exp_avg_sq", mw.role = #mw.role<optimizer_state>}
// ADAM-SAME:    %[[STEP:[a-z0-9]+]]: tensor<i64> {mw.name = "optimizer.step", mw.role = #mw.role<optimizer_state>}
// ADAM-SAME:    {mw.name = "x", mw.role = #mw.role<input>}
// ADAM-SAME:    {mw.name = "y", mw.role = #mw.role<label>}
// ADAM-SAME:    -> (tensor<f32> {mw.name = "loss", mw.role = #mw.role<output>}
// ADAM-SAME:        {mw.name = "fc.weight.exp_avg_sq", mw.role = #mw.role<optimizer_state>}
// ADAM-SAME:        tensor<i64> {mw.name = "optimizer.step", mw.role = #mw.role<optimizer_state>})
// ADAM:         %[[ONE:.*]] = mw.splat 1.000000e+00 : tensor<i64>
// ADAM:         %[[T:.*]] = mw.add %[[STEP]], %[[ONE]]
// ADAM:         mw.adamw {{.*}}, %[[T]] : 
// ADAM:         mw.adamw {{.*}}, %[[T]] : 
// ADAM:         return

// Two micro-batches: each is sliced from the step's inputs, gets half the
// loss gradient, and the gradients add up before one update.
// ACCUM-LABEL: func.func @train_step(
// ACCUM-SAME:    tensor<4x8xf32> {mw.name = "x", mw.role = #mw.role<input>}
// ACCUM-SAME:    tensor<4xi32> {mw.name = "y", mw.role = #mw.role<label>}
// ACCUM:         mw.slice %{{.*}} offsets = [0, 0] sizes = [2, 8]
// ACCUM:         mw.splat 5.000000e-01 : tensor<f32>
// ACCUM:         mw.slice %{{.*}} offsets = [2, 0] sizes = [2, 8]
// ACCUM:         %[[L2:.*]] = mw.cross_entropy
// ACCUM:         mw.add %{{.*}}, %[[L2]] : (tensor<f32>, tensor<f32>) -> tensor<f32>
// ACCUM:         %[[GW:.*]] = mw.add %{{.*}}, %{{.*}} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
// ACCUM:         mw.adamw %{{.*}}, %[[GW]]

// MOM-LABEL: func.func @train_step(
// MOM-SAME:    {mw.name = "fc.weight.momentum_buffer", mw.role = #mw.role<optimizer_state>}
// MOM:         mw.sgd {{.*}} {lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, nesterov}
func.func @forward(%w: tensor<8x4xf32> {mw.role = #mw.role<param>, mw.name = "fc.weight"},
                   %b: tensor<4xf32> {mw.role = #mw.role<param>, mw.name = "fc.bias"},
                   %x: tensor<2x8xf32> {mw.role = #mw.role<input>, mw.name = "x"},
                   %y: tensor<2xi32> {mw.role = #mw.role<label>, mw.name = "y"})
    -> (tensor<f32> {mw.role = #mw.role<output>, mw.name = "loss"}) {
  %h = mw.matmul %x, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %hb = mw.add %h, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %loss = mw.cross_entropy %hb, %y : (tensor<2x4xf32>, tensor<2xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// A value used twice accumulates both gradients.
// SGD-LABEL: func.func @train_step(
// SGD:         %[[SQ:.*]] = mw.mul %[[P:[a-z0-9]+]], %[[P]]
// SGD:         %[[L:.*]] = mw.reduce_sum %[[SQ]] axes = [0]
// SGD:         %[[DSQ:.*]] = mw.broadcast_to
// SGD:         %[[G1:.*]] = mw.mul %[[DSQ]], %[[P]]
// SGD:         %[[G2:.*]] = mw.mul %[[DSQ]], %[[P]]
// SGD:         %[[G:.*]] = mw.add %[[G1]], %[[G2]]
// SGD:         mw.sgd %[[P]], %[[G]]
func.func @forward(%p: tensor<3xf32> {mw.role = #mw.role<param>, mw.name = "p"})
    -> tensor<f32> {
  %sq = mw.mul %p, %p : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %l = mw.reduce_sum %sq axes = [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
