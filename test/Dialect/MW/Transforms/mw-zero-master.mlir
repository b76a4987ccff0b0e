// --mw-zero on a step of --mw-autodiff's master-weights=optimizer (bf16
// parameters and gradients, f32 masters in the optimizer state): DeepSpeed's
// layout. A linear classifier, w: 4x2 and b: 2, so Ψ = 10 parameters, a
// global batch of 4 rows (2 per rank with N = 2).
//
// What each rank holds and sends, N = 2 (one bucket of 10 elements, pieces
// of 5, no padding):
//  - stage 0: w and b in bf16 (20 B), their bf16 gradient bucket (20 B,
//    divided by N, then all-reduced in bf16: 10 elements, 20 B), masters and
//    moments whole in f32 (120 B): 160 B = 16Ψ.
//  - stage 1: the same parameters and whole bf16 bucket (20 + 20 B), then a
//    bf16 reduce-scatter (10 elements, 20 B) into the rank's 5-element piece,
//    cast to f32 for the update of its master and moment pieces (3 x 5 f32 =
//    60 B); the new bf16 piece (the master cast back) is all-gathered in bf16
//    (10 elements, 20 B): 100 B = 4Ψ + 12Ψ/N.
//  - stage 2: the bucket reduce-scattered as soon as it exists, so only the
//    10-byte bf16 piece is held: 90 B = 2Ψ + 14Ψ/N.
//  - stage 3: the parameters are a bf16 piece too (10 B), all-gathered in
//    bf16 before the forward pass: 80 B = 16Ψ/N.
// Every collective moves bf16: 40 B a step from stage 1 on, where the default
// layout (f32 masters as the parameters) moves 80 B.
// With N = 4 the bucket is padded to 12 (3 per rank) and the formula holds
// padding aside ("ratio_without_padding": 1).
//
// RUN: mw-opt %s --mw-autodiff="precision=bf16 master-weights=optimizer" -o %t.step
// RUN: mw-opt %t.step --mw-zero="stage=0 ranks=2" | FileCheck %s --check-prefix=S0
// RUN: mw-opt %t.step --mw-zero="stage=1 ranks=2" | FileCheck %s --check-prefix=S1
// RUN: mw-opt %t.step --mw-zero="stage=3 ranks=2 persistence-threshold=0" | FileCheck %s --check-prefix=S3
// RUN: sed 's/bf16/f16/g' %s | mw-opt --mw-autodiff="precision=fp16 master-weights=optimizer" --mw-zero="stage=2 ranks=2" | FileCheck %s --check-prefix=FP16
// The default layout's communication, for comparison: twice the bytes.
// RUN: mw-opt %s --mw-autodiff="precision=bf16" --mw-zero="stage=2 ranks=2" --mw-memory-report -o /dev/null | FileCheck %s --check-prefix=DEFAULT
// DEFAULT: formula (fp32 Adam, 4 + 4 + 8 bytes per parameter)
// DEFAULT: total           3 x, 20 elements (80 B)
// The stage is inferred alike without the pass's attribute.
// RUN: mw-opt %t.step --mw-zero="stage=1 ranks=2" | sed 's/mw.zero.stage = 1 : i64//' | mw-opt --mw-memory-report -o /dev/null | FileCheck %s --check-prefix=INFER1
// RUN: mw-opt %t.step --mw-zero="stage=2 ranks=2" | sed 's/mw.zero.stage = 2 : i64//' | mw-opt --mw-memory-report -o /dev/null | FileCheck %s --check-prefix=INFER2
// INFER1: per rank: ZeRO stage 1 (inferred), 2 ranks
// INFER2: per rank: ZeRO stage 2 (inferred), 2 ranks
// A master --mw-zero cannot pair with its parameter is an error at the
// update, naming what it looked for.
// RUN: sed 's/"w.master"/"w.copy"/g' %t.step | not mw-opt --mw-zero="ranks=2" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NAME
// NAME: error: 'mw.adamw' op mw-zero: the f32 master updated here is not named '<parameter>.master'
// RUN: sed 's/mw.name = "w", mw.role = #mw.role<param>/mw.name = "v", mw.role = #mw.role<param>/g' %t.step | not mw-opt --mw-zero="ranks=2" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOPARAM
// NOPARAM: error: 'mw.adamw' op mw-zero: the f32 master updated here has no parameter 'w' of the compute type beside it
// The text report names the case.
// RUN: mw-opt %t.step --mw-zero="stage=2 ranks=2" --mw-memory-report -o /dev/null | FileCheck %s --check-prefix=TEXT
// TEXT: model states          90 B (padding 0.00 B)
// TEXT-NEXT: formula (2-byte Adam with 4-byte masters in the optimizer state, 2 + 2 + 12 bytes per parameter): 2Ψ + 14Ψ/N = 90.00 B; measured / formula = 1.00 (1.00 without padding)
// TEXT: total           2 x, 20 elements (40 B); paper 20 (40 B); ring 10.00 (20.00 B) per rank

