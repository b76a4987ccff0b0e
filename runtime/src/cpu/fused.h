//===- fused.h - The CPU backend's fused kernels ---------------*- C++ -*-===//
//
// Private to the runtime: runs a fused kernel (a BoundKernel with a program,
// src/fusion.h) on the host, tile by tile (fused.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MWRT_SRC_CPU_FUSED_H
#define MWRT_SRC_CPU_FUSED_H

#include "executor.h"

namespace mwrt::cpu {

/// Runs fused kernel `k` in its scratch (fusedScratchBytes of it). The
/// message of a failure names the kernel's kind.
mwrt_status runFusedKernel(const detail::BoundKernel &k,
                           const CpuKernelOptions &options);

/// The scratch `program` needs on the host: its tile arrays, column-sum
/// accumulators, the matmul operands' f32 copies and the tile's row indices;
/// with `workers` > 1, another set of tile arrays and row indices for each
/// other worker of the pool that runs its tiles.
uint64_t fusedScratchBytes(const FusedProgramDesc &program, int workers = 1);

} // namespace mwrt::cpu

#endif // MWRT_SRC_CPU_FUSED_H
