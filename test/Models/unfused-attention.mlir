// --attention=unfused spells attention out as PyTorch's eager GPT-2 computes
// it (matmul, scale, additive causal mask, softmax, matmul), so the
// [B, H, S, S] scores and probabilities are activations. The causal mask is
// one [S, S] constant shared by every layer; bert is bidirectional and has
// none. The fused and unfused models give the same loss up to rounding, and
// their training steps verify and run without NaN (the -inf mask must not
// reach the softmax gradient as inf - inf).
//
// RUN: mw-models gpt --preset gpt2-tiny --attention=unfused -o %t.gpt.mlir
// RUN: FileCheck %s --check-prefix=GPT --input-file %t.gpt.mlir
// RUN: grep -c "mw.constant" %t.gpt.mlir | FileCheck %s --check-prefix=ONE
// RUN: mw-models llama --preset llama-tiny --rotary --attention=unfused | FileCheck %s --check-prefix=LLAMA
// RUN: mw-models bert --preset bert-tiny --attention=unfused | FileCheck %s --check-prefix=BERT
// RUN: mw-models gpt --preset gpt2-tiny --attention=unfused --dtype bf16 | FileCheck %s --check-prefix=BF16
// RUN: not mw-models mlp --attention=unfused 2>&1 | FileCheck %s --check-prefix=MLP
// RUN: mw-models --help | FileCheck %s --check-prefix=HELP

// The default is fused, and spelling it out changes nothing.
// RUN: mw-models gpt --preset gpt2-tiny > %t.default.mlir
// RUN: mw-models gpt --preset gpt2-tiny --attention=fused | diff %t.default.mlir -
// RUN: diff %t.default.mlir %mw_src/examples/gpt2-tiny.mlir

// GPT: mw-models gpt --layers 2 --hidden 64 --heads 4 --ffn 256 --seq 32 --batch 2 --vocab 256 --dtype f32 --attention unfused
// GPT: dtype=f32 attention=unfused
// GPT-LABEL: func.func @forward(
// GPT:         %[[MASK:.*]] = mw.constant {mw.layer = "{{[^"]+}}"} dense<{{.*}}> : tensor<32x32xf32> loc(#[[MASK_LOC:loc[0-9]*]])
// GPT-NEXT:    mw.embedding
// GPT-NOT:     mw.attention
// GPT:         %[[S:.*]] = mw.matmul %{{.*}}, %{{.*}} {mw.layer = "{{[^"]+}}", transpose_rhs} : (tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>) -> tensor<2x4x32x32xf32> loc(#[[ATTN0:loc[0-9]*]])
// GPT-NEXT:    %[[SCALE:.*]] = mw.splat 2.500000e-01 {mw.layer = "{{[^"]+}}"} : tensor<f32> loc(#[[ATTN0]])
// GPT-NEXT:    %[[X:.*]] = mw.mul %[[S]], %[[SCALE]] {mw.layer = "{{[^"]+}}"} : (tensor<2x4x32x32xf32>, tensor<f32>) -> tensor<2x4x32x32xf32> loc(#[[ATTN0]])
// GPT-NEXT:    %[[M:.*]] = mw.add %[[X]], %[[MASK]] {mw.layer = "{{[^"]+}}"} : (tensor<2x4x32x32xf32>, tensor<32x32xf32>) -> tensor<2x4x32x32xf32> loc(#[[ATTN0]])
// GPT-NEXT:    %[[P:.*]] = mw.softmax %[[M]] axis = 3 {mw.layer = "{{[^"]+}}"} : tensor<2x4x32x32xf32> loc(#[[ATTN0]])
// GPT-NEXT:    mw.matmul %[[P]], %{{.*}} {mw.layer = "{{[^"]+}}"} : (tensor<2x4x32x32xf32>, tensor<2x4x32x16xf32>) -> tensor<2x4x32x16xf32> loc(#[[ATTN0]])
// The second layer adds the same mask.
// GPT:         mw.add %{{.*}}, %[[MASK]] {mw.layer = "{{[^"]+}}"} : {{.*}} loc(#[[ATTN1:loc[0-9]*]])
// GPT-NOT:     mw.attention
// GPT-DAG:     #[[MASK_LOC]] = loc("causal_mask")
// GPT-DAG:     #[[ATTN0]] = loc("h.0.attn")
// GPT-DAG:     #[[ATTN1]] = loc("h.1.attn")

// ONE: {{^}}1{{$}}

// LLAMA-LABEL: func.func @forward(
// LLAMA-NOT:     mw.attention
// LLAMA:         mw.add %{{.*}}, %{{.*}} {mw.layer = "{{[^"]+}}"} : (tensor<2x4x32x32xf32>, tensor<32x32xf32>) -> tensor<2x4x32x32xf32>
// LLAMA-NEXT:    mw.softmax
// LLAMA-NOT:     mw.attention
// LLAMA:         loc("model.layers.0.self_attn")

// BERT-LABEL: func.func @forward(
// BERT-NOT:      mw.constant {mw.layer = "{{[^"]+}}"}
// BERT-NOT:      mw.attention
// BERT:          mw.mul %{{.*}}, %{{.*}} {mw.layer = "{{[^"]+}}"} : (tensor<2x4x32x32xf32>, tensor<f32>) -> tensor<2x4x32x32xf32>
// BERT-NEXT:     mw.softmax
// BERT-NOT:      mw.constant {mw.layer = "{{[^"]+}}"}
// BERT-NOT:      mw.attention
// BERT:          loc("bert.encoder.layer.0.attention")

