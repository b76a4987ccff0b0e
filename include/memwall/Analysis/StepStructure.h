//===- StepStructure.h - Loss, forward pass, saved activations --*- C++ -*-===//
//
// What a training step is made of, defined once for every pass that needs it
// (--mw-remat plans on it, --mw-memory-report counts from it): the loss, the
// forward pass (the ops the loss depends on), the saved activations (forward
// values the backward pass or the optimizer reads), and the layer each op
// belongs to. The layer comes from the `mw.layer` discardable attribute that
// mw-models and --mw-autodiff write, which survives printing without debug
// info, and falls back to the op's NameLoc for hand-written or imported IR.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_ANALYSIS_STEPSTRUCTURE_H
#define MEMWALL_ANALYSIS_STEPSTRUCTURE_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <utility>

namespace mlir::mw {

/// The discardable op attribute naming the module an op belongs to: a
/// StringAttr with the dotted path the generator and the importer use for
/// parameter names (`"h.3.attn"`, `"model.layers.0.mlp"`, `"lm_head"`,
/// `"loss"`). The transformer block is the prefix up to the first all-digit
/// component (`h.3`); what follows names the part of the block (`attn`).
/// Backward ops carry the layer of the forward op they differentiate, and
/// recompute clones keep it. It is never part of the runtime plan.
inline constexpr llvm::StringLiteral kLayerAttrName = "mw.layer";

/// The layer path of `op`: its `mw.layer` attribute, else the name of its
/// NameLoc (looking through fused and call-site locations), else "".
std::string getLayerPath(Operation *op);

/// The name of location `loc`: its NameLoc's, looking through fused and
/// call-site locations; "" when it has none.
std::string getLocationName(Location loc);

/// The transformer block of a layer path and what follows it: the prefix up
/// to the first all-digit component ("h.0.attn" -> "h.0", "attn";
/// "model.layers.3.mlp" -> "model.layers.3", "mlp"); nullopt outside blocks
/// ("lm_head").
std::optional<std::pair<std::string, std::string>>
splitLayerPath(llvm::StringRef path);

/// The number of the transformer block a parameter or layer path belongs
/// to: its first all-digit component (`h.3.attn.c_attn.weight` -> 3,
/// `model.layers.12.mlp` -> 12); nullopt outside blocks, or when the number
/// does not fit int64. --mw-offload groups parameters by it, and
/// --mw-offload=auto reads layers the same way.
std::optional<int64_t> layerNumberOf(llvm::StringRef path);

/// The loss of a step: a rank-0 float tensor result whose `mw.role` is
/// `output` or absent (a scalar with another role is state: a gradient, an
/// updated parameter, a loss scale). Among those, the first named `loss`
/// (`mw.name`); else the first with role `output`; else the first without a
/// role (hand-written steps). Null when there is none, or the function has no
/// single-block body.
Value findLoss(FunctionOpInterface func);

/// The index of the loss among the function's results, by findLoss's rule
/// on tensors and on memrefs (a rank-0 float memref of a bufferized step);
/// nullopt when there is none.
std::optional<unsigned> findLossResult(FunctionOpInterface func);

/// The forward/backward split of a single-block step and its saved
/// activations. Built from the IR alone, so it can be rebuilt on a copy of
/// the module and give the same lists in the same order.
struct StepStructure {
  explicit StepStructure(Operation *funcOp);

  FunctionOpInterface func;
  /// The entry block; null when the function has no body or several blocks.
  Block *body = nullptr;
  /// See findLoss; null when there is none.
  Value loss;
  /// The ops of the entry block the loss depends on through operands (the
  /// forward pass), in block order.
  llvm::DenseSet<Operation *> forward;
  SmallVector<Operation *> forwardOps;
  /// The position of each op of the entry block.
  llvm::DenseMap<Operation *, int64_t> position;
  /// Saved activations: results of forward ops with a backward use (a use by
  /// a top-level op outside the forward pass that is not the terminator, the
  /// optimizer included), in op order. Function arguments are not among them.
  SmallVector<Value> saved;
  /// Saved values that must stay alive (no pass may recompute them):
  /// returned, or defined by an op with memory effects.
  llvm::BitVector forced;

  /// True when the step has a body, a loss computed in it, and a forward pass.
  bool hasLoss() const { return body && loss && loss.getDefiningOp(); }
  /// The op of the entry block that holds `op` (a use inside a region counts
  /// at its top-level op).
  Operation *topLevel(Operation *op) const {
    return body->findAncestorOpInBlock(*op);
  }
  /// Whether `use` is by the backward pass or the optimizer.
  bool isBackwardUse(OpOperand &use) const;
};

/// One saved activation as storage: what the forward part writes and the
/// backward part (the optimizer included) reads.
struct SavedActivation {
  /// Tensor form: the value that owns the storage (a saved value, or what a
  /// saved `mw.reshape` views). Memref form: the buffer written (a
  /// memref.alloc, a view of the arena), through shape-changing views.
  Value storage;
  /// The op that writes it: an mw op or a kernel of the forward part.
  Operation *writer = nullptr;
  /// The type written: its bytes and element type enter the figure.
  Type type;
};

/// The saved activations of a step, defined once for both forms so that a
/// step reports the same figure before and after bufferization:
///   the values (tensor form) or buffer contents (memref form) that an op of
///   the forward part writes and an op outside it reads, counted once per
///   storage.
/// Tensor form: StepStructure::saved, with a saved `mw.reshape` counted as
/// the storage it views (it bufferizes to a view, not a copy) and saved
/// values viewing a function argument left out (arguments are not
/// activations). Memref form (mw.kernel on memrefs): the forward part is the
/// top-level ops whose writes reach the loss through reads of buffers (a
/// read sees the last write of its buffer, looking through shape-changing
/// views); a saved activation is one such write that an op outside the
/// forward part reads. In op order; empty for a step without a loss.
SmallVector<SavedActivation> findSavedActivations(FunctionOpInterface func);

} // namespace mlir::mw

#endif // MEMWALL_ANALYSIS_STEPSTRUCTURE_H
