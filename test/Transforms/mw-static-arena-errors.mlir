// Rejected options and inputs of --mw-static-arena, each with its message.
// RUN: mw-opt %s -split-input-file -verify-diagnostics --mw-static-arena=arena=argument --mw-verify-plan -o /dev/null
// RUN: not mw-opt %s -split-input-file --mw-static-arena=strategy=first-fit -o /dev/null 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: not mw-opt %s -split-input-file --mw-static-arena=alignment=48 -o /dev/null 2>&1 | FileCheck %s --check-prefix=ALIGN
// RUN: not mw-opt %s -split-input-file --mw-static-arena=alignment=0 -o /dev/null 2>&1 | FileCheck %s --check-prefix=ALIGN0
// RUN: not mw-opt %s -split-input-file --mw-static-arena=arena=heap -o /dev/null 2>&1 | FileCheck %s --check-prefix=ARENA
// RUN: not mw-opt %s -split-input-file --mw-static-arena=time-limit=0 -o /dev/null 2>&1 | FileCheck %s --check-prefix=TIME

// STRATEGY: error: mw-static-arena: unknown strategy 'first-fit' (expected naive, greedy-size, greedy-breadth, best-fit-size, best-fit-time, best, exact)
// ALIGN:    error: mw-static-arena: alignment 48 is not a positive power of two
// ALIGN0:   error: mw-static-arena: alignment 0 is not a positive power of two
// ARENA:    error: mw-static-arena: unknown arena 'heap' (expected alloc or argument)
// TIME:     error: mw-static-arena: time-limit must be a positive number of seconds

// arena=argument would change the signature of a function that is called:
// its callers could not pass the arena.
// expected-error@+1 {{arena=argument would add an argument to @callee, which is used in the module; plan it with arena=alloc}}
func.func @callee(%out: memref<4xf32>) {
  %t = memref.alloc() : memref<4xf32>
  memref.copy %t, %out : memref<4xf32> to memref<4xf32>
  return
}

func.func @caller(%out: memref<4xf32>) {
  // expected-note@+1 {{used here}}
  func.call @callee(%out) : (memref<4xf32>) -> ()
  return
}

// -----

// A function nobody calls may take its arena as an argument.
func.func @entry(%out: memref<4xf32>) {
  %t = memref.alloc() : memref<4xf32>
  memref.copy %t, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// The mw dialect checks the arena argument's attribute.
// expected-error@+1 {{'func.func' op 'mw.arena' must be a unit attribute of a memref<Nxi8> argument, found on argument #0 of type 'memref<4xf32>'}}
func.func @bad_arena_argument(%a: memref<4xf32> {mw.arena}) {
  return
}
