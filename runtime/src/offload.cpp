//===- offload.cpp - Streaming offloaded weights into the arena -----------===//
//
// See offload.h. One mutex guards the step's shared state; the kernels'
// thread (issue, wait), the reader and the feeder each wait on one condition
// variable for the state they need. A fetch's copy handle is its index
// among the plan's fetches.
//
//===----------------------------------------------------------------------===//

#include "offload.h"
#include "status.h"

#include <algorithm>

using namespace mwrt;
using namespace mwrt::detail;

namespace {
double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start)
      .count();
}
} // namespace

OffloadEngine::OffloadEngine(Backend &backend) : backend(backend) {}

OffloadEngine::~OffloadEngine() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  changed.notify_all();
  if (reader.joinable())
    reader.join();
  if (feeder.joinable())
    feeder.join();
  for (void *&s : staging)
    if (s)
      backend.releaseHost(s);
}

mwrt_status OffloadEngine::prepare(std::vector<FetchDesc> list) {
  fetches = std::move(list);
  filePos.assign(fetches.size(), -1);
  for (size_t f = 0; f < fetches.size(); ++f)
    if (fetches[f].fromFile) {
      filePos[f] = static_cast<int>(fileFetches.size());
      fileFetches.push_back(f);
      stagingEach = std::max(stagingEach, stagingBytesFor(fetches[f].bytes));
    }
  sources.assign(fileFetches.size(), Source());
  stagedIn.assign(fileFetches.size(), -1);
  stagedDelta.assign(fileFetches.size(), 0);
  posted.assign(fileFetches.size(), 0);
  issuedNow.assign(fetches.size(), 0);
  failedAt = fileFetches.size();
  if (mwrt_status st = backend.prepareCopies(fetches.size()))
    return st;
  if (fileFetches.empty())
    return MWRT_OK;
  for (void *&s : staging) {
    if (mwrt_status st =
            backend.allocateHost(stagingEach, kDirectAlignment, s))
      return setError(st, std::string("cannot allocate the offload staging "
                                      "buffers: ") +
                              mwrt_last_error());
    stagingTotal += stagingEach;
  }
  reader = std::thread([this] { readLoop(); });
  feeder = std::thread([this] { feedLoop(); });
  return MWRT_OK;
}

void OffloadEngine::setSource(int persistent, std::shared_ptr<OffloadFile> file,
                              uint64_t offset) {
  for (size_t k = 0; k < fileFetches.size(); ++k)
    if (fetches[fileFetches[k]].persistent == persistent)
      sources[k] = Source{file, offset};
}

std::vector<int> OffloadEngine::missingSources() const {
  std::vector<int> missing;
  for (size_t k = 0; k < fileFetches.size(); ++k) {
    int p = fetches[fileFetches[k]].persistent;
    if (!sources[k].file &&
        std::find(missing.begin(), missing.end(), p) == missing.end())
      missing.push_back(p);
  }
  return missing;
}

bool OffloadEngine::ready() const {
  for (const Source &s : sources)
    if (!s.file)
      return false;
  return true;
}

int OffloadEngine::fetchOfKernel(size_t kernel) const {
  for (size_t f = 0; f < fetches.size(); ++f)
    if (fetches[f].kernel == kernel)
      return static_cast<int>(f);
  return -1;
}

bool OffloadEngine::allDirect() const {
  for (const Source &s : sources)
    if (s.file && !s.file->direct())
      return false;
  return true;
}

void OffloadEngine::resetStep() {
  std::fill(stagedIn.begin(), stagedIn.end(), -1);
  std::fill(stagedDelta.begin(), stagedDelta.end(), 0);
  std::fill(posted.begin(), posted.end(), 0);
  std::fill(issuedNow.begin(), issuedNow.end(), 0);
  std::fill(std::begin(bufferFree), std::end(bufferFree), 1);
  nextRead = nextFeed = issuedFiles = 0;
  failedAt = fileFetches.size();
  failedStatus = MWRT_OK;
  failedMessage.clear();
  cancelled = false;
}

mwrt_status OffloadEngine::beginStep() {
  for (size_t k = 0; k < fileFetches.size(); ++k)
    if (!sources[k].file)
      return setError(MWRT_INTERNAL,
                      "offloaded tensor '" + fetches[fileFetches[k]].tensor +
                          "' has no weights file");
  {
    std::lock_guard<std::mutex> lock(mutex);
    resetStep();
    active = true;
  }
  changed.notify_all();
  stepStart = std::chrono::steady_clock::now();
  return MWRT_OK;
}

