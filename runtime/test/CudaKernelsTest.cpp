//===- CudaKernelsTest.cpp - CUDA kernels against the CPU kernels ---------===//
//
// Every op runs through the CPU kernel and through the CUDA backend on the
// same small random inputs, and the results must agree within the
// tolerances of docs/runtime-cuda.md (integers and copies exactly). Plans run
// on both devices must report the same losses. Without a CUDA device (or in a
// build without the CUDA backend) every test here skips with the reason.
//
//===----------------------------------------------------------------------===//

#include "PlanTestHelpers.h"
#include "executor.h"

#include "mwrt/kernels.h"
#include "mwrt/runtime.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <cstring>
#include <random>

using namespace mwrt;
using namespace mwrt::detail;
using mwrt::test::adamPlan;
using mwrt::test::denseReluPlan;
using mwrt::test::PlanBuilder;
using mwrt::test::twoAdamPlan;

namespace {

/// A host tensor that owns its bytes.
struct HostTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<char> bytes;

  int64_t count() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  TensorRef ref() const { return TensorRef(dtype, shape, bytes.data()); }
  double at(int64_t i) const {
    switch (dtype) {
    case DType::F16: {
      uint16_t b;
      std::memcpy(&b, bytes.data() + 2 * i, 2);
      return halfBitsToFloat(b);
    }
    case DType::BF16: {
      uint16_t b;
      std::memcpy(&b, bytes.data() + 2 * i, 2);
      return bfloatBitsToFloat(b);
    }
    case DType::I32: {
      int32_t v;
      std::memcpy(&v, bytes.data() + 4 * i, 4);
      return v;
    }
    case DType::I64: {
      int64_t v;
      std::memcpy(&v, bytes.data() + 8 * i, 8);
      return static_cast<double>(v);
    }
    default: {
      float v;
      std::memcpy(&v, bytes.data() + 4 * i, 4);
      return v;
    }
    }
  }
};

HostTensor empty(DType dtype, std::vector<int64_t> shape) {
  HostTensor t{dtype, std::move(shape), {}};
  t.bytes.assign(t.count() * dtypeSize(dtype), 0);
  return t;
}

/// Uniform in [lo, hi) (floats) or [lo, hi] (integers), rounded to dtype.
HostTensor random(DType dtype, std::vector<int64_t> shape, double lo = -1.0,
                  double hi = 1.0, uint32_t seed = 1) {
  HostTensor t = empty(dtype, std::move(shape));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < t.count(); ++i) {
    double v = dist(gen);
    char *p = t.bytes.data() + i * dtypeSize(dtype);
    if (dtype == DType::F32) {
      float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
    } else if (dtype == DType::F16) {
      uint16_t b = floatToHalfBits(static_cast<float>(v));
      std::memcpy(p, &b, 2);
    } else if (dtype == DType::BF16) {
      uint16_t b = floatToBFloatBits(static_cast<float>(v));
      std::memcpy(p, &b, 2);
    } else if (dtype == DType::I32) {
      int32_t x = static_cast<int32_t>(std::floor(v));
      std::memcpy(p, &x, 4);
    } else {
      int64_t x = static_cast<int64_t>(std::floor(v));
      std::memcpy(p, &x, 8);
    }
  }
  return t;
}

HostTensor scalarF32(float v) {
  HostTensor t = empty(DType::F32, {});
  std::memcpy(t.bytes.data(), &v, 4);
  return t;
}
HostTensor scalarI64(int64_t v) {
  HostTensor t = empty(DType::I64, {});
  std::memcpy(t.bytes.data(), &v, 8);
  return t;
}

class CudaKernelsTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (createBackend("cuda", SessionOptions(), backend) != MWRT_OK)
      GTEST_SKIP() << mwrt_last_error();
  }
  void TearDown() override {
    if (backend)
      for (void *p : allocations)
        backend->release(p);
  }

  void *deviceCopy(const HostTensor &t) {
    void *p = nullptr;
    EXPECT_EQ(backend->allocate(std::max<size_t>(t.bytes.size(), 1), 256, p),
              MWRT_OK)
        << mwrt_last_error();
    allocations.push_back(p);
    if (!t.bytes.empty()) {
      EXPECT_EQ(backend->upload(p, t.bytes.data(), t.bytes.size()), MWRT_OK);
    }
    return p;
  }

  /// Runs `kind` on the CPU and on the device; compares every result with
  /// |cuda - cpu| <= tol * (1 + |cpu|).
  void check(OpKind kind, const KernelAttrs &attrs,
             const std::vector<HostTensor> &ins, std::vector<HostTensor> outs,
             double tol = 1e-5) {
    SCOPED_TRACE(opKindName(kind));
    std::vector<TensorRef> cpuIns, cpuOuts;
    for (const HostTensor &t : ins)
      cpuIns.push_back(t.ref());
    std::vector<HostTensor> cpuResults = outs;
    for (const HostTensor &t : cpuResults)
      cpuOuts.push_back(t.ref());
    ASSERT_EQ(runCpuKernel(kind, attrs, cpuIns, cpuOuts), MWRT_OK)
        << mwrt_last_error();

    BoundKernel k;
    k.kind = kind;
    k.attrs = &attrs;
    for (const HostTensor &t : ins)
      k.ins.emplace_back(t.dtype, t.shape, deviceCopy(t));
    for (const HostTensor &t : outs)
      k.outs.emplace_back(t.dtype, t.shape, deviceCopy(t));
    ASSERT_EQ(backend->run(k), MWRT_OK) << mwrt_last_error();
    ASSERT_EQ(backend->synchronize(), MWRT_OK) << mwrt_last_error();
    for (size_t r = 0; r < outs.size(); ++r) {
      HostTensor &got = outs[r];
      if (!got.bytes.empty()) {
        ASSERT_EQ(backend->download(got.bytes.data(), k.outs[r].data,
                                    got.bytes.size()),
                  MWRT_OK);
      }
      for (int64_t i = 0; i < got.count(); ++i) {
        double want = cpuResults[r].at(i), have = got.at(i);
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(have)) << "result " << r << " element " << i;
          continue;
        }
        ASSERT_NEAR(have, want, tol * (1.0 + std::fabs(want)))
            << "result " << r << " element " << i;
      }
    }
  }

  std::unique_ptr<Backend> backend;
  std::vector<void *> allocations;
};

/// Tolerance of one rounding to `t` on top of f32 differences.
double tolFor(DType t) {
  return t == DType::BF16 ? 1e-2 : t == DType::F16 ? 2e-3 : 1e-5;
}

const DType kFloatTypes[] = {DType::F32, DType::F16, DType::BF16};

TEST_F(CudaKernelsTest, BinaryWithBroadcasting) {
  for (DType t : kFloatTypes)
    for (OpKind k : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div,
                     OpKind::Maximum})
      check(k, {}, {random(t, {2, 3, 4}), random(t, {3, 1}, 0.5, 2.0, 2)},
            {empty(t, {2, 3, 4})}, tolFor(t));
  for (OpKind k : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div,
                   OpKind::Maximum})
    check(k, {}, {random(DType::I32, {4, 3}, -50, 50), random(DType::I32, {3}, 1, 9, 3)},
          {empty(DType::I32, {4, 3})}, 0.0);
}

TEST_F(CudaKernelsTest, UnaryAndActivationGradients) {
  KernelAttrs tanh;
  tanh.setString("approximate", "tanh");
  for (DType t : kFloatTypes) {
    for (OpKind k : {OpKind::Neg, OpKind::Exp, OpKind::Log, OpKind::Tanh,
                     OpKind::Sqrt, OpKind::Rsqrt, OpKind::Reciprocal,
                     OpKind::Relu, OpKind::Sigmoid, OpKind::Silu, OpKind::Gelu})
      check(k, {}, {random(t, {5, 7}, 0.1, 2.0)}, {empty(t, {5, 7})},
            tolFor(t) * 2);
    check(OpKind::Gelu, tanh, {random(t, {5, 7}, -3, 3)}, {empty(t, {5, 7})},
          tolFor(t) * 2);
    for (OpKind k : {OpKind::ReluGrad, OpKind::SiluGrad, OpKind::GeluGrad})
      check(k, {}, {random(t, {6, 5}, -3, 3), random(t, {6, 5}, -1, 1, 4)},
            {empty(t, {6, 5})}, tolFor(t) * 2);
    check(OpKind::GeluGrad, tanh,
          {random(t, {6, 5}, -3, 3), random(t, {6, 5}, -1, 1, 4)},
          {empty(t, {6, 5})}, tolFor(t) * 2);
  }
  check(OpKind::Neg, {}, {random(DType::I64, {9}, -100, 100)},
        {empty(DType::I64, {9})}, 0.0);
}

