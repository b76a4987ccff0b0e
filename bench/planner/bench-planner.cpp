//===- bench-planner.cpp - Packer strategies side by side ------------------===//
//
// Runs every packer strategy on every instance of the shared benchmark data
// (MiniMalloc's A-K at their published capacity 1048576, idealloc's real
// graphs) and on any extra CSVs named with --extra (real graphs too, e.g.
// --mw-plan-export files of model training steps) in one run and prints,
// per instance, the arena as a ratio to the lower bound (and to 1048576 for
// A-K) and the median planning time, with geometric means; then times
// `best` on synthetic instances of growing size to show how it scales.
// Every plan is checked with verifyPacking before it is counted. A
// benchmark, not a test: it asserts nothing about time.
//
//===----------------------------------------------------------------------===//

#include "memwall/Planning/Packer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace memwall::planning;

#ifndef MW_SOURCE_DIR
#define MW_SOURCE_DIR "."
#endif

namespace {

struct Instance {
  std::string name;
  std::vector<PackBuffer> buffers;
  /// MiniMalloc instances: their published capacity; 0 otherwise.
  uint64_t capacity = 0;
};

struct Cell {
  uint64_t arena = 0;
  double medianMs = 0;
  /// Process CPU time of the median run: on a shared machine wall time
  /// also counts waiting for a core.
  double medianCpuMs = 0;
  bool optimal = false;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

bool loadCsv(const std::string &path, std::vector<PackBuffer> &buffers) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream)
    return false;
  std::stringstream text;
  text << stream.rdbuf();
  BufferTable table;
  std::string error;
  if (!parseBufferCsv(text.str(), table, error)) {
    std::fprintf(stderr, "bench-planner: %s: %s\n", path.c_str(),
                 error.c_str());
    return false;
  }
  buffers = std::move(table.buffers);
  return true;
}

/// Runs `strategy` `runs` times (once when a run takes over a second, so
/// `exact` at its limit does not dominate the benchmark) and checks each
/// plan.
Cell measure(const std::vector<PackBuffer> &buffers, PackStrategy strategy,
             uint64_t alignment, int runs, double exactLimit) {
  PackOptions options;
  options.strategy = strategy;
  options.alignment = alignment;
  options.timeLimitSeconds = exactLimit;
  std::vector<double> times, cpuTimes;
  Cell cell;
  for (int run = 0; run < runs; ++run) {
    std::clock_t cpuStart = std::clock();
    PackResult result = packBuffers(buffers, options);
    cpuTimes.push_back(double(std::clock() - cpuStart) * 1000.0 /
                       CLOCKS_PER_SEC);
    if (!result.succeeded()) {
      std::fprintf(stderr, "bench-planner: %s failed: %s\n",
                   getStrategyName(strategy), result.error.c_str());
      std::exit(1);
    }
    std::string invalid = verifyPacking(buffers, result.offsets, alignment);
    if (!invalid.empty()) {
      std::fprintf(stderr, "bench-planner: %s made an invalid plan: %s\n",
                   getStrategyName(strategy), invalid.c_str());
      std::exit(1);
    }
    if (run == 0 || result.arenaSize < cell.arena) {
      cell.arena = result.arenaSize;
      cell.optimal = result.provenOptimal;
    }
    times.push_back(result.timeMs);
    if (result.timeMs > 1000)
      break;
  }
  cell.medianMs = median(times);
  cell.medianCpuMs = median(cpuTimes);
  return cell;
}

/// A synthetic step: two new buffers per op, most short-lived, some living
/// tens of ops, a few hundreds (skip connections, saved activations), sizes
/// spread over 256 B .. 4 MiB. Deterministic for a given n.
std::vector<PackBuffer> synthetic(size_t n) {
  uint64_t state = 0x9E3779B97F4A7C15ull ^ n;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  std::vector<PackBuffer> buffers(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t start = int64_t(i / 2);
    uint64_t kind = next() % 100;
    int64_t length;
    if (kind < 70) {
      length = 1;
      while (next() % 3 != 0)
        ++length;
    } else if (kind < 97) {
      length = 1 + int64_t(next() % 32);
    } else {
      length = 1 + int64_t(next() % 512);
    }
    uint64_t size = (uint64_t(256) << (next() % 14)) + (next() % 256) * 256;
    buffers[i] = {size, start, start + length};
  }
  return buffers;
}

