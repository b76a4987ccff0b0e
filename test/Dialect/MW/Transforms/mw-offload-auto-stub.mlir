// --mw-offload=auto parses (weights default to cpu) and asks chooseOffload
// (MwOffloadAuto.h), which the planner of docs/offload.md's "auto" section
// implements; until then it is a stub that refuses. Replace this test with
// the planner's own.
// RUN: not mw-opt %s --mw-offload=auto 2>&1 | FileCheck %s
// RUN: not mw-opt %s --mw-offload="auto target=v100 device-memory=32GiB max-batch=8 weights=nvme path=/nvme" 2>&1 | FileCheck %s
// CHECK: mw-offload-auto-stub.mlir:[[#@LINE+2]]:1: error: mw-offload: auto is not built yet
// CHECK-NOT: error:
func.func @forward(%w0: tensor<4x4xf32> {mw.name = "h.0.w", mw.role = #mw.role<param>},
                   %x: tensor<2x4xf32> {mw.name = "x", mw.role = #mw.role<input>})
    -> (tensor<2x4xf32> {mw.name = "y", mw.role = #mw.role<output>}) {
  %a = mw.matmul %x, %w0 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %a : tensor<2x4xf32>
}
