// mw-run on the CPU trains the rematerialized gpt2-tiny step to the same
// weights as the step without remat: 3 steps, every loss and every weight and
// optimizer-state tensor bit-identical (evaluator matmul loops).
// RUN: mw-models gpt --preset gpt2-tiny --train -o %t.mlir
// RUN: mw-opt %t.mlir --mw-train-pipeline -o %t.p.mlir 2>/dev/null
// RUN: mw-translate --mw-to-plan %t.p.mlir -o %t.mwplan
// RUN: mw-opt %t.mlir --mw-remat="strategy=sqrt" --mw-train-pipeline -o %t.rp.mlir 2>/dev/null
// RUN: mw-translate --mw-to-plan %t.rp.mlir -o %t.r.mwplan
// RUN: mw-opt %t.mlir --mw-remat="strategy=all" --mw-train-pipeline -o %t.ap.mlir 2>/dev/null
// RUN: mw-translate --mw-to-plan %t.ap.mlir -o %t.a.mwplan
// RUN: mw-run %t.mwplan --steps 3 --seed 4 --reference-matmul --save-weights %t.w > %t.out
// RUN: mw-run %t.r.mwplan --steps 3 --seed 4 --reference-matmul --save-weights %t.rw > %t.rout
// RUN: mw-run %t.a.mwplan --steps 3 --seed 4 --reference-matmul --save-weights %t.aw > %t.aout
// RUN: grep '^step [0-9]' %t.out | awk '{print $4}' > %t.l
// RUN: grep '^step [0-9]' %t.rout | awk '{print $4}' | diff %t.l -
// RUN: grep '^step [0-9]' %t.aout | awk '{print $4}' | diff %t.l -
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.w %t.rw | FileCheck %s
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.w %t.aw | FileCheck %s
// revolve's staged plan (regions, one snapshot: some values read through
// clones of two sweeps) trains to the same weights too.
// RUN: mw-opt %t.mlir --mw-remat="strategy=revolve snapshots=1" --mw-train-pipeline -o %t.vp.mlir 2>/dev/null
// RUN: mw-translate --mw-to-plan %t.vp.mlir -o %t.v.mwplan
// RUN: mw-run %t.v.mwplan --steps 3 --seed 4 --reference-matmul --save-weights %t.vw > %t.vout
// RUN: grep '^step [0-9]' %t.vout | awk '{print $4}' | diff %t.l -
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.w %t.vw | FileCheck %s
// CHECK: compared 85 tensors, 0 mismatches