TEST_F(CudaKernelsTest, Cast) {
  check(OpKind::Cast, {}, {random(DType::F32, {4, 5}, -9, 9)},
        {empty(DType::BF16, {4, 5})}, 0.0);
  check(OpKind::Cast, {}, {random(DType::F32, {4, 5}, -9, 9)},
        {empty(DType::F16, {4, 5})}, 0.0);
  check(OpKind::Cast, {}, {random(DType::F32, {4, 5}, -99, 99)},
        {empty(DType::I32, {4, 5})}, 0.0);
  check(OpKind::Cast, {}, {random(DType::I64, {4, 5}, -999, 999)},
        {empty(DType::F32, {4, 5})}, 0.0);
}

TEST_F(CudaKernelsTest, Matmul) {
  for (DType t : kFloatTypes) {
    double tol = t == DType::F32 ? 1e-4 : tolFor(t) * 2;
    check(OpKind::Matmul, {}, {random(t, {2, 3, 4}), random(t, {2, 4, 5}, -1, 1, 2)},
          {empty(t, {2, 3, 5})}, tol);
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        KernelAttrs a;
        a.setBool("transpose_lhs", ta).setBool("transpose_rhs", tb);
        std::vector<int64_t> ls = ta ? std::vector<int64_t>{4, 3}
                                     : std::vector<int64_t>{3, 4};
        std::vector<int64_t> rs = tb ? std::vector<int64_t>{5, 4}
                                     : std::vector<int64_t>{4, 5};
        check(OpKind::Matmul, a, {random(t, ls), random(t, rs, -1, 1, 2)},
              {empty(t, {3, 5})}, tol);
        std::vector<int64_t> bl = {2, 1}, br = {3};
        bl.insert(bl.end(), ls.begin(), ls.end());
        br.insert(br.end(), rs.begin(), rs.end());
        check(OpKind::Matmul, a, {random(t, bl), random(t, br, -1, 1, 2)},
              {empty(t, {2, 3, 3, 5})}, tol);
      }
    check(OpKind::Matmul, {}, {random(t, {2, 3, 4}), random(t, {4, 5}, -1, 1, 2)},
          {empty(t, {2, 3, 5})}, tol);
  }
}

TEST_F(CudaKernelsTest, Reductions) {
  for (DType t : kFloatTypes)
    for (OpKind k : {OpKind::ReduceSum, OpKind::ReduceMax, OpKind::ReduceMean}) {
      KernelAttrs a;
      a.setInts("axes", {0, 2});
      check(k, a, {random(t, {3, 4, 300})}, {empty(t, {4})}, tolFor(t) * 4);
      a.setBool("keepdims", true);
      check(k, a, {random(t, {3, 4, 5})}, {empty(t, {1, 4, 1})},
            tolFor(t) * 4);
    }
  KernelAttrs a;
  a.setInts("axes", {1});
  check(OpKind::ReduceSum, a, {random(DType::I64, {3, 7}, -9, 9)},
        {empty(DType::I64, {3})}, 0.0);
  check(OpKind::ReduceMax, a, {random(DType::I32, {3, 7}, -9, 9)},
        {empty(DType::I32, {3})}, 0.0);
  // reduce_max_grad with ties: values on a coarse grid.
  HostTensor x = random(DType::F32, {3, 8}, 0, 4);
  for (int64_t i = 0; i < x.count(); ++i) {
    float v = std::floor(static_cast<float>(x.at(i)));
    std::memcpy(x.bytes.data() + 4 * i, &v, 4);
  }
  HostTensor m = empty(DType::F32, {3});
  ASSERT_EQ(runCpuKernel(OpKind::ReduceMax, a, {x.ref()}, {m.ref()}), MWRT_OK);
  check(OpKind::ReduceMaxGrad, a, {x, m, random(DType::F32, {3})},
        {empty(DType::F32, {3, 8})});
}

