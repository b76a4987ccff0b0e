//===- DeepSpeedConfigTest.cpp - Unit tests of the DeepSpeed reader -------===//
//
// Checks lib/Zero's DeepSpeed configuration reader: DeepSpeed's defaults (as
// its code defines them, docs/zero.md), every "auto" resolution against
// Hugging Face's rules, the pass's overrides, each error with the key it
// names (and line and column for syntax errors), the warnings for unknown
// keys and for settings without effect, the batch arithmetic, the report,
// and the two configurations of the source articles (copied verbatim into
// Inputs/ so the test does not depend on ../shared).
//
//===----------------------------------------------------------------------===//

#include "memwall/Zero/DeepSpeedConfig.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <string>

using namespace memwall::zero;

namespace {

/// A small fp32 AdamW step: micro-batch 8, one rank, hidden 1024.
ModelFacts trainFacts() {
  ModelFacts f;
  f.hiddenSize = 1024;
  f.numParameters = 1000000;
  f.ranks = 1;
  f.microBatchSize = 8;
  f.gradientAccumulation = 1;
  f.precision = StepPrecision::FP32;
  f.optimizer = StepOptimizer::AdamW;
  f.learningRate = 1e-3;
  f.beta1 = 0.9;
  f.beta2 = 0.999;
  f.epsilon = 1e-8;
  f.weightDecay = 0.01;
  return f;
}

DeepSpeedConfigResult parse(llvm::StringRef text,
                            const ModelFacts &facts = trainFacts(),
                            const ZeroOverrides &overrides = {}) {
  return parseDeepSpeedConfig(text, "ds.json", facts, overrides);
}

std::string allDiagnostics(const DeepSpeedConfigResult &r) {
  std::string s;
  llvm::raw_string_ostream os(s);
  r.printDiagnostics(os);
  return s;
}

/// The first diagnostic of `severity` on `key` whose message contains
/// `text`, or nullptr.
const ConfigDiagnostic *findDiag(const DeepSpeedConfigResult &r,
                                 Severity severity, llvm::StringRef key,
                                 llvm::StringRef text = "") {
  for (const ConfigDiagnostic &d : r.diagnostics)
    if (d.severity == severity && d.keyPath == key &&
        llvm::StringRef(d.message).contains(text))
      return &d;
  return nullptr;
}

size_t count(const DeepSpeedConfigResult &r, Severity severity) {
  size_t n = 0;
  for (const ConfigDiagnostic &d : r.diagnostics)
    n += d.severity == severity;
  return n;
}

#define EXPECT_DIAG(r, sev, key, text)                                         \
  EXPECT_NE(findDiag(r, Severity::sev, key, text), nullptr)                    \
      << "missing " #sev " on " << key << " containing '" << text             \
      << "'; got:\n"                                                           \
      << allDiagnostics(r)

std::string readInput(llvm::StringRef name) {
  std::string path = std::string(MW_UNIT_INPUTS_DIR) + "/" + name.str();
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return "";
  return (*buffer)->getBuffer().str();
}

//===----------------------------------------------------------------------===//
// Defaults
//===----------------------------------------------------------------------===//

TEST(DeepSpeedConfig, DefaultsAreDeepSpeedsCode) {
  DeepSpeedConfigResult r = parse("{}");
  EXPECT_FALSE(r.hasErrors()) << allDiagnostics(r);
  EXPECT_EQ(count(r, Severity::Warning), 0u) << allDiagnostics(r);
  const ZeroConfig &c = r.config;
  EXPECT_EQ(c.stage.value, 0);
  EXPECT_TRUE(c.stage.isDefault());
  EXPECT_TRUE(c.allgatherPartitions.value);
  EXPECT_EQ(c.allgatherBucketSize.value, 500000000);
  EXPECT_FALSE(c.overlapComm.value); // stage 0
  EXPECT_TRUE(c.reduceScatter.value);
  EXPECT_EQ(c.reduceBucketSize.value, 500000000);
  EXPECT_TRUE(c.contiguousGradients.value);
  EXPECT_EQ(c.prefetchBucketSize.value, 50000000);
  EXPECT_EQ(c.paramPersistenceThreshold.value, 100000);
  EXPECT_EQ(c.maxLiveParameters.value, 1000000000);
  EXPECT_EQ(c.maxReuseDistance.value, 1000000000);
  EXPECT_EQ(c.subGroupSize.value, 1000000000);
  EXPECT_EQ(c.offloadParam.device.value, OffloadDevice::None);
  EXPECT_EQ(c.offloadParam.bufferCount.value, 5);
  EXPECT_EQ(c.offloadParam.bufferSize.value, 100000000);
  EXPECT_EQ(c.offloadParam.maxInCpu.value, 1000000000);
  EXPECT_FALSE(c.offloadParam.pinMemory.value);
  EXPECT_EQ(c.offloadOptimizer.device.value, OffloadDevice::None);
  EXPECT_EQ(c.offloadOptimizer.bufferCount.value, 4);
  EXPECT_EQ(c.offloadOptimizer.ratio.value, 1.0);
  EXPECT_FALSE(c.fp16Enabled.value);
  EXPECT_EQ(c.lossScale.value, 0.0);
  EXPECT_EQ(c.initialScalePower.value, 16);
  EXPECT_EQ(c.lossScaleWindow.value, 1000);
  EXPECT_EQ(c.hysteresis.value, 2);
  EXPECT_FALSE(c.consecutiveHysteresis.value);
  EXPECT_EQ(c.minLossScale.value, 1);
  EXPECT_FALSE(c.bf16Enabled.value);
  EXPECT_EQ(c.gradientClipping.value, 0.0);
  EXPECT_FALSE(c.activationCheckpointing.partitionActivations.value);
  EXPECT_FALSE(c.rematRequested.value);
  // The batch comes from the step.
  EXPECT_EQ(c.trainMicroBatchSizePerGpu.value, 8);
  EXPECT_EQ(c.gradientAccumulationSteps.value, 1);
  EXPECT_EQ(c.trainBatchSize.value, 8);
  EXPECT_EQ(c.trainBatchSize.origin, Origin::Derived);
}

//===----------------------------------------------------------------------===//
// ZeRO-Inference: offload_param for --mw-offload
//===----------------------------------------------------------------------===//

ModelFacts inferenceFacts() {
  ModelFacts f;
  f.hiddenSize = 64;
  f.numParameters = 118528;
  f.inference = true;
  return f;
}

TEST(DeepSpeedConfig, InferenceOffloadOfTheSeedsConfig) {
  // The seeds' ZeRO-Inference configuration, as written: no diagnostics.
  DeepSpeedConfigResult r = parse(R"({"zero_optimization": {"stage": 3,
      "offload_param": {"device": "cpu", "pin_memory": true},
      "overlap_comm": true}})",
                                  inferenceFacts());
  EXPECT_TRUE(r.diagnostics.empty()) << allDiagnostics(r);
  InferenceOffload o;
  EXPECT_TRUE(inferenceOffloadOf(r.config, o).empty());
  EXPECT_EQ(o.weights, std::optional<std::string>("cpu"));
  EXPECT_FALSE(o.path);
  EXPECT_FALSE(o.prefetch); // buffer_count not given: the pass's default
}

