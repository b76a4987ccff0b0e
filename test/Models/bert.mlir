// BERT for masked LM (HuggingFace BertForMaskedLM, no pooler): HF names,
// Linear weights [out, in] applied with transpose_rhs, token-type row 0
// (all-zero token_type_ids), post-LayerNorm with eps 1e-12, bidirectional
// attention, erf-GELU, MLM head tied to the word embeddings, cross-entropy
// over every position ignoring label -100.
//
// RUN: mw-models bert --preset bert-tiny -o %t
// RUN: FileCheck %s --input-file %t
// RUN: mw-opt %t -mlir-print-debuginfo -o %t.opt
// RUN: grep -v '^//' %t > %t.body
// RUN: grep -v '^$' %t.opt | diff %t.body -

// CHECK:      // parameters: 123200
// CHECK:      func.func @forward(
// CHECK-SAME:   %arg0: tensor<256x64xf32> {mw.name = "bert.embeddings.word_embeddings.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg1: tensor<32x64xf32> {mw.name = "bert.embeddings.position_embeddings.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg2: tensor<2x64xf32> {mw.name = "bert.embeddings.token_type_embeddings.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg3: tensor<64xf32> {mw.name = "bert.embeddings.LayerNorm.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg4: tensor<64xf32> {mw.name = "bert.embeddings.LayerNorm.bias", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg5: tensor<64x64xf32> {mw.name = "bert.encoder.layer.0.attention.self.query.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg6: tensor<64xf32> {mw.name = "bert.encoder.layer.0.attention.self.query.bias", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg7: tensor<64x64xf32> {mw.name = "bert.encoder.layer.0.attention.self.key.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg8: tensor<64xf32> {mw.name = "bert.encoder.layer.0.attention.self.key.bias", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg9: tensor<64x64xf32> {mw.name = "bert.encoder.layer.0.attention.self.value.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg10: tensor<64xf32> {mw.name = "bert.encoder.layer.0.attention.self.value.bias", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg11: tensor<64x64xf32> {mw.name = "bert.encoder.layer.0.attention.output.dense.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg12: tensor<64xf32> {mw.name = "bert.encoder.layer.0.attention.output.dense.bias", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg13: tensor<64xf32> {mw.name = "bert.encoder.layer.0.attention.output.LayerNorm.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg14: tensor<64xf32> {mw.name = "bert.encoder.layer.0.attention.output.LayerNorm.bias", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg15: tensor<256x64xf32> {mw.name = "bert.encoder.layer.0.intermediate.dense.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg16: tensor<256xf32> {mw.name = "bert.encoder.layer.0.intermediate.dense.bias", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg17: tensor<64x256xf32> {mw.name = "bert.encoder.layer.0.output.dense.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg18: tensor<64xf32> {mw.name = "bert.encoder.layer.0.output.dense.bias", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg19: tensor<64xf32> {mw.name = "bert.encoder.layer.0.output.LayerNorm.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg20: tensor<64xf32> {mw.name = "bert.encoder.layer.0.output.LayerNorm.bias", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg37: tensor<64x64xf32> {mw.name = "cls.predictions.transform.dense.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg38: tensor<64xf32> {mw.name = "cls.predictions.transform.dense.bias", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg39: tensor<64xf32> {mw.name = "cls.predictions.transform.LayerNorm.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg40: tensor<64xf32> {mw.name = "cls.predictions.transform.LayerNorm.bias", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg41: tensor<256xf32> {mw.name = "cls.predictions.bias", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg42: tensor<2x32xi32> {mw.name = "tokens", mw.role = #mw.role<input>}
// CHECK-SAME:   %arg43: tensor<2x32xi32> {mw.name = "labels", mw.role = #mw.role<label>}
// CHECK-SAME:   -> (tensor<f32> {mw.name = "loss", mw.role = #mw.role<output>})

// Embeddings: word + token_type_embeddings[0] + positions, then LayerNorm.
// CHECK-NEXT: %[[WORD:.*]] = mw.embedding %arg0, %arg42 {mw.layer = "{{[^"]+}}"} : {{.*}} loc(#[[EMB:loc[0-9]*]])
// CHECK-NEXT: %[[TT:.*]] = mw.slice %arg2 offsets = [0, 0] sizes = [1, 64] {mw.layer = "{{[^"]+}}"} : tensor<2x64xf32> -> tensor<1x64xf32>
// CHECK-NEXT: %[[E1:.*]] = mw.add %[[WORD]], %[[TT]] {mw.layer = "{{[^"]+}}"} : (tensor<2x32x64xf32>, tensor<1x64xf32>) -> tensor<2x32x64xf32>
// CHECK-NEXT: %[[E2:.*]] = mw.add %[[E1]], %arg1 {mw.layer = "{{[^"]+}}"} : (tensor<2x32x64xf32>, tensor<32x64xf32>)
// CHECK-NEXT: %[[X0:[^,]*]], {{.*}} = mw.layer_norm %[[E2]], %arg3, %arg4 {epsilon = 9.9999999999999998E-13 : f64, mw.layer = "{{[^"]+}}"}

