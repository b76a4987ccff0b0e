//===- Greedy.cpp - Greedy placement and the orders it is run with --------===//
//
// The greedy half of the packer: place buffers one at a time, each into a gap
// among the already placed buffers it overlaps in time. The published
// baselines (TFLite's greedy-by-size and greedy-by-breadth, XLA's heap
// simulator in its spatial and temporal orders) are this loop with best-fit
// gaps and their own orders, so they live here with the extra orders `best`
// adds to its portfolio. Every order is a total order (ties by index), which
// keeps plans reproducible byte for byte.
//
//===----------------------------------------------------------------------===//

#include "PackerInternal.h"

#include <algorithm>
#include <numeric>

using namespace memwall::planning;
using namespace memwall::planning::detail;

int64_t GreedyPlacer::findOffset(int32_t b, Fit fit,
                                 const std::vector<int64_t> &offsets) {
  // Branch-free gather: about half the neighbours are placed, in no
  // predictable pattern, so a conditional push would mispredict often.
  segments.resize(size_t(inst.degree(b)));
  size_t count = 0;
  for (const int32_t *c = inst.conflictsBegin(b), *e = inst.conflictsEnd(b);
       c != e; ++c) {
    int64_t o = offsets[*c];
    segments[count] = {o, o + inst.size[*c]};
    count += o >= 0;
  }
  segments.resize(count);
  work += inst.degree(b) + int64_t(segments.size());
  // Ties in offset may come out in any order: the scan below only depends
  // on the offsets and the running maximum of the ends. Most buffers have
  // a few dozen placed neighbours, where insertion sort beats introsort.
  if (segments.size() <= 32) {
    for (size_t i = 1; i < segments.size(); ++i) {
      std::pair<int64_t, int64_t> moving = segments[i];
      size_t j = i;
      for (; j > 0 && segments[j - 1].first > moving.first; --j)
        segments[j] = segments[j - 1];
      segments[j] = moving;
    }
  } else {
    std::sort(segments.begin(), segments.end(),
              [](const auto &x, const auto &y) { return x.first < y.first; });
  }
  const int64_t need = inst.size[b];
  int64_t top = 0, bestOffset = -1, bestGap = INT64_MAX;
  for (const auto &[lo, hi] : segments) {
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
  return bestOffset >= 0 ? bestOffset : top;
}

int64_t GreedyPlacer::run(const std::vector<int32_t> &order, size_t from,
                          Fit fit, std::vector<int64_t> &offsets,
                          int64_t cutoff) {
  int64_t arena = 0;
  for (size_t i = 0; i < from; ++i)
    arena = std::max(arena, offsets[order[i]] + inst.size[order[i]]);
  for (size_t i = from; i < order.size(); ++i) {
    int32_t b = order[i];
    int64_t o = findOffset(b, fit, offsets);
    offsets[b] = o;
    arena = std::max(arena, o + inst.size[b]);
    if (arena > cutoff)
      return arena;
  }
  return arena;
}

/// Sorts 0..n-1 by `less`, falling back to the index so the order is total.
template <typename Less>
static std::vector<int32_t> sortedIndices(int32_t n, Less less) {
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    if (less(a, b))
      return true;
    if (less(b, a))
      return false;
    return a < b;
  });
  return order;
}

std::vector<int32_t> detail::orderBySize(const Instance &inst) {
  return sortedIndices(inst.numBuffers(), [&](int32_t a, int32_t b) {
    return inst.size[a] > inst.size[b];
  });
}

std::vector<int32_t> detail::orderBySpatial(const Instance &inst) {
  return sortedIndices(inst.numBuffers(), [&](int32_t a, int32_t b) {
    if (inst.size[a] != inst.size[b])
      return inst.size[a] > inst.size[b];
    return inst.length[a] > inst.length[b];
  });
}

std::vector<int32_t> detail::orderByTemporal(const Instance &inst) {
  return sortedIndices(inst.numBuffers(), [&](int32_t a, int32_t b) {
    if (inst.length[a] != inst.length[b])
      return inst.length[a] > inst.length[b];
    return inst.size[a] > inst.size[b];
  });
}

std::vector<int32_t> detail::orderByStart(const Instance &inst) {
  return sortedIndices(inst.numBuffers(), [&](int32_t a, int32_t b) {
    if (inst.start[a] != inst.start[b])
      return inst.start[a] < inst.start[b];
    return inst.size[a] > inst.size[b];
  });
}

std::vector<int32_t> detail::orderByConflictBytes(const Instance &inst) {
  // A buffer's own bytes plus those it can never share addresses with. No
  // overflow: all sizes together stay under the 2^62 cap.
  std::vector<int64_t> bytes(inst.numBuffers());
  for (int32_t b = 0; b < inst.numBuffers(); ++b) {
    int64_t sum = inst.size[b];
    for (const int32_t *c = inst.conflictsBegin(b), *e = inst.conflictsEnd(b);
         c != e; ++c)
      sum += inst.size[*c];
    bytes[b] = sum;
  }
  return sortedIndices(inst.numBuffers(), [&](int32_t a, int32_t b) {
    if (bytes[a] != bytes[b])
      return bytes[a] > bytes[b];
    return inst.size[a] > inst.size[b];
  });
}

std::vector<int32_t> detail::orderByBreadth(const Instance &inst) {
  // TFLite visits ops by breadth (live bytes) descending and, at each op, its
  // unassigned buffers by size descending. A buffer is therefore assigned at
  // the widest op of its lifetime: its key is the smallest op rank there, a
  // range minimum (segment tree, so no per-op buffer lists are built).
  int32_t t = std::max<int32_t>(inst.numTimes, 1);
  std::vector<int32_t> byBreadth(inst.numTimes);
  std::iota(byBreadth.begin(), byBreadth.end(), 0);
  std::stable_sort(byBreadth.begin(), byBreadth.end(),
                   [&](int32_t a, int32_t b) {
                     return inst.load[a] > inst.load[b];
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
  return sortedIndices(inst.numBuffers(), [&](int32_t a, int32_t b) {
    if (key[a] != key[b])
      return key[a] < key[b];
    return inst.size[a] > inst.size[b];
  });
}
