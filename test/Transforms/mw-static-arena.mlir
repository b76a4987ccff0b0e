// Every run checks its plan with --mw-verify-plan and every remark with
// -verify-diagnostics. Comments give each buffer's lifetime over the
// function's top-level op positions, bytes and offset, so the packing reads
// off the test. Buffers are named by the alloc's loc("name") (first test) or
// by an `mw.buffer` attribute on it (the others: a NameLoc would hide the
// file location -verify-diagnostics matches).
//
// RUN: mw-opt %s -split-input-file -verify-diagnostics --mw-static-arena=remarks=true --mw-verify-plan | FileCheck %s
// RUN: mw-opt %s -split-input-file -verify-diagnostics "--mw-static-arena=arena=argument remarks=true" --mw-verify-plan | FileCheck %s --check-prefix=ARG
// RUN: mw-opt %s -split-input-file -verify-diagnostics "--mw-static-arena=alignment=64 remarks=true" --mw-verify-plan | FileCheck %s --check-prefix=ALIGN
// RUN: mw-opt %s -split-input-file -verify-diagnostics "--mw-static-arena=strategy=naive remarks=true" --mw-verify-plan | FileCheck %s --check-prefix=NAIVE
// RUN: mw-opt %s -split-input-file -verify-diagnostics "--mw-static-arena=strategy=exact time-limit=5 remarks=true" --mw-verify-plan | FileCheck %s --check-prefix=EXACT
// Every other strategy gives a plan the check accepts.
// RUN: mw-opt %s -split-input-file -verify-diagnostics "--mw-static-arena=strategy=greedy-size remarks=true" --mw-verify-plan -o /dev/null
// RUN: mw-opt %s -split-input-file -verify-diagnostics "--mw-static-arena=strategy=greedy-breadth remarks=true" --mw-verify-plan -o /dev/null
// RUN: mw-opt %s -split-input-file -verify-diagnostics "--mw-static-arena=strategy=best-fit-size remarks=true" --mw-verify-plan -o /dev/null
// RUN: mw-opt %s -split-input-file -verify-diagnostics "--mw-static-arena=strategy=best-fit-time remarks=true" --mw-verify-plan -o /dev/null
// Deterministic: the same input gives the same IR byte for byte, in mw-opt
// and in stock mlir-opt with the plugin.
// RUN: mw-opt %s -split-input-file --mw-static-arena -o %t.first.mlir 2>/dev/null
// RUN: mw-opt %s -split-input-file --mw-static-arena -o %t.second.mlir 2>/dev/null
// RUN: diff %t.first.mlir %t.second.mlir
// RUN: %mlir_opt --load-pass-plugin=%mw_plugin --load-dialect-plugin=%mw_plugin -split-input-file \
// RUN:   --pass-pipeline="builtin.module(mw-static-arena)" %s -o %t.plugin.mlir 2>/dev/null
// RUN: diff %t.first.mlir %t.plugin.mlir
// RUN: mw-opt --help | FileCheck %s --check-prefix=HELP

// HELP:      --mw-plan-export
// HELP:      --mw-static-arena
// HELP-SAME: Place every transient buffer of a function at a fixed offset of one arena
// HELP:      --alignment=<long>
// HELP:      --arena=<string>
// HELP:      --strategy=<string>
// HELP:      --time-limit=<number>
// HELP:      --mw-verify-plan

