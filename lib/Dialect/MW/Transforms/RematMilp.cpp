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

#include <algorithm>
#include <chrono>
#include <functional>
#include <climits>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

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

//===----------------------------------------------------------------------===//
// The saved-bytes problem
//===----------------------------------------------------------------------===//

namespace {

using Int = __int128;

/// Dinic's max-flow on a small graph with exact integer capacities.
class MaxFlow {
public:
  explicit MaxFlow(int n) : adj(n), level(n), iter(n) {}
  void addEdge(int from, int to, Int cap) {
    adj[from].push_back(static_cast<int>(edges.size()));
    edges.push_back({to, cap});
    adj[to].push_back(static_cast<int>(edges.size()));
    edges.push_back({from, 0});
  }
  void run(int s, int t) {
    while (bfs(s, t)) {
      std::fill(iter.begin(), iter.end(), 0);
      while (dfs(s, t, kInf) > 0) {
      }
    }
  }
  /// The nodes reachable from `s` in the residual graph: the source side of
  /// the minimum cut with the fewest nodes.
  std::vector<char> sourceSide(int s) const {
    std::vector<char> seen(adj.size(), 0);
    std::vector<int> work{s};
    seen[s] = 1;
    while (!work.empty()) {
      int u = work.back();
      work.pop_back();
      for (int e : adj[u])
        if (edges[e].cap > 0 && !seen[edges[e].to]) {
          seen[edges[e].to] = 1;
          work.push_back(edges[e].to);
        }
    }
    return seen;
  }
  static constexpr Int kInf = Int(1) << 120;

private:
  struct Edge {
    int to;
    Int cap;
  };
  bool bfs(int s, int t) {
    std::fill(level.begin(), level.end(), -1);
    std::vector<int> queue{s};
    level[s] = 0;
    for (size_t h = 0; h < queue.size(); ++h) {
      int u = queue[h];
      for (int e : adj[u])
        if (edges[e].cap > 0 && level[edges[e].to] < 0) {
          level[edges[e].to] = level[u] + 1;
          queue.push_back(edges[e].to);
        }
    }
    return level[t] >= 0;
  }
  Int dfs(int u, int t, Int f) {
    if (u == t)
      return f;
    for (int &i = iter[u]; i < static_cast<int>(adj[u].size()); ++i) {
      Edge &e = edges[adj[u][i]];
      if (e.cap <= 0 || level[e.to] != level[u] + 1)
        continue;
      Int d = dfs(e.to, t, std::min(f, e.cap));
      if (d > 0) {
        e.cap -= d;
        edges[adj[u][i] ^ 1].cap += d;
        return d;
      }
    }
    return 0;
  }
  std::vector<Edge> edges;
  std::vector<std::vector<int>> adj;
  std::vector<int> level, iter;
};

/// The minimal closed set minimizing q * cost(R) - p * gain(R) (price per
/// byte p / q): a minimal maximum-weight closure with weights p gain - q
/// cost, by one max-flow.
HullPoint probe(const ClosureKnapsack &p, Int price, Int per) {
  int n = p.size(), s = n, t = n + 1;
  MaxFlow flow(n + 2);
  for (int i = 0; i < n; ++i) {
    Int w = price * p.gain[i] - per * p.cost[i];
    if (w > 0)
      flow.addEdge(s, i, w);
    else if (w < 0)
      flow.addEdge(i, t, -w);
  }
  for (auto [a, b] : p.prereqs)
    flow.addEdge(a, b, MaxFlow::kInf);
  flow.run(s, t);
  std::vector<char> side = flow.sourceSide(s);
  HullPoint h;
  h.chosen.assign(side.begin(), side.begin() + n);
  for (int i = 0; i < n; ++i)
    if (h.chosen[i]) {
      h.gain += p.gain[i];
      h.cost += p.cost[i];
    }
  return h;
}

/// The lower convex hull of (gain, cost) over a problem's solutions, given
/// `probe(price, per)`: a solution minimizing per * cost - price * gain (the
/// least gain among those). Price 0 gives the cheapest, a price above the
/// total cost per unit of gain the largest gain (costs and gains are
/// integers, costs never negative).
template <typename Probe>
std::vector<HullPoint> lowerHull(Int totalCost, Probe &&probe) {
  std::vector<HullPoint> points{probe(Int(0), Int(1)),
                                probe(totalCost + 1, Int(1))};
  if (points[1].gain <= points[0].gain) {
    points.pop_back();
    return points;
  }
  // Eisner-Severance: probe at the price where the lines of two adjacent
  // points meet; a point strictly below both lies between them on the hull.
  std::vector<std::pair<size_t, size_t>> work{{0, 1}};
  while (!work.empty()) {
    auto [a, b] = work.back();
    work.pop_back();
    Int price = Int(points[b].cost) - points[a].cost;
    Int per = Int(points[b].gain) - points[a].gain;
    HullPoint h = probe(price, per);
    Int value = per * h.cost - price * h.gain;
    Int line = per * points[a].cost - price * points[a].gain;
    if (value >= line || h.gain <= points[a].gain || h.gain >= points[b].gain)
      continue;
    points.push_back(std::move(h));
    size_t c = points.size() - 1;
    work.push_back({c, b});
    work.push_back({a, c});
  }
  std::stable_sort(points.begin(), points.end(),
                   [](const HullPoint &x, const HullPoint &y) {
                     return x.gain < y.gain;
                   });
  return points;
}

} // namespace

