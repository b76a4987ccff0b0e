//===- BufferLiveness.cpp - Buffer lifetimes over the op order ------------===//
//
// Lifetimes of a function's buffers over the linear order of its entry block,
// and the conservative rules that decide whether a buffer may be placed in a
// static arena (see BufferLiveness.h).
//
//===----------------------------------------------------------------------===//

#include "memwall/Analysis/BufferLiveness.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

using namespace mlir;
using namespace mlir::mw;

std::optional<uint64_t> mw::getStaticByteSize(MemRefType type,
                                              const DataLayout &layout) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity())
    return std::nullopt;
  Type elem = type.getElementType();
  if (!isa<IntegerType, FloatType, IndexType, ComplexType, VectorType>(elem))
    return std::nullopt;
  if (auto vector = dyn_cast<VectorType>(elem); vector && vector.isScalable())
    return std::nullopt;
  // The LLVM lowering indexes memrefs with GEPs over the element type, so an
  // element occupies its size rounded up to its ABI alignment (16 bytes for
  // vector<3xf32>).
  uint64_t stride = llvm::alignTo(layout.getTypeSize(elem).getFixedValue(),
                                  layout.getTypeABIAlignment(elem));
  bool overflow = false;
  uint64_t bytes = llvm::SaturatingMultiply(
      stride, static_cast<uint64_t>(type.getNumElements()), &overflow);
  if (overflow)
    return std::nullopt;
  return bytes;
}

