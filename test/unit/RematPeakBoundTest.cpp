//===- RematPeakBoundTest.cpp - optimal's peak bound ----------------------===//
//
// --mw-remat's peak bound (RematMilp.h, livePointBound): at a time point t
// of the backward pass, every use after t reads a copy live at t or made
// after t. Checked two ways on small random instances:
//  - against the point problem itself, by brute force over every set of ops
//    cloned after t: the bound never exceeds its optimum and is infinite
//    exactly when nothing fits;
//  - against every plan of a small abstract step (a forward DAG, backward
//    ops reading forward values, unavoidable bytes at each backward op), by
//    brute force over every kept set and every choice of clones before
//    every backward op, each read served by the latest copy: the largest
//    point bound never exceeds the cheapest plan whose live bytes fit the
//    budget at every backward op; and so is the staged MILP's bound, all
//    time points at once, whichever of them it takes.
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

/// The least cost of any (R, Z) whose live bytes fit; -1 when none does.
int64_t bruteForcePoint(const LivePointProblem &p) {
  int n = p.cost.size(), m = p.bytes.size();
  int64_t best = -1;
  for (uint32_t mask = 0; mask < (1u << n); ++mask) {
    std::vector<char> needed(m, 0);
    for (int w : p.demand)
      needed[w] = 1;
    int64_t cost = 0;
    for (int i = 0; i < n; ++i)
      if (mask >> i & 1) {
        cost += p.cost[i];
        for (int u : p.reads[i])
          needed[u] = 1;
      }
    int64_t live = 0;
    for (int v = 0; v < m; ++v)
      if (needed[v] && (p.def[v] < 0 || !(mask >> p.def[v] & 1)))
        live += p.bytes[v];
    if (live <= p.capacity && (best < 0 || cost < best))
      best = cost;
  }
  return best;
}

/// A random forward DAG: op i makes value i (one result each) and reads
/// some earlier values and, at times, the one constant (value n, which no
/// op makes).
LivePointProblem randomDag(std::mt19937 &rng, int n) {
  LivePointProblem p;
  std::uniform_int_distribution<int> cost(0, 20), bytes(0, 12), coin(0, 2);
  for (int i = 0; i < n; ++i) {
    p.cost.push_back(cost(rng));
    p.bytes.push_back(bytes(rng));
    p.def.push_back(i);
    std::vector<int> reads;
    for (int j = 0; j < i; ++j)
      if (coin(rng) == 0)
        reads.push_back(j);
    if (coin(rng) == 0)
      reads.push_back(n);
    p.reads.push_back(reads);
  }
  p.bytes.push_back(bytes(rng));
  p.def.push_back(-1);
  return p;
}

TEST(RematPeakBound, PointAgainstBruteForce) {
  std::mt19937 rng(21);
  int infeasible = 0, tight = 0;
  for (int trial = 0; trial < 400; ++trial) {
    int n = 2 + trial % 9;
    LivePointProblem p = randomDag(rng, n);
    std::uniform_int_distribution<int> coin(0, 1);
    for (int v = 0; v <= n; ++v)
      if (coin(rng))
        p.demand.push_back(v);
    int64_t all = 0;
    for (int64_t b : p.bytes)
      all += b;
    p.capacity = std::uniform_int_distribution<int64_t>(-2, all)(rng);
    int64_t opt = bruteForcePoint(p);
    double bound = livePointBound(p);
    if (opt < 0) {
      EXPECT_TRUE(std::isinf(bound)) << "trial " << trial;
      ++infeasible;
      continue;
    }
    EXPECT_FALSE(std::isinf(bound)) << "trial " << trial;
    EXPECT_LE(bound, static_cast<double>(opt)) << "trial " << trial;
    tight += bound == static_cast<double>(opt);
  }
  // The instances exercise both outcomes, and the bound is often exact.
  EXPECT_GT(infeasible, 10);
  EXPECT_GT(tight, 100);
}

