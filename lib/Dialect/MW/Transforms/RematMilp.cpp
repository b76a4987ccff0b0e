//===- RematMilp.cpp - Checkmate's MILP for --mw-remat --------------------===//
//
// Builds strategy=optimal's MILP (RematMilp.h): drop variables per saved
// value, memory rows where the save-all arena exceeds the budget, and chain
// costs per insertion point; then reads the kept set from the solution.
//
//===----------------------------------------------------------------------===//

#include "RematMilp.h"
#include "memwall/Planning/Milp.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>

using namespace mlir;
using namespace mlir::mw;
using namespace mlir::mw::remat;

namespace {

/// The memory rows both models share: at every op of the save-all program
/// whose simulated live bytes exceed `arenaBudget`, the dropped values dead
/// there free at least the excess. One row per run of ops with the same set
/// of freeable values (the set changes only at a last forward or first
/// backward use), with the largest excess of the run.
void addMemoryRows(memwall::planning::MilpModel &model, const StepGraph &g,
                   const SavedUses &uses, ArrayRef<int> dropVar,
                   const std::vector<int64_t> &base, int64_t arenaBudget) {
  using memwall::planning::MilpModel;
  unsigned n = g.saved.size();
  const SmallVector<int> &firstBwd = uses.firstBwd;
  auto aligned = [](int64_t b) {
    return (b + kAlignment - 1) / kAlignment * kAlignment;
  };
  std::vector<std::vector<int>> startsAt(g.nodes.size() + 1),
      endsAt(g.nodes.size() + 1);
  for (unsigned i = 0; i < n; ++i) {
    if (dropVar[i] < 0)
      continue;
    int from = uses.deadFrom(g, i);
    if (from < firstBwd[i]) {
      startsAt[from].push_back(i);
      endsAt[firstBwd[i]].push_back(i);
    }
  }
  llvm::SetVector<int> active;
  int64_t excess = 0;
  bool dirty = false;
  auto flush = [&]() {
    if (!dirty || excess <= 0)
      return;
    std::vector<std::pair<int, double>> terms;
    for (int i : active)
      terms.push_back(
          {dropVar[i], static_cast<double>(aligned(g.vals[g.saved[i]].bytes))});
    model.addRow(std::move(terms), static_cast<double>(excess),
                 MilpModel::kInfinity);
  };
  for (size_t p = 0; p < g.nodes.size(); ++p) {
    if (!startsAt[p].empty() || !endsAt[p].empty()) {
      flush();
      for (int i : endsAt[p])
        active.remove(i);
      for (int i : startsAt[p])
        active.insert(i);
      excess = 0;
      dirty = false;
    }
    int64_t over = (p < base.size() ? base[p] : 0) - arenaBudget;
    if (over > excess) {
      excess = over;
      dirty = true;
    }
  }
  flush();
}

} // namespace

FailureOr<llvm::BitVector>
remat::solveCheckmateMilp(const StepStructure &info, const StepGraph &g,
                          int64_t arenaBudget, double timeLimit,
                          MilpOutcome &outcome) {
  using memwall::planning::MilpModel;
  using memwall::planning::MilpResult;
  unsigned n = g.saved.size();
  SavedUses uses(g, info);
  const std::vector<int> &savedIndex = uses.savedIndex;
  const SmallVector<int> &firstBwd = uses.firstBwd;
  RematPlan saveAll = planRemat(g, info, llvm::BitVector(n, true), Sharing());
  std::vector<int64_t> base;
  simulateArena(g, saveAll, kAlignment, &base);

  MilpModel model;
  SmallVector<int> dropVar(n, -1);
  for (unsigned i = 0; i < n; ++i)
    if (!info.forced.test(i) && firstBwd[i] != INT_MAX)
      dropVar[i] = model.addVar(0.0, 1.0, 0.0, /*integer=*/true);
  addMemoryRows(model, g, uses, dropVar, base, arenaBudget);
  // Cost: chains per insertion point.
  std::map<int, SmallVector<unsigned>> byPoint;
  for (unsigned i = 0; i < n; ++i)
    if (dropVar[i] >= 0)
      byPoint[firstBwd[i]].push_back(i);
  const std::vector<char> &forcedValue = uses.forcedValue;
  for (auto &[t, direct] : byPoint) {
    llvm::DenseMap<int, int> var; // forward node -> x[t, node]
    SmallVector<int> work;
    auto chainVar = [&](int node) {
      auto [it, inserted] = var.try_emplace(node, -1);
      if (inserted) {
        it->second = model.addVar(0.0, 1.0, g.nodes[node].cost * 1e6,
                                  /*integer=*/false);
        work.push_back(node);
      }
      return it->second;
    };
    for (unsigned i : direct)
      model.addRow({{chainVar(g.vals[g.saved[i]].def), 1.0}, {dropVar[i], -1.0}},
                   0.0, MilpModel::kInfinity);
    while (!work.empty()) {
      int o = work.pop_back_val();
      int xo = var.lookup(o);
      const StepGraph::Node &node = g.nodes[o];
      for (unsigned k = 0; k < node.numDirect; ++k) {
        int u = node.operands[k];
        int def = g.vals[u].def;
        if (def < 0 || !g.nodes[def].forward || forcedValue[u])
          continue;
        int i = savedIndex[u];
        if (i >= 0 && uses.aliveAt(i, t))
          continue; // u's own recomputed copy is alive at t
        if (i >= 0 && dropVar[i] < 0)
          continue; // kept (no backward use is impossible for saved)
        int xdef = chainVar(def);
        if (i >= 0)
          model.addRow({{xdef, 1.0}, {xo, -1.0}, {dropVar[i], -1.0}}, -1.0,
                       MilpModel::kInfinity);
        else
          model.addRow({{xdef, 1.0}, {xo, -1.0}}, 0.0, MilpModel::kInfinity);
      }
    }
  }
  MilpResult result = memwall::planning::solveMilp(model, timeLimit);
  outcome.summary = llvm::formatv(" milp_status={0} milp_objective={1} "
                              "milp_bound={2} milp_gap={3} milp_vars={4} "
                              "milp_rows={5}",
                              memwall::planning::toString(result.status),
                              result.objective * 1e-6, result.bound * 1e-6,
                              result.gap, model.vars.size(), model.rows.size())
                    .str();
  outcome.status = memwall::planning::toString(result.status);
  if (result.status != MilpResult::Status::Optimal &&
      result.status != MilpResult::Status::Feasible) {
    if (result.status == MilpResult::Status::Error)
      mlir::emitError(info.func->getLoc())
          << "mw-remat: the MILP solver failed: " << result.message;
    return failure();
  }
  llvm::BitVector keep(n, true);
  for (unsigned i = 0; i < n; ++i)
    if (dropVar[i] >= 0 && result.x[dropVar[i]] > 0.5)
      keep.reset(i);
  return keep;
}

