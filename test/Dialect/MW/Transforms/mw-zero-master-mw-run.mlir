// mw-run on the CPU trains a step of --mw-autodiff's master-weights=optimizer
// (gpt2-tiny in bf16: bf16 parameters, f32 masters `<param>.master` in the
// optimizer state) and its ZeRO steps of one rank, through --mw-train-pipeline
// and mw-translate like any step, 3 steps, evaluator matmul loops.
// RUN: mw-models gpt --preset gpt2-tiny --train --precision bf16 --master-weights optimizer -o %t.mlir
// RUN: mw-opt %t.mlir --mw-train-pipeline 2>/dev/null | mw-translate --mw-to-plan -o %t.mwplan
// mw-run's default initialization starts every master as its parameter
// widened to f32, and after each step the parameter is its master rounded
// to bf16.
// RUN: mw-run %t.mwplan --steps 0 --seed 4 --save-weights %t.init >/dev/null
// RUN: python3 %S/../../../Runtime/Inputs/check_masters.py %t.init | FileCheck %s --check-prefix=MASTERS
// RUN: mw-run %t.mwplan --steps 3 --seed 4 --reference-matmul --save-weights %t.w > %t.out
// RUN: python3 %S/../../../Runtime/Inputs/check_masters.py %t.w | FileCheck %s --check-prefix=MASTERS
// MASTERS: compared 28 masters, 0 mismatches
// A weights file without the masters (another seed's parameters): each
// master starts as its loaded parameter widened, not as a drawn one.
// RUN: mw-run %t.mwplan --steps 0 --seed 9 --save-weights %t.other >/dev/null
// RUN: python3 %S/../../../Runtime/Inputs/drop_tensors.py %t.other .master %t.nomasters | FileCheck %s --check-prefix=DROP
// DROP: dropped 28
// RUN: mw-run %t.mwplan --steps 0 --seed 4 --weights %t.nomasters --save-weights %t.loaded >/dev/null
// RUN: python3 %S/../../../Runtime/Inputs/check_masters.py %t.loaded | FileCheck %s --check-prefix=MASTERS
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.other %t.loaded | FileCheck %s --check-prefix=SAME
// SAME: 0 mismatches
// RUN: grep '^step [0-9]' %t.out | awk '{print $4}' > %t.l
// RUN: FileCheck %s --check-prefix=LOSS < %t.l
// LOSS: 5.59
// LOSS-NEXT: 5.23
// LOSS-NEXT: 4.99
// Stages 0-2 from their own defaults: the master pieces of stages 1-2 are
// the rank's part of the whole parameters, widened, so the runs agree bit
// for bit with the unsharded one (losses and every tensor, packed into the
// buckets by pack_zero_weights.py): stage 0 keeps the 113 tensors whole,
// stages 1-2 the 28 bf16 parameters whole beside one bucket's master,
// exp_avg and exp_avg_sq, and the step counter.
// RUN: mw-opt %t.mlir --mw-zero="stage=0 ranks=1" -o %t.z0.mlir
// RUN: python3 %S/../../../Runtime/Inputs/pack_zero_weights.py %t.z0.mlir %t.w %t.z0.expected
// RUN: mw-opt %t.z0.mlir --mw-train-pipeline 2>/dev/null | mw-translate --mw-to-plan -o %t.z0.mwplan
// RUN: mw-run %t.z0.mwplan --steps 3 --seed 4 --reference-matmul --save-weights %t.z0.w | grep '^step [0-9]' | awk '{print $4}' | diff %t.l -
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.z0.expected %t.z0.w | FileCheck %s --check-prefix=S0
// S0: compared 113 tensors, 0 mismatches
// RUN: mw-opt %t.mlir --mw-zero="stage=1 ranks=1" -o %t.z1.mlir
// RUN: python3 %S/../../../Runtime/Inputs/pack_zero_weights.py %t.z1.mlir %t.w %t.z1.expected
// RUN: mw-opt %t.z1.mlir --mw-train-pipeline 2>/dev/null | mw-translate --mw-to-plan -o %t.z1.mwplan
// RUN: mw-run %t.z1.mwplan --steps 3 --seed 4 --reference-matmul --save-weights %t.z1.w | grep '^step [0-9]' | awk '{print $4}' | diff %t.l -
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.z1.expected %t.z1.w | FileCheck %s --check-prefix=S12
// RUN: mw-opt %t.mlir --mw-zero="stage=2 ranks=1 overlap=on" -o %t.z2.mlir
// RUN: python3 %S/../../../Runtime/Inputs/pack_zero_weights.py %t.z2.mlir %t.w %t.z2.expected
// RUN: mw-opt %t.z2.mlir --mw-train-pipeline 2>/dev/null | mw-translate --mw-to-plan -o %t.z2.mwplan
// RUN: mw-run %t.z2.mwplan --steps 3 --seed 4 --reference-matmul --save-weights %t.z2.w | grep '^step [0-9]' | awk '{print $4}' | diff %t.l -
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.z2.expected %t.z2.w | FileCheck %s --check-prefix=S12
// S12: compared 32 tensors, 0 mismatches
// Stage 3 keeps the parameters as a bf16 piece: started from the unsharded
// initial weights, packed (its default draws follow its own order of
// arguments), it agrees bit for bit too: the bf16 parameters' piece, the
// master, exp_avg and exp_avg_sq pieces and the step counter.
// RUN: mw-opt %t.mlir --mw-zero="stage=3 ranks=1 persistence-threshold=0" -o %t.z3.mlir
// RUN: python3 %S/../../../Runtime/Inputs/pack_zero_weights.py %t.z3.mlir %t.init %t.z3.init
// RUN: python3 %S/../../../Runtime/Inputs/pack_zero_weights.py %t.z3.mlir %t.w %t.z3.expected
// RUN: mw-opt %t.z3.mlir --mw-train-pipeline 2>/dev/null | mw-translate --mw-to-plan -o %t.z3.mwplan
// RUN: mw-run %t.z3.mwplan --steps 3 --weights %t.z3.init --reference-matmul --save-weights %t.z3.w | grep '^step [0-9]' | awk '{print $4}' | diff %t.l -
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.z3.expected %t.z3.w | FileCheck %s --check-prefix=S3
// S3: compared 5 tensors, 0 mismatches
