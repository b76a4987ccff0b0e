//===- TranslateToPlan.cpp - Planned MLIR to the .mwplan artifact ---------===//
//
// Builds the plan of one function planned by `mw-opt --mw-bufferize
// --mw-static-arena` in one walk over its entry block, as the FlatBuffer of
// runtime/schema/mwplan.fbs that mw-run executes, verifies it against the
// schema, and writes it as bytes or (through PlanJson.h) as JSON. Anything
// the runtime could not execute as written (an op it has no kernel for, a
// buffer outside the arena and the persistent buffers, a dynamic shape or
// layout) is a diagnostic at its op, never a guess (docs/mw-translate.md).
//
//===----------------------------------------------------------------------===//

#include "memwall/Target/Plan/PlanTranslation.h"

#include "PlanJson.h"

#include "memwall/Dialect/MW/IR/MWOps.h"
#include "memwall/Transforms/Passes.h"
#include "mwrt/kernels.h"
#include "mwrt/plan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Mesh/IR/MeshOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/ADT/bit.h"

#include <flatbuffers/flatbuffers.h>

using namespace mlir;
namespace fb = flatbuffers;

//===----------------------------------------------------------------------===//
// IR to plan
//===----------------------------------------------------------------------===//

namespace {
/// A static strided memref type, as a plan operand describes it.
struct Layout {
  mwplan::DType dtype;
  SmallVector<int64_t> shape, strides;
  int64_t offset;
};

/// A memref value as a plan operand: its buffer (the arena from a byte
/// offset, or persistent buffer `persistent`) and its layout there.
struct View {
  mwplan::Space space = mwplan::Space::Arena;
  uint64_t arenaOffset = 0;
  int32_t persistent = -1;
  Layout layout;
  int32_t buffer = -1; ///< index into arenaBuffers (arena views)
};

/// Builds the plan of one function in one walk over its entry block.
class PlanBuilder {
public:
  explicit PlanBuilder(func::FuncOp func) : func(func) {}
  /// The finished, verified FlatBuffer, or failure after a diagnostic.
  FailureOr<fb::DetachedBuffer> build();

private:
  LogicalResult addArguments();
  LogicalResult visit(Operation *op);
  LogicalResult visitAlloc(memref::AllocOp op);
  LogicalResult visitView(memref::ViewOp op);
  LogicalResult visitReshape(Operation *op, Value source);
  LogicalResult visitKernel(mw::KernelOp op);
  /// A kernel whose body holds several ops: a fused kernel's program.
  LogicalResult visitFusedKernel(mw::KernelOp op, ArrayRef<Operation *> ops);
  /// `op`'s own (ODS) attributes in plan form.
  FailureOr<std::vector<fb::Offset<mwplan::Attr>>> opAttrs(Operation *op);
  /// Records the number of ranks collective `op` spans (its mesh's size
  /// along its mesh axes); every collective of a plan must span the same.
  LogicalResult addCollective(Operation *op);
  LogicalResult visitReturn(func::ReturnOp op);
  FailureOr<fb::Offset<mwplan::Attr>> convertAttr(Operation *op,
                                                  NamedAttribute attr);
  /// The operand `v` (used by `user`) as the plan sees it.
  FailureOr<fb::Offset<mwplan::Operand>> operand(Operation *user, Value v);
  /// operand() of each of `values`, appended to `out`.
  LogicalResult operands(Operation *user, ValueRange values,
                         std::vector<fb::Offset<mwplan::Operand>> &out);
  /// Records `op`'s result as `view`, with the layout of the result's type.
  LogicalResult bind(Operation *op, View view);
  /// Adds a persistent buffer; its table is written by finishPersistents,
  /// once the rank count of the collectives is known.
  void persistent(StringRef name, const Layout &l, mwplan::Role role,
                  int argument, DictionaryAttr shard = {},
                  mwplan::Placement placement = mwplan::Placement::Device);
  /// Refuses kernel `op` (running `opName`) when it reads or writes an
  /// offloaded (Host or File) persistent and is not an mw.fetch, or is an
  /// mw.fetch that does not copy one into device memory.
  LogicalResult checkPlacements(Operation *op, StringRef opName,
                                ValueRange ins, ValueRange outs);
  fb::Offset<fb::Vector<fb::Offset<mwplan::Persistent>>> finishPersistents();
  fb::Offset<fb::String> string(StringRef s) {
    return fbb.CreateString(s.data(), s.size());
  }

  func::FuncOp func;
  fb::FlatBufferBuilder fbb;
  uint64_t arenaSize = 0;
  /// The ranks the collectives span; 1 without collectives.
  uint32_t ranks = 1;
  Operation *firstCollective = nullptr;
  Value arena;
  DenseMap<Value, View> views;
  /// Unplanned allocations the function returns: the first result index.
  DenseMap<Operation *, unsigned> returnedAllocs;
  SmallVector<int64_t> persistentElements;
  int64_t persistentBytes = 0;
  llvm::StringSet<> persistentNames;
  struct PendingPersistent {
    std::string name;
    Layout layout;
    mwplan::Role role;
    int argument;
    DictionaryAttr shard; ///< mw.shard, or null
    mwplan::Placement placement;
  };
  std::vector<PendingPersistent> persistents;
  std::vector<fb::Offset<mwplan::Kernel>> kernels;
  std::vector<fb::Offset<mwplan::Result>> results;
  /// The arena's buffers: byte offset and size, by memref.view.
  std::vector<std::pair<uint64_t, uint64_t>> arenaBuffers;
};
} // namespace

static std::optional<mwplan::DType> toDType(Type type) {
  if (type.isF32())
    return mwplan::DType::F32;
  if (type.isF16())
    return mwplan::DType::F16;
  if (type.isBF16())
    return mwplan::DType::BF16;
  if (type.isSignlessInteger(32))
    return mwplan::DType::I32;
  if (type.isSignlessInteger(64))
    return mwplan::DType::I64;
  if (type.isSignlessInteger(8))
    return mwplan::DType::I8;
  if (isa<Float8E4M3FNType>(type))
    return mwplan::DType::F8E4M3FN;
  return std::nullopt;
}

