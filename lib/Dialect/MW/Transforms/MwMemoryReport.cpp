//===- MwMemoryReport.cpp - --mw-memory-report ----------------------------===//
//
// Reports, per function, where a step's memory goes: bytes per role of the
// arguments and results, the parameter count, the op count, FLOPs and bytes
// moved (CostOpInterface), the activation bytes a naive execution keeps, and
// the saved activations by the same definition --mw-remat plans with
// (memwall/Analysis/StepStructure.h). With a device (`target=` or
// `device-memory=`) it ends with a verdict: whether the step's per-rank peak
// and the runtime overhead fit, and which changes would make it fit, each
// predicted by running the change's pass and --mw-train-pipeline on a copy
// of the module where the compiler can, else estimated (MemoryVerdict.h).
// The JSON form is a stable interface: keys are only ever added.
//
//===----------------------------------------------------------------------===//

#include "MemoryReportHtml.h"
#include "MemoryVerdict.h"
#include "MwOffloadAuto.h"
#include "ZeroReport.h"

#include "memwall/Analysis/BufferLiveness.h"
#include "memwall/Analysis/StepStructure.h"
#include "memwall/Analysis/Targets.h"
#include "memwall/Analysis/Units.h"
#include "memwall/Dialect/MW/IR/MWOps.h"
#include "memwall/Dialect/MW/Transforms/Passes.h"
#include "memwall/Dialect/MW/Transforms/Pipelines.h"
#include "memwall/Planning/Packer.h"
#include "memwall/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Mesh/IR/MeshDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Regex.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/MapVector.h"

#include <map>
#include <optional>
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::mw {
#define GEN_PASS_DEF_MWMEMORYREPORT
#include "memwall/Dialect/MW/Transforms/Passes.h.inc"
} // namespace mlir::mw

using namespace mlir;
using namespace mlir::mw;
namespace planning = memwall::planning;

namespace {

/// The figures of one function.
struct FunctionReport {
  std::string name;
  int64_t paramCount = 0;
  int64_t paramBytes = 0;
  llvm::MapVector<StringRef, int64_t> argumentBytes;
  llvm::MapVector<StringRef, int64_t> resultBytes;
  int64_t opCount = 0;
  int64_t flops = 0;
  int64_t bytesRead = 0;
  int64_t bytesWritten = 0;
  int64_t naiveActivationBytes = 0;
  int64_t gradBytes = 0;
  int64_t optimizerStateBytes = 0;
  int64_t savedActivationBytes = 0;
  /// Bytes per element type of params, gradients, optimizer state and saved
  /// activations.
  llvm::MapVector<StringRef, std::map<std::string, int64_t>> bytesByDtype;

  /// Memory of a bufferized function (memref.alloc buffers), planned into an
  /// arena by --mw-static-arena or not.
  bool planned = false;
  int64_t arenaBytes = 0;
  int64_t lowerBoundBytes = 0;
  int64_t naiveBytes = 0;
  int64_t persistentBytes = 0;
  /// The program point where transient bytes peak and what is live there,
  /// largest first.
  struct PeakBuffer {
    std::string name, op, loc;
    int64_t bytes;
  };
  int64_t peakPosition = -1;
  std::string peakOp;
  int64_t peakBytes = 0;
  SmallVector<PeakBuffer> peakBuffers;

  /// What --mw-remat decided (its mw.remat.* function attributes).
  struct Remat {
    std::string strategy;
    int64_t savedActivationBytes = 0, recomputeFlops = 0, stepFlops = 0;
    double recomputeSeconds = 0;
    std::optional<int64_t> budgetBytes, saveAllPeakBytes, peakBytes;
    SmallVector<std::pair<std::string, int64_t>> keptBytesByLayer;
  };
  std::optional<Remat> remat;

  /// What --mw-offload=auto weighed and chose (its mw.offload.candidates
  /// and mw.offload.choice attributes).
  struct OffloadCandidate {
    int64_t pinnedLayers = 0, prefetch = 0, batch = 0;
    bool fits = false;
    double tokensPerSecond = 0;
  };
  struct Offload {
    SmallVector<OffloadCandidate> candidates;
    std::optional<OffloadCandidate> choice;
  };
  std::optional<Offload> offload;

  /// What one rank of a ZeRO step holds and sends (ZeroReport.h).
  std::optional<ZeroReport> zero;

  /// The buffers and the live curve for format=html (MemoryReportHtml.h).
  MemoryPicture picture;
};

/// One entry of mw.offload.candidates (or the choice); missing keys read 0.
FunctionReport::OffloadCandidate readOffloadCandidate(DictionaryAttr d) {
  FunctionReport::OffloadCandidate c;
  auto integer = [&](StringRef key) -> int64_t {
    auto a = d.getAs<IntegerAttr>(key);
    return a ? a.getInt() : 0;
  };
  c.pinnedLayers = integer("pinned_layers");
  c.prefetch = integer("prefetch");
  c.batch = integer("batch");
  if (auto a = d.getAs<BoolAttr>("fits"))
    c.fits = a.getValue();
  if (auto a = d.getAs<FloatAttr>("predicted_tokens_per_s"))
    c.tokensPerSecond = a.getValueAsDouble();
  return c;
}

/// The mw.offload.* attributes of `func`, if --mw-offload=auto ran on it.
std::optional<FunctionReport::Offload> readOffload(Operation *func) {
  auto candidates = func->getAttrOfType<ArrayAttr>("mw.offload.candidates");
  if (!candidates)
    return std::nullopt;
  FunctionReport::Offload o;
  for (Attribute a : candidates)
    if (auto d = dyn_cast<DictionaryAttr>(a))
      o.candidates.push_back(readOffloadCandidate(d));
  if (auto d = func->getAttrOfType<DictionaryAttr>("mw.offload.choice"))
    o.choice = readOffloadCandidate(d);
  return o;
}

/// The mw.remat.* attributes of `func`, if --mw-remat ran on it.
std::optional<FunctionReport::Remat> readRemat(Operation *func) {
  auto strategy = func->getAttrOfType<StringAttr>("mw.remat.strategy");
  if (!strategy)
    return std::nullopt;
  FunctionReport::Remat m;
  m.strategy = strategy.getValue().str();
  auto integer = [&](StringRef name) -> std::optional<int64_t> {
    if (auto a = func->getAttrOfType<IntegerAttr>(name))
      return a.getInt();
    return std::nullopt;
  };
  m.savedActivationBytes =
      integer("mw.remat.saved_activation_bytes").value_or(0);
  m.recomputeFlops = integer("mw.remat.recompute_flops").value_or(0);
  m.stepFlops = integer("mw.remat.step_flops").value_or(0);
  if (auto a = func->getAttrOfType<FloatAttr>("mw.remat.recompute_seconds"))
    m.recomputeSeconds = a.getValueAsDouble();
  m.budgetBytes = integer("mw.remat.budget_bytes");
  m.saveAllPeakBytes = integer("mw.remat.save_all_peak_bytes");
  m.peakBytes = integer("mw.remat.peak_bytes");
  if (auto layers = func->getAttrOfType<ArrayAttr>("mw.remat.kept_bytes_by_layer"))
    for (Attribute entry : layers) {
      auto pair = dyn_cast<ArrayAttr>(entry);
      if (!pair || pair.size() != 2)
        continue;
      auto name = dyn_cast<StringAttr>(pair[0]);
      auto bytes = dyn_cast<IntegerAttr>(pair[1]);
      if (name && bytes)
        m.keptBytesByLayer.push_back({name.getValue().str(), bytes.getInt()});
    }
  return m;
}

/// How the report names an op: a kernel by the op its body computes.
std::string opLabel(Operation *op) {
  if (auto kernel = dyn_cast<KernelOp>(op)) {
    if (Operation *body = kernel.getSingleOp())
      return body->getName().getStringRef().str();
    // A fused kernel (--mw-fuse): its first op and how many follow.
    Block &block = kernel.getBody().front();
    if (block.getOperations().size() > 2)
      return ("fused " + block.front().getName().getStringRef() + "+" +
              Twine(block.getOperations().size() - 2))
          .str();
  }
  return op->getName().getStringRef().str();
}

/// The op that produces buffer `root`: the first kernel writing it (through
/// any view), else the op defining it.
Operation *producerOf(Value root, Operation *definingOp) {
  Operation *first = nullptr;
  SmallVector<Value> work{root};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (auto kernel = dyn_cast<KernelOp>(user)) {
        if (kernel.isDpsInit(&use) &&
            (!first || (user->getBlock() == first->getBlock() &&
                        user->isBeforeInBlock(first))))
          first = user;
      } else if (isa<ViewLikeOpInterface>(user)) {
        work.append(user->result_begin(), user->result_end());
      }
    }
  }
  return first ? first : definingOp;
}

