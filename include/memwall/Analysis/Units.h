//===- Units.h - Byte sizes in options and reports --------------*- C++ -*-===//
//
// One rule for byte sizes across Memwall's options and reports: `KB`, `MB`,
// `GB`, `TB` are powers of 10 (a device's marketed "16 GB" is 16 * 10^9
// bytes) and `KiB`, `MiB`, `GiB`, `TiB` powers of 2. parseByteSize reads an
// option value (`16GB`, `1.5GiB`, `123`, `500 MB`); the formatters write the
// figures people compare with those values.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_ANALYSIS_UNITS_H
#define MEMWALL_ANALYSIS_UNITS_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::mw {

/// Bytes from a number with an optional unit: none or `B` (bytes), `KB`,
/// `MB`, `GB`, `TB` (10^3..10^12), `KiB`, `MiB`, `GiB`, `TiB` (2^10..2^40);
/// units are case-insensitive and may follow a space; the number may have a
/// fraction (`1.5GiB`), rounded down to whole bytes. Nullopt when malformed,
/// not positive, or not representable in int64_t.
std::optional<int64_t> parseByteSize(llvm::StringRef text);

/// The units parseByteSize accepts, for diagnostics.
llvm::StringRef getByteSizeUnits();

/// "16.00 GB" (10^9): decimal units with two decimals, "123 B" below 1 KB.
std::string formatDecimalBytes(int64_t bytes);

/// "14.90 GiB" (2^30): binary units with two decimals, "123 B" below 1 KiB.
std::string formatBinaryBytes(int64_t bytes);

/// Both, for figures compared with a device's marketed size:
/// "16.00 GB = 14.90 GiB".
std::string formatBothBytes(int64_t bytes);

} // namespace mlir::mw

#endif // MEMWALL_ANALYSIS_UNITS_H
