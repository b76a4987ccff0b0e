//===- kernels.cu - The CUDA backend's kernels ----------------------------===//
//
// Device code for every mw op except matmul (cuBLASLt, backend_cuda.cpp) and
// constants (computed once by the CPU kernel and copied). Each kernel computes
// with the formulas the CPU kernels and the evaluator use (mwrt/formulas.h;
// elementwise ops through the generated op table's dispatch) in f32, with the
// same rounding on store; it is compiled with -fmad=false so products and
// sums round as on the CPU.
// Reductions run one thread block per group with a fixed tree, so results
// repeat run to run but may differ from the CPU's sequential order; the
// kernels whose CPU loops accumulate across rows (layer_norm_grad's gamma and
// beta, embedding_grad, attention_grad, cross_entropy's mean) keep the CPU's
// order exactly, one thread per accumulator, so they never use atomics.
// Speed is secondary here: attention is the naive O(S^2) algorithm.
//
//===----------------------------------------------------------------------===//

#include "cuda_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math_constants.h>

namespace mwrt::cuda {
namespace {

constexpr int kBlock = 256;

__device__ __forceinline__ int64_t offsetOf(const TDesc &t, int64_t n) {
  int64_t off = 0;
  for (int d = t.rank - 1; d >= 0; --d) {
    int64_t sz = t.shape[d];
    off += (n % sz) * t.strides[d];
    n /= sz;
  }
  return off;
}

// bf16 is encoded by mwrt/formulas.h, as on the CPU; f16 by CUDA's own
// round-to-nearest-even conversion, which agrees with it.
using formulas::bfloatBitsToFloat;
using formulas::floatToBFloatBits;

__device__ __forceinline__ float loadF(const TDesc &t, int64_t off) {
  switch (t.dtype) {
  case kF16:
    return __half2float(reinterpret_cast<const __half *>(t.data)[off]);
  case kBF16:
    return bfloatBitsToFloat(reinterpret_cast<const uint16_t *>(t.data)[off]);
  case kI32:
    return static_cast<float>(reinterpret_cast<const int32_t *>(t.data)[off]);
  case kI64:
    return static_cast<float>(reinterpret_cast<const int64_t *>(t.data)[off]);
  default:
    return reinterpret_cast<const float *>(t.data)[off];
  }
}
__device__ __forceinline__ void storeF(const TDesc &t, int64_t off, float v) {
  switch (t.dtype) {
  case kF16:
    reinterpret_cast<__half *>(t.data)[off] = __float2half_rn(v);
    break;
  case kBF16:
    reinterpret_cast<uint16_t *>(t.data)[off] = floatToBFloatBits(v);
    break;
  default:
    reinterpret_cast<float *>(t.data)[off] = v;
  }
}
__device__ __forceinline__ int64_t loadI(const TDesc &t, int64_t off) {
  if (t.dtype == kI32)
    return reinterpret_cast<const int32_t *>(t.data)[off];
  return reinterpret_cast<const int64_t *>(t.data)[off];
}
__device__ __forceinline__ void storeI(const TDesc &t, int64_t off,
                                       int64_t v) {
  if (t.dtype == kI32)
    reinterpret_cast<int32_t *>(t.data)[off] =
        static_cast<int32_t>(static_cast<uint32_t>(v));
  else
    reinterpret_cast<int64_t *>(t.data)[off] = v;
}
__device__ __forceinline__ bool isFloatType(int t) { return t <= kBF16; }
/// A logical element of `t` as f32 / int64.
__device__ __forceinline__ float at(const TDesc &t, int64_t n) {
  return loadF(t, offsetOf(t, n));
}
__device__ __forceinline__ void put(const TDesc &t, int64_t n, float v) {
  storeF(t, offsetOf(t, n), v);
}
__device__ __forceinline__ void raise(int *err, int code) {
  if (err)
    atomicCAS(err, 0, code);
}

int64_t numElements(const TDesc &t) {
  int64_t n = 1;
  for (int d = 0; d < t.rank; ++d)
    n *= t.shape[d];
  return n;
}
unsigned gridFor(int64_t n) {
  int64_t blocks = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(blocks < 65535 * 16 ? blocks : 65535 * 16);
}
/// Grid-stride loop over [0, n).
#define MW_FOR(i, n)                                                           \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n);   \
       i += int64_t(blockDim.x) * gridDim.x)

/// A block-wide reduction in a fixed order (deterministic for a given block
/// size). Every thread gets the result.
template <typename T, typename Op>
__device__ T blockReduce(T v, Op op, T *shared) {
  int t = threadIdx.x;
  shared[t] = v;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (t < stride)
      shared[t] = op(shared[t], shared[t + stride]);
    __syncthreads();
  }
  T r = shared[0];
  __syncthreads();
  return r;
}
struct SumOp {
  template <typename T> __device__ T operator()(T a, T b) const {
    return a + b;
  }
};
struct MaxOp { // NaN-propagating, as the CPU's reduce_max
  __device__ float operator()(float a, float b) const {
    return (isnan(a) || isnan(b)) ? CUDART_NAN_F : fmaxf(a, b);
  }
};
struct PlainMaxOp { // std::max over floats without NaNs (softmax's max)
  __device__ float operator()(float a, float b) const {
    return a < b ? b : a;
  }
};

struct EwArgs {
  TDesc out, a, b;
  double p[kMaxFormulaParams];
};

