// mw-translate's driver (ours since the output became atomic,
// test/Tools/keep-output.mlir) keeps upstream mlir-translate's options:
// --split-input-file with --output-split-marker, --allow-unregistered-dialect
// and --error-diagnostics-only.
// RUN: mw-translate %S/mw-plan-json.mlir -split-input-file --output-split-marker="// =====" --mw-plan-json | FileCheck %s --check-prefix=MARKER
// MARKER: "function": "step"
// MARKER: // =====
// MARKER: "function"

// An op of an unknown dialect: refused while parsing, unless allowed; then
// the module has no planned function.
// RUN: not mw-translate --mw-to-plan %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNREGISTERED
// UNREGISTERED: mw-translate-driver.mlir:[[@LINE+6]]:{{[0-9]+}}: error: operation being parsed with an unregistered dialect
// RUN: not mw-translate --mw-to-plan --allow-unregistered-dialect %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=ALLOWED
// RUN: not mw-translate --mw-to-plan --allow-unregistered-dialect --error-diagnostics-only %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=ALLOWED
// ALLOWED: error: no function with a body in the module
// ALLOWED-NOT: unregistered

"x.op"() : () -> ()
