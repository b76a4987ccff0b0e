// The largest preset's training step builds, verifies and reports: 1158
// parameter tensors, AdamW state for each, no weights materialized anywhere.
// grad_bytes = 4 x 174,604,259,328 (f32 gradients); optimizer state = 2 x that
// plus the i64 step counter.
// RUN: mw-models gpt --preset gpt3-175b --train | mw-opt --mw-memory-report=format=json -o /dev/null | FileCheck %s

// CHECK:      "name": "train_step",
// CHECK-NEXT: "param_count": 174604259328,
// CHECK:      "grad_bytes": 698417037312,
// CHECK-NEXT: "optimizer_state_bytes": 1396834074632,
