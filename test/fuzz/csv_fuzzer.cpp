//===- csv_fuzzer.cpp - libFuzzer harness of mw-pack's CSV reader and packer -===//
//
// The contract on any bytes: parseBufferCsv rejects them with a message that
// names a line, or reads a table that the packer then packs (greedy-size and
// best, at an alignment the first byte picks) into plans that verifyPacking
// accepts, with best never above greedy-size; and the CSV mw-pack would write
// reads back as the same buffers. Run by test/fuzz/run-fuzzers.sh under
// AddressSanitizer and UBSan.
//
//===----------------------------------------------------------------------===//

#include "memwall/Planning/Packer.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

using namespace memwall::planning;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  const uint64_t alignments[] = {1, 8, 256, 3};
  const uint64_t alignment = alignments[data[0] % 4];
  std::string_view text(reinterpret_cast<const char *>(data) + 1, size - 1);
  BufferTable table;
  std::string error;
  if (!parseBufferCsv(text, table, error)) {
    if (error.empty())
      std::abort(); // a rejection always says why
    return 0;
  }
  if (table.ids.size() != table.buffers.size())
    std::abort();
  PackOptions options;
  options.alignment = alignment;
  options.strategy = PackStrategy::GreedySize;
  PackResult greedy = packBuffers(table.buffers, options);
  options.strategy = PackStrategy::Best;
  PackResult best = packBuffers(table.buffers, options);
  // The reader bounds sizes so that packing cannot fail.
  if (!greedy.succeeded() || !best.succeeded())
    std::abort();
  if (!verifyPacking(table.buffers, greedy.offsets, alignment).empty() ||
      !verifyPacking(table.buffers, best.offsets, alignment).empty())
    std::abort();
  if (best.arenaSize > greedy.arenaSize || best.lowerBound > best.arenaSize ||
      best.lowerBound != computeLowerBound(table.buffers, alignment))
    std::abort();
  BufferTable again;
  if (!parseBufferCsv(formatBufferCsv(table, best.offsets), again, error) ||
      again.ids != table.ids || again.buffers.size() != table.buffers.size())
    std::abort();
  for (size_t i = 0; i < again.buffers.size(); ++i)
    if (again.buffers[i].size != table.buffers[i].size ||
        again.buffers[i].start != table.buffers[i].start ||
        again.buffers[i].end != table.buffers[i].end)
      std::abort();
  return 0;
}
