//===- MwOneShotBufferize.cpp - --mw-one-shot-bufferize -------------------===//
//
// One-Shot Bufferize for programs in kernel form (after --mw-form-kernels),
// with the in-place decisions made in one pass over each function instead
// of by One-Shot Analysis.
//
// One-Shot Analysis decides every tensor operand by gathering the reads and
// in-place writes of its whole alias set and testing them pairwise. On a
// training step the gradient of the residual stream is one alias set from
// the loss back to the embedding (each block adds into it in place): about
// 4 values and 10 reads per layer, so a step of L layers costs O(L^3) pair
// tests. At GPT-3's width and ZeRO-3 this is 6 s of bufferization at 64
// layers, 26 s at 128 and most of a 19-minute compile at 256, where
// --mw-remat measures every candidate plan through this pipeline
// (docs/bufferization.md, "In-place decisions").
//
// Kernel form admits a local rule. A function body is one block of
// mw.kernel ops on tensors, mw.reshape views, tensor.empty and the return.
// Call the value a destination names and its mw.reshape views (transitively,
// both ways) one version of a buffer. A kernel may write its result into a
// destination's buffer iff nothing uses that version after the kernel, and
// the kernel itself reads it only as that very value, elementwise
// (BufferizableOpInterface::bufferizesToElementwiseAccess). A later version
// (the kernel's result and its views) is a different value and may be read
// freely. In a straight-line block this is exactly the absence of
// read-after-write conflicts, and it is decided bottom-up (the heuristic
// One-Shot Analysis uses), keeping for each version only "used later or
// not": linear in the number of operands.
//
// A destination that fails the rule becomes a fresh tensor.empty, which is
// what One-Shot Bufferize does with it (a new buffer, no copy: kernel
// destinations are never read). The module is then bufferized by upstream's
// bufferizeModuleOp, which needs no analysis once no operand conflicts.
// Anything outside kernel form (other ops, several blocks, calls, dynamic
// shapes, read-only arguments) goes through upstream's
// runOneShotModuleBufferize, analysis included, and so does every program
// with analysis=upstream: the test suite compares the two byte for byte
// (test/Dialect/MW/Transforms/mw-one-shot-bufferize*.mlir).
//
//===----------------------------------------------------------------------===//

#include "memwall/Dialect/MW/IR/MWOps.h"
#include "memwall/Dialect/MW/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotModuleBufferize.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "mw-one-shot-bufferize"

namespace mlir::mw {
#define GEN_PASS_DEF_MWONESHOTBUFFERIZE
#include "memwall/Dialect/MW/Transforms/Passes.h.inc"
} // namespace mlir::mw

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::mw;

namespace {

/// --mw-bufferize's options: across function boundaries, identity-layout
/// memrefs, kernel bodies left on tensors.
OneShotBufferizationOptions getKernelBufferizationOptions() {
  OneShotBufferizationOptions options;
  options.bufferizeFunctionBoundaries = true;
  options.setFunctionBoundaryTypeConversion(LayoutMapOption::IdentityLayoutMap);
  // Kernel bodies compute on tensors whatever the kernel's operands are.
  options.opFilter.denyOperation(
      [](Operation *op) { return op->getParentOfType<KernelOp>() != nullptr; });
  options.unknownTypeConverterFn = [](Value value, Attribute memorySpace,
                                      const BufferizationOptions &) {
    auto type = cast<TensorType>(value.getType());
    return getMemRefTypeWithStaticIdentityLayout(type, memorySpace);
  };
  return options;
}

bool isStaticTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape();
}

/// Why `func` is not in kernel form, or "" when it is.
std::string whyNotKernelForm(func::FuncOp func) {
  if (func.isExternal())
    return "it is a declaration";
  if (!func.getBody().hasOneBlock())
    return "its body has several blocks";
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    if (isa<TensorType>(func.getArgument(i).getType()) &&
        !isStaticTensor(func.getArgument(i).getType()))
      return "an argument has a dynamic shape";
    if (auto writable = func.getArgAttrOfType<BoolAttr>(
            i, BufferizationDialect::kWritableAttrName);
        writable && !writable.getValue())
      return "an argument is not writable";
  }
  for (Operation &op : func.getBody().front()) {
    if (auto kernel = dyn_cast<KernelOp>(op)) {
      if (kernel.hasBufferSemantics())
        return "a kernel is already bufferized";
      for (Type t : kernel->getOperandTypes())
        if (!isStaticTensor(t))
          return "a kernel operand is not a static tensor";
      continue;
    }
    if (isa<ReshapeOp, tensor::EmptyOp, func::ReturnOp>(op)) {
      auto dynamic = [](Type t) {
        return isa<TensorType>(t) && !isStaticTensor(t);
      };
      if (llvm::any_of(op.getOperandTypes(), dynamic) ||
          llvm::any_of(op.getResultTypes(), dynamic))
        return "a tensor has a dynamic shape";
      continue;
    }
    return ("it has a top-level '" + op.getName().getStringRef() +
            "' (only mw.kernel, mw.reshape and tensor.empty)")
        .str();
  }
  return "";
}

