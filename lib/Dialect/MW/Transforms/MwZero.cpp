//===- MwZero.cpp - ZeRO data parallelism as a program transformation -----===//
//
// --mw-zero turns a training step into the one SPMD program every
// data-parallel rank runs (DESIGN.md decision 13). Three rewrites, in order:
//
//  1. The batch is split: dimension 0 of every `input` and `label` argument
//     is divided by the rank count, and the new shapes are propagated to
//     every value computed from them, op by op, with a rule per op (a value
//     carries the batch in dimension 0 or not at all). Reductions over the
//     batch (weight gradients, the loss) become per-rank partial results.
//  2. Gradients are summed across ranks (mesh collectives over
//     `mesh.mesh @dp`) in buckets and divided by the rank count; from stage 1
//     on, each rank keeps and updates only its piece of every bucket.
//  3. Stage 3 keeps parameters as pieces too and all-gathers each bucket
//     before each run of its uses.
//
// A step of --mw-autodiff's master-weights=optimizer (half-precision
// parameters and gradients, f32 masters in the optimizer state) keeps its
// layout: gradients are divided by the rank count and reduced in the compute
// type (DeepSpeed's pre-division), the rank's reduced piece is cast to f32
// for the update of the master piece, and the new half-precision piece (the
// master cast back) is what is all-gathered or, in stage 3, kept.
//
// The result is verified like any IR, so a rule that produced inconsistent
// shapes is an error at the op, never a silently wrong program.
//
//===----------------------------------------------------------------------===//

#include "memwall/Dialect/MW/IR/MWOps.h"
#include "memwall/Dialect/MW/Transforms/Passes.h"
#include "memwall/Zero/DeepSpeedConfig.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Mesh/IR/MeshDialect.h"
#include "mlir/Dialect/Mesh/IR/MeshOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MemoryBuffer.h"

#define DEBUG_TYPE "mw-zero"

namespace mlir::mw {
#define GEN_PASS_DEF_MWZERO
#include "memwall/Dialect/MW/Transforms/Passes.h.inc"
} // namespace mlir::mw

using namespace mlir;
using namespace mlir::mw;

namespace {

constexpr StringLiteral kMeshName = "dp";

/// DeepSpeed's defaults (deepspeed/runtime/zero/config.py), in elements.
constexpr int64_t kDefaultReduceBucket = 500000000;
constexpr int64_t kDefaultPrefetchBucket = 50000000;
constexpr int64_t kDefaultPersistenceThreshold = 100000;
constexpr int64_t kDefaultMaxLiveParameters = 1000000000;

RankedTensorType withDim0(RankedTensorType t, int64_t d0) {
  SmallVector<int64_t> shape(t.getShape());
  shape[0] = d0;
  return RankedTensorType::get(shape, t.getElementType());
}

int64_t numElements(Type t) {
  return cast<RankedTensorType>(t).getNumElements();
}

//===----------------------------------------------------------------------===//
// 1. Splitting the batch
//===----------------------------------------------------------------------===//

/// Which values carry the batch in dimension 0 (sharded) and which are sums
/// or means over the batch (partial: each rank holds its share).
struct BatchSplit {
  llvm::DenseSet<Value> sharded, partial;
  int64_t ranks;

  bool isSharded(Value v) const { return sharded.contains(v); }
  bool isPartial(Value v) const { return partial.contains(v); }
};

/// Divides dimension 0 of `v`'s type by the rank count.
LogicalResult shardValue(BatchSplit &split, Value v, Operation *at) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() == 0)
    return at->emitOpError("mw-zero: a batch-carrying value has no dimension "
                           "0 to split");
  int64_t d0 = type.getDimSize(0);
  if (d0 % split.ranks)
    return at->emitOpError("mw-zero: dimension 0 (")
           << d0 << ") of " << type << " is not divisible by ranks="
           << split.ranks;
  v.setType(withDim0(type, d0 / split.ranks));
  split.sharded.insert(v);
  return success();
}

/// Operand `i` of `op` is not computed from the batch but has the global
/// batch in dimension 0 beside operands that now hold the rank's share: a
/// splat (the zeros autodiff puts beside a slice's gradient) is remade with
/// the rank's shape; anything else is an error.
LogicalResult adaptShared(BatchSplit &split, Operation *op, unsigned i,
                          int64_t localDim0) {
  Value v = op->getOperand(i);
  auto type = cast<RankedTensorType>(v.getType());
  // Only an operand whose dimension 0 lines up with the result's (same
  // rank; a lower-rank operand broadcasts from the right).
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  if (split.isSharded(v) || type.getRank() == 0 ||
      type.getRank() != resultType.getRank() ||
      type.getDimSize(0) != localDim0 * split.ranks)
    return success();
  // A splat has one value everywhere, so its shape can follow the batch
  // even where dimension 0 could also be a broadcast (a batch of 1).
  auto splat = v.getDefiningOp<SplatOp>();
  if (!splat)
    return op->emitOpError("mw-zero cannot split the batch here: operand #")
           << i << " has the whole batch in dimension 0 but is not computed "
           << "from the batch";
  OpBuilder b(op);
  auto local = b.create<SplatOp>(splat.getLoc(), withDim0(type, localDim0),
                                 splat.getValueAttr());
  local->setDiscardableAttrs(splat->getDiscardableAttrDictionary());
  op->setOperand(i, local);
  split.sharded.insert(local);
  if (splat->use_empty())
    splat->erase();
  return success();
}

