//===- BufferizableOpInterfaceImpl.cpp - Bufferizing mw ops ---------------===//
//
// BufferizableOpInterface for the mw dialect (the pipelines that use it are
// built in Passes.cpp).
// The models only state which operands each op reads, writes and ties to
// its results; in-place decisions are --mw-one-shot-bufferize's (One-Shot
// Analysis's for programs outside kernel form).
//
//===----------------------------------------------------------------------===//

#include "memwall/Dialect/MW/Transforms/BufferizableOpInterfaceImpl.h"

#include "memwall/Dialect/MW/IR/MWOps.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::mw;

namespace {

/// Buffers of `values`, in order.
FailureOr<SmallVector<Value>> getBuffers(RewriterBase &rewriter,
                                         ValueRange values,
                                         const BufferizationOptions &options) {
  SmallVector<Value> buffers;
  for (Value v : values) {
    FailureOr<Value> buffer = getBuffer(rewriter, v, options);
    if (failed(buffer))
      return failure();
    buffers.push_back(*buffer);
  }
  return buffers;
}

/// mw.kernel in destination-passing style. Inputs are read; destinations are
/// written, never read, and tied to the results.
struct KernelOpInterface
    : BufferizableOpInterface::ExternalModel<KernelOpInterface, KernelOp> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &) const {
    return cast<KernelOp>(op).isDpsInput(&operand);
  }
  bool bufferizesToMemoryWrite(Operation *op, OpOperand &operand,
                               const AnalysisState &) const {
    return cast<KernelOp>(op).isDpsInit(&operand);
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                      const AnalysisState &) const {
    auto kernel = cast<KernelOp>(op);
    if (!kernel.isDpsInit(&operand))
      return {};
    return {{kernel.getTiedOpResult(&operand), BufferRelation::Equivalent}};
  }
  bool bufferizesToElementwiseAccess(Operation *op, const AnalysisState &,
                                     ArrayRef<OpOperand *> operands) const {
    auto kernel = cast<KernelOp>(op);
    if (kernel.getSingleOp())
      return kernel.isElementwise();
    // A fused kernel: elementwise for the inputs it reads at the output's
    // own index (destinations are written at the iteration index). A row
    // kernel's row ops read such an input along each row, but the runtime
    // reads a whole row before it writes any element of it, so no element
    // is needed after the element at its index is written: the property
    // One-Shot Analysis relies on to write the destination over the input.
    for (OpOperand *operand : operands)
      if (kernel.isDpsInput(operand) &&
          !kernel.readsInputAtOutputIndex(operand->getOperandNumber()))
        return false;
    return true;
  }
  /// The body's tensors are values, not buffers to allocate: a kernel on
  /// memrefs is bufferized.
  bool hasTensorSemantics(Operation *op) const {
    return !cast<KernelOp>(op).hasBufferSemantics();
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options) const {
    auto kernel = cast<KernelOp>(op);
    if (kernel.hasBufferSemantics())
      return success();
    FailureOr<SmallVector<Value>> ins =
        getBuffers(rewriter, kernel.getIns(), options);
    FailureOr<SmallVector<Value>> outs =
        getBuffers(rewriter, kernel.getOuts(), options);
    if (failed(ins) || failed(outs))
      return failure();
    rewriter.setInsertionPoint(kernel);
    auto bufferized =
        rewriter.create<KernelOp>(kernel.getLoc(), TypeRange(), *ins, *outs);
    bufferized->setDiscardableAttrs(kernel->getDiscardableAttrDictionary());
    rewriter.inlineRegionBefore(kernel.getBody(), bufferized.getBody(),
                                bufferized.getBody().end());
    replaceOpWithBufferizedValues(rewriter, op, *outs);
    return success();
  }
};

