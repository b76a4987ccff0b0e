//===- Evaluator.cpp - Reference evaluator of the mw dialect --------------===//
//
// One kernel per mw op, written as the op's documentation states it: naive
// loops in row-major order, f32 arithmetic, rounding to f16/bf16 after each
// op. Speed is not a goal; being obviously right and deterministic is. An
// Interpreter holds one rank's values and buffers; Lockstep drives N of them
// over the op sequence and computes the mesh collectives across them, so a
// single-rank evaluate() and an N-rank evaluateRanks() share every op's
// semantics.
//
//===----------------------------------------------------------------------===//

#include "memwall/Eval/Evaluator.h"

#include "memwall/Dialect/MW/IR/MWOps.h"
#include "mwrt/formulas.h"
#include "mwrt/index_walk.h"
#include "mwrt/initial_values.h"
#include "mwrt/op_table.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Mesh/IR/MeshOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>

using namespace mlir;
using namespace mlir::mw;
using namespace mlir::mw::eval;

//===----------------------------------------------------------------------===//
// Element kinds and rounding
//===----------------------------------------------------------------------===//

const char *mlir::mw::eval::elemKindName(ElemKind kind) {
  switch (kind) {
  case ElemKind::F32:
    return "f32";
  case ElemKind::F16:
    return "f16";
  case ElemKind::BF16:
    return "bf16";
  case ElemKind::I32:
    return "i32";
  case ElemKind::I64:
    return "i64";
  case ElemKind::I8:
    return "i8";
  case ElemKind::F8E4M3FN:
    return "f8E4M3FN";
  }
  return "?";
}

FailureOr<ElemKind> mlir::mw::eval::elemKindOf(Type t) {
  if (t.isF32())
    return ElemKind::F32;
  if (t.isF16())
    return ElemKind::F16;
  if (t.isBF16())
    return ElemKind::BF16;
  if (t.isSignlessInteger(32))
    return ElemKind::I32;
  if (t.isSignlessInteger(64))
    return ElemKind::I64;
  if (t.isSignlessInteger(8))
    return ElemKind::I8;
  if (isa<Float8E4M3FNType>(t))
    return ElemKind::F8E4M3FN;
  return failure();
}

Type mlir::mw::eval::elemTypeOf(MLIRContext *ctx, ElemKind kind) {
  Builder b(ctx);
  switch (kind) {
  case ElemKind::F32:
    return b.getF32Type();
  case ElemKind::F16:
    return b.getF16Type();
  case ElemKind::BF16:
    return b.getBF16Type();
  case ElemKind::I32:
    return b.getI32Type();
  case ElemKind::I64:
    return b.getI64Type();
  case ElemKind::I8:
    return b.getI8Type();
  case ElemKind::F8E4M3FN:
    return b.getFloat8E4M3FNType();
  }
  return {};
}

namespace formulas = mwrt::formulas;

/// The formulas' float format of float `kind`.
static formulas::FloatFormat formatOf(ElemKind kind) {
  return kind == ElemKind::BF16  ? formulas::FloatFormat::BF16
         : kind == ElemKind::F16 ? formulas::FloatFormat::F16
                                 : formulas::FloatFormat::F32;
}

// The encodings are mwrt/formulas.h's, shared with the runtime's backends;
// test/unit/EvaluatorTest.cpp checks them against llvm::APFloat.
uint16_t mlir::mw::eval::floatToBFloatBits(float value) {
  return formulas::floatToBFloatBits(value);
}
float mlir::mw::eval::bfloatBitsToFloat(uint16_t bits) {
  return formulas::bfloatBitsToFloat(bits);
}
uint16_t mlir::mw::eval::floatToHalfBits(float value) {
  return formulas::floatToHalfBits(value);
}
float mlir::mw::eval::halfBitsToFloat(uint16_t bits) {
  return formulas::halfBitsToFloat(bits);
}

float mlir::mw::eval::roundToKind(ElemKind kind, float value) {
  if (kind == ElemKind::F8E4M3FN)
    return formulas::roundToF8E4M3(value);
  return formulas::roundTo(formatOf(kind), value);
}

/// Wraps an integer to the width of `kind` (two's complement), as a machine
/// would.
static int64_t wrapToKind(ElemKind kind, int64_t v) {
  if (kind == ElemKind::I8)
    return static_cast<int8_t>(static_cast<uint8_t>(v));
  return kind == ElemKind::I32 ? formulas::wrapToI32(v) : v;
}

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

static int64_t product(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

template <typename Real>
BasicTensor<Real> BasicTensor<Real>::zeros(ElemKind kind,
                                           ArrayRef<int64_t> shape) {
  BasicTensor<Real> t;
  t.kind = kind;
  t.shape.assign(shape.begin(), shape.end());
  if (isFloatKind(kind))
    t.f.assign(product(shape), Real(0));
  else
    t.i.assign(product(shape), 0);
  return t;
}

template <typename Real> int64_t BasicTensor<Real>::numElements() const {
  return product(shape);
}

template <typename Real> bool BasicTensor<Real>::matches(Type type) const {
  auto t = dyn_cast<ShapedType>(type);
  if (!t || !isa<RankedTensorType, MemRefType>(t))
    return false;
  FailureOr<ElemKind> k = elemKindOf(t.getElementType());
  return succeeded(k) && *k == kind && t.getShape() == ArrayRef(shape);
}

template <typename Real> std::string BasicTensor<Real>::typeString() const {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + elemKindName(kind) + ">";
}

template struct mlir::mw::eval::BasicTensor<float>;
template struct mlir::mw::eval::BasicTensor<double>;

Tensor64 mlir::mw::eval::widen(const Tensor &t) {
  Tensor64 w;
  w.kind = t.kind;
  w.shape = t.shape;
  w.f.assign(t.f.begin(), t.f.end());
  w.i = t.i;
  return w;
}

//===----------------------------------------------------------------------===//
// Indexing helpers
//===----------------------------------------------------------------------===//

static SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> s(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    s[d] = s[d + 1] * shape[d + 1];
  return s;
}

/// Strides of `in` when broadcast to `outShape` (0 along broadcast dimensions).
static SmallVector<int64_t> broadcastStrides(ArrayRef<int64_t> in,
                                             ArrayRef<int64_t> outShape) {
  SmallVector<int64_t> inStrides = stridesOf(in);
  SmallVector<int64_t> s(outShape.size(), 0);
  size_t lead = outShape.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d)
    s[lead + d] = in[d] == 1 ? 0 : inStrides[d];
  return s;
}

// forEachIndex: mwrt/index_walk.h, the CPU backend's walk.
using mwrt::forEachIndex;

/// Strides of a reduction's output over its input's index space: the output
/// (with reduced axes kept as size 1) is indexed as the input, reduced axes
/// contributing nothing.
static SmallVector<int64_t> reductionStrides(ArrayRef<int64_t> shape,
                                             ArrayRef<int64_t> axes) {
  SmallVector<int64_t> keepShape;
  for (auto [d, size] : llvm::enumerate(shape))
    keepShape.push_back(
        llvm::is_contained(axes, static_cast<int64_t>(d)) ? 1 : size);
  SmallVector<int64_t> strides = stridesOf(keepShape);
  for (int64_t axis : axes)
    strides[axis] = 0;
  return strides;
}

/// Splits `shape` around `axis` into (outer, axis size, inner) for kernels
/// that work along one axis.
struct AxisSplit {
  int64_t outer, size, inner;
};
static AxisSplit splitAxis(ArrayRef<int64_t> shape, int64_t axis) {
  return {product(shape.take_front(axis)), shape[axis],
          product(shape.drop_front(axis + 1))};
}

//===----------------------------------------------------------------------===//
// The interpreter
//===----------------------------------------------------------------------===//

/// Rounds to `kind` like roundToKind; f32 values are left alone, which in
/// the f64 mode keeps them unrounded and in the f32 mode is exact anyway.
template <typename Real> static Real roundReal(ElemKind kind, Real x) {
  if (kind == ElemKind::F32)
    return x;
  return static_cast<Real>(roundToKind(kind, static_cast<float>(x)));
}

namespace {
/// The state of one rank of a run and the semantics of every op but the
/// collectives, which need all ranks (Lockstep below). A single-rank run is a
/// Lockstep of one Interpreter.
template <typename Real> class Interpreter {
public:
  using Tensor = BasicTensor<Real>;

  explicit Interpreter(FunctionOpInterface func) : func(func) {}

  /// Allocates the arena and binds `args` to the function's input arguments.
  LogicalResult bind(ArrayRef<Tensor> args);
  /// Evaluates one op of a function body or kernel body: neither a
  /// terminator, nor an mw.kernel, nor a collective.
  LogicalResult step(Operation &op);
  /// Binds a kernel's body arguments to the values of its inputs.
  LogicalResult enterKernel(KernelOp op);
  /// After the body: binds the kernel's results (or writes its destination
  /// buffers) from its mw.yield and forgets the body's values.
  LogicalResult exitKernel(KernelOp op);
  /// The same for an mw.fusion (always on tensors): its body runs op by op.
  LogicalResult enterFusion(FusionOp op);
  LogicalResult exitFusion(FusionOp op);
  /// The values `ret` returns.
  FailureOr<SmallVector<Tensor>> returned(func::ReturnOp ret);

  const Tensor &get(Value v) { return values.find(v)->second; }
  void set(Value v, Tensor t) { values.insert_or_assign(v, std::move(t)); }
  void setScalar(Value v, int64_t x) { scalars[v] = x; }

  static RankedTensorType typeOf(Value v) {
    return cast<RankedTensorType>(v.getType());
  }
  static ElemKind kindOf(Value v) {
    return *elemKindOf(typeOf(v).getElementType());
  }
  static Tensor zerosLike(Value v) {
    return Tensor::zeros(kindOf(v), typeOf(v).getShape());
  }
  /// Rounds every element of a Real tensor to its kind.
  static void round(Tensor &t) {
    if (t.kind == ElemKind::F32 || !t.isFloat())
      return;
    for (Real &x : t.f)
      x = roundReal(t.kind, x);
  }
  /// `in` converted to element kind `to` as mw.cast converts it (floats
  /// rounded to nearest even, integers wrapped, floats truncated toward zero
  /// into integers); an error at `op` for a float out of the integer's range.
  static FailureOr<Tensor> convert(Operation *op, const Tensor &in,
                                   ElemKind to);

private:
  using Results = FailureOr<SmallVector<Tensor>>;

  static Results one(Tensor t) {
    SmallVector<Tensor> r;
    r.push_back(std::move(t));
    return r;
  }

  Results evalOp(Operation *op);
  /// The value of a tensor or (read from its buffer) memref operand.
  FailureOr<Tensor> read(Operation *at, Value v);
  /// Writes `t` into the buffer of memref `v`.
  LogicalResult write(Operation *at, Value v, const Tensor &t);
  /// Calls `fn(byteAddress)` for each element of memref `v` in row-major
  /// order, after checking the view lies inside its allocation.
  LogicalResult forEachAddress(Operation *at, Value v,
                               llvm::function_ref<void(uint8_t *)> fn);

  Results constant(ConstantOp op);
  Results splat(SplatOp op);
  /// An op with a formula (the generated op table): unary and binary ops,
  /// activation gradients.
  Results elementwise(Operation *op, mwrt::OpKind kind);
  Results castOp(CastOp op);
  Results matmul(MatmulOp op);
  template <typename ReduceOp> Results reduce(ReduceOp op, int kind);
  Results softmax(Operation *op, int64_t axis, bool log);
  Results layerNorm(LayerNormOp op);
  Results rmsNorm(RmsNormOp op);
  Results embedding(EmbeddingOp op);
  Results crossEntropy(Operation *op, bool grad);
  Results attention(AttentionOp op);
  Results attentionGrad(AttentionGradOp op);
  Results reshape(Operation *op);
  Results transpose(TransposeOp op);
  Results broadcastTo(BroadcastToOp op);
  Results slice(SliceOp op);
  Results concat(ConcatOp op);
  Results softmaxGrad(Operation *op, int64_t axis, bool log);
  Results reduceMaxGrad(ReduceMaxGradOp op);
  Results layerNormGrad(LayerNormGradOp op);
  Results rmsNormGrad(RmsNormGradOp op);
  Results embeddingGrad(EmbeddingGradOp op);
  Results adamw(AdamWOp op);
  Results sgd(SgdOp op);
  Results foundInf(FoundInfOp op);
  Results select(SelectOp op);
  Results lossScaleUpdate(LossScaleUpdateOp op);
  Results kvCacheWrite(KvCacheWriteOp op);
  Results pagedAttention(PagedAttentionOp op);

  /// Checks that integer `index` lies in [0, bound).
  LogicalResult checkIndex(Operation *op, StringRef what, int64_t index,
                           int64_t bound) {
    if (index < 0 || index >= bound)
      return op->emitError()
             << what << " " << index << " is out of range [0, " << bound << ")";
    return success();
  }

  /// A memref value: the bytes of its allocation, shared by all views of it,
  /// and the byte offset of its base pointer in them; its layout's offset and
  /// strides come from its type.
  struct BufferRef {
    std::shared_ptr<std::vector<uint8_t>> bytes;
    int64_t base = 0;
  };

  FunctionOpInterface func;
  llvm::DenseMap<Value, Tensor> values;
  llvm::DenseMap<Value, BufferRef> buffers;
  /// Integer and index constants (view offsets).
  llvm::DenseMap<Value, int64_t> scalars;
};
} // namespace