/// Applies the batch rule of `op`: whether each result carries the batch in
/// dimension 0 or is partial, given its operands'.
LogicalResult splitOp(BatchSplit &split, Operation *op) {
  bool anySharded = llvm::any_of(op->getOperands(), [&](Value v) {
    return split.isSharded(v);
  });
  bool anyPartial = llvm::any_of(op->getOperands(), [&](Value v) {
    return split.isPartial(v);
  });
  if (!anySharded && !anyPartial)
    return success();
  auto shardAll = [&]() -> LogicalResult {
    for (Value r : op->getResults())
      if (failed(shardValue(split, r, op)))
        return failure();
    return success();
  };
  auto markPartial = [&]() -> LogicalResult {
    for (Value r : op->getResults())
      split.partial.insert(r);
    return success();
  };
  auto unsupported = [&](StringRef why) -> LogicalResult {
    return op->emitOpError("mw-zero cannot split the batch here: ") << why;
  };
  // Operands with the whole batch but not computed from it (splats).
  if (anySharded) {
    int64_t local = -1;
    for (Value v : op->getOperands())
      if (split.isSharded(v))
        local = cast<RankedTensorType>(v.getType()).getDimSize(0);
    if (isa<AddOp, SubOp, MulOp, DivOp, MaximumOp, ConcatOp, SelectOp>(op))
      for (unsigned i = 0; i < op->getNumOperands(); ++i)
        if (failed(adaptShared(split, op, i, local)))
          return failure();
  }

  // Partial values (sums over the batch) stay partial through linear ops;
  // anything else would need the complete value.
  if (anyPartial && !anySharded) {
    if (isa<AddOp, SubOp, NegOp, CastOp, ReshapeOp, ReduceSumOp, SliceOp,
            ConcatOp, TransposeOp, BroadcastToOp>(op))
      return markPartial();
    if (isa<MulOp, DivOp>(op) && !split.isPartial(op->getOperand(1)))
      return markPartial(); // scaled by a rank-independent value
    if (isa<MulOp>(op) && !split.isPartial(op->getOperand(0)))
      return markPartial();
    if (isa<func::ReturnOp, AdamWOp, SgdOp, FoundInfOp, SelectOp>(op))
      return success(); // reduced where the collectives go (below)
    return unsupported("it is not linear in a sum over the batch (a "
                       "gradient or the loss)");
  }
  if (anyPartial)
    return unsupported("it mixes a per-sample value with a sum over the "
                       "batch");

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      // Elementwise, with NumPy broadcasting: the batch stays in dimension 0
      // when a sharded operand has the result's rank.
      .Case<AddOp, SubOp, MulOp, DivOp, MaximumOp, NegOp, ExpOp, LogOp, TanhOp,
            SqrtOp, RsqrtOp, ReciprocalOp, ReluOp, SigmoidOp, SiluOp, ClampOp,
            GeluOp, CastOp, ReluGradOp, SiluGradOp, GeluGradOp, ClampGradOp,
            SoftmaxGradOp, LogSoftmaxGradOp, SelectOp>([&](Operation *o) {
        auto rt = cast<RankedTensorType>(o->getResult(0).getType());
        for (Value v : o->getOperands())
          if (split.isSharded(v) &&
              cast<RankedTensorType>(v.getType()).getRank() != rt.getRank())
            return unsupported("a batch-carrying operand is broadcast into a "
                               "higher rank, so the batch would leave "
                               "dimension 0");
        if (auto sm = dyn_cast<SoftmaxGradOp>(o); sm && sm.getAxis() == 0)
          return unsupported("the softmax runs across the batch");
        if (auto sm = dyn_cast<LogSoftmaxGradOp>(o); sm && sm.getAxis() == 0)
          return unsupported("the softmax runs across the batch");
        return shardAll();
      })
      .Case<SoftmaxOp, LogSoftmaxOp>([&](Operation *o) {
        int64_t axis = isa<SoftmaxOp>(o) ? cast<SoftmaxOp>(o).getAxis()
                                         : cast<LogSoftmaxOp>(o).getAxis();
        if (axis == 0)
          return unsupported("the softmax runs across the batch");
        return shardAll();
      })
      .Case<LayerNormOp, RmsNormOp, AttentionOp, EmbeddingOp, WaitOp>(
          [&](Operation *) { return shardAll(); })
      .Case<LayerNormGradOp, RmsNormGradOp>([&](Operation *o) {
        // grad_input carries the batch; gamma's and beta's are sums over it.
        if (failed(shardValue(split, o->getResult(0), o)))
          return failure();
        for (Value r : o->getResults().drop_front())
          split.partial.insert(r);
        return success();
      })
      .Case([&](AttentionGradOp o) { return shardAll(); })
      .Case([&](EmbeddingGradOp o) { return markPartial(); })
      .Case([&](CrossEntropyOp o) { return markPartial(); }) // the local mean
      .Case([&](CrossEntropyGradOp o) {
        if (split.isPartial(o.getGradLoss()))
          return unsupported("the loss's gradient seed is per rank");
        return shardAll();
      })
      .Case([&](MatmulOp o) {
        auto lhs = cast<RankedTensorType>(o.getLhs().getType());
        auto rhs = cast<RankedTensorType>(o.getRhs().getType());
        bool l = split.isSharded(o.getLhs()), r = split.isSharded(o.getRhs());
        // Batch dimensions (rank > 2) carry the batch to the result.
        if ((l && lhs.getRank() > 2) || (r && rhs.getRank() > 2))
          return shardAll();
        // lhs rows: [B, K] x [K, N] keeps it in dimension 0.
        if (l && !o.getTransposeLhs() && !r)
          return shardAll();
        // Contracting over the batch: [B, M]^T x [B, N] sums over it.
        bool lContracts = l && o.getTransposeLhs();
        bool rContracts = r && !o.getTransposeRhs();
        if (lContracts && rContracts)
          return markPartial();
        return unsupported("the batch would land in dimension 1 of the "
                           "product");
      })
      .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>([&](Operation *o) {
        auto axes = o->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef();
        if (!llvm::is_contained(axes, 0))
          return shardAll();
        if (isa<ReduceMaxOp>(o))
          return unsupported("a maximum over the batch");
        return markPartial(); // a sum (or mean) over the batch: per rank
      })
      .Case([&](ReshapeOp o) { return shardAll(); })
      .Case([&](TransposeOp o) {
        if (o.getPermutation()[0] != 0)
          return unsupported("the transpose moves dimension 0");
        return shardAll();
      })
      .Case([&](BroadcastToOp o) {
        auto in = cast<RankedTensorType>(o.getInput().getType());
        auto out = cast<RankedTensorType>(o.getResult().getType());
        if (in.getRank() != out.getRank())
          return unsupported("broadcast into a higher rank moves the batch");
        return shardAll();
      })
      .Case([&](SliceOp o) {
        // A micro-batch (grad-accum): offsets and sizes along the batch
        // scale with it.
        SmallVector<int64_t> offsets(o.getOffsets()), sizes(o.getSizes());
        std::optional<ArrayRef<int64_t>> strides = o.getStrides();
        if (strides && (*strides)[0] != 1)
          return unsupported("a strided slice of the batch");
        if (offsets[0] % split.ranks || sizes[0] % split.ranks)
          return unsupported("the slice's offset or size along the batch is "
                             "not divisible by the rank count");
        offsets[0] /= split.ranks;
        sizes[0] /= split.ranks;
        o.setOffsets(offsets);
        o.setSizes(sizes);
        return shardAll();
      })
      .Case([&](ConcatOp o) {
        if (o.getAxis() == 0)
          return unsupported("a concatenation along the batch");
        if (!llvm::all_of(o.getInputs(),
                          [&](Value v) { return split.isSharded(v); }))
          return unsupported("a concatenation of per-sample and shared "
                             "values");
        return shardAll();
      })
      .Case<func::ReturnOp>([&](Operation *) -> LogicalResult {
        return unsupported("a per-sample value is returned");
      })
      .Default([&](Operation *) {
        return unsupported("no batch rule for this op");
      });
}

LogicalResult splitBatch(func::FuncOp func, BatchSplit &split) {
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    auto role =
        func.getArgAttrOfType<RoleAttr>(arg.getArgNumber(), "mw.role");
    if (!role || (role.getValue() != Role::input &&
                  role.getValue() != Role::label))
      continue;
    auto type = cast<RankedTensorType>(arg.getType());
    auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                  "mw.name");
    if (type.getRank() == 0 || type.getDimSize(0) % split.ranks)
      return func.emitOpError("mw-zero: the batch of ")
             << (name ? "'" + name.getValue().str() + "'"
                      : "argument #" + std::to_string(arg.getArgNumber()))
             << " (" << type << ") is not divisible by ranks=" << split.ranks;
    arg.setType(withDim0(type, type.getDimSize(0) / split.ranks));
    split.sharded.insert(arg);
  }
  for (Operation &op : body)
    if (failed(splitOp(split, &op)))
      return failure();
  // The function's type follows its arguments.
  func.setType(FunctionType::get(func.getContext(), body.getArgumentTypes(),
                                 func.getResultTypes()));
  return success();
}

//===----------------------------------------------------------------------===//
// 2-3. Collectives and sharded state
//===----------------------------------------------------------------------===//

/// The state index of a master piece in shardAttr (the optimizer's own
/// state is 0, 1, ...; the parameters' piece is -1).
constexpr int kMasterState = -2;

/// One parameter and its update.
struct Param {
  unsigned arg;
  std::string name;
  RankedTensorType type;
  int64_t numel;
  Operation *update;                  ///< mw.adamw or mw.sgd
  /// The gradient that is reduced: the update's gradient operand, or with
  /// an f32 master (master-weights=optimizer) the compute-type gradient the
  /// update's operand is cast (and with fp16 unscaled) from.
  Value grad;
  /// master-weights=optimizer: the f32 master the update updates (an
  /// optimizer_state argument), the return operand of its new value, the
  /// casts of the gradient to f32 and of the new master to the parameter's
  /// type, fp16's unscaling of the gradient and the select that keeps the
  /// old parameter on overflow (null when absent).
  int masterArg = -1;
  unsigned masterResult = 0;
  CastOp gradCast, paramCast;
  DivOp unscale;
  SelectOp paramSelect;
  SmallVector<unsigned> stateArgs;    ///< exp_avg, exp_avg_sq / momentum
  unsigned paramResult;               ///< the return operand of the update
  SmallVector<unsigned> stateResults; ///< likewise for the state
  /// fp16 loss scaling: the mw.select that keeps the old value on overflow,
  /// per updated value (parameter, then state), or null.
  SmallVector<SelectOp> selects;
  int64_t gradPos;                    ///< where its gradient is complete
  bool whole = false;                 ///< stage 3: below the threshold
};