std::vector<HullPoint> remat::closureHull(const ClosureKnapsack &p) {
  Int totalCost = 0;
  for (int64_t c : p.cost)
    totalCost += c;
  return lowerHull(totalCost,
                   [&](Int price, Int per) { return probe(p, price, per); });
}

double remat::hullBound(const std::vector<HullPoint> &hull, int64_t need) {
  for (size_t k = 0; k < hull.size(); ++k) {
    if (hull[k].gain < need)
      continue;
    if (k == 0)
      return static_cast<double>(hull[0].cost);
    const HullPoint &a = hull[k - 1], &b = hull[k];
    // Exact in rationals, then rounded up to the integer the optimum is.
    Int num = Int(need - a.gain) * (Int(b.cost) - a.cost);
    Int den = Int(b.gain) - a.gain;
    Int up = (num + den - 1) / den;
    return static_cast<double>(Int(a.cost) + up);
  }
  return std::numeric_limits<double>::infinity();
}

ClosureKnapsackResult
remat::solveClosureKnapsack(const ClosureKnapsack &p, int64_t need,
                            double timeLimit,
                            const std::vector<HullPoint> *givenHull) {
  using memwall::planning::MilpModel;
  using memwall::planning::MilpResult;
  auto start = std::chrono::steady_clock::now();
  ClosureKnapsackResult r;
  auto done = [&](StringRef status) {
    r.status = status.str();
    r.seconds = std::chrono::duration<double>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    return r;
  };
  std::vector<HullPoint> own;
  if (!givenHull)
    own = closureHull(p);
  const std::vector<HullPoint> &hull = givenHull ? *givenHull : own;
  r.hullPoints = hull.size();
  r.bound = r.hullBound = hullBound(hull, need);
  if (std::isinf(r.bound))
    return done("infeasible");
  const HullPoint *incumbent = nullptr;
  for (const HullPoint &h : hull)
    if (h.gain >= need) {
      incumbent = &h;
      break;
    }
  r.chosen = incumbent->chosen;
  r.cost = r.hullCost = incumbent->cost;
  r.gain = incumbent->gain;
  r.source = "hull";
  if (r.cost <= r.bound)
    return done("optimal");

  // The MILP on the ops that matter: those freeing bytes and what they
  // require, transitively. Costs and gains divided by their gcd keep CBC's
  // tolerances far below one unit. A row asks for strictly less than the
  // incumbent: infeasible proves the incumbent optimal.
  int n = p.size();
  std::vector<std::vector<int>> needs(n);
  for (auto [a, b] : p.prereqs)
    needs[a].push_back(b);
  std::vector<int> var(n, -1);
  std::vector<int> order;
  for (int i = 0; i < n; ++i)
    if (p.gain[i] > 0 && var[i] < 0) {
      std::vector<int> work{i};
      var[i] = 0;
      while (!work.empty()) {
        int u = work.back();
        work.pop_back();
        order.push_back(u);
        for (int b : needs[u])
          if (var[b] < 0) {
            var[b] = 0;
            work.push_back(b);
          }
      }
    }
  std::sort(order.begin(), order.end());
  int64_t costGcd = 0, gainGcd = 0;
  for (int i : order) {
    costGcd = std::gcd(costGcd, p.cost[i]);
    gainGcd = std::gcd(gainGcd, p.gain[i]);
  }
  costGcd = std::max<int64_t>(costGcd, 1);
  gainGcd = std::max<int64_t>(gainGcd, 1);
  MilpModel model;
  for (int i : order)
    var[i] = model.addVar(0.0, 1.0, double(p.cost[i] / costGcd), true);
  for (auto [a, b] : p.prereqs)
    if (var[a] >= 0)
      model.addRow({{var[a], 1.0}, {var[b], -1.0}}, -MilpModel::kInfinity,
                   0.0);
  std::vector<std::pair<int, double>> knapsack, objective;
  for (int i : order) {
    if (p.gain[i])
      knapsack.push_back({var[i], double(p.gain[i] / gainGcd)});
    if (p.cost[i])
      objective.push_back({var[i], double(p.cost[i] / costGcd)});
  }
  // ceil(need / gcd): the gains are multiples of it.
  model.addRow(std::move(knapsack), double((need + gainGcd - 1) / gainGcd),
               MilpModel::kInfinity);
  model.addRow(std::move(objective), -MilpModel::kInfinity,
               double((r.cost - 1) / costGcd) + 0.5);
  r.vars = model.vars.size();
  r.rows = model.rows.size();
  double left = timeLimit - std::chrono::duration<double>(
                                std::chrono::steady_clock::now() - start)
                                .count();
  MilpResult m = memwall::planning::solveMilp(model, std::max(left, 0.01));
  switch (m.status) {
  case MilpResult::Status::Infeasible:
    r.bound = r.cost;
    return done("optimal");
  case MilpResult::Status::Optimal:
  case MilpResult::Status::Feasible: {
    std::vector<char> chosen(n, 0);
    int64_t cost = 0, gain = 0;
    for (int i : order)
      if (m.x[var[i]] > 0.5) {
        chosen[i] = 1;
        cost += p.cost[i];
        gain += p.gain[i];
      }
    if (gain >= need && cost < r.cost) {
      r.chosen = std::move(chosen);
      r.cost = cost;
      r.gain = gain;
      r.source = "cbc";
    }
    if (m.status == MilpResult::Status::Optimal) {
      r.bound = r.cost;
      return done("optimal");
    }
    r.bound = std::max(r.bound, std::ceil(m.bound * costGcd - 1e-6));
    r.bound = std::min<double>(r.bound, r.cost);
    return done(r.cost <= r.bound ? "optimal" : "feasible");
  }
  case MilpResult::Status::NoSolution:
    return done("feasible");
  case MilpResult::Status::Error:
    r.message = m.message;
    return done("error");
  }
  return done("error");
}

