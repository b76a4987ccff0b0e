//===- MwOffloadAuto.cpp - --mw-offload=auto's choice ---------------------===//
//
// Gathers the inputs of the analytic offload model (OffloadModel.h) from a
// step and the target table, weighs every pinned-layer count, prefetch
// depth and batch, prints the candidates, records them on the function
// (`mw.offload.candidates`, `mw.offload.choice`; --mw-memory-report's JSON
// carries them) and returns the choice (docs/offload.md, "auto"):
//
//  - layers: a parameter's layer is the first all-digit component of its
//    mw.name (the contract of --mw-offload); layers are ordered by the first
//    use of any of their parameters; the rest of the parameters stay resident;
//  - op costs: each top-level op's CostOpInterface FLOPs and bytes, the bytes
//    split into the parameters it reads and the rest (paged attention's
//    FLOPs and cache reads, priced by the op at the block tables' capacity,
//    are marked as the context's part, which the model rescales to the
//    workload's context); an op belongs to the
//    layer of the parameters it reads, else of the all-digit component of its
//    mw.layer path, else it is a head (before the first layer) or tail (a
//    path outside the layers, after it) op, else it joins the layer before;
//  - KV cache bytes per token from the kv_cache arguments' types (one block
//    row of every cache), as --mw-kv-plan sizes them;
//  - the arena (activations) and the constants from planning a copy of the
//    step with --mw-train-pipeline (as --mw-kv-plan and the memory report's
//    verdict do), plus the runtime workspace the compiler can count;
//  - the device: `target=`'s memory, roofline and host link, or
//    `device-memory=` on the default target's roofline.
//
//===----------------------------------------------------------------------===//

#include "MwOffloadAuto.h"

#include "MemoryVerdict.h"

#include "memwall/Analysis/BufferLiveness.h"
#include "memwall/Analysis/OffloadModel.h"
#include "memwall/Analysis/StepStructure.h"
#include "memwall/Analysis/Targets.h"
#include "memwall/Analysis/Units.h"
#include "memwall/Dialect/MW/IR/MWOps.h"
#include "memwall/Dialect/MW/Transforms/Pipelines.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <optional>

using namespace mlir;
using namespace mlir::mw;

namespace {

/// The workload auto predicts for (docs/offload.md): a short-prompt
/// throughput run, prompts of 64 tokens and 32 generated per sequence;
/// shorter (two thirds prompt, one third generated) where the step's
/// max-seq is below 96 tokens.
constexpr int64_t kPromptTokens = 64;
constexpr int64_t kGenerateTokens = 32;
/// A file's weights come through host memory: the slower of the host link
/// and a nominal NVMe drive's sequential read (PCIe 4.0 x4, about 3.5 GB/s).
constexpr double kNvmeBytesPerSecond = 3.5e9;
/// Prefetch depths 0..3 are weighed.
constexpr int64_t kMaxPrefetch = 3;

std::optional<Role> roleOf(func::FuncOp f, unsigned i) {
  if (auto r = f.getArgAttrOfType<RoleAttr>(i, MWDialect::kRoleAttrName))
    return r.getValue();
  return std::nullopt;
}

/// The figures of the step planned on a copy.
struct PlannedFigures {
  int64_t arenaBytes = 0, constantBytes = 0;
  RuntimeOverhead overhead;
};

FailureOr<PlannedFigures> planCopy(func::FuncOp f) {
  MLIRContext *ctx = f.getContext();
  OwningOpRef<ModuleOp> copy(ModuleOp::create(f.getLoc()));
  copy->getBody()->push_back(f->clone());
  auto step = cast<func::FuncOp>(copy->getBody()->front());
  // The copy must not carry the candidates of an earlier run.
  step->removeAttr("mw.offload.candidates");
  step->removeAttr("mw.offload.choice");
  PassManager pm(ctx, ModuleOp::getOperationName());
  buildTrainPipeline(pm);
  // Its diagnostics are the pipeline's, about a copy: say once what failed.
  std::string first;
  bool ok;
  {
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &d) {
      if (first.empty() && d.getSeverity() == DiagnosticSeverity::Error)
        first = d.str();
      return success();
    });
    ok = succeeded(pm.run(*copy));
  }
  if (!ok)
    return f.emitError() << "mw-offload: auto: planning a copy of @"
                         << f.getSymName()
                         << " with --mw-train-pipeline failed: " << first;
  step = cast<func::FuncOp>(copy->getBody()->front());
  PlannedFigures p;
  if (auto a = step->getAttrOfType<IntegerAttr>("mw.arena_size"))
    p.arenaBytes = a.getInt();
  Value arena;
  for (BlockArgument arg : step.getArguments())
    if (step.getArgAttr(arg.getArgNumber(), "mw.arena"))
      arena = arg;
  step.walk([&](memref::AllocOp a) {
    if (a->hasAttr("mw.arena"))
      arena = a.getResult();
  });
  BufferLiveness live(step);
  for (const LiveBuffer &b : live.getBuffers())
    if (!b.isTransient() && b.value != arena)
      p.constantBytes += b.sizeInBytes;
  p.overhead = computeRuntimeOverhead(step);
  return p;
}

