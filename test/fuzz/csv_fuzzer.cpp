//===- csv_fuzzer.cpp - libFuzzer harness of mw-pack's CSV reader and packer -===//
//
// The contract on any bytes: parseBufferCsv rejects them with a message that
// names a line, or reads a table that the packer then packs (greedy-size and
// best, at an alignment the first byte picks; both refuse it with a message
// only when the sizes rounded up to it sum past 2^62 bytes) into plans that
// verifyPacking accepts, with best never above greedy-size; and the CSV
// mw-pack would write reads back as the same buffers. Run by test/fuzz/run-fuzzers.sh under
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
  // The reader caps the sizes' sum at 2^62 bytes, so packing cannot fail at
  // alignment 1; rounded up to a larger alignment the sum may pass the cap
  // (a 2^62 - 2 byte buffer and a 1 byte one at alignment 8), and then both
  // strategies refuse it with a message.
  if (!greedy.succeeded() || !best.succeeded()) {
    unsigned __int128 aligned = 0;
    for (const PackBuffer &b : table.buffers)
      aligned += (static_cast<unsigned __int128>(b.size) + alignment - 1) /
                 alignment * alignment;
    const unsigned __int128 cap = static_cast<unsigned __int128>(1) << 62;
    if (greedy.succeeded() || best.succeeded() || greedy.error.empty() ||
        best.error.empty() || aligned + alignment <= cap)
      std::abort();
    return 0;
  }
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