ClosureKnapsack remat::savedBytesProblem(const StepGraph &g,
                                         const StepStructure &info,
                                         bool flopsCost) {
  SavedUses uses(g, info);
  ClosureKnapsack p;
  int n = g.nodes.size();
  p.cost.assign(n, 0);
  p.gain.assign(n, 0);
  auto droppable = [&](int v) {
    int i = uses.savedIndex[v];
    return i >= 0 && uses.firstBwd[i] != INT_MAX;
  };
  for (int j = 0; j < n; ++j) {
    const StepGraph::Node &node = g.nodes[j];
    if (!node.forward)
      continue;
    for (int r : node.results)
      if (droppable(r))
        p.gain[j] += g.vals[r].bytes;
    if (node.constant)
      continue;
    p.cost[j] = flopsCost ? node.flops
                          : static_cast<int64_t>(std::llround(
                                node.seconds / kTimeUnit));
    for (unsigned o = 0; o < node.numDirect; ++o) {
      int u = node.operands[o];
      int def = g.vals[u].def;
      if (def < 0 || !g.nodes[def].forward || g.nodes[def].constant ||
          uses.savedIndex[u] >= 0 || uses.forcedValue[u])
        continue;
      p.prereqs.push_back({j, def});
    }
  }
  std::sort(p.prereqs.begin(), p.prereqs.end());
  p.prereqs.erase(std::unique(p.prereqs.begin(), p.prereqs.end()),
                   p.prereqs.end());
  return p;
}

