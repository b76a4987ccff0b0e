//===- CanonicalSearch.cpp - Depth-first search over canonical packings --===//
//
// The decision procedure behind `exact` (and the bounded repair step of
// `best`): does every buffer fit below a capacity? It follows MiniMalloc
// (Moffitt, ASPLOS 2023). Any packing can be pushed down until each buffer
// rests on one it overlaps in time (or on 0); listing buffers by (offset,
// preorder rank) then gives a sequence in which each buffer sits exactly at
// the highest top of the earlier buffers it overlaps. So the search only ever
// places an unplaced buffer at that "minimum offset", in non-decreasing
// (offset, rank) order, which removes all permutation symmetry. Pruning:
//  - dominance: a buffer is never placed at or above the lowest top any
//    unplaced buffer could reach, since that buffer then fits underneath and
//    a packing with smaller offset sum exists;
//  - section inference: the buffers alive at a "section" (a maximal set of
//    buffers live together) stack, so floor + unplaced bytes there must fit;
//    the floor is raised to the lowest minimum offset of its unplaced
//    buffers and to the offset of the last placement (offsets only grow);
//  - decomposition: sections no buffer spans across are solved separately.
// Within a partition the search is iterative with undo logs, so deep
// instances do not recurse; decomposition recurses, with its depth capped.
//
//===----------------------------------------------------------------------===//

#include "PackerInternal.h"

#include <algorithm>
#include <numeric>

using namespace memwall::planning;
using namespace memwall::planning::detail;

namespace {

/// Entries of section member lists beyond which the search declines to run:
/// the lists would cost more memory than a search of that size can use.
constexpr int64_t kMaxSectionEntries = int64_t(1) << 26;
/// Nesting of decomposed sub-searches (each a C++ call frame).
constexpr int kMaxDecompositionDepth = 2000;

struct Change {
  int32_t index;
  int64_t oldValue;
};

/// A stack of changes to undo. Appends are plain stores into space reserved
/// before each loop that logs: std::vector::push_back was not inlined in
/// those loops and cost about a sixth of the search.
class UndoLog {
public:
  void reserve(size_t more) {
    if (entries.size() < used + more)
      entries.resize(std::max(entries.size() * 2, used + more));
  }
  void push(int32_t index, int64_t oldValue) {
    entries[used++] = {index, oldValue};
  }
  size_t size() const { return used; }
  /// Pops the changes made since `mark`, newest first, into `values`.
  void undoTo(size_t mark, std::vector<int64_t> &values) {
    for (; used > mark; --used)
      values[entries[used - 1].index] = entries[used - 1].oldValue;
  }

private:
  std::vector<Change> entries;
  size_t used = 0;
};

class CanonicalSearcher {
public:
  CanonicalSearcher(const Instance &inst, int64_t capacity, int heuristic,
                    const SearchLimits &limits, SearchStats &stats)
      : inst(inst), capacity(capacity), heuristic(heuristic), limits(limits),
        stats(stats) {}

  SearchOutcome run(std::vector<int64_t> &offsets);

private:
  struct Frame {
    int32_t placed = -1;
    int32_t removedPos = 0;
    int64_t lastOffset = 0;
    int32_t lastRank = -1;
    int64_t minHeight = 0;
    size_t offsetMark = 0, floorMark = 0;
    /// No unplaced buffer overlaps `placed` in time.
    bool hatless = false;
  };

  bool buildSections();
  void rankBuffers(std::vector<int32_t> &buffers);
  SearchOutcome solveAll();
  SearchOutcome solvePartition(int32_t secBegin, int32_t secEnd,
                               std::vector<int32_t> list, int depth);
  void place(int32_t b, Frame &frame);
  void unplace(Frame &frame);
  bool check(int64_t offset, int32_t secBegin, int32_t secEnd);
  bool outOfBudget();

  const Instance &inst;
  const int64_t capacity;
  const int heuristic;
  const SearchLimits &limits;
  SearchStats &stats;

