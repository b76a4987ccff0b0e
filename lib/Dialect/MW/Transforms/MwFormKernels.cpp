//===- MwFormKernels.cpp - --mw-form-kernels ------------------------------===//
//
// Wraps each mw op (and each mesh collective of a ZeRO step) in an mw.kernel in destination-passing style and picks its
// destinations, so that One-Shot Bufferize can reuse dying inputs' buffers
// and update optimizer state in place (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "memwall/Dialect/MW/IR/MWOps.h"
#include "memwall/Dialect/MW/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::mw {
#define GEN_PASS_DEF_MWFORMKERNELS
#include "memwall/Dialect/MW/Transforms/Passes.h.inc"
} // namespace mlir::mw

using namespace mlir;
using namespace mlir::mw;

namespace {

/// Positions of ops in their blocks, taken before the pass inserts anything
/// and kept for the kernels that replace ops. Operation::isBeforeInBlock
/// would renumber the whole block after every insertion: quadratic on the
/// 17,000-op steps that rematerialization makes.
using OpOrder = llvm::DenseMap<Operation *, unsigned>;

/// Whether a user of `value` other than `op` comes after `op` in `op`'s
/// block, or outside it.
bool usedAfter(Value value, Operation *op, const OpOrder &order) {
  auto here = order.find(op);
  for (Operation *user : value.getUsers()) {
    if (user == op)
      continue;
    Operation *inBlock = op->getBlock()->findAncestorOpInBlock(*user);
    if (!inBlock)
      return true;
    auto there = order.find(inBlock);
    bool before = here != order.end() && there != order.end()
                      ? there->second < here->second
                      : inBlock->isBeforeInBlock(op);
    if (!before)
      return true;
  }
  return false;
}

/// Whether a value that shares `value`'s buffer through mw.reshape views
/// (the reshape chain's root and every reshape of it, transitively; not
/// `value` itself) is used after `op`. Writing over `value` in place there
/// would make One-Shot Bufferize copy that view instead of giving the write
/// a fresh buffer (it settles the conflict at the view), and a plan has no
/// copies: such a `value` is never a destination.
bool viewUsedAfter(Value value, Operation *op, const OpOrder &order) {
  Value root = value;
  while (auto reshape = root.getDefiningOp<ReshapeOp>())
    root = reshape.getInput();
  SmallVector<Value> views{root};
  while (!views.empty()) {
    Value view = views.pop_back_val();
    if (view != value && usedAfter(view, op, order))
      return true;
    for (Operation *user : view.getUsers())
      if (auto reshape = dyn_cast<ReshapeOp>(user))
        views.push_back(reshape.getResult());
  }
  return false;
}

/// Whether `op` is the last user of `value` and of every view of its buffer
/// in `op`'s block (every other user is an earlier op of the same block).
bool diesAt(Value value, Operation *op, const OpOrder &order) {
  return !usedAfter(value, op, order) && !viewUsedAfter(value, op, order);
}

/// The function argument among `op`'s operands that `result` replaces: the
/// function returns `result` under the argument's mw.name (a parameter or
/// state updated by the step, e.g. fp16's skip-on-overflow select of the old
/// and the new value). Null when there is none.
Value replacedArgument(Operation *op, Value result) {
  auto func = op->getParentOfType<FunctionOpInterface>();
  if (!func)
    return {};
  for (OpOperand &use : result.getUses()) {
    Operation *user = use.getOwner();
    if (!user->hasTrait<mlir::OpTrait::ReturnLike>() ||
        user->getParentOp() != func.getOperation())
      continue;
    auto resultName = func.getResultAttrOfType<StringAttr>(
        use.getOperandNumber(), "mw.name");
    if (!resultName)
      continue;
    for (Value operand : op->getOperands()) {
      auto arg = dyn_cast<BlockArgument>(operand);
      if (!arg || arg.getOwner() != &func.getFunctionBody().front() ||
          operand.getType() != result.getType())
        continue;
      if (func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "mw.name") ==
          resultName)
        return operand;
    }
  }
  return {};
}

/// The destination of `op`'s result `index`: an operand it may overwrite, or
/// a new tensor.empty built at `builder`'s insertion point.
Value chooseDestination(OpBuilder &builder, Operation *op, unsigned index,
                        const OpOrder &order) {
  Value result = op->getResult(index);
  // Optimizer updates, and the KV cache write, which updates the cache in
  // place (its result is tied to the cache operand).
  bool isUpdate = isa<AdamWOp, SgdOp, LossScaleUpdateOp, KvCacheWriteOp>(op);
  if (isUpdate) {
    if (std::optional<unsigned> tied = getInPlaceOperand(op, index))
      return op->getOperand(*tied);
  } else if (getInPlaceOperand(op, index)) {
    // fp16's skip-on-overflow select returns the new value of a parameter
    // or state argument: it goes into that argument's buffer, as the
    // optimizer's results do, so the model states stay where they are
    // instead of moving to result buffers of their own (a second copy of
    // every parameter and optimizer state). Other elementwise ops keep
    // their own rule: the step counter's `step + 1` could go into the
    // counter too, but it is 8 bytes.
    if (isa<SelectOp>(op))
      if (Value argument = replacedArgument(op, result))
        return argument;
    // Among operands of the result's type that are not function arguments,
    // prefer one whose last use is here.
    Value first;
    for (Value operand : op->getOperands()) {
      if (operand.getType() != result.getType() || isa<BlockArgument>(operand))
        continue;
      if (diesAt(operand, op, order))
        return operand;
      // The logits' gradient goes into the logits only where they die:
      // otherwise One-Shot would copy 4 bytes a logit to make room.
      if (!first && !isa<CrossEntropyGradOp>(op) &&
          !viewUsedAfter(operand, op, order))
        first = operand;
    }
    if (first)
      return first;
  }
  auto type = cast<RankedTensorType>(result.getType());
  return builder.create<tensor::EmptyOp>(op->getLoc(), type.getShape(),
                                         type.getElementType());
}

