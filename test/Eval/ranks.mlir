// `mw-eval --ranks N` runs the N rank programs of an SPMD step in one
// process: the mesh collectives combine the simulated ranks' values. Every
// file is per rank: "%r" in a name is the rank, else ".rank<r>" goes before
// the extension; --print prefixes each line with "rank r: ".
//
// RUN: rm -rf %t && mkdir %t
// RUN: python3 %S/Inputs/safetensors_tool.py write %t/x.rank0.st x:F32:2x2:1,2,3,4 i:I32:2:2147483647,-5
// RUN: python3 %S/Inputs/safetensors_tool.py write %t/x.rank1.st x:F32:2x2:10,20,30,40.5 i:I32:2:1,3
// RUN: mw-eval %s --entry collectives --ranks 2 --rank-inputs %t/x.st --print --outputs %t/out.st \
// RUN:   | FileCheck %s --check-prefix=PRINT
// RUN: python3 %S/Inputs/safetensors_tool.py dump %t/out.rank0.st | FileCheck %s --check-prefix=OUT0
// RUN: python3 %S/Inputs/safetensors_tool.py dump %t/out.rank1.st | FileCheck %s --check-prefix=OUT1
// RUN: not test -e %t/out.st

// PRINT:      rank 0: sum: f32 [2, 2] {{.*}} values=[11, 22, 33, 44.5]{{$}}
// PRINT-NEXT: rank 0: isum: i32 [2] {{.*}} values=[-2147483648, -2]{{$}}
// PRINT-NEXT: rank 0: piece: f32 [1, 2] {{.*}} values=[11, 22]{{$}}
// PRINT-NEXT: rank 0: all: f32 [4, 2] {{.*}} values=[1, 2, 3, 4, 10, 20, ...]{{$}}
// PRINT-NEXT: rank 0: mine: f32 [2, 1] {{.*}} values=[1, 3]{{$}}
// PRINT-NEXT: rank 1: sum: f32 [2, 2] {{.*}} values=[11, 22, 33, 44.5]{{$}}
// PRINT-NEXT: rank 1: isum: i32 [2] {{.*}} values=[-2147483648, -2]{{$}}
// PRINT-NEXT: rank 1: piece: f32 [1, 2] {{.*}} values=[33, 44.5]{{$}}
// PRINT-NEXT: rank 1: all: f32 [4, 2] {{.*}} values=[1, 2, 3, 4, 10, 20, ...]{{$}}
// PRINT-NEXT: rank 1: mine: f32 [2, 1] {{.*}} values=[20, 40.5]{{$}}
// PRINT-NOT:  {{.}}

// OUT0: piece F32 [1, 2] [11, 22]
// OUT1: piece F32 [1, 2] [33, 44.5]

// A "%r" pattern, for --outputs and --rank-inputs alike; the outputs of one
// per-rank run feed the next. --inputs files are shared by every rank (their
// unused tensors noted once), and a rank's own files come after them, so
// they take precedence.
// RUN: mw-eval %s --entry collectives --ranks 2 --rank-inputs %t/x.rank%r.st --outputs %t/o-%r.st
// RUN: python3 %S/Inputs/safetensors_tool.py write %t/scale.st scale:F32:-:5 extra:F32:-:0
// RUN: python3 %S/Inputs/safetensors_tool.py write %t/scale.rank0.st scale:F32:-:2
// RUN: python3 %S/Inputs/safetensors_tool.py write %t/scale.rank1.st scale:F32:-:3
// RUN: mw-eval %s --entry consumer --ranks 2 --inputs %t/scale.st --rank-inputs %t/o-%r.st --print \
// RUN:   > %t/feed.out 2> %t/feed.err
// RUN: FileCheck %s --check-prefix=FEED --input-file %t/feed.out
// RUN: FileCheck %s --check-prefix=NOTES --input-file %t/feed.err
// RUN: grep -c "ignoring 'extra'" %t/feed.err | FileCheck %s --check-prefix=ONCE
// RUN: mw-eval %s --entry consumer --ranks 2 --inputs %t/scale.st --rank-inputs %t/o-%r.st --rank-inputs %t/scale.st --print 2>/dev/null \
// RUN:   | FileCheck %s --check-prefix=OVERRIDE

