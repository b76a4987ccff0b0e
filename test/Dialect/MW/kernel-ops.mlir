// RUN: mw-opt %s | mw-opt | FileCheck %s
// mw.kernel in both forms round-trips.

// CHECK-LABEL: func.func @tensor_form
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[R:.*]] = mw.kernel ins(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>) outs(%[[E]] : tensor<4xf32>) -> tensor<4xf32> {
// CHECK: ^bb0(%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>):
// CHECK:   %[[S:.*]] = mw.add %[[X]], %[[Y]]
// CHECK:   mw.yield %[[S]] : tensor<4xf32>
func.func @tensor_form(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = mw.kernel ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    %s = mw.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    mw.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @memref_form
// CHECK: mw.kernel ins(%{{.*}} : memref<2x3xbf16>) outs(%{{.*}}, %{{.*}} : memref<2x3xbf16>, memref<2xf32>) {{{$}}
func.func @memref_form(%a: memref<2x3xbf16>, %o: memref<2x3xbf16>, %m: memref<2xf32>) {
  mw.kernel ins(%a : memref<2x3xbf16>) outs(%o, %m : memref<2x3xbf16>, memref<2xf32>) {
  ^bb0(%x: tensor<2x3xbf16>):
    %n = mw.neg %x : tensor<2x3xbf16>
    %c = mw.cast %x : tensor<2x3xbf16> to tensor<2x3xf32>
    %s = mw.reduce_sum %c axes = [1] : tensor<2x3xf32> -> tensor<2xf32>
    mw.yield %n, %s : tensor<2x3xbf16>, tensor<2xf32>
  }
  return
}

// A kernel without inputs (a constant).
// CHECK-LABEL: func.func @no_inputs
// CHECK: mw.kernel outs(%{{.*}} : tensor<2xf32>) -> tensor<2xf32>
func.func @no_inputs() -> tensor<2xf32> {
  %e = tensor.empty() : tensor<2xf32>
  %r = mw.kernel outs(%e : tensor<2xf32>) -> tensor<2xf32> {
    %c = mw.splat 1.5 : tensor<2xf32>
    mw.yield %c : tensor<2xf32>
  }
  return %r : tensor<2xf32>
}
