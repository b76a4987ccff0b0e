//===- ZeroReport.cpp - The per-rank section of --mw-memory-report --------===//
//
// Reads a ZeRO step as --mw-zero leaves it: the rank count from mw.shard (or
// the mesh), the stage from the program (see inferStage), model-state bytes
// per rank from the arguments and the collectives' gradient buckets, and
// communication from the mesh collectives. Every figure is per rank; the
// program is rank-generic, so every rank allocates the same bytes.
//
//===----------------------------------------------------------------------===//

#include "ZeroReport.h"

#include "memwall/Analysis/BufferLiveness.h"
#include "memwall/Dialect/MW/IR/MWOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Mesh/IR/MeshOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::mw;

void ZeroReport::Comm::add(const Comm &o) {
  count += o.count;
  elements += o.elements;
  bytes += o.bytes;
  paperElements += o.paperElements;
  paperBytes += o.paperBytes;
  ringElements += o.ringElements;
  ringBytes += o.ringBytes;
}

namespace {

int64_t numElementsOf(Type t) { return cast<ShapedType>(t).getNumElements(); }

/// Bytes of one element of a shaped type.
int64_t elementBytes(Type t) {
  int64_t n = numElementsOf(t);
  return n ? mw::detail::tensorBytes(t) / n : 0;
}

DictionaryAttr shardOf(FunctionOpInterface func, unsigned arg) {
  return func.getArgAttrOfType<DictionaryAttr>(arg, MWDialect::kShardAttrName);
}

int64_t shardElements(DictionaryAttr shard) {
  int64_t total = 0;
  if (auto sizes = shard.getAs<DenseI64ArrayAttr>("sizes"))
    for (int64_t s : sizes.asArrayRef())
      total += s;
  return total;
}

std::optional<Role> roleOf(DictionaryAttr attrs) {
  if (attrs)
    if (auto role = attrs.getAs<RoleAttr>(MWDialect::kRoleAttrName))
      return role.getValue();
  return std::nullopt;
}

bool isCollective(Operation *op) {
  return isa<mesh::AllReduceOp, mesh::ReduceScatterOp, mesh::AllGatherOp,
             mesh::AllSliceOp>(op);
}

/// Whether `v` reaches a returned value of role `output` through waits and
/// scalings: the loss's reduction, not a gradient's.
bool reachesOutput(FunctionOpInterface func, Value v) {
  SmallVector<Value> work{v};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    for (OpOperand &use : x.getUses()) {
      Operation *user = use.getOwner();
      if (isa<func::ReturnOp>(user)) {
        if (roleOf(func.getResultAttrDict(use.getOperandNumber())) ==
            Role::output)
          return true;
      } else if (isa<WaitOp, MulOp, DivOp>(user)) {
        work.append(user->result_begin(), user->result_end());
      }
    }
  }
  return false;
}

/// The bucket a gradient collective reduces, under the division by the rank
/// count that --mw-zero puts before reductions in the compute type
/// (master-weights=optimizer): `mw.mul %bucket, %splat`.
Value bucketOf(Value input) {
  if (auto mul = input.getDefiningOp<MulOp>())
    if (mul.getRhs().getDefiningOp<SplatOp>())
      return mul.getLhs();
  return input;
}

/// The logical elements of the bucket a reduce-scatter reduces: the
/// mw.shard sizes of the state or parameter piece its update takes, else
/// the input less a trailing zero-splat padding, else the whole input.
int64_t bucketElements(FunctionOpInterface func, mesh::ReduceScatterOp rs) {
  SmallVector<Value> work{rs.getResult()};
  while (!work.empty()) {
    Value x = work.pop_back_val();
    for (OpOperand &use : x.getUses()) {
      Operation *user = use.getOwner();
      if (isa<WaitOp, MulOp, DivOp, CastOp>(user)) {
        work.append(user->result_begin(), user->result_end());
        continue;
      }
      if (!isa<AdamWOp, SgdOp>(user) || use.getOperandNumber() != 1)
        continue;
      for (Value operand : user->getOperands())
        if (auto arg = dyn_cast<BlockArgument>(operand))
          if (arg.getOwner()->isEntryBlock() &&
              arg.getParentRegion() == &func.getFunctionBody())
            if (DictionaryAttr shard = shardOf(func, arg.getArgNumber()))
              return shardElements(shard);
    }
  }
  int64_t total = numElementsOf(rs.getInput().getType());
  if (auto concat = bucketOf(rs.getInput()).getDefiningOp<ConcatOp>())
    if (auto pad = concat.getInputs().back().getDefiningOp<SplatOp>())
      return total - numElementsOf(pad.getType());
  return total;
}

