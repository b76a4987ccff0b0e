//===- StepStructure.cpp - Loss, forward pass, saved activations ----------===//
//
// The one definition of a step's loss, forward pass, saved activations and
// layers (StepStructure.h), shared by --mw-remat and --mw-memory-report.
//
//===----------------------------------------------------------------------===//

#include "memwall/Analysis/StepStructure.h"
#include "memwall/Dialect/MW/IR/MWOps.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::mw;

std::string mlir::mw::getLocationName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto call = dyn_cast<CallSiteLoc>(loc))
    return getLocationName(call.getCallee());
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations()) {
      std::string s = getLocationName(inner);
      if (!s.empty())
        return s;
    }
  return "";
}

std::string mlir::mw::getLayerPath(Operation *op) {
  if (auto layer = op->getAttrOfType<StringAttr>(kLayerAttrName))
    return layer.getValue().str();
  return getLocationName(op->getLoc());
}

std::optional<std::pair<std::string, std::string>>
mlir::mw::splitLayerPath(StringRef path) {
  SmallVector<StringRef> parts;
  path.split(parts, '.');
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].empty() || !llvm::all_of(parts[i], llvm::isDigit))
      continue;
    std::string block = llvm::join(ArrayRef(parts).take_front(i + 1), ".");
    std::string rest = llvm::join(ArrayRef(parts).drop_front(i + 1), ".");
    return std::make_pair(block, rest);
  }
  return std::nullopt;
}

std::optional<int64_t> mlir::mw::layerNumberOf(StringRef path) {
  auto split = splitLayerPath(path);
  if (!split)
    return std::nullopt;
  // The block ends with its number ("h.3", "model.layers.12", "3").
  StringRef number = StringRef(split->first).rsplit('.').second;
  if (number.empty())
    number = split->first;
  int64_t layer;
  if (number.getAsInteger(10, layer))
    return std::nullopt;
  return layer;
}

std::optional<unsigned> mlir::mw::findLossResult(FunctionOpInterface func) {
  if (func.isExternal() || !func.getFunctionBody().hasOneBlock())
    return std::nullopt;
  Operation *ret = func.getFunctionBody().front().getTerminator();
  if (!ret)
    return std::nullopt;
  // Preference ranks: 0 named "loss", 1 role output, 2 no role.
  std::optional<unsigned> best;
  int bestRank = 3;
  for (unsigned i = 0, e = ret->getNumOperands(); i < e; ++i) {
    Type type = ret->getOperand(i).getType();
    if (!isa<RankedTensorType, MemRefType>(type))
      continue;
    auto shaped = cast<ShapedType>(type);
    if (shaped.getRank() != 0 || !isa<FloatType>(shaped.getElementType()))
      continue;
    auto role = dyn_cast_or_null<RoleAttr>(
        func.getResultAttr(i, MWDialect::kRoleAttrName));
    if (role && role.getValue() != Role::output)
      continue;
    auto name = dyn_cast_or_null<StringAttr>(
        func.getResultAttr(i, MWDialect::kNameAttrName));
    int rank = name && name.getValue() == "loss" ? 0 : role ? 1 : 2;
    if (rank < bestRank) {
      best = i;
      bestRank = rank;
    }
  }
  return best;
}

Value mlir::mw::findLoss(FunctionOpInterface func) {
  std::optional<unsigned> index = findLossResult(func);
  if (!index)
    return Value();
  Value loss = func.getFunctionBody().front().getTerminator()->getOperand(*index);
  return isa<RankedTensorType>(loss.getType()) ? loss : Value();
}

bool StepStructure::isBackwardUse(OpOperand &use) const {
  Operation *user = topLevel(use.getOwner());
  if (!user || forward.contains(user) ||
      user->hasTrait<mlir::OpTrait::IsTerminator>())
    return false;
  // A tensor kernel's destination gives only its shape, never its contents
  // (MWOps.td, mw.kernel): not a read.
  if (auto kernel = dyn_cast<KernelOp>(use.getOwner()))
    if (kernel.isDpsInit(&use) && isa<TensorType>(use.get().getType()))
      return false;
  return true;
}

StepStructure::StepStructure(Operation *funcOp)
    : func(cast<FunctionOpInterface>(funcOp)) {
  if (func.isExternal() || !func.getFunctionBody().hasOneBlock())
    return;
  body = &func.getFunctionBody().front();
  loss = findLoss(func);
  if (!hasLoss())
    return;
  SmallVector<Operation *> work{loss.getDefiningOp()};
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (op->getBlock() != body || !forward.insert(op).second)
      continue;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp())
        work.push_back(def);
  }
  int64_t pos = 0;
  for (Operation &op : *body) {
    position[&op] = pos++;
    if (!forward.contains(&op))
      continue;
    forwardOps.push_back(&op);
    for (Value v : op.getResults()) {
      bool backwardUse = false, returned = false;
      for (OpOperand &use : v.getUses()) {
        backwardUse |= isBackwardUse(use);
        returned |= use.getOwner()->hasTrait<mlir::OpTrait::IsTerminator>();
      }
      if (!backwardUse)
        continue;
      saved.push_back(v);
      forced.push_back(returned || !isMemoryEffectFree(&op));
    }
  }
}

