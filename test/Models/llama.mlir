// Llama (HuggingFace LlamaForCausalLM): HF names, Linear weights [out, in]
// applied with transpose_rhs, no biases, RMSNorm (eps 1e-6, the op's default,
// so it is not printed), SwiGLU MLP, causal attention, untied lm_head.
//
// RUN: mw-models llama --preset llama-tiny -o %t
// RUN: FileCheck %s --input-file %t
// RUN: mw-opt %t -mlir-print-debuginfo -o %t.opt
// RUN: grep -v '^//' %t > %t.body
// RUN: grep -v '^$' %t.opt | diff %t.body -

// CHECK:      // parameters: 133440
// CHECK:      func.func @forward(
// CHECK-SAME:   %arg0: tensor<256x64xf32> {mw.name = "model.embed_tokens.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg1: tensor<64xf32> {mw.name = "model.layers.0.input_layernorm.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg2: tensor<64x64xf32> {mw.name = "model.layers.0.self_attn.q_proj.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg3: tensor<64x64xf32> {mw.name = "model.layers.0.self_attn.k_proj.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg4: tensor<64x64xf32> {mw.name = "model.layers.0.self_attn.v_proj.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg5: tensor<64x64xf32> {mw.name = "model.layers.0.self_attn.o_proj.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg6: tensor<64xf32> {mw.name = "model.layers.0.post_attention_layernorm.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg7: tensor<176x64xf32> {mw.name = "model.layers.0.mlp.gate_proj.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg8: tensor<176x64xf32> {mw.name = "model.layers.0.mlp.up_proj.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg9: tensor<64x176xf32> {mw.name = "model.layers.0.mlp.down_proj.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg19: tensor<64xf32> {mw.name = "model.norm.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg20: tensor<256x64xf32> {mw.name = "lm_head.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg21: tensor<2x32xi32> {mw.name = "tokens", mw.role = #mw.role<input>}
// CHECK-SAME:   %arg22: tensor<2x32xi32> {mw.name = "labels", mw.role = #mw.role<label>}
// CHECK-SAME:   -> (tensor<f32> {mw.name = "loss", mw.role = #mw.role<output>})

// CHECK-NEXT: %[[X0:.*]] = mw.embedding %arg0, %arg21 {mw.layer = "{{[^"]+}}"} : {{.*}} loc(#[[EMB:loc[0-9]*]])
// CHECK-NEXT: %[[H:[^,]*]], {{.*}} = mw.rms_norm %[[X0]], %arg1 {mw.layer = "{{[^"]+}}"} : (tensor<2x32x64xf32>, tensor<64xf32>) -> (tensor<2x32x64xf32>, tensor<2x32xf32>) loc(#[[ATTN0:loc[0-9]*]])
// CHECK-NEXT: mw.matmul %[[H]], %arg2 {mw.layer = "{{[^"]+}}", transpose_rhs} : (tensor<2x32x64xf32>, tensor<64x64xf32>) -> tensor<2x32x64xf32>
// CHECK-NEXT: mw.reshape {{.*}} -> tensor<2x32x4x16xf32>
// CHECK-NEXT: %[[Q:.*]] = mw.transpose {{.*}} permutation = [0, 2, 1, 3]
// CHECK-NEXT: mw.matmul %[[H]], %arg3 {mw.layer = "{{[^"]+}}", transpose_rhs}
// CHECK-NEXT: mw.reshape
// CHECK-NEXT: %[[K:.*]] = mw.transpose
// CHECK-NEXT: mw.matmul %[[H]], %arg4 {mw.layer = "{{[^"]+}}", transpose_rhs}
// CHECK-NEXT: mw.reshape
// CHECK-NEXT: %[[V:.*]] = mw.transpose
// CHECK-NEXT: %[[ATTN:[^,]*]], {{.*}} = mw.attention %[[Q]], %[[K]], %[[V]] {causal, mw.layer = "{{[^"]+}}"}
// CHECK-NEXT: mw.transpose %[[ATTN]]
// CHECK-NEXT: mw.reshape
// CHECK-NEXT: %[[O:.*]] = mw.matmul {{.*}}, %arg5 {mw.layer = "{{[^"]+}}", transpose_rhs}
// CHECK-NEXT: %[[X1:.*]] = mw.add %[[X0]], %[[O]]
// CHECK-NEXT: %[[H2:[^,]*]], {{.*}} = mw.rms_norm %[[X1]], %arg6 {mw.layer = "{{[^"]+}}"} : {{.*}} loc(#[[MLP0:loc[0-9]*]])
// CHECK-NEXT: %[[GATE:.*]] = mw.matmul %[[H2]], %arg7 {mw.layer = "{{[^"]+}}", transpose_rhs} : (tensor<2x32x64xf32>, tensor<176x64xf32>) -> tensor<2x32x176xf32>
// CHECK-NEXT: %[[SILU:.*]] = mw.silu %[[GATE]] {mw.layer = "{{[^"]+}}"} : tensor<2x32x176xf32>
// CHECK-NEXT: %[[UP:.*]] = mw.matmul %[[H2]], %arg8 {mw.layer = "{{[^"]+}}", transpose_rhs}
// CHECK-NEXT: %[[PROD:.*]] = mw.mul %[[SILU]], %[[UP]]
// CHECK-NEXT: %[[DOWN:.*]] = mw.matmul %[[PROD]], %arg9 {mw.layer = "{{[^"]+}}", transpose_rhs} : (tensor<2x32x176xf32>, tensor<64x176xf32>) -> tensor<2x32x64xf32>
// CHECK-NEXT: mw.add %[[X1]], %[[DOWN]]

