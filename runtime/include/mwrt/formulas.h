//===- formulas.h - Per-element formulas of the mw ops ----------*- C++ -*-===//
//
// The one definition of every per-element computation that the reference
// evaluator (lib/Eval), the CPU backend (runtime/src/cpu) and the CUDA
// backend (runtime/src/cuda) share, in the manner of XLA's elemental IR
// emitter, which serves its CPU and GPU backends from one formula per op:
// elementwise ops and their derivatives, the f16/bf16 encodings and rounding,
// the normalization of a row (layer_norm, rms_norm and their gradients),
// AdamW's update, and DeepSpeed's dynamic loss-scale update.
// Each formula is a template on the element type it computes in (float in
// the runtime and the evaluator's f32 mode, double in the evaluator's f64
// mode used for finite differences), and is __host__ __device__ under nvcc.
// Header-only, depending on <cmath> and <cstdint> alone, so runtime/ still
// builds without MLIR and the compiler includes it without the runtime.
//
// An elementwise op names its formula in the ODS (`formula = "gelu"` in
// include/memwall/Dialect/MW/IR/MWOps.td); the generated op table
// (mwrt/op_table.h, from mw-tblgen) dispatches to it with the op's
// attributes as trailing arguments, in ODS order: floats as double, enums as
// their integer value, integers as int64_t, booleans as bool. Adding an
// elementwise op is: the ODS definition, its gradient rule, a formula here,
// and tests.
//
//===----------------------------------------------------------------------===//

#ifndef MWRT_FORMULAS_H
#define MWRT_FORMULAS_H

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define MWRT_HD __host__ __device__ __forceinline__
#else
#define MWRT_HD inline
#endif

namespace mwrt::formulas {

//===----------------------------------------------------------------------===//
// Math functions: the C library's on the host, CUDA's on the device
//===----------------------------------------------------------------------===//

#if defined(__CUDA_ARCH__)
#define MWRT_MATH1(name, cudaFloat)                                            \
  MWRT_HD float m##name(float x) { return ::cudaFloat(x); }                    \
  MWRT_HD double m##name(double x) { return ::name(x); }
#else
#define MWRT_MATH1(name, cudaFloat)                                            \
  MWRT_HD float m##name(float x) { return std::name(x); }                      \
  MWRT_HD double m##name(double x) { return std::name(x); }
#endif
MWRT_MATH1(exp, expf)
MWRT_MATH1(log, logf)
MWRT_MATH1(tanh, tanhf)
MWRT_MATH1(sqrt, sqrtf)
MWRT_MATH1(erf, erff)
MWRT_MATH1(fabs, fabsf)
#undef MWRT_MATH1
MWRT_HD double mpow(double x, double y) {
#if defined(__CUDA_ARCH__)
  return ::pow(x, y);
#else
  return std::pow(x, y);
#endif
}

template <typename T> MWRT_HD bool isNaN(T x) { return x != x; }

//===----------------------------------------------------------------------===//
// Element encodings: f16 and bf16 (round to nearest, ties to even; a NaN
// stays a quiet NaN), bit for bit llvm::APFloat's conversions
//===----------------------------------------------------------------------===//

MWRT_HD uint32_t floatBits(float v) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(v);
#else
  union {
    float f;
    uint32_t u;
  } pun{v};
  return pun.u;
#endif
}
MWRT_HD float bitsFloat(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  union {
    uint32_t u;
    float f;
  } pun{u};
  return pun.f;
#endif
}

