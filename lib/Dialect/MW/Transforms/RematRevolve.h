//===- RematRevolve.h - Binomial checkpointing for --mw-remat ---*- C++ -*-===//
//
// Private to --mw-remat: Griewank's binomial checkpointing (revolve,
// Griewank and Walther 2000, ACM TOMS 26(1)) over a step's chain of links:
// its transformer blocks, or their regions (attention, MLP). With c
// snapshots of the residual stream it reverses L links recomputing each at
// most t + 1 times, where C(c + t, t) >= L, at the memory of c + 1 link
// inputs and one link's internals. The schedule is plain integers
// (revolveSchedule, unit-tested alone); planRevolve turns it into the
// staged plan (planStaged) of a step: one stage per link's backward, each
// recomputing the links of its sweep (and, per use, one more for each of
// the link's backward ops that reads its internals).
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_LIB_DIALECT_MW_TRANSFORMS_REMATREVOLVE_H
#define MEMWALL_LIB_DIALECT_MW_TRANSFORMS_REMATREVOLVE_H

#include "RematGraph.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::mw::remat {

/// How L links are reversed with `snapshots` snapshot slots besides the
/// first link's input.
struct RevolveSchedule {
  int64_t links = 0, snapshots = 0;
  /// Link L-1's internals are the forward pass's own (kept from it, as
  /// revolve's "first turn" tapes the last step), not recomputed.
  bool lastFromForward = false;
  /// Per link j: the link whose input the sweep of j's stage starts from
  /// (it recomputes links origin[j] .. j, each once, and link j's
  /// internals with them); -1 when the stage recomputes nothing (link L-1
  /// with lastFromForward).
  llvm::SmallVector<int64_t> origin;
  /// Per link j: whether its input is kept from the forward pass (a
  /// snapshot the forward sweep took, link 0's input among them).
  llvm::SmallVector<bool> keptInput;
  /// Links recomputed in all: the dynamic programme's minimum, which the
  /// sweeps' lengths (origin) add up to.
  int64_t recomputedLinks = 0;
};

/// The schedule that recomputes the fewest links when at most `snapshots`
/// link inputs (besides link 0's) are held at once: the dynamic
/// programme over (links left, snapshots free) of the recursive split
/// (advance m links, take a snapshot, reverse the rest with one snapshot
/// fewer, then the first m with as many), whose minimum is the binomial
/// bound. The forward pass's own sweep is free. `links` >= 1,
/// `snapshots` >= 0.
RevolveSchedule revolveSchedule(int64_t links, int64_t snapshots,
                                bool lastFromForward);

/// The links of a step as revolve sees them: per link (in forward order),
/// the forward nodes a sweep through it recomputes (its own, and the
/// parameter-only ones, all-gathers and casts of parameters, that only it
/// reads) and the last backward node before its backward starts; and the parameter-only nodes several links read (masks), which
/// every stage recomputes where read.
struct RevolveLinks {
  std::vector<llvm::SmallVector<int>> nodes;
  llvm::SmallVector<int> shared;
  llvm::SmallVector<int> stageStart;
  int64_t count() const { return static_cast<int64_t>(nodes.size()); }
};

/// The links of the step of `g`: its transformer blocks, or with `regions`
/// their parts (`h.3.attn`, `h.3.mlp`: the layer path's component after the
/// block number), so a block's attention and MLP are recomputed apart;
/// nullopt with the reason in `why` where revolve cannot apply: no blocks,
/// gradient accumulation's interleaved forwards, a backward pass not in
/// reverse link order.
std::optional<RevolveLinks> findRevolveLinks(const StepGraph &g,
                                             const StepStructure &info,
                                             bool regions, std::string &why);

/// The staged plan (planStaged) of `schedule` (made for links.count()
/// links): stage s is the backward of link L-1-s, from its first backward
/// op to the next link's; it recomputes the nodes of the links of its
/// sweep and the shared parameter-only ones, each once, where first read.
/// With `perUse`, each later backward op of the link that reads one of its
/// internals (an MLP's pre-activation for the GELU's gradient, its
/// LayerNorm's output for the weight gradient) starts a stage of its own
/// that recomputes what it reads from the link's input: the internals of
/// the link no longer live across its whole backward, for a few more
/// recomputed ops. `keep` receives the kept set.
RematPlan planRevolve(const StepGraph &g, const StepStructure &info,
                      const RevolveLinks &links,
                      const RevolveSchedule &schedule, bool perUse,
                      llvm::BitVector &keep);

} // namespace mlir::mw::remat

#endif // MEMWALL_LIB_DIALECT_MW_TRANSFORMS_REMATREVOLVE_H