std::string locationString(Location loc) {
  std::string s;
  llvm::raw_string_ostream os(s);
  loc.print(os);
  return s;
}

/// The arena of a planned function: the argument or memref.alloc marked
/// mw.arena, else null.
Value findArena(FunctionOpInterface func) {
  Block &entry = func.getFunctionBody().front();
  for (BlockArgument arg : entry.getArguments())
    if (func.getArgAttr(arg.getArgNumber(), "mw.arena"))
      return arg;
  for (Operation &op : entry)
    if (isa<memref::AllocOp>(op) && op.hasAttr("mw.arena"))
      return op.getResult(0);
  return Value();
}

bool isBufferized(FunctionOpInterface func) {
  auto isMemref = [](Type t) { return isa<BaseMemRefType>(t); };
  return llvm::any_of(func.getArgumentTypes(), isMemref) ||
         llvm::any_of(func.getResultTypes(), isMemref);
}

/// Whether `op` or an op nested in it satisfies `pred`.
bool anyNested(Operation *op, llvm::function_ref<bool(Operation *)> pred) {
  return op
      ->walk([&](Operation *o) {
        return pred(o) ? WalkResult::interrupt() : WalkResult::advance();
      })
      .wasInterrupted();
}

/// The index in kPictureKinds of `kind`.
unsigned pictureKind(StringRef kind) {
  for (auto [i, k] : llvm::enumerate(kPictureKinds))
    if (k.name == kind)
      return i;
  llvm_unreachable("not a picture kind");
}

/// The picture of the transient buffers of `live`: a ZeRO gradient bucket
/// or gathered parameters (classifyZeroBuffer), else by the op that
/// produces the buffer: a recompute clone (mw.recompute), at or after the
/// first optimizer update that follows the last gradient op (optimizer
/// work; updates that --mw-hoist-updates moved into the backward pass do
/// not start it), at or after the first gradient op (`*_grad`: the backward
/// pass, gradients), else an activation.
void drawBuffers(FunctionOpInterface func, const BufferLiveness &live,
                 ArrayRef<const LiveBuffer *> transient, MemoryPicture &p) {
  int64_t backwardStart = live.getNumPositions(),
          optimizerStart = live.getNumPositions();
  bool afterLastGradient = true;
  for (int64_t pos = live.getNumPositions() - 1; pos >= 0; --pos) {
    Operation *op = live.getOpAt(pos);
    if (anyNested(op, [](Operation *o) {
          return o->getName().getStringRef().ends_with("_grad");
        })) {
      backwardStart = pos;
      afterLastGradient = false;
    }
    if (afterLastGradient && anyNested(op, [](Operation *o) {
          return isa<AdamWOp, SgdOp, LossScaleUpdateOp>(o);
        }))
      optimizerStart = pos;
  }
  Block &entry = func.getFunctionBody().front();
  for (const LiveBuffer *b : transient) {
    PictureBuffer pb;
    pb.name = b->name;
    pb.start = b->start;
    pb.end = b->end;
    pb.bytes = static_cast<int64_t>(b->sizeInBytes);
    if (auto view = dyn_cast_or_null<memref::ViewOp>(b->definingOp))
      pb.offset = getConstantIntValue(view.getByteShift()).value_or(-1);
    Operation *producer = producerOf(b->value, b->definingOp);
    if (producer) {
      pb.op = opLabel(producer);
      pb.loc = locationString(producer->getLoc());
    }
    StringRef zeroKind = classifyZeroBuffer(*b, live, entry).kind;
    int64_t at = producer ? live.getPosition(producer) : -1;
    if (at < 0)
      at = b->start;
    StringRef kind = "activation";
    if (zeroKind == "gradient_buckets")
      kind = "gradient_bucket";
    else if (zeroKind == "gathered_parameters")
      kind = "gathered_parameters";
    else if (producer && anyNested(producer, [](Operation *o) {
               return o->hasAttr("mw.recompute");
             }))
      kind = "recompute";
    else if (at >= optimizerStart)
      kind = "optimizer";
    else if (at >= backwardStart)
      kind = "gradient";
    pb.kind = pictureKind(kind);
    p.buffers.push_back(std::move(pb));
  }
}