// a: [0, 4) 1024 B -> +1024;  b: [2, 7) 1024 B -> +0;  c: [5, 8) 1024 B -> +1024 (reuse a).
// The deallocs go; one arena of 2048 B (= the lower bound) replaces them.
// CHECK-LABEL: func.func @chain(
// CHECK-SAME:      attributes {mw.arena_alignment = 256 : i64, mw.arena_size = 2048 : i64, mw.lower_bound = 2048 : i64}
// CHECK-NEXT:    %[[ARENA:.*]] = memref.alloc() {alignment = 256 : i64, mw.arena} : memref<2048xi8>
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C1024:.*]] = arith.constant 1024 : index
// CHECK-NEXT:    %[[A:.*]] = memref.view %[[ARENA]][%[[C1024]]][] {mw.buffer = "a"} : memref<2048xi8> to memref<256xf32>
// CHECK-NEXT:    memref.copy %{{.*}}, %[[A]]
// CHECK-NEXT:    %[[B:.*]] = memref.view %[[ARENA]][%[[C0]]][] {mw.buffer = "b"} : memref<2048xi8> to memref<256xf32>
// CHECK-NEXT:    memref.copy %[[A]], %[[B]]
// CHECK-NEXT:    %[[C:.*]] = memref.view %[[ARENA]][%[[C1024]]][] {mw.buffer = "c"} : memref<2048xi8> to memref<256xf32>
// CHECK-NEXT:    memref.copy %[[B]], %[[C]]
// CHECK-NEXT:    memref.copy %[[C]], %{{.*}}
// CHECK-NEXT:    memref.dealloc %[[ARENA]] : memref<2048xi8>
// CHECK-NEXT:    return
// The arena as a trailing argument: no alloc, no dealloc.
// ARG-LABEL: func.func @chain(
// ARG-SAME:      %[[ARENA:[^:]*]]: memref<2048xi8> {mw.arena})
// ARG-SAME:      attributes {mw.arena_alignment = 256 : i64, mw.arena_size = 2048 : i64, mw.lower_bound = 2048 : i64}
// ARG-NOT:       memref.alloc
// ARG:           memref.view %[[ARENA]][%{{.*}}][] {mw.buffer = "a"} : memref<2048xi8> to memref<256xf32>
// ARG-NOT:       memref.dealloc
// ARG:           return
// No reuse with strategy=naive: the arena (3072 B) is above the lower bound.
// NAIVE-LABEL: func.func @chain(
// NAIVE-SAME:      mw.arena_size = 3072 : i64, mw.lower_bound = 2048 : i64
// exact proves 2048 B optimal.
// EXACT-LABEL: func.func @chain(
// EXACT-SAME:      mw.arena_size = 2048 : i64, mw.lower_bound = 2048 : i64
func.func @chain(%in: memref<256xf32>, %out: memref<256xf32>) {
  %a = memref.alloc() : memref<256xf32> loc("a")
  memref.copy %in, %a : memref<256xf32> to memref<256xf32>
  %b = memref.alloc() : memref<256xf32> loc("b")
  memref.copy %a, %b : memref<256xf32> to memref<256xf32>
  memref.dealloc %a : memref<256xf32>
  %c = memref.alloc() : memref<256xf32> loc("c")
  memref.copy %b, %c : memref<256xf32> to memref<256xf32>
  memref.copy %c, %out : memref<256xf32> to memref<256xf32>
  memref.dealloc %b : memref<256xf32>
  memref.dealloc %c : memref<256xf32>
  return
}

// -----

// a: [0, 8) 1024 B -> +0 (its subview is read at op 7);  b: [2, 6) -> +2048;
// c: [4, 9) -> +1024. All three are live at ops 4 and 5: nothing is reused.
// CHECK-LABEL: func.func @subview_extends_life(
// CHECK-SAME:      mw.arena_size = 3072 : i64, mw.lower_bound = 3072 : i64
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1024:.*]] = arith.constant 1024 : index
// CHECK-DAG:     %[[C2048:.*]] = arith.constant 2048 : index
// CHECK:         %[[A:.*]] = memref.view %{{.*}}[%[[C0]]][] {mw.buffer = "a"}
// CHECK-NEXT:    memref.subview %[[A]][0] [16] [1]
// CHECK-NEXT:    memref.view %{{.*}}[%[[C2048]]][] {mw.buffer = "b"}
// CHECK:         memref.view %{{.*}}[%[[C1024]]][] {mw.buffer = "c"}
func.func @subview_extends_life(%in: memref<256xf32>, %out: memref<256xf32>) {
  %a = memref.alloc() {mw.buffer = "a"} : memref<256xf32>
  %head = memref.subview %a[0] [16] [1] : memref<256xf32> to memref<16xf32, strided<[1]>>
  %b = memref.alloc() {mw.buffer = "b"} : memref<256xf32>
  memref.copy %in, %b : memref<256xf32> to memref<256xf32>
  %c = memref.alloc() {mw.buffer = "c"} : memref<256xf32>
  memref.copy %b, %c : memref<256xf32> to memref<256xf32>
  %sum = memref.subview %out[0] [16] [1] : memref<256xf32> to memref<16xf32, strided<[1]>>
  memref.copy %head, %sum : memref<16xf32, strided<[1]>> to memref<16xf32, strided<[1]>>
  memref.copy %c, %out : memref<256xf32> to memref<256xf32>
  return
}

