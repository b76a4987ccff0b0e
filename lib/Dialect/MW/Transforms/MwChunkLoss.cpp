//===- MwChunkLoss.cpp - The LM head and its loss in chunks of rows -------===//
//
// --mw-chunk-loss: the [N, V] logits of a language model's head, their
// cross-entropy and its gradient are the largest transient tensors of a
// training step (gpt2-small: 196 MiB each at N = 1024). The pass computes
// them a chunk of rows at a time, each chunk's logits, loss, logits'
// gradient and its products with the weight and the hidden states before
// the next chunk's, so only one chunk's logits are ever live (what Liger
// Kernel's fused linear cross-entropy does by hand in PyTorch). Each row's
// values are the unchunked op's; the sums over rows (the loss, the weight's
// and the bias's gradients) add the chunks' partial sums.
//
//===----------------------------------------------------------------------===//

#include "TensorSchedule.h"

#include "memwall/Analysis/StepStructure.h"
#include "memwall/Dialect/MW/IR/MWOps.h"
#include "memwall/Dialect/MW/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::mw {
#define GEN_PASS_DEF_MWCHUNKLOSS
#include "memwall/Dialect/MW/Transforms/Passes.h.inc"
} // namespace mlir::mw

using namespace mlir;
using namespace mlir::mw;

namespace {

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

int64_t product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

/// `v` without the reshapes that made it.
Value throughReshapes(Value v) {
  while (auto reshape = v.getDefiningOp<ReshapeOp>())
    v = reshape.getInput();
  return v;
}

/// One LM head and its loss: logits = head(h, W) (+ bias), reshaped to
/// [N, V]; their cross-entropy and its gradient, and what reads the
/// gradient: products with W (the hidden states' gradient), products with
/// h contracting the rows (the weight's gradient) and sums over the rows
/// (the bias's gradient).
struct LossHead {
  MatmulOp head;
  AddOp bias;              // logits = head + bias, or null
  Value biasValue;         // [V]
  CrossEntropyOp loss;     // or null
  CrossEntropyGradOp grad; // or null
  Value logits;            // [N, V], read by loss and grad
  Value labels;            // [N]
  int64_t ignoreIndex = -100;
  SmallVector<MatmulOp> inputGrads;  // g @ W: rows of g
  SmallVector<MatmulOp> weightGrads; // g^T h or h^T g: sums over rows
  SmallVector<ReduceSumOp> biasGrads;
  SmallVector<Operation *> dead; // the ops the chunks replace
};

/// Why `logits` is not an LM head's loss the pass splits, or success with
/// `lh` filled in.
LogicalResult match(Value logits, LossHead &lh, std::string &why) {
  auto fail = [&](const Twine &t) {
    why = t.str();
    return failure();
  };
  lh.logits = logits;
  for (Operation *user : logits.getUsers()) {
    if (auto ce = dyn_cast<CrossEntropyOp>(user);
        ce && !lh.loss && !ce.getLabelOffset()) {
      lh.loss = ce;
      continue;
    }
    if (auto g = dyn_cast<CrossEntropyGradOp>(user);
        g && !lh.grad && !g.getLabelOffset() && g.getLogits() == logits) {
      lh.grad = g;
      continue;
    }
    return fail("the logits have another reader: '" +
                user->getName().getStringRef() + "'");
  }
  if (lh.loss && lh.grad &&
      (lh.loss.getLabels() != lh.grad.getLabels() ||
       lh.loss.getIgnoreIndex() != lh.grad.getIgnoreIndex()))
    return fail("the loss and its gradient read different labels");
  Operation *anyCe = lh.grad ? lh.grad.getOperation() : lh.loss.getOperation();
  lh.labels = anyCe->getOperand(1);
  lh.ignoreIndex = lh.grad ? static_cast<int64_t>(lh.grad.getIgnoreIndex())
                           : static_cast<int64_t>(lh.loss.getIgnoreIndex());
  if (shapeOf(logits).size() != 2 || shapeOf(lh.labels).size() != 1 ||
      !cast<RankedTensorType>(logits.getType()).hasStaticShape())
    return fail("the logits are not [N, V] with labels [N]");
  int64_t rows = shapeOf(logits)[0], classes = shapeOf(logits)[1];

  // Up from the logits: reshapes, an optional bias, the head's matmul; each
  // value read only by the next.
  Value v = logits;
  while (true) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return fail("the logits are not computed in the function");
    if (v != logits && !v.hasOneUse())
      return fail("a value between the head and the loss has another "
                  "reader");
    lh.dead.push_back(def);
    if (auto reshape = dyn_cast<ReshapeOp>(def)) {
      v = reshape.getInput();
      continue;
    }
    if (auto add = dyn_cast<AddOp>(def); add && !lh.bias) {
      for (unsigned side = 0; side < 2; ++side) {
        Value other = add->getOperand(1 - side);
        if (add->getOperand(side).getDefiningOp<MatmulOp>() &&
            shapeOf(other) == ArrayRef<int64_t>{classes} &&
            shapeOf(add->getOperand(side)) == shapeOf(add.getResult())) {
          lh.bias = add;
          lh.biasValue = other;
          v = add->getOperand(side);
          break;
        }
      }
      if (lh.bias)
        continue;
    }
    auto head = dyn_cast<MatmulOp>(def);
    if (!head)
      return fail("the logits are not a matmul's product (they come from '" +
                  def->getName().getStringRef() + "')");
    lh.head = head;
    break;
  }
  MatmulOp head = lh.head;
  ArrayRef<int64_t> hShape = shapeOf(head.getLhs());
  if (head.getTransposeLhs() || shapeOf(head.getRhs()).size() != 2 ||
      hShape.size() < 2 || product(hShape.drop_back()) != rows ||
      shapeOf(head.getResult()).back() != classes)
    return fail("the head is not [..., D] x a [V, D] or [D, V] weight");
  Value h = throughReshapes(head.getLhs()), w = head.getRhs();
  int64_t width = hShape.back();