// Layer 0: bidirectional attention, post-LayerNorm residuals.
// CHECK-NEXT: mw.matmul %[[X0]], %arg5 {mw.layer = "{{[^"]+}}", transpose_rhs} : {{.*}} loc(#[[ATTN0:loc[0-9]*]])
// CHECK-NEXT: mw.add {{.*}}, %arg6
// CHECK-NEXT: mw.reshape
// CHECK-NEXT: %[[Q:.*]] = mw.transpose
// CHECK-NEXT: mw.matmul %[[X0]], %arg7 {mw.layer = "{{[^"]+}}", transpose_rhs}
// CHECK-NEXT: mw.add {{.*}}, %arg8
// CHECK-NEXT: mw.reshape
// CHECK-NEXT: %[[K:.*]] = mw.transpose
// CHECK-NEXT: mw.matmul %[[X0]], %arg9 {mw.layer = "{{[^"]+}}", transpose_rhs}
// CHECK-NEXT: mw.add {{.*}}, %arg10
// CHECK-NEXT: mw.reshape
// CHECK-NEXT: %[[V:.*]] = mw.transpose
// CHECK-NEXT: %[[ATTN:[^,]*]], {{.*}} = mw.attention %[[Q]], %[[K]], %[[V]] {mw.layer = "{{[^"]+}}"} :
// CHECK-NEXT: mw.transpose %[[ATTN]]
// CHECK-NEXT: mw.reshape
// CHECK-NEXT: mw.matmul {{.*}}, %arg11 {mw.layer = "{{[^"]+}}", transpose_rhs}
// CHECK-NEXT: %[[AO:.*]] = mw.add {{.*}}, %arg12
// CHECK-NEXT: %[[R1:.*]] = mw.add %[[AO]], %[[X0]]
// CHECK-NEXT: %[[X1:[^,]*]], {{.*}} = mw.layer_norm %[[R1]], %arg13, %arg14 {epsilon = 9.9999999999999998E-13 : f64, mw.layer = "{{[^"]+}}"}
// CHECK-NEXT: mw.matmul %[[X1]], %arg15 {mw.layer = "{{[^"]+}}", transpose_rhs} : (tensor<2x32x64xf32>, tensor<256x64xf32>) -> tensor<2x32x256xf32> loc(#[[INTER0:loc[0-9]*]])
// CHECK-NEXT: mw.add {{.*}}, %arg16
// CHECK-NEXT: %[[G:.*]] = mw.gelu {{.*}} {mw.layer = "{{[^"]+}}"} : tensor<2x32x256xf32>
// CHECK-NEXT: mw.matmul %[[G]], %arg17 {mw.layer = "{{[^"]+}}", transpose_rhs} : (tensor<2x32x256xf32>, tensor<64x256xf32>) -> tensor<2x32x64xf32> loc(#[[OUT0:loc[0-9]*]])
// CHECK-NEXT: %[[FO:.*]] = mw.add {{.*}}, %arg18
// CHECK-NEXT: %[[R2:.*]] = mw.add %[[FO]], %[[X1]]
// CHECK-NEXT: mw.layer_norm %[[R2]], %arg19, %arg20 {epsilon = 9.9999999999999998E-13 : f64, mw.layer = "{{[^"]+}}"}

// MLM head: dense + GELU + LayerNorm, decoder tied to the word embeddings
// plus cls.predictions.bias, cross-entropy with ignore_index -100 (the
// op's default, so not printed).
// CHECK:      mw.matmul {{.*}}, %arg37 {mw.layer = "{{[^"]+}}", transpose_rhs} : {{.*}} loc(#[[CLS:loc[0-9]*]])
// CHECK-NEXT: mw.add {{.*}}, %arg38
// CHECK-NEXT: mw.gelu
// CHECK-NEXT: %[[T:[^,]*]], {{.*}} = mw.layer_norm {{.*}}, %arg39, %arg40 {epsilon = 9.9999999999999998E-13 : f64, mw.layer = "{{[^"]+}}"}
// CHECK-NEXT: %[[DEC:.*]] = mw.matmul %[[T]], %arg0 {mw.layer = "{{[^"]+}}", transpose_rhs} : (tensor<2x32x64xf32>, tensor<256x64xf32>) -> tensor<2x32x256xf32>
// CHECK-NEXT: %[[LOGITS:.*]] = mw.add %[[DEC]], %arg41 {mw.layer = "{{[^"]+}}"} : (tensor<2x32x256xf32>, tensor<256xf32>) -> tensor<2x32x256xf32>
// CHECK-NEXT: mw.reshape %[[LOGITS]] {mw.layer = "{{[^"]+}}"} : tensor<2x32x256xf32> -> tensor<64x256xf32>
// CHECK-NEXT: mw.reshape %arg43 {mw.layer = "{{[^"]+}}"} : tensor<2x32xi32> -> tensor<64xi32>
// CHECK-NEXT: mw.cross_entropy {{.*}} {mw.layer = "{{[^"]+}}"} : (tensor<64x256xf32>, tensor<64xi32>) -> tensor<f32>
// CHECK-NOT:  mw.

// CHECK-DAG: #[[EMB]] = loc("bert.embeddings")
// CHECK-DAG: #[[ATTN0]] = loc("bert.encoder.layer.0.attention")
// CHECK-DAG: #[[INTER0]] = loc("bert.encoder.layer.0.intermediate")
// CHECK-DAG: #[[OUT0]] = loc("bert.encoder.layer.0.output")
// CHECK-DAG: #[[CLS]] = loc("cls.predictions")

// No attention in BERT is causal.
// RUN: mw-models bert --preset bert-tiny --emit-locations=false | FileCheck %s --check-prefix=NOCAUSAL
// NOCAUSAL-NOT: causal
