//===- ModelsTest.cpp - Unit tests of the model generators ----------------===//
//
// Builds every preset through the Models library, verifies it, and checks the
// parameter count of the built module (the `param` arguments) against the
// closed forms of expectedParamCount and against the published figures.
// gpt3-175b is included: nothing is materialized, so it builds in well under
// a second.
//
//===----------------------------------------------------------------------===//

#include "memwall/Models/Models.h"

#include "memwall/Dialect/MW/IR/MWOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <chrono>

using namespace mlir;
using namespace mlir::mw::models;

namespace {

/// Builds `config`, expecting success and a module that verifies.
OwningOpRef<ModuleOp> buildOrFail(MLIRContext &ctx, const ModelConfig &config) {
  FailureOr<OwningOpRef<ModuleOp>> module = buildModel(ctx, config);
  EXPECT_TRUE(succeeded(module)) << formatFlags(config);
  if (failed(module))
    return {};
  EXPECT_TRUE(succeeded(verify(**module))) << formatFlags(config);
  return std::move(*module);
}

ModelConfig preset(StringRef name) {
  std::optional<ModelConfig> config = lookupPreset(name);
  EXPECT_TRUE(config.has_value()) << name.str();
  return config.value_or(ModelConfig());
}

std::string print(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, OpPrintingFlags().enableDebugInfo());
  return text;
}

/// The closed forms as published, which assume F = 4*D for GPT-2 and BERT;
/// Llama's k_proj and v_proj are [K, D] with K = kv heads * head_dim.
int64_t publishedClosedForm(const ModelConfig &c) {
  int64_t v = c.vocab, s = c.seq, d = c.hidden, l = c.layers, f = c.ffn;
  switch (c.family) {
  case Family::Gpt:
  case Family::Opt:
    return v * d + s * d + l * (12 * d * d + 13 * d) + 2 * d;
  case Family::Llama:
  {
    int64_t k = d / c.heads * c.numKvHeads();
    return 2 * v * d + l * (2 * d * d + 2 * d * k + 3 * d * f + 2 * d) + d;
  }
  case Family::Bert:
    return (v + s + 2) * d + 2 * d + l * (12 * d * d + 13 * d) + (d * d + d) +
           2 * d + v;
  case Family::Mlp:
    break;
  }
  return -1;
}

TEST(ModelsTest, EveryPresetMatchesItsClosedForm) {
  MLIRContext ctx;
  ASSERT_EQ(getPresets().size(), 15u);
  for (const Preset &p : getPresets()) {
    SCOPED_TRACE(p.name.str());
    OwningOpRef<ModuleOp> module = buildOrFail(ctx, p.config);
    ASSERT_TRUE(module);
    EXPECT_EQ(countParams(*module), expectedParamCount(p.config));
    if (p.config.family != Family::Mlp) {
      // Every preset of GPT-2, BERT and OPT has F = 4*D, where the general form
      // reduces to the published one.
      if (p.config.family != Family::Llama) {
        EXPECT_EQ(p.config.ffn, 4 * p.config.hidden);
      }
      EXPECT_EQ(expectedParamCount(p.config), publishedClosedForm(p.config));
    }
  }
}

TEST(ModelsTest, PublishedParameterCounts) {
  struct {
    StringRef preset;
    int64_t params;
  } published[] = {
      {"gpt2-tiny", 118528},
      {"gpt2-small", 124439808}, // tied embeddings, as HF reports
      {"gpt2-medium", 354823168},
      {"gpt2-large", 774030080},
      {"gpt2-xl", 1557611200},
      {"gpt3-175b", 174604259328},
      {"llama-7b-shaped", 6738415616}, // Llama-2-7b
      // llama-tiny's 133440 less 2 layers x 2 x (64 - 32) x 64 of k_proj and
      // v_proj.
      {"llama-tiny-gqa", 125248},
      {"bert-base", 109514298},        // BertForMaskedLM, bert-base-uncased
      {"bert-large", 335174458},       // BertForMaskedLM, bert-large-uncased
      // 48 layers of 616,655,872, embed_tokens 50272 x 7168, 2048 positions
      // and the final LayerNorm; HF's OPTForCausalLM has 2 x 7168 more (the
      // two rows of its position offset, unused here).
      {"opt-30b-shaped", 29974525952},
      {"mlp-tiny", 32 * 64 + 64 + 64 * 64 + 64 + 64 * 10 + 10},
  };
  MLIRContext ctx;
  for (auto [name, params] : published) {
    SCOPED_TRACE(name.str());
    ModelConfig config = preset(name);
    EXPECT_EQ(expectedParamCount(config), params);
    OwningOpRef<ModuleOp> module = buildOrFail(ctx, config);
    ASSERT_TRUE(module);
    EXPECT_EQ(countParams(*module), params);
  }
}

