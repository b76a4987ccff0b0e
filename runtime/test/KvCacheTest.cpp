//===- KvCacheTest.cpp - The paged KV cache in the runtime ----------------===//
//
// The f8E4M3FN encoding against a brute-force nearest search over all its
// codes; int8 quantization's rounding and clamping; mw.kv_cache_write and
// mw.paged_attention on the CPU by hand (codes per head, skipped slots, an
// out-of-place write keeping the other slots) and their run-time errors,
// which leave the cache untouched; and a session over a hand-built plan
// whose cache (role kv_cache) starts zeroed, keeps what each step writes,
// is set by name, and is never part of the weights.
//
//===----------------------------------------------------------------------===//

#include "PlanTestHelpers.h"

#include "mwrt/formulas.h"
#include "mwrt/kernels.h"
#include "mwrt/runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace mwrt::test {
namespace {

namespace f = formulas;

/// The f8E4M3FN value nearest to `x` (ties to the even code), saturating:
/// a search over every finite code.
uint8_t nearestF8(float x) {
  if (std::isnan(x))
    return x < 0 || std::signbit(x) ? 0xff : 0x7f;
  uint8_t best = 0;
  double bestErr = std::numeric_limits<double>::infinity();
  for (int code = 0; code < 256; ++code) {
    if ((code & 0x7f) == 0x7f)
      continue; // NaN
    double v = f::f8E4M3BitsToFloat(static_cast<uint8_t>(code));
    double err = std::fabs(v - static_cast<double>(x));
    bool tieToEven = err == bestErr && (code & 1) == 0 &&
                     std::signbit(v) == std::signbit(x);
    if (err < bestErr || tieToEven) {
      best = static_cast<uint8_t>(code);
      bestErr = err;
    }
  }
  return best;
}

TEST(KvCache, F8E4M3MatchesANearestSearch) {
  // Every code decodes to a value that encodes back to it.
  for (int code = 0; code < 256; ++code) {
    if ((code & 0x7f) == 0x7f) {
      EXPECT_TRUE(std::isnan(f::f8E4M3BitsToFloat(static_cast<uint8_t>(code))));
      continue;
    }
    float v = f::f8E4M3BitsToFloat(static_cast<uint8_t>(code));
    uint8_t back = f::floatToF8E4M3Bits(v);
    if (v == 0.0f)
      EXPECT_EQ(back & 0x7f, 0) << code;
    else
      EXPECT_EQ(back, code) << v;
  }
  EXPECT_EQ(f::f8E4M3BitsToFloat(0x7e), 448.0f);
  EXPECT_EQ(f::f8E4M3BitsToFloat(0x01), 0.001953125f); // 2^-9
  // A dense sweep over the range, midpoints and beyond it.
  for (double x = -500.0; x <= 500.0; x += 0.0625)
    for (double scale : {1.0, 1.0 / 64, 1.0 / 4096}) {
      float v = static_cast<float>(x * scale);
      ASSERT_EQ(f::floatToF8E4M3Bits(v), nearestF8(v)) << v;
    }
  EXPECT_EQ(f::floatToF8E4M3Bits(1e30f), 0x7e);
  EXPECT_EQ(f::floatToF8E4M3Bits(-INFINITY), 0xfe);
  EXPECT_EQ(f::floatToF8E4M3Bits(NAN) & 0x7f, 0x7f);
  EXPECT_EQ(f::floatToF8E4M3Bits(100.0f), 0x6c); // the tie 96 | 104 -> 96
}

TEST(KvCache, Int8RoundsToEvenAndClamps) {
  EXPECT_EQ(f::quantizeI8(0.5f, 1.0f), 0);
  EXPECT_EQ(f::quantizeI8(1.5f, 1.0f), 2);
  EXPECT_EQ(f::quantizeI8(-2.5f, 1.0f), -2);
  EXPECT_EQ(f::quantizeI8(0.3f, 0.1f), 3);
  EXPECT_EQ(f::quantizeI8(1000.0f, 1.0f), 127);
  EXPECT_EQ(f::quantizeI8(-1000.0f, 1.0f), -127);
  EXPECT_EQ(f::quantizeI8(NAN, 1.0f), 0);
  EXPECT_EQ(f::dequantizeI8(-127, 0.5f), -63.5f);
}

/// The runtime's element types (DType here is the plan schema's).
using RtDType = ::mwrt::DType;

/// A dense tensor owning its bytes.
struct Buf {
  RtDType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  Buf(RtDType dtype, std::vector<int64_t> shape) : dtype(dtype), shape(shape) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    bytes.assign(n * dtypeSize(dtype), 0);
  }
  template <typename T> T *as() { return reinterpret_cast<T *>(bytes.data()); }
  TensorRef ref() const { return TensorRef(dtype, shape, bytes.data()); }
};

