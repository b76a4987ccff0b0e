// --mw-chunk-loss computes an LM head's logits, their cross-entropy and its
// gradient a chunk of rows at a time, with the products that read the
// logits' gradient, so the whole [N, V] logits never exist.
// These small heads have fewer rows than columns of the hidden states,
// where chunking raises the peak (the weight and its gradient's sum are
// held across the chunks): force=true chunks them anyway, to show how.
// RUN: mw-opt %s -split-input-file --mw-chunk-loss="chunks=2 force=true" | FileCheck %s
// RUN: mw-opt %s -split-input-file --mw-chunk-loss="chunks=2 force=true report=true" -o /dev/null | FileCheck %s --check-prefix=REPORT
// Without it, the pass keeps only the chunks that do not raise the peak of
// live tensor bytes.
// RUN: mw-opt %s -split-input-file --mw-chunk-loss="chunks=2 report=true" -o /dev/null | FileCheck %s --check-prefix=PEAK
// PEAK: mw-chunk-loss @step: left whole: [8, 16] logits in 2 chunks of 4 rows, with their gradient would raise the live tensor peak from 1348 to 1380 bytes
// PEAK: mw-chunk-loss @untied: left whole: {{.*}} would raise the live tensor peak
// PEAK: mw-chunk-loss @forward: [2, 16] logits in 2 chunks of 1 rows, live tensor peak 132 -> 92 bytes
// PEAK: mw-chunk-loss @loss_read_first: [4, 16] logits in 2 chunks of 2 rows, with their gradient, live tensor peak 356 -> 232 bytes
// Chunked ops (label_offset) are not chunked again.
// RUN: mw-opt %s -split-input-file --mw-chunk-loss="chunks=2 force=true" --mw-chunk-loss="chunks=3 force=true" | FileCheck %s
// RUN: not mw-opt %s -split-input-file --mw-chunk-loss=chunks=0 -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: mw-chunk-loss: chunks=0 (expected a count of at least 1)

