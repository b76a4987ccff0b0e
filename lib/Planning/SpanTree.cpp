//===- SpanTree.cpp - Placed address ranges indexed by time -----------------===//
//
// The greedy placers' gap search without a conflict graph. A placement needs
// the free gaps of the union of the address ranges of every placed buffer
// that overlaps it in time. On real training steps thousands of buffers are
// live at once, so the conflict graph has hundreds of millions of entries
// (gigabytes) and listing a buffer's neighbours costs thousands of loads.
// But in a good packing the ranges live at the same time tile the arena with
// few holes, so their union is a handful of spans: this index answers with
// the union directly.
//
// A segment tree over buckets of kBucket consecutive time indices. A placed
// buffer is stored
//   - as merged spans in `own` of the canonical nodes of the buckets it
//     covers entirely (every buffer there covers the node's whole time range,
//     so they are all live together: disjoint ranges, merged when touching);
//   - as an exact record (times and range) in the bucket(s) it covers only in
//     part (at most two, its first and last);
//   - as merged spans in `sub` of every node whose time range it touches at
//     all and that is a canonical node of it or above one, or above one of
//     its partial buckets: `sub[v]` is the union of all ranges stored in v's
//     subtree.
// A query [s, e) collects: for each canonical node c of its whole buckets,
// sub[c] (everything stored at or below c touches c's range, inside the
// query) and own[a] of every ancestor a of c (those cover a's range, hence
// c's); for a partially covered end bucket, its records that overlap the
// query exactly and own of the bucket and its ancestors. Every placed buffer
// overlapping the query is found (its piece at a time inside the query is
// stored at, above or below a node the query visits) and no other. The gaps
// are then those of exactly the same union as a scan over the conflict list
// sees, so both placers give the same offsets.
//
//===----------------------------------------------------------------------===//

#include "PackerInternal.h"

#include <algorithm>

using namespace memwall::planning;
using namespace memwall::planning::detail;

namespace {
/// Time indices per leaf bucket: a partial end costs a scan of about this
/// many records; smaller buckets mean a taller tree and more span lists.
constexpr int32_t kBucket = 32;
} // namespace

SpanTree::SpanTree(const Instance &inst) : inst(inst) {
  int32_t buckets = std::max<int32_t>((inst.numTimes + kBucket - 1) / kBucket, 1);
  leaves = 1;
  while (leaves < buckets)
    leaves *= 2;
  own.resize(size_t(2) * leaves);
  sub.resize(size_t(2) * leaves);
  records.resize(size_t(leaves));
  stamp.assign(size_t(2) * leaves, 0);
}

void SpanTree::clear() {
  for (std::vector<Span> &spans : own)
    spans.clear();
  for (std::vector<Span> &spans : sub)
    spans.clear();
  for (std::vector<Record> &list : records)
    list.clear();
}

void SpanTree::nextEpoch() {
  // Stamps from 2^32 operations ago would look current: start over.
  if (++epoch == 0) {
    std::fill(stamp.begin(), stamp.end(), 0);
    epoch = 1;
  }
}

SpanTree::Cover SpanTree::coverOf(int32_t s, int32_t e) const {
  Cover cover;
  const int32_t first = s / kBucket, last = (e - 1) / kBucket;
  // A bucket is whole when the lifetime covers all of its time indices (the
  // last bucket has fewer when numTimes is not a multiple of kBucket).
  const bool wholeStart = s % kBucket == 0;
  const bool wholeEnd = e % kBucket == 0 || e == inst.numTimes;
  cover.wholeLo = wholeStart ? first : first + 1;
  cover.wholeHi = wholeEnd ? last + 1 : last;
  if (first == last) {
    if (!(wholeStart && wholeEnd))
      cover.partialFirst = first;
  } else {
    if (!wholeStart)
      cover.partialFirst = first;
    if (!wholeEnd)
      cover.partialLast = last;
  }
  cover.wholeHi = std::max(cover.wholeHi, cover.wholeLo);
  return cover;
}

