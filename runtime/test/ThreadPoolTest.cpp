//===- ThreadPoolTest.cpp - The CPU kernels' worker pool ------------------===//
//
// parallelFor covers every index once, with worker ids in range, and runs a
// nested call serially; the kernels that split their work across the pool
// (matmul's column blocks and batches, softmax rows, layer_norm rows,
// elementwise, AdamW) give bit-identical results with no pool and with
// pools of 2 and 3 threads, on shapes large enough to be split.
//
//===----------------------------------------------------------------------===//

#include "cpu/thread_pool.h"
#include "mwrt/kernels.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <vector>

using namespace mwrt;
using mwrt::cpu::ThreadPool;

namespace {

TEST(ThreadPool, CoversEveryIndexOnce) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{1000}, int64_t{100003}})
      for (int64_t grain : {int64_t{1}, int64_t{16}, int64_t{5000}}) {
        std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
        std::atomic<bool> badWorker{false};
        pool.parallelFor(n, grain, [&](int w, int64_t b, int64_t e) {
          if (w < 0 || w >= threads || b >= e)
            badWorker = true;
          for (int64_t i = b; i < e; ++i)
            seen[static_cast<size_t>(i)].fetch_add(1);
        });
        EXPECT_FALSE(badWorker) << threads << " threads, n " << n;
        for (int64_t i = 0; i < n; ++i)
          ASSERT_EQ(seen[static_cast<size_t>(i)].load(), 1)
              << threads << " threads, n " << n << ", grain " << grain
              << ", index " << i;
      }
  }
}

TEST(ThreadPool, NestedCallRunsOnTheCallingWorker) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  std::atomic<bool> split{false};
  pool.parallelFor(64, 1, [&](int, int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      pool.parallelFor(100, 1, [&](int w, int64_t ib, int64_t ie) {
        if (w != 0 || ib != 0 || ie != 100)
          split = true;
        total += ie - ib;
      });
  });
  EXPECT_FALSE(split);
  EXPECT_EQ(total.load(), 64 * 100);
}

TEST(ThreadPool, ManyShortJobs) {
  // Back-to-back jobs, as a step's kernels issue them.
  ThreadPool pool(3);
  int64_t sum = 0;
  std::vector<int64_t> parts(3);
  for (int job = 0; job < 2000; ++job) {
    std::fill(parts.begin(), parts.end(), 0);
    pool.parallelFor(30, 1, [&](int w, int64_t b, int64_t e) {
      parts[static_cast<size_t>(w)] += e - b;
    });
    sum += parts[0] + parts[1] + parts[2];
  }
  EXPECT_EQ(sum, 2000 * 30);
}

/// An f32 tensor with owned, seeded values.
struct F32 {
  std::vector<int64_t> shape;
  std::vector<float> v;
  F32(std::vector<int64_t> s, unsigned seed, float lo = -1, float hi = 1)
      : shape(std::move(s)) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    v.resize(static_cast<size_t>(n));
    std::mt19937 g(seed);
    std::uniform_real_distribution<float> u(lo, hi);
    for (float &x : v)
      x = u(g);
  }
  TensorRef ref() const { return TensorRef(DType::F32, shape, v.data()); }
};

/// Runs `kind` on copies of `ins` with no pool and pools of 2 and 3
/// threads; every output must have the same bits each time.
void expectSameBits(OpKind kind, const KernelAttrs &attrs,
                    const std::vector<F32> &ins, std::vector<F32> outs,
                    bool referenceMatmul = false) {
  std::vector<std::vector<float>> first;
  for (int threads : {0, 2, 3}) {
    ThreadPool pool(threads ? threads : 1);
    CpuKernelOptions options;
    options.referenceMatmul = referenceMatmul;
    options.pool = threads ? &pool : nullptr;
    std::vector<TensorRef> inRefs, outRefs;
    for (const F32 &t : ins)
      inRefs.push_back(t.ref());
    for (F32 &t : outs) {
      std::fill(t.v.begin(), t.v.end(), -7.0f);
      outRefs.push_back(t.ref());
    }
    ASSERT_EQ(runCpuKernel(kind, attrs, {inRefs.data(), inRefs.size()},
                           {outRefs.data(), outRefs.size()}, options),
              MWRT_OK)
        << mwrt_last_error();
    for (size_t i = 0; i < outs.size(); ++i) {
      if (threads == 0) {
        first.push_back(outs[i].v);
        continue;
      }
      EXPECT_EQ(std::memcmp(first[i].data(), outs[i].v.data(),
                            first[i].size() * sizeof(float)),
                0)
          << opKindName(kind) << " result #" << i << " with " << threads
          << " threads";
    }
  }
}

TEST(ThreadPool, MatmulSameBitsForAnyThreadCount) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      KernelAttrs attrs;
      attrs.setBool("transpose_lhs", ta);
      attrs.setBool("transpose_rhs", tb);
      // m 300, k 700, n 1000: 16 column blocks, split.
      F32 a(ta ? std::vector<int64_t>{700, 300} : std::vector<int64_t>{300, 700},
            1);
      F32 b(tb ? std::vector<int64_t>{1000, 700}
               : std::vector<int64_t>{700, 1000},
            2);
      expectSameBits(OpKind::Matmul, attrs, {a, b}, {F32({300, 1000}, 0)});
    }
  // Batched: the batch across the workers.
  KernelAttrs none;
  expectSameBits(OpKind::Matmul, none,
                 {F32({6, 256, 64}, 3), F32({6, 64, 256}, 4)},
                 {F32({6, 256, 256}, 0)});
  // The evaluator's loops are not split; still the same.
  expectSameBits(OpKind::Matmul, none, {F32({64, 96}, 5), F32({96, 80}, 6)},
                 {F32({64, 80}, 0)}, /*referenceMatmul=*/true);
}

TEST(ThreadPool, RowAndElementKernelsSameBitsForAnyThreadCount) {
  KernelAttrs last;
  last.setInt("axis", 1);
  expectSameBits(OpKind::Softmax, last, {F32({512, 1000}, 7, -8, 8)},
                 {F32({512, 1000}, 0)});
  expectSameBits(OpKind::SoftmaxGrad, last,
                 {F32({512, 1000}, 8, 0, 1), F32({512, 1000}, 9)},
                 {F32({512, 1000}, 0)});
  KernelAttrs eps;
  expectSameBits(OpKind::LayerNorm, eps,
                 {F32({1024, 768}, 10), F32({768}, 11), F32({768}, 12)},
                 {F32({1024, 768}, 0), F32({1024}, 0), F32({1024}, 0)});
  expectSameBits(OpKind::Gelu, eps, {F32({300000}, 13, -4, 4)},
                 {F32({300000}, 0)});
  expectSameBits(OpKind::Mul, eps, {F32({1000, 300}, 14), F32({1000, 300}, 15)},
                 {F32({1000, 300}, 0)});
}

TEST(ThreadPool, AdamWSameBitsForAnyThreadCount) {
  KernelAttrs attrs;
  attrs.setFloat("lr", 1e-3);
  std::vector<float> stepValue = {3.0f};
  F32 step({}, 0);
  step.v = stepValue;
  expectSameBits(OpKind::AdamW, attrs,
                 {F32({250000}, 16), F32({250000}, 17), F32({250000}, 18),
                  F32({250000}, 19, 0, 1), step},
                 {F32({250000}, 0), F32({250000}, 0), F32({250000}, 0)});
}

} // namespace
