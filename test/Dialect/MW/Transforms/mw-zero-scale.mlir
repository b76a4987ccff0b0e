// The rank-generic program is built once, never per rank: GPT-3 175B's
// training step (96 layers, one sample per rank) for 1024 ranks at stage 3
// compiles through --mw-zero and the per-rank report in well under a second
// (0.2-0.3 s on the 2-core VM, docs/zero-bench.md; no timing is asserted
// here). Each rank keeps 1/1024 of the sharded parameters; the small ones,
// below DeepSpeed's persistence threshold, stay whole (61440000 B), which
// puts its model states at 1.09 times 16Ψ/N.
// RUN: mw-models gpt --preset gpt3-175b --batch 1024 --train --emit-locations=false -o %t.mlir
// RUN: mw-opt %t.mlir --mw-zero="stage=3 ranks=1024" --mw-memory-report -o /dev/null 2>&1 | FileCheck %s
// CHECK: per rank: ZeRO stage 3 (attribute), 1024 ranks, Ψ = 174604259328 parameters
// CHECK-NEXT: parameters            743427888 B (whole 61440000 B, pieces 681987888 B, padding 0.00 B)
// CHECK: formula (fp32 Adam, 4 + 4 + 8 bytes per parameter): 16Ψ/N = 2728191552.00 B; measured / formula = 1.09
// CHECK: paper's volume 3Ψ = 523812777984 elements