TEST(ModelsTest, Gpt3BuildsQuickly) {
  MLIRContext ctx;
  auto start = std::chrono::steady_clock::now();
  OwningOpRef<ModuleOp> module = buildOrFail(ctx, preset("gpt3-175b"));
  ASSERT_TRUE(module);
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  // Typically ~0.05 s; a generous bound that still catches materialized
  // weights (175B parameters).
  EXPECT_LT(seconds, 10.0);
  auto func = cast<func::FuncOp>(module->getBody()->front());
  // 2 embeddings + 12 per layer + ln_f, then tokens and labels.
  EXPECT_EQ(func.getNumArguments(), 2u + 12 * 96 + 2 + 2);
  // No constants at all: nothing is materialized.
  bool hasConstant = false;
  module->walk([&](mw::ConstantOp) { hasConstant = true; });
  EXPECT_FALSE(hasConstant);
}

TEST(ModelsTest, GeneralFfnAndDtypes) {
  MLIRContext ctx;
  for (Family family :
       {Family::Mlp, Family::Gpt, Family::Llama, Family::Bert, Family::Opt}) {
    for (DType dtype : {DType::F32, DType::BF16, DType::F16}) {
      ModelConfig config = getDefaultConfig(family);
      config.dtype = dtype;
      config.ffn = 100; // not 4*D: the general closed forms still hold
      config.layers = 3;
      SCOPED_TRACE(formatFlags(config));
      OwningOpRef<ModuleOp> module = buildOrFail(ctx, config);
      ASSERT_TRUE(module);
      EXPECT_EQ(countParams(*module), expectedParamCount(config));
    }
  }
}

TEST(ModelsTest, RotaryAddsNoParameters) {
  MLIRContext ctx;
  ModelConfig config = preset("llama-tiny");
  config.rotary = true;
  OwningOpRef<ModuleOp> module = buildOrFail(ctx, config);
  ASSERT_TRUE(module);
  EXPECT_EQ(countParams(*module), expectedParamCount(config));
  int constants = 0;
  module->walk([&](mw::ConstantOp op) {
    ++constants;
    auto type = cast<RankedTensorType>(op.getType());
    EXPECT_EQ(type.getShape(), (ArrayRef<int64_t>{config.seq, 8}));
  });
  EXPECT_EQ(constants, 2); // cos and sin, shared by every layer
}

TEST(ModelsTest, ArgumentsAndResultCarryRolesAndNames) {
  MLIRContext ctx;
  for (StringRef name :
       {"mlp-tiny", "gpt2-tiny", "llama-tiny", "bert-tiny", "opt-tiny"}) {
    SCOPED_TRACE(name.str());
    OwningOpRef<ModuleOp> module = buildOrFail(ctx, preset(name));
    ASSERT_TRUE(module);
    auto func = cast<func::FuncOp>(module->getBody()->front());
    EXPECT_EQ(func.getName(), "forward");
    unsigned n = func.getNumArguments();
    for (unsigned i = 0; i < n; ++i) {
      EXPECT_TRUE(func.getArgAttrOfType<mw::RoleAttr>(
          i, mw::MWDialect::kRoleAttrName));
      EXPECT_TRUE(
          func.getArgAttrOfType<StringAttr>(i, mw::MWDialect::kNameAttrName));
    }
    // The last two arguments are the batch: input then label.
    auto role = [&](unsigned i) {
      return func
          .getArgAttrOfType<mw::RoleAttr>(i, mw::MWDialect::kRoleAttrName)
          .getValue();
    };
    EXPECT_EQ(role(n - 2), mw::Role::input);
    EXPECT_EQ(role(n - 1), mw::Role::label);
    ASSERT_EQ(func.getNumResults(), 1u);
    EXPECT_EQ(func.getResultTypes()[0],
              RankedTensorType::get({}, Float32Type::get(&ctx)));
    auto result = func.getResultAttrOfType<mw::RoleAttr>(
        0, mw::MWDialect::kRoleAttrName);
    ASSERT_TRUE(result);
    EXPECT_EQ(result.getValue(), mw::Role::output);
    EXPECT_EQ(func.getResultAttrOfType<StringAttr>(
                      0, mw::MWDialect::kNameAttrName)
                  .getValue(),
              "loss");
  }
}

