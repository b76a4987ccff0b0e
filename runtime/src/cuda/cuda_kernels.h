//===- cuda_kernels.h - Launchers of the CUDA backend's kernels -*- C++ -*-===//
//
// Private to src/cuda. The kernels (kernels.cu) see every tensor through one
// descriptor, TDesc: a base pointer, a dtype, and up to kMaxRank dimensions
// with element strides. A kernel walks the row-major *logical* index of the
// tensor it writes and turns it into an offset per operand (offsetOf), so one
// kernel serves every layout and broadcast (broadcast operands come with the
// output's shape and zero strides). Floats are computed in f32 and rounded to
// the element type on every store, as the CPU kernels do (support.h).
// Launchers return the launch's cudaError_t; data errors found on the device
// (an index out of range, ...) are recorded in a device flag that the backend
// reads when it synchronizes (DeviceError codes).
//
//===----------------------------------------------------------------------===//

#ifndef MWRT_SRC_CUDA_CUDA_KERNELS_H
#define MWRT_SRC_CUDA_CUDA_KERNELS_H

#include "mwrt/op_table.h"

#include <cuda_runtime.h>
#include <cstdint>

namespace mwrt::cuda {

inline constexpr int kMaxRank = 8;
/// Largest attention head dimension the naive attention kernels take.
inline constexpr int kMaxHeadDim = 256;

/// Element types, numbered as mwrt::DType.
enum : int { kF32 = 0, kF16 = 1, kBF16 = 2, kI32 = 3, kI64 = 4, kI8 = 6,
             kF8E4M3 = 9 };

struct TDesc {
  char *data = nullptr;
  int dtype = kF32;
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
};

/// Codes a kernel records in the device error flag (first one wins).
enum DeviceError : int {
  kErrNone = 0,
  kErrIndex = 1,      ///< embedding index out of range
  kErrLabel = 2,      ///< cross_entropy label out of range
  kErrDivZero = 3,    ///< integer division by zero
  kErrCastRange = 4,  ///< float to integer cast not finite or out of range
  kErrAdamStep = 5,   ///< adamw step < 1
  kErrSlot = 6,       ///< kv_cache_write slot outside the cache
  kErrContext = 7,    ///< paged_attention context length or block table
                      ///< entry outside the cache
};

/// Most quantization scales (key/value heads) the cache kernels take.
inline constexpr int kMaxCacheScales = 256;
/// A cache op's scales, passed by value: one per head, or one for all, or
/// none (count 0: a float cache).
struct CacheScales {
  int count = 0;
  float values[kMaxCacheScales] = {};
};

/// launchElementwise's op for mw.cast; any other op is an OpKind with a
/// formula (mwrt/op_table.h).
inline constexpr int kEwCast = -1;

/// out[i] = formula(ins[0][i], ins[1][i], params) over out's logical index,
/// the formula of OpKind `op` (or a cast); `ins` carry out's shape (broadcast
/// strides); `params` holds the formula's kMaxFormulaParams parameters.
cudaError_t launchElementwise(int op, const TDesc &out, const TDesc *ins,
                              int nIns, const double *params, int *err,
                              cudaStream_t s);
/// Copies elements (raw bytes of `elemSize`) in row-major logical order:
/// out's element n from in's element n (shapes may differ, counts equal).
cudaError_t launchCopy(const TDesc &out, const TDesc &in, int elemSize,
                       cudaStream_t s);
/// out = *cond != 0 ? t : f (cond a device f32 scalar).
cudaError_t launchSelect(const TDesc &out, const float *cond, const TDesc &t,
                         const TDesc &f, int elemSize, cudaStream_t s);
/// Sets *flag to 1.0f if `in` has a NaN or an infinity (never clears it).
cudaError_t launchFoundInf(float *flag, const TDesc &in, cudaStream_t s);
/// Reductions: `kept` (out's groups) and `reduced` (members) index the
/// input with the input's strides; op 0 sum, 1 max, 2 mean.
cudaError_t launchReduce(int op, const TDesc &out, const TDesc &kept,
                         const TDesc &reduced, int dtype, cudaStream_t s);
/// reduce_max_grad: out (with in's layout via `outKept`/`outReduced`).
cudaError_t launchReduceMaxGrad(const TDesc &inKept, const TDesc &inReduced,
                                const TDesc &outKept, const TDesc &outReduced,
                                const TDesc &m, const TDesc &dm, int dtype,
                                cudaStream_t s);
/// softmax / log_softmax over the middle of (outer, size, inner).
cudaError_t launchSoftmax(bool log, const TDesc &out, const TDesc &in,
                          int64_t outer, int64_t size, int64_t inner,
                          cudaStream_t s);
cudaError_t launchSoftmaxGrad(bool log, const TDesc &out, const TDesc &y,
                              const TDesc &dy, int64_t outer, int64_t size,
                              int64_t inner, cudaStream_t s);
/// layer_norm (beta non-null) or rms_norm (beta null, mean null) over rows
/// of d elements.
cudaError_t launchNorm(const TDesc &y, const TDesc *mean, const TDesc &rstd,
                       const TDesc &x, const TDesc &gamma, const TDesc *beta,
                       int64_t rows, int64_t d, float eps, cudaStream_t s);
/// layer_norm_grad (mean and dbeta non-null) or rms_norm_grad.
cudaError_t launchNormGrad(const TDesc &dx, const TDesc &dgamma,
                           const TDesc *dbeta, const TDesc &x,
                           const TDesc &gamma, const TDesc *mean,
                           const TDesc &rstd, const TDesc &dy, int64_t rows,
                           int64_t d, cudaStream_t s);
cudaError_t launchEmbedding(const TDesc &out, const TDesc &table,
                            const TDesc &indices, int64_t n, int64_t v,
                            int64_t d, int elemSize, int *err, cudaStream_t s);
cudaError_t launchEmbeddingGrad(const TDesc &out, const TDesc &indices,
                                const TDesc &dy, int64_t n, int64_t v,
                                int64_t d, int *err, cudaStream_t s);
/// cross_entropy (grad null) or its gradient; `scratch` holds rows floats
/// plus one int.
cudaError_t launchCrossEntropy(const TDesc &out, const TDesc &logits,
                               const TDesc &labels, const float *gradLoss,
                               int64_t all, int64_t first, int64_t rows,
                               int64_t classes, int64_t ignore, float *scratch,
                               int *err, cudaStream_t s);
/// attention over bh = B*H heads; `scores` holds bh*s*sk floats.
cudaError_t launchAttention(const TDesc &out, const TDesc &lse,
                            const TDesc &q, const TDesc &k, const TDesc &v,
                            int64_t bh, int64_t sq, int64_t sk, int64_t d,
                            int64_t dv, float scale, bool causal,
                            float *scores, cudaStream_t s);
/// attention_grad; `scratch` holds 2*bh*s*sk + bh*s floats.
cudaError_t launchAttentionGrad(const TDesc &dq, const TDesc &dk,
                                const TDesc &dvOut, const TDesc &q,
                                const TDesc &k, const TDesc &v,
                                const TDesc &lse, const TDesc &dout,
                                int64_t bh, int64_t sq, int64_t sk, int64_t d,
                                int64_t dv, float scale, bool causal,
                                float *scratch, cudaStream_t s);
/// mw.kv_cache_write into `cache` [NB, BS, H, D] (already holding the old
/// cache) of `values` [N, H, D] at `slots` [N]; a slot outside the cache is
/// kErrSlot (the others are written).
cudaError_t launchKvCacheWrite(const TDesc &cache, const TDesc &values,
                               const TDesc &slots, int64_t n,
                               const CacheScales &scales, int *err,
                               cudaStream_t s);
/// mw.paged_attention, one thread per query row (the CPU's loops, scores
/// recomputed instead of kept); a bad context length or block table entry
/// is kErrContext and zeros the row.
cudaError_t launchPagedAttention(const TDesc &out, const TDesc &q,
                                 const TDesc &kc, const TDesc &vc,
                                 const TDesc &tables, const TDesc &lens,
                                 float scale, const CacheScales &kScales,
                                 const CacheScales &vScales, int *err,
                                 cudaStream_t s);
/// The tensors of one adamw: param, grad, m, v in; new param, m, v out.
struct AdamArgs {
  TDesc p, g, m, v, np, nm, nv;
};

/// adamw; `step` a device scalar of dtype stepType, `scratch` 2 floats.
cudaError_t launchAdamW(const TDesc &newP, const TDesc &newM,
                        const TDesc &newV, const TDesc &p, const TDesc &g,
                        const TDesc &m, const TDesc &v, const TDesc &step,
                        double lr, double b1, double b2, double eps, double wd,
                        float *scratch, int *err, cudaStream_t s);
/// A group of adamw updates with the same hyperparameters and step in one
/// launch (multi-tensor apply): `tensors` and `starts` are device arrays of
/// `count` entries, `starts` the first element of each tensor in the
/// group's concatenated index space (ascending, each tensor non-empty),
/// `total` the elements of all. Per element the arithmetic of launchAdamW.
cudaError_t launchMultiTensorAdamW(const AdamArgs *tensors,
                                   const int64_t *starts, int count,
                                   int64_t total, const TDesc &step, double lr,
                                   double b1, double b2, double eps, double wd,
                                   float *scratch, int *err, cudaStream_t s);
/// sgd; buf/newBuf null without momentum.
cudaError_t launchSgd(const TDesc &newP, const TDesc *newBuf, const TDesc &p,
                      const TDesc &g, const TDesc *buf, float lr, float mom,
                      float keep, float wd, bool nesterov, cudaStream_t s);
/// loss_scale_update on device scalars (f32 overflow, scale; i64 others).
cudaError_t launchLossScaleUpdate(float *newScale, int64_t *newIter,
                                  int64_t *newLast, int64_t *newHyst,
                                  const float *overflow, const float *scale,
                                  const int64_t *iter, const int64_t *last,
                                  const int64_t *hyst, int64_t window,
                                  int64_t delayedShift, double minScale,
                                  double factor, cudaStream_t s);

} // namespace mwrt::cuda

#endif // MWRT_SRC_CUDA_CUDA_KERNELS_H
