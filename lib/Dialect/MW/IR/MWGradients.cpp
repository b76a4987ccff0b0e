//===- MWGradients.cpp - Reverse-mode gradient rules of the mw ops --------===//
//
// GradientOpInterface for every differentiable mw op: given the gradients of
// an op's results, build the gradients of its operands from mw ops. The rules
// are the textbook ones; where the forward op broadcast an operand, its
// gradient is summed back to the operand's shape. --mw-autodiff drives them.
//
//===----------------------------------------------------------------------===//

#include "memwall/Dialect/MW/IR/MWOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::mw;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static RankedTensorType tensorTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

static bool isFloatTensor(Value v) {
  return isa<FloatType>(tensorTypeOf(v).getElementType());
}

static Value splat(OpBuilder &b, Location loc, Type type, double value) {
  return b.create<SplatOp>(loc, type, b.getF64FloatAttr(value));
}

/// Sums `grad` (of a broadcast result's shape) back to `target`'s shape:
/// over the leading dimensions the broadcast added and the dimensions where
/// `target` has size 1.
static Value sumToShape(OpBuilder &b, Location loc, Value grad,
                        RankedTensorType target) {
  RankedTensorType type = tensorTypeOf(grad);
  if (type == target)
    return grad;
  ArrayRef<int64_t> from = type.getShape(), to = target.getShape();
  int64_t lead = static_cast<int64_t>(from.size() - to.size());
  SmallVector<int64_t> axes, kept;
  for (int64_t d = 0; d < static_cast<int64_t>(from.size()); ++d) {
    bool added = d < lead;
    bool stretched = !added && to[d - lead] == 1 && from[d] != 1;
    if (added || stretched)
      axes.push_back(d);
    else
      kept.push_back(from[d]);
  }
  Value sum = grad;
  if (!axes.empty())
    sum = b.create<ReduceSumOp>(
        loc, RankedTensorType::get(kept, type.getElementType()), grad, axes,
        /*keepdims=*/false);
  if (tensorTypeOf(sum) != target)
    sum = b.create<ReshapeOp>(loc, target, sum);
  return sum;
}

/// Each of the common "one result, gradient of operand i" patterns.
static Value first(ArrayRef<Value> grads) { return grads.front(); }

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult AddOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                   SmallVectorImpl<Value> &dxs) {
  Value dy = first(dys);
  dxs[0] = sumToShape(b, getLoc(), dy, getLhs().getType());
  dxs[1] = sumToShape(b, getLoc(), dy, getRhs().getType());
  return success();
}

LogicalResult SubOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                   SmallVectorImpl<Value> &dxs) {
  Value dy = first(dys);
  dxs[0] = sumToShape(b, getLoc(), dy, getLhs().getType());
  dxs[1] = b.create<NegOp>(getLoc(),
                           sumToShape(b, getLoc(), dy, getRhs().getType()));
  return success();
}

LogicalResult MulOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                   SmallVectorImpl<Value> &dxs) {
  Value dy = first(dys);
  Location loc = getLoc();
  dxs[0] = sumToShape(b, loc, b.create<MulOp>(loc, dy, getRhs()),
                      getLhs().getType());
  dxs[1] = sumToShape(b, loc, b.create<MulOp>(loc, dy, getLhs()),
                      getRhs().getType());
  return success();
}

LogicalResult DivOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                   SmallVectorImpl<Value> &dxs) {
  Value dy = first(dys);
  Location loc = getLoc();
  // d(a/b)/da = 1/b; d(a/b)/db = -(a/b)/b.
  dxs[0] = sumToShape(b, loc, b.create<DivOp>(loc, dy, getRhs()),
                      getLhs().getType());
  Value t = b.create<DivOp>(loc, b.create<MulOp>(loc, dy, getResult()),
                            getRhs());
  dxs[1] = b.create<NegOp>(loc, sumToShape(b, loc, t, getRhs().getType()));
  return success();
}

