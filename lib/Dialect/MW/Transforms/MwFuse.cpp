//===- MwFuse.cpp - --mw-fuse ---------------------------------------------===//
//
// Groups the mw ops of a step on tensors into mw.fusion ops, each one fused
// kernel of the kinds the fusion contract names (docs/fusion.md): matmul
// epilogues first, then row (reduction) kernels with their pointwise
// prologues and epilogues, then loop kernels of pointwise chains and
// siblings, then the optimizer's updates that can run at one point side by
// side. Groups grow greedily in program order, so decisions are
// deterministic; a candidate joins a group only when no path through ops
// outside the group leads from the group to the candidate or back (no
// cycle), and a contracted-graph topological sort (Kahn's, keyed by
// program order, with each in-place update after the earlier reads of what
// it overwrites) places each fusion and dissolves a group in the rare joint
// cycle it finds. Nothing is ever
// duplicated but mw.splat, which reads no memory: each fusion that reads a
// splat computes it itself. A forward op never shares a fusion with a
// backward or optimizer op, so every value the backward pass reads from the
// forward pass (the values --mw-remat keeps) is a fusion result and stays
// materialized.
//
//===----------------------------------------------------------------------===//

#include "TensorSchedule.h"

#include "memwall/Analysis/StepStructure.h"
#include "memwall/Analysis/Units.h"
#include "memwall/Dialect/MW/IR/MWOps.h"
#include "memwall/Dialect/MW/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <queue>
#include <set>
#include <utility>

#define DEBUG_TYPE "mw-fuse"

namespace mlir::mw {
#define GEN_PASS_DEF_MWFUSE
#include "memwall/Dialect/MW/Transforms/Passes.h.inc"
} // namespace mlir::mw

using namespace mlir;
using namespace mlir::mw;

namespace {

/// How far (in ops of the original order) a consumer, producer or sibling
/// may lie from the group it joins: a fusion runs where its first op was,
/// so joining a far op would move work and stretch lifetimes.
constexpr int64_t kWindow = 48;

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

int64_t elementsOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getNumElements();
}

/// Kernel-level figures of a function body: what --mw-form-kernels would
/// launch (every top-level mw op but mw.reshape, a view; each fusion once),
/// the bytes those kernels move by the cost model, and the buffers their
/// results need.
struct KernelFigures {
  int64_t kernels = 0;
  int64_t bytesMoved = 0;
  int64_t buffers = 0;
  int64_t bufferBytes = 0;
};

KernelFigures kernelFigures(Block &body) {
  KernelFigures f;
  for (Operation &op : body.without_terminator()) {
    bool isKernel = (isa_and_nonnull<MWDialect>(op.getDialect()) &&
                     !isa<ReshapeOp>(op)) ||
                    isRuntimeCollective(&op);
    if (!isKernel)
      continue;
    ++f.kernels;
    if (auto cost = dyn_cast<CostOpInterface>(op))
      f.bytesMoved += cost.getBytesRead() + cost.getBytesWritten();
    if (isa<KernelOp>(op))
      continue;
    for (Value r : op.getResults()) {
      ++f.buffers;
      f.bufferBytes += mw::detail::tensorBytes(r.getType());
    }
  }
  return f;
}

struct Group {
  FusionKind kind;
  /// Members in the order they joined.
  SmallVector<Operation *> ops;
  /// matmul and row: fixed when the group starts; loop: from the yields.
  SmallVector<int64_t> iteration;
  /// loop: every member's result has this many elements.
  int64_t elements = 0;
  bool alive = true;
  /// Filled by finalize: inputs and yields in fusion order.
  SmallVector<Value> inputs, yields;
  /// Kept as members join (Fuser::add), so that legalToAdd does not walk
  /// every member (a loop fusion along a chain of 50000 pointwise ops was
  /// quadratic, 204 s): the members' first and last positions, and the ops
  /// outside the group whose results members read (cloned splats aside),
  /// by position.
  int64_t lo = INT64_MAX, hi = -1;
  std::set<std::pair<int64_t, Operation *>> outside;
};

