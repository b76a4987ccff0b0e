// The per-rank section of --mw-memory-report on a ZeRO step: a linear
// classifier (w: 4x2, b: 2, so Ψ = 10 parameters; a batch of 4 rows) after
// --mw-autodiff and --mw-zero over N = 2 and 4 ranks, with fp32 AdamW. Every
// figure is per rank and computed by hand below. With N = 2 the 10-float
// bucket splits into two 5-float pieces, no padding, and the measured model
// states equal the fp32 Adam formula (16Ψ, 8Ψ + 8Ψ/N, 4Ψ + 12Ψ/N, 16Ψ/N)
// exactly; with N = 4 the bucket is padded to 12 floats (3 per rank) and
// the formula holds padding aside ("ratio_without_padding": 1). AdamW's
// 8-byte step counter is optimizer state but not a model state.
// RUN: mw-opt %s --mw-autodiff --mw-zero="stage=0 ranks=2 persistence-threshold=0" --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=S0N2
// RUN: mw-opt %s --mw-autodiff --mw-zero="stage=0 ranks=4 persistence-threshold=0" --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=S0N4
// RUN: mw-opt %s --mw-autodiff --mw-zero="stage=1 ranks=2 persistence-threshold=0" --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=S1N2
// RUN: mw-opt %s --mw-autodiff --mw-zero="stage=1 ranks=4 persistence-threshold=0" --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=S1N4
// RUN: mw-opt %s --mw-autodiff --mw-zero="stage=2 ranks=2 persistence-threshold=0" --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=S2N2
// RUN: mw-opt %s --mw-autodiff --mw-zero="stage=2 ranks=4 persistence-threshold=0" --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=S2N4
// RUN: mw-opt %s --mw-autodiff --mw-zero="stage=3 ranks=2 persistence-threshold=0" --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=S3N2
// RUN: mw-opt %s --mw-autodiff --mw-zero="stage=3 ranks=4 persistence-threshold=0" --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=S3N4
// The text form says the same; the step is not planned, so it names the
// pipeline that plans it.
// RUN: mw-opt %s --mw-autodiff --mw-zero="stage=2 ranks=2 persistence-threshold=0" --mw-memory-report -o /dev/null | FileCheck %s --check-prefix=TEXT
// Without --mw-zero's mw.zero.stage attribute the report infers the stage.
// RUN: mw-opt %s --mw-autodiff --mw-zero="stage=2 ranks=2 persistence-threshold=0" | sed 's/mw.zero.stage = 2 : i64//' | mw-opt --mw-memory-report -o /dev/null | FileCheck %s --check-prefix=INFER
// INFER: per rank: ZeRO stage 2 (inferred), 2 ranks

