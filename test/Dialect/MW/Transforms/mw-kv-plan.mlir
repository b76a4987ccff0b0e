// --mw-kv-plan (docs/inference.md, "Sizing the cache"): the figures on
// gpt2-tiny, exact; the caches resized in both functions and the plan
// allocating exactly that; mw-eval's logits unchanged; the errors.
//
// gpt2-tiny: 2 layers, 4 heads of 16, so a token's K and V of all layers is
// 2 * 2 * 64 elements: 1024 bytes in f32, 256 in int8. On 64 MB:
// 64000000 - 478640 persistent - 57344 arena - 33554432 workspace
// = 29909584 bytes, 29909584 / (16 * 1024) = 1825 blocks, 8784 left over.
//
// RUN: mw-models gpt --preset gpt2-tiny --inference --max-batch 4 --max-seq 32 --prompt-len 8 --block 16 --emit-locations=false -o %t.f32.mlir
// RUN: mw-opt %t.f32.mlir --mw-kv-plan="device-memory=64MB" -o %t.kv.mlir | FileCheck %s --check-prefix=TEXT
// TEXT:      mw-kv-plan on device-memory=64MB (64.00 MB = 61.04 MiB)
// TEXT-NEXT:   persistent              478640 (478.64 KB = 467.42 KiB); weights 474112, the rest inputs and constants
// TEXT-NEXT:   arena                   57344 (57.34 KB = 56.00 KiB); @prefill's, the larger step
// TEXT-NEXT:   workspace               33554432 (33.55 MB = 32.00 MiB); cuBLASLt workspace and attention scratch
// TEXT-NEXT:   kv cache                4 caches of f32, 16-token blocks
// TEXT-NEXT:   bytes per token         1024 (all layers, K and V; scales 0 bytes compiled in, none per token)
// TEXT-NEXT:   blocks                  1825 (was 8), 29900800 (29.90 MB = 28.52 MiB)
// TEXT-NEXT:   left over               8784 (8.78 KB = 8.58 KiB)
// TEXT-NEXT:   max resident tokens     29200
// TEXT-NEXT:   max sequences           912 of 32 tokens (2 blocks each); a step batches 4
// TEXT-NEXT:   contiguous              912 sequences if each reserved max-seq 32 tokens
//
// The resize: every cache argument, cache write and cache result of both
// functions, nothing else.
// RUN: FileCheck %s --check-prefix=IR < %t.kv.mlir
// IR-LABEL: func.func @prefill(
// IR-SAME: tensor<1825x16x4x16xf32> {mw.name = "h.0.attn.k_cache", mw.role = #mw.role<kv_cache>}
// IR-SAME: %arg35: tensor<4x2xi32> {mw.name = "block_tables", mw.role = #mw.role<input>}
// IR-SAME: -> (tensor<4x256xf32> {mw.name = "logits", mw.role = #mw.role<output>}, tensor<1825x16x4x16xf32> {mw.name = "h.0.attn.k_cache"
// IR-SAME: tensor<1825x16x4x16xf32> {mw.name = "h.1.attn.v_cache", mw.role = #mw.role<kv_cache>})
// IR: mw.kv_cache_write {{.*}} -> tensor<1825x16x4x16xf32>
// IR: mw.paged_attention {{.*}}: (tensor<4x4x8x16xf32>, tensor<1825x16x4x16xf32>, tensor<1825x16x4x16xf32>, tensor<4x2xi32>, tensor<4xi32>)
// IR-LABEL: func.func @decode(
// IR-SAME: tensor<1825x16x4x16xf32> {mw.name = "h.0.attn.k_cache", mw.role = #mw.role<kv_cache>}
// IR-SAME: -> (tensor<4x256xf32> {mw.name = "logits", mw.role = #mw.role<output>}, tensor<1825x16x4x16xf32>
// IR: mw.kv_cache_write {{.*}} -> tensor<1825x16x4x16xf32>
// IR-NOT: tensor<8x16x4x16xf32>
//
// The plan of the resized module: the same arena, and persistent = 478640 +
// 1825 * 16 * 1024 = 30379440 (the cache in place, counted once), so
// persistent + arena + workspace = 63991216 <= 64000000.
// RUN: mw-opt %t.kv.mlir --mw-train-pipeline --mw-memory-report="format=json" -o %t.planned.mlir | FileCheck %s --check-prefix=PLAN
// PLAN: "name": "prefill"
// PLAN: "arena_bytes": 57344
// PLAN: "persistent_bytes": 30379440
//
// The runtime allocates exactly that: @decode's plan holds the 29900800-byte
// cache and decode's own 478528 bytes of weights and inputs (prefill's
// inputs are 112 bytes larger), and its measured peak is the planned one.
// RUN: mw-translate --mw-to-plan --mw-plan-function=decode %t.planned.mlir -o %t.decode.mwplan
// RUN: mw-run %t.decode.mwplan --device cpu --steps 1 --report json | FileCheck %s --check-prefix=PEAK
// PEAK:      "arena_bytes": 7168,
// PEAK-NEXT: "persistent_bytes": 30379328,
// PEAK-NEXT: "workspace_bytes": 0,
// PEAK-NEXT: "planned_peak_bytes": 30386496,
// PEAK-NEXT: "measured_peak_bytes": 30386496,
//
// The larger cache does not change the logits (mw-eval, before and after).
// RUN: mw-eval %t.f32.mlir --entry prefill --random-inputs 3 --print | grep '^logits' > %t.before
// RUN: mw-eval %t.kv.mlir --entry prefill --random-inputs 3 --print | grep '^logits' > %t.after
// RUN: diff %t.before %t.after
// RUN: mw-eval %t.f32.mlir --entry decode --random-inputs 3 --print | grep '^logits' > %t.before
// RUN: mw-eval %t.planned.mlir --entry decode --random-inputs 3 --print | grep '^logits' > %t.after
// RUN: diff %t.before %t.after
// RUN: mw-models llama --rotary --inference --block 8 --kv-dtype int8 -o %t.llama.mlir
// RUN: mw-opt %t.llama.mlir --mw-kv-plan="device-memory=40MB" -o %t.llama.kv.mlir > /dev/null
// RUN: mw-eval %t.llama.mlir --entry decode --random-inputs 5 --print | grep '^logits' > %t.before
// RUN: mw-eval %t.llama.kv.mlir --entry decode --random-inputs 5 --print | grep '^logits' > %t.after
// RUN: diff %t.before %t.after
//
// int8, json, target=h100 (80 * 10^9 bytes): 256 bytes per token.
// RUN: mw-models gpt --preset gpt2-tiny --inference --max-batch 4 --max-seq 32 --prompt-len 8 --block 16 --kv-dtype int8 --kv-scale 0.01 -o %t.i8.mlir
// RUN: mw-opt %t.i8.mlir --mw-kv-plan="target=h100 kv-dtype=int8 block=16 seq-len=20 format=json" -o /dev/null | FileCheck %s --check-prefix=JSON
// JSON:      "device": "h100",
// JSON-NEXT: "device_memory_bytes": 80000000000,
// JSON:      "kv_dtype": "int8",
// JSON-NEXT: "caches": 4,
// JSON-NEXT: "block_size": 16,
// JSON-NEXT: "bytes_per_token": 256,
// JSON-NEXT: "bytes_per_block": 4096,
// JSON-NEXT: "scale_bytes": 32,
// JSON-NEXT: "blocks": 19522927,
// JSON-NEXT: "blocks_before": 8,
// JSON-NEXT: "capped_by_i32_slots": false,
// JSON-NEXT: "cache_bytes": 79965908992,
// JSON-NEXT: "unused_bytes": 592,
// JSON-NEXT: "max_resident_tokens": 312366832,
// JSON-NEXT: "max_seq": 32,
// JSON-NEXT: "seq_len": 20,
// JSON-NEXT: "blocks_per_sequence": 2,
// JSON-NEXT: "max_sequences": 9761463,
// JSON-NEXT: "max_batch": 4,
// JSON-NEXT: "contiguous_max_seq_sequences": 9761463
//
// Errors: one message each, non-zero exit.
// RUN: not mw-opt %t.i8.mlir --mw-kv-plan="device-memory=400KB" -o /dev/null 2>&1 | FileCheck %s --check-prefix=WEIGHTS
// WEIGHTS: error: {{.*}}mw-kv-plan: the weights alone (474.11 KB = 463.00 KiB) do not fit device-memory=400KB (400.00 KB = 390.62 KiB), short by 74.11 KB = 72.38 KiB
// RUN: not mw-opt %t.i8.mlir --mw-kv-plan="device-memory=33800KB" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STEP
// STEP: error: {{.*}}mw-kv-plan: the weights and the step do not fit device-memory=33800KB (33.80 MB = 32.23 MiB) before any KV cache: persistent 478.64 KB = 467.42 KiB + arena 57.34 KB = 56.00 KiB + workspace 33.55 MB = 32.00 MiB, short by 290.42 KB = 283.61 KiB
// RUN: not mw-opt %t.i8.mlir --mw-kv-plan="device-memory=34095000" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONESEQ
// ONESEQ: error: {{.*}}mw-kv-plan: 4.58 KB = 4.48 KiB left after the weights and the step hold 1 blocks, fewer than the 2 one sequence of 32 tokens needs
// RUN: mw-models gpt --preset gpt2-tiny --inference --max-seq 20 --block 16 | not mw-opt --mw-kv-plan=target=h100 -o /dev/null 2>&1 | FileCheck %s --check-prefix=DIVIDE
// DIVIDE: error: {{.*}}mw-kv-plan: the block size 16 does not divide max-seq 20 (a full-length sequence would leave 12 slots of its last block unused)
// RUN: not mw-opt %t.i8.mlir --mw-kv-plan="target=h100 block=8" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BLOCK
// BLOCK: error: {{.*}}mw-kv-plan: block=8 but the caches hold blocks of 16 tokens (mw-models --block sets them)
// RUN: not mw-opt %t.i8.mlir --mw-kv-plan="target=h100 kv-dtype=fp8e4m3" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: error: {{.*}}mw-kv-plan: kv-dtype=fp8e4m3 but the caches are int8 (mw-models --kv-dtype sets them and their scales)
// RUN: not mw-opt %t.i8.mlir --mw-kv-plan="target=h100 seq-len=33" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SEQLEN
// SEQLEN: error: {{.*}}mw-kv-plan: seq-len=33 is outside 1..32 (max-seq)
// RUN: not mw-opt %t.i8.mlir --mw-kv-plan="target=x100" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: error: {{.*}}mw-kv-plan: unknown target 'x100' (expected one with device memory: h200, h100, a100, v100,
// RUN: not mw-opt %t.i8.mlir --mw-kv-plan="device-memory=lots" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SIZE
// SIZE: error: {{.*}}mw-kv-plan: device-memory='lots' is not a size
// RUN: not mw-opt %t.i8.mlir --mw-kv-plan -o /dev/null 2>&1 | FileCheck %s --check-prefix=NODEVICE
// NODEVICE: error: {{.*}}mw-kv-plan: give target=NAME or device-memory=SIZE
// RUN: not mw-opt %t.i8.mlir --mw-kv-plan="target=h100 format=xml" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORMAT
// FORMAT: error: {{.*}}mw-kv-plan: format='xml' (expected text or json)
// RUN: mw-models gpt --preset gpt2-tiny --train | not mw-opt --mw-kv-plan=target=h100 -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOCACHE
// NOCACHE: error: {{.*}}mw-kv-plan: the module has no kv_cache arguments to size (mw-models gpt|llama --inference emits them)