class Fuser {
public:
  Fuser(func::FuncOp func, ArrayRef<bool> enabled)
      : func(func), body(func.getFunctionBody().front()), enabled(enabled) {}

  /// Forms the fusions; false when the function is left alone.
  bool run();

  SmallVector<int64_t, 4> perKind = SmallVector<int64_t, 4>(4, 0);
  SmallVector<int64_t, 4> opsPerKind = SmallVector<int64_t, 4>(4, 0);

private:
  func::FuncOp func;
  Block &body;
  ArrayRef<bool> enabled;
  SmallVector<Operation *> order;
  llvm::DenseMap<Operation *, int64_t> pos;
  llvm::DenseMap<Operation *, int> groupOf;
  llvm::DenseSet<Operation *> forward;
  std::vector<Group> groups;

  bool on(FusionKind k) const { return enabled[static_cast<unsigned>(k)]; }
  Operation *producer(Value v) const {
    Operation *def = v.getDefiningOp();
    return def && pos.count(def) ? def : nullptr;
  }
  bool free(Operation *op) const {
    return op && pos.count(op) && !groupOf.count(op) &&
           isa_and_nonnull<MWDialect>(op->getDialect()) &&
           op->getNumRegions() == 0;
  }
  bool member(const Group &g, Operation *op) const {
    auto it = groupOf.find(op);
    return it != groupOf.end() && &groups[it->second] == &g;
  }
  bool sameSide(Operation *a, Operation *b) const {
    return forward.contains(a) == forward.contains(b);
  }
  /// A pointwise op that may be a member (splats are cloned, constants and
  /// selects stay kernels of their own).
  static bool memberPointwise(Operation *op) {
    return isPointwiseOp(op) && !isa<SplatOp, ConstantOp, SelectOp>(op) &&
           op->getNumResults() == 1;
  }
  /// Whether operand `v` of member `m` becomes a clone inside the fusion
  /// rather than an input.
  bool clonedSplat(const Group &g, Operation *m, Value v) const {
    Operation *def = producer(v);
    return def && isa<SplatOp>(def) && g.kind != FusionKind::horizontal &&
           !(g.kind == FusionKind::matmul && isa<MatmulOp>(m));
  }
  int64_t minPos(const Group &g) const { return g.lo; }
  int64_t maxPos(const Group &g) const { return g.hi; }

  /// Whether `from` depends, through operands, on an op for which `target`
  /// holds; ops before `lowest` cannot, and are not searched.
  bool dependsOn(Operation *from, llvm::function_ref<bool(Operation *)> target,
                 int64_t lowest) const;
  bool legalToAdd(Group &g, Operation *u) const;
  /// Whether `p` (outside `g`) is a matmul made after `g`'s first op, or a
  /// chain of pointwise ops made after it from one.
  bool readsLaterProduct(const Group &g, Operation *p) const;
  /// Whether update `u` may join horizontal group `g` where the group runs,
  /// at its first update: every operand of `u` is computed before that, and
  /// no op in between reads a buffer `u` overwrites. Updates that
  /// --mw-hoist-updates placed at different points of the backward pass
  /// are not pulled down to the last of them.
  bool joinsWhereGroupRuns(const Group &g, Operation *u) const;
  /// Whether an op after update `u` reads a buffer `u` overwrites (fp16's
  /// keep-on-overflow mw.select reads the old parameter). Such an update
  /// cannot write in place where it stands, so One-Shot gives its results
  /// fresh buffers, transient until that read; side by side in one
  /// horizontal kernel every such update's transients would be live at once
  /// (bert-tiny fp16: a 2.9x arena), so it stays a kernel of its own.
  bool readAfterwards(Operation *u) const;
  void add(int id, Operation *op) {
    Group &g = groups[id];
    g.ops.push_back(op);
    groupOf[op] = id;
    note(g, op);
  }
  /// Updates `g`'s positions and outside producers for new member `op`.
  void note(Group &g, Operation *op) {
    int64_t p = pos.lookup(op);
    g.lo = std::min(g.lo, p);
    g.hi = std::max(g.hi, p);
    g.outside.erase({p, op});
    for (Value v : op->getOperands())
      if (Operation *def = producer(v);
          def && !member(g, def) && !clonedSplat(g, op, v))
        g.outside.insert({pos.lookup(def), def});
  }
  /// Recomputes them after members left.
  void renote(Group &g) {
    g.lo = INT64_MAX;
    g.hi = -1;
    g.outside.clear();
    for (Operation *op : g.ops)
      note(g, op);
  }
  int start(FusionKind kind, Operation *op) {
    groups.push_back(Group{kind, {}, {}, 0, true, {}, {}});
    int id = static_cast<int>(groups.size()) - 1;
    add(id, op);
    return id;
  }
  void dissolve(int id) {
    for (Operation *op : groups[id].ops)
      groupOf.erase(op);
    groups[id].ops.clear();
    renote(groups[id]);
    groups[id].alive = false;
  }
  /// Users of the results of `op` at the top level, in program order.
  SmallVector<Operation *> usersOf(Operation *op) const;