/// Arena, lower bound, naive and persistent bytes and the peak of a
/// bufferized function, from the same liveness --mw-static-arena plans with.
void analyzeBuffers(FunctionOpInterface func, FunctionReport &r) {
  if (!func.getFunctionBody().hasOneBlock())
    return;
  Value arena = findArena(func);
  BufferLiveness allocs(func);
  std::unique_ptr<BufferLiveness> planned;
  if (arena) {
    SmallVector<Value> views;
    for (Operation *user : arena.getUsers())
      if (auto view = dyn_cast<memref::ViewOp>(user))
        views.push_back(view.getResult());
    planned = std::make_unique<BufferLiveness>(func, views);
    r.planned = true;
    if (auto a = func->getAttrOfType<IntegerAttr>("mw.arena_size"))
      r.arenaBytes = a.getInt();
  }
  const BufferLiveness &live = planned ? *planned : allocs;

  std::vector<planning::PackBuffer> buffers;
  SmallVector<const LiveBuffer *> transient;
  for (const LiveBuffer &b : live.getBuffers()) {
    if (!b.isTransient() || b.sizeInBytes == 0)
      continue;
    buffers.push_back({b.sizeInBytes, b.start, b.end});
    transient.push_back(&b);
    r.naiveBytes += b.sizeInBytes;
  }
  for (const LiveBuffer &b : allocs.getBuffers())
    if (!b.isTransient() && b.value != arena)
      r.persistentBytes += b.sizeInBytes;
  for (BlockArgument arg : func.getFunctionBody().getArguments())
    if (arg != arena)
      r.persistentBytes += mw::detail::tensorBytes(arg.getType());
  MemoryPicture &picture = r.picture;
  picture.bufferized = isBufferized(func) || !live.getBuffers().empty();
  picture.planned = r.planned;
  picture.numPositions = live.getNumPositions();
  picture.arenaBytes = r.arenaBytes;
  picture.naiveBytes = r.naiveBytes;
  picture.persistentBytes = r.persistentBytes;
  drawBuffers(func, live, transient, picture);
  if (buffers.empty())
    return;
  r.lowerBoundBytes = planning::computeLowerBound(buffers, /*alignment=*/1);
  if (auto lb = func->getAttrOfType<IntegerAttr>("mw.lower_bound"))
    r.lowerBoundBytes = lb.getInt();

  // Live transient bytes per position; the first maximum is the peak.
  std::vector<int64_t> liveBytes(live.getNumPositions() + 1, 0);
  for (const planning::PackBuffer &b : buffers) {
    liveBytes[b.start] += b.size;
    liveBytes[b.end] -= b.size;
  }
  for (size_t p = 1; p < liveBytes.size(); ++p)
    liveBytes[p] += liveBytes[p - 1];
  auto peak = std::max_element(liveBytes.begin(), liveBytes.end());
  r.peakPosition = peak - liveBytes.begin();
  r.peakBytes = *peak;
  for (auto [p, bytes] : llvm::enumerate(liveBytes))
    if (p == 0 || bytes != liveBytes[p - 1])
      picture.liveCurve.push_back({static_cast<int64_t>(p), bytes});
  if (r.peakPosition < live.getNumPositions()) {
    // Name the computation at the peak, not the view or allocation that
    // opens it.
    int64_t p = r.peakPosition;
    while (p + 1 < live.getNumPositions() &&
           isa<ViewLikeOpInterface, memref::AllocOp, arith::ConstantOp>(
               live.getOpAt(p)))
      ++p;
    r.peakOp = opLabel(live.getOpAt(p));
  }
  for (const LiveBuffer *b : transient) {
    if (b->start > r.peakPosition || r.peakPosition >= b->end)
      continue;
    Operation *producer = producerOf(b->value, b->definingOp);
    r.peakBuffers.push_back({b->name, producer ? opLabel(producer) : "",
                             producer ? locationString(producer->getLoc())
                                      : "",
                             static_cast<int64_t>(b->sizeInBytes)});
  }
  std::stable_sort(r.peakBuffers.begin(), r.peakBuffers.end(),
                   [](const auto &a, const auto &b) { return a.bytes > b.bytes; });
}

std::string dtypeName(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  cast<ShapedType>(type).getElementType().print(os);
  return s;
}

/// The saved activations of the step (StepStructure.h, findSavedActivations:
/// what the forward part writes and the backward part reads, counted once
/// per storage), the same figure on tensors and on the kernels of a
/// bufferized or planned step.
void countSavedActivations(FunctionOpInterface func, FunctionReport &r) {
  for (const SavedActivation &s : findSavedActivations(func)) {
    int64_t bytes = mw::detail::tensorBytes(s.type);
    r.savedActivationBytes += bytes;
    r.bytesByDtype["saved_activation"][dtypeName(s.type)] += bytes;
  }
}

StringRef roleName(DictionaryAttr attrs) {
  if (attrs)
    if (auto role = attrs.getAs<RoleAttr>(MWDialect::kRoleAttrName))
      return stringifyRole(role.getValue());
  return "none";
}

/// Every shaped type that enters a figure must be static.
LogicalResult checkStatic(Type type, Location loc, const Twine &what) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (shaped && !shaped.hasStaticShape())
    return emitError(loc) << what << " has a dynamic shape " << type
                          << "; the memory report needs static shapes";
  return success();
}