TEST(DeepSpeedConfig, InferenceOffloadToNvme) {
  DeepSpeedConfigResult r = parse(R"({"zero_optimization": {
      "offload_param": {"device": "nvme", "nvme_path": "/nvme",
                        "buffer_count": 3}}})",
                                  inferenceFacts());
  EXPECT_TRUE(r.diagnostics.empty()) << allDiagnostics(r);
  InferenceOffload o;
  EXPECT_TRUE(inferenceOffloadOf(r.config, o).empty());
  EXPECT_EQ(o.weights, std::optional<std::string>("nvme"));
  EXPECT_EQ(o.path, std::optional<std::string>("/nvme"));
  EXPECT_EQ(o.prefetch, std::optional<int64_t>(2));
  // Without nvme_path the pass's path= may give it: no error here.
  r = parse(R"({"zero_optimization": {"offload_param": {"device": "nvme"}}})",
            inferenceFacts());
  EXPECT_FALSE(r.hasErrors()) << allDiagnostics(r);
  // A training step still needs it.
  r = parse(R"({"zero_optimization": {"stage": 3,
      "offload_param": {"device": "nvme"}}})");
  EXPECT_DIAG(r, Error, "zero_optimization.offload_param.nvme_path",
              "device nvme needs nvme_path");
}

TEST(DeepSpeedConfig, InferenceOffloadErrors) {
  DeepSpeedConfigResult r = parse(R"({"zero_optimization": {
      "offload_param": {"device": "none", "buffer_count": 0}}})",
                                  inferenceFacts());
  InferenceOffload o;
  llvm::SmallVector<ConfigDiagnostic, 2> d = inferenceOffloadOf(r.config, o);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].keyPath, "zero_optimization.offload_param.device");
  EXPECT_EQ(d[0].line, 2u);
  EXPECT_EQ(d[1].keyPath, "zero_optimization.offload_param.buffer_count");
  EXPECT_FALSE(o.weights);
  EXPECT_FALSE(o.prefetch);
}

TEST(DeepSpeedConfig, OverlapCommDefaultDependsOnStage) {
  ModelFacts f = trainFacts();
  f.ranks = 4;
  f.microBatchSize = 2;
  EXPECT_TRUE(parse(R"({"zero_optimization": {"stage": 3}})", f)
                  .config.overlapComm.value);
  EXPECT_FALSE(parse(R"({"zero_optimization": {"stage": 2}})", f)
                   .config.overlapComm.value);
  // A stage override moves the default with it.
  ZeroOverrides o;
  o.stage = 3;
  DeepSpeedConfigResult r = parse(R"({"zero_optimization": {"stage": 1}})", f, o);
  EXPECT_TRUE(r.config.overlapComm.value);
  EXPECT_TRUE(r.config.overlapComm.isDefault());
}

TEST(DeepSpeedConfig, GivenValuesAndOrigins) {
  DeepSpeedConfigResult r = parse(R"({
  "zero_optimization": {"stage": 2, "reduce_bucket_size": 5e8,
                        "allgather_bucket_size": 123456}
})");
  EXPECT_FALSE(r.hasErrors()) << allDiagnostics(r);
  EXPECT_EQ(r.config.stage.value, 2);
  EXPECT_TRUE(r.config.stage.isGiven());
  EXPECT_EQ(r.config.stage.line, 2u);
  EXPECT_EQ(r.config.reduceBucketSize.value, 500000000);
  EXPECT_EQ(r.config.allgatherBucketSize.value, 123456);
  EXPECT_EQ(r.config.allgatherBucketSize.line, 3u);
}

//===----------------------------------------------------------------------===//
// "auto"
//===----------------------------------------------------------------------===//

TEST(DeepSpeedConfig, AutoFromHiddenSizeAtStage3) {
  ModelFacts f = trainFacts();
  f.ranks = 2;
  f.microBatchSize = 4;
  DeepSpeedConfigResult r = parse(R"({"zero_optimization": {
    "stage": 3, "reduce_bucket_size": "auto",
    "stage3_prefetch_bucket_size": "auto",
    "stage3_param_persistence_threshold": "auto"}})",
                                  f);
  EXPECT_FALSE(r.hasErrors()) << allDiagnostics(r);
  EXPECT_EQ(r.config.reduceBucketSize.value, 1024 * 1024);
  EXPECT_TRUE(r.config.reduceBucketSize.isAuto());
  // int(0.9 * 1024 * 1024) = int(943718.4)
  EXPECT_EQ(r.config.prefetchBucketSize.value, 943718);
  EXPECT_TRUE(r.config.prefetchBucketSize.isAuto());
  EXPECT_EQ(r.config.paramPersistenceThreshold.value, 10240);
}

