// Malformed input that the parser rejects, with the error at the offending
// line: unknown ops, unregistered dialects, bad enum spellings, missing types.
// RUN: mw-opt %s -split-input-file -verify-diagnostics

func.func @unknown_mw_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{custom op 'mw.frobnicate' is unknown}}
  %0 = mw.frobnicate %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @unregistered_dialect(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+2 {{Dialect `foo' not found for custom op 'foo.bar'}}
  // expected-note@+1 {{Registered dialects:}}
  %0 = foo.bar %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @unregistered_dialect_generic(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{operation being parsed with an unregistered dialect}}
  %0 = "foo.bar"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error@+2 {{to be one of: param, input, label, optimizer_state, grad, output}}
// expected-error@+1 {{failed to parse MW_RoleAttr parameter 'value'}}
func.func @misspelled_role(%w: tensor<4xf32> {mw.role = #mw.role<weights>}) {
  return
}

// -----

// expected-error@+1 {{unknown attribute `rol` in dialect `mw`}}
func.func @unknown_mw_attribute(%w: tensor<4xf32> {mw.role = #mw.rol<param>}) {
  return
}

// -----

func.func @missing_operand_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{expected ':'}}
  %0 = mw.exp %x
  return %0 : tensor<4xf32>
}

// -----

func.func @missing_second_operand_type(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{custom op 'mw.add' 2 operands present, but expected 1}}
  %0 = mw.add %a, %b : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @unknown_gelu_approximation(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+2 {{to be one of: erf, tanh}}
  // expected-error@+1 {{failed to parse MW_GeluApproximationAttr parameter 'value'}}
  %0 = mw.gelu %x {approximate = #mw.gelu_approximation<fast>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @constant_not_elements() -> tensor<f32> {
  // expected-error@+1 {{custom op 'mw.constant' expected an elements attribute, got 1.000000e+00 : f32}}
  %0 = mw.constant 1.0 : f32
  return %0 : tensor<f32>
}

// -----

func.func @reduce_missing_axes_keyword(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{custom op 'mw.reduce_sum' expected 'axes'}}
  %0 = mw.reduce_sum %x [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @undefined_value(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{use of undeclared SSA value name}}
  %0 = mw.exp %y : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-note@+1 {{prior use here}}
func.func @operand_type_differs_from_definition(%x: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error@+1 {{use of value '%x' expects different type than prior uses: 'tensor<4xf16>' vs 'tensor<4xf32>'}}
  %0 = mw.exp %x : tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func @constant_value_in_attribute_dictionary() -> tensor<2xf32> {
  // expected-error@+1 {{the value is written after the attribute dictionary, not inside it}}
  %0 = mw.constant {value = dense<2.0> : tensor<2xf32>} dense<1.0> : tensor<2xf32>
  return %0 : tensor<2xf32>
}
