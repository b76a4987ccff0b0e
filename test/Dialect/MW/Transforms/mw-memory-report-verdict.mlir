// The verdict of --mw-memory-report on gpt2-tiny's training step at batch 4.
// Its per-rank peak is 2841620 B: arena 1418240 + persistent 1423380 (the
// same whether the report plans a copy of the tensor-level step or reads the
// step --mw-train-pipeline planned). The runtime overhead the report counts
// is the CUDA backend's cuBLASLt workspace (32 MiB = 33554432 B) and its
// attention scratch, the largest request of one kernel: mw.attention_grad's
// (2*B*H*S*S + B*H*S + 1) f32 = (2*4*4*32*32 + 4*4*32 + 1) * 4 = 133124 B.
// Required: 2841620 + 33554432 + 133124 = 36529176 B.
//
// RUN: mw-models gpt --preset gpt2-tiny --batch 4 --train -o %t.mlir
//
// Fits with room to spare; no suggestions.
// RUN: mw-opt %t.mlir --mw-memory-report="device-memory=1GB" -o /dev/null | FileCheck %s --check-prefix=FITS
// RUN: mw-opt %t.mlir --mw-memory-report="device-memory=1GB format=json" -o /dev/null | FileCheck %s --check-prefix=FITS-JSON
// The planned step: the peak is its plan's.
// RUN: mw-opt %t.mlir --mw-train-pipeline --mw-memory-report="device-memory=1GB" -o /dev/null | FileCheck %s --check-prefix=PLANNED
//
// 129176 B short of 36.4 MB: every kind of change is predicted, and each fits.
// RUN: mw-opt %t.mlir --mw-memory-report="device-memory=36.4MB ranks=2" -o /dev/null | FileCheck %s --check-prefix=SHORT
// RUN: mw-opt %t.mlir --mw-memory-report="device-memory=36.4MB ranks=2 format=json" -o /dev/null | FileCheck %s --check-prefix=SHORT-JSON
//
// The suggested remat budget, applied, fits.
// RUN: mw-opt %t.mlir --mw-remat="budget=2712KB" --mw-memory-report="device-memory=36.4MB" -o /dev/null | FileCheck %s --check-prefix=APPLIED
//
// A named device without bf16 gets fp16, which here does not fit; without
// ranks= ZeRO is not predicted.
// RUN: mw-opt %t.mlir --mw-memory-report="target=V100-16GB device-memory=36.4MB" -o /dev/null | FileCheck %s --check-prefix=V100
//
// Far too small: no change fits; remat says what stops it.
// RUN: mw-opt %t.mlir --mw-memory-report="device-memory=35MB" -o /dev/null | FileCheck %s --check-prefix=NONE
//
// A planned step that does not fit: changes need the tensor-level step.
// RUN: mw-opt %t.mlir --mw-train-pipeline --mw-memory-report="device-memory=35MB" -o /dev/null | FileCheck %s --check-prefix=PLANNED-SHORT
//
// A ZeRO step: the peak is one rank's; a later stage needs the step before
// --mw-zero; mw-models takes the global batch.
// RUN: mw-opt %t.mlir --mw-zero="stage=2 ranks=2" --mw-memory-report="device-memory=35MB ranks=2" -o /dev/null | FileCheck %s --check-prefix=ZERO
//
// chunk-loss on a step already in chunks, and on one whose chunks would
// raise the peak (llama-tiny's untied head at batch 2): not predicted.
// RUN: mw-opt %t.mlir --mw-chunk-loss --mw-memory-report="device-memory=35MB" -o /dev/null | FileCheck %s --check-prefix=CHUNKED
// CHUNKED: chunk-loss not predicted: the step's loss is already computed in chunks (--mw-chunk-loss)
// RUN: mw-models llama --preset llama-tiny --train -o %t.llama.mlir
// RUN: mw-opt %t.llama.mlir --mw-memory-report="device-memory=34MB" -o /dev/null | FileCheck %s --check-prefix=WHOLE
// WHOLE: chunk-loss not predicted: --mw-chunk-loss leaves the step's loss whole (--mw-chunk-loss=report=true says why: in chunks its live tensor peak would be higher, or the head cannot be split)
//
// A named device's memory is its marketed size in GB (10^9 bytes); names are
// case-insensitive.
// RUN: mw-opt %t.mlir --mw-memory-report="target=h200-141gb format=json" -o /dev/null | FileCheck %s --check-prefix=H200

