// What a plan cannot hold is an error at the op (or argument) that names it,
// the exit status is non-zero and no output file is left behind.
// RUN: mw-translate %s -split-input-file -verify-diagnostics --mw-to-plan -o /dev/null
// RUN: not mw-translate %s -split-input-file --mw-to-plan -o %t.mwplan 2>&1 | FileCheck %s
// RUN: not test -e %t.mwplan

// CHECK-COUNT-19: error:
// CHECK-NOT:      error:

// expected-error@+1 {{@unplanned is not planned (no mw.arena_size): run mw-opt --mw-bufferize --mw-static-arena first}}
func.func @unplanned(%x: memref<4xf32>) -> memref<4xf32> {
  %y = memref.alloc() : memref<4xf32>
  mw.kernel ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    %0 = mw.neg %a : tensor<4xf32>
    mw.yield %0 : tensor<4xf32>
  }
  return %y : memref<4xf32>
}

// -----

// A fused kernel of none of the runtime's kinds (docs/fusion.md): integers.
func.func @fused_integers(%x: memref<4xi32>)
    attributes {mw.arena_size = 256 : i64, mw.arena_alignment = 256 : i64,
                mw.lower_bound = 256 : i64} {
  %arena = memref.alloc() {mw.arena} : memref<256xi8>
  %c0 = arith.constant 0 : index
  %v = memref.view %arena[%c0][] : memref<256xi8> to memref<4xi32>
  // expected-error@+1 {{'mw.kernel' op fuses 2 ops into a kernel of none of the kinds the runtime runs (loop, row, matmul, horizontal): 'mw.neg' computes integers; fused kernels compute floats}}
  mw.kernel ins(%x : memref<4xi32>) outs(%v : memref<4xi32>) {
  ^bb0(%a: tensor<4xi32>):
    %0 = mw.neg %a : tensor<4xi32>
    %1 = mw.neg %0 : tensor<4xi32>
    mw.yield %1 : tensor<4xi32>
  }
  memref.dealloc %arena : memref<256xi8>
  return
}

// -----

// A matmul that is not its kernel's first op.
func.func @fused_late_matmul(%x: memref<4x4xf32>)
    attributes {mw.arena_size = 256 : i64, mw.arena_alignment = 256 : i64,
                mw.lower_bound = 256 : i64} {
  %arena = memref.alloc() {mw.arena} : memref<256xi8>
  %c0 = arith.constant 0 : index
  %v = memref.view %arena[%c0][] : memref<256xi8> to memref<4x4xf32>
  // expected-error@+1 {{'mw.kernel' op fuses 2 ops into a kernel of none of the kinds the runtime runs (loop, row, matmul, horizontal): 'mw.neg' is first; a matmul kernel has one mw.matmul, its first op}}
  mw.kernel ins(%x : memref<4x4xf32>) outs(%v : memref<4x4xf32>) {
  ^bb0(%a: tensor<4x4xf32>):
    %0 = mw.neg %a : tensor<4x4xf32>
    %1 = mw.matmul %0, %a : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    mw.yield %1 : tensor<4x4xf32>
  }
  memref.dealloc %arena : memref<256xi8>
  return
}

// -----

// An op that is never fused, beside an elementwise one.
func.func @fused_unfusable(%x: memref<4x4xf32>)
    attributes {mw.arena_size = 256 : i64, mw.arena_alignment = 256 : i64,
                mw.lower_bound = 256 : i64} {
  %arena = memref.alloc() {mw.arena} : memref<256xi8>
  %c0 = arith.constant 0 : index
  %v = memref.view %arena[%c0][] : memref<256xi8> to memref<4x4xf32>
  // expected-error@+1 {{'mw.kernel' op fuses 2 ops into a kernel of none of the kinds the runtime runs (loop, row, matmul, horizontal): 'mw.softmax' does not reduce over the last axis only}}
  mw.kernel ins(%x : memref<4x4xf32>) outs(%v : memref<4x4xf32>) {
  ^bb0(%a: tensor<4x4xf32>):
    %0 = mw.neg %a : tensor<4x4xf32>
    %1 = mw.softmax %0 axis = 0 : tensor<4x4xf32>
    mw.yield %1 : tensor<4x4xf32>
  }
  memref.dealloc %arena : memref<256xi8>
  return
}

// -----

