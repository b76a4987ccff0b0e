// llama-tiny in bf16 with its f32 masters in the optimizer state
// (--mw-autodiff's master-weights=optimizer, SGD with momentum 0.9) trained
// 3 steps by the ZeRO plans of stages 0-3 on 2 MPI ranks, each against its
// references (Inputs/zero_mpi_check.sh): the gradient buckets and the
// parameters' all-gathers are bf16, and every rank's measured collectives
// equal the memory report's and its measured peak its planned peak; every
// rank's state equals mw-eval --ranks 2's bit for bit; the consolidated
// checkpoint (bf16 parameters, f32 masters and momentum buffers) equals the
// one-rank step's within 2e-2 relative: each rank's bf16 gradient, divided
// by 2, is summed and rounded to bf16 once more (DeepSpeed reduces in the
// half type too). The one-rank step starts from mw-run's defaults, whose
// masters are the parameters widened to f32.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: mw-models llama --preset llama-tiny --batch 4 --precision bf16 --master-weights optimizer --train --optimizer=sgd --momentum=0.9 -o %t/step.mlir
// RUN: %S/../Inputs/zero_mpi_check.sh %mw_bin %t %t/step.mlir 2 "stage=0 overlap=on" 2e-2 tokens:4x32:256 labels:4x32:256 | FileCheck %s
// RUN: %S/../Inputs/zero_mpi_check.sh %mw_bin %t %t/step.mlir 2 "stage=1 overlap=off" 2e-2 tokens:4x32:256 labels:4x32:256 | FileCheck %s
// RUN: %S/../Inputs/zero_mpi_check.sh %mw_bin %t %t/step.mlir 2 "stage=2 overlap=on" 2e-2 tokens:4x32:256 labels:4x32:256 | FileCheck %s
// RUN: %S/../Inputs/zero_mpi_check.sh %mw_bin %t %t/step.mlir 2 "stage=3 persistence-threshold=0 overlap=off" 2e-2 tokens:4x32:256 labels:4x32:256 | FileCheck %s
// CHECK: all_reduce: {{.*}} measured equal on 2 ranks
// CHECK: reduce_scatter: {{.*}} measured equal
// CHECK: all_gather: {{.*}} measured equal
// CHECK: all_slice: {{.*}} measured equal
// CHECK: peak equal on 2 ranks
// CHECK: losses equal the one-rank step's within 0.02
// CHECK: mw-eval --ranks 2: every rank's state bit for bit
// CHECK: compared {{[0-9]+}} tensors, 0 mismatches
// CHECK: : OK