  void formMatmul();
  void formRow();
  void formLoop();
  void formHorizontal();
  /// Computes inputs and yields; false when the group breaks its kind's
  /// rules (the verifier's).
  bool finalize(Group &g);
  /// Trims the latest members until the group is valid; dissolves it when
  /// fewer than two ops that compute something remain.
  void settle(int id);
  /// The order of the block's nodes (fusions and other ops); dissolves
  /// groups in joint cycles until one exists.
  SmallVector<std::pair<int, Operation *>> schedule();
  void materialize(ArrayRef<std::pair<int, Operation *>> nodes);
};

bool Fuser::dependsOn(Operation *from,
                      llvm::function_ref<bool(Operation *)> target,
                      int64_t lowest) const {
  SmallVector<Operation *> work{from};
  llvm::SmallPtrSet<Operation *, 32> seen;
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!seen.insert(op).second)
      continue;
    if (target(op))
      return true;
    if (pos.lookup(op) < lowest)
      continue;
    for (Value v : op->getOperands())
      if (Operation *p = producer(v))
        work.push_back(p);
  }
  return false;
}

bool Fuser::readsLaterProduct(const Group &g, Operation *p) const {
  int64_t lowest = minPos(g);
  SmallVector<Operation *> work{p};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!seen.insert(op).second || member(g, op) || pos.lookup(op) <= lowest)
      continue;
    if (isa<MatmulOp>(op))
      return true;
    if (!memberPointwise(op))
      continue;
    for (Value v : op->getOperands())
      if (Operation *q = producer(v))
        work.push_back(q);
  }
  return false;
}

bool Fuser::legalToAdd(Group &g, Operation *u) const {
  if (g.kind != FusionKind::horizontal) {
    int64_t p = pos.lookup(u);
    if (p < minPos(g) - kWindow || p > maxPos(g) + kWindow)
      return false;
  }
  auto inGroup = [&](Operation *op) { return member(g, op); };
  int64_t lowest = minPos(g);
  for (Value v : u->getOperands()) {
    Operation *p = producer(v);
    if (!p || clonedSplat(g, u, v))
      continue;
    if (member(g, p)) {
      // Nothing in a fusion reads a column reduction.
      if (isColumnReduction(p) && g.kind != FusionKind::row)
        return false;
      continue;
    }
    // g -> ... -> p -> u: u would need g's results before g has them.
    if (dependsOn(p, inGroup, lowest))
      return false;
    // A product made after g starts, outside it (or a pointwise op of
    // one, its epilogue to be): u belongs in that matmul's epilogue.
    // Joining g would make g wait for the product, keeping g's values live
    // across it (a chain of partial products' sums, --mw-chunk-loss's
    // weight gradient, would read every product at once).
    if (g.kind != FusionKind::horizontal && readsLaterProduct(g, p))
      return false;
  }
  // u -> ... -> m for a member m: g would need u's results through ops
  // outside it. Only those at or after u can depend on it (dependsOn stops
  // at once before `at`).
  int64_t at = pos.lookup(u);
  for (auto it = g.outside.lower_bound({at, nullptr}); it != g.outside.end();
       ++it) {
    Operation *p = it->second;
    if (p == u)
      continue;
    if (dependsOn(p, [&](Operation *op) { return op == u; }, at))
      return false;
  }
  return true;
}