static int64_t dtypeBytes(mwplan::DType dtype) {
  switch (dtype) {
  case mwplan::DType::F16:
  case mwplan::DType::BF16:
    return 2;
  case mwplan::DType::F32:
  case mwplan::DType::I32:
    return 4;
  case mwplan::DType::I64:
    return 8;
  case mwplan::DType::I8:
  case mwplan::DType::F8E4M3FN:
    return 1;
  }
  llvm_unreachable("unknown dtype");
}

/// The layout of `type`, or failure with a diagnostic at `loc` that names
/// `what` when a plan cannot hold it.
static FailureOr<Layout> getLayout(Location loc, Type type, const Twine &what) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return emitError(loc) << what << " is not a ranked memref: " << type;
  std::optional<mwplan::DType> dtype = toDType(memref.getElementType());
  if (!dtype)
    return emitError(loc) << what
                          << " has an element type the runtime does not take: "
                          << type << " (f32, f16, bf16, i32, i64, i8, f8E4M3FN)";
  if (!memref.hasStaticShape())
    return emitError(loc) << what << " has a dynamic shape: " << type;
  Layout layout{*dtype, llvm::to_vector(memref.getShape()), {}, 0};
  if (failed(getStridesAndOffset(memref, layout.strides, layout.offset)) ||
      ShapedType::isDynamic(layout.offset) ||
      llvm::any_of(layout.strides, ShapedType::isDynamic))
    return emitError(loc) << what << " has a non-static layout: " << type;
  return layout;
}

static mwplan::Role getRole(DictionaryAttr attrs) {
  auto role = attrs ? attrs.getAs<mw::RoleAttr>(mw::MWDialect::kRoleAttrName)
                    : mw::RoleAttr();
  if (!role)
    return mwplan::Role::None;
  switch (role.getValue()) {
  case mw::Role::param:
    return mwplan::Role::Param;
  case mw::Role::input:
    return mwplan::Role::Input;
  case mw::Role::label:
    return mwplan::Role::Label;
  case mw::Role::optimizer_state:
    return mwplan::Role::OptimizerState;
  case mw::Role::grad:
    return mwplan::Role::Grad;
  case mw::Role::output:
    return mwplan::Role::Output;
  case mw::Role::kv_cache:
    return mwplan::Role::KvCache;
  }
  llvm_unreachable("unknown role");
}

static std::string getName(DictionaryAttr attrs, StringRef prefix,
                           unsigned index) {
  if (auto name = attrs ? attrs.getAs<StringAttr>(mw::MWDialect::kNameAttrName)
                        : StringAttr())
    return name.str();
  return (prefix + Twine(index)).str();
}

/// A short form of `loc` for messages: a name, else file:line:col.
static std::string shortLoc(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn()))
        .str();
  if (auto call = dyn_cast<CallSiteLoc>(loc))
    return shortLoc(call.getCallee());
  if (auto opaque = dyn_cast<OpaqueLoc>(loc))
    return shortLoc(opaque.getFallbackLocation());
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location part : fused.getLocations())
      if (std::string s = shortLoc(part); !s.empty())
        return s;
  return "";
}

void PlanBuilder::persistent(StringRef name, const Layout &l,
                             mwplan::Role role, int argument,
                             DictionaryAttr shard,
                             mwplan::Placement placement) {
  persistentElements.push_back(
      ShapedType::getNumElements(ArrayRef<int64_t>(l.shape)));
  // Offloaded weights are not device memory: they do not count against a
  // device budget.
  if (placement == mwplan::Placement::Device)
    persistentBytes += persistentElements.back() * dtypeBytes(l.dtype);
  persistents.push_back({name.str(), l, role, argument, shard, placement});
}

/// The placement of an argument with attributes `attrs`: its mw.offload.
static mwplan::Placement getPlacement(DictionaryAttr attrs) {
  auto offload =
      attrs ? attrs.getAs<StringAttr>(mw::MWDialect::kOffloadAttrName)
            : StringAttr();
  if (!offload)
    return mwplan::Placement::Device;
  return offload.getValue() == "nvme" ? mwplan::Placement::File
                                      : mwplan::Placement::Host;
}

LogicalResult PlanBuilder::checkPlacements(Operation *op, StringRef opName,
                                           ValueRange ins, ValueRange outs) {
  // The persistent a value views when it is offloaded, else null.
  auto offloaded = [&](Value v) -> const PendingPersistent * {
    auto it = views.find(v);
    if (it == views.end() || it->second.space != mwplan::Space::Persistent ||
        it->second.persistent < 0)
      return nullptr;
    const PendingPersistent &p = persistents[it->second.persistent];
    return p.placement == mwplan::Placement::Device ? nullptr : &p;
  };
  bool isFetch = opName == mw::FetchOp::getOperationName();
  if (isFetch) {
    if (ins.size() != 1 || !offloaded(ins[0]))
      return op->emitOpError("runs mw.fetch on a tensor in device memory: a "
                             "fetch copies an offloaded (host or file) "
                             "weight, mw.offload, into the arena");
    for (Value v : outs)
      if (const PendingPersistent *p = offloaded(v))
        return op->emitOpError("runs mw.fetch into '")
               << p->name << "', which is offloaded: a fetch writes device "
               << "memory";
    return success();
  }
  for (ValueRange list : {ins, outs})
    for (Value v : list)
      if (const PendingPersistent *p = offloaded(v))
        return op->emitOpError("runs '")
               << opName << "' on '" << p->name << "', which is offloaded to "
               << (p->placement == mwplan::Placement::File ? "a weights file"
                                                            : "host memory")
               << ": only an mw.fetch may read it";
  return success();
}

