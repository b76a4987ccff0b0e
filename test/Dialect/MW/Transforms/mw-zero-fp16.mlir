// fp16 dynamic loss scaling from stage 1 on: each rank's overflow flag
// (found_inf of its own gradients) is all-reduced with max, and every piece's
// update is kept or dropped on that flag (mw.select on the pieces), so every
// rank skips the same steps; the loss-scale state updates on it too. Stage 0
// reduces the gradients before found_inf reads them: no extra collective.
// RUN: mw-models mlp --preset mlp-tiny --train --precision fp16 -o %t.mlir
// RUN: mw-opt %t.mlir --mw-zero="stage=1 ranks=2" | FileCheck %s --check-prefix=S1
// RUN: mw-opt %t.mlir --mw-zero="stage=3 ranks=2 persistence-threshold=0" | FileCheck %s --check-prefix=S3
// RUN: mw-opt %t.mlir --mw-zero="stage=0 ranks=2" | FileCheck %s --check-prefix=S0
// RUN: mw-opt %t.mlir --mw-zero="stage=2 ranks=2" --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=REPORT
//
// S1-LABEL: func.func @train_step
// S1:      %[[LOCAL:.*]] = mw.found_inf
// S1-NEXT: %[[FLAG:.*]] = mesh.all_reduce %[[LOCAL]] on @dp mesh_axes = [0] reduction = <max> : tensor<f32> -> tensor<f32>
// S1:      %[[NP:.*]], %[[NM:.*]], %[[NV:.*]] = mw.adamw
// S1-NEXT: %[[KP:.*]] = mw.select %[[FLAG]], %{{.*}}, %[[NP]]
// S1-NEXT: mw.select %[[FLAG]], %{{.*}}, %[[NM]]
// S1-NEXT: mw.select %[[FLAG]], %{{.*}}, %[[NV]]
// S1:      mesh.all_gather %[[KP]]
// S1:      mw.loss_scale_update %[[FLAG]]
// S1-NOT:  mw.loss_scale_update %[[LOCAL]]
//
// S3-LABEL: func.func @train_step
// S3:      %[[FLAG:.*]] = mesh.all_reduce %{{.*}} reduction = <max>
// S3:      %[[NP:.*]], %{{.*}}, %{{.*}} = mw.adamw
// S3-NEXT: %[[KP:.*]] = mw.select %[[FLAG]], %{{.*}}, %[[NP]]
// S3:      return {{.*}}%[[KP]]
//
// S0-LABEL: func.func @train_step
// S0-NOT:  reduction = <max>
// S0:      return
//
// The flag's all-reduce is control, not gradient traffic.
// REPORT:      "control": {
// REPORT-NEXT:   "count": 1,
// REPORT-NEXT:   "elements": 1,
