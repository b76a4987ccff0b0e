//===- MwOffloadAuto.cpp - --mw-offload=auto (not built yet) --------------===//
//
// A stand-in for the planner of docs/offload.md's "auto" section, which
// replaces this file.
//
//===----------------------------------------------------------------------===//

#include "MwOffloadAuto.h"

using namespace mlir;
using namespace mlir::mw;

FailureOr<OffloadDecision> mlir::mw::chooseOffload(func::FuncOp f,
                                                   const OffloadAutoOptions &) {
  return f.emitError("mw-offload: auto is not built yet");
}
