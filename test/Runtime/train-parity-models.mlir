// mw-run on the planned artifact against mw-eval on the unplanned IR, 3
// chained steps, for llama-tiny (bf16 compute, f32 masters, 2 micro-batches),
// bert-tiny (fp16 with dynamic loss scaling) and mlp-tiny (SGD, Nesterov):
// with the evaluator's matmul loops, every loss and every weight and state
// tensor is bit-identical.

// RUN: mw-models llama --preset llama-tiny --train --precision bf16 --grad-accum 2 -o %t.llama.mlir
// RUN: mw-opt %t.llama.mlir --mw-train-pipeline -o %t.llama.p.mlir 2>/dev/null
// RUN: mw-translate --mw-to-plan %t.llama.p.mlir -o %t.llama.mwplan
// RUN: mw-eval %t.llama.mlir --entry train_step --random-inputs 3 --save-inputs %t.llama.s0 --outputs %t.llama.s1 --print > %t.llama.e
// RUN: mw-eval %t.llama.mlir --entry train_step --inputs %t.llama.s0 --inputs %t.llama.s1 --outputs %t.llama.s2 --print >> %t.llama.e
// RUN: mw-eval %t.llama.mlir --entry train_step --inputs %t.llama.s0 --inputs %t.llama.s2 --outputs %t.llama.s3 --print >> %t.llama.e
// RUN: grep '^loss:' %t.llama.e | sed 's/.*values=\[\(.*\)\]/\1/' | awk '{printf "%.6f\n", $1}' > %t.llama.el
// RUN: mw-run %t.llama.mwplan --weights %t.llama.s0 --inputs %t.llama.s0 --steps 3 --reference-matmul --save-weights %t.llama.w3 > %t.llama.r
// RUN: grep '^step [0-9]' %t.llama.r | awk '{print $4}' | diff %t.llama.el -
// RUN: python3 %S/Inputs/compare_safetensors.py %t.llama.w3 %t.llama.s3 | FileCheck %s --check-prefix=EXACT

// RUN: mw-models bert --preset bert-tiny --train --precision fp16 -o %t.bert.mlir
// RUN: mw-opt %t.bert.mlir --mw-train-pipeline -o %t.bert.p.mlir 2>/dev/null
// RUN: mw-translate --mw-to-plan %t.bert.p.mlir -o %t.bert.mwplan
// RUN: mw-eval %t.bert.mlir --entry train_step --random-inputs 3 --save-inputs %t.bert.s0 --outputs %t.bert.s1 --print > %t.bert.e
// RUN: mw-eval %t.bert.mlir --entry train_step --inputs %t.bert.s0 --inputs %t.bert.s1 --outputs %t.bert.s2 --print >> %t.bert.e
// RUN: mw-eval %t.bert.mlir --entry train_step --inputs %t.bert.s0 --inputs %t.bert.s2 --outputs %t.bert.s3 --print >> %t.bert.e
// RUN: grep '^loss:' %t.bert.e | sed 's/.*values=\[\(.*\)\]/\1/' | awk '{printf "%.6f\n", $1}' > %t.bert.el
// RUN: mw-run %t.bert.mwplan --weights %t.bert.s0 --inputs %t.bert.s0 --steps 3 --reference-matmul --save-weights %t.bert.w3 > %t.bert.r
// RUN: grep '^step [0-9]' %t.bert.r | awk '{print $4}' | diff %t.bert.el -
// RUN: python3 %S/Inputs/compare_safetensors.py %t.bert.w3 %t.bert.s3 | FileCheck %s --check-prefix=EXACT

// RUN: mw-models mlp --preset mlp-tiny --train --optimizer sgd --momentum 0.9 --nesterov -o %t.mlp.mlir
// RUN: mw-opt %t.mlp.mlir --mw-train-pipeline -o %t.mlp.p.mlir 2>/dev/null
// RUN: mw-translate --mw-to-plan %t.mlp.p.mlir -o %t.mlp.mwplan
// RUN: mw-eval %t.mlp.mlir --entry train_step --random-inputs 3 --save-inputs %t.mlp.s0 --outputs %t.mlp.s1 --print > %t.mlp.e
// RUN: mw-eval %t.mlp.mlir --entry train_step --inputs %t.mlp.s0 --inputs %t.mlp.s1 --outputs %t.mlp.s2 --print >> %t.mlp.e
// RUN: mw-eval %t.mlp.mlir --entry train_step --inputs %t.mlp.s0 --inputs %t.mlp.s2 --outputs %t.mlp.s3 --print >> %t.mlp.e
// RUN: grep '^loss:' %t.mlp.e | sed 's/.*values=\[\(.*\)\]/\1/' | awk '{printf "%.6f\n", $1}' > %t.mlp.el
// RUN: mw-run %t.mlp.mwplan --weights %t.mlp.s0 --inputs %t.mlp.s0 --steps 3 --reference-matmul --save-weights %t.mlp.w3 > %t.mlp.r
// RUN: grep '^step [0-9]' %t.mlp.r | awk '{print $4}' | diff %t.mlp.el -
// RUN: python3 %S/Inputs/compare_safetensors.py %t.mlp.w3 %t.mlp.s3 | FileCheck %s --check-prefix=EXACT

// EXACT: compared {{[0-9]+}} tensors, 0 mismatches
