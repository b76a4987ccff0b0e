//===- Greedy.cpp - Greedy placement and the orders it is run with --------===//
//
// The greedy half of the packer: place buffers one at a time, each into a gap
// among the already placed buffers it overlaps in time. The published
// baselines (TFLite's greedy-by-size and greedy-by-breadth, XLA's heap
// simulator in its spatial and temporal orders) are this loop with best-fit
// gaps and their own orders, so they live here with the extra orders `best`
// adds to its portfolio. Every order is a total order (ties by index), which
// keeps plans reproducible byte for byte. The loop is the packer's hot spot
// (a placement gathers and sorts the ranges of its placed neighbours), so
// ranges travel packed in one integer while the arena fits in 32 bits, and
// orders are radix sorts.
//
//===----------------------------------------------------------------------===//

#include "PackerInternal.h"

#include <algorithm>
#include <functional>

using namespace memwall::planning;
using namespace memwall::planning::detail;

namespace {
/// A placed range [lo, hi) packed as lo << 32 | hi, valid while the arena
/// stays below 2^32 units: one load per neighbour, and sorting moves and
/// compares single integers.
constexpr int64_t kNarrowLimit = int64_t(1) << 32;
constexpr uint64_t kUnplaced = ~uint64_t(0);
} // namespace

GreedyPlacer::GreedyPlacer(const Instance &inst) : inst(inst) {
  packed.resize(size_t(inst.numBuffers()));
  if (!inst.hasConflicts) {
    tree = std::make_unique<SpanTree>(inst);
    return;
  }
  int64_t maxDegree = 0;
  for (int32_t i = 0; i < inst.numBuffers(); ++i)
    maxDegree = std::max(maxDegree, inst.degree(i));
  // The branch-free gathers below store every neighbour before deciding
  // whether to keep it, so the scratch holds a whole conflict list.
  keys.resize(size_t(maxDegree));
  scratch.resize(size_t(maxDegree));
  ranges.resize(size_t(maxDegree));
}

/// Sorts [first, last) ascending: insertion sort for the few dozen entries
/// most buffers have, introsort above that.
template <typename T, typename Less>
static void sortSmall(T *first, T *last, Less less) {
  if (last - first < 2)
    return; // also keeps `first + 1` off a null `first`
  if (last - first > 32) {
    std::sort(first, last, less);
    return;
  }
  for (T *i = first + 1; i < last; ++i) {
    T moving = *i;
    T *j = i;
    for (; j > first && less(moving, j[-1]); --j)
      *j = j[-1];
    *j = moving;
  }
}

/// Sorts packed ranges by their low half only (the gap scan does not care
/// how ties in lo are ordered): an LSD radix sort over the bytes the lows
/// use. Long-lived buffers have hundreds of placed neighbours, where a
/// comparison sort's mispredicted branches cost more than a few linear
/// passes.
static void sortByLow(uint64_t *keys, size_t count, uint64_t *scratch) {
  uint64_t any = 0;
  for (size_t i = 0; i < count; ++i)
    any |= keys[i];
  const uint64_t maxLo = any >> 32;
  uint64_t *from = keys, *to = scratch;
  for (int shift = 32; shift < 64 && (maxLo >> (shift - 32)) != 0; shift += 8) {
    uint32_t bucket[256] = {0};
    for (size_t i = 0; i < count; ++i)
      ++bucket[(from[i] >> shift) & 0xffu];
    uint32_t sum = 0;
    for (uint32_t &b : bucket) {
      uint32_t c = b;
      b = sum;
      sum += c;
    }
    for (size_t i = 0; i < count; ++i)
      to[bucket[(from[i] >> shift) & 0xffu]++] = from[i];
    std::swap(from, to);
  }
  if (from != keys)
    std::copy(from, from + count, keys);
}

/// The gap `fit` picks among `count` address ranges sorted by their low end
/// (`bounds(i)` gives range i as {lo, hi}); `arena` is the current top of
/// all placed buffers. Ties in lo may come in any order: the scan only
/// depends on lo and the running maximum of hi, i.e. on the gaps of the
/// ranges' union.
template <typename Bounds>
static int64_t pickGap(size_t count, Bounds bounds, int64_t need, Fit fit,
                       int64_t arena) {
  int64_t top = 0, bestOffset = -1, bestGap = INT64_MAX;
  for (size_t i = 0; i < count; ++i) {
    auto [lo, hi] = bounds(i);
    if (lo > top) {
      int64_t gap = lo - top;
      if (gap >= need) {
        if (fit == Fit::First)
          return top;
        // Strictly smaller, so the lowest of equally tight gaps wins.
        if (gap < bestGap) {
          bestGap = gap;
          bestOffset = top;
        }
      }
    }
    top = std::max(top, hi);
  }
  // XLA's last candidate: the chunk from the overlapping buffers' top to the
  // heap top, taken only when strictly tighter than every gap below.
  if (fit == Fit::BestWithTop && arena - top >= need && arena - top < bestGap)
    return top;
  return bestOffset >= 0 ? bestOffset : top;
}

