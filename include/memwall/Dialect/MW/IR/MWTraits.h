//===- MWTraits.h - Traits of the mw dialect --------------------*- C++ -*-===//
//
// StaticShapes: every operand and result of an mw op has a static shape.
// mw is a static-shape dialect (DESIGN.md decision 1), so a dynamic dimension
// is a diagnostic naming the value rather than a failure further down.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_DIALECT_MW_IR_MWTRAITS_H
#define MEMWALL_DIALECT_MW_IR_MWTRAITS_H

#include "mlir/IR/OpDefinition.h"

namespace mlir::mw::OpTrait {
namespace impl {
LogicalResult verifyStaticShapes(Operation *op);
} // namespace impl

template <typename ConcreteType>
class StaticShapes
    : public ::mlir::OpTrait::TraitBase<ConcreteType, StaticShapes> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return impl::verifyStaticShapes(op);
  }
};
} // namespace mlir::mw::OpTrait

#endif // MEMWALL_DIALECT_MW_IR_MWTRAITS_H