// -----

// A use inside a loop body counts at the loop (op 4): a: [2, 5) 256 B -> +256;
// b: [3, 7) -> +0;  c: [5, 8) -> +256 (reuse a).
// CHECK-LABEL: func.func @loop_use(
// CHECK-SAME:      mw.arena_size = 512 : i64, mw.lower_bound = 512 : i64
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C256:.*]] = arith.constant 256 : index
// CHECK:         %[[A:.*]] = memref.view %{{.*}}[%[[C256]]][] {mw.buffer = "a"}
// CHECK-NEXT:    %[[B:.*]] = memref.view %{{.*}}[%[[C0]]][] {mw.buffer = "b"}
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      memref.load %[[A]]
// CHECK-NEXT:      memref.load %[[B]]
// CHECK:         memref.view %{{.*}}[%[[C256]]][] {mw.buffer = "c"}
func.func @loop_use(%n: index, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() {mw.buffer = "a"} : memref<64xf32>
  %b = memref.alloc() {mw.buffer = "b"} : memref<64xf32>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %a[%i] : memref<64xf32>
    %w = memref.load %b[%i] : memref<64xf32>
    %s = arith.addf %v, %w : f32
    memref.store %s, %out[%i] : memref<64xf32>
  }
  %c = memref.alloc() {mw.buffer = "c"} : memref<64xf32>
  memref.copy %b, %c : memref<64xf32> to memref<64xf32>
  memref.copy %c, %out : memref<64xf32> to memref<64xf32>
  return
}

// -----

// The buffer returned through a cast is persistent: only t is planned,
// t: [0, 4) 40 B -> +0 in a 256 B arena.
// CHECK-LABEL: func.func @returned(
// CHECK-SAME:      mw.arena_size = 256 : i64, mw.lower_bound = 256 : i64
// CHECK:         memref.view %{{.*}}[%{{.*}}][] {mw.buffer = "t"} : memref<256xi8> to memref<10xf32>
// CHECK:         %[[R:.*]] = memref.alloc() {mw.buffer = "r"} : memref<10xf32>
// CHECK:         %[[CAST:.*]] = memref.cast %[[R]]
// CHECK:         memref.dealloc %{{.*}} : memref<256xi8>
// CHECK-NEXT:    return %[[CAST]]
func.func @returned(%in: memref<10xf32>) -> memref<?xf32> {
  %t = memref.alloc() {mw.buffer = "t"} : memref<10xf32>
  memref.copy %in, %t : memref<10xf32> to memref<10xf32>
  // expected-remark@+1 {{returned buffer is not planned: 'r'}}
  %r = memref.alloc() {mw.buffer = "r"} : memref<10xf32>
  memref.copy %t, %r : memref<10xf32> to memref<10xf32>
  %cast = memref.cast %r : memref<10xf32> to memref<?xf32>
  return %cast : memref<?xf32>
}

// -----

// x: [0, 4) 100 B;  y: [1, 5) 100 B. The default alignment rounds each to
// 256 B (+0, +256: 512 B); alignment=64 to 128 B (+0, +128: 256 B).
// CHECK-LABEL: func.func @alignment(
// CHECK-SAME:      mw.arena_size = 512 : i64, mw.lower_bound = 512 : i64
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C256:.*]] = arith.constant 256 : index
// CHECK:         memref.view %{{.*}}[%[[C0]]][] {mw.buffer = "x"} : memref<512xi8> to memref<25xf32>
// CHECK-NEXT:    memref.view %{{.*}}[%[[C256]]][] {mw.buffer = "y"} : memref<512xi8> to memref<25xf32>
// ALIGN-LABEL: func.func @alignment(
// ALIGN-SAME:      mw.arena_alignment = 64 : i64, mw.arena_size = 256 : i64, mw.lower_bound = 256 : i64
// ALIGN-NEXT:    memref.alloc() {alignment = 64 : i64, mw.arena} : memref<256xi8>
// ALIGN-DAG:     %[[C0:.*]] = arith.constant 0 : index
// ALIGN-DAG:     %[[C128:.*]] = arith.constant 128 : index
// ALIGN:         memref.view %{{.*}}[%[[C0]]][] {mw.buffer = "x"} : memref<256xi8> to memref<25xf32>
// ALIGN-NEXT:    memref.view %{{.*}}[%[[C128]]][] {mw.buffer = "y"} : memref<256xi8> to memref<25xf32>
func.func @alignment(%in: memref<25xf32>, %out: memref<25xf32>) {
  %x = memref.alloc() {mw.buffer = "x"} : memref<25xf32>
  %y = memref.alloc() {mw.buffer = "y"} : memref<25xf32>
  memref.copy %in, %x : memref<25xf32> to memref<25xf32>
  memref.copy %x, %y : memref<25xf32> to memref<25xf32>
  memref.copy %y, %out : memref<25xf32> to memref<25xf32>
  return
}

