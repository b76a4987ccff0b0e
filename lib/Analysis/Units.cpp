//===- Units.cpp - Byte sizes in options and reports ----------------------===//
//
// The parser and formatters of Units.h.
//
//===----------------------------------------------------------------------===//

#include "memwall/Analysis/Units.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdlib>
#include <utility>

using namespace mlir;
using namespace mlir::mw;

std::optional<int64_t> mlir::mw::parseByteSize(llvm::StringRef text) {
  text = text.trim();
  size_t split = 0;
  while (split < text.size() &&
         (llvm::isDigit(text[split]) || text[split] == '.'))
    ++split;
  llvm::StringRef number = text.take_front(split);
  llvm::StringRef unit = text.drop_front(split).trim();
  double value;
  if (number.empty() || number.getAsDouble(value) || !(value > 0.0))
    return std::nullopt;
  static const std::pair<llvm::StringRef, double> kUnits[] = {
      {"", 1.0},         {"B", 1.0},          {"KB", 1e3},
      {"MB", 1e6},       {"GB", 1e9},         {"TB", 1e12},
      {"KiB", 1024.0},   {"MiB", 1048576.0},  {"GiB", 1073741824.0},
      {"TiB", 1099511627776.0}};
  for (auto [name, scale] : kUnits) {
    if (!unit.equals_insensitive(name))
      continue;
    double bytes = std::floor(value * scale);
    // 9.2e18 is just under INT64_MAX, so the cast below is defined.
    if (!(bytes >= 1.0) || bytes > 9.2e18)
      return std::nullopt;
    return static_cast<int64_t>(bytes);
  }
  return std::nullopt;
}

llvm::StringRef mlir::mw::getByteSizeUnits() {
  return "B, KB, MB, GB, TB (powers of 10), KiB, MiB, GiB, TiB (powers of 2)";
}

static std::string formatScaled(int64_t bytes, double base,
                                const char *const units[4]) {
  double v = static_cast<double>(bytes);
  if (std::llabs(bytes) < base)
    return llvm::formatv("{0} B", bytes).str();
  int u = -1;
  while (u < 3 && std::fabs(v) >= base) {
    v /= base;
    ++u;
  }
  return llvm::formatv("{0:F2} {1}", v, units[u]).str();
}

std::string mlir::mw::formatDecimalBytes(int64_t bytes) {
  static const char *const units[] = {"KB", "MB", "GB", "TB"};
  return formatScaled(bytes, 1000.0, units);
}

std::string mlir::mw::formatBinaryBytes(int64_t bytes) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
  return formatScaled(bytes, 1024.0, units);
}

std::string mlir::mw::formatBothBytes(int64_t bytes) {
  if (std::llabs(bytes) < 1000)
    return formatDecimalBytes(bytes);
  return formatDecimalBytes(bytes) + " = " + formatBinaryBytes(bytes);
}
