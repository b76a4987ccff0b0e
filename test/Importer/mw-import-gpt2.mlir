// mw-import --hf gpt2: the forward + loss of a transformers GPT2LMHeadModel
// built from its config, with the state_dict's names and the roles
// --mw-autodiff reads; the step it makes runs in mw-eval on the written
// weights and inputs. Numerical parity with PyTorch: test/Importer/parity.py.
// REQUIRES: importer
// RUN: %mw_import --hf gpt2 --train --seq 16 -o %t.mlir --weights %t.w.safetensors --save-inputs %t.in.safetensors
// RUN: FileCheck %s --input-file %t.mlir
// RUN: mw-opt %t.mlir --mw-autodiff="optimizer=sgd lr=0.1" -o %t.step.mlir
// RUN: mw-eval %t.step.mlir --entry train_step --inputs %t.w.safetensors --inputs %t.in.safetensors --print | FileCheck %s --check-prefix=STEP
// RUN: %mw_import --hf gpt2 --seq 16 --batch 1 | FileCheck %s --check-prefix=LOGITS
// transformers' eager attention instead of sdpa: scores, mask, softmax and
// the second matmul as separate ops (the probabilities are activations).
// RUN: %mw_import --hf gpt2 --attention eager --seq 16 --batch 1 | FileCheck %s --check-prefix=EAGER

// CHECK: // Imported by mw-import from transformers GPT2LMHeadModel (gpt2, preset tiny), batch 2, seq 16, forward + loss
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %arg0: tensor<256x64xf32> {mw.name = "transformer.wte.weight", mw.role = #mw.role<param>}
// CHECK-SAME: {mw.name = "transformer.h.0.attn.c_attn.weight", mw.role = #mw.role<param>}
// CHECK-SAME: {mw.name = "transformer.ln_f.bias", mw.role = #mw.role<param>}
// CHECK-SAME: %arg28: tensor<2x16xi64> {mw.name = "input_ids", mw.role = #mw.role<input>}
// CHECK-SAME: %arg29: tensor<2x16xi64> {mw.name = "labels", mw.role = #mw.role<label>}
// CHECK-SAME: -> (tensor<f32> {mw.name = "loss", mw.role = #mw.role<output>})
// The tied lm_head is the embedding table, one argument.
// CHECK-NOT: lm_head.weight
// Position ids are a slice of wpe, the causal mask the attention's flag.
// CHECK: mw.slice %arg1 offsets = [0, 0] sizes = [16, 64] {mw.layer = "transformer.wpe"}
// CHECK: mw.attention {{.*}} {causal, mw.layer = "transformer.h.0.attn"}
// transformers writes GPT-2's GELU out with pow, tanh, mul and add: one op.
// CHECK: mw.gelu {{.*}} {approximate = #mw.gelu_approximation<tanh>, mw.layer = "transformer.h.0.mlp.act"}
// CHECK: mw.matmul {{.*}}, %arg0 {transpose_rhs, mw.layer = "lm_head"}
// CHECK: mw.cross_entropy {{.*}} {ignore_index = -100 : i64}

// STEP: loss: f32 []
// STEP: transformer.wte.weight: f32 [256, 64]

// LOGITS: -> (tensor<1x16x256xf32> {mw.name = "logits", mw.role = #mw.role<output>})

// EAGER: // Imported by mw-import from transformers GPT2LMHeadModel (gpt2, preset tiny, eager attention), batch 1, seq 16, logits
// EAGER-NOT: mw.attention
// EAGER: mw.matmul {{.*}}mw.layer = "transformer.h.0.attn"
// EAGER: mw.softmax {{.*}}mw.layer = "transformer.h.0.attn"
// EAGER-NOT: mw.attention
