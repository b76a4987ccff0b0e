// RUN: mw-opt %s --mw-autodiff="precision=fp16 optimizer=sgd lr=1" | FileCheck %s --check-prefix=SGD
// RUN: mw-opt %s --mw-autodiff="precision=fp16 grad-accum=2 loss-scale-window=500 loss-scale-hysteresis=3 loss-scale-min=0.5" | FileCheck %s --check-prefix=ADAM
// The step verifies and round-trips.
// RUN: mw-opt %s --mw-autodiff="precision=fp16" | mw-opt | FileCheck %s --check-prefix=ADAM-DEFAULTS
// One step from mw-eval's random inputs, which start the loss scaling as
// DeepSpeed does (scale 2^16, iter 0, last_overflow -1, hysteresis 2): no
// overflow, so only iter advances.
// RUN: mw-opt %s --mw-autodiff="precision=fp16" | mw-eval - --entry train_step --random-inputs 1 --print | FileCheck %s --check-prefix=EVAL

// fp16 training of a linear classifier written in f16: f32 master weights
// cast to f16 at their uses, the backward pass seeded with the loss scale,
// the master gradients unscaled and checked for inf/NaN, each update kept
// only when there was none, and the scale state advanced by
// mw.loss_scale_update. The four scale states follow the optimizer's.

// SGD-LABEL: func.func @train_step(
// SGD-SAME:    %[[W:[a-z0-9]+]]: tensor<8x4xf32> {mw.name = "fc.weight", mw.role = #mw.role<param>}
// SGD-SAME:    %[[B:[a-z0-9]+]]: tensor<4xf32> {mw.name = "fc.bias", mw.role = #mw.role<param>}
// SGD-SAME:    %[[SCALE:[a-z0-9]+]]: tensor<f32> {mw.name = "loss_scale.scale", mw.role = #mw.role<optimizer_state>}
// SGD-SAME:    %[[ITER:[a-z0-9]+]]: tensor<i64> {mw.name = "loss_scale.iter", mw.role = #mw.role<optimizer_state>}
// SGD-SAME:    %[[LAST:[a-z0-9]+]]: tensor<i64> {mw.name = "loss_scale.last_overflow", mw.role = #mw.role<optimizer_state>}
// SGD-SAME:    %[[HYST:[a-z0-9]+]]: tensor<i64> {mw.name = "loss_scale.hysteresis", mw.role = #mw.role<optimizer_state>}
// SGD-SAME:    %[[X:[a-z0-9]+]]: tensor<2x8xf16> {mw.name = "x", mw.role = #mw.role<input>}
// SGD-SAME:    %[[Y:[a-z0-9]+]]: tensor<2xi32> {mw.name = "y", mw.role = #mw.role<label>}
// SGD-SAME:    -> (tensor<f32> {mw.name = "loss", mw.role = #mw.role<output>},
// SGD-SAME:        tensor<8x4xf32> {mw.name = "fc.weight", mw.role = #mw.role<param>},
// SGD-SAME:        tensor<4xf32> {mw.name = "fc.bias", mw.role = #mw.role<param>},
// SGD-SAME:        tensor<f32> {mw.name = "loss_scale.scale", mw.role = #mw.role<optimizer_state>},
// SGD-SAME:        tensor<i64> {mw.name = "loss_scale.iter", mw.role = #mw.role<optimizer_state>},
// SGD-SAME:        tensor<i64> {mw.name = "loss_scale.last_overflow", mw.role = #mw.role<optimizer_state>},
// SGD-SAME:        tensor<i64> {mw.name = "loss_scale.hysteresis", mw.role = #mw.role<optimizer_state>})
// SGD:         %[[W16:.*]] = mw.cast %[[W]] : tensor<8x4xf32> to tensor<8x4xf16>
// SGD:         %[[B16:.*]] = mw.cast %[[B]] : tensor<4xf32> to tensor<4xf16>
// SGD:         %[[LOSS:.*]] = mw.cross_entropy
// The seed is the scale itself (no grad-accum, an f32 loss).
// SGD:         mw.cross_entropy_grad %{{.*}}, %[[Y]], %[[SCALE]] : (tensor<2x4xf16>, tensor<2xi32>, tensor<f32>) -> tensor<2x4xf16>
// SGD:         %[[DB:.*]] = mw.cast %{{.*}} : tensor<4xf16> to tensor<4xf32>
// SGD:         %[[DW:.*]] = mw.cast %{{.*}} : tensor<8x4xf16> to tensor<8x4xf32>
// SGD:         %[[GW:.*]] = mw.div %[[DW]], %[[SCALE]] : (tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xf32>
// SGD:         %[[GB:.*]] = mw.div %[[DB]], %[[SCALE]] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// SGD:         %[[INF:.*]] = mw.found_inf %[[GW]], %[[GB]] : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<f32>
// Each update's select follows it at once (so only one new value waits).
// SGD:         %[[NW:.*]] = mw.sgd %[[W]], %[[GW]] {lr = 1.000000e+00 : f64}
// SGD-NEXT:    %[[KW:.*]] = mw.select %[[INF]], %[[W]], %[[NW]] : (tensor<f32>, tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
// SGD-NEXT:    %[[NB:.*]] = mw.sgd %[[B]], %[[GB]] {lr = 1.000000e+00 : f64}
// SGD-NEXT:    %[[KB:.*]] = mw.select %[[INF]], %[[B]], %[[NB]] : (tensor<f32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// SGD:         %[[NS:[a-z0-9_]+]], %[[NI:[a-z0-9_]+]], %[[NL:[a-z0-9_]+]], %[[NH:[a-z0-9_]+]] = mw.loss_scale_update %[[INF]], %[[SCALE]], %[[ITER]], %[[LAST]], %[[HYST]] : (tensor<f32>, tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>) -> (tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>)
// SGD:         return %[[LOSS]], %[[KW]], %[[KB]], %[[NS]], %[[NI]], %[[NL]], %[[NH]]