// RUN: mw-opt %t.step --mw-zero="stage=0 ranks=2 persistence-threshold=0" --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=R0N2
// RUN: mw-opt %t.step --mw-zero="stage=1 ranks=2 persistence-threshold=0" --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=R1N2
// RUN: mw-opt %t.step --mw-zero="stage=2 ranks=2 persistence-threshold=0" --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=R2N2
// RUN: mw-opt %t.step --mw-zero="stage=3 ranks=2 persistence-threshold=0" --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=R3N2
// RUN: mw-opt %t.step --mw-zero="stage=0 ranks=4 persistence-threshold=0" --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=R0N4
// RUN: mw-opt %t.step --mw-zero="stage=1 ranks=4 persistence-threshold=0" --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=R1N4
// RUN: mw-opt %t.step --mw-zero="stage=2 ranks=4 persistence-threshold=0" --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=R2N4
// RUN: mw-opt %t.step --mw-zero="stage=3 ranks=4 persistence-threshold=0" --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=R3N4

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

// R0N2-LABEL: "name": "train_step"
// R0N2:      "ranks": 2,
// R0N2-NEXT: "stage": 0,
// R0N2:      "model_state_bytes": 160,
// R0N2-NEXT: "model_state_padding_bytes": 0
// R0N2:      "case": "2-byte Adam with 4-byte masters in the optimizer state",
// R0N2:      "optimizer_state_bytes_per_param": 12,
// R0N2-NEXT: "expression": "16Ψ",
// R0N2-NEXT: "bytes": 160,
// R0N2-NEXT: "ratio": {{.*}},
// R0N2-NEXT: "ratio_without_padding": 1
// R0N2:      "total": {
// R0N2-NEXT:   "count": 1,
// R0N2-NEXT:   "elements": 10,
// R0N2-NEXT:   "bytes": 20,

// R1N2-LABEL: "name": "train_step"
// R1N2:      "ranks": 2,
// R1N2-NEXT: "stage": 1,
// R1N2:      "model_state_bytes": 100,
// R1N2-NEXT: "model_state_padding_bytes": 0
// R1N2:      "case": "2-byte Adam with 4-byte masters in the optimizer state",
// R1N2:      "optimizer_state_bytes_per_param": 12,
// R1N2-NEXT: "expression": "4Ψ + 12Ψ/N",
// R1N2-NEXT: "bytes": 100,
// R1N2-NEXT: "ratio": {{.*}},
// R1N2-NEXT: "ratio_without_padding": 1
// R1N2:      "total": {
// R1N2-NEXT:   "count": 2,
// R1N2-NEXT:   "elements": 20,
// R1N2-NEXT:   "bytes": 40,

