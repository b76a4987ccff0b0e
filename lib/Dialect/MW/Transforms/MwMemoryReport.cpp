//===- MwMemoryReport.cpp - --mw-memory-report ----------------------------===//
//
// Reports, per function, where a step's memory goes: bytes per role of the
// arguments and results, the parameter count, the op count, FLOPs and bytes
// moved (CostOpInterface), the activation bytes a naive execution keeps, and
// the saved activations by the same definition --mw-remat plans with
// (memwall/Analysis/StepStructure.h).
// The JSON form is a stable interface: keys are only ever added.
//
//===----------------------------------------------------------------------===//

#include "ZeroReport.h"

#include "memwall/Analysis/BufferLiveness.h"
#include "memwall/Analysis/StepStructure.h"
#include "memwall/Dialect/MW/IR/MWOps.h"
#include "memwall/Dialect/MW/Transforms/Passes.h"
#include "memwall/Planning/Packer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

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

  /// What one rank of a ZeRO step holds and sends (ZeroReport.h).
  std::optional<ZeroReport> zero;
};

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
  if (auto kernel = dyn_cast<KernelOp>(op))
    if (Operation *body = kernel.getSingleOp())
      return body->getName().getStringRef().str();
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

/// The saved activations of the step (StepStructure.h: the forward values
/// the backward pass and the optimizer read, the rule --mw-remat plans with).
void countSavedActivations(FunctionOpInterface func, FunctionReport &r) {
  StepStructure step(func);
  for (Value v : step.saved) {
    int64_t bytes = mw::detail::tensorBytes(v.getType());
    r.savedActivationBytes += bytes;
    r.bytesByDtype["saved_activation"][dtypeName(v.getType())] += bytes;
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
    if (auto kernel = dyn_cast<KernelOp>(op)) {
      r.flops += kernel.getFlops();
      r.bytesRead += kernel.getBytesRead();
      r.bytesWritten += kernel.getBytesWritten();
      return WalkResult::advance();
    }
    bool inKernel = isa_and_nonnull<KernelOp>(op->getParentOp());
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
  return r;
}

/// "1.5 MiB" for people; exact byte counts stay in the JSON.
std::string humanBytes(int64_t bytes) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  if (u == 0)
    return llvm::formatv("{0} B", bytes).str();
  return llvm::formatv("{0:F2} {1}", v, units[u]).str();
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
  // One "label  exact (human)" line per byte figure.
  auto bytesLine = [&](StringRef label, int64_t bytes) {
    os << llvm::formatv("  {0,-24}{1} ({2})\n", label, bytes,
                        humanBytes(bytes));
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
                              humanBytes(b));
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
        os << " " << dtype << " " << humanBytes(bytes);
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
        os << " " << layer << " " << humanBytes(bytes) << ";";
      os << "\n";
    }
    if (r.zero)
      printZeroText(os, *r.zero);
    if (r.naiveBytes == 0 && !r.planned)
      continue;
    os << llvm::formatv("  {0,-24}{1} ({2}){3}\n", "arena", r.arenaBytes,
                        humanBytes(r.arenaBytes),
                        r.planned ? "" : ", not planned");
    bytesLine("lower bound", r.lowerBoundBytes);
    bytesLine("no reuse", r.naiveBytes);
    bytesLine("persistent", r.persistentBytes);
    if (r.peakPosition < 0)
      continue;
    os << llvm::formatv("  peak: {0} live at op {1} ({2}), largest first:\n",
                        humanBytes(r.peakBytes), r.peakPosition, r.peakOp);
    for (const auto &b : r.peakBuffers)
      os << llvm::formatv("    {0,-20} {1,12}  {2}  {3}\n", b.name,
                          humanBytes(b.bytes), b.op, b.loc);
  }
}

void printJson(llvm::raw_ostream &os, ArrayRef<FunctionReport> reports) {
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
          if (r.zero)
            printZeroJson(j, *r.zero);
        });
      }
    });
  });
  os << "\n";
}

struct MwMemoryReportPass
    : public mw::impl::MwMemoryReportBase<MwMemoryReportPass> {
  using MwMemoryReportBase::MwMemoryReportBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (format != "text" && format != "json") {
      module.emitError() << "mw-memory-report: unknown format '" << format
                         << "' (expected text or json)";
      return signalPassFailure();
    }
    std::vector<FunctionReport> reports;
    for (auto func : module.getOps<FunctionOpInterface>()) {
      if (func.isExternal())
        continue;
      FailureOr<FunctionReport> r = analyze(func);
      if (failed(r))
        return signalPassFailure();
      reports.push_back(std::move(*r));
      ++numFunctionsReported;
    }
    // writeToOutput goes through a temporary file and a rename, so a failed
    // run never leaves a half-written report behind.
    llvm::Error err =
        llvm::writeToOutput(output, [&](llvm::raw_ostream &os) -> llvm::Error {
          if (format == "json")
            printJson(os, reports);
          else
            printText(os, reports);
          return llvm::Error::success();
        });
    if (err) {
      module.emitError() << "mw-memory-report: cannot write '" << output
                         << "': " << llvm::toString(std::move(err));
      return signalPassFailure();
    }
  }
};
} // namespace
