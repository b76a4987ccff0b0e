//===- MwSink.cpp - --mw-sink ---------------------------------------------===//
//
// A memory-aware reordering of a step on tensors, before bufferization (as
// XLA's memory scheduler reorders an HLO schedule): an op whose result is
// read much later, such as the tied embedding's gradient from the lm_head,
// which autodiff computes first and adds to the embedding's own gradient
// last, keeps its result live across everything in between. Moving the op
// to just before its first user shortens its result's lifetime and
// lengthens those of the operands it was the last reader of; the pass
// makes such a move only where it lowers the step's peak of live tensor
// bytes.
//
// The model of live bytes is the arena's at tensor level: every top-level
// tensor result is a buffer from its op to its last reader (an mw.reshape's
// result is its operand's buffer, a view), function arguments are
// persistent and not counted, and so are the results of optimizer updates,
// written into the parameters and states they replace; returned values
// live to the end. The peak is
// the largest sum at one op. Each round tries, in program order, every op
// whose first reader is not the next op and whose move spans all of the
// profile's peak ops (no other move can lower the peak), keeps the move
// giving the lowest peak (the earliest on ties) when it lowers the current
// one by more than 1/1024 of it, and starts again until no move does. Only the
// order changes, never an op, so mw-eval gives bit-identical outputs.
//
//===----------------------------------------------------------------------===//

#include "memwall/Dialect/MW/IR/MWOps.h"
#include "memwall/Dialect/MW/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "mw-sink"

namespace mlir::mw {
#define GEN_PASS_DEF_MWSINK
#include "memwall/Dialect/MW/Transforms/Passes.h.inc"
} // namespace mlir::mw

using namespace mlir;
using namespace mlir::mw;

namespace {

/// Whether result `index` of `op` is written into the function argument it
/// updates (--mw-form-kernels' rule for optimizer updates, also inside a
/// horizontal fusion): a persistent buffer, not counted.
bool updatesArgument(Operation *op, unsigned index) {
  if (auto fusion = dyn_cast<FusionOp>(op))
    return fusion.getKind() == FusionKind::horizontal;
  if (!isa<AdamWOp, SgdOp, LossScaleUpdateOp, KvCacheWriteOp>(op))
    return false;
  std::optional<unsigned> tied = getInPlaceOperand(op, index);
  return tied && isa<BlockArgument>(op->getOperand(*tied));
}

/// The ops of one function body and the buffers of their results, as
/// indices: buffer b is defined by op def[b], read by the ops in
/// readers[b] (views included), and returned when `returned[b]`.
struct Schedule {
  SmallVector<Operation *> ops;
  SmallVector<int64_t> bytes;
  SmallVector<int> def;
  SmallVector<SmallVector<int>> readers;
  SmallVector<bool> returned;
  /// The buffer of the operand that buffer b's op may write b into (the op's
  /// in-place rule, MW_ElementwiseInPlace or MW_TiedResults), or -1.
  SmallVector<int> tied;
  /// Per op: the buffers it defines.
  SmallVector<SmallVector<int>> defines;

  explicit Schedule(Block &body);

