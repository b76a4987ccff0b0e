// mw-run --device cuda on a machine without a GPU says that no CUDA device
// was found and why (no driver), not that the driver is too old, which is
// what the CUDA runtime calls a missing libcuda (issue 20).
// UNSUPPORTED: cuda-driver
// RUN: mw-models mlp --train -o %t.mlir
// RUN: mw-opt %t.mlir --mw-train-pipeline -o %t.planned.mlir 2>/dev/null
// RUN: mw-translate --mw-to-plan %t.planned.mlir -o %t.mwplan
// RUN: not mw-run %t.mwplan --device cuda --steps 1 2>&1 | FileCheck %s
// CHECK: mw-run: error: --device cuda: no CUDA device: {{none found, no CUDA driver \(libcuda.so.1 not found\)|no CUDA driver}}
// CHECK-NOT: insufficient
