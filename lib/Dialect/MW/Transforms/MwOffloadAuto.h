//===- MwOffloadAuto.h - --mw-offload=auto's choice -------------*- C++ -*-===//
//
// The one function through which --mw-offload (MwOffload.cpp) asks the
// planner (MwOffloadAuto.cpp) for the offload of a step: how many layers stay
// pinned in device memory, how many are fetched ahead, and the batch it
// plans for (docs/offload.md, "auto").
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_DIALECT_MW_TRANSFORMS_MWOFFLOADAUTO_H
#define MEMWALL_DIALECT_MW_TRANSFORMS_MWOFFLOADAUTO_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace mlir::mw {

/// --mw-offload's options that auto reads: `target=`, `device-memory=`,
/// `weights=` (cpu or nvme) and `max-batch=` (0: as many sequences as fit).
struct OffloadAutoOptions {
  std::string target, deviceMemory, weights;
  int64_t maxBatch = 0;
};

/// What auto chose; --mw-offload applies pinnedLayers and prefetch exactly
/// as the explicit options.
struct OffloadDecision {
  int64_t pinnedLayers = 0, prefetch = 1, batch = 1;
};

/// Chooses the offload of `f` under `o`: prints the candidates it weighed as
/// a table, sets `f`'s `mw.offload.candidates` and `mw.offload.choice`, and
/// returns the choice; failure after an error at `f`.
FailureOr<OffloadDecision> chooseOffload(func::FuncOp f,
                                         const OffloadAutoOptions &o);

/// What chooseOffload decides, with its prediction, printing the table to
/// `table` (nothing when null): the memory report's verdict suggests
/// --mw-offload with it.
struct OffloadPrediction {
  OffloadDecision decision;
  double tokensPerSecond = 0;
  /// The chosen candidate's device bytes, and the device's.
  int64_t deviceBytes = 0, deviceMemoryBytes = 0;
  /// The batch-independent bytes: parameters outside the layers, constants,
  /// the runtime workspace; and every layer's weights.
  int64_t residentBytes = 0, layerBytes = 0;
  int64_t layers = 0;
  /// Under the choice: the weights that no longer live on the device, and
  /// the arena's weight slots that take their place.
  int64_t streamedBytes = 0, slotBytes = 0;
  /// The workload predicted for (docs/offload.md).
  int64_t promptTokens = 0, generateTokens = 0;
};
FailureOr<OffloadPrediction> predictOffload(func::FuncOp f,
                                            const OffloadAutoOptions &o,
                                            llvm::raw_ostream *table);

} // namespace mlir::mw

#endif // MEMWALL_DIALECT_MW_TRANSFORMS_MWOFFLOADAUTO_H