/// A small abstract step: forward op i makes value i (value n is the
/// constant), backward op q reads `bwdReads[q]` and holds `floor[q]` bytes
/// of its own at its position.
struct AbstractStep {
  LivePointProblem dag;
  std::vector<std::vector<int>> bwdReads;
  std::vector<int64_t> floor;
};

/// The cheapest plan whose live bytes at every backward op fit `budget`:
/// every kept set (originals alive to their last read) and every set of
/// clones before each backward op (made in forward order, reading the
/// latest copy of each operand), copies alive from their making to their
/// last read. -1 when no plan fits.
int64_t bruteForcePlans(const AbstractStep &s, int64_t budget) {
  int n = s.dag.cost.size(), T = s.bwdReads.size();
  int64_t best = -1;
  uint32_t plans = 1u << (n * (T + 1));
  for (uint32_t code = 0; code < plans; ++code) {
    uint32_t kept = code & ((1u << n) - 1);
    // Copies: (value, born at, last read); the original is born at -1.
    struct Copy {
      int value, born, last;
    };
    std::vector<Copy> copies;
    // The constant (value n) is always there, never cloned.
    std::vector<int> latest(n + 1, -1);
    latest[n] = copies.size();
    copies.push_back({n, -1, -1});
    for (int v = 0; v < n; ++v)
      if (kept >> v & 1) {
        latest[v] = copies.size();
        copies.push_back({v, -1, -1});
      }
    bool valid = true;
    int64_t cost = 0;
    auto read = [&](int v, int at) {
      if (latest[v] < 0)
        return false;
      copies[latest[v]].last = std::max(copies[latest[v]].last, at);
      return true;
    };
    for (int q = 0; q < T && valid; ++q) {
      uint32_t clones = code >> (n * (q + 1)) & ((1u << n) - 1);
      for (int i = 0; i < n && valid; ++i) {
        if (!(clones >> i & 1))
          continue;
        for (int u : s.dag.reads[i])
          valid &= read(u, q);
        cost += s.dag.cost[i];
        latest[i] = copies.size();
        copies.push_back({i, q, q});
      }
      for (int v : s.bwdReads[q])
        valid &= read(v, q);
    }
    if (!valid || (best >= 0 && cost >= best))
      continue;
    bool fits = true;
    for (int q = 0; q < T && fits; ++q) {
      int64_t live = s.floor[q];
      for (const Copy &c : copies)
        if (c.born <= q && c.last >= q)
          live += s.dag.bytes[c.value];
      fits = live <= budget;
    }
    if (fits)
      best = cost;
  }
  return best;
}

/// The largest point bound over the backward ops, as solvePeakBound takes
/// it: at t, the values read at or after t, the budget less the floor at t.
double peakBound(const AbstractStep &s, int64_t budget) {
  double bound = 0.0;
  int T = s.bwdReads.size();
  for (int t = 0; t < T; ++t) {
    LivePointProblem p = s.dag;
    for (int q = t; q < T; ++q)
      for (int v : s.bwdReads[q])
        p.demand.push_back(v);
    p.capacity = budget - s.floor[t];
    bound = std::max(bound, livePointBound(p));
  }
  return bound;
}

/// A random abstract step of n forward ops and T backward ops, and a budget
/// from nothing to all its bytes and more.
AbstractStep randomStep(std::mt19937 &rng, int n, int T, int64_t &budget) {
  AbstractStep s;
  s.dag = randomDag(rng, n);
  std::uniform_int_distribution<int> coin(0, 2), floorBytes(0, 8);
  for (int q = 0; q < T; ++q) {
    std::vector<int> reads;
    for (int v = 0; v <= n; ++v)
      if (coin(rng) == 0)
        reads.push_back(v);
    s.bwdReads.push_back(reads);
    s.floor.push_back(floorBytes(rng));
  }
  int64_t all = 0;
  for (int64_t b : s.dag.bytes)
    all += b;
  budget = std::uniform_int_distribution<int64_t>(0, all + 8)(rng);
  return s;
}

