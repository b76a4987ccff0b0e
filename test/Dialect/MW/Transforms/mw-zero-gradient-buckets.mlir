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
