//===- EvalRanksTest.cpp - Unit tests of the evaluator's simulated ranks --===//
//
// Checks evaluateRanks, the oracle of --mw-zero (DESIGN.md decisions 6, 9 and
// 13), on small hand-written SPMD programs: each collective against sums
// computed by hand, the reduction order and the rounding rules of
// docs/mw-eval.md, the round trips between the collectives, the errors for
// meshes it cannot simulate, and a data-parallel training step written by
// hand twice (one rank on the whole batch, two ranks on half a batch each
// with an all_reduce of the gradient) that must give the same weights, before
// any pass produces such a program.
//
//===----------------------------------------------------------------------===//

#include "memwall/Eval/Evaluator.h"

#include "memwall/Dialect/MW/IR/MWDialect.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Mesh/IR/MeshDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::mw;
using namespace mlir::mw::eval;

namespace {

/// A tensor of `kind` holding `values`, rounded to the kind.
Tensor make(ElemKind kind, ArrayRef<int64_t> shape, ArrayRef<double> values) {
  Tensor t = Tensor::zeros(kind, shape);
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numElements())
      << "test bug: value count does not match the shape";
  for (int64_t n = 0, e = std::min<int64_t>(values.size(), t.numElements());
       n < e; ++n) {
    if (t.isFloat())
      t.f[n] = roundToKind(kind, static_cast<float>(values[n]));
    else
      t.i[n] = static_cast<int64_t>(values[n]);
  }
  return t;
}
Tensor f32(ArrayRef<int64_t> shape, ArrayRef<double> values) {
  return make(ElemKind::F32, shape, values);
}

/// Uniform values in [-1, 1), rounded to `kind`.
Tensor random(ElemKind kind, ArrayRef<int64_t> shape, std::mt19937 &rng) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  Tensor t = Tensor::zeros(kind, shape);
  for (float &x : t.f)
    x = roundToKind(kind, static_cast<float>(dist(rng)));
  return t;
}

/// Expects `t` to hold exactly `expected` (values exact by construction).
void expectExact(const Tensor &t, ArrayRef<double> expected,
                 const std::string &what = "") {
  ASSERT_EQ(t.numElements(), static_cast<int64_t>(expected.size())) << what;
  for (size_t n = 0; n < expected.size(); ++n)
    EXPECT_EQ(t.at(n), expected[n]) << what << " element " << n;
}

/// Expects bit-identical tensors.
void expectSameBits(const Tensor &a, const Tensor &b,
                    const std::string &what = "") {
  ASSERT_EQ(a.kind, b.kind) << what;
  ASSERT_EQ(ArrayRef<int64_t>(a.shape), ArrayRef<int64_t>(b.shape)) << what;
  EXPECT_EQ(a.i, b.i) << what;
  ASSERT_EQ(a.f.size(), b.f.size()) << what;
  for (size_t n = 0; n < a.f.size(); ++n)
    EXPECT_EQ(std::memcmp(&a.f[n], &b.f[n], sizeof(float)), 0)
        << what << " element " << n << ": " << a.f[n] << " vs " << b.f[n];
}

class EvalRanksTest : public ::testing::Test {
protected:
  EvalRanksTest()
      : ctx(MLIRContext::Threading::DISABLED),
        handler(&ctx, [this](Diagnostic &d) {
          diagnostics += d.str() + "\n";
          for (const Diagnostic &note : d.getNotes())
            diagnostics += "note: " + note.str() + "\n";
          return success();
        }) {
    ctx.loadDialect<MWDialect, func::FuncDialect, mesh::MeshDialect,
                    tensor::TensorDialect, memref::MemRefDialect,
                    bufferization::BufferizationDialect>();
    ctx.printOpOnDiagnostic(false);
  }

  /// Parses `ir` and returns its first function.
  func::FuncOp parse(StringRef ir) {
    diagnostics.clear();
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(ir, &ctx);
    if (!module) {
      ADD_FAILURE() << "test IR does not parse:\n" << diagnostics << ir.str();
      return {};
    }
    auto funcs = module->getOps<func::FuncOp>();
    func::FuncOp f = funcs.empty() ? func::FuncOp() : *funcs.begin();
    if (!f)
      ADD_FAILURE() << "no function";
    modules.push_back(std::move(module));
    return f;
  }

  /// A module with `mesh.mesh @dp(shape = <ranks>)` and one function.
  func::FuncOp parseOnMesh(int64_t ranks, StringRef func) {
    return parse(
        (llvm::formatv("mesh.mesh @dp(shape = {0})\n", ranks) + func).str());
  }