FailureOr<FunctionReport> analyze(FunctionOpInterface func) {
  FunctionReport r;
  r.name = func.getName().str();
  r.remat = readRemat(func);
  r.offload = readOffload(func);
  for (StringRef role : {"param", "input", "label", "optimizer_state", "grad",
                         "none"})
    r.argumentBytes[role] = 0;
  for (StringRef role : {"output", "grad", "param", "optimizer_state", "none"})
    r.resultBytes[role] = 0;

  Location loc = func.getLoc();
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    Location argLoc = func.getArgument(i).getLoc();
    if (failed(checkStatic(type, argLoc, "argument #" + Twine(i))))
      return failure();
    StringRef role = roleName(func.getArgAttrDict(i));
    int64_t bytes = mw::detail::tensorBytes(type);
    r.argumentBytes[role] += bytes;
    if (role == "param") {
      r.paramCount += mw::detail::numElements(type);
      r.paramBytes += bytes;
    }
    if (role == "optimizer_state")
      r.optimizerStateBytes += bytes;
    if (role == "grad")
      r.gradBytes += bytes;
    if (role == "param" || role == "optimizer_state" || role == "grad")
      r.bytesByDtype[role][dtypeName(type)] += bytes;
  }
  for (auto [i, type] : llvm::enumerate(func.getResultTypes())) {
    if (failed(checkStatic(type, loc, "result #" + Twine(i))))
      return failure();
    StringRef role = roleName(func.getResultAttrDict(i));
    r.resultBytes[role] += mw::detail::tensorBytes(type);
    if (role == "grad") {
      r.gradBytes += mw::detail::tensorBytes(type);
      r.bytesByDtype["grad"][dtypeName(type)] += mw::detail::tensorBytes(type);
    }
  }

  WalkResult walk = func.getFunctionBody().walk([&](Operation *op) {
    if (op->hasTrait<mlir::OpTrait::IsTerminator>())
      return WalkResult::advance();
    // A kernel's cost is its body's, counted once at the kernel; its body's
    // ops are the operations and values counted below, not the kernel.
    // An mw.fusion (tensor form of a fused kernel) counts the same way.
    if (isa<KernelOp, FusionOp>(op)) {
      auto cost = cast<CostOpInterface>(op);
      r.flops += cost.getFlops();
      r.bytesRead += cost.getBytesRead();
      r.bytesWritten += cost.getBytesWritten();
      return WalkResult::advance();
    }
    bool inKernel = isa_and_nonnull<KernelOp, FusionOp>(op->getParentOp());
    ++r.opCount;
    for (auto [i, type] : llvm::enumerate(op->getResultTypes())) {
      if (failed(checkStatic(type, op->getLoc(),
                             "result #" + Twine(i) + " of '" +
                                 op->getName().getStringRef() + "'")))
        return WalkResult::interrupt();
      // Values computed by mw ops; not storage (allocations, views,
      // tensor.empty destinations) that bufferization adds.
      if (isa_and_nonnull<MWDialect>(op->getDialect()))
        r.naiveActivationBytes += mw::detail::tensorBytes(type);
    }
    // Gradients the step computes are what its optimizer updates consume.
    Value grad = isa<AdamWOp>(op)  ? cast<AdamWOp>(op).getGrad()
                 : isa<SgdOp>(op) ? cast<SgdOp>(op).getGrad()
                                  : Value();
    if (grad) {
      r.gradBytes += mw::detail::tensorBytes(grad.getType());
      r.bytesByDtype["grad"][dtypeName(grad.getType())] +=
          mw::detail::tensorBytes(grad.getType());
    }
    auto cost = dyn_cast<CostOpInterface>(op);
    if (cost && !inKernel) {
      r.flops += cost.getFlops();
      r.bytesRead += cost.getBytesRead();
      r.bytesWritten += cost.getBytesWritten();
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  countSavedActivations(func, r);
  analyzeBuffers(func, r);
  r.zero = analyzeZero(func, r.planned, r.peakPosition);
  MemoryPicture &p = r.picture;
  p.function = r.name;
  p.lowerBoundBytes = r.lowerBoundBytes;
  p.peakPosition = r.peakPosition;
  p.peakBytes = r.peakBytes;
  p.peakOp = r.peakOp;
  if (r.zero) {
    p.ranks.ranks = r.zero->ranks;
    p.ranks.zeroStage = r.zero->stage;
    p.ranks.paramBytes = r.zero->param.bytes;
    p.ranks.gradBytes = r.zero->grad.bytes;
    p.ranks.optimizerStateBytes = r.zero->optimizerState.bytes;
  } else {
    p.ranks.paramBytes = r.paramBytes;
    p.ranks.gradBytes = r.gradBytes;
    p.ranks.optimizerStateBytes = r.optimizerStateBytes;
  }
  return r;
}

std::string humanCount(int64_t n) {
  static const char *units[] = {"", "K", "M", "G", "T", "P", "E"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1000.0 && u < 6) {
    v /= 1000.0;
    ++u;
  }
  if (u == 0)
    return llvm::formatv("{0}", n).str();
  return llvm::formatv("{0:F2}{1}", v, units[u]).str();
}

void printText(llvm::raw_ostream &os, ArrayRef<FunctionReport> reports) {
  // One "label  exact (GB = GiB)" line per total, the figures people
  // compare with a device's marketed size (Units.h); breakdowns (by role,
  // dtype, layer, buffer) in binary units only. Exact counts stay in the
  // JSON.
  auto bytesLine = [&](StringRef label, int64_t bytes) {
    os << llvm::formatv("  {0,-24}{1} ({2})\n", label, bytes,
                        formatBothBytes(bytes));
  };
  for (const FunctionReport &r : reports) {
    os << "mw-memory-report @" << r.name << "\n";
    os << llvm::formatv("  {0,-24}{1} ({2})\n", "parameters", r.paramCount,
                        humanCount(r.paramCount));
    bytesLine("parameter bytes", r.paramBytes);
    auto printRoles = [&](StringRef title,
                          const llvm::MapVector<StringRef, int64_t> &bytes) {
      os << "  " << title << "\n";
      for (auto [role, b] : bytes)
        if (b != 0)
          os << llvm::formatv("    {0,-22}{1} ({2})\n", role, b,
                              formatBinaryBytes(b));
    };
    printRoles("arguments by role", r.argumentBytes);
    printRoles("results by role", r.resultBytes);
    os << llvm::formatv("  {0,-24}{1}\n", "ops", r.opCount);
    os << llvm::formatv("  {0,-24}{1} ({2}FLOP)\n", "flops", r.flops,
                        humanCount(r.flops));
    bytesLine("bytes read", r.bytesRead);
    bytesLine("bytes written", r.bytesWritten);
    bytesLine("naive activations", r.naiveActivationBytes);
    bytesLine("gradients", r.gradBytes);
    bytesLine("optimizer state", r.optimizerStateBytes);
    bytesLine("saved activations", r.savedActivationBytes);
    for (auto &[what, byType] : r.bytesByDtype) {
      os << "  " << what << " by dtype:";
      for (auto &[dtype, bytes] : byType)
        os << " " << dtype << " " << formatBinaryBytes(bytes);
      os << "\n";
    }
    if (r.remat) {
      const FunctionReport::Remat &m = *r.remat;
      os << llvm::formatv("  {0,-24}{1}\n", "remat strategy", m.strategy);
      if (m.saveAllPeakBytes)
        bytesLine("save-all peak", *m.saveAllPeakBytes);
      if (m.peakBytes)
        bytesLine("peak after remat", *m.peakBytes);
      if (m.budgetBytes)
        bytesLine("budget", *m.budgetBytes);
      bytesLine("kept activations", m.savedActivationBytes);
      os << llvm::formatv("  {0,-24}{1} ({2}FLOP, {3:P1} of the step's {4}FLOP, "
                          "~{5:e2} s)\n",
                          "recompute flops", m.recomputeFlops,
                          humanCount(m.recomputeFlops),
                          m.stepFlops ? double(m.recomputeFlops) / m.stepFlops
                                      : 0.0,
                          humanCount(m.stepFlops), m.recomputeSeconds);
      os << "  kept by layer:";
      for (auto &[layer, bytes] : m.keptBytesByLayer)
        os << " " << layer << " " << formatBinaryBytes(bytes) << ";";
      os << "\n";
    }
    if (r.offload) {
      os << llvm::formatv("  {0,-24}{1} weighed", "offload candidates",
                          r.offload->candidates.size());
      if (const auto &c = r.offload->choice)
        os << llvm::formatv("; chosen pinned-layers={0} prefetch={1} "
                            "batch={2}, {3:f2} tokens/s predicted",
                            c->pinnedLayers, c->prefetch, c->batch,
                            c->tokensPerSecond);
      os << "\n";
    }
    if (r.zero)
      printZeroText(os, *r.zero);
    if (r.naiveBytes == 0 && !r.planned)
      continue;
    os << llvm::formatv("  {0,-24}{1} ({2}){3}\n", "arena", r.arenaBytes,
                        formatBothBytes(r.arenaBytes),
                        r.planned ? "" : ", not planned");
    bytesLine("lower bound", r.lowerBoundBytes);
    bytesLine("no reuse", r.naiveBytes);
    bytesLine("persistent", r.persistentBytes);
    if (r.peakPosition < 0)
      continue;
    os << llvm::formatv("  peak: {0} live at op {1} ({2}), largest first:\n",
                        formatBothBytes(r.peakBytes), r.peakPosition, r.peakOp);
    for (const auto &b : r.peakBuffers)
      os << llvm::formatv("    {0,-20} {1,12}  {2}  {3}\n", b.name,
                          formatBinaryBytes(b.bytes), b.op, b.loc);
  }
}

void printJson(llvm::raw_ostream &os, ArrayRef<FunctionReport> reports,
               const std::optional<Verdict> &verdict) {
  llvm::json::OStream j(os, /*IndentSize=*/2);
  j.object([&] {
    j.attributeArray("functions", [&] {
      for (const FunctionReport &r : reports) {
        j.object([&] {
          j.attribute("name", r.name);
          j.attribute("param_count", r.paramCount);
          j.attribute("param_bytes", r.paramBytes);
          j.attributeObject("argument_bytes", [&] {
            for (auto [role, b] : r.argumentBytes)
              j.attribute(role, b);
          });
          j.attributeObject("result_bytes", [&] {
            for (auto [role, b] : r.resultBytes)
              j.attribute(role, b);
          });
          j.attribute("op_count", r.opCount);
          j.attribute("flops", r.flops);
          j.attribute("bytes_read", r.bytesRead);
          j.attribute("bytes_written", r.bytesWritten);
          j.attribute("naive_activation_bytes", r.naiveActivationBytes);
          j.attribute("grad_bytes", r.gradBytes);
          j.attribute("optimizer_state_bytes", r.optimizerStateBytes);
          j.attribute("saved_activation_bytes", r.savedActivationBytes);
          j.attribute("planned", r.planned);
          j.attribute("arena_bytes", r.arenaBytes);
          j.attribute("lower_bound_bytes", r.lowerBoundBytes);
          j.attribute("naive_bytes", r.naiveBytes);
          j.attribute("persistent_bytes", r.persistentBytes);
          j.attributeObject("peak", [&] {
            j.attribute("position", r.peakPosition);
            j.attribute("op", r.peakOp);
            j.attribute("live_bytes", r.peakBytes);
            j.attributeArray("buffers", [&] {
              for (const auto &b : r.peakBuffers)
                j.object([&] {
                  j.attribute("name", b.name);
                  j.attribute("bytes", b.bytes);
                  j.attribute("op", b.op);
                  j.attribute("loc", b.loc);
                });
            });
          });
          if (r.remat)
            j.attributeObject("remat", [&] {
              const FunctionReport::Remat &m = *r.remat;
              j.attribute("strategy", m.strategy);
              if (m.saveAllPeakBytes)
                j.attribute("save_all_peak_bytes", *m.saveAllPeakBytes);
              if (m.peakBytes)
                j.attribute("peak_bytes", *m.peakBytes);
              if (m.budgetBytes)
                j.attribute("budget_bytes", *m.budgetBytes);
              j.attribute("saved_activation_bytes", m.savedActivationBytes);
              j.attribute("recompute_flops", m.recomputeFlops);
              j.attribute("step_flops", m.stepFlops);
              j.attribute("recompute_seconds", m.recomputeSeconds);
              j.attributeObject("kept_bytes_by_layer", [&] {
                for (auto &[layer, bytes] : m.keptBytesByLayer)
                  j.attribute(layer, bytes);
              });
            });
          j.attributeObject("bytes_by_dtype", [&] {
            for (auto &[what, byType] : r.bytesByDtype)
              j.attributeObject(what, [&] {
                for (auto &[dtype, bytes] : byType)
                  j.attribute(dtype, bytes);
              });
          });
          if (r.offload) {
            auto candidate = [&](const FunctionReport::OffloadCandidate &c) {
              j.object([&] {
                j.attribute("pinned_layers", c.pinnedLayers);
                j.attribute("prefetch", c.prefetch);
                j.attribute("batch", c.batch);
                j.attribute("fits", c.fits);
                j.attribute("predicted_tokens_per_s", c.tokensPerSecond);
              });
            };
            j.attributeArray("offload_candidates", [&] {
              for (const auto &c : r.offload->candidates)
                candidate(c);
            });
            if (r.offload->choice) {
              j.attributeBegin("offload_choice");
              candidate(*r.offload->choice);
              j.attributeEnd();
            }
          }
          if (r.zero)
            printZeroJson(j, *r.zero);
        });
      }
    });
    if (verdict)
      printVerdictJson(j, *verdict);
  });
  os << "\n";
}

/// The page of the step named `function` when the module has it (a
/// training step's plan, not its forward's), else of every function.
void printHtml(llvm::raw_ostream &os, ArrayRef<FunctionReport> reports,
               StringRef function, const std::optional<Verdict> &verdict) {
  std::vector<MemoryPicture> pictures;
  for (const FunctionReport &r : reports)
    if (r.name == function)
      pictures.push_back(r.picture);
  if (pictures.empty())
    for (const FunctionReport &r : reports)
      pictures.push_back(r.picture);
  std::string verdictText;
  if (verdict) {
    llvm::raw_string_ostream vs(verdictText);
    printVerdictText(vs, *verdict);
  }
  printMemoryReportHtml(os, pictures, verdictText);
}

//===----------------------------------------------------------------------===//
// The verdict
//===----------------------------------------------------------------------===//

/// The device of `target=` and `device-memory=`; failure after a diagnostic
/// naming the option.
FailureOr<Device> resolveDevice(ModuleOp module, StringRef targetName,
                                StringRef deviceMemory) {
  Device d;
  if (!targetName.empty()) {
    const Target *t = lookupTarget(targetName);
    if (!t)
      return module.emitError()
             << "mw-memory-report: unknown target '" << targetName
             << "' (expected " << getTargetNames() << ")";
    if (t->memoryBytes == 0 && deviceMemory.empty())
      return module.emitError()
             << "mw-memory-report: target '" << t->name
             << "' has no device memory to check against; give "
                "device-memory=SIZE";
    d.name = t->name.str();
    d.description = t->description.str();
    d.memoryBytes = t->memoryBytes;
    d.target = t;
    d.hasBf16 = t->hasBf16;
  }
  if (!deviceMemory.empty()) {
    std::optional<int64_t> bytes = parseByteSize(deviceMemory);
    if (!bytes)
      return module.emitError()
             << "mw-memory-report: device-memory='" << deviceMemory
             << "' is not a size (expected a positive number with an "
                "optional unit: "
             << getByteSizeUnits() << ", e.g. 16GB)";
    d.memoryBytes = *bytes;
    d.name = d.target ? d.name + " with device-memory=" + deviceMemory.str()
                      : "device-memory=" + deviceMemory.str();
  }
  return d;
}

/// Diagnostics of a nested pipeline, kept instead of printed: the first
/// error's message, or empty.
struct CapturedErrors {
  explicit CapturedErrors(MLIRContext *ctx)
      : handler(ctx, [this](Diagnostic &d) {
          if (d.getSeverity() == DiagnosticSeverity::Error && first.empty())
            first = d.str();
          return success();
        }) {}
  std::string first;
  ScopedDiagnosticHandler handler;
};

/// A copy of `module` that `pass` ran on, or null where it failed (the
/// caller's CapturedErrors says why).
OwningOpRef<ModuleOp> runOnCopy(ModuleOp module, std::unique_ptr<Pass> pass) {
  OwningOpRef<ModuleOp> copy(cast<ModuleOp>(module->clone()));
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  pm.addPass(std::move(pass));
  if (failed(pm.run(*copy)))
    return nullptr;
  return copy;
}

/// What a planned copy of the step holds per rank.
struct PlannedStep {
  int64_t arena = 0, persistent = 0;
  RuntimeOverhead overhead;
  int64_t flops = 0;
  std::optional<ZeroReport> zero;
  int64_t peak() const { return arena + persistent; }
};

/// Plans `copy` (--mw-train-pipeline on tensors, --mw-static-arena on a
/// bufferized step, nothing on a planned one) and measures `function`; on
/// failure `errors.first` says why.
FailureOr<PlannedStep> planAndMeasure(ModuleOp copy, StringRef function,
                                      CapturedErrors &errors) {
  MLIRContext *ctx = copy.getContext();
  // Only the step and what it calls: the forward function would only cost
  // time.
  for (auto f : llvm::make_early_inc_range(copy.getOps<func::FuncOp>()))
    if (f.getSymName() != function && SymbolTable::symbolKnownUseEmpty(f, copy))
      f.erase();
  auto step = copy.lookupSymbol<FunctionOpInterface>(function);
  if (!step)
    return failure();
  if (!findArena(step)) {
    PassManager pm(ctx, ModuleOp::getOperationName());
    if (isBufferized(step))
      pm.addPass(createMwStaticArena());
    else
      buildTrainPipeline(pm);
    if (failed(pm.run(copy)))
      return failure();
    step = copy.lookupSymbol<FunctionOpInterface>(function);
  }
  FailureOr<FunctionReport> r = analyze(step);
  if (failed(r))
    return failure();
  PlannedStep p;
  p.arena = r->arenaBytes;
  p.persistent = r->persistentBytes;
  p.overhead = computeRuntimeOverhead(step);
  p.flops = r->flops;
  p.zero = r->zero;
  return p;
}

/// A suggestion that could not be predicted, saying why.
Suggestion unavailable(StringRef kind, const Twine &why) {
  Suggestion s;
  s.kind = kind.str();
  s.basis = "unavailable";
  s.note = why.str();
  return s;
}

/// The leading dimension of the step's first `input` argument: the batch.
std::optional<int64_t> stepBatch(FunctionOpInterface func) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto role = func.getArgAttrOfType<RoleAttr>(i, MWDialect::kRoleAttrName);
    auto type = dyn_cast<ShapedType>(func.getArgumentTypes()[i]);
    if (role && role.getValue() == Role::input && type && type.hasRank() &&
        type.getRank() >= 1)
      return type.getDimSize(0);
  }
  return std::nullopt;
}

