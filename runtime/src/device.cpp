//===- device.cpp - Device discovery through the CUDA driver --------------===//
//
// libcuda is opened at run time (as IREE's CUDA HAL does), so the runtime
// links and runs on machines without a GPU or driver.
//
//===----------------------------------------------------------------------===//

#include "mwrt/mwrt.h"
#include "status.h"

#include <dlfcn.h>
#include <string>

namespace {
using CuInitFn = int (*)(unsigned);
using CuDeviceGetCountFn = int (*)(int *);
} // namespace

extern "C" int mwrt_built_with_cuda(void) {
#ifdef MWRT_HAVE_CUDA
  return 1;
#else
  return 0;
#endif
}

extern "C" mwrt_status mwrt_cuda_device_count(int *count) {
  if (!count)
    return mwrt::setError(MWRT_INVALID_ARGUMENT, "count is null");
  *count = 0;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return mwrt::setError(MWRT_UNAVAILABLE,
                          "no CUDA driver (libcuda.so.1 not found)");
  auto cuInit = reinterpret_cast<CuInitFn>(dlsym(lib, "cuInit"));
  auto cuDeviceGetCount =
      reinterpret_cast<CuDeviceGetCountFn>(dlsym(lib, "cuDeviceGetCount"));
  if (!cuInit || !cuDeviceGetCount)
    return mwrt::setError(MWRT_UNAVAILABLE,
                          "libcuda.so.1 lacks cuInit/cuDeviceGetCount");
  if (int err = cuInit(0))
    return mwrt::setError(MWRT_UNAVAILABLE,
                          "cuInit(0) failed with CUresult " +
                              std::to_string(err));
  if (int err = cuDeviceGetCount(count))
    return mwrt::setError(MWRT_UNAVAILABLE,
                          "cuDeviceGetCount failed with CUresult " +
                              std::to_string(err));
  if (*count == 0)
    return mwrt::setError(MWRT_UNAVAILABLE, "no CUDA device");
  return MWRT_OK;
}