fb::Offset<fb::Vector<fb::Offset<mwplan::Persistent>>>
PlanBuilder::finishPersistents() {
  std::vector<fb::Offset<mwplan::Persistent>> tables;
  for (const PendingPersistent &p : persistents) {
    auto nameOffset = string(p.name);
    auto shape = fbb.CreateVector(p.layout.shape.data(), p.layout.shape.size());
    fb::Offset<fb::Vector<fb::Offset<mwplan::ShardMember>>> shard;
    if (p.shard) {
      // The verifier of mw.shard checked the lists' lengths and types.
      auto members = p.shard.getAs<ArrayAttr>("members");
      auto sources = p.shard.getAs<ArrayAttr>("sources");
      auto shapes = p.shard.getAs<ArrayAttr>("shapes");
      auto sizes = p.shard.getAs<DenseI64ArrayAttr>("sizes");
      std::vector<fb::Offset<mwplan::ShardMember>> list;
      for (size_t m = 0; members && m < members.size(); ++m) {
        StringRef source = cast<StringAttr>((sources ? sources : members)[m])
                               .getValue();
        SmallVector<int64_t> dims;
        if (shapes)
          llvm::append_range(dims,
                             cast<DenseI64ArrayAttr>(shapes[m]).asArrayRef());
        else
          dims.push_back(sizes[m]); // no shapes: the flat member
        auto src = string(source);
        auto dimsOffset = fbb.CreateVector(dims.data(), dims.size());
        list.push_back(mwplan::CreateShardMember(fbb, src, dimsOffset));
      }
      shard = fbb.CreateVector(list);
    }
    // --mw-zero divides dimension 0 of every input and label by the ranks.
    bool splitBatch = ranks > 1 && (p.role == mwplan::Role::Input ||
                                    p.role == mwplan::Role::Label);
    tables.push_back(mwplan::CreatePersistent(fbb, nameOffset, p.layout.dtype,
                                              shape, p.role, p.argument, shard,
                                              splitBatch, p.placement));
  }
  return fbb.CreateVector(tables);
}

LogicalResult PlanBuilder::bind(Operation *op, View view) {
  FailureOr<Layout> layout =
      getLayout(op->getLoc(), op->getResult(0).getType(),
                "'" + op->getName().getStringRef() + "' op result");
  if (failed(layout))
    return failure();
  view.layout = std::move(*layout);
  views[op->getResult(0)] = std::move(view);
  return success();
}

LogicalResult PlanBuilder::addArguments() {
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (func.getArgAttr(i, "mw.arena")) {
      auto type = dyn_cast<MemRefType>(arg.getType());
      if (arena || !type || !type.hasStaticShape() || type.getRank() != 1 ||
          !type.getElementType().isInteger(8))
        return emitError(arg.getLoc(), "argument #")
               << i << " of @" << func.getSymName()
               << " marked mw.arena must be the only arena, a static "
               << "memref<Nxi8>; got " << arg.getType();
      arena = arg;
      continue;
    }
    DictionaryAttr attrs = func.getArgAttrDict(i);
    FailureOr<Layout> layout =
        getLayout(arg.getLoc(), arg.getType(),
                  "argument #" + Twine(i) + " of @" + func.getSymName());
    if (failed(layout))
      return failure();
    views[arg] = {mwplan::Space::Persistent, 0,
                  static_cast<int32_t>(persistents.size()), *layout};
    std::string name = getName(attrs, "arg", i);
    if (!persistentNames.insert(name).second)
      return emitError(arg.getLoc(), "argument #")
             << i << " of @" << func.getSymName() << " is named '" << name
             << "' like an earlier argument: the runtime binds arguments by "
             << "name";
    persistent(name, *layout, getRole(attrs), i,
               attrs ? attrs.getAs<DictionaryAttr>(mw::MWDialect::kShardAttrName)
                     : DictionaryAttr(),
               getPlacement(attrs));
  }
  return success();
}

LogicalResult PlanBuilder::visitAlloc(memref::AllocOp op) {
  MemRefType type = op.getType();
  if (op->hasAttr("mw.arena")) {
    if (arena)
      return op.emitOpError("is a second arena of the function");
    if (!type.hasStaticShape() || type.getRank() != 1 ||
        !type.getElementType().isInteger(8))
      return op.emitOpError("arena must be a static memref<Nxi8>, got ")
             << type;
    if (static_cast<uint64_t>(type.getNumElements()) != arenaSize)
      return op.emitOpError("arena has ")
             << type.getNumElements() << " bytes but mw.arena_size is "
             << arenaSize;
    arena = op;
    return success();
  }
  auto it = returnedAllocs.find(op);
  if (it == returnedAllocs.end())
    return op.emitOpError(
        "is a transient buffer outside the arena: a plan holds only arena "
        "views and persistent buffers (plan it with --mw-static-arena)");
  int32_t index = persistents.size();
  if (failed(bind(op, {mwplan::Space::Persistent, 0, index})))
    return failure();
  unsigned result = it->second;
  DictionaryAttr attrs = func.getResultAttrDict(result);
  // A result that returns the next value of an argument (a step counter)
  // shares its name, but persistent names must be unique.
  std::string name = getName(attrs, "result", result);
  for (int k = 0; !persistentNames.insert(name).second; ++k)
    name = ("result" + Twine(result) + (k ? "." + Twine(k) : "")).str();
  persistent(name, views[op].layout, getRole(attrs), -1);
  return success();
}

LogicalResult PlanBuilder::visitView(memref::ViewOp op) {
  if (!arena || op.getSource() != arena)
    return op.emitOpError("views a buffer other than the arena");
  std::optional<int64_t> shift = getConstantIntValue(op.getByteShift());
  if (!shift || *shift < 0)
    return op.emitOpError("byte shift is not a non-negative constant");
  // Each memref.view of the arena is one buffer of the static plan; the
  // views derived from it (reshapes, subviews) name the same buffer.
  auto type = cast<MemRefType>(op.getType());
  uint64_t bytes = type.hasStaticShape()
                       ? static_cast<uint64_t>(type.getNumElements()) *
                             dtypeBytes(*toDType(type.getElementType()))
                       : 0;
  if (!toDType(type.getElementType()))
    return op.emitOpError("views an element type the plan cannot hold: ")
           << type.getElementType();
  auto id = static_cast<int32_t>(arenaBuffers.size());
  arenaBuffers.push_back({static_cast<uint64_t>(*shift), bytes});
  if (failed(bind(op, {mwplan::Space::Arena, static_cast<uint64_t>(*shift), -1,
                       {}, id})))
    return failure();
  if (*shift % dtypeBytes(views[op].layout.dtype))
    return op.emitOpError("byte shift ")
           << *shift << " is not a multiple of the element size";
  return success();
}

LogicalResult PlanBuilder::visitReshape(Operation *op, Value source) {
  auto it = views.find(source);
  if (it == views.end())
    return op->emitOpError(
        "views a buffer that is neither an arena view nor persistent");
  return bind(op, it->second);
}

