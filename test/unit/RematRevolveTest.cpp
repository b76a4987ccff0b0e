//===- RematRevolveTest.cpp - --mw-remat's binomial checkpointing ---------===//
//
// revolveSchedule (RematRevolve.h) against what a reversal must satisfy:
// every stage's sweep starts from a block input that exists then (kept from
// the forward pass, or recomputed by an earlier sweep that passed it, and
// not yet overwritten by nothing: revolve never drops a snapshot it still
// needs), at most snapshots + 1 such inputs are held at once, the
// recompute is the dynamic programme's minimum, and that minimum is
// Griewank's binomial bound.
//
//===----------------------------------------------------------------------===//

#include "RematRevolve.h"

#include <gtest/gtest.h>

#include <set>

using namespace mlir::mw::remat;

namespace {

/// C(n, k) capped at `cap` (the bounds below only compare with L).
int64_t binomial(int64_t n, int64_t k, int64_t cap) {
  double r = 1;
  for (int64_t i = 1; i <= k; ++i) {
    r = r * (n - k + i) / i;
    if (r > cap)
      return cap + 1;
  }
  return static_cast<int64_t>(r + 0.5);
}

/// Whether the sweep of block j's stage passes block input p (recomputes
/// it: p in origin + 1 .. j).
bool passes(const RevolveSchedule &s, int64_t j, int64_t p) {
  return s.origin[j] >= 0 && s.origin[j] < p && p <= j;
}

/// Checks the schedule by replaying it as planStaged runs it (a stage
/// reads the latest copy of a block input: the one the latest sweep that
/// passed it made, else the forward pass's); returns the most block inputs
/// held at once.
int64_t replay(const RevolveSchedule &s) {
  int64_t L = s.links;
  std::vector<char> exists(s.keptInput.begin(), s.keptInput.end());
  int64_t most = 0;
  for (int64_t j = L - 1; j >= 0; --j) {
    int64_t o = s.origin[j];
    if (o < 0) {
      EXPECT_EQ(j, L - 1) << "only the last block reads the forward's internals";
      EXPECT_TRUE(s.lastFromForward);
    } else {
      EXPECT_LE(o, j);
      EXPECT_TRUE(exists[o]) << "block " << j << " sweeps from " << o
                             << ", which does not exist then";
      for (int64_t p = o + 1; p <= j; ++p)
        exists[p] = 1;
    }
    // Held after this sweep: the copies some stage from this one on starts
    // from before another sweep makes a new copy.
    int64_t held = 0;
    for (int64_t p = 0; p < L; ++p) {
      if (!exists[p])
        continue;
      for (int64_t k = j; k >= 0; --k) {
        if (k < j && passes(s, k, p))
          break; // a new copy from here on
        if (s.origin[k] == p) {
          ++held;
          break;
        }
      }
    }
    most = std::max(most, held);
  }
  return most;
}

TEST(RematRevolve, SchedulesReverseWithinTheSnapshots) {
  for (int64_t L : {1, 2, 3, 5, 8, 13, 40, 97}) {
    for (int64_t c : {0, 1, 2, 3, 5, 8}) {
      for (bool last : {false, true}) {
        RevolveSchedule s = revolveSchedule(L, c, last);
        ASSERT_EQ(static_cast<int64_t>(s.origin.size()), L);
        EXPECT_LE(replay(s), std::min(c, L - 1) + 1)
            << "L=" << L << " c=" << c << " last=" << last;
        int64_t sum = 0;
        for (int64_t j = 0; j < L; ++j)
          if (s.origin[j] >= 0)
            sum += j - s.origin[j] + 1;
        // The schedule recomputes what the programme says is least.
        EXPECT_EQ(sum, s.recomputedLinks);
      }
    }
  }
}

TEST(RematRevolve, NoSnapshotsRecomputesFromTheStart) {
  // c = 0: block j is recomputed with its predecessors from block 0's input.
  RevolveSchedule s = revolveSchedule(5, 0, false);
  EXPECT_EQ(s.recomputedLinks, 5 + 4 * 5 / 2); // 5 for the last, 1+..+4
  for (int64_t j = 0; j < 5; ++j)
    EXPECT_EQ(s.origin[j], 0);
  RevolveSchedule t = revolveSchedule(5, 0, true);
  EXPECT_EQ(t.recomputedLinks, 4 * 5 / 2);
  EXPECT_EQ(t.origin[4], -1);
}

TEST(RematRevolve, EnoughSnapshotsRecomputeEachBlockOnce) {
  // L - 1 snapshots: every input is kept by the forward pass, each block
  // recomputed once (its internals), the last not at all with
  // lastFromForward.
  for (int64_t L : {2, 6, 31}) {
    EXPECT_EQ(revolveSchedule(L, L - 1, false).recomputedLinks, L);
    EXPECT_EQ(revolveSchedule(L, L - 1, true).recomputedLinks, L - 1);
    EXPECT_EQ(revolveSchedule(L, 1000, true).recomputedLinks, L - 1);
  }
}

TEST(RematRevolve, MeetsTheBinomialBound) {
  // With c snapshots each block is recomputed at most t + 1 times (t
  // repetitions of its forward, once more for its internals), where t is
  // the least with C(c + t, t) >= L; and more snapshots never cost more.
  for (int64_t L : {10, 64, 200, 388}) {
    int64_t previous = INT64_MAX;
    for (int64_t c = 1; c <= 16; ++c) {
      int64_t t = 0;
      while (binomial(c + t, t, L) < L)
        ++t;
      RevolveSchedule s = revolveSchedule(L, c, false);
      EXPECT_LE(s.recomputedLinks, (t + 1) * L) << "L=" << L << " c=" << c;
      EXPECT_LE(s.recomputedLinks, previous);
      previous = s.recomputedLinks;
    }
  }
  // 388 links with 8 snapshots: C(12, 4) = 495 >= 388, so at most five
  // recomputes of a block.
  EXPECT_LE(revolveSchedule(388, 8, true).recomputedLinks, 5 * 388);
}

TEST(RematRevolve, IsDeterministic) {
  RevolveSchedule a = revolveSchedule(97, 5, true);
  RevolveSchedule b = revolveSchedule(97, 5, true);
  EXPECT_EQ(a.origin, b.origin);
  EXPECT_EQ(a.keptInput, b.keptInput);
}

} // namespace
