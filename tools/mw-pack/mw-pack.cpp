//===- mw-pack.cpp - Packs a CSV of buffers into one arena -----------------===//
//
// The packer (lib/Planning) on the command line, on the CSV format MiniMalloc
// and idealloc publish their benchmarks in and --mw-plan-export writes, so
// any strategy can be run and compared on those files without the compiler.
// Plain C++ with no MLIR, like the library. Output files are written
// atomically (temporary file, then rename), so a failed run never leaves a
// partial or stale plan behind.
//
//===----------------------------------------------------------------------===//

#include "memwall/Planning/Packer.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <unistd.h>

using namespace memwall::planning;

static const char *const kUsage =
    "usage: mw-pack [--strategy S] [--time-limit SEC] [--alignment A] "
    "IN.csv [-o OUT.csv]\n";

static void printHelp() {
  std::printf("%s", kUsage);
  std::printf(
      "\n"
      "Assigns every buffer of IN.csv an offset in one arena so that buffers\n"
      "live at the same time never share bytes, minimizing the arena.\n"
      "IN.csv is MiniMalloc's format: a header naming id,lower,upper,size\n"
      "(lifetimes are [lower, upper)), then one row per buffer. An id is any\n"
      "text without a comma (numbers, or buffer names as --mw-plan-export\n"
      "writes them); it is trimmed of blanks and written back verbatim.\n"
      "\n"
      "Prints one line:\n"
      "  buffers=N lower_bound=L arena=A ratio=R time_ms=T [optimal=yes|no]\n"
      "where L is the most bytes live at one time (no arena is smaller),\n"
      "R = A/L, and optimal= appears for --strategy exact.\n"
      "\n"
      "Options:\n"
      "  --strategy S      how offsets are chosen (default best):\n"
      "                      naive           no reuse: prefix sums\n"
      "                      greedy-size     TFLite's ArenaPlanner (greedy by\n"
      "                                      size, best fit)\n"
      "                      greedy-breadth  TFLite greedy by breadth\n"
      "                      best-fit-size   XLA heap simulator, spatial\n"
      "                      best-fit-time   XLA heap simulator, temporal\n"
      "                      best            portfolio of the above + bounded\n"
      "                                      search + local search; never\n"
      "                                      worse than a baseline;\n"
      "                                      deterministic\n"
      "                      exact           branch and bound over canonical\n"
      "                                      solutions under --time-limit\n"
      "  --time-limit SEC  exact: its wall-clock limit (default 10); best: how\n"
      "                    long its search and local search may work, counted\n"
      "                    in work units (about SEC seconds on a 2-core\n"
      "                    machine; plans stay deterministic). Without it\n"
      "                    best uses built-in budgets (well under a second at\n"
      "                    60k buffers)\n"
      "  --alignment A     offsets are multiples of A and sizes round up to A\n"
      "                    (default 1 here, because benchmark sizes are\n"
      "                    already multiples of their granularity and their\n"
      "                    published capacities assume no padding; the\n"
      "                    library's default, which the compiler uses, is "
      "256)\n"
      "  -o OUT.csv        write id,lower,upper,size,offset in input order;\n"
      "                    '-' writes to stdout (the summary then goes to\n"
      "                    stderr)\n"
      "  --help            print this help\n"
      "\n"
      "Exit status: 0 on success, 1 on bad input, 2 on bad usage.\n");
}

static int usageError(const std::string &message) {
  std::fprintf(stderr, "mw-pack: %s\n%s", message.c_str(), kUsage);
  return 2;
}

static int inputError(const std::string &message) {
  std::fprintf(stderr, "mw-pack: %s\n", message.c_str());
  return 1;
}