//===----------------------------------------------------------------------===//
// Saved activations, on tensors and on memrefs
//===----------------------------------------------------------------------===//

namespace {

/// Tensor form: StepStructure::saved as storage (findSavedActivations).
SmallVector<SavedActivation> savedTensors(const StepStructure &step) {
  SmallVector<SavedActivation> saved;
  llvm::DenseSet<Value> seen;
  for (Value v : step.saved) {
    Value storage = v;
    while (auto reshape = storage.getDefiningOp<ReshapeOp>())
      storage = reshape.getOperand();
    if (isa<BlockArgument>(storage) || !seen.insert(storage).second)
      continue;
    saved.push_back({storage, storage.getDefiningOp(), storage.getType()});
  }
  // In the order of the writers, as on memrefs.
  llvm::stable_sort(saved, [&](const SavedActivation &a,
                               const SavedActivation &b) {
    return step.position.lookup(step.topLevel(a.writer)) <
           step.position.lookup(step.topLevel(b.writer));
  });
  return saved;
}

/// The buffer a memref value stores into: through the views that change
/// only its shape or type (collapse/expand_shape, cast, subview), not
/// through memref.view, which carves a buffer of its own out of bytes (the
/// arena's buffers).
Value bufferOf(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>()) {
    if (isa<memref::ViewOp>(view.getOperation()))
      break;
    v = view.getViewSource();
  }
  return v;
}

/// Memref form: reaching writes over the entry block (findSavedActivations).
SmallVector<SavedActivation> savedBuffers(FunctionOpInterface func,
                                          unsigned lossIndex) {
  Block &body = func.getFunctionBody().front();
  struct Write {
    Operation *writer;
    Value buffer;
    Type type;
  };
  SmallVector<Write> writes;
  // The writes each buffer's next read sees: the last full write and the
  // partial ones after it.
  llvm::DenseMap<Value, SmallVector<unsigned>> reaching;
  // Per top-level op, the writes it reads.
  llvm::MapVector<Operation *, SmallVector<unsigned>> reads;
  auto read = [&](Operation *op, Value v) {
    auto it = reaching.find(bufferOf(v));
    if (it != reaching.end())
      llvm::append_range(reads[op], it->second);
  };
  for (Operation &op : body) {
    if (!llvm::any_of(op.getOperandTypes(), llvm::IsaPred<MemRefType>) ||
        isa<ViewLikeOpInterface>(op))
      continue;
    SmallVector<Value> written;
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (op.hasTrait<mlir::OpTrait::IsTerminator>() || !effects) {
      // Returned, or an op without declared effects: every memref operand
      // is read (and, for the latter, may be written: left out, as the
      // figure counts what kernels write).
      for (Value v : op.getOperands())
        if (isa<MemRefType>(v.getType()))
          read(&op, v);
      continue;
    }
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (auto &e : instances) {
      Value v = e.getValue();
      if (!v || !isa<MemRefType>(v.getType()))
        continue;
      if (isa<MemoryEffects::Read>(e.getEffect()))
        read(&op, v);
      else if (isa<MemoryEffects::Write>(e.getEffect()))
        written.push_back(v);
    }
    for (Value v : written) {
      Value buffer = bufferOf(v);
      bool full = mw::detail::tensorBytes(v.getType()) ==
                  mw::detail::tensorBytes(buffer.getType());
      SmallVector<unsigned> &live = reaching[buffer];
      if (full)
        live.clear();
      live.push_back(writes.size());
      writes.push_back({&op, buffer, v.getType()});
    }
  }
  // The forward part: the writers the loss's value depends on.
  Operation *ret = body.getTerminator();
  llvm::DenseSet<Operation *> forward;
  SmallVector<Operation *> work;
  for (unsigned w : reads.lookup(ret))
    if (bufferOf(writes[w].buffer) == bufferOf(ret->getOperand(lossIndex)))
      work.push_back(writes[w].writer);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!forward.insert(op).second)
      continue;
    for (unsigned w : reads.lookup(op))
      work.push_back(writes[w].writer);
  }
  llvm::BitVector isSaved(writes.size());
  for (auto &[op, seen] : reads)
    if (!forward.contains(op) && !op->hasTrait<mlir::OpTrait::IsTerminator>())
      for (unsigned w : seen)
        if (forward.contains(writes[w].writer))
          isSaved.set(w);
  SmallVector<SavedActivation> saved;
  for (unsigned w : isSaved.set_bits())
    saved.push_back({writes[w].buffer, writes[w].writer, writes[w].type});
  return saved;
}

} // namespace

SmallVector<SavedActivation>
mlir::mw::findSavedActivations(FunctionOpInterface func) {
  std::optional<unsigned> loss = findLossResult(func);
  if (!loss)
    return {};
  Block &body = func.getFunctionBody().front();
  if (isa<MemRefType>(body.getTerminator()->getOperand(*loss).getType()))
    return savedBuffers(func, *loss);
  return savedTensors(StepStructure(func));
}
