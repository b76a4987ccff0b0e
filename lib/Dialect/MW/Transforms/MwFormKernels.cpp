//===- MwFormKernels.cpp - --mw-form-kernels ------------------------------===//
//
// Wraps each mw op in an mw.kernel in destination-passing style and picks its
// destinations, so that One-Shot Bufferize can reuse dying inputs' buffers
// and update optimizer state in place (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "memwall/Dialect/MW/IR/MWOps.h"
#include "memwall/Dialect/MW/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::mw {
#define GEN_PASS_DEF_MWFORMKERNELS
#include "memwall/Dialect/MW/Transforms/Passes.h.inc"
} // namespace mlir::mw

using namespace mlir;
using namespace mlir::mw;

namespace {

/// Whether `op` is the last user of `value` in `op`'s block (every other user
/// is an earlier op of the same block).
bool diesAt(Value value, Operation *op) {
  for (Operation *user : value.getUsers()) {
    if (user == op)
      continue;
    Operation *inBlock = op->getBlock()->findAncestorOpInBlock(*user);
    if (!inBlock || !inBlock->isBeforeInBlock(op))
      return false;
  }
  return true;
}

/// The destination of `op`'s result `index`: an operand it may overwrite, or
/// a new tensor.empty built at `builder`'s insertion point.
Value chooseDestination(OpBuilder &builder, Operation *op, unsigned index) {
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
      if (diesAt(operand, op))
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
      if (isa_and_nonnull<MWDialect>(op->getDialect()) &&
          !isa<KernelOp, YieldOp, ReshapeOp>(op) &&
          !op->getParentOfType<KernelOp>())
        ops.push_back(op);
    });
    OpBuilder builder(&getContext());
    for (Operation *op : ops) {
      builder.setInsertionPoint(op);
      SmallVector<Value> outs;
      for (unsigned r = 0, e = op->getNumResults(); r < e; ++r)
        outs.push_back(chooseDestination(builder, op, r));
      KernelOp kernel = buildKernelAround(builder, op, op->getOperands(), outs,
                                          op->getResultTypes());
      op->replaceAllUsesWith(kernel.getResults());
      op->erase();
    }
  }
};

} // namespace
