// --mw-fuse="report=true" on a gpt2-tiny training step with unfused
// attention: kernels, bytes moved (cost model) and result buffers before and
// after, and fusions per kind; the figures are deterministic. The memory
// report reads the fused step (its bytes are the fused kernels' own), and
// the planned fused step needs a smaller arena than the unfused one.
// RUN: mw-models gpt --preset gpt2-tiny --train --attention unfused -o %t.mlir
// RUN: mw-opt %t.mlir --mw-fuse=report=true -o %t.f.mlir | FileCheck %s --check-prefix=REPORT
// RUN: mw-opt %t.mlir --mw-fuse=report=true -o %t.f2.mlir > %t.r2
// RUN: mw-opt %t.mlir --mw-fuse=report=true -o /dev/null > %t.r3
// RUN: diff %t.r2 %t.r3
// RUN: cmp %t.f.mlir %t.f2.mlir
// RUN: mw-opt %t.f.mlir --mw-memory-report -o /dev/null | FileCheck %s --check-prefix=MEMORY
// RUN: mw-opt %t.mlir --mw-train-pipeline -o %t.p.mlir
// RUN: mw-opt %t.mlir --mw-train-pipeline=fuse=true -o %t.fp.mlir
// RUN: mw-opt %t.p.mlir --mw-memory-report -o /dev/null | FileCheck %s --check-prefix=UNFUSED
// RUN: mw-opt %t.fp.mlir --mw-memory-report -o /dev/null | FileCheck %s --check-prefix=FUSED
// Switching kinds off: matmul alone fuses only epilogues.
// RUN: mw-opt %t.mlir --mw-fuse="report=true kinds=matmul" -o /dev/null | FileCheck %s --check-prefix=MATMUL
// RUN: not mw-opt %t.mlir --mw-fuse=kinds=bogus -o /dev/null 2>&1 | FileCheck %s --check-prefix=BOGUS

// REPORT:      mw-fuse @forward: 13 fusions
// REPORT:      mw-fuse @train_step: 21 fusions
// REPORT-NEXT:   kernels               152 -> 85 (x0.559)
// REPORT-NEXT:   bytes read+written    11889188 -> 9988404 (x0.840; 11.89 MB -> 9.99 MB, cost model)
// REPORT-NEXT:   buffers               228 -> 200 (28 removed, 786.44 KB)
// REPORT-NEXT:   fusions by kind      loop 5 (24 ops), row 3 (6 ops), matmul 12 (34 ops), horizontal 1 (28 ops)

// MEMORY-LABEL: mw-memory-report @train_step
// MEMORY:       bytes read              6135580
// MEMORY-NEXT:  bytes written           3852824

// UNFUSED-LABEL: mw-memory-report @train_step
// (806144 B with every update after the backward pass, hoist-updates=false;
// 805376 B with each update at its own point, group=parameter)
// UNFUSED:       arena                   805632 (805.63 KB = 786.75 KiB)
// FUSED-LABEL:   mw-memory-report @train_step
// With fuse=true the pipeline also runs --mw-sink (the lm_head's wte
// gradient moves to its sum with the embedding's) and row kernels write
// over dying inputs: 772608 B before both.
// FUSED:         arena                   756224 (756.22 KB = 738.50 KiB)
// FUSED:         fused mw.matmul+2

// MATMUL:      mw-fuse @train_step:
// MATMUL:      fusions by kind      loop 0 (0 ops), row 0 (0 ops), matmul {{[1-9][0-9]*}} ({{[0-9]+}} ops), horizontal 0 (0 ops)

// BOGUS: mw-fuse: unknown kind 'bogus' in kinds= (expected loop, row, matmul or horizontal)
