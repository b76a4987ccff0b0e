//===- RematGraph.h - The step of --mw-remat as arrays ----------*- C++ -*-===//
//
// Private to --mw-remat (MwRemat.cpp, RematMilp.cpp): the training step as
// integer-indexed ops and values (StepGraph), the clones a kept set implies
// (RematPlan, planRemat), their application to the IR (applyPlan), the
// arena a plan needs by the arena's own rules (simulateArena), and where each
// saved value is used (SavedUses). Candidates are planned and simulated here
// without touching the IR.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_LIB_DIALECT_MW_TRANSFORMS_REMATGRAPH_H
#define MEMWALL_LIB_DIALECT_MW_TRANSFORMS_REMATGRAPH_H

#include "memwall/Analysis/StepStructure.h"
#include "memwall/Analysis/Targets.h"
#include "memwall/Dialect/MW/IR/MWOps.h"
#include "memwall/Planning/Packer.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

namespace mlir::mw::remat {

/// The arena alignment --mw-static-arena uses by default, which the
/// simulation rounds buffers to.
constexpr int64_t kAlignment = 256;

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
    /// What --mw-fold-views may do with the op's kernel: a transpose or a
    /// slice (`shapeOnly`) read through a view of its input, a transpose
    /// whose input a matmul writes through a view of its destination, and a
    /// concatenation whose pieces their writers write in place.
    bool shapeOnly = false, transpose = false, matmul = false, concat = false;
    /// What --mw-hoist-updates moves: an optimizer update that writes every
    /// state in place into the arguments it replaces (`hoistable`), and an
    /// op that only feeds such updates and moves with them (`feeds`: a
    /// pointwise op, a concatenation or a local slice of a collective).
    bool hoistable = false, feeds = false;
    /// For an op that `feeds`: the nodes that read its results (the return
    /// aside).
    SmallVector<int> feedUsers;
    /// For a hoistable update of a transformer block's parameter, the
    /// block: --mw-hoist-updates runs a block's updates side by side, once
    /// all of them may run (its group=block). -1 otherwise.
    int64_t hoistGroup = -1;
    /// For a backward op, its backward segment: a maximal run of backward
    /// ops of one transformer block (or of the layers outside blocks: the
    /// loss tail); ops without a layer path join the run they are in, and
    /// outside any run each is a segment of its own. -1 for other ops.
    int segment = -1;
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
    /// A forward value computed from the data (not from parameters and
    /// constants alone) and read by a forward op of another block (or from
    /// outside blocks into one, or back out): the residual stream between
    /// blocks. A recomputed copy of one serves every later use.
    bool boundary = false;
  };
  std::vector<Node> nodes;
  std::vector<Val> vals;
  std::vector<Value> values;
  llvm::DenseMap<Value, int> ids;
  /// The value id of each of StepInfo::saved, and which ids are saved.
  SmallVector<int> saved;
  /// simulateArena places the updates (and the ops that only feed them)
  /// where --mw-hoist-updates would: --mw-remat's hoist-updates=true.
  bool simulateHoisted = false;

  StepGraph(const StepStructure &info, const Target &target, bool flopsCost);
  bool isBackward(int node) const {
    return !nodes[node].forward && !nodes[node].terminator;
  }
  int idOf(Value v) {
    auto [it, inserted] = ids.try_emplace(v, static_cast<int>(vals.size()));
    if (inserted) {
      Val val;
      val.type = v.getType();
      val.bytes = isa<ShapedType>(v.getType()) ? mw::detail::tensorBytes(v.getType()) : 0;
      vals.push_back(val);
      values.push_back(v);
    }
    return it->second;
  }
};

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
  /// A copy that one backward op reads instead of a value, for plans whose
  /// backward uses of one value read different copies (planStaged);
  /// applied after `replace`.
  struct UseReplacement {
    int node;  ///< the backward node
    int value; ///< the value it reads
    int with;  ///< the copy it reads instead
    bool operator==(const UseReplacement &o) const {
      return node == o.node && value == o.value && with == o.with;
    }
  };
  std::vector<UseReplacement> useReplace;
  int numValues = 0;
  int64_t kept = 0, dropped = 0, flops = 0;
  double seconds = 0.0, cost = 0.0;
  /// planRemat stopped: the plan would recompute more ops than
  /// kMaxRecomputedForwards forward passes hold (maxClones). The plan is
  /// incomplete: simulateArena gives it kOversizedArena, and --mw-remat
  /// neither measures nor applies it.
  bool oversized = false;
};

