//===- MwRemat.cpp - --mw-remat -------------------------------------------===//
//
// Gradient checkpointing on the tensor-level training step: every forward
// value the backward pass uses is either kept (alive from the forward pass to
// its last backward use) or dropped and recomputed by cloning its forward
// recompute chain right before its first backward use. Strategies choose the
// kept set; with a budget, the peak of each candidate program is measured by
// running the real pipeline (--mw-bufferize, --mw-static-arena) on a copy of
// the module, so the budget holds for the arena the runtime will allocate,
// not for a proxy. docs/remat.md has the design and the numbers.
//
//===----------------------------------------------------------------------===//

#include "memwall/Analysis/BufferLiveness.h"
#include "memwall/Dialect/MW/IR/MWOps.h"
#include "memwall/Dialect/MW/Transforms/BufferizableOpInterfaceImpl.h"
#include "memwall/Dialect/MW/Transforms/Passes.h"
#include "memwall/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <functional>

#define DEBUG_TYPE "mw-remat"

namespace mlir::mw {
#define GEN_PASS_DEF_MWREMAT
#include "memwall/Dialect/MW/Transforms/Passes.h.inc"
} // namespace mlir::mw

using namespace mlir;
using namespace mlir::mw;

namespace {

//===----------------------------------------------------------------------===//
// Targets and costs
//===----------------------------------------------------------------------===//

/// A roofline: peak dense compute and memory bandwidth.
struct Target {
  StringRef name;
  double flopsPerSecond;
  double bytesPerSecond;
};

/// DESIGN.md decision 10. h200/h100: dense bf16 989 TFLOP/s, HBM3e 4.8 TB/s
/// and HBM3 3.35 TB/s; a100: 312 TFLOP/s, 2.0 TB/s; cpu: a nominal server
/// socket (1 TFLOP/s, 100 GB/s).
constexpr Target kTargets[] = {{"h200", 989e12, 4.8e12},
                               {"h100", 989e12, 3.35e12},
                               {"a100", 312e12, 2.0e12},
                               {"cpu", 1e12, 1e11}};

const Target *findTarget(StringRef name) {
  for (const Target &t : kTargets)
    if (t.name == name)
      return &t;
  return nullptr;
}

int64_t opFlops(Operation *op) {
  if (auto cost = dyn_cast<CostOpInterface>(op))
    return cost.getFlops();
  return 0;
}

/// Seconds `op` takes on `target` by the roofline: the slower of compute and
/// memory traffic.
double opSeconds(Operation *op, const Target &target) {
  auto cost = dyn_cast<CostOpInterface>(op);
  if (!cost)
    return 0.0;
  double compute = static_cast<double>(cost.getFlops()) / target.flopsPerSecond;
  double memory =
      static_cast<double>(cost.getBytesRead() + cost.getBytesWritten()) /
      target.bytesPerSecond;
  return std::max(compute, memory);
}

/// Bytes of a statically shaped tensor or memref type.
int64_t shapedBytes(Type type) { return mw::detail::tensorBytes(type); }

//===----------------------------------------------------------------------===//
// Budgets
//===----------------------------------------------------------------------===//

/// A parsed `budget=`: bytes, or a percentage of the save-all peak.
struct Budget {
  bool isPercent = false;
  double percent = 0.0;
  int64_t bytes = 0;
};

/// Parses `123`, `500MB`, `1.5GiB`, `60%`; nullopt when malformed.
std::optional<Budget> parseBudget(StringRef text) {
  text = text.trim();
  if (text.empty())
    return std::nullopt;
  Budget b;
  if (text.consume_back("%")) {
    double pct;
    if (text.trim().getAsDouble(pct) || !(pct > 0.0) || std::isinf(pct))
      return std::nullopt;
    b.isPercent = true;
    b.percent = pct;
    return b;
  }
  size_t split = 0;
  while (split < text.size() &&
         (llvm::isDigit(text[split]) || text[split] == '.'))
    ++split;
  StringRef number = text.take_front(split);
  StringRef unit = text.drop_front(split).trim();
  double value;
  if (number.empty() || number.getAsDouble(value) || !(value > 0.0))
    return std::nullopt;
  static const std::pair<StringRef, double> kUnits[] = {
      {"", 1.0},      {"B", 1.0},     {"KB", 1e3},
      {"MB", 1e6},    {"GB", 1e9},    {"TB", 1e12},
      {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0},
      {"TiB", 1099511627776.0}};
  for (auto [name, scale] : kUnits) {
    if (!unit.equals_insensitive(name))
      continue;
    double bytes = std::floor(value * scale);
    if (!(bytes >= 1.0) || bytes > 9.2e18)
      return std::nullopt;
    b.bytes = static_cast<int64_t>(bytes);
    return b;
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// The step: forward ops, saved activations
//===----------------------------------------------------------------------===//

/// The loss of a step: the result named `loss`, else the first rank-0 float
/// result (the rule --mw-memory-report uses).
Value findLoss(func::FuncOp func) {
  Operation *ret = func.getBody().front().getTerminator();
  Value best;
  for (unsigned i = 0, e = ret->getNumOperands(); i < e; ++i) {
    auto type = dyn_cast<RankedTensorType>(ret->getOperand(i).getType());
    if (!type || type.getRank() != 0 || !isa<FloatType>(type.getElementType()))
      continue;
    auto name = func.getResultAttrOfType<StringAttr>(i, MWDialect::kNameAttrName);
    if (!best || (name && name.getValue() == "loss"))
      best = ret->getOperand(i);
  }
  return best;
}

/// The name of the location `loc`: its NameLoc's, looking through fused and
/// call-site locations.
std::string locName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto call = dyn_cast<CallSiteLoc>(loc))
    return locName(call.getCallee());
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations()) {
      std::string s = locName(inner);
      if (!s.empty())
        return s;
    }
  return "";
}

