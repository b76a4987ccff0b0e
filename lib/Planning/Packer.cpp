//===- Packer.cpp - Entry points of the packer -----------------------------===//
//
// The public face of lib/Planning: strategy names, the dispatcher that builds
// an instance and runs one strategy on it, the `naive` strategy, the lower
// bound, and an independent checker of packings. The checker shares no code
// with the strategies (it sweeps the caller's buffers, not an Instance), so a
// bug in the shared machinery cannot hide from it.
//
//===----------------------------------------------------------------------===//

#include "PackerInternal.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>

using namespace memwall::planning;
using namespace memwall::planning::detail;

namespace {
struct StrategyName {
  PackStrategy strategy;
  const char *name;
};
} // namespace

static const StrategyName kStrategyNames[] = {
    {PackStrategy::Naive, "naive"},
    {PackStrategy::GreedySize, "greedy-size"},
    {PackStrategy::GreedyBreadth, "greedy-breadth"},
    {PackStrategy::BestFitSize, "best-fit-size"},
    {PackStrategy::BestFitTime, "best-fit-time"},
    {PackStrategy::Best, "best"},
    {PackStrategy::Exact, "exact"},
};

const char *memwall::planning::getStrategyName(PackStrategy strategy) {
  for (const StrategyName &entry : kStrategyNames)
    if (entry.strategy == strategy)
      return entry.name;
  return "unknown";
}

std::optional<PackStrategy>
memwall::planning::parseStrategy(std::string_view name) {
  for (const StrategyName &entry : kStrategyNames)
    if (name == entry.name)
      return entry.strategy;
  return std::nullopt;
}

const std::vector<PackStrategy> &memwall::planning::getAllStrategies() {
  static const std::vector<PackStrategy> all = [] {
    std::vector<PackStrategy> result;
    for (const StrategyName &entry : kStrategyNames)
      result.push_back(entry.strategy);
    return result;
  }();
  return all;
}

PackResult memwall::planning::packBuffers(const std::vector<PackBuffer> &buffers,
                                          const PackOptions &options) {
  auto startTime = std::chrono::steady_clock::now();
  PackResult result;
  Instance inst;
  // `exact` and `best`'s search walk the conflict graph; the greedy
  // placers only want it while it is small.
  Conflicts conflicts = Conflicts::IfSparse;
  if (options.strategy == PackStrategy::Exact ||
      (options.strategy == PackStrategy::Best &&
       buffers.size() <= size_t(kMaxSearchBuffers)))
    conflicts = Conflicts::Always;
  result.error = buildInstance(buffers, options.alignment, inst, conflicts);
  if (!result.succeeded())
    return result;
  const uint64_t align = options.alignment;
  result.lowerBound = uint64_t(inst.lowerBound) * align;
  result.offsets.assign(buffers.size(), 0);

  if (options.strategy == PackStrategy::Naive) {
    uint64_t next = 0;
    for (size_t i = 0; i < buffers.size(); ++i) {
      result.offsets[i] = next;
      uint64_t size = buffers[i].size;
      next += (size / align + (size % align != 0)) * align;
    }
    result.arenaSize = next;
  } else {
    std::vector<int64_t> offsets(inst.numBuffers(), -1);
    ExactStats stats;
    GreedyPlacer placer(inst);
    switch (options.strategy) {
    case PackStrategy::GreedySize:
      placer.run(orderBySize(inst), 0, Fit::Best, offsets);
      break;
    case PackStrategy::GreedyBreadth:
      placer.run(orderByBreadth(inst), 0, Fit::Best, offsets);
      break;
    case PackStrategy::BestFitSize:
      placer.run(orderBySpatial(inst), 0, Fit::BestWithTop, offsets);
      break;
    case PackStrategy::BestFitTime:
      placer.run(orderByTemporal(inst), 0, Fit::BestWithTop, offsets);
      break;
    case PackStrategy::Best:
      packBest(inst, offsets,
               int64_t(std::min(options.effortSeconds, 1e6) *
                       double(kWorkUnitsPerSecond)));
      break;
    case PackStrategy::Exact:
      packExact(inst, options.timeLimitSeconds, offsets, stats);
      result.timedOut = stats.timedOut;
      break;
    case PackStrategy::Naive:
      break;
    }
    for (int32_t i = 0; i < inst.numBuffers(); ++i)
      result.offsets[inst.origIndex[i]] = uint64_t(offsets[i]) * align;
    result.arenaSize = uint64_t(arenaOf(inst, offsets)) * align;
    result.provenOptimal = stats.provenOptimal;
  }
  if (result.arenaSize == result.lowerBound)
    result.provenOptimal = true;
  result.timeMs = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - startTime)
                      .count();
  return result;
}