  // Sections: buffer b spans sections [secLo[b], secHi[b]).
  int32_t numSections = 0;
  std::vector<int32_t> secLo, secHi;
  /// Members of section s: members[memberBegin[s] ..), the unplaced ones
  /// first (numUnplacedIn[s] of them), so inference scans skip placed ones.
  std::vector<int64_t> memberBegin;
  std::vector<int32_t> members;
  std::vector<int32_t> numUnplacedIn;
  /// Where buffer b sits in section s's members: slotOf[slotBase[b] + s -
  /// secLo[b]].
  std::vector<int64_t> slotBase;
  std::vector<int32_t> slotOf;

  std::vector<int32_t> rank; // Preorder position within its partition.
  std::vector<int64_t> maxTotal;
  std::vector<int64_t> offset, minOffset;
  std::vector<int64_t> floor, total;
  /// Unplaced buffers of the partition being searched, and their positions.
  std::vector<int32_t> *unplaced = nullptr;
  std::vector<int32_t> posOf;
  /// Unplaced buffers spanning sections s and s+1.
  std::vector<int32_t> cuts;
  std::vector<int32_t> cutpoints;
  std::vector<int64_t> result;
  UndoLog offsetLog, floorLog;
  std::vector<int32_t> spanDelta;
  std::vector<int32_t> affected;
  /// Per section, a member last seen unplaced at or below the floor: a hint
  /// that spares most scans, checked before use, so never undone.
  std::vector<int32_t> witness;
};

} // namespace

bool CanonicalSearcher::buildSections() {
  int32_t n = inst.numBuffers();
  // A time whose successor ends some buffer holds a maximal live set; every
  // other time's live set is contained in a later kept one, so only kept
  // times need constraints. Each buffer's last time is kept.
  std::vector<char> kept(size_t(inst.numTimes) + 1, 0);
  for (int32_t b = 0; b < n; ++b)
    kept[inst.end[b] - 1] = 1;
  std::vector<int32_t> keptBefore(size_t(inst.numTimes) + 1, 0);
  for (int32_t t = 0; t < inst.numTimes; ++t)
    keptBefore[t + 1] = keptBefore[t] + kept[t];
  numSections = keptBefore[inst.numTimes];
  secLo.resize(n);
  secHi.resize(n);
  int64_t entries = 0;
  std::vector<int64_t> count(size_t(numSections) + 1, 0);
  for (int32_t b = 0; b < n; ++b) {
    secLo[b] = keptBefore[inst.start[b]];
    secHi[b] = keptBefore[inst.end[b]];
    entries += secHi[b] - secLo[b];
    if (entries > kMaxSectionEntries)
      return false;
    for (int32_t s = secLo[b]; s < secHi[b]; ++s)
      ++count[s + 1];
  }
  memberBegin.assign(size_t(numSections) + 1, 0);
  for (int32_t s = 0; s < numSections; ++s)
    memberBegin[s + 1] = memberBegin[s] + count[s + 1];
  members.assign(size_t(entries), 0);
  std::vector<int64_t> fill(memberBegin.begin(), memberBegin.end() - 1);
  total.assign(numSections, 0);
  slotBase.assign(n, 0);
  slotOf.assign(size_t(entries), 0);
  numUnplacedIn.assign(numSections, 0);
  int64_t base = 0;
  for (int32_t b = 0; b < n; ++b) {
    slotBase[b] = base;
    for (int32_t s = secLo[b]; s < secHi[b]; ++s) {
      slotOf[base + s - secLo[b]] = int32_t(fill[s] - memberBegin[s]);
      members[fill[s]++] = b;
      total[s] += inst.size[b];
      ++numUnplacedIn[s];
    }
    base += secHi[b] - secLo[b];
  }
  return true;
}

