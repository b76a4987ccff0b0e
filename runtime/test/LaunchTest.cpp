//===- LaunchTest.cpp - Reading the launchers' environments ---------------===//
//
// mwrt::parseLaunch on made-up environments: each MPI launcher's variables
// and torchrun's give the rank, size and local rank; both together are
// accepted when they agree and one error when they do not; each malformed
// or missing value is one message naming the variable. (joinProcessGroup
// itself joins once per process: RunToolTest runs mw-run under a fake
// torchrun environment.)
//
//===----------------------------------------------------------------------===//

#include "PlanTestHelpers.h"

#include "mwrt/comm.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace mwrt::test {

namespace {

using Env = std::map<std::string, std::string>;

mwrt_status parse(const Env &env, LaunchEnvironment &out) {
  return parseLaunch(
      [&](const char *name) -> const char * {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      out);
}

const Env kTorchrun = {{"RANK", "3"},
                       {"WORLD_SIZE", "4"},
                       {"LOCAL_RANK", "1"},
                       {"MASTER_ADDR", "10.0.0.7"},
                       {"MASTER_PORT", "29500"}};

/// The one error `env` gives: MWRT_INVALID_ARGUMENT with `needle`.
::testing::AssertionResult refused(const Env &env, const std::string &needle) {
  LaunchEnvironment out;
  return failsWith(parse(env, out), needle);
}

} // namespace

TEST(Launch, NoLauncherIsAGroupOfOne) {
  LaunchEnvironment out;
  ASSERT_EQ(parse({{"HOME", "/root"}}, out), MWRT_OK);
  EXPECT_EQ(out.launcher, "");
  EXPECT_EQ(out.rank, -1);
  EXPECT_EQ(out.size, -1);
}

TEST(Launch, EachMpiLaunchersVariables) {
  struct Case {
    Env env;
    std::string launcher;
    int rank, size, local;
  };
  const Case cases[] = {
      {{{"OMPI_COMM_WORLD_RANK", "1"},
        {"OMPI_COMM_WORLD_SIZE", "2"},
        {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}},
       "Open MPI", 1, 2, 1},
      {{{"PMIX_RANK", "5"}}, "PMIx", 5, -1, -1},
      {{{"PMI_RANK", "0"}, {"PMI_SIZE", "8"}}, "PMI", 0, 8, -1},
      {{{"MV2_COMM_WORLD_RANK", "2"},
        {"MV2_COMM_WORLD_SIZE", "4"},
        {"MV2_COMM_WORLD_LOCAL_RANK", "0"}},
       "MVAPICH", 2, 4, 0},
  };
  for (const Case &c : cases) {
    LaunchEnvironment out;
    ASSERT_EQ(parse(c.env, out), MWRT_OK) << mwrt_last_error();
    EXPECT_EQ(out.launcher, c.launcher);
    EXPECT_EQ(out.rank, c.rank) << c.launcher;
    EXPECT_EQ(out.size, c.size) << c.launcher;
    EXPECT_EQ(out.localRank, c.local) << c.launcher;
    EXPECT_EQ(out.masterPort, -1);
  }
}

TEST(Launch, TorchrunsVariables) {
  LaunchEnvironment out;
  ASSERT_EQ(parse(kTorchrun, out), MWRT_OK) << mwrt_last_error();
  EXPECT_EQ(out.launcher, "torchrun");
  EXPECT_EQ(out.rank, 3);
  EXPECT_EQ(out.size, 4);
  EXPECT_EQ(out.localRank, 1);
  EXPECT_EQ(out.masterAddress, "10.0.0.7");
  EXPECT_EQ(out.masterPort, 29500);
  EXPECT_EQ(out.variables, "RANK=3 WORLD_SIZE=4 LOCAL_RANK=1 "
                           "MASTER_ADDR=10.0.0.7 MASTER_PORT=29500");
}

TEST(Launch, MpiAndTorchrunThatAgreeAreMpi) {
  Env env = kTorchrun;
  env["OMPI_COMM_WORLD_RANK"] = "3";
  env["OMPI_COMM_WORLD_SIZE"] = "4";
  LaunchEnvironment out;
  ASSERT_EQ(parse(env, out), MWRT_OK) << mwrt_last_error();
  EXPECT_EQ(out.launcher, "Open MPI");
  EXPECT_EQ(out.rank, 3);
  EXPECT_EQ(out.size, 4);
}

TEST(Launch, MpiAndTorchrunThatDisagreeAreOneError) {
  Env env = kTorchrun;
  env["OMPI_COMM_WORLD_RANK"] = "0";
  env["OMPI_COMM_WORLD_SIZE"] = "4";
  EXPECT_TRUE(refused(env, "Open MPI's OMPI_COMM_WORLD_RANK=0 "
                           "OMPI_COMM_WORLD_SIZE=4 and torchrun's RANK=3 "
                           "WORLD_SIZE=4 LOCAL_RANK=1 MASTER_ADDR=10.0.0.7 "
                           "MASTER_PORT=29500 disagree; start the ranks with "
                           "one launcher"));
  env = kTorchrun;
  env["PMI_RANK"] = "1";
  env["PMI_SIZE"] = "2";
  EXPECT_TRUE(refused(env, "PMI's PMI_RANK=1 PMI_SIZE=2 and torchrun's"));
}

TEST(Launch, MalformedValuesAreOneErrorNamingTheVariable) {
  struct Case {
    const char *name, *value, *message;
  };
  const Case cases[] = {
      {"RANK", "one", "RANK='one' is not a rank (a decimal integer >= 0)"},
      {"RANK", "-1", "RANK='-1' is not a rank"},
      {"RANK", "4", "RANK=4 is not below WORLD_SIZE=4"},
      {"WORLD_SIZE", "0",
       "WORLD_SIZE='0' is not a number of ranks (a decimal integer >= 1)"},
      {"WORLD_SIZE", "2x", "WORLD_SIZE='2x' is not a number of ranks"},
      {"LOCAL_RANK", "", "LOCAL_RANK='' is not a local rank"},
      {"LOCAL_RANK", "9", "LOCAL_RANK=9 is not below WORLD_SIZE=4"},
      {"MASTER_ADDR", "", "MASTER_ADDR is empty"},
      {"MASTER_PORT", "65535",
       "MASTER_PORT='65535' is not a port in [1, 65534]"},
      {"MASTER_PORT", "http", "MASTER_PORT='http' is not a port"},
  };
  for (const Case &c : cases) {
    Env env = kTorchrun;
    env[c.name] = c.value;
    EXPECT_TRUE(refused(env, std::string("launcher environment: ") +
                                 c.message))
        << c.name << "=" << c.value;
  }
  EXPECT_TRUE(refused({{"OMPI_COMM_WORLD_RANK", "x"},
                       {"OMPI_COMM_WORLD_SIZE", "2"}},
                      "OMPI_COMM_WORLD_RANK='x' is not a rank"));
  EXPECT_TRUE(refused({{"OMPI_COMM_WORLD_RANK", "2"},
                       {"OMPI_COMM_WORLD_SIZE", "2"}},
                      "OMPI_COMM_WORLD_RANK=2 is not below "
                      "OMPI_COMM_WORLD_SIZE=2"));
}

TEST(Launch, ATorchrunVariableMissingBesideTheOthersIsNamed) {
  for (const char *name :
       {"RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"}) {
    Env env = kTorchrun;
    env.erase(name);
    EXPECT_TRUE(refused(env, std::string("torchrun's ") + name +
                                 " is not set beside "))
        << name;
  }
}

} // namespace mwrt::test