uint64_t memwall::planning::computeLowerBound(
    const std::vector<PackBuffer> &buffers, uint64_t alignment) {
  if (alignment == 0)
    return 0;
  // Ends sort before starts at the same time: lifetimes are half-open.
  std::vector<std::pair<int64_t, int64_t>> events;
  for (const PackBuffer &b : buffers) {
    if (b.end <= b.start)
      continue;
    int64_t units = int64_t(b.size / alignment + (b.size % alignment != 0));
    events.emplace_back(b.start, units);
    events.emplace_back(b.end, -units);
  }
  std::sort(events.begin(), events.end());
  int64_t live = 0, peak = 0;
  for (const auto &[time, delta] : events) {
    live += delta;
    peak = std::max(peak, live);
  }
  return uint64_t(peak) * alignment;
}

std::string
memwall::planning::verifyPacking(const std::vector<PackBuffer> &buffers,
                                 const std::vector<uint64_t> &offsets,
                                 uint64_t alignment) {
  if (offsets.size() != buffers.size())
    return "expected " + std::to_string(buffers.size()) + " offsets, got " +
           std::to_string(offsets.size());
  if (alignment == 0)
    return "alignment must be at least 1";
  for (size_t i = 0; i < offsets.size(); ++i)
    if (offsets[i] % alignment != 0)
      return "buffer " + std::to_string(i) + " has unaligned offset " +
             std::to_string(offsets[i]);
  // Sweep time; the live buffers' address ranges must stay disjoint, so a new
  // range only needs checking against its neighbours in address order.
  struct Event {
    int64_t time;
    bool isStart;
    size_t index;
  };
  std::vector<Event> events;
  for (size_t i = 0; i < buffers.size(); ++i) {
    // Empty lifetimes are invalid input that packBuffers rejects; skipping
    // them keeps every end event paired with a live start.
    if (buffers[i].size == 0 || buffers[i].end <= buffers[i].start)
      continue;
    events.push_back({buffers[i].start, true, i});
    events.push_back({buffers[i].end, false, i});
  }
  std::sort(events.begin(), events.end(), [](const Event &a, const Event &b) {
    if (a.time != b.time)
      return a.time < b.time;
    if (a.isStart != b.isStart)
      return !a.isStart; // Ends first: [start, end) is half-open.
    return a.index < b.index;
  });
  auto alignedEnd = [&](size_t i) {
    uint64_t size = buffers[i].size;
    return offsets[i] + (size / alignment + (size % alignment != 0)) * alignment;
  };
  std::map<uint64_t, size_t> live; // offset -> buffer
  for (const Event &event : events) {
    size_t i = event.index;
    if (!event.isStart) {
      live.erase(offsets[i]);
      continue;
    }
    auto clash = [&](size_t j) {
      return "buffers " + std::to_string(j) + " and " + std::to_string(i) +
             " are live together and share addresses";
    };
    auto next = live.lower_bound(offsets[i]);
    if (next != live.end() && next->first < alignedEnd(i))
      return clash(next->second);
    if (next != live.begin()) {
      auto prev = std::prev(next);
      if (alignedEnd(prev->second) > offsets[i])
        return clash(prev->second);
    }
    live.emplace(offsets[i], i);
  }
  return "";
}