llvm::BitVector remat::keptSetOf(const StepGraph &g, const StepStructure &info,
                                 const std::vector<char> &chosen) {
  SavedUses uses(g, info);
  llvm::BitVector keep(g.saved.size(), true);
  for (auto [i, v] : llvm::enumerate(g.saved))
    if (!info.forced.test(i) && uses.firstBwd[i] != INT_MAX &&
        chosen[g.vals[v].def])
      keep.reset(i);
  return keep;
}

//===----------------------------------------------------------------------===//
// The peak bound
//===----------------------------------------------------------------------===//

double remat::livePointBound(const LivePointProblem &p) {
  int n = p.cost.size(), m = p.bytes.size();
  std::vector<char> demanded(m, 0);
  int64_t demandBytes = 0;
  for (int w : p.demand)
    if (!demanded[w]) {
      demanded[w] = 1;
      demandBytes += p.bytes[w];
    }
  int64_t need = demandBytes - p.capacity;
  if (need <= 0)
    return 0.0;
  Int totalCost = 0;
  for (int64_t c : p.cost)
    totalCost += c;
  // Nodes: source, sink, one per op (source side: cloned after t), one per
  // value (source side: needed after t). A needed value not made by R is
  // live at t: the cut edge value -> its op.
  auto probeAt = [&](Int price, Int per) {
    int s = 0, t = 1;
    MaxFlow flow(2 + n + m);
    auto opNode = [&](int i) { return 2 + i; };
    auto valNode = [&](int v) { return 2 + n + v; };
    for (int i = 0; i < n; ++i) {
      if (p.cost[i] > 0)
        flow.addEdge(opNode(i), t, per * p.cost[i]);
      for (int u : p.reads[i])
        flow.addEdge(opNode(i), valNode(u), MaxFlow::kInf);
    }
    for (int v = 0; v < m; ++v) {
      if (demanded[v])
        flow.addEdge(s, valNode(v), MaxFlow::kInf);
      if (p.bytes[v] > 0)
        flow.addEdge(valNode(v), p.def[v] < 0 ? t : opNode(p.def[v]),
                     price * p.bytes[v]);
    }
    flow.run(s, t);
    std::vector<char> side = flow.sourceSide(s);
    HullPoint h;
    h.chosen.assign(n, 0);
    for (int i = 0; i < n; ++i)
      if (side[opNode(i)]) {
        h.chosen[i] = 1;
        h.cost += p.cost[i];
      }
    int64_t live = 0;
    for (int v = 0; v < m; ++v)
      if (side[valNode(v)] && (p.def[v] < 0 || !h.chosen[p.def[v]]))
        live += p.bytes[v];
    h.gain = demandBytes - live;
    return h;
  };
  return hullBound(lowerHull(totalCost, probeAt), need);
}