TEST(DeepSpeedConfig, Stage3AutoBelowStage3KeepsDefault) {
  ModelFacts f = trainFacts();
  f.ranks = 2;
  DeepSpeedConfigResult r = parse(R"({"zero_optimization": {
    "stage": 2, "reduce_bucket_size": "auto",
    "stage3_prefetch_bucket_size": "auto"}})",
                                  f);
  EXPECT_FALSE(r.hasErrors()) << allDiagnostics(r);
  EXPECT_EQ(r.config.reduceBucketSize.value, 1024 * 1024);
  EXPECT_EQ(r.config.prefetchBucketSize.value, 50000000);
  EXPECT_TRUE(r.config.prefetchBucketSize.isAuto());
  EXPECT_DIAG(r, Warning, "zero_optimization.stage3_prefetch_bucket_size",
              "only for ZeRO stage 3");
}

TEST(DeepSpeedConfig, AutoNeedsHiddenSize) {
  ModelFacts f = trainFacts();
  f.hiddenSize.reset();
  DeepSpeedConfigResult r =
      parse(R"({"zero_optimization": {"reduce_bucket_size": "auto"}})", f);
  EXPECT_TRUE(r.hasErrors());
  EXPECT_DIAG(r, Error, "zero_optimization.reduce_bucket_size", "hidden size");
}

TEST(DeepSpeedConfig, AutoFromStep) {
  ModelFacts f = trainFacts();
  f.ranks = 4;
  f.gradientAccumulation = 2;
  f.precision = StepPrecision::BF16;
  DeepSpeedConfigResult r = parse(R"({
    "train_batch_size": "auto",
    "train_micro_batch_size_per_gpu": "auto",
    "gradient_accumulation_steps": "auto",
    "gradient_clipping": "auto",
    "fp16": {"enabled": "auto"},
    "bf16": {"enabled": "auto"},
    "optimizer": {"type": "AdamW", "params": {
      "lr": "auto", "betas": "auto", "eps": "auto", "weight_decay": "auto"}}
  })",
                                  f);
  EXPECT_FALSE(r.hasErrors()) << allDiagnostics(r);
  const ZeroConfig &c = r.config;
  EXPECT_EQ(c.trainMicroBatchSizePerGpu.value, 8);
  EXPECT_EQ(c.gradientAccumulationSteps.value, 2);
  EXPECT_EQ(c.trainBatchSize.value, 8 * 2 * 4);
  EXPECT_TRUE(c.trainBatchSize.isAuto());
  EXPECT_EQ(c.gradientClipping.value, 0.0);
  EXPECT_DIAG(r, Note, "gradient_clipping", "no gradient clipping");
  EXPECT_FALSE(c.fp16Enabled.value);
  EXPECT_TRUE(c.fp16Enabled.isAuto());
  EXPECT_TRUE(c.bf16Enabled.value);
  ASSERT_TRUE(c.lr && c.beta1 && c.beta2 && c.eps && c.weightDecay);
  EXPECT_EQ(c.lr->value, 1e-3);
  EXPECT_EQ(c.beta1->value, 0.9);
  EXPECT_EQ(c.beta2->value, 0.999);
  EXPECT_EQ(c.eps->value, 1e-8);
  EXPECT_EQ(c.weightDecay->value, 0.01);
  EXPECT_TRUE(c.lr->isAuto());
}

TEST(DeepSpeedConfig, AutoFp16FromFp16Step) {
  ModelFacts f = trainFacts();
  f.precision = StepPrecision::FP16;
  DeepSpeedConfigResult r = parse(R"({"fp16": {"enabled": "auto"}})", f);
  EXPECT_FALSE(r.hasErrors()) << allDiagnostics(r);
  EXPECT_TRUE(r.config.fp16Enabled.value);
}

TEST(DeepSpeedConfig, AutoOptimizerNeedsStepOptimizer) {
  ModelFacts f = trainFacts();
  f.optimizer = StepOptimizer::None;
  f.learningRate.reset();
  f.beta1.reset();
  DeepSpeedConfigResult r = parse(
      R"({"optimizer": {"type": "Adam", "params": {"lr": "auto", "betas": "auto"}}})",
      f);
  EXPECT_DIAG(r, Error, "optimizer.params.lr", "optimizer lr");
  EXPECT_DIAG(r, Error, "optimizer.params.betas", "betas");
}

TEST(DeepSpeedConfig, AutoMicroBatchNeedsStep) {
  ModelFacts f = trainFacts();
  f.microBatchSize.reset();
  DeepSpeedConfigResult r =
      parse(R"({"train_micro_batch_size_per_gpu": "auto"})", f);
  EXPECT_DIAG(r, Error, "train_micro_batch_size_per_gpu", "micro-batch");
}

TEST(DeepSpeedConfig, UnresolvedAutoFallsBackToDefault) {
  DeepSpeedConfigResult r = parse(R"({"fp16": {"loss_scale_window": "auto"}})");
  EXPECT_FALSE(r.hasErrors()) << allDiagnostics(r);
  EXPECT_EQ(r.config.lossScaleWindow.value, 1000);
  EXPECT_DIAG(r, Warning, "fp16.loss_scale_window", "drops \"auto\"");
}

//===----------------------------------------------------------------------===//
// Overrides
//===----------------------------------------------------------------------===//