  // Down from the logits' gradient, through reshapes.
  if (lh.grad) {
    SmallVector<Value> work{lh.grad.getResult()};
    while (!work.empty()) {
      Value g = work.pop_back_val();
      // Rows of the logits' gradient in order, whatever the leading shape:
      // a reshape that moves the class dimension is read as something else.
      if (shapeOf(g).empty() || shapeOf(g).back() != classes)
        return fail("the logits' gradient is reshaped across its classes");
      for (Operation *user : g.getUsers()) {
        if (auto reshape = dyn_cast<ReshapeOp>(user)) {
          lh.dead.push_back(reshape);
          work.push_back(reshape.getResult());
          continue;
        }
        if (auto sum = dyn_cast<ReduceSumOp>(user)) {
          int64_t rank = shapeOf(g).size();
          auto all = llvm::to_vector(llvm::seq<int64_t>(0, rank - 1));
          if (ArrayRef<int64_t>(sum.getAxes()) == ArrayRef<int64_t>(all) &&
              !sum.getKeepdims()) {
            lh.biasGrads.push_back(sum);
            continue;
          }
          return fail("the logits' gradient is summed over other axes than "
                      "its rows");
        }
        auto mm = dyn_cast<MatmulOp>(user);
        if (!mm)
          return fail("the logits' gradient has a reader the pass cannot "
                      "split: '" +
                      user->getName().getStringRef() + "'");
        // The hidden states' gradient: g @ W^T for h @ W, g @ W for h @ W^T.
        if (mm.getLhs() == g && mm.getRhs() == w && !mm.getTransposeLhs() &&
            mm.getTransposeRhs() != head.getTransposeRhs()) {
          lh.inputGrads.push_back(mm);
          continue;
        }
        // The weight's gradient: g^T h ([V, D]) or h^T g ([D, V]).
        Value other = mm.getLhs() == g ? mm.getRhs() : mm.getLhs();
        bool gLhs = mm.getLhs() == g;
        if (shapeOf(g).size() == 2 && shapeOf(other).size() == 2 &&
            throughReshapes(other) == h &&
            shapeOf(other) == ArrayRef<int64_t>{rows, width} &&
            mm.getTransposeLhs() && !mm.getTransposeRhs() &&
            gLhs == head.getTransposeRhs() &&
            mm.getType() == head.getRhs().getType()) {
          lh.weightGrads.push_back(mm);
          if (Operation *view = other.getDefiningOp<ReshapeOp>())
            lh.dead.push_back(view); // erased if nothing else reads it
          continue;
        }
        return fail("the logits' gradient is multiplied by something other "
                    "than the head's weight and hidden states");
      }
    }
    lh.dead.push_back(lh.grad);
  }
  if (lh.loss)
    lh.dead.push_back(lh.loss);
  return success();
}

