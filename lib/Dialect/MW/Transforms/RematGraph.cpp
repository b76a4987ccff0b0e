//===- RematGraph.cpp - The step of --mw-remat as arrays ------------------===//
//
// Builds the integer copy of a training step, plans the clones of a kept
// set, applies them to the IR and simulates the arena a plan needs
// (RematGraph.h).
//
//===----------------------------------------------------------------------===//

#include "RematGraph.h"

#include "TensorSchedule.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

#include <climits>
#include <functional>
#include <numeric>
#include <optional>

using namespace mlir;
using namespace mlir::mw;
using namespace mlir::mw::remat;

StepGraph::StepGraph(const StepStructure &info, const Target &target,
                     bool flopsCost) {
  llvm::DenseMap<Operation *, int> nodeIds;
  for (BlockArgument arg : info.body->getArguments())
    idOf(arg);
  for (Operation &op : *info.body) {
    Node n;
    n.op = &op;
    for (Value v : op.getOperands())
      n.operands.push_back(idOf(v));
    n.numDirect = n.operands.size();
    // Values from above read inside the op's regions count as its operands.
    op.walk([&](Operation *inner) {
      if (inner == &op)
        return;
      for (Value v : inner->getOperands())
        if (!op.isAncestor(v.getParentBlock()->getParentOp()))
          n.operands.push_back(idOf(v));
    });
    int id = nodes.size();
    nodeIds[&op] = id;
    for (Value r : op.getResults()) {
      n.results.push_back(idOf(r));
      vals[n.results.back()].def = id;
    }
    bool update = isa<AdamWOp, SgdOp, LossScaleUpdateOp>(op);
    for (unsigned r = 0; r < op.getNumResults(); ++r) {
      std::optional<unsigned> t = getInPlaceOperand(&op, r);
      n.tied.push_back(update && t ? static_cast<int>(*t) : -1);
      n.inPlace.push_back(!update && t);
    }
    n.hoistable = isHoistableUpdate(&op);
    if (n.hoistable)
      if (std::optional<int64_t> block = updateBlockOf(&op))
        n.hoistGroup = *block;
    n.forward = info.forward.contains(&op);
    n.terminator = op.hasTrait<mlir::OpTrait::IsTerminator>();
    n.view = isa<ReshapeOp>(op);
    n.shapeOnly = isa<TransposeOp, SliceOp>(op);
    n.transpose = isa<TransposeOp>(op);
    n.matmul = isa<MatmulOp>(op);
    n.concat = isa<ConcatOp>(op);
    n.constant = op.hasTrait<mlir::OpTrait::ConstantLike>();
    n.flops = getOpFlops(&op);
    n.seconds = target.getSeconds(&op);
    n.cost = flopsCost ? n.flops / target.flopsPerSecond : n.seconds;
    nodes.push_back(std::move(n));
  }
  for (Value v : info.saved)
    saved.push_back(ids.lookup(v));
  // The ops that only feed hoistable updates (as --mw-hoist-updates finds
  // them), found from the end: every reader but the return is such an op
  // or an update, and there is one.
  for (int j = static_cast<int>(nodes.size()) - 1; j >= 0; --j) {
    Node &n = nodes[j];
    Operation *op = n.op;
    if (n.terminator || n.hoistable || !mayFeedUpdates(op))
      continue;
    bool onlyUpdates = true;
    SmallVector<int> users;
    for (Value r : op->getResults())
      for (Operation *user : r.getUsers()) {
        auto it = nodeIds.find(user);
        if (it != nodeIds.end() && nodes[it->second].terminator)
          continue;
        onlyUpdates &= it != nodeIds.end() &&
                       (nodes[it->second].hoistable || nodes[it->second].feeds);
        if (onlyUpdates && !llvm::is_contained(users, it->second))
          users.push_back(it->second);
      }
    n.feeds = onlyUpdates && !users.empty();
    if (n.feeds)
      n.feedUsers = std::move(users);
  }

  // Backward segments and boundary values, keyed by the block of each op's
  // layer path: "h.3" for "h.3.attn", one key for every named layer outside
  // blocks (embeddings, final norm, head, loss), "" for ops without one.
  std::vector<std::string> key(nodes.size());
  for (auto [j, n] : llvm::enumerate(nodes)) {
    std::string path = getLayerPath(n.op);
    if (path.empty())
      continue;
    auto split = splitLayerPath(path);
    key[j] = split ? split->first : std::string("<outside blocks>");
  }
  int numSegments = 0;
  const std::string *runKey = nullptr;
  for (auto [j, n] : llvm::enumerate(nodes)) {
    if (!isBackward(j))
      continue;
    if (key[j].empty()) {
      n.segment = runKey ? numSegments - 1 : numSegments++;
      continue;
    }
    if (!runKey || *runKey != key[j])
      ++numSegments;
    runKey = &key[j];
    n.segment = numSegments - 1;
  }
  // Only values computed from the data (inputs, labels: any argument that
  // is not a parameter or optimizer state) are boundaries: a mask or a
  // parameter cast read by every block is cheap to recompute in each, and
  // one copy kept alive across the backward would only add its bytes.
  std::vector<char> fromData(vals.size(), 0);
  FunctionOpInterface func = info.func;
  for (BlockArgument arg : info.body->getArguments()) {
    auto role = func.getArgAttrOfType<RoleAttr>(arg.getArgNumber(),
                                                MWDialect::kRoleAttrName);
    fromData[ids.lookup(arg)] = !role || (role.getValue() != Role::param &&
                                          role.getValue() !=
                                              Role::optimizer_state);
  }
  for (Node &n : nodes)
    if (llvm::any_of(n.operands, [&](int v) { return fromData[v]; }))
      for (int r : n.results)
        fromData[r] = 1;
  for (auto [j, n] : llvm::enumerate(nodes)) {
    if (!n.forward)
      continue;
    for (int v : n.operands) {
      int def = vals[v].def;
      if (def >= 0 && nodes[def].forward && fromData[v] && key[def] != key[j])
        vals[v].boundary = true;
    }
  }
}

