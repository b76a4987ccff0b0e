// --mw-offload's rewrite (docs/offload.md): each streamed parameter gains
// mw.offload, an mw.fetch K layers ahead (before the first op of the layer K
// places earlier, at the start of the body when there is none) and an
// mw.wait right before its first use; pinned layers and parameters outside
// the layers stay resident. Layers are ordered by first use, not by number
// or argument order.
// RUN: mw-opt %s --mw-offload="weights=cpu prefetch=1" | FileCheck %s --check-prefix=K1
// RUN: mw-opt %s --mw-offload="weights=cpu prefetch=2" | FileCheck %s --check-prefix=K2
// RUN: mw-opt %s --mw-offload="weights=cpu prefetch=0" | FileCheck %s --check-prefix=K0
// RUN: mw-opt %s --mw-offload="weights=nvme path=/nvme/w pinned-layers=1" | FileCheck %s --check-prefix=PIN
// RUN: mw-opt %s --mw-offload="weights=cpu pinned-layers=3" | FileCheck %s --check-prefix=ALL
// The output is deterministic, and a second parse prints the same.
// RUN: mw-opt %s --mw-offload="weights=cpu prefetch=2" -o %t.a.mlir
// RUN: mw-opt %s --mw-offload="weights=cpu prefetch=2" -o %t.b.mlir
// RUN: cmp %t.a.mlir %t.b.mlir
// RUN: mw-opt %t.a.mlir | cmp %t.a.mlir -
// The summary line.
// RUN: mw-opt %s --mw-offload="weights=cpu prefetch=1 report=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: mw-opt --help | FileCheck %s --check-prefix=HELP

// K1-LABEL: func.func @forward(
// K1-SAME:    mw.name = "wte", mw.role = #mw.role<param>}
// K1-SAME:    mw.name = "h.2.w", mw.offload = "cpu", mw.role = #mw.role<param>}
// K1-SAME:    mw.name = "h.0.w", mw.offload = "cpu", mw.role = #mw.role<param>}
// K1-SAME:    mw.name = "h.1.w", mw.offload = "cpu", mw.role = #mw.role<param>}
// K1-SAME:  attributes {mw.offload = {layers = 3 : i64, pinned_layers = 0 : i64, prefetch = 1 : i64, weights = "cpu"}}
// K1-NEXT:    %[[F0:.*]] = mw.fetch %arg2 {layer = 0 : i64}
// K1-NEXT:    %[[H:.*]] = mw.matmul %arg4, %arg0
// K1-NEXT:    %[[F1:.*]] = mw.fetch %arg3 {layer = 1 : i64}
// K1-NEXT:    %[[W0:.*]] = mw.wait %[[F0]]
// K1-NEXT:    %[[A:.*]] = mw.matmul %[[H]], %[[W0]]
// K1-NEXT:    %[[F2:.*]] = mw.fetch %arg1 {layer = 2 : i64}
// K1-NEXT:    %[[W1:.*]] = mw.wait %[[F1]]
// K1-NEXT:    %[[B:.*]] = mw.matmul %[[A]], %[[W1]]
// K1-NEXT:    %[[W2:.*]] = mw.wait %[[F2]]
// K1-NEXT:    %[[C:.*]] = mw.matmul %[[B]], %[[W2]]
// K1-NEXT:    %[[D:.*]] = mw.matmul %[[C]], %[[W1]]
// K1-NEXT:    return %[[D]]

// K2:         mw.offload = {layers = 3 : i64, pinned_layers = 0 : i64, prefetch = 2 : i64, weights = "cpu"}
// K2-NEXT:    %[[F0:.*]] = mw.fetch %arg2 {layer = 0 : i64}
// K2-NEXT:    %[[F1:.*]] = mw.fetch %arg3 {layer = 1 : i64}
// K2-NEXT:    %[[H:.*]] = mw.matmul %arg4, %arg0
// K2-NEXT:    %[[F2:.*]] = mw.fetch %arg1 {layer = 2 : i64}
// K2-NEXT:    mw.wait %[[F0]]
// K2-NEXT:    mw.matmul
// K2-NEXT:    mw.wait %[[F1]]
// K2-NEXT:    mw.matmul
// K2-NEXT:    mw.wait %[[F2]]
// K2-NEXT:    mw.matmul
// K2-NEXT:    mw.matmul