/// The transformer block of a location name and what follows it: the prefix
/// up to the first all-digit component ("h.0.attn" -> "h.0", "attn";
/// "model.layers.3.mlp" -> "model.layers.3", "mlp").
std::optional<std::pair<std::string, std::string>>
splitBlock(StringRef name) {
  SmallVector<StringRef> parts;
  name.split(parts, '.');
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].empty() || !llvm::all_of(parts[i], llvm::isDigit))
      continue;
    std::string block = llvm::join(ArrayRef(parts).take_front(i + 1), ".");
    std::string rest = llvm::join(ArrayRef(parts).drop_front(i + 1), ".");
    return std::make_pair(block, rest);
  }
  return std::nullopt;
}

/// The forward/backward split of a step and its saved activations. Built
/// from the IR alone, so it can be rebuilt on a copy of the module and give
/// the same lists in the same order.
struct StepInfo {
  func::FuncOp func;
  Block *body = nullptr;
  Value loss;
  /// Ops the loss depends on (the forward pass), and their block order.
  llvm::DenseSet<Operation *> forward;
  SmallVector<Operation *> forwardOps;
  llvm::DenseMap<Operation *, int64_t> position;
  /// Forward values with a backward user, in op order.
  SmallVector<Value> saved;
  /// Saved values that must stay: returned or defined by an op with effects.
  llvm::BitVector forced;

  LogicalResult build(func::FuncOp f);
  /// The op of the entry block that holds `op` (a use inside a region
  /// counts at its top-level op).
  Operation *topLevel(Operation *op) const {
    return body->findAncestorOpInBlock(*op);
  }
  bool isBackwardUse(OpOperand &use) const {
    Operation *user = topLevel(use.getOwner());
    return user && !forward.contains(user) &&
           !user->hasTrait<mlir::OpTrait::IsTerminator>();
  }
};

