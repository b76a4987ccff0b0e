//===- Models.cpp - Model generators for Memwall --------------------------===//
//
// Emits the forward step of MLP, GPT-2, Llama, BERT and OPT models as mw IR. Every
// parameter is a function argument (nothing is materialized, so GPT-3 175B
// builds in milliseconds); arguments are declared first, in the order of the
// HuggingFace state dict, then the body is built op by op. Weights keep the
// layout of their HuggingFace tensors so checkpoints load without transposes:
// GPT-2's Conv1D weights are [in, out] (`x @ W`), Llama's and BERT's Linear
// weights are [out, in] (`x @ W^T`, `transpose_rhs`). Each layer's ops carry a
// NameLoc (`loc("h.0.attn")`) so diagnostics of later passes point at layers.
//
//===----------------------------------------------------------------------===//

#include "memwall/Models/Models.h"

#include "memwall/Analysis/StepStructure.h"
#include "memwall/Dialect/MW/IR/MWOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::mw;
using namespace mlir::mw::models;

//===----------------------------------------------------------------------===//
// Families, dtypes and presets
//===----------------------------------------------------------------------===//

static constexpr Family kFamilies[] = {Family::Mlp, Family::Gpt, Family::Llama,
                                       Family::Bert, Family::Opt};

StringRef mlir::mw::models::stringifyFamily(Family family) {
  switch (family) {
  case Family::Mlp:
    return "mlp";
  case Family::Gpt:
    return "gpt";
  case Family::Llama:
    return "llama";
  case Family::Bert:
    return "bert";
  case Family::Opt:
    return "opt";
  }
  llvm_unreachable("unknown family");
}

std::optional<Family> mlir::mw::models::parseFamily(StringRef name) {
  for (Family f : kFamilies)
    if (stringifyFamily(f) == name)
      return f;
  return std::nullopt;
}

std::string mlir::mw::models::listFamilyNames() {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::interleaveComma(kFamilies, os,
                        [&](Family f) { os << stringifyFamily(f); });
  return out;
}

StringRef mlir::mw::models::stringifyDType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::BF16:
    return "bf16";
  case DType::F16:
    return "f16";
  }
  llvm_unreachable("unknown dtype");
}

std::optional<DType> mlir::mw::models::parseDType(StringRef name) {
  for (DType d : {DType::F32, DType::BF16, DType::F16})
    if (stringifyDType(d) == name)
      return d;
  return std::nullopt;
}

StringRef mlir::mw::models::stringifyAttention(AttentionKind kind) {
  switch (kind) {
  case AttentionKind::Fused:
    return "fused";
  case AttentionKind::Unfused:
    return "unfused";
  }
  llvm_unreachable("unknown attention kind");
}

std::optional<AttentionKind> mlir::mw::models::parseAttention(StringRef name) {
  for (AttentionKind k : {AttentionKind::Fused, AttentionKind::Unfused})
    if (stringifyAttention(k) == name)
      return k;
  return std::nullopt;
}

bool ModelConfig::operator==(const ModelConfig &o) const {
  return family == o.family && layers == o.layers && hidden == o.hidden &&
         heads == o.heads && numKvHeads() == o.numKvHeads() && ffn == o.ffn && seq == o.seq && batch == o.batch &&
         vocab == o.vocab && inFeatures == o.inFeatures &&
         classes == o.classes && dtype == o.dtype && rotary == o.rotary &&
         attention == o.attention && logits == o.logits;
}

/// A transformer configuration; the MLP-only fields keep their defaults.
static ModelConfig transformer(Family family, int64_t layers, int64_t hidden,
                               int64_t heads, int64_t ffn, int64_t seq,
                               int64_t batch, int64_t vocab) {
  ModelConfig c;
  c.family = family;
  c.layers = layers;
  c.hidden = hidden;
  c.heads = heads;
  c.ffn = ffn;
  c.seq = seq;
  c.batch = batch;
  c.vocab = vocab;
  return c;
}

static ModelConfig mlp(int64_t layers, int64_t hidden, int64_t inFeatures,
                       int64_t classes, int64_t batch) {
  ModelConfig c;
  c.family = Family::Mlp;
  c.layers = layers;
  c.hidden = hidden;
  c.inFeatures = inFeatures;
  c.classes = classes;
  c.batch = batch;
  return c;
}

ArrayRef<Preset> mlir::mw::models::getPresets() {
  // Published dimensions; the big presets use batch 1. Every family's first
  // preset is its tiny one, the family's defaults.
  static const Preset presets[] = {
      {"mlp-tiny", "3-layer MLP, 32 -> 64 -> 64 -> 10 classes",
       mlp(3, 64, 32, 10, 4)},
      {"gpt2-tiny", "GPT-2 shaped, tiny (examples/gpt2-tiny.mlir)",
       transformer(Family::Gpt, 2, 64, 4, 256, 32, 2, 256)},
      {"gpt2-small", "GPT-2 small (124M)",
       transformer(Family::Gpt, 12, 768, 12, 3072, 1024, 1, 50257)},
      {"gpt2-medium", "GPT-2 medium (355M)",
       transformer(Family::Gpt, 24, 1024, 16, 4096, 1024, 1, 50257)},
      {"gpt2-large", "GPT-2 large (774M)",
       transformer(Family::Gpt, 36, 1280, 20, 5120, 1024, 1, 50257)},
      {"gpt2-xl", "GPT-2 XL (1.5B)",
       transformer(Family::Gpt, 48, 1600, 25, 6400, 1024, 1, 50257)},
      {"gpt3-175b", "GPT-3 175B dimensions in the GPT-2 architecture",
       transformer(Family::Gpt, 96, 12288, 96, 49152, 2048, 1, 50257)},
      {"llama-tiny", "Llama shaped, tiny",
       transformer(Family::Llama, 2, 64, 4, 176, 32, 2, 256)},
      {"llama-tiny-gqa", "llama-tiny with grouped-query attention: 2 key/value "
                         "heads for 4 query heads",
       [] {
         ModelConfig c =
             transformer(Family::Llama, 2, 64, 4, 176, 32, 2, 256);
         c.kvHeads = 2;
         return c;
       }()},
      {"llama-7b-shaped", "Llama-2 7B dimensions (6.74B)",
       transformer(Family::Llama, 32, 4096, 32, 11008, 2048, 1, 32000)},
      {"bert-tiny", "BERT shaped, tiny, masked LM",
       transformer(Family::Bert, 2, 64, 4, 256, 32, 2, 256)},
      {"bert-base", "BERT base uncased, masked LM (110M)",
       transformer(Family::Bert, 12, 768, 12, 3072, 512, 1, 30522)},
      {"bert-large", "BERT large uncased, masked LM (335M)",
       transformer(Family::Bert, 24, 1024, 16, 4096, 512, 1, 30522)},
      {"opt-tiny", "OPT shaped, tiny",
       transformer(Family::Opt, 2, 64, 4, 256, 32, 2, 256)},
      {"opt-30b-shaped", "OPT-30B dimensions (29.97B)",
       transformer(Family::Opt, 48, 7168, 56, 28672, 2048, 1, 50272)},
  };
  return presets;
}

std::optional<ModelConfig> mlir::mw::models::lookupPreset(StringRef name) {
  for (const Preset &p : getPresets())
    if (p.name == name)
      return p.config;
  return std::nullopt;
}

ModelConfig mlir::mw::models::getDefaultConfig(Family family) {
  for (const Preset &p : getPresets())
    if (p.config.family == family)
      return p.config;
  llvm_unreachable("every family has a preset");
}

std::string mlir::mw::models::listPresetNames() {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::interleaveComma(getPresets(), os,
                        [&](const Preset &p) { os << p.name; });
  return out;
}

std::string mlir::mw::models::formatFlags(const ModelConfig &c) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << stringifyFamily(c.family) << " --layers " << c.layers << " --hidden "
     << c.hidden;
  if (c.family == Family::Mlp)
    os << " --in-features " << c.inFeatures << " --classes " << c.classes
       << " --batch " << c.batch;
  else
    os << " --heads " << c.heads << " --ffn " << c.ffn << " --seq " << c.seq
       << " --batch " << c.batch << " --vocab " << c.vocab;
  if (c.numKvHeads() != c.heads)
    os << " --kv-heads " << c.kvHeads;
  os << " --dtype " << stringifyDType(c.dtype);
  if (c.rotary)
    os << " --rotary";
  // Only the non-default is spelled out, so fused models regenerate with the
  // same header as before the option existed.
  if (c.attention != AttentionKind::Fused)
    os << " --attention " << stringifyAttention(c.attention);
  if (c.logits)
    os << " --logits";
  return out;
}

//===----------------------------------------------------------------------===//
// Parameter counts and validation
//===----------------------------------------------------------------------===//

namespace {
/// An int64 that remembers whether any step of its computation overflowed.
class CheckedInt {
public:
  CheckedInt(int64_t value) : value(value) {}

