// Hand-written fused kernels, one function per kind (docs/fusion.md), for
// fusion-cpu.mlir. Each function starts with an unfused op, so that it has a
// transient buffer for --mw-static-arena to plan. unfuse.py turns every
// kernel back into its ops for the unfused comparison.

// loop: a broadcast bias, a transposed input, a strided slice and a reshape
// feeding elementwise ops; three outputs of the iteration shape [4, 8] and
// the column sum of the last (a bias gradient).
func.func @loop(%x0: tensor<4x8xf32> {mw.name = "x", mw.role = #mw.role<input>},
                %b: tensor<8xf32> {mw.name = "b", mw.role = #mw.role<input>},
                %t: tensor<8x4xf32> {mw.name = "t", mw.role = #mw.role<input>},
                %s: tensor<4x16xf32> {mw.name = "s", mw.role = #mw.role<input>},
                %f: tensor<32xf32> {mw.name = "f", mw.role = #mw.role<input>})
    -> (tensor<4x8xf32> {mw.name = "y", mw.role = #mw.role<output>},
        tensor<4x8xf32> {mw.name = "h", mw.role = #mw.role<output>},
        tensor<8xf32> {mw.name = "db", mw.role = #mw.role<output>}) {
  %x = mw.neg %x0 : tensor<4x8xf32>
  %e0 = tensor.empty() : tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %r:3 = mw.kernel ins(%x, %b, %t, %s, %f : tensor<4x8xf32>, tensor<8xf32>, tensor<8x4xf32>, tensor<4x16xf32>, tensor<32xf32>) outs(%e0, %e1, %e2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32> {
  ^bb0(%k_x: tensor<4x8xf32>, %k_b: tensor<8xf32>, %k_t: tensor<8x4xf32>, %k_s: tensor<4x16xf32>, %k_f: tensor<32xf32>):
    %l0 = mw.add %k_x, %k_b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %l1 = mw.transpose %k_t permutation = [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
    %l2 = mw.mul %l0, %l1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %l3 = mw.slice %k_s offsets = [0, 1] sizes = [4, 8] strides = [1, 2] : tensor<4x16xf32> -> tensor<4x8xf32>
    %l4 = mw.reshape %k_f : tensor<32xf32> -> tensor<4x8xf32>
    %l5 = mw.sub %l3, %l4 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %l6 = mw.add %l2, %l5 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %l7 = mw.gelu %l6 {approximate = #mw.gelu_approximation<tanh>} : tensor<4x8xf32>
    %l8 = mw.reduce_sum %l7 axes = [0] : tensor<4x8xf32> -> tensor<8xf32>
    mw.yield %l7, %l6, %l8 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>
}

// loop: attention's heads back into rows ([B, H, S, D] -> [B, S, H, D] ->
// [B, S, H*D]), a reshape that merges two dimensions: its reads split the
// iteration's last dimension into digits. Plus a bias and its gradient.
func.func @loop_merge(%q0: tensor<2x4x3x8xf32> {mw.name = "q", mw.role = #mw.role<input>},
                      %b: tensor<32xf32> {mw.name = "b", mw.role = #mw.role<input>})
    -> (tensor<2x3x32xf32> {mw.name = "rows", mw.role = #mw.role<output>},
        tensor<32xf32> {mw.name = "db", mw.role = #mw.role<output>}) {
  %q = mw.neg %q0 : tensor<2x4x3x8xf32>
  %e0 = tensor.empty() : tensor<2x3x32xf32>
  %e1 = tensor.empty() : tensor<32xf32>
  %r:2 = mw.kernel ins(%q, %b : tensor<2x4x3x8xf32>, tensor<32xf32>) outs(%e0, %e1 : tensor<2x3x32xf32>, tensor<32xf32>) -> tensor<2x3x32xf32>, tensor<32xf32> {
  ^bb0(%k_q: tensor<2x4x3x8xf32>, %k_b: tensor<32xf32>):
    %j0 = mw.transpose %k_q permutation = [0, 2, 1, 3] : tensor<2x4x3x8xf32> -> tensor<2x3x4x8xf32>
    %j1 = mw.reshape %j0 : tensor<2x3x4x8xf32> -> tensor<2x3x32xf32>
    %j2 = mw.add %j1, %k_b : (tensor<2x3x32xf32>, tensor<32xf32>) -> tensor<2x3x32xf32>
    %j3 = mw.reduce_sum %j2 axes = [0, 1] : tensor<2x3x32xf32> -> tensor<32xf32>
    mw.yield %j2, %j3 : tensor<2x3x32xf32>, tensor<32xf32>
  }
  return %r#0, %r#1 : tensor<2x3x32xf32>, tensor<32xf32>
}

// row: bias + residual + layer_norm (GPT-2's attention output), yielding
// the residual stream, the normalized rows and their statistics.
func.func @row_ln(%h0: tensor<2x3x8xf32> {mw.name = "h", mw.role = #mw.role<input>},
                  %bias0: tensor<8xf32> {mw.name = "bias", mw.role = #mw.role<input>},
                  %res: tensor<2x3x8xf32> {mw.name = "res", mw.role = #mw.role<input>},
                  %gamma: tensor<8xf32> {mw.name = "ln.weight", mw.role = #mw.role<input>},
                  %beta: tensor<8xf32> {mw.name = "ln.bias", mw.role = #mw.role<input>})
    -> (tensor<2x3x8xf32> {mw.name = "stream", mw.role = #mw.role<output>},
        tensor<2x3x8xf32> {mw.name = "y", mw.role = #mw.role<output>},
        tensor<2x3xf32> {mw.name = "mean", mw.role = #mw.role<output>},
        tensor<2x3xf32> {mw.name = "rstd", mw.role = #mw.role<output>}) {
  %h = mw.neg %h0 : tensor<2x3x8xf32>
  // (Unfused, the ops on [2, 3, 8] reuse one buffer for the results: the
  // bias's is the transient one.)
  %bias = mw.neg %bias0 : tensor<8xf32>
  %e0 = tensor.empty() : tensor<2x3x8xf32>
  %e1 = tensor.empty() : tensor<2x3x8xf32>
  %e2 = tensor.empty() : tensor<2x3xf32>
  %e3 = tensor.empty() : tensor<2x3xf32>
  %r:4 = mw.kernel ins(%h, %bias, %res, %gamma, %beta : tensor<2x3x8xf32>, tensor<8xf32>, tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e0, %e1, %e2, %e3 : tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3xf32>, tensor<2x3xf32> {
  ^bb0(%k_h: tensor<2x3x8xf32>, %k_bias: tensor<8xf32>, %k_res: tensor<2x3x8xf32>, %k_gamma: tensor<8xf32>, %k_beta: tensor<8xf32>):
    %n0 = mw.add %k_h, %k_bias : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
    %n1 = mw.add %n0, %k_res : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
    %n2, %n3, %n4 = mw.layer_norm %n1, %k_gamma, %k_beta : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x3x8xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
    mw.yield %n1, %n2, %n3, %n4 : tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3xf32>, tensor<2x3xf32>
  }
  return %r#0, %r#1, %r#2, %r#3 : tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// row: scale + mask + softmax (unfused attention), and the row maximum of
// the masked scores with keepdims.
func.func @row_softmax(%s0: tensor<2x4x8xf32> {mw.name = "scores", mw.role = #mw.role<input>},
                       %mask: tensor<4x8xf32> {mw.name = "mask", mw.role = #mw.role<input>})
    -> (tensor<2x4x8xf32> {mw.name = "probs", mw.role = #mw.role<output>},
        tensor<2x4x1xf32> {mw.name = "max", mw.role = #mw.role<output>}) {
  %s = mw.neg %s0 : tensor<2x4x8xf32>
  %e0 = tensor.empty() : tensor<2x4x8xf32>
  %e1 = tensor.empty() : tensor<2x4x1xf32>
  %r:2 = mw.kernel ins(%s, %mask : tensor<2x4x8xf32>, tensor<4x8xf32>) outs(%e0, %e1 : tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>, tensor<2x4x1xf32> {
  ^bb0(%k_s: tensor<2x4x8xf32>, %k_mask: tensor<4x8xf32>):
    %a0 = mw.splat 0.125 : tensor<f32>
    %a1 = mw.mul %k_s, %a0 : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
    %a2 = mw.add %a1, %k_mask : (tensor<2x4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
    %a3 = mw.softmax %a2 axis = 2 : tensor<2x4x8xf32>
    %a4 = mw.reduce_max %a2 axes = [2] {keepdims} : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
    mw.yield %a3, %a4 : tensor<2x4x8xf32>, tensor<2x4x1xf32>
  }
  return %r#0, %r#1 : tensor<2x4x8xf32>, tensor<2x4x1xf32>
}

// row: softmax_grad and the scale of its backward, subtracting the row max
// (a row statistic read back at every element).
func.func @row_softmax_grad(%y0: tensor<4x8xf32> {mw.name = "y", mw.role = #mw.role<input>},
                            %dy: tensor<4x8xf32> {mw.name = "dy", mw.role = #mw.role<input>})
    -> (tensor<4x8xf32> {mw.name = "dx", mw.role = #mw.role<output>}) {
  %y = mw.neg %y0 : tensor<4x8xf32>
  %e0 = tensor.empty() : tensor<4x8xf32>
  %r = mw.kernel ins(%y, %dy : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%k_y: tensor<4x8xf32>, %k_dy: tensor<4x8xf32>):
    %g0 = mw.softmax_grad %k_y, %k_dy axis = 1 : tensor<4x8xf32>
    %g1 = mw.reduce_max %g0 axes = [1] {keepdims} : tensor<4x8xf32> -> tensor<4x1xf32>
    %g2 = mw.sub %g0, %g1 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
    %g3 = mw.splat 0.125 : tensor<f32>
    %g4 = mw.mul %g2, %g3 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    mw.yield %g4 : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// row, in place: row_softmax_grad written over its input dy, which it
// reads only at the iteration index and along each row (softmax_grad's
// sum): One-Shot Bufferize keeps the destination in dy's buffer, and the
// runtime reads each whole row before writing it (docs/fusion.md).
func.func @row_softmax_grad_in_place(%y0: tensor<4x8xf32> {mw.name = "y", mw.role = #mw.role<input>},
                                     %dy0: tensor<4x8xf32> {mw.name = "dy", mw.role = #mw.role<input>})
    -> (tensor<4x8xf32> {mw.name = "dx", mw.role = #mw.role<output>}) {
  %y = mw.neg %y0 : tensor<4x8xf32>
  %dy = mw.neg %dy0 : tensor<4x8xf32>
  %r = mw.kernel ins(%y, %dy : tensor<4x8xf32>, tensor<4x8xf32>) outs(%dy : tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%k_y: tensor<4x8xf32>, %k_dy: tensor<4x8xf32>):
    %h0 = mw.softmax_grad %k_y, %k_dy axis = 1 : tensor<4x8xf32>
    %h1 = mw.reduce_max %h0 axes = [1] {keepdims} : tensor<4x8xf32> -> tensor<4x1xf32>
    %h2 = mw.sub %h0, %h1 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
    %h3 = mw.mul %h2, %k_dy : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    mw.yield %h3 : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// matmul: x @ w^T + bias, then gelu; the pre-activation is yielded too
// (saved for backward).
func.func @mm_gelu(%x0: tensor<2x3x8xf32> {mw.name = "x", mw.role = #mw.role<input>},
                   %w: tensor<16x8xf32> {mw.name = "fc.weight", mw.role = #mw.role<input>},
                   %bias: tensor<16xf32> {mw.name = "fc.bias", mw.role = #mw.role<input>})
    -> (tensor<2x3x16xf32> {mw.name = "pre", mw.role = #mw.role<output>},
        tensor<2x3x16xf32> {mw.name = "act", mw.role = #mw.role<output>}) {
  %x = mw.neg %x0 : tensor<2x3x8xf32>
  %e0 = tensor.empty() : tensor<2x3x16xf32>
  %e1 = tensor.empty() : tensor<2x3x16xf32>
  %r:2 = mw.kernel ins(%x, %w, %bias : tensor<2x3x8xf32>, tensor<16x8xf32>, tensor<16xf32>) outs(%e0, %e1 : tensor<2x3x16xf32>, tensor<2x3x16xf32>) -> tensor<2x3x16xf32>, tensor<2x3x16xf32> {
  ^bb0(%k_x: tensor<2x3x8xf32>, %k_w: tensor<16x8xf32>, %k_bias: tensor<16xf32>):
    %m0 = mw.matmul %k_x, %k_w {transpose_rhs} : (tensor<2x3x8xf32>, tensor<16x8xf32>) -> tensor<2x3x16xf32>
    %m1 = mw.add %m0, %k_bias : (tensor<2x3x16xf32>, tensor<16xf32>) -> tensor<2x3x16xf32>
    %m2 = mw.gelu %m1 {approximate = #mw.gelu_approximation<tanh>} : tensor<2x3x16xf32>
    mw.yield %m1, %m2 : tensor<2x3x16xf32>, tensor<2x3x16xf32>
  }
  return %r#0, %r#1 : tensor<2x3x16xf32>, tensor<2x3x16xf32>
}

// matmul, backward: dact = dy @ w2, then gelu_grad with the saved
// pre-activation, and its column sum (DGELU_BGRAD: the bias gradient).
func.func @mm_dgelu(%dy0: tensor<6x16xf32> {mw.name = "dy", mw.role = #mw.role<input>},
                    %w2: tensor<16x8xf32> {mw.name = "proj.weight", mw.role = #mw.role<input>},
                    %pre: tensor<6x8xf32> {mw.name = "pre", mw.role = #mw.role<input>})
    -> (tensor<6x8xf32> {mw.name = "dpre", mw.role = #mw.role<output>},
        tensor<8xf32> {mw.name = "dbias", mw.role = #mw.role<output>}) {
  %dy = mw.neg %dy0 : tensor<6x16xf32>
  %e0 = tensor.empty() : tensor<6x8xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %r:2 = mw.kernel ins(%dy, %w2, %pre : tensor<6x16xf32>, tensor<16x8xf32>, tensor<6x8xf32>) outs(%e0, %e1 : tensor<6x8xf32>, tensor<8xf32>) -> tensor<6x8xf32>, tensor<8xf32> {
  ^bb0(%k_dy: tensor<6x16xf32>, %k_w2: tensor<16x8xf32>, %k_pre: tensor<6x8xf32>):
    %d0 = mw.matmul %k_dy, %k_w2 : (tensor<6x16xf32>, tensor<16x8xf32>) -> tensor<6x8xf32>
    %d1 = mw.gelu_grad %k_pre, %d0 {approximate = #mw.gelu_approximation<tanh>} : tensor<6x8xf32>
    %d2 = mw.reduce_sum %d1 axes = [0] : tensor<6x8xf32> -> tensor<8xf32>
    mw.yield %d1, %d2 : tensor<6x8xf32>, tensor<8xf32>
  }
  return %r#0, %r#1 : tensor<6x8xf32>, tensor<8xf32>
}

// horizontal: three AdamW updates in one launch, each in place (the
// kernel's destinations are its parameter and state operands).
func.func @adamw3(%p1: tensor<8xf32> {mw.name = "p1", mw.role = #mw.role<param>},
                  %g1: tensor<8xf32> {mw.name = "g1", mw.role = #mw.role<input>},
                  %m1: tensor<8xf32> {mw.name = "p1.exp_avg", mw.role = #mw.role<optimizer_state>},
                  %p2: tensor<4x4xf32> {mw.name = "p2", mw.role = #mw.role<param>},
                  %g2: tensor<4x4xf32> {mw.name = "g2", mw.role = #mw.role<input>},
                  %m2: tensor<4x4xf32> {mw.name = "p2.exp_avg", mw.role = #mw.role<optimizer_state>},
                  %p3: tensor<3xf32> {mw.name = "p3", mw.role = #mw.role<param>},
                  %g3: tensor<3xf32> {mw.name = "g3", mw.role = #mw.role<input>},
                  %m3: tensor<3xf32> {mw.name = "p3.exp_avg", mw.role = #mw.role<optimizer_state>})
    -> (tensor<8xf32> {mw.name = "p1", mw.role = #mw.role<param>},
        tensor<8xf32> {mw.name = "p1.exp_avg", mw.role = #mw.role<optimizer_state>},
        tensor<8xf32> {mw.name = "v1", mw.role = #mw.role<output>},
        tensor<4x4xf32> {mw.name = "p2", mw.role = #mw.role<param>},
        tensor<4x4xf32> {mw.name = "p2.exp_avg", mw.role = #mw.role<optimizer_state>},
        tensor<4x4xf32> {mw.name = "v2", mw.role = #mw.role<output>},
        tensor<3xf32> {mw.name = "p3", mw.role = #mw.role<param>},
        tensor<3xf32> {mw.name = "p3.exp_avg", mw.role = #mw.role<optimizer_state>},
        tensor<3xf32> {mw.name = "v3", mw.role = #mw.role<output>}) {
  // The second moments must be >= 0: squares of the gradients.
  %v1 = mw.mul %g1, %g1 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %v2 = mw.mul %g2, %g2 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %v3 = mw.mul %g3, %g3 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %step = mw.constant dense<3> : tensor<i64>
  %r:9 = mw.kernel ins(%p1, %g1, %m1, %v1, %p2, %g2, %m2, %v2, %p3, %g3, %m3, %v3, %step : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<i64>) outs(%p1, %m1, %v1, %p2, %m2, %v2, %p3, %m3, %v3 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> {
  ^bb0(%k_p1: tensor<8xf32>, %k_g1: tensor<8xf32>, %k_m1: tensor<8xf32>, %k_v1: tensor<8xf32>, %k_p2: tensor<4x4xf32>, %k_g2: tensor<4x4xf32>, %k_m2: tensor<4x4xf32>, %k_v2: tensor<4x4xf32>, %k_p3: tensor<3xf32>, %k_g3: tensor<3xf32>, %k_m3: tensor<3xf32>, %k_v3: tensor<3xf32>, %k_step: tensor<i64>):
    %u1:3 = mw.adamw %k_p1, %k_g1, %k_m1, %k_v1, %k_step {lr = 1.0e-02 : f64} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<i64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
    %u2:3 = mw.adamw %k_p2, %k_g2, %k_m2, %k_v2, %k_step {lr = 1.0e-02 : f64} : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<i64>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>)
    %u3:3 = mw.adamw %k_p3, %k_g3, %k_m3, %k_v3, %k_step {lr = 1.0e-02 : f64} : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<i64>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
    mw.yield %u1#0, %u1#1, %u1#2, %u2#0, %u2#1, %u2#2, %u3#0, %u3#1, %u3#2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  }
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7, %r#8 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// bf16: bias + residual + layer_norm in bf16. Fused, the intermediates stay
// f32 and only the outputs round to bf16; unfused (and in mw-eval) every
// op's result rounds: a tolerance (docs/fusion.md).
func.func @row_ln_bf16(%h0: tensor<4x64xbf16> {mw.name = "h", mw.role = #mw.role<input>},
                       %bias: tensor<64xbf16> {mw.name = "bias", mw.role = #mw.role<input>},
                       %res: tensor<4x64xbf16> {mw.name = "res", mw.role = #mw.role<input>},
                       %gamma: tensor<64xbf16> {mw.name = "ln.weight", mw.role = #mw.role<input>},
                       %beta: tensor<64xbf16> {mw.name = "ln.bias", mw.role = #mw.role<input>})
    -> (tensor<4x64xbf16> {mw.name = "stream", mw.role = #mw.role<output>},
        tensor<4x64xbf16> {mw.name = "y", mw.role = #mw.role<output>}) {
  %h = mw.neg %h0 : tensor<4x64xbf16>
  %e0 = tensor.empty() : tensor<4x64xbf16>
  %e1 = tensor.empty() : tensor<4x64xbf16>
  %e2 = tensor.empty() : tensor<4xf32>
  %e3 = tensor.empty() : tensor<4xf32>
  %r:4 = mw.kernel ins(%h, %bias, %res, %gamma, %beta : tensor<4x64xbf16>, tensor<64xbf16>, tensor<4x64xbf16>, tensor<64xbf16>, tensor<64xbf16>) outs(%e0, %e1, %e2, %e3 : tensor<4x64xbf16>, tensor<4x64xbf16>, tensor<4xf32>, tensor<4xf32>) -> tensor<4x64xbf16>, tensor<4x64xbf16>, tensor<4xf32>, tensor<4xf32> {
  ^bb0(%k_h: tensor<4x64xbf16>, %k_bias: tensor<64xbf16>, %k_res: tensor<4x64xbf16>, %k_gamma: tensor<64xbf16>, %k_beta: tensor<64xbf16>):
    %q0 = mw.add %k_h, %k_bias : (tensor<4x64xbf16>, tensor<64xbf16>) -> tensor<4x64xbf16>
    %q1 = mw.add %q0, %k_res : (tensor<4x64xbf16>, tensor<4x64xbf16>) -> tensor<4x64xbf16>
    %q2, %q3, %q4 = mw.layer_norm %q1, %k_gamma, %k_beta : (tensor<4x64xbf16>, tensor<64xbf16>, tensor<64xbf16>) -> (tensor<4x64xbf16>, tensor<4xf32>, tensor<4xf32>)
    mw.yield %q1, %q2, %q3, %q4 : tensor<4x64xbf16>, tensor<4x64xbf16>, tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4x64xbf16>, tensor<4x64xbf16>
}

// f16: the same kernel in f16.
func.func @row_ln_f16(%h0: tensor<4x64xf16> {mw.name = "h", mw.role = #mw.role<input>},
                       %bias: tensor<64xf16> {mw.name = "bias", mw.role = #mw.role<input>},
                       %res: tensor<4x64xf16> {mw.name = "res", mw.role = #mw.role<input>},
                       %gamma: tensor<64xf16> {mw.name = "ln.weight", mw.role = #mw.role<input>},
                       %beta: tensor<64xf16> {mw.name = "ln.bias", mw.role = #mw.role<input>})
    -> (tensor<4x64xf16> {mw.name = "stream", mw.role = #mw.role<output>},
        tensor<4x64xf16> {mw.name = "y", mw.role = #mw.role<output>}) {
  %h = mw.neg %h0 : tensor<4x64xf16>
  %e0 = tensor.empty() : tensor<4x64xf16>
  %e1 = tensor.empty() : tensor<4x64xf16>
  %e2 = tensor.empty() : tensor<4xf32>
  %e3 = tensor.empty() : tensor<4xf32>
  %r:4 = mw.kernel ins(%h, %bias, %res, %gamma, %beta : tensor<4x64xf16>, tensor<64xf16>, tensor<4x64xf16>, tensor<64xf16>, tensor<64xf16>) outs(%e0, %e1, %e2, %e3 : tensor<4x64xf16>, tensor<4x64xf16>, tensor<4xf32>, tensor<4xf32>) -> tensor<4x64xf16>, tensor<4x64xf16>, tensor<4xf32>, tensor<4xf32> {
  ^bb0(%k_h: tensor<4x64xf16>, %k_bias: tensor<64xf16>, %k_res: tensor<4x64xf16>, %k_gamma: tensor<64xf16>, %k_beta: tensor<64xf16>):
    %w0 = mw.add %k_h, %k_bias : (tensor<4x64xf16>, tensor<64xf16>) -> tensor<4x64xf16>
    %w1 = mw.add %w0, %k_res : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
    %w2, %w3, %w4 = mw.layer_norm %w1, %k_gamma, %k_beta : (tensor<4x64xf16>, tensor<64xf16>, tensor<64xf16>) -> (tensor<4x64xf16>, tensor<4xf32>, tensor<4xf32>)
    mw.yield %w1, %w2, %w3, %w4 : tensor<4x64xf16>, tensor<4x64xf16>, tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4x64xf16>, tensor<4x64xf16>
}

// bf16 matmul kernel: its operands are widened to f32 in the scratch.
func.func @mm_bf16(%x0: tensor<6x8xbf16> {mw.name = "x", mw.role = #mw.role<input>},
                   %w: tensor<8x16xbf16> {mw.name = "w", mw.role = #mw.role<input>},
                   %bias: tensor<16xbf16> {mw.name = "bias", mw.role = #mw.role<input>})
    -> (tensor<6x16xbf16> {mw.name = "act", mw.role = #mw.role<output>}) {
  %x = mw.neg %x0 : tensor<6x8xbf16>
  %e0 = tensor.empty() : tensor<6x16xbf16>
  %r = mw.kernel ins(%x, %w, %bias : tensor<6x8xbf16>, tensor<8x16xbf16>, tensor<16xbf16>) outs(%e0 : tensor<6x16xbf16>) -> tensor<6x16xbf16> {
  ^bb0(%k_x: tensor<6x8xbf16>, %k_w: tensor<8x16xbf16>, %k_bias: tensor<16xbf16>):
    %z0 = mw.matmul %k_x, %k_w : (tensor<6x8xbf16>, tensor<8x16xbf16>) -> tensor<6x16xbf16>
    %z1 = mw.add %z0, %k_bias : (tensor<6x16xbf16>, tensor<16xbf16>) -> tensor<6x16xbf16>
    %z2 = mw.gelu %z1 : tensor<6x16xbf16>
    mw.yield %z2 : tensor<6x16xbf16>
  }
  return %r : tensor<6x16xbf16>
}