/// A measured suggestion's peak, required bytes and verdict from the step
/// planned on a copy.
void setMeasuredPeak(Suggestion &s, const PlannedStep &p, const Verdict &v) {
  s.peakBytes = p.peak();
  s.requiredBytes = s.peakBytes + p.overhead.total();
  s.fits = s.requiredBytes <= v.device.memoryBytes;
}

/// --mw-remat with a budget of the device memory less the overhead, on a
/// copy: its planned peak, or the lowest peak it can reach.
Suggestion predictRemat(ModuleOp module, StringRef function,
                        const FunctionReport &r, const Verdict &v) {
  if (r.remat)
    return unavailable("remat", "the step is already rematerialized "
                                "(strategy=" + r.remat->strategy + ")");
  // The room the overhead leaves, rounded down to what a person types:
  // whole MB from 1 GB up, whole KB below.
  int64_t room = v.device.memoryBytes - v.overhead.total();
  bool inMB = room >= 1000000000;
  int64_t budget = room / (inMB ? 1000000 : 1000);
  if (budget <= 0)
    return unavailable("remat", "the runtime overhead alone fills the device");
  mw::MwRematOptions options;
  options.budget = std::to_string(budget) + (inMB ? "MB" : "KB");
  options.function = function.str();
  if (v.device.target)
    options.target = v.device.target->name.str();
  Suggestion s;
  s.kind = "remat";
  s.change = "--mw-remat=\"budget=" + options.budget +
             (v.device.target ? " target=" + options.target : "") + "\"";
  s.basis = "measured";
  CapturedErrors errors(module.getContext());
  OwningOpRef<ModuleOp> copy = runOnCopy(module, createMwRemat(options));
  if (!copy) {
    // An unreachable budget's error states the smallest peak found, or
    // the persistent state that no rematerialization reduces (measured, or
    // before measuring, its arguments alone).
    llvm::Regex lowest("the smallest planned peak found is ([0-9]+) B");
    llvm::Regex persistent("below the persistent state of @[^,:]*"
                           "(, |: its arguments alone are )([0-9]+) B");
    SmallVector<StringRef> match;
    if (lowest.match(errors.first, &match))
      s.note = "no budget fits: the lowest peak --mw-remat finds is ";
    else if (persistent.match(errors.first, &match))
      s.note = "no budget fits: the persistent state alone (parameters, "
               "optimizer state, inputs, outputs) is ";
    else
      return unavailable("remat", "--mw-remat failed: " + errors.first);
    match.back().getAsInteger(10, s.peakBytes);
    s.note += formatBothBytes(s.peakBytes);
    s.requiredBytes = s.peakBytes + v.overhead.total();
    s.fits = false;
    return s;
  }
  auto f = copy->lookupSymbol<FunctionOpInterface>(function);
  if (auto flops = f->getAttrOfType<IntegerAttr>("mw.remat.recompute_flops"))
    s.extraFlops = flops.getInt();
  FailureOr<PlannedStep> p = planAndMeasure(*copy, function, errors);
  if (failed(p))
    return unavailable("remat", "planning the rematerialized step failed: " +
                                    errors.first);
  setMeasuredPeak(s, *p, v);
  s.extraFlopsFraction = r.flops ? double(s.extraFlops) / double(r.flops) : 0;
  s.note = "bit-exact: recomputes forward values in the backward pass";
  return s;
}