/// Adds the instances --extra names: `path` itself when it is a file, else
/// every *.csv directly in it, by file name. Each is named after its file
/// (without .csv) and counted as a real graph (no published capacity).
bool addExtra(const std::string &path, std::vector<Instance> &instances) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> files;
  if (fs::is_directory(path, ec)) {
    for (const fs::directory_entry &entry : fs::directory_iterator(path, ec))
      if (entry.path().extension() == ".csv" && !entry.is_directory())
        files.push_back(entry.path());
    if (ec) {
      std::fprintf(stderr, "bench-planner: cannot list '%s': %s\n",
                   path.c_str(), ec.message().c_str());
      return false;
    }
    std::sort(files.begin(), files.end());
    if (files.empty())
      std::fprintf(stderr, "bench-planner: warning: no *.csv in '%s'\n",
                   path.c_str());
  } else {
    files.push_back(path);
  }
  for (const fs::path &file : files) {
    Instance inst;
    inst.name = file.stem().string();
    if (!loadCsv(file.string(), inst.buffers)) {
      std::fprintf(stderr, "bench-planner: cannot read '%s'\n",
                   file.string().c_str());
      return false;
    }
    instances.push_back(std::move(inst));
  }
  return true;
}

void printUsage() {
  std::printf(
      "usage: bench-planner [DATA_DIR] [--extra PATH]... [--runs N]\n"
      "                     [--exact-limit SEC] [--sweep N,N,...]\n"
      "                     [--no-sweep] [--no-instances]\n"
      "DATA_DIR defaults to <repo>/../shared/bench-data (minimalloc/*.csv,\n"
      "idealloc/*.csv). --extra adds a MiniMalloc CSV (ids may be names, as\n"
      "--mw-plan-export writes them), or every *.csv in a directory, to the\n"
      "real graphs: each is planned with every strategy and counted in the\n"
      "tables and their geometric means. Times are medians of N runs\n"
      "(default 5).\n");
}

} // namespace