FailureOr<fb::Offset<mwplan::Operand>> PlanBuilder::operand(Operation *user,
                                                            Value v) {
  auto it = views.find(v);
  if (it == views.end())
    return user->emitOpError("operand ")
           << v.getType()
           << " is neither a view of the arena nor a persistent buffer";
  const View &s = it->second;
  const Layout &l = s.layout;
  // Every element the view addresses must lie in its buffer.
  int64_t lo = l.offset, hi = l.offset;
  bool empty = false;
  for (auto [size, stride] : llvm::zip(l.shape, l.strides)) {
    empty |= size == 0;
    (stride < 0 ? lo : hi) += (size - 1) * stride;
  }
  int64_t bytes = dtypeBytes(l.dtype);
  bool inside = s.space == mwplan::Space::Arena
                    ? s.arenaOffset + (hi + 1) * bytes <= arenaSize
                    : hi < persistentElements[s.persistent];
  if (!empty && (lo < 0 || !inside))
    return user->emitOpError("operand ")
           << v.getType() << " reaches outside its buffer";
  auto shape = fbb.CreateVector(l.shape.data(), l.shape.size());
  auto strides = fbb.CreateVector(l.strides.data(), l.strides.size());
  return mwplan::CreateOperand(fbb, s.space, s.arenaOffset, s.persistent,
                               l.offset, l.dtype, shape, strides, s.buffer);
}

LogicalResult
PlanBuilder::operands(Operation *user, ValueRange values,
                      std::vector<fb::Offset<mwplan::Operand>> &out) {
  for (Value v : values) {
    FailureOr<fb::Offset<mwplan::Operand>> o = operand(user, v);
    if (failed(o))
      return failure();
    out.push_back(*o);
  }
  return success();
}

/// An integer attribute's value when it fits in 64 bits (i1 as 0 or 1).
static std::optional<int64_t> toInt64(IntegerAttr attr) {
  const APInt &value = attr.getValue();
  if (value.getBitWidth() == 1)
    return value.getZExtValue();
  if (value.getSignificantBits() > 64)
    return std::nullopt;
  return value.getSExtValue();
}

/// Raw little-endian bytes of a constant's elements (one element for a
/// splat, which the runtime broadcasts).
static FailureOr<std::vector<uint8_t>>
constantBytes(Operation *op, StringRef name, ElementsAttr attr) {
  std::vector<uint8_t> bytes;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    auto append = [&](const APInt &bits) {
      for (unsigned b = 0; b < bits.getBitWidth(); b += 8)
        bytes.push_back(bits.extractBitsAsZExtValue(8, b));
    };
    int64_t n = dense.isSplat() ? 1 : dense.getNumElements();
    if (isa<FloatType>(dense.getElementType()))
      for (const APFloat &v : llvm::make_range(
               dense.value_begin<APFloat>(), dense.value_begin<APFloat>() + n))
        append(v.bitcastToAPInt());
    else
      for (const APInt &v : llvm::make_range(dense.value_begin<APInt>(),
                                             dense.value_begin<APInt>() + n))
        append(v);
    return bytes;
  }
  // A resource blob holds the elements in host order.
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  const AsmResourceBlob *blob =
      resource ? resource.getRawHandle().getBlob() : nullptr;
  if (!blob || llvm::endianness::native != llvm::endianness::little)
    return op->emitOpError("attribute '")
           << name << "' is not a dense constant with data";
  ArrayRef<char> data = blob->getData();
  return std::vector<uint8_t>(data.begin(), data.end());
}

FailureOr<fb::Offset<mwplan::Attr>>
PlanBuilder::convertAttr(Operation *op, NamedAttribute named) {
  StringRef name = named.getName().strref();
  Attribute attr = named.getValue();
  int64_t i = 0;
  double f = 0;
  std::optional<std::string> s;
  std::optional<std::vector<uint8_t>> bytes;
  std::optional<std::vector<int64_t>> ints;
  std::optional<std::vector<double>> floats;
  auto intsOf = [](auto values) {
    return std::vector<int64_t>(values.begin(), values.end());
  };
  std::optional<mwplan::AttrKind> kind;
  if (auto elements = dyn_cast<ElementsAttr>(attr)) {
    FailureOr<std::vector<uint8_t>> raw = constantBytes(op, name, elements);
    if (failed(raw))
      return failure();
    bytes = std::move(*raw);
    kind = mwplan::AttrKind::String;
  } else {
    kind =
        llvm::TypeSwitch<Attribute, std::optional<mwplan::AttrKind>>(attr)
            .Case([&](BoolAttr a) {
              i = a.getValue();
              return mwplan::AttrKind::Bool;
            })
            .Case([&](UnitAttr) {
              i = 1;
              return mwplan::AttrKind::Bool;
            })
            .Case([&](IntegerAttr a) -> std::optional<mwplan::AttrKind> {
              std::optional<int64_t> value = toInt64(a);
              if (!value)
                return std::nullopt;
              i = *value;
              return mwplan::AttrKind::Int;
            })
            .Case([&](FloatAttr a) {
              f = a.getValueAsDouble();
              return mwplan::AttrKind::Float;
            })
            .Case([&](StringAttr a) {
              s = a.str();
              return mwplan::AttrKind::String;
            })
            // A collective's mesh, by name.
            .Case([&](FlatSymbolRefAttr a) {
              s = a.getValue().str();
              return mwplan::AttrKind::String;
            })
            .Case([&](mesh::ReductionKindAttr a) {
              s = mesh::stringifyReductionKind(a.getValue()).str();
              return mwplan::AttrKind::String;
            })
            // Enums as the dialect spells them: #mw.gelu_approximation<tanh>.
            .Case([&](mw::GeluApproximationAttr a) {
              s = mw::stringifyGeluApproximation(a.getValue()).str();
              return mwplan::AttrKind::String;
            })
            .Case([&](mw::RoleAttr a) {
              s = mw::stringifyRole(a.getValue()).str();
              return mwplan::AttrKind::String;
            })
            .Case([&](DenseI64ArrayAttr a) {
              ints = intsOf(a.asArrayRef());
              return mwplan::AttrKind::Ints;
            })
            .Case([&](DenseI16ArrayAttr a) { // mesh_axes
              ints = intsOf(a.asArrayRef());
              return mwplan::AttrKind::Ints;
            })
            .Case([&](DenseI32ArrayAttr a) {
              ints = intsOf(a.asArrayRef());
              return mwplan::AttrKind::Ints;
            })
            .Case([&](DenseF64ArrayAttr a) {
              floats.emplace(a.asArrayRef().begin(), a.asArrayRef().end());
              return mwplan::AttrKind::Floats;
            })
            // The KV cache ops' quantization scales (exact in f64).
            .Case([&](DenseF32ArrayAttr a) {
              floats.emplace(a.asArrayRef().begin(), a.asArrayRef().end());
              return mwplan::AttrKind::Floats;
            })
            .Case([&](ArrayAttr a) -> std::optional<mwplan::AttrKind> {
              if (llvm::all_of(a, llvm::IsaPred<IntegerAttr>)) {
                ints.emplace();
                for (auto e : a.getAsRange<IntegerAttr>()) {
                  std::optional<int64_t> value = toInt64(e);
                  if (!value)
                    return std::nullopt;
                  ints->push_back(*value);
                }
                return mwplan::AttrKind::Ints;
              }
              if (llvm::all_of(a, llvm::IsaPred<FloatAttr>)) {
                floats.emplace();
                for (auto e : a.getAsRange<FloatAttr>())
                  floats->push_back(e.getValueAsDouble());
                return mwplan::AttrKind::Floats;
              }
              return std::nullopt;
            })
            .Default([](Attribute) { return std::nullopt; });
  }
  if (!kind)
    return op->emitOpError("attribute '")
           << name << "' has no plan form: " << attr;
  auto nameOffset = string(name);
  auto sOffset = s ? string(*s) : 0;
  auto bytesOffset = bytes ? fbb.CreateVector(*bytes) : 0;
  auto intsOffset = ints ? fbb.CreateVector(*ints) : 0;
  auto floatsOffset = floats ? fbb.CreateVector(*floats) : 0;
  return mwplan::CreateAttr(fbb, nameOffset, *kind, i, f, sOffset, bytesOffset,
                            intsOffset, floatsOffset);
}

