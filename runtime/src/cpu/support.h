//===- support.h - Shared machinery of the CPU kernels ---------*- C++ -*-===//
//
// Private to src/cpu. The evaluator holds f16 and bf16 values in f32 and
// integers in int64, computes in those, and rounds or wraps every result to
// its type; the helpers here give each kernel the same model: FloatSrc and
// IntSrc present any operand as a dense row-major f32 or int64 array (the
// operand's own memory when it already is one, else a converted copy), and
// FloatDst and IntDst collect results the same way and round, wrap and
// scatter them into the real output on commit(). A kernel is then written
// once, as the evaluator's loop, for every dtype and layout. Also here: the
// f16/bf16 conversions by DType (mwrt/formulas.h's), broadcast strides (the
// walk itself is mwrt/index_walk.h's), and KernelCall, which carries one
// call's tensors and attributes and formats its errors.
//
//===----------------------------------------------------------------------===//

#ifndef MWRT_SRC_CPU_SUPPORT_H
#define MWRT_SRC_CPU_SUPPORT_H

#include "mwrt/index_walk.h"
#include "mwrt/kernels.h"
#include "status.h"
#include "thread_pool.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

/// Returns from the enclosing function when `expr` (an mwrt_status) fails.
#define MWRT_TRY(expr)                                                         \
  do {                                                                         \
    if (mwrt_status tryStatus_ = (expr); tryStatus_ != MWRT_OK)                \
      return tryStatus_;                                                       \
  } while (false)

namespace mwrt::cpu {

using Shape = std::vector<int64_t>;

//===----------------------------------------------------------------------===//
// Numerics: the evaluator's rounding rules
//===----------------------------------------------------------------------===//

// The encodings and rounding rules are mwrt/formulas.h's, shared with the
// evaluator and the CUDA backend; these name them by DType.
using formulas::bitsFloat;
using formulas::floatBits;
inline uint16_t toBFloat(float value) {
  return formulas::floatToBFloatBits(value);
}
inline float fromBFloat(uint16_t bits) {
  return formulas::bfloatBitsToFloat(bits);
}
inline uint16_t toHalf(float value) { return formulas::floatToHalfBits(value); }
inline float fromHalf(uint16_t bits) { return formulas::halfBitsToFloat(bits); }

inline bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}

/// The float format of float type `t`.
inline formulas::FloatFormat formatOf(DType t) {
  return t == DType::BF16  ? formulas::FloatFormat::BF16
         : t == DType::F16 ? formulas::FloatFormat::F16
                           : formulas::FloatFormat::F32;
}

/// `value` rounded to float type `t` (the evaluator's roundToKind).
inline float roundTo(DType t, float value) {
  return formulas::roundTo(formatOf(t), value);
}

/// A double rounded once to float type `t` (the evaluator's roundOnceToKind).
inline float roundOnceTo(DType t, double value) {
  return formulas::roundOnceTo(formatOf(t), value);
}

/// An int64 rounded once to float type `t` (the evaluator's intToKind).
inline float intTo(DType t, int64_t value) {
  return formulas::intTo(formatOf(t), value);
}

/// An integer wrapped to the width of `t` (two's complement).
inline int64_t wrapTo(DType t, int64_t v) {
  return t == DType::I32 ? formulas::wrapToI32(v) : v;
}

/// One step of reduce_sum (and mean) or reduce_max: `v` into accumulator
/// `acc`, which holds nothing yet unless `seen`. reduce_max propagates NaN.
inline float reduceStep(bool isMax, float acc, float v, bool seen) {
  if (!isMax)
    return acc + v;
  return !seen                                ? v
         : (std::isnan(v) || std::isnan(acc)) ? NAN
                                              : std::max(acc, v);
}

//===----------------------------------------------------------------------===//
// Shapes and index walks
//===----------------------------------------------------------------------===//

/// "f32", "bf16", ... as MLIR spells them.
const char *typeName(DType t);
/// "tensor<2x3xf32>".
std::string typeString(DType t, const Shape &shape);
/// "[2, 3]".
std::string shapeString(const Shape &shape);

int64_t product(const Shape &shape);
Shape rowMajorStrides(const Shape &shape);
/// The strides `t` is laid out with (row-major when it gives none).
Shape stridesOf(const TensorRef &t);
/// Strides of an operand of shape `in` (laid out with `inStrides`) read as
/// if broadcast to `out`: 0 along broadcast and added leading dimensions.
Shape broadcastStrides(const Shape &in, const Shape &inStrides,
                       const Shape &out);
