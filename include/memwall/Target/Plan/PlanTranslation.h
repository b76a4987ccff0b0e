//===- PlanTranslation.h - Planned MLIR to the .mwplan artifact -*- C++ -*-===//
//
// The plan translation as a library, on the model of upstream's
// mlir/Target/Cpp: `translateToPlan` writes one function planned by
// `mw-opt --mw-bufferize --mw-static-arena` as the binary plan
// (runtime/schema/mwplan.fbs) that mw-run executes, `translateToPlanJson` the
// same plan as JSON, and the `register*Translation` functions make them
// mlir-translate translations (`--mw-to-plan`, `--mw-plan-json`) with the
// command-line options they own. Anything the runtime could not execute as
// written is a diagnostic at its op (docs/mw-translate.md).
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_TARGET_PLAN_PLANTRANSLATION_H
#define MEMWALL_TARGET_PLAN_PLANTRANSLATION_H

#include "mlir/Support/LLVM.h"
#include "mlir/Support/LogicalResult.h"

#include <string>

namespace llvm::cl {
class OptionCategory;
} // namespace llvm::cl

namespace mlir {
class Operation;

namespace mw {
/// What a plan translation takes besides the module.
struct PlanOptions {
  /// The planned function to translate. Empty: the only function with
  /// mw.arena_size, else the planned one named train_step.
  std::string function;
};

/// Writes the plan of one planned function of `module` (a builtin.module) to
/// `os` as .mwplan bytes, verified against mwplan.fbs; on failure, emits a
/// diagnostic and writes nothing.
LogicalResult translateToPlan(Operation *module, raw_ostream &os,
                              const PlanOptions &options = {});

/// Writes the same plan as `translateToPlan` as indented JSON, printed from
/// the verified binary so it shows exactly what the artifact holds.
LogicalResult translateToPlanJson(Operation *module, raw_ostream &os,
                                  const PlanOptions &options = {});

/// Registers the `mw-to-plan` translation (translateToPlan) and the
/// `--mw-plan-function` option it reads.
void registerToPlanTranslation();

/// Registers the `mw-plan-json` translation (translateToPlanJson) and the
/// `--mw-plan-function` option it reads.
void registerToPlanJsonTranslation();

/// The category of the plan translations' own options (for --help).
llvm::cl::OptionCategory &getPlanTranslationCategory();
} // namespace mw
} // namespace mlir

#endif // MEMWALL_TARGET_PLAN_PLANTRANSLATION_H