std::string mw::getBufferName(Operation *op) {
  if (auto attr = op->getAttrOfType<StringAttr>("mw.buffer"))
    return attr.getValue().str();
  std::string name;
  op->getLoc()->walk([&](Location loc) {
    if (auto named = dyn_cast<NameLoc>(loc)) {
      name = named.getName().getValue().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
}

/// Whether `user` only reads or writes the memory of `value` (a load, store,
/// copy, linalg op on memrefs...) without creating an alias of it or capturing
/// its address.
static bool isPlainAccess(Operation *user, Value value) {
  // Shape queries: the shapes planned are static.
  if (isa<memref::DimOp, memref::RankOp>(user))
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(user);
  if (!effects)
    return false;
  // A memref or tensor result may alias the buffer (bufferization.to_tensor
  // reads nothing yet returns the memory as a tensor); scalars and vectors
  // are copies.
  if (llvm::any_of(user->getResultTypes(),
                   [](Type t) { return isa<BaseMemRefType, TensorType>(t); }))
    return false;
  SmallVector<MemoryEffects::EffectInstance> onValue;
  effects.getEffectsOnValue(value, onValue);
  // An op without effects on the memref uses it as a value (stores it,
  // extracts its pointer, selects between memrefs): an escape.
  if (onValue.empty())
    return false;
  return llvm::all_of(onValue, [](const MemoryEffects::EffectInstance &e) {
    return isa<MemoryEffects::Read, MemoryEffects::Write>(e.getEffect());
  });
}

/// The closest ancestor of `op` whose regions may run after it returns
/// (async.execute), or null. The async dialect is matched by name so that
/// Memwall does not link it.
static Operation *findAsyncAncestor(Operation *op) {
  for (Operation *parent = op->getParentOp();
       parent && !isa<FunctionOpInterface>(parent);
       parent = parent->getParentOp())
    if (parent->getName().getStringRef() == "async.execute")
      return parent;
  return nullptr;
}

/// Why an allocation cannot be planned before looking at its uses, or empty.
static std::string allocationReason(Operation *alloc, Block *entry) {
  if (isa<memref::AllocaOp>(alloc))
    return "stack allocation (memref.alloca)";
  if (alloc->getBlock() != entry) {
    for (Operation *parent = alloc->getParentOp();
         parent && !isa<FunctionOpInterface>(parent);
         parent = parent->getParentOp())
      if (isa<LoopLikeOpInterface>(parent))
        return "allocation inside a loop body";
    if (alloc->getParentOp() && !isa<FunctionOpInterface>(alloc->getParentOp()))
      return ("allocation inside a region of '" +
              alloc->getParentOp()->getName().getStringRef() + "'")
          .str();
    return "allocation outside the entry block";
  }
  if (alloc->hasAttr("mw.arena"))
    return "arena of an existing plan";
  if (alloc->getNumOperands() != 0)
    return "allocation with dynamic sizes";
  return "";
}

/// Why a buffer of `type` cannot be planned, or empty.
static std::string typeReason(Type type, std::optional<uint64_t> bytes) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return "buffer of unranked type";
  if (!memref.hasStaticShape())
    return "allocation with dynamic sizes";
  if (!memref.getLayout().isIdentity())
    return "allocation with a non-identity layout";
  if (memref.getMemorySpace())
    return "allocation in a non-default memory space";
  if (!bytes) {
    std::string reason;
    llvm::raw_string_ostream os(reason);
    os << "allocation of element type '" << memref.getElementType()
       << "' without a known size";
    return reason;
  }
  return "";
}

BufferLiveness::BufferLiveness(Operation *op) {
  numberOps(op);
  if (!entry)
    return;
  DataLayout layout = DataLayout::closest(op);
  SmallVector<Value> allocs;
  op->walk<WalkOrder::PreOrder>([&](Operation *nested) {
    if (isa<memref::AllocOp, memref::AllocaOp>(nested))
      allocs.push_back(nested->getResult(0));
  });
  for (Value alloc : allocs)
    addBuffer(alloc, layout);
}

BufferLiveness::BufferLiveness(Operation *op, ArrayRef<Value> roots) {
  numberOps(op);
  if (!entry)
    return;
  DataLayout layout = DataLayout::closest(op);
  for (Value root : roots)
    addBuffer(root, layout);
}

void BufferLiveness::numberOps(Operation *op) {
  function = op;
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func || func.isExternal())
    return;
  entry = &func.getFunctionBody().front();
  for (Operation &top : *entry) {
    positions[&top] = ops.size();
    ops.push_back(&top);
  }
}

int64_t BufferLiveness::getPosition(Operation *op) const {
  if (!entry)
    return -1;
  Operation *top = entry->findAncestorOpInBlock(*op);
  if (!top)
    return -1;
  return positions.lookup(top);
}

void BufferLiveness::addBuffer(Value root, const DataLayout &layout) {
  LiveBuffer buffer;
  buffer.value = root;
  buffer.definingOp = root.getDefiningOp();

  // Names are unique so that diagnostics and the exported CSV can tell
  // buffers apart.
  std::string name =
      buffer.definingOp ? getBufferName(buffer.definingOp) : std::string();
  if (name.empty())
    name = "buffer" + std::to_string(buffers.size());
  buffer.name = name;
  if (usedNames.contains(buffer.name)) {
    unsigned &k = nextSuffix.try_emplace(name, 1).first->second;
    do
      buffer.name = name + "_" + std::to_string(k++);
    while (usedNames.contains(buffer.name));
  }
  usedNames.insert(buffer.name);

  std::optional<uint64_t> bytes;
  if (auto memref = dyn_cast<MemRefType>(root.getType()))
    bytes = getStaticByteSize(memref, layout);
  buffer.sizeInBytes = bytes.value_or(0);

  if (buffer.definingOp &&
      isa<memref::AllocOp, memref::AllocaOp>(buffer.definingOp))
    buffer.reason = allocationReason(buffer.definingOp, entry);
  else if (!buffer.definingOp || getPosition(buffer.definingOp) < 0)
    buffer.reason = "buffer defined outside the entry block";
  if (buffer.isTransient())
    buffer.reason = typeReason(root.getType(), bytes);
  if (!buffer.isTransient()) {
    buffer.reasonOp = buffer.definingOp;
    buffers.push_back(std::move(buffer));
    return;
  }
  analyzeUses(buffer);
  buffers.push_back(std::move(buffer));
}

void BufferLiveness::analyzeUses(LiveBuffer &buffer) {
  int64_t start = getPosition(buffer.definingOp);
  int64_t last = start;

  // The most serious reason found, then the earliest in op order, so the
  // diagnostic does not depend on use-list order.
  int bestRank = 0;
  int64_t bestPosition = std::numeric_limits<int64_t>::max();
  auto problem = [&](Operation *user, int rank, std::string reason) {
    int64_t position = getPosition(user);
    if (position < 0)
      position = std::numeric_limits<int64_t>::max();
    if (rank < bestRank || (rank == bestRank && position >= bestPosition))
      return;
    bestRank = rank;
    bestPosition = position;
    buffer.reason = std::move(reason);
    buffer.reasonOp = user;
  };

  llvm::SetVector<Value> aliases;
  aliases.insert(buffer.value);
  for (size_t i = 0; i < aliases.size(); ++i) {
    Value value = aliases[i];
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (isa<memref::DeallocOp>(user)) {
        if (value == buffer.value)
          buffer.deallocs.push_back(user);
        else
          problem(user, 3, "buffer deallocated through an alias");
        continue;
      }
      int64_t position = getPosition(user);
      if (position < 0) {
        problem(user, 2, "buffer used outside the entry block");
        continue;
      }
      // A region that runs asynchronously may outlive its enclosing op.
      if (Operation *async = findAsyncAncestor(user)) {
        problem(async, 3,
                ("buffer used inside '" + async->getName().getStringRef() + "'")
                    .str());
        continue;
      }
      if (user->hasTrait<OpTrait::ReturnLike>() &&
          user->getParentOp() == function) {
        problem(user, 1, "returned buffer");
        continue;
      }
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == value) {
        last = std::max(last, position);
        for (Value result : user->getResults())
          if (isa<BaseMemRefType>(result.getType()))
            aliases.insert(result);
        continue;
      }
      if (isPlainAccess(user, value)) {
        last = std::max(last, position);
        continue;
      }
      problem(user, 3,
              ("buffer escaping into '" + user->getName().getStringRef() + "'")
                  .str());
    }
  }
  if (!buffer.isTransient()) {
    buffer.deallocs.clear();
    return;
  }
  buffer.start = start;
  buffer.end = last + 1;
}

void BufferLiveness::print(raw_ostream &os) const {
  os << "buffer liveness";
  if (auto name = function ? function->getAttrOfType<StringAttr>(
                                 SymbolTable::getSymbolAttrName())
                           : StringAttr())
    os << " of @" << name.getValue();
  os << ": " << ops.size() << " ops\n";
  for (const LiveBuffer &buffer : buffers) {
    os << "  " << buffer.name << ": " << buffer.sizeInBytes << " B, ";
    if (buffer.isTransient())
      os << "[" << buffer.start << ", " << buffer.end << ")";
    else
      os << "not planned (" << buffer.reason << ")";
    os << "\n";
  }
}