PeakModel remat::buildPeakModel(const StepStructure &info,
                                const StepGraph &g, int64_t arenaBudget,
                                bool flopsCost) {
  PeakModel m;
  m.arenaBudget = arenaBudget;
  SavedUses uses(g, info);
  int numNodes = g.nodes.size(), numVals = g.vals.size();
  auto aligned = [](int64_t b) {
    return (b + kAlignment - 1) / kAlignment * kAlignment;
  };
  // Buffers: a view (a reshape, or a transpose or slice folded for every
  // copy) is its operand's buffer, an optimizer update writes its
  // operand's; a value stands for its root's buffer.
  std::vector<char> isView = alwaysViews(g);
  std::vector<int> root(numVals);
  std::iota(root.begin(), root.end(), 0);
  std::vector<char> returned(numVals, 0);
  for (int j = 0; j < numNodes; ++j) {
    const StepGraph::Node &node = g.nodes[j];
    for (int v : node.operands)
      if (node.terminator)
        returned[v] = 1;
    for (auto [ri, r] : llvm::enumerate(node.results)) {
      if (isView[j])
        root[r] = root[node.operands[0]];
      else if (node.tied[ri] >= 0)
        root[r] = root[node.operands[node.tied[ri]]];
    }
  }
  auto isForwardValue = [&](int v) {
    int def = g.vals[v].def;
    return def >= 0 && g.nodes[def].forward;
  };
  // Forward buffers any plan has for free: arguments, and those the step
  // returns or must keep (outside the arena, or always kept).
  std::vector<char> freeRoot(numVals, 0);
  for (int v = 0; v < numVals; ++v)
    if (g.vals[v].def < 0 || returned[v] || uses.forcedValue[v])
      freeRoot[root[v]] = 1;

  // What every plan holds at each op: the buffers of backward values, which
  // no plan changes (clones read forward values only), as the arena
  // simulation places them (RematGraph.h, simulateArena's
  // backwardProfile: --mw-fold-views' concatenations and views included, a
  // buffer a backward value takes over from a forward one counted only
  // after the op that takes it).
  std::vector<char> inArena;
  {
    RematPlan saveAll;
    saveAll.numValues = numVals;
    simulateArena(g, saveAll, kAlignment, nullptr, nullptr, &m.held,
                  &inArena);
  }

  // The forward ops a plan may clone and the buffers they need.
  std::vector<int> item(numNodes, -1), valIndex(numVals, -1);
  for (int j = 0; j < numNodes; ++j) {
    const StepGraph::Node &node = g.nodes[j];
    if (!node.forward || node.constant || isView[j])
      continue;
    item[j] = m.ops.cost.size();
    m.nodeOfOp.push_back(j);
    m.ops.cost.push_back(flopsCost ? node.flops
                                   : static_cast<int64_t>(std::llround(
                                         node.seconds / kTimeUnit)));
  }
  // A constant is never cloned (clones read the step's own) and
  // --mw-form-kernels gives it an arena buffer from the top of the step to
  // its last read: a buffer no op remakes (def -1).
  auto valueOf = [&](int v) {
    int r = root[v];
    if (freeRoot[r] || !isForwardValue(r))
      return -1;
    bool constant = g.nodes[g.vals[r].def].constant;
    if (!constant && item[g.vals[r].def] < 0)
      return -1;
    if (valIndex[r] < 0) {
      valIndex[r] = m.ops.bytes.size();
      m.ops.bytes.push_back(aligned(g.vals[r].bytes));
      m.ops.def.push_back(constant ? -1 : item[g.vals[r].def]);
      m.keepable.push_back(constant);
      m.madeAt.push_back(constant ? -1 : g.vals[r].def);
    }
    return valIndex[r];
  };
  m.ops.reads.resize(m.ops.cost.size());
  for (int j = 0; j < numNodes; ++j) {
    if (item[j] < 0)
      continue;
    const StepGraph::Node &node = g.nodes[j];
    std::vector<int> &reads = m.ops.reads[item[j]];
    for (unsigned k = 0; k < node.numDirect; ++k) {
      int u = valueOf(node.operands[k]);
      if (u >= 0 && llvm::find(reads, u) == reads.end())
        reads.push_back(u);
    }
  }
  // The backward reads of each forward buffer, in op order.
  for (int j = 0; j < numNodes; ++j) {
    if (!g.isBackward(j))
      continue;
    if (m.boundary < 0)
      m.boundary = j - 1;
    for (int v : g.nodes[j].operands)
      if (isForwardValue(v)) {
        int u = valueOf(v);
        if (u < 0)
          continue;
        if (m.readBy.size() < m.ops.bytes.size())
          m.readBy.resize(m.ops.bytes.size());
        if (m.readBy[u].empty() || m.readBy[u].back() != j)
          m.readBy[u].push_back(j);
      }
  }
  m.readBy.resize(m.ops.bytes.size());
  // A buffer the backward pass may start with: a saved value's (what a
  // plan keeps) or a constant's. Intermediates are dead by then. (A saved
  // value has a backward read, so it has its buffer already.)
  for (int v : g.saved) {
    int r = root[v];
    if (valIndex[r] >= 0)
      m.keepable[valIndex[r]] = 1;
  }
  m.lastRead.assign(m.ops.bytes.size(), -1);
  for (auto [u, reads] : llvm::enumerate(m.readBy))
    if (!reads.empty())
      m.lastRead[u] = reads.back();
  // The forward reads (views included: a view's reads are its root's) of
  // the buffers in the arena: one the simulation puts outside it (an
  // accumulated loss that the returned one is computed in place of) is not
  // held there.
  m.lastForwardRead.assign(m.ops.bytes.size(), -1);
  for (int j = 0; j < numNodes; ++j)
    if (g.nodes[j].forward)
      for (int v : g.nodes[j].operands)
        if (int u = valIndex[root[v]]; u >= 0 && inArena[root[v]])
          m.lastForwardRead[u] = std::max(m.lastForwardRead[u], j);

  // Time points: runs of backward ops with the same demands (they shrink
  // at each last read), each at its largest unavoidable bytes.
  std::vector<int> cuts(m.lastRead.begin(), m.lastRead.end());
  llvm::sort(cuts);
  int best = -1;
  auto close = [&]() {
    if (best < 0)
      return;
    int64_t demand = 0;
    for (int u = 0, e = m.lastRead.size(); u < e; ++u)
      if (m.demanded(u, best))
        demand += m.ops.bytes[u];
    m.points.push_back({best, demand + m.held[best] - arenaBudget});
    best = -1;
  };
  size_t c = 0;
  for (int j = 0; j < numNodes; ++j) {
    // A value last read before j is no longer demanded at j: a new run.
    bool boundary = false;
    while (c < cuts.size() && cuts[c] < j) {
      boundary = true;
      ++c;
    }
    if (boundary)
      close();
    if (!g.isBackward(j))
      continue;
    if (best < 0 || m.held[j] > m.held[best])
      best = j;
  }
  close();
  return m;
}