void CanonicalSearcher::rankBuffers(std::vector<int32_t> &buffers) {
  // MiniMalloc's three preorders: W (lifetime width), A (area) and T (the
  // largest unplaced total of a section the buffer spans), all descending,
  // in the orders WAT, TAW and TWA. Like MiniMalloc, each decomposed piece
  // is ranked afresh, since T changes as buffers are placed.
  static const char *const kKeys[] = {"WAT", "TAW", "TWA"};
  const char *keys = kKeys[heuristic % 3];
  for (int32_t b : buffers) {
    maxTotal[b] = 0;
    for (int32_t s = secLo[b]; s < secHi[b]; ++s)
      maxTotal[b] = std::max(maxTotal[b], total[s]);
  }
  auto area = [&](int32_t b) {
    return (unsigned __int128)inst.size[b] *
           (unsigned __int128)(uint64_t)inst.length[b];
  };
  std::sort(buffers.begin(), buffers.end(), [&](int32_t a, int32_t b) {
    for (const char *k = keys; *k; ++k) {
      if (*k == 'W' && inst.length[a] != inst.length[b])
        return inst.length[a] > inst.length[b];
      if (*k == 'A' && area(a) != area(b))
        return area(a) > area(b);
      if (*k == 'T' && maxTotal[a] != maxTotal[b])
        return maxTotal[a] > maxTotal[b];
    }
    return a < b;
  });
  for (size_t i = 0; i < buffers.size(); ++i)
    rank[buffers[i]] = int32_t(i);
}

SearchOutcome CanonicalSearcher::run(std::vector<int64_t> &offsets) {
  int32_t n = inst.numBuffers();
  result.assign(n, -1);
  SearchOutcome outcome = solveAll();
  if (outcome == SearchOutcome::Found)
    offsets = result;
  return outcome;
}

SearchOutcome CanonicalSearcher::solveAll() {
  int32_t n = inst.numBuffers();
  if (n == 0)
    return SearchOutcome::Found;
  if (inst.lowerBound > capacity)
    return SearchOutcome::Infeasible;
  if (!buildSections())
    return SearchOutcome::OutOfBudget;
  rank.assign(n, 0);
  maxTotal.assign(n, 0);
  offset.assign(n, -1);
  minOffset.assign(n, 0);
  floor.assign(numSections, 0);
  posOf.assign(n, 0);
  spanDelta.assign(size_t(numSections) + 1, 0);
  witness.assign(numSections, 0);
  for (int32_t sec = 0; sec < numSections; ++sec)
    if (memberBegin[sec] < memberBegin[sec + 1])
      witness[sec] = members[memberBegin[sec]];

  // Independent partitions: cut between sections s and s+1 when no buffer
  // spans both.
  cuts.assign(size_t(numSections), 0);
  std::vector<int32_t> spanning(size_t(numSections) + 1, 0);
  for (int32_t b = 0; b < n; ++b) {
    ++spanning[secLo[b]];
    --spanning[secHi[b] - 1];
    for (int32_t s = secLo[b]; s + 1 < secHi[b]; ++s)
      ++cuts[s];
  }
  std::vector<int32_t> byLo(n);
  std::iota(byLo.begin(), byLo.end(), 0);
  std::stable_sort(byLo.begin(), byLo.end(), [&](int32_t a, int32_t b) {
    return secLo[a] < secLo[b];
  });
  size_t next = 0;
  int32_t open = 0, partBegin = 0;
  std::vector<int32_t> partBuffers;
  for (int32_t s = 0; s < numSections; ++s) {
    open += spanning[s];
    if (open > 0 && s + 1 < numSections)
      continue;
    partBuffers.clear();
    while (next < byLo.size() && secLo[byLo[next]] <= s)
      partBuffers.push_back(byLo[next++]);
    rankBuffers(partBuffers);
    SearchOutcome outcome = solvePartition(partBegin, s + 1, partBuffers, 0);
    if (outcome != SearchOutcome::Found)
      return outcome;
    partBegin = s + 1;
  }
  return SearchOutcome::Found;
}

bool CanonicalSearcher::outOfBudget() {
  ++stats.nodes;
  if (stats.nodes > limits.maxNodes || stats.work > limits.maxWork)
    return true;
  if (limits.hasDeadline && (stats.nodes & 255) == 0 &&
      std::chrono::steady_clock::now() > limits.deadline)
    return true;
  return false;
}

