// The user's pipeline end to end: a training step compiled with
// --mw-train-pipeline, translated to a .mwplan and run by mw-run on the CPU
// for 3 steps, against mw-eval on the unplanned IR chained for 3 steps
// (outputs of one step are the next step's parameters and state). With the
// evaluator's matmul loops (--reference-matmul) every loss and every weight
// and optimizer-state tensor is bit-identical; with OpenBLAS the losses agree
// to the printed digits and weights within a relative 1e-3 (docs/runtime.md).
// RUN: mw-models gpt --preset gpt2-tiny --train -o %t.mlir
// RUN: mw-opt %t.mlir --mw-train-pipeline -o %t.planned.mlir 2>/dev/null
// RUN: mw-translate --mw-to-plan %t.planned.mlir -o %t.mwplan
//
// RUN: mw-eval %t.mlir --entry train_step --random-inputs 11 --save-inputs %t.s0 --outputs %t.s1 --print > %t.eval1
// RUN: mw-eval %t.mlir --entry train_step --inputs %t.s0 --inputs %t.s1 --outputs %t.s2 --print > %t.eval2
// RUN: mw-eval %t.mlir --entry train_step --inputs %t.s0 --inputs %t.s2 --outputs %t.s3 --print > %t.eval3
// RUN: cat %t.eval1 %t.eval2 %t.eval3 | grep '^loss:' | sed 's/.*values=\[\(.*\)\]/\1/' \
// RUN:   | awk '{printf "%.6f\n", $1}' > %t.eval-losses
//
// RUN: mw-run %t.mwplan --device cpu --weights %t.s0 --inputs %t.s0 --steps 3 \
// RUN:   --reference-matmul --save-weights %t.w3 > %t.run
// RUN: grep '^step [0-9]' %t.run | awk '{print $4}' > %t.run-losses
// RUN: diff %t.eval-losses %t.run-losses
// RUN: python3 %S/Inputs/compare_safetensors.py %t.s3 %t.w3 --ignore loss | FileCheck %s --check-prefix=EXACT
// EXACT: compared 85 tensors, 0 mismatches
//
// RUN: mw-run %t.mwplan --device cpu --weights %t.s0 --inputs %t.s0 --steps 3 --save-weights %t.b3 > /dev/null
// RUN: python3 %S/Inputs/compare_safetensors.py %t.s3 %t.b3 --ignore loss --rtol 1e-3 | FileCheck %s --check-prefix=BLAS
// BLAS: compared 85 tensors, 0 mismatches