TEST(ModelsTest, Deterministic) {
  for (StringRef name :
       {"gpt2-tiny", "llama-tiny", "bert-tiny", "mlp-tiny", "opt-tiny"}) {
    ModelConfig config = preset(name);
    config.rotary = config.family == Family::Llama;
    MLIRContext a, b;
    OwningOpRef<ModuleOp> ma = buildOrFail(a, config);
    OwningOpRef<ModuleOp> mb = buildOrFail(b, config);
    ASSERT_TRUE(ma && mb);
    EXPECT_EQ(print(*ma), print(*mb)) << name.str();
  }
}

TEST(ModelsTest, Validation) {
  std::string error;
  ModelConfig config = preset("gpt2-tiny");
  EXPECT_TRUE(succeeded(validate(config, error)));

  config.heads = 5;
  EXPECT_TRUE(failed(validate(config, error)));
  EXPECT_EQ(error, "--hidden (64) must be a multiple of --heads (5)");

  config = preset("gpt2-tiny");
  config.seq = 0;
  EXPECT_TRUE(failed(validate(config, error)));
  EXPECT_EQ(error, "--seq must be positive, got 0");

  config = preset("gpt2-tiny");
  config.rotary = true;
  EXPECT_TRUE(failed(validate(config, error)));
  EXPECT_EQ(error, "--rotary applies only to the llama family, not gpt");

  config = preset("gpt2-tiny");
  config.kvHeads = 2;
  EXPECT_TRUE(failed(validate(config, error)));
  EXPECT_EQ(error, "--kv-heads applies only to the llama family, not gpt");
  config = preset("llama-tiny");
  config.kvHeads = 3;
  EXPECT_TRUE(failed(validate(config, error)));
  EXPECT_EQ(error, "--kv-heads (3) must divide --heads (4)");
  config.kvHeads = -2;
  EXPECT_TRUE(failed(validate(config, error)));
  EXPECT_EQ(error, "--kv-heads must be positive, got -2");
  // As many key/value heads as heads is the same model as the default.
  config.kvHeads = 4;
  EXPECT_TRUE(succeeded(validate(config, error)));
  EXPECT_EQ(config, preset("llama-tiny"));
  EXPECT_EQ(formatFlags(preset("llama-tiny-gqa")),
            "llama --layers 2 --hidden 64 --heads 4 --ffn 176 --seq 32 "
            "--batch 2 --vocab 256 --kv-heads 2 --dtype f32");

  // MLP ignores the transformer fields...
  config = preset("mlp-tiny");
  config.heads = 0;
  config.vocab = -1;
  EXPECT_TRUE(succeeded(validate(config, error)));
  // ...but not its own.
  config.inFeatures = 0;
  EXPECT_TRUE(failed(validate(config, error)));
  EXPECT_EQ(error, "--in-features must be positive, got 0");

  config = preset("gpt3-175b");
  config.layers = int64_t(1) << 40;
  EXPECT_TRUE(failed(validate(config, error)));
  EXPECT_EQ(expectedParamCount(config), -1);
}

TEST(ModelsTest, BuildModelDiagnosesInvalidConfigs) {
  MLIRContext ctx;
  std::string message;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  ModelConfig config = preset("bert-tiny");
  config.hidden = 63;
  EXPECT_TRUE(failed(buildModel(ctx, config)));
  EXPECT_EQ(message, "invalid bert configuration: --hidden (63) must be a "
                     "multiple of --heads (4)");
}

TEST(ModelsTest, PresetsAndNames) {
  EXPECT_FALSE(lookupPreset("gpt4").has_value());
  for (const Preset &p : getPresets())
    EXPECT_EQ(lookupPreset(p.name), p.config);
  for (Family f : {Family::Mlp, Family::Gpt, Family::Llama, Family::Bert,
                   Family::Opt}) {
    EXPECT_EQ(parseFamily(stringifyFamily(f)), f);
    EXPECT_EQ(getDefaultConfig(f).family, f);
  }
  EXPECT_EQ(getDefaultConfig(Family::Gpt), preset("gpt2-tiny"));
  EXPECT_FALSE(parseFamily("gpt2").has_value());
  EXPECT_EQ(listFamilyNames(), "mlp, gpt, llama, bert, opt");
  for (DType d : {DType::F32, DType::BF16, DType::F16})
    EXPECT_EQ(parseDType(stringifyDType(d)), d);
  EXPECT_EQ(formatFlags(preset("gpt2-tiny")),
            "gpt --layers 2 --hidden 64 --heads 4 --ffn 256 --seq 32 --batch 2 "
            "--vocab 256 --dtype f32");
  // Big presets run one sequence per step.
  for (StringRef name : {"gpt2-small", "gpt2-medium", "gpt2-large", "gpt2-xl",
                         "gpt3-175b", "llama-7b-shaped", "bert-base",
                         "bert-large", "opt-30b-shaped"})
    EXPECT_EQ(preset(name).batch, 1) << name.str();
}

} // namespace
