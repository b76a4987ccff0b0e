//===- FusedCudaTest.cpp - CUDA C of fused kernels, compiled by NVRTC -----===//
//
// The CUDA backend's generator (src/cuda/fused_codegen.cpp) on the fused
// kernels of the committed plan seeds (runtime/fuzz/corpus/plan/fused-*: a
// loop kernel with a transpose, a slice, a reshape and a column sum, row
// kernels with layer_norm, softmax and softmax_grad, a matmul kernel with
// gelu_grad and a bias gradient): the source it writes, and that NVRTC
// compiles it to PTX. NVRTC needs no device, so this runs in CI wherever
// the CUDA toolkit is; it skips only in a build without it.
//
//===----------------------------------------------------------------------===//

#include "cuda/fused_codegen.h"
#include "mwrt/runtime.h"
#ifdef MWRT_HAVE_CUDA
#include "cuda/fused_nvrtc.h"
#endif

#include <gtest/gtest.h>

#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <set>

using namespace mwrt;
using namespace mwrt::detail;

namespace {

/// Every fused kernel of the seed plans, with the plan that owns it.
struct FusedSample {
  std::string name;
  std::shared_ptr<const Plan> plan;
  const FusedProgramDesc *program;
};

std::vector<FusedSample> samples() {
  std::vector<FusedSample> out;
  std::vector<std::string> files;
  for (const auto &entry :
       std::filesystem::directory_iterator(MWRT_PLAN_CORPUS_DIR))
    if (entry.path().filename().string().rfind("fused-", 0) == 0)
      files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  for (const std::string &path : files) {
    std::shared_ptr<const Plan> plan;
    EXPECT_EQ(Plan::load(path, plan), MWRT_OK) << mwrt_last_error();
    if (!plan)
      continue;
    for (const KernelDesc &k : plan->kernels())
      if (k.program)
        out.push_back({std::filesystem::path(path).filename().string(), plan,
                       k.program.get()});
  }
  return out;
}

} // namespace

TEST(FusedCuda, GeneratesEveryKind) {
  std::vector<FusedSample> all = samples();
  std::set<FusionKind> kinds;
  for (const FusedSample &s : all)
    kinds.insert(s.program->kind);
  EXPECT_EQ(kinds.size(), 4u) << "a seed plan per kind";
  for (const FusedSample &s : all) {
    if (s.program->kind == FusionKind::Horizontal)
      continue; // each update runs as its own CUDA kernel
    FusedLaunch launch;
    std::string src = generateFusedCuda(*s.program, launch);
    EXPECT_NE(src.find("extern \"C\" __global__ void mw_fused("),
              std::string::npos)
        << s.name;
    EXPECT_NE(src.find("#include \"mwrt/op_table.h\""), std::string::npos);
    EXPECT_GT(launch.threads, 0) << s.name;
    EXPECT_EQ(launch.needsMatmul, s.program->kind == FusionKind::Matmul);
    if (s.program->kind == FusionKind::Row)
      EXPECT_NE(src.find("const long long r = t;"), std::string::npos)
          << "a thread per row: " << s.name;
  }
}

TEST(FusedCuda, NvrtcCompilesEveryGeneratedKernel) {
#ifndef MWRT_HAVE_CUDA
  GTEST_SKIP() << "no CUDA toolkit in this build: NVRTC is absent";
#else
  // A fresh cache: the first compile runs NVRTC, the second reads the file.
  std::string dir = testing::TempDir() + "mwrt-nvrtc-cache";
  std::filesystem::remove_all(dir);
  setenv("MWRT_CUDA_CACHE_DIR", dir.c_str(), 1);
  int compiled = 0;
  for (const FusedSample &s : samples()) {
    if (s.program->kind == FusionKind::Horizontal)
      continue;
    FusedLaunch launch;
    std::string src = generateFusedCuda(*s.program, launch);
    for (int sm : {80, 90}) {
      std::string ptx;
      bool cached = true;
      ASSERT_EQ(compileFusedCuda(src, sm, ptx, &cached), MWRT_OK)
          << s.name << ": " << mwrt_last_error() << "\n" << src;
      EXPECT_FALSE(cached);
      EXPECT_NE(ptx.find(".entry mw_fused"), std::string::npos) << s.name;
      std::string again;
      ASSERT_EQ(compileFusedCuda(src, sm, again, &cached), MWRT_OK);
      EXPECT_TRUE(cached) << "the second compile reads the cache";
      EXPECT_EQ(again, ptx);
      ++compiled;
    }
  }
  EXPECT_GE(compiled, 10);
  unsetenv("MWRT_CUDA_CACHE_DIR");
  std::filesystem::remove_all(dir);
#endif
}

// On a GPU: every seed plan's fused kernels against the CPU backend's, from
// the same deterministic initialization. CUDA's expf and tanhf may differ
// from the C library's in the last bit, so the results agree to a relative
// 1e-5 of each tensor's largest magnitude. Skips without a device.
TEST(FusedCuda, RunsLikeTheCpuBackend) {
  std::set<std::string> plans;
  for (const FusedSample &s : samples())
    plans.insert(s.name);
  for (const std::string &name : plans) {
    std::shared_ptr<const Plan> plan;
    ASSERT_EQ(Plan::load(std::string(MWRT_PLAN_CORPUS_DIR) + "/" + name, plan),
              MWRT_OK);
    std::unique_ptr<Session> cpu, cuda;
    ASSERT_EQ(Session::create(plan, "cpu", {}, cpu), MWRT_OK);
    mwrt_status st = Session::create(plan, "cuda", {}, cuda);
    if (st == MWRT_UNAVAILABLE)
      GTEST_SKIP() << mwrt_last_error();
    ASSERT_EQ(st, MWRT_OK) << mwrt_last_error();
    ASSERT_EQ(cpu->step(), MWRT_OK) << mwrt_last_error();
    ASSERT_EQ(cuda->step(), MWRT_OK) << name << ": " << mwrt_last_error();
    for (const ResultDesc &r : plan->results()) {
      TensorData a, b;
      ASSERT_EQ(cpu->readResult(r.name, a), MWRT_OK);
      ASSERT_EQ(cuda->readResult(r.name, b), MWRT_OK);
      if (a.dtype != mwrt::DType::F32)
        continue;
      const auto *x = reinterpret_cast<const float *>(a.bytes.data());
      const auto *y = reinterpret_cast<const float *>(b.bytes.data());
      size_t n = a.bytes.size() / 4;
      float scale = 1e-30f, err = 0;
      for (size_t i = 0; i < n; ++i) {
        scale = std::max(scale, std::fabs(x[i]));
        err = std::max(err, std::fabs(x[i] - y[i]));
      }
      EXPECT_LE(err / scale, 1e-5f) << name << " " << r.name;
    }
  }
}
