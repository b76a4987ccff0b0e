// mw-run's CPU kernels split their independent rows, elements, tiles and
// matmul column blocks across a worker pool (runtime/src/cpu/thread_pool.h,
// --threads / MW_NUM_THREADS); every element is computed as on one thread,
// so a training step's outputs and updated weights are bit-identical for
// any thread count. A gpt2-tiny step widened until the kernels split (the
// lm_head's 2048 columns into blocks, the fused kernels' tiles, AdamW's
// elements), fused and unfused, OpenBLAS and the evaluator's loops.
//
// RUN: mw-models gpt --preset gpt2-tiny --hidden 128 --heads 4 --layers 2 --seq 128 --batch 2 --vocab 2048 --attention=unfused --train -o %t.mlir
// RUN: mw-opt %t.mlir --mw-train-pipeline=fuse=true 2>/dev/null | mw-translate --mw-to-plan -o %t.fused.mwplan
// RUN: mw-opt %t.mlir --mw-train-pipeline=fuse=false 2>/dev/null | mw-translate --mw-to-plan -o %t.unfused.mwplan
// RUN: mw-run %t.fused.mwplan --steps 2 --threads 1 --save-weights %t.f1.w --save-outputs %t.f1.o | FileCheck %s
// RUN: mw-run %t.fused.mwplan --steps 2 --threads 2 --save-weights %t.f2.w --save-outputs %t.f2.o | FileCheck %s
// RUN: env MW_NUM_THREADS=3 mw-run %t.fused.mwplan --steps 2 --save-weights %t.f3.w --save-outputs %t.f3.o | FileCheck %s
// RUN: cmp %t.f1.w %t.f2.w
// RUN: cmp %t.f1.o %t.f2.o
// RUN: cmp %t.f1.w %t.f3.w
// RUN: cmp %t.f1.o %t.f3.o
// RUN: mw-run %t.unfused.mwplan --steps 2 --threads 1 --save-weights %t.u1.w --save-outputs %t.u1.o | FileCheck %s
// RUN: mw-run %t.unfused.mwplan --steps 2 --threads 2 --save-weights %t.u2.w --save-outputs %t.u2.o | FileCheck %s
// RUN: cmp %t.u1.w %t.u2.w
// RUN: cmp %t.u1.o %t.u2.o
// RUN: mw-run %t.fused.mwplan --steps 1 --threads 1 --reference-matmul --save-weights %t.r1.w | FileCheck %s
// RUN: mw-run %t.fused.mwplan --steps 1 --threads 2 --reference-matmul --save-weights %t.r2.w | FileCheck %s
// RUN: cmp %t.r1.w %t.r2.w
// CHECK: step 1 loss
// CHECK: memory: planned peak [[P:[0-9]+]] B {{.*}}, measured peak [[P]] B (equal)
//
// A bad count is refused.
// RUN: not mw-run %t.fused.mwplan --threads 0 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: --threads expects an integer in [1, 1024], got '0'
