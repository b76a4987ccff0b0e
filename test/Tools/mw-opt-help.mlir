// mw-opt documents every Memwall pass and its options in --help.
// RUN: mw-opt --help | FileCheck %s
// CHECK: --mw-memory-report
// CHECK-SAME: Report per-function memory by role
// CHECK-SAME: and whether a step fits a device
// CHECK: --device-memory=<string>
// CHECK-SAME: KiB, MiB, GiB, TiB powers of 2
// CHECK: --format=<string>
// CHECK-SAME: Output format: text, json, or html
// CHECK: --function=<string>
// CHECK: --output=<string>
// CHECK: --ranks=<long>
// CHECK: --target=<string>
// CHECK-SAME: V100-16GB, RTX4090, V100-32GB, A100-40GB, A6000, L40S, A100-80GB, H100-80GB, H200-141GB, B200-192GB