/// Appends to `plan` a clone of forward node `node` inserted before node
/// `before`, reading `operands` (value ids, resolved by the caller first:
/// their clones come before it), and charges its cost; its results take
/// the ids from `next` on. Returns the id of its first result.
static int addClone(const StepGraph &g, RematPlan &plan, int node, int before,
                    SmallVector<int> operands, int &next) {
  const StepGraph::Node &n = g.nodes[node];
  plan.clones.push_back({node, before, std::move(operands), next});
  next += n.results.size();
  plan.flops += n.flops;
  plan.seconds += n.seconds;
  plan.cost += n.cost;
  return plan.clones.back().firstResult;
}

int64_t remat::maxClones(const StepGraph &g) {
  int64_t forwardOps = llvm::count_if(g.nodes, [](const StepGraph::Node &n) {
    return n.forward && !n.constant;
  });
  return kMaxRecomputedForwards * std::max<int64_t>(forwardOps, 1);
}

RematPlan remat::planRemat(const StepGraph &g, const StepStructure &info,
                           const llvm::BitVector &keep, Sharing sharing) {
  RematPlan plan;
  const size_t cloneLimit = maxClones(g);
  std::vector<char> kept(g.vals.size(), 0);
  struct Dropped {
    int value;
    int first, last;
  };
  SmallVector<Dropped> dropped;
  for (auto [i, v] : llvm::enumerate(g.saved)) {
    if (keep.test(i) || info.forced.test(i)) {
      kept[v] = 1;
      ++plan.kept;
      continue;
    }
    dropped.push_back({v, INT_MAX, -1});
  }
  plan.dropped = dropped.size();
  if (dropped.empty()) {
    plan.numValues = g.vals.size();
    return plan;
  }
  // First and last backward use of each dropped value.
  llvm::DenseMap<int, unsigned> droppedIndex;
  for (auto [i, d] : llvm::enumerate(dropped))
    droppedIndex[d.value] = i;
  for (auto [j, n] : llvm::enumerate(g.nodes)) {
    if (!g.isBackward(j))
      continue;
    for (int v : n.operands) {
      auto it = droppedIndex.find(v);
      if (it == droppedIndex.end())
        continue;
      Dropped &d = dropped[it->second];
      d.first = std::min<int>(d.first, j);
      d.last = std::max<int>(d.last, j);
    }
  }
  std::stable_sort(dropped.begin(), dropped.end(),
                   [](const Dropped &a, const Dropped &b) {
                     return a.first < b.first;
                   });
  std::vector<int> lastUse(g.vals.size(), -1);
  for (const Dropped &d : dropped)
    lastUse[d.value] = d.last;

  /// A recomputed value: its clone, the node it was inserted before, and the
  /// last node index where it is live anyway.
  struct Available {
    int clone;
    int madeAt;
    int liveUntil;
  };
  llvm::DenseMap<int, Available> available;
  // Whether the clone `a` of value `v` may serve a use at node `p`: it is
  // live there anyway, or (sharing segments) `p` is in the backward segment
  // it was made in, or `v` is a boundary value. Reusing it keeps it alive
  // to `p`; the plan's clones and the arena simulation see exactly that.
  auto usable = [&](int v, const Available &a, int p) {
    if (a.liveUntil >= p || sharing.global)
      return true;
    if (!sharing.segments)
      return false;
    int segment = g.nodes[p].segment;
    return g.vals[v].boundary ||
           (segment >= 0 && g.nodes[a.madeAt].segment == segment);
  };
  llvm::DenseSet<int> done;
  int next = g.vals.size();
  // The copy of value `v` a backward node `p` reads: `v` itself when it is
  // kept or not recomputable, a usable clone made before, or nothing (a
  // clone must be made).
  auto reuse = [&](int v, int p) -> std::optional<int> {
    int def = g.vals[v].def;
    // Constants are read, not recomputed: a clone per recomputed block
    // would copy their data into the IR (a [S, S] causal mask per block).
    // The step's own copy is an arena buffer (--mw-form-kernels writes it
    // there) live to its last read, clones' reads included.
    if (def < 0 || !g.nodes[def].forward || kept[v] || g.nodes[def].constant)
      return v;
    auto it = available.find(v);
    if (it != available.end() && usable(v, it->second, p)) {
      it->second.liveUntil = std::max(it->second.liveUntil, p);
      return it->second.clone;
    }
    return std::nullopt;
  };
  // Clones `v`'s definition (its operands first, made or reused in operand
  // order, depth first) and records its results as available.
  auto cloneDef = [&](int v, int p, int wanted, SmallVector<int> operands) {
    const StepGraph::Node &node = g.nodes[g.vals[v].def];
    int first = addClone(g, plan, g.vals[v].def, p, std::move(operands), next);
    int result = -1;
    for (auto [r, orig] : llvm::enumerate(node.results)) {
      int copy = first + r;
      if (orig == v)
        result = copy;
      auto existing = available.find(orig);
      if (existing != available.end() && existing->second.liveUntil >= p)
        continue;
      int liveUntil = p;
      if (lastUse[orig] >= 0 && !done.contains(orig) &&
          (sharing.chains || orig == wanted))
        liveUntil = lastUse[orig];
      available[orig] = {copy, p, liveUntil};
    }
    return result;
  };
  // The copy of `root` for node `p`: a depth-first walk up its definitions
  // on an explicit stack (a chain of recomputed ops is as long as the
  // forward pass: recursion ran out of stack at 50000 ops).
  auto materialize = [&](int root, int p, int wanted) -> int {
    if (std::optional<int> copy = reuse(root, p))
      return *copy;
    struct Frame {
      int value;
      SmallVector<int> operands; // copies of the first operands, made
    };
    SmallVector<Frame> stack;
    stack.push_back({root, {}});
    int made = -1;
    while (true) {
      Frame &top = stack.back();
      const StepGraph::Node &node = g.nodes[g.vals[top.value].def];
      if (top.operands.size() < node.numDirect) {
        int operand = node.operands[top.operands.size()];
        if (std::optional<int> copy = reuse(operand, p))
          top.operands.push_back(*copy);
        else
          stack.push_back({operand, {}});
        continue;
      }
      made = cloneDef(top.value, p, wanted, std::move(top.operands));
      if (plan.clones.size() > cloneLimit) {
        plan.oversized = true;
        return made;
      }
      stack.pop_back();
      if (stack.empty())
        return made;
      stack.back().operands.push_back(made);
    }
  };
  for (const Dropped &d : dropped) {
    int r = materialize(d.value, d.first, d.value);
    if (plan.oversized)
      break;
    Available &a = available[d.value];
    a.clone = r;
    a.liveUntil = std::max(a.liveUntil, d.last);
    done.insert(d.value);
    plan.replace.push_back({d.value, r});
  }
  plan.numValues = next;
  return plan;
}

