//===- MilpTest.cpp - Unit tests of the CBC-backed MILP interface ---------===//
//
// Small models with known answers (knapsack, mixed integer/continuous,
// equality rows, a pure LP), the outcomes that are not solutions
// (infeasible, malformed, unbounded, empty), and a time-limited instance
// that must end in a well-formed answer whatever the machine's speed. Only
// behaviour is asserted, never timing.
//
//===----------------------------------------------------------------------===//

#include "memwall/Planning/Milp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

using namespace memwall::planning;

namespace {

using Status = MilpResult::Status;
constexpr double kInf = MilpModel::kInfinity;

TEST(MilpTest, KnapsackOptimum) {
  // max 10a + 13b + 7c + 8d  s.t.  3a + 4b + 2c + 3d <= 7: {a, b} = 23
  // beats {b, d} = 21 and {b, c} = 20 (minimized as the negation).
  MilpModel model;
  const double value[] = {10, 13, 7, 8}, weight[] = {3, 4, 2, 3};
  std::vector<std::pair<int, double>> terms;
  for (int i = 0; i < 4; ++i)
    terms.push_back({model.addVar(0, 1, -value[i], true), weight[i]});
  model.addRow(terms, -kInf, 7);

  MilpResult r = solveMilp(model, 10.0);
  ASSERT_EQ(r.status, Status::Optimal) << r.message;
  EXPECT_DOUBLE_EQ(r.objective, -23.0);
  EXPECT_EQ(r.gap, 0.0);
  EXPECT_LE(r.bound, r.objective + 1e-6);
  ASSERT_EQ(r.x.size(), 4u);
  // Integer variables come back exactly integral.
  EXPECT_EQ(r.x[0], 1.0);
  EXPECT_EQ(r.x[1], 1.0);
  EXPECT_EQ(r.x[2], 0.0);
  EXPECT_EQ(r.x[3], 0.0);
  EXPECT_STREQ(toString(r.status), "optimal");
}

TEST(MilpTest, RelativeGapReportsTheBoundReached) {
  // A covering knapsack: min sum c_i x_i s.t. sum w_i x_i >= W. With a
  // relative gap CBC may stop early; whatever it reports, the bound is at
  // most the objective and within the gap of it, and "optimal" means the
  // two meet.
  MilpModel model;
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> weight(5, 60), cost(5, 60);
  std::vector<std::pair<int, double>> terms;
  double total = 0;
  for (int i = 0; i < 40; ++i) {
    double w = weight(rng);
    terms.push_back({model.addVar(0, 1, cost(rng), true), w});
    total += w;
  }
  model.addRow(terms, total / 3, kInf);
  for (double relativeGap : {0.0, 0.2}) {
    MilpResult r = solveMilp(model, 10.0, relativeGap);
    ASSERT_TRUE(r.status == Status::Optimal || r.status == Status::Feasible)
        << r.message;
    EXPECT_LE(r.bound, r.objective);
    if (r.status == Status::Optimal) {
      EXPECT_EQ(r.bound, r.objective);
    } else {
      EXPECT_LE(r.objective - r.bound, relativeGap * r.objective + 1e-6);
    }
  }
}

TEST(MilpTest, MixedIntegerAndContinuous) {
  // min -x - 2y, x in [0, 3.5] continuous, y integer in [0, 10],
  // x + y <= 4.5, y <= 2.7: y = 2 (not 2.7), x = 2.5.
  MilpModel model;
  int x = model.addVar(0, 3.5, -1, false);
  int y = model.addVar(0, 10, -2, true);
  model.addRow({{x, 1}, {y, 1}}, -kInf, 4.5);
  model.addRow({{y, 1}}, -kInf, 2.7);

  MilpResult r = solveMilp(model, 10.0);
  ASSERT_EQ(r.status, Status::Optimal) << r.message;
  ASSERT_EQ(r.x.size(), 2u);
  EXPECT_NEAR(r.x[x], 2.5, 1e-6);
  EXPECT_EQ(r.x[y], 2.0);
  EXPECT_NEAR(r.objective, -6.5, 1e-6);
}

TEST(MilpTest, EqualityRows) {
  // x + y + z = 10 and x - y = 2 with integers: min z - x leaves z = 0,
  // x = 6, y = 4.
  MilpModel model;
  int x = model.addVar(0, 10, -1, true);
  int y = model.addVar(0, 10, 0, true);
  int z = model.addVar(0, 10, 1, true);
  model.addRow({{x, 1}, {y, 1}, {z, 1}}, 10, 10);
  model.addRow({{y, -1}, {x, 1}}, 2, 2); // Terms need not be sorted.

  MilpResult r = solveMilp(model, 10.0);
  ASSERT_EQ(r.status, Status::Optimal) << r.message;
  EXPECT_EQ(r.x[x], 6.0);
  EXPECT_EQ(r.x[y], 4.0);
  EXPECT_EQ(r.x[z], 0.0);
  EXPECT_DOUBLE_EQ(r.objective, -6.0);
}

TEST(MilpTest, PureLp) {
  // No integer variables: CBC hands the model to CLP alone.
  MilpModel model;
  int x = model.addVar(0, kInf, -1, false);
  int y = model.addVar(0, kInf, -1, false);
  model.addRow({{x, 1}, {y, 2}}, -kInf, 4);
  model.addRow({{x, 3}, {y, 1}}, -kInf, 6);

  MilpResult r = solveMilp(model, 10.0);
  ASSERT_EQ(r.status, Status::Optimal) << r.message;
  EXPECT_NEAR(r.x[x], 1.6, 1e-6);
  EXPECT_NEAR(r.x[y], 1.2, 1e-6);
  EXPECT_NEAR(r.objective, -2.8, 1e-6);
}

TEST(MilpTest, Infeasible) {
  // 2x + 2y = 1 has no integer solution, although its LP relaxation does.
  MilpModel model;
  int x = model.addVar(0, 5, 1, true);
  int y = model.addVar(0, 5, 1, true);
  model.addRow({{x, 2}, {y, 2}}, 1, 1);

  MilpResult r = solveMilp(model, 10.0);
  EXPECT_EQ(r.status, Status::Infeasible);
  EXPECT_TRUE(r.x.empty());
  EXPECT_STREQ(toString(r.status), "infeasible");

  MilpModel lp;
  int z = lp.addVar(0, 1, 1, false);
  lp.addRow({{z, 1}}, 2, 3);
  EXPECT_EQ(solveMilp(lp, 10.0).status, Status::Infeasible);
}

TEST(MilpTest, UnboundedIsAnError) {
  MilpModel mip;
  mip.addVar(0, kInf, -1, true);
  MilpResult r = solveMilp(mip, 10.0);
  EXPECT_EQ(r.status, Status::Error);
  EXPECT_NE(r.message.find("unbounded"), std::string::npos) << r.message;

  MilpModel lp;
  lp.addVar(0, kInf, -1, false);
  r = solveMilp(lp, 10.0);
  EXPECT_EQ(r.status, Status::Error);
  EXPECT_NE(r.message.find("unbounded"), std::string::npos) << r.message;
}

TEST(MilpTest, MalformedModels) {
  auto expectError = [](const MilpModel &model, const char *needle,
                        double seconds = 10.0) {
    MilpResult r = solveMilp(model, seconds);
    EXPECT_EQ(r.status, Status::Error);
    EXPECT_NE(r.message.find(needle), std::string::npos) << r.message;
    EXPECT_STREQ(toString(r.status), "error");
  };

  MilpModel outOfRange;
  int x = outOfRange.addVar(0, 1, 1, true);
  outOfRange.addRow({{x, 1}, {3, 1}}, 0, 1);
  expectError(outOfRange, "refers to variable 3");

  MilpModel negative;
  negative.addVar(0, 1, 1, true);
  negative.addRow({{-1, 1}}, 0, 1);
  expectError(negative, "refers to variable -1");

  MilpModel duplicate;
  x = duplicate.addVar(0, 1, 1, true);
  duplicate.addRow({{x, 1}, {x, 2}}, 0, 1);
  expectError(duplicate, "twice");

  MilpModel emptyBounds;
  emptyBounds.addVar(2, 1, 1, false);
  expectError(emptyBounds, "variable 0 has empty bounds");

  MilpModel emptyRow;
  x = emptyRow.addVar(0, 1, 1, false);
  emptyRow.addRow({{x, 1}}, 1, 0);
  expectError(emptyRow, "row 0 has empty bounds");

  MilpModel infiniteCost;
  infiniteCost.addVar(0, 1, kInf, false);
  expectError(infiniteCost, "non-finite cost");

  MilpModel nanCoefficient;
  x = nanCoefficient.addVar(0, 1, 1, false);
  nanCoefficient.addRow({{x, std::nan("")}}, 0, 1);
  expectError(nanCoefficient, "non-finite coefficient");

  MilpModel fine;
  fine.addVar(0, 1, 1, true);
  expectError(fine, "time limit", 0.0);
}

TEST(MilpTest, EmptyModel) {
  MilpResult r = solveMilp(MilpModel(), 1.0);
  EXPECT_EQ(r.status, Status::Optimal) << r.message;
  EXPECT_TRUE(r.x.empty());
  EXPECT_EQ(r.objective, 0.0);

  // Rows without variables constrain the constant 0.
  MilpModel rowsOnly;
  rowsOnly.addRow({}, -1, 1);
  EXPECT_EQ(solveMilp(rowsOnly, 1.0).status, Status::Optimal);
  rowsOnly.addRow({}, 1, 2);
  EXPECT_EQ(solveMilp(rowsOnly, 1.0).status, Status::Infeasible);
}

TEST(MilpTest, TimeLimitedInstance) {
  // A 300-item, 5-dimensional 0/1 knapsack: far from solvable in 10 ms.
  // Whatever CBC manages, the answer must be well formed.
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> draw(1, 1000);
  MilpModel model;
  const int n = 300;
  for (int i = 0; i < n; ++i)
    model.addVar(0, 1, -draw(rng), true);
  for (int k = 0; k < 5; ++k) {
    std::vector<std::pair<int, double>> terms;
    double total = 0;
    for (int i = 0; i < n; ++i) {
      double w = draw(rng);
      total += w;
      terms.push_back({i, w});
    }
    model.addRow(std::move(terms), -kInf, total / 2);
  }

  for (double seconds : {0.01, 0.3}) {
    MilpResult r = solveMilp(model, seconds);
    ASSERT_TRUE(r.status == Status::Optimal || r.status == Status::Feasible ||
                r.status == Status::NoSolution)
        << toString(r.status) << ": " << r.message;
    EXPECT_GE(r.seconds, 0.0);
    EXPECT_GE(r.nodes, 0);
    if (r.status == Status::NoSolution) {
      EXPECT_TRUE(r.x.empty());
      continue;
    }
    ASSERT_EQ(r.x.size(), static_cast<size_t>(n));
    for (double v : r.x)
      EXPECT_TRUE(v == 0.0 || v == 1.0) << v;
    EXPECT_GE(r.gap, 0.0);
    EXPECT_LE(r.bound, r.objective + 1e-6);
  }
}

} // namespace
