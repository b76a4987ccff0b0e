// strategy=optimal: the remark reports the gap to a lower bound on every
// plan's recompute (optimality=proven where it is 0), optimal never
// recomputes more than auto at the same budget, the bound is below what
// auto and the fixed strategies recompute at their own peaks
// (Inputs/optimal.py), and the rewritten step computes the same outputs.
// RUN: mw-models gpt --preset gpt2-tiny --train -o %t.mlir
// RUN: mw-opt %t.mlir --mw-remat="strategy=optimal budget=95% cost=flops verbose=true" -o %t.opt95.mlir 2>&1 | FileCheck %s --check-prefix=PROVEN
// PROVEN: mw-remat: strategy=optimal {{.*}} optimality=proven gap=0.000% bound={{[0-9.e+]+}} bound_unit=flops bound_status=optimal
// RUN: mw-opt %t.mlir --mw-remat="strategy=optimal budget=92% verbose=true" -o %t.opt92.mlir 2>&1 | FileCheck %s --check-prefix=GAP
// GAP: mw-remat: strategy=optimal {{.*}} chosen="{{[^"]+}}" {{.*}} optimality={{proven|bounded}} gap={{[0-9]+\.[0-9]+}}% bound={{[0-9.e+-]+}} bound_unit=seconds bound_status={{optimal|feasible}} bound_vars={{[0-9]+}} bound_rows={{[0-9]+}} bound_ms={{[0-9.]+}} bound_source={{cover|peak|staged}} cover_bound={{[0-9.e+-]+}} peak_bound={{[0-9.e+-]+}} peak_point={{-?[0-9]+}} peak_points={{[0-9]+}}/{{[0-9]+}} peak_ms={{[0-9.]+}}
// RUN: python3 %S/Inputs/optimal.py mw-opt %t.mlir 98 95 93 92 | FileCheck %s
// CHECK: optimal 98%:
// CHECK: optimal 92%:
// CHECK: OK
// Bit-identical outputs before and after.
// RUN: mw-eval %t.mlir --entry train_step --random-inputs 3 --save-inputs %t.in --print > %t.ref
// RUN: mw-eval %t.opt95.mlir --entry train_step --inputs %t.in --print | diff %t.ref -
// RUN: mw-eval %t.opt92.mlir --entry train_step --inputs %t.in --print | diff %t.ref -
// RUN: mw-models gpt --preset gpt2-tiny --attention=unfused --train -o %t.u.mlir
// RUN: mw-eval %t.u.mlir --entry train_step --inputs %t.in --print > %t.u.ref
// RUN: mw-opt %t.u.mlir --mw-remat="strategy=optimal budget=93% cost=flops" -o %t.u.opt.mlir
// RUN: mw-eval %t.u.opt.mlir --entry train_step --inputs %t.in --print | diff %t.u.ref -
