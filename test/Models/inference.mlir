// mw-models --inference: @prefill and @decode over a paged KV cache
// (docs/inference.md), their signatures, bad options, bufferization keeping
// mw-eval's outputs, and paged decode against the training-style forward.
//
// RUN: mw-models gpt --inference --max-seq 16 --block 4 --prompt-len 8 --kv-dtype int8 --emit-locations=false | FileCheck %s --check-prefix=GPT
// RUN: mw-models llama --rotary --inference --max-batch 3 --block 16 --kv-dtype fp8e4m3 --kv-scale 0.5 --emit-locations=false | FileCheck %s --check-prefix=LLAMA
// RUN: mw-models gpt --inference --kv-dtype int8 --kv-scale 0.25,0.5,1,2 --emit-locations=false | FileCheck %s --check-prefix=HEADS
// HEADS: //   mw-models gpt {{.*}} --kv-dtype int8 --kv-scale 0.25,0.5,1,2
// HEADS: mw.kv_cache_write {{.*}}scale = array<f32: 2.500000e-01, 5.000000e-01, 1.000000e+00, 2.000000e+00>
//
// GPT: // gpt, @prefill and @decode: {{.*}}
// GPT: // parameters: 118528
// GPT-LABEL: func.func @prefill(
// GPT-SAME: %arg0: tensor<256x64xf32> {mw.name = "wte", mw.role = #mw.role<param>}
// GPT-SAME: %arg28: tensor<8x4x4x16xi8> {mw.name = "h.0.attn.k_cache", mw.role = #mw.role<kv_cache>}
// GPT-SAME: %arg29: tensor<8x4x4x16xi8> {mw.name = "h.0.attn.v_cache", mw.role = #mw.role<kv_cache>}
// GPT-SAME: %arg32: tensor<2x8xi32> {mw.name = "tokens", mw.role = #mw.role<input>}
// GPT-SAME: %arg33: tensor<2x8xi32> {mw.name = "positions", mw.role = #mw.role<input>}
// GPT-SAME: %arg34: tensor<16xi32> {mw.name = "slot_mapping", mw.role = #mw.role<input>}
// GPT-SAME: %arg35: tensor<2x4xi32> {mw.name = "block_tables", mw.role = #mw.role<input>}
// GPT-SAME: %arg36: tensor<2xi32> {mw.name = "context_lens", mw.role = #mw.role<input>}
// GPT-SAME: -> (tensor<2x256xf32> {mw.name = "logits", mw.role = #mw.role<output>}, tensor<8x4x4x16xi8> {mw.name = "h.0.attn.k_cache", mw.role = #mw.role<kv_cache>}
// GPT: %[[K:.*]] = mw.kv_cache_write %arg28, %{{.*}}, %arg34 {{{.*}}scale = array<f32: 3.125000e-02>} : (tensor<8x4x4x16xi8>, tensor<16x4x16xf32>, tensor<16xi32>) -> tensor<8x4x4x16xi8>
// GPT: %[[V:.*]] = mw.kv_cache_write %arg29,
// GPT: mw.paged_attention %{{.*}}, %[[K]], %[[V]], %arg35, %arg36 {{{.*}}} : (tensor<2x4x8x16xf32>, tensor<8x4x4x16xi8>, tensor<8x4x4x16xi8>, tensor<2x4xi32>, tensor<2xi32>) -> tensor<2x4x8x16xf32>
// GPT-LABEL: func.func @decode(
// GPT-SAME: %arg32: tensor<2x1xi32> {mw.name = "tokens", mw.role = #mw.role<input>}
// GPT-SAME: %arg34: tensor<2xi32> {mw.name = "slot_mapping", mw.role = #mw.role<input>}
// GPT: mw.paged_attention {{.*}} -> tensor<2x4x1x16xf32>
//
// Llama: 32 / 16 = 2 blocks per sequence, 3 sequences: 6 blocks; the
// rotary tables are gathered at the positions.
// LLAMA-LABEL: func.func @prefill(
// LLAMA-SAME: tensor<6x16x4x16xf8E4M3FN> {mw.name = "model.layers.0.self_attn.k_cache", mw.role = #mw.role<kv_cache>}
// LLAMA-SAME: tensor<3x32xi32> {mw.name = "positions", mw.role = #mw.role<input>}
// LLAMA: mw.embedding %{{.*}}, %arg26 {mw.layer = "model.rotary_emb"} : (tensor<32x8xf32>, tensor<3x32xi32>) -> tensor<3x32x8xf32>
// LLAMA: mw.kv_cache_write {{.*}}scale = array<f32: 5.000000e-01>
// LLAMA: mw.paged_attention {{.*}}k_scale = array<f32: 5.000000e-01>{{.*}}v_scale = array<f32: 5.000000e-01>
// LLAMA-LABEL: func.func @decode(

