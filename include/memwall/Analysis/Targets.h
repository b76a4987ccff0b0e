//===- Targets.h - Roofline targets and op costs ----------------*- C++ -*-===//
//
// The named machines passes price work on (DESIGN.md decision 10): peak dense
// compute, memory bandwidth and device memory of h200 (the default), h100,
// a100, the named devices of the 16-192 GB classes that the memory report's
// verdict checks a step against (V100-16GB .. B200-192GB; docs/memory-report.md)
// and a nominal cpu, and the roofline time of an op, the slower of its
// FLOPs at peak compute and its bytes moved at full bandwidth, from the
// CostOpInterface every mw op implements. CostModel is the same figures as an
// analysis over a function or module (`getAnalysis<CostModel>()`), so a pass
// that prices recompute, offload or communication reads one table.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_ANALYSIS_TARGETS_H
#define MEMWALL_ANALYSIS_TARGETS_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace mlir::mw {

/// A roofline: peak dense compute and memory bandwidth; the device memory a
/// `budget=auto` plans for (0: none, as on the host); and the host link that
/// offloaded weights stream over (--mw-offload=auto).
struct Target {
  llvm::StringRef name;
  double flopsPerSecond;
  double bytesPerSecond;
  /// The marketed capacity in decimal bytes ("16GB": 16 * 10^9).
  int64_t memoryBytes;
  /// Whether the device computes in bf16 (V100 has fp16 tensor cores only).
  bool hasBf16 = true;
  /// What the figures are: the device and its marketed memory.
  llvm::StringRef description = "";
  /// Host-to-device copy bandwidth from pinned host memory, bytes/s: the
  /// effective figure of the device's PCIe link (about 80% of the link's
  /// theoretical rate, what cudaMemcpy from pinned memory reaches); for cpu
  /// a single thread's memcpy.
  double hostLinkBytesPerSecond = 0;

  /// Seconds `op` takes by the roofline: the slower of compute and memory
  /// traffic; 0 for an op without a cost (constants, views, terminators).
  double getSeconds(Operation *op) const;
};

/// Every known target, the default (h200) first.
llvm::ArrayRef<Target> getTargets();

/// The target named `name` (case-insensitive), or null.
const Target *lookupTarget(llvm::StringRef name);

/// The default target, h200.
const Target &getDefaultTarget();

/// The target names for diagnostics: "h200, h100, a100, ... or cpu".
std::string getTargetNames();

/// FLOPs of `op` by its CostOpInterface, 0 without one.
int64_t getOpFlops(Operation *op);

/// Bytes `op` reads and writes by its CostOpInterface, 0 without one.
int64_t getOpBytesMoved(Operation *op);

/// FLOPs and roofline seconds of the ops of a function (or of any op with
/// regions) on one target: per op and summed over the top-level ops of its
/// regions (a kernel's cost is its body's, counted once at the kernel).
/// Constructible from an `Operation *` on the default target, so a pass
/// fetches it with `getAnalysis<CostModel>()`.
class CostModel {
public:
  explicit CostModel(Operation *root);
  CostModel(Operation *root, const Target &target);

  const Target &getTarget() const { return *target; }
  int64_t getFlops(Operation *op) const { return getOpFlops(op); }
  double getSeconds(Operation *op) const { return target->getSeconds(op); }
  int64_t getTotalFlops() const { return totalFlops; }
  double getTotalSeconds() const { return totalSeconds; }

private:
  const Target *target;
  int64_t totalFlops = 0;
  double totalSeconds = 0.0;
};

} // namespace mlir::mw

#endif // MEMWALL_ANALYSIS_TARGETS_H
