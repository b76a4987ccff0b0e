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
// The model of live bytes is the arena's at tensor level (TensorSchedule.h):
// every top-level tensor result is a buffer from its op to its last reader
// (an mw.reshape's result is its operand's buffer, a view), function
// arguments are persistent and not counted, and so are the results of
// optimizer updates, written into the parameters and states they replace;
// returned values live to the end. The peak is the largest sum at one op.
// An op never moves past an update that overwrites a buffer it reads
// (--mw-hoist-updates may have put the update right after that read).
// Each round tries, in program order, every op whose first reader is not
// the next op and whose move spans all of the profile's peak ops (no other
// move can lower the peak), keeps the move giving the lowest peak (the
// earliest on ties) when it lowers the current one by more than 1/1024 of
// it, and starts again until no move does. Only the order changes, never an
// op, so mw-eval gives bit-identical outputs.
//
//===----------------------------------------------------------------------===//

#include "TensorSchedule.h"

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

/// Sinks ops of `body` and returns how many moved, with the peak of live
/// bytes before and after; -1 when the body has ops with memory effects
/// (bufferized IR), which it leaves alone.
int64_t sinkForMemory(Block &body, int64_t &peakBefore, int64_t &peakAfter) {
  for (Operation &op : body.without_terminator())
    if (!isMemoryEffectFree(&op))
      return -1;
  TensorSchedule s(body);
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
  // An update that overwrites a buffer in place counts as a reader of
  // every op before it that reads that buffer: sinking the read past the
  // update would make One-Shot Bufferize copy the buffer (--mw-hoist-updates
  // puts updates right after such reads).
  for (int i = 0; i < n; ++i)
    for (Value t : getOverwrittenOperands(s.ops[i]))
      forEachBufferReader(body, t, s.ops[i], [&](Operation *reader) {
        if (auto it = index.find(reader); it != index.end() && it->second < i)
          users[it->second].push_back(i);
      });
  SmallVector<int64_t> live = s.profile(order);
  int64_t peak = s.peak(order);
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
      int64_t candidatePeak = s.peak(candidate);
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