LogicalResult StepInfo::build(func::FuncOp f) {
  func = f;
  if (!f.getBody().hasOneBlock())
    return mlir::emitError(f.getLoc(), "mw-remat: the training step must have one block");
  body = &f.getBody().front();
  loss = findLoss(f);
  if (!loss || !loss.getDefiningOp())
    return mlir::emitError(f.getLoc()) << "mw-remat: @" << f.getSymName()
                         << " returns no loss computed in it (a rank-0 float "
                            "result, preferably named 'loss')";
  SmallVector<Operation *> work{loss.getDefiningOp()};
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (op->getBlock() != body || !forward.insert(op).second)
      continue;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp())
        work.push_back(def);
  }
  int64_t pos = 0;
  for (Operation &op : *body) {
    position[&op] = pos++;
    if (!forward.contains(&op))
      continue;
    forwardOps.push_back(&op);
    for (Value v : op.getResults()) {
      bool backwardUse = false, returned = false;
      for (OpOperand &use : v.getUses()) {
        backwardUse |= isBackwardUse(use);
        returned |= use.getOwner()->hasTrait<mlir::OpTrait::IsTerminator>();
      }
      if (!backwardUse)
        continue;
      saved.push_back(v);
      forced.push_back(returned || !isMemoryEffectFree(&op));
    }
  }
  if (saved.empty())
    return mlir::emitError(f.getLoc())
           << "mw-remat: @" << f.getSymName()
           << " has no backward pass: no op outside the forward pass (the "
              "ops the loss depends on) uses a forward value; run "
              "--mw-autodiff first";
  return success();
}

//===----------------------------------------------------------------------===//
// The rewrite
//===----------------------------------------------------------------------===//

struct RematStats {
  int64_t kept = 0;
  int64_t dropped = 0;
  int64_t clonedOps = 0;
  int64_t recomputeFlops = 0;
  double recomputeSeconds = 0.0;
};

/// Keeps the saved values whose bit is set in `keep` (and the forced ones)
/// and recomputes the others. `share`: a dropped value recomputed inside
/// another value's chain serves its own backward uses too (a checkpointed
/// segment is recomputed once, as torch.utils.checkpoint does); without it
/// only clones still live anyway are reused.
RematStats rematerialize(const StepInfo &info, const llvm::BitVector &keep,
                         bool share, const Target &target) {
  RematStats stats;
  llvm::DenseSet<Value> kept;
  struct Dropped {
    Value value;
    Operation *firstUse;
    int64_t first, last;
    SmallVector<OpOperand *> uses;
  };
  SmallVector<Dropped> dropped;
  llvm::DenseMap<Value, int64_t> droppedIndex;
  for (auto [i, v] : llvm::enumerate(info.saved)) {
    if (keep.test(i) || info.forced.test(i)) {
      kept.insert(v);
      ++stats.kept;
      continue;
    }
    Dropped d{v, nullptr, INT64_MAX, -1, {}};
    for (OpOperand &use : v.getUses()) {
      if (!info.isBackwardUse(use))
        continue;
      Operation *user = info.topLevel(use.getOwner());
      int64_t p = info.position.lookup(user);
      if (p < d.first) {
        d.first = p;
        d.firstUse = user;
      }
      d.last = std::max(d.last, p);
      d.uses.push_back(&use);
    }
    droppedIndex[v] = dropped.size();
    dropped.push_back(std::move(d));
  }
  stats.dropped = dropped.size();
  std::stable_sort(dropped.begin(), dropped.end(),
                   [](const Dropped &a, const Dropped &b) {
                     return a.first < b.first;
                   });
  llvm::DenseMap<Value, int64_t> lastUse;
  for (const Dropped &d : dropped)
    lastUse[d.value] = d.last;

  /// A recomputed value and the last position where it is live anyway.
  struct Available {
    Value clone;
    int64_t liveUntil;
  };
  llvm::DenseMap<Value, Available> available;
  llvm::DenseSet<Value> done;
  func::FuncOp func = info.func;
  OpBuilder builder(func.getContext());

  // Recomputes `v` at position `p` (the builder's insertion point).
  std::function<Value(Value, int64_t, Value)> materialize =
      [&](Value v, int64_t p, Value wanted) -> Value {
    Operation *def = v.getDefiningOp();
    if (!def || !info.forward.contains(def) || kept.contains(v))
      return v;
    auto it = available.find(v);
    if (it != available.end() && it->second.liveUntil >= p)
      return it->second.clone;
    IRMapping mapping;
    for (Value operand : def->getOperands())
      mapping.map(operand, materialize(operand, p, wanted));
    Operation *clone = builder.clone(*def, mapping);
    clone->setAttr("mw.recompute", builder.getUnitAttr());
    ++stats.clonedOps;
    stats.recomputeFlops += opFlops(clone);
    stats.recomputeSeconds += opSeconds(clone, target);
    for (auto [orig, copy] :
         llvm::zip_equal(def->getResults(), clone->getResults())) {
      auto existing = available.find(orig);
      if (existing != available.end() && existing->second.liveUntil >= p)
        continue;
      int64_t liveUntil = p;
      if (lastUse.count(orig) && !done.contains(orig) &&
          (share || orig == wanted))
        liveUntil = lastUse[orig];
      available[orig] = {copy, liveUntil};
    }
    return clone->getResult(cast<OpResult>(v).getResultNumber());
  };

  for (Dropped &d : dropped) {
    builder.setInsertionPoint(d.firstUse);
    Value r = materialize(d.value, d.first, d.value);
    available[d.value] = {r, d.last};
    done.insert(d.value);
    for (OpOperand *use : d.uses)
      use->set(r);
  }
  return stats;
}

