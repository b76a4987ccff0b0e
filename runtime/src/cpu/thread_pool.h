//===- thread_pool.h - The CPU kernels' fixed worker pool ------*- C++ -*-===//
//
// Private to the runtime. A fixed set of worker threads, started once with
// the CPU backend, that a kernel hands the independent pieces of its work
// to (rows of a row op, chunks of elements, tiles of a fused kernel, column
// blocks of a matmul): parallelFor(n, grain, fn) runs fn(worker, begin, end)
// over [0, n) in chunks of at least `grain`, the calling thread taking part
// as worker 0, and returns when every chunk is done. Which worker computes
// a chunk varies from run to run, so a kernel must make every element's
// arithmetic independent of the chunking (each element computed by the same
// per-element formula, each row or column reduced in the same order, scratch
// indexed by `worker`): then results are bit-identical for any thread count.
// Nothing is allocated per call. A parallelFor from inside a chunk (a kernel
// a fused kernel runs) runs serially on the calling worker.
//
//===----------------------------------------------------------------------===//

#ifndef MWRT_SRC_CPU_THREAD_POOL_H
#define MWRT_SRC_CPU_THREAD_POOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace mwrt::cpu {

class ThreadPool {
public:
  /// `threads` in all, the caller of parallelFor included (at least 1).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int size() const { return threads; }

  /// fn(int worker, int64_t begin, int64_t end) over [0, n), worker in
  /// [0, size()); chunks of at least `grain` (1 when smaller).
  template <typename F> void parallelFor(int64_t n, int64_t grain, F &&fn) {
    if (n <= 0)
      return;
    grain = grain < 1 ? 1 : grain;
    if (threads == 1 || n <= grain || inWorker) {
      fn(0, int64_t{0}, n);
      return;
    }
    using Body = std::remove_reference_t<F>;
    run(
        n, grain,
        [](void *ctx, int worker, int64_t b, int64_t e) {
          (*static_cast<Body *>(ctx))(worker, b, e);
        },
        const_cast<void *>(static_cast<const void *>(&fn)));
  }

  /// The thread count to use when none is given: MW_NUM_THREADS when it is
  /// a positive integer, else the hardware's concurrency (at least 1).
  static int defaultThreads();

private:
  using Fn = void (*)(void *, int, int64_t, int64_t);
  void run(int64_t n, int64_t grain, Fn fn, void *ctx);
  void work(int worker);
  void workerLoop(int worker);

  int threads;
  std::vector<std::thread> workers;
  std::mutex mutex;
  std::condition_variable start, finished;
  uint64_t generation = 0;
  int joined = 0;    ///< workers inside the current job
  bool open = false; ///< whether a worker may still join the current job
  bool stopping = false;
  // The current job.
  Fn fn = nullptr;
  void *ctx = nullptr;
  int64_t total = 0, chunk = 1;
  std::atomic<int64_t> next{0};
  static thread_local bool inWorker;
};

} // namespace mwrt::cpu

#endif // MWRT_SRC_CPU_THREAD_POOL_H