TEST(DeepSpeedConfig, OverridesWinOverTheFile) {
  ModelFacts f = trainFacts();
  ZeroOverrides o;
  o.stage = 3;
  o.ranks = 4;
  o.reduceBucketSize = 1000;
  o.allgatherBucketSize = 2000;
  o.prefetchBucketSize = 3000;
  o.paramPersistenceThreshold = 4000;
  o.maxLiveParameters = 5000;
  o.overlapComm = false;
  DeepSpeedConfigResult r = parse(R"({"zero_optimization": {
    "stage": 1, "reduce_bucket_size": 7}})",
                                  f, o);
  EXPECT_FALSE(r.hasErrors()) << allDiagnostics(r);
  const ZeroConfig &c = r.config;
  EXPECT_EQ(c.stage.value, 3);
  EXPECT_EQ(c.stage.origin, Origin::Override);
  EXPECT_EQ(c.ranks.value, 4);
  EXPECT_EQ(c.reduceBucketSize.value, 1000);
  EXPECT_EQ(c.allgatherBucketSize.value, 2000);
  EXPECT_EQ(c.prefetchBucketSize.value, 3000);
  EXPECT_EQ(c.paramPersistenceThreshold.value, 4000);
  EXPECT_EQ(c.maxLiveParameters.value, 5000);
  EXPECT_FALSE(c.overlapComm.value);
  EXPECT_EQ(c.overlapComm.origin, Origin::Override);
  // The batch follows the overridden ranks.
  EXPECT_EQ(c.trainBatchSize.value, 8 * 4);
  EXPECT_DIAG(r, Note, "zero_optimization.stage", "replaces");
  EXPECT_DIAG(r, Note, "zero_optimization.reduce_bucket_size", "replaces");
}

TEST(DeepSpeedConfig, ApplyOverridesAlone) {
  ZeroConfig c;
  ZeroOverrides o;
  o.stage = 5;
  o.reduceBucketSize = 0;
  o.prefetchBucketSize = 0;
  auto diags = applyOverrides(c, o);
  ASSERT_EQ(diags.size(), 2u);
  EXPECT_EQ(diags[0].keyPath, "zero_optimization.stage");
  EXPECT_EQ(diags[0].severity, Severity::Error);
  EXPECT_EQ(diags[1].keyPath, "zero_optimization.reduce_bucket_size");
  EXPECT_EQ(c.stage.value, 0);
  EXPECT_EQ(c.prefetchBucketSize.value, 0); // 0 disables prefetch: valid
  EXPECT_EQ(c.prefetchBucketSize.origin, Origin::Override);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST(DeepSpeedConfig, SyntaxErrorHasLineAndColumn) {
  DeepSpeedConfigResult r = parse("{\n  \"zero_optimization\": {\n"
                                  "    \"stage\": 2,\n  }\n}");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  const ConfigDiagnostic &d = r.diagnostics[0];
  EXPECT_EQ(d.severity, Severity::Error);
  EXPECT_EQ(d.line, 4u);
  EXPECT_EQ(d.column, 3u);
  EXPECT_EQ(d.format("ds.json"),
            "ds.json:4:3: error: invalid JSON: Expected object key");
}

TEST(DeepSpeedConfig, SyntaxErrorFirstLine) {
  DeepSpeedConfigResult r = parse("{\"stage\" 2}");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].line, 1u);
  EXPECT_EQ(r.diagnostics[0].column, 10u);
  EXPECT_NE(r.diagnostics[0].message.find("Expected :"), std::string::npos)
      << r.diagnostics[0].message;
}

TEST(DeepSpeedConfig, DuplicateKeyIsAnError) {
  // DeepSpeed loads with dict_raise_error_on_duplicate_keys.
  DeepSpeedConfigResult r =
      parse("{\"fp16\": {\"enabled\": true, \"enabled\": false}}");
  const ConfigDiagnostic *d =
      findDiag(r, Severity::Error, "fp16.enabled", "duplicate key");
  ASSERT_NE(d, nullptr) << allDiagnostics(r);
  EXPECT_EQ(d->line, 1u);
  EXPECT_EQ(d->column, 28u);
}

