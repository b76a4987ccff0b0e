//===- MwOffload.cpp - --mw-offload: ZeRO-Inference weight streaming ------===//
//
// Keeps the layer weights of inference steps in host memory or a weights
// file and streams them into the arena layer by layer: an mw.fetch K layers
// ahead of each weight's first use, an mw.wait right before it (Passes.td,
// docs/offload.md). The settings come from the options, a DeepSpeed
// configuration's zero_optimization.offload_param, or the planner of
// MwOffloadAuto.h.
//
//===----------------------------------------------------------------------===//

#include "MwOffloadAuto.h"

#include "memwall/Analysis/StepStructure.h"
#include "memwall/Dialect/MW/IR/MWOps.h"
#include "memwall/Dialect/MW/Transforms/Passes.h"
#include "memwall/Zero/DeepSpeedConfig.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <optional>

namespace mlir::mw {
#define GEN_PASS_DEF_MWOFFLOAD
#include "memwall/Dialect/MW/Transforms/Passes.h.inc"
} // namespace mlir::mw

using namespace mlir;
using namespace mlir::mw;

namespace {

/// The settings one run of the pass applies to every function.
struct OffloadSettings {
  std::string weights; ///< "cpu" or "nvme"
  std::string path;    ///< nvme: the weights file's directory
  int64_t prefetch = 1;
  int64_t pinnedLayers = 0;
};

/// One layer of a step: its parameters (by argument number) and the
/// position of the first op that uses one of them.
struct Layer {
  int64_t number = 0;
  SmallVector<BlockArgument, 8> params;
  unsigned firstUse = ~0u;
  Operation *firstOp = nullptr;
  int64_t bytes = 0;
};

/// Whether `func` is a training step: gradients or optimizer state among its
/// arguments or results.
bool isTrainingStep(func::FuncOp func) {
  auto training = [](DictionaryAttr attrs) {
    auto role = attrs ? attrs.getAs<RoleAttr>(MWDialect::kRoleAttrName)
                      : RoleAttr();
    return role && (role.getValue() == Role::grad ||
                    role.getValue() == Role::optimizer_state);
  };
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (training(func.getArgAttrDict(i)))
      return true;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (training(func.getResultAttrDict(i)))
      return true;
  return false;
}

bool isParam(func::FuncOp func, unsigned i) {
  auto role = func.getArgAttrOfType<RoleAttr>(i, MWDialect::kRoleAttrName);
  return role && role.getValue() == Role::param &&
         isa<RankedTensorType>(func.getArgument(i).getType());
}

bool hasParams(func::FuncOp func) {
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (isParam(func, i))
      return true;
  return false;
}

struct MwOffloadPass : public mw::impl::MwOffloadBase<MwOffloadPass> {
  using MwOffloadBase::MwOffloadBase;
  void runOnOperation() override;

