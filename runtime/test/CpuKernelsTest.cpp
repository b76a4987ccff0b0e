//===- CpuKernelsTest.cpp - Unit tests of the CPU kernels -----------------===//
//
// Tests mwrt/kernels.h: for every mw op a value test on small tensors whose
// expected values are worked out by hand or, where they hinge on the
// evaluator's exact formula, by that formula copied from
// lib/Eval/Evaluator.cpp and quoted beside the test; f16/bf16 rounding,
// integer wrapping, broadcasting, strided and aliased operands, matmul on
// both paths, and one test per class of bad call, each checking the message.
//
//===----------------------------------------------------------------------===//

#include "PlanTestHelpers.h"

#include "mwrt/kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace mwrt;

namespace {
using Shape = std::vector<int64_t>;
constexpr float kInf = std::numeric_limits<float>::infinity();

float roundF16(float x) { return halfBitsToFloat(floatToHalfBits(x)); }
float roundBF16(float x) { return bfloatBitsToFloat(floatToBFloatBits(x)); }
uint32_t bitsOf(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

/// A tensor that owns its bytes, for binding as a TensorRef.
struct Buf {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<uint8_t> bytes;
  Shape strides; ///< empty: row-major

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  TensorRef ref() const {
    return TensorRef(dtype, shape, bytes.data(), strides);
  }

  /// Element `i` of the underlying storage, decoded exactly.
  double at(int64_t i) const {
    const uint8_t *p = bytes.data() + i * dtypeSize(dtype);
    uint16_t h;
    float f;
    int32_t i32;
    int64_t i64;
    switch (dtype) {
    case DType::F16:
      std::memcpy(&h, p, 2);
      return halfBitsToFloat(h);
    case DType::BF16:
      std::memcpy(&h, p, 2);
      return bfloatBitsToFloat(h);
    case DType::I32:
      std::memcpy(&i32, p, 4);
      return i32;
    case DType::I64:
      std::memcpy(&i64, p, 8);
      return static_cast<double>(i64);
    default:
      std::memcpy(&f, p, 4);
      return f;
    }
  }
  float f(int64_t i) const { return static_cast<float>(at(i)); }
  int64_t i(int64_t i) const {
    int64_t v = 0;
    if (dtype == DType::I32) {
      int32_t w;
      std::memcpy(&w, bytes.data() + 4 * i, 4);
      v = w;
    } else {
      std::memcpy(&v, bytes.data() + 8 * i, 8);
    }
    return v;
  }
  void set(int64_t i, double v) {
    uint8_t *p = bytes.data() + i * dtypeSize(dtype);
    uint16_t h;
    switch (dtype) {
    case DType::F16:
      h = floatToHalfBits(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      break;
    case DType::BF16:
      h = floatToBFloatBits(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      break;
    case DType::I32: {
      auto w = static_cast<int32_t>(v);
      std::memcpy(p, &w, 4);
      break;
    }
    case DType::I64: {
      auto w = static_cast<int64_t>(v);
      std::memcpy(p, &w, 8);
      break;
    }
    default: {
      auto w = static_cast<float>(v);
      std::memcpy(p, &w, 4);
    }
    }
  }
};

/// A tensor of `values` (row-major), each rounded to `dtype` through f32.
Buf make(DType dtype, Shape shape, std::vector<double> values) {
  Buf b{dtype, std::move(shape), {}, {}};
  b.bytes.resize(b.numel() * dtypeSize(dtype));
  EXPECT_EQ(static_cast<int64_t>(values.size()), b.numel());
  for (size_t i = 0; i < values.size(); ++i)
    b.set(static_cast<int64_t>(i), values[i]);
  return b;
}
Buf f32(Shape shape, std::vector<double> v) {
  return make(DType::F32, shape, v);
}
Buf f16(Shape shape, std::vector<double> v) {
  return make(DType::F16, shape, v);
}
Buf bf16(Shape shape, std::vector<double> v) {
  return make(DType::BF16, shape, v);
}
Buf f32s(float v) { return f32({}, {v}); }

/// An integer tensor (exact for all of int64).
Buf ints(DType dtype, Shape shape, std::vector<int64_t> values) {
  Buf b{dtype, std::move(shape), {}, {}};
  b.bytes.resize(b.numel() * dtypeSize(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::I32) {
      auto w = static_cast<int32_t>(values[i]);
      std::memcpy(b.bytes.data() + 4 * i, &w, 4);
    } else {
      std::memcpy(b.bytes.data() + 8 * i, &values[i], 8);
    }
  }
  return b;
}
Buf i32(Shape shape, std::vector<int64_t> v) {
  return ints(DType::I32, shape, v);
}
Buf i64(Shape shape, std::vector<int64_t> v) {
  return ints(DType::I64, shape, v);
}

/// An output buffer filled with a poison pattern, so that an element a
/// kernel forgets to write shows up.
Buf out(DType dtype, Shape shape) {
  Buf b{dtype, std::move(shape), {}, {}};
  b.bytes.assign(b.numel() * dtypeSize(dtype), 0xA5);
  return b;
}

mwrt_status run(OpKind op, std::vector<const Buf *> ins,
                std::vector<Buf *> outs, const KernelAttrs &attrs = {},
                const CpuKernelOptions &options = {}) {
  std::vector<TensorRef> in, res;
  for (const Buf *b : ins)
    in.push_back(b->ref());
  for (Buf *b : outs)
    res.push_back(b->ref());
  return runCpuKernel(op, attrs, in, res, options);
}

/// Every element of `b` has exactly the bits of `expected` (already rounded
/// to b's dtype); NaN matches any NaN.
::testing::AssertionResult sameFloats(const Buf &b,
                                      const std::vector<float> &expected) {
  if (b.numel() != static_cast<int64_t>(expected.size()))
    return ::testing::AssertionFailure()
           << b.numel() << " elements, expected " << expected.size();
  for (size_t i = 0; i < expected.size(); ++i) {
    float got = b.f(i), want = expected[i];
    if (std::isnan(got) && std::isnan(want))
      continue;
    if (bitsOf(got) != bitsOf(want))
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << got << " (0x" << std::hex
             << bitsOf(got) << "), expected " << want << " (0x" << bitsOf(want)
             << ")";
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult nearFloats(const Buf &b,
                                      const std::vector<double> &expected,
                                      double tolerance) {
  for (size_t i = 0; i < expected.size(); ++i)
    if (!(std::abs(b.at(i) - expected[i]) <= tolerance))
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << b.at(i) << ", expected "
             << expected[i];
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult sameInts(const Buf &b,
                                    const std::vector<int64_t> &expected) {
  for (size_t i = 0; i < expected.size(); ++i)
    if (b.i(i) != expected[i])
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << b.i(i) << ", expected "
             << expected[i];
  return ::testing::AssertionSuccess();
}

using mwrt::test::failsWith;

#define EXPECT_OK(expr)                                                        \
  do {                                                                         \
    mwrt_status st_ = (expr);                                                  \
    ASSERT_EQ(st_, MWRT_OK) << mwrt_last_error();                              \
  } while (false)

KernelAttrs axes(Shape list, bool keepdims = false) {
  KernelAttrs a;
  a.setInts("axes", std::move(list));
  if (keepdims)
    a.setBool("keepdims", true);
  return a;
}
KernelAttrs axis(int64_t v) {
  KernelAttrs a;
  a.setInt("axis", v);
  return a;
}
} // namespace

//===----------------------------------------------------------------------===//
// Names, conversions, generic checks
//===----------------------------------------------------------------------===//

TEST(CpuKernels, OpNamesRoundTrip) {
  // That the table has a row for every op of the ODS is checked on the
  // compiler side (test/unit/OpTableTest.cpp).
  EXPECT_GT(kNumOpKinds, 0);
  for (int i = 0; i < kNumOpKinds; ++i) {
    auto kind = static_cast<OpKind>(i);
    OpKind parsed = OpKind::Constant;
    ASSERT_TRUE(parseOpKind(opKindName(kind), parsed)) << opKindName(kind);
    EXPECT_EQ(parsed, kind);
  }
  OpKind kind = OpKind::Exp;
  EXPECT_TRUE(parseOpKind("mw.loss_scale_update", kind));
  EXPECT_EQ(kind, OpKind::LossScaleUpdate);
  EXPECT_STREQ(opKindName(OpKind::Add), "mw.add");
  EXPECT_FALSE(parseOpKind("add", kind));
  EXPECT_FALSE(parseOpKind("mw.conv", kind));
  EXPECT_EQ(kind, OpKind::LossScaleUpdate);
}

TEST(CpuKernels, HalfConversionSpotValues) {
  EXPECT_EQ(floatToHalfBits(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalfBits(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalfBits(65504.0f), 0x7bff);  // largest finite
  EXPECT_EQ(floatToHalfBits(65519.99f), 0x7bff); // below max + ulp/2
  EXPECT_EQ(floatToHalfBits(65520.0f), 0x7c00);  // tie rounds to even: inf
  EXPECT_EQ(floatToHalfBits(-kInf), 0xfc00);
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -24)), 0x0001); // min subnormal
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -25)), 0x0000); // tie to even: 0
  EXPECT_EQ(floatToHalfBits(std::ldexp(3.0f, -26)), 0x0001); // 0.75 ulp: up
  EXPECT_EQ(floatToHalfBits(std::ldexp(3.0f, -25)), 0x0002); // 1.5 ulp: even
  EXPECT_EQ(floatToHalfBits(std::ldexp(5.0f, -25)), 0x0002); // 2.5 ulp: even
  EXPECT_EQ(floatToHalfBits(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalfBits(1.0f + std::ldexp(1.0f, -11)), 0x3c00); // tie
  EXPECT_EQ(floatToHalfBits(1.0f + std::ldexp(3.0f, -11)), 0x3c02); // tie
  EXPECT_EQ(floatToHalfBits(NAN), 0x7e00);
  EXPECT_EQ(halfBitsToFloat(0x3555), 0.333251953125f);
  EXPECT_EQ(halfBitsToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfBitsToFloat(0x7c00), kInf);
  EXPECT_TRUE(std::isnan(halfBitsToFloat(0x7c01)));
  EXPECT_EQ(floatToBFloatBits(1.0f), 0x3f80);
  EXPECT_EQ(floatToBFloatBits(1.0f + std::ldexp(1.0f, -8)), 0x3f80); // tie
  EXPECT_EQ(floatToBFloatBits(1.0f + std::ldexp(3.0f, -8)), 0x3f82); // tie
  EXPECT_EQ(floatToBFloatBits(NAN), 0x7fc0);
  EXPECT_EQ(bfloatBitsToFloat(0x4049), 3.140625f);
}

TEST(CpuKernels, HalfConversionRoundTripsEveryHalf) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = halfBitsToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f))
      continue;
    ASSERT_EQ(floatToHalfBits(f), h) << std::hex << h;
  }
}

#ifdef __FLT16_MAX__
// GCC's _Float16 conversion (libgcc, IEEE round to nearest even) as an
// independent oracle: every f16 value, the midpoints between neighbours and
// the floats one ulp either side of them, plus a sweep over all floats.
TEST(CpuKernels, HalfConversionMatchesFloat16) {
  auto check = [](float f) {
    _Float16 h = static_cast<_Float16>(f);
    uint16_t want;
    std::memcpy(&want, &h, 2);
    if (std::isnan(f))
      return (floatToHalfBits(f) & 0x7e00) == 0x7e00;
    return floatToHalfBits(f) == want;
  };
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    float lo = halfBitsToFloat(static_cast<uint16_t>(h));
    float hi = halfBitsToFloat(static_cast<uint16_t>(h + 1));
    float mid = lo + (hi - lo) / 2;
    for (float f :
         {lo, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, kInf)}) {
      ASSERT_TRUE(check(f)) << f;
      ASSERT_TRUE(check(-f)) << -f;
    }
  }
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 4099) {
    float f;
    uint32_t w = static_cast<uint32_t>(u);
    std::memcpy(&f, &w, 4);
    ASSERT_TRUE(check(f)) << std::hex << w;
  }
}
#endif

TEST(CpuKernels, RejectsWrongArity) {
  Buf a = f32({2}, {1, 2}), r = out(DType::F32, {2});
  EXPECT_TRUE(
      failsWith(run(OpKind::Add, {&a}, {&r}), "expects 2 operands, got 1"));
  EXPECT_STREQ(mwrt_last_error(), "'mw.add': expects 2 operands, got 1");
  EXPECT_TRUE(failsWith(run(OpKind::Exp, {&a}, {}), "expects 1 result, got 0"));
  EXPECT_TRUE(failsWith(run(OpKind::Concat, {}, {&r}),
                        "expects at least 1 operands, got 0"));
  EXPECT_TRUE(failsWith(run(OpKind::Sgd, {&a}, {&r}),
                        "expects 2 to 3 operands, got 1"));
}

TEST(CpuKernels, RejectsUnknownOrMistypedAttributes) {
  Buf a = f32({2, 2}, {1, 2, 3, 4}), r = out(DType::F32, {2, 2});
  KernelAttrs typo;
  typo.setBool("tranpose_rhs", true);
  EXPECT_TRUE(failsWith(run(OpKind::Matmul, {&a, &a}, {&r}, typo),
                        "'mw.matmul': has no attribute 'tranpose_rhs'"));
  KernelAttrs wrong;
  wrong.setFloat("axis", 1.0);
  EXPECT_TRUE(failsWith(run(OpKind::Softmax, {&a}, {&r}, wrong),
                        "attribute 'axis' must be an integer"));
  EXPECT_TRUE(
      failsWith(run(OpKind::Softmax, {&a}, {&r}), "missing attribute 'axis'"));
  KernelAttrs gelu;
  gelu.setString("approximate", "sigmoid");
  EXPECT_TRUE(failsWith(run(OpKind::Gelu, {&a}, {&r}, gelu),
                        "'approximate' must be \"erf\" or \"tanh\""));
  EXPECT_TRUE(failsWith(runCpuKernel(static_cast<OpKind>(99), {}, {}, {}),
                        "unknown op kind 99"));
}

