//===- OffloadAutoTest.cpp - --mw-offload=auto against published figures -===//
//
// The fidelity check of issue 18: OPT-30B-shaped (mw-models opt --preset
// opt-30b-shaped --dtype f16 --inference) decode on target=v100. DeepSpeed's
// ZeRO-Inference measured 43 tokens/s with every weight offloaded (at its
// best batch) against 18 tokens/s with 12B parameters kept on the GPU; the
// planner's predictions for the same two configurations must each be within
// 25% of those, in that order, and auto must choose full offload
// (docs/offload.md, "auto"). Also: the candidates recorded on the function
// and the errors of bad options.
//
//===----------------------------------------------------------------------===//

#include "MwOffloadAuto.h"

#include "memwall/Dialect/MW/IR/MWOps.h"
#include "memwall/InitMemwall.h"
#include "memwall/Models/Models.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlir;
using namespace mlir::mw;
using namespace mlir::mw::models;

namespace {

/// A context with what mw-opt registers (planning a copy bufferizes it).
struct Context {
  Context() {
    registerMemwallDialects(registry);
    ctx = std::make_unique<MLIRContext>(registry);
  }
  DialectRegistry registry;
  std::unique_ptr<MLIRContext> ctx;
};

struct Candidate {
  int64_t pinned, prefetch, batch;
  bool fits;
  double tokensPerSecond;
};

std::vector<Candidate> candidatesOf(func::FuncOp f) {
  std::vector<Candidate> out;
  auto array = f->getAttrOfType<ArrayAttr>("mw.offload.candidates");
  if (!array)
    return out;
  for (Attribute a : array) {
    auto d = cast<DictionaryAttr>(a);
    out.push_back({d.getAs<IntegerAttr>("pinned_layers").getInt(),
                   d.getAs<IntegerAttr>("prefetch").getInt(),
                   d.getAs<IntegerAttr>("batch").getInt(),
                   d.getAs<BoolAttr>("fits").getValue(),
                   d.getAs<FloatAttr>("predicted_tokens_per_s")
                       .getValueAsDouble()});
  }
  return out;
}

/// The fastest fitting candidate with `pinned` layers.
Candidate bestAt(const std::vector<Candidate> &all, int64_t pinned) {
  Candidate best{pinned, -1, 0, false, 0.0};
  for (const Candidate &c : all)
    if (c.pinned == pinned && c.fits && c.tokensPerSecond > best.tokensPerSecond)
      best = c;
  return best;
}

OwningOpRef<ModuleOp> buildDecode(MLIRContext &ctx, const ModelConfig &c) {
  InferenceConfig ic;
  FailureOr<OwningOpRef<ModuleOp>> m = buildInferenceModel(ctx, c, ic);
  EXPECT_TRUE(succeeded(m));
  return succeeded(m) ? std::move(*m) : OwningOpRef<ModuleOp>();
}

func::FuncOp decodeOf(ModuleOp m) {
  return m.lookupSymbol<func::FuncOp>("decode");
}

TEST(OffloadAuto, Opt30bOnV100MatchesZeroInference) {
  Context context;
  MLIRContext &ctx = *context.ctx;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    ADD_FAILURE() << diag.str();
    return success();
  });
  ModelConfig c = *lookupPreset("opt-30b-shaped");
  c.dtype = DType::F16;
  OwningOpRef<ModuleOp> m = buildDecode(ctx, c);
  ASSERT_TRUE(m);
  func::FuncOp decode = decodeOf(*m);
  OffloadAutoOptions o;
  o.target = "v100";
  o.weights = "cpu";
  FailureOr<OffloadDecision> d = chooseOffload(decode, o);
  ASSERT_TRUE(succeeded(d));
  std::vector<Candidate> all = candidatesOf(decode);
  // L = 0..47 with K = 0..3, and L = 48 once.
  ASSERT_EQ(all.size(), 48u * 4 + 1);

  // 12B parameters on the GPU: the pinned count whose layers plus the
  // resident embeddings and final norm come closest to 12e9 parameters.
  int64_t d_ = c.hidden;
  int64_t resident = c.vocab * d_ + c.seq * d_ + 2 * d_;
  int64_t perLayer = (expectedParamCount(c) - resident) / c.layers;
  int64_t pinned12b = 0;
  for (int64_t l = 0; l <= c.layers; ++l)
    if (std::abs(resident + l * perLayer - 12'000'000'000) <
        std::abs(resident + pinned12b * perLayer - 12'000'000'000))
      pinned12b = l;
  EXPECT_EQ(pinned12b, 19); // 12.09e9 parameters

  Candidate full = bestAt(all, 0);
  Candidate partial = bestAt(all, pinned12b);
  ASSERT_TRUE(full.fits);
  ASSERT_TRUE(partial.fits);
  std::printf("full offload: %.2f tokens/s at batch %lld (prefetch %lld); "
              "%lld pinned: %.2f tokens/s at batch %lld (prefetch %lld)\n",
              full.tokensPerSecond, (long long)full.batch,
              (long long)full.prefetch, (long long)pinned12b,
              partial.tokensPerSecond, (long long)partial.batch,
              (long long)partial.prefetch);
  EXPECT_NEAR(full.tokensPerSecond, 43.0, 0.25 * 43.0);
  EXPECT_NEAR(partial.tokensPerSecond, 18.0, 0.25 * 18.0);
  EXPECT_GT(full.tokensPerSecond, partial.tokensPerSecond);

  // Auto chooses full offload.
  EXPECT_EQ(d->pinnedLayers, 0);
  EXPECT_EQ(d->batch, full.batch);
  EXPECT_EQ(d->prefetch, full.prefetch);
  auto choice = decode->getAttrOfType<DictionaryAttr>("mw.offload.choice");
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice.getAs<IntegerAttr>("pinned_layers").getInt(), 0);
  EXPECT_TRUE(choice.getAs<BoolAttr>("fits").getValue());
}

TEST(OffloadAuto, Opt30bOnAFullV100) {
  // The sensitivity docs/offload.md states: the V100's 32 GiB less 3% for
  // the CUDA context instead of the table's 32 GB.
  Context context;
  MLIRContext &ctx = *context.ctx;
  ModelConfig c = *lookupPreset("opt-30b-shaped");
  c.dtype = DType::F16;
  OwningOpRef<ModuleOp> m = buildDecode(ctx, c);
  ASSERT_TRUE(m);
  OffloadAutoOptions o;
  o.target = "v100";
  o.deviceMemory = "33329200000B";
  FailureOr<OffloadDecision> d = chooseOffload(decodeOf(*m), o);
  ASSERT_TRUE(succeeded(d));
  std::vector<Candidate> all = candidatesOf(decodeOf(*m));
  Candidate full = bestAt(all, 0), partial = bestAt(all, 19);
  std::printf("33.33e9 B: full offload %.2f tokens/s at batch %lld; 19 "
              "pinned %.2f at batch %lld\n",
              full.tokensPerSecond, (long long)full.batch,
              partial.tokensPerSecond, (long long)partial.batch);
  EXPECT_EQ(d->pinnedLayers, 0);
  EXPECT_NEAR(full.tokensPerSecond, 43.0, 0.25 * 43.0);
  EXPECT_NEAR(partial.tokensPerSecond, 18.0, 0.25 * 18.0);
}

TEST(OffloadAuto, MaxBatchCapsTheSearch) {
  Context context;
  MLIRContext &ctx = *context.ctx;
  ModelConfig c = *lookupPreset("opt-30b-shaped");
  c.dtype = DType::F16;
  OwningOpRef<ModuleOp> m = buildDecode(ctx, c);
  ASSERT_TRUE(m);
  OffloadAutoOptions o;
  o.target = "v100";
  o.maxBatch = 8;
  FailureOr<OffloadDecision> d = chooseOffload(decodeOf(*m), o);
  ASSERT_TRUE(succeeded(d));
  for (const Candidate &c : candidatesOf(decodeOf(*m)))
    EXPECT_LE(c.batch, 8);
  // At 8 sequences the weights' copies dominate: pinning what fits wins.
  EXPECT_GT(d->pinnedLayers, 0);
  EXPECT_EQ(d->batch, 8);
}

TEST(OffloadAuto, Errors) {
  Context context;
  MLIRContext &ctx = *context.ctx;
  std::string message;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  OwningOpRef<ModuleOp> m = buildDecode(ctx, *lookupPreset("opt-tiny"));
  ASSERT_TRUE(m);
  func::FuncOp decode = decodeOf(*m);
  OffloadAutoOptions o;
  EXPECT_TRUE(failed(chooseOffload(decode, o)));
  EXPECT_EQ(message, "mw-offload: auto needs target=NAME or "
                     "device-memory=SIZE (the memory to fill)");
  o.target = "tpu";
  EXPECT_TRUE(failed(chooseOffload(decode, o)));
  EXPECT_NE(message.find("mw-offload: unknown target 'tpu'"),
            std::string::npos);
  o.target = "";
  o.deviceMemory = "lots";
  EXPECT_TRUE(failed(chooseOffload(decode, o)));
  EXPECT_NE(message.find("device-memory='lots' is not a size"),
            std::string::npos);
  // 10 KB: not even the embeddings fit.
  o.deviceMemory = "10KB";
  EXPECT_TRUE(failed(chooseOffload(decode, o)));
  EXPECT_NE(message.find("mw-offload: auto: no offload of @decode fits "
                         "device-memory=10KB"),
            std::string::npos)
      << message;
  // Enough for everything at two sequences: the whole model pinned, nothing
  // streams.
  o.deviceMemory = "1GB";
  o.maxBatch = 2;
  FailureOr<OffloadDecision> d = chooseOffload(decode, o);
  ASSERT_TRUE(succeeded(d));
  EXPECT_EQ(d->pinnedLayers, 2);
}

} // namespace