LogicalResult MaximumOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                       SmallVectorImpl<Value> &dxs) {
  // max(a, b) = b + relu(a - b): the gradient goes to a where a > b and to b
  // elsewhere (ties go to b).
  Value dy = first(dys);
  Location loc = getLoc();
  Value diff = b.create<SubOp>(loc, getLhs(), getRhs());
  if (tensorTypeOf(diff) != tensorTypeOf(dy))
    diff = b.create<BroadcastToOp>(loc, tensorTypeOf(dy), diff);
  Value da = b.create<ReluGradOp>(loc, diff, dy);
  dxs[0] = sumToShape(b, loc, da, getLhs().getType());
  dxs[1] = sumToShape(b, loc, b.create<SubOp>(loc, dy, da),
                      getRhs().getType());
  return success();
}

LogicalResult NegOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                   SmallVectorImpl<Value> &dxs) {
  dxs[0] = b.create<NegOp>(getLoc(), first(dys));
  return success();
}

LogicalResult ExpOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                   SmallVectorImpl<Value> &dxs) {
  dxs[0] = b.create<MulOp>(getLoc(), first(dys), getResult());
  return success();
}

LogicalResult LogOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                   SmallVectorImpl<Value> &dxs) {
  dxs[0] = b.create<DivOp>(getLoc(), first(dys), getInput());
  return success();
}

LogicalResult TanhOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  Location loc = getLoc();
  Value y = getResult();
  Value oneMinusY2 = b.create<SubOp>(loc, splat(b, loc, y.getType(), 1.0),
                                     b.create<MulOp>(loc, y, y));
  dxs[0] = b.create<MulOp>(loc, first(dys), oneMinusY2);
  return success();
}

LogicalResult SqrtOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  Location loc = getLoc();
  Value half = b.create<MulOp>(loc, first(dys),
                               splat(b, loc, getType(), 0.5));
  dxs[0] = b.create<DivOp>(loc, half, getResult());
  return success();
}

LogicalResult RsqrtOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                     SmallVectorImpl<Value> &dxs) {
  // d(x^-1/2)/dx = -1/2 x^-3/2 = -1/2 y^3.
  Location loc = getLoc();
  Value y = getResult();
  Value y3 = b.create<MulOp>(loc, y, b.create<MulOp>(loc, y, y));
  Value scaled = b.create<MulOp>(loc, y3, splat(b, loc, getType(), -0.5));
  dxs[0] = b.create<MulOp>(loc, first(dys), scaled);
  return success();
}

LogicalResult ReciprocalOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                          SmallVectorImpl<Value> &dxs) {
  Location loc = getLoc();
  Value y = getResult();
  dxs[0] = b.create<NegOp>(
      loc, b.create<MulOp>(loc, first(dys), b.create<MulOp>(loc, y, y)));
  return success();
}

LogicalResult ReluOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  dxs[0] = b.create<ReluGradOp>(getLoc(), getType(), getInput(), first(dys));
  return success();
}

LogicalResult SigmoidOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                       SmallVectorImpl<Value> &dxs) {
  Location loc = getLoc();
  Value y = getResult();
  Value dydx = b.create<MulOp>(
      loc, y, b.create<SubOp>(loc, splat(b, loc, getType(), 1.0), y));
  dxs[0] = b.create<MulOp>(loc, first(dys), dydx);
  return success();
}

LogicalResult SiluOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  dxs[0] = b.create<SiluGradOp>(getLoc(), getType(), getInput(), first(dys));
  return success();
}

LogicalResult GeluOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  dxs[0] = b.create<GeluGradOp>(getLoc(), getType(), getInput(), first(dys),
                                getApproximateAttr());
  return success();
}

LogicalResult ClampOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                     SmallVectorImpl<Value> &dxs) {
  dxs[0] = b.create<ClampGradOp>(getLoc(), getType(), getInput(), first(dys),
                                 getMinAttr(), getMaxAttr());
  return success();
}

