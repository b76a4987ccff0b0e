//===- TensorSchedule.cpp - Live tensor bytes of a step's op order --------===//
//
// The live-bytes model and the in-place write rule shared by --mw-sink and
// --mw-hoist-updates (TensorSchedule.h).
//
//===----------------------------------------------------------------------===//

#include "TensorSchedule.h"

#include "memwall/Analysis/StepStructure.h"
#include "memwall/Dialect/MW/IR/MWOps.h"

#include "mlir/Dialect/Mesh/IR/MeshOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

#include <numeric>

using namespace mlir;
using namespace mlir::mw;

/// The ops whose tied results are written into the operand they replace,
/// whatever the order: the optimizer's updates and the KV cache write.
static bool isInPlaceUpdate(Operation *op) {
  return isa<AdamWOp, SgdOp, LossScaleUpdateOp, KvCacheWriteOp>(op);
}

bool mlir::mw::updatesArgument(Operation *op, unsigned index) {
  if (auto fusion = dyn_cast<FusionOp>(op))
    return fusion.getKind() == FusionKind::horizontal;
  if (!isInPlaceUpdate(op))
    return false;
  std::optional<unsigned> tied = getInPlaceOperand(op, index);
  return tied && isa<BlockArgument>(op->getOperand(*tied));
}

bool mlir::mw::isHoistableUpdate(Operation *op) {
  if (!isa<AdamWOp, SgdOp>(op))
    return false;
  for (unsigned r = 0, e = op->getNumResults(); r < e; ++r)
    if (getInPlaceOperand(op, r) && !updatesArgument(op, r))
      return false;
  return true;
}

bool mlir::mw::mayFeedUpdates(Operation *op) {
  if (op->getNumRegions() != 0 || op->getNumResults() == 0 ||
      !isMemoryEffectFree(op))
    return false;
  if (isa<mesh::AllSliceOp>(op))
    return true;
  return (isPointwiseOp(op) || isa<ConcatOp>(op)) && !isa<SelectOp>(op);
}

std::optional<int64_t> mlir::mw::updateBlockOf(Operation *update) {
  for (Value r : update->getResults())
    for (Operation *user : r.getUsers())
      if (!user->hasTrait<mlir::OpTrait::ReturnLike>())
        return std::nullopt;
  auto arg = dyn_cast<BlockArgument>(update->getOperand(0));
  auto func = update->getParentOfType<FunctionOpInterface>();
  if (!arg || !func || arg.getOwner() != &func.getFunctionBody().front())
    return std::nullopt;
  auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "mw.name");
  if (!name)
    return std::nullopt;
  return layerNumberOf(name.getValue());
}

SmallVector<Value> mlir::mw::getOverwrittenOperands(Operation *op) {
  SmallVector<Value> overwritten;
  if (!isInPlaceUpdate(op))
    return overwritten;
  for (unsigned r = 0, e = op->getNumResults(); r < e; ++r)
    if (std::optional<unsigned> tied = getInPlaceOperand(op, r))
      if (!llvm::is_contained(overwritten, op->getOperand(*tied)))
        overwritten.push_back(op->getOperand(*tied));
  return overwritten;
}

void mlir::mw::forEachBufferReader(Block &body, Value value, Operation *except,
                                   function_ref<void(Operation *)> fn) {
  SmallVector<Value> work{value};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      Operation *top = body.findAncestorOpInBlock(*user);
      if (!top || top == except || top->hasTrait<mlir::OpTrait::IsTerminator>())
        continue;
      fn(top);
      if (auto reshape = dyn_cast<ReshapeOp>(user))
        work.push_back(reshape.getResult());
    }
  }
}