  /// The settings from the options and config=, or failure after an error.
  FailureOr<OffloadSettings> resolveSettings(ModuleOp module);
  /// Reads config= into `s` where no explicit option set the value.
  LogicalResult readConfig(ModuleOp module, OffloadSettings &s,
                           bool &weightsSet, bool &pathSet,
                           bool &prefetchSet);
  LogicalResult offload(func::FuncOp func, const OffloadSettings &s);
};

LogicalResult MwOffloadPass::readConfig(ModuleOp module, OffloadSettings &s,
                                        bool &weightsSet, bool &pathSet,
                                        bool &prefetchSet) {
  auto buffer = llvm::MemoryBuffer::getFile(config, /*IsText=*/true);
  if (!buffer)
    return module.emitError() << "mw-offload: cannot read config=" << config
                              << ": " << buffer.getError().message();
  memwall::zero::ModelFacts facts;
  facts.inference = true;
  for (func::FuncOp func : module.getOps<func::FuncOp>())
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      if (isParam(func, i)) {
        auto type = cast<RankedTensorType>(func.getArgument(i).getType());
        facts.numParameters += type.getNumElements();
        if (!facts.hiddenSize && type.getRank() == 2)
          facts.hiddenSize = type.getDimSize(1);
      }
  memwall::zero::DeepSpeedConfigResult parsed =
      memwall::zero::parseDeepSpeedConfig((*buffer)->getBuffer(), config,
                                          facts);
  memwall::zero::InferenceOffload found;
  llvm::SmallVector<memwall::zero::ConfigDiagnostic, 2> more =
      memwall::zero::inferenceOffloadOf(parsed.config, found);
  bool failedHere = parsed.hasErrors();
  auto report = [&](const memwall::zero::ConfigDiagnostic &d) {
    Location at =
        FileLineColLoc::get(&getContext(), config, d.line, d.column);
    std::string text =
        d.keyPath.empty() ? d.message : d.keyPath + ": " + d.message;
    if (d.severity == memwall::zero::Severity::Error)
      mlir::emitError(at) << "mw-offload: " << text;
    else if (d.severity == memwall::zero::Severity::Warning)
      mlir::emitWarning(at) << "mw-offload: " << text;
  };
  for (const memwall::zero::ConfigDiagnostic &d : parsed.diagnostics)
    report(d);
  for (const memwall::zero::ConfigDiagnostic &d : more) {
    report(d);
    failedHere |= d.severity == memwall::zero::Severity::Error;
  }
  if (failedHere)
    return failure();
  if (!weightsSet && found.weights) {
    s.weights = *found.weights;
    weightsSet = true;
  }
  if (!pathSet && found.path) {
    s.path = *found.path;
    pathSet = true;
  }
  if (!prefetchSet && found.prefetch) {
    s.prefetch = *found.prefetch;
    prefetchSet = true;
  }
  return success();
}

FailureOr<OffloadSettings> MwOffloadPass::resolveSettings(ModuleOp module) {
  OffloadSettings s;
  s.weights = weights;
  s.path = path;
  s.prefetch = prefetch;
  s.pinnedLayers = pinnedLayers;
  bool weightsSet = !weights.empty(), pathSet = !path.empty(),
       prefetchSet = prefetch.hasValue();
  if (!config.empty() &&
      failed(readConfig(module, s, weightsSet, pathSet, prefetchSet)))
    return failure();
  auto fail = [&](const Twine &msg) {
    module.emitError() << "mw-offload: " << msg;
    return failure();
  };
  // auto streams from host memory unless told otherwise.
  if (!weightsSet && autoMode) {
    s.weights = "cpu";
    weightsSet = true;
  }
  if (!weightsSet)
    return fail("weights= (cpu or nvme) is required, or a config= whose "
                "zero_optimization.offload_param.device is cpu or nvme");
  if (s.weights != "cpu" && s.weights != "nvme")
    return fail("weights='" + s.weights +
                "' is not a place for weights (cpu, nvme)");
  if (s.weights == "nvme" && s.path.empty())
    return fail("weights=nvme needs path=DIR, the directory of the weights "
                "file (or the config's offload_param.nvme_path)");
  if (s.weights == "cpu" && !s.path.empty() && !path.empty())
    return fail("path='" + s.path +
                "' is for weights=nvme; weights=cpu keeps them in host "
                "memory");
  if (s.weights == "cpu")
    s.path.clear();
  if (s.prefetch < 0)
    return fail("prefetch=" + Twine(s.prefetch) + " must be >= 0");
  if (s.pinnedLayers < 0)
    return fail("pinned-layers=" + Twine(s.pinnedLayers) + " must be >= 0");
  return s;
}

LogicalResult MwOffloadPass::offload(func::FuncOp func,
                                     const OffloadSettings &settings) {
  OffloadSettings s = settings;
  StringRef name = func.getSymName();
  if (isTrainingStep(func))
    return func.emitError()
           << "mw-offload: offload of a training step is not supported: @"
           << name
           << " has gradient or optimizer-state arguments or results; "
              "--mw-offload streams the weights of forward, prefill and "
              "decode steps";
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (isa<BaseMemRefType>(func.getArgument(i).getType()))
      return func.emitError()
             << "mw-offload: @" << name
             << " is bufferized; run --mw-offload on tensors, before "
                "--mw-bufferize or --mw-train-pipeline";
  Block &body = func.getBody().front();
  llvm::DenseMap<Operation *, unsigned> position;
  unsigned next = 0;
  for (Operation &op : body)
    position[&op] = next++;
  // The op of the entry block where `v` is first used, or null.
  auto firstUser = [&](Value v) -> Operation * {
    Operation *first = nullptr;
    for (Operation *user : v.getUsers()) {
      Operation *at = body.findAncestorOpInBlock(*user);
      if (at && (!first || position[at] < position[first]))
        first = at;
    }
    return first;
  };

  // The layers, by number, then in the order of their first use.
  std::map<int64_t, Layer> byNumber;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    if (!isParam(func, i))
      continue;
    auto paramName =
        func.getArgAttrOfType<StringAttr>(i, MWDialect::kNameAttrName);
    std::optional<int64_t> number =
        paramName ? layerNumberOf(paramName.getValue()) : std::nullopt;
    if (!number)
      continue;
    Layer &layer = byNumber[*number];
    layer.number = *number;
    BlockArgument arg = func.getArgument(i);
    layer.params.push_back(arg);
    layer.bytes += mw::detail::tensorBytes(arg.getType());
    if (Operation *first = firstUser(arg))
      if (position[first] < layer.firstUse) {
        layer.firstUse = position[first];
        layer.firstOp = first;
      }
  }
  if (byNumber.empty())
    return func.emitError()
           << "mw-offload: @" << name
           << " has no layered parameters (an all-digit component in the "
              "mw.name of a param, as in 'h.3.attn.c_attn.weight'): nothing "
              "to stream";
  SmallVector<Layer *> order;
  for (auto &[number, layer] : byNumber)
    order.push_back(&layer);
  // Layers nothing reads come last, by number.
  llvm::stable_sort(order, [](const Layer *a, const Layer *b) {
    return a->firstUse < b->firstUse;
  });
  int64_t numLayers = order.size();

