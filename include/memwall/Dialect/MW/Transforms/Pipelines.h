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
/// Adds --mw-bufferize's passes to `pm`: --mw-form-kernels, then One-Shot
/// Bufferize across function boundaries with identity-layout memrefs, then
/// --mw-fold-views when `foldViews`.
void buildBufferizePipeline(OpPassManager &pm, bool foldViews = true);

/// Adds --mw-train-pipeline's passes to `pm`: --mw-fuse when `fuse`,
/// --mw-bufferize, --mw-static-arena with `arenaOptions`, and
/// --mw-verify-plan on every function; the result is what `mw-translate
/// --mw-to-plan` takes.
void buildTrainPipeline(OpPassManager &pm,
                        const MwStaticArenaOptions &arenaOptions = {},
                        bool fuse = false);

/// Registers the --mw-bufferize and --mw-train-pipeline pipelines. The
/// options of --mw-train-pipeline are --mw-static-arena's own, which the
/// pipeline hands to the pass to parse and check, and its own `fuse`
/// (default false: run --mw-fuse first).
void registerMWPipelines();
} // namespace mw
} // namespace mlir

#endif // MEMWALL_DIALECT_MW_TRANSFORMS_PIPELINES_H