/// The device and its rates.
struct DeviceRates {
  std::string name;
  int64_t memoryBytes = 0;
  const Target *roofline = nullptr;
  double hostLink = 0;
};

FailureOr<DeviceRates> resolveDevice(func::FuncOp f,
                                     const OffloadAutoOptions &o) {
  DeviceRates d;
  if (o.target.empty() && o.deviceMemory.empty())
    return f.emitError() << "mw-offload: auto needs target=NAME or "
                            "device-memory=SIZE (the memory to fill)";
  if (!o.target.empty()) {
    d.roofline = lookupTarget(o.target);
    if (!d.roofline || d.roofline->memoryBytes == 0)
      return f.emitError() << "mw-offload: unknown target '" << o.target
                           << "' (expected one with device memory: "
                           << getTargetNames() << ")";
    d.name = d.roofline->name.str();
    d.memoryBytes = d.roofline->memoryBytes;
  } else {
    d.roofline = &getDefaultTarget();
  }
  if (!o.deviceMemory.empty()) {
    std::optional<int64_t> bytes = parseByteSize(o.deviceMemory);
    if (!bytes)
      return f.emitError() << "mw-offload: device-memory='" << o.deviceMemory
                           << "' is not a size (expected a positive number "
                              "with an optional unit: "
                           << getByteSizeUnits() << ", e.g. 32GB)";
    d.memoryBytes = *bytes;
    d.name = (d.name.empty() ? "" : d.name + ", ") + "device-memory=" +
             o.deviceMemory;
  }
  d.hostLink = d.roofline->hostLinkBytesPerSecond;
  if (o.weights == "nvme")
    d.hostLink = std::min(d.hostLink, kNvmeBytesPerSecond);
  return d;
}

/// The model's inputs, gathered from `f`.
struct Gathered {
  OffloadModelInputs in;
  /// The layers' ids (from the names), in the model's order.
  SmallVector<int64_t> layerIds;
  int64_t maxSeq = 0;
};

