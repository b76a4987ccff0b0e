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

/// xorshift64: the benchmark's instances are the same on every machine.
struct XorShift {
  uint64_t state;
  uint64_t operator()() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
};

/// A synthetic step: two new buffers per op, most short-lived, some living
/// tens of ops, a few hundreds (skip connections, saved activations), sizes
/// spread over 256 B .. 4 MiB. Deterministic for a given n.
std::vector<PackBuffer> synthetic(size_t n) {
  XorShift next{0x9E3779B97F4A7C15ull ^ n};
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

/// The shape of a structured trace: a training step of `layers` blocks run
/// over `microBatches` micro-batches (gradient accumulation), then an
/// optimizer. Each forward op writes a short-lived temporary; some also save
/// an activation that lives until an op of the same block's backward (so the
/// saved activations nest, last in first out, and all of them are live at
/// the turn); each backward op writes a temporary, and each block writes
/// parameter gradients that are added into accumulators living from the
/// first micro-batch's backward to the optimizer (long-lived buffers beside
/// many short ones). Sizes come from one model's tensor shapes, so many are
/// equal, and range from bytes (norm statistics, scalars) to a quarter of a
/// GiB (attention scores).
struct TraceShape {
  int layers = 64;
  int microBatches = 1;
  int forwardOps = 16;         // per block
  int backwardOps = 24;        // per block
  int savedPerBlock = 24;      // activations kept for backward
  int gradsPerBlock = 8;       // parameter gradients (and accumulators)
  int smallPercent = 20;       // temporaries of 4 B .. 4 KiB
  int oddPercent = 30;         // activations of odd shapes
  int checkpointEvery = 2;     // every k-th block saves only its input and
                               // recomputes its activations in backward
  uint64_t hidden = 4096, seq = 2048, batch = 4, heads = 32, vocab = 32000;
  uint64_t dtypeBytes = 2;
};

/// Sets one TraceShape field from "key=value"; false if there is no such
/// key or the value is not a number.
bool setTraceField(TraceShape &shape, const std::string &item) {
  size_t eq = item.find('=');
  if (eq == std::string::npos)
    return false;
  std::string key = item.substr(0, eq), text = item.substr(eq + 1);
  char *end = nullptr;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0')
    return false;
  struct Field {
    const char *name;
    int *i;
    uint64_t *u;
  };
  const Field fields[] = {
      {"layers", &shape.layers, nullptr},
      {"forward-ops", &shape.forwardOps, nullptr},
      {"backward-ops", &shape.backwardOps, nullptr},
      {"saved", &shape.savedPerBlock, nullptr},
      {"grads", &shape.gradsPerBlock, nullptr},
      {"small-percent", &shape.smallPercent, nullptr},
      {"odd-percent", &shape.oddPercent, nullptr},
      {"checkpoint-every", &shape.checkpointEvery, nullptr},
      {"hidden", nullptr, &shape.hidden},
      {"seq", nullptr, &shape.seq},
      {"batch", nullptr, &shape.batch},
      {"heads", nullptr, &shape.heads},
      {"vocab", nullptr, &shape.vocab},
      {"dtype-bytes", nullptr, &shape.dtypeBytes},
  };
  for (const Field &field : fields) {
    if (key != field.name)
      continue;
    if (field.i) {
      if (value > 1000000)
        return false;
      *field.i = int(value);
    } else {
      if (value == 0)
        return false;
      *field.u = value;
    }
    return shape.layers > 0 && shape.forwardOps > 0 && shape.backwardOps > 0;
  }
  return false;
}

/// A structured trace of about `n` buffers (`shape` with the micro-batch
/// count chosen to reach n), deterministic for a given n and shape.
std::vector<PackBuffer> structured(size_t n, TraceShape shape) {
  const size_t perMicroBatch =
      size_t(shape.layers) *
      (shape.forwardOps + shape.savedPerBlock + shape.backwardOps +
       shape.gradsPerBlock);
  shape.microBatches = int(std::max<size_t>(1, (n + perMicroBatch / 2) / perMicroBatch));
  XorShift next{0xD1B54A32D192ED03ull ^ n};
  const uint64_t h = shape.hidden, t = shape.seq * shape.batch,
                 b = shape.dtypeBytes;
  const uint64_t scores = shape.batch * shape.heads * shape.seq * shape.seq * b;
  const uint64_t activations[] = {t * h * b,     t * h * b, t * 3 * h * b,
                                  t * 4 * h * b, t * 4 * h * b, scores,
                                  t * 4,         t * h * 4};
  const uint64_t params[] = {h * h * b, h * 3 * h * b, h * 4 * h * b,
                             h * 4 * h * b, h * b, h * 4 * b};
  auto pick = [&](const uint64_t *table, size_t count) {
    return table[next() % count];
  };
  // Activations of the model's shapes, and a share of odd ones (slices,
  // reshapes, padding: t x k x 128 elements for k in 1..64).
  auto activationSize = [&] {
    if (int(next() % 100) < shape.oddPercent)
      return t * (1 + next() % 64) * 128 * b;
    return pick(activations, std::size(activations));
  };
  auto temporarySize = [&] {
    if (int(next() % 100) < shape.smallPercent)
      return uint64_t(4) << (next() % 11); // 4 B .. 4 KiB
    return activationSize();
  };
  auto shortLife = [&] {
    uint64_t kind = next() % 100;
    if (kind < 70)
      return int64_t(1 + next() % 2);
    if (kind < 95)
      return int64_t(2 + next() % 7);
    return int64_t(8 + next() % 57);
  };
  std::vector<PackBuffer> buffers;
  int64_t time = 0;
  std::vector<size_t> accumulators; // ends fixed at the optimizer
  for (int m = 0; m < shape.microBatches; ++m) {
    // saved[l]: the block's saved activations, their ends set in backward.
    std::vector<std::vector<size_t>> saved(size_t(shape.layers));
    for (int l = 0; l < shape.layers; ++l) {
      for (int op = 0; op < shape.forwardOps; ++op, ++time) {
        buffers.push_back({temporarySize(), time, time + shortLife()});
        // savedPerBlock spread over the block's ops; a checkpointed block
        // saves only its input.
        const bool checkpointed = shape.checkpointEvery > 0 &&
                                  l % shape.checkpointEvery == 0;
        int count = checkpointed ? (op == 0)
                                 : shape.savedPerBlock / shape.forwardOps +
                                       (op < shape.savedPerBlock % shape.forwardOps);
        for (int k = 0; k < count; ++k) {
          saved[l].push_back(buffers.size());
          buffers.push_back({activationSize(), time, 0});
        }
      }
    }
    // The loss: f32 logits and their gradient, the largest buffers.
    const int64_t logitsStart = time++;
    buffers.push_back({t * shape.vocab * 4, logitsStart, time + 2});
    buffers.push_back({t * shape.vocab * 4, time, time + 3});
    time += 2;
    for (int l = shape.layers - 1; l >= 0; --l) {
      const int64_t blockStart = time;
      // A checkpointed block first recomputes its forward: its activations
      // live from there to an op of its backward.
      if (shape.checkpointEvery > 0 && l % shape.checkpointEvery == 0)
        for (int k = 0; k < shape.savedPerBlock; ++k) {
          int64_t at = blockStart + k * shape.forwardOps / shape.savedPerBlock;
          buffers.push_back({activationSize(), at,
                             at + 1 + int64_t(next() % uint64_t(shape.backwardOps))});
        }
      for (int op = 0; op < shape.backwardOps; ++op, ++time)
        buffers.push_back({temporarySize(), time, time + shortLife()});
      for (size_t index : saved[l])
        buffers[index].end =
            blockStart + 1 + int64_t(next() % uint64_t(shape.backwardOps));
      for (int g = 0; g < shape.gradsPerBlock; ++g) {
        uint64_t size = params[size_t(g) % std::size(params)];
        int64_t at = blockStart + int64_t(next() % uint64_t(shape.backwardOps));
        if (m == 0) {
          accumulators.push_back(buffers.size());
          buffers.push_back({size, at, 0});
        } else {
          buffers.push_back({size, at, at + 1 + int64_t(next() % 3)});
        }
      }
    }
  }
  // The optimizer: per accumulator a step with two temporaries, then the
  // accumulator dies.
  for (size_t index : accumulators) {
    buffers.push_back({buffers[index].size, time, time + 2});
    buffers.push_back({uint64_t(4) << (next() % 8), time, time + 1});
    buffers[index].end = time + 1;
    ++time;
  }
  return buffers;
}

/// The most buffers live at one time.
size_t maxLive(const std::vector<PackBuffer> &buffers) {
  std::vector<std::pair<int64_t, int>> events;
  for (const PackBuffer &b : buffers) {
    events.push_back({b.start, 1});
    events.push_back({b.end, -1});
  }
  std::sort(events.begin(), events.end()); // ends (-1) first at a time
  size_t live = 0, most = 0;
  for (const auto &event : events) {
    live += event.second;
    most = std::max(most, live);
  }
  return most;
}

/// Writes `buffers` as a MiniMalloc CSV (ids 0..n-1).
bool writeTrace(const std::vector<PackBuffer> &buffers, const char *path) {
  std::ofstream out(path, std::ios::binary);
  out << "id,lower,upper,size\n";
  for (size_t i = 0; i < buffers.size(); ++i)
    out << i << ',' << buffers[i].start << ',' << buffers[i].end << ','
        << buffers[i].size << '\n';
  out.close();
  if (!out) {
    std::fprintf(stderr, "bench-planner: cannot write '%s'\n", path);
    return false;
  }
  std::fprintf(stderr, "bench-planner: wrote %zu buffers to %s\n",
               buffers.size(), path);
  return true;
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
      "                     [--structured N,N,...] [--no-structured]\n"
      "                     [--trace KEY=VALUE,...]\n"
      "       bench-planner [--trace KEY=VALUE,...] --write-trace N FILE\n"
      "DATA_DIR defaults to <repo>/../shared/bench-data (minimalloc/*.csv,\n"
      "idealloc/*.csv). --extra adds a MiniMalloc CSV (ids may be names, as\n"
      "--mw-plan-export writes them), or every *.csv in a directory, to the\n"
      "real graphs: each is planned with every strategy and counted in the\n"
      "tables and their geometric means. Times are medians of N runs\n"
      "(default 5). --structured times every strategy but naive and exact\n"
      "on structured traces of about N buffers (a training step's shape:\n"
      "see TraceShape in bench-planner.cpp; default 10000,60000,250000,\n"
      "1000000); --write-trace N FILE writes such a trace as a CSV.\n"
      "--trace sets the trace's shape (before --write-trace): layers,\n"
      "forward-ops, backward-ops, saved, grads (per block), small-percent,\n"
      "odd-percent, checkpoint-every (0: none), hidden, seq, batch, heads,\n"
      "vocab, dtype-bytes.\n");
}

} // namespace

