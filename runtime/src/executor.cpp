//===- executor.cpp - Device selection and the plan executor --------------===//
//
// Binds each kernel's operands once, when the session is created, so a step
// is a loop over prepared launches with no allocation of its own; and picks
// the backend for a device name. Asking for the CUDA backend without a
// device (src/cuda), or in a build without the CUDA toolkit, is a clear
// MWRT_UNAVAILABLE.
//
//===----------------------------------------------------------------------===//

#include "executor.h"
#include "comm/communicator.h"
#include "status.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace mwrt;
using namespace mwrt::detail;

#ifdef MWRT_HAVE_CUDA
namespace mwrt::detail {
/// src/cuda/backend_cuda.cpp.
mwrt_status createCudaBackend(const SessionOptions &options,
                              std::unique_ptr<Backend> &backend);
} // namespace mwrt::detail
#endif

Backend::~Backend() = default;

// The defaults: plain host memory and copies that complete where they are
// issued (the CPU and CUDA backends override them).
mwrt_status Backend::allocateHost(uint64_t bytes, uint64_t alignment,
                                  void *&ptr) {
  ptr = nullptr;
  if (bytes == 0)
    return MWRT_OK;
  alignment = std::max<uint64_t>(alignment, sizeof(void *));
  if (bytes > SIZE_MAX || posix_memalign(&ptr, static_cast<size_t>(alignment),
                                         static_cast<size_t>(bytes)) != 0) {
    ptr = nullptr;
    return setError(MWRT_INTERNAL, "out of host memory allocating " +
                                       std::to_string(bytes) + " bytes");
  }
  std::memset(ptr, 0, static_cast<size_t>(bytes));
  return MWRT_OK;
}

void Backend::releaseHost(void *ptr) { std::free(ptr); }

mwrt_status Backend::prepareCopies(size_t) { return MWRT_OK; }
mwrt_status Backend::markCopyIssue(size_t) { return MWRT_OK; }
mwrt_status Backend::copyToDevice(size_t, void *dst, const void *src,
                                  size_t bytes) {
  return upload(dst, src, bytes);
}
mwrt_status Backend::finishCopy(size_t) { return MWRT_OK; }
mwrt_status Backend::waitCopy(size_t) { return MWRT_OK; }

mwrt_status detail::createBackend(std::string_view device,
                                  const SessionOptions &options,
                                  std::unique_ptr<Backend> &backend) {
  if (device == "cpu") {
    backend = createCpuBackend(options);
    return MWRT_OK;
  }
  if (device == "cuda") {
#ifdef MWRT_HAVE_CUDA
    return createCudaBackend(options, backend);
#else
    int count = 0;
    if (mwrt_cuda_device_count(&count) != MWRT_OK)
      return setError(MWRT_UNAVAILABLE,
                      std::string("no CUDA device: ") + mwrt_last_error());
    return setError(MWRT_UNAVAILABLE,
                    "the CUDA backend is not built in this version (" +
                        std::to_string(count) + " CUDA device" +
                        (count == 1 ? "" : "s") + " found); use device cpu");
#endif
  }
  return setError(MWRT_INVALID_ARGUMENT, "unknown device '" +
                                             std::string(device) +
                                             "' (expected cpu or cuda)");
}

/// The byte range [begin, end) `t` addresses; false when it has none.
bool detail::byteSpan(const TensorRef &t, uintptr_t &begin, uintptr_t &end) {
  if (t.numElements() == 0 || !t.data)
    return false;
  int64_t lo = 0, hi = 0;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    int64_t span = (t.shape[d] - 1) * (t.strides.empty() ? 0 : t.strides[d]);
    (span < 0 ? lo : hi) += span;
  }
  if (t.strides.empty())
    hi = t.numElements() - 1;
  int64_t size = static_cast<int64_t>(dtypeSize(t.dtype));
  begin = reinterpret_cast<uintptr_t>(t.data) + lo * size;
  end = reinterpret_cast<uintptr_t>(t.data) + (hi + 1) * size;
  return true;
}

bool detail::overlaps(const TensorRef &a, const TensorRef &b) {
  uintptr_t ab, ae, bb, be;
  return byteSpan(a, ab, ae) && byteSpan(b, bb, be) && ab < be && bb < ae;
}

