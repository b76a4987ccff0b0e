//===- Evaluator.h - Reference evaluator of the mw dialect ------*- C++ -*-===//
//
// The semantic oracle of every Memwall transformation (DESIGN.md decision 6):
// a plain interpreter of mw ops on tensors. It favours being obviously correct
// over being fast: naive loops in a fixed order, f32 arithmetic for every
// floating-point type (f16 and bf16 values are held in f32, where they are
// exact, and rounded to their type after every op), no threads, so the same
// input always gives the same bits.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_EVAL_EVALUATOR_H
#define MEMWALL_EVAL_EVALUATOR_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::mw::eval {

/// Element types the evaluator holds. I8 and F8E4M3FN are the quantized KV
/// cache's (mw.kv_cache_write, mw.paged_attention): I8 is an integer kind,
/// F8E4M3FN a float kind held as its exact f32 value.
enum class ElemKind { F32, F16, BF16, I32, I64, I8, F8E4M3FN };

/// "f32", "f16", "bf16", "i32", "i64", "i8", "f8E4M3FN".
const char *elemKindName(ElemKind kind);
/// The kind of an MLIR element type, or failure for an unsupported one.
FailureOr<ElemKind> elemKindOf(Type elementType);
/// The MLIR element type of `kind`.
Type elemTypeOf(MLIRContext *ctx, ElemKind kind);
inline bool isFloatKind(ElemKind k) {
  return k == ElemKind::F32 || k == ElemKind::F16 || k == ElemKind::BF16 ||
         k == ElemKind::F8E4M3FN;
}

/// Rounds `value` to the nearest `kind` value (ties to even) and returns it
/// as a float; identity for F32.
float roundToKind(ElemKind kind, float value);
/// Raw 16-bit encodings of f16 and bf16, for reading and writing files.
uint16_t floatToHalfBits(float value);
float halfBitsToFloat(uint16_t bits);
uint16_t floatToBFloatBits(float value);
float bfloatBitsToFloat(uint16_t bits);

/// A dense row-major tensor value. Floating-point elements live in `f` as
/// `Real` (already rounded to `kind` when Real is float), integer elements in
/// `i` as int64 (already wrapped to `kind`). `Tensor` (Real = float) is the
/// evaluator proper; `Tensor64` serves the f64 mode of evaluate64.
template <typename Real>
struct BasicTensor {
  ElemKind kind = ElemKind::F32;
  llvm::SmallVector<int64_t> shape;
  std::vector<Real> f;
  std::vector<int64_t> i;

  /// A zero tensor.
  static BasicTensor zeros(ElemKind kind, llvm::ArrayRef<int64_t> shape);
  int64_t numElements() const;
  bool isFloat() const { return isFloatKind(kind); }
  /// Element `n` as a double, whatever the kind.
  double at(int64_t n) const {
    return isFloat() ? static_cast<double>(f[n]) : static_cast<double>(i[n]);
  }
  /// Whether `type` is a tensor type of this kind and shape.
  bool matches(Type type) const;
  /// "tensor<2x3xf32>".
  std::string typeString() const;
};
using Tensor = BasicTensor<float>;
using Tensor64 = BasicTensor<double>;

/// The same tensor with f64 storage (exact).
Tensor64 widen(const Tensor &t);

/// Evaluates `func` on `args`, one per input argument (inputArguments), each
/// of the argument's shape and element type. On success returns one tensor per
/// result. On failure (a type mismatch, an unsupported op, an index out of
/// range at run time) emits an error at the failing op's location and returns
/// failure.
///
/// Besides mw ops on tensors, the evaluator runs bufferized programs, so that
/// every pass down to the planned arena can be checked against it: mw.kernel
/// (on tensors or on memrefs), tensor.empty, memref.alloc/alloca/dealloc,
/// memref.view with a constant byte shift, static views (subview,
/// collapse/expand_shape, cast, reinterpret_cast), memref.copy, integer and
/// index arith.constant, bufferization.to_tensor/to_memref. Memrefs live in
/// byte buffers with each element kind's storage encoding (f16/bf16 as their
/// 16 bits), so a plan that overlaps live buffers gives different outputs,
/// and a view outside its allocation is an error. Memref arguments and
/// results are passed as tensors; the arena argument of
/// --mw-static-arena="arena=argument" is not an input: the evaluator
/// allocates it zeroed.
FailureOr<llvm::SmallVector<Tensor>> evaluate(FunctionOpInterface func,
                                              llvm::ArrayRef<Tensor> args);

/// evaluate() with every floating-point op computed in double and f32 values
/// never rounded to float (f16 and bf16 still round to their type). Not the
/// reference semantics: a numerical instrument for finite-difference checks,
/// whose differences of nearby losses f32 rounding noise would swamp.
FailureOr<llvm::SmallVector<Tensor64>>
evaluate64(FunctionOpInterface func, llvm::ArrayRef<Tensor64> args);

