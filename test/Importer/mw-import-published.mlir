// --preset published without --weights: the config class's defaults,
// built with fake tensors (no memory for the weights), exported and
// planned. Llama's is Llama-2-7B's shape: the parameter count equals
// mw-models' llama-7b-shaped preset, and the rotary tables (real buffers)
// are folded into constants.
// REQUIRES: importer
// RUN: %mw_import --hf llama --preset published --train --seq 64 --batch 1 -o %t.mlir
// RUN: FileCheck %s --input-file %t.mlir --dump-input=never
// RUN: mw-opt %t.mlir --mw-memory-report -o /dev/null | FileCheck %s --check-prefix=REPORT

// CHECK: // Imported by mw-import from transformers LlamaForCausalLM (llama, preset published), batch 1, seq 64, forward + loss
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: tensor<32000x4096xf32> {mw.name = "model.embed_tokens.weight", mw.role = #mw.role<param>}
// CHECK-SAME: tensor<11008x4096xf32> {mw.name = "model.layers.31.mlp.gate_proj.weight", mw.role = #mw.role<param>}
// CHECK-SAME: tensor<32000x4096xf32> {mw.name = "lm_head.weight", mw.role = #mw.role<param>}
// Llama's RMSNorm, written out with pow, mean, rsqrt and mul: one op.
// CHECK: mw.rms_norm {{.*}} {epsilon = 1.0e-06 : f64, mw.layer = "model.layers.0.input_layernorm"}
// CHECK-COUNT-2: mw.constant {mw.layer = "model.layers.0.self_attn"} dense<"0x
// CHECK-NOT: mw.constant
// CHECK: mw.attention {{.*}} {causal, mw.layer = "model.layers.0.self_attn"}
// CHECK: mw.silu

// REPORT: parameters 6738415616 (6.74G)
