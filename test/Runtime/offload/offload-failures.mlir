// Offloaded weights' failures (docs/runtime.md, "Offloaded weights"): a
// truncated weights file refused naming a tensor, the buffered fallback
// where O_DIRECT is refused (said once, same outputs), and runs killed while
// they write the default weights file leaving no partial file
// (test/Runtime/offload/Inputs/offload_failures.sh). A file truncated or
// modified after the session opened it: runtime/test/OffloadTest.cpp.
//
// RUN: %S/Inputs/offload_failures.sh %mw_bin %t | FileCheck %s
// CHECK-LABEL: truncated:
// CHECK-NEXT: mw-run: error: {{.*}}half.safetensors: {{.*}}'{{[a-z0-9_.]+}}'
// CHECK: buffered: 1 note(s)
// CHECK: buffered: outputs equal
// CHECK-LABEL: not a directory:
// CHECK-NEXT: mw-run: error: offload path {{.*}}afile is not a directory
// CHECK: killed: 7 runs, 0 left a partial file