LogicalResult CastOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  if (isFloatTensor(getInput()) && isFloatTensor(getResult()))
    dxs[0] = b.create<CastOp>(getLoc(), getInput().getType(), first(dys));
  return success();
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

/// A matmul whose result is summed back to `target`'s shape (over batch
/// dimensions the forward op broadcast).
static Value matmulTo(OpBuilder &b, Location loc, Value lhs, Value rhs,
                      bool tl, bool tr, RankedTensorType target) {
  auto l = tensorTypeOf(lhs).getShape(), r = tensorTypeOf(rhs).getShape();
  int64_t m = tl ? l[l.size() - 1] : l[l.size() - 2];
  int64_t n = tr ? r[r.size() - 2] : r[r.size() - 1];
  SmallVector<int64_t> shape(
      *broadcastShapes(l.drop_back(2), r.drop_back(2)));
  shape.push_back(m);
  shape.push_back(n);
  Value mm = b.create<MatmulOp>(
      loc, RankedTensorType::get(shape, target.getElementType()), lhs, rhs,
      tl, tr);
  return sumToShape(b, loc, mm, target);
}

/// Folds the leading dimensions of `v` into one: [..., r, c] -> [prod, c].
static Value flattenRows(OpBuilder &b, Location loc, Value v) {
  RankedTensorType t = tensorTypeOf(v);
  int64_t cols = t.getShape().back();
  return b.create<ReshapeOp>(
      loc,
      RankedTensorType::get({t.getNumElements() / cols, cols},
                            t.getElementType()),
      v);
}

LogicalResult MatmulOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                      SmallVectorImpl<Value> &dxs) {
  Value dy = first(dys);
  Location loc = getLoc();
  Value a = getLhs(), w = getRhs();
  bool tl = getTransposeLhs(), tr = getTransposeRhs();
  RankedTensorType aType = getLhs().getType(), wType = getRhs().getType();
  // Y = op(A) op(B) with op a transpose when flagged:
  //   none: dA = dY B^T,     dB = A^T dY
  //   tl:   dA = B dY^T,     dB = A dY
  //   tr:   dA = dY B,       dB = dY^T A
  //   both: dA = B^T dY^T,   dB = dY^T A^T
  if (!tl)
    dxs[0] = tr ? matmulTo(b, loc, dy, w, false, false, aType)
                : matmulTo(b, loc, dy, w, false, true, aType);
  else
    dxs[0] = tr ? matmulTo(b, loc, w, dy, true, true, aType)
                : matmulTo(b, loc, w, dy, false, true, aType);

  // A linear layer (activations [..., M, K] times a weight matrix) gets its
  // weight gradient from one matmul over all rows instead of a batched
  // matmul summed afterwards, which would materialize a weight per row block.
  if (wType.getRank() == 2 && aType.getRank() > 2 && !tl) {
    Value a2 = flattenRows(b, loc, a), dy2 = flattenRows(b, loc, dy);
    dxs[1] = tr ? b.create<MatmulOp>(loc, wType, dy2, a2, true, false)
                : b.create<MatmulOp>(loc, wType, a2, dy2, true, false);
    return success();
  }
  if (!tr)
    dxs[1] = tl ? matmulTo(b, loc, a, dy, false, false, wType)
                : matmulTo(b, loc, a, dy, true, false, wType);
  else
    dxs[1] = tl ? matmulTo(b, loc, dy, a, true, true, wType)
                : matmulTo(b, loc, dy, a, true, false, wType);
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions and softmax
//===----------------------------------------------------------------------===//

/// dy of a reduction, broadcast back to the input's shape.
static Value broadcastBack(OpBuilder &b, Location loc, Value dy,
                           RankedTensorType input, ArrayRef<int64_t> axes) {
  SmallVector<int64_t> keep(input.getShape());
  for (int64_t axis : axes)
    keep[axis] = 1;
  RankedTensorType dyType = tensorTypeOf(dy);
  Value kept = dy;
  if (dyType.getShape() != ArrayRef<int64_t>(keep))
    kept = b.create<ReshapeOp>(
        loc, RankedTensorType::get(keep, dyType.getElementType()), dy);
  if (tensorTypeOf(kept) == input)
    return kept;
  return b.create<BroadcastToOp>(loc, input, kept);
}

LogicalResult ReduceSumOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                         SmallVectorImpl<Value> &dxs) {
  if (isFloatTensor(getInput()))
    dxs[0] = broadcastBack(b, getLoc(), first(dys), getInput().getType(),
                           getAxes());
  return success();
}

