//===- Instance.cpp - Packing instances: units, times, conflicts ---------===//
//
// Turns the caller's buffers into the form every strategy works on: sizes in
// alignment units (so offsets come out aligned for free), lifetimes over dense
// time indices (so per-time arrays stay as small as the number of distinct
// event times), the live load at each time (whose maximum is the lower
// bound), and the conflict graph, built by one sweep in start order in time
// linear in the number of overlapping pairs.
//
//===----------------------------------------------------------------------===//

#include "PackerInternal.h"

#include <algorithm>
#include <numeric>

using namespace memwall::planning;
using namespace memwall::planning::detail;

/// Fills inst.adjBegin / inst.adj. A pair overlaps exactly when the later
/// starting buffer starts before the earlier one ends, so sweeping in start
/// order and pairing each buffer with the still-active ones finds every pair
/// once; the first sweep counts, the second fills.
static void buildConflicts(Instance &inst) {
  int32_t n = inst.numBuffers();
  std::vector<int32_t> byStart(n);
  std::iota(byStart.begin(), byStart.end(), 0);
  std::stable_sort(byStart.begin(), byStart.end(), [&](int32_t a, int32_t b) {
    return inst.start[a] < inst.start[b];
  });

  std::vector<int64_t> degree(n, 0);
  std::vector<int32_t> active;
  auto sweep = [&](auto &&visitPair) {
    active.clear();
    for (int32_t b : byStart) {
      int32_t s = inst.start[b];
      // Drop the buffers that ended before b starts; everything left
      // overlaps b.
      size_t kept = 0;
      for (int32_t a : active)
        if (inst.end[a] > s)
          active[kept++] = a;
      active.resize(kept);
      for (int32_t a : active)
        visitPair(a, b);
      active.push_back(b);
    }
  };

  sweep([&](int32_t a, int32_t b) {
    ++degree[a];
    ++degree[b];
  });
  inst.adjBegin.assign(size_t(n) + 1, 0);
  for (int32_t i = 0; i < n; ++i)
    inst.adjBegin[i + 1] = inst.adjBegin[i] + degree[i];
  inst.adj.assign(size_t(inst.adjBegin[n]), 0);
  std::vector<int64_t> fill(inst.adjBegin.begin(), inst.adjBegin.end() - 1);
  sweep([&](int32_t a, int32_t b) {
    inst.adj[fill[a]++] = b;
    inst.adj[fill[b]++] = a;
  });
}

std::string detail::buildInstance(const std::vector<PackBuffer> &buffers,
                                  uint64_t alignment, Instance &inst) {
  inst = Instance();
  if (alignment == 0)
    return "alignment must be at least 1";
  // Sizes are bounded so that any arena (at most the total) fits in int64.
  const uint64_t maxUnits = kMaxTotalBytes / alignment;
  uint64_t totalUnits = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const PackBuffer &b = buffers[i];
    if (b.end <= b.start)
      return "buffer " + std::to_string(i) + " has an empty lifetime [" +
             std::to_string(b.start) + ", " + std::to_string(b.end) + ")";
    uint64_t units = b.size / alignment + (b.size % alignment != 0);
    if (units > maxUnits - totalUnits)
      return "the aligned sizes sum past 2^62 bytes";
    totalUnits += units;
    if (units == 0)
      continue;
    inst.origIndex.push_back(uint32_t(i));
    inst.size.push_back(int64_t(units));
  }

  int32_t n = inst.numBuffers();
  std::vector<int64_t> times;
  times.reserve(size_t(n) * 2);
  for (int32_t i = 0; i < n; ++i) {
    times.push_back(buffers[inst.origIndex[i]].start);
    times.push_back(buffers[inst.origIndex[i]].end);
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  auto rank = [&](int64_t t) {
    return int32_t(std::lower_bound(times.begin(), times.end(), t) -
                   times.begin());
  };
  inst.start.resize(n);
  inst.end.resize(n);
  inst.length.resize(n);
  for (int32_t i = 0; i < n; ++i) {
    const PackBuffer &b = buffers[inst.origIndex[i]];
    inst.start[i] = rank(b.start);
    inst.end[i] = rank(b.end);
    inst.length[i] = b.end - b.start;
  }
  inst.numTimes = times.empty() ? 0 : int32_t(times.size()) - 1;

  std::vector<int64_t> delta(size_t(inst.numTimes) + 1, 0);
  for (int32_t i = 0; i < n; ++i) {
    delta[inst.start[i]] += inst.size[i];
    delta[inst.end[i]] -= inst.size[i];
  }
  inst.load.assign(inst.numTimes, 0);
  int64_t live = 0;
  for (int32_t t = 0; t < inst.numTimes; ++t) {
    live += delta[t];
    inst.load[t] = live;
    inst.lowerBound = std::max(inst.lowerBound, live);
  }
  buildConflicts(inst);
  return "";
}

int64_t detail::arenaOf(const Instance &inst,
                        const std::vector<int64_t> &offsets) {
  int64_t arena = 0;
  for (int32_t i = 0; i < inst.numBuffers(); ++i)
    arena = std::max(arena, offsets[i] + inst.size[i]);
  return arena;
}
