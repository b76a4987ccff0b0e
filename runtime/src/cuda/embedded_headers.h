//===- embedded_headers.h - Runtime headers as strings ---------*- C++ -*-===//
//
// Private to the runtime: mwrt/formulas.h and mwrt/op_table.h as they were
// when the runtime was built (embedded_headers.cpp.in, filled in by CMake),
// which the CUDA C of fused kernels includes through NVRTC.
//
//===----------------------------------------------------------------------===//

#ifndef MWRT_SRC_CUDA_EMBEDDED_HEADERS_H
#define MWRT_SRC_CUDA_EMBEDDED_HEADERS_H

namespace mwrt::detail {
extern const char *const kEmbeddedFormulasHeader;
extern const char *const kEmbeddedOpTableHeader;
} // namespace mwrt::detail

#endif // MWRT_SRC_CUDA_EMBEDDED_HEADERS_H
