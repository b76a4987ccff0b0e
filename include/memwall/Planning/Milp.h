//===- Milp.h - Mixed-integer linear programs through COIN-OR CBC -*- C++ -*-===//
//
// A small solver-neutral model of a mixed-integer linear program and one
// entry point that solves it with COIN-OR CBC (Debian's coinor-libcbc-dev).
// Plain C++17, no MLIR or LLVM, like the rest of MemwallPlanning. Used by
// --mw-remat's `optimal` strategy (Checkmate-style checkpoint placement).
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_PLANNING_MILP_H
#define MEMWALL_PLANNING_MILP_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace memwall::planning {

/// minimize sum_j cost_j x_j subject to rowLo_r <= sum_j a_rj x_j <= rowHi_r
/// and lo_j <= x_j <= hi_j, x_j integer where `integer` is set.
struct MilpModel {
  struct Var {
    double lo = 0.0, hi = 1.0, cost = 0.0;
    bool integer = false;
  };
  struct Row {
    /// (variable index, coefficient); indices need not be sorted but must be
    /// distinct within a row.
    std::vector<std::pair<int, double>> terms;
    double lo = -kInfinity, hi = kInfinity;
  };
  static constexpr double kInfinity = 1e300;

  std::vector<Var> vars;
  std::vector<Row> rows;

  int addVar(double lo, double hi, double cost, bool integer) {
    vars.push_back({lo, hi, cost, integer});
    return static_cast<int>(vars.size()) - 1;
  }
  void addRow(std::vector<std::pair<int, double>> terms, double lo,
              double hi) {
    rows.push_back({std::move(terms), lo, hi});
  }
};

struct MilpResult {
  enum class Status {
    Optimal,    ///< proven optimal (within CBC's default tolerances)
    Feasible,   ///< a solution, not proven optimal (time limit)
    Infeasible, ///< proven infeasible
    NoSolution, ///< time limit before any solution
    Error,      ///< malformed model or solver failure; see `message`
  };
  Status status = Status::Error;
  /// The best solution found (empty unless Optimal or Feasible).
  std::vector<double> x;
  /// Its objective, and the best lower bound CBC proved (LP bound at the
  /// end of the search).
  double objective = 0.0;
  double bound = 0.0;
  /// (objective - bound) / max(|objective|, 1e-9); 0 when proven optimal.
  double gap = 0.0;
  double seconds = 0.0;
  int64_t nodes = 0;
  std::string message;
};

/// Solves `model` with CBC on one thread (deterministic for a given model
/// when no time limit is hit), silently, stopping after `timeLimitSeconds`
/// of CPU time (Milp.cpp says why not wall time), or once the incumbent is
/// within `relativeGap` of the best
/// bound (0: only when proven optimal; then the status is Feasible with the
/// bound reached, unless the two meet). Never throws; never prints.
MilpResult solveMilp(const MilpModel &model, double timeLimitSeconds,
                     double relativeGap = 0.0);

/// "optimal", "feasible", "infeasible", "no-solution", "error".
const char *toString(MilpResult::Status status);

} // namespace memwall::planning

#endif // MEMWALL_PLANNING_MILP_H