void CanonicalSearcher::place(int32_t b, Frame &frame) {
  frame.placed = b;
  frame.offsetMark = offsetLog.size();
  frame.floorMark = floorLog.size();
  const int64_t o = minOffset[b], height = o + inst.size[b];
  offset[b] = o;

  // Swap-remove from the unplaced list; unplace() reverses it.
  std::vector<int32_t> &list = *unplaced;
  int32_t pos = posOf[b];
  frame.removedPos = pos;
  int32_t last = list.back();
  list[pos] = last;
  posOf[last] = pos;
  list.pop_back();
  for (int32_t s = secLo[b]; s + 1 < secHi[b]; ++s)
    --cuts[s];

  // Sections whose floor inference may change: the union of the spans of
  // the buffers whose minimum offset rose, found with a difference array in
  // time linear in the union rather than in the sum of the spans.
  int32_t unionLo = INT32_MAX, unionHi = INT32_MIN;
  frame.hatless = true;
  offsetLog.reserve(size_t(inst.degree(b)));
  for (const int32_t *c = inst.conflictsBegin(b), *e = inst.conflictsEnd(b);
       c != e; ++c) {
    if (offset[*c] >= 0)
      continue;
    frame.hatless = false;
    if (minOffset[*c] >= height)
      continue;
    offsetLog.push(*c, minOffset[*c]);
    minOffset[*c] = height;
    ++spanDelta[secLo[*c]];
    --spanDelta[secHi[*c]];
    unionLo = std::min(unionLo, secLo[*c]);
    unionHi = std::max(unionHi, secHi[*c]);
  }
  stats.work += inst.degree(b) + 2 * int64_t(secHi[b] - secLo[b]);
  if (unionHi > unionLo)
    stats.work += unionHi - unionLo;
  affected.clear();
  for (int32_t s = unionLo, open = 0; s < unionHi; ++s) {
    open += spanDelta[s];
    spanDelta[s] = 0;
    if (open > 0)
      affected.push_back(s);
  }
  if (unionHi != INT32_MIN)
    spanDelta[unionHi] = 0;
  floorLog.reserve(size_t(secHi[b] - secLo[b]) + affected.size());
  for (int32_t s = secLo[b]; s < secHi[b]; ++s) {
    floorLog.push(s, floor[s]);
    floor[s] = height;
    total[s] -= inst.size[b];
    // Swap b just past the unplaced prefix. Later removals only touch
    // positions below it, so undoing in reverse order is a counter bump.
    int32_t *sec = members.data() + memberBegin[s];
    int32_t last = --numUnplacedIn[s];
    int32_t pos = slotOf[slotBase[b] + s - secLo[b]];
    int32_t moved = sec[last];
    sec[pos] = moved;
    slotOf[slotBase[moved] + s - secLo[moved]] = pos;
    sec[last] = b;
    slotOf[slotBase[b] + s - secLo[b]] = last;
  }
  // Nothing unplaced in a section can go below its lowest minimum offset.
  // Only a raise matters, so the scan stops at the first unplaced buffer
  // that could still sit at the current floor.
  for (int32_t s : affected) {
    if (total[s] == 0)
      continue;
    const int64_t current = floor[s];
    // The last buffer that held the floor down usually still does.
    int32_t w = witness[s];
    if (offset[w] < 0 && minOffset[w] <= current)
      continue;
    int64_t lowest = INT64_MAX;
    const int32_t *sec = members.data() + memberBegin[s];
    int32_t m = 0;
    for (int32_t e = numUnplacedIn[s]; m < e; ++m) {
      int32_t other = sec[m];
      lowest = std::min(lowest, minOffset[other]);
      if (lowest <= current) {
        witness[s] = other;
        break;
      }
    }
    stats.work += m;
    if (current < lowest) {
      floorLog.push(s, floor[s]);
      floor[s] = lowest;
    }
  }
}

