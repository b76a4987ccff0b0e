//===- Targets.cpp - Roofline targets and op costs ------------------------===//
//
// The table of named targets and the roofline time of an op (Targets.h).
//
//===----------------------------------------------------------------------===//

#include "memwall/Analysis/Targets.h"
#include "memwall/Dialect/MW/IR/MWOps.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::mw;

/// DESIGN.md decision 10. h200/h100: dense bf16 989 TFLOP/s, HBM3e 4.8 TB/s
/// and HBM3 3.35 TB/s; a100: 312 TFLOP/s, 2.0 TB/s; cpu: a nominal server
/// socket (1 TFLOP/s, 100 GB/s). Memory: the nominal capacity in decimal
/// gigabytes (141 GB, 80 GB, 80 GB), a little under what the devices report
/// (about 150.7 GB and 85.5 GB), which leaves room for the CUDA context and
/// library workspaces. The host has no fixed memory to plan for.
static const Target kTargets[] = {{"h200", 989e12, 4.8e12, 141'000'000'000},
                                  {"h100", 989e12, 3.35e12, 80'000'000'000},
                                  {"a100", 312e12, 2.0e12, 80'000'000'000},
                                  {"cpu", 1e12, 1e11, 0}};

ArrayRef<Target> mlir::mw::getTargets() { return kTargets; }

const Target *mlir::mw::lookupTarget(StringRef name) {
  for (const Target &t : kTargets)
    if (t.name == name)
      return &t;
  return nullptr;
}

const Target &mlir::mw::getDefaultTarget() { return kTargets[0]; }

std::string mlir::mw::getTargetNames() {
  std::string names;
  for (auto [i, t] : llvm::enumerate(kTargets)) {
    if (i)
      names += i + 1 == std::size(kTargets) ? " or " : ", ";
    names += t.name.str();
  }
  return names;
}

int64_t mlir::mw::getOpFlops(Operation *op) {
  if (auto cost = dyn_cast<CostOpInterface>(op))
    return cost.getFlops();
  return 0;
}

int64_t mlir::mw::getOpBytesMoved(Operation *op) {
  if (auto cost = dyn_cast<CostOpInterface>(op))
    return cost.getBytesRead() + cost.getBytesWritten();
  return 0;
}

double Target::getSeconds(Operation *op) const {
  auto cost = dyn_cast<CostOpInterface>(op);
  if (!cost)
    return 0.0;
  double compute = static_cast<double>(cost.getFlops()) / flopsPerSecond;
  double memory =
      static_cast<double>(cost.getBytesRead() + cost.getBytesWritten()) /
      bytesPerSecond;
  return std::max(compute, memory);
}

CostModel::CostModel(Operation *root) : CostModel(root, getDefaultTarget()) {}

CostModel::CostModel(Operation *root, const Target &target) : target(&target) {
  for (Region &region : root->getRegions())
    for (Block &block : region)
      for (Operation &op : block) {
        totalFlops += getOpFlops(&op);
        totalSeconds += target.getSeconds(&op);
      }
}