  CheckedInt operator+(CheckedInt o) const {
    CheckedInt r(0);
    r.overflow = overflow || o.overflow || llvm::AddOverflow(value, o.value, r.value);
    return r;
  }
  CheckedInt operator*(CheckedInt o) const {
    CheckedInt r(0);
    r.overflow = overflow || o.overflow || llvm::MulOverflow(value, o.value, r.value);
    return r;
  }
  bool overflowed() const { return overflow; }
  int64_t get() const { return overflow ? -1 : value; }

private:
  int64_t value;
  bool overflow = false;
};
} // namespace

/// Parameters of one GPT-2, BERT or OPT block: QKV and output projections
/// with biases, a two-layer MLP with biases and two LayerNorms.
static CheckedInt encoderBlockParams(CheckedInt d, CheckedInt f) {
  return CheckedInt(4) * d * d + CheckedInt(2) * d * f + f + CheckedInt(9) * d;
}

static CheckedInt paramCount(const ModelConfig &c) {
  CheckedInt d = c.hidden, f = c.ffn, s = c.seq, v = c.vocab, l = c.layers;
  switch (c.family) {
  case Family::Mlp: {
    CheckedInt total = 0;
    for (int64_t i = 0; i < c.layers; ++i) {
      CheckedInt in = i == 0 ? c.inFeatures : c.hidden;
      CheckedInt out = i + 1 == c.layers ? c.classes : c.hidden;
      total = total + in * out + out;
      if (total.overflowed())
        break;
    }
    return total;
  }
  case Family::Gpt:
  case Family::Opt:
    return v * d + s * d + l * encoderBlockParams(d, f) + CheckedInt(2) * d;
  case Family::Llama: {
    // q_proj and o_proj are [D, D]; k_proj and v_proj [K, D], K the key/value
    // heads' width.
    CheckedInt k = c.heads > 0 ? c.hidden / c.heads * c.numKvHeads() : 0;
    return CheckedInt(2) * v * d +
           l * (CheckedInt(2) * d * d + CheckedInt(2) * d * k +
                CheckedInt(3) * d * f + CheckedInt(2) * d) +
           d;
  }
  case Family::Bert:
    return (v + s + CheckedInt(2)) * d + CheckedInt(2) * d +
           l * encoderBlockParams(d, f) + (d * d + d) + CheckedInt(2) * d + v;
  }
  llvm_unreachable("unknown family");
}

int64_t mlir::mw::models::expectedParamCount(const ModelConfig &config) {
  return paramCount(config).get();
}

LogicalResult mlir::mw::models::validate(const ModelConfig &c,
                                         std::string &error) {
  auto fail = [&](const Twine &message) {
    error = message.str();
    return failure();
  };
  bool isMlp = c.family == Family::Mlp;
  SmallVector<std::pair<StringRef, int64_t>> sizes = {
      {"layers", c.layers}, {"hidden", c.hidden}, {"batch", c.batch}};
  if (isMlp) {
    sizes.push_back({"in-features", c.inFeatures});
    sizes.push_back({"classes", c.classes});
  } else {
    sizes.push_back({"heads", c.heads});
    sizes.push_back({"ffn", c.ffn});
    sizes.push_back({"seq", c.seq});
    sizes.push_back({"vocab", c.vocab});
  }
  for (auto [name, value] : sizes)
    if (value <= 0)
      return fail("--" + name + " must be positive, got " + Twine(value));
  // Each layer is a few dozen ops, generated and then verified in one go:
  // past this a run takes minutes (and its training step exceeds
  // --mw-autodiff's op limit), so stop at once instead.
  constexpr int64_t kMaxLayers = 2048;
  if (c.layers > kMaxLayers)
    return fail("--layers " + Twine(c.layers) + " is more than " +
                Twine(kMaxLayers) + ", the most mw-models generates (GPT-3 "
                "has 96)");

  if (c.rotary && c.family != Family::Llama)
    return fail("--rotary applies only to the llama family, not " +
                stringifyFamily(c.family));
  if (c.kvHeads != 0 && c.family != Family::Llama)
    return fail("--kv-heads applies only to the llama family, not " +
                stringifyFamily(c.family));
  if (c.kvHeads < 0)
    return fail("--kv-heads must be positive, got " + Twine(c.kvHeads));
  if (c.logits && c.family != Family::Gpt && c.family != Family::Llama &&
      c.family != Family::Opt)
    return fail("--logits applies only to the gpt, llama and opt families, "
                "not " +
                stringifyFamily(c.family));
  if (isMlp && c.attention != AttentionKind::Fused)
    return fail("--attention applies only to the gpt, llama and bert "
                "families, not mlp");
  if (!isMlp) {
    if (c.hidden % c.heads != 0)
      return fail("--hidden (" + Twine(c.hidden) +
                  ") must be a multiple of --heads (" + Twine(c.heads) + ")");
    if (c.heads % c.numKvHeads() != 0)
      return fail("--kv-heads (" + Twine(c.numKvHeads()) +
                  ") must divide --heads (" + Twine(c.heads) + ")");
    int64_t headDim = c.hidden / c.heads;
    if (c.rotary && headDim % 2 != 0)
      return fail("--rotary needs an even head dimension, got " +
                  Twine(c.hidden) + " / " + Twine(c.heads) + " = " +
                  Twine(headDim));
  }

  // Labels (and tokens) are i32.
  constexpr int64_t kMaxLabel = std::numeric_limits<int32_t>::max();
  if (isMlp && c.classes > kMaxLabel)
    return fail("--classes (" + Twine(c.classes) +
                ") does not fit the i32 labels");
  if (!isMlp && c.vocab > kMaxLabel)
    return fail("--vocab (" + Twine(c.vocab) +
                ") does not fit the i32 tokens and labels");

  // Every tensor's size in bits must fit int64 (mw's size helpers multiply
  // element counts by bit widths): check the parameter total and the widest
  // activations at 32 bits per element.
  CheckedInt bits = 32;
  SmallVector<CheckedInt> sizesToCheck = {paramCount(c) * bits};
  if (isMlp) {
    for (int64_t width : {c.inFeatures, c.hidden, c.classes})
      sizesToCheck.push_back(CheckedInt(c.batch) * width * bits);
  } else {
    CheckedInt tokens = CheckedInt(c.batch) * c.seq;
    sizesToCheck.push_back(tokens * c.vocab * bits);
    sizesToCheck.push_back(tokens * c.ffn * bits);
    sizesToCheck.push_back(tokens * c.hidden * CheckedInt(3) * bits);
  }
  if (llvm::any_of(sizesToCheck,
                   [](CheckedInt n) { return n.overflowed(); }))
    return fail("the model is too large: a tensor size overflows 64-bit "
                "integers");
  return success();
}

//===----------------------------------------------------------------------===//
// The forward-function builder
//===----------------------------------------------------------------------===//

namespace {
/// One argument of @forward.
struct ArgSpec {
  std::string name;
  SmallVector<int64_t> shape;
  Type elementType;
  Role role;
};

/// Declares @forward's arguments, then builds its body one op at a time with
/// result types computed from the operands, under a NameLoc scope.
class ForwardBuilder {
public:
  ForwardBuilder(MLIRContext &context, const ModelConfig &config)
      : b(&context), config(config), loc(b.getUnknownLoc()) {
    b.setListener(&layers);
    switch (config.dtype) {
    case DType::F32:
      elem = b.getF32Type();
      break;
    case DType::BF16:
      elem = b.getBF16Type();
      break;
    case DType::F16:
      elem = b.getF16Type();
      break;
    }
  }

  //===--- Declaring arguments ---------------------------------------------===//

  void param(const Twine &name, ArrayRef<int64_t> shape) {
    declare(name, shape, elem, Role::param);
  }
  /// A Linear layer's `PREFIX.weight` [out, in] and `PREFIX.bias` [out].
  void linearParams(const Twine &prefix, int64_t in, int64_t out) {
    param(prefix + ".weight", {out, in});
    param(prefix + ".bias", {out});
  }
  /// A LayerNorm's `PREFIX.weight` and `PREFIX.bias`, [width].
  void normParams(const Twine &prefix, int64_t width) {
    param(prefix + ".weight", {width});
    param(prefix + ".bias", {width});
  }
  void declare(const Twine &name, ArrayRef<int64_t> shape, Type type,
               Role role) {
    args.push_back({name.str(), SmallVector<int64_t>(shape), type, role});
  }

  /// Creates the module and @forward with the declared arguments and a rank-0
  /// f32 `loss` result, and sets the insertion point into its entry block.
  void createFunction() {
    createFunction("forward", {{RankedTensorType::get({}, b.getF32Type()),
                                Role::output, "loss"}});
  }

  /// One result of a function.
  struct ResultSpec {
    Type type;
    Role role;
    std::string name;
  };

