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

#include "generate.h"
#include "mwrt/checkpoint.h"
#include "mwrt/comm.h"
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
#include <strings.h>
#include <csignal>
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
    "              [--save-weights OUT.safetensors|DIR] [--report json]\n"
    "              [--save-outputs OUT.safetensors]\n"
    "              [--reference-matmul] [--threads N] [--comm auto|mpi|none]\n"
    "              [--comm-timeout SECONDS]\n"
    "       mw-run --consolidate DIR -o FULL.safetensors\n"
    "       mw-run DECODE.mwplan --generate --prefill PREFILL.mwplan ...\n"
    "              (serving; mw-run --generate --help, docs/inference.md)\n"
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
    "  --save-weights FILE    write params and optimizer state after the run;\n"
    "                         a plan of several ranks writes a sharded\n"
    "                         checkpoint directory (each rank its pieces)\n"
    "  --save-outputs FILE    write every result of the last step by name\n"
    "                         (outputs such as logits, updated state, KV\n"
    "                         caches; one rank only)\n"
    "  --report json          print one JSON object instead of text\n"
    "  --reference-matmul     matmul and attention with the evaluator's loops\n"
    "                         (bit-exact with mw-eval)\n"
    "  --threads N            CPU kernel threads, the main one included\n"
    "                         (default: MW_NUM_THREADS, else every core);\n"
    "                         results are bit-identical for any N\n"
    "\n"
    "OpenBLAS kernels: where OpenBLAS does not recognize the CPU and falls\n"
    "  back to pre-AVX kernels, mw-run starts again with OPENBLAS_CORETYPE\n"
    "  set to the AVX-512 or AVX2 kernels the CPU has; set it yourself to\n"
    "  keep a choice. The header names the kernels (docs/runtime-kernels.md).\n"
    "\n"
    "Offloaded weights (a plan from --mw-offload, docs/offload.md): host\n"
    "  weights load from --weights like others; file weights are read by\n"
    "  offset from --weights, or from <path>/<function>.weights.safetensors\n"
    "  (written with the defaults when there is no --weights), with O_DIRECT\n"
    "  unless MWRT_OFFLOAD_DIRECT=0; the report adds compute, copy, wait and\n"
    "  read time per step and the bytes streamed.\n"
    "\n"
    "Several ranks (a plan from --mw-zero with ranks=N): start N processes,\n"
    "  mpirun -np N mw-run PLAN ...; every rank reads its own part of --weights\n"
    "  (a whole checkpoint, read by offset, or a sharded checkpoint directory)\n"
    "  and of --inputs (the global batch); rank 0 prints. docs/multi-rank.md.\n"
    "  --comm auto|mpi|none   auto (default): MPI when an MPI launcher started\n"
    "                         the process; none: one rank even under mpirun\n"
    "  --comm-timeout S       a collective that does not complete within S\n"
    "                         seconds (default 300) ends the run on every rank\n"
    "  --consolidate DIR      merge the sharded checkpoint DIR into one file of\n"
    "                         whole tensors (-o FILE), as DeepSpeed's\n"
    "                         zero_to_fp32.py does\n";

struct Options {
  std::string plan;
  std::string device = "cpu";
  std::string weights, inputs, saveWeights, saveOutputs;
  std::string comm = "auto";
  std::string consolidate, output;
  uint64_t seed = 0;
  uint64_t steps = 1;
  uint64_t threads = 0; ///< 0: SessionOptions' default
  double commTimeout = 300;
  bool json = false;
  bool referenceMatmul = false;
};

int usageError(const std::string &message) {
  std::fprintf(stderr, "mw-run: %s\n(run mw-run --help for usage)\n",
               message.c_str());
  return 2;
}

bool parseUnsigned(const std::string &text, uint64_t max, uint64_t &out) {
  return parseUnsignedArg(text, max, out);
}

} // namespace

