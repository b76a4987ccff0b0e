//===- StepStructure.cpp - Loss, forward pass, saved activations ----------===//
//
// The one definition of a step's loss, forward pass, saved activations and
// layers (StepStructure.h), shared by --mw-remat and --mw-memory-report.
//
//===----------------------------------------------------------------------===//

#include "memwall/Analysis/StepStructure.h"
#include "memwall/Dialect/MW/IR/MWOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::mw;

std::string mlir::mw::getLocationName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto call = dyn_cast<CallSiteLoc>(loc))
    return getLocationName(call.getCallee());
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations()) {
      std::string s = getLocationName(inner);
      if (!s.empty())
        return s;
    }
  return "";
}

std::string mlir::mw::getLayerPath(Operation *op) {
  if (auto layer = op->getAttrOfType<StringAttr>(kLayerAttrName))
    return layer.getValue().str();
  return getLocationName(op->getLoc());
}

std::optional<std::pair<std::string, std::string>>
mlir::mw::splitLayerPath(StringRef path) {
  SmallVector<StringRef> parts;
  path.split(parts, '.');
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].empty() || !llvm::all_of(parts[i], llvm::isDigit))
      continue;
    std::string block = llvm::join(ArrayRef(parts).take_front(i + 1), ".");
    std::string rest = llvm::join(ArrayRef(parts).drop_front(i + 1), ".");
    return std::make_pair(block, rest);
  }
  return std::nullopt;
}

Value mlir::mw::findLoss(FunctionOpInterface func) {
  if (func.isExternal() || !func.getFunctionBody().hasOneBlock())
    return Value();
  Operation *ret = func.getFunctionBody().front().getTerminator();
  if (!ret)
    return Value();
  // Preference ranks: 0 named "loss", 1 role output, 2 no role.
  Value best;
  int bestRank = 3;
  for (unsigned i = 0, e = ret->getNumOperands(); i < e; ++i) {
    auto type = dyn_cast<RankedTensorType>(ret->getOperand(i).getType());
    if (!type || type.getRank() != 0 || !isa<FloatType>(type.getElementType()))
      continue;
    auto role = dyn_cast_or_null<RoleAttr>(
        func.getResultAttr(i, MWDialect::kRoleAttrName));
    if (role && role.getValue() != Role::output)
      continue;
    auto name = dyn_cast_or_null<StringAttr>(
        func.getResultAttr(i, MWDialect::kNameAttrName));
    int rank = name && name.getValue() == "loss" ? 0 : role ? 1 : 2;
    if (rank < bestRank) {
      best = ret->getOperand(i);
      bestRank = rank;
    }
  }
  return best;
}

bool StepStructure::isBackwardUse(OpOperand &use) const {
  Operation *user = topLevel(use.getOwner());
  return user && !forward.contains(user) &&
         !user->hasTrait<mlir::OpTrait::IsTerminator>();
}

StepStructure::StepStructure(Operation *funcOp)
    : func(cast<FunctionOpInterface>(funcOp)) {
  if (func.isExternal() || !func.getFunctionBody().hasOneBlock())
    return;
  body = &func.getFunctionBody().front();
  loss = findLoss(func);
  if (!hasLoss())
    return;
  SmallVector<Operation *> work{loss.getDefiningOp()};
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (op->getBlock() != body || !forward.insert(op).second)
      continue;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp())
        work.push_back(def);
  }
  int64_t pos = 0;
  for (Operation &op : *body) {
    position[&op] = pos++;
    if (!forward.contains(&op))
      continue;
    forwardOps.push_back(&op);
    for (Value v : op.getResults()) {
      bool backwardUse = false, returned = false;
      for (OpOperand &use : v.getUses()) {
        backwardUse |= isBackwardUse(use);
        returned |= use.getOwner()->hasTrait<mlir::OpTrait::IsTerminator>();
      }
      if (!backwardUse)
        continue;
      saved.push_back(v);
      forced.push_back(returned || !isMemoryEffectFree(&op));
    }
  }
}