std::vector<char> remat::alwaysViews(const StepGraph &g) {
  std::vector<char> view(g.nodes.size(), 0), badReader(g.vals.size(), 0);
  for (const StepGraph::Node &n : g.nodes) {
    bool bad = n.view || n.terminator ||
               llvm::any_of(n.inPlace, [](bool b) { return b; });
    if (bad)
      for (int v : n.operands)
        badReader[v] = 1;
  }
  for (auto [j, n] : llvm::enumerate(g.nodes)) {
    if (n.numDirect == 0)
      continue;
    if (n.view) {
      view[j] = 1;
      continue;
    }
    view[j] = n.forward && n.shapeOnly &&
              llvm::none_of(n.results, [&](int r) { return badReader[r]; });
  }
  return view;
}

RematPlan remat::planStaged(const StepGraph &g, const StepStructure &info,
                            ArrayRef<int> times,
                            ArrayRef<SmallVector<int>> cloned,
                            llvm::BitVector &keep) {
  RematPlan plan;
  SavedUses uses(g, info);
  int numStages = times.size();
  // Per stage, the nodes it recomputes, and the first result of each clone
  // made (by stage and node; views included).
  std::vector<llvm::DenseSet<int>> inStage(numStages);
  for (int s = 0; s < numStages && s < static_cast<int>(cloned.size()); ++s)
    inStage[s].insert(cloned[s].begin(), cloned[s].end());
  llvm::DenseMap<std::pair<int, int>, int> cloneOf;
  std::vector<char> isView = alwaysViews(g);
  int next = g.vals.size();
  // What resolving value `v` for stage `s` at node `at` needs first, when
  // not its answer: its view's source resolved (then `v` itself if the
  // source is the original, else a clone of the view), or the clone of its
  // definition in stage `stage` before node `before` (its result `result`).
  struct Step {
    enum Kind { Done, ViewSource, Clone } kind;
    int value = -1;              // Done: the copy
    int stage = -1, before = -1; // Clone
    unsigned result = 0;
  };
  // The copy of value `v` that an op of stage `s` (-1: up to times[0])
  // reads, clones of the stage inserted before node `at`: its first step.
  auto resolveStep = [&](int v, int s, int at) -> Step {
    int def = g.vals[v].def;
    if (s < 0 || def < 0 || !g.nodes[def].forward || g.nodes[def].constant ||
        uses.forcedValue[v])
      return {Step::Done, v};
    const StepGraph::Node &n = g.nodes[def];
    unsigned r = llvm::find(n.results, v) - n.results.begin();
    if (isView[def])
      return {Step::ViewSource, -1, s, at, r};
    // A later micro-batch's forward makes its original inside the backward
    // pass, in stage `made`: from then on the original is the latest copy.
    int made = def > times[0]
                   ? static_cast<int>(llvm::lower_bound(times, def) -
                                      times.begin()) -
                         1
                   : -1;
    for (int t = s; t > made; --t)
      if (inStage[t].contains(def))
        return {Step::Clone, -1, t,
                t == s || t + 1 >= numStages ? at : times[t + 1], r};
    return {Step::Done, v};
  };
  // resolve(v, s, at), depth first on an explicit stack: a chain of cloned
  // ops (or of views) is as long as the forward pass. A frame resolves a
  // value (`node` < 0) or makes the clone of `node` in stage `s` before
  // `at`, its operands resolved in order first.
  auto resolve = [&](int root, int rootStage, int rootAt) -> int {
    struct Frame {
      int value, s, at;
      int node = -1;              // a clone frame's node
      Step step{Step::Done};      // a resolve frame's pending step
      bool waiting = false;       // a resolve frame's step was started
      SmallVector<int> operands;  // a clone frame's resolved operands
    };
    SmallVector<Frame> stack;
    stack.push_back({root, rootStage, rootAt});
    int answer = -1; // what the frame popped last resolved to
    auto pushClone = [&](int stage, int node, int before) {
      stack.push_back({-1, stage, before, node});
    };
    while (!stack.empty()) {
      Frame &f = stack.back();
      if (f.node >= 0) {
        // cloneIn: made once per stage and node (looked up before the
        // first operand is resolved).
        auto made = f.operands.empty() ? cloneOf.find({f.s, f.node})
                                       : cloneOf.end();
        const StepGraph::Node &n = g.nodes[f.node];
        if (made == cloneOf.end() && f.operands.size() < n.numDirect) {
          int operand = n.operands[f.operands.size()];
          int s = f.s, at = f.at;
          stack.push_back({operand, s, at});
          continue;
        }
        if (made != cloneOf.end()) {
          answer = made->second;
        } else {
          answer = addClone(g, plan, f.node, f.at, std::move(f.operands),
                            next);
          cloneOf[{f.s, f.node}] = answer;
        }
        stack.pop_back();
      } else if (!f.waiting) {
        f.step = resolveStep(f.value, f.s, f.at);
        if (f.step.kind == Step::Done) {
          answer = f.step.value;
          stack.pop_back();
        } else {
          f.waiting = true;
          int def = g.vals[f.value].def;
          if (f.step.kind == Step::ViewSource) {
            int source = g.nodes[def].operands[0], s = f.s, at = f.at;
            stack.push_back({source, s, at});
          } else {
            pushClone(f.step.stage, def, f.step.before);
          }
          continue;
        }
      } else {
        int def = g.vals[f.value].def;
        if (f.step.kind == Step::ViewSource) {
          // The view's source resolved to `answer`.
          if (answer == g.nodes[def].operands[0]) {
            answer = f.value;
            stack.pop_back();
          } else {
            f.step = {Step::Clone, -1, f.s, f.at, f.step.result};
            pushClone(f.s, def, f.at);
            continue;
          }
        } else {
          // The clone's first result is `answer`.
          answer += f.step.result;
          stack.pop_back();
        }
      }
      if (!stack.empty() && stack.back().node >= 0)
        stack.back().operands.push_back(answer);
    }
    return answer;
  };
  std::vector<char> originalRead(g.vals.size(), 0), replaced(g.vals.size(), 0);
  for (int j = 0, e = g.nodes.size(); j < e; ++j) {
    if (!g.isBackward(j))
      continue;
    int s = llvm::lower_bound(times, j) - times.begin() - 1;
    llvm::SmallDenseSet<int, 8> done;
    for (int v : g.nodes[j].operands) {
      int c = resolve(v, s, j);
      if (c == v) {
        originalRead[v] = 1;
        continue;
      }
      replaced[v] = 1;
      if (done.insert(v).second)
        plan.useReplace.push_back({j, v, c});
    }
  }
  // simulateArena walks the clones by insertion point and finds a clone by
  // its result ids: sort by the point (stable: operands before their
  // readers) and renumber the results in that order.
  std::vector<unsigned> order(plan.clones.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
    return plan.clones[a].before < plan.clones[b].before;
  });
  llvm::DenseMap<int, int> renumber;
  std::vector<RematPlan::Clone> sorted;
  int id = g.vals.size();
  for (unsigned i : order) {
    RematPlan::Clone c = plan.clones[i];
    unsigned numResults = g.nodes[c.node].results.size();
    for (unsigned r = 0; r < numResults; ++r)
      renumber[c.firstResult + r] = id + r;
    c.firstResult = id;
    id += numResults;
    sorted.push_back(std::move(c));
  }
  auto mapped = [&](int v) {
    auto it = renumber.find(v);
    return it == renumber.end() ? v : it->second;
  };
  for (RematPlan::Clone &c : sorted)
    for (int &o : c.operands)
      o = mapped(o);
  for (RematPlan::UseReplacement &u : plan.useReplace)
    u.with = mapped(u.with);
  plan.clones = std::move(sorted);
  plan.numValues = id;
  keep = llvm::BitVector(g.saved.size(), true);
  for (auto [i, v] : llvm::enumerate(g.saved)) {
    if (info.forced.test(i) || originalRead[v] || !replaced[v]) {
      ++plan.kept;
      continue;
    }
    keep.reset(i);
    ++plan.dropped;
  }
  return plan;
}

