// MLP: Linear(+bias) layers `layers.N.weight` [in, out] (x @ W + b) with
// erf-GELU between them (none after the last), cross-entropy over classes.
//
// RUN: mw-models mlp --preset mlp-tiny -o %t
// RUN: FileCheck %s --input-file %t
// RUN: mw-opt %t -mlir-print-debuginfo -o %t.opt
// RUN: grep -v '^//' %t > %t.body
// RUN: grep -v '^$' %t.opt | diff %t.body -

// CHECK:      //   mw-models mlp --preset mlp-tiny
// CHECK-NEXT: // mlp (preset mlp-tiny): layers=3 hidden=64 in_features=32 classes=10 batch=4 dtype=f32
// CHECK-NEXT: // parameters: 6922
// CHECK:      func.func @forward(
// CHECK-SAME:   %arg0: tensor<32x64xf32> {mw.name = "layers.0.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg1: tensor<64xf32> {mw.name = "layers.0.bias", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg2: tensor<64x64xf32> {mw.name = "layers.1.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg3: tensor<64xf32> {mw.name = "layers.1.bias", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg4: tensor<64x10xf32> {mw.name = "layers.2.weight", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg5: tensor<10xf32> {mw.name = "layers.2.bias", mw.role = #mw.role<param>}
// CHECK-SAME:   %arg6: tensor<4x32xf32> {mw.name = "x", mw.role = #mw.role<input>}
// CHECK-SAME:   %arg7: tensor<4xi32> {mw.name = "labels", mw.role = #mw.role<label>}
// CHECK-SAME:   -> (tensor<f32> {mw.name = "loss", mw.role = #mw.role<output>})
// CHECK-NEXT: %[[M0:.*]] = mw.matmul %arg6, %arg0 {mw.layer = "{{[^"]+}}"} : (tensor<4x32xf32>, tensor<32x64xf32>) -> tensor<4x64xf32> loc(#[[L0:loc[0-9]*]])
// CHECK-NEXT: %[[A0:.*]] = mw.add %[[M0]], %arg1
// CHECK-NEXT: %[[G0:.*]] = mw.gelu %[[A0]] {mw.layer = "{{[^"]+}}"} : tensor<4x64xf32>
// CHECK-NEXT: %[[M1:.*]] = mw.matmul %[[G0]], %arg2 {mw.layer = "{{[^"]+}}"} : {{.*}} loc(#[[L1:loc[0-9]*]])
// CHECK-NEXT: %[[A1:.*]] = mw.add %[[M1]], %arg3
// CHECK-NEXT: %[[G1:.*]] = mw.gelu %[[A1]]
// CHECK-NEXT: %[[M2:.*]] = mw.matmul %[[G1]], %arg4 {mw.layer = "{{[^"]+}}"} : (tensor<4x64xf32>, tensor<64x10xf32>) -> tensor<4x10xf32> loc(#[[L2:loc[0-9]*]])
// CHECK-NEXT: %[[LOGITS:.*]] = mw.add %[[M2]], %arg5
// CHECK-NEXT: %[[LOSS:.*]] = mw.cross_entropy %[[LOGITS]], %arg7 {mw.layer = "{{[^"]+}}"} : (tensor<4x10xf32>, tensor<4xi32>) -> tensor<f32> loc(#[[LOSSLOC:loc[0-9]*]])
// CHECK-NEXT: return %[[LOSS]]
// CHECK-DAG: #[[L0]] = loc("layers.0")
// CHECK-DAG: #[[L1]] = loc("layers.1")
// CHECK-DAG: #[[L2]] = loc("layers.2")
// CHECK-DAG: #[[LOSSLOC]] = loc("loss")

// One layer: a single Linear from in-features to classes, no activation.
// RUN: mw-models mlp --layers 1 --in-features 8 --classes 3 --batch 2 --emit-locations=false | mw-opt | FileCheck %s --check-prefix=ONE
// ONE:      %arg0: tensor<8x3xf32> {mw.name = "layers.0.weight"
// ONE-SAME: %arg1: tensor<3xf32> {mw.name = "layers.0.bias"
// ONE-SAME: %arg2: tensor<2x8xf32> {mw.name = "x"
// ONE-NOT:  mw.gelu
// ONE:      mw.cross_entropy {{.*}} {mw.layer = "{{[^"]+}}"} : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<f32>
