// The liveness rules --mw-static-arena plans with: positions are the
// indices of the entry block's top-level ops; a buffer lives over
// [its alloc, its last use + 1).
// RUN: mw-opt %s -split-input-file --mw-test-print-buffer-liveness -o /dev/null | FileCheck %s

// memref.dealloc is not a use: a's last use is the copy at op 3.
// CHECK-LABEL: buffer liveness of @chain: 11 ops
// CHECK-NEXT:    a: 1024 B, [0, 4)
// CHECK-NEXT:    b: 1024 B, [2, 7)
// CHECK-NEXT:    c: 1024 B, [5, 8)
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

// Uses through subview, collapse_shape + cast, view + reinterpret_cast and
// expand_shape are uses of the root: a's subview is read at op 13.
// CHECK-LABEL: buffer liveness of @views: 16 ops
// CHECK-NEXT:    a: 128 B, [1, 14)
// CHECK-NEXT:    b: 64 B, [5, 13)
// CHECK-NEXT:    raw: 64 B, [8, 13)
func.func @views(%in: memref<4x8xf32>, %out: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<4x8xf32> loc("a")
  %sub = memref.subview %a[0, 0] [2, 8] [1, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[8, 1]>>
  %flat = memref.collapse_shape %a [[0, 1]] : memref<4x8xf32> into memref<32xf32>
  %cast = memref.cast %flat : memref<32xf32> to memref<?xf32>
  %b = memref.alloc() : memref<16xf32> loc("b")
  %v = memref.load %cast[%c0] : memref<?xf32>
  memref.store %v, %b[%c0] : memref<16xf32>
  %raw = memref.alloc() : memref<64xi8> loc("raw")
  %typed = memref.view %raw[%c0][] : memref<64xi8> to memref<16xf32>
  %r = memref.reinterpret_cast %typed to offset: [0], sizes: [4, 4], strides: [4, 1] : memref<16xf32> to memref<4x4xf32>
  %e = memref.expand_shape %b [[0, 1]] output_shape [4, 4] : memref<16xf32> into memref<4x4xf32>
  memref.copy %e, %r : memref<4x4xf32> to memref<4x4xf32>
  %w = memref.load %sub[%c0, %c0] : memref<2x8xf32, strided<[8, 1]>>
  memref.store %w, %out[%c0] : memref<32xf32>
  return
}

// -----

// Uses in a loop body count at the loop (op 4), uses in an scf.if at the
// scf.if (op 6). Allocations inside regions are not planned.
// CHECK-LABEL: buffer liveness of @nested: 9 ops
// CHECK-NEXT:    a: 256 B, [2, 5)
// CHECK-NEXT:    b: 256 B, [3, 7)
// CHECK-NEXT:    in_if: 256 B, not planned (allocation inside a region of 'scf.if')
// CHECK-NEXT:    in_loop: 256 B, not planned (allocation inside a loop body)
func.func @nested(%n: index, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<64xf32> loc("a")
  %b = memref.alloc() : memref<64xf32> loc("b")
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %a[%i] : memref<64xf32>
    memref.store %v, %out[%i] : memref<64xf32>
  }
  %cond = arith.cmpi eq, %n, %c0 : index
  scf.if %cond {
    %t = memref.alloc() : memref<64xf32> loc("in_if")
    memref.copy %b, %t : memref<64xf32> to memref<64xf32>
    memref.dealloc %t : memref<64xf32>
  }
  scf.for %i = %c0 to %n step %c1 {
    %t = memref.alloc() : memref<64xf32> loc("in_loop")
    memref.dealloc %t : memref<64xf32>
  }
  return
}

// -----

