//===- nccl_communicator.cpp - CUDA ranks over NCCL -----------------------===//
//
// The collectives of a ZeRO step between CUDA ranks, one process and one GPU
// each, over NCCL, bootstrapped through the MPI group the process joined
// (mwrt::joinProcessGroup): rank 0 draws NCCL's unique id, MPI_Bcast hands
// it to every rank, and each creates its NCCL communicator, one per session.
// Under torchrun (engine "torchrun", no MPI) NCCL bootstraps itself: with
// NCCL_COMM_ID set alike on every rank (here MASTER_ADDR:MASTER_PORT+1, the
// group's `bootstrap`, unless the environment sets it), every rank's
// ncclGetUniqueId gives the same id, naming that address, and rank 0's
// ncclCommInitRank starts NCCL's bootstrap root there (NCCL's init.cc and
// bootstrap.cc), so no id is handed around.
//
// The device: the communicator is created before the backend
// (SessionImpl::init), so it picks the rank's GPU, localRank modulo the
// devices this process sees (one per rank when the launcher sets
// CUDA_VISIBLE_DEVICES, else the machine's), with cudaSetDevice before NCCL
// or the backend touches the device; the backend then allocates and launches
// on that current device. A session therefore runs on the thread that
// created it, as the CUDA backend already assumes.
//
// Overlap (DESIGN.md decision 9): the collectives run on a stream of their
// own, of the highest priority so that NCCL's kernels get SMs while compute
// kernels fill the device. Each collective is ordered after the kernels
// before it by an event recorded on the backend's stream, and records an
// event when done. One the plan does not wait for with mw.wait makes the
// backend's stream wait for that event at once; one it does is remembered
// by its result's address, and its mw.wait makes the backend's stream wait.
// No host thread blocks until the end of the step, where finish() waits,
// polling, for the last collective (the stream runs them in order). The
// backend captures no CUDA graph while collectives run on another stream
// (MWRT_CUDA_GRAPH is ignored then, see cudaBackendStream): a replayed step
// would run its kernels apart from them, and the end-of-step deadline could
// not see into it.
//
// Failures: the communicator is non-blocking (ncclConfig_t::blocking = 0),
// so no NCCL call can hang the host, not even its initialization or the
// connection set-up of a first collective; every wait, on a call that
// returned ncclInProgress or on the step's last event, polls
// ncclCommGetAsyncError against the deadline --comm-timeout sets. An
// asynchronous error or the deadline aborts the communicator
// (ncclCommAbort, which also ends NCCL kernels waiting for a rank that is
// gone) and fails the step with MWRT_UNAVAILABLE, like the MPI communicator.
//
// The results are NCCL's: its reductions add in the order of the ring or
// tree it picks, in the element type, so they are repeatable for one
// configuration but not mw-eval --ranks's rank-order f32 sums bit for bit
// (the MPI communicator's). Tensors go to NCCL in place: ZeRO's collectives
// are 1-D and contiguous, and one whose pieces are not consecutive in
// memory is refused rather than staged. CommStats counts what the MPI
// communicator counts, a ring's volumes, and commSeconds is the time
// between each collective's start and end on its stream.
//
//===----------------------------------------------------------------------===//

#include "comm/communicator.h"

#include "cuda/backend_cuda.h"
#include "status.h"

#include <cuda_runtime.h>
#if MWRT_HAVE_MPI
#include <mpi.h>
#endif
#include <nccl.h>

#include <cstdlib>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

using namespace mwrt;
using namespace mwrt::detail;

