//===- AutodiffTest.cpp - Gradient checks and learning of training steps --===//
//
// The training steps --mw-autodiff builds, checked end to end with the
// reference evaluator:
// - gradients of every parameter tensor of the tiny models against central
//   finite differences of the forward loss (computed in the evaluator's f64
//   mode, where f32 rounding noise does not swamp the differences);
// - 50 AdamW steps of gpt2-tiny on a learnable sequence halve the loss;
// - gradient accumulation matches one big batch; bf16 steps keep f32 masters;
// - fp16 steps learn with dynamic loss scaling, and an overflowing step
//   leaves the params and optimizer state untouched.
//
//===----------------------------------------------------------------------===//

#include "memwall/Dialect/MW/IR/MWOps.h"
#include "memwall/Dialect/MW/Transforms/Passes.h"
#include "memwall/Eval/Evaluator.h"
#include "memwall/Models/Models.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace mlir;
using namespace mlir::mw;
using namespace mlir::mw::eval;
using namespace mlir::mw::models;

namespace {

struct Step {
  OwningOpRef<ModuleOp> module;
  func::FuncOp forward, step;
};

/// Builds `preset` (optionally at another batch or compute type) and its
/// training step.
Step buildStep(MLIRContext &ctx, StringRef preset,
               const MwAutodiffOptions &options, int64_t batch = 0,
               DType dtype = DType::F32) {
  std::optional<ModelConfig> config = lookupPreset(preset);
  EXPECT_TRUE(config.has_value());
  if (batch)
    config->batch = batch;
  config->dtype = dtype;
  FailureOr<OwningOpRef<ModuleOp>> built = buildModel(ctx, *config);
  EXPECT_TRUE(succeeded(built));
  PassManager pm(&ctx);
  pm.addPass(createMwAutodiff(options));
  EXPECT_TRUE(succeeded(pm.run(**built)));
  Step s;
  s.module = std::move(*built);
  s.forward = s.module->lookupSymbol<func::FuncOp>("forward");
  s.step = s.module->lookupSymbol<func::FuncOp>("train_step");
  return s;
}

/// Index of the argument (or result) named `name`, or -1.
int argIndex(func::FuncOp f, StringRef name) {
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    if (argumentName(f, i) == name)
      return i;
  return -1;
}

class AutodiffTest : public ::testing::Test {
protected:
  AutodiffTest() { ctx.loadDialect<MWDialect, func::FuncDialect>(); }
  MLIRContext ctx;
};

/// Every parameter tensor's gradient, read off an SGD step with lr = 1
/// (new = param - grad), against central differences of the forward loss at
/// a few random coordinates per tensor.
void checkGradients(MLIRContext &ctx, StringRef preset) {
  SCOPED_TRACE(preset.str());
  MwAutodiffOptions options;
  options.optimizer = "sgd";
  options.lr = 1.0;
  Step s = buildStep(ctx, preset, options);
  ASSERT_TRUE(s.step && s.forward);

  SmallVector<Tensor> stepArgs = randomInputs(s.step, /*seed=*/7);
  // Exercise the ignore index where the model has one (bert: -100).
  int labels = argIndex(s.step, "labels");
  if (labels >= 0 && preset.starts_with("bert"))
    stepArgs[labels].i[0] = -100;
  FailureOr<SmallVector<Tensor>> out = evaluate(s.step, stepArgs);
  ASSERT_TRUE(succeeded(out));

  // The forward's arguments, widened to f64, bound by name.
  SmallVector<Tensor64> fwdArgs;
  for (unsigned i = 0; i < s.forward.getNumArguments(); ++i) {
    int j = argIndex(s.step, argumentName(s.forward, i));
    ASSERT_GE(j, 0) << argumentName(s.forward, i);
    fwdArgs.push_back(widen(stepArgs[j]));
  }
  auto loss64 = [&](ArrayRef<Tensor64> args) {
    FailureOr<SmallVector<Tensor64>> r = evaluate64(s.forward, args);
    EXPECT_TRUE(succeeded(r));
    return succeeded(r) ? (*r)[0].f[0] : NAN;
  };
  // The f32 step's loss is the forward's loss.
  EXPECT_NEAR((*out)[0].f[0], loss64(fwdArgs), 1e-5);

  std::mt19937_64 rng(11);
  int checked = 0;
  double worst = 0.0;
  for (unsigned i = 0; i < s.forward.getNumArguments(); ++i) {
    auto role = s.forward.getArgAttrOfType<RoleAttr>(i, "mw.role");
    if (!role || role.getValue() != Role::param)
      continue;
    std::string name = argumentName(s.forward, i);
    int j = argIndex(s.step, name);
    // Results: loss, then new params in argument order.
    const Tensor &newParam = (*out)[1 + j];
    const Tensor &param = stepArgs[j];
    for (int sample = 0; sample < 3; ++sample) {
      int64_t c = static_cast<int64_t>(rng() % param.f.size());
      double grad = static_cast<double>(param.f[c]) - newParam.f[c];
      const double h = 1e-4;
      SmallVector<Tensor64> plus(fwdArgs), minus(fwdArgs);
      plus[i].f[c] += h;
      minus[i].f[c] -= h;
      double fd = (loss64(plus) - loss64(minus)) / (2 * h);
      double err = std::abs(grad - fd);
      bool ok = err <= 1e-3 * std::abs(fd) || err <= 1e-5;
      EXPECT_TRUE(ok) << name << "[" << c << "]: autodiff " << grad
                      << ", finite differences " << fd;
      if (std::abs(fd) > 1e-5)
        worst = std::max(worst, err / std::abs(fd));
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
  ::testing::Test::RecordProperty("worst_relative_error",
                                  std::to_string(worst));
}

TEST_F(AutodiffTest, GradientsMatchFiniteDifferencesGpt2Tiny) {
  checkGradients(ctx, "gpt2-tiny");
}
TEST_F(AutodiffTest, GradientsMatchFiniteDifferencesLlamaTiny) {
  checkGradients(ctx, "llama-tiny");
}
TEST_F(AutodiffTest, GradientsMatchFiniteDifferencesBertTiny) {
  checkGradients(ctx, "bert-tiny");
}
TEST_F(AutodiffTest, GradientsMatchFiniteDifferencesMlpTiny) {
  checkGradients(ctx, "mlp-tiny");
}

/// Runs `steps` steps feeding each step's outputs back as the next inputs;
/// returns the losses.
SmallVector<double> train(func::FuncOp step, SmallVector<Tensor> args,
                          int steps) {
  SmallVector<double> losses;
  unsigned numState = step.getNumResults() - 1;
  for (int k = 0; k < steps; ++k) {
    FailureOr<SmallVector<Tensor>> out = evaluate(step, args);
    EXPECT_TRUE(succeeded(out));
    if (failed(out))
      break;
    losses.push_back((*out)[0].f[0]);
    // Results 1.. are the params and state, in the step's argument order.
    for (unsigned r = 0; r < numState; ++r)
      args[r] = (*out)[1 + r];
  }
  return losses;
}

/// tokens[b][s] follows a fixed cycle of 16 tokens and labels are the next
/// token: a sequence a small model learns in a few dozen steps.
void fillLearnableSequence(func::FuncOp step, SmallVector<Tensor> &args) {
  Tensor &tokens = args[argIndex(step, "tokens")];
  Tensor &labels = args[argIndex(step, "labels")];
  int64_t b = tokens.shape[0], s = tokens.shape[1];
  auto token = [](int64_t pos) { return (pos * 5 + 3) % 16 * 7 % 251; };
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < s; ++j) {
      tokens.i[i * s + j] = token(i * 3 + j);
      labels.i[i * s + j] = token(i * 3 + j + 1);
    }
}

TEST_F(AutodiffTest, AdamWLearnsGpt2Tiny) {
  MwAutodiffOptions options;
  options.lr = 1e-2;
  Step s = buildStep(ctx, "gpt2-tiny", options);
  SmallVector<Tensor> args = randomInputs(s.step, /*seed=*/3);
  fillLearnableSequence(s.step, args);
  SmallVector<double> losses = train(s.step, args, 50);
  ASSERT_EQ(losses.size(), 50u);
  EXPECT_LT(losses.back(), losses.front() / 2)
      << "first " << losses.front() << ", last " << losses.back();
  RecordProperty("first_loss", std::to_string(losses.front()));
  RecordProperty("last_loss", std::to_string(losses.back()));
}

TEST_F(AutodiffTest, GradientAccumulationMatchesOneBatch) {
  MwAutodiffOptions one, two;
  two.gradAccum = 2;
  Step big = buildStep(ctx, "gpt2-tiny", one, /*batch=*/4);
  Step micro = buildStep(ctx, "gpt2-tiny", two, /*batch=*/2);
  ASSERT_EQ(big.step.getFunctionType(), micro.step.getFunctionType());
  SmallVector<Tensor> args = randomInputs(big.step, /*seed=*/5);
  FailureOr<SmallVector<Tensor>> a = evaluate(big.step, args);
  FailureOr<SmallVector<Tensor>> b = evaluate(micro.step, args);
  ASSERT_TRUE(succeeded(a) && succeeded(b));
  EXPECT_NEAR((*a)[0].f[0], (*b)[0].f[0], 1e-5);
  for (size_t r = 1; r < a->size(); ++r)
    for (size_t k = 0; k < (*a)[r].f.size(); ++k)
      ASSERT_NEAR((*a)[r].f[k], (*b)[r].f[k],
                  1e-5 + 1e-4 * std::abs((*a)[r].f[k]))
          << "result " << r << " element " << k;
}

TEST_F(AutodiffTest, Bf16StepKeepsF32MastersAndLearns) {
  MwAutodiffOptions options;
  options.precision = "bf16";
  options.lr = 1e-2;
  Step s = buildStep(ctx, "gpt2-tiny", options, /*batch=*/0, DType::BF16);
  func::FuncOp step = s.step;
  ASSERT_TRUE(step);
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    auto t = cast<RankedTensorType>(step.getArgumentTypes()[i]);
    if (isa<FloatType>(t.getElementType())) {
      EXPECT_TRUE(t.getElementType().isF32()) << argumentName(step, i);
    }
  }
  SmallVector<Tensor> args = randomInputs(step, /*seed=*/3);
  fillLearnableSequence(step, args);
  SmallVector<double> losses = train(step, args, 30);
  ASSERT_EQ(losses.size(), 30u);
  EXPECT_LT(losses.back(), losses.front() * 0.75);
}

/// gpt2-tiny written in f16 and its fp16 AdamW step.
Step buildFp16Step(MLIRContext &ctx) {
  MwAutodiffOptions options;
  options.precision = "fp16";
  options.lr = 1e-2;
  return buildStep(ctx, "gpt2-tiny", options, /*batch=*/0, DType::F16);
}

constexpr const char *kLossScaleState[] = {
    "loss_scale.scale", "loss_scale.iter", "loss_scale.last_overflow",
    "loss_scale.hysteresis"};

TEST_F(AutodiffTest, Fp16StepSignatureHasLossScaleState) {
  Step s = buildFp16Step(ctx);
  ASSERT_TRUE(s.step);
  // The four states follow the optimizer's (after optimizer.step), as
  // arguments and as results of the same names, types and role.
  int step = argIndex(s.step, "optimizer.step");
  ASSERT_GE(step, 0);
  for (auto [n, name] : llvm::enumerate(kLossScaleState)) {
    SCOPED_TRACE(name);
    int arg = argIndex(s.step, name);
    EXPECT_EQ(arg, step + 1 + static_cast<int>(n));
    ASSERT_GE(arg, 0);
    Type type = s.step.getArgumentTypes()[arg];
    auto t = cast<RankedTensorType>(type);
    EXPECT_EQ(t.getRank(), 0);
    if (n == 0) {
      EXPECT_TRUE(t.getElementType().isF32());
    } else {
      EXPECT_TRUE(t.getElementType().isSignlessInteger(64));
    }
    auto role = s.step.getArgAttrOfType<RoleAttr>(arg, "mw.role");
    ASSERT_TRUE(role);
    EXPECT_EQ(role.getValue(), Role::optimizer_state);
    // Results: the loss, then the params and state in argument order.
    unsigned res = 1 + arg;
    ASSERT_LT(res, s.step.getNumResults());
    EXPECT_EQ(resultName(s.step, res), name);
    EXPECT_EQ(s.step.getResultTypes()[res], type);
    auto resRole = s.step.getResultAttrOfType<RoleAttr>(res, "mw.role");
    ASSERT_TRUE(resRole);
    EXPECT_EQ(resRole.getValue(), Role::optimizer_state);
  }
  // Master weights and optimizer state stay f32.
  for (unsigned i = 0; i < s.step.getNumArguments(); ++i) {
    auto t = cast<RankedTensorType>(s.step.getArgumentTypes()[i]);
    if (isa<FloatType>(t.getElementType())) {
      EXPECT_TRUE(t.getElementType().isF32()) << argumentName(s.step, i);
    }
  }
}

TEST_F(AutodiffTest, Fp16StepLearnsGpt2Tiny) {
  Step s = buildFp16Step(ctx);
  ASSERT_TRUE(s.step);
  // mw-eval's random inputs start the loss scaling at DeepSpeed's state.
  SmallVector<Tensor> args = randomInputs(s.step, /*seed=*/3);
  EXPECT_EQ(args[argIndex(s.step, "loss_scale.scale")].f[0], 65536.0f);
  EXPECT_EQ(args[argIndex(s.step, "loss_scale.last_overflow")].i[0], -1);
  EXPECT_EQ(args[argIndex(s.step, "loss_scale.hysteresis")].i[0], 2);
  fillLearnableSequence(s.step, args);
  const int steps = 20;
  SmallVector<Tensor> state = args;
  SmallVector<double> losses;
  int skipped = 0;
  unsigned numState = s.step.getNumResults() - 1;
  int stepIdx = argIndex(s.step, "optimizer.step");
  for (int k = 0; k < steps; ++k) {
    FailureOr<SmallVector<Tensor>> out = evaluate(s.step, state);
    ASSERT_TRUE(succeeded(out));
    losses.push_back((*out)[0].f[0]);
    // A skipped step does not advance AdamW's counter.
    if ((*out)[1 + stepIdx].i[0] == state[stepIdx].i[0])
      ++skipped;
    for (unsigned r = 0; r < numState; ++r)
      state[r] = (*out)[1 + r];
  }
  EXPECT_EQ(state[argIndex(s.step, "loss_scale.iter")].i[0], steps);
  EXPECT_EQ(state[stepIdx].i[0], steps - skipped);
  EXPECT_LT(skipped, steps / 2);
  // Far from a window of 1000 clean steps the scale never grows: the first
  // overflow uses up the hysteresis, each later one halves the scale.
  float expectedScale =
      skipped == 0 ? 65536.0f : std::ldexp(65536.0f, -(skipped - 1));
  EXPECT_EQ(state[argIndex(s.step, "loss_scale.scale")].f[0], expectedScale);
  EXPECT_LT(losses.back(), losses.front() * 0.75)
      << "first " << losses.front() << ", last " << losses.back();
  RecordProperty("first_loss", std::to_string(losses.front()));
  RecordProperty("last_loss", std::to_string(losses.back()));
  RecordProperty("skipped_steps", std::to_string(skipped));
  RecordProperty(
      "final_scale",
      std::to_string(state[argIndex(s.step, "loss_scale.scale")].f[0]));
}

TEST_F(AutodiffTest, Fp16OverflowSkipsTheStep) {
  Step s = buildFp16Step(ctx);
  ASSERT_TRUE(s.step);
  SmallVector<Tensor> args = randomInputs(s.step, /*seed=*/3);
  fillLearnableSequence(s.step, args);
  // Two ordinary steps first, so that the moments are not zero.
  unsigned numState = s.step.getNumResults() - 1;
  for (int k = 0; k < 2; ++k) {
    FailureOr<SmallVector<Tensor>> out = evaluate(s.step, args);
    ASSERT_TRUE(succeeded(out));
    for (unsigned r = 0; r < numState; ++r)
      args[r] = (*out)[1 + r];
  }
  int scale = argIndex(s.step, "loss_scale.scale");
  int iter = argIndex(s.step, "loss_scale.iter");
  int last = argIndex(s.step, "loss_scale.last_overflow");
  int hyst = argIndex(s.step, "loss_scale.hysteresis");
  int stepIdx = argIndex(s.step, "optimizer.step");
  ASSERT_TRUE(scale >= 0 && iter >= 0 && last >= 0 && hyst >= 0);
  int64_t iter0 = args[iter].i[0];
  ASSERT_EQ(iter0, 2);
  ASSERT_EQ(args[hyst].i[0], 2) << "the two steps must not have overflowed";
  int64_t adamStep = args[stepIdx].i[0];

  // A scale of 3e38 makes the scaled f16 gradients overflow.
  args[scale].f[0] = 3e38f;
  FailureOr<SmallVector<Tensor>> out = evaluate(s.step, args);
  ASSERT_TRUE(succeeded(out));
  EXPECT_TRUE(std::isfinite((*out)[0].f[0])) << "the loss is not scaled";
  for (unsigned r = 0; r < numState; ++r) {
    if (static_cast<int>(r) >= scale && static_cast<int>(r) <= hyst)
      continue;
    const Tensor &before = args[r], &after = (*out)[1 + r];
    SCOPED_TRACE(argumentName(s.step, r));
    // Bit-identical: compare the bytes, not the values.
    ASSERT_EQ(before.f.size(), after.f.size());
    EXPECT_EQ(0, std::memcmp(before.f.data(), after.f.data(),
                             before.f.size() * sizeof(float)));
    EXPECT_EQ(before.i, after.i);
  }
  EXPECT_EQ((*out)[1 + stepIdx].i[0], adamStep) << "optimizer.step advanced";
  // DeepSpeed's first overflow with hysteresis 2 uses up the hysteresis and
  // keeps the scale; the second halves it.
  EXPECT_EQ((*out)[1 + scale].f[0], 3e38f);
  EXPECT_EQ((*out)[1 + iter].i[0], iter0 + 1);
  EXPECT_EQ((*out)[1 + last].i[0], iter0);
  EXPECT_EQ((*out)[1 + hyst].i[0], 1);

  SmallVector<Tensor> next = args;
  for (unsigned r = 0; r < numState; ++r)
    next[r] = (*out)[1 + r];
  FailureOr<SmallVector<Tensor>> out2 = evaluate(s.step, next);
  ASSERT_TRUE(succeeded(out2));
  EXPECT_EQ((*out2)[1 + scale].f[0], 1.5e38f);
  EXPECT_EQ((*out2)[1 + iter].i[0], iter0 + 2);
  EXPECT_EQ((*out2)[1 + last].i[0], iter0 + 1);
  EXPECT_EQ((*out2)[1 + hyst].i[0], 1);
  EXPECT_EQ((*out2)[1 + stepIdx].i[0], adamStep);
}

} // namespace
