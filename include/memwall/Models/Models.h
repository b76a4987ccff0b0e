//===- Models.h - Model generators for Memwall ------------------*- C++ -*-===//
//
// Builds the forward step of a model family (MLP, GPT-2, Llama, BERT, OPT) as
// mw IR:
// one `func.func @forward(params..., inputs, labels) -> loss` whose arguments
// and result carry `mw.role` and `mw.name`. Parameters are function arguments,
// so no weights are materialized and GPT-3 175B builds in well under a second.
// Presets carry published dimensions; `expectedParamCount` gives the closed
// form each family's generated parameters must add up to.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_MODELS_MODELS_H
#define MEMWALL_MODELS_MODELS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::mw::models {

/// The model families mw-models generates.
enum class Family {
  /// Linear(+bias) layers with erf-GELU between them, classification loss.
  Mlp,
  /// GPT-2: learned positions, pre-LayerNorm, tanh-GELU MLP, tied embeddings.
  Gpt,
  /// Llama: RMSNorm, SwiGLU MLP, no biases, untied lm_head, optional RoPE.
  Llama,
  /// BERT for masked LM: post-LayerNorm, bidirectional, erf-GELU.
  Bert,
  /// OPT: learned positions, pre-LayerNorm, ReLU MLP, biases everywhere,
  /// final LayerNorm, lm_head tied to the token embedding.
  Opt,
};

/// Element type of parameters and activations. Labels and tokens are always
/// i32; norm statistics, attention lse and the loss are always f32.
enum class DType { F32, BF16, F16 };

/// How the transformers compute attention.
enum class AttentionKind {
  /// One `mw.attention` op (flash-style: only the [B, H, S] logsumexp is
  /// saved for the backward pass).
  Fused,
  /// The eager PyTorch formulation from existing mw ops: matmul, scale, an
  /// additive causal mask, softmax, matmul. The [B, H, S, S] scores and
  /// probabilities are real activations, which is what benchmarks of
  /// activation checkpointing (selective recompute) need.
  Unfused,
};

/// The dimensions of one model. Fields a family does not use keep their
/// defaults and are ignored (MLP uses layers, hidden, inFeatures, classes and
/// batch; the transformers use everything but inFeatures and classes).
struct ModelConfig {
  Family family = Family::Gpt;
  /// Transformer blocks; for MLP the number of Linear layers.
  int64_t layers = 2;
  /// Model width D; for MLP the width of the hidden layers.
  int64_t hidden = 64;
  /// Attention heads; hidden must be a multiple of it.
  int64_t heads = 4;
  /// Llama only: key/value heads (grouped-query attention); must divide
  /// heads. 0 means as many as heads (multi-head attention).
  int64_t kvHeads = 0;
  /// Width of the feed-forward layer.
  int64_t ffn = 256;
  /// Sequence length; also the number of learned positions (GPT-2, BERT,
  /// OPT).
  int64_t seq = 32;
  int64_t batch = 2;
  int64_t vocab = 256;
  /// MLP only: width of the input `x`.
  int64_t inFeatures = 32;
  /// MLP only: number of classes (width of the logits).
  int64_t classes = 10;
  DType dtype = DType::F32;
  /// Llama only: rotary position embeddings on queries and keys.
  bool rotary = false;
  /// Not MLP: fused `mw.attention` or the unfused op sequence.
  AttentionKind attention = AttentionKind::Fused;
  /// GPT, Llama and OPT: @forward returns the logits [B, S, V] (`logits`, role
  /// output) instead of the loss, and takes no labels: the reference that
  /// inference steps are checked against.
  bool logits = false;

  /// The key/value heads: kvHeads, or heads when it is 0.
  int64_t numKvHeads() const { return kvHeads ? kvHeads : heads; }
  bool operator==(const ModelConfig &other) const;
  bool operator!=(const ModelConfig &other) const { return !(*this == other); }
};

/// A named configuration with published dimensions.
struct Preset {
  llvm::StringLiteral name;
  llvm::StringLiteral description;
  ModelConfig config;
};

/// Every preset, in a stable order (per family, smallest first).
llvm::ArrayRef<Preset> getPresets();
/// The preset named `name`, or nullopt.
std::optional<ModelConfig> lookupPreset(llvm::StringRef name);
/// The default configuration of a family: its tiny preset.
ModelConfig getDefaultConfig(Family family);
/// Comma-separated names of every preset ("gpt2-tiny, gpt2-small, ...").
std::string listPresetNames();

