//===- RematPlanTest.cpp - --mw-remat's plans of long chains --------------===//
//
// planRemat and planStaged walk a dropped value's definitions depth first, as
// deep as the chain of recomputed ops: a step without blocks (a chain of
// 50000 pointwise ops) ran the recursive walk out of the main thread's 8 MB
// stack. They walk on an explicit stack now; here on a thread of 256 KB,
// where the recursion failed at a few thousand ops. A plan dropping every
// value of such a chain without sharing recomputes the chain down to its
// start for each use, a quadratic plan: planRemat stops at
// kMaxRecomputedForwards forward passes and marks it oversized. And the
// reverse delete's range profile against plain loops.
//
//===----------------------------------------------------------------------===//

#include "RematGraph.h"

#include "memwall/Analysis/StepStructure.h"
#include "memwall/Analysis/Targets.h"
#include "memwall/Dialect/MW/IR/MWOps.h"
#include "memwall/Dialect/MW/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <pthread.h>

#include <functional>
#include <random>
#include <string>

using namespace mlir;
using namespace mlir::mw;
using namespace mlir::mw::remat;

namespace {

/// A forward pass of one matmul and `n` gelus in a row, no blocks.
std::string chain(int n) {
  std::string ir =
      "func.func @forward(%w: tensor<8x4xf32> {mw.name = \"w\", mw.role = "
      "#mw.role<param>}, %x: tensor<2x8xf32> {mw.name = \"x\", mw.role = "
      "#mw.role<input>}, %l: tensor<2xi32> {mw.name = \"labels\", mw.role = "
      "#mw.role<label>}) -> (tensor<f32> {mw.name = \"loss\", mw.role = "
      "#mw.role<output>}) {\n"
      "  %v0 = mw.matmul %x, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> "
      "tensor<2x4xf32>\n";
  for (int i = 1; i <= n; ++i)
    ir += "  %v" + std::to_string(i) + " = mw.gelu %v" +
          std::to_string(i - 1) + " : tensor<2x4xf32>\n";
  ir += "  %loss = mw.cross_entropy %v" + std::to_string(n) +
        ", %l : (tensor<2x4xf32>, tensor<2xi32>) -> tensor<f32>\n"
        "  return %loss : tensor<f32>\n}\n";
  return ir;
}

/// Runs `fn` on a thread with a `bytes` stack.
void onSmallStack(size_t bytes, const std::function<void()> &fn) {
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, bytes), 0);
  pthread_t thread;
  auto trampoline = [](void *arg) -> void * {
    (*static_cast<const std::function<void()> *>(arg))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attr, trampoline,
                           const_cast<std::function<void()> *>(&fn)),
            0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
}

class RematPlanTest : public ::testing::Test {
protected:
  RematPlanTest() { ctx.loadDialect<MWDialect, func::FuncDialect>(); }

  /// The training step of chain(n), with SGD.
  func::FuncOp step(int n) {
    module = parseSourceString<ModuleOp>(chain(n), &ctx);
    EXPECT_TRUE(module);
    PassManager pm(&ctx);
    MwAutodiffOptions options;
    options.optimizer = "sgd";
    pm.addPass(createMwAutodiff(options));
    EXPECT_TRUE(succeeded(pm.run(*module)));
    return module->lookupSymbol<func::FuncOp>("train_step");
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
};

TEST_F(RematPlanTest, ALongChainPlansOnASmallStack) {
  const int n = 20000;
  func::FuncOp f = step(n);
  ASSERT_TRUE(f);
  StepStructure info(f);
  StepGraph g(info, getDefaultTarget(), /*flopsCost=*/false);
  ASSERT_GE(g.saved.size(), static_cast<size_t>(n));
  llvm::BitVector dropAll(g.saved.size(), false);
  RematPlan chained, unshared;
  onSmallStack(256 << 10, [&] {
    // Each dropped value recomputed once, from the chain's start: the first
    // walk is the whole chain deep.
    chained = planRemat(g, info, dropAll,
                        Sharing{/*chains=*/true, /*segments=*/false});
    // Without sharing, every use recomputes down to the start.
    unshared = planRemat(g, info, dropAll,
                         Sharing{/*chains=*/false, /*segments=*/false});
  });
  EXPECT_FALSE(chained.oversized);
  EXPECT_GE(chained.clones.size(), static_cast<size_t>(n));
  EXPECT_LE(static_cast<int64_t>(chained.clones.size()), maxClones(g));
  EXPECT_TRUE(unshared.oversized);
  // Stopped at the limit: one clone past it.
  EXPECT_EQ(static_cast<int64_t>(unshared.clones.size()), maxClones(g) + 1);
  EXPECT_EQ(simulateArena(g, unshared, kAlignment), kOversizedArena);
}

TEST_F(RematPlanTest, ShortChainsAreNotOversized) {
  // Quadratic in the chain's length, but below 16 forward passes.
  func::FuncOp f = step(16);
  ASSERT_TRUE(f);
  StepStructure info(f);
  StepGraph g(info, getDefaultTarget(), /*flopsCost=*/false);
  llvm::BitVector dropAll(g.saved.size(), false);
  RematPlan plan = planRemat(g, info, dropAll, Sharing{false, false});
  EXPECT_FALSE(plan.oversized);
  EXPECT_LT(simulateArena(g, plan, kAlignment), kOversizedArena);
  EXPECT_EQ(plan.replace.size(), static_cast<size_t>(plan.dropped));
}

TEST(RematRangeProfile, MatchesALoopOverTheRange) {
  // The reverse delete's room: the largest entry over [lo, hi) and an
  // addition to it, against the plain loops it replaces.
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    size_t n = 1 + rng() % 300;
    std::vector<int64_t> plain(n);
    for (int64_t &v : plain)
      v = rng() % 1000;
    RangeProfile tree(plain);
    for (int op = 0; op < 200; ++op) {
      size_t lo = rng() % (n + 1), hi = rng() % (n + 1);
      if (lo > hi)
        std::swap(lo, hi);
      int64_t most = 0;
      for (size_t t = lo; t < hi; ++t)
        most = std::max(most, plain[t]);
      ASSERT_EQ(std::max<int64_t>(0, tree.max(lo, hi)), most)
          << "trial " << trial << " op " << op;
      if (rng() % 2) {
        int64_t bytes = rng() % 500;
        for (size_t t = lo; t < hi; ++t)
          plain[t] += bytes;
        tree.add(lo, hi, bytes);
      }
    }
  }
}

} // namespace
