//===- MWOps.h - Ops of the mw dialect --------------------------*- C++ -*-===//
//
// Declares the mw ops generated from MWOps.td and the shape helpers their
// builders use.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_DIALECT_MW_IR_MWOPS_H
#define MEMWALL_DIALECT_MW_IR_MWOPS_H

#include "memwall/Dialect/MW/IR/MWDialect.h"
#include "memwall/Dialect/MW/IR/MWInterfaces.h"
#include "memwall/Dialect/MW/IR/MWTraits.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::mw {
/// The NumPy broadcast of two static shapes, or failure when a pair of
/// aligned dimensions differs and neither is 1.
FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> lhs,
                                                ArrayRef<int64_t> rhs);
/// The result type of an elementwise binary op on `lhs` and `rhs`: their
/// broadcast shape with lhs's element type. Both must be broadcast-compatible
/// ranked tensors (builders assert; the verifier diagnoses).
RankedTensorType inferBroadcastType(Type lhs, Type rhs);
/// The result type of mw.matmul on `lhs` and `rhs` with the given transposes
/// (operands must be valid for it; builders assert, the verifier diagnoses).
RankedTensorType inferMatmulType(Type lhs, Type rhs, bool transposeLhs,
                                 bool transposeRhs);
/// The result type of a reduction of `input` over `axes`.
RankedTensorType inferReduceType(Type input, ArrayRef<int64_t> axes,
                                 bool keepdims);
/// The result type of mw.transpose of `input` by `permutation`.
RankedTensorType inferTransposeType(Type input, ArrayRef<int64_t> permutation);
/// For an mw op that may compute result `result` in the buffer of one of its
/// operands (an elementwise op whose operand has the result's type, or an
/// optimizer update's parameter and state), that operand's index.
std::optional<unsigned> getInPlaceOperand(Operation *op, unsigned result);
/// Whether `op` is one of the upstream mesh collectives that --mw-zero emits
/// and the runtime executes (mesh.all_reduce, mesh.reduce_scatter,
/// mesh.all_gather, mesh.all_slice): it runs as an mw.kernel like an mw op,
/// its result in a buffer of its own.
bool isRuntimeCollective(Operation *op);
bool isRuntimeCollective(OperationName name);
} // namespace mlir::mw

#define GET_OP_CLASSES
#include "memwall/Dialect/MW/IR/MWOps.h.inc"

namespace mlir::mw {
/// Builds, at `builder`'s insertion point, an mw.kernel with operands `ins`
/// and `outs` and result types `resultTypes` (none in memref form) whose body
/// computes a clone of `op` on the values of `ins` (one per operand of `op`)
/// and yields its results. Leaves the insertion point after the kernel.
KernelOp buildKernelAround(OpBuilder &builder, Operation *op, ValueRange ins,
                           ValueRange outs, TypeRange resultTypes);

/// The ops a fused kernel may hold (docs/fusion.md, the fusion contract).
/// Shared by mw.fusion's verifier, --mw-fuse and --mw-form-kernels.
///
/// Pointwise: every operand is read at an index derived from the output
/// index by an index map (elementwise ops with broadcasting, casts, selects,
/// activations and their gradients, splats, constants, broadcasts, reshapes,
/// transposes, slices).
bool isPointwiseOp(Operation *op);
/// A column reduction: mw.reduce_sum over every axis but the last of an
/// operand of rank >= 2 (a bias gradient), with or without keepdims.
bool isColumnReduction(Operation *op);
/// A row op: reduces or normalizes over the last axis of its first operand
/// only (softmax, log_softmax and their gradients, layer_norm, rms_norm,
/// reduce_sum / reduce_max / reduce_mean over the last axis).
bool isRowOp(Operation *op);
/// Whether pointwise `op` reads operand `index` at its own output index: an
/// elementwise op whose operand has the shape of its result.
bool readsAtOutputIndex(Operation *op, unsigned index);
/// The FLOPs of the ops of `block` (a kernel's or fusion's body), summed.
int64_t bodyFlops(Block &block);
/// Whether the body `block` of a kernel or fusion reads its argument `index`
/// only while computing the output element at the same index (see
/// KernelOp::readsInputAtOutputIndex). With `wholeRows` (a row kernel), a
/// row op over the last axis of a value of the argument's shape reads it at
/// the index of each element of the row, and what it computes is not
/// followed further: a row kernel computes its row ops over whole rows
/// before it writes any element of them.
bool readsArgumentAtOutputIndex(Block &block, unsigned index,
                                bool wholeRows = false);
} // namespace mlir::mw

#endif // MEMWALL_DIALECT_MW_IR_MWOPS_H