LogicalResult PlanBuilder::visitKernel(mw::KernelOp op) {
  if (op->getNumResults())
    return op.emitOpError("is on tensors: bufferize it with --mw-bufferize");
  Block &body = op.getBody().front();
  SmallVector<Operation *> ops;
  for (Operation &inner : body.without_terminator())
    ops.push_back(&inner);
  if (ops.size() != 1)
    return visitFusedKernel(op, ops);
  Operation *inner = ops.front();
  mwrt::OpKind kind;
  if (!mwrt::parseOpKind(inner->getName().getStringRef(), kind))
    return inner->emitOpError("has no runtime kernel");
  if (!llvm::equal(body.getTerminator()->getOperands(), inner->getResults()))
    return op.emitOpError("must yield its body op's results in order");
  if (mw::isRuntimeCollective(inner) && failed(addCollective(inner)))
    return failure();
  SmallVector<Value> innerIns;
  for (Value v : inner->getOperands())
    if (auto arg = dyn_cast<BlockArgument>(v); arg && arg.getOwner() == &body)
      innerIns.push_back(op.getIns()[arg.getArgNumber()]);
  if (failed(checkPlacements(op, inner->getName().getStringRef(), innerIns,
                             op.getOuts())))
    return failure();

  FailureOr<std::vector<fb::Offset<mwplan::Attr>>> attrs = opAttrs(inner);
  if (failed(attrs))
    return failure();
  // The body op's operands in ODS order, each the kernel operand its block
  // argument stands for.
  std::vector<fb::Offset<mwplan::Operand>> ins, outs;
  for (Value v : inner->getOperands()) {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != &body)
      return inner->emitOpError("operand is not an argument of the kernel");
    FailureOr<fb::Offset<mwplan::Operand>> in =
        operand(op, op.getIns()[arg.getArgNumber()]);
    if (failed(in))
      return failure();
    ins.push_back(*in);
  }
  if (failed(operands(op, op.getOuts(), outs)))
    return failure();
  auto opName = string(inner->getName().getStringRef());
  auto attrsOffset = fbb.CreateVector(*attrs);
  auto insOffset = fbb.CreateVector(ins);
  auto outsOffset = fbb.CreateVector(outs);
  std::string loc = shortLoc(op.getLoc());
  auto locOffset = loc.empty() ? 0 : string(loc);
  kernels.push_back(mwplan::CreateKernel(fbb, opName, attrsOffset, insOffset,
                                         outsOffset, locOffset));
  return success();
}

FailureOr<std::vector<fb::Offset<mwplan::Attr>>>
PlanBuilder::opAttrs(Operation *op) {
  std::vector<fb::Offset<mwplan::Attr>> attrs;
  // The op's own attributes; discardable ones (mw.recompute from --mw-remat,
  // names, anything a pass annotates) do not change what the kernel computes.
  for (NamedAttribute attr : op->getAttrs()) {
    if (!llvm::is_contained(op->getName().getAttributeNames(), attr.getName()))
      continue;
    FailureOr<fb::Offset<mwplan::Attr>> converted = convertAttr(op, attr);
    if (failed(converted))
      return failure();
    attrs.push_back(*converted);
  }
  return attrs;
}

/// The ops a fused kernel's program may hold (docs/fusion.md): elementwise
/// and shape ops, the row ops, one leading matmul, optimizer updates.
static bool isFusablePointwise(mwrt::OpKind k) {
  using K = mwrt::OpKind;
  return mwrt::elementwiseSpec(k) || k == K::Cast || k == K::Select ||
         k == K::Splat || k == K::Constant || k == K::Reshape ||
         k == K::Transpose || k == K::BroadcastTo || k == K::Slice;
}

/// Whether `op` is a reduce_sum over every axis but the last (a column sum).
static bool isColumnSum(Operation *op) {
  auto sum = dyn_cast<mw::ReduceSumOp>(op);
  if (!sum)
    return false;
  auto type = cast<ShapedType>(op->getOperand(0).getType());
  SmallVector<int64_t> all;
  for (int64_t d = 0; d + 1 < type.getRank(); ++d)
    all.push_back(d);
  auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes");
  return type.getRank() >= 2 && axes && axes.asArrayRef() == ArrayRef(all);
}

