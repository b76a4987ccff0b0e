// A ZeRO step's plan: the collectives are kernels named by their MLIR names
// with their attributes (the mesh by name, its axes, the reduction as a
// string, the gather or scatter axis), and Plan.ranks is the mesh's size.
// mw-run refuses the 2-rank plan in one process.
// RUN: mw-opt %s --mw-autodiff --mw-zero="stage=3 ranks=2 persistence-threshold=0 overlap=on" --mw-train-pipeline 2>/dev/null -o %t.mlir
// RUN: mw-translate --mw-plan-json %t.mlir | FileCheck %s
// RUN: mw-translate --mw-to-plan %t.mlir -o %t.mwplan
// RUN: not mw-run %t.mwplan --steps 1 2>&1 | FileCheck %s --check-prefix=REFUSED

func.func @forward(%w: tensor<3x2xf32> {mw.role = #mw.role<param>, mw.name = "w"},
                   %b: tensor<2xf32> {mw.role = #mw.role<param>, mw.name = "b"},
                   %x: tensor<4x3xf32> {mw.role = #mw.role<input>, mw.name = "x"},
                   %y: tensor<4xi32> {mw.role = #mw.role<label>, mw.name = "y"})
    -> (tensor<f32> {mw.role = #mw.role<output>, mw.name = "loss"}) {
  %h = mw.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %z = mw.add %h, %b : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %l = mw.cross_entropy %z, %y : (tensor<4x2xf32>, tensor<4xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK: "ranks": 2,
// CHECK:      "op": "mesh.all_gather",
// CHECK:        {"name":"gather_axis","kind":"int","value":0},
// CHECK-NEXT:   {"name":"mesh","kind":"string","value":"dp"},
// CHECK-NEXT:   {"name":"mesh_axes","kind":"ints","value":[0]}
// CHECK:      "op": "mw.wait",
// CHECK:      "op": "mesh.reduce_scatter",
// CHECK:        {"name":"mesh","kind":"string","value":"dp"},
// CHECK-NEXT:   {"name":"mesh_axes","kind":"ints","value":[0]},
// CHECK-NEXT:   {"name":"reduction","kind":"string","value":"sum"},
// CHECK-NEXT:   {"name":"scatter_axis","kind":"int","value":0}
// CHECK:      "op": "mesh.all_reduce",

// REFUSED: the plan was compiled for 2 ranks; start it with 2 processes (mpirun -np 2 mw-run ...)