// K0:         mw.offload = {layers = 3 : i64, pinned_layers = 0 : i64, prefetch = 0 : i64, weights = "cpu"}
// K0-NEXT:    %[[H:.*]] = mw.matmul %arg4, %arg0
// K0-NEXT:    %[[F0:.*]] = mw.fetch %arg2 {layer = 0 : i64}
// K0-NEXT:    mw.wait %[[F0]]
// K0-NEXT:    mw.matmul
// K0-NEXT:    %[[F1:.*]] = mw.fetch %arg3 {layer = 1 : i64}
// K0-NEXT:    mw.wait %[[F1]]
// K0-NEXT:    mw.matmul
// K0-NEXT:    %[[F2:.*]] = mw.fetch %arg1 {layer = 2 : i64}
// K0-NEXT:    mw.wait %[[F2]]
// K0-NEXT:    mw.matmul
// K0-NEXT:    mw.matmul

// Layer 0 pinned: layer 1 is fetched before layer 0 computes, layer 2
// before layer 1.
// PIN-LABEL: func.func @forward(
// PIN-SAME:    mw.name = "h.2.w", mw.offload = "nvme", mw.role = #mw.role<param>}
// PIN-SAME:    mw.name = "h.0.w", mw.role = #mw.role<param>}
// PIN-SAME:    mw.name = "h.1.w", mw.offload = "nvme", mw.role = #mw.role<param>}
// PIN-SAME:  attributes {mw.offload = {layers = 3 : i64, path = "/nvme/w", pinned_layers = 1 : i64, prefetch = 1 : i64, weights = "nvme"}}
// PIN-NEXT:    %[[H:.*]] = mw.matmul %arg4, %arg0
// PIN-NEXT:    %[[F1:.*]] = mw.fetch %arg3 {layer = 1 : i64}
// PIN-NEXT:    %[[A:.*]] = mw.matmul %[[H]], %arg2
// PIN-NEXT:    %[[F2:.*]] = mw.fetch %arg1 {layer = 2 : i64}
// PIN-NEXT:    mw.wait %[[F1]]
// PIN-NEXT:    mw.matmul
// PIN-NEXT:    mw.wait %[[F2]]

// Every layer pinned: nothing streams.
// ALL:     mw.offload = {layers = 3 : i64, pinned_layers = 3 : i64, prefetch = 1 : i64, weights = "cpu"}
// ALL-NOT: mw.fetch
// ALL-NOT: mw.offload = "cpu"

// REPORT: mw-offload: @forward: 3 of 3 layers streamed from cpu (pinned 0, prefetch 1, 2 slots of up to 64 B): 192 B streamed per step, 64 B of device memory saved
// REPORT-NOT: mw-offload:

// HELP: --mw-offload
// HELP-SAME: ZeRO-Inference: stream weights from host memory or NVMe, layer by layer
// HELP: --auto
// HELP: --pinned-layers=<long>
// HELP: --prefetch=<long>

func.func @forward(%e: tensor<4x4xf32> {mw.name = "wte", mw.role = #mw.role<param>},
                   %w2: tensor<4x4xf32> {mw.name = "h.2.w", mw.role = #mw.role<param>},
                   %w0: tensor<4x4xf32> {mw.name = "h.0.w", mw.role = #mw.role<param>},
                   %w1: tensor<4x4xf32> {mw.name = "h.1.w", mw.role = #mw.role<param>},
                   %x: tensor<2x4xf32> {mw.name = "x", mw.role = #mw.role<input>})
    -> (tensor<2x4xf32> {mw.name = "y", mw.role = #mw.role<output>}) {
  %h = mw.matmul %x, %e : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %a = mw.matmul %h, %w0 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %b = mw.matmul %a, %w1 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %c = mw.matmul %b, %w2 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  // Layer 1's weight read again: its slot stays live until here.
  %d = mw.matmul %c, %w1 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %d : tensor<2x4xf32>
}