// -----

// Everything the pass cannot see through stays as it is, with a remark that
// names it; the one transient buffer (ok: [13, 15) 32 B -> +0) is planned.
// CHECK-LABEL: func.func @unplanned(
// CHECK-SAME:      mw.arena_size = 256 : i64
// CHECK:         call @consume(%{{.*}})
// CHECK:         memref.alloc() {mw.buffer = "stored"}
// CHECK:         memref.alloca() {mw.buffer = "stack"}
// CHECK:         memref.alloc(%{{.*}}) {mw.buffer = "dynamic"}
// CHECK:         memref.alloc() {mw.buffer = "strided"}
// CHECK:         memref.alloc() {mw.buffer = "space"}
// CHECK:         memref.alloc() {alignment = 512 : i64, mw.buffer = "aligned"}
// CHECK:         memref.alloc() {mw.buffer = "in_loop"}
// CHECK:         memref.alloc() {mw.buffer = "in_if"}
// CHECK:         memref.view %{{.*}}[%{{.*}}][] {mw.buffer = "ok"}
func.func private @consume(memref<8xf32>)
func.func @unplanned(%n: index, %m: memref<memref<8xf32>>, %cond: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-remark@+1 {{buffer escaping into 'func.call' is not planned: 'called'}}
  %called = memref.alloc() {mw.buffer = "called"} : memref<8xf32>
  func.call @consume(%called) : (memref<8xf32>) -> ()
  // expected-remark@+1 {{buffer escaping into 'memref.store' is not planned: 'stored'}}
  %stored = memref.alloc() {mw.buffer = "stored"} : memref<8xf32>
  memref.store %stored, %m[] : memref<memref<8xf32>>
  // expected-remark@+1 {{stack allocation (memref.alloca) is not planned: 'stack'}}
  %stack = memref.alloca() {mw.buffer = "stack"} : memref<8xf32>
  // expected-remark@+1 {{allocation with dynamic sizes is not planned: 'dynamic'}}
  %dynamic = memref.alloc(%n) {mw.buffer = "dynamic"} : memref<?xf32>
  // expected-remark@+1 {{allocation with a non-identity layout is not planned: 'strided'}}
  %strided = memref.alloc() {mw.buffer = "strided"} : memref<8xf32, strided<[1], offset: 4>>
  // expected-remark@+1 {{allocation in a non-default memory space is not planned: 'space'}}
  %space = memref.alloc() {mw.buffer = "space"} : memref<8xf32, 1>
  // expected-remark-re@+1 {{allocation aligned to 512 bytes, above the arena's alignment of {{[0-9]+}}, is not planned: 'aligned'}}
  %aligned = memref.alloc() {alignment = 512 : i64, mw.buffer = "aligned"} : memref<8xf32>
  scf.for %i = %c0 to %n step %c1 {
    // expected-remark@+1 {{allocation inside a loop body is not planned: 'in_loop'}}
    %t = memref.alloc() {mw.buffer = "in_loop"} : memref<8xf32>
    memref.dealloc %t : memref<8xf32>
  }
  scf.if %cond {
    // expected-remark@+1 {{allocation inside a region of 'scf.if' is not planned: 'in_if'}}
    %t = memref.alloc() {mw.buffer = "in_if"} : memref<8xf32>
    memref.dealloc %t : memref<8xf32>
  }
  %ok = memref.alloc() {mw.buffer = "ok"} : memref<8xf32>
  memref.copy %ok, %stack : memref<8xf32> to memref<8xf32>
  return
}