  /// Evaluates `f` on the ranks, expecting success.
  SmallVector<SmallVector<Tensor>>
  runRanks(func::FuncOp f, ArrayRef<SmallVector<Tensor>> argsPerRank) {
    diagnostics.clear();
    if (!f)
      return {};
    auto r = evaluateRanks(f, argsPerRank);
    if (failed(r)) {
      ADD_FAILURE() << "evaluation failed: " << diagnostics;
      return SmallVector<SmallVector<Tensor>>(
          argsPerRank.size(), SmallVector<Tensor>(f.getNumResults()));
    }
    return std::move(*r);
  }

  /// Evaluates `f` with one argument per rank, each rank's value in `args`.
  SmallVector<SmallVector<Tensor>> runEach(func::FuncOp f,
                                           ArrayRef<Tensor> args) {
    SmallVector<SmallVector<Tensor>> perRank;
    for (const Tensor &t : args)
      perRank.push_back({t});
    return runRanks(f, perRank);
  }

  /// Evaluates `f` on the ranks, expecting failure; returns the diagnostics.
  std::string runError(func::FuncOp f,
                       ArrayRef<SmallVector<Tensor>> argsPerRank) {
    diagnostics.clear();
    if (!f)
      return "";
    auto r = evaluateRanks(f, argsPerRank);
    EXPECT_TRUE(failed(r)) << "evaluation unexpectedly succeeded";
    return diagnostics;
  }

  MLIRContext ctx;
  ScopedDiagnosticHandler handler;
  std::string diagnostics;
  std::vector<OwningOpRef<ModuleOp>> modules;
};

/// A function of one argument returning `op`'s result `%r`.
std::string oneOp(StringRef argType, StringRef op, StringRef resultType) {
  return llvm::formatv(R"mlir(
    func.func @f(%x: {0}) -> {2} {{
      {1}
      return %r : {2}
    })mlir",
                       argType, op, resultType)
      .str();
}

//===----------------------------------------------------------------------===//
// all_reduce
//===----------------------------------------------------------------------===//

TEST_F(EvalRanksTest, AllReduceSumOverTwoRanks) {
  func::FuncOp f = parseOnMesh(
      2, oneOp("tensor<2x2xf32>",
               "%r = mesh.all_reduce %x on @dp mesh_axes = [0] reduction = "
               "<sum> : tensor<2x2xf32> -> tensor<2x2xf32>",
               "tensor<2x2xf32>"));
  auto out = runEach(f, {f32({2, 2}, {1, 2, 3, 4}),
                         f32({2, 2}, {10, 20, 30, 40.5})});
  ASSERT_EQ(out.size(), 2u);
  for (int r = 0; r < 2; ++r)
    expectExact(out[r][0], {11, 22, 33, 44.5}, "rank " + std::to_string(r));
}

TEST_F(EvalRanksTest, AllReduceKindsOverFourRanks) {
  // sum is the default reduction.
  func::FuncOp f = parseOnMesh(4, R"mlir(
    func.func @f(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>,
        tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
      %s = mesh.all_reduce %x on @dp mesh_axes = [0] : tensor<3xf32> -> tensor<3xf32>
      %mx = mesh.all_reduce %x on @dp mesh_axes = [0] reduction = <max> : tensor<3xf32> -> tensor<3xf32>
      %mn = mesh.all_reduce %x on @dp mesh_axes = [0] reduction = <min> : tensor<3xf32> -> tensor<3xf32>
      %p = mesh.all_reduce %x on @dp mesh_axes = [0] reduction = <product> : tensor<3xf32> -> tensor<3xf32>
      %a = mesh.all_reduce %x on @dp mesh_axes = [0] reduction = <average> : tensor<3xf32> -> tensor<3xf32>
      return %s, %mx, %mn, %p, %a : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
    })mlir");
  auto out = runEach(f, {f32({3}, {1, -2, 0.5}), f32({3}, {2, 4, 0.5}),
                         f32({3}, {-3, 1, 2}), f32({3}, {4, -1, 3})});
  ASSERT_EQ(out.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    std::string at = "rank " + std::to_string(r);
    // 1+2-3+4, -2+4+1-1, 0.5+0.5+2+3
    expectExact(out[r][0], {4, 2, 6}, at + " sum");
    expectExact(out[r][1], {4, 4, 3}, at + " max");
    expectExact(out[r][2], {-3, -2, 0.5}, at + " min");
    // 1*2*-3*4, -2*4*1*-1, 0.5*0.5*2*3
    expectExact(out[r][3], {-24, 8, 1.5}, at + " product");
    expectExact(out[r][4], {1, 0.5, 1.5}, at + " average");
  }
}

