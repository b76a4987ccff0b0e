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

} // namespace mlir::mw::remat

#endif // MEMWALL_LIB_DIALECT_MW_TRANSFORMS_REMATMILP_H