/// The add that finishes `lh`'s weight gradient with a value made after
/// `at` (a tied embedding's gradient, made at the end of the backward
/// pass), and that value; null where there is none.
std::pair<AddOp, Value> lateWeightGrad(LossHead &lh, Operation *at) {
  if (!lh.grad || lh.weightGrads.size() != 1)
    return {};
  Value grad = lh.weightGrads.front().getResult();
  if (!grad.hasOneUse())
    return {};
  auto add = dyn_cast<AddOp>(*grad.getUsers().begin());
  if (!add || add->getBlock() != at->getBlock())
    return {};
  Value other = add.getLhs() == grad ? add.getRhs() : add.getLhs();
  Operation *def = other.getDefiningOp();
  if (other == grad || other.getType() != grad.getType() ||
      add.getType() != grad.getType() || !def ||
      def->getBlock() != at->getBlock() || def->isBeforeInBlock(at))
    return {};
  return {add, other};
}

/// The rows of chunk `i` of `chunks` over `rows`: as even as can be, the
/// first chunks one row longer.
std::pair<int64_t, int64_t> chunkRows(int64_t rows, int64_t chunks, int64_t i) {
  int64_t base = rows / chunks, extra = rows % chunks;
  int64_t first = i * base + std::min(i, extra);
  return {first, base + (i < extra ? 1 : 0)};
}

struct MwChunkLossPass : public mw::impl::MwChunkLossBase<MwChunkLossPass> {
  using MwChunkLossBase::MwChunkLossBase;

  void runOnOperation() override {
    if (chunks < 1) {
      getOperation().emitError("mw-chunk-loss: chunks=")
          << static_cast<int64_t>(chunks)
          << " (expected a count of at least 1)";
      return signalPassFailure();
    }
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && failed(runOnFunction(func)))
        return signalPassFailure();
  }

  /// Chunks each head of `func` on a copy of it, which replaces the body
  /// when its peak of live tensor bytes (TensorSchedule: the arena's rules
  /// on unfused tensors) is no higher than the body's, or with `force`.
  LogicalResult runOnFunction(func::FuncOp func) {
    auto say = [&](const Twine &what) {
      if (report)
        llvm::outs() << "mw-chunk-loss @" << func.getSymName() << ": " << what
                     << "\n";
    };
    for (size_t skip = 0;;) {
      SmallVector<Value> candidates = candidatesIn(func);
      if (skip >= candidates.size())
        return success();
      // The early form, and with defer-weight-grad the deferred one: each
      // on its own copy of the function.
      std::string why, summary;
      FailureOr<func::FuncOp> copy =
          chunkedCopy(func, candidates[skip], /*defer=*/false, why, summary);
      if (failed(copy))
        return failure();
      if (!*copy) {
        say("left whole: " + why);
        ++skip;
        continue;
      }
      auto discard = llvm::make_scope_exit([&] { (*copy).erase(); });
      int64_t before = livePeak(func), after = livePeak(*copy);
      if (deferWeightGrad) {
        std::string lateWhy, lateSummary;
        FailureOr<func::FuncOp> late = chunkedCopy(
            func, candidates[skip], /*defer=*/true, lateWhy, lateSummary);
        if (failed(late))
          return failure();
        if (!*late) {
          if (!lateWhy.empty())
            say("weight gradient not deferred: " + lateWhy);
        } else {
          int64_t latePeak = livePeak(*late);
          if (latePeak < after) {
            std::swap(*copy, *late);
            std::swap(summary, lateSummary);
            after = latePeak;
          } else {
            say("weight gradient not deferred: the live tensor peak would be " +
                Twine(latePeak) + " bytes, not lower than " + Twine(after));
          }
          (*late).erase();
        }
      }
      if (after > before && !force) {
        say("left whole: " + summary +
            " would raise the live tensor peak "
            "from " +
            Twine(before) + " to " + Twine(after) + " bytes");
        ++skip;
        continue;
      }
      say(summary + ", live tensor peak " + Twine(before) + " -> " +
          Twine(after) + " bytes");
      func.getBody().takeBody((*copy).getBody());
    }
  }

  /// A copy of `func` with the head of `logits` chunked (with `defer`: its
  /// weight gradient deferred where it can be, and a null function where it
  /// cannot, with `why` empty where there is no weight gradient); a null
  /// function, with `why`, where the head is left whole.
  FailureOr<func::FuncOp> chunkedCopy(func::FuncOp func, Value logits,
                                      bool defer, std::string &why,
                                      std::string &summary) {
    IRMapping mapping;
    func::FuncOp copy = func.clone(mapping);
    auto discard = llvm::make_scope_exit([&] { copy.erase(); });
    LossHead lh;
    if (failed(match(mapping.lookup(logits), lh, why)))
      return func::FuncOp();
    bool deferred = false;
    FailureOr<bool> changed = rewrite(lh, defer, why, summary, deferred);
    if (failed(changed))
      return failure();
    // A loss without its gradient (a forward) has nothing to defer, and
    // nothing to say about it.
    if (*changed && defer && !deferred)
      why = lh.weightGrads.empty()
                ? ""
                : "the weight's gradient is not added to a value made after "
                  "the chunks";
    if (!*changed || defer != deferred)
      return func::FuncOp();
    discard.release();
    return copy;
  }

  /// The logits of the loss ops in `func`'s body not chunked yet.
  static SmallVector<Value> candidatesIn(func::FuncOp func) {
    SmallVector<Value> candidates;
    for (Operation &op : func.getBody().front()) {
      Value logits;
      if (auto g = dyn_cast<CrossEntropyGradOp>(op); g && !g.getLabelOffset())
        logits = g.getLogits();
      else if (auto ce = dyn_cast<CrossEntropyOp>(op);
               ce && !ce.getLabelOffset())
        logits = ce.getLogits();
      if (logits && !llvm::is_contained(candidates, logits))
        candidates.push_back(logits);
    }
    return candidates;
  }

  int64_t livePeak(func::FuncOp func) {
    return hoistedPeak(func.getBody().front(), fused);
  }

  /// Chunks `lh` where it stands: true, with `summary` saying how; false,
  /// with `why`, where it is left whole. With `defer`, a weight gradient
  /// added to a later value is made where that add was (lateWeightGrad),
  /// and `deferred` says whether it was.
  FailureOr<bool> rewrite(LossHead &lh, bool defer, std::string &why,
                          std::string &summary, bool &deferred);
};