  /// Creates function @name (and the module, the first time) with the
  /// declared arguments and `results`, sets the insertion point into its
  /// entry block, and starts a new list of declarations for the next one.
  void createFunction(StringRef name, ArrayRef<ResultSpec> results) {
    if (!module)
      module = ModuleOp::create(nameLoc(stringifyFamily(config.family)));
    b.setInsertionPointToEnd(module->getBody());
    argIndex.clear();
    mask = nullptr;

    // Each argument's location is its name, so a diagnostic about an
    // argument names the tensor.
    SmallVector<Type> types;
    SmallVector<Location> locs;
    SmallVector<DictionaryAttr> argAttrs;
    for (auto [i, a] : llvm::enumerate(args)) {
      types.push_back(RankedTensorType::get(a.shape, a.elementType));
      locs.push_back(nameLoc(a.name));
      argAttrs.push_back(roleAndName(a.role, a.name));
      argIndex[a.name] = i;
    }
    SmallVector<Type> resultTypes;
    for (const ResultSpec &r : results)
      resultTypes.push_back(r.type);
    func = b.create<func::FuncOp>(nameLoc(name), name,
                                  b.getFunctionType(types, resultTypes),
                                  ArrayRef<NamedAttribute>(), argAttrs);
    for (auto [i, r] : llvm::enumerate(results))
      func.setResultAttrs(i, roleAndName(r.role, r.name));
    Block *entry = b.createBlock(&func.getBody(), {}, types, locs);
    b.setInsertionPointToStart(entry);
    args.clear();
  }

  /// Returns `values` from the function being built.
  void finishFunction(ValueRange values) {
    layers.layer = nullptr;
    b.create<func::ReturnOp>(loc, values);
  }
  OwningOpRef<ModuleOp> takeModule() { return std::move(module); }

  /// The argument declared as `name`.
  Value arg(const Twine &name) {
    auto it = argIndex.find(name.str());
    assert(it != argIndex.end() && "undeclared argument");
    return func.getArgument(it->second);
  }

  /// Ops built from now on carry `loc(name)` and `mw.layer = name`: the
  /// location for diagnostics, the attribute for passes that need the layer
  /// structure (it survives printing without -mlir-print-debuginfo).
  void scope(const Twine &name) {
    loc = nameLoc(name);
    layers.layer = b.getStringAttr(name);
  }

  OwningOpRef<ModuleOp> finish(Value loss) {
    finishFunction(loss);
    return takeModule();
  }

  //===--- Ops --------------------------------------------------------------===//

  Type elementType() const { return elem; }

  static ArrayRef<int64_t> shapeOf(Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  }
  static Type elementOf(Value v) {
    return cast<RankedTensorType>(v.getType()).getElementType();
  }
  RankedTensorType tensor(ArrayRef<int64_t> shape, Type type) {
    return RankedTensorType::get(shape, type);
  }

  Value add(Value lhs, Value rhs) { return b.create<AddOp>(loc, lhs, rhs); }
  Value sub(Value lhs, Value rhs) { return b.create<SubOp>(loc, lhs, rhs); }
  Value mul(Value lhs, Value rhs) { return b.create<MulOp>(loc, lhs, rhs); }

  /// `lhs @ rhs` (or `lhs @ rhs^T`) with NumPy-broadcast batch dimensions.
  Value matmul(Value lhs, Value rhs, bool transposeRhs = false) {
    ArrayRef<int64_t> l = shapeOf(lhs), r = shapeOf(rhs);
    FailureOr<SmallVector<int64_t>> shape =
        broadcastShapes(l.drop_back(2), r.drop_back(2));
    assert(succeeded(shape) && "matmul batch dimensions do not broadcast");
    shape->push_back(l[l.size() - 2]);
    shape->push_back(transposeRhs ? r[r.size() - 2] : r.back());
    return b.create<MatmulOp>(loc, tensor(*shape, elementOf(lhs)), lhs, rhs,
                              /*transpose_lhs=*/false, transposeRhs);
  }

  Value reshape(Value x, ArrayRef<int64_t> shape) {
    return b.create<ReshapeOp>(loc, tensor(shape, elementOf(x)), x);
  }

  Value transpose(Value x, ArrayRef<int64_t> permutation) {
    SmallVector<int64_t> shape;
    for (int64_t p : permutation)
      shape.push_back(shapeOf(x)[p]);
    return b.create<TransposeOp>(loc, tensor(shape, elementOf(x)), x,
                                 permutation);
  }

  Value slice(Value x, ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes) {
    return b.create<SliceOp>(loc, tensor(sizes, elementOf(x)), x, offsets,
                             sizes, /*strides=*/nullptr);
  }

  Value concat(ValueRange inputs, int64_t axis) {
    SmallVector<int64_t> shape(shapeOf(inputs.front()));
    shape[axis] = 0;
    for (Value in : inputs)
      shape[axis] += shapeOf(in)[axis];
    return b.create<ConcatOp>(loc, tensor(shape, elementOf(inputs.front())),
                              inputs, axis);
  }

  Value embedding(Value table, Value indices) {
    SmallVector<int64_t> shape(shapeOf(indices));
    shape.push_back(shapeOf(table)[1]);
    return b.create<EmbeddingOp>(loc, tensor(shape, elementOf(table)), table,
                                 indices);
  }

  /// The normalized output; mean and rstd are left for autodiff.
  Value layerNorm(Value x, Value gamma, Value beta, double epsilon) {
    auto stats = tensor(shapeOf(x).drop_back(), b.getF32Type());
    auto op = b.create<LayerNormOp>(loc, x.getType(), stats, stats, x, gamma,
                                    beta, b.getF64FloatAttr(epsilon));
    return op.getResult();
  }

  Value rmsNorm(Value x, Value gamma, double epsilon) {
    auto stats = tensor(shapeOf(x).drop_back(), b.getF32Type());
    auto op = b.create<RmsNormOp>(loc, x.getType(), stats, x, gamma,
                                  b.getF64FloatAttr(epsilon));
    return op.getResult();
  }

  Value gelu(Value x, GeluApproximation approximation) {
    return b.create<GeluOp>(loc, x, approximation);
  }
  Value silu(Value x) { return b.create<SiluOp>(loc, x); }
  Value relu(Value x) { return b.create<ReluOp>(loc, x); }

  /// Attention over [B, H, S, Dh] heads with the default 1/sqrt(Dh) scale,
  /// fused or unfused as the config asks.
  Value attention(Value q, Value k, Value v, bool causal) {
    if (config.attention == AttentionKind::Unfused)
      return unfusedAttention(q, k, v, causal);
    auto lse = tensor(shapeOf(q).drop_back(), b.getF32Type());
    auto op = b.create<AttentionOp>(loc, q.getType(), lse, q, k, v, causal,
                                    /*scale=*/nullptr);
    return op.getResult();
  }

  /// softmax(q k^T * 1/sqrt(Dh) + mask) v as PyTorch's eager GPT-2 computes
  /// it, in q's element type. The scale is a rank-0 splat that mw.mul
  /// broadcasts; the [S, S] mask broadcasts over [B, H] the same way, so
  /// neither is materialized at the scores' size.
  Value unfusedAttention(Value q, Value k, Value v, bool causal) {
    ArrayRef<int64_t> qShape = shapeOf(q);
    double scale = 1.0 / std::sqrt(static_cast<double>(qShape.back()));
    Value scores = matmul(q, k, /*transposeRhs=*/true);
    Value scaleValue = b.create<SplatOp>(loc, tensor({}, elementOf(q)),
                                         b.getF64FloatAttr(scale));
    Value x = mul(scores, scaleValue);
    if (causal)
      x = add(x, causalMask(qShape[qShape.size() - 2], elementOf(q)));
    int64_t lastAxis = static_cast<int64_t>(shapeOf(x).size()) - 1;
    Value probs = b.create<SoftmaxOp>(loc, x.getType(), x,
                                      b.getI64IntegerAttr(lastAxis));
    return matmul(probs, v);
  }

  /// The additive [S, S] causal mask: 0 where key j <= query i, -inf above
  /// the diagonal (torch's masked_fill(-inf)). -inf cannot make a NaN: every
  /// row keeps its diagonal, so the softmax's row maximum is finite and the
  /// masked probabilities are exactly 0 (as is their gradient). Built once,
  /// at the top of the function, and shared by every layer: at S = 1024 each
  /// copy would be a 4 MiB constant.
  Value causalMask(int64_t seq, Type elementType) {
    auto type = tensor({seq, seq}, elementType);
    if (mask) {
      assert(mask.getType() == type && "every layer masks the same shape");
      return mask;
    }
    const llvm::fltSemantics &sem =
        cast<FloatType>(elementType).getFloatSemantics();
    APFloat zero = APFloat::getZero(sem);
    APFloat minusInf = APFloat::getInf(sem, /*Negative=*/true);
    SmallVector<APFloat> values;
    values.reserve(seq * seq);
    for (int64_t i = 0; i < seq; ++i)
      for (int64_t j = 0; j < seq; ++j)
        values.push_back(j <= i ? zero : minusInf);
    auto value = DenseElementsAttr::get(type, values);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&func.getBody().front());
    mask = b.create<ConstantOp>(nameLoc("causal_mask"), type, value);
    return mask;
  }

  /// mw.kv_cache_write of `values` [N, H, Dh] into `cache` at `slots`.
  Value kvCacheWrite(Value cache, Value values, Value slots,
                     DenseF32ArrayAttr scale) {
    return b.create<KvCacheWriteOp>(loc, cache.getType(), cache, values, slots,
                                    scale);
  }
  /// mw.paged_attention of `q` [B, H, T, Dh] with the default scale.
  Value pagedAttention(Value q, Value keyCache, Value valueCache,
                       Value tables, Value lens, DenseF32ArrayAttr scale) {
    return b.create<PagedAttentionOp>(loc, q.getType(), q, keyCache,
                                      valueCache, tables, lens,
                                      /*scale=*/nullptr, scale, scale);
  }