MWRT_HD uint16_t floatToBFloatBits(float value) {
  uint32_t u = floatBits(value);
  if ((u & 0x7fffffffu) > 0x7f800000u) // NaN: keep it a (quiet) NaN.
    return static_cast<uint16_t>((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u); // round to nearest, ties to even
  return static_cast<uint16_t>(u >> 16);
}
MWRT_HD float bfloatBitsToFloat(uint16_t bits) {
  return bitsFloat(static_cast<uint32_t>(bits) << 16);
}

/// IEEE f32 to f16 as llvm::APFloat::convert does it (a NaN keeps its sign
/// and top payload bits and becomes quiet).
MWRT_HD uint16_t floatToHalfBits(float value) {
  uint32_t u = floatBits(value);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) // NaN
    return sign | 0x7e00u | static_cast<uint16_t>((a >> 13) & 0x3ffu);
  if (a >= 0x477ff000u) // >= 65520 = max + half an ulp: rounds to infinity
    return sign | 0x7c00u;
  if (a >= 0x38800000u) { // a normal f16 (>= 2^-14)
    uint32_t r = a + 0xfffu + ((a >> 13) & 1u) - 0x38000000u; // rebias 127->15
    return sign | static_cast<uint16_t>(r >> 13);
  }
  if (a <= 0x33000000u) // <= 2^-25, half the smallest subnormal: rounds to 0
    return sign;
  // A subnormal f16: the significand in units of 2^-24, rounded.
  uint32_t exponent = a >> 23, mantissa = (a & 0x7fffffu) | 0x800000u;
  uint32_t shift = 126 - exponent; // in [14, 24]
  uint32_t q = mantissa >> shift, rem = mantissa & ((1u << shift) - 1);
  uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u)))
    ++q; // may carry into the smallest normal, which is the right encoding
  return sign | static_cast<uint16_t>(q);
}
MWRT_HD float halfBitsToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu, mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) // inf, or a NaN made quiet
    return bitsFloat(sign | 0x7f800000u | (mantissa << 13) |
                     (mantissa ? 0x400000u : 0u));
  if (exponent == 0) { // zero or subnormal: mantissa * 2^-24, exact in f32
    float v = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return bitsFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

MWRT_HD float roundToBFloat(float v) {
  return bfloatBitsToFloat(floatToBFloatBits(v));
}
MWRT_HD float roundToHalf(float v) { return halfBitsToFloat(floatToHalfBits(v)); }

/// Significand bits of the float element types (f32, f16, bf16).
enum class FloatFormat { F32, F16, BF16 };

/// `value` rounded to `format` and widened back to f32 (exact).
MWRT_HD float roundTo(FloatFormat format, float value) {
  return format == FloatFormat::BF16  ? roundToBFloat(value)
         : format == FloatFormat::F16 ? roundToHalf(value)
                                      : value;
}

/// A double rounded once, directly, to `format` (nearest, ties to even).
/// Going through f32 first would round twice: the integer 2^25 + 2^17 + 1
/// would become the tie 2^25 + 2^17 in f32 and then 2^25 in bf16 instead of
/// 2^25 + 2^18. Rounding to odd into f32 first avoids that: f32 has at least
/// two more significand bits than f16 and bf16.
inline float roundOnceTo(FloatFormat format, double value) {
  float f = static_cast<float>(value); // nearest even: the single f32 rounding
  if (format == FloatFormat::F32 || std::isnan(value) ||
      static_cast<double>(f) == value)
    return roundTo(format, f);
  if (std::fabs(static_cast<double>(f)) > std::fabs(value))
    f = std::nextafter(f, 0.0f);
  return roundTo(format, bitsFloat(floatBits(f) | 1u));
}

/// An int64 rounded once to `format`, as a cast must.
inline float intTo(FloatFormat format, int64_t value) {
  int precision = format == FloatFormat::F32   ? 24
                  : format == FloatFormat::F16 ? 11
                                               : 8;
  uint64_t mag = value < 0 ? 0 - static_cast<uint64_t>(value)
                           : static_cast<uint64_t>(value);
  int bits = 0;
  while (bits < 64 && (mag >> bits))
    ++bits;
  int shift = bits > precision ? bits - precision : 0;
  uint64_t q = mag >> shift;
  if (shift > 0) {
    uint64_t rem = mag & ((uint64_t(1) << shift) - 1);
    uint64_t half = uint64_t(1) << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
      ++q;
  }
  // q has at most precision + 1 bits, so both conversions below are exact and
  // roundTo only turns an f16 overflow into infinity.
  float f = std::ldexp(static_cast<float>(q), shift);
  return roundTo(format, value < 0 ? -f : f);
}

//===----------------------------------------------------------------------===//
// KV cache elements: f8E4M3FN and the int8 / fp8 quantization of
// mw.kv_cache_write, dequantized by mw.paged_attention (docs/inference.md)
//===----------------------------------------------------------------------===//

/// f32 to f8E4M3FN (1 sign, 4 exponent bits with bias 7, 3 significand
/// bits; no infinities, S.1111.111 is NaN, the largest finite is 448):
/// round to nearest, ties to even, saturating: anything of magnitude >= 448,
/// infinities included, becomes +-448 (CUDA's __NV_SATFINITE); a NaN stays
/// NaN (0x7f with the sign).
MWRT_HD uint8_t floatToF8E4M3Bits(float value) {
  uint32_t u = floatBits(value);
  uint8_t sign = static_cast<uint8_t>((u >> 24) & 0x80u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) // NaN
    return sign | 0x7fu;
  if (a >= 0x43e00000u) // >= 448
    return sign | 0x7eu;
  if (a >= 0x3c800000u) { // a normal f8 (>= 2^-6): rebias 127 -> 7
    uint32_t r = a + 0x7ffffu + ((a >> 20) & 1u) - (120u << 23);
    return sign | static_cast<uint8_t>(r >> 20);
  }
  if (a <= 0x3a800000u) // <= 2^-10, half the smallest subnormal: rounds to 0
    return sign;
  // A subnormal f8: the significand in units of 2^-9, rounded.
  uint32_t exponent = a >> 23, mantissa = (a & 0x7fffffu) | 0x800000u;
  uint32_t shift = 141 - exponent; // in [21, 24]
  uint32_t q = mantissa >> shift, rem = mantissa & ((1u << shift) - 1);
  uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u)))
    ++q; // may carry into the smallest normal, which is the right encoding
  return sign | static_cast<uint8_t>(q);
}
MWRT_HD float f8E4M3BitsToFloat(uint8_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x80u) << 24;
  uint32_t exponent = (bits >> 3) & 0xfu, mantissa = bits & 0x7u;
  if (exponent == 0xf && mantissa == 0x7)
    return bitsFloat(sign | 0x7fc00000u);
  if (exponent == 0) { // zero or subnormal: mantissa * 2^-9, exact in f32
    float v = static_cast<float>(mantissa) * 0.001953125f;
    return sign ? -v : v;
  }
  return bitsFloat(sign | ((exponent + 120) << 23) | (mantissa << 20));
}
MWRT_HD float roundToF8E4M3(float v) {
  return f8E4M3BitsToFloat(floatToF8E4M3Bits(v));
}

