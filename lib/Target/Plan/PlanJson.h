//===- PlanJson.h - A .mwplan as JSON ---------------------------*- C++ -*-===//
//
// Private to lib/Target/Plan: the JSON writer behind translateToPlanJson,
// which works on the verified FlatBuffer rather than on IR so the JSON shows
// exactly what the artifact holds.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_LIB_TARGET_PLAN_PLANJSON_H
#define MEMWALL_LIB_TARGET_PLAN_PLANJSON_H

#include "mwrt/plan.h"

#include "mlir/Support/LLVM.h"

namespace mlir::mw {
/// Writes `plan` to `os` as indented JSON, with a final newline.
void writePlanJson(const mwplan::Plan &plan, raw_ostream &os);
} // namespace mlir::mw

#endif // MEMWALL_LIB_TARGET_PLAN_PLANJSON_H
