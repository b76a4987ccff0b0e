//===- backend_cuda.h - The CUDA backend's stream, for NCCL -----*- C++ -*-===//
//
// Private to the runtime. The NCCL communicator (comm/nccl_communicator.cpp)
// runs the collectives of CUDA ranks on a stream of its own and orders them
// against the backend's kernels with events; this is the one thing it needs
// from the backend, which otherwise stays behind the Backend interface,
// and the check of CUDA runtime calls both use.
//
//===----------------------------------------------------------------------===//

#ifndef MWRT_SRC_CUDA_BACKEND_CUDA_H
#define MWRT_SRC_CUDA_BACKEND_CUDA_H

#include "executor.h"

#include <cuda_runtime.h>

#include <string>

/// Returns MWRT_INTERNAL naming the call when a CUDA runtime call fails
/// (setError of status.h must be visible where it expands).
#define MWRT_CUDA_CHECK(call)                                                  \
  do {                                                                         \
    if (cudaError_t cudaStatus_ = (call); cudaStatus_ != cudaSuccess)          \
      return setError(MWRT_INTERNAL, std::string(#call) + " failed: " +        \
                                         cudaGetErrorString(cudaStatus_));     \
  } while (false)

namespace mwrt::detail {

/// For work on another stream that must be ordered against the kernels of
/// `backend` (the CUDA backend): launches what the backend still holds back
/// (adamw kernels waiting to go as one launch), so that an event recorded on
/// the stream now follows every kernel run so far; stops the backend from
/// capturing steps into a CUDA graph (MWRT_CUDA_GRAPH), since a replayed
/// step would run apart from that work (a capture this step began is ended
/// and what it holds runs at once); and sets `stream` to the stream the
/// backend's kernels run on, in order. MWRT_INTERNAL when `backend` is not
/// the CUDA backend or already replays its steps as a graph.
mwrt_status cudaBackendStream(Backend &backend, cudaStream_t &stream);

} // namespace mwrt::detail

#endif // MWRT_SRC_CUDA_BACKEND_CUDA_H
