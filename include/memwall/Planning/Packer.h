//===- Packer.h - Static memory packer (no MLIR) ----------------*- C++ -*-===//
//
// The offline packer behind --mw-static-arena (DESIGN.md decision 5): given
// buffers with a size and a half-open lifetime [start, end) over the op order,
// it assigns every buffer an aligned offset in one arena so that buffers live
// at the same time never share bytes, and it minimizes the arena. It is plain
// C++17 with no MLIR or LLVM types so that the bench/ programs, mw-pack and
// other tools can use it alone. Every strategy also reports the lower bound
// (the largest sum of aligned sizes live at one op), so a caller always sees
// how far a plan is from the best possible one. All strategies are
// deterministic except `exact`, whose result can depend on where its time
// limit falls.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_PLANNING_PACKER_H
#define MEMWALL_PLANNING_PACKER_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memwall::planning {

/// One buffer to place: `size` bytes live over the ops [start, end).
struct PackBuffer {
  uint64_t size = 0;
  int64_t start = 0;
  int64_t end = 0;
};

/// How offsets are chosen. The first five are published baselines, kept so
/// that benchmarks compare against them in one run.
enum class PackStrategy {
  /// No reuse: offsets are the prefix sums of the aligned sizes.
  Naive,
  /// TFLite's greedy-by-size: by size descending, each buffer into the
  /// smallest gap that fits among time-overlapping placed buffers.
  GreedySize,
  /// TFLite's greedy-by-breadth: ops by live bytes descending, each op's
  /// buffers by size descending, same best-fit gap placement.
  GreedyBreadth,
  /// XLA's heap simulator, spatial order: size desc, then lifetime desc.
  BestFitSize,
  /// XLA's heap simulator, temporal order: lifetime desc, then size desc.
  BestFitTime,
  /// The default: several greedy orders and placements, then a bounded
  /// canonical search and iterated re-insertion. Never worse than any
  /// baseline above; deterministic (effort is counted, not timed).
  Best,
  /// Branch and bound over canonical solutions (MiniMalloc, ASPLOS 2023)
  /// under a time limit; proves optimality when it finishes.
  Exact,
};

/// The command-line name of `strategy` ("naive", "greedy-size", ...).
const char *getStrategyName(PackStrategy strategy);
/// The strategy named `name`, or nothing if no strategy has that name.
std::optional<PackStrategy> parseStrategy(std::string_view name);
/// Every strategy, baselines first, in the order benchmarks print them.
const std::vector<PackStrategy> &getAllStrategies();

struct PackOptions {
  PackStrategy strategy = PackStrategy::Best;
  /// Every offset is a multiple of this, and every size is rounded up to it
  /// before packing (so the arena is a multiple of it too). 256 matches the
  /// CUDA allocation granularity the runtime's kernels assume.
  uint64_t alignment = 256;
  /// Wall-clock budget of `exact`; the other strategies ignore it.
  double timeLimitSeconds = 10.0;
  /// `best` only: how long its improvement phases (search, re-insertion)
  /// may work, in seconds of the project's 2-core machine. It is converted
  /// to work units (entries visited) at a fixed rate, never timed, so the
  /// plan stays a pure function of the input; 0 (the default) keeps the
  /// built-in budgets, well under a second at 60k buffers. Whatever the
  /// budget, the plan is never worse than the portfolio of baselines.
  double effortSeconds = 0.0;
};

struct PackResult {
  /// Empty on success; otherwise why nothing was packed.
  std::string error;
  /// One offset per input buffer, in input order.
  std::vector<uint64_t> offsets;
  /// max(offset + aligned size); 0 when there is nothing to place.
  uint64_t arenaSize = 0;
  /// max over ops of the sum of aligned sizes live there.
  uint64_t lowerBound = 0;
  /// True when the arena is known to be minimal: it equals the lower bound,
  /// or `exact` exhausted its search.
  bool provenOptimal = false;
  /// `exact` only: its time limit stopped the search before a proof.
  bool timedOut = false;
  /// Wall-clock time of packBuffers, in milliseconds.
  double timeMs = 0;

  bool succeeded() const { return error.empty(); }
};

/// Packs `buffers` with `options.strategy`. Fails (result.error set) when a
/// lifetime is empty (end <= start), the alignment is 0, or the aligned sizes
/// sum past 2^62 bytes.
PackResult packBuffers(const std::vector<PackBuffer> &buffers,
                       const PackOptions &options);

/// The lower bound alone: max over ops of live aligned bytes.
uint64_t computeLowerBound(const std::vector<PackBuffer> &buffers,
                           uint64_t alignment);

/// Checks a packing independently of how it was made: offsets aligned, and no
/// two time-overlapping buffers with overlapping aligned address ranges.
/// Returns an empty string when valid, else the first violation found.
std::string verifyPacking(const std::vector<PackBuffer> &buffers,
                          const std::vector<uint64_t> &offsets,
                          uint64_t alignment);

//===----------------------------------------------------------------------===//
// MiniMalloc's CSV format
//===----------------------------------------------------------------------===//

/// Buffers read from a CSV, with the ids of its `id` column.
struct BufferTable {
  /// As written in the file, less surrounding blanks: MiniMalloc's numbers
  /// ("7") or the buffer names --mw-plan-export writes ("%12",
  /// "gpt.h0.attn.qkv"). Never empty, never holds a comma or a line break.
  std::vector<std::string> ids;
  std::vector<PackBuffer> buffers;
};

/// Parses MiniMalloc's CSV: a header naming the columns id, lower, upper and
/// size (any order; an `offset` column, as mw-pack writes, is accepted and
/// ignored), then one row per buffer with lifetime [lower, upper). An id is
/// any non-empty text (fields are split at commas and trimmed of blanks), so
/// numbers and buffer names both work; the other columns are integers. Blank
/// lines are skipped. On a malformed row, empty or duplicate id, negative
/// size, upper <= lower, non-numeric or out-of-range field, or a total size
/// past 2^62, returns false with `error` naming the line ("line 7: ...").
bool parseBufferCsv(std::string_view text, BufferTable &table,
                    std::string &error);

/// `id,lower,upper,size,offset` rows in table order, header first; ids are
/// written verbatim.
std::string formatBufferCsv(const BufferTable &table,
                            const std::vector<uint64_t> &offsets);

} // namespace memwall::planning

#endif // MEMWALL_PLANNING_PACKER_H
