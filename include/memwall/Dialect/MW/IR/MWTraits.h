//===- MWTraits.h - Traits of the mw dialect --------------------*- C++ -*-===//
//
// StaticShapes: every operand and result of an mw op has a static shape.
// mw is a static-shape dialect (DESIGN.md decision 1), so a dynamic dimension
// is a diagnostic naming the value rather than a failure further down.
// The in-place traits (ElementwiseInPlace, TiedResults) implement
// InPlaceOpInterface; MayComputeInPlace and ViewOfOperand are markers read
// only by mw-tblgen, for the runtime's op table.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_DIALECT_MW_IR_MWTRAITS_H
#define MEMWALL_DIALECT_MW_IR_MWTRAITS_H

#include "mlir/IR/OpDefinition.h"

#include <optional>

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

/// Each result may be written into the first operand of its type.
template <typename ConcreteType>
class ElementwiseInPlace
    : public ::mlir::OpTrait::TraitBase<ConcreteType, ElementwiseInPlace> {
public:
  std::optional<unsigned> getTiedOperand(unsigned result) {
    Operation *op = this->getOperation();
    Type type = op->getResult(result).getType();
    for (OpOperand &operand : op->getOpOperands())
      if (operand.get().getType() == type)
        return operand.getOperandNumber();
    return std::nullopt;
  }
};

/// Result i may be written into operand Operands[i] (optimizer updates: the
/// new parameter and state into the old ones).
template <unsigned... Operands> struct TiedResults {
  template <typename ConcreteType>
  class Impl : public ::mlir::OpTrait::TraitBase<ConcreteType, Impl> {
  public:
    std::optional<unsigned> getTiedOperand(unsigned result) {
      static constexpr unsigned tied[] = {Operands...};
      if (result >= sizeof...(Operands) ||
          tied[result] >= this->getOperation()->getNumOperands())
        return std::nullopt;
      return tied[result];
    }
  };
};

/// The runtime's kernel accepts a result that is exactly one of the operands
/// (same buffer and layout), though the compiler does not choose that.
template <typename ConcreteType>
class MayComputeInPlace
    : public ::mlir::OpTrait::TraitBase<ConcreteType, MayComputeInPlace> {};

/// The result may be the operand's own contiguous buffer (reshape).
template <typename ConcreteType>
class ViewOfOperand
    : public ::mlir::OpTrait::TraitBase<ConcreteType, ViewOfOperand> {};
} // namespace mlir::mw::OpTrait

#endif // MEMWALL_DIALECT_MW_IR_MWTRAITS_H