void remat::applyPlan(const StepGraph &g, const RematPlan &plan) {
  std::vector<Value> values(g.values);
  values.resize(plan.numValues);
  OpBuilder builder(g.nodes.front().op->getContext());
  UnitAttr recompute = builder.getUnitAttr();
  for (const RematPlan::Clone &c : plan.clones) {
    Operation *def = g.nodes[c.node].op;
    builder.setInsertionPoint(g.nodes[c.before].op);
    IRMapping mapping;
    for (auto [operand, id] : llvm::zip_equal(def->getOperands(), c.operands))
      mapping.map(operand, values[id]);
    Operation *clone = builder.clone(*def, mapping);
    clone->setAttr("mw.recompute", recompute);
    for (unsigned r = 0; r < clone->getNumResults(); ++r)
      values[c.firstResult + r] = clone->getResult(r);
  }
  Block *body = g.nodes.front().op->getBlock();
  llvm::DenseMap<Operation *, int> nodeOf;
  for (auto [j, n] : llvm::enumerate(g.nodes))
    nodeOf[n.op] = j;
  for (auto [v, r] : plan.replace) {
    for (OpOperand &use : llvm::make_early_inc_range(g.values[v].getUses())) {
      Operation *top = body->findAncestorOpInBlock(*use.getOwner());
      auto it = top ? nodeOf.find(top) : nodeOf.end();
      if (it != nodeOf.end() && g.isBackward(it->second))
        use.set(values[r]);
    }
  }
  for (const RematPlan::UseReplacement &u : plan.useReplace) {
    Operation *reader = g.nodes[u.node].op;
    for (OpOperand &use :
         llvm::make_early_inc_range(g.values[u.value].getUses()))
      if (body->findAncestorOpInBlock(*use.getOwner()) == reader)
        use.set(values[u.with]);
  }
}