  /// Live bytes at each position of `order` (a permutation of op indices).
  SmallVector<int64_t> profile(ArrayRef<int> order) const;
};

Schedule::Schedule(Block &body) {
  llvm::DenseMap<Operation *, int> index;
  llvm::DenseMap<Value, int> bufferOf;
  for (Operation &op : body.without_terminator()) {
    int i = static_cast<int>(ops.size());
    index[&op] = i;
    ops.push_back(&op);
    defines.emplace_back();
    for (Value r : op.getResults()) {
      if (!isa<RankedTensorType>(r.getType()))
        continue;
      if (isa<ReshapeOp>(op))
        if (auto it = bufferOf.find(op.getOperand(0)); it != bufferOf.end()) {
          bufferOf[r] = it->second; // a view of its operand's buffer
          continue;
        }
      if (updatesArgument(&op, cast<OpResult>(r).getResultNumber()))
        continue; // the argument's own buffer: persistent
      int b = static_cast<int>(bytes.size());
      bufferOf[r] = b;
      bytes.push_back(mw::detail::tensorBytes(r.getType()));
      def.push_back(i);
      readers.emplace_back();
      returned.push_back(false);
      tied.push_back(-1);
      defines[i].push_back(b);
      std::optional<unsigned> t =
          getInPlaceOperand(&op, cast<OpResult>(r).getResultNumber());
      if (t && op.getOperand(*t).getType() == r.getType())
        if (auto it = bufferOf.find(op.getOperand(*t)); it != bufferOf.end())
          tied[b] = it->second;
    }
  }
  Operation *terminator = body.getTerminator();
  for (Operation *op : ops)
    op->walk([&](Operation *nested) {
      for (Value v : nested->getOperands()) {
        auto it = bufferOf.find(v);
        if (it == bufferOf.end())
          continue;
        Operation *top = body.findAncestorOpInBlock(*nested);
        readers[it->second].push_back(index.lookup(top));
      }
    });
  for (Value v : terminator->getOperands())
    if (auto it = bufferOf.find(v); it != bufferOf.end())
      returned[it->second] = true;
}

SmallVector<int64_t> Schedule::profile(ArrayRef<int> order) const {
  size_t n = order.size();
  SmallVector<int> at(n);
  for (auto [p, op] : llvm::enumerate(order))
    at[op] = static_cast<int>(p);
  size_t nb = bytes.size();
  SmallVector<int> end(nb);
  for (size_t b = 0; b < nb; ++b) {
    end[b] = returned[b] ? static_cast<int>(n) - 1 : at[def[b]];
    for (int r : readers[b])
      end[b] = std::max(end[b], at[r]);
  }
  // A result written over a tied operand whose buffer's last reader is its
  // op (as --mw-form-kernels chooses and One-Shot Bufferize keeps) shares
  // that buffer: the two are one lifetime.
  SmallVector<int> group(nb);
  SmallVector<int64_t> delta(n + 1, 0);
  for (int op : order)
    for (int b : defines[op]) {
      group[b] = b;
      if (int t = tied[b]; t >= 0 && end[group[t]] == at[op]) {
        group[b] = group[t];
        end[group[t]] = std::max(end[group[t]], end[b]);
      }
    }
  for (size_t b = 0; b < nb; ++b) {
    if (group[b] != static_cast<int>(b))
      continue;
    delta[at[def[b]]] += bytes[b];
    delta[end[b] + 1] -= bytes[b];
  }
  SmallVector<int64_t> live(n);
  int64_t sum = 0;
  for (size_t p = 0; p < n; ++p)
    live[p] = sum += delta[p];
  return live;
}

/// Sinks ops of `body` and returns how many moved, with the peak of live
/// bytes before and after; -1 when the body has ops with memory effects
/// (bufferized IR), which it leaves alone.
int64_t sinkForMemory(Block &body, int64_t &peakBefore, int64_t &peakAfter) {
  for (Operation &op : body.without_terminator())
    if (!isMemoryEffectFree(&op))
      return -1;
  Schedule s(body);
  int n = static_cast<int>(s.ops.size());
  SmallVector<int> order(n);
  for (int i = 0; i < n; ++i)
    order[i] = i;
  // Per op: the ops that read its results (an op never moves past them).
  llvm::DenseMap<Operation *, int> index;
  for (int i = 0; i < n; ++i)
    index[s.ops[i]] = i;
  SmallVector<SmallVector<int>> users(n);
  for (int i = 0; i < n; ++i)
    for (Value v : s.ops[i]->getResults())
      for (Operation *user : v.getUsers())
        if (Operation *top = body.findAncestorOpInBlock(*user))
          if (auto it = index.find(top); it != index.end() && it->second != i)
            users[i].push_back(it->second);
  SmallVector<int64_t> live = s.profile(order);
  auto peakOf = [](ArrayRef<int64_t> l) {
    return l.empty() ? 0 : *llvm::max_element(l);
  };
  int64_t peak = peakOf(live);
  peakBefore = peak;
  int64_t moved = 0;
  // Each accepted move lowers the peak: the rounds end.
  while (true) {
    SmallVector<int> at(n);
    for (auto [p, op] : llvm::enumerate(order))
      at[op] = static_cast<int>(p);
    int firstPeak = -1, lastPeak = -1;
    for (int p = 0; p < n; ++p)
      if (live[p] == peak) {
        if (firstPeak < 0)
          firstPeak = p;
        lastPeak = p;
      }
    // A move must lower the peak by more than 1/1024 of it: reordering for a
    // few bytes (a bias gradient's 3 KB) would only part an op from the
    // producer it fuses with.
    int64_t bestPeak = peak - peak / 1024;
    SmallVector<int> best;
    for (int p = 0; p < n && p <= firstPeak; ++p) {
      int op = order[p];
      if (s.defines[op].empty() || s.ops[op]->getNumRegions() != 0)
        continue;
      int to = n; // the position of its first reader
      for (int u : users[op])
        to = std::min(to, at[u]);
      // Moving to just before `to` changes the profile on [p, to) only.
      if (to == n || to <= p + 1 || lastPeak >= to)
        continue;
      SmallVector<int> candidate(order);
      candidate.erase(candidate.begin() + p);
      candidate.insert(candidate.begin() + (to - 1), op);
      int64_t candidatePeak = peakOf(s.profile(candidate));
      if (candidatePeak < bestPeak) {
        bestPeak = candidatePeak;
        best = std::move(candidate);
      }
    }
    if (best.empty())
      break;
    LLVM_DEBUG(llvm::dbgs() << "mw-sink: peak " << peak << " -> " << bestPeak
                            << "\n");
    order = std::move(best);
    live = s.profile(order);
    peak = bestPeak;
    ++moved;
  }
  peakAfter = peak;
  if (!moved)
    return 0;
  Operation *terminator = body.getTerminator();
  for (int op : order)
    s.ops[op]->moveBefore(terminator);
  return moved;
}

struct MwSinkPass : public mw::impl::MwSinkBase<MwSinkPass> {
  using MwSinkBase::MwSinkBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.getFunctionBody().hasOneBlock())
        continue;
      int64_t before = 0, after = 0;
      int64_t moved =
          sinkForMemory(func.getFunctionBody().front(), before, after);
      if (moved <= 0)
        continue;
      numMoved += moved;
      if (report)
        llvm::outs() << "mw-sink @" << func.getName() << ": " << moved
                     << " ops moved, live tensor peak " << before << " -> "
                     << after << " bytes\n";
    }
  }
};

} // namespace