CoverBound remat::solveCoverBound(const StepStructure &info,
                                  const StepGraph &g, int64_t arenaBudget,
                                  double timeLimit) {
  using memwall::planning::MilpModel;
  using memwall::planning::MilpResult;
  unsigned n = g.saved.size();
  SavedUses uses(g, info);
  RematPlan saveAll = planRemat(g, info, llvm::BitVector(n, true), Sharing());
  std::vector<int64_t> base;
  simulateArena(g, saveAll, kAlignment, &base);

  // Costs in millionths of the forward pass's cost, so that CBC's absolute
  // tolerances mean the same on gpt2-tiny and on gpt2-medium.
  double forwardCost = 0.0;
  for (const StepGraph::Node &node : g.nodes)
    if (node.forward)
      forwardCost += node.cost;
  double scale = forwardCost > 0.0 ? 1e6 / forwardCost : 1.0;

  MilpModel model;
  SmallVector<int> dropVar(n, -1);
  for (unsigned i = 0; i < n; ++i)
    if (!info.forced.test(i) && uses.firstBwd[i] != INT_MAX)
      dropVar[i] = model.addVar(0.0, 1.0, 0.0, /*integer=*/true);
  addMemoryRows(model, g, uses, dropVar, base, arenaBudget);

  // One y per forward op, over the whole backward pass (perfect sharing):
  // y[def(v)] >= d_v, and y[def(u)] >= y[o] for every operand u of a
  // reached op o that is a forward intermediate (not saved, so never alive
  // in the backward pass: any plan recomputes it to recompute o).
  llvm::DenseMap<int, int> opVar;
  SmallVector<int> work;
  auto yVar = [&](int node) {
    auto [it, inserted] = opVar.try_emplace(node, -1);
    if (inserted) {
      it->second = model.addVar(0.0, 1.0, g.nodes[node].cost * scale,
                                /*integer=*/false);
      work.push_back(node);
    }
    return it->second;
  };
  for (unsigned i = 0; i < n; ++i)
    if (dropVar[i] >= 0)
      model.addRow({{yVar(g.vals[g.saved[i]].def), 1.0}, {dropVar[i], -1.0}},
                   0.0, MilpModel::kInfinity);
  while (!work.empty()) {
    int o = work.pop_back_val();
    int yo = opVar.lookup(o);
    const StepGraph::Node &node = g.nodes[o];
    llvm::SmallSetVector<int, 4> defs;
    for (unsigned k = 0; k < node.numDirect; ++k) {
      int u = node.operands[k];
      int def = g.vals[u].def;
      if (def < 0 || !g.nodes[def].forward || uses.forcedValue[u] ||
          uses.savedIndex[u] >= 0)
        continue; // an argument, a kept-or-dropped saved value, a forced one
      defs.insert(def);
    }
    for (int def : defs)
      model.addRow({{yVar(def), 1.0}, {yo, -1.0}}, 0.0, MilpModel::kInfinity);
  }

  MilpResult result = memwall::planning::solveMilp(model, timeLimit, kBoundGap);
  CoverBound out;
  out.status = memwall::planning::toString(result.status);
  out.vars = model.vars.size();
  out.rows = model.rows.size();
  out.seconds = result.seconds;
  switch (result.status) {
  case MilpResult::Status::Error:
    out.error = result.message;
    return out;
  case MilpResult::Status::Infeasible:
    out.infeasible = true;
    return out;
  case MilpResult::Status::NoSolution:
    // No incumbent, and CBC's bound is not reported without one: the LP
    // relaxation's zero is all that is known.
    out.bound = 0.0;
    return out;
  case MilpResult::Status::Optimal:
  case MilpResult::Status::Feasible:
    break;
  }
  out.bound = std::max(0.0, result.bound) / scale;
  out.objective = result.objective / scale;
  llvm::BitVector keep(n, true);
  for (unsigned i = 0; i < n; ++i)
    if (dropVar[i] >= 0 && result.x[dropVar[i]] > 0.5)
      keep.reset(i);
  out.keep = std::move(keep);
  return out;
}
