//===- executor.h - Backends and the plan executor -------------*- C++ -*-===//
//
// Private to the runtime. A Backend owns what differs between devices:
// memory (allocate once, upload, download, device-to-device copies) and
// kernel launches. The Executor is device-independent: it binds every kernel
// of a plan to the memory the session allocated (TensorRefs with shapes,
// strides and data pointers computed once) and runs them in order through
// the backend. The CPU backend (executor_cpu.cpp) calls runCpuKernel; a CUDA
// backend implements the same interface and slots in through createBackend.
//
//===----------------------------------------------------------------------===//

#ifndef MWRT_SRC_EXECUTOR_H
#define MWRT_SRC_EXECUTOR_H

#include "mwrt/runtime.h"

#include <memory>
#include <string_view>
#include <vector>

namespace mwrt::detail {

/// One kernel with its tensors bound to device memory.
struct BoundKernel {
  OpKind kind = OpKind::Constant;
  const KernelAttrs *attrs = nullptr; ///< owned by the plan
  std::vector<TensorRef> ins, outs;
  /// A fused kernel's program (owned by the plan), else null.
  const FusedProgramDesc *program = nullptr;
  /// A horizontal fused kernel: each update's operands and results.
  std::vector<std::vector<TensorRef>> groupIns, groupOuts;
  /// The fused kernels' scratch (Backend::fusedScratchBytes), shared by all
  /// of them: they run one at a time.
  void *scratch = nullptr;
};

/// A device: memory and kernels. Pointers it returns are device pointers,
/// which on the CPU are host pointers.
class Backend {
public:
  virtual ~Backend();
  /// "cpu", "cuda".
  virtual const char *name() const = 0;
  /// Allocates `bytes` of zeroed memory aligned to `alignment` (a power of
  /// two); null for zero bytes. The session frees it with release().
  virtual mwrt_status allocate(uint64_t bytes, uint64_t alignment,
                               void *&ptr) = 0;
  virtual void release(void *ptr) = 0;
  /// Host `src` to device `dst`, and back.
  virtual mwrt_status upload(void *dst, const void *src, size_t bytes) = 0;
  virtual mwrt_status download(void *dst, const void *src, size_t bytes) = 0;
  /// Copies the elements of `src` into `dst` (same shape and element size,
  /// any strides, not overlapping), both in device memory.
  virtual mwrt_status copy(const TensorRef &dst, const TensorRef &src) = 0;
  /// Runs one kernel. The message of a failure names the op, not the step.
  virtual mwrt_status run(const BoundKernel &kernel) = 0;
  /// Waits for everything launched so far.
  virtual mwrt_status synchronize() { return MWRT_OK; }
  /// The scratch memory (device memory, allocated once with the session's
  /// workspace) a fused kernel needs while it runs.
  virtual uint64_t fusedScratchBytes(const FusedProgramDesc &program) const {
    (void)program;
    return 0;
  }
  /// Prepares a fused kernel when the session is created (the CUDA backend
  /// generates and compiles its code).
  virtual mwrt_status prepareFused(const FusedProgramDesc &program) {
    (void)program;
    return MWRT_OK;
  }

  // Offloaded weights (docs/runtime.md "Offloaded weights"). Host memory is
  // the host store of Host persistents and the file reader's staging: it is
  // not device memory (SessionStats counts it apart from the planned peak),
  // and on CUDA it is pinned so that copies from it run asynchronously. The
  // copy engine moves a fetch's bytes from host memory into its arena slot
  // while kernels run: copy `handle` (one per fetch kernel, made once by
  // prepareCopies, so a step allocates nothing) may write its destination
  // only after the kernels launched before markCopyIssue(handle), and the
  // kernels launched after waitCopy(handle) see its bytes.