/// Parameters flattened in order into one 1-D buffer, padded to a multiple
/// of the rank count.
struct Bucket {
  SmallVector<Param *> members;
  int64_t elements = 0, padded = 0, piece = 0;
  Type elemType;
  bool whole = false; ///< all-reduced, updated unsharded (stage 0, small)
};

struct ZeroRewriter {
  func::FuncOp func;
  int64_t stage, ranks;
  bool overlap;
  /// split-sums: a single-member bucket whose gradient is the sum of two
  /// contributions is reduce-scattered one contribution at a time.
  bool splitSums = false;
  int64_t reduceBucket, prefetchBucket, threshold, maxLive;
  OpBuilder b;
  Location loc;
  FlatSymbolRefAttr mesh;
  DenseI16ArrayAttr axes;
  llvm::DenseMap<Operation *, int64_t> position;
  SmallVector<std::unique_ptr<Param>> params;
  SmallVector<Bucket> buckets;
  /// fp16 loss scaling's overflow flag (the condition of the updates'
  /// mw.select), or null; from stage 1 on it becomes the flag of every rank,
  /// all-reduced with max.
  Value overflow;
  int64_t collectives = 0;
  const BatchSplit *split = nullptr;

  ZeroRewriter(func::FuncOp func, int64_t stage, int64_t ranks)
      : func(func), stage(stage), ranks(ranks), b(func.getContext()),
        loc(func.getLoc()) {
    mesh = FlatSymbolRefAttr::get(func.getContext(), kMeshName);
    axes = b.getDenseI16ArrayAttr({0});
  }

  int64_t pos(Value v) {
    if (Operation *def = v.getDefiningOp())
      return position.lookup(def);
    return -1;
  }

  void renumber() {
    position.clear();
    int64_t i = 0;
    for (Operation &op : func.getBody().front())
      position[&op] = i++;
  }

  Value splat(Type type, double v) {
    return b.create<SplatOp>(loc, type, b.getF64FloatAttr(v));
  }

  /// A collective's result, completed where it is used when overlapping;
  /// the wait also reads the collective's operand, which the engine sends
  /// until then.
  Value complete(Value started, Operation *firstUse) {
    ++collectives;
    if (!overlap)
      return started;
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(firstUse);
    return b.create<WaitOp>(loc, started.getType(), started,
                            started.getDefiningOp()->getOperands());
  }

  /// The ops flatten() made and the collectives they feed: their uses of the
  /// gradients stay.
  llvm::SmallPtrSet<Operation *, 16> flattenOps;

  Value flatten(ArrayRef<Value> values, int64_t padded, Type elemType) {
    SmallVector<Value> flats;
    int64_t total = 0;
    for (Value v : values) {
      int64_t n = numElements(v.getType());
      total += n;
      auto flatType = RankedTensorType::get({n}, elemType);
      if (v.getType() == flatType) {
        flats.push_back(v);
        continue;
      }
      auto reshape = b.create<ReshapeOp>(loc, flatType, v);
      flattenOps.insert(reshape);
      flats.push_back(reshape);
    }
    if (padded > total)
      flats.push_back(
          splat(RankedTensorType::get({padded - total}, elemType), 0.0));
    if (flats.size() == 1)
      return flats.front();
    auto concat =
        b.create<ConcatOp>(loc, RankedTensorType::get({padded}, elemType),
                           flats, b.getI64IntegerAttr(0));
    flattenOps.insert(concat);
    return concat;
  }

  /// A compute-type bucket divided by the rank count before it is reduced
  /// (master-weights=optimizer), as DeepSpeed divides its half-precision
  /// gradients: the mean of finite values stays within their range, where
  /// their sum could overflow f16.
  Value predivide(Value flat) {
    auto mul = b.create<MulOp>(loc, flat,
                               splat(flat.getType(), 1.0 / double(ranks)));
    flattenOps.insert(mul);
    return mul;
  }

  SmallVector<Value> unflatten(Value flat, ArrayRef<Param *> members) {
    SmallVector<Value> out;
    int64_t offset = 0;
    int64_t total = numElements(flat.getType());
    for (Param *p : members) {
      Value v = flat;
      if (p->numel != total)
        v = b.create<SliceOp>(
            loc, RankedTensorType::get({p->numel}, p->type.getElementType()),
            flat, b.getDenseI64ArrayAttr({offset}),
            b.getDenseI64ArrayAttr({p->numel}), DenseI64ArrayAttr());
      if (v.getType() != p->type)
        v = b.create<ReshapeOp>(loc, p->type, v);
      out.push_back(v);
      offset += p->numel;
    }
    return out;
  }

  /// The mw.shard of a piece of bucket `bk`: for the parameters' piece
  /// (`state` < 0) or for optimizer state `state` (exp_avg, ...). `sources`
  /// names the whole tensors of the unsharded step the piece's elements come
  /// from (the parameters, or their state arguments), and `shapes` their
  /// shapes, so that a runtime can read a piece from a checkpoint of whole
  /// tensors and write it back (runtime/src/checkpoint.cpp).
  DictionaryAttr shardAttr(const Bucket &bk, int state) {
    SmallVector<Attribute> names, sources, shapes;
    SmallVector<int64_t> sizes;
    for (Param *p : bk.members) {
      names.push_back(b.getStringAttr(p->name));
      StringRef source = p->name;
      if (state >= 0 || state == kMasterState)
        if (auto n = func.getArgAttrOfType<StringAttr>(
                state >= 0 ? p->stateArgs[state] : p->masterArg,
                MWDialect::kNameAttrName))
          source = n.getValue();
      sources.push_back(b.getStringAttr(source));
      sizes.push_back(p->numel);
      shapes.push_back(b.getDenseI64ArrayAttr(p->type.getShape()));
    }
    return b.getDictionaryAttr(
        {b.getNamedAttr("members", b.getArrayAttr(names)),
         b.getNamedAttr("sizes", b.getDenseI64ArrayAttr(sizes)),
         b.getNamedAttr("shapes", b.getArrayAttr(shapes)),
         b.getNamedAttr("sources", b.getArrayAttr(sources)),
         b.getNamedAttr("ranks", b.getI64IntegerAttr(ranks))});
  }

  LogicalResult collectParams();
  LogicalResult collectMaster(Operation &update, BlockArgument master,
                              Param &p);
  void agreeOnOverflow();
  void formBuckets();
  void reduceWholeBucket(Bucket &bk);
  LogicalResult shardBucket(Bucket &bk, unsigned index);
  /// Stage 3's gathers: the collective and the op that first uses it.
  SmallVector<std::pair<Operation *, Operation *>> gathers;
  LogicalResult gatherParams(Bucket &bk, Value piece,
                             SmallVectorImpl<std::pair<Operation *, Operation *>>
                                 &gathers);
  void prefetch();
  LogicalResult averageLoss();
  LogicalResult run();

  // Arguments and results the shards add: block arguments and return
  // operands at once, the function's type and attributes once, in
  // finishSignature (one FunctionType and attribute array per insertion
  // made the pass quadratic in the buckets).
  SmallVector<DictionaryAttr> newArgAttrs, newResultAttrs;
  unsigned oldNumArgs = 0, oldNumResults = 0;
  void finishSignature();
  /// The role of result `i` of the function, new results included.
  RoleAttr resultRole(unsigned i) {
    if (i < oldNumResults)
      return func.getResultAttrOfType<RoleAttr>(i, "mw.role");
    return newResultAttrs[i - oldNumResults].getAs<RoleAttr>("mw.role");
  }
  /// Whether `x` comes before `y` in the body (ops nested in either count
  /// as the op). Operation::isBeforeInBlock keeps the block's order with
  /// gaps, so the ops inserted bucket by bucket do not renumber the body.
  bool before(Operation *x, Operation *y) {
    Block &body = func.getBody().front();
    Operation *a = body.findAncestorOpInBlock(*x);
    Operation *c = body.findAncestorOpInBlock(*y);
    return a != c && a->isBeforeInBlock(c);
  }
  /// The ops the returned outputs depend on (the forward pass), taken once
  /// before the first gather: only the step's own ops are asked about.
  std::optional<llvm::DenseSet<Operation *>> forwardOps;
  llvm::BitVector eraseArgs, eraseResults;
};

