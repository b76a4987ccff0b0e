//===- MWDialect.cpp - The mw dialect -------------------------------------===//
//
// Registers the mw ops and attributes, verifies the `mw.role` and `mw.name`
// attributes on function arguments and results, and implements the
// StaticShapes trait and the size helpers of CostOpInterface.
//
//===----------------------------------------------------------------------===//

#include "memwall/Dialect/MW/IR/MWDialect.h"
#include "memwall/Dialect/MW/IR/MWOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::mw;

#include "memwall/Dialect/MW/IR/MWDialect.cpp.inc"
#include "memwall/Dialect/MW/IR/MWEnums.cpp.inc"
#include "memwall/Dialect/MW/IR/MWInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "memwall/Dialect/MW/IR/MWAttrs.cpp.inc"

void MWDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "memwall/Dialect/MW/IR/MWOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "memwall/Dialect/MW/IR/MWAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Size helpers
//===----------------------------------------------------------------------===//

int64_t mlir::mw::detail::numElements(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  return shaped.getNumElements();
}

int64_t mlir::mw::detail::tensorBytes(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  Type elem = shaped.getElementType();
  if (!elem.isIntOrFloat())
    return 0;
  int64_t bits = elem.getIntOrFloatBitWidth();
  int64_t n = shaped.getNumElements();
  // Whole-byte types (all mw types) multiply without the bit count, which
  // would overflow for tensors of 2^58 elements.
  if (bits % 8 == 0)
    return n * (bits / 8);
  return n / 8 * bits + (n % 8 * bits + 7) / 8;
}

int64_t mlir::mw::detail::sumTensorBytes(TypeRange types) {
  int64_t total = 0;
  for (Type t : types)
    total += tensorBytes(t);
  return total;
}

//===----------------------------------------------------------------------===//
// StaticShapes trait
//===----------------------------------------------------------------------===//