__global__ void elementwiseKernel(int op, bool binary, EwArgs args, int64_t n,
                                  int *err) {
  const TDesc &out = args.out, &a = args.a, &b = args.b;
  MW_FOR(i, n) {
    int64_t oo = offsetOf(out, i), oa = offsetOf(a, i);
    if (op == kEwCast) {
      if (isFloatType(out.dtype)) {
        if (isFloatType(a.dtype)) {
          storeF(out, oo, loadF(a, oa));
        } else { // int to float, rounded once (support.h's intTo)
          double dv = static_cast<double>(loadI(a, oa));
          if (out.dtype == kF16)
            reinterpret_cast<__half *>(out.data)[oo] = __double2half(dv);
          else if (out.dtype == kBF16)
            reinterpret_cast<__nv_bfloat16 *>(out.data)[oo] =
                __double2bfloat16(dv);
          else
            storeF(out, oo, static_cast<float>(dv));
        }
      } else if (!isFloatType(a.dtype)) {
        storeI(out, oo, loadI(a, oa));
      } else {
        double v = trunc(static_cast<double>(loadF(a, oa)));
        double lo = out.dtype == kI32 ? -2147483648.0 : -9.2233720368547758e18;
        double hi = out.dtype == kI32 ? 2147483647.0 : 9.2233720368547748e18;
        if (!(v >= lo && v <= hi)) {
          raise(err, kErrCastRange);
          v = 0.0;
        }
        storeI(out, oo, static_cast<int64_t>(v));
      }
      continue;
    }
    // Ops with a formula (op_table.h): integers in int64, wrapped on store.
    OpKind kind = static_cast<OpKind>(op);
    if (!isFloatType(out.dtype)) {
      int64_t x = loadI(a, oa);
      if (!binary) {
        storeI(out, oo, applyUnaryFormula(kind, x, args.p));
        continue;
      }
      int64_t y = loadI(b, offsetOf(b, i));
      if (kind == OpKind::Div && y == 0)
        raise(err, kErrDivZero);
      storeI(out, oo, applyBinaryFormula(kind, x, y, args.p));
      continue;
    }
    float x = loadF(a, oa);
    float r = binary ? applyBinaryFormula(kind, x, loadF(b, offsetOf(b, i)),
                                          args.p)
                     : applyUnaryFormula(kind, x, args.p);
    storeF(out, oo, r);
  }
}

__global__ void copyKernel(TDesc out, TDesc in, int size, int64_t n) {
  MW_FOR(i, n) {
    char *dst = out.data + offsetOf(out, i) * size;
    const char *src = in.data + offsetOf(in, i) * size;
    for (int b = 0; b < size; ++b)
      dst[b] = src[b];
  }
}

__global__ void selectKernel(TDesc out, const float *cond, TDesc t, TDesc f,
                             int size, int64_t n) {
  const TDesc &src = *cond != 0.0f ? t : f;
  MW_FOR(i, n) {
    char *dst = out.data + offsetOf(out, i) * size;
    const char *p = src.data + offsetOf(src, i) * size;
    for (int b = 0; b < size; ++b)
      dst[b] = p[b];
  }
}

__global__ void foundInfKernel(float *flag, TDesc in, int64_t n) {
  MW_FOR(i, n) {
    if (!isfinite(at(in, i)))
      *flag = 1.0f;
  }
}

__global__ void reduceKernel(int op, TDesc out, TDesc kept, TDesc reduced,
                             int64_t count, int dtype) {
  __shared__ float fs[kBlock];
  __shared__ int64_t is[kBlock];
  int64_t g = blockIdx.x;
  int64_t base = offsetOf(kept, g);
  TDesc in = kept; // kept.data is the input's base
  in.dtype = dtype;
  if (!isFloatType(dtype)) {
    int64_t acc = 0;
    bool seen = false;
    for (int64_t m = threadIdx.x; m < count; m += blockDim.x) {
      int64_t v = loadI(in, base + offsetOf(reduced, m));
      if (op == 1)
        acc = !seen ? v : (acc < v ? v : acc);
      else
        acc = static_cast<int64_t>(static_cast<uint64_t>(acc) +
                                   static_cast<uint64_t>(v));
      seen = true;
    }
    if (op == 1) { // threads without members take the first member
      if (!seen && count > 0)
        acc = loadI(in, base);
      acc = blockReduce(acc, [](int64_t x, int64_t y) { return x < y ? y : x; },
                        is);
    } else {
      acc = blockReduce(acc, [](int64_t x, int64_t y) {
        return static_cast<int64_t>(static_cast<uint64_t>(x) +
                                    static_cast<uint64_t>(y));
      }, is);
    }
    if (threadIdx.x == 0)
      storeI(out, offsetOf(out, g), acc);
    return;
  }
  float acc = 0.0f;
  bool seen = false;
  for (int64_t m = threadIdx.x; m < count; m += blockDim.x) {
    float v = loadF(in, base + offsetOf(reduced, m));
    acc = op != 1 ? acc + v : !seen ? v : MaxOp()(acc, v);
    seen = true;
  }
  if (op == 1) {
    if (!seen) // an empty group reduces to 0, as on the CPU
      acc = count > 0 ? loadF(in, base) : 0.0f;
    acc = blockReduce(acc, MaxOp(), fs);
  } else {
    acc = blockReduce(acc, SumOp(), fs);
  }
  if (threadIdx.x == 0)
    storeF(out, offsetOf(out, g),
           op == 2 ? acc / static_cast<float>(count) : acc);
}

__global__ void reduceMaxGradKernel(TDesc inKept, TDesc inRed, TDesc outKept,
                                    TDesc outRed, TDesc m, TDesc dm,
                                    int64_t count) {
  __shared__ float fs[kBlock];
  int64_t g = blockIdx.x;
  int64_t ib = offsetOf(inKept, g), ob = offsetOf(outKept, g);
  float mx = at(m, g), grad = at(dm, g);
  float ties = 0.0f;
  for (int64_t j = threadIdx.x; j < count; j += blockDim.x)
    if (loadF(inKept, ib + offsetOf(inRed, j)) == mx)
      ties += 1.0f;
  ties = blockReduce(ties, SumOp(), fs);
  for (int64_t j = threadIdx.x; j < count; j += blockDim.x) {
    float x = loadF(inKept, ib + offsetOf(inRed, j));
    storeF(outKept, ob + offsetOf(outRed, j), x == mx ? grad / ties : 0.0f);
  }
}

