// The saved activations (what the forward part writes and the backward part
// reads, once per storage: StepStructure.h, findSavedActivations) are one
// figure on every form of gpt2-tiny's training step: on tensors as
// mw-models writes it, wrapped in tensor kernels, bufferized (memref.alloc
// buffers), and planned into the arena (views of one allocation). Issue 20:
// the planned step used to report 0. Unfused attention adds the [S, S]
// causal-mask constant and the [B, H, S, S] scores.

// RUN: mw-models gpt --preset gpt2-tiny --attention=unfused --train -o %t.u.mlir
// RUN: mw-opt %t.u.mlir --mw-memory-report -o /dev/null | FileCheck %s --check-prefix=UNFUSED
// RUN: mw-opt %t.u.mlir --mw-form-kernels | mw-opt --mw-memory-report -o /dev/null | FileCheck %s --check-prefix=UNFUSED
// RUN: mw-opt %t.u.mlir --mw-bufferize | mw-opt --mw-memory-report -o /dev/null | FileCheck %s --check-prefix=UNFUSED
// RUN: mw-opt %t.u.mlir --mw-train-pipeline | mw-opt --mw-memory-report -o /dev/null | FileCheck %s --check-prefixes=UNFUSED,PLANNED
// UNFUSED-LABEL: mw-memory-report @forward
// UNFUSED:       saved activations       0 (0 B)
// UNFUSED-LABEL: mw-memory-report @train_step
// UNFUSED:       saved activations       690696 (690.70 KB = 674.51 KiB)
// UNFUSED-NEXT:  param by dtype:
// UNFUSED-NEXT:  optimizer_state by dtype:
// UNFUSED-NEXT:  grad by dtype:
// UNFUSED-NEXT:  saved_activation by dtype: f32 674.51 KiB
// PLANNED:       arena

// RUN: mw-models gpt --preset gpt2-tiny --train -o %t.f.mlir
// RUN: mw-opt %t.f.mlir --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=FUSED
// RUN: mw-opt %t.f.mlir --mw-train-pipeline | mw-opt --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=FUSED
// FUSED:      "name": "train_step"
// FUSED:      "saved_activation_bytes": 659968
// FUSED:      "saved_activation": {
// FUSED-NEXT:   "f32": 659968
// FUSED-NEXT: }

// A ZeRO-2 step on two ranks: the same figure per rank before and after
// planning, with the collectives as kernels.
// RUN: mw-opt %t.f.mlir --mw-zero="stage=2 ranks=2" -o %t.z.mlir
// RUN: mw-opt %t.z.mlir --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=ZERO
// RUN: mw-opt %t.z.mlir --mw-train-pipeline | mw-opt --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=ZERO
// ZERO: "name": "train_step"
// ZERO: "saved_activation_bytes": 329984