LogicalResult mlir::mw::OpTrait::impl::verifyStaticShapes(Operation *op) {
  for (auto [i, type] : llvm::enumerate(op->getOperandTypes())) {
    auto shaped = dyn_cast<ShapedType>(type);
    if (shaped && !shaped.hasStaticShape())
      return op->emitOpError("operand #")
             << i << " has a dynamic shape " << type
             << "; mw ops require static shapes";
  }
  for (auto [i, type] : llvm::enumerate(op->getResultTypes())) {
    auto shaped = dyn_cast<ShapedType>(type);
    if (shaped && !shaped.hasStaticShape())
      return op->emitOpError("result #")
             << i << " has a dynamic shape " << type
             << "; mw ops require static shapes";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Function argument and result attributes
//===----------------------------------------------------------------------===//

/// Checks what every mw-annotated argument or result shares: a statically
/// shaped tensor or memref type.
static LogicalResult verifyAnnotatedType(Operation *op, StringRef what,
                                         unsigned index, Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasRank() ||
      !isa<RankedTensorType, MemRefType>(type))
    return op->emitOpError() << what << " #" << index << " of type " << type
                             << " carries mw attributes but is not a ranked "
                                "tensor or memref";
  if (!shaped.hasStaticShape())
    return op->emitOpError() << what << " #" << index << " has a dynamic shape "
                             << type << "; mw requires static shapes";
  return success();
}

static LogicalResult verifyRole(Operation *op, StringRef what, unsigned index,
                                Type type, Attribute attr, bool isResult) {
  auto role = dyn_cast<RoleAttr>(attr);
  if (!role)
    return op->emitOpError() << "'" << MWDialect::kRoleAttrName << "' on "
                             << what << " #" << index
                             << " must be a #mw.role<...>, got " << attr;
  Role r = role.getValue();
  if (!isResult && r == Role::output)
    return op->emitOpError() << "argument #" << index
                             << " has role 'output', which only results may "
                                "have (arguments: param, input, label, "
                                "optimizer_state, grad, kv_cache)";
  if (isResult && (r == Role::input || r == Role::label))
    return op->emitOpError() << "result #" << index << " has role '"
                             << stringifyRole(r)
                             << "', which only arguments may have (results: "
                                "output, grad, param, optimizer_state, kv_cache)";
  if (failed(verifyAnnotatedType(op, what, index, type)))
    return failure();
  Type elem = cast<ShapedType>(type).getElementType();
  if ((r == Role::param || r == Role::grad) && !isa<FloatType>(elem))
    return op->emitOpError() << what << " #" << index << " has role '"
                             << stringifyRole(r)
                             << "' but a non-float element type " << elem;
  return success();
}

/// Names are unique among the arguments and, separately, among the results
/// (an updated parameter result carries its argument's name).
static LogicalResult verifyName(FunctionOpInterface func, StringRef what,
                                unsigned index, Type type, Attribute attr,
                                bool isResult) {
  Operation *op = func.getOperation();
  auto name = dyn_cast<StringAttr>(attr);
  if (!name)
    return op->emitOpError() << "'" << MWDialect::kNameAttrName << "' on "
                             << what << " #" << index
                             << " must be a string, got " << attr;
  if (name.getValue().empty())
    return op->emitOpError() << "'" << MWDialect::kNameAttrName << "' on "
                             << what << " #" << index << " is empty";
  if (failed(verifyAnnotatedType(op, what, index, type)))
    return failure();
  // Uniqueness is checked once, when the last named argument (or result) is
  // verified, with one pass and a map: per-argument pairwise checks would be
  // quadratic in the argument count of a large model's step.
  unsigned count = isResult ? func.getNumResults() : func.getNumArguments();
  auto nameAt = [&](unsigned j) -> StringAttr {
    DictionaryAttr dict =
        isResult ? func.getResultAttrDict(j) : func.getArgAttrDict(j);
    return dict ? dyn_cast_or_null<StringAttr>(
                      dict.get(MWDialect::kNameAttrName))
                : StringAttr();
  };
  for (unsigned j = index + 1; j < count; ++j)
    if (nameAt(j))
      return success();
  llvm::DenseMap<StringAttr, unsigned> first;
  for (unsigned j = 0; j <= index; ++j) {
    StringAttr n = nameAt(j);
    if (!n)
      continue;
    auto [it, inserted] = first.try_emplace(n, j);
    if (!inserted)
      return op->emitOpError() << what << " #" << j << " has the same "
                               << MWDialect::kNameAttrName << " \""
                               << n.getValue() << "\" as " << what << " #"
                               << it->second;
  }
  return success();
}

/// mw.shard = {members = ["a", "b"], sizes = array<i64: 6, 2>, ranks = 2,
///             shapes = [array<i64: 2, 3>, array<i64: 2>],
///             sources = ["a.exp_avg", "b.exp_avg"]}:
/// the 1-D piece of a bucket holding the named parameters' elements
/// flattened in order (sizes each), padded to a multiple of `ranks` and cut
/// into `ranks` equal pieces. `shapes` and `sources` (optional; --mw-zero
/// writes them) are the members' shapes, whose products are the sizes, and
/// the names of the whole tensors a checkpoint holds the elements under (the
/// members for parameters, their state for optimizer state).
static LogicalResult verifyShard(Operation *op, StringRef what, unsigned index,
                                 Type type, Attribute value) {
  auto fail = [&]() {
    return op->emitOpError()
           << "'" << MWDialect::kShardAttrName << "' of " << what << " #"
           << index;
  };
  auto dict = dyn_cast<DictionaryAttr>(value);
  if (!dict)
    return fail() << " must be a dictionary";
  auto members = dict.getAs<ArrayAttr>("members");
  auto sizes = dict.getAs<DenseI64ArrayAttr>("sizes");
  auto ranks = dict.getAs<IntegerAttr>("ranks");
  if (!members || !sizes || !ranks)
    return fail() << " needs 'members' (strings), 'sizes' (array<i64>) and "
                     "'ranks' (an integer)";
  if (members.size() != static_cast<size_t>(sizes.size()) ||
      !llvm::all_of(members, [](Attribute a) { return isa<StringAttr>(a); }))
    return fail() << " must name one string member per size";
  if (Attribute shapesAttr = dict.get("shapes")) {
    auto shapes = dyn_cast<ArrayAttr>(shapesAttr);
    if (!shapes || shapes.size() != members.size())
      return fail() << " must give one shape (array<i64>) per member";
    for (auto [i, s] : llvm::enumerate(shapes)) {
      auto shape = dyn_cast<DenseI64ArrayAttr>(s);
      if (!shape)
        return fail() << " must give one shape (array<i64>) per member";
      int64_t product = 1;
      for (int64_t d : shape.asArrayRef()) {
        if (d < 0)
          return fail() << " has a negative dimension in the shape of '"
                        << cast<StringAttr>(members[i]).getValue() << "'";
        product *= d;
      }
      if (product != sizes[i])
        return fail() << " gives member '"
                      << cast<StringAttr>(members[i]).getValue()
                      << "' a shape of " << product << " elements but a size of "
                      << sizes[i];
    }
  }
  if (Attribute sourcesAttr = dict.get("sources")) {
    auto sources = dyn_cast<ArrayAttr>(sourcesAttr);
    if (!sources || sources.size() != members.size() ||
        !llvm::all_of(sources, [](Attribute a) { return isa<StringAttr>(a); }))
      return fail() << " must give one string source per member";
  }
  int64_t n = ranks.getInt(), total = 0;
  for (int64_t size : sizes.asArrayRef()) {
    if (size < 0)
      return fail() << " has a negative size";
    total += size;
  }
  auto shaped = dyn_cast<ShapedType>(type);
  if (n < 1 || !shaped || shaped.getRank() != 1 || !shaped.hasStaticShape() ||
      shaped.getDimSize(0) != (total + n - 1) / n)
    return fail() << " describes " << total << " elements over " << n
                  << " ranks, which a piece of type " << type
                  << " does not hold";
  return success();
}

/// An offloaded parameter (--mw-offload): "cpu" or "nvme" on an argument
/// whose role is param.
static LogicalResult verifyOffload(FunctionOpInterface func, StringRef what,
                                   unsigned index, Attribute attr,
                                   bool isResult) {
  Operation *op = func.getOperation();
  auto place = dyn_cast<StringAttr>(attr);
  if (isResult || !place ||
      (place.getValue() != "cpu" && place.getValue() != "nvme"))
    return op->emitOpError()
           << "'" << MWDialect::kOffloadAttrName << "' on " << what << " #"
           << index << " must be \"cpu\" or \"nvme\" on a parameter argument, got "
           << attr;
  auto role =
      func.getArgAttrOfType<RoleAttr>(index, MWDialect::kRoleAttrName);
  if (!role || role.getValue() != Role::param)
    return op->emitOpError()
           << "'" << MWDialect::kOffloadAttrName << "' on argument #" << index
           << ", which is not a parameter (mw.role = #mw.role<param>): only "
              "weights are offloaded";
  // On tensors, only mw.fetch reads it, or after --mw-form-kernels the
  // kernel of one (bufferized, mw-translate checks the kernels that read it).
  if (func.isExternal())
    return success();
  Value arg = func.getArgument(index);
  auto isFetchKernel = [](Operation *user) {
    auto kernel = dyn_cast<KernelOp>(user);
    if (!kernel)
      return false;
    // The fetch and the kernel's yield.
    Block &body = kernel.getBody().front();
    return body.getOperations().size() == 2 && isa<FetchOp>(body.front());
  };
  if (isa<TensorType>(arg.getType()))
    for (Operation *user : arg.getUsers())
      if (!isa<FetchOp>(user) && !isFetchKernel(user))
        return op->emitOpError()
               << "argument #" << index << " is offloaded ('"
               << MWDialect::kOffloadAttrName << "') but read by '"
               << user->getName() << "': only mw.fetch may read it";
  return success();
}

static LogicalResult verifyFunctionAttr(Operation *op, unsigned index,
                                        NamedAttribute attr, bool isResult) {
  StringRef what = isResult ? "result" : "argument";
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return op->emitOpError() << "mw attribute '" << attr.getName().getValue()
                             << "' is only valid on function " << what << "s";
  Type type = isResult ? func.getResultTypes()[index]
                       : func.getArgumentTypes()[index];
  // The arena argument --mw-static-arena adds with arena=argument.
  if (attr.getName() == "mw.arena") {
    auto memref = dyn_cast<MemRefType>(type);
    if (isResult || !isa<UnitAttr>(attr.getValue()) || !memref ||
        memref.getRank() != 1 || !memref.hasStaticShape() ||
        !memref.getElementType().isInteger(8))
      return op->emitOpError()
             << "'mw.arena' must be a unit attribute of a memref<Nxi8> "
             << "argument, found on " << what << " #" << index << " of type "
             << type;
    return success();
  }
  if (attr.getName() == MWDialect::kRoleAttrName)
    return verifyRole(op, what, index, type, attr.getValue(), isResult);
  if (attr.getName() == MWDialect::kNameAttrName)
    return verifyName(func, what, index, type, attr.getValue(), isResult);
  if (attr.getName() == MWDialect::kShardAttrName)
    return verifyShard(op, what, index, type, attr.getValue());
  if (attr.getName() == MWDialect::kOffloadAttrName)
    return verifyOffload(func, what, index, attr.getValue(), isResult);
  return op->emitOpError() << "unknown mw " << what << " attribute '"
                           << attr.getName().getValue() << "' (expected '"
                           << MWDialect::kRoleAttrName << "', '"
                           << MWDialect::kNameAttrName << "', '"
                           << MWDialect::kShardAttrName << "' or '"
                           << MWDialect::kOffloadAttrName << "')";
}

LogicalResult MWDialect::verifyRegionArgAttribute(Operation *op,
                                                  unsigned /*regionIndex*/,
                                                  unsigned argIndex,
                                                  NamedAttribute attr) {
  return verifyFunctionAttr(op, argIndex, attr, /*isResult=*/false);
}

LogicalResult MWDialect::verifyRegionResultAttribute(Operation *op,
                                                     unsigned /*regionIndex*/,
                                                     unsigned resultIndex,
                                                     NamedAttribute attr) {
  return verifyFunctionAttr(op, resultIndex, attr, /*isResult=*/true);
}
