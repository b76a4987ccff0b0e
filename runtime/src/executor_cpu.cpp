//===- executor_cpu.cpp - The CPU backend ---------------------------------===//
//
// Host memory from posix_memalign (zeroed, so a plan that read memory before
// writing it would still be deterministic), kernels through runCpuKernel
// with the backend's worker pool (cpu/thread_pool.h: SessionOptions::threads
// threads, the caller's included), which the kernels split their
// independent rows, elements, tiles and matmul blocks across.
// Copies recurse over dimensions instead of walking an index vector, so a
// step's result copies allocate nothing. The copy engine of offloaded
// weights is a copy thread with a queue of fixed capacity (one entry per
// handle): the "device" is host memory here, so a fetch's copy is a memcpy
// from the host store into the arena, done while the kernels run, which is
// the same issue/wait schedule the CUDA backend's copy stream follows.
//
//===----------------------------------------------------------------------===//

#include "cpu/fused.h"
#include "cpu/thread_pool.h"
#include "executor.h"
#include "status.h"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

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
  explicit CpuBackend(const SessionOptions &options)
      : pool(options.threads > 0 ? options.threads
                                 : cpu::ThreadPool::defaultThreads()) {
    kernelOptions.referenceMatmul = options.referenceMatmul;
    kernelOptions.pool = &pool;
  }
  ~CpuBackend() override {
    if (!copier.joinable())
      return;
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    queued.notify_all();
    copier.join();
  }

  mwrt_status prepareCopies(size_t count) override {
    std::lock_guard<std::mutex> lock(mutex);
    issued.assign(count, 0);
    done.assign(count, 0);
    ring.assign(count, Job());
    head = size = 0;
    if (count && !copier.joinable())
      copier = std::thread([this] { copyLoop(); });
    return MWRT_OK;
  }

  mwrt_status copyToDevice(size_t handle, void *dst, const void *src,
                           size_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex);
    if (handle >= issued.size() || size == ring.size())
      return setError(MWRT_INTERNAL, "copy handle " + std::to_string(handle) +
                                         " is out of range or still busy");
    ring[(head + size++) % ring.size()] = Job{handle, dst, src, bytes};
    ++issued[handle];
    queued.notify_one();
    return MWRT_OK;
  }

  mwrt_status finishCopy(size_t handle) override { return waitCopy(handle); }

  mwrt_status waitCopy(size_t handle) override {
    std::unique_lock<std::mutex> lock(mutex);
    if (handle >= issued.size())
      return setError(MWRT_INTERNAL,
                      "copy handle " + std::to_string(handle) + " is out of range");
    completed.wait(lock, [&] { return done[handle] == issued[handle]; });
    return MWRT_OK;
  }

  double copySeconds() const override {
    std::lock_guard<std::mutex> lock(mutex);
    return busySeconds;
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
    return cpu::fusedScratchBytes(program, pool.size());
  }

private:
  /// The copy thread: takes jobs in issue order and copies each.
  void copyLoop() {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      queued.wait(lock, [&] { return stopping || size > 0; });
      if (size == 0)
        return;
      Job job = ring[head];
      lock.unlock();
      auto start = std::chrono::steady_clock::now();
      if (job.bytes)
        std::memcpy(job.dst, job.src, job.bytes);
      double seconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
      lock.lock();
      head = (head + 1) % ring.size();
      --size;
      busySeconds += seconds;
      ++done[job.handle];
      completed.notify_all();
    }
  }

  struct Job {
    size_t handle = 0;
    void *dst = nullptr;
    const void *src = nullptr;
    size_t bytes = 0;
  };

  /// The kernels' workers, started once with the backend.
  cpu::ThreadPool pool;
  CpuKernelOptions kernelOptions;
  mutable std::mutex mutex;
  std::condition_variable queued, completed;
  std::thread copier;
  std::vector<Job> ring;
  size_t head = 0, size = 0;
  /// Per handle: copies started and completed (equal when it is idle).
  std::vector<uint64_t> issued, done;
  double busySeconds = 0;
  bool stopping = false;
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
