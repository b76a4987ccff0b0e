//===- ArenaPlan.cpp - A static arena plan read back from the IR ----------===//
//
// Recovers a plan from the IR only (see ArenaPlan.h), so that checking and
// exporting a plan trust nothing the planner computed.
//
//===----------------------------------------------------------------------===//

#include "ArenaPlan.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::mw;

FailureOr<std::optional<ArenaPlan>> mw::readArenaPlan(func::FuncOp func) {
  if (func.isExternal())
    return std::optional<ArenaPlan>();
  SmallVector<Value> arenas;
  for (BlockArgument arg : func.getArguments())
    if (func.getArgAttr(arg.getArgNumber(), "mw.arena"))
      arenas.push_back(arg);
  func.walk([&](memref::AllocOp alloc) {
    if (alloc->hasAttr("mw.arena"))
      arenas.push_back(alloc.getResult());
  });
  if (arenas.empty()) {
    if (func->hasAttr("mw.arena_size")) {
      func.emitError() << "@" << func.getSymName()
                       << " records mw.arena_size but has no arena (a "
                          "memref.alloc or argument marked mw.arena)";
      return failure();
    }
    return std::optional<ArenaPlan>();
  }
  if (arenas.size() > 1) {
    func.emitError() << "@" << func.getSymName() << " has " << arenas.size()
                     << " arenas (marked mw.arena); a plan has one";
    return failure();
  }

  ArenaPlan plan;
  plan.arena = arenas.front();
  Location arenaLoc = plan.arena.getLoc();
  auto type = dyn_cast<MemRefType>(plan.arena.getType());
  if (!type || type.getRank() != 1 || !type.hasStaticShape() ||
      !type.getElementType().isInteger(8) || !type.getLayout().isIdentity() ||
      type.getMemorySpace()) {
    emitError(arenaLoc) << "the arena must be a static memref<Nxi8>, got "
                        << plan.arena.getType();
    return failure();
  }
  if (Operation *alloc = plan.arena.getDefiningOp();
      alloc && alloc->getBlock() != &func.getBody().front()) {
    emitError(arenaLoc) << "the arena must be allocated in the entry block";
    return failure();
  }
  plan.arenaSize = type.getDimSize(0);

  auto attrValue = [&](StringRef name) -> FailureOr<std::optional<int64_t>> {
    Attribute attr = func->getAttr(name);
    if (!attr)
      return std::optional<int64_t>();
    auto integer = dyn_cast<IntegerAttr>(attr);
    if (!integer || integer.getValue().isNegative()) {
      func.emitError() << name << " must be a non-negative integer, got "
                       << attr;
      return failure();
    }
    return std::optional<int64_t>(integer.getInt());
  };
  FailureOr<std::optional<int64_t>> size = attrValue("mw.arena_size");
  FailureOr<std::optional<int64_t>> lowerBound = attrValue("mw.lower_bound");
  FailureOr<std::optional<int64_t>> alignment = attrValue("mw.arena_alignment");
  if (failed(size) || failed(lowerBound) || failed(alignment))
    return failure();
  if (*size && static_cast<uint64_t>(**size) != plan.arenaSize) {
    func.emitError() << "mw.arena_size = " << **size << " but the arena holds "
                     << plan.arenaSize << " bytes";
    return failure();
  }
  if (*lowerBound && static_cast<uint64_t>(**lowerBound) > plan.arenaSize) {
    func.emitError() << "mw.lower_bound = " << **lowerBound
                     << " exceeds the arena's " << plan.arenaSize << " bytes";
    return failure();
  }
  if (*alignment) {
    if (**alignment == 0) {
      func.emitError() << "mw.arena_alignment must be positive";
      return failure();
    }
    plan.alignment = static_cast<uint64_t>(**alignment);
  }

  // Only views and deallocations of the arena can be reasoned about.
  for (Operation *user : plan.arena.getUsers()) {
    if (auto dealloc = dyn_cast<memref::DeallocOp>(user)) {
      plan.deallocs.push_back(dealloc);
      continue;
    }
    auto view = dyn_cast<memref::ViewOp>(user);
    if (view && view.getSource() == plan.arena)
      continue;
    user->emitError() << "the arena is used by '" << user->getName()
                      << "', which the plan check cannot see through";
    return failure();
  }
  func.walk<WalkOrder::PreOrder>([&](memref::ViewOp view) {
    if (view.getSource() == plan.arena)
      plan.views.push_back(view);
  });

  SmallVector<Value> roots;
  for (memref::ViewOp view : plan.views) {
    APInt offset;
    if (!matchPattern(view.getByteShift(), m_ConstantInt(&offset))) {
      view.emitError() << "the offset of this view of the arena is not a "
                          "constant";
      return failure();
    }
    if (offset.isNegative()) {
      view.emitError() << "negative offset " << offset.getSExtValue()
                       << " into the arena";
      return failure();
    }
    if (!view.getSizes().empty()) {
      view.emitError() << "view of the arena with dynamic sizes";
      return failure();
    }
    plan.offsets.push_back(offset.getZExtValue());
    roots.push_back(view.getResult());
  }
  plan.liveness = std::make_unique<BufferLiveness>(func, roots);
  return std::optional<ArenaPlan>(std::move(plan));
}
