// An offloaded step's plan (docs/offload.md): an mw.offload parameter is a
// Host ("cpu") or File ("nvme") persistent, its mw.fetch a kernel that copies
// it into an arena slot (ins[0] the persistent, outs[0] in the arena) with
// its layer, its mw.wait a kernel on the slot, and the function's mw.offload
// gives the plan's offload_path and offload_prefetch. A resident parameter
// stays a device persistent (no placement in the JSON).
// RUN: mw-opt %s --mw-train-pipeline -o %t.planned.mlir
// RUN: mw-translate --mw-plan-json %t.planned.mlir | FileCheck %s
// RUN: mw-translate --mw-to-plan %t.planned.mlir -o %t.mwplan
// RUN: mw-eval %s --random-inputs 5 --print > %t.before
// RUN: mw-eval %t.planned.mlir --random-inputs 5 --print > %t.after
// RUN: diff %t.before %t.after

// CHECK:      "offload_path": "/tmp/weights",
// CHECK-NEXT: "offload_prefetch": 1,
// CHECK:      {"name":"h.0.w","dtype":"f32","shape":[4,4],"role":"param","argument":0,"placement":"host"}
// CHECK-NEXT: {"name":"h.1.w","dtype":"f32","shape":[4,4],"role":"param","argument":1,"placement":"file"}
// CHECK-NEXT: {"name":"wte","dtype":"f32","shape":[4,4],"role":"param","argument":2}
// CHECK:      "op": "mw.fetch",
// CHECK:        {"name":"layer","kind":"int","value":0}
// CHECK:      "ins": [
// CHECK-NEXT:   {"space":"persistent","persistent":0,
// CHECK:      "outs": [
// CHECK-NEXT:   {"space":"arena",
// CHECK:      "op": "mw.fetch",
// CHECK:        {"name":"layer","kind":"int","value":1}
// CHECK:      "ins": [
// CHECK-NEXT:   {"space":"persistent","persistent":1,
// CHECK:      "op": "mw.wait",
// CHECK:      "op": "mw.matmul",

func.func @forward(%w0: tensor<4x4xf32> {mw.name = "h.0.w", mw.role = #mw.role<param>, mw.offload = "cpu"},
                   %w1: tensor<4x4xf32> {mw.name = "h.1.w", mw.role = #mw.role<param>, mw.offload = "nvme"},
                   %e: tensor<4x4xf32> {mw.name = "wte", mw.role = #mw.role<param>},
                   %x: tensor<2x4xf32> {mw.name = "x", mw.role = #mw.role<input>})
    -> (tensor<2x4xf32> {mw.name = "y", mw.role = #mw.role<output>})
    attributes {mw.offload = {weights = "nvme", prefetch = 1 : i64, pinned_layers = 0 : i64,
                              layers = 2 : i64, path = "/tmp/weights"}} {
  %f0 = mw.fetch %w0 {layer = 0 : i64} : tensor<4x4xf32>
  %f1 = mw.fetch %w1 {layer = 1 : i64} : tensor<4x4xf32>
  %h = mw.matmul %x, %e : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %d0 = mw.wait %f0 : tensor<4x4xf32>
  %h0 = mw.matmul %h, %d0 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %d1 = mw.wait %f1 : tensor<4x4xf32>
  %h1 = mw.matmul %h0, %d1 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %h1 : tensor<2x4xf32>
}