// -----

// Nothing to plan: the function is left alone.
// CHECK-LABEL: func.func @nothing(
// CHECK-NOT:     mw.arena
// CHECK:         return
func.func @nothing(%in: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %v = memref.load %in[%c0] : memref<4xf32>
  return %v : f32
}

// -----

// In a function with several blocks, entry-block buffers used only in the
// entry block are planned (a: [0, 3) -> +0); b is used in ^bb1 and stays.
// The arena is freed before each return.
// CHECK-LABEL: func.func @blocks(
// CHECK-SAME:      mw.arena_size = 256 : i64
// CHECK:         %[[ARENA:.*]] = memref.alloc() {alignment = 256 : i64, mw.arena} : memref<256xi8>
// CHECK:         memref.view %[[ARENA]][%{{.*}}][] {mw.buffer = "a"}
// CHECK:         memref.alloc() {mw.buffer = "b"}
// CHECK:       ^bb1:
// CHECK:         memref.dealloc %[[ARENA]]
// CHECK-NEXT:    return
// CHECK:       ^bb2:
// CHECK-NEXT:    memref.dealloc %[[ARENA]]
// CHECK-NEXT:    return
func.func @blocks(%c: i1, %out: memref<4xf32>) {
  %a = memref.alloc() {mw.buffer = "a"} : memref<4xf32>
  // expected-remark@+1 {{buffer used outside the entry block is not planned: 'b'}}
  %b = memref.alloc() {mw.buffer = "b"} : memref<4xf32>
  memref.copy %a, %out : memref<4xf32> to memref<4xf32>
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  memref.copy %b, %out : memref<4xf32> to memref<4xf32>
  return
^bb2:
  return
}

// -----

// A deallocation in a nested region is erased like the others (a: [0, 2),
// 16 B -> +0). Unnamed buffers are buffer<N>, N in op order.
// CHECK-LABEL: func.func @conditional_dealloc(
// CHECK:         memref.view %{{.*}}[%{{.*}}][] {mw.buffer = "buffer0"} : memref<256xi8> to memref<4xf32>
// CHECK:         scf.if
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %{{.*}} : memref<256xi8>
// CHECK-NEXT:    return
func.func @conditional_dealloc(%c: i1, %out: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  memref.copy %a, %out : memref<4xf32> to memref<4xf32>
  scf.if %c {
    memref.dealloc %a : memref<4xf32>
  }
  return
}

// -----

// A function planned before is not planned again (its arena alloc would
// otherwise look like one more buffer).
// CHECK-LABEL: func.func @planned(
// CHECK-SAME:      attributes {mw.arena_size = 256 : i64}
// CHECK-NEXT:    arith.constant
// CHECK-NEXT:    memref.alloc() {mw.arena} : memref<256xi8>
// expected-remark@+1 {{function @planned is already planned (mw.arena_size); not planned again}}
func.func @planned(%out: memref<4xf32>) attributes {mw.arena_size = 256 : i64} {
  %c0 = arith.constant 0 : index
  %arena = memref.alloc() {mw.arena} : memref<256xi8>
  %a = memref.view %arena[%c0][] : memref<256xi8> to memref<4xf32>
  memref.copy %a, %out : memref<4xf32> to memref<4xf32>
  memref.dealloc %arena : memref<256xi8>
  return
}

// -----

// Beside mw ops (the mw dialect verifies the `mw.arena` argument).
// CHECK-LABEL: func.func @with_mw_ops(
// CHECK-SAME:      mw.arena_size = 256 : i64
// ARG-LABEL: func.func @with_mw_ops(
// ARG-SAME:      %{{[^:]*}}: memref<256xi8> {mw.arena}) -> tensor<4x16xf32>
func.func @with_mw_ops(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>,
                       %out: memref<4xf32>) -> tensor<4x16xf32> {
  %t = memref.alloc() : memref<4xf32>
  memref.copy %t, %out : memref<4xf32> to memref<4xf32>
  %y = mw.matmul %x, %w {transpose_rhs} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
