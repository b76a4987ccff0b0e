// --mw-one-shot-bufferize's linear in-place rule gives byte-identical IR to
// One-Shot Analysis (analysis=upstream) on whole steps: training with remat
// and hoisted updates, mixed precision, ZeRO-3 with fusion, inference; and
// the bufferized step computes the same outputs as the step on tensors.

// RUN: mw-models gpt --preset gpt2-tiny --attention=unfused --train -o %t.gpt.mlir
// RUN: mw-opt %t.gpt.mlir --mw-remat=strategy=auto --mw-hoist-updates --mw-form-kernels -o %t.gpt.k.mlir
// RUN: mw-opt %t.gpt.k.mlir --mw-one-shot-bufferize -o %t.gpt.linear.mlir
// RUN: mw-opt %t.gpt.k.mlir --mw-one-shot-bufferize=analysis=upstream -o %t.gpt.upstream.mlir
// RUN: diff %t.gpt.linear.mlir %t.gpt.upstream.mlir
// RUN: mw-eval %t.gpt.k.mlir --entry train_step --random-inputs 3 --save-inputs %t.gpt.in --print > %t.gpt.ref
// RUN: mw-eval %t.gpt.linear.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -

// RUN: mw-models bert --preset bert-tiny --precision fp16 --train -o %t.bert.mlir
// RUN: mw-opt %t.bert.mlir --mw-hoist-updates --mw-form-kernels -o %t.bert.k.mlir
// RUN: mw-opt %t.bert.k.mlir --mw-one-shot-bufferize -o %t.bert.linear.mlir
// RUN: mw-opt %t.bert.k.mlir --mw-one-shot-bufferize=analysis=upstream -o %t.bert.upstream.mlir
// RUN: diff %t.bert.linear.mlir %t.bert.upstream.mlir
// RUN: mw-eval %t.bert.k.mlir --entry train_step --random-inputs 3 --save-inputs %t.bert.in --print > %t.bert.ref
// RUN: mw-eval %t.bert.linear.mlir --entry train_step --inputs %t.bert.in --print | diff %t.bert.ref -

// RUN: mw-models llama --preset llama-tiny --precision bf16 --batch 2 --train -o %t.llama.mlir
// RUN: mw-opt %t.llama.mlir --mw-zero="stage=3 ranks=2" --mw-hoist-updates --mw-sink --mw-fuse --mw-form-kernels -o %t.llama.k.mlir
// RUN: mw-opt %t.llama.k.mlir --mw-one-shot-bufferize -o %t.llama.linear.mlir
// RUN: mw-opt %t.llama.k.mlir --mw-one-shot-bufferize=analysis=upstream -o %t.llama.upstream.mlir
// RUN: diff %t.llama.linear.mlir %t.llama.upstream.mlir

// RUN: mw-models llama --preset llama-tiny --inference --kv-dtype int8 -o %t.inf.mlir
// RUN: mw-opt %t.inf.mlir --mw-form-kernels -o %t.inf.k.mlir
// RUN: mw-opt %t.inf.k.mlir --mw-one-shot-bufferize -o %t.inf.linear.mlir
// RUN: mw-opt %t.inf.k.mlir --mw-one-shot-bufferize=analysis=upstream -o %t.inf.upstream.mlir
// RUN: diff %t.inf.linear.mlir %t.inf.upstream.mlir
