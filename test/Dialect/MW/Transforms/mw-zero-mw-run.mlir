// mw-run on the CPU trains the ZeRO step of one rank (every collective a
// copy) to the same losses and weights as the unsharded step, through the
// same pipeline: gpt2-tiny, stages 0-3 with overlap on and off, 3 steps,
// evaluator matmul loops, bit for bit. The ZeRO step keeps sharded state
// (and at stage 3 the parameters) under zero.bucketN.* names, so the
// unsharded weights are packed into those buckets (pack_zero_weights.py,
// from the step's mw.shard attributes) both to start the ZeRO run from the
// unsharded run's initial weights and to compare its final ones.
// RUN: mw-models gpt --preset gpt2-tiny --train -o %t.mlir
// RUN: mw-opt %t.mlir --mw-train-pipeline 2>/dev/null | mw-translate --mw-to-plan -o %t.mwplan
// RUN: mw-run %t.mwplan --steps 0 --seed 4 --save-weights %t.init >/dev/null
// RUN: mw-run %t.mwplan --steps 3 --weights %t.init --reference-matmul --save-weights %t.w > %t.out
// RUN: grep '^step [0-9]' %t.out | awk '{print $4}' > %t.l
// RUN: FileCheck %s --check-prefix=LOSS < %t.l
// LOSS:      5.594079
// LOSS-NEXT: 5.232855
// LOSS-NEXT: 4.995879
// RUN: mw-opt %t.mlir --mw-zero="stage=0 ranks=1 overlap=on" -o %t.z0on.mlir
// RUN: python3 %S/../../../Runtime/Inputs/pack_zero_weights.py %t.z0on.mlir %t.init %t.z0on.init
// RUN: python3 %S/../../../Runtime/Inputs/pack_zero_weights.py %t.z0on.mlir %t.w %t.z0on.expected
// RUN: mw-opt %t.z0on.mlir --mw-train-pipeline 2>/dev/null | mw-translate --mw-to-plan -o %t.z0on.mwplan
// RUN: mw-run %t.z0on.mwplan --steps 3 --weights %t.z0on.init --reference-matmul --save-weights %t.z0on.w | grep '^step [0-9]' | awk '{print $4}' | diff %t.l -
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.z0on.expected %t.z0on.w | FileCheck %s --check-prefix=S0
// RUN: mw-opt %t.mlir --mw-zero="stage=0 ranks=1 overlap=off" -o %t.z0off.mlir
// RUN: python3 %S/../../../Runtime/Inputs/pack_zero_weights.py %t.z0off.mlir %t.init %t.z0off.init
// RUN: python3 %S/../../../Runtime/Inputs/pack_zero_weights.py %t.z0off.mlir %t.w %t.z0off.expected
// RUN: mw-opt %t.z0off.mlir --mw-train-pipeline 2>/dev/null | mw-translate --mw-to-plan -o %t.z0off.mwplan
// RUN: mw-run %t.z0off.mwplan --steps 3 --weights %t.z0off.init --reference-matmul --save-weights %t.z0off.w | grep '^step [0-9]' | awk '{print $4}' | diff %t.l -
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.z0off.expected %t.z0off.w | FileCheck %s --check-prefix=S0
// RUN: mw-opt %t.mlir --mw-zero="stage=1 ranks=1 overlap=on" -o %t.z1on.mlir
// RUN: python3 %S/../../../Runtime/Inputs/pack_zero_weights.py %t.z1on.mlir %t.init %t.z1on.init
// RUN: python3 %S/../../../Runtime/Inputs/pack_zero_weights.py %t.z1on.mlir %t.w %t.z1on.expected
// RUN: mw-opt %t.z1on.mlir --mw-train-pipeline 2>/dev/null | mw-translate --mw-to-plan -o %t.z1on.mwplan
// RUN: mw-run %t.z1on.mwplan --steps 3 --weights %t.z1on.init --reference-matmul --save-weights %t.z1on.w | grep '^step [0-9]' | awk '{print $4}' | diff %t.l -
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.z1on.expected %t.z1on.w | FileCheck %s --check-prefix=S1
// RUN: mw-opt %t.mlir --mw-zero="stage=1 ranks=1 overlap=off" -o %t.z1off.mlir
// RUN: python3 %S/../../../Runtime/Inputs/pack_zero_weights.py %t.z1off.mlir %t.init %t.z1off.init
// RUN: python3 %S/../../../Runtime/Inputs/pack_zero_weights.py %t.z1off.mlir %t.w %t.z1off.expected
// RUN: mw-opt %t.z1off.mlir --mw-train-pipeline 2>/dev/null | mw-translate --mw-to-plan -o %t.z1off.mwplan
// RUN: mw-run %t.z1off.mwplan --steps 3 --weights %t.z1off.init --reference-matmul --save-weights %t.z1off.w | grep '^step [0-9]' | awk '{print $4}' | diff %t.l -
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.z1off.expected %t.z1off.w | FileCheck %s --check-prefix=S1
// RUN: mw-opt %t.mlir --mw-zero="stage=2 ranks=1 overlap=on" -o %t.z2on.mlir
// RUN: python3 %S/../../../Runtime/Inputs/pack_zero_weights.py %t.z2on.mlir %t.init %t.z2on.init
// RUN: python3 %S/../../../Runtime/Inputs/pack_zero_weights.py %t.z2on.mlir %t.w %t.z2on.expected
// RUN: mw-opt %t.z2on.mlir --mw-train-pipeline 2>/dev/null | mw-translate --mw-to-plan -o %t.z2on.mwplan
// RUN: mw-run %t.z2on.mwplan --steps 3 --weights %t.z2on.init --reference-matmul --save-weights %t.z2on.w | grep '^step [0-9]' | awk '{print $4}' | diff %t.l -
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.z2on.expected %t.z2on.w | FileCheck %s --check-prefix=S2
// RUN: mw-opt %t.mlir --mw-zero="stage=2 ranks=1 overlap=off" -o %t.z2off.mlir
// RUN: python3 %S/../../../Runtime/Inputs/pack_zero_weights.py %t.z2off.mlir %t.init %t.z2off.init
// RUN: python3 %S/../../../Runtime/Inputs/pack_zero_weights.py %t.z2off.mlir %t.w %t.z2off.expected
// RUN: mw-opt %t.z2off.mlir --mw-train-pipeline 2>/dev/null | mw-translate --mw-to-plan -o %t.z2off.mwplan
// RUN: mw-run %t.z2off.mwplan --steps 3 --weights %t.z2off.init --reference-matmul --save-weights %t.z2off.w | grep '^step [0-9]' | awk '{print $4}' | diff %t.l -
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.z2off.expected %t.z2off.w | FileCheck %s --check-prefix=S2
// RUN: mw-opt %t.mlir --mw-zero="stage=3 ranks=1 overlap=on persistence-threshold=0" -o %t.z3on.mlir
// RUN: python3 %S/../../../Runtime/Inputs/pack_zero_weights.py %t.z3on.mlir %t.init %t.z3on.init
// RUN: python3 %S/../../../Runtime/Inputs/pack_zero_weights.py %t.z3on.mlir %t.w %t.z3on.expected
// RUN: mw-opt %t.z3on.mlir --mw-train-pipeline 2>/dev/null | mw-translate --mw-to-plan -o %t.z3on.mwplan
// RUN: mw-run %t.z3on.mwplan --steps 3 --weights %t.z3on.init --reference-matmul --save-weights %t.z3on.w | grep '^step [0-9]' | awk '{print $4}' | diff %t.l -
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.z3on.expected %t.z3on.w | FileCheck %s --check-prefix=S3
// RUN: mw-opt %t.mlir --mw-zero="stage=3 ranks=1 overlap=off persistence-threshold=0" -o %t.z3off.mlir
// RUN: python3 %S/../../../Runtime/Inputs/pack_zero_weights.py %t.z3off.mlir %t.init %t.z3off.init
// RUN: python3 %S/../../../Runtime/Inputs/pack_zero_weights.py %t.z3off.mlir %t.w %t.z3off.expected
// RUN: mw-opt %t.z3off.mlir --mw-train-pipeline 2>/dev/null | mw-translate --mw-to-plan -o %t.z3off.mwplan
// RUN: mw-run %t.z3off.mwplan --steps 3 --weights %t.z3off.init --reference-matmul --save-weights %t.z3off.w | grep '^step [0-9]' | awk '{print $4}' | diff %t.l -
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.z3off.expected %t.z3off.w | FileCheck %s --check-prefix=S3
// Every tensor is compared, and each agrees bit for bit: the step counter,
// the 28 parameters whole at stages 0-2, with their 56 state tensors at
// stage 0 and one bucket's exp_avg and exp_avg_sq at stages 1-2; at stage 3
// the parameters are one bucket too.
// S0: compared 85 tensors, 0 mismatches
// S1: compared 31 tensors, 0 mismatches
// S2: compared 31 tensors, 0 mismatches
// S3: compared 4 tensors, 0 mismatches
