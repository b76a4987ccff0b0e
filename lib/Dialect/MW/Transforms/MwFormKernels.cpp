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

/// Whether `op` is the last user of `value` in `op`'s block (every other user
/// is an earlier op of the same block).
bool diesAt(Value value, Operation *op, const OpOrder &order) {
  auto here = order.find(op);
  for (Operation *user : value.getUsers()) {
    if (user == op)
      continue;
    Operation *inBlock = op->getBlock()->findAncestorOpInBlock(*user);
    if (!inBlock)
      return false;
    auto there = order.find(inBlock);
    bool before = here != order.end() && there != order.end()
                      ? there->second < here->second
                      : inBlock->isBeforeInBlock(op);
    if (!before)
      return false;
  }
  return true;
}

/// The destination of `op`'s result `index`: an operand it may overwrite, or
/// a new tensor.empty built at `builder`'s insertion point.
Value chooseDestination(OpBuilder &builder, Operation *op, unsigned index,
                        const OpOrder &order) {
  Value result = op->getResult(index);
  bool isUpdate = isa<AdamWOp, SgdOp, LossScaleUpdateOp>(op);
  if (isUpdate) {
    if (std::optional<unsigned> tied = getInPlaceOperand(op, index))
      return op->getOperand(*tied);
  } else if (getInPlaceOperand(op, index)) {
    // Among operands of the result's type that are not function arguments,
    // prefer one whose last use is here.
    Value first;
    for (Value operand : op->getOperands()) {
      if (operand.getType() != result.getType() || isa<BlockArgument>(operand))
        continue;
      if (diesAt(operand, op, order))
        return operand;
      if (!first)
        first = operand;
    }
    if (first)
      return first;
  }
  auto type = cast<RankedTensorType>(result.getType());
  return builder.create<tensor::EmptyOp>(op->getLoc(), type.getShape(),
                                         type.getElementType());
}

struct MwFormKernelsPass
    : public mw::impl::MwFormKernelsBase<MwFormKernelsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      // A ZeRO step's collectives become kernels too; they have no
      // in-place rule, so their results get buffers of their own.
      bool isMw = isa_and_nonnull<MWDialect>(op->getDialect()) &&
                  !isa<KernelOp, YieldOp, ReshapeOp>(op);
      if ((isMw || isRuntimeCollective(op)) &&
          !op->getParentOfType<KernelOp>())
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
