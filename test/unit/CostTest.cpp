//===- CostTest.cpp - Unit tests of the mw dialect's C++ API --------------===//
//
// Builds ops through the C++ API (as passes do) and checks the builders'
// inferred types, the cost interface and the verifiers.
//
//===----------------------------------------------------------------------===//

#include "memwall/Dialect/MW/IR/MWOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlir;

namespace {
class MWTest : public ::testing::Test {
protected:
  MWTest() : builder(&ctx) {
    ctx.loadDialect<mw::MWDialect, func::FuncDialect>();
    module = ModuleOp::create(builder.getUnknownLoc());
    builder.setInsertionPointToEnd(module->getBody());
  }

  RankedTensorType f32(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, builder.getF32Type());
  }

  /// A function whose arguments have `types`, with the builder inside it.
  func::FuncOp makeFunc(ArrayRef<Type> types) {
    auto func = builder.create<func::FuncOp>(
        builder.getUnknownLoc(), "f", builder.getFunctionType(types, {}));
    Block *entry = func.addEntryBlock();
    builder.setInsertionPointToStart(entry);
    return func;
  }

  MLIRContext ctx;
  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
};
} // namespace

TEST_F(MWTest, BroadcastShapes) {
  auto s = mw::broadcastShapes({4, 1}, {8});
  ASSERT_TRUE(succeeded(s));
  EXPECT_EQ(*s, (SmallVector<int64_t>{4, 8}));
  EXPECT_TRUE(failed(mw::broadcastShapes({4, 3}, {5})));
  auto scalar = mw::broadcastShapes({}, {2, 3});
  ASSERT_TRUE(succeeded(scalar));
  EXPECT_EQ(*scalar, (SmallVector<int64_t>{2, 3}));
}