// R2N2-LABEL: "name": "train_step"
// R2N2:      "ranks": 2,
// R2N2-NEXT: "stage": 2,
// R2N2:      "model_state_bytes": 90,
// R2N2-NEXT: "model_state_padding_bytes": 0
// R2N2:      "case": "2-byte Adam with 4-byte masters in the optimizer state",
// R2N2:      "optimizer_state_bytes_per_param": 12,
// R2N2-NEXT: "expression": "2Ψ + 14Ψ/N",
// R2N2-NEXT: "bytes": 90,
// R2N2-NEXT: "ratio": {{.*}},
// R2N2-NEXT: "ratio_without_padding": 1
// R2N2:      "total": {
// R2N2-NEXT:   "count": 2,
// R2N2-NEXT:   "elements": 20,
// R2N2-NEXT:   "bytes": 40,

// R3N2-LABEL: "name": "train_step"
// R3N2:      "ranks": 2,
// R3N2-NEXT: "stage": 3,
// R3N2:      "model_state_bytes": 80,
// R3N2-NEXT: "model_state_padding_bytes": 0
// R3N2:      "case": "2-byte Adam with 4-byte masters in the optimizer state",
// R3N2:      "optimizer_state_bytes_per_param": 12,
// R3N2-NEXT: "expression": "16Ψ/N",
// R3N2-NEXT: "bytes": 80,
// R3N2-NEXT: "ratio": {{.*}},
// R3N2-NEXT: "ratio_without_padding": 1
// R3N2:      "total": {
// R3N2-NEXT:   "count": 2,
// R3N2-NEXT:   "elements": 20,
// R3N2-NEXT:   "bytes": 40,

// R0N4-LABEL: "name": "train_step"
// R0N4:      "ranks": 4,
// R0N4-NEXT: "stage": 0,
// R0N4:      "model_state_bytes": 160,
// R0N4-NEXT: "model_state_padding_bytes": 0
// R0N4:      "case": "2-byte Adam with 4-byte masters in the optimizer state",
// R0N4:      "optimizer_state_bytes_per_param": 12,
// R0N4-NEXT: "expression": "16Ψ",
// R0N4-NEXT: "bytes": 160,
// R0N4-NEXT: "ratio": {{.*}},
// R0N4-NEXT: "ratio_without_padding": 1
// R0N4:      "total": {
// R0N4-NEXT:   "count": 1,
// R0N4-NEXT:   "elements": 10,
// R0N4-NEXT:   "bytes": 20,

// R1N4-LABEL: "name": "train_step"
// R1N4:      "ranks": 4,
// R1N4-NEXT: "stage": 1,
// R1N4:      "model_state_bytes": 80,
// R1N4-NEXT: "model_state_padding_bytes": 10
// R1N4:      "case": "2-byte Adam with 4-byte masters in the optimizer state",
// R1N4:      "optimizer_state_bytes_per_param": 12,
// R1N4-NEXT: "expression": "4Ψ + 12Ψ/N",
// R1N4-NEXT: "bytes": 70,
// R1N4-NEXT: "ratio": {{.*}},
// R1N4-NEXT: "ratio_without_padding": 1
// R1N4:      "total": {
// R1N4-NEXT:   "count": 2,
// R1N4-NEXT:   "elements": 24,
// R1N4-NEXT:   "bytes": 48,

// R2N4-LABEL: "name": "train_step"
// R2N4:      "ranks": 4,
// R2N4-NEXT: "stage": 2,
// R2N4:      "model_state_bytes": 62,
// R2N4-NEXT: "model_state_padding_bytes": 7
// R2N4:      "case": "2-byte Adam with 4-byte masters in the optimizer state",
// R2N4:      "optimizer_state_bytes_per_param": 12,
// R2N4-NEXT: "expression": "2Ψ + 14Ψ/N",
// R2N4-NEXT: "bytes": 55,
// R2N4-NEXT: "ratio": {{.*}},
// R2N4-NEXT: "ratio_without_padding": 1
// R2N4:      "total": {
// R2N4-NEXT:   "count": 2,
// R2N4-NEXT:   "elements": 24,
// R2N4-NEXT:   "bytes": 48,

