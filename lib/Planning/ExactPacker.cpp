//===- ExactPacker.cpp - The `exact` strategy ------------------------------===//
//
// Optimization on top of the canonical decision search: start from `best`'s
// packing (an upper bound) and the lower bound, then ask the search whether
// smaller capacities are feasible, lower bound first (most real instances
// pack perfectly, and the search's inference is strongest when there is no
// slack), then by bisection. A packing found lowers the upper bound to its
// own arena; a proof of infeasibility raises the lower bound. Optimality is
// proven when the two meet with every raise proven; a decision that runs out
// of its share of the time limit only moves the bisection on, and the result
// then says it is the best found, not a proven optimum.
//
//===----------------------------------------------------------------------===//

#include "PackerInternal.h"

#include <numeric>

using namespace memwall::planning;
using namespace memwall::planning::detail;

int64_t detail::packExact(const Instance &inst, double timeLimitSeconds,
                          std::vector<int64_t> &offsets, ExactStats &stats) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(
                             std::max(timeLimitSeconds, 0.0)));
  int64_t hi = packBest(inst, offsets);
  // Every canonical top is a sum of sizes, so only multiples of their gcd
  // are worth trying as capacities, and the lower bound rounds up to one.
  int64_t grain = 0;
  for (int64_t size : inst.size)
    grain = std::gcd(grain, size);
  grain = std::max<int64_t>(grain, 1);
  int64_t lo = (inst.lowerBound + grain - 1) / grain * grain;
  bool proven = true;
  bool first = true;
  std::vector<int64_t> candidate;
  SearchStats searchStats;
  while (lo < hi) {
    Clock::time_point now = Clock::now();
    if (now >= deadline)
      break;
    int64_t target = first ? lo : lo + (hi - lo) / grain / 2 * grain;
    // The first decision (at the lower bound) gets 60% of the time, later
    // ones a third of what is left, the last possible one everything.
    Clock::duration left = deadline - now;
    Clock::duration slice = target + grain >= hi ? left
                            : first             ? left * 6 / 10
                                                : left / 3;
    first = false;
    SearchLimits limits;
    limits.hasDeadline = true;
    limits.deadline = now + slice;
    SearchOutcome outcome =
        decideCapacity(inst, target, limits, candidate, searchStats);
    if (outcome == SearchOutcome::Found) {
      offsets = candidate;
      hi = arenaOf(inst, offsets);
      continue;
    }
    if (outcome == SearchOutcome::OutOfBudget)
      proven = false;
    lo = target + grain;
  }
  stats.provenOptimal = proven && lo >= hi;
  stats.timedOut = !stats.provenOptimal && Clock::now() >= deadline;
  return hi;
}