SmallVector<Operation *> Fuser::usersOf(Operation *op) const {
  SmallVector<Operation *> users;
  llvm::SmallPtrSet<Operation *, 8> seen;
  for (Value r : op->getResults())
    for (Operation *user : r.getUsers())
      if (pos.count(user) && seen.insert(user).second)
        users.push_back(user);
  llvm::sort(users, [&](Operation *a, Operation *b) {
    return pos.lookup(a) < pos.lookup(b);
  });
  return users;
}

void Fuser::formMatmul() {
  for (Operation *op : order) {
    if (!isa<MatmulOp>(op) || !free(op))
      continue;
    int id = start(FusionKind::matmul, op);
    groups[id].iteration.assign(shapeOf(op->getResult(0)).begin(),
                                shapeOf(op->getResult(0)).end());
    for (size_t i = 0; i < groups[id].ops.size(); ++i) {
      Operation *m = groups[id].ops[i];
      if (isColumnReduction(m))
        continue;
      for (Operation *u : usersOf(m)) {
        Group &g = groups[id];
        if (!free(u) || !sameSide(u, op))
          continue;
        bool fits =
            isColumnReduction(u)
                ? shapeOf(u->getOperand(0)) == ArrayRef<int64_t>(g.iteration)
                : memberPointwise(u) &&
                      shapeOf(u->getResult(0)) == ArrayRef<int64_t>(g.iteration);
        if (fits && legalToAdd(g, u))
          add(id, u);
      }
    }
    settle(id);
  }
}

void Fuser::formRow() {
  for (Operation *op : order) {
    if (!isRowOp(op) || !free(op))
      continue;
    int id = start(FusionKind::row, op);
    ArrayRef<int64_t> shape = shapeOf(op->getOperand(0));
    groups[id].iteration.assign(shape.begin(), shape.end());
    auto fits = [&](Operation *c) {
      return free(c) && sameSide(c, op) && memberPointwise(c) &&
             shapeOf(c->getResult(0)) == ArrayRef<int64_t>(groups[id].iteration);
    };
    // Prologue: the pointwise producers of the row op's operands (bias,
    // residual, scale, mask), and theirs.
    for (size_t i = 0; i < groups[id].ops.size(); ++i)
      for (Value v : groups[id].ops[i]->getOperands()) {
        Operation *p = producer(v);
        if (p && fits(p) && legalToAdd(groups[id], p))
          add(id, p);
      }
    // Epilogue: pointwise consumers of the row op's full-shape results.
    for (size_t i = 0; i < groups[id].ops.size(); ++i) {
      Operation *m = groups[id].ops[i];
      if (m != op && !memberPointwise(m))
        continue;
      for (Operation *u : usersOf(m))
        if (fits(u) && llvm::any_of(u->getOperands(),
                                    [&](Value v) {
                                      Operation *d = producer(v);
                                      return d && member(groups[id], d) &&
                                             shapeOf(v) == ArrayRef<int64_t>(
                                                               groups[id]
                                                                   .iteration);
                                    }) &&
            legalToAdd(groups[id], u))
          add(id, u);
    }
    settle(id);
  }
}