int64_t GreedyPlacer::findOffsetNarrow(int32_t b, Fit fit, int64_t arena) {
  // Branch-free gather: about half the neighbours are placed, in no
  // predictable pattern, so a conditional push would mispredict often.
  const int32_t *first = inst.conflictsBegin(b), *last = inst.conflictsEnd(b);
  uint64_t *out = keys.data();
  size_t count = 0;
  for (const int32_t *c = first; c != last; ++c) {
    uint64_t key = packed[*c];
    out[count] = key;
    count += key != kUnplaced;
  }
  work += (last - first) + int64_t(count);
  if (count > 64)
    sortByLow(out, count, scratch.data());
  else
    sortSmall(out, out + count, std::less<uint64_t>());
  return pickGap(
      count,
      [&](size_t i) {
        return std::make_pair(int64_t(out[i] >> 32),
                              int64_t(out[i] & 0xffffffffu));
      },
      inst.size[b], fit, arena);
}

int64_t GreedyPlacer::findOffsetWide(int32_t b, Fit fit, int64_t arena,
                                     const std::vector<int64_t> &offsets) {
  const int32_t *first = inst.conflictsBegin(b), *last = inst.conflictsEnd(b);
  Range *out = ranges.data();
  size_t count = 0;
  for (const int32_t *c = first; c != last; ++c) {
    int64_t o = offsets[*c];
    out[count] = {o, o + inst.size[*c]};
    count += o >= 0;
  }
  work += (last - first) + int64_t(count);
  sortSmall(out, out + count,
            [](const Range &x, const Range &y) { return x.lo < y.lo; });
  return pickGap(
      count, [&](size_t i) { return std::make_pair(out[i].lo, out[i].hi); },
      inst.size[b], fit, arena);
}

int64_t GreedyPlacer::findOffsetTree(int32_t b, Fit fit, int64_t arena) {
  tree->collect(b, spans); // Sorted by lo already.
  return pickGap(
      spans.size(),
      [&](size_t i) { return std::make_pair(spans[i].lo, spans[i].hi); },
      inst.size[b], fit, arena);
}

int64_t GreedyPlacer::run(const std::vector<int32_t> &order, size_t from,
                          Fit fit, std::vector<int64_t> &offsets,
                          int64_t cutoff) {
  int64_t arena = 0, maxSize = 0;
  for (size_t i = 0; i < from; ++i)
    arena = std::max(arena, offsets[order[i]] + inst.size[order[i]]);
  if (tree) {
    const int64_t before = tree->work;
    tree->clear();
    for (size_t i = 0; i < from; ++i)
      tree->insert(order[i], offsets[order[i]]);
    for (size_t i = from; i < order.size(); ++i) {
      const int32_t b = order[i];
      const int64_t o = findOffsetTree(b, fit, arena);
      offsets[b] = o;
      tree->insert(b, o);
      arena = std::max(arena, o + inst.size[b]);
      if (arena > cutoff)
        break;
    }
    work += tree->work - before;
    return arena;
  }
  const int32_t n = inst.numBuffers();
  for (int32_t i = 0; i < n; ++i)
    packed[i] = offsets[i] < 0 ? kUnplaced
                               : uint64_t(offsets[i]) << 32 |
                                     uint64_t(offsets[i] + inst.size[i]);
  for (size_t i = from; i < order.size(); ++i)
    maxSize = std::max(maxSize, inst.size[order[i]]);
  for (size_t i = from; i < order.size(); ++i) {
    int32_t b = order[i];
    // The next buffer's conflict list is a cache miss on large instances
    // (lists are stored by buffer, visited in a different order); start
    // loading its first lines now.
    if (i + 1 < order.size()) {
      const int32_t *next = inst.conflictsBegin(order[i + 1]);
      const int64_t length = std::min<int64_t>(inst.degree(order[i + 1]), 64);
      for (int64_t k = 0; k < length; k += 16)
        __builtin_prefetch(next + k);
    }
    // Every placed range ends at or below the arena, and this placement
    // ends at most maxSize above it, so the packed form holds them all.
    int64_t o = arena + maxSize < kNarrowLimit
                    ? findOffsetNarrow(b, fit, arena)
                    : findOffsetWide(b, fit, arena, offsets);
    offsets[b] = o;
    packed[b] = uint64_t(o) << 32 | uint64_t(o + inst.size[b]);
    arena = std::max(arena, o + inst.size[b]);
    if (arena > cutoff)
      return arena;
  }
  return arena;
}

