//===- Instance.cpp - Packing instances: units, times, conflicts ---------===//
//
// Turns the caller's buffers into the form every strategy works on: sizes in
// alignment units (so offsets come out aligned for free), lifetimes over dense
// time indices (so per-time arrays stay as small as the number of distinct
// event times), the live load at each time (whose maximum is the lower
// bound), and the conflict graph, built from prefix counts over times and one
// sweep in start order in time linear in the number of overlapping pairs.
// Also the radix sort every order of the packer is made with.
//
//===----------------------------------------------------------------------===//

#include "PackerInternal.h"

#include <algorithm>

using namespace memwall::planning;
using namespace memwall::planning::detail;

std::vector<int32_t> detail::sortedByKey(const std::vector<SortKey> &keys) {
  // A stable LSD radix sort over the bytes of the two fields (the identity
  // order going in makes the index the last tie-break). Only the bytes some
  // keys differ in are passes, usually a few: sizes, lifetimes and times
  // use the low bytes. Linear passes instead of the mispredicted
  // comparisons of a comparison sort, several times faster on 10^4 to 10^6
  // keys.
  struct Record {
    uint64_t first, second;
    int32_t index;
  };
  const size_t n = keys.size();
  std::vector<Record> records(n), scratch(n);
  uint64_t anyFirst = 0, allFirst = ~uint64_t(0);
  uint64_t anySecond = 0, allSecond = ~uint64_t(0);
  for (size_t i = 0; i < n; ++i) {
    records[i] = {keys[i].first, keys[i].second, int32_t(i)};
    anyFirst |= keys[i].first;
    allFirst &= keys[i].first;
    anySecond |= keys[i].second;
    allSecond &= keys[i].second;
  }
  // Digits 0..7 are the bytes of `second`, least significant first, 8..15
  // those of `first`.
  const uint64_t varies[2] = {anySecond ^ allSecond, anyFirst ^ allFirst};
  std::vector<uint32_t> bucket(256);
  for (int d = 0; d < 16; ++d) {
    const int shift = 8 * (d % 8);
    if (((varies[d / 8] >> shift) & 0xffu) == 0)
      continue;
    auto digit = [&](const Record &r) {
      return size_t(((d < 8 ? r.second : r.first) >> shift) & 0xffu);
    };
    std::fill(bucket.begin(), bucket.end(), 0);
    for (const Record &r : records)
      ++bucket[digit(r)];
    uint32_t sum = 0;
    for (uint32_t &b : bucket) {
      uint32_t count = b;
      b = sum;
      sum += count;
    }
    for (const Record &r : records)
      scratch[bucket[digit(r)]++] = r;
    records.swap(scratch);
  }
  std::vector<int32_t> order(n);
  for (size_t i = 0; i < n; ++i)
    order[i] = records[i].index;
  return order;
}

