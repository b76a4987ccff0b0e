// Every diagnostic of the mw verifiers (MWOps.cpp), of the function argument
// and result attributes (MWDialect.cpp), of the StaticShapes trait, and a few
// ODS constraint failures: one case per split.
// RUN: mw-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Function argument and result attributes (MWDialect.cpp)
//===----------------------------------------------------------------------===//

// expected-error@+1 {{'func.func' op argument #0 has role 'output', which only results may have (arguments: param, input, label, optimizer_state, grad, kv_cache)}}
func.func @output_role_on_argument(%x: tensor<4xf32> {mw.role = #mw.role<output>}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op result #0 has role 'input', which only arguments may have (results: output, grad, param, optimizer_state, kv_cache)}}
func.func @input_role_on_result(%x: tensor<4xf32>) -> (tensor<4xf32> {mw.role = #mw.role<input>}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error@+1 {{'func.func' op result #0 has role 'label', which only arguments may have (results: output, grad, param, optimizer_state, kv_cache)}}
func.func @label_role_on_result(%x: tensor<4xi32>) -> (tensor<4xi32> {mw.role = #mw.role<label>}) {
  return %x : tensor<4xi32>
}

// -----

// expected-error@+1 {{'func.func' op 'mw.role' on argument #0 must be a #mw.role<...>, got "param"}}
func.func @role_not_a_role_attr(%x: tensor<4xf32> {mw.role = "param"}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'mw.role' on result #0 must be a #mw.role<...>, got 1 : i32}}
func.func @result_role_not_a_role_attr(%x: tensor<4xf32>) -> (tensor<4xf32> {mw.role = 1 : i32}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error@+1 {{'func.func' op argument #0 has role 'param' but a non-float element type 'i32'}}
func.func @integer_param(%x: tensor<4xi32> {mw.role = #mw.role<param>}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op result #0 has role 'grad' but a non-float element type 'i64'}}
func.func @integer_grad_result(%x: tensor<4xi64>) -> (tensor<4xi64> {mw.role = #mw.role<grad>}) {
  return %x : tensor<4xi64>
}

// -----

// expected-error@+1 {{'func.func' op 'mw.name' on argument #0 must be a string, got 3 : i64}}
func.func @name_not_a_string(%x: tensor<4xf32> {mw.name = 3 : i64}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'mw.name' on argument #0 is empty}}
func.func @empty_name(%x: tensor<4xf32> {mw.name = ""}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op argument #2 has the same mw.name "w" as argument #0}}
func.func @duplicate_argument_names(%a: tensor<4xf32> {mw.name = "w"}, %b: tensor<4xf32>, %c: tensor<8xf32> {mw.name = "w"}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op result #1 has the same mw.name "y" as result #0}}
func.func @duplicate_result_names(%a: tensor<4xf32>) -> (tensor<4xf32> {mw.name = "y"}, tensor<4xf32> {mw.name = "y"}) {
  return %a, %a : tensor<4xf32>, tensor<4xf32>
}

// -----

// expected-error@+1 {{'func.func' op unknown mw argument attribute 'mw.rol' (expected 'mw.role', 'mw.name', 'mw.shard' or 'mw.offload')}}
func.func @unknown_argument_attribute(%x: tensor<4xf32> {mw.rol = #mw.role<param>}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op unknown mw result attribute 'mw.shards' (expected 'mw.role', 'mw.name', 'mw.shard' or 'mw.offload')}}
func.func @unknown_result_attribute(%x: tensor<4xf32>) -> (tensor<4xf32> {mw.shards = 0 : i64}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error@+1 {{'func.func' op 'mw.shard' of result #0 must be a dictionary}}
func.func @shard_not_dictionary(%x: tensor<4xf32>) -> (tensor<4xf32> {mw.shard = 0 : i64}) {
  return %x : tensor<4xf32>
}

// -----

// 2 + 6 elements over 2 ranks are pieces of 4, not 3.
// expected-error@+1 {{'func.func' op 'mw.shard' of argument #0 describes 8 elements over 2 ranks, which a piece of type 'tensor<3xf32>' does not hold}}
func.func @shard_wrong_piece(%x: tensor<3xf32> {mw.shard = {members = ["b", "w"], sizes = array<i64: 2, 6>, ranks = 2}}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'mw.shard' of argument #0 must name one string member per size}}
func.func @shard_members(%x: tensor<4xf32> {mw.shard = {members = ["b"], sizes = array<i64: 2, 6>, ranks = 2}}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'mw.shard' of argument #0 gives member 'w' a shape of 4 elements but a size of 6}}
func.func @shard_shape_size(%x: tensor<4xf32> {mw.shard = {members = ["b", "w"], sizes = array<i64: 2, 6>, shapes = [array<i64: 2>, array<i64: 2, 2>], ranks = 2}}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'mw.shard' of argument #0 must give one string source per member}}
func.func @shard_sources_count(%x: tensor<4xf32> {mw.shard = {members = ["b", "w"], sizes = array<i64: 2, 6>, sources = ["b.exp_avg"], ranks = 2}}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'mw.shard' of argument #0 must give one shape (array<i64>) per member}}
func.func @shard_shapes_count(%x: tensor<4xf32> {mw.shard = {members = ["b", "w"], sizes = array<i64: 2, 6>, shapes = [array<i64: 2>], ranks = 2}}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op argument #0 of type 'i32' carries mw attributes but is not a ranked tensor or memref}}
func.func @role_on_scalar(%x: i32 {mw.role = #mw.role<input>}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op argument #0 of type 'tensor<*xf32>' carries mw attributes but is not a ranked tensor or memref}}
func.func @name_on_unranked(%x: tensor<*xf32> {mw.name = "x"}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op argument #0 of type 'vector<4xf32>' carries mw attributes but is not a ranked tensor or memref}}
func.func @role_on_vector(%x: vector<4xf32> {mw.role = #mw.role<param>}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op argument #0 has a dynamic shape 'tensor<?x64xf32>'; mw requires static shapes}}
func.func @role_on_dynamic_argument(%x: tensor<?x64xf32> {mw.role = #mw.role<input>}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op result #0 has a dynamic shape 'memref<?xf32>'; mw requires static shapes}}
func.func @name_on_dynamic_result(%x: memref<?xf32>) -> (memref<?xf32> {mw.name = "y"}) {
  return %x : memref<?xf32>
}

// -----

//===----------------------------------------------------------------------===//
// StaticShapes trait
//===----------------------------------------------------------------------===//

func.func @dynamic_operand(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error@+1 {{'mw.exp' op operand #0 has a dynamic shape 'tensor<?x8xf32>'; mw ops require static shapes}}
  %0 = mw.exp %x : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @dynamic_second_operand(%a: tensor<4xf32>, %b: tensor<?xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mw.add' op operand #1 has a dynamic shape 'tensor<?xf32>'; mw ops require static shapes}}
  %0 = mw.add %a, %b : (tensor<4xf32>, tensor<?xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @dynamic_result(%x: tensor<4x8xf32>) -> tensor<?xf32> {
  // expected-error@+1 {{'mw.reshape' op result #0 has a dynamic shape 'tensor<?xf32>'; mw ops require static shapes}}
  %0 = mw.reshape %x : tensor<4x8xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

func.func @constant_type_mismatch() -> tensor<4xf32> {
  // expected-error@+1 {{'mw.constant' op value type 'tensor<2xf32>' differs from the result type 'tensor<4xf32>'}}
  %0 = "mw.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @constant_element_type_mismatch() -> tensor<2xf16> {
  // expected-error@+1 {{'mw.constant' op value type 'tensor<2xf32>' differs from the result type 'tensor<2xf16>'}}
  %0 = "mw.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<2xf16>
  return %0 : tensor<2xf16>
}

// -----

func.func @splat_fraction_for_integer() -> tensor<4xi32> {
  // expected-error@+1 {{'mw.splat' op value 1.500000e+00 is not an integer, as element type 'i32' requires}}
  %0 = mw.splat 1.5 : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @splat_infinity_for_integer() -> tensor<4xi64> {
  // expected-error@+1 {{'mw.splat' op value INF is not an integer, as element type 'i64' requires}}
  %0 = mw.splat 0x7FF0000000000000 : tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

func.func @binary_element_types(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error@+1 {{'mw.add' op rhs element type 'f16' differs from the lhs element type 'f32'}}
  %0 = mw.add %a, %b : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @binary_not_broadcastable(%a: tensor<4x3xf32>, %b: tensor<4x2xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'mw.sub' op operand shapes [4, 3] and [4, 2] are not broadcast-compatible}}
  %0 = mw.sub %a, %b : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @binary_wrong_result_shape(%a: tensor<4x1xf32>, %b: tensor<8xf32>) -> tensor<4x1xf32> {
  // expected-error@+1 {{'mw.mul' op result type 'tensor<4x1xf32>' does not match the expected 'tensor<4x8xf32>'}}
  %0 = mw.mul %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

func.func @binary_wrong_result_element(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi64> {
  // expected-error@+1 {{'mw.div' op result type 'tensor<4xi64>' does not match the expected 'tensor<4xi32>'}}
  %0 = mw.div %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @maximum_element_types(%a: tensor<4xi32>, %b: tensor<4xi64>) -> tensor<4xi32> {
  // expected-error@+1 {{'mw.maximum' op rhs element type 'i64' differs from the lhs element type 'i32'}}
  %0 = mw.maximum %a, %b : (tensor<4xi32>, tensor<4xi64>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @exp_of_integer(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error@+1 {{'mw.exp' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4xi32>'}}
  %0 = mw.exp %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @unary_result_type(%x: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error@+1 {{'mw.tanh' op requires the same type for all operands and results}}
  %0 = "mw.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func @neg_of_f64(%x: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error@+1 {{'mw.neg' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xf64>'}}
  %0 = mw.neg %x : tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

func.func @cast_changes_shape(%x: tensor<4xf32>) -> tensor<2x2xbf16> {
  // expected-error@+1 {{'mw.cast' op requires the same shape for all operands and results}}
  %0 = mw.cast %x : tensor<4xf32> to tensor<2x2xbf16>
  return %0 : tensor<2x2xbf16>
}

// -----

func.func @gelu_bad_approximation_attr(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mw.gelu' op attribute 'approximate' failed to satisfy constraint: erf (exact) or tanh (GPT-2's approximation) form of GELU}}
  %0 = mw.gelu %x {approximate = "tanh"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

func.func @matmul_lhs_rank(%a: tensor<64xf32>, %b: tensor<64x32xf32>) -> tensor<32xf32> {
  // expected-error@+1 {{'mw.matmul' op lhs must have rank >= 2, got 1}}
  %0 = mw.matmul %a, %b : (tensor<64xf32>, tensor<64x32xf32>) -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

func.func @matmul_rhs_rank(%a: tensor<8x64xf32>, %b: tensor<64xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'mw.matmul' op rhs must have rank >= 2, got 1}}
  %0 = mw.matmul %a, %b : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @matmul_element_types(%a: tensor<8x64xf32>, %b: tensor<64x32xbf16>) -> tensor<8x32xf32> {
  // expected-error@+1 {{'mw.matmul' op rhs element type 'bf16' differs from the lhs element type 'f32'}}
  %0 = mw.matmul %a, %b : (tensor<8x64xf32>, tensor<64x32xbf16>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

func.func @matmul_contracting(%a: tensor<8x64xf32>, %b: tensor<32x16xf32>) -> tensor<8x16xf32> {
  // expected-error@+1 {{'mw.matmul' op contracting dimensions differ: 64 vs 32}}
  %0 = mw.matmul %a, %b : (tensor<8x64xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @matmul_contracting_transposed(%a: tensor<8x64xf32>, %b: tensor<8x16xf32>) -> tensor<64x8xf32> {
  // expected-error@+1 {{'mw.matmul' op contracting dimensions differ: 8 vs 16}}
  %0 = mw.matmul %a, %b {transpose_lhs, transpose_rhs} : (tensor<8x64xf32>, tensor<8x16xf32>) -> tensor<64x8xf32>
  return %0 : tensor<64x8xf32>
}

// -----

func.func @matmul_batch(%a: tensor<3x8x64xf32>, %b: tensor<2x64x16xf32>) -> tensor<3x8x16xf32> {
  // expected-error@+1 {{'mw.matmul' op batch dimensions [3] and [2] are not broadcast-compatible}}
  %0 = mw.matmul %a, %b : (tensor<3x8x64xf32>, tensor<2x64x16xf32>) -> tensor<3x8x16xf32>
  return %0 : tensor<3x8x16xf32>
}

// -----

func.func @matmul_result(%a: tensor<2x1x8x64xf32>, %b: tensor<5x64x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error@+1 {{'mw.matmul' op result type 'tensor<2x8x16xf32>' does not match the expected 'tensor<2x5x8x16xf32>'}}
  %0 = mw.matmul %a, %b : (tensor<2x1x8x64xf32>, tensor<5x64x16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @matmul_result_not_transposed(%a: tensor<8x64xf32>, %b: tensor<16x64xf32>) -> tensor<8x64xf32> {
  // expected-error@+1 {{'mw.matmul' op result type 'tensor<8x64xf32>' does not match the expected 'tensor<8x16xf32>'}}
  %0 = mw.matmul %a, %b {transpose_rhs} : (tensor<8x64xf32>, tensor<16x64xf32>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

func.func @matmul_unit_attr_with_value(%a: tensor<64x8xf32>, %b: tensor<64x16xf32>) -> tensor<8x16xf32> {
  // expected-error@+1 {{'mw.matmul' op attribute 'transpose_lhs' failed to satisfy constraint: unit attribute}}
  %0 = mw.matmul %a, %b {transpose_lhs = true} : (tensor<64x8xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @matmul_of_integers(%a: tensor<8x4xi32>, %b: tensor<4x8xi32>) -> tensor<8x8xi32> {
  // expected-error@+1 {{'mw.matmul' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<8x4xi32>'}}
  %0 = mw.matmul %a, %b : (tensor<8x4xi32>, tensor<4x8xi32>) -> tensor<8x8xi32>
  return %0 : tensor<8x8xi32>
}

// -----

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

func.func @reduce_axis_out_of_range(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mw.reduce_sum' op axis 2 is out of range for rank 2}}
  %0 = mw.reduce_sum %x axes = [2] : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_negative_axis(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mw.reduce_max' op axis -1 is out of range for rank 2}}
  %0 = mw.reduce_max %x axes = [-1] : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_axes_decreasing(%x: tensor<4x8xf32>) -> tensor<f32> {
  // expected-error@+1 {{'mw.reduce_mean' op axes must be strictly increasing, got [1, 0]}}
  %0 = mw.reduce_mean %x axes = [1, 0] : tensor<4x8xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @reduce_axes_repeated(%x: tensor<4x8xi32>) -> tensor<4xi32> {
  // expected-error@+1 {{'mw.reduce_sum' op axes must be strictly increasing, got [1, 1]}}
  %0 = mw.reduce_sum %x axes = [1, 1] : tensor<4x8xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @reduce_result_without_keepdims(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // expected-error@+1 {{'mw.reduce_sum' op result type 'tensor<4x1xf32>' does not match the expected 'tensor<4xf32>'}}
  %0 = mw.reduce_sum %x axes = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

func.func @reduce_result_with_keepdims(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mw.reduce_max' op result type 'tensor<4xf32>' does not match the expected 'tensor<4x1xf32>'}}
  %0 = mw.reduce_max %x axes = [1] {keepdims} : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_result_element(%x: tensor<4x8xbf16>) -> tensor<4xf32> {
  // expected-error@+1 {{'mw.reduce_mean' op result type 'tensor<4xf32>' does not match the expected 'tensor<4xbf16>'}}
  %0 = mw.reduce_mean %x axes = [1] : tensor<4x8xbf16> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_mean_of_integers(%x: tensor<4x8xi32>) -> tensor<4xi32> {
  // expected-error@+1 {{'mw.reduce_mean' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4x8xi32>'}}
  %0 = mw.reduce_mean %x axes = [1] : tensor<4x8xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

//===----------------------------------------------------------------------===//
// Softmax family
//===----------------------------------------------------------------------===//

func.func @softmax_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.softmax' op axis 2 is out of range for rank 2}}
  %0 = mw.softmax %x axis = 2 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @log_softmax_negative_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.log_softmax' op axis -1 is out of range for rank 2}}
  %0 = mw.log_softmax %x axis = -1 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @softmax_of_scalar(%x: tensor<f32>) -> tensor<f32> {
  // expected-error@+1 {{'mw.softmax' op axis 0 is out of range for rank 0}}
  %0 = mw.softmax %x axis = 0 : tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @softmax_grad_axis(%y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.softmax_grad' op axis 5 is out of range for rank 2}}
  %0 = mw.softmax_grad %y, %y axis = 5 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @log_softmax_grad_axis(%y: tensor<8xbf16>) -> tensor<8xbf16> {
  // expected-error@+1 {{'mw.log_softmax_grad' op axis 1 is out of range for rank 1}}
  %0 = mw.log_softmax_grad %y, %y axis = 1 : tensor<8xbf16>
  return %0 : tensor<8xbf16>
}

// -----

func.func @softmax_grad_types(%y: tensor<4x8xf32>, %dy: tensor<4x8xf16>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.softmax_grad' op requires the same type for all operands and results}}
  %0 = "mw.softmax_grad"(%y, %dy) <{axis = 1 : i64}> : (tensor<4x8xf32>, tensor<4x8xf16>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

func.func @layer_norm_scalar_input(%x: tensor<f32>, %g: tensor<1xf32>) -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  // expected-error@+1 {{'mw.layer_norm' op input must have rank >= 1, got 0}}
  %y, %mean, %rstd = mw.layer_norm %x, %g, %g : (tensor<f32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<f32>, tensor<f32>, tensor<f32>)
  return %y, %mean, %rstd : tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

func.func @layer_norm_gamma_shape(%x: tensor<4x8xf32>, %g: tensor<4xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.layer_norm' op gamma type 'tensor<4xf32>' does not match the expected 'tensor<8xf32>'}}
  %y, %mean, %rstd = mw.layer_norm %x, %g, %b : (tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y : tensor<4x8xf32>
}

// -----

func.func @layer_norm_beta_shape(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<1x8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.layer_norm' op beta type 'tensor<1x8xf32>' does not match the expected 'tensor<8xf32>'}}
  %y, %mean, %rstd = mw.layer_norm %x, %g, %b : (tensor<4x8xf32>, tensor<8xf32>, tensor<1x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y : tensor<4x8xf32>
}

// -----

func.func @layer_norm_gamma_element(%x: tensor<4x8xf32>, %g: tensor<8xbf16>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.layer_norm' op gamma type 'tensor<8xbf16>' does not match the expected 'tensor<8xf32>'}}
  %y, %mean, %rstd = mw.layer_norm %x, %g, %g : (tensor<4x8xf32>, tensor<8xbf16>, tensor<8xbf16>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y : tensor<4x8xf32>
}

// -----

func.func @layer_norm_zero_epsilon(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.layer_norm' op epsilon must be finite and positive, got 0.000000e+00}}
  %y, %mean, %rstd = mw.layer_norm %x, %g, %g {epsilon = 0.0 : f64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y : tensor<4x8xf32>
}

// -----

func.func @layer_norm_negative_epsilon(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.layer_norm' op epsilon must be finite and positive, got -1.000000e-05}}
  %y, %mean, %rstd = mw.layer_norm %x, %g, %g {epsilon = -1.0e-05 : f64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y : tensor<4x8xf32>
}

// -----

func.func @layer_norm_result(%x: tensor<4x8xbf16>, %g: tensor<8xbf16>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.layer_norm' op result type 'tensor<4x8xf32>' differs from the input type 'tensor<4x8xbf16>'}}
  %y, %mean, %rstd = mw.layer_norm %x, %g, %g : (tensor<4x8xbf16>, tensor<8xbf16>, tensor<8xbf16>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y : tensor<4x8xf32>
}

// -----

func.func @layer_norm_mean_shape(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.layer_norm' op mean type 'tensor<4x1xf32>' does not match the expected 'tensor<4xf32>'}}
  %y, %mean, %rstd = mw.layer_norm %x, %g, %g : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4xf32>)
  return %y : tensor<4x8xf32>
}

// -----

func.func @layer_norm_rstd_shape(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.layer_norm' op rstd type 'tensor<8xf32>' does not match the expected 'tensor<4xf32>'}}
  %y, %mean, %rstd = mw.layer_norm %x, %g, %g : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>)
  return %y : tensor<4x8xf32>
}

// -----

func.func @layer_norm_bf16_stats(%x: tensor<4x8xbf16>, %g: tensor<8xbf16>) -> tensor<4x8xbf16> {
  // expected-error@+1 {{'mw.layer_norm' op result #1 must be ranked tensor of 32-bit float values, but got 'tensor<4xbf16>'}}
  %y, %mean, %rstd = mw.layer_norm %x, %g, %g : (tensor<4x8xbf16>, tensor<8xbf16>, tensor<8xbf16>) -> (tensor<4x8xbf16>, tensor<4xbf16>, tensor<4xbf16>)
  return %y : tensor<4x8xbf16>
}

// -----

func.func @rms_norm_scalar_input(%x: tensor<f32>, %g: tensor<1xf32>) -> tensor<f32> {
  // expected-error@+1 {{'mw.rms_norm' op input must have rank >= 1, got 0}}
  %y, %rstd = mw.rms_norm %x, %g : (tensor<f32>, tensor<1xf32>) -> (tensor<f32>, tensor<f32>)
  return %y : tensor<f32>
}

// -----

func.func @rms_norm_gamma_shape(%x: tensor<4x8xf32>, %g: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.rms_norm' op gamma type 'tensor<4xf32>' does not match the expected 'tensor<8xf32>'}}
  %y, %rstd = mw.rms_norm %x, %g : (tensor<4x8xf32>, tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
  return %y : tensor<4x8xf32>
}

// -----

func.func @rms_norm_epsilon(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.rms_norm' op epsilon must be finite and positive, got 0.000000e+00}}
  %y, %rstd = mw.rms_norm %x, %g {epsilon = 0.0 : f64} : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
  return %y : tensor<4x8xf32>
}

// -----

func.func @rms_norm_result(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<8x4xf32> {
  // expected-error@+1 {{'mw.rms_norm' op result type 'tensor<8x4xf32>' differs from the input type 'tensor<4x8xf32>'}}
  %y, %rstd = mw.rms_norm %x, %g : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<8x4xf32>, tensor<4xf32>)
  return %y : tensor<8x4xf32>
}

// -----

func.func @rms_norm_rstd_shape(%x: tensor<2x4x8xf32>, %g: tensor<8xf32>) -> tensor<2x4x8xf32> {
  // expected-error@+1 {{'mw.rms_norm' op rstd type 'tensor<8xf32>' does not match the expected 'tensor<2x4xf32>'}}
  %y, %rstd = mw.rms_norm %x, %g : (tensor<2x4x8xf32>, tensor<8xf32>) -> (tensor<2x4x8xf32>, tensor<8xf32>)
  return %y : tensor<2x4x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Embedding and cross-entropy
//===----------------------------------------------------------------------===//

func.func @embedding_table_rank(%t: tensor<2x256x64xf32>, %i: tensor<8xi32>) -> tensor<8x64xf32> {
  // expected-error@+1 {{'mw.embedding' op table must have rank 2 ([V, D]), got 3}}
  %0 = mw.embedding %t, %i : (tensor<2x256x64xf32>, tensor<8xi32>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

func.func @embedding_result(%t: tensor<256x64xf32>, %i: tensor<2x8xi32>) -> tensor<16x64xf32> {
  // expected-error@+1 {{'mw.embedding' op result type 'tensor<16x64xf32>' does not match the expected 'tensor<2x8x64xf32>'}}
  %0 = mw.embedding %t, %i : (tensor<256x64xf32>, tensor<2x8xi32>) -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}

// -----

func.func @embedding_result_element(%t: tensor<256x64xbf16>, %i: tensor<8xi32>) -> tensor<8x64xf32> {
  // expected-error@+1 {{'mw.embedding' op result type 'tensor<8x64xf32>' does not match the expected 'tensor<8x64xbf16>'}}
  %0 = mw.embedding %t, %i : (tensor<256x64xbf16>, tensor<8xi32>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

func.func @embedding_float_indices(%t: tensor<256x64xf32>, %i: tensor<8xf32>) -> tensor<8x64xf32> {
  // expected-error@+1 {{'mw.embedding' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<8xf32>'}}
  %0 = mw.embedding %t, %i : (tensor<256x64xf32>, tensor<8xf32>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

func.func @embedding_i16_indices(%t: tensor<256x64xf32>, %i: tensor<8xi16>) -> tensor<8x64xf32> {
  // expected-error@+1 {{'mw.embedding' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<8xi16>'}}
  %0 = mw.embedding %t, %i : (tensor<256x64xf32>, tensor<8xi16>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

func.func @embedding_grad_result_rank(%i: tensor<8xi32>, %d: tensor<8x64xf32>) -> tensor<256xf32> {
  // expected-error@+1 {{'mw.embedding_grad' op result must have rank 2 ([V, D]), got 1}}
  %0 = mw.embedding_grad %i, %d : (tensor<8xi32>, tensor<8x64xf32>) -> tensor<256xf32>
  return %0 : tensor<256xf32>
}

// -----

func.func @embedding_grad_grad_output(%i: tensor<2x8xi32>, %d: tensor<16x64xf32>) -> tensor<256x64xf32> {
  // expected-error@+1 {{'mw.embedding_grad' op grad_output type 'tensor<16x64xf32>' does not match the expected 'tensor<2x8x64xf32>'}}
  %0 = mw.embedding_grad %i, %d : (tensor<2x8xi32>, tensor<16x64xf32>) -> tensor<256x64xf32>
  return %0 : tensor<256x64xf32>
}

// -----

func.func @embedding_grad_element(%i: tensor<8xi64>, %d: tensor<8x64xbf16>) -> tensor<256x64xf32> {
  // expected-error@+1 {{'mw.embedding_grad' op result element type 'f32' differs from the grad_output element type 'bf16'}}
  %0 = mw.embedding_grad %i, %d : (tensor<8xi64>, tensor<8x64xbf16>) -> tensor<256x64xf32>
  return %0 : tensor<256x64xf32>
}

// -----

func.func @cross_entropy_scalar_logits(%l: tensor<f32>, %y: tensor<i32>) -> tensor<f32> {
  // expected-error@+1 {{'mw.cross_entropy' op logits must have rank >= 1, got 0}}
  %0 = mw.cross_entropy %l, %y : (tensor<f32>, tensor<i32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @cross_entropy_labels(%l: tensor<64x256xf32>, %y: tensor<32xi32>) -> tensor<f32> {
  // expected-error@+1 {{'mw.cross_entropy' op labels type 'tensor<32xi32>' does not match the expected 'tensor<64xi32>'}}
  %0 = mw.cross_entropy %l, %y : (tensor<64x256xf32>, tensor<32xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @cross_entropy_labels_keep_class_dim(%l: tensor<64x256xf32>, %y: tensor<64x1xi64>) -> tensor<f32> {
  // expected-error@+1 {{'mw.cross_entropy' op labels type 'tensor<64x1xi64>' does not match the expected 'tensor<64xi64>'}}
  %0 = mw.cross_entropy %l, %y : (tensor<64x256xf32>, tensor<64x1xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @cross_entropy_label_offset_rank(%l: tensor<2x8x16xf32>, %y: tensor<32xi32>) -> tensor<f32> {
  // expected-error@+1 {{'mw.cross_entropy' op with label_offset, logits must be [n, C] and labels [N], got logits 'tensor<2x8x16xf32>' and labels 'tensor<32xi32>'}}
  %0 = mw.cross_entropy %l, %y {label_offset = 0} : (tensor<2x8x16xf32>, tensor<32xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @cross_entropy_label_offset_past_end(%l: tensor<8x16xf32>, %y: tensor<32xi32>) -> tensor<f32> {
  // expected-error@+1 {{'mw.cross_entropy' op label_offset 25 + 8 rows exceeds the 32 labels}}
  %0 = mw.cross_entropy %l, %y {label_offset = 25} : (tensor<8x16xf32>, tensor<32xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @cross_entropy_label_offset_negative(%l: tensor<8x16xf32>, %y: tensor<32xi32>) -> tensor<f32> {
  // expected-error@+1 {{'mw.cross_entropy' op label_offset -1 + 8 rows exceeds the 32 labels}}
  %0 = mw.cross_entropy %l, %y {label_offset = -1} : (tensor<8x16xf32>, tensor<32xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @cross_entropy_grad_label_offset(%l: tensor<8x16xf32>, %y: tensor<4xi32>, %g: tensor<f32>) -> tensor<8x16xf32> {
  // expected-error@+1 {{'mw.cross_entropy_grad' op label_offset 0 + 8 rows exceeds the 4 labels}}
  %0 = mw.cross_entropy_grad %l, %y, %g {label_offset = 0} : (tensor<8x16xf32>, tensor<4xi32>, tensor<f32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @cross_entropy_result(%l: tensor<64x256xf32>, %y: tensor<64xi32>) -> tensor<64xf32> {
  // expected-error@+1 {{'mw.cross_entropy' op result #0 must be 0D tensor of 32-bit float values, but got 'tensor<64xf32>'}}
  %0 = mw.cross_entropy %l, %y : (tensor<64x256xf32>, tensor<64xi32>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

func.func @cross_entropy_grad_labels(%l: tensor<64x256xf32>, %y: tensor<256xi32>, %d: tensor<f32>) -> tensor<64x256xf32> {
  // expected-error@+1 {{'mw.cross_entropy_grad' op labels type 'tensor<256xi32>' does not match the expected 'tensor<64xi32>'}}
  %0 = mw.cross_entropy_grad %l, %y, %d : (tensor<64x256xf32>, tensor<256xi32>, tensor<f32>) -> tensor<64x256xf32>
  return %0 : tensor<64x256xf32>
}

// -----

func.func @cross_entropy_grad_result(%l: tensor<64x256xbf16>, %y: tensor<64xi32>, %d: tensor<f32>) -> tensor<64x256xf32> {
  // expected-error@+1 {{'mw.cross_entropy_grad' op result type 'tensor<64x256xf32>' differs from the logits type 'tensor<64x256xbf16>'}}
  %0 = mw.cross_entropy_grad %l, %y, %d : (tensor<64x256xbf16>, tensor<64xi32>, tensor<f32>) -> tensor<64x256xf32>
  return %0 : tensor<64x256xf32>
}

// -----

func.func @cross_entropy_grad_loss_rank(%l: tensor<64x256xf32>, %y: tensor<64xi32>, %d: tensor<1xf32>) -> tensor<64x256xf32> {
  // expected-error@+1 {{'mw.cross_entropy_grad' op operand #2 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  %0 = mw.cross_entropy_grad %l, %y, %d : (tensor<64x256xf32>, tensor<64xi32>, tensor<1xf32>) -> tensor<64x256xf32>
  return %0 : tensor<64x256xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

func.func @attention_query_rank(%q: tensor<4x32x16xf32>, %k: tensor<2x4x32x16xf32>) -> tensor<2x4x32x16xf32> {
  // expected-error@+1 {{'mw.attention' op query must have rank 4 ([B, H, S, D]), got 3}}
  %o, %lse = mw.attention %q, %k, %k : (tensor<4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>) -> (tensor<2x4x32x16xf32>, tensor<2x4x32xf32>)
  return %o : tensor<2x4x32x16xf32>
}

// -----

func.func @attention_key_rank(%q: tensor<2x4x32x16xf32>, %k: tensor<8x32x16xf32>) -> tensor<2x4x32x16xf32> {
  // expected-error@+1 {{'mw.attention' op key must have rank 4 ([B, H, Sk, D]), got 3}}
  %o, %lse = mw.attention %q, %k, %q : (tensor<2x4x32x16xf32>, tensor<8x32x16xf32>, tensor<2x4x32x16xf32>) -> (tensor<2x4x32x16xf32>, tensor<2x4x32xf32>)
  return %o : tensor<2x4x32x16xf32>
}

// -----

func.func @attention_value_rank(%q: tensor<2x4x32x16xf32>, %v: tensor<1x2x4x32x16xf32>) -> tensor<2x4x32x16xf32> {
  // expected-error@+1 {{'mw.attention' op value must have rank 4 ([B, H, Sk, Dv]), got 5}}
  %o, %lse = mw.attention %q, %q, %v : (tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<1x2x4x32x16xf32>) -> (tensor<2x4x32x16xf32>, tensor<2x4x32xf32>)
  return %o : tensor<2x4x32x16xf32>
}

// -----

func.func @attention_key_head_dim(%q: tensor<2x4x32x16xf32>, %k: tensor<2x4x32x8xf32>) -> tensor<2x4x32x8xf32> {
  // expected-error@+1 {{'mw.attention' op key shape [2, 4, 32, 8] does not match query shape [2, 4, 32, 16] in batch, heads or head dimension}}
  %o, %lse = mw.attention %q, %k, %k : (tensor<2x4x32x16xf32>, tensor<2x4x32x8xf32>, tensor<2x4x32x8xf32>) -> (tensor<2x4x32x8xf32>, tensor<2x4x32xf32>)
  return %o : tensor<2x4x32x8xf32>
}

// -----

func.func @attention_key_heads(%q: tensor<2x4x32x16xf32>, %k: tensor<2x1x32x16xf32>) -> tensor<2x4x32x16xf32> {
  // expected-error@+1 {{'mw.attention' op key shape [2, 1, 32, 16] does not match query shape [2, 4, 32, 16] in batch, heads or head dimension}}
  %o, %lse = mw.attention %q, %k, %k : (tensor<2x4x32x16xf32>, tensor<2x1x32x16xf32>, tensor<2x1x32x16xf32>) -> (tensor<2x4x32x16xf32>, tensor<2x4x32xf32>)
  return %o : tensor<2x4x32x16xf32>
}

// -----

func.func @attention_value_sequence(%q: tensor<2x4x32x16xf32>, %k: tensor<2x4x48x16xf32>, %v: tensor<2x4x32x16xf32>) -> tensor<2x4x32x16xf32> {
  // expected-error@+1 {{'mw.attention' op value shape [2, 4, 32, 16] does not match key shape [2, 4, 48, 16] in batch, heads or sequence length}}
  %o, %lse = mw.attention %q, %k, %v : (tensor<2x4x32x16xf32>, tensor<2x4x48x16xf32>, tensor<2x4x32x16xf32>) -> (tensor<2x4x32x16xf32>, tensor<2x4x32xf32>)
  return %o : tensor<2x4x32x16xf32>
}

// -----

func.func @attention_key_element(%q: tensor<2x4x32x16xf32>, %k: tensor<2x4x32x16xbf16>, %v: tensor<2x4x32x16xf32>) -> tensor<2x4x32x16xf32> {
  // expected-error@+1 {{'mw.attention' op key element type 'bf16' differs from the query element type 'f32'}}
  %o, %lse = mw.attention %q, %k, %v : (tensor<2x4x32x16xf32>, tensor<2x4x32x16xbf16>, tensor<2x4x32x16xf32>) -> (tensor<2x4x32x16xf32>, tensor<2x4x32xf32>)
  return %o : tensor<2x4x32x16xf32>
}

// -----

func.func @attention_value_element(%q: tensor<2x4x32x16xf16>, %v: tensor<2x4x32x16xf32>) -> tensor<2x4x32x16xf16> {
  // expected-error@+1 {{'mw.attention' op value element type 'f32' differs from the query element type 'f16'}}
  %o, %lse = mw.attention %q, %q, %v : (tensor<2x4x32x16xf16>, tensor<2x4x32x16xf16>, tensor<2x4x32x16xf32>) -> (tensor<2x4x32x16xf16>, tensor<2x4x32xf32>)
  return %o : tensor<2x4x32x16xf16>
}

// -----

func.func @attention_zero_scale(%q: tensor<2x4x32x16xf32>) -> tensor<2x4x32x16xf32> {
  // expected-error@+1 {{'mw.attention' op scale must be finite and positive, got 0.000000e+00}}
  %o, %lse = mw.attention %q, %q, %q {scale = 0.0 : f64} : (tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>) -> (tensor<2x4x32x16xf32>, tensor<2x4x32xf32>)
  return %o : tensor<2x4x32x16xf32>
}

// -----

func.func @attention_negative_scale(%q: tensor<2x4x32x16xf32>) -> tensor<2x4x32x16xf32> {
  // expected-error@+1 {{'mw.attention' op scale must be finite and positive, got -2.500000e-01}}
  %o, %lse = mw.attention %q, %q, %q {causal, scale = -0.25 : f64} : (tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>) -> (tensor<2x4x32x16xf32>, tensor<2x4x32xf32>)
  return %o : tensor<2x4x32x16xf32>
}

// -----

func.func @attention_result(%q: tensor<2x4x32x16xf32>, %k: tensor<2x4x48x16xf32>, %v: tensor<2x4x48x8xf32>) -> tensor<2x4x48x8xf32> {
  // expected-error@+1 {{'mw.attention' op result type 'tensor<2x4x48x8xf32>' does not match the expected 'tensor<2x4x32x8xf32>'}}
  %o, %lse = mw.attention %q, %k, %v : (tensor<2x4x32x16xf32>, tensor<2x4x48x16xf32>, tensor<2x4x48x8xf32>) -> (tensor<2x4x48x8xf32>, tensor<2x4x32xf32>)
  return %o : tensor<2x4x48x8xf32>
}

// -----

func.func @attention_lse(%q: tensor<2x4x32x16xf32>) -> tensor<2x4x32x16xf32> {
  // expected-error@+1 {{'mw.attention' op lse type 'tensor<2x4x32x1xf32>' does not match the expected 'tensor<2x4x32xf32>'}}
  %o, %lse = mw.attention %q, %q, %q : (tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>) -> (tensor<2x4x32x16xf32>, tensor<2x4x32x1xf32>)
  return %o : tensor<2x4x32x16xf32>
}

// -----

func.func @attention_grad_key(%q: tensor<2x4x32x16xf32>, %k: tensor<3x4x32x16xf32>, %lse: tensor<2x4x32xf32>) -> tensor<2x4x32x16xf32> {
  // expected-error@+1 {{'mw.attention_grad' op key shape [3, 4, 32, 16] does not match query shape [2, 4, 32, 16] in batch, heads or head dimension}}
  %dq, %dk, %dv = mw.attention_grad %q, %k, %k, %q, %lse, %q
      : (tensor<2x4x32x16xf32>, tensor<3x4x32x16xf32>, tensor<3x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32xf32>, tensor<2x4x32x16xf32>)
      -> (tensor<2x4x32x16xf32>, tensor<3x4x32x16xf32>, tensor<3x4x32x16xf32>)
  return %dq : tensor<2x4x32x16xf32>
}

// -----

func.func @attention_grad_scale(%q: tensor<2x4x32x16xf32>, %lse: tensor<2x4x32xf32>) -> tensor<2x4x32x16xf32> {
  // expected-error@+1 {{'mw.attention_grad' op scale must be finite and positive, got -1.000000e+00}}
  %dq, %dk, %dv = mw.attention_grad %q, %q, %q, %q, %lse, %q {scale = -1.0 : f64}
      : (tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32xf32>, tensor<2x4x32x16xf32>)
      -> (tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>)
  return %dq : tensor<2x4x32x16xf32>
}

// -----

func.func @attention_grad_output(%q: tensor<2x4x32x16xf32>, %v: tensor<2x4x32x8xf32>, %lse: tensor<2x4x32xf32>) -> tensor<2x4x32x16xf32> {
  // expected-error@+1 {{'mw.attention_grad' op output type 'tensor<2x4x32x16xf32>' does not match the expected 'tensor<2x4x32x8xf32>'}}
  %dq, %dk, %dv = mw.attention_grad %q, %q, %v, %q, %lse, %q
      : (tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x8xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32xf32>, tensor<2x4x32x16xf32>)
      -> (tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x8xf32>)
  return %dq : tensor<2x4x32x16xf32>
}

// -----

func.func @attention_grad_lse(%q: tensor<2x4x32x16xf32>, %lse: tensor<2x4x16xf32>) -> tensor<2x4x32x16xf32> {
  // expected-error@+1 {{'mw.attention_grad' op lse type 'tensor<2x4x16xf32>' does not match the expected 'tensor<2x4x32xf32>'}}
  %dq, %dk, %dv = mw.attention_grad %q, %q, %q, %q, %lse, %q
      : (tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x16xf32>, tensor<2x4x32x16xf32>)
      -> (tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>)
  return %dq : tensor<2x4x32x16xf32>
}

// -----

func.func @attention_grad_grad_output(%q: tensor<2x4x32x16xbf16>, %lse: tensor<2x4x32xf32>, %do: tensor<2x4x32x16xf32>) -> tensor<2x4x32x16xbf16> {
  // expected-error@+1 {{'mw.attention_grad' op grad_output type 'tensor<2x4x32x16xf32>' differs from the output type 'tensor<2x4x32x16xbf16>'}}
  %dq, %dk, %dv = mw.attention_grad %q, %q, %q, %q, %lse, %do
      : (tensor<2x4x32x16xbf16>, tensor<2x4x32x16xbf16>, tensor<2x4x32x16xbf16>, tensor<2x4x32x16xbf16>, tensor<2x4x32xf32>, tensor<2x4x32x16xf32>)
      -> (tensor<2x4x32x16xbf16>, tensor<2x4x32x16xbf16>, tensor<2x4x32x16xbf16>)
  return %dq : tensor<2x4x32x16xbf16>
}

// -----

func.func @attention_grad_grad_query(%q: tensor<2x4x32x16xbf16>, %lse: tensor<2x4x32xf32>) -> tensor<2x4x32x16xf32> {
  // expected-error@+1 {{'mw.attention_grad' op grad_query type 'tensor<2x4x32x16xf32>' differs from the query type 'tensor<2x4x32x16xbf16>'}}
  %dq, %dk, %dv = mw.attention_grad %q, %q, %q, %q, %lse, %q
      : (tensor<2x4x32x16xbf16>, tensor<2x4x32x16xbf16>, tensor<2x4x32x16xbf16>, tensor<2x4x32x16xbf16>, tensor<2x4x32xf32>, tensor<2x4x32x16xbf16>)
      -> (tensor<2x4x32x16xf32>, tensor<2x4x32x16xbf16>, tensor<2x4x32x16xbf16>)
  return %dq : tensor<2x4x32x16xf32>
}

// -----

func.func @attention_grad_grad_key(%q: tensor<2x4x32x16xf32>, %k: tensor<2x4x48x16xf32>, %lse: tensor<2x4x32xf32>) -> tensor<2x4x32x16xf32> {
  // expected-error@+1 {{'mw.attention_grad' op grad_key type 'tensor<2x4x32x16xf32>' differs from the key type 'tensor<2x4x48x16xf32>'}}
  %dq, %dk, %dv = mw.attention_grad %q, %k, %k, %q, %lse, %q
      : (tensor<2x4x32x16xf32>, tensor<2x4x48x16xf32>, tensor<2x4x48x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32xf32>, tensor<2x4x32x16xf32>)
      -> (tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x48x16xf32>)
  return %dq : tensor<2x4x32x16xf32>
}

// -----

func.func @attention_grad_grad_value(%q: tensor<2x4x32x16xf32>, %v: tensor<2x4x32x8xf32>, %o: tensor<2x4x32x8xf32>, %lse: tensor<2x4x32xf32>) -> tensor<2x4x32x16xf32> {
  // expected-error@+1 {{'mw.attention_grad' op grad_value type 'tensor<2x4x32x16xf32>' differs from the value type 'tensor<2x4x32x8xf32>'}}
  %dq, %dk, %dv = mw.attention_grad %q, %q, %v, %o, %lse, %o
      : (tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x8xf32>, tensor<2x4x32x8xf32>, tensor<2x4x32xf32>, tensor<2x4x32x8xf32>)
      -> (tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>)
  return %dq : tensor<2x4x32x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

func.func @reshape_element_count(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error@+1 {{'mw.reshape' op element count changes from 32 to 16}}
  %0 = mw.reshape %x : tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @reshape_element_type(%x: tensor<4x8xf32>) -> tensor<32xi32> {
  // expected-error@+1 {{'mw.reshape' op result element type 'i32' differs from the input element type 'f32'}}
  %0 = mw.reshape %x : tensor<4x8xf32> -> tensor<32xi32>
  return %0 : tensor<32xi32>
}

// -----

func.func @transpose_size(%x: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  // expected-error@+1 {{'mw.transpose' op permutation has 2 entries for rank 3}}
  %0 = mw.transpose %x permutation = [1, 0] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  return %0 : tensor<3x2x4xf32>
}

// -----

func.func @transpose_repeated(%x: tensor<2x3x4xf32>) -> tensor<3x3x4xf32> {
  // expected-error@+1 {{'mw.transpose' op permutation [1, 1, 2] is not a permutation of [0, 3)}}
  %0 = mw.transpose %x permutation = [1, 1, 2] : tensor<2x3x4xf32> -> tensor<3x3x4xf32>
  return %0 : tensor<3x3x4xf32>
}

// -----

func.func @transpose_out_of_range(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'mw.transpose' op permutation [2, 0] is not a permutation of [0, 2)}}
  %0 = mw.transpose %x permutation = [2, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @transpose_result(%x: tensor<2x3x4xf32>) -> tensor<2x4x3xf32> {
  // expected-error@+1 {{'mw.transpose' op result type 'tensor<2x4x3xf32>' does not match the expected 'tensor<3x2x4xf32>'}}
  %0 = mw.transpose %x permutation = [1, 0, 2] : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// -----

func.func @broadcast_to_element(%x: tensor<64xf32>) -> tensor<8x64xbf16> {
  // expected-error@+1 {{'mw.broadcast_to' op result element type 'bf16' differs from the input element type 'f32'}}
  %0 = mw.broadcast_to %x : tensor<64xf32> -> tensor<8x64xbf16>
  return %0 : tensor<8x64xbf16>
}

// -----

func.func @broadcast_to_lower_rank(%x: tensor<2x64xf32>) -> tensor<64xf32> {
  // expected-error@+1 {{'mw.broadcast_to' op cannot broadcast rank 2 to rank 1}}
  %0 = mw.broadcast_to %x : tensor<2x64xf32> -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

func.func @broadcast_to_incompatible(%x: tensor<3x1xf32>) -> tensor<2x4x5xf32> {
  // expected-error@+1 {{'mw.broadcast_to' op input dimension 0 of size 3 cannot broadcast to size 4}}
  %0 = mw.broadcast_to %x : tensor<3x1xf32> -> tensor<2x4x5xf32>
  return %0 : tensor<2x4x5xf32>
}

// -----

func.func @slice_offsets_count(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  // expected-error@+1 {{'mw.slice' op offsets has 1 entries for rank 2}}
  %0 = mw.slice %x offsets = [0] sizes = [2, 8] : tensor<4x8xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @slice_sizes_count(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  // expected-error@+1 {{'mw.slice' op sizes has 3 entries for rank 2}}
  %0 = mw.slice %x offsets = [0, 0] sizes = [2, 8, 1] : tensor<4x8xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @slice_strides_count(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  // expected-error@+1 {{'mw.slice' op strides has 1 entries for rank 2}}
  %0 = mw.slice %x offsets = [0, 0] sizes = [2, 8] strides = [1] : tensor<4x8xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @slice_negative_offset(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  // expected-error@+1 {{'mw.slice' op dimension 1 has offset -1, size 8, stride 1; offsets must be >= 0, sizes and strides >= 1}}
  %0 = mw.slice %x offsets = [0, -1] sizes = [2, 8] : tensor<4x8xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @slice_zero_size(%x: tensor<4x8xf32>) -> tensor<0x8xf32> {
  // expected-error@+1 {{'mw.slice' op dimension 0 has offset 0, size 0, stride 1; offsets must be >= 0, sizes and strides >= 1}}
  %0 = mw.slice %x offsets = [0, 0] sizes = [0, 8] : tensor<4x8xf32> -> tensor<0x8xf32>
  return %0 : tensor<0x8xf32>
}

// -----

func.func @slice_zero_stride(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  // expected-error@+1 {{'mw.slice' op dimension 0 has offset 0, size 2, stride 0; offsets must be >= 0, sizes and strides >= 1}}
  %0 = mw.slice %x offsets = [0, 0] sizes = [2, 8] strides = [0, 1] : tensor<4x8xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @slice_out_of_bounds(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  // expected-error@+1 {{'mw.slice' op slice along dimension 0 (offset 3, size 2, stride 1) reads past its size 4}}
  %0 = mw.slice %x offsets = [3, 0] sizes = [2, 8] : tensor<4x8xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @slice_strided_out_of_bounds(%x: tensor<4x8xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'mw.slice' op slice along dimension 1 (offset 1, size 3, stride 4) reads past its size 8}}
  %0 = mw.slice %x offsets = [0, 1] sizes = [4, 3] strides = [1, 4] : tensor<4x8xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @slice_result(%x: tensor<4x8xi32>) -> tensor<2x8xi32> {
  // expected-error@+1 {{'mw.slice' op result type 'tensor<2x8xi32>' does not match the expected 'tensor<2x4xi32>'}}
  %0 = mw.slice %x offsets = [0, 0] sizes = [2, 4] : tensor<4x8xi32> -> tensor<2x8xi32>
  return %0 : tensor<2x8xi32>
}

// -----

func.func @concat_no_inputs() -> tensor<4xf32> {
  // expected-error@+1 {{'mw.concat' op needs at least one input}}
  %0 = mw.concat axis = 0 : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @concat_axis(%a: tensor<4x8xf32>) -> tensor<4x16xf32> {
  // expected-error@+1 {{'mw.concat' op axis 2 is out of range for rank 2}}
  %0 = mw.concat %a, %a axis = 2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @concat_element(%a: tensor<4x8xf32>, %b: tensor<4x2xf16>) -> tensor<4x10xf32> {
  // expected-error@+1 {{'mw.concat' op input element type 'f16' differs from the first input element type 'f32'}}
  %0 = mw.concat %a, %b axis = 1 : (tensor<4x8xf32>, tensor<4x2xf16>) -> tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

// -----

func.func @concat_shape(%a: tensor<4x8xf32>, %b: tensor<4x2xf32>, %c: tensor<3x2xf32>) -> tensor<4x12xf32> {
  // expected-error@+1 {{'mw.concat' op input #2 has shape [3, 2], which differs from input #0's [4, 8] outside axis 1}}
  %0 = mw.concat %a, %b, %c axis = 1 : (tensor<4x8xf32>, tensor<4x2xf32>, tensor<3x2xf32>) -> tensor<4x12xf32>
  return %0 : tensor<4x12xf32>
}

// -----

func.func @concat_rank(%a: tensor<4x8xf32>, %b: tensor<4x8x1xf32>) -> tensor<4x16xf32> {
  // expected-error@+1 {{'mw.concat' op input #1 has shape [4, 8, 1], which differs from input #0's [4, 8] outside axis 1}}
  %0 = mw.concat %a, %b axis = 1 : (tensor<4x8xf32>, tensor<4x8x1xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @concat_result(%a: tensor<4x8xf32>, %b: tensor<2x8xf32>) -> tensor<4x16xf32> {
  // expected-error@+1 {{'mw.concat' op result type 'tensor<4x16xf32>' does not match the expected 'tensor<6x8xf32>'}}
  %0 = mw.concat %a, %b axis = 0 : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @clamp_integers(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error@+1 {{'mw.clamp' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4xi32>'}}
  %0 = mw.clamp %x {min = 0.0, max = 1.0} : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @clamp_bounds(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mw.clamp' op requires attribute 'max'}}
  %0 = mw.clamp %x {min = 0.0} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Backward ops
//===----------------------------------------------------------------------===//

func.func @relu_grad_types(%x: tensor<4xf32>, %dy: tensor<4xbf16>) -> tensor<4xf32> {
  // expected-error@+1 {{'mw.relu_grad' op requires the same type for all operands and results}}
  %0 = "mw.relu_grad"(%x, %dy) : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_max_grad_axes(%x: tensor<4x8xf32>, %m: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.reduce_max_grad' op axis 3 is out of range for rank 2}}
  %0 = mw.reduce_max_grad %x, %m, %m axes = [3] : (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @reduce_max_grad_axes_order(%x: tensor<4x8xf32>, %m: tensor<f32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.reduce_max_grad' op axes must be strictly increasing, got [1, 0]}}
  %0 = mw.reduce_max_grad %x, %m, %m axes = [1, 0] : (tensor<4x8xf32>, tensor<f32>, tensor<f32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @reduce_max_grad_output(%x: tensor<4x8xf32>, %m: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.reduce_max_grad' op output type 'tensor<4xf32>' does not match the expected 'tensor<4x1xf32>'}}
  %0 = mw.reduce_max_grad %x, %m, %m axes = [1] {keepdims} : (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @reduce_max_grad_grad_output(%x: tensor<4x8xf32>, %m: tensor<4xf32>, %dm: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.reduce_max_grad' op grad_output type 'tensor<8xf32>' does not match the expected 'tensor<4xf32>'}}
  %0 = mw.reduce_max_grad %x, %m, %dm axes = [1] : (tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @reduce_max_grad_result(%x: tensor<4x8xf32>, %m: tensor<4xf32>) -> tensor<4x8xbf16> {
  // expected-error@+1 {{'mw.reduce_max_grad' op result type 'tensor<4x8xbf16>' differs from the input type 'tensor<4x8xf32>'}}
  %0 = mw.reduce_max_grad %x, %m, %m axes = [1] : (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}

// -----

func.func @layer_norm_grad_gamma(%x: tensor<4x8xf32>, %g: tensor<4xf32>, %s: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.layer_norm_grad' op gamma type 'tensor<4xf32>' does not match the expected 'tensor<8xf32>'}}
  %dx, %dg, %db = mw.layer_norm_grad %x, %g, %s, %s, %x
      : (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
  return %dx : tensor<4x8xf32>
}

// -----

func.func @layer_norm_grad_mean(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %m: tensor<8xf32>, %s: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.layer_norm_grad' op mean type 'tensor<8xf32>' does not match the expected 'tensor<4xf32>'}}
  %dx, %dg, %db = mw.layer_norm_grad %x, %g, %m, %s, %x
      : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %dx : tensor<4x8xf32>
}

// -----

func.func @layer_norm_grad_rstd(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %m: tensor<4xf32>, %s: tensor<4x1xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.layer_norm_grad' op rstd type 'tensor<4x1xf32>' does not match the expected 'tensor<4xf32>'}}
  %dx, %dg, %db = mw.layer_norm_grad %x, %g, %m, %s, %x
      : (tensor<4x8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4x1xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %dx : tensor<4x8xf32>
}

// -----

func.func @layer_norm_grad_grad_output(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %s: tensor<4xf32>, %dy: tensor<4x8xbf16>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.layer_norm_grad' op grad_output type 'tensor<4x8xbf16>' differs from the input type 'tensor<4x8xf32>'}}
  %dx, %dg, %db = mw.layer_norm_grad %x, %g, %s, %s, %dy
      : (tensor<4x8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x8xbf16>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %dx : tensor<4x8xf32>
}

// -----

func.func @layer_norm_grad_grad_input(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %s: tensor<4xf32>) -> tensor<8x4xf32> {
  // expected-error@+1 {{'mw.layer_norm_grad' op grad_input type 'tensor<8x4xf32>' differs from the input type 'tensor<4x8xf32>'}}
  %dx, %dg, %db = mw.layer_norm_grad %x, %g, %s, %s, %x
      : (tensor<4x8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x8xf32>) -> (tensor<8x4xf32>, tensor<8xf32>, tensor<8xf32>)
  return %dx : tensor<8x4xf32>
}

// -----

func.func @layer_norm_grad_grad_gamma(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %s: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.layer_norm_grad' op grad_gamma type 'tensor<4x8xf32>' differs from the gamma type 'tensor<8xf32>'}}
  %dx, %dg, %db = mw.layer_norm_grad %x, %g, %s, %s, %x
      : (tensor<4x8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>)
  return %dx : tensor<4x8xf32>
}

// -----

func.func @layer_norm_grad_grad_beta(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %s: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.layer_norm_grad' op grad_beta type 'tensor<8xf16>' differs from the gamma type 'tensor<8xf32>'}}
  %dx, %dg, %db = mw.layer_norm_grad %x, %g, %s, %s, %x
      : (tensor<4x8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf16>)
  return %dx : tensor<4x8xf32>
}

// -----

func.func @rms_norm_grad_gamma(%x: tensor<4x8xf32>, %g: tensor<8xf16>, %s: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.rms_norm_grad' op gamma type 'tensor<8xf16>' does not match the expected 'tensor<8xf32>'}}
  %dx, %dg = mw.rms_norm_grad %x, %g, %s, %x
      : (tensor<4x8xf32>, tensor<8xf16>, tensor<4xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf16>)
  return %dx : tensor<4x8xf32>
}

// -----

func.func @rms_norm_grad_rstd(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %s: tensor<f32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.rms_norm_grad' op rstd type 'tensor<f32>' does not match the expected 'tensor<4xf32>'}}
  %dx, %dg = mw.rms_norm_grad %x, %g, %s, %x
      : (tensor<4x8xf32>, tensor<8xf32>, tensor<f32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>)
  return %dx : tensor<4x8xf32>
}

// -----

func.func @rms_norm_grad_grad_output(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %s: tensor<4xf32>, %dy: tensor<8x4xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.rms_norm_grad' op grad_output type 'tensor<8x4xf32>' differs from the input type 'tensor<4x8xf32>'}}
  %dx, %dg = mw.rms_norm_grad %x, %g, %s, %dy
      : (tensor<4x8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<8x4xf32>) -> (tensor<4x8xf32>, tensor<8xf32>)
  return %dx : tensor<4x8xf32>
}

// -----

func.func @rms_norm_grad_grad_input(%x: tensor<4x8xbf16>, %g: tensor<8xbf16>, %s: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'mw.rms_norm_grad' op grad_input type 'tensor<4x8xf32>' differs from the input type 'tensor<4x8xbf16>'}}
  %dx, %dg = mw.rms_norm_grad %x, %g, %s, %x
      : (tensor<4x8xbf16>, tensor<8xbf16>, tensor<4xf32>, tensor<4x8xbf16>) -> (tensor<4x8xf32>, tensor<8xbf16>)
  return %dx : tensor<4x8xf32>
}

// -----

func.func @rms_norm_grad_grad_gamma(%x: tensor<4x8xbf16>, %g: tensor<8xbf16>, %s: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'mw.rms_norm_grad' op grad_gamma type 'tensor<8xf32>' differs from the gamma type 'tensor<8xbf16>'}}
  %dx, %dg = mw.rms_norm_grad %x, %g, %s, %x
      : (tensor<4x8xbf16>, tensor<8xbf16>, tensor<4xf32>, tensor<4x8xbf16>) -> (tensor<4x8xbf16>, tensor<8xf32>)
  return %dg : tensor<8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

func.func @adamw_grad_shape(%p: tensor<64xf32>, %g: tensor<32xf32>, %t: tensor<i64>) -> tensor<64xf32> {
  // expected-error@+1 {{'mw.adamw' op grad shape [32] differs from param shape [64]}}
  %p1, %m1, %v1 = mw.adamw %p, %g, %p, %p, %t
      : (tensor<64xf32>, tensor<32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<i64>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  return %p1 : tensor<64xf32>
}

// -----

func.func @adamw_exp_avg_type(%p: tensor<64xf32>, %m: tensor<64xbf16>, %t: tensor<i64>) -> tensor<64xf32> {
  // expected-error@+1 {{'mw.adamw' op exp_avg type 'tensor<64xbf16>' differs from the param type 'tensor<64xf32>'}}
  %p1, %m1, %v1 = mw.adamw %p, %p, %m, %p, %t
      : (tensor<64xf32>, tensor<64xf32>, tensor<64xbf16>, tensor<64xf32>, tensor<i64>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  return %p1 : tensor<64xf32>
}

// -----

func.func @adamw_exp_avg_sq_type(%p: tensor<64xf32>, %v: tensor<8x8xf32>, %t: tensor<i64>) -> tensor<64xf32> {
  // expected-error@+1 {{'mw.adamw' op exp_avg_sq type 'tensor<8x8xf32>' differs from the param type 'tensor<64xf32>'}}
  %p1, %m1, %v1 = mw.adamw %p, %p, %p, %v, %t
      : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<8x8xf32>, tensor<i64>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  return %p1 : tensor<64xf32>
}

// -----

func.func @adamw_result_type(%p: tensor<64xf32>, %t: tensor<i64>) -> tensor<64xf32> {
  // expected-error@+1 {{'mw.adamw' op result type 'tensor<64xbf16>' differs from the param type 'tensor<64xf32>'}}
  %p1, %m1, %v1 = mw.adamw %p, %p, %p, %p, %t
      : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<i64>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xbf16>)
  return %p1 : tensor<64xf32>
}

// -----

func.func @adamw_negative_lr(%p: tensor<64xf32>, %t: tensor<i64>) -> tensor<64xf32> {
  // expected-error@+1 {{'mw.adamw' op lr must be finite and non-negative, got -1.000000e-03}}
  %p1, %m1, %v1 = mw.adamw %p, %p, %p, %p, %t {lr = -1.0e-03 : f64}
      : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<i64>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  return %p1 : tensor<64xf32>
}

// -----

func.func @adamw_infinite_lr(%p: tensor<64xf32>, %t: tensor<i64>) -> tensor<64xf32> {
  // expected-error@+1 {{'mw.adamw' op lr must be finite and non-negative, got INF}}
  %p1, %m1, %v1 = mw.adamw %p, %p, %p, %p, %t {lr = 0x7FF0000000000000 : f64}
      : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<i64>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  return %p1 : tensor<64xf32>
}

// -----

func.func @adamw_beta1_one(%p: tensor<64xf32>, %t: tensor<i64>) -> tensor<64xf32> {
  // expected-error@+1 {{'mw.adamw' op beta1 must lie in [0, 1), got 1.000000e+00}}
  %p1, %m1, %v1 = mw.adamw %p, %p, %p, %p, %t {beta1 = 1.0 : f64}
      : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<i64>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  return %p1 : tensor<64xf32>
}

// -----

func.func @adamw_beta2_negative(%p: tensor<64xf32>, %t: tensor<i64>) -> tensor<64xf32> {
  // expected-error@+1 {{'mw.adamw' op beta2 must lie in [0, 1), got -5.000000e-01}}
  %p1, %m1, %v1 = mw.adamw %p, %p, %p, %p, %t {beta2 = -0.5 : f64}
      : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<i64>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  return %p1 : tensor<64xf32>
}

// -----

func.func @adamw_beta2_above_one(%p: tensor<64xf32>, %t: tensor<i64>) -> tensor<64xf32> {
  // expected-error@+1 {{'mw.adamw' op beta2 must lie in [0, 1), got 1.500000e+00}}
  %p1, %m1, %v1 = mw.adamw %p, %p, %p, %p, %t {beta2 = 1.5 : f64}
      : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<i64>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  return %p1 : tensor<64xf32>
}

// -----

func.func @adamw_negative_eps(%p: tensor<64xf32>, %t: tensor<i64>) -> tensor<64xf32> {
  // expected-error@+1 {{'mw.adamw' op eps must be finite and non-negative, got -1.000000e-08}}
  %p1, %m1, %v1 = mw.adamw %p, %p, %p, %p, %t {eps = -1.0e-08 : f64}
      : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<i64>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  return %p1 : tensor<64xf32>
}

// -----

func.func @adamw_negative_weight_decay(%p: tensor<64xf32>, %t: tensor<i64>) -> tensor<64xf32> {
  // expected-error@+1 {{'mw.adamw' op weight_decay must be finite and non-negative, got -5.000000e-01}}
  %p1, %m1, %v1 = mw.adamw %p, %p, %p, %p, %t {weight_decay = -0.5 : f64}
      : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<i64>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  return %p1 : tensor<64xf32>
}

// -----

func.func @adamw_step_not_scalar(%p: tensor<64xf32>, %t: tensor<1xi64>) -> tensor<64xf32> {
  // expected-error@+1 {{'mw.adamw' op operand #4 must be 0D tensor of 32-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<1xi64>'}}
  %p1, %m1, %v1 = mw.adamw %p, %p, %p, %p, %t
      : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<1xi64>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  return %p1 : tensor<64xf32>
}

// -----

func.func @sgd_grad_shape(%p: tensor<64xf32>, %g: tensor<8x8xf32>) -> tensor<64xf32> {
  // expected-error@+1 {{'mw.sgd' op grad shape [8, 8] differs from param shape [64]}}
  %0 = mw.sgd %p, %g {lr = 0.1 : f64} : (tensor<64xf32>, tensor<8x8xf32>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

func.func @sgd_new_param_type(%p: tensor<64xf32>) -> tensor<64xbf16> {
  // expected-error@+1 {{'mw.sgd' op new_param type 'tensor<64xbf16>' differs from the param type 'tensor<64xf32>'}}
  %0 = mw.sgd %p, %p {lr = 0.1 : f64} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xbf16>
  return %0 : tensor<64xbf16>
}

// -----

func.func @sgd_missing_lr(%p: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error@+1 {{'mw.sgd' op requires attribute 'lr'}}
  %0 = mw.sgd %p, %p : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

func.func @sgd_negative_lr(%p: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error@+1 {{'mw.sgd' op lr must be finite and non-negative, got -1.000000e-01}}
  %0 = mw.sgd %p, %p {lr = -0.1 : f64} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

func.func @sgd_negative_momentum(%p: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  // expected-error@+1 {{'mw.sgd' op momentum must be finite and non-negative, got -9.000000e-01}}
  %0, %1 = mw.sgd %p, %p, %p {lr = 0.1 : f64, momentum = -0.9 : f64} : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>)
  return %0, %1 : tensor<64xf32>, tensor<64xf32>
}

// -----

func.func @sgd_negative_dampening(%p: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  // expected-error@+1 {{'mw.sgd' op dampening must be finite and non-negative, got -5.000000e-01}}
  %0, %1 = mw.sgd %p, %p, %p {lr = 0.1 : f64, momentum = 0.9 : f64, dampening = -0.5 : f64} : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>)
  return %0, %1 : tensor<64xf32>, tensor<64xf32>
}

// -----

func.func @sgd_negative_weight_decay(%p: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error@+1 {{'mw.sgd' op weight_decay must be finite and non-negative, got -1.000000e-04}}
  %0 = mw.sgd %p, %p {lr = 0.1 : f64, weight_decay = -1.0e-04 : f64} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

func.func @sgd_nesterov_without_momentum(%p: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error@+1 {{'mw.sgd' op nesterov requires a non-zero momentum and zero dampening}}
  %0 = mw.sgd %p, %p {lr = 0.1 : f64, nesterov} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

func.func @sgd_nesterov_with_dampening(%p: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  // expected-error@+1 {{'mw.sgd' op nesterov requires a non-zero momentum and zero dampening}}
  %0, %1 = mw.sgd %p, %p, %p {lr = 0.1 : f64, momentum = 0.9 : f64, dampening = 0.1 : f64, nesterov} : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>)
  return %0, %1 : tensor<64xf32>, tensor<64xf32>
}

// -----

func.func @sgd_momentum_without_buffer(%p: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error@+1 {{'mw.sgd' op momentum 9.000000e-01 requires a momentum_buffer operand}}
  %0 = mw.sgd %p, %p {lr = 0.1 : f64, momentum = 0.9 : f64} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

func.func @sgd_buffer_without_momentum(%p: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  // expected-error@+1 {{'mw.sgd' op has a momentum_buffer operand but momentum is 0}}
  %0, %1 = mw.sgd %p, %p, %p {lr = 0.1 : f64} : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>)
  return %0, %1 : tensor<64xf32>, tensor<64xf32>
}

// -----

func.func @sgd_buffer_without_new_buffer(%p: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error@+1 {{'mw.sgd' op needs a new_momentum_buffer result exactly when it has a momentum_buffer operand}}
  %0 = mw.sgd %p, %p, %p {lr = 0.1 : f64, momentum = 0.9 : f64} : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

func.func @sgd_new_buffer_without_buffer(%p: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  // expected-error@+1 {{'mw.sgd' op needs a new_momentum_buffer result exactly when it has a momentum_buffer operand}}
  %0, %1 = mw.sgd %p, %p {lr = 0.1 : f64} : (tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>)
  return %0, %1 : tensor<64xf32>, tensor<64xf32>
}

// -----

func.func @sgd_buffer_type(%p: tensor<64xf32>, %b: tensor<64xbf16>) -> (tensor<64xf32>, tensor<64xbf16>) {
  // expected-error@+1 {{'mw.sgd' op momentum_buffer type 'tensor<64xbf16>' differs from the param type 'tensor<64xf32>'}}
  %0, %1 = mw.sgd %p, %p, %b {lr = 0.1 : f64, momentum = 0.9 : f64} : (tensor<64xf32>, tensor<64xf32>, tensor<64xbf16>) -> (tensor<64xf32>, tensor<64xbf16>)
  return %0, %1 : tensor<64xf32>, tensor<64xbf16>
}

// -----

func.func @sgd_new_buffer_type(%p: tensor<64xf32>) -> (tensor<64xf32>, tensor<32xf32>) {
  // expected-error@+1 {{'mw.sgd' op new_momentum_buffer type 'tensor<32xf32>' differs from the param type 'tensor<64xf32>'}}
  %0, %1 = mw.sgd %p, %p, %p {lr = 0.1 : f64, momentum = 0.9 : f64} : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<32xf32>)
  return %0, %1 : tensor<64xf32>, tensor<32xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Mixed precision: overflow checks and dynamic loss scaling
//===----------------------------------------------------------------------===//

func.func @found_inf_no_inputs() -> tensor<f32> {
  // expected-error@+1 {{'mw.found_inf' op needs at least one input}}
  %0 = mw.found_inf : () -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @found_inf_integer_input(%x: tensor<4xf32>, %i: tensor<4xi32>) -> tensor<f32> {
  // expected-error@+1 {{'mw.found_inf' op operand #1 must be variadic of ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4xi32>'}}
  %0 = mw.found_inf %x, %i : (tensor<4xf32>, tensor<4xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @found_inf_result_rank(%x: tensor<4xf32>) -> tensor<1xf32> {
  // expected-error@+1 {{'mw.found_inf' op result #0 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  %0 = mw.found_inf %x : (tensor<4xf32>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

func.func @select_false_value_type(%c: tensor<f32>, %a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error@+1 {{'mw.select' op false_value type 'tensor<4xf16>' differs from the true_value type 'tensor<4xf32>'}}
  %0 = mw.select %c, %a, %b : (tensor<f32>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @select_result_type(%c: tensor<f32>, %a: tensor<4xi64>) -> tensor<2x2xi64> {
  // expected-error@+1 {{'mw.select' op result type 'tensor<2x2xi64>' differs from the true_value type 'tensor<4xi64>'}}
  %0 = mw.select %c, %a, %a : (tensor<f32>, tensor<4xi64>, tensor<4xi64>) -> tensor<2x2xi64>
  return %0 : tensor<2x2xi64>
}

// -----

func.func @select_condition_rank(%c: tensor<1xf32>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mw.select' op operand #0 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  %0 = mw.select %c, %a, %a : (tensor<1xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @loss_scale_window_zero(%o: tensor<f32>, %s: tensor<f32>, %n: tensor<i64>) -> tensor<f32> {
  // expected-error@+1 {{'mw.loss_scale_update' op window must be >= 1, got 0}}
  %s1, %n1, %l1, %h1 = mw.loss_scale_update %o, %s, %n, %n, %n {window = 0 : i64}
      : (tensor<f32>, tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>) -> (tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>)
  return %s1 : tensor<f32>
}

// -----

func.func @loss_scale_window_negative(%o: tensor<f32>, %s: tensor<f32>, %n: tensor<i64>) -> tensor<f32> {
  // expected-error@+1 {{'mw.loss_scale_update' op window must be >= 1, got -5}}
  %s1, %n1, %l1, %h1 = mw.loss_scale_update %o, %s, %n, %n, %n {window = -5 : i64}
      : (tensor<f32>, tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>) -> (tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>)
  return %s1 : tensor<f32>
}

// -----

func.func @loss_scale_hysteresis_zero(%o: tensor<f32>, %s: tensor<f32>, %n: tensor<i64>) -> tensor<f32> {
  // expected-error@+1 {{'mw.loss_scale_update' op hysteresis must be >= 1, got 0}}
  %s1, %n1, %l1, %h1 = mw.loss_scale_update %o, %s, %n, %n, %n {hysteresis = 0 : i64}
      : (tensor<f32>, tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>) -> (tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>)
  return %s1 : tensor<f32>
}

// -----

func.func @loss_scale_min_scale_zero(%o: tensor<f32>, %s: tensor<f32>, %n: tensor<i64>) -> tensor<f32> {
  // expected-error@+1 {{'mw.loss_scale_update' op min_scale must be finite and positive, got 0.000000e+00}}
  %s1, %n1, %l1, %h1 = mw.loss_scale_update %o, %s, %n, %n, %n {min_scale = 0.0 : f64}
      : (tensor<f32>, tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>) -> (tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>)
  return %s1 : tensor<f32>
}

// -----

func.func @loss_scale_min_scale_inf(%o: tensor<f32>, %s: tensor<f32>, %n: tensor<i64>) -> tensor<f32> {
  // expected-error@+1 {{'mw.loss_scale_update' op min_scale must be finite and positive, got INF}}
  %s1, %n1, %l1, %h1 = mw.loss_scale_update %o, %s, %n, %n, %n {min_scale = 0x7FF0000000000000 : f64}
      : (tensor<f32>, tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>) -> (tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>)
  return %s1 : tensor<f32>
}

// -----

func.func @loss_scale_factor_one(%o: tensor<f32>, %s: tensor<f32>, %n: tensor<i64>) -> tensor<f32> {
  // expected-error@+1 {{'mw.loss_scale_update' op factor must be finite and greater than 1, got 1.000000e+00}}
  %s1, %n1, %l1, %h1 = mw.loss_scale_update %o, %s, %n, %n, %n {factor = 1.0 : f64}
      : (tensor<f32>, tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>) -> (tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>)
  return %s1 : tensor<f32>
}

// -----

func.func @loss_scale_factor_inf(%o: tensor<f32>, %s: tensor<f32>, %n: tensor<i64>) -> tensor<f32> {
  // expected-error@+1 {{'mw.loss_scale_update' op factor must be finite and greater than 1, got INF}}
  %s1, %n1, %l1, %h1 = mw.loss_scale_update %o, %s, %n, %n, %n {factor = 0x7FF0000000000000 : f64}
      : (tensor<f32>, tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>) -> (tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>)
  return %s1 : tensor<f32>
}

// -----

func.func @loss_scale_factor_nan(%o: tensor<f32>, %s: tensor<f32>, %n: tensor<i64>) -> tensor<f32> {
  // expected-error@+1 {{'mw.loss_scale_update' op factor must be finite and greater than 1, got nan}}
  %s1, %n1, %l1, %h1 = mw.loss_scale_update %o, %s, %n, %n, %n {factor = 0x7FF8000000000000 : f64}
      : (tensor<f32>, tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>) -> (tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>)
  return %s1 : tensor<f32>
}

// -----

func.func @loss_scale_i32_counter(%o: tensor<f32>, %s: tensor<f32>, %n: tensor<i64>, %i: tensor<i32>) -> tensor<f32> {
  // expected-error@+1 {{'mw.loss_scale_update' op operand #2 must be 0D tensor of 64-bit signless integer values, but got 'tensor<i32>'}}
  %s1, %n1, %l1, %h1 = mw.loss_scale_update %o, %s, %i, %n, %n
      : (tensor<f32>, tensor<f32>, tensor<i32>, tensor<i64>, tensor<i64>) -> (tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>)
  return %s1 : tensor<f32>
}

// -----

func.func @loss_scale_f16_scale(%o: tensor<f32>, %h: tensor<f16>, %n: tensor<i64>) -> tensor<f16> {
  // expected-error@+1 {{'mw.loss_scale_update' op operand #1 must be 0D tensor of 32-bit float values, but got 'tensor<f16>'}}
  %s1, %n1, %l1, %h1 = mw.loss_scale_update %o, %h, %n, %n, %n
      : (tensor<f32>, tensor<f16>, tensor<i64>, tensor<i64>, tensor<i64>) -> (tensor<f16>, tensor<i64>, tensor<i64>, tensor<i64>)
  return %s1 : tensor<f16>
}

// -----

// Hostile attribute values must not overflow the bounds check.
func.func @slice_stride_overflow(%x: tensor<4xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'mw.slice' op slice along dimension 0 (offset 0, size 3, stride 9223372036854775807) reads past its size 4}}
  %0 = mw.slice %x offsets = [0] sizes = [3] strides = [9223372036854775807] : tensor<4xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @slice_offset_overflow(%x: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'mw.slice' op slice along dimension 0 (offset 9223372036854775807, size 2, stride 1) reads past its size 4}}
  %0 = mw.slice %x offsets = [9223372036854775807] sizes = [2] : tensor<4xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @splat_out_of_range_for_i32() -> tensor<2xi32> {
  // expected-error@+1 {{'mw.splat' op value 3.000000e+09 does not fit in 'i32'}}
  %0 = mw.splat 3.0e+09 : tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @splat_out_of_range_for_i64() -> tensor<2xi64> {
  // expected-error@+1 {{'mw.splat' op value 1.000000e+20 does not fit in 'i64'}}
  %0 = mw.splat 1.0e+20 : tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @wait_not_collective(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = mw.exp %x : tensor<4xf32>
  // expected-error@+1 {{'mw.wait' op waits for 'mw.exp', which is not an asynchronous collective (a mesh op) or an mw.fetch}}
  %w = mw.wait %e : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

mesh.mesh @dp(shape = 2)
func.func @wait_second_use(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r = mesh.all_reduce %x on @dp mesh_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  // expected-error@+1 {{'mw.wait' op must be the only use of its collective's result, so that nothing reads it before it completes}}
  %w = mw.wait %r : tensor<4xf32>
  return %w, %r : tensor<4xf32>, tensor<4xf32>
}

// -----

mesh.mesh @dp(shape = 2)
func.func @wait_reading_other(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %r = mesh.all_reduce %x on @dp mesh_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  // expected-error@+1 {{'mw.wait' op reads a value the collective does not: 'reading' keeps the collective's operands live until it completes}}
  %w = mw.wait %r reading %y : tensor<4xf32>, tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

func.func @fetch_not_offloaded(%w: tensor<4xf32> {mw.name = "h.0.w", mw.role = #mw.role<param>}) -> tensor<4xf32> {
  // expected-error@+1 {{'mw.fetch' op fetches 'h.0.w', which is not a function argument marked 'mw.offload' (an offloaded parameter in host memory or a weights file)}}
  %f = mw.fetch %w {layer = 0 : i64} : tensor<4xf32>
  %d = mw.wait %f : tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

func.func @fetch_not_argument(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = mw.exp %x : tensor<4xf32>
  // expected-error@+1 {{'mw.fetch' op fetches the result of 'mw.exp', which is not a function argument marked 'mw.offload'}}
  %f = mw.fetch %e {layer = 0 : i64} : tensor<4xf32>
  %d = mw.wait %f : tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

func.func @fetch_read_without_wait(%w: tensor<4xf32> {mw.role = #mw.role<param>, mw.offload = "cpu"}) -> tensor<4xf32> {
  // expected-error@+1 {{'mw.fetch' op result is read by 'mw.exp': only an mw.wait may use a fetch, so that nothing reads the copy before it completes}}
  %f = mw.fetch %w {layer = 0 : i64} : tensor<4xf32>
  %e = mw.exp %f : tensor<4xf32>
  return %e : tensor<4xf32>
}

// -----

func.func @fetch_negative_layer(%w: tensor<4xf32> {mw.role = #mw.role<param>, mw.offload = "nvme"}) -> tensor<4xf32> {
  // expected-error@+1 {{'mw.fetch' op layer must be >= 0, got -2}}
  %f = mw.fetch %w {layer = -2 : i64} : tensor<4xf32>
  %d = mw.wait %f : tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

func.func @fetch_type_mismatch(%w: tensor<4xf32> {mw.role = #mw.role<param>, mw.offload = "cpu"}) -> tensor<4xf16> {
  // expected-error@+1 {{'mw.fetch' op failed to verify that all of {input, result} have same type}}
  %f = "mw.fetch"(%w) {layer = 0 : i64} : (tensor<4xf32>) -> tensor<4xf16>
  return %f : tensor<4xf16>
}

// -----

func.func @fetch_waited_twice(%w: tensor<4xf32> {mw.role = #mw.role<param>, mw.offload = "cpu"}) -> (tensor<4xf32>, tensor<4xf32>) {
  %f = mw.fetch %w {layer = 0 : i64} : tensor<4xf32>
  // expected-error@+1 {{'mw.wait' op must be the only use of its fetch's result, so that nothing reads it before it completes}}
  %a = mw.wait %f : tensor<4xf32>
  %b = mw.wait %f : tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// expected-error@+1 {{'func.func' op 'mw.offload' on argument #0 must be "cpu" or "nvme" on a parameter argument, got "gpu"}}
func.func @offload_unknown_place(%w: tensor<4xf32> {mw.role = #mw.role<param>, mw.offload = "gpu"}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'mw.offload' on argument #0, which is not a parameter (mw.role = #mw.role<param>): only weights are offloaded}}
func.func @offload_not_param(%x: tensor<4xf32> {mw.role = #mw.role<input>, mw.offload = "cpu"}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'mw.offload' on result #0 must be "cpu" or "nvme" on a parameter argument, got "cpu"}}
func.func @offload_on_result(%x: tensor<4xf32>) -> (tensor<4xf32> {mw.offload = "cpu"}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error@+1 {{'func.func' op argument #0 is offloaded ('mw.offload') but read by 'mw.exp': only mw.fetch may read it}}
func.func @offloaded_read_directly(%w: tensor<4xf32> {mw.role = #mw.role<param>, mw.offload = "cpu"}) -> tensor<4xf32> {
  %e = mw.exp %w : tensor<4xf32>
  return %e : tensor<4xf32>
}
