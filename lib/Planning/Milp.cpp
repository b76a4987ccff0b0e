//===- Milp.cpp - Mixed-integer linear programs through COIN-OR CBC -------===//
//
// Translates a MilpModel into CBC's C API (Cbc_C_Interface.h, CBC 2.10) and
// reads the outcome back. The model is validated first, so that a caller's
// mistake becomes Status::Error with a message instead of undefined
// behaviour inside CBC. CBC runs single-threaded with all logging off, and
// its time limit counts CPU time (CBC's default timeMode; one thread's CPU
// time never runs ahead of the wall clock, so on a loaded machine a limit
// can take longer in wall time): with "timeMode elapsed"
// CBC 2.10 sometimes spends the whole limit on a model of 5 binaries when
// the machine is loaded, returning it unproven (seen in
// test/unit/RematSavedBytesTest.cpp with two processes on two cores).
// Whatever CBC returns is rounded (integer
// variables) and checked against the model again before it is reported, so
// a caller can trust `x` and `objective` without knowing CBC's tolerances.
//
//===----------------------------------------------------------------------===//

#include "memwall/Planning/Milp.h"

#include <coin/Cbc_C_Interface.h>
#include <coin/CoinFinite.hpp>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <memory>

using namespace memwall::planning;

namespace {

using Status = MilpResult::Status;

/// Bounds at or beyond kInfinity (including IEEE infinities) mean "none".
bool isPlusInf(double v) { return v >= MilpModel::kInfinity; }
bool isMinusInf(double v) { return v <= -MilpModel::kInfinity; }

double toCbc(double v) {
  if (isPlusInf(v))
    return COIN_DBL_MAX;
  if (isMinusInf(v))
    return -COIN_DBL_MAX;
  return v;
}

/// CBC reports "no bound" as huge values; map them back to kInfinity.
double fromCbc(double v) {
  if (v >= 1e50)
    return MilpModel::kInfinity;
  if (v <= -1e50)
    return -MilpModel::kInfinity;
  return v;
}

/// Returns an empty string when `lo <= v <= hi` can hold for some v.
std::string checkBounds(const char *what, long long index, double lo,
                        double hi) {
  if (std::isnan(lo) || std::isnan(hi))
    return std::string(what) + " " + std::to_string(index) + " has a NaN bound";
  if (isPlusInf(lo) || isMinusInf(hi) || lo > hi) {
    char buf[160];
    std::snprintf(buf, sizeof(buf), "%s %lld has empty bounds [%g, %g]", what,
                  index, lo, hi);
    return buf;
  }
  return {};
}

/// Rejects what CBC would silently misread or crash on.
std::string validate(const MilpModel &model, double timeLimitSeconds) {
  if (std::isnan(timeLimitSeconds) || timeLimitSeconds <= 0.0) {
    char buf[96];
    std::snprintf(buf, sizeof(buf), "time limit must be positive, got %g",
                  timeLimitSeconds);
    return buf;
  }
  // CBC indexes columns, rows and nonzeros with int.
  if (model.vars.size() > INT_MAX || model.rows.size() > INT_MAX)
    return "the model has more than INT_MAX variables or rows";
  long long numVars = static_cast<long long>(model.vars.size());
  long long numTerms = 0;
  for (long long j = 0; j < numVars; ++j) {
    const MilpModel::Var &v = model.vars[j];
    if (std::string err = checkBounds("variable", j, v.lo, v.hi); !err.empty())
      return err;
    if (!std::isfinite(v.cost) || std::fabs(v.cost) >= MilpModel::kInfinity)
      return "variable " + std::to_string(j) + " has a non-finite cost";
  }
  // Duplicate detection: the row number that last used each variable.
  std::vector<long long> lastRow(model.vars.size(), -1);
  for (long long r = 0, e = model.rows.size(); r < e; ++r) {
    const MilpModel::Row &row = model.rows[r];
    if (std::string err = checkBounds("row", r, row.lo, row.hi); !err.empty())
      return err;
    numTerms += static_cast<long long>(row.terms.size());
    if (numTerms > INT_MAX)
      return "the model has more than INT_MAX nonzero coefficients";
    for (const auto &[j, a] : row.terms) {
      if (j < 0 || j >= numVars) {
        char buf[128];
        std::snprintf(buf, sizeof(buf),
                      "row %lld refers to variable %d, but the model has "
                      "%lld variables",
                      r, j, numVars);
        return buf;
      }
      if (!std::isfinite(a) || std::fabs(a) >= MilpModel::kInfinity)
        return "row " + std::to_string(r) +
               " has a non-finite coefficient for variable " +
               std::to_string(j);
      if (lastRow[j] == r)
        return "row " + std::to_string(r) + " lists variable " +
               std::to_string(j) + " twice";
      lastRow[j] = r;
    }
  }
  return {};
}

/// Largest violation of a bound or row by `x`, relative to the magnitudes
/// involved: rounding an integer variable within CBC's integrality
/// tolerance (1e-6) moves a row's activity by up to 1e-6 times its
/// coefficients, which a fixed tolerance would call a violation.
double maxViolation(const MilpModel &model, const std::vector<double> &x) {
  auto excess = [](double v, double lo, double hi, double scale) {
    double worst = 0.0;
    if (!isMinusInf(lo))
      worst = std::max(worst, (lo - v) / std::max(scale, std::fabs(lo)));
    if (!isPlusInf(hi))
      worst = std::max(worst, (v - hi) / std::max(scale, std::fabs(hi)));
    return worst;
  };
  double worst = 0.0;
  for (size_t j = 0; j < x.size(); ++j)
    worst =
        std::max(worst, excess(x[j], model.vars[j].lo, model.vars[j].hi, 1.0));
  for (const MilpModel::Row &row : model.rows) {
    double activity = 0.0, scale = 1.0;
    for (const auto &[j, a] : row.terms) {
      activity += a * x[j];
      scale += std::fabs(a) * std::max(1.0, std::fabs(x[j]));
    }
    worst = std::max(worst, excess(activity, row.lo, row.hi, scale));
  }
  return worst;
}

struct CbcDeleter {
  void operator()(Cbc_Model *m) const { Cbc_deleteModel(m); }
};
using CbcPtr = std::unique_ptr<Cbc_Model, CbcDeleter>;

/// Loads `model` column-major, as Cbc_loadProblem wants it.
void load(Cbc_Model *cbc, const MilpModel &model) {
  int numVars = static_cast<int>(model.vars.size());
  int numRows = static_cast<int>(model.rows.size());
  std::vector<CoinBigIndex> start(numVars + 1, 0);
  for (const MilpModel::Row &row : model.rows)
    for (const auto &term : row.terms)
      ++start[term.first + 1];
  for (int j = 0; j < numVars; ++j)
    start[j + 1] += start[j];
  std::vector<int> index(start[numVars]);
  std::vector<double> value(start[numVars]);
  std::vector<CoinBigIndex> next(start.begin(), start.end() - 1);
  for (int r = 0; r < numRows; ++r)
    for (const auto &[j, a] : model.rows[r].terms) {
      index[next[j]] = r;
      value[next[j]] = a;
      ++next[j];
    }

  std::vector<double> colLo(numVars), colHi(numVars), obj(numVars);
  for (int j = 0; j < numVars; ++j) {
    colLo[j] = toCbc(model.vars[j].lo);
    colHi[j] = toCbc(model.vars[j].hi);
    obj[j] = model.vars[j].cost;
  }
  std::vector<double> rowLo(numRows), rowHi(numRows);
  for (int r = 0; r < numRows; ++r) {
    rowLo[r] = toCbc(model.rows[r].lo);
    rowHi[r] = toCbc(model.rows[r].hi);
  }
  Cbc_loadProblem(cbc, numVars, numRows, start.data(), index.data(),
                  value.data(), colLo.data(), colHi.data(), obj.data(),
                  rowLo.data(), rowHi.data());
  for (int j = 0; j < numVars; ++j)
    if (model.vars[j].integer)
      Cbc_setInteger(cbc, j);
}

} // namespace

