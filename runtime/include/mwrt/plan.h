//===- plan.h - The .mwplan artifact: version and generated schema -*- C++ -*-===//
//
// The plan artifact's contract between mw-translate (writer) and the runtime
// (reader): runtime/schema/mwplan.fbs, compiled by flatc into
// mwplan_generated.h, and the version both sides agree on.
//
//===----------------------------------------------------------------------===//

#ifndef MWRT_PLAN_H
#define MWRT_PLAN_H

#include "mwrt/mwplan_generated.h"

#include <cstddef>
#include <cstdint>

namespace mwrt {
/// The version mw-translate writes and the runtime reads; any other version
/// is rejected at load. 2: the file ends with the checksum trailer. 3: fused
/// kernels (Kernel.program, op "mw.fusion"), the I8 and F8E4M3FN element
/// types and the KvCache role.
inline constexpr uint32_t kMwPlanVersion = 3;

/// The version of a fused kernel's program (mwplan.FusedProgram.version),
/// which the runtime also checks: the format of its instructions may evolve
/// within a plan version only by adding fields.
inline constexpr uint32_t kFusedProgramVersion = 1;

/// The op name of a fused kernel in a plan.
inline constexpr const char kFusionOpName[] = "mw.fusion";

/// A .mwplan file is the FlatBuffer followed by a 16-byte trailer: these 8
/// bytes, then the FNV-1a 64-bit hash of the FlatBuffer's bytes (little
/// endian). The runtime refuses a file whose trailer is missing or whose
/// hash does not match, so a plan corrupted on disk or in transit is never
/// run. It detects corruption, not tampering (anyone can recompute it).
inline constexpr char kPlanChecksumMagic[8] = {'M', 'W', 'P', 'L',
                                               'S', 'U', 'M', '1'};
inline constexpr size_t kPlanTrailerSize = 16;

/// FNV-1a, 64 bits.
inline uint64_t planChecksum(const void *data, size_t size) {
  const auto *p = static_cast<const uint8_t *>(data);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

/// Writes the trailer of the `size` bytes at `data` into `trailer`.
inline void planTrailer(const void *data, size_t size,
                        uint8_t trailer[kPlanTrailerSize]) {
  for (size_t i = 0; i < 8; ++i)
    trailer[i] = static_cast<uint8_t>(kPlanChecksumMagic[i]);
  uint64_t h = planChecksum(data, size);
  for (size_t i = 0; i < 8; ++i)
    trailer[8 + i] = static_cast<uint8_t>(h >> (8 * i));
}
} // namespace mwrt

#endif // MWRT_PLAN_H
