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

#endif // MEMWALL_DIALECT_MW_IR_MWINTERFACES_TD
