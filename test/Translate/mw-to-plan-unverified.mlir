// mw-translate runs --mw-verify-plan's checks itself (DESIGN.md decision 16)
// and writes nothing for a planned step that fails them.
// RUN: mw-models gpt --preset gpt2-tiny --train -o %t.mlir
// RUN: mw-opt %t.mlir --mw-train-pipeline -o %t.planned.mlir 2>/dev/null
// RUN: mw-translate --mw-to-plan %t.planned.mlir -o %t.mwplan
// Every arena offset moved to 0: buffers that are live together overlap.
// RUN: sed 's/arith.constant [0-9]* : index/arith.constant 0 : index/' %t.planned.mlir > %t.overlap.mlir
// RUN: not mw-translate --mw-to-plan %t.overlap.mlir -o %t.overlap.mwplan 2>&1 | FileCheck %s --check-prefix=OVERLAP
// RUN: not test -e %t.overlap.mwplan
// OVERLAP: error: buffers '{{.*}}' at offset 0 ({{[0-9]+}} B) and '{{.*}}' at offset 0 ({{[0-9]+}} B) overlap while both live at op
// OVERLAP: error: mw-translate: @train_step fails --mw-verify-plan (above); no plan is written
// The JSON dump refuses it too.
// RUN: not mw-translate --mw-plan-json %t.overlap.mlir -o %t.overlap.json 2>&1 | FileCheck %s --check-prefix=OVERLAP
// RUN: not test -e %t.overlap.json
// An alignment of 3.
// RUN: sed 's/mw.arena_alignment = 256 : i64/mw.arena_alignment = 3 : i64/' %t.planned.mlir > %t.align.mlir
// RUN: not mw-translate --mw-to-plan %t.align.mlir -o %t.align.mwplan 2>&1 | FileCheck %s --check-prefix=ALIGN
// RUN: not test -e %t.align.mwplan
// ALIGN: error: mw-translate: @train_step fails --mw-verify-plan (above); no plan is written