/// The ops that flatten a bucket (--mw-zero's reshapes, concatenation and
/// zero padding) and the gradients they flatten.
void flattenTree(Value v, llvm::DenseSet<Operation *> &flatten,
                 SmallVectorImpl<Value> &leaves) {
  Operation *def = v.getDefiningOp();
  if (def && isa<ConcatOp>(def)) {
    flatten.insert(def);
    for (Value in : def->getOperands())
      flattenTree(in, flatten, leaves);
    return;
  }
  if (def && isa<ReshapeOp>(def) &&
      cast<ShapedType>(v.getType()).getRank() == 1) {
    flatten.insert(def);
    leaves.push_back(def->getOperand(0));
    return;
  }
  if (def && isa<SplatOp>(def)) {
    flatten.insert(def); // the padding
    return;
  }
  leaves.push_back(v);
}

/// The stage: the function's `mw.zero.stage` when present, else inferred
/// from the program (docs/zero.md, "The per-rank report"):
///  - 3 when a `param` argument is a piece (mw.shard);
///  - 1 or 2 when gradients are reduce-scattered: 2 when some reduce-scatter
///    starts right after its bucket's last gradient (only the bucket's
///    flattening between them), 1 when every one waits for later ops (the
///    end of the backward pass, the optimizer's step count);
///  - 0 otherwise (all-reduced gradients, whole state).
int64_t inferStage(FunctionOpInterface func, ArrayRef<Operation *> order,
                   const llvm::DenseMap<Operation *, int64_t> &position,
                   std::string &source) {
  if (auto a = func->getAttrOfType<IntegerAttr>("mw.zero.stage")) {
    source = "attribute";
    return a.getInt();
  }
  source = "inferred";
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (roleOf(func.getArgAttrDict(i)) == Role::param && shardOf(func, i))
      return 3;
  bool scatters = false;
  for (Operation *op : order) {
    auto rs = dyn_cast<mesh::ReduceScatterOp>(op);
    if (!rs)
      continue;
    scatters = true;
    llvm::DenseSet<Operation *> flatten;
    SmallVector<Value> leaves;
    Value bucket = bucketOf(rs.getInput());
    if (bucket != rs.getInput()) {
      flatten.insert(rs.getInput().getDefiningOp());
      flatten.insert(rs.getInput().getDefiningOp()->getOperand(1)
                         .getDefiningOp());
    }
    flattenTree(bucket, flatten, leaves);
    int64_t last = -1;
    for (Value g : leaves)
      if (Operation *def = g.getDefiningOp())
        last = std::max(last, position.lookup(def));
    bool eager = true;
    for (int64_t p = last + 1; p < position.lookup(op); ++p)
      eager &= flatten.contains(order[p]);
    if (eager)
      return 2;
  }
  return scatters ? 1 : 0;
}

std::string coefficient(int64_t c) { return llvm::formatv("{0}", c).str(); }