  /// Zeroed host memory aligned to `alignment` (a power of two); null for
  /// zero bytes. Freed with releaseHost.
  virtual mwrt_status allocateHost(uint64_t bytes, uint64_t alignment,
                                   void *&ptr);
  virtual void releaseHost(void *ptr);
  /// Makes `count` copy handles.
  virtual mwrt_status prepareCopies(size_t count);
  /// The issue point of copy `handle`, in kernel order (called on the
  /// thread that runs the kernels).
  virtual mwrt_status markCopyIssue(size_t handle);
  /// Starts copy `handle`: `bytes` from host `src` to device `dst`. May be
  /// called from another thread than the kernels' (the file reader's
  /// feeder), after markCopyIssue(handle).
  virtual mwrt_status copyToDevice(size_t handle, void *dst, const void *src,
                                   size_t bytes);
  /// Blocks the calling thread until copy `handle` is complete, so that its
  /// source can be reused.
  virtual mwrt_status finishCopy(size_t handle);
  /// Kernels launched after this see copy `handle`'s bytes (the CPU blocks
  /// until it is complete; CUDA makes the kernels' stream wait for it).
  virtual mwrt_status waitCopy(size_t handle);
  /// Seconds the copy engine spent copying since the backend was made (on
  /// CUDA, as timed by events, summed when the step synchronizes).
  virtual double copySeconds() const { return 0; }
};

/// The backend for `device`: "cpu"; "cuda" fails with MWRT_UNAVAILABLE
/// ("no CUDA device: ..." or "the CUDA backend is not built in this
/// version"); anything else is MWRT_INVALID_ARGUMENT.
mwrt_status createBackend(std::string_view device,
                          const SessionOptions &options,
                          std::unique_ptr<Backend> &backend);
std::unique_ptr<Backend> createCpuBackend(const SessionOptions &options);

/// Copies the elements of host tensor `src` into host tensor `dst` (same
/// shape and element size, any strides, not overlapping). Allocates nothing
/// when both have explicit strides.
void copyHostTensor(const TensorRef &dst, const TensorRef &src);

/// The byte range [begin, end) `t` addresses; false when it has none.
bool byteSpan(const TensorRef &t, uintptr_t &begin, uintptr_t &end);
/// Whether the bytes `a` and `b` address overlap.
bool overlaps(const TensorRef &a, const TensorRef &b);

class Communicator;  // comm/communicator.h
class OffloadEngine; // offload.h
struct FetchDesc;

/// Binds a plan's operands to memory and runs its kernels: collectives
/// through the communicator, every other kernel through the backend.
class Executor {
public:
  /// `arena` and `persistents` (one base per Plan::persistents()) are
  /// device pointers the session allocated.
  Executor(const Plan &plan, Backend &backend, Communicator &comm, void *arena,
           std::vector<void *> persistents);

  /// The tensor `operand` describes, in this session's memory.
  TensorRef bind(const OperandDesc &operand) const;

  /// The scratch every fused kernel needs (the largest one's), and where it
  /// is once the session allocated it.
  uint64_t fusedScratchBytes() const;
  void setFusedScratch(void *scratch);
  /// Backend::prepareFused of every fused kernel; a failure names it.
  mwrt_status prepareFused();

  /// The plan's mw.fetch kernels (docs/offload.md), bound: each one's slot,
  /// persistent and bytes, and whether a later mw.wait completes it (its
  /// copy then runs while the kernels in between do). `src` is the
  /// persistent's memory (the host store; null for a File persistent).
  /// MWRT_UNAVAILABLE for a fetch of part of a persistent or into a strided
  /// slot, which --mw-offload does not make.
  mwrt_status fetches(std::vector<FetchDesc> &out) const;
  /// Runs the fetches through `engine` (prepared with fetches()).
  void setOffload(OffloadEngine *engine) { offload = engine; }

  /// Runs every kernel in order; a failure's message is prefixed with
  /// "step N, kernel K ('mw.op' at loc): ".
  mwrt_status run(uint64_t step);

private:
  const Plan &plan;
  Backend &backend;
  Communicator &comm;
  void *arena;
  std::vector<void *> bases;
  std::vector<BoundKernel> kernels;
  /// Per kernel: a collective or fetch that an mw.wait completes later.
  std::vector<bool> deferred;
  /// Per kernel: the fetch it is (an index among the plan's fetches), or
  /// the deferred fetch it completes (an mw.wait), else -1.
  std::vector<int> fetchOf, waitOf;
  OffloadEngine *offload = nullptr;
};

} // namespace mwrt::detail

#endif // MWRT_SRC_EXECUTOR_H