FailureOr<bool> MwChunkLossPass::rewrite(LossHead &lh, bool defer,
                                         std::string &why, std::string &summary,
                                         bool &deferred) {
  deferred = false;
  // The chunks go where the last of the loss and its gradient was: every
  // operand is defined before it, and the readers of what they replace come
  // after it (the loss's readers are checked).
  Operation *at = lh.grad ? lh.grad.getOperation() : lh.loss.getOperation();
  if (lh.loss && lh.grad && lh.grad->isBeforeInBlock(lh.loss))
    at = lh.loss;
  auto leaveWhole = [&](StringRef reason) -> FailureOr<bool> {
    why = reason.str();
    return false;
  };
  if (lh.loss && lh.grad && at == lh.grad &&
      llvm::any_of(lh.loss.getResult().getUsers(), [&](Operation *user) {
        return user->getBlock() != at->getBlock() || user->isBeforeInBlock(at);
      })) {
    // The loss is read before its gradient (a ZeRO step's all-reduce of
    // it): the chunks go where the loss was, with the gradient's seed
    // moved up when it is a constant.
    Operation *seed = lh.grad.getGradLoss().getDefiningOp();
    if (seed && seed->getBlock() == at->getBlock() &&
        !seed->isBeforeInBlock(lh.loss)) {
      if (!isa<SplatOp, ConstantOp>(seed) || seed->getNumOperands())
        return leaveWhole("the loss is read before its gradient's seed is "
                          "made");
      seed->moveBefore(lh.loss);
    }
    at = lh.loss;
  }
  int64_t rows = shapeOf(lh.logits)[0], classes = shapeOf(lh.logits)[1];
  int64_t n = std::min<int64_t>(chunks, rows);
  if (n <= 1)
    return leaveWhole("one chunk");
  auto [lateAdd, lateSeed] =
      defer ? lateWeightGrad(lh, at) : std::pair<AddOp, Value>();
  deferred = static_cast<bool>(lateAdd);
  MatmulOp head = lh.head;
  Value w = head.getRhs();
  auto hType = cast<RankedTensorType>(head.getLhs().getType());
  Type elem = hType.getElementType();
  int64_t width = hType.getShape().back();
  OpBuilder b(at);
  // New ops keep the location and the discardable attributes (mw.layer) of
  // the op they stand for.
  auto like = [&](Operation *op, Operation *original) {
    for (NamedAttribute a : original->getDiscardableAttrs())
      op->setAttr(a.getName(), a.getValue());
    return op;
  };
  auto tensor = [&](ArrayRef<int64_t> shape, Type t) {
    return RankedTensorType::get(shape, t);
  };
  Location headLoc = head.getLoc();
  Value h2 = head.getLhs();
  if (hType.getRank() != 2)
    h2 = like(b.create<ReshapeOp>(headLoc, tensor({rows, width}, elem), h2),
              head)
             ->getResult(0);
  Type f32 = b.getF32Type();
  // Sums over rows of half-precision values add up in f32: one rounding at
  // the end, as the unchunked product's f32 accumulation.
  auto accumulate = [&](Value &acc, Value part, Operation *original) {
    Type partElem = cast<RankedTensorType>(part.getType()).getElementType();
    if (partElem != f32)
      part = like(b.create<CastOp>(original->getLoc(),
                                   tensor(shapeOf(part), f32), part),
                  original)
                 ->getResult(0);
    acc = !acc ? part
               : like(b.create<AddOp>(original->getLoc(), acc, part), original)
                     ->getResult(0);
  };
  auto finish = [&](Value acc, Value original, Operation *op) {
    if (acc.getType() != original.getType())
      acc = like(b.create<CastOp>(op->getLoc(), original.getType(), acc), op)
                ->getResult(0);
    original.replaceAllUsesWith(acc);
  };
  Value lossAcc;
  SmallVector<Value> weightAcc(lh.weightGrads.size()),
      biasAcc(lh.biasGrads.size());
  SmallVector<SmallVector<Value>> inputParts(lh.inputGrads.size());
  Type logitsElem =
      cast<RankedTensorType>(lh.logits.getType()).getElementType();
  // Chunk i's rows of h and their logits; marked as recomputed where they
  // are made a second time (the deferred weight gradient's).
  auto sliceAndLogits = [&](int64_t i, bool again) {
    auto [first, count] = chunkRows(rows, n, i);
    auto mark = [&](Operation *op, Operation *original) {
      like(op, original);
      if (again)
        op->setAttr("mw.recompute", b.getUnitAttr());
      return op->getResult(0);
    };
    Value hi = mark(b.create<SliceOp>(headLoc, h2, ArrayRef<int64_t>{first, 0},
                                      ArrayRef<int64_t>{count, width}),
                    head);
    auto logitsType = tensor({count, classes}, logitsElem);
    Value li = mark(b.create<MatmulOp>(headLoc, logitsType, hi, w,
                                       /*transpose_lhs=*/false,
                                       head.getTransposeRhs()),
                    head);
    if (lh.bias)
      li = mark(b.create<AddOp>(lh.bias.getLoc(), logitsType, li, lh.biasValue),
                lh.bias);
    return std::make_pair(hi, li);
  };
  auto logitsGrad = [&](int64_t i, Value li, bool again) {
    Operation *gi =
        like(b.create<CrossEntropyGradOp>(
                 lh.grad.getLoc(), li.getType(), li, lh.labels,
                 lh.grad.getGradLoss(), b.getI64IntegerAttr(lh.ignoreIndex),
                 b.getI64IntegerAttr(chunkRows(rows, n, i).first)),
             lh.grad);
    if (again)
      gi->setAttr("mw.recompute", b.getUnitAttr());
    return gi->getResult(0);
  };
  // g^T h for a [V, D] weight (h W^T), h^T g for a [D, V] one (match).
  auto weightPart = [&](MatmulOp mm, Value hi, Value gi) {
    bool gLhs = head.getTransposeRhs();
    return like(b.create<MatmulOp>(mm.getLoc(), gLhs ? gi : hi, gLhs ? hi : gi,
                                   /*transposeLhs=*/true,
                                   /*transposeRhs=*/false),
                mm)
        ->getResult(0);
  };
  for (int64_t i = 0; i < n; ++i) {
    auto [first, count] = chunkRows(rows, n, i);
    auto [hi, li] = sliceAndLogits(i, /*again=*/false);
    IntegerAttr ignore = b.getI64IntegerAttr(lh.ignoreIndex);
    IntegerAttr offset = b.getI64IntegerAttr(first);
    if (lh.loss)
      accumulate(lossAcc,
                 like(b.create<CrossEntropyOp>(lh.loss.getLoc(),
                                               lh.loss.getResult().getType(),
                                               li, lh.labels, ignore, offset),
                      lh.loss)
                     ->getResult(0),
                 lh.loss);
    if (!lh.grad)
      continue;
    Value gi = logitsGrad(i, li, /*again=*/false);
    for (auto [k, mm] : llvm::enumerate(lh.inputGrads))
      inputParts[k].push_back(
          like(b.create<MatmulOp>(mm.getLoc(), gi, w, /*transposeLhs=*/false,
                                  mm.getTransposeRhs()),
               mm)
              ->getResult(0));
    if (!deferred)
      for (auto [k, mm] : llvm::enumerate(lh.weightGrads))
        accumulate(weightAcc[k], weightPart(mm, hi, gi), mm);
    for (auto [k, sum] : llvm::enumerate(lh.biasGrads)) {
      Value part =
          like(b.create<ReduceSumOp>(sum.getLoc(), gi, ArrayRef<int64_t>{0}),
               sum)
              ->getResult(0);
      accumulate(biasAcc[k], part, sum);
    }
  }
  if (lh.loss)
    finish(lossAcc, lh.loss.getResult(), lh.loss);
  for (auto [k, mm] : llvm::enumerate(lh.inputGrads)) {
    Value whole = like(b.create<ConcatOp>(mm.getLoc(), inputParts[k],
                                          /*axis=*/int64_t{0}),
                       mm)
                      ->getResult(0);
    if (whole.getType() != mm.getType())
      whole = like(b.create<ReshapeOp>(mm.getLoc(), mm.getType(), whole), mm)
                  ->getResult(0);
    mm.getResult().replaceAllUsesWith(whole);
    lh.dead.push_back(mm);
  }
  if (deferred) {
    // Where the later value is added: each chunk's logits and their
    // gradient again, and its product with h added into that value.
    MatmulOp mm = lh.weightGrads.front();
    b.setInsertionPoint(lateAdd);
    Value acc;
    accumulate(acc, lateSeed, lateAdd);
    for (int64_t i = 0; i < n; ++i) {
      auto [hi, li] = sliceAndLogits(i, /*again=*/true);
      accumulate(acc, weightPart(mm, hi, logitsGrad(i, li, /*again=*/true)),
                 mm);
    }
    finish(acc, lateAdd.getResult(), lateAdd);
    lh.dead.push_back(lateAdd);
    lh.dead.push_back(mm);
  } else {
    for (auto [k, mm] : llvm::enumerate(lh.weightGrads)) {
      finish(weightAcc[k], mm.getResult(), mm);
      lh.dead.push_back(mm);
    }
  }
  for (auto [k, sum] : llvm::enumerate(lh.biasGrads)) {
    finish(biasAcc[k], sum.getResult(), sum);
    lh.dead.push_back(sum);
  }
  // Erase what the chunks replaced, readers first (one block: the latest
  // first). A reshape of h that something else reads stays; every other op
  // must be gone.
  llvm::SetVector<Operation *> dead(lh.dead.begin(), lh.dead.end());
  SmallVector<Operation *> latestFirst(dead.begin(), dead.end());
  llvm::sort(latestFirst,
             [](Operation *a, Operation *b) { return b->isBeforeInBlock(a); });
  for (Operation *op : latestFirst) {
    if (op->use_empty()) {
      op->erase();
      continue;
    }
    if (!isa<ReshapeOp>(op) || op == lh.logits.getDefiningOp()) {
      op->emitError("mw-chunk-loss: an op the chunks replace is still read");
      return failure();
    }
  }
  llvm::raw_string_ostream os(summary);
  os << "[" << rows << ", " << classes << "] logits in " << n << " chunks of "
     << chunkRows(rows, n, 0).second << " rows"
     << (lh.grad ? ", with their gradient" : "")
     << (deferred ? ", the weight's gradient deferred to its sum with '" +
                        getLayerPath(lateAdd) + "' (logits made twice)"
                  : std::string());
  return true;
}

} // namespace
