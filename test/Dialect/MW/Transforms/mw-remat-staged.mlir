// strategy=optimal's staged MILP (docs/remat.md, "The staged MILP"): the
// backward pass's time points over the budget at once. On gpt2-tiny at 92%
// of the save-all peak it is the source that wins and the bound that
// proves it: its plan places each clone by stage, where the kept-set plans
// of the other sources all recompute more.
// RUN: mw-models gpt --preset gpt2-tiny --train -o %t.mlir
// RUN: mw-opt %t.mlir --mw-remat="strategy=optimal budget=92% verbose=true" -o %t.opt.mlir 2>&1 | FileCheck %s

// The plan is the staged MILP's, measured within the budget, its simulated
// arena the planned one, and no plan fits with less recompute: the bound
// is the staged MILP's, equal to the plan's cost.
// multi_copy_values counts the values whose backward uses read different
// copies (the original, then a clone; or two clones), which no kept set
// does; this plan has none.
// CHECK: mw-remat: strategy=optimal budget=[[BUDGET:[0-9]+]] peak=
// CHECK-SAME: arena=[[ARENA:[0-9]+]] simulated_arena=[[ARENA]]
// CHECK-SAME: multi_copy_values=0 chosen="staged MILP{{( round [0-9]+)?}}"
// CHECK-SAME: optimality=proven gap=0.000%
// CHECK-SAME: bound_source=staged
// CHECK-SAME: staged_bound={{[0-9.e+-]+}} staged_status={{optimal|feasible}} staged_points={{[1-9][0-9]*}} staged_rounds={{[1-9][0-9]*}} staged_vars={{[0-9]+}} staged_rows={{[0-9]+}} staged_ms={{[0-9.]+}}

// The same outputs, bit for bit, before and after, and through the
// training pipeline.
// RUN: mw-eval %t.mlir --entry train_step --random-inputs 3 --save-inputs %t.in --print > %t.ref
// RUN: mw-eval %t.opt.mlir --entry train_step --inputs %t.in --print | diff %t.ref -
// RUN: mw-opt %t.mlir --mw-remat="strategy=optimal budget=92%" --mw-train-pipeline -o %t.p.mlir
// RUN: mw-eval %t.p.mlir --entry train_step --inputs %t.in --print | diff %t.ref -
