//===- OffloadModel.cpp - Predicted throughput of weight offload ----------===//
//
// The schedule simulation and the candidate search of OffloadModel.h. No
// MLIR: only the C++ library and LLVM's formatting.
//
//===----------------------------------------------------------------------===//

#include "memwall/Analysis/OffloadModel.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

using namespace mlir::mw;

namespace {

/// The step's tokens over the reference step's (one token per sequence).
double tokenScale(const OffloadModelInputs &in, int64_t batch,
                  int64_t tokensPerSequence) {
  return static_cast<double>(batch) * static_cast<double>(tokensPerSequence) /
         static_cast<double>(std::max<int64_t>(in.referenceTokens, 1));
}

/// The roofline time of one op at token scale `s` and context scale `c`.
double opSeconds(const OffloadModelInputs &in, const OffloadOpCost &op,
                 double s, double c) {
  double compute = in.peakFlopsPerSecond > 0
                       ? (op.flops + op.contextFlops * c) * s /
                             in.peakFlopsPerSecond
                       : 0.0;
  double memory =
      in.deviceBytesPerSecond > 0
          ? (op.weightBytes + (op.otherBytes + op.contextBytes * c) * s) /
                in.deviceBytesPerSecond
          : 0.0;
  return std::max(compute, memory);
}

double opsSeconds(const OffloadModelInputs &in,
                  const std::vector<OffloadOpCost> &ops, double s, double c) {
  double total = 0;
  for (const OffloadOpCost &op : ops)
    total += opSeconds(in, op, s, c);
  return total;
}

int64_t clampPinned(const OffloadModelInputs &in, int64_t pinned) {
  return std::clamp<int64_t>(pinned, 0,
                             static_cast<int64_t>(in.layers.size()));
}

/// The arena's weight slots: the most bytes of min(K + 1, streamed)
/// consecutive streamed layers, which the K + 1 fetches in flight hold.
int64_t slotBytes(const OffloadModelInputs &in, int64_t pinned,
                  int64_t prefetch) {
  int64_t n = static_cast<int64_t>(in.layers.size());
  int64_t streamed = n - pinned;
  if (streamed <= 0)
    return 0;
  int64_t window = std::min<int64_t>(std::max<int64_t>(prefetch, 0) + 1,
                                     streamed);
  int64_t best = 0, sum = 0;
  for (int64_t j = pinned; j < n; ++j) {
    sum += in.layers[j].weightBytes;
    if (j - pinned >= window)
      sum -= in.layers[j - window].weightBytes;
    best = std::max(best, sum);
  }
  return best;
}

} // namespace

int64_t mlir::mw::offloadDeviceBytes(const OffloadModelInputs &in,
                                     int64_t pinned, int64_t prefetch,
                                     int64_t batch) {
  pinned = clampPinned(in, pinned);
  int64_t bytes = in.residentBytes + slotBytes(in, pinned, prefetch);
  for (int64_t j = 0; j < pinned; ++j)
    bytes += in.layers[j].weightBytes;
  const OffloadWorkload &w = in.workload;
  int64_t block = std::max<int64_t>(w.blockTokens, 1);
  int64_t seqTokens =
      (w.promptTokens + w.generateTokens + block - 1) / block * block;
  bytes += batch * seqTokens * in.kvBytesPerToken;
  // The prefill's arena, the larger step's (P >= 1 tokens per sequence).
  double transient = static_cast<double>(in.referenceTransientBytes) *
                     tokenScale(in, batch, std::max<int64_t>(w.promptTokens, 1));
  bytes += static_cast<int64_t>(std::ceil(transient));
  return bytes;
}

double mlir::mw::offloadStepSeconds(const OffloadModelInputs &in,
                                    int64_t pinned, int64_t prefetch,
                                    int64_t batch, int64_t tokensPerSequence,
                                    double contextTokens) {
  pinned = clampPinned(in, pinned);
  prefetch = std::max<int64_t>(prefetch, 0);
  double s = tokenScale(in, batch, tokensPerSequence);
  double c = in.referenceContextTokens > 0
                 ? contextTokens /
                       static_cast<double>(in.referenceContextTokens)
                 : 1.0;
  int64_t n = static_cast<int64_t>(in.layers.size());
  double headEnd = opsSeconds(in, in.headOps, s, c);
  // computeEnd[j]: when layer j finished computing.
  std::vector<double> computeEnd(n, 0.0);
  // The compute stream's time at the program point before layer i: the
  // function's start for i < 0, after the head ops for i = 0.
  auto before = [&](int64_t i) {
    if (i < 0)
      return 0.0;
    return i == 0 ? headEnd : computeEnd[i - 1];
  };
  double copyFree = 0.0;
  for (int64_t j = 0; j < n; ++j) {
    double ready = 0.0;
    if (j >= pinned) {
      // Issued before layer j - K computes (its slot is free then: layer
      // j - K - 1 is done); the one copy engine takes fetches in order.
      double start = std::max(copyFree, before(j - prefetch));
      double copy = in.hostLinkBytesPerSecond > 0
                        ? static_cast<double>(in.layers[j].weightBytes) /
                              in.hostLinkBytesPerSecond
                        : 0.0;
      copyFree = start + copy;
      ready = copyFree;
    }
    double start = std::max(before(j), ready);
    computeEnd[j] = start + opsSeconds(in, in.layers[j].ops, s, c);
  }
  return (n ? computeEnd[n - 1] : headEnd) + opsSeconds(in, in.tailOps, s, c);
}