// BF16: mw.constant {mw.layer = "{{[^"]+}}"} dense<{{.*}}> : tensor<32x32xbf16>
// BF16: mw.splat 2.500000e-01 {mw.layer = "{{[^"]+}}"} : tensor<bf16>
// BF16: mw.softmax %{{.*}} axis = 3 {mw.layer = "{{[^"]+}}"} : tensor<2x4x32x32xbf16>

// MLP: mw-models: error: --attention does not apply to the mlp family

// HELP: --attention=<value>
// HELP-NEXT: =fused
// HELP-NEXT: =unfused

// The training steps build and verify, in every precision.
// RUN: mw-models gpt --preset gpt2-tiny --attention=unfused --train | mw-opt - -o /dev/null
// RUN: mw-models gpt --preset gpt2-tiny --attention=unfused --train --precision bf16 | mw-opt - -o /dev/null
// RUN: mw-models gpt --preset gpt2-tiny --attention=unfused --train --precision fp16 | mw-opt - -o /dev/null
// RUN: mw-models llama --preset llama-tiny --rotary --attention=unfused --train | mw-opt - -o /dev/null
// RUN: mw-models llama --preset llama-tiny --attention=unfused --train --precision bf16 | mw-opt - -o /dev/null
// RUN: mw-models llama --preset llama-tiny --attention=unfused --train --precision fp16 | mw-opt - -o /dev/null
// RUN: mw-models bert --preset bert-tiny --attention=unfused --train | mw-opt - -o /dev/null
// RUN: mw-models bert --preset bert-tiny --attention=unfused --train --precision bf16 | mw-opt - -o /dev/null
// RUN: mw-models bert --preset bert-tiny --attention=unfused --train --precision fp16 | mw-opt - -o /dev/null

// Fused and unfused losses agree on the same random weights and tokens.
// RUN: mw-models gpt --preset gpt2-tiny | mw-eval - --random-inputs 0 --outputs %t.gpt.fused
// RUN: mw-eval %t.gpt.mlir --random-inputs 0 --outputs %t.gpt.unfused
// RUN: python3 %S/../Runtime/Inputs/compare_safetensors.py %t.gpt.fused %t.gpt.unfused --rtol 1e-5 | FileCheck %s --check-prefix=SAME
// RUN: mw-models llama --preset llama-tiny --rotary | mw-eval - --random-inputs 0 --outputs %t.llama.fused
// RUN: mw-models llama --preset llama-tiny --rotary --attention=unfused | mw-eval - --random-inputs 0 --outputs %t.llama.unfused
// RUN: python3 %S/../Runtime/Inputs/compare_safetensors.py %t.llama.fused %t.llama.unfused --rtol 1e-5 | FileCheck %s --check-prefix=SAME
// RUN: mw-models bert --preset bert-tiny | mw-eval - --random-inputs 0 --outputs %t.bert.fused
// RUN: mw-models bert --preset bert-tiny --attention=unfused | mw-eval - --random-inputs 0 --outputs %t.bert.unfused
// RUN: python3 %S/../Runtime/Inputs/compare_safetensors.py %t.bert.fused %t.bert.unfused --rtol 1e-5 | FileCheck %s --check-prefix=SAME
// SAME: compared 1 tensors, 0 mismatches

// So do the gradients: one SGD step with lr 1 moves every parameter by its
// gradient, and the updated parameters agree.
// RUN: mw-models gpt --preset gpt2-tiny --train --optimizer sgd --lr 1 | mw-eval - --entry train_step --random-inputs 0 --outputs %t.gpt.sgd.fused
// RUN: mw-models gpt --preset gpt2-tiny --attention=unfused --train --optimizer sgd --lr 1 | mw-eval - --entry train_step --random-inputs 0 --outputs %t.gpt.sgd.unfused
// RUN: python3 %S/../Runtime/Inputs/compare_safetensors.py %t.gpt.sgd.fused %t.gpt.sgd.unfused --rtol 1e-5 | FileCheck %s --check-prefix=GPT-SGD
// RUN: mw-models bert --preset bert-tiny --train --optimizer sgd --lr 1 | mw-eval - --entry train_step --random-inputs 0 --outputs %t.bert.sgd.fused
// RUN: mw-models bert --preset bert-tiny --attention=unfused --train --optimizer sgd --lr 1 | mw-eval - --entry train_step --random-inputs 0 --outputs %t.bert.sgd.unfused
// RUN: python3 %S/../Runtime/Inputs/compare_safetensors.py %t.bert.sgd.fused %t.bert.sgd.unfused --rtol 1e-5 | FileCheck %s --check-prefix=BERT-SGD
// GPT-SGD: compared 29 tensors, 0 mismatches
// BERT-SGD: compared 43 tensors, 0 mismatches

// One training step runs the backward pass through the mask: the loss is
// near ln(256) = 5.545 and no output is NaN or infinite.
// RUN: mw-models gpt --preset gpt2-tiny --attention=unfused --train | mw-eval - --entry train_step --random-inputs 0 --print > %t.train
// RUN: FileCheck %s --check-prefix=TRAIN --input-file %t.train
// RUN: not grep -i -w -e nan -e inf %t.train
// TRAIN: loss: f32 [] checksum=0x{{[0-9a-f]+}} sum=5.{{[45][0-9]+}}e+00
