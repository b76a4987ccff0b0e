// --help lists a tool's own options and its driver's, not the code generation
// flags of every LLVM target; MLIR's general options are in --help-hidden.
// RUN: mw-translate --help | FileCheck %s --check-prefix=TRANSLATE
// RUN: mw-translate --help | FileCheck %s --check-prefix=SHORT
// RUN: mw-translate --help-hidden | FileCheck %s --check-prefix=HIDDEN
// RUN: mw-translate --help-list-hidden | FileCheck %s --check-prefix=HIDDEN
// RUN: mw-opt --help | FileCheck %s --check-prefix=SHORT
// RUN: mw-opt --help-hidden | FileCheck %s --check-prefix=HIDDEN
// RUN: mw-eval --help | FileCheck %s --check-prefix=SHORT

// TRANSLATE: USAGE: mw-translate [options] <input file>
// TRANSLATE: --mlir-print-op-on-diagnostic
// TRANSLATE: The translation to perform (one)
// TRANSLATE-NEXT: --mw-plan-json {{ *}}- Write a planned function's .mwplan as JSON
// TRANSLATE-NEXT: --mw-to-plan {{ *}}- Write a planned function as a binary .mwplan
// TRANSLATE: -o <filename> {{ *}}- Output filename (written whole on success: a failed run leaves an existing file as it was)
// TRANSLATE: --split-input-file
// TRANSLATE: --verify-diagnostics
// TRANSLATE: Plan translation options:
// TRANSLATE: --mw-plan-function=<NAME> {{ *}}- The planned function to translate

// SHORT-NOT: --aarch64
// SHORT-NOT: --x86-
// SHORT-NOT: --polly
// SHORT-NOT: --mlir-print-debuginfo
// SHORT-NOT: --mlir-timing

// HIDDEN: --mlir-disable-threading
// HIDDEN: --mlir-print-debuginfo
// HIDDEN: --mlir-timing