TEST(RematPeakBound, PlansAgainstBruteForce) {
  std::mt19937 rng(7);
  int fitting = 0, positive = 0;
  for (int trial = 0; trial < 240; ++trial) {
    int n = 2 + trial % 3, T = 3;
    int64_t budget = 0;
    AbstractStep s = randomStep(rng, n, T, budget);
    int64_t opt = bruteForcePlans(s, budget);
    double bound = peakBound(s, budget);
    if (opt < 0)
      continue; // no plan fits: any bound is valid
    ++fitting;
    positive += bound > 0.0;
    EXPECT_FALSE(std::isinf(bound)) << "trial " << trial;
    EXPECT_LE(bound, static_cast<double>(opt)) << "trial " << trial;
  }
  EXPECT_GT(fitting, 80);
  EXPECT_GT(positive, 10);
}

/// The abstract step as the staged MILP sees it: the boundary at node 0,
/// backward op q at node q + 1, every value keepable (the brute force keeps
/// any), the floor as what every plan holds; bytes in units of the arena's
/// alignment, as the MILP counts them.
PeakModel stagedModel(const AbstractStep &s, int64_t budget) {
  PeakModel m;
  m.ops = s.dag;
  for (int64_t &b : m.ops.bytes)
    b *= kAlignment;
  int n = s.dag.cost.size(), T = s.bwdReads.size();
  for (int i = 0; i < n; ++i)
    m.nodeOfOp.push_back(i);
  m.readBy.resize(s.dag.bytes.size());
  for (int q = 0; q < T; ++q)
    for (int v : s.bwdReads[q])
      if (m.readBy[v].empty() || m.readBy[v].back() != q + 1)
        m.readBy[v].push_back(q + 1);
  for (const std::vector<int> &reads : m.readBy)
    m.lastRead.push_back(reads.empty() ? -1 : reads.back());
  m.keepable.assign(s.dag.bytes.size(), 1);
  for (int d : s.dag.def)
    m.madeAt.push_back(d < 0 ? -1 : 0); // all before the backward pass
  m.lastForwardRead.assign(s.dag.bytes.size(), -1);
  m.held.assign(T + 1, 0);
  for (int q = 0; q < T; ++q)
    m.held[q + 1] = s.floor[q] * kAlignment;
  m.boundary = 0;
  m.arenaBudget = budget * kAlignment;
  return m;
}

// The staged MILP against every plan: with any set of time points its
// bound is at most the cheapest plan that fits; with every backward op a
// time point it is that plan's cost in most instances (it leaves out only
// the transients of a clone chain, read by clones before the same op), and
// its schedule is a plan of the brute force's kind that fits the points.
TEST(RematPeakBound, StagedAgainstBruteForce) {
  std::mt19937 rng(13);
  int fitting = 0, exact = 0;
  for (int trial = 0; trial < 240; ++trial) {
    int n = 2 + trial % 3, T = 3;
    int64_t budget = 0;
    AbstractStep s = randomStep(rng, n, T, budget);
    int64_t opt = bruteForcePlans(s, budget);
    PeakModel m = stagedModel(s, budget);
    std::vector<int> every{0};
    for (int q = 0; q < T; ++q)
      every.push_back(q + 1);
    StagedBound full = solveStagedBound(m, every, {}, 60.0, 0.0);
    ASSERT_NE(full.status, "error") << full.message;
    if (opt < 0) {
      // No plan fits; the MILP may still find a schedule that fits its
      // points (it leaves transients out), never a cheaper one than a plan.
      continue;
    }
    ++fitting;
    ASSERT_FALSE(full.infeasible) << "trial " << trial;
    EXPECT_LE(full.bound, static_cast<double>(opt) + 1e-6) << "trial " << trial;
    exact += std::fabs(full.bound - static_cast<double>(opt)) < 1e-6;
    // Any subset of the points bounds every plan as well.
    for (int mask = 0; mask < (1 << T); ++mask) {
      std::vector<int> times{0};
      for (int q = 0; q < T; ++q)
        if (mask >> q & 1)
          times.push_back(q + 1);
      StagedBound part = solveStagedBound(m, times, {}, 60.0, 0.0);
      ASSERT_FALSE(part.infeasible) << "trial " << trial << " mask " << mask;
      EXPECT_LE(part.bound, full.bound + 1e-6) << "trial " << trial;
    }
  }
  EXPECT_GT(fitting, 80);
  EXPECT_GT(exact, fitting * 3 / 4);
}

