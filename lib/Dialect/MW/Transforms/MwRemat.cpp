//===- MwRemat.cpp - --mw-remat -------------------------------------------===//
//
// Gradient checkpointing on the tensor-level training step: every forward
// value the backward pass uses is either kept (alive from the forward pass to
// its last backward use) or dropped and recomputed by cloning its forward
// recompute chain right before its first backward use. Strategies choose the
// kept set. Candidates are planned and simulated on an integer copy of the
// step (StepGraph) with the arena's rules; the chosen program's peak is then
// measured by running the real pipeline (--mw-bufferize, --mw-static-arena)
// on a copy of the module, so a budget holds for the arena the runtime will
// allocate, not for a proxy. docs/remat.md has the design and the numbers.
//
//===----------------------------------------------------------------------===//

#include "memwall/Analysis/BufferLiveness.h"
#include "memwall/Dialect/MW/IR/MWOps.h"
#include "memwall/Dialect/MW/Transforms/BufferizableOpInterfaceImpl.h"
#include "memwall/Dialect/MW/Transforms/Passes.h"
#include "memwall/Planning/Milp.h"
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
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <chrono>
#include <climits>
#include <cmath>
#include <functional>
#include <numeric>
#include <map>

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

/// A roofline: peak dense compute and memory bandwidth; and the device
/// memory `budget=auto` plans for (0: none).
struct Target {
  StringRef name;
  double flopsPerSecond;
  double bytesPerSecond;
  int64_t memoryBytes;
};

