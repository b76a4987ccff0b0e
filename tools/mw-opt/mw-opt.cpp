//===- mw-opt.cpp - Memwall's optimizer driver ----------------------------===//
//
// MlirOptMain with the mw dialect, the upstream dialects of the pipeline and
// Memwall's passes.
//
//===----------------------------------------------------------------------===//

#include "memwall/InitMemwall.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::mw::registerMemwallDialects(registry);
  mlir::mw::registerMemwallPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Memwall optimizer: memory planning for ML steps\n",
      registry));
}