TEST(DeepSpeedConfig, TypeAndValueErrorsNameTheKey) {
  struct Case {
    const char *text;
    const char *key;
    const char *message;
  } cases[] = {
      {R"({"zero_optimization": {"stage": 4}})", "zero_optimization.stage",
       "4 must be in [0, 3]"},
      {R"({"zero_optimization": {"stage": -1}})", "zero_optimization.stage",
       "must be in [0, 3]"},
      {R"({"zero_optimization": {"stage": "2"}})", "zero_optimization.stage",
       "expected an integer, got a string"},
      {R"({"zero_optimization": {"stage": 2.5}})", "zero_optimization.stage",
       "expected an integer, got 2.5"},
      {R"({"zero_optimization": {"reduce_bucket_size": -5}})",
       "zero_optimization.reduce_bucket_size", "-5 must be >= 1"},
      {R"({"zero_optimization": {"reduce_bucket_size": 0}})",
       "zero_optimization.reduce_bucket_size", "at least one element"},
      {R"({"zero_optimization": {"allgather_bucket_size": 0}})",
       "zero_optimization.allgather_bucket_size", "at least one element"},
      {R"({"zero_optimization": {"stage3_prefetch_bucket_size": -1}})",
       "zero_optimization.stage3_prefetch_bucket_size", "must be >= 0"},
      {R"({"zero_optimization": {"stage3_max_live_parameters": 1500.5}})",
       "zero_optimization.stage3_max_live_parameters", "expected an integer"},
      {R"({"zero_optimization": {"overlap_comm": 1}})",
       "zero_optimization.overlap_comm", "expected true or false, got a number"},
      {R"({"zero_optimization": {"reduce_scatter": "yes"}})",
       "zero_optimization.reduce_scatter", "expected true or false"},
      {R"({"zero_optimization": []})", "zero_optimization",
       "expected an object, got an array"},
      {R"({"zero_optimization": {"sub_group_size": 0}})",
       "zero_optimization.sub_group_size", "must be >= 1"},
      {R"({"zero_optimization": {"offload_param": {"device": "gpu"}}})",
       "zero_optimization.offload_param.device", "not an offload device"},
      {R"({"zero_optimization": {"stage": 3, "offload_param": {"device": "nvme"}}})",
       "zero_optimization.offload_param.nvme_path", "needs nvme_path"},
      {R"({"zero_optimization": {"offload_param": {"buffer_count": -1}}})",
       "zero_optimization.offload_param.buffer_count", "must be >= 0"},
      {R"({"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu", "ratio": 0.5}}})",
       "zero_optimization.offload_optimizer.ratio", "only with ZeRO stage 3"},
      {R"({"zero_optimization": {"offload_optimizer": {"ratio": 1.5}}})",
       "zero_optimization.offload_optimizer.ratio", "must be in [0, 1]"},
      {R"({"fp16": {"enabled": true, "loss_scale": -1}})", "fp16.loss_scale",
       "-1 must be >= 0"},
      {R"({"fp16": {"initial_scale_power": 200}})", "fp16.initial_scale_power",
       "finite fp32"},
      {R"({"fp16": {"loss_scale_window": 0}})", "fp16.loss_scale_window",
       "must be >= 1"},
      {R"({"fp16": {"hysteresis": 0}})", "fp16.hysteresis", "must be >= 1"},
      {R"({"fp16": {"min_loss_scale": 0}})", "fp16.min_loss_scale",
       "must be >= 1"},
      {R"({"fp16": {"enabled": true}, "bf16": {"enabled": true}})",
       "bf16.enabled", "cannot both be enabled"},
      {R"({"train_batch_size": 0})", "train_batch_size", "must be >= 1"},
      {R"({"train_micro_batch_size_per_gpu": -2})",
       "train_micro_batch_size_per_gpu", "must be >= 1"},
      {R"({"gradient_accumulation_steps": 1.5})", "gradient_accumulation_steps",
       "expected an integer"},
      {R"({"gradient_clipping": "big"})", "gradient_clipping",
       "expected a number"},
      {R"({"optimizer": {"type": 3}})", "optimizer.type", "expected a string"},
      {R"({"optimizer": {"params": {"betas": [0.9]}}})",
       "optimizer.params.betas", "got 1 elements"},
      {R"({"optimizer": {"params": {"betas": [0.9, 1.5]}}})",
       "optimizer.params.betas[1]", "must be in [0, 1)"},
      {R"({"optimizer": {"params": {"lr": -1}}})", "optimizer.params.lr",
       "must be >= 0"},
      {R"({"gradient_checkpointing": "yes"})", "gradient_checkpointing",
       "expected true or false"},
      {R"({"activation_checkpointing": {"profile": 1}})",
       "activation_checkpointing.profile", "expected true or false"},
      {R"([1, 2])", "", "is a JSON object, got an array"},
  };
  for (const Case &c : cases) {
    DeepSpeedConfigResult r = parse(c.text);
    EXPECT_NE(findDiag(r, Severity::Error, c.key, c.message), nullptr)
        << c.text << "\nexpected an error on '" << c.key << "' containing '"
        << c.message << "', got:\n"
        << allDiagnostics(r);
  }
}

TEST(DeepSpeedConfig, ErrorsPointAtTheKey) {
  DeepSpeedConfigResult r = parse("{\n  \"zero_optimization\": {\n"
                                  "    \"stage\": 7\n  }\n}");
  const ConfigDiagnostic *d =
      findDiag(r, Severity::Error, "zero_optimization.stage");
  ASSERT_NE(d, nullptr) << allDiagnostics(r);
  EXPECT_EQ(d->line, 3u);
  EXPECT_EQ(d->column, 5u);
  EXPECT_EQ(d->format("ds.json"),
            "ds.json:3:5: error: zero_optimization.stage: 7 must be in [0, 3] "
            "(ZeRO stages are 0, 1, 2, 3)");
  // The rejected value leaves DeepSpeed's default.
  EXPECT_EQ(r.config.stage.value, 0);
}

//===----------------------------------------------------------------------===//
// Warnings
//===----------------------------------------------------------------------===//

TEST(DeepSpeedConfig, UnknownKeysAtEveryLevel) {
  DeepSpeedConfigResult r = parse(R"({
  "zero_optimisation": {},
  "zero_optimization": {"stage": 0, "reduce_bucket": 5,
                        "offload_param": {"devise": "cpu"},
                        "offload_optimizer": {"colour": 1}},
  "fp16": {"enable": true},
  "optimizer": {"params": {"lrr": 1}},
  "activation_checkpointing": {"partitioned_activations": true}
})");
  EXPECT_FALSE(r.hasErrors()) << allDiagnostics(r);
  EXPECT_DIAG(r, Warning, "zero_optimisation", "did you mean 'zero_optimization'");
  EXPECT_DIAG(r, Warning, "zero_optimization.reduce_bucket", "unknown key");
  EXPECT_DIAG(r, Warning, "zero_optimization.offload_param.devise",
              "did you mean 'device'");
  EXPECT_DIAG(r, Warning, "zero_optimization.offload_optimizer.colour",
              "unknown key");
  EXPECT_DIAG(r, Warning, "fp16.enable", "did you mean 'enabled'");
  EXPECT_DIAG(r, Warning, "optimizer.params.lrr", "did you mean 'lr'");
  // DeepSpeed's own docstring spells the key this way; its code does not.
  EXPECT_DIAG(r, Warning, "activation_checkpointing.partitioned_activations",
              "did you mean 'partition_activations'");
  const ConfigDiagnostic *d =
      findDiag(r, Severity::Warning, "zero_optimization.reduce_bucket");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->line, 3u);
  EXPECT_EQ(d->column, 37u);
}

TEST(DeepSpeedConfig, UnmodelledDeepSpeedKeys) {
  DeepSpeedConfigResult r = parse(R"({"steps_per_print": 10,
    "zero_optimization": {"round_robin_gradients": true}})");
  EXPECT_DIAG(r, Warning, "steps_per_print", "does not model");
  EXPECT_DIAG(r, Warning, "zero_optimization.round_robin_gradients",
              "does not model");
}

