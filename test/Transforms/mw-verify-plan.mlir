// --mw-verify-plan checks a plan from the IR alone: hand-written plans,
// good and broken, each error naming what is wrong and where.
// RUN: mw-opt %s -split-input-file -verify-diagnostics --mw-verify-plan | FileCheck %s

// A valid plan is left unchanged. a: [3, 7) 1024 B at +0;  b: [4, 9) at
// +1024;  c: [7, 10) at +0 (a is dead from op 7 on).
// CHECK-LABEL: func.func @valid(
// CHECK:         memref.view %{{.*}}[%{{.*}}][] {mw.buffer = "a"}
func.func @valid(%in: memref<256xf32>, %out: memref<256xf32>)
    attributes {mw.arena_size = 2048 : i64, mw.arena_alignment = 256 : i64,
                mw.lower_bound = 2048 : i64} {
  %arena = memref.alloc() {mw.arena} : memref<2048xi8>
  %c0 = arith.constant 0 : index
  %c1024 = arith.constant 1024 : index
  %a = memref.view %arena[%c0][] {mw.buffer = "a"} : memref<2048xi8> to memref<256xf32>
  %b = memref.view %arena[%c1024][] {mw.buffer = "b"} : memref<2048xi8> to memref<256xf32>
  memref.copy %in, %a : memref<256xf32> to memref<256xf32>
  memref.copy %a, %b : memref<256xf32> to memref<256xf32>
  %c = memref.view %arena[%c0][] {mw.buffer = "c"} : memref<2048xi8> to memref<256xf32>
  memref.copy %b, %c : memref<256xf32> to memref<256xf32>
  memref.copy %c, %out : memref<256xf32> to memref<256xf32>
  memref.dealloc %arena : memref<2048xi8>
  return
}

// -----

// A deliberately broken plan: b starts at +256, inside a (+0, 1024 B), and
// both are live from op 5 (b's view) on.
func.func @overlap(%in: memref<256xf32>, %out: memref<256xf32>) {
  %arena = memref.alloc() {mw.arena} : memref<2048xi8>
  %c0 = arith.constant 0 : index
  %c256 = arith.constant 256 : index
  // expected-note@+1 {{'a' is defined here}}
  %a = memref.view %arena[%c0][] {mw.buffer = "a"} : memref<2048xi8> to memref<256xf32>
  memref.copy %in, %a : memref<256xf32> to memref<256xf32>
  // expected-error@+1 {{buffers 'a' at offset 0 (1024 B) and 'b' at offset 256 (1024 B) overlap while both live at op 5}}
  %b = memref.view %arena[%c256][] {mw.buffer = "b"} : memref<2048xi8> to memref<256xf32>
  memref.copy %a, %b : memref<256xf32> to memref<256xf32>
  memref.copy %b, %out : memref<256xf32> to memref<256xf32>
  memref.dealloc %arena : memref<2048xi8>
  return
}

// -----

// Three live together: b (+512, 1024 B) overlaps a (+0) and c (+1024);
// the first pair in op order is reported, a and b, though the sweep that
// finds b meets c first (the placed buffer just below b's end).
func.func @overlap_two(%in: memref<256xf32>, %out: memref<256xf32>) {
  %arena = memref.alloc() {mw.arena} : memref<4096xi8>
  %c0 = arith.constant 0 : index
  %c512 = arith.constant 512 : index
  %c1024 = arith.constant 1024 : index
  // expected-note@+1 {{'a' is defined here}}
  %a = memref.view %arena[%c0][] {mw.buffer = "a"} : memref<4096xi8> to memref<256xf32>
  %c = memref.view %arena[%c1024][] {mw.buffer = "c"} : memref<4096xi8> to memref<256xf32>
  memref.copy %in, %a : memref<256xf32> to memref<256xf32>
  memref.copy %a, %c : memref<256xf32> to memref<256xf32>
  // expected-error@+1 {{buffers 'a' at offset 0 (1024 B) and 'b' at offset 512 (1024 B) overlap while both live at op}}
  %b = memref.view %arena[%c512][] {mw.buffer = "b"} : memref<4096xi8> to memref<256xf32>
  memref.copy %c, %b : memref<256xf32> to memref<256xf32>
  memref.copy %a, %b : memref<256xf32> to memref<256xf32>
  memref.copy %b, %out : memref<256xf32> to memref<256xf32>
  memref.dealloc %arena : memref<4096xi8>
  return
}

