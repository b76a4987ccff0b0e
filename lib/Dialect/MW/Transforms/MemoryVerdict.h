//===- MemoryVerdict.h - The verdict of --mw-memory-report ------*- C++ -*-===//
//
// Does a step fit a device, and if not, what would make it fit: the figures
// of the verdict that `--mw-memory-report="target=NAME"` (or
// `device-memory=SIZE`) appends to the report, the runtime overhead the
// compiler can count, and the text and JSON forms. The predictions are made
// in MwMemoryReport.cpp, which plans copies of the module; this file only
// holds and prints them. Private to MwMemoryReport.cpp (docs/memory-report.md).
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_LIB_DIALECT_MW_TRANSFORMS_MEMORYVERDICT_H
#define MEMWALL_LIB_DIALECT_MW_TRANSFORMS_MEMORYVERDICT_H

#include "memwall/Analysis/Targets.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::mw {

/// The device a verdict is about: a named target's marketed memory, or
/// `device-memory=`.
struct Device {
  std::string name;
  std::string description;
  int64_t memoryBytes = 0;
  /// The roofline pricing recompute; null without a named target.
  const Target *target = nullptr;
  bool hasBf16 = true;
};

/// What the runtime allocates beyond the plan that the compiler can count
/// from the step (the CUDA backend, runtime/src/cuda/backend_cuda.cpp).
struct RuntimeOverhead {
  /// cuBLASLt's workspace, allocated once per session.
  int64_t cublasWorkspaceBytes = 0;
  /// The backend's kernel scratch, one buffer that grows to the largest
  /// request: f32 attention scores, B*H*S*Sk*4 bytes for mw.attention and
  /// (2*B*H*S*Sk + B*H*S + 1)*4 for mw.attention_grad.
  int64_t attentionScratchBytes = 0;
  std::string attentionScratchOp;
  int64_t total() const { return cublasWorkspaceBytes + attentionScratchBytes; }
};

/// The overhead of `func`'s attention ops (inside kernels or not).
RuntimeOverhead computeRuntimeOverhead(FunctionOpInterface func);

/// One change the compiler can make, with what it predicts.
struct Suggestion {
  /// offload, remat, chunk-loss, grad-accum, precision or zero.
  std::string kind;
  /// The option to pass, as a user types it.
  std::string change;
  /// measured (the pipeline ran on a copy), estimate, or unavailable.
  std::string basis;
  /// Per-rank peak (arena + persistent) and with the overhead.
  int64_t peakBytes = 0, requiredBytes = 0;
  bool fits = false;
  /// Recompute FLOPs (remat, chunk-loss) and their share of the step's
  /// FLOPs.
  int64_t extraFlops = 0;
  double extraFlopsFraction = 0.0;
  /// Bytes one rank sends per step (ZeRO, a ring's count).
  int64_t communicationBytes = 0;
  /// What else it costs or why it cannot be predicted.
  std::string note;
};

struct Verdict {
  std::string function;
  Device device;
  /// How the peak was found: planned (the step is planned), or measured
  /// on a copy of the module.
  std::string peakSource;
  int64_t arenaBytes = 0, persistentBytes = 0;
  int64_t peakBytes() const { return arenaBytes + persistentBytes; }
  RuntimeOverhead overhead;
  int64_t requiredBytes() const { return peakBytes() + overhead.total(); }
  int64_t marginBytes() const { return device.memoryBytes - requiredBytes(); }
  bool fits() const { return marginBytes() >= 0; }
  SmallVector<Suggestion> suggestions;
};

void printVerdictText(llvm::raw_ostream &os, const Verdict &v);
void printVerdictJson(llvm::json::OStream &j, const Verdict &v);

} // namespace mlir::mw

#endif // MEMWALL_LIB_DIALECT_MW_TRANSFORMS_MEMORYVERDICT_H