__global__ void softmaxKernel(bool log, TDesc out, TDesc in, int64_t size,
                              int64_t inner) {
  __shared__ float fs[kBlock];
  int64_t g = blockIdx.x, o = g / inner, k = g % inner;
  auto idx = [&](int64_t j) { return (o * size + j) * inner + k; };
  float mx = -CUDART_INF_F;
  for (int64_t j = threadIdx.x; j < size; j += blockDim.x)
    mx = PlainMaxOp()(mx, at(in, idx(j)));
  mx = blockReduce(mx, PlainMaxOp(), fs);
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < size; j += blockDim.x)
    sum += expf(at(in, idx(j)) - mx);
  sum = blockReduce(sum, SumOp(), fs);
  for (int64_t j = threadIdx.x; j < size; j += blockDim.x) {
    float x = at(in, idx(j));
    put(out, idx(j), log ? x - mx - logf(sum) : expf(x - mx) / sum);
  }
}

__global__ void softmaxGradKernel(bool log, TDesc out, TDesc y, TDesc dy,
                                  int64_t size, int64_t inner) {
  __shared__ float fs[kBlock];
  int64_t g = blockIdx.x, o = g / inner, k = g % inner;
  auto idx = [&](int64_t j) { return (o * size + j) * inner + k; };
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < size; j += blockDim.x)
    sum += log ? at(dy, idx(j)) : at(dy, idx(j)) * at(y, idx(j));
  sum = blockReduce(sum, SumOp(), fs);
  for (int64_t j = threadIdx.x; j < size; j += blockDim.x) {
    float py = at(y, idx(j)), pdy = at(dy, idx(j));
    put(out, idx(j), log ? pdy - expf(py) * sum : py * (pdy - sum));
  }
}

struct NormArgs {
  TDesc y, mean, rstd, x, gamma, beta;
  bool layer;
};

__global__ void normKernel(NormArgs a, int64_t d, float eps) {
  __shared__ float fs[kBlock];
  int64_t r = blockIdx.x;
  float fd = static_cast<float>(d), mu = 0.0f;
  if (a.layer) {
    float sum = 0.0f;
    for (int64_t j = threadIdx.x; j < d; j += blockDim.x)
      sum += at(a.x, r * d + j);
    mu = blockReduce(sum, SumOp(), fs) / fd;
  }
  float sq = 0.0f;
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
    float c = at(a.x, r * d + j) - mu;
    sq += c * c;
  }
  sq = blockReduce(sq, SumOp(), fs);
  float rs = formulas::rstdOf(sq, fd, eps);
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
    float x = at(a.x, r * d + j), g = at(a.gamma, j);
    put(a.y, r * d + j,
        a.layer ? formulas::layerNormElement(x, mu, rs, g, at(a.beta, j))
                : formulas::rmsNormElement(x, rs, g));
  }
  if (threadIdx.x == 0) {
    if (a.layer)
      put(a.mean, r, mu);
    put(a.rstd, r, rs);
  }
}

__global__ void normGradRowsKernel(NormArgs a, TDesc dy, int64_t d) {
  // a.y is dx here; a.mean unused for rms_norm.
  __shared__ float fs[kBlock];
  int64_t r = blockIdx.x;
  float mu = a.layer ? at(a.mean, r) : 0.0f, rs = at(a.rstd, r);
  float s1 = 0.0f, s2 = 0.0f;
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
    float xhat = (at(a.x, r * d + j) - mu) * rs;
    float dxhat = at(dy, r * d + j) * at(a.gamma, j);
    s1 += dxhat;
    s2 += dxhat * xhat;
  }
  s1 = blockReduce(s1, SumOp(), fs);
  s2 = blockReduce(s2, SumOp(), fs);
  float fd = static_cast<float>(d);
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
    float xhat = (at(a.x, r * d + j) - mu) * rs;
    float dxhat = at(dy, r * d + j) * at(a.gamma, j);
    put(a.y, r * d + j,
        a.layer ? formulas::layerNormGradElement(dxhat, xhat, rs, s1, s2, fd)
                : formulas::rmsNormGradElement(dxhat, xhat, rs, s2, fd));
  }
}

/// gamma's and beta's gradients: one thread per column, rows in order (the
/// CPU's accumulation order).
__global__ void normGradColsKernel(NormArgs a, TDesc dy, TDesc dgamma,
                                   TDesc dbeta, int64_t rows, int64_t d) {
  MW_FOR(j, d) {
    float dg = 0.0f, db = 0.0f;
    for (int64_t r = 0; r < rows; ++r) {
      float mu = a.layer ? at(a.mean, r) : 0.0f;
      float xhat = (at(a.x, r * d + j) - mu) * at(a.rstd, r);
      float g = at(dy, r * d + j);
      dg += g * xhat;
      db += g;
    }
    put(dgamma, j, dg);
    if (a.layer)
      put(dbeta, j, db);
  }
}

__global__ void embeddingKernel(TDesc out, TDesc table, TDesc indices,
                                int64_t v, int64_t d, int size, int64_t n,
                                int *err) {
  MW_FOR(e, n * d) {
    int64_t i = e / d, j = e % d;
    int64_t row = loadI(indices, offsetOf(indices, i));
    char *dst = out.data + offsetOf(out, e) * size;
    if (row < 0 || row >= v) {
      raise(err, kErrIndex);
      for (int b = 0; b < size; ++b)
        dst[b] = 0;
      continue;
    }
    const char *src =
        table.data + (row * table.strides[0] + j * table.strides[1]) * size;
    for (int b = 0; b < size; ++b)
      dst[b] = src[b];
  }
}

/// One block per vocabulary row: scans the indices in order and sums the
/// matching gradient rows, so the sum has the CPU's order and no atomics.
__global__ void embeddingGradKernel(TDesc out, TDesc indices, TDesc dy,
                                    int64_t n, int64_t v, int64_t d,
                                    int *err) {
  int64_t row = blockIdx.x;
  // Most rows receive no gradient: find out together, then write zeros.
  int hit = 0;
  for (int64_t i = threadIdx.x; i < n && !hit; i += blockDim.x)
    hit = loadI(indices, offsetOf(indices, i)) == row;
  if (!__syncthreads_or(hit)) {
    for (int64_t j = threadIdx.x; j < d; j += blockDim.x)
      put(out, row * d + j, 0.0f);
    if (row == 0) // row 0 also checks every index once
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
        int64_t idx = loadI(indices, offsetOf(indices, i));
        if (idx < 0 || idx >= v)
          raise(err, kErrIndex);
      }
    return;
  }
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
    float acc = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
      int64_t idx = loadI(indices, offsetOf(indices, i));
      if (row == 0 && j == 0 && (idx < 0 || idx >= v))
        raise(err, kErrIndex);
      if (idx == row)
        acc += at(dy, i * d + j);
    }
    put(out, row * d + j, acc);
  }
}