TEST(CpuKernels, RejectsBadTensors) {
  Buf a = f32({2}, {1, 2}), r = out(DType::F32, {2});
  Buf f64{DType::F64, {2}, std::vector<uint8_t>(16), {}};
  EXPECT_TRUE(failsWith(run(OpKind::Exp, {&f64}, {&r}),
                        "operand #0 has dtype F64; the kernels take f32, f16, "
                        "bf16, i32 and i64"));
  TensorRef noData(DType::F32, {2}, nullptr);
  TensorRef res = r.ref();
  EXPECT_TRUE(failsWith(runCpuKernel(OpKind::Exp, {}, {noData}, {res}),
                        "operand #0 has no data"));
  TensorRef negative(DType::F32, {-2}, a.bytes.data());
  EXPECT_TRUE(failsWith(runCpuKernel(OpKind::Exp, {}, {negative}, {res}),
                        "negative dimension in [-2]"));
  TensorRef huge(DType::F32, {int64_t(1) << 40, int64_t(1) << 40},
                 a.bytes.data());
  EXPECT_TRUE(failsWith(runCpuKernel(OpKind::Exp, {}, {huge}, {res}),
                        "too large to address"));
  TensorRef badStrides(DType::F32, {2}, a.bytes.data(), {1, 1});
  EXPECT_TRUE(failsWith(runCpuKernel(OpKind::Exp, {}, {badStrides}, {res}),
                        "has 2 strides for rank 1"));
  TensorRef selfOverlap(DType::F32, {2}, r.bytes.data(), {0});
  EXPECT_TRUE(failsWith(runCpuKernel(OpKind::Exp, {}, {a.ref()}, {selfOverlap}),
                        "result #0 has strides [0] under which its elements "
                        "overlap"));
}

TEST(CpuKernels, ZeroSizedTensorsNeedNoData) {
  TensorRef a(DType::F32, {0, 3}, nullptr), r(DType::F32, {0, 3}, nullptr);
  Buf bias = f32({3}, {1, 2, 3});
  EXPECT_OK(runCpuKernel(OpKind::Add, {}, {a, bias.ref()}, {r}));
  // A reduction over an empty axis: sums are 0, means 0 / 0.
  TensorRef e(DType::F32, {2, 0}, nullptr);
  Buf sum = out(DType::F32, {2}), mean = out(DType::F32, {2});
  EXPECT_OK(runCpuKernel(OpKind::ReduceSum, axes({1}), {e}, {sum.ref()}));
  EXPECT_OK(runCpuKernel(OpKind::ReduceMean, axes({1}), {e}, {mean.ref()}));
  EXPECT_TRUE(sameFloats(sum, {0, 0}));
  EXPECT_TRUE(std::isnan(mean.f(0)) && std::isnan(mean.f(1)));
  // Norms over D = 0: rows but no row loop, so zero statistics.
  Buf g = out(DType::F32, {0}), rstd = out(DType::F32, {2});
  TensorRef y(DType::F32, {2, 0}, nullptr);
  EXPECT_OK(runCpuKernel(OpKind::RmsNorm, {}, {e, g.ref()}, {y, rstd.ref()}));
  EXPECT_TRUE(sameFloats(rstd, {0, 0}));
}

//===----------------------------------------------------------------------===//
// Aliasing and layouts
//===----------------------------------------------------------------------===//

TEST(CpuKernels, ElementwiseOpsRunInPlace) {
  Buf a = f32({2, 2}, {1, 2, 3, 4}), b = f32({2}, {10, 20});
  EXPECT_OK(run(OpKind::Add, {&a, &b}, {&a})); // a += b, broadcast
  EXPECT_TRUE(sameFloats(a, {11, 22, 13, 24}));
  Buf h = f16({3}, {0.5, -1, 2});
  EXPECT_OK(run(OpKind::Neg, {&h}, {&h}));
  EXPECT_TRUE(sameFloats(h, {-0.5f, 1, -2}));
  Buf x = f32({3}, {-1, 0, 2}), dy = f32({3}, {5, 5, 5});
  EXPECT_OK(run(OpKind::ReluGrad, {&x, &dy}, {&dy}));
  EXPECT_TRUE(sameFloats(dy, {0, 0, 5}));
  Buf s = f32({2, 2}, {0, 0, 1, 1});
  EXPECT_OK(run(OpKind::Softmax, {&s}, {&s}, axis(1)));
  EXPECT_TRUE(sameFloats(s, {0.5f, 0.5f, 0.5f, 0.5f}));
  // Casting between dtypes of one size works in place too: afterwards the
  // i32 buffer holds f32 values.
  Buf c = i32({2}, {7, -3});
  EXPECT_OK(runCpuKernel(OpKind::Cast, {}, {c.ref()},
                         {TensorRef(DType::F32, {2}, c.bytes.data())}));
  c.dtype = DType::F32;
  EXPECT_TRUE(sameFloats(c, {7, -3}));
}

TEST(CpuKernels, RejectsOverlapThatIsNotInPlace) {
  Buf a = f32({4}, {1, 2, 3, 4});
  // A result shifted by one element over its input.
  TensorRef in(DType::F32, {3}, a.bytes.data());
  TensorRef shifted(DType::F32, {3}, a.bytes.data() + 4);
  EXPECT_TRUE(failsWith(runCpuKernel(OpKind::Exp, {}, {in}, {shifted}),
                        "result #0 overlaps operand #0 without being exactly "
                        "the same buffer and layout"));
  Buf m = f32({2, 2}, {1, 2, 3, 4});
  EXPECT_TRUE(failsWith(run(OpKind::Matmul, {&m, &m}, {&m}),
                        "result #0 overlaps operand #0, and this op does not "
                        "compute in place"));
  Buf x = f32({2}, {1, 2}), g = f32({2}, {1, 1});
  Buf st = f32({}, {1});
  EXPECT_TRUE(failsWith(run(OpKind::AdamW, {&x, &g, &x, &x, &st}, {&x, &x, &x}),
                        "results #0 and #1 overlap"));
}

TEST(CpuKernels, StridedOperandsAndResults) {
  // A transposed view of [[1, 2, 3], [4, 5, 6]] as a [3, 2] input.
  Buf base = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Buf t = base;
  t.shape = {3, 2};
  t.strides = {1, 3};
  Buf bias = f32({2}, {10, 20}), r = out(DType::F32, {3, 2});
  EXPECT_OK(run(OpKind::Add, {&t, &bias}, {&r}));
  EXPECT_TRUE(sameFloats(r, {11, 24, 12, 25, 13, 26}));
  // Softmax along a strided axis and a result written through strides.
  Buf s = out(DType::F32, {3, 2});
  s.strides = {1, 3}; // transposed result
  s.bytes.resize(6 * 4);
  Buf ones = f32({3, 2}, {0, 0, 0, 0, 0, 0});
  EXPECT_OK(run(OpKind::Softmax, {&ones}, {&s}, axis(0)));
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(s.f(i), 1.0f / 3.0f);
  // A broadcast view (stride 0) as a matmul operand.
  Buf row = f32({3}, {1, 2, 3});
  Buf bcast = row;
  bcast.shape = {2, 3};
  bcast.strides = {0, 1};
  Buf eye = f32({3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1}),
      m = out(DType::F32, {2, 3});
  EXPECT_OK(run(OpKind::Matmul, {&bcast, &eye}, {&m}));
  EXPECT_TRUE(sameFloats(m, {1, 2, 3, 1, 2, 3}));
  // Negative strides: the input reversed.
  Buf rev = f32({3}, {1, 2, 3});
  TensorRef reversed(DType::F32, {3}, rev.bytes.data() + 8, {-1});
  Buf neg = out(DType::F32, {3});
  std::vector<TensorRef> in = {reversed}, res = {neg.ref()};
  EXPECT_OK(runCpuKernel(OpKind::Neg, {}, in, res));
  EXPECT_TRUE(sameFloats(neg, {-3, -2, -1}));
}

//===----------------------------------------------------------------------===//
// constant, splat
//===----------------------------------------------------------------------===//

TEST(CpuKernels, Constant) {
  Buf r = out(DType::F32, {3});
  KernelAttrs a;
  a.setFloats("value", {1.5, -2, 0.1});
  EXPECT_OK(run(OpKind::Constant, {}, {&r}, a));
  EXPECT_TRUE(sameFloats(r, {1.5f, -2.0f, 0.1f}));
  // A splat constant (one value) of bf16.
  Buf h = out(DType::BF16, {2, 2});
  KernelAttrs one;
  one.setFloats("value", {3.140625});
  EXPECT_OK(run(OpKind::Constant, {}, {&h}, one));
  EXPECT_TRUE(sameFloats(h, {3.140625f, 3.140625f, 3.140625f, 3.140625f}));
  Buf n = out(DType::I32, {2});
  KernelAttrs iv;
  iv.setInts("value", {-7, 2147483647});
  EXPECT_OK(run(OpKind::Constant, {}, {&n}, iv));
  EXPECT_TRUE(sameInts(n, {-7, 2147483647}));
  // Raw little-endian bytes of the result's dtype.
  Buf raw = out(DType::F16, {2});
  KernelAttrs bytes;
  bytes.setString("value", std::string("\x00\x3c\x00\xc0", 4));
  EXPECT_OK(run(OpKind::Constant, {}, {&raw}, bytes));
  EXPECT_TRUE(sameFloats(raw, {1.0f, -2.0f}));
  EXPECT_TRUE(failsWith(run(OpKind::Constant, {}, {&n}, a),
                        "must be a list of integers or raw bytes"));
  iv.setInts("value", {1, 2, 3});
  EXPECT_TRUE(
      failsWith(run(OpKind::Constant, {}, {&n}, iv),
                "'value' has 3 elements for result type tensor<2xi32>"));
  iv.setInts("value", {int64_t(1) << 31});
  EXPECT_TRUE(failsWith(run(OpKind::Constant, {}, {&n}, iv),
                        "value 2147483648 does not fit in i32"));
}

TEST(CpuKernels, Splat) {
  KernelAttrs a;
  a.setFloat("value", 0.1);
  Buf r = out(DType::F32, {2}), h = out(DType::F16, {2}),
      b = out(DType::BF16, {2});
  EXPECT_OK(run(OpKind::Splat, {}, {&r}, a));
  EXPECT_OK(run(OpKind::Splat, {}, {&h}, a));
  EXPECT_OK(run(OpKind::Splat, {}, {&b}, a));
  EXPECT_TRUE(sameFloats(r, {0.1f, 0.1f}));
  EXPECT_TRUE(sameFloats(h, {0.0999755859375f, 0.0999755859375f}));
  EXPECT_TRUE(sameFloats(b, {0.10009765625f, 0.10009765625f}));
  // The double is rounded once to bf16 (APFloat in the evaluator):
  // 1 + 2^-8 + 2^-30 lies above the tie 1 + 2^-8 and rounds up to
  // 1 + 2^-7, where going through f32 would land on the tie and round to 1.
  a.setFloat("value", 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30));
  EXPECT_OK(run(OpKind::Splat, {}, {&b}, a));
  EXPECT_TRUE(sameFloats(b, {1.0078125f, 1.0078125f}));
  Buf n = out(DType::I64, {3});
  a.setFloat("value", -3);
  EXPECT_OK(run(OpKind::Splat, {}, {&n}, a));
  EXPECT_TRUE(sameInts(n, {-3, -3, -3}));
  Buf w = out(DType::I32, {1});
  a.setFloat("value", 2.5);
  EXPECT_TRUE(failsWith(run(OpKind::Splat, {}, {&w}, a),
                        "value 2.5 is not an integer"));
  a.setFloat("value", 3e9);
  EXPECT_TRUE(
      failsWith(run(OpKind::Splat, {}, {&w}, a), "does not fit in i32"));
  EXPECT_TRUE(
      failsWith(run(OpKind::Splat, {}, {&w}), "missing attribute 'value'"));
}

//===----------------------------------------------------------------------===//
// Binary ops
//===----------------------------------------------------------------------===//

TEST(CpuKernels, BinaryFloatWithBroadcasting) {
  Buf a = f32({2, 1}, {1, 2}), b = f32({3}, {10, 20, 40});
  Buf r = out(DType::F32, {2, 3});
  EXPECT_OK(run(OpKind::Add, {&a, &b}, {&r}));
  EXPECT_TRUE(sameFloats(r, {11, 21, 41, 12, 22, 42}));
  EXPECT_OK(run(OpKind::Sub, {&a, &b}, {&r}));
  EXPECT_TRUE(sameFloats(r, {-9, -19, -39, -8, -18, -38}));
  EXPECT_OK(run(OpKind::Mul, {&a, &b}, {&r}));
  EXPECT_TRUE(sameFloats(r, {10, 20, 40, 20, 40, 80}));
  EXPECT_OK(run(OpKind::Div, {&b, &a}, {&r}));
  EXPECT_TRUE(sameFloats(r, {10, 20, 40, 5, 10, 20}));
  Buf s = f32({}, {3});
  Buf r2 = out(DType::F32, {3});
  EXPECT_OK(run(OpKind::Mul, {&s, &b}, {&r2})); // rank-0 operand
  EXPECT_TRUE(sameFloats(r2, {30, 60, 120}));
}

TEST(CpuKernels, MaximumPropagatesNaNAndKeepsTheFirstZero) {
  // The evaluator: isnan(x) || isnan(y) ? NAN : std::max(x, y), and
  // std::max returns its first argument when neither is less.
  Buf a = f32({4}, {1, NAN, -0.0, 3}), b = f32({4}, {2, 0, 0.0, NAN});
  Buf r = out(DType::F32, {4});
  EXPECT_OK(run(OpKind::Maximum, {&a, &b}, {&r}));
  EXPECT_EQ(r.f(0), 2.0f);
  EXPECT_TRUE(std::isnan(r.f(1)));
  EXPECT_EQ(bitsOf(r.f(2)), 0x80000000u); // -0.0 from lhs
  EXPECT_TRUE(std::isnan(r.f(3)));
}

