//===- offload.h - Streaming offloaded weights into the arena ---*- C++ -*-===//
//
// Private to the runtime. A plan that --mw-offload compiled keeps some
// parameters off the device (docs/offload.md): Host persistents in the host
// store, File persistents in a safetensors file. An mw.fetch kernel copies
// one of them into its arena slot and the mw.wait that a later kernel
// reaches completes it. The OffloadEngine runs those copies:
//   - a fetch of a Host persistent is a copy on the backend's copy engine
//     (CPU: the copy thread; CUDA: the copy stream), issued where the fetch
//     stands, and its wait makes the kernels after it wait for the copy;
//   - a fetch of a File persistent goes through the reader thread, which
//     reads the tensors of the step's file fetches in kernel order, each
//     into one of two host staging buffers, as soon as one is free, and the
//     feeder thread, which hands each read tensor, once its fetch is issued,
//     to the copy engine and frees the buffer when the copy is complete: the
//     read of the next fetch overlaps the copy of this one, and both overlap
//     the kernels.
// A fetch that no later mw.wait completes copies where it stands. Nothing
// is allocated during a step (the staging buffers, the handles and every
// per-fetch slot are made once).
//
//===----------------------------------------------------------------------===//

#ifndef MWRT_SRC_OFFLOAD_H
#define MWRT_SRC_OFFLOAD_H

#include "executor.h"
#include "offload_reader.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace mwrt::detail {

/// One mw.fetch kernel of the plan.
struct FetchDesc {
  size_t kernel = 0;    ///< its index in the plan
  int persistent = -1;  ///< the Host or File persistent it reads
  std::string tensor;   ///< that persistent's name
  bool fromFile = false;
  bool deferred = false; ///< a later mw.wait completes it
  void *dst = nullptr;   ///< the arena slot
  const void *src = nullptr; ///< the host store (Host)
  uint64_t bytes = 0;
};

/// Cumulative counters of the offloaded weights' traffic.
struct OffloadCounters {
  uint64_t steps = 0;
  uint64_t fetches = 0;       ///< fetches run
  uint64_t bytesStreamed = 0; ///< bytes the fetches copied into the arena
  uint64_t bytesRead = 0;     ///< bytes read from weights files
  double stepSeconds = 0;     ///< the steps' wall time
  double waitSeconds = 0;     ///< time the kernels' thread waited for fetches
  double readSeconds = 0;     ///< time the reader spent in pread
};

class OffloadEngine {
public:
  explicit OffloadEngine(Backend &backend);
  ~OffloadEngine();

  /// Takes the plan's fetches (kernel order), makes the copy handles and,
  /// when any reads a file, the staging buffers and the threads.
  mwrt_status prepare(std::vector<FetchDesc> fetches);
  /// The host bytes of the staging buffers.
  uint64_t stagingBytes() const { return stagingTotal; }

  /// Where File persistent `persistent`'s bytes are: `offset` in `file`.
  void setSource(int persistent, std::shared_ptr<OffloadFile> file,
                 uint64_t offset);
  /// The persistents that File fetches read but that have no source yet.
  std::vector<int> missingSources() const;
  /// Whether every File fetch's source is known.
  bool ready() const;

  /// Index of the fetch that kernel `kernel` is, or -1.
  int fetchOfKernel(size_t kernel) const;

  /// A step: beginStep, then issue and wait for each fetch in kernel order,
  /// then endStep (with `failed` when the step stops early, which cancels
  /// what is still running).
  mwrt_status beginStep();
  mwrt_status issue(size_t fetch);
  mwrt_status wait(size_t fetch);
  mwrt_status endStep(bool failed);

  OffloadCounters counters() const;
  /// Whether every file read so far went through O_DIRECT (true when there
  /// is none).
  bool allDirect() const;

private:
  void readLoop();
  void feedLoop();
  /// The shared state's reset between steps (under the lock).
  void resetStep();

  Backend &backend;
  std::vector<FetchDesc> fetches;
  std::vector<int> filePos; ///< per fetch: its position among file fetches
  std::vector<size_t> fileFetches; ///< the file fetches, in kernel order
  struct Source {
    std::shared_ptr<OffloadFile> file;
    uint64_t offset = 0;
  };
  std::vector<Source> sources; ///< per file fetch

  // Staging: two buffers, each for the largest file fetch.
  static constexpr int kStaging = 2;
  void *staging[kStaging] = {nullptr, nullptr};
  uint64_t stagingEach = 0, stagingTotal = 0;

  mutable std::mutex mutex;
  std::condition_variable changed;
  std::thread reader, feeder;
  bool stopping = false, active = false, cancelled = false;
  bool readerBusy = false, feederBusy = false;
  /// Per file fetch of this step: the staging buffer holding it (-1: not
  /// yet read), where its bytes start there, and whether the copy engine
  /// has it.
  std::vector<int> stagedIn;
  std::vector<uint64_t> stagedDelta;
  std::vector<char> posted;
  std::vector<char> issuedNow; ///< per fetch: issued this step
  int bufferFree[kStaging] = {1, 1};
  size_t nextRead = 0, nextFeed = 0, issuedFiles = 0;
  /// The first failure of the reader or feeder this step (the file fetch it
  /// stopped at, and why); failedAt == size when none.
  size_t failedAt = 0;
  mwrt_status failedStatus = MWRT_OK;
  std::string failedMessage;

  OffloadCounters totals;
  std::chrono::steady_clock::time_point stepStart;
};

} // namespace mwrt::detail

#endif // MWRT_SRC_OFFLOAD_H