__global__ void crossEntropyRowsKernel(TDesc out, TDesc logits, TDesc labels,
                                       int64_t first, const float *gradLoss,
                                       int64_t classes, int64_t ignore,
                                       const int *countPtr, float *rowLoss,
                                       int *err) {
  __shared__ float fs[kBlock];
  int64_t t = blockIdx.x;
  int64_t label = loadI(labels, offsetOf(labels, first + t));
  bool skip = label == ignore || (gradLoss && *countPtr == 0);
  if (!skip && (label < 0 || label >= classes)) {
    if (threadIdx.x == 0)
      raise(err, kErrLabel);
    skip = true;
  }
  if (skip) {
    if (gradLoss)
      for (int64_t j = threadIdx.x; j < classes; j += blockDim.x)
        put(out, t * classes + j, 0.0f);
    else if (threadIdx.x == 0)
      rowLoss[t] = 0.0f;
    return;
  }
  float mx = -CUDART_INF_F;
  for (int64_t j = threadIdx.x; j < classes; j += blockDim.x)
    mx = PlainMaxOp()(mx, at(logits, t * classes + j));
  mx = blockReduce(mx, PlainMaxOp(), fs);
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < classes; j += blockDim.x)
    sum += expf(at(logits, t * classes + j) - mx);
  sum = blockReduce(sum, SumOp(), fs);
  if (!gradLoss) {
    if (threadIdx.x == 0)
      rowLoss[t] = mx + logf(sum) - at(logits, t * classes + label);
    return;
  }
  float g = *gradLoss, count = static_cast<float>(*countPtr);
  for (int64_t j = threadIdx.x; j < classes; j += blockDim.x) {
    float p = expf(at(logits, t * classes + j) - mx) / sum;
    float onehot = j == label ? 1.0f : 0.0f;
    put(out, t * classes + j, g * (p - onehot) / count);
  }
}

/// Counts the labels that are not ignored, all `all` of them (and, for the
/// loss, sums the losses of rows [0, rows), labels first + t, in row order,
/// as the CPU does).
__global__ void crossEntropyTotalKernel(TDesc labels, int64_t all,
                                        int64_t first, int64_t rows,
                                        int64_t classes, int64_t ignore,
                                        int *countPtr, const float *rowLoss,
                                        float *loss, int *err) {
  if (threadIdx.x != 0 || blockIdx.x != 0)
    return;
  auto valid = [&](int64_t i) {
    int64_t label = loadI(labels, offsetOf(labels, i));
    return label != ignore && label >= 0 && label < classes;
  };
  int count = 0;
  for (int64_t i = 0; i < all; ++i) {
    int64_t label = loadI(labels, offsetOf(labels, i));
    if (label != ignore && (label < 0 || label >= classes))
      raise(err, kErrLabel); // a chunk's labels outside its rows too
    count += valid(i) ? 1 : 0;
  }
  *countPtr = count;
  if (!loss)
    return;
  float total = 0.0f;
  for (int64_t t = 0; t < rows; ++t)
    if (valid(first + t))
      total += rowLoss[t];
  *loss = count ? total / static_cast<float>(count) : 0.0f;
}

struct AttnArgs {
  TDesc q, k, v, out, lse, dout, dq, dk, dv;
};

// The paged KV cache: elements stored and dequantized as on the CPU
// (mwrt/formulas.h), through the cache's strides.
__device__ __forceinline__ float cacheScale(const CacheScales &sc, int64_t h) {
  return sc.count == 0 ? 1.0f : sc.values[sc.count == 1 ? 0 : h];
}
__device__ __forceinline__ float loadCache(const TDesc &t, int64_t off,
                                           float scale) {
  if (t.dtype == kI8)
    return formulas::dequantizeI8(reinterpret_cast<const int8_t *>(t.data)[off],
                                  scale);
  if (t.dtype == kF8E4M3)
    return formulas::dequantizeF8E4M3(
        reinterpret_cast<const uint8_t *>(t.data)[off], scale);
  return loadF(t, off);
}
__device__ __forceinline__ void storeCache(const TDesc &t, int64_t off,
                                           float x, float scale) {
  if (t.dtype == kI8)
    reinterpret_cast<int8_t *>(t.data)[off] = formulas::quantizeI8(x, scale);
  else if (t.dtype == kF8E4M3)
    reinterpret_cast<uint8_t *>(t.data)[off] =
        formulas::quantizeF8E4M3(x, scale);
  else
    storeF(t, off, x);
}
__device__ __forceinline__ int64_t cacheOffset(const TDesc &t, int64_t block,
                                               int64_t slot, int64_t h) {
  return block * t.strides[0] + slot * t.strides[1] + h * t.strides[2];
}

/// One thread per element written: token t, head h, element j.
__global__ void kvCacheWriteKernel(TDesc cache, TDesc values, TDesc slots,
                                   int64_t n, CacheScales sc, int *err) {
  int64_t bs = cache.shape[1], heads = cache.shape[2], d = cache.shape[3];
  int64_t capacity = cache.shape[0] * bs;
  MW_FOR(e, n * heads * d) {
    int64_t t = e / (heads * d), h = (e / d) % heads, j = e % d;
    int64_t slot = loadI(slots, offsetOf(slots, t));
    if (slot == -1)
      continue;
    if (slot < 0 || slot >= capacity) {
      raise(err, kErrSlot);
      continue;
    }
    int64_t off = cacheOffset(cache, slot / bs, slot % bs, h) +
                  j * cache.strides[3];
    storeCache(cache, off, at(values, e), cacheScale(sc, h));
  }
}