OffloadCandidate mlir::mw::evaluateOffload(const OffloadModelInputs &in,
                                           int64_t pinned, int64_t prefetch,
                                           int64_t batch) {
  OffloadCandidate c;
  c.pinnedLayers = clampPinned(in, pinned);
  c.prefetch = prefetch;
  c.batch = batch;
  c.deviceBytes = offloadDeviceBytes(in, c.pinnedLayers, prefetch, batch);
  c.fits = batch >= 1 && c.deviceBytes <= in.deviceBytes;
  const OffloadWorkload &w = in.workload;
  int64_t prompt = std::max<int64_t>(w.promptTokens, 1);
  int64_t generate = std::max<int64_t>(w.generateTokens, 1);
  c.prefillSeconds = offloadStepSeconds(in, c.pinnedLayers, prefetch, batch,
                                        prompt, static_cast<double>(prompt));
  c.decodeSeconds = offloadStepSeconds(
      in, c.pinnedLayers, prefetch, batch, 1,
      static_cast<double>(prompt) + static_cast<double>(generate) / 2.0);
  if (w.singleStep) {
    c.decodeSeconds = 0;
    c.tokensPerSecond = c.prefillSeconds > 0
                            ? static_cast<double>(batch * prompt) /
                                  c.prefillSeconds
                            : 0.0;
    return c;
  }
  double total = c.prefillSeconds +
                 static_cast<double>(generate - 1) * c.decodeSeconds;
  c.tokensPerSecond =
      total > 0 ? static_cast<double>(batch * generate) / total : 0.0;
  return c;
}

int64_t mlir::mw::largestFittingBatch(const OffloadModelInputs &in,
                                      int64_t pinned, int64_t prefetch,
                                      int64_t maxBatch) {
  auto fits = [&](int64_t b) {
    return offloadDeviceBytes(in, pinned, prefetch, b) <= in.deviceBytes;
  };
  if (!fits(1))
    return 0;
  // The bytes grow linearly in the batch: the bound from the first
  // sequence's bytes, then a search for the rounding of the arena's share.
  int64_t fixed = offloadDeviceBytes(in, pinned, prefetch, 0);
  int64_t perSequence = offloadDeviceBytes(in, pinned, prefetch, 1) - fixed;
  int64_t hi = perSequence > 0 ? (in.deviceBytes - fixed) / perSequence + 1
                               : int64_t(1) << 20;
  if (maxBatch > 0)
    hi = std::min(hi, maxBatch);
  int64_t lo = 1;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid))
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

OffloadSearchResult mlir::mw::searchOffload(const OffloadModelInputs &in,
                                            const OffloadSearchOptions &o) {
  OffloadSearchResult r;
  int64_t n = static_cast<int64_t>(in.layers.size());
  for (int64_t pinned = 0; pinned <= n; ++pinned) {
    // With every layer pinned nothing streams: one candidate.
    int64_t maxK = pinned == n ? 0 : std::max<int64_t>(o.maxPrefetch, 0);
    for (int64_t k = 0; k <= maxK; ++k) {
      int64_t batch = largestFittingBatch(in, pinned, k, o.maxBatch);
      r.candidates.push_back(
          evaluateOffload(in, pinned, k, std::max<int64_t>(batch, 1)));
    }
  }
  // In the candidates' order (pinned, then prefetch ascending), a later one
  // wins only when clearly faster, so ties go to fewer pinned layers and
  // the smaller prefetch; each candidate is at its largest batch, and a
  // smaller batch is never faster.
  for (auto [i, c] : llvm::enumerate(r.candidates)) {
    if (!c.fits)
      continue;
    if (r.choice < 0) {
      r.choice = static_cast<int64_t>(i);
      continue;
    }
    double best = r.candidates[r.choice].tokensPerSecond;
    if (c.tokensPerSecond > best * (1 + 1e-9))
      r.choice = static_cast<int64_t>(i);
  }
  return r;
}

std::string mlir::mw::formatOffloadTable(const OffloadSearchResult &r) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::formatv("{0,7} {1,8} {2,6} {3,5} {4,12} {5,10} {6,10} {7,10}\n",
                      "pinned", "prefetch", "batch", "fits", "device GB",
                      "prefill s", "decode s", "tokens/s");
  for (auto [i, c] : llvm::enumerate(r.candidates)) {
    os << llvm::formatv("{0,7} {1,8} {2,6} {3,5} {4,12:f3} {5,10:f3} "
                        "{6,10:f4} {7,10:f2}",
                        c.pinnedLayers, c.prefetch, c.batch,
                        c.fits ? "yes" : "no", c.deviceBytes / 1e9,
                        c.prefillSeconds, c.decodeSeconds, c.tokensPerSecond);
    if (static_cast<int64_t>(i) == r.choice)
      os << "  <- chosen";
    os << "\n";
  }
  return out;
}