bool parseUnsignedArg(const std::string &text, uint64_t max, uint64_t &out) {
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

int splitCommandLine(
    int argc, char **argv, const char *help,
    std::initializer_list<std::string_view> flags,
    std::initializer_list<std::string_view> withValue,
    const std::string &context,
    const std::function<int(const std::string &)> &usage,
    std::string &positional,
    const std::function<int(const std::string &, const std::string &)> &option) {
  auto among = [](std::initializer_list<std::string_view> names,
                  const std::string &flag) {
    return std::find(names.begin(), names.end(), flag) != names.end();
  };
  std::vector<std::string> seen;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(help, stdout);
      return -1;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      if (!positional.empty())
        return usage("more than one plan given: '" + positional + "' and '" +
                     arg + "'");
      positional = arg;
      continue;
    }
    std::string flag = arg, value;
    bool inlineValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      inlineValue = true;
    }
    bool isFlag = among(flags, flag);
    if (!isFlag && !among(withValue, flag))
      return usage("unknown option '" + flag + "'" + context);
    if (std::find(seen.begin(), seen.end(), flag) != seen.end())
      return usage(flag + " given twice");
    seen.push_back(flag);
    if (isFlag && inlineValue)
      return usage(flag + " takes no value");
    if (!isFlag) {
      if (!inlineValue) {
        if (i + 1 >= argc)
          return usage(flag + " needs a value");
        value = argv[++i];
      }
      if (value.empty())
        return usage(flag + " needs a value");
    }
    if (int status = option(flag, value))
      return status;
  }
  return 0;
}