TEST_F(EvalRanksTest, AllReduceSumsInRankOrderFromRankZero) {
  // In f32, 1e8 + 1 == 1e8 (the spacing there is 8): rank order gives
  // ((1e8 + 1) - 1e8) + 1 = 1; another order would give 0 or 2.
  func::FuncOp f = parseOnMesh(
      4, oneOp("tensor<1xf32>",
               "%r = mesh.all_reduce %x on @dp mesh_axes = [0] : "
               "tensor<1xf32> -> tensor<1xf32>",
               "tensor<1xf32>"));
  auto out = runEach(f, {f32({1}, {1e8}), f32({1}, {1}), f32({1}, {-1e8}),
                         f32({1}, {1})});
  for (int r = 0; r < 4; ++r)
    expectExact(out[r][0], {1}, "rank " + std::to_string(r));
}

TEST_F(EvalRanksTest, AllReduceBF16RoundsOnceOnTheResult) {
  // 1 + 2^-8 + 2^-8 = 1 + 2^-7, a bf16 value; rounding after each addition
  // would lose each 2^-8 (1 + 2^-8 is a tie, to the even 1).
  func::FuncOp f = parseOnMesh(
      3, oneOp("tensor<1xbf16>",
               "%r = mesh.all_reduce %x on @dp mesh_axes = [0] : "
               "tensor<1xbf16> -> tensor<1xbf16>",
               "tensor<1xbf16>"));
  double tiny = std::ldexp(1.0, -8);
  auto out = runEach(f, {make(ElemKind::BF16, {1}, {1}),
                         make(ElemKind::BF16, {1}, {tiny}),
                         make(ElemKind::BF16, {1}, {tiny})});
  for (int r = 0; r < 3; ++r)
    expectExact(out[r][0], {1 + std::ldexp(1.0, -7)},
                "rank " + std::to_string(r));
}

TEST_F(EvalRanksTest, AllReduceConvertsToTheResultTypeFirst) {
  // Each operand is converted to the result's type before the sum: f32 ->
  // i64 truncates each 2.75 to 2 (4, not 5); i32 -> f32 sums in f32; f32 ->
  // bf16 rounds each operand to bf16 first.
  func::FuncOp f = parseOnMesh(2, R"mlir(
    func.func @f(%x: tensor<2xf32>, %i: tensor<2xi32>) -> (tensor<2xi64>, tensor<2xf32>, tensor<2xbf16>) {
      %a = mesh.all_reduce %x on @dp mesh_axes = [0] : tensor<2xf32> -> tensor<2xi64>
      %b = mesh.all_reduce %i on @dp mesh_axes = [0] : tensor<2xi32> -> tensor<2xf32>
      %c = mesh.all_reduce %x on @dp mesh_axes = [0] : tensor<2xf32> -> tensor<2xbf16>
      return %a, %b, %c : tensor<2xi64>, tensor<2xf32>, tensor<2xbf16>
    })mlir");
  // Rank 0's 1 + 2^-8 is a bf16 tie and converts to the even 1; rank 1's
  // 2^-8 is exact: the bf16 sum is 1 + 2^-8, a tie again, so 1. Summing the
  // f32 operands first would give 1 + 2^-7, exact in bf16.
  double tie = 1 + std::ldexp(1.0, -8), tiny = std::ldexp(1.0, -8);
  Tensor i = make(ElemKind::I32, {2}, {7, -3});
  auto out = runRanks(f, {{f32({2}, {2.75, tie}), i},
                          {f32({2}, {2.75, tiny}), i}});
  for (int r = 0; r < 2; ++r) {
    std::string at = "rank " + std::to_string(r);
    expectExact(out[r][0], {4, 1}, at + " f32 -> i64");
    expectExact(out[r][1], {14, -6}, at + " i32 -> f32");
    expectExact(out[r][2], {5.5, 1}, at + " f32 -> bf16");
  }
}

//===----------------------------------------------------------------------===//
// reduce_scatter, all_gather, all_slice
//===----------------------------------------------------------------------===//

TEST_F(EvalRanksTest, ReduceScatterGivesRankRItsPieceOfTheSum) {
  func::FuncOp f = parseOnMesh(2, R"mlir(
    func.func @f(%x: tensor<4x2xf32>) -> (tensor<2x2xf32>, tensor<4x1xf32>) {
      %a = mesh.reduce_scatter %x on @dp mesh_axes = [0] scatter_axis = 0 : tensor<4x2xf32> -> tensor<2x2xf32>
      %b = mesh.reduce_scatter %x on @dp mesh_axes = [0] scatter_axis = 1 : tensor<4x2xf32> -> tensor<4x1xf32>
      return %a, %b : tensor<2x2xf32>, tensor<4x1xf32>
    })mlir");
  // The sum is [[11, 22], [33, 44], [55, 66], [77, 88]].
  auto out = runEach(f, {f32({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}),
                         f32({4, 2}, {10, 20, 30, 40, 50, 60, 70, 80})});
  expectExact(out[0][0], {11, 22, 33, 44}, "rank 0, axis 0");
  expectExact(out[1][0], {55, 66, 77, 88}, "rank 1, axis 0");
  expectExact(out[0][1], {11, 33, 55, 77}, "rank 0, axis 1");
  expectExact(out[1][1], {22, 44, 66, 88}, "rank 1, axis 1");
}

