// mw.fusion parses, prints and round-trips; mw-eval evaluates its body op by
// op (the value test), and --mw-form-kernels turns it into one mw.kernel.
// RUN: mw-opt %s | mw-opt | FileCheck %s
// The kind is a bare keyword in mw.fusion's syntax and `#mw.fusion_kind<row>`
// on its own: the generic form and bytecode (where it is a text entry) read
// back (they printed `#mw.fusion_kindrow`, which did not parse).
// RUN: mw-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: mw-opt %s --mlir-print-op-generic | mw-opt | FileCheck %s
// RUN: mw-opt %s --emit-bytecode | mw-opt | FileCheck %s
// GENERIC: "mw.fusion"(%{{.*}}, %{{.*}}) <{kind = #mw.fusion_kind<row>}>
// RUN: mw-eval %s --entry values --print | FileCheck %s --check-prefix=EVAL
// RUN: mw-opt %s --mw-bufferize | mw-eval - --entry values --print | FileCheck %s --check-prefix=EVAL

// CHECK-LABEL: func.func @values
// CHECK:       %[[F:.*]]:2 = mw.fusion row ins(%{{.*}}, %{{.*}} : tensor<2x2xf32>, tensor<2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
// CHECK-NEXT:  ^bb0(%[[X:.*]]: tensor<2x2xf32>, %[[B:.*]]: tensor<2xf32>):
// CHECK-NEXT:    %[[S:.*]] = mw.add %[[X]], %[[B]]
// CHECK-NEXT:    %[[P:.*]] = mw.softmax %[[S]] axis = 1
// CHECK-NEXT:    mw.yield %[[S]], %[[P]]
// CHECK-NEXT:  }
// CHECK:       return %[[F]]#0, %[[F]]#1

// EVAL: result0: f32 [2, 2] {{.*}} values=[1, 1, 1, 1]
// EVAL: result1: f32 [2, 2] {{.*}} values=[0.5, 0.5, 0.5, 0.5]
func.func @values() -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %x = mw.splat 0.5 : tensor<2x2xf32>
  %b = mw.splat 0.5 : tensor<2xf32>
  %r:2 = mw.fusion row ins(%x, %b : tensor<2x2xf32>, tensor<2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  ^bb0(%a: tensor<2x2xf32>, %c: tensor<2xf32>):
    %s = mw.add %a, %c : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
    %p = mw.softmax %s axis = 1 : tensor<2x2xf32>
    mw.yield %s, %p : tensor<2x2xf32>, tensor<2x2xf32>
  }
  return %r#0, %r#1 : tensor<2x2xf32>, tensor<2x2xf32>
}