TEST_F(CudaKernelsTest, SoftmaxAndGradients) {
  for (DType t : kFloatTypes)
    for (int64_t axis : {1, 2}) {
      KernelAttrs a;
      a.setInt("axis", axis);
      check(OpKind::Softmax, a, {random(t, {2, 5, 3}, -4, 4)},
            {empty(t, {2, 5, 3})}, tolFor(t) * 2);
      check(OpKind::LogSoftmax, a, {random(t, {2, 5, 3}, -4, 4)},
            {empty(t, {2, 5, 3})}, tolFor(t) * 2);
      check(OpKind::SoftmaxGrad, a,
            {random(t, {2, 5, 3}, 0, 1), random(t, {2, 5, 3}, -1, 1, 3)},
            {empty(t, {2, 5, 3})}, tolFor(t) * 2);
      check(OpKind::LogSoftmaxGrad, a,
            {random(t, {2, 5, 3}, -3, 0), random(t, {2, 5, 3}, -1, 1, 3)},
            {empty(t, {2, 5, 3})}, tolFor(t) * 2);
    }
}

TEST_F(CudaKernelsTest, Norms) {
  for (DType t : kFloatTypes) {
    double tol = tolFor(t) * 4;
    HostTensor x = random(t, {2, 3, 40}, -2, 2), g = random(t, {40}, 0.5, 1.5, 5),
               b = random(t, {40}, -1, 1, 6), dy = random(t, {2, 3, 40}, -1, 1, 7);
    check(OpKind::LayerNorm, {}, {x, g, b},
          {empty(t, {2, 3, 40}), empty(DType::F32, {2, 3}),
           empty(DType::F32, {2, 3})}, tol);
    check(OpKind::RmsNorm, {}, {x, g},
          {empty(t, {2, 3, 40}), empty(DType::F32, {2, 3})}, tol);
    HostTensor y = empty(t, {2, 3, 40}), mean = empty(DType::F32, {2, 3}),
               rstd = empty(DType::F32, {2, 3});
    ASSERT_EQ(runCpuKernel(OpKind::LayerNorm, {}, {x.ref(), g.ref(), b.ref()},
                           {y.ref(), mean.ref(), rstd.ref()}),
              MWRT_OK);
    check(OpKind::LayerNormGrad, {}, {x, g, mean, rstd, dy},
          {empty(t, {2, 3, 40}), empty(t, {40}), empty(t, {40})}, tol);
    ASSERT_EQ(runCpuKernel(OpKind::RmsNorm, {}, {x.ref(), g.ref()},
                           {y.ref(), rstd.ref()}),
              MWRT_OK);
    check(OpKind::RmsNormGrad, {}, {x, g, rstd, dy},
          {empty(t, {2, 3, 40}), empty(t, {40})}, tol);
  }
}

TEST_F(CudaKernelsTest, EmbeddingAndCrossEntropy) {
  HostTensor idx = random(DType::I64, {2, 6}, 0, 6.99, 8); // with repeats
  for (DType t : kFloatTypes) {
    check(OpKind::Embedding, {}, {random(t, {7, 5}), idx}, {empty(t, {2, 6, 5})},
          0.0);
    check(OpKind::EmbeddingGrad, {}, {idx, random(t, {2, 6, 5})},
          {empty(t, {7, 5})}, tolFor(t));
  }
  HostTensor labels = random(DType::I64, {3, 4}, 0, 9.99, 9);
  int64_t ignored = -100;
  std::memcpy(labels.bytes.data() + 8 * 5, &ignored, 8);
  for (DType t : kFloatTypes) {
    HostTensor logits = random(t, {3, 4, 10}, -3, 3);
    check(OpKind::CrossEntropy, {}, {logits, labels},
          {empty(DType::F32, {})}, tolFor(t) * 2);
    check(OpKind::CrossEntropyGrad, {}, {logits, labels, scalarF32(0.5f)},
          {empty(t, {3, 4, 10})}, tolFor(t) * 2);
  }
}

TEST_F(CudaKernelsTest, Attention) {
  for (DType t : kFloatTypes)
    for (bool causal : {false, true}) {
      KernelAttrs a;
      a.setBool("causal", causal);
      HostTensor q = random(t, {2, 2, 5, 8}), k = random(t, {2, 2, 5, 8}, -1, 1, 2),
                 v = random(t, {2, 2, 5, 4}, -1, 1, 3);
      double tol = tolFor(t) * 4;
      check(OpKind::Attention, a, {q, k, v},
            {empty(t, {2, 2, 5, 4}), empty(DType::F32, {2, 2, 5})}, tol);
      HostTensor o = empty(t, {2, 2, 5, 4}), lse = empty(DType::F32, {2, 2, 5});
      ASSERT_EQ(runCpuKernel(OpKind::Attention, a, {q.ref(), k.ref(), v.ref()},
                             {o.ref(), lse.ref()}),
                MWRT_OK);
      check(OpKind::AttentionGrad, a,
            {q, k, v, o, lse, random(t, {2, 2, 5, 4}, -1, 1, 4)},
            {empty(t, {2, 2, 5, 8}), empty(t, {2, 2, 5, 8}),
             empty(t, {2, 2, 5, 4})}, tol);
    }
}