/// NumPy broadcast of two shapes; false when they are incompatible.
bool broadcastShapes(const Shape &a, const Shape &b, Shape &out);

// forEachIndex: mwrt/index_walk.h, shared with the evaluator.
using mwrt::forEachIndex;

/// Copies the elements of `shape` (each `elemSize` bytes) from `src` (laid
/// out with `srcStrides` from element offset `srcBase`) to `dst` (laid out
/// with `dstStrides`), in row-major order.
void copyElements(void *dst, const Shape &dstStrides, const void *src,
                  const Shape &srcStrides, int64_t srcBase, const Shape &shape,
                  size_t elemSize);

//===----------------------------------------------------------------------===//
// Operands as dense f32 / int64 arrays
//===----------------------------------------------------------------------===//

/// A float operand as dense row-major f32 values.
class FloatSrc {
public:
  explicit FloatSrc(const TensorRef &t);
  const float *data() const { return ptr; }
  float operator[](int64_t i) const { return ptr[i]; }

private:
  const float *ptr;
  std::vector<float> scratch;
};

/// A float result computed as dense row-major f32 values and rounded to its
/// dtype (and laid out) on commit(). With `zero`, starts as zeros; otherwise
/// the kernel must write every element.
class FloatDst {
public:
  explicit FloatDst(const TensorRef &t, bool zero = false);
  float *data() { return ptr; }
  float &operator[](int64_t i) { return ptr[i]; }
  void commit();

private:
  const TensorRef &out;
  float *ptr;
  std::vector<float> scratch;
};

/// An integer operand as dense row-major int64 values.
class IntSrc {
public:
  explicit IntSrc(const TensorRef &t);
  const int64_t *data() const { return ptr; }
  int64_t operator[](int64_t i) const { return ptr[i]; }

private:
  const int64_t *ptr;
  std::vector<int64_t> scratch;
};

/// An integer result computed as dense row-major int64 values and wrapped to
/// its dtype on commit().
class IntDst {
public:
  explicit IntDst(const TensorRef &t);
  int64_t *data() { return ptr; }
  int64_t &operator[](int64_t i) { return ptr[i]; }
  void commit();

private:
  const TensorRef &out;
  int64_t *ptr;
  std::vector<int64_t> scratch;
};

/// Element `offset` (in elements from data) of `t` as a double.
double elementAsDouble(const TensorRef &t, int64_t offset);

//===----------------------------------------------------------------------===//
// One kernel call
//===----------------------------------------------------------------------===//

/// Everything one kernel needs: the op, its attributes and tensors. The
/// dispatcher has already checked arity, dtypes (all in isKernelDType),
/// shapes, layouts, aliasing and attribute names; kernels check the rest.
struct KernelCall {
  OpKind op;
  const KernelAttrs &attrs;
  ArrayView<const TensorRef> ins;
  ArrayView<const TensorRef> outs;
  const CpuKernelOptions &options;

  const TensorRef &in(size_t i) const { return ins[i]; }
  const TensorRef &out(size_t i) const { return outs[i]; }

  /// Records "'mw.op': <parts...>" and returns MWRT_INVALID_ARGUMENT.
  template <typename... Parts> mwrt_status fail(const Parts &...parts) const {
    std::ostringstream os;
    os << '\'' << opKindName(op) << "': ";
    (os << ... << parts);
    return setError(MWRT_INVALID_ARGUMENT, os.str());
  }

  // Attributes; without a default a missing attribute is an error.
  mwrt_status getInt(const char *name, int64_t &value,
                     std::optional<int64_t> byDefault = std::nullopt) const;
  mwrt_status getFloat(const char *name, double &value,
                       std::optional<double> byDefault = std::nullopt) const;
  mwrt_status getBool(const char *name, bool &value) const; ///< default false
  mwrt_status getInts(const char *name, Shape &value) const;
  bool has(const char *name) const { return attrs.find(name) != nullptr; }
  /// An elementwise op's attributes as its formula's parameters (op_table.h):
  /// params[i] for spec.params[i], defaults where absent.
  mwrt_status getFormulaParams(const ElementwiseSpec &spec,
                               double *params) const;
  /// `axis` in [0, rank).
  mwrt_status getAxis(int64_t rank, int64_t &axis) const;
  /// `axes` in [0, rank), strictly increasing.
  mwrt_status getAxes(int64_t rank, Shape &axes) const;

