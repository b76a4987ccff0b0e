//===- MwStaticArena.cpp - --mw-static-arena ------------------------------===//
//
// Turns the transient buffers of each function into views of one arena at
// offsets chosen by the packer (DESIGN.md decision 5). Lifetimes come from
// the BufferLiveness analysis; the packer is the MLIR-free MemwallPlanning
// library; the rewrite is local: each planned memref.alloc becomes a
// memref.view in place, its deallocs go away, and the arena is allocated at
// the top of the function (or passed in as a trailing argument).
//
//===----------------------------------------------------------------------===//

#include "memwall/Analysis/BufferLiveness.h"
#include "memwall/Planning/Packer.h"
#include "memwall/Transforms/PassOptionsMirror.h"
#include "memwall/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/MathExtras.h"

#include <map>

#define DEBUG_TYPE "mw-static-arena"

namespace mlir::mw {
#define GEN_PASS_DEF_MWSTATICARENA
#include "memwall/Transforms/Passes.h.inc"
} // namespace mlir::mw

using namespace mlir;
using namespace mlir::mw;
namespace planning = memwall::planning;

namespace {

struct MwStaticArenaPass
    : public mw::impl::MwStaticArenaBase<MwStaticArenaPass> {
  using MwStaticArenaBase::MwStaticArenaBase;

  void runOnOperation() override;

  /// Mirrors the options Passes.td declares into `into` (the options are
  /// the generated base's, reachable only from the pass).
  static void mirrorOptions(PassOptionsMirror &into) {
    MwStaticArenaPass pass;
    into.mirror(pass.strategy);
    into.mirror(pass.alignment);
    into.mirror(pass.arena);
    into.mirror(pass.timeLimit);
    into.mirror(pass.remarks);
  }

private:
  /// Plans `func`; failure after an error diagnostic.
  LogicalResult planFunction(func::FuncOp func,
                             const planning::PackOptions &options);
};

/// The strategies' names for diagnostics: "naive, greedy-size, ...".
std::string strategyNames() {
  SmallVector<std::string> names;
  for (planning::PackStrategy s : planning::getAllStrategies())
    names.push_back(planning::getStrategyName(s));
  return llvm::join(names, ", ");
}

void MwStaticArenaPass::runOnOperation() {
  ModuleOp module = getOperation();
  std::optional<planning::PackStrategy> parsed =
      planning::parseStrategy(strategy);
  if (!parsed) {
    module.emitError() << "mw-static-arena: unknown strategy '" << strategy
                       << "' (expected " << strategyNames() << ")";
    return signalPassFailure();
  }
  if (alignment <= 0 || !llvm::isPowerOf2_64(alignment)) {
    module.emitError() << "mw-static-arena: alignment "
                       << static_cast<int64_t>(alignment)
                       << " is not a positive power of two";
    return signalPassFailure();
  }
  if (arena != "alloc" && arena != "argument") {
    module.emitError() << "mw-static-arena: unknown arena '" << arena
                       << "' (expected alloc or argument)";
    return signalPassFailure();
  }
  if (!(timeLimit > 0)) {
    module.emitError() << "mw-static-arena: time-limit must be a positive "
                          "number of seconds";
    return signalPassFailure();
  }
  planning::PackOptions options;
  options.strategy = *parsed;
  options.alignment = static_cast<uint64_t>(alignment);
  options.timeLimitSeconds = timeLimit;

  for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
    if (func.isExternal())
      continue;
    if (func->hasAttr("mw.arena_size")) {
      emitRemark(func.getLoc())
          << "function @" << func.getSymName()
          << " is already planned (mw.arena_size); not planned again";
      continue;
    }
    if (failed(planFunction(func, options)))
      return signalPassFailure();
  }
}

