//===- MWOps.cpp - Ops of the mw dialect ----------------------------------===//
//
// Verifiers of the mw ops: shapes, element types and attribute ranges, each
// failure with one precise message (tested in test/Dialect/MW/invalid.mlir),
// plus the custom syntax and folder of mw.constant.
//
//===----------------------------------------------------------------------===//

#include "memwall/Dialect/MW/IR/MWOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mw;

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

/// Prints a shape as "[4, 8]".
static std::string shapeStr(ArrayRef<int64_t> dims) {
  std::string out = "[";
  llvm::raw_string_ostream os(out);
  llvm::interleaveComma(dims, os);
  os << "]";
  return out;
}

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<ShapedType>(v.getType()).getShape();
}
static Type elemOf(Value v) {
  return cast<ShapedType>(v.getType()).getElementType();
}
static int64_t rankOf(Value v) {
  return cast<ShapedType>(v.getType()).getRank();
}

FailureOr<SmallVector<int64_t>>
mlir::mw::broadcastShapes(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < lhs.size() ? lhs[lhs.size() - 1 - i] : 1;
    int64_t r = i < rhs.size() ? rhs[rhs.size() - 1 - i] : 1;
    if (l != r && l != 1 && r != 1)
      return failure();
    out[rank - 1 - i] = l == 1 ? r : l;
  }
  return out;
}

RankedTensorType mlir::mw::inferBroadcastType(Type lhs, Type rhs) {
  auto l = cast<RankedTensorType>(lhs);
  auto r = cast<RankedTensorType>(rhs);
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(l.getShape(), r.getShape());
  assert(succeeded(shape) && "operands are not broadcast-compatible");
  return RankedTensorType::get(*shape, l.getElementType());
}

RankedTensorType mlir::mw::inferMatmulType(Type lhs, Type rhs,
                                           bool transposeLhs,
                                           bool transposeRhs) {
  auto l = cast<RankedTensorType>(lhs), r = cast<RankedTensorType>(rhs);
  ArrayRef<int64_t> ls = l.getShape(), rs = r.getShape();
  FailureOr<SmallVector<int64_t>> batch =
      broadcastShapes(ls.drop_back(2), rs.drop_back(2));
  assert(succeeded(batch) && "batch dimensions are not broadcast-compatible");
  SmallVector<int64_t> shape = *batch;
  shape.push_back(transposeLhs ? ls.back() : ls[ls.size() - 2]);
  shape.push_back(transposeRhs ? rs[rs.size() - 2] : rs.back());
  return RankedTensorType::get(shape, l.getElementType());
}

RankedTensorType mlir::mw::inferTransposeType(Type input,
                                              ArrayRef<int64_t> permutation) {
  auto t = cast<RankedTensorType>(input);
  SmallVector<int64_t> shape;
  for (int64_t p : permutation)
    shape.push_back(t.getShape()[p]);
  return RankedTensorType::get(shape, t.getElementType());
}

/// Checks that `value` has exactly `shape` and `elem` (when given), naming it
/// `name` in the diagnostic.
static LogicalResult expectType(Operation *op, Value value, StringRef name,
                                ArrayRef<int64_t> shape, Type elem) {
  auto expected = RankedTensorType::get(shape, elem ? elem : elemOf(value));
  if (value.getType() != expected)
    return op->emitOpError() << name << " type " << value.getType()
                             << " does not match the expected " << expected;
  return success();
}

static LogicalResult expectSameType(Operation *op, Value value, StringRef name,
                                    Value like, StringRef likeName) {
  if (value.getType() != like.getType())
    return op->emitOpError()
           << name << " type " << value.getType() << " differs from the "
           << likeName << " type " << like.getType();
  return success();
}

static LogicalResult expectSameElement(Operation *op, Value value,
                                       StringRef name, Value like,
                                       StringRef likeName) {
  if (elemOf(value) != elemOf(like))
    return op->emitOpError()
           << name << " element type " << elemOf(value) << " differs from the "
           << likeName << " element type " << elemOf(like);
  return success();
}

static LogicalResult expectRank(Operation *op, Value value, StringRef name,
                                int64_t rank, StringRef layout = "") {
  if (rankOf(value) != rank) {
    auto diag = op->emitOpError() << name << " must have rank " << rank;
    if (!layout.empty())
      diag << " (" << layout << ")";
    return diag << ", got " << rankOf(value);
  }
  return success();
}

static LogicalResult verifyAxisInRange(Operation *op, int64_t axis,
                                       int64_t rank) {
  if (axis < 0 || axis >= rank)
    return op->emitOpError()
           << "axis " << axis << " is out of range for rank " << rank;
  return success();
}