LogicalResult ZeroRewriter::collectParams() {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (Operation &op : body) {
    if (!isa<AdamWOp, SgdOp>(op))
      continue;
    auto arg = dyn_cast<BlockArgument>(op.getOperand(0));
    if (!arg)
      return op.emitOpError("mw-zero: the parameter updated here is not an "
                            "argument of the step");
    auto p = std::make_unique<Param>();
    p->update = &op;
    p->grad = op.getOperand(1);
    auto argRole = func.getArgAttrOfType<RoleAttr>(arg.getArgNumber(),
                                                   "mw.role");
    if (argRole && argRole.getValue() == Role::optimizer_state) {
      // master-weights=optimizer: the update's operand is the f32 master.
      if (failed(collectMaster(op, arg, *p)))
        return failure();
    } else {
      p->arg = arg.getArgNumber();
    }
    BlockArgument paramArg = func.getArgument(p->arg);
    auto name = func.getArgAttrOfType<StringAttr>(p->arg, "mw.name");
    p->name = name ? name.getValue().str() : "arg" + std::to_string(p->arg);
    p->type = cast<RankedTensorType>(paramArg.getType());
    p->numel = p->type.getNumElements();
    auto stateOperands = isa<AdamWOp>(op)
                             ? op.getOperands().slice(2, 2)
                             : op.getOperands().drop_front(2);
    for (Value s : stateOperands) {
      auto sArg = dyn_cast<BlockArgument>(s);
      if (!sArg)
        return op.emitOpError("mw-zero: optimizer state is not an argument");
      p->stateArgs.push_back(sArg.getArgNumber());
    }
    // From stage 1 on each updated value must go straight to the return
    // (its piece replaces it there), or through the mw.select of fp16 loss
    // scaling that keeps the old value on overflow; stage 0 keeps the
    // updates as they are.
    // The return operand `r` reaches (directly or through the select that
    // keeps `old` on overflow), its uses other than `ignore` considered.
    auto returnedAt = [&](Value r, Value old, Operation *ignore,
                          SelectOp &select) -> FailureOr<unsigned> {
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : r.getUses())
        if (use.getOwner() != ignore)
          uses.push_back(&use);
      Value returned = r;
      if (uses.size() == 1)
        if (auto s = dyn_cast<SelectOp>(uses.front()->getOwner());
            s && s.getFalseValue() == r && s.getTrueValue() == old) {
          if (overflow && s.getCondition() != overflow)
            return s.emitOpError("mw-zero: the updates keep their old values "
                                 "on different conditions; loss scaling has "
                                 "one overflow flag per step");
          overflow = s.getCondition();
          select = s;
          returned = s.getResult();
          uses.clear();
          for (OpOperand &use : returned.getUses())
            uses.push_back(&use);
        }
      if (uses.size() != 1 || uses.front()->getOwner() != ret)
        return op.emitOpError("mw-zero: stage ")
               << stage << " needs each updated value to be returned "
               << "directly (or through the mw.select of fp16 loss scaling); '"
               << p->name << "' goes through '"
               << (uses.empty() ? StringRef("nothing")
                                : uses.front()->getOwner()->getName()
                                      .getStringRef())
               << "'";
      return uses.front()->getOperandNumber();
    };
    for (auto [i, r] : llvm::enumerate(op.getResults())) {
      if (stage == 0)
        break;
      SelectOp select;
      bool master = i == 0 && p->masterArg >= 0;
      Value old = i == 0 ? Value(arg) : stateOperands[i - 1];
      FailureOr<unsigned> idx = returnedAt(
          r, old, master ? p->paramCast.getOperation() : nullptr, select);
      if (failed(idx))
        return failure();
      p->selects.push_back(select);
      if (master) {
        p->masterResult = *idx;
        FailureOr<unsigned> at = returnedAt(
            p->paramCast.getResult(), paramArg, nullptr, p->paramSelect);
        if (failed(at))
          return failure();
        p->paramResult = *at;
      } else if (i == 0) {
        p->paramResult = *idx;
      } else {
        p->stateResults.push_back(*idx);
      }
    }
    p->gradPos = pos(p->grad);
    p->whole = stage == 3 && p->numel < threshold;
    params.push_back(std::move(p));
  }
  if (params.empty())
    return func.emitOpError("mw-zero: the step has no optimizer update "
                            "(mw.adamw or mw.sgd); run --mw-autodiff first");
  if (overflow)
    for (auto &p : params)
      if (llvm::any_of(p->selects, [](SelectOp s) { return !s; }))
        return p->update->emitOpError("mw-zero: '")
               << p->name << "' is updated even on overflow while other "
               << "parameters keep their old values; loss scaling skips the "
               << "whole step";
  return success();
}

/// master-weights=optimizer: `update` updates the f32 master `master` (an
/// optimizer_state argument `<name>.master`) from the compute-type gradient
/// cast to f32 (fp16: then divided by the loss scale), and the new parameter
/// is the new master cast back.
LogicalResult ZeroRewriter::collectMaster(Operation &update,
                                          BlockArgument master, Param &p) {
  p.masterArg = master.getArgNumber();
  auto fail = [&](const Twine &why) {
    return update.emitOpError("mw-zero: the f32 master updated here ") << why;
  };
  Value g = update.getOperand(1);
  if (auto div = g.getDefiningOp<DivOp>()) {
    p.unscale = div;
    g = div.getLhs();
  }
  p.gradCast = g.getDefiningOp<CastOp>();
  if (!p.gradCast)
    return fail("does not take its gradient as a cast from the compute type "
                "(the layout of --mw-autodiff's master-weights=optimizer)");
  p.grad = p.gradCast.getInput();
  for (Operation *user : update.getResult(0).getUsers())
    if (auto c = dyn_cast<CastOp>(user))
      p.paramCast = c;
  if (!p.paramCast)
    return fail("is not cast back into a parameter");
  // The parameter: `<name>` beside its master `<name>.master`.
  auto name = func.getArgAttrOfType<StringAttr>(p.masterArg, "mw.name");
  StringRef paramName =
      name ? name.getValue() : StringRef();
  if (!paramName.consume_back(".master"))
    return fail("is not named '<parameter>.master'");
  for (BlockArgument a : func.getArguments()) {
    auto role = func.getArgAttrOfType<RoleAttr>(a.getArgNumber(), "mw.role");
    auto n = func.getArgAttrOfType<StringAttr>(a.getArgNumber(), "mw.name");
    if (role && role.getValue() == Role::param && n &&
        n.getValue() == paramName && a.getType() == p.paramCast.getType() &&
        a.getType() == p.grad.getType()) {
      p.arg = a.getArgNumber();
      return success();
    }
  }
  return fail("has no parameter '" + paramName +
              "' of the compute type beside it");
}

/// fp16 loss scaling from stage 1 on: each rank's overflow flag (found_inf
/// of its own gradients) all-reduced with max, so that every rank skips the
/// same steps. The gradients are reduced in f32, whose sum of the ranks'
/// finite fp16-range values stays finite, or with f32 masters in the
/// optimizer state in f16 after the division by the rank count, whose mean
/// of finite values stays finite (up to rounding at 65504): either way the
/// flag of the reduction is the max of the ranks' flags (DeepSpeed
/// all-reduces its overflow flag likewise).
/// Stage 0 reduces the gradients before found_inf reads them already.
void ZeroRewriter::agreeOnOverflow() {
  if (!overflow || stage == 0)
    return;
  OpBuilder::InsertionGuard guard(b);
  if (Operation *def = overflow.getDefiningOp())
    b.setInsertionPointAfter(def);
  else
    b.setInsertionPointToStart(&func.getBody().front());
  auto flag = b.create<mesh::AllReduceOp>(
      loc, overflow.getType(), mesh, axes, overflow,
      mesh::ReductionKindAttr::get(b.getContext(), mesh::ReductionKind::Max));
  overflow.replaceAllUsesExcept(flag.getResult(), flag);
  overflow = flag.getResult();
  ++collectives;
}