// R3N4-LABEL: "name": "train_step"
// R3N4:      "ranks": 4,
// R3N4-NEXT: "stage": 3,
// R3N4:      "model_state_bytes": 48,
// R3N4-NEXT: "model_state_padding_bytes": 8
// R3N4:      "case": "2-byte Adam with 4-byte masters in the optimizer state",
// R3N4:      "optimizer_state_bytes_per_param": 12,
// R3N4-NEXT: "expression": "16Ψ/N",
// R3N4-NEXT: "bytes": 40,
// R3N4-NEXT: "ratio": {{.*}},
// R3N4-NEXT: "ratio_without_padding": 1
// R3N4:      "total": {
// R3N4-NEXT:   "count": 2,
// R3N4-NEXT:   "elements": 24,
// R3N4-NEXT:   "bytes": 48,

// S0-LABEL: func.func @train_step(
// S0-SAME:    {mw.name = "w.master", mw.role = #mw.role<optimizer_state>}
// S0:         %[[FLAT:.*]] = mw.concat %{{.*}}, %{{.*}} axis = 0 : (tensor<2xbf16>, tensor<8xbf16>) -> tensor<10xbf16>
// S0-NEXT:    %[[HALF:.*]] = mw.splat 5.000000e-01 : tensor<10xbf16>
// S0-NEXT:    %[[MEAN:.*]] = mw.mul %[[FLAT]], %[[HALF]] : (tensor<10xbf16>, tensor<10xbf16>) -> tensor<10xbf16>
// S0-NEXT:    %[[SUM:.*]] = mesh.all_reduce %[[MEAN]] on @dp mesh_axes = [0] : tensor<10xbf16> -> tensor<10xbf16>
// S0:         mw.cast %{{.*}} : tensor<4x2xbf16> to tensor<4x2xf32>
// S0:         mw.adamw %{{.*}} : (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<i64>)

// S1-LABEL: func.func @train_step(
// S1-SAME:    %[[W:[a-z0-9]+]]: tensor<4x2xbf16> {mw.name = "w", mw.role = #mw.role<param>}
// S1-SAME:    %[[M:[a-z0-9]+]]: tensor<5xf32> {mw.name = "zero.bucket0.master", mw.role = #mw.role<optimizer_state>, mw.shard = {members = ["b", "w"], ranks = 2 : i64, shapes = [array<i64: 2>, array<i64: 4, 2>], sizes = array<i64: 2, 8>, sources = ["b.master", "w.master"]}}
// S1-SAME:    {mw.name = "zero.bucket0.exp_avg", mw.role = #mw.role<optimizer_state>
// S1-SAME:    -> (tensor<f32> {mw.name = "loss", mw.role = #mw.role<output>}, tensor<4x2xbf16> {mw.name = "w", mw.role = #mw.role<param>}, tensor<2xbf16> {mw.name = "b", mw.role = #mw.role<param>}
// S1-SAME:    tensor<5xf32> {mw.name = "zero.bucket0.master"
// S1:         %[[MEAN:.*]] = mw.mul %{{.*}}, %{{.*}} : (tensor<10xbf16>, tensor<10xbf16>) -> tensor<10xbf16>
// S1-NEXT:    %[[RS:.*]] = mesh.reduce_scatter %[[MEAN]] on @dp mesh_axes = [0] scatter_axis = 0 : tensor<10xbf16> -> tensor<5xbf16>
// S1-NEXT:    %[[G:.*]] = mw.cast %[[RS]] : tensor<5xbf16> to tensor<5xf32>
// S1-NEXT:    %[[NM:[a-z0-9_]+]], %{{.*}}, %{{.*}} = mw.adamw %[[M]], %[[G]], {{.*}} : (tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<i64>)
// S1-NEXT:    %[[NP:.*]] = mw.cast %[[NM]] : tensor<5xf32> to tensor<5xbf16>
// S1-NEXT:    %[[AG:.*]] = mesh.all_gather %[[NP]] on @dp mesh_axes = [0] gather_axis = 0 : tensor<5xbf16> -> tensor<10xbf16>
// S1-NOT:     mesh.all_slice