namespace {

/// OpenBLAS picks its kernels when it loads, before main: from
/// OPENBLAS_CORETYPE, else from the CPU model. Where it fell back to pre-AVX
/// kernels on a CPU it does not recognize (cpuBlasCoreAdvice), mw-run starts
/// again with the kernel set the CPU supports: on the development machine's
/// virtual AVX-512 Xeon a quarter of the matmul time. OpenBLAS's own pick is
/// kept in MWRT_BLAS_DETECTED_CORE for the report. Setting
/// OPENBLAS_CORETYPE (to any core, the detected one included) keeps it.
void chooseBlasKernels(char **argv) {
  std::string core = cpuBlasCoreAdvice();
  if (core.empty())
    return;
  std::string detected = cpuBlasCore();
  setenv("MWRT_BLAS_DETECTED_CORE", detected.c_str(), 1);
  setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
  execv("/proc/self/exe", argv);
  // No /proc: run with OpenBLAS's pick.
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv("MWRT_BLAS_DETECTED_CORE");
}

/// OpenBLAS's own pick where mw-run chose other kernels (the variable
/// chooseBlasKernels set, and OPENBLAS_CORETYPE naming the core in use);
/// empty otherwise.
std::string blasDetectedCore() {
  const char *chosen = std::getenv("OPENBLAS_CORETYPE");
  const char *detected = std::getenv("MWRT_BLAS_DETECTED_CORE");
  if (!chosen || !detected || !*detected ||
      strcasecmp(chosen, cpuBlasCore().c_str()) != 0)
    return "";
  return detected;
}

/// "openblas SkylakeX", with "(OpenBLAS detected Prescott)" where mw-run
/// chose the kernels; "reference" for the evaluator's loops.
std::string matmulDescription(bool blas) {
  if (!blas)
    return "reference";
  std::string text = "openblas " + cpuBlasCore();
  if (std::string detected = blasDetectedCore(); !detected.empty())
    text += " (OpenBLAS detected " + detected + ")";
  return text;
}

/// Parses argv into `o`; returns an exit status (0 to go on, -1 after
/// --help) and prints the message of a bad command line.
int parseArgs(int argc, char **argv, Options &o) {
  int status = splitCommandLine(
      argc, argv, kUsage, {"--reference-matmul"},
      {"--device", "--weights", "--inputs", "--seed", "--steps",
       "--save-weights", "--report", "--comm", "--comm-timeout",
       "--consolidate", "-o", "--save-outputs", "--threads"},
      "", usageError, o.plan,
      [&](const std::string &flag, const std::string &value) {
        if (flag == "--reference-matmul") {
          o.referenceMatmul = true;
        } else if (flag == "--device") {
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
        } else if (flag == "--save-outputs") {
          o.saveOutputs = value;
        } else if (flag == "--seed") {
          if (!parseUnsigned(value, UINT64_MAX, o.seed))
            return usageError("--seed expects an integer in [0, 2^64), got '" +
                              value + "'");
        } else if (flag == "--steps") {
          if (!parseUnsigned(value, 1000000000, o.steps))
            return usageError("--steps expects an integer in [0, 10^9], got '" +
                              value + "'");
        } else if (flag == "--threads") {
          if (!parseUnsigned(value, 1024, o.threads) || o.threads == 0)
            return usageError("--threads expects an integer in [1, 1024], got '" +
                              value + "'");
        } else if (flag == "--report") {
          if (value != "json")
            return usageError("unknown report format '" + value +
                              "' (expected json)");
          o.json = true;
        } else if (flag == "--comm") {
          if (value != "auto" && value != "mpi" && value != "none")
            return usageError("unknown --comm '" + value +
                              "' (expected auto, mpi or none)");
          o.comm = value;
        } else if (flag == "--comm-timeout") {
          uint64_t seconds = 0;
          if (!parseUnsigned(value, 86400, seconds) || seconds == 0)
            return usageError(
                "--comm-timeout expects seconds in [1, 86400], got '" + value +
                "'");
          o.commTimeout = static_cast<double>(seconds);
        } else if (flag == "--consolidate") {
          o.consolidate = value;
        } else if (flag == "-o") {
          o.output = value;
        }
        return 0;
      });
  if (status != 0)
    return status;
  if (!o.consolidate.empty()) {
    if (!o.plan.empty())
      return usageError("--consolidate takes no plan");
    if (o.output.empty())
      return usageError("--consolidate needs -o FULL.safetensors");
    return 0;
  }
  if (!o.output.empty())
    return usageError("-o is for --consolidate; use --save-weights");
  if (o.plan.empty())
    return usageError("no plan given");
  // The thread count's environment default, held to --threads' rule: a
  // malformed value is an error, not silently every core.
  if (const char *env = std::getenv("MW_NUM_THREADS"); env && o.threads == 0) {
    uint64_t threads = 0;
    if (!parseUnsigned(env, 1024, threads) || threads == 0)
      return usageError(
          std::string("MW_NUM_THREADS expects an integer in [1, 1024], got '") +
          env + "'");
  }
  return 0;
}

/// "rank R: " in a run of several ranks, else "".
std::string rankPrefix() {
  const ProcessGroup &g = processGroup();
  return g.size > 1 ? "rank " + std::to_string(g.rank) + ": " : "";
}

int fail(const std::string &message) {
  std::fprintf(stderr, "mw-run: %serror: %s\n", rankPrefix().c_str(),
               message.c_str());
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
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/')
    trimmed.pop_back();
  if (size_t slash = trimmed.rfind('/'); slash != std::string::npos)
    dir = slash == 0 ? "/" : trimmed.substr(0, slash);
  if (::access(dir.c_str(), W_OK) != 0) {
    error = "--save-weights " + path + ": directory '" + dir +
            "' does not exist or is not writable";
    return false;
  }
  return true;
}

/// The line a rank prints when the launcher ends it because another rank
/// failed (Open MPI's mpirun sends SIGTERM to the survivors).
char terminateLine[96];
size_t terminateLength = 0;

extern "C" void onTerminate(int) {
  if (terminateLength)
    (void)!::write(2, terminateLine, terminateLength);
  ::_exit(143);
}

int consolidateMain(const Options &o) {
  std::string error;
  if (!writableTarget(o.output, error))
    return fail(error);
  ConsolidateResult r;
  if (consolidateCheckpoint(o.consolidate, o.output, r) != MWRT_OK)
    return failStatus();
  for (const std::string &w : r.warnings)
    std::fprintf(stderr, "mw-run: warning: %s\n", w.c_str());
  std::printf("mw-run: consolidated %s (%d rank%s, step %llu) into %s: %zu "
              "tensors, %llu B\n",
              o.consolidate.c_str(), r.ranks, r.ranks == 1 ? "" : "s",
              static_cast<unsigned long long>(r.step), o.output.c_str(),
              r.tensors, static_cast<unsigned long long>(r.bytes));
  return 0;
}

/// `now` less `before`: one step's offload traffic.
OffloadStats offloadDelta(const OffloadStats &now, const OffloadStats &before) {
  OffloadStats d = now;
  d.steps -= before.steps;
  d.fetches -= before.fetches;
  d.bytesStreamed -= before.bytesStreamed;
  d.bytesRead -= before.bytesRead;
  d.computeSeconds -= before.computeSeconds;
  d.copySeconds -= before.copySeconds;
  d.waitSeconds -= before.waitSeconds;
  d.readSeconds -= before.readSeconds;
  return d;
}

/// --report json's "offload": the mean step's compute, copy, wait and read
/// seconds and bytes, then each step's.
nlohmann::ordered_json offloadReport(const OffloadStats &total,
                                     const std::vector<OffloadStats> &steps,
                                     uint64_t hostBytes) {
  auto one = [](const OffloadStats &s, double n) {
    nlohmann::ordered_json j;
    j["compute_s"] = s.computeSeconds / n;
    j["copy_s"] = s.copySeconds / n;
    j["wait_s"] = s.waitSeconds / n;
    j["read_s"] = s.readSeconds / n;
    j["bytes_streamed"] = static_cast<uint64_t>(s.bytesStreamed / n);
    j["bytes_read"] = static_cast<uint64_t>(s.bytesRead / n);
    return j;
  };
  nlohmann::ordered_json j =
      one(total, total.steps ? static_cast<double>(total.steps) : 1.0);
  j["fetches_per_step"] =
      total.steps ? total.fetches / total.steps : total.fetches;
  j["steps"] = total.steps;
  j["host_bytes"] = hostBytes;
  j["file"] = total.file.empty() ? nlohmann::ordered_json(nullptr)
                                 : nlohmann::ordered_json(total.file);
  j["direct_io"] = total.direct;
  nlohmann::ordered_json each = nlohmann::ordered_json::array();
  for (const OffloadStats &s : steps)
    each.push_back(one(s, 1.0));
  j["per_step"] = each;
  return j;
}

/// The text summary's offload lines.
void printOffload(const OffloadStats &s, uint64_t hostBytes) {
  double n = s.steps ? static_cast<double>(s.steps) : 1.0;
  std::printf("offload: per step compute %.3f ms, copy %.3f ms, waiting for "
              "weights %.3f ms, file reads %.3f ms; %llu B streamed in %llu "
              "fetches\n",
              1e3 * s.computeSeconds / n, 1e3 * s.copySeconds / n,
              1e3 * s.waitSeconds / n, 1e3 * s.readSeconds / n,
              static_cast<unsigned long long>(s.bytesStreamed / n),
              static_cast<unsigned long long>(s.fetches / n));
  std::printf("offload: host memory %llu B (host store and staging, outside "
              "the device peak); %s\n",
              static_cast<unsigned long long>(hostBytes),
              s.file.empty() ? "no weights file"
                             : ("weights file " + s.file +
                                (s.direct ? " (O_DIRECT)" : " (buffered)"))
                                   .c_str());
}

nlohmann::ordered_json commReport(const CommStats &c) {
  nlohmann::ordered_json j;
  for (int k = 0; k < 4; ++k)
    j[collectiveKindName(k)] = {{"count", c.kinds[k].count},
                                {"elements", c.kinds[k].elements},
                                {"bytes", c.kinds[k].bytes},
                                {"sent_bytes", c.kinds[k].sentBytes}};
  j["wait_seconds"] = c.waitSeconds;
  j["engine_seconds"] = c.commSeconds;
  j["scratch_bytes"] = c.scratchBytes;
  return j;
}

/// Rank 0 receives every rank's `text` (in rank order); others get {}.
std::vector<std::string> gatherToRankZero(const std::string &text) {
  const ProcessGroup &g = processGroup();
  std::vector<std::string> all;
  for (int r = 0; r < g.size; ++r) {
    std::string piece = r == g.rank ? text : "";
    if (g.size > 1 && broadcastAcrossRanks(piece, r) != MWRT_OK)
      piece = "{}";
    if (g.rank == 0)
      all.push_back(std::move(piece));
  }
  return all;
}

int run(const Options &o) {
  const ProcessGroup &group = processGroup();
  const bool multi = group.size > 1, printer = group.rank == 0;
  if (multi && !o.saveOutputs.empty())
    return usageError("--save-outputs is for a run of one rank");

  // Everything up to the first step; on several ranks they agree on the
  // outcome, so that a rank's bad input ends every rank with its message.
  std::string error;
  std::shared_ptr<const Plan> plan;
  std::unique_ptr<Session> session;
  std::vector<std::string> fresh;
  auto loadStart = std::chrono::steady_clock::now();
  mwrt_status loaded = [&]() -> mwrt_status {
    if (!o.saveWeights.empty() && !writableTarget(o.saveWeights, error))
      return MWRT_INVALID_ARGUMENT;
    auto failed = [&](mwrt_status st) {
      error = mwrt_last_error();
      return st;
    };
    if (mwrt_status st = Plan::load(o.plan, plan))
      return failed(st);
    SessionOptions sessionOptions;
    sessionOptions.seed = o.seed;
    sessionOptions.referenceMatmul = o.referenceMatmul;
    sessionOptions.threads = static_cast<int>(o.threads);
    sessionOptions.commTimeoutSeconds = o.commTimeout;
    if (mwrt_status st =
            Session::create(plan, o.device, sessionOptions, session)) {
      error = st == MWRT_UNAVAILABLE && o.device != "cpu"
                  ? "--device " + o.device + ": " + mwrt_last_error()
                  : mwrt_last_error();
      return st;
    }
    if (!o.weights.empty())
      if (mwrt_status st = session->loadWeights(o.weights, &fresh))
        return failed(st);
    if (!o.inputs.empty())
      if (mwrt_status st = session->loadInputs(o.inputs))
        return failed(st);
    // What no file gave: the defaults, outside the first step's time.
    if (mwrt_status st = session->initializeRest())
      return failed(st);
    return MWRT_OK;
  }();
  // Plan, session, files and defaults: what --weights saves is here.
  const double loadMs = std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - loadStart)
                            .count();
  if (multi) {
    const mwrt_status local = loaded;
    const std::string mine = error;
    loaded = agreeAcrossRanks(loaded, error);
    if (loaded != MWRT_OK) {
      // Each rank says it stops: the ones that failed why, the others
      // because of which rank ("rank R: why").
      std::fprintf(stderr, "mw-run: %serror: %s%s\n", rankPrefix().c_str(),
                   local != MWRT_OK ? "" : "stopping because of ",
                   (local != MWRT_OK ? mine : error).c_str());
      return 1;
    }
  } else if (loaded != MWRT_OK) {
    return fail(error);
  }
  if (!fresh.empty() && printer)
    std::fprintf(stderr,
                 "mw-run: note: %s holds no optimizer state for %zu "
                 "tensor%s (first: '%s'); they start fresh\n",
                 o.weights.c_str(), fresh.size(), fresh.size() == 1 ? "" : "s",
                 fresh.front().c_str());