FailureOr<Gathered> gather(func::FuncOp f, const DeviceRates &d) {
  Gathered g;
  OffloadModelInputs &in = g.in;
  if (f.isExternal() || !f.getBody().hasOneBlock())
    return f.emitError() << "mw-offload: auto: @" << f.getSymName()
                         << " has no single-block body to plan";
  Block &body = f.getBody().front();
  // Parameters by layer, and the first use of each layer.
  llvm::DenseMap<Value, int64_t> paramLayer; // -1: resident
  llvm::DenseMap<Operation *, unsigned> position;
  for (auto [i, op] : llvm::enumerate(body))
    position[&op] = i;
  std::map<int64_t, int64_t> layerBytes;
  std::map<int64_t, unsigned> firstUse;
  int64_t residentParams = 0, inputBytes = 0;
  RankedTensorType cacheType;
  for (BlockArgument arg : f.getArguments()) {
    unsigned i = arg.getArgNumber();
    std::optional<Role> role = roleOf(f, i);
    int64_t bytes = mw::detail::tensorBytes(arg.getType());
    if (role == Role::kv_cache) {
      auto t = dyn_cast<RankedTensorType>(arg.getType());
      if (!t || t.getRank() != 4 || !t.hasStaticShape() ||
          t.getDimSize(0) == 0 || t.getDimSize(1) == 0)
        return f.emitError() << "mw-offload: auto: kv_cache argument " << i
                             << " is not a static [NB, BS, Hkv, D] tensor "
                                "with blocks";
      in.kvBytesPerToken += bytes / (t.getDimSize(0) * t.getDimSize(1));
      cacheType = t;
      continue;
    }
    if (role != Role::param) {
      inputBytes += bytes;
      continue;
    }
    auto name = f.getArgAttrOfType<StringAttr>(i, MWDialect::kNameAttrName);
    std::optional<int64_t> layer =
        name ? layerNumberOf(name.getValue()) : std::nullopt;
    if (!layer) {
      residentParams += bytes;
      paramLayer[arg] = -1;
      continue;
    }
    paramLayer[arg] = *layer;
    layerBytes[*layer] += bytes;
    for (Operation *user : arg.getUsers()) {
      Operation *top = body.findAncestorOpInBlock(*user);
      if (!top)
        continue;
      unsigned p = position[top];
      auto [it, inserted] = firstUse.try_emplace(*layer, p);
      if (!inserted)
        it->second = std::min(it->second, p);
    }
  }
  if (layerBytes.empty())
    return f.emitError() << "mw-offload: auto: @" << f.getSymName()
                         << " has no layers (no parameter's mw.name has an "
                            "all-digit component, as h.3.attn.c_attn.weight "
                            "has 3)";
  // Layers in the order of their first use (unused ones last, by id).
  for (auto &[id, bytes] : layerBytes)
    g.layerIds.push_back(id);
  auto useOf = [&](int64_t id) {
    auto it = firstUse.find(id);
    return it == firstUse.end() ? ~0u : it->second;
  };
  llvm::stable_sort(g.layerIds, [&](int64_t a, int64_t b) {
    return useOf(a) < useOf(b);
  });
  llvm::DenseMap<int64_t, size_t> slotOf;
  for (auto [k, id] : llvm::enumerate(g.layerIds)) {
    slotOf[id] = k;
    OffloadLayer l;
    l.weightBytes = layerBytes[id];
    in.layers.push_back(l);
  }

  // Ops: costs, split into parameter bytes and the rest, by layer.
  std::optional<size_t> current;
  for (Operation &op : body) {
    auto cost = dyn_cast<CostOpInterface>(&op);
    std::optional<size_t> layer;
    int64_t weightBytes = 0;
    for (Value v : op.getOperands()) {
      auto it = paramLayer.find(v);
      if (it == paramLayer.end())
        continue;
      weightBytes += mw::detail::tensorBytes(v.getType());
      if (it->second >= 0 && !layer)
        layer = slotOf.lookup(it->second);
    }
    std::string path = getLayerPath(&op);
    if (!layer) {
      if (std::optional<int64_t> id = layerNumberOf(path))
        if (slotOf.count(*id))
          layer = slotOf.lookup(*id);
    }
    if (!cost)
      continue;
    OffloadOpCost c;
    c.flops = static_cast<double>(cost.getFlops());
    double read = static_cast<double>(cost.getBytesRead());
    double moved = read + static_cast<double>(cost.getBytesWritten());
    c.weightBytes = std::min(static_cast<double>(weightBytes), read);
    c.otherBytes = moved - c.weightBytes;
    if (auto paged = dyn_cast<PagedAttentionOp>(&op)) {
      // Its FLOPs and its cache reads are priced at the block tables'
      // capacity: the model rescales them to the workload's context.
      int64_t capacity = paged.getBlockTables().getType().getShape()[1] *
                         paged.getKeyCache().getType().getShape()[1];
      double fixedRead = static_cast<double>(
          mw::detail::tensorBytes(paged.getQuery().getType()) +
          mw::detail::tensorBytes(paged.getBlockTables().getType()) +
          mw::detail::tensorBytes(paged.getContextLens().getType()));
      c.contextFlops = c.flops;
      c.flops = 0;
      c.contextBytes = std::max(read - fixedRead, 0.0);
      c.otherBytes -= c.contextBytes;
      in.referenceContextTokens = capacity;
    }
    if (layer) {
      current = layer;
      in.layers[*layer].ops.push_back(c);
    } else if (!current) {
      in.headOps.push_back(c);
    } else if (!path.empty() || &op == body.getTerminator()) {
      in.tailOps.push_back(c);
    } else {
      in.layers[*current].ops.push_back(c);
    }
  }

  // The step's shape: tokens [B, T], or the first input's leading dimension.
  int64_t batch = 0, tokensPerSequence = 1;
  for (BlockArgument arg : f.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto name = f.getArgAttrOfType<StringAttr>(i, MWDialect::kNameAttrName);
    auto t = dyn_cast<RankedTensorType>(arg.getType());
    if (!t || !t.hasStaticShape() || t.getRank() < 1 ||
        roleOf(f, i) != Role::input)
      continue;
    if (name && name.getValue() == "tokens" && t.getRank() == 2) {
      batch = t.getDimSize(0);
      tokensPerSequence = t.getDimSize(1);
      break;
    }
    if (!batch)
      batch = t.getDimSize(0);
    if (name && name.getValue() == "block_tables" && t.getRank() == 2 &&
        cacheType)
      g.maxSeq = t.getDimSize(1) * cacheType.getDimSize(1);
  }
  batch = std::max<int64_t>(batch, 1);
  if (auto m = f->getAttrOfType<IntegerAttr>("mw.max_seq"))
    g.maxSeq = m.getInt();
  in.referenceTokens = batch * tokensPerSequence;

  FailureOr<PlannedFigures> planned = planCopy(f);
  if (failed(planned))
    return failure();
  in.residentBytes =
      residentParams + planned->constantBytes + planned->overhead.total();
  // The step's inputs (tokens, positions, tables) scale with the batch: with
  // the arena they are the per-token transient bytes.
  in.referenceTransientBytes = planned->arenaBytes + inputBytes;
  in.deviceBytes = d.memoryBytes;
  in.peakFlopsPerSecond = d.roofline->flopsPerSecond;
  in.deviceBytesPerSecond = d.roofline->bytesPerSecond;
  in.hostLinkBytesPerSecond = d.hostLink;

  OffloadWorkload &w = in.workload;
  if (!cacheType) {
    // A forward: the one step of its own tokens.
    w.singleStep = true;
    w.promptTokens = tokensPerSequence;
    w.generateTokens = 1;
    w.blockTokens = 1;
  } else {
    w.blockTokens = cacheType.getDimSize(1);
    w.promptTokens = kPromptTokens;
    w.generateTokens = kGenerateTokens;
    if (g.maxSeq > 0 && g.maxSeq < kPromptTokens + kGenerateTokens) {
      w.promptTokens = std::max<int64_t>(g.maxSeq * 2 / 3, 1);
      w.generateTokens = std::max<int64_t>(g.maxSeq - w.promptTokens, 1);
    }
  }
  return g;
}