TEST_F(EvalRanksTest, AllGatherConcatenatesInRankOrder) {
  func::FuncOp f = parseOnMesh(3, R"mlir(
    func.func @f(%x: tensor<1x2xi64>) -> (tensor<3x2xi64>, tensor<1x6xi64>) {
      %a = mesh.all_gather %x on @dp mesh_axes = [0] gather_axis = 0 : tensor<1x2xi64> -> tensor<3x2xi64>
      %b = mesh.all_gather %x on @dp mesh_axes = [0] gather_axis = 1 : tensor<1x2xi64> -> tensor<1x6xi64>
      return %a, %b : tensor<3x2xi64>, tensor<1x6xi64>
    })mlir");
  auto out = runEach(f, {make(ElemKind::I64, {1, 2}, {1, 2}),
                         make(ElemKind::I64, {1, 2}, {3, 4}),
                         make(ElemKind::I64, {1, 2}, {5, 6})});
  for (int r = 0; r < 3; ++r) {
    expectExact(out[r][0], {1, 2, 3, 4, 5, 6}, "axis 0");
    expectExact(out[r][1], {1, 2, 3, 4, 5, 6}, "axis 1");
  }
}

TEST_F(EvalRanksTest, AllSliceKeepsRankRsPieceOfItsOwnValue) {
  func::FuncOp f = parseOnMesh(2, R"mlir(
    func.func @f(%x: tensor<2x4xf32>) -> (tensor<1x4xf32>, tensor<2x2xf32>) {
      %i = mesh.process_linear_index on @dp : index
      %a = mesh.all_slice %x on @dp mesh_axes = [0] slice_axis = 0 : tensor<2x4xf32> -> tensor<1x4xf32>
      %b = mesh.all_slice %x on @dp mesh_axes = [0] slice_axis = 1 : tensor<2x4xf32> -> tensor<2x2xf32>
      return %a, %b : tensor<1x4xf32>, tensor<2x2xf32>
    })mlir");
  // No communication: each rank slices its own value.
  auto out = runEach(f, {f32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}),
                         f32({2, 4}, {10, 20, 30, 40, 50, 60, 70, 80})});
  expectExact(out[0][0], {1, 2, 3, 4});
  expectExact(out[1][0], {50, 60, 70, 80});
  expectExact(out[0][1], {1, 2, 5, 6});
  expectExact(out[1][1], {30, 40, 70, 80});
}

TEST_F(EvalRanksTest, GatherOfScatterIsTheAllReduceAndSliceOfGatherIsId) {
  // all_gather(reduce_scatter(x)) == all_reduce(x), bit for bit (the same
  // rank-order sums), and all_slice(all_gather(x)) == x, on random bf16 and
  // f32 values over 4 ranks.
  func::FuncOp f = parseOnMesh(4, R"mlir(
    func.func @f(%x: tensor<8x3xf32>, %h: tensor<4x6xbf16>)
        -> (tensor<8x3xf32>, tensor<8x3xf32>, tensor<4x6xbf16>, tensor<4x6xbf16>, tensor<8x3xf32>) {
      %s = mesh.reduce_scatter %x on @dp mesh_axes = [0] scatter_axis = 0 : tensor<8x3xf32> -> tensor<2x3xf32>
      %g = mesh.all_gather %s on @dp mesh_axes = [0] gather_axis = 0 : tensor<2x3xf32> -> tensor<8x3xf32>
      %w = mw.wait %g : tensor<8x3xf32>
      %a = mesh.all_reduce %x on @dp mesh_axes = [0] : tensor<8x3xf32> -> tensor<8x3xf32>
      %hs = mesh.reduce_scatter %h on @dp mesh_axes = [0] scatter_axis = 0 : tensor<4x6xbf16> -> tensor<1x6xbf16>
      %hg = mesh.all_gather %hs on @dp mesh_axes = [0] gather_axis = 0 : tensor<1x6xbf16> -> tensor<4x6xbf16>
      %ha = mesh.all_reduce %h on @dp mesh_axes = [0] : tensor<4x6xbf16> -> tensor<4x6xbf16>
      %xg = mesh.all_gather %x on @dp mesh_axes = [0] gather_axis = 0 : tensor<8x3xf32> -> tensor<32x3xf32>
      %xs = mesh.all_slice %xg on @dp mesh_axes = [0] slice_axis = 0 : tensor<32x3xf32> -> tensor<8x3xf32>
      return %w, %a, %hg, %ha, %xs : tensor<8x3xf32>, tensor<8x3xf32>, tensor<4x6xbf16>, tensor<4x6xbf16>, tensor<8x3xf32>
    })mlir");
  std::mt19937 rng(7);
  SmallVector<SmallVector<Tensor>> args;
  for (int r = 0; r < 4; ++r)
    args.push_back({random(ElemKind::F32, {8, 3}, rng),
                    random(ElemKind::BF16, {4, 6}, rng)});
  auto out = runRanks(f, args);
  ASSERT_EQ(out.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    std::string at = "rank " + std::to_string(r);
    expectSameBits(out[r][0], out[r][1], at + " f32");
    expectSameBits(out[r][2], out[r][3], at + " bf16");
    expectSameBits(out[r][4], args[r][0], at + " slice of gather");
    expectSameBits(out[r][1], out[0][1], at + " same on every rank");
  }
}