struct PagedArgs {
  TDesc out, q, kc, vc, tables, lens;
  float scale;
};

/// One thread per query row (sequence s, head h, token i).
__global__ void pagedAttentionKernel(PagedArgs a, CacheScales ks,
                                     CacheScales vs, int *err) {
  int64_t hq = a.q.shape[1], t = a.q.shape[2], d = a.q.shape[3];
  int64_t nb = a.kc.shape[0], bs = a.kc.shape[1], hkv = a.kc.shape[2];
  int64_t mb = a.tables.shape[1], group = hq / hkv;
  MW_FOR(row, a.q.shape[0] * hq * t) {
    int64_t s = row / (hq * t), h = (row / t) % hq, i = row % t;
    int64_t g = h / group;
    int64_t len = loadI(a.lens, offsetOf(a.lens, s));
    int64_t pos = len - t + i;
    bool bad = len < 0 || len > mb * bs;
    for (int64_t blk = 0; !bad && blk * bs < len; ++blk) {
      int64_t entry = loadI(a.tables, offsetOf(a.tables, s * mb + blk));
      bad = entry < 0 || entry >= nb;
    }
    if (bad)
      raise(err, kErrContext);
    float acc[kMaxHeadDim];
    for (int64_t e = 0; e < d; ++e)
      acc[e] = 0.0f;
    if (!bad && pos >= 0) {
      float kScale = cacheScale(ks, g), vScale = cacheScale(vs, g);
      auto score = [&](int64_t j) {
        int64_t block = loadI(a.tables, offsetOf(a.tables, s * mb + j / bs));
        int64_t base = cacheOffset(a.kc, block, j % bs, g);
        float dot = 0.0f;
        for (int64_t e = 0; e < d; ++e)
          dot += at(a.q, row * d + e) *
                 loadCache(a.kc, base + e * a.kc.strides[3], kScale);
        return a.scale * dot;
      };
      float mx = -CUDART_INF_F;
      for (int64_t j = 0; j <= pos; ++j) {
        float sj = score(j);
        mx = mx < sj ? sj : mx;
      }
      float sum = 0.0f;
      for (int64_t j = 0; j <= pos; ++j)
        sum += expf(score(j) - mx);
      for (int64_t j = 0; j <= pos; ++j) {
        float p = expf(score(j) - mx) / sum;
        int64_t block = loadI(a.tables, offsetOf(a.tables, s * mb + j / bs));
        int64_t base = cacheOffset(a.vc, block, j % bs, g);
        for (int64_t e = 0; e < d; ++e)
          acc[e] += p * loadCache(a.vc, base + e * a.vc.strides[3], vScale);
      }
    }
    for (int64_t e = 0; e < d; ++e)
      put(a.out, row * d + e, acc[e]);
  }
}

/// One thread per query row, the CPU's loops.
__global__ void attentionKernel(AttnArgs a, int64_t bh, int64_t s, int64_t sk,
                                int64_t d, int64_t dv, float scale,
                                bool causal, float *scores) {
  MW_FOR(row, bh * s) {
    int64_t h = row / s, i = row % s;
    float *sc = scores + row * sk;
    float mx = -CUDART_INF_F;
    for (int64_t j = 0; j < sk; ++j) {
      if (causal && j > i)
        continue;
      float dot = 0.0f;
      for (int64_t e = 0; e < d; ++e)
        dot += at(a.q, row * d + e) * at(a.k, (h * sk + j) * d + e);
      sc[j] = scale * dot;
      mx = mx < sc[j] ? sc[j] : mx;
    }
    float sum = 0.0f;
    for (int64_t j = 0; j < sk; ++j)
      if (!causal || j <= i)
        sum += expf(sc[j] - mx);
    float acc[kMaxHeadDim];
    for (int64_t e = 0; e < dv; ++e)
      acc[e] = 0.0f;
    for (int64_t j = 0; j < sk; ++j) {
      if (causal && j > i)
        continue;
      float p = expf(sc[j] - mx) / sum;
      for (int64_t e = 0; e < dv; ++e)
        acc[e] += p * at(a.v, (h * sk + j) * dv + e);
    }
    for (int64_t e = 0; e < dv; ++e)
      put(a.out, row * dv + e, acc[e]);
    put(a.lse, row, mx + logf(sum));
  }
}

/// Per query row: p, dp (kept in scratch), their dot, and grad_query.
__global__ void attentionGradQKernel(AttnArgs a, int64_t bh, int64_t s,
                                     int64_t sk, int64_t d, int64_t dv,
                                     float scale, bool causal, float *P,
                                     float *DP, float *rowDot) {
  MW_FOR(row, bh * s) {
    int64_t h = row / s, i = row % s;
    float l = at(a.lse, row), rd = 0.0f;
    for (int64_t j = 0; j < sk; ++j) {
      if (causal && j > i)
        continue;
      float dot = 0.0f, g = 0.0f;
      for (int64_t e = 0; e < d; ++e)
        dot += at(a.q, row * d + e) * at(a.k, (h * sk + j) * d + e);
      float p = expf(scale * dot - l);
      for (int64_t e = 0; e < dv; ++e)
        g += at(a.dout, row * dv + e) * at(a.v, (h * sk + j) * dv + e);
      P[row * sk + j] = p;
      DP[row * sk + j] = g;
      rd += p * g;
    }
    rowDot[row] = rd;
    float acc[kMaxHeadDim];
    for (int64_t e = 0; e < d; ++e)
      acc[e] = 0.0f;
    for (int64_t j = 0; j < sk; ++j) {
      if (causal && j > i)
        continue;
      float ds = P[row * sk + j] * (DP[row * sk + j] - rd) * scale;
      for (int64_t e = 0; e < d; ++e)
        acc[e] += ds * at(a.k, (h * sk + j) * d + e);
    }
    for (int64_t e = 0; e < d; ++e)
      put(a.dq, row * d + e, acc[e]);
  }
}

