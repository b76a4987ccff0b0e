//===- CollectivesTest.cpp - The mesh collectives of one rank -------------===//
//
// The four collectives of a ZeRO step (mesh.all_reduce, mesh.reduce_scatter,
// mesh.all_gather, mesh.all_slice) as CPU kernels and in a plan: on a mesh of
// one rank each copies its input into its own buffer, exactly; a plan
// compiled for more ranks is refused when a session is created, before
// anything is allocated, because this build has only the single-process
// communicator.
//
//===----------------------------------------------------------------------===//

#include "PlanTestHelpers.h"
#include "comm/communicator.h"

#include "mwrt/kernels.h"
#include "mwrt/runtime.h"

#include <gtest/gtest.h>

#include <climits>
#include <cstring>

namespace mwrt::test {
namespace {

constexpr OpKind kCollectives[] = {OpKind::MeshAllReduce,
                                   OpKind::MeshReduceScatter,
                                   OpKind::MeshAllGather, OpKind::MeshAllSlice};

/// The attributes mw-translate writes for `kind` on mesh @dp, axis 0.
KernelAttrs meshAttrs(OpKind kind) {
  KernelAttrs attrs;
  attrs.setString("mesh", "dp").setInts("mesh_axes", {0});
  if (kind == OpKind::MeshAllReduce || kind == OpKind::MeshReduceScatter)
    attrs.setString("reduction", "sum");
  if (kind == OpKind::MeshReduceScatter)
    attrs.setInt("scatter_axis", 0);
  if (kind == OpKind::MeshAllGather)
    attrs.setInt("gather_axis", 0);
  if (kind == OpKind::MeshAllSlice)
    attrs.setInt("slice_axis", 0);
  return attrs;
}

TEST(Collectives, OneRankCopiesExactly) {
  for (OpKind kind : kCollectives) {
    // A value whose bits a reduction that computed anything would change.
    std::vector<float> x = {1.5f, -0.0f, 3.0e-39f, 7.25f, -2.0f, 1e30f};
    std::vector<float> y(x.size(), 42.0f);
    TensorRef in(mwrt::DType::F32, {6}, x.data()), out(mwrt::DType::F32, {6}, y.data());
    ASSERT_EQ(runCpuKernel(kind, meshAttrs(kind), {in}, {out}), MWRT_OK)
        << opKindName(kind) << ": " << mwrt_last_error();
    EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size() * 4), 0)
        << opKindName(kind);
  }
}

TEST(Collectives, ScalarAllReduceOfTheLoss) {
  float loss = 2.75f, sum = 0;
  TensorRef in(mwrt::DType::F32, {}, &loss), out(mwrt::DType::F32, {}, &sum);
  ASSERT_EQ(runCpuKernel(OpKind::MeshAllReduce,
                         meshAttrs(OpKind::MeshAllReduce), {in}, {out}),
            MWRT_OK)
      << mwrt_last_error();
  EXPECT_EQ(sum, 2.75f);
}

TEST(Collectives, OneRankKeepsTheShape) {
  std::vector<float> x(8), y(4);
  TensorRef in(mwrt::DType::F32, {8}, x.data()), out(mwrt::DType::F32, {4}, y.data());
  EXPECT_EQ(runCpuKernel(OpKind::MeshAllGather,
                         meshAttrs(OpKind::MeshAllGather), {in}, {out}),
            MWRT_INVALID_ARGUMENT);
  EXPECT_CONTAINS(mwrt_last_error(), "'mesh.all_gather'");
}

TEST(Collectives, NeverInPlace) {
  std::vector<float> x(4);
  TensorRef t(mwrt::DType::F32, {4}, x.data());
  EXPECT_EQ(runCpuKernel(OpKind::MeshAllReduce,
                         meshAttrs(OpKind::MeshAllReduce), {t}, {t}),
            MWRT_INVALID_ARGUMENT);
}

/// y = all_gather(x) then all_reduce, through the arena, for `ranks` ranks.
PlanBuilder collectivePlan(uint32_t ranks) {
  PlanBuilder b;
  b.ranks = ranks;
  b.arenaSize = 64;
  int x = b.addPersistent("x", DType::F32, {4}, Role::Input, 0);
  int y = b.addPersistent("result0", DType::F32, {4}, Role::Output);
  b.addKernel("mesh.all_gather", {persistent(x, {4})}, {arena(0, {4})},
              {stringAttr("mesh", "dp"), intsAttr("mesh_axes", {0}),
               intAttr("gather_axis", 0)});
  b.addKernel("mw.wait", {arena(0, {4})}, {arena(0, {4})});
  b.addKernel("mesh.all_reduce", {arena(0, {4})}, {persistent(y, {4})},
              {stringAttr("mesh", "dp"), intsAttr("mesh_axes", {0}),
               stringAttr("reduction", "sum")});
  b.addResult("y", Role::Output, persistent(y, {4}));
  return b;
}

TEST(Collectives, PlanOfOneRankRuns) {
  std::vector<uint8_t> bytes = collectivePlan(1).finish();
  std::shared_ptr<const Plan> plan;
  ASSERT_EQ(Plan::parse(bytes.data(), bytes.size(), plan), MWRT_OK)
      << mwrt_last_error();
  EXPECT_EQ(plan->ranks(), 1u);
  std::unique_ptr<Session> session;
  ASSERT_EQ(Session::create(plan, "cpu", {}, session), MWRT_OK)
      << mwrt_last_error();
  float x[] = {1, 2, 3, 4};
  ASSERT_EQ(session->setTensor("x", mwrt::DType::F32, {4}, x, sizeof x), MWRT_OK)
      << mwrt_last_error();
  ASSERT_EQ(session->step(), MWRT_OK) << mwrt_last_error();
  TensorData y;
  ASSERT_EQ(session->readResult("y", y), MWRT_OK) << mwrt_last_error();
  ASSERT_EQ(y.bytes.size(), sizeof x);
  EXPECT_EQ(std::memcmp(y.bytes.data(), x, sizeof x), 0);
}

