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
#include "offload.h"
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
  //
  // A fetch likewise, when an mw.wait completes it: its copy writes the
  // slot until the wait, so a kernel in between that touches the slot (which
  // --mw-offload never places there) makes it copy where it stands.
  deferred.assign(kernels.size(), false);
  fetchOf.assign(kernels.size(), -1);
  waitOf.assign(kernels.size(), -1);
  int fetchCount = 0;
  for (size_t i = 0; i < kernels.size(); ++i) {
    bool fetch = kernels[i].kind == OpKind::Fetch && !kernels[i].program;
    if (fetch)
      fetchOf[i] = fetchCount++;
    if ((!isCollective(kernels[i].kind) && !fetch) || kernels[i].outs.empty())
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
        for (size_t k = i + 1; k < j && !overwritten; ++k) {
          for (const TensorRef &out : kernels[k].outs)
            for (const TensorRef &in : fetch ? kernels[i].outs : kernels[i].ins)
              overwritten |= overlaps(out, in);
          if (fetch)
            for (const TensorRef &in : kernels[k].ins)
              overwritten |= overlaps(in, result);
        }
        deferred[i] = !overwritten;
        if (fetch && deferred[i])
          waitOf[j] = fetchOf[i];
        break;
      }
  }
}

mwrt_status Executor::fetches(std::vector<FetchDesc> &out) const {
  out.clear();
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (fetchOf[i] < 0)
      continue;
    const KernelDesc &k = plan.kernels()[i];
    const BoundKernel &b = kernels[i];
    if (k.ins.size() != 1 || k.outs.size() != 1 || k.ins[0].inArena ||
        k.ins[0].persistent < 0)
      return setError(MWRT_INVALID_ARGUMENT,
                      plan.describeKernel(i) +
                          ": a fetch copies one persistent into one slot");
    const PersistentDesc &p = plan.persistents()[k.ins[0].persistent];
    if (k.ins[0].offset != 0 || k.ins[0].shape != p.shape ||
        !b.ins[0].isContiguous() || !b.outs[0].isContiguous() ||
        b.outs[0].dtype != p.dtype || b.outs[0].shape != p.shape)
      return setError(MWRT_UNAVAILABLE,
                      plan.describeKernel(i) + ": the runtime fetches whole "
                                               "persistents into contiguous "
                                               "slots of their type");
    FetchDesc d;
    d.kernel = i;
    d.persistent = k.ins[0].persistent;
    d.tensor = p.name;
    d.fromFile = p.placement == Placement::File;
    d.deferred = deferred[i];
    d.dst = b.outs[0].data;
    d.src = d.fromFile ? nullptr : b.ins[0].data;
    d.bytes = p.bytes;
    out.push_back(std::move(d));
  }
  return MWRT_OK;
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
  if (offload)
    if (mwrt_status st = offload->beginStep())
      return setError(st, "step " + std::to_string(step) + ": " +
                              mwrt_last_error());
  for (size_t i = 0; i < kernels.size(); ++i) {
    const BoundKernel &k = kernels[i];
    mwrt_status status;
    if (offload && fetchOf[i] >= 0) {
      // Issued here; completed by its wait, or at once.
      auto f = static_cast<size_t>(fetchOf[i]);
      status = offload->issue(f);
      if (status == MWRT_OK && !deferred[i])
        status = offload->wait(f);
    } else if (offload && waitOf[i] >= 0) {
      status = offload->wait(static_cast<size_t>(waitOf[i]));
      if (status == MWRT_OK)
        status = backend.run(k);
    } else {
      status = isCollective(k.kind)    ? comm.run(k, backend, deferred[i])
               : k.kind == OpKind::Wait ? comm.wait(k, backend)
                                        : backend.run(k);
    }
    if (status == MWRT_OK)
      continue;
    std::string message = mwrt_last_error();
    if (offload)
      offload->endStep(/*failed=*/true);
    return setError(status, "step " + std::to_string(step) + ", " +
                                plan.describeKernel(i) + ": " + message);
  }
  if (offload)
    if (mwrt_status st = offload->endStep(/*failed=*/false))
      return setError(st, "step " + std::to_string(step) +
                              ", at its end: " + mwrt_last_error());
  if (mwrt_status st = comm.finish())
    return setError(st, "step " + std::to_string(step) +
                            ", at its end: " + mwrt_last_error());
  return backend.synchronize();
}