//===----------------------------------------------------------------------===//
// Strategies
//===----------------------------------------------------------------------===//

/// Forward values that are not part of the activation chain: results of ops
/// on function arguments alone (parameter casts, micro-batch slices, the
/// embedding gather) and values computed from parameters, state and
/// constants only. They are cheap to recompute and must not hide the chain's
/// cuts (a parameter cast at the top of the step lives to its last use).
llvm::DenseSet<Value> argumentOnlyValues(const StepInfo &info) {
  llvm::DenseSet<Value> paramOnly, result;
  func::FuncOp func = info.func;
  auto isState = [&](Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg)
      return paramOnly.contains(v);
    auto role = func.getArgAttrOfType<RoleAttr>(arg.getArgNumber(),
                                                MWDialect::kRoleAttrName);
    return role && (role.getValue() == Role::param ||
                    role.getValue() == Role::optimizer_state);
  };
  for (Operation *op : info.forwardOps) {
    if (llvm::all_of(op->getOperands(), isState))
      paramOnly.insert(op->result_begin(), op->result_end());
    if (paramOnly.contains(op->getResult(0)) ||
        llvm::all_of(op->getOperands(),
                     [](Value v) { return isa<BlockArgument>(v); }))
      result.insert(op->result_begin(), op->result_end());
  }
  return result;
}

/// Chen et al.'s candidates: saved results of forward ops that cut the
/// forward chain (no value defined before the op is used after it, arguments
/// and argument-only values aside).
SmallVector<unsigned> articulationCandidates(const StepInfo &info) {
  llvm::DenseSet<Value> argOnly = argumentOnlyValues(info);
  llvm::DenseMap<Value, int64_t> lastForwardUse;
  for (Operation *op : info.forwardOps)
    for (Value v : op->getOperands())
      lastForwardUse[v] =
          std::max(lastForwardUse.lookup(v), info.position.lookup(op));
  llvm::DenseSet<Operation *> cuts;
  int64_t maxLive = -1;
  for (Operation *op : info.forwardOps) {
    int64_t pos = info.position.lookup(op);
    if (maxLive <= pos)
      cuts.insert(op);
    for (Value r : op->getResults())
      if (!argOnly.contains(r))
        maxLive = std::max(maxLive, lastForwardUse.lookup(r));
  }
  SmallVector<unsigned> candidates;
  for (auto [i, v] : llvm::enumerate(info.saved))
    if (!argOnly.contains(v) && cuts.contains(v.getDefiningOp()))
      candidates.push_back(i);
  return candidates;
}

