// master-weights=optimizer: DeepSpeed's (and the ZeRO paper's) layout of a
// mixed-precision step. The parameters stay in the compute type (bf16 here),
// the gradients are computed in it, and each parameter's f32 master is an
// optimizer_state argument `<name>.master` before its moments; the update
// casts the gradient to f32, updates master and moments in f32 and returns
// the new parameter as the new master cast back. 2 + 2 + 12 bytes per
// parameter with AdamW (the default layout holds 4 + 4 + 8).
// RUN: mw-opt %s --mw-autodiff="precision=bf16 master-weights=optimizer" | FileCheck %s
// The step verifies, round-trips and evaluates.
// RUN: mw-opt %s --mw-autodiff="precision=bf16 master-weights=optimizer" | mw-opt | mw-eval - --entry train_step --random-inputs 1 --print | FileCheck %s --check-prefix=EVAL
// fp16: the f32 gradient is unscaled, and on overflow the master, the
// moments and the half-precision parameter all keep their old values.
// RUN: sed 's/bf16/f16/g' %s | mw-opt --mw-autodiff="precision=fp16 master-weights=optimizer optimizer=sgd momentum=0.9" | FileCheck %s --check-prefix=FP16
// The default layout is unchanged: param keeps the f32 masters as the
// parameters, cast at their uses.
// RUN: mw-opt %s --mw-autodiff="precision=bf16" -o %t.default
// RUN: mw-opt %s --mw-autodiff="precision=bf16 master-weights=param" -o %t.param
// RUN: cmp %t.default %t.param
// RUN: FileCheck %s --check-prefix=DEFAULT < %t.default
// fp32 has no master beside its parameters: an error, not a no-op.
// RUN: sed 's/bf16/f32/g' %s | not mw-opt --mw-autodiff="master-weights=optimizer" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FP32
// RUN: not mw-opt %s --mw-autodiff="precision=bf16 master-weights=state" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// mw-models --train takes the option through to the pass.
// RUN: mw-models mlp --preset mlp-tiny --train --precision bf16 --master-weights optimizer | FileCheck %s --check-prefix=MODELS
// RUN: not mw-models mlp --preset mlp-tiny --master-weights optimizer -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOTRAIN

// FP32: <stdin>:0:0: error: mw-autodiff: master-weights=optimizer needs precision=bf16 or fp16: an fp32 step's parameters are its master weights
// UNKNOWN: error: mw-autodiff: unknown master-weights 'state' (expected param or optimizer)
// NOTRAIN: training options need --train