  Value constant(DenseElementsAttr value) {
    return b.create<ConstantOp>(loc, value.getType(), value);
  }

  Value crossEntropy(Value logits, Value labels, int64_t ignoreIndex) {
    return b.create<CrossEntropyOp>(loc, tensor({}, b.getF32Type()), logits,
                                    labels, b.getI64IntegerAttr(ignoreIndex),
                                    /*label_offset=*/nullptr);
  }

  OpBuilder &getBuilder() { return b; }

private:
  /// Sets `mw.layer` on every op built while a scope is open.
  struct LayerListener : public OpBuilder::Listener {
    StringAttr layer;
    void notifyOperationInserted(Operation *op,
                                 OpBuilder::InsertPoint) override {
      if (layer)
        op->setAttr(kLayerAttrName, layer);
    }
  };

  Location nameLoc(const Twine &name) {
    return NameLoc::get(b.getStringAttr(name));
  }

  DictionaryAttr roleAndName(Role role, StringRef name) {
    MLIRContext *ctx = b.getContext();
    return DictionaryAttr::get(
        ctx, {b.getNamedAttr(MWDialect::kRoleAttrName, RoleAttr::get(ctx, role)),
              b.getNamedAttr(MWDialect::kNameAttrName, b.getStringAttr(name))});
  }

  OpBuilder b;
  LayerListener layers;
  const ModelConfig &config;
  Type elem;
  Location loc;
  SmallVector<ArgSpec> args;
  llvm::StringMap<unsigned> argIndex;
  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
  /// The unfused attention's causal mask, once created.
  Value mask;
};
} // namespace

//===----------------------------------------------------------------------===//
// Shared transformer pieces
//===----------------------------------------------------------------------===//

/// [B, S, H*Dh] -> [B, H, S, Dh] (H the query heads, or llama's key/value
/// heads).
static Value splitHeads(ForwardBuilder &fb, const ModelConfig &c, Value x) {
  int64_t dh = c.hidden / c.heads;
  int64_t heads = ForwardBuilder::shapeOf(x).back() / dh;
  x = fb.reshape(x, {c.batch, c.seq, heads, dh});
  return fb.transpose(x, {0, 2, 1, 3});
}

/// Grouped-query attention's keys or values for every query head: [B, Hkv,
/// S, Dh] -> [B, Hq, S, Dh], query head h reading key/value head
/// h / (Hq / Hkv) (HF's repeat_kv). Concatenating along a new group axis keeps
/// to ops with gradients (the backward sums each group's copies).
static Value repeatKv(ForwardBuilder &fb, const ModelConfig &c, Value x) {
  ArrayRef<int64_t> shape = ForwardBuilder::shapeOf(x);
  int64_t groups = c.heads / shape[1];
  if (groups == 1)
    return x;
  Value rows = fb.reshape(x, {shape[0], shape[1], 1, shape[2] * shape[3]});
  SmallVector<Value> copies(groups, rows);
  return fb.reshape(fb.concat(copies, 2),
                    {shape[0], c.heads, shape[2], shape[3]});
}

/// [B, H, S, Dh] -> [B, S, D].
static Value mergeHeads(ForwardBuilder &fb, const ModelConfig &c, Value x) {
  x = fb.transpose(x, {0, 2, 1, 3});
  return fb.reshape(x, {c.batch, c.seq, c.hidden});
}

/// Mean cross-entropy of [B, S, V] logits against [B, S] labels, flattened
/// to tokens.
static Value tokenLoss(ForwardBuilder &fb, const ModelConfig &c, Value logits,
                       Value labels, int64_t ignoreIndex = -100) {
  int64_t tokens = c.batch * c.seq;
  logits = fb.reshape(logits, {tokens, c.vocab});
  labels = fb.reshape(labels, {tokens});
  return fb.crossEntropy(logits, labels, ignoreIndex);
}

/// tokens and labels, [B, S] i32, after the parameters (no labels for a
/// forward that returns the logits).
static void declareTokensAndLabels(ForwardBuilder &fb, const ModelConfig &c) {
  Type i32 = fb.getBuilder().getI32Type();
  fb.declare("tokens", {c.batch, c.seq}, i32, Role::input);
  if (!c.logits)
    fb.declare("labels", {c.batch, c.seq}, i32, Role::label);
}

/// @forward: returning the loss, or with --logits the [B, S, V] logits.
static void createForward(ForwardBuilder &fb, const ModelConfig &c) {
  if (!c.logits)
    return fb.createFunction();
  fb.createFunction(
      "forward",
      {{RankedTensorType::get({c.batch, c.seq, c.vocab}, fb.elementType()),
        Role::output, "logits"}});
}

/// The end of @forward: the loss of `logits` [B, S, V], or the logits.
static OwningOpRef<ModuleOp> finishForward(ForwardBuilder &fb,
                                           const ModelConfig &c, Value logits) {
  if (c.logits) {
    fb.finishFunction(logits);
    return fb.takeModule();
  }
  fb.scope("loss");
  return fb.finish(tokenLoss(fb, c, logits, fb.arg("labels")));
}

//===----------------------------------------------------------------------===//
// MLP
//===----------------------------------------------------------------------===//

/// Linear(+bias) layers `layers.i.weight` [in, out] / `layers.i.bias` [out]
/// with erf-GELU between them; cross-entropy over the class logits.
static OwningOpRef<ModuleOp> buildMlp(ForwardBuilder &fb,
                                      const ModelConfig &c) {
  auto width = [&](int64_t i) -> std::pair<int64_t, int64_t> {
    return {i == 0 ? c.inFeatures : c.hidden,
            i + 1 == c.layers ? c.classes : c.hidden};
  };
  for (int64_t i = 0; i < c.layers; ++i) {
    auto [in, out] = width(i);
    fb.param("layers." + Twine(i) + ".weight", {in, out});
    fb.param("layers." + Twine(i) + ".bias", {out});
  }
  fb.declare("x", {c.batch, c.inFeatures}, fb.elementType(), Role::input);
  fb.declare("labels", {c.batch}, fb.getBuilder().getI32Type(), Role::label);
  fb.createFunction();

  Value h = fb.arg("x");
  for (int64_t i = 0; i < c.layers; ++i) {
    std::string p = ("layers." + Twine(i)).str();
    fb.scope(p);
    h = fb.add(fb.matmul(h, fb.arg(p + ".weight")), fb.arg(p + ".bias"));
    if (i + 1 < c.layers)
      h = fb.gelu(h, GeluApproximation::erf);
  }
  fb.scope("loss");
  return fb.finish(fb.crossEntropy(h, fb.arg("labels"), -100));
}

//===----------------------------------------------------------------------===//
// GPT-2
//===----------------------------------------------------------------------===//

/// HuggingFace GPT2LMHeadModel: x = wte[tokens] + wpe; per block
/// x = x + attn(ln_1(x)); x = x + mlp(ln_2(x)); logits = ln_f(x) @ wte^T.
/// GPT-2's parameters, in the order of its state dict.
static void declareGptParams(ForwardBuilder &fb, const ModelConfig &c) {
  int64_t d = c.hidden, f = c.ffn;
  fb.param("wte", {c.vocab, d});
  fb.param("wpe", {c.seq, d});
  for (int64_t i = 0; i < c.layers; ++i) {
    std::string h = ("h." + Twine(i) + ".").str();
    fb.param(h + "ln_1.weight", {d});
    fb.param(h + "ln_1.bias", {d});
    fb.param(h + "attn.c_attn.weight", {d, 3 * d});
    fb.param(h + "attn.c_attn.bias", {3 * d});
    fb.param(h + "attn.c_proj.weight", {d, d});
    fb.param(h + "attn.c_proj.bias", {d});
    fb.param(h + "ln_2.weight", {d});
    fb.param(h + "ln_2.bias", {d});
    fb.param(h + "mlp.c_fc.weight", {d, f});
    fb.param(h + "mlp.c_fc.bias", {f});
    fb.param(h + "mlp.c_proj.weight", {f, d});
    fb.param(h + "mlp.c_proj.bias", {d});
  }
  fb.param("ln_f.weight", {d});
  fb.param("ln_f.bias", {d});
}

static constexpr double kGptEpsilon = 1e-5;