/// Buckets in the order gradients are produced (the backward pass's), at
/// most `reduceBucket` elements each, one optimizer configuration each.
void ZeroRewriter::formBuckets() {
  SmallVector<Param *> order;
  for (auto &p : params)
    order.push_back(p.get());
  llvm::stable_sort(order, [](Param *a, Param *c) {
    return a->gradPos < c->gradPos;
  });
  auto sameUpdate = [](Param *a, Param *c) {
    Operation *x = a->update, *y = c->update;
    return x->getName() == y->getName() &&
           x->getAttrDictionary() == y->getAttrDictionary() &&
           x->getNumOperands() == y->getNumOperands() &&
           (!isa<AdamWOp>(x) || x->getOperand(4) == y->getOperand(4)) &&
           a->type.getElementType() == c->type.getElementType() &&
           (a->masterArg >= 0) == (c->masterArg >= 0) &&
           (a->unscale ? a->unscale.getRhs() : Value()) ==
               (c->unscale ? c->unscale.getRhs() : Value());
  };
  for (Param *p : order) {
    bool whole = stage == 0 || p->whole;
    if (buckets.empty() || buckets.back().whole != whole ||
        !sameUpdate(buckets.back().members.front(), p) ||
        buckets.back().elements + p->numel > reduceBucket)
      buckets.emplace_back();
    Bucket &bk = buckets.back();
    bk.whole = whole;
    bk.elemType = p->type.getElementType();
    bk.members.push_back(p);
    bk.elements += p->numel;
  }
  for (Bucket &bk : buckets) {
    bk.piece = (bk.elements + ranks - 1) / ranks;
    bk.padded = bk.piece * ranks;
  }
}

/// Stage 0 (and stage 3's whole parameters): the bucket's gradients summed
/// across ranks once the last one exists, divided by the rank count.
void ZeroRewriter::reduceWholeBucket(Bucket &bk) {
  Param *last = *llvm::max_element(
      bk.members, [](Param *a, Param *c) { return a->gradPos < c->gradPos; });
  if (Operation *def = last->grad.getDefiningOp())
    b.setInsertionPointAfter(def);
  else
    b.setInsertionPointToStart(&func.getBody().front());
  SmallVector<Value> grads;
  for (Param *p : bk.members)
    grads.push_back(p->grad);
  Value flat = flatten(grads, bk.elements, bk.elemType);
  bool master = bk.members.front()->masterArg >= 0;
  if (master)
    flat = predivide(flat);
  Value sum = b.create<mesh::AllReduceOp>(
      loc, flat.getType(), mesh, axes, flat,
      mesh::ReductionKindAttr::get(b.getContext(), mesh::ReductionKind::Sum));
  flattenOps.insert(sum.getDefiningOp());
  // Completed, scaled and unpacked where the first update needs it.
  Operation *firstUse = nullptr;
  for (Param *p : bk.members)
    for (Operation *user : p->grad.getUsers())
      if (!flattenOps.contains(user) &&
          (!firstUse || before(user, firstUse)))
        firstUse = user;
  b.setInsertionPoint(firstUse);
  Value done = complete(sum, firstUse);
  Value mean = master ? done
                      : b.create<MulOp>(loc, done,
                                        splat(done.getType(),
                                              1.0 / double(ranks)))
                            .getResult();
  SmallVector<Value> reduced = unflatten(mean, bk.members);
  for (auto [p, r] : llvm::zip(bk.members, reduced))
    p->grad.replaceUsesWithIf(r, [&](OpOperand &use) {
      return !flattenOps.contains(use.getOwner());
    });
}

LogicalResult ZeroRewriter::run() {
  renumber();
  if (failed(collectParams()))
    return failure();
  agreeOnOverflow();
  renumber();
  formBuckets();
  unsigned numArgs = func.getNumArguments();
  oldNumArgs = numArgs;
  oldNumResults = func.getNumResults();
  eraseArgs.resize(numArgs);
  eraseResults.resize(func.getNumResults());
  for (auto [i, bk] : llvm::enumerate(buckets)) {
    if (bk.whole) {
      reduceWholeBucket(bk);
      continue;
    }
    if (failed(shardBucket(bk, i)))
      return failure();
  }
  if (failed(averageLoss()))
    return failure();
  if (stage == 3 && overlap)
    prefetch();
  finishSignature();
  // Drop what the sharded state replaced.
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  ret->eraseOperands(eraseResults);
  func.eraseResults(eraseResults);
  for (unsigned i = 0; i < numArgs; ++i)
    if (eraseArgs.test(i) && !func.getArgument(i).use_empty())
      return func.emitOpError("mw-zero: internal error: argument #")
             << i << " is still used";
  func.eraseArguments(eraseArgs);
  return success();
}