TEST(CpuKernels, BinaryRoundsHalfTypesOnce) {
  // 1 + 2^-8 is a bf16 tie: even is 1.0. 1 + 3*2^-11 is an f16 tie between
  // 1 + 2^-10 (odd) and 1 + 2^-9 (even).
  Buf a = bf16({1}, {1}), b = bf16({1}, {std::ldexp(1.0, -8)}),
      r = out(DType::BF16, {1});
  EXPECT_OK(run(OpKind::Add, {&a, &b}, {&r}));
  EXPECT_TRUE(sameFloats(r, {1.0f}));
  Buf c = f16({1}, {1}), d = f16({1}, {std::ldexp(3.0, -11)}),
      s = out(DType::F16, {1});
  EXPECT_OK(run(OpKind::Add, {&c, &d}, {&s}));
  EXPECT_TRUE(sameFloats(s, {1.001953125f}));
  Buf big = f16({1}, {60000}), sum = out(DType::F16, {1});
  EXPECT_OK(run(OpKind::Add, {&big, &big}, {&sum}));
  EXPECT_TRUE(sameFloats(sum, {kInf}));
}

TEST(CpuKernels, BinaryIntegersWrap) {
  Buf a = i32({3}, {2147483647, -2147483647 - 1, 7});
  Buf b = i32({3}, {1, -1, -2});
  Buf r = out(DType::I32, {3});
  EXPECT_OK(run(OpKind::Add, {&a, &b}, {&r}));
  EXPECT_TRUE(sameInts(r, {-2147483647 - 1, 2147483647, 5}));
  EXPECT_OK(run(OpKind::Div, {&a, &b}, {&r})); // INT_MIN / -1 wraps
  EXPECT_TRUE(sameInts(r, {2147483647, -2147483647 - 1, -3}));
  EXPECT_OK(run(OpKind::Mul, {&a, &b}, {&r}));
  EXPECT_TRUE(sameInts(r, {2147483647, -2147483647 - 1, -14}));
  EXPECT_OK(run(OpKind::Maximum, {&a, &b}, {&r}));
  EXPECT_TRUE(sameInts(r, {2147483647, -1, 7}));
  Buf x = i64({2}, {-7, std::numeric_limits<int64_t>::min()});
  Buf y = i64({2}, {2, -1}), q = out(DType::I64, {2});
  EXPECT_OK(run(OpKind::Div, {&x, &y}, {&q}));
  EXPECT_TRUE(sameInts(q, {-3, std::numeric_limits<int64_t>::min()}));
  EXPECT_OK(run(OpKind::Sub, {&x, &y}, {&q}));
  EXPECT_TRUE(sameInts(q, {-9, std::numeric_limits<int64_t>::min() + 1}));
}

TEST(CpuKernels, IntegerDivisionByZeroWritesNothing) {
  Buf a = i64({2}, {4, 6}), b = i64({2}, {2, 0}), r = out(DType::I64, {2});
  Buf before = r;
  EXPECT_TRUE(failsWith(run(OpKind::Div, {&a, &b}, {&r}),
                        "'mw.div': integer division by zero"));
  EXPECT_EQ(r.bytes, before.bytes);
}

TEST(CpuKernels, BinaryRejectsMismatches) {
  Buf a = f32({2, 3}, {1, 2, 3, 4, 5, 6}), b = f32({2}, {1, 2});
  Buf h = f16({3}, {1, 2, 3}), r = out(DType::F32, {2, 3});
  EXPECT_TRUE(failsWith(run(OpKind::Add, {&a, &b}, {&r}),
                        "operand shapes [2, 3] and [2] are not "
                        "broadcast-compatible"));
  EXPECT_TRUE(failsWith(run(OpKind::Add, {&a, &h}, {&r}),
                        "rhs element type f16 differs from the lhs element "
                        "type f32"));
  Buf wrong = out(DType::F32, {3, 2});
  EXPECT_TRUE(failsWith(run(OpKind::Mul, {&a, &a}, {&wrong}),
                        "result type tensor<3x2xf32> does not match the "
                        "expected tensor<2x3xf32>"));
}

//===----------------------------------------------------------------------===//
// Unary ops
//===----------------------------------------------------------------------===//

TEST(CpuKernels, UnaryOpsHandValues) {
  Buf x = f32({4}, {0, 1, 4, -1}), r = out(DType::F32, {4});
  auto unary = [&](OpKind op, const KernelAttrs &attrs = {}) {
    EXPECT_EQ(run(op, {&x}, {&r}, attrs), MWRT_OK) << mwrt_last_error();
    return r;
  };
  EXPECT_TRUE(sameFloats(unary(OpKind::Neg), {-0.0f, -1, -4, 1}));
  EXPECT_TRUE(sameFloats(unary(OpKind::Exp),
                         {1, std::exp(1.0f), std::exp(4.0f), std::exp(-1.0f)}));
  EXPECT_TRUE(sameFloats(unary(OpKind::Log), {-kInf, 0, std::log(4.0f), NAN}));
  EXPECT_TRUE(
      sameFloats(unary(OpKind::Tanh),
                 {0, std::tanh(1.0f), std::tanh(4.0f), -std::tanh(1.0f)}));
  EXPECT_TRUE(sameFloats(unary(OpKind::Sqrt), {0, 1, 2, NAN}));
  EXPECT_TRUE(sameFloats(unary(OpKind::Rsqrt), {kInf, 1, 0.5f, NAN}));
  EXPECT_TRUE(sameFloats(unary(OpKind::Reciprocal), {kInf, 1, 0.25f, -1}));
  EXPECT_TRUE(sameFloats(unary(OpKind::Relu), {0, 1, 4, 0}));
  // sigmoid(x) = 1.0f / (1.0f + exp(-x)); silu(x) = x * sigmoid(x).
  auto sig = [](float v) { return 1.0f / (1.0f + std::exp(-v)); };
  EXPECT_TRUE(
      sameFloats(unary(OpKind::Sigmoid), {0.5f, sig(1), sig(4), sig(-1)}));
  EXPECT_NEAR(r.f(1), 0.7310586, 1e-7);
  EXPECT_TRUE(sameFloats(unary(OpKind::Silu),
                         {0, 1 * sig(1), 4 * sig(4), -1 * sig(-1)}));
}

TEST(CpuKernels, ReluKeepsNegativeZeroAndNaN) {
  // The evaluator's relu is x < 0.0f ? 0.0f : x.
  Buf x = f32({2}, {-0.0, NAN}), r = out(DType::F32, {2});
  EXPECT_OK(run(OpKind::Relu, {&x}, {&r}));
  EXPECT_EQ(bitsOf(r.f(0)), 0x80000000u);
  EXPECT_TRUE(std::isnan(r.f(1)));
}

TEST(CpuKernels, GeluBothForms) {
  // erf: 0.5f * x * (1.0f + erf(x * float(0.7071067811865476)))
  // tanh: 0.5f * x * (1.0f + tanh(float(0.7978845608028654) *
  //                               (x + float(0.044715) * x * x * x)))
  auto erfForm = [](float x) {
    return 0.5f * x * (1.0f + std::erf(x * float(0.7071067811865476)));
  };
  auto tanhForm = [](float x) {
    return 0.5f * x *
           (1.0f + std::tanh(float(0.7978845608028654) *
                             (x + float(0.044715) * x * x * x)));
  };
  Buf x = f32({3}, {1, -0.5, 3}), r = out(DType::F32, {3});
  EXPECT_OK(run(OpKind::Gelu, {&x}, {&r}));
  EXPECT_TRUE(sameFloats(r, {erfForm(1), erfForm(-0.5f), erfForm(3)}));
  EXPECT_NEAR(r.f(0), 0.8413447, 1e-6); // x * Phi(x)
  KernelAttrs tanh;
  tanh.setString("approximate", "tanh");
  EXPECT_OK(run(OpKind::Gelu, {&x}, {&r}, tanh));
  EXPECT_TRUE(sameFloats(r, {tanhForm(1), tanhForm(-0.5f), tanhForm(3)}));
  EXPECT_NEAR(r.f(0), 0.841192, 1e-6);
  KernelAttrs erf;
  erf.setInt("approximate", 0); // the enum's value is accepted too
  EXPECT_OK(run(OpKind::Gelu, {&x}, {&r}, erf));
  EXPECT_EQ(r.f(0), erfForm(1));
}

TEST(CpuKernels, ClampAndItsGradient) {
  Buf x = f32({5}, {-3, -1, 0.5, 1, NAN}), r = out(DType::F32, {5});
  KernelAttrs bounds;
  bounds.setFloat("min", -1.0).setFloat("max", 0.75);
  EXPECT_OK(run(OpKind::Clamp, {&x}, {&r}, bounds));
  EXPECT_EQ(r.f(0), -1.0f); // below min
  EXPECT_EQ(r.f(1), -1.0f); // at min
  EXPECT_EQ(r.f(2), 0.5f);  // inside
  EXPECT_EQ(r.f(3), 0.75f); // above max
  EXPECT_TRUE(std::isnan(r.f(4)));
  // Without bounds the kernel refuses, as the verifier does.
  EXPECT_TRUE(failsWith(run(OpKind::Clamp, {&x}, {&r}),
                        "missing attribute 'min'"));
  // min > max: every element is max, as torch.clamp.
  KernelAttrs crossed;
  crossed.setFloat("min", 2.0).setFloat("max", 1.0);
  Buf y = f32({2}, {0, 5}), ry = out(DType::F32, {2});
  EXPECT_OK(run(OpKind::Clamp, {&y}, {&ry}, crossed));
  EXPECT_TRUE(sameFloats(ry, {1, 1}));
  // The gradient passes where min <= x <= max.
  Buf dy = f32({5}, {10, 20, 30, 40, 50}), dx = out(DType::F32, {5});
  EXPECT_OK(run(OpKind::ClampGrad, {&x, &dy}, {&dx}, bounds));
  EXPECT_TRUE(sameFloats(dx, {0, 20, 30, 0, 0}));
}

TEST(CpuKernels, WaitIsInPlaceOrACopy) {
  Buf x = f32({3}, {1, 2, 3}), r = out(DType::F32, {3});
  EXPECT_OK(run(OpKind::Wait, {&x}, {&r}));
  EXPECT_TRUE(sameFloats(r, {1, 2, 3}));
  EXPECT_OK(run(OpKind::Wait, {&x}, {&x})); // in place: nothing moves
  EXPECT_TRUE(sameFloats(x, {1, 2, 3}));
  Buf wrong = out(DType::F32, {2});
  EXPECT_FALSE(run(OpKind::Wait, {&x}, {&wrong}) == MWRT_OK);
}

TEST(CpuKernels, FetchCopiesIntoItsSlot) {
  Buf w = bf16({2, 2}, {1, -2, 3.5, 4}), slot = out(DType::BF16, {2, 2});
  KernelAttrs layer;
  layer.setInt("layer", 3);
  EXPECT_OK(run(OpKind::Fetch, {&w}, {&slot}, layer));
  EXPECT_TRUE(sameFloats(slot, {1, -2, 3.5, 4}));
  EXPECT_OK(run(OpKind::Fetch, {&w}, {&slot})); // layer defaults to 0
  Buf wrong = out(DType::BF16, {4});
  EXPECT_FALSE(run(OpKind::Fetch, {&w}, {&wrong}, layer) == MWRT_OK);
  // The slot is a buffer of its own: never the weight.
  EXPECT_FALSE(run(OpKind::Fetch, {&w}, {&w}, layer) == MWRT_OK);
  KernelAttrs negative;
  negative.setInt("layer", -1);
  EXPECT_FALSE(run(OpKind::Fetch, {&w}, {&slot}, negative) == MWRT_OK);
}

TEST(CpuKernels, UnaryRoundsToHalfTypes) {
  Buf x = f16({2}, {1, 2}), r = out(DType::F16, {2});
  EXPECT_OK(run(OpKind::Exp, {&x}, {&r}));
  EXPECT_TRUE(sameFloats(r, {2.71875f, roundF16(std::exp(2.0f))}));
  Buf y = bf16({1}, {3}), s = out(DType::BF16, {1});
  EXPECT_OK(run(OpKind::Sqrt, {&y}, {&s}));
  EXPECT_TRUE(sameFloats(s, {roundBF16(std::sqrt(3.0f))}));
  EXPECT_EQ(s.f(0), 1.734375f);
}

TEST(CpuKernels, NegWrapsIntegersAndOtherUnaryOpsRejectThem) {
  Buf x = i32({2}, {-2147483647 - 1, 5}), r = out(DType::I32, {2});
  EXPECT_OK(run(OpKind::Neg, {&x}, {&r}));
  EXPECT_TRUE(sameInts(r, {-2147483647 - 1, -5}));
  EXPECT_TRUE(failsWith(run(OpKind::Exp, {&x}, {&r}),
                        "'mw.exp': input must have a float element type (f32, "
                        "f16, bf16), got i32"));
  Buf f = f32({2}, {1, 2}), h = out(DType::F16, {2});
  EXPECT_TRUE(failsWith(run(OpKind::Tanh, {&f}, {&h}),
                        "result type tensor<2xf16> differs from the input type "
                        "tensor<2xf32>"));
}

//===----------------------------------------------------------------------===//
// cast
//===----------------------------------------------------------------------===//

TEST(CpuKernels, CastBetweenFloats) {
  float third = 1.0f / 3.0f;
  Buf x = f32({3}, {third, 70000, -1e-8}), h = out(DType::F16, {3});
  EXPECT_OK(run(OpKind::Cast, {&x}, {&h}));
  EXPECT_TRUE(sameFloats(h, {0.333251953125f, kInf, -0.0f}));
  Buf b = out(DType::BF16, {3});
  EXPECT_OK(run(OpKind::Cast, {&x}, {&b}));
  EXPECT_TRUE(sameFloats(b, {0.333984375f, 70144, roundBF16(-1e-8f)}));
  Buf back = out(DType::F32, {3});
  EXPECT_OK(run(OpKind::Cast, {&b}, {&back}));
  EXPECT_TRUE(sameFloats(back, {0.333984375f, 70144, roundBF16(-1e-8f)}));
}