/// The bytes per rank of ZeRO's model states for `stage`: parameters `a`,
/// gradients `g` and optimizer state `k` bytes per parameter.
ZeroReport::Formula makeFormula(StringRef name, int64_t a, int64_t g,
                                int64_t k, int64_t stage, int64_t n,
                                int64_t psi) {
  ZeroReport::Formula f;
  f.name = name.str();
  f.paramBytes = a;
  f.gradBytes = g;
  f.stateBytes = k;
  double p = static_cast<double>(psi), dn = static_cast<double>(n);
  switch (stage) {
  case 0:
    f.expression = coefficient(a + g + k) + "Ψ";
    f.bytes = (a + g + k) * p;
    break;
  case 1:
    f.expression = coefficient(a + g) + "Ψ + " + coefficient(k) + "Ψ/N";
    f.bytes = (a + g) * p + k * p / dn;
    break;
  case 2:
    f.expression = coefficient(a) + "Ψ + " + coefficient(g + k) + "Ψ/N";
    f.bytes = a * p + (g + k) * p / dn;
    break;
  default:
    f.expression = coefficient(a + g + k) + "Ψ/N";
    f.bytes = (a + g + k) * p / dn;
    break;
  }
  return f;
}

/// The top-level op `op` is nested in, within `block`.
Operation *topLevel(Operation *op, Block *block) {
  while (op && op->getBlock() != block)
    op = op->getParentOp();
  return op;
}

/// Whether `op` writes `v` (a destination operand, or a write effect).
bool writes(Operation *op, OpOperand &use) {
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
    return dps.isDpsInit(&use);
  if (auto effects = dyn_cast<MemoryEffectOpInterface>(op))
    return effects.getEffectOnValue<MemoryEffects::Write>(use.get())
        .has_value();
  return false;
}

/// The collective an op is (itself, or the single op of a kernel).
Operation *collectiveOf(Operation *op) {
  if (isCollective(op))
    return op;
  if (auto kernel = dyn_cast<KernelOp>(op))
    if (Operation *body = kernel.getSingleOp())
      if (isCollective(body))
        return body;
  return nullptr;
}

bool isWait(Operation *op) {
  if (isa<WaitOp>(op))
    return true;
  if (auto kernel = dyn_cast<KernelOp>(op))
    return isa_and_nonnull<WaitOp>(kernel.getSingleOp());
  return false;
}

/// The arena split by kind, from the views of a planned function's arena
/// (classifyZeroBuffer for each).
void analyzeArena(FunctionOpInterface func, int64_t peakPosition,
                  ZeroReport &z) {
  z.bytesByKind.clear();
  for (StringRef kind : {"activations", "gradient_buckets",
                         "gathered_parameters", "collectives_in_flight"}) {
    z.bytesByKind[kind] = 0;
    z.peakBytesByKind[kind] = 0;
  }
  Block &entry = func.getFunctionBody().front();
  Value arena;
  for (BlockArgument arg : entry.getArguments())
    if (func.getArgAttr(arg.getArgNumber(), "mw.arena"))
      arena = arg;
  for (Operation &op : entry)
    if (!arena && isa<memref::AllocOp>(op) && op.hasAttr("mw.arena"))
      arena = op.getResult(0);
  if (!arena)
    return;
  SmallVector<Value> views;
  for (Operation *user : arena.getUsers())
    if (auto view = dyn_cast<memref::ViewOp>(user))
      views.push_back(view.getResult());
  BufferLiveness live(func, views);
  for (const LiveBuffer &b : live.getBuffers()) {
    if (!b.isTransient() || b.sizeInBytes == 0)
      continue;
    ZeroBufferKind k = classifyZeroBuffer(b, live, entry);
    int64_t bytes = static_cast<int64_t>(b.sizeInBytes);
    z.bytesByKind[k.kind] += bytes;
    if (b.start > peakPosition || peakPosition >= b.end)
      continue;
    StringRef atPeak = k.kind;
    if (k.flightStart >= 0 && k.flightEnd >= 0 &&
        k.flightStart <= peakPosition && peakPosition < k.flightEnd)
      atPeak = "collectives_in_flight";
    z.peakBytesByKind[atPeak] += bytes;
    z.peakBytes += bytes;
    z.peakBuffers.push_back({b.name, atPeak.str(), bytes});
  }
  std::stable_sort(
      z.peakBuffers.begin(), z.peakBuffers.end(),
      [](const auto &x, const auto &y) { return x.bytes > y.bytes; });
}

} // namespace