Buf floatsOf(std::vector<int64_t> shape, std::vector<float> v) {
  Buf b(RtDType::F32, std::move(shape));
  std::memcpy(b.bytes.data(), v.data(), v.size() * 4);
  return b;
}
Buf i32Of(std::vector<int64_t> shape, std::vector<int32_t> v) {
  Buf b(RtDType::I32, std::move(shape));
  std::memcpy(b.bytes.data(), v.data(), v.size() * 4);
  return b;
}

TEST(KvCache, WriteQuantizesPerHeadAndSkipsPadding) {
  // 3 blocks of 2 slots, 2 heads of 2; tokens to slots 5, -1 (padding), 0.
  Buf cache(RtDType::I8, {3, 2, 2, 2});
  Buf values = floatsOf({3, 2, 2}, {1, 2, 3, 4, 9, 9, 9, 9, -1, 0.25f, 6, 8});
  Buf slots = i32Of({3}, {5, -1, 0});
  KernelAttrs attrs;
  attrs.setFloats("scale", {0.5, 2.0});
  ASSERT_EQ(runCpuKernel(OpKind::KvCacheWrite, attrs,
                         {cache.ref(), values.ref(), slots.ref()},
                         {cache.ref()}),
            MWRT_OK)
      << mwrt_last_error();
  const int8_t *c = cache.as<int8_t>();
  // Slot 0 (block 0, slot 0): head 0 [-1, 0.25] / 0.5 = [-2, 0 (0.5 to even)],
  // head 1 [6, 8] / 2 = [3, 4]. Slot 5 (block 2, slot 1): [2, 4], [2 (1.5), 2].
  std::vector<int8_t> want(24, 0);
  int8_t slot0[] = {-2, 0, 3, 4}, slot5[] = {2, 4, 2, 2};
  std::copy(slot0, slot0 + 4, want.begin());
  std::copy(slot5, slot5 + 4, want.begin() + 20);
  EXPECT_EQ(std::vector<int8_t>(c, c + 24), want);

  // Out of place: the result starts as the old cache.
  Buf fresh(RtDType::I8, {3, 2, 2, 2});
  Buf one = floatsOf({1, 2, 2}, {0.5f, 0.5f, 2, 2});
  Buf slot3 = i32Of({1}, {3});
  ASSERT_EQ(runCpuKernel(OpKind::KvCacheWrite, attrs,
                         {cache.ref(), one.ref(), slot3.ref()}, {fresh.ref()}),
            MWRT_OK)
      << mwrt_last_error();
  const int8_t *r = fresh.as<int8_t>();
  int8_t slot3Codes[] = {1, 1, 1, 1};
  std::copy(slot3Codes, slot3Codes + 4, want.begin() + 12);
  EXPECT_EQ(std::vector<int8_t>(r, r + 24), want);
}