/// Stages 1-3: the bucket's gradients reduce-scattered (after the backward
/// pass in stage 1, as soon as they exist in 2 and 3), one optimizer update
/// of the rank's pieces, and in stages 1-2 the updated pieces all-gathered.
LogicalResult ZeroRewriter::shardBucket(Bucket &bk, unsigned index) {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Operation *firstUpdate = nullptr;
  for (Param *p : bk.members)
    if (!firstUpdate || before(p->update, firstUpdate))
      firstUpdate = p->update;
  Param *last = *llvm::max_element(
      bk.members, [](Param *a, Param *c) { return a->gradPos < c->gradPos; });
  if (stage == 1 || !last->grad.getDefiningOp())
    b.setInsertionPoint(firstUpdate);
  else
    b.setInsertionPointAfter(last->grad.getDefiningOp());

  // master-weights=optimizer: the compute-type gradients reduced (divided
  // first), the rank's piece cast to f32 (and unscaled) for the update of
  // its f32 master piece.
  Param *front = bk.members.front();
  bool master = front->masterArg >= 0;
  auto pieceType = RankedTensorType::get({bk.piece}, bk.elemType);
  auto reduceScatter = [&](Value flat) -> Value {
    if (master)
      flat = predivide(flat);
    return b.create<mesh::ReduceScatterOp>(
        loc, pieceType, mesh, axes, flat,
        mesh::ReductionKindAttr::get(b.getContext(),
                                     mesh::ReductionKind::Sum),
        b.getIndexAttr(0));
  };
  // split-sums (stages 2-3): a parameter alone in its bucket whose gradient
  // is the sum of two contributions made apart (a tied embedding's: the LM
  // head's early in the backward pass, the embedding's at its end) has
  // each contribution reduce-scattered where it is made and the pieces
  // added, so the whole gradient is not held from the first to the last.
  // The sum of the reductions is the reduction of the sum (in another
  // order); one more reduce-scatter of the parameter per step.
  AddOp sum = splitSums && stage >= 2 && bk.members.size() == 1
                  ? front->grad.getDefiningOp<AddOp>()
                  : AddOp();
  if (sum && (sum.getLhs().getType() != sum.getType() ||
              sum.getRhs().getType() != sum.getType() ||
              !sum.getLhs().getDefiningOp() || !sum.getRhs().getDefiningOp()))
    sum = AddOp();
  Value scattered, lateScattered;
  if (sum) {
    Value early = sum.getLhs(), late = sum.getRhs();
    if (before(late.getDefiningOp(), early.getDefiningOp()))
      std::swap(early, late);
    b.setInsertionPointAfter(early.getDefiningOp());
    scattered = reduceScatter(flatten({early}, bk.padded, bk.elemType));
    b.setInsertionPointAfter(late.getDefiningOp());
    lateScattered = reduceScatter(flatten({late}, bk.padded, bk.elemType));
  } else {
    SmallVector<Value> grads;
    for (Param *p : bk.members)
      grads.push_back(p->grad);
    scattered = reduceScatter(flatten(grads, bk.padded, bk.elemType));
  }
  auto stateType =
      master ? RankedTensorType::get(
                   {bk.piece},
                   cast<RankedTensorType>(func.getArgument(front->masterArg).getType())
                       .getElementType())
             : pieceType;
  b.setInsertionPoint(firstUpdate);
  Value gradPiece = complete(scattered, firstUpdate);
  if (lateScattered)
    gradPiece = b.create<AddOp>(loc, gradPiece,
                                complete(lateScattered, firstUpdate));
  if (master) {
    gradPiece = b.create<CastOp>(loc, stateType, gradPiece);
    if (front->unscale)
      gradPiece = b.create<DivOp>(loc, gradPiece, front->unscale.getRhs());
  } else {
    gradPiece = b.create<MulOp>(loc, gradPiece,
                                splat(pieceType, 1.0 / double(ranks)));
  }

  // The rank's piece of the parameters: sliced locally (stages 1-2), or an
  // argument of its own (stage 3).
  std::string base = "zero.bucket" + std::to_string(index);
  auto argAttrs = [&](Role role, StringRef name, int state) {
    return b.getDictionaryAttr(
        {b.getNamedAttr("mw.role", RoleAttr::get(b.getContext(), role)),
         b.getNamedAttr("mw.name", b.getStringAttr(name)),
         b.getNamedAttr(MWDialect::kShardAttrName, shardAttr(bk, state))});
  };
  auto addArg = [&](Role role, StringRef name, int state = -1,
                    Type type = Type()) {
    BlockArgument arg = body.addArgument(type ? type : pieceType, loc);
    newArgAttrs.push_back(argAttrs(role, name, state));
    eraseArgs.resize(body.getNumArguments());
    return arg;
  };
  auto addResult = [&](Value v, Role role, StringRef name, int state = -1) {
    newResultAttrs.push_back(argAttrs(role, name, state));
    ret->insertOperands(ret.getNumOperands(), v);
    eraseResults.resize(ret.getNumOperands());
  };

  // (With a master, the parameters' piece is only the old value that fp16's
  // overflow keeps.)
  Value paramPiece;
  if (stage == 3) {
    paramPiece = addArg(Role::param, base + ".param");
  } else if (!master || overflow) {
    SmallVector<Value> ps;
    for (Param *p : bk.members)
      ps.push_back(func.getArgument(p->arg));
    Value flatP = flatten(ps, bk.padded, bk.elemType);
    paramPiece = b.create<mesh::AllSliceOp>(loc, pieceType, mesh, axes, flatP,
                                            b.getIndexAttr(0));
  }

  // One update of the pieces, with the members' hyper-parameters.
  Operation *proto = bk.members.front()->update;
  SmallVector<std::string> stateNames =
      isa<AdamWOp>(proto) ? SmallVector<std::string>{"exp_avg", "exp_avg_sq"}
                          : SmallVector<std::string>{"momentum_buffer"};
  Value masterPiece =
      master ? addArg(Role::optimizer_state, base + ".master", kMasterState,
                      stateType)
             : paramPiece;
  SmallVector<Value> stateArgs;
  for (size_t s = 0; s < bk.members.front()->stateArgs.size(); ++s)
    stateArgs.push_back(addArg(Role::optimizer_state,
                               base + "." + stateNames[s], static_cast<int>(s),
                               stateType));
  SmallVector<Value> operands{masterPiece, gradPiece};
  operands.append(stateArgs);
  if (isa<AdamWOp>(proto))
    operands.push_back(proto->getOperand(4)); // the step
  OperationState state(proto->getLoc(), proto->getName());
  state.addOperands(operands);
  state.addAttributes(proto->getAttrs());
  state.addTypes(SmallVector<Type>(1 + stateArgs.size(), stateType));
  Operation *update = b.create(state);
  ++collectives; // the reduce-scatter
  // The new parameters' piece: the updated master cast back, or the update
  // itself.
  Value newParamPiece = update->getResult(0);
  if (master)
    newParamPiece = b.create<CastOp>(loc, pieceType, newParamPiece);
  // The updated pieces, or with fp16 loss scaling the old ones where any
  // rank overflowed (the flag is every rank's: globalOverflow).
  SmallVector<Value> updated(update->getResults());
  if (overflow) {
    SmallVector<Value> olds{masterPiece};
    olds.append(stateArgs);
    for (auto [k, v] : llvm::enumerate(updated))
      v = b.create<SelectOp>(loc, v.getType(), overflow, olds[k], v);
    if (master)
      newParamPiece = b.create<SelectOp>(loc, pieceType, overflow, paramPiece,
                                         newParamPiece);
    else
      newParamPiece = updated[0];
  } else if (!master) {
    newParamPiece = updated[0];
  }

  // The updated pieces: gathered back into the parameters (stages 1-2) or
  // returned as they are (stage 3).
  if (stage == 3) {
    addResult(newParamPiece, Role::param, base + ".param");
  } else {
    Value gathered = b.create<mesh::AllGatherOp>(
        loc, RankedTensorType::get({bk.padded}, bk.elemType), mesh, axes,
        newParamPiece, b.getIndexAttr(0));
    Value full = complete(gathered, ret);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ret);
    SmallVector<Value> newParams = unflatten(full, bk.members);
    for (auto [p, v] : llvm::zip(bk.members, newParams))
      ret->setOperand(p->paramResult, v);
  }
  if (master)
    addResult(updated[0], Role::optimizer_state, base + ".master",
              kMasterState);
  for (size_t s = 0; s < stateArgs.size(); ++s)
    addResult(updated[1 + s], Role::optimizer_state,
              base + "." + stateNames[s], static_cast<int>(s));

  // The members' own updates and state go away.
  for (Param *p : bk.members) {
    for (unsigned r : p->stateResults)
      eraseResults.set(r);
    if (stage == 3)
      eraseResults.set(p->paramResult);
    if (master) {
      eraseResults.set(p->masterResult);
      eraseArgs.set(p->masterArg);
      // The new parameter's cast (and select): placeholders where returned.
      for (Operation *op : {p->paramSelect.getOperation(),
                            p->paramCast.getOperation()}) {
        if (!op)
          continue;
        for (OpOperand &use :
             llvm::make_early_inc_range(op->getResult(0).getUses()))
          use.set(update->getResult(0)); // placeholder, erased with results
        op->erase();
      }
    }
    for (SelectOp select : p->selects)
      if (select) {
        for (OpOperand &use :
             llvm::make_early_inc_range(select.getResult().getUses()))
          use.set(update->getResult(0)); // placeholder, erased with results
        select->erase();
      }
    for (Value r : p->update->getResults())
      for (OpOperand &use : llvm::make_early_inc_range(r.getUses()))
        if (use.getOwner() == ret)
          use.set(update->getResult(0)); // placeholder, erased with results
    for (unsigned a : p->stateArgs)
      eraseArgs.set(a);
  }
  for (Param *p : bk.members) {
    p->update->erase();
    // The member's own unscaling and cast of its gradient, unless found_inf
    // still reads them.
    if (p->unscale && p->unscale->use_empty())
      p->unscale->erase();
    if (p->gradCast && p->gradCast->use_empty())
      p->gradCast->erase();
  }
  // split-sums: the whole sum, read by nothing now.
  if (sum && sum->use_empty())
    sum->erase();

  if (stage == 3) {
    if (failed(gatherParams(bk, paramPiece, gathers)))
      return failure();
    for (Param *p : bk.members)
      eraseArgs.set(p->arg);
  }
  return success();
}

/// Stage 3: the bucket all-gathered before each run of uses of its members,
/// a run being uses in the forward pass (what the loss depends on) or in
/// the backward pass without the other kind between them.
LogicalResult ZeroRewriter::gatherParams(
    Bucket &bk, Value piece,
    SmallVectorImpl<std::pair<Operation *, Operation *>> &gathers) {
  // The forward pass: what the returned loss depends on.
  if (!forwardOps) {
    forwardOps.emplace();
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    SmallVector<Value> work;
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      RoleAttr role = resultRole(i);
      if (role && role.getValue() == Role::output)
        work.push_back(v);
    }
    while (!work.empty()) {
      Value v = work.pop_back_val();
      Operation *def = v.getDefiningOp();
      if (!def || !forwardOps->insert(def).second)
        continue;
      for (Value o : def->getOperands())
        work.push_back(o);
    }
  }
  const llvm::DenseSet<Operation *> &forward = *forwardOps;
  struct Use {
    OpOperand *operand;
    bool fwd;
    unsigned member;
  };
  SmallVector<Use> uses;
  for (auto [m, p] : llvm::enumerate(bk.members))
    for (OpOperand &use : func.getArgument(p->arg).getUses())
      uses.push_back({&use, forward.contains(use.getOwner()),
                      static_cast<unsigned>(m)});
  llvm::stable_sort(uses, [&](const Use &x, const Use &y) {
    return before(x.operand->getOwner(), y.operand->getOwner());
  });
  size_t i = 0;
  while (i < uses.size()) {
    size_t j = i;
    while (j < uses.size() && uses[j].fwd == uses[i].fwd)
      ++j;
    Operation *first = uses[i].operand->getOwner();
    b.setInsertionPoint(first);
    Value gathered = b.create<mesh::AllGatherOp>(
        loc, RankedTensorType::get({bk.padded}, bk.elemType), mesh, axes,
        piece, b.getIndexAttr(0));
    Value full = complete(gathered, first);
    gathers.push_back({gathered.getDefiningOp(), full.getDefiningOp()});
    b.setInsertionPoint(first);
    SmallVector<Value> values = unflatten(full, bk.members);
    for (size_t k = i; k < j; ++k)
      uses[k].operand->set(values[uses[k].member]);
    i = j;
  }
  return success();
}