TEST(CpuKernels, CastFloatToIntTruncatesAndChecksRange) {
  Buf x = f32({3}, {-2.7, 2.7, 1e9}), r = out(DType::I32, {3});
  EXPECT_OK(run(OpKind::Cast, {&x}, {&r}));
  EXPECT_TRUE(sameInts(r, {-2, 2, 1000000000}));
  Buf before = out(DType::I32, {3});
  Buf bad = f32({3}, {1, 3e9, 2});
  EXPECT_TRUE(
      failsWith(run(OpKind::Cast, {&bad}, {&before}),
                "cannot cast 3e+09 to i32: not finite or out of range"));
  EXPECT_EQ(before.bytes, out(DType::I32, {3}).bytes); // nothing written
  Buf nan = f32({1}, {NAN}), l = out(DType::I64, {1});
  EXPECT_TRUE(failsWith(run(OpKind::Cast, {&nan}, {&l}), "not finite"));
  Buf big = f32({1}, {-9.2233720368547758e18}); // exactly -2^63 fits
  EXPECT_OK(run(OpKind::Cast, {&big}, {&l}));
  EXPECT_TRUE(sameInts(l, {std::numeric_limits<int64_t>::min()}));
}

TEST(CpuKernels, CastFromIntegersRoundsOnce) {
  Buf x = i64({2}, {(int64_t(1) << 32) + 5, -1}), r = out(DType::I32, {2});
  EXPECT_OK(run(OpKind::Cast, {&x}, {&r}));
  EXPECT_TRUE(sameInts(r, {5, -1}));
  // The evaluator's own example: 2^25 + 2^17 + 1 rounds once to bf16 as
  // 2^25 + 2^18 (through f32 it would hit the tie 2^25 + 2^17 and give 2^25).
  Buf y = i64({4}, {(1 << 25) + (1 << 17) + 1, 65520, 16777217, -3});
  Buf b = out(DType::BF16, {4}), h = out(DType::F16, {4}),
      f = out(DType::F32, {4});
  EXPECT_OK(run(OpKind::Cast, {&y}, {&b}));
  EXPECT_OK(run(OpKind::Cast, {&y}, {&h}));
  EXPECT_OK(run(OpKind::Cast, {&y}, {&f}));
  EXPECT_EQ(b.f(0), float((1 << 25) + (1 << 18)));
  EXPECT_EQ(b.f(3), -3.0f);
  EXPECT_EQ(h.f(1), kInf); // 65520 is f16's max + half an ulp: a tie, to inf
  EXPECT_EQ(h.f(2), kInf);
  EXPECT_EQ(f.f(2), 16777216.0f);
  Buf m = i64({1}, {std::numeric_limits<int64_t>::min()}),
      mf = out(DType::BF16, {1});
  EXPECT_OK(run(OpKind::Cast, {&m}, {&mf}));
  EXPECT_EQ(mf.f(0), -9.2233720368547758e18f);
  Buf s = i32({2}, {3, 4}), wrongShape = out(DType::F32, {3});
  EXPECT_TRUE(failsWith(run(OpKind::Cast, {&s}, {&wrongShape}),
                        "result shape [3] differs from the input shape [2]"));
}

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

namespace {
CpuKernelOptions referenceOnly() {
  CpuKernelOptions o;
  o.referenceMatmul = true;
  return o;
}
KernelAttrs transposes(bool lhs, bool rhs) {
  KernelAttrs a;
  if (lhs)
    a.setBool("transpose_lhs", true);
  if (rhs)
    a.setBool("transpose_rhs", true);
  return a;
}
} // namespace

TEST(CpuKernels, MatmulHandValuesAndTransposes) {
  // [[1, 2, 3], [4, 5, 6]] x [[1, 2], [3, 4], [5, 6]] = [[22, 28], [49, 64]]
  Buf a = f32({2, 3}, {1, 2, 3, 4, 5, 6}), b = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  Buf at = f32({3, 2}, {1, 4, 2, 5, 3, 6}),
      bt = f32({2, 3}, {1, 3, 5, 2, 4, 6});
  for (bool ref : {false, true}) {
    CpuKernelOptions o;
    o.referenceMatmul = ref;
    Buf r = out(DType::F32, {2, 2});
    EXPECT_OK(run(OpKind::Matmul, {&a, &b}, {&r}, {}, o));
    EXPECT_TRUE(sameFloats(r, {22, 28, 49, 64}));
    EXPECT_OK(run(OpKind::Matmul, {&at, &b}, {&r}, transposes(true, false), o));
    EXPECT_TRUE(sameFloats(r, {22, 28, 49, 64}));
    EXPECT_OK(run(OpKind::Matmul, {&a, &bt}, {&r}, transposes(false, true), o));
    EXPECT_TRUE(sameFloats(r, {22, 28, 49, 64}));
    EXPECT_OK(run(OpKind::Matmul, {&at, &bt}, {&r}, transposes(true, true), o));
    EXPECT_TRUE(sameFloats(r, {22, 28, 49, 64}));
  }
}

TEST(CpuKernels, MatmulBroadcastsBatches) {
  // lhs [2, 1, 1, 2] and rhs [3, 2, 1]: batch [2, 3], result [2, 3, 1, 1].
  Buf a = f32({2, 1, 1, 2}, {1, 2, 3, 4});
  Buf b = f32({3, 2, 1}, {1, 0, 0, 1, 1, 1});
  for (bool ref : {false, true}) {
    CpuKernelOptions o;
    o.referenceMatmul = ref;
    Buf r = out(DType::F32, {2, 3, 1, 1});
    EXPECT_OK(run(OpKind::Matmul, {&a, &b}, {&r}, {}, o));
    EXPECT_TRUE(sameFloats(r, {1, 2, 3, 3, 4, 7}));
  }
  // A stacked lhs against one shared rhs (one sgemm for the whole batch).
  Buf x = f32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), w = f32({2, 1}, {1, 10});
  Buf y = out(DType::F32, {2, 2, 1});
  EXPECT_OK(run(OpKind::Matmul, {&x, &w}, {&y}));
  EXPECT_TRUE(sameFloats(y, {21, 43, 65, 87}));
}

TEST(CpuKernels, MatmulReferencePathIsTheEvaluatorsLoop) {
  // Bit-exact against the evaluator's loop: acc = 0.0f; acc += a * b over k.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  int64_t batch = 3, m = 5, n = 7, k = 33;
  std::vector<double> av(batch * k * m), bv(k * n);
  for (double &v : av)
    v = dist(rng);
  for (double &v : bv)
    v = dist(rng);
  Buf a = f32({batch, k, m}, av), b = f32({n, k}, bv); // both transposed
  Buf r = out(DType::F32, {batch, m, n});
  EXPECT_OK(run(OpKind::Matmul, {&a, &b}, {&r}, transposes(true, true),
                referenceOnly()));
  std::vector<float> expected;
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float acc = 0.0f;
        for (int64_t p = 0; p < k; ++p)
          acc += a.f(bi * k * m + p * m + i) * b.f(j * k + p);
        expected.push_back(acc);
      }
  EXPECT_TRUE(sameFloats(r, expected));
}

TEST(CpuKernels, MatmulBlasWithinTolerance) {
  if (!cpuMatmulUsesBlas())
    GTEST_SKIP() << "built without OpenBLAS: matmul always takes the "
                    "reference path";
  // Any summation order satisfies |C - exact| <= gamma_K * (|A| |B|) with
  // gamma_K = K u / (1 - K u), u = 2^-24; the two paths differ by at most
  // twice that (docs/runtime-kernels.md).
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (auto [m, n, k, tl, tr] : {std::tuple{37, 53, 129, false, false},
                                 {8, 64, 300, true, false},
                                 {65, 1, 17, false, true},
                                 {16, 16, 1000, true, true}}) {
    std::vector<double> av(m * k), bv(k * n);
    for (double &v : av)
      v = dist(rng);
    for (double &v : bv)
      v = dist(rng);
    Buf a = f32(tl ? Shape{k, m} : Shape{m, k}, av);
    Buf b = f32(tr ? Shape{n, k} : Shape{k, n}, bv);
    Buf blas = out(DType::F32, {m, n}), ref = out(DType::F32, {m, n});
    EXPECT_OK(run(OpKind::Matmul, {&a, &b}, {&blas}, transposes(tl, tr)));
    EXPECT_OK(run(OpKind::Matmul, {&a, &b}, {&ref}, transposes(tl, tr),
                  referenceOnly()));
    double u = std::ldexp(1.0, -24), gamma = k * u / (1 - k * u);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double absSum = 0;
        for (int p = 0; p < k; ++p)
          absSum += std::abs(a.at(tl ? p * m + i : i * k + p) *
                             b.at(tr ? j * k + p : p * n + j));
        ASSERT_LE(std::abs(blas.at(i * n + j) - ref.at(i * n + j)),
                  2 * gamma * absSum)
            << m << "x" << n << "x" << k << " at " << i << "," << j;
      }
  }
}

TEST(CpuKernels, MatmulReadsAndWritesStridedViews) {
  // Attention's heads as --mw-fold-views leaves them: the lhs a transposed
  // view ([B, S, H, D] storage read as [B, H, S, D]), the result written
  // through one too. sgemm takes them in place with their leading dimension
  // (OpenBLAS) or the loop reads them through their strides (reference):
  // both agree with the product of dense copies, the reference bit for bit.
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> dist(-1, 1);
  const int64_t B = 2, S = 5, H = 3, D = 4, N = 6;
  std::vector<double> xs(B * S * H * D), ws(D * N), dense(B * H * S * D);
  for (double &v : xs)
    v = dist(rng);
  for (double &v : ws)
    v = dist(rng);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < S; ++i)
        for (int64_t d = 0; d < D; ++d)
          dense[((b * H + h) * S + i) * D + d] = xs[((b * S + i) * H + h) * D + d];
  Buf x = f32({B, H, S, D}, xs), w = f32({D, N}, ws);
  x.strides = {S * H * D, D, H * D, 1}; // [B, S, H, D] storage
  Buf xd = f32({B, H, S, D}, dense);
  for (bool reference : {false, true}) {
    CpuKernelOptions opts;
    opts.referenceMatmul = reference;
    Buf want = out(DType::F32, {B, H, S, N});
    EXPECT_OK(run(OpKind::Matmul, {&xd, &w}, {&want}, {}, referenceOnly()));
    // The result through a transposed view of [B, S, H, N] storage.
    Buf got = out(DType::F32, {B, H, S, N});
    got.strides = {S * H * N, N, H * N, 1};
    EXPECT_OK(run(OpKind::Matmul, {&x, &w}, {&got}, {}, opts));
    double u = std::ldexp(1.0, -24), gamma = D * u / (1 - D * u);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < S; ++i)
          for (int64_t j = 0; j < N; ++j) {
            double g = got.at(((b * S + i) * H + h) * N + j);
            double e = want.at(((b * H + h) * S + i) * N + j);
            if (reference) {
              ASSERT_EQ(bitsOf(static_cast<float>(g)), bitsOf(static_cast<float>(e)));
              continue;
            }
            double absSum = 0;
            for (int64_t d = 0; d < D; ++d)
              absSum += std::abs(dense[((b * H + h) * S + i) * D + d] * ws[d * N + j]);
            ASSERT_LE(std::abs(g - e), 2 * gamma * absSum);
          }
  }
}

TEST(CpuKernels, MatmulIsDeterministic) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<double> av(96 * 200), bv(200 * 80);
  for (double &v : av)
    v = dist(rng);
  for (double &v : bv)
    v = dist(rng);
  Buf a = f32({96, 200}, av), b = f32({200, 80}, bv);
  Buf r1 = out(DType::F32, {96, 80}), r2 = out(DType::F32, {96, 80});
  EXPECT_OK(run(OpKind::Matmul, {&a, &b}, {&r1}));
  EXPECT_OK(run(OpKind::Matmul, {&a, &b}, {&r2}));
  EXPECT_EQ(r1.bytes, r2.bytes);
}

TEST(CpuKernels, MatmulHalfTypesAccumulateInF32AndRoundOnce) {
  // 1 + 2^-8 + 2^-8: each product is exact, the f32 sum 1 + 2^-7 is exact in
  // bf16; a bf16 accumulator would have lost each 2^-8 to the tie rule.
  Buf a = bf16({1, 3}, {1, 1, 1}),
      b = bf16({3, 1}, {1, std::ldexp(1.0, -8), std::ldexp(1.0, -8)});
  for (bool ref : {false, true}) {
    CpuKernelOptions o;
    o.referenceMatmul = ref;
    Buf r = out(DType::BF16, {1, 1});
    EXPECT_OK(run(OpKind::Matmul, {&a, &b}, {&r}, {}, o));
    EXPECT_TRUE(sameFloats(r, {1.0078125f}));
  }
  Buf h = f16({1, 2}, {300, 300}), g = f16({2, 1}, {200, 200}),
      hr = out(DType::F16, {1, 1});
  EXPECT_OK(run(OpKind::Matmul, {&h, &g}, {&hr}));
  EXPECT_TRUE(sameFloats(hr, {kInf})); // 120000 overflows f16
}

// mw-run's choice of OpenBLAS kernels (docs/runtime-kernels.md, "Which
// OpenBLAS kernels"): never over the user's OPENBLAS_CORETYPE, and only ever
// one of the two AVX kernel sets. test/Runtime/blas-core.mlir checks it
// against the machine's CPU features through mw-run.
TEST(CpuKernels, BlasCoreAdviceKeepsTheUsersChoice) {
  if (!cpuMatmulUsesBlas())
    GTEST_SKIP() << "built without OpenBLAS";
  EXPECT_FALSE(cpuBlasCore().empty());
  const char *old = std::getenv("OPENBLAS_CORETYPE");
  std::string saved = old ? old : "";
  setenv("OPENBLAS_CORETYPE", "Prescott", 1);
  EXPECT_EQ(cpuBlasCoreAdvice(), "");
  unsetenv("OPENBLAS_CORETYPE");
  std::string advice = cpuBlasCoreAdvice();
  EXPECT_TRUE(advice.empty() || advice == "SkylakeX" || advice == "Haswell")
      << advice;
  if (old)
    setenv("OPENBLAS_CORETYPE", saved.c_str(), 1);
}

