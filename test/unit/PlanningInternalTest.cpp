//===- PlanningInternalTest.cpp - The packer's internals against oracles ---===//
//
// The greedy placers have two gap searches: a scan over the conflict list
// (instances with a conflict graph) and the span tree (large dense ones,
// which have none). Both must give the same offsets for every order, fit and
// starting prefix; and the tree's union of placed ranges must be the union a
// brute force over the placed buffers finds.
//
//===----------------------------------------------------------------------===//

#include "PackerInternal.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

using namespace memwall::planning;
using namespace memwall::planning::detail;

namespace {

/// Buffers of a training-step shape: many short ones, some living long,
/// a few over (almost) everything, so that span lists, partial buckets and
/// whole-program buffers all occur.
std::vector<PackBuffer> randomBuffers(std::mt19937_64 &rng, size_t n,
                                      int64_t horizon, uint64_t maxSize) {
  std::vector<PackBuffer> bufs(n);
  for (PackBuffer &b : bufs) {
    uint64_t kind = rng() % 10;
    b.start = int64_t(rng() % uint64_t(horizon));
    int64_t length = kind < 6   ? 1 + int64_t(rng() % 4)
                     : kind < 9 ? 1 + int64_t(rng() % uint64_t(horizon / 3 + 1))
                                : horizon;
    if (kind == 9)
      b.start = int64_t(rng() % 3);
    b.end = b.start + length;
    b.size = 1 + rng() % maxSize;
    if (rng() % 4 == 0)
      b.size = 1 + rng() % 8; // Many equal sizes, as real steps have.
  }
  return bufs;
}

std::vector<std::vector<int32_t>> allOrders(const Instance &inst) {
  return {orderBySize(inst), orderByBreadth(inst), orderBySpatial(inst),
          orderByTemporal(inst), orderByStart(inst)};
}

} // namespace

TEST(PlanningInternal, SpanTreePlacesAsTheConflictListsDo) {
  std::mt19937_64 rng(5);
  for (int iter = 0; iter < 300; ++iter) {
    // Horizons around multiples of the tree's bucket (32 time indices).
    const int64_t horizon = 2 + int64_t(rng() % 300);
    const size_t n = 1 + rng() % 400;
    const uint64_t maxSize = iter % 2 ? 1000 : uint64_t(1) << 36;
    auto bufs = randomBuffers(rng, n, horizon, maxSize);
    Instance withList, withTree;
    ASSERT_EQ(buildInstance(bufs, 1, withList, Conflicts::Always), "");
    ASSERT_EQ(buildInstance(bufs, 1, withTree, Conflicts::Never), "");
    ASSERT_TRUE(withList.hasConflicts);
    ASSERT_FALSE(withTree.hasConflicts);
    GreedyPlacer listPlacer(withList), treePlacer(withTree);
    for (const std::vector<int32_t> &order : allOrders(withList)) {
      for (Fit fit : {Fit::Best, Fit::First, Fit::BestWithTop}) {
        std::vector<int64_t> a(withList.numBuffers(), -1), b = a;
        int64_t arenaA = listPlacer.run(order, 0, fit, a);
        int64_t arenaB = treePlacer.run(order, 0, fit, b);
        ASSERT_EQ(arenaA, arenaB) << "instance " << iter;
        ASSERT_EQ(a, b) << "instance " << iter;
        // Re-placing a suffix over a placed prefix, and a cutoff.
        size_t from = order.size() / 2;
        for (size_t i = from; i < order.size(); ++i)
          a[order[i]] = b[order[i]] = -1;
        int64_t cutoff = arenaA - 1 - int64_t(rng() % 3);
        EXPECT_EQ(listPlacer.run(order, from, fit, a, cutoff),
                  treePlacer.run(order, from, fit, b, cutoff));
        EXPECT_EQ(a, b) << "instance " << iter << " from " << from;
      }
    }
  }
}

TEST(PlanningInternal, SpanTreeUnionIsTheOverlappingBuffersUnion) {
  std::mt19937_64 rng(9);
  for (int iter = 0; iter < 200; ++iter) {
    auto bufs = randomBuffers(rng, 1 + rng() % 300, 2 + int64_t(rng() % 200),
                              100);
    Instance inst;
    ASSERT_EQ(buildInstance(bufs, 1, inst, Conflicts::Never), "");
    const int32_t n = inst.numBuffers();
    SpanTree tree(inst);
    // Place about half of them at arbitrary (possibly overlapping) offsets:
    // the tree indexes ranges, it does not check them.
    std::vector<int64_t> offset(n, -1);
    for (int32_t b = 0; b < n; ++b)
      if (rng() % 2) {
        offset[b] = int64_t(rng() % 1000);
        tree.insert(b, offset[b]);
      }
    std::vector<Span> spans;
    for (int32_t q = 0; q < n; ++q) {
      tree.collect(q, spans);
      // Union as a set of unit addresses, both ways.
      std::vector<bool> got(1200, false), want(1200, false);
      for (const Span &s : spans)
        for (int64_t a = s.lo; a < s.hi; ++a)
          got[a] = true;
      for (int32_t b = 0; b < n; ++b)
        if (offset[b] >= 0 && inst.start[b] < inst.end[q] &&
            inst.start[q] < inst.end[b])
          for (int64_t a = offset[b]; a < offset[b] + inst.size[b]; ++a)
            want[a] = true;
      ASSERT_EQ(got, want) << "instance " << iter << " query " << q;
    }
  }
}
