//===- RunToolTest.cpp - mw-run end to end --------------------------------===//
//
// Runs the mw-run binary (MWRT_MW_RUN) on hand-built plan files: its text
// and JSON output, determinism per seed, --save-weights (written after a
// successful run; an existing file untouched by a failed one), and the exit
// status and message of each kind of failure.
//
//===----------------------------------------------------------------------===//

#include "PlanTestHelpers.h"

#include "mwrt/safetensors.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <sys/wait.h>

namespace mwrt::test {

namespace {

struct RunResult {
  int exitCode = -1;
  std::string output; ///< stdout and stderr together
};

std::string quote(const std::string &s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// Runs mw-run with `args` (already quoted) and separate stdout/stderr
/// handling: `stderrToo` merges stderr into the output.
RunResult runTool(const std::string &args, bool stderrToo = true,
                  const std::string &env = "") {
  std::string cmd = (env.empty() ? "" : "env " + env + " ") +
                    quote(MWRT_MW_RUN) + " " + args +
                    (stderrToo ? " 2>&1" : " 2>/dev/null");
  RunResult r;
  FILE *pipe = popen(cmd.c_str(), "r");
  if (!pipe)
    return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0)
    r.output.append(buf, n);
  int status = pclose(pipe);
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string writePlan(const PlanBuilder &b, const std::string &name) {
  std::string path = tempPath(name);
  writePlanFile(path, b.finish());
  return path;
}

} // namespace

TEST(RunTool, PrintsLossesTimesAndMemory) {
  std::string plan = writePlan(adamPlan(), "adam.mwplan");
  RunResult r = runTool(quote(plan) + " --device cpu --steps 3");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_CONTAINS(r.output, "(function train_step) on cpu: 3 steps, seed 0");
  EXPECT_CONTAINS(r.output, "step 1  loss ");
  EXPECT_CONTAINS(r.output, "step 3  loss ");
  EXPECT_CONTAINS(r.output, "step time: median ");
  // arena 192 + five persistents of 64 bytes each.
  EXPECT_CONTAINS(r.output,
                  "memory: planned peak 512 B (arena 192 + persistent 320 + "
                  "workspace 0), measured peak 512 B (equal)");
}

TEST(RunTool, JsonReportIsOneObjectAndDeterministic) {
  std::string plan = writePlan(adamPlan(), "adam.mwplan");
  RunResult a = runTool(quote(plan) + " --steps 4 --seed 7 --report json",
                        /*stderrToo=*/false);
  ASSERT_EQ(a.exitCode, 0) << a.output;
  nlohmann::json report = nlohmann::json::parse(a.output, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << a.output;
  EXPECT_EQ(report["steps"], 4);
  EXPECT_EQ(report["seed"], 7);
  EXPECT_EQ(report["device"], "cpu");
  ASSERT_EQ(report["losses"].size(), 4u);
  ASSERT_EQ(report["step_times_ms"].size(), 4u);
  EXPECT_TRUE(report["median_step_ms"].is_number());
  const nlohmann::json &mem = report["memory"];
  EXPECT_EQ(mem["arena_bytes"], 192);
  EXPECT_EQ(mem["planned_peak_bytes"], mem["measured_peak_bytes"]);
  for (const nlohmann::json &loss : report["losses"])
    EXPECT_TRUE(loss.is_number()) << loss;

  RunResult b =
      runTool(quote(plan) + " --steps 4 --seed 7 --report json", false);
  nlohmann::json again = nlohmann::json::parse(b.output, nullptr, false);
  EXPECT_EQ(again["losses"], report["losses"]);
  RunResult c =
      runTool(quote(plan) + " --steps 4 --seed=8 --report=json", false);
  nlohmann::json other = nlohmann::json::parse(c.output, nullptr, false);
  ASSERT_FALSE(other.is_discarded()) << c.output;
  EXPECT_NE(other["losses"], report["losses"]);
}

TEST(RunTool, SaveWeightsWritesParamsAndState) {
  std::string plan = writePlan(adamPlan(), "adam.mwplan");
  std::string out = tempPath("out.safetensors");
  RunResult r =
      runTool(quote(plan) + " --steps 2 --save-weights " + quote(out));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  SafeTensors saved;
  std::string error;
  ASSERT_TRUE(readSafeTensors(out, saved, error)) << error;
  EXPECT_EQ(saved.size(), 4u);
  const TensorData *step = saved.find("optimizer.step");
  ASSERT_TRUE(step);
  int64_t count;
  std::memcpy(&count, step->bytes.data(), 8);
  EXPECT_EQ(count, 2);
  // Resuming from the file continues the run: 2 + 2 steps equal 4.
  std::string resumed = tempPath("resumed.safetensors");
  std::string straight = tempPath("straight.safetensors");
  ASSERT_EQ(runTool(quote(plan) + " --steps 2 --weights " + quote(out) +
                    " --save-weights " + quote(resumed))
                .exitCode,
            0);
  ASSERT_EQ(
      runTool(quote(plan) + " --steps 4 --save-weights " + quote(straight))
          .exitCode,
      0);
  EXPECT_EQ(readFileText(resumed), readFileText(straight));
}

TEST(RunTool, WeightsFileReplacesTheDefaultsWithoutDrawingThem) {
  // Full, partial (params only) and no weights file give the same losses
  // and saved weights; what the file gives is loaded, not initialized.
  std::string plan = writePlan(twoAdamPlan(), "two-adam.mwplan");
  std::string defaults = tempPath("two-adam-defaults.safetensors");
  ASSERT_EQ(runTool(quote(plan) + " --steps 0 --save-weights " +
                    quote(defaults))
                .exitCode,
            0);
  SafeTensors saved, params;
  std::string error;
  ASSERT_TRUE(readSafeTensors(defaults, saved, error)) << error;
  for (const char *name : {"w", "u"})
    ASSERT_TRUE(params.add(name, *saved.find(name), error)) << error;
  std::string partial = tempPath("two-adam-params-only.safetensors");
  ASSERT_TRUE(writeSafeTensors(partial, params, error)) << error;
  struct Case {
    std::string weights;
    uint64_t initialized, loaded;
  };
  const uint64_t all = 12 * 3 + 32 * 3 + 8 + 4;
  std::vector<Case> cases = {{"", all, 0},
                             {defaults, 4, all - 4},
                             {partial, all - 44, 44}};
  std::string firstSaved;
  nlohmann::json firstLosses;
  for (const Case &c : cases) {
    std::string out = tempPath("two-adam-after.safetensors");
    RunResult r = runTool(
        quote(plan) + " --steps 3 --report json --save-weights " + quote(out) +
            (c.weights.empty() ? "" : " --weights " + quote(c.weights)),
        /*stderrToo=*/false);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    nlohmann::json report = nlohmann::json::parse(r.output, nullptr, false);
    ASSERT_FALSE(report.is_discarded()) << r.output;
    EXPECT_EQ(report["memory"]["initialized_bytes"], c.initialized)
        << c.weights;
    EXPECT_EQ(report["memory"]["loaded_bytes"], c.loaded) << c.weights;
    EXPECT_TRUE(report["load_ms"].is_number());
    if (firstSaved.empty()) {
      firstSaved = readFileText(out);
      firstLosses = report["losses"];
      continue;
    }
    EXPECT_EQ(report["losses"], firstLosses) << c.weights;
    EXPECT_EQ(readFileText(out), firstSaved) << c.weights;
  }
}

/// torchrun's environment for rank `rank` of `size` (no MPI launcher's).
std::string torchrunEnv(int rank, int size) {
  return "-u OMPI_COMM_WORLD_SIZE -u PMIX_RANK -u PMI_SIZE -u PMI_RANK "
         "-u MV2_COMM_WORLD_SIZE RANK=" +
         std::to_string(rank) + " WORLD_SIZE=" + std::to_string(size) +
         " LOCAL_RANK=" + std::to_string(rank) +
         " MASTER_ADDR=127.0.0.1 MASTER_PORT=29611";
}

TEST(RunTool, TorchrunRanksOnTheCpuAreOneClearError) {
  std::string plan = writePlan(twoAdamPlan(), "two-adam.mwplan");
  RunResult r = runTool(quote(plan) + " --steps 1", true, torchrunEnv(1, 2));
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_CONTAINS(r.output,
                  "mw-run: rank 1: error: " + plan +
                      ": CPU ranks run over Open MPI, which cannot join "
                      "processes that it did not start, and this process has "
                      "torchrun's environment (RANK=1 WORLD_SIZE=2 "
                      "LOCAL_RANK=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29611) "
                      "and no MPI launcher's; start the CPU ranks with "
                      "mpirun -np 2 mw-run ...");
  // A plan for 1 rank under WORLD_SIZE=2 is refused before NCCL's
  // bootstrap (which would wait for the other rank), GPU or not.
  r = runTool(quote(plan) + " --steps 1 --device cuda", true,
              torchrunEnv(0, 2));
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_CONTAINS(r.output, "the plan was compiled for 1 ranks but runs on 2 "
                            "(torchrun: RANK=0 WORLD_SIZE=2");
  // A malformed variable stops mw-run before anything else.
  r = runTool(quote(plan), true,
              "-u OMPI_COMM_WORLD_SIZE RANK=0 WORLD_SIZE=two LOCAL_RANK=0 "
              "MASTER_ADDR=h MASTER_PORT=1");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_CONTAINS(r.output, "mw-run: error: --comm auto: launcher "
                            "environment: WORLD_SIZE='two' is not a number of "
                            "ranks");
  // WORLD_SIZE=1 on the CPU is a group of one.
  r = runTool(quote(plan) + " --steps 1", true, torchrunEnv(0, 1));
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_CONTAINS(r.output, "1 rank (torchrun)");
}

TEST(RunTool, TorchrunCudaRankBootstrapsNcclWithoutMpi) {
  // One CUDA rank over NCCL, bootstrapped by NCCL at MASTER_ADDR:
  // MASTER_PORT+1; skips without a CUDA device or NCCL.
  std::string plan = writePlan(twoAdamPlan(), "two-adam.mwplan");
  RunResult probe = runTool(quote(plan) + " --steps 1 --device cuda");
  if (probe.exitCode != 0)
    GTEST_SKIP() << "no CUDA device: " << probe.output;
  RunResult r = runTool(quote(plan) + " --steps 2 --device cuda", true,
                        torchrunEnv(0, 1));
  if (r.output.find("need NCCL") != std::string::npos)
    GTEST_SKIP() << "no NCCL in this build";
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_CONTAINS(r.output, "1 rank (torchrun)");
}

TEST(RunTool, FailedRunLeavesExistingWeightsFileUntouched) {
  std::string plan = writePlan(nanLossPlan(), "nan.mwplan");
  std::string out = tempPath("keep.safetensors");
  writeFile(out, {'O', 'L', 'D'});
  RunResult r =
      runTool(quote(plan) + " --steps 3 --save-weights " + quote(out));
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_CONTAINS(r.output, "step 1  loss 0.000000");
  EXPECT_CONTAINS(r.output,
                  "mw-run: error: step 2: the loss ('loss') is NaN; stopping");
  EXPECT_EQ(readFileText(out), "OLD");
}

TEST(RunTool, ErrorsExitNonZeroWithAMessage) {
  std::string plan = writePlan(denseReluPlan(), "dense.mwplan");
  struct Case {
    std::string args;
    int exitCode;
    std::string message;
  } cases[] = {
      {"", 2, "mw-run: no plan given"},
      {quote(plan) + " --bogus", 2, "mw-run: unknown option '--bogus'"},
      {quote(plan) + " --device", 2, "--device needs a value"},
      {quote(plan) + " --device=gpu", 2, "unknown device 'gpu'"},
      {quote(plan) + " --steps -1", 2, "--steps expects an integer"},
      {quote(plan) + " --steps 1 --steps 2", 2, "--steps given twice"},
      {quote(plan) + " --report xml", 2, "unknown report format 'xml'"},
      {quote(plan) + " --reference-matmul=yes", 2, "takes no value"},
      {quote(plan) + " other.mwplan", 2, "more than one plan given"},
      {quote(plan) + " --device cuda", 1, "--device cuda: "},
      {quote(tempPath("none.mwplan")), 1, "cannot open: No such file"},
      {quote(plan) + " --weights " + quote(tempPath("none.safetensors")), 1,
       "none.safetensors"},
      {quote(plan) + " --save-weights /nonexistent-dir/w.safetensors", 1,
       "directory '/nonexistent-dir' does not exist or is not writable"},
  };
  for (const Case &c : cases) {
    RunResult r = runTool(c.args);
    EXPECT_EQ(r.exitCode, c.exitCode) << c.args << "\n" << r.output;
    EXPECT_CONTAINS(r.output, c.message);
  }
  RunResult help = runTool("--help");
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_CONTAINS(help.output, "usage: mw-run MODEL.mwplan");
}

TEST(RunTool, MisShapedWeightIsNamed) {
  std::string plan = writePlan(denseReluPlan(), "dense.mwplan");
  SafeTensors file;
  std::string error;
  TensorData w;
  w.shape = {2, 3};
  w.bytes.assign(24, 0);
  TensorData b;
  b.shape = {2};
  b.bytes.assign(8, 0);
  ASSERT_TRUE(file.add("fc.weight", w, error));
  ASSERT_TRUE(file.add("fc.bias", b, error));
  std::string path = tempPath("w.safetensors");
  ASSERT_TRUE(writeSafeTensors(path, file, error));
  RunResult r = runTool(quote(plan) + " --weights " + quote(path));
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_CONTAINS(r.output, "tensor 'fc.weight' is F32 [2, 3], but the "
                            "plan's param 'fc.weight' is F32 [3, 2]");
}

TEST(RunTool, CorruptPlanIsRejected) {
  std::vector<uint8_t> bytes = denseReluPlan().finish();
  bytes.resize(bytes.size() - 9);
  std::string path = tempPath("cut.mwplan");
  writePlanFile(path, bytes);
  RunResult r = runTool(quote(path));
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_CONTAINS(r.output, "corrupt or truncated plan");
  // Cut in the file, the trailer is gone.
  writeFile(path, withTrailer(denseReluPlan().finish()));
  std::vector<uint8_t> file = withTrailer(denseReluPlan().finish());
  file.resize(file.size() - 9);
  writeFile(path, file);
  r = runTool(quote(path));
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_CONTAINS(r.output, "no checksum trailer");
}

} // namespace mwrt::test
