//===- MWDialect.h - The mw dialect -----------------------------*- C++ -*-===//
//
// Declares the mw dialect, its enums (roles, GELU forms) and attributes.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_DIALECT_MW_IR_MWDIALECT_H
#define MEMWALL_DIALECT_MW_IR_MWDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"

#include "memwall/Dialect/MW/IR/MWDialect.h.inc"
#include "memwall/Dialect/MW/IR/MWEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "memwall/Dialect/MW/IR/MWAttrs.h.inc"

#endif // MEMWALL_DIALECT_MW_IR_MWDIALECT_H
