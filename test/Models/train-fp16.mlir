// mw-models --train --precision fp16 writes the forward function in f16 and
// an fp16 step with dynamic loss scaling; the --loss-scale-* flags reach
// mw.loss_scale_update and need --precision fp16.
//
// RUN: mw-models mlp --preset mlp-tiny --train --precision fp16 | FileCheck %s --check-prefix=DEFAULT
// RUN: mw-models mlp --preset mlp-tiny --train --precision fp16 --loss-scale-window 100 --loss-scale-hysteresis 1 --loss-scale-min 0.25 | FileCheck %s --check-prefix=FLAGS
// RUN: not mw-models mlp --preset mlp-tiny --train --loss-scale-window 100 2>&1 | FileCheck %s --check-prefix=NOT-FP16
// RUN: not mw-models mlp --preset mlp-tiny --loss-scale-min 2 2>&1 | FileCheck %s --check-prefix=NO-TRAIN

// DEFAULT-LABEL: func.func @forward(
// DEFAULT-SAME:    tensor<{{.*}}xf16> {mw.name = "layers.0.weight", mw.role = #mw.role<param>}
// DEFAULT-LABEL: func.func @train_step(
// DEFAULT-SAME:    tensor<f32> {mw.name = "loss_scale.scale", mw.role = #mw.role<optimizer_state>}
// DEFAULT:         mw.found_inf
// DEFAULT:         mw.loss_scale_update %{{[^{]*}} : (tensor<f32>, tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>)

// FLAGS: mw.loss_scale_update {{.*}} {hysteresis = 1 : i64, min_scale = 2.500000e-01 : f64, window = 100 : i64}

// NOT-FP16: mw-models: error: --loss-scale-window applies to --precision fp16 only
// NO-TRAIN: mw-models: error: training options need --train