int main(int argc, char **argv) {
  std::string dataDir = std::string(MW_SOURCE_DIR) + "/../shared/bench-data";
  int runs = 5;
  double exactLimit = 10.0;
  bool doSweep = true, doInstances = true;
  std::vector<size_t> sweep = {1000, 10000, 62000, 100000, 1000000};
  std::vector<size_t> structuredSizes = {10000, 60000, 250000, 1000000};
  bool doStructured = true, customTrace = false;
  TraceShape traceShape;
  std::vector<std::string> extras;
  auto parseSizes = [](const char *text) {
    std::vector<size_t> sizes;
    std::stringstream list(text);
    std::string item;
    while (std::getline(list, item, ','))
      sizes.push_back(size_t(std::strtoull(item.c_str(), nullptr, 10)));
    return sizes;
  };
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
      sweep = parseSizes(argv[++i]);
    } else if (arg == "--structured" && i + 1 < argc) {
      structuredSizes = parseSizes(argv[++i]);
    } else if (arg == "--no-structured") {
      doStructured = false;
    } else if (arg == "--write-trace" && i + 2 < argc) {
      size_t n = size_t(std::strtoull(argv[i + 1], nullptr, 10));
      return writeTrace(structured(n, traceShape), argv[i + 2]) ? 0 : 1;
    } else if (arg == "--trace" && i + 1 < argc) {
      customTrace = true;
      std::stringstream list(argv[++i]);
      std::string item;
      while (std::getline(list, item, ','))
        if (!setTraceField(traceShape, item)) {
          std::fprintf(stderr, "bench-planner: bad --trace item '%s'\n",
                       item.c_str());
          return 2;
        }
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

  if (doStructured && !structuredSizes.empty()) {
    // Two shapes unless --trace gave one: a step saving every other block's
    // activations, and a checkpointed one that recomputes every block.
    std::vector<std::pair<std::string, TraceShape>> shapes;
    if (customTrace) {
      shapes.push_back({"custom", traceShape});
    } else {
      shapes.push_back({"step", TraceShape()});
      TraceShape remat;
      for (const char *item :
           {"checkpoint-every=1", "backward-ops=12", "saved=40"})
        setTraceField(remat, item);
      shapes.push_back({"remat", remat});
    }
    std::printf("\nStructured traces (bench-planner --write-trace N FILE "
                "writes one; alignment 256): arena / lower bound, and time\n\n");
    std::printf("| shape  | buffers | max live |");
    for (PackStrategy strategy : strategies)
      if (strategy != PackStrategy::Exact && strategy != PackStrategy::Naive)
        std::printf(" %14s |", getStrategyName(strategy));
    std::printf(" greedy-size ms | best ms | best CPU ms |\n");
    std::printf("|--------|--------:|---------:|");
    for (size_t k = 0; k + 2 < strategies.size(); ++k)
      std::printf("---------------:|");
    std::printf("---------------:|--------:|------------:|\n");
    for (const auto &[shapeName, shape] : shapes) {
      for (size_t n : structuredSizes) {
        std::vector<PackBuffer> buffers = structured(n, shape);
        std::fprintf(stderr, "bench-planner: %s trace %zu (%zu buffers)\n",
                     shapeName.c_str(), n, buffers.size());
        int structuredRuns = buffers.size() >= 500000 ? 1 : runs;
        uint64_t lb = computeLowerBound(buffers, 256);
        std::printf("| %-6s | %7zu | %8zu |", shapeName.c_str(),
                    buffers.size(), maxLive(buffers));
        Cell best, greedy;
        for (PackStrategy strategy : strategies) {
          if (strategy == PackStrategy::Exact ||
              strategy == PackStrategy::Naive)
            continue;
          Cell cell = measure(buffers, strategy, 256, structuredRuns, 0);
          if (strategy == PackStrategy::Best)
            best = cell;
          if (strategy == PackStrategy::GreedySize)
            greedy = cell;
          std::printf(" %14.4f |", double(cell.arena) / double(lb));
        }
        std::printf(" %14.1f | %7.1f | %11.1f |\n", greedy.medianMs,
                    best.medianMs, best.medianCpuMs);
        std::fflush(stdout);
      }
    }
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