int main(int argc, char **argv) {
  std::string dataDir = std::string(MW_SOURCE_DIR) + "/../shared/bench-data";
  int runs = 5;
  double exactLimit = 10.0;
  bool doSweep = true, doInstances = true;
  std::vector<size_t> sweep = {1000, 10000, 62000, 100000, 1000000};
  std::vector<std::string> extras;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      printUsage();
      return 0;
    }
    if (arg == "--runs" && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--exact-limit" && i + 1 < argc) {
      exactLimit = std::atof(argv[++i]);
    } else if (arg == "--sweep" && i + 1 < argc) {
      sweep.clear();
      std::stringstream list(argv[++i]);
      std::string item;
      while (std::getline(list, item, ','))
        sweep.push_back(size_t(std::strtoull(item.c_str(), nullptr, 10)));
    } else if (arg == "--extra" && i + 1 < argc) {
      extras.push_back(argv[++i]);
    } else if (arg == "--no-sweep") {
      doSweep = false;
    } else if (arg == "--no-instances") {
      doInstances = false;
    } else if (!arg.empty() && arg[0] != '-') {
      dataDir = arg;
    } else {
      printUsage();
      return 2;
    }
  }

  const std::vector<PackStrategy> &strategies = getAllStrategies();
  if (doInstances) {
    std::vector<Instance> instances;
    for (char letter = 'A'; letter <= 'K'; ++letter) {
      Instance inst;
      inst.name = std::string(1, letter);
      inst.capacity = 1048576;
      if (loadCsv(dataDir + "/minimalloc/" + inst.name + ".1048576.csv",
                  inst.buffers))
        instances.push_back(std::move(inst));
    }
    for (const char *name : {"resnet50", "G_1"}) {
      Instance inst;
      inst.name = name;
      if (loadCsv(dataDir + "/idealloc/" + std::string(name) + ".csv",
                  inst.buffers))
        instances.push_back(std::move(inst));
    }
    for (const std::string &extra : extras)
      if (!addExtra(extra, instances))
        return 1;
    if (instances.empty()) {
      std::fprintf(stderr, "bench-planner: no instances under '%s'\n",
                   dataDir.c_str());
      return 1;
    }

    // cells[instance][strategy]
    std::vector<std::vector<Cell>> cells;
    std::vector<uint64_t> lowerBounds;
    for (const Instance &inst : instances) {
      std::fprintf(stderr, "bench-planner: %s (%zu buffers)\n",
                   inst.name.c_str(), inst.buffers.size());
      lowerBounds.push_back(computeLowerBound(inst.buffers, 1));
      std::vector<Cell> row;
      for (PackStrategy strategy : strategies)
        row.push_back(measure(inst.buffers, strategy, 1, runs, exactLimit));
      cells.push_back(std::move(row));
    }

    // Extra instances may have long names and large lower bounds.
    int nameWidth = 9, lbWidth = 10;
    for (size_t i = 0; i < instances.size(); ++i) {
      nameWidth = std::max(nameWidth, int(instances[i].name.size()));
      lbWidth = std::max(lbWidth, int(std::to_string(lowerBounds[i]).size()));
    }
    auto header = [&](const char *first) {
      std::printf("| %-*s | buffers | %*s |", nameWidth, first, lbWidth, "LB");
      for (PackStrategy strategy : strategies)
        std::printf(" %14s |", getStrategyName(strategy));
      std::printf("\n|%s|--------:|%s:|",
                  std::string(nameWidth + 2, '-').c_str(),
                  std::string(lbWidth + 1, '-').c_str());
      for (size_t s = 0; s < strategies.size(); ++s)
        std::printf("---------------:|");
      std::printf("\n");
    };
    auto table = [&](const char *title, auto value, bool onlyCapacity,
                     const char *format) {
      std::printf("\n%s\n\n", title);
      header("instance");
      std::vector<double> logSumAK(strategies.size(), 0),
          logSumReal(strategies.size(), 0);
      int countAK = 0, countReal = 0;
      for (size_t i = 0; i < instances.size(); ++i) {
        if (onlyCapacity && instances[i].capacity == 0)
          continue;
        std::printf("| %-*s | %7zu | %*llu |", nameWidth,
                    instances[i].name.c_str(), instances[i].buffers.size(),
                    lbWidth, (unsigned long long)lowerBounds[i]);
        bool real = instances[i].capacity == 0;
        (real ? countReal : countAK) += 1;
        for (size_t s = 0; s < strategies.size(); ++s) {
          double v = value(i, s);
          (real ? logSumReal : logSumAK)[s] += std::log(v);
          std::printf(format, v);
        }
        std::printf("\n");
      }
      auto geomeanRow = [&](const char *label, std::vector<double> &sums,
                            int count) {
        if (count == 0)
          return;
        std::printf("| %-*s | %7s | %*s |", nameWidth, label, "", lbWidth, "");
        for (size_t s = 0; s < strategies.size(); ++s)
          std::printf(format, std::exp(sums[s] / count));
        std::printf("\n");
      };
      geomeanRow("geo A-K", logSumAK, countAK);
      geomeanRow("geo real", logSumReal, countReal);
    };

    table("Arena / lower bound",
          [&](size_t i, size_t s) {
            // Nothing to place (all sizes zero) packs perfectly.
            if (lowerBounds[i] == 0)
              return 1.0;
            return double(cells[i][s].arena) / double(lowerBounds[i]);
          },
          false, " %14.4f |");
    std::printf("\nProven optimal by exact:");
    for (size_t i = 0; i < instances.size(); ++i)
      if (cells[i].back().optimal)
        std::printf(" %s", instances[i].name.c_str());
    std::printf("\n");
    table("Arena / 1048576 (MiniMalloc's published capacity)",
          [&](size_t i, size_t s) {
            return double(cells[i][s].arena) / double(instances[i].capacity);
          },
          true, " %14.4f |");
    table("Plan time, wall ms (median of runs; one run when over 1 s)",
          [&](size_t i, size_t s) {
            return std::max(cells[i][s].medianMs, 1e-3);
          },
          false, " %14.2f |");
    table("Plan time, CPU ms of the process (same runs)",
          [&](size_t i, size_t s) {
            return std::max(cells[i][s].medianCpuMs, 1e-3);
          },
          false, " %14.2f |");
  }

  if (doSweep) {
    std::printf("\nSynthetic sweep (alignment 256), `best` vs greedy-size\n\n");
    std::printf("| buffers | best / LB | greedy-size / LB | best ms | "
                "best CPU ms | greedy-size ms | best CPU ns / (n log2 n) |\n");
    std::printf("|--------:|----------:|-----------------:|--------:|"
                "------------:|---------------:|-------------------------:|\n");
    for (size_t n : sweep) {
      std::fprintf(stderr, "bench-planner: synthetic %zu\n", n);
      std::vector<PackBuffer> buffers = synthetic(n);
      int sweepRuns = n >= 500000 ? 1 : runs;
      uint64_t lb = computeLowerBound(buffers, 256);
      Cell best = measure(buffers, PackStrategy::Best, 256, sweepRuns, 0);
      Cell greedy =
          measure(buffers, PackStrategy::GreedySize, 256, sweepRuns, 0);
      double nlogn = double(n) * std::log2(double(std::max<size_t>(n, 2)));
      std::printf("| %7zu | %9.4f | %16.4f | %7.1f | %11.1f | %14.1f | %24.1f "
                  "|\n",
                  n, double(best.arena) / double(lb),
                  double(greedy.arena) / double(lb), best.medianMs,
                  best.medianCpuMs, greedy.medianMs,
                  best.medianCpuMs * 1e6 / nlogn);
      std::fflush(stdout);
    }
  }
  return 0;
}
