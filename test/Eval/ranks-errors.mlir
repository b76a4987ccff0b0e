// Errors of `mw-eval --ranks`: one error, exit status 1, no file written.
//
// RUN: rm -rf %t && mkdir %t
// RUN: not mw-eval %s --entry on8 --ranks 4 --random-inputs 1 --outputs %t/out.st 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MISMATCH --implicit-check-not=error:
// RUN: not mw-eval %s --entry on8 --random-inputs 1 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DEFAULT --implicit-check-not=error:
// RUN: not mw-eval %s --entry grid --ranks 4 --random-inputs 1 2>&1 \
// RUN:   | FileCheck %s --check-prefix=GRID --implicit-check-not=error:
// RUN: not mw-eval %s --entry on2 --ranks 0 --random-inputs 1 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ZERO --implicit-check-not=error:
// RUN: not mw-eval %s --entry on2 --ranks 2 --random-inputs 1 --rank-inputs %t/in.st 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EXCLUSIVE --implicit-check-not=error:
// RUN: python3 %S/Inputs/safetensors_tool.py write %t/in.rank0.st t:F32:4x2:1,2,3,4,5,6,7,8 i:I64:2:0,3
// RUN: not mw-eval %s --entry on2 --ranks 2 --rank-inputs %t/in.st --outputs %t/out.st 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MISSING-FILE --implicit-check-not=error:
// RUN: python3 %S/Inputs/safetensors_tool.py write %t/in.rank1.st t:F32:4x2:1,2,3,4,5,6,7,8 i:I64:2:4,1
// RUN: not mw-eval %s --entry on2 --ranks 2 --rank-inputs %t/in.st --outputs %t/out.st --save-inputs %t/saved.st 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ON-RANK --implicit-check-not=error:
// RUN: not ls %t/out* %t/saved*

// MISMATCH: mw-eval: error: the step was compiled for 8 ranks (mesh @dp8), --ranks 4{{$}}
// DEFAULT: mw-eval: error: the step was compiled for 8 ranks (mesh @dp8), --ranks 1 (the default){{$}}
// GRID: ranks-errors.mlir:{{[0-9]+}}:{{[0-9]+}}: error: the evaluator simulates collectives over a 1-D mesh of static size, but mesh @mesh2d has shape 2x2{{$}}
// ZERO: mw-eval: error: --ranks must be at least 1, got 0{{$}}
// EXCLUSIVE: mw-eval: error: --rank-inputs and --random-inputs are exclusive{{$}}
// MISSING-FILE: mw-eval: error: {{.*}}in.rank1.st: cannot open: No such file or directory
// ON-RANK: ranks-errors.mlir:{{[0-9]+}}:{{[0-9]+}}: error: embedding index 4 is out of range [0, 4){{$}}
// ON-RANK: ranks-errors.mlir:{{[0-9]+}}:{{[0-9]+}}: note: on rank 1 of 2{{$}}

mesh.mesh @dp8(shape = 8)
mesh.mesh @mesh2d(shape = 2x2)
mesh.mesh @dp(shape = 2)

func.func @on8(%x: tensor<8xf32>) -> tensor<8xf32> {
  %r = mesh.all_reduce %x on @dp8 mesh_axes = [0] : tensor<8xf32> -> tensor<8xf32>
  return %r : tensor<8xf32>
}

func.func @grid(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = mesh.all_reduce %x on @mesh2d mesh_axes = [0, 1] : tensor<4xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

func.func @on2(%t: tensor<4x2xf32> {mw.name = "t"}, %i: tensor<2xi64> {mw.name = "i"}) -> tensor<2x2xf32> {
  %e = mw.embedding %t, %i : (tensor<4x2xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  %r = mesh.all_reduce %e on @dp mesh_axes = [0] : tensor<2x2xf32> -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}
