//===- checkpoint.h - Sharded checkpoints of multi-rank plans ---*- C++ -*-===//
//
// Private to the runtime; mwrt/checkpoint.h has the public consolidation.
// A sharded checkpoint is a directory:
//   DIR/latest                   the tag of the newest complete checkpoint
//   DIR/<tag>/manifest.json      ranks, step, and every tensor's layout
//   DIR/<tag>/rank-<r>.safetensors
// written so that a crash at any point leaves `latest` naming a complete
// checkpoint (docs/multi-rank.md).
//
//===----------------------------------------------------------------------===//

#ifndef MWRT_SRC_CHECKPOINT_H
#define MWRT_SRC_CHECKPOINT_H

#include "mwrt/runtime.h"

#include <string>

namespace mwrt::detail {

/// Collective: every rank of a plan of several ranks calls it with its own
/// weights (`collected` is the status of gathering them). Writes a new
/// checkpoint of step `step` into `dir` (created if missing) and then points
/// DIR/latest at it. Every rank returns the same status.
mwrt_status writeShardedCheckpoint(const std::string &dir, const Plan &plan,
                                   int rank, uint64_t step,
                                   mwrt_status collected,
                                   const SafeTensors &weights);

/// The file rank `rank` of a plan of `ranks` ranks loads from the sharded
/// checkpoint `dir` (DIR/latest, or a checkpoint directory itself), and the
/// step it was saved after.
mwrt_status findShardedCheckpoint(const std::string &dir, uint32_t ranks,
                                  int rank, std::string &rankFile,
                                  uint64_t &step);

} // namespace mwrt::detail

#endif // MWRT_SRC_CHECKPOINT_H