// Where no single point sees it: A (5 FLOPs) and B (7), 10 bytes each, 10
// bytes held at the first two backward ops and room for 20. The first
// reads B, the second A, the third both: A cannot be live at the first op
// nor B at the second, so A is recomputed after the first and B after the
// second, 12 in all. Each point alone asks for one of them (7 at most).
TEST(RematPeakBound, StagedSeesPointsTogether) {
  AbstractStep s;
  s.dag.cost = {5, 7};
  s.dag.bytes = {10, 10, 0};
  s.dag.def = {0, 1, -1};
  s.dag.reads = {{}, {}};
  s.bwdReads = {{1}, {0}, {0, 1}};
  s.floor = {10, 10, 0};
  int64_t budget = 20;
  EXPECT_EQ(bruteForcePlans(s, budget), 12);
  EXPECT_LE(peakBound(s, budget), 7.0);
  StagedBound staged =
      solveStagedBound(stagedModel(s, budget), {0, 1, 2, 3}, {}, 60.0, 0.0);
  EXPECT_EQ(staged.status, "optimal");
  EXPECT_NEAR(staged.bound, 12.0, 1e-5);
  // The schedule: A in the first stage, B in the second.
  ASSERT_EQ(staged.cloned.size(), 4u);
  EXPECT_EQ(staged.cloned[1], llvm::SmallVector<int>{0});
  EXPECT_EQ(staged.cloned[2], llvm::SmallVector<int>{1});
}

// Gradient accumulation: a later micro-batch's forward runs inside the
// backward pass. A (op 0, 5 FLOPs) is made before it; C (op 1, 9) at node
// 2, read by the backward ops at 2 and 3; D (op 2, 1) at node 2 too, read
// by a forward op after node 2 and by no backward op. 10 bytes each, 10
// held at node 1, room for 20. At node 1 C and D do not exist yet: A fits
// beside what is held. At node 2 C and D's originals are live in every
// plan (D for its forward reader), so A cannot be: it is recomputed after
// node 2, 5 in all. Counting C at node 1 would ask for more than any plan
// pays; leaving D out would ask for nothing.
TEST(RematPeakBound, LaterMicroBatch) {
  AbstractStep s;
  s.dag.cost = {5, 9, 1};
  s.dag.bytes = {10, 10, 10, 0};
  s.dag.def = {0, 1, 2, -1};
  s.dag.reads = {{}, {}, {}};
  s.bwdReads = {{0}, {1}, {0, 1}};
  s.floor = {10, 0, 0};
  int64_t budget = 20;
  PeakModel m = stagedModel(s, budget);
  m.madeAt = {0, 2, 2, -1};
  m.lastForwardRead = {-1, -1, 3, -1};
  StagedBound staged = solveStagedBound(m, {0, 1, 2, 3}, {}, 60.0, 0.0);
  EXPECT_EQ(staged.status, "optimal");
  EXPECT_NEAR(staged.bound, 5.0, 1e-5);
  ASSERT_EQ(staged.cloned.size(), 4u);
  EXPECT_TRUE(staged.cloned[0].empty());
  EXPECT_TRUE(staged.cloned[1].empty());
  EXPECT_EQ(staged.cloned[2], llvm::SmallVector<int>{0});
  // The points one at a time: node 2 alone asks for A's recompute.
  m.points = {{1, 1}, {2, 1}, {3, 1}};
  PeakBound peak = solvePeakBound(m, 60.0);
  EXPECT_FALSE(peak.infeasible);
  EXPECT_NEAR(peak.bound, 5.0, 1e-5);
  EXPECT_EQ(peak.point, 2);
}

} // namespace
