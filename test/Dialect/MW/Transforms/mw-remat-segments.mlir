// Recompute shared across backward uses. Two blocks whose backward ops carry
// their block's layer, as --mw-autodiff writes them: h.0 = gelu(x @ w0),
// h.1 = gelu(gelu(h0 @ w1)), loss = sum(h.1). With nothing kept
// (strategy=all), the saved activations a0, h0, a1 and b1 are all dropped,
// and every forward op is recomputed once: its copy serves every later
// backward use, in its own backward segment (the run of one block's
// backward ops) and in later ones. Each clone is one op of the IR, and
// mw.remat.recompute_flops is their sum: 4 clones, 2 matmuls of 512 FLOPs
// and 2 gelus of 256. With segments only (auto's "all segments", all's
// plan before it shared every copy), a0's copy, made in h.1's segment and
// not a block boundary, was not kept alive through h.1's backward and h.0's
// segment recomputed it: 5 clones, 2048 FLOPs (10 before segments).

// RUN: mw-opt %s --mw-remat=strategy=all | FileCheck %s

// The rewritten step computes the same loss and gradients, bit for bit.
// RUN: mw-eval %s --entry train_step --random-inputs 5 --save-inputs %t.in --print > %t.ref
// RUN: mw-opt %s --mw-remat=strategy=all | mw-eval - --entry train_step --inputs %t.in --print | diff %t.ref -
// RUN: mw-opt %s --mw-remat="strategy=every-k k=1" | mw-eval - --entry train_step --inputs %t.in --print | diff %t.ref -
// RUN: mw-opt %s --mw-remat="strategy=every-k k=2" | mw-eval - --entry train_step --inputs %t.in --print | diff %t.ref -
// RUN: mw-opt %s --mw-remat=strategy=sqrt | mw-eval - --entry train_step --inputs %t.in --print | diff %t.ref -
// RUN: mw-opt %s --mw-remat=budget=95% | mw-eval - --entry train_step --inputs %t.in --print | diff %t.ref -

func.func @train_step(%w0: tensor<8x8xf32> {mw.role = #mw.role<param>, mw.name = "h.0.w"},
                      %w1: tensor<8x8xf32> {mw.role = #mw.role<param>, mw.name = "h.1.w"},
                      %x: tensor<4x8xf32> {mw.role = #mw.role<input>, mw.name = "x"})
    -> (tensor<f32> {mw.role = #mw.role<output>, mw.name = "loss"},
        tensor<8x8xf32> {mw.role = #mw.role<grad>, mw.name = "h.0.w"},
        tensor<8x8xf32> {mw.role = #mw.role<grad>, mw.name = "h.1.w"}) {
  %a0 = mw.matmul %x, %w0 {mw.layer = "h.0.mlp"} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %h0 = mw.gelu %a0 {mw.layer = "h.0.mlp"} : tensor<4x8xf32>
  %a1 = mw.matmul %h0, %w1 {mw.layer = "h.1.mlp"} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %b1 = mw.gelu %a1 {mw.layer = "h.1.mlp"} : tensor<4x8xf32>
  %h1 = mw.gelu %b1 {mw.layer = "h.1.mlp"} : tensor<4x8xf32>
  %loss = mw.reduce_sum %h1 axes = [0, 1] {mw.layer = "loss"} : tensor<4x8xf32> -> tensor<f32>
  %dh1 = mw.splat 1.000000e+00 {mw.layer = "loss"} : tensor<4x8xf32>
  %db1 = mw.gelu_grad %b1, %dh1 {mw.layer = "h.1.mlp"} : tensor<4x8xf32>
  %da1 = mw.gelu_grad %a1, %db1 {mw.layer = "h.1.mlp"} : tensor<4x8xf32>
  %dw1 = mw.matmul %h0, %da1 {mw.layer = "h.1.mlp", transpose_lhs} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %dh0 = mw.matmul %da1, %w1 {mw.layer = "h.1.mlp", transpose_rhs} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %da0 = mw.gelu_grad %a0, %dh0 {mw.layer = "h.0.mlp"} : tensor<4x8xf32>
  %dw0 = mw.matmul %x, %da0 {mw.layer = "h.0.mlp", transpose_lhs} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  return %loss, %dw0, %dw1 : tensor<f32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// CHECK-LABEL: func.func @train_step
// CHECK-SAME: mw.remat.recompute_flops = 1536
// CHECK-SAME: mw.remat.saved_activation_bytes = 0
// CHECK:      %[[DH1:.*]] = mw.splat 1.0{{.*}} {mw.layer = "loss"}
// h.1's segment starts: b1's chain from the arguments, cloned once.
// CHECK-NEXT: %[[RA0:.*]] = mw.matmul %arg2, %arg0 {mw.layer = "h.0.mlp", mw.recompute}
// CHECK-NEXT: %[[RH0:.*]] = mw.gelu %[[RA0]] {mw.layer = "h.0.mlp", mw.recompute}
// CHECK-NEXT: %[[RA1:.*]] = mw.matmul %[[RH0]], %arg1 {mw.layer = "h.1.mlp", mw.recompute}
// CHECK-NEXT: %[[RB1:.*]] = mw.gelu %[[RA1]] {mw.layer = "h.1.mlp", mw.recompute}
// CHECK-NEXT: %[[DB1:.*]] = mw.gelu_grad %[[RB1]], %[[DH1]]
// a1, recomputed for b1, serves gelu_grad.
// CHECK-NEXT: %[[DA1:.*]] = mw.gelu_grad %[[RA1]], %[[DB1]]
// h0, recomputed for a1, serves dW1 too.
// CHECK-NEXT: mw.matmul %[[RH0]], %[[DA1]] {mw.layer = "h.1.mlp", transpose_lhs}
// CHECK-NEXT: %[[DH0:.*]] = mw.matmul %[[DA1]], %arg1 {mw.layer = "h.1.mlp", transpose_rhs}
// h.0's segment: a0's copy from h.1's segment, not recomputed again.
// CHECK-NEXT: %[[DA0:.*]] = mw.gelu_grad %[[RA0]], %[[DH0]]
// CHECK-NEXT: mw.matmul %arg2, %[[DA0]] {mw.layer = "h.0.mlp", transpose_lhs}
// CHECK-NOT:  mw.recompute
