// Stage 2 reduce-scatters each bucket as soon as the backward pass has made
// its last gradient, so the full gradient is never live at once; stage 1
// waits for the end of the backward pass and holds all of it. gpt2-tiny
// (Ψ = 118528 f32 parameters, 474112 B of gradients) in buckets of at most
// 30000 elements, 2 ranks, planned: at each step's peak the report's
// gradient_buckets are the whole gradient in stage 1 (474112 B and the
// 4 B loss), at most one bucket in stage 2.
// RUN: mw-models gpt --preset gpt2-tiny --train -o %t.mlir
// RUN: mw-opt %t.mlir --mw-zero="ranks=2 stage=1 reduce-bucket=30000" --mw-train-pipeline --mw-memory-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=S1
// S1: per rank: ZeRO stage 1 (attribute), 2 ranks, Ψ = 118528 parameters
// S1: at the peak ({{[0-9]+}} B): activations {{[0-9]+}}; gradient_buckets 474116;
// RUN: mw-opt %t.mlir --mw-zero="ranks=2 stage=2 reduce-bucket=30000" --mw-train-pipeline --mw-memory-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=S2
// S2: per rank: ZeRO stage 2 (attribute), 2 ranks, Ψ = 118528 parameters
// S2: at the peak ({{[0-9]+}} B): activations {{[0-9]+}}; gradient_buckets 33668;

// split-sums: a parameter whose gradient is the sum of two contributions
// made apart has each reduce-scattered where it is made. gpt2-tiny's tied
// embedding (wte, alone in its bucket) gets the LM head's contribution
// early in the backward pass and the embedding's at its end: summed first
// (DeepSpeed's way, and the default), its whole 65536 B gradient is held in
// between; split, one more reduce-scatter of 16384 elements per step, and
// a lower peak (gradient buckets at the peak 132868 B -> 100100 B).
// RUN: mw-opt %t.mlir --mw-zero="ranks=2 stage=3 persistence-threshold=0 reduce-bucket=20000" --mw-train-pipeline --mw-memory-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=SUMMED
// SUMMED: reduce_scatter  7 x, 118528 elements
// SUMMED: at the peak (571140 B): activations 370944; gradient_buckets 132868;
// RUN: mw-opt %t.mlir --mw-zero="ranks=2 stage=3 persistence-threshold=0 reduce-bucket=20000 split-sums=true" --mw-train-pipeline --mw-memory-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=SPLIT
// SPLIT: reduce_scatter  8 x, 134912 elements
// SPLIT: at the peak (538372 B): activations 370944; gradient_buckets 100100;
// In the program: the LM head's contribution reduce-scattered right after it is
// made, the embedding's right after it, the pieces added for the update.
// RUN: mw-opt %t.mlir --mw-zero="ranks=2 stage=3 persistence-threshold=0 reduce-bucket=20000 split-sums=true" -o - | FileCheck %s --check-prefix=SPLIT-IR
// SPLIT-IR: %[[HEAD:.*]] = mw.matmul {{.*}}mw.layer = "lm_head", transpose_lhs
// SPLIT-IR-NEXT: %[[HF:.*]] = mw.reshape %[[HEAD]] {{.*}}-> tensor<16384xf32>
// SPLIT-IR-NEXT: mesh.reduce_scatter %[[HF]]
// SPLIT-IR: %[[EMB:.*]] = mw.embedding_grad
// SPLIT-IR-NEXT: %[[EF:.*]] = mw.reshape %[[EMB]] {{.*}}-> tensor<16384xf32>
// SPLIT-IR-NEXT: mesh.reduce_scatter %[[EF]]
// With one rank the pieces are the contributions: the same outputs, bit for
// bit.
// RUN: mw-opt %t.mlir --mw-zero="ranks=1 stage=3 persistence-threshold=0 reduce-bucket=20000" -o %t.sum1.mlir
// RUN: mw-opt %t.mlir --mw-zero="ranks=1 stage=3 persistence-threshold=0 reduce-bucket=20000 split-sums=true" -o %t.split1.mlir
// RUN: mw-eval %t.sum1.mlir --entry train_step --random-inputs 3 --save-inputs %t.in --print > %t.ref
// RUN: mw-eval %t.split1.mlir --entry train_step --inputs %t.in --print | diff %t.ref -
// Below stage 2 the gradients are not reduced as they are made: a warning.
// RUN: mw-opt %t.mlir --mw-zero="ranks=2 stage=1 split-sums=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=WARN1
// WARN1: warning: {{.*}}mw-zero: split-sums has no effect at stage 1: gradients are reduced after the backward pass, not as the backward pass makes them
