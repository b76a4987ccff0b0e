// OPT (HuggingFace OPTForCausalLM, pre-LayerNorm as every OPT but 350m): HF
// names, Linear weights [out, in] with biases applied with transpose_rhs,
// learned positions (embed_positions has --seq rows: HF's offset of 2 is
// dropped), LayerNorm eps 1e-5, ReLU MLP fc1 -> relu -> fc2, causal
// attention, the decoder's final LayerNorm and logits tied to embed_tokens.
// Its logits equal Hugging Face's OPTForCausalLM's with the same weights
// (test/Models/Inputs/opt_hf_check.py, ctest models/opt-hf-parity).
//
// RUN: mw-models opt --preset opt-tiny -o %t
// RUN: FileCheck %s --input-file %t
// RUN: mw-opt %t -mlir-print-debuginfo -o %t.opt
// RUN: grep -v '^//' %t > %t.body
// RUN: grep -v '^$' %t.opt | diff %t.body -

// CHECK:      // parameters: 118528
// CHECK:      func.func @forward(
// CHECK-SAME:   %arg0: tensor<256x64xf32> {mw.name = "model.decoder.embed_tokens.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg1: tensor<32x64xf32> {mw.name = "model.decoder.embed_positions.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg2: tensor<64xf32> {mw.name = "model.decoder.final_layer_norm.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg3: tensor<64xf32> {mw.name = "model.decoder.final_layer_norm.bias", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg4: tensor<64x64xf32> {mw.name = "model.decoder.layers.0.self_attn.k_proj.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg5: tensor<64xf32> {mw.name = "model.decoder.layers.0.self_attn.k_proj.bias", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg6: tensor<64x64xf32> {mw.name = "model.decoder.layers.0.self_attn.v_proj.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg8: tensor<64x64xf32> {mw.name = "model.decoder.layers.0.self_attn.q_proj.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg10: tensor<64x64xf32> {mw.name = "model.decoder.layers.0.self_attn.out_proj.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg12: tensor<64xf32> {mw.name = "model.decoder.layers.0.self_attn_layer_norm.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg14: tensor<256x64xf32> {mw.name = "model.decoder.layers.0.fc1.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg15: tensor<256xf32> {mw.name = "model.decoder.layers.0.fc1.bias", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg16: tensor<64x256xf32> {mw.name = "model.decoder.layers.0.fc2.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg18: tensor<64xf32> {mw.name = "model.decoder.layers.0.final_layer_norm.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg35: tensor<64xf32> {mw.name = "model.decoder.layers.1.final_layer_norm.bias", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg36: tensor<2x32xi32> {mw.name = "tokens", mw.role = #mw.role<input>}
// CHECK-SAME:   %arg37: tensor<2x32xi32> {mw.name = "labels", mw.role = #mw.role<label>}
// CHECK-SAME:   -> (tensor<f32> {mw.name = "loss", mw.role = #mw.role<output>})

// CHECK-NEXT: %[[TOK:.*]] = mw.embedding %arg0, %arg36 {mw.layer = "{{[^"]+}}"} : {{.*}} loc(#[[EMB:loc[0-9]*]])
// CHECK-NEXT: %[[X0:.*]] = mw.add %[[TOK]], %arg1 {{.*}} : (tensor<2x32x64xf32>, tensor<32x64xf32>) -> tensor<2x32x64xf32>
// CHECK-NEXT: %[[H:[^,]*]], {{.*}} = mw.layer_norm %[[X0]], %arg12, %arg13 {mw.layer = "{{[^"]+}}"} : {{.*}} loc(#[[ATTN0:loc[0-9]*]])
// CHECK-NEXT: %[[QM:.*]] = mw.matmul %[[H]], %arg8 {mw.layer = "{{[^"]+}}", transpose_rhs} : (tensor<2x32x64xf32>, tensor<64x64xf32>) -> tensor<2x32x64xf32>
// CHECK-NEXT: %[[Q:.*]] = mw.add %[[QM]], %arg9
// CHECK-NEXT: %[[KM:.*]] = mw.matmul %[[H]], %arg4 {{.*}}transpose_rhs
// CHECK-NEXT: %[[K:.*]] = mw.add %[[KM]], %arg5
// CHECK-NEXT: %[[VM:.*]] = mw.matmul %[[H]], %arg6 {{.*}}transpose_rhs
// CHECK-NEXT: %[[V:.*]] = mw.add %[[VM]], %arg7
// CHECK:      %[[ATTN:[^,]*]], {{.*}} = mw.attention {{.*}} {causal, mw.layer = "{{[^"]+}}"}
// CHECK-NEXT: mw.transpose %[[ATTN]]
// CHECK-NEXT: mw.reshape
// CHECK-NEXT: %[[OM:.*]] = mw.matmul {{.*}}, %arg10 {{.*}}transpose_rhs
// CHECK-NEXT: %[[O:.*]] = mw.add %[[OM]], %arg11
// CHECK-NEXT: %[[X1:.*]] = mw.add %[[X0]], %[[O]]
// CHECK-NEXT: %[[H2:[^,]*]], {{.*}} = mw.layer_norm %[[X1]], %arg18, %arg19 {{.*}} loc(#[[MLP0:loc[0-9]*]])
// CHECK-NEXT: %[[FC1M:.*]] = mw.matmul %[[H2]], %arg14 {{.*}}transpose_rhs} : (tensor<2x32x64xf32>, tensor<256x64xf32>) -> tensor<2x32x256xf32>
// CHECK-NEXT: %[[FC1:.*]] = mw.add %[[FC1M]], %arg15
// CHECK-NEXT: %[[RELU:.*]] = mw.relu %[[FC1]] {{.*}} : tensor<2x32x256xf32>
// CHECK-NEXT: %[[FC2M:.*]] = mw.matmul %[[RELU]], %arg16 {{.*}}transpose_rhs} : (tensor<2x32x256xf32>, tensor<64x256xf32>) -> tensor<2x32x64xf32>
// CHECK-NEXT: %[[FC2:.*]] = mw.add %[[FC2M]], %arg17
// CHECK-NEXT: mw.add %[[X1]], %[[FC2]]