// Grouped-query llama: 2 key/value heads for 4 query heads. k_proj and v_proj
// have 2 * 16 outputs, the caches 2 heads, and mw.paged_attention reads cache
// head h / 2 for query head h (no repeated keys in the inference steps).
// RUN: mw-models llama --preset llama-tiny-gqa --rotary --inference --max-seq 16 --block 4 --prompt-len 8 --kv-dtype int8 --kv-scale 0.5,0.25 --emit-locations=false | FileCheck %s --check-prefix=GQA
// GQA: //   mw-models llama --layers 2 --hidden 64 --heads 4 --ffn 176 --seq 32 --batch 2 --vocab 256 --kv-heads 2 --dtype f32 --rotary --inference
// GQA: // llama, @prefill and @decode: layers=2 hidden=64 heads=4 kv_heads=2 head_dim=16
// GQA: // parameters: 125248
// GQA-LABEL: func.func @prefill(
// GQA-SAME: tensor<32x64xf32> {mw.name = "model.layers.0.self_attn.k_proj.weight", mw.role = #mw.role<param>}
// GQA-SAME: tensor<32x64xf32> {mw.name = "model.layers.0.self_attn.v_proj.weight", mw.role = #mw.role<param>}
// GQA-SAME: tensor<8x4x2x16xi8> {mw.name = "model.layers.0.self_attn.k_cache", mw.role = #mw.role<kv_cache>}
// GQA-NOT: mw.attention
// GQA: mw.kv_cache_write {{.*}}scale = array<f32: 5.000000e-01, 2.500000e-01>} : (tensor<8x4x2x16xi8>, tensor<16x2x16xf32>, tensor<16xi32>) -> tensor<8x4x2x16xi8>
// GQA: mw.paged_attention {{.*}} : (tensor<2x4x8x16xf32>, tensor<8x4x2x16xi8>, tensor<8x4x2x16xi8>, tensor<2x4xi32>, tensor<2xi32>) -> tensor<2x4x8x16xf32>
// GQA-LABEL: func.func @decode(
// GQA: mw.paged_attention {{.*}} : (tensor<2x4x1x16xf32>, tensor<8x4x2x16xi8>, tensor<8x4x2x16xi8>, tensor<2x4xi32>, tensor<2xi32>) -> tensor<2x4x1x16xf32>
// mw-run serves the grouped-query steps on the CPU (int8 cache).
// RUN: mw-models llama --preset llama-tiny-gqa --rotary --inference --max-batch 2 --max-seq 32 --prompt-len 8 --block 4 --kv-dtype int8 -o %t.gqa.mlir
// RUN: mw-opt %t.gqa.mlir --mw-train-pipeline -o %t.gqa.planned.mlir
// RUN: mw-translate --mw-to-plan --mw-plan-function=prefill %t.gqa.planned.mlir -o %t.gqa.prefill.mwplan
// RUN: mw-translate --mw-to-plan --mw-plan-function=decode %t.gqa.planned.mlir -o %t.gqa.decode.mwplan
// RUN: mw-run %t.gqa.decode.mwplan --generate --prefill %t.gqa.prefill.mwplan --synthetic 5 --max-new-tokens 8 | FileCheck %s --check-prefix=GQA-SERVE
// GQA-SERVE: tokens/s
// GQA-SERVE: preemptions 0
// GQA-SERVE: steps: {{[0-9]+}} prefill, {{[0-9]+}} decode
// One scale per key/value head, so 2 here.
// RUN: not mw-models llama --preset llama-tiny-gqa --inference --kv-dtype int8 --kv-scale 1,2,3,4 2>&1 | FileCheck %s --check-prefix=GQA-COUNT
// GQA-COUNT: error: --kv-scale has 4 values, expected 1 or 2 (one per key/value head)
// The KV plan's bytes per token halve: 2 layers x K and V x 2 heads x 16 x 4
// bytes = 512 (llama-tiny: 1024), so about twice the blocks fit.
// RUN: mw-models llama --preset llama-tiny --inference --max-batch 4 --max-seq 32 --prompt-len 8 | mw-opt --mw-kv-plan="device-memory=64MB format=json" -o /dev/null | FileCheck %s --check-prefix=MHA-PLAN
// RUN: mw-models llama --preset llama-tiny-gqa --inference --max-batch 4 --max-seq 32 --prompt-len 8 | mw-opt --mw-kv-plan="device-memory=64MB format=json" -o /dev/null | FileCheck %s --check-prefix=GQA-PLAN
// MHA-PLAN: "bytes_per_token": 1024
// MHA-PLAN: "blocks": 1821
// GQA-PLAN: "bytes_per_token": 512
// GQA-PLAN: "blocks": 3647