TEST(DeepSpeedConfig, Stage3KeysBelowStage3) {
  ModelFacts f = trainFacts();
  f.ranks = 2;
  DeepSpeedConfigResult r = parse(R"({"zero_optimization": {"stage": 2,
    "stage3_prefetch_bucket_size": 1000, "stage3_param_persistence_threshold": 10,
    "stage3_max_live_parameters": 10, "stage3_max_reuse_distance": 10}})",
                                  f);
  for (const char *key : {"zero_optimization.stage3_prefetch_bucket_size",
                          "zero_optimization.stage3_param_persistence_threshold",
                          "zero_optimization.stage3_max_live_parameters",
                          "zero_optimization.stage3_max_reuse_distance"})
    EXPECT_DIAG(r, Warning, key, "apply only to ZeRO stage 3 (stage is 2)");
}

TEST(DeepSpeedConfig, Stage0Settings) {
  DeepSpeedConfigResult r = parse(R"({"zero_optimization": {"stage": 0,
    "reduce_scatter": false, "contiguous_gradients": true,
    "allgather_partitions": true, "overlap_comm": true}})");
  EXPECT_DIAG(r, Warning, "zero_optimization.reduce_scatter", "stage 0");
  EXPECT_DIAG(r, Warning, "zero_optimization.contiguous_gradients", "stage 0");
  EXPECT_DIAG(r, Warning, "zero_optimization.allgather_partitions", "stage 0");
  EXPECT_DIAG(r, Warning, "zero_optimization.overlap_comm", "stages 1-3");
}

TEST(DeepSpeedConfig, Stage3Settings) {
  ModelFacts f = trainFacts();
  f.ranks = 8;
  f.microBatchSize = 1;
  DeepSpeedConfigResult r = parse(R"({"zero_optimization": {"stage": 3,
    "allgather_bucket_size": 100, "reduce_scatter": true,
    "stage3_max_reuse_distance": 0, "sub_group_size": 1000,
    "stage3_prefetch_bucket_size": 0}})",
                                  f);
  EXPECT_FALSE(r.hasErrors()) << allDiagnostics(r);
  EXPECT_DIAG(r, Warning, "zero_optimization.allgather_bucket_size",
              "stage3_prefetch_bucket_size");
  EXPECT_DIAG(r, Warning, "zero_optimization.reduce_scatter",
              "always reduce-scatters");
  EXPECT_DIAG(r, Warning, "zero_optimization.stage3_max_reuse_distance",
              "static");
  EXPECT_DIAG(r, Warning, "zero_optimization.sub_group_size", "one kernel");
  EXPECT_DIAG(r, Note, "zero_optimization.stage3_prefetch_bucket_size",
              "disables prefetch");
}

TEST(DeepSpeedConfig, OneRankPartitionsNothing) {
  DeepSpeedConfigResult r = parse(R"({"zero_optimization": {"stage": 2}})");
  EXPECT_DIAG(r, Warning, "zero_optimization.stage", "one rank");
}

TEST(DeepSpeedConfig, Fp16SettingsWithoutFp16) {
  DeepSpeedConfigResult r =
      parse(R"({"fp16": {"enabled": false, "loss_scale_window": 500,
                "hysteresis": 4}})");
  EXPECT_DIAG(r, Warning, "fp16.loss_scale_window", "fp16.enabled is false");
  EXPECT_DIAG(r, Warning, "fp16.hysteresis", "fp16.enabled is false");

  // fp16 enabled on an fp32 step: the step's precision decides.
  r = parse(R"({"fp16": {"enabled": true, "initial_scale_power": 12}})");
  EXPECT_DIAG(r, Warning, "fp16.enabled", "the step's precision decides");
  EXPECT_DIAG(r, Warning, "fp16.initial_scale_power", "not fp16");
}

TEST(DeepSpeedConfig, StaticLossScale) {
  ModelFacts f = trainFacts();
  f.precision = StepPrecision::FP16;
  DeepSpeedConfigResult r = parse(
      R"({"fp16": {"enabled": true, "loss_scale": 128, "loss_scale_window": 10}})",
      f);
  EXPECT_FALSE(r.hasErrors()) << allDiagnostics(r);
  EXPECT_DIAG(r, Note, "fp16.loss_scale", "static loss scale 128");
  EXPECT_DIAG(r, Warning, "fp16.loss_scale_window", "static");
}

TEST(DeepSpeedConfig, PrecisionMismatches) {
  DeepSpeedConfigResult r = parse(R"({"bf16": {"enabled": true}})");
  EXPECT_DIAG(r, Warning, "bf16.enabled", "computes in fp32");
  ModelFacts f = trainFacts();
  f.precision = StepPrecision::BF16;
  r = parse("{}", f);
  EXPECT_DIAG(r, Warning, "fp16.enabled", "enables neither");
  // The old section name is read as bf16.
  r = parse(R"({"bfloat16": {"enabled": true}})", f);
  EXPECT_TRUE(r.config.bf16Enabled.value);
  EXPECT_EQ(count(r, Severity::Warning), 0u) << allDiagnostics(r);
}

TEST(DeepSpeedConfig, GradientClippingIsNotApplied) {
  DeepSpeedConfigResult r = parse(R"({"gradient_clipping": 1.0})");
  EXPECT_EQ(r.config.gradientClipping.value, 1.0);
  EXPECT_DIAG(r, Warning, "gradient_clipping", "--mw-autodiff emits none");
}

TEST(DeepSpeedConfig, OptimizerAgainstTheStep) {
  DeepSpeedConfigResult r = parse(R"({"optimizer": {"type": "SGD",
    "params": {"lr": 0.1, "betas": [0.9, 0.95], "momentum": 0.9}}})");
  EXPECT_DIAG(r, Warning, "optimizer.type", "not the step's optimizer (adamw)");
  EXPECT_DIAG(r, Warning, "optimizer.params.lr", "differs from the step's");
  EXPECT_DIAG(r, Warning, "optimizer.params.betas[1]",
              "differs from the step's");
  EXPECT_DIAG(r, Warning, "optimizer.params.momentum", "does not model");
  // Adam is DeepSpeed's AdamW (adam_w_mode defaults to true).
  r = parse(R"({"optimizer": {"type": "Adam", "params": {"lr": 1e-3}}})");
  EXPECT_EQ(count(r, Severity::Warning), 0u) << allDiagnostics(r);
  ModelFacts f = trainFacts();
  f.optimizer = StepOptimizer::None;
  r = parse(R"({"optimizer": {"type": "Adam"}})", f);
  EXPECT_DIAG(r, Warning, "optimizer", "no optimizer update");
}