static OwningOpRef<ModuleOp> buildGpt(ForwardBuilder &fb,
                                      const ModelConfig &c) {
  int64_t d = c.hidden;
  constexpr double kEpsilon = kGptEpsilon;
  declareGptParams(fb, c);
  declareTokensAndLabels(fb, c);
  createForward(fb, c);

  // Conv1D: x @ W + b with W [in, out].
  auto conv1d = [&](Value x, const std::string &prefix) {
    return fb.add(fb.matmul(x, fb.arg(prefix + ".weight")),
                  fb.arg(prefix + ".bias"));
  };

  fb.scope("embeddings");
  Value x = fb.add(fb.embedding(fb.arg("wte"), fb.arg("tokens")), fb.arg("wpe"));
  for (int64_t i = 0; i < c.layers; ++i) {
    std::string h = ("h." + Twine(i) + ".").str();
    fb.scope(h + "attn");
    Value ln1 =
        fb.layerNorm(x, fb.arg(h + "ln_1.weight"), fb.arg(h + "ln_1.bias"),
                     kEpsilon);
    Value qkv = conv1d(ln1, h + "attn.c_attn");
    SmallVector<Value, 3> heads;
    for (int64_t j = 0; j < 3; ++j)
      heads.push_back(splitHeads(
          fb, c, fb.slice(qkv, {0, 0, j * d}, {c.batch, c.seq, d})));
    Value a = fb.attention(heads[0], heads[1], heads[2], /*causal=*/true);
    a = conv1d(mergeHeads(fb, c, a), h + "attn.c_proj");
    x = fb.add(x, a);

    fb.scope(h + "mlp");
    Value ln2 =
        fb.layerNorm(x, fb.arg(h + "ln_2.weight"), fb.arg(h + "ln_2.bias"),
                     kEpsilon);
    Value m = fb.gelu(conv1d(ln2, h + "mlp.c_fc"), GeluApproximation::tanh);
    x = fb.add(x, conv1d(m, h + "mlp.c_proj"));
  }

  fb.scope("lm_head");
  Value xf = fb.layerNorm(x, fb.arg("ln_f.weight"), fb.arg("ln_f.bias"),
                          kEpsilon);
  Value logits = fb.matmul(xf, fb.arg("wte"), /*transposeRhs=*/true);
  return finishForward(fb, c, logits);
}

//===----------------------------------------------------------------------===//
// Llama
//===----------------------------------------------------------------------===//

/// cos and sin of the rotary angles, [S, Dh/2]: angle(s, j) = s * theta^(-2j/Dh)
/// with theta = 10000 (HF's rope_theta), computed in double and rounded once.
static std::pair<Value, Value> rotaryTables(ForwardBuilder &fb,
                                            const ModelConfig &c) {
  constexpr double kTheta = 10000.0;
  int64_t headDim = c.hidden / c.heads, half = headDim / 2;
  Type elem = fb.elementType();
  const llvm::fltSemantics &sem = cast<FloatType>(elem).getFloatSemantics();
  SmallVector<APFloat> cosValues, sinValues;
  cosValues.reserve(c.seq * half);
  sinValues.reserve(c.seq * half);
  auto round = [&](double v) {
    APFloat f(v);
    bool losesInfo;
    f.convert(sem, APFloat::rmNearestTiesToEven, &losesInfo);
    return f;
  };
  for (int64_t s = 0; s < c.seq; ++s) {
    for (int64_t j = 0; j < half; ++j) {
      double invFreq = std::pow(kTheta, -2.0 * static_cast<double>(j) /
                                            static_cast<double>(headDim));
      double angle = static_cast<double>(s) * invFreq;
      cosValues.push_back(round(std::cos(angle)));
      sinValues.push_back(round(std::sin(angle)));
    }
  }
  auto type = RankedTensorType::get({c.seq, half}, elem);
  return {fb.constant(DenseElementsAttr::get(type, cosValues)),
          fb.constant(DenseElementsAttr::get(type, sinValues))};
}

/// HF's apply_rotary_pos_emb on [B, H, S, Dh] with half-size tables:
/// [x1, x2] -> [x1 cos - x2 sin, x2 cos + x1 sin].
static Value applyRotary(ForwardBuilder &fb, const ModelConfig &c, Value x,
                         Value cos, Value sin) {
  int64_t half = c.hidden / c.heads / 2;
  SmallVector<int64_t> sizes = {c.batch, ForwardBuilder::shapeOf(x)[1], c.seq,
                                half};
  Value x1 = fb.slice(x, {0, 0, 0, 0}, sizes);
  Value x2 = fb.slice(x, {0, 0, 0, half}, sizes);
  // One op per statement: the order of evaluation of call arguments is
  // unspecified, and the op order must not depend on the compiler.
  Value x1Cos = fb.mul(x1, cos);
  Value x2Sin = fb.mul(x2, sin);
  Value r1 = fb.sub(x1Cos, x2Sin);
  Value x2Cos = fb.mul(x2, cos);
  Value x1Sin = fb.mul(x1, sin);
  Value r2 = fb.add(x2Cos, x1Sin);
  return fb.concat({r1, r2}, 3);
}

/// HuggingFace LlamaForCausalLM without biases: RMSNorm (eps 1e-6) before
/// attention and MLP, SwiGLU MLP down(silu(gate(x)) * up(x)), final norm and
/// an untied lm_head. Linear weights are [out, in], applied as x @ W^T.
/// Llama's parameters, in the order of its state dict.
static void declareLlamaParams(ForwardBuilder &fb, const ModelConfig &c) {
  int64_t d = c.hidden, f = c.ffn, kv = d / c.heads * c.numKvHeads();
  fb.param("model.embed_tokens.weight", {c.vocab, d});
  for (int64_t i = 0; i < c.layers; ++i) {
    std::string l = ("model.layers." + Twine(i) + ".").str();
    fb.param(l + "input_layernorm.weight", {d});
    fb.param(l + "self_attn.q_proj.weight", {d, d});
    fb.param(l + "self_attn.k_proj.weight", {kv, d});
    fb.param(l + "self_attn.v_proj.weight", {kv, d});
    fb.param(l + "self_attn.o_proj.weight", {d, d});
    fb.param(l + "post_attention_layernorm.weight", {d});
    fb.param(l + "mlp.gate_proj.weight", {f, d});
    fb.param(l + "mlp.up_proj.weight", {f, d});
    fb.param(l + "mlp.down_proj.weight", {d, f});
  }
  fb.param("model.norm.weight", {d});
  fb.param("lm_head.weight", {c.vocab, d});
}

static constexpr double kLlamaEpsilon = 1e-6;

static OwningOpRef<ModuleOp> buildLlama(ForwardBuilder &fb,
                                        const ModelConfig &c) {
  constexpr double kEpsilon = kLlamaEpsilon;
  declareLlamaParams(fb, c);
  declareTokensAndLabels(fb, c);
  createForward(fb, c);

  auto linear = [&](Value x, const std::string &name) {
    return fb.matmul(x, fb.arg(name), /*transposeRhs=*/true);
  };

  fb.scope("model.embed_tokens");
  Value x = fb.embedding(fb.arg("model.embed_tokens.weight"), fb.arg("tokens"));
  Value cos, sin;
  if (c.rotary) {
    fb.scope("model.rotary_emb");
    std::tie(cos, sin) = rotaryTables(fb, c);
  }
  for (int64_t i = 0; i < c.layers; ++i) {
    std::string l = ("model.layers." + Twine(i) + ".").str();
    fb.scope(l + "self_attn");
    Value h = fb.rmsNorm(x, fb.arg(l + "input_layernorm.weight"), kEpsilon);
    Value q = splitHeads(fb, c, linear(h, l + "self_attn.q_proj.weight"));
    Value k = splitHeads(fb, c, linear(h, l + "self_attn.k_proj.weight"));
    Value v = splitHeads(fb, c, linear(h, l + "self_attn.v_proj.weight"));
    if (c.rotary) {
      q = applyRotary(fb, c, q, cos, sin);
      k = applyRotary(fb, c, k, cos, sin);
    }
    Value a = fb.attention(q, repeatKv(fb, c, k), repeatKv(fb, c, v),
                           /*causal=*/true);
    a = linear(mergeHeads(fb, c, a), l + "self_attn.o_proj.weight");
    x = fb.add(x, a);

    fb.scope(l + "mlp");
    h = fb.rmsNorm(x, fb.arg(l + "post_attention_layernorm.weight"), kEpsilon);
    Value gate = fb.silu(linear(h, l + "mlp.gate_proj.weight"));
    Value up = linear(h, l + "mlp.up_proj.weight");
    x = fb.add(x, linear(fb.mul(gate, up), l + "mlp.down_proj.weight"));
  }

  fb.scope("model.norm");
  x = fb.rmsNorm(x, fb.arg("model.norm.weight"), kEpsilon);
  fb.scope("lm_head");
  Value logits = linear(x, "lm_head.weight");
  return finishForward(fb, c, logits);
}

//===----------------------------------------------------------------------===//
// BERT
//===----------------------------------------------------------------------===//

