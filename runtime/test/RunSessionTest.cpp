//===- RunSessionTest.cpp - Executing hand-built plans on the CPU ---------===//
//
// Sessions over the plans of PlanTestHelpers.h: values checked by hand (a
// dense layer, two AdamW steps worked out with the kernel's formula), the
// default initialization and synthetic data rules of docs/runtime.md,
// binding from files and memory with the errors that name the tensor,
// results copied back (in place, strided, and through staging when they
// overlap), memory statistics, step errors naming the step and kernel, and
// the C API. Compiled with -ffp-contract=off, so the hand computations round
// like the kernels.
//
//===----------------------------------------------------------------------===//

#include "PlanTestHelpers.h"

#include "mwrt/initial_values.h"
#include "mwrt/mwrt.h"
#include "mwrt/runtime.h"
#include "mwrt/safetensors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

namespace mwrt::test {

namespace {

std::shared_ptr<const Plan> makePlan(const PlanBuilder &b) {
  std::vector<uint8_t> bytes = b.finish();
  std::shared_ptr<const Plan> plan;
  EXPECT_EQ(Plan::parse(bytes.data(), bytes.size(), plan), MWRT_OK)
      << mwrt_last_error();
  return plan;
}

std::unique_ptr<Session> makeSession(const PlanBuilder &b,
                                     SessionOptions options = {}) {
  std::unique_ptr<Session> session;
  std::shared_ptr<const Plan> plan = makePlan(b);
  if (!plan)
    return session;
  EXPECT_EQ(Session::create(plan, "cpu", options, session), MWRT_OK)
      << mwrt_last_error();
  return session;
}

TensorData f32Tensor(std::vector<int64_t> shape, std::vector<float> values) {
  TensorData t;
  t.dtype = mwrt::DType::F32;
  t.shape = std::move(shape);
  t.bytes.resize(values.size() * 4);
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

std::vector<float> f32Values(const TensorData &t) {
  std::vector<float> v(t.bytes.size() / 4);
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

std::vector<int64_t> i64Values(const TensorData &t) {
  std::vector<int64_t> v(t.bytes.size() / 8);
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

std::vector<float> readF32(const Session &s, const std::string &name,
                           bool result = false) {
  TensorData t;
  mwrt_status st = result ? s.readResult(name, t) : s.readPersistent(name, t);
  EXPECT_EQ(st, MWRT_OK) << mwrt_last_error();
  return f32Values(t);
}

/// The default initialization's generator, restated: mt19937_64 and
/// Box-Muller over the top 53 bits.
struct Normal {
  explicit Normal(uint64_t seed) : rng(seed) {}
  double next() {
    auto u = [&] {
      return (static_cast<double>(rng() >> 11) + 0.5) / 9007199254740992.0;
    };
    double u1 = u(), u2 = u();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  std::mt19937_64 rng;
};

void setDenseInputs(Session &s) {
  ASSERT_EQ(s.setTensor("x", f32Tensor({2, 3}, {1, 2, 3, 4, 5, 6})), MWRT_OK)
      << mwrt_last_error();
  ASSERT_EQ(
      s.setTensor("fc.weight", f32Tensor({3, 2}, {0.5f, -1, 1, 0, -1, 0.5f})),
      MWRT_OK);
  ASSERT_EQ(s.setTensor("fc.bias", f32Tensor({2}, {0.25f, -0.5f})), MWRT_OK);
}

} // namespace

TEST(RunSession, DenseReluByHand) {
  for (bool reference : {false, true}) {
    SessionOptions options;
    options.referenceMatmul = reference;
    auto s = makeSession(denseReluPlan(), options);
    ASSERT_TRUE(s);
    setDenseInputs(*s);
    ASSERT_EQ(s->step(), MWRT_OK) << mwrt_last_error();
    // x @ w = [[1 + 2 - 3, -1 + 1.5], [2 + 5 - 6, -4 + 3]] = [[-0.5, 0.5],
    // [1, -1]]; relu -> [[0, 0.5], [1, 0]]; + b -> [[0.25, 0], [1.25, -0.5]].
    EXPECT_EQ(readF32(*s, "y", true),
              (std::vector<float>{0.25f, 0.0f, 1.25f, -0.5f}));
    double loss = 0;
    ASSERT_EQ(s->loss(loss), MWRT_OK);
    EXPECT_EQ(loss, 1.0);
    EXPECT_EQ(readF32(*s, "loss", true), (std::vector<float>{1.0f}));
    // A forward pass changes no parameter.
    EXPECT_EQ(readF32(*s, "fc.bias"), (std::vector<float>{0.25f, -0.5f}));
  }
}

TEST(RunSession, MemoryStatistics) {
  auto s = makeSession(denseReluPlan());
  ASSERT_TRUE(s);
  SessionStats st = s->stats();
  EXPECT_EQ(st.arenaBytes, 128u);
  // x (24 bytes), fc.weight (24), fc.bias (8), loss (4): each 64-aligned.
  EXPECT_EQ(st.persistentBytes, 4u * 64);
  EXPECT_EQ(st.workspaceBytes, 0u);
  EXPECT_EQ(st.plannedPeakBytes, 128u + 256);
  EXPECT_EQ(st.measuredPeakBytes, st.plannedPeakBytes);
  EXPECT_EQ(st.lowerBoundBytes, 32u);
  EXPECT_EQ(st.steps, 0u);
  setDenseInputs(*s);
  ASSERT_EQ(s->step(), MWRT_OK);
  ASSERT_EQ(s->step(), MWRT_OK);
  EXPECT_EQ(s->stats().steps, 2u);
  EXPECT_EQ(s->stats().measuredPeakBytes, st.plannedPeakBytes);
}

TEST(RunSession, AdamWTwoStepsMatchHandComputation) {
  auto s = makeSession(adamPlan());
  ASSERT_TRUE(s);
  // optimizer.step counts updates done: 0 before the first (the step adds 1
  // before mw.adamw reads it).
  TensorData step;
  ASSERT_EQ(s->readPersistent("optimizer.step", step), MWRT_OK);
  EXPECT_EQ(i64Values(step), (std::vector<int64_t>{0}));
  std::vector<float> w = {1.0f, -2.0f, 0.5f};
  ASSERT_EQ(s->setTensor("w", f32Tensor({3}, w)), MWRT_OK);

  // torch.optim.AdamW as the kernel computes it: scalars in double rounded
  // to f32 once, elements in f32.
  const double lr = 0.1, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.01;
  std::vector<float> m(3, 0.0f), v(3, 0.0f);
  std::vector<double> losses;
  for (int t = 1; t <= 2; ++t) {
    float loss = 0;
    for (float x : w)
      loss += x * x;
    losses.push_back(loss);
    float decay = static_cast<float>(1.0 - lr * wd);
    float bc1 = static_cast<float>(1.0 - std::pow(b1, t));
    float bc2 = static_cast<float>(1.0 - std::pow(b2, t));
    for (int i = 0; i < 3; ++i) {
      float g = w[i] + w[i];
      float p = w[i] * decay;
      m[i] = static_cast<float>(b1) * m[i] + static_cast<float>(1.0 - b1) * g;
      v[i] =
          static_cast<float>(b2) * v[i] + static_cast<float>(1.0 - b2) * g * g;
      float mhat = m[i] / bc1, vhat = v[i] / bc2;
      w[i] = p - static_cast<float>(lr) * mhat /
                     (std::sqrt(vhat) + static_cast<float>(eps));
    }
  }
  // Roughly: each step decays w by 1 - lr * wd = 0.999 and moves it by about
  // lr against the gradient's sign (mhat / sqrt(vhat) is 1 on the first
  // step and 0.99..1 on the second, while the gradient keeps its sign).
  EXPECT_NEAR(w[0], 1.0 * 0.999 * 0.999 - 0.2, 3e-3);
  EXPECT_NEAR(w[1], -2.0 * 0.999 * 0.999 + 0.2, 3e-3);
  EXPECT_NEAR(w[2], 0.5 * 0.999 * 0.999 - 0.2, 3e-3);

  std::vector<double> got;
  for (int t = 1; t <= 2; ++t) {
    ASSERT_EQ(s->step(), MWRT_OK) << mwrt_last_error();
    double loss;
    ASSERT_EQ(s->loss(loss), MWRT_OK);
    got.push_back(loss);
  }
  EXPECT_EQ(got, losses);
  EXPECT_EQ(readF32(*s, "w"), w);
  EXPECT_EQ(readF32(*s, "w.exp_avg"), m);
  EXPECT_EQ(readF32(*s, "w.exp_avg_sq"), v);
  ASSERT_EQ(s->readPersistent("optimizer.step", step), MWRT_OK);
  EXPECT_EQ(i64Values(step), (std::vector<int64_t>{2}));
}

TEST(RunSession, TwoAdamWUpdatesAreIndependent) {
  // twoAdamPlan (the CUDA backend's multi-tensor adamw case): each parameter
  // follows the one-parameter plan exactly, the other one beside it.
  auto one = makeSession(adamPlan());
  auto two = makeSession(twoAdamPlan());
  ASSERT_TRUE(one && two);
  std::vector<float> w = {1.0f, -2.0f, 0.5f};
  ASSERT_EQ(one->setTensor("w", f32Tensor({3}, w)), MWRT_OK);
  ASSERT_EQ(two->setTensor("w", f32Tensor({3}, w)), MWRT_OK);
  ASSERT_EQ(two->setTensor("u", f32Tensor({2, 4}, std::vector<float>(8, 0.0f))),
            MWRT_OK);
  for (int t = 1; t <= 3; ++t) {
    ASSERT_EQ(one->step(), MWRT_OK) << mwrt_last_error();
    ASSERT_EQ(two->step(), MWRT_OK) << mwrt_last_error();
    double a, b;
    ASSERT_EQ(one->loss(a), MWRT_OK);
    ASSERT_EQ(two->loss(b), MWRT_OK);
    EXPECT_EQ(a, b) << t; // u stays 0: gradient 0, decay of 0
  }
  EXPECT_EQ(readF32(*two, "w"), readF32(*one, "w"));
  EXPECT_EQ(readF32(*two, "w.exp_avg_sq"), readF32(*one, "w.exp_avg_sq"));
  EXPECT_EQ(readF32(*two, "u"), std::vector<float>(8, 0.0f));
}

TEST(RunSession, StepCounterInAnAllocatedResult) {
  // As mw-translate writes it: the next optimizer.step is a buffer the step
  // allocates (persistent "result5", argument -1) returned as the result
  // named optimizer.step. It is copied back, and it is not state to bind or
  // save.
  PlanBuilder b = adamPlan();
  int next = b.addPersistent("result5", DType::I64, {}, Role::OptimizerState);
  b.kernels[4].outs[0] = persistent(next, {}, DType::I64);
  b.kernels[5].ins[4] = persistent(next, {}, DType::I64);
  b.results[4].value = persistent(next, {}, DType::I64);
  auto s = makeSession(b);
  ASSERT_TRUE(s);
  ASSERT_EQ(s->step(), MWRT_OK) << mwrt_last_error();
  ASSERT_EQ(s->step(), MWRT_OK) << mwrt_last_error();
  TensorData step;
  ASSERT_EQ(s->readPersistent("optimizer.step", step), MWRT_OK);
  EXPECT_EQ(i64Values(step), (std::vector<int64_t>{2}));
  SafeTensors saved;
  ASSERT_EQ(s->collectWeights(saved), MWRT_OK);
  EXPECT_EQ(saved.names(),
            (std::vector<std::string>{"w", "w.exp_avg", "w.exp_avg_sq",
                                      "optimizer.step"}));
  std::string path = tempPath("w.safetensors");
  ASSERT_EQ(s->saveWeights(path), MWRT_OK);
  std::vector<std::string> fresh = {"stale"};
  ASSERT_EQ(s->loadWeights(path, &fresh), MWRT_OK) << mwrt_last_error();
  EXPECT_TRUE(fresh.empty());
}

TEST(RunSession, DefaultInitialization) {
  // Params: bias 0, rank-1 "weight" 1, others normal(0, 0.02) from
  // mt19937_64(seed) in plan order; float inputs normal(0, 1) from
  // mt19937_64(seed ^ 0x9e3779b97f4a7c15); optimizer state 0.
  for (uint64_t seed : {0ull, 12345ull}) {
    SessionOptions options;
    options.seed = seed;
    auto s = makeSession(denseReluPlan(), options);
    ASSERT_TRUE(s);
    Normal weights(seed), data(seed ^ 0x9e3779b97f4a7c15ull);
    std::vector<float> w, x;
    for (int i = 0; i < 6; ++i)
      w.push_back(static_cast<float>(0.02 * weights.next()));
    for (int i = 0; i < 6; ++i)
      x.push_back(static_cast<float>(data.next()));
    EXPECT_EQ(readF32(*s, "fc.weight"), w);
    EXPECT_EQ(readF32(*s, "x"), x);
    EXPECT_EQ(readF32(*s, "fc.bias"), (std::vector<float>{0, 0}));
  }
  auto s = makeSession(adamPlan());
  ASSERT_TRUE(s);
  EXPECT_EQ(readF32(*s, "w.exp_avg"), (std::vector<float>{0, 0, 0}));
}

TEST(RunSession, GeneratorSkipPassesOverVariates) {
  initial::NormalGenerator drawn(42), skipped(42);
  for (int i = 0; i < 5; ++i)
    drawn.next();
  skipped.skip(5);
  EXPECT_EQ(drawn.next(), skipped.next());
}

// fill() gives exactly the variates next() gives, in their order, for any
// split of the transforms (here in reverse, in odd pieces, across blocks of
// draws), and leaves the generator where next() calls would.
TEST(RunSession, GeneratorFillIsNextInAnyOrder) {
  const int64_t n = (int64_t{1} << 18) + 1234; // more than one block
  initial::NormalGenerator one(7), many(7);
  std::vector<double> expected(n), got(n, -1.0);
  for (double &v : expected)
    v = one.next();
  many.fill(
      n,
      [](int64_t m, auto &&fn) {
        for (int64_t end = m; end > 0; end -= std::min<int64_t>(end, 997))
          fn(end - std::min<int64_t>(end, 997), end);
      },
      [&](int64_t i, double v) { got[i] = v; });
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(got[i], expected[i]) << i;
  EXPECT_EQ(many.next(), one.next());
}

TEST(RunSession, LoadedTensorsAreNotDrawn) {
  // twoAdamPlan: params w (3 variates), then u (8); optimizer state zero,
  // the loss an output. What a load writes first is never drawn, and the
  // rest get exactly the values of a session that loads nothing.
  auto base = makeSession(twoAdamPlan());
  ASSERT_TRUE(base);
  ASSERT_EQ(base->initializeRest(), MWRT_OK);
  const uint64_t all = 12 * 3 + 32 * 3 + 8 + 4, state = all - 4;
  EXPECT_EQ(base->stats().initializedBytes, all);
  EXPECT_EQ(base->stats().loadedBytes, 0u);
  std::string full = tempPath("two-adam-full.safetensors");
  ASSERT_EQ(base->saveWeights(full), MWRT_OK) << mwrt_last_error();
  SafeTensors params;
  const std::string paramsOnly = tempPath("two-adam-params.safetensors");
  {
    SafeTensors saved;
    std::string error;
    ASSERT_TRUE(readSafeTensors(full, saved, error)) << error;
    for (const char *name : {"w", "u"})
      ASSERT_TRUE(params.add(name, *saved.find(name), error)) << error;
    ASSERT_TRUE(writeSafeTensors(paramsOnly, params, error)) << error;
  }

  // setTensor before any read: w is not drawn, u still gets its values
  // (w's three variates passed over).
  auto set = makeSession(twoAdamPlan());
  ASSERT_TRUE(set);
  ASSERT_EQ(set->setTensor("w", f32Tensor({3}, {1, 2, 3})), MWRT_OK);
  EXPECT_EQ(readF32(*set, "u"), readF32(*base, "u"));
  EXPECT_EQ(readF32(*set, "w"), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(set->stats().initializedBytes, all - 12);
  EXPECT_EQ(set->stats().loadedBytes, 12u);

  // A full file: nothing but the loss is initialized; a file of the params
  // only: the optimizer state too. Both run exactly as the defaults do.
  auto fromFull = makeSession(twoAdamPlan());
  auto fromParams = makeSession(twoAdamPlan());
  ASSERT_TRUE(fromFull && fromParams);
  ASSERT_EQ(fromFull->loadWeights(full), MWRT_OK) << mwrt_last_error();
  std::vector<std::string> fresh;
  ASSERT_EQ(fromParams->loadWeights(paramsOnly, &fresh), MWRT_OK)
      << mwrt_last_error();
  EXPECT_EQ(fresh.size(), 5u);
  ASSERT_EQ(fromFull->initializeRest(), MWRT_OK);
  EXPECT_EQ(fromFull->stats().initializedBytes, 4u);
  EXPECT_EQ(fromFull->stats().loadedBytes, state);
  ASSERT_EQ(fromParams->initializeRest(), MWRT_OK);
  EXPECT_EQ(fromParams->stats().initializedBytes, all - 12 - 32);
  EXPECT_EQ(fromParams->stats().loadedBytes, 12u + 32u);
  for (int i = 0; i < 3; ++i) {
    double want, got;
    ASSERT_EQ(base->step(), MWRT_OK) << mwrt_last_error();
    ASSERT_EQ(base->loss(want), MWRT_OK);
    for (Session *s : {fromFull.get(), fromParams.get()}) {
      ASSERT_EQ(s->step(), MWRT_OK) << mwrt_last_error();
      ASSERT_EQ(s->loss(got), MWRT_OK);
      EXPECT_EQ(got, want);
    }
  }
  for (const char *name : {"w", "u", "u.exp_avg_sq"}) {
    EXPECT_EQ(readF32(*fromFull, name), readF32(*base, name)) << name;
    EXPECT_EQ(readF32(*fromParams, name), readF32(*base, name)) << name;
  }
  // A load after the defaults still overrides them.
  ASSERT_EQ(set->setTensor("u", f32Tensor({2, 4}, std::vector<float>(8, 5))),
            MWRT_OK);
  EXPECT_EQ(readF32(*set, "u"), std::vector<float>(8, 5));
}

TEST(RunSession, SyntheticTokensFollowTheirBounds) {
  // tokens -> reshape -> embedding (11 rows); labels -> reshape over the
  // tokens' old arena bytes -> cross_entropy over 9 classes. The tokens'
  // bound is 11 (the cross-entropy reads bytes that no longer hold them),
  // the labels' 9.
  PlanBuilder b;
  b.function = "lm";
  b.arenaSize = 704;
  int tokens = b.addPersistent("tokens", DType::I64, {2, 5}, Role::Input, 0);
  int labels = b.addPersistent("labels", DType::I64, {2, 5}, Role::Label, 1);
  int wte = b.addPersistent("wte.weight", DType::F32, {11, 4}, Role::Param, 2);
  int head = b.addPersistent("head.weight", DType::F32, {4, 9}, Role::Param, 3);
  b.addPersistent("ln.weight", DType::F32, {4}, Role::Param, 4);
  b.addPersistent("head.bias", DType::F32, {9}, Role::Param, 5);
  int loss = b.addPersistent("loss", DType::F32, {}, Role::Output);
  b.addKernel("mw.reshape", {persistent(tokens, {2, 5}, DType::I64)},
              {arena(0, {10}, DType::I64)});
  b.addKernel("mw.embedding",
              {persistent(wte, {11, 4}), arena(0, {10}, DType::I64)},
              {arena(128, {10, 4})});
  b.addKernel("mw.matmul", {arena(128, {10, 4}), persistent(head, {4, 9})},
              {arena(320, {10, 9})});
  b.addKernel("mw.reshape", {persistent(labels, {2, 5}, DType::I64)},
              {arena(0, {10}, DType::I64)});
  b.addKernel("mw.cross_entropy",
              {arena(320, {10, 9}), arena(0, {10}, DType::I64)},
              {persistent(loss, {})});
  b.addResult("loss", Role::Output, persistent(loss, {}));
  auto s = makeSession(b);
  ASSERT_TRUE(s);
  TensorData t;
  ASSERT_EQ(s->readPersistent("tokens", t), MWRT_OK);
  std::vector<int64_t> want, wantLabels;
  for (int64_t row = 0; row < 2; ++row)
    for (int64_t col = 0; col < 5; ++col) {
      want.push_back((row * 7 + col) % 11);
      wantLabels.push_back((row * 7 + col + 1) % 9);
    }
  EXPECT_EQ(i64Values(t), want);
  ASSERT_EQ(s->readPersistent("labels", t), MWRT_OK);
  EXPECT_EQ(i64Values(t), wantLabels);
  EXPECT_EQ(readF32(*s, "ln.weight"), (std::vector<float>(4, 1.0f)));
  EXPECT_EQ(readF32(*s, "head.bias"), (std::vector<float>(9, 0.0f)));
  ASSERT_EQ(s->step(), MWRT_OK) << mwrt_last_error();
  double l;
  ASSERT_EQ(s->loss(l), MWRT_OK);
  // Small weights: logits near 0, so the loss is near log(9).
  EXPECT_NEAR(l, std::log(9.0), 0.05);
}

TEST(RunSession, OptimizerCountersAndLossScaleStartLikeDeepSpeed) {
  PlanBuilder b;
  b.arenaSize = 64;
  int w = b.addPersistent("w", DType::F32, {2}, Role::Param, 0);
  int m = b.addPersistent("w.exp_avg", DType::F32, {2}, Role::OptimizerState);
  int v =
      b.addPersistent("w.exp_avg_sq", DType::F32, {2}, Role::OptimizerState);
  int t = b.addPersistent("adam_t", DType::F32, {}, Role::OptimizerState);
  int overflow = b.addPersistent("overflow", DType::F32, {}, Role::Input);
  int scale = b.addPersistent("s", DType::F32, {}, Role::OptimizerState);
  int iter = b.addPersistent("i", DType::I64, {}, Role::OptimizerState);
  int last = b.addPersistent("l", DType::I64, {}, Role::OptimizerState);
  int hyst = b.addPersistent("h", DType::I64, {}, Role::OptimizerState);
  b.addPersistent("loss_scale.hysteresis", DType::I64, {}, Role::Input);
  b.addPersistent("loss_scale.scale", DType::F32, {}, Role::OptimizerState);
  b.addKernel("mw.adamw",
              {persistent(w, {2}), arena(0, {2}), persistent(m, {2}),
               persistent(v, {2}), persistent(t, {})},
              {persistent(w, {2}), persistent(m, {2}), persistent(v, {2})});
  b.addKernel(
      "mw.loss_scale_update",
      {persistent(overflow, {}), persistent(scale, {}),
       persistent(iter, {}, DType::I64), persistent(last, {}, DType::I64),
       persistent(hyst, {}, DType::I64)},
      {persistent(scale, {}), persistent(iter, {}, DType::I64),
       persistent(last, {}, DType::I64), persistent(hyst, {}, DType::I64)},
      {intAttr("hysteresis", 3)});
  auto s = makeSession(b);
  ASSERT_TRUE(s);
  // Read directly as adamw's step: 1 (the first update).
  EXPECT_EQ(readF32(*s, "adam_t"), (std::vector<float>{1.0f}));
  EXPECT_EQ(readF32(*s, "s"), (std::vector<float>{65536.0f}));
  auto i64 = [&](const char *name) {
    TensorData d;
    EXPECT_EQ(s->readPersistent(name, d), MWRT_OK);
    return i64Values(d);
  };
  EXPECT_EQ(i64("i"), (std::vector<int64_t>{0}));
  EXPECT_EQ(i64("l"), (std::vector<int64_t>{-1}));
  EXPECT_EQ(i64("h"), (std::vector<int64_t>{3}));
  // By name, whatever the role.
  EXPECT_EQ(i64("loss_scale.hysteresis"), (std::vector<int64_t>{2}));
  EXPECT_EQ(readF32(*s, "loss_scale.scale"), (std::vector<float>{65536.0f}));
}

TEST(RunSession, StepErrorNamesStepKernelOpAndLoc) {
  PlanBuilder b = denseReluPlan();
  b.kernels[0].ins[1] = persistent(1, {2, 3}); // [2, 3] @ [2, 3]
  auto s = makeSession(b);
  ASSERT_TRUE(s);
  ASSERT_EQ(s->step(), MWRT_INVALID_ARGUMENT);
  EXPECT_CONTAINS(std::string(mwrt_last_error()),
                  "step 1, kernel 0 ('mw.matmul' at dense.py:1): "
                  "'mw.matmul': contracting dimensions differ");
}

TEST(RunSession, NanLossNamesTheStep) {
  auto s = makeSession(nanLossPlan());
  ASSERT_TRUE(s);
  ASSERT_EQ(s->step(), MWRT_OK) << mwrt_last_error();
  double loss = -1;
  ASSERT_EQ(s->loss(loss), MWRT_OK);
  EXPECT_EQ(loss, 0.0);
  ASSERT_EQ(s->step(), MWRT_INVALID_ARGUMENT);
  EXPECT_STREQ(mwrt_last_error(), "step 2: the loss ('loss') is NaN; stopping");
  EXPECT_EQ(s->stats().steps, 1u);
  // Unchecked, the step completes and reports the NaN.
  SessionOptions options;
  options.checkLoss = false;
  s = makeSession(nanLossPlan(), options);
  ASSERT_EQ(s->step(), MWRT_OK);
  ASSERT_EQ(s->step(), MWRT_OK);
  ASSERT_EQ(s->loss(loss), MWRT_OK);
  EXPECT_TRUE(std::isnan(loss));
}

TEST(RunSession, ResultsCopiedThroughStrides) {
  // w <- transpose(transpose(neg(w))): the new w is a strided arena view.
  PlanBuilder b;
  b.arenaSize = 128;
  int w = b.addPersistent("w", DType::F32, {2, 3}, Role::Param, 0);
  b.addKernel("mw.neg", {persistent(w, {2, 3})}, {arena(0, {2, 3})});
  b.addKernel("mw.transpose", {arena(0, {2, 3})}, {arena(64, {3, 2})},
              {intsAttr("permutation", {1, 0})});
  OperandSpec back = arena(64, {2, 3});
  back.strides = {1, 2};
  b.addResult("w", Role::Param, back);
  auto s = makeSession(b);
  ASSERT_TRUE(s);
  ASSERT_EQ(s->setTensor("w", f32Tensor({2, 3}, {1, 2, 3, 4, 5, 6})), MWRT_OK);
  ASSERT_EQ(s->step(), MWRT_OK) << mwrt_last_error();
  std::vector<float> neg = {-1, -2, -3, -4, -5, -6};
  EXPECT_EQ(readF32(*s, "w"), neg);
  EXPECT_EQ(readF32(*s, "w", /*result=*/true), neg);
  EXPECT_EQ(s->stats().workspaceBytes, 0u);
  EXPECT_EQ(s->plan().lossResult(), -1);
  double loss;
  EXPECT_EQ(s->loss(loss), MWRT_NOT_FOUND);
}

TEST(RunSession, OverlappingResultCopiesGoThroughStaging) {
  // Results swap two parameters: each source is the other's destination.
  PlanBuilder b;
  int a = b.addPersistent("a", DType::F32, {2}, Role::Param, 0);
  int c = b.addPersistent("b", DType::F32, {2}, Role::Param, 1);
  b.addResult("a", Role::Param, persistent(c, {2}));
  b.addResult("b", Role::Param, persistent(a, {2}));
  auto s = makeSession(b);
  ASSERT_TRUE(s);
  ASSERT_EQ(s->setTensor("a", f32Tensor({2}, {1, 2})), MWRT_OK);
  ASSERT_EQ(s->setTensor("b", f32Tensor({2}, {3, 4})), MWRT_OK);
  ASSERT_EQ(s->step(), MWRT_OK);
  EXPECT_EQ(readF32(*s, "a"), (std::vector<float>{3, 4}));
  EXPECT_EQ(readF32(*s, "b"), (std::vector<float>{1, 2}));
  SessionStats st = s->stats();
  EXPECT_EQ(st.workspaceBytes, 128u);
  EXPECT_EQ(st.measuredPeakBytes, st.plannedPeakBytes);
}

TEST(RunSession, WeightsFromFile) {
  auto s = makeSession(denseReluPlan());
  ASSERT_TRUE(s);
  SafeTensors file;
  std::string error;
  ASSERT_TRUE(file.add("fc.weight",
                       f32Tensor({3, 2}, {0.5f, -1, 1, 0, -1, 0.5f}), error));
  ASSERT_TRUE(file.add("fc.bias", f32Tensor({2}, {0.25f, -0.5f}), error));
  ASSERT_TRUE(file.add("unrelated", f32Tensor({1}, {7}), error));
  std::string path = tempPath("w.safetensors");
  ASSERT_TRUE(writeSafeTensors(path, file, error)) << error;
  std::vector<std::string> fresh = {"stale"};
  ASSERT_EQ(s->loadWeights(path, &fresh), MWRT_OK) << mwrt_last_error();
  EXPECT_TRUE(fresh.empty());
  ASSERT_EQ(s->setTensor("x", f32Tensor({2, 3}, {1, 2, 3, 4, 5, 6})), MWRT_OK);
  ASSERT_EQ(s->step(), MWRT_OK);
  EXPECT_EQ(readF32(*s, "y", true),
            (std::vector<float>{0.25f, 0.0f, 1.25f, -0.5f}));
}

TEST(RunSession, MisShapedOrMissingWeightIsNamed) {
  auto s = makeSession(denseReluPlan());
  ASSERT_TRUE(s);
  std::vector<float> before = readF32(*s, "fc.bias");
  SafeTensors file;
  std::string error;
  ASSERT_TRUE(file.add("fc.bias", f32Tensor({2}, {9, 9}), error));
  ASSERT_TRUE(
      file.add("fc.weight", f32Tensor({2, 3}, {1, 2, 3, 4, 5, 6}), error));
  std::string path = tempPath("bad.safetensors");
  ASSERT_TRUE(writeSafeTensors(path, file, error)) << error;
  EXPECT_EQ(s->loadWeights(path), MWRT_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(mwrt_last_error()),
            path + ": tensor 'fc.weight' is F32 [2, 3], but the plan's param "
                   "'fc.weight' is F32 [3, 2]");
  // Nothing was bound, not even the tensor that fit.
  EXPECT_EQ(readF32(*s, "fc.bias"), before);

  SafeTensors partial;
  ASSERT_TRUE(
      partial.add("fc.weight", f32Tensor({3, 2}, {1, 2, 3, 4, 5, 6}), error));
  ASSERT_TRUE(writeSafeTensors(path, partial, error));
  EXPECT_EQ(s->loadWeights(path), MWRT_NOT_FOUND);
  EXPECT_EQ(std::string(mwrt_last_error()),
            path + ": no tensor 'fc.bias' for the plan's param 'fc.bias' (F32 "
                   "[2])");

  TensorData wrongType;
  wrongType.dtype = mwrt::DType::I32;
  wrongType.shape = {2};
  wrongType.bytes.assign(8, 0);
  SafeTensors typed;
  ASSERT_TRUE(typed.add("fc.bias", wrongType, error));
  ASSERT_TRUE(
      typed.add("fc.weight", f32Tensor({3, 2}, {1, 2, 3, 4, 5, 6}), error));
  ASSERT_TRUE(writeSafeTensors(path, typed, error));
  EXPECT_EQ(s->loadWeights(path), MWRT_INVALID_ARGUMENT);
  EXPECT_CONTAINS(std::string(mwrt_last_error()),
                  "tensor 'fc.bias' is I32 [2], but the plan's param "
                  "'fc.bias' is F32 [2]");

  EXPECT_EQ(s->loadWeights(tempPath("absent.safetensors")), MWRT_NOT_FOUND);
}

TEST(RunSession, InputsFromFile) {
  auto s = makeSession(denseReluPlan());
  ASSERT_TRUE(s);
  SafeTensors file;
  std::string error;
  std::string path = tempPath("in.safetensors");
  ASSERT_TRUE(writeSafeTensors(path, file, error));
  EXPECT_EQ(s->loadInputs(path), MWRT_NOT_FOUND);
  EXPECT_CONTAINS(std::string(mwrt_last_error()),
                  "no tensor 'x' for the plan's input 'x' (F32 [2, 3])");
  ASSERT_TRUE(file.add("x", f32Tensor({2, 3}, {1, 2, 3, 4, 5, 6}), error));
  // A file of every argument (mw-eval --save-inputs) sets the params too.
  ASSERT_TRUE(file.add("fc.bias", f32Tensor({2}, {0.5f, 0.5f}), error));
  ASSERT_TRUE(writeSafeTensors(path, file, error));
  ASSERT_EQ(s->loadInputs(path), MWRT_OK) << mwrt_last_error();
  EXPECT_EQ(readF32(*s, "x"), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(readF32(*s, "fc.bias"), (std::vector<float>{0.5f, 0.5f}));
}

TEST(RunSession, ATensorComesFromOneFileOnly) {
  auto s = makeSession(denseReluPlan());
  ASSERT_TRUE(s);
  std::string error;
  SafeTensors weights;
  ASSERT_TRUE(weights.add("fc.bias", f32Tensor({2}, {1, 1}), error));
  ASSERT_TRUE(
      weights.add("fc.weight", f32Tensor({3, 2}, {1, 2, 3, 4, 5, 6}), error));
  std::string w = tempPath("w1.safetensors"), in = tempPath("i1.safetensors");
  ASSERT_TRUE(writeSafeTensors(w, weights, error));
  ASSERT_EQ(s->loadWeights(w), MWRT_OK) << mwrt_last_error();
  // Another file naming a weight is refused, and binds nothing.
  SafeTensors inputs;
  ASSERT_TRUE(inputs.add("x", f32Tensor({2, 3}, {9, 9, 9, 9, 9, 9}), error));
  ASSERT_TRUE(inputs.add("fc.bias", f32Tensor({2}, {7, 7}), error));
  ASSERT_TRUE(writeSafeTensors(in, inputs, error));
  EXPECT_EQ(s->loadInputs(in), MWRT_INVALID_ARGUMENT);
  EXPECT_CONTAINS(std::string(mwrt_last_error()),
                  "tensor 'fc.bias' is also in the weights file " + w);
  EXPECT_EQ(readF32(*s, "fc.bias"), (std::vector<float>{1, 1}));
  // The same file as both (mw-eval --save-inputs writes one) is fine.
  ASSERT_TRUE(weights.add("x", f32Tensor({2, 3}, {1, 2, 3, 4, 5, 6}), error));
  ASSERT_TRUE(writeSafeTensors(w, weights, error));
  ASSERT_EQ(s->loadInputs(w), MWRT_OK) << mwrt_last_error();
}

TEST(RunSession, SetTensorChecksEverything) {
  auto s = makeSession(denseReluPlan());
  ASSERT_TRUE(s);
  EXPECT_EQ(s->setTensor("nope", f32Tensor({1}, {1})), MWRT_NOT_FOUND);
  EXPECT_STREQ(mwrt_last_error(),
               "set tensor: the plan has no persistent named 'nope'");
  EXPECT_EQ(s->setTensor("fc.bias", f32Tensor({3}, {1, 2, 3})),
            MWRT_INVALID_ARGUMENT);
  EXPECT_STREQ(mwrt_last_error(),
               "set tensor: tensor 'fc.bias' is F32 [3], but the plan's param "
               "'fc.bias' is F32 [2]");
  float data[2] = {1, 2};
  EXPECT_EQ(s->setTensor("fc.bias", mwrt::DType::F32, {2}, data, 4),
            MWRT_INVALID_ARGUMENT);
  EXPECT_STREQ(mwrt_last_error(),
               "set tensor: 'fc.bias' (F32 [2]) takes 8 bytes, got 4");
}

TEST(RunSession, SaveWeightsRoundTrips) {
  auto s = makeSession(adamPlan());
  ASSERT_TRUE(s);
  ASSERT_EQ(s->step(), MWRT_OK);
  std::string path = tempPath("saved.safetensors");
  ASSERT_EQ(s->saveWeights(path), MWRT_OK) << mwrt_last_error();
  SafeTensors saved;
  std::string error;
  ASSERT_TRUE(readSafeTensors(path, saved, error)) << error;
  // Params and optimizer state, not the loss.
  EXPECT_EQ(saved.size(), 4u);
  EXPECT_TRUE(saved.find("optimizer.step"));
  EXPECT_FALSE(saved.find("loss"));
  auto again = makeSession(adamPlan());
  ASSERT_EQ(again->loadWeights(path), MWRT_OK) << mwrt_last_error();
  ASSERT_EQ(s->step(), MWRT_OK);
  ASSERT_EQ(again->step(), MWRT_OK);
  EXPECT_EQ(readF32(*again, "w"), readF32(*s, "w"));
  EXPECT_EQ(readF32(*again, "w.exp_avg_sq"), readF32(*s, "w.exp_avg_sq"));

  // A checkpoint without optimizer state starts a fresh optimizer.
  SafeTensors paramsOnly;
  ASSERT_TRUE(paramsOnly.add("w", *saved.find("w"), error));
  ASSERT_TRUE(writeSafeTensors(path, paramsOnly, error));
  std::vector<std::string> fresh;
  ASSERT_EQ(again->loadWeights(path, &fresh), MWRT_OK);
  EXPECT_EQ(fresh, (std::vector<std::string>{"w.exp_avg", "w.exp_avg_sq",
                                             "optimizer.step"}));
}

TEST(RunSession, Devices) {
  std::shared_ptr<const Plan> plan = makePlan(denseReluPlan());
  std::unique_ptr<Session> s;
  EXPECT_EQ(Session::create(plan, "cuda", {}, s), MWRT_UNAVAILABLE);
  std::string message = mwrt_last_error();
  EXPECT_TRUE(
      message.rfind("no CUDA device: ", 0) == 0 ||
      message.rfind("the CUDA backend is not built in this version", 0) == 0)
      << message;
  EXPECT_FALSE(s);
  EXPECT_EQ(Session::create(plan, "tpu", {}, s), MWRT_INVALID_ARGUMENT);
  EXPECT_STREQ(mwrt_last_error(),
               "unknown device 'tpu' (expected cpu or cuda)");
}

TEST(RunSession, AllocationFailureIsAnError) {
  PlanBuilder b = denseReluPlan();
  b.arenaSize = uint64_t(1) << 55; // 32 PiB: no machine has it
  std::unique_ptr<Session> s;
  EXPECT_EQ(Session::create(makePlan(b), "cpu", {}, s), MWRT_INTERNAL);
  EXPECT_STREQ(mwrt_last_error(), "cannot allocate the arena "
                                  "(36028797018963968 bytes): out of host "
                                  "memory");
  EXPECT_FALSE(s);
}

TEST(RunSession, ZeroSizedArenaAndTensors) {
  PlanBuilder b;
  int e = b.addPersistent("empty", DType::F32, {0, 3}, Role::Param, 0);
  b.addKernel("mw.neg", {persistent(e, {0, 3})}, {persistent(e, {0, 3})});
  auto s = makeSession(b);
  ASSERT_TRUE(s);
  ASSERT_EQ(s->step(), MWRT_OK) << mwrt_last_error();
  EXPECT_EQ(s->stats().measuredPeakBytes, 0u);
}

TEST(RunSession, CApiRoundTrip) {
  std::vector<uint8_t> bytes = denseReluPlan().finish();
  mwrt_plan *plan = nullptr;
  ASSERT_EQ(mwrt_plan_load_memory(bytes.data(), bytes.size(), &plan), MWRT_OK);
  mwrt_session_options options;
  mwrt_session_options_init(&options);
  EXPECT_EQ(options.check_loss, 1);
  options.reference_matmul = 1;
  mwrt_session *session = nullptr;
  EXPECT_EQ(mwrt_session_create(plan, "cuda", &options, &session),
            MWRT_UNAVAILABLE);
  EXPECT_EQ(session, nullptr);
  ASSERT_EQ(mwrt_session_create(plan, "cpu", &options, &session), MWRT_OK)
      << mwrt_last_error();
  mwrt_plan_free(plan); // the session keeps what it needs

  float x[6] = {1, 2, 3, 4, 5, 6}, w[6] = {0.5f, -1, 1, 0, -1, 0.5f},
        bias[2] = {0.25f, -0.5f};
  int64_t xs[2] = {2, 3}, ws[2] = {3, 2}, bs[1] = {2};
  ASSERT_EQ(mwrt_session_set_tensor(session, "x", MWRT_F32, xs, 2, x, sizeof x),
            MWRT_OK);
  ASSERT_EQ(mwrt_session_set_tensor(session, "fc.weight", MWRT_F32, ws, 2, w,
                                    sizeof w),
            MWRT_OK);
  ASSERT_EQ(mwrt_session_set_tensor(session, "fc.bias", MWRT_F32, bs, 1, bias,
                                    sizeof bias),
            MWRT_OK);
  EXPECT_EQ(mwrt_session_set_tensor(session, "fc.bias", MWRT_I64, bs, 1, bias,
                                    sizeof bias),
            MWRT_INVALID_ARGUMENT);
  double loss = 0;
  EXPECT_EQ(mwrt_session_loss(session, &loss), MWRT_NOT_FOUND);
  ASSERT_EQ(mwrt_session_step(session), MWRT_OK) << mwrt_last_error();
  ASSERT_EQ(mwrt_session_loss(session, &loss), MWRT_OK);
  EXPECT_EQ(loss, 1.0);

  mwrt_tensor_info info;
  ASSERT_EQ(mwrt_session_result_info(session, "y", &info), MWRT_OK);
  EXPECT_EQ(info.dtype, MWRT_F32);
  ASSERT_EQ(info.rank, 2u);
  EXPECT_EQ(info.shape[0], 2);
  EXPECT_EQ(info.nbytes, 16u);
  float y[4];
  ASSERT_EQ(mwrt_session_read_result(session, "y", y, sizeof y), MWRT_OK);
  EXPECT_EQ(y[0], 0.25f);
  EXPECT_EQ(y[3], -0.5f);
  EXPECT_EQ(mwrt_session_read_result(session, "y", y, 8),
            MWRT_INVALID_ARGUMENT);
  EXPECT_EQ(mwrt_session_read_result(session, "z", y, sizeof y),
            MWRT_NOT_FOUND);
  ASSERT_EQ(mwrt_session_tensor_info(session, "fc.bias", &info), MWRT_OK);
  EXPECT_EQ(info.nbytes, 8u);
  float b2[2];
  ASSERT_EQ(mwrt_session_read_tensor(session, "fc.bias", b2, sizeof b2),
            MWRT_OK);
  EXPECT_EQ(b2[1], -0.5f);

  mwrt_session_stats stats;
  ASSERT_EQ(mwrt_session_get_stats(session, &stats), MWRT_OK);
  EXPECT_EQ(stats.arena_bytes, 128u);
  EXPECT_EQ(stats.planned_peak_bytes, stats.measured_peak_bytes);
  EXPECT_EQ(stats.steps, 1u);

  std::string path = tempPath("capi.safetensors");
  ASSERT_EQ(mwrt_session_save_weights(session, path.c_str()), MWRT_OK);
  ASSERT_EQ(mwrt_session_load_weights(session, path.c_str()), MWRT_OK);
  EXPECT_EQ(mwrt_session_load_inputs(session, path.c_str()), MWRT_NOT_FOUND);
  EXPECT_EQ(mwrt_session_step(nullptr), MWRT_INVALID_ARGUMENT);
  EXPECT_STREQ(mwrt_last_error(), "session is null");
  mwrt_session_free(session);
  mwrt_session_free(nullptr);
}

} // namespace mwrt::test
