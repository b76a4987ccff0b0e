// --mw-train-pipeline takes --mw-static-arena's options: the pass parses them
// (so a bad value gets the pass's error), and --help lists the pass's own
// flags, descriptions and types under the pipeline.
// RUN: not mw-opt %s --mw-train-pipeline="alignment=abc" -o /dev/null 2>&1 | FileCheck %s --check-prefix=VALUE
// RUN: not mw-opt %s --mw-train-pipeline="nope=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NAME
// RUN: not mw-opt %s --pass-pipeline="builtin.module(mw-train-pipeline{alignment=abc})" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TEXTUAL
// RUN: not mw-opt %s --mw-train-pipeline="strategy=bogus" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: not mw-opt %s --mw-train-pipeline="alignment=48" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ALIGN
// Every option of the pass works, time-limit included.
// RUN: mw-opt %s --mw-train-pipeline="strategy=exact time-limit=5 alignment=64" | FileCheck %s --check-prefix=PLAN
// RUN: mw-opt --help | FileCheck %s --check-prefix=HELP
// The pipeline's own options, fuse (--mw-sink and --mw-fuse first) and
// hoist-updates (--mw-hoist-updates first, default true), are taken out
// before the rest goes to the pass.
// RUN: mw-opt %s --mw-train-pipeline="fuse=true alignment=64" | FileCheck %s --check-prefix=FUSE
// RUN: mw-opt %s --mw-train-pipeline="hoist-updates=false fuse alignment=64" | FileCheck %s --check-prefix=FUSE
// RUN: not mw-opt %s --mw-train-pipeline="fuse=maybe" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FUSEBAD
// RUN: not mw-opt %s --mw-train-pipeline="hoist-updates=2" -o /dev/null 2>&1 | FileCheck %s --check-prefix=HOISTBAD
// chunk-loss=N runs --mw-chunk-loss=chunks=N first (this step has no loss:
// nothing changes).
// RUN: mw-opt %s --mw-train-pipeline="chunk-loss=4 alignment=64" | FileCheck %s --check-prefix=PLAN
// RUN: not mw-opt %s --mw-train-pipeline="chunk-loss=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHUNKBAD
// RUN: not mw-opt %s --mw-train-pipeline="chunk-loss=some" -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHUNKBAD2
// CHUNKBAD: mw-train-pipeline: chunk-loss=-1 is not a count of chunks (0: off)
// CHUNKBAD2: mw-train-pipeline: chunk-loss=some is not a count of chunks (0: off)
// defer-weight-grad is --mw-chunk-loss's: without chunk-loss=N it is an
// error, not ignored.
// RUN: not mw-opt %s --mw-train-pipeline="defer-weight-grad" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEFERBAD
// RUN: not mw-opt %s --mw-train-pipeline="chunk-loss=2 defer-weight-grad=maybe" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEFERBAD2
// RUN: mw-opt %s --mw-train-pipeline="chunk-loss=4 defer-weight-grad alignment=64" | FileCheck %s --check-prefix=PLAN
// DEFERBAD: mw-train-pipeline: defer-weight-grad is an option of --mw-chunk-loss; give chunk-loss=N with it
// DEFERBAD2: mw-train-pipeline: defer-weight-grad=maybe is not a boolean (true or false)
// FUSE-LABEL: func.func @step
// FUSE-SAME: mw.arena_alignment = 64 : i64
// FUSE: mw.kernel ins(%view, %arg1
// FUSE-NEXT: ^bb0(
// FUSE-NEXT: mw.matmul
// FUSE-NEXT: mw.tanh
// FUSEBAD: mw-train-pipeline: fuse=maybe is not a boolean (true or false)
// HOISTBAD: mw-train-pipeline: hoist-updates=2 is not a boolean (true or false)

// VALUE: for the --alignment option: 'abc' value invalid for long argument!
// NAME: no such option nope
// TEXTUAL: for the --alignment option: 'abc' value invalid for long argument!
// TEXTUAL: failed to add `mw-train-pipeline` with options `alignment=abc`
// STRATEGY: error: mw-static-arena: unknown strategy 'bogus' (expected naive, greedy-size
// ALIGN: error: mw-static-arena: alignment 48 is not a positive power of two

// PLAN-LABEL: func.func @step
// PLAN-SAME: mw.arena_alignment = 64 : i64, mw.arena_size = 128 : i64

// HELP:      --mw-static-arena
// HELP-NEXT:   --alignment=<long> {{ *}}- [[ALIGN_DESC:.+]]
// HELP-NEXT:   --arena=<string> {{ *}}- [[ARENA_DESC:.+]]
// HELP-NEXT:   --remarks {{ *}}- [[REMARKS_DESC:.+]]
// HELP-NEXT:   --strategy=<string> {{ *}}- [[STRATEGY_DESC:.+]]
// HELP-NEXT:   --time-limit=<number> {{ *}}- [[TIME_DESC:.+]]
// HELP:      --mw-train-pipeline
// HELP-NEXT:   --alignment=<long> {{ *}}- [[ALIGN_DESC]]
// HELP-NEXT:   --arena=<string> {{ *}}- [[ARENA_DESC]]
// HELP-NEXT:   --chunk-loss=<long> {{ *}}- Run --mw-chunk-loss=chunks=N first
// HELP-NEXT:   --defer-weight-grad {{ *}}- With chunk-loss=N: make a tied head's weight gradient
// HELP-NEXT:   --fuse {{ *}}- Run --mw-sink and --mw-fuse first
// HELP-NEXT:   --hoist-updates {{ *}}- Run --mw-hoist-updates first
// HELP-NEXT:   --remarks {{ *}}- [[REMARKS_DESC]]
// HELP-NEXT:   --strategy=<string> {{ *}}- [[STRATEGY_DESC]]
// HELP-NEXT:   --time-limit=<number> {{ *}}- [[TIME_DESC]]

func.func @step(%x: tensor<4x8xf32> {mw.role = #mw.role<input>}, %w: tensor<8x8xf32> {mw.role = #mw.role<param>})
    -> (tensor<4x8xf32> {mw.role = #mw.role<output>}) {
  %y = mw.exp %x : tensor<4x8xf32>
  %z = mw.matmul %y, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %t = mw.tanh %z : tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}