// -----

// Uses through views and nested regions count: a's subview is read in the
// loop at op 6, so a lives over [3, 7) and b (same bytes) over [5, 7). Names come from NameLoc
// when there is no mw.buffer, else buffer<N> in op order.
func.func @overlap_through_subview(%n: index, %out: memref<16xf32>) {
  %arena = memref.alloc() {mw.arena} : memref<1024xi8>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-note@+1 {{'buffer0' is defined here}}
  %a = memref.view %arena[%c0][] : memref<1024xi8> to memref<64xf32>
  %head = memref.subview %a[0] [16] [1] : memref<64xf32> to memref<16xf32, strided<[1]>>
  // expected-error@+1 {{buffers 'buffer0' at offset 0 (256 B) and 'buffer1' at offset 0 (256 B) overlap while both live at op 5}}
  %b = memref.view %arena[%c0][] : memref<1024xi8> to memref<64xf32>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %head[%i] : memref<16xf32, strided<[1]>>
    memref.store %v, %b[%i] : memref<64xf32>
  }
  return
}

// -----

// The same bytes at different times are fine: a: [1, 3), b: [3, 6). The
// arena may be an argument.
// CHECK-LABEL: func.func @reuse(
func.func @reuse(%in: memref<64xf32>, %out: memref<64xf32>, %arena: memref<256xi8> {mw.arena}) {
  %c0 = arith.constant 0 : index
  %a = memref.view %arena[%c0][] : memref<256xi8> to memref<64xf32>
  memref.copy %in, %a : memref<64xf32> to memref<64xf32>
  %b = memref.view %arena[%c0][] : memref<256xi8> to memref<64xf32>
  memref.copy %in, %b : memref<64xf32> to memref<64xf32>
  memref.copy %b, %out : memref<64xf32> to memref<64xf32>
  return
}

// -----

func.func @past_the_end(%out: memref<64xf32>) {
  %arena = memref.alloc() {mw.arena} : memref<512xi8>
  %c384 = arith.constant 384 : index
  // expected-error@+1 {{'a' at offset 384 (256 B) ends past the arena (512 B)}}
  %a = memref.view %arena[%c384][] {mw.buffer = "a"} : memref<512xi8> to memref<64xf32>
  memref.copy %a, %out : memref<64xf32> to memref<64xf32>
  memref.dealloc %arena : memref<512xi8>
  return
}

// -----

func.func @misaligned(%out: memref<64xf32>) attributes {mw.arena_alignment = 256 : i64} {
  %arena = memref.alloc() {mw.arena} : memref<512xi8>
  %c128 = arith.constant 128 : index
  // expected-error@+1 {{'a' at offset 128 (256 B) is not aligned to 256 bytes (mw.arena_alignment)}}
  %a = memref.view %arena[%c128][] {mw.buffer = "a"} : memref<512xi8> to memref<64xf32>
  memref.copy %a, %out : memref<64xf32> to memref<64xf32>
  memref.dealloc %arena : memref<512xi8>
  return
}

// -----

func.func @dynamic_offset(%off: index, %out: memref<64xf32>) {
  %arena = memref.alloc() {mw.arena} : memref<512xi8>
  // expected-error@+1 {{the offset of this view of the arena is not a constant}}
  %a = memref.view %arena[%off][] : memref<512xi8> to memref<64xf32>
  memref.copy %a, %out : memref<64xf32> to memref<64xf32>
  memref.dealloc %arena : memref<512xi8>
  return
}

// -----

func.func private @consume(memref<64xf32>)

func.func @escaping_view() {
  %arena = memref.alloc() {mw.arena} : memref<512xi8>
  %c0 = arith.constant 0 : index
  // expected-error@+1 {{'a' cannot be checked: buffer escaping into 'func.call'}}
  %a = memref.view %arena[%c0][] {mw.buffer = "a"} : memref<512xi8> to memref<64xf32>
  // expected-note@+1 {{here}}
  func.call @consume(%a) : (memref<64xf32>) -> ()
  memref.dealloc %arena : memref<512xi8>
  return
}

