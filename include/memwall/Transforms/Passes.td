//===- Passes.td - Dialect-independent Memwall passes --------*- tablegen -*-===//
//
// The table of contents of Memwall's passes that work on any bufferized MLIR
// program (memref, arith, func and whatever ops use the buffers), not only on
// the mw dialect: static arena planning, its independent check, and the plan
// export. Each lives in its own .cpp named after its flag.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_TRANSFORMS_PASSES_TD
#define MEMWALL_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def MwStaticArena : Pass<"mw-static-arena", "ModuleOp"> {
  let summary = "Place every transient buffer of a function at a fixed offset "
                "of one arena";
  let description = [{
    For every `func.func` with a body: numbers the top-level ops of the entry
    block, gives each transient buffer (a static-shape `memref.alloc` of the
    entry block) the lifetime [its alloc, its last use + 1), packs the
    buffers with Memwall's packer (lib/Planning) and rewrites each alloc into
    a `memref.view` of one arena at the offset found:

    ```mlir
    // a: [0, 4) 1024 B -> +1024;  b: [2, 7) -> +0;  c: [5, 8) -> +1024 (reuse a)
    func.func @chain(%in: memref<256xf32>, %out: memref<256xf32>) {
      %a = memref.alloc() : memref<256xf32>                     // op 0
      memref.copy %in, %a : memref<256xf32> to memref<256xf32>  // op 1
      %b = memref.alloc() : memref<256xf32>                     // op 2
      memref.copy %a, %b : memref<256xf32> to memref<256xf32>   // op 3
      memref.dealloc %a : memref<256xf32>                       // op 4
      %c = memref.alloc() : memref<256xf32>                     // op 5
      memref.copy %b, %c : memref<256xf32> to memref<256xf32>   // op 6
      memref.copy %c, %out : memref<256xf32> to memref<256xf32> // op 7
      memref.dealloc %b : memref<256xf32>
      memref.dealloc %c : memref<256xf32>
      return
    }
    ```

    becomes

    ```mlir
    func.func @chain(%in: memref<256xf32>, %out: memref<256xf32>)
        attributes {mw.arena_alignment = 256 : i64, mw.arena_size = 2048 : i64,
                    mw.lower_bound = 2048 : i64} {
      %arena = memref.alloc() {alignment = 256 : i64, mw.arena} : memref<2048xi8>
      %c0 = arith.constant 0 : index
      %c1024 = arith.constant 1024 : index
      %a = memref.view %arena[%c1024][] {mw.buffer = "buffer0"}
          : memref<2048xi8> to memref<256xf32>
      memref.copy %in, %a : memref<256xf32> to memref<256xf32>
      %b = memref.view %arena[%c0][] {mw.buffer = "buffer1"}
          : memref<2048xi8> to memref<256xf32>
      memref.copy %a, %b : memref<256xf32> to memref<256xf32>
      %c = memref.view %arena[%c1024][] {mw.buffer = "buffer2"}
          : memref<2048xi8> to memref<256xf32>
      memref.copy %b, %c : memref<256xf32> to memref<256xf32>
      memref.copy %c, %out : memref<256xf32> to memref<256xf32>
      memref.dealloc %arena : memref<2048xi8>
      return
    }
    ```

    Liveness rules (the BufferLiveness analysis;
    `-mw-test-print-buffer-liveness` prints it):
    - uses through views (`memref.subview`, `memref.view`, `memref.cast`,
      `memref.reinterpret_cast`, `memref.collapse_shape`,
      `memref.expand_shape`, any `ViewLikeOpInterface` op) are uses of the
      root buffer;
    - a use inside a nested region (an `scf.for`, `scf.if` or
      `linalg.generic` body) counts at the position of the enclosing
      top-level op;
    - `memref.dealloc` of the buffer is not a use; it is erased.

    Only provably transient buffers are planned. These are left as they are,
    and with `remarks=true` each is named in a remark (`returned buffer is
    not planned: 'r'`); the `unplanned-buffers` statistic counts them: buffers returned by the function (persistent), buffers that
    escape into an op the pass cannot see through (`func.call`, a
    `memref.store` of the memref itself, `scf.yield`,
    `memref.extract_aligned_pointer_as_index`, an op without memory
    effects on it...), buffers used outside the entry block or inside
    `async.execute` (whose region may outlive the op), allocations
    inside a loop body or another nested region, allocations with dynamic
    sizes, a non-identity layout or a non-default memory space, allocations
    whose `alignment` exceeds the arena's, and `memref.alloca`. Functions
    already planned (with `mw.arena_size`) are skipped with a remark; a
    function with nothing to plan is left unchanged.

    Options:
    - `strategy`: the packer's strategy: `best` (default), `naive`,
      `greedy-size`, `greedy-breadth`, `best-fit-size`, `best-fit-time`,
      `exact`. All but `exact` are deterministic: the same input gives the
      same IR byte for byte; `exact` may depend on where `time-limit` falls.
    - `alignment`: a power of two; every offset is a multiple of it and every
      size is rounded up to it (256, the CUDA allocation granularity, by
      default). The arena alloc carries it as its `alignment`.
    - `arena=alloc` (default) allocates the arena at the top of the function
      and deallocates it before every return; `arena=argument` appends a
      trailing `memref<Nxi8>` argument with the unit attribute `mw.arena`
      instead, so that the caller (or a runtime) owns the memory. A function
      with uses in the module (calls) cannot change its signature: that is
      an error.
    - `time-limit`: seconds for `exact`.

    The function records `mw.arena_size` (bytes of the arena),
    `mw.arena_alignment` and `mw.lower_bound` (the largest sum of aligned
    sizes live at one op: no arena can be smaller); each view records its
    buffer's name in `mw.buffer` (the alloc's own `mw.buffer`, else its
    `loc("name")`, else `buffer<N>` in op order), for `--mw-verify-plan`
    and `--mw-plan-export`.

    The pass runs on the module, not on each function, because
    `arena=argument` changes a function's signature and must see its call
    sites; functions are planned one after the other in module order. From
    stock mlir-opt with the plugin:
    `--pass-pipeline="builtin.module(mw-static-arena{arena=argument},func.func(mw-verify-plan))"`.
  }];
  let dependentDialects = ["arith::ArithDialect", "memref::MemRefDialect"];
  let options = [
    Option<"strategy", "strategy", "std::string", /*default=*/"\"best\"",
           "Packing strategy: best, naive, greedy-size, greedy-breadth, "
           "best-fit-size, best-fit-time or exact">,
    Option<"alignment", "alignment", "int64_t", /*default=*/"256",
           "Alignment in bytes of every offset and size (a power of two)">,
    Option<"arena", "arena", "std::string", /*default=*/"\"alloc\"",
           "Where the arena comes from: alloc (a memref.alloc in the "
           "function) or argument (a new trailing argument)">,
    Option<"timeLimit", "time-limit", "double", /*default=*/"10.0",
           "Time limit in seconds of the exact strategy">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Name each buffer left unplanned (returned, escaping, ...) in a "
           "remark; off by default, since a step returns many">,
  ];
  let statistics = [
    Statistic<"numPlanned", "planned-buffers", "Buffers placed in an arena">,
    Statistic<"numUnplanned", "unplanned-buffers",
              "Allocations left as they are">,
    Statistic<"numArenaBytes", "arena-bytes", "Bytes of all arenas">,
  ];
}

