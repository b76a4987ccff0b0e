// The NCCL communicator on a GPU, world size 1 (the one GPU a session may be
// lent): mpirun -np 1 joins MPI, so the session's collectives go through
// NCCL (bootstrapped over MPI) on the communication stream, even with one
// rank. The ZeRO-2 step of gpt2-tiny with overlap trains to the CPU's losses
// (TF32 off: the kernels round like the CPU's within the CUDA parity of
// docs/runtime-cuda.md), its measured peak equals its planned one, and the
// collectives are counted as planned. Skipped without a CUDA device (CI).
// REQUIRES: mpi, cuda-device
// RUN: rm -rf %t && mkdir -p %t && cd %t
// RUN: mw-models gpt --preset gpt2-tiny --batch 4 --train --optimizer=sgd --momentum=0.9 -o step.mlir
// RUN: mw-opt step.mlir --mw-zero="stage=2 ranks=1 overlap=on" -o zero.mlir
// RUN: mw-opt zero.mlir --mw-train-pipeline 2>/dev/null | mw-translate --mw-to-plan -o zero.mwplan
// RUN: mw-opt zero.mlir --mw-memory-report=format=json -o /dev/null > report.json
// RUN: mw-run zero.mwplan --steps 3 --report json > cpu.json
// RUN: %mpirun -np 1 mw-run zero.mwplan --device cuda --steps 3 --report json > cuda.json
// RUN: python3 %S/../Inputs/zero_ranks.py losses cpu.json cuda.json 1e-4
// RUN: python3 %S/../Inputs/zero_ranks.py peak cuda.json
// RUN: python3 %S/../Inputs/zero_ranks.py comm cuda.json report.json
// RUN: %mpirun -np 1 mw-run zero.mwplan --device cuda --steps 1 | FileCheck %s
// CHECK: on cuda, 1 rank (mpi)