/// Bytes one element of `type` occupies in a buffer (i8 for arenas).
static int64_t storageBytes(Type type) {
  if (type.isIndex())
    return 8;
  return std::max<int64_t>(1, type.getIntOrFloatBitWidth() / 8);
}

template <typename Real>
LogicalResult Interpreter<Real>::bind(ArrayRef<Tensor> args) {
  Block &block = func.getFunctionBody().front();
  SmallVector<unsigned> inputs = inputArguments(func);
  if (args.size() != inputs.size())
    return func.emitError() << "expected " << inputs.size()
                            << " arguments, got " << args.size();
  for (BlockArgument arg : block.getArguments()) {
    if (!isArenaArgument(func, arg.getArgNumber()))
      continue;
    // The planned arena, which the caller does not provide: zeroed bytes.
    auto type = cast<MemRefType>(arg.getType());
    buffers[arg] = {std::make_shared<std::vector<uint8_t>>(
                        type.getNumElements() *
                        storageBytes(type.getElementType())),
                    0};
  }
  for (auto [i, index] : llvm::enumerate(inputs)) {
    BlockArgument arg = block.getArgument(index);
    if (!args[i].matches(arg.getType()))
      return func.emitError()
             << "argument #" << index << " ('" << argumentName(func, index)
             << "') has type " << args[i].typeString() << ", expected "
             << arg.getType();
    if (auto type = dyn_cast<MemRefType>(arg.getType())) {
      if (!type.getLayout().isIdentity())
        return func.emitError()
               << "argument #" << index << " has a memref type with a "
               << "layout; the evaluator binds identity-layout arguments only";
      buffers[arg] = {std::make_shared<std::vector<uint8_t>>(
                          type.getNumElements() *
                          storageBytes(type.getElementType())),
                      0};
      if (failed(write(func, arg, args[i])))
        return failure();
    } else {
      values.try_emplace(arg, args[i]);
    }
  }
  return success();
}

template <typename Real>
FailureOr<SmallVector<BasicTensor<Real>>>
Interpreter<Real>::returned(func::ReturnOp ret) {
  SmallVector<Tensor> results;
  for (Value v : ret.getOperands()) {
    FailureOr<Tensor> t = read(ret, v);
    if (failed(t))
      return failure();
    results.push_back(std::move(*t));
  }
  return results;
}

template <typename Real>
LogicalResult Interpreter<Real>::step(Operation &op) {
  assert(!isa<KernelOp>(op) && "kernels are entered and left by Lockstep");
  if (isa_and_nonnull<MWDialect>(op.getDialect())) {
    Results r = evalOp(&op);
    if (failed(r))
      return failure();
    for (auto [res, t] : llvm::zip(op.getResults(), *r)) {
      assert(t.matches(res.getType()) && "kernel produced the wrong type");
      values.insert_or_assign(res, std::move(t));
    }
    return success();
  }
  auto newBuffer = [&](Value v) -> LogicalResult {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity())
      return op.emitError("the evaluator allocates static identity-layout "
                          "memrefs only, got ")
             << v.getType();
    buffers[v] = {std::make_shared<std::vector<uint8_t>>(
                      type.getNumElements() *
                      storageBytes(type.getElementType())),
                  0};
    return success();
  };
  if (isa<memref::AllocOp, memref::AllocaOp>(op))
    return newBuffer(op.getResult(0));
  if (isa<memref::DeallocOp>(op))
    return success();
  if (auto view = dyn_cast<memref::ViewOp>(op)) {
    auto shift = scalars.find(view.getByteShift());
    if (shift == scalars.end() || !view.getSizes().empty())
      return op.emitError("the evaluator needs memref.view with a constant "
                          "byte shift and a static shape");
    const BufferRef &src = buffers[view.getSource()];
    buffers[view.getResult()] = {src.bytes, src.base + shift->second};
    return success();
  }
  if (auto viewLike = dyn_cast<ViewLikeOpInterface>(op)) {
    // Subviews, reshapes and casts share the base pointer; the result type's
    // layout places the elements.
    auto it = buffers.find(viewLike.getViewSource());
    if (it == buffers.end() || op.getNumResults() != 1 ||
        !cast<MemRefType>(op.getResult(0).getType()).hasStaticShape())
      return op.emitError("the evaluator supports static views of buffers "
                          "only");
    BufferRef ref = it->second;
    buffers[op.getResult(0)] = ref;
    return success();
  }
  if (auto copy = dyn_cast<memref::CopyOp>(op)) {
    FailureOr<Tensor> t = read(&op, copy.getSource());
    if (failed(t))
      return failure();
    return write(&op, copy.getTarget(), *t);
  }
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    if (auto i = dyn_cast<IntegerAttr>(constant.getValue())) {
      scalars[constant.getResult()] = i.getInt();
      return success();
    }
  }
  if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
    if (!empty.getType().hasStaticShape() ||
        failed(elemKindOf(empty.getType().getElementType())))
      return op.emitError("the evaluator supports static tensor.empty of "
                          "f32, f16, bf16, i32 and i64 only");
    values.insert_or_assign(empty.getResult(), zerosLike(empty.getResult()));
    return success();
  }
  if (auto toTensor = dyn_cast<bufferization::ToTensorOp>(op)) {
    FailureOr<Tensor> t = read(&op, toTensor.getMemref());
    if (failed(t))
      return failure();
    values.insert_or_assign(toTensor.getResult(), std::move(*t));
    return success();
  }
  if (auto toMemref = dyn_cast<bufferization::ToMemrefOp>(op)) {
    if (failed(newBuffer(toMemref.getResult())))
      return failure();
    return write(&op, toMemref.getResult(), get(toMemref.getTensor()));
  }
  return op.emitError("the evaluator does not support '")
         << op.getName() << "'";
}

template <typename Real>
LogicalResult Interpreter<Real>::enterKernel(KernelOp op) {
  Block &body = op.getBody().front();
  for (auto [arg, in] : llvm::zip(body.getArguments(), op.getIns())) {
    FailureOr<Tensor> t = read(op, in);
    if (failed(t))
      return failure();
    values.insert_or_assign(arg, std::move(*t));
  }
  return success();
}

template <typename Real>
LogicalResult Interpreter<Real>::exitKernel(KernelOp op) {
  Block &body = op.getBody().front();
  // Every input is read before any output is written.
  Operation *yield = op.getYield();
  for (auto [i, v] : llvm::enumerate(yield->getOperands())) {
    if (op.hasBufferSemantics()) {
      if (failed(write(op, op.getOuts()[i], get(v))))
        return failure();
    } else {
      Tensor t = get(v); // a copy: inserting may move the map's entries
      values.insert_or_assign(op.getResult(i), std::move(t));
    }
  }
  for (BlockArgument arg : body.getArguments())
    values.erase(arg);
  for (Operation &inner : body.without_terminator())
    for (Value v : inner.getResults()) {
      values.erase(v);
      scalars.erase(v);
    }
  return success();
}

template <typename Real>
LogicalResult Interpreter<Real>::enterFusion(FusionOp op) {
  Block &body = op.getBody().front();
  for (auto [arg, in] : llvm::zip(body.getArguments(), op.getInputs())) {
    Tensor t = get(in); // a copy: inserting may move the map's entries
    values.insert_or_assign(arg, std::move(t));
  }
  return success();
}

template <typename Real>
LogicalResult Interpreter<Real>::exitFusion(FusionOp op) {
  Block &body = op.getBody().front();
  for (auto [i, v] : llvm::enumerate(op.getYield()->getOperands())) {
    Tensor t = get(v);
    values.insert_or_assign(op.getResult(i), std::move(t));
  }
  for (BlockArgument arg : body.getArguments())
    values.erase(arg);
  for (Operation &inner : body.without_terminator())
    for (Value v : inner.getResults())
      values.erase(v);
  return success();
}

template <typename Real>
LogicalResult
Interpreter<Real>::forEachAddress(Operation *at, Value v,
                                  llvm::function_ref<void(uint8_t *)> fn) {
  auto type = cast<MemRefType>(v.getType());
  auto it = buffers.find(v);
  if (it == buffers.end())
    return at->emitError("the evaluator has no buffer for this memref "
                         "operand");
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(type, strides, offset)) ||
      ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return at->emitError("the evaluator needs a static strided layout, got ")
           << type;
  const int64_t size = storageBytes(type.getElementType());
  std::vector<uint8_t> &bytes = *it->second.bytes;
  const int64_t base = it->second.base;
  ArrayRef<int64_t> shape = type.getShape();
  // First check the extent of the view, then visit its elements.
  int64_t lo = offset, hi = offset;
  for (auto [d, stride] : llvm::zip(shape, strides)) {
    if (d == 0)
      return success();
    (stride < 0 ? lo : hi) += (d - 1) * stride;
  }
  if (base + lo * size < 0 ||
      base + (hi + 1) * size > static_cast<int64_t>(bytes.size()))
    return at->emitError("memref operand of type ")
           << type << " at byte " << base + lo * size
           << " lies outside its allocation of " << bytes.size() << " bytes";
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t n = 0, e = type.getNumElements(); n < e; ++n) {
    int64_t element = offset;
    for (auto [i, stride] : llvm::zip(index, strides))
      element += i * stride;
    fn(bytes.data() + base + element * size);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return success();
}

template <typename Real>
FailureOr<BasicTensor<Real>> Interpreter<Real>::read(Operation *at, Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  if (!type)
    return get(v);
  FailureOr<ElemKind> kind = elemKindOf(type.getElementType());
  if (failed(kind))
    return at->emitError("the evaluator reads memrefs of f32, f16, bf16, "
                         "i32, i64, i8 and f8E4M3FN only, got ")
           << type;
  Tensor t = Tensor::zeros(*kind, type.getShape());
  int64_t n = 0;
  LogicalResult ok = forEachAddress(at, v, [&](uint8_t *p) {
    switch (*kind) {
    case ElemKind::F32: {
      float x;
      std::memcpy(&x, p, 4);
      t.f[n] = x;
      break;
    }
    case ElemKind::F16:
    case ElemKind::BF16: {
      uint16_t bits;
      std::memcpy(&bits, p, 2);
      t.f[n] = *kind == ElemKind::F16 ? halfBitsToFloat(bits)
                                      : bfloatBitsToFloat(bits);
      break;
    }
    case ElemKind::I32: {
      int32_t x;
      std::memcpy(&x, p, 4);
      t.i[n] = x;
      break;
    }
    case ElemKind::I64:
      std::memcpy(&t.i[n], p, 8);
      break;
    case ElemKind::I8:
      t.i[n] = static_cast<int8_t>(*p);
      break;
    case ElemKind::F8E4M3FN:
      t.f[n] = formulas::f8E4M3BitsToFloat(*p);
      break;
    }
    ++n;
  });
  if (failed(ok))
    return failure();
  return t;
}

