//===- MwHoistUpdates.cpp - --mw-hoist-updates ----------------------------===//
//
// Runs each parameter's optimizer update as soon as it may, on a step on
// tensors before bufferization (PyTorch's optimizer-in-backward hooks, done
// ahead of time). --mw-autodiff emits every update after the whole backward
// pass, so every parameter's gradient is live at its end: on GPT-2 small
// the last backward op holds all 124M gradients. An update that writes its
// parameter and states in place into the step's arguments can run once its
// operands exist and every other read of the buffers it overwrites (the
// parameter's reads by backward matmuls and by --mw-remat's recompute
// clones, and views of them) is done; its gradient then dies there.
//
// The pass is a list schedule of the original order: every op keeps its
// place relative to the others, except that each update moves up to right
// after the last of (a) the definitions of its operands and (b) the other
// reads of the buffers it overwrites, together with the ops that only feed
// updates (the step counter's increment, a gradient's cast or scaling, the
// parameter concatenation of a ZeRO bucket), which are pulled up with it
// but never moved later than they were. Updates that become ready at one
// point are placed side by side, after their feeding ops, so that
// --mw-fuse's horizontal kernels still group them. Ops that communicate or
// wait (the collectives of a ZeRO step and mw.wait: where they stand is
// --mw-zero's overlap choice), selects (fp16's skip-on-overflow, which
// write into arguments) and ops with regions never move. An update whose
// results go into a transient buffer (a ZeRO shard) stays where it is:
// moving it up would lengthen that buffer. Dataflow keeps the rest: an
// update that reads a global gradient norm (clipping) cannot move above the
// last gradient, and fp16's select, which reads the old parameter after the
// update, keeps the update where it is (it is not in place there).
//
// The order is kept only when its peak of live tensor bytes
// (TensorSchedule, --mw-sink's model) is no higher than the original's. Only
// the order changes, never an op, so mw-eval gives bit-identical outputs.
//
//===----------------------------------------------------------------------===//

#include "TensorSchedule.h"

#include "memwall/Analysis/StepStructure.h"
#include "memwall/Dialect/MW/IR/MWOps.h"
#include "memwall/Dialect/MW/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "mw-hoist-updates"

namespace mlir::mw {
#define GEN_PASS_DEF_MWHOISTUPDATES
#include "memwall/Dialect/MW/Transforms/Passes.h.inc"
} // namespace mlir::mw

using namespace mlir;
using namespace mlir::mw;