void Fuser::formLoop() {
  for (Operation *op : order) {
    if (!memberPointwise(op) || isa<ReshapeOp>(op) || !free(op))
      continue;
    int id = start(FusionKind::loop, op);
    groups[id].elements = elementsOf(op->getResult(0));
    auto fits = [&](Operation *c) {
      if (!free(c) || !sameSide(c, op))
        return false;
      if (isColumnReduction(c))
        return elementsOf(c->getOperand(0)) == groups[id].elements;
      return memberPointwise(c) &&
             elementsOf(c->getResult(0)) == groups[id].elements;
    };
    for (size_t i = 0; i < groups[id].ops.size(); ++i) {
      Operation *m = groups[id].ops[i];
      if (isColumnReduction(m))
        continue;
      // Consumers.
      for (Operation *u : usersOf(m))
        if (fits(u) && legalToAdd(groups[id], u))
          add(id, u);
      // Producers: pointwise ops of the iteration size whose results the
      // member reads (a result others read too stays a fusion result).
      for (Value v : m->getOperands())
        if (Operation *p = producer(v);
            p && !isColumnReduction(p) && fits(p) &&
            legalToAdd(groups[id], p))
          add(id, p);
      // Siblings: other readers of the same input of the iteration size.
      for (Value v : m->getOperands()) {
        Operation *p = producer(v);
        if ((p && member(groups[id], p)) || clonedSplat(groups[id], m, v) ||
            elementsOf(v) < groups[id].elements)
          continue;
        SmallVector<Operation *> readers;
        for (Operation *user : v.getUsers())
          if (pos.count(user) && !isColumnReduction(user))
            readers.push_back(user);
        llvm::sort(readers, [&](Operation *a, Operation *b) {
          return pos.lookup(a) < pos.lookup(b);
        });
        readers.erase(std::unique(readers.begin(), readers.end()),
                      readers.end());
        for (Operation *u : readers)
          if (fits(u) && legalToAdd(groups[id], u))
            add(id, u);
      }
    }
    settle(id);
  }
}

bool Fuser::readAfterwards(Operation *u) const {
  int64_t at = pos.lookup(u);
  bool later = false;
  for (Value t : getOverwrittenOperands(u))
    forEachBufferReader(body, t, u, [&](Operation *reader) {
      auto it = pos.find(reader);
      later |= it != pos.end() && it->second > at;
    });
  return later;
}

bool Fuser::joinsWhereGroupRuns(const Group &g, Operation *u) const {
  int64_t first = minPos(g), at = pos.lookup(u);
  for (Value v : u->getOperands())
    if (Operation *p = producer(v); p && pos.lookup(p) >= first)
      return false;
  bool readBetween = false;
  for (Value t : getOverwrittenOperands(u))
    forEachBufferReader(body, t, u, [&](Operation *reader) {
      auto it = pos.find(reader);
      readBetween |= it != pos.end() && it->second > first && it->second < at;
    });
  return !readBetween;
}

void Fuser::formHorizontal() {
  for (bool adamw : {true, false}) {
    int id = -1;
    for (Operation *op : order) {
      if (!(adamw ? isa<AdamWOp>(op) : isa<SgdOp>(op)) || !free(op) ||
          readAfterwards(op))
        continue;
      if (id >= 0 && joinsWhereGroupRuns(groups[id], op) &&
          legalToAdd(groups[id], op)) {
        add(id, op);
        continue;
      }
      if (id >= 0)
        settle(id);
      id = start(FusionKind::horizontal, op);
    }
    if (id >= 0)
      settle(id);
  }
}