/// The destinations of the results of `fusion` (the fusion contract's
/// aliasing rule, docs/fusion.md): a horizontal kernel's updates go into the
/// parameters and states they replace; a loop kernel's result, and a row or
/// matmul kernel's result of the iteration shape (an epilogue's, not the
/// matmul's own), may go into an input of its type that the kernel reads
/// only at the output's own index (a row kernel's row ops read it along the
/// row, whole rows before writing them; a matmul kernel's epilogue reads it
/// after the product: an accumulator, C += A B; one whose last use is here
/// first), never a function argument; every other result into a
/// tensor.empty built at `builder`'s insertion point.
SmallVector<Value> chooseFusionDestinations(OpBuilder &builder,
                                            FusionOp fusion,
                                            const OpOrder &order) {
  SmallVector<Value> outs;
  Block &body = fusion.getBody().front();
  Operation *yield = fusion.getYield();
  llvm::SmallDenseSet<unsigned, 8> taken;
  for (auto [i, type] : llvm::enumerate(fusion.getResultTypes())) {
    Value dest;
    Value yielded = yield->getOperand(i);
    if (fusion.getKind() == FusionKind::horizontal) {
      auto def = cast<OpResult>(yielded);
      if (std::optional<unsigned> tied =
              getInPlaceOperand(def.getOwner(), def.getResultNumber()))
        if (auto arg =
                dyn_cast<BlockArgument>(def.getOwner()->getOperand(*tied)))
          dest = fusion.getInputs()[arg.getArgNumber()];
    } else if (fusion.getKind() == FusionKind::loop ||
               (fusion.getKind() != FusionKind::horizontal &&
                cast<RankedTensorType>(type).getShape() ==
                    fusion.getIterationShape() &&
                !(fusion.getKind() == FusionKind::matmul &&
                  isa_and_nonnull<MatmulOp>(yielded.getDefiningOp())))) {
      bool wholeRows = fusion.getKind() == FusionKind::row;
      std::optional<unsigned> first;
      for (auto [j, in] : llvm::enumerate(fusion.getInputs())) {
        if (in.getType() != type || isa<BlockArgument>(in) ||
            taken.contains(j) ||
            !readsArgumentAtOutputIndex(body, j, wholeRows))
          continue;
        if (diesAt(in, fusion, order)) {
          first = j;
          break;
        }
        if (!first && !viewUsedAfter(in, fusion, order))
          first = j;
      }
      if (first) {
        dest = fusion.getInputs()[*first];
        taken.insert(*first);
      }
    }
    if (!dest) {
      auto shaped = cast<RankedTensorType>(type);
      dest = builder.create<tensor::EmptyOp>(
          fusion.getLoc(), shaped.getShape(), shaped.getElementType());
    }
    outs.push_back(dest);
  }
  return outs;
}

/// Replaces `fusion` by one mw.kernel whose body is the fusion's body.
void formFusedKernel(OpBuilder &builder, FusionOp fusion, OpOrder &order) {
  builder.setInsertionPoint(fusion);
  SmallVector<Value> outs = chooseFusionDestinations(builder, fusion, order);
  auto kernel = builder.create<KernelOp>(
      fusion.getLoc(), fusion.getResultTypes(), fusion.getInputs(), outs);
  kernel.getBody().takeBody(fusion.getBody());
  kernel->setDiscardableAttrs(fusion->getDiscardableAttrDictionary());
  fusion->replaceAllUsesWith(kernel.getResults());
  if (auto it = order.find(fusion); it != order.end()) {
    unsigned position = it->second;
    order.erase(it);
    order[kernel] = position;
  }
  fusion->erase();
}

struct MwFormKernelsPass
    : public mw::impl::MwFormKernelsBase<MwFormKernelsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      // A ZeRO step's collectives become kernels too; they have no
      // in-place rule, so their results get buffers of their own. An
      // mw.fusion becomes one kernel; its body's ops stay in it.
      bool isMw = isa_and_nonnull<MWDialect>(op->getDialect()) &&
                  !isa<KernelOp, YieldOp, ReshapeOp>(op);
      if ((isMw || isRuntimeCollective(op)) &&
          !op->getParentOfType<KernelOp>() &&
          !op->getParentOfType<FusionOp>())
        ops.push_back(op);
    });
    OpOrder order;
    getOperation()->walk([&](Block *block) {
      unsigned position = 0;
      for (Operation &op : *block)
        order[&op] = position++;
    });
    OpBuilder builder(&getContext());
    for (Operation *op : ops) {
      if (auto fusion = dyn_cast<FusionOp>(op)) {
        formFusedKernel(builder, fusion, order);
        continue;
      }
      builder.setInsertionPoint(op);
      SmallVector<Value> outs;
      for (unsigned r = 0, e = op->getNumResults(); r < e; ++r)
        outs.push_back(chooseDestination(builder, op, r, order));
      KernelOp kernel = buildKernelAround(builder, op, op->getOperands(), outs,
                                          op->getResultTypes());
      op->replaceAllUsesWith(kernel.getResults());
      if (auto it = order.find(op); it != order.end()) {
        unsigned position = it->second;
        order.erase(it); // its address may be reused by a new op
        order[kernel] = position;
      }
      op->erase();
    }
  }
};

} // namespace