void CanonicalSearcher::unplace(Frame &frame) {
  int32_t b = frame.placed;
  offsetLog.undoTo(frame.offsetMark, minOffset);
  floorLog.undoTo(frame.floorMark, floor);
  for (int32_t s = secLo[b]; s < secHi[b]; ++s) {
    total[s] += inst.size[b];
    ++numUnplacedIn[s];
  }
  for (int32_t s = secLo[b]; s + 1 < secHi[b]; ++s)
    ++cuts[s];
  offset[b] = -1;
  std::vector<int32_t> &list = *unplaced;
  int32_t pos = frame.removedPos;
  if (pos == int32_t(list.size())) {
    list.push_back(b);
  } else {
    int32_t moved = list[pos];
    list.push_back(moved);
    posOf[moved] = int32_t(list.size()) - 1;
    list[pos] = b;
  }
  posOf[b] = pos;
  frame.placed = -1;
}

bool CanonicalSearcher::check(int64_t placedOffset, int32_t secBegin,
                              int32_t secEnd) {
  stats.work += secEnd - secBegin;
  for (int32_t s = secBegin; s < secEnd; ++s)
    if (std::max(placedOffset, floor[s]) + total[s] > capacity)
      return false;
  return true;
}

SearchOutcome
CanonicalSearcher::solvePartition(int32_t secBegin, int32_t secEnd,
                                  std::vector<int32_t> list, int depth) {
  std::vector<int32_t> *outer = unplaced;
  unplaced = &list;
  auto adopt = [&] {
    unplaced = &list;
    for (size_t i = 0; i < list.size(); ++i)
      posOf[list[i]] = int32_t(i);
  };
  adopt();
  auto minHeight = [&] {
    int64_t h = INT64_MAX;
    for (int32_t b : list)
      h = std::min(h, minOffset[b] + inst.size[b]);
    return h;
  };
  std::vector<Frame> frames;
  // Undoes every placement of this call, so that callers see the state they
  // passed in whatever the outcome.
  auto finish = [&](SearchOutcome outcome) {
    if (outcome == SearchOutcome::Found)
      for (const Frame &frame : frames)
        result[frame.placed] = offset[frame.placed];
    while (!frames.empty()) {
      if (frames.back().placed >= 0)
        unplace(frames.back());
      frames.pop_back();
    }
    unplaced = outer;
    return outcome;
  };

  frames.emplace_back();
  frames.back().minHeight = minHeight();
  while (!frames.empty()) {
    Frame &frame = frames.back();
    if (frame.placed >= 0) {
      unplace(frame);
      // Hatless pruning (MiniMalloc): nothing unplaced overlaps that buffer,
      // so its minimum offset is final and its key was the smallest left;
      // every completion of this node would place it next, and none worked.
      if (frame.hatless) {
        frames.pop_back();
        continue;
      }
    }
    // The next candidate: the smallest (minimum offset, rank) above the last
    // one tried here, below the dominance height.
    int32_t best = -1;
    int64_t bestOffset = 0;
    int32_t bestRank = 0;
    stats.work += int64_t(list.size());
    for (int32_t b : list) {
      int64_t o = minOffset[b];
      if (o >= frame.minHeight)
        continue;
      int32_t r = rank[b];
      if (o < frame.lastOffset ||
          (o == frame.lastOffset && r <= frame.lastRank))
        continue;
      if (best < 0 || o < bestOffset || (o == bestOffset && r < bestRank)) {
        best = b;
        bestOffset = o;
        bestRank = r;
      }
    }
    if (best < 0) {
      frames.pop_back();
      continue;
    }
    frame.lastOffset = bestOffset;
    frame.lastRank = bestRank;
    if (outOfBudget())
      return finish(SearchOutcome::OutOfBudget);
    place(best, frame);
    if (!check(bestOffset, secBegin, secEnd))
      continue;
    if (list.empty())
      return finish(SearchOutcome::Found);

    // Dynamic decomposition: when this placement leaves no unplaced buffer
    // across some section boundaries, the pieces between them are
    // independent; one infeasible piece fails this placement outright
    // instead of after trying every arrangement of the others. Depth is
    // capped so that pathological cascades cannot exhaust the stack.
    cutpoints.clear();
    if (depth < kMaxDecompositionDepth)
      for (int32_t s = secLo[best]; s + 1 < secHi[best]; ++s)
        if (cuts[s] == 0)
          cutpoints.push_back(s + 1);
    if (!cutpoints.empty()) {
      std::vector<int32_t> bounds;
      bounds.push_back(secBegin);
      bounds.insert(bounds.end(), cutpoints.begin(), cutpoints.end());
      bounds.push_back(secEnd);
      SearchOutcome outcome = SearchOutcome::Found;
      for (size_t i = 0; i + 1 < bounds.size(); ++i) {
        std::vector<int32_t> piece;
        for (int32_t b : list)
          if (secLo[b] < bounds[i + 1] && secHi[b] > bounds[i])
            piece.push_back(b);
        if (piece.empty())
          continue;
        // Nested calls re-rank their own pieces, so the saved ranks are local.
        std::vector<int32_t> savedRanks;
        for (int32_t b : piece)
          savedRanks.push_back(rank[b]);
        std::vector<int32_t> pieceOrder = piece;
        rankBuffers(pieceOrder);
        outcome = solvePartition(bounds[i], bounds[i + 1], pieceOrder, depth + 1);
        for (size_t j = 0; j < piece.size(); ++j)
          rank[piece[j]] = savedRanks[j];
        if (outcome != SearchOutcome::Found)
          break;
      }
      adopt();
      if (outcome != SearchOutcome::Infeasible)
        return finish(outcome);
      continue;
    }

    Frame child;
    child.lastOffset = bestOffset;
    child.lastRank = bestRank;
    child.minHeight = minHeight();
    frames.push_back(child);
  }
  return finish(SearchOutcome::Infeasible);
}