/// Decides the destinations of every kernel of `body` (kernel form), bottom
/// up, and gives each one that may not be written in place a fresh
/// tensor.empty. Returns how many it replaced.
int64_t decideInPlace(Block &body, const BufferizationOptions &options) {
  // The version of each value: its mw.reshape chain's root (views share the
  // buffer and the contents).
  llvm::DenseMap<Value, Value> rootOf;
  auto root = [&](Value v) {
    auto it = rootOf.find(v);
    return it == rootOf.end() ? v : it->second;
  };
  for (Operation &op : body)
    if (auto reshape = dyn_cast<ReshapeOp>(op))
      rootOf[reshape.getResult()] = root(reshape.getInput());

  AnalysisState state(options);
  // Versions used by an op after the one being decided.
  llvm::DenseSet<Value> usedLater;
  int64_t replaced = 0;
  for (Operation &op : llvm::reverse(body)) {
    auto kernel = dyn_cast<KernelOp>(op);
    if (!kernel) {
      // The return reads; a reshape only makes a view (its result's uses
      // are the version's uses); tensor.empty reads nothing.
      if (isa<func::ReturnOp>(op))
        for (Value v : op.getOperands())
          if (isa<TensorType>(v.getType()))
            usedLater.insert(root(v));
      continue;
    }
    auto bufferizable = cast<BufferizableOpInterface>(op);
    OpBuilder builder(&op);
    for (OpOperand &init : kernel.getOutsMutable()) {
      Value dest = init.get();
      Value version = root(dest);
      bool inPlace = !usedLater.contains(version);
      // The kernel's own uses of the version: a read of this very value at
      // the output's index is fine; another destination into the same
      // buffer, or a read through a view or at other indices, is not.
      for (OpOperand &other : op.getOpOperands()) {
        if (!inPlace)
          break;
        if (&other == &init || root(other.get()) != version)
          continue;
        inPlace = kernel.isDpsInput(&other) && other.get() == dest &&
                  bufferizable.bufferizesToElementwiseAccess(
                      state, {&other, &init});
      }
      if (inPlace)
        continue;
      LLVM_DEBUG(llvm::dbgs() << "out of place: operand "
                              << init.getOperandNumber() << " of " << op
                              << "\n");
      auto type = cast<RankedTensorType>(dest.getType());
      init.set(builder.create<tensor::EmptyOp>(op.getLoc(), type.getShape(),
                                                type.getElementType()));
      ++replaced;
    }
    for (OpOperand &operand : op.getOpOperands())
      usedLater.insert(root(operand.get()));
  }
  return replaced;
}

struct MwOneShotBufferizePass
    : public mw::impl::MwOneShotBufferizeBase<MwOneShotBufferizePass> {
  using MwOneShotBufferizeBase::MwOneShotBufferizeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (analysis != "linear" && analysis != "upstream") {
      module.emitError("mw-one-shot-bufferize: analysis=")
          << analysis << " (expected linear or upstream)";
      return signalPassFailure();
    }
    OneShotBufferizationOptions options = getKernelBufferizationOptions();
    bool linear = analysis == "linear";
    if (linear)
      for (auto func : module.getOps<func::FuncOp>()) {
        std::string why = whyNotKernelForm(func);
        if (why.empty())
          continue;
        LLVM_DEBUG(llvm::dbgs() << "@" << func.getSymName()
                                << " is not in kernel form (" << why
                                << "): One-Shot Analysis decides\n");
        linear = false;
        break;
      }
    if (linear && llvm::any_of(module.getOps(), [](Operation &op) {
          return !isa<func::FuncOp>(op) && op.getNumRegions() != 0;
        }))
      linear = false;
    if (!linear) {
      if (failed(runOneShotModuleBufferize(module, options)))
        return signalPassFailure();
      return;
    }
    for (auto func : module.getOps<func::FuncOp>())
      numOutOfPlace += decideInPlace(func.getBody().front(), options);
    if (failed(bufferizeModuleOp(module, options)))
      return signalPassFailure();
  }
};

} // namespace