bool Fuser::finalize(Group &g) {
  g.inputs.clear();
  g.yields.clear();
  SmallVector<Operation *> members(g.ops);
  llvm::sort(members, [&](Operation *a, Operation *b) {
    return pos.lookup(a) < pos.lookup(b);
  });
  llvm::SetVector<Value> inputs;
  SmallVector<Value> yields;
  for (Operation *m : members) {
    for (Value v : m->getOperands()) {
      Operation *p = producer(v);
      if ((p && member(g, p)) || clonedSplat(g, m, v))
        continue;
      inputs.insert(v);
    }
    for (Value r : m->getResults())
      if (llvm::any_of(r.getUsers(),
                       [&](Operation *user) { return !member(g, user); }))
        yields.push_back(r);
  }
  if (yields.empty())
    return false;
  auto isColumn = [&](Value v) {
    return g.kind != FusionKind::row && isColumnReduction(v.getDefiningOp());
  };
  if (g.kind == FusionKind::loop) {
    auto it = llvm::find_if(yields, [&](Value v) { return !isColumn(v); });
    if (it == yields.end())
      return false;
    g.iteration.assign(shapeOf(*it).begin(), shapeOf(*it).end());
    for (Operation *m : members)
      if (isColumnReduction(m) &&
          shapeOf(m->getOperand(0)) != ArrayRef<int64_t>(g.iteration))
        return false;
  }
  if (g.kind != FusionKind::horizontal) {
    ArrayRef<int64_t> it(g.iteration);
    bool any = false;
    for (Value v : yields) {
      ArrayRef<int64_t> s = shapeOf(v);
      if (s == it) {
        any = true;
        continue;
      }
      if (isColumn(v))
        continue;
      bool rowShape = g.kind == FusionKind::row && !it.empty() &&
                      (s == it.drop_back() ||
                       (s.size() == it.size() && s.drop_back() == it.drop_back() &&
                        s.back() == 1));
      if (!rowShape)
        return false;
    }
    if (!any)
      return false;
    // The iteration shape is the first result's: iteration-shaped values
    // first, each side in program order.
    std::stable_partition(yields.begin(), yields.end(),
                          [&](Value v) { return shapeOf(v) == it; });
  }
  g.inputs.assign(inputs.begin(), inputs.end());
  g.yields = std::move(yields);
  return true;
}

void Fuser::settle(int id) {
  auto computing = [&](Group &g) {
    return llvm::count_if(g.ops,
                          [](Operation *op) { return !isa<ReshapeOp>(op); });
  };
  bool trimmed = false;
  while (groups[id].ops.size() >= 2 && !finalize(groups[id])) {
    groupOf.erase(groups[id].ops.back());
    groups[id].ops.pop_back();
    trimmed = true;
  }
  if (trimmed)
    renote(groups[id]);
  if (computing(groups[id]) < 2)
    dissolve(id);
}

SmallVector<std::pair<int, Operation *>> Fuser::schedule() {
  while (true) {
    // Nodes: alive groups, then every other op, by first position.
    struct Node {
      int group;
      Operation *op;
      int64_t key;
    };
    std::vector<Node> nodes;
    llvm::DenseMap<Operation *, int> nodeOf;
    llvm::DenseMap<int, int> groupNode;
    for (Operation *op : order) {
      auto it = groupOf.find(op);
      if (it == groupOf.end()) {
        nodeOf[op] = static_cast<int>(nodes.size());
        nodes.push_back({-1, op, pos.lookup(op)});
        continue;
      }
      auto [g, inserted] =
          groupNode.try_emplace(it->second, static_cast<int>(nodes.size()));
      if (inserted) // the group's first op in program order gives the key
        nodes.push_back({it->second, nullptr, pos.lookup(op)});
      nodeOf[op] = g->second;
    }
    std::vector<SmallVector<int>> succs(nodes.size());
    std::vector<int> indegree(nodes.size(), 0);
    for (Operation *op : order) {
      int to = nodeOf.lookup(op);
      llvm::SmallDenseSet<int, 8> preds;
      op->walk([&](Operation *nested) {
        for (Value v : nested->getOperands()) {
          Operation *def = v.getDefiningOp();
          if (!def)
            continue;
          Operation *top = body.findAncestorOpInBlock(*def);
          if (!top || !nodeOf.count(top))
            continue;
          int from = nodeOf.lookup(top);
          if (from != to && preds.insert(from).second) {
            succs[from].push_back(to);
            ++indegree[to];
          }
        }
      });
      // An update that overwrites a buffer in place follows every earlier
      // read of it (write after read), or One-Shot Bufferize would copy.
      int64_t at = pos.lookup(op);
      for (Value t : getOverwrittenOperands(op))
        forEachBufferReader(body, t, op, [&](Operation *reader) {
          auto it = pos.find(reader);
          if (it == pos.end() || it->second >= at || !nodeOf.count(reader))
            return;
          int from = nodeOf.lookup(reader);
          if (from != to && preds.insert(from).second) {
            succs[from].push_back(to);
            ++indegree[to];
          }
        });
    }
    // Kahn's algorithm, the earliest original position first.
    using Entry = std::pair<int64_t, int>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
    for (auto [i, n] : llvm::enumerate(nodes))
      if (indegree[i] == 0)
        ready.push({n.key, static_cast<int>(i)});
    SmallVector<std::pair<int, Operation *>> result;
    std::vector<bool> done(nodes.size(), false);
    while (!ready.empty()) {
      int n = ready.top().second;
      ready.pop();
      done[n] = true;
      result.push_back({nodes[n].group, nodes[n].op});
      for (int s : succs[n])
        if (--indegree[s] == 0)
          ready.push({nodes[s].key, s});
    }
    if (result.size() == nodes.size())
      return result;
    // A joint cycle: dissolve the latest group left in it, and retry.
    int latest = -1;
    for (auto [i, n] : llvm::enumerate(nodes))
      if (!done[i] && n.group >= 0)
        latest = std::max(latest, n.group);
    LLVM_DEBUG(llvm::dbgs() << "mw-fuse: cycle, dissolving group " << latest
                            << "\n");
    if (latest < 0)
      return {};
    dissolve(latest);
  }
}

