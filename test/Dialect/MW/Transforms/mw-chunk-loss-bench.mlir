// bench/chunk-loss's script on a tiny model, without the timed runs: one row
// per chunk count, each arena beside the unchunked plan's.
// RUN: env MW_OPT=mw-opt MW_MODELS=mw-models MW_TRANSLATE=mw-translate MW_RUN=mw-run bash %mw_src/bench/chunk-loss/run.sh --models gpt2-tiny --chunks 2 --no-time --out %t 2>/dev/null | FileCheck %s
// CHECK: | model | chunks | @forward arena (B) |
// CHECK: | gpt2-tiny | none | {{[0-9]+}} | x1.000 | {{[0-9]+}} | x1.000 | {{[0-9]+}} | x1.000 |
// CHECK: | gpt2-tiny | 2 | {{[0-9]+}} | x{{[0-9.]+}} | {{[0-9]+}} | x{{[0-9.]+}} | {{[0-9]+}} | x{{[0-9.]+}} |
// gpt2-tiny's head is tied: a row for the deferred weight gradient too.
// CHECK: | gpt2-tiny | 2, deferred | {{[0-9]+}} | x{{[0-9.]+}} | {{[0-9]+}} | x{{[0-9.]+}} | {{[0-9]+}} | x{{[0-9.]+}} |