  // Type checks, named like the op's operands in the messages.
  mwrt_status expectType(const TensorRef &t, const char *name,
                         const Shape &shape, DType dtype) const;
  mwrt_status expectSameType(const TensorRef &t, const char *name,
                             const TensorRef &like, const char *likeName) const;
  mwrt_status expectFloat(const TensorRef &t, const char *name) const;
  mwrt_status expectInt(const TensorRef &t, const char *name) const;
  mwrt_status expectRank(const TensorRef &t, const char *name, size_t rank,
                         const char *layout = nullptr) const;
};

/// pool->parallelFor(n, grain, fn) with `options`' pool, or fn(0, 0, n)
/// without one (thread_pool.h).
template <typename F>
void parallelFor(const CpuKernelOptions &options, int64_t n, int64_t grain,
                 F &&fn) {
  if (options.pool)
    options.pool->parallelFor(n, grain, fn);
  else if (n > 0)
    fn(0, int64_t{0}, n);
}

/// fn(worker, u0, u1) over [0, units) in blocks of at least `minUnits`
/// (every block, the last included; one block when units < 2 * minUnits),
/// at most four a worker, across `options`' pool.
template <typename F>
void parallelBlocks(const CpuKernelOptions &options, int64_t units,
                    int64_t minUnits, F &&fn) {
  minUnits = std::max<int64_t>(minUnits, 1);
  int64_t blocks = std::min<int64_t>(units / minUnits,
                                     4 * static_cast<int64_t>(
                                             options.pool ? options.pool->size()
                                                          : 1));
  if (blocks <= 1 || !options.pool) {
    if (units > 0)
      fn(0, int64_t{0}, units);
    return;
  }
  options.pool->parallelFor(blocks, 1, [&](int w, int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      fn(w, b * units / blocks, (b + 1) * units / blocks);
  });
}

/// parallelFor's grain for rows of `length` elements: about 16K elements.
inline int64_t rowGrain(int64_t length) {
  return std::max<int64_t>(1, 16384 / std::max<int64_t>(length, 1));
}

/// parallelFor's grain for elementwise work: 32K elements.
constexpr int64_t kElementGrain = 32768;

/// How many workers parallelFor with `options` may use (at least 1).
inline int workerCount(const CpuKernelOptions &options) {
  return options.pool ? options.pool->size() : 1;
}

// The kernels.

// elementwise.cpp
mwrt_status runConstant(KernelCall &c);
mwrt_status runSplat(KernelCall &c);
/// Every op with a formula (op_table.h): one or two operands, broadcast or of
/// one type.
mwrt_status runElementwise(KernelCall &c);
/// runElementwise's checks, shared with the CUDA backend: the result's
/// `shape` and the formula's parameters (kMaxFormulaParams of them).
mwrt_status checkElementwise(const KernelCall &c, Shape &shape,
                             double *params);
mwrt_status runCast(KernelCall &c);
mwrt_status runSelect(KernelCall &c);
/// mw.wait: the result is the operand (in place; a copy otherwise).
mwrt_status runWait(KernelCall &c);
/// mw.fetch: copies an offloaded weight into its slot (synchronously).
mwrt_status runFetch(KernelCall &c);
mwrt_status runFoundInf(KernelCall &c);
// optimizers.cpp
/// adamw's and sgd's attributes with their defaults (the ops' ODS
/// defaults), read once for the CPU and CUDA backends.
struct AdamWAttrs {
  double lr, beta1, beta2, eps, weightDecay;
};
mwrt_status readAdamWAttrs(KernelCall &c, AdamWAttrs &a);
struct SgdAttrs {
  double lr, momentum, dampening, weightDecay;
  bool nesterov;
};
mwrt_status readSgdAttrs(KernelCall &c, SgdAttrs &a);
mwrt_status runAdamW(KernelCall &c);
mwrt_status runSgd(KernelCall &c);
mwrt_status runLossScaleUpdate(KernelCall &c);
// reductions.cpp
mwrt_status runReduce(KernelCall &c);
mwrt_status runReduceMaxGrad(KernelCall &c);
mwrt_status runSoftmax(KernelCall &c);
mwrt_status runSoftmaxGrad(KernelCall &c);
// norms.cpp
mwrt_status runLayerNorm(KernelCall &c);
mwrt_status runRmsNorm(KernelCall &c);
mwrt_status runLayerNormGrad(KernelCall &c);
mwrt_status runRmsNormGrad(KernelCall &c);
mwrt_status runEmbedding(KernelCall &c);
mwrt_status runEmbeddingGrad(KernelCall &c);
mwrt_status runCrossEntropy(KernelCall &c);
/// cross_entropy's logits and labels (shared with the CUDA backend): labels
/// of the logits' shape without the class dimension (`first` = 0), or with
/// label_offset, [n, C] logits of a batch whose N labels are all given, row t
/// taking label first + t.
mwrt_status checkCrossEntropyLabels(const KernelCall &c, int64_t &first);
// matmul.cpp
mwrt_status runMatmul(KernelCall &c);
/// Rows of a matmul into `c` (rows x n, dense): op(A) rows times op(B), with
/// `a` at the first row's start and leading dimensions as cblas_sgemm takes
/// them; OpenBLAS unless `reference` (or without it), else referenceMatmul's
/// loop and order. For the fused matmul kernels (fused.cpp).
void matmulRows(bool transA, bool transB, int64_t rows, int64_t n, int64_t k,
                const float *a, int64_t lda, const float *b, int64_t ldb,
                float *c, bool reference, int64_t ldc = -1);
