//===- MwVerifyPlan.cpp - --mw-verify-plan --------------------------------===//
//
// Checks a static arena plan from the IR alone: the views of the arena are
// the buffers, their byte ranges come from their constant offsets and types,
// their lifetimes from BufferLiveness applied to the views. Nothing the
// planner or the packer computed is trusted, so a bug in either (or a
// hand-edited plan) shows up here as an error naming both buffers.
//
//===----------------------------------------------------------------------===//

#include "ArenaPlan.h"

#include "memwall/Transforms/Passes.h"

namespace mlir::mw {
#define GEN_PASS_DEF_MWVERIFYPLAN
#include "memwall/Transforms/Passes.h.inc"
} // namespace mlir::mw

using namespace mlir;
using namespace mlir::mw;

namespace {

struct MwVerifyPlanPass : public mw::impl::MwVerifyPlanBase<MwVerifyPlanPass> {
  using MwVerifyPlanBase::MwVerifyPlanBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    FailureOr<std::optional<ArenaPlan>> read = readArenaPlan(func);
    if (failed(read))
      return signalPassFailure();
    if (!*read)
      return markAllAnalysesPreserved();
    if (failed(check(**read)))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }

private:
  LogicalResult check(const ArenaPlan &plan);
  LogicalResult checkBudget(const ArenaPlan &plan);
};

/// `'a' at offset 256 (1024 B)`.
std::string describe(const LiveBuffer &buffer, uint64_t offset) {
  return ("'" + buffer.name + "' at offset " + Twine(offset) + " (" +
          Twine(buffer.sizeInBytes) + " B)")
      .str();
}

LogicalResult MwVerifyPlanPass::check(const ArenaPlan &plan) {
  const BufferLiveness &liveness = *plan.liveness;
  ArrayRef<LiveBuffer> buffers = liveness.getBuffers();

  for (auto [buffer, offset] : llvm::zip_equal(buffers, plan.offsets)) {
    if (!buffer.isTransient()) {
      InFlightDiagnostic diag = emitError(buffer.definingOp->getLoc())
                                << "'" << buffer.name
                                << "' cannot be checked: " << buffer.reason;
      if (buffer.reasonOp && buffer.reasonOp != buffer.definingOp)
        diag.attachNote(buffer.reasonOp->getLoc()) << "here";
      return failure();
    }
    if (!buffer.deallocs.empty())
      return emitError(buffer.deallocs.front()->getLoc())
             << "'" << buffer.name
             << "' is a view of the arena and must not be deallocated";
    if (plan.alignment && offset % *plan.alignment != 0)
      return emitError(buffer.definingOp->getLoc())
             << describe(buffer, offset) << " is not aligned to "
             << *plan.alignment << " bytes (mw.arena_alignment)";
    if (offset > plan.arenaSize || buffer.sizeInBytes > plan.arenaSize - offset)
      return emitError(buffer.definingOp->getLoc())
             << describe(buffer, offset) << " ends past the arena ("
             << plan.arenaSize << " B)";
  }

  // The arena must outlive every view. A dealloc nested in a top-level op
  // may follow a view's last use inside the same op, so it only has to
  // come no earlier than that op.
  for (memref::DeallocOp dealloc : plan.deallocs) {
    int64_t position = liveness.getPosition(dealloc);
    if (position < 0)
      continue;
    bool topLevel = liveness.getOpAt(position) == dealloc.getOperation();
    for (const LiveBuffer &buffer : buffers) {
      int64_t last = buffer.end - 1;
      if (position < last || (topLevel && position == last))
        return emitError(dealloc.getLoc())
               << "the arena is deallocated at op " << position << " while '"
               << buffer.name << "' is live until op " << last;
    }
  }

  // Pairs in op order; the first overlap is reported. Zero-sized buffers
  // hold no bytes and cannot overlap.
  for (size_t j = 0; j < buffers.size(); ++j) {
    const LiveBuffer &b = buffers[j];
    uint64_t bOffset = plan.offsets[j];
    for (size_t i = 0; i < j; ++i) {
      const LiveBuffer &a = buffers[i];
      uint64_t aOffset = plan.offsets[i];
      bool liveTogether = a.start < b.end && b.start < a.end;
      bool shareBytes = a.sizeInBytes != 0 && b.sizeInBytes != 0 &&
                        aOffset < bOffset + b.sizeInBytes &&
                        bOffset < aOffset + a.sizeInBytes;
      if (!liveTogether || !shareBytes)
        continue;
      int64_t at = std::max(a.start, b.start);
      InFlightDiagnostic diag = emitError(b.definingOp->getLoc())
                                << "buffers " << describe(a, aOffset) << " and "
                                << describe(b, bOffset)
                                << " overlap while both live at op " << at;
      diag.attachNote(a.definingOp->getLoc())
          << "'" << a.name << "' is defined here";
      // Where both are live is usually b's own view; say so only otherwise.
      Operation *op = liveness.getOpAt(at);
      if (op != b.definingOp)
        diag.attachNote(op->getLoc())
            << "op " << at << " is '" << op->getName() << "'";
      return failure();
    }
  }
  return checkBudget(plan);
}

/// A step rematerialized under a budget (`mw.remat.budget_bytes`, set by
/// --mw-remat) must fit it: the arena plus the persistent bytes (arguments
/// other than the arena, and the buffers allocated outside it), the peak
/// --mw-remat measures.
LogicalResult MwVerifyPlanPass::checkBudget(const ArenaPlan &plan) {
  func::FuncOp func = getOperation();
  auto budget = func->getAttrOfType<IntegerAttr>("mw.remat.budget_bytes");
  if (!budget)
    return success();
  auto bytes = [](Type type) -> int64_t {
    auto memref = dyn_cast<ShapedType>(type);
    if (!memref || !memref.hasStaticShape())
      return 0;
    return memref.getNumElements() *
           ((memref.getElementTypeBitWidth() + 7) / 8);
  };
  int64_t persistent = 0;
  for (BlockArgument arg : func.getArguments())
    if (arg != plan.arena)
      persistent += bytes(arg.getType());
  func.walk([&](memref::AllocOp alloc) {
    if (alloc.getResult() != plan.arena)
      persistent += bytes(alloc.getType());
  });
  int64_t peak = static_cast<int64_t>(plan.arenaSize) + persistent;
  if (peak <= budget.getInt())
    return success();
  return func.emitError() << "planned peak " << peak << " B (arena "
                          << plan.arenaSize << " B + persistent " << persistent
                          << " B) is over the rematerialization budget "
                          << budget.getInt() << " B (mw.remat.budget_bytes)";
}

} // namespace