PeakBound remat::solvePeakBound(const PeakModel &m, double timeLimit) {
  auto start = std::chrono::steady_clock::now();
  PeakBound out;
  auto finish = [&]() {
    out.seconds = std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - start)
                      .count();
    return out;
  };
  out.points = m.points.size();
  for (const PeakModel::Point &pt : m.points)
    if (m.held[pt.t] > m.arenaBudget) {
      out.infeasible = true;
      out.point = pt.t;
      return finish();
    }
  std::vector<PeakModel::Point> order = m.points;
  std::stable_sort(order.begin(), order.end(),
                   [](const PeakModel::Point &a, const PeakModel::Point &b) {
                     return a.excess > b.excess;
                   });
  for (const PeakModel::Point &pt : order) {
    if (pt.excess <= 0)
      break;
    if (out.evaluated > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                      start)
                .count() > timeLimit)
      break;
    LivePointProblem p = m.ops;
    // A buffer made after t (a later micro-batch's forward) is made by its
    // own forward op, free: neither demanded nor read from a copy at t.
    for (std::vector<int> &reads : p.reads)
      llvm::erase_if(reads, [&](int u) { return m.madeAt[u] > pt.t; });
    for (int u = 0, e = m.lastRead.size(); u < e; ++u)
      if (m.demanded(u, pt.t)) {
        p.demand.push_back(u);
        // An original a later forward op reads stays: no clone frees it.
        if (m.originalLive(u, pt.t))
          p.def[u] = -1;
      }
    p.capacity = m.arenaBudget - m.held[pt.t];
    double b = livePointBound(p);
    ++out.evaluated;
    if (std::isinf(b)) {
      out.infeasible = true;
      out.point = pt.t;
      return finish();
    }
    if (b > out.bound) {
      out.bound = b;
      out.point = pt.t;
    }
  }
  return finish();
}