// AdamW with two micro-batches: each seed is scale / 2; the moments and the
// step counter are kept on overflow too; the options reach the update op.
// ADAM-LABEL: func.func @train_step(
// ADAM-SAME:    {mw.name = "fc.bias.exp_avg_sq", mw.role = #mw.role<optimizer_state>}
// ADAM-SAME:    %[[STEP:[a-z0-9]+]]: tensor<i64> {mw.name = "optimizer.step", mw.role = #mw.role<optimizer_state>}
// ADAM-SAME:    %[[SCALE:[a-z0-9]+]]: tensor<f32> {mw.name = "loss_scale.scale", mw.role = #mw.role<optimizer_state>}
// ADAM-SAME:    {mw.name = "loss_scale.hysteresis", mw.role = #mw.role<optimizer_state>}
// ADAM-SAME:    tensor<4x8xf16> {mw.name = "x", mw.role = #mw.role<input>}
// ADAM-SAME:    -> (
// ADAM-SAME:        tensor<i64> {mw.name = "optimizer.step", mw.role = #mw.role<optimizer_state>},
// ADAM-SAME:        tensor<f32> {mw.name = "loss_scale.scale", mw.role = #mw.role<optimizer_state>},
// ADAM:         %[[TWO:.*]] = mw.splat 2.000000e+00 : tensor<f32>
// ADAM:         %[[SEED:.*]] = mw.div %[[SCALE]], %[[TWO]] : (tensor<f32>, tensor<f32>) -> tensor<f32>
// ADAM:         mw.cross_entropy_grad %{{.*}}, %{{.*}}, %[[SEED]]
// ADAM:         mw.cross_entropy_grad %{{.*}}, %{{.*}}, %[[SEED]]
// ADAM:         %[[INF:.*]] = mw.found_inf
// ADAM:         %[[T:.*]] = mw.add %[[STEP]], %{{.*}} : (tensor<i64>, tensor<i64>) -> tensor<i64>
// ADAM:         %[[WP:[a-z0-9_]+]], %[[WM:[a-z0-9_]+]], %[[WV:[a-z0-9_]+]] = mw.adamw {{.*}}, %[[T]] :
// ADAM-NEXT:    mw.select %[[INF]], %{{.*}}, %[[WP]]
// ADAM-NEXT:    mw.select %[[INF]], %{{.*}}, %[[WM]]
// ADAM-NEXT:    mw.select %[[INF]], %{{.*}}, %[[WV]]
// ADAM-NEXT:    mw.adamw
// ADAM-NEXT:    mw.select %[[INF]], %{{.*}}, %{{.*}}
// ADAM-NEXT:    mw.select %[[INF]], %{{.*}}, %{{.*}}
// ADAM-NEXT:    mw.select %[[INF]], %{{.*}}, %{{.*}}
// ADAM-NEXT:    %[[KT:.*]] = mw.select %[[INF]], %[[STEP]], %[[T]] : (tensor<f32>, tensor<i64>, tensor<i64>) -> tensor<i64>
// ADAM:         %[[NS:[a-z0-9_]+]], %[[NI:[a-z0-9_]+]], %[[NL:[a-z0-9_]+]], %[[NH:[a-z0-9_]+]] = mw.loss_scale_update %[[INF]], %[[SCALE]], {{.*}} {hysteresis = 3 : i64, min_scale = 5.000000e-01 : f64, window = 500 : i64}
// ADAM:         return {{.*}}, %[[KT]], %[[NS]], %[[NI]], %[[NL]], %[[NH]] :

// ADAM-DEFAULTS-LABEL: func.func @train_step(
// ADAM-DEFAULTS:         mw.loss_scale_update %{{[^{]*}} : (tensor<f32>, tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>)

// EVAL-DAG: loss: f32 []
// EVAL-DAG: loss_scale.scale: f32 [] {{.*}} values=[65536]
// EVAL-DAG: loss_scale.iter: i64 [] {{.*}} values=[1]
// EVAL-DAG: loss_scale.last_overflow: i64 [] {{.*}} values=[-1]
// EVAL-DAG: loss_scale.hysteresis: i64 [] {{.*}} values=[2]
// EVAL-DAG: optimizer.step: i64 [] {{.*}} values=[1]
func.func @forward(%w: tensor<8x4xf16> {mw.role = #mw.role<param>, mw.name = "fc.weight"},
                   %b: tensor<4xf16> {mw.role = #mw.role<param>, mw.name = "fc.bias"},
                   %x: tensor<2x8xf16> {mw.role = #mw.role<input>, mw.name = "x"},
                   %y: tensor<2xi32> {mw.role = #mw.role<label>, mw.name = "y"})
    -> (tensor<f32> {mw.role = #mw.role<output>, mw.name = "loss"}) {
  %h = mw.matmul %x, %w : (tensor<2x8xf16>, tensor<8x4xf16>) -> tensor<2x4xf16>
  %hb = mw.add %h, %b : (tensor<2x4xf16>, tensor<4xf16>) -> tensor<2x4xf16>
  %loss = mw.cross_entropy %hb, %y : (tensor<2x4xf16>, tensor<2xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
