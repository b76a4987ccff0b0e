//===- MwAutodiff.cpp - --mw-autodiff
//---------------------------------------===//
//
// Builds a training step from a forward function that returns a loss:
// clone the forward ops (once per micro-batch), walk them in reverse applying
// each op's GradientOpInterface rule, accumulate parameter gradients, and
// apply AdamW or SGD. Mixed precision keeps f32 master weights: by default
// (master-weights=param) as the parameters, cast to the compute type at their
// uses, so the cast's own gradient rule brings gradients back to f32; with
// master-weights=optimizer (DeepSpeed's and the ZeRO paper's layout) the
// parameters and gradients are in the compute type and the f32 master is
// optimizer state (`<param>.master`), which the optimizer updates from the
// gradient cast to f32 and casts back into the new parameter. fp16 adds
// dynamic loss scaling: the backward pass is seeded with the loss scale, the
// f32 gradients are unscaled and checked for inf/NaN, an overflowing step
// keeps the old params and state, and mw.loss_scale_update advances the
// scale state (DeepSpeed's rules).
//
//===----------------------------------------------------------------------===//

#include "memwall/Analysis/StepStructure.h"
#include "memwall/Dialect/MW/IR/MWOps.h"
#include "memwall/Dialect/MW/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#include <cmath>
#include <optional>
#include <tuple>

#define DEBUG_TYPE "mw-autodiff"

namespace mlir::mw {
#define GEN_PASS_DEF_MWAUTODIFF
#include "memwall/Dialect/MW/Transforms/Passes.h.inc"
} // namespace mlir::mw

using namespace mlir;
using namespace mlir::mw;

namespace {

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

bool isFloatTensor(Type t) {
  auto r = dyn_cast<RankedTensorType>(t);
  return r && isa<FloatType>(r.getElementType());
}

std::optional<Role> roleOf(func::FuncOp f, unsigned i) {
  if (auto r = f.getArgAttrOfType<RoleAttr>(i, MWDialect::kRoleAttrName))
    return r.getValue();
  return std::nullopt;
}

std::string nameOf(func::FuncOp f, unsigned i) {
  if (auto n = f.getArgAttrOfType<StringAttr>(i, MWDialect::kNameAttrName))
    return n.getValue().str();
  return "arg" + std::to_string(i);
}

/// One argument or result of the step being built.
struct Slot {
  Type type;
  Role role;
  std::string name;
};

struct MwAutodiffPass : public mw::impl::MwAutodiffBase<MwAutodiffPass> {
  using MwAutodiffBase::MwAutodiffBase;

  void runOnOperation() override;

private:
  LogicalResult checkOptions(ModuleOp module);
  /// Clones the forward body under `mapping` at the builder's point and
  /// returns the cloned loss.
  Value cloneForward(OpBuilder &b, func::FuncOp forward, IRMapping &mapping,
                     SmallVectorImpl<Operation *> &cloned);
  /// Reverse pass over `ops` seeded with `seed` for `loss`; adds the
  /// gradient of every value in `wrt` into `grads`.
  LogicalResult backward(OpBuilder &b, ArrayRef<Operation *> ops, Value loss,
                         Value seed, ArrayRef<Value> wrt,
                         DenseMap<Value, Value> &grads);