mwrt_status OffloadEngine::issue(size_t f) {
  const FetchDesc &d = fetches[f];
  if (mwrt_status st = backend.markCopyIssue(f))
    return st;
  issuedNow[f] = 1;
  totals.fetches += 1;
  totals.bytesStreamed += d.bytes;
  if (!d.fromFile)
    return backend.copyToDevice(f, d.dst, d.src, d.bytes);
  {
    std::lock_guard<std::mutex> lock(mutex);
    ++issuedFiles;
  }
  changed.notify_all();
  return MWRT_OK;
}

mwrt_status OffloadEngine::wait(size_t f) {
  auto start = std::chrono::steady_clock::now();
  if (fetches[f].fromFile) {
    auto k = static_cast<size_t>(filePos[f]);
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return posted[k] || failedAt <= k; });
    if (!posted[k]) {
      totals.waitSeconds += secondsSince(start);
      return setError(failedStatus, failedMessage);
    }
  }
  mwrt_status st = backend.waitCopy(f);
  totals.waitSeconds += secondsSince(start);
  return st;
}

mwrt_status OffloadEngine::endStep(bool failed) {
  mwrt_status status = MWRT_OK;
  {
    std::unique_lock<std::mutex> lock(mutex);
    if (failed)
      cancelled = true;
    changed.notify_all();
    // The feeder finishes what it was handed; a cancelled step stops it and
    // the reader where they stand.
    changed.wait(lock, [&] {
      return !readerBusy && !feederBusy &&
             (cancelled || failedAt < fileFetches.size() ||
              nextFeed == issuedFiles);
    });
    if (!failed && failedAt < fileFetches.size()) {
      status = failedStatus;
      setError(failedStatus, failedMessage);
    }
    active = false;
  }
  // Copies still running into the arena (a step that stopped before their
  // waits) complete before anything else touches it.
  for (size_t f = 0; f < fetches.size(); ++f)
    if (issuedNow[f])
      if (mwrt_status st = backend.finishCopy(f); st && !status && !failed)
        status = st;
  totals.stepSeconds += secondsSince(stepStart);
  if (!failed && !status)
    totals.steps += 1;
  return status;
}

OffloadCounters OffloadEngine::counters() const {
  std::lock_guard<std::mutex> lock(mutex);
  return totals;
}

void OffloadEngine::readLoop() {
  std::unique_lock<std::mutex> lock(mutex);
  auto freeBuffer = [&] {
    for (int b = 0; b < kStaging; ++b)
      if (bufferFree[b])
        return b;
    return -1;
  };
  for (;;) {
    changed.wait(lock, [&] {
      return stopping ||
             (active && !cancelled && failedAt == fileFetches.size() &&
              nextRead < fileFetches.size() && freeBuffer() >= 0);
    });
    if (stopping)
      return;
    size_t k = nextRead;
    int b = freeBuffer();
    bufferFree[b] = 0;
    readerBusy = true;
    const FetchDesc &d = fetches[fileFetches[k]];
    Source source = sources[k];
    lock.unlock();
    auto start = std::chrono::steady_clock::now();
    uint64_t delta = 0;
    mwrt_status st =
        source.file->read(d.tensor, source.offset, d.bytes,
                          static_cast<uint8_t *>(staging[b]), delta);
    std::string message = st ? mwrt_last_error() : std::string();
    double seconds = secondsSince(start);
    lock.lock();
    readerBusy = false;
    totals.readSeconds += seconds;
    if (st) {
      bufferFree[b] = 1;
      if (k < failedAt) {
        failedAt = k;
        failedStatus = st;
        failedMessage = std::move(message);
      }
    } else {
      totals.bytesRead += d.bytes;
      stagedIn[k] = b;
      stagedDelta[k] = delta;
      ++nextRead;
    }
    changed.notify_all();
  }
}

void OffloadEngine::feedLoop() {
  std::unique_lock<std::mutex> lock(mutex);
  for (;;) {
    changed.wait(lock, [&] {
      return stopping || (active && !cancelled && nextFeed < issuedFiles &&
                          nextFeed < failedAt && stagedIn[nextFeed] >= 0);
    });
    if (stopping)
      return;
    size_t k = nextFeed, f = fileFetches[k];
    int b = stagedIn[k];
    const FetchDesc &d = fetches[f];
    const uint8_t *src = static_cast<uint8_t *>(staging[b]) + stagedDelta[k];
    feederBusy = true;
    lock.unlock();
    mwrt_status st = backend.copyToDevice(f, d.dst, src, d.bytes);
    if (st == MWRT_OK) {
      {
        std::lock_guard<std::mutex> posting(mutex);
        posted[k] = 1;
      }
      changed.notify_all();
      st = backend.finishCopy(f);
    }
    std::string message = st ? mwrt_last_error() : std::string();
    lock.lock();
    feederBusy = false;
    bufferFree[b] = 1;
    ++nextFeed;
    if (st && k < failedAt) {
      failedAt = k;
      failedStatus = st;
      failedMessage = std::move(message);
    }
    changed.notify_all();
  }
}
