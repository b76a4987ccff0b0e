//===- MWKernel.cpp - mw.kernel and mw.yield ------------------------------===//
//
// The destination-passing form of mw ops: mw.kernel's verifiers, memory
// effects and cost, and the in-place rule shared by --mw-form-kernels (which
// chooses destinations) and the kernel's bufferization model. A kernel body
// is one or more mw ops, or one of the mesh collectives of a ZeRO step.
//
//===----------------------------------------------------------------------===//

#include "memwall/Dialect/MW/IR/MWOps.h"

#include "mlir/Dialect/Mesh/IR/MeshOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::mw;

/// The tensor type a kernel's body sees for an operand of type `t`.
static RankedTensorType valueTypeOf(Type t) {
  auto shaped = cast<ShapedType>(t);
  return RankedTensorType::get(shaped.getShape(), shaped.getElementType());
}

std::optional<unsigned> mlir::mw::getInPlaceOperand(Operation *op,
                                                    unsigned result) {
  // The ODS traits MW_ElementwiseInPlace and MW_TiedResults say which.
  if (auto inPlace = dyn_cast<InPlaceOpInterface>(op))
    return inPlace.getTiedOperand(result);
  return std::nullopt;
}

bool mlir::mw::isRuntimeCollective(Operation *op) {
  return isRuntimeCollective(op->getName());
}

bool mlir::mw::isRuntimeCollective(OperationName name) {
  StringRef n = name.getStringRef();
  return n == mesh::AllReduceOp::getOperationName() ||
         n == mesh::ReduceScatterOp::getOperationName() ||
         n == mesh::AllGatherOp::getOperationName() ||
         n == mesh::AllSliceOp::getOperationName();
}

KernelOp mlir::mw::buildKernelAround(OpBuilder &builder, Operation *op,
                                     ValueRange ins, ValueRange outs,
                                     TypeRange resultTypes) {
  Location loc = op->getLoc();
  auto kernel = builder.create<KernelOp>(loc, resultTypes, ins, outs);
  SmallVector<Type> argTypes;
  for (Value in : ins)
    argTypes.push_back(valueTypeOf(in.getType()));
  SmallVector<Location> argLocs(ins.size(), loc);
  OpBuilder::InsertionGuard guard(builder);
  Block *body =
      builder.createBlock(&kernel.getBody(), {}, argTypes, argLocs);
  IRMapping mapping;
  mapping.map(op->getOperands(), body->getArguments());
  Operation *clone = builder.clone(*op, mapping);
  builder.create<YieldOp>(loc, clone->getResults());
  return kernel;
}

Operation *KernelOp::getSingleOp() {
  Block &block = getBody().front();
  if (block.getOperations().size() != 2)
    return nullptr;
  return &block.front();
}

bool KernelOp::readsInputAtOutputIndex(unsigned index) {
  Block &body = getBody().front();
  // A fused row kernel is one with a row op (docs/fusion.md).
  bool rowKernel = body.getOperations().size() > 2 &&
                   llvm::any_of(body, [](Operation &op) { return isRowOp(&op); });
  return readsArgumentAtOutputIndex(body, index, rowKernel);
}

bool mlir::mw::readsArgumentAtOutputIndex(Block &block, unsigned index,
                                          bool wholeRows) {
  if (index >= block.getNumArguments())
    return false;
  BlockArgument arg = block.getArgument(index);
  auto argType = cast<RankedTensorType>(arg.getType());
  // The forward slice of the input inside the body: every op on it must
  // read its operands from the slice at its own output index and keep the
  // input's shape, so the output element at index i needs input element i
  // only. An optimizer update reads each operand at the output's index.
  SmallVector<Value> work{arg};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (isa<YieldOp>(user))
        continue;
      if (isa<AdamWOp, SgdOp>(user)) {
        if (&block.front() == user && block.getOperations().size() == 2)
          continue;
        bool allArgs = llvm::all_of(user->getOperands(), [](Value o) {
          return isa<BlockArgument>(o);
        });
        if (allArgs)
          continue;
        return false;
      }
      if (wholeRows && isRowOp(user) &&
          cast<RankedTensorType>(use.get().getType()).getShape() ==
              argType.getShape())
        continue;
      if (!readsAtOutputIndex(user, use.getOperandNumber()) ||
          cast<RankedTensorType>(user->getResult(0).getType()).getShape() !=
              argType.getShape())
        return false;
      if (seen.insert(user).second)
        work.push_back(user->getResult(0));
    }
  }
  return true;
}