/// mw.reshape: a view of its input's buffer, which must be contiguous.
struct ReshapeOpInterface
    : BufferizableOpInterface::ExternalModel<ReshapeOpInterface, ReshapeOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return false;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &,
                                      const AnalysisState &) const {
    return {{op->getResult(0), BufferRelation::Equivalent}};
  }
  FailureOr<BaseMemRefType>
  getBufferType(Operation *op, Value value, const BufferizationOptions &,
                SmallVector<Value> &) const {
    auto type = cast<RankedTensorType>(value.getType());
    return cast<BaseMemRefType>(
        MemRefType::get(type.getShape(), type.getElementType()));
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options) const {
    auto reshape = cast<ReshapeOp>(op);
    FailureOr<Value> source = getBuffer(rewriter, reshape.getInput(), options);
    if (failed(source))
      return failure();
    auto sourceType = cast<MemRefType>(source->getType());
    if (!sourceType.getLayout().isIdentity())
      return op->emitError("mw.reshape bufferizes to a view and needs a "
                           "contiguous input buffer (identity layout), got ")
             << sourceType;
    // Any reshape of a contiguous buffer: collapse to one dimension, then
    // expand to the result's shape (rank 0 goes through memref<1xT>).
    Location loc = op->getLoc();
    Type element = sourceType.getElementType();
    auto allDims = [](int64_t rank) {
      ReassociationIndices dims;
      for (int64_t d = 0; d < rank; ++d)
        dims.push_back(d);
      return SmallVector<ReassociationIndices>{dims};
    };
    auto flatType = MemRefType::get({sourceType.getNumElements()}, element);
    Value view = *source;
    rewriter.setInsertionPoint(op);
    if (sourceType.getRank() == 0)
      view = rewriter.create<memref::ExpandShapeOp>(
          loc, flatType, view, SmallVector<ReassociationIndices>{});
    else if (sourceType.getRank() > 1)
      view = rewriter.create<memref::CollapseShapeOp>(
          loc, view, allDims(sourceType.getRank()));
    auto resultType = reshape.getType();
    auto viewType = MemRefType::get(resultType.getShape(), element);
    if (resultType.getRank() == 0)
      view = rewriter.create<memref::CollapseShapeOp>(
          loc, viewType, view, SmallVector<ReassociationIndices>{});
    else if (resultType.getRank() > 1)
      view = rewriter.create<memref::ExpandShapeOp>(
          loc, viewType, view, allDims(resultType.getRank()));
    replaceOpWithBufferizedValues(rewriter, op, view);
    return success();
  }
};

/// Every other mw op. Ops bufferize inside their mw.kernel (tensor ops in a
/// body stay tensor ops), so an op outside a kernel only explains what to do:
/// a kernel must be formed first, and a kernel body must be left alone.
template <typename OpTy>
struct UnwrappedOpInterface
    : BufferizableOpInterface::ExternalModel<UnwrappedOpInterface<OpTy>,
                                             OpTy> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }
  LogicalResult bufferize(Operation *op, RewriterBase &,
                          const BufferizationOptions &) const {
    if (op->getParentOfType<KernelOp>())
      return op->emitError("an mw op inside an mw.kernel body computes on "
                           "the kernel's buffers and is not bufferized on "
                           "its own: bufferize with --mw-bufferize, whose "
                           "One-Shot Bufferize skips kernel bodies");
    return op->emitError("mw ops bufferize as mw.kernel ops: run "
                         "--mw-form-kernels before One-Shot Bufferize, or "
                         "use --mw-bufferize");
  }
};

template <typename... Ops> void attachUnwrappedModels(MLIRContext *ctx) {
  (
      [&] {
        if constexpr (!std::is_same_v<Ops, KernelOp> &&
                      !std::is_same_v<Ops, YieldOp> &&
                      !std::is_same_v<Ops, ReshapeOp>)
          Ops::template attachInterface<UnwrappedOpInterface<Ops>>(*ctx);
      }(),
      ...);
}

} // namespace

void mlir::mw::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, MWDialect *) {
    KernelOp::attachInterface<KernelOpInterface>(*ctx);
    ReshapeOp::attachInterface<ReshapeOpInterface>(*ctx);
    attachUnwrappedModels<
#define GET_OP_LIST
#include "memwall/Dialect/MW/IR/MWOps.cpp.inc"
        >(ctx);
  });
}