/// HuggingFace BertForMaskedLM (no pooler): word + token-type (row 0, as with
/// all-zero token_type_ids) + position embeddings and a LayerNorm;
/// post-LayerNorm encoder layers with bidirectional attention and erf-GELU;
/// the MLM head (dense, GELU, LayerNorm, decoder tied to the word embeddings
/// plus cls.predictions.bias); cross-entropy over every position, ignoring
/// label -100 (unmasked positions). LayerNorm eps 1e-12. Linear weights are
/// [out, in], applied as x @ W^T + b.
static OwningOpRef<ModuleOp> buildBert(ForwardBuilder &fb,
                                       const ModelConfig &c) {
  int64_t d = c.hidden, f = c.ffn;
  constexpr double kEpsilon = 1e-12;
  auto linearParams = [&](const std::string &prefix, int64_t in, int64_t out) {
    fb.linearParams(prefix, in, out);
  };
  auto normParams = [&](const std::string &prefix) {
    fb.normParams(prefix, d);
  };
  fb.param("bert.embeddings.word_embeddings.weight", {c.vocab, d});
  fb.param("bert.embeddings.position_embeddings.weight", {c.seq, d});
  fb.param("bert.embeddings.token_type_embeddings.weight", {2, d});
  normParams("bert.embeddings.LayerNorm");
  for (int64_t i = 0; i < c.layers; ++i) {
    std::string l = ("bert.encoder.layer." + Twine(i) + ".").str();
    linearParams(l + "attention.self.query", d, d);
    linearParams(l + "attention.self.key", d, d);
    linearParams(l + "attention.self.value", d, d);
    linearParams(l + "attention.output.dense", d, d);
    normParams(l + "attention.output.LayerNorm");
    linearParams(l + "intermediate.dense", d, f);
    linearParams(l + "output.dense", f, d);
    normParams(l + "output.LayerNorm");
  }
  linearParams("cls.predictions.transform.dense", d, d);
  normParams("cls.predictions.transform.LayerNorm");
  fb.param("cls.predictions.bias", {c.vocab});
  declareTokensAndLabels(fb, c);
  fb.createFunction();

  auto linear = [&](Value x, const std::string &prefix) {
    return fb.add(fb.matmul(x, fb.arg(prefix + ".weight"), /*transposeRhs=*/true),
                  fb.arg(prefix + ".bias"));
  };
  auto norm = [&](Value x, const std::string &prefix) {
    return fb.layerNorm(x, fb.arg(prefix + ".weight"), fb.arg(prefix + ".bias"),
                        kEpsilon);
  };

  fb.scope("bert.embeddings");
  Value wordTable = fb.arg("bert.embeddings.word_embeddings.weight");
  Value x = fb.embedding(wordTable, fb.arg("tokens"));
  Value tokenType = fb.slice(
      fb.arg("bert.embeddings.token_type_embeddings.weight"), {0, 0}, {1, d});
  x = fb.add(x, tokenType);
  x = fb.add(x, fb.arg("bert.embeddings.position_embeddings.weight"));
  x = norm(x, "bert.embeddings.LayerNorm");

  for (int64_t i = 0; i < c.layers; ++i) {
    std::string l = ("bert.encoder.layer." + Twine(i) + ".").str();
    fb.scope(l + "attention");
    Value q = splitHeads(fb, c, linear(x, l + "attention.self.query"));
    Value k = splitHeads(fb, c, linear(x, l + "attention.self.key"));
    Value v = splitHeads(fb, c, linear(x, l + "attention.self.value"));
    Value a = fb.attention(q, k, v, /*causal=*/false);
    a = linear(mergeHeads(fb, c, a), l + "attention.output.dense");
    x = norm(fb.add(a, x), l + "attention.output.LayerNorm");

    fb.scope(l + "intermediate");
    Value h = fb.gelu(linear(x, l + "intermediate.dense"),
                      GeluApproximation::erf);
    fb.scope(l + "output");
    x = norm(fb.add(linear(h, l + "output.dense"), x), l + "output.LayerNorm");
  }

  fb.scope("cls.predictions");
  Value t = fb.gelu(linear(x, "cls.predictions.transform.dense"),
                    GeluApproximation::erf);
  t = norm(t, "cls.predictions.transform.LayerNorm");
  Value logits = fb.add(fb.matmul(t, wordTable, /*transposeRhs=*/true),
                        fb.arg("cls.predictions.bias"));
  fb.scope("loss");
  return fb.finish(tokenLoss(fb, c, logits, fb.arg("labels"), -100));
}

//===----------------------------------------------------------------------===//
// OPT
//===----------------------------------------------------------------------===//

/// HuggingFace OPTForCausalLM (do_layer_norm_before, as every OPT but 350m;
/// word_embed_proj_dim = hidden, so no project_in/out): x = embed_tokens[t] +
/// embed_positions; per layer x = x + out_proj(attn(self_attn_layer_norm(x)))
/// and x = x + fc2(relu(fc1(final_layer_norm(x)))); logits =
/// final_layer_norm(x) @ embed_tokens^T (lm_head is tied). LayerNorm eps 1e-5;
/// Linear weights are [out, in] with biases, applied as x @ W^T + b. HF's
/// OPTLearnedPositionalEmbedding has seq + 2 rows and reads row p + 2 for
/// position p (a fairseq offset); here the table has seq rows and position p
/// reads row p: the same model with the two unused rows dropped (a
/// checkpoint's table loads with its first two rows cut). The parameters, in
/// the order of OPTForCausalLM's state dict (without the tied lm_head).
static void declareOptParams(ForwardBuilder &fb, const ModelConfig &c) {
  int64_t d = c.hidden, f = c.ffn;
  auto linear = [&](const std::string &prefix, int64_t in, int64_t out) {
    fb.linearParams(prefix, in, out);
  };
  auto norm = [&](const std::string &prefix) { fb.normParams(prefix, d); };
  fb.param("model.decoder.embed_tokens.weight", {c.vocab, d});
  fb.param("model.decoder.embed_positions.weight", {c.seq, d});
  norm("model.decoder.final_layer_norm");
  for (int64_t i = 0; i < c.layers; ++i) {
    std::string l = ("model.decoder.layers." + Twine(i) + ".").str();
    linear(l + "self_attn.k_proj", d, d);
    linear(l + "self_attn.v_proj", d, d);
    linear(l + "self_attn.q_proj", d, d);
    linear(l + "self_attn.out_proj", d, d);
    norm(l + "self_attn_layer_norm");
    linear(l + "fc1", d, f);
    linear(l + "fc2", f, d);
    norm(l + "final_layer_norm");
  }
}

static constexpr double kOptEpsilon = 1e-5;

/// One OPT decoder layer on x [B, T, D]; `attend` computes attention from
/// the [B, T, D] queries, keys and values (split into heads by the caller's
/// convention) and returns the merged [B, T, D] result before out_proj.
template <typename Attend>
static Value optLayer(ForwardBuilder &fb, int64_t i, Value x, Attend attend) {
  auto linear = [&](Value v, const std::string &prefix) {
    return fb.add(
        fb.matmul(v, fb.arg(prefix + ".weight"), /*transposeRhs=*/true),
        fb.arg(prefix + ".bias"));
  };
  auto norm = [&](Value v, const std::string &prefix) {
    return fb.layerNorm(v, fb.arg(prefix + ".weight"),
                        fb.arg(prefix + ".bias"), kOptEpsilon);
  };
  std::string l = ("model.decoder.layers." + Twine(i) + ".").str();
  fb.scope(l + "self_attn");
  Value h = norm(x, l + "self_attn_layer_norm");
  Value q = linear(h, l + "self_attn.q_proj");
  Value k = linear(h, l + "self_attn.k_proj");
  Value v = linear(h, l + "self_attn.v_proj");
  Value a = linear(attend(q, k, v), l + "self_attn.out_proj");
  x = fb.add(x, a);

  fb.scope(l + "mlp");
  h = norm(x, l + "final_layer_norm");
  Value m = fb.relu(linear(h, l + "fc1"));
  return fb.add(x, linear(m, l + "fc2"));
}

static OwningOpRef<ModuleOp> buildOpt(ForwardBuilder &fb,
                                      const ModelConfig &c) {
  declareOptParams(fb, c);
  declareTokensAndLabels(fb, c);
  createForward(fb, c);

  fb.scope("model.decoder.embed_tokens");
  Value tokens = fb.embedding(fb.arg("model.decoder.embed_tokens.weight"),
                              fb.arg("tokens"));
  Value x = fb.add(tokens, fb.arg("model.decoder.embed_positions.weight"));
  for (int64_t i = 0; i < c.layers; ++i)
    x = optLayer(fb, i, x, [&](Value q, Value k, Value v) {
      Value a = fb.attention(splitHeads(fb, c, q), splitHeads(fb, c, k),
                             splitHeads(fb, c, v), /*causal=*/true);
      return mergeHeads(fb, c, a);
    });

  fb.scope("lm_head");
  Value xf = fb.layerNorm(x, fb.arg("model.decoder.final_layer_norm.weight"),
                          fb.arg("model.decoder.final_layer_norm.bias"),
                          kOptEpsilon);
  Value logits = fb.matmul(xf, fb.arg("model.decoder.embed_tokens.weight"),
                           /*transposeRhs=*/true);
  return finishForward(fb, c, logits);
}

//===----------------------------------------------------------------------===//
// Inference steps over a paged KV cache (docs/inference.md)
//===----------------------------------------------------------------------===//

StringRef mlir::mw::models::stringifyKvDType(KvDType dtype) {
  switch (dtype) {
  case KvDType::F32:
    return "f32";
  case KvDType::BF16:
    return "bf16";
  case KvDType::F16:
    return "f16";
  case KvDType::Int8:
    return "int8";
  case KvDType::Fp8E4M3:
    return "fp8e4m3";
  }
  llvm_unreachable("unknown kv dtype");
}

