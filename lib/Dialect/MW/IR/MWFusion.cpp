//===- MWFusion.cpp - mw.fusion and the ops a fused kernel may hold -------===//
//
// The kinds of fused kernel (loop, row, matmul, horizontal; docs/fusion.md)
// as predicates on ops, and mw.fusion's verifier and cost. --mw-fuse forms
// only what this verifier accepts, and --mw-form-kernels and the runtime rely
// on it.
//
//===----------------------------------------------------------------------===//

#include "memwall/Dialect/MW/IR/MWOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::mw;

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

bool mlir::mw::isPointwiseOp(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, MaximumOp, NegOp, ExpOp, LogOp,
             TanhOp, SqrtOp, RsqrtOp, ReciprocalOp, ReluOp, SigmoidOp, SiluOp,
             ClampOp, GeluOp, CastOp, SelectOp, ReluGradOp, SiluGradOp,
             GeluGradOp, ClampGradOp, SplatOp, ConstantOp, BroadcastToOp,
             ReshapeOp, TransposeOp, SliceOp>(op);
}

/// Whether `axes` is 0, 1, ..., rank - 2.
static bool allButLast(ArrayRef<int64_t> axes, int64_t rank) {
  if (rank < 2 || static_cast<int64_t>(axes.size()) != rank - 1)
    return false;
  for (auto [i, a] : llvm::enumerate(axes))
    if (a != static_cast<int64_t>(i))
      return false;
  return true;
}

bool mlir::mw::isColumnReduction(Operation *op) {
  auto sum = dyn_cast<ReduceSumOp>(op);
  return sum && allButLast(sum.getAxes(), sum.getInput().getType().getRank());
}

bool mlir::mw::isRowOp(Operation *op) {
  auto lastAxis = [](Value input, int64_t axis) {
    return axis == cast<RankedTensorType>(input.getType()).getRank() - 1;
  };
  auto lastOnly = [](Value input, ArrayRef<int64_t> axes) {
    int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
    return rank >= 1 && axes.size() == 1 && axes[0] == rank - 1;
  };
  if (isa<LayerNormOp, RmsNormOp>(op))
    return true;
  if (auto s = dyn_cast<SoftmaxOp>(op))
    return lastAxis(s.getInput(), s.getAxis());
  if (auto s = dyn_cast<LogSoftmaxOp>(op))
    return lastAxis(s.getInput(), s.getAxis());
  if (auto s = dyn_cast<SoftmaxGradOp>(op))
    return lastAxis(s.getOutput(), s.getAxis());
  if (auto s = dyn_cast<LogSoftmaxGradOp>(op))
    return lastAxis(s.getOutput(), s.getAxis());
  if (auto r = dyn_cast<ReduceSumOp>(op))
    return lastOnly(r.getInput(), r.getAxes());
  if (auto r = dyn_cast<ReduceMaxOp>(op))
    return lastOnly(r.getInput(), r.getAxes());
  if (auto r = dyn_cast<ReduceMeanOp>(op))
    return lastOnly(r.getInput(), r.getAxes());
  return false;
}

bool mlir::mw::readsAtOutputIndex(Operation *op, unsigned index) {
  if (!isPointwiseOp(op) || op->getNumResults() != 1 ||
      isa<BroadcastToOp, ReshapeOp, TransposeOp, SliceOp>(op))
    return false;
  // mw.select reads its scalar condition everywhere, its values at the
  // output's index.
  return shapeOf(op->getOperand(index)) == shapeOf(op->getResult(0));
}

ArrayRef<int64_t> FusionOp::getIterationShape() {
  Block &block = getBody().front();
  if (getKind() == FusionKind::matmul && !block.empty())
    if (auto matmul = dyn_cast<MatmulOp>(block.front()))
      return matmul.getType().getShape();
  if (getNumResults() == 0)
    return {};
  return shapeOf(getResult(0));
}

/// Whether `shape` is the row shape of `iteration`: without its last axis,
/// or with it as 1.
static bool isRowShape(ArrayRef<int64_t> shape, ArrayRef<int64_t> iteration) {
  if (iteration.empty())
    return false;
  ArrayRef<int64_t> rows = iteration.drop_back();
  if (shape == rows)
    return true;
  return shape.size() == iteration.size() && shape.drop_back() == rows &&
         shape.back() == 1;
}

