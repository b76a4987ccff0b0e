// bench/zero's script and table on a tiny model: one row per stage, the
// model states equal to the ZeRO paper's formula (ratio 1 at 1 rank).
// RUN: env MW_OPT=mw-opt MW_MODELS=mw-models bash %mw_src/bench/zero/run.sh --models mlp-tiny --ranks 1 --out %t | FileCheck %s
// CHECK: | model | ranks | stage |
// CHECK: | mlp-tiny | 1 | 0 | 6,922 | {{.*}} | 16Ψ | {{.*}} | 1.0000 |
// CHECK: | mlp-tiny | 1 | 3 | 6,922 | {{.*}} | 16Ψ/N | {{.*}} | 1.0000 |