func.func @copy(%x: memref<4xf32>)
    attributes {mw.arena_size = 256 : i64, mw.arena_alignment = 256 : i64,
                mw.lower_bound = 256 : i64} {
  %arena = memref.alloc() {mw.arena} : memref<256xi8>
  %c0 = arith.constant 0 : index
  %v = memref.view %arena[%c0][] : memref<256xi8> to memref<4xf32>
  // expected-error@+1 {{'memref.copy' op cannot be part of a plan: mw-translate takes mw.kernel, memref.alloc/view/dealloc, static memref views and arith.constant}}
  memref.copy %x, %v : memref<4xf32> to memref<4xf32>
  memref.dealloc %arena : memref<256xi8>
  return
}

// -----

func.func @transient(%x: memref<4xf32>)
    attributes {mw.arena_size = 256 : i64, mw.arena_alignment = 256 : i64,
                mw.lower_bound = 256 : i64} {
  %arena = memref.alloc() {mw.arena} : memref<256xi8>
  // expected-error@+1 {{'memref.alloc' op is a transient buffer outside the arena: a plan holds only arena views and persistent buffers (plan it with --mw-static-arena)}}
  %t = memref.alloc() : memref<4xf32>
  memref.dealloc %t : memref<4xf32>
  memref.dealloc %arena : memref<256xi8>
  return
}

// -----

func.func @dynamic(
    // expected-error@+1 {{argument #0 of @dynamic has a dynamic shape: 'memref<?xf32>'}}
    %x: memref<?xf32>)
    attributes {mw.arena_size = 0 : i64, mw.arena_alignment = 256 : i64,
                mw.lower_bound = 0 : i64} {
  return
}

// -----

func.func @f64(
    // expected-error@+1 {{argument #0 of @f64 has an element type the runtime does not take: 'memref<4xf64>' (f32, f16, bf16, i32, i64, i8, f8E4M3FN)}}
    %x: memref<4xf64>)
    attributes {mw.arena_size = 0 : i64, mw.arena_alignment = 256 : i64,
                mw.lower_bound = 0 : i64} {
  return
}

// -----

func.func @dynamic_layout(%x: memref<8xf32>)
    attributes {mw.arena_size = 0 : i64, mw.arena_alignment = 256 : i64,
                mw.lower_bound = 0 : i64} {
  // expected-error@+1 {{'memref.cast' op result has a non-static layout: 'memref<8xf32, strided<[?], offset: ?>>'}}
  %c = memref.cast %x : memref<8xf32> to memref<8xf32, strided<[?], offset: ?>>
  return
}

// -----

func.func @outside(%x: memref<16xf32>)
    attributes {mw.arena_size = 1024 : i64, mw.arena_alignment = 256 : i64,
                mw.lower_bound = 1024 : i64} {
  %arena = memref.alloc() {mw.arena} : memref<1024xi8>
  %c1000 = arith.constant 1000 : index
  %v = memref.view %arena[%c1000][] : memref<1024xi8> to memref<16xf32>
  // expected-error@+1 {{'mw.kernel' op operand 'memref<16xf32>' reaches outside its buffer}}
  mw.kernel ins(%x : memref<16xf32>) outs(%v : memref<16xf32>) {
  ^bb0(%a: tensor<16xf32>):
    %0 = mw.neg %a : tensor<16xf32>
    mw.yield %0 : tensor<16xf32>
  }
  memref.dealloc %arena : memref<1024xi8>
  return
}

// -----

func.func @misaligned(%x: memref<4xf32>)
    attributes {mw.arena_size = 256 : i64, mw.arena_alignment = 256 : i64,
                mw.lower_bound = 256 : i64} {
  %arena = memref.alloc() {mw.arena} : memref<256xi8>
  %c2 = arith.constant 2 : index
  // expected-error@+1 {{'memref.view' op byte shift 2 is not a multiple of the element size}}
  %v = memref.view %arena[%c2][] : memref<256xi8> to memref<4xf32>
  memref.dealloc %arena : memref<256xi8>
  return
}

// -----

func.func @arena_size(%x: memref<4xf32>)
    attributes {mw.arena_size = 512 : i64, mw.arena_alignment = 256 : i64,
                mw.lower_bound = 256 : i64} {
  // expected-error@+1 {{'memref.alloc' op arena has 256 bytes but mw.arena_size is 512}}
  %arena = memref.alloc() {mw.arena} : memref<256xi8>
  memref.dealloc %arena : memref<256xi8>
  return
}

// -----

func.func @missing_alignment(%x: memref<4xf32>)
    // expected-error@-1 {{@missing_alignment has no non-negative integer mw.arena_alignment: plan it with mw-opt --mw-static-arena}}
    attributes {mw.arena_size = 256 : i64, mw.lower_bound = 256 : i64} {
  %arena = memref.alloc() {mw.arena} : memref<256xi8>
  memref.dealloc %arena : memref<256xi8>
  return
}