/// The kind of fused kernel `ops` form (the contract's four: loop, row,
/// matmul, horizontal), or failure with the reason at `kernel`. The runtime
/// re-checks the program independently when it loads the plan.
static FailureOr<StringRef> fusedKind(mw::KernelOp kernel,
                                      ArrayRef<Operation *> ops) {
  using K = mwrt::OpKind;
  auto refuse = [&](Operation *op, const Twine &why) {
    return kernel.emitOpError("fuses ")
           << ops.size() << " ops into a kernel of none of the kinds the "
           << "runtime runs (loop, row, matmul, horizontal): '"
           << op->getName() << "' " << why;
  };
  size_t optimizers = 0, matmuls = 0;
  bool row = false;
  for (Operation *op : ops) {
    K kind;
    if (!mwrt::parseOpKind(op->getName().getStringRef(), kind))
      return refuse(op, "has no runtime kernel");
    bool optimizer = kind == K::AdamW || kind == K::Sgd;
    optimizers += optimizer;
    matmuls += kind == K::Matmul;
    bool rowOp = isa<mw::SoftmaxOp, mw::LogSoftmaxOp, mw::SoftmaxGradOp,
                     mw::LogSoftmaxGradOp, mw::LayerNormOp, mw::RmsNormOp,
                     mw::ReduceSumOp, mw::ReduceMaxOp, mw::ReduceMeanOp>(op);
    if (!isFusablePointwise(kind) && !rowOp && !optimizer &&
        kind != K::Matmul)
      return refuse(op, "is never fused");
    if (optimizer) {
      for (Value v : op->getOperands())
        if (!isa<BlockArgument>(v))
          return refuse(op, "reads a value computed in the kernel; a "
                            "horizontal kernel's updates read its inputs");
      continue;
    }
    for (Type t : op->getResultTypes())
      if (!isa<FloatType>(cast<ShapedType>(t).getElementType()))
        return refuse(op, "computes integers; fused kernels compute floats");
    if (!rowOp || isColumnSum(op))
      continue;
    // A row op reduces or normalizes over the last axis.
    auto type = cast<ShapedType>(op->getOperand(0).getType());
    int64_t last = type.getRank() - 1;
    bool lastAxis = true;
    if (auto axis = op->getAttrOfType<IntegerAttr>("axis"))
      lastAxis = axis.getInt() == last;
    if (auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes"))
      lastAxis = axes.asArrayRef() == ArrayRef<int64_t>{last};
    if (!lastAxis)
      return refuse(op, "does not reduce over the last axis only");
    row = true;
  }
  if (optimizers)
    return optimizers == ops.size()
               ? FailureOr<StringRef>(StringRef("horizontal"))
               : refuse(ops.front(), "is fused with optimizer updates, "
                                     "which fuse only with each other");
  if (matmuls) {
    if (matmuls > 1 || !isa<mw::MatmulOp>(ops.front()))
      return refuse(ops.front(), "is first; a matmul kernel has one "
                                 "mw.matmul, its first op");
    for (Operation *op : ops.drop_front()) {
      K kind = K::Constant;
      mwrt::parseOpKind(op->getName().getStringRef(), kind); // checked above
      if (!isFusablePointwise(kind) && !isColumnSum(op))
        return refuse(op, "is in a matmul kernel's epilogue, which is "
                          "elementwise (and column sums)");
    }
    return StringRef("matmul");
  }
  return row ? StringRef("row") : StringRef("loop");
}

LogicalResult PlanBuilder::visitFusedKernel(mw::KernelOp op,
                                            ArrayRef<Operation *> ops) {
  if (failed(fusedKind(op, ops)) ||
      failed(checkPlacements(op, mwrt::kFusionOpName, op.getIns(),
                             op.getOuts())))
    return failure();
  Block &body = op.getBody().front();
  // Each value of the body as the program names it: (-1, input) or
  // (instruction, result).
  DenseMap<Value, mwplan::ValueRef> refs;
  for (BlockArgument arg : body.getArguments())
    refs[arg] = mwplan::ValueRef(-1, arg.getArgNumber());
  std::vector<fb::Offset<mwplan::Instruction>> instructions;
  for (auto [i, inner] : llvm::enumerate(ops)) {
    FailureOr<std::vector<fb::Offset<mwplan::Attr>>> attrs = opAttrs(inner);
    if (failed(attrs))
      return failure();
    std::vector<mwplan::ValueRef> operands;
    for (Value v : inner->getOperands()) {
      auto it = refs.find(v);
      if (it == refs.end())
        return inner->emitOpError("reads a value from outside its kernel");
      operands.push_back(it->second);
    }
    std::vector<mwplan::DType> dtypes;
    std::vector<fb::Offset<mwplan::Shape>> shapes;
    for (auto [r, result] : llvm::enumerate(inner->getResults())) {
      auto type = cast<ShapedType>(result.getType());
      std::optional<mwplan::DType> dtype = toDType(type.getElementType());
      if (!dtype || !type.hasStaticShape())
        return inner->emitOpError("result #")
               << r << " has a type a plan cannot hold: " << type;
      dtypes.push_back(*dtype);
      shapes.push_back(mwplan::CreateShape(
          fbb, fbb.CreateVector(type.getShape().data(), type.getRank())));
      refs[result] = mwplan::ValueRef(static_cast<int32_t>(i),
                                      static_cast<int32_t>(r));
    }
    auto name = string(inner->getName().getStringRef());
    auto attrsOffset = fbb.CreateVector(*attrs);
    auto operandsOffset = fbb.CreateVectorOfStructs(operands);
    auto dtypesOffset = fbb.CreateVector(dtypes);
    auto shapesOffset = fbb.CreateVector(shapes);
    std::string loc = shortLoc(inner->getLoc());
    auto locOffset = loc.empty() ? 0 : string(loc);
    instructions.push_back(mwplan::CreateInstruction(
        fbb, name, attrsOffset, operandsOffset,
        dtypesOffset, shapesOffset,
        locOffset));
  }
  std::vector<mwplan::ValueRef> yields;
  for (Value v : body.getTerminator()->getOperands())
    yields.push_back(refs.lookup(v));
  std::vector<fb::Offset<mwplan::Operand>> ins, outs;
  if (failed(operands(op, op.getIns(), ins)) ||
      failed(operands(op, op.getOuts(), outs)))
    return failure();
  auto instructionsOffset = fbb.CreateVector(instructions);
  auto yieldsOffset = fbb.CreateVectorOfStructs(yields);
  auto program = mwplan::CreateFusedProgram(fbb, mwrt::kFusedProgramVersion,
                                            instructionsOffset, yieldsOffset);
  auto opName = string(mwrt::kFusionOpName);
  auto insOffset = fbb.CreateVector(ins);
  auto outsOffset = fbb.CreateVector(outs);
  std::string loc = shortLoc(op.getLoc());
  auto locOffset = loc.empty() ? 0 : string(loc);
  kernels.push_back(mwplan::CreateKernel(fbb, opName, 0, insOffset,
                                         outsOffset, locOffset, program));
  return success();
}

LogicalResult PlanBuilder::addCollective(Operation *op) {
  auto meshName = op->getAttrOfType<FlatSymbolRefAttr>("mesh");
  auto mesh = meshName ? SymbolTable::lookupNearestSymbolFrom<mesh::MeshOp>(
                             op, meshName)
                       : mesh::MeshOp();
  if (!mesh)
    return op->emitOpError("names no mesh.mesh the plan can size");
  auto axes = op->getAttrOfType<DenseI16ArrayAttr>("mesh_axes");
  ArrayRef<int64_t> shape = mesh.getShape();
  int64_t count = 1;
  // No axes: the collective spans the whole mesh.
  SmallVector<int64_t> spanned;
  if (axes && !axes.empty())
    spanned.assign(axes.asArrayRef().begin(), axes.asArrayRef().end());
  else
    for (int64_t d = 0, e = shape.size(); d < e; ++d)
      spanned.push_back(d);
  for (int64_t axis : spanned) {
    if (axis < 0 || axis >= static_cast<int64_t>(shape.size()) ||
        ShapedType::isDynamic(shape[axis]))
      return op->emitOpError("spans mesh axis ")
             << axis << " of @" << mesh.getSymName()
             << ", which has no static size";
    count *= shape[axis];
  }
  if (count < 1 || count > std::numeric_limits<uint32_t>::max())
    return op->emitOpError("spans ") << count << " ranks";
  if (firstCollective && count != ranks)
    return op->emitOpError("spans ")
           << count << " ranks but an earlier collective spans " << ranks
           << ": a plan runs on one group of ranks";
  firstCollective = op;
  ranks = static_cast<uint32_t>(count);
  return success();
}

LogicalResult PlanBuilder::visitReturn(func::ReturnOp op) {
  llvm::StringSet<> names;
  for (auto [i, v] : llvm::enumerate(op.getOperands())) {
    DictionaryAttr attrs = func.getResultAttrDict(i);
    std::string name = getName(attrs, "result", i);
    if (!names.insert(name).second)
      return op.emitOpError("result #")
             << i << " is named '" << name
             << "' like an earlier result: the runtime binds results by name";
    FailureOr<fb::Offset<mwplan::Operand>> value = operand(op, v);
    if (failed(value))
      return failure();
    auto nameOffset = string(name);
    results.push_back(
        mwplan::CreateResult(fbb, nameOffset, getRole(attrs), *value));
  }
  return success();
}

LogicalResult PlanBuilder::visit(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](memref::AllocOp alloc) { return visitAlloc(alloc); })
      .Case([&](memref::ViewOp view) { return visitView(view); })
      .Case<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::SubViewOp,
            memref::CastOp, memref::ReinterpretCastOp>(
          // Each views its operand #0.
          [&](Operation *view) {
            return visitReshape(view, view->getOperand(0));
          })
      .Case([&](mw::KernelOp kernel) { return visitKernel(kernel); })
      .Case([&](func::ReturnOp ret) { return visitReturn(ret); })
      // Constants feed view offsets; deallocation is the runtime's business.
      .Case<arith::ConstantOp, memref::DeallocOp>(
          [](Operation *) { return success(); })
      .Default([](Operation *other) {
        return other->emitOpError(
            "cannot be part of a plan: mw-translate takes mw.kernel, "
            "memref.alloc/view/dealloc, static memref views and "
            "arith.constant");
      });
}

