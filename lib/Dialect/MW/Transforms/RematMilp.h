//===- RematMilp.h - Checkmate's MILP for --mw-remat ------------*- C++ -*-===//
//
// Private to --mw-remat: strategy=optimal's kept set, from Checkmate's MILP
// (Jain et al. 2020) on the step's fixed op order, solved by COIN-OR CBC
// through memwall/Planning/Milp.h.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_LIB_DIALECT_MW_TRANSFORMS_REMATMILP_H
#define MEMWALL_LIB_DIALECT_MW_TRANSFORMS_REMATMILP_H

#include "RematGraph.h"

#include "mlir/Support/LogicalResult.h"

#include <string>

namespace mlir::mw::remat {

/// How the solver ended: its status ("optimal", "feasible", "infeasible",
/// "no-solution", "error") and a summary for the verbose remark.
struct MilpOutcome {
  std::string status;
  std::string summary;
};

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
/// Fills `outcome` whenever the solver ran; failure after a diagnostic only
/// when the solver itself failed (status "error").
FailureOr<llvm::BitVector> solveCheckmateMilp(const StepStructure &info,
                                              const StepGraph &g,
                                              int64_t arenaBudget,
                                              double timeLimit,
                                              MilpOutcome &outcome);

/// strategy=optimal's lower bound: a relaxation of every plan --mw-remat can
/// emit, solved by CBC. Binaries d_i and the memory rows as above (with the
/// budget as given: a plan that fits must free the excess at every op where
/// the save-all arena is over it, whatever its recompute does elsewhere);
/// cost: a continuous y_o per forward op, y[def(v)] >= d_v, and y[def(u)] >=
/// y[o] for every forward intermediate u (not saved) that o reads. A plan
/// clones every op with y_o = 1 at least once, whatever it shares, so the
/// minimum of sum y_o * cost(o) is a lower bound on its recompute cost;
/// CBC's best bound, reached or not, is below that minimum. The solution's
/// kept set (perfect sharing assumed) is a candidate too.
/// The lower bound's MILP stops within this relative gap of its own optimum
/// (CBC's ratioGap): closing the last 0.01% of a bound can take minutes on
/// gpt2-small at batch 8, and the bound reported is CBC's, reached or not.
constexpr double kBoundGap = 1e-4;
/// CPU seconds of CBC per round of optimal's staged MILP while it looks for
/// a plan that fits (the bound then gets the time left).
constexpr double kStagedRoundSeconds = 10.0;
/// CBC stops the staged MILP once its bound is within this of its
/// incumbent (closing the last 0.1% can take minutes).
constexpr double kStagedGap = 1e-3;

struct CoverBound {
  std::string status;
  /// The lower bound on the recompute cost, in the unit of StepGraph::Node::
  /// cost; 0 when nothing better is known.
  double bound = 0.0;
  /// The relaxation's own objective for `keep` (no more than the real cost
  /// of `keep`'s plan).
  double objective = 0.0;
  /// The incumbent's kept set; empty without one.
  llvm::BitVector keep;
  /// Proven infeasible: no plan fits the budget.
  bool infeasible = false;
  /// The solver's message when it failed (status "error").
  std::string error;
  size_t vars = 0, rows = 0;
  double seconds = 0.0;
};
CoverBound solveCoverBound(const StepStructure &info, const StepGraph &g,
                           int64_t arenaBudget, double timeLimit);

//===----------------------------------------------------------------------===//
// The saved-bytes problem (saved-budget)
//===----------------------------------------------------------------------===//

/// saved-budget's problem as a precedence-constrained knapsack: choose the
/// set R of forward ops to recompute (each once, shared by every backward
/// use: Sharing::global), minimizing sum cost_i over R subject to the
/// saved-activation bytes it frees, sum gain_i over R, reaching `need`, and
/// to `prereqs`: (a, b) means recomputing a needs b recomputed too (b
/// defines an operand of a that is not saved, so not kept). Every saved
/// value has a backward use, so a saved value is kept exactly when its
/// defining op is not in R. Plain integers (FLOPs or femtoseconds, bytes) so
/// the hull and the bound are exact.
struct ClosureKnapsack {
  std::vector<int64_t> cost, gain;
  std::vector<std::pair<int, int>> prereqs;
  size_t size() const { return cost.size(); }
};

/// A vertex of the lower convex hull of (bytes freed, cost) over all closed
/// sets: the cheapest closed set freeing at least `gain` bytes.
struct HullPoint {
  int64_t gain = 0, cost = 0;
  std::vector<char> chosen;
};

/// The hull's vertices by increasing gain (Eisner and Severance's search
/// over the Lagrangian price per byte, one max-flow, i.e. a minimal
/// max-weight closure, per probe): from the empty set to the cheapest set
/// freeing the most bytes. At most size()+1 points.
std::vector<HullPoint> closureHull(const ClosureKnapsack &p);

/// The Lagrangian bound for freeing at least `need`: max over the price
/// lambda of min over closed R of cost(R) - lambda (gain(R) - need), which
/// is the hull's lower envelope at `need` (exact at a vertex); infinity when
/// no closed set frees that much.
double hullBound(const std::vector<HullPoint> &hull, int64_t need);

struct ClosureKnapsackResult {
  /// "optimal" (proven), "feasible" (time limit; see `bound`), "infeasible",
  /// "error".
  std::string status;
  std::vector<char> chosen;
  int64_t cost = 0, gain = 0;
  /// A certified lower bound on every closed set freeing `need`: the hull's,
  /// or CBC's when higher; cost when proven.
  double bound = 0.0;
  /// The hull's bound alone (the Lagrangian dual), and the cost of the
  /// hull's first vertex freeing enough (the incumbent CBC starts from).
  double hullBound = 0.0;
  int64_t hullCost = 0;
  /// Where the answer came from: "hull" (a vertex at or just above need
  /// whose cost meets the bound) or "cbc".
  std::string source;
  size_t hullPoints = 0, vars = 0, rows = 0;
  double seconds = 0.0;
  std::string message;
};

/// The exact optimum for `need`: the hull's first vertex freeing at least
/// `need` is the incumbent, the hull's envelope the bound; when they differ
/// CBC solves the MILP (binaries per op, one row per requirement, the
/// knapsack row) in `timeLimit` seconds, and its answer is taken when it is
/// cheaper. Deterministic when no time limit is hit.
ClosureKnapsackResult solveClosureKnapsack(const ClosureKnapsack &p,
                                           int64_t need, double timeLimit,
                                           const std::vector<HullPoint> *hull =
                                               nullptr);

/// The step's saved-bytes problem: one item per forward op (constants cost
/// nothing: planRemat reads them), gains from the droppable saved values it
/// defines (those with a backward use), requirements from the operands that
/// are forward values not saved (constants aside). `flopsCost` prices items
/// by FLOPs, else by roofline seconds in units of kTimeUnit (rounded: a
/// bound in seconds is lowered by half a unit per op).
constexpr double kTimeUnit = 1e-15;
ClosureKnapsack savedBytesProblem(const StepGraph &g,
                                  const StepStructure &info, bool flopsCost);

/// The kept set of a solution: a droppable saved value is kept unless its
/// defining op is chosen (values without a backward use stay kept).
llvm::BitVector keptSetOf(const StepGraph &g, const StepStructure &info,
                          const std::vector<char> &chosen);

//===----------------------------------------------------------------------===//
// The peak bound (budget): what a plan must hold live at one time point
//===----------------------------------------------------------------------===//

/// The memory any plan needs at one time point t of the backward pass, as a
/// problem on the forward ops alone. Every backward use after t of a forward
/// value reads a copy of it that was either born by t (the original, or a
/// clone inserted before an op up to t), and so is live at t, or made by a
/// clone after t; a clone after t reads copies that are, in turn, live at t
/// or made after t. So a plan defines R, the forward ops it clones after t,
/// and Z, the values its uses after t need (the demands, and the operands
/// of R); the values of Z that R does not make are live at t. Plain
/// integers: ops cost `cost` (FLOPs or femtoseconds), values take `bytes`.
struct LivePointProblem {
  std::vector<int64_t> cost;            ///< per op
  std::vector<std::vector<int>> reads;  ///< per op: the values it needs
  /// Per value: the op making it; -1 for a buffer no clone remakes (a
  /// constant: the clones read the step's own, live wherever it is read).
  std::vector<int> def;
  std::vector<int64_t> bytes;           ///< per value
  std::vector<int> demand;              ///< values read after t
  /// The arena bytes left at t for forward values: the budget minus what
  /// is live at t whatever the plan does (backward values live across t).
  int64_t capacity = 0;
};

/// The cheapest (R, Z) whose live bytes at t (values of Z not made by R)
/// fit `capacity` costs at least the result: the Lagrangian dual, max over
/// a price per live byte of one minimum cut (Eisner and Severance's search,
/// as closureHull). Infinity when even recomputing everything after t
/// leaves more than `capacity` live (then no plan fits).
double livePointBound(const LivePointProblem &p);

/// The step as the peak bounds see it, built once per budget: the forward
/// ops a plan may clone and the forward buffers they read (`ops`, without
/// demand or capacity: a LivePointProblem per time point adds them), the
/// backward reads of each buffer, and what every plan holds at each op.
/// Buffers follow the pipeline: a view (a reshape, or a transpose or slice
/// --mw-fold-views folds for every copy: alwaysViews) is its operand's
/// buffer, arguments and returned or forced values are free.
struct PeakModel {
  LivePointProblem ops;
  /// Per op of `ops`: its node in the StepGraph.
  std::vector<int> nodeOfOp;
  /// Per buffer: the backward nodes reading it, in order, and the last
  /// (-1 for none).
  std::vector<std::vector<int>> readBy;
  std::vector<int> lastRead;
  /// Per buffer: whether it may be live when the backward pass starts (a
  /// saved value's, which a plan may keep, or a constant's; forward
  /// intermediates are dead by then in every plan).
  std::vector<char> keepable;
  /// Per buffer: the node of the forward op that makes the original (-1
  /// for a constant). With gradient accumulation the later micro-batches'
  /// forwards run inside the backward pass: a buffer made after a time
  /// point is neither live there nor demanded from there, and its original
  /// comes for free.
  std::vector<int> madeAt;
  /// Per buffer: the last forward op that reads it (-1 for none). Between
  /// madeAt and it the original is live in every plan (forward reads are
  /// never redirected), so a point there holds its bytes.
  std::vector<int> lastForwardRead;
  /// Whether every plan holds buffer `u` at node `t`: made by then and read
  /// by a forward op after it, or by a backward op at or after it.
  bool demanded(int u, int t) const {
    return madeAt[u] <= t && (lastRead[u] >= t || lastForwardRead[u] > t);
  }
  /// Whether the original of `u` is live at `t` in every plan.
  bool originalLive(int u, int t) const {
    return madeAt[u] <= t && lastForwardRead[u] > t;
  }
  /// Per node: the arena bytes every plan holds there, whatever it
  /// recomputes: the buffers of backward values (clones read forward values
  /// only), as simulateArena places them (its backwardProfile).
  std::vector<int64_t> held;
  /// Runs of backward ops with the same demands, each at its op with the
  /// most `held` bytes, and the bytes over the budget there if nothing were
  /// recomputed.
  struct Point {
    int t;
    int64_t excess;
  };
  std::vector<Point> points;
  /// The node just before the first backward op: where the backward pass
  /// starts.
  int boundary = -1;
  int64_t arenaBudget = 0;
};
PeakModel buildPeakModel(const StepStructure &info, const StepGraph &g,
                         int64_t arenaBudget, bool flopsCost);

/// strategy=optimal's peak bound: the largest livePointBound over the time
/// points of the backward pass (`model.points`, the points with the largest
/// excess first, until `timeLimit`). Every plan --mw-remat can emit that
/// fits the arena budget (any kept set, clone placement and sharing) pays at
/// least `bound` (in FLOPs, or femtoseconds with the time cost: lower it by
/// half a unit per op for the rounding). `infeasible`: no plan fits.
struct PeakBound {
  double bound = 0.0;
  bool infeasible = false;
  /// The node index of the time point giving the bound; -1 for none.
  int point = -1;
  size_t points = 0, evaluated = 0;
  double seconds = 0.0;
};
PeakBound solvePeakBound(const PeakModel &model, double timeLimit);

/// The staged bound: several time points at once, as one MILP whose
/// solution is also a plan. `times` starts with `model.boundary` and goes
/// on with backward nodes in increasing order; stage s is what runs after
/// times[s], up to and including times[s + 1] (the last: to the end). Per
/// stage, which forward ops it clones (paid once per stage) and which
/// buffers have a copy live at times[s]: a backward read in stage s needs a
/// copy live at times[s] or made in the stage (one at times[s + 1] itself,
/// a copy live there), as does each clone of the stage for what it reads; a
/// copy live at times[s + 1] was live at times[s] or made in stage s; at
/// the boundary only keepable buffers are live; at every other time point
/// the live copies fit the arena budget less `held` there (less
/// `tighten[s]` when given: for finding plans, which then no longer bound
/// anything). Every plan --mw-remat can emit that fits the budget gives a
/// 0/1 point of it (a stage clones what the plan clones in it; a buffer is
/// live where some copy of it is), so CBC's bound is below its recompute
/// whichever time points are taken. Redundant rows that make the LP
/// relaxation at least as tight as every single point's (livePointBound)
/// say the same with "cloned in the stage or a later one". `cloned` lists,
/// per stage, the nodes the incumbent clones: the schedule planStaged
/// turns into a plan.
struct StagedBound {
  /// CBC's outcome ("optimal", "feasible", "infeasible", "no-solution",
  /// "error" with `message`).
  std::string status;
  std::string message;
  bool infeasible = false;
  /// The bound (CBC's, in the units of `model.ops.cost`) and the
  /// incumbent's cost.
  double bound = 0.0, cost = 0.0;
  std::vector<llvm::SmallVector<int>> cloned;
  size_t vars = 0, rows = 0;
  int64_t nodes = 0;
  double seconds = 0.0;
};
StagedBound solveStagedBound(const PeakModel &model, ArrayRef<int> times,
                             ArrayRef<int64_t> tighten, double timeLimit,
                             double relativeGap = kStagedGap);

} // namespace mlir::mw::remat

#endif // MEMWALL_LIB_DIALECT_MW_TRANSFORMS_REMATMILP_H