  if (autoMode) {
    OffloadAutoOptions o;
    o.target = target;
    o.deviceMemory = deviceMemory;
    o.weights = s.weights;
    o.maxBatch = maxBatch;
    FailureOr<OffloadDecision> decision = chooseOffload(func, o);
    if (failed(decision))
      return failure();
    s.pinnedLayers = decision->pinnedLayers;
    s.prefetch = decision->prefetch;
    if (s.pinnedLayers < 0 || s.prefetch < 0)
      return func.emitError() << "mw-offload: auto chose pinned-layers="
                              << s.pinnedLayers << " prefetch=" << s.prefetch
                              << " for @" << name;
  }
  if (s.pinnedLayers > numLayers)
    return func.emitError() << "mw-offload: pinned-layers=" << s.pinnedLayers
                            << " exceeds the " << numLayers
                            << " layers of @" << name;

  // Fetches first (those K layers ahead, each before the first op of the
  // layer K places earlier; at the start of the body, in layer order, when
  // there is none), then the waits, each right before its weight's first
  // use (after any fetch placed before the same op).
  MLIRContext *ctx = &getContext();
  OpBuilder start(ctx);
  start.setInsertionPointToStart(&body);
  OpBuilder b(ctx);
  struct Pending {
    BlockArgument param;
    Operation *use;
    FetchOp fetch; ///< null with prefetch=0: made right before the wait
    int64_t layer;
  };
  SmallVector<Pending> pending;
  int64_t K = s.prefetch;
  int64_t streamedBytes = 0, largest = 0, streamed = 0;
  for (int64_t t = s.pinnedLayers; t < numLayers; ++t) {
    Layer &layer = *order[t];
    ++streamed;
    streamedBytes += layer.bytes;
    largest = std::max(largest, layer.bytes);
    for (BlockArgument param : layer.params) {
      func.setArgAttr(param.getArgNumber(), MWDialect::kOffloadAttrName,
                      StringAttr::get(ctx, s.weights));
      Operation *use = firstUser(param);
      if (!use)
        continue; // stored off the device, never read
      FetchOp fetch;
      if (K > 0) {
        Operation *ahead = t - K >= 0 ? order[t - K]->firstOp : nullptr;
        if (ahead)
          b.setInsertionPoint(ahead);
        fetch = (ahead ? b : start)
                    .create<FetchOp>(param.getLoc(), param.getType(), param,
                                     layer.number);
      }
      pending.push_back({param, use, fetch, layer.number});
      ++numFetches;
    }
  }
  for (Pending &p : pending) {
    b.setInsertionPoint(p.use);
    Location loc = p.param.getLoc();
    if (!p.fetch)
      p.fetch = b.create<FetchOp>(loc, p.param.getType(), p.param, p.layer);
    auto wait = b.create<WaitOp>(loc, p.param.getType(), p.fetch.getResult(),
                                 ValueRange());
    p.param.replaceAllUsesExcept(wait.getResult(), p.fetch);
  }
  numStreamedLayers += streamed;

  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("weights", b.getStringAttr(s.weights)),
      b.getNamedAttr("prefetch", b.getI64IntegerAttr(K)),
      b.getNamedAttr("pinned_layers", b.getI64IntegerAttr(s.pinnedLayers)),
      b.getNamedAttr("layers", b.getI64IntegerAttr(numLayers))};
  if (s.weights == "nvme")
    attrs.push_back(b.getNamedAttr("path", b.getStringAttr(s.path)));
  func->setAttr(MWDialect::kOffloadAttrName, b.getDictionaryAttr(attrs));

  if (report) {
    int64_t slots = std::min<int64_t>(K + 1, streamed);
    int64_t slotBytes = slots * largest;
    llvm::errs() << "mw-offload: @" << name << ": " << streamed << " of "
                 << numLayers << " layers streamed from " << s.weights
                 << " (pinned " << s.pinnedLayers << ", prefetch " << K
                 << ", " << slots << (slots == 1 ? " slot" : " slots") << " of up to " << largest
                 << " B): " << streamedBytes << " B streamed per step, "
                 << std::max<int64_t>(0, streamedBytes - slotBytes)
                 << " B of device memory saved\n";
  }
  return success();
}