FailureOr<fb::DetachedBuffer> PlanBuilder::build() {
  auto attr = [&](StringRef name) -> FailureOr<uint64_t> {
    auto attr = func->getAttrOfType<IntegerAttr>(name);
    std::optional<int64_t> value = attr ? toInt64(attr) : std::nullopt;
    if (!value || *value < 0)
      return emitError(func.getLoc(), "@")
             << func.getSymName() << " has no non-negative integer " << name
             << ": plan it with mw-opt --mw-static-arena";
    return *value;
  };
  FailureOr<uint64_t> size = attr("mw.arena_size"),
                      alignment = attr("mw.arena_alignment"),
                      lowerBound = attr("mw.lower_bound");
  if (failed(size) || failed(alignment) || failed(lowerBound))
    return failure();
  arenaSize = *size;
  if (!func.getBody().hasOneBlock())
    return emitError(func.getLoc(), "@")
           << func.getSymName() << " has several blocks; a plan is one "
           << "straight line of ops";

  Operation *ret = func.getBody().front().getTerminator();
  for (auto [i, v] : llvm::enumerate(ret->getOperands())) {
    while (Operation *def = v.getDefiningOp()) {
      if (auto alloc = dyn_cast<memref::AllocOp>(def)) {
        returnedAllocs.try_emplace(alloc, i);
        break;
      }
      auto view = dyn_cast<ViewLikeOpInterface>(def);
      if (!view)
        break;
      v = view.getViewSource();
    }
  }
  if (failed(addArguments()))
    return failure();
  for (Operation &op : func.getBody().front())
    if (failed(visit(&op)))
      return failure();

  // A step rematerialized under a budget: the plan's peak must fit it (the
  // check --mw-verify-plan makes, on what the runtime will allocate).
  uint64_t peakBudget = 0;
  if (auto budget = func->getAttrOfType<IntegerAttr>("mw.remat.budget_bytes")) {
    std::optional<int64_t> value = toInt64(budget);
    if (!value || *value <= 0)
      return emitError(func.getLoc(), "@")
             << func.getSymName()
             << " has a mw.remat.budget_bytes that is not a positive integer";
    uint64_t peak = arenaSize + static_cast<uint64_t>(persistentBytes);
    if (peak > static_cast<uint64_t>(*value))
      return emitError(func.getLoc(), "the plan of @")
             << func.getSymName() << " peaks at " << peak << " B (arena "
             << arenaSize << " B + persistent " << persistentBytes
             << " B), over its rematerialization budget " << *value
             << " B (mw.remat.budget_bytes)";
    peakBudget = *value;
  }

  auto name = string(func.getSymName());
  auto persistentsOffset = finishPersistents();
  auto kernelsOffset = fbb.CreateVector(kernels);
  auto resultsOffset = fbb.CreateVector(results);
  std::vector<fb::Offset<mwplan::ArenaBuffer>> bufferTables;
  for (auto [offset, size] : arenaBuffers)
    bufferTables.push_back(mwplan::CreateArenaBuffer(fbb, offset, size));
  auto buffersOffset = fbb.CreateVector(bufferTables);
  // --mw-offload's settings (docs/offload.md): the weights file's directory
  // and the prefetch depth.
  std::string offloadPath;
  uint32_t offloadPrefetch = 0;
  if (auto offload =
          func->getAttrOfType<DictionaryAttr>(mw::MWDialect::kOffloadAttrName)) {
    if (auto path = offload.getAs<StringAttr>("path"))
      offloadPath = path.str();
    auto prefetch = offload.getAs<IntegerAttr>("prefetch");
    std::optional<int64_t> k = prefetch ? toInt64(prefetch) : std::nullopt;
    if (!k || *k < 0 || *k > std::numeric_limits<uint32_t>::max())
      return emitError(func.getLoc(), "@")
             << func.getSymName()
             << " has an mw.offload without a non-negative integer prefetch";
    offloadPrefetch = static_cast<uint32_t>(*k);
  }
  auto offloadPathOffset = string(offloadPath);
  mwplan::FinishPlanBuffer(
      fbb, mwplan::CreatePlan(fbb, mwrt::kMwPlanVersion, name, *size,
                              *alignment, *lowerBound, persistentsOffset,
                              kernelsOffset, resultsOffset, peakBudget,
                              ranks, buffersOffset, offloadPathOffset,
                              offloadPrefetch));
  fb::Verifier verifier(fbb.GetBufferPointer(), fbb.GetSize());
  if (!mwplan::VerifyPlanBuffer(verifier))
    return emitError(func.getLoc(), "internal error: the plan of @")
           << func.getSymName() << " does not verify against mwplan.fbs";
  return fbb.Release();
}