template <typename Real>
LogicalResult Interpreter<Real>::write(Operation *at, Value v,
                                       const Tensor &t) {
  auto type = cast<MemRefType>(v.getType());
  if (!t.matches(type))
    return at->emitError("cannot write a ")
           << t.typeString() << " into a buffer of type " << type;
  int64_t n = 0;
  return forEachAddress(at, v, [&](uint8_t *p) {
    switch (t.kind) {
    case ElemKind::F32: {
      float x = static_cast<float>(t.f[n]);
      std::memcpy(p, &x, 4);
      break;
    }
    case ElemKind::F16:
    case ElemKind::BF16: {
      float x = static_cast<float>(t.f[n]);
      uint16_t bits = t.kind == ElemKind::F16 ? floatToHalfBits(x)
                                              : floatToBFloatBits(x);
      std::memcpy(p, &bits, 2);
      break;
    }
    case ElemKind::I32: {
      int32_t x = static_cast<int32_t>(t.i[n]);
      std::memcpy(p, &x, 4);
      break;
    }
    case ElemKind::I64:
      std::memcpy(p, &t.i[n], 8);
      break;
    case ElemKind::I8:
      *p = static_cast<uint8_t>(static_cast<int8_t>(t.i[n]));
      break;
    case ElemKind::F8E4M3FN:
      *p = formulas::floatToF8E4M3Bits(static_cast<float>(t.f[n]));
      break;
    }
    ++n;
  });
}

template <typename Real>
typename Interpreter<Real>::Results Interpreter<Real>::evalOp(Operation *op) {
  for (Value v : op->getOperands())
    if (!isa<RankedTensorType>(v.getType()) || !typeOf(v).hasStaticShape() ||
        failed(elemKindOf(typeOf(v).getElementType())))
      return op->emitError("the evaluator supports static tensors of f32, "
                           "f16, bf16, i32, i64, i8 and f8E4M3FN only, got ")
             << v.getType();
  mwrt::OpKind kind;
  if (mwrt::parseOpKind(op->getName().getStringRef(), kind) &&
      mwrt::elementwiseSpec(kind))
    return elementwise(op, kind);
  return llvm::TypeSwitch<Operation *, Results>(op)
      .Case([&](ConstantOp o) { return constant(o); })
      .Case([&](SplatOp o) { return splat(o); })
      .Case([&](CastOp o) { return castOp(o); })
      .Case([&](MatmulOp o) { return matmul(o); })
      .Case([&](ReduceSumOp o) { return reduce(o, 0); })
      .Case([&](ReduceMaxOp o) { return reduce(o, 1); })
      .Case([&](ReduceMeanOp o) { return reduce(o, 2); })
      .Case([&](SoftmaxOp o) {
        return softmax(o, static_cast<int64_t>(o.getAxis()), false);
      })
      .Case([&](LogSoftmaxOp o) {
        return softmax(o, static_cast<int64_t>(o.getAxis()), true);
      })
      .Case([&](LayerNormOp o) { return layerNorm(o); })
      .Case([&](RmsNormOp o) { return rmsNorm(o); })
      .Case([&](EmbeddingOp o) { return embedding(o); })
      .Case([&](CrossEntropyOp o) { return crossEntropy(o, false); })
      .Case([&](CrossEntropyGradOp o) { return crossEntropy(o, true); })
      .Case([&](AttentionOp o) { return attention(o); })
      .Case([&](AttentionGradOp o) { return attentionGrad(o); })
      .Case([&](KvCacheWriteOp o) { return kvCacheWrite(o); })
      .Case([&](PagedAttentionOp o) { return pagedAttention(o); })
      .Case([&](ReshapeOp o) { return reshape(o); })
      .Case([&](TransposeOp o) { return transpose(o); })
      .Case([&](BroadcastToOp o) { return broadcastTo(o); })
      .Case([&](SliceOp o) { return slice(o); })
      .Case([&](ConcatOp o) { return concat(o); })
      .Case([&](SoftmaxGradOp o) {
        return softmaxGrad(o, static_cast<int64_t>(o.getAxis()), false);
      })
      .Case([&](LogSoftmaxGradOp o) {
        return softmaxGrad(o, static_cast<int64_t>(o.getAxis()), true);
      })
      .Case([&](ReduceMaxGradOp o) { return reduceMaxGrad(o); })
      .Case([&](LayerNormGradOp o) { return layerNormGrad(o); })
      .Case([&](RmsNormGradOp o) { return rmsNormGrad(o); })
      .Case([&](EmbeddingGradOp o) { return embeddingGrad(o); })
      .Case([&](AdamWOp o) { return adamw(o); })
      .Case([&](SgdOp o) { return sgd(o); })
      .Case([&](FoundInfOp o) { return foundInf(o); })
      .Case([&](SelectOp o) { return select(o); })
      .Case([&](WaitOp o) { return one(get(o.getInput())); })
      .Case([&](FetchOp o) { return one(get(o.getInput())); })
      .Case([&](LossScaleUpdateOp o) { return lossScaleUpdate(o); })
      .Default([&](Operation *o) -> Results {
        return o->emitError("the evaluator does not support '")
               << o->getName() << "'";
      });
}

//===----------------------------------------------------------------------===//
// Constants and elementwise ops
//===----------------------------------------------------------------------===//

template <typename Real>
typename Interpreter<Real>::Results Interpreter<Real>::constant(ConstantOp op) {
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense)
    return op.emitError("the evaluator supports dense constants only");
  Tensor t = zerosLike(op.getResult());
  int64_t n = 0;
  if (t.isFloat()) {
    for (const APFloat &v : dense.getValues<APFloat>()) {
      APFloat x = v;
      bool lost = false;
      x.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
      t.f[n++] = roundReal(t.kind, x.convertToFloat());
    }
  } else {
    for (const APInt &v : dense.getValues<APInt>())
      t.i[n++] = v.getSExtValue();
  }
  return one(std::move(t));
}

template <typename Real>
typename Interpreter<Real>::Results Interpreter<Real>::splat(SplatOp op) {
  Tensor t = zerosLike(op.getResult());
  double v = op.getValue().convertToDouble();
  if (t.isFloat())
    std::fill(t.f.begin(), t.f.end(),
              formulas::roundOnceTo(formatOf(t.kind), v));
  else
    std::fill(t.i.begin(), t.i.end(),
              wrapToKind(t.kind, static_cast<int64_t>(v)));
  return one(std::move(t));
}

/// An attribute of an elementwise op as its formula's parameter (the
/// conventions of mwrt/formulas.h); the dialect's enum attributes are listed
/// here, by their case numbers.
static double formulaParam(Attribute attr) {
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return static_cast<double>(i.getInt());
  if (auto b = dyn_cast<BoolAttr>(attr))
    return b.getValue() ? 1.0 : 0.0;
  if (isa<UnitAttr>(attr))
    return 1.0;
  if (auto gelu = dyn_cast<GeluApproximationAttr>(attr))
    return static_cast<double>(gelu.getValue());
  llvm_unreachable("an attribute kind mw-tblgen does not make a parameter");
}

template <typename Real>
typename Interpreter<Real>::Results
Interpreter<Real>::elementwise(Operation *op, mwrt::OpKind kind) {
  const mwrt::ElementwiseSpec &spec = *mwrt::elementwiseSpec(kind);
  double p[mwrt::kMaxFormulaParams] = {};
  for (int i = 0; i < spec.numParams; ++i) {
    const mwrt::ParamSpec &param = spec.params[i];
    Attribute attr = op->getAttr(param.name);
    p[i] = attr ? formulaParam(attr) : param.byDefault;
  }
  Value res = op->getResult(0);
  Tensor out = zerosLike(res);
  if (spec.arity == 1) {
    out = get(op->getOperand(0));
    if (!out.isFloat()) { // integers compute in int64 and wrap
      for (int64_t &x : out.i)
        x = wrapToKind(out.kind, mwrt::applyUnaryFormula(kind, x, p));
      return one(std::move(out));
    }
    for (Real &x : out.f)
      x = mwrt::applyUnaryFormula(kind, x, p);
    round(out);
    return one(std::move(out));
  }
  const Tensor &a = get(op->getOperand(0));
  const Tensor &b = get(op->getOperand(1));
  ArrayRef<int64_t> shape = typeOf(res).getShape();
  std::array<SmallVector<int64_t>, 2> strides = {
      broadcastStrides(a.shape, shape), broadcastStrides(b.shape, shape)};
  if (out.isFloat()) {
    forEachIndex<2>(shape, strides, [&](int64_t n, std::array<int64_t, 2> o) {
      out.f[n] = mwrt::applyBinaryFormula(kind, a.f[o[0]], b.f[o[1]], p);
    });
    round(out);
    return one(std::move(out));
  }
  bool divByZero = false;
  forEachIndex<2>(shape, strides, [&](int64_t n, std::array<int64_t, 2> o) {
    divByZero |= kind == mwrt::OpKind::Div && b.i[o[1]] == 0;
    out.i[n] = wrapToKind(
        out.kind, mwrt::applyBinaryFormula(kind, a.i[o[0]], b.i[o[1]], p));
  });
  if (divByZero)
    return op->emitError("integer division by zero");
  return one(std::move(out));
}

template <typename Real>
FailureOr<BasicTensor<Real>>
Interpreter<Real>::convert(Operation *op, const Tensor &in, ElemKind to) {
  Tensor out = Tensor::zeros(to, in.shape);
  for (int64_t n = 0, e = in.numElements(); n < e; ++n) {
    if (out.isFloat()) {
      out.f[n] = in.isFloat() ? roundReal(out.kind, in.f[n])
                              : formulas::intTo(formatOf(out.kind), in.i[n]);
    } else if (in.isFloat()) {
      double v = std::trunc(static_cast<double>(in.f[n]));
      double lo =
          out.kind == ElemKind::I32 ? -2147483648.0 : -9.2233720368547758e18;
      double hi =
          out.kind == ElemKind::I32 ? 2147483647.0 : 9.2233720368547748e18;
      if (!(v >= lo && v <= hi))
        return op->emitError("cannot cast ")
               << in.f[n] << " to " << elemKindName(out.kind)
               << ": not finite or out of range";
      out.i[n] = static_cast<int64_t>(v);
    } else {
      out.i[n] = wrapToKind(out.kind, in.i[n]);
    }
  }
  return out;
}

template <typename Real>
typename Interpreter<Real>::Results Interpreter<Real>::castOp(CastOp op) {
  FailureOr<Tensor> out = convert(op, get(op.getInput()), kindOf(op.getResult()));
  if (failed(out))
    return failure();
  return one(std::move(*out));
}

//===----------------------------------------------------------------------===//
// Matmul and reductions
//===----------------------------------------------------------------------===//

template <typename Real>
typename Interpreter<Real>::Results Interpreter<Real>::matmul(MatmulOp op) {
  const Tensor &a = get(op.getLhs());
  const Tensor &b = get(op.getRhs());
  Tensor out = zerosLike(op.getResult());
  ArrayRef<int64_t> outShape = out.shape;
  size_t ar = a.shape.size(), orr = outShape.size();
  int64_t m = outShape[orr - 2], n = outShape[orr - 1];
  int64_t k = op.getTransposeLhs() ? a.shape[ar - 2] : a.shape[ar - 1];
  // Element strides of the two matrix dimensions after the transposes.
  int64_t aRow = op.getTransposeLhs() ? 1 : k,
          aCol = op.getTransposeLhs() ? m : 1;
  int64_t bRow = op.getTransposeRhs() ? 1 : n,
          bCol = op.getTransposeRhs() ? k : 1;
  ArrayRef<int64_t> batch = outShape.drop_back(2);
  SmallVector<int64_t> aBatch(ArrayRef<int64_t>(a.shape).drop_back(2));
  SmallVector<int64_t> bBatch(ArrayRef<int64_t>(b.shape).drop_back(2));
  // Batch strides in units of whole matrices.
  std::array<SmallVector<int64_t>, 2> strides = {
      broadcastStrides(aBatch, batch), broadcastStrides(bBatch, batch)};
  forEachIndex<2>(batch, strides, [&](int64_t bi, std::array<int64_t, 2> o) {
    const Real *pa = a.f.data() + o[0] * m * k;
    const Real *pb = b.f.data() + o[1] * k * n;
    Real *pc = out.f.data() + bi * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        Real acc = 0.0f;
        for (int64_t p = 0; p < k; ++p)
          acc += pa[i * aRow + p * aCol] * pb[p * bRow + j * bCol];
        pc[i * n + j] = acc;
      }
  });
  round(out);
  return one(std::move(out));
}