TensorSchedule::TensorSchedule(Block &body, bool fusedEpilogues) {
  llvm::DenseMap<Operation *, int> index;
  llvm::DenseMap<Value, int> bufferOf;
  for (Operation &op : body.without_terminator()) {
    int i = static_cast<int>(ops.size());
    index[&op] = i;
    ops.push_back(&op);
    defines.emplace_back();
    for (Value r : op.getResults()) {
      if (!isa<RankedTensorType>(r.getType()))
        continue;
      if (isa<ReshapeOp>(op))
        if (auto it = bufferOf.find(op.getOperand(0)); it != bufferOf.end()) {
          bufferOf[r] = it->second; // a view of its operand's buffer
          continue;
        }
      if (updatesArgument(&op, cast<OpResult>(r).getResultNumber()))
        continue; // the argument's own buffer: persistent
      int b = static_cast<int>(bytes.size());
      bufferOf[r] = b;
      bytes.push_back(mw::detail::tensorBytes(r.getType()));
      def.push_back(i);
      readers.emplace_back();
      returned.push_back(false);
      tied.push_back(-1);
      defines[i].push_back(b);
      std::optional<unsigned> t =
          getInPlaceOperand(&op, cast<OpResult>(r).getResultNumber());
      if (t && op.getOperand(*t).getType() == r.getType())
        if (auto it = bufferOf.find(op.getOperand(*t)); it != bufferOf.end())
          tied[b] = it->second;
    }
  }
  Operation *terminator = body.getTerminator();
  for (Operation *op : ops)
    op->walk([&](Operation *nested) {
      for (Value v : nested->getOperands()) {
        auto it = bufferOf.find(v);
        if (it == bufferOf.end())
          continue;
        Operation *top = body.findAncestorOpInBlock(*nested);
        readers[it->second].push_back(index.lookup(top));
      }
    });
  for (Value v : terminator->getOperands())
    if (auto it = bufferOf.find(v); it != bufferOf.end())
      returned[it->second] = true;
  if (!fusedEpilogues)
    return;
  for (Operation *op : ops) {
    auto add = dyn_cast<AddOp>(op);
    if (!add)
      continue;
    for (unsigned side = 0; side < 2; ++side) {
      Value product = add->getOperand(side), other = add->getOperand(1 - side);
      auto mm = product.getDefiningOp<MatmulOp>();
      // The add right after the product, as --mw-chunk-loss and the models
      // write an epilogue (a later add is fused only within --mw-fuse's
      // window, and a reorder may come between).
      if (!mm || mm->getBlock() != &body || mm->getNextNode() != op ||
          !product.hasOneUse() || product.getType() != add.getType() ||
          other.getType() != add.getType() || other == product)
        continue;
      auto p = bufferOf.find(product);
      auto sum = bufferOf.find(add.getResult());
      if (p == bufferOf.end() || sum == bufferOf.end())
        break;
      bytes[p->second] = 0;
      auto acc = bufferOf.find(other);
      tied[sum->second] = acc == bufferOf.end() ? -1 : acc->second;
      break;
    }
  }
}

SmallVector<int64_t> TensorSchedule::profile(ArrayRef<int> order) const {
  size_t n = order.size();
  SmallVector<int> at(n);
  for (auto [p, op] : llvm::enumerate(order))
    at[op] = static_cast<int>(p);
  size_t nb = bytes.size();
  SmallVector<int> end(nb);
  for (size_t b = 0; b < nb; ++b) {
    end[b] = returned[b] ? static_cast<int>(n) - 1 : at[def[b]];
    for (int r : readers[b])
      end[b] = std::max(end[b], at[r]);
  }
  // A result written over a tied operand whose buffer's last reader is its
  // op shares that buffer: the two are one lifetime.
  SmallVector<int> group(nb);
  SmallVector<int64_t> delta(n + 1, 0);
  for (int op : order)
    for (int b : defines[op]) {
      group[b] = b;
      if (int t = tied[b]; t >= 0 && end[group[t]] == at[op]) {
        group[b] = group[t];
        end[group[t]] = std::max(end[group[t]], end[b]);
      }
    }
  for (size_t b = 0; b < nb; ++b) {
    if (group[b] != static_cast<int>(b))
      continue;
    delta[at[def[b]]] += bytes[b];
    delta[end[b] + 1] -= bytes[b];
  }
  SmallVector<int64_t> live(n);
  int64_t sum = 0;
  for (size_t p = 0; p < n; ++p)
    live[p] = sum += delta[p];
  return live;
}

int64_t TensorSchedule::peak(ArrayRef<int> order) const {
  SmallVector<int64_t> live = profile(order);
  return live.empty() ? 0 : *llvm::max_element(live);
}

int64_t TensorSchedule::peak() const {
  SmallVector<int> order(ops.size());
  std::iota(order.begin(), order.end(), 0);
  return peak(order);
}