  bool blas = !o.referenceMatmul && cpuMatmulUsesBlas();
  std::string matmulText = matmulDescription(blas);
  const char *matmul = matmulText.c_str();
  bool hasLoss = plan->lossResult() >= 0;
  if (!o.json && printer)
    std::printf("mw-run: %s (function %s) on %s%s: %llu step%s, seed %llu, "
                "matmul %s\n",
                o.plan.c_str(),
                plan->function().empty() ? "?" : plan->function().c_str(),
                o.device.c_str(),
                group.engine != "single-process"
                    ? (", " + std::to_string(group.size) + " rank" +
                       (group.size == 1 ? "" : "s") + " (" + group.engine + ")")
                          .c_str()
                    : "",
                static_cast<unsigned long long>(o.steps),
                o.steps == 1 ? "" : "s",
                static_cast<unsigned long long>(o.seed), matmul);

  std::vector<double> losses, times;
  losses.reserve(o.steps);
  times.reserve(o.steps);
  // Offloaded weights: each step's share of the session's counters.
  std::vector<OffloadStats> offloadSteps;
  OffloadStats offloadBefore = session->offloadStats();
  for (uint64_t s = 1; s <= o.steps; ++s) {
    auto start = std::chrono::steady_clock::now();
    mwrt_status status = session->step();
    auto end = std::chrono::steady_clock::now();
    if (status != MWRT_OK) {
      if (!multi)
        return failStatus();
      // Other ranks may wait in a collective this rank will never join:
      // end them all, after saying why.
      fail(mwrt_last_error());
      abortProcessGroup(1);
    }
    double ms = std::chrono::duration<double, std::milli>(end - start).count();
    times.push_back(ms);
    OffloadStats offloadNow = session->offloadStats();
    offloadSteps.push_back(offloadDelta(offloadNow, offloadBefore));
    offloadBefore = offloadNow;
    double loss = 0;
    if (hasLoss && session->loss(loss) == MWRT_OK)
      losses.push_back(loss);
    if (!o.json && printer) {
      // Numbered on from a resumed checkpoint's steps.
      auto number =
          static_cast<unsigned long long>(s + session->resumedSteps());
      if (hasLoss)
        std::printf("step %llu  loss %s  %.3f ms\n", number,
                    formatLoss(loss).c_str(), ms);
      else
        std::printf("step %llu  %.3f ms\n", number, ms);
      std::fflush(stdout);
    }
  }

