//===- MwPlanExport.cpp - --mw-plan-export --------------------------------===//
//
// Writes a planned function's buffers as MiniMalloc CSV (id, lower, upper,
// size, offset), read back from the IR like --mw-verify-plan does, so that
// a plan found on a real program can be replayed by MiniMalloc, mw-pack or
// the benchmarks.
//
//===----------------------------------------------------------------------===//

#include "ArenaPlan.h"

#include "memwall/Transforms/Passes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::mw {
#define GEN_PASS_DEF_MWPLANEXPORT
#include "memwall/Transforms/Passes.h.inc"
} // namespace mlir::mw

using namespace mlir;
using namespace mlir::mw;

namespace {

/// A CSV field: separators, quotes and line breaks become '_'.
std::string csvField(StringRef text) {
  std::string field = text.str();
  for (char &c : field)
    if (c == ',' || c == '"' || c == '\n' || c == '\r')
      c = '_';
  return field;
}

struct MwPlanExportPass : public mw::impl::MwPlanExportBase<MwPlanExportPass> {
  using MwPlanExportBase::MwPlanExportBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<func::FuncOp, ArenaPlan>> plans;
    for (auto func : module.getOps<func::FuncOp>()) {
      FailureOr<std::optional<ArenaPlan>> read = readArenaPlan(func);
      if (failed(read))
        return signalPassFailure();
      if (*read && (function.empty() || func.getSymName() == function))
        plans.emplace_back(func, std::move(**read));
    }
    if (!function.empty() && plans.empty()) {
      module.emitError() << "mw-plan-export: no planned function named @"
                         << function;
      return signalPassFailure();
    }
    if (plans.size() > 1) {
      SmallVector<std::string> names;
      for (auto &[func, plan] : plans)
        names.push_back(("@" + func.getSymName()).str());
      module.emitError() << "mw-plan-export: several planned functions ("
                         << llvm::join(names, ", ")
                         << "); choose one with function=NAME";
      return signalPassFailure();
    }

    // writeToOutput goes through a temporary file and a rename.
    llvm::Error err =
        llvm::writeToOutput(file, [&](llvm::raw_ostream &os) -> llvm::Error {
          os << "id,lower,upper,size,offset\n";
          if (plans.empty())
            return llvm::Error::success();
          const ArenaPlan &plan = plans.front().second;
          for (auto [buffer, offset] :
               llvm::zip_equal(plan.liveness->getBuffers(), plan.offsets)) {
            uint64_t size = buffer.sizeInBytes;
            if (plan.alignment)
              size = llvm::alignTo(size, *plan.alignment);
            os << csvField(buffer.name) << "," << buffer.start << ","
               << buffer.end << "," << size << "," << offset << "\n";
          }
          return llvm::Error::success();
        });
    if (err) {
      module.emitError() << "mw-plan-export: cannot write '" << file
                         << "': " << llvm::toString(std::move(err));
      return signalPassFailure();
    }
    markAllAnalysesPreserved();
  }
};

} // namespace
