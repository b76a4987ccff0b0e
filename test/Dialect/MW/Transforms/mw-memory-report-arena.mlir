// The memory report of a bufferized function, before and after
// --mw-static-arena: arena, lower bound, no-reuse and persistent bytes, and
// the peak explained (the program point and the buffers live there, largest
// first, with their producing ops and locations). The peak's op is the first
// computation there, not the allocations that open it.
// Buffers (f32): a 1 KiB, b 2 KiB, c 512 B are transient and all live at once
// from op 2 (c is allocated early), so the lower bound is 3.5 KiB; r is
// returned (persistent, 1 KiB) and so is the argument x (1 KiB).
// RUN: mw-opt %s --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=BEFORE
// RUN: mw-opt %s --mw-static-arena --mw-verify-plan --mw-memory-report=format=json -o /dev/null 2>/dev/null | FileCheck %s --check-prefix=AFTER
// RUN: mw-opt %s --mw-memory-report -o /dev/null | FileCheck %s --check-prefix=TEXT

// BEFORE:      "planned": false,
// BEFORE-NEXT: "arena_bytes": 0,
// BEFORE-NEXT: "lower_bound_bytes": 3584,
// BEFORE-NEXT: "naive_bytes": 3584,
// BEFORE-NEXT: "persistent_bytes": 2048,
// BEFORE-NEXT: "peak": {
// BEFORE-NEXT:   "position": 2,
// BEFORE-NEXT:   "op": "memref.copy",
// BEFORE-NEXT:   "live_bytes": 3584,
// BEFORE-NEXT:   "buffers": [
// BEFORE-NEXT:     {
// BEFORE-NEXT:       "name": "b",
// BEFORE-NEXT:       "bytes": 2048,
// BEFORE-NEXT:       "op": "memref.alloc",
// BEFORE-NEXT:       "loc": "loc({{.*}}mw-memory-report-arena.mlir\":[[#@LINE+20]]:8)"
// BEFORE:            "name": "a",
// BEFORE:            "name": "c",

// AFTER:       "planned": true,
// AFTER-NEXT:  "arena_bytes": 3584,
// AFTER-NEXT:  "lower_bound_bytes": 3584,
// AFTER-NEXT:  "naive_bytes": 3584,
// AFTER-NEXT:  "persistent_bytes": 2048,

// TEXT:      arena                   0 (0 B), not planned
// TEXT-NEXT: lower bound             3584 (3.58 KB = 3.50 KiB)
// TEXT-NEXT: no reuse                3584 (3.58 KB = 3.50 KiB)
// TEXT-NEXT: persistent              2048 (2.05 KB = 2.00 KiB)
// TEXT-NEXT: peak: 3.58 KB = 3.50 KiB live at op 2 (memref.copy), largest first:
// TEXT-NEXT:   b                        2.00 KiB  memref.alloc
// TEXT-NEXT:   a                        1.00 KiB  memref.alloc
// TEXT-NEXT:   c                           512 B  memref.alloc
func.func @f(%x: memref<256xf32>) -> memref<256xf32> {
  %a = memref.alloc() {mw.buffer = "a"} : memref<256xf32>
  %b = memref.alloc() {mw.buffer = "b"} : memref<512xf32>
  %c = memref.alloc() {mw.buffer = "c"} : memref<128xf32>
  %r = memref.alloc() {mw.buffer = "r"} : memref<256xf32>
  memref.copy %x, %a : memref<256xf32> to memref<256xf32>
  %s = memref.subview %b[0] [256] [1] : memref<512xf32> to memref<256xf32, strided<[1]>>
  memref.copy %a, %s : memref<256xf32> to memref<256xf32, strided<[1]>>
  memref.dealloc %a : memref<256xf32>
  memref.copy %s, %r : memref<256xf32, strided<[1]>> to memref<256xf32>
  memref.dealloc %b : memref<512xf32>
  %c0 = memref.subview %r[0] [128] [1] : memref<256xf32> to memref<128xf32, strided<[1]>>
  memref.copy %c0, %c : memref<128xf32, strided<[1]>> to memref<128xf32>
  memref.dealloc %c : memref<128xf32>
  return %r : memref<256xf32>
}