DictionaryAttr candidateAttr(Builder &b, const OffloadCandidate &c) {
  return b.getDictionaryAttr({
      b.getNamedAttr("pinned_layers", b.getI64IntegerAttr(c.pinnedLayers)),
      b.getNamedAttr("prefetch", b.getI64IntegerAttr(c.prefetch)),
      b.getNamedAttr("batch", b.getI64IntegerAttr(c.batch)),
      b.getNamedAttr("fits", b.getBoolAttr(c.fits)),
      b.getNamedAttr("predicted_tokens_per_s",
                     b.getF64FloatAttr(c.tokensPerSecond)),
      b.getNamedAttr("device_bytes", b.getI64IntegerAttr(c.deviceBytes)),
      b.getNamedAttr("prefill_s", b.getF64FloatAttr(c.prefillSeconds)),
      b.getNamedAttr("decode_s", b.getF64FloatAttr(c.decodeSeconds)),
  });
}

} // namespace

FailureOr<OffloadPrediction>
mlir::mw::predictOffload(func::FuncOp f, const OffloadAutoOptions &o,
                         llvm::raw_ostream *table) {
  if (o.maxBatch < 0)
    return f.emitError() << "mw-offload: max-batch must be positive or 0 (as "
                            "many as fit), got "
                         << o.maxBatch;
  FailureOr<DeviceRates> device = resolveDevice(f, o);
  if (failed(device))
    return failure();
  FailureOr<Gathered> g = gather(f, *device);
  if (failed(g))
    return failure();
  const OffloadModelInputs &in = g->in;
  OffloadSearchOptions search;
  search.maxPrefetch = kMaxPrefetch;
  search.maxBatch = o.maxBatch;
  OffloadSearchResult r = searchOffload(in, search);

  std::string text;
  llvm::raw_string_ostream os(text);
  const OffloadWorkload &w = in.workload;
  os << "mw-offload auto: @" << f.getSymName() << " on " << device->name
     << " (" << formatBothBytes(in.deviceBytes)
     << (o.weights == "nvme" ? ", weights from NVMe at " : ", host link ")
     << llvm::formatv("{0:f1}", in.hostLinkBytesPerSecond / 1e9)
     << " GB/s), " << in.layers.size() << " layers of "
     << formatBothBytes(in.layers.front().weightBytes) << ", resident "
     << formatBothBytes(in.residentBytes) << "\n";
  if (w.singleStep)
    os << "  workload: one step of " << w.promptTokens
       << " tokens per sequence; tokens/s counts the tokens it processes\n";
  else
    os << "  workload: prefill " << w.promptTokens << " tokens, generate "
       << w.generateTokens << " per sequence (KV "
       << formatBothBytes(in.kvBytesPerToken) << " per token)\n";
  os << formatOffloadTable(r);

  Builder b(f.getContext());
  SmallVector<Attribute> candidates;
  for (const OffloadCandidate &c : r.candidates)
    candidates.push_back(candidateAttr(b, c));
  f->setAttr("mw.offload.candidates", b.getArrayAttr(candidates));
  auto flush = [&] {
    if (table) {
      *table << text;
      table->flush();
    }
  };
  if (r.choice < 0) {
    flush();
    const OffloadCandidate &least = r.candidates.front();
    return f.emitError() << "mw-offload: auto: no offload of @"
                         << f.getSymName() << " fits " << device->name << " ("
                         << formatBothBytes(in.deviceBytes)
                         << "): streaming every layer with one slot, one "
                            "sequence needs "
                         << formatBothBytes(least.deviceBytes);
  }
  const OffloadCandidate &c = r.candidates[r.choice];
  f->setAttr("mw.offload.choice", candidateAttr(b, c));
  os << llvm::formatv("  chosen: pinned-layers={0} prefetch={1} batch={2}: "
                      "{3:f2} tokens/s predicted\n",
                      c.pinnedLayers, c.prefetch, c.batch, c.tokensPerSecond);
  flush();
  OffloadPrediction p;
  p.decision.pinnedLayers = c.pinnedLayers;
  p.decision.prefetch = c.prefetch;
  p.decision.batch = c.batch;
  p.tokensPerSecond = c.tokensPerSecond;
  p.deviceBytes = c.deviceBytes;
  p.deviceMemoryBytes = in.deviceBytes;
  p.residentBytes = in.residentBytes;
  for (const OffloadLayer &l : in.layers)
    p.layerBytes += l.weightBytes;
  p.layers = static_cast<int64_t>(in.layers.size());
  p.promptTokens = w.promptTokens;
  p.generateTokens = w.generateTokens;
  int64_t pinnedBytes = 0;
  for (int64_t j = 0; j < c.pinnedLayers; ++j)
    pinnedBytes += in.layers[j].weightBytes;
  p.streamedBytes = p.layerBytes - pinnedBytes;
  // At batch 0 the device bytes are the resident, pinned and slot bytes.
  p.slotBytes = offloadDeviceBytes(in, c.pinnedLayers, c.prefetch, 0) -
                in.residentBytes - pinnedBytes;
  return p;
}

FailureOr<OffloadDecision> mlir::mw::chooseOffload(func::FuncOp f,
                                                   const OffloadAutoOptions &o) {
  FailureOr<OffloadPrediction> p = predictOffload(f, o, &llvm::errs());
  if (failed(p))
    return failure();
  return p->decision;
}