/// The most forward passes' worth of ops a plan may recompute. Near the
/// smallest peaks of deep steps the greedy paths recompute each dropped
/// value's chain for every use: hundreds of forwards at GPT-3's width, and
/// on a step without blocks (a chain of 50000 ops) a plan dropping every
/// value recomputes the chain down to the start for each use, a quadratic
/// plan that ran out of 24 GB before it was built.
constexpr int64_t kMaxRecomputedForwards = 16;

/// kMaxRecomputedForwards forward passes of `g`, in clones.
int64_t maxClones(const StepGraph &g);

/// The arena simulateArena gives an oversized plan: above every budget,
/// with room to add to it without overflow.
constexpr int64_t kOversizedArena = INT64_MAX / 4;


/// Which recomputed values later backward uses may read instead of
/// recomputing them again.
struct Sharing {
  /// A dropped value recomputed inside another value's chain serves its own
  /// backward uses too (a checkpointed segment is recomputed once, as
  /// torch.utils.checkpoint does), alive from there to its last use.
  bool chains = false;
  /// A clone serves every later use in the backward segment it was made in
  /// (StepGraph::Node::segment), and a clone of a boundary value serves
  /// every later use: a block's forward is recomputed once, just before its
  /// backward, from its input recomputed once. Without it (and without
  /// `chains`) only clones still live anyway are reused, and each backward
  /// use recomputes its chain down to what is kept.
  bool segments = true;
  /// Every clone serves every later use: each forward op is recomputed at
  /// most once, its copy alive to the last use of any of its results. The
  /// least recompute a kept set allows (saved-budget's exact solver prices
  /// kept sets this way), at the price of clones alive longer.
  bool global = false;
};

/// Keeps the saved values whose bit is set in `keep` (and the forced ones)
/// and recomputes the others, each right before its first backward use, by
/// cloning its recompute chain (constants are not cloned: the clones read
/// the original, which stays in the arena to its last read); `sharing` says
/// which clones later uses reuse. Every clone in the plan is one op in the
/// rewritten IR, and `flops` is their sum.
RematPlan planRemat(const StepGraph &g, const StepStructure &info,
                    const llvm::BitVector &keep, Sharing sharing);

/// Per node: whether its results are views of its first operand in the
/// pipeline whatever the plan: a reshape, or a forward transpose or slice
/// that --mw-fold-views folds into its input for every copy of it, because
/// no op reading it (the ones clones copy among them) is a view, the
/// return, or an elementwise op that may take its buffer in place.
std::vector<char> alwaysViews(const StepGraph &g);

/// The plan of a staged recompute schedule. `times` are backward nodes in
/// increasing order; stage s runs after times[s] up to and including
/// times[s + 1] (the last stage: to the end of the step). `cloned[s]` lists
/// the forward nodes recomputed in stage s, each once: right before the
/// first op of the stage that reads it (a backward op, or another clone of
/// the stage), or before times[s + 1] when only later stages read it. A
/// backward op reads the copy made by the latest stage up to its own that
/// recomputes the value, else the original, which then stays alive to its
/// last read; ops up to times[0] read the originals. (With gradient
/// accumulation a later micro-batch's forward makes originals inside the
/// backward pass: clones of stages before that are not read.) A view (alwaysViews)
/// of a recomputed value is cloned with it where it is read, free. A listed node nothing reads
/// is not cloned. `keep` receives the saved values some backward op still
/// reads as the original (and the forced ones). This is the plan of the
/// staged MILP's schedule (RematMilp.h): clones placed by stage, not before
/// each dropped value's first use as planRemat places them, and one value
/// may be read through different copies (the original, then a clone; or
/// clones of two stages), which planRemat, one copy per dropped value,
/// cannot express.
RematPlan planStaged(const StepGraph &g, const StepStructure &info,
                     ArrayRef<int> times, ArrayRef<SmallVector<int>> cloned,
                     llvm::BitVector &keep);

/// Applies `plan` (made on a graph of this very function) to the IR.
void applyPlan(const StepGraph &g, const RematPlan &plan);