/// Evaluates the N rank programs of a rank-generic SPMD step (the output of
/// --mw-zero): rank r runs `func` on `argsPerRank[r]`, and the N ranks run in
/// lockstep over the same op sequence. Every op but a collective is evaluated
/// by each rank on its own values, as evaluate() does; at a collective the
/// operands of all ranks are combined (docs/mw-eval.md, "Ranks"):
///
/// - `mesh.all_reduce`: each rank's operand is converted to the result's
///   element type (as mw.cast converts), then reduced elementwise in rank
///   order 0, 1, ..., N-1 starting from rank 0's value, in f32 (double in the
///   f64 mode) for floating-point types, rounded once to the result type
///   (f16/bf16), or in wrapping 64-bit integer arithmetic, wrapped once to
///   i32. Reductions: sum, max, min, product (NaN-propagating max/min),
///   average (floats: the sum divided by N), bitwise_and/or/xor (integers);
///   others are an error. Every rank gets the same result.
/// - `mesh.reduce_scatter`: the all_reduce, then rank r gets the r-th of N
///   equal pieces along `scatter_axis`.
/// - `mesh.all_gather`: the ranks' operands concatenated along `gather_axis`
///   in rank order; every rank gets the same result.
/// - `mesh.all_slice`: no communication; rank r keeps the r-th of N equal
///   pieces of its own operand along `slice_axis`.
/// - `mesh.process_linear_index`: r.
///
/// The collectives must name a 1-D mesh of static size N with
/// mesh_axes = [0] (collectiveMesh); any tensor axis may be the
/// scatter/gather/slice axis. Bufferized programs run as in evaluate(), each
/// rank on its own buffers; the ranks enter and leave each mw.kernel
/// together, so a collective in a kernel body would run too (the kernel's
/// verifier admits only mw ops there today). Returns each rank's
/// results; an error at an op during one rank's part of the run carries a
/// note "on rank r of N" (when N > 1). With one rank and a program without
/// collectives, it is evaluate().
FailureOr<llvm::SmallVector<llvm::SmallVector<Tensor>>>
evaluateRanks(FunctionOpInterface func,
              llvm::ArrayRef<llvm::SmallVector<Tensor>> argsPerRank);

/// evaluateRanks() in the f64 mode of evaluate64().
FailureOr<llvm::SmallVector<llvm::SmallVector<Tensor64>>>
evaluateRanks64(FunctionOpInterface func,
                llvm::ArrayRef<llvm::SmallVector<Tensor64>> argsPerRank);

/// The mesh the collectives of a function run over.
struct CollectiveMesh {
  /// The mesh.mesh symbol, without '@'.
  std::string name;
  /// Its size: the number of ranks the step was compiled for.
  int64_t ranks = 1;
  /// The first collective (in walk order) that names it.
  Operation *firstUse = nullptr;
};

/// The mesh of `func`'s collectives (mesh.all_reduce, reduce_scatter,
/// all_gather, all_slice, process_linear_index, kernel bodies included), or
/// std::nullopt when it has none. Emits an error at the op and fails for a
/// mesh evaluateRanks cannot simulate: not 1-D, of dynamic size, mesh_axes
/// other than [0], or two meshes of different sizes.
FailureOr<std::optional<CollectiveMesh>>
collectiveMesh(FunctionOpInterface func);

/// Whether argument `index` is the planned arena (`mw.arena`).
bool isArenaArgument(FunctionOpInterface func, unsigned index);
/// The arguments evaluate() takes values for, in order: all but the arena.
llvm::SmallVector<unsigned> inputArguments(FunctionOpInterface func);

/// The name of argument `index`: its `mw.name`, else "argN".
std::string argumentName(FunctionOpInterface func, unsigned index);
/// The name of result `index`: its `mw.name`, else "resultN".
std::string resultName(FunctionOpInterface func, unsigned index);

/// Deterministic random inputs for `func`, documented in docs/mw-eval.md:
/// floats are normal(0, 0.02) from a seeded generator, except rank-1 float
/// arguments whose name ends in "weight" (normalization scales), which are
/// 1 + normal(0, 0.02); integer arguments are uniform in [0, bound) where bound
/// is the smallest valid range of the ops that use them as indices or labels
/// (vocabulary rows, classes), looking through reshapes, or [0, 2) when
/// unused that way; an argument used as the `step` of mw.adamw is 1;
/// dynamic loss-scaling state (an operand of mw.loss_scale_update, or named
/// `loss_scale.scale`, `.iter`, `.last_overflow`, `.hysteresis`) starts as
/// DeepSpeed's does: scale 65536, iter 0, last_overflow -1, hysteresis the
/// op's `hysteresis` attribute (2 without one); other arguments with role
/// optimizer_state are zero (a fresh optimizer).
llvm::SmallVector<Tensor> randomInputs(FunctionOpInterface func,
                                       uint64_t seed);

} // namespace mlir::mw::eval

#endif // MEMWALL_EVAL_EVALUATOR_H