/// The FLOPs of `func`'s ops (outside kernels: a tensor-level step).
int64_t tensorFlops(FunctionOpInterface func) {
  int64_t flops = 0;
  func.getFunctionBody().walk([&](CostOpInterface op) {
    if (!isa_and_nonnull<KernelOp, FusionOp>(op->getParentOp()))
      flops += op.getFlops();
  });
  return flops;
}

/// --mw-chunk-loss with 8 chunks and a tied weight's gradient deferred (where
/// that lowers the peak), on a copy: its planned peak and its extra FLOPs.
Suggestion predictChunkLoss(ModuleOp module, StringRef function,
                            const FunctionReport &r, const Verdict &v) {
  auto func = module.lookupSymbol<FunctionOpInterface>(function);
  auto losses = [](FunctionOpInterface f, bool chunked) {
    int64_t n = 0;
    f.getFunctionBody().walk([&](Operation *op) {
      std::optional<uint64_t> offset;
      if (auto g = dyn_cast<CrossEntropyGradOp>(op))
        offset = g.getLabelOffset();
      else if (auto ce = dyn_cast<CrossEntropyOp>(op))
        offset = ce.getLabelOffset();
      else
        return;
      n += offset.has_value() == chunked;
    });
    return n;
  };
  if (losses(func, /*chunked=*/true))
    return unavailable("chunk-loss", "the step's loss is already computed in "
                                     "chunks (--mw-chunk-loss)");
  if (!losses(func, /*chunked=*/false))
    return unavailable("chunk-loss", "the step has no cross-entropy loss");
  MwChunkLossOptions options;
  options.deferWeightGrad = true;
  Suggestion s;
  s.kind = "chunk-loss";
  s.basis = "measured";
  CapturedErrors errors(module.getContext());
  OwningOpRef<ModuleOp> copy = runOnCopy(module, createMwChunkLoss(options));
  if (!copy)
    return unavailable("chunk-loss", "--mw-chunk-loss failed: " + errors.first);
  auto chunkedStep = copy->lookupSymbol<FunctionOpInterface>(function);
  if (!losses(chunkedStep, /*chunked=*/true))
    return unavailable("chunk-loss",
                       "--mw-chunk-loss leaves the step's loss whole "
                       "(--mw-chunk-loss=report=true says why: in chunks its "
                       "live tensor peak would be higher, or the head cannot "
                       "be split)");
  bool deferred = false;
  chunkedStep.getFunctionBody().walk([&](CrossEntropyGradOp g) {
    deferred |= g->hasAttr("mw.recompute") && g.getLabelOffset().has_value();
  });
  s.extraFlops = std::max<int64_t>(0, tensorFlops(chunkedStep) - r.flops);
  FailureOr<PlannedStep> p = planAndMeasure(*copy, function, errors);
  if (failed(p))
    return unavailable("chunk-loss",
                       "planning the chunked step failed: " + errors.first);
  s.change = deferred ? "--mw-chunk-loss=\"chunks=8 defer-weight-grad=true\""
                      : "--mw-chunk-loss=chunks=8";
  setMeasuredPeak(s, *p, v);
  s.extraFlopsFraction = r.flops ? double(s.extraFlops) / double(r.flops) : 0;
  s.note = "the LM head's logits 8 chunks of rows at a time; the loss and the "
           "head's weight gradient sum over the rows in another order";
  if (deferred)
    s.note += "; the tied weight's gradient is made where the embedding's "
              "is, each chunk's logits made again";
  return s;
}

