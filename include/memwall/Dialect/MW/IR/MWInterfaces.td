//===- MWInterfaces.td - Interfaces of the mw dialect --------*- tablegen -*-===//
//
// The cost interface gives every mw op a FLOP count and the bytes it reads and
// writes, which the memory report, checkpoint placement and the roofline cost
// model use. Conventions are documented in docs/cost-model.md.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_DIALECT_MW_IR_MWINTERFACES_TD
#define MEMWALL_DIALECT_MW_IR_MWINTERFACES_TD

include "mlir/IR/OpBase.td"

def MW_CostOpInterface : OpInterface<"CostOpInterface"> {
  let description = [{
    The work an op does, independent of any target: floating-point operations
    and the bytes an unfused execution reads and writes. A roofline of a named
    target turns these figures into time.
  }];
  let cppNamespace = "::mlir::mw";
  let methods = [
    InterfaceMethod<[{
        Floating-point operations (a fused multiply-add counts as two).
      }], "int64_t", "getFlops", (ins)>,
    InterfaceMethod<[{
        Bytes an unfused execution reads. Defaults to the size of every operand.
      }], "int64_t", "getBytesRead", (ins), [{}], [{
        return ::mlir::mw::detail::sumTensorBytes($_op->getOperandTypes());
      }]>,
    InterfaceMethod<[{
        Bytes an unfused execution writes. Defaults to the size of every result.
      }], "int64_t", "getBytesWritten", (ins), [{}], [{
        return ::mlir::mw::detail::sumTensorBytes($_op->getResultTypes());
      }]>,
  ];
}

def MW_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let description = [{
    The op's reverse-mode gradient rule, used by --mw-autodiff. Given the
    gradients of the op's results (null where no gradient flows to a result),
    the rule builds ops at the builder's insertion point that compute the
    gradients of its operands, and stores them in `operandGrads` (sized to the
    number of operands; null where the operand gets no gradient, e.g. integer
    indices). A rule that cannot handle a configuration (e.g. a gradient into
    layer_norm's saved statistics) emits an error at the op and fails.
  }];
  let cppNamespace = "::mlir::mw";
  let methods = [
    InterfaceMethod<[{
        Builds the gradients of the operands from those of the results.
      }], "::llvm::LogicalResult", "buildGradient",
      (ins "::mlir::OpBuilder &":$builder,
           "::llvm::ArrayRef<::mlir::Value>":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
}

def MW_InPlaceOpInterface : OpInterface<"InPlaceOpInterface"> {
  let description = [{
    Which operand's buffer a result may be written into: the destination that
    --mw-form-kernels chooses and the kernel's bufferization model ties. Ops
    get it from the MW_ElementwiseInPlace and MW_TiedResults traits
    (MWOps.td), whose C++ side (MWTraits.h) implements the method; the same
    traits give the runtime's op table its aliasing rule.
  }];
  let cppNamespace = "::mlir::mw";
  let methods = [
    InterfaceMethod<[{
        The operand whose buffer result `result` may reuse, if any.
      }], "::std::optional<unsigned>", "getTiedOperand",
      (ins "unsigned":$result)>,
  ];
}

#endif // MEMWALL_DIALECT_MW_IR_MWINTERFACES_TD