TEST_F(CudaKernelsTest, ShapeOps) {
  HostTensor x = random(DType::BF16, {2, 3, 4});
  check(OpKind::Reshape, {}, {x}, {empty(DType::BF16, {6, 4})}, 0.0);
  KernelAttrs perm;
  perm.setInts("permutation", {2, 0, 1});
  check(OpKind::Transpose, perm, {x}, {empty(DType::BF16, {4, 2, 3})}, 0.0);
  check(OpKind::BroadcastTo, {}, {random(DType::F32, {3, 1})},
        {empty(DType::F32, {2, 3, 4})}, 0.0);
  KernelAttrs slice;
  slice.setInts("offsets", {0, 1, 1}).setInts("sizes", {2, 2, 2})
      .setInts("strides", {1, 1, 2});
  check(OpKind::Slice, slice, {x}, {empty(DType::BF16, {2, 2, 2})}, 0.0);
  KernelAttrs axis;
  axis.setInt("axis", 1);
  check(OpKind::Concat, axis,
        {random(DType::I64, {2, 1, 3}, 0, 9), random(DType::I64, {2, 2, 3}, 0, 9, 2)},
        {empty(DType::I64, {2, 3, 3})}, 0.0);
}

TEST_F(CudaKernelsTest, Optimizers) {
  for (DType t : {DType::F32, DType::BF16}) {
    KernelAttrs adam;
    adam.setFloat("lr", 0.01);
    check(OpKind::AdamW, adam,
          {random(t, {33}), random(t, {33}, -1, 1, 2), random(t, {33}, -1, 1, 3),
           random(t, {33}, 0, 1, 4), scalarF32(3.0f)},
          {empty(t, {33}), empty(t, {33}), empty(t, {33})}, tolFor(t));
    KernelAttrs sgd;
    sgd.setFloat("lr", 0.1).setFloat("momentum", 0.9).setFloat("weight_decay", 0.01);
    check(OpKind::Sgd, sgd,
          {random(t, {17}), random(t, {17}, -1, 1, 2), random(t, {17}, -1, 1, 3)},
          {empty(t, {17}), empty(t, {17})}, tolFor(t));
  }
}

TEST_F(CudaKernelsTest, MixedPrecisionAndConstants) {
  HostTensor bad = random(DType::F32, {4});
  float inf = INFINITY;
  std::memcpy(bad.bytes.data() + 4, &inf, 4);
  check(OpKind::FoundInf, {}, {random(DType::BF16, {5}), bad},
        {empty(DType::F32, {})}, 0.0);
  check(OpKind::FoundInf, {}, {random(DType::BF16, {5})},
        {empty(DType::F32, {})}, 0.0);
  for (float cond : {0.0f, 1.0f})
    check(OpKind::Select, {},
          {scalarF32(cond), random(DType::F16, {3, 2}), random(DType::F16, {3, 2}, -1, 1, 2)},
          {empty(DType::F16, {3, 2})}, 0.0);
  for (float overflow : {0.0f, 1.0f}) {
    KernelAttrs a;
    a.setInt("window", 2);
    check(OpKind::LossScaleUpdate, a,
          {scalarF32(overflow), scalarF32(1024.0f), scalarI64(4), scalarI64(2),
           scalarI64(1)},
          {empty(DType::F32, {}), empty(DType::I64, {}), empty(DType::I64, {}),
           empty(DType::I64, {})}, 0.0);
  }
  KernelAttrs splat;
  splat.setFloat("value", 0.1);
  check(OpKind::Splat, splat, {}, {empty(DType::BF16, {3, 3})}, 0.0);
  KernelAttrs constant;
  constant.setFloats("value", {1.5, -2.0, 3.25, 0.1});
  check(OpKind::Constant, constant, {}, {empty(DType::F32, {2, 2})}, 0.0);
}

