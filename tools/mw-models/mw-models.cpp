//===- mw-models.cpp - Memwall's model generator --------------------------===//
//
// Command-line front end of the Models library: picks a family and a preset,
// applies the dimension flags on top, validates, builds @forward, verifies it
// and prints it (deterministically, with the standard MLIR printer) to stdout
// or atomically to -o. `--list-presets` prints the presets with their sizes and
// parameter counts.
//
//===----------------------------------------------------------------------===//

#include "memwall/Models/Models.h"

#include "memwall/Dialect/MW/Transforms/Passes.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::mw::models;
namespace cl = llvm::cl;

namespace {
cl::OptionCategory category("mw-models options");

cl::opt<std::string> familyName(cl::Positional, cl::value_desc("family"),
                                cl::desc("<family>"), cl::cat(category));

cl::opt<std::string> presetName(
    "preset", cl::value_desc("name"),
    cl::desc("Start from a preset's dimensions (it must belong to the "
             "family); dimension flags override them. Without --preset the "
             "family's tiny preset gives the defaults"),
    cl::cat(category));

cl::opt<int64_t> layers(
    "layers", cl::value_desc("N"),
    cl::desc("Transformer blocks; for mlp, the number of Linear layers"),
    cl::cat(category));
cl::opt<int64_t> hidden(
    "hidden", cl::value_desc("D"),
    cl::desc("Model width (a multiple of --heads); for mlp, the width of the "
             "hidden layers"),
    cl::cat(category));
cl::opt<int64_t> heads("heads", cl::value_desc("H"),
                       cl::desc("Attention heads (not mlp)"),
                       cl::cat(category));
cl::opt<int64_t> kvHeads(
    "kv-heads", cl::value_desc("N"),
    cl::desc("llama only: key/value heads, grouped-query attention (N divides "
             "--heads; default --heads); k_proj and v_proj have "
             "N * head_dim outputs"),
    cl::cat(category));
cl::opt<int64_t> ffn("ffn", cl::value_desc("F"),
                     cl::desc("Feed-forward width (not mlp)"),
                     cl::cat(category));
cl::opt<int64_t> seq("seq", cl::value_desc("S"),
                     cl::desc("Sequence length, also the number of learned "
                              "positions of gpt, bert and opt (not mlp)"),
                     cl::cat(category));
cl::opt<int64_t> batch("batch", cl::value_desc("B"), cl::desc("Batch size"),
                       cl::cat(category));
cl::opt<int64_t> vocab("vocab", cl::value_desc("V"),
                       cl::desc("Vocabulary size (not mlp)"),
                       cl::cat(category));
cl::opt<int64_t> inFeatures("in-features", cl::value_desc("I"),
                            cl::desc("mlp only: width of the input x"),
                            cl::cat(category));
cl::opt<int64_t> classes("classes", cl::value_desc("C"),
                         cl::desc("mlp only: number of classes"),
                         cl::cat(category));
cl::opt<DType> dtype(
    "dtype", cl::desc("Element type of parameters and activations"),
    cl::values(clEnumValN(DType::F32, "f32", "32-bit float (default)"),
               clEnumValN(DType::BF16, "bf16", "bfloat16"),
               clEnumValN(DType::F16, "f16", "IEEE half")),
    cl::init(DType::F32), cl::cat(category));
cl::opt<bool> rotary(
    "rotary",
    cl::desc("llama only: rotary position embeddings on queries and keys "
             "(cos/sin tables as [S, Dh/2] mw.constant ops)"),
    cl::cat(category));
cl::opt<AttentionKind> attention(
    "attention", cl::desc("gpt, llama, bert and opt: how attention is computed"),
    cl::values(clEnumValN(AttentionKind::Fused, "fused",
                          "one mw.attention op (default)"),
               clEnumValN(AttentionKind::Unfused, "unfused",
                          "mw.matmul, scale, causal mask (one [S, S] "
                          "mw.constant per function), mw.softmax, mw.matmul: "
                          "the [B, H, S, S] scores are activations, as in "
                          "PyTorch eager")),
    cl::init(AttentionKind::Fused), cl::cat(category));

cl::opt<std::string> outputFilename(
    "o", cl::value_desc("filename"),
    cl::desc("Output file, written atomically (default: stdout)"),
    cl::init("-"), cl::cat(category));
cl::opt<bool> emitLocations(
    "emit-locations",
    cl::desc("Print op locations (loc(\"h.0.attn\") per layer, parameter "
             "names on arguments) so later diagnostics name the layer "
             "(default: true)"),
    cl::init(true), cl::cat(category));
cl::opt<bool> listPresets(
    "list-presets",
    cl::desc("Print the presets (of <family>, if given) with their "
             "dimensions and parameter counts, and exit"),
    cl::cat(category));

cl::opt<bool> logitsFlag(
    "logits",
    cl::desc("gpt, llama and opt: @forward returns the logits [B, S, V] "
             "(`logits`, role output) instead of the loss, and takes no "
             "labels (the reference for --inference)"),
    cl::cat(category));

cl::OptionCategory inferenceCategory(
    "inference steps (--inference) options, docs/inference.md");
cl::opt<bool> inference(
    "inference",
    cl::desc("gpt, llama and opt: emit @prefill and @decode over a paged KV "
             "cache instead of @forward, with the same parameters"),
    cl::cat(inferenceCategory));
cl::opt<int64_t> maxBatch("max-batch", cl::value_desc("B"),
                          cl::desc("Sequences per step (default: --batch)"),
                          cl::init(0), cl::cat(inferenceCategory));
cl::opt<int64_t> maxSeq(
    "max-seq", cl::value_desc("S"),
    cl::desc("Tokens one sequence may hold, prompt and generated (default "
             "and at most: --seq)"),
    cl::init(0), cl::cat(inferenceCategory));
cl::opt<int64_t> promptLen(
    "prompt-len", cl::value_desc("P"),
    cl::desc("@prefill's tokens per sequence: prompts are left-padded to it "
             "(default: --max-seq)"),
    cl::init(0), cl::cat(inferenceCategory));
cl::opt<int64_t> block("block", cl::value_desc("N"),
                       cl::desc("Tokens per KV cache block (default 16)"),
                       cl::init(16), cl::cat(inferenceCategory));
cl::opt<int64_t> kvBlocks(
    "kv-blocks", cl::value_desc("N"),
    cl::desc("Blocks per layer's cache (default: max-batch * "
             "ceil(max-seq / block), every sequence at full length)"),
    cl::init(0), cl::cat(inferenceCategory));
cl::opt<std::string> kvDType(
    "kv-dtype", cl::value_desc("T"),
    cl::desc("The cache's element type: f32, bf16, f16, int8 or fp8e4m3 "
             "(default: --dtype)"),
    cl::cat(inferenceCategory));
cl::list<double> kvScale(
    "kv-scale", cl::value_desc("S[,S...]"), cl::CommaSeparated,
    cl::desc("int8 and fp8e4m3: the quantization scale of every layer's "
             "keys and values, one for all heads or one per head (default "
             "1/32 for int8, 1 for fp8e4m3)"),
    cl::cat(inferenceCategory));

cl::OptionCategory trainCategory("training step (--train) options");
cl::opt<bool> train(
    "train",
    cl::desc("Emit the training step too: run --mw-autodiff on the forward "
             "function (with the options below) and add @train_step"),
    cl::cat(trainCategory));
cl::opt<std::string> optimizer("optimizer", cl::desc("adamw (default) or sgd"),
                               cl::init("adamw"), cl::cat(trainCategory));
cl::opt<double> lr("lr", cl::desc("Learning rate (default 1e-3)"),
                   cl::init(1e-3), cl::cat(trainCategory));
cl::opt<double> beta1("beta1", cl::desc("AdamW beta1 (default 0.9)"),
                      cl::init(0.9), cl::cat(trainCategory));
cl::opt<double> beta2("beta2", cl::desc("AdamW beta2 (default 0.999)"),
                      cl::init(0.999), cl::cat(trainCategory));
cl::opt<double> eps("eps", cl::desc("AdamW epsilon (default 1e-8)"),
                    cl::init(1e-8), cl::cat(trainCategory));
cl::opt<std::string> weightDecay(
    "weight-decay",
    cl::desc("Weight decay, a number >= 0 (default 0.01 for adamw, 0 for sgd)"),
    cl::value_desc("number"), cl::init(""), cl::cat(trainCategory));
cl::opt<double> momentum("momentum", cl::desc("SGD momentum (default 0)"),
                         cl::init(0.0), cl::cat(trainCategory));
cl::opt<bool> nesterov("nesterov", cl::desc("SGD Nesterov momentum"),
                       cl::cat(trainCategory));
cl::opt<std::string> precision(
    "precision",
    cl::desc("fp32 (default), bf16 or fp16: compute precision; bf16/fp16 keep "
             "f32 master weights and optimizer state and imply --dtype"),
    cl::init("fp32"), cl::cat(trainCategory));
cl::opt<std::string> masterWeights(
    "master-weights",
    cl::desc("bf16/fp16: where the f32 master weights live: param (default; "
             "the parameters are f32 masters cast at their uses) or "
             "optimizer (half-precision parameters and gradients, the master "
             "in the optimizer state: DeepSpeed's layout)"),
    cl::value_desc("param|optimizer"), cl::init("param"),
    cl::cat(trainCategory));
cl::opt<int64_t> gradAccum(
    "grad-accum",
    cl::desc("Split --batch into this many micro-batches whose gradients "
             "accumulate before one update (default 1)"),
    cl::init(1), cl::cat(trainCategory));
cl::opt<int64_t> lossScaleWindow(
    "loss-scale-window",
    cl::desc("fp16: steps without overflow after which the loss scale "
             "doubles (default 1000)"),
    cl::init(1000), cl::cat(trainCategory));
cl::opt<int64_t> lossScaleHysteresis(
    "loss-scale-hysteresis",
    cl::desc("fp16: the loss scale halves from this overflow on, counted "
             "since it last grew (default 2)"),
    cl::init(2), cl::cat(trainCategory));
cl::opt<double> lossScaleMin("loss-scale-min",
                             cl::desc("fp16: the smallest loss scale "
                                      "(default 1)"),
                             cl::init(1.0), cl::cat(trainCategory));
} // namespace

