//===- mw-translate.cpp - Planned MLIR to the .mwplan artifact ------------===//
//
// MlirTranslateMain with the plan translations of lib/Target/Plan:
// `--mw-to-plan` writes the binary plan that mw-run executes, `--mw-plan-json`
// the same plan as JSON (docs/mw-translate.md). Diagnostics do not attach
// the op by default, and --help lists the translator's own options.
//
//===----------------------------------------------------------------------===//

#include "memwall/InitMemwall.h"
#include "memwall/Target/Plan/PlanTranslation.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::mw::registerToPlanTranslation();
  mlir::mw::registerToPlanJsonTranslation();
  mlir::mw::registerMemwallContextCLOptions();
  mlir::mw::hideUnrelatedToolOptions({&mlir::mw::getPlanTranslationCategory()});
  return mlir::failed(mlir::mlirTranslateMain(
      argc, argv, "Memwall translator: planned MLIR to the .mwplan artifact"));
}
