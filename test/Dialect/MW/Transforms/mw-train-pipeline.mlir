// --mw-train-pipeline: bufferize, plan the arena with the given options,
// verify; the planned step computes what the tensor program computes.
// RUN: mw-models gpt --preset gpt2-tiny --train -o %t.mlir
// RUN: mw-opt %t.mlir --mw-train-pipeline -o %t.p.mlir 2>/dev/null
// RUN: FileCheck %s --check-prefix=DEFAULT --input-file %t.p.mlir
// RUN: mw-opt %t.mlir --mw-train-pipeline="strategy=greedy-size alignment=64 arena=argument" -o %t.a.mlir 2>/dev/null
// RUN: FileCheck %s --check-prefix=OPTIONS --input-file %t.a.mlir
// RUN: mw-eval %t.mlir --entry train_step --random-inputs 5 --save-inputs %t.in --print > %t.ref
// RUN: mw-eval %t.p.mlir --entry train_step --inputs %t.in --print | diff %t.ref -
// RUN: mw-eval %t.a.mlir --entry train_step --inputs %t.in --print | diff %t.ref -
// Deterministic: the same input gives the same IR, byte for byte.
// RUN: mw-opt %t.mlir --mw-train-pipeline -mlir-print-debuginfo -o %t.p1.mlir 2>/dev/null
// RUN: mw-opt %t.mlir --mw-train-pipeline -mlir-print-debuginfo -o %t.p2.mlir 2>/dev/null
// RUN: cmp %t.p1.mlir %t.p2.mlir
// RUN: mw-opt --help | FileCheck %s --check-prefix=HELP

// DEFAULT-LABEL: func.func @train_step
// DEFAULT-SAME:  mw.arena_alignment = 256 : i64, mw.arena_size = [[SIZE:[0-9]+]] : i64, mw.lower_bound = [[SIZE]] : i64
// DEFAULT:       memref.alloc() {alignment = 256 : i64, mw.arena} : memref<[[SIZE]]xi8>
// DEFAULT:       mw.kernel ins

// OPTIONS-LABEL: func.func @train_step
// OPTIONS-SAME:  {mw.arena}{{.*}}mw.arena_alignment = 64 : i64

// HELP:      {{^ *}}--mw-train-pipeline{{ +}}-{{ +}}Compile a step
// HELP-NEXT:   --alignment=<long>
// HELP-NEXT:   --arena=<string>
// HELP-NEXT:   --chunk-loss=<long>
// HELP-NEXT:   --defer-weight-grad
// HELP-NEXT:   --fuse
// HELP-NEXT:   --hoist-updates
// HELP-NEXT:   --remarks
// HELP-NEXT:   --strategy=<string>