StagedBound remat::solveStagedBound(const PeakModel &m, ArrayRef<int> times,
                                    ArrayRef<int64_t> tighten,
                                    double timeLimit, double relativeGap) {
  using memwall::planning::MilpModel;
  StagedBound out;
  const LivePointProblem &ops = m.ops;
  int n = ops.cost.size(), nv = ops.bytes.size(), k = times.size();
  MilpModel model;
  // Costs in units of the largest (conditioning): the bound is scaled back.
  int64_t maxCost = 1;
  for (int64_t c : ops.cost)
    maxCost = std::max(maxCost, c);
  double costUnit = static_cast<double>(maxCost);
  // Per stage s (after times[s], up to and including times[s + 1]): Y, op
  // i cloned in the stage; X, cloned in the stage or a later one; L, a
  // copy of buffer v live at times[s].
  std::vector<int> yVar(static_cast<size_t>(k) * n),
      xVar(static_cast<size_t>(k) * n), lVar(static_cast<size_t>(k) * nv);
  auto Y = [&](int s, int i) { return yVar[static_cast<size_t>(s) * n + i]; };
  auto X = [&](int s, int i) { return xVar[static_cast<size_t>(s) * n + i]; };
  auto L = [&](int s, int v) { return lVar[static_cast<size_t>(s) * nv + v]; };
  for (int s = 0; s < k; ++s)
    for (int i = 0; i < n; ++i)
      yVar[static_cast<size_t>(s) * n + i] =
          model.addVar(0.0, 1.0, ops.cost[i] / costUnit, true);
  for (int s = 0; s < k; ++s)
    for (int v = 0; v < nv; ++v) {
      // An original a later forward op still reads is live, in every plan.
      double ub = s == 0 && !m.keepable[v] ? 0.0 : 1.0;
      double lb = m.originalLive(v, times[s]) ? ub : 0.0;
      lVar[static_cast<size_t>(s) * nv + v] = model.addVar(lb, ub, 0.0, true);
    }
  for (int s = 0; s < k; ++s)
    for (int i = 0; i < n; ++i)
      xVar[static_cast<size_t>(s) * n + i] = model.addVar(0.0, 1.0, 0.0, false);
  constexpr double inf = MilpModel::kInfinity;
  // "a copy of v is at hand in stage s": live at times[s], or made in the
  // stage (Y) or in it or later (X).
  auto atHand = [&](int s, int v, bool later) {
    std::vector<std::pair<int, double>> terms{{L(s, v), 1.0}};
    if (ops.def[v] >= 0)
      terms.push_back({later ? X(s, ops.def[v]) : Y(s, ops.def[v]), 1.0});
    return terms;
  };
  // The stage whose stretch makes the original of v (a later micro-batch's
  // forward inside the backward pass), -1 when it is made before times[0]:
  // there the original is at hand for free, and it may be live at the next
  // point without a clone.
  std::vector<int> madeIn(nv, -1);
  for (int v = 0; v < nv; ++v)
    if (m.madeAt[v] > times[0])
      madeIn[v] = llvm::lower_bound(times, m.madeAt[v]) - times.begin() - 1;
  auto originalFree = [&](int s, int v, bool later) {
    return madeIn[v] >= 0 && (later ? madeIn[v] >= s : madeIn[v] == s);
  };
  // A clone of op i in stage s (later: in it or a later one, X) reads
  // copies at hand there.
  auto cloneReads = [&](int s, int i, bool later) {
    for (int u : ops.reads[i]) {
      if (originalFree(s, u, later))
        continue;
      std::vector<std::pair<int, double>> terms = atHand(s, u, later);
      terms.push_back({later ? X(s, i) : Y(s, i), -1.0});
      model.addRow(std::move(terms), 0.0, inf);
    }
  };
  // Backward reads: one at times[s] itself reads a copy live there; one
  // inside stage s, a copy live at times[s] or made in the stage.
  for (int v = 0; v < nv; ++v) {
    std::vector<char> readIn(k, 0);
    int s = 0;
    for (int q : m.readBy[v]) {
      if (q <= times[0])
        continue;
      while (s + 1 < k && times[s + 1] < q)
        ++s;
      if (s + 1 < k && times[s + 1] == q)
        model.vars[L(s + 1, v)].lo = 1.0;
      else
        readIn[s] = 1;
    }
    for (int t = 0; t < k; ++t)
      if (readIn[t] && !originalFree(t, v, false))
        model.addRow(atHand(t, v, false), 1.0, inf);
  }
  for (int s = 0; s < k; ++s) {
    // A clone reads copies at hand in its stage.
    for (int i = 0; i < n; ++i)
      cloneReads(s, i, false);
    // A copy live at times[s] was live at times[s - 1] or made in between.
    if (s > 0)
      for (int v = 0; v < nv; ++v) {
        if (madeIn[v] == s - 1)
          continue;
        std::vector<std::pair<int, double>> terms{{L(s, v), 1.0},
                                                  {L(s - 1, v), -1.0}};
        if (ops.def[v] >= 0)
          terms.push_back({Y(s - 1, ops.def[v]), -1.0});
        model.addRow(std::move(terms), -inf, 0.0);
      }
    // The arena at times[s] (not at the boundary, times[0]); bytes in units
    // of the alignment, which every buffer is a multiple of.
    if (s == 0)
      continue;
    std::vector<std::pair<int, double>> terms;
    for (int v = 0; v < nv; ++v)
      if (ops.bytes[v] > 0)
        terms.push_back(
            {L(s, v), static_cast<double>(ops.bytes[v] / kAlignment)});
    int64_t room = m.arenaBudget - m.held[times[s]] -
                   (s < static_cast<int>(tighten.size()) ? tighten[s] : 0);
    model.addRow(std::move(terms), -inf,
                 std::floor(static_cast<double>(room) / kAlignment));
  }
  // The same with "cloned in the stage or a later one" (X): redundant for
  // 0/1 points, but they make the LP relaxation at least as tight as every
  // single point's (livePointBound). (The order of the rows matters to
  // CBC: these last, and X's sum over the later stages written out rather
  // than chained through X[s + 1], the same polytope, took it minutes
  // where it takes seconds on GPT-2 small.)
  for (int s = 0; s < k; ++s) {
    for (int i = 0; i < n; ++i) {
      std::vector<std::pair<int, double>> later{{X(s, i), 1.0}};
      for (int t = s; t < k; ++t)
        later.push_back({Y(t, i), -1.0});
      model.addRow(std::move(later), -inf, 0.0);
      if (s + 1 < k)
        model.addRow({{X(s, i), 1.0}, {X(s + 1, i), -1.0}}, 0.0, inf);
      model.addRow({{X(s, i), 1.0}, {Y(s, i), -1.0}}, 0.0, inf);
      // A clone after times[s] reads copies live there or made after it.
      cloneReads(s, i, true);
    }
    // Everything read after times[s] is at hand from then on.
    for (int v = 0; v < nv; ++v)
      if (m.lastRead[v] > times[s] && !originalFree(s, v, true))
        model.addRow(atHand(s, v, true), 1.0, inf);
  }
  out.vars = model.vars.size();
  out.rows = model.rows.size();
  memwall::planning::MilpResult r =
      memwall::planning::solveMilp(model, timeLimit, relativeGap);
  out.status = memwall::planning::toString(r.status);
  out.seconds = r.seconds;
  out.nodes = r.nodes;
  out.message = r.message;
  using Status = memwall::planning::MilpResult::Status;
  if (r.status == Status::Error)
    return out;
  if (r.status == Status::Infeasible) {
    out.infeasible = true;
    return out;
  }
  // CBC's bound, less a relative 1e-7 for the LP's tolerances; where it
  // proved the incumbent optimal, the incumbent's objective.
  double proven = r.status == Status::Optimal ? r.objective : r.bound;
  out.bound = std::max(0.0, proven * (1.0 - 1e-7)) * costUnit;
  if (r.status == Status::Optimal || r.status == Status::Feasible) {
    out.cost = r.objective * costUnit;
    out.cloned.resize(k);
    for (int s = 0; s < k; ++s)
      for (int i = 0; i < n; ++i)
        if (r.x[Y(s, i)] > 0.5)
          out.cloned[s].push_back(m.nodeOfOp[i]);
  }
  return out;
}
