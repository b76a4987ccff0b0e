//===- mw-translate.cpp - Planned MLIR to the .mwplan artifact ------------===//
//
// The plan translations of lib/Target/Plan: `--mw-to-plan` writes the binary
// plan that mw-run executes, `--mw-plan-json` the same plan as JSON
// (docs/mw-translate.md). Diagnostics do not attach the op by default, and
// --help lists the translator's own options.
//
// The driver is upstream's mlirTranslateMain with the same options, less its
// chaining of several translations (a .mwplan does not parse as MLIR), and
// with one difference: `-o FILE` is written to a temporary file renamed over
// FILE on success only, so a failed translation leaves a previous plan as it
// was (upstream truncates FILE when it starts and deletes it on failure).
//
//===----------------------------------------------------------------------===//

#include "memwall/InitMemwall.h"
#include "memwall/Target/Plan/PlanTranslation.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Support/ToolUtilities.h"
#include "mlir/Tools/mlir-translate/Translation.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {
/// Marks every diagnostic but errors handled (--error-diagnostics-only).
class ErrorOnlyFilter : public ScopedDiagnosticHandler {
public:
  explicit ErrorOnlyFilter(MLIRContext *context)
      : ScopedDiagnosticHandler(context) {
    setHandler([](Diagnostic &d) {
      return success(d.getSeverity() != DiagnosticSeverity::Error);
    });
  }
};
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mw::registerToPlanTranslation();
  mw::registerToPlanJsonTranslation();
  mw::registerMemwallContextCLOptions();
  mw::hideUnrelatedToolOptions({&mw::getPlanTranslationCategory()});

  static llvm::cl::opt<std::string> inputFilename(
      llvm::cl::Positional, llvm::cl::desc("<input file>"),
      llvm::cl::init("-"));
  static llvm::cl::opt<std::string> outputFilename(
      "o",
      llvm::cl::desc("Output filename (written whole on success: a failed "
                     "run leaves an existing file as it was)"),
      llvm::cl::value_desc("filename"), llvm::cl::init("-"));
  static llvm::cl::opt<bool> allowUnregisteredDialects(
      "allow-unregistered-dialect",
      llvm::cl::desc("Allow operation with no registered dialects"),
      llvm::cl::init(false));
  static llvm::cl::opt<std::string> inputSplitMarker{
      "split-input-file", llvm::cl::ValueOptional,
      llvm::cl::callback([](const std::string &marker) {
        if (marker.empty())
          inputSplitMarker.setValue(kDefaultSplitMarker);
      }),
      llvm::cl::desc("Split the input file into chunks using the given or "
                     "default marker and process each chunk independently"),
      llvm::cl::init("")};
  static llvm::cl::opt<bool> verifyDiagnostics(
      "verify-diagnostics",
      llvm::cl::desc("Check that emitted diagnostics match expected-* lines "
                     "on the corresponding line"),
      llvm::cl::init(false));
  static llvm::cl::opt<bool> errorDiagnosticsOnly(
      "error-diagnostics-only",
      llvm::cl::desc("Filter all non-error diagnostics"),
      llvm::cl::init(false));
  static llvm::cl::opt<std::string> outputSplitMarker(
      "output-split-marker",
      llvm::cl::desc("Split marker to use for merging the output"),
      llvm::cl::init(""));
  llvm::cl::opt<const Translation *, false, TranslationParser> translation(
      "", llvm::cl::desc("The translation to perform (one)"));
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerTranslationCLOptions();
  registerDefaultTimingManagerCLOptions();
  llvm::cl::ParseCommandLineOptions(
      argc, argv, "Memwall translator: planned MLIR to the .mwplan artifact");

  if (translation.getNumOccurrences() != 1) {
    llvm::errs() << "mw-translate: "
                 << (translation.getNumOccurrences() ? "more than one"
                                                     : "no")
                 << " translation given: give one of --mw-to-plan and "
                    "--mw-plan-json (see --help)\n";
    return 1;
  }

  DefaultTimingManager timingManager;
  applyDefaultTimingManagerCLOptions(timingManager);
  TimingScope timing = timingManager.getRootScope();

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << "mw-translate: " << error << "\n";
    return 1;
  }

  auto processChunk = [&](std::unique_ptr<llvm::MemoryBuffer> chunk,
                          raw_ostream &os) -> LogicalResult {
    // The parser reads up to a NUL; a chunk of a split file has none.
    if (!chunk->getBuffer().ends_with('\0'))
      chunk = llvm::MemoryBuffer::getMemBufferCopy(
          chunk->getBuffer(), chunk->getBufferIdentifier());
    TimingScope translationTiming =
        timing.nest(translation.getValue()->getDescription());
    MLIRContext context;
    context.allowUnregisteredDialects(allowUnregisteredDialects);
    context.printOpOnDiagnostic(!verifyDiagnostics);
    auto sourceMgr = std::make_shared<llvm::SourceMgr>();
    sourceMgr->AddNewSourceBuffer(std::move(chunk), llvm::SMLoc());
    if (verifyDiagnostics) {
      // Whether the translation fails does not matter here (it is usually
      // expected to): the diagnostics must be the expected ones.
      SourceMgrDiagnosticVerifierHandler handler(*sourceMgr, &context);
      (void)(*translation.getValue())(sourceMgr, os, &context);
      return handler.verify();
    }
    SourceMgrDiagnosticHandler handler(*sourceMgr, &context);
    std::optional<ErrorOnlyFilter> filter;
    if (errorDiagnosticsOnly)
      filter.emplace(&context);
    return (*translation.getValue())(sourceMgr, os, &context);
  };

  return mw::writeOutputOnSuccess(
      "mw-translate", outputFilename, [&](raw_ostream &os) {
        return splitAndProcessBuffer(std::move(input), processChunk, os,
                                     inputSplitMarker, outputSplitMarker);
      });
}