func.func @forward(%w: tensor<4x2xf32> {mw.role = #mw.role<param>, mw.name = "w"},
                   %b: tensor<2xf32> {mw.role = #mw.role<param>, mw.name = "b"},
                   %x: tensor<4x4xf32> {mw.role = #mw.role<input>, mw.name = "x"},
                   %y: tensor<4xi32> {mw.role = #mw.role<label>, mw.name = "y"})
    -> (tensor<f32> {mw.role = #mw.role<output>, mw.name = "loss"}) {
  %h = mw.matmul %x, %w : (tensor<4x4xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %z = mw.add %h, %b : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %l = mw.cross_entropy %z, %y : (tensor<4x2xf32>, tensor<4xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// The forward function has no collective, so no per-rank section.
// S0N2: "name": "forward"
// S0N2-NOT: "zero"

// TEXT-LABEL: mw-memory-report @train_step
// TEXT: per rank: ZeRO stage 2 (attribute), 2 ranks, Ψ = 10 parameters
// TEXT-NEXT: parameters            40 B (whole 40 B, pieces 0 B, padding 0.00 B)
// TEXT-NEXT: gradients             20 B (whole 0 B, pieces 20 B, padding 0.00 B)
// TEXT-NEXT: optimizer state       40 B (whole 0 B, pieces 40 B, padding 0.00 B)
// TEXT-NEXT: optimizer counters    8 B (not a model state)
// TEXT-NEXT: model states          100 B (padding 0.00 B)
// TEXT-NEXT: formula (fp32 Adam, 4 + 4 + 8 bytes per parameter): 4Ψ + 12Ψ/N = 100.00 B; measured / formula = 1.00 (1.00 without padding)
// TEXT: beside it (mixed-precision Adam (ZeRO paper), 2 + 2 + 12 bytes per parameter): 2Ψ + 14Ψ/N = 90.00 B
// TEXT: total           3 x, 20 elements (80 B); paper 20 (80 B); ring 10.00 (40.00 B) per rank
// TEXT: paper's volume 2Ψ = 20 elements; total / paper = 1.00
// TEXT: arena by kind: the step is not bufferized and planned: run --mw-train-pipeline

// Stage 0, N = 2: every rank holds w and b whole (40 B), their 10-float
// gradient bucket (40 B, all-reduced) and AdamW's exp_avg and exp_avg_sq
// whole (80 B): 160 B = 16Ψ, ratio 1. The all_reduce of S = 10 elements
// counts 2S = 20 = 2Ψ in the paper; a ring sends 2(N-1)/N·S = 10 per rank.
// The loss's all_reduce goes under "outputs", not the totals.
// S0N2-LABEL: "name": "train_step"
// S0N2:      "zero": {
// S0N2-NEXT:   "ranks": 2,
// S0N2-NEXT:   "stage": 0,
// S0N2-NEXT:   "stage_source": "attribute",
// S0N2-NEXT:   "psi": 10,
// S0N2:      "param": {
// S0N2-NEXT:   "bytes": 40,
// S0N2:        "padding_bytes": 0
// S0N2:      "grad": {
// S0N2-NEXT:   "bytes": 40,
// S0N2:        "padding_bytes": 0
// S0N2:      "optimizer_state": {
// S0N2-NEXT:   "bytes": 80,
// S0N2:        "padding_bytes": 0
// S0N2:      "optimizer_counter_bytes": 8,
// S0N2-NEXT: "model_state_bytes": 160,
// S0N2-NEXT: "model_state_padding_bytes": 0
// S0N2:      "case": "fp32 Adam",
// S0N2:      "expression": "16Ψ",
// S0N2-NEXT: "bytes": 160,
// S0N2-NEXT: "ratio": 1,
// S0N2-NEXT: "ratio_without_padding": 1
// S0N2:      "communication": {
// S0N2:      "all_reduce": {
// S0N2-NEXT:   "count": 1,
// S0N2-NEXT:   "elements": 10,
// S0N2-NEXT:   "bytes": 40,
// S0N2-NEXT:   "paper_elements": 20,
// S0N2-NEXT:   "paper_bytes": 80,
// S0N2-NEXT:   "ring_elements_per_rank": 10,
// S0N2-NEXT:   "ring_bytes_per_rank": 40
// S0N2:      "reduce_scatter": {
// S0N2-NEXT:   "count": 0,
// S0N2-NEXT:   "elements": 0,
// S0N2-NEXT:   "bytes": 0,
// S0N2-NEXT:   "paper_elements": 0,
// S0N2-NEXT:   "paper_bytes": 0,
// S0N2-NEXT:   "ring_elements_per_rank": 0,
// S0N2-NEXT:   "ring_bytes_per_rank": 0
// S0N2:      "all_gather": {
// S0N2-NEXT:   "count": 0,
// S0N2-NEXT:   "elements": 0,
// S0N2-NEXT:   "bytes": 0,
// S0N2-NEXT:   "paper_elements": 0,
// S0N2-NEXT:   "paper_bytes": 0,
// S0N2-NEXT:   "ring_elements_per_rank": 0,
// S0N2-NEXT:   "ring_bytes_per_rank": 0
// S0N2:      "all_slice": {
// S0N2-NEXT:   "count": 0,
// S0N2-NEXT:   "elements": 0,
// S0N2-NEXT:   "bytes": 0,
// S0N2-NEXT:   "paper_elements": 0,
// S0N2-NEXT:   "paper_bytes": 0,
// S0N2-NEXT:   "ring_elements_per_rank": 0,
// S0N2-NEXT:   "ring_bytes_per_rank": 0
// S0N2:      "total": {
// S0N2:        "paper_elements": 20,
// S0N2:        "ring_elements_per_rank": 10,
// S0N2-NEXT:   "ring_bytes_per_rank": 40
// S0N2:      "paper_volume_elements": 20,
// S0N2-NEXT: "paper_ratio": 1
// S0N2:      "available": false,
// S0N2-NEXT: "note": "the step is not bufferized and planned: run --mw-train-pipeline{{.*}}"

// Stage 0, N = 4: the same 160 B per rank; a ring sends 2·3/4·10 = 15
// elements (60 B) per rank.
// S0N4-LABEL: "name": "train_step"
// S0N4:      "zero": {
// S0N4-NEXT:   "ranks": 4,
// S0N4-NEXT:   "stage": 0,
// S0N4-NEXT:   "stage_source": "attribute",
// S0N4-NEXT:   "psi": 10,
// S0N4:      "param": {
// S0N4-NEXT:   "bytes": 40,
// S0N4:        "padding_bytes": 0
// S0N4:      "grad": {
// S0N4-NEXT:   "bytes": 40,
// S0N4:        "padding_bytes": 0
// S0N4:      "optimizer_state": {
// S0N4-NEXT:   "bytes": 80,
// S0N4:        "padding_bytes": 0
// S0N4:      "optimizer_counter_bytes": 8,
// S0N4-NEXT: "model_state_bytes": 160,
// S0N4-NEXT: "model_state_padding_bytes": 0
// S0N4:      "case": "fp32 Adam",
// S0N4:      "expression": "16Ψ",
// S0N4-NEXT: "bytes": 160,
// S0N4-NEXT: "ratio": 1,
// S0N4-NEXT: "ratio_without_padding": 1
// S0N4:      "communication": {
// S0N4:      "all_reduce": {
// S0N4-NEXT:   "count": 1,
// S0N4-NEXT:   "elements": 10,
// S0N4-NEXT:   "bytes": 40,
// S0N4-NEXT:   "paper_elements": 20,
// S0N4-NEXT:   "paper_bytes": 80,
// S0N4-NEXT:   "ring_elements_per_rank": 15,
// S0N4-NEXT:   "ring_bytes_per_rank": 60
// S0N4:      "reduce_scatter": {
// S0N4-NEXT:   "count": 0,
// S0N4-NEXT:   "elements": 0,
// S0N4-NEXT:   "bytes": 0,
// S0N4-NEXT:   "paper_elements": 0,
// S0N4-NEXT:   "paper_bytes": 0,
// S0N4-NEXT:   "ring_elements_per_rank": 0,
// S0N4-NEXT:   "ring_bytes_per_rank": 0
// S0N4:      "all_gather": {
// S0N4-NEXT:   "count": 0,
// S0N4-NEXT:   "elements": 0,
// S0N4-NEXT:   "bytes": 0,
// S0N4-NEXT:   "paper_elements": 0,
// S0N4-NEXT:   "paper_bytes": 0,
// S0N4-NEXT:   "ring_elements_per_rank": 0,
// S0N4-NEXT:   "ring_bytes_per_rank": 0
// S0N4:      "all_slice": {
// S0N4-NEXT:   "count": 0,
// S0N4-NEXT:   "elements": 0,
// S0N4-NEXT:   "bytes": 0,
// S0N4-NEXT:   "paper_elements": 0,
// S0N4-NEXT:   "paper_bytes": 0,
// S0N4-NEXT:   "ring_elements_per_rank": 0,
// S0N4-NEXT:   "ring_bytes_per_rank": 0
// S0N4:      "total": {
// S0N4:        "paper_elements": 20,
// S0N4:        "ring_elements_per_rank": 15,
// S0N4-NEXT:   "ring_bytes_per_rank": 60
// S0N4:      "paper_volume_elements": 20,
// S0N4-NEXT: "paper_ratio": 1
// S0N4:      "available": false,
// S0N4-NEXT: "note": "the step is not bufferized and planned: run --mw-train-pipeline{{.*}}"

// Stage 1, N = 2: parameters whole (40 B), the whole 10-float gradient
// bucket until the update (40 B), the rank's 5-float pieces of exp_avg and
// exp_avg_sq (40 B): 120 B = 8Ψ + 8Ψ/N. Communication: reduce_scatter of
// S = 10 (ring 5 per rank), all_gather of the 10 updated floats (ring 5),
// all_slice 0: 20 = 2Ψ.
// S1N2-LABEL: "name": "train_step"
// S1N2:      "zero": {
// S1N2-NEXT:   "ranks": 2,
// S1N2-NEXT:   "stage": 1,
// S1N2-NEXT:   "stage_source": "attribute",
// S1N2-NEXT:   "psi": 10,
// S1N2:      "param": {
// S1N2-NEXT:   "bytes": 40,
// S1N2:        "padding_bytes": 0
// S1N2:      "grad": {
// S1N2-NEXT:   "bytes": 40,
// S1N2:        "padding_bytes": 0
// S1N2:      "optimizer_state": {
// S1N2-NEXT:   "bytes": 40,
// S1N2:        "padding_bytes": 0
// S1N2:      "optimizer_counter_bytes": 8,
// S1N2-NEXT: "model_state_bytes": 120,
// S1N2-NEXT: "model_state_padding_bytes": 0
// S1N2:      "case": "fp32 Adam",
// S1N2:      "expression": "8Ψ + 8Ψ/N",
// S1N2-NEXT: "bytes": 120,
// S1N2-NEXT: "ratio": 1,
// S1N2-NEXT: "ratio_without_padding": 1
// S1N2:      "communication": {
// S1N2:      "all_reduce": {
// S1N2-NEXT:   "count": 0,
// S1N2-NEXT:   "elements": 0,
// S1N2-NEXT:   "bytes": 0,
// S1N2-NEXT:   "paper_elements": 0,
// S1N2-NEXT:   "paper_bytes": 0,
// S1N2-NEXT:   "ring_elements_per_rank": 0,
// S1N2-NEXT:   "ring_bytes_per_rank": 0
// S1N2:      "reduce_scatter": {
// S1N2-NEXT:   "count": 1,
// S1N2-NEXT:   "elements": 10,
// S1N2-NEXT:   "bytes": 40,
// S1N2-NEXT:   "paper_elements": 10,
// S1N2-NEXT:   "paper_bytes": 40,
// S1N2-NEXT:   "ring_elements_per_rank": 5,
// S1N2-NEXT:   "ring_bytes_per_rank": 20
// S1N2:      "all_gather": {
// S1N2-NEXT:   "count": 1,
// S1N2-NEXT:   "elements": 10,
// S1N2-NEXT:   "bytes": 40,
// S1N2-NEXT:   "paper_elements": 10,
// S1N2-NEXT:   "paper_bytes": 40,
// S1N2-NEXT:   "ring_elements_per_rank": 5,
// S1N2-NEXT:   "ring_bytes_per_rank": 20
// S1N2:      "all_slice": {
// S1N2-NEXT:   "count": 1,
// S1N2-NEXT:   "elements": 0,
// S1N2-NEXT:   "bytes": 0,
// S1N2-NEXT:   "paper_elements": 0,
// S1N2-NEXT:   "paper_bytes": 0,
// S1N2-NEXT:   "ring_elements_per_rank": 0,
// S1N2-NEXT:   "ring_bytes_per_rank": 0
// S1N2:      "total": {
// S1N2:        "paper_elements": 20,
// S1N2:        "ring_elements_per_rank": 10,
// S1N2-NEXT:   "ring_bytes_per_rank": 40
// S1N2:      "paper_volume_elements": 20,
// S1N2-NEXT: "paper_ratio": 1
// S1N2:      "available": false,
// S1N2-NEXT: "note": "the step is not bufferized and planned: run --mw-train-pipeline{{.*}}"

// Stage 1, N = 4: the bucket is padded to 12 floats (3 per rank). The
// whole bucket is 48 B, 8 B of them padding; the state pieces are 2·12 B =
// 24 B, of which 2·10·4/4 = 20 B is the rank's share, 4 B padding. 112 B,
// 12 B padding: 100 B = 8Ψ + 8Ψ/N without it (ratio 1), 112/100 with it.
// The collectives move the padding too: 12 + 12 = 24 elements, 1.2 × 2Ψ;
// a ring sends 3/4 of each: 9 + 9 = 18 elements (72 B) per rank.
// S1N4-LABEL: "name": "train_step"
// S1N4:      "zero": {
// S1N4-NEXT:   "ranks": 4,
// S1N4-NEXT:   "stage": 1,
// S1N4-NEXT:   "stage_source": "attribute",
// S1N4-NEXT:   "psi": 10,
// S1N4:      "param": {
// S1N4-NEXT:   "bytes": 40,
// S1N4:        "padding_bytes": 0
// S1N4:      "grad": {
// S1N4-NEXT:   "bytes": 48,
// S1N4:        "padding_bytes": 8
// S1N4:      "optimizer_state": {
// S1N4-NEXT:   "bytes": 24,
// S1N4:        "padding_bytes": 4
// S1N4:      "optimizer_counter_bytes": 8,
// S1N4-NEXT: "model_state_bytes": 112,
// S1N4-NEXT: "model_state_padding_bytes": 12
// S1N4:      "case": "fp32 Adam",
// S1N4:      "expression": "8Ψ + 8Ψ/N",
// S1N4-NEXT: "bytes": 100,
// S1N4-NEXT: "ratio": {{.*}},
// S1N4-NEXT: "ratio_without_padding": 1
// S1N4:      "communication": {
// S1N4:      "all_reduce": {
// S1N4-NEXT:   "count": 0,
// S1N4-NEXT:   "elements": 0,
// S1N4-NEXT:   "bytes": 0,
// S1N4-NEXT:   "paper_elements": 0,
// S1N4-NEXT:   "paper_bytes": 0,
// S1N4-NEXT:   "ring_elements_per_rank": 0,
// S1N4-NEXT:   "ring_bytes_per_rank": 0
// S1N4:      "reduce_scatter": {
// S1N4-NEXT:   "count": 1,
// S1N4-NEXT:   "elements": 12,
// S1N4-NEXT:   "bytes": 48,
// S1N4-NEXT:   "paper_elements": 12,
// S1N4-NEXT:   "paper_bytes": 48,
// S1N4-NEXT:   "ring_elements_per_rank": 9,
// S1N4-NEXT:   "ring_bytes_per_rank": 36
// S1N4:      "all_gather": {
// S1N4-NEXT:   "count": 1,
// S1N4-NEXT:   "elements": 12,
// S1N4-NEXT:   "bytes": 48,
// S1N4-NEXT:   "paper_elements": 12,
// S1N4-NEXT:   "paper_bytes": 48,
// S1N4-NEXT:   "ring_elements_per_rank": 9,
// S1N4-NEXT:   "ring_bytes_per_rank": 36
// S1N4:      "all_slice": {
// S1N4-NEXT:   "count": 1,
// S1N4-NEXT:   "elements": 0,
// S1N4-NEXT:   "bytes": 0,
// S1N4-NEXT:   "paper_elements": 0,
// S1N4-NEXT:   "paper_bytes": 0,
// S1N4-NEXT:   "ring_elements_per_rank": 0,
// S1N4-NEXT:   "ring_bytes_per_rank": 0
// S1N4:      "total": {
// S1N4:        "paper_elements": 24,
// S1N4:        "ring_elements_per_rank": 18,
// S1N4-NEXT:   "ring_bytes_per_rank": 72
// S1N4:      "paper_volume_elements": 20,
// S1N4-NEXT: "paper_ratio": 1.2
// S1N4:      "available": false,
// S1N4-NEXT: "note": "the step is not bufferized and planned: run --mw-train-pipeline{{.*}}"

// Stage 2, N = 2: parameters whole (40 B), the reduced 5-float gradient
// piece (20 B), the state pieces (40 B): 100 B = 4Ψ + 12Ψ/N.
// S2N2-LABEL: "name": "train_step"
// S2N2:      "zero": {
// S2N2-NEXT:   "ranks": 2,
// S2N2-NEXT:   "stage": 2,
// S2N2-NEXT:   "stage_source": "attribute",
// S2N2-NEXT:   "psi": 10,
// S2N2:      "param": {
// S2N2-NEXT:   "bytes": 40,
// S2N2:        "padding_bytes": 0
// S2N2:      "grad": {
// S2N2-NEXT:   "bytes": 20,
// S2N2:        "padding_bytes": 0
// S2N2:      "optimizer_state": {
// S2N2-NEXT:   "bytes": 40,
// S2N2:        "padding_bytes": 0
// S2N2:      "optimizer_counter_bytes": 8,
// S2N2-NEXT: "model_state_bytes": 100,
// S2N2-NEXT: "model_state_padding_bytes": 0
// S2N2:      "case": "fp32 Adam",
// S2N2:      "expression": "4Ψ + 12Ψ/N",
// S2N2-NEXT: "bytes": 100,
// S2N2-NEXT: "ratio": 1,
// S2N2-NEXT: "ratio_without_padding": 1
// S2N2:      "communication": {
// S2N2:      "all_reduce": {
// S2N2-NEXT:   "count": 0,
// S2N2-NEXT:   "elements": 0,
// S2N2-NEXT:   "bytes": 0,
// S2N2-NEXT:   "paper_elements": 0,
// S2N2-NEXT:   "paper_bytes": 0,
// S2N2-NEXT:   "ring_elements_per_rank": 0,
// S2N2-NEXT:   "ring_bytes_per_rank": 0
// S2N2:      "reduce_scatter": {
// S2N2-NEXT:   "count": 1,
// S2N2-NEXT:   "elements": 10,
// S2N2-NEXT:   "bytes": 40,
// S2N2-NEXT:   "paper_elements": 10,
// S2N2-NEXT:   "paper_bytes": 40,
// S2N2-NEXT:   "ring_elements_per_rank": 5,
// S2N2-NEXT:   "ring_bytes_per_rank": 20
// S2N2:      "all_gather": {
// S2N2-NEXT:   "count": 1,
// S2N2-NEXT:   "elements": 10,
// S2N2-NEXT:   "bytes": 40,
// S2N2-NEXT:   "paper_elements": 10,
// S2N2-NEXT:   "paper_bytes": 40,
// S2N2-NEXT:   "ring_elements_per_rank": 5,
// S2N2-NEXT:   "ring_bytes_per_rank": 20
// S2N2:      "all_slice": {
// S2N2-NEXT:   "count": 1,
// S2N2-NEXT:   "elements": 0,
// S2N2-NEXT:   "bytes": 0,
// S2N2-NEXT:   "paper_elements": 0,
// S2N2-NEXT:   "paper_bytes": 0,
// S2N2-NEXT:   "ring_elements_per_rank": 0,
// S2N2-NEXT:   "ring_bytes_per_rank": 0
// S2N2:      "total": {
// S2N2:        "paper_elements": 20,
// S2N2:        "ring_elements_per_rank": 10,
// S2N2-NEXT:   "ring_bytes_per_rank": 40
// S2N2:      "paper_volume_elements": 20,
// S2N2-NEXT: "paper_ratio": 1
// S2N2:      "available": false,
// S2N2-NEXT: "note": "the step is not bufferized and planned: run --mw-train-pipeline{{.*}}"

// Stage 2, N = 4: 40 B + a 3-float gradient piece (12 B, 2 B padding) +
// 24 B of state pieces (4 B padding): 76 B, 70 B = 4Ψ + 12Ψ/N without the
// 6 B of padding.
// S2N4-LABEL: "name": "train_step"
// S2N4:      "zero": {
// S2N4-NEXT:   "ranks": 4,
// S2N4-NEXT:   "stage": 2,
// S2N4-NEXT:   "stage_source": "attribute",
// S2N4-NEXT:   "psi": 10,
// S2N4:      "param": {
// S2N4-NEXT:   "bytes": 40,
// S2N4:        "padding_bytes": 0
// S2N4:      "grad": {
// S2N4-NEXT:   "bytes": 12,
// S2N4:        "padding_bytes": 2
// S2N4:      "optimizer_state": {
// S2N4-NEXT:   "bytes": 24,
// S2N4:        "padding_bytes": 4
// S2N4:      "optimizer_counter_bytes": 8,
// S2N4-NEXT: "model_state_bytes": 76,
// S2N4-NEXT: "model_state_padding_bytes": 6
// S2N4:      "case": "fp32 Adam",
// S2N4:      "expression": "4Ψ + 12Ψ/N",
// S2N4-NEXT: "bytes": 70,
// S2N4-NEXT: "ratio": {{.*}},
// S2N4-NEXT: "ratio_without_padding": 1
// S2N4:      "communication": {
// S2N4:      "all_reduce": {
// S2N4-NEXT:   "count": 0,
// S2N4-NEXT:   "elements": 0,
// S2N4-NEXT:   "bytes": 0,
// S2N4-NEXT:   "paper_elements": 0,
// S2N4-NEXT:   "paper_bytes": 0,
// S2N4-NEXT:   "ring_elements_per_rank": 0,
// S2N4-NEXT:   "ring_bytes_per_rank": 0
// S2N4:      "reduce_scatter": {
// S2N4-NEXT:   "count": 1,
// S2N4-NEXT:   "elements": 12,
// S2N4-NEXT:   "bytes": 48,
// S2N4-NEXT:   "paper_elements": 12,
// S2N4-NEXT:   "paper_bytes": 48,
// S2N4-NEXT:   "ring_elements_per_rank": 9,
// S2N4-NEXT:   "ring_bytes_per_rank": 36
// S2N4:      "all_gather": {
// S2N4-NEXT:   "count": 1,
// S2N4-NEXT:   "elements": 12,
// S2N4-NEXT:   "bytes": 48,
// S2N4-NEXT:   "paper_elements": 12,
// S2N4-NEXT:   "paper_bytes": 48,
// S2N4-NEXT:   "ring_elements_per_rank": 9,
// S2N4-NEXT:   "ring_bytes_per_rank": 36
// S2N4:      "all_slice": {
// S2N4-NEXT:   "count": 1,
// S2N4-NEXT:   "elements": 0,
// S2N4-NEXT:   "bytes": 0,
// S2N4-NEXT:   "paper_elements": 0,
// S2N4-NEXT:   "paper_bytes": 0,
// S2N4-NEXT:   "ring_elements_per_rank": 0,
// S2N4-NEXT:   "ring_bytes_per_rank": 0
// S2N4:      "total": {
// S2N4:        "paper_elements": 24,
// S2N4:        "ring_elements_per_rank": 18,
// S2N4-NEXT:   "ring_bytes_per_rank": 72
// S2N4:      "paper_volume_elements": 20,
// S2N4-NEXT: "paper_ratio": 1.2
// S2N4:      "available": false,
// S2N4-NEXT: "note": "the step is not bufferized and planned: run --mw-train-pipeline{{.*}}"

// Stage 3, N = 2: the parameters are a 5-float piece too (20 B), the
// gradient piece 20 B, the state 40 B: 80 B = 16Ψ/N. The forward pass
// gathers the parameters once (10 elements, ring 5) and nothing gathers
// them for the backward pass (this model's backward pass needs no weight),
// so the step moves 20 elements where the paper counts 3Ψ = 30: 2/3.
// S3N2-LABEL: "name": "train_step"
// S3N2:      "zero": {
// S3N2-NEXT:   "ranks": 2,
// S3N2-NEXT:   "stage": 3,
// S3N2-NEXT:   "stage_source": "attribute",
// S3N2-NEXT:   "psi": 10,
// S3N2:      "param": {
// S3N2-NEXT:   "bytes": 20,
// S3N2:        "padding_bytes": 0
// S3N2:      "grad": {
// S3N2-NEXT:   "bytes": 20,
// S3N2:        "padding_bytes": 0
// S3N2:      "optimizer_state": {
// S3N2-NEXT:   "bytes": 40,
// S3N2:        "padding_bytes": 0
// S3N2:      "optimizer_counter_bytes": 8,
// S3N2-NEXT: "model_state_bytes": 80,
// S3N2-NEXT: "model_state_padding_bytes": 0
// S3N2:      "case": "fp32 Adam",
// S3N2:      "expression": "16Ψ/N",
// S3N2-NEXT: "bytes": 80,
// S3N2-NEXT: "ratio": 1,
// S3N2-NEXT: "ratio_without_padding": 1
// S3N2:      "communication": {
// S3N2:      "all_reduce": {
// S3N2-NEXT:   "count": 0,
// S3N2-NEXT:   "elements": 0,
// S3N2-NEXT:   "bytes": 0,
// S3N2-NEXT:   "paper_elements": 0,
// S3N2-NEXT:   "paper_bytes": 0,
// S3N2-NEXT:   "ring_elements_per_rank": 0,
// S3N2-NEXT:   "ring_bytes_per_rank": 0
// S3N2:      "reduce_scatter": {
// S3N2-NEXT:   "count": 1,
// S3N2-NEXT:   "elements": 10,
// S3N2-NEXT:   "bytes": 40,
// S3N2-NEXT:   "paper_elements": 10,
// S3N2-NEXT:   "paper_bytes": 40,
// S3N2-NEXT:   "ring_elements_per_rank": 5,
// S3N2-NEXT:   "ring_bytes_per_rank": 20
// S3N2:      "all_gather": {
// S3N2-NEXT:   "count": 1,
// S3N2-NEXT:   "elements": 10,
// S3N2-NEXT:   "bytes": 40,
// S3N2-NEXT:   "paper_elements": 10,
// S3N2-NEXT:   "paper_bytes": 40,
// S3N2-NEXT:   "ring_elements_per_rank": 5,
// S3N2-NEXT:   "ring_bytes_per_rank": 20
// S3N2:      "all_slice": {
// S3N2-NEXT:   "count": 0,
// S3N2-NEXT:   "elements": 0,
// S3N2-NEXT:   "bytes": 0,
// S3N2-NEXT:   "paper_elements": 0,
// S3N2-NEXT:   "paper_bytes": 0,
// S3N2-NEXT:   "ring_elements_per_rank": 0,
// S3N2-NEXT:   "ring_bytes_per_rank": 0
// S3N2:      "total": {
// S3N2:        "paper_elements": 20,
// S3N2:        "ring_elements_per_rank": 10,
// S3N2-NEXT:   "ring_bytes_per_rank": 40
// S3N2:      "paper_volume_elements": 30,
// S3N2-NEXT: "paper_ratio": 0.66666666666666663
// S3N2:      "available": false,
// S3N2-NEXT: "note": "the step is not bufferized and planned: run --mw-train-pipeline{{.*}}"

// Stage 3, N = 4: 12 + 12 + 24 = 48 B, 2 + 2 + 4 = 8 B of them padding:
// 40 B = 16Ψ/N without it. 24 elements moved against 3Ψ = 30: 0.8.
// S3N4-LABEL: "name": "train_step"
// S3N4:      "zero": {
// S3N4-NEXT:   "ranks": 4,
// S3N4-NEXT:   "stage": 3,
// S3N4-NEXT:   "stage_source": "attribute",
// S3N4-NEXT:   "psi": 10,
// S3N4:      "param": {
// S3N4-NEXT:   "bytes": 12,
// S3N4:        "padding_bytes": 2
// S3N4:      "grad": {
// S3N4-NEXT:   "bytes": 12,
// S3N4:        "padding_bytes": 2
// S3N4:      "optimizer_state": {
// S3N4-NEXT:   "bytes": 24,
// S3N4:        "padding_bytes": 4
// S3N4:      "optimizer_counter_bytes": 8,
// S3N4-NEXT: "model_state_bytes": 48,
// S3N4-NEXT: "model_state_padding_bytes": 8
// S3N4:      "case": "fp32 Adam",
// S3N4:      "expression": "16Ψ/N",
// S3N4-NEXT: "bytes": 40,
// S3N4-NEXT: "ratio": 1.2,
// S3N4-NEXT: "ratio_without_padding": 1
// S3N4:      "communication": {
// S3N4:      "all_reduce": {
// S3N4-NEXT:   "count": 0,
// S3N4-NEXT:   "elements": 0,
// S3N4-NEXT:   "bytes": 0,
// S3N4-NEXT:   "paper_elements": 0,
// S3N4-NEXT:   "paper_bytes": 0,
// S3N4-NEXT:   "ring_elements_per_rank": 0,
// S3N4-NEXT:   "ring_bytes_per_rank": 0
// S3N4:      "reduce_scatter": {
// S3N4-NEXT:   "count": 1,
// S3N4-NEXT:   "elements": 12,
// S3N4-NEXT:   "bytes": 48,
// S3N4-NEXT:   "paper_elements": 12,
// S3N4-NEXT:   "paper_bytes": 48,
// S3N4-NEXT:   "ring_elements_per_rank": 9,
// S3N4-NEXT:   "ring_bytes_per_rank": 36
// S3N4:      "all_gather": {
// S3N4-NEXT:   "count": 1,
// S3N4-NEXT:   "elements": 12,
// S3N4-NEXT:   "bytes": 48,
// S3N4-NEXT:   "paper_elements": 12,
// S3N4-NEXT:   "paper_bytes": 48,
// S3N4-NEXT:   "ring_elements_per_rank": 9,
// S3N4-NEXT:   "ring_bytes_per_rank": 36
// S3N4:      "all_slice": {
// S3N4-NEXT:   "count": 0,
// S3N4-NEXT:   "elements": 0,
// S3N4-NEXT:   "bytes": 0,
// S3N4-NEXT:   "paper_elements": 0,
// S3N4-NEXT:   "paper_bytes": 0,
// S3N4-NEXT:   "ring_elements_per_rank": 0,
// S3N4-NEXT:   "ring_bytes_per_rank": 0
// S3N4:      "total": {
// S3N4:        "paper_elements": 24,
// S3N4:        "ring_elements_per_rank": 18,
// S3N4-NEXT:   "ring_bytes_per_rank": 72
// S3N4:      "paper_volume_elements": 30,
// S3N4-NEXT: "paper_ratio": 0.80000000000000004
// S3N4:      "available": false,
// S3N4-NEXT: "note": "the step is not bufferized and planned: run --mw-train-pipeline{{.*}}"

// A generated model as a sanity check of the formula: mlp-tiny has
// Ψ = 6922 parameters in one bucket, padded to 6924 over 4 ranks (1731 per
// rank). Stage 1: 4Ψ parameters + the whole padded bucket 4·6924 + two state
// pieces 2·4·1731 = 27688 + 27696 + 13848 = 69232 B, 12 B of padding; the
// formula 8Ψ + 8Ψ/N = 69220 B. Stage 3: three pieces 4·1731 each
// (parameters, gradients) and 2·4·1731 (state) = 27696 B, 8 B of padding;
// 16Ψ/N = 27688 B. Its backward pass needs the weights, so stage 3 gathers
// the bucket twice: 2·6924 + 6924 = 20772 elements against 3Ψ = 20766.
// RUN: mw-models mlp --preset mlp-tiny --train | mw-opt --mw-zero="stage=1 ranks=4 persistence-threshold=0" --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=MLP1
// RUN: mw-models mlp --preset mlp-tiny --train | mw-opt --mw-zero="stage=3 ranks=4 persistence-threshold=0" --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=MLP3
// MLP1:      "zero": {
// MLP1:      "stage": 1,
// MLP1:      "psi": 6922,
// MLP1:      "model_state_bytes": 69232,
// MLP1-NEXT: "model_state_padding_bytes": 12
// MLP1:      "expression": "8Ψ + 8Ψ/N",
// MLP1-NEXT: "bytes": 69220,
// MLP1:      "ratio_without_padding": 1
// MLP3:      "zero": {
// MLP3:      "stage": 3,
// MLP3:      "psi": 6922,
// MLP3:      "model_state_bytes": 27696,
// MLP3-NEXT: "model_state_padding_bytes": 8
// MLP3:      "expression": "16Ψ/N",
// MLP3-NEXT: "bytes": 27688,
// MLP3:      "ratio_without_padding": 1
// MLP3:      "all_gather": {
// MLP3-NEXT:   "count": 2,
// MLP3-NEXT:   "elements": 13848,
// MLP3:      "total": {
// MLP3:        "paper_elements": 20772,
// MLP3:      "paper_volume_elements": 20766,
