//===- Csv.cpp - MiniMalloc's CSV format for packing instances -----------===//
//
// Reads and writes the CSV that MiniMalloc and idealloc publish their
// benchmarks in (`id,lower,upper,size`, lifetimes [lower, upper)), so that
// mw-pack and bench-planner run on the same files those papers report, and
// the files --mw-plan-export writes, whose ids are buffer names (`%12`,
// `gpt.h0.attn.qkv`): an id is any non-empty text without a comma. The
// reader is strict: every problem is reported with its line number, because
// a silently skipped row would make a plan look better than it is.
//
//===----------------------------------------------------------------------===//

#include "PackerInternal.h"

#include <charconv>
#include <string_view>
#include <unordered_map>

using namespace memwall::planning;
using namespace memwall::planning::detail;

static std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

static std::vector<std::string_view> splitFields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t pos = 0;
  while (true) {
    size_t comma = line.find(',', pos);
    fields.push_back(trim(line.substr(pos, comma - pos)));
    if (comma == std::string_view::npos)
      return fields;
    pos = comma + 1;
  }
}

namespace {
enum Column { Id, Lower, Upper, Size, Offset, NumColumns };
} // namespace

static const char *const kColumnNames[NumColumns] = {"id", "lower", "upper",
                                                     "size", "offset"};

bool memwall::planning::parseBufferCsv(std::string_view text,
                                       BufferTable &table,
                                       std::string &error) {
  table = BufferTable();
  int columnOf[NumColumns] = {-1, -1, -1, -1, -1};
  size_t numFields = 0;
  bool sawHeader = false;
  uint64_t total = 0;
  // Keys view into `text`, which outlives the parse.
  std::unordered_map<std::string_view, size_t> lineOfId;
  size_t lineNo = 0, pos = 0;
  auto fail = [&](const std::string &message) {
    error = "line " + std::to_string(lineNo) + ": " + message;
    table = BufferTable();
    return false;
  };

  while (pos < text.size()) {
    size_t newline = text.find('\n', pos);
    std::string_view line = trim(text.substr(pos, newline - pos));
    pos = newline == std::string_view::npos ? text.size() : newline + 1;
    ++lineNo;
    if (line.empty())
      continue;
    std::vector<std::string_view> fields = splitFields(line);

    if (!sawHeader) {
      sawHeader = true;
      numFields = fields.size();
      for (size_t f = 0; f < fields.size(); ++f) {
        int column = -1;
        for (int c = 0; c < NumColumns; ++c)
          if (fields[f] == kColumnNames[c])
            column = c;
        if (column < 0)
          return fail("missing header: expected columns id,lower,upper,size, "
                      "found '" +
                      std::string(fields[f]) + "'");
        if (columnOf[column] >= 0)
          return fail("column '" + std::string(fields[f]) +
                      "' appears twice in the header");
        columnOf[column] = int(f);
      }
      for (int c = 0; c < Offset; ++c)
        if (columnOf[c] < 0)
          return fail(std::string("missing header column '") +
                      kColumnNames[c] + "'");
      continue;
    }

    if (fields.size() != numFields)
      return fail("expected " + std::to_string(numFields) + " fields, got " +
                  std::to_string(fields.size()));
    std::string_view id = fields[columnOf[Id]];
    if (id.empty())
      return fail("empty id");
    int64_t values[NumColumns] = {0, 0, 0, 0, 0};
    for (int c = Lower; c < Offset; ++c) {
      std::string_view field = fields[columnOf[c]];
      const char *first = field.data(), *last = field.data() + field.size();
      auto [ptr, ec] = std::from_chars(first, last, values[c]);
      if (ec == std::errc::result_out_of_range)
        return fail(std::string(kColumnNames[c]) + " '" + std::string(field) +
                    "' is out of range");
      if (ec != std::errc() || ptr != last || field.empty())
        return fail(std::string(kColumnNames[c]) + " '" + std::string(field) +
                    "' is not an integer");
    }
    if (values[Size] < 0)
      return fail("negative size " + std::to_string(values[Size]));
    if (values[Upper] <= values[Lower])
      return fail("upper " + std::to_string(values[Upper]) + " <= lower " +
                  std::to_string(values[Lower]) +
                  " (lifetimes are [lower, upper))");
    auto [it, inserted] = lineOfId.emplace(id, lineNo);
    if (!inserted)
      return fail("duplicate id " + std::string(id) + " (first on line " +
                  std::to_string(it->second) + ")");
    if (uint64_t(values[Size]) > kMaxTotalBytes - total)
      return fail("sizes sum past 2^62 bytes");
    total += uint64_t(values[Size]);
    table.ids.emplace_back(id);
    table.buffers.push_back(
        {uint64_t(values[Size]), values[Lower], values[Upper]});
  }
  if (!sawHeader) {
    lineNo = 1;
    return fail("missing header: expected columns id,lower,upper,size");
  }
  return true;
}

std::string
memwall::planning::formatBufferCsv(const BufferTable &table,
                                   const std::vector<uint64_t> &offsets) {
  std::string out = "id,lower,upper,size,offset\n";
  for (size_t i = 0; i < table.buffers.size(); ++i) {
    const PackBuffer &b = table.buffers[i];
    out += table.ids[i] + ',' + std::to_string(b.start) + ',' +
           std::to_string(b.end) + ',' + std::to_string(b.size) + ',' +
           std::to_string(i < offsets.size() ? offsets[i] : 0) + '\n';
  }
  return out;
}