// S3-LABEL: func.func @train_step(
// S3-SAME:    %[[P:[a-z0-9]+]]: tensor<5xbf16> {mw.name = "zero.bucket0.param", mw.role = #mw.role<param>
// S3-SAME:    %[[M:[a-z0-9]+]]: tensor<5xf32> {mw.name = "zero.bucket0.master", mw.role = #mw.role<optimizer_state>
// S3-SAME:    -> (tensor<f32> {mw.name = "loss", mw.role = #mw.role<output>}, tensor<i64> {mw.name = "optimizer.step", mw.role = #mw.role<optimizer_state>}, tensor<5xbf16> {mw.name = "zero.bucket0.param"
// S3-NEXT:    %[[FULL:.*]] = mesh.all_gather %[[P]] on @dp mesh_axes = [0] gather_axis = 0 : tensor<5xbf16> -> tensor<10xbf16>
// S3:         %[[NM:[a-z0-9_]+]], %{{.*}}, %{{.*}} = mw.adamw %[[M]],
// S3-NEXT:    %[[NP:.*]] = mw.cast %[[NM]] : tensor<5xf32> to tensor<5xbf16>
// S3:         return %{{.*}}, %{{.*}}, %[[NP]], %[[NM]],

// fp16, stage 2: each rank's f16 gradients are still unscaled and checked
// locally (found_inf, its flag all-reduced with max); the reduced f16 piece
// is cast to f32 and unscaled for the update; on overflow the master and
// moment pieces and the f16 parameters' piece (sliced locally) keep their
// old values.
// FP16-LABEL: func.func @train_step(
// FP16-SAME:    %[[W:[a-z0-9]+]]: tensor<4x2xf16> {mw.name = "w", mw.role = #mw.role<param>}
// FP16-SAME:    %[[SCALE:[a-z0-9]+]]: tensor<f32> {mw.name = "loss_scale.scale"
// FP16-SAME:    %[[M:[a-z0-9]+]]: tensor<5xf32> {mw.name = "zero.bucket0.master"
// FP16:         %[[RS:.*]] = mesh.reduce_scatter %{{.*}} on @dp mesh_axes = [0] scatter_axis = 0 : tensor<10xf16> -> tensor<5xf16>
// FP16:         %[[INF:.*]] = mw.found_inf
// FP16-NEXT:    %[[FLAG:.*]] = mesh.all_reduce %[[INF]] on @dp mesh_axes = [0] reduction = <max> : tensor<f32> -> tensor<f32>
// FP16:         %[[G32:.*]] = mw.cast %[[RS]] : tensor<5xf16> to tensor<5xf32>
// FP16-NEXT:    %[[G:.*]] = mw.div %[[G32]], %[[SCALE]] : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
// FP16:         %[[OLD:.*]] = mesh.all_slice %{{.*}} on @dp mesh_axes = [0] slice_axis = 0 : tensor<10xf16> -> tensor<5xf16>
// FP16-NEXT:    %[[NM:[a-z0-9_]+]], %{{.*}}, %{{.*}} = mw.adamw %[[M]], %[[G]],
// FP16-NEXT:    %[[NP:.*]] = mw.cast %[[NM]] : tensor<5xf32> to tensor<5xf16>
// FP16-NEXT:    mw.select %[[FLAG]], %[[M]], %[[NM]] : (tensor<f32>, tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
// FP16-NEXT:    mw.select %[[FLAG]]
// FP16-NEXT:    mw.select %[[FLAG]]
// FP16-NEXT:    %[[KP:.*]] = mw.select %[[FLAG]], %[[OLD]], %[[NP]] : (tensor<f32>, tensor<5xf16>, tensor<5xf16>) -> tensor<5xf16>
// FP16-NEXT:    mesh.all_gather %[[KP]] on @dp mesh_axes = [0] gather_axis = 0 : tensor<5xf16> -> tensor<10xf16>
