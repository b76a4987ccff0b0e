//===- MemwallPlugin.cpp - Memwall as a plugin for stock mlir-opt ---------===//
//
// Entry points for `mlir-opt --load-dialect-plugin=MemwallPlugin.so
// --load-pass-plugin=MemwallPlugin.so`: the mw dialect and Memwall's passes.
//
//===----------------------------------------------------------------------===//

#include "memwall/Dialect/MW/IR/MWDialect.h"
#include "memwall/Dialect/MW/Transforms/BufferizableOpInterfaceImpl.h"
#include "memwall/Dialect/MW/Transforms/Passes.h"
#include "memwall/Dialect/MW/Transforms/Pipelines.h"
#include "memwall/Transforms/Passes.h"

#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

extern "C" LLVM_ATTRIBUTE_WEAK ::mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "MemwallDialects", LLVM_VERSION_STRING,
          [](::mlir::DialectRegistry *registry) {
            registry->insert<::mlir::mw::MWDialect>();
            ::mlir::mw::registerBufferizableOpInterfaceExternalModels(
                *registry);
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK ::mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "MemwallPasses", LLVM_VERSION_STRING,
          []() {
            ::mlir::mw::registerMWPasses();
            ::mlir::mw::registerMWPipelines();
            ::mlir::mw::registerMemwallTransformsPasses();
          }};
}