TEST_F(MWTest, BinaryBuilderInfersBroadcastType) {
  func::FuncOp func = makeFunc({f32({4, 1}), f32({8})});
  auto add = builder.create<mw::AddOp>(
      builder.getUnknownLoc(), func.getArgument(0), func.getArgument(1));
  EXPECT_EQ(add.getType(), f32({4, 8}));
  EXPECT_EQ(cast<mw::CostOpInterface>(add.getOperation()).getFlops(), 32);
  EXPECT_EQ(cast<mw::CostOpInterface>(add.getOperation()).getBytesRead(),
            4 * 4 + 8 * 4);
  EXPECT_EQ(cast<mw::CostOpInterface>(add.getOperation()).getBytesWritten(),
            32 * 4);
  builder.create<func::ReturnOp>(builder.getUnknownLoc());
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(MWTest, MatmulFlopsCountMultiplyAndAdd) {
  func::FuncOp func = makeFunc({f32({2, 3, 5}), f32({7, 5})});
  auto mm = builder.create<mw::MatmulOp>(
      builder.getUnknownLoc(), f32({2, 3, 7}), func.getArgument(0),
      func.getArgument(1), /*transpose_lhs=*/false, /*transpose_rhs=*/true);
  EXPECT_EQ(mm.getFlops(), 2 * 2 * 3 * 7 * 5);
  builder.create<func::ReturnOp>(builder.getUnknownLoc());
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(MWTest, CausalAttentionCountsTheLowerTriangle) {
  RankedTensorType qkv = f32({1, 2, 4, 8});
  func::FuncOp func = makeFunc({qkv, qkv, qkv});
  auto att = builder.create<mw::AttentionOp>(
      builder.getUnknownLoc(), qkv, f32({1, 2, 4}), func.getArgument(0),
      func.getArgument(1), func.getArgument(2), /*causal=*/true,
      /*scale=*/nullptr);
  int64_t scores = 2 * (4 * 5 / 2);
  EXPECT_EQ(att.getFlops(), 2 * scores * (8 + 8) + 5 * scores);
  EXPECT_DOUBLE_EQ(att.getEffectiveScale(), 1.0 / std::sqrt(8.0));
  builder.create<func::ReturnOp>(builder.getUnknownLoc());
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(MWTest, VerifierRejectsMismatchedContraction) {
  func::FuncOp func = makeFunc({f32({4, 64}), f32({32, 8})});
  builder.create<mw::MatmulOp>(builder.getUnknownLoc(), f32({4, 8}),
                               func.getArgument(0), func.getArgument(1), false,
                               false);
  builder.create<func::ReturnOp>(builder.getUnknownLoc());
  std::string message;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  EXPECT_TRUE(failed(verify(*module)));
  EXPECT_EQ(message, "'mw.matmul' op contracting dimensions differ: 64 vs 32");
}

TEST_F(MWTest, TensorBytesRoundsSubByteTypesUp) {
  EXPECT_EQ(mw::detail::tensorBytes(f32({3, 5})), 60);
  EXPECT_EQ(
      mw::detail::tensorBytes(RankedTensorType::get({3}, builder.getI1Type())),
      1);
  EXPECT_EQ(mw::detail::tensorBytes(RankedTensorType::get(
                {ShapedType::kDynamic}, builder.getF32Type())),
            0);
  EXPECT_EQ(mw::detail::tensorBytes(builder.getF32Type()), 0);
}

TEST_F(MWTest, LossScalingOpsCost) {
  RankedTensorType scalar = f32({});
  RankedTensorType i64 = RankedTensorType::get({}, builder.getI64Type());
  RankedTensorType half = RankedTensorType::get({6}, builder.getF16Type());
  func::FuncOp func = makeFunc({f32({4, 8}), half, scalar, i64});
  Location loc = builder.getUnknownLoc();
  Value a = func.getArgument(0), h = func.getArgument(1);
  Value s = func.getArgument(2), n = func.getArgument(3);
  // found_inf: one FLOP per input element; reads every operand, writes 4 bytes.
  auto found = builder.create<mw::FoundInfOp>(loc, scalar, ValueRange{a, h});
  auto costOf = [](Operation *op) { return cast<mw::CostOpInterface>(op); };
  EXPECT_EQ(costOf(found).getFlops(), 32 + 6);
  EXPECT_EQ(costOf(found).getBytesRead(), 32 * 4 + 6 * 2);
  EXPECT_EQ(costOf(found).getBytesWritten(), 4);
  // select: no arithmetic; reads the flag and both values.
  auto sel = builder.create<mw::SelectOp>(loc, a.getType(), found, a, a);
  EXPECT_EQ(costOf(sel).getFlops(), 0);
  EXPECT_EQ(costOf(sel).getBytesRead(), 4 + 2 * 32 * 4);
  EXPECT_EQ(costOf(sel).getBytesWritten(), 32 * 4);
  auto update = builder.create<mw::LossScaleUpdateOp>(
      loc, TypeRange{scalar, i64, i64, i64}, found, s, n, n, n,
      builder.getI64IntegerAttr(1000), builder.getI64IntegerAttr(2),
      builder.getF64FloatAttr(1.0), builder.getF64FloatAttr(2.0));
  EXPECT_EQ(costOf(update).getFlops(), 4);
  EXPECT_EQ(costOf(update).getBytesRead(), 4 + 4 + 3 * 8);
  EXPECT_EQ(costOf(update).getBytesWritten(), 4 + 3 * 8);
  builder.create<func::ReturnOp>(loc);
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(MWTest, FetchWritesTheDeviceCopyOnly) {
  RankedTensorType bf16 = RankedTensorType::get({64, 192}, builder.getBF16Type());
  func::FuncOp func = makeFunc({bf16});
  func.setArgAttr(0, mw::MWDialect::kRoleAttrName,
                  mw::RoleAttr::get(&ctx, mw::Role::param));
  func.setArgAttr(0, mw::MWDialect::kOffloadAttrName,
                  builder.getStringAttr("cpu"));
  Location loc = builder.getUnknownLoc();
  // Host memory is not the device memory the roofline counts: 0 bytes read.
  auto fetch = builder.create<mw::FetchOp>(loc, bf16, func.getArgument(0), 3);
  auto cost = cast<mw::CostOpInterface>(fetch.getOperation());
  EXPECT_EQ(cost.getFlops(), 0);
  EXPECT_EQ(cost.getBytesRead(), 0);
  EXPECT_EQ(cost.getBytesWritten(), 64 * 192 * 2);
  auto wait =
      builder.create<mw::WaitOp>(loc, bf16, fetch.getResult(), ValueRange());
  EXPECT_EQ(cast<mw::CostOpInterface>(wait.getOperation()).getBytesWritten(),
            0);
  builder.create<func::ReturnOp>(loc);
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(MWTest, BuildersInferResultTypes) {
  RankedTensorType x = f32({2, 3, 8});
  func::FuncOp func = makeFunc(
      {x, f32({16, 8}), f32({8}), f32({2, 4, 5, 8}),
       RankedTensorType::get({2, 3}, builder.getI32Type()), f32({10, 8})});
  Location loc = builder.getUnknownLoc();
  Value in = func.getArgument(0), w = func.getArgument(1);
  Value g = func.getArgument(2), q = func.getArgument(3);
  Value ids = func.getArgument(4), table = func.getArgument(5);
  auto mm = builder.create<mw::MatmulOp>(loc, in, w, false, true);
  EXPECT_EQ(mm.getType(), f32({2, 3, 16}));
  auto sum = builder.create<mw::ReduceSumOp>(loc, in, ArrayRef<int64_t>{0, 2});
  EXPECT_EQ(sum.getType(), f32({3}));
  auto mean = builder.create<mw::ReduceMeanOp>(loc, in, ArrayRef<int64_t>{2},
                                               /*keepdims=*/true);
  EXPECT_EQ(mean.getType(), f32({2, 3, 1}));
  auto t =
      builder.create<mw::TransposeOp>(loc, q, ArrayRef<int64_t>{0, 2, 1, 3});
  EXPECT_EQ(t.getType(), f32({2, 5, 4, 8}));
  auto ln = builder.create<mw::LayerNormOp>(loc, in, g, g);
  EXPECT_EQ(ln.getMean().getType(), f32({2, 3}));
  auto rms = builder.create<mw::RmsNormOp>(loc, in, g);
  EXPECT_EQ(rms.getRstd().getType(), f32({2, 3}));
  auto att = builder.create<mw::AttentionOp>(loc, q, q, q, /*causal=*/true);
  EXPECT_EQ(att.getLse().getType(), f32({2, 4, 5}));
  auto emb = builder.create<mw::EmbeddingOp>(loc, table, ids);
  EXPECT_EQ(emb.getType(), f32({2, 3, 8}));
  auto ce = builder.create<mw::CrossEntropyOp>(loc, emb, ids);
  EXPECT_EQ(ce.getType(), f32({}));
  auto sl = builder.create<mw::SliceOp>(loc, in, ArrayRef<int64_t>{0, 1, 0},
                                        ArrayRef<int64_t>{2, 2, 8});
  EXPECT_EQ(sl.getType(), f32({2, 2, 8}));
  auto cat = builder.create<mw::ConcatOp>(loc, ValueRange{in, sl}, 1);
  EXPECT_EQ(cat.getType(), f32({2, 5, 8}));
  builder.create<func::ReturnOp>(loc);
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(MWTest, KvCacheOpsCostWhatTheyTouch) {
  // An i8 cache of 64 blocks of 16 slots, 2 heads of 32; 8 new tokens.
  auto cache = RankedTensorType::get({64, 16, 2, 32}, builder.getI8Type());
  auto i32 = [&](ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, builder.getI32Type());
  };
  func::FuncOp func = makeFunc({cache, f32({8, 2, 32}), i32({8}),
                                f32({4, 4, 2, 32}), i32({4, 8}), i32({4})});
  Location loc = builder.getUnknownLoc();
  auto scale = builder.getDenseF32ArrayAttr({0.5f});
  auto write = builder.create<mw::KvCacheWriteOp>(
      loc, cache, func.getArgument(0), func.getArgument(1),
      func.getArgument(2), scale);
  ASSERT_TRUE(succeeded(verify(write)));
  auto cost = cast<mw::CostOpInterface>(write.getOperation());
  EXPECT_EQ(cost.getFlops(), 8 * 2 * 32); // one division per element
  EXPECT_EQ(cost.getBytesRead(), 8 * 2 * 32 * 4 + 8 * 4); // not the cache
  EXPECT_EQ(cost.getBytesWritten(), 8 * 2 * 32);          // i8 codes
  auto attn = builder.create<mw::PagedAttentionOp>(
      loc, f32({4, 4, 2, 32}), func.getArgument(3), write, write,
      func.getArgument(4), func.getArgument(5), /*scale=*/nullptr, scale,
      scale);
  ASSERT_TRUE(succeeded(verify(attn)));
  // 4 * 4 * 2 query rows, each against at most 8 blocks * 16 = 128 keys.
  int64_t scores = 4 * 4 * 2 * 128;
  auto attnCost = cast<mw::CostOpInterface>(attn.getOperation());
  EXPECT_EQ(attnCost.getFlops(), 4 * scores * 32 + 5 * scores);
  // Query, tables, lengths, then 4 * 128 tokens of 2 * 32 i8 from each cache.
  EXPECT_EQ(attnCost.getBytesRead(),
            4 * 4 * 2 * 32 * 4 + 4 * 8 * 4 + 4 * 4 + 2 * 512 * 64);
  EXPECT_DOUBLE_EQ(attn.getEffectiveScale(), 1.0 / std::sqrt(32.0));
}