bool KernelOp::isElementwise() {
  Operation *op = getSingleOp();
  if (!op) {
    // A fused kernel: elementwise when every input is read at the output's
    // own index.
    if (getBody().front().getOperations().size() <= 2)
      return false;
    for (unsigned i = 0, e = getIns().size(); i < e; ++i)
      if (!readsInputAtOutputIndex(i))
        return false;
    return true;
  }
  for (unsigned r = 0, e = op->getNumResults(); r < e; ++r)
    if (!getInPlaceOperand(op, r))
      return false;
  return true;
}

LogicalResult KernelOp::verify() {
  bool anyTensor = false, anyMemRef = false;
  for (auto [i, v] : llvm::enumerate(getOperands())) {
    auto shaped = cast<ShapedType>(v.getType());
    anyTensor |= isa<TensorType>(shaped);
    anyMemRef |= isa<MemRefType>(shaped);
    if (!shaped.hasStaticShape())
      return emitOpError("operand #") << i << " must have a static shape";
    if (auto memref = dyn_cast<MemRefType>(shaped))
      if (!memref.getLayout().isIdentity() &&
          !isa<StridedLayoutAttr>(memref.getLayout()))
        return emitOpError("memref operands must have an identity or "
                           "strided layout, got ")
               << memref;
  }
  if (anyTensor && anyMemRef)
    return emitOpError("expects all operands to be tensors (before "
                       "bufferization) or all to be memrefs (after), not a "
                       "mix");
  if (getOuts().empty())
    return emitOpError("expects at least one destination in outs");
  return success();
}

LogicalResult KernelOp::verifyRegions() {
  Block &block = getBody().front();
  if (block.getNumArguments() != getIns().size())
    return emitOpError("body has ")
           << block.getNumArguments() << " arguments, expected one per ins "
           << "operand (" << getIns().size() << ")";
  for (auto [i, arg, in] : llvm::enumerate(block.getArguments(), getIns()))
    if (arg.getType() != valueTypeOf(in.getType()))
      return emitOpError("body argument #")
             << i << " has type " << arg.getType() << ", expected "
             << valueTypeOf(in.getType());
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return emitOpError("body must end with mw.yield");
  if (yield.getValues().size() != getOuts().size())
    return yield.emitOpError("yields ")
           << yield.getValues().size() << " values, expected one per outs "
           << "operand (" << getOuts().size() << ")";
  for (auto [i, value, out] : llvm::enumerate(yield.getValues(), getOuts()))
    if (value.getType() != valueTypeOf(out.getType()))
      return yield.emitOpError("value #")
             << i << " has type " << value.getType() << ", expected "
             << valueTypeOf(out.getType()) << " (the type of outs operand #"
             << i << ")";
  for (Operation &op : block.without_terminator()) {
    // A collective is a kernel of its own: the runtime starts it as one
    // launch, so it never shares a body.
    if (isRuntimeCollective(&op)) {
      if (block.getOperations().size() != 2)
        return op.emitOpError("must be the only op of its mw.kernel body");
      continue;
    }
    if (!isa_and_nonnull<MWDialect>(op.getDialect()) || isa<KernelOp>(op))
      return op.emitOpError("cannot appear in an mw.kernel body: its ops "
                            "must be mw ops on tensors, or one mesh "
                            "collective");
  }
  return success();
}

void KernelOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  for (OpOperand &operand : getInsMutable())
    if (isa<MemRefType>(operand.get().getType()))
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
  for (OpOperand &operand : getOutsMutable())
    if (isa<MemRefType>(operand.get().getType()))
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
}

int64_t KernelOp::getFlops() { return bodyFlops(getBody().front()); }

int64_t KernelOp::getBytesRead() {
  if (auto cost = dyn_cast_or_null<CostOpInterface>(getSingleOp()))
    return cost.getBytesRead();
  return detail::sumTensorBytes(getIns().getTypes());
}

int64_t KernelOp::getBytesWritten() {
  if (auto cost = dyn_cast_or_null<CostOpInterface>(getSingleOp()))
    return cost.getBytesWritten();
  return detail::sumTensorBytes(getOuts().getTypes());
}