TEST(KvCache, BadSlotsAndScalesAreErrorsThatWriteNothing) {
  Buf cache(RtDType::F32, {3, 2, 1, 2});
  Buf values = floatsOf({2, 1, 2}, {1, 2, 3, 4});
  Buf slots = i32Of({2}, {0, 6});
  std::vector<uint8_t> before = cache.bytes;
  EXPECT_TRUE(failsWith(runCpuKernel(OpKind::KvCacheWrite, {},
                                     {cache.ref(), values.ref(), slots.ref()},
                                     {cache.ref()}),
                        "'mw.kv_cache_write': slot_mapping[1] = 6 is outside "
                        "the cache's 6 slots (3 blocks of 2; -1 skips a "
                        "token)"));
  EXPECT_EQ(cache.bytes, before); // slot 0 was not written either
  Buf i8(RtDType::I8, {3, 2, 1, 2});
  Buf ok = i32Of({2}, {0, 1});
  EXPECT_TRUE(failsWith(runCpuKernel(OpKind::KvCacheWrite, {},
                                     {i8.ref(), values.ref(), ok.ref()},
                                     {i8.ref()}),
                        "a i8 cache needs 'scale'"));
  KernelAttrs zero;
  zero.setFloats("scale", {0.0});
  EXPECT_TRUE(failsWith(runCpuKernel(OpKind::KvCacheWrite, zero,
                                     {i8.ref(), values.ref(), ok.ref()},
                                     {i8.ref()}),
                        "'scale' value #0 must be positive and finite"));
  KernelAttrs extra;
  extra.setFloats("scale", {1.0});
  EXPECT_TRUE(failsWith(runCpuKernel(OpKind::KvCacheWrite, extra,
                                     {cache.ref(), values.ref(), ok.ref()},
                                     {cache.ref()}),
                        "'scale' is only for i8 and f8E4M3FN caches, not f32"));
  // i8 tensors reach no other kernel.
  Buf r(RtDType::I8, {3, 2, 1, 2});
  EXPECT_TRUE(failsWith(runCpuKernel(OpKind::Neg, {}, {i8.ref()}, {r.ref()}),
                        "has dtype i8, which only the KV cache ops take"));
}

TEST(KvCache, PagedAttentionChecksContextsAndTables) {
  // 2 blocks of 2 slots, one head of 2; two sequences of 2 table entries.
  Buf cache = floatsOf({2, 2, 1, 2}, {1, 0, 0, 1, 2, 2, 3, 3});
  Buf q = floatsOf({2, 1, 1, 2}, {0, 0, 0, 0});
  Buf out(RtDType::F32, {2, 1, 1, 2});
  auto run = [&](std::vector<int32_t> tables, std::vector<int32_t> lens) {
    Buf t = i32Of({2, 2}, tables), l = i32Of({2}, lens);
    return runCpuKernel(OpKind::PagedAttention, {},
                        {q.ref(), cache.ref(), cache.ref(), t.ref(), l.ref()},
                        {out.ref()});
  };
  // Sequence 0 holds 3 tokens in blocks [1, 0]: uniform weights over
  // [2, 2], [3, 3], [1, 0]; sequence 1 is empty (zeros); entries past a
  // context (-1) are never read.
  ASSERT_EQ(run({1, 0, -1, -1}, {3, 0}), MWRT_OK) << mwrt_last_error();
  const float *o = out.as<float>();
  float third = 1.0f / 3.0f;
  EXPECT_FLOAT_EQ(o[0], third * 2 + third * 3 + third * 1);
  EXPECT_FLOAT_EQ(o[1], third * 2 + third * 3);
  EXPECT_EQ(o[2], 0.0f);
  EXPECT_EQ(o[3], 0.0f);
  EXPECT_TRUE(failsWith(run({1, 0, 0, 0}, {3, 5}),
                        "context_lens[1] = 5 is outside [0, 4] (2 blocks of 2 "
                        "per sequence)"));
  EXPECT_TRUE(failsWith(run({1, 2, 0, 0}, {3, 1}),
                        "block_tables[0, 1] = 2 is outside the cache's 2 "
                        "blocks (sequence 0 holds 3 tokens)"));
  EXPECT_TRUE(failsWith(run({1, 0, -1, 0}, {3, 1}),
                        "block_tables[1, 0] = -1 is outside"));
}