// CHECK:      %[[XF:[^,]*]], {{.*}} = mw.rms_norm {{.*}}, %arg19 {mw.layer = "{{[^"]+}}"} : {{.*}} loc(#[[NORM:loc[0-9]*]])
// CHECK-NEXT: %[[LOGITS:.*]] = mw.matmul %[[XF]], %arg20 {mw.layer = "{{[^"]+}}", transpose_rhs} : (tensor<2x32x64xf32>, tensor<256x64xf32>) -> tensor<2x32x256xf32> loc(#[[HEAD:loc[0-9]*]])
// CHECK-NEXT: mw.reshape %[[LOGITS]] {mw.layer = "{{[^"]+}}"} : tensor<2x32x256xf32> -> tensor<64x256xf32>
// CHECK-NEXT: mw.reshape %arg22 {mw.layer = "{{[^"]+}}"} : tensor<2x32xi32> -> tensor<64xi32>
// CHECK-NEXT: mw.cross_entropy {{.*}}mw.layer = "loss"
// CHECK-NOT:  mw.

// CHECK-DAG: #[[EMB]] = loc("model.embed_tokens")
// CHECK-DAG: #[[ATTN0]] = loc("model.layers.0.self_attn")
// CHECK-DAG: #[[MLP0]] = loc("model.layers.0.mlp")
// CHECK-DAG: #[[NORM]] = loc("model.norm")
// CHECK-DAG: #[[HEAD]] = loc("lm_head")

// --rotary: HF's apply_rotary_pos_emb with [S, Dh/2] cos/sin tables,
// angle(s, j) = s * 10000^(-2j/Dh): [x1, x2] -> [x1 cos - x2 sin, x2 cos + x1 sin]
// on queries and keys, never on values.
// RUN: mw-models llama --layers 1 --hidden 8 --heads 2 --ffn 16 --seq 2 --rotary --emit-locations=false | mw-opt | FileCheck %s --check-prefix=ROPE
// ROPE:      %[[COS:.*]] = mw.constant {mw.layer = "{{[^"]+}}"} dense<{{\[}}[1.000000e+00, 1.000000e+00], [0.540302277, 0.999949991]]> : tensor<2x2xf32>
// ROPE-NEXT: %[[SIN:.*]] = mw.constant {mw.layer = "{{[^"]+}}"} dense<{{\[}}[0.000000e+00, 0.000000e+00], [0.841470957, 0.00999983306]]> : tensor<2x2xf32>
// ROPE:      %[[Q:.*]] = mw.transpose {{.*}} -> tensor<2x2x2x4xf32>
// ROPE:      %[[K:.*]] = mw.transpose {{.*}} -> tensor<2x2x2x4xf32>
// ROPE:      %[[V:.*]] = mw.transpose {{.*}} -> tensor<2x2x2x4xf32>
// ROPE-NEXT: %[[Q1:.*]] = mw.slice %[[Q]] offsets = [0, 0, 0, 0] sizes = [2, 2, 2, 2]
// ROPE-NEXT: %[[Q2:.*]] = mw.slice %[[Q]] offsets = [0, 0, 0, 2] sizes = [2, 2, 2, 2]
// ROPE-NEXT: %[[A:.*]] = mw.mul %[[Q1]], %[[COS]] {mw.layer = "{{[^"]+}}"} : (tensor<2x2x2x2xf32>, tensor<2x2xf32>) -> tensor<2x2x2x2xf32>
// ROPE-NEXT: %[[B:.*]] = mw.mul %[[Q2]], %[[SIN]]
// ROPE-NEXT: %[[R1:.*]] = mw.sub %[[A]], %[[B]]
// ROPE-NEXT: %[[C:.*]] = mw.mul %[[Q2]], %[[COS]]
// ROPE-NEXT: %[[D:.*]] = mw.mul %[[Q1]], %[[SIN]]
// ROPE-NEXT: %[[R2:.*]] = mw.add %[[C]], %[[D]]
// ROPE-NEXT: %[[QR:.*]] = mw.concat %[[R1]], %[[R2]] axis = 3 {mw.layer = "{{[^"]+}}"} : (tensor<2x2x2x2xf32>, tensor<2x2x2x2xf32>) -> tensor<2x2x2x4xf32>
// ROPE-NEXT: mw.slice %[[K]] offsets = [0, 0, 0, 0]
// ROPE:      %[[KR:.*]] = mw.concat
// ROPE-NEXT: mw.attention %[[QR]], %[[KR]], %[[V]] {causal, mw.layer = "{{[^"]+}}"}