// FITS:      mw-memory-report verdict @train_step on device-memory=1GB (1.00 GB = 953.67 MiB)
// FITS-NEXT:   step peak               2841620 (2.84 MB = 2.71 MiB); arena 1418240 + persistent 1423380, measured: --mw-train-pipeline on a copy
// FITS-NEXT:   runtime overhead        33687556 (33.69 MB = 32.13 MiB); cuBLASLt workspace 32.00 MiB, attention scratch 130.00 KiB (mw.attention_grad)
// FITS-NEXT:   not counted             the CUDA context and loaded kernels, NCCL's buffers, the scratch of strided matmul operands
// FITS-NEXT:   required                36529176 (36.53 MB = 34.84 MiB)
// FITS-NEXT:   verdict                 fits: 963.47 MB = 918.84 MiB to spare (96.3% of the device)
// FITS-NOT:  changes

// FITS-JSON:      "verdict": {
// FITS-JSON-NEXT:   "function": "train_step",
// FITS-JSON-NEXT:   "device": "device-memory=1GB",
// FITS-JSON-NEXT:   "device_memory_bytes": 1000000000,
// FITS-JSON-NEXT:   "peak_bytes": 2841620,
// FITS-JSON-NEXT:   "peak_source": "measured: --mw-train-pipeline on a copy",
// FITS-JSON-NEXT:   "arena_bytes": 1418240,
// FITS-JSON-NEXT:   "persistent_bytes": 1423380,
// FITS-JSON-NEXT:   "overhead": {
// FITS-JSON-NEXT:     "cublas_workspace_bytes": 33554432,
// FITS-JSON-NEXT:     "attention_scratch_bytes": 133124,
// FITS-JSON-NEXT:     "total_bytes": 33687556
// FITS-JSON:        "required_bytes": 36529176,
// FITS-JSON-NEXT:   "margin_bytes": 963470824,
// FITS-JSON-NEXT:   "fits": true,
// FITS-JSON-NEXT:   "suggestions": []

// PLANNED: step peak               2841620 (2.84 MB = 2.71 MiB); arena 1418240 + persistent 1423380, planned
// PLANNED: verdict                 fits:

// SHORT:      verdict                 does not fit: short by 129.18 KB = 126.15 KiB
// SHORT-NEXT: changes (predicted peak + overhead; cost):
// The remat budget is the device less the overhead, 36400000 - 33687556 B,
// in whole KB; the peak is measured on the rematerialized copy.
// SHORT-NEXT:   remat      --mw-remat="budget=2712KB"
// SHORT-NEXT:              fits: 36.40 MB = 34.71 MiB (measured); +262144 recompute FLOPs (0.3% of the step)
// SHORT-NEXT:              bit-exact: recomputes forward values in the backward pass
// --mw-chunk-loss on a copy, the tied weight's gradient deferred: its extra
// FLOPs are the chunks' logits made again (and their sums).
// SHORT-NEXT:   chunk-loss --mw-chunk-loss="chunks=8 defer-weight-grad=true"
// SHORT-NEXT:              does not fit: 36.50 MB = 34.81 MiB (measured); +4472839 FLOPs (4.6% of the step)
// SHORT-NEXT:              the LM head's logits 8 chunks of rows at a time; the loss and the head's weight gradient sum over the rows in another order; the tied weight's gradient is made where the embedding's is, each chunk's logits made again
// SHORT-NEXT:   grad-accum --mw-autodiff grad-accum=2 on a forward of micro-batch 2 (mw-models --batch 4 --grad-accum 2)
// SHORT-NEXT:              fits: 36.28 MB = 34.60 MiB (estimate)
// SHORT-NEXT:              the saved activations (1.32 MB) and the attention scratch scale with the micro-batch; the accumulated gradients (474.11 KB) stay live
// SHORT-NEXT:   precision  --mw-autodiff precision=bf16 on a bf16 forward (mw-models --precision bf16)
// SHORT-NEXT:              fits: 36.11 MB = 34.43 MiB (estimate)
// SHORT-NEXT:              the f32 saved activations (1.32 MB) halve, and the backward pass keeps 16-bit copies of the weights (237.06 KB)
// SHORT-NEXT:   zero       --mw-zero="stage=0 ranks=2"
// SHORT-NEXT:              fits: 35.99 MB = 34.32 MiB (measured); sends 474.12 KB per rank per step
// SHORT-NEXT:              per rank of 2, each taking 1/2 of the batch (plain data parallel, nothing sharded)
// SHORT-NEXT:   zero       --mw-zero="stage=1 ranks=2"
// SHORT:        zero       --mw-zero="stage=2 ranks=2"
// SHORT:        zero       --mw-zero="stage=3 ranks=2"
// SHORT-NEXT:              fits: 35.99 MB = 34.32 MiB (measured); sends 474.12 KB per rank per step