TEST(Collectives, PlanForSeveralRanksIsRefusedAtLoad) {
  std::vector<uint8_t> bytes = collectivePlan(4).finish();
  std::shared_ptr<const Plan> plan;
  ASSERT_EQ(Plan::parse(bytes.data(), bytes.size(), plan, "zero.mwplan"),
            MWRT_OK)
      << mwrt_last_error();
  EXPECT_EQ(plan->ranks(), 4u);
  for (const char *device : {"cpu", "cuda"}) {
    std::unique_ptr<Session> session;
    EXPECT_EQ(Session::create(plan, device, {}, session), MWRT_UNAVAILABLE)
        << device;
    EXPECT_CONTAINS(mwrt_last_error(),
                    "zero.mwplan: the plan was compiled for 4 ranks; start it "
                    "with 4 processes (mpirun -np 4 mw-run ...)");
    EXPECT_FALSE(session);
  }
}

TEST(Collectives, ZeroRanksIsRejected) {
  std::vector<uint8_t> bytes = collectivePlan(0).finish();
  std::shared_ptr<const Plan> plan;
  EXPECT_EQ(Plan::parse(bytes.data(), bytes.size(), plan),
            MWRT_INVALID_ARGUMENT);
  EXPECT_CONTAINS(mwrt_last_error(), "ranks is 0");
}

//===----------------------------------------------------------------------===//
// What the multi-rank communicators share (src/comm/communicator.h)
//===----------------------------------------------------------------------===//

TEST(CollectivesAcrossRanks, ReductionSumsInRankOrderLikeTheEvaluator) {
  // Rank 0 first, in f32: (1e8 + 1) + (-1e8) is 0 in f32, not 1.
  const float blocks[] = {1e8f, 1.0f, -1e8f};
  float out = -1;
  ASSERT_EQ(detail::reduceBlocks("sum", mwrt::DType::F32, blocks, 3, 1, &out),
            MWRT_OK);
  EXPECT_EQ(out, 0.0f);
  ASSERT_EQ(detail::reduceBlocks("average", mwrt::DType::F32, blocks + 1, 2, 1, &out),
            MWRT_OK);
  EXPECT_EQ(out, (1.0f - 1e8f) / 2);
  ASSERT_EQ(detail::reduceBlocks("max", mwrt::DType::F32, blocks, 3, 1, &out),
            MWRT_OK);
  EXPECT_EQ(out, 1e8f);
}

TEST(CollectivesAcrossRanks, HalfPrecisionRoundsOnceAtTheEnd) {
  // bf16: 1 + 2^-8 + 2^-8 accumulated in f32 is 1 + 2^-7, which bf16 holds;
  // rounding after each addition would lose both halves (ties to even).
  const uint16_t one = 0x3f80, tiny = 0x3b80; // 1.0, 2^-8
  const uint16_t blocks[] = {one, tiny, tiny};
  uint16_t out = 0;
  ASSERT_EQ(detail::reduceBlocks("sum", mwrt::DType::BF16, blocks, 3, 1, &out),
            MWRT_OK);
  EXPECT_EQ(out, 0x3f81); // 1 + 2^-7
}

TEST(CollectivesAcrossRanks, IntegersWrapAndUnsupportedReductionsAreRefused) {
  const int32_t blocks[] = {INT32_MAX, 1};
  int32_t out = 0;
  ASSERT_EQ(detail::reduceBlocks("sum", mwrt::DType::I32, blocks, 2, 1, &out),
            MWRT_OK);
  EXPECT_EQ(out, INT32_MIN);
  EXPECT_EQ(detail::reduceBlocks("average", mwrt::DType::I32, blocks, 2, 1, &out),
            MWRT_INVALID_ARGUMENT);
  EXPECT_CONTAINS(mwrt_last_error(), "reduction 'average' of I32");
}

TEST(CollectivesAcrossRanks, PiecesAndTheirShapesAreChecked) {
  float data[12];
  TensorRef t(mwrt::DType::F32, {4, 3}, data);
  TensorRef p = detail::pieceOf(t, 0, 1, 2);
  EXPECT_EQ(p.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(p.data, data + 6);
  EXPECT_TRUE(detail::piecesAreConsecutive(t, 0));
  EXPECT_FALSE(detail::piecesAreConsecutive(t, 1));
  TensorRef q = detail::pieceOf(t, 1, 2, 3);
  EXPECT_EQ(q.data, data + 2);
  EXPECT_EQ(q.strides, (std::vector<int64_t>{3, 1}));

  KernelAttrs attrs;
  attrs.setInt("scatter_axis", 0).setString("reduction", "sum");
  detail::BoundKernel k;
  k.kind = OpKind::MeshReduceScatter;
  k.attrs = &attrs;
  k.ins = {t};
  k.outs = {TensorRef(mwrt::DType::F32, {2, 3}, data)};
  std::string reduction;
  int64_t axis = -1;
  EXPECT_EQ(detail::checkCollective(k, 2, reduction, axis), MWRT_OK);
  EXPECT_EQ(reduction, "sum");
  EXPECT_EQ(axis, 0);
  EXPECT_EQ(detail::checkCollective(k, 4, reduction, axis),
            MWRT_INVALID_ARGUMENT);
  EXPECT_CONTAINS(mwrt_last_error(),
                  "on 4 ranks, the operand and result shapes must differ by a "
                  "factor 4 along axis 0");
}

} // namespace
} // namespace mwrt::test