// A tied head with a bias (BERT's MLM head's shape), the loss and every
// reader of the logits' gradient: the hidden states' gradient (g W), the
// weight's (g^T h) and the bias's (the row sum). Chunk 1 starts at row 4
// of the 8 labels; the [8, 16] logits are gone.
// REPORT: mw-chunk-loss @step: [8, 16] logits in 2 chunks of 4 rows, with their gradient, live tensor peak 1348 -> 1380 bytes
// CHECK-LABEL: func.func @step
// CHECK-NOT:   tensor<8x16xf32>
// CHECK:       %[[H:.*]] = mw.reshape %arg0 {mw.layer = "head"} : tensor<2x4x6xf32> -> tensor<8x6xf32>
// CHECK:       %[[H0:.*]] = mw.slice %[[H]] offsets = [0, 0] sizes = [4, 6]
// CHECK:       %[[M0:.*]] = mw.matmul %[[H0]], %arg1 {mw.layer = "head", transpose_rhs} : (tensor<4x6xf32>, tensor<16x6xf32>) -> tensor<4x16xf32>
// CHECK:       %[[L0:.*]] = mw.add %[[M0]], %arg2
// CHECK:       %[[LOSS0:.*]] = mw.cross_entropy %[[L0]], %arg3 {label_offset = 0 : i64, mw.layer = "loss"}
// CHECK:       %[[G0:.*]] = mw.cross_entropy_grad %[[L0]], %arg3, %{{.*}} {label_offset = 0 : i64, mw.layer = "loss"}
// CHECK:       %[[DH0:.*]] = mw.matmul %[[G0]], %arg1 {mw.layer = "head"} : (tensor<4x16xf32>, tensor<16x6xf32>) -> tensor<4x6xf32>
// CHECK:       %[[DW0:.*]] = mw.matmul %[[G0]], %[[H0]] {mw.layer = "head", transpose_lhs} : (tensor<4x16xf32>, tensor<4x6xf32>) -> tensor<16x6xf32>
// CHECK:       %[[DB0:.*]] = mw.reduce_sum %[[G0]] axes = [0] {mw.layer = "head"} : tensor<4x16xf32> -> tensor<16xf32>
// CHECK:       %[[H1:.*]] = mw.slice %[[H]] offsets = [4, 0] sizes = [4, 6]
// CHECK:       mw.cross_entropy %{{.*}}, %arg3 {label_offset = 4 : i64, mw.layer = "loss"}
// CHECK:       %[[LOSS:.*]] = mw.add %[[LOSS0]], %{{.*}} {mw.layer = "loss"} : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK:       mw.cross_entropy_grad %{{.*}}, %arg3, %{{.*}} {label_offset = 4 : i64, mw.layer = "loss"}
// CHECK:       %[[DH1:.*]] = mw.matmul
// CHECK:       %[[DW1:.*]] = mw.matmul
// CHECK:       %[[DW:.*]] = mw.add %[[DW0]], %[[DW1]]
// CHECK:       %[[DB1:.*]] = mw.reduce_sum
// CHECK:       %[[DB:.*]] = mw.add %[[DB0]], %[[DB1]]
// CHECK:       %[[DHC:.*]] = mw.concat %[[DH0]], %[[DH1]] axis = 0 {mw.layer = "head"} : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
// CHECK:       %[[DHR:.*]] = mw.reshape %[[DHC]] {mw.layer = "head"} : tensor<8x6xf32> -> tensor<2x4x6xf32>
// CHECK:       return %[[LOSS]], %[[DHR]], %[[DW]], %[[DB]]
func.func @step(%h: tensor<2x4x6xf32>, %w: tensor<16x6xf32>, %b: tensor<16xf32>, %y: tensor<8xi32>) -> (tensor<f32>, tensor<2x4x6xf32>, tensor<16x6xf32>, tensor<16xf32>) {
  %m = mw.matmul %h, %w {mw.layer = "head", transpose_rhs} : (tensor<2x4x6xf32>, tensor<16x6xf32>) -> tensor<2x4x16xf32>
  %l = mw.add %m, %b {mw.layer = "head"} : (tensor<2x4x16xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
  %l2 = mw.reshape %l {mw.layer = "loss"} : tensor<2x4x16xf32> -> tensor<8x16xf32>
  %loss = mw.cross_entropy %l2, %y {mw.layer = "loss"} : (tensor<8x16xf32>, tensor<8xi32>) -> tensor<f32>
  %one = mw.splat 1.0 : tensor<f32>
  %g = mw.cross_entropy_grad %l2, %y, %one {mw.layer = "loss"} : (tensor<8x16xf32>, tensor<8xi32>, tensor<f32>) -> tensor<8x16xf32>
  %g3 = mw.reshape %g {mw.layer = "loss"} : tensor<8x16xf32> -> tensor<2x4x16xf32>
  %db = mw.reduce_sum %g3 axes = [0, 1] {mw.layer = "head"} : tensor<2x4x16xf32> -> tensor<16xf32>
  %dh = mw.matmul %g3, %w {mw.layer = "head"} : (tensor<2x4x16xf32>, tensor<16x6xf32>) -> tensor<2x4x6xf32>
  %h2 = mw.reshape %h {mw.layer = "head"} : tensor<2x4x6xf32> -> tensor<8x6xf32>
  %g2 = mw.reshape %g3 {mw.layer = "head"} : tensor<2x4x16xf32> -> tensor<8x16xf32>
  %dw = mw.matmul %g2, %h2 {mw.layer = "head", transpose_lhs} : (tensor<8x16xf32>, tensor<8x6xf32>) -> tensor<16x6xf32>
  return %loss, %dh, %dw, %db : tensor<f32>, tensor<2x4x6xf32>, tensor<16x6xf32>, tensor<16xf32>
}

// -----

// An untied [D, V] weight in bf16 (Llama's lm_head): h^T g for its
// gradient, g W^T for the hidden states'. Sums over rows add up in f32 and
// are rounded once; 3 rows in 2 chunks of 2 and 1.
// REPORT: mw-chunk-loss @untied: [3, 16] logits in 2 chunks of 2 rows, with their gradient, live tensor peak
// CHECK-LABEL: func.func @untied
// CHECK:       mw.slice %arg0 offsets = [0, 0] sizes = [2, 6]
// CHECK:       mw.matmul %{{.*}}, %arg1 : (tensor<2x6xbf16>, tensor<6x16xbf16>) -> tensor<2x16xbf16>
// CHECK:       %[[G0:.*]] = mw.cross_entropy_grad {{.*}} {label_offset = 0 : i64}
// CHECK:       mw.matmul %[[G0]], %arg1 {transpose_rhs} : (tensor<2x16xbf16>, tensor<6x16xbf16>) -> tensor<2x6xbf16>
// CHECK:       %[[P0:.*]] = mw.matmul %[[S0:.*]], %[[G0]] {transpose_lhs} : (tensor<2x6xbf16>, tensor<2x16xbf16>) -> tensor<6x16xbf16>
// CHECK:       %[[F0:.*]] = mw.cast %[[P0]] : tensor<6x16xbf16> to tensor<6x16xf32>
// CHECK:       mw.slice %arg0 offsets = [2, 0] sizes = [1, 6]
// CHECK:       mw.cross_entropy_grad {{.*}} {label_offset = 2 : i64}
// CHECK:       %[[P1:.*]] = mw.matmul {{.*}} {transpose_lhs} : (tensor<1x6xbf16>, tensor<1x16xbf16>) -> tensor<6x16xbf16>
// CHECK:       %[[F1:.*]] = mw.cast %[[P1]]
// CHECK:       %[[S:.*]] = mw.add %[[F0]], %[[F1]] : (tensor<6x16xf32>, tensor<6x16xf32>) -> tensor<6x16xf32>
// CHECK:       mw.concat
// CHECK:       %[[DW:.*]] = mw.cast %[[S]] : tensor<6x16xf32> to tensor<6x16xbf16>
// CHECK:       return %{{.*}}, %{{.*}}, %[[DW]]
func.func @untied(%h: tensor<3x6xbf16>, %w: tensor<6x16xbf16>, %y: tensor<3xi32>, %seed: tensor<f32>) -> (tensor<f32>, tensor<3x6xbf16>, tensor<6x16xbf16>) {
  %l = mw.matmul %h, %w : (tensor<3x6xbf16>, tensor<6x16xbf16>) -> tensor<3x16xbf16>
  %loss = mw.cross_entropy %l, %y : (tensor<3x16xbf16>, tensor<3xi32>) -> tensor<f32>
  %g = mw.cross_entropy_grad %l, %y, %seed : (tensor<3x16xbf16>, tensor<3xi32>, tensor<f32>) -> tensor<3x16xbf16>
  %dh = mw.matmul %g, %w {transpose_rhs} : (tensor<3x16xbf16>, tensor<6x16xbf16>) -> tensor<3x6xbf16>
  %dw = mw.matmul %h, %g {transpose_lhs} : (tensor<3x6xbf16>, tensor<3x16xbf16>) -> tensor<6x16xbf16>
  return %loss, %dh, %dw : tensor<f32>, tensor<3x6xbf16>, tensor<6x16xbf16>
}

// -----

// A forward with the loss only (evaluation, or @forward): its logits are
// chunked too. More chunks than rows: one a row.
// REPORT: mw-chunk-loss @forward: [2, 16] logits in 2 chunks of 1 rows, live tensor peak
// CHECK-LABEL: func.func @forward
// CHECK-NOT:   tensor<2x16xf32>
// CHECK:       mw.cross_entropy {{.*}} {ignore_index = 0 : i64, label_offset = 0 : i64}
// CHECK:       mw.cross_entropy {{.*}} {ignore_index = 0 : i64, label_offset = 1 : i64}
// CHECK:       mw.add
func.func @forward(%h: tensor<2x6xf32>, %w: tensor<16x6xf32>, %y: tensor<2xi32>) -> tensor<f32> {
  %l = mw.matmul %h, %w {transpose_rhs} : (tensor<2x6xf32>, tensor<16x6xf32>) -> tensor<2x16xf32>
  %loss = mw.cross_entropy %l, %y {ignore_index = 0} : (tensor<2x16xf32>, tensor<2xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Left whole: the logits are also a result.
// REPORT: mw-chunk-loss @logits_returned: left whole: the logits have another reader: 'func.return'
// CHECK-LABEL: func.func @logits_returned
// CHECK-NOT:   label_offset
func.func @logits_returned(%h: tensor<4x6xf32>, %w: tensor<16x6xf32>, %y: tensor<4xi32>) -> (tensor<f32>, tensor<4x16xf32>) {
  %l = mw.matmul %h, %w {transpose_rhs} : (tensor<4x6xf32>, tensor<16x6xf32>) -> tensor<4x16xf32>
  %loss = mw.cross_entropy %l, %y : (tensor<4x16xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss, %l : tensor<f32>, tensor<4x16xf32>
}

// -----

// Left whole: the logits' gradient has a reader the chunks cannot make.
// REPORT: mw-chunk-loss @grad_read: left whole: the logits' gradient has a reader the pass cannot split: 'mw.exp'
// CHECK-LABEL: func.func @grad_read
// CHECK-NOT:   label_offset
func.func @grad_read(%h: tensor<4x6xf32>, %w: tensor<16x6xf32>, %y: tensor<4xi32>, %s: tensor<f32>) -> (tensor<f32>, tensor<4x16xf32>) {
  %l = mw.matmul %h, %w {transpose_rhs} : (tensor<4x6xf32>, tensor<16x6xf32>) -> tensor<4x16xf32>
  %loss = mw.cross_entropy %l, %y : (tensor<4x16xf32>, tensor<4xi32>) -> tensor<f32>
  %g = mw.cross_entropy_grad %l, %y, %s : (tensor<4x16xf32>, tensor<4xi32>, tensor<f32>) -> tensor<4x16xf32>
  %e = mw.exp %g : tensor<4x16xf32>
  return %loss, %e : tensor<f32>, tensor<4x16xf32>
}

// -----

// Left whole: the logits are not a matmul's product.
// REPORT: mw-chunk-loss @not_a_head: left whole: the logits are not a matmul's product (they come from 'mw.exp')
// CHECK-LABEL: func.func @not_a_head
// CHECK-NOT:   label_offset
func.func @not_a_head(%x: tensor<4x16xf32>, %y: tensor<4xi32>) -> tensor<f32> {
  %l = mw.exp %x : tensor<4x16xf32>
  %loss = mw.cross_entropy %l, %y : (tensor<4x16xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Left whole: the loss is read before its gradient, whose seed is made
// after that read from something computed there.
// REPORT: mw-chunk-loss @seed_after_read: left whole: the loss is read before its gradient's seed is made
func.func @seed_after_read(%h: tensor<4x6xf32>, %w: tensor<16x6xf32>, %y: tensor<4xi32>) -> (tensor<f32>, tensor<4x6xf32>) {
  %l = mw.matmul %h, %w {transpose_rhs} : (tensor<4x6xf32>, tensor<16x6xf32>) -> tensor<4x16xf32>
  %loss = mw.cross_entropy %l, %y : (tensor<4x16xf32>, tensor<4xi32>) -> tensor<f32>
  %seed = mw.exp %loss : tensor<f32>
  %g = mw.cross_entropy_grad %l, %y, %seed : (tensor<4x16xf32>, tensor<4xi32>, tensor<f32>) -> tensor<4x16xf32>
  %dh = mw.matmul %g, %w : (tensor<4x16xf32>, tensor<16x6xf32>) -> tensor<4x6xf32>
  return %loss, %dh : tensor<f32>, tensor<4x6xf32>
}

// -----

// The loss is read before its gradient (a ZeRO step's all-reduce of it), and
// the gradient's seed is a constant made after that read: the seed moves
// up and the chunks go where the loss was.
// REPORT: mw-chunk-loss @loss_read_first: [4, 16] logits in 2 chunks of 2 rows, with their gradient, live tensor peak
// CHECK-LABEL: func.func @loss_read_first
// CHECK:       mw.splat
// CHECK:       mw.cross_entropy_grad
// CHECK:       mw.cross_entropy_grad
// CHECK:       mw.exp
func.func @loss_read_first(%h: tensor<4x6xf32>, %w: tensor<16x6xf32>, %y: tensor<4xi32>) -> (tensor<f32>, tensor<4x6xf32>) {
  %l = mw.matmul %h, %w {transpose_rhs} : (tensor<4x6xf32>, tensor<16x6xf32>) -> tensor<4x16xf32>
  %loss = mw.cross_entropy %l, %y : (tensor<4x16xf32>, tensor<4xi32>) -> tensor<f32>
  %r = mw.exp %loss : tensor<f32>
  %one = mw.splat 1.0 : tensor<f32>
  %g = mw.cross_entropy_grad %l, %y, %one : (tensor<4x16xf32>, tensor<4xi32>, tensor<f32>) -> tensor<4x16xf32>
  %dh = mw.matmul %g, %w : (tensor<4x16xf32>, tensor<16x6xf32>) -> tensor<4x6xf32>
  return %r, %dh : tensor<f32>, tensor<4x6xf32>
}

// -----

// Left whole: the logits' gradient is reshaped across its classes, so a
// sum "over its rows" is something else.
// REPORT: mw-chunk-loss @across_classes: left whole: the logits' gradient is reshaped across its classes
// CHECK-LABEL: func.func @across_classes
// CHECK-NOT:   label_offset
func.func @across_classes(%h: tensor<4x6xf32>, %w: tensor<16x6xf32>, %y: tensor<4xi32>, %s: tensor<f32>) -> tensor<8xf32> {
  %l = mw.matmul %h, %w {transpose_rhs} : (tensor<4x6xf32>, tensor<16x6xf32>) -> tensor<4x16xf32>
  %g = mw.cross_entropy_grad %l, %y, %s : (tensor<4x16xf32>, tensor<4xi32>, tensor<f32>) -> tensor<4x16xf32>
  %r = mw.reshape %g : tensor<4x16xf32> -> tensor<8x8xf32>
  %b = mw.reduce_sum %r axes = [0] : tensor<8x8xf32> -> tensor<8xf32>
  return %b : tensor<8xf32>
}