def MwVerifyPlan : Pass<"mw-verify-plan", "func::FuncOp"> {
  let summary = "Check a static arena plan from the IR alone";
  let description = [{
    An independent check of `--mw-static-arena`'s output (it shares the
    liveness rules, not the packer): finds the function's arena (the
    `memref.alloc` or argument with `mw.arena`), takes every `memref.view`
    of it as a buffer with bytes [offset, offset + size), recomputes the
    views' lifetimes over the op order with the same BufferLiveness analysis
    (applied to the views instead of allocs), and checks that
    - every offset is a constant, a multiple of `mw.arena_alignment` when the
      function records it, and every buffer ends inside the arena;
    - no two buffers live at the same op share a byte;
    - the arena is used only by views and its deallocation, no view escapes
      (returned, passed to a call...) or is deallocated, and no view is live
      after the arena is deallocated;
    - `mw.arena_size` matches the arena and `mw.lower_bound` does not exceed
      it.

    ```mlir
    func.func @f(%in: memref<128xf32>) {
      %c0 = arith.constant 0 : index                                     // op 0
      %c256 = arith.constant 256 : index                                 // op 1
      %arena = memref.alloc() {mw.arena} : memref<1024xi8>               // op 2
      %a = memref.view %arena[%c0][] {mw.buffer = "a"}                   // op 3
          : memref<1024xi8> to memref<128xf32>
      memref.copy %in, %a : memref<128xf32> to memref<128xf32>           // op 4
      %b = memref.view %arena[%c256][] {mw.buffer = "b"}                 // op 5
          : memref<1024xi8> to memref<128xf32>
      linalg.add ins(%a, %a : memref<128xf32>, memref<128xf32>)          // op 6
                 outs(%b : memref<128xf32>)
      memref.dealloc %arena : memref<1024xi8>
      return
    }
    ```

    ```
    error: buffers 'a' at offset 0 (512 B) and 'b' at offset 256 (512 B)
           overlap while both live at op 5
    note: 'a' is defined here
    ```

    Buffer names are the views' `mw.buffer`, else their NameLoc, else
    `buffer<N>` in op order.

    Functions without an arena are not checked. The IR is left unchanged.
  }];
}

def MwPlanExport : Pass<"mw-plan-export", "ModuleOp"> {
  let summary = "Write a planned function's buffers as MiniMalloc CSV";
  let description = [{
    Writes the buffers of a function planned by `--mw-static-arena` (read
    back from the IR like `--mw-verify-plan` does) in MiniMalloc's CSV
    format, with the offsets:

    ```
    $ mw-opt chain.mlir --mw-static-arena --mw-plan-export=file=chain.csv -o /dev/null
    $ cat chain.csv
    id,lower,upper,size,offset
    buffer0,3,7,1024,1024
    buffer1,5,9,1024,0
    buffer2,7,10,1024,1024
    ```

    `id` is the buffer's name (`mw.buffer`); [lower, upper) its lifetime over
    the op positions of the planned function; `size` its bytes rounded up to
    `mw.arena_alignment` (the sizes the packer placed). The file is written
    through a temporary and a rename, so a failed run leaves nothing behind.
    With several planned functions, `function` names the one to export; a
    module without planned functions gives a header-only file.
  }];
  let options = [
    Option<"file", "file", "std::string", /*default=*/"\"-\"",
           "Where to write the CSV: a file path, or - for stdout">,
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "The planned function to export (default: the only one)">,
  ];
}

def MwTestPrintBufferLiveness
    : Pass<"mw-test-print-buffer-liveness", "ModuleOp"> {
  let summary = "Print the BufferLiveness analysis of each function (tests)";
  let description = [{
    Prints to stdout, for each `func.func` in module order, every `memref.alloc` and `memref.alloca` in op
    order with its name, bytes and lifetime [start, end) over the entry
    block's op positions, or why it would not be planned:

    ```
    buffer liveness of @f: 6 ops
      a: 1024 B, [0, 3)
      r: 64 B, not planned (returned buffer)
    ```
  }];
}

#endif // MEMWALL_TRANSFORMS_PASSES_TD