int64_t remat::simulateArena(const StepGraph &g, const RematPlan &plan,
                      int64_t alignment, std::vector<int64_t> *profile,
                      std::vector<memwall::planning::PackBuffer> *buffers,
                      std::vector<int64_t> *backwardProfile,
                      std::vector<char> *inArena) {
  if (plan.oversized) {
    // Incomplete: above every budget, and nothing to pack.
    if (profile)
      profile->assign(g.nodes.size(), kOversizedArena);
    if (buffers)
      buffers->clear();
    if (backwardProfile)
      backwardProfile->assign(g.nodes.size(), 0);
    if (inArena)
      inArena->assign(g.vals.size(), 0);
    return kOversizedArena;
  }
  int numValues = plan.numValues;
  std::vector<int> repl(g.vals.size(), -1);
  for (auto [v, r] : plan.replace)
    repl[v] = r;
  // Value metadata for clone results.
  auto valueOf = [&](int id) -> const StepGraph::Val & {
    if (id < static_cast<int>(g.vals.size()))
      return g.vals[id];
    // A clone result: find its clone (clones are few; binary search).
    auto it = std::upper_bound(
        plan.clones.begin(), plan.clones.end(), id,
        [](int x, const RematPlan::Clone &c) { return x < c.firstResult; });
    const RematPlan::Clone &c = *std::prev(it);
    return g.vals[g.nodes[c.node].results[id - c.firstResult]];
  };
  // Pass 1: positions, defs and last uses.
  std::vector<int> def(numValues, -1), last(numValues, -1);
  int pos = 0;
  size_t ci = 0;
  auto forEachOp = [&](auto &&fn) {
    pos = 0;
    ci = 0;
    for (int j = 0, e = g.nodes.size(); j < e; ++j) {
      for (; ci < plan.clones.size() && plan.clones[ci].before == j; ++ci, ++pos)
        fn(g.nodes[plan.clones[ci].node], &plan.clones[ci], pos, false);
      fn(g.nodes[j], nullptr, pos, g.isBackward(j));
      ++pos;
    }
  };
  llvm::DenseMap<std::pair<int, int>, int> useRepl;
  for (const RematPlan::UseReplacement &u : plan.useReplace)
    useRepl[{u.node, u.value}] = u.with;
  auto operandAt = [&](const StepGraph::Node &n, const RematPlan::Clone *c,
                       bool backward, unsigned o) {
    if (c)
      return o < c->operands.size() ? c->operands[o] : n.operands[o];
    int v = n.operands[o];
    if (backward && !useRepl.empty()) {
      auto it = useRepl.find({static_cast<int>(&n - g.nodes.data()), v});
      if (it != useRepl.end())
        return it->second;
    }
    return backward && repl[v] >= 0 ? repl[v] : v;
  };
  auto resultAt = [&](const StepGraph::Node &n, const RematPlan::Clone *c,
                      unsigned r) {
    return c ? c->firstResult + static_cast<int>(r) : n.results[r];
  };
  std::vector<char> returned(numValues, 0);
  std::vector<int> nodeAt;
  // Where each op runs: its position, or with simulateHoisted the position
  // --mw-hoist-updates gives the updates and the ops that feed them.
  std::vector<int> at;
  auto moves = [&](const StepGraph::Node &n, const RematPlan::Clone *c) {
    return g.simulateHoisted && !c && (n.hoistable || n.feeds);
  };
  if (g.simulateHoisted) {
    // The reads of everything else (clones included) and when each value
    // is ready, a fed op's result as soon as its operands are.
    std::vector<int> lastOther(numValues, -1), ready(numValues, -1),
        viewRoot(numValues);
    for (int i = 0; i < numValues; ++i)
      viewRoot[i] = i;
    std::vector<int> nodePos(g.nodes.size(), -1), hoisted(g.nodes.size(), -1);
    forEachOp([&](const StepGraph::Node &n, const RematPlan::Clone *c, int p,
                  bool backward) {
      int j = static_cast<int>(&n - g.nodes.data());
      if (!c)
        nodePos[j] = p;
      int r0 = n.results.empty() ? -1 : resultAt(n, c, 0);
      if (n.view && n.numDirect > 0 && r0 >= 0)
        viewRoot[r0] = viewRoot[operandAt(n, c, backward, 0)];
      int readyAt = -1;
      for (unsigned o = 0; o < n.operands.size(); ++o) {
        int v = operandAt(n, c, backward, o);
        readyAt = std::max(readyAt, ready[v]);
        if (!moves(n, c))
          lastOther[viewRoot[v]] = std::max(lastOther[viewRoot[v]], p);
      }
      if (moves(n, c) && n.hoistable) {
        for (int t : n.tied)
          if (t >= 0) {
            int v = operandAt(n, c, backward, t);
            readyAt = std::max(readyAt, lastOther[viewRoot[v]]);
          }
        hoisted[j] = std::max(readyAt, 0);
      }
      for (unsigned r = 0; r < n.results.size(); ++r)
        ready[resultAt(n, c, r)] = moves(n, c) && n.feeds ? readyAt : p;
    });
    // A block's updates run together, when the last of them may.
    llvm::DenseMap<int64_t, int> groupAt;
    for (auto [j, n] : llvm::enumerate(g.nodes))
      if (n.hoistable && n.hoistGroup >= 0) {
        int &a = groupAt[n.hoistGroup];
        a = std::max(a, hoisted[j]);
      }
    for (auto [j, n] : llvm::enumerate(g.nodes))
      if (n.hoistable && n.hoistGroup >= 0)
        hoisted[j] = groupAt[n.hoistGroup];
    // A fed op runs right before the first update it feeds is placed, and
    // never later than it was.
    for (int j = static_cast<int>(g.nodes.size()) - 1; j >= 0; --j) {
      const StepGraph::Node &n = g.nodes[j];
      if (!n.feeds)
        continue;
      int place = nodePos[j];
      for (int user : n.feedUsers)
        place = std::min(place, hoisted[user]);
      hoisted[j] = place;
    }
    // The list schedule: every op in its order, each moved op right after
    // the op it waits for (moved ops that wait for one op in their order),
    // so that they do not all count at one point.
    int numPos = pos;
    std::vector<int> head(numPos, -1), tail(numPos, -1), next(numPos, -1);
    std::vector<char> moved(numPos, 0);
    forEachOp([&](const StepGraph::Node &n, const RematPlan::Clone *c, int p,
                  bool) {
      if (!moves(n, c))
        return;
      moved[p] = 1;
      int a = hoisted[&n - g.nodes.data()];
      if (tail[a] < 0)
        head[a] = p;
      else
        next[tail[a]] = p;
      tail[a] = p;
    });
    at.assign(numPos, 0);
    int order = 0;
    for (int p = 0; p < numPos; ++p) {
      if (!moved[p])
        at[p] = order++;
      for (int m = head[p]; m >= 0; m = next[m])
        at[m] = order++;
    }
  }
  // Per value: how many ops read it, whether a view or the return does
  // (its buffer is then not one --mw-fold-views may drop), and whether its
  // last reader may take its buffer in place.
  std::vector<int> numUses(numValues, 0);
  std::vector<char> viewRead(numValues, 0), takenInPlace(numValues, 0);
  forEachOp([&](const StepGraph::Node &n, const RematPlan::Clone *c, int p,
                bool backward) {
    // -1 for a clone (`n` is then the forward node it copies).
    nodeAt.push_back(c ? -1 : static_cast<int>(&n - g.nodes.data()));
    int q = at.empty() ? p : at[p];
    bool inPlace = llvm::any_of(n.inPlace, [](bool b) { return b; });
    for (unsigned o = 0; o < n.operands.size(); ++o) {
      int v = operandAt(n, c, backward, o);
      if (q >= last[v])
        takenInPlace[v] = inPlace && o < n.numDirect;
      last[v] = std::max(last[v], q);
      ++numUses[v];
      if (n.terminator || n.view)
        viewRead[v] = 1;
      if (n.terminator)
        returned[v] = 1;
    }
    for (unsigned r = 0; r < n.results.size(); ++r)
      def[resultAt(n, c, r)] = q;
  });
  // Pass 2: buffers (union-find over aliasing values).
  std::vector<int> parent(numValues);
  for (int i = 0; i < numValues; ++i)
    parent[i] = i;
  std::function<int(int)> find = [&](int x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  };
  std::vector<int> start(numValues, 0), end(numValues, 0);
  std::vector<char> outside(numValues, 0); // not in the arena
  for (int i = 0, e = g.vals.size(); i < e; ++i)
    if (g.vals[i].def < 0) {
      outside[i] = 1;
      end[i] = last[i];
    }
  auto join = [&](int r, int into) {
    int root = find(into);
    parent[r] = root;
    end[root] = std::max(end[root], std::max(last[r], def[r]));
    outside[root] |= returned[r];
  };
  // The value each view (a reshape, or a transpose or slice folded into
  // one) views, -1 for the others; and the op that makes each value.
  std::vector<int> viewOf(numValues, -1);
  std::vector<const StepGraph::Node *> maker(numValues, nullptr);
  forEachOp([&](const StepGraph::Node &n, const RematPlan::Clone *c, int p,
                bool backward) {
    if (!at.empty())
      p = at[p];
    for (unsigned ri = 0; ri < n.results.size(); ++ri) {
      int r = resultAt(n, c, ri);
      maker[r] = &n;
      if (n.view && n.numDirect > 0) {
        viewOf[r] = operandAt(n, c, backward, 0);
        join(r, viewOf[r]);
        continue;
      }
      // --mw-fold-views: a transpose or slice that only kernels read (and
      // the last not in place) is a view of its input; a transpose whose
      // input only it reads, made by a matmul, is written by the matmul
      // through a view. Either way one buffer from the input's making to
      // the last read of the result.
      if (n.shapeOnly && n.numDirect > 0) {
        int x = operandAt(n, c, backward, 0);
        bool consumer = !viewRead[r] && !returned[r] && !takenInPlace[r];
        bool producer = n.transpose && numUses[x] == 1 && maker[x] &&
                        maker[x]->matmul && find(x) == x && !outside[x];
        if (consumer || producer) {
          viewOf[r] = x;
          join(r, x);
          continue;
        }
      }
      if (n.tied[ri] >= 0) {
        join(r, operandAt(n, c, backward, n.tied[ri]));
        continue;
      }
      bool joined = false;
      if (n.inPlace[ri]) {
        Type type = valueOf(r).type;
        for (unsigned o = 0; o < n.numDirect && !joined; ++o) {
          int u = operandAt(n, c, backward, o);
          int root = find(u);
          if (valueOf(u).type != type || outside[root] || end[root] > p)
            continue;
          join(r, u);
          joined = true;
        }
      }
      if (joined)
        continue;
      start[r] = p;
      end[r] = std::max(last[r], p);
      outside[r] = returned[r];
      // --mw-fold-views' concat side: each piece a buffer of its own that
      // one op makes and only the concatenation reads (through views read
      // once): its maker writes its part of the concatenation's buffer,
      // which then lives from the first maker on.
      if (n.concat && ri == 0) {
        SmallVector<int> pieces;
        for (unsigned o = 0; o < n.numDirect; ++o) {
          int v = operandAt(n, c, backward, o);
          while (v >= 0 && numUses[v] == 1 && viewOf[v] >= 0)
            v = viewOf[v];
          if (v < 0 || numUses[v] != 1 || find(v) != v || outside[v] ||
              def[v] < 0 || !maker[v] || maker[v]->constant ||
              llvm::is_contained(pieces, v)) {
            pieces.clear();
            break;
          }
          pieces.push_back(v);
        }
        for (int v : pieces) {
          parent[v] = r;
          start[r] = std::min(start[r], start[v]);
        }
      }
    }
  });
  if (!at.empty()) {
    std::vector<int> byPosition(nodeAt.size(), -1);
    for (size_t p = 0; p < nodeAt.size(); ++p)
      byPosition[at[p]] = nodeAt[p];
    nodeAt = std::move(byPosition);
  }
  std::vector<int64_t> delta(pos + 2, 0), backwardDelta;
  // Per buffer, where backward values hold it: a buffer a backward value
  // starts is theirs from its start; one that a backward value takes over
  // from a forward value (in place, or as a view) is theirs only after the
  // op that takes it, where the forward value is still read.
  std::vector<int> backwardFrom;
  if (backwardProfile) {
    backwardDelta.assign(pos + 2, 0);
    backwardFrom.assign(numValues, INT_MAX);
    for (int i = 0; i < static_cast<int>(g.vals.size()); ++i) {
      int d = g.vals[i].def;
      if (d < 0 || !g.isBackward(d))
        continue;
      int r = find(i);
      int from = r == i ? def[i] : def[i] + 1;
      int rootDef = r < static_cast<int>(g.vals.size()) ? g.vals[r].def : -1;
      if (rootDef >= 0 && g.isBackward(rootDef))
        from = start[r];
      backwardFrom[r] = std::min(backwardFrom[r], from);
    }
  }
  for (int i = 0; i < numValues; ++i) {
    if (parent[i] != i || outside[i] || def[i] < 0)
      continue;
    if (backwardProfile && backwardFrom[i] <= end[i]) {
      int64_t b = (valueOf(i).bytes + alignment - 1) / alignment * alignment;
      backwardDelta[backwardFrom[i]] += b;
      backwardDelta[end[i] + 1] -= b;
    }
    int64_t bytes = valueOf(i).bytes;
    bytes = (bytes + alignment - 1) / alignment * alignment;
    delta[start[i]] += bytes;
    delta[end[i] + 1] -= bytes;
    if (buffers)
      buffers->push_back({static_cast<uint64_t>(bytes), start[i], end[i] + 1});
  }
  if (inArena) {
    inArena->assign(g.vals.size(), 0);
    for (int i = 0, e = g.vals.size(); i < e; ++i)
      (*inArena)[i] = def[i] >= 0 && !outside[find(i)];
  }
  // In the order the pipeline's liveness lists them: by where they start.
  if (buffers)
    std::stable_sort(buffers->begin(), buffers->end(),
                     [](const memwall::planning::PackBuffer &a,
                        const memwall::planning::PackBuffer &b) {
                       return a.start < b.start;
                     });
  // The profile is per op of the original step: the most live bytes at the
  // op or at the clones inserted before it.
  int64_t live = 0, peak = 0, sinceLastNode = 0, backwardLive = 0;
  if (profile)
    profile->assign(g.nodes.size(), 0);
  if (backwardProfile)
    backwardProfile->assign(g.nodes.size(), 0);
  for (int p = 0; p < pos; ++p) {
    live += delta[p];
    if (backwardProfile) {
      backwardLive += backwardDelta[p];
      if (nodeAt[p] >= 0)
        (*backwardProfile)[nodeAt[p]] = backwardLive;
    }
    peak = std::max(peak, live);
    sinceLastNode = std::max(sinceLastNode, live);
    if (profile && nodeAt[p] >= 0) {
      (*profile)[nodeAt[p]] = sinceLastNode;
      sinceLastNode = 0;
    }
  }
  return peak;
}
