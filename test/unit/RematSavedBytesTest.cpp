//===- RematSavedBytesTest.cpp - saved-budget's exact solver --------------===//
//
// --mw-remat's saved-bytes problem (RematMilp.h): a precedence-constrained
// knapsack whose Lagrangian is a max-weight closure. Checked against brute
// force on small instances: the hull's vertices are closed sets with the
// sums they report and exact optima at their own gains, the hull's bound
// never exceeds the optimum (and meets it at a vertex), and the solver's
// answer is the optimum, proven.
//
//===----------------------------------------------------------------------===//

#include "RematMilp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <random>

using namespace mlir::mw::remat;

namespace {

bool closed(const ClosureKnapsack &p, const std::vector<char> &chosen) {
  for (auto [a, b] : p.prereqs)
    if (chosen[a] && !chosen[b])
      return false;
  return true;
}

/// For every closed set, by increasing gain, the least cost of a closed set
/// freeing at least that gain (a suffix minimum).
struct BruteForce {
  std::vector<std::pair<int64_t, int64_t>> byGain; // (gain, least cost)
  explicit BruteForce(const ClosureKnapsack &p) {
    int n = p.size();
    for (uint32_t mask = 0; mask < (1u << n); ++mask) {
      std::vector<char> chosen(n);
      int64_t cost = 0, gain = 0;
      for (int i = 0; i < n; ++i)
        if (mask >> i & 1) {
          chosen[i] = 1;
          cost += p.cost[i];
          gain += p.gain[i];
        }
      if (closed(p, chosen))
        byGain.push_back({gain, cost});
    }
    std::sort(byGain.begin(), byGain.end());
    for (size_t k = byGain.size(); k-- > 1;)
      byGain[k - 1].second = std::min(byGain[k - 1].second, byGain[k].second);
  }
  /// The least cost of a closed set freeing at least `need`; -1 when none.
  int64_t operator()(int64_t need) const {
    auto it = std::lower_bound(byGain.begin(), byGain.end(),
                               std::make_pair(need, INT64_MIN));
    return it == byGain.end() ? -1 : it->second;
  }
};

/// The hand-written step of test/Dialect/MW/Transforms/
/// mw-remat-saved-optimal.mlir: a (256 B, 1024), b (128 B, 256) needing
/// t (0 B, 512), c (128 B, 512).
ClosureKnapsack handExample() {
  ClosureKnapsack p;
  p.cost = {1024, 512, 256, 512};
  p.gain = {256, 0, 128, 128};
  p.prereqs = {{2, 1}};
  return p;
}

TEST(RematSavedBytes, HandExampleHull) {
  ClosureKnapsack p = handExample();
  std::vector<HullPoint> hull = closureHull(p);
  ASSERT_EQ(hull.size(), 3u);
  EXPECT_EQ(hull[0].gain, 0);
  EXPECT_EQ(hull[0].cost, 0);
  EXPECT_EQ(hull[1].gain, 384);
  EXPECT_EQ(hull[1].cost, 1536);
  EXPECT_EQ(hull[2].gain, 512);
  EXPECT_EQ(hull[2].cost, 2304);
  // On the line through (0, 0) and (384, 1536), 4 FLOPs per byte; between
  // the last two vertices 6.
  EXPECT_EQ(hullBound(hull, 128), 512.0);
  EXPECT_EQ(hullBound(hull, 256), 1024.0);
  EXPECT_EQ(hullBound(hull, 448), 1536.0 + 64 * 6);
  EXPECT_TRUE(std::isinf(hullBound(hull, 513)));
}

TEST(RematSavedBytes, HandExampleSolve) {
  ClosureKnapsack p = handExample();
  const int64_t needs[] = {0, 128, 256, 384, 512};
  const int64_t costs[] = {0, 512, 1024, 1536, 2304};
  for (int k = 0; k < 5; ++k) {
    ClosureKnapsackResult r = solveClosureKnapsack(p, needs[k], 10.0);
    EXPECT_EQ(r.status, "optimal") << needs[k];
    EXPECT_EQ(r.cost, costs[k]) << needs[k];
    EXPECT_EQ(r.bound, static_cast<double>(costs[k])) << needs[k];
    EXPECT_GE(r.gain, needs[k]);
    EXPECT_TRUE(closed(p, r.chosen));
  }
  EXPECT_EQ(solveClosureKnapsack(p, 513, 10.0).status, "infeasible");
}

/// Random instances of up to 12 ops, prerequisites on earlier ops (a DAG,
/// as the forward pass is), some ops freeing nothing, some costing nothing,
/// and repeated (cost, gain) pairs as identical layers give.
TEST(RematSavedBytes, RandomAgainstBruteForce) {
  std::mt19937 rng(21);
  for (int trial = 0; trial < 200; ++trial) {
    int n = 1 + rng() % 12;
    ClosureKnapsack p;
    for (int i = 0; i < n; ++i) {
      bool repeat = i > 0 && rng() % 4 == 0;
      p.cost.push_back(repeat ? p.cost[i - 1]
                              : (rng() % 5 == 0 ? 0 : 1 + rng() % 1000));
      p.gain.push_back(repeat ? p.gain[i - 1]
                              : (rng() % 4 == 0 ? 0 : 4 * (1 + rng() % 64)));
      for (int j = 0; j < i; ++j)
        if (rng() % 6 == 0)
          p.prereqs.push_back({i, j});
    }
    BruteForce bruteForce(p);
    std::vector<HullPoint> hull = closureHull(p);
    ASSERT_FALSE(hull.empty());
    for (size_t k = 0; k < hull.size(); ++k) {
      const HullPoint &h = hull[k];
      ASSERT_TRUE(closed(p, h.chosen)) << trial;
      int64_t cost = 0, gain = 0;
      for (int i = 0; i < n; ++i)
        if (h.chosen[i]) {
          cost += p.cost[i];
          gain += p.gain[i];
        }
      EXPECT_EQ(cost, h.cost) << trial;
      EXPECT_EQ(gain, h.gain) << trial;
      EXPECT_EQ(bruteForce(h.gain), h.cost) << trial << " vertex " << k;
      if (k > 0) {
        EXPECT_GT(h.gain, hull[k - 1].gain) << trial;
      }
    }
    int64_t total = 0;
    for (int64_t g : p.gain)
      total += g;
    // Needs at and beside every vertex, between vertices, and past the
    // most that can be freed.
    std::vector<int64_t> needs{0, total, total + 4};
    for (const HullPoint &h : hull)
      for (int64_t d : {-4, 4})
        needs.push_back(h.gain + d);
    for (int k = 0; k < 4; ++k)
      needs.push_back(4 * (rng() % (total / 4 + 1)));
    for (int64_t need : needs) {
      int64_t best = bruteForce(need);
      double bound = hullBound(hull, need);
      ClosureKnapsackResult r = solveClosureKnapsack(p, need, 10.0, &hull);
      if (best < 0) {
        EXPECT_TRUE(std::isinf(bound)) << trial << " need " << need;
        EXPECT_EQ(r.status, "infeasible") << trial << " need " << need;
        continue;
      }
      EXPECT_LE(bound, static_cast<double>(best)) << trial << " need " << need;
      ASSERT_EQ(r.status, "optimal") << trial << " need " << need;
      EXPECT_EQ(r.cost, best) << trial << " need " << need;
      EXPECT_GE(r.gain, need);
      EXPECT_TRUE(closed(p, r.chosen));
    }
  }
}

} // namespace
