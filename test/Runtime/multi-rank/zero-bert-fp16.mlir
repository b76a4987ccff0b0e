// bert-tiny in fp16 with dynamic loss scaling (f32 master weights, SGD with
// momentum 0.9), the ZeRO plans of stages 0-3 on 2 MPI ranks and of stages
// 1 and 3 on 4, against its
// references (Inputs/zero_mpi_check.sh): collectives and peak as planned on
// every rank, every rank's state equal to mw-eval --ranks N's bit for bit,
// and the consolidated checkpoint within 5e-2 of the one-rank step's (each
// rank's gradient is rounded to fp16, relative 2^-11, before the ranks are
// summed). The attention key biases, whose gradient is zero in exact
// arithmetic, hold rounding noise on both sides and are not compared.
// From stage 1 on, the updates of the pieces are kept or dropped on every
// rank's overflow flag (all-reduced with max).
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: mw-models bert --preset bert-tiny --batch 4 --precision fp16 --train --optimizer=sgd --momentum=0.9 -o %t/step.mlir
// RUN: env MW_CHECK_IGNORE=bert.encoder.layer.0.attention.self.key.bias,bert.encoder.layer.1.attention.self.key.bias,bert.encoder.layer.0.attention.self.key.bias.momentum_buffer,bert.encoder.layer.1.attention.self.key.bias.momentum_buffer %S/../Inputs/zero_mpi_check.sh %mw_bin %t %t/step.mlir 2 "stage=0 overlap=on" 5e-2 tokens:4x32:256 labels:4x32:256 | FileCheck %s
// RUN: env MW_CHECK_IGNORE=bert.encoder.layer.0.attention.self.key.bias,bert.encoder.layer.1.attention.self.key.bias,bert.encoder.layer.0.attention.self.key.bias.momentum_buffer,bert.encoder.layer.1.attention.self.key.bias.momentum_buffer %S/../Inputs/zero_mpi_check.sh %mw_bin %t %t/step.mlir 2 "stage=1 overlap=off" 5e-2 tokens:4x32:256 labels:4x32:256 | FileCheck %s
// RUN: env MW_CHECK_IGNORE=bert.encoder.layer.0.attention.self.key.bias,bert.encoder.layer.1.attention.self.key.bias,bert.encoder.layer.0.attention.self.key.bias.momentum_buffer,bert.encoder.layer.1.attention.self.key.bias.momentum_buffer %S/../Inputs/zero_mpi_check.sh %mw_bin %t %t/step.mlir 2 "stage=2 overlap=on" 5e-2 tokens:4x32:256 labels:4x32:256 | FileCheck %s
// RUN: env MW_CHECK_IGNORE=bert.encoder.layer.0.attention.self.key.bias,bert.encoder.layer.1.attention.self.key.bias,bert.encoder.layer.0.attention.self.key.bias.momentum_buffer,bert.encoder.layer.1.attention.self.key.bias.momentum_buffer %S/../Inputs/zero_mpi_check.sh %mw_bin %t %t/step.mlir 2 "stage=3 persistence-threshold=0 overlap=off" 5e-2 tokens:4x32:256 labels:4x32:256 | FileCheck %s
// RUN: env MW_CHECK_IGNORE=bert.encoder.layer.0.attention.self.key.bias,bert.encoder.layer.1.attention.self.key.bias,bert.encoder.layer.0.attention.self.key.bias.momentum_buffer,bert.encoder.layer.1.attention.self.key.bias.momentum_buffer %S/../Inputs/zero_mpi_check.sh %mw_bin %t %t/step.mlir 4 "stage=1 overlap=on" 5e-2 tokens:4x32:256 labels:4x32:256 | FileCheck %s
// RUN: env MW_CHECK_IGNORE=bert.encoder.layer.0.attention.self.key.bias,bert.encoder.layer.1.attention.self.key.bias,bert.encoder.layer.0.attention.self.key.bias.momentum_buffer,bert.encoder.layer.1.attention.self.key.bias.momentum_buffer %S/../Inputs/zero_mpi_check.sh %mw_bin %t %t/step.mlir 4 "stage=3 persistence-threshold=0 overlap=on" 5e-2 tokens:4x32:256 labels:4x32:256 | FileCheck %s
// CHECK: all_reduce: {{.*}} measured equal on {{[24]}} ranks
// CHECK: peak equal on {{[24]}} ranks
// CHECK: losses equal the one-rank step's within 0.05
// CHECK: mw-eval --ranks {{[24]}}: every rank's state bit for bit
// CHECK: compared {{[0-9]+}} tensors, 0 mismatches
// CHECK: : OK