// Bad options: one message each, exit 1 (bad values) or a usage error.
// RUN: not mw-models bert --inference 2>&1 | FileCheck %s --check-prefix=BERT
// BERT: error: --inference applies only to the gpt, llama and opt families, not bert
// RUN: not mw-models gpt --inference --max-seq 64 2>&1 | FileCheck %s --check-prefix=SEQ
// SEQ: error: --max-seq 64 is longer than --seq 32, the positions the model has (wpe's rows)
// RUN: not mw-models gpt --inference --prompt-len 20 --max-seq 16 2>&1 | FileCheck %s --check-prefix=PROMPT
// PROMPT: error: --prompt-len 20 is longer than --max-seq 16
// RUN: not mw-models gpt --inference --kv-scale 0.1 2>&1 | FileCheck %s --check-prefix=SCALE
// SCALE: error: --kv-scale is for int8 and fp8e4m3 caches, not f32
// RUN: not mw-models gpt --inference --kv-dtype int8 --kv-scale 1,2 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: error: --kv-scale has 2 values, expected 1 or 4 (one per key/value head)
// RUN: not mw-models gpt --inference --kv-dtype int8 --kv-scale=-1 2>&1 | FileCheck %s --check-prefix=NEG
// NEG: error: --kv-scale must be positive and finite (in f32), got -1.000000e+00
// RUN: not mw-models gpt --inference --kv-dtype int4 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: error: unknown --kv-dtype 'int4' (expected f32, bf16, f16, int8 or fp8e4m3)
// RUN: not mw-models gpt --block 8 2>&1 | FileCheck %s --check-prefix=NOINF
// NOINF: error: inference options need --inference
// RUN: not mw-models gpt --inference --block 0 2>&1 | FileCheck %s --check-prefix=BLOCK
// BLOCK: error: --block must be positive, got 0
// RUN: not mw-models gpt --inference --train 2>&1 | FileCheck %s --check-prefix=TRAIN
// TRAIN: error: --inference and --train emit different steps; choose one
// RUN: not mw-models bert --logits 2>&1 | FileCheck %s --check-prefix=LOGITS
// LOGITS: error: --logits applies only to the gpt, llama and opt families, not bert

// Bufferized and planned, both steps compute what they computed before (the
// caches in place: persistent counts them once).
// RUN: mw-models llama --rotary --inference --block 8 --kv-dtype int8 -o %t.inf.mlir
// RUN: mw-opt %t.inf.mlir --mw-train-pipeline -o %t.planned.mlir
// RUN: mw-eval %t.inf.mlir --entry prefill --random-inputs 3 --print > %t.before
// RUN: mw-eval %t.planned.mlir --entry prefill --random-inputs 3 --print > %t.after
// RUN: diff %t.before %t.after
// RUN: mw-eval %t.inf.mlir --entry decode --random-inputs 3 --print > %t.before
// RUN: mw-eval %t.planned.mlir --entry decode --random-inputs 3 --print > %t.after
// RUN: diff %t.before %t.after

