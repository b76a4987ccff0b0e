//===- OffloadModelTest.cpp - Unit tests of the offload model -------------===//
//
// The analytic model of --mw-offload=auto (include/memwall/Analysis/
// OffloadModel.h) against schedules worked by hand: copies and computes of
// a few layers for each prefetch depth and pinned count, the device bytes,
// the largest batch, and the search's choice and tie rules.
//
//===----------------------------------------------------------------------===//

#include "memwall/Analysis/OffloadModel.h"

#include <gtest/gtest.h>

using namespace mlir::mw;

namespace {

/// `n` layers of `weightBytes` each whose compute takes `computeSeconds` at
/// the reference batch (1 sequence): one op of that many FLOPs at 1 FLOP/s,
/// no bytes through device memory. The host link copies 1 byte/s.
OffloadModelInputs layers(int n, int64_t weightBytes, double computeSeconds) {
  OffloadModelInputs in;
  for (int i = 0; i < n; ++i) {
    OffloadLayer l;
    l.weightBytes = weightBytes;
    l.ops.push_back({computeSeconds, 0, 0});
    in.layers.push_back(l);
  }
  in.peakFlopsPerSecond = 1;
  in.deviceBytesPerSecond = 0; // no memory term
  in.hostLinkBytesPerSecond = 1;
  in.deviceBytes = int64_t(1) << 40;
  in.referenceTokens = 1;
  return in;
}

TEST(OffloadModel, ScheduleByHand) {
  // Three layers: copy 2 s, compute 1 s.
  OffloadModelInputs in = layers(3, 2, 1.0);
  // K = 0: every copy waits for the previous layer, then its compute waits
  // for the copy: 3 x (2 + 1).
  EXPECT_DOUBLE_EQ(offloadStepSeconds(in, 0, 0, 1, 1, 1), 9.0);
  // K = 1: copies 0-2, 2-4 (issued at 0, before layer 0), 4-6 (issued at 3,
  // before layer 1, once layer 0 freed its slot); computes 2-3, 4-5, 6-7.
  EXPECT_DOUBLE_EQ(offloadStepSeconds(in, 0, 1, 1, 1, 1), 7.0);
  // Deeper prefetch cannot beat the copy engine: 3 copies + the last compute.
  EXPECT_DOUBLE_EQ(offloadStepSeconds(in, 0, 2, 1, 1, 1), 7.0);
  EXPECT_DOUBLE_EQ(offloadStepSeconds(in, 0, 3, 1, 1, 1), 7.0);
  // One pinned layer computes 0-1 while layer 1 copies 0-2; layer 2 copies
  // 2-4 (issued at 1); computes 2-3 and 4-5.
  EXPECT_DOUBLE_EQ(offloadStepSeconds(in, 1, 1, 1, 1, 1), 5.0);
  // Pinned with K = 0: layer 1's copy starts after layer 0 (1-3), computes
  // 3-4; layer 2 copies 4-6, computes 6-7.
  EXPECT_DOUBLE_EQ(offloadStepSeconds(in, 1, 0, 1, 1, 1), 7.0);
  // Everything pinned: compute only.
  EXPECT_DOUBLE_EQ(offloadStepSeconds(in, 3, 0, 1, 1, 1), 3.0);
}

TEST(OffloadModel, ComputeScalesWithTokensNotWeights) {
  OffloadModelInputs in = layers(2, 4, 1.0);
  // Compute-bound at 8 tokens: copies 0-4 and 4-8 hide under computes 4-12
  // and 12-20.
  EXPECT_DOUBLE_EQ(offloadStepSeconds(in, 0, 1, 2, 4, 1), 20.0);
  // Memory term: weights constant, the rest linear in tokens.
  in.peakFlopsPerSecond = 0;
  in.deviceBytesPerSecond = 1;
  in.hostLinkBytesPerSecond = 0; // copies take no time
  for (OffloadLayer &l : in.layers)
    l.ops = {{0, 3, 1}};
  EXPECT_DOUBLE_EQ(offloadStepSeconds(in, 0, 1, 1, 1, 1), 2 * (3 + 1));
  EXPECT_DOUBLE_EQ(offloadStepSeconds(in, 0, 1, 5, 1, 1), 2 * (3 + 5));
  // Context costs scale with the context too.
  for (OffloadLayer &l : in.layers)
    l.ops = {{0, 3, 1, 0, 2}};
  in.referenceContextTokens = 4;
  EXPECT_DOUBLE_EQ(offloadStepSeconds(in, 0, 1, 1, 1, 8), 2 * (3 + 1 + 4));
  EXPECT_DOUBLE_EQ(offloadStepSeconds(in, 0, 1, 2, 1, 2), 2 * (3 + 2 + 2));
  for (OffloadLayer &l : in.layers)
    l.ops = {{0, 3, 1}};
  // Head and tail ops run before and after the layers.
  in.headOps = {{0, 0, 2}};
  in.tailOps = {{0, 1, 0}};
  EXPECT_DOUBLE_EQ(offloadStepSeconds(in, 0, 1, 1, 1, 1), 2 + 8 + 1);
}

TEST(OffloadModel, DeviceBytes) {
  OffloadModelInputs in = layers(4, 100, 1.0);
  in.residentBytes = 1000;
  in.kvBytesPerToken = 2;
  in.referenceTransientBytes = 10; // per sequence and token
  in.workload.promptTokens = 5;
  in.workload.generateTokens = 4;
  in.workload.blockTokens = 4; // 9 tokens -> 12 slots
  // Full offload, K = 1: two slots; per sequence 12 * 2 KV + 5 * 10 arena.
  EXPECT_EQ(offloadDeviceBytes(in, 0, 1, 1), 1000 + 200 + 24 + 50);
  EXPECT_EQ(offloadDeviceBytes(in, 0, 1, 3), 1000 + 200 + 3 * 74);
  // Two pinned, K = 3: the slots are capped by the two streamed layers.
  EXPECT_EQ(offloadDeviceBytes(in, 2, 3, 1), 1000 + 200 + 200 + 74);
  // Everything pinned: no slots.
  EXPECT_EQ(offloadDeviceBytes(in, 4, 0, 1), 1000 + 400 + 74);
  // Layers of different sizes: the largest window of K + 1 streamed ones.
  in.layers[2].weightBytes = 500;
  EXPECT_EQ(offloadDeviceBytes(in, 0, 0, 0), 1000 + 500);
  EXPECT_EQ(offloadDeviceBytes(in, 0, 1, 0), 1000 + 600);

  // The largest batch: 1000 + 200 + 74 b <= 2000 -> b = 10.
  in.layers[2].weightBytes = 100;
  in.deviceBytes = 2000;
  EXPECT_EQ(largestFittingBatch(in, 0, 1, 0), 10);
  EXPECT_EQ(largestFittingBatch(in, 0, 1, 4), 4);
  in.deviceBytes = 1273;
  EXPECT_EQ(largestFittingBatch(in, 0, 1, 0), 0);
  EXPECT_FALSE(evaluateOffload(in, 0, 1, 1).fits);
}

TEST(OffloadModel, TokensPerSecond) {
  OffloadModelInputs in = layers(3, 2, 1.0);
  in.workload.promptTokens = 2;
  in.workload.generateTokens = 3;
  // K = 1, batch 1: prefill of 2 tokens computes 2 s per layer: copies 0-2,
  // 2-4, 4-6 (issued at 4); computes 2-4, 4-6, 6-8. Decode: 7 s.
  OffloadCandidate c = evaluateOffload(in, 0, 1, 1);
  EXPECT_DOUBLE_EQ(c.prefillSeconds, 8.0);
  EXPECT_DOUBLE_EQ(c.decodeSeconds, 7.0);
  EXPECT_DOUBLE_EQ(c.tokensPerSecond, 3.0 / (8.0 + 2 * 7.0));
  EXPECT_TRUE(c.fits);
}

TEST(OffloadModel, ThroughputNeverDropsWithBatch) {
  OffloadModelInputs in = layers(6, 50, 0.2);
  in.deviceBytesPerSecond = 40;
  for (OffloadLayer &l : in.layers)
    l.ops.push_back({0.0, 50, 3});
  for (int pinned : {0, 2, 6})
    for (int k : {0, 1, 3}) {
      double last = 0;
      for (int b = 1; b <= 64; ++b) {
        double t = evaluateOffload(in, pinned, k, b).tokensPerSecond;
        EXPECT_GE(t, last * (1 - 1e-12)) << pinned << " " << k << " " << b;
        last = t;
      }
    }
}

TEST(OffloadModel, SearchChoosesTheFastestThatFits) {
  // Copy-bound layers, memory for the weights or for sequences: every
  // pinned layer saves a copy but costs sequences.
  OffloadModelInputs in = layers(4, 100, 0.001);
  in.kvBytesPerToken = 1; // 2 per sequence of 1 + 1 tokens
  in.workload = {1, 1, 1}; // one prompt token, one generated: a prefill
  in.deviceBytes = 1000;
  OffloadSearchResult r = searchOffload(in, {});
  // (L, K) for L = 0..3 and K = 0..3, then L = 4 once.
  ASSERT_EQ(r.candidates.size(), 4u * 4 + 1);
  EXPECT_EQ(r.candidates.back().pinnedLayers, 4);
  EXPECT_EQ(r.candidates.back().batch, 300);
  // L = 0, K = 0: one slot, 450 sequences over 4 copies of 100 s.
  EXPECT_EQ(r.candidates[0].batch, 450);
  ASSERT_GE(r.choice, 0);
  const OffloadCandidate &best = r.candidates[r.choice];
  for (const OffloadCandidate &c : r.candidates) {
    if (c.fits) {
      EXPECT_LE(c.tokensPerSecond, best.tokensPerSecond);
    }
  }
  // All pinned: 300 sequences with no copies beat 450 over 400 s of copies.
  EXPECT_EQ(best.pinnedLayers, 4);

  // Nothing fits: no choice, every candidate at batch 1.
  in.deviceBytes = 50;
  r = searchOffload(in, {});
  EXPECT_EQ(r.choice, -1);
  for (const OffloadCandidate &c : r.candidates) {
    EXPECT_FALSE(c.fits);
    EXPECT_EQ(c.batch, 1);
  }
}

TEST(OffloadModel, TiesGoToFewerPinnedThenSmallerPrefetch) {
  // No copy time and no per-sequence bytes: every candidate runs the same
  // batch (the cap) equally fast.
  OffloadModelInputs in = layers(3, 10, 1.0);
  in.hostLinkBytesPerSecond = 0;
  OffloadSearchOptions o;
  o.maxBatch = 4;
  o.maxPrefetch = 2;
  OffloadSearchResult r = searchOffload(in, o);
  ASSERT_EQ(r.candidates.size(), 3u * 3 + 1);
  ASSERT_GE(r.choice, 0);
  EXPECT_EQ(r.candidates[r.choice].pinnedLayers, 0);
  EXPECT_EQ(r.candidates[r.choice].prefetch, 0);
  EXPECT_EQ(r.candidates[r.choice].batch, 4);
  // The table marks the choice once.
  std::string table = formatOffloadTable(r);
  EXPECT_NE(table.find("<- chosen"), std::string::npos);
  EXPECT_EQ(table.find("<- chosen"), table.rfind("<- chosen"));
}

} // namespace
