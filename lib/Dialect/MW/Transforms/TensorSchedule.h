//===- TensorSchedule.h - Live tensor bytes of a step's op order -*- C++ -*-===//
//
// Private to the passes that reorder a step on tensors before bufferization
// (--mw-sink, --mw-hoist-updates): the ops of one function body and the
// buffers of their results as indices, the live bytes of any order of them
// by the arena's rules at tensor level, and the write-after-read rule of
// optimizer updates, which write the parameters and states they replace in
// place: a reorder must keep every other read of such a buffer before the
// update, or One-Shot Bufferize would copy it.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_LIB_DIALECT_MW_TRANSFORMS_TENSORSCHEDULE_H
#define MEMWALL_LIB_DIALECT_MW_TRANSFORMS_TENSORSCHEDULE_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace mlir::mw {

/// Whether result `index` of `op` is written into the function argument it
/// updates (--mw-form-kernels' rule for optimizer updates and the KV cache
/// write, also inside a horizontal fusion): a persistent buffer.
bool updatesArgument(Operation *op, unsigned index);

/// The operands an optimizer update (mw.adamw, mw.sgd, mw.loss_scale_update)
/// or the KV cache write overwrites in place: those its results are tied
/// to. Empty for every other op (elementwise ops reuse an operand's buffer
/// only where it dies, which --mw-form-kernels decides on the final order).
SmallVector<Value> getOverwrittenOperands(Operation *op);

/// What --mw-hoist-updates moves, shared with --mw-remat's simulation of
/// its order (RematGraph.cpp): an mw.adamw or mw.sgd whose every tied
/// result is written into the function argument it replaces.
bool isHoistableUpdate(Operation *op);

/// Whether `op` may be pulled up with the updates it feeds: an mw op that
/// reads each element where it writes one (pointwise: a cast, a scaling, a
/// sum of two gradients, a splat, a reshape, a slice; or a concatenation),
/// or a collective's local slice (mesh.all_slice copies this rank's piece
/// and talks to no one). The pointwise ops exclude mw.select, which writes
/// into the argument it replaces; the rest of the backward pass, which
/// also only feeds the updates, stays in its order.
bool mayFeedUpdates(Operation *op);

/// The transformer block whose parameter `update` replaces (the first
/// all-digit component of the parameter argument's mw.name), or nullopt:
/// a parameter outside blocks, or an update whose new values are read by
/// more than the return. --mw-hoist-updates' group=block runs a block's
/// updates together.
std::optional<int64_t> updateBlockOf(Operation *update);

/// Calls `fn` with each top-level op of `body`, other than `except`, that
/// reads the buffer of `value`: reads `value` or an mw.reshape of it (a
/// view), directly or inside its regions. The reshapes themselves count.
/// An op may be passed more than once.
void forEachBufferReader(Block &body, Value value, Operation *except,
                         function_ref<void(Operation *)> fn);

/// The ops of one function body and the buffers of their results, as
/// indices: buffer b is defined by op def[b], read by the ops in
/// readers[b] (views included), and returned when `returned[b]`. Every
/// top-level tensor result is a buffer from its op to its last reader,
/// except that an mw.reshape's result is its operand's buffer (a view) and
/// the results written into function arguments (updatesArgument) are
/// persistent and not counted; function arguments are not counted either,
/// and returned values live to the end.
struct TensorSchedule {
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

  /// With `fusedEpilogues`, the bytes as --mw-fuse's kernels hold them: an
  /// mw.matmul whose product only the next op reads, an mw.add of the same
  /// shape, is that add's kernel (its epilogue), so the product is never a
  /// buffer, and the sum may be written over the add's other operand where
  /// that dies there (an accumulator, C += A B: --mw-form-kernels'
  /// destination rule).
  explicit TensorSchedule(Block &body, bool fusedEpilogues = false);

  /// Live bytes at each position of `order` (a permutation of op indices).
  /// A result written over a tied operand whose buffer's last reader is its
  /// op (as --mw-form-kernels chooses and One-Shot Bufferize keeps) shares
  /// that buffer.
  SmallVector<int64_t> profile(ArrayRef<int> order) const;

  /// The largest entry of profile(order), 0 for an empty body.
  int64_t peak(ArrayRef<int> order) const;
  /// peak() of the body's own order.
  int64_t peak() const;
};

/// The live tensor peak of `body` (TensorSchedule's) in the order
/// --mw-hoist-updates leaves it, with group=block as --mw-train-pipeline
/// runs it: the hoisted order's, or the body's own where hoisting would
/// raise it or moves nothing. A pass that runs before the pipeline's hoist
/// judges its rewrites by this peak, not by the peak of an order where
/// every gradient waits for the updates at the end. `fusedEpilogues` as
/// TensorSchedule's. Defined with the pass, in MwHoistUpdates.cpp.
int64_t hoistedPeak(Block &body, bool fusedEpilogues = false);

} // namespace mlir::mw

#endif // MEMWALL_LIB_DIALECT_MW_TRANSFORMS_TENSORSCHEDULE_H