// Returned (through a cast), or escaping: into a call, stored as a value,
// its address taken, aliased by a tensor or a select.
// CHECK-LABEL: buffer liveness of @not_transient: 17 ops
// CHECK-NEXT:    ret: 32 B, not planned (returned buffer)
// CHECK-NEXT:    called: 32 B, not planned (buffer escaping into 'func.call')
// CHECK-NEXT:    stored: 32 B, not planned (buffer escaping into 'memref.store')
// CHECK-NEXT:    ptr: 32 B, not planned (buffer escaping into 'memref.extract_aligned_pointer_as_index')
// CHECK-NEXT:    stack: 32 B, not planned (stack allocation (memref.alloca))
// CHECK-NEXT:    dyn: 0 B, not planned (allocation with dynamic sizes)
// CHECK-NEXT:    strided: 0 B, not planned (allocation with a non-identity layout)
// CHECK-NEXT:    space: 32 B, not planned (allocation in a non-default memory space)
// CHECK-NEXT:    tensor: 32 B, not planned (buffer escaping into 'bufferization.to_tensor')
// CHECK-NEXT:    selected: 32 B, not planned (buffer escaping into 'arith.select')
func.func private @use(memref<8xf32>)

func.func @not_transient(%n: index, %m: memref<memref<8xf32>>, %c: i1) -> memref<8xf32> {
  %ret = memref.alloc() : memref<8xf32> loc("ret")
  %called = memref.alloc() : memref<8xf32> loc("called")
  func.call @use(%called) : (memref<8xf32>) -> ()
  %stored = memref.alloc() : memref<8xf32> loc("stored")
  memref.store %stored, %m[] : memref<memref<8xf32>>
  %ptr = memref.alloc() : memref<8xf32> loc("ptr")
  %p = memref.extract_aligned_pointer_as_index %ptr : memref<8xf32> -> index
  %stack = memref.alloca() : memref<8xf32> loc("stack")
  %dyn = memref.alloc(%n) : memref<?xf32> loc("dyn")
  %strided = memref.alloc() : memref<8xf32, strided<[1], offset: 4>> loc("strided")
  %space = memref.alloc() : memref<8xf32, 1> loc("space")
  %tensor = memref.alloc() : memref<8xf32> loc("tensor")
  %t = bufferization.to_tensor %tensor restrict : memref<8xf32>
  %selected = memref.alloc() : memref<8xf32> loc("selected")
  %s = arith.select %c, %selected, %ptr : memref<8xf32>
  %cast = memref.cast %ret : memref<8xf32> to memref<8xf32>
  return %cast : memref<8xf32>
}

// -----

// Element sizes as the LLVM lowering lays them out: i1 takes a byte,
// vector<3xf32> 16 (its ABI alignment). Unused buffers live over their alloc;
// unnamed ones are buffer<N>; a repeated name gets a suffix.
// CHECK-LABEL: buffer liveness of @sizes: 7 ops
// CHECK-NEXT:    buffer0: 10 B, [0, 1)
// CHECK-NEXT:    buffer1: 24 B, [1, 2)
// CHECK-NEXT:    buffer2: 32 B, [2, 3)
// CHECK-NEXT:    buffer3: 32 B, [3, 4)
// CHECK-NEXT:    t: 2 B, [4, 5)
// CHECK-NEXT:    t_1: 0 B, [5, 6)
func.func @sizes() {
  %a = memref.alloc() : memref<10xi1>
  %b = memref.alloc() : memref<3xindex>
  %c = memref.alloc() : memref<2xvector<3xf32>>
  %d = memref.alloc() : memref<2x2xcomplex<f32>>
  %e = memref.alloc() : memref<bf16> loc("t")
  %f = memref.alloc() : memref<0xf64> loc("t")
  return
}

// -----

// Only the entry block is numbered; a buffer used in another block, or
// allocated there, is not planned; b's dealloc in ^bb1 is not a use.
// CHECK-LABEL: buffer liveness of @blocks: 3 ops
// CHECK-NEXT:    a: 16 B, not planned (buffer used outside the entry block)
// CHECK-NEXT:    b: 16 B, [1, 2)
// CHECK-NEXT:    x: 16 B, not planned (allocation outside the entry block)
// CHECK-NEXT:    z: 16 B, not planned (allocation outside the entry block)
func.func @blocks(%c: i1) {
  %a = memref.alloc() : memref<4xf32> loc("a")
  %b = memref.alloc() : memref<4xf32> loc("b")
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  %x = memref.alloc() : memref<4xf32> loc("x")
  memref.dealloc %b : memref<4xf32>
  cf.br ^bb2
^bb2:
  %z = memref.alloc() : memref<4xf32> loc("z")
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<4xf32>
  return
}
