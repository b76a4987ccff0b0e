//===- Pipelines.h - Memwall's pass pipelines -------------------*- C++ -*-===//
//
// The pipelines mw-opt offers, built in lib/Dialect/MW/Transforms/Passes.cpp
// (IREE's layout: one Passes.cpp builds the pipelines, Passes.h holds only
// the generated pass declarations): --mw-bufferize turns an mw program on
// tensors into mw.kernel ops on memrefs, --mw-train-pipeline compiles a step
// for the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_DIALECT_MW_TRANSFORMS_PIPELINES_H
#define MEMWALL_DIALECT_MW_TRANSFORMS_PIPELINES_H

#include "memwall/Transforms/Passes.h"

namespace mlir {
class OpPassManager;

namespace mw {
/// Adds --mw-bufferize's passes to `pm`: --mw-form-kernels, then
/// --mw-one-shot-bufferize (One-Shot Bufferize across function boundaries
/// with identity-layout memrefs, in-place decisions by a linear rule), then
/// --mw-fold-views when `foldViews`.
void buildBufferizePipeline(OpPassManager &pm, bool foldViews = true);

/// The pipeline's own switches of --mw-train-pipeline (the rest of its
/// options are --mw-static-arena's).
struct TrainPipelineFlags {
  /// --mw-hoist-updates first: each update as soon as it may run.
  bool hoistUpdates = true;
  /// --mw-sink and --mw-fuse before bufferization.
  bool fuse = false;
  /// --mw-chunk-loss=chunks=N first, when N > 0 (with fused=true when `fuse`:
  /// its peak rule then judges the kernels --mw-fuse will form).
  int64_t chunkLoss = 0;
  /// ... with defer-weight-grad=true (only with chunkLoss > 0).
  bool deferWeightGrad = false;
};

/// Adds --mw-train-pipeline's passes to `pm`: --mw-sink when `flags.fuse`,
/// --mw-hoist-updates unless `flags.hoistUpdates` is false, --mw-fuse when
/// `flags.fuse`, --mw-bufferize, --mw-static-arena with `arenaOptions`, and
/// --mw-verify-plan on every function; the result is what `mw-translate
/// --mw-to-plan` takes.
void buildTrainPipeline(OpPassManager &pm,
                        const MwStaticArenaOptions &arenaOptions = {},
                        const TrainPipelineFlags &flags = {});

/// Registers the --mw-bufferize and --mw-train-pipeline pipelines. The
/// options of --mw-train-pipeline are --mw-static-arena's own, which the
/// pipeline hands to the pass to parse and check, and its own `fuse`
/// (default false), `hoist-updates` (default true), `chunk-loss` (default
/// 0, off) and `defer-weight-grad` (default false): TrainPipelineFlags.
void registerMWPipelines();
} // namespace mw
} // namespace mlir

#endif // MEMWALL_DIALECT_MW_TRANSFORMS_PIPELINES_H
