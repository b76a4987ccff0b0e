// mw-run on the CPU trains gpt2-tiny's step planned with --mw-hoist-updates
// (the default pipeline's first pass) to the same weights as the step
// planned without it: 3 steps, every loss and every weight and
// optimizer-state tensor bit-identical (evaluator matmul loops); also with
// --mw-remat (its recompute clones read the parameters the updates
// overwrite), and with --mw-fuse against --mw-fuse without it (the
// updates' horizontal kernels).
// RUN: mw-models gpt --preset gpt2-tiny --train -o %t.mlir
// RUN: mw-opt %t.mlir --mw-train-pipeline=hoist-updates=false -o %t.p.mlir 2>/dev/null
// RUN: mw-translate --mw-to-plan %t.p.mlir -o %t.mwplan
// RUN: mw-opt %t.mlir --mw-train-pipeline -o %t.hp.mlir 2>/dev/null
// RUN: mw-translate --mw-to-plan %t.hp.mlir -o %t.h.mwplan
// RUN: mw-opt %t.mlir --mw-remat="strategy=sqrt" --mw-train-pipeline -o %t.rp.mlir 2>/dev/null
// RUN: mw-translate --mw-to-plan %t.rp.mlir -o %t.r.mwplan
// RUN: mw-opt %t.mlir --mw-train-pipeline="fuse=true hoist-updates=false" -o %t.fp0.mlir 2>/dev/null
// RUN: mw-translate --mw-to-plan %t.fp0.mlir -o %t.f0.mwplan
// RUN: mw-opt %t.mlir --mw-train-pipeline=fuse=true -o %t.fp.mlir 2>/dev/null
// RUN: mw-translate --mw-to-plan %t.fp.mlir -o %t.f.mwplan
// RUN: mw-run %t.mwplan --steps 3 --seed 4 --reference-matmul --save-weights %t.w > %t.out
// RUN: mw-run %t.h.mwplan --steps 3 --seed 4 --reference-matmul --save-weights %t.hw > %t.hout
// RUN: mw-run %t.r.mwplan --steps 3 --seed 4 --reference-matmul --save-weights %t.rw > %t.rout
// RUN: mw-run %t.f0.mwplan --steps 3 --seed 4 --reference-matmul --save-weights %t.f0w > %t.f0out
// RUN: mw-run %t.f.mwplan --steps 3 --seed 4 --reference-matmul --save-weights %t.fw > %t.fout
// RUN: grep '^step [0-9]' %t.out | awk '{print $4}' > %t.l
// RUN: grep '^step [0-9]' %t.hout | awk '{print $4}' | diff %t.l -
// RUN: grep '^step [0-9]' %t.rout | awk '{print $4}' | diff %t.l -
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.w %t.hw | FileCheck %s
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.w %t.rw | FileCheck %s
// RUN: grep '^step [0-9]' %t.f0out | awk '{print $4}' > %t.fl
// RUN: grep '^step [0-9]' %t.fout | awk '{print $4}' | diff %t.fl -
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.f0w %t.fw | FileCheck %s
// The hoisted step's updates are no longer all at the end.
// RUN: FileCheck %s --check-prefix=ORDER --input-file %t.hp.mlir
// CHECK: compared 85 tensors, 0 mismatches
// ORDER-LABEL: func.func @train_step
// ORDER:       mw.adamw
// ORDER:       mw.attention_grad