/// The evaluator's goldens (test/eval_parity, every mw op in every dtype,
/// see EvalParityTest) replayed on the device: every result within the
/// tolerance of its type (integers exactly).
TEST_F(CudaKernelsTest, EvalParityCases) {
  using Json = nlohmann::json;
  std::string dir = MWRT_EVAL_PARITY_DIR, error;
  std::ifstream file(dir + "/manifest.json");
  Json manifest = Json::parse(file, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(manifest.is_discarded());
  SafeTensors golden;
  ASSERT_TRUE(readSafeTensors(dir + "/golden.safetensors", golden, error))
      << error;
  for (const Json &spec : manifest["cases"]) {
    std::string name = spec["name"].get<std::string>();
    SCOPED_TRACE(name);
    std::map<std::string, TensorRef> values;
    for (const auto &[value, type] : spec["values"].items()) {
      HostTensor t;
      ASSERT_TRUE(parseDType(type["dtype"].get<std::string>(), t.dtype));
      t.shape = type["shape"].get<std::vector<int64_t>>();
      t.bytes.assign(t.count() * dtypeSize(t.dtype), static_cast<char>(0xA5));
      if (const TensorData *arg = golden.find(name + "/" + value))
        t.bytes.assign(arg->bytes.begin(), arg->bytes.end());
      values[value] = TensorRef(t.dtype, t.shape, deviceCopy(t));
    }
    std::vector<KernelAttrs> attrs;
    attrs.reserve(spec["steps"].size());
    for (const Json &step : spec["steps"]) {
      KernelAttrs &a = attrs.emplace_back();
      for (const auto &[attr, typed] : step["attrs"].items()) {
        std::string kind = typed.begin().key();
        const Json &v = typed.begin().value();
        if (kind == "int")
          a.setInt(attr, v.get<int64_t>());
        else if (kind == "float")
          a.setFloat(attr, v.get<double>());
        else if (kind == "bool")
          a.setBool(attr, v.get<bool>());
        else if (kind == "string")
          a.setString(attr, v.get<std::string>());
        else if (kind == "ints")
          a.setInts(attr, v.get<std::vector<int64_t>>());
        else
          a.setFloats(attr, v.get<std::vector<double>>());
      }
      BoundKernel k;
      ASSERT_TRUE(parseOpKind(step["op"].get<std::string>(), k.kind));
      k.attrs = &a;
      for (const Json &v : step["ins"])
        k.ins.push_back(values.at(v.get<std::string>()));
      for (const Json &v : step["outs"])
        k.outs.push_back(values.at(v.get<std::string>()));
      ASSERT_EQ(backend->run(k), MWRT_OK) << step["op"] << mwrt_last_error();
    }
    ASSERT_EQ(backend->synchronize(), MWRT_OK) << mwrt_last_error();
    for (const auto &[result, value] : spec["results"].items()) {
      const TensorData *want = golden.find(name + "/" + result);
      ASSERT_TRUE(want) << result;
      const TensorRef &dev = values.at(value.get<std::string>());
      HostTensor got{dev.dtype, dev.shape, {}}, expect{want->dtype, want->shape, {}};
      got.bytes.resize(got.count() * dtypeSize(got.dtype));
      expect.bytes.assign(want->bytes.begin(), want->bytes.end());
      if (!got.bytes.empty()) {
        ASSERT_EQ(backend->download(got.bytes.data(), dev.data, got.bytes.size()),
                  MWRT_OK);
      }
      double tol = dev.dtype == DType::BF16  ? 2e-2
                   : dev.dtype == DType::F16 ? 4e-3
                   : dev.dtype == DType::F32 ? 1e-4
                                             : 0.0;
      for (int64_t i = 0; i < got.count(); ++i) {
        double w = expect.at(i), h = got.at(i);
        if (std::isnan(w) || std::isinf(w)) {
          EXPECT_TRUE(std::isnan(w) ? std::isnan(h) : h == w)
              << result << " element " << i;
          continue;
        }
        ASSERT_NEAR(h, w, tol * (1.0 + std::fabs(w)))
            << result << " element " << i;
      }
    }
  }
}

/// RunSessionTest accepts either "cuda" failure; a build with the backend
/// must say that there is no device, and why (cudaGetErrorString).
TEST(CudaBackendTest, NoDeviceErrorNamesTheCause) {
  std::unique_ptr<Backend> backend;
  mwrt_status st = createBackend("cuda", SessionOptions(), backend);
  if (st == MWRT_OK)
    GTEST_SKIP() << "a CUDA device is present";
  EXPECT_EQ(st, MWRT_UNAVAILABLE);
  std::string message = mwrt_last_error();
  bool noDevice = message.rfind("no CUDA device: ", 0) == 0;
  if (mwrt_built_with_cuda())
    EXPECT_TRUE(noDevice) << message;
  else // without the backend, a missing driver is reported first
    EXPECT_TRUE(noDevice ||
                message.rfind("the CUDA backend is not built", 0) == 0)
        << message;
}

//===----------------------------------------------------------------------===//
// Plans on both devices
//===----------------------------------------------------------------------===//

std::shared_ptr<const Plan> planOf(const PlanBuilder &b) {
  std::vector<uint8_t> bytes = b.finish();
  std::shared_ptr<const Plan> plan;
  EXPECT_EQ(Plan::parse(bytes.data(), bytes.size(), plan), MWRT_OK)
      << mwrt_last_error();
  return plan;
}

/// The losses of `steps` steps of `plan` on `device` from the default
/// initialization.
std::vector<double> losses(const std::shared_ptr<const Plan> &plan,
                           const char *device, int steps,
                           bool graph = false) {
  std::vector<double> out;
  if (graph)
    setenv("MWRT_CUDA_GRAPH", "1", 1);
  std::unique_ptr<Session> s;
  mwrt_status st = Session::create(plan, device, {}, s);
  if (graph)
    unsetenv("MWRT_CUDA_GRAPH");
  EXPECT_EQ(st, MWRT_OK) << mwrt_last_error();
  for (int i = 0; s && i < steps; ++i) {
    EXPECT_EQ(s->step(), MWRT_OK) << mwrt_last_error();
    double loss = 0;
    EXPECT_EQ(s->loss(loss), MWRT_OK);
    out.push_back(loss);
  }
  return out;
}

class CudaPlanTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::unique_ptr<Backend> backend;
    if (createBackend("cuda", SessionOptions(), backend) != MWRT_OK)
      GTEST_SKIP() << mwrt_last_error();
  }
};

