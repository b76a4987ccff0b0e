//===- PackerInternal.h - Shared machinery of the packer --------*- C++ -*-===//
//
// Private to lib/Planning. Every strategy works on an Instance: the buffers
// with a non-zero size, their sizes in units of the alignment (so any offset
// the algorithms produce is aligned by construction), their lifetimes mapped
// to dense time indices, the lower bound, and the time-overlap ("conflict")
// graph in CSR form, which the greedy placers and the canonical search both
// walk. Zero-size buffers conflict with nothing and sit at offset 0.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_LIB_PLANNING_PACKERINTERNAL_H
#define MEMWALL_LIB_PLANNING_PACKERINTERNAL_H

#include "memwall/Planning/Packer.h"

#include <chrono>
#include <memory>
#include <cstdint>
#include <string>
#include <vector>

namespace memwall::planning::detail {

/// The largest total of aligned sizes we accept: every arena any strategy
/// builds is at most this total, so int64 arithmetic never overflows.
constexpr uint64_t kMaxTotalBytes = uint64_t(1) << 62;

struct Instance {
  /// Index in the caller's buffer list of each packable buffer.
  std::vector<uint32_t> origIndex;
  /// Aligned size in units of the alignment; always > 0.
  std::vector<int64_t> size;
  /// Lifetime [start, end) over dense time indices 0..numTimes-1.
  std::vector<int32_t> start, end;
  int32_t numTimes = 0;
  /// end - start in the caller's time, for orders that weigh lifetimes.
  std::vector<int64_t> length;
  /// Max over time of live units.
  int64_t lowerBound = 0;
  /// Live units at each time index.
  std::vector<int64_t> load;
  /// Conflicts of buffer i: adj[adjBegin[i] .. adjBegin[i+1]), built only
  /// when `hasConflicts` (the canonical search and the small-instance
  /// orders need them; on large dense instances they would take gigabytes
  /// and the greedy placers use a SpanTree instead).
  bool hasConflicts = false;
  std::vector<int64_t> adjBegin;
  std::vector<int32_t> adj;

  int32_t numBuffers() const { return int32_t(size.size()); }
  int64_t degree(int32_t i) const { return adjBegin[i + 1] - adjBegin[i]; }
  const int32_t *conflictsBegin(int32_t i) const {
    return adj.data() + adjBegin[i];
  }
  const int32_t *conflictsEnd(int32_t i) const {
    return adj.data() + adjBegin[i + 1];
  }
};

/// A sort key: `first`, then `second`, both unsigned.
struct SortKey {
  uint64_t first = 0, second = 0;
};

/// The indices 0..keys.size()-1 sorted by (first, second, index): a total
/// order, so the same keys always give the same order.
std::vector<int32_t> sortedByKey(const std::vector<SortKey> &keys);

/// When the conflict graph is built: always for `exact` (its search walks
/// it) and for `best` up to the search's size; otherwise only while it is
/// small (at most this many entries per buffer), where scanning a list beats
/// a tree query. Either placer gives the same plans.
constexpr int64_t kMaxConflictsPerBuffer = 256;
/// Above this many buffers a single search dive (quadratic) costs more than
/// `best`'s whole budget, so its search is skipped and its portfolio shrinks.
constexpr int32_t kMaxSearchBuffers = 4096;

enum class Conflicts {
  /// Build the conflict graph.
  Always,
  /// Build it only when it has at most kMaxConflictsPerBuffer entries per
  /// buffer on average.
  IfSparse,
  /// Never (tests of the span tree).
  Never,
};

/// Validates `buffers` and builds the instance. Returns an error message, or
/// an empty string.
std::string buildInstance(const std::vector<PackBuffer> &buffers,
                          uint64_t alignment, Instance &inst,
                          Conflicts conflicts = Conflicts::Always);

/// Max over placed buffers of offset + size (units).
int64_t arenaOf(const Instance &inst, const std::vector<int64_t> &offsets);

//===----------------------------------------------------------------------===//
// Greedy placement
//===----------------------------------------------------------------------===//

enum class Fit {
  /// TFLite's ArenaPlanner (SimpleMemoryArena::Allocate): the smallest gap
  /// between time-overlapping placed buffers that holds the buffer (lowest
  /// such gap on ties); above them all when none does.
  Best,
  /// The lowest gap that holds the buffer.
  First,
  /// XLA's GlobalDecreasingSizeBestFitHeap::FindChunkCandidate: as Best, but
  /// the free chunk between the overlapping buffers' top and the current
  /// heap top is a candidate too (considered last, so it wins only when
  /// strictly smaller).
  BestWithTop,
};

/// A half-open address range [lo, hi) in units.
struct Span {
  int64_t lo, hi;
};

/// Placed buffers' address ranges indexed by time, for the gap search on
/// instances without a conflict graph (SpanTree.cpp explains the layout).
class SpanTree {
public:
  explicit SpanTree(const Instance &inst);
  /// Forgets every placed buffer.
  void clear();
  /// Records buffer b as placed at `offset`.
  void insert(int32_t b, int64_t offset);
  /// The union of the address ranges of the placed buffers overlapping
  /// buffer b in time, as sorted, disjoint, non-touching spans.
  void collect(int32_t b, std::vector<Span> &out);
  /// Spans and records visited: the effort counter.
  int64_t work = 0;

private:
  struct Record {
    int32_t start, end;
    int64_t lo, hi;
  };
  /// How a lifetime [s, e) covers the buckets: whole ones [wholeLo,
  /// wholeHi), and at most two covered in part (-1: none).
  struct Cover {
    int32_t wholeLo = 0, wholeHi = 0;
    int32_t partialFirst = -1, partialLast = -1;
  };
  Cover coverOf(int32_t s, int32_t e) const;
  /// A fresh stamp, so that each operation visits a node at most once.
  void nextEpoch();
  template <typename Partial, typename Whole>
  void forEachPiece(int32_t s, int32_t e, Partial partial, Whole whole) const;
  static void addSpanTo(std::vector<Span> &spans, int64_t lo, int64_t hi,
                        int64_t &work);
  void addSpan(std::vector<Span> &spans, int64_t lo, int64_t hi) {
    addSpanTo(spans, lo, hi, work);
  }