/// kind: 0 sum, 1 max, 2 mean.
template <typename Real>
template <typename ReduceOp>
typename Interpreter<Real>::Results Interpreter<Real>::reduce(ReduceOp op,
                                                              int kind) {
  const Tensor &in = get(op.getInput());
  Tensor out = zerosLike(op.getResult());
  ArrayRef<int64_t> axes = op.getAxes();
  SmallVector<int64_t> outStrides = reductionStrides(in.shape, axes);
  int64_t count = 1;
  for (int64_t axis : axes)
    count *= in.shape[axis];
  std::vector<char> seen(out.numElements(), 0);
  std::array<SmallVector<int64_t>, 1> strides = {outStrides};
  forEachIndex<1>(in.shape, strides, [&](int64_t n, std::array<int64_t, 1> o) {
    if (in.isFloat()) {
      Real x = in.f[n];
      if (kind == 1)
        out.f[o[0]] = !seen[o[0]] ? x
                      : (std::isnan(x) || std::isnan(out.f[o[0]]))
                          ? NAN
                          : std::max(out.f[o[0]], x);
      else
        out.f[o[0]] += x;
    } else {
      int64_t x = in.i[n];
      if (kind == 1)
        out.i[o[0]] = !seen[o[0]] ? x : std::max(out.i[o[0]], x);
      else
        out.i[o[0]] = static_cast<int64_t>(static_cast<uint64_t>(out.i[o[0]]) +
                                           static_cast<uint64_t>(x));
    }
    seen[o[0]] = 1;
  });
  if (kind == 2)
    for (Real &x : out.f)
      x /= static_cast<Real>(count);
  if (!out.isFloat())
    for (int64_t &x : out.i)
      x = wrapToKind(out.kind, x);
  round(out);
  return one(std::move(out));
}

//===----------------------------------------------------------------------===//
// Softmax, norms, embedding, cross-entropy
//===----------------------------------------------------------------------===//

template <typename Real>
typename Interpreter<Real>::Results
Interpreter<Real>::softmax(Operation *op, int64_t axis, bool log) {
  const Tensor &in = get(op->getOperand(0));
  Tensor out = zerosLike(op->getResult(0));
  AxisSplit s = splitAxis(in.shape, axis);
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t in2 = 0; in2 < s.inner; ++in2) {
      auto idx = [&](int64_t j) { return (o * s.size + j) * s.inner + in2; };
      Real mx = -std::numeric_limits<Real>::infinity();
      for (int64_t j = 0; j < s.size; ++j)
        mx = std::max(mx, in.f[idx(j)]);
      Real sum = 0.0f;
      for (int64_t j = 0; j < s.size; ++j)
        sum += std::exp(in.f[idx(j)] - mx);
      for (int64_t j = 0; j < s.size; ++j)
        out.f[idx(j)] = log ? in.f[idx(j)] - mx - std::log(sum)
                            : std::exp(in.f[idx(j)] - mx) / sum;
    }
  round(out);
  return one(std::move(out));
}

template <typename Real>
typename Interpreter<Real>::Results
Interpreter<Real>::layerNorm(LayerNormOp op) {
  const Tensor &x = get(op.getInput());
  const Tensor &g = get(op.getGamma());
  const Tensor &b = get(op.getBeta());
  Tensor y = zerosLike(op.getResult());
  Tensor mean = zerosLike(op.getMean());
  Tensor rstd = zerosLike(op.getRstd());
  int64_t d = x.shape.back(), rows = x.numElements() / std::max<int64_t>(d, 1);
  Real eps = static_cast<Real>(op.getEpsilon().convertToDouble());
  for (int64_t r = 0; r < rows; ++r)
    mwrt::formulas::layerNormRow(x.f.data() + r * d, g.f.data(), b.f.data(), d,
                                 eps, y.f.data() + r * d, mean.f[r],
                                 rstd.f[r]);
  round(y);
  SmallVector<Tensor> res;
  res.push_back(std::move(y));
  res.push_back(std::move(mean));
  res.push_back(std::move(rstd));
  return res;
}

template <typename Real>
typename Interpreter<Real>::Results Interpreter<Real>::rmsNorm(RmsNormOp op) {
  const Tensor &x = get(op.getInput());
  const Tensor &g = get(op.getGamma());
  Tensor y = zerosLike(op.getResult());
  Tensor rstd = zerosLike(op.getRstd());
  int64_t d = x.shape.back(), rows = x.numElements() / std::max<int64_t>(d, 1);
  Real eps = static_cast<Real>(op.getEpsilon().convertToDouble());
  for (int64_t r = 0; r < rows; ++r)
    mwrt::formulas::rmsNormRow(x.f.data() + r * d, g.f.data(), d, eps,
                               y.f.data() + r * d, rstd.f[r]);
  round(y);
  SmallVector<Tensor> res;
  res.push_back(std::move(y));
  res.push_back(std::move(rstd));
  return res;
}

template <typename Real>
typename Interpreter<Real>::Results
Interpreter<Real>::embedding(EmbeddingOp op) {
  const Tensor &table = get(op.getTable());
  const Tensor &idx = get(op.getIndices());
  Tensor out = zerosLike(op.getResult());
  int64_t v = table.shape[0], d = table.shape[1];
  for (int64_t n = 0, e = idx.numElements(); n < e; ++n) {
    if (failed(checkIndex(op, "embedding index", idx.i[n], v)))
      return failure();
    std::copy_n(table.f.begin() + idx.i[n] * d, d, out.f.begin() + n * d);
  }
  return one(std::move(out));
}