  if (!o.saveWeights.empty() && session->saveWeights(o.saveWeights) != MWRT_OK)
    return failStatus();
  if (!o.saveOutputs.empty()) {
    // Every result of the last step, under its name (docs/runtime.md).
    SafeTensors outputs;
    for (const ResultDesc &r : plan->results()) {
      TensorData t;
      if (session->readResult(r.name, t) != MWRT_OK)
        return failStatus();
      if (!outputs.add(r.name, std::move(t), error)) {
        std::fprintf(stderr, "mw-run: --save-outputs: %s\n", error.c_str());
        return 1;
      }
    }
    if (!writeSafeTensors(o.saveOutputs, outputs, error)) {
      std::fprintf(stderr, "mw-run: --save-outputs: %s\n", error.c_str());
      return 1;
    }
  }

  SessionStats st = session->stats();
  CommStats comm = session->commStats();
  OffloadStats offload = session->offloadStats();
  bool offloaded = offload.fetches > 0;
  double medianMs = median(times);
  uint64_t rss = maxRssBytes();
  nlohmann::ordered_json memory = {
      {"arena_bytes", st.arenaBytes},
      {"persistent_bytes", st.persistentBytes},
      {"workspace_bytes", st.workspaceBytes},
      {"planned_peak_bytes", st.plannedPeakBytes},
      {"measured_peak_bytes", st.measuredPeakBytes},
      {"arena_lower_bound_bytes", st.lowerBoundBytes},
      {"process_max_rss_bytes", rss},
      {"initialized_bytes", st.initializedBytes},
      {"loaded_bytes", st.loadedBytes},
  };
  if (o.json) {
    nlohmann::ordered_json mine;
    mine["rank"] = group.rank;
    mine["step_times_ms"] = times;
    mine["median_step_ms"] = medianMs;
    mine["memory"] = memory;
    mine["communication"] = commReport(comm);
    std::vector<std::string> all = gatherToRankZero(mine.dump());
    if (!printer)
      return 0;
    nlohmann::ordered_json report;
    report["plan"] = o.plan;
    report["function"] = plan->function();
    report["device"] = o.device;
    report["ranks"] = group.size;
    report["seed"] = o.seed;
    report["steps"] = o.steps;
    report["matmul"] = blas ? "openblas" : "reference";
    if (blas) {
      report["blas_core"] = cpuBlasCore();
      if (std::string detected = blasDetectedCore(); !detected.empty())
        report["blas_core_detected"] = detected;
    }
    report["losses"] = hasLoss ? nlohmann::ordered_json(losses)
                               : nlohmann::ordered_json(nullptr);
    report["step_times_ms"] = times;
    report["median_step_ms"] = medianMs;
    report["load_ms"] = loadMs;
    report["memory"] = memory;
    report["communication"] = commReport(comm);
    report["offload"] =
        offloaded ? offloadReport(offload, offloadSteps, st.hostBytes)
                  : nlohmann::ordered_json(nullptr);
    nlohmann::ordered_json perRank = nlohmann::ordered_json::array();
    for (const std::string &text : all)
      perRank.push_back(nlohmann::ordered_json::parse(text, nullptr, false));
    report["per_rank"] = perRank;
    report["saved_weights"] = o.saveWeights.empty()
                                  ? nlohmann::ordered_json(nullptr)
                                  : nlohmann::ordered_json(o.saveWeights);
    std::printf("%s\n", report.dump(2).c_str());
    return 0;
  }
  if (!printer)
    return 0;
  if (!times.empty())
    std::printf("step time: median %.3f ms over %zu step%s\n", medianMs,
                times.size(), times.size() == 1 ? "" : "s");
  std::printf("memory%s: planned peak %llu B (arena %llu + persistent %llu + "
              "workspace %llu), measured peak %llu B%s\n",
              multi ? " per rank" : "",
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
  if (offloaded)
    printOffload(offload, st.hostBytes);
  if (multi) {
    uint64_t sent = 0;
    for (const CommStats::Kind &k : comm.kinds)
      sent += k.sentBytes;
    std::printf("communication (rank 0): %llu B sent; waited %.3f s on "
                "collectives, engine busy %.3f s\n",
                static_cast<unsigned long long>(sent), comm.waitSeconds,
                comm.commSeconds);
  }
  if (!o.saveWeights.empty())
    std::printf("saved params and optimizer state to %s%s\n",
                o.saveWeights.c_str(),
                multi ? " (a sharded checkpoint)" : "");
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  chooseBlasKernels(argv);
  if (wantsGenerate(argc, argv))
    return generateMain(argc, argv);
  Options o;
  if (int status = parseArgs(argc, argv, o))
    return status < 0 ? 0 : status;
  if (!o.consolidate.empty())
    return consolidateMain(o);

  ProcessGroup group;
  if (joinProcessGroup(o.comm, group) != MWRT_OK)
    return fail("--comm " + o.comm + ": " + mwrt_last_error());
  if (group.size > 1) {
    terminateLength = static_cast<size_t>(std::snprintf(
        terminateLine, sizeof terminateLine,
        "mw-run: rank %d: stopped: the launcher ended the run (another rank "
        "failed)\n",
        group.rank));
    std::signal(SIGTERM, onTerminate);
  }
  int code = run(o);
  leaveProcessGroup();
  return code;
}
