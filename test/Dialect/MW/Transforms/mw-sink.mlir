// --mw-sink moves an op toward its first reader when that lowers the peak of
// live tensor bytes (each top-level result a buffer from its op to its last
// reader; a result written over an operand that dies there shares its
// buffer; function arguments not counted), and only then.
// RUN: mw-opt %s -split-input-file --mw-sink | FileCheck %s
// RUN: mw-opt %s -split-input-file --mw-sink=report -o /dev/null | FileCheck %s --check-prefix=REPORT
// Only the order changes: mw-eval gives the same outputs, bit for bit.
// RUN: mw-eval %S/Inputs/mw-sink-eval.mlir --entry sink --random-inputs 3 --save-inputs %t.in --print > %t.ref
// RUN: mw-opt %S/Inputs/mw-sink-eval.mlir --mw-sink -o %t.after.mlir
// RUN: mw-eval %t.after.mlir --entry sink --inputs %t.in --print | diff %t.ref -
// Bufferized IR (ops with memory effects) is left alone.
// RUN: mw-opt %s -split-input-file --mw-bufferize --mw-sink=report -o /dev/null | FileCheck %s --check-prefix=BUF --allow-empty
// BUF-NOT: mw-sink

// %big (16 KiB) is computed first and read last; the tanh and the matmul
// between need 32 KiB. Before: 48 KiB live at the matmul (%big, %c, %d).
// After: %big comes just before the add, which writes over it (it dies
// there): 32 KiB at most.
// CHECK-LABEL: func.func @sink
// CHECK:       mw.tanh
// CHECK-NEXT:  mw.matmul
// CHECK-NEXT:  mw.exp
// CHECK-NEXT:  mw.add
// REPORT: mw-sink @sink: 1 ops moved, live tensor peak 49152 -> 32768 bytes
func.func @sink(%a: tensor<64x64xf32>, %x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %big = mw.exp %a : tensor<64x64xf32>
  %c = mw.tanh %x : tensor<64x64xf32>
  %d = mw.matmul %c, %c : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %e = mw.add %big, %d : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %e : tensor<64x64xf32>
}

// -----

// The exp reads %w, which the SGD update overwrites in place: it sinks only
// to just before the update (past it, One-Shot Bufferize would copy %w),
// which still lowers the peak (48 KiB at the matmul, then 32 KiB).
// CHECK-LABEL: func.func @sink_before_update
// CHECK:       mw.tanh
// CHECK-NEXT:  mw.matmul
// CHECK-NEXT:  mw.exp %arg0
// CHECK-NEXT:  mw.sgd %arg0
// CHECK-NEXT:  mw.add
// REPORT: mw-sink @sink_before_update: 1 ops moved, live tensor peak 49152 -> 32768 bytes
func.func @sink_before_update(%w: tensor<64x64xf32>, %x: tensor<64x64xf32>, %g: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %big = mw.exp %w : tensor<64x64xf32>
  %c = mw.tanh %x : tensor<64x64xf32>
  %d = mw.matmul %c, %c : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %w1 = mw.sgd %w, %g {lr = 1.0e-02 : f64} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %e = mw.add %big, %d : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %e, %w1 : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// Not moved: the reduction's result is smaller than the operand it is the
// last reader of; moving it would keep %y (16 KiB) live across the matmul.
// CHECK-LABEL: func.func @keep_small_result
// CHECK:       mw.exp
// CHECK-NEXT:  mw.reduce_sum
// CHECK-NEXT:  mw.tanh
// CHECK-NEXT:  mw.matmul
// REPORT-NOT: @keep_small_result
func.func @keep_small_result(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> (tensor<64xf32>, tensor<64x64xf32>) {
  %y = mw.exp %x : tensor<64x64xf32>
  %s = mw.reduce_sum %y axes = [1] : tensor<64x64xf32> -> tensor<64xf32>
  %c = mw.tanh %w : tensor<64x64xf32>
  %d = mw.matmul %c, %c : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %t = mw.add %s, %s : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %t, %d : tensor<64xf32>, tensor<64x64xf32>
}

// -----

// Not moved: the peak (the matmul's, 48 KiB) comes after %big's first
// reader, so moving %big toward it cannot lower it.
// CHECK-LABEL: func.func @peak_elsewhere
// CHECK:       mw.exp
// CHECK-NEXT:  mw.neg
// CHECK-NEXT:  mw.add
// CHECK-NEXT:  mw.tanh
// CHECK-NEXT:  mw.matmul
// REPORT-NOT: @peak_elsewhere
func.func @peak_elsewhere(%a: tensor<64x64xf32>, %x: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %big = mw.exp %a : tensor<64x64xf32>
  %n = mw.neg %x : tensor<64x64xf32>
  %e = mw.add %big, %n : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %c = mw.tanh %x : tensor<64x64xf32>
  %d = mw.matmul %c, %c : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %e, %d : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// Not moved: moving the small %s (16 B) toward its reader would lower the
// 32 KiB peak (the matmul's) by 16 bytes, less than 1/1024 of it.
// CHECK-LABEL: func.func @below_min_gain
// CHECK:       mw.exp
// CHECK-NEXT:  mw.tanh
// CHECK-NEXT:  mw.matmul
// REPORT-NOT: @below_min_gain
func.func @below_min_gain(%a: tensor<4xf32>, %x: tensor<64x64xf32>) -> (tensor<4xf32>, tensor<64x64xf32>) {
  %s = mw.exp %a : tensor<4xf32>
  %c = mw.tanh %x : tensor<64x64xf32>
  %d = mw.matmul %c, %c : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %n = mw.neg %d : tensor<64x64xf32>
  %t = mw.add %s, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %t, %n : tensor<4xf32>, tensor<64x64xf32>
}

// -----

// An optimizer update writes its results into the parameter and states it
// replaces (function arguments: persistent, not counted), so the peak is the
// matmul's and the gradient %g moves to just before the update.
// CHECK-LABEL: func.func @update_in_place
// CHECK:       mw.tanh
// CHECK-NEXT:  mw.matmul
// CHECK-NEXT:  mw.exp
// CHECK-NEXT:  mw.adamw
// REPORT: mw-sink @update_in_place: 1 ops moved, live tensor peak 49152 -> 32768 bytes
func.func @update_in_place(%p: tensor<64x64xf32>, %m: tensor<64x64xf32>, %v: tensor<64x64xf32>, %t: tensor<i64>,
                           %a: tensor<64x64xf32>, %x: tensor<64x64xf32>)
    -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {
  %g = mw.exp %a : tensor<64x64xf32>
  %c = mw.tanh %x : tensor<64x64xf32>
  %d = mw.matmul %c, %c : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %p1, %m1, %v1 = mw.adamw %p, %g, %m, %v, %t : (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<i64>) -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>)
  return %p1, %m1, %v1, %d : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
}