/// Fills inst.adjBegin / inst.adj. In start order, the buffers overlapping
/// b are the earlier ones still live when b starts (the "active" ones) and
/// the later ones starting before b ends, which are contiguous in that
/// order. So every degree is a difference of prefix counts over times, and
/// each list is written front to back: the active buffers, then a slice of
/// the start order (both in start order, ties by index).
static void buildConflicts(Instance &inst, Conflicts conflicts) {
  const int32_t n = inst.numBuffers(), numTimes = inst.numTimes;
  // startsBefore[t]: buffers starting before time t, i.e. the position in
  // start order of the first buffer starting at t or later (a counting sort,
  // stable, so ties stay in index order); endsBy[t]: buffers ending at or
  // before t.
  std::vector<int32_t> startsBefore(size_t(numTimes) + 2, 0);
  std::vector<int32_t> endsBy(size_t(numTimes) + 1, 0);
  for (int32_t b = 0; b < n; ++b) {
    ++startsBefore[inst.start[b] + 1];
    ++endsBy[inst.end[b]];
  }
  for (int32_t t = 0; t <= numTimes; ++t) {
    startsBefore[t + 1] += startsBefore[t];
    if (t > 0)
      endsBy[t] += endsBy[t - 1];
  }
  std::vector<int32_t> byStart(n);
  {
    std::vector<int32_t> fill(startsBefore.begin(), startsBefore.end() - 1);
    for (int32_t b = 0; b < n; ++b)
      byStart[fill[inst.start[b]]++] = b;
  }

  // Buffers ending by b's start all started before it, so the earlier
  // overlapping ones number position - endsBy[start]; the later ones,
  // startsBefore[end] - position - 1.
  inst.adjBegin.assign(size_t(n) + 1, 0);
  for (int32_t b = 0; b < n; ++b)
    inst.adjBegin[b + 1] =
        startsBefore[inst.end[b]] - endsBy[inst.start[b]] - 1;
  for (int32_t b = 0; b < n; ++b)
    inst.adjBegin[b + 1] += inst.adjBegin[b];
  // The graph's size is known before it is built.
  const int64_t entries = inst.adjBegin[n];
  if (conflicts == Conflicts::Never ||
      (conflicts == Conflicts::IfSparse &&
       entries > kMaxConflictsPerBuffer * int64_t(n))) {
    inst.adjBegin.clear();
    inst.adjBegin.shrink_to_fit();
    return;
  }
  inst.hasConflicts = true;
  inst.adj.resize(size_t(inst.adjBegin[n]));

  std::vector<int32_t> active;
  for (int32_t pos = 0; pos < n; ++pos) {
    const int32_t b = byStart[pos], s = inst.start[b];
    size_t kept = 0;
    for (int32_t a : active)
      if (inst.end[a] > s)
        active[kept++] = a;
    active.resize(kept);
    int32_t *out = inst.adj.data() + inst.adjBegin[b];
    out = std::copy(active.begin(), active.end(), out);
    std::copy(byStart.begin() + pos + 1,
              byStart.begin() + startsBefore[inst.end[b]], out);
    active.push_back(b);
  }
}

std::string detail::buildInstance(const std::vector<PackBuffer> &buffers,
                                  uint64_t alignment, Instance &inst,
                                  Conflicts conflicts) {
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

  // Dense time indices: rank the distinct starts and ends. Signed times
  // sort as unsigned keys once their sign bit is flipped.
  int32_t n = inst.numBuffers();
  std::vector<SortKey> events(size_t(n) * 2);
  for (int32_t i = 0; i < n; ++i) {
    const PackBuffer &b = buffers[inst.origIndex[i]];
    events[2 * size_t(i)].first = uint64_t(b.start) ^ (uint64_t(1) << 63);
    events[2 * size_t(i) + 1].first = uint64_t(b.end) ^ (uint64_t(1) << 63);
  }
  std::vector<int32_t> byTime = sortedByKey(events);
  std::vector<int32_t> timeOf(events.size());
  int32_t numDistinct = 0;
  for (size_t k = 0; k < byTime.size(); ++k) {
    if (k > 0 && events[byTime[k]].first != events[byTime[k - 1]].first)
      ++numDistinct;
    timeOf[byTime[k]] = numDistinct;
  }
  if (!byTime.empty())
    ++numDistinct;
  inst.start.resize(n);
  inst.end.resize(n);
  inst.length.resize(n);
  for (int32_t i = 0; i < n; ++i) {
    const PackBuffer &b = buffers[inst.origIndex[i]];
    inst.start[i] = timeOf[2 * size_t(i)];
    inst.end[i] = timeOf[2 * size_t(i) + 1];
    inst.length[i] = b.end - b.start;
  }
  inst.numTimes = std::max(numDistinct - 1, 0);

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
  buildConflicts(inst, conflicts);
  return "";
}

int64_t detail::arenaOf(const Instance &inst,
                        const std::vector<int64_t> &offsets) {
  int64_t arena = 0;
  for (int32_t i = 0; i < inst.numBuffers(); ++i)
    arena = std::max(arena, offsets[i] + inst.size[i]);
  return arena;
}
