// A hand-written step small enough to read every decision --mw-remat makes.
// Two one-matmul layers, h.0 named by `mw.layer` attributes and h.1 by
// locations only (the fallback for hand-written IR), loss = sum(gelu(...)),
// and the backward pass written out. The saved activations (forward values
// the backward pass reads) are, in op order:
//   %a0 = x @ w0       read by gelu_grad of layer 0          (4x8xf32, 128 B)
//   %h0 = gelu(%a0)    read by dW1 = h0^T @ da1; h.0's output (128 B)
//   %a1 = h0 @ w1      read by gelu_grad of layer 1          (128 B)
// Each CHECK below says which are kept, which are dropped and recomputed
// (cloned with `mw.recompute` right before their first backward use), and why.

// RUN: mw-opt %s --mw-remat=strategy=none | FileCheck %s --check-prefix=NONE
// RUN: mw-opt %s --mw-remat=strategy=all | FileCheck %s --check-prefix=ALL
// RUN: mw-opt %s --mw-remat="strategy=every-k k=1" | FileCheck %s --check-prefix=K1
// RUN: mw-opt %s --mw-remat="strategy=every-k k=2" | FileCheck %s --check-prefix=K2
// RUN: mw-opt %s --mw-remat=strategy=sqrt | FileCheck %s --check-prefix=SQRT

// Every strategy computes the same loss and gradients, bit for bit.
// RUN: mw-eval %s --entry train_step --random-inputs 3 --save-inputs %t.in --print > %t.ref
// RUN: mw-opt %s --mw-remat=strategy=all | mw-eval - --entry train_step --inputs %t.in --print | diff %t.ref -
// RUN: mw-opt %s --mw-remat="strategy=every-k k=1" | mw-eval - --entry train_step --inputs %t.in --print | diff %t.ref -
// RUN: mw-opt %s --mw-remat="strategy=every-k k=2" | mw-eval - --entry train_step --inputs %t.in --print | diff %t.ref -
// RUN: mw-opt %s --mw-remat=strategy=sqrt | mw-eval - --entry train_step --inputs %t.in --print | diff %t.ref -

