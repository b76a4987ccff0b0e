//===- mw-opt.cpp - Memwall's optimizer driver ----------------------------===//
//
// MlirOptMain with the mw dialect, the upstream dialects of the pipeline and
// Memwall's passes. Diagnostics do not attach the op unless
// --mlir-print-op-on-diagnostic=true nor show a source line of more than 400
// columns (a large model's function signature), and --help leaves out
// LLVM's options.
//
// The driver around MlirOptMain's core is ours, not its argc/argv entry
// point, for two reasons: the input is refused before parsing when it nests
// deeper than MLIR's recursive parser survives (InitMemwall.h), and `-o FILE`
// is written to a temporary file renamed over FILE on success only, so a
// failed run leaves a previous FILE as it was (upstream's driver truncates
// FILE when it starts and deletes it when the run fails).
//
//===----------------------------------------------------------------------===//

#include "memwall/InitMemwall.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::DialectRegistry registry;
  mlir::mw::registerMemwallDialects(registry);
  mlir::mw::registerLongLineDiagnostics(registry);
  mlir::mw::registerMemwallPasses();
  mlir::mw::registerMemwallContextCLOptions();
  mlir::mw::hideUnrelatedToolOptions({});
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "Memwall optimizer: memory planning for ML steps\n",
      registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects())
    return mlir::asMainReturnCode(mlir::MlirOptMain(
        llvm::outs(), llvm::MemoryBuffer::getMemBuffer(""), registry, config));

  // As upstream's driver: reading a terminal is usually a mistake.
  if (inputFilename == "-" &&
      llvm::sys::Process::FileDescriptorIsDisplayed(fileno(stdin)))
    llvm::errs() << "(processing input from stdin now, hit ctrl-c/ctrl-d to "
                    "interrupt)\n";
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << "mw-opt: " << error << "\n";
    return 1;
  }
  if (mlir::failed(mlir::mw::checkInputNesting(*input, llvm::errs())))
    return 1;

  return mlir::mw::writeOutputOnSuccess(
      "mw-opt", outputFilename, [&](llvm::raw_ostream &os) {
        return mlir::MlirOptMain(os, std::move(input), registry, config);
      });
}
