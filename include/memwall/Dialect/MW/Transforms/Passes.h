//===- Passes.h - Passes of the mw dialect ----------------------*- C++ -*-===//
//
// Declarations and registration of Memwall's passes (see Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_DIALECT_MW_TRANSFORMS_PASSES_H
#define MEMWALL_DIALECT_MW_TRANSFORMS_PASSES_H

#include "memwall/Dialect/MW/Transforms/RematStrategy.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::mw {
#define GEN_PASS_DECL
#include "memwall/Dialect/MW/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "memwall/Dialect/MW/Transforms/Passes.h.inc"
} // namespace mlir::mw

#endif // MEMWALL_DIALECT_MW_TRANSFORMS_PASSES_H