LogicalResult FusionOp::verifyRegions() {
  Block &block = getBody().front();
  if (block.getNumArguments() != getInputs().size())
    return emitOpError("body has ")
           << block.getNumArguments() << " arguments, expected one per input ("
           << getInputs().size() << ")";
  for (auto [i, arg, in] : llvm::enumerate(block.getArguments(), getInputs()))
    if (arg.getType() != in.getType())
      return emitOpError("body argument #")
             << i << " has type " << arg.getType() << ", expected "
             << in.getType() << " (the type of input #" << i << ")";
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return emitOpError("body must end with mw.yield");
  if (yield.getValues().size() != getNumResults())
    return yield.emitOpError("yields ")
           << yield.getValues().size() << " values, expected one per result ("
           << getNumResults() << ")";
  if (getNumResults() == 0)
    return emitOpError("expects at least one result");
  for (auto [i, value, result] :
       llvm::enumerate(yield.getValues(), getResults()))
    if (value.getType() != result.getType())
      return yield.emitOpError("value #")
             << i << " has type " << value.getType() << ", expected "
             << result.getType() << " (the type of result #" << i << ")";
  for (Operation &op : block.without_terminator())
    if (!isa_and_nonnull<MWDialect>(op.getDialect()) ||
        isa<KernelOp, FusionOp>(op))
      return op.emitOpError("cannot appear in an mw.fusion body: its ops "
                            "must be mw ops on tensors");

  FusionKind kind = getKind();
  StringRef kindName = stringifyFusionKind(kind);
  if (kind == FusionKind::horizontal) {
    bool adamw = false, sgd = false;
    for (Operation &op : block.without_terminator()) {
      adamw |= isa<AdamWOp>(op);
      sgd |= isa<SgdOp>(op);
      if (!isa<AdamWOp, SgdOp>(op))
        return op.emitOpError("cannot appear in a horizontal mw.fusion: its "
                              "ops must be mw.adamw or mw.sgd updates");
      for (Value operand : op.getOperands())
        if (!isa<BlockArgument>(operand))
          return op.emitOpError("in a horizontal mw.fusion reads a value "
                                "computed in the body; every operand must be "
                                "a fusion input");
    }
    if (adamw && sgd)
      return emitOpError("horizontal fusion mixes mw.adamw and mw.sgd "
                         "updates");
    return success();
  }

  // loop, row, matmul: one iteration shape.
  Operation *first = block.empty() ? nullptr : &block.front();
  if (kind == FusionKind::matmul && (!first || !isa<MatmulOp>(first)))
    return emitOpError("matmul fusion must start with an mw.matmul");
  ArrayRef<int64_t> iteration = getIterationShape();
  bool anyRowOp = false;
  for (Operation &op : block.without_terminator()) {
    if (isColumnReduction(&op) && kind != FusionKind::row) {
      auto sum = cast<ReduceSumOp>(op);
      if (shapeOf(sum.getInput()) != iteration)
        return op.emitOpError("column reduction in a ")
               << kindName << " mw.fusion must reduce a value of the "
               << "iteration shape " << RankedTensorType::get(iteration,
                                                             sum.getType()
                                                                 .getElementType())
               << ", got " << sum.getInput().getType();
      for (Operation *user : sum->getUsers())
        if (!isa<YieldOp>(user))
          return op.emitOpError("column reduction in an mw.fusion may only be "
                                "yielded, not used in the body");
      continue;
    }
    if (isa<MatmulOp>(op)) {
      if (kind != FusionKind::matmul)
        return op.emitOpError("cannot appear in a ")
               << kindName << " mw.fusion (only in a matmul fusion)";
      if (&op != first)
        return op.emitOpError("must be the first op of its mw.fusion, and "
                              "the only matmul");
      continue;
    }
    if (isRowOp(&op)) {
      if (kind != FusionKind::row)
        return op.emitOpError("cannot appear in a ")
               << kindName << " mw.fusion (only in a row fusion)";
      if (shapeOf(op.getOperand(0)) != iteration)
        return op.emitOpError("in a row mw.fusion must work on rows of the "
                              "iteration shape (")
               << RankedTensorType::get(iteration, getElementTypeOrSelf(
                                                       op.getOperand(0)))
               << "), got " << op.getOperand(0).getType();
      anyRowOp = true;
      continue;
    }
    if (!isPointwiseOp(&op))
      return op.emitOpError("cannot appear in a ")
             << kindName << " mw.fusion: it is neither pointwise"
             << (kind == FusionKind::row ? ", a row op" : "")
             << (kind == FusionKind::matmul ? ", the matmul" : "")
             << " nor a column reduction";
  }
  if (kind == FusionKind::row && !anyRowOp)
    return emitOpError("row fusion has no row op (softmax, layer_norm, "
                       "rms_norm or a reduction over the last axis)");
  for (auto [i, value] : llvm::enumerate(yield.getValues())) {
    ArrayRef<int64_t> shape = shapeOf(value);
    if (shape == iteration)
      continue;
    Operation *def = value.getDefiningOp();
    if (kind != FusionKind::row && def && isColumnReduction(def))
      continue;
    if (kind == FusionKind::row && isRowShape(shape, iteration))
      continue;
    return yield.emitOpError("value #")
           << i << " of type " << value.getType() << " has neither the "
           << "iteration shape of the " << kindName << " fusion ("
           << RankedTensorType::get(iteration,
                                    getElementTypeOrSelf(value.getType()))
           << ")"
           << (kind == FusionKind::row ? " nor its row shape"
                                       : " nor is it a column reduction");
  }
  return success();
}

int64_t mlir::mw::bodyFlops(Block &block) {
  int64_t flops = 0;
  for (Operation &op : block.without_terminator())
    if (auto cost = dyn_cast<CostOpInterface>(op))
      flops += cost.getFlops();
  return flops;
}

int64_t FusionOp::getFlops() { return bodyFlops(getBody().front()); }

int64_t FusionOp::getBytesRead() {
  return detail::sumTensorBytes(getInputs().getTypes());
}

int64_t FusionOp::getBytesWritten() {
  return detail::sumTensorBytes(getResultTypes());
}
