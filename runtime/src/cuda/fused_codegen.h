//===- fused_codegen.h - CUDA C for fused kernels --------------*- C++ -*-===//
//
// Private to the runtime. The CUDA backend runs a fused kernel as CUDA C
// generated from its analysed program (src/fusion.h) and compiled by NVRTC
// when the plan is loaded (fused_nvrtc.cpp). The generator is plain C++ with
// no CUDA dependency, so it is built and tested on every machine; the code
// it writes includes mwrt/formulas.h and mwrt/op_table.h (embedded in the
// runtime, with small stand-ins for the C++ headers they include, which
// NVRTC lacks), so a fused kernel computes each element with the formulas
// of the unfused kernels.
//
//===----------------------------------------------------------------------===//

#ifndef MWRT_SRC_CUDA_FUSED_CODEGEN_H
#define MWRT_SRC_CUDA_FUSED_CODEGEN_H

#include "mwrt/runtime.h"

#include <string>
#include <vector>

namespace mwrt::detail {

/// The name of the generated kernel's entry point.
inline constexpr const char kFusedEntry[] = "mw_fused";

/// How the generated kernel is launched: `threads` threads in all (one per
/// element, per row, or per column), in blocks of kFusedBlock.
struct FusedLaunch {
  int64_t threads = 0;
  /// A matmul kernel: the matmul's result ([rows, cols], row-major, of its
  /// dtype) is the kernel's last parameter, computed by cuBLASLt first.
  bool needsMatmul = false;
};
inline constexpr int kFusedBlock = 128;

/// CUDA C for `program` (a loop, row or matmul kernel; not horizontal):
///   extern "C" __global__ void mw_fused(const void *in0, ..., void *out0,
///                                       ..., const void *mm)
/// with `mm` only for a matmul kernel.
std::string generateFusedCuda(const FusedProgramDesc &program,
                              FusedLaunch &launch);

/// The in-memory headers the generated code includes: names and contents.
const std::vector<std::pair<std::string, std::string>> &fusedCudaHeaders();

} // namespace mwrt::detail

#endif // MWRT_SRC_CUDA_FUSED_CODEGEN_H
