//===- executor_cpu.cpp - The CPU backend ---------------------------------===//
//
// Host memory from posix_memalign (zeroed, so a plan that read memory before
// writing it would still be deterministic), kernels through runCpuKernel.
// Copies recurse over dimensions instead of walking an index vector, so a
// step's result copies allocate nothing.
//
//===----------------------------------------------------------------------===//

#include "cpu/fused.h"
#include "executor.h"
#include "status.h"

#include <cstdlib>
#include <cstring>
#include <string>

using namespace mwrt;
using namespace mwrt::detail;

namespace {

/// Copies dimension `d` onwards of `shape` from `src` to `dst`.
void copyDims(size_t d, const TensorRef &dstT, const TensorRef &srcT,
              uint8_t *dst, const uint8_t *src, int64_t elemSize) {
  if (d == dstT.shape.size()) {
    std::memcpy(dst, src, static_cast<size_t>(elemSize));
    return;
  }
  int64_t dStride = dstT.strides.empty() ? 0 : dstT.strides[d] * elemSize;
  int64_t sStride = srcT.strides.empty() ? 0 : srcT.strides[d] * elemSize;
  for (int64_t i = 0; i < dstT.shape[d]; ++i)
    copyDims(d + 1, dstT, srcT, dst + i * dStride, src + i * sStride, elemSize);
}

class CpuBackend final : public Backend {
public:
  explicit CpuBackend(const SessionOptions &options) {
    kernelOptions.referenceMatmul = options.referenceMatmul;
  }

  const char *name() const override { return "cpu"; }

  mwrt_status allocate(uint64_t bytes, uint64_t alignment,
                       void *&ptr) override {
    ptr = nullptr;
    if (bytes == 0)
      return MWRT_OK;
    if (alignment < sizeof(void *))
      alignment = sizeof(void *);
    if (bytes > SIZE_MAX || posix_memalign(&ptr, static_cast<size_t>(alignment),
                                           static_cast<size_t>(bytes)) != 0) {
      ptr = nullptr;
      return setError(MWRT_INTERNAL, "out of host memory");
    }
    std::memset(ptr, 0, static_cast<size_t>(bytes));
    return MWRT_OK;
  }

  void release(void *ptr) override { std::free(ptr); }

  mwrt_status upload(void *dst, const void *src, size_t bytes) override {
    if (bytes)
      std::memcpy(dst, src, bytes);
    return MWRT_OK;
  }

  mwrt_status download(void *dst, const void *src, size_t bytes) override {
    if (bytes)
      std::memcpy(dst, src, bytes);
    return MWRT_OK;
  }

  mwrt_status copy(const TensorRef &dst, const TensorRef &src) override {
    copyHostTensor(dst, src);
    return MWRT_OK;
  }

  mwrt_status run(const BoundKernel &k) override {
    if (k.program)
      return cpu::runFusedKernel(k, kernelOptions);
    return runCpuKernel(k.kind, *k.attrs, k.ins, k.outs, kernelOptions);
  }

  uint64_t fusedScratchBytes(const FusedProgramDesc &program) const override {
    return cpu::fusedScratchBytes(program);
  }

private:
  CpuKernelOptions kernelOptions;
};

} // namespace

std::unique_ptr<Backend>
detail::createCpuBackend(const SessionOptions &options) {
  return std::make_unique<CpuBackend>(options);
}

void detail::copyHostTensor(const TensorRef &dst, const TensorRef &src) {
  if (dst.numElements() == 0)
    return;
  int64_t elemSize = static_cast<int64_t>(dtypeSize(dst.dtype));
  if (dst.isContiguous() && src.isContiguous()) {
    std::memmove(dst.data, src.data,
                 static_cast<size_t>(dst.numElements() * elemSize));
    return;
  }
  if (!dst.strides.empty() && !src.strides.empty()) {
    copyDims(0, dst, src, static_cast<uint8_t *>(dst.data),
             static_cast<const uint8_t *>(src.data), elemSize);
    return;
  }
  // Empty strides mean row-major; give both sides explicit ones (the
  // session's own tensors always have them, so steps never get here).
  TensorRef d = dst, s = src;
  for (TensorRef *t : {&d, &s}) {
    if (!t->strides.empty())
      continue;
    t->strides.assign(t->shape.size(), 1);
    for (size_t i = t->shape.size(); i-- > 1;)
      t->strides[i - 1] = t->strides[i] * t->shape[i];
  }
  copyHostTensor(d, s);
}