std::optional<KvDType> mlir::mw::models::parseKvDType(StringRef name) {
  for (KvDType d : {KvDType::F32, KvDType::BF16, KvDType::F16, KvDType::Int8,
                    KvDType::Fp8E4M3})
    if (stringifyKvDType(d) == name)
      return d;
  return std::nullopt;
}

static bool isQuantized(KvDType d) {
  return d == KvDType::Int8 || d == KvDType::Fp8E4M3;
}

LogicalResult mlir::mw::models::resolveInference(const ModelConfig &c,
                                                 InferenceConfig &ic,
                                                 std::string &error) {
  auto fail = [&](const Twine &message) {
    error = message.str();
    return failure();
  };
  if (c.family != Family::Gpt && c.family != Family::Llama &&
      c.family != Family::Opt)
    return fail("--inference applies only to the gpt, llama and opt "
                "families, not " +
                stringifyFamily(c.family));
  if (c.logits)
    return fail("--inference emits @prefill and @decode; --logits is for "
                "@forward");
  for (auto [name, value] :
       {std::pair<StringRef, int64_t>{"max-batch", ic.maxBatch},
        {"max-seq", ic.maxSeq},
        {"prompt-len", ic.promptLen},
        {"kv-blocks", ic.numBlocks}})
    if (value < 0)
      return fail("--" + name + " must be positive, got " + Twine(value));
  if (ic.block <= 0)
    return fail("--block must be positive, got " + Twine(ic.block));
  if (!ic.maxBatch)
    ic.maxBatch = c.batch;
  if (!ic.maxSeq)
    ic.maxSeq = c.seq;
  if (ic.maxSeq > c.seq)
    return fail("--max-seq " + Twine(ic.maxSeq) + " is longer than --seq " +
                Twine(c.seq) + ", the positions the model has (" +
                (c.family == Family::Gpt   ? "wpe's rows"
                 : c.family == Family::Opt ? "embed_positions's rows"
                                           : "the rotary tables") +
                ")");
  if (!ic.promptLen)
    ic.promptLen = ic.maxSeq;
  if (ic.promptLen > ic.maxSeq)
    return fail("--prompt-len " + Twine(ic.promptLen) +
                " is longer than --max-seq " + Twine(ic.maxSeq));
  int64_t perSequence = llvm::divideCeil(ic.maxSeq, ic.block);
  if (!ic.numBlocks)
    ic.numBlocks = ic.maxBatch * perSequence;
  if (!ic.kvDType)
    ic.kvDType = c.dtype == DType::BF16  ? KvDType::BF16
                 : c.dtype == DType::F16 ? KvDType::F16
                                         : KvDType::F32;
  if (!ic.kvScales.empty() && !isQuantized(*ic.kvDType))
    return fail("--kv-scale is for int8 and fp8e4m3 caches, not " +
                stringifyKvDType(*ic.kvDType));
  int64_t n = static_cast<int64_t>(ic.kvScales.size());
  if (n > 1 && n != c.numKvHeads())
    return fail("--kv-scale has " + Twine(n) + " values, expected 1 or " +
                Twine(c.numKvHeads()) + " (one per key/value head)");
  for (double s : ic.kvScales)
    if (!(s > 0.0) || !std::isfinite(s) ||
        !std::isfinite(static_cast<float>(s)))
      return fail("--kv-scale must be positive and finite (in f32), got " +
                  llvm::formatv("{0:e}", s).str());
  if (ic.kvScales.empty() && isQuantized(*ic.kvDType))
    ic.kvScales = {*ic.kvDType == KvDType::Int8 ? 1.0 / 32 : 1.0};
  CheckedInt bits = CheckedInt(ic.numBlocks) * ic.block * c.hidden * 32;
  if (bits.overflowed() ||
      (CheckedInt(ic.maxBatch) * ic.promptLen * c.vocab * 32).overflowed())
    return fail("the inference steps are too large: a tensor size overflows "
                "64-bit integers");
  return success();
}

namespace {
/// Builds @prefill and @decode of a gpt or llama model: the same parameters
/// as @forward, one key and one value cache per layer (role kv_cache), and
/// the batch's tokens, positions, slots, block tables and context lengths
/// (role input); each returns the logits of its sequences' last tokens and
/// the updated caches.
class InferenceBuilder {
public:
  InferenceBuilder(ForwardBuilder &fb, const ModelConfig &c,
                   const InferenceConfig &ic)
      : fb(fb), c(c), ic(ic), b(fb.getBuilder()) {
    switch (*ic.kvDType) {
    case KvDType::F32:
      cacheElem = b.getF32Type();
      break;
    case KvDType::BF16:
      cacheElem = b.getBF16Type();
      break;
    case KvDType::F16:
      cacheElem = b.getF16Type();
      break;
    case KvDType::Int8:
      cacheElem = b.getI8Type();
      break;
    case KvDType::Fp8E4M3:
      cacheElem = b.getFloat8E4M3FNType();
      break;
    }
    if (isQuantized(*ic.kvDType)) {
      SmallVector<float> scales(ic.kvScales.begin(), ic.kvScales.end());
      scale = b.getDenseF32ArrayAttr(scales);
    }
  }

  /// One step of `tokens` new tokens per sequence.
  void build(StringRef name, int64_t tokens) {
    t = tokens;
    int64_t dh = c.hidden / c.heads;
    if (c.family == Family::Gpt)
      declareGptParams(fb, c);
    else if (c.family == Family::Opt)
      declareOptParams(fb, c);
    else
      declareLlamaParams(fb, c);
    auto cacheType = RankedTensorType::get(
        {ic.numBlocks, ic.block, c.numKvHeads(), dh}, cacheElem);
    SmallVector<ForwardBuilder::ResultSpec> results = {
        {RankedTensorType::get({ic.maxBatch, c.vocab}, fb.elementType()),
         Role::output, "logits"}};
    for (int64_t i = 0; i < c.layers; ++i)
      for (StringRef kv : {"k_cache", "v_cache"}) {
        std::string cache = layerPrefix(i) + kv.str();
        fb.declare(cache, cacheType.getShape(), cacheElem, Role::kv_cache);
        results.push_back({cacheType, Role::kv_cache, cache});
      }
    Type i32 = b.getI32Type();
    int64_t batch = ic.maxBatch;
    int64_t maxBlocks = llvm::divideCeil(ic.maxSeq, ic.block);
    fb.declare("tokens", {batch, t}, i32, Role::input);
    fb.declare("positions", {batch, t}, i32, Role::input);
    fb.declare("slot_mapping", {batch * t}, i32, Role::input);
    fb.declare("block_tables", {batch, maxBlocks}, i32, Role::input);
    fb.declare("context_lens", {batch}, i32, Role::input);
    fb.createFunction(name, results);

    SmallVector<Value> outs;
    outs.push_back(c.family == Family::Gpt   ? gpt()
                   : c.family == Family::Opt ? opt()
                                             : llama());
    outs.append(caches.begin(), caches.end());
    caches.clear();
    fb.finishFunction(outs);
  }

private:
  std::string layerPrefix(int64_t i) const {
    switch (c.family) {
    case Family::Gpt:
      return ("h." + Twine(i) + ".attn.").str();
    case Family::Opt:
      return ("model.decoder.layers." + Twine(i) + ".self_attn.").str();
    default:
      return ("model.layers." + Twine(i) + ".self_attn.").str();
    }
  }

  /// [B, T, H*Dh] -> [B, H, T, Dh] (query heads, or key/value heads).
  Value splitHeads(Value x) {
    int64_t dh = c.hidden / c.heads;
    int64_t heads = ForwardBuilder::shapeOf(x).back() / dh;
    return fb.transpose(fb.reshape(x, {ic.maxBatch, t, heads, dh}),
                        {0, 2, 1, 3});
  }
  /// [B, H, T, Dh] -> [B, T, D].
  Value mergeHeads(Value x) {
    return fb.reshape(fb.transpose(x, {0, 2, 1, 3}),
                      {ic.maxBatch, t, c.hidden});
  }
  /// [B, H, T, Dh] keys or values -> the cache's [B*T, H, Dh] rows.
  Value tokenRows(Value x) {
    ArrayRef<int64_t> shape = ForwardBuilder::shapeOf(x);
    return fb.reshape(fb.transpose(x, {0, 2, 1, 3}),
                      {ic.maxBatch * t, shape[1], shape[3]});
  }

  /// Writes layer `i`'s new keys and values ([B, Hkv, T, Dh]) into its
  /// caches and attends with `q` ([B, Hq, T, Dh]) to each sequence's context
  /// (grouped-query when Hkv < Hq: mw.paged_attention reads cache head
  /// h / (Hq / Hkv) for query head h).
  Value attend(int64_t i, Value q, Value k, Value v) {
    std::string p = layerPrefix(i);
    Value slots = fb.arg("slot_mapping");
    Value kc = fb.kvCacheWrite(fb.arg(p + "k_cache"), tokenRows(k), slots,
                               scale);
    Value vc = fb.kvCacheWrite(fb.arg(p + "v_cache"), tokenRows(v), slots,
                               scale);
    caches.push_back(kc);
    caches.push_back(vc);
    return fb.pagedAttention(q, kc, vc, fb.arg("block_tables"),
                             fb.arg("context_lens"), scale);
  }