TEST_F(CudaPlanTest, LossesMatchTheCpu) {
  for (const PlanBuilder &b : {denseReluPlan(), adamPlan(), twoAdamPlan()}) {
    std::shared_ptr<const Plan> plan = planOf(b);
    ASSERT_TRUE(plan);
    std::vector<double> cpu = losses(plan, "cpu", 4);
    std::vector<double> cuda = losses(plan, "cuda", 4);
    std::vector<double> graph = losses(plan, "cuda", 4, /*graph=*/true);
    ASSERT_EQ(cuda.size(), cpu.size());
    ASSERT_EQ(graph.size(), cpu.size());
    for (size_t i = 0; i < cpu.size(); ++i) {
      EXPECT_NEAR(cuda[i], cpu[i], 1e-5 * (1 + std::fabs(cpu[i]))) << i;
      EXPECT_EQ(graph[i], cuda[i]) << i; // graphs replay the same kernels
    }
  }
}

TEST_F(CudaPlanTest, FusedAdamWMatchesPerTensorLaunches) {
  // Two adamw kernels in a row go as one multi-tensor launch; per element
  // the arithmetic is the same, so every loss is the same bits as with one
  // launch per tensor (MWRT_CUDA_FUSED_ADAMW=0), eagerly and in a graph.
  std::shared_ptr<const Plan> plan = planOf(twoAdamPlan());
  ASSERT_TRUE(plan);
  std::vector<double> fused = losses(plan, "cuda", 5);
  std::vector<double> fusedGraph = losses(plan, "cuda", 5, /*graph=*/true);
  setenv("MWRT_CUDA_FUSED_ADAMW", "0", 1);
  std::vector<double> single = losses(plan, "cuda", 5);
  unsetenv("MWRT_CUDA_FUSED_ADAMW");
  ASSERT_EQ(fused.size(), 5u);
  ASSERT_EQ(single.size(), 5u);
  ASSERT_EQ(fusedGraph.size(), 5u);
  for (size_t i = 0; i < fused.size(); ++i) {
    EXPECT_EQ(fused[i], single[i]) << i;
    EXPECT_EQ(fusedGraph[i], single[i]) << i;
  }
  EXPECT_LT(fused.back(), fused.front()); // it trains
}

} // namespace