/// A buffer a collective writes is a gradient bucket (all_reduce,
/// reduce_scatter) or gathered parameters (all_gather, all_slice), and
/// while its collective has not been waited for it is a collective in
/// flight; a buffer a gradient collective reads is a gradient bucket;
/// everything else is activations and workspace.
ZeroBufferKind mlir::mw::classifyZeroBuffer(const LiveBuffer &b,
                                            const BufferLiveness &live,
                                            Block &entry) {
  ZeroBufferKind k;
  SmallVector<Value> work{b.value};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (isa<ViewLikeOpInterface>(user)) {
        work.append(user->result_begin(), user->result_end());
        continue;
      }
      Operation *top = topLevel(user, &entry);
      int64_t at = top ? live.getPosition(top) : -1;
      if (Operation *c = collectiveOf(user)) {
        bool gradient = isa<mesh::AllReduceOp, mesh::ReduceScatterOp>(c);
        if (writes(user, use)) {
          k.kind = gradient ? "gradient_buckets" : "gathered_parameters";
          k.flightStart = at;
        } else if (gradient && k.kind == "activations") {
          k.kind = "gradient_buckets";
        }
      } else if (isWait(user) && k.flightStart >= 0 && at > k.flightStart) {
        k.flightEnd = k.flightEnd < 0 ? at : std::min(k.flightEnd, at);
      }
    }
  }
  return k;
}

