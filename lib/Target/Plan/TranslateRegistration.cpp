//===- TranslateRegistration.cpp - The plan translations ------------------===//
//
// Registers `--mw-to-plan` and `--mw-plan-json` as mlir-translate
// translations (as mlir/lib/Target/Cpp/TranslateRegistration.cpp does for
// `--mlir-to-cpp`), with the command-line options they own: a tool offers
// them by calling the register functions before mlirTranslateMain. Each
// parses and verifies its input as TranslateFromMLIRRegistration would, with
// the context's --mlir-print-op-on-diagnostic applied first.
//
//===----------------------------------------------------------------------===//

#include "memwall/InitMemwall.h"
#include "memwall/Target/Plan/PlanTranslation.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Tools/ParseUtilities.h"
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

/// The flag of registerTranslationCLOptions, reachable only by name.
static bool shouldInsertImplicitModule() {
  registerTranslationCLOptions();
  llvm::cl::Option *option =
      llvm::cl::getRegisteredOptions().lookup("no-implicit-module");
  return !option || !*static_cast<llvm::cl::opt<bool> *>(option);
}

/// Registers `name` like TranslateFromMLIRRegistration does (parse, verify,
/// translate), except that the context follows --mlir-print-op-on-diagnostic
/// (Memwall's tools default it to false) from before parsing:
/// mlirTranslateMain turns it on whatever the flag says, so without this a
/// verifier error in the input or a module-level error of the translation
/// prints the op after it.
static void
registerPlanTranslation(StringRef name, StringRef description,
                        LogicalResult (*translate)(Operation *, raw_ostream &,
                                                   const mw::PlanOptions &)) {
  TranslateRegistration reg(
      name, description,
      [translate](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
                  raw_ostream &os, MLIRContext *context) -> LogicalResult {
        if (!mw::shouldPrintOpOnDiagnostic())
          context->printOpOnDiagnostic(false);
        // A source line of a large model's signature is megabytes: not
        // shown (InitMemwall.h).
        mw::LongLineDiagnosticHandler longLines(context);
        DialectRegistry registry;
        mw::registerMemwallDialects(registry);
        context->appendDialectRegistry(registry);
        if (failed(mw::checkInputNesting(
                *sourceMgr->getMemoryBuffer(sourceMgr->getMainFileID()),
                llvm::errs())))
          return failure();
        OwningOpRef<Operation *> op = parseSourceFileForTool(
            sourceMgr, context, shouldInsertImplicitModule());
        if (!op || failed(verify(*op)))
          return failure();
        return translate(op.get(), os, {getPlanCLOptions().function});
      });
}

void mw::registerToPlanTranslation() {
  (void)getPlanCLOptions();
  registerPlanTranslation("mw-to-plan",
                          "Write a planned function as a binary .mwplan",
                          translateToPlan);
}

void mw::registerToPlanJsonTranslation() {
  (void)getPlanCLOptions();
  registerPlanTranslation("mw-plan-json",
                          "Write a planned function's .mwplan as JSON",
                          translateToPlanJson);
}