// -----

// The dialect verifier rejects two equal mw.name attributes; a default name
// may still meet an explicit one.
func.func @same_argument_names(
    %a: memref<4xf32>,
    // expected-error@+1 {{argument #1 of @same_argument_names is named 'arg0' like an earlier argument: the runtime binds arguments by name}}
    %b: memref<4xf32> {mw.name = "arg0"})
    attributes {mw.arena_size = 0 : i64, mw.arena_alignment = 256 : i64,
                mw.lower_bound = 0 : i64} {
  return
}

// -----

func.func @same_result_names(%a: memref<4xf32>, %b: memref<4xf32>)
    -> (memref<4xf32> {mw.name = "result1"}, memref<4xf32>)
    attributes {mw.arena_size = 0 : i64, mw.arena_alignment = 256 : i64,
                mw.lower_bound = 0 : i64} {
  // expected-error@+1 {{'func.return' op result #1 is named 'result1' like an earlier result: the runtime binds results by name}}
  return %a, %b : memref<4xf32>, memref<4xf32>
}

// -----

// Offloaded weights (docs/offload.md): only an mw.fetch reads one.
func.func @offloaded_read_by_kernel(
    %w: memref<4xf32> {mw.name = "w", mw.role = #mw.role<param>, mw.offload = "cpu"})
    attributes {mw.arena_size = 256 : i64, mw.arena_alignment = 256 : i64,
                mw.lower_bound = 256 : i64} {
  %arena = memref.alloc() {mw.arena} : memref<256xi8>
  %c0 = arith.constant 0 : index
  %v = memref.view %arena[%c0][] : memref<256xi8> to memref<4xf32>
  // expected-error@+1 {{'mw.kernel' op runs 'mw.neg' on 'w', which is offloaded to host memory: only an mw.fetch may read it}}
  mw.kernel ins(%w : memref<4xf32>) outs(%v : memref<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    %0 = mw.neg %a : tensor<4xf32>
    mw.yield %0 : tensor<4xf32>
  }
  memref.dealloc %arena : memref<256xi8>
  return
}

// -----

func.func @offloaded_read_by_fused_kernel(
    %w: memref<4xf32> {mw.name = "w", mw.role = #mw.role<param>, mw.offload = "nvme"})
    attributes {mw.arena_size = 256 : i64, mw.arena_alignment = 256 : i64,
                mw.lower_bound = 256 : i64} {
  %arena = memref.alloc() {mw.arena} : memref<256xi8>
  %c0 = arith.constant 0 : index
  %v = memref.view %arena[%c0][] : memref<256xi8> to memref<4xf32>
  // expected-error@+1 {{'mw.kernel' op runs 'mw.fusion' on 'w', which is offloaded to a weights file: only an mw.fetch may read it}}
  mw.kernel ins(%w : memref<4xf32>) outs(%v : memref<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    %0 = mw.neg %a : tensor<4xf32>
    %1 = mw.exp %0 : tensor<4xf32>
    mw.yield %1 : tensor<4xf32>
  }
  memref.dealloc %arena : memref<256xi8>
  return
}

// -----

func.func @fetch_of_device_tensor(%w: memref<4xf32> {mw.name = "w", mw.role = #mw.role<param>})
    attributes {mw.arena_size = 256 : i64, mw.arena_alignment = 256 : i64,
                mw.lower_bound = 256 : i64} {
  %arena = memref.alloc() {mw.arena} : memref<256xi8>
  %c0 = arith.constant 0 : index
  %v = memref.view %arena[%c0][] : memref<256xi8> to memref<4xf32>
  // expected-error@+1 {{'mw.kernel' op runs mw.fetch on a tensor in device memory: a fetch copies an offloaded (host or file) weight, mw.offload, into the arena}}
  mw.kernel ins(%w : memref<4xf32>) outs(%v : memref<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    %0 = mw.fetch %a {layer = 0 : i64} : tensor<4xf32>
    mw.yield %0 : tensor<4xf32>
  }
  memref.dealloc %arena : memref<256xi8>
  return
}

// -----

// expected-error@+1 {{@bad_offload_settings has an mw.offload without a non-negative integer prefetch}}
func.func @bad_offload_settings(%w: memref<4xf32> {mw.name = "w", mw.role = #mw.role<param>})
    attributes {mw.arena_size = 0 : i64, mw.arena_alignment = 256 : i64,
                mw.lower_bound = 0 : i64,
                mw.offload = {weights = "cpu", prefetch = -1 : i64}} {
  return
}