void ZeroRewriter::finishSignature() {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  auto attrsOf = [&](ArrayAttr old, unsigned oldCount,
                     ArrayRef<DictionaryAttr> added) {
    SmallVector<Attribute> all;
    for (unsigned i = 0; i < oldCount; ++i)
      all.push_back(old ? old[i] : b.getDictionaryAttr({}));
    all.append(added.begin(), added.end());
    return b.getArrayAttr(all);
  };
  ArrayAttr args = attrsOf(func.getAllArgAttrs(), oldNumArgs, newArgAttrs);
  ArrayAttr results =
      attrsOf(func.getAllResultAttrs(), oldNumResults, newResultAttrs);
  func.setType(FunctionType::get(func.getContext(), body.getArgumentTypes(),
                                 ret.getOperandTypes()));
  func.setAllArgAttrs(args);
  func.setAllResultAttrs(results);
}

/// The loss and any other output computed from the rank's share of the
/// batch: averaged across ranks, so every rank returns the global batch's
/// value (the mean of equal shares' means is the mean).
LogicalResult ZeroRewriter::averageLoss() {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  b.setInsertionPoint(ret);
  for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
    RoleAttr role = resultRole(i);
    if (!role || role.getValue() != Role::output ||
        !split->isPartial(ret.getOperand(i)))
      continue;
    Value v = ret.getOperand(i);
    auto type = cast<RankedTensorType>(v.getType());
    if (!isa<FloatType>(type.getElementType()))
      return ret.emitOpError("mw-zero: output #")
             << i << " is an integer computed from the rank's share of the "
             << "batch, which cannot be averaged";
    Value sum = b.create<mesh::AllReduceOp>(
        loc, type, mesh, axes, v,
        mesh::ReductionKindAttr::get(b.getContext(),
                                     mesh::ReductionKind::Sum));
    ++collectives;
    ret.setOperand(i, b.create<MulOp>(loc, sum,
                                      splat(type, 1.0 / double(ranks))));
  }
  return success();
}

/// Stage 3 with overlap: each gather starts `depth` runs ahead of its use
/// (at the use of an earlier run), so it runs under that run's compute; the
/// depth follows from prefetch-bucket and max-live-parameters, fixed here,
/// so the peak is the same every step.
void ZeroRewriter::prefetch() {
  renumber();
  llvm::stable_sort(gathers, [&](auto &x, auto &y) {
    return position.lookup(x.second) < position.lookup(y.second);
  });
  int64_t largest = 1;
  for (const Bucket &bk : buckets)
    if (!bk.whole)
      largest = std::max(largest, bk.padded);
  int64_t depth = std::max<int64_t>(1, prefetchBucket / largest);
  // At most maxLive gathered elements at once: the run in use and those in
  // flight.
  depth = std::max<int64_t>(1, std::min(depth, maxLive / largest - 1));
  // Gather k starts before the wait of gather k - depth; the first `depth`
  // gathers before the first wait. In order, so the gathers start in the
  // order of their uses.
  for (size_t k = 1; k < gathers.size(); ++k) {
    size_t ahead = k >= static_cast<size_t>(depth) ? k - depth : 0;
    Operation *earlier = gathers[ahead].second; // a wait
    gathers[k].first->moveBefore(earlier);
  }
}

/// What the DeepSpeed configuration's "auto" values and checks need to know
/// about the step.
memwall::zero::ModelFacts factsOf(func::FuncOp func, int64_t ranks) {
  memwall::zero::ModelFacts facts;
  facts.ranks = ranks;
  Block &body = func.getBody().front();
  Value firstInput;
  for (BlockArgument arg : body.getArguments()) {
    auto role = func.getArgAttrOfType<RoleAttr>(arg.getArgNumber(), "mw.role");
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!role || !type)
      continue;
    if (role.getValue() == Role::param) {
      facts.numParameters += type.getNumElements();
      // The hidden size: the width of the first matrix (the embedding).
      if (!facts.hiddenSize && type.getRank() == 2)
        facts.hiddenSize = type.getDimSize(1);
    }
    if (role.getValue() == Role::input && type.getRank() > 0 &&
        !facts.microBatchSize) {
      facts.microBatchSize = type.getDimSize(0);
      firstInput = arg;
    }
  }
  int64_t microSlices = 0;
  for (Operation &op : body) {
    if (auto cast = dyn_cast<CastOp>(op)) {
      Type to = cast.getResult().getType().getElementType();
      if (to.isBF16())
        facts.precision = memwall::zero::StepPrecision::BF16;
      else if (to.isF16())
        facts.precision = memwall::zero::StepPrecision::FP16;
    }
    if (auto adam = dyn_cast<AdamWOp>(op)) {
      facts.optimizer = memwall::zero::StepOptimizer::AdamW;
      facts.learningRate = adam.getLr().convertToDouble();
      facts.beta1 = adam.getBeta1().convertToDouble();
      facts.beta2 = adam.getBeta2().convertToDouble();
      facts.epsilon = adam.getEps().convertToDouble();
      facts.weightDecay = adam.getWeightDecay().convertToDouble();
    } else if (auto sgd = dyn_cast<SgdOp>(op)) {
      facts.optimizer = memwall::zero::StepOptimizer::SGD;
      facts.learningRate = sgd.getLr().convertToDouble();
      facts.momentum = sgd.getMomentum().convertToDouble();
      facts.weightDecay = sgd.getWeightDecay().convertToDouble();
    }
    // Grad-accum: the step slices its input into micro-batches.
    if (auto slice = dyn_cast<SliceOp>(op))
      if (firstInput && slice.getInput() == firstInput)
        ++microSlices;
  }
  if (microSlices > 1 && facts.microBatchSize) {
    facts.gradientAccumulation = microSlices;
    facts.microBatchSize = *facts.microBatchSize / microSlices;
  } else {
    facts.gradientAccumulation = 1;
  }
  // The step's batch is the global one: the rank's share is 1/ranks of it.
  if (facts.microBatchSize && *facts.microBatchSize % ranks == 0)
    facts.microBatchSize = *facts.microBatchSize / ranks;
  return facts;
}

struct MwZeroPass : public mw::impl::MwZeroBase<MwZeroPass> {
  using MwZeroBase::MwZeroBase;
  void runOnOperation() override;
};

void MwZeroPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto fail = [&](const Twine &msg) {
    module.emitError() << "mw-zero: " << msg;
    signalPassFailure();
  };
  auto func = module.lookupSymbol<func::FuncOp>(function);
  if (!func || func.isExternal())
    return fail("no function @" + function + " to shard (function=)");

  // The DeepSpeed configuration, overridden by explicit options; per run
  // (a pass instance may run on several modules).
  std::optional<memwall::zero::ZeroConfig> zeroConfig;
  memwall::zero::HostResidentBytes offload;
  int64_t st = stage, nRanks = ranks, rBucket = reduceBucket,
          agBucket = allgatherBucket, pfBucket = prefetchBucket,
          persist = persistenceThreshold, live = maxLiveParameters;
  std::string ov = overlap;
  if (!config.empty()) {
    auto buffer = llvm::MemoryBuffer::getFile(config, /*IsText=*/true);
    if (!buffer)
      return fail("cannot read config=" + config + ": " +
                  buffer.getError().message());
    memwall::zero::ZeroOverrides o;
    if (stage >= 0)
      o.stage = stage;
    if (ranks > 0)
      o.ranks = ranks;
    if (reduceBucket > 0)
      o.reduceBucketSize = reduceBucket;
    if (allgatherBucket > 0)
      o.allgatherBucketSize = allgatherBucket;
    if (prefetchBucket > 0)
      o.prefetchBucketSize = prefetchBucket;
    if (persistenceThreshold >= 0)
      o.paramPersistenceThreshold = persistenceThreshold;
    if (maxLiveParameters > 0)
      o.maxLiveParameters = maxLiveParameters;
    if (!overlap.empty())
      o.overlapComm = overlap == "on";
    memwall::zero::ModelFacts facts = factsOf(func, ranks > 0 ? ranks : 1);
    func.walk([&](Operation *op) {
      facts.rematApplied |= op->hasAttr("mw.recompute");
    });
    memwall::zero::DeepSpeedConfigResult parsed =
        memwall::zero::parseDeepSpeedConfig((*buffer)->getBuffer(), config,
                                            facts, o);
    // Each message at its place in the file.
    for (const memwall::zero::ConfigDiagnostic &d : parsed.diagnostics) {
      Location at = FileLineColLoc::get(&getContext(), config, d.line,
                                        d.column);
      std::string text = d.keyPath.empty() ? d.message
                                           : d.keyPath + ": " + d.message;
      if (d.severity == memwall::zero::Severity::Error)
        mlir::emitError(at) << text;
      else if (d.severity == memwall::zero::Severity::Warning)
        mlir::emitWarning(at) << text;
      else
        mlir::emitRemark(at) << text;
    }
    if (parsed.hasErrors())
      return signalPassFailure();
    const memwall::zero::ZeroConfig &c = parsed.config;
    // What each "auto" became, as Hugging Face's integration would resolve
    // it: one remark per setting, at the file.
    {
      std::string report;
      llvm::raw_string_ostream os(report);
      memwall::zero::printZeroConfigReport(c, facts, os);
      for (StringRef line : llvm::split(os.str(), '\n'))
        if (line.contains("auto -> "))
          mlir::emitRemark(FileLineColLoc::get(&getContext(), config, 0, 0))
              << "resolved " << line.trim();
    }
    // gradient_checkpointing (the source articles' key) is Hugging Face's:
    // a checkpoint at every transformer block, --mw-remat=strategy=every-k
    // k=1 (sqrt on a step without blocks), before the step is sharded.
    if (c.rematRequested.value && !facts.rematApplied) {
      OpPassManager pm(ModuleOp::getOperationName());
      MwRematOptions remat;
      remat.function = function;
      bool layered = false;
      func.walk([&](Operation *op) { layered |= op->hasAttr("mw.layer"); });
      remat.strategy = layered ? RematStrategy::EveryK : RematStrategy::Sqrt;
      remat.k = 1;
      pm.addPass(createMwRemat(remat));
      if (failed(runPipeline(pm, module)))
        return signalPassFailure();
    }
    st = c.stage.value;
    nRanks = c.ranks.value;
    rBucket = c.reduceBucketSize.value;
    agBucket = c.allgatherBucketSize.value;
    pfBucket = c.prefetchBucketSize.value;
    persist = c.paramPersistenceThreshold.value;
    live = c.maxLiveParameters.value;
    ov = c.overlapComm.value ? "on" : "off";
    zeroConfig = c;
    offload = memwall::zero::computeHostResidentBytes(c, facts);
    if (offload.total() || offload.nvmeBytes)
      mlir::emitRemark(FileLineColLoc::get(&getContext(), config, 0, 0))
          << "mw-zero: offload_param/offload_optimizer accepted and reported, "
             "not executed by the training step (its arguments still hold "
             "the state): per rank "
          << offload.paramHostBytes << " B of parameters and "
          << offload.optimizerHostBytes << " B of optimizer state in host "
          << "memory, " << offload.nvmeBytes << " B on NVMe, "
          << offload.pinnedBufferBytes
          << " B of pinned buffers (the memory report's host-resident line)";
  }
  if (st < 0)
    st = 0;
  if (st > 3)
    return fail("stage=" + Twine(st) + " is not a ZeRO stage (0, 1, 2 "
                "or 3)");
  if (nRanks < 1)
    return fail("ranks=" + Twine(nRanks) + ": give the number of "
                "data-parallel ranks, at least 1");
  if (ov != "" && ov != "on" && ov != "off")
    return fail("overlap=" + ov + ": expected on or off");
  for (auto [name, v] :
       {std::pair<StringRef, int64_t>{"reduce-bucket", rBucket},
        {"allgather-bucket", agBucket},
        {"prefetch-bucket", pfBucket},
        {"max-live-parameters", live}})
    if (v == 0 || v < -1)
      return fail(Twine(name) + "=" + Twine(v) + ": a bucket holds at least "
                  "one element");
  if (persist < -1)
    return fail("persistence-threshold=" + Twine(persist) +
                ": expected a count of elements, at least 0");

  // The mesh: made here, or checked when the module has one.
  if (auto existing = module.lookupSymbol<mesh::MeshOp>(kMeshName)) {
    if (existing.getShape() != ArrayRef<int64_t>{nRanks})
      return fail("the module's mesh @dp does not have shape " +
                  Twine(nRanks));
  } else {
    OpBuilder mb(module.getBodyRegion());
    mb.setInsertionPointToStart(module.getBody());
    mb.create<mesh::MeshOp>(module.getLoc(), kMeshName,
                            mb.getDenseI64ArrayAttr({nRanks}));
  }

  BatchSplit split;
  split.ranks = nRanks;
  if (failed(splitBatch(func, split)))
    return signalPassFailure();

  ZeroRewriter rw(func, st, nRanks);
  rw.split = &split;
  rw.overlap = ov == "on";
  rw.reduceBucket = rBucket > 0 ? rBucket : kDefaultReduceBucket;
  // Pieces are gathered per reduce bucket (the partition is per bucket), so
  // a separate all-gather bucket size has nothing to act on yet.
  if (allgatherBucket > 0 || (zeroConfig && zeroConfig->allgatherBucketSize.isGiven()))
    mlir::emitWarning(module.getLoc())
        << "mw-zero: allgather-bucket (allgather_bucket_size) has no effect: "
           "parameters are gathered in the reduce buckets, which are also "
           "the partition (docs/zero.md, Buckets and the partition)";
  rw.prefetchBucket = pfBucket > 0 ? pfBucket : kDefaultPrefetchBucket;
  rw.threshold = persist >= 0 ? persist : kDefaultPersistenceThreshold;
  rw.splitSums = splitSums;
  if (splitSums && st < 2)
    mlir::emitWarning(module.getLoc())
        << "mw-zero: split-sums has no effect at stage " << st
        << ": gradients are reduced "
        << (st == 0 ? "by all-reduce" : "after the backward pass")
        << ", not as the backward pass makes them";
  rw.maxLive = live > 0 ? live : kDefaultMaxLiveParameters;
  if (failed(rw.run()))
    return signalPassFailure();
  // The stage, for the memory report (a stage-1 and a stage-2 program can
  // look alike: one bucket and nothing between backward and the update).
  func->setAttr("mw.zero.stage",
                IntegerAttr::get(IntegerType::get(&getContext(), 64), st));
  // offload_* of the config: reported by the memory report, not executed.
  auto i64 = IntegerType::get(&getContext(), 64);
  for (auto [name, bytes] :
       {std::pair<StringRef, int64_t>{"mw.zero.offload_param_host_bytes",
                                      offload.paramHostBytes},
        {"mw.zero.offload_optimizer_host_bytes", offload.optimizerHostBytes},
        {"mw.zero.offload_nvme_bytes", offload.nvmeBytes},
        {"mw.zero.offload_buffer_bytes", offload.pinnedBufferBytes}})
    if (bytes)
      func->setAttr(name, IntegerAttr::get(i64, bytes));
  numCollectives = rw.collectives;
  numBuckets = rw.buckets.size();
  if (failed(verify(func)))
    return signalPassFailure();
}

} // namespace
