//===- MemoryReportHtml.h - The picture of --mw-memory-report ---*- C++ -*-===//
//
// What `--mw-memory-report="format=html output=plan.html"` draws and the
// writer of the page: one self-contained HTML file (inline CSS and JS, no
// network) with, per bufferized function, the arena as a time x offset
// chart (a rectangle per buffer over [first use, last use] x [offset,
// offset + size), coloured by kind), the live transient bytes over the op
// order with the lower bound and the peak marked, and per-rank and per-kind
// totals. The figures come from MwMemoryReport.cpp, which fills a
// MemoryPicture per function from the same liveness the text report uses.
// Private to MwMemoryReport.cpp (docs/memory-report.md, "The picture").
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_LIB_DIALECT_MW_TRANSFORMS_MEMORYREPORTHTML_H
#define MEMWALL_LIB_DIALECT_MW_TRANSFORMS_MEMORYREPORTHTML_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::mw {

/// A kind a buffer is coloured by: its key, its legend and its colour.
struct PictureKind {
  llvm::StringLiteral name, label, color;
};
/// In legend order.
inline constexpr PictureKind kPictureKinds[] = {
    {"activation", "activation", "#4e79a7"},
    {"gradient", "gradient", "#e15759"},
    {"optimizer", "optimizer work", "#59a14f"},
    {"recompute", "recompute", "#f28e2b"},
    {"gradient_bucket", "ZeRO gradient bucket", "#b07aa1"},
    {"gathered_parameters", "gathered parameters", "#17becf"},
};

/// One transient buffer: its lifetime [start, end) over the op positions,
/// its offset in the arena (-1 when the step is not planned), its bytes,
/// its kind (an index into kPictureKinds), its producing op and location.
struct PictureBuffer {
  std::string name, op, loc;
  int64_t start = 0, end = 0, offset = -1, bytes = 0;
  unsigned kind = 0;
};

/// What one rank holds, for the per-rank table: the step is rank-generic
/// (every rank of a ZeRO step runs the same program), so one row stands for
/// each of `ranks`.
struct PictureRanks {
  int64_t ranks = 1;
  /// The ZeRO stage, when the step has mesh collectives.
  std::optional<int64_t> zeroStage;
  int64_t paramBytes = 0, gradBytes = 0, optimizerStateBytes = 0;
};

/// The picture of one function.
struct MemoryPicture {
  std::string function;
  /// Bufferized (memref buffers to draw) and planned (offsets known).
  bool bufferized = false, planned = false;
  int64_t numPositions = 0;
  int64_t arenaBytes = 0, lowerBoundBytes = 0, naiveBytes = 0,
          persistentBytes = 0;
  int64_t peakPosition = -1, peakBytes = 0;
  std::string peakOp;
  std::vector<PictureBuffer> buffers;
  /// The live transient bytes as change points: from position `first` on,
  /// `second` bytes are live; the last point is at numPositions with 0.
  std::vector<std::pair<int64_t, int64_t>> liveCurve;
  PictureRanks ranks;
};

/// Writes the page: one section per function, then the verdict's text
/// (`verdictText`, empty for none).
void printMemoryReportHtml(llvm::raw_ostream &os,
                           llvm::ArrayRef<MemoryPicture> pictures,
                           llvm::StringRef verdictText);

} // namespace mlir::mw

#endif // MEMWALL_LIB_DIALECT_MW_TRANSFORMS_MEMORYREPORTHTML_H