  const Instance &inst;
  int32_t leaves = 1;
  std::vector<std::vector<Span>> own, sub;
  std::vector<std::vector<Record>> records;
  std::vector<uint32_t> stamp;
  uint32_t epoch = 0;
  /// Scratch of collect.
  std::vector<Span> loose, scratch;
};

/// Places buffers one at a time in a given order. Reusable across orders so
/// that local search does not reallocate.
class GreedyPlacer {
public:
  explicit GreedyPlacer(const Instance &inst);

  /// Places order[from..] given that order[..from) already sit at `offsets`
  /// (all other entries of `offsets` must be -1). Stops early, returning a
  /// value > cutoff, once the arena exceeds `cutoff`. Returns the arena.
  int64_t run(const std::vector<int32_t> &order, size_t from, Fit fit,
              std::vector<int64_t> &offsets, int64_t cutoff = INT64_MAX);

  /// Conflict entries scanned so far: the effort counter `best` budgets on.
  int64_t work = 0;

private:
  struct Range {
    int64_t lo, hi;
  };
  /// The offset `fit` picks for buffer `b` given the placed buffers and the
  /// current arena top, from `packed` (every placed range below 2^32
  /// units), from `offsets`, or (no conflict graph) from the span tree.
  int64_t findOffsetNarrow(int32_t b, Fit fit, int64_t arena);
  int64_t findOffsetWide(int32_t b, Fit fit, int64_t arena,
                         const std::vector<int64_t> &offsets);
  int64_t findOffsetTree(int32_t b, Fit fit, int64_t arena);

  const Instance &inst;
  /// Only without a conflict graph.
  std::unique_ptr<SpanTree> tree;
  std::vector<Span> spans;
  /// Per buffer, its placed range as offset << 32 | top, or all ones when
  /// unplaced; meaningful only while the arena is below 2^32 units.
  std::vector<uint64_t> packed;
  /// Scratch for the placed neighbours' ranges, sized for the largest
  /// degree once so that no placement allocates.
  std::vector<uint64_t> keys, scratch;
  std::vector<Range> ranges;
};

/// The orders of the baselines and of `best`'s portfolio. Each is a total
/// order (ties broken by index), hence deterministic.
std::vector<int32_t> orderBySize(const Instance &inst);        // TFLite
std::vector<int32_t> orderByBreadth(const Instance &inst);     // TFLite
std::vector<int32_t> orderBySpatial(const Instance &inst);     // XLA
std::vector<int32_t> orderByTemporal(const Instance &inst);    // XLA
std::vector<int32_t> orderByStart(const Instance &inst);
std::vector<int32_t> orderByConflictBytes(const Instance &inst);

//===----------------------------------------------------------------------===//
// Canonical search (MiniMalloc)
//===----------------------------------------------------------------------===//

enum class SearchOutcome { Found, Infeasible, OutOfBudget };

/// The number of static preorders the search knows (MiniMalloc's WAT, TAW,
/// TWA).
constexpr int kNumPreorders = 3;

struct SearchLimits {
  /// Placements tried before giving up.
  int64_t maxNodes = INT64_MAX;
  /// Effort budget in work units (list and section entries visited, a proxy
  /// for time that does not depend on the machine, so results are
  /// deterministic).
  int64_t maxWork = INT64_MAX;
  /// Wall-clock deadline; only `exact` sets one.
  bool hasDeadline = false;
  std::chrono::steady_clock::time_point deadline;
};

struct SearchStats {
  int64_t nodes = 0;
  int64_t work = 0;
};

/// Decides whether every buffer fits in [0, capacity) by depth-first search
/// over canonical solutions with preorder `heuristic` (0..kNumPreorders-1);
/// on Found, `offsets` holds a packing. Effort is added to `stats`.
SearchOutcome searchCanonical(const Instance &inst, int64_t capacity,
                              int heuristic, const SearchLimits &limits,
                              std::vector<int64_t> &offsets,
                              SearchStats &stats);

/// searchCanonical over all preorders in rounds of doubling budgets, until
/// one finds a packing or proves there is none, or `limits` run out.
SearchOutcome decideCapacity(const Instance &inst, int64_t capacity,
                             const SearchLimits &limits,
                             std::vector<int64_t> &offsets,
                             SearchStats &stats);

//===----------------------------------------------------------------------===//
// Strategies on an instance (offsets in units, -1 never returned)
//===----------------------------------------------------------------------===//

/// Work units per second of `best`'s improvement phases on the project's
/// 2-core machine (the search and re-insertion both count list entries
/// visited), the rate PackOptions::effortSeconds is converted with.
constexpr int64_t kWorkUnitsPerSecond = 1'000'000'000;

/// `best`: returns the arena in units. `extraWork` raises the improvement
/// phases' budget to at least that many work units.
int64_t packBest(const Instance &inst, std::vector<int64_t> &offsets,
                 int64_t extraWork = 0);

struct ExactStats {
  bool provenOptimal = false;
  bool timedOut = false;
};
/// `exact`: returns the arena in units.
int64_t packExact(const Instance &inst, double timeLimitSeconds,
                  std::vector<int64_t> &offsets, ExactStats &stats);

} // namespace memwall::planning::detail

#endif // MEMWALL_LIB_PLANNING_PACKERINTERNAL_H
