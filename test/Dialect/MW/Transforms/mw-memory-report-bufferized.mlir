// The cost figures of the memory report are the same before and after
// bufferization: a kernel counts its body once (FLOPs, bytes read and
// written), and the gradient bytes come from the optimizer updates inside
// kernels. --mw-fold-views (on by default) then removes the copies of the
// kernels that became views, and with them their bytes, FLOPs unchanged.
// After planning, the peak names the computing ops.
// RUN: mw-models gpt --preset gpt2-tiny --train -o %t.mlir
// RUN: mw-opt %t.mlir --mw-memory-report=format=json -o /dev/null \
// RUN:   | grep -E '"(param_count|flops|bytes_read|bytes_written|grad_bytes|optimizer_state_bytes)"' > %t.before
// RUN: mw-opt %t.mlir --mw-bufferize=fold-views=false --mw-memory-report=format=json -o /dev/null \
// RUN:   | grep -E '"(param_count|flops|bytes_read|bytes_written|grad_bytes|optimizer_state_bytes)"' > %t.after
// RUN: diff %t.before %t.after
// RUN: mw-opt %t.mlir --mw-bufferize --mw-memory-report=format=json -o /dev/null \
// RUN:   | grep -E '"(param_count|flops|grad_bytes|optimizer_state_bytes)"' > %t.views
// RUN: grep -vE '"bytes_(read|written)"' %t.before | diff - %t.views
// RUN: mw-opt %t.mlir --mw-train-pipeline --mw-memory-report -o /dev/null 2>/dev/null | FileCheck %s

// CHECK-LABEL: mw-memory-report @train_step
// CHECK:       arena                   [[A:[0-9]+]]
// CHECK-NEXT:  lower bound             [[A]]
// CHECK:       peak: {{.*}} live at op {{[0-9]+}} (mw.{{[a-z_]+}}), largest first:
// CHECK-NEXT:  {{.*}}iB  mw.{{[a-z_]+}}  loc(