void Fuser::materialize(ArrayRef<std::pair<int, Operation *>> nodes) {
  Operation *terminator = body.getTerminator();
  OpBuilder b(func.getContext());
  SmallVector<Operation *> erase;
  // Results of fusions already built, by the member values they replace
  // (later groups' inputs were recorded before).
  llvm::DenseMap<Value, Value> replaced;
  for (auto [id, op] : nodes) {
    if (id < 0) {
      op->moveBefore(terminator);
      continue;
    }
    Group &g = groups[id];
    SmallVector<Operation *> members(g.ops);
    llvm::sort(members, [&](Operation *a, Operation *c) {
      return pos.lookup(a) < pos.lookup(c);
    });
    Operation *anchor = g.ops.front();
    for (Value &in : g.inputs)
      if (Value r = replaced.lookup(in))
        in = r;
    b.setInsertionPoint(terminator);
    SmallVector<Type> resultTypes;
    for (Value v : g.yields)
      resultTypes.push_back(v.getType());
    auto fusion = b.create<FusionOp>(
        anchor->getLoc(), resultTypes,
        FusionKindAttr::get(func.getContext(), g.kind), g.inputs);
    if (Attribute layer = anchor->getAttr(kLayerAttrName))
      fusion->setAttr(kLayerAttrName, layer);
    SmallVector<Type> argTypes;
    SmallVector<Location> argLocs;
    for (Value v : g.inputs) {
      argTypes.push_back(v.getType());
      argLocs.push_back(anchor->getLoc());
    }
    Block *block = b.createBlock(&fusion.getBody(), {}, argTypes, argLocs);
    IRMapping mapping;
    mapping.map(g.inputs, block->getArguments());
    for (Operation *m : members) {
      for (Value v : m->getOperands())
        if (clonedSplat(g, m, v) && !mapping.contains(v))
          b.clone(*v.getDefiningOp(), mapping);
      b.clone(*m, mapping);
    }
    SmallVector<Value> yielded;
    for (Value v : g.yields)
      yielded.push_back(mapping.lookup(v));
    b.create<YieldOp>(anchor->getLoc(), yielded);
    for (auto [v, r] : llvm::zip(g.yields, fusion.getResults())) {
      replaced[v] = r;
      v.replaceUsesWithIf(r, [&](OpOperand &use) {
        return !member(g, use.getOwner());
      });
    }
    perKind[static_cast<unsigned>(g.kind)] += 1;
    opsPerKind[static_cast<unsigned>(g.kind)] += members.size();
    for (Operation *m : llvm::reverse(members))
      erase.push_back(m);
  }
  for (Operation *op : erase)
    op->erase();
  // Splats that every reader now computes itself.
  for (Operation &op : llvm::make_early_inc_range(body.without_terminator()))
    if (isa<SplatOp>(op) && op.use_empty())
      op.erase();
}

