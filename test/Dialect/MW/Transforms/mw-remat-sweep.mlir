// Budget sweeps of --mw-remat on gpt2-tiny (Inputs/sweep.py): every planned
// peak fits its budget; a smaller budget never gives a larger peak and a
// larger budget never more recompute (strategy=auto is monotone by
// construction: its candidates do not depend on the budget); auto at
// every-k's and sqrt's own peaks recomputes no more than they do; optimal
// fits every budget. Auto's distance to optimal is a benchmark figure
// (bench/remat), not asserted here beyond a loose 2x.
// RUN: mw-models gpt --preset gpt2-tiny --train -o %t.mlir
// RUN: python3 %S/Inputs/sweep.py mw-opt %t.mlir 100 98 96 95 94 93 92 91.9 --optimal --ratio 2 | FileCheck %s
// CHECK: auto 100%: peak 2197780 recompute 0.0000e+00 s
// CHECK: optimal 92%: {{.*}}({{proven|bounded}})
// CHECK: OK