TEST(CpuKernels, MatmulRejectsBadShapes) {
  Buf a = f32({2, 3}, {1, 2, 3, 4, 5, 6}), v = f32({3}, {1, 2, 3});
  Buf r = out(DType::F32, {2, 2});
  EXPECT_TRUE(failsWith(run(OpKind::Matmul, {&a, &a}, {&r}),
                        "'mw.matmul': contracting dimensions differ: 3 vs 2"));
  EXPECT_TRUE(failsWith(run(OpKind::Matmul, {&a, &v}, {&r}),
                        "rhs must have rank >= 2, got 1"));
  Buf x = f32({2, 1, 1}, {1, 2}), y = f32({3, 1, 1}, {1, 2, 3});
  Buf z = out(DType::F32, {2, 1, 1});
  EXPECT_TRUE(failsWith(run(OpKind::Matmul, {&x, &y}, {&z}),
                        "batch dimensions [2] and [3] are not "
                        "broadcast-compatible"));
  Buf i = i32({2, 2}, {1, 2, 3, 4}), ir = out(DType::I32, {2, 2});
  EXPECT_TRUE(failsWith(run(OpKind::Matmul, {&i, &i}, {&ir}),
                        "lhs must have a float element type"));
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

TEST(CpuKernels, ReduceSumAxesAndKeepdims) {
  Buf x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Buf r = out(DType::F32, {2}), k = out(DType::F32, {2, 1}),
      all = out(DType::F32, {});
  Buf cols = out(DType::F32, {3});
  EXPECT_OK(run(OpKind::ReduceSum, {&x}, {&r}, axes({1})));
  EXPECT_TRUE(sameFloats(r, {6, 15}));
  EXPECT_OK(run(OpKind::ReduceSum, {&x}, {&k}, axes({1}, true)));
  EXPECT_TRUE(sameFloats(k, {6, 15}));
  EXPECT_OK(run(OpKind::ReduceSum, {&x}, {&cols}, axes({0})));
  EXPECT_TRUE(sameFloats(cols, {5, 7, 9}));
  EXPECT_OK(run(OpKind::ReduceSum, {&x}, {&all}, axes({0, 1})));
  EXPECT_TRUE(sameFloats(all, {21}));
  // Middle axis of [2, 2, 2].
  Buf y = f32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), m = out(DType::F32, {2, 2});
  EXPECT_OK(run(OpKind::ReduceSum, {&y}, {&m}, axes({1})));
  EXPECT_TRUE(sameFloats(m, {4, 6, 12, 14}));
}

TEST(CpuKernels, ReduceSumStartsFromPositiveZeroInIndexOrder) {
  // The accumulator starts at +0.0f: a sum of -0.0 is +0.0. Summing in index
  // order, 1e8 + 1 - 1e8 loses the 1.
  Buf z = f32({2}, {-0.0, -0.0}), r = out(DType::F32, {});
  EXPECT_OK(run(OpKind::ReduceSum, {&z}, {&r}, axes({0})));
  EXPECT_EQ(bitsOf(r.f(0)), 0u);
  Buf c = f32({3}, {1e8, 1, -1e8});
  EXPECT_OK(run(OpKind::ReduceSum, {&c}, {&r}, axes({0})));
  EXPECT_EQ(r.f(0), 0.0f);
  Buf h = f16({3}, {2048, 1, 1}), hr = out(DType::F16, {});
  EXPECT_OK(run(OpKind::ReduceSum, {&h}, {&hr}, axes({0})));
  EXPECT_TRUE(sameFloats(hr, {2050})); // f32 accumulation, rounded once
}

TEST(CpuKernels, ReduceMaxAndMean) {
  Buf x = f32({2, 3}, {1, 5, 3, -4, -2, -8});
  Buf r = out(DType::F32, {2});
  EXPECT_OK(run(OpKind::ReduceMax, {&x}, {&r}, axes({1})));
  EXPECT_TRUE(sameFloats(r, {5, -2}));
  EXPECT_OK(run(OpKind::ReduceMean, {&x}, {&r}, axes({1})));
  EXPECT_TRUE(sameFloats(r, {3, float(-14) / 3.0f}));
  Buf n = f32({3}, {1, NAN, 2}), s = out(DType::F32, {});
  EXPECT_OK(run(OpKind::ReduceMax, {&n}, {&s}, axes({0})));
  EXPECT_TRUE(std::isnan(s.f(0)));
  Buf i = i64({2, 2}, {3, -9, 7, 1}), ir = out(DType::I64, {2});
  EXPECT_OK(run(OpKind::ReduceMax, {&i}, {&ir}, axes({0})));
  EXPECT_TRUE(sameInts(ir, {7, 1}));
  Buf w = i32({2}, {2147483647, 1}), wr = out(DType::I32, {});
  EXPECT_OK(run(OpKind::ReduceSum, {&w}, {&wr}, axes({0})));
  EXPECT_TRUE(sameInts(wr, {-2147483647 - 1}));
}

TEST(CpuKernels, ReduceRejectsBadAxes) {
  Buf x = f32({2, 3}, {1, 2, 3, 4, 5, 6}), r = out(DType::F32, {2});
  EXPECT_TRUE(failsWith(run(OpKind::ReduceSum, {&x}, {&r}, axes({2})),
                        "axis 2 is out of range for rank 2"));
  EXPECT_TRUE(failsWith(run(OpKind::ReduceSum, {&x}, {&r}, axes({1, 0})),
                        "axes must be strictly increasing, got [1, 0]"));
  EXPECT_TRUE(failsWith(run(OpKind::ReduceSum, {&x}, {&r}, axes({0})),
                        "result type tensor<2xf32> does not match the expected "
                        "tensor<3xf32>"));
  Buf i = i32({2}, {1, 2}), ir = out(DType::I32, {});
  EXPECT_TRUE(failsWith(run(OpKind::ReduceMean, {&i}, {&ir}, axes({0})),
                        "input must have a float element type"));
}

TEST(CpuKernels, ReduceMaxGradSplitsTies) {
  Buf x = f32({2, 3}, {1, 3, 3, 5, 0, 2}), m = f32({2}, {3, 5}),
      dm = f32({2}, {6, 1});
  Buf r = out(DType::F32, {2, 3});
  EXPECT_OK(run(OpKind::ReduceMaxGrad, {&x, &m, &dm}, {&r}, axes({1})));
  EXPECT_TRUE(sameFloats(r, {0, 3, 3, 1, 0, 0}));
  Buf mk = f32({2, 1}, {3, 5}), dmk = f32({2, 1}, {6, 1});
  EXPECT_OK(run(OpKind::ReduceMaxGrad, {&x, &mk, &dmk}, {&r}, axes({1}, true)));
  EXPECT_TRUE(sameFloats(r, {0, 3, 3, 1, 0, 0}));
  EXPECT_TRUE(
      failsWith(run(OpKind::ReduceMaxGrad, {&x, &mk, &dm}, {&r}, axes({1})),
                "output type tensor<2x1xf32> does not match the "
                "expected tensor<2xf32>"));
}

//===----------------------------------------------------------------------===//
// softmax family
//===----------------------------------------------------------------------===//

TEST(CpuKernels, SoftmaxAndLogSoftmax) {
  // Stable form: m = max, s = sum exp(x - m); softmax = exp(x - m) / s,
  // log_softmax = x - m - log(s).
  Buf x = f32({2, 3}, {1, 2, 3, 0, 0, 0}), r = out(DType::F32, {2, 3});
  EXPECT_OK(run(OpKind::Softmax, {&x}, {&r}, axis(1)));
  float s = std::exp(-2.0f) + std::exp(-1.0f) + std::exp(0.0f);
  EXPECT_TRUE(sameFloats(r, {std::exp(-2.0f) / s, std::exp(-1.0f) / s, 1 / s,
                             1.0f / 3, 1.0f / 3, 1.0f / 3}));
  EXPECT_NEAR(r.f(2), 0.66524096, 1e-7);
  EXPECT_OK(run(OpKind::LogSoftmax, {&x}, {&r}, axis(1)));
  float z = 3.0f; // 0 - 0 - log(3)
  EXPECT_TRUE(sameFloats(r, {1 - 3.0f - std::log(s), 2 - 3.0f - std::log(s),
                             3 - 3.0f - std::log(s), -std::log(z), -std::log(z),
                             -std::log(z)}));
  // Axis 0 of [2, 2]: columns.
  Buf c = f32({2, 2}, {0, 1, 0, 1}), cr = out(DType::F32, {2, 2});
  EXPECT_OK(run(OpKind::Softmax, {&c}, {&cr}, axis(0)));
  EXPECT_TRUE(sameFloats(cr, {0.5f, 0.5f, 0.5f, 0.5f}));
  EXPECT_TRUE(failsWith(run(OpKind::Softmax, {&c}, {&cr}, axis(2)),
                        "'mw.softmax': axis 2 is out of range for rank 2"));
}

TEST(CpuKernels, SoftmaxHalfPrecision) {
  Buf x = bf16({3}, {1, 2, 3}), r = out(DType::BF16, {3});
  EXPECT_OK(run(OpKind::Softmax, {&x}, {&r}, axis(0)));
  float s = std::exp(-2.0f) + std::exp(-1.0f) + std::exp(0.0f);
  EXPECT_TRUE(
      sameFloats(r, {roundBF16(std::exp(-2.0f) / s),
                     roundBF16(std::exp(-1.0f) / s), roundBF16(1 / s)}));
}

TEST(CpuKernels, SoftmaxGradAndLogSoftmaxGrad) {
  // softmax_grad: dx = y * (dy - sum(dy * y)); y = [0.5, 0.5], dy = [1, 0]:
  // sum = 0.5, dx = [0.25, -0.25]. log_softmax_grad: dx = dy - exp(y) *
  // sum(dy); y = log([0.5, 0.5]): dx = [0.5, -0.5].
  Buf y = f32({2}, {0.5, 0.5}), dy = f32({2}, {1, 0}), r = out(DType::F32, {2});
  EXPECT_OK(run(OpKind::SoftmaxGrad, {&y, &dy}, {&r}, axis(0)));
  EXPECT_TRUE(sameFloats(r, {0.25f, -0.25f}));
  Buf ly = f32({2}, {std::log(0.5f), std::log(0.5f)});
  EXPECT_OK(run(OpKind::LogSoftmaxGrad, {&ly, &dy}, {&r}, axis(0)));
  EXPECT_TRUE(sameFloats(
      r, {1 - std::exp(std::log(0.5f)), 0 - std::exp(std::log(0.5f))}));
  EXPECT_NEAR(r.f(0), 0.5, 1e-7);
  EXPECT_OK(run(OpKind::SoftmaxGrad, {&y, &dy}, {&dy}, axis(0))); // in place
  EXPECT_TRUE(sameFloats(dy, {0.25f, -0.25f}));
}

//===----------------------------------------------------------------------===//
// Norms
//===----------------------------------------------------------------------===//

TEST(CpuKernels, LayerNorm) {
  // Row [1, 2, 3, 4]: mean 2.5, biased variance 1.25, and epsilon inside the
  // root: rstd = 1.0f / sqrt(sq / D + eps) with sq = sum (x - mean)^2;
  // y = (x - mean) * rstd * gamma + beta.
  Buf x = f32({1, 4}, {1, 2, 3, 4}), g = f32({4}, {1, 1, 2, 2}),
      b = f32({4}, {0, 0, 0, 1});
  Buf y = out(DType::F32, {1, 4}), mean = out(DType::F32, {1}),
      rstd = out(DType::F32, {1});
  KernelAttrs eps;
  eps.setFloat("epsilon", 1.0);
  EXPECT_OK(run(OpKind::LayerNorm, {&x, &g, &b}, {&y, &mean, &rstd}, eps));
  float rs = 1.0f / std::sqrt(5.0f / 4.0f + 1.0f);
  EXPECT_TRUE(sameFloats(mean, {2.5f}));
  EXPECT_TRUE(sameFloats(rstd, {rs}));
  EXPECT_NEAR(rs, 2.0 / 3.0, 1e-7);
  EXPECT_TRUE(sameFloats(
      y, {-1.5f * rs * 1, -0.5f * rs * 1, 0.5f * rs * 2, 1.5f * rs * 2 + 1}));
  // Default epsilon 1e-5, bf16 input with f32 statistics.
  Buf xh = bf16({2, 2}, {1, 3, -1, -1}), gh = bf16({2}, {1, 1}),
      bh = bf16({2}, {0, 0});
  Buf yh = out(DType::BF16, {2, 2}), m2 = out(DType::F32, {2}),
      r2 = out(DType::F32, {2});
  EXPECT_OK(run(OpKind::LayerNorm, {&xh, &gh, &bh}, {&yh, &m2, &r2}));
  float rs0 = 1.0f / std::sqrt(2.0f / 2.0f + float(1e-5));
  EXPECT_TRUE(sameFloats(m2, {2, -1}));
  EXPECT_TRUE(sameFloats(r2, {rs0, 1.0f / std::sqrt(float(1e-5))}));
  EXPECT_TRUE(sameFloats(yh, {roundBF16(-rs0), roundBF16(rs0), 0, 0}));
  Buf badStats = out(DType::BF16, {2});
  EXPECT_TRUE(
      failsWith(run(OpKind::LayerNorm, {&xh, &gh, &bh}, {&yh, &badStats, &r2}),
                "mean type tensor<2xbf16> does not match the expected "
                "tensor<2xf32>"));
  Buf g3 = bf16({3}, {1, 1, 1});
  EXPECT_TRUE(
      failsWith(run(OpKind::LayerNorm, {&xh, &g3, &bh}, {&yh, &m2, &r2}),
                "gamma type tensor<3xbf16> does not match the expected "
                "tensor<2xbf16>"));
}

