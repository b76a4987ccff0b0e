//===- mpi_communicator.cpp - CPU ranks over Open MPI ---------------------===//
//
// The collectives of a ZeRO step between CPU ranks, one process each, over
// MPI_COMM_WORLD (duplicated per session). Every MPI call of a step is made
// by the communicator's own thread, in plan order, which every rank shares:
// the executor queues each collective and goes on computing; a collective
// the plan does not wait for with mw.wait is waited for at once, one it does
// at its mw.wait (overlap=on). The main thread waits with a deadline
// (--comm-timeout), so a rank that stopped answering ends the step with an
// error instead of a hang.
//
// The results are those of mw-eval --ranks N, bit for bit: a reduction is an
// MPI_Alltoall of the ranks' pieces (each rank receives every rank's share
// of its own piece) followed by the sum in rank order, 0 first, with the
// evaluator's arithmetic; an all_reduce is that reduce-scatter followed by
// an MPI_Allgather of the reduced pieces. Each rank sends (N-1)/N of the
// payload per reduce-scatter or all-gather and 2(N-1)/N per all-reduce, the
// volume of a ring (docs/multi-rank.md). MPI's own reductions would send
// the same but sum in an order that depends on the algorithm MPI picks.
//
//===----------------------------------------------------------------------===//

#include "comm/communicator.h"

#include "status.h"

#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <climits>
#include <algorithm>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

using namespace mwrt;
using namespace mwrt::detail;

namespace {

using Clock = std::chrono::steady_clock;

std::string mpiError(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<size_t>(length));
}

/// One queued collective.
struct Job {
  const BoundKernel *kernel = nullptr;
  std::string reduction;
  int64_t axis = 0;
  bool done = false;
  mwrt_status status = MWRT_OK;
  std::string error;
};

class MpiCommunicator final : public Communicator {
public:
  explicit MpiCommunicator(double timeoutSeconds) : timeout(timeoutSeconds) {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm, &myRank);
    MPI_Comm_size(comm, &ranks);
    worker = std::thread([this] { serve(); });
  }

  ~MpiCommunicator() override {
    {
      std::lock_guard<std::mutex> lock(mu);
      stopping = true;
    }
    wake.notify_all();
    // A worker stuck in MPI (a rank died) cannot be joined; the process is
    // ending through abortProcessGroup then, so it is left behind.
    if (stuck)
      worker.detach();
    else
      worker.join();
    if (!stuck)
      MPI_Comm_free(&comm);
  }

  const char *name() const override { return "mpi"; }
  int rank() const override { return myRank; }
  int size() const override { return ranks; }

  mwrt_status run(const BoundKernel &kernel, Backend &, bool deferred) override {
    auto job = std::make_shared<Job>();
    job->kernel = &kernel;
    if (mwrt_status st =
            checkCollective(kernel, ranks, job->reduction, job->axis))
      return st;
    for (const TensorRef &t : kernel.ins)
      if (t.numElements() && !t.data)
        return setError(MWRT_INTERNAL, "a collective's operand has no memory");
    countPayload(kernel);
    if (kernel.kind == OpKind::MeshAllSlice) {
      // The rank's own piece: local, nothing to send, so not queued. Its
      // operand is complete: the executor runs kernels in order.
      copyHostTensor(kernel.outs[0],
                     pieceOf(kernel.ins[0], job->axis, myRank, ranks));
      return MWRT_OK;
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      queue.push_back(job);
    }
    wake.notify_all();
    if (!deferred)
      return waitFor(job);
    pending[kernel.outs[0].data] = job;
    return MWRT_OK;
  }

  mwrt_status wait(const BoundKernel &kernel, Backend &backend) override {
    if (!kernel.ins.empty()) {
      auto it = pending.find(kernel.ins[0].data);
      if (it != pending.end()) {
        std::shared_ptr<Job> job = it->second;
        pending.erase(it);
        if (mwrt_status st = waitFor(job))
          return st;
      }
    }
    return backend.run(kernel);
  }

  mwrt_status finish() override {
    while (!pending.empty()) {
      std::shared_ptr<Job> job = pending.begin()->second;
      pending.erase(pending.begin());
      if (mwrt_status st = waitFor(job))
        return st;
    }
    return MWRT_OK;
  }

