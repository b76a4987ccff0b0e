// Every step of the bufferization and planning pipeline computes the same
// outputs as the program on tensors, bit for bit (DESIGN.md decision 6):
// kernels formed, bufferized (in-place updates included), planned into an
// arena allocation or an arena argument. Inputs are saved from the
// unplanned program and fed to each later form.

// RUN: mw-models gpt --preset gpt2-tiny --train -o %t.gpt.mlir
// RUN: mw-eval %t.gpt.mlir --entry train_step --random-inputs 7 --save-inputs %t.gpt.in --print > %t.gpt.ref
// RUN: mw-opt %t.gpt.mlir --mw-form-kernels -o %t.gpt.k.mlir
// RUN: mw-eval %t.gpt.k.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -
// RUN: mw-opt %t.gpt.mlir --mw-bufferize -o %t.gpt.b.mlir
// RUN: mw-eval %t.gpt.b.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -
// RUN: mw-opt %t.gpt.b.mlir --mw-static-arena --mw-verify-plan -o %t.gpt.p.mlir 2>/dev/null
// RUN: mw-eval %t.gpt.p.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -
// RUN: mw-opt %t.gpt.b.mlir --mw-static-arena=arena=argument --mw-verify-plan -o %t.gpt.a.mlir 2>/dev/null
// RUN: mw-eval %t.gpt.a.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -

// RUN: mw-models gpt --preset gpt2-tiny -o %t.gptfwd.mlir
// RUN: mw-eval %t.gptfwd.mlir --entry forward --random-inputs 7 --save-inputs %t.gptfwd.in --print > %t.gptfwd.ref
// RUN: mw-opt %t.gptfwd.mlir --mw-form-kernels -o %t.gptfwd.k.mlir
// RUN: mw-eval %t.gptfwd.k.mlir --entry forward --inputs %t.gptfwd.in --print | diff %t.gptfwd.ref -
// RUN: mw-opt %t.gptfwd.mlir --mw-bufferize -o %t.gptfwd.b.mlir
// RUN: mw-eval %t.gptfwd.b.mlir --entry forward --inputs %t.gptfwd.in --print | diff %t.gptfwd.ref -
// RUN: mw-opt %t.gptfwd.b.mlir --mw-static-arena --mw-verify-plan -o %t.gptfwd.p.mlir 2>/dev/null
// RUN: mw-eval %t.gptfwd.p.mlir --entry forward --inputs %t.gptfwd.in --print | diff %t.gptfwd.ref -
// RUN: mw-opt %t.gptfwd.b.mlir --mw-static-arena=arena=argument --mw-verify-plan -o %t.gptfwd.a.mlir 2>/dev/null
// RUN: mw-eval %t.gptfwd.a.mlir --entry forward --inputs %t.gptfwd.in --print | diff %t.gptfwd.ref -

// RUN: mw-models llama --preset llama-tiny --train --precision bf16 --grad-accum 2 -o %t.llama.mlir
// RUN: mw-eval %t.llama.mlir --entry train_step --random-inputs 7 --save-inputs %t.llama.in --print > %t.llama.ref
// RUN: mw-opt %t.llama.mlir --mw-form-kernels -o %t.llama.k.mlir
// RUN: mw-eval %t.llama.k.mlir --entry train_step --inputs %t.llama.in --print | diff %t.llama.ref -
// RUN: mw-opt %t.llama.mlir --mw-bufferize -o %t.llama.b.mlir
// RUN: mw-eval %t.llama.b.mlir --entry train_step --inputs %t.llama.in --print | diff %t.llama.ref -
// RUN: mw-opt %t.llama.b.mlir --mw-static-arena --mw-verify-plan -o %t.llama.p.mlir 2>/dev/null
// RUN: mw-eval %t.llama.p.mlir --entry train_step --inputs %t.llama.in --print | diff %t.llama.ref -
// RUN: mw-opt %t.llama.b.mlir --mw-static-arena=arena=argument --mw-verify-plan -o %t.llama.a.mlir 2>/dev/null
// RUN: mw-eval %t.llama.a.mlir --entry train_step --inputs %t.llama.in --print | diff %t.llama.ref -

// RUN: mw-models bert --preset bert-tiny --train --precision fp16 -o %t.bert.mlir
// RUN: mw-eval %t.bert.mlir --entry train_step --random-inputs 7 --save-inputs %t.bert.in --print > %t.bert.ref
// RUN: mw-opt %t.bert.mlir --mw-form-kernels -o %t.bert.k.mlir
// RUN: mw-eval %t.bert.k.mlir --entry train_step --inputs %t.bert.in --print | diff %t.bert.ref -
// RUN: mw-opt %t.bert.mlir --mw-bufferize -o %t.bert.b.mlir
// RUN: mw-eval %t.bert.b.mlir --entry train_step --inputs %t.bert.in --print | diff %t.bert.ref -
// RUN: mw-opt %t.bert.b.mlir --mw-static-arena --mw-verify-plan -o %t.bert.p.mlir 2>/dev/null
// RUN: mw-eval %t.bert.p.mlir --entry train_step --inputs %t.bert.in --print | diff %t.bert.ref -
// RUN: mw-opt %t.bert.b.mlir --mw-static-arena=arena=argument --mw-verify-plan -o %t.bert.a.mlir 2>/dev/null
// RUN: mw-eval %t.bert.a.mlir --entry train_step --inputs %t.bert.in --print | diff %t.bert.ref -

// RUN: mw-models mlp --preset mlp-tiny --train --optimizer sgd --momentum 0.9 --nesterov -o %t.mlp.mlir
// RUN: mw-eval %t.mlp.mlir --entry train_step --random-inputs 7 --save-inputs %t.mlp.in --print > %t.mlp.ref
// RUN: mw-opt %t.mlp.mlir --mw-form-kernels -o %t.mlp.k.mlir
// RUN: mw-eval %t.mlp.k.mlir --entry train_step --inputs %t.mlp.in --print | diff %t.mlp.ref -
// RUN: mw-opt %t.mlp.mlir --mw-bufferize -o %t.mlp.b.mlir
// RUN: mw-eval %t.mlp.b.mlir --entry train_step --inputs %t.mlp.in --print | diff %t.mlp.ref -
// RUN: mw-opt %t.mlp.b.mlir --mw-static-arena --mw-verify-plan -o %t.mlp.p.mlir 2>/dev/null
// RUN: mw-eval %t.mlp.p.mlir --entry train_step --inputs %t.mlp.in --print | diff %t.mlp.ref -
// RUN: mw-opt %t.mlp.b.mlir --mw-static-arena=arena=argument --mw-verify-plan -o %t.mlp.a.mlir 2>/dev/null
// RUN: mw-eval %t.mlp.a.mlir --entry train_step --inputs %t.mlp.in --print | diff %t.mlp.ref -