TEST(CpuKernels, RmsNorm) {
  // rstd = 1.0f / sqrt(sum x^2 / D + eps); y = x * rstd * gamma.
  Buf x = f32({1, 2}, {3, 4}), g = f32({2}, {1, 2});
  Buf y = out(DType::F32, {1, 2}), rstd = out(DType::F32, {1});
  EXPECT_OK(run(OpKind::RmsNorm, {&x, &g}, {&y, &rstd}));
  float rs = 1.0f / std::sqrt(25.0f / 2.0f + float(1e-6));
  EXPECT_TRUE(sameFloats(rstd, {rs}));
  EXPECT_TRUE(sameFloats(y, {3 * rs * 1, 4 * rs * 2}));
  EXPECT_NEAR(y.f(0), 3 / std::sqrt(12.5), 1e-6);
  Buf s = f32({}, {1}), g0 = f32({}, {1}), ys = out(DType::F32, {}),
      rs0 = out(DType::F32, {});
  EXPECT_TRUE(failsWith(run(OpKind::RmsNorm, {&s, &g0}, {&ys, &rs0}),
                        "input must have rank >= 1, got 0"));
}

TEST(CpuKernels, LayerNormGrad) {
  // x = [0, 1, 2] with mean 1, rstd 1: xhat = [-1, 0, 1]; gamma = 1,
  // dy = [1, 0, 0]: dxhat = dy, sum(dxhat) = 1, sum(dxhat * xhat) = -1;
  // dx = rstd * (dxhat - sum(dxhat)/D - xhat * sum(dxhat*xhat)/D)
  //    = [1 - 1/3 - 1/3, -1/3, -1/3 + 1/3] = [1/3, -1/3, 0];
  // dgamma = sum_rows dy * xhat = [-1, 0, 0], dbeta = sum_rows dy.
  Buf x = f32({2, 3}, {0, 1, 2, 0, 1, 2}), g = f32({3}, {1, 1, 1});
  Buf mean = f32({2}, {1, 1}), rstd = f32({2}, {1, 1});
  Buf dy = f32({2, 3}, {1, 0, 0, 1, 0, 0});
  Buf dx = out(DType::F32, {2, 3}), dg = out(DType::F32, {3}),
      db = out(DType::F32, {3});
  EXPECT_OK(
      run(OpKind::LayerNormGrad, {&x, &g, &mean, &rstd, &dy}, {&dx, &dg, &db}));
  float third = 1.0f / 3.0f;
  float d0 = 1.0f - third - (-1.0f * -1.0f / 3.0f);
  EXPECT_TRUE(sameFloats(
      dx, {d0, 0 - third - 0.0f, 0 - third - (1.0f * -1.0f / 3.0f), d0,
           0 - third - 0.0f, 0 - third - (1.0f * -1.0f / 3.0f)}));
  EXPECT_NEAR(dx.f(0), 1.0 / 3, 1e-7);
  EXPECT_NEAR(dx.f(2), 0, 1e-7);
  EXPECT_TRUE(sameFloats(dg, {-2, 0, 0}));
  EXPECT_TRUE(sameFloats(db, {2, 0, 0}));
}

TEST(CpuKernels, RmsNormGrad) {
  // x = [1, -1], rstd 1, gamma [2, 1], dy = [1, 1]: xhat = x, dxhat = [2, 1],
  // sum(dxhat * xhat) = 1, dx = rstd * (dxhat - xhat * 1 / 2) = [1.5, 1.5],
  // dgamma = dy * xhat = [1, -1].
  Buf x = f32({1, 2}, {1, -1}), g = f32({2}, {2, 1}), rstd = f32({1}, {1});
  Buf dy = f32({1, 2}, {1, 1});
  Buf dx = out(DType::F32, {1, 2}), dg = out(DType::F32, {2});
  EXPECT_OK(run(OpKind::RmsNormGrad, {&x, &g, &rstd, &dy}, {&dx, &dg}));
  EXPECT_TRUE(sameFloats(dx, {1.5f, 1.5f}));
  EXPECT_TRUE(sameFloats(dg, {1, -1}));
  Buf wrong = out(DType::F32, {3});
  EXPECT_TRUE(
      failsWith(run(OpKind::RmsNormGrad, {&x, &g, &rstd, &dy}, {&dx, &wrong}),
                "grad_gamma type tensor<3xf32> differs from the gamma "
                "type tensor<2xf32>"));
}

//===----------------------------------------------------------------------===//
// embedding, cross_entropy
//===----------------------------------------------------------------------===//

TEST(CpuKernels, Embedding) {
  Buf table = f16({3, 2}, {0, 1, 10, 11, 20, 21});
  Buf idx = i32({2, 2}, {2, 0, 1, 2}), r = out(DType::F16, {2, 2, 2});
  EXPECT_OK(run(OpKind::Embedding, {&table, &idx}, {&r}));
  EXPECT_TRUE(sameFloats(r, {20, 21, 0, 1, 10, 11, 20, 21}));
  // The same table as a transposed view of a [D, V] buffer.
  Buf tableT = f16({2, 3}, {0, 10, 20, 1, 11, 21});
  tableT.shape = {3, 2};
  tableT.strides = {1, 3};
  Buf rt = out(DType::F16, {2, 2, 2});
  EXPECT_OK(run(OpKind::Embedding, {&tableT, &idx}, {&rt}));
  EXPECT_EQ(rt.bytes, r.bytes);
  Buf bad = i64({2}, {1, 3}), br = out(DType::F16, {2, 2});
  Buf before = br;
  EXPECT_TRUE(
      failsWith(run(OpKind::Embedding, {&table, &bad}, {&br}),
                "'mw.embedding': embedding index 3 is out of range [0, 3)"));
  EXPECT_EQ(br.bytes, before.bytes);
  Buf f = f32({2}, {0, 1});
  EXPECT_TRUE(failsWith(run(OpKind::Embedding, {&table, &f}, {&br}),
                        "indices must have an integer element type"));
  EXPECT_TRUE(failsWith(run(OpKind::Embedding, {&f, &bad}, {&br}),
                        "table must have rank 2 ([V, D]), got 1"));
}

TEST(CpuKernels, EmbeddingGradScatterAdds) {
  // Rows 0 and 2 are selected (0 twice); row 1 stays zero.
  Buf idx = i64({3}, {0, 2, 0}), dy = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  Buf r = out(DType::F32, {3, 2});
  EXPECT_OK(run(OpKind::EmbeddingGrad, {&idx, &dy}, {&r}));
  EXPECT_TRUE(sameFloats(r, {6, 8, 0, 0, 3, 4}));
  // bf16 sums accumulate in f32 and round once: 256 + 1 + 1 = 258.
  Buf hi = i32({3}, {0, 0, 0}), hdy = bf16({3, 1}, {256, 1, 1});
  Buf hr = out(DType::BF16, {1, 1});
  EXPECT_OK(run(OpKind::EmbeddingGrad, {&hi, &hdy}, {&hr}));
  EXPECT_TRUE(sameFloats(hr, {258}));
  Buf bad = i64({3}, {0, -1, 0});
  EXPECT_TRUE(failsWith(run(OpKind::EmbeddingGrad, {&bad, &dy}, {&r}),
                        "embedding index -1 is out of range [0, 3)"));
}

TEST(CpuKernels, CrossEntropy) {
  // loss = mean over counted rows of (max + log(sum exp(x - max)) - x[label]);
  // row 1 is ignored (-100).
  Buf logits = f32({2, 3}, {1, 2, 3, 5, 5, 5}), labels = i32({2}, {0, -100});
  Buf loss = out(DType::F32, {});
  EXPECT_OK(run(OpKind::CrossEntropy, {&logits, &labels}, {&loss}));
  float s = std::exp(-2.0f) + std::exp(-1.0f) + std::exp(0.0f);
  EXPECT_TRUE(sameFloats(loss, {(3.0f + std::log(s) - 1.0f) / 1.0f}));
  EXPECT_NEAR(loss.f(0), 2.4076059, 1e-6);
  KernelAttrs ignoreZero;
  ignoreZero.setInt("ignore_index", 0);
  Buf both = i32({2}, {0, 0});
  EXPECT_OK(run(OpKind::CrossEntropy, {&logits, &both}, {&loss}, ignoreZero));
  EXPECT_TRUE(sameFloats(loss, {0})); // everything ignored
  Buf bad = i32({2}, {3, 0});
  EXPECT_TRUE(failsWith(run(OpKind::CrossEntropy, {&logits, &bad}, {&loss}),
                        "label 3 is out of range [0, 3)"));
  Buf wrong = i32({3}, {0, 0, 0});
  EXPECT_TRUE(failsWith(run(OpKind::CrossEntropy, {&logits, &wrong}, {&loss}),
                        "labels type tensor<3xi32> does not match the expected "
                        "tensor<2xi32>"));
}

TEST(CpuKernels, CrossEntropyGrad) {
  // grad = g * (softmax - onehot) / N for counted rows, zero for ignored ones.
  Buf logits = f32({2, 2}, {0, 0, 7, 9}), labels = i64({2}, {1, -100});
  Buf g = f32({}, {2}), r = out(DType::F32, {2, 2});
  EXPECT_OK(run(OpKind::CrossEntropyGrad, {&logits, &labels, &g}, {&r}));
  EXPECT_TRUE(sameFloats(r, {2 * 0.5f / 1, 2 * (0.5f - 1) / 1, 0, 0}));
  Buf h = f16({1, 2}, {0, 0}), hl = i32({1}, {0}), hr = out(DType::F16, {1, 2});
  EXPECT_OK(run(OpKind::CrossEntropyGrad, {&h, &hl, &g}, {&hr}));
  EXPECT_TRUE(sameFloats(hr, {-1, 1}));
}

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

TEST(CpuKernels, AttentionHandValues) {
  // B = H = 1, S = Sk = 2, D = Dv = 1, scale 1: q = [1, 2], k = [0, 1],
  // v = [10, 20]. Row 0: scores [0, 1]; row 1: [0, 2]. Causal: row 0 sees
  // only key 0, so out = v0 = 10 and lse = 0.
  Buf q = f32({1, 1, 2, 1}, {1, 2}), k = f32({1, 1, 2, 1}, {0, 1});
  Buf v = f32({1, 1, 2, 1}, {10, 20});
  Buf o = out(DType::F32, {1, 1, 2, 1}), lse = out(DType::F32, {1, 1, 2});
  KernelAttrs a;
  a.setFloat("scale", 1.0);
  EXPECT_OK(run(OpKind::Attention, {&q, &k, &v}, {&o, &lse}, a));
  auto row = [](float s1) { // probabilities of scores [0, s1]
    float mx = std::max(0.0f, s1), sum = std::exp(0 - mx) + std::exp(s1 - mx);
    float p0 = std::exp(0 - mx) / sum, p1 = std::exp(s1 - mx) / sum;
    return std::array<float, 3>{p0 * 10 + p1 * 20, mx + std::log(sum), 0};
  };
  EXPECT_TRUE(sameFloats(o, {0.0f + row(1)[0], 0.0f + row(2)[0]}));
  EXPECT_TRUE(sameFloats(lse, {row(1)[1], row(2)[1]}));
  EXPECT_NEAR(o.f(0), 10 + 10 * std::exp(1.0) / (1 + std::exp(1.0)), 1e-5);
  a.setBool("causal", true);
  EXPECT_OK(run(OpKind::Attention, {&q, &k, &v}, {&o, &lse}, a));
  EXPECT_TRUE(sameFloats(o, {10, 0.0f + row(2)[0]}));
  EXPECT_TRUE(sameFloats(lse, {0, row(2)[1]}));
}

TEST(CpuKernels, AttentionDefaultScaleIsComputedInDouble) {
  // D = 6: 1/sqrt(6) in double rounded to f32 (not 1.0f / sqrtf(6.0f)).
  std::vector<double> ones(6, 1.0);
  Buf q = f32({1, 1, 1, 6}, ones), k = f32({1, 1, 1, 6}, ones),
      v = f32({1, 1, 1, 1}, {3});
  Buf o = out(DType::F32, {1, 1, 1, 1}), lse = out(DType::F32, {1, 1, 1});
  EXPECT_OK(run(OpKind::Attention, {&q, &k, &v}, {&o, &lse}));
  float scale = static_cast<float>(1.0 / std::sqrt(6.0));
  EXPECT_TRUE(sameFloats(lse, {scale * 6.0f + std::log(1.0f)}));
  EXPECT_TRUE(sameFloats(o, {3}));
}

TEST(CpuKernels, AttentionRejectsBadShapes) {
  Buf q = f32({1, 1, 2, 2}, {1, 2, 3, 4}),
      k = f32({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6});
  Buf v = f32({1, 1, 2, 2}, {1, 2, 3, 4}), o = out(DType::F32, {1, 1, 2, 2});
  Buf lse = out(DType::F32, {1, 1, 2});
  EXPECT_TRUE(failsWith(run(OpKind::Attention, {&q, &k, &v}, {&o, &lse}),
                        "key shape [1, 1, 2, 3] does not match query shape "
                        "[1, 1, 2, 2] in batch, heads or head dimension"));
  Buf q3 = f32({1, 2, 2}, {1, 2, 3, 4});
  EXPECT_TRUE(failsWith(run(OpKind::Attention, {&q3, &q, &v}, {&o, &lse}),
                        "query must have rank 4 ([B, H, S, D]), got 3"));
  KernelAttrs neg;
  neg.setFloat("scale", -1);
  EXPECT_TRUE(failsWith(run(OpKind::Attention, {&q, &q, &v}, {&o, &lse}, neg),
                        "scale must be finite and positive, got -1"));
}