// The decoder's final LayerNorm, logits tied to embed_tokens (%arg0).
// CHECK:      %[[XF:[^,]*]], {{.*}} = mw.layer_norm {{.*}}, %arg2, %arg3 {{.*}} loc(#[[HEAD:loc[0-9]*]])
// CHECK-NEXT: %[[LOGITS:.*]] = mw.matmul %[[XF]], %arg0 {mw.layer = "{{[^"]+}}", transpose_rhs} : (tensor<2x32x64xf32>, tensor<256x64xf32>) -> tensor<2x32x256xf32>
// CHECK-NEXT: mw.reshape %[[LOGITS]]
// CHECK-NEXT: mw.reshape %arg37
// CHECK-NEXT: mw.cross_entropy {{.*}}mw.layer = "loss"
// CHECK-NOT:  mw.

// CHECK-DAG: #[[EMB]] = loc("model.decoder.embed_tokens")
// CHECK-DAG: #[[ATTN0]] = loc("model.decoder.layers.0.self_attn")
// CHECK-DAG: #[[MLP0]] = loc("model.decoder.layers.0.mlp")
// CHECK-DAG: #[[HEAD]] = loc("lm_head")

// --logits returns [B, S, V] and takes no labels; --inference has one cache
// pair per layer under the attention's name and gathers the positions.
// RUN: mw-models opt --logits --emit-locations=false | FileCheck %s --check-prefix=RET
// RET: %arg36: tensor<2x32xi32> {mw.name = "tokens", mw.role = #mw.role<input>}) -> (tensor<2x32x256xf32> {mw.name = "logits", mw.role = #mw.role<output>})
// RUN: mw-models opt --inference --max-seq 16 --block 4 --prompt-len 8 --emit-locations=false | FileCheck %s --check-prefix=INF
// INF-LABEL: func.func @prefill(
// INF-SAME: %arg36: tensor<8x4x4x16xf32> {mw.name = "model.decoder.layers.0.self_attn.k_cache", mw.role = #mw.role<kv_cache>}
// INF-SAME: %arg39: tensor<8x4x4x16xf32> {mw.name = "model.decoder.layers.1.self_attn.v_cache", mw.role = #mw.role<kv_cache>}
// INF-SAME: %arg41: tensor<2x8xi32> {mw.name = "positions", mw.role = #mw.role<input>}
// INF: mw.embedding %arg1, %arg41 {{.*}} : (tensor<32x64xf32>, tensor<2x8xi32>) -> tensor<2x8x64xf32>
// INF: mw.relu
// INF: mw.paged_attention
// INF-LABEL: func.func @decode(
// INF-SAME: %arg40: tensor<2x1xi32> {mw.name = "tokens", mw.role = #mw.role<input>}
// RUN: not mw-models opt --inference --max-seq 64 2>&1 | FileCheck %s --check-prefix=SEQ
// SEQ: error: --max-seq 64 is longer than --seq 32, the positions the model has (embed_positions's rows)

// Bufferized and planned, forward and decode compute what they computed before.
// RUN: mw-opt %t --mw-train-pipeline -o %t.planned.mlir
// RUN: mw-eval %t --random-inputs 3 --print > %t.before
// RUN: mw-eval %t.planned.mlir --random-inputs 3 --print > %t.after
// RUN: diff %t.before %t.after
// RUN: mw-models opt --inference --block 8 -o %t.inf.mlir
// RUN: mw-opt %t.inf.mlir --mw-train-pipeline -o %t.inf.planned.mlir
// RUN: mw-eval %t.inf.mlir --entry decode --random-inputs 3 --print > %t.before
// RUN: mw-eval %t.inf.planned.mlir --entry decode --random-inputs 3 --print > %t.after
// RUN: diff %t.before %t.after
