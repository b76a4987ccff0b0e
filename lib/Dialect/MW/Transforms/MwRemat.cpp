//===- MwRemat.cpp - --mw-remat -------------------------------------------===//
//
// Gradient checkpointing on the tensor-level training step: every forward
// value the backward pass uses is either kept (alive from the forward pass to
// its last backward use) or dropped and recomputed by cloning its forward
// recompute chain right before its first backward use. Strategies choose the
// kept set, one function each. Candidates are planned and simulated on an
// integer copy of the step (RematGraph.h) with the arena's rules; the chosen
// program's peak is then measured by running the real pipeline
// (--mw-bufferize, --mw-static-arena) on a copy of the module, so a budget
// holds for the arena the runtime will allocate, not for a proxy. The step's
// structure (loss, saved activations, layers) comes from
// memwall/Analysis/StepStructure.h, recompute is priced by
// memwall/Analysis/Targets.h, and strategy=optimal's MILP lives in
// RematMilp.cpp. docs/remat.md has the design and the numbers.
//
//===----------------------------------------------------------------------===//

#include "RematGraph.h"
#include "RematMilp.h"
#include "RematRevolve.h"

#include "memwall/Analysis/BufferLiveness.h"
#include "memwall/Analysis/StepStructure.h"
#include "memwall/Analysis/Targets.h"
#include "memwall/Dialect/MW/IR/MWOps.h"
#include "memwall/Dialect/MW/Transforms/BufferizableOpInterfaceImpl.h"
#include "memwall/Analysis/Units.h"
#include "memwall/Dialect/MW/Transforms/Passes.h"
#include "memwall/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <climits>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <numeric>

#define DEBUG_TYPE "mw-remat"

namespace mlir::mw {
#define GEN_PASS_DEF_MWREMAT
#include "memwall/Dialect/MW/Transforms/Passes.h.inc"
} // namespace mlir::mw

using namespace mlir;
using namespace mlir::mw;
using namespace mlir::mw::remat;
namespace planning = memwall::planning;