/// Axes are in [0, rank) and strictly increasing.
static LogicalResult verifyAxes(Operation *op, ArrayRef<int64_t> axes,
                                int64_t rank) {
  for (int64_t axis : axes)
    if (failed(verifyAxisInRange(op, axis, rank)))
      return failure();
  for (size_t i = 1; i < axes.size(); ++i)
    if (axes[i] <= axes[i - 1])
      return op->emitOpError("axes must be strictly increasing, got ")
             << shapeStr(axes);
  return success();
}

static SmallVector<int64_t>
reducedShape(ArrayRef<int64_t> shape, ArrayRef<int64_t> axes, bool keepdims) {
  SmallVector<int64_t> out;
  for (auto [i, d] : llvm::enumerate(shape)) {
    bool reduced = llvm::is_contained(axes, static_cast<int64_t>(i));
    if (!reduced)
      out.push_back(d);
    else if (keepdims)
      out.push_back(1);
  }
  return out;
}

RankedTensorType mlir::mw::inferReduceType(Type input, ArrayRef<int64_t> axes,
                                           bool keepdims) {
  auto t = cast<RankedTensorType>(input);
  return RankedTensorType::get(reducedShape(t.getShape(), axes, keepdims),
                               t.getElementType());
}

static LogicalResult verifyNonNegative(Operation *op, StringRef name,
                                       double value) {
  if (!(value >= 0.0) || std::isinf(value))
    return op->emitOpError()
           << name << " must be finite and non-negative, got " << value;
  return success();
}