LogicalResult ReduceMeanOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                          SmallVectorImpl<Value> &dxs) {
  Location loc = getLoc();
  int64_t count = 1;
  for (int64_t axis : getAxes())
    count *= getInput().getType().getShape()[axis];
  Value g = broadcastBack(b, loc, first(dys), getInput().getType(), getAxes());
  dxs[0] = b.create<MulOp>(
      loc, g, splat(b, loc, getInput().getType(), 1.0 / count));
  return success();
}

LogicalResult ReduceMaxOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                         SmallVectorImpl<Value> &dxs) {
  if (isFloatTensor(getInput()))
    dxs[0] = b.create<ReduceMaxGradOp>(getLoc(), getInput().getType(),
                                       getInput(), getResult(), first(dys),
                                       getAxes(), getKeepdims());
  return success();
}

LogicalResult SoftmaxOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                       SmallVectorImpl<Value> &dxs) {
  dxs[0] = b.create<SoftmaxGradOp>(getLoc(), getType(), getResult(),
                                   first(dys), getAxis());
  return success();
}

LogicalResult LogSoftmaxOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                          SmallVectorImpl<Value> &dxs) {
  dxs[0] = b.create<LogSoftmaxGradOp>(getLoc(), getType(), getResult(),
                                      first(dys), getAxis());
  return success();
}

//===----------------------------------------------------------------------===//
// Norms, embedding, loss, attention
//===----------------------------------------------------------------------===//

/// Saved statistics feed only the backward op; a gradient into them would
/// need second-order rules nobody needs.
static LogicalResult rejectStatisticGrads(Operation *op,
                                          ArrayRef<Value> dys) {
  for (auto [i, dy] : llvm::enumerate(dys.drop_front()))
    if (dy)
      return op->emitOpError("result #")
             << i + 1
             << " (a saved statistic) is used on the path to the loss; its "
                "gradient is not supported";
  return success();
}

LogicalResult LayerNormOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                         SmallVectorImpl<Value> &dxs) {
  if (failed(rejectStatisticGrads(*this, dys)))
    return failure();
  auto grad = b.create<LayerNormGradOp>(
      getLoc(),
      TypeRange{getInput().getType(), getGamma().getType(),
                getBeta().getType()},
      getInput(), getGamma(), getMean(), getRstd(), first(dys));
  dxs[0] = grad.getGradInput();
  dxs[1] = grad.getGradGamma();
  dxs[2] = grad.getGradBeta();
  return success();
}

LogicalResult RmsNormOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                       SmallVectorImpl<Value> &dxs) {
  if (failed(rejectStatisticGrads(*this, dys)))
    return failure();
  auto grad = b.create<RmsNormGradOp>(
      getLoc(), TypeRange{getInput().getType(), getGamma().getType()},
      getInput(), getGamma(), getRstd(), first(dys));
  dxs[0] = grad.getGradInput();
  dxs[1] = grad.getGradGamma();
  return success();
}

LogicalResult EmbeddingOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                         SmallVectorImpl<Value> &dxs) {
  dxs[0] = b.create<EmbeddingGradOp>(getLoc(), getTable().getType(),
                                     getIndices(), first(dys));
  return success();
}