SearchOutcome detail::searchCanonical(const Instance &inst, int64_t capacity,
                                      int heuristic, const SearchLimits &limits,
                                      std::vector<int64_t> &offsets,
                                      SearchStats &stats) {
  CanonicalSearcher searcher(inst, capacity, heuristic, limits, stats);
  return searcher.run(offsets);
}

SearchOutcome detail::decideCapacity(const Instance &inst, int64_t capacity,
                                     const SearchLimits &limits,
                                     std::vector<int64_t> &offsets,
                                     SearchStats &stats) {
  // MiniMalloc's round robin: each preorder gets the same node budget,
  // starting at two dives and doubled every round, since whichever preorder
  // suits an instance usually needs orders of magnitude less search than
  // the others.
  int64_t roundNodes = std::max<int64_t>(int64_t(inst.numBuffers()) * 2, 64);
  while (true) {
    for (int heuristic = 0; heuristic < kNumPreorders; ++heuristic) {
      if (stats.work >= limits.maxWork || stats.nodes >= limits.maxNodes)
        return SearchOutcome::OutOfBudget;
      SearchLimits round = limits;
      round.maxNodes = std::min(roundNodes, limits.maxNodes - stats.nodes);
      round.maxWork = limits.maxWork - stats.work;
      SearchStats roundStats;
      SearchOutcome outcome =
          searchCanonical(inst, capacity, heuristic, round, offsets, roundStats);
      stats.nodes += roundStats.nodes;
      stats.work += roundStats.work;
      if (outcome != SearchOutcome::OutOfBudget)
        return outcome;
      // A search that declined to start (instance too large) never will.
      if (roundStats.nodes == 0)
        return SearchOutcome::OutOfBudget;
      if (limits.hasDeadline &&
          std::chrono::steady_clock::now() > limits.deadline)
        return SearchOutcome::OutOfBudget;
    }
    roundNodes = roundNodes > INT64_MAX / 2 ? INT64_MAX : roundNodes * 2;
  }
}