/// `v` in as few digits as read back as the same double ("0.03125").
static std::string shortest(double v) {
  char buf[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof(buf), "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  return buf;
}

static int error(const Twine &message) {
  llvm::WithColor::error(llvm::errs(), "mw-models") << message << "\n";
  return 1;
}

/// "layers=12 hidden=768 ..." for the flags the family uses.
static std::string describeDims(const ModelConfig &c) {
  if (c.family == Family::Mlp)
    return llvm::formatv("layers={0} hidden={1} in_features={2} classes={3} "
                         "batch={4}",
                         c.layers, c.hidden, c.inFeatures, c.classes, c.batch)
        .str();
  std::string kv = c.numKvHeads() != c.heads
                       ? llvm::formatv(" kv_heads={0}", c.numKvHeads()).str()
                       : "";
  return llvm::formatv("layers={0} hidden={1} heads={2}{8} head_dim={3} "
                       "ffn={4} seq={5} batch={6} vocab={7}",
                       c.layers, c.hidden, c.heads, c.hidden / c.heads, c.ffn,
                       c.seq, c.batch, c.vocab, kv)
      .str();
}

static StringRef familySummary(Family family) {
  switch (family) {
  case Family::Mlp:
    return "Linear(+bias) layers with erf-GELU between them, classification "
           "loss";
  case Family::Gpt:
    return "GPT-2: learned positions, pre-LayerNorm, tanh-GELU MLP, tied "
           "embeddings, causal attention";
  case Family::Llama:
    return "Llama: RMSNorm, SwiGLU MLP, no biases, untied lm_head, causal "
           "attention, optional RoPE";
  case Family::Bert:
    return "BERT masked LM: post-LayerNorm, erf-GELU, bidirectional attention, "
           "MLM head tied to the word embeddings";
  case Family::Opt:
    return "OPT: learned positions, pre-LayerNorm, ReLU MLP, biases, final "
           "LayerNorm, tied lm_head, causal attention";
  }
  llvm_unreachable("unknown family");
}

static std::string familyHelp() {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "\nFAMILIES:\n";
  for (StringRef name : {"mlp", "gpt", "llama", "bert", "opt"})
    os << llvm::formatv("  {0,-8}{1}\n", name,
                        familySummary(*parseFamily(name)));
  os << "\nPRESETS (mw-models --list-presets prints their dimensions):\n";
  for (const Preset &p : getPresets())
    os << llvm::formatv("  {0,-18}{1,-7}{2}\n", p.name,
                        stringifyFamily(p.config.family), p.description);
  os << R"(
OUTPUT:
  func.func @forward(params..., inputs, labels) -> loss, every argument and the
  result carrying mw.role and mw.name; the loss is a tensor<f32> from
  mw.cross_entropy. gpt, llama, bert and opt take `tokens` and `labels` [B, S]
  i32 (labels are not shifted; bert ignores label -100, i.e. unmasked
  positions); mlp takes `x` [B, in-features] and `labels` [B] i32. Parameters carry
  HuggingFace names and layouts: gpt's Conv1D weights are [in, out]; llama's,
  bert's and opt's Linear weights are [out, in], applied with transpose_rhs
  (also lm_head.weight [vocab, hidden]); mlp's layers.N.weight are [in, out].
  opt's embed_positions has --seq rows, position p at row p (HF's table has
  two more rows and reads row p + 2).
  Attention is one mw.attention op; --attention=unfused spells it out as
  mw.matmul {transpose_rhs}, mw.mul by 1/sqrt(head_dim), mw.add of a causal
  [S, S] mask (gpt, llama, opt; 0 / -inf), mw.softmax and mw.matmul.
  No weights are materialized: generating gpt3-175b takes well under a second.

  With --inference (gpt, llama, opt), @prefill and @decode instead: the same
  parameters, a key and a value cache per layer ([blocks, block, heads,
  head_dim], llama's heads being --kv-heads; role kv_cache,
  `h.N.attn.k_cache`, `model.layers.N.self_attn.k_cache`,
  `model.decoder.layers.N.self_attn.k_cache`), and the inputs
  tokens and positions [B, T], slot_mapping [B*T], block_tables [B,
  ceil(max-seq/block)] and context_lens [B] (i32); T is --prompt-len for
  @prefill (prompts left-padded) and 1 for @decode. Both
  return the last token's logits [B, V] and the updated caches.
  See docs/inference.md.
)";
  return out;
}

