// --mw-offload=auto (docs/offload.md, "auto"): the planner weighs every
// pinned-layer count, prefetch depth and the largest batch that fits,
// prints the candidates, records them on the function and applies its
// choice as the explicit options would; --mw-memory-report's JSON carries
// them (offload_candidates, offload_choice).
//
// The fidelity check of issue 18 (also test/unit/OffloadAutoTest.cpp):
// OPT-30B-shaped f16 decode on target=v100. DeepSpeed's ZeRO-Inference: 43
// tokens/s with full offload, 18 with 12B parameters (19 layers + the
// embeddings) on the GPU; auto chooses full offload.
// RUN: mw-models opt --preset opt-30b-shaped --dtype f16 --inference --max-batch 1 -o %t.opt30b.mlir
// RUN: mw-opt %t.opt30b.mlir --mw-offload="auto target=v100 function=decode" -o %t.off.mlir 2>&1 | FileCheck %s --check-prefix=TABLE
// TABLE:      mw-offload auto: @decode on v100 (32.00 GB = 29.80 GiB, host link 12.0 GB/s), 48 layers of 1.23 GB = 1.15 GiB, resident 783.74 MB
// TABLE-NEXT:   workload: prefill 64 tokens, generate 32 per sequence (KV 1.38 MB = 1.31 MiB per token)
// TABLE-NEXT:  pinned prefetch  batch  fits    device GB  prefill s   decode s   tokens/s
// TABLE-NEXT:       0        0    217   yes
// TABLE-NEXT:       0        1    208   yes       31.884      8.337     4.9372      41.24  <- chosen
// TABLE:           19        0     47   yes       31.920      4.841     3.0554      15.11
// TABLE:           48        0      1    no
// TABLE-NEXT:   chosen: pinned-layers=0 prefetch=1 batch=208: 41.24 tokens/s predicted
// RUN: FileCheck %s --check-prefix=IR < %t.off.mlir
// IR: func.func @decode(
// IR-SAME: mw.offload = "cpu"
// IR-SAME: mw.offload = {layers = 48 : i64, pinned_layers = 0 : i64, prefetch = 1 : i64, weights = "cpu"}
// IR-SAME: mw.offload.candidates = [{batch = 217 : i64,
// IR-SAME: mw.offload.choice = {batch = 208 : i64, decode_s = {{.*}}, fits = true, pinned_layers = 0 : i64, predicted_tokens_per_s = 41.2{{[0-9]+}} : f64, prefetch = 1 : i64, prefill_s =
// RUN: mw-opt %t.off.mlir --mw-memory-report="format=json function=decode" -o /dev/null | FileCheck %s --check-prefix=JSON
// JSON:      "name": "decode"
// JSON:      "offload_candidates": [
// JSON-NEXT:   {
// JSON-NEXT:     "pinned_layers": 0,
// JSON-NEXT:     "prefetch": 0,
// JSON-NEXT:     "batch": 217,
// JSON-NEXT:     "fits": true,
// JSON:      "offload_choice": {
// JSON-NEXT:   "pinned_layers": 0,
// JSON-NEXT:   "prefetch": 1,
// JSON-NEXT:   "batch": 208,
// JSON-NEXT:   "fits": true,
// JSON-NEXT:   "predicted_tokens_per_s": 41.2

// weights=nvme: copies at the slower of the host link and a nominal NVMe
// drive (3.5 GB/s).
// RUN: rm -rf %t.nvme && mkdir -p %t.nvme
// RUN: mw-opt %t.opt30b.mlir --mw-offload="auto weights=nvme path=%t.nvme target=v100 function=decode" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NVME
// NVME: mw-offload auto: @decode on v100 (32.00 GB = 29.80 GiB, weights from NVMe at 3.5 GB/s)
// NVME: chosen: pinned-layers=0 prefetch=0 batch=217: 12.53 tokens/s predicted

// A small step that auto streams in part: mw-eval gives the same outputs
// before and after, and after the pipeline.
// RUN: mw-models opt --layers 4 --hidden 512 --heads 8 --ffn 2048 --vocab 1024 --seq 64 --inference --max-batch 2 -o %t.small.mlir
// RUN: mw-opt %t.small.mlir --mw-offload="auto device-memory=64MB max-batch=2" -o %t.small.off.mlir 2>&1 | FileCheck %s --check-prefix=SMALL
// The table goes to stderr: with no -o, stdout is the IR alone, so the
// pass can sit in a pipe.
// RUN: mw-opt %t.small.mlir --mw-offload="auto device-memory=64MB max-batch=2" 2>/dev/null | mw-opt -o /dev/null
// SMALL: mw-offload auto: @prefill on device-memory=64MB
// SMALL: chosen: pinned-layers={{[0-9]}} prefetch={{[0-9]}} batch=2
// SMALL: mw-offload auto: @decode on device-memory=64MB
// SMALL: chosen: pinned-layers={{[0-9]}} prefetch={{[0-9]}} batch=2
// RUN: mw-eval %t.small.mlir --entry decode --random-inputs 5 --print > %t.before
// RUN: mw-eval %t.small.off.mlir --entry decode --random-inputs 5 --print > %t.after
// RUN: diff %t.before %t.after
// RUN: mw-opt %t.small.off.mlir --mw-train-pipeline -o %t.small.planned.mlir
// RUN: mw-eval %t.small.planned.mlir --entry decode --random-inputs 5 --print > %t.planned
// RUN: diff %t.before %t.planned

// Errors: one message each.
// RUN: not mw-opt %t.small.mlir --mw-offload="auto" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NODEVICE
// NODEVICE: error: {{.*}}mw-offload: auto needs target=NAME or device-memory=SIZE (the memory to fill)
// RUN: not mw-opt %t.small.mlir --mw-offload="auto target=tpu" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: error: {{.*}}mw-offload: unknown target 'tpu' (expected one with device memory: h200, h100, a100, v100,
// RUN: not mw-opt %t.small.mlir --mw-offload="auto device-memory=1MB function=decode" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOFIT
// NOFIT: error: {{.*}}mw-offload: auto: no offload of @decode fits device-memory=1MB (1.00 MB = 976.56 KiB): streaming every layer with one slot, one sequence needs