LogicalResult
MwStaticArenaPass::planFunction(func::FuncOp func,
                                const planning::PackOptions &options) {
  const BufferLiveness &liveness = getChildAnalysis<BufferLiveness>(func);

  SmallVector<const LiveBuffer *> planned;
  std::vector<planning::PackBuffer> instance;
  for (const LiveBuffer &buffer : liveness.getBuffers()) {
    if (!buffer.isTransient()) {
      if (remarks)
        emitRemark(buffer.definingOp->getLoc())
            << buffer.reason << " is not planned: '" << buffer.name << "'";
      ++numUnplanned;
      continue;
    }
    // The arena cannot honor an alignment above its own.
    if (auto alloc = dyn_cast<memref::AllocOp>(buffer.definingOp);
        alloc && alloc.getAlignment() &&
        *alloc.getAlignment() > options.alignment) {
      if (remarks)
        emitRemark(alloc.getLoc())
            << "allocation aligned to " << *alloc.getAlignment()
            << " bytes, above the arena's alignment of " << options.alignment
            << ", is not planned: '" << buffer.name << "'";
      ++numUnplanned;
      continue;
    }
    planned.push_back(&buffer);
    instance.push_back({buffer.sizeInBytes, buffer.start, buffer.end});
  }
  if (planned.empty())
    return success();

  if (arena == "argument") {
    // Adding an argument breaks every call of the function in the module;
    // the callers cannot provide an arena they know nothing about.
    ModuleOp module = getOperation();
    std::optional<SymbolTable::UseRange> uses =
        SymbolTable::getSymbolUses(func, module);
    if (!uses || !uses->empty()) {
      InFlightDiagnostic diag =
          func.emitError()
          << "arena=argument would add an argument to @" << func.getSymName()
          << ", which is used in the module; plan it with arena=alloc";
      if (uses && !uses->empty())
        diag.attachNote(uses->begin()->getUser()->getLoc()) << "used here";
      return failure();
    }
  }

  planning::PackResult result = planning::packBuffers(instance, options);
  if (!result.succeeded())
    return func.emitError() << "mw-static-arena: packing @" << func.getSymName()
                            << " failed: " << result.error;
  LLVM_DEBUG(
      llvm::dbgs() << "mw-static-arena @" << func.getSymName() << ": "
                   << planned.size() << " buffers, arena " << result.arenaSize
                   << " B, lower bound " << result.lowerBound << " B, "
                   << planning::getStrategyName(options.strategy) << "\n");
  if (result.arenaSize > static_cast<uint64_t>(INT64_MAX))
    return func.emitError() << "mw-static-arena: the arena of @"
                            << func.getSymName() << " exceeds 2^63 bytes";

  MLIRContext *ctx = &getContext();
  Block &entry = func.getBody().front();
  OpBuilder builder(ctx);
  Location loc = func.getLoc();
  auto arenaType = MemRefType::get({static_cast<int64_t>(result.arenaSize)},
                                   IntegerType::get(ctx, 8));

  Value arenaValue;
  builder.setInsertionPointToStart(&entry);
  if (arena == "alloc") {
    auto alloc = builder.create<memref::AllocOp>(
        loc, arenaType, builder.getI64IntegerAttr(options.alignment));
    alloc->setAttr("mw.arena", builder.getUnitAttr());
    arenaValue = alloc.getResult();
    for (Block &block : func.getBody())
      if (auto ret = dyn_cast<func::ReturnOp>(block.getTerminator())) {
        builder.setInsertionPoint(ret);
        builder.create<memref::DeallocOp>(loc, arenaValue);
      }
    builder.setInsertionPointAfter(alloc);
  } else {
    unsigned index = func.getNumArguments();
    func.insertArgument(index, arenaType,
                        builder.getDictionaryAttr(builder.getNamedAttr(
                            "mw.arena", builder.getUnitAttr())),
                        loc);
    arenaValue = func.getArgument(index);
  }

  // One index constant per distinct offset, in increasing order, at the top
  // of the function where they dominate every view.
  std::map<uint64_t, Value> offsets;
  for (uint64_t offset : result.offsets)
    offsets[offset] = Value();
  for (auto &[offset, value] : offsets)
    value = builder.create<arith::ConstantIndexOp>(loc, offset);

  for (auto [buffer, offset] : llvm::zip_equal(planned, result.offsets)) {
    for (Operation *dealloc : buffer->deallocs)
      dealloc->erase();
    Operation *alloc = buffer->definingOp;
    builder.setInsertionPoint(alloc);
    auto view = builder.create<memref::ViewOp>(
        alloc->getLoc(), buffer->value.getType(), arenaValue, offsets[offset],
        ValueRange());
    view->setAttr("mw.buffer", builder.getStringAttr(buffer->name));
    alloc->getResult(0).replaceAllUsesWith(view.getResult());
    alloc->erase();
  }

  func->setAttr("mw.arena_size", builder.getI64IntegerAttr(result.arenaSize));
  func->setAttr("mw.arena_alignment",
                builder.getI64IntegerAttr(options.alignment));
  func->setAttr("mw.lower_bound", builder.getI64IntegerAttr(result.lowerBound));
  numPlanned += planned.size();
  numArenaBytes += result.arenaSize;
  return success();
}

} // namespace

void mlir::mw::mirrorMwStaticArenaOptions(PassOptionsMirror &into) {
  MwStaticArenaPass::mirrorOptions(into);
}