static void printPresets(llvm::raw_ostream &os, std::optional<Family> only) {
  for (const Preset &p : getPresets()) {
    if (only && p.config.family != *only)
      continue;
    os << llvm::formatv("{0,-18}{1,-7}{2,16} params  {3}\n", p.name,
                        stringifyFamily(p.config.family),
                        expectedParamCount(p.config), describeDims(p.config));
  }
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  static const std::string extra = familyHelp();
  cl::extrahelp extraHelp(extra);
  cl::HideUnrelatedOptions({&category, &inferenceCategory, &trainCategory});
  cl::ParseCommandLineOptions(
      argc, argv,
      "Memwall model generator: emits a model's forward step (returning the "
      "loss) as mw IR\n\n"
      "  mw-models FAMILY [--preset NAME] [dimension flags] [--dtype T] "
      "[-o OUT.mlir]\n");

  std::optional<Family> family;
  if (!familyName.empty()) {
    family = parseFamily(familyName);
    if (!family)
      return error("unknown family '" + familyName +
                   "'; valid families: " + listFamilyNames());
  }
  if (listPresets) {
    printPresets(llvm::outs(), family);
    return 0;
  }
  if (!family)
    return error("no family given; usage: mw-models FAMILY [options] (valid "
                 "families: " +
                 listFamilyNames() + "; see --help)");

  ModelConfig config = getDefaultConfig(*family);
  if (!presetName.empty()) {
    std::optional<ModelConfig> preset = lookupPreset(presetName);
    if (!preset)
      return error("unknown preset '" + presetName +
                   "'; valid presets: " + listPresetNames());
    if (preset->family != *family)
      return error("preset '" + presetName + "' is a " +
                   stringifyFamily(preset->family) +
                   " model, not " + stringifyFamily(*family));
    config = *preset;
  }

  // Flags override the preset; a flag the family does not use is an error
  // rather than silently ignored.
  bool isMlp = *family == Family::Mlp;
  struct DimFlag {
    cl::opt<int64_t> &flag;
    int64_t &field;
    bool applies;
  };
  DimFlag dims[] = {
      {layers, config.layers, true},
      {hidden, config.hidden, true},
      {heads, config.heads, !isMlp},
      {kvHeads, config.kvHeads, *family == Family::Llama},
      {ffn, config.ffn, !isMlp},
      {seq, config.seq, !isMlp},
      {batch, config.batch, true},
      {vocab, config.vocab, !isMlp},
      {inFeatures, config.inFeatures, isMlp},
      {classes, config.classes, isMlp},
  };
  // 0 is the field's "as many as --heads", not a value to ask for.
  if (kvHeads.getNumOccurrences() && kvHeads <= 0)
    return error("--kv-heads must be positive, got " + Twine(kvHeads));
  for (DimFlag &d : dims) {
    if (!d.flag.getNumOccurrences())
      continue;
    if (!d.applies)
      return error("--" + d.flag.ArgStr + " does not apply to the " +
                   stringifyFamily(*family) + " family");
    d.field = d.flag;
  }
  if (dtype.getNumOccurrences())
    config.dtype = dtype;
  if (rotary.getNumOccurrences())
    config.rotary = rotary;
  if (attention.getNumOccurrences()) {
    if (isMlp)
      return error("--attention does not apply to the mlp family");
    config.attention = attention;
  }
  config.logits = logitsFlag;

  InferenceConfig inferenceConfig;
  bool inferenceOptionGiven = false;
  for (cl::Option *o : std::initializer_list<cl::Option *>{
           &maxBatch, &maxSeq, &promptLen, &block, &kvBlocks, &kvDType,
           static_cast<cl::Option *>(std::addressof(kvScale))})
    inferenceOptionGiven |= o->getNumOccurrences() > 0;
  if (inferenceOptionGiven && !inference)
    return error("inference options need --inference");
  if (inference) {
    if (train)
      return error("--inference and --train emit different steps; choose "
                   "one");
    if (config.attention != AttentionKind::Fused)
      return error("--inference attends with mw.paged_attention; "
                   "--attention=unfused is for training steps");
    inferenceConfig.maxBatch = maxBatch;
    inferenceConfig.maxSeq = maxSeq;
    inferenceConfig.promptLen = promptLen;
    inferenceConfig.block = block;
    inferenceConfig.numBlocks = kvBlocks;
    inferenceConfig.kvScales.assign(kvScale.begin(), kvScale.end());
    if (kvDType.getNumOccurrences()) {
      inferenceConfig.kvDType = parseKvDType(kvDType);
      if (!inferenceConfig.kvDType)
        return error("unknown --kv-dtype '" + kvDType +
                     "' (expected f32, bf16, f16, int8 or fp8e4m3)");
    }
  }

  bool trainOptionGiven = false;
  for (cl::Option *o : std::initializer_list<cl::Option *>{
           &optimizer, &lr, &beta1, &beta2, &eps, &weightDecay, &momentum,
           &nesterov, &precision, &masterWeights, &gradAccum,
           &lossScaleWindow,
           &lossScaleHysteresis, &lossScaleMin})
    trainOptionGiven |= o->getNumOccurrences() > 0;
  if (trainOptionGiven && !train)
    return error("training options need --train");
  for (cl::Option *o : std::initializer_list<cl::Option *>{
           &lossScaleWindow, &lossScaleHysteresis, &lossScaleMin})
    if (o->getNumOccurrences() && precision != "fp16")
      return error("--" + o->ArgStr + " applies to --precision fp16 only");
  if (train) {
    // The step's precision decides the forward's compute type.
    if (precision == "bf16" || precision == "fp16") {
      DType compute = precision == "bf16" ? DType::BF16 : DType::F16;
      if (dtype.getNumOccurrences() && config.dtype != compute)
        return error("--precision " + precision + " computes in " +
                     stringifyDType(compute) + " but --dtype is " +
                     stringifyDType(config.dtype));
      config.dtype = compute;
    }
    // --batch is the step's batch; the forward function is one micro-batch.
    if (gradAccum < 1)
      return error("--grad-accum must be >= 1");
    if (config.batch % gradAccum != 0)
      return error("--batch " + Twine(config.batch) +
                   " does not split into --grad-accum " + Twine(gradAccum) +
                   " equal micro-batches");
    config.batch /= gradAccum;
  }

  std::string message;
  if (failed(validate(config, message)))
    return error(message);
  if (inference && failed(resolveInference(config, inferenceConfig, message)))
    return error(message);

  MLIRContext context;
  FailureOr<OwningOpRef<ModuleOp>> module =
      inference ? buildInferenceModel(context, config, inferenceConfig)
                : buildModel(context, config);
  if (failed(module))
    return 1;
  if (failed(verify(**module)))
    return error("the generated module does not verify (a bug in mw-models, "
                 "or in the mw dialect's verifiers)");
  // @prefill and @decode take the same parameters: count them once.
  int64_t paramCount =
      inference ? expectedParamCount(config) : countParams(**module);
  if (train) {
    mw::MwAutodiffOptions options;
    options.optimizer = optimizer;
    options.lr = lr;
    options.beta1 = beta1;
    options.beta2 = beta2;
    options.eps = eps;
    options.weightDecay = weightDecay;
    options.momentum = momentum;
    options.nesterov = nesterov;
    options.precision = precision;
    options.masterWeights = masterWeights;
    options.gradAccum = gradAccum;
    options.lossScaleWindow = lossScaleWindow;
    options.lossScaleHysteresis = lossScaleHysteresis;
    options.lossScaleMin = lossScaleMin;
    PassManager pm(&context);
    pm.addPass(mw::createMwAutodiff(options));
    if (failed(pm.run(**module)))
      return 1;
  }

  // The header names the preset when the flags did not change it.
  std::string presetNote, regenerate = formatFlags(config);
  if (!presetName.empty() && lookupPreset(presetName) == config) {
    presetNote = " (preset " + presetName + ")";
    regenerate = (stringifyFamily(config.family) + " --preset " + presetName)
                     .str();
  }
  if (train) {
    // The training flags are not part of the model's configuration: repeat
    // the command line as given (without the output file).
    regenerate.clear();
    for (int i = 1; i < argc; ++i) {
      StringRef arg = argv[i];
      if (arg == "-o") {
        ++i;
        continue;
      }
      if (arg.starts_with("-o=") || arg.starts_with("-o/"))
        continue;
      regenerate += (regenerate.empty() ? "" : " ") + arg.str();
    }
    presetNote += ", with @train_step";
  }
  if (inference) {
    // The inference flags are not part of the model's configuration.
    const InferenceConfig &ic = inferenceConfig;
    regenerate += llvm::formatv(
        " --inference --max-batch {0} --max-seq {1} --prompt-len {2} "
        "--block {3} --kv-blocks {4} --kv-dtype {5}",
        ic.maxBatch, ic.maxSeq, ic.promptLen, ic.block, ic.numBlocks,
        stringifyKvDType(*ic.kvDType));
    if (kvScale.getNumOccurrences()) {
      regenerate += " --kv-scale ";
      for (auto [i, s] : llvm::enumerate(ic.kvScales))
        regenerate += (i ? "," : "") + shortest(s);
    }
    presetNote += ", @prefill and @decode";
  }
  OpPrintingFlags flags;
  if (emitLocations)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  if (llvm::Error err = llvm::writeToOutput(
          outputFilename, [&](llvm::raw_ostream &os) -> llvm::Error {
            os << "// Generated by mw-models; do not edit. Regenerate with:\n"
               << "//   mw-models " << regenerate << "\n"
               << "// " << stringifyFamily(config.family) << presetNote << ": "
               << describeDims(config) << " dtype="
               << stringifyDType(config.dtype)
               << (config.rotary ? " rotary" : "")
               << (config.attention == AttentionKind::Unfused
                       ? " attention=unfused"
                       : "")
               << "\n"
               << "// parameters: " << paramCount << "\n";
            (*module)->print(os, flags);
            return llvm::Error::success();
          })) {
    return error("cannot write '" + outputFilename +
                 "': " + llvm::toString(std::move(err)));
  }
  return 0;
}