std::optional<ZeroReport>
mlir::mw::analyzeZero(FunctionOpInterface func, bool planned,
                      int64_t peakPosition) {
  if (!func.getFunctionBody().hasOneBlock())
    return std::nullopt;
  Block &body = func.getFunctionBody().front();
  SmallVector<Operation *> order;
  llvm::DenseMap<Operation *, int64_t> position;
  SmallVector<Operation *> collectives;
  for (Operation &op : body) {
    position[&op] = order.size();
    order.push_back(&op);
  }
  func.getFunctionBody().walk([&](Operation *op) {
    if (isCollective(op))
      collectives.push_back(op);
  });
  if (collectives.empty())
    return std::nullopt;

  ZeroReport z;
  // The rank count: the pieces' mw.shard, else the collectives' mesh.
  z.ranks = 0;
  for (unsigned i = 0; i < func.getNumArguments() && !z.ranks; ++i)
    if (DictionaryAttr shard = shardOf(func, i))
      if (auto r = shard.getAs<IntegerAttr>("ranks"))
        z.ranks = r.getInt();
  if (!z.ranks) {
    auto meshAttr = collectives.front()->getAttrOfType<FlatSymbolRefAttr>(
        "mesh");
    auto mesh = meshAttr ? SymbolTable::lookupNearestSymbolFrom<mesh::MeshOp>(
                               func, meshAttr)
                         : mesh::MeshOp();
    z.ranks = 1;
    if (mesh)
      for (int64_t d : mesh.getShape())
        z.ranks *= d;
  }
  z.stage = inferStage(func, order, position, z.stageSource);
  auto offloadBytes = [&](StringRef name) -> int64_t {
    auto a = func->getAttrOfType<IntegerAttr>(name);
    return a ? a.getInt() : 0;
  };
  z.offloadParamHostBytes = offloadBytes("mw.zero.offload_param_host_bytes");
  z.offloadOptimizerHostBytes =
      offloadBytes("mw.zero.offload_optimizer_host_bytes");
  z.offloadNvmeBytes = offloadBytes("mw.zero.offload_nvme_bytes");
  z.offloadBufferBytes = offloadBytes("mw.zero.offload_buffer_bytes");
  double n = static_cast<double>(z.ranks);

  // Parameters and optimizer state: the arguments, whole or pieces.
  int64_t paramElemBytes = 0;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    std::optional<Role> role = roleOf(func.getArgAttrDict(i));
    Type type = func.getArgumentTypes()[i];
    if (!role || !isa<ShapedType>(type))
      continue;
    int64_t bytes = mw::detail::tensorBytes(type);
    DictionaryAttr shard = shardOf(func, i);
    double logical =
        shard ? shardElements(shard) * elementBytes(type) / n : double(bytes);
    auto add = [&](ZeroReport::State &s) {
      s.bytes += bytes;
      s.logicalBytes += logical;
      (shard ? s.pieceBytes : s.wholeBytes) += bytes;
    };
    if (*role == Role::param) {
      add(z.param);
      z.psi += shard ? shardElements(shard) : numElementsOf(type);
      paramElemBytes = std::max(paramElemBytes, elementBytes(type));
    } else if (*role == Role::optimizer_state) {
      if (isa<IntegerType>(cast<ShapedType>(type).getElementType()))
        z.counterBytes += bytes;
      else
        add(z.optimizerState);
    }
  }

  // Gradients and communication: the collectives.
  for (StringRef kind :
       {"all_reduce", "reduce_scatter", "all_gather", "all_slice"})
    z.byKind[kind] = {};
  int64_t gradElemBytes = 0;
  for (Operation *op : collectives) {
    ZeroReport::Comm c;
    c.count = 1;
    StringRef kind;
    Type elemType;
    bool isOutput = false;
    bool isControl = false;
    if (auto ar = dyn_cast<mesh::AllReduceOp>(op)) {
      kind = "all_reduce";
      elemType = ar.getInput().getType();
      c.elements = numElementsOf(elemType);
      c.paperElements = 2 * c.elements;
      isControl = ar.getReduction() != mesh::ReductionKind::Sum;
      isOutput = !isControl && reachesOutput(func, ar.getResult());
      if (!isOutput && !isControl) {
        int64_t bytes = mw::detail::tensorBytes(elemType);
        z.grad.bytes += bytes;
        z.grad.wholeBytes += bytes;
        z.grad.logicalBytes += bytes;
        gradElemBytes = std::max(gradElemBytes, elementBytes(elemType));
      }
    } else if (auto rs = dyn_cast<mesh::ReduceScatterOp>(op)) {
      kind = "reduce_scatter";
      elemType = rs.getInput().getType();
      c.elements = numElementsOf(elemType);
      c.paperElements = c.elements;
      int64_t e = elementBytes(elemType);
      gradElemBytes = std::max(gradElemBytes, e);
      int64_t logicalElements = bucketElements(func, rs);
      // Stages 0-1 hold the whole (padded) bucket until the update; 2-3
      // hold only their reduced piece.
      if (z.stage <= 1) {
        int64_t bytes = mw::detail::tensorBytes(elemType);
        z.grad.bytes += bytes;
        z.grad.wholeBytes += bytes;
        z.grad.logicalBytes += logicalElements * e;
      } else {
        int64_t bytes = mw::detail::tensorBytes(rs.getResult().getType());
        z.grad.bytes += bytes;
        z.grad.pieceBytes += bytes;
        z.grad.logicalBytes += logicalElements * e / n;
      }
    } else if (auto ag = dyn_cast<mesh::AllGatherOp>(op)) {
      kind = "all_gather";
      elemType = ag.getResult().getType();
      c.elements = numElementsOf(elemType);
      c.paperElements = c.elements;
    } else {
      kind = "all_slice";
      elemType = op->getResult(0).getType();
    }
    int64_t e = elementBytes(elemType);
    c.bytes = c.elements * e;
    c.paperBytes = c.paperElements * e;
    c.ringElements = c.paperElements * (n - 1) / n;
    c.ringBytes = c.ringElements * e;
    if (isOutput || isControl) {
      (isOutput ? z.outputs : z.control).add(c);
      continue;
    }
    z.byKind[kind].add(c);
    z.total.add(c);
  }
  z.paperVolumeElements = (z.stage == 3 ? 3 : 2) * z.psi;
  z.paperVolumeExpression = z.stage == 3 ? "3Ψ" : "2Ψ";

  // The formula: the case the step's persistent state is in. An update of
  // an optimizer_state argument updates an f32 master beside
  // half-precision parameters (--mw-autodiff's master-weights=optimizer):
  // its bytes per parameter belong to the optimizer state.
  bool adam = false, sgdMomentum = false, sgd = false;
  int64_t masterBytes = 0, updatedBytes = 0;
  func.getFunctionBody().walk([&](Operation *op) {
    adam |= isa<AdamWOp>(op);
    if (auto s = dyn_cast<SgdOp>(op)) {
      sgd = true;
      sgdMomentum |= s->getNumOperands() > 2;
    }
    if (isa<AdamWOp, SgdOp>(op)) {
      Value w = op->getOperand(0);
      updatedBytes = std::max(updatedBytes, elementBytes(w.getType()));
      if (auto arg = dyn_cast<BlockArgument>(w))
        if (arg.getOwner()->isEntryBlock() &&
            arg.getParentRegion() == &func.getFunctionBody() &&
            roleOf(func.getArgAttrDict(arg.getArgNumber())) ==
                Role::optimizer_state)
          masterBytes = std::max(masterBytes, elementBytes(w.getType()));
    }
    if (auto c = dyn_cast<CastOp>(op)) {
      Type to = c.getResult().getType().getElementType();
      z.computesIn16Bit |= to.isBF16() || to.isF16();
    }
  });
  int64_t a = paramElemBytes ? paramElemBytes : 4;
  int64_t g = gradElemBytes ? gradElemBytes : a;
  std::string precision = a == 4 ? "fp32" : llvm::formatv("{0}-byte", a).str();
  std::string why =
      "the step's persistent parameters are " + std::to_string(a) +
      "-byte floats and its gradients " + std::to_string(g) + "-byte";
  if (z.computesIn16Bit && a == 4)
    why += "; the step computes in 16 bits but keeps f32 master weights as "
           "its parameters and casts them at their uses (docs/training.md), "
           "so the paper's mixed-precision accounting (2-byte parameters "
           "and gradients) does not describe it";
  // The optimizer's buffers are in the updated value's type (the master's
  // with one, else the parameters').
  int64_t m = updatedBytes ? updatedBytes : a;
  std::string masters;
  if (masterBytes) {
    why += ", and its " + std::to_string(masterBytes) +
           "-byte master weights are optimizer state (master-weights="
           "optimizer, docs/training.md), as in the paper's mixed-precision "
           "accounting";
    masters = " with " + std::to_string(masterBytes) +
              "-byte masters in the optimizer state";
  }
  if (adam) {
    z.optimizer = "adamw";
    z.formula = makeFormula(precision + " Adam" + masters, a, g, masterBytes + 2 * m,
                            z.stage, z.ranks, z.psi);
    z.paperMixed = makeFormula("mixed-precision Adam (ZeRO paper)", 2, 2, 12,
                               z.stage, z.ranks, z.psi);
    z.paperMixed->why = "K = 12: fp32 master weights, momentum and variance "
                        "beside fp16 parameters and gradients";
  } else if (sgd) {
    z.optimizer = sgdMomentum ? "sgd-momentum" : "sgd";
    z.formula = makeFormula(precision +
                                (sgdMomentum ? " SGD with momentum" : " SGD") +
                                masters,
                            a, g, masterBytes + (sgdMomentum ? m : 0),
                            z.stage, z.ranks, z.psi);
  } else {
    z.optimizer = "none";
    z.formula = makeFormula(precision + " without optimizer state" + masters,
                            a, g,
                            masterBytes, z.stage, z.ranks, z.psi);
  }
  z.formula.why = why;

  z.arenaAvailable = planned;
  if (planned)
    analyzeArena(func, peakPosition, z);
  else
    z.arenaNote = "the step is not bufferized and planned: run "
                  "--mw-train-pipeline for the arena by kind and the "
                  "per-rank peak";
  return z;
}

