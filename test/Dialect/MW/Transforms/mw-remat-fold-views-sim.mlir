// The arena simulation of --mw-remat follows --mw-fold-views: a transpose
// or slice that only kernels read is a view of its input, a transpose of a
// matmul's result is written by the matmul, and the Q, K and V gradients
// are written into their concatenation, whose buffer then lives from the
// first of them on. Without that, the simulation was 262,144 B below the
// planned arena on gpt2-tiny at 256 positions for every strategy, and on
// gpt2-small unfused at 70% the cheapest simulated plans packed 6 MB over
// the budget (the concatenation's 9 MB live at the first block's softmax
// gradient), so auto measured candidate after candidate.
// The simulated arena is the planned one, byte for byte, whatever is
// recomputed:

// RUN: mw-models gpt --preset gpt2-tiny --attention=unfused --seq 256 --train -o %t.mlir
// RUN: mw-opt %t.mlir --mw-remat="strategy=none verbose=true" -o /dev/null 2>&1 | FileCheck %s
// RUN: mw-opt %t.mlir --mw-remat="strategy=all verbose=true" -o /dev/null 2>&1 | FileCheck %s
// RUN: mw-opt %t.mlir --mw-remat="strategy=every-k k=1 verbose=true" -o /dev/null 2>&1 | FileCheck %s
// RUN: mw-opt %t.mlir --mw-remat="strategy=auto budget=90% verbose=true" -o /dev/null 2>&1 | FileCheck %s --check-prefixes=CHECK,AUTO
// RUN: mw-opt %t.mlir --mw-remat="strategy=auto budget=90% hoist-updates=true verbose=true" -o /dev/null 2>&1 | FileCheck %s --check-prefixes=CHECK,AUTO

// CHECK: mw-remat: strategy={{[a-z-]+}} budget={{-?[0-9]+}} peak={{[0-9]+}} save_all_peak={{[0-9]+}} arena=[[ARENA:[0-9]+]] simulated_arena=[[ARENA]] persistent=

// auto packs its candidates as simulated before it measures any, so the
// save-all step and the chosen plan are the only measurements:
// AUTO-SAME: measurements=2 simulated_packings=1

// The same plans run: the outputs are the original step's, bit for bit.
// RUN: mw-opt %t.mlir --mw-remat="strategy=auto budget=90%" --mw-train-pipeline -o %t.auto.mlir
// RUN: mw-eval %t.mlir --entry train_step --random-inputs 5 --save-inputs %t.in --print > %t.ref
// RUN: mw-eval %t.auto.mlir --entry train_step --inputs %t.in --print | diff %t.ref -