TEST_F(EvalRanksTest, CollectivesBetweenKernelsOnBuffers) {
  // A bufferized step: each rank's kernel writes its own buffer, the
  // collective reads it as a tensor (kernel bodies hold mw ops only), and the
  // next kernel reads the collective's result.
  func::FuncOp f = parseOnMesh(2, R"mlir(
    func.func @f(%x: memref<4xf32>) -> tensor<2xf32> {
      %a = memref.alloc() : memref<4xf32>
      mw.kernel ins(%x : memref<4xf32>) outs(%a : memref<4xf32>) {
      ^bb0(%v: tensor<4xf32>):
        %d = mw.add %v, %v : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
        mw.yield %d : tensor<4xf32>
      }
      %t = bufferization.to_tensor %a : memref<4xf32>
      %s = mesh.reduce_scatter %t on @dp mesh_axes = [0] scatter_axis = 0 : tensor<4xf32> -> tensor<2xf32>
      %e = tensor.empty() : tensor<2xf32>
      %r = mw.kernel ins(%s : tensor<2xf32>) outs(%e : tensor<2xf32>) -> tensor<2xf32> {
      ^bb0(%v: tensor<2xf32>):
        %n = mw.neg %v : tensor<2xf32>
        mw.yield %n : tensor<2xf32>
      }
      return %r : tensor<2xf32>
    })mlir");
  auto out = runEach(f, {f32({4}, {1, 2, 3, 4}), f32({4}, {10, 20, 30, 40})});
  expectExact(out[0][0], {-22, -44});
  expectExact(out[1][0], {-66, -88});
}

//===----------------------------------------------------------------------===//
// One rank, the f64 mode
//===----------------------------------------------------------------------===//

TEST_F(EvalRanksTest, OneRankWithoutCollectivesIsEvaluate) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%x: tensor<2x3xbf16>, %w: tensor<3x2xbf16>) -> (tensor<2x2xbf16>, tensor<2xf32>) {
      %y = mw.matmul %x, %w : (tensor<2x3xbf16>, tensor<3x2xbf16>) -> tensor<2x2xbf16>
      %c = mw.cast %y : tensor<2x2xbf16> to tensor<2x2xf32>
      %s = mw.reduce_sum %c axes = [1] : tensor<2x2xf32> -> tensor<2xf32>
      return %y, %s : tensor<2x2xbf16>, tensor<2xf32>
    })mlir");
  std::mt19937 rng(3);
  SmallVector<Tensor> args = {random(ElemKind::BF16, {2, 3}, rng),
                              random(ElemKind::BF16, {3, 2}, rng)};
  FailureOr<SmallVector<Tensor>> one = evaluate(f, args);
  ASSERT_TRUE(succeeded(one)) << diagnostics;
  auto ranks = runRanks(f, {args});
  ASSERT_EQ(ranks.size(), 1u);
  for (size_t k = 0; k < one->size(); ++k)
    expectSameBits(ranks[0][k], (*one)[k], "result " + std::to_string(k));
}

TEST_F(EvalRanksTest, EvaluateRunsAOneRankMesh) {
  func::FuncOp f = parseOnMesh(
      1, oneOp("tensor<2xf32>",
               "%r = mesh.all_gather %x on @dp mesh_axes = [0] gather_axis = "
               "0 : tensor<2xf32> -> tensor<2xf32>",
               "tensor<2xf32>"));
  FailureOr<SmallVector<Tensor>> out = evaluate(f, {f32({2}, {1.5, -2})});
  ASSERT_TRUE(succeeded(out)) << diagnostics;
  expectExact((*out)[0], {1.5, -2});
}