// FEED:      rank 0: scaled: f32 [1, 2] {{.*}} values=[55, 110]{{$}}
// FEED-NEXT: rank 1: scaled: f32 [1, 2] {{.*}} values=[165, 222.5]{{$}}
// NOTES-DAG: mw-eval: note: ignoring 'extra' in {{.*}}scale.st: no argument has that name
// NOTES-DAG: mw-eval: note: ignoring 'sum' in {{.*}}o-0.st: no argument has that name
// NOTES-DAG: mw-eval: note: ignoring 'sum' in {{.*}}o-1.st: no argument has that name
// ONCE: {{^1$}}
// OVERRIDE:      rank 0: scaled: f32 [1, 2] {{.*}} values=[22, 44]{{$}}
// OVERRIDE-NEXT: rank 1: scaled: f32 [1, 2] {{.*}} values=[99, 133.5]{{$}}

// --ranks given, even 1, names files and lines per rank; without it
// nothing changes.
// RUN: mw-eval %s --entry single --ranks 1 --inputs %t/x.rank0.st --outputs %t/one.st --print | FileCheck %s --check-prefix=ONE
// RUN: test -e %t/one.rank0.st
// RUN: not test -e %t/one.st
// RUN: mw-eval %s --entry single --inputs %t/x.rank0.st --outputs %t/plain.st --print | FileCheck %s --check-prefix=PLAIN
// RUN: test -e %t/plain.st
// ONE: rank 0: y: f32 [2, 2] {{.*}} values=[1, 2, 3, 4]{{$}}
// PLAIN: {{^}}y: f32 [2, 2] {{.*}} values=[1, 2, 3, 4]{{$}}

mesh.mesh @dp(shape = 2)
mesh.mesh @one(shape = 1)

func.func @collectives(%x: tensor<2x2xf32> {mw.name = "x"}, %i: tensor<2xi32> {mw.name = "i"})
    -> (tensor<2x2xf32> {mw.name = "sum"}, tensor<2xi32> {mw.name = "isum"},
        tensor<1x2xf32> {mw.name = "piece"}, tensor<4x2xf32> {mw.name = "all"},
        tensor<2x1xf32> {mw.name = "mine"}) {
  %s = mesh.all_reduce %x on @dp mesh_axes = [0] reduction = <sum> : tensor<2x2xf32> -> tensor<2x2xf32>
  %is = mesh.all_reduce %i on @dp mesh_axes = [0] : tensor<2xi32> -> tensor<2xi32>
  %p = mesh.reduce_scatter %x on @dp mesh_axes = [0] scatter_axis = 0 : tensor<2x2xf32> -> tensor<1x2xf32>
  %g = mesh.all_gather %x on @dp mesh_axes = [0] gather_axis = 0 : tensor<2x2xf32> -> tensor<4x2xf32>
  %w = mw.wait %g : tensor<4x2xf32>
  %m = mesh.all_slice %x on @dp mesh_axes = [0] slice_axis = 1 : tensor<2x2xf32> -> tensor<2x1xf32>
  return %s, %is, %p, %w, %m : tensor<2x2xf32>, tensor<2xi32>, tensor<1x2xf32>, tensor<4x2xf32>, tensor<2x1xf32>
}

func.func @consumer(%p: tensor<1x2xf32> {mw.name = "piece"}, %s: tensor<f32> {mw.name = "scale"})
    -> (tensor<1x2xf32> {mw.name = "scaled"}) {
  %r = mw.mul %p, %s : (tensor<1x2xf32>, tensor<f32>) -> tensor<1x2xf32>
  return %r : tensor<1x2xf32>
}

func.func @single(%x: tensor<2x2xf32> {mw.name = "x"}) -> (tensor<2x2xf32> {mw.name = "y"}) {
  %y = mesh.all_reduce %x on @one mesh_axes = [0] : tensor<2x2xf32> -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}
