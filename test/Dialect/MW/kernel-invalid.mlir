// RUN: mw-opt %s -split-input-file -verify-diagnostics

func.func @mixed(%a: tensor<4xf32>, %o: memref<4xf32>) {
  // expected-error@+1 {{expects all operands to be tensors (before bufferization) or all to be memrefs (after), not a mix}}
  mw.kernel ins(%a : tensor<4xf32>) outs(%o : memref<4xf32>) {
  ^bb0(%x: tensor<4xf32>):
    mw.yield %x : tensor<4xf32>
  }
  return
}

// -----

func.func @no_outs(%a: tensor<4xf32>) {
  // The custom syntax cannot even spell it.
  // expected-error@+1 {{expects at least one destination in outs}}
  "mw.kernel"(%a) <{operandSegmentSizes = array<i32: 1, 0>}> ({
  ^bb0(%x: tensor<4xf32>):
    "mw.yield"() : () -> ()
  }) : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @arg_count(%a: tensor<4xf32>, %e: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{body has 2 arguments, expected one per ins operand (1)}}
  %r = mw.kernel ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    mw.yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @arg_type(%a: memref<4xf32>, %o: memref<4xf32>) {
  // expected-error@+1 {{body argument #0 has type 'tensor<4xf16>', expected 'tensor<4xf32>'}}
  mw.kernel ins(%a : memref<4xf32>) outs(%o : memref<4xf32>) {
  ^bb0(%x: tensor<4xf16>):
    %c = mw.cast %x : tensor<4xf16> to tensor<4xf32>
    mw.yield %c : tensor<4xf32>
  }
  return
}

// -----

func.func @yield_count(%a: memref<4xf32>, %o: memref<4xf32>) {
  mw.kernel ins(%a : memref<4xf32>) outs(%o : memref<4xf32>) {
  ^bb0(%x: tensor<4xf32>):
    // expected-error@+1 {{yields 2 values, expected one per outs operand (1)}}
    mw.yield %x, %x : tensor<4xf32>, tensor<4xf32>
  }
  return
}

// -----

func.func @yield_type(%a: memref<4xf32>, %o: memref<2x2xf32>) {
  mw.kernel ins(%a : memref<4xf32>) outs(%o : memref<2x2xf32>) {
  ^bb0(%x: tensor<4xf32>):
    // expected-error@+1 {{value #0 has type 'tensor<4xf32>', expected 'tensor<2x2xf32>' (the type of outs operand #0)}}
    mw.yield %x : tensor<4xf32>
  }
  return
}

// -----

func.func @foreign_op(%a: memref<4xf32>, %o: memref<4xf32>) {
  mw.kernel ins(%a : memref<4xf32>) outs(%o : memref<4xf32>) {
  ^bb0(%x: tensor<4xf32>):
    // expected-error@+1 {{cannot appear in an mw.kernel body: its ops must be mw ops on tensors}}
    %e = tensor.empty() : tensor<4xf32>
    mw.yield %e : tensor<4xf32>
  }
  return
}

// -----

// A mesh collective is a kernel of its own.
mesh.mesh @dp(shape = 2)
func.func @collective_not_alone(%a: memref<4xf32>, %o: memref<8xf32>) {
  mw.kernel ins(%a : memref<4xf32>) outs(%o : memref<8xf32>) {
  ^bb0(%x: tensor<4xf32>):
    %n = mw.neg %x : tensor<4xf32>
    // expected-error@+1 {{'mesh.all_gather' op must be the only op of its mw.kernel body}}
    %g = mesh.all_gather %n on @dp mesh_axes = [0] gather_axis = 0 : tensor<4xf32> -> tensor<8xf32>
    mw.yield %g : tensor<8xf32>
  }
  return
}

// -----

func.func @result_count(%a: tensor<4xf32>, %e: tensor<4xf32>) {
  // expected-error@+1 {{expected the number of tensor results (0) to be equal to the number of output tensors (1)}}
  mw.kernel ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>):
    mw.yield %x : tensor<4xf32>
  }
  return
}

// -----

func.func @dynamic(%a: memref<?xf32>, %o: memref<?xf32>) {
  // expected-error@+1 {{operand #0 must have a static shape}}
  mw.kernel ins(%a : memref<?xf32>) outs(%o : memref<?xf32>) {
  ^bb0(%x: tensor<?xf32>):
    mw.yield %x : tensor<?xf32>
  }
  return
}

// -----

func.func @yield_outside(%a: tensor<4xf32>) {
  // expected-error@+1 {{'mw.yield' op expects parent op to be one of 'mw.kernel, mw.fusion'}}
  mw.yield %a : tensor<4xf32>
}
