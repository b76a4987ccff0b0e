// A failing run prints the diagnostic with its location, not the module the
// diagnostic is attached to; --mlir-print-op-on-diagnostic=true gives the dump.
// RUN: mw-opt %s --mw-train-pipeline -o %t.planned.mlir 2>/dev/null

// A wrong option value of --mw-plan-export: three lines (the error, the
// source line, the caret), no IR.
// RUN: not mw-opt %t.planned.mlir --mw-plan-export=function=nope -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPORT
// RUN: not mw-opt %t.planned.mlir --mw-plan-export=function=nope -o /dev/null 2>&1 | count 3
// EXPORT: planned.mlir:1:1: error: mw-plan-export: no planned function named @nope
// EXPORT-NOT: see current operation
// EXPORT-NOT: func.func

// An option --mw-plan-export does not have: one line (and an empty one).
// RUN: mw-models gpt --preset gpt2-tiny | not mw-opt --mw-plan-export=format=xml 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: mw-models gpt --preset gpt2-tiny | not mw-opt --mw-plan-export=format=xml 2>&1 | count 2
// OPTION: error: <Pass-Options-Parser>: no such option format

// The dump is one flag away.
// RUN: not mw-opt %t.planned.mlir --mw-plan-export=function=nope --mlir-print-op-on-diagnostic=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=DUMP
// DUMP: planned.mlir:1:1: error: mw-plan-export: no planned function named @nope
// DUMP: note: see current operation:
// DUMP: "func.func"() <{{.*}}sym_name = "step"

// A pass failure: a bad strategy of --mw-static-arena.
// RUN: not mw-opt %s --mw-bufferize --mw-static-arena=strategy=bogus -o /dev/null 2>&1 | FileCheck %s --check-prefix=PASS
// PASS: diagnostics.mlir:0:0: error: mw-static-arena: unknown strategy 'bogus'
// PASS-NOT: see current operation
// PASS-NOT: func.func

// A source line of more than 400 columns (a large model's function
// signature, without locations) is not shown: the error is one line, with
// its file, line and column. Shorter lines still are (the notes below).
// RUN: not mw-opt %S/Inputs/long-line.mlir 2>&1 | FileCheck %s --check-prefix=LONG
// RUN: not mw-opt %S/Inputs/long-line.mlir 2>&1 | count 1
// RUN: not mw-eval %S/Inputs/long-line.mlir 2>&1 | FileCheck %s --check-prefix=LONG
// RUN: not mw-eval %S/Inputs/long-line.mlir 2>&1 | count 1
// RUN: not mw-translate --mw-to-plan %S/Inputs/long-line.mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=LONG
// RUN: not mw-translate --mw-to-plan %S/Inputs/long-line.mlir -o /dev/null 2>&1 | count 1
// LONG: long-line.mlir:3:610: error: expected non-function type
// RUN: mw-models gpt --preset gpt2-tiny --train --emit-locations=false -o %t.noloc.mlir
// RUN: not mw-opt %t.noloc.mlir --mw-remat=budget=1KB -o /dev/null 2>&1 | FileCheck %s --check-prefix=LONG-PASS
// RUN: not mw-opt %t.noloc.mlir --mw-remat=budget=1KB -o /dev/null 2>&1 | count 1
// LONG-PASS: noloc.mlir:{{[0-9]+}}:3: error: mw-remat: budget 1000 B {{.*}} is below the persistent state of @train_step
// LONG-PASS-NOT: func.func
// RUN: not mw-opt %t.noloc.mlir --mw-remat=budget=90% -o /dev/null 2>&1 | FileCheck %s --check-prefix=LONG-NOTES
// LONG-NOTES: noloc.mlir:{{[0-9]+}}:3: error: mw-remat: budget {{.*}} is unreachable for @train_step
// LONG-NOTES-NEXT: noloc.mlir:{{[0-9]+}}:{{[0-9]+}}: note: the fullest op of the backward pass:
// LONG-NOTES-NEXT: {{^ +%[0-9_a-z]+ = mw\.}}
// LONG-NOTES-NEXT: ^

// mw-translate on an unplanned module and mw-eval without --entry: one line
// each (the implicit module is at line 0 of the file).
// RUN: not mw-translate --mw-to-plan %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=TRANSLATE
// RUN: not mw-translate --mw-to-plan %s -o /dev/null 2>&1 | count 1
// TRANSLATE: diagnostics.mlir:0:0: error: no planned function (with mw.arena_size) among: @step, @other
// TRANSLATE-NOT: func.func
// RUN: not mw-translate --mw-to-plan %s --mlir-print-op-on-diagnostic=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=TRANSLATE-DUMP
// TRANSLATE-DUMP: note: see current operation:
// TRANSLATE-DUMP: "func.func"
// An input that does not verify: the error at the function, not the function.
// RUN: not mw-translate --mw-to-plan %S/Inputs/invalid-func.mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=VERIFY
// RUN: not mw-translate --mw-to-plan %S/Inputs/invalid-func.mlir -o /dev/null 2>&1 | count 3
// VERIFY: invalid-func.mlir:3:1: error: 'func.func' op type of entry block argument #0('f32') must match
// VERIFY-NOT: see current operation
// RUN: not mw-eval %s 2>&1 | FileCheck %s --check-prefix=EVAL
// RUN: not mw-eval %s 2>&1 | count 1
// EVAL: diagnostics.mlir:0:0: error: the module has 2 functions with a body; choose one with --entry: @step @other
// EVAL-NOT: func.func
// RUN: not mw-eval %s --mlir-print-op-on-diagnostic=true 2>&1 | FileCheck %s --check-prefix=EVAL-DUMP
// EVAL-DUMP: note: see current operation:
// EVAL-DUMP: "func.func"

func.func @step(%x: tensor<4x8xf32> {mw.role = #mw.role<input>}, %w: tensor<8x8xf32> {mw.role = #mw.role<param>})
    -> (tensor<4x8xf32> {mw.role = #mw.role<output>}) {
  %y = mw.exp %x : tensor<4x8xf32>
  %z = mw.matmul %y, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}

func.func @other(%x: tensor<4x8xf32> {mw.role = #mw.role<input>})
    -> (tensor<4x8xf32> {mw.role = #mw.role<output>}) {
  %y = mw.exp %x : tensor<4x8xf32>
  %z = mw.tanh %y : tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}