/// The int8 code of `x` under `scale`: x / scale rounded to nearest (ties
/// to even) and clamped to [-127, 127] (symmetric: -128 is never written);
/// a NaN becomes 0.
MWRT_HD int8_t quantizeI8(float x, float scale) {
  float q = x / scale;
  if (isNaN(q))
    return 0;
  if (q >= 127.0f)
    return 127;
  if (q <= -127.0f)
    return -127;
#if defined(__CUDA_ARCH__)
  return static_cast<int8_t>(::rintf(q));
#else
  return static_cast<int8_t>(std::nearbyint(q));
#endif
}
/// The f8E4M3FN code of `x` under `scale`: x / scale, saturating.
MWRT_HD uint8_t quantizeF8E4M3(float x, float scale) {
  return floatToF8E4M3Bits(x / scale);
}
/// Dequantization: the code's value times its scale, in f32.
MWRT_HD float dequantizeI8(int8_t q, float scale) {
  return static_cast<float>(q) * scale;
}
MWRT_HD float dequantizeF8E4M3(uint8_t bits, float scale) {
  return f8E4M3BitsToFloat(bits) * scale;
}

/// An integer wrapped to 32 bits (two's complement), as a machine would.
MWRT_HD int64_t wrapToI32(int64_t v) {
  return static_cast<int32_t>(static_cast<uint32_t>(v));
}
/// a + b with two's-complement wrap-around instead of undefined behaviour.
MWRT_HD int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}
MWRT_HD int64_t floorMod(int64_t a, int64_t m) {
  int64_t r = a % m;
  return r < 0 ? r + m : r;
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops (T is float or double; int64_t overloads wrap)
//===----------------------------------------------------------------------===//

template <typename T> MWRT_HD T add(T x, T y) { return x + y; }
template <typename T> MWRT_HD T sub(T x, T y) { return x - y; }
template <typename T> MWRT_HD T mul(T x, T y) { return x * y; }
template <typename T> MWRT_HD T div(T x, T y) { return x / y; }
/// NaN-propagating, like std::maximum in C++26 and torch.maximum.
template <typename T> MWRT_HD T maximum(T x, T y) {
  return (isNaN(x) || isNaN(y)) ? T(NAN) : (x < y ? y : x);
}

// Integers compute in int64 and are wrapped to their type by the caller.
// Integer division by zero is checked by the caller before anything is
// written (the whole op fails); here it gives 0.
MWRT_HD int64_t add(int64_t x, int64_t y) { return wrapAdd(x, y); }
MWRT_HD int64_t sub(int64_t x, int64_t y) {
  return static_cast<int64_t>(static_cast<uint64_t>(x) -
                              static_cast<uint64_t>(y));
}
MWRT_HD int64_t mul(int64_t x, int64_t y) {
  return static_cast<int64_t>(static_cast<uint64_t>(x) *
                              static_cast<uint64_t>(y));
}
MWRT_HD int64_t div(int64_t x, int64_t y) {
  if (y == 0)
    return 0;
  if (y == -1) // INT64_MIN / -1 overflows: wrap like the negation
    return static_cast<int64_t>(0 - static_cast<uint64_t>(x));
  return x / y; // truncating
}
MWRT_HD int64_t maximum(int64_t x, int64_t y) { return x < y ? y : x; }

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

inline constexpr double kSqrt2OverPi = 0.7978845608028654;
inline constexpr double kGeluCoeff = 0.044715;
inline constexpr double kInvSqrt2 = 0.7071067811865476;
inline constexpr double kInvSqrt2Pi = 0.3989422804014327;

template <typename T> MWRT_HD T neg(T x) { return -x; }
MWRT_HD int64_t neg(int64_t x) {
  return static_cast<int64_t>(0 - static_cast<uint64_t>(x));
}
template <typename T> MWRT_HD T exp(T x) { return mexp(x); }
template <typename T> MWRT_HD T log(T x) { return mlog(x); }
template <typename T> MWRT_HD T tanh(T x) { return mtanh(x); }
template <typename T> MWRT_HD T sqrt(T x) { return msqrt(x); }
template <typename T> MWRT_HD T rsqrt(T x) { return T(1) / msqrt(x); }
template <typename T> MWRT_HD T reciprocal(T x) { return T(1) / x; }
template <typename T> MWRT_HD T relu(T x) { return x < T(0) ? T(0) : x; }
template <typename T> MWRT_HD T sigmoid(T x) {
  return T(1) / (T(1) + mexp(-x));
}
template <typename T> MWRT_HD T silu(T x) { return x * sigmoid(x); }

/// GeluApproximation's values (MWBase.td): 0 erf (exact), 1 tanh (GPT-2).
inline constexpr int64_t kGeluTanh = 1;

/// GELU: exact `0.5 x (1 + erf(x / sqrt 2))`, or GPT-2's tanh form.
template <typename T> MWRT_HD T gelu(T x, int64_t approximate) {
  if (approximate == kGeluTanh)
    return T(0.5) * x *
           (T(1) + mtanh(T(kSqrt2OverPi) * (x + T(kGeluCoeff) * x * x * x)));
  return T(0.5) * x * (T(1) + merf(x * T(kInvSqrt2)));
}

/// torch.clamp: min(max(x, lo), hi); a NaN stays NaN.
template <typename T> MWRT_HD T clamp(T x, double lo, double hi) {
  if (isNaN(x))
    return x;
  T r = x < T(lo) ? T(lo) : x;
  return r > T(hi) ? T(hi) : r;
}

//===----------------------------------------------------------------------===//
// Activation derivatives: the *_grad ops compute dy * f'(x)
//===----------------------------------------------------------------------===//

template <typename T> MWRT_HD T reluDerivative(T x) {
  return x > T(0) ? T(1) : T(0);
}
template <typename T> MWRT_HD T siluDerivative(T x) {
  T s = sigmoid(x);
  return s * (T(1) + x * (T(1) - s));
}
template <typename T> MWRT_HD T geluDerivative(T x, int64_t approximate) {
  if (approximate == kGeluTanh) {
    T u = T(kSqrt2OverPi) * (x + T(kGeluCoeff) * x * x * x);
    T t = mtanh(u);
    T du = T(kSqrt2OverPi) * (T(1) + T(3) * T(kGeluCoeff) * x * x);
    return T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * du;
  }
  T cdf = T(0.5) * (T(1) + merf(x * T(kInvSqrt2)));
  T pdf = T(kInvSqrt2Pi) * mexp(T(-0.5) * x * x);
  return cdf + x * pdf;
}

template <typename T> MWRT_HD T reluGrad(T x, T dy) {
  return dy * reluDerivative(x);
}
template <typename T> MWRT_HD T siluGrad(T x, T dy) {
  return dy * siluDerivative(x);
}
template <typename T> MWRT_HD T geluGrad(T x, T dy, int64_t approximate) {
  return dy * geluDerivative(x, approximate);
}
/// torch.clamp's gradient: dy where min <= x <= max, else 0.
template <typename T> MWRT_HD T clampGrad(T x, T dy, double lo, double hi) {
  return x >= T(lo) && x <= T(hi) ? dy : T(0);
}

//===----------------------------------------------------------------------===//
// Normalization of one row (layer_norm, rms_norm)
//===----------------------------------------------------------------------===//

// The per-element pieces are shared with the CUDA kernels, which reduce a
// row in parallel; the sequential rows are the evaluator's and the CPU's.

/// 1 / sqrt(sumSq / d + epsilon): the statistic layer_norm and rms_norm save.
template <typename T> MWRT_HD T rstdOf(T sumSq, T d, T epsilon) {
  return T(1) / msqrt(sumSq / d + epsilon);
}
/// One element of layer_norm: normalized, scaled and shifted.
template <typename T>
MWRT_HD T layerNormElement(T x, T mean, T rstd, T gamma, T beta) {
  return (x - mean) * rstd * gamma + beta;
}
/// One element of rms_norm: normalized and scaled.
template <typename T> MWRT_HD T rmsNormElement(T x, T rstd, T gamma) {
  return x * rstd * gamma;
}
/// One element of layer_norm's input gradient, from the row's sums of dxhat
/// (s1) and of dxhat * xhat (s2).
template <typename T>
MWRT_HD T layerNormGradElement(T dxhat, T xhat, T rstd, T s1, T s2, T d) {
  return rstd * (dxhat - s1 / d - xhat * s2 / d);
}
/// One element of rms_norm's input gradient (s2 as for layer_norm).
template <typename T>
MWRT_HD T rmsNormGradElement(T dxhat, T xhat, T rstd, T s2, T d) {
  return rstd * (dxhat - xhat * s2 / d);
}

/// layer_norm of one dense row of `d` elements, in order.
template <typename T>
void layerNormRow(const T *x, const T *gamma, const T *beta, int64_t d,
                  T epsilon, T *y, T &mean, T &rstd) {
  T sum = T(0);
  for (int64_t j = 0; j < d; ++j)
    sum += x[j];
  T mu = sum / static_cast<T>(d);
  T sq = T(0);
  for (int64_t j = 0; j < d; ++j)
    sq += (x[j] - mu) * (x[j] - mu);
  T rs = rstdOf(sq, static_cast<T>(d), epsilon);
  for (int64_t j = 0; j < d; ++j)
    y[j] = layerNormElement(x[j], mu, rs, gamma[j], beta[j]);
  mean = mu;
  rstd = rs;
}

/// rms_norm of one dense row of `d` elements, in order.
template <typename T>
void rmsNormRow(const T *x, const T *gamma, int64_t d, T epsilon, T *y,
                T &rstd) {
  T sq = T(0);
  for (int64_t j = 0; j < d; ++j)
    sq += x[j] * x[j];
  T rs = rstdOf(sq, static_cast<T>(d), epsilon);
  for (int64_t j = 0; j < d; ++j)
    y[j] = rmsNormElement(x[j], rs, gamma[j]);
  rstd = rs;
}

/// layer_norm_grad of one dense row: writes dx, adds the row's terms to
/// dgamma and dbeta (rows are accumulated in order).
template <typename T>
void layerNormGradRow(const T *x, const T *gamma, const T *dy, T mean, T rstd,
                      int64_t d, T *dx, T *dgamma, T *dbeta) {
  T s1 = T(0), s2 = T(0);
  for (int64_t j = 0; j < d; ++j) {
    T xhat = (x[j] - mean) * rstd;
    T dxhat = dy[j] * gamma[j];
    s1 += dxhat;
    s2 += dxhat * xhat;
    dgamma[j] += dy[j] * xhat;
    dbeta[j] += dy[j];
  }
  T fd = static_cast<T>(d);
  for (int64_t j = 0; j < d; ++j) {
    T xhat = (x[j] - mean) * rstd;
    T dxhat = dy[j] * gamma[j];
    dx[j] = layerNormGradElement(dxhat, xhat, rstd, s1, s2, fd);
  }
}

/// rms_norm_grad of one dense row: writes dx, adds to dgamma.
template <typename T>
void rmsNormGradRow(const T *x, const T *gamma, const T *dy, T rstd, int64_t d,
                    T *dx, T *dgamma) {
  T s2 = T(0);
  for (int64_t j = 0; j < d; ++j) {
    T xhat = x[j] * rstd;
    T dxhat = dy[j] * gamma[j];
    s2 += dxhat * xhat;
    dgamma[j] += dy[j] * xhat;
  }
  T fd = static_cast<T>(d);
  for (int64_t j = 0; j < d; ++j) {
    T xhat = x[j] * rstd;
    T dxhat = dy[j] * gamma[j];
    dx[j] = rmsNormGradElement(dxhat, xhat, rstd, s2, fd);
  }
}

//===----------------------------------------------------------------------===//
// AdamW: torch.optim.AdamW's update, scalars in double, elements in T
//===----------------------------------------------------------------------===//

/// The scalars of one AdamW update, computed in double as PyTorch computes
/// them on the host, then narrowed to T for the elements.
template <typename T> struct AdamWScalars {
  T decay;         ///< 1 - lr * weight_decay
  T beta1, beta2;
  T oneMinusBeta1; ///< 1 - beta in double: 1.0f - float(0.999) is 1.3e-5 off
  T oneMinusBeta2;
  T lr, eps;
  T bc1, bc2;      ///< bias corrections 1 - beta^step
};

/// 1 - beta^step, AdamW's bias correction (step is 1-based).
MWRT_HD double biasCorrection(double beta, double step) {
  return 1.0 - mpow(beta, step);
}

template <typename T>
MWRT_HD AdamWScalars<T> adamWScalars(double lr, double beta1, double beta2,
                                     double eps, double weightDecay, T bc1,
                                     T bc2) {
  return {static_cast<T>(1.0 - lr * weightDecay),
          static_cast<T>(beta1),
          static_cast<T>(beta2),
          static_cast<T>(1.0 - beta1),
          static_cast<T>(1.0 - beta2),
          static_cast<T>(lr),
          static_cast<T>(eps),
          bc1,
          bc2};
}

/// One element of AdamW: decoupled weight decay, then the moment updates and
/// the bias-corrected step.
template <typename T>
MWRT_HD void adamWElement(const AdamWScalars<T> &s, T p, T g, T m, T v,
                          T &newP, T &newM, T &newV) {
  T pi = p * s.decay;
  T mi = s.beta1 * m + s.oneMinusBeta1 * g;
  T vi = s.beta2 * v + s.oneMinusBeta2 * g * g;
  T mhat = mi / s.bc1, vhat = vi / s.bc2;
  newP = pi - s.lr * mhat / (msqrt(vhat) + s.eps);
  newM = mi;
  newV = vi;
}

//===----------------------------------------------------------------------===//
// Dynamic loss scaling: DeepSpeed's DynamicLossScaler.update_scale
//===----------------------------------------------------------------------===//

/// The state mw.loss_scale_update reads and writes.
struct LossScaleState {
  double scale;     ///< a Python float in DeepSpeed: computed in double
  int64_t iter;     ///< steps taken
  int64_t last;     ///< the step of the last overflow
  int64_t hyst;     ///< overflows still tolerated before the scale drops
};

/// DeepSpeed's update_scale, line by line. The scale is stored as f32 by the
/// caller, saturated here (an infinite scale could never come back down);
/// counters wrap like machine integers instead of growing like Python's.
MWRT_HD LossScaleState updateLossScale(LossScaleState s, bool overflow,
                                       int64_t window, int64_t delayedShift,
                                       double minScale, double factor) {
  if (overflow) {
    if (delayedShift == 1 || s.hyst == 1) {
      double halved = s.scale / factor;
      s.scale = minScale > halved ? minScale : halved; // max(halved, min)
    } else {
      s.hyst = wrapAdd(s.hyst, -1);
    }
    s.last = s.iter;
  } else if (floorMod(s.iter, window) == floorMod(s.last, window)) {
    // (iter - last) % window == 0 without forming a difference that could
    // overflow.
    s.hyst = delayedShift;
    s.scale *= factor;
  }
  s.iter = wrapAdd(s.iter, 1);
  const double maxF32 = 3.4028234663852886e38; // FLT_MAX
  if (mfabs(s.scale) > maxF32)
    s.scale = s.scale < 0 ? -maxF32 : maxF32;
  return s;
}

} // namespace mwrt::formulas

#endif // MWRT_FORMULAS_H