// Paged decode equals the forward recomputed from scratch: three sequences of
// prompt lengths 5, 2 and 7 in scattered blocks, six greedy steps, one
// sequence leaving after three (test/Models/Inputs/paged_decode_check.py). f32
// caches give the forward's logits exactly; the last decode step through
// mw-translate and mw-run gives mw-eval's bits.
// RUN: python3 %S/Inputs/paged_decode_check.py --bin %mw_bin --family gpt --mw-run | FileCheck %s --check-prefixes=F32,PLAN
// RUN: python3 %S/Inputs/paged_decode_check.py --bin %mw_bin --family llama | FileCheck %s --check-prefix=F32
// RUN: python3 %S/Inputs/paged_decode_check.py --bin %mw_bin --family llama --rotary --mw-run | FileCheck %s --check-prefix=F32
// RUN: python3 %S/Inputs/paged_decode_check.py --bin %mw_bin --family opt --mw-run | FileCheck %s --check-prefixes=F32,PLAN
// Grouped-query llama (2 and 1 key/value heads for 4 query heads): @forward
// repeats the keys and values per query head, the steps read the shared cache
// head.
// RUN: python3 %S/Inputs/paged_decode_check.py --bin %mw_bin --family llama --rotary --kv-heads 2 --mw-run | FileCheck %s --check-prefixes=F32,PLAN
// RUN: python3 %S/Inputs/paged_decode_check.py --bin %mw_bin --family llama --kv-heads 1 | FileCheck %s --check-prefix=F32
// F32: kv=f32 steps=18 max_rel_err=0.000e+00 argmax_agree=18/18
// PLAN: mw-run decode step: 5 outputs equal mw-eval's bit for bit
// A block table pointing outside the cache (48 blocks) fails the step.
// PLAN: mw-run bad block table: {{.*}} 'mw.paged_attention': block_tables[0, 0] = 48 is outside the cache's 48 blocks
// The 16-bit and quantized caches (int8 and fp8 with per-head scales
// calibrated from an f32 run), against the same f32 forward: the error
// relative to the largest logit, bounded (measured: bf16 8.4e-4 and 1.7e-3,
// int8 3.2e-3 and 6.4e-3, fp8e4m3 1.0e-2 and 2.4e-2 for gpt and llama
// rotary; greedy tokens agree 18/18 but for llama fp8's 17/18).
// RUN: python3 %S/Inputs/paged_decode_check.py --bin %mw_bin --family gpt --kv-dtype bf16 --rtol 4e-3 | FileCheck %s --check-prefix=QUANT
// RUN: python3 %S/Inputs/paged_decode_check.py --bin %mw_bin --family gpt --kv-dtype int8 --rtol 1e-2 --min-agree 0.9 --mw-run | FileCheck %s --check-prefix=QUANT
// RUN: python3 %S/Inputs/paged_decode_check.py --bin %mw_bin --family gpt --kv-dtype fp8e4m3 --rtol 4e-2 --min-agree 0.9 --mw-run | FileCheck %s --check-prefix=QUANT
// RUN: python3 %S/Inputs/paged_decode_check.py --bin %mw_bin --family llama --rotary --kv-dtype int8 --rtol 2e-2 --min-agree 0.9 | FileCheck %s --check-prefix=QUANT
// RUN: python3 %S/Inputs/paged_decode_check.py --bin %mw_bin --family llama --rotary --kv-dtype fp8e4m3 --rtol 8e-2 --min-agree 0.9 | FileCheck %s --check-prefix=QUANT
// Grouped-query (measured: int8 8.0e-3 18/18, fp8e4m3 4.1e-2 17/18).
// RUN: python3 %S/Inputs/paged_decode_check.py --bin %mw_bin --family llama --rotary --kv-heads 2 --kv-dtype int8 --rtol 2e-2 --min-agree 0.9 --mw-run | FileCheck %s --check-prefix=QUANT
// RUN: python3 %S/Inputs/paged_decode_check.py --bin %mw_bin --family llama --rotary --kv-heads 2 --kv-dtype fp8e4m3 --rtol 8e-2 --min-agree 0.9 | FileCheck %s --check-prefix=QUANT
// QUANT: paged-decode {{.*}} steps=18 max_rel_err={{.*}} argmax_agree={{1[0-9]}}/18
