//===- checkpoint.h - Consolidating a sharded checkpoint --------*- C++ -*-===//
//
// A multi-rank run's --save-weights writes a sharded checkpoint: each rank
// its own ZeRO pieces (docs/multi-rank.md). consolidateCheckpoint merges one
// into a single safetensors file of whole tensors under their unsharded
// names, which a one-rank plan (or another rank count) loads: what
// DeepSpeed's zero_to_fp32.py does for its checkpoints.
//
//===----------------------------------------------------------------------===//

#ifndef MWRT_CHECKPOINT_H
#define MWRT_CHECKPOINT_H

#include "mwrt/mwrt.h"

#include <string>
#include <vector>

namespace mwrt {

struct ConsolidateResult {
  int ranks = 0;
  uint64_t step = 0;
  size_t tensors = 0; ///< whole tensors written
  uint64_t bytes = 0; ///< their bytes
  /// Whole tensors that differ between ranks (each rank should hold the
  /// same); rank 0's is written.
  std::vector<std::string> warnings;
};

/// Merges the sharded checkpoint `dir` (DIR/latest, or a checkpoint
/// directory itself) into `output` (atomically: an existing file is replaced
/// only by a complete new one).
mwrt_status consolidateCheckpoint(const std::string &dir,
                                  const std::string &output,
                                  ConsolidateResult &result);

} // namespace mwrt

#endif // MWRT_CHECKPOINT_H