/// The arena a plan needs, by the rules of the real pipeline on the
/// rewritten program: one buffer per value, except that a reshape is a view
/// of its operand, an optimizer update writes its state in place, and an
/// elementwise op reuses an operand of its type whose buffer dies there (what
/// --mw-form-kernels and One-Shot Bufferize do); arguments and returned
/// values are not in the arena, constants are (from their op to their last
/// read, as --mw-form-kernels places them). With `g.simulateHoisted`, each
/// hoistable update runs as soon as its operands exist and the other reads
/// of what it overwrites are done, the ops that only feed it right before
/// it, a block's updates together (--mw-hoist-updates' list schedule, so
/// each gradient dies at its update); moved ops keep their order among
/// themselves, right after the op they wait for.
/// The peak of the live bytes (each
/// buffer rounded up to `alignment`) is the packer's lower bound, which
/// `best` reaches within 0.2% on training steps (docs/planner.md); the
/// chosen plan is then measured with the real pipeline. `profile`, when
/// given, receives the live bytes at each op of the original step (the most
/// at the op or at the clones inserted before it). `buffers`, when given,
/// receives the arena buffers the simulation places, with their lifetimes
/// over its schedule, for the packer (half-open, as packBuffers takes them).
/// `backwardProfile`, when given, receives per op of the original step the
/// live bytes there of the buffers that hold backward values only (no
/// forward value, clone, argument or returned value shares them): the part
/// of the profile no plan changes (clones read forward values only), which
/// the peak bound counts as what every plan holds. `inArena`, when given,
/// receives per value of the original step whether its buffer is in the
/// arena (not an argument's, nor shared with a returned value).
int64_t simulateArena(const StepGraph &g, const RematPlan &plan,
                      int64_t alignment,
                      std::vector<int64_t> *profile = nullptr,
                      std::vector<memwall::planning::PackBuffer> *buffers =
                          nullptr,
                      std::vector<int64_t> *backwardProfile = nullptr,
                      std::vector<char> *inArena = nullptr);

/// Where each saved value is used: its last forward use and its first and
/// last backward use (op indices of the step), and which saved index a value
/// id is (-1 for values that are not droppable saved values).
struct SavedUses {
  SmallVector<int> lastFwd, firstBwd, lastBwd;
  std::vector<int> savedIndex;
  std::vector<char> forcedValue;

  SavedUses(const StepGraph &g, const StepStructure &info) {
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

/// A profile of live bytes per op with the maximum over a range of ops and
/// an addition to a range, each in O(log n) (a segment tree with lazy
/// additions): the reverse delete asks both once per dropped value, over
/// the value's dead interval, which on a long step spans most of it (a
/// plain loop made it quadratic: half of auto's time on a 12000-op chain).
class RangeProfile {
public:
  explicit RangeProfile(ArrayRef<int64_t> profile)
      : size(profile.size()), most(4 * std::max<size_t>(size, 1), 0),
        pending(most.size(), 0) {
    if (size)
      build(1, 0, size, profile);
  }
  /// The largest entry in [lo, hi); 0 for an empty range.
  int64_t max(size_t lo, size_t hi) {
    return lo < hi ? query(1, 0, size, lo, hi) : 0;
  }
  /// Adds `bytes` to every entry in [lo, hi).
  void add(size_t lo, size_t hi, int64_t bytes) {
    if (lo < hi)
      update(1, 0, size, lo, hi, bytes);
  }

private:
  void build(size_t node, size_t b, size_t e, ArrayRef<int64_t> profile) {
    if (e - b == 1) {
      most[node] = profile[b];
      return;
    }
    size_t m = (b + e) / 2;
    build(2 * node, b, m, profile);
    build(2 * node + 1, m, e, profile);
    most[node] = std::max(most[2 * node], most[2 * node + 1]);
  }
  int64_t query(size_t node, size_t b, size_t e, size_t lo, size_t hi) {
    if (lo <= b && e <= hi)
      return most[node];
    size_t m = (b + e) / 2;
    int64_t best = INT64_MIN;
    if (lo < m)
      best = std::max(best, query(2 * node, b, m, lo, hi));
    if (hi > m)
      best = std::max(best, query(2 * node + 1, m, e, lo, hi));
    return best + pending[node];
  }
  void update(size_t node, size_t b, size_t e, size_t lo, size_t hi,
              int64_t bytes) {
    if (lo <= b && e <= hi) {
      most[node] += bytes;
      pending[node] += bytes;
      return;
    }
    size_t m = (b + e) / 2;
    if (lo < m)
      update(2 * node, b, m, lo, hi, bytes);
    if (hi > m)
      update(2 * node + 1, m, e, lo, hi, bytes);
    most[node] =
        std::max(most[2 * node], most[2 * node + 1]) + pending[node];
  }

  size_t size;
  /// Per tree node: the largest entry below it, its own pending addition
  /// (applied to its whole range, not pushed down) included.
  std::vector<int64_t> most, pending;
};

} // namespace mlir::mw::remat

#endif // MEMWALL_LIB_DIALECT_MW_TRANSFORMS_REMATGRAPH_H