func.func @forward(%w: tensor<4x2xbf16> {mw.role = #mw.role<param>, mw.name = "w"},
                   %b: tensor<2xbf16> {mw.role = #mw.role<param>, mw.name = "b"},
                   %x: tensor<4x4xbf16> {mw.role = #mw.role<input>, mw.name = "x"},
                   %y: tensor<4xi32> {mw.role = #mw.role<label>, mw.name = "y"})
    -> (tensor<f32> {mw.role = #mw.role<output>, mw.name = "loss"}) {
  %h = mw.matmul %x, %w : (tensor<4x4xbf16>, tensor<4x2xbf16>) -> tensor<4x2xbf16>
  %z = mw.add %h, %b : (tensor<4x2xbf16>, tensor<2xbf16>) -> tensor<4x2xbf16>
  %l = mw.cross_entropy %z, %y : (tensor<4x2xbf16>, tensor<4xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME:    %[[W:[a-z0-9]+]]: tensor<4x2xbf16> {mw.name = "w", mw.role = #mw.role<param>}
// CHECK-SAME:    %[[B:[a-z0-9]+]]: tensor<2xbf16> {mw.name = "b", mw.role = #mw.role<param>}
// CHECK-SAME:    %[[WM:[a-z0-9]+]]: tensor<4x2xf32> {mw.name = "w.master", mw.role = #mw.role<optimizer_state>}
// CHECK-SAME:    %[[WE:[a-z0-9]+]]: tensor<4x2xf32> {mw.name = "w.exp_avg", mw.role = #mw.role<optimizer_state>}
// CHECK-SAME:    %[[WV:[a-z0-9]+]]: tensor<4x2xf32> {mw.name = "w.exp_avg_sq", mw.role = #mw.role<optimizer_state>}
// CHECK-SAME:    %[[BM:[a-z0-9]+]]: tensor<2xf32> {mw.name = "b.master", mw.role = #mw.role<optimizer_state>}
// CHECK-SAME:    {mw.name = "b.exp_avg", mw.role = #mw.role<optimizer_state>}
// CHECK-SAME:    {mw.name = "b.exp_avg_sq", mw.role = #mw.role<optimizer_state>}
// CHECK-SAME:    {mw.name = "optimizer.step", mw.role = #mw.role<optimizer_state>}
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<4x4xbf16> {mw.name = "x", mw.role = #mw.role<input>}
// CHECK-SAME:    -> (tensor<f32> {mw.name = "loss", mw.role = #mw.role<output>},
// CHECK-SAME:        tensor<4x2xbf16> {mw.name = "w", mw.role = #mw.role<param>},
// CHECK-SAME:        tensor<2xbf16> {mw.name = "b", mw.role = #mw.role<param>},
// CHECK-SAME:        tensor<4x2xf32> {mw.name = "w.master", mw.role = #mw.role<optimizer_state>},
// CHECK-SAME:        tensor<4x2xf32> {mw.name = "w.exp_avg", mw.role = #mw.role<optimizer_state>},
// CHECK-SAME:        tensor<4x2xf32> {mw.name = "w.exp_avg_sq", mw.role = #mw.role<optimizer_state>},
// CHECK-SAME:        tensor<2xf32> {mw.name = "b.master", mw.role = #mw.role<optimizer_state>},
// The parameters are used as they are: no cast in the forward pass, and
// the gradients stay in bf16 until the optimizer casts them.
// CHECK-NOT:     mw.cast %[[W]]
// CHECK:         mw.matmul %[[X]], %[[W]] : (tensor<4x4xbf16>, tensor<4x2xbf16>) -> tensor<4x2xbf16>
// CHECK:         %[[DB:.*]] = mw.reduce_sum %{{.*}} axes = [0] : tensor<4x2xbf16> -> tensor<2xbf16>
// CHECK:         %[[DW:.*]] = mw.matmul %[[X]], %{{.*}} {transpose_lhs} : (tensor<4x4xbf16>, tensor<4x2xbf16>) -> tensor<4x2xbf16>
// CHECK:         %[[GW:.*]] = mw.cast %[[DW]] : tensor<4x2xbf16> to tensor<4x2xf32>
// CHECK:         %[[GB:.*]] = mw.cast %[[DB]] : tensor<2xbf16> to tensor<2xf32>
// CHECK:         %[[NWM:[a-z0-9_]+]], %[[NWE:[a-z0-9_]+]], %[[NWV:[a-z0-9_]+]] = mw.adamw %[[WM]], %[[GW]], %[[WE]], %[[WV]], %{{.*}} : (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<i64>)
// CHECK-NEXT:    %[[NW:.*]] = mw.cast %[[NWM]] : tensor<4x2xf32> to tensor<4x2xbf16>
// CHECK-NEXT:    %[[NBM:[a-z0-9_]+]], {{.*}} = mw.adamw %[[BM]], %[[GB]],
// CHECK-NEXT:    %[[NB:.*]] = mw.cast %[[NBM]] : tensor<2xf32> to tensor<2xbf16>
// CHECK:         return %{{.*}}, %[[NW]], %[[NB]], %[[NWM]], %[[NWE]], %[[NWV]], %[[NBM]],

// EVAL: w: bf16 [4, 2]
// EVAL: b: bf16 [2]
// EVAL: w.master: f32 [4, 2]
// EVAL: w.exp_avg: f32 [4, 2]
// EVAL: b.master: f32 [2]
// EVAL: optimizer.step: i64 [] {{.*}} values=[1]

// FP16-LABEL: func.func @train_step(
// FP16-SAME:    %[[W:[a-z0-9]+]]: tensor<4x2xf16> {mw.name = "w", mw.role = #mw.role<param>}
// FP16-SAME:    %[[WM:[a-z0-9]+]]: tensor<4x2xf32> {mw.name = "w.master", mw.role = #mw.role<optimizer_state>}
// FP16-SAME:    %[[WB:[a-z0-9]+]]: tensor<4x2xf32> {mw.name = "w.momentum_buffer", mw.role = #mw.role<optimizer_state>}
// FP16-SAME:    %[[SCALE:[a-z0-9]+]]: tensor<f32> {mw.name = "loss_scale.scale", mw.role = #mw.role<optimizer_state>}
// FP16:         %[[DW:.*]] = mw.matmul {{.*}} {transpose_lhs} : (tensor<4x4xf16>, tensor<4x2xf16>) -> tensor<4x2xf16>
// FP16:         %[[CW:.*]] = mw.cast %[[DW]] : tensor<4x2xf16> to tensor<4x2xf32>
// FP16-NEXT:    %[[GW:.*]] = mw.div %[[CW]], %[[SCALE]] : (tensor<4x2xf32>, tensor<f32>) -> tensor<4x2xf32>
// FP16:         %[[INF:.*]] = mw.found_inf %[[GW]], %{{.*}} : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<f32>
// FP16-NEXT:    %[[NWM:[a-z0-9_]+]], %[[NWB:[a-z0-9_]+]] = mw.sgd %[[WM]], %[[GW]], %[[WB]]
// FP16-NEXT:    %[[KWM:.*]] = mw.select %[[INF]], %[[WM]], %[[NWM]] : (tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
// FP16-NEXT:    %[[NW:.*]] = mw.cast %[[NWM]] : tensor<4x2xf32> to tensor<4x2xf16>
// FP16-NEXT:    %[[KW:.*]] = mw.select %[[INF]], %[[W]], %[[NW]] : (tensor<f32>, tensor<4x2xf16>, tensor<4x2xf16>) -> tensor<4x2xf16>
// FP16-NEXT:    %[[KWB:.*]] = mw.select %[[INF]], %[[WB]], %[[NWB]] : (tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
// FP16:         return %{{.*}}, %[[KW]], %{{.*}}, %[[KWM]], %[[KWB]],

// DEFAULT-LABEL: func.func @train_step(
// DEFAULT-SAME:    tensor<4x2xf32> {mw.name = "w", mw.role = #mw.role<param>}
// DEFAULT-NOT:     .master
// DEFAULT:         mw.cast %{{.*}} : tensor<4x2xf32> to tensor<4x2xbf16>

// MODELS-LABEL: func.func @train_step(
// MODELS-SAME:    tensor<32x64xbf16> {mw.name = "layers.0.weight", mw.role = #mw.role<param>}
// MODELS-SAME:    tensor<32x64xf32> {mw.name = "layers.0.weight.master", mw.role = #mw.role<optimizer_state>}
