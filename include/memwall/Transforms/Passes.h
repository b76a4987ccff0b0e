//===- Passes.h - Dialect-independent Memwall passes ------------*- C++ -*-===//
//
// Declarations and registration of the passes that work on any bufferized
// program (see Passes.td): --mw-static-arena, --mw-verify-plan,
// --mw-plan-export and the liveness test printer.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_TRANSFORMS_PASSES_H
#define MEMWALL_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::mw {
#define GEN_PASS_DECL
#include "memwall/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "memwall/Transforms/Passes.h.inc"
} // namespace mlir::mw

#endif // MEMWALL_TRANSFORMS_PASSES_H