namespace {

//===----------------------------------------------------------------------===//
// Budgets
//===----------------------------------------------------------------------===//

/// A parsed `budget=`: bytes, a percentage of the save-all peak, or the
/// target's device memory (`auto`).
struct Budget {
  bool isPercent = false, isDevice = false;
  double percent = 0.0;
  int64_t bytes = 0;
};

/// Parses `123`, `500MB`, `1.5GiB`, `60%`, `auto`; nullopt when malformed.
std::optional<Budget> parseBudget(StringRef text) {
  text = text.trim();
  if (text.empty())
    return std::nullopt;
  Budget b;
  if (text == "auto") {
    b.isDevice = true;
    return b;
  }
  if (text.consume_back("%")) {
    double pct;
    if (text.trim().getAsDouble(pct) || !(pct > 0.0) || std::isinf(pct))
      return std::nullopt;
    b.isPercent = true;
    b.percent = pct;
    return b;
  }
  std::optional<int64_t> bytes = parseByteSize(text);
  if (!bytes)
    return std::nullopt;
  b.bytes = *bytes;
  return b;
}

//===----------------------------------------------------------------------===//
// Strategies
//===----------------------------------------------------------------------===//

/// Forward values that are not part of the activation chain: results of ops
/// on function arguments alone (parameter casts, micro-batch slices, the
/// embedding gather) and values computed from parameters, state and
/// constants only. They are cheap to recompute and must not hide the chain's
/// cuts (a parameter cast at the top of the step lives to its last use).
llvm::DenseSet<Value> argumentOnlyValues(const StepStructure &info) {
  llvm::DenseSet<Value> paramOnly, result;
  FunctionOpInterface func = info.func;
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
SmallVector<unsigned> articulationCandidates(const StepStructure &info) {
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

BlockInfo computeBlocks(const StepStructure &info) {
  BlockInfo bi;
  llvm::DenseMap<Operation *, std::pair<std::string, std::string>> opBlock;
  llvm::StringSet<> seen;
  for (Operation *op : info.forwardOps) {
    auto split = splitLayerPath(getLayerPath(op));
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

/// Megatron-LM's core attention (Korthikanti et al. 2022, selective
/// activation recomputation): in each attention region of a block, the
/// values computed from the first matmul of two activations (the scores,
/// QK^T) up to, not including, the next matmul of two activations (the
/// context, attention over V): scaling, masking, softmax, dropout. These
/// are the sequence-squared activations; Q, K, V and the context are not
/// in the set. A fused mw.attention keeps no such values, so the set is
/// then empty.
llvm::DenseSet<Value> coreAttentionValues(const StepStructure &info) {
  llvm::DenseSet<Value> argOnly = argumentOnlyValues(info);
  auto isActivation = [&](Value v) {
    return !isa<BlockArgument>(v) && !argOnly.contains(v);
  };
  llvm::DenseSet<Value> core;
  llvm::StringSet<> scored; // attention regions whose scores were found
  for (Operation *op : info.forwardOps) {
    auto split = splitLayerPath(getLayerPath(op));
    if (!split)
      continue;
    std::string region = split->second.substr(0, split->second.find('.'));
    if (!isAttentionRegion(region))
      continue;
    std::string key = split->first + "." + region;
    bool activations = isa<MatmulOp>(op) && op->getNumOperands() == 2 &&
                       llvm::all_of(op->getOperands(), isActivation);
    bool fromCore = llvm::any_of(op->getOperands(),
                                 [&](Value v) { return core.contains(v); });
    if (activations && fromCore)
      continue; // the context: kept
    if ((activations && scored.insert(key).second) || fromCore)
      core.insert(op->result_begin(), op->result_end());
  }
  return core;
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
  SmallVector<LiveAtPeak> live;
};

/// A kept set, the plan it implies and its simulated arena.
struct Candidate {
  std::string name;
  llvm::BitVector keep;
  Sharing sharing;
  /// A plan no kept set implies (revolve's staged plans); else the plan is
  /// planRemat(keep, sharing), made again when needed.
  std::shared_ptr<const RematPlan> staged;
  int64_t flops = 0;
  double seconds = 0.0, cost = 0.0;
  int64_t simArena = 0;
  /// The saved-activation bytes it keeps (forced values included).
  int64_t savedBytes = 0;
  /// The arena the real pipeline planned, once measured.
  std::optional<int64_t> arena;
  /// The packer's arena for the simulated buffers, once packed.
  std::optional<int64_t> packed;
  int64_t effectiveArena() const {
    if (arena)
      return std::max(*arena, simArena);
    return packed ? std::max(*packed, simArena) : simArena;
  }
};

/// Whether two plans make the same clones and replacements: the same
/// rewritten program, so the same measurement.
bool samePlan(const RematPlan &a, const RematPlan &b) {
  if (a.numValues != b.numValues || a.clones.size() != b.clones.size() ||
      a.replace != b.replace || a.useReplace != b.useReplace)
    return false;
  for (auto [x, y] : llvm::zip_equal(a.clones, b.clones))
    if (x.node != y.node || x.before != y.before ||
        x.firstResult != y.firstResult || x.operands != y.operands)
      return false;
  return true;
}

/// Cheaper first: the recompute cost minimized (time, or FLOPs with
/// cost=flops), then FLOPs, then time, then the smaller arena, then the
/// earlier candidate (the order is fixed, so the choice is deterministic).
bool cheaper(const Candidate &a, const Candidate &b) {
  if (a.cost != b.cost)
    return a.cost < b.cost;
  if (a.flops != b.flops)
    return a.flops < b.flops;
  if (a.seconds != b.seconds)
    return a.seconds < b.seconds;
  return a.effectiveArena() < b.effectiveArena();
}

/// The candidates, by increasing `key`, that are cheaper than every one
/// with a smaller key (`front`), and a ladder of `key` levels: each front
/// candidate's, and 64 steps from the smallest key up to the front's last
/// (or, `toLargest`, to the largest of all candidates), sorted, unique.
void costLadder(ArrayRef<Candidate> cands, int64_t Candidate::*key,
                bool toLargest, SmallVector<unsigned> &front,
                SmallVector<int64_t> &levels) {
  SmallVector<unsigned> byKey(cands.size());
  std::iota(byKey.begin(), byKey.end(), 0u);
  std::stable_sort(byKey.begin(), byKey.end(), [&](unsigned a, unsigned b) {
    if (cands[a].*key != cands[b].*key)
      return cands[a].*key < cands[b].*key;
    return cheaper(cands[a], cands[b]);
  });
  front.clear();
  for (unsigned c : byKey)
    if (front.empty() || cheaper(cands[c], cands[front.back()]))
      front.push_back(c);
  levels.clear();
  int64_t low = cands[byKey.front()].*key;
  int64_t high = cands[toLargest ? byKey.back() : front.back()].*key;
  for (unsigned c : front)
    levels.push_back(cands[c].*key);
  for (int j = 1; j < 64; ++j)
    levels.push_back(low + (high - low) * j / 64);
  llvm::sort(levels);
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
}

/// The diagnostics of a step --mw-remat cannot work on; success when it can.
LogicalResult checkStep(const StepStructure &info) {
  FunctionOpInterface f = info.func;
  if (!info.body)
    return mlir::emitError(f.getLoc(),
                           "mw-remat: the training step must have one block");
  if (!info.hasLoss())
    return mlir::emitError(f.getLoc())
           << "mw-remat: @" << f.getName()
           << " returns no loss computed in it (a rank-0 float result, "
              "preferably named 'loss')";
  if (info.saved.empty())
    return mlir::emitError(f.getLoc())
           << "mw-remat: @" << f.getName()
           << " has no backward pass: no op outside the forward pass (the "
              "ops the loss depends on) uses a forward value; run "
              "--mw-autodiff first";
  return success();
}

//===----------------------------------------------------------------------===//
// Fixed strategies: one function each
//===----------------------------------------------------------------------===//

/// A kept set (one bit per saved activation) and which recomputed values
/// its rewrite shares.
struct KeptSet {
  llvm::BitVector keep;
  Sharing sharing{/*chains=*/true, /*segments=*/true};
};

/// none: keep every saved activation.
KeptSet keepNone(const StepStructure &info) {
  return {llvm::BitVector(info.saved.size(), true)};
}

/// all: keep none, and recompute every forward op at most once: each clone
/// serves every later backward use (Sharing::global), so the recompute is
/// one forward (what the backward reads of it), the least any plan keeping
/// nothing pays (saved-budget=0's optimum). Its clones stay alive to their
/// last use, so its peak is about the save-all step's; auto also offers
/// the same kept set with segments (a block's forward recomputed once more
/// before its backward from its recomputed input: about 1.5 forwards at
/// every-k k=1's peak, keepAllSegmented) and without any sharing.
KeptSet keepAll(const StepStructure &info) {
  return {llvm::BitVector(info.saved.size(), false),
          Sharing{/*chains=*/false, /*segments=*/false, /*global=*/true}};
}

/// all's kept set with shared segments instead of global sharing: the plan
/// strategy=all emitted before it shared every clone (an auto candidate).
KeptSet keepAllSegmented(const StepStructure &info) {
  return {llvm::BitVector(info.saved.size(), false),
          Sharing{/*chains=*/false, /*segments=*/true}};
}

/// The blocks of a step that a strategy needs; failure after a diagnostic.
FailureOr<BlockInfo> requireBlocks(const StepStructure &info,
                                   RematStrategy strategy,
                                   StringRef function) {
  BlockInfo bi = computeBlocks(info);
  if (bi.blocks.empty())
    return mlir::emitError(info.func->getLoc())
               << "mw-remat: strategy=" << stringifyRematStrategy(strategy)
               << " needs transformer blocks, named by op locations with a "
                  "layer index (loc(\"h.0.attn\"), "
                  "loc(\"model.layers.0.mlp\")); @"
               << function << " has none (and no '" << kLayerAttrName
               << "' attributes)",
           failure();
  return bi;
}

/// every-k: inside transformer blocks, keep only the outputs of every k-th
/// block; outside blocks (embeddings, final norm, head, loss) keep all.
FailureOr<KeptSet> keepEveryK(const StepStructure &info, int64_t k,
                              StringRef function) {
  FailureOr<BlockInfo> bi = requireBlocks(info, RematStrategy::EveryK, function);
  if (failed(bi))
    return failure();
  llvm::StringMap<unsigned> blockIndex;
  for (auto [i, b] : llvm::enumerate(bi->blocks))
    blockIndex[b] = i;
  KeptSet kept = keepNone(info);
  for (unsigned i = 0, e = info.saved.size(); i < e; ++i) {
    if (bi->blockOf[i].empty())
      continue;
    unsigned idx = blockIndex[bi->blockOf[i]];
    kept.keep[i] = bi->isBlockOutput[i] && (idx + 1) % k == 0;
  }
  return kept;
}

/// selective: inside transformer blocks, drop the core attention values.
FailureOr<KeptSet> keepSelective(const StepStructure &info,
                                 StringRef function) {
  FailureOr<BlockInfo> bi =
      requireBlocks(info, RematStrategy::Selective, function);
  if (failed(bi))
    return failure();
  llvm::DenseSet<Value> core = coreAttentionValues(info);
  KeptSet kept = keepNone(info);
  for (unsigned i = 0, e = info.saved.size(); i < e; ++i)
    if (!bi->blockOf[i].empty())
      kept.keep[i] = !core.contains(info.saved[i]);
  return kept;
}

/// sqrt: keep every ceil(sqrt(n))-th of the n articulation values.
KeptSet keepSqrt(const StepStructure &info) {
  SmallVector<unsigned> candidates = articulationCandidates(info);
  KeptSet kept{llvm::BitVector(info.saved.size(), false)};
  unsigned step = std::max<unsigned>(
      1, static_cast<unsigned>(std::ceil(std::sqrt(candidates.size()))));
  for (auto [j, i] : llvm::enumerate(candidates))
    if ((j + 1) % step == 0)
      kept.keep.set(i);
  return kept;
}

/// The kept set of a fixed strategy (not auto or optimal); failure after a
/// diagnostic.
FailureOr<KeptSet> fixedKeep(const StepStructure &info, RematStrategy strategy,
                             int64_t k, StringRef function) {
  switch (strategy) {
  case RematStrategy::None:
    return keepNone(info);
  case RematStrategy::All:
    return keepAll(info);
  case RematStrategy::EveryK:
    return keepEveryK(info, k, function);
  case RematStrategy::Sqrt:
    return keepSqrt(info);
  case RematStrategy::Selective:
    return keepSelective(info, function);
  case RematStrategy::Auto:
  case RematStrategy::Optimal:
  case RematStrategy::Revolve:
    break;
  }
  llvm_unreachable("not a kept-set strategy");
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// One run of the pass on a step: what every strategy starts from (the step,
/// its graph, the measured save-all program, the budget) and what it chose.
struct RematRun {
  RematRun(StepStructure &info, StepGraph &g) : info(info), g(g) {}
  StepStructure &info;
  StepGraph &g;
  unsigned n = 0;
  RematPlan saveAllPlan;
  Measurement saveAll;
  /// -1 without a budget; the arena's share of it (INT64_MAX without).
  int64_t budgetBytes = -1, arenaBudget = INT64_MAX;
  /// The arena every plan holds: the most bytes the backward pass's own
  /// buffers (gradients, gathered parameters, buckets: backward values,
  /// which no recompute changes, since clones read forward values only)
  /// take at one op, and that op.
  int64_t arenaFloor = 0;
  int floorNode = -1;
  /// saved-budget in bytes; -1 without one.
  int64_t savedBudgetBytes = -1;
  /// max-recompute in the unit of cost (infinite without one), and how
  /// diagnostics name it.
  double maxCost = std::numeric_limits<double>::infinity();
  std::string maxCostText;
  bool withinCost(double c) const { return c <= maxCost * (1.0 + 1e-12); }
  /// strategy=optimal: its lower bound on every plan's cost (cost units).
  double bound = 0.0;
  /// Appended to budget diagnostics: where the budget came from.
  std::string budgetSource;
  std::chrono::steady_clock::time_point solveStart;

  RematPlan chosen;
  std::string chosenName;
  llvm::BitVector keep;
  Measurement result;
  double solveSeconds = 0.0;
};

struct MwRematPass : public mw::impl::MwRematBase<MwRematPass> {
  using MwRematBase::MwRematBase;

  void runOnOperation() override;

private:
  /// Applies `plan` to a copy of the module and plans it with the real
  /// pipeline; failure after a diagnostic.
  FailureOr<Measurement> measure(const RematPlan &plan, bool wantLive);
  /// Measures run.chosen into run.result (the save-all program's
  /// measurement stays when it clones nothing); failure after a diagnostic.
  LogicalResult measureChosen(RematRun &run);
  /// An error at the module; the pass fails.
  LogicalResult fail(const Twine &msg);
  /// The error of an unreachable budget: the smallest peak found (`lowest`,
  /// reached `how`) and what is live there; failure.
  LogicalResult unreachable(RematRun &run, const RematPlan &lowest,
                            StringRef how);
  /// The same with `lowest` already measured (with what is live at its
  /// peak).
  LogicalResult unreachable(RematRun &run, const Measurement &low,
                            StringRef how);
  /// The seconds spent since the solve started, measuring excluded.
  double solveTime(const RematRun &run) const;

  /// One function per strategy; each fills run.chosen, run.keep and
  /// run.result, or fails after a diagnostic.
  LogicalResult runFixed(RematRun &run);
  LogicalResult runRevolve(RematRun &run);
  /// The error of a fixed strategy (`name`) whose measured peak is over the
  /// budget, `advice` before the pointer to auto; success within it.
  LogicalResult checkFixedBudget(const RematRun &run, StringRef name,
                                 StringRef advice);
  LogicalResult runAuto(RematRun &run);
  LogicalResult runOptimal(RematRun &run);
  /// optimal with a saved-budget: the exact saved-bytes optimum.
  LogicalResult runOptimalSaved(RematRun &run);
  /// The saved-bytes problem's optimum for run.savedBudgetBytes in the time
  /// left of `time-limit`; "infeasible" when the budget is below what the
  /// step must keep. `hull`, when given, is the problem's (closureHull).
  ClosureKnapsackResult solveSaved(RematRun &run,
                                   const std::vector<HullPoint> *hull = nullptr);

  /// Rewrites the step by the chosen plan and records mw.remat.*.
  void finish(RematRun &run);

  const Target *tgt = nullptr;
  double verifySeconds = 0.0;
  /// Plans measured with the real pipeline (the save-all one included).
  unsigned measurements = 0;
  /// Candidates packed as simulated (auto), before any measurement.
  unsigned simulatedPackings = 0;
  /// Candidates auto left out as too large to build (kMaxRecomputedForwards).
  unsigned oversizedCandidates = 0;
  std::string milpSummary;
};

FailureOr<Measurement> MwRematPass::measure(const RematPlan &plan,
                                            bool wantLive) {
  if (plan.oversized) {
    // planRemat stopped building it (RematGraph.h).
    ModuleOp module = getOperation();
    auto f = module.lookupSymbol<func::FuncOp>(function);
    mlir::emitError(f ? f.getLoc() : module.getLoc())
        << "mw-remat: the plan would recompute more than "
        << kMaxRecomputedForwards
        << " forward passes' worth of ops (each dropped value's chain, down "
           "to what is kept, for each of its uses): not built; keep more "
           "(strategy=every-k or sqrt, or a larger budget), or mark the "
           "forward pass's blocks (mw.layer) so that a block is recomputed "
           "once";
    return failure();
  }
  ++measurements;
  auto startTime = std::chrono::steady_clock::now();
  auto done = llvm::make_scope_exit([&] {
    verifySeconds += std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - startTime)
                         .count();
  });
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  OwningOpRef<ModuleOp> copy(cast<ModuleOp>(module->clone()));
  // Plan the step alone: other functions (the forward function) would only
  // cost time.
  for (auto f : llvm::make_early_inc_range(copy->getOps<func::FuncOp>()))
    if (f.getSymName() != function && SymbolTable::symbolKnownUseEmpty(f, *copy))
      f.erase();
  auto f = copy->lookupSymbol<func::FuncOp>(function);
  StepStructure info(f);
  if (failed(checkStep(info)))
    return failure();
  applyPlan(StepGraph(info, *tgt, cost == "flops"), plan);

  // The nested pipeline's remarks (buffers not planned) are noise here.
  ScopedDiagnosticHandler quiet(ctx, [](Diagnostic &d) {
    return success(d.getSeverity() == DiagnosticSeverity::Remark);
  });
  PassManager bufferize(ctx, ModuleOp::getOperationName());
  // As --mw-train-pipeline compiles it by default: the updates moved up to
  // where their gradients are ready, then bufferized.
  if (hoistUpdates)
    bufferize.addPass(createMwHoistUpdates());
  buildBufferizePipeline(bufferize);
  if (failed(bufferize.run(*copy)))
    return mlir::emitError(module.getLoc(), "mw-remat: bufferizing the rematerialized step "
                            "failed"),
           failure();
  Measurement m;
  {
    BufferLiveness liveness(f);
    for (BlockArgument arg : f.getArguments())
      m.persistent += mw::detail::tensorBytes(arg.getType());
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
  PassManager arena(ctx, ModuleOp::getOperationName());
  arena.addPass(createMwStaticArena());
  if (failed(arena.run(*copy)))
    return mlir::emitError(module.getLoc(), "mw-remat: planning the rematerialized step "
                            "failed"),
           failure();
  if (auto size = f->getAttrOfType<IntegerAttr>("mw.arena_size"))
    m.arena = size.getInt();
  return m;
}

LogicalResult MwRematPass::measureChosen(RematRun &run) {
  if (run.chosen.clones.empty())
    return success();
  FailureOr<Measurement> m = measure(run.chosen, false);
  if (failed(m))
    return failure();
  run.result = *m;
  return success();
}

/// The forward values whose backward uses read more than one copy of them
/// (the original and a clone, or two clones): what a staged plan does
/// where a kept set cannot.
unsigned countMultiCopy(const StepGraph &g, const RematPlan &plan) {
  if (plan.useReplace.empty())
    return 0;
  llvm::DenseMap<int, int> replaced;
  for (auto [v, r] : plan.replace)
    replaced[v] = r;
  llvm::DenseMap<std::pair<int, int>, int> perUse;
  for (const RematPlan::UseReplacement &u : plan.useReplace)
    perUse[{u.node, u.value}] = u.with;
  llvm::MapVector<int, llvm::SmallSetVector<int, 2>> copies;
  for (auto [j, node] : llvm::enumerate(g.nodes)) {
    if (!g.isBackward(j))
      continue;
    for (int v : node.operands) {
      int def = g.vals[v].def;
      if (def < 0 || !g.nodes[def].forward)
        continue;
      int copy = v;
      if (auto it = perUse.find({static_cast<int>(j), v}); it != perUse.end())
        copy = it->second;
      else if (auto it = replaced.find(v); it != replaced.end())
        copy = it->second;
      copies[v].insert(copy);
    }
  }
  return llvm::count_if(copies, [](const auto &kv) {
    return kv.second.size() > 1;
  });
}

/// "2000000 B (2.00 MB = 1.91 MiB)": exact, then both units (Units.h), the
/// figures people compare with a budget or a device's marketed size.
std::string formatBytes(int64_t bytes) {
  std::string s = std::to_string(bytes) + " B";
  if (bytes >= 1000)
    s += " (" + formatBothBytes(bytes) + ")";
  return s;
}

LogicalResult MwRematPass::fail(const Twine &msg) {
  mlir::emitError(getOperation().getLoc()) << "mw-remat: " << msg;
  signalPassFailure();
  return failure();
}

double MwRematPass::solveTime(const RematRun &run) const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       run.solveStart)
             .count() -
         verifySeconds;
}

LogicalResult MwRematPass::unreachable(RematRun &run, const RematPlan &lowest,
                                       StringRef how) {
  if (lowest.oversized) {
    // Not built whole, so not measured (RematGraph.h).
    mlir::emitError(run.info.func->getLoc())
        << "mw-remat: budget " << formatBytes(run.budgetBytes)
        << run.budgetSource << " is unreachable for @" << function << " ("
        << how << "); the plan of the smallest peak would recompute more than "
        << kMaxRecomputedForwards
        << " forward passes' worth of ops and was not built; save-all peak "
        << formatBytes(run.saveAll.peak());
    return failure();
  }
  FailureOr<Measurement> low = measure(lowest, true);
  if (failed(low))
    return failure();
  return unreachable(run, *low, how);
}

LogicalResult MwRematPass::unreachable(RematRun &run, const Measurement &low,
                                       StringRef how) {
  InFlightDiagnostic diag =
      mlir::emitError(run.info.func->getLoc())
      << "mw-remat: budget " << formatBytes(run.budgetBytes)
      << run.budgetSource << " is unreachable for @" << function
      << ": the smallest planned peak found is " << formatBytes(low.peak())
      << " (arena " << formatBytes(low.arena) << " + persistent "
      << formatBytes(low.persistent) << ", " << how << "); save-all peak "
      << formatBytes(run.saveAll.peak());
  for (const LiveAtPeak &l : low.live)
    diag.attachNote(l.loc) << "live at the peak: '" << l.name << "', "
                           << formatBytes(l.bytes);
  return failure();
}

/// none, all, every-k, sqrt, selective; and auto without a budget (none).
LogicalResult MwRematPass::runFixed(RematRun &run) {
  RematStrategy fixed =
      strategy == RematStrategy::Auto ? RematStrategy::None : strategy;
  FailureOr<KeptSet> fk = fixedKeep(run.info, fixed, k, function);
  if (failed(fk))
    return failure();
  // selective drops only core attention values (scores, probabilities):
  // a fused mw.attention saves none, so it would silently do nothing.
  if (fixed == RematStrategy::Selective && fk->keep.all())
    mlir::emitWarning(run.info.func->getLoc())
        << "mw-remat: strategy=selective recomputes nothing in @" << function
        << ": it drops only core attention values (scores, probabilities), "
           "and this step has none (fused mw.attention keeps them inside "
           "its kernel); use every-k, sqrt or a budget (budget=NN% or "
           "saved-budget=NN%) instead";
  run.keep = fk->keep;
  run.chosen = planRemat(run.g, run.info, run.keep, fk->sharing);
  run.solveSeconds = solveTime(run);
  if (failed(measureChosen(run)))
    return failure();
  return checkFixedBudget(run, stringifyRematStrategy(strategy), "");
}

LogicalResult MwRematPass::checkFixedBudget(const RematRun &run,
                                            StringRef name, StringRef advice) {
  if (run.budgetBytes < 0 || run.result.peak() <= run.budgetBytes)
    return success();
  return mlir::emitError(run.info.func->getLoc())
         << "mw-remat: strategy=" << name << " plans a peak of "
         << formatBytes(run.result.peak()) << " (arena "
         << formatBytes(run.result.arena) << " + persistent "
         << formatBytes(run.result.persistent) << "), over the budget "
         << formatBytes(run.budgetBytes) << "; " << advice
         << "strategy=auto finds the least recompute under a budget";
}

/// revolve: binomial checkpointing over the links (`units`) with
/// `snapshots` held, the last link's internals kept from the forward pass,
/// each link's internals recomputed per use or with its sweep
/// (`internals`).
LogicalResult MwRematPass::runRevolve(RematRun &run) {
  std::string why;
  std::optional<RevolveLinks> blocks =
      findRevolveLinks(run.g, run.info, units == "regions", why);
  if (!blocks)
    return mlir::emitError(run.info.func->getLoc())
           << "mw-remat: strategy=revolve cannot reverse @" << function
           << ": " << why;
  int64_t links = blocks->count();
  int64_t c = snapshots;
  if (c == 0)
    c = llvm::Log2_64_Ceil(static_cast<uint64_t>(links));
  RevolveSchedule schedule =
      revolveSchedule(links, c, /*lastFromForward=*/true);
  bool perUse = internals == "per-use";
  run.chosen =
      planRevolve(run.g, run.info, *blocks, schedule, perUse, run.keep);
  run.chosenName = ("revolve " + units + " snapshots=" +
                    Twine(schedule.snapshots) + (perUse ? " per-use" : ""))
                       .str();
  run.solveSeconds = solveTime(run);
  if (failed(measureChosen(run)))
    return failure();
  return checkFixedBudget(
      run, ("revolve snapshots=" + Twine(schedule.snapshots)).str(),
      "fewer snapshots hold less, and ");
}

/// auto under a budget. Candidates: the fixed strategies that apply, and the
/// steps of a peak-driven greedy path, each planned and simulated. The
/// cheapest candidate whose arena fits is measured with the real pipeline;
/// if it does not fit after all, the next one. The candidate set does not
/// depend on the budget, so a larger budget never costs more recompute and a
/// smaller one never gives a larger peak.
LogicalResult MwRematPass::runAuto(RematRun &run) {
  StepStructure &info = run.info;
  StepGraph &g = run.g;
  unsigned n = run.n;
  int64_t arenaBudget = run.arenaBudget;
  const RematPlan &saveAllPlan = run.saveAllPlan;
  std::vector<Candidate> cands;
  auto planOf = [&](const Candidate &c) {
    return c.staged ? *c.staged : planRemat(g, info, c.keep, c.sharing);
  };
  // A candidate that recomputes more ops than kMaxRecomputedForwards
  // forward passes hold is left out: its rewritten step is that many
  // forwards long, and measuring and compiling it takes memory and time in
  // proportion (near the smallest peaks of deep steps the greedy paths
  // recompute each dropped value's chain for every use, hundreds of
  // forwards: at GPT-3's width a measurement of one ran out of 24 GB).
  const int64_t cloneLimit = maxClones(g);
  auto add = [&](StringRef name, const llvm::BitVector &kp, Sharing sharing,
                 const RematPlan &plan, int64_t simArena) {
    if (plan.oversized ||
        static_cast<int64_t>(plan.clones.size()) > cloneLimit) {
      ++oversizedCandidates;
      return false;
    }
    Candidate c;
    c.name = name.str();
    c.keep = kp;
    c.sharing = sharing;
    c.flops = plan.flops;
    c.seconds = plan.seconds;
    c.cost = plan.cost;
    c.simArena = simArena;
    for (auto [i, v] : llvm::enumerate(g.saved))
      if (kp.test(i) || info.forced.test(i))
        c.savedBytes += g.vals[v].bytes;
    cands.push_back(std::move(c));
    return true;
  };
  add("none", llvm::BitVector(n, true), Sharing(), saveAllPlan,
      simulateArena(g, saveAllPlan, kAlignment));
  cands.front().arena = run.saveAll.arena;
  {
    // Fixed strategies, quietly skipping those the step has no blocks for.
    ScopedDiagnosticHandler quiet(&getContext(),
                                  [](Diagnostic &) { return success(); });
    SmallVector<std::pair<RematStrategy, int64_t>> fixed = {
        {RematStrategy::All, 0},
        {RematStrategy::Sqrt, 0},
        {RematStrategy::Selective, 0}};
    for (int64_t kk = 1; kk <= 4; ++kk)
      fixed.push_back({RematStrategy::EveryK, kk});
    for (auto [fixedStrategy, kk] : fixed) {
      FailureOr<KeptSet> fk = fixedKeep(info, fixedStrategy,
                                        std::max<int64_t>(kk, 1), function);
      if (failed(fk))
        continue;
      std::string name = stringifyRematStrategy(fixedStrategy).str();
      if (kk)
        name += " k=" + std::to_string(kk);
      RematPlan plan = planRemat(g, info, fk->keep, fk->sharing);
      add(name, fk->keep, fk->sharing, plan,
          simulateArena(g, plan, kAlignment));
      // all shares every clone; its kept set with segments (what all was
      // before) is a candidate of its own.
      if (fixedStrategy == RematStrategy::All) {
        KeptSet segmented = keepAllSegmented(info);
        RematPlan seg = planRemat(g, info, segmented.keep, segmented.sharing);
        add(name + " segments", segmented.keep, segmented.sharing, seg,
            simulateArena(g, seg, kAlignment));
      }
      // Without shared segments: more recompute, clones alive for less
      // long, so sometimes a smaller arena.
      Sharing unsegmented = fk->sharing;
      unsegmented.segments = false;
      unsegmented.global = false;
      RematPlan alone = planRemat(g, info, fk->keep, unsegmented);
      add(name + " unsegmented", fk->keep, unsegmented, alone,
          simulateArena(g, alone, kAlignment));
    }
  }
  // The path: from save-all, repeatedly find the op where the simulated
  // arena peaks and drop, among the kept values dead there (after their
  // last forward use, before their first backward use), the one with the
  // most bytes per second of recomputing its chain from what is kept.
  {
    SavedUses uses(g, info);
    // The path walks plans that share neither chains nor segments (each
    // dropped value recomputed where it is first used, alive for the
    // least time); each step is offered with each kind of sharing too.
    const Sharing pathSharing{/*chains=*/false, /*segments=*/false};
    const Sharing variants[] = {{/*chains=*/true, /*segments=*/false},
                                {/*chains=*/false, /*segments=*/true},
                                {/*chains=*/true, /*segments=*/true}};
    auto variantName = [](Sharing s) {
      return std::string(s.chains ? " shared" : "") +
             (s.segments ? " segments" : "");
    };
    llvm::BitVector kp(n, true);
    std::vector<int64_t> profile;
    std::vector<int> stamp(g.nodes.size(), -1);
    int stampId = 0;
    auto chainSeconds = [&](unsigned i) {
      int t = uses.firstBwd[i];
      double total = 0.0;
      SmallVector<int> work{g.vals[g.saved[i]].def};
      stamp[work.front()] = ++stampId;
      for (unsigned visited = 0; !work.empty() && visited < 4096; ++visited) {
        const StepGraph::Node &node = g.nodes[work.pop_back_val()];
        total += node.cost;
        for (unsigned o = 0; o < node.numDirect; ++o) {
          int u = node.operands[o];
          int def = g.vals[u].def;
          if (def < 0 || !g.nodes[def].forward || uses.forcedValue[u] ||
              stamp[def] == stampId)
            continue;
          int j = uses.savedIndex[u];
          if (j >= 0 && (kp.test(j) || uses.aliveAt(j, t)))
            continue;
          stamp[def] = stampId;
          work.push_back(def);
        }
      }
      return total;
    };
    // Two scorings of a value dead at the peak: bytes per second of its
    // chain, and the cheapest chain. A step drops the best-scored values
    // dead at the peak until it frees 1/128 of the save-all arena, so a
    // path has about 128 steps whatever the size of the step.
    int64_t quantum = std::max<int64_t>(
        1, simulateArena(g, saveAllPlan, kAlignment) / 128);
    SmallVector<std::pair<double, unsigned>> dead;
    for (int scoring = 0; scoring < 2; ++scoring) {
      kp.set();
      RematPlan plan = saveAllPlan;
      for (unsigned step = 0;; ++step) {
        int64_t arena = simulateArena(g, plan, kAlignment, &profile);
        if (step > 0) {
          std::string name =
              "path " + std::to_string(scoring) + "." + std::to_string(step);
          add(name, kp, pathSharing, plan, arena);
          // The same kept set with shared chains (a dropped value
          // recomputed in a chain serves its own uses: recomputed once,
          // alive longer) and with shared segments.
          for (Sharing v : variants) {
            RematPlan shared = planRemat(g, info, kp, v);
            add(name + variantName(v), kp, v, shared,
                simulateArena(g, shared, kAlignment));
          }
        }
        int peakAt = std::max_element(profile.begin(), profile.end()) -
                     profile.begin();
        // Once no kept value is dead at the peak (the peak is then the
        // gradients', the loss tail's or the persistent state's), dropping
        // more no longer lowers it, but it still lowers the saved bytes:
        // the path goes on with every kept value, scored the same way,
        // down to keeping none, for saved-budget.
        for (bool atPeak : {true, false}) {
          dead.clear();
          for (unsigned i = 0; i < n; ++i) {
            if (!kp.test(i) || info.forced.test(i) ||
                uses.firstBwd[i] == INT_MAX)
              continue;
            if (atPeak && !(uses.deadFrom(g, i) <= peakAt &&
                            peakAt < uses.firstBwd[i]))
              continue;
            double cost = chainSeconds(i) + 1e-15;
            double bytes = g.vals[g.saved[i]].bytes;
            dead.push_back({scoring == 0 ? bytes / cost : 1.0 / cost, i});
          }
          if (!dead.empty())
            break;
        }
        if (dead.empty())
          break;
        // Best score first; the lower index on ties (deterministic).
        std::stable_sort(dead.begin(), dead.end(),
                         [](const auto &x, const auto &y) {
                           return x.first > y.first;
                         });
        int64_t freed = 0;
        for (auto [score, i] : dead) {
          if (freed >= quantum)
            break;
          kp.reset(i);
          freed += g.vals[g.saved[i]].bytes;
        }
        plan = planRemat(g, info, kp, pathSharing);
      }
    }

    // Reverse delete: a greedy path drops values early that a later drop
    // made unnecessary (the peak moved on), and between two steps of a
    // path there is arena left unused. For a ladder of arena levels (each
    // frontier candidate's arena, and 64 steps from the lowest to the
    // save-all arena), take the cheapest candidate at or under the level
    // and keep again its dropped values, the most expensive chain first,
    // wherever the simulated profile over the value's dead interval has
    // room for its bytes under the level. Keeping a value adds its bytes
    // exactly there (its recompute and the chains through it go away).
    // The result is simulated again and added as a candidate of its own.
    // The levels depend only on the candidates, never on the budget.
    SmallVector<unsigned> frontier;
    SmallVector<int64_t> levels;
    costLadder(cands, &Candidate::simArena, /*toLargest=*/false, frontier,
               levels);
    SmallVector<std::pair<double, unsigned>> dropped;
    unsigned base = 0;
    for (int64_t level : levels) {
      while (base + 1 < frontier.size() &&
             cands[frontier[base + 1]].simArena <= level)
        ++base;
      const Candidate &from = cands[frontier[base]];
      kp = from.keep;
      Sharing sharing = from.sharing;
      std::string name = from.name;
      RematPlan plan = planRemat(g, info, kp, sharing);
      simulateArena(g, plan, kAlignment, &profile);
      dropped.clear();
      for (unsigned i = 0; i < n; ++i)
        if (!kp.test(i) && !info.forced.test(i) &&
            uses.firstBwd[i] != INT_MAX)
          dropped.push_back({chainSeconds(i), i});
      std::stable_sort(dropped.begin(), dropped.end(),
                       [](const auto &x, const auto &y) {
                         return x.first > y.first;
                       });
      llvm::BitVector pruned = kp;
      bool changed = false;
      RangeProfile room(profile);
      for (auto [cost, i] : dropped) {
        int lo = uses.deadFrom(g, i), hi = uses.firstBwd[i];
        int64_t bytes = llvm::alignTo(g.vals[g.saved[i]].bytes, kAlignment);
        // 0 over an empty interval (live bytes are never negative).
        int64_t most = std::max<int64_t>(0, room.max(lo, hi));
        if (most + bytes > level)
          continue;
        room.add(lo, hi, bytes);
        pruned.set(i);
        changed = true;
      }
      if (!changed)
        continue;
      RematPlan prunedPlan = planRemat(g, info, pruned, sharing);
      add(name + " pruned to " + std::to_string(level), pruned, sharing,
          prunedPlan, simulateArena(g, prunedPlan, kAlignment));
    }

    // The same on the saved-bytes axis (saved-budget): for a ladder of
    // saved-bytes levels (each candidate's on the saved-bytes frontier, and
    // 64 steps from the fewest to the save-all step's), take the cheapest
    // candidate keeping at most the level and keep again its dropped
    // values, the most expensive chain first, while the kept bytes stay
    // within the level. Budget-independent, as above.
    SmallVector<unsigned> savedFrontier;
    SmallVector<int64_t> savedLevels;
    costLadder(cands, &Candidate::savedBytes, /*toLargest=*/true,
               savedFrontier, savedLevels);
    base = 0;
    for (int64_t level : savedLevels) {
      while (base + 1 < savedFrontier.size() &&
             cands[savedFrontier[base + 1]].savedBytes <= level)
        ++base;
      const Candidate &from = cands[savedFrontier[base]];
      llvm::BitVector kept = from.keep;
      Sharing sharing = from.sharing;
      std::string name = from.name;
      int64_t saved = from.savedBytes;
      dropped.clear();
      for (unsigned i = 0; i < n; ++i)
        if (!kept.test(i) && !info.forced.test(i) &&
            uses.firstBwd[i] != INT_MAX)
          dropped.push_back({chainSeconds(i), i});
      std::stable_sort(dropped.begin(), dropped.end(),
                       [](const auto &x, const auto &y) {
                         return x.first > y.first;
                       });
      bool changed = false;
      for (auto [cost, i] : dropped) {
        int64_t bytes = g.vals[g.saved[i]].bytes;
        if (saved + bytes > level)
          continue;
        saved += bytes;
        kept.set(i);
        changed = true;
      }
      if (!changed)
        continue;
      RematPlan keptPlan = planRemat(g, info, kept, sharing);
      add(name + " kept to " + std::to_string(level) + " saved bytes", kept,
          sharing, keptPlan, simulateArena(g, keptPlan, kAlignment));
    }
  }
  // The vertices of the saved-bytes hull (budget-independent): the cheapest
  // ways to free each of their amounts of saved bytes, each op recomputed
  // once; planned with shared chains and segments, and without sharing.
  std::vector<HullPoint> hull =
      closureHull(savedBytesProblem(g, info, cost == "flops"));
  for (auto [k, h] : llvm::enumerate(hull)) {
    if (k == 0)
      continue;
    llvm::BitVector kp = keptSetOf(g, info, h.chosen);
    for (Sharing sharing : {Sharing{/*chains=*/true, /*segments=*/true},
                            Sharing{/*chains=*/false, /*segments=*/false}}) {
      RematPlan plan = planRemat(g, info, kp, sharing);
      add("hull " + std::to_string(k) +
              (sharing.segments ? " shared segments" : " unsegmented"),
          kp, sharing, plan, simulateArena(g, plan, kAlignment));
    }
  }
  // With a saved-budget: the exact saved-bytes optimum (every op recomputed
  // once), so auto is never worse than it; with shared segments too, whose
  // clones live less long when a peak budget also holds.
  if (run.savedBudgetBytes >= 0) {
    ClosureKnapsackResult exact = solveSaved(run, &hull);
    if (exact.status == "optimal" || exact.status == "feasible") {
      llvm::BitVector kp = keptSetOf(g, info, exact.chosen);
      for (Sharing sharing : {Sharing{/*chains=*/false, /*segments=*/false,
                                      /*global=*/true},
                              Sharing{/*chains=*/true, /*segments=*/true}}) {
        RematPlan plan = planRemat(g, info, kp, sharing);
        add(std::string("saved-bytes optimum") +
                (sharing.global ? "" : " segments"),
            kp, sharing, plan, simulateArena(g, plan, kAlignment));
      }
    }
  }
  // Revolve's schedules (binomial checkpointing over the blocks, and over
  // their regions): near the smallest peaks they hold a few inputs of
  // links and recompute each link a few times, where the kept-set
  // candidates that fit recompute long chains for every use. Snapshot
  // counts from 1 up, both for the last link's internals kept from the
  // forward pass and recomputed, each with internals per use and with the
  // sweep; a schedule that recomputes more than kMaxRecomputedForwards
  // forward passes' worth of links is left out before it is planned (its
  // rewritten step would be that many forwards long).
  for (bool regions : {true, false}) {
    std::string why;
    if (std::optional<RevolveLinks> blocks =
            findRevolveLinks(g, info, regions, why)) {
      int64_t links = blocks->count();
      int64_t previous[2] = {-1, -1};
      for (int64_t c : {1, 2, 3, 4, 6, 8, 12, 16, 24, 32}) {
        if (c >= links)
          break;
        for (bool last : {true, false}) {
          RevolveSchedule schedule = revolveSchedule(links, c, last);
          // No fewer recomputes than with fewer snapshots: only more held.
          if (schedule.recomputedLinks > kMaxRecomputedForwards * links ||
              schedule.recomputedLinks == previous[last])
            continue;
          previous[last] = schedule.recomputedLinks;
          for (bool perUse : {false, true}) {
            llvm::BitVector kp;
            auto plan = std::make_shared<const RematPlan>(
                planRevolve(g, info, *blocks, schedule, perUse, kp));
            if (add(("revolve " + Twine(regions ? "regions" : "blocks") +
                     " snapshots=" + Twine(c) +
                     (last ? " last from forward" : "") +
                     (perUse ? " per-use" : ""))
                        .str(),
                    kp, Sharing(), *plan, simulateArena(g, *plan, kAlignment)))
              cands.back().staged = std::move(plan);
          }
        }
      }
    }
  }
  run.solveSeconds = solveTime(run);
  auto fitsSavedBytes = [&](const Candidate &c) {
    return run.savedBudgetBytes < 0 || c.savedBytes <= run.savedBudgetBytes;
  };
  auto fitsSaved = [&](const Candidate &c) {
    return fitsSavedBytes(c) && run.withinCost(c.cost);
  };
  if (run.savedBudgetBytes >= 0 && llvm::none_of(cands, fitsSavedBytes)) {
    int64_t least = INT64_MAX;
    for (const Candidate &c : cands)
      least = std::min(least, c.savedBytes);
    return mlir::emitError(info.func->getLoc())
           << "mw-remat: saved-budget " << formatBytes(run.savedBudgetBytes)
           << " is below what @" << function
           << " must keep: the fewest saved-activation bytes of any "
              "candidate are "
           << formatBytes(least)
           << " (values the backward pass reads that cannot be recomputed)";
  }
  if (run.savedBudgetBytes >= 0 && llvm::none_of(cands, fitsSaved))
    return mlir::emitError(info.func->getLoc())
           << "mw-remat: saved-budget " << formatBytes(run.savedBudgetBytes)
           << " is unreachable for @" << function
           << " within max-recompute=" << run.maxCostText
           << ": every candidate that keeps that little recomputes more";
  // The measurements made below, by candidate, each with what is live at
  // its peak: an unreachable budget reports the lowest of them without
  // measuring it again (on GPT-3's width one measurement takes minutes).
  llvm::DenseMap<const Candidate *, Measurement> measured;
  // Candidates whose plans coincide (a path step with shared chains, with
  // shared segments and with both often makes the same clones) are measured
  // once.
  std::vector<std::pair<RematPlan, Measurement>> measuredPlans;
  auto measureOnce = [&](const RematPlan &plan,
                         const Candidate &c) -> FailureOr<Measurement> {
    for (const auto &[p, m] : measuredPlans)
      if (samePlan(p, plan))
        return m;
    // Progress: on GPT-3's width one measurement takes minutes. (Not
    // "mw-remat: ": scripts read the one summary remark by that prefix.)
    if (verbose)
      mlir::emitRemark(info.func->getLoc())
          << "mw-remat progress: measuring candidate '" << c.name << "' ("
          << plan.clones.size() << " recomputed ops, "
          << llvm::formatv("{0:e}", static_cast<double>(plan.flops))
          << " FLOPs recomputed, simulated arena " << formatBytes(c.simArena)
          << ")";
    FailureOr<Measurement> m = measure(plan, true);
    if (succeeded(m))
      measuredPlans.push_back({plan, *m});
    return m;
  };
  auto choose = [&](const Candidate &c, RematPlan plan, const Measurement &m) {
    run.result = m;
    run.chosen = std::move(plan);
    run.keep = c.keep;
    run.chosenName = c.name;
  };
  // The packer places a plan a little above its simulated live bytes
  // (packing leaves gaps), and near the budget hundreds of candidates
  // simulate just under it and pack just over. So a candidate is first
  // packed as simulated (the same packer on the simulated buffers, without
  // bufferizing: milliseconds where a measurement takes seconds at GPT-3's
  // width), and measured only if that fits. Where the pipeline still packs
  // a plan over the budget, the candidates packed after it are predicted
  // with the largest such overshoot over their simulated packing added:
  // each measurement that still goes over raises it, so few are made.
  int64_t overshoot = 0;
  auto predicted = [&](const Candidate &c) {
    if (c.arena)
      return c.effectiveArena();
    return c.packed ? c.effectiveArena() + overshoot : c.simArena;
  };
  planning::PackOptions packOptions;
  packOptions.alignment = kAlignment;
  while (true) {
    Candidate *best = nullptr;
    for (Candidate &c : cands)
      if (predicted(c) <= arenaBudget && fitsSaved(c) &&
          (!best || cheaper(c, *best)))
        best = &c;
    if (!best) {
      // The smallest peak found: the simulation ranks the candidates and
      // the real pipeline decides among the few lowest, whose arenas differ
      // by a few buffers either way.
      SmallVector<Candidate *> order;
      for (Candidate &c : cands)
        if (fitsSaved(c))
          order.push_back(&c);
      std::stable_sort(order.begin(), order.end(),
                       [](const Candidate *a, const Candidate *b) {
                         if (a->simArena != b->simArena)
                           return a->simArena < b->simArena;
                         return cheaper(*a, *b);
                       });
      Candidate *lowest = nullptr, *fitting = nullptr;
      for (Candidate *c : ArrayRef<Candidate *>(order).take_front(4)) {
        if (!c->arena) {
          FailureOr<Measurement> m =
              measureOnce(planOf(*c), *c);
          if (failed(m))
            return failure();
          c->arena = m->arena;
          measured[c] = std::move(*m);
        }
        if (!lowest || *c->arena < *lowest->arena)
          lowest = c;
        // With hoist-updates the pipeline's arena can be below the
        // simulation's (which keeps every gradient to the end): a measured
        // plan within the budget is a plan that fits.
        if (*c->arena <= arenaBudget && (!fitting || cheaper(*c, *fitting)))
          fitting = c;
      }
      if (fitting) {
        auto m = measured.find(fitting);
        // Only `none` is measured without an entry: the save-all program.
        choose(*fitting, planOf(*fitting),
               m != measured.end() ? m->second : run.saveAll);
        break;
      }
      std::string how = "strategy " + lowest->name +
                        (run.savedBudgetBytes >= 0 ? " within saved-budget"
                                                   : "") +
                        (run.maxCostText.empty()
                             ? ""
                             : " within max-recompute=" + run.maxCostText);
      // (Under a cap the oversized ones would not fit it either.)
      if (oversizedCandidates && run.maxCostText.empty())
        how += "; " + std::to_string(oversizedCandidates) +
               " candidates that recompute more than " +
               std::to_string(kMaxRecomputedForwards) +
               " forward passes' worth of ops left out";
      auto low = measured.find(lowest);
      if (low != measured.end())
        return unreachable(run, low->second, how);
      return unreachable(
          run, planOf(*lowest), how);
    }
    RematPlan plan = planOf(*best);
    if (best->arena) {
      choose(*best, std::move(plan), run.saveAll); // only `none` starts measured
      break;
    }
    if (!best->packed) {
      std::vector<planning::PackBuffer> buffers;
      simulateArena(g, plan, kAlignment, nullptr, &buffers);
      planning::PackResult packed = planning::packBuffers(buffers, packOptions);
      ++simulatedPackings;
      best->packed = packed.succeeded()
                         ? static_cast<int64_t>(packed.arenaSize)
                         : best->simArena;
      if (predicted(*best) > arenaBudget)
        continue;
    }
    FailureOr<Measurement> m = measureOnce(plan, *best);
    if (failed(m))
      return failure();
    int64_t simulatedPacking = best->effectiveArena();
    best->arena = m->arena;
    if (m->arena > arenaBudget) {
      overshoot = std::max(overshoot, m->arena - simulatedPacking);
      measured[best] = std::move(*m);
      continue;
    }
    choose(*best, std::move(plan), *m);
    break;
  }
  return success();
}

/// optimal: the cheapest measured plan under the budget among auto's choice,
/// the lower bound's kept set and Checkmate's MILP, with its gap to a lower
/// bound on every plan (solveCoverBound). Each MILP kept set is measured,
/// and the MILP's budget tightened by the excess, up to 4 rounds.
LogicalResult MwRematPass::runOptimal(RematRun &run) {
  StepStructure &info = run.info;
  StepGraph &g = run.g;
  unsigned n = run.n;
  int64_t arenaBudget = run.arenaBudget;
  auto remaining = [&] {
    return timeLimit - std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - run.solveStart)
                           .count();
  };
  // Errors of the sources tried (auto's unreachable budget, a plan that
  // fails to measure) are answered by the next source; the final error
  // speaks for all of them.
  std::optional<ScopedDiagnosticHandler> quiet;
  quiet.emplace(&getContext(), [](Diagnostic &) { return success(); });

  std::optional<remat::CoverBound> cover =
      solveCoverBound(info, g, arenaBudget, std::max(1.0, remaining()));
  if (!cover->error.empty() || cover->infeasible)
    quiet.reset();
  if (!cover->error.empty())
    return fail("the MILP solver failed on the lower bound: " + cover->error);
  if (cover->infeasible) {
    return unreachable(run,
                       planRemat(g, info, llvm::BitVector(n, false),
                                 Sharing{/*chains=*/false, /*segments=*/false}),
                       "strategy all unsegmented; no kept set frees the "
                       "excess at every op (the lower bound's MILP is "
                       "infeasible)");
  }

  bool found = false;
  auto offer = [&](StringRef name, const llvm::BitVector &kp,
                   const RematPlan &plan, const Measurement &m) {
    if (m.arena > arenaBudget)
      return;
    if (found && (plan.cost > run.chosen.cost ||
                  (plan.cost == run.chosen.cost &&
                   plan.flops >= run.chosen.flops)))
      return;
    found = true;
    run.chosen = plan;
    run.keep = kp;
    run.result = m;
    run.chosenName = name.str();
  };
  auto beats = [&](const RematPlan &plan) {
    return !found || plan.cost < run.chosen.cost;
  };

  // 1. auto's choice, so optimal is never worse than auto.
  if (succeeded(runAuto(run))) {
    found = true;
    run.chosenName = "auto: " + run.chosenName;
  }

  // 2. The bound's own kept set (it assumes perfect sharing; segments and
  // shared chains come closest), the budget tightened when the chains'
  // transients or the packer put it over: by the excess, and when that
  // leaves no kept set (the MILP infeasible) halfway back, bisecting
  // between the tightest infeasible budget and the loosest over one.
  llvm::BitVector coverKeep = cover->keep;
  int64_t target = arenaBudget;
  int64_t infeasibleAt = INT64_MIN;
  // The cheapest plan tried whose simulated arena (the live bytes the
  // covering MILP counts) fits, whether or not the packer then placed it
  // within the budget: the gap the bounds leave in the simulation's model.
  double simFitCost = std::numeric_limits<double>::infinity();
  int solves = 0;
  for (int round = 0; round < 4 && !coverKeep.empty(); ++round) {
    int64_t over = INT64_MAX;
    bool fits = false;
    std::optional<std::pair<int64_t, int64_t>> measured; // flops, sim arena
    for (Sharing sharing : {Sharing{/*chains=*/false, /*segments=*/true},
                            Sharing{/*chains=*/true, /*segments=*/true},
                            Sharing{/*chains=*/false, /*segments=*/false}}) {
      RematPlan plan = planRemat(g, info, coverKeep, sharing);
      if (!beats(plan))
        continue;
      // The same plan as with the previous sharing: measured already.
      std::pair<int64_t, int64_t> key{plan.flops,
                                      simulateArena(g, plan, kAlignment)};
      if (measured == key)
        continue;
      measured = key;
      if (key.second <= arenaBudget)
        simFitCost = std::min(simFitCost, plan.cost);
      FailureOr<Measurement> m = measure(plan, false);
      if (failed(m))
        continue;
      over = std::min(over, m->arena - arenaBudget);
      fits |= m->arena <= arenaBudget;
      offer(std::string("lower bound's kept set") +
                (sharing.chains ? " shared" : "") +
                (sharing.segments ? "" : " unsegmented") +
                (round ? " tightened " + std::to_string(round) : ""),
            coverKeep, plan, *m);
    }
    if (fits || over == INT64_MAX)
      break;
    int64_t overAt = target;
    int64_t next = target - over - kAlignment;
    bool solved = false;
    while (solves < 8 && remaining() >= 1.0) {
      if (next <= infeasibleAt)
        next = infeasibleAt + (overAt - infeasibleAt) / 2;
      if (overAt - next <= kAlignment)
        break;
      ++solves;
      remat::CoverBound tighter = solveCoverBound(info, g, next, remaining());
      if (!tighter.error.empty())
        break;
      if (tighter.infeasible) {
        infeasibleAt = next;
        continue;
      }
      coverKeep = tighter.keep;
      target = next;
      solved = true;
      break;
    }
    if (!solved)
      break;
  }

  // The peak bound (what every plan must hold live at one point of the
  // backward pass): the tighter of the two.
  bool flopsCost = cost == "flops";
  remat::PeakModel peakModel =
      buildPeakModel(info, g, arenaBudget, flopsCost);
  remat::PeakBound peak = solvePeakBound(
      peakModel, std::max(1.0, std::min(30.0, remaining() / 2)));
  if (peak.infeasible) {
    quiet.reset();
    return unreachable(run,
                       planRemat(g, info, llvm::BitVector(n, false),
                                 Sharing{/*chains=*/false, /*segments=*/false}),
                       "strategy all unsegmented; no plan fits at op " +
                           std::to_string(peak.point) +
                           " of the step (the peak bound: what must be live "
                           "there exceeds the budget whatever is recomputed "
                           "after it)");
  }
  // The bounds are in the model's units (FLOPs, or femtoseconds rounded per
  // op: lowered by half a unit per clone they may count).
  auto fromModel = [&](double b, double clones) {
    return flopsCost ? b / tgt->flopsPerSecond
                     : std::max(0.0, b - 0.5 * clones) * kTimeUnit;
  };
  double peakBound =
      fromModel(peak.bound, static_cast<double>(g.nodes.size()));
  double bound = std::max(cover->bound, peakBound);
  auto gap = [&] {
    if (!found || run.chosen.cost <= 0.0)
      return 0.0;
    return std::max(0.0, (run.chosen.cost - bound) / run.chosen.cost);
  };

  // 3. The staged MILP, while the gap is open: several time points at
  // once (RematMilp.h, solveStagedBound). Its bound holds for every plan
  // whatever points it takes; its incumbent is a plan (planStaged) that
  // places each clone by stage, not by a kept set's rules. It starts from
  // the point of the peak bound; each round
  // (a few seconds of CBC) turns the incumbent into a plan and simulates
  // it: the op where it is furthest over the budget becomes a time point,
  // or, where that op is a time point already (memory the model leaves
  // out: a clone chain's transients), the point is tightened by the
  // excess; a plan that fits is measured, and where the packer places it
  // over, every point is tightened by that excess. Tightened solves only
  // look for plans. Once a plan fits, the MILP on its points gets the time
  // left for the bound.
  double stagedBound = 0.0;
  struct {
    std::string status;
    unsigned rounds = 0, points = 0;
    size_t vars = 0, rows = 0;
    double seconds = 0.0;
  } staged;
  auto stagedSolve = [&](ArrayRef<int> times, ArrayRef<int64_t> tighten,
                         double seconds) {
    remat::StagedBound sb =
        solveStagedBound(peakModel, times, tighten, seconds);
    ++staged.rounds;
    staged.status = sb.status;
    staged.vars = sb.vars;
    staged.rows = sb.rows;
    staged.seconds += sb.seconds;
    if (llvm::all_of(tighten, [](int64_t t) { return t == 0; }) &&
        !sb.infeasible && sb.status != "error" && sb.bound > stagedBound) {
      stagedBound = sb.bound;
      staged.points = times.size() - 1;
      bound = std::max(bound, fromModel(stagedBound,
                                        static_cast<double>(times.size()) *
                                            peakModel.ops.cost.size()));
    }
    return sb;
  };
  std::vector<int> fittingTimes;
  if (gap() > remat::kBoundGap && remaining() >= 1.0 &&
      peakModel.boundary >= 0 && peak.point > peakModel.boundary) {
    std::vector<int> times{peakModel.boundary, peak.point};
    std::map<int, int64_t> tightenAt;
    int64_t tightenAll = 0;
    for (unsigned round = 0;
         round < 64 && remaining() >= 1.0 && gap() > remat::kBoundGap;
         ++round) {
      std::vector<int64_t> tighten(times.size(), tightenAll);
      for (auto [s, t] : llvm::enumerate(times)) {
        auto it = tightenAt.find(t);
        if (it != tightenAt.end())
          tighten[s] += it->second;
      }
      remat::StagedBound sb =
          stagedSolve(times, tighten,
                      std::min(remaining(), remat::kStagedRoundSeconds));
      if (sb.status == "error")
        break;
      if (sb.infeasible && tightenAll == 0 && tightenAt.empty()) {
        quiet.reset();
        return unreachable(
            run,
            planRemat(g, info, llvm::BitVector(n, false),
                      Sharing{/*chains=*/false, /*segments=*/false}),
            "strategy all unsegmented; no plan fits the budget at the " +
                std::to_string(times.size() - 1) +
                " time points of the staged MILP at once");
      }
      if (sb.cloned.empty())
        break;
      llvm::BitVector kp;
      RematPlan plan = planStaged(g, info, times, sb.cloned, kp);
      std::vector<int64_t> profile;
      int64_t simulated = simulateArena(g, plan, kAlignment, &profile);
      int worstOp = -1;
      for (int j = 0, e = g.nodes.size(); j < e; ++j)
        if (g.isBackward(j) && profile[j] > arenaBudget &&
            (worstOp < 0 || profile[j] > profile[worstOp]))
          worstOp = j;
      if (simulated <= arenaBudget) {
        simFitCost = std::min(simFitCost, plan.cost);
        if (!beats(plan))
          break;
        FailureOr<Measurement> m = measure(plan, false);
        if (failed(m))
          break;
        offer(std::string("staged MILP") +
                  (round ? " round " + std::to_string(round + 1) : ""),
              kp, plan, *m);
        if (m->arena <= arenaBudget) {
          fittingTimes = times;
          break;
        }
        // The packer's excess over the live bytes: every point gives it up.
        tightenAll += m->arena - arenaBudget + kAlignment;
        continue;
      }
      if (worstOp < 0)
        break;
      if (llvm::is_contained(times, worstOp))
        tightenAt[worstOp] += profile[worstOp] - arenaBudget;
      else
        times.insert(llvm::upper_bound(times, worstOp), worstOp);
    }
  }
  if (!fittingTimes.empty() && gap() > remat::kBoundGap && remaining() >= 1.0)
    stagedSolve(fittingTimes, {}, remaining());

  // 4. Checkmate's MILP in the time left, while the gap is open.
  remat::MilpOutcome milp;
  target = arenaBudget;
  for (int round = 0;
       round < 4 && gap() > remat::kBoundGap && remaining() >= 1.0;
       ++round) {
    FailureOr<llvm::BitVector> kp =
        solveCheckmateMilp(info, g, target, remaining(), milp);
    if (failed(kp))
      break;
    RematPlan plan = planRemat(g, info, *kp, Sharing());
    if (!beats(plan))
      break;
    FailureOr<Measurement> m = measure(plan, false);
    if (failed(m))
      break;
    offer("Checkmate's MILP", *kp, plan, *m);
    if (m->arena <= arenaBudget)
      break;
    target -= m->arena - arenaBudget + kAlignment;
  }
  run.solveSeconds = solveTime(run);
  quiet.reset();
  if (!found)
    return fail("strategy=optimal found no plan under the budget " +
                formatBytes(run.budgetBytes) + " within time-limit=" +
                llvm::formatv("{0}", timeLimit).str() +
                " seconds (the lower bound's kept set, tightened, and "
                "Checkmate's MILP, measured, stay over it); raise it or "
                "use strategy=auto");
  // The plan chosen fits, measured.
  simFitCost = std::min(simFitCost, run.chosen.cost);
  // Which bound is the largest.
  double stagedFinal =
      fromModel(stagedBound, static_cast<double>(staged.points + 1) *
                                 peakModel.ops.cost.size());
  const char *boundSource =
      stagedFinal > std::max(peakBound, cover->bound)
          ? "staged"
          : (peakBound > cover->bound ? "peak" : "cover");
  run.bound = bound;
  // The bound in the unit the user reads: FLOPs with cost=flops.
  double unit = cost == "flops" ? tgt->flopsPerSecond : 1.0;
  milpSummary =
      llvm::formatv(" optimality={0} gap={1:F3}% bound={2:e} bound_unit={3} "
                    "bound_status={4} bound_vars={5} bound_rows={6} "
                    "bound_ms={7:F3} bound_source={8} cover_bound={9:e} "
                    "peak_bound={10:e} peak_point={11} peak_points={12}/{13} "
                    "peak_ms={14:F3} sim_fit={15:e} sim_gap={16:F3}%",
                    gap() <= 1e-6 ? "proven" : "bounded", gap() * 100.0,
                    bound * unit, cost == "flops" ? "flops" : "seconds",
                    cover->status, cover->vars, cover->rows,
                    cover->seconds * 1e3,
                    boundSource,
                    cover->bound * unit, peakBound * unit, peak.point,
                    peak.evaluated, peak.points, peak.seconds * 1e3,
                    simFitCost * unit,
                    // Signed: below 0 would mean the simulation admits a
                    // plan cheaper than the bound (both count the same
                    // buffers, constants included, so it should not).
                    simFitCost > 0.0
                        ? (simFitCost - bound) / simFitCost * 100.0
                        : 0.0)
          .str() +
      (staged.rounds == 0
           ? std::string()
           : llvm::formatv(" staged_bound={0:e} staged_status={1} "
                           "staged_points={2} staged_rounds={3} "
                           "staged_vars={4} staged_rows={5} staged_ms={6:F3}",
                           fromModel(stagedBound,
                                     static_cast<double>(staged.points + 1) *
                                         peakModel.ops.cost.size()) *
                               unit,
                           staged.status, staged.points, staged.rounds,
                           staged.vars, staged.rows, staged.seconds * 1e3)
                 .str()) +
      milp.summary;
  return success();
}

ClosureKnapsackResult
MwRematPass::solveSaved(RematRun &run, const std::vector<HullPoint> *hull) {
  // Kept bytes = every saved value's - what the chosen ops free.
  int64_t savedAll = 0;
  for (int v : run.g.saved)
    savedAll += run.g.vals[v].bytes;
  ClosureKnapsack problem = savedBytesProblem(run.g, run.info, cost == "flops");
  double left = timeLimit - std::chrono::duration<double>(
                                std::chrono::steady_clock::now() -
                                run.solveStart)
                                .count();
  return solveClosureKnapsack(problem, savedAll - run.savedBudgetBytes,
                              std::max(left, 0.01), hull);
}

LogicalResult MwRematPass::runOptimalSaved(RematRun &run) {
  StepStructure &info = run.info;
  StepGraph &g = run.g;
  ClosureKnapsackResult exact = solveSaved(run);
  if (exact.status == "error")
    return fail("the MILP solver failed on the saved-bytes problem: " +
                exact.message);
  if (exact.status == "infeasible") {
    // What must stay: forced values and those without a backward use.
    ClosureKnapsack problem = savedBytesProblem(g, info, cost == "flops");
    int64_t least = 0;
    for (int v : g.saved)
      least += g.vals[v].bytes;
    for (int64_t gain : problem.gain)
      least -= gain;
    return mlir::emitError(info.func->getLoc())
           << "mw-remat: saved-budget " << formatBytes(run.savedBudgetBytes)
           << " is below what @" << function
           << " must keep: recomputing every forward op still keeps "
           << formatBytes(least)
           << " (values the backward pass reads that cannot be recomputed)";
  }
  run.keep = keptSetOf(g, info, exact.chosen);
  run.chosen = planRemat(g, info, run.keep,
                         Sharing{/*chains=*/false, /*segments=*/false,
                                 /*global=*/true});
  run.chosenName = "saved-bytes optimum (" + exact.source + ")";
  run.solveSeconds = solveTime(run);
  if (failed(measureChosen(run)))
    return failure();
  // The plan recomputes each chosen op at most once: its cost is at most
  // the solver's (less when a chosen op turns out not to be needed).
  // In seconds the costs were rounded to kTimeUnit: the bound is lowered by
  // half a unit per op, the most rounding any plan can gain.
  bool flops = cost == "flops";
  double unit = flops ? 1.0 : kTimeUnit;
  double planCost = flops ? static_cast<double>(run.chosen.flops)
                          : run.chosen.seconds / kTimeUnit;
  double bound =
      flops ? exact.bound
            : std::max(0.0, exact.bound - 0.5 * static_cast<double>(
                                                    g.nodes.size()));
  double gap = exact.cost > 0
                   ? std::max(0.0, (exact.cost - exact.bound) / exact.cost)
                   : 0.0;
  run.bound = flops ? bound / tgt->flopsPerSecond : bound * kTimeUnit;
  milpSummary =
      llvm::formatv(" optimality={0} gap={1:F3}% bound={2:e} bound_unit={3} "
                    "solver_cost={4:e} plan_cost={5:e} source={6} "
                    "hull_points={7} hull_bound={8:e} hull_incumbent={9:e} "
                    "milp_vars={10} milp_rows={11} exact_ms={12:F3}",
                    exact.status == "optimal" ? "proven" : "bounded",
                    gap * 100.0, bound * unit,
                    cost == "flops" ? "flops" : "seconds", exact.cost * unit,
                    planCost * unit, exact.source, exact.hullPoints,
                    exact.hullBound * unit, exact.hullCost * unit, exact.vars,
                    exact.rows, exact.seconds * 1e3)
          .str();
  return success();
}

void MwRematPass::runOnOperation() {
  ModuleOp module = getOperation();
  tgt = lookupTarget(target);
  if (!tgt)
    return (void)fail("unknown target '" + target + "' (expected " +
                      getTargetNames() + ")");
  if (k < 1)
    return (void)fail("k must be >= 1, got " + Twine(k));
  if (units != "regions" && units != "blocks")
    return (void)fail("unknown units '" + units +
                      "' (expected regions or blocks)");
  if (internals != "per-use" && internals != "sweep")
    return (void)fail("unknown internals '" + internals +
                      "' (expected per-use or sweep)");
  if (snapshots < 0)
    return (void)fail("snapshots must be >= 0 (0: ceil(log2(links))), got " +
                      Twine(snapshots));
  if (cost != "time" && cost != "flops")
    return (void)fail("unknown cost '" + cost + "' (expected time or flops)");
  if (!(timeLimit > 0.0) || std::isinf(timeLimit))
    return (void)fail("time-limit must be a positive number of seconds");
  std::optional<Budget> parsedBudget;
  if (!budget.empty()) {
    parsedBudget = parseBudget(budget);
    if (!parsedBudget)
      return (void)fail(
          "malformed budget '" + budget +
          "' (expected bytes with an optional unit B, KB, MB, GB, TB, "
          "KiB, MiB, GiB, TiB, a percentage like 60%, or auto)");
    if (parsedBudget->isDevice) {
      if (!tgt->memoryBytes)
        return (void)fail("budget=auto plans for the target's device memory, "
                          "and target=" +
                          target + " has none; give bytes or a percentage");
      parsedBudget->bytes = tgt->memoryBytes;
    }
  }
  if (strategy == RematStrategy::Optimal && !parsedBudget &&
      savedBudget.empty())
    return (void)fail("strategy=optimal needs a budget (budget=BYTES or NN%, "
                      "or saved-budget=BYTES or NN%)");
  if (strategy == RematStrategy::Optimal && parsedBudget &&
      !savedBudget.empty())
    return (void)fail("strategy=optimal takes budget or saved-budget, not "
                      "both; strategy=auto takes both");
  if (strategy == RematStrategy::Optimal && hoistUpdates)
    return (void)fail("strategy=optimal does not take hoist-updates=true: "
                      "its lower bounds model the step's order as it is, "
                      "and hoisted updates free gradients the bounds count; "
                      "use strategy=auto");
  std::optional<Budget> parsedSaved;
  if (!savedBudget.empty()) {
    // Unlike a peak, a saved-activation budget may be 0: keep none.
    StringRef text = StringRef(savedBudget).trim();
    if (text == "0" || text == "0B" || text == "0%")
      parsedSaved = Budget();
    else
      parsedSaved = parseBudget(text);
    if (!parsedSaved || parsedSaved->isDevice)
      return (void)fail("malformed saved-budget '" + savedBudget +
                        "' (expected bytes with an optional unit B, KB, MB, "
                        "GB, TB, KiB, MiB, GiB, TiB, or a percentage like "
                        "30%)");
    if (strategy != RematStrategy::Auto && strategy != RematStrategy::Optimal)
      return (void)fail("saved-budget is for strategy=auto and optimal; "
                        "strategy=" +
                        stringifyRematStrategy(strategy) +
                        " keeps what it keeps");
  }

  auto func = module.lookupSymbol<func::FuncOp>(function);
  if (!func || func.isExternal())
    return (void)fail("no function @" + function +
                      " with a body (set function=NAME)");
  StepStructure info(func);
  if (failed(checkStep(info)))
    return signalPassFailure();
  StepGraph g(info, *tgt, cost == "flops");
  // Simulate the order the measurements bufferize.
  g.simulateHoisted = hoistUpdates;
  RematRun run(info, g);
  run.n = info.saved.size();
  // A cost in its unit: with cost=flops, FLOPs at the target's peak rate.
  auto describeCost = [&](double c) {
    return cost == "flops"
               ? llvm::formatv("{0:e} FLOPs", c * tgt->flopsPerSecond).str()
               : llvm::formatv("{0:e} s", c).str();
  };
  if (!maxRecompute.empty()) {
    StringRef text = StringRef(maxRecompute).trim();
    double stepCost = 0.0, forwardCost = 0.0;
    for (const StepGraph::Node &node : g.nodes) {
      stepCost += node.cost;
      if (node.forward)
        forwardCost += node.cost;
    }
    double percent = 0.0;
    if (text == "forward") {
      run.maxCost = forwardCost;
    } else if (text.consume_back("%") && !text.trim().getAsDouble(percent) &&
               percent >= 0.0 && std::isfinite(percent)) {
      run.maxCost = stepCost * percent / 100.0;
    } else {
      return (void)fail("malformed max-recompute '" + maxRecompute +
                        "' (expected a percentage of the step's cost like "
                        "35%, or forward)");
    }
    run.maxCostText = maxRecompute + " (" + describeCost(run.maxCost) + ")";
  }
  verifySeconds = 0.0;
  milpSummary.clear();
  run.solveStart = std::chrono::steady_clock::now();

  if (parsedBudget && parsedBudget->isDevice)
    run.budgetSource =
        " (budget=auto: the memory of target " + target + ")";
  // The arguments are persistent whatever the plan: a byte budget below
  // them is answered before measuring anything (measuring a step of a few
  // hundred layers costs minutes).
  if (parsedBudget && !parsedBudget->isPercent) {
    int64_t argBytes = 0;
    for (BlockArgument arg : func.getArguments())
      argBytes += mw::detail::tensorBytes(arg.getType());
    if (parsedBudget->bytes < argBytes) {
      mlir::emitError(func.getLoc())
          << "mw-remat: budget " << formatBytes(parsedBudget->bytes)
          << run.budgetSource << " is below the persistent state of @"
          << func.getSymName() << ": its arguments alone are "
          << formatBytes(argBytes)
          << " (parameters, optimizer state, inputs), which no "
             "rematerialization can reduce";
      return signalPassFailure();
    }
  }

  // The save-all program, measured: the reference for percentages and the
  // persistent bytes every candidate shares.
  run.saveAllPlan = planRemat(g, info, llvm::BitVector(run.n, true), Sharing());
  FailureOr<Measurement> saveAll = measure(run.saveAllPlan, false);
  if (failed(saveAll))
    return signalPassFailure();
  run.saveAll = *saveAll;
  if (parsedBudget) {
    run.budgetBytes = parsedBudget->isPercent
                          ? static_cast<int64_t>(std::floor(
                                saveAll->peak() * parsedBudget->percent / 100.0))
                          : parsedBudget->bytes;
    if (run.budgetBytes < saveAll->persistent) {
      mlir::emitError(func.getLoc())
          << "mw-remat: budget " << formatBytes(run.budgetBytes)
          << run.budgetSource << " is below the persistent state of @"
          << func.getSymName() << ", " << formatBytes(saveAll->persistent)
          << " (parameters, optimizer state, inputs, outputs), which no "
             "rematerialization can reduce";
      return signalPassFailure();
    }
    run.arenaBudget = run.budgetBytes - saveAll->persistent;
  }
  // The floor serves a budget and the verbose remark.
  if (run.budgetBytes >= 0 || verbose) {
    std::vector<int64_t> held;
    simulateArena(g, run.saveAllPlan, kAlignment, nullptr, nullptr, &held);
    auto most = std::max_element(held.begin(), held.end());
    if (most != held.end()) {
      run.arenaFloor = *most;
      run.floorNode = most - held.begin();
    }
  }
  // No plan fits where the backward pass's own buffers alone are over the
  // arena's share: say so before searching (near that point the search
  // measures plans that recompute the step hundreds of times over).
  if ((strategy == RematStrategy::Auto || strategy == RematStrategy::Optimal) &&
      run.budgetBytes >= 0 && run.arenaFloor > run.arenaBudget) {
    Operation *at = g.nodes[run.floorNode].op;
    InFlightDiagnostic diag = mlir::emitError(func.getLoc())
        << "mw-remat: budget " << formatBytes(run.budgetBytes)
        << run.budgetSource << " is unreachable for @" << function
        << ": every plan's arena holds at least "
        << formatBytes(run.arenaFloor)
        << ", the backward pass's own buffers at its fullest op (gradients, "
           "gathered parameters, buckets: no recompute changes them), over "
           "the arena's share of the budget, "
        << formatBytes(run.arenaBudget) << " (the persistent state is "
        << formatBytes(saveAll->persistent) << ")";
    diag.attachNote(at->getLoc())
        << "the fullest op of the backward pass: '" << at->getName() << "'"
        << (getLayerPath(at).empty() ? "" : " in " + getLayerPath(at));
    return signalPassFailure();
  }

  if (parsedSaved) {
    int64_t savedAll = 0;
    for (Value v : info.saved)
      savedAll += mw::detail::tensorBytes(v.getType());
    run.savedBudgetBytes =
        parsedSaved->isPercent
            ? static_cast<int64_t>(
                  std::floor(savedAll * parsedSaved->percent / 100.0))
            : parsedSaved->bytes;
  }

  run.chosenName = stringifyRematStrategy(strategy).str();
  run.keep = llvm::BitVector(run.n, true);
  run.result = run.saveAll;
  LogicalResult chosen = failure();
  switch (strategy) {
  case RematStrategy::Auto:
    chosen = parsedBudget || run.savedBudgetBytes >= 0 ? runAuto(run)
                                                       : runFixed(run);
    break;
  case RematStrategy::Optimal:
    chosen = run.savedBudgetBytes >= 0 ? runOptimalSaved(run)
                                       : runOptimal(run);
    break;
  case RematStrategy::None:
  case RematStrategy::All:
  case RematStrategy::EveryK:
  case RematStrategy::Sqrt:
  case RematStrategy::Selective:
    chosen = runFixed(run);
    break;
  case RematStrategy::Revolve:
    chosen = runRevolve(run);
    break;
  }
  if (failed(chosen))
    return signalPassFailure();
  if (!run.withinCost(run.chosen.cost)) {
    InFlightDiagnostic diag = mlir::emitError(func.getLoc());
    diag
        << "mw-remat: strategy=" << stringifyRematStrategy(strategy)
        << "'s plan for @" << function << " recomputes "
        << describeCost(run.chosen.cost)
        << ", over max-recompute=" << run.maxCostText;
    if (strategy == RematStrategy::Optimal && !run.withinCost(run.bound))
      diag << "; no plan under the budget fits within it: every plan "
              "recomputes at least the lower bound, "
           << describeCost(run.bound);
    else if (strategy == RematStrategy::Optimal)
      diag << "; it is the least recompute found under the budget, and the "
              "lower bound, "
           << describeCost(run.bound)
           << ", is within it: a longer time-limit may find a plan that "
              "fits both";
    return signalPassFailure();
  }
  // A plan that recomputes more than the whole step fits, but few would run
  // it: near the smallest peak the cheapest plans recompute long chains for
  // every use. Say so, and how to ask for less.
  if (maxRecompute.empty()) {
    int64_t stepFlops = CostModel(func, *tgt).getTotalFlops();
    if (stepFlops > 0 && run.chosen.flops > stepFlops)
      mlir::emitWarning(func.getLoc())
          << "mw-remat: strategy=" << stringifyRematStrategy(strategy)
          << "'s plan for @" << function << " recomputes "
          << llvm::formatv("{0:F1}", static_cast<double>(run.chosen.flops) /
                                         static_cast<double>(stepFlops))
          << " times the step's FLOPs ("
          << llvm::formatv("{0:e}", static_cast<double>(run.chosen.flops))
          << " against " << llvm::formatv("{0:e}", static_cast<double>(stepFlops))
          << "): the budget is near the smallest peak, where the plans that "
             "fit recompute much of the step; max-recompute=forward "
             "(or NN% of the step) keeps only plans that recompute less, and "
             "reports the budget unreachable within it";
  }
  finish(run);
}

void MwRematPass::finish(RematRun &run) {
  func::FuncOp func = cast<func::FuncOp>(run.info.func.getOperation());
  StepStructure &info = run.info;
  const RematPlan &chosen = run.chosen;
  const llvm::BitVector &keep = run.keep;
  const Measurement &result = run.result;
  StringRef strategyName = stringifyRematStrategy(strategy);
  int64_t stepFlops = CostModel(func, *tgt).getTotalFlops();
  applyPlan(run.g, chosen);
  numKept += chosen.kept;
  numDropped += chosen.dropped;
  numCloned += chosen.clones.size();
  // Bytes kept per layer: the block of the defining op's layer path ("h.3"),
  // else the path itself ("lm_head"), in forward order. `blockBytes` counts
  // the kept bytes of the transformer blocks alone: Megatron-LM's activation
  // memory (Korthikanti et al. 2022) leaves the embeddings, the head and the
  // loss out.
  int64_t savedBytes = 0, blockBytes = 0;
  llvm::MapVector<StringRef, int64_t> keptByLayer;
  llvm::StringSet<> layerNames;
  for (auto [i, v] : llvm::enumerate(info.saved)) {
    std::string name = getLayerPath(v.getDefiningOp());
    bool inBlock = false;
    if (auto split = splitLayerPath(name)) {
      name = split->first;
      inBlock = true;
    }
    if (name.empty())
      name = "unnamed";
    StringRef layer = layerNames.insert(name).first->getKey();
    int64_t bytes = 0;
    if (keep.test(i) || info.forced.test(i))
      bytes = mw::detail::tensorBytes(v.getType());
    savedBytes += bytes;
    if (inBlock)
      blockBytes += bytes;
    keptByLayer[layer] += bytes;
  }
  Builder b(&getContext());
  // A DictionaryAttr sorts its entries; an array of pairs keeps layer order.
  SmallVector<Attribute> layerList;
  for (auto [layer, bytes] : keptByLayer)
    layerList.push_back(
        b.getArrayAttr({b.getStringAttr(layer), b.getI64IntegerAttr(bytes)}));
  func->setAttr("mw.remat.kept_bytes_by_layer", b.getArrayAttr(layerList));
  func->setAttr("mw.remat.strategy", b.getStringAttr(strategyName));
  func->setAttr("mw.remat.saved_activation_bytes",
                b.getI64IntegerAttr(savedBytes));
  func->setAttr("mw.remat.recompute_flops",
                b.getI64IntegerAttr(chosen.flops));
  func->setAttr("mw.remat.step_flops", b.getI64IntegerAttr(stepFlops));
  func->setAttr("mw.remat.recompute_seconds",
                b.getF64FloatAttr(chosen.seconds));
  if (run.budgetBytes >= 0)
    func->setAttr("mw.remat.budget_bytes",
                  b.getI64IntegerAttr(run.budgetBytes));
  if (run.savedBudgetBytes >= 0)
    func->setAttr("mw.remat.saved_budget_bytes",
                  b.getI64IntegerAttr(run.savedBudgetBytes));
  func->setAttr("mw.remat.save_all_peak_bytes",
                b.getI64IntegerAttr(run.saveAll.peak()));
  func->setAttr("mw.remat.peak_bytes", b.getI64IntegerAttr(result.peak()));
  if (!verbose)
    return;
  // Timings vary from run to run, so they go to a remark, never to the IR.
  mlir::emitRemark(func.getLoc())
      << "mw-remat: strategy=" << strategyName << " budget=" << run.budgetBytes
      << " peak=" << result.peak() << " save_all_peak=" << run.saveAll.peak()
      << " arena=" << result.arena
      << " simulated_arena=" << simulateArena(run.g, chosen, kAlignment)
      << " persistent=" << result.persistent
      << " arena_floor=" << run.arenaFloor
      << " saved_budget=" << run.savedBudgetBytes
      << " saved_activation_bytes=" << savedBytes
      << " block_activation_bytes=" << blockBytes
      << " recompute_flops=" << chosen.flops << " step_flops=" << stepFlops
      << " recompute_seconds=" << llvm::formatv("{0:e}", chosen.seconds)
      << " ops=" << run.g.nodes.size()
      << " multi_copy_values=" << countMultiCopy(run.g, chosen)
      << " chosen=\"" << run.chosenName
      << "\""
      << " solve_ms=" << llvm::formatv("{0:F3}", run.solveSeconds * 1e3)
      << " verify_ms=" << llvm::formatv("{0:F3}", verifySeconds * 1e3)
      << " measurements=" << measurements
      << " simulated_packings=" << simulatedPackings
      << " oversized_candidates=" << oversizedCandidates << milpSummary;
}

} // namespace

StringRef mlir::mw::stringifyRematStrategy(RematStrategy strategy) {
  switch (strategy) {
  case RematStrategy::Auto:
    return "auto";
  case RematStrategy::None:
    return "none";
  case RematStrategy::All:
    return "all";
  case RematStrategy::EveryK:
    return "every-k";
  case RematStrategy::Sqrt:
    return "sqrt";
  case RematStrategy::Selective:
    return "selective";
  case RematStrategy::Optimal:
    return "optimal";
  case RematStrategy::Revolve:
    return "revolve";
  }
  llvm_unreachable("unknown RematStrategy");
}