Executor::Executor(const Plan &plan, Backend &backend, Communicator &comm,
                   void *arena, std::vector<void *> persistents)
    : plan(plan), backend(backend), comm(comm), arena(arena),
      bases(std::move(persistents)) {
  kernels.reserve(plan.kernels().size());
  for (const KernelDesc &k : plan.kernels()) {
    BoundKernel &b = kernels.emplace_back();
    b.kind = k.kind;
    b.attrs = &k.attrs;
    for (const OperandDesc &o : k.ins)
      b.ins.push_back(bind(o));
    for (const OperandDesc &o : k.outs)
      b.outs.push_back(bind(o));
    if (!k.program)
      continue;
    b.program = k.program.get();
    if (k.program->kind != FusionKind::Horizontal)
      continue;
    // A horizontal kernel runs each update as its own kernel would.
    for (const FusedInstructionDesc &in : k.program->instructions) {
      auto &ins = b.groupIns.emplace_back();
      for (const FusedValueRef &v : in.operands)
        ins.push_back(b.ins[v.index]);
      b.groupOuts.emplace_back(in.shapes.size());
    }
    for (size_t y = 0; y < k.program->yields.size(); ++y) {
      const FusedValueRef &v = k.program->yields[y];
      b.groupOuts[v.instruction][v.index] = b.outs[y];
    }
  }
  // A collective may complete after it returns when an mw.wait later in the
  // plan completes it (overlap=on): the wait reads the collective's result.
  deferred.assign(kernels.size(), false);
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (!isCollective(kernels[i].kind) || kernels[i].outs.empty())
      continue;
    const TensorRef &result = kernels[i].outs[0];
    for (size_t j = i + 1; j < kernels.size() && result.data; ++j)
      if (kernels[j].kind == OpKind::Wait && !kernels[j].ins.empty() &&
          kernels[j].ins[0].data == result.data &&
          kernels[j].ins[0].shape == result.shape) {
        // The engine reads the operand until the wait: a kernel in between
        // that writes over it (a plan whose wait does not keep the operand
        // live, `reading`) makes the collective complete where it stands.
        bool overwritten = false;
        for (size_t k = i + 1; k < j && !overwritten; ++k)
          for (const TensorRef &out : kernels[k].outs)
            for (const TensorRef &in : kernels[i].ins)
              overwritten |= overlaps(out, in);
        deferred[i] = !overwritten;
        break;
      }
  }
}

uint64_t Executor::fusedScratchBytes() const {
  uint64_t bytes = 0;
  for (const BoundKernel &k : kernels)
    if (k.program)
      bytes = std::max(bytes, backend.fusedScratchBytes(*k.program));
  return bytes;
}

mwrt_status Executor::prepareFused() {
  for (size_t i = 0; i < kernels.size(); ++i)
    if (kernels[i].program)
      if (mwrt_status st = backend.prepareFused(*kernels[i].program)) {
        std::string message = mwrt_last_error();
        return setError(st, plan.describeKernel(i) + ": " + message);
      }
  return MWRT_OK;
}

void Executor::setFusedScratch(void *scratch) {
  for (BoundKernel &k : kernels)
    if (k.program)
      k.scratch = scratch;
}

TensorRef Executor::bind(const OperandDesc &o) const {
  // The plan was validated: every addressed element is inside its buffer,
  // and element 0 of the view (`offset`) may lie outside only when negative
  // strides bring every addressed element back in.
  auto *base = static_cast<uint8_t *>(
      o.inArena ? static_cast<uint8_t *>(arena) + o.arenaOffset
                : static_cast<uint8_t *>(bases[o.persistent]));
  int64_t count = 1;
  for (int64_t d : o.shape)
    count *= d;
  void *data = nullptr;
  if (count != 0 && base)
    data = base + o.offset * static_cast<int64_t>(dtypeSize(o.dtype));
  return TensorRef(o.dtype, o.shape, data, o.strides);
}

mwrt_status Executor::run(uint64_t step) {
  for (size_t i = 0; i < kernels.size(); ++i) {
    const BoundKernel &k = kernels[i];
    mwrt_status status = isCollective(k.kind) ? comm.run(k, backend, deferred[i])
                         : k.kind == OpKind::Wait ? comm.wait(k, backend)
                                                  : backend.run(k);
    if (status == MWRT_OK)
      continue;
    std::string message = mwrt_last_error();
    return setError(status, "step " + std::to_string(step) + ", " +
                                plan.describeKernel(i) + ": " + message);
  }
  if (mwrt_status st = comm.finish())
    return setError(st, "step " + std::to_string(step) +
                            ", at its end: " + mwrt_last_error());
  return backend.synchronize();
}