/// Calls partial(bucket) for each bucket [s, e) covers in part, then
/// whole(node) for each canonical node of the buckets it covers entirely.
template <typename Partial, typename Whole>
void SpanTree::forEachPiece(int32_t s, int32_t e, Partial partial,
                            Whole whole) const {
  const Cover cover = coverOf(s, e);
  if (cover.partialFirst >= 0)
    partial(cover.partialFirst);
  if (cover.partialLast >= 0)
    partial(cover.partialLast);
  for (int32_t l = cover.wholeLo + leaves, r = cover.wholeHi + leaves; l < r;
       l /= 2, r /= 2) {
    if (l & 1)
      whole(l++);
    if (r & 1)
      whole(--r);
  }
}

/// Adds [lo, hi) to a sorted list of disjoint, non-touching spans, merging
/// it with every span it overlaps or touches.
void SpanTree::addSpanTo(std::vector<Span> &spans, int64_t lo, int64_t hi,
                         int64_t &work) {
  auto first = std::lower_bound(
      spans.begin(), spans.end(), lo,
      [](const Span &span, int64_t value) { return span.hi < value; });
  auto last = first;
  while (last != spans.end() && last->lo <= hi) {
    lo = std::min(lo, last->lo);
    hi = std::max(hi, last->hi);
    ++last;
  }
  work += 1 + (last - first);
  if (first == last) {
    spans.insert(first, Span{lo, hi});
    return;
  }
  *first = Span{lo, hi};
  spans.erase(first + 1, last);
}

void SpanTree::insert(int32_t b, int64_t offset) {
  const int64_t lo = offset, hi = offset + inst.size[b];
  const int32_t s = inst.start[b], e = inst.end[b];
  nextEpoch();
  // `sub` of v and its ancestors, each node once per insertion.
  auto addUp = [&](int32_t v) {
    for (; v >= 1 && stamp[v] != epoch; v /= 2) {
      stamp[v] = epoch;
      addSpan(sub[v], lo, hi);
    }
  };
  forEachPiece(
      s, e,
      [&](int32_t bucket) {
        records[bucket].push_back(Record{s, e, lo, hi});
        ++work;
        addUp(leaves + bucket);
      },
      [&](int32_t node) {
        addSpan(own[node], lo, hi);
        addUp(node);
      });
}

/// Merges the sorted spans [first, last) into the sorted, disjoint,
/// non-touching union `acc` (through `scratch`).
static void mergeInto(std::vector<Span> &acc, const Span *first,
                      const Span *last, std::vector<Span> &scratch) {
  if (first == last)
    return;
  scratch.clear();
  auto push = [&](const Span &span) {
    if (!scratch.empty() && span.lo <= scratch.back().hi)
      scratch.back().hi = std::max(scratch.back().hi, span.hi);
    else
      scratch.push_back(span);
  };
  const Span *a = acc.data(), *aEnd = a + acc.size();
  while (a != aEnd && first != last)
    push(a->lo <= first->lo ? *a++ : *first++);
  for (; a != aEnd; ++a)
    push(*a);
  for (; first != last; ++first)
    push(*first);
  acc.swap(scratch);
}

void SpanTree::collect(int32_t b, std::vector<Span> &out) {
  out.clear();
  loose.clear();
  const int32_t s = inst.start[b], e = inst.end[b];
  nextEpoch();
  auto takeAll = [&](const std::vector<Span> &spans) {
    mergeInto(out, spans.data(), spans.data() + spans.size(), scratch);
    work += int64_t(spans.size()) + int64_t(out.size());
  };
  // own of every node from v up, each once per query.
  auto takeOwnUp = [&](int32_t v) {
    for (; v >= 1 && stamp[v] != epoch; v /= 2) {
      stamp[v] = epoch;
      takeAll(own[v]);
    }
  };
  auto takeBucket = [&](int32_t bucket) {
    for (const Record &r : records[bucket])
      if (r.start < e && s < r.end)
        loose.push_back(Span{r.lo, r.hi});
    work += int64_t(records[bucket].size());
    takeOwnUp(leaves + bucket);
  };
  forEachPiece(s, e, takeBucket, [&](int32_t node) {
    takeAll(sub[node]);
    takeOwnUp(node / 2);
  });
  // The partial buckets' records: a few dozen, unsorted.
  std::sort(loose.begin(), loose.end(),
            [](const Span &x, const Span &y) { return x.lo < y.lo; });
  mergeInto(out, loose.data(), loose.data() + loose.size(), scratch);
  work += int64_t(out.size());
}