MilpResult memwall::planning::solveMilp(const MilpModel &model,
                                        double timeLimitSeconds,
                                        double relativeGap) {
  auto begin = std::chrono::steady_clock::now();
  MilpResult result;
  auto finish = [&](Status status) {
    result.status = status;
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
            .count();
    return result;
  };

  result.message = validate(model, timeLimitSeconds);
  if (!result.message.empty())
    return finish(Status::Error);

  // With no variables every row's activity is 0; CBC has nothing to do (and
  // a 0-column CbcModel is an edge case not worth trusting).
  if (model.vars.empty()) {
    if (maxViolation(model, {}) > 0.0) {
      result.message = "a row without variables excludes 0";
      return finish(Status::Infeasible);
    }
    return finish(Status::Optimal);
  }

  CbcPtr cbc(Cbc_newModel());
  if (!cbc) {
    result.message = "Cbc_newModel failed";
    return finish(Status::Error);
  }
  load(cbc.get(), model);

  // Parameters are CbcMain1 command-line words. "log 0" keeps CbcMain1's
  // banner and progress lines off stdout; Cbc_setLogLevel and "slog" cover
  // the message handlers of the model and of CLP, which also run for LPs.
  Cbc_setLogLevel(cbc.get(), 0);
  Cbc_setParameter(cbc.get(), "log", "0");
  Cbc_setParameter(cbc.get(), "slog", "0");
  Cbc_setParameter(cbc.get(), "threads", "1");
  if (std::isfinite(timeLimitSeconds)) {
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%.17g", timeLimitSeconds);
    Cbc_setParameter(cbc.get(), "sec", seconds);
  }

  if (relativeGap > 0.0) {
    char ratio[32];
    std::snprintf(ratio, sizeof(ratio), "%.17g", relativeGap);
    Cbc_setParameter(cbc.get(), "ratioGap", ratio);
  }

  Cbc_solve(cbc.get());
  result.nodes = Cbc_getNodeCount(cbc.get());

  // CBC 2.10 solves a model without integer variables with CLP alone
  // (OsiClp::initialSolve, which ignores "sec"), so branch-and-bound's
  // status is never set: read the initial solve's flags instead. They
  // cannot tell unbounded from an iteration limit, and the branch-and-bound
  // flags call an unbounded LP "proven infeasible".
  const double *solution = nullptr;
  bool optimal = false;
  if (Cbc_getNumIntegers(cbc.get()) == 0) {
    if (Cbc_isInitialSolveProvenPrimalInfeasible(cbc.get()))
      return finish(Status::Infeasible);
    if (!Cbc_isInitialSolveProvenOptimal(cbc.get())) {
      result.message = Cbc_isInitialSolveAbandoned(cbc.get())
                           ? "CLP abandoned the LP (numerical difficulties)"
                           : "the LP is unbounded";
      return finish(Status::Error);
    }
    optimal = true;
    solution = Cbc_getColSolution(cbc.get());
  } else {
    optimal = Cbc_isProvenOptimal(cbc.get());
    if (Cbc_isContinuousUnbounded(cbc.get())) {
      result.message = "the LP relaxation is unbounded";
      return finish(Status::Error);
    }
    if (Cbc_isProvenInfeasible(cbc.get()) && !optimal)
      return finish(Status::Infeasible);
    if (Cbc_isAbandoned(cbc.get())) {
      result.message = "CBC abandoned the search (numerical difficulties)";
      return finish(Status::Error);
    }
    // Null until an integer-feasible point exists, which tells "stopped
    // with a solution" from "stopped before any".
    solution = Cbc_bestSolution(cbc.get());
  }
  if (!solution)
    return finish(Status::NoSolution);

  result.x.assign(solution, solution + model.vars.size());
  for (size_t j = 0; j < model.vars.size(); ++j) {
    const MilpModel::Var &v = model.vars[j];
    double &xj = result.x[j];
    if (v.integer)
      xj = std::round(xj);
    // CBC may step outside a bound by its feasibility tolerance.
    if (!isMinusInf(v.lo))
      xj = std::max(xj, v.lo);
    if (!isPlusInf(v.hi))
      xj = std::min(xj, v.hi);
  }
  if (double violation = maxViolation(model, result.x); violation > 1e-6) {
    char buf[128];
    std::snprintf(buf, sizeof(buf),
                  "CBC's solution violates the model by %g after rounding",
                  violation);
    result.message = buf;
    result.x.clear();
    return finish(Status::Error);
  }

  // The objective of the rounded point, so that it agrees with `x` exactly.
  for (size_t j = 0; j < model.vars.size(); ++j)
    result.objective += model.vars[j].cost * result.x[j];
  // Proven optimal: the bound is the objective by definition, and for an LP
  // Cbc_getBestPossibleObjValue is not meaningful (no branch-and-bound ran).
  // With a relative gap, CBC calls "optimal" what is within it: the bound
  // is then its best possible value, and the status feasible unless equal.
  if (optimal && relativeGap > 0.0 && Cbc_getNumIntegers(cbc.get()) > 0) {
    double bound = std::min(fromCbc(Cbc_getBestPossibleObjValue(cbc.get())),
                            result.objective);
    if (bound < result.objective - 1e-9 * std::max(1.0, std::fabs(result.objective)))
      optimal = false;
  }
  if (optimal) {
    result.bound = result.objective;
    result.gap = 0.0;
    return finish(Status::Optimal);
  }
  // A bound above the incumbent would be a rounding artifact; clamp it so
  // the gap is never negative.
  result.bound = std::min(fromCbc(Cbc_getBestPossibleObjValue(cbc.get())),
                          result.objective);
  result.gap = (result.objective - result.bound) /
               std::max(std::fabs(result.objective), 1e-9);
  return finish(Status::Feasible);
}

const char *memwall::planning::toString(MilpResult::Status status) {
  switch (status) {
  case Status::Optimal:
    return "optimal";
  case Status::Feasible:
    return "feasible";
  case Status::Infeasible:
    return "infeasible";
  case Status::NoSolution:
    return "no-solution";
  case Status::Error:
    return "error";
  }
  return "error";
}