/// The function to translate: `function` when set, else the only planned one,
/// else train_step.
static FailureOr<func::FuncOp> selectFunction(Operation *op,
                                              StringRef function) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    return op->emitError("expected a builtin.module");
  auto notPlanned = [](func::FuncOp func) {
    return emitError(func.getLoc(), "@")
           << func.getSymName() << " is not planned (no mw.arena_size): run "
           << "mw-opt --mw-bufferize --mw-static-arena first";
  };
  if (!function.empty()) {
    auto func = module.lookupSymbol<func::FuncOp>(function);
    if (!func || func.isExternal())
      return module.emitError("no function with a body named '")
             << function << "'";
    if (!func->hasAttr("mw.arena_size"))
      return notPlanned(func);
    return func;
  }
  SmallVector<func::FuncOp> planned, all;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    all.push_back(func);
    if (func->hasAttr("mw.arena_size"))
      planned.push_back(func);
  }
  if (planned.size() == 1)
    return planned.front();
  for (func::FuncOp func : planned)
    if (func.getSymName() == "train_step")
      return func;
  if (all.empty())
    return module.emitError("no function with a body in the module");
  if (planned.empty() && all.size() == 1)
    return notPlanned(all.front());
  InFlightDiagnostic diag = module.emitError();
  if (planned.empty())
    diag << "no planned function (with mw.arena_size) among: ";
  else
    diag << "several planned functions, choose one with "
            "--mw-plan-function: ";
  llvm::interleaveComma(planned.empty() ? all : planned, diag,
                        [&](func::FuncOp f) { diag << "@" << f.getSymName(); });
  return diag;
}

/// The checks of --mw-verify-plan (DESIGN.md decision 16: the plan is
/// checked twice): a planned step whose live buffers overlap, whose offsets
/// or alignments are wrong or whose arena is too small is refused here, so
/// that no artifact is written for it (the translations write only on
/// success).
static LogicalResult verifyPlanned(func::FuncOp func) {
  // An empty arena has nothing to overlap or misalign (and a step with no
  // transient buffer needs no arena allocation, which the pass insists on).
  auto size = func->getAttrOfType<IntegerAttr>("mw.arena_size");
  if (size && size.getInt() == 0)
    return success();
  PassManager pm(func->getContext(), func::FuncOp::getOperationName());
  pm.addPass(mw::createMwVerifyPlan());
  if (succeeded(pm.run(func)))
    return success();
  return func.emitError("mw-translate: @")
         << func.getSymName()
         << " fails --mw-verify-plan (above); no plan is written";
}

static FailureOr<fb::DetachedBuffer> buildPlan(Operation *op,
                                               const mw::PlanOptions &options) {
  FailureOr<func::FuncOp> func = selectFunction(op, options.function);
  if (failed(func))
    return failure();
  // The builder's own checks first (their messages are the more specific),
  // then the verifier's on what the builder accepts.
  FailureOr<fb::DetachedBuffer> plan = PlanBuilder(*func).build();
  if (failed(plan) || failed(verifyPlanned(*func)))
    return failure();
  return plan;
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

LogicalResult mw::translateToPlan(Operation *module, raw_ostream &os,
                                  const PlanOptions &options) {
  FailureOr<fb::DetachedBuffer> plan = buildPlan(module, options);
  if (failed(plan))
    return failure();
  os.write(reinterpret_cast<const char *>(plan->data()), plan->size());
  uint8_t trailer[mwrt::kPlanTrailerSize];
  mwrt::planTrailer(plan->data(), plan->size(), trailer);
  os.write(reinterpret_cast<const char *>(trailer), sizeof trailer);
  return success();
}

LogicalResult mw::translateToPlanJson(Operation *module, raw_ostream &os,
                                      const PlanOptions &options) {
  FailureOr<fb::DetachedBuffer> plan = buildPlan(module, options);
  if (failed(plan))
    return failure();
  mw::writePlanJson(*mwplan::GetPlan(plan->data()), os);
  return success();
}