bool Fuser::run() {
  for (Operation &op : body.without_terminator()) {
    // The pass reorders ops: only where nothing has memory effects (a step
    // on tensors, before bufferization).
    if (!isMemoryEffectFree(&op))
      return false;
    pos[&op] = static_cast<int64_t>(order.size());
    order.push_back(&op);
  }
  StepStructure step(func);
  if (step.hasLoss())
    forward.insert(step.forward.begin(), step.forward.end());
  if (on(FusionKind::matmul))
    formMatmul();
  if (on(FusionKind::row))
    formRow();
  if (on(FusionKind::loop))
    formLoop();
  if (on(FusionKind::horizontal))
    formHorizontal();
  SmallVector<std::pair<int, Operation *>> nodes = schedule();
  if (nodes.empty())
    return false;
  for (Group &g : groups)
    if (g.alive && !finalize(g))
      return false; // cannot happen: settle left only valid groups
  materialize(nodes);
  return true;
}

struct MwFusePass : public mw::impl::MwFuseBase<MwFusePass> {
  using MwFuseBase::MwFuseBase;

  void runOnOperation() override {
    SmallVector<bool> enabled(4, kinds.empty());
    for (const std::string &k : kinds) {
      std::optional<FusionKind> kind = symbolizeFusionKind(k);
      if (!kind) {
        getOperation().emitError()
            << "mw-fuse: unknown kind '" << k
            << "' in kinds= (expected loop, row, matmul or horizontal)";
        return signalPassFailure();
      }
      enabled[static_cast<unsigned>(*kind)] = true;
    }
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.getFunctionBody().hasOneBlock())
        continue;
      Block &body = func.getFunctionBody().front();
      KernelFigures before = kernelFigures(body);
      Fuser fuser(func, enabled);
      if (!fuser.run())
        continue;
      KernelFigures after = kernelFigures(body);
      int64_t fusions = 0;
      for (auto [k, n] : llvm::enumerate(fuser.perKind)) {
        fusions += n;
        numFusedOps += fuser.opsPerKind[k];
      }
      numFusions += fusions;
      if (!report)
        continue;
      llvm::raw_ostream &os = llvm::outs();
      auto ratio = [](int64_t a, int64_t b) {
        return b ? llvm::formatv("{0:F3}", static_cast<double>(a) / b).str()
                 : std::string("-");
      };
      os << "mw-fuse @" << func.getName() << ": " << fusions << " fusions\n";
      os << llvm::formatv("  {0,-22}{1} -> {2} (x{3})\n", "kernels",
                          before.kernels, after.kernels,
                          ratio(after.kernels, before.kernels));
      os << llvm::formatv("  {0,-22}{1} -> {2} (x{3}; {4} -> {5}, cost model)\n",
                          "bytes read+written", before.bytesMoved,
                          after.bytesMoved,
                          ratio(after.bytesMoved, before.bytesMoved),
                          formatDecimalBytes(before.bytesMoved),
                          formatDecimalBytes(after.bytesMoved));
      os << llvm::formatv("  {0,-22}{1} -> {2} ({3} removed, {4})\n",
                          "buffers", before.buffers, after.buffers,
                          before.buffers - after.buffers,
                          formatDecimalBytes(before.bufferBytes -
                                             after.bufferBytes));
      os << "  fusions by kind     ";
      for (unsigned k = 0; k < 4; ++k)
        os << " " << stringifyFusionKind(static_cast<FusionKind>(k)) << " "
           << fuser.perKind[k] << " (" << fuser.opsPerKind[k] << " ops)"
           << (k < 3 ? "," : "\n");
    }
  }
};

} // namespace
