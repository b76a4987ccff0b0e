// `--random-inputs SEED` with `--ranks N`: arguments with role input or
// label are drawn per rank from SEED + rank; every other argument (params,
// optimizer state, unannotated) from SEED on every rank. Rank 0's inputs
// are a single-rank run's (@local has @step's arguments, no collective).
//
// RUN: rm -rf %t && mkdir %t
// RUN: mw-eval %s --entry step --ranks 2 --random-inputs 5 --save-inputs %t/in.st
// RUN: mw-eval %s --entry local --random-inputs 5 --save-inputs %t/single.st
// RUN: cmp %t/single.st %t/in.rank0.st
// RUN: python3 %S/Inputs/safetensors_tool.py dump %t/in.rank0.st > %t/r0
// RUN: python3 %S/Inputs/safetensors_tool.py dump %t/in.rank1.st > %t/r1
// RUN: grep "^w " %t/r0 > %t/w0 && grep "^w " %t/r1 > %t/w1 && diff %t/w0 %t/w1
// RUN: grep "^m " %t/r0 > %t/m0 && grep "^m " %t/r1 > %t/m1 && diff %t/m0 %t/m1
// RUN: grep "^x " %t/r0 > %t/x0 && grep "^x " %t/r1 > %t/x1 && not diff %t/x0 %t/x1
// RUN: grep "^y " %t/r0 > %t/y0 && grep "^y " %t/r1 > %t/y1 && not diff %t/y0 %t/y1
// The same run with --rank-inputs on the saved files gives the same bits.
// RUN: mw-eval %s --entry step --ranks 2 --random-inputs 5 --print > %t/a
// RUN: mw-eval %s --entry step --ranks 2 --rank-inputs %t/in.st --print > %t/b
// RUN: diff %t/a %t/b
// RUN: FileCheck %s --input-file %t/a

// The all_reduce makes the two ranks' results equal.
// CHECK:      rank 0: g: f32 [3] checksum=[[G:0x[0-9a-f]+]]
// CHECK-NEXT: rank 1: g: f32 [3] checksum=[[G]]

mesh.mesh @dp(shape = 2)

func.func @step(%w: tensor<3xf32> {mw.name = "w", mw.role = #mw.role<param>},
                %m: tensor<3xf32> {mw.name = "m", mw.role = #mw.role<optimizer_state>},
                %x: tensor<3xf32> {mw.name = "x", mw.role = #mw.role<input>},
                %y: tensor<3xf32> {mw.name = "y", mw.role = #mw.role<label>})
    -> (tensor<3xf32> {mw.name = "g"}) {
  %p = mw.mul %w, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %d = mw.sub %p, %y : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %e = mw.add %d, %m : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %g = mesh.all_reduce %e on @dp mesh_axes = [0] : tensor<3xf32> -> tensor<3xf32>
  return %g : tensor<3xf32>
}

func.func @local(%w: tensor<3xf32> {mw.name = "w", mw.role = #mw.role<param>},
                 %m: tensor<3xf32> {mw.name = "m", mw.role = #mw.role<optimizer_state>},
                 %x: tensor<3xf32> {mw.name = "x", mw.role = #mw.role<input>},
                 %y: tensor<3xf32> {mw.name = "y", mw.role = #mw.role<label>})
    -> (tensor<3xf32> {mw.name = "g"}) {
  %p = mw.mul %w, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %p : tensor<3xf32>
}
