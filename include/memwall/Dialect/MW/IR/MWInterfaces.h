//===- MWInterfaces.h - Interfaces of the mw dialect ------------*- C++ -*-===//
//
// CostOpInterface and the size helpers its default methods use.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_DIALECT_MW_IR_MWINTERFACES_H
#define MEMWALL_DIALECT_MW_IR_MWINTERFACES_H

#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/TypeRange.h"

namespace mlir::mw::detail {
/// Elements in a statically shaped tensor or memref type; 0 for other types.
int64_t numElements(Type type);
/// Bytes of a statically shaped tensor or memref type (elements rounded up to
/// whole bytes); 0 for other types.
int64_t tensorBytes(Type type);
/// Sum of tensorBytes over `types`.
int64_t sumTensorBytes(TypeRange types);
} // namespace mlir::mw::detail

#include "memwall/Dialect/MW/IR/MWInterfaces.h.inc"

#endif // MEMWALL_DIALECT_MW_IR_MWINTERFACES_H