void MwOffloadPass::runOnOperation() {
  ModuleOp module = getOperation();
  FailureOr<OffloadSettings> settings = resolveSettings(module);
  if (failed(settings))
    return signalPassFailure();
  SmallVector<func::FuncOp> funcs;
  if (!function.empty()) {
    auto func = module.lookupSymbol<func::FuncOp>(function);
    if (!func || func.isExternal()) {
      module.emitError() << "mw-offload: no function @" << function
                         << " to offload (function=)";
      return signalPassFailure();
    }
    funcs.push_back(func);
  } else {
    for (func::FuncOp func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && hasParams(func))
        funcs.push_back(func);
    if (funcs.empty()) {
      module.emitError()
          << "mw-offload: no function with parameters (mw.role = "
             "#mw.role<param>) to offload";
      return signalPassFailure();
    }
  }
  for (func::FuncOp func : funcs) {
    if (func->hasAttr(MWDialect::kOffloadAttrName)) {
      func.emitError() << "mw-offload: @" << func.getSymName()
                       << " is offloaded already";
      return signalPassFailure();
    }
    if (!func.getBody().hasOneBlock()) {
      func.emitError() << "mw-offload: @" << func.getSymName()
                       << " has several blocks; a step is one straight line "
                          "of ops";
      return signalPassFailure();
    }
    if (failed(offload(func, *settings)))
      return signalPassFailure();
  }
}

} // namespace