TEST(CpuKernels, AttentionGradHandValues) {
  // S = 1, Sk = 2, D = Dv = 1, scale 1: q = 1, k = [0, 1], v = [1, 3],
  // dO = 1. p = softmax([0, 1]); dp_j = dO * v_j; rowDot = sum p_j dp_j;
  // ds_j = p_j (dp_j - rowDot) * scale; dq = sum ds_j k_j, dk_j = ds_j q,
  // dv_j = p_j dO.
  Buf q = f32({1, 1, 1, 1}, {1}), k = f32({1, 1, 2, 1}, {0, 1}),
      v = f32({1, 1, 2, 1}, {1, 3});
  Buf o = out(DType::F32, {1, 1, 1, 1}), lse = out(DType::F32, {1, 1, 1});
  KernelAttrs a;
  a.setFloat("scale", 1.0);
  EXPECT_OK(run(OpKind::Attention, {&q, &k, &v}, {&o, &lse}, a));
  Buf dout = f32({1, 1, 1, 1}, {1});
  Buf dq = out(DType::F32, {1, 1, 1, 1}), dk = out(DType::F32, {1, 1, 2, 1});
  Buf dv = out(DType::F32, {1, 1, 2, 1});
  EXPECT_OK(run(OpKind::AttentionGrad, {&q, &k, &v, &o, &lse, &dout},
                {&dq, &dk, &dv}, a));
  double e = std::exp(1.0), p0 = 1 / (1 + e), p1 = e / (1 + e);
  double rowDot = p0 * 1 + p1 * 3, ds0 = p0 * (1 - rowDot),
         ds1 = p1 * (3 - rowDot);
  EXPECT_TRUE(nearFloats(dv, {p0, p1}, 1e-6));
  EXPECT_TRUE(nearFloats(dk, {ds0, ds1}, 1e-6));
  EXPECT_TRUE(nearFloats(dq, {ds1}, 1e-6));
  // And dq matches a central difference of sum(out * dO) in q.
  Buf qp = f32({1, 1, 1, 1}, {1 + 1e-2}), qm = f32({1, 1, 1, 1}, {1 - 1e-2});
  Buf op = out(DType::F32, {1, 1, 1, 1}), om = out(DType::F32, {1, 1, 1, 1});
  EXPECT_OK(run(OpKind::Attention, {&qp, &k, &v}, {&op, &lse}, a));
  EXPECT_OK(run(OpKind::Attention, {&qm, &k, &v}, {&om, &lse}, a));
  EXPECT_NEAR(dq.f(0), (op.at(0) - om.at(0)) / 2e-2, 1e-3);
}

TEST(CpuKernels, AttentionBlockedWithinTolerance) {
  if (!cpuMatmulUsesBlas())
    GTEST_SKIP() << "built without OpenBLAS: attention always takes the "
                    "reference path";
  // The blocked path (sgemm over blocks of 64 queries x 256 keys) against
  // the reference loop, forward and backward, on shapes that end blocks
  // part-way, causal and not: every element within 2 (D + Sk) u
  // max|reference| of its tensor (docs/runtime-kernels.md; measured at most
  // 0.08 (D + Sk) u max|reference| on these cases).
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> wide(-2, 2), unit(-1, 1);
  auto draw = [&](Shape shape, auto &dist) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    std::vector<double> v(n);
    for (double &x : v)
      x = dist(rng);
    return f32(shape, v);
  };
  struct Case {
    int64_t b, h, s, sk, d, dv;
    bool causal;
  };
  for (Case t : {Case{1, 2, 150, 150, 64, 64, true},
                 Case{1, 3, 70, 300, 40, 24, false},
                 Case{2, 1, 129, 129, 16, 8, true},
                 Case{1, 1, 1, 513, 8, 8, false}}) {
    Buf q = draw({t.b, t.h, t.s, t.d}, wide), k = draw({t.b, t.h, t.sk, t.d}, wide);
    Buf v = draw({t.b, t.h, t.sk, t.dv}, unit);
    Buf dout = draw({t.b, t.h, t.s, t.dv}, unit);
    KernelAttrs a;
    a.setBool("causal", t.causal);
    if (!t.causal)
      a.setFloat("scale", 0.3);
    Shape os{t.b, t.h, t.s, t.dv}, ls{t.b, t.h, t.s};
    std::array<Buf, 2> o{out(DType::F32, os), out(DType::F32, os)};
    std::array<Buf, 2> lse{out(DType::F32, ls), out(DType::F32, ls)};
    std::array<Buf, 2> dq{out(DType::F32, q.shape), out(DType::F32, q.shape)};
    std::array<Buf, 2> dk{out(DType::F32, k.shape), out(DType::F32, k.shape)};
    std::array<Buf, 2> dv{out(DType::F32, v.shape), out(DType::F32, v.shape)};
    // 0: blocked, 1: reference; both backward passes read the reference
    // forward's output and lse.
    std::array<CpuKernelOptions, 2> opts{CpuKernelOptions{}, referenceOnly()};
    for (int r = 0; r < 2; ++r)
      EXPECT_OK(run(OpKind::Attention, {&q, &k, &v}, {&o[r], &lse[r]}, a,
                    opts[r]));
    for (int r = 0; r < 2; ++r)
      EXPECT_OK(run(OpKind::AttentionGrad, {&q, &k, &v, &o[1], &lse[1], &dout},
                    {&dq[r], &dk[r], &dv[r]}, a, opts[r]));
    double u = std::ldexp(1.0, -24), bound = 2 * (t.d + t.sk) * u;
    for (auto [x, name] : {std::pair{&o, "result"}, {&lse, "lse"},
                           {&dq, "grad_query"}, {&dk, "grad_key"},
                           {&dv, "grad_value"}}) {
      double mx = 0, err = 0;
      for (int64_t i = 0; i < (*x)[1].numel(); ++i) {
        mx = std::max(mx, std::abs((*x)[1].at(i)));
        err = std::max(err, std::abs((*x)[0].at(i) - (*x)[1].at(i)));
      }
      EXPECT_LE(err, bound * mx) << name << " of " << t.s << "x" << t.sk << "x"
                                 << t.d << (t.causal ? " causal" : "");
    }
  }
}

