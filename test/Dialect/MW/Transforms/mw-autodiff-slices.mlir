// RUN: mw-opt %s -split-input-file --mw-autodiff="optimizer=sgd lr=1" | FileCheck %s
// The slices' gradients still verify and round-trip.
// RUN: mw-opt %s -split-input-file --mw-autodiff="optimizer=sgd lr=1" | mw-opt -split-input-file | FileCheck %s

// Slices that tile their value (the query, key and value of a fused
// projection): the value's gradient is one concat of the slices' gradients,
// not a concat with zeros per slice and adds.
// CHECK-LABEL: func.func @train_step(
// CHECK:         %[[QKV:.*]] = mw.matmul %{{.*}} : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>
// CHECK-NOT:     mw.splat 0.000000e+00 : tensor<4x
// CHECK-NOT:     mw.add {{.*}} tensor<4x12xf32>
// CHECK:         %[[G:.*]] = mw.concat %[[DQ:[a-z0-9]+]], %[[DK:[a-z0-9]+]], %[[DV:[a-z0-9]+]] axis = 1 : {{.*}} -> tensor<4x12xf32>
// CHECK-NOT:     mw.add {{.*}} tensor<4x12xf32>
// CHECK:         mw.matmul %{{.*}}, %[[G]] {{.*}} -> tensor<8x12xf32>
func.func @forward(%w: tensor<8x12xf32> {mw.role = #mw.role<param>, mw.name = "qkv.weight"},
                   %x: tensor<4x8xf32> {mw.role = #mw.role<input>, mw.name = "x"})
    -> (tensor<f32> {mw.role = #mw.role<output>, mw.name = "loss"}) {
  %qkv = mw.matmul %x, %w : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>
  %q = mw.slice %qkv offsets = [0, 0] sizes = [4, 4] : tensor<4x12xf32> -> tensor<4x4xf32>
  %k = mw.slice %qkv offsets = [0, 4] sizes = [4, 4] : tensor<4x12xf32> -> tensor<4x4xf32>
  %v = mw.slice %qkv offsets = [0, 8] sizes = [4, 4] : tensor<4x12xf32> -> tensor<4x4xf32>
  %qk = mw.mul %q, %k : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = mw.tanh %v : tensor<4x4xf32>
  %s = mw.add %qk, %e : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = mw.reduce_sum %s axes = [0, 1] : tensor<4x4xf32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Slices that leave a gap: zeros fill it, in the same one concat.
// CHECK-LABEL: func.func @train_step(
// CHECK:         %[[Z:.*]] = mw.splat 0.000000e+00 : tensor<4x4xf32>
// CHECK:         %[[G:.*]] = mw.concat %{{.*}}, %[[Z]], %{{.*}} axis = 1 : {{.*}} -> tensor<4x12xf32>
// CHECK-NOT:     mw.add {{.*}} tensor<4x12xf32>
// CHECK:         mw.matmul %{{.*}}, %[[G]] {{.*}} -> tensor<8x12xf32>
func.func @forward(%w: tensor<8x12xf32> {mw.role = #mw.role<param>, mw.name = "qkv.weight"},
                   %x: tensor<4x8xf32> {mw.role = #mw.role<input>, mw.name = "x"})
    -> (tensor<f32> {mw.role = #mw.role<output>, mw.name = "loss"}) {
  %qkv = mw.matmul %x, %w : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>
  %q = mw.slice %qkv offsets = [0, 0] sizes = [4, 4] : tensor<4x12xf32> -> tensor<4x4xf32>
  %v = mw.slice %qkv offsets = [0, 8] sizes = [4, 4] : tensor<4x12xf32> -> tensor<4x4xf32>
  %s = mw.mul %q, %v : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = mw.reduce_sum %s axes = [0, 1] : tensor<4x4xf32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Overlapping slices: their gradients are a real sum, so the adds stay.
// CHECK-LABEL: func.func @train_step(
// CHECK:         mw.concat
// CHECK:         mw.concat
// CHECK:         mw.add {{.*}} -> tensor<4x12xf32>
func.func @forward(%w: tensor<8x12xf32> {mw.role = #mw.role<param>, mw.name = "qkv.weight"},
                   %x: tensor<4x8xf32> {mw.role = #mw.role<input>, mw.name = "x"})
    -> (tensor<f32> {mw.role = #mw.role<output>, mw.name = "loss"}) {
  %qkv = mw.matmul %x, %w : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>
  %a = mw.slice %qkv offsets = [0, 0] sizes = [4, 8] : tensor<4x12xf32> -> tensor<4x8xf32>
  %b = mw.slice %qkv offsets = [0, 4] sizes = [4, 8] : tensor<4x12xf32> -> tensor<4x8xf32>
  %s = mw.mul %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = mw.reduce_sum %s axes = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %r : tensor<f32>
}