namespace {

struct HoistResult {
  /// -1: the body has ops with memory effects (bufferized IR), left alone.
  int64_t moved = 0;
  int64_t updates = 0;
  int64_t peakBefore = 0, peakAfter = 0;
  /// The new order would have raised the peak: the original was kept.
  bool kept = false;
};

/// Moves the updates of `body` up (with `apply`; without, only computes the
/// result, its peaks by TensorSchedule with `fusedEpilogues`).
HoistResult hoistUpdates(Block &body, bool groupByBlock, bool apply = true,
                         bool fusedEpilogues = false) {
  HoistResult result;
  for (Operation &op : body.without_terminator())
    if (!isMemoryEffectFree(&op)) {
      result.moved = -1;
      return result;
    }
  SmallVector<Operation *> ops;
  llvm::DenseMap<Operation *, int> index;
  for (Operation &op : body.without_terminator()) {
    index[&op] = static_cast<int>(ops.size());
    ops.push_back(&op);
  }
  int n = static_cast<int>(ops.size());
  auto indexOf = [&](Operation *op) -> int {
    Operation *top = op ? body.findAncestorOpInBlock(*op) : nullptr;
    auto it = top ? index.find(top) : index.end();
    return it == index.end() ? -1 : it->second;
  };
  Operation *terminator = body.getTerminator();

  // The updates, and the ops that only feed updates (every reader is an
  // update, another such op or the return), found backwards: in one block
  // every reader of an op comes after it.
  SmallVector<bool> seed(n, false), feeds(n, false);
  SmallVector<int> seeds;
  for (int i = 0; i < n; ++i)
    if (isHoistableUpdate(ops[i])) {
      seed[i] = true;
      seeds.push_back(i);
    }
  result.updates = seeds.size();
  if (seeds.empty())
    return result;
  for (int i = n - 1; i >= 0; --i) {
    if (seed[i] || !mayFeedUpdates(ops[i]))
      continue;
    bool any = false, only = true;
    for (Operation *user : ops[i]->getUsers()) {
      Operation *top = body.findAncestorOpInBlock(*user);
      if (top == terminator)
        continue;
      int u = indexOf(user);
      if (u >= 0 && (seed[u] || feeds[u]))
        any = true;
      else
        only = false;
    }
    feeds[i] = any && only;
  }

  // Per update: its cone (the feeding ops it depends on through feeding
  // ops) and what it waits for: the producers of the cone's other operands
  // and the other readers of the buffers it overwrites.
  SmallVector<SmallVector<int>> cone(n);
  SmallVector<int> need(n, 0);
  SmallVector<SmallVector<int>> waiters(n);
  SmallVector<int> mark(n, -1); // the update last visited from
  SmallVector<SmallVector<int>> waits(n);
  for (int u : seeds) {
    SmallVector<int> work{u};
    SmallVector<int> waitsFor;
    SmallVector<int> members;
    auto waitFor = [&](int d) {
      if (d >= 0 && d != u && llvm::find(waitsFor, d) == waitsFor.end())
        waitsFor.push_back(d);
    };
    mark[u] = u;
    while (!work.empty()) {
      int i = work.pop_back_val();
      for (Value v : ops[i]->getOperands()) {
        int d = indexOf(v.getDefiningOp());
        if (d < 0)
          continue;
        if (!feeds[d]) {
          waitFor(d);
          continue;
        }
        if (mark[d] == u)
          continue;
        mark[d] = u;
        members.push_back(d);
        work.push_back(d);
      }
    }
    for (Value t : getOverwrittenOperands(ops[u]))
      forEachBufferReader(body, t, ops[u], [&](Operation *reader) {
        int r = indexOf(reader);
        if (r >= 0 && mark[r] != u)
          waitFor(r);
      });
    llvm::sort(members);
    cone[u] = std::move(members);
    waits[u] = std::move(waitsFor);
  }
  // One point per transformer block: each of a block's updates waits for
  // what all of them wait for, so they run side by side once the block's
  // backward is done and --mw-fuse makes one horizontal kernel of them
  // (per-parameter points cost GPT-2 small 122 more kernels for a few MB
  // of gradients held a little longer). Updates outside blocks keep their
  // own points.
  if (groupByBlock) {
    llvm::MapVector<int64_t, SmallVector<int>> blocks;
    for (int u : seeds)
      if (std::optional<int64_t> b = updateBlockOf(ops[u]))
        blocks[*b].push_back(u);
    for (auto &[b, members] : blocks) {
      SmallVector<int> all;
      for (int u : members)
        all.append(waits[u].begin(), waits[u].end());
      llvm::sort(all);
      all.erase(std::unique(all.begin(), all.end()), all.end());
      llvm::erase_if(all, [&](int d) { return seed[d]; });
      for (int u : members)
        waits[u] = all;
    }
  }
  for (int u : seeds) {
    need[u] = waits[u].size();
    for (int d : waits[u])
      waiters[d].push_back(u);
  }

  // The list schedule: the original order, each update (with its cone)
  // placed as soon as what it waits for is placed.
  SmallVector<int> order;
  order.reserve(n);
  SmallVector<bool> placed(n, false);
  SmallVector<int> ready;
  auto place = [&](int i) {
    placed[i] = true;
    order.push_back(i);
    for (int u : waiters[i])
      if (--need[u] == 0)
        ready.push_back(u);
  };
  auto flush = [&]() {
    while (true) {
      SmallVector<int> batch;
      for (int u : ready)
        if (!placed[u])
          batch.push_back(u);
      ready.clear();
      if (batch.empty())
        return;
      llvm::sort(batch);
      batch.erase(std::unique(batch.begin(), batch.end()), batch.end());
      SmallVector<int> feeding;
      for (int u : batch)
        for (int c : cone[u])
          if (!placed[c])
            feeding.push_back(c);
      llvm::sort(feeding);
      feeding.erase(std::unique(feeding.begin(), feeding.end()),
                    feeding.end());
      for (int c : feeding)
        place(c);
      for (int u : batch)
        place(u);
    }
  };
  for (int u : seeds)
    if (need[u] == 0)
      ready.push_back(u);
  flush();
  for (int i = 0; i < n; ++i) {
    if (placed[i])
      continue;
    place(i);
    flush();
  }

  // An update moved when fewer of the ops that stay in order (neither
  // updates nor feeding) precede it than before.
  SmallVector<int> fixedBefore(n, 0), fixedBeforeNow(n, 0);
  for (int count = 0, p = 0; p < n; ++p) {
    fixedBefore[p] = count;
    count += !seed[p] && !feeds[p];
  }
  for (int count = 0; int i : order) {
    fixedBeforeNow[i] = count;
    count += !seed[i] && !feeds[i];
  }
  for (int u : seeds)
    result.moved += fixedBeforeNow[u] < fixedBefore[u];
  if (!result.moved)
    return result;

  TensorSchedule s(body, fusedEpilogues);
  result.peakBefore = s.peak();
  result.peakAfter = s.peak(order);
  LLVM_DEBUG(llvm::dbgs() << "mw-hoist-updates: " << result.moved << " of "
                          << result.updates << " updates, peak "
                          << result.peakBefore << " -> " << result.peakAfter
                          << "\n");
  if (result.peakAfter > result.peakBefore) {
    result.kept = true;
    return result;
  }
  if (!apply)
    return result;
  for (int i : order)
    ops[i]->moveBefore(terminator);
  return result;
}

} // namespace