/// The block of each saved value's defining op (empty outside blocks), and
/// the block outputs: block values used by a forward op of another block or
/// outside any block.
struct BlockInfo {
  SmallVector<std::string> blockOf, regionOf;
  SmallVector<std::string> blocks; // in order of first appearance
  llvm::BitVector isBlockOutput, isRegionOutput;
};

BlockInfo computeBlocks(const StepInfo &info) {
  BlockInfo bi;
  llvm::DenseMap<Operation *, std::pair<std::string, std::string>> opBlock;
  llvm::StringSet<> seen;
  for (Operation *op : info.forwardOps) {
    auto split = splitBlock(locName(op->getLoc()));
    if (!split)
      continue;
    std::string region = split->second.substr(0, split->second.find('.'));
    opBlock[op] = {split->first, split->first + "." + region};
    if (seen.insert(split->first).second)
      bi.blocks.push_back(split->first);
  }
  for (Value v : info.saved) {
    auto it = opBlock.find(v.getDefiningOp());
    std::string block = it == opBlock.end() ? "" : it->second.first;
    std::string region = it == opBlock.end() ? "" : it->second.second;
    bool blockOut = false, regionOut = false;
    for (Operation *user : v.getUsers()) {
      if (!info.forward.contains(user))
        continue;
      auto u = opBlock.find(user);
      std::string ub = u == opBlock.end() ? "" : u->second.first;
      std::string ur = u == opBlock.end() ? "" : u->second.second;
      blockOut |= ub != block;
      regionOut |= ur != region;
    }
    bi.blockOf.push_back(block);
    bi.regionOf.push_back(region);
    bi.isBlockOutput.push_back(blockOut);
    bi.isRegionOutput.push_back(regionOut);
  }
  return bi;
}

/// True when a region name ("attn", "self_attn", "attention") is attention.
bool isAttentionRegion(StringRef region) {
  StringRef last = region.rsplit('.').second.empty() ? region
                                                     : region.rsplit('.').second;
  return last.ends_with("attn") || last.ends_with("attention");
}

//===----------------------------------------------------------------------===//
// Measuring
//===----------------------------------------------------------------------===//

struct LiveAtPeak {
  std::string name;
  int64_t bytes;
  Location loc;
};

struct Measurement {
  int64_t arena = 0;
  int64_t persistent = 0;
  int64_t peak() const { return arena + persistent; }
  RematStats stats;
  SmallVector<LiveAtPeak> live;
};

struct MwRematPass : public mw::impl::MwRematBase<MwRematPass> {
  using MwRematBase::MwRematBase;

  void runOnOperation() override;

private:
  /// Applies `keep` to a copy of the module and plans it with the real
  /// pipeline; failure after a diagnostic.
  FailureOr<Measurement> measure(const llvm::BitVector &keep, bool share,
                                 bool wantLive);
  const Target *tgt = nullptr;
};

