// --mw-plan-export writes a planned function's buffers as MiniMalloc CSV:
// id (the buffer's name), [lower, upper) over the planned function's op
// positions, the size rounded to mw.arena_alignment, and the offset.
// RUN: mw-opt %s --mw-static-arena --mw-verify-plan \
// RUN:   --mw-plan-export="function=chain file=%t.chain.csv" -o /dev/null 2>/dev/null
// RUN: FileCheck %s --check-prefix=CHAIN --match-full-lines < %t.chain.csv
// RUN: mw-opt %s --mw-static-arena=alignment=64 --mw-verify-plan --mw-plan-export=function=odd -o /dev/null 2>/dev/null \
// RUN:   | FileCheck %s --check-prefix=ODD --match-full-lines
// Two planned functions and no choice: an error, and no file.
// RUN: not mw-opt %s --mw-static-arena --mw-plan-export=file=%t.both.csv -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SEVERAL
// RUN: not test -e %t.both.csv
// RUN: not mw-opt %s --mw-static-arena --mw-plan-export=function=nope -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOPE
// RUN: not mw-opt %s --mw-static-arena \
// RUN:   --mw-plan-export="function=chain file=%t.missing/dir/plan.csv" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=WRITE
// RUN: not test -e %t.missing
// Nothing planned: a header-only file.
// RUN: mw-opt %s --mw-plan-export -o /dev/null | FileCheck %s --check-prefix=EMPTY --match-full-lines

// After planning, @chain's ops are: 0 the arena, 1-2 the offset constants,
// then the original ops with views in place of the allocs and without the
// deallocs: a: [3, 7), b: [5, 9), c: [7, 10) (before: [0, 4), [2, 7), [5, 8)).
// CHAIN:      id,lower,upper,size,offset
// CHAIN-NEXT: a,3,7,1024,1024
// CHAIN-NEXT: b,5,9,1024,0
// CHAIN-NEXT: c,7,10,1024,1024
// CHAIN-EMPTY:

// 100 B rounded to 64-byte units; the comma in "x,y" becomes '_'.
// ODD:      id,lower,upper,size,offset
// ODD-NEXT: x_y,3,7,128,0
// ODD-NEXT: buffer1,4,8,128,128
// ODD-EMPTY:

// SEVERAL: error: mw-plan-export: several planned functions (@chain, @odd); choose one with function=NAME
// NOPE:    error: mw-plan-export: no planned function named @nope
// WRITE:   error: mw-plan-export: cannot write '{{.*}}plan.csv':
// EMPTY:   id,lower,upper,size,offset
// EMPTY-NOT: {{.}}

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

func.func @odd(%in: memref<25xf32>, %out: memref<25xf32>) {
  %x = memref.alloc() {mw.buffer = "x,y"} : memref<25xf32>
  %y = memref.alloc() : memref<25xf32>
  memref.copy %in, %x : memref<25xf32> to memref<25xf32>
  memref.copy %x, %y : memref<25xf32> to memref<25xf32>
  memref.copy %y, %out : memref<25xf32> to memref<25xf32>
  return
}