static LogicalResult verifyPositive(Operation *op, StringRef name,
                                    double value) {
  if (!(value > 0.0) || std::isinf(value))
    return op->emitOpError()
           << name << " must be finite and positive, got " << value;
  return success();
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

ParseResult ConstantOp::parse(OpAsmParser &parser, OperationState &result) {
  if (parser.parseOptionalAttrDict(result.attributes))
    return failure();
  llvm::SMLoc loc = parser.getCurrentLocation();
  if (result.attributes.get("value"))
    return parser.emitError(loc, "the value is written after the attribute "
                                 "dictionary, not inside it");
  Attribute attr;
  if (parser.parseAttribute(attr))
    return failure();
  auto elements = dyn_cast<ElementsAttr>(attr);
  if (!elements)
    return parser.emitError(loc, "expected an elements attribute, got ")
           << attr;
  result.getOrAddProperties<Properties>().value = elements;
  result.addTypes(elements.getType());
  return success();
}

void ConstantOp::print(OpAsmPrinter &p) {
  p.printOptionalAttrDict((*this)->getAttrs(), /*elidedAttrs=*/{"value"});
  p << ' ';
  p.printAttribute(getValue());
}

LogicalResult ConstantOp::verify() {
  if (getValue().getType() != getType())
    return emitOpError("value type ")
           << getValue().getType() << " differs from the result type "
           << getType();
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult SplatOp::verify() {
  Type elem = getType().getElementType();
  double v = getValue().convertToDouble();
  if (auto intType = dyn_cast<IntegerType>(elem)) {
    if (std::trunc(v) != v || std::isinf(v))
      return emitOpError("value ")
             << v << " is not an integer, as element type " << elem
             << " requires";
    double limit = std::ldexp(1.0, intType.getWidth() - 1);
    if (v < -limit || v >= limit)
      return emitOpError("value ") << v << " does not fit in " << elem;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops
//===----------------------------------------------------------------------===//

static LogicalResult verifyBinary(Operation *op) {
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  if (failed(expectSameElement(op, rhs, "rhs", lhs, "lhs")))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(shapeOf(lhs), shapeOf(rhs));
  if (failed(shape))
    return op->emitOpError("operand shapes ")
           << shapeStr(shapeOf(lhs)) << " and " << shapeStr(shapeOf(rhs))
           << " are not broadcast-compatible";
  return expectType(op, op->getResult(0), "result", *shape, elemOf(lhs));
}

LogicalResult AddOp::verify() { return verifyBinary(*this); }
LogicalResult SubOp::verify() { return verifyBinary(*this); }
LogicalResult MulOp::verify() { return verifyBinary(*this); }
LogicalResult DivOp::verify() { return verifyBinary(*this); }
LogicalResult MaximumOp::verify() { return verifyBinary(*this); }

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::verify() {
  Value lhs = getLhs(), rhs = getRhs();
  if (rankOf(lhs) < 2)
    return emitOpError("lhs must have rank >= 2, got ") << rankOf(lhs);
  if (rankOf(rhs) < 2)
    return emitOpError("rhs must have rank >= 2, got ") << rankOf(rhs);
  if (failed(expectSameElement(*this, rhs, "rhs", lhs, "lhs")))
    return failure();
  ArrayRef<int64_t> l = shapeOf(lhs), r = shapeOf(rhs);
  int64_t lr = l.size(), rr = r.size();
  int64_t m = getTransposeLhs() ? l[lr - 1] : l[lr - 2];
  int64_t k = getTransposeLhs() ? l[lr - 2] : l[lr - 1];
  int64_t k2 = getTransposeRhs() ? r[rr - 1] : r[rr - 2];
  int64_t n = getTransposeRhs() ? r[rr - 2] : r[rr - 1];
  if (k != k2)
    return emitOpError("contracting dimensions differ: ") << k << " vs " << k2;
  FailureOr<SmallVector<int64_t>> batch =
      broadcastShapes(l.drop_back(2), r.drop_back(2));
  if (failed(batch))
    return emitOpError("batch dimensions ")
           << shapeStr(l.drop_back(2)) << " and " << shapeStr(r.drop_back(2))
           << " are not broadcast-compatible";
  SmallVector<int64_t> shape = *batch;
  shape.push_back(m);
  shape.push_back(n);
  return expectType(*this, getResult(), "result", shape, elemOf(lhs));
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

template <typename ReduceOp> static LogicalResult verifyReduce(ReduceOp op) {
  ArrayRef<int64_t> axes = op.getAxes();
  if (failed(verifyAxes(op, axes, rankOf(op.getInput()))))
    return failure();
  return expectType(
      op, op.getResult(), "result",
      reducedShape(shapeOf(op.getInput()), axes, op.getKeepdims()),
      elemOf(op.getInput()));
}

LogicalResult ReduceSumOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMaxOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMeanOp::verify() { return verifyReduce(*this); }

LogicalResult ReduceMaxGradOp::verify() {
  ArrayRef<int64_t> axes = getAxes();
  if (failed(verifyAxes(*this, axes, rankOf(getInput()))))
    return failure();
  SmallVector<int64_t> reduced =
      reducedShape(shapeOf(getInput()), axes, getKeepdims());
  Type elem = elemOf(getInput());
  if (failed(expectType(*this, getOutput(), "output", reduced, elem)) ||
      failed(expectType(*this, getGradOutput(), "grad_output", reduced, elem)))
    return failure();
  return expectSameType(*this, getResult(), "result", getInput(), "input");
}

//===----------------------------------------------------------------------===//
// Softmax family
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::verify() {
  return verifyAxisInRange(*this, static_cast<int64_t>(getAxis()),
                           rankOf(getInput()));
}
LogicalResult LogSoftmaxOp::verify() {
  return verifyAxisInRange(*this, static_cast<int64_t>(getAxis()),
                           rankOf(getInput()));
}
LogicalResult SoftmaxGradOp::verify() {
  return verifyAxisInRange(*this, static_cast<int64_t>(getAxis()),
                           rankOf(getOutput()));
}
LogicalResult LogSoftmaxGradOp::verify() {
  return verifyAxisInRange(*this, static_cast<int64_t>(getAxis()),
                           rankOf(getOutput()));
}

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

/// Shared checks of the norms: rank >= 1, gamma (and beta) of shape [D] with
/// the input's element type, saved statistics of the input's shape without
/// its last dimension. Returns that statistics shape.
static FailureOr<SmallVector<int64_t>>
verifyNormOperands(Operation *op, Value input, ArrayRef<Value> weights,
                   ArrayRef<StringRef> weightNames) {
  if (rankOf(input) < 1)
    return op->emitOpError("input must have rank >= 1, got 0");
  int64_t d = shapeOf(input).back();
  for (auto [w, name] : llvm::zip(weights, weightNames))
    if (failed(expectType(op, w, name, {d}, elemOf(input))))
      return failure();
  return SmallVector<int64_t>(shapeOf(input).drop_back());
}

LogicalResult LayerNormOp::verify() {
  auto stats = verifyNormOperands(*this, getInput(), {getGamma(), getBeta()},
                                  {"gamma", "beta"});
  if (failed(stats))
    return failure();
  if (failed(
          verifyPositive(*this, "epsilon", getEpsilon().convertToDouble())) ||
      failed(
          expectSameType(*this, getResult(), "result", getInput(), "input")) ||
      failed(expectType(*this, getMean(), "mean", *stats, nullptr)) ||
      failed(expectType(*this, getRstd(), "rstd", *stats, nullptr)))
    return failure();
  return success();
}

LogicalResult RmsNormOp::verify() {
  auto stats = verifyNormOperands(*this, getInput(), {getGamma()}, {"gamma"});
  if (failed(stats))
    return failure();
  if (failed(
          verifyPositive(*this, "epsilon", getEpsilon().convertToDouble())) ||
      failed(
          expectSameType(*this, getResult(), "result", getInput(), "input")) ||
      failed(expectType(*this, getRstd(), "rstd", *stats, nullptr)))
    return failure();
  return success();
}

LogicalResult LayerNormGradOp::verify() {
  auto stats = verifyNormOperands(*this, getInput(), {getGamma()}, {"gamma"});
  if (failed(stats))
    return failure();
  if (failed(expectType(*this, getMean(), "mean", *stats, nullptr)) ||
      failed(expectType(*this, getRstd(), "rstd", *stats, nullptr)) ||
      failed(expectSameType(*this, getGradOutput(), "grad_output", getInput(),
                            "input")) ||
      failed(expectSameType(*this, getGradInput(), "grad_input", getInput(),
                            "input")) ||
      failed(expectSameType(*this, getGradGamma(), "grad_gamma", getGamma(),
                            "gamma")) ||
      failed(expectSameType(*this, getGradBeta(), "grad_beta", getGamma(),
                            "gamma")))
    return failure();
  return success();
}

LogicalResult RmsNormGradOp::verify() {
  auto stats = verifyNormOperands(*this, getInput(), {getGamma()}, {"gamma"});
  if (failed(stats))
    return failure();
  if (failed(expectType(*this, getRstd(), "rstd", *stats, nullptr)) ||
      failed(expectSameType(*this, getGradOutput(), "grad_output", getInput(),
                            "input")) ||
      failed(expectSameType(*this, getGradInput(), "grad_input", getInput(),
                            "input")) ||
      failed(expectSameType(*this, getGradGamma(), "grad_gamma", getGamma(),
                            "gamma")))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Embedding and cross-entropy
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::verify() {
  if (failed(expectRank(*this, getTable(), "table", 2, "[V, D]")))
    return failure();
  SmallVector<int64_t> shape(shapeOf(getIndices()));
  shape.push_back(shapeOf(getTable())[1]);
  return expectType(*this, getResult(), "result", shape, elemOf(getTable()));
}

LogicalResult EmbeddingGradOp::verify() {
  if (failed(expectRank(*this, getResult(), "result", 2, "[V, D]")))
    return failure();
  SmallVector<int64_t> shape(shapeOf(getIndices()));
  shape.push_back(shapeOf(getResult())[1]);
  if (failed(expectType(*this, getGradOutput(), "grad_output", shape, nullptr)))
    return failure();
  return expectSameElement(*this, getResult(), "result", getGradOutput(),
                           "grad_output");
}

/// Labels of the logits' shape without the class dimension; or, with
/// `label_offset` (a chunk of a larger batch), rank-2 logits [n, C] and
/// every label of the batch, [N] with `label_offset + n <= N`.
static LogicalResult verifyLogitsAndLabels(Operation *op, Value logits,
                                           Value labels,
                                           std::optional<uint64_t> offset) {
  if (rankOf(logits) < 1)
    return op->emitOpError("logits must have rank >= 1, got 0");
  if (!offset)
    return expectType(op, labels, "labels", shapeOf(logits).drop_back(),
                      nullptr);
  if (rankOf(logits) != 2 || rankOf(labels) != 1)
    return op->emitOpError("with label_offset, logits must be [n, C] and "
                           "labels [N], got logits ")
           << logits.getType() << " and labels " << labels.getType();
  int64_t rows = shapeOf(logits)[0], all = shapeOf(labels)[0];
  int64_t first = static_cast<int64_t>(*offset);
  if (first < 0 || first > all || rows > all - first)
    return op->emitOpError("label_offset ")
           << first << " + " << rows << " rows exceeds the " << all
           << " labels";
  return success();
}

LogicalResult CrossEntropyOp::verify() {
  return verifyLogitsAndLabels(*this, getLogits(), getLabels(),
                               getLabelOffset());
}

LogicalResult CrossEntropyGradOp::verify() {
  if (failed(verifyLogitsAndLabels(*this, getLogits(), getLabels(),
                                   getLabelOffset())))
    return failure();
  return expectSameType(*this, getResult(), "result", getLogits(), "logits");
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// Checks query [B, H, S, D], key [B, H, Sk, D], value [B, H, Sk, Dv] with one
/// element type and a positive scale; returns the output shape [B, H, S, Dv].
static FailureOr<SmallVector<int64_t>>
verifyAttentionOperands(Operation *op, Value q, Value k, Value v,
                        std::optional<llvm::APFloat> scale) {
  if (failed(expectRank(op, q, "query", 4, "[B, H, S, D]")) ||
      failed(expectRank(op, k, "key", 4, "[B, H, Sk, D]")) ||
      failed(expectRank(op, v, "value", 4, "[B, H, Sk, Dv]")))
    return failure();
  ArrayRef<int64_t> qs = shapeOf(q), ks = shapeOf(k), vs = shapeOf(v);
  if (ks[0] != qs[0] || ks[1] != qs[1] || ks[3] != qs[3])
    return op->emitOpError("key shape ")
           << shapeStr(ks) << " does not match query shape " << shapeStr(qs)
           << " in batch, heads or head dimension";
  if (vs[0] != qs[0] || vs[1] != qs[1] || vs[2] != ks[2])
    return op->emitOpError("value shape ")
           << shapeStr(vs) << " does not match key shape " << shapeStr(ks)
           << " in batch, heads or sequence length";
  if (failed(expectSameElement(op, k, "key", q, "query")) ||
      failed(expectSameElement(op, v, "value", q, "query")))
    return failure();
  if (scale && failed(verifyPositive(op, "scale", scale->convertToDouble())))
    return failure();
  return SmallVector<int64_t>{qs[0], qs[1], qs[2], vs[3]};
}

LogicalResult AttentionOp::verify() {
  auto outShape = verifyAttentionOperands(*this, getQuery(), getKey(),
                                          getValue(), getScale());
  if (failed(outShape))
    return failure();
  if (failed(expectType(*this, getResult(), "result", *outShape,
                        elemOf(getQuery()))))
    return failure();
  return expectType(*this, getLse(), "lse",
                    ArrayRef<int64_t>(*outShape).take_front(3), nullptr);
}

double AttentionOp::getEffectiveScale() {
  if (std::optional<llvm::APFloat> s = getScale())
    return s->convertToDouble();
  return 1.0 / std::sqrt(static_cast<double>(shapeOf(getQuery())[3]));
}

LogicalResult AttentionGradOp::verify() {
  auto outShape = verifyAttentionOperands(*this, getQuery(), getKey(),
                                          getValue(), getScale());
  if (failed(outShape))
    return failure();
  if (failed(expectType(*this, getOutput(), "output", *outShape,
                        elemOf(getQuery()))) ||
      failed(expectType(*this, getLse(), "lse",
                        ArrayRef<int64_t>(*outShape).take_front(3), nullptr)) ||
      failed(expectSameType(*this, getGradOutput(), "grad_output", getOutput(),
                            "output")) ||
      failed(expectSameType(*this, getGradQuery(), "grad_query", getQuery(),
                            "query")) ||
      failed(
          expectSameType(*this, getGradKey(), "grad_key", getKey(), "key")) ||
      failed(expectSameType(*this, getGradValue(), "grad_value", getValue(),
                            "value")))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  if (failed(
          expectSameElement(*this, getResult(), "result", getInput(), "input")))
    return failure();
  int64_t in = mw::detail::numElements(getInput().getType());
  int64_t out = mw::detail::numElements(getResult().getType());
  if (in != out)
    return emitOpError("element count changes from ") << in << " to " << out;
  return success();
}

LogicalResult TransposeOp::verify() {
  ArrayRef<int64_t> perm = getPermutation();
  int64_t rank = rankOf(getInput());
  if (static_cast<int64_t>(perm.size()) != rank)
    return emitOpError("permutation has ")
           << perm.size() << " entries for rank " << rank;
  SmallVector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return emitOpError("permutation ")
             << shapeStr(perm) << " is not a permutation of [0, " << rank
             << ")";
    seen[p] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(shapeOf(getInput())[p]);
  return expectType(*this, getResult(), "result", shape, elemOf(getInput()));
}

LogicalResult BroadcastToOp::verify() {
  if (failed(
          expectSameElement(*this, getResult(), "result", getInput(), "input")))
    return failure();
  ArrayRef<int64_t> in = shapeOf(getInput()), out = shapeOf(getResult());
  if (in.size() > out.size())
    return emitOpError("cannot broadcast rank ")
           << in.size() << " to rank " << out.size();
  size_t lead = out.size() - in.size();
  for (auto [i, d] : llvm::enumerate(in))
    if (d != 1 && d != out[lead + i])
      return emitOpError("input dimension ")
             << i << " of size " << d << " cannot broadcast to size "
             << out[lead + i];
  return success();
}

SmallVector<int64_t> SliceOp::getStridesOrDefault() {
  if (std::optional<ArrayRef<int64_t>> s = getStrides())
    return SmallVector<int64_t>(*s);
  return SmallVector<int64_t>(rankOf(getInput()), 1);
}

LogicalResult SliceOp::verify() {
  int64_t rank = rankOf(getInput());
  ArrayRef<int64_t> offsets = getOffsets(), sizes = getSizes();
  SmallVector<int64_t> strides = getStridesOrDefault();
  for (auto [name, list] :
       {std::pair<StringRef, ArrayRef<int64_t>>{"offsets", offsets},
        {"sizes", sizes},
        {"strides", strides}})
    if (static_cast<int64_t>(list.size()) != rank)
      return emitOpError() << name << " has " << list.size()
                           << " entries for rank " << rank;
  ArrayRef<int64_t> in = shapeOf(getInput());
  for (int64_t i = 0; i < rank; ++i) {
    if (offsets[i] < 0 || sizes[i] < 1 || strides[i] < 1)
      return emitOpError("dimension ")
             << i << " has offset " << offsets[i] << ", size " << sizes[i]
             << ", stride " << strides[i]
             << "; offsets must be >= 0, sizes and strides >= 1";
    // Compare without forming offset + (size - 1) * stride, which may
    // overflow for hostile attribute values.
    if (offsets[i] >= in[i] ||
        (sizes[i] - 1) > (in[i] - 1 - offsets[i]) / strides[i])
      return emitOpError("slice along dimension ")
             << i << " (offset " << offsets[i] << ", size " << sizes[i]
             << ", stride " << strides[i] << ") reads past its size " << in[i];
  }
  return expectType(*this, getResult(), "result", sizes, elemOf(getInput()));
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  Value first = getInputs().front();
  int64_t rank = rankOf(first);
  int64_t axis = static_cast<int64_t>(getAxis());
  if (failed(verifyAxisInRange(*this, axis, rank)))
    return failure();
  SmallVector<int64_t> shape(shapeOf(first));
  for (auto [i, in] : llvm::enumerate(getInputs().drop_front())) {
    if (failed(expectSameElement(*this, in, "input", first, "first input")))
      return failure();
    ArrayRef<int64_t> s = shapeOf(in);
    bool ok = static_cast<int64_t>(s.size()) == rank;
    for (int64_t d = 0; ok && d < rank; ++d)
      ok = d == axis || s[d] == shape[d];
    if (!ok)
      return emitOpError("input #")
             << i + 1 << " has shape " << shapeStr(s)
             << ", which differs from input #0's " << shapeStr(shapeOf(first))
             << " outside axis " << axis;
    shape[axis] += s[axis];
  }
  return expectType(*this, getResult(), "result", shape, elemOf(first));
}

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

static LogicalResult verifyGradLikeParam(Operation *op, Value grad,
                                         Value param) {
  if (shapeOf(grad) != shapeOf(param))
    return op->emitOpError("grad shape ")
           << shapeStr(shapeOf(grad)) << " differs from param shape "
           << shapeStr(shapeOf(param));
  return success();
}

static LogicalResult verifyUnitInterval(Operation *op, StringRef name,
                                        double value) {
  if (!(value >= 0.0 && value < 1.0))
    return op->emitOpError() << name << " must lie in [0, 1), got " << value;
  return success();
}

LogicalResult AdamWOp::verify() {
  if (failed(verifyGradLikeParam(*this, getGrad(), getParam())) ||
      failed(
          expectSameType(*this, getExpAvg(), "exp_avg", getParam(), "param")) ||
      failed(expectSameType(*this, getExpAvgSq(), "exp_avg_sq", getParam(),
                            "param")))
    return failure();
  for (Value r : getResults())
    if (failed(expectSameType(*this, r, "result", getParam(), "param")))
      return failure();
  if (failed(verifyNonNegative(*this, "lr", getLr().convertToDouble())) ||
      failed(
          verifyUnitInterval(*this, "beta1", getBeta1().convertToDouble())) ||
      failed(
          verifyUnitInterval(*this, "beta2", getBeta2().convertToDouble())) ||
      failed(verifyNonNegative(*this, "eps", getEps().convertToDouble())) ||
      failed(verifyNonNegative(*this, "weight_decay",
                               getWeightDecay().convertToDouble())))
    return failure();
  return success();
}

LogicalResult SgdOp::verify() {
  if (failed(verifyGradLikeParam(*this, getGrad(), getParam())) ||
      failed(expectSameType(*this, getNewParam(), "new_param", getParam(),
                            "param")))
    return failure();
  double momentum = getMomentum().convertToDouble();
  if (failed(verifyNonNegative(*this, "lr", getLr().convertToDouble())) ||
      failed(verifyNonNegative(*this, "momentum", momentum)) ||
      failed(verifyNonNegative(*this, "dampening",
                               getDampening().convertToDouble())) ||
      failed(verifyNonNegative(*this, "weight_decay",
                               getWeightDecay().convertToDouble())))
    return failure();
  if (getNesterov() &&
      (momentum == 0.0 || getDampening().convertToDouble() != 0.0))
    return emitOpError("nesterov requires a non-zero momentum and zero "
                       "dampening");
  bool hasBuffer = static_cast<bool>(getMomentumBuffer());
  if (momentum != 0.0 && !hasBuffer)
    return emitOpError("momentum ")
           << momentum << " requires a momentum_buffer operand";
  if (momentum == 0.0 && hasBuffer)
    return emitOpError("has a momentum_buffer operand but momentum is 0");
  if (hasBuffer != static_cast<bool>(getNewMomentumBuffer()))
    return emitOpError("needs a new_momentum_buffer result exactly when it has "
                       "a momentum_buffer operand");
  if (hasBuffer &&
      (failed(expectSameType(*this, getMomentumBuffer(), "momentum_buffer",
                             getParam(), "param")) ||
       failed(expectSameType(*this, getNewMomentumBuffer(),
                             "new_momentum_buffer", getParam(), "param"))))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Mixed precision: overflow checks and dynamic loss scaling
//===----------------------------------------------------------------------===//

LogicalResult FoundInfOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  return success();
}

LogicalResult WaitOp::verify() {
  // Inside a kernel body (after --mw-form-kernels) the operand is the
  // kernel's argument; the pairing was checked on tensors.
  Operation *start = getInput().getDefiningOp();
  if (!start)
    return success();
  bool isFetch = isa<FetchOp>(start);
  if (start->getDialect()->getNamespace() != "mesh" && !isFetch)
    return emitOpError("waits for '")
           << start->getName()
           << "', which is not an asynchronous collective (a mesh op) or "
              "an mw.fetch";
  if (!getInput().hasOneUse())
    return emitOpError("must be the only use of its ")
           << (isFetch ? "fetch's" : "collective's")
           << " result, so that nothing reads it before it completes";
  for (Value v : getReading())
    if (!llvm::is_contained(start->getOperands(), v))
      return emitOpError("reads a value the collective does not: 'reading' "
                         "keeps the collective's operands live until it "
                         "completes");
  return success();
}

/// How a message names `v`: a function argument by its mw.name (else its
/// number), a result by the op that defines it.
static std::string describeValue(Value v) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto func = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
    StringAttr name =
        func ? func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                 MWDialect::kNameAttrName)
             : StringAttr();
    if (name)
      os << "'" << name.getValue() << "'";
    else
      os << "argument #" << arg.getArgNumber();
  } else {
    os << "the result of '" << v.getDefiningOp()->getName() << "'";
  }
  return text;
}

LogicalResult FetchOp::verify() {
  // Inside a kernel body (after --mw-form-kernels) the operand is the
  // kernel's argument; the source was checked on tensors.
  if ((*this)->getParentOfType<KernelOp>())
    return success();
  Value input = getInput();
  auto arg = dyn_cast<BlockArgument>(input);
  auto func = arg ? dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp())
                  : FunctionOpInterface();
  if (!func || arg.getOwner() != &func.getFunctionBody().front() ||
      !func.getArgAttr(arg.getArgNumber(), MWDialect::kOffloadAttrName))
    return emitOpError("fetches ")
           << describeValue(input)
           << ", which is not a function argument marked 'mw.offload' (an "
              "offloaded parameter in host memory or a weights file)";
  // I64Attr getters return uint64_t; compare the signed value.
  if (int64_t layer = static_cast<int64_t>(getLayer()); layer < 0)
    return emitOpError("layer must be >= 0, got ") << layer;
  for (Operation *user : getResult().getUsers())
    if (!isa<WaitOp>(user))
      return emitOpError("result is read by '")
             << user->getName()
             << "': only an mw.wait may use a fetch, so that nothing reads "
                "the copy before it completes";
  return success();
}

LogicalResult SelectOp::verify() {
  if (failed(expectSameType(*this, getFalseValue(), "false_value",
                            getTrueValue(), "true_value")) ||
      failed(expectSameType(*this, getResult(), "result", getTrueValue(),
                            "true_value")))
    return failure();
  return success();
}

LogicalResult LossScaleUpdateOp::verify() {
  // I64Attr getters return uint64_t; compare the signed values.
  int64_t window = static_cast<int64_t>(getWindow());
  int64_t hysteresis = static_cast<int64_t>(getHysteresis());
  if (window < 1)
    return emitOpError("window must be >= 1, got ") << window;
  if (hysteresis < 1)
    return emitOpError("hysteresis must be >= 1, got ") << hysteresis;
  if (failed(
          verifyPositive(*this, "min_scale", getMinScale().convertToDouble())))
    return failure();
  double factor = getFactor().convertToDouble();
  if (!(factor > 1.0) || std::isinf(factor))
    return emitOpError("factor must be finite and greater than 1, got ")
           << factor;
  return success();
}

// mw.fusion's kind as a bare keyword (`mw.fusion row ...`); on its own the
// attribute is `#mw.fusion_kind<row>`.
static ParseResult parseFusionKind(OpAsmParser &parser, FusionKindAttr &kind) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<FusionKind> value = symbolizeFusionKind(keyword);
  if (!value)
    return parser.emitError(loc, "expected a fusion kind (loop, row, matmul "
                                 "or horizontal), got '")
           << keyword << "'";
  kind = FusionKindAttr::get(parser.getContext(), *value);
  return success();
}

static void printFusionKind(OpAsmPrinter &printer, Operation *,
                            FusionKindAttr kind) {
  printer << stringifyFusionKind(kind.getValue());
}

#define GET_OP_CLASSES
#include "memwall/Dialect/MW/IR/MWOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Inference: the paged KV cache
//===----------------------------------------------------------------------===//

/// Whether a cache of element type `elem` holds quantized codes (i8,
/// f8E4M3FN), which need dequantization scales.
static bool isQuantizedCache(Type elem) {
  return elem.isSignlessInteger(8) || isa<Float8E4M3FNType>(elem);
}

/// Checks a cache's quantization scales `name`: present exactly for i8 and
/// f8E4M3FN caches, of size 1 or `heads`, every one positive and finite.
static LogicalResult verifyCacheScales(Operation *op, StringRef name,
                                       std::optional<ArrayRef<float>> scales,
                                       Type elem, int64_t heads) {
  bool quantized = isQuantizedCache(elem);
  if (quantized && !scales)
    return op->emitOpError("a ")
           << elem << " cache needs '" << name
           << "': one f32 scale per key/value head or one for all";
  if (!quantized && scales)
    return op->emitOpError("'")
           << name << "' is only for i8 and f8E4M3FN caches, not " << elem;
  if (!scales)
    return success();
  int64_t n = static_cast<int64_t>(scales->size());
  if (n != 1 && n != heads)
    return op->emitOpError("'")
           << name << "' has " << n << " values, expected 1 or " << heads
           << " (one per key/value head)";
  for (auto [i, s] : llvm::enumerate(*scales))
    if (!(s > 0.0f) || !std::isfinite(s))
      return op->emitOpError("'")
             << name << "' value #" << i << " must be positive and finite, got "
             << s;
  return success();
}

LogicalResult KvCacheWriteOp::verify() {
  if (failed(expectRank(*this, getCache(), "cache", 4, "[NB, BS, H, D]")) ||
      failed(expectRank(*this, getValues(), "values", 3, "[N, H, D]")) ||
      failed(expectRank(*this, getSlotMapping(), "slot_mapping", 1, "[N]")))
    return failure();
  ArrayRef<int64_t> cs = shapeOf(getCache()), vs = shapeOf(getValues());
  if (vs[1] != cs[2] || vs[2] != cs[3])
    return emitOpError("values shape ")
           << shapeStr(vs) << " does not match the cache shape "
           << shapeStr(cs) << " in heads or head dimension";
  if (shapeOf(getSlotMapping())[0] != vs[0])
    return emitOpError("slot_mapping has ")
           << shapeOf(getSlotMapping())[0] << " entries, expected one per "
           << "token of values (" << vs[0] << ")";
  return verifyCacheScales(*this, "scale", getScale(), elemOf(getCache()),
                           cs[2]);
}

LogicalResult PagedAttentionOp::verify() {
  if (failed(expectRank(*this, getQuery(), "query", 4, "[B, Hq, T, D]")) ||
      failed(expectRank(*this, getKeyCache(), "key_cache", 4,
                        "[NB, BS, Hkv, D]")) ||
      failed(expectRank(*this, getBlockTables(), "block_tables", 2,
                        "[B, MB]")) ||
      failed(expectRank(*this, getContextLens(), "context_lens", 1, "[B]")))
    return failure();
  ArrayRef<int64_t> qs = shapeOf(getQuery()), cs = shapeOf(getKeyCache());
  if (cs[3] != qs[3])
    return emitOpError("key_cache head dimension ")
           << cs[3] << " differs from the query's " << qs[3];
  if (qs[1] % cs[2] != 0)
    return emitOpError("query heads (")
           << qs[1] << ") must be a multiple of the cache's key/value heads ("
           << cs[2] << ")";
  if (shapeOf(getBlockTables())[0] != qs[0] ||
      shapeOf(getContextLens())[0] != qs[0])
    return emitOpError("block_tables ")
           << shapeStr(shapeOf(getBlockTables())) << " and context_lens "
           << shapeStr(shapeOf(getContextLens()))
           << " must have one row per sequence of the query (" << qs[0]
           << ")";
  if (std::optional<llvm::APFloat> s = getScale())
    if (failed(verifyPositive(*this, "scale", s->convertToDouble())))
      return failure();
  Type elem = elemOf(getKeyCache());
  if (failed(verifyCacheScales(*this, "k_scale", getKScale(), elem, cs[2])) ||
      failed(verifyCacheScales(*this, "v_scale", getVScale(), elem, cs[2])))
    return failure();
  return success();
}

double PagedAttentionOp::getEffectiveScale() {
  if (std::optional<llvm::APFloat> s = getScale())
    return s->convertToDouble();
  return 1.0 / std::sqrt(static_cast<double>(shapeOf(getQuery())[3]));
}