/// Maps a non-negative value to a key that sorts it descending.
static uint64_t descending(int64_t value) { return ~uint64_t(value); }

/// 0..n-1 sorted by (keyOf(i).first, keyOf(i).second, i).
template <typename KeyOf>
static std::vector<int32_t> sortedIndices(int32_t n, KeyOf keyOf) {
  std::vector<SortKey> keys(n);
  for (int32_t i = 0; i < n; ++i)
    keys[i] = keyOf(i);
  return sortedByKey(keys);
}

std::vector<int32_t> detail::orderBySize(const Instance &inst) {
  // TFLite's ArenaPlanner::CreateTensorAllocationVector: tensors live over
  // the whole run first, by index; the rest by size descending, ties by
  // allocation time (here: start), then by index.
  return sortedIndices(inst.numBuffers(), [&](int32_t i) {
    if (inst.start[i] == 0 && inst.end[i] == inst.numTimes)
      return SortKey{0, 0};
    return SortKey{uint64_t(INT64_MAX - inst.size[i]) + 1,
                   uint64_t(inst.start[i])};
  });
}

std::vector<int32_t> detail::orderBySpatial(const Instance &inst) {
  return sortedIndices(inst.numBuffers(), [&](int32_t i) {
    return SortKey{descending(inst.size[i]), descending(inst.length[i])};
  });
}

std::vector<int32_t> detail::orderByTemporal(const Instance &inst) {
  return sortedIndices(inst.numBuffers(), [&](int32_t i) {
    return SortKey{descending(inst.length[i]), descending(inst.size[i])};
  });
}

std::vector<int32_t> detail::orderByStart(const Instance &inst) {
  return sortedIndices(inst.numBuffers(), [&](int32_t i) {
    return SortKey{uint64_t(inst.start[i]), descending(inst.size[i])};
  });
}

std::vector<int32_t> detail::orderByConflictBytes(const Instance &inst) {
  // A buffer's own bytes plus those it can never share addresses with. No
  // overflow: all sizes together stay under the 2^62 cap.
  return sortedIndices(inst.numBuffers(), [&](int32_t b) {
    int64_t sum = inst.size[b];
    for (const int32_t *c = inst.conflictsBegin(b), *e = inst.conflictsEnd(b);
         c != e; ++c)
      sum += inst.size[*c];
    return SortKey{descending(sum), descending(inst.size[b])};
  });
}

std::vector<int32_t> detail::orderByBreadth(const Instance &inst) {
  // TFLite visits ops by breadth (live bytes) descending and, at each op, its
  // unassigned buffers by size descending. A buffer is therefore assigned at
  // the widest op of its lifetime: its key is the smallest op rank there, a
  // range minimum (segment tree, so no per-op buffer lists are built).
  int32_t t = std::max<int32_t>(inst.numTimes, 1);
  std::vector<int32_t> byBreadth =
      sortedIndices(inst.numTimes, [&](int32_t time) {
        return SortKey{descending(inst.load[time]), 0};
      });
  std::vector<int32_t> tree(size_t(2) * t, INT32_MAX);
  for (int32_t r = 0; r < inst.numTimes; ++r)
    tree[t + byBreadth[r]] = r;
  for (int32_t i = t - 1; i > 0; --i)
    tree[i] = std::min(tree[2 * i], tree[2 * i + 1]);
  std::vector<int32_t> key(inst.numBuffers());
  for (int32_t b = 0; b < inst.numBuffers(); ++b) {
    int32_t best = INT32_MAX;
    for (int32_t lo = inst.start[b] + t, hi = inst.end[b] + t; lo < hi;
         lo /= 2, hi /= 2) {
      if (lo & 1)
        best = std::min(best, tree[lo++]);
      if (hi & 1)
        best = std::min(best, tree[--hi]);
    }
    key[b] = best;
  }
  return sortedIndices(inst.numBuffers(), [&](int32_t b) {
    return SortKey{uint64_t(key[b]), descending(inst.size[b])};
  });
}