// SHORT-JSON:      "margin_bytes": -129176,
// SHORT-JSON-NEXT: "fits": false,
// SHORT-JSON-NEXT: "suggestions": [
// SHORT-JSON-NEXT:   {
// SHORT-JSON-NEXT:     "kind": "remat",
// SHORT-JSON-NEXT:     "change": "--mw-remat=\"budget=2712KB\"",
// SHORT-JSON-NEXT:     "basis": "measured",
// SHORT-JSON-NEXT:     "peak_bytes": 2710548,
// SHORT-JSON-NEXT:     "required_bytes": 36398104,
// SHORT-JSON-NEXT:     "fits": true,
// SHORT-JSON-NEXT:     "extra_flops": 262144,
// SHORT-JSON:          "kind": "chunk-loss",
// SHORT-JSON-NEXT:     "change": "--mw-chunk-loss=\"chunks=8 defer-weight-grad=true\"",
// SHORT-JSON-NEXT:     "basis": "measured",
// SHORT-JSON-NEXT:     "peak_bytes": 2808340,
// SHORT-JSON-NEXT:     "required_bytes": 36495896,
// SHORT-JSON-NEXT:     "fits": false,
// SHORT-JSON-NEXT:     "extra_flops": 4472839,
// SHORT-JSON:          "kind": "grad-accum",
// SHORT-JSON:          "basis": "estimate",
// SHORT-JSON:          "kind": "precision",
// SHORT-JSON:          "basis": "estimate",
// SHORT-JSON:          "kind": "zero",
// SHORT-JSON-NEXT:     "change": "--mw-zero=\"stage=0 ranks=2\"",
// SHORT-JSON-NEXT:     "basis": "measured",
// SHORT-JSON-NEXT:     "peak_bytes": 2371348,
// SHORT-JSON:          "communication_bytes": 474116,

// V100:      mw-memory-report verdict @train_step on V100-16GB with device-memory=36.4MB (36.40 MB = 34.71 MiB, Tesla V100 SXM2, 16 GB HBM2)
// V100:        remat      --mw-remat="budget=2712KB target=V100-16GB"
// V100:        precision  --mw-autodiff precision=fp16 on a fp16 forward (mw-models --precision fp16)
// The skip-on-overflow selects write the kept values back in place: no second
// copy of the parameters and state.
// V100-NEXT:              fits: 36.11 MB = 34.43 MiB (estimate)
// V100-NEXT:              {{.*}}dynamic loss scaling (V100-16GB has no bf16) skips overflowing steps in place
// V100-NEXT:    zero       not predicted: ZeRO shards model states across data-parallel ranks; give ranks=N to predict stages 0-3

// NONE:      verdict                 does not fit: short by 1.53 MB = 1.46 MiB
// NONE:        remat      --mw-remat="budget=1312KB"
// NONE-NEXT:              does not fit: {{.*}} (measured)
// NONE-NEXT:              no budget fits: the persistent state alone (parameters, optimizer state, inputs, outputs) is 1.42 MB = 1.36 MiB
// NONE:        grad-accum --mw-autodiff grad-accum=4
// NONE-NEXT:              does not fit:
// NONE:        precision
// NONE-NEXT:              does not fit:

// PLANNED-SHORT: verdict                 does not fit: short by 1.53 MB = 1.46 MiB
// PLANNED-SHORT-NEXT: changes (predicted peak + overhead; cost):
// PLANNED-SHORT-NEXT:   all        not predicted: the step is bufferized; run the report on the step before --mw-train-pipeline (on tensors) to predict changes

// H200:      "device": "H200-141GB",
// H200-NEXT: "device_memory_bytes": 141000000000,
// H200:      "fits": true,

// APPLIED: step peak               2710548 (2.71 MB = 2.58 MiB)
// APPLIED: verdict                 fits: 1.90 KB = 1.85 KiB to spare

// ZERO: step peak               2371348 (2.37 MB = 2.26 MiB); arena 948480 + persistent 1422868
// On a rank's rows the early chunks are the lower peak: not deferred.
// ZERO: chunk-loss --mw-chunk-loss=chunks=8
// ZERO-NEXT:          does not fit: 35.99 MB = 34.32 MiB (measured); +114695 FLOPs (0.2% of the step)
// ZERO: grad-accum --mw-autodiff grad-accum=2 on a forward of micro-batch 1 per rank (mw-models --batch 4 --grad-accum 2)
// ZERO: zero       not predicted: the step is already ZeRO stage 2 on 2 ranks; run the report on the step before --mw-zero
