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

#include <cstdint>

namespace mwrt {
/// The version mw-translate writes and the runtime reads; any other version
/// is rejected at load.
inline constexpr uint32_t kMwPlanVersion = 1;
} // namespace mwrt

#endif // MWRT_PLAN_H