// -----

func.func private @consume_bytes(memref<512xi8>)

func.func @escaping_arena() {
  %arena = memref.alloc() {mw.arena} : memref<512xi8>
  // expected-error@+1 {{the arena is used by 'func.call', which the plan check cannot see through}}
  func.call @consume_bytes(%arena) : (memref<512xi8>) -> ()
  memref.dealloc %arena : memref<512xi8>
  return
}

// -----

func.func @use_after_free(%out: memref<64xf32>) {
  %arena = memref.alloc() {mw.arena} : memref<512xi8>
  %c0 = arith.constant 0 : index
  %a = memref.view %arena[%c0][] {mw.buffer = "a"} : memref<512xi8> to memref<64xf32>
  // expected-error@+1 {{the arena is deallocated at op 3 while 'a' is live until op 4}}
  memref.dealloc %arena : memref<512xi8>
  memref.copy %a, %out : memref<64xf32> to memref<64xf32>
  return
}

// -----

func.func @view_deallocated(%out: memref<64xf32>) {
  %arena = memref.alloc() {mw.arena} : memref<512xi8>
  %c0 = arith.constant 0 : index
  %a = memref.view %arena[%c0][] {mw.buffer = "a"} : memref<512xi8> to memref<64xf32>
  memref.copy %a, %out : memref<64xf32> to memref<64xf32>
  // expected-error@+1 {{'a' is a view of the arena and must not be deallocated}}
  memref.dealloc %a : memref<64xf32>
  memref.dealloc %arena : memref<512xi8>
  return
}

// -----

// A zero-sized buffer holds no bytes and overlaps nothing.
// CHECK-LABEL: func.func @empty_buffer(
func.func @empty_buffer(%out: memref<64xf32>) {
  %arena = memref.alloc() {mw.arena} : memref<256xi8>
  %c0 = arith.constant 0 : index
  %c256 = arith.constant 256 : index
  %a = memref.view %arena[%c0][] : memref<256xi8> to memref<64xf32>
  %z = memref.view %arena[%c256][] : memref<256xi8> to memref<0xf32>
  memref.copy %a, %out : memref<64xf32> to memref<64xf32>
  memref.dealloc %arena : memref<256xi8>
  return
}

// -----

// expected-error@+1 {{mw.arena_size = 1024 but the arena holds 512 bytes}}
func.func @size_mismatch() attributes {mw.arena_size = 1024 : i64} {
  %arena = memref.alloc() {mw.arena} : memref<512xi8>
  memref.dealloc %arena : memref<512xi8>
  return
}

// -----

// expected-error@+1 {{mw.lower_bound = 1024 exceeds the arena's 512 bytes}}
func.func @bound_above_arena() attributes {mw.lower_bound = 1024 : i64} {
  %arena = memref.alloc() {mw.arena} : memref<512xi8>
  memref.dealloc %arena : memref<512xi8>
  return
}

// -----

// expected-error@+1 {{@no_arena records mw.arena_size but has no arena (a memref.alloc or argument marked mw.arena)}}
func.func @no_arena() attributes {mw.arena_size = 512 : i64} {
  return
}

// -----

// expected-error@+1 {{@two_arenas has 2 arenas (marked mw.arena); a plan has one}}
func.func @two_arenas(%arena0: memref<256xi8> {mw.arena}) {
  %arena1 = memref.alloc() {mw.arena} : memref<256xi8>
  memref.dealloc %arena1 : memref<256xi8>
  return
}

// -----

func.func @not_bytes() {
  // expected-error@+1 {{the arena must be a static memref<Nxi8>, got 'memref<64xf32>'}}
  %arena = memref.alloc() {mw.arena} : memref<64xf32>
  memref.dealloc %arena : memref<64xf32>
  return
}

// -----

// Functions without a plan are not checked.
// CHECK-LABEL: func.func @unplanned(
func.func @unplanned(%out: memref<4xf32>) {
  %t = memref.alloc() : memref<4xf32>
  memref.copy %t, %out : memref<4xf32> to memref<4xf32>
  memref.dealloc %t : memref<4xf32>
  return
}