/// Per key row: grad_key and grad_value, summed over queries in order.
__global__ void attentionGradKVKernel(AttnArgs a, int64_t bh, int64_t s,
                                      int64_t sk, int64_t d, int64_t dv,
                                      float scale, bool causal, const float *P,
                                      const float *DP, const float *rowDot) {
  MW_FOR(krow, bh * sk) {
    int64_t h = krow / sk, j = krow % sk;
    float accK[kMaxHeadDim], accV[kMaxHeadDim];
    for (int64_t e = 0; e < d; ++e)
      accK[e] = 0.0f;
    for (int64_t e = 0; e < dv; ++e)
      accV[e] = 0.0f;
    for (int64_t i = 0; i < s; ++i) {
      if (causal && j > i)
        continue;
      int64_t row = h * s + i;
      float p = P[row * sk + j];
      for (int64_t e = 0; e < dv; ++e)
        accV[e] += p * at(a.dout, row * dv + e);
      float ds = p * (DP[row * sk + j] - rowDot[row]) * scale;
      for (int64_t e = 0; e < d; ++e)
        accK[e] += ds * at(a.q, row * d + e);
    }
    for (int64_t e = 0; e < d; ++e)
      put(a.dk, krow * d + e, accK[e]);
    for (int64_t e = 0; e < dv; ++e)
      put(a.dv, krow * dv + e, accV[e]);
  }
}

/// AdamW's bias corrections from the device step count, in double as on the
/// host of the CPU backend.
__global__ void adamScalarsKernel(TDesc step, double b1, double b2,
                                  float *out, int *err) {
  double t = step.dtype == kF32 ? static_cast<double>(loadF(step, 0))
                                : static_cast<double>(loadI(step, 0));
  if (!(t >= 1.0)) {
    raise(err, kErrAdamStep);
    t = 1.0;
  }
  out[0] = static_cast<float>(formulas::biasCorrection(b1, t));
  out[1] = static_cast<float>(formulas::biasCorrection(b2, t));
}

/// One element of adamw; the per-tensor and the multi-tensor kernels share
/// it, so both give the same bits.
__device__ __forceinline__ void adamWElement(const AdamArgs &a, int64_t i,
                                             const formulas::AdamWScalars<float> &sc) {
  float np, nm, nv;
  formulas::adamWElement(sc, at(a.p, i), at(a.g, i), at(a.m, i), at(a.v, i),
                         np, nm, nv);
  put(a.np, i, np);
  put(a.nm, i, nm);
  put(a.nv, i, nv);
}

/// `sc` without its bias corrections, which the step's kernel wrote to `bc`.
__global__ void adamWKernel(AdamArgs a, int64_t n,
                            formulas::AdamWScalars<float> sc, const float *bc) {
  sc.bc1 = bc[0];
  sc.bc2 = bc[1];
  MW_FOR(i, n)
    adamWElement(a, i, sc);
}

/// Element i of the group's concatenated index space belongs to the last
/// tensor whose start is <= i (binary search over `starts`).
__global__ void multiTensorAdamWKernel(const AdamArgs *tensors,
                                       const int64_t *starts, int count,
                                       int64_t total,
                                       formulas::AdamWScalars<float> sc,
                                       const float *bc) {
  sc.bc1 = bc[0];
  sc.bc2 = bc[1];
  MW_FOR(i, total) {
    int lo = 0, hi = count - 1;
    while (lo < hi) {
      int mid = (lo + hi + 1) / 2;
      if (starts[mid] <= i)
        lo = mid;
      else
        hi = mid - 1;
    }
    adamWElement(tensors[lo], i - starts[lo], sc);
  }
}

__global__ void sgdKernel(AdamArgs a, bool hasBuf, int64_t n, float lr,
                          float mom, float keep, float wd, bool nesterov) {
  MW_FOR(i, n) {
    float pn = at(a.p, i);
    float gi = at(a.g, i) + wd * pn;
    if (hasBuf) {
      float b = mom * at(a.m, i) + keep * gi;
      put(a.nm, i, b);
      gi = nesterov ? gi + mom * b : b;
    }
    put(a.np, i, pn - lr * gi);
  }
}

__global__ void lossScaleKernel(float *newScale, int64_t *newIter,
                                int64_t *newLast, int64_t *newHyst,
                                const float *overflowPtr,
                                const float *scalePtr, const int64_t *iterPtr,
                                const int64_t *lastPtr, const int64_t *hystPtr,
                                int64_t window, int64_t delayedShift,
                                double minScale, double factor) {
  formulas::LossScaleState st{static_cast<double>(*scalePtr), *iterPtr,
                              *lastPtr, *hystPtr};
  st = formulas::updateLossScale(st, *overflowPtr != 0.0f, window,
                                 delayedShift, minScale, factor);
  double scale = st.scale;
  int64_t iter = st.iter, last = st.last, hyst = st.hyst;
  *newScale = static_cast<float>(scale);
  *newIter = iter;
  *newLast = last;
  *newHyst = hyst;
}

unsigned blocksOf(int64_t groups) {
  return static_cast<unsigned>(groups);
}

} // namespace

cudaError_t launchElementwise(int op, const TDesc &out, const TDesc *ins,
                              int nIns, const double *params, int *err,
                              cudaStream_t s) {
  int64_t n = numElements(out);
  if (n == 0)
    return cudaSuccess;
  EwArgs args{out, ins[0], nIns > 1 ? ins[1] : ins[0], {}};
  for (int i = 0; params && i < kMaxFormulaParams; ++i)
    args.p[i] = params[i];
  elementwiseKernel<<<gridFor(n), kBlock, 0, s>>>(op, nIns > 1, args, n, err);
  return cudaGetLastError();
}

cudaError_t launchCopy(const TDesc &out, const TDesc &in, int elemSize,
                       cudaStream_t s) {
  int64_t n = numElements(out);
  if (n == 0)
    return cudaSuccess;
  copyKernel<<<gridFor(n), kBlock, 0, s>>>(out, in, elemSize, n);
  return cudaGetLastError();
}