template <typename Real>
typename Interpreter<Real>::Results
Interpreter<Real>::crossEntropy(Operation *op, bool grad) {
  const Tensor &logits = get(op->getOperand(0));
  const Tensor &labels = get(op->getOperand(1));
  int64_t ignore =
      static_cast<int64_t>(grad ? cast<CrossEntropyGradOp>(op).getIgnoreIndex()
                                : cast<CrossEntropyOp>(op).getIgnoreIndex());
  std::optional<uint64_t> offset =
      grad ? cast<CrossEntropyGradOp>(op).getLabelOffset()
           : cast<CrossEntropyOp>(op).getLabelOffset();
  // Row t's label is label(t); the mean divides by the count of every label
  // given (with label_offset, those of the whole batch the chunk is of).
  int64_t c = logits.shape.back(), all = labels.numElements();
  int64_t rows = c ? logits.numElements() / c : 0;
  int64_t first = offset ? static_cast<int64_t>(*offset) : 0;
  auto label = [&](int64_t t) { return labels.i[first + t]; };
  int64_t count = 0;
  for (int64_t t = 0; t < all; ++t) {
    if (labels.i[t] == ignore)
      continue;
    if (failed(checkIndex(op, "label", labels.i[t], c)))
      return failure();
    ++count;
  }
  // Per-row max and log-sum-exp, as log_softmax computes them.
  auto rowStats = [&](int64_t t, Real &mx, Real &sum) {
    const Real *p = logits.f.data() + t * c;
    mx = -std::numeric_limits<Real>::infinity();
    for (int64_t j = 0; j < c; ++j)
      mx = std::max(mx, p[j]);
    sum = 0.0f;
    for (int64_t j = 0; j < c; ++j)
      sum += std::exp(p[j] - mx);
  };
  if (!grad) {
    Tensor loss = zerosLike(op->getResult(0));
    Real total = 0.0f;
    for (int64_t t = 0; t < rows; ++t) {
      if (label(t) == ignore)
        continue;
      Real mx, sum;
      rowStats(t, mx, sum);
      total += mx + std::log(sum) - logits.f[t * c + label(t)];
    }
    loss.f[0] = count ? total / static_cast<Real>(count) : 0.0f;
    return one(std::move(loss));
  }
  Real g = get(op->getOperand(2)).f[0];
  Tensor out = zerosLike(op->getResult(0));
  for (int64_t t = 0; t < rows && count; ++t) {
    if (label(t) == ignore)
      continue;
    Real mx, sum;
    rowStats(t, mx, sum);
    for (int64_t j = 0; j < c; ++j) {
      Real p = std::exp(logits.f[t * c + j] - mx) / sum;
      Real onehot = j == label(t) ? 1.0f : 0.0f;
      out.f[t * c + j] = g * (p - onehot) / static_cast<Real>(count);
    }
  }
  round(out);
  return one(std::move(out));
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// Whether query row i may attend to key column j.
static bool allowed(bool causal, int64_t i, int64_t j) {
  return !causal || j <= i;
}

template <typename Real>
typename Interpreter<Real>::Results
Interpreter<Real>::attention(AttentionOp op) {
  const Tensor &q = get(op.getQuery());
  const Tensor &k = get(op.getKey());
  const Tensor &v = get(op.getValue());
  Tensor out = zerosLike(op.getResult());
  Tensor lse = zerosLike(op.getLse());
  int64_t bh = q.shape[0] * q.shape[1], s = q.shape[2], sk = k.shape[2];
  int64_t d = q.shape[3], dv = v.shape[3];
  Real scale = static_cast<Real>(op.getEffectiveScale());
  bool causal = op.getCausal();
  std::vector<Real> scores(sk);
  for (int64_t h = 0; h < bh; ++h)
    for (int64_t i = 0; i < s; ++i) {
      const Real *pq = q.f.data() + (h * s + i) * d;
      Real mx = -std::numeric_limits<Real>::infinity();
      for (int64_t j = 0; j < sk; ++j) {
        if (!allowed(causal, i, j))
          continue;
        const Real *pk = k.f.data() + (h * sk + j) * d;
        Real dot = 0.0f;
        for (int64_t e = 0; e < d; ++e)
          dot += pq[e] * pk[e];
        scores[j] = scale * dot;
        mx = std::max(mx, scores[j]);
      }
      Real sum = 0.0f;
      for (int64_t j = 0; j < sk; ++j)
        if (allowed(causal, i, j))
          sum += std::exp(scores[j] - mx);
      Real *po = out.f.data() + (h * s + i) * dv;
      for (int64_t j = 0; j < sk; ++j) {
        if (!allowed(causal, i, j))
          continue;
        Real p = std::exp(scores[j] - mx) / sum;
        const Real *pv = v.f.data() + (h * sk + j) * dv;
        for (int64_t e = 0; e < dv; ++e)
          po[e] += p * pv[e];
      }
      lse.f[h * s + i] = mx + std::log(sum);
    }
  round(out);
  SmallVector<Tensor> res;
  res.push_back(std::move(out));
  res.push_back(std::move(lse));
  return res;
}

//===----------------------------------------------------------------------===//
// The paged KV cache
//===----------------------------------------------------------------------===//

/// Scale of head `h` from a cache's scales (one per head, or one for all).
static float headScale(std::optional<ArrayRef<float>> scales, int64_t h) {
  if (!scales)
    return 1.0f;
  return scales->size() == 1 ? (*scales)[0] : (*scales)[h];
}

template <typename Real>
typename Interpreter<Real>::Results
Interpreter<Real>::kvCacheWrite(KvCacheWriteOp op) {
  Tensor cache = get(op.getCache());
  const Tensor &values = get(op.getValues());
  const Tensor &slots = get(op.getSlotMapping());
  int64_t nb = cache.shape[0], bs = cache.shape[1], heads = cache.shape[2];
  int64_t d = cache.shape[3], n = values.shape[0];
  std::optional<ArrayRef<float>> scales = op.getScale();
  // Check every slot before writing anything: a bad slot fails the op.
  for (int64_t t = 0; t < n; ++t) {
    int64_t slot = slots.i[t];
    if (slot != -1 && (slot < 0 || slot >= nb * bs))
      return op.emitError() << "slot_mapping[" << t << "] = " << slot
                            << " is outside the cache's " << nb * bs
                            << " slots (" << nb << " blocks of " << bs
                            << "; -1 skips a token)";
  }
  for (int64_t t = 0; t < n; ++t) {
    int64_t slot = slots.i[t];
    if (slot == -1)
      continue;
    for (int64_t h = 0; h < heads; ++h) {
      float scale = headScale(scales, h);
      for (int64_t e = 0; e < d; ++e) {
        float x = static_cast<float>(values.f[(t * heads + h) * d + e]);
        int64_t at = (slot * heads + h) * d + e;
        switch (cache.kind) {
        case ElemKind::I8:
          cache.i[at] = formulas::quantizeI8(x, scale);
          break;
        case ElemKind::F8E4M3FN:
          cache.f[at] =
              formulas::f8E4M3BitsToFloat(formulas::quantizeF8E4M3(x, scale));
          break;
        default:
          cache.f[at] = roundReal(cache.kind, static_cast<Real>(x));
          break;
        }
      }
    }
  }
  return one(std::move(cache));
}

template <typename Real>
typename Interpreter<Real>::Results
Interpreter<Real>::pagedAttention(PagedAttentionOp op) {
  const Tensor &q = get(op.getQuery());
  const Tensor &kc = get(op.getKeyCache());
  const Tensor &vc = get(op.getValueCache());
  const Tensor &tables = get(op.getBlockTables());
  const Tensor &lens = get(op.getContextLens());
  int64_t b = q.shape[0], hq = q.shape[1], t = q.shape[2], d = q.shape[3];
  int64_t nb = kc.shape[0], bs = kc.shape[1], hkv = kc.shape[2];
  int64_t mb = tables.shape[1], group = hq / hkv;
  std::optional<ArrayRef<float>> kScales = op.getKScale(),
                                 vScales = op.getVScale();
  // Check the context lengths and every block table entry a context uses.
  for (int64_t s = 0; s < b; ++s) {
    int64_t len = lens.i[s];
    if (len < 0 || len > mb * bs)
      return op.emitError() << "context_lens[" << s << "] = " << len
                            << " is outside [0, " << mb * bs << "] (" << mb
                            << " blocks of " << bs << " per sequence)";
    for (int64_t blk = 0; blk * bs < len; ++blk) {
      int64_t entry = tables.i[s * mb + blk];
      if (entry < 0 || entry >= nb)
        return op.emitError()
               << "block_tables[" << s << ", " << blk << "] = " << entry
               << " is outside the cache's " << nb << " blocks (sequence "
               << s << " holds " << len << " tokens)";
    }
  }
  // Element e of head g of token j of sequence s, dequantized.
  auto element = [&](const Tensor &cache, std::optional<ArrayRef<float>> sc,
                     int64_t s, int64_t g, int64_t j, int64_t e) -> Real {
    int64_t block = tables.i[s * mb + j / bs];
    int64_t at = ((block * bs + j % bs) * hkv + g) * d + e;
    if (cache.kind == ElemKind::I8)
      return static_cast<Real>(formulas::dequantizeI8(
          static_cast<int8_t>(cache.i[at]), headScale(sc, g)));
    if (cache.kind == ElemKind::F8E4M3FN)
      return static_cast<Real>(static_cast<float>(cache.f[at]) *
                               headScale(sc, g));
    return cache.f[at];
  };
  Tensor out = zerosLike(op.getResult());
  Real scale = static_cast<Real>(op.getEffectiveScale());
  std::vector<Real> scores(mb * bs), key(d);
  // As mw.attention computes one query row: the same order of operations,
  // so that a float cache gives the bits the training forward gives.
  for (int64_t s = 0; s < b; ++s)
    for (int64_t h = 0; h < hq; ++h) {
      int64_t g = h / group;
      for (int64_t i = 0; i < t; ++i) {
        int64_t pos = lens.i[s] - t + i;
        if (pos < 0)
          continue; // padding: nothing to attend to, zeros
        const Real *pq = q.f.data() + ((s * hq + h) * t + i) * d;
        Real mx = -std::numeric_limits<Real>::infinity();
        for (int64_t j = 0; j <= pos; ++j) {
          Real dot = 0.0f;
          for (int64_t e = 0; e < d; ++e)
            dot += pq[e] * element(kc, kScales, s, g, j, e);
          scores[j] = scale * dot;
          mx = std::max(mx, scores[j]);
        }
        Real sum = 0.0f;
        for (int64_t j = 0; j <= pos; ++j)
          sum += std::exp(scores[j] - mx);
        Real *po = out.f.data() + ((s * hq + h) * t + i) * d;
        for (int64_t j = 0; j <= pos; ++j) {
          Real p = std::exp(scores[j] - mx) / sum;
          for (int64_t e = 0; e < d; ++e)
            po[e] += p * element(vc, vScales, s, g, j, e);
        }
      }
    }
  round(out);
  return one(std::move(out));
}

template <typename Real>
typename Interpreter<Real>::Results
Interpreter<Real>::attentionGrad(AttentionGradOp op) {
  const Tensor &q = get(op.getQuery());
  const Tensor &k = get(op.getKey());
  const Tensor &v = get(op.getValue());
  const Tensor &lse = get(op.getLse());
  const Tensor &dout = get(op.getGradOutput());
  Tensor dq = zerosLike(op.getGradQuery());
  Tensor dk = zerosLike(op.getGradKey());
  Tensor dv = zerosLike(op.getGradValue());
  int64_t bh = q.shape[0] * q.shape[1], s = q.shape[2], sk = k.shape[2];
  int64_t d = q.shape[3], dvd = v.shape[3];
  std::optional<APFloat> scaleAttr = op.getScale();
  // The default 1/sqrt(D) in double, exactly as AttentionOp's
  // getEffectiveScale: an f32 1/sqrtf(D) differs in the last bit for D = 6,
  // 7, 24, ..., and the recomputed probabilities would then not match lse.
  Real scale =
      static_cast<Real>(scaleAttr ? scaleAttr->convertToDouble()
                                  : 1.0 / std::sqrt(static_cast<double>(d)));
  bool causal = op.getCausal();
  std::vector<Real> p(sk), dp(sk);
  for (int64_t h = 0; h < bh; ++h)
    for (int64_t i = 0; i < s; ++i) {
      const Real *pq = q.f.data() + (h * s + i) * d;
      const Real *pdo = dout.f.data() + (h * s + i) * dvd;
      Real rowDot = 0.0f; // sum_j p_ij * dp_ij
      for (int64_t j = 0; j < sk; ++j) {
        if (!allowed(causal, i, j))
          continue;
        const Real *pk = k.f.data() + (h * sk + j) * d;
        const Real *pv = v.f.data() + (h * sk + j) * dvd;
        Real dot = 0.0f;
        for (int64_t e = 0; e < d; ++e)
          dot += pq[e] * pk[e];
        p[j] = std::exp(scale * dot - lse.f[h * s + i]);
        Real g = 0.0f;
        for (int64_t e = 0; e < dvd; ++e)
          g += pdo[e] * pv[e];
        dp[j] = g;
        rowDot += p[j] * dp[j];
      }
      for (int64_t j = 0; j < sk; ++j) {
        if (!allowed(causal, i, j))
          continue;
        const Real *pk = k.f.data() + (h * sk + j) * d;
        Real *pdv = dv.f.data() + (h * sk + j) * dvd;
        Real *pdk = dk.f.data() + (h * sk + j) * d;
        Real *pdq = dq.f.data() + (h * s + i) * d;
        for (int64_t e = 0; e < dvd; ++e)
          pdv[e] += p[j] * pdo[e];
        Real ds = p[j] * (dp[j] - rowDot) * scale;
        for (int64_t e = 0; e < d; ++e) {
          pdq[e] += ds * pk[e];
          pdk[e] += ds * pq[e];
        }
      }
    }
  round(dq);
  round(dk);
  round(dv);
  SmallVector<Tensor> res;
  res.push_back(std::move(dq));
  res.push_back(std::move(dk));
  res.push_back(std::move(dv));
  return res;
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

template <typename Real>
typename Interpreter<Real>::Results Interpreter<Real>::reshape(Operation *op) {
  Tensor out = get(op->getOperand(0));
  auto shape = typeOf(op->getResult(0)).getShape();
  out.shape.assign(shape.begin(), shape.end());
  return one(std::move(out));
}

/// Copies element `src` of `in` to element `dst` of `out`.
template <typename TensorT>
static void copyElement(const TensorT &in, int64_t src, TensorT &out,
                        int64_t dst) {
  if (in.isFloat())
    out.f[dst] = in.f[src];
  else
    out.i[dst] = in.i[src];
}

template <typename Real>
typename Interpreter<Real>::Results
Interpreter<Real>::transpose(TransposeOp op) {
  const Tensor &in = get(op.getInput());
  Tensor out = zerosLike(op.getResult());
  SmallVector<int64_t> inStrides = stridesOf(in.shape);
  std::array<SmallVector<int64_t>, 1> strides;
  for (int64_t p : op.getPermutation())
    strides[0].push_back(inStrides[p]);
  forEachIndex<1>(out.shape, strides, [&](int64_t n, std::array<int64_t, 1> o) {
    copyElement(in, o[0], out, n);
  });
  return one(std::move(out));
}

template <typename Real>
typename Interpreter<Real>::Results
Interpreter<Real>::broadcastTo(BroadcastToOp op) {
  const Tensor &in = get(op.getInput());
  Tensor out = zerosLike(op.getResult());
  std::array<SmallVector<int64_t>, 1> strides = {
      broadcastStrides(in.shape, out.shape)};
  forEachIndex<1>(out.shape, strides, [&](int64_t n, std::array<int64_t, 1> o) {
    copyElement(in, o[0], out, n);
  });
  return one(std::move(out));
}

template <typename Real>
typename Interpreter<Real>::Results Interpreter<Real>::slice(SliceOp op) {
  const Tensor &in = get(op.getInput());
  Tensor out = zerosLike(op.getResult());
  SmallVector<int64_t> inStrides = stridesOf(in.shape);
  SmallVector<int64_t> steps = op.getStridesOrDefault();
  int64_t base = 0;
  std::array<SmallVector<int64_t>, 1> strides;
  for (auto [d, off] : llvm::enumerate(op.getOffsets())) {
    base += off * inStrides[d];
    strides[0].push_back(steps[d] * inStrides[d]);
  }
  forEachIndex<1>(out.shape, strides, [&](int64_t n, std::array<int64_t, 1> o) {
    copyElement(in, base + o[0], out, n);
  });
  return one(std::move(out));
}

template <typename Real>
typename Interpreter<Real>::Results Interpreter<Real>::concat(ConcatOp op) {
  Tensor out = zerosLike(op.getResult());
  int64_t axis = static_cast<int64_t>(op.getAxis());
  AxisSplit os = splitAxis(out.shape, axis);
  int64_t at = 0;
  for (Value v : op.getInputs()) {
    const Tensor &in = get(v);
    AxisSplit is = splitAxis(in.shape, axis);
    for (int64_t o = 0; o < is.outer; ++o)
      for (int64_t j = 0; j < is.size; ++j)
        for (int64_t r = 0; r < is.inner; ++r)
          copyElement(in, (o * is.size + j) * is.inner + r, out,
                      (o * os.size + at + j) * os.inner + r);
    at += is.size;
  }
  return one(std::move(out));
}

//===----------------------------------------------------------------------===//
// Backward ops
//===----------------------------------------------------------------------===//

template <typename Real>
typename Interpreter<Real>::Results
Interpreter<Real>::softmaxGrad(Operation *op, int64_t axis, bool log) {
  const Tensor &y = get(op->getOperand(0));
  const Tensor &dy = get(op->getOperand(1));
  Tensor out = zerosLike(op->getResult(0));
  AxisSplit s = splitAxis(y.shape, axis);
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t r = 0; r < s.inner; ++r) {
      auto idx = [&](int64_t j) { return (o * s.size + j) * s.inner + r; };
      Real sum = 0.0f;
      for (int64_t j = 0; j < s.size; ++j)
        sum += log ? dy.f[idx(j)] : dy.f[idx(j)] * y.f[idx(j)];
      for (int64_t j = 0; j < s.size; ++j)
        out.f[idx(j)] = log ? dy.f[idx(j)] - std::exp(y.f[idx(j)]) * sum
                            : y.f[idx(j)] * (dy.f[idx(j)] - sum);
    }
  round(out);
  return one(std::move(out));
}

template <typename Real>
typename Interpreter<Real>::Results
Interpreter<Real>::reduceMaxGrad(ReduceMaxGradOp op) {
  const Tensor &x = get(op.getInput());
  const Tensor &m = get(op.getOutput());
  const Tensor &dm = get(op.getGradOutput());
  Tensor out = zerosLike(op.getResult());
  ArrayRef<int64_t> axes = op.getAxes();
  SmallVector<int64_t> outStrides = reductionStrides(x.shape, axes);
  std::array<SmallVector<int64_t>, 1> strides = {outStrides};
  std::vector<Real> ties(m.numElements(), 0.0f);
  forEachIndex<1>(x.shape, strides, [&](int64_t n, std::array<int64_t, 1> o) {
    if (x.f[n] == m.f[o[0]])
      ties[o[0]] += 1.0f;
  });
  forEachIndex<1>(x.shape, strides, [&](int64_t n, std::array<int64_t, 1> o) {
    if (x.f[n] == m.f[o[0]])
      out.f[n] = dm.f[o[0]] / ties[o[0]];
  });
  round(out);
  return one(std::move(out));
}

template <typename Real>
typename Interpreter<Real>::Results
Interpreter<Real>::layerNormGrad(LayerNormGradOp op) {
  const Tensor &x = get(op.getInput());
  const Tensor &g = get(op.getGamma());
  const Tensor &mean = get(op.getMean());
  const Tensor &rstd = get(op.getRstd());
  const Tensor &dy = get(op.getGradOutput());
  Tensor dx = zerosLike(op.getGradInput());
  Tensor dg = zerosLike(op.getGradGamma());
  Tensor db = zerosLike(op.getGradBeta());
  int64_t d = x.shape.back(), rows = x.numElements() / std::max<int64_t>(d, 1);
  std::vector<Real> dgAcc(d, 0.0f), dbAcc(d, 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    mwrt::formulas::layerNormGradRow(x.f.data() + r * d, g.f.data(),
                                     dy.f.data() + r * d, mean.f[r], rstd.f[r],
                                     d, dx.f.data() + r * d, dgAcc.data(),
                                     dbAcc.data());
  dg.f = dgAcc;
  db.f = dbAcc;
  round(dx);
  round(dg);
  round(db);
  SmallVector<Tensor> res;
  res.push_back(std::move(dx));
  res.push_back(std::move(dg));
  res.push_back(std::move(db));
  return res;
}

template <typename Real>
typename Interpreter<Real>::Results
Interpreter<Real>::rmsNormGrad(RmsNormGradOp op) {
  const Tensor &x = get(op.getInput());
  const Tensor &g = get(op.getGamma());
  const Tensor &rstd = get(op.getRstd());
  const Tensor &dy = get(op.getGradOutput());
  Tensor dx = zerosLike(op.getGradInput());
  Tensor dg = zerosLike(op.getGradGamma());
  int64_t d = x.shape.back(), rows = x.numElements() / std::max<int64_t>(d, 1);
  std::vector<Real> dgAcc(d, 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    mwrt::formulas::rmsNormGradRow(x.f.data() + r * d, g.f.data(),
                                   dy.f.data() + r * d, rstd.f[r], d,
                                   dx.f.data() + r * d, dgAcc.data());
  dg.f = dgAcc;
  round(dx);
  round(dg);
  SmallVector<Tensor> res;
  res.push_back(std::move(dx));
  res.push_back(std::move(dg));
  return res;
}

template <typename Real>
typename Interpreter<Real>::Results
Interpreter<Real>::embeddingGrad(EmbeddingGradOp op) {
  const Tensor &idx = get(op.getIndices());
  const Tensor &dy = get(op.getGradOutput());
  Tensor out = zerosLike(op.getResult());
  int64_t v = out.shape[0], d = out.shape[1];
  for (int64_t n = 0, e = idx.numElements(); n < e; ++n) {
    if (failed(checkIndex(op, "embedding index", idx.i[n], v)))
      return failure();
    for (int64_t j = 0; j < d; ++j)
      out.f[idx.i[n] * d + j] += dy.f[n * d + j];
  }
  round(out);
  return one(std::move(out));
}

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

template <typename Real>
typename Interpreter<Real>::Results Interpreter<Real>::adamw(AdamWOp op) {
  Tensor p = get(op.getParam());
  const Tensor &g = get(op.getGrad());
  Tensor m = get(op.getExpAvg());
  Tensor v = get(op.getExpAvgSq());
  double t = get(op.getStep()).at(0);
  if (!(t >= 1.0))
    return op.emitError("adamw step must be >= 1 (the 1-based count of this "
                        "update), got ")
           << t;
  double lr = op.getLr().convertToDouble();
  double b1 = op.getBeta1().convertToDouble();
  double b2 = op.getBeta2().convertToDouble();
  double eps = op.getEps().convertToDouble();
  double wd = op.getWeightDecay().convertToDouble();
  // Scalars in double, as PyTorch computes them on the host (formulas.h).
  namespace F = mwrt::formulas;
  auto sc = F::adamWScalars<Real>(
      lr, b1, b2, eps, wd, static_cast<Real>(F::biasCorrection(b1, t)),
      static_cast<Real>(F::biasCorrection(b2, t)));
  for (int64_t n = 0, e = p.numElements(); n < e; ++n)
    F::adamWElement(sc, p.f[n], g.f[n], m.f[n], v.f[n], p.f[n], m.f[n],
                    v.f[n]);
  round(p);
  round(m);
  round(v);
  SmallVector<Tensor> res;
  res.push_back(std::move(p));
  res.push_back(std::move(m));
  res.push_back(std::move(v));
  return res;
}

template <typename Real>
typename Interpreter<Real>::Results Interpreter<Real>::sgd(SgdOp op) {
  Tensor p = get(op.getParam());
  const Tensor &g = get(op.getGrad());
  Real lr = static_cast<Real>(op.getLr().convertToDouble());
  Real mom = static_cast<Real>(op.getMomentum().convertToDouble());
  // 1 - dampening in double, as PyTorch computes it on the host.
  Real keep = static_cast<Real>(1.0 - op.getDampening().convertToDouble());
  Real wd = static_cast<Real>(op.getWeightDecay().convertToDouble());
  bool nesterov = op.getNesterov();
  std::optional<Tensor> buf;
  if (op.getMomentumBuffer())
    buf = get(op.getMomentumBuffer());
  for (int64_t n = 0, e = p.numElements(); n < e; ++n) {
    Real gi = g.f[n] + wd * p.f[n];
    if (buf) {
      Real b = mom * buf->f[n] + keep * gi;
      buf->f[n] = b;
      gi = nesterov ? gi + mom * b : b;
    }
    p.f[n] = p.f[n] - lr * gi;
  }
  round(p);
  SmallVector<Tensor> res;
  res.push_back(std::move(p));
  if (buf) {
    round(*buf);
    res.push_back(std::move(*buf));
  }
  return res;
}

//===----------------------------------------------------------------------===//
// Mixed precision: overflow checks and dynamic loss scaling
//===----------------------------------------------------------------------===//

template <typename Real>
typename Interpreter<Real>::Results Interpreter<Real>::foundInf(FoundInfOp op) {
  bool found = false;
  for (Value in : op.getInputs())
    for (Real x : get(in).f)
      found |= !std::isfinite(x);
  Tensor out = zerosLike(op.getResult());
  out.f[0] = found ? Real(1) : Real(0);
  return one(std::move(out));
}

template <typename Real>
typename Interpreter<Real>::Results Interpreter<Real>::select(SelectOp op) {
  // NaN is != 0, so a NaN flag selects the true value.
  bool cond = get(op.getCondition()).f[0] != Real(0);
  return one(get(cond ? op.getTrueValue() : op.getFalseValue()));
}

/// `a` modulo `m` (m >= 1) in [0, m), as Python's % computes it.
template <typename Real>
typename Interpreter<Real>::Results
Interpreter<Real>::lossScaleUpdate(LossScaleUpdateOp op) {
  // DeepSpeed's DynamicLossScaler.update_scale (mwrt/formulas.h).
  mwrt::formulas::LossScaleState state{
      static_cast<double>(get(op.getScale()).f[0]), get(op.getIter()).i[0],
      get(op.getLastOverflow()).i[0], get(op.getCurHysteresis()).i[0]};
  state = mwrt::formulas::updateLossScale(
      state, get(op.getOverflow()).f[0] != Real(0),
      static_cast<int64_t>(op.getWindow()),
      static_cast<int64_t>(op.getHysteresis()),
      op.getMinScale().convertToDouble(), op.getFactor().convertToDouble());
  double scale = state.scale;
  int64_t iter = state.iter, last = state.last, hyst = state.hyst;

  SmallVector<Tensor> res;
  Tensor s = zerosLike(op.getNewScale());
  s.f[0] = static_cast<Real>(scale);
  res.push_back(std::move(s));
  for (auto [v, x] : llvm::zip(op->getResults().drop_front(),
                               std::array<int64_t, 3>{iter, last, hyst})) {
    Tensor t = zerosLike(v);
    t.i[0] = x;
    res.push_back(std::move(t));
  }
  return res;
}

//===----------------------------------------------------------------------===//
// Ranks in lockstep: the collectives
//===----------------------------------------------------------------------===//

/// Whether `op` is a collective (or rank query) of the mesh dialect that the
/// evaluator simulates across ranks.
static bool isSimulatedMeshOp(Operation *op) {
  return isa<mesh::AllReduceOp, mesh::ReduceScatterOp, mesh::AllGatherOp,
             mesh::AllSliceOp, mesh::ProcessLinearIndexOp>(op);
}

static FlatSymbolRefAttr meshSymbolOf(Operation *op) {
  return op->getAttrOfType<FlatSymbolRefAttr>("mesh");
}

FailureOr<std::optional<CollectiveMesh>>
mlir::mw::eval::collectiveMesh(FunctionOpInterface func) {
  std::optional<CollectiveMesh> found;
  SymbolTableCollection symbols;
  WalkResult walk = func->walk([&](Operation *op) -> WalkResult {
    if (!isSimulatedMeshOp(op))
      return WalkResult::advance();
    FlatSymbolRefAttr symbol = meshSymbolOf(op);
    mesh::MeshOp meshOp = mesh::getMeshOrNull(op, symbol, symbols);
    if (!meshOp)
      return op->emitError("no mesh.mesh named ") << symbol;
    ArrayRef<int64_t> shape = meshOp.getShape();
    if (shape.size() != 1 || ShapedType::isDynamic(shape[0])) {
      InFlightDiagnostic diag =
          op->emitError("the evaluator simulates collectives over a 1-D mesh "
                        "of static size, but mesh ")
          << symbol << " has shape ";
      for (auto [d, size] : llvm::enumerate(shape))
        diag << (d ? "x" : "")
             << (ShapedType::isDynamic(size) ? std::string("?")
                                              : std::to_string(size));
      return WalkResult(diag);
    }
    if (!isa<mesh::ProcessLinearIndexOp>(op)) {
      auto axes = op->getAttrOfType<DenseI16ArrayAttr>("mesh_axes");
      if (!axes || axes.asArrayRef() != ArrayRef<int16_t>{0}) {
        InFlightDiagnostic diag =
            op->emitError("the evaluator simulates collectives over "
                          "mesh_axes = [0] of a 1-D mesh, got [");
        if (axes)
          llvm::interleaveComma(axes.asArrayRef(), diag,
                                [&](int16_t a) { diag << a; });
        diag << "]";
        return WalkResult(diag);
      }
    }
    if (!found) {
      found = CollectiveMesh{symbol.getValue().str(), shape[0], op};
      return WalkResult::advance();
    }
    if (found->ranks != shape[0])
      return op->emitError("collectives over mesh @")
             << found->name << " (" << found->ranks << " ranks) and mesh "
             << symbol << " (" << shape[0]
             << " ranks): the evaluator simulates one group of ranks";
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return found;
}

namespace {
/// N ranks of one program run in lockstep over its op sequence: every op but
/// a collective is evaluated by each rank on its own state, in rank order; a
/// collective combines the operands of all ranks and gives each rank its
/// result. mw.kernel bodies are entered by every rank, run in lockstep (so a
/// collective inside a kernel body works), and left by every rank.
template <typename Real> class Lockstep {
public:
  using Tensor = BasicTensor<Real>;
  using Rank = Interpreter<Real>;

  explicit Lockstep(FunctionOpInterface func) : func(func) {}

  FailureOr<SmallVector<SmallVector<Tensor>>>
  run(ArrayRef<SmallVector<Tensor>> argsPerRank);

private:
  /// Runs every op of `block` but its terminator.
  LogicalResult runOps(Block &block);
  LogicalResult kernel(KernelOp op);
  LogicalResult fusion(FusionOp op);
  LogicalResult collective(Operation *op);
  /// Calls `fn` for each rank in order, stopping at the first failure; an
  /// error emitted meanwhile gets a note naming the rank (in runs of more
  /// than one rank).
  LogicalResult
  forEachRank(llvm::function_ref<LogicalResult(int64_t, Rank &)> fn);
  /// The reduction `kind` of every rank's value of `in`, each converted to
  /// `to` first; in rank order from rank 0's value, in Real arithmetic (f32,
  /// or double in the f64 mode), rounded once to `to`.
  FailureOr<Tensor> reduceAcross(Operation *op, mesh::ReductionKind kind,
                                 Value in, ElemKind to);
  /// Piece `r` of `n` equal pieces of `t` along `axis`.
  static Tensor piece(const Tensor &t, int64_t axis, int64_t r, int64_t n);
  /// The ranks' pieces concatenated along `axis`, in rank order.
  static Tensor gather(ArrayRef<const Tensor *> pieces, int64_t axis);
  int64_t numRanks() const { return static_cast<int64_t>(ranks.size()); }

  FunctionOpInterface func;
  std::vector<std::unique_ptr<Rank>> ranks;
  /// The rank evaluating an op now, for the notes of its errors; -1 outside
  /// per-rank work.
  int64_t current = -1;
};
} // namespace

template <typename Real>
FailureOr<SmallVector<SmallVector<BasicTensor<Real>>>>
Lockstep<Real>::run(ArrayRef<SmallVector<Tensor>> argsPerRank) {
  Region &body = func.getFunctionBody();
  if (body.empty())
    return func.emitError("cannot evaluate a function without a body");
  if (!body.hasOneBlock())
    return func.emitError("cannot evaluate a function with more than one "
                          "block");
  if (argsPerRank.empty())
    return func.emitError("cannot evaluate on zero ranks");
  int64_t n = static_cast<int64_t>(argsPerRank.size());
  FailureOr<std::optional<CollectiveMesh>> mesh = collectiveMesh(func);
  if (failed(mesh))
    return failure();
  if (*mesh && (*mesh)->ranks != n)
    return (*mesh)->firstUse->emitError("the step was compiled for ")
           << (*mesh)->ranks << " ranks (mesh @" << (*mesh)->name
           << "), evaluated on " << n << (n == 1 ? " rank" : " ranks");

  std::optional<ScopedDiagnosticHandler> notes;
  if (n > 1)
    notes.emplace(func->getContext(), [this](Diagnostic &d) {
      if (current >= 0 && d.getSeverity() == DiagnosticSeverity::Error)
        d.attachNote() << "on rank " << current << " of " << numRanks();
      return failure(); // on to the caller's handler
    });
  for (int64_t r = 0; r < n; ++r)
    ranks.push_back(std::make_unique<Rank>(func));
  if (failed(forEachRank(
          [&](int64_t r, Rank &rank) { return rank.bind(argsPerRank[r]); })))
    return failure();
  Block &block = body.front();
  if (failed(runOps(block)))
    return failure();
  auto ret = dyn_cast<func::ReturnOp>(block.getTerminator());
  if (!ret)
    return func.emitError("function body has no func.return");
  SmallVector<SmallVector<Tensor>> results(n);
  if (failed(forEachRank([&](int64_t r, Rank &rank) -> LogicalResult {
        FailureOr<SmallVector<Tensor>> out = rank.returned(ret);
        if (failed(out))
          return failure();
        results[r] = std::move(*out);
        return success();
      })))
    return failure();
  return results;
}

template <typename Real> LogicalResult Lockstep<Real>::runOps(Block &block) {
  for (Operation &op : block) {
    if (op.hasTrait<mlir::OpTrait::IsTerminator>())
      return success();
    LogicalResult ok =
        isa<KernelOp>(op)         ? kernel(cast<KernelOp>(op))
        : isa<FusionOp>(op)      ? fusion(cast<FusionOp>(op))
        : isSimulatedMeshOp(&op) ? collective(&op)
                                 : forEachRank([&](int64_t, Rank &rank) {
                                     return rank.step(op);
                                   });
    if (failed(ok))
      return failure();
  }
  return success();
}

template <typename Real> LogicalResult Lockstep<Real>::kernel(KernelOp op) {
  if (failed(forEachRank(
          [&](int64_t, Rank &rank) { return rank.enterKernel(op); })) ||
      failed(runOps(op.getBody().front())))
    return failure();
  return forEachRank([&](int64_t, Rank &rank) { return rank.exitKernel(op); });
}

template <typename Real> LogicalResult Lockstep<Real>::fusion(FusionOp op) {
  if (failed(forEachRank(
          [&](int64_t, Rank &rank) { return rank.enterFusion(op); })) ||
      failed(runOps(op.getBody().front())))
    return failure();
  return forEachRank([&](int64_t, Rank &rank) { return rank.exitFusion(op); });
}

template <typename Real>
LogicalResult Lockstep<Real>::forEachRank(
    llvm::function_ref<LogicalResult(int64_t, Rank &)> fn) {
  for (int64_t r = 0, e = numRanks(); r < e; ++r) {
    current = r;
    LogicalResult ok = fn(r, *ranks[r]);
    current = -1;
    if (failed(ok))
      return failure();
  }
  return success();
}

template <typename Real>
BasicTensor<Real> Lockstep<Real>::piece(const Tensor &t, int64_t axis,
                                        int64_t r, int64_t n) {
  SmallVector<int64_t> shape = t.shape;
  shape[axis] /= n;
  Tensor out = Tensor::zeros(t.kind, shape);
  AxisSplit in = splitAxis(t.shape, axis), os = splitAxis(shape, axis);
  for (int64_t o = 0; o < os.outer; ++o)
    for (int64_t j = 0; j < os.size; ++j)
      for (int64_t k = 0; k < os.inner; ++k)
        copyElement(t, (o * in.size + r * os.size + j) * in.inner + k, out,
                    (o * os.size + j) * os.inner + k);
  return out;
}

template <typename Real>
BasicTensor<Real> Lockstep<Real>::gather(ArrayRef<const Tensor *> pieces,
                                         int64_t axis) {
  SmallVector<int64_t> shape = pieces.front()->shape;
  shape[axis] *= static_cast<int64_t>(pieces.size());
  Tensor out = Tensor::zeros(pieces.front()->kind, shape);
  AxisSplit os = splitAxis(shape, axis);
  for (auto [r, p] : llvm::enumerate(pieces)) {
    AxisSplit is = splitAxis(p->shape, axis);
    int64_t at = static_cast<int64_t>(r) * is.size;
    for (int64_t o = 0; o < is.outer; ++o)
      for (int64_t j = 0; j < is.size; ++j)
        for (int64_t k = 0; k < is.inner; ++k)
          copyElement(*p, (o * is.size + j) * is.inner + k, out,
                      (o * os.size + at + j) * os.inner + k);
  }
  return out;
}

template <typename Real>
FailureOr<BasicTensor<Real>>
Lockstep<Real>::reduceAcross(Operation *op, mesh::ReductionKind kind, Value in,
                             ElemKind to) {
  using mesh::ReductionKind;
  bool isFloat = isFloatKind(to);
  bool supported = kind == ReductionKind::Sum || kind == ReductionKind::Max ||
                   kind == ReductionKind::Min ||
                   kind == ReductionKind::Product ||
                   (isFloat && kind == ReductionKind::Average) ||
                   (!isFloat && (kind == ReductionKind::BitwiseAnd ||
                                 kind == ReductionKind::BitwiseOr ||
                                 kind == ReductionKind::BitwiseXor));
  if (!supported)
    return op->emitError("the evaluator does not support reduction <")
           << mesh::stringifyReductionKind(kind) << "> on "
           << elemKindName(to)
           << " (it simulates sum, max, min, product, average on floats "
              "and bitwise_and/or/xor on integers)";
  SmallVector<Tensor> parts;
  if (failed(forEachRank([&](int64_t, Rank &rank) -> LogicalResult {
        FailureOr<Tensor> t = Rank::convert(op, rank.get(in), to);
        if (failed(t))
          return failure();
        parts.push_back(std::move(*t));
        return success();
      })))
    return failure();
  Tensor acc = std::move(parts.front());
  for (const Tensor &part : ArrayRef<Tensor>(parts).drop_front()) {
    if (isFloat) {
      for (auto [a, x] : llvm::zip(acc.f, part.f)) {
        switch (kind) {
        case ReductionKind::Max:
        case ReductionKind::Min:
          a = (std::isnan(a) || std::isnan(x)) ? NAN
              : kind == ReductionKind::Max     ? std::max(a, x)
                                               : std::min(a, x);
          break;
        case ReductionKind::Product:
          a = a * x;
          break;
        default: // Sum, Average
          a = a + x;
        }
      }
      continue;
    }
    for (auto [a, x] : llvm::zip(acc.i, part.i)) {
      uint64_t ua = static_cast<uint64_t>(a), ux = static_cast<uint64_t>(x);
      switch (kind) {
      case ReductionKind::Max:
        a = std::max(a, x);
        break;
      case ReductionKind::Min:
        a = std::min(a, x);
        break;
      case ReductionKind::Product:
        a = static_cast<int64_t>(ua * ux);
        break;
      case ReductionKind::BitwiseAnd:
        a = a & x;
        break;
      case ReductionKind::BitwiseOr:
        a = a | x;
        break;
      case ReductionKind::BitwiseXor:
        a = a ^ x;
        break;
      default: // Sum
        a = static_cast<int64_t>(ua + ux);
      }
    }
  }
  if (kind == ReductionKind::Average)
    for (Real &a : acc.f)
      a /= static_cast<Real>(numRanks());
  if (isFloat)
    Rank::round(acc);
  else
    for (int64_t &a : acc.i)
      a = wrapToKind(to, a);
  return acc;
}

template <typename Real>
LogicalResult Lockstep<Real>::collective(Operation *op) {
  const int64_t n = numRanks();
  if (auto index = dyn_cast<mesh::ProcessLinearIndexOp>(op))
    return forEachRank([&](int64_t r, Rank &rank) {
      rank.setScalar(index.getResult(), r);
      return success();
    });
  SmallVector<Value> typed(op->getOperands());
  llvm::append_range(typed, op->getResults());
  for (Value v : typed)
    if (!isa<RankedTensorType>(v.getType()) ||
        !Rank::typeOf(v).hasStaticShape() ||
        failed(elemKindOf(Rank::typeOf(v).getElementType())))
      return op->emitError("the evaluator supports static tensors of f32, "
                           "f16, bf16, i32, i64, i8 and f8E4M3FN only, got ")
             << v.getType();
  Value in = op->getOperand(0), res = op->getResult(0);
  ArrayRef<int64_t> inShape = Rank::typeOf(in).getShape();
  ArrayRef<int64_t> resShape = Rank::typeOf(res).getShape();
  /// Checks that `big` is `small` with `n` times its size along `axis`.
  auto checkPieces = [&](ArrayRef<int64_t> big, ArrayRef<int64_t> small,
                         int64_t axis) -> LogicalResult {
    if (axis < 0 || axis >= static_cast<int64_t>(big.size()) ||
        big.size() != small.size())
      return op->emitError("axis ") << axis << " is out of range";
    for (auto [d, pair] : llvm::enumerate(llvm::zip(big, small))) {
      auto [b, s] = pair;
      if (static_cast<int64_t>(d) == axis ? b != s * n : b != s)
        return op->emitError("on ")
               << n << " ranks, expected the operand and result shapes to "
               << "differ by a factor " << n << " along axis " << axis;
    }
    return success();
  };
  if (auto allReduce = dyn_cast<mesh::AllReduceOp>(op)) {
    FailureOr<Tensor> sum =
        reduceAcross(op, allReduce.getReduction(), in, Rank::kindOf(res));
    if (failed(sum))
      return failure();
    return forEachRank([&](int64_t, Rank &rank) {
      rank.set(res, *sum);
      return success();
    });
  }
  if (auto scatter = dyn_cast<mesh::ReduceScatterOp>(op)) {
    int64_t axis = scatter.getScatterAxis().getSExtValue();
    if (failed(checkPieces(inShape, resShape, axis)))
      return failure();
    FailureOr<Tensor> sum =
        reduceAcross(op, scatter.getReduction(), in, Rank::kindOf(res));
    if (failed(sum))
      return failure();
    return forEachRank([&](int64_t r, Rank &rank) {
      rank.set(res, piece(*sum, axis, r, n));
      return success();
    });
  }
  if (auto allGather = dyn_cast<mesh::AllGatherOp>(op)) {
    int64_t axis = allGather.getGatherAxis().getSExtValue();
    if (failed(checkPieces(resShape, inShape, axis)))
      return failure();
    SmallVector<const Tensor *> pieces;
    for (const std::unique_ptr<Rank> &rank : ranks)
      pieces.push_back(&rank->get(in));
    Tensor all = gather(pieces, axis);
    return forEachRank([&](int64_t, Rank &rank) {
      rank.set(res, all);
      return success();
    });
  }
  auto allSlice = cast<mesh::AllSliceOp>(op);
  int64_t axis = allSlice.getSliceAxis().getSExtValue();
  if (failed(checkPieces(inShape, resShape, axis)))
    return failure();
  return forEachRank([&](int64_t r, Rank &rank) {
    rank.set(res, piece(rank.get(in), axis, r, n));
    return success();
  });
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

/// The results of a single-rank run.
template <typename Real>
static FailureOr<SmallVector<BasicTensor<Real>>>
evaluateOne(FunctionOpInterface func, ArrayRef<BasicTensor<Real>> args) {
  SmallVector<SmallVector<BasicTensor<Real>>, 1> argsPerRank;
  argsPerRank.emplace_back(args.begin(), args.end());
  auto results = Lockstep<Real>(func).run(argsPerRank);
  if (failed(results))
    return failure();
  return std::move(results->front());
}

FailureOr<SmallVector<Tensor>>
mlir::mw::eval::evaluate(FunctionOpInterface func, ArrayRef<Tensor> args) {
  return evaluateOne<float>(func, args);
}

FailureOr<SmallVector<Tensor64>>
mlir::mw::eval::evaluate64(FunctionOpInterface func, ArrayRef<Tensor64> args) {
  return evaluateOne<double>(func, args);
}

FailureOr<SmallVector<SmallVector<Tensor>>>
mlir::mw::eval::evaluateRanks(FunctionOpInterface func,
                              ArrayRef<SmallVector<Tensor>> argsPerRank) {
  return Lockstep<float>(func).run(argsPerRank);
}

FailureOr<SmallVector<SmallVector<Tensor64>>>
mlir::mw::eval::evaluateRanks64(FunctionOpInterface func,
                                ArrayRef<SmallVector<Tensor64>> argsPerRank) {
  return Lockstep<double>(func).run(argsPerRank);
}

bool mlir::mw::eval::isArenaArgument(FunctionOpInterface func,
                                     unsigned index) {
  return static_cast<bool>(func.getArgAttr(index, "mw.arena"));
}

SmallVector<unsigned> mlir::mw::eval::inputArguments(FunctionOpInterface func) {
  SmallVector<unsigned> inputs;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (!isArenaArgument(func, i))
      inputs.push_back(i);
  return inputs;
}

std::string mlir::mw::eval::argumentName(FunctionOpInterface func,
                                         unsigned index) {
  if (auto name =
          func.getArgAttrOfType<StringAttr>(index, MWDialect::kNameAttrName))
    return name.getValue().str();
  return "arg" + std::to_string(index);
}

std::string mlir::mw::eval::resultName(FunctionOpInterface func,
                                       unsigned index) {
  if (auto name =
          func.getResultAttrOfType<StringAttr>(index, MWDialect::kNameAttrName))
    return name.getValue().str();
  return "result" + std::to_string(index);
}

/// The uses of `v` by the ops that compute with its value: a use as an input
/// of an mw.kernel stands for the uses of the body's argument, a use by a
/// kernel's mw.yield for the uses of the kernel's result (or destination
/// buffer), and a use by a view (after bufferization) for the uses of the
/// view.
static SmallVector<OpOperand *> valueUses(Value v) {
  SmallVector<OpOperand *> uses;
  SmallVector<Value> work{v};
  llvm::DenseSet<Value> seen{v};
  auto push = [&](Value next) {
    if (seen.insert(next).second)
      work.push_back(next);
  };
  while (!work.empty()) {
    Value cur = work.pop_back_val();
    for (OpOperand &use : cur.getUses()) {
      Operation *user = use.getOwner();
      if (auto kernel = dyn_cast<KernelOp>(user)) {
        if (kernel.isDpsInput(&use))
          push(kernel.getBody().getArgument(use.getOperandNumber()));
      } else if (auto fusion = dyn_cast<FusionOp>(user)) {
        push(fusion.getBody().getArgument(use.getOperandNumber()));
      } else if (auto yield = dyn_cast<YieldOp>(user)) {
        unsigned i = use.getOperandNumber();
        if (auto fusion = dyn_cast<FusionOp>(yield->getParentOp())) {
          push(fusion.getResult(i));
          continue;
        }
        auto kernel = cast<KernelOp>(yield->getParentOp());
        push(kernel.hasBufferSemantics() ? kernel.getOuts()[i]
                                         : kernel.getResult(i));
      } else if (isa<ViewLikeOpInterface>(user) &&
                 isa<MemRefType>(cur.getType())) {
        for (Value result : user->getResults())
          push(result);
      } else {
        uses.push_back(&use);
      }
    }
  }
  return uses;
}

/// The exclusive upper bound of valid values for `v` as used by index- and
/// label-taking ops (looking through shape ops); `unknown` when no such use.
static int64_t integerBound(Value v, int64_t unknown) {
  int64_t bound = std::numeric_limits<int64_t>::max();
  SmallVector<Value> work{v};
  llvm::SmallPtrSet<Operation *, 8> visited;
  while (!work.empty()) {
    Value cur = work.pop_back_val();
    for (OpOperand *use : valueUses(cur)) {
      Operation *user = use->getOwner();
      if (!visited.insert(user).second)
        continue;
      if (auto e = dyn_cast<EmbeddingOp>(user))
        bound = std::min(bound, e.getTable().getType().getShape()[0]);
      else if (auto e = dyn_cast<EmbeddingGradOp>(user))
        bound = std::min(bound, e.getResult().getType().getShape()[0]);
      else if (auto c = dyn_cast<CrossEntropyOp>(user))
        bound = std::min(bound, c.getLogits().getType().getShape().back());
      else if (auto c = dyn_cast<CrossEntropyGradOp>(user))
        bound = std::min(bound, c.getLogits().getType().getShape().back());
      else if (isa<ReshapeOp, TransposeOp, SliceOp, BroadcastToOp, ConcatOp>(
                   user))
        work.push_back(user->getResult(0));
    }
  }
  return bound == std::numeric_limits<int64_t>::max() ? unknown : bound;
}

static bool isAdamStep(Value v) {
  return llvm::any_of(valueUses(v), [](OpOperand *use) {
    auto adam = dyn_cast<AdamWOp>(use->getOwner());
    return adam && use == &adam.getStepMutable();
  });
}

/// The fresh value of a dynamic loss-scaling state argument: one that an
/// mw.loss_scale_update uses directly as its scale, iter, last_overflow or
/// cur_hysteresis operand, or else one named like the states --mw-autodiff
/// creates (`loss_scale.scale`, ...). std::nullopt for other arguments.
static std::optional<double> lossScaleInitialValue(Value arg, StringRef name) {
  using mwrt::initial::LossScaleSlot;
  using mwrt::initial::lossScaleInitialValue;
  if (arg)
    for (OpOperand *use : valueUses(arg)) {
      auto update = dyn_cast<LossScaleUpdateOp>(use->getOwner());
      if (!update)
        continue;
      if (use == &update.getScaleMutable())
        return lossScaleInitialValue(LossScaleSlot::Scale);
      if (use == &update.getIterMutable())
        return lossScaleInitialValue(LossScaleSlot::Iter);
      if (use == &update.getLastOverflowMutable())
        return lossScaleInitialValue(LossScaleSlot::LastOverflow);
      if (use == &update.getCurHysteresisMutable())
        return lossScaleInitialValue(
            LossScaleSlot::Hysteresis,
            static_cast<double>(static_cast<int64_t>(update.getHysteresis())));
    }
  if (auto slot = mwrt::initial::lossScaleSlotOfName(name))
    return lossScaleInitialValue(*slot);
  return std::nullopt;
}

SmallVector<Tensor> mlir::mw::eval::randomInputs(FunctionOpInterface func,
                                                 uint64_t seed) {
  // mwrt/initial_values.h: the generator and the rules mw-run shares.
  mwrt::initial::NormalGenerator gen(seed);
  SmallVector<Tensor> args;
  Region &body = func.getFunctionBody();
  for (unsigned i : inputArguments(func)) {
    auto type = cast<ShapedType>(func.getArgumentTypes()[i]);
    Tensor t =
        Tensor::zeros(*elemKindOf(type.getElementType()), type.getShape());
    Value arg = body.empty() ? Value() : body.getArgument(i);
    auto role = func.getArgAttrOfType<RoleAttr>(i, MWDialect::kRoleAttrName);
    if (std::optional<double> v =
            lossScaleInitialValue(arg, argumentName(func, i))) {
      // Dynamic loss scaling before its first step (DeepSpeed's defaults).
      if (t.isFloat())
        std::fill(t.f.begin(), t.f.end(), static_cast<float>(*v));
      else
        std::fill(t.i.begin(), t.i.end(), static_cast<int64_t>(*v));
    } else if (role && (role.getValue() == Role::optimizer_state ||
                        role.getValue() == Role::kv_cache)) {
      // Fresh optimizer state, as before the first step: zero moments,
      // buffers and step counters (random second moments would be negative);
      // an empty KV cache.
    } else if (arg && isAdamStep(arg)) {
      if (t.isFloat())
        std::fill(t.f.begin(), t.f.end(),
                  static_cast<float>(mwrt::initial::kInitialAdamStep));
      else
        std::fill(t.i.begin(), t.i.end(),
                  static_cast<int64_t>(mwrt::initial::kInitialAdamStep));
    } else if (t.isFloat()) {
      std::string name = argumentName(func, i);
      for (float &x : t.f)
        x = roundToKind(t.kind,
                        static_cast<float>(mwrt::initial::randomFloatValue(
                            name, type.getRank(), gen)));
    } else {
      int64_t bound = arg ? integerBound(arg, 2) : 2;
      for (int64_t &x : t.i)
        x = static_cast<int64_t>(gen.raw() % static_cast<uint64_t>(bound));
    }
    args.push_back(std::move(t));
  }
  // f32 masters (master-weights=optimizer) start as their parameters,
  // widened: `w.master` from `w`, a ZeRO piece `zero.bucketK.master` from
  // `zero.bucketK.param`.
  SmallVector<unsigned> inputs = inputArguments(func);
  llvm::StringMap<size_t> params;
  for (auto [k, i] : llvm::enumerate(inputs)) {
    auto role = func.getArgAttrOfType<RoleAttr>(i, MWDialect::kRoleAttrName);
    if (role && role.getValue() == Role::param)
      params[argumentName(func, i)] = k;
  }
  for (auto [k, i] : llvm::enumerate(inputs)) {
    auto role = func.getArgAttrOfType<RoleAttr>(i, MWDialect::kRoleAttrName);
    std::string name = argumentName(func, i);
    std::optional<std::string_view> of = mwrt::initial::masterOf(name);
    if (!role || role.getValue() != Role::optimizer_state || !of ||
        !args[k].isFloat())
      continue;
    auto it = params.find(StringRef(of->data(), of->size()));
    if (it == params.end())
      it = params.find((StringRef(of->data(), of->size()) + ".param").str());
    if (it != params.end() && args[it->second].isFloat() &&
        args[it->second].f.size() == args[k].f.size())
      args[k].f = args[it->second].f;
  }
  return args;
}