  Type computeElementType(MLIRContext *ctx) const {
    Builder b(ctx);
    if (precision == "bf16")
      return b.getBF16Type();
    if (precision == "fp16")
      return b.getF16Type();
    return b.getF32Type();
  }
  /// weight-decay as given, else the optimizer's default; nullopt when the
  /// text is no number >= 0. A string option, so that no number (-1 once)
  /// stands for "not given".
  std::optional<double> effectiveWeightDecay() const {
    if (weightDecay.empty())
      return optimizer == "adamw" ? 0.01 : 0.0;
    double value;
    if (StringRef(weightDecay).trim().getAsDouble(value) || !(value >= 0.0) ||
        !std::isfinite(value))
      return std::nullopt;
    return value;
  }
};

LogicalResult MwAutodiffPass::checkOptions(ModuleOp module) {
  auto fail = [&](const Twine &msg) {
    module.emitError() << "mw-autodiff: " << msg;
    return failure();
  };
  if (optimizer != "adamw" && optimizer != "sgd")
    return fail("unknown optimizer '" + optimizer +
                "' (expected adamw or sgd)");
  if (precision != "fp32" && precision != "bf16" && precision != "fp16")
    return fail("unknown precision '" + precision +
                "' (expected fp32, bf16 or fp16)");
  if (lossScaleWindow < 1)
    return fail("loss-scale-window must be >= 1, got " +
                Twine(lossScaleWindow));
  if (lossScaleHysteresis < 1)
    return fail("loss-scale-hysteresis must be >= 1, got " +
                Twine(lossScaleHysteresis));
  if (!(lossScaleMin > 0.0) || std::isinf(lossScaleMin))
    return fail("loss-scale-min must be finite and positive");
  if (masterWeights != "param" && masterWeights != "optimizer")
    return fail("unknown master-weights '" + masterWeights +
                "' (expected param or optimizer)");
  if (masterWeights == "optimizer" && precision == "fp32")
    return fail("master-weights=optimizer needs precision=bf16 or fp16: an "
                "fp32 step's parameters are its master weights");
  if (gradAccum < 1)
    return fail("grad-accum must be >= 1, got " + Twine(gradAccum));
  if (!(lr >= 0.0))
    return fail("lr must be non-negative");
  if (optimizer == "adamw" &&
      (!(beta1 >= 0.0 && beta1 < 1.0) || !(beta2 >= 0.0 && beta2 < 1.0)))
    return fail("beta1 and beta2 must lie in [0, 1)");
  if (stepName.empty())
    return fail("step-name must name the function to create, got an empty "
                "name");
  if (!effectiveWeightDecay())
    return fail("weight-decay must be a finite number >= 0 (when not given: "
                "0.01 for adamw, 0 for sgd), got '" + weightDecay + "'");
  if (optimizer == "adamw" && !(eps > 0.0 && std::isfinite(eps)))
    return fail("eps must be finite and > 0 (AdamW divides by sqrt(v) + "
                "eps), got " + llvm::formatv("{0}", double(eps)).str());
  if (!(eps >= 0.0))
    return fail("eps must be non-negative, got " + llvm::formatv("{0}", double(eps)).str());
  if (!(momentum >= 0.0 && momentum < 1.0))
    return fail("momentum must lie in [0, 1) (the momentum buffer grows "
                "without bound otherwise), got " + llvm::formatv("{0}", double(momentum)).str());
  if (optimizer == "adamw" && momentum != 0.0)
    return fail("momentum applies to sgd only");
  if (nesterov && (optimizer != "sgd" || momentum == 0.0))
    return fail("nesterov needs optimizer=sgd and a non-zero momentum");
  return success();
}

namespace {
/// The pieces of `v` along one axis when it is an `mw.concat` of values and
/// zero splats (a slice's gradient, padded back to the sliced value): each
/// piece's start and size, and its value, or null for +0.0.
struct ZeroPadded {
  int64_t axis = -1;
  SmallVector<std::tuple<int64_t, int64_t, Value>> pieces; // nonzero only
};
} // namespace

static bool isPositiveZeroSplat(Value v) {
  auto s = v.getDefiningOp<SplatOp>();
  if (!s)
    return false;
  double x = s.getValue().convertToDouble();
  return x == 0.0 && !std::signbit(x);
}

static std::optional<ZeroPadded> zeroPadded(Value v) {
  auto concat = v.getDefiningOp<ConcatOp>();
  if (!concat)
    return std::nullopt;
  ZeroPadded p;
  p.axis = static_cast<int64_t>(concat.getAxis());
  int64_t at = 0;
  bool anyZero = false;
  for (Value in : concat.getInputs()) {
    int64_t n = cast<RankedTensorType>(in.getType()).getShape()[p.axis];
    if (isPositiveZeroSplat(in))
      anyZero = true;
    else
      p.pieces.emplace_back(at, n, in);
    at += n;
  }
  if (!anyZero)
    return std::nullopt;
  return p;
}

/// The sum of two gradients `a + b` that are zero-padded along the same axis
/// with disjoint nonzero pieces, as one concat of those pieces (and zeros
/// where neither has one); null otherwise. The slices of one value that tile
/// it (the query, key and value of a fused projection) so get one concat of
/// their gradients instead of a concat of zeros per slice and adds. Exact:
/// each element is `x + 0.0`, which is `x` (but for x = -0.0, which the adds
/// turned into +0.0).
static Value mergeZeroPadded(OpBuilder &b, Location loc, Value a, Value c) {
  if (a.getType() != c.getType())
    return Value();
  std::optional<ZeroPadded> pa = zeroPadded(a), pc = zeroPadded(c);
  if (!pa || !pc || pa->axis != pc->axis)
    return Value();
  SmallVector<std::tuple<int64_t, int64_t, Value>> pieces(pa->pieces);
  pieces.append(pc->pieces);
  llvm::stable_sort(pieces, [](const auto &x, const auto &y) {
    return std::get<0>(x) < std::get<0>(y);
  });
  for (size_t i = 1; i < pieces.size(); ++i)
    if (std::get<0>(pieces[i - 1]) + std::get<1>(pieces[i - 1]) >
        std::get<0>(pieces[i]))
      return Value(); // overlapping: a real sum
  auto type = cast<RankedTensorType>(a.getType());
  int64_t axis = pa->axis, full = type.getShape()[axis];
  SmallVector<Value> parts;
  auto zeros = [&](int64_t n) {
    SmallVector<int64_t> shape(type.getShape());
    shape[axis] = n;
    parts.push_back(b.create<SplatOp>(
        loc, RankedTensorType::get(shape, type.getElementType()),
        b.getF64FloatAttr(0.0)));
  };
  int64_t at = 0;
  for (auto [start, n, value] : pieces) {
    if (start > at)
      zeros(start - at);
    parts.push_back(value);
    at = start + n;
  }
  if (at < full)
    zeros(full - at);
  if (parts.size() == 1)
    return parts.front();
  return b.create<ConcatOp>(loc, type, parts, axis);
}

Value MwAutodiffPass::cloneForward(OpBuilder &b, func::FuncOp forward,
                                   IRMapping &mapping,
                                   SmallVectorImpl<Operation *> &cloned) {
  Value loss;
  for (Operation &op : forward.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      loss = mapping.lookup(ret.getOperand(0));
      break;
    }
    cloned.push_back(b.clone(op, mapping));
  }
  return loss;
}