TEST(KvCache, SessionKeepsTheCacheAcrossStepsAndOutOfTheWeights) {
  // step(cache, values, slots) -> cache: one kv_cache_write in place.
  PlanBuilder b;
  b.function = "decode";
  int cache = b.addPersistent("k_cache", DType::I8, {2, 2, 1, 2},
                              Role::KvCache, 0);
  int values = b.addPersistent("values", DType::F32, {1, 1, 2}, Role::Input, 1);
  int slots = b.addPersistent("slots", DType::I32, {1}, Role::Input, 2);
  AttrSpec scale;
  scale.name = "scale";
  scale.kind = mwplan::AttrKind::Floats;
  scale.floats = {0.25};
  b.addKernel("mw.kv_cache_write",
              {persistent(cache, {2, 2, 1, 2}, DType::I8),
               persistent(values, {1, 1, 2}), persistent(slots, {1}, DType::I32)},
              {persistent(cache, {2, 2, 1, 2}, DType::I8)}, {scale});
  b.addResult("k_cache", Role::KvCache,
              persistent(cache, {2, 2, 1, 2}, DType::I8));
  std::vector<uint8_t> bytes = b.finish();
  std::shared_ptr<const Plan> plan;
  ASSERT_EQ(Plan::parse(bytes.data(), bytes.size(), plan), MWRT_OK)
      << mwrt_last_error();
  std::unique_ptr<Session> s;
  ASSERT_EQ(Session::create(plan, "cpu", {}, s), MWRT_OK) << mwrt_last_error();
  auto codes = [&] {
    TensorData t;
    EXPECT_EQ(s->readPersistent("k_cache", t), MWRT_OK) << mwrt_last_error();
    return std::vector<int8_t>(t.bytes.begin(), t.bytes.end());
  };
  EXPECT_EQ(codes(), std::vector<int8_t>(8, 0)); // zero-initialized
  auto write = [&](float x, int32_t slot) {
    TensorData v, sl;
    v.dtype = mwrt::DType::F32;
    v.shape = {1, 1, 2};
    float pair[2] = {x, -x};
    v.bytes.assign(reinterpret_cast<uint8_t *>(pair),
                   reinterpret_cast<uint8_t *>(pair) + 8);
    sl.dtype = mwrt::DType::I32;
    sl.shape = {1};
    sl.bytes.assign(reinterpret_cast<uint8_t *>(&slot),
                    reinterpret_cast<uint8_t *>(&slot) + 4);
    ASSERT_EQ(s->setTensor("values", v), MWRT_OK) << mwrt_last_error();
    ASSERT_EQ(s->setTensor("slots", sl), MWRT_OK) << mwrt_last_error();
    ASSERT_EQ(s->step(), MWRT_OK) << mwrt_last_error();
  };
  write(1.0f, 3);
  write(0.5f, 0);
  EXPECT_EQ(codes(), (std::vector<int8_t>{2, -2, 0, 0, 0, 0, 4, -4}));
  // The cache is state, not weights: never collected or saved.
  SafeTensors weights;
  ASSERT_EQ(s->collectWeights(weights), MWRT_OK) << mwrt_last_error();
  EXPECT_EQ(weights.find("k_cache"), nullptr);
  // A bad slot fails the step and leaves the cache as it was.
  int32_t bad = 4;
  TensorData sl;
  sl.dtype = mwrt::DType::I32;
  sl.shape = {1};
  sl.bytes.assign(reinterpret_cast<uint8_t *>(&bad),
                  reinterpret_cast<uint8_t *>(&bad) + 4);
  ASSERT_EQ(s->setTensor("slots", sl), MWRT_OK);
  EXPECT_EQ(s->step(), MWRT_INVALID_ARGUMENT);
  EXPECT_CONTAINS(std::string(mwrt_last_error()),
                  "slot_mapping[0] = 4 is outside the cache's 4 slots");
  EXPECT_EQ(codes(), (std::vector<int8_t>{2, -2, 0, 0, 0, 0, 4, -4}));
}