TEST_F(EvalRanksTest, F64ModeSumsInDouble) {
  // 1e8 + 1 is exact in double: the f64 mode keeps it.
  func::FuncOp f = parseOnMesh(
      2, oneOp("tensor<1xf32>",
               "%r = mesh.all_reduce %x on @dp mesh_axes = [0] : "
               "tensor<1xf32> -> tensor<1xf32>",
               "tensor<1xf32>"));
  SmallVector<SmallVector<Tensor64>> args = {{widen(f32({1}, {1e8}))},
                                             {widen(f32({1}, {1}))}};
  auto out = evaluateRanks64(f, args);
  ASSERT_TRUE(succeeded(out)) << diagnostics;
  EXPECT_EQ((*out)[0][0].f[0], 100000001.0);
  EXPECT_EQ((*out)[1][0].f[0], 100000001.0);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST_F(EvalRanksTest, MeshSizeMustEqualTheNumberOfRanks) {
  func::FuncOp f = parseOnMesh(
      8, oneOp("tensor<8xf32>",
               "%r = mesh.all_reduce %x on @dp mesh_axes = [0] : "
               "tensor<8xf32> -> tensor<8xf32>",
               "tensor<8xf32>"));
  Tensor x = f32({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(runError(f, {{x}, {x}, {x}, {x}}),
            "the step was compiled for 8 ranks (mesh @dp), evaluated on 4 "
            "ranks\n");
  diagnostics.clear();
  EXPECT_TRUE(failed(evaluate(f, {x})));
  EXPECT_EQ(diagnostics, "the step was compiled for 8 ranks (mesh @dp), "
                         "evaluated on 1 rank\n");
  FailureOr<std::optional<CollectiveMesh>> mesh = collectiveMesh(f);
  ASSERT_TRUE(succeeded(mesh) && mesh->has_value());
  EXPECT_EQ((*mesh)->name, "dp");
  EXPECT_EQ((*mesh)->ranks, 8);
}

TEST_F(EvalRanksTest, UnsupportedMeshesAreErrors) {
  func::FuncOp twoD = parse(R"mlir(
    mesh.mesh @grid(shape = 2x2)
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %r = mesh.all_reduce %x on @grid mesh_axes = [0, 1] : tensor<4xf32> -> tensor<4xf32>
      return %r : tensor<4xf32>
    })mlir");
  Tensor x = f32({4}, {1, 2, 3, 4});
  EXPECT_EQ(runError(twoD, {{x}, {x}, {x}, {x}}),
            "the evaluator simulates collectives over a 1-D mesh of static "
            "size, but mesh @grid has shape 2x2\n");

  func::FuncOp dynamic = parse(R"mlir(
    mesh.mesh @dp(shape = ?)
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %r = mesh.all_reduce %x on @dp mesh_axes = [0] : tensor<4xf32> -> tensor<4xf32>
      return %r : tensor<4xf32>
    })mlir");
  EXPECT_EQ(runError(dynamic, {{x}, {x}}),
            "the evaluator simulates collectives over a 1-D mesh of static "
            "size, but mesh @dp has shape ?\n");

  func::FuncOp noAxes = parseOnMesh(
      2, oneOp("tensor<4xf32>",
               "%r = mesh.all_reduce %x on @dp : tensor<4xf32> -> "
               "tensor<4xf32>",
               "tensor<4xf32>"));
  EXPECT_EQ(runError(noAxes, {{x}, {x}}),
            "the evaluator simulates collectives over mesh_axes = [0] of a "
            "1-D mesh, got []\n");

  func::FuncOp twoMeshes = parse(R"mlir(
    mesh.mesh @dp(shape = 2)
    mesh.mesh @tp(shape = 4)
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %a = mesh.all_reduce %x on @dp mesh_axes = [0] : tensor<4xf32> -> tensor<4xf32>
      %r = mesh.all_reduce %a on @tp mesh_axes = [0] : tensor<4xf32> -> tensor<4xf32>
      return %r : tensor<4xf32>
    })mlir");
  EXPECT_EQ(runError(twoMeshes, {{x}, {x}}),
            "collectives over mesh @dp (2 ranks) and mesh @tp (4 ranks): the "
            "evaluator simulates one group of ranks\n");
}

