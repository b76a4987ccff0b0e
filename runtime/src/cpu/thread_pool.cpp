//===- thread_pool.cpp - The CPU kernels' fixed worker pool ---------------===//
//
// Workers sleep on a condition variable between jobs; a job is a function
// pointer, its context and a range that the workers (and the caller) take
// chunks of through one atomic counter, so a worker the machine delays
// takes fewer chunks rather than holding the others up.
//
//===----------------------------------------------------------------------===//

#include "thread_pool.h"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace mwrt::cpu {

thread_local bool ThreadPool::inWorker = false;

ThreadPool::ThreadPool(int threads) : threads(std::max(threads, 1)) {
  workers.reserve(static_cast<size_t>(this->threads - 1));
  for (int w = 1; w < this->threads; ++w)
    workers.emplace_back([this, w] { workerLoop(w); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  start.notify_all();
  for (std::thread &t : workers)
    t.join();
}

int ThreadPool::defaultThreads() {
  if (const char *env = std::getenv("MW_NUM_THREADS")) {
    char *end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v > 0 && v <= 1024)
      return static_cast<int>(v);
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw ? static_cast<int>(std::min(hw, 1024u)) : 1;
}

void ThreadPool::work(int worker) {
  for (;;) {
    int64_t b = next.fetch_add(chunk, std::memory_order_relaxed);
    if (b >= total)
      return;
    fn(ctx, worker, b, std::min(total, b + chunk));
  }
}

void ThreadPool::run(int64_t n, int64_t grain, Fn f, void *c) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    fn = f;
    ctx = c;
    total = n;
    // About four chunks a thread: small enough to even out a busy core,
    // large enough that the counter is not contended.
    int64_t parts = static_cast<int64_t>(threads) * 4;
    chunk = std::max(grain, (n + parts - 1) / parts);
    next.store(0, std::memory_order_relaxed);
    open = true;
    ++generation;
  }
  start.notify_all();
  inWorker = true;
  work(0);
  inWorker = false;
  // Every chunk is taken; wait for the workers still computing one. A
  // worker that wakes only now (the machine was busy) finds the job closed
  // and does not join it.
  std::unique_lock<std::mutex> lock(mutex);
  open = false;
  finished.wait(lock, [&] { return joined == 0; });
}

void ThreadPool::workerLoop(int worker) {
  inWorker = true;
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mutex);
  for (;;) {
    start.wait(lock, [&] { return stopping || generation != seen; });
    if (stopping)
      return;
    seen = generation;
    if (!open)
      continue;
    ++joined;
    lock.unlock();
    work(worker);
    lock.lock();
    if (--joined == 0)
      finished.notify_one();
  }
}

} // namespace mwrt::cpu