LogicalResult CrossEntropyOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                            SmallVectorImpl<Value> &dxs) {
  dxs[0] = b.create<CrossEntropyGradOp>(
      getLoc(), getLogits().getType(), getLogits(), getLabels(), first(dys),
      getIgnoreIndexAttr(), getLabelOffsetAttr());
  return success();
}

LogicalResult AttentionOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                         SmallVectorImpl<Value> &dxs) {
  if (failed(rejectStatisticGrads(*this, dys)))
    return failure();
  auto grad = b.create<AttentionGradOp>(
      getLoc(),
      TypeRange{getQuery().getType(), getKey().getType(),
                getValue().getType()},
      getQuery(), getKey(), getValue(), getResult(), getLse(), first(dys),
      getCausal(), getScaleAttr());
  dxs[0] = grad.getGradQuery();
  dxs[1] = grad.getGradKey();
  dxs[2] = grad.getGradValue();
  return success();
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                       SmallVectorImpl<Value> &dxs) {
  if (isFloatTensor(getInput()))
    dxs[0] = b.create<ReshapeOp>(getLoc(), getInput().getType(), first(dys));
  return success();
}

LogicalResult TransposeOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                         SmallVectorImpl<Value> &dxs) {
  if (!isFloatTensor(getInput()))
    return success();
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [d, p] : llvm::enumerate(perm))
    inverse[p] = d;
  dxs[0] = b.create<TransposeOp>(getLoc(), getInput().getType(), first(dys),
                                 inverse);
  return success();
}

LogicalResult BroadcastToOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                           SmallVectorImpl<Value> &dxs) {
  if (isFloatTensor(getInput()))
    dxs[0] = sumToShape(b, getLoc(), first(dys), getInput().getType());
  return success();
}

LogicalResult SliceOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                     SmallVectorImpl<Value> &dxs) {
  if (!isFloatTensor(getInput()))
    return success();
  if (llvm::any_of(getStridesOrDefault(), [](int64_t s) { return s != 1; }))
    return emitOpError("the gradient of a strided slice is not supported");
  // Pad the gradient with zeros, one dimension at a time, back to the input.
  Location loc = getLoc();
  Value g = first(dys);
  RankedTensorType in = getInput().getType();
  for (auto [d, off] : llvm::enumerate(getOffsets())) {
    int64_t size = getSizes()[d], full = in.getShape()[d];
    if (off == 0 && size == full)
      continue;
    RankedTensorType cur = tensorTypeOf(g);
    SmallVector<Value> parts;
    auto zeros = [&](int64_t n) {
      SmallVector<int64_t> shape(cur.getShape());
      shape[d] = n;
      return splat(b, loc, RankedTensorType::get(shape, cur.getElementType()),
                   0.0);
    };
    if (off > 0)
      parts.push_back(zeros(off));
    parts.push_back(g);
    if (full - off - size > 0)
      parts.push_back(zeros(full - off - size));
    SmallVector<int64_t> shape(cur.getShape());
    shape[d] = full;
    g = b.create<ConcatOp>(
        loc, RankedTensorType::get(shape, cur.getElementType()), parts, d);
  }
  dxs[0] = g;
  return success();
}

LogicalResult ConcatOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                      SmallVectorImpl<Value> &dxs) {
  Value dy = first(dys);
  int64_t axis = static_cast<int64_t>(getAxis());
  int64_t at = 0;
  for (auto [i, in] : llvm::enumerate(getInputs())) {
    RankedTensorType t = tensorTypeOf(in);
    if (isFloatTensor(in)) {
      SmallVector<int64_t> offsets(t.getRank(), 0);
      offsets[axis] = at;
      dxs[i] = b.create<SliceOp>(getLoc(), t, dy, offsets, t.getShape(),
                                 /*strides=*/nullptr);
    }
    at += t.getShape()[axis];
  }
  return success();
}