/// step(cache, values, slots) -> cache, as above, with an f32 cache of
/// `blocks` blocks and an arena of `arenaBytes`.
std::shared_ptr<const Plan> cacheWriter(int64_t blocks, uint64_t arenaBytes) {
  PlanBuilder b;
  b.function = "decode";
  b.arenaSize = arenaBytes;
  int cache = b.addPersistent("k_cache", DType::F32, {blocks, 2, 1, 2},
                              Role::KvCache, 0);
  int values = b.addPersistent("values", DType::F32, {1, 1, 2}, Role::Input, 1);
  int slots = b.addPersistent("slots", DType::I32, {1}, Role::Input, 2);
  b.addKernel("mw.kv_cache_write",
              {persistent(cache, {blocks, 2, 1, 2}),
               persistent(values, {1, 1, 2}), persistent(slots, {1}, DType::I32)},
              {persistent(cache, {blocks, 2, 1, 2})}, {});
  b.addResult("k_cache", Role::KvCache, persistent(cache, {blocks, 2, 1, 2}));
  std::vector<uint8_t> bytes = b.finish();
  std::shared_ptr<const Plan> plan;
  EXPECT_EQ(Plan::parse(bytes.data(), bytes.size(), plan), MWRT_OK)
      << mwrt_last_error();
  return plan;
}

TEST(KvCache, SessionsShareTheCacheAndTheArena) {
  // mw-run --generate's two sessions: what one writes the other reads.
  std::unique_ptr<Session> owner, sharer;
  ASSERT_EQ(Session::create(cacheWriter(2, 256), "cpu", {}, owner), MWRT_OK)
      << mwrt_last_error();
  SessionOptions shared;
  shared.shareWith = owner.get();
  ASSERT_EQ(Session::create(cacheWriter(2, 128), "cpu", shared, sharer),
            MWRT_OK)
      << mwrt_last_error();
  float pair[2] = {1.5f, -2.0f};
  int32_t slot = 1;
  ASSERT_EQ(sharer->setTensor("values", mwrt::DType::F32, {1, 1, 2}, pair, 8),
            MWRT_OK);
  ASSERT_EQ(sharer->setTensor("slots", mwrt::DType::I32, {1}, &slot, 4),
            MWRT_OK);
  ASSERT_EQ(sharer->step(), MWRT_OK) << mwrt_last_error();
  TensorData t;
  ASSERT_EQ(owner->readPersistent("k_cache", t), MWRT_OK);
  std::vector<float> got(8);
  std::memcpy(got.data(), t.bytes.data(), 32);
  EXPECT_EQ(got, (std::vector<float>{0, 0, 1.5f, -2.0f, 0, 0, 0, 0}));
  // One arena and one cache: the sharer allocated only its inputs.
  SessionStats st = sharer->stats();
  EXPECT_EQ(st.sharedBytes, 128u + 32u);
  EXPECT_EQ(st.measuredPeakBytes, 64u + 64u);
  EXPECT_EQ(owner->stats().measuredPeakBytes, 256u + 64u * 3);

  // A larger arena than the owner's, or a cache of another shape, is refused.
  std::unique_ptr<Session> bad;
  EXPECT_TRUE(failsWith(Session::create(cacheWriter(2, 512), "cpu", shared, bad),
                        "does not fit the shared arena"));
  EXPECT_TRUE(failsWith(Session::create(cacheWriter(3, 64), "cpu", shared, bad),
                        "'k_cache' (kv_cache, [3, 2, 1, 2]) differs from"));
}

} // namespace
} // namespace mwrt::test