cudaError_t launchSelect(const TDesc &out, const float *cond, const TDesc &t,
                         const TDesc &f, int elemSize, cudaStream_t s) {
  int64_t n = numElements(out);
  if (n == 0)
    return cudaSuccess;
  selectKernel<<<gridFor(n), kBlock, 0, s>>>(out, cond, t, f, elemSize, n);
  return cudaGetLastError();
}

cudaError_t launchFoundInf(float *flag, const TDesc &in, cudaStream_t s) {
  int64_t n = numElements(in);
  if (n == 0)
    return cudaSuccess;
  foundInfKernel<<<gridFor(n), kBlock, 0, s>>>(flag, in, n);
  return cudaGetLastError();
}

cudaError_t launchReduce(int op, const TDesc &out, const TDesc &kept,
                         const TDesc &reduced, int dtype, cudaStream_t s) {
  int64_t groups = numElements(kept), count = numElements(reduced);
  if (groups == 0)
    return cudaSuccess;
  reduceKernel<<<blocksOf(groups), kBlock, 0, s>>>(op, out, kept, reduced,
                                                   count, dtype);
  return cudaGetLastError();
}

cudaError_t launchReduceMaxGrad(const TDesc &inKept, const TDesc &inReduced,
                                const TDesc &outKept, const TDesc &outReduced,
                                const TDesc &m, const TDesc &dm, int dtype,
                                cudaStream_t s) {
  int64_t groups = numElements(inKept), count = numElements(inReduced);
  if (groups == 0 || count == 0)
    return cudaSuccess;
  TDesc ik = inKept, ok = outKept;
  ik.dtype = ok.dtype = dtype;
  reduceMaxGradKernel<<<blocksOf(groups), kBlock, 0, s>>>(
      ik, inReduced, ok, outReduced, m, dm, count);
  return cudaGetLastError();
}

cudaError_t launchSoftmax(bool log, const TDesc &out, const TDesc &in,
                          int64_t outer, int64_t size, int64_t inner,
                          cudaStream_t s) {
  if (outer * inner == 0 || size == 0)
    return cudaSuccess;
  softmaxKernel<<<blocksOf(outer * inner), kBlock, 0, s>>>(log, out, in, size,
                                                           inner);
  return cudaGetLastError();
}

cudaError_t launchSoftmaxGrad(bool log, const TDesc &out, const TDesc &y,
                              const TDesc &dy, int64_t outer, int64_t size,
                              int64_t inner, cudaStream_t s) {
  if (outer * inner == 0 || size == 0)
    return cudaSuccess;
  softmaxGradKernel<<<blocksOf(outer * inner), kBlock, 0, s>>>(
      log, out, y, dy, size, inner);
  return cudaGetLastError();
}

cudaError_t launchNorm(const TDesc &y, const TDesc *mean, const TDesc &rstd,
                       const TDesc &x, const TDesc &gamma, const TDesc *beta,
                       int64_t rows, int64_t d, float eps, cudaStream_t s) {
  if (rows == 0)
    return cudaSuccess;
  NormArgs a{y, mean ? *mean : rstd, rstd, x, gamma, beta ? *beta : gamma,
             beta != nullptr};
  normKernel<<<blocksOf(rows), kBlock, 0, s>>>(a, d, eps);
  return cudaGetLastError();
}

cudaError_t launchNormGrad(const TDesc &dx, const TDesc &dgamma,
                           const TDesc *dbeta, const TDesc &x,
                           const TDesc &gamma, const TDesc *mean,
                           const TDesc &rstd, const TDesc &dy, int64_t rows,
                           int64_t d, cudaStream_t s) {
  NormArgs a{dx, mean ? *mean : rstd, rstd, x, gamma, gamma, dbeta != nullptr};
  if (rows > 0) {
    normGradRowsKernel<<<blocksOf(rows), kBlock, 0, s>>>(a, dy, d);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess)
      return e;
  }
  if (d == 0)
    return cudaSuccess;
  normGradColsKernel<<<gridFor(d), kBlock, 0, s>>>(
      a, dy, dgamma, dbeta ? *dbeta : dgamma, rows, d);
  return cudaGetLastError();
}

cudaError_t launchKvCacheWrite(const TDesc &cache, const TDesc &values,
                               const TDesc &slots, int64_t n,
                               const CacheScales &scales, int *err,
                               cudaStream_t s) {
  int64_t total = n * cache.shape[2] * cache.shape[3];
  if (total == 0)
    return cudaSuccess;
  kvCacheWriteKernel<<<gridFor(total), kBlock, 0, s>>>(cache, values, slots, n,
                                                       scales, err);
  return cudaGetLastError();
}

cudaError_t launchPagedAttention(const TDesc &out, const TDesc &q,
                                 const TDesc &kc, const TDesc &vc,
                                 const TDesc &tables, const TDesc &lens,
                                 float scale, const CacheScales &kScales,
                                 const CacheScales &vScales, int *err,
                                 cudaStream_t s) {
  int64_t rows = q.shape[0] * q.shape[1] * q.shape[2];
  if (rows == 0)
    return cudaSuccess;
  PagedArgs a{out, q, kc, vc, tables, lens, scale};
  pagedAttentionKernel<<<gridFor(rows), kBlock, 0, s>>>(a, kScales, vScales,
                                                        err);
  return cudaGetLastError();
}

cudaError_t launchEmbedding(const TDesc &out, const TDesc &table,
                            const TDesc &indices, int64_t n, int64_t v,
                            int64_t d, int elemSize, int *err,
                            cudaStream_t s) {
  if (n * d == 0)
    return cudaSuccess;
  embeddingKernel<<<gridFor(n * d), kBlock, 0, s>>>(out, table, indices, v, d,
                                                    elemSize, n, err);
  return cudaGetLastError();
}