/// DESIGN.md decision 10. h200/h100: dense bf16 989 TFLOP/s, HBM3e 4.8 TB/s
/// and HBM3 3.35 TB/s; a100: 312 TFLOP/s, 2.0 TB/s; cpu: a nominal server
/// socket (1 TFLOP/s, 100 GB/s). Memory: the nominal capacity in decimal
/// gigabytes (141 GB, 80 GB, 80 GB), a little under what the devices report
/// (about 150.7 GB and 85.5 GB), which leaves room for the CUDA context and
/// library workspaces. The host has no fixed memory to plan for.
constexpr Target kTargets[] = {{"h200", 989e12, 4.8e12, 141'000'000'000},
                               {"h100", 989e12, 3.35e12, 80'000'000'000},
                               {"a100", 312e12, 2.0e12, 80'000'000'000},
                               {"cpu", 1e12, 1e11, 0}};

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
// The step as arrays
//===----------------------------------------------------------------------===//

/// The step's ops and values with integer ids, so that candidate kept sets
/// can be planned and simulated without touching the IR. Built the same way
/// from a copy of the module, it gives the same ids.
struct StepGraph {
  struct Node {
    Operation *op = nullptr;
    /// Value ids the op reads: its operands first (`numDirect` of them),
    /// then values from above read inside its regions.
    SmallVector<int> operands;
    unsigned numDirect = 0;
    SmallVector<int> results;
    /// Per result: the operand index an optimizer update writes in place
    /// (-1 for none), and whether --mw-form-kernels may give the result a
    /// dying operand's buffer (elementwise ops).
    SmallVector<int> tied;
    SmallVector<bool> inPlace;
    bool forward = false, terminator = false, view = false, constant = false;
    int64_t flops = 0;
    double seconds = 0.0;
    /// What the strategies minimize: `seconds`, or with cost=flops the
    /// FLOPs at the target's peak compute.
    double cost = 0.0;
  };
  struct Val {
    int64_t bytes = 0;
    int def = -1; ///< node id, -1 for a function argument
    Type type;
  };
  std::vector<Node> nodes;
  std::vector<Val> vals;
  std::vector<Value> values;
  llvm::DenseMap<Value, int> ids;
  /// The value id of each of StepInfo::saved, and which ids are saved.
  SmallVector<int> saved;

  StepGraph(const StepInfo &info, const Target &target, bool flopsCost);
  bool isBackward(int node) const {
    return !nodes[node].forward && !nodes[node].terminator;
  }
  int idOf(Value v) {
    auto [it, inserted] = ids.try_emplace(v, static_cast<int>(vals.size()));
    if (inserted) {
      Val val;
      val.type = v.getType();
      val.bytes = isa<ShapedType>(v.getType()) ? shapedBytes(v.getType()) : 0;
      vals.push_back(val);
      values.push_back(v);
    }
    return it->second;
  }
};

StepGraph::StepGraph(const StepInfo &info, const Target &target,
                     bool flopsCost) {
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
    n.forward = info.forward.contains(&op);
    n.terminator = op.hasTrait<mlir::OpTrait::IsTerminator>();
    n.view = isa<ReshapeOp>(op);
    n.constant = op.hasTrait<mlir::OpTrait::ConstantLike>();
    n.flops = opFlops(&op);
    n.seconds = opSeconds(&op, target);
    n.cost = flopsCost ? n.flops / target.flopsPerSecond : n.seconds;
    nodes.push_back(std::move(n));
  }
  for (Value v : info.saved)
    saved.push_back(ids.lookup(v));
}

//===----------------------------------------------------------------------===//
// The rewrite: planned on the arrays, applied to the IR
//===----------------------------------------------------------------------===//

/// The clones a kept set implies and the values that replace the dropped
/// ones in the backward pass.
struct RematPlan {
  struct Clone {
    int node;   ///< the forward node cloned
    int before; ///< inserted right before this node (after earlier clones)
    SmallVector<int> operands; ///< value ids of its direct operands
    int firstResult;           ///< id of its first result; the rest follow
  };
  std::vector<Clone> clones;
  /// (dropped saved value, the value its backward uses read instead).
  SmallVector<std::pair<int, int>> replace;
  int numValues = 0;
  int64_t kept = 0, dropped = 0, flops = 0;
  double seconds = 0.0, cost = 0.0;
};

/// Keeps the saved values whose bit is set in `keep` (and the forced ones)
/// and recomputes the others, each right before its first backward use, by
/// cloning its recompute chain. `share`: a dropped value recomputed inside
/// another value's chain serves its own backward uses too (a checkpointed
/// segment is recomputed once, as torch.utils.checkpoint does); without it
/// only clones still live anyway are reused.
RematPlan planRemat(const StepGraph &g, const StepInfo &info,
                    const llvm::BitVector &keep, bool share) {
  RematPlan plan;
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

  /// A recomputed value and the last node index where it is live anyway.
  struct Available {
    int clone;
    int liveUntil;
  };
  llvm::DenseMap<int, Available> available;
  llvm::DenseSet<int> done;
  int next = g.vals.size();
  std::function<int(int, int, int)> materialize = [&](int v, int p,
                                                      int wanted) -> int {
    int def = g.vals[v].def;
    if (def < 0 || !g.nodes[def].forward || kept[v])
      return v;
    auto it = available.find(v);
    if (it != available.end() && it->second.liveUntil >= p)
      return it->second.clone;
    const StepGraph::Node &node = g.nodes[def];
    RematPlan::Clone c;
    c.node = def;
    c.before = p;
    for (unsigned o = 0; o < node.numDirect; ++o)
      c.operands.push_back(materialize(node.operands[o], p, wanted));
    c.firstResult = next;
    next += node.results.size();
    plan.flops += node.flops;
    plan.seconds += node.seconds;
    plan.cost += node.cost;
    int result = -1;
    for (auto [r, orig] : llvm::enumerate(node.results)) {
      int copy = c.firstResult + r;
      if (orig == v)
        result = copy;
      auto existing = available.find(orig);
      if (existing != available.end() && existing->second.liveUntil >= p)
        continue;
      int liveUntil = p;
      if (lastUse[orig] >= 0 && !done.contains(orig) &&
          (share || orig == wanted))
        liveUntil = lastUse[orig];
      available[orig] = {copy, liveUntil};
    }
    plan.clones.push_back(std::move(c));
    return result;
  };
  for (const Dropped &d : dropped) {
    int r = materialize(d.value, d.first, d.value);
    available[d.value] = {r, d.last};
    done.insert(d.value);
    plan.replace.push_back({d.value, r});
  }
  plan.numValues = next;
  return plan;
}

/// Applies `plan` (made on a graph of this very function) to the IR.
void applyPlan(const StepGraph &g, const RematPlan &plan) {
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
}

/// The arena a plan needs, by the rules of the real pipeline on the
/// rewritten program: one buffer per value, except that a reshape is a view
/// of its operand, an optimizer update writes its state in place, and an
/// elementwise op reuses an operand of its type whose buffer dies there (what
/// --mw-form-kernels and One-Shot Bufferize do); arguments, returned values
/// and constants are not in the arena. The peak of the live bytes (each
/// buffer rounded up to `alignment`) is the packer's lower bound, which
/// `best` reaches within 0.2% on training steps (docs/planner.md); the
/// chosen plan is then measured with the real pipeline. `profile`, when
/// given, receives the live bytes at each op of the original step (the most
/// at the op or at the clones inserted before it).
int64_t simulateArena(const StepGraph &g, const RematPlan &plan,
                      int64_t alignment,
                      std::vector<int64_t> *profile = nullptr) {
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
  auto operandAt = [&](const StepGraph::Node &n, const RematPlan::Clone *c,
                       bool backward, unsigned o) {
    if (c)
      return o < c->operands.size() ? c->operands[o] : n.operands[o];
    int v = n.operands[o];
    return backward && repl[v] >= 0 ? repl[v] : v;
  };
  auto resultAt = [&](const StepGraph::Node &n, const RematPlan::Clone *c,
                      unsigned r) {
    return c ? c->firstResult + static_cast<int>(r) : n.results[r];
  };
  std::vector<char> returned(numValues, 0);
  std::vector<int> nodeAt;
  forEachOp([&](const StepGraph::Node &n, const RematPlan::Clone *c, int p,
                bool backward) {
    // -1 for a clone (`n` is then the forward node it copies).
    nodeAt.push_back(c ? -1 : static_cast<int>(&n - g.nodes.data()));
    for (unsigned o = 0; o < n.operands.size(); ++o) {
      int v = operandAt(n, c, backward, o);
      last[v] = p;
      if (n.terminator)
        returned[v] = 1;
    }
    for (unsigned r = 0; r < n.results.size(); ++r)
      def[resultAt(n, c, r)] = p;
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
  forEachOp([&](const StepGraph::Node &n, const RematPlan::Clone *c, int p,
                bool backward) {
    for (unsigned ri = 0; ri < n.results.size(); ++ri) {
      int r = resultAt(n, c, ri);
      if (n.view && n.numDirect > 0) {
        join(r, operandAt(n, c, backward, 0));
        continue;
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
      outside[r] = n.constant || returned[r];
    }
  });
  std::vector<int64_t> delta(pos + 2, 0);
  for (int i = 0; i < numValues; ++i) {
    if (parent[i] != i || outside[i] || def[i] < 0)
      continue;
    int64_t bytes = valueOf(i).bytes;
    bytes = (bytes + alignment - 1) / alignment * alignment;
    delta[start[i]] += bytes;
    delta[end[i] + 1] -= bytes;
  }
  // The profile is per op of the original step: the most live bytes at the
  // op or at the clones inserted before it.
  int64_t live = 0, peak = 0, sinceLastNode = 0;
  if (profile)
    profile->assign(g.nodes.size(), 0);
  for (int p = 0; p < pos; ++p) {
    live += delta[p];
    peak = std::max(peak, live);
    sinceLastNode = std::max(sinceLastNode, live);
    if (profile && nodeAt[p] >= 0) {
      (*profile)[nodeAt[p]] = sinceLastNode;
      sinceLastNode = 0;
    }
  }
  return peak;
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

/// Megatron-LM's core attention (Korthikanti et al. 2022, selective
/// activation recomputation): in each attention region of a block, the
/// values computed from the first matmul of two activations (the scores,
/// QK^T) up to, not including, the next matmul of two activations (the
/// context, attention over V): scaling, masking, softmax, dropout. These
/// are the sequence-squared activations; Q, K, V and the context are not
/// in the set. A fused mw.attention keeps no such values, so the set is
/// then empty.
llvm::DenseSet<Value> coreAttentionValues(const StepInfo &info) {
  llvm::DenseSet<Value> argOnly = argumentOnlyValues(info);
  auto isActivation = [&](Value v) {
    return !isa<BlockArgument>(v) && !argOnly.contains(v);
  };
  llvm::DenseSet<Value> core;
  llvm::StringSet<> scored; // attention regions whose scores were found
  for (Operation *op : info.forwardOps) {
    auto split = splitBlock(locName(op->getLoc()));
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

/// Where each saved value is used: its last forward use and its first and
/// last backward use (op indices of the step), and which saved index a value
/// id is (-1 for values that are not droppable saved values).
struct SavedUses {
  SmallVector<int> lastFwd, firstBwd, lastBwd;
  std::vector<int> savedIndex;
  std::vector<char> forcedValue;

  SavedUses(const StepGraph &g, const StepInfo &info) {
    unsigned n = g.saved.size();
    savedIndex.assign(g.vals.size(), -1);
    forcedValue.assign(g.vals.size(), 0);
    for (auto [i, v] : llvm::enumerate(g.saved)) {
      if (info.forced.test(i))
        forcedValue[v] = 1;
      else
        savedIndex[v] = i;
    }
    lastFwd.assign(n, -1);
    firstBwd.assign(n, INT_MAX);
    lastBwd.assign(n, -1);
    for (auto [j, node] : llvm::enumerate(g.nodes))
      for (int v : node.operands) {
        int i = savedIndex[v];
        if (i < 0)
          continue;
        if (node.forward) {
          lastFwd[i] = std::max<int>(lastFwd[i], j);
        } else if (g.isBackward(j)) {
          firstBwd[i] = std::min<int>(firstBwd[i], j);
          lastBwd[i] = std::max<int>(lastBwd[i], j);
        }
      }
  }
  /// The first op at which saved value `i` is dead in the forward pass:
  /// after its definition and its last forward use. Dropping it frees its
  /// bytes from there to its first backward use.
  int deadFrom(const StepGraph &g, unsigned i) const {
    return std::max(lastFwd[i], g.vals[g.saved[i]].def) + 1;
  }
  /// Whether saved value `i`, when dropped, has its recomputed copy alive at
  /// op `t` (recomputed earlier, not yet past its last use).
  bool aliveAt(int i, int t) const { return firstBwd[i] < t && t <= lastBwd[i]; }
};

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
  bool share = false;
  int64_t flops = 0;
  double seconds = 0.0, cost = 0.0;
  int64_t simArena = 0;
  /// The arena the real pipeline planned, once measured.
  std::optional<int64_t> arena;
  int64_t effectiveArena() const {
    return arena ? std::max(*arena, simArena) : simArena;
  }
};

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

struct MwRematPass : public mw::impl::MwRematBase<MwRematPass> {
  using MwRematBase::MwRematBase;

  void runOnOperation() override;

private:
  /// Applies `plan` to a copy of the module and plans it with the real
  /// pipeline; failure after a diagnostic.
  FailureOr<Measurement> measure(const RematPlan &plan, bool wantLive);
  /// Checkmate-style MILP; fills `milp*` and returns the kept set.
  FailureOr<llvm::BitVector> solveOptimal(const StepInfo &info,
                                          const StepGraph &g,
                                          int64_t arenaBudget);
  const Target *tgt = nullptr;
  double verifySeconds = 0.0;
  std::string lastMilpStatus;
  std::string milpSummary;
};

FailureOr<Measurement> MwRematPass::measure(const RematPlan &plan,
                                            bool wantLive) {
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
  StepInfo info;
  if (failed(info.build(f)))
    return failure();
  applyPlan(StepGraph(info, *tgt, cost == "flops"), plan);

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
  Measurement m;
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

std::string formatBytes(int64_t bytes) {
  std::string s = std::to_string(bytes) + " B";
  if (bytes >= (1 << 20))
    s += llvm::formatv(" ({0:F2} MiB)", bytes / 1048576.0).str();
  else if (bytes >= 1024)
    s += llvm::formatv(" ({0:F2} KiB)", bytes / 1024.0).str();
  return s;
}

/// The arena alignment --mw-static-arena uses by default, which the
/// simulation rounds buffers to.
constexpr int64_t kAlignment = 256;

//===----------------------------------------------------------------------===//
// optimal: Checkmate's MILP on the fixed schedule
//===----------------------------------------------------------------------===//

/// The MILP, on the step's fixed op order (Checkmate's formulation with the
/// schedule fixed, as in its linearized variant): a binary d_i per droppable
/// saved value (1: dropped, recomputed right before its first backward use
/// and alive to its last, as strategy `auto`'s non-sharing rewrite does);
///  - memory: at every op p of the save-all program whose live bytes
///    (simulated, same rules as the arena) exceed the arena budget, the
///    dropped values that are dead at p (after their last forward use,
///    before their first backward use) free at least the excess;
///  - cost: a continuous x[t,o] per insertion point t and forward op o that
///    t's recompute chains may reach: x[t,def(v)] >= d_v for the values
///    first used at t, and along every operand edge o <- o' of a chain
///    x[t,o'] >= x[t,o] (an intermediate, never kept) or
///    x[t,o'] >= x[t,o] + d_u - 1 (a droppable saved u), except where u is
///    still alive at t (recomputed earlier, not yet past its last use);
///    minimize sum x[t,o] * roofline seconds of o.
/// Transient chain buffers are not in the memory rows: the result is checked
/// with the real pipeline, and the budget tightened by the excess if needed.
FailureOr<llvm::BitVector> MwRematPass::solveOptimal(const StepInfo &info,
                                                     const StepGraph &g,
                                                     int64_t arenaBudget) {
  using memwall::planning::MilpModel;
  using memwall::planning::MilpResult;
  unsigned n = g.saved.size();
  SavedUses uses(g, info);
  const std::vector<int> &savedIndex = uses.savedIndex;
  const SmallVector<int> &firstBwd = uses.firstBwd;
  RematPlan saveAll = planRemat(g, info, llvm::BitVector(n, true), false);
  std::vector<int64_t> base;
  simulateArena(g, saveAll, kAlignment, &base);

  MilpModel model;
  SmallVector<int> dropVar(n, -1);
  for (unsigned i = 0; i < n; ++i)
    if (!info.forced.test(i) && firstBwd[i] != INT_MAX)
      dropVar[i] = model.addVar(0.0, 1.0, 0.0, /*integer=*/true);
  auto aligned = [](int64_t b) {
    return (b + kAlignment - 1) / kAlignment * kAlignment;
  };
  // Memory rows, one per run of ops with the same set of freeable values
  // (the set changes only at a last forward or first backward use).
  {
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
  milpSummary = llvm::formatv(" milp_status={0} milp_objective={1} "
                              "milp_bound={2} milp_gap={3} milp_vars={4} "
                              "milp_rows={5}",
                              memwall::planning::toString(result.status),
                              result.objective * 1e-6, result.bound * 1e-6,
                              result.gap, model.vars.size(), model.rows.size())
                    .str();
  lastMilpStatus = memwall::planning::toString(result.status);
  if (result.status != MilpResult::Status::Optimal &&
      result.status != MilpResult::Status::Feasible) {
    if (result.status == MilpResult::Status::Error)
      mlir::emitError(func::FuncOp(info.func).getLoc())
          << "mw-remat: the MILP solver failed: " << result.message;
    return failure();
  }
  llvm::BitVector keep(n, true);
  for (unsigned i = 0; i < n; ++i)
    if (dropVar[i] >= 0 && result.x[dropVar[i]] > 0.5)
      keep.reset(i);
  return keep;
}

/// The kept set of a fixed strategy, and whether its rewrite shares
/// recomputed segments; failure after a diagnostic.
FailureOr<std::pair<llvm::BitVector, bool>>
fixedKeep(const StepInfo &info, StringRef strategy, int64_t k,
          StringRef function) {
  unsigned n = info.saved.size();
  llvm::BitVector keep(n, true);
  bool share = true;
  if (strategy == "all") {
    keep.reset();
    share = false;
  } else if (strategy == "every-k" || strategy == "selective") {
    BlockInfo bi = computeBlocks(info);
    if (bi.blocks.empty())
      return mlir::emitError(func::FuncOp(info.func).getLoc())
                 << "mw-remat: strategy=" << strategy
                 << " needs transformer blocks, named by op locations with a "
                    "layer index (loc(\"h.0.attn\"), "
                    "loc(\"model.layers.0.mlp\")); @"
                 << function << " has none",
             failure();
    llvm::StringMap<unsigned> blockIndex;
    for (auto [i, b] : llvm::enumerate(bi.blocks))
      blockIndex[b] = i;
    llvm::DenseSet<Value> core;
    if (strategy == "selective")
      core = coreAttentionValues(info);
    for (unsigned i = 0; i < n; ++i) {
      if (bi.blockOf[i].empty())
        continue; // outside blocks: embeddings, final norm, head, loss
      if (strategy == "every-k") {
        unsigned idx = blockIndex[bi.blockOf[i]];
        keep[i] = bi.isBlockOutput[i] && (idx + 1) % k == 0;
      } else {
        keep[i] = !core.contains(info.saved[i]);
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
  return std::make_pair(keep, share);
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
  if (cost != "time" && cost != "flops")
    return fail("unknown cost '" + cost + "' (expected time or flops)");
  if (!(timeLimit > 0.0) || std::isinf(timeLimit))
    return fail("time-limit must be a positive number of seconds");
  std::optional<Budget> parsedBudget;
  if (!budget.empty()) {
    parsedBudget = parseBudget(budget);
    if (!parsedBudget)
      return fail("malformed budget '" + budget +
                  "' (expected bytes with an optional unit B, KB, MB, GB, TB, "
                  "KiB, MiB, GiB, TiB, a percentage like 60%, or auto)");
    if (parsedBudget->isDevice) {
      if (!tgt->memoryBytes)
        return fail("budget=auto plans for the target's device memory, and "
                    "target=" +
                    target + " has none; give bytes or a percentage");
      parsedBudget->bytes = tgt->memoryBytes;
    }
  }
  if (strategy == "optimal" && !parsedBudget)
    return fail("strategy=optimal needs a budget (budget=BYTES or NN%)");

  auto func = module.lookupSymbol<func::FuncOp>(function);
  if (!func || func.isExternal())
    return fail("no function @" + function + " with a body (set function=NAME)");
  StepInfo info;
  if (failed(info.build(func)))
    return signalPassFailure();
  StepGraph g(info, *tgt, cost == "flops");
  unsigned n = info.saved.size();
  verifySeconds = 0.0;
  milpSummary.clear();
  auto solveStart = std::chrono::steady_clock::now();

  // The save-all program, measured: the reference for percentages and the
  // persistent bytes every candidate shares.
  RematPlan saveAllPlan = planRemat(g, info, llvm::BitVector(n, true), true);
  FailureOr<Measurement> saveAll = measure(saveAllPlan, false);
  if (failed(saveAll))
    return signalPassFailure();
  int64_t budgetBytes = -1;
  std::string budgetSource =
      parsedBudget && parsedBudget->isDevice
          ? " (budget=auto: the memory of target " + target + ")"
          : "";
  if (parsedBudget) {
    budgetBytes = parsedBudget->isPercent
                      ? static_cast<int64_t>(std::floor(
                            saveAll->peak() * parsedBudget->percent / 100.0))
                      : parsedBudget->bytes;
    if (budgetBytes < saveAll->persistent) {
      mlir::emitError(func.getLoc())
          << "mw-remat: budget " << formatBytes(budgetBytes) << budgetSource
          << " is below the persistent state of @" << func.getSymName() << ", "
          << formatBytes(saveAll->persistent)
          << " (parameters, optimizer state, inputs, outputs), which no "
             "rematerialization can reduce";
      return signalPassFailure();
    }
  }
  int64_t arenaBudget =
      budgetBytes < 0 ? INT64_MAX : budgetBytes - saveAll->persistent;

  // An unreachable budget: the smallest peak found and what is live there.
  auto unreachable = [&](const RematPlan &lowest, StringRef how) {
    FailureOr<Measurement> low = measure(lowest, true);
    if (failed(low))
      return signalPassFailure();
    InFlightDiagnostic diag =
        mlir::emitError(func.getLoc())
        << "mw-remat: budget " << formatBytes(budgetBytes) << budgetSource
        << " is unreachable for @" << function
        << ": the smallest planned peak found is " << formatBytes(low->peak())
        << " (arena " << formatBytes(low->arena) << " + persistent "
        << formatBytes(low->persistent) << ", " << how << "); save-all peak "
        << formatBytes(saveAll->peak());
    for (const LiveAtPeak &l : low->live)
      diag.attachNote(l.loc) << "live at the peak: '" << l.name << "', "
                             << formatBytes(l.bytes);
    signalPassFailure();
  };

  RematPlan chosen;
  std::string chosenName = strategy;
  llvm::BitVector keep(n, true);
  Measurement result = *saveAll;
  double solveSeconds = 0.0;
  if (strategy == "auto" && parsedBudget) {
    // Candidates: the fixed strategies that apply, and the steps of a
    // peak-driven greedy path, each planned and simulated. The cheapest
    // candidate whose arena fits is measured with the real pipeline; if it
    // does not fit after all, the next one. The candidate set does not
    // depend on the budget, so a larger budget never costs more recompute
    // and a smaller one never gives a larger peak.
    std::vector<Candidate> cands;
    auto add = [&](StringRef name, const llvm::BitVector &kp, bool share,
                   const RematPlan &plan, int64_t simArena) {
      Candidate c;
      c.name = name.str();
      c.keep = kp;
      c.share = share;
      c.flops = plan.flops;
      c.seconds = plan.seconds;
      c.cost = plan.cost;
      c.simArena = simArena;
      cands.push_back(std::move(c));
    };
    add("none", llvm::BitVector(n, true), true, saveAllPlan,
        simulateArena(g, saveAllPlan, kAlignment));
    cands.front().arena = saveAll->arena;
    {
      // Fixed strategies, quietly skipping those the step has no blocks for.
      ScopedDiagnosticHandler quiet(&getContext(),
                                    [](Diagnostic &) { return success(); });
      SmallVector<std::pair<std::string, int64_t>> fixed = {
          {"all", 0}, {"sqrt", 0}, {"selective", 0}};
      for (int64_t kk = 1; kk <= 4; ++kk)
        fixed.push_back({"every-k", kk});
      for (auto &[name, kk] : fixed) {
        auto fk = fixedKeep(info, name, std::max<int64_t>(kk, 1), function);
        if (failed(fk))
          continue;
        RematPlan plan = planRemat(g, info, fk->first, fk->second);
        add(kk ? name + " k=" + std::to_string(kk) : name, fk->first,
            fk->second, plan, simulateArena(g, plan, kAlignment));
      }
    }
    // The path: from save-all, repeatedly find the op where the simulated
    // arena peaks and drop, among the kept values dead there (after their
    // last forward use, before their first backward use), the one with the
    // most bytes per second of recomputing its chain from what is kept.
    {
      SavedUses uses(g, info);
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
            add(name, kp, false, plan, arena);
            // The same kept set with shared segments: a dropped value
            // recomputed in a chain serves its own uses (recomputed once,
            // alive longer).
            RematPlan shared = planRemat(g, info, kp, true);
            add(name + " shared", kp, true, shared,
                simulateArena(g, shared, kAlignment));
          }
          int peakAt = std::max_element(profile.begin(), profile.end()) -
                       profile.begin();
          dead.clear();
          for (unsigned i = 0; i < n; ++i) {
            if (!kp.test(i) || info.forced.test(i) ||
                uses.firstBwd[i] == INT_MAX)
              continue;
            if (!(uses.deadFrom(g, i) <= peakAt && peakAt < uses.firstBwd[i]))
              continue;
            double cost = chainSeconds(i) + 1e-15;
            double bytes = g.vals[g.saved[i]].bytes;
            dead.push_back({scoring == 0 ? bytes / cost : 1.0 / cost, i});
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
          plan = planRemat(g, info, kp, false);
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
      SmallVector<unsigned> order(cands.size());
      std::iota(order.begin(), order.end(), 0u);
      std::stable_sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
        if (cands[a].simArena != cands[b].simArena)
          return cands[a].simArena < cands[b].simArena;
        return cheaper(cands[a], cands[b]);
      });
      SmallVector<unsigned> frontier;
      for (unsigned c : order)
        if (frontier.empty() || cheaper(cands[c], cands[frontier.back()]))
          frontier.push_back(c);
      SmallVector<int64_t> levels;
      int64_t lowest = cands[frontier.front()].simArena;
      int64_t highest = cands[frontier.back()].simArena;
      for (unsigned c : frontier)
        levels.push_back(cands[c].simArena);
      for (int j = 1; j < 64; ++j)
        levels.push_back(lowest + (highest - lowest) * j / 64);
      llvm::sort(levels);
      levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
      SmallVector<std::pair<double, unsigned>> dropped;
      unsigned base = 0;
      for (int64_t level : levels) {
        while (base + 1 < frontier.size() &&
               cands[frontier[base + 1]].simArena <= level)
          ++base;
        const Candidate &from = cands[frontier[base]];
        kp = from.keep;
        bool share = from.share;
        std::string name = from.name;
        RematPlan plan = planRemat(g, info, kp, share);
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
        for (auto [cost, i] : dropped) {
          int lo = uses.deadFrom(g, i), hi = uses.firstBwd[i];
          int64_t bytes = llvm::alignTo(g.vals[g.saved[i]].bytes, kAlignment);
          int64_t most = 0;
          for (int t = lo; t < hi; ++t)
            most = std::max(most, profile[t]);
          if (most + bytes > level)
            continue;
          for (int t = lo; t < hi; ++t)
            profile[t] += bytes;
          pruned.set(i);
          changed = true;
        }
        if (!changed)
          continue;
        RematPlan prunedPlan = planRemat(g, info, pruned, share);
        add(name + " pruned to " + std::to_string(level), pruned, share,
            prunedPlan, simulateArena(g, prunedPlan, kAlignment));
      }
    }
    solveSeconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - solveStart)
                       .count() -
                   verifySeconds;
    while (true) {
      Candidate *best = nullptr;
      for (Candidate &c : cands)
        if (c.effectiveArena() <= arenaBudget && (!best || cheaper(c, *best)))
          best = &c;
      if (!best) {
        Candidate *lowest = &cands.front();
        for (Candidate &c : cands)
          if (c.effectiveArena() < lowest->effectiveArena() ||
              (c.effectiveArena() == lowest->effectiveArena() &&
               cheaper(c, *lowest)))
            lowest = &c;
        return unreachable(planRemat(g, info, lowest->keep, lowest->share),
                           "strategy " + lowest->name);
      }
      RematPlan plan = planRemat(g, info, best->keep, best->share);
      if (best->arena) {
        result = *saveAll; // only `none` starts measured
      } else {
        FailureOr<Measurement> m = measure(plan, false);
        if (failed(m))
          return signalPassFailure();
        best->arena = m->arena;
        result = *m;
        if (m->arena > arenaBudget)
          continue;
      }
      chosen = std::move(plan);
      keep = best->keep;
      chosenName = best->name;
      break;
    }
  } else if (strategy == "optimal") {
    int64_t target = arenaBudget;
    bool done = false;
    for (int round = 0; round < 4 && !done; ++round) {
      FailureOr<llvm::BitVector> kp = solveOptimal(info, g, target);
      if (failed(kp)) {
        if (lastMilpStatus == "infeasible")
          return unreachable(planRemat(g, info, llvm::BitVector(n, false),
                                       false),
                             "strategy all; the MILP is infeasible");
        if (lastMilpStatus == "no-solution")
          return fail("strategy=optimal found no solution within time-limit=" +
                      llvm::formatv("{0}", timeLimit).str() +
                      " seconds; raise it or use strategy=auto");
        return signalPassFailure();
      }
      keep = *kp;
      chosen = planRemat(g, info, keep, false);
      FailureOr<Measurement> m = measure(chosen, false);
      if (failed(m))
        return signalPassFailure();
      result = *m;
      if (m->arena <= arenaBudget)
        done = true;
      else
        target -= m->arena - arenaBudget + kAlignment;
    }
    solveSeconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - solveStart)
                       .count() -
                   verifySeconds;
    if (!done)
      return fail("strategy=optimal: after 4 rounds of tightening, the "
                  "MILP's kept set still plans to a peak of " +
                  formatBytes(result.peak()) + ", over the budget " +
                  formatBytes(budgetBytes) + "; use strategy=auto");
  } else {
    StringRef fixedName = strategy == "auto" ? "none" : StringRef(strategy);
    FailureOr<std::pair<llvm::BitVector, bool>> fk =
        fixedKeep(info, fixedName, k, function);
    if (failed(fk))
      return signalPassFailure();
    keep = fk->first;
    chosen = planRemat(g, info, keep, fk->second);
    solveSeconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - solveStart)
                       .count() -
                   verifySeconds;
    if (!chosen.clones.empty()) {
      FailureOr<Measurement> m = measure(chosen, false);
      if (failed(m))
        return signalPassFailure();
      result = *m;
    }
    if (budgetBytes >= 0 && result.peak() > budgetBytes) {
      mlir::emitError(func.getLoc())
          << "mw-remat: strategy=" << strategy << " plans a peak of "
          << formatBytes(result.peak()) << " (arena "
          << formatBytes(result.arena) << " + persistent "
          << formatBytes(result.persistent) << "), over the budget "
          << formatBytes(budgetBytes)
          << "; strategy=auto finds the least recompute under a budget";
      return signalPassFailure();
    }
  }

  // Rewrite the real step.
  int64_t stepFlops = 0;
  for (Operation &op : func.getBody().front())
    stepFlops += opFlops(&op);
  applyPlan(g, chosen);
  numKept += chosen.kept;
  numDropped += chosen.dropped;
  numCloned += chosen.clones.size();
  // Bytes kept per layer: the block of the defining op's location
  // ("h.3"), else its location name ("lm_head"), in forward order.
  // `blockBytes` counts the kept bytes of the transformer blocks alone:
  // Megatron-LM's activation memory (Korthikanti et al. 2022) leaves the
  // embeddings, the head and the loss out.
  int64_t savedBytes = 0, blockBytes = 0;
  llvm::MapVector<StringRef, int64_t> keptByLayer;
  llvm::StringSet<> layerNames;
  for (auto [i, v] : llvm::enumerate(info.saved)) {
    std::string name = locName(v.getDefiningOp()->getLoc());
    bool inBlock = false;
    if (auto split = splitBlock(name)) {
      name = split->first;
      inBlock = true;
    }
    if (name.empty())
      name = "unnamed";
    StringRef layer = layerNames.insert(name).first->getKey();
    int64_t bytes = 0;
    if (keep.test(i) || info.forced.test(i))
      bytes = shapedBytes(v.getType());
    savedBytes += bytes;
    if (inBlock)
      blockBytes += bytes;
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
                b.getI64IntegerAttr(chosen.flops));
  func->setAttr("mw.remat.step_flops", b.getI64IntegerAttr(stepFlops));
  func->setAttr("mw.remat.recompute_seconds",
                b.getF64FloatAttr(chosen.seconds));
  if (budgetBytes >= 0)
    func->setAttr("mw.remat.budget_bytes", b.getI64IntegerAttr(budgetBytes));
  func->setAttr("mw.remat.save_all_peak_bytes",
                b.getI64IntegerAttr(saveAll->peak()));
  func->setAttr("mw.remat.peak_bytes", b.getI64IntegerAttr(result.peak()));
  if (verbose) {
    // Timings vary from run to run, so they go to a remark, never to the IR.
    mlir::emitRemark(func.getLoc())
        << "mw-remat: strategy=" << strategy << " budget=" << budgetBytes
        << " peak=" << result.peak() << " save_all_peak=" << saveAll->peak()
        << " arena=" << result.arena
        << " simulated_arena=" << simulateArena(g, chosen, kAlignment)
        << " persistent=" << result.persistent
        << " saved_activation_bytes=" << savedBytes
        << " block_activation_bytes=" << blockBytes
        << " recompute_flops=" << chosen.flops << " step_flops=" << stepFlops
        << " recompute_seconds=" << llvm::formatv("{0:e}", chosen.seconds)
        << " ops=" << g.nodes.size() << " chosen=\"" << chosenName << "\""
        << " solve_ms=" << llvm::formatv("{0:F3}", solveSeconds * 1e3)
        << " verify_ms=" << llvm::formatv("{0:F3}", verifySeconds * 1e3)
        << milpSummary;
  }
}

} // namespace