/// Gradient accumulation over K micro-batches, estimated: the saved
/// activations and the attention scratch scale with the micro-batch, and the
/// accumulated gradients stay live across the micro-batches.
Suggestion estimateGradAccum(FunctionOpInterface func, const FunctionReport &r,
                             const Verdict &v) {
  std::optional<int64_t> batch = stepBatch(func);
  if (!batch || *batch < 2)
    return unavailable("grad-accum",
                       "the step's batch (dimension 0 of its inputs) does not "
                       "split into micro-batches");
  if (r.savedActivationBytes == 0)
    return unavailable("grad-accum", "the step saves no activations");
  // mw-models takes the global batch; a ZeRO step's inputs are one rank's.
  int64_t global = *batch * (r.zero ? r.zero->ranks : 1);
  Suggestion s;
  s.kind = "grad-accum";
  s.basis = "estimate";
  for (int64_t k = 2; k <= *batch; k *= 2) {
    if (*batch % k != 0)
      break;
    int64_t saved = r.savedActivationBytes;
    s.peakBytes = v.peakBytes() - saved + (saved + k - 1) / k + r.gradBytes;
    s.requiredBytes = s.peakBytes + v.overhead.cublasWorkspaceBytes +
                      (v.overhead.attentionScratchBytes + k - 1) / k;
    s.fits = s.requiredBytes <= v.device.memoryBytes;
    s.change = llvm::formatv("--mw-autodiff grad-accum={0} on a forward of "
                             "micro-batch {1}{2} (mw-models --batch {3} "
                             "--grad-accum {0})",
                             k, *batch / k, r.zero ? " per rank" : "", global)
                   .str();
    s.note = llvm::formatv("the saved activations ({0}) and the attention "
                           "scratch scale with the micro-batch; the "
                           "accumulated gradients ({1}) stay live; no extra "
                           "FLOPs, {2} smaller micro-batches in sequence",
                           formatDecimalBytes(saved),
                           formatDecimalBytes(r.gradBytes), k)
                 .str();
    if (s.fits)
      break;
  }
  return s;
}

/// A 16-bit compute precision, estimated: the f32 saved activations halve;
/// master weights, gradients and optimizer state stay f32.
Suggestion estimatePrecision(const FunctionReport &r, const Verdict &v) {
  StringRef precision = v.device.hasBf16 ? "bf16" : "fp16";
  const auto *byType = r.bytesByDtype.find("saved_activation");
  int64_t f32 = 0;
  bool sixteen = false;
  if (byType != r.bytesByDtype.end())
    for (auto &[dtype, bytes] : byType->second) {
      if (dtype == "f32")
        f32 += bytes;
      sixteen |= dtype == "bf16" || dtype == "f16";
    }
  if (sixteen)
    return unavailable("precision", "the step already computes in 16 bits");
  if (f32 == 0)
    return unavailable("precision", "the step saves no f32 activations");
  Suggestion s;
  s.kind = "precision";
  s.basis = "estimate";
  s.change = ("--mw-autodiff precision=" + precision + " on a " + precision +
              " forward (mw-models --precision " + precision + ")")
                 .str();
  // The forward's 16-bit copies of the f32 weights: the backward pass reads
  // them (a product's gradient needs its weight), so they are saved too.
  int64_t weights = 0;
  if (const auto *params = r.bytesByDtype.find("param");
      params != r.bytesByDtype.end())
    if (auto it = params->second.find("f32"); it != params->second.end())
      weights = it->second;
  s.peakBytes = v.peakBytes() - f32 / 2 + weights / 2;
  s.note = "the f32 saved activations (" + formatDecimalBytes(f32) +
           ") halve, and the backward pass keeps 16-bit copies of the "
           "weights (" +
           formatDecimalBytes(weights / 2) +
           "); master weights, gradients and optimizer state stay f32; "
           "changes the numerics";
  if (precision == "fp16")
    // The skip-on-overflow selects write the kept values back into the
    // parameters and states (--mw-form-kernels), so no second copy.
    s.note += "; dynamic loss scaling (" + v.device.target->name.str() +
              " has no bf16) skips overflowing steps in place";
  s.requiredBytes = s.peakBytes + v.overhead.total();
  s.fits = s.requiredBytes <= v.device.memoryBytes;
  return s;
}

/// --mw-zero at `stage` on `ranks` ranks, on a copy.
Suggestion predictZero(ModuleOp module, StringRef function, int64_t stage,
                       int64_t ranks, const Verdict &v) {
  mw::MwZeroOptions options;
  options.stage = stage;
  options.ranks = ranks;
  options.function = function.str();
  Suggestion s;
  s.kind = "zero";
  s.change = llvm::formatv("--mw-zero=\"stage={0} ranks={1}\"", stage, ranks)
                 .str();
  s.basis = "measured";
  CapturedErrors errors(module.getContext());
  OwningOpRef<ModuleOp> copy = runOnCopy(module, createMwZero(options));
  if (!copy)
    return unavailable("zero", s.change + " failed: " + errors.first);
  FailureOr<PlannedStep> p = planAndMeasure(*copy, function, errors);
  if (failed(p))
    return unavailable("zero", "planning the ZeRO step failed: " +
                                   errors.first);
  setMeasuredPeak(s, *p, v);
  if (p->zero)
    s.communicationBytes = static_cast<int64_t>(p->zero->total.ringBytes);
  s.note = llvm::formatv("per rank of {0}, each taking 1/{0} of the batch{1}",
                         ranks,
                         stage == 0 ? " (plain data parallel, nothing sharded)"
                                    : "")
               .str();
  return s;
}