LogicalResult MwAutodiffPass::backward(OpBuilder &b, ArrayRef<Operation *> ops,
                                       Value loss, Value seed,
                                       ArrayRef<Value> wrt,
                                       DenseMap<Value, Value> &grads) {
  // Values that depend on a differentiated argument: only they need
  // gradients, which keeps the backward pass free of dead work.
  llvm::DenseSet<Value> active(wrt.begin(), wrt.end());
  for (Operation *op : ops)
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return active.contains(v); }))
      for (Value r : op->getResults())
        if (isFloatTensor(r.getType()))
          active.insert(r);
  if (!active.contains(loss))
    return success(); // nothing reaches the loss; callers warn per param

  // The ops a gradient rule builds (and the sums of the gradients it
  // returns) carry the layer of the op it differentiates, so the step keeps
  // its layer structure in the backward pass.
  struct LayerListener : public OpBuilder::Listener {
    OpBuilder::Listener *next = nullptr;
    StringAttr layer;
    void notifyOperationInserted(Operation *op,
                                 OpBuilder::InsertPoint previous) override {
      if (layer && !op->hasAttr(kLayerAttrName))
        op->setAttr(kLayerAttrName, layer);
      if (next)
        next->notifyOperationInserted(op, previous);
    }
  } layers;
  layers.next = b.getListener();
  b.setListener(&layers);
  auto restoreListener =
      llvm::make_scope_exit([&] { b.setListener(layers.next); });

  DenseMap<Value, Value> local;
  auto accumulate = [&](Value v, Value g) {
    auto it = local.find(v);
    if (it == local.end()) {
      local[v] = g;
      return;
    }
    if (Value merged = mergeZeroPadded(b, v.getLoc(), it->second, g)) {
      it->second = merged;
      return;
    }
    it->second = b.create<AddOp>(v.getLoc(), it->second, g);
  };
  local[loss] = seed;

  for (Operation *op : llvm::reverse(ops)) {
    SmallVector<Value> dys;
    bool any = false;
    for (Value r : op->getResults()) {
      auto it = local.find(r);
      dys.push_back(it == local.end() ? Value() : it->second);
      any |= it != local.end();
    }
    if (!any)
      continue;
    bool needsOperandGrad = llvm::any_of(
        op->getOperands(), [&](Value v) { return active.contains(v); });
    if (!needsOperandGrad)
      continue;
    layers.layer = op->getAttrOfType<StringAttr>(kLayerAttrName);
    auto rule = dyn_cast<GradientOpInterface>(op);
    if (!rule)
      return op->emitOpError("lies on the path from the parameters to the "
                             "loss but has no gradient rule");
    SmallVector<Value> dxs(op->getNumOperands());
    if (failed(rule.buildGradient(b, dys, dxs)))
      return failure();
    for (auto [v, g] : llvm::zip(op->getOperands(), dxs))
      if (g && active.contains(v))
        accumulate(v, g);
  }
  layers.layer = nullptr;
  for (Value v : wrt) {
    auto it = local.find(v);
    if (it == local.end())
      continue;
    auto acc = grads.find(v);
    if (acc == grads.end())
      grads[v] = it->second;
    else {
      acc->second = b.create<AddOp>(v.getLoc(), acc->second, it->second);
    }
  }
  return success();
}

void MwAutodiffPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  if (failed(checkOptions(module)))
    return signalPassFailure();

  auto forward = module.lookupSymbol<func::FuncOp>(entry);
  if (!forward || forward.isExternal()) {
    module.emitError() << "mw-autodiff: no function @" << entry
                       << " with a body (set entry=NAME)";
    return signalPassFailure();
  }
  // The step holds grad-accum copies of the forward and backward ops: stop
  // at once rather than build a step of millions of ops for minutes.
  constexpr int64_t kMaxStepOps = 2000000;
  int64_t forwardOps = static_cast<int64_t>(
      forward.getBody().front().getOperations().size());
  int64_t accum = gradAccum;
  if (accum > 1 && accum * forwardOps * 3 > kMaxStepOps) {
    module.emitError() << "mw-autodiff: grad-accum=" << accum
                       << " would build about " << accum * forwardOps * 3
                       << " ops (forward and backward of " << forwardOps
                       << " forward ops per micro-batch); the limit is "
                       << kMaxStepOps
                       << " ops: use fewer, larger micro-batches";
    return signalPassFailure();
  }
  if (module.lookupSymbol(stepName)) {
    module.emitError() << "mw-autodiff: the module already has a symbol @"
                       << stepName << " (set step-name=NAME)";
    return signalPassFailure();
  }
  FunctionType fnType = forward.getFunctionType();
  if (fnType.getNumResults() != 1 || !isFloatTensor(fnType.getResult(0)) ||
      tensorType(forward.getBody().front().getTerminator()->getOperand(0))
              .getRank() != 0) {
    forward.emitError() << "mw-autodiff: @" << entry
                        << " must return one rank-0 float tensor (the loss), "
                           "but returns "
                        << fnType.getResults();
    return signalPassFailure();
  }
  if (!forward.getBody().hasOneBlock()) {
    forward.emitError("mw-autodiff: the forward function must have one block");
    return signalPassFailure();
  }

  Type computeElem = computeElementType(ctx);
  Type f32 = Float32Type::get(ctx);
  // Mixed precision with the masters as the parameters (cast at their uses),
  // or with the masters in the optimizer state (half-precision parameters).
  bool masterInState = masterWeights == "optimizer";
  bool mixed = precision != "fp32" && !masterInState;
  SmallVector<unsigned> paramIdx, dataIdx;
  for (unsigned i = 0, e = forward.getNumArguments(); i < e; ++i) {
    Type t = forward.getArgumentTypes()[i];
    if (roleOf(forward, i) == Role::param) {
      auto rt = cast<RankedTensorType>(t);
      if (rt.getElementType() != computeElem) {
        forward.emitError()
            << "mw-autodiff: parameter '" << nameOf(forward, i) << "' has type "
            << t << " but precision=" << precision << " computes in "
            << computeElem
            << "; generate the forward function in the compute type "
               "(mw-models --dtype)";
        return signalPassFailure();
      }
      paramIdx.push_back(i);
    } else {
      dataIdx.push_back(i);
    }
  }
  if (paramIdx.empty()) {
    forward.emitError() << "mw-autodiff: @" << entry
                        << " has no argument with role #mw.role<param>";
    return signalPassFailure();
  }
  numParams = paramIdx.size();

  // The step's signature.
  bool adam = optimizer == "adamw";
  bool momentumBuffer = !adam && momentum != 0.0;
  auto master = [&](unsigned i) -> Type {
    auto t = cast<RankedTensorType>(forward.getArgumentTypes()[i]);
    return mixed || masterInState ? RankedTensorType::get(t.getShape(), f32)
                                  : Type(t);
  };
  SmallVector<Slot> inSlots, outSlots;
  for (unsigned i : paramIdx)
    inSlots.push_back({masterInState ? forward.getArgumentTypes()[i]
                                     : master(i),
                       Role::param, nameOf(forward, i)});
  // Each parameter's state: its master (master-weights=optimizer), then the
  // optimizer's buffers; stateBase[k] is the first of them.
  SmallVector<unsigned> stateBase;
  for (unsigned i : paramIdx) {
    stateBase.push_back(inSlots.size());
    if (masterInState)
      inSlots.push_back(
          {master(i), Role::optimizer_state, nameOf(forward, i) + ".master"});
    if (adam) {
      inSlots.push_back(
          {master(i), Role::optimizer_state, nameOf(forward, i) + ".exp_avg"});
      inSlots.push_back({master(i), Role::optimizer_state,
                         nameOf(forward, i) + ".exp_avg_sq"});
    } else if (momentumBuffer) {
      inSlots.push_back({master(i), Role::optimizer_state,
                         nameOf(forward, i) + ".momentum_buffer"});
    }
  }
  Type stepType = RankedTensorType::get({}, IntegerType::get(ctx, 64));
  unsigned stepArgIdx = inSlots.size();
  if (adam)
    inSlots.push_back({stepType, Role::optimizer_state, "optimizer.step"});
  // Dynamic loss scaling keeps its state after the optimizer's, in the order
  // of mw.loss_scale_update's operands and results.
  bool lossScaling = precision == "fp16";
  Type scalarF32 = RankedTensorType::get({}, f32);
  unsigned lossScaleArgIdx = inSlots.size();
  if (lossScaling) {
    inSlots.push_back({scalarF32, Role::optimizer_state, "loss_scale.scale"});
    for (StringRef name : {"iter", "last_overflow", "hysteresis"})
      inSlots.push_back(
          {stepType, Role::optimizer_state, ("loss_scale." + name).str()});
  }
  unsigned numStateArgs = inSlots.size() - paramIdx.size();
  for (unsigned i : dataIdx) {
    auto t = cast<RankedTensorType>(forward.getArgumentTypes()[i]);
    Type full = t;
    if (gradAccum > 1) {
      if (t.getRank() == 0) {
        forward.emitError() << "mw-autodiff: grad-accum needs a batch "
                               "dimension, but input '"
                            << nameOf(forward, i) << "' is a scalar";
        return signalPassFailure();
      }
      SmallVector<int64_t> shape(t.getShape());
      shape[0] *= gradAccum;
      full = RankedTensorType::get(shape, t.getElementType());
    }
    inSlots.push_back(
        {full, roleOf(forward, i).value_or(Role::input), nameOf(forward, i)});
  }
  Type lossType = fnType.getResult(0);
  outSlots.push_back({RankedTensorType::get({}, f32), Role::output, "loss"});
  for (unsigned k = 0; k < paramIdx.size() + numStateArgs; ++k)
    outSlots.push_back(inSlots[k]);

  SmallVector<Type> inTypes, outTypes;
  for (const Slot &s : inSlots)
    inTypes.push_back(s.type);
  for (const Slot &s : outSlots)
    outTypes.push_back(s.type);
  // Counts what the backward pass creates, for -mlir-pass-statistics.
  struct CountingListener : public OpBuilder::Listener {
    int64_t created = 0;
    void notifyOperationInserted(Operation *, OpBuilder::InsertPoint) override {
      ++created;
    }
  } listener;
  OpBuilder b(ctx, &listener);
  b.setInsertionPointAfter(forward);
  Location loc = NameLoc::get(StringAttr::get(ctx, stepName), forward.getLoc());
  auto step = b.create<func::FuncOp>(loc, stepName,
                                     b.getFunctionType(inTypes, outTypes));
  // All attribute dictionaries at once: setting them one argument at a time
  // rebuilds the whole arg_attrs array each time, quadratic in the thousands
  // of arguments of a large model's step.
  auto dictionaries = [&](ArrayRef<Slot> slots) {
    SmallVector<DictionaryAttr> dicts;
    for (const Slot &s : slots)
      dicts.push_back(b.getDictionaryAttr(
          {b.getNamedAttr(MWDialect::kNameAttrName, b.getStringAttr(s.name)),
           b.getNamedAttr(MWDialect::kRoleAttrName,
                          RoleAttr::get(ctx, s.role))}));
    return dicts;
  };
  step.setAllArgAttrs(dictionaries(inSlots));
  step.setAllResultAttrs(dictionaries(outSlots));
  Block *body = step.addEntryBlock();
  b.setInsertionPointToStart(body);

  // Parameters in the compute type: the masters themselves, or one cast each.
  SmallVector<Value> computeParams;
  for (auto [k, i] : llvm::enumerate(paramIdx)) {
    Value p = body->getArgument(k);
    if (mixed)
      p = b.create<CastOp>(p.getLoc(), forward.getArgumentTypes()[i], p);
    computeParams.push_back(p);
  }

  // The backward pass starts from dloss = 1/K, times the loss scale in fp16
  // (so that small f16 gradients do not flush to zero).
  Value lossScale = lossScaling ? body->getArgument(lossScaleArgIdx) : Value();
  Value scaledSeed;
  if (lossScaling) {
    scaledSeed = lossScale;
    if (gradAccum > 1)
      scaledSeed = b.create<DivOp>(
          loc, lossScale,
          b.create<SplatOp>(loc, scalarF32,
                            b.getF64FloatAttr(static_cast<double>(gradAccum))));
    if (lossType != scalarF32)
      scaledSeed = b.create<CastOp>(loc, lossType, scaledSeed);
  }

  // Forward and backward, once per micro-batch.
  DenseMap<Value, Value> grads;
  Value lossSum;
  unsigned dataBase = paramIdx.size() + numStateArgs;
  for (int64_t k = 0; k < gradAccum; ++k) {
    IRMapping mapping;
    for (auto [n, i] : llvm::enumerate(paramIdx))
      mapping.map(forward.getArgument(i), computeParams[n]);
    for (auto [n, i] : llvm::enumerate(dataIdx)) {
      Value full = body->getArgument(dataBase + n);
      Value micro = full;
      if (gradAccum > 1) {
        auto t = cast<RankedTensorType>(forward.getArgumentTypes()[i]);
        SmallVector<int64_t> offsets(t.getRank(), 0);
        offsets[0] = k * t.getShape()[0];
        micro = b.create<SliceOp>(full.getLoc(), t, full, offsets, t.getShape(),
                                  /*strides=*/nullptr);
      }
      mapping.map(forward.getArgument(i), micro);
    }
    SmallVector<Operation *> cloned;
    Value loss = cloneForward(b, forward, mapping, cloned);
    Value loss32 = loss;
    if (tensorType(loss).getElementType() != f32)
      loss32 =
          b.create<CastOp>(loss.getLoc(), RankedTensorType::get({}, f32), loss);
    lossSum = lossSum
                  ? b.create<AddOp>(loss.getLoc(), lossSum, loss32).getResult()
                  : loss32;
    Value seed = scaledSeed;
    if (!seed)
      seed = b.create<SplatOp>(loss.getLoc(), lossType,
                               b.getF64FloatAttr(1.0 / gradAccum));
    // Differentiate with respect to the parameters (the masters, through
    // their casts). The casts are shared by all micro-batches; listing them
    // first makes the reverse walk reach them last.
    SmallVector<Value> wrt(body->getArguments().take_front(paramIdx.size()));
    SmallVector<Operation *> all;
    if (mixed)
      for (Value p : computeParams)
        all.push_back(p.getDefiningOp());
    all.append(cloned.begin(), cloned.end());
    if (failed(backward(b, all, loss, seed, wrt, grads)))
      return signalPassFailure();
  }
  Value loss = lossSum;
  if (gradAccum > 1)
    loss =
        b.create<MulOp>(loc, lossSum,
                        b.create<SplatOp>(loc, lossSum.getType(),
                                          b.getF64FloatAttr(1.0 / gradAccum)));

  // The master gradients (in the compute type with master-weights=
  // optimizer, then cast to f32); in fp16 unscaled, then checked for inf
  // and NaN.
  SmallVector<Value> masterGrads;
  for (auto [k, i] : llvm::enumerate(paramIdx)) {
    Value p = body->getArgument(k);
    Value g = grads.lookup(p);
    if (!g) {
      forward.emitWarning()
          << "mw-autodiff: parameter '" << nameOf(forward, i)
          << "' does not reach the loss; its gradient is zero";
      g = b.create<SplatOp>(p.getLoc(), p.getType(), b.getF64FloatAttr(0.0));
    }
    if (masterInState)
      g = b.create<CastOp>(p.getLoc(), master(i), g);
    if (lossScaling)
      g = b.create<DivOp>(p.getLoc(), g, lossScale);
    masterGrads.push_back(g);
  }
  Value overflow;
  if (lossScaling)
    overflow = b.create<FoundInfOp>(loc, scalarF32, masterGrads);

  // Optimizer updates.
  SmallVector<Value> results{loss};
  SmallVector<Value> newParams, newState;
  Value newStep;
  if (adam) {
    Value stepArg = body->getArgument(stepArgIdx);
    newStep = b.create<AddOp>(
        loc, stepArg, b.create<SplatOp>(loc, stepType, b.getF64FloatAttr(1.0)));
  }
  double wd = *effectiveWeightDecay();
  // With loss scaling an overflowing step is skipped: every param and state
  // value (the step counter included) keeps its old value. Each select
  // follows its update at once, so that only one tensor's new value waits
  // for its select (and --mw-form-kernels writes the select into the old
  // value's buffer): the step needs no second copy of the model states.
  auto keepOnOverflow = [&](Value old, Value updated) -> Value {
    if (!lossScaling)
      return updated;
    return b.create<SelectOp>(old.getLoc(), old.getType(), overflow, old,
                              updated);
  };
  for (auto [k, i] : llvm::enumerate(paramIdx)) {
    // The updated value: the parameter itself, or its f32 master.
    Value p = body->getArgument(k);
    unsigned s = stateBase[k];
    Value w = masterInState ? body->getArgument(s++) : p;
    Value g = masterGrads[k];
    Location ploc = p.getLoc();
    // The new parameter from the updated master: cast to the compute type
    // (kept as it was on overflow, like the master).
    auto newParam = [&](Value updated) -> Value {
      if (!masterInState)
        return keepOnOverflow(p, updated);
      newState.push_back(keepOnOverflow(w, updated));
      return keepOnOverflow(p, b.create<CastOp>(ploc, p.getType(), updated));
    };
    if (adam) {
      Value m = body->getArgument(s);
      Value v = body->getArgument(s + 1);
      auto upd = b.create<AdamWOp>(
          ploc, TypeRange{w.getType(), w.getType(), w.getType()}, w, g, m, v,
          newStep, b.getF64FloatAttr(lr), b.getF64FloatAttr(beta1),
          b.getF64FloatAttr(beta2), b.getF64FloatAttr(eps),
          b.getF64FloatAttr(wd));
      newParams.push_back(newParam(upd.getNewParam()));
      newState.push_back(keepOnOverflow(m, upd.getNewExpAvg()));
      newState.push_back(keepOnOverflow(v, upd.getNewExpAvgSq()));
    } else {
      Value buf = momentumBuffer ? body->getArgument(s) : Value();
      SmallVector<Type> types{w.getType()};
      if (buf)
        types.push_back(w.getType());
      auto upd = b.create<SgdOp>(ploc, types, w, g, buf, b.getF64FloatAttr(lr),
                                 b.getF64FloatAttr(momentum),
                                 b.getF64FloatAttr(0.0), b.getF64FloatAttr(wd),
                                 nesterov ? b.getUnitAttr() : UnitAttr());
      newParams.push_back(newParam(upd.getNewParam()));
      if (buf)
        newState.push_back(keepOnOverflow(buf, upd.getNewMomentumBuffer()));
    }
  }
  if (adam)
    newState.push_back(
        keepOnOverflow(body->getArgument(stepArgIdx), newStep));
  if (lossScaling) {
    auto update = b.create<LossScaleUpdateOp>(
        loc, TypeRange{scalarF32, stepType, stepType, stepType}, overflow,
        lossScale, body->getArgument(lossScaleArgIdx + 1),
        body->getArgument(lossScaleArgIdx + 2),
        body->getArgument(lossScaleArgIdx + 3),
        b.getI64IntegerAttr(lossScaleWindow),
        b.getI64IntegerAttr(lossScaleHysteresis),
        b.getF64FloatAttr(lossScaleMin), b.getF64FloatAttr(2.0));
    newState.append(update->result_begin(), update->result_end());
  }
  results.append(newParams);
  results.append(newState);
  b.create<func::ReturnOp>(loc, results);

  // Gradient rules build every operand's gradient; those of inputs and
  // constants are unused. Erase them (reverse order frees whole chains).
  int64_t erased = 0;
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
    if (isOpTriviallyDead(&op)) {
      op.erase();
      ++erased;
    }
  numBackwardOps = listener.created - erased;
}

} // namespace