/// "mlp", "gpt", "llama", "bert", "opt".
llvm::StringRef stringifyFamily(Family family);
std::optional<Family> parseFamily(llvm::StringRef name);
/// Comma-separated names of every family.
std::string listFamilyNames();
/// "f32", "bf16", "f16".
llvm::StringRef stringifyDType(DType dtype);
std::optional<DType> parseDType(llvm::StringRef name);
/// "fused", "unfused".
llvm::StringRef stringifyAttention(AttentionKind kind);
std::optional<AttentionKind> parseAttention(llvm::StringRef name);

/// Checks that every size the family uses is positive, that hidden is a
/// multiple of heads (and the head dimension even with rotary), that kv heads
/// (llama only) divide heads, that rotary
/// and unfused attention are asked of families that have them, that vocab and
/// classes fit the i32 labels, and that no tensor's element count overflows
/// int64. On failure sets `error` to one sentence naming the offending value.
LogicalResult validate(const ModelConfig &config, std::string &error);

/// The number of parameters the family's closed form gives (D = hidden,
/// F = ffn, S = seq, V = vocab, L = layers):
///   GPT-2:    V*D + S*D + L*(4*D^2 + 2*D*F + F + 9*D) + 2*D
///             (= V*D + S*D + L*(12*D^2 + 13*D) + 2*D when F = 4*D)
///   OPT:      the same as GPT-2 (tied lm_head; S positions, not S + 2)
///   Llama:    2*V*D + L*(2*D^2 + 2*D*K + 3*D*F + 2*D) + D, K = kv heads *
///             D / heads (= 2*V*D + L*(4*D^2 + 3*D*F + 2*D) + D without GQA)
///   BERT-MLM: (V + S + 2)*D + 2*D + L*(4*D^2 + 2*D*F + F + 9*D)
///             + (D^2 + D) + 2*D + V
///   MLP:      sum over layers of (in*out + out).
/// Returns -1 when the count overflows int64 (validate rejects such configs).
int64_t expectedParamCount(const ModelConfig &config);

/// The element type of an inference step's KV cache.
enum class KvDType { F32, BF16, F16, Int8, Fp8E4M3 };
/// "f32", "bf16", "f16", "int8", "fp8e4m3".
llvm::StringRef stringifyKvDType(KvDType dtype);
std::optional<KvDType> parseKvDType(llvm::StringRef name);

/// The shape of the inference steps (docs/inference.md). Zero means the
/// default given with each field.
struct InferenceConfig {
  /// Sequences per step (0: the model's batch).
  int64_t maxBatch = 0;
  /// Tokens a sequence may hold, prompt and generated (0: the model's seq;
  /// at most seq, the learned positions of gpt and the rotary tables).
  int64_t maxSeq = 0;
  /// The length prompts are left-padded to in @prefill (0: maxSeq).
  int64_t promptLen = 0;
  /// Tokens per cache block.
  int64_t block = 16;
  /// Blocks of each layer's cache (0: maxBatch * ceil(maxSeq / block), every
  /// sequence at full length; --mw-kv-plan resizes it).
  int64_t numBlocks = 0;
  /// The cache's element type (nullopt: the model's dtype).
  std::optional<KvDType> kvDType;
  /// The quantization scales of an int8 or fp8 cache, for every layer: one
  /// for all heads or one per head (empty: 1/32 for int8, 1 for fp8).
  std::vector<double> kvScales;
};

/// Checks `inference` against `config` (gpt, llama or opt; sizes positive,
/// promptLen <= maxSeq <= seq, a scale only for a quantized cache) and
/// fills in its defaults.
LogicalResult resolveInference(const ModelConfig &config,
                               InferenceConfig &inference, std::string &error);

/// Builds `module { func.func @prefill(...) func.func @decode(...) }`: the
/// inference steps of `config` (gpt, llama, opt) over a paged KV cache
/// (docs/inference.md),
/// with the training model's parameters (same names, shapes and roles).
/// `inference` must have been resolved.
FailureOr<OwningOpRef<ModuleOp>>
buildInferenceModel(MLIRContext &context, const ModelConfig &config,
                    const InferenceConfig &inference);

/// Builds `module { func.func @forward(...) }` for `config`. Emits an error
/// diagnostic (at an unknown location) and fails when the config does not
/// validate. Loads the mw and func dialects into `context`.
FailureOr<OwningOpRef<ModuleOp>> buildModel(MLIRContext &context,
                                            const ModelConfig &config);

/// The sum of the element counts of the `param`-role arguments of every
/// function in `module`.
int64_t countParams(ModuleOp module);

/// The flags that regenerate `config` ("gpt --layers 2 --hidden 64 ...").
std::string formatFlags(const ModelConfig &config);

} // namespace mlir::mw::models

#endif // MEMWALL_MODELS_MODELS_H
