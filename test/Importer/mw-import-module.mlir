// mw-import --module FILE:FACTORY imports any nn.Module: nn.Linear's weights
// are [out, in] and used with transpose_rhs, F.cross_entropy becomes
// mw.cross_entropy, and the step --mw-autodiff makes from it runs.
// REQUIRES: importer
// RUN: %mw_import --module %S/Inputs/modules.py:mlp --train -o %t.mlir --weights %t.w.safetensors --save-inputs %t.in.safetensors
// RUN: FileCheck %s --input-file %t.mlir
// RUN: mw-opt %t.mlir --mw-autodiff="optimizer=sgd lr=0.1" | mw-eval - --entry train_step --inputs %t.w.safetensors --inputs %t.in.safetensors --print | FileCheck %s --check-prefix=STEP

// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %arg0: tensor<16x8xf32> {mw.name = "fc1.weight", mw.role = #mw.role<param>}
// CHECK-SAME: %arg4: tensor<3x8xf32> {mw.name = "x", mw.role = #mw.role<input>}
// CHECK-SAME: %arg5: tensor<3xi64> {mw.name = "labels", mw.role = #mw.role<label>}
// CHECK: mw.matmul %arg4, %arg0 {transpose_rhs, mw.layer = "fc1"}
// CHECK: mw.relu
// CHECK: mw.cross_entropy {{.*}} {ignore_index = -100 : i64}

// STEP: loss: f32 []
// STEP: fc1.weight: f32 [16, 8]