cudaError_t launchEmbeddingGrad(const TDesc &out, const TDesc &indices,
                                const TDesc &dy, int64_t n, int64_t v,
                                int64_t d, int *err, cudaStream_t s) {
  if (v * d == 0)
    return cudaSuccess;
  embeddingGradKernel<<<blocksOf(v), kBlock, 0, s>>>(out, indices, dy, n, v, d,
                                                     err);
  return cudaGetLastError();
}

cudaError_t launchCrossEntropy(const TDesc &out, const TDesc &logits,
                               const TDesc &labels, const float *gradLoss,
                               int64_t all, int64_t first, int64_t rows,
                               int64_t classes, int64_t ignore, float *scratch,
                               int *err, cudaStream_t s) {
  int *count = reinterpret_cast<int *>(scratch + rows);
  if (gradLoss) { // the count first: every row divides by it
    crossEntropyTotalKernel<<<1, 1, 0, s>>>(labels, all, first, rows, classes,
                                            ignore, count, nullptr, nullptr,
                                            err);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess)
      return e;
  }
  if (rows > 0) {
    crossEntropyRowsKernel<<<blocksOf(rows), kBlock, 0, s>>>(
        out, logits, labels, first, gradLoss, classes, ignore, count, scratch,
        err);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess)
      return e;
  }
  if (!gradLoss)
    crossEntropyTotalKernel<<<1, 1, 0, s>>>(
        labels, all, first, rows, classes, ignore, count, scratch,
        reinterpret_cast<float *>(out.data), err);
  return cudaGetLastError();
}

cudaError_t launchAttention(const TDesc &out, const TDesc &lse,
                            const TDesc &q, const TDesc &k, const TDesc &v,
                            int64_t bh, int64_t sq, int64_t sk, int64_t d,
                            int64_t dv, float scale, bool causal,
                            float *scores, cudaStream_t s) {
  if (bh * sq == 0)
    return cudaSuccess;
  AttnArgs a{q, k, v, out, lse, {}, {}, {}, {}};
  attentionKernel<<<gridFor(bh * sq), kBlock, 0, s>>>(a, bh, sq, sk, d, dv,
                                                      scale, causal, scores);
  return cudaGetLastError();
}

cudaError_t launchAttentionGrad(const TDesc &dq, const TDesc &dk,
                                const TDesc &dvOut, const TDesc &q,
                                const TDesc &k, const TDesc &v,
                                const TDesc &lse, const TDesc &dout,
                                int64_t bh, int64_t sq, int64_t sk, int64_t d,
                                int64_t dv, float scale, bool causal,
                                float *scratch, cudaStream_t s) {
  AttnArgs a{q, k, v, {}, lse, dout, dq, dk, dvOut};
  float *P = scratch, *DP = scratch + bh * sq * sk, *rowDot = DP + bh * sq * sk;
  if (bh * sq > 0) {
    attentionGradQKernel<<<gridFor(bh * sq), kBlock, 0, s>>>(
        a, bh, sq, sk, d, dv, scale, causal, P, DP, rowDot);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess)
      return e;
  }
  if (bh * sk > 0)
    attentionGradKVKernel<<<gridFor(bh * sk), kBlock, 0, s>>>(
        a, bh, sq, sk, d, dv, scale, causal, P, DP, rowDot);
  return cudaGetLastError();
}

cudaError_t launchAdamW(const TDesc &newP, const TDesc &newM,
                        const TDesc &newV, const TDesc &p, const TDesc &g,
                        const TDesc &m, const TDesc &v, const TDesc &step,
                        double lr, double b1, double b2, double eps, double wd,
                        float *scratch, int *err, cudaStream_t s) {
  adamScalarsKernel<<<1, 1, 0, s>>>(step, b1, b2, scratch, err);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess)
    return e;
  int64_t n = numElements(p);
  if (n == 0)
    return cudaSuccess;
  AdamArgs a{p, g, m, v, newP, newM, newV};
  adamWKernel<<<gridFor(n), kBlock, 0, s>>>(
      a, n, formulas::adamWScalars<float>(lr, b1, b2, eps, wd, 1.0f, 1.0f),
      scratch);
  return cudaGetLastError();
}

cudaError_t launchMultiTensorAdamW(const AdamArgs *tensors,
                                   const int64_t *starts, int count,
                                   int64_t total, const TDesc &step, double lr,
                                   double b1, double b2, double eps, double wd,
                                   float *scratch, int *err, cudaStream_t s) {
  adamScalarsKernel<<<1, 1, 0, s>>>(step, b1, b2, scratch, err);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess)
    return e;
  if (count == 0 || total == 0)
    return cudaSuccess;
  multiTensorAdamWKernel<<<gridFor(total), kBlock, 0, s>>>(
      tensors, starts, count, total,
      formulas::adamWScalars<float>(lr, b1, b2, eps, wd, 1.0f, 1.0f), scratch);
  return cudaGetLastError();
}

cudaError_t launchSgd(const TDesc &newP, const TDesc *newBuf, const TDesc &p,
                      const TDesc &g, const TDesc *buf, float lr, float mom,
                      float keep, float wd, bool nesterov, cudaStream_t s) {
  int64_t n = numElements(p);
  if (n == 0)
    return cudaSuccess;
  AdamArgs a{p, g, buf ? *buf : p, p, newP, newBuf ? *newBuf : newP, newP};
  sgdKernel<<<gridFor(n), kBlock, 0, s>>>(a, buf != nullptr, n, lr, mom, keep,
                                          wd, nesterov);
  return cudaGetLastError();
}

cudaError_t launchLossScaleUpdate(float *newScale, int64_t *newIter,
                                  int64_t *newLast, int64_t *newHyst,
                                  const float *overflow, const float *scale,
                                  const int64_t *iter, const int64_t *last,
                                  const int64_t *hyst, int64_t window,
                                  int64_t delayedShift, double minScale,
                                  double factor, cudaStream_t s) {
  lossScaleKernel<<<1, 1, 0, s>>>(newScale, newIter, newLast, newHyst,
                                  overflow, scale, iter, last, hyst, window,
                                  delayedShift, minScale, factor);
  return cudaGetLastError();
}

} // namespace mwrt::cuda
