//===- ArenaPlan.h - A static arena plan read back from the IR --*- C++ -*-===//
//
// What --mw-verify-plan and --mw-plan-export know about a planned function,
// recovered from the IR alone: the arena (the memref.alloc or argument
// marked `mw.arena`), its views with their constant offsets, and the views'
// lifetimes from BufferLiveness. Private to lib/Transforms.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_LIB_TRANSFORMS_ARENAPLAN_H
#define MEMWALL_LIB_TRANSFORMS_ARENAPLAN_H

#include "memwall/Analysis/BufferLiveness.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <memory>
#include <optional>

namespace mlir::mw {

struct ArenaPlan {
  /// The arena: a memref<Nxi8> alloc result or argument.
  Value arena;
  uint64_t arenaSize = 0;
  /// `mw.arena_alignment` of the function, if recorded.
  std::optional<uint64_t> alignment;
  /// memref.dealloc ops of the arena.
  SmallVector<memref::DeallocOp> deallocs;
  /// The arena's views, in op order, and the byte offset of each.
  SmallVector<memref::ViewOp> views;
  SmallVector<uint64_t> offsets;
  /// Lifetimes and names of the views (same order as `views`).
  std::unique_ptr<BufferLiveness> liveness;
};

/// Reads the plan of `func`. Returns nothing (and emits nothing) when the
/// function has no arena and records no plan; fails after an error diagnostic
/// when the plan cannot be read (several arenas, a non-constant offset, an
/// arena used by something other than views...).
FailureOr<std::optional<ArenaPlan>> readArenaPlan(func::FuncOp func);

} // namespace mlir::mw

#endif // MEMWALL_LIB_TRANSFORMS_ARENAPLAN_H