TEST_F(EvalRanksTest, UnsupportedReductionsAreErrors) {
  func::FuncOp f = parseOnMesh(
      2, oneOp("tensor<2xf32>",
               "%r = mesh.all_reduce %x on @dp mesh_axes = [0] reduction = "
               "<bitwise_and> : tensor<2xf32> -> tensor<2xf32>",
               "tensor<2xf32>"));
  Tensor x = f32({2}, {1, 2});
  EXPECT_EQ(runError(f, {{x}, {x}}),
            "the evaluator does not support reduction <bitwise_and> on f32 "
            "(it simulates sum, max, min, product, average on floats and "
            "bitwise_and/or/xor on integers)\n");
  func::FuncOp g = parseOnMesh(
      2, oneOp("tensor<2xi32>",
               "%r = mesh.all_reduce %x on @dp mesh_axes = [0] reduction = "
               "<generic> : tensor<2xi32> -> tensor<2xi32>",
               "tensor<2xi32>"));
  Tensor i = make(ElemKind::I32, {2}, {1, 2});
  EXPECT_EQ(runError(g, {{i}, {i}}),
            "the evaluator does not support reduction <generic> on i32 (it "
            "simulates sum, max, min, product, average on floats and "
            "bitwise_and/or/xor on integers)\n");
}

