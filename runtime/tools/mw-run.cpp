//===- mw-run.cpp - Run a .mwplan for some steps --------------------------===//
//
// The runtime's driver: loads a plan, binds weights and inputs (from
// safetensors files, or the deterministic defaults of docs/runtime.md), runs
// N steps printing the loss and time of each, then the median step time and
// the planned against the measured memory, and optionally saves the updated
// weights (atomically, and only after every step succeeded). No LLVM: the
// arguments are parsed by hand. Exit status 0 on success, 1 when the run
// fails, 2 for a bad command line.
//
//===----------------------------------------------------------------------===//

#include "mwrt/kernels.h"
#include "mwrt/runtime.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <sys/resource.h>
#include <unistd.h>
#include <vector>

using namespace mwrt;

namespace {

const char *kUsage =
    "usage: mw-run MODEL.mwplan [--device cpu|cuda] [--weights W.safetensors]\n"
    "              [--inputs I.safetensors] [--seed N] [--steps N]\n"
    "              [--save-weights OUT.safetensors] [--report json]\n"
    "              [--reference-matmul]\n"
    "\n"
    "Runs N steps (default 1) of the plan on the device (default cpu) and\n"
    "prints the loss and time of each step, the median step time, and the\n"
    "planned and measured peak memory. Without --weights, weights start from\n"
    "the deterministic initialization of --seed (default 0); without\n"
    "--inputs, inputs are a synthetic learnable sequence (docs/runtime.md).\n"
    "\n"
    "  --device cpu|cuda      where to run (cuda needs a device; see\n"
    "                         docs/runtime-cuda.md for MWRT_CUDA_TF32, MWRT_CUDA_GRAPH)\n"
    "  --weights FILE         params and optimizer state, by name\n"
    "  --inputs FILE          inputs and labels, by name\n"
    "  --seed N               seed of the default initialization\n"
    "  --steps N              steps to run (0: only load and bind)\n"
    "  --save-weights FILE    write params and optimizer state after the run\n"
    "  --report json          print one JSON object instead of text\n"
    "  --reference-matmul     matmul with the evaluator's loops (bit-exact)\n";

struct Options {
  std::string plan;
  std::string device = "cpu";
  std::string weights, inputs, saveWeights;
  uint64_t seed = 0;
  uint64_t steps = 1;
  bool json = false;
  bool referenceMatmul = false;
};

int usageError(const std::string &message) {
  std::fprintf(stderr, "mw-run: %s\n(run mw-run --help for usage)\n",
               message.c_str());
  return 2;
}

bool parseUnsigned(const std::string &text, uint64_t max, uint64_t &out) {
  if (text.empty() || text.size() > 20 ||
      !std::all_of(text.begin(), text.end(),
                   [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE || v > max)
    return false;
  out = v;
  return true;
}

/// Parses argv into `o`; returns an exit status (0 to go on, -1 after
/// --help) and prints the message of a bad command line.
int parseArgs(int argc, char **argv, Options &o) {
  std::vector<std::string> seen;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return -1;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      if (!o.plan.empty())
        return usageError("more than one plan given: '" + o.plan + "' and '" +
                          arg + "'");
      o.plan = arg;
      continue;
    }
    std::string flag = arg, value;
    bool inlineValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      inlineValue = true;
    }
    static const char *const withValue[] = {
        "--device", "--weights",      "--inputs", "--seed",
        "--steps",  "--save-weights", "--report"};
    bool takesValue = std::any_of(std::begin(withValue), std::end(withValue),
                                  [&](const char *f) { return flag == f; });
    if (!takesValue && flag != "--reference-matmul")
      return usageError("unknown option '" + flag + "'");
    if (std::find(seen.begin(), seen.end(), flag) != seen.end())
      return usageError(flag + " given twice");
    seen.push_back(flag);
    if (!takesValue) {
      if (inlineValue)
        return usageError(flag + " takes no value");
      o.referenceMatmul = true;
      continue;
    }
    if (!inlineValue) {
      if (i + 1 >= argc)
        return usageError(flag + " needs a value");
      value = argv[++i];
    }
    if (value.empty())
      return usageError(flag + " needs a value");
    if (flag == "--device") {
      if (value != "cpu" && value != "cuda")
        return usageError("unknown device '" + value +
                          "' (expected cpu or cuda)");
      o.device = value;
    } else if (flag == "--weights") {
      o.weights = value;
    } else if (flag == "--inputs") {
      o.inputs = value;
    } else if (flag == "--save-weights") {
      o.saveWeights = value;
    } else if (flag == "--seed") {
      if (!parseUnsigned(value, UINT64_MAX, o.seed))
        return usageError("--seed expects an integer in [0, 2^64), got '" +
                          value + "'");
    } else if (flag == "--steps") {
      if (!parseUnsigned(value, 1000000000, o.steps))
        return usageError("--steps expects an integer in [0, 10^9], got '" +
                          value + "'");
    } else if (flag == "--report") {
      if (value != "json")
        return usageError("unknown report format '" + value +
                          "' (expected json)");
      o.json = true;
    }
  }
  if (o.plan.empty())
    return usageError("no plan given");
  return 0;
}

