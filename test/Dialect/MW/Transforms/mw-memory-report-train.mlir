// The training-step figures of the memory report, worked by hand for the
// linear classifier in Inputs/ (W 8x4 f32 = 128 B, b 4xf32 = 16 B, batch 2):
// - grad_bytes: the gradients the optimizer consumes, 128 + 16 = 144;
// - optimizer_state_bytes: AdamW's two moments per parameter and the i64 step,
//   2 * 144 + 8 = 296 (SGD without momentum keeps none);
// - saved_activation_bytes: forward values the backward pass reads: the
//   logits (2x4 f32 = 32 B) for cross_entropy_grad; the matmul result feeds
//   only the forward add, and arguments are not activations.
// RUN: mw-opt %S/Inputs/linear-classifier.mlir --mw-autodiff --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=ADAM
// RUN: mw-opt %S/Inputs/linear-classifier.mlir --mw-autodiff="optimizer=sgd" --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=SGD
// RUN: mw-opt %S/Inputs/linear-classifier.mlir --mw-autodiff --mw-memory-report -o /dev/null | FileCheck %s --check-prefix=TEXT

// The forward function alone saves nothing.
// ADAM:       "name": "forward",
// ADAM:       "grad_bytes": 0,
// ADAM-NEXT:  "optimizer_state_bytes": 0,
// ADAM-NEXT:  "saved_activation_bytes": 0,
// ADAM:       "name": "train_step",
// ADAM:       "grad_bytes": 144,
// ADAM-NEXT:  "optimizer_state_bytes": 296,
// ADAM-NEXT:  "saved_activation_bytes": 32,
// ADAM:       "bytes_by_dtype": {
// ADAM-NEXT:    "param": {
// ADAM-NEXT:      "f32": 144
// ADAM-NEXT:    },
// ADAM-NEXT:    "optimizer_state": {
// ADAM-NEXT:      "f32": 288,
// ADAM-NEXT:      "i64": 8
// ADAM-NEXT:    },
// ADAM-NEXT:    "grad": {
// ADAM-NEXT:      "f32": 144
// ADAM-NEXT:    },
// ADAM-NEXT:    "saved_activation": {
// ADAM-NEXT:      "f32": 32
// ADAM-NEXT:    }
// ADAM-NEXT:  }

// SGD:        "name": "train_step",
// SGD:        "grad_bytes": 144,
// SGD-NEXT:   "optimizer_state_bytes": 0,
// SGD-NEXT:   "saved_activation_bytes": 32,

// TEXT-LABEL: mw-memory-report @train_step
// TEXT:       gradients               144 (144 B)
// TEXT-NEXT:  optimizer state         296 (296 B)
// TEXT-NEXT:  saved activations       32 (32 B)
// TEXT-NEXT:  param by dtype: f32 144 B
// TEXT-NEXT:  optimizer_state by dtype: f32 288 B i64 8 B