namespace {
double ratio(double measured, double formula) {
  return formula ? measured / formula : 0.0;
}
} // namespace

void mlir::mw::printZeroText(llvm::raw_ostream &os, const ZeroReport &z) {
  os << llvm::formatv("  per rank: ZeRO stage {0} ({1}), {2} ranks, Ψ = {3} "
                      "parameters\n",
                      z.stage, z.stageSource, z.ranks, z.psi);
  auto state = [&](StringRef label, const ZeroReport::State &s) {
    os << llvm::formatv("    {0,-22}{1} B (whole {2} B, pieces {3} B, "
                        "padding {4} B)\n",
                        label, s.bytes, s.wholeBytes, s.pieceBytes,
                        s.paddingBytes());
  };
  state("parameters", z.param);
  state("gradients", z.grad);
  state("optimizer state", z.optimizerState);
  if (z.counterBytes)
    os << llvm::formatv("    {0,-22}{1} B (not a model state)\n",
                        "optimizer counters", z.counterBytes);
  os << llvm::formatv("    {0,-22}{1} B (padding {2} B)\n", "model states",
                      z.modelStateBytes(),
                      z.modelStateBytes() - z.modelStateLogicalBytes());
  auto formula = [&](StringRef title, const ZeroReport::Formula &f) {
    os << llvm::formatv("    {8} ({0}, {1} + {2} + {3} bytes per "
                        "parameter): {4} = {5} B; measured / formula = {6} "
                        "({7} without padding)\n",
                        f.name, f.paramBytes, f.gradBytes, f.stateBytes,
                        f.expression, f.bytes,
                        ratio(z.modelStateBytes(), f.bytes),
                        ratio(z.modelStateLogicalBytes(), f.bytes), title);
  };
  formula("formula", z.formula);
  os << "      compared because " << z.formula.why << "\n";
  if (z.paperMixed)
    formula("beside it", *z.paperMixed);
  os << "    communication per step (elements; paper's count; a ring's "
        "elements sent per rank):\n";
  auto comm = [&](StringRef label, const ZeroReport::Comm &c) {
    os << llvm::formatv("      {0,-16}{1} x, {2} elements ({3} B); paper "
                        "{4} ({5} B); ring {6} ({7} B) per rank\n",
                        label, c.count, c.elements, c.bytes, c.paperElements,
                        c.paperBytes, c.ringElements, c.ringBytes);
  };
  for (auto &[kind, c] : z.byKind)
    comm(kind, c);
  comm("total", z.total);
  if (z.outputs.count)
    comm("outputs", z.outputs);
  if (z.control.count)
    comm("control", z.control);
  os << llvm::formatv("      paper's volume {0} = {1} elements; total / "
                      "paper = {2}\n",
                      z.paperVolumeExpression, z.paperVolumeElements,
                      ratio(z.total.paperElements, z.paperVolumeElements));
  if (z.offloaded())
    os << llvm::formatv("    host-resident by offload_* (accepted, not "
                        "executed: the step's arguments still hold them): "
                        "parameters {0} B, optimizer {1} B in host memory; "
                        "{2} B on NVMe; {3} B of pinned buffers\n",
                        z.offloadParamHostBytes, z.offloadOptimizerHostBytes,
                        z.offloadNvmeBytes, z.offloadBufferBytes);
  if (!z.arenaAvailable) {
    os << "    arena by kind: " << z.arenaNote << "\n";
    return;
  }
  os << "    arena by kind (bytes, no reuse):";
  for (auto &[kind, bytes] : z.bytesByKind)
    os << " " << kind << " " << bytes << ";";
  os << "\n    at the peak (" << z.peakBytes << " B):";
  for (auto &[kind, bytes] : z.peakBytesByKind)
    os << " " << kind << " " << bytes << ";";
  os << "\n";
  for (const auto &b : z.peakBuffers)
    os << llvm::formatv("      {0,-20} {1,12} B  {2}\n", b.name, b.bytes,
                        b.kind);
}