TEST(CpuKernels, AttentionGradCausalMasksLaterKeys) {
  // Causal, S = Sk = 2: row 0 sees key 0 only (p = 1, so ds = 0 there);
  // key 1 gets gradient from row 1 alone.
  Buf q = f32({1, 1, 2, 1}, {1, 1}), k = f32({1, 1, 2, 1}, {1, 1}),
      v = f32({1, 1, 2, 1}, {2, 4});
  Buf o = out(DType::F32, {1, 1, 2, 1}), lse = out(DType::F32, {1, 1, 2});
  KernelAttrs a;
  a.setBool("causal", true);
  a.setFloat("scale", 1.0);
  EXPECT_OK(run(OpKind::Attention, {&q, &k, &v}, {&o, &lse}, a));
  EXPECT_TRUE(sameFloats(o, {2, 3}));
  Buf dout = f32({1, 1, 2, 1}, {1, 1});
  Buf dq = out(DType::F32, {1, 1, 2, 1}), dk = out(DType::F32, {1, 1, 2, 1});
  Buf dv = out(DType::F32, {1, 1, 2, 1});
  EXPECT_OK(run(OpKind::AttentionGrad, {&q, &k, &v, &o, &lse, &dout},
                {&dq, &dk, &dv}, a));
  // Row 1: p = [0.5, 0.5], dp = [2, 4], rowDot = 3, ds = [-0.5, 0.5].
  EXPECT_TRUE(sameFloats(dv, {1.5f, 0.5f}));
  EXPECT_TRUE(sameFloats(dk, {-0.5f, 0.5f}));
  EXPECT_TRUE(sameFloats(dq, {0, 0}));
  Buf wrong = out(DType::F16, {1, 1, 2, 1});
  EXPECT_TRUE(
      failsWith(run(OpKind::AttentionGrad, {&q, &k, &v, &o, &lse, &dout},
                    {&wrong, &dk, &dv}, a),
                "grad_query type tensor<1x1x2x1xf16> differs from the "
                "query type tensor<1x1x2x1xf32>"));
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

TEST(CpuKernels, Reshape) {
  Buf x = i64({2, 3}, {1, 2, 3, 4, 5, 6}), r = out(DType::I64, {3, 2});
  EXPECT_OK(run(OpKind::Reshape, {&x}, {&r}));
  EXPECT_TRUE(sameInts(r, {1, 2, 3, 4, 5, 6}));
  // As a view of its own input: nothing to do.
  TensorRef in = x.ref(), view(DType::I64, {6}, x.bytes.data());
  EXPECT_OK(runCpuKernel(OpKind::Reshape, {}, {in}, {view}));
  // A transposed (strided) input is read in its own row-major order.
  Buf t = x;
  t.shape = {3, 2};
  t.strides = {1, 3};
  Buf flat = out(DType::I64, {6});
  EXPECT_OK(run(OpKind::Reshape, {&t}, {&flat}));
  EXPECT_TRUE(sameInts(flat, {1, 4, 2, 5, 3, 6}));
  Buf bad = out(DType::I64, {5});
  EXPECT_TRUE(failsWith(run(OpKind::Reshape, {&x}, {&bad}),
                        "element count changes from 6 to 5"));
}

TEST(CpuKernels, Transpose) {
  Buf x = bf16({2, 3}, {1, 2, 3, 4, 5, 6}), r = out(DType::BF16, {3, 2});
  KernelAttrs p;
  p.setInts("permutation", {1, 0});
  EXPECT_OK(run(OpKind::Transpose, {&x}, {&r}, p));
  EXPECT_TRUE(sameFloats(r, {1, 4, 2, 5, 3, 6}));
  Buf y = i32({1, 2, 3}, {1, 2, 3, 4, 5, 6}), s = out(DType::I32, {3, 1, 2});
  p.setInts("permutation", {2, 0, 1});
  EXPECT_OK(run(OpKind::Transpose, {&y}, {&s}, p));
  EXPECT_TRUE(sameInts(s, {1, 4, 2, 5, 3, 6}));
  p.setInts("permutation", {0, 0, 1});
  EXPECT_TRUE(
      failsWith(run(OpKind::Transpose, {&y}, {&s}, p),
                "permutation [0, 0, 1] is not a permutation of [0, 3)"));
}

TEST(CpuKernels, BroadcastTo) {
  Buf x = f32({3}, {1, 2, 3}), r = out(DType::F32, {2, 3});
  EXPECT_OK(run(OpKind::BroadcastTo, {&x}, {&r}));
  EXPECT_TRUE(sameFloats(r, {1, 2, 3, 1, 2, 3}));
  Buf c = i32({2, 1}, {7, 8}), cr = out(DType::I32, {2, 2});
  EXPECT_OK(run(OpKind::BroadcastTo, {&c}, {&cr}));
  EXPECT_TRUE(sameInts(cr, {7, 7, 8, 8}));
  Buf bad = out(DType::F32, {2, 2});
  EXPECT_TRUE(
      failsWith(run(OpKind::BroadcastTo, {&x}, {&bad}),
                "input dimension 0 of size 3 cannot broadcast to size 2"));
}

TEST(CpuKernels, Slice) {
  Buf x = f32({3, 4}, {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23});
  Buf r = out(DType::F32, {2, 2});
  KernelAttrs a;
  a.setInts("offsets", {1, 0})
      .setInts("sizes", {2, 2})
      .setInts("strides", {1, 3});
  EXPECT_OK(run(OpKind::Slice, {&x}, {&r}, a));
  EXPECT_TRUE(sameFloats(r, {10, 13, 20, 23}));
  KernelAttrs plain;
  plain.setInts("offsets", {0, 1}).setInts("sizes", {2, 2});
  EXPECT_OK(run(OpKind::Slice, {&x}, {&r}, plain));
  EXPECT_TRUE(sameFloats(r, {1, 2, 11, 12}));
  a.setInts("strides", {2, 3});
  EXPECT_TRUE(failsWith(run(OpKind::Slice, {&x}, {&r}, a),
                        "slice along dimension 0 (offset 1, size 2, stride 2) "
                        "reads past its size 3"));
  plain.setInts("sizes", {2});
  EXPECT_TRUE(failsWith(run(OpKind::Slice, {&x}, {&r}, plain),
                        "sizes has 1 entries for rank 2"));
}

TEST(CpuKernels, Concat) {
  Buf a = f16({2, 1}, {1, 2}), b = f16({2, 2}, {3, 4, 5, 6}),
      r = out(DType::F16, {2, 3});
  EXPECT_OK(run(OpKind::Concat, {&a, &b}, {&r}, axis(1)));
  EXPECT_TRUE(sameFloats(r, {1, 3, 4, 2, 5, 6}));
  Buf c = i64({1, 2}, {7, 8}), d = i64({1, 2}, {9, 10}),
      e = out(DType::I64, {2, 2});
  EXPECT_OK(run(OpKind::Concat, {&c, &d}, {&e}, axis(0)));
  EXPECT_TRUE(sameInts(e, {7, 8, 9, 10}));
  EXPECT_TRUE(failsWith(run(OpKind::Concat, {&a, &b}, {&r}, axis(0)),
                        "input #1 has shape [2, 2], which differs from input "
                        "#0's [2, 1] outside axis 0"));
}

//===----------------------------------------------------------------------===//
// Activation gradients
//===----------------------------------------------------------------------===//

TEST(CpuKernels, ActivationGrads) {
  Buf x = f32({3}, {-1, 0, 2}), dy = f32({3}, {2, 2, 2}),
      r = out(DType::F32, {3});
  EXPECT_OK(run(OpKind::ReluGrad, {&x, &dy}, {&r}));
  EXPECT_TRUE(sameFloats(r, {0, 0, 2})); // relu'(0) = 0
  // silu'(v) = s * (1 + v * (1 - s)), s = sigmoid(v): silu'(0) = 0.5.
  auto silu = [](float v) {
    float s = 1.0f / (1.0f + std::exp(-v));
    return s * (1.0f + v * (1.0f - s));
  };
  EXPECT_OK(run(OpKind::SiluGrad, {&x, &dy}, {&r}));
  EXPECT_TRUE(sameFloats(r, {2 * silu(-1), 2 * 0.5f, 2 * silu(2)}));
  // erf form: Phi(v) + v * phi(v), with
  //   Phi = 0.5f * (1.0f + erf(v * float(0.7071067811865476))),
  //   phi = float(0.3989422804014327) * exp(-0.5f * v * v).
  auto geluErf = [](float v) {
    float cdf = 0.5f * (1.0f + std::erf(v * float(0.7071067811865476)));
    float pdf = float(0.3989422804014327) * std::exp(-0.5f * v * v);
    return cdf + v * pdf;
  };
  EXPECT_OK(run(OpKind::GeluGrad, {&x, &dy}, {&r}));
  EXPECT_TRUE(sameFloats(r, {2 * geluErf(-1), 2 * 0.5f, 2 * geluErf(2)}));
  // tanh form: u = c (v + a v^3), t = tanh(u), du = c (1 + 3 a v^2),
  //   0.5f * (1 + t) + 0.5f * v * (1 - t * t) * du.
  auto geluTanh = [](float v) {
    float c = float(0.7978845608028654), a = float(0.044715);
    float u = c * (v + a * v * v * v);
    float t = std::tanh(u);
    float du = c * (1.0f + 3.0f * a * v * v);
    return 0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * du;
  };
  KernelAttrs tanh;
  tanh.setString("approximate", "tanh");
  EXPECT_OK(run(OpKind::GeluGrad, {&x, &dy}, {&r}, tanh));
  EXPECT_TRUE(sameFloats(r, {2 * geluTanh(-1), 2 * 0.5f, 2 * geluTanh(2)}));
  Buf h = f16({3}, {-1, 0, 2});
  EXPECT_TRUE(failsWith(run(OpKind::ReluGrad, {&x, &h}, {&r}),
                        "grad_output type tensor<3xf16> differs from the input "
                        "type tensor<3xf32>"));
}

//===----------------------------------------------------------------------===//
// Optimizers and loss scaling
//===----------------------------------------------------------------------===//

TEST(CpuKernels, AdamWOneStep) {
  // p = 1, g = 0.5, m = v = 0, t = 1, lr 0.1, wd 0.01 and the default betas:
  //   p * (1 - lr wd) = 0.999; m = 0.05; v = 0.00025;
  //   mhat = m / (1 - b1) = 0.5; vhat = v / (1 - b2) = 0.25;
  //   p = 0.999 - 0.1 * 0.5 / (0.5 + 1e-8) = 0.899.
  // Scalars in double then f32, elements in f32, as the evaluator.
  Buf p = f32({2}, {1, -2}), g = f32({2}, {0.5, 0}), m = f32({2}, {0, 0.1});
  Buf v = f32({2}, {0, 0.01}), t = i64({}, {1});
  Buf np = out(DType::F32, {2}), nm = out(DType::F32, {2}),
      nv = out(DType::F32, {2});
  KernelAttrs a;
  a.setFloat("lr", 0.1).setFloat("weight_decay", 0.01);
  EXPECT_OK(run(OpKind::AdamW, {&p, &g, &m, &v, &t}, {&np, &nm, &nv}, a));
  float decay = float(1.0 - 0.1 * 0.01), bc1 = float(1.0 - std::pow(0.9, 1.0));
  float bc2 = float(1.0 - std::pow(0.999, 1.0));
  float b1 = 0.9f, b2 = 0.999f, omb1 = float(1.0 - 0.9),
        omb2 = float(1.0 - 0.999);
  std::vector<float> ep, em, ev;
  for (int n = 0; n < 2; ++n) {
    float gi = g.f(n), pi = p.f(n) * decay;
    float mi = b1 * m.f(n) + omb1 * gi, vi = b2 * v.f(n) + omb2 * gi * gi;
    ep.push_back(pi - 0.1f * (mi / bc1) / (std::sqrt(vi / bc2) + float(1e-8)));
    em.push_back(mi);
    ev.push_back(vi);
  }
  EXPECT_TRUE(sameFloats(np, ep));
  EXPECT_TRUE(sameFloats(nm, em));
  EXPECT_TRUE(sameFloats(nv, ev));
  EXPECT_NEAR(np.f(0), 0.899, 1e-6);
  EXPECT_NEAR(nm.f(0), 0.05, 1e-8);
  // In place, with an f32 step: the same bits.
  Buf ft = f32({}, {1});
  EXPECT_OK(run(OpKind::AdamW, {&p, &g, &m, &v, &ft}, {&p, &m, &v}, a));
  EXPECT_EQ(p.bytes, np.bytes);
  EXPECT_EQ(m.bytes, nm.bytes);
  EXPECT_EQ(v.bytes, nv.bytes);
  Buf zero = i64({}, {0});
  EXPECT_TRUE(
      failsWith(run(OpKind::AdamW, {&p, &g, &m, &v, &zero}, {&np, &nm, &nv}, a),
                "adamw step must be >= 1 (the 1-based count of this "
                "update), got 0"));
}

TEST(CpuKernels, AdamWMixedPrecisionGrad) {
  // f32 master weights with a bf16 gradient, read in f32.
  Buf p = f32({1}, {1}), g = bf16({1}, {0.5}), m = f32({1}, {0}),
      v = f32({1}, {0});
  Buf t = i32({}, {2});
  Buf np = out(DType::F32, {1}), nm = out(DType::F32, {1}),
      nv = out(DType::F32, {1});
  EXPECT_OK(run(OpKind::AdamW, {&p, &g, &m, &v, &t}, {&np, &nm, &nv}));
  float mi = 0.9f * 0 + float(1.0 - 0.9) * 0.5f;
  float vi = 0.999f * 0 + float(1.0 - 0.999) * 0.5f * 0.5f;
  float bc1 = float(1.0 - std::pow(0.9, 2.0)),
        bc2 = float(1.0 - std::pow(0.999, 2.0));
  float pi = 1.0f * float(1.0 - 1e-3 * 1e-2);
  EXPECT_TRUE(sameFloats(np, {pi - float(1e-3) * (mi / bc1) /
                                       (std::sqrt(vi / bc2) + float(1e-8))}));
  Buf h = f16({1}, {1});
  EXPECT_TRUE(
      failsWith(run(OpKind::AdamW, {&p, &g, &h, &v, &t}, {&np, &nm, &nv}),
                "exp_avg type tensor<1xf16> differs from the param type "
                "tensor<1xf32>"));
}

TEST(CpuKernels, Sgd) {
  // Plain: p - lr * (g + wd * p) = 1 - 0.1 * (0.5 + 0.1 * 1) = 0.94.
  Buf p = f32({1}, {1}), g = f32({1}, {0.5}), np = out(DType::F32, {1});
  KernelAttrs a;
  a.setFloat("lr", 0.1).setFloat("weight_decay", 0.1);
  EXPECT_OK(run(OpKind::Sgd, {&p, &g}, {&np}, a));
  EXPECT_TRUE(sameFloats(np, {1.0f - 0.1f * (0.5f + 0.1f * 1.0f)}));
  // Momentum 0.9 with dampening 0.5 and nesterov off:
  // buf = 0.9 * buf + (1 - 0.5) * g; p = p - lr * buf.
  Buf buf = f32({1}, {1}), nb = out(DType::F32, {1});
  KernelAttrs mom;
  mom.setFloat("lr", 0.1).setFloat("momentum", 0.9).setFloat("dampening", 0.5);
  EXPECT_OK(run(OpKind::Sgd, {&p, &g, &buf}, {&np, &nb}, mom));
  float b = 0.9f * 1.0f + float(1.0 - 0.5) * 0.5f;
  EXPECT_TRUE(sameFloats(nb, {b}));
  EXPECT_TRUE(sameFloats(np, {1.0f - 0.1f * b}));
  // Nesterov: g + momentum * buf, in place.
  KernelAttrs nest;
  nest.setFloat("lr", 0.1).setFloat("momentum", 0.9).setBool("nesterov", true);
  EXPECT_OK(run(OpKind::Sgd, {&p, &g, &buf}, {&p, &buf}, nest));
  float b2 = 0.9f * 1.0f + 1.0f * 0.5f;
  EXPECT_TRUE(sameFloats(buf, {b2}));
  EXPECT_TRUE(sameFloats(p, {1.0f - 0.1f * (0.5f + 0.9f * b2)}));
  EXPECT_TRUE(failsWith(run(OpKind::Sgd, {&p, &g}, {&np}, mom),
                        "momentum 0.9 requires a momentum_buffer operand"));
  EXPECT_TRUE(
      failsWith(run(OpKind::Sgd, {&p, &g}, {&np}), "missing attribute 'lr'"));
  KernelAttrs badNest;
  badNest.setFloat("lr", 0.1)
      .setFloat("momentum", 0.9)
      .setFloat("dampening", 0.1)
      .setBool("nesterov", true);
  EXPECT_TRUE(failsWith(run(OpKind::Sgd, {&p, &g, &buf}, {&np, &nb}, badNest),
                        "nesterov requires a non-zero momentum and zero "
                        "dampening"));
}

TEST(CpuKernels, FoundInf) {
  Buf a = f32({2}, {1, 2}), b = f16({1}, {1e6}), n = bf16({2}, {1, NAN});
  Buf r = out(DType::F32, {});
  EXPECT_OK(run(OpKind::FoundInf, {&a}, {&r}));
  EXPECT_TRUE(sameFloats(r, {0}));
  EXPECT_OK(run(OpKind::FoundInf, {&a, &b}, {&r})); // 1e6 is inf in f16
  EXPECT_TRUE(sameFloats(r, {1}));
  EXPECT_OK(run(OpKind::FoundInf, {&n, &a}, {&r}));
  EXPECT_TRUE(sameFloats(r, {1}));
  Buf i = i32({1}, {1});
  EXPECT_TRUE(failsWith(run(OpKind::FoundInf, {&a, &i}, {&r}),
                        "input #1 must have a float element type"));
}

TEST(CpuKernels, Select) {
  Buf t = i32({2}, {1, 2}), f = i32({2}, {3, 4}), r = out(DType::I32, {2});
  Buf yes = f32s(1), no = f32s(0), nan = f32s(NAN);
  EXPECT_OK(run(OpKind::Select, {&yes, &t, &f}, {&r}));
  EXPECT_TRUE(sameInts(r, {1, 2}));
  EXPECT_OK(run(OpKind::Select, {&no, &t, &f}, {&r}));
  EXPECT_TRUE(sameInts(r, {3, 4}));
  EXPECT_OK(run(OpKind::Select, {&nan, &t, &f}, {&r})); // NaN != 0: true
  EXPECT_TRUE(sameInts(r, {1, 2}));
  // In place over the value not chosen, and over the chosen one.
  EXPECT_OK(run(OpKind::Select, {&yes, &t, &f}, {&f}));
  EXPECT_TRUE(sameInts(f, {1, 2}));
  EXPECT_OK(run(OpKind::Select, {&yes, &t, &f}, {&t}));
  EXPECT_TRUE(sameInts(t, {1, 2}));
  Buf h = f16({2}, {1, 2});
  EXPECT_TRUE(failsWith(run(OpKind::Select, {&yes, &t, &h}, {&r}),
                        "false_value type tensor<2xf16> differs from the "
                        "true_value type tensor<2xi32>"));
  Buf i = i64({}, {1});
  EXPECT_TRUE(failsWith(run(OpKind::Select, {&i, &t, &t}, {&r}),
                        "condition type tensor<i64> does not match the "
                        "expected tensor<f32>"));
}

TEST(CpuKernels, LossScaleUpdateFollowsDeepSpeed) {
  // window 2, hysteresis 2, from DeepSpeed's fresh state (65536, 0, -1, 2).
  KernelAttrs a;
  a.setInt("window", 2);
  Buf scale = f32s(65536), iter = i64({}, {0}), last = i64({}, {-1}),
      hyst = i64({}, {2});
  auto step = [&](float overflow) {
    Buf flag = f32s(overflow);
    EXPECT_EQ(run(OpKind::LossScaleUpdate, {&flag, &scale, &iter, &last, &hyst},
                  {&scale, &iter, &last, &hyst}, a),
              MWRT_OK)
        << mwrt_last_error();
    return std::tuple{scale.f(0), iter.i(0), last.i(0), hyst.i(0)};
  };
  // (iter - last) = 1: not a multiple of 2.
  EXPECT_EQ(step(0), std::tuple(65536.0f, int64_t(1), int64_t(-1), int64_t(2)));
  // (1 - -1) = 2: grow, restore hysteresis.
  EXPECT_EQ(step(0),
            std::tuple(131072.0f, int64_t(2), int64_t(-1), int64_t(2)));
  // First overflow only uses up the hysteresis; the second halves.
  EXPECT_EQ(step(1), std::tuple(131072.0f, int64_t(3), int64_t(2), int64_t(1)));
  EXPECT_EQ(step(1), std::tuple(65536.0f, int64_t(4), int64_t(3), int64_t(1)));
  // (4 - 3) = 1, then (5 - 3) = 2: grow again.
  EXPECT_EQ(step(0), std::tuple(65536.0f, int64_t(5), int64_t(3), int64_t(1)));
  EXPECT_EQ(step(0), std::tuple(131072.0f, int64_t(6), int64_t(3), int64_t(2)));
}

TEST(CpuKernels, LossScaleUpdateClampsAndSaturates) {
  KernelAttrs a;
  a.setInt("window", 1).setInt("hysteresis", 1).setFloat("min_scale", 4);
  Buf yes = f32s(1), no = f32s(0), s = f32s(6), it = i64({}, {0}),
      la = i64({}, {-1});
  Buf hy = i64({}, {1});
  Buf ns = out(DType::F32, {}), ni = out(DType::I64, {}),
      nl = out(DType::I64, {});
  Buf nh = out(DType::I64, {});
  EXPECT_OK(run(OpKind::LossScaleUpdate, {&yes, &s, &it, &la, &hy},
                {&ns, &ni, &nl, &nh}, a));
  EXPECT_TRUE(sameFloats(ns, {4})); // max(6 / 2, min_scale)
  Buf huge = f32s(3e38f);
  EXPECT_OK(run(OpKind::LossScaleUpdate, {&no, &huge, &it, &la, &hy},
                {&ns, &ni, &nl, &nh}, a));
  EXPECT_TRUE(sameFloats(ns, {std::numeric_limits<float>::max()}));
  a.setInt("window", 0);
  EXPECT_TRUE(failsWith(run(OpKind::LossScaleUpdate, {&no, &s, &it, &la, &hy},
                            {&ns, &ni, &nl, &nh}, a),
                        "window must be >= 1, got 0"));
  EXPECT_TRUE(failsWith(run(OpKind::LossScaleUpdate, {&no, &s, &it, &la, &s},
                            {&ns, &ni, &nl, &nh}),
                        "cur_hysteresis type tensor<f32> does not match the "
                        "expected tensor<i64>"));
}
