//===- BufferLiveness.h - Buffer lifetimes over the op order ----*- C++ -*-===//
//
// The liveness behind --mw-static-arena and --mw-verify-plan (DESIGN.md
// decision 5). The top-level ops of a function's entry block are numbered
// 0, 1, 2, ...; a buffer lives over [position of its definition, position of
// its last use + 1). A use through a view (any ViewLikeOpInterface op:
// memref.subview, memref.view, memref.cast, ...) is a use of the root buffer,
// and a use inside a nested region (scf.for, scf.if, linalg.generic bodies)
// counts at the position of the enclosing top-level op. memref.dealloc of the
// root is recorded, not counted as a use. A buffer is transient, i.e. safe to
// place at a fixed offset of an arena, only when every use is one of these;
// otherwise the analysis records why not (returned, escaping into a call, ...)
// and the planner leaves the buffer alone.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_ANALYSIS_BUFFERLIVENESS_H
#define MEMWALL_ANALYSIS_BUFFERLIVENESS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir {
class DataLayout;
class MemRefType;

namespace mw {

/// One buffer: a memref.alloc / memref.alloca of a function, or a root the
/// caller chose (e.g. a view of an arena).
struct LiveBuffer {
  /// The allocation (or root) and the op that defines it.
  Value value;
  Operation *definingOp = nullptr;
  /// Unique within the function: `mw.buffer` of the defining op, else the
  /// name of its NameLoc (`loc("a")`), else `buffer<N>` with N its index in op
  /// order. Duplicates get a `_<k>` suffix.
  std::string name;
  /// Bytes the buffer occupies (elements times the element's storage size);
  /// 0 when unknown.
  uint64_t sizeInBytes = 0;
  /// Lifetime [start, end) over the entry block's op positions; -1 when the
  /// buffer is not transient.
  int64_t start = -1;
  int64_t end = -1;
  /// Empty when the buffer is transient; otherwise a noun phrase saying why
  /// not ("returned buffer", "allocation inside a loop body", ...).
  std::string reason;
  /// The op behind `reason`, when there is one (the call it escapes into...).
  Operation *reasonOp = nullptr;
  /// memref.dealloc ops of the root, not counted as uses.
  SmallVector<Operation *> deallocs;

  bool isTransient() const { return reason.empty(); }
};

/// Buffer lifetimes of one function (an op implementing FunctionOpInterface).
class BufferLiveness {
public:
  /// Analyzes every memref.alloc and memref.alloca of `op`, in op order.
  explicit BufferLiveness(Operation *op);
  /// Analyzes the given roots of `op` instead (e.g. the views of an arena),
  /// with the same rules; a root defined in a nested region starts at the
  /// position of its enclosing top-level op.
  BufferLiveness(Operation *op, ArrayRef<Value> roots);

  ArrayRef<LiveBuffer> getBuffers() const { return buffers; }
  /// Number of top-level ops of the entry block (0 for a declaration).
  int64_t getNumPositions() const { return ops.size(); }
  /// The top-level op at `position`.
  Operation *getOpAt(int64_t position) const { return ops[position]; }
  /// The position of `op`, or of its ancestor among the entry block's
  /// top-level ops; -1 when `op` is outside the entry block.
  int64_t getPosition(Operation *op) const;

  /// `name: 1024 B, [0, 3)` per buffer, or `name: 64 B, not planned
  /// (returned buffer)`, after a header naming the function.
  void print(raw_ostream &os) const;

private:
  void numberOps(Operation *op);
  void addBuffer(Value root, const DataLayout &layout);
  void analyzeUses(LiveBuffer &buffer);

  Operation *function = nullptr;
  Block *entry = nullptr;
  SmallVector<Operation *> ops;
  llvm::DenseMap<Operation *, int64_t> positions;
  SmallVector<LiveBuffer> buffers;
  llvm::StringSet<> usedNames;
  /// Per base name, the suffix to try first: names are never freed, so the
  /// smallest free `name_k` is past the last one given (probing from 1 each
  /// time is quadratic in the buffers sharing a location).
  llvm::StringMap<unsigned> nextSuffix;
};

/// Bytes of a static-shape memref with identity layout: elements times the
/// element's storage size (its ABI-aligned size in `layout`, as the LLVM
/// lowering lays memrefs out). Nothing for dynamic shapes and for element
/// types without a data layout size (memrefs of memrefs, ...).
std::optional<uint64_t> getStaticByteSize(MemRefType type,
                                          const DataLayout &layout);

/// The buffer name of `op`: its `mw.buffer` string attribute, else the first
/// NameLoc name in its location, else empty.
std::string getBufferName(Operation *op);

} // namespace mw
} // namespace mlir

#endif // MEMWALL_ANALYSIS_BUFFERLIVENESS_H