private:
  mwrt_status waitFor(const std::shared_ptr<Job> &job) {
    auto start = Clock::now();
    std::unique_lock<std::mutex> lock(mu);
    bool ok = finished.wait_until(
        lock, start + std::chrono::duration<double>(timeout),
        [&] { return job->done; });
    counters.waitSeconds +=
        std::chrono::duration<double>(Clock::now() - start).count();
    if (!ok) {
      stuck = true;
      return setError(MWRT_UNAVAILABLE,
                      "the collective did not complete within " +
                          std::to_string(static_cast<int64_t>(timeout)) +
                          " s (--comm-timeout): another rank failed or "
                          "stopped");
    }
    if (job->status != MWRT_OK)
      return setError(job->status, job->error);
    return MWRT_OK;
  }

  void serve() {
    for (;;) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> lock(mu);
        wake.wait(lock, [&] { return stopping || !queue.empty(); });
        if (queue.empty())
          return;
        job = queue.front();
        queue.pop_front();
      }
      auto start = Clock::now();
      std::string error;
      mwrt_status status = execute(*job, error);
      double seconds =
          std::chrono::duration<double>(Clock::now() - start).count();
      {
        std::lock_guard<std::mutex> lock(mu);
        job->status = status;
        job->error = std::move(error);
        job->done = true;
        counters.commSeconds += seconds;
      }
      finished.notify_all();
    }
  }

  uint8_t *scratch(std::vector<uint8_t> &buffer, size_t bytes) {
    if (buffer.size() < bytes) {
      buffer.assign(bytes, 0);
      std::lock_guard<std::mutex> lock(mu);
      counters.scratchBytes =
          sendBuffer.size() + recvBuffer.size() + pieceBuffer.size();
    }
    return buffer.data();
  }

  /// Elements of `esz` bytes per rank and chunk: a reduction goes through
  /// the staging in chunks, so it holds 2 x N x chunk bytes, not a bucket.
  int64_t chunkElements(size_t esz) const {
    return std::max<int64_t>(
        1, static_cast<int64_t>(chunkBytes / (static_cast<size_t>(ranks) * esz)));
  }

  /// Reduces `piece` elements per rank: element i of rank r's share is at
  /// `share(r) + i * esz`; the sums go to `dst` (contiguous, `piece`
  /// elements). One MPI_Alltoall per chunk: each rank sends every other rank
  /// that rank's share and receives its own share from every rank.
  mwrt_status reducePieces(const Job &job, DType dtype, int64_t piece,
                           const std::function<const uint8_t *(int64_t)> &share,
                           uint8_t *dst, std::string &error) {
    const size_t esz = dtypeSize(dtype);
    const int64_t n = ranks, chunk = std::min(piece, chunkElements(esz));
    uint8_t *recv = scratch(recvBuffer, n * chunk * esz);
    // The shares are sent from where they are (MPI_Alltoallv with their
    // displacements from share(0)) when those fit MPI's int; else each
    // chunk's shares are packed first.
    const uint8_t *base = share(0);
    bool inPlace = true;
    std::vector<int> counts(n), sendDispls(n), recvDispls(n);
    for (int64_t r = 0; r < n; ++r) {
      auto offset = static_cast<int64_t>(share(r) - base) + piece * int64_t(esz);
      inPlace &= share(r) >= base && offset <= INT32_MAX;
    }
    uint8_t *send = inPlace ? nullptr : scratch(sendBuffer, n * chunk * esz);
    for (int64_t at = 0; at < piece; at += chunk) {
      const int64_t m = std::min(chunk, piece - at);
      const int bytes = static_cast<int>(m * esz);
      int c;
      if (inPlace) {
        for (int64_t r = 0; r < n; ++r) {
          counts[r] = bytes;
          sendDispls[r] = static_cast<int>(share(r) - base + at * esz);
          recvDispls[r] = static_cast<int>(r * m * esz);
        }
        c = MPI_Alltoallv(base, counts.data(), sendDispls.data(), MPI_BYTE,
                          recv, counts.data(), recvDispls.data(), MPI_BYTE,
                          comm);
      } else {
        for (int64_t r = 0; r < n; ++r)
          std::memcpy(send + r * m * esz, share(r) + at * esz, m * esz);
        c = MPI_Alltoall(send, bytes, MPI_BYTE, recv, bytes, MPI_BYTE, comm);
      }
      if (c) {
        error = "MPI_Alltoall failed: " + mpiError(c);
        return MWRT_UNAVAILABLE;
      }
      if (reduceBlocks(job.reduction, dtype, recv, n, m, dst + at * esz) !=
          MWRT_OK) {
        error = mwrt_last_error();
        return MWRT_INVALID_ARGUMENT;
      }
    }
    return MWRT_OK;
  }

  /// Gathers `piece` elements from every rank: rank r's go to `place(r)`.
  /// Straight into the result when the pieces are consecutive there and
  /// small enough for one call, else in chunks through the staging.
  mwrt_status gatherPieces(DType dtype, int64_t piece, const uint8_t *mine,
                           uint8_t *consecutive,
                           const std::function<uint8_t *(int64_t)> &place,
                           std::string &error) {
    const size_t esz = dtypeSize(dtype);
    const int64_t n = ranks;
    if (consecutive && piece * esz <= static_cast<size_t>(INT32_MAX)) {
      const int bytes = static_cast<int>(piece * esz);
      // In place when this rank's piece is already where it belongs.
      const void *send = mine == consecutive + myRank * piece * esz
                             ? MPI_IN_PLACE
                             : static_cast<const void *>(mine);
      if (int c = MPI_Allgather(send, bytes, MPI_BYTE, consecutive, bytes,
                                MPI_BYTE, comm)) {
        error = "MPI_Allgather failed: " + mpiError(c);
        return MWRT_UNAVAILABLE;
      }
      return MWRT_OK;
    }
    const int64_t chunk = std::min(piece, chunkElements(esz));
    uint8_t *recv = scratch(recvBuffer, n * chunk * esz);
    for (int64_t at = 0; at < piece; at += chunk) {
      const int64_t m = std::min(chunk, piece - at);
      const int bytes = static_cast<int>(m * esz);
      if (int c = MPI_Allgather(mine + at * esz, bytes, MPI_BYTE, recv, bytes,
                                MPI_BYTE, comm)) {
        error = "MPI_Allgather failed: " + mpiError(c);
        return MWRT_UNAVAILABLE;
      }
      for (int64_t r = 0; r < n; ++r)
        if (place(r) + at * esz != mine + at * esz)
          std::memcpy(place(r) + at * esz, recv + r * m * esz, m * esz);
    }
    return MWRT_OK;
  }

  /// `t` as contiguous bytes: its own memory when it is contiguous, else a
  /// packed copy in `buffer`.
  const uint8_t *contiguous(const TensorRef &t, std::vector<uint8_t> &buffer) {
    if (t.isContiguous())
      return static_cast<const uint8_t *>(t.data);
    uint8_t *p =
        scratch(buffer, static_cast<size_t>(t.numElements()) * dtypeSize(t.dtype));
    copyHostTensor(TensorRef(t.dtype, t.shape, p), t);
    return p;
  }

  /// Runs one collective on the worker thread. Only MPI and host memory.
  /// Operands that are not contiguous (never the case in a ZeRO step, whose
  /// buckets are 1-D) are packed into the staging first.
  mwrt_status execute(const Job &job, std::string &error) {
    const BoundKernel &k = *job.kernel;
    const TensorRef &in = k.ins[0], &out = k.outs[0];
    const size_t esz = dtypeSize(in.dtype);
    const int64_t n = ranks;

    if (k.kind == OpKind::MeshAllGather) {
      const int64_t piece = in.numElements();
      const uint8_t *mine = contiguous(in, pieceBuffer);
      bool direct = piecesAreConsecutive(out, job.axis);
      std::vector<uint8_t> unpacked;
      uint8_t *whole = direct ? static_cast<uint8_t *>(out.data) : nullptr;
      if (!direct) {
        unpacked.resize(static_cast<size_t>(n * piece) * esz);
        whole = unpacked.data();
      }
      if (mwrt_status st = gatherPieces(
              in.dtype, piece, mine, whole,
              [&](int64_t r) { return whole + r * piece * esz; }, error))
        return st;
      if (!direct)
        for (int64_t r = 0; r < n; ++r)
          copyHostTensor(pieceOf(out, job.axis, r, n),
                         TensorRef(in.dtype, in.shape, whole + r * piece * esz));
      return MWRT_OK;
    }

    if (k.kind == OpKind::MeshReduceScatter) {
      const int64_t piece = in.numElements() / n;
      // The shares of every rank's piece: consecutive pieces of the operand,
      // or each piece packed (a scatter axis after non-unit dimensions).
      std::vector<uint8_t> packed;
      const uint8_t *base = static_cast<const uint8_t *>(in.data);
      if (!piecesAreConsecutive(in, job.axis)) {
        packed.resize(static_cast<size_t>(n * piece) * esz);
        for (int64_t r = 0; r < n; ++r)
          copyHostTensor(
              TensorRef(out.dtype, out.shape, packed.data() + r * piece * esz),
              pieceOf(in, job.axis, r, n));
        base = packed.data();
      }
      std::vector<uint8_t> result;
      uint8_t *dst = static_cast<uint8_t *>(out.data);
      if (!out.isContiguous()) {
        result.resize(static_cast<size_t>(piece) * esz);
        dst = result.data();
      }
      if (mwrt_status st = reducePieces(
              job, in.dtype, piece,
              [&](int64_t r) { return base + r * piece * esz; }, dst, error))
        return st;
      if (!out.isContiguous())
        copyHostTensor(out, TensorRef(out.dtype, out.shape, dst));
      return MWRT_OK;
    }

    // all_reduce of C elements: a reduce-scatter of N pieces of ceil(C/N)
    // (the last ones short or empty: zero padding, never sent as data but
    // as zeros), then an all-gather of the reduced pieces.
    const int64_t total = in.numElements();
    const int64_t piece = (total + n - 1) / n;
    std::vector<uint8_t> padded;
    const uint8_t *base = contiguous(in, pieceBuffer);
    if (piece * n != total) {
      padded.assign(static_cast<size_t>(n * piece) * esz, 0);
      std::memcpy(padded.data(), base, static_cast<size_t>(total) * esz);
      base = padded.data();
    }
    // The rank's reduced piece goes straight to its place in the result,
    // which the all-gather then fills in around it.
    bool direct = out.isContiguous() && piece * n == total;
    std::vector<uint8_t> gathered;
    uint8_t *whole = static_cast<uint8_t *>(out.data);
    if (!direct) {
      gathered.resize(static_cast<size_t>(n * piece) * esz);
      whole = gathered.data();
    }
    uint8_t *mine = whole + myRank * piece * esz;
    if (mwrt_status st = reducePieces(
            job, in.dtype, piece,
            [&](int64_t r) { return base + r * piece * esz; }, mine, error))
      return st;
    if (mwrt_status st = gatherPieces(
            in.dtype, piece, mine, whole,
            [&](int64_t r) { return whole + r * piece * esz; }, error))
      return st;
    if (!direct)
      copyHostTensor(out, TensorRef(out.dtype, out.shape, whole));
    return MWRT_OK;
  }

  /// The staging per reduction chunk (send and receive each): small against
  /// a bucket (DeepSpeed's default reduce bucket is 5e8 elements), large
  /// enough that a chunk's MPI call costs far more than its latency.
  /// MWRT_MPI_CHUNK_BYTES overrides it (the tests make chunks tiny, so that
  /// every bucket takes many).
  size_t chunkBytes = [] {
    size_t bytes = size_t(4) << 20;
    if (const char *v = std::getenv("MWRT_MPI_CHUNK_BYTES")) {
      char *end = nullptr;
      unsigned long long parsed = std::strtoull(v, &end, 10);
      if (end && *end == 0 && parsed >= 1 && parsed <= (1ull << 30))
        bytes = static_cast<size_t>(parsed);
    }
    return bytes;
  }();

  MPI_Comm comm = MPI_COMM_NULL;
  int myRank = 0, ranks = 1;
  double timeout;
  std::thread worker;
  std::mutex mu;
  std::condition_variable wake, finished;
  std::deque<std::shared_ptr<Job>> queue;
  bool stopping = false;
  bool stuck = false;
  /// Deferred collectives by the address of their result.
  std::map<void *, std::shared_ptr<Job>> pending;
  std::vector<uint8_t> sendBuffer, recvBuffer, pieceBuffer;
};

} // namespace

namespace mwrt::detail {
std::unique_ptr<Communicator> createMpiCommunicator(double timeoutSeconds) {
  return std::make_unique<MpiCommunicator>(timeoutSeconds);
}
} // namespace mwrt::detail
