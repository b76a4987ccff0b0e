// mw.fusion's verifier: the body matches the inputs and results, and each
// kind holds to its rules (docs/fusion.md).
// RUN: mw-opt %s -split-input-file -verify-diagnostics

func.func @arg_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{body has 2 arguments, expected one per input (1)}}
  %r = mw.fusion loop ins(%a : tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    %e = mw.exp %x : tensor<4xf32>
    mw.yield %e : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @arg_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{body argument #0 has type 'tensor<4xf16>', expected 'tensor<4xf32>' (the type of input #0)}}
  %r = mw.fusion loop ins(%a : tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%x: tensor<4xf16>):
    %e = mw.exp %x : tensor<4xf16>
    %c = mw.cast %e : tensor<4xf16> to tensor<4xf32>
    mw.yield %c : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @yield_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = mw.fusion loop ins(%a : tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>):
    %e = mw.exp %x : tensor<4xf32>
    // expected-error@+1 {{'mw.yield' op yields 2 values, expected one per result (1)}}
    mw.yield %e, %e : tensor<4xf32>, tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @yield_type(%a: tensor<4xf32>) -> tensor<4xf16> {
  %r = mw.fusion loop ins(%a : tensor<4xf32>) -> (tensor<4xf16>) {
  ^bb0(%x: tensor<4xf32>):
    %e = mw.exp %x : tensor<4xf32>
    // expected-error@+1 {{'mw.yield' op value #0 has type 'tensor<4xf32>', expected 'tensor<4xf16>' (the type of result #0)}}
    mw.yield %e : tensor<4xf32>
  }
  return %r : tensor<4xf16>
}

// -----

func.func @no_results(%a: tensor<4xf32>) {
  // expected-error@+1 {{expects at least one result}}
  "mw.fusion"(%a) <{kind = #mw.fusion_kind<loop>}> ({
  ^bb0(%x: tensor<4xf32>):
    "mw.yield"() : () -> ()
  }) : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @not_mw(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = mw.fusion loop ins(%a : tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>):
    // expected-error@+1 {{'tensor.empty' op cannot appear in an mw.fusion body: its ops must be mw ops on tensors}}
    %e = tensor.empty() : tensor<4xf32>
    mw.yield %e : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @loop_matmul(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = mw.fusion loop ins(%a : tensor<4x4xf32>) -> (tensor<4x4xf32>) {
  ^bb0(%x: tensor<4x4xf32>):
    // expected-error@+1 {{'mw.matmul' op cannot appear in a loop mw.fusion (only in a matmul fusion)}}
    %m = mw.matmul %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    mw.yield %m : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

func.func @loop_row_op(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = mw.fusion loop ins(%a : tensor<4x4xf32>) -> (tensor<4x4xf32>) {
  ^bb0(%x: tensor<4x4xf32>):
    // expected-error@+1 {{'mw.softmax' op cannot appear in a loop mw.fusion (only in a row fusion)}}
    %s = mw.softmax %x axis = 1 : tensor<4x4xf32>
    mw.yield %s : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

func.func @loop_not_pointwise(%t: tensor<4xi32>, %w: tensor<8x4xf32>) -> tensor<4x4xf32> {
  %r = mw.fusion loop ins(%t, %w : tensor<4xi32>, tensor<8x4xf32>) -> (tensor<4x4xf32>) {
  ^bb0(%i: tensor<4xi32>, %x: tensor<8x4xf32>):
    // expected-error@+1 {{'mw.embedding' op cannot appear in a loop mw.fusion: it is neither pointwise nor a column reduction}}
    %e = mw.embedding %x, %i : (tensor<8x4xf32>, tensor<4xi32>) -> tensor<4x4xf32>
    mw.yield %e : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

func.func @loop_shapes(%a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8x4xf32>) {
  %r:2 = mw.fusion loop ins(%a : tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8x4xf32>) {
  ^bb0(%x: tensor<4x8xf32>):
    %e = mw.exp %x : tensor<4x8xf32>
    %t = mw.transpose %e permutation = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
    // expected-error@+1 {{'mw.yield' op value #1 of type 'tensor<8x4xf32>' has neither the iteration shape of the loop fusion ('tensor<4x8xf32>') nor is it a column reduction}}
    mw.yield %e, %t : tensor<4x8xf32>, tensor<8x4xf32>
  }
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<8x4xf32>
}

// -----

func.func @column_used(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = mw.fusion loop ins(%a : tensor<4x8xf32>) -> (tensor<4x8xf32>) {
  ^bb0(%x: tensor<4x8xf32>):
    // expected-error@+1 {{'mw.reduce_sum' op column reduction in an mw.fusion may only be yielded, not used in the body}}
    %s = mw.reduce_sum %x axes = [0] : tensor<4x8xf32> -> tensor<8xf32>
    %y = mw.add %x, %s : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    mw.yield %y : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

func.func @matmul_first(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error@+1 {{matmul fusion must start with an mw.matmul}}
  %r = mw.fusion matmul ins(%a : tensor<4x4xf32>) -> (tensor<4x4xf32>) {
  ^bb0(%x: tensor<4x4xf32>):
    %e = mw.exp %x : tensor<4x4xf32>
    %m = mw.matmul %e, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    mw.yield %m : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

func.func @two_matmuls(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = mw.fusion matmul ins(%a : tensor<4x4xf32>) -> (tensor<4x4xf32>) {
  ^bb0(%x: tensor<4x4xf32>):
    %m = mw.matmul %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    // expected-error@+1 {{'mw.matmul' op must be the first op of its mw.fusion, and the only matmul}}
    %n = mw.matmul %m, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    mw.yield %n : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

func.func @row_without_row_op(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error@+1 {{row fusion has no row op (softmax, layer_norm, rms_norm or a reduction over the last axis)}}
  %r = mw.fusion row ins(%a : tensor<4x4xf32>) -> (tensor<4x4xf32>) {
  ^bb0(%x: tensor<4x4xf32>):
    %e = mw.exp %x : tensor<4x4xf32>
    mw.yield %e : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

func.func @row_other_axis(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = mw.fusion row ins(%a : tensor<4x8xf32>) -> (tensor<4x8xf32>) {
  ^bb0(%x: tensor<4x8xf32>):
    // expected-error@+1 {{'mw.softmax' op cannot appear in a row mw.fusion: it is neither pointwise, a row op nor a column reduction}}
    %s = mw.softmax %x axis = 0 : tensor<4x8xf32>
    mw.yield %s : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

func.func @row_shape(%a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>) {
  %r:2 = mw.fusion row ins(%a : tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>) {
  ^bb0(%x: tensor<4x8xf32>):
    %s = mw.softmax %x axis = 1 : tensor<4x8xf32>
    %c = mw.slice %s offsets = [0, 0] sizes = [1, 8] : tensor<4x8xf32> -> tensor<1x8xf32>
    %d = mw.reshape %c : tensor<1x8xf32> -> tensor<8xf32>
    // expected-error@+1 {{'mw.yield' op value #1 of type 'tensor<8xf32>' has neither the iteration shape of the row fusion ('tensor<4x8xf32>') nor its row shape}}
    mw.yield %s, %d : tensor<4x8xf32>, tensor<8xf32>
  }
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<8xf32>
}

// -----

func.func @horizontal_other(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = mw.fusion horizontal ins(%a : tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>):
    // expected-error@+1 {{'mw.exp' op cannot appear in a horizontal mw.fusion: its ops must be mw.adamw or mw.sgd updates}}
    %e = mw.exp %x : tensor<4xf32>
    mw.yield %e : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @horizontal_dependent(%p: tensor<4xf32>, %g: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = mw.fusion horizontal ins(%p, %g : tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    %a = mw.sgd %x, %y {lr = 1.0e-01 : f64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    // expected-error@+1 {{'mw.sgd' op in a horizontal mw.fusion reads a value computed in the body; every operand must be a fusion input}}
    %b = mw.sgd %a, %y {lr = 1.0e-01 : f64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    mw.yield %a, %b : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @unknown_kind(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{expected a fusion kind (loop, row, matmul or horizontal), got 'tile'}}
  %r = mw.fusion tile ins(%a : tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>):
    mw.yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
