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
///
/// The named devices (one per memory class the verdict of
/// --mw-memory-report is asked about) follow the same rule: the memory is
/// the marketed figure in decimal bytes (N GB = N * 10^9), the compute the
/// vendor's dense (not 2:4 sparse) 16-bit tensor-core peak (fp16 on V100,
/// which has no bf16), the bandwidth the datasheet's, SXM parts where there
/// are several. docs/memory-report.md lists them. `v100` is V100-32GB under
/// the short name of the roofline targets (issue 18); `a6000` is the A6000
/// row (names are case-insensitive).
///
/// The host link (what --mw-offload streams weights over) is each device's
/// PCIe x16 link from pinned host memory, the effective host-to-device rate
/// (about 80% of the theoretical one after encoding and packet overhead,
/// what cudaMemcpy from cudaHostAlloc memory reaches):
///   PCIe 3.0 x16: 15.75 GB/s theoretical (8 GT/s, 128b/130b) -> 12 GB/s
///                 (V100)
///   PCIe 4.0 x16: 31.5 GB/s theoretical (16 GT/s)             -> 25 GB/s
///                 (A100, RTX4090, A6000, L40S)
///   PCIe 5.0 x16: 63 GB/s theoretical (32 GT/s)               -> 50 GB/s
///                 (H100, H200, B200's host link)
/// cpu: the "device" is host memory too, so a copy is one thread's memcpy
/// of a large buffer, nominally 10 GB/s (the runtime's copy thread).
static constexpr double kPcie3 = 12e9, kPcie4 = 25e9, kPcie5 = 50e9;
static const Target kTargets[] = {
    {"h200", 989e12, 4.8e12, 141'000'000'000, true, "H200 SXM, 141 GB HBM3e",
     kPcie5},
    {"h100", 989e12, 3.35e12, 80'000'000'000, true, "H100 SXM, 80 GB HBM3",
     kPcie5},
    {"a100", 312e12, 2.0e12, 80'000'000'000, true, "A100 SXM, 80 GB HBM2e",
     kPcie4},
    {"v100", 125e12, 900e9, 32'000'000'000, false,
     "Tesla V100 SXM2, 32 GB HBM2 (as V100-32GB)", kPcie3},
    {"V100-16GB", 125e12, 900e9, 16'000'000'000, false,
     "Tesla V100 SXM2, 16 GB HBM2", kPcie3},
    {"RTX4090", 165.2e12, 1008e9, 24'000'000'000, true,
     "GeForce RTX 4090, 24 GB GDDR6X", kPcie4},
    {"V100-32GB", 125e12, 900e9, 32'000'000'000, false,
     "Tesla V100 SXM2, 32 GB HBM2", kPcie3},
    {"A100-40GB", 312e12, 1555e9, 40'000'000'000, true,
     "A100 SXM4, 40 GB HBM2", kPcie4},
    {"A6000", 154.8e12, 768e9, 48'000'000'000, true,
     "RTX A6000, 48 GB GDDR6", kPcie4},
    {"L40S", 362.05e12, 864e9, 48'000'000'000, true, "L40S, 48 GB GDDR6",
     kPcie4},
    {"A100-80GB", 312e12, 2039e9, 80'000'000'000, true,
     "A100 SXM4, 80 GB HBM2e", kPcie4},
    {"H100-80GB", 989e12, 3.35e12, 80'000'000'000, true,
     "H100 SXM5, 80 GB HBM3", kPcie5},
    {"H200-141GB", 989e12, 4.8e12, 141'000'000'000, true,
     "H200 SXM, 141 GB HBM3e", kPcie5},
    {"B200-192GB", 2250e12, 8e12, 192'000'000'000, true,
     "B200, 192 GB HBM3e", kPcie5},
    {"cpu", 1e12, 1e11, 0, true, "a nominal server socket", 10e9}};

ArrayRef<Target> mlir::mw::getTargets() { return kTargets; }

const Target *mlir::mw::lookupTarget(StringRef name) {
  for (const Target &t : kTargets)
    if (t.name.equals_insensitive(name))
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
