// mw-opt documents every Memwall pass and its options in --help.
// RUN: mw-opt --help | FileCheck %s
// CHECK: --mw-memory-report
// CHECK-SAME: Report per-function memory by role
// CHECK: --format=<string>
// CHECK-SAME: Output format: text or json
// CHECK: --output=<string>