/// A block of a split product (columns or rows) must hold at least this many
/// multiply-adds (28 * 512^2): OpenBLAS computes a smaller product with its
/// direct or small-matrix kernels on AVX-512 machines, which sum in another
/// order, so no block of a product above it goes there; and a block
/// amortizes its packing.
constexpr int64_t kBlasBlockWork = 28 * 512 * 512;
/// Columns a worker's block of a split product is a multiple of.
constexpr int64_t kBlasColumnBlock = 64;
/// C = alpha * op(A) op(B) + beta * C through one cblas_sgemm (row major,
/// leading dimensions as it takes them). False, with `c` untouched, in a build
/// without OpenBLAS, when a size is 0 or one does not fit sgemm's ints: the
/// caller then runs its own loop. For the blocked attention (attention.cpp).
bool blasGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
              float alpha, const float *a, int64_t lda, const float *b,
              int64_t ldb, float beta, float *c, int64_t ldc);
// attention.cpp
mwrt_status runAttention(KernelCall &c);
mwrt_status runAttentionGrad(KernelCall &c);
// kv_cache.cpp: the paged KV cache (docs/inference.md). The checks are
// shared with the CUDA backend, which runs the same ones on the host.
bool isQuantizedCache(DType t);
/// A cache op's scales attribute `name` (k_scale, ...): given exactly for
/// i8 and f8E4M3FN caches, 1 or `heads` positive finite values; empty for a
/// float cache.
mwrt_status getCacheScales(const KernelCall &c, const char *name, DType cache,
                           int64_t heads, std::vector<float> &scales);
mwrt_status checkKvCacheWrite(const KernelCall &c, std::vector<float> &scales);
/// Every slot is -1 or in [0, blocks * blockSize).
mwrt_status checkSlots(const KernelCall &c, const int64_t *slots, int64_t n,
                       int64_t blocks, int64_t blockSize);
struct PagedAttentionDims {
  int64_t batch, queryHeads, tokens, headDim;
  int64_t blocks, blockSize, kvHeads, maxBlocks;
  float scale;
  std::vector<float> kScale, vScale;
};
mwrt_status checkPagedAttention(const KernelCall &c, PagedAttentionDims &a);
/// Every context length is in [0, MB*BS] and every block table entry below
/// it in [0, NB).
mwrt_status checkContexts(const KernelCall &c, const PagedAttentionDims &a,
                          const int64_t *tables, const int64_t *lens);
mwrt_status runKvCacheWrite(KernelCall &c);
mwrt_status runPagedAttention(KernelCall &c);
// shape_ops.cpp
mwrt_status runReshape(KernelCall &c);
mwrt_status runTranspose(KernelCall &c);
mwrt_status runBroadcastTo(KernelCall &c);
mwrt_status runSlice(KernelCall &c);
mwrt_status runConcat(KernelCall &c);
// collectives.cpp: the mesh collectives on a mesh of one rank (copies).
mwrt_status runAllReduce(KernelCall &c);
mwrt_status runReduceScatter(KernelCall &c);
mwrt_status runAllGather(KernelCall &c);
mwrt_status runAllSlice(KernelCall &c);

} // namespace mwrt::cpu

#endif // MWRT_SRC_CPU_SUPPORT_H
