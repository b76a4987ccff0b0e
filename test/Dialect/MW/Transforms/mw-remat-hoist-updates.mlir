// hoist-updates=true: --mw-remat measures each plan as --mw-train-pipeline
// compiles it by default, with --mw-hoist-updates before bufferization, so
// each gradient dies at its update instead of at the end of the backward
// pass. mlp-tiny's step peaks at the end of its backward pass (every
// gradient live): 28,928 B of arena as --mw-bufferize plans it, 20,736 B
// after hoisting, which is what the pipeline plans. Without the option the
// pass measures the unhoisted program (the default, unchanged).

// RUN: mw-models mlp --preset mlp-tiny --train -o %t.mlp.mlir
// RUN: mw-opt %t.mlp.mlir --mw-remat="strategy=none verbose=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLAIN
// PLAIN: remark: {{.*}}mw-remat: strategy=none {{.*}} peak=112540 {{.*}} arena=28928 simulated_arena=28928 persistent=83612

// The measured arena is the pipeline's, byte for byte, and so is the
// simulation's: it places each update (and the ops that only feed it) where
// --mw-hoist-updates does.
// RUN: mw-opt %t.mlp.mlir --mw-remat="strategy=none verbose=true hoist-updates=true" --mw-train-pipeline -o %t.mlp.p.mlir 2> %t.mlp.err
// RUN: cat %t.mlp.err %t.mlp.p.mlir | FileCheck %s --check-prefix=HOIST
// HOIST: remark: {{.*}}mw-remat: strategy=none {{.*}} peak=104348 {{.*}} arena=[[ARENA:20736]] simulated_arena=20736 persistent=83612
// HOIST: func.func @train_step
// HOIST-SAME: mw.arena_size = [[ARENA]]

// A budget between the two peaks: unreachable for the unhoisted program,
// met by saving everything once the updates are hoisted (the simulation
// sees it too, so `none` is the cheapest candidate under the budget).
// RUN: not mw-opt %t.mlp.mlir --mw-remat="strategy=auto budget=104400 verbose=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNREACHABLE
// Unhoisted, the gradients alone take 28928 B of arena at the last
// backward op (28928 + 83612 persistent = 112540 B, the smallest peak the
// search found before it was answered without one).
// UNREACHABLE: error: {{.*}}mw-remat: budget 104400 B {{.*}} is unreachable for @train_step: every plan's arena holds at least 28928 B
// RUN: mw-opt %t.mlp.mlir --mw-remat="strategy=auto budget=104400 verbose=true hoist-updates=true" -o %t.mlp.auto.mlir 2>&1 | FileCheck %s --check-prefix=FITS
// FITS: remark: {{.*}}mw-remat: strategy=auto budget=104400 peak=104348 {{.*}} arena=20736 {{.*}} recompute_flops=0 {{.*}} chosen="none"

// The option changes what is measured, never the rewrite: the same plan
// gives the same IR, and the outputs stay the original step's.
// RUN: mw-models gpt --preset gpt2-tiny --batch 2 --train -o %t.gpt.mlir
// RUN: mw-opt %t.gpt.mlir --mw-zero="stage=3 ranks=2" --mw-remat="strategy=every-k k=1" -o %t.gpt.k1.mlir
// RUN: mw-opt %t.gpt.mlir --mw-zero="stage=3 ranks=2" --mw-remat="strategy=every-k k=1 hoist-updates=true" -o %t.gpt.k1h.mlir
// RUN: cmp %t.gpt.k1.mlir %t.gpt.k1h.mlir
// RUN: mw-eval %t.mlp.mlir --entry train_step --random-inputs 5 --save-inputs %t.mlp.in --print > %t.mlp.ref
// RUN: mw-eval %t.mlp.auto.mlir --entry train_step --inputs %t.mlp.in --print | diff %t.mlp.ref -

// optimal's bounds count every gradient where the step has it: the option
// is refused there.
// RUN: not mw-opt %t.mlp.mlir --mw-remat="strategy=optimal budget=90% hoist-updates=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPTIMAL
// OPTIMAL: error: {{.*}}strategy=optimal does not take hoist-updates=true