FailureOr<Measurement> MwRematPass::measure(const llvm::BitVector &keep,
                                            bool share, bool wantLive) {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  OwningOpRef<ModuleOp> copy(cast<ModuleOp>(module->clone()));
  // Plan the step alone: other functions (the forward function) would only
  // cost time.
  for (auto f : llvm::make_early_inc_range(copy->getOps<func::FuncOp>()))
    if (f.getSymName() != function && SymbolTable::symbolKnownUseEmpty(f, *copy))
      f.erase();
  auto f = copy->lookupSymbol<func::FuncOp>(function);
  StepInfo info;
  if (failed(info.build(f)))
    return failure();
  Measurement m;
  m.stats = rematerialize(info, keep, share, *tgt);

  // The nested pipeline's remarks (buffers not planned) are noise here.
  ScopedDiagnosticHandler quiet(ctx, [](Diagnostic &d) {
    return success(d.getSeverity() == DiagnosticSeverity::Remark);
  });
  PassManager bufferize(ctx, ModuleOp::getOperationName());
  buildBufferizePipeline(bufferize);
  if (failed(bufferize.run(*copy)))
    return mlir::emitError(module.getLoc(), "mw-remat: bufferizing the rematerialized step "
                            "failed"),
           failure();
  {
    BufferLiveness liveness(f);
    for (BlockArgument arg : f.getArguments())
      m.persistent += shapedBytes(arg.getType());
    std::vector<int64_t> liveBytes(liveness.getNumPositions() + 1, 0);
    for (const LiveBuffer &b : liveness.getBuffers()) {
      if (!b.isTransient()) {
        m.persistent += b.sizeInBytes;
        continue;
      }
      liveBytes[b.start] += b.sizeInBytes;
      liveBytes[b.end] -= b.sizeInBytes;
    }
    if (wantLive && !liveBytes.empty()) {
      for (size_t p = 1; p < liveBytes.size(); ++p)
        liveBytes[p] += liveBytes[p - 1];
      int64_t peakPos =
          std::max_element(liveBytes.begin(), liveBytes.end()) -
          liveBytes.begin();
      for (const LiveBuffer &b : liveness.getBuffers())
        if (b.isTransient() && b.start <= peakPos && peakPos < b.end)
          m.live.push_back({b.name, static_cast<int64_t>(b.sizeInBytes),
                            b.definingOp->getLoc()});
      std::stable_sort(m.live.begin(), m.live.end(),
                       [](const LiveAtPeak &a, const LiveAtPeak &b) {
                         return a.bytes > b.bytes;
                       });
    }
  }
  PassManager plan(ctx, ModuleOp::getOperationName());
  plan.addPass(createMwStaticArena());
  if (failed(plan.run(*copy)))
    return mlir::emitError(module.getLoc(), "mw-remat: planning the rematerialized step "
                            "failed"),
           failure();
  if (auto size = f->getAttrOfType<IntegerAttr>("mw.arena_size"))
    m.arena = size.getInt();
  return m;
}

std::string formatBytes(int64_t bytes) {
  std::string s = std::to_string(bytes) + " B";
  if (bytes >= (1 << 20))
    s += llvm::formatv(" ({0:F2} MiB)", bytes / 1048576.0).str();
  else if (bytes >= 1024)
    s += llvm::formatv(" ({0:F2} KiB)", bytes / 1024.0).str();
  return s;
}

void MwRematPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto fail = [&](const Twine &msg) {
    mlir::emitError(module.getLoc()) << "mw-remat: " << msg;
    signalPassFailure();
  };
  static const char *kStrategies[] = {"auto",      "none", "all",    "every-k",
                                      "sqrt",      "selective", "optimal"};
  if (!llvm::is_contained(kStrategies, StringRef(strategy)))
    return fail("unknown strategy '" + strategy +
                "' (expected auto, none, all, every-k, sqrt, selective or "
                "optimal)");
  tgt = findTarget(target);
  if (!tgt)
    return fail("unknown target '" + target +
                "' (expected h200, h100, a100 or cpu)");
  if (k < 1)
    return fail("k must be >= 1, got " + Twine(k));
  std::optional<Budget> parsedBudget;
  if (!budget.empty()) {
    parsedBudget = parseBudget(budget);
    if (!parsedBudget)
      return fail("malformed budget '" + budget +
                  "' (expected bytes with an optional unit B, KB, MB, GB, TB, "
                  "KiB, MiB, GiB, TiB, or a percentage like 60%)");
    if (strategy != "auto")
      return fail("a budget needs strategy=auto (strategy=" + strategy +
                  " takes no budget)");
  }
  if (strategy == "optimal")
    return fail("strategy=optimal (Checkmate's MILP) is not implemented yet; "
                "use auto with a budget");

  auto func = module.lookupSymbol<func::FuncOp>(function);
  if (!func || func.isExternal())
    return fail("no function @" + function + " with a body (set function=NAME)");
  StepInfo info;
  if (failed(info.build(func)))
    return signalPassFailure();
  unsigned n = info.saved.size();

  // The kept set of each fixed strategy.
  llvm::BitVector keep(n, true);
  bool share = true;
  if (strategy == "all") {
    keep.reset();
    share = false;
  } else if (strategy == "every-k" || strategy == "selective") {
    BlockInfo bi = computeBlocks(info);
    if (bi.blocks.empty())
      return fail("strategy=" + strategy +
                  " needs transformer blocks, named by op locations with a "
                  "layer index (loc(\"h.0.attn\"), loc(\"model.layers.0.mlp\")); "
                  "@" + function + " has none");
    llvm::StringMap<unsigned> blockIndex;
    for (auto [i, b] : llvm::enumerate(bi.blocks))
      blockIndex[b] = i;
    for (unsigned i = 0; i < n; ++i) {
      if (bi.blockOf[i].empty())
        continue; // outside blocks: embeddings, final norm, head, loss
      if (strategy == "every-k") {
        unsigned idx = blockIndex[bi.blockOf[i]];
        keep[i] = bi.isBlockOutput[i] && (idx + 1) % k == 0;
      } else {
        StringRef region = bi.regionOf[i];
        if (isAttentionRegion(region))
          keep[i] = bi.isRegionOutput[i];
      }
    }
  } else if (strategy == "sqrt") {
    SmallVector<unsigned> candidates = articulationCandidates(info);
    keep.reset();
    unsigned step = std::max<unsigned>(
        1, static_cast<unsigned>(std::ceil(std::sqrt(candidates.size()))));
    for (auto [j, i] : llvm::enumerate(candidates))
      if ((j + 1) % step == 0)
        keep.set(i);
  }

  if (strategy == "auto" && parsedBudget) {
    // Greedy: drop the values with the most bytes per recompute second
    // first; the smallest prefix of that order whose measured peak fits.
    FailureOr<Measurement> saveAll = measure(llvm::BitVector(n, true), false,
                                             false);
    if (failed(saveAll))
      return signalPassFailure();
    int64_t budgetBytes =
        parsedBudget->isPercent
            ? static_cast<int64_t>(std::floor(saveAll->peak() *
                                              parsedBudget->percent / 100.0))
            : parsedBudget->bytes;
    if (budgetBytes < saveAll->persistent) {
      mlir::emitError(func.getLoc()) << "mw-remat: budget " << formatBytes(budgetBytes)
                       << " is below the persistent state of @"
                       << func.getSymName() << ", "
                       << formatBytes(saveAll->persistent)
                       << " (parameters, optimizer state, inputs, outputs), "
                          "which no rematerialization can reduce";
      return signalPassFailure();
    }
    SmallVector<unsigned> order;
    SmallVector<double> score(n, 0.0);
    for (unsigned i = 0; i < n; ++i) {
      if (info.forced.test(i))
        continue;
      Value v = info.saved[i];
      order.push_back(i);
      score[i] = shapedBytes(v.getType()) /
                 (opSeconds(v.getDefiningOp(), *tgt) + 1e-12);
    }
    std::stable_sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
      return score[a] > score[b];
    });
    auto prefixKeep = [&](size_t m) {
      llvm::BitVector kp(n, true);
      for (size_t j = 0; j < m; ++j)
        kp.reset(order[j]);
      return kp;
    };
    Measurement best = *saveAll;
    if (saveAll->peak() > budgetBytes) {
      FailureOr<Measurement> minimal =
          measure(prefixKeep(order.size()), false, true);
      if (failed(minimal))
        return signalPassFailure();
      if (minimal->peak() > budgetBytes) {
        const Measurement &low =
            minimal->peak() <= saveAll->peak() ? *minimal : *saveAll;
        InFlightDiagnostic diag =
            mlir::emitError(func.getLoc())
            << "mw-remat: budget " << formatBytes(budgetBytes)
            << " is unreachable for @" << function
            << ": the smallest planned peak found is " << formatBytes(low.peak())
            << " (arena " << formatBytes(low.arena) << " + persistent "
            << formatBytes(low.persistent) << "); save-all peak "
            << formatBytes(saveAll->peak());
        for (const LiveAtPeak &l : minimal->live)
          diag.attachNote(l.loc) << "live at the peak: '" << l.name << "', "
                                 << formatBytes(l.bytes);
        return signalPassFailure();
      }
      // Binary search for the shortest prefix that fits (the peak is not
      // strictly monotone in the prefix; the search keeps a fitting one).
      size_t lo = 0, hi = order.size();
      best = *minimal;
      while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        FailureOr<Measurement> m = measure(prefixKeep(mid), false, false);
        if (failed(m))
          return signalPassFailure();
        if (m->peak() <= budgetBytes) {
          hi = mid;
          best = *m;
        } else {
          lo = mid;
        }
      }
      keep = prefixKeep(hi);
    }
    share = false;
    func->setAttr("mw.remat.budget_bytes",
                  Builder(&getContext()).getI64IntegerAttr(budgetBytes));
    func->setAttr("mw.remat.save_all_peak_bytes",
                  Builder(&getContext()).getI64IntegerAttr(saveAll->peak()));
    func->setAttr("mw.remat.peak_bytes",
                  Builder(&getContext()).getI64IntegerAttr(best.peak()));
  }

  // Rewrite the real step.
  int64_t stepFlops = 0;
  for (Operation &op : func.getBody().front())
    stepFlops += opFlops(&op);
  RematStats stats = rematerialize(info, keep, share, *tgt);
  numKept += stats.kept;
  numDropped += stats.dropped;
  numCloned += stats.clonedOps;

  // Bytes kept per layer: the block of the defining op's location
  // ("h.3"), else its location name ("lm_head"), in forward order.
  int64_t savedBytes = 0;
  llvm::MapVector<StringRef, int64_t> keptByLayer;
  llvm::StringSet<> layerNames;
  for (auto [i, v] : llvm::enumerate(info.saved)) {
    std::string name = locName(v.getDefiningOp()->getLoc());
    if (auto split = splitBlock(name))
      name = split->first;
    if (name.empty())
      name = "unnamed";
    StringRef layer = layerNames.insert(name).first->getKey();
    int64_t bytes = 0;
    if (keep.test(i) || info.forced.test(i))
      bytes = shapedBytes(v.getType());
    savedBytes += bytes;
    keptByLayer[layer] += bytes;
  }
  Builder b(&getContext());
  SmallVector<NamedAttribute> layers;
  for (auto [layer, bytes] : keptByLayer)
    layers.push_back(b.getNamedAttr(layer, b.getI64IntegerAttr(bytes)));
  // A DictionaryAttr sorts its entries; an array of pairs keeps layer order.
  SmallVector<Attribute> layerList;
  for (NamedAttribute &l : layers)
    layerList.push_back(b.getArrayAttr({b.getStringAttr(l.getName().getValue()),
                                        l.getValue()}));
  func->setAttr("mw.remat.kept_bytes_by_layer", b.getArrayAttr(layerList));
  func->setAttr("mw.remat.strategy", b.getStringAttr(strategy));
  func->setAttr("mw.remat.saved_activation_bytes",
                b.getI64IntegerAttr(savedBytes));
  func->setAttr("mw.remat.recompute_flops",
                b.getI64IntegerAttr(stats.recomputeFlops));
  func->setAttr("mw.remat.step_flops", b.getI64IntegerAttr(stepFlops));
  func->setAttr("mw.remat.recompute_seconds",
                b.getF64FloatAttr(stats.recomputeSeconds));
  LLVM_DEBUG(llvm::dbgs() << "mw-remat @" << function << " " << strategy
                          << ": kept " << stats.kept << ", dropped "
                          << stats.dropped << ", cloned " << stats.clonedOps
                          << " ops, +" << stats.recomputeFlops << " FLOPs\n");
}

} // namespace
