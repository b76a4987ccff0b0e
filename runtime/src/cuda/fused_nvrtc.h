//===- fused_nvrtc.h - Compiling fused kernels with NVRTC ------*- C++ -*-===//
//
// Private to the runtime's CUDA backend (fused_nvrtc.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MWRT_SRC_CUDA_FUSED_NVRTC_H
#define MWRT_SRC_CUDA_FUSED_NVRTC_H

#include "mwrt/mwrt.h"

#include <string>

namespace mwrt::detail {

/// Compiles the CUDA C of a fused kernel for compute capability `sm` (80:
/// compute_80) into `ptx`, through the on-disk cache; `fromCache` says
/// whether the cache had it. MWRT_INTERNAL with NVRTC's log when it fails.
mwrt_status compileFusedCuda(const std::string &source, int sm,
                             std::string &ptx, bool *fromCache = nullptr);

/// The cache directory compileFusedCuda uses ("" when it is off).
std::string fusedCacheDirectory();

} // namespace mwrt::detail

#endif // MWRT_SRC_CUDA_FUSED_NVRTC_H
