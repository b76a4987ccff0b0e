//===- ZeroReport.h - The per-rank section of --mw-memory-report -*- C++ -*-===//
//
// What one data-parallel rank of a ZeRO step (--mw-zero's SPMD program, with
// upstream mesh collectives) holds and sends: model-state bytes with their
// padding beside the ZeRO paper's formulas, communication per collective
// kind, and, for planned steps, the arena split by kind. Private to
// MwMemoryReport.cpp (docs/zero.md, "The per-rank report").
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_LIB_DIALECT_MW_TRANSFORMS_ZEROREPORT_H
#define MEMWALL_LIB_DIALECT_MW_TRANSFORMS_ZEROREPORT_H

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace mlir::mw {

struct LiveBuffer;
class BufferLiveness;

/// The per-rank figures of one ZeRO step.
struct ZeroReport {
  int64_t ranks = 1;
  int64_t stage = 0;
  /// How the stage was found: "attribute" (mw.zero.stage) or "inferred".
  std::string stageSource;
  /// Ψ: logical parameter count (mw.shard sizes plus whole parameters).
  int64_t psi = 0;

  /// Bytes one rank allocates for a kind of model state, and the part of
  /// them that holds no parameter's element: a piece of a bucket of E
  /// elements counts E/N elements (its share), the rest is padding, so
  /// `paddingBytes` may be fractional.
  struct State {
    int64_t bytes = 0;
    double logicalBytes = 0;
    int64_t wholeBytes = 0, pieceBytes = 0;
    double paddingBytes() const { return bytes - logicalBytes; }
  };
  State param, grad, optimizerState;
  /// Integer optimizer state (AdamW's step counter): not a model state.
  int64_t counterBytes = 0;

  /// The formula compared: its case, why, bytes per parameter of
  /// parameters, gradients and optimizer state, the expression and value.
  struct Formula {
    std::string name, expression, why;
    int64_t paramBytes = 0, gradBytes = 0, stateBytes = 0;
    double bytes = 0;
  };
  Formula formula;
  /// The paper's mixed-precision Adam (2 + 2 + 12), beside, for AdamW steps.
  std::optional<Formula> paperMixed;
  std::string optimizer;
  bool computesIn16Bit = false;

  /// One collective kind: count, elements S as the kind's rule counts them,
  /// the paper's elements (2S for all_reduce, S otherwise, 0 for
  /// all_slice), a ring's elements sent per rank ((N-1)/N of the paper's),
  /// and the same in bytes.
  struct Comm {
    int64_t count = 0, elements = 0, bytes = 0;
    int64_t paperElements = 0, paperBytes = 0;
    double ringElements = 0, ringBytes = 0;
    void add(const Comm &o);
  };
  llvm::MapVector<llvm::StringRef, Comm> byKind;
  Comm total;
  /// Reductions of the step's outputs (the loss), not model states.
  Comm outputs;
  /// Reductions that decide, not sum: fp16 loss scaling's overflow flag,
  /// all-reduced with max so that every rank skips the same steps.
  Comm control;
  /// The paper's volume per step: 2Ψ (stages 0-2) or 3Ψ (stage 3).
  int64_t paperVolumeElements = 0;
  std::string paperVolumeExpression;

  /// The arena split by kind (planned steps only).
  bool arenaAvailable = false;
  std::string arenaNote;
  llvm::MapVector<llvm::StringRef, int64_t> bytesByKind, peakBytesByKind;
  struct PeakBuffer {
    std::string name, kind;
    int64_t bytes;
  };
  SmallVector<PeakBuffer> peakBuffers;
  int64_t peakBytes = 0;
  /// Bytes per rank that the DeepSpeed config's offload_param and
  /// offload_optimizer put outside HBM (--mw-zero records them as
  /// mw.zero.offload_* attributes): accepted and reported, not executed by
  /// the training step, whose arguments still hold them.
  int64_t offloadParamHostBytes = 0, offloadOptimizerHostBytes = 0,
          offloadNvmeBytes = 0, offloadBufferBytes = 0;
  bool offloaded() const {
    return offloadParamHostBytes || offloadOptimizerHostBytes ||
           offloadNvmeBytes || offloadBufferBytes;
  }

  int64_t modelStateBytes() const {
    return param.bytes + grad.bytes + optimizerState.bytes;
  }
  double modelStateLogicalBytes() const {
    return param.logicalBytes + grad.logicalBytes + optimizerState.logicalBytes;
  }
};

/// The per-rank report of `func`, or nothing when it has no mesh
/// collective. `planned` and `peakPosition` are what the memory report
/// found for the bufferized function.
std::optional<ZeroReport> analyzeZero(FunctionOpInterface func, bool planned,
                                      int64_t peakPosition);

/// The ZeRO kind of one transient buffer of a planned arena (`live` its
/// liveness, `entry` the function's block): "gradient_buckets",
/// "gathered_parameters" or "activations" (everything else), and the
/// positions from the collective that writes it to the first wait after it
/// (-1 when none).
struct ZeroBufferKind {
  llvm::StringRef kind = "activations";
  int64_t flightStart = -1, flightEnd = -1;
};
ZeroBufferKind classifyZeroBuffer(const LiveBuffer &b,
                                  const BufferLiveness &live, Block &entry);

void printZeroText(llvm::raw_ostream &os, const ZeroReport &z);
void printZeroJson(llvm::json::OStream &j, const ZeroReport &z);

} // namespace mlir::mw

#endif // MEMWALL_LIB_DIALECT_MW_TRANSFORMS_ZEROREPORT_H
