//===- mw-opt.cpp - Memwall's optimizer driver ----------------------------===//
//
// MlirOptMain with the mw dialect, the upstream dialects of the pipeline and
// Memwall's passes. Diagnostics do not attach the op unless
// --mlir-print-op-on-diagnostic=true nor show a source line of more than 400
// columns (a large model's function signature), and --help leaves out
// LLVM's options.
//
//===----------------------------------------------------------------------===//

#include "memwall/InitMemwall.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::mw::registerMemwallDialects(registry);
  mlir::mw::registerLongLineDiagnostics(registry);
  mlir::mw::registerMemwallPasses();
  mlir::mw::registerMemwallContextCLOptions();
  mlir::mw::hideUnrelatedToolOptions({});
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Memwall optimizer: memory planning for ML steps\n",
      registry));
}
