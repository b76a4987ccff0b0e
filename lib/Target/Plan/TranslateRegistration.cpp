//===- TranslateRegistration.cpp - The plan translations ------------------===//
//
// Registers `--mw-to-plan` and `--mw-plan-json` as mlir-translate
// translations (as mlir/lib/Target/Cpp/TranslateRegistration.cpp does for
// `--mlir-to-cpp`), with the command-line options they own: a tool offers
// them by calling the register functions before mlirTranslateMain.
//
//===----------------------------------------------------------------------===//

#include "memwall/InitMemwall.h"
#include "memwall/Target/Plan/PlanTranslation.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;

llvm::cl::OptionCategory &mw::getPlanTranslationCategory() {
  static llvm::cl::OptionCategory category("Plan translation options");
  return category;
}

namespace {
/// The options both translations read; constructed (so registered with
/// llvm::cl) by whichever translation registers first, before the command
/// line is parsed.
struct PlanCLOptions {
  llvm::cl::opt<std::string> function{
      "mw-plan-function",
      llvm::cl::desc("The planned function to translate (default: the only "
                     "function with mw.arena_size, else train_step)"),
      llvm::cl::value_desc("NAME"),
      llvm::cl::cat(mw::getPlanTranslationCategory())};
};
} // namespace

static const PlanCLOptions &getPlanCLOptions() {
  static PlanCLOptions options;
  return options;
}

/// The options of a translation of `op`. mlirTranslateMain attaches the op
/// to every diagnostic whatever --mlir-print-op-on-diagnostic says; the plan
/// translations follow the flag (Memwall's tools default it to false).
static mw::PlanOptions getPlanOptions(Operation *op) {
  if (!mw::shouldPrintOpOnDiagnostic())
    op->getContext()->printOpOnDiagnostic(false);
  return {getPlanCLOptions().function};
}

static void registerPlanDialects(DialectRegistry &registry) {
  mw::registerMemwallDialects(registry);
}

void mw::registerToPlanTranslation() {
  (void)getPlanCLOptions();
  TranslateFromMLIRRegistration reg(
      "mw-to-plan", "Write a planned function as a binary .mwplan",
      [](Operation *op, raw_ostream &os) {
        return translateToPlan(op, os, getPlanOptions(op));
      },
      registerPlanDialects);
}

void mw::registerToPlanJsonTranslation() {
  (void)getPlanCLOptions();
  TranslateFromMLIRRegistration reg(
      "mw-plan-json", "Write a planned function's .mwplan as JSON",
      [](Operation *op, raw_ostream &os) {
        return translateToPlanJson(op, os, getPlanOptions(op));
      },
      registerPlanDialects);
}
