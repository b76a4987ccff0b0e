//===- MwTestPrintBufferLiveness.cpp - --mw-test-print-buffer-liveness ----===//
//
// Prints the BufferLiveness analysis of every function, for lit tests of the
// liveness rules that --mw-static-arena plans with.
//
//===----------------------------------------------------------------------===//

#include "memwall/Analysis/BufferLiveness.h"
#include "memwall/Transforms/Passes.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir::mw {
#define GEN_PASS_DEF_MWTESTPRINTBUFFERLIVENESS
#include "memwall/Transforms/Passes.h.inc"
} // namespace mlir::mw

using namespace mlir;
using namespace mlir::mw;

namespace {

struct MwTestPrintBufferLivenessPass
    : public mw::impl::MwTestPrintBufferLivenessBase<
          MwTestPrintBufferLivenessPass> {
  using MwTestPrintBufferLivenessBase::MwTestPrintBufferLivenessBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      getChildAnalysis<BufferLiveness>(func).print(llvm::outs());
    }
    llvm::outs().flush();
    markAllAnalysesPreserved();
  }
};

} // namespace