TEST(DeepSpeedConfig, ActivationCheckpointing) {
  DeepSpeedConfigResult r = parse(R"({"activation_checkpointing": {
    "partition_activations": true, "cpu_checkpointing": true,
    "contiguous_memory_optimization": false, "number_checkpoints": 4,
    "synchronize_checkpoint_boundary": false, "profile": true}})");
  EXPECT_FALSE(r.hasErrors()) << allDiagnostics(r);
  const ActivationCheckpointingConfig &a = r.config.activationCheckpointing;
  EXPECT_TRUE(a.partitionActivations.value);
  EXPECT_EQ(a.numberCheckpoints.value, 4);
  EXPECT_DIAG(r, Warning, "activation_checkpointing.partition_activations",
              "data-parallel only");
  EXPECT_DIAG(r, Warning, "activation_checkpointing.cpu_checkpointing", "HBM");
  EXPECT_DIAG(r, Warning, "activation_checkpointing.number_checkpoints",
              "--mw-remat");
  EXPECT_DIAG(r, Warning, "activation_checkpointing.profile", "times");
  EXPECT_DIAG(r, Warning, "activation_checkpointing", "enables nothing");
  // `number_checkpoints: false` (a pattern many examples copy) means unset.
  r = parse(R"({"gradient_checkpointing": true,
    "activation_checkpointing": {"number_checkpoints": false}})");
  EXPECT_FALSE(r.hasErrors()) << allDiagnostics(r);
  EXPECT_EQ(r.config.activationCheckpointing.numberCheckpoints.value, 0);
}

TEST(DeepSpeedConfig, OffloadSettingsWithoutEffect) {
  DeepSpeedConfigResult r = parse(R"({"zero_optimization": {"stage": 2,
    "offload_param": {"device": "cpu", "buffer_count": 8},
    "offload_optimizer": {"device": "none", "pin_memory": true}}})");
  EXPECT_DIAG(r, Warning, "zero_optimization.offload_param.device",
              "only with ZeRO stage 3");
  EXPECT_DIAG(r, Warning, "zero_optimization.offload_param.buffer_count",
              "only when device is nvme");
  EXPECT_DIAG(r, Warning, "zero_optimization.offload_optimizer.pin_memory",
              "device is none");
}

TEST(DeepSpeedConfig, DeprecatedCpuOffload) {
  ModelFacts f = trainFacts();
  f.ranks = 2;
  DeepSpeedConfigResult r =
      parse(R"({"zero_optimization": {"stage": 2, "cpu_offload": true}})", f);
  EXPECT_FALSE(r.hasErrors()) << allDiagnostics(r);
  EXPECT_EQ(r.config.offloadOptimizer.device.value, OffloadDevice::CPU);
  EXPECT_DIAG(r, Warning, "zero_optimization.cpu_offload", "deprecated");
}

//===----------------------------------------------------------------------===//
// Batch arithmetic
//===----------------------------------------------------------------------===//

TEST(DeepSpeedConfig, BatchArithmetic) {
  ModelFacts f = trainFacts();
  f.ranks = 4;
  f.gradientAccumulation = 2;
  DeepSpeedConfigResult r = parse(R"({"train_batch_size": 64,
    "train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": 2})",
                                  f);
  EXPECT_FALSE(r.hasErrors()) << allDiagnostics(r);

  r = parse(R"({"train_batch_size": 63, "train_micro_batch_size_per_gpu": 8,
    "gradient_accumulation_steps": 2})",
            f);
  EXPECT_DIAG(r, Error, "train_batch_size", "63 != 8 * 2 * 4 = 64");

  // DeepSpeed derives the accumulation: 64 / 8 / 4 = 2.
  r = parse(R"({"train_batch_size": 64, "train_micro_batch_size_per_gpu": 8})",
            f);
  EXPECT_FALSE(r.hasErrors()) << allDiagnostics(r);
  EXPECT_EQ(r.config.gradientAccumulationSteps.value, 2);
  EXPECT_EQ(r.config.gradientAccumulationSteps.origin, Origin::Derived);

  r = parse(R"({"train_batch_size": 60, "train_micro_batch_size_per_gpu": 8})",
            f);
  EXPECT_DIAG(r, Error, "train_batch_size", "60 % (8 * 4) = 28");

  // train_batch_size alone: accumulation 1, micro = 64 / 4 = 16, which is
  // not the step's micro-batch.
  r = parse(R"({"train_batch_size": 64})", f);
  EXPECT_DIAG(r, Error, "train_micro_batch_size_per_gpu",
              "16 differs from the step's micro-batch size 8");

  // A micro-batch the step does not have.
  r = parse(R"({"train_micro_batch_size_per_gpu": 4,
    "gradient_accumulation_steps": 2})",
            f);
  EXPECT_DIAG(r, Error, "train_micro_batch_size_per_gpu",
              "differs from the step's micro-batch size 8");
  EXPECT_EQ(r.config.trainBatchSize.value, 32);

  // Nothing given: all from the step.
  r = parse("{}", f);
  EXPECT_FALSE(r.hasErrors()) << allDiagnostics(r);
  EXPECT_EQ(r.config.trainBatchSize.value, 64);
  EXPECT_EQ(r.config.gradientAccumulationSteps.value, 2);

  // Checking twice gives the same answer (derived values are recomputed).
  ZeroConfig c = r.config;
  EXPECT_TRUE(checkZeroConfig(c, f).empty());
  EXPECT_EQ(c.trainBatchSize.value, 64);
}

