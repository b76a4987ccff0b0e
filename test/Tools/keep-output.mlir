// A failed run leaves an existing -o file as it was, and leaves no
// temporary file beside it: mw-opt and mw-translate write to a temporary
// file renamed over the output on success only (upstream's drivers truncate
// the output when they start and delete it when the run fails).
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo "previous output" > %t/out.mlir
// RUN: not mw-opt %s --mw-bufferize --mw-static-arena=strategy=bogus -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=OPT-ERR
// OPT-ERR: error:
// RUN: FileCheck %s --input-file=%t/out.mlir --check-prefix=KEPT
// KEPT: previous output
// RUN: not mw-opt %t/missing.mlir -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: mw-opt: cannot open input file '{{.*}}missing.mlir': No such file or directory
// RUN: FileCheck %s --input-file=%t/out.mlir --check-prefix=KEPT
// RUN: ls %t | count 1

// mw-translate: an unplanned function is not a plan.
// RUN: echo "previous plan" > %t/out.mwplan
// RUN: not mw-translate --mw-to-plan %s -o %t/out.mwplan 2>&1 | FileCheck %s --check-prefix=TRANSLATE-ERR
// TRANSLATE-ERR: error:
// RUN: FileCheck %s --input-file=%t/out.mwplan --check-prefix=KEPT-PLAN
// KEPT-PLAN: previous plan
// RUN: ls %t | count 2

// A successful run replaces the file.
// RUN: mw-opt %s --mw-bufferize -o %t/out.mlir
// RUN: FileCheck %s --input-file=%t/out.mlir --check-prefix=WRITTEN
// WRITTEN: func.func @step
// RUN: ls %t | count 2

// An output that cannot be written: the reason, and a non-zero exit.
// RUN: not mw-opt %s -o %t/no-such-dir/out.mlir 2>&1 | FileCheck %s --check-prefix=UNWRITABLE
// UNWRITABLE: mw-opt: cannot write '{{.*}}no-such-dir/out.mlir': {{.+}}

// mw-translate's driver takes exactly one translation (upstream's chains
// several; a .mwplan does not parse as MLIR).
// RUN: not mw-translate %s -o %t/none.mwplan 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: mw-translate: no translation given: give one of --mw-to-plan and --mw-plan-json (see --help)
// RUN: not mw-translate --mw-to-plan --mw-plan-json %s -o %t/two.mwplan 2>&1 | FileCheck %s --check-prefix=TWO
// TWO: mw-translate: more than one translation given
// RUN: ls %t | count 2

func.func @step(%x: tensor<4xf32> {mw.role = #mw.role<input>}) -> tensor<4xf32> {
  %y = mw.relu %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