int64_t mlir::mw::hoistedPeak(Block &body, bool fusedEpilogues) {
  HoistResult r = hoistUpdates(body, /*groupByBlock=*/true, /*apply=*/false,
                               fusedEpilogues);
  if (r.moved <= 0)
    return TensorSchedule(body, fusedEpilogues).peak();
  return std::min(r.peakBefore, r.peakAfter);
}

namespace {

struct MwHoistUpdatesPass
    : public mw::impl::MwHoistUpdatesBase<MwHoistUpdatesPass> {
  using MwHoistUpdatesBase::MwHoistUpdatesBase;

  void runOnOperation() override {
    if (group != "block" && group != "parameter") {
      getOperation().emitError("mw-hoist-updates: group=")
          << group << " (expected block or parameter)";
      return signalPassFailure();
    }
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.getFunctionBody().hasOneBlock())
        continue;
      HoistResult r =
          hoistUpdates(func.getFunctionBody().front(), group == "block");
      if (r.moved <= 0)
        continue;
      if (!r.kept)
        numHoisted += r.moved;
      if (!report)
        continue;
      llvm::outs() << "mw-hoist-updates @" << func.getName() << ": ";
      if (r.kept)
        llvm::outs() << "order kept: moving " << r.moved << " of "
                     << r.updates << " updates would raise the live tensor "
                     << "peak " << r.peakBefore << " -> " << r.peakAfter
                     << " bytes\n";
      else
        llvm::outs() << r.moved << " of " << r.updates
                     << " updates moved earlier, live tensor peak "
                     << r.peakBefore << " -> " << r.peakAfter << " bytes\n";
    }
  }
};

} // namespace