TEST_F(EvalRanksTest, ARanksErrorNamesTheRank) {
  func::FuncOp f = parseOnMesh(2, R"mlir(
    func.func @f(%t: tensor<4x2xf32>, %i: tensor<2xi64>) -> tensor<2x2xf32> {
      %e = mw.embedding %t, %i : (tensor<4x2xf32>, tensor<2xi64>) -> tensor<2x2xf32>
      %r = mesh.all_reduce %e on @dp mesh_axes = [0] : tensor<2x2xf32> -> tensor<2x2xf32>
      return %r : tensor<2x2xf32>
    })mlir");
  Tensor table = f32({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(runError(f, {{table, make(ElemKind::I64, {2}, {0, 3})},
                         {table, make(ElemKind::I64, {2}, {4, 1})}}),
            "embedding index 4 is out of range [0, 4)\nnote: on rank 1 of 2\n");
  EXPECT_EQ(runError(f, {{table, make(ElemKind::I64, {2}, {0, 3})}, {table}}),
            "expected 2 arguments, got 1\nnote: on rank 1 of 2\n");
  EXPECT_EQ(runError(f, {}), "cannot evaluate on zero ranks\n");
}

//===----------------------------------------------------------------------===//
// Data parallelism, by hand
//===----------------------------------------------------------------------===//

/// A linear model's training step, y = x w, loss = mean over the batch of
/// (y - label)^2 / 2, whose gradient x^T (y - label) / batch is written by
/// hand; `ranks` > 1 adds the data-parallel all_reduce of the gradient and
/// the scale by 1/ranks. `update` is the optimizer op, on %p and %grad.
std::string linearStep(int64_t batch, int64_t ranks, StringRef update,
                       StringRef stateArgs, StringRef stateTypes) {
  std::string reduce =
      ranks == 1
          ? "%grad = mw.mul %gl, %one : (tensor<3x2xf32>, tensor<f32>) -> "
            "tensor<3x2xf32>"
          : llvm::formatv(
                "%gs = mesh.all_reduce %gl on @dp mesh_axes = [0] "
                "reduction = <sum> : tensor<3x2xf32> -> tensor<3x2xf32>\n"
                "      %inv = mw.splat {0} : tensor<f32>\n"
                "      %grad = mw.mul %gs, %inv : (tensor<3x2xf32>, "
                "tensor<f32>) -> tensor<3x2xf32>",
                1.0 / static_cast<double>(ranks))
                .str();
  return llvm::formatv(R"mlir(
    mesh.mesh @dp(shape = {1})
    func.func @step(%p: tensor<3x2xf32> {{mw.name = "w", mw.role = #mw.role<param>},
                    %x: tensor<{0}x3xf32> {{mw.name = "x", mw.role = #mw.role<input>},
                    %label: tensor<{0}x2xf32> {{mw.name = "label", mw.role = #mw.role<label>}{3})
        -> (tensor<3x2xf32>{4}) {{
      %y = mw.matmul %x, %p : (tensor<{0}x3xf32>, tensor<3x2xf32>) -> tensor<{0}x2xf32>
      %d = mw.sub %y, %label : (tensor<{0}x2xf32>, tensor<{0}x2xf32>) -> tensor<{0}x2xf32>
      %xd = mw.matmul %x, %d {{transpose_lhs} : (tensor<{0}x3xf32>, tensor<{0}x2xf32>) -> tensor<3x2xf32>
      %b = mw.splat {5} : tensor<f32>
      %gl = mw.mul %xd, %b : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
      %one = mw.splat 1.0 : tensor<f32>
      {2}
      {6}
    })mlir",
                       batch, ranks, reduce, stateArgs, stateTypes,
                       1.0 / static_cast<double>(batch), update)
      .str();
}

/// Rows [begin, end) of a row-major 2-D tensor.
Tensor rows(const Tensor &t, int64_t begin, int64_t end) {
  int64_t cols = t.shape[1];
  Tensor out = Tensor::zeros(t.kind, {end - begin, cols});
  std::copy(t.f.begin() + begin * cols, t.f.begin() + end * cols,
            out.f.begin());
  return out;
}

/// Expects `a` within a relative 1e-6 of `b` (absolute 1e-7 near zero).
void expectClose(const Tensor &a, const Tensor &b, const std::string &what) {
  ASSERT_EQ(a.numElements(), b.numElements()) << what;
  for (int64_t n = 0; n < a.numElements(); ++n)
    EXPECT_NEAR(a.f[n], b.f[n], 1e-7 + 1e-6 * std::fabs(b.f[n]))
        << what << " element " << n;
}

TEST_F(EvalRanksTest, DataParallelSgdMatchesOneRankOnTheWholeBatch) {
  StringRef sgd = "%np = mw.sgd %p, %grad {lr = 0.5 : f64} : (tensor<3x2xf32>, "
                  "tensor<3x2xf32>) -> tensor<3x2xf32>\n"
                  "      return %np : tensor<3x2xf32>";
  func::FuncOp one = parse(linearStep(4, 1, sgd, "", ""));
  func::FuncOp two = parse(linearStep(2, 2, sgd, "", ""));
  std::mt19937 rng(11);
  Tensor w = random(ElemKind::F32, {3, 2}, rng);
  Tensor x = random(ElemKind::F32, {4, 3}, rng);
  Tensor label = random(ElemKind::F32, {4, 2}, rng);
  auto whole = runRanks(one, {{w, x, label}});
  auto halves = runRanks(two, {{w, rows(x, 0, 2), rows(label, 0, 2)},
                               {w, rows(x, 2, 4), rows(label, 2, 4)}});
  ASSERT_EQ(halves.size(), 2u);
  // The update moved the weights (the comparison is not of w with itself).
  EXPECT_GT(std::fabs(whole[0][0].f[0] - w.f[0]), 1e-3);
  expectClose(halves[0][0], whole[0][0], "rank 0");
  expectSameBits(halves[1][0], halves[0][0], "ranks agree");
}

TEST_F(EvalRanksTest, DataParallelAdamWMatchesOneRankOnTheWholeBatch) {
  StringRef adamw =
      "%np, %nm, %nv = mw.adamw %p, %grad, %m, %v, %t {lr = 0.01 : f64} : "
      "(tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, "
      "tensor<i64>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>)\n"
      "      return %np, %nm, %nv : tensor<3x2xf32>, tensor<3x2xf32>, "
      "tensor<3x2xf32>";
  StringRef stateArgs =
      ", %m: tensor<3x2xf32> {mw.name = \"m\", mw.role = "
      "#mw.role<optimizer_state>}, %v: tensor<3x2xf32> {mw.name = \"v\", "
      "mw.role = #mw.role<optimizer_state>}, %t: tensor<i64> {mw.name = "
      "\"t\", mw.role = #mw.role<optimizer_state>}";
  StringRef stateTypes = ", tensor<3x2xf32>, tensor<3x2xf32>";
  func::FuncOp one = parse(linearStep(4, 1, adamw, stateArgs, stateTypes));
  func::FuncOp two = parse(linearStep(2, 2, adamw, stateArgs, stateTypes));
  std::mt19937 rng(12);
  Tensor w = random(ElemKind::F32, {3, 2}, rng);
  Tensor x = random(ElemKind::F32, {4, 3}, rng);
  Tensor label = random(ElemKind::F32, {4, 2}, rng);
  // A second step: nonzero moments, step 2.
  Tensor m = random(ElemKind::F32, {3, 2}, rng);
  Tensor v = Tensor::zeros(ElemKind::F32, {3, 2});
  for (float &e : v.f)
    e = 0.01f * static_cast<float>(rng() % 100 + 1) / 100.0f;
  Tensor t = make(ElemKind::I64, {}, {2});
  auto whole = runRanks(one, {{w, x, label, m, v, t}});
  auto halves = runRanks(two, {{w, rows(x, 0, 2), rows(label, 0, 2), m, v, t},
                               {w, rows(x, 2, 4), rows(label, 2, 4), m, v, t}});
  ASSERT_EQ(halves.size(), 2u);
  EXPECT_GT(std::fabs(whole[0][0].f[0] - w.f[0]), 1e-4);
  const char *names[] = {"w", "m", "v"};
  for (int k = 0; k < 3; ++k) {
    expectClose(halves[0][k], whole[0][k], names[k]);
    expectSameBits(halves[1][k], halves[0][k],
                   std::string(names[k]) + ": ranks agree");
  }
}

} // namespace