int fail(const std::string &message) {
  std::fprintf(stderr, "mw-run: error: %s\n", message.c_str());
  return 1;
}

int failStatus() { return fail(mwrt_last_error()); }

/// The loss with 6 decimals, rounded from its shortest decimal form that
/// reads back as the same float (mw-eval --print's form), not from its exact
/// binary value: the two differ when that form has a 5 in the 7th decimal,
/// and this way mw-run's column equals mw-eval's value printed with "%.6f".
std::string formatLoss(double loss) {
  char buf[64];
  float f = static_cast<float>(loss);
  if (!std::isfinite(f) || static_cast<double>(f) != loss) {
    std::snprintf(buf, sizeof buf, "%.6f", loss);
    return buf;
  }
  std::string best;
  for (int digits = 1; digits <= 9; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, loss);
    bool exact = std::strtof(buf, nullptr) == f;
    if ((exact || digits == 9) &&
        (best.empty() || std::strlen(buf) < best.size()))
      best = buf;
  }
  std::snprintf(buf, sizeof buf, "%.6f", std::strtod(best.c_str(), nullptr));
  return buf;
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

uint64_t maxRssBytes() {
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0)
    return 0;
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024; // KiB on Linux
}

/// Checks up front that `path` can be written, so a long run does not end
/// in a failure to save.
bool writableTarget(const std::string &path, std::string &error) {
  std::string dir = ".";
  if (size_t slash = path.rfind('/'); slash != std::string::npos)
    dir = slash == 0 ? "/" : path.substr(0, slash);
  if (::access(dir.c_str(), W_OK) != 0) {
    error = "--save-weights " + path + ": directory '" + dir +
            "' does not exist or is not writable";
    return false;
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (int status = parseArgs(argc, argv, o))
    return status < 0 ? 0 : status;

  std::string error;
  if (!o.saveWeights.empty() && !writableTarget(o.saveWeights, error))
    return fail(error);

  std::shared_ptr<const Plan> plan;
  if (Plan::load(o.plan, plan) != MWRT_OK)
    return failStatus();
  SessionOptions sessionOptions;
  sessionOptions.seed = o.seed;
  sessionOptions.referenceMatmul = o.referenceMatmul;
  std::unique_ptr<Session> session;
  if (mwrt_status st = Session::create(plan, o.device, sessionOptions, session))
    return st == MWRT_UNAVAILABLE
               ? fail("--device " + o.device + ": " + mwrt_last_error())
               : failStatus();
  if (!o.weights.empty()) {
    std::vector<std::string> fresh;
    if (session->loadWeights(o.weights, &fresh) != MWRT_OK)
      return failStatus();
    if (!fresh.empty())
      std::fprintf(stderr,
                   "mw-run: note: %s holds no optimizer state for %zu "
                   "tensor%s (first: '%s'); they start fresh\n",
                   o.weights.c_str(), fresh.size(),
                   fresh.size() == 1 ? "" : "s", fresh.front().c_str());
  }
  if (!o.inputs.empty() && session->loadInputs(o.inputs) != MWRT_OK)
    return failStatus();

  const char *matmul =
      o.referenceMatmul || !cpuMatmulUsesBlas() ? "reference" : "openblas";
  bool hasLoss = plan->lossResult() >= 0;
  if (!o.json)
    std::printf("mw-run: %s (function %s) on %s: %llu step%s, seed %llu, "
                "matmul %s\n",
                o.plan.c_str(),
                plan->function().empty() ? "?" : plan->function().c_str(),
                o.device.c_str(), static_cast<unsigned long long>(o.steps),
                o.steps == 1 ? "" : "s",
                static_cast<unsigned long long>(o.seed), matmul);

  std::vector<double> losses, times;
  losses.reserve(o.steps);
  times.reserve(o.steps);
  for (uint64_t s = 1; s <= o.steps; ++s) {
    auto start = std::chrono::steady_clock::now();
    mwrt_status status = session->step();
    auto end = std::chrono::steady_clock::now();
    if (status != MWRT_OK)
      return failStatus();
    double ms = std::chrono::duration<double, std::milli>(end - start).count();
    times.push_back(ms);
    double loss = 0;
    if (hasLoss && session->loss(loss) == MWRT_OK)
      losses.push_back(loss);
    if (!o.json) {
      if (hasLoss)
        std::printf("step %llu  loss %s  %.3f ms\n",
                    static_cast<unsigned long long>(s),
                    formatLoss(loss).c_str(), ms);
      else
        std::printf("step %llu  %.3f ms\n", static_cast<unsigned long long>(s),
                    ms);
      std::fflush(stdout);
    }
  }

  if (!o.saveWeights.empty() && session->saveWeights(o.saveWeights) != MWRT_OK)
    return failStatus();

  SessionStats st = session->stats();
  double medianMs = median(times);
  uint64_t rss = maxRssBytes();
  if (o.json) {
    nlohmann::ordered_json report;
    report["plan"] = o.plan;
    report["function"] = plan->function();
    report["device"] = o.device;
    report["seed"] = o.seed;
    report["steps"] = o.steps;
    report["matmul"] = matmul;
    report["losses"] = hasLoss ? nlohmann::ordered_json(losses)
                               : nlohmann::ordered_json(nullptr);
    report["step_times_ms"] = times;
    report["median_step_ms"] = medianMs;
    report["memory"] = {
        {"arena_bytes", st.arenaBytes},
        {"persistent_bytes", st.persistentBytes},
        {"workspace_bytes", st.workspaceBytes},
        {"planned_peak_bytes", st.plannedPeakBytes},
        {"measured_peak_bytes", st.measuredPeakBytes},
        {"arena_lower_bound_bytes", st.lowerBoundBytes},
        {"process_max_rss_bytes", rss},
    };
    report["saved_weights"] = o.saveWeights.empty()
                                  ? nlohmann::ordered_json(nullptr)
                                  : nlohmann::ordered_json(o.saveWeights);
    std::printf("%s\n", report.dump(2).c_str());
    return 0;
  }
  if (!times.empty())
    std::printf("step time: median %.3f ms over %zu step%s\n", medianMs,
                times.size(), times.size() == 1 ? "" : "s");
  std::printf("memory: planned peak %llu B (arena %llu + persistent %llu + "
              "workspace %llu), measured peak %llu B%s\n",
              static_cast<unsigned long long>(st.plannedPeakBytes),
              static_cast<unsigned long long>(st.arenaBytes),
              static_cast<unsigned long long>(st.persistentBytes),
              static_cast<unsigned long long>(st.workspaceBytes),
              static_cast<unsigned long long>(st.measuredPeakBytes),
              st.measuredPeakBytes == st.plannedPeakBytes ? " (equal)"
                                                          : " (DIFFERENT)");
  std::printf("arena lower bound %llu B; process max RSS %.1f MiB\n",
              static_cast<unsigned long long>(st.lowerBoundBytes),
              rss / 1048576.0);
  if (!o.saveWeights.empty())
    std::printf("saved params and optimizer state to %s\n",
                o.saveWeights.c_str());
  return 0;
}