void mlir::mw::printZeroJson(llvm::json::OStream &j, const ZeroReport &z) {
  j.attributeObject("zero", [&] {
    j.attribute("ranks", z.ranks);
    j.attribute("stage", z.stage);
    j.attribute("stage_source", z.stageSource);
    j.attribute("psi", z.psi);
    j.attribute("optimizer", z.optimizer);
    j.attributeObject("per_rank", [&] {
      auto state = [&](StringRef key, const ZeroReport::State &s) {
        j.attributeObject(key, [&] {
          j.attribute("bytes", s.bytes);
          j.attribute("whole_bytes", s.wholeBytes);
          j.attribute("piece_bytes", s.pieceBytes);
          j.attribute("padding_bytes", s.paddingBytes());
        });
      };
      state("param", z.param);
      state("grad", z.grad);
      state("optimizer_state", z.optimizerState);
      j.attribute("optimizer_counter_bytes", z.counterBytes);
      j.attribute("model_state_bytes", z.modelStateBytes());
      j.attribute("model_state_padding_bytes",
                  z.modelStateBytes() - z.modelStateLogicalBytes());
    });
    auto formula = [&](StringRef key, const ZeroReport::Formula &f) {
      j.attributeObject(key, [&] {
        j.attribute("case", f.name);
        j.attribute("why", f.why);
        j.attribute("param_bytes_per_param", f.paramBytes);
        j.attribute("grad_bytes_per_param", f.gradBytes);
        j.attribute("optimizer_state_bytes_per_param", f.stateBytes);
        j.attribute("expression", f.expression);
        j.attribute("bytes", f.bytes);
        j.attribute("ratio", ratio(z.modelStateBytes(), f.bytes));
        j.attribute("ratio_without_padding",
                    ratio(z.modelStateLogicalBytes(), f.bytes));
      });
    };
    formula("formula", z.formula);
    if (z.paperMixed)
      formula("paper_mixed_precision", *z.paperMixed);
    if (z.offloaded())
      j.attributeObject("host_resident", [&] {
        j.attribute("executed", false);
        j.attribute("param_host_bytes", z.offloadParamHostBytes);
        j.attribute("optimizer_host_bytes", z.offloadOptimizerHostBytes);
        j.attribute("nvme_bytes", z.offloadNvmeBytes);
        j.attribute("pinned_buffer_bytes", z.offloadBufferBytes);
      });
    j.attributeObject("communication", [&] {
      auto comm = [&](StringRef key, const ZeroReport::Comm &c) {
        j.attributeObject(key, [&] {
          j.attribute("count", c.count);
          j.attribute("elements", c.elements);
          j.attribute("bytes", c.bytes);
          j.attribute("paper_elements", c.paperElements);
          j.attribute("paper_bytes", c.paperBytes);
          j.attribute("ring_elements_per_rank", c.ringElements);
          j.attribute("ring_bytes_per_rank", c.ringBytes);
        });
      };
      for (auto &[kind, c] : z.byKind)
        comm(kind, c);
      comm("total", z.total);
      comm("outputs", z.outputs);
      comm("control", z.control);
      j.attribute("paper_volume", z.paperVolumeExpression);
      j.attribute("paper_volume_elements", z.paperVolumeElements);
      j.attribute("paper_ratio",
                  ratio(z.total.paperElements, z.paperVolumeElements));
    });
    j.attributeObject("arena", [&] {
      j.attribute("available", z.arenaAvailable);
      if (!z.arenaAvailable) {
        j.attribute("note", z.arenaNote);
        return;
      }
      j.attributeObject("bytes_by_kind", [&] {
        for (auto &[kind, bytes] : z.bytesByKind)
          j.attribute(kind, bytes);
      });
      j.attributeObject("peak", [&] {
        j.attribute("live_bytes", z.peakBytes);
        j.attributeObject("bytes_by_kind", [&] {
          for (auto &[kind, bytes] : z.peakBytesByKind)
            j.attribute(kind, bytes);
        });
        j.attributeArray("buffers", [&] {
          for (const auto &b : z.peakBuffers)
            j.object([&] {
              j.attribute("name", b.name);
              j.attribute("kind", b.kind);
              j.attribute("bytes", b.bytes);
            });
        });
      });
    });
  });
}