/// Returns the failure naming the call when an NCCL call fails, after
/// waiting (with the deadline) for one that returned ncclInProgress.
#define MWRT_NCCL_CHECK(call)                                                  \
  do {                                                                         \
    if (mwrt_status ncclStatus_ = settle(#call, (call)))                       \
      return ncclStatus_;                                                      \
  } while (false)

namespace {

using Clock = std::chrono::steady_clock;

/// The NCCL type and operation of mesh reduction `reduction` on `dtype`;
/// the same refusals, in the same words, as reduceBlocks.
mwrt_status ncclReduction(const std::string &reduction, DType dtype,
                          ncclDataType_t &type, ncclRedOp_t &op) {
  bool isFloat = true;
  switch (dtype) {
  case DType::F32:
    type = ncclFloat32;
    break;
  case DType::F16:
    type = ncclFloat16;
    break;
  case DType::BF16:
    type = ncclBfloat16;
    break;
  case DType::I32:
    type = ncclInt32;
    isFloat = false;
    break;
  case DType::I64:
    type = ncclInt64;
    isFloat = false;
    break;
  default:
    return setError(MWRT_INVALID_ARGUMENT,
                    "reduction '" + reduction + "' of " + dtypeName(dtype) +
                        " is not supported across ranks (sum, max, min, "
                        "product, and average on floats)");
  }
  if (reduction == "sum")
    op = ncclSum;
  else if (reduction == "max")
    op = ncclMax;
  else if (reduction == "min")
    op = ncclMin;
  else if (reduction == "product")
    op = ncclProd;
  else if (reduction == "average" && isFloat)
    op = ncclAvg;
  else
    return setError(MWRT_INVALID_ARGUMENT,
                    "reduction '" + reduction + "' of " + dtypeName(dtype) +
                        " is not supported across ranks (sum, max, min, "
                        "product, and average on floats)");
  return MWRT_OK;
}

/// One collective kernel's events, made at its first run and reused by
/// every step: when it starts and ends on the communicator's stream.
struct Slot {
  cudaEvent_t start = nullptr, done = nullptr;
};

class NcclCommunicator final : public Communicator {
public:
  explicit NcclCommunicator(double timeoutSeconds) : timeout(timeoutSeconds) {}

  ~NcclCommunicator() override {
    if (comm) {
      // A clean end needs every collective done and the other ranks ending
      // too (ncclCommFinalize waits for the group to be quiescent); a step
      // that failed part way, or a rank that is elsewhere after a failure,
      // ends in an abort, which waits for no one. The wait is short: a
      // healthy group finalizes in milliseconds.
      bool clean = cudaStreamQuery(stream) == cudaSuccess &&
                   poll(nullptr, ncclCommFinalize(comm), nullptr,
                        std::min(timeout, kFinalizeSeconds)) == Outcome::Done;
      if (clean)
        ncclCommDestroy(comm);
      else
        ncclCommAbort(comm);
    }
    for (auto &entry : slots)
      for (cudaEvent_t e : {entry.second.start, entry.second.done})
        if (e)
          cudaEventDestroy(e);
    if (ready)
      cudaEventDestroy(ready);
    if (stream)
      cudaStreamDestroy(stream);
  }

  /// Picks the device, makes the stream and joins the NCCL communicator of
  /// every rank. Collective over the group: every rank calls it and every
  /// rank fails when one does.
  mwrt_status init() {
    const ProcessGroup &group = processGroup();
    myRank = group.rank;
    ranks = group.size;
    ncclUniqueId id;
    std::memset(&id, 0, sizeof(id));
    // What can fail on one rank alone fails on every rank before the
    // collective calls, which would otherwise wait for it forever.
    int deviceCount = 0;
    const bool fromEnvironment = group.engine == "torchrun";
    mwrt_status local = [&]() -> mwrt_status {
      if (cudaError_t e = cudaGetDeviceCount(&deviceCount);
          e != cudaSuccess || deviceCount == 0)
        return setError(
            MWRT_UNAVAILABLE,
            std::string("no CUDA device: ") +
                (e != cudaSuccess ? cudaGetErrorString(e) : "no device found"));
      device = group.localRank % deviceCount;
      MWRT_CUDA_CHECK(cudaSetDevice(device));
      int least = 0, greatest = 0;
      MWRT_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
      MWRT_CUDA_CHECK(cudaStreamCreateWithPriority(
          &stream, cudaStreamNonBlocking, greatest));
      MWRT_CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
      // torchrun: NCCL_COMM_ID (the environment's, else the group's
      // bootstrap address) makes every rank's id the same.
      if (fromEnvironment)
        ::setenv("NCCL_COMM_ID", group.bootstrap.c_str(), /*overwrite=*/0);
      if (ncclResult_t r = myRank == 0 || fromEnvironment ? ncclGetUniqueId(&id)
                                                          : ncclSuccess;
          r != ncclSuccess)
        return setError(MWRT_UNAVAILABLE,
                        "ncclGetUniqueId failed: " + ncclText(r));
      return MWRT_OK;
    }();
    if (mwrt_status st = agreeAcrossRanks(local))
      return st;
    if (!fromEnvironment) {
#if MWRT_HAVE_MPI
      if (MPI_Bcast(&id, static_cast<int>(sizeof(id)), MPI_BYTE, 0,
                    MPI_COMM_WORLD) != MPI_SUCCESS)
        return setError(MWRT_UNAVAILABLE,
                        "MPI_Bcast of NCCL's unique id failed");
#else
      return setError(MWRT_UNAVAILABLE,
                      "CUDA ranks of an MPI launcher need MPI, which this "
                      "build does not have");
#endif
    }
    local = [&]() -> mwrt_status {
      ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
      config.blocking = 0;
      MWRT_NCCL_CHECK(
          ncclCommInitRankConfig(&comm, ranks, id, myRank, &config));
      return MWRT_OK;
    }();
    // NCCL refuses two ranks on one device: say how that may have come.
    if (local != MWRT_OK && group.localRank >= deviceCount)
      local = setError(
          local, std::string(mwrt_last_error()) + " (local rank " +
                     std::to_string(group.localRank) + " sees " +
                     std::to_string(deviceCount) +
                     " CUDA devices and took device " + std::to_string(device) +
                     ", which another rank may use too: start at most one "
                     "rank per GPU)");
    mwrt_status st = agreeAcrossRanks(local);
    if (st != MWRT_OK && comm) {
      ncclCommAbort(comm);
      comm = nullptr;
    }
    return st;
  }

  const char *name() const override { return "nccl"; }
  int rank() const override { return myRank; }
  int size() const override { return ranks; }

  mwrt_status run(const BoundKernel &kernel, Backend &backend,
                  bool deferred) override {
    if (!comm)
      return aborted();
    std::string reduction;
    int64_t axis = 0;
    if (mwrt_status st = checkCollective(kernel, ranks, reduction, axis))
      return st;
    for (const TensorRef &t : kernel.ins)
      if (t.numElements() && !t.data)
        return setError(MWRT_INTERNAL, "a collective's operand has no memory");
    if (mwrt_status st = cudaBackendStream(backend, compute))
      return st;
    const TensorRef &in = kernel.ins[0], &out = kernel.outs[0];
    if (kernel.kind == OpKind::MeshAllSlice) {
      // The rank's own piece: a copy in the backend's stream order, nothing
      // to send.
      countPayload(kernel);
      return backend.copy(out, pieceOf(in, axis, myRank, ranks));
    }
    if (mwrt_status st = checkLayout(kernel, axis))
      return st;
    ncclDataType_t type = ncclUint8;
    ncclRedOp_t op = ncclSum;
    if (kernel.kind != OpKind::MeshAllGather)
      if (mwrt_status st = ncclReduction(reduction, in.dtype, type, op))
        return st;
    countPayload(kernel);
    // Every rank has the same shapes, so every rank skips an empty one.
    if (in.numElements() == 0 || out.numElements() == 0)
      return MWRT_OK;

    Slot *slot = nullptr;
    if (mwrt_status st = slotFor(kernel, slot))
      return st;
    MWRT_CUDA_CHECK(cudaEventRecord(ready, compute));
    MWRT_CUDA_CHECK(cudaStreamWaitEvent(stream, ready, 0));
    MWRT_CUDA_CHECK(cudaEventRecord(slot->start, stream));
    const size_t esz = dtypeSize(in.dtype);
    switch (kernel.kind) {
    case OpKind::MeshAllReduce:
      MWRT_NCCL_CHECK(ncclAllReduce(in.data, out.data,
                                    static_cast<size_t>(in.numElements()), type,
                                    op, comm, stream));
      break;
    case OpKind::MeshReduceScatter:
      MWRT_NCCL_CHECK(ncclReduceScatter(in.data, out.data,
                                        static_cast<size_t>(out.numElements()),
                                        type, op, comm, stream));
      break;
    default: // all_gather: bytes, any element type, as over MPI
      MWRT_NCCL_CHECK(ncclAllGather(in.data, out.data,
                                    static_cast<size_t>(in.numElements()) * esz,
                                    ncclUint8, comm, stream));
      break;
    }
    MWRT_CUDA_CHECK(cudaEventRecord(slot->done, stream));
    launched.push_back(slot);
    if (deferred) {
      pending[out.data] = slot;
      return MWRT_OK;
    }
    MWRT_CUDA_CHECK(cudaStreamWaitEvent(compute, slot->done, 0));
    return MWRT_OK;
  }

  mwrt_status wait(const BoundKernel &kernel, Backend &backend) override {
    if (!comm)
      return aborted();
    if (!kernel.ins.empty()) {
      auto it = pending.find(kernel.ins[0].data);
      if (it != pending.end()) {
        const Slot *slot = it->second;
        pending.erase(it);
        if (mwrt_status st = cudaBackendStream(backend, compute))
          return st;
        MWRT_CUDA_CHECK(cudaStreamWaitEvent(compute, slot->done, 0));
      }
    }
    return backend.run(kernel);
  }

  mwrt_status finish() override {
    if (!comm)
      return aborted();
    // A collective whose mw.wait did not run (a plan without one is not
    // deferred) still orders what comes after it.
    for (auto &entry : pending)
      MWRT_CUDA_CHECK(cudaStreamWaitEvent(compute, entry.second->done, 0));
    pending.clear();
    if (launched.empty())
      return MWRT_OK;
    auto start = Clock::now();
    mwrt_status st = await("the collective", launched.back()->done);
    counters.waitSeconds +=
        std::chrono::duration<double>(Clock::now() - start).count();
    if (st == MWRT_OK)
      for (const Slot *slot : launched) {
        float ms = 0;
        if (cudaEventElapsedTime(&ms, slot->start, slot->done) == cudaSuccess)
          counters.commSeconds += ms / 1e3;
      }
    launched.clear();
    return st;
  }

private:
  enum class Outcome { Done, Failed, TimedOut };

  std::string ncclText(ncclResult_t r) const {
    std::string text = ncclGetErrorString(r);
    const char *last = ncclGetLastError(comm);
    if (last && *last)
      text += std::string(" (") + last + ")";
    return text;
  }

  /// Waits until `event` has completed or, without one, until the state of
  /// the communicator leaves ncclInProgress, `first` being the result of
  /// the call that began the wait; at most --comm-timeout. `error` receives
  /// NCCL's failure.
  Outcome poll(cudaEvent_t event, ncclResult_t first,
               ncclResult_t *error = nullptr, double seconds = -1) {
    ncclResult_t state = first;
    auto deadline = Clock::now() + std::chrono::duration<double>(
                                       seconds < 0 ? timeout : seconds);
    for (unsigned spins = 0;; ++spins) {
      if (event) {
        cudaError_t e = cudaEventQuery(event);
        if (e == cudaSuccess)
          return Outcome::Done;
        if (e != cudaErrorNotReady) {
          state = ncclUnhandledCudaError;
          break;
        }
      }
      if (state != ncclSuccess && state != ncclInProgress)
        break;
      if (!event && state == ncclSuccess)
        return Outcome::Done;
      if (Clock::now() >= deadline)
        return Outcome::TimedOut;
      // Yield first (a collective is often microseconds from done), then
      // sleep so that a long wait does not take a core from the data
      // loader.
      if (spins < 1000)
        std::this_thread::yield();
      else
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      if (ncclResult_t r = ncclCommGetAsyncError(comm, &state);
          r != ncclSuccess)
        state = r;
    }
    if (error)
      *error = state;
    return Outcome::Failed;
  }

  /// The end of a wait that did not complete: the communicator is aborted
  /// and every later collective fails with `message`.
  mwrt_status abandon(std::string message) {
    if (comm)
      ncclCommAbort(comm);
    comm = nullptr;
    pending.clear();
    launched.clear();
    failure = message;
    return setError(MWRT_UNAVAILABLE, std::move(message));
  }

  mwrt_status timedOut(const std::string &what) {
    return abandon(what + " did not complete within " +
                   std::to_string(static_cast<int64_t>(timeout)) +
                   " s (--comm-timeout): another rank failed or stopped");
  }

  /// Waits for `event` (see poll); a failure or the deadline abandons the
  /// communicator.
  mwrt_status await(const std::string &what, cudaEvent_t event) {
    ncclResult_t error = ncclSuccess;
    switch (poll(event, ncclSuccess, &error)) {
    case Outcome::Done:
      return MWRT_OK;
    case Outcome::TimedOut:
      return timedOut(what);
    case Outcome::Failed:
      break;
    }
    return abandon(
        what + " failed: " + ncclText(error) +
        (error == ncclUnhandledCudaError
             ? std::string(": ") + cudaGetErrorString(cudaEventQuery(event))
             : std::string(": another rank may have failed")));
  }

  /// The end of NCCL call `call`, which returned `result`: waits for it
  /// when in progress.
  mwrt_status settle(const char *call, ncclResult_t result) {
    if (result == ncclSuccess)
      return MWRT_OK;
    ncclResult_t error = result;
    if (result == ncclInProgress && comm) {
      switch (poll(nullptr, result, &error)) {
      case Outcome::Done:
        return MWRT_OK;
      case Outcome::TimedOut:
        return timedOut(call);
      case Outcome::Failed:
        break;
      }
    }
    return abandon(std::string(call) + " failed: " + ncclText(error));
  }

  mwrt_status aborted() const {
    return setError(MWRT_UNAVAILABLE,
                    "the NCCL communicator was aborted after an earlier "
                    "failure: " +
                        failure);
  }

  /// NCCL reads and writes the tensors where they are: contiguous, with the
  /// ranks' pieces of the large one one after the other in rank order, and
  /// overlapping only as NCCL's in-place forms do (the result is the
  /// operand, or this rank's piece of it).
  mwrt_status checkLayout(const BoundKernel &k, int64_t axis) const {
    const TensorRef &in = k.ins[0], &out = k.outs[0];
    bool ok = k.kind == OpKind::MeshAllReduce
                  ? in.isContiguous() && out.isContiguous()
              : k.kind == OpKind::MeshReduceScatter
                  ? piecesAreConsecutive(in, axis) && out.isContiguous()
                  : in.isContiguous() && piecesAreConsecutive(out, axis);
    if (ok) {
      const size_t esz = dtypeSize(in.dtype);
      const auto *i0 = static_cast<const uint8_t *>(in.data);
      const auto *o0 = static_cast<const uint8_t *>(out.data);
      const uint8_t *i1 = i0 + in.numElements() * esz;
      const uint8_t *o1 = o0 + out.numElements() * esz;
      if (!(i0 < o1 && o0 < i1))
        return MWRT_OK;
      const uint8_t *inPlace = k.kind == OpKind::MeshAllReduce ? i0
                               : k.kind == OpKind::MeshReduceScatter
                                   ? i0 + myRank * (o1 - o0)
                                   : o0 + myRank * (i1 - i0);
      if ((k.kind == OpKind::MeshAllGather ? i0 : o0) == inPlace)
        return MWRT_OK;
      return setError(MWRT_UNAVAILABLE,
                      std::string("'") + opKindName(k.kind) +
                          "' on CUDA ranks: the result overlaps the operand "
                          "other than as NCCL's in-place form");
    }
    std::string where = k.kind == OpKind::MeshAllReduce
                            ? std::string("contiguous tensors")
                            : "contiguous tensors whose pieces along axis " +
                                  std::to_string(axis) +
                                  " lie one after the other";
    return setError(MWRT_UNAVAILABLE,
                    std::string("'") + opKindName(k.kind) +
                        "' on CUDA ranks: NCCL takes " + where +
                        ", and these are not (the NCCL communicator does not "
                        "stage; ZeRO's collectives are 1-D and contiguous)");
  }

  /// `k`'s events, made at its first run.
  mwrt_status slotFor(const BoundKernel &k, Slot *&slot) {
    slot = &slots[&k];
    if (!slot->start)
      MWRT_CUDA_CHECK(cudaEventCreate(&slot->start));
    if (!slot->done)
      MWRT_CUDA_CHECK(cudaEventCreate(&slot->done));
    return MWRT_OK;
  }

  /// The most the destructor waits for the group to finalize.
  static constexpr double kFinalizeSeconds = 10;

  double timeout;
  int myRank = 0, ranks = 1, device = 0;
  ncclComm_t comm = nullptr;
  /// The collectives' stream, and the backend's (seen at the last run).
  cudaStream_t stream = nullptr, compute = nullptr;
  /// Recorded on the backend's stream before each collective.
  cudaEvent_t ready = nullptr;
  std::map<const BoundKernel *, Slot> slots;
  /// This step's collectives, in launch order.
  std::vector<const Slot *> launched;
  /// Deferred collectives by the address of their result.
  std::map<void *, const Slot *> pending;
  /// Why the communicator was aborted.
  std::string failure;
};

} // namespace

namespace mwrt::detail {
mwrt_status createNcclCommunicator(const SessionOptions &options,
                                   std::unique_ptr<Communicator> &comm) {
  auto nccl = std::make_unique<NcclCommunicator>(options.commTimeoutSeconds);
  if (mwrt_status st = nccl->init())
    return st;
  comm = std::move(nccl);
  return MWRT_OK;
}
} // namespace mwrt::detail
