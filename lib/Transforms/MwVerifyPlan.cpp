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

#include <functional>
#include <map>
#include <queue>
#include <vector>

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
  // hold no bytes and cannot overlap. The buffers come by where they start,
  // so a sweep finds the first buffer that overlaps an earlier one in
  // n log n: the earlier ones still live where it starts hold disjoint
  // bytes (or the sweep would have stopped), kept by offset, and only the
  // one just below its end can share bytes with it. Then the pair is
  // reported as the scan over all pairs would (the first such earlier one).
  auto sharesBytes = [](const LiveBuffer &a, uint64_t aOffset,
                        const LiveBuffer &b, uint64_t bOffset) {
    return a.sizeInBytes != 0 && b.sizeInBytes != 0 &&
           aOffset < bOffset + b.sizeInBytes &&
           bOffset < aOffset + a.sizeInBytes;
  };
  size_t first = 0;
  bool sorted = llvm::is_sorted(buffers, [](const LiveBuffer &a,
                                            const LiveBuffer &b) {
    return a.start < b.start;
  });
  if (sorted) {
    first = buffers.size();
    std::map<uint64_t, size_t> active; // offset -> buffer, disjoint bytes
    using Ending = std::pair<int64_t, size_t>; // end, buffer
    std::priority_queue<Ending, std::vector<Ending>, std::greater<Ending>>
        ending;
    for (size_t j = 0; j < buffers.size() && first == buffers.size(); ++j) {
      const LiveBuffer &b = buffers[j];
      if (b.sizeInBytes == 0 || b.end <= b.start)
        continue;
      while (!ending.empty() && ending.top().first <= b.start) {
        size_t i = ending.top().second;
        ending.pop();
        auto it = active.find(plan.offsets[i]);
        if (it != active.end() && it->second == i)
          active.erase(it);
      }
      uint64_t bOffset = plan.offsets[j];
      auto it = active.lower_bound(bOffset + b.sizeInBytes);
      if (it != active.begin() &&
          sharesBytes(buffers[std::prev(it)->second], std::prev(it)->first, b,
                      bOffset)) {
        first = j;
        break;
      }
      active[bOffset] = j;
      ending.push({b.end, j});
    }
  }
  for (size_t j = first; j < buffers.size(); ++j) {
    const LiveBuffer &b = buffers[j];
    uint64_t bOffset = plan.offsets[j];
    for (size_t i = 0; i < j; ++i) {
      const LiveBuffer &a = buffers[i];
      uint64_t aOffset = plan.offsets[i];
      bool liveTogether = a.start < b.end && b.start < a.end;
      if (!liveTogether || !sharesBytes(a, aOffset, b, bOffset))
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