  /// [B, T, D] -> the last token's [B, D].
  Value lastToken(Value x) {
    Value last = fb.slice(x, {0, t - 1, 0}, {ic.maxBatch, 1, c.hidden});
    return fb.reshape(last, {ic.maxBatch, c.hidden});
  }

  /// GPT-2 as buildGpt, over T tokens at the given positions.
  Value gpt() {
    auto conv1d = [&](Value x, const std::string &prefix) {
      return fb.add(fb.matmul(x, fb.arg(prefix + ".weight")),
                    fb.arg(prefix + ".bias"));
    };
    int64_t d = c.hidden;
    fb.scope("embeddings");
    Value x = fb.add(fb.embedding(fb.arg("wte"), fb.arg("tokens")),
                     fb.embedding(fb.arg("wpe"), fb.arg("positions")));
    for (int64_t i = 0; i < c.layers; ++i) {
      std::string h = ("h." + Twine(i) + ".").str();
      fb.scope(h + "attn");
      Value ln1 = fb.layerNorm(x, fb.arg(h + "ln_1.weight"),
                               fb.arg(h + "ln_1.bias"), kGptEpsilon);
      Value qkv = conv1d(ln1, h + "attn.c_attn");
      SmallVector<Value, 3> heads;
      for (int64_t j = 0; j < 3; ++j)
        heads.push_back(
            splitHeads(fb.slice(qkv, {0, 0, j * d}, {ic.maxBatch, t, d})));
      Value a = attend(i, heads[0], heads[1], heads[2]);
      a = conv1d(mergeHeads(a), h + "attn.c_proj");
      x = fb.add(x, a);

      fb.scope(h + "mlp");
      Value ln2 = fb.layerNorm(x, fb.arg(h + "ln_2.weight"),
                               fb.arg(h + "ln_2.bias"), kGptEpsilon);
      Value m = fb.gelu(conv1d(ln2, h + "mlp.c_fc"), GeluApproximation::tanh);
      x = fb.add(x, conv1d(m, h + "mlp.c_proj"));
    }
    fb.scope("lm_head");
    Value xf = fb.layerNorm(lastToken(x), fb.arg("ln_f.weight"),
                            fb.arg("ln_f.bias"), kGptEpsilon);
    return fb.matmul(xf, fb.arg("wte"), /*transposeRhs=*/true);
  }

  /// OPT as buildOpt, over T tokens at the given positions.
  Value opt() {
    fb.scope("model.decoder.embed_tokens");
    Value x = fb.add(
        fb.embedding(fb.arg("model.decoder.embed_tokens.weight"),
                     fb.arg("tokens")),
        fb.embedding(fb.arg("model.decoder.embed_positions.weight"),
                     fb.arg("positions")));
    for (int64_t i = 0; i < c.layers; ++i)
      x = optLayer(fb, i, x, [&](Value q, Value k, Value v) {
        return mergeHeads(attend(i, splitHeads(q), splitHeads(k),
                                 splitHeads(v)));
      });
    fb.scope("lm_head");
    Value xf = fb.layerNorm(lastToken(x),
                            fb.arg("model.decoder.final_layer_norm.weight"),
                            fb.arg("model.decoder.final_layer_norm.bias"),
                            kOptEpsilon);
    return fb.matmul(xf, fb.arg("model.decoder.embed_tokens.weight"),
                     /*transposeRhs=*/true);
  }

  /// Llama as buildLlama; rotary angles are gathered at the positions.
  Value llama() {
    auto linear = [&](Value x, const std::string &name) {
      return fb.matmul(x, fb.arg(name), /*transposeRhs=*/true);
    };
    fb.scope("model.embed_tokens");
    Value x =
        fb.embedding(fb.arg("model.embed_tokens.weight"), fb.arg("tokens"));
    Value cos, sin;
    int64_t half = c.hidden / c.heads / 2;
    if (c.rotary) {
      fb.scope("model.rotary_emb");
      auto [cosTable, sinTable] = rotaryTables(fb, c);
      // [S, Dh/2] tables -> [B, 1, T, Dh/2] rows at the positions.
      auto gather = [&](Value table) {
        return fb.reshape(fb.embedding(table, fb.arg("positions")),
                          {ic.maxBatch, 1, t, half});
      };
      cos = gather(cosTable);
      sin = gather(sinTable);
    }
    auto rotate = [&](Value v) {
      SmallVector<int64_t> sizes = {ic.maxBatch, ForwardBuilder::shapeOf(v)[1],
                                    t, half};
      Value x1 = fb.slice(v, {0, 0, 0, 0}, sizes);
      Value x2 = fb.slice(v, {0, 0, 0, half}, sizes);
      Value x1Cos = fb.mul(x1, cos);
      Value x2Sin = fb.mul(x2, sin);
      Value r1 = fb.sub(x1Cos, x2Sin);
      Value x2Cos = fb.mul(x2, cos);
      Value x1Sin = fb.mul(x1, sin);
      Value r2 = fb.add(x2Cos, x1Sin);
      return fb.concat({r1, r2}, 3);
    };
    for (int64_t i = 0; i < c.layers; ++i) {
      std::string l = ("model.layers." + Twine(i) + ".").str();
      fb.scope(l + "self_attn");
      Value h =
          fb.rmsNorm(x, fb.arg(l + "input_layernorm.weight"), kLlamaEpsilon);
      Value q = splitHeads(linear(h, l + "self_attn.q_proj.weight"));
      Value k = splitHeads(linear(h, l + "self_attn.k_proj.weight"));
      Value v = splitHeads(linear(h, l + "self_attn.v_proj.weight"));
      if (c.rotary) {
        q = rotate(q);
        k = rotate(k);
      }
      Value a = attend(i, q, k, v);
      a = linear(mergeHeads(a), l + "self_attn.o_proj.weight");
      x = fb.add(x, a);

      fb.scope(l + "mlp");
      h = fb.rmsNorm(x, fb.arg(l + "post_attention_layernorm.weight"),
                     kLlamaEpsilon);
      Value gate = fb.silu(linear(h, l + "mlp.gate_proj.weight"));
      Value up = linear(h, l + "mlp.up_proj.weight");
      x = fb.add(x, linear(fb.mul(gate, up), l + "mlp.down_proj.weight"));
    }
    fb.scope("model.norm");
    Value xf = fb.rmsNorm(lastToken(x), fb.arg("model.norm.weight"),
                          kLlamaEpsilon);
    fb.scope("lm_head");
    return linear(xf, "lm_head.weight");
  }

  ForwardBuilder &fb;
  const ModelConfig &c;
  const InferenceConfig &ic;
  OpBuilder &b;
  Type cacheElem;
  DenseF32ArrayAttr scale;
  int64_t t = 1;
  SmallVector<Value> caches;
};
} // namespace

FailureOr<OwningOpRef<ModuleOp>>
mlir::mw::models::buildInferenceModel(MLIRContext &context,
                                      const ModelConfig &config,
                                      const InferenceConfig &inference) {
  std::string error;
  InferenceConfig resolved = inference;
  if (failed(validate(config, error)) ||
      failed(resolveInference(config, resolved, error)))
    return emitError(UnknownLoc::get(&context))
           << "invalid " << stringifyFamily(config.family)
           << " inference configuration: " << error;
  context.loadDialect<MWDialect, func::FuncDialect>();
  ForwardBuilder fb(context, config);
  InferenceBuilder ib(fb, config, resolved);
  ib.build("prefill", resolved.promptLen);
  ib.build("decode", 1);
  OwningOpRef<ModuleOp> module = fb.takeModule();
  // The tokens a sequence may hold, which the block tables round up to whole
  // blocks: --mw-kv-plan's default sequence length (docs/inference.md).
  module->walk([&](func::FuncOp f) {
    f->setAttr("mw.max_seq",
               IntegerAttr::get(IntegerType::get(&context, 64),
                                resolved.maxSeq));
  });
  return module;
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

FailureOr<OwningOpRef<ModuleOp>>
mlir::mw::models::buildModel(MLIRContext &context, const ModelConfig &config) {
  std::string error;
  if (failed(validate(config, error)))
    return emitError(UnknownLoc::get(&context))
           << "invalid " << stringifyFamily(config.family)
           << " configuration: " << error;
  context.loadDialect<MWDialect, func::FuncDialect>();
  ForwardBuilder fb(context, config);
  switch (config.family) {
  case Family::Mlp:
    return buildMlp(fb, config);
  case Family::Gpt:
    return buildGpt(fb, config);
  case Family::Llama:
    return buildLlama(fb, config);
  case Family::Bert:
    return buildBert(fb, config);
  case Family::Opt:
    return buildOpt(fb, config);
  }
  llvm_unreachable("unknown family");
}

int64_t mlir::mw::models::countParams(ModuleOp module) {
  int64_t total = 0;
  module.walk([&](func::FuncOp func) {
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      auto role = func.getArgAttrOfType<RoleAttr>(i, MWDialect::kRoleAttrName);
      if (role && role.getValue() == Role::param)
        total += mw::detail::numElements(func.getArgument(i).getType());
    }
  });
  return total;
}