/// Parses a whole decimal (no sign, no trailing junk).
static bool parseUnsigned(const std::string &text, uint64_t &value) {
  if (text.empty() || text.size() > 19 ||
      text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  value = std::strtoull(text.c_str(), nullptr, 10);
  return true;
}

static bool parseSeconds(const std::string &text, double &value) {
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  value = std::strtod(text.c_str(), &end);
  return errno == 0 && end && *end == '\0' && value >= 0 && value < 1e9;
}

/// Writes `contents` to `path` via a temporary file in the same directory
/// and a rename, so readers see either the old file or the whole new one.
static bool writeAtomically(const std::string &path,
                            const std::string &contents, std::string &error) {
  std::string temp = path + ".tmp." + std::to_string(getpid());
  FILE *file = std::fopen(temp.c_str(), "wb");
  if (!file) {
    error = "cannot write '" + temp + "': " + std::strerror(errno);
    return false;
  }
  bool ok = std::fwrite(contents.data(), 1, contents.size(), file) ==
            contents.size();
  ok = (std::fclose(file) == 0) && ok;
  if (!ok) {
    error = "cannot write '" + temp + "': " + std::strerror(errno);
    std::remove(temp.c_str());
    return false;
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    error = "cannot rename '" + temp + "' to '" + path +
            "': " + std::strerror(errno);
    std::remove(temp.c_str());
    return false;
  }
  return true;
}

int main(int argc, char **argv) {
  PackOptions options;
  options.alignment = 1;
  std::string input, output;
  bool haveInput = false, haveOutput = false;

  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool hasInlineValue = false;
    if (arg.rfind("--", 0) == 0) {
      size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
        hasInlineValue = true;
      }
    }
    auto takeValue = [&](std::string &out) {
      if (hasInlineValue) {
        out = value;
        return true;
      }
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };

    if (arg == "--help" || arg == "-h") {
      printHelp();
      return 0;
    }
    if (arg == "--strategy") {
      std::string name;
      if (!takeValue(name))
        return usageError("--strategy needs a value");
      std::optional<PackStrategy> strategy = parseStrategy(name);
      if (!strategy)
        return usageError("unknown strategy '" + name + "'");
      options.strategy = *strategy;
      continue;
    }
    if (arg == "--time-limit") {
      std::string text;
      if (!takeValue(text) || !parseSeconds(text, options.timeLimitSeconds))
        return usageError("--time-limit needs a number of seconds");
      options.effortSeconds = options.timeLimitSeconds;
      continue;
    }
    if (arg == "--alignment") {
      std::string text;
      if (!takeValue(text) || !parseUnsigned(text, options.alignment) ||
          options.alignment == 0)
        return usageError("--alignment needs a positive integer");
      continue;
    }
    if (arg == "-o") {
      if (haveOutput)
        return usageError("-o given twice");
      if (!takeValue(output))
        return usageError("-o needs a file name");
      haveOutput = true;
      continue;
    }
    if (arg.size() > 1 && arg[0] == '-')
      return usageError("unknown option '" + arg + "'");
    if (haveInput)
      return usageError("more than one input file");
    input = arg;
    haveInput = true;
  }
  if (!haveInput)
    return usageError("no input file");

  std::ifstream stream(input, std::ios::binary);
  if (!stream)
    return inputError("cannot open '" + input + "': " + std::strerror(errno));
  std::stringstream text;
  text << stream.rdbuf();

  BufferTable table;
  std::string error;
  if (!parseBufferCsv(text.str(), table, error))
    return inputError(input + ": " + error);

  PackResult result = packBuffers(table.buffers, options);
  if (!result.succeeded())
    return inputError(input + ": " + result.error);
  std::string invalid =
      verifyPacking(table.buffers, result.offsets, options.alignment);
  if (!invalid.empty()) {
    std::fprintf(stderr, "mw-pack: internal error: invalid packing: %s\n",
                 invalid.c_str());
    return 3;
  }

  bool csvToStdout = haveOutput && output == "-";
  if (haveOutput && !csvToStdout &&
      !writeAtomically(output, formatBufferCsv(table, result.offsets), error))
    return inputError(error);

  double ratio = result.lowerBound == 0
                     ? 1.0
                     : double(result.arenaSize) / double(result.lowerBound);
  char summary[256];
  std::snprintf(summary, sizeof(summary),
                "buffers=%zu lower_bound=%llu arena=%llu ratio=%.4f "
                "time_ms=%.2f",
                table.buffers.size(), (unsigned long long)result.lowerBound,
                (unsigned long long)result.arenaSize, ratio, result.timeMs);
  std::string line = summary;
  if (options.strategy == PackStrategy::Exact)
    line += result.provenOptimal ? " optimal=yes" : " optimal=no";
  if (csvToStdout) {
    std::string csv = formatBufferCsv(table, result.offsets);
    std::fwrite(csv.data(), 1, csv.size(), stdout);
    // The summary follows the plan even when both streams share a pipe.
    std::fflush(stdout);
    std::fprintf(stderr, "%s\n", line.c_str());
  } else {
    std::printf("%s\n", line.c_str());
  }
  return 0;
}