TEST(DeepSpeedConfig, BatchUnknownEverywhere) {
  ModelFacts f = trainFacts();
  f.microBatchSize.reset();
  DeepSpeedConfigResult r = parse("{}", f);
  EXPECT_FALSE(r.hasErrors());
  EXPECT_DIAG(r, Warning, "train_batch_size", "not checked");
}

//===----------------------------------------------------------------------===//
// The source articles' configurations
//===----------------------------------------------------------------------===//

TEST(DeepSpeedConfig, SeedTrainingConfig) {
  std::string text = readInput("seed-000-train-zero2.json");
  ASSERT_FALSE(text.empty());
  ModelFacts f = trainFacts();
  f.ranks = 8;
  f.precision = StepPrecision::FP16;
  DeepSpeedConfigResult r =
      parseDeepSpeedConfig(text, "seed-000-train-zero2.json", f);
  EXPECT_FALSE(r.hasErrors()) << allDiagnostics(r);
  const ZeroConfig &c = r.config;
  EXPECT_EQ(c.stage.value, 2);
  EXPECT_TRUE(c.allgatherPartitions.value);
  EXPECT_EQ(c.allgatherBucketSize.value, 200000000);
  EXPECT_TRUE(c.overlapComm.value);
  EXPECT_TRUE(c.reduceScatter.value);
  EXPECT_TRUE(c.fp16Enabled.value);
  EXPECT_EQ(c.lossScale.value, 0.0);
  EXPECT_EQ(c.lossScaleWindow.value, 1000);
  EXPECT_TRUE(c.rematRequested.value);
  const ConfigDiagnostic *d = findDiag(r, Severity::Warning,
                                       "gradient_checkpointing",
                                       "not a DeepSpeed key");
  ASSERT_NE(d, nullptr) << allDiagnostics(r);
  EXPECT_NE(d->message.find("--mw-remat"), std::string::npos);
  EXPECT_EQ(d->line, 9u);
  EXPECT_EQ(d->column, 3u);
  // That is the only warning on this step.
  EXPECT_EQ(count(r, Severity::Warning), 1u) << allDiagnostics(r);
}

TEST(DeepSpeedConfig, SeedInferenceConfig) {
  std::string text = readInput("seed-000-inference-zero3.json");
  ASSERT_FALSE(text.empty());
  ModelFacts f;
  f.hiddenSize = 7168;
  f.numParameters = 30000000000; // OPT-30B, the articles' example
  f.ranks = 1;
  f.microBatchSize = 16;
  f.precision = StepPrecision::FP16;
  DeepSpeedConfigResult r =
      parseDeepSpeedConfig(text, "seed-000-inference-zero3.json", f);
  EXPECT_FALSE(r.hasErrors()) << allDiagnostics(r);
  const ZeroConfig &c = r.config;
  EXPECT_EQ(c.stage.value, 3);
  EXPECT_TRUE(c.offloadParam.present);
  EXPECT_EQ(c.offloadParam.device.value, OffloadDevice::CPU);
  EXPECT_TRUE(c.offloadParam.pinMemory.value);
  EXPECT_TRUE(c.overlapComm.value);
  HostResidentBytes bytes = computeHostResidentBytes(c, f);
  EXPECT_EQ(bytes.paramHostBytes, 60000000000);
  EXPECT_EQ(bytes.optimizerHostBytes, 0);
  EXPECT_EQ(bytes.total(), 60000000000);
}

//===----------------------------------------------------------------------===//
// Host-resident bytes and the report
//===----------------------------------------------------------------------===//

TEST(DeepSpeedConfig, HostResidentBytes) {
  ModelFacts f = trainFacts();
  f.ranks = 4;
  f.numParameters = 1000;
  f.precision = StepPrecision::BF16;
  DeepSpeedConfigResult r = parse(R"({"zero_optimization": {"stage": 3,
    "offload_optimizer": {"device": "cpu"},
    "offload_param": {"device": "nvme", "nvme_path": "/nvme",
                      "buffer_count": 2, "buffer_size": 100}}})",
                                  f);
  EXPECT_FALSE(r.hasErrors()) << allDiagnostics(r);
  HostResidentBytes b = computeHostResidentBytes(r.config, f);
  // 250 elements per rank: params 2 bytes each to nvme, AdamW master +
  // gradient + two moments (16 bytes) on the host.
  EXPECT_EQ(b.paramHostBytes, 0);
  EXPECT_EQ(b.nvmeBytes, 500);
  EXPECT_EQ(b.pinnedBufferBytes, 2 * 100 * 2);
  EXPECT_EQ(b.optimizerHostBytes, 250 * 16);
}

TEST(DeepSpeedConfig, ReportTextAndJson) {
  ModelFacts f = trainFacts();
  f.ranks = 2;
  DeepSpeedConfigResult r = parse(R"({"zero_optimization": {"stage": 2,
    "reduce_bucket_size": "auto", "allgather_bucket_size": 2e8}})",
                                  f);
  std::string text;
  llvm::raw_string_ostream os(text);
  printZeroConfigReport(r.config, f, os);
  EXPECT_NE(text.find("zero_optimization.stage = 2 (given)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("zero_optimization.reduce_bucket_size = 1048576 (auto "
                      "-> 1048576)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("zero_optimization.allgather_bucket_size = 200000000 "
                      "(given)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("zero_optimization.overlap_comm = false (default; "
                      "DeepSpeed: true at stage 3, else false)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("train_batch_size = 16 (derived)\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("host-resident bytes per rank = 0"), std::string::npos);

  std::string json1, json2;
  llvm::raw_string_ostream(json1) << zeroConfigToJson(r.config, f);
  llvm::raw_string_ostream(json2) << zeroConfigToJson(r.config, f);
  EXPECT_EQ(json1, json2);
  EXPECT_NE(json1.find(R"({"key":"zero_optimization.reduce_bucket_size",)"
                       R"("origin":"auto","value":1048576})"),
            std::string::npos)
      << json1;
  EXPECT_NE(json1.find(R"("host_resident_bytes":{)"), std::string::npos);
}

} // namespace