/// --mw-offload for an inference step (no gradients, no optimizer state)
/// that does not fit: what --mw-offload=auto would choose, on a copy of the
/// step, and the step's required bytes with the streamed weights replaced by
/// the arena's weight slots.
Suggestion predictOffloadChange(FunctionOpInterface func, const Verdict &v) {
  const Device &d = v.device;
  // The device as the user named it: target=, device-memory= (d.name when
  // there is no target), or both.
  std::string where =
      !d.target ? d.name
      : d.target->memoryBytes == d.memoryBytes
          ? "target=" + d.target->name.str()
          : "target=" + d.target->name.str() + " device-memory=" +
                std::to_string(d.memoryBytes) + "B";
  auto step = dyn_cast<func::FuncOp>(func.getOperation());
  if (!step)
    return unavailable("offload", "the step is not a func.func");
  OffloadAutoOptions o;
  if (d.target)
    o.target = d.target->name.str();
  o.deviceMemory = std::to_string(d.memoryBytes) + "B";
  o.weights = "cpu";
  auto copy = cast<func::FuncOp>(step->clone());
  FailureOr<OffloadPrediction> p = failure();
  std::string why;
  {
    CapturedErrors errors(step.getContext());
    p = predictOffload(copy, o, /*table=*/nullptr);
    why = errors.first;
  }
  copy->erase();
  if (failed(p))
    return unavailable("offload", why);
  Suggestion s;
  s.kind = "offload";
  s.change = "--mw-offload=\"auto " + where + "\"";
  s.basis = "predicted: the offload model (docs/offload.md)";
  s.requiredBytes = v.requiredBytes() - p->streamedBytes + p->slotBytes;
  s.peakBytes = s.requiredBytes - v.overhead.total();
  s.fits = s.requiredBytes <= d.memoryBytes;
  s.note = llvm::formatv("auto chooses pinned-layers={0} prefetch={1} of {2} "
                         "layers ({3} streamed, {4} of slots); at batch {5} "
                         "(mw-models --max-batch) it predicts {6:f2} tokens/s "
                         "for prompts of {7} + {8} generated tokens",
                         p->decision.pinnedLayers, p->decision.prefetch,
                         p->layers, formatBothBytes(p->streamedBytes),
                         formatBothBytes(p->slotBytes), p->decision.batch,
                         p->tokensPerSecond, p->promptTokens,
                         p->generateTokens)
               .str();
  return s;
}

/// The verdict on `func` (report `r`) for `device`; failure after a
/// diagnostic.
FailureOr<Verdict> judge(ModuleOp module, FunctionOpInterface func,
                         const FunctionReport &r, const Device &device,
                         int64_t ranks) {
  Verdict v;
  v.function = r.name;
  v.device = device;
  v.overhead = computeRuntimeOverhead(func);
  bool tensorLevel = !isBufferized(func);
  if (r.planned) {
    v.peakSource = "planned";
    v.arenaBytes = r.arenaBytes;
    v.persistentBytes = r.persistentBytes;
  } else {
    OwningOpRef<ModuleOp> copy(cast<ModuleOp>(module->clone()));
    FailureOr<PlannedStep> p = failure();
    std::string why;
    {
      CapturedErrors errors(module.getContext());
      p = planAndMeasure(*copy, r.name, errors);
      why = errors.first;
    }
    // Emitted once the nested pipeline's handler is gone.
    if (failed(p))
      return func.emitError() << "mw-memory-report: planning a copy of @"
                              << r.name << " for the verdict failed: " << why;
    v.peakSource = tensorLevel ? "measured: --mw-train-pipeline on a copy"
                               : "measured: --mw-static-arena on a copy";
    v.arenaBytes = p->arena;
    v.persistentBytes = p->persistent;
  }
  if (v.fits())
    return v;
  if (!tensorLevel) {
    v.suggestions.push_back(unavailable(
        "all", "the step is bufferized; run the report on the step before "
               "--mw-train-pipeline (on tensors) to predict changes"));
    return v;
  }
  if (r.gradBytes == 0 && r.optimizerStateBytes == 0 && r.paramBytes > 0)
    v.suggestions.push_back(predictOffloadChange(func, v));
  v.suggestions.push_back(predictRemat(module, r.name, r, v));
  if (r.gradBytes > 0)
    v.suggestions.push_back(predictChunkLoss(module, r.name, r, v));
  v.suggestions.push_back(estimateGradAccum(func, r, v));
  v.suggestions.push_back(estimatePrecision(r, v));
  if (r.zero)
    v.suggestions.push_back(unavailable(
        "zero", llvm::formatv("the step is already ZeRO stage {0} on {1} "
                              "ranks; run the report on the step before "
                              "--mw-zero",
                              r.zero->stage, r.zero->ranks)));
  else if (ranks < 2)
    v.suggestions.push_back(unavailable(
        "zero", "ZeRO shards model states across data-parallel ranks; give "
                "ranks=N to predict stages 0-3"));
  else
    // Stage 0 (plain data parallel) too: its batch split alone may fit.
    for (int64_t stage = 0; stage <= 3; ++stage)
      v.suggestions.push_back(predictZero(module, r.name, stage, ranks, v));
  return v;
}

struct MwMemoryReportPass
    : public mw::impl::MwMemoryReportBase<MwMemoryReportPass> {
  using MwMemoryReportBase::MwMemoryReportBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (format != "text" && format != "json" && format != "html") {
      module.emitError() << "mw-memory-report: unknown format '" << format
                         << "' (expected text, json or html)";
      return signalPassFailure();
    }
    if (ranks < 1) {
      module.emitError() << "mw-memory-report: ranks=" << int64_t(ranks)
                         << " must be at least 1";
      return signalPassFailure();
    }
    std::optional<Device> device;
    if (!target.empty() || !deviceMemory.empty()) {
      FailureOr<Device> d = resolveDevice(module, target, deviceMemory);
      if (failed(d))
        return signalPassFailure();
      device = *d;
    }
    std::vector<FunctionReport> reports;
    SmallVector<FunctionOpInterface> funcs;
    for (auto func : module.getOps<FunctionOpInterface>()) {
      if (func.isExternal())
        continue;
      FailureOr<FunctionReport> r = analyze(func);
      if (failed(r))
        return signalPassFailure();
      reports.push_back(std::move(*r));
      funcs.push_back(func);
      ++numFunctionsReported;
    }
    std::optional<Verdict> verdict;
    if (device) {
      // The step named by `function`, else the module's only function.
      auto it = llvm::find_if(funcs, [&](FunctionOpInterface f) {
        return f.getName() == function;
      });
      if (it == funcs.end() && funcs.size() == 1)
        it = funcs.begin();
      if (it == funcs.end()) {
        module.emitError() << "mw-memory-report: no function @" << function
                           << " for the verdict; name the step with "
                              "function=NAME";
        return signalPassFailure();
      }
      FailureOr<Verdict> v = judge(module, *it, reports[it - funcs.begin()],
                                   *device, ranks);
      if (failed(v))
        return signalPassFailure();
      verdict = std::move(*v);
    }
    // writeToOutput goes through a temporary file and a rename, so a failed
    // run never leaves a half-written report behind.
    llvm::Error err =
        llvm::writeToOutput(output, [&](llvm::raw_ostream &os) -> llvm::Error {
          if (format == "json")
            printJson(os, reports, verdict);
          else if (format == "html")
            printHtml(os, reports, function, verdict);
          else {
            printText(os, reports);
            if (verdict)
              printVerdictText(os, *verdict);
          }
          return llvm::Error::success();
        });
    if (err) {
      // The error text starts with the path already.
      std::string why = llvm::toString(std::move(err));
      StringRef reason(why);
      reason.consume_front("'" + output + "': ");
      module.emitError() << "mw-memory-report: cannot write '" << output
                         << "': " << reason;
      return signalPassFailure();
    }
  }
};
} // namespace
