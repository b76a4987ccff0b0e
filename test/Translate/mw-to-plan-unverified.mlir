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
// The other kinds of planned steps issue 20 found translated: alignments of
// 7, 2^31 and 0, an offset off the alignment, a lower bound above the arena
// and an arena smaller than mw.arena_size says.
// RUN: sed 's/mw.arena_alignment = 256 : i64/mw.arena_alignment = 7 : i64/' %t.planned.mlir > %t.align7.mlir
// RUN: not mw-translate --mw-to-plan %t.align7.mlir -o %t.align7.mwplan 2>&1 | FileCheck %s --check-prefix=ALIGN7
// RUN: not test -e %t.align7.mwplan
// ALIGN7: error: '{{.*}}' at offset {{[0-9]+}} ({{[0-9]+}} B) is not aligned to 7 bytes (mw.arena_alignment)
// ALIGN7: error: mw-translate: @train_step fails --mw-verify-plan (above); no plan is written
// RUN: sed 's/mw.arena_alignment = 256 : i64/mw.arena_alignment = 2147483648 : i64/' %t.planned.mlir > %t.align31.mlir
// RUN: not mw-translate --mw-to-plan %t.align31.mlir -o %t.align31.mwplan 2>&1 | FileCheck %s --check-prefix=ALIGN31
// RUN: not test -e %t.align31.mwplan
// ALIGN31: error: '{{.*}}' at offset {{[0-9]+}} ({{[0-9]+}} B) is not aligned to 2147483648 bytes (mw.arena_alignment)
// RUN: sed 's/mw.arena_alignment = 256 : i64/mw.arena_alignment = 0 : i64/' %t.planned.mlir > %t.align0.mlir
// RUN: not mw-translate --mw-to-plan %t.align0.mlir -o %t.align0.mwplan 2>&1 | FileCheck %s --check-prefix=ALIGN0
// RUN: not test -e %t.align0.mwplan
// ALIGN0: error: mw.arena_alignment must be positive
// RUN: sed '0,/arith.constant 16896 : index/s//arith.constant 16900 : index/' %t.planned.mlir > %t.offset.mlir
// RUN: not mw-translate --mw-to-plan %t.offset.mlir -o %t.offset.mwplan 2>&1 | FileCheck %s --check-prefix=OFFSET
// RUN: not test -e %t.offset.mwplan
// OFFSET: error: '{{.*}}' at offset 16900 ({{[0-9]+}} B) is not aligned to 256 bytes (mw.arena_alignment)
// RUN: sed 's/mw.lower_bound = [0-9]* : i64/mw.lower_bound = 99999999 : i64/' %t.planned.mlir > %t.lb.mlir
// RUN: not mw-translate --mw-to-plan %t.lb.mlir -o %t.lb.mwplan 2>&1 | FileCheck %s --check-prefix=LB
// RUN: not test -e %t.lb.mwplan
// LB: error: mw.lower_bound = 99999999 exceeds the arena's {{[0-9]+}} bytes
// RUN: sed 's/mw.arena_size = [0-9]* : i64/mw.arena_size = 1000 : i64/' %t.planned.mlir > %t.size.mlir
// RUN: not mw-translate --mw-to-plan %t.size.mlir -o %t.size.mwplan 2>&1 | FileCheck %s --check-prefix=SIZE
// RUN: not test -e %t.size.mwplan
// SIZE: error: {{.*}}arena has {{[0-9]+}} bytes but mw.arena_size is 1000