func.func @train_step(%w0: tensor<8x8xf32> {mw.role = #mw.role<param>, mw.name = "h.0.w"},
                      %w1: tensor<8x8xf32> {mw.role = #mw.role<param>, mw.name = "h.1.w"},
                      %x: tensor<4x8xf32> {mw.role = #mw.role<input>, mw.name = "x"})
    -> (tensor<f32> {mw.role = #mw.role<output>, mw.name = "loss"},
        tensor<8x8xf32> {mw.role = #mw.role<grad>, mw.name = "h.0.w"},
        tensor<8x8xf32> {mw.role = #mw.role<grad>, mw.name = "h.1.w"}) {
  %a0 = mw.matmul %x, %w0 {mw.layer = "h.0.mlp"} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %h0 = mw.gelu %a0 {mw.layer = "h.0.mlp"} : tensor<4x8xf32>
  %a1 = mw.matmul %h0, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("h.1.mlp")
  %h1 = mw.gelu %a1 : tensor<4x8xf32> loc("h.1.mlp")
  %loss = mw.reduce_sum %h1 axes = [0, 1] {mw.layer = "loss"} : tensor<4x8xf32> -> tensor<f32>
  %dh1 = mw.splat 1.000000e+00 : tensor<4x8xf32>
  %da1 = mw.gelu_grad %a1, %dh1 : tensor<4x8xf32>
  %dw1 = mw.matmul %h0, %da1 {transpose_lhs} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %dh0 = mw.matmul %da1, %w1 {transpose_rhs} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %da0 = mw.gelu_grad %a0, %dh0 : tensor<4x8xf32>
  %dw0 = mw.matmul %x, %da0 {transpose_lhs} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  return %loss, %dw0, %dw1 : tensor<f32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// none: a0, h0, a1 all kept (384 B); nothing is cloned.
// NONE-LABEL: func.func @train_step
// NONE-SAME: mw.remat.kept_bytes_by_layer = {{\[}}["h.0", 256], ["h.1", 128]]
// NONE-SAME: mw.remat.saved_activation_bytes = 384
// NONE-SAME: mw.remat.strategy = "none"
// NONE:      %[[A0:.*]] = mw.matmul %arg2, %arg0 {mw.layer = "h.0.mlp"}
// NONE-NEXT: %[[H0:.*]] = mw.gelu %[[A0]] {mw.layer = "h.0.mlp"}
// NONE-NEXT: %[[A1:.*]] = mw.matmul %[[H0]], %arg1 :
// NONE-NOT:  mw.recompute
// NONE:      mw.gelu_grad %[[A1]],
// NONE:      mw.matmul %[[H0]], %{{.*}} {transpose_lhs}
// NONE:      mw.gelu_grad %[[A0]],

// all: nothing kept; each forward op is recomputed once, from the
// arguments, and its copy serves every later backward use: a0, h0 and a1
// are cloned once, 3 clones (4 while each backward use shared only the
// copies of block boundaries, and a0 was recomputed again for gelu_grad of
// layer 0; 6 before that).
// ALL-LABEL: func.func @train_step
// ALL-SAME: mw.remat.kept_bytes_by_layer = {{\[}}["h.0", 0], ["h.1", 0]]
// ALL-SAME: mw.remat.recompute_flops = 1280
// ALL-SAME: mw.remat.saved_activation_bytes = 0
// ALL:      %[[DH1:.*]] = mw.splat
// a1 for gelu_grad of layer 1: a0 -> h0 -> a1, clones keep their layer.
// ALL-NEXT: %[[RA0:.*]] = mw.matmul %arg2, %arg0 {mw.layer = "h.0.mlp", mw.recompute}
// ALL-NEXT: %[[RH0:.*]] = mw.gelu %[[RA0]] {mw.layer = "h.0.mlp", mw.recompute}
// ALL-NEXT: %[[RA1:.*]] = mw.matmul %[[RH0]], %arg1 {mw.recompute}
// ALL-NEXT: %[[DA1:.*]] = mw.gelu_grad %[[RA1]], %[[DH1]]
// h0 for dW1: the copy made for a1.
// ALL-NEXT: mw.matmul %[[RH0]], %[[DA1]] {transpose_lhs}
// ALL-NEXT: %[[DH0:.*]] = mw.matmul %[[DA1]], %arg1 {transpose_rhs}
// a0 for gelu_grad of layer 0: the same copy again.
// ALL-NEXT: mw.gelu_grad %[[RA0]], %[[DH0]]
// ALL-NOT:  mw.recompute

// every-k k=1: inside blocks, keep the outputs of every block: h0 (h.0's
// output, read by h.1) is kept; a0 and a1 stay inside their blocks and are
// dropped, each recomputed by one matmul from what is kept.
// K1-LABEL: func.func @train_step
// K1-SAME: mw.remat.kept_bytes_by_layer = {{\[}}["h.0", 128], ["h.1", 0]]
// K1-SAME: mw.remat.strategy = "every-k"
// K1:      %[[H0:.*]] = mw.gelu %{{.*}} {mw.layer = "h.0.mlp"}
// K1:      %[[DH1:.*]] = mw.splat
// a1 dropped: recomputed from kept h0.
// K1-NEXT: %[[RA1:.*]] = mw.matmul %[[H0]], %arg1 {mw.recompute}
// K1-NEXT: %[[DA1:.*]] = mw.gelu_grad %[[RA1]], %[[DH1]]
// h0 kept: dW1 reads the forward value.
// K1-NEXT: mw.matmul %[[H0]], %[[DA1]] {transpose_lhs}
// K1-NEXT: %[[DH0:.*]] = mw.matmul %[[DA1]], %arg1 {transpose_rhs}
// a0 dropped: recomputed from the arguments.
// K1-NEXT: %[[RA0:.*]] = mw.matmul %arg2, %arg0 {mw.layer = "h.0.mlp", mw.recompute}
// K1-NEXT: mw.gelu_grad %[[RA0]], %[[DH0]]

// every-k k=2: only block 2's outputs (none here) are kept; h.0 is dropped
// whole. The recomputed segment is shared: a0 and h0, cloned for a1's
// chain, also serve dW1 and gelu_grad of layer 0 (recomputed once).
// K2-LABEL: func.func @train_step
// K2-SAME: mw.remat.kept_bytes_by_layer = {{\[}}["h.0", 0], ["h.1", 0]]
// K2:      %[[DH1:.*]] = mw.splat
// K2-NEXT: %[[RA0:.*]] = mw.matmul %arg2, %arg0 {mw.layer = "h.0.mlp", mw.recompute}
// K2-NEXT: %[[RH0:.*]] = mw.gelu %[[RA0]] {mw.layer = "h.0.mlp", mw.recompute}
// K2-NEXT: %[[RA1:.*]] = mw.matmul %[[RH0]], %arg1 {mw.recompute}
// K2-NEXT: %[[DA1:.*]] = mw.gelu_grad %[[RA1]], %[[DH1]]
// K2-NEXT: mw.matmul %[[RH0]], %[[DA1]] {transpose_lhs}
// K2-NEXT: %[[DH0:.*]] = mw.matmul %[[DA1]], %arg1 {transpose_rhs}
// K2-NEXT: mw.gelu_grad %[[RA0]], %[[DH0]]
// K2-NOT:  mw.recompute

// sqrt: the articulation values of the chain are h0 and a1 (a0 is computed
// from arguments alone); of n = 2, every ceil(sqrt(2)) = 2nd is kept: a1.
// h0 and a0 are dropped and recomputed once, shared.
// SQRT-LABEL: func.func @train_step
// SQRT-SAME: mw.remat.kept_bytes_by_layer = {{\[}}["h.0", 0], ["h.1", 128]]
// SQRT:      %[[A1:.*]] = mw.matmul %{{.*}}, %arg1 :
// SQRT:      %[[DH1:.*]] = mw.splat
// SQRT-NEXT: %[[DA1:.*]] = mw.gelu_grad %[[A1]], %[[DH1]]
// SQRT-NEXT: %[[RA0:.*]] = mw.matmul %arg2, %arg0 {mw.layer = "h.0.mlp", mw.recompute}
// SQRT-NEXT: %[[RH0:.*]] = mw.gelu %[[RA0]] {mw.layer = "h.0.mlp", mw.recompute}
// SQRT-NEXT: mw.matmul %[[RH0]], %[[DA1]] {transpose_lhs}
// SQRT-NEXT: %[[DH0:.*]] = mw.matmul %[[DA1]], %arg1 {transpose_rhs}
// SQRT-NEXT: mw.gelu_grad %[[RA0]], %[[DH0]]
