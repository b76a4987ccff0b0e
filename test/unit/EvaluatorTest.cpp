//===- EvaluatorTest.cpp - Unit tests of the reference evaluator ----------===//
//
// Checks every mw op's kernel in lib/Eval against expectations computed
// another way: by hand (small integer-valued tensors, the arithmetic in the
// comments), by a double-precision reference loop written here independently
// of the evaluator's indexing helpers, or by llvm::APFloat for the 16-bit
// float encodings. Every backward op is checked against central finite
// differences of its forward op, both run through the evaluator, so the two
// halves of each forward/backward pair are checked against each other and
// not against a second copy of the same formula.
//
//===----------------------------------------------------------------------===//

#include "memwall/Eval/Evaluator.h"

#include "memwall/Dialect/MW/IR/MWDialect.h"
#include "mwrt/formulas.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>

using namespace mlir;
using namespace mlir::mw;
using namespace mlir::mw::eval;

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

float bitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}
uint32_t floatToBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

/// A tensor of `kind` holding `values` (rounded to the kind, as the evaluator
/// holds them).
Tensor make(ElemKind kind, ArrayRef<int64_t> shape,
            std::initializer_list<double> values) {
  Tensor t = Tensor::zeros(kind, shape);
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numElements())
      << "test bug: value count does not match the shape";
  int64_t n = 0;
  for (double v : values) {
    if (n >= t.numElements())
      break;
    if (t.isFloat())
      t.f[n++] = roundToKind(kind, static_cast<float>(v));
    else
      t.i[n++] = static_cast<int64_t>(v);
  }
  return t;
}
Tensor f32(ArrayRef<int64_t> shape, std::initializer_list<double> values) {
  return make(ElemKind::F32, shape, values);
}
Tensor i64(ArrayRef<int64_t> shape, std::initializer_list<double> values) {
  return make(ElemKind::I64, shape, values);
}
Tensor i32(ArrayRef<int64_t> shape, std::initializer_list<double> values) {
  return make(ElemKind::I32, shape, values);
}

/// Uniform values in [lo, hi), rounded to `kind`.
Tensor random(ElemKind kind, ArrayRef<int64_t> shape, std::mt19937 &rng,
              double lo = -1.0, double hi = 1.0) {
  std::uniform_real_distribution<double> dist(lo, hi);
  Tensor t = Tensor::zeros(kind, shape);
  for (float &x : t.f)
    x = roundToKind(kind, static_cast<float>(dist(rng)));
  return t;
}

/// Row-major strides of `shape`, computed here rather than borrowed from the
/// evaluator so that the references below share no indexing code with it.
SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    s[d - 1] = s[d] * shape[d];
  return s;
}

/// The multi-index of flat element `n` of `shape`.
SmallVector<int64_t> unflatten(int64_t n, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> idx(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = n % shape[d];
    n /= shape[d];
  }
  return idx;
}

/// Expects `t` to have `kind` and `shape`.
void expectType(const Tensor &t, ElemKind kind, ArrayRef<int64_t> shape) {
  EXPECT_EQ(elemKindName(t.kind), std::string(elemKindName(kind)));
  EXPECT_EQ(ArrayRef<int64_t>(t.shape), shape);
}

/// Expects every element of `t` within `absTol + relTol * |expected|`.
void expectNear(const Tensor &t, ArrayRef<double> expected, double absTol,
                double relTol = 0.0, const std::string &what = "") {
  ASSERT_EQ(t.numElements(), static_cast<int64_t>(expected.size())) << what;
  for (size_t n = 0; n < expected.size(); ++n) {
    if (!std::isfinite(expected[n]))
      EXPECT_EQ(t.at(n), expected[n]) << what << " element " << n;
    else
      EXPECT_NEAR(t.at(n), expected[n],
                  absTol + relTol * std::fabs(expected[n]))
          << what << " element " << n;
  }
}

/// Expects bit-exact float elements (the values are exact by construction).
void expectExact(const Tensor &t, ArrayRef<double> expected,
                 const std::string &what = "") {
  expectNear(t, expected, 0.0, 0.0, what);
}

/// Forward reference functions in double, independent of the evaluator.
double sigmoidRef(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double geluErfRef(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}
double geluTanhRef(double x) {
  return 0.5 * x *
         (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

/// Round-to-nearest-even of `x` to a binary format with `mantBits` explicit
/// mantissa bits, minimum normal exponent `minExp` and largest finite value
/// `maxFinite`, in double: x / quantum is an exact scaling by a power of two,
/// and std::nearbyint rounds ties to even in the default rounding mode. An
/// independent reference for roundToKind.
double roundRef(double x, int mantBits, int minExp, double maxFinite) {
  if (std::isnan(x) || std::isinf(x) || x == 0.0)
    return x;
  int e = std::ilogb(x);
  if (e < minExp)
    e = minExp;
  double quantum = std::ldexp(1.0, e - mantBits);
  double r = std::nearbyint(x / quantum) * quantum;
  if (std::fabs(r) > maxFinite)
    return std::copysign(INFINITY, x);
  return r;
}
double bf16Ref(double x) {
  return roundRef(x, 7, -126, std::ldexp(255.0, 120)); // (2 - 2^-7) 2^127
}
double f16Ref(double x) {
  return roundRef(x, 10, -14, 65504.0);
}

/// bf16 bits by llvm::APFloat, the reference for floatToBFloatBits.
uint16_t apfloatBF16Bits(float v) {
  llvm::APFloat a(v);
  bool losesInfo = false;
  a.convert(llvm::APFloat::BFloat(), llvm::APFloat::rmNearestTiesToEven,
            &losesInfo);
  return static_cast<uint16_t>(a.bitcastToAPInt().getZExtValue());
}

//===----------------------------------------------------------------------===//
// Fixture
//===----------------------------------------------------------------------===//

class EvalTest : public ::testing::Test {
protected:
  EvalTest()
      : ctx(MLIRContext::Threading::DISABLED),
        handler(&ctx, [this](Diagnostic &d) {
          diagnostics += d.str();
          diagnostics += "\n";
          return success();
        }) {
    ctx.loadDialect<MWDialect, func::FuncDialect>();
  }

  /// Parses `ir` and returns its function `name` (its first one when empty).
  func::FuncOp parse(StringRef ir, StringRef name = "") {
    diagnostics.clear();
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(ir, &ctx);
    if (!module) {
      ADD_FAILURE() << "test IR does not parse:\n" << diagnostics << ir.str();
      return {};
    }
    func::FuncOp f;
    for (auto candidate : module->getOps<func::FuncOp>())
      if (name.empty() || candidate.getName() == name) {
        f = candidate;
        break;
      }
    if (!f)
      ADD_FAILURE() << "no function '" << name.str() << "'";
    modules.push_back(std::move(module));
    return f;
  }

  /// Evaluates `f`, expecting success.
  SmallVector<Tensor> run(func::FuncOp f, ArrayRef<Tensor> args) {
    diagnostics.clear();
    if (!f)
      return {};
    FailureOr<SmallVector<Tensor>> r = evaluate(f, args);
    if (failed(r)) {
      ADD_FAILURE() << "evaluation failed: " << diagnostics;
      return SmallVector<Tensor>(f.getNumResults());
    }
    return std::move(*r);
  }
  Tensor run1(func::FuncOp f, ArrayRef<Tensor> args) {
    SmallVector<Tensor> r = run(f, args);
    return r.empty() ? Tensor() : r.front();
  }

  /// Evaluates `f`, expecting failure; returns the diagnostics.
  std::string runError(func::FuncOp f, ArrayRef<Tensor> args) {
    diagnostics.clear();
    if (!f)
      return "";
    FailureOr<SmallVector<Tensor>> r = evaluate(f, args);
    EXPECT_TRUE(failed(r)) << "evaluation unexpectedly succeeded";
    return diagnostics;
  }

  /// A one-function module: `body` computes %r from the arguments.
  func::FuncOp unaryFunc(StringRef sig, StringRef body, StringRef resultType) {
    return parse(llvm::formatv(R"mlir(
      func.func @f({0}) -> {2} {{
        {1}
        return %r : {2}
      })mlir",
                               sig, body, resultType)
                     .str());
  }

  MLIRContext ctx;
  ScopedDiagnosticHandler handler;
  std::string diagnostics;
  std::vector<OwningOpRef<ModuleOp>> modules;
};

//===----------------------------------------------------------------------===//
// 16-bit float encodings and rounding
//===----------------------------------------------------------------------===//

TEST(EvalRounding, BFloatBitsOnExactPatterns) {
  struct Case {
    uint32_t f32;
    uint16_t bf16;
    const char *why;
  };
  const Case cases[] = {
      {0x3F800000, 0x3F80, "1.0 is exact"},
      {0x3F808000, 0x3F80, "1 + 2^-8: a tie, to the even 1.0"},
      {0x3F818000, 0x3F82, "1 + 3*2^-8: a tie, to the even 1 + 2^-6"},
      {0x3F808001, 0x3F81, "just above the tie rounds up"},
      {0x3F807FFF, 0x3F80, "just below the tie rounds down"},
      {0xBF808000, 0xBF80, "negative tie to even"},
      {0x7F7FFFFF, 0x7F80, "FLT_MAX rounds up to +inf"},
      {0x7F7F7FFF, 0x7F7F, "below the overflow tie stays finite"},
      {0x7F800000, 0x7F80, "+inf"},
      {0xFF800000, 0xFF80, "-inf"},
      {0x80000000, 0x8000, "-0"},
      {0x00008000, 0x0000, "subnormal tie to even zero"},
      {0x00018000, 0x0002, "subnormal tie to even 2"},
      {0x00010000, 0x0001, "smallest bf16 subnormal is exact"},
      {0x007FFFFF, 0x0080, "largest f32 subnormal rounds to min normal"},
  };
  for (const Case &c : cases) {
    EXPECT_EQ(floatToBFloatBits(bitsToFloat(c.f32)), c.bf16) << c.why;
    EXPECT_EQ(apfloatBF16Bits(bitsToFloat(c.f32)), c.bf16)
        << "reference disagrees: " << c.why;
    EXPECT_EQ(floatToBits(bfloatBitsToFloat(c.bf16)),
              static_cast<uint32_t>(c.bf16) << 16);
  }
  // NaNs stay NaNs with their sign, quiet or signalling (truncating
  // 0x7F800001 would give the infinity 0x7F80).
  for (uint32_t nan : {0x7FC00000u, 0x7F800001u, 0xFF800001u, 0x7FFFFFFFu}) {
    uint16_t b = floatToBFloatBits(bitsToFloat(nan));
    EXPECT_EQ(b & 0x7F80, 0x7F80) << std::hex << nan;
    EXPECT_NE(b & 0x007F, 0) << std::hex << nan;
    EXPECT_EQ(b >> 15, nan >> 31) << std::hex << nan;
  }
}

TEST(EvalRounding, BFloatBitsMatchAPFloatOnRandomPatterns) {
  std::mt19937 rng(1234);
  for (int n = 0; n < 200000; ++n) {
    uint32_t u = rng();
    // Exercise the rounding boundary often: low halves near 0x8000.
    if (n % 2)
      u = (u & 0xFFFF0000u) | (0x7FFEu + (u & 3u));
    float v = bitsToFloat(u);
    if (std::isnan(v))
      continue;
    ASSERT_EQ(floatToBFloatBits(v), apfloatBF16Bits(v)) << std::hex << u;
    ASSERT_EQ(static_cast<double>(roundToKind(ElemKind::BF16, v)),
              bf16Ref(v))
        << std::hex << u;
  }
}

TEST(EvalRounding, HalfBitsOnExactPatterns) {
  struct Case {
    float value;
    uint16_t f16;
    const char *why;
  };
  const Case cases[] = {
      {1.0f, 0x3C00, "1.0"},
      {1.0f + 0x1p-11f, 0x3C00, "1 + 2^-11: a tie, to the even 1.0"},
      {1.0f + 0x3p-11f, 0x3C02, "1 + 3*2^-11: a tie, to the even 1 + 2^-9"},
      {1.0f + 0x1p-11f + 0x1p-20f, 0x3C01, "above the tie rounds up"},
      {-2.0f, 0xC000, "-2"},
      {65504.0f, 0x7BFF, "largest finite f16"},
      {65519.0f, 0x7BFF, "below the overflow tie"},
      {65520.0f, 0x7C00, "the overflow tie rounds to even: +inf"},
      {INFINITY, 0x7C00, "+inf"},
      {-INFINITY, 0xFC00, "-inf"},
      {-0.0f, 0x8000, "-0"},
      {0x1p-14f, 0x0400, "smallest normal"},
      {0x1p-24f, 0x0001, "smallest subnormal"},
      {0x1p-25f, 0x0000, "half the smallest subnormal: tie to even 0"},
      {0x3p-25f, 0x0002, "1.5 smallest subnormals: tie to even 2"},
      {0x1.8p-25f, 0x0001, "0.75 of the smallest subnormal rounds up"},
      {0x1p-26f, 0x0000, "a quarter of it rounds to 0"},
  };
  for (const Case &c : cases) {
    EXPECT_EQ(floatToHalfBits(c.value), c.f16) << c.why;
    // The double reference agrees on the value (zero's sign aside).
    EXPECT_EQ(static_cast<double>(halfBitsToFloat(c.f16)), f16Ref(c.value))
        << c.why;
  }
  EXPECT_EQ(halfBitsToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(halfBitsToFloat(0x03FF), 0x3FFp-24f); // largest subnormal
  EXPECT_EQ(halfBitsToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(halfBitsToFloat(0xFC00), -INFINITY);
  EXPECT_TRUE(std::isnan(halfBitsToFloat(0x7E00)));
  EXPECT_TRUE(std::isnan(halfBitsToFloat(floatToHalfBits(NAN))));
  uint16_t snan = floatToHalfBits(bitsToFloat(0x7F800001));
  EXPECT_EQ(snan & 0x7C00, 0x7C00);
  EXPECT_NE(snan & 0x03FF, 0) << "a NaN must not become an infinity";
}

// The encodings are mwrt/formulas.h's, shared with the runtime; llvm::APFloat
// is the independent reference.
TEST(EvalRounding, HalfBitsMatchAPFloatOnRandomPatterns) {
  std::mt19937 rng(4321);
  for (int n = 0; n < 200000; ++n) {
    uint32_t u = rng();
    float v = bitsToFloat(u);
    llvm::APFloat a(v);
    bool lost = false;
    a.convert(llvm::APFloat::IEEEhalf(), llvm::APFloat::rmNearestTiesToEven,
              &lost);
    auto ref = static_cast<uint16_t>(a.bitcastToAPInt().getZExtValue());
    ASSERT_EQ(floatToHalfBits(v), ref) << std::hex << u;
  }
  for (uint32_t h = 0; h < 0x10000; ++h) {
    llvm::APFloat a(llvm::APFloat::IEEEhalf(), llvm::APInt(16, h));
    bool lost = false;
    a.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven,
              &lost);
    float got = halfBitsToFloat(static_cast<uint16_t>(h));
    if (std::isnan(got))
      continue; // payloads: checked on exact patterns above
    ASSERT_EQ(floatToBits(got), floatToBits(a.convertToFloat())) << h;
  }
}

// f8E4M3FN (the quantized KV cache's) against llvm::APFloat, which
// overflows to NaN where the cache saturates: compare below 464, the
// rounding boundary above the largest finite value 448.
TEST(EvalRounding, F8E4M3BitsMatchAPFloatInRange) {
  std::mt19937 rng(8);
  for (int n = 0; n < 200000; ++n) {
    float v = bitsToFloat(rng());
    if (std::isnan(v) || std::fabs(v) >= 464.0f)
      continue;
    llvm::APFloat a(v);
    bool lost = false;
    a.convert(llvm::APFloat::Float8E4M3FN(),
              llvm::APFloat::rmNearestTiesToEven, &lost);
    auto ref = static_cast<uint8_t>(a.bitcastToAPInt().getZExtValue());
    ASSERT_EQ(mwrt::formulas::floatToF8E4M3Bits(v), ref) << v;
    ASSERT_EQ(roundToKind(ElemKind::F8E4M3FN, v), a.convertToFloat()) << v;
  }
  for (int code = 0; code < 256; ++code) {
    llvm::APFloat a(llvm::APFloat::Float8E4M3FN(), llvm::APInt(8, code));
    float got = mwrt::formulas::f8E4M3BitsToFloat(static_cast<uint8_t>(code));
    if (a.isNaN()) {
      ASSERT_TRUE(std::isnan(got)) << code;
      continue;
    }
    ASSERT_EQ(floatToBits(got), floatToBits(a.convertToFloat())) << code;
  }
  // Past the range the cache saturates (CUDA's __NV_SATFINITE).
  EXPECT_EQ(mwrt::formulas::floatToF8E4M3Bits(1000.0f), 0x7e);
  EXPECT_EQ(roundToKind(ElemKind::F8E4M3FN, -1e9f), -448.0f);
}

TEST(EvalRounding, RoundToKindMatchesReferenceOnRandomValues) {
  std::mt19937 rng(99);
  std::uniform_real_distribution<double> mant(1.0, 2.0);
  std::uniform_int_distribution<int> expo(-30, 17);
  for (int n = 0; n < 100000; ++n) {
    float v = static_cast<float>(std::ldexp(mant(rng), expo(rng)) *
                                 (n % 2 ? -1.0 : 1.0));
    ASSERT_EQ(static_cast<double>(roundToKind(ElemKind::F16, v)), f16Ref(v))
        << llvm::formatv("{0:e}", v).str();
    ASSERT_EQ(static_cast<double>(roundToKind(ElemKind::BF16, v)), bf16Ref(v))
        << llvm::formatv("{0:e}", v).str();
  }
  EXPECT_EQ(roundToKind(ElemKind::F32, 0.1f), 0.1f);
  EXPECT_EQ(roundToKind(ElemKind::BF16, 1.0f + 0x1p-9f), 1.0f);
  EXPECT_EQ(roundToKind(ElemKind::F16, 1.0f + 0x1p-12f), 1.0f);
}

//===----------------------------------------------------------------------===//
// Constants, splats, names, argument checking
//===----------------------------------------------------------------------===//

TEST_F(EvalTest, ConstantAndSplat) {
  func::FuncOp f = parse(R"mlir(
    func.func @f() -> (tensor<2xf32>, tensor<3xbf16>, tensor<2xi32>, tensor<i64>,
                       tensor<2x2xbf16>, tensor<3xi32>, tensor<2xf16>) {
      %a = mw.constant dense<[1.5, -2.0]> : tensor<2xf32>
      %b = mw.constant dense<[1.0, -2.0, 3.5]> : tensor<3xbf16>
      %c = mw.constant dense<[1, -2]> : tensor<2xi32>
      %d = mw.constant dense<7> : tensor<i64>
      %e = mw.splat 0.1 : tensor<2x2xbf16>
      %g = mw.splat -3.0 : tensor<3xi32>
      %h = mw.constant dense<0.1> : tensor<2xf16>
      return %a, %b, %c, %d, %e, %g, %h : tensor<2xf32>, tensor<3xbf16>, tensor<2xi32>, tensor<i64>,
                                          tensor<2x2xbf16>, tensor<3xi32>, tensor<2xf16>
    })mlir");
  SmallVector<Tensor> r = run(f, {});
  ASSERT_EQ(r.size(), 7u);
  expectType(r[0], ElemKind::F32, {2});
  expectExact(r[0], {1.5, -2.0});
  expectType(r[1], ElemKind::BF16, {3});
  expectExact(r[1], {1.0, -2.0, 3.5});
  expectType(r[2], ElemKind::I32, {2});
  expectExact(r[2], {1, -2});
  expectType(r[3], ElemKind::I64, {});
  expectExact(r[3], {7});
  // 0.1 in bf16 is 0x3DCD = 0.10009765625 (0.1 = 0x3DCCCCCD in f32).
  expectType(r[4], ElemKind::BF16, {2, 2});
  expectExact(r[4], {0.10009765625, 0.10009765625, 0.10009765625,
                     0.10009765625});
  expectExact(r[5], {-3, -3, -3});
  // 0.1 in f16 is 0x2E66 = 0.0999755859375.
  expectExact(r[6], {0.0999755859375, 0.0999755859375});

  // A splat's f64 value rounds once to the element type: 1 + 2^-8 + 2^-52
  // is just above the bf16 tie between 1 and 1 + 2^-7, so it rounds up; via
  // f32 (where it becomes exactly the tie 1 + 2^-8) it would round to 1.
  // Likewise 1 + 2^-11 + 2^-52 in f16.
  func::FuncOp g = parse(R"mlir(
    func.func @g() -> (tensor<bf16>, tensor<f16>) {
      %a = mw.splat 1.0039062500000002 : tensor<bf16>
      %b = mw.splat 1.0004882812500002 : tensor<f16>
      return %a, %b : tensor<bf16>, tensor<f16>
    })mlir");
  SmallVector<Tensor> s = run(g, {});
  ASSERT_EQ(s.size(), 2u);
  expectExact(s[0], {1.0 + 0x1p-7});
  expectExact(s[1], {1.0 + 0x1p-10});
}

TEST_F(EvalTest, NamesAndArgumentChecks) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%x: tensor<2xf32> {mw.name = "x"}, %y: tensor<2xf32>)
        -> (tensor<2xf32> {mw.name = "sum"}, tensor<2xf32>) {
      %s = mw.add %x, %y : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      return %s, %x : tensor<2xf32>, tensor<2xf32>
    })mlir");
  EXPECT_EQ(argumentName(f, 0), "x");
  EXPECT_EQ(argumentName(f, 1), "arg1");
  EXPECT_EQ(resultName(f, 0), "sum");
  EXPECT_EQ(resultName(f, 1), "result1");

  SmallVector<Tensor> r = run(f, {f32({2}, {1, 2}), f32({2}, {10, 20})});
  ASSERT_EQ(r.size(), 2u);
  expectExact(r[0], {11, 22});
  expectExact(r[1], {1, 2}); // an argument returned as is

  std::string err = runError(f, {f32({3}, {1, 2, 3}), f32({2}, {1, 2})});
  EXPECT_NE(err.find("argument #0 ('x') has type tensor<3xf32>, expected "
                     "'tensor<2xf32>'"),
            std::string::npos)
      << err;
  err = runError(f, {f32({2}, {1, 2}), i64({2}, {1, 2})});
  EXPECT_NE(err.find("argument #1 ('arg1') has type tensor<2xi64>"),
            std::string::npos)
      << err;
  err = runError(f, {f32({2}, {1, 2})});
  EXPECT_NE(err.find("expected 2 arguments, got 1"), std::string::npos) << err;
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops
//===----------------------------------------------------------------------===//

TEST_F(EvalTest, BinaryBroadcast4x1By8BothDirections) {
  // a[i] = i, b[j] = 10 j: a + b = i + 10 j, b - a = 10 j - i.
  func::FuncOp f = parse(R"mlir(
    func.func @f(%a: tensor<4x1xf32>, %b: tensor<8xf32>)
        -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
      %add = mw.add %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
      %sub = mw.sub %b, %a : (tensor<8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
      %mul = mw.mul %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
      %div = mw.div %b, %a : (tensor<8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
      %max = mw.maximum %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
      return %add, %sub, %mul, %div, %max : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
    })mlir");
  Tensor a = f32({4, 1}, {1, 2, 3, 4});
  Tensor b = f32({8}, {0, 10, 20, 30, 40, 50, 60, 70});
  SmallVector<Tensor> r = run(f, {a, b});
  ASSERT_EQ(r.size(), 5u);
  std::vector<double> add, sub, mul, div, mx;
  for (int i = 1; i <= 4; ++i)
    for (int j = 0; j < 8; ++j) {
      add.push_back(i + 10 * j);
      sub.push_back(10 * j - i);
      mul.push_back(i * 10 * j);
      div.push_back(static_cast<double>(static_cast<float>(10.0f * j / i)));
      mx.push_back(std::max(i, 10 * j));
    }
  expectType(r[0], ElemKind::F32, {4, 8});
  expectExact(r[0], add, "add");
  expectExact(r[1], sub, "sub");
  expectExact(r[2], mul, "mul");
  expectExact(r[3], div, "div");
  expectExact(r[4], mx, "maximum");
}

TEST_F(EvalTest, BinaryBroadcastRank0AndBothOperands) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%s: tensor<f32>, %a: tensor<1x3xf32>, %b: tensor<2x1xf32>)
        -> (tensor<1x3xf32>, tensor<2x3xf32>, tensor<f32>) {
      %0 = mw.mul %s, %a : (tensor<f32>, tensor<1x3xf32>) -> tensor<1x3xf32>
      %1 = mw.sub %a, %b : (tensor<1x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
      %2 = mw.add %s, %s : (tensor<f32>, tensor<f32>) -> tensor<f32>
      return %0, %1, %2 : tensor<1x3xf32>, tensor<2x3xf32>, tensor<f32>
    })mlir");
  SmallVector<Tensor> r = run(f, {f32({}, {2}), f32({1, 3}, {1, 2, 3}),
                                  f32({2, 1}, {10, 20})});
  ASSERT_EQ(r.size(), 3u);
  expectExact(r[0], {2, 4, 6});
  // a[j] - b[i]: [[1-10, 2-10, 3-10], [1-20, 2-20, 3-20]].
  expectType(r[1], ElemKind::F32, {2, 3});
  expectExact(r[1], {-9, -8, -7, -19, -18, -17});
  expectType(r[2], ElemKind::F32, {});
  expectExact(r[2], {4});
}

TEST_F(EvalTest, BinaryFloatSpecialValues) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
      %d = mw.div %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %m = mw.maximum %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %d, %m : tensor<4xf32>, tensor<4xf32>
    })mlir");
  Tensor a = f32({4}, {1, -1, 0, 2});
  Tensor b = f32({4}, {0, 0, 0, 3});
  b.f[3] = NAN;
  SmallVector<Tensor> r = run(f, {a, b});
  ASSERT_EQ(r.size(), 2u);
  // Float division by zero is IEEE: +-inf and NaN, not an error.
  EXPECT_EQ(r[0].f[0], INFINITY);
  EXPECT_EQ(r[0].f[1], -INFINITY);
  EXPECT_TRUE(std::isnan(r[0].f[2]));
  // maximum propagates NaN (std::max alone would not, in one order).
  EXPECT_EQ(r[1].f[0], 1.0f);
  EXPECT_TRUE(std::isnan(r[1].f[3]));
}

TEST_F(EvalTest, IntegerArithmetic) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%a: tensor<6xi32>, %b: tensor<6xi32>)
        -> (tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>) {
      %add = mw.add %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
      %sub = mw.sub %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
      %mul = mw.mul %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
      %div = mw.div %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
      %max = mw.maximum %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
      %neg = mw.neg %a : tensor<6xi32>
      return %add, %sub, %mul, %div, %max, %neg : tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>
    })mlir");
  const double kMin = -2147483648.0, kMax = 2147483647.0;
  Tensor a = i32({6}, {7, -7, 7, -7, kMax, kMin});
  Tensor b = i32({6}, {2, 2, -2, -2, 1, -1});
  SmallVector<Tensor> r = run(f, {a, b});
  ASSERT_EQ(r.size(), 6u);
  // Wrapping at 32 bits: INT32_MAX + 1 = INT32_MIN,
  // INT32_MIN - (-1) = -INT32_MAX.
  expectExact(r[0], {9, -5, 5, -9, kMin, kMax}, "add");
  expectExact(r[1], {5, -9, 9, -5, kMax - 1, kMin + 1}, "sub");
  // INT32_MIN * -1 wraps to INT32_MIN.
  expectExact(r[2], {14, -14, -14, 14, kMax, kMin}, "mul");
  // Division truncates toward zero: 7/2 = 3, -7/2 = -3, 7/-2 = -3,
  // -7/-2 = 3; INT32_MIN / -1 wraps to INT32_MIN instead of trapping.
  expectExact(r[3], {3, -3, -3, 3, kMax, kMin}, "div");
  expectExact(r[4], {7, 2, 7, -2, kMax, -1}, "maximum");
  expectExact(r[5], {-7, 7, -7, 7, -kMax, kMin}, "neg");

  func::FuncOp g = parse(R"mlir(
    func.func @g(%a: tensor<2xi64>, %b: tensor<2xi64>) -> tensor<2xi64> {
      %r = mw.div %a, %b : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
      return %r : tensor<2xi64>
    })mlir");
  expectExact(run1(g, {i64({2}, {-9, 9}), i64({2}, {4, -4})}), {-2, -2});
  std::string err = runError(g, {i64({2}, {1, 2}), i64({2}, {1, 0})});
  EXPECT_NE(err.find("integer division by zero"), std::string::npos) << err;
}

//===----------------------------------------------------------------------===//
// Elementwise unary ops and cast
//===----------------------------------------------------------------------===//

TEST_F(EvalTest, ClampHandChecked) {
  func::FuncOp f = unaryFunc(
      "%x: tensor<6xf32>",
      "%r = mw.clamp %x {min = -1.0, max = 0.75} : tensor<6xf32>",
      "tensor<6xf32>");
  Tensor y = run1(f, {f32({6}, {-3, -1, 0, 0.5, 0.75, 2})});
  expectExact(y, {-1, -1, 0, 0.5, 0.75, 0.75});
  // min > max: max everywhere (torch.clamp); bf16 results are rounded.
  func::FuncOp g = unaryFunc(
      "%x: tensor<2xbf16>",
      "%r = mw.clamp %x {min = 2.0, max = 0.1} : tensor<2xbf16>",
      "tensor<2xbf16>");
  Tensor z = run1(g, {Tensor::zeros(ElemKind::BF16, {2})});
  EXPECT_EQ(z.f[0], roundToKind(ElemKind::BF16, 0.1f));
  EXPECT_EQ(z.f[1], z.f[0]);
}

TEST_F(EvalTest, UnaryOpsAgainstDoubleFormulas) {
  struct Case {
    const char *op;
    std::function<double(double)> ref;
    std::initializer_list<double> points;
  };
  const std::initializer_list<double> anyPoints = {-3.0, -1.0, -0.5, 0.0,
                                                   0.25, 1.0, 2.5};
  const std::initializer_list<double> positive = {0.25, 0.5, 1.0, 2.0, 4.0,
                                                  9.0, 100.0};
  const Case cases[] = {
      {"neg", [](double x) { return -x; }, anyPoints},
      {"exp", [](double x) { return std::exp(x); }, anyPoints},
      {"log", [](double x) { return std::log(x); }, positive},
      {"tanh", [](double x) { return std::tanh(x); }, anyPoints},
      {"sqrt", [](double x) { return std::sqrt(x); }, positive},
      {"rsqrt", [](double x) { return 1.0 / std::sqrt(x); }, positive},
      {"reciprocal", [](double x) { return 1.0 / x; }, anyPoints},
      {"relu", [](double x) { return x > 0 ? x : 0.0; }, anyPoints},
      {"sigmoid", sigmoidRef, anyPoints},
      {"silu", [](double x) { return x * sigmoidRef(x); }, anyPoints},
      {"gelu", geluErfRef, anyPoints},
  };
  for (const Case &c : cases) {
    func::FuncOp f = unaryFunc(
        "%x: tensor<7xf32>",
        llvm::formatv("%r = mw.{0} %x : tensor<7xf32>", c.op).str(),
        "tensor<7xf32>");
    Tensor x = f32({7}, c.points);
    Tensor y = run1(f, {x});
    std::vector<double> expected;
    for (double p : c.points)
      expected.push_back(c.ref(p));
    // f32 libm results: a few ulps. reciprocal(0) is +inf, compared exactly.
    expectNear(y, expected, 1e-7, 4e-7, c.op);
  }
  // Hand-checked exact points: sqrt(0.25) = 0.5, rsqrt(4) = 0.5, log(1) = 0,
  // relu(-0.5) = 0, sigmoid(0) = 0.5, gelu(0) = 0.
  func::FuncOp f = parse(R"mlir(
    func.func @f(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
      %a = mw.sqrt %x : tensor<3xf32>
      %b = mw.rsqrt %x : tensor<3xf32>
      %c = mw.log %x : tensor<3xf32>
      return %a, %b, %c : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
    })mlir");
  SmallVector<Tensor> r = run(f, {f32({3}, {0.25, 4, 1})});
  ASSERT_EQ(r.size(), 3u);
  expectExact(r[0], {0.5, 2, 1});
  expectExact(r[1], {2, 0.5, 1});
  EXPECT_EQ(r[2].f[2], 0.0f);
}

TEST_F(EvalTest, GeluBothForms) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%x: tensor<9xf32>) -> (tensor<9xf32>, tensor<9xf32>, tensor<9xf32>) {
      %e = mw.gelu %x : tensor<9xf32>
      %e2 = mw.gelu %x {approximate = #mw.gelu_approximation<erf>} : tensor<9xf32>
      %t = mw.gelu %x {approximate = #mw.gelu_approximation<tanh>} : tensor<9xf32>
      return %e, %e2, %t : tensor<9xf32>, tensor<9xf32>, tensor<9xf32>
    })mlir");
  std::initializer_list<double> pts = {-4, -2, -1, -0.5, 0, 0.5, 1, 2, 4};
  SmallVector<Tensor> r = run(f, {f32({9}, pts)});
  ASSERT_EQ(r.size(), 3u);
  std::vector<double> erfRef, tanhRef;
  for (double x : pts) {
    erfRef.push_back(geluErfRef(x));
    tanhRef.push_back(geluTanhRef(x));
  }
  expectNear(r[0], erfRef, 1e-6, 1e-6, "gelu erf");
  expectNear(r[1], erfRef, 1e-6, 1e-6, "gelu explicit erf");
  expectNear(r[2], tanhRef, 1e-6, 1e-6, "gelu tanh");
  // The two forms differ (by ~1e-4 at x = 2): the attribute is honoured.
  EXPECT_GT(std::fabs(r[0].f[7] - r[2].f[7]), 1e-5);
}

TEST_F(EvalTest, CastRoundingAndTruncation) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%x: tensor<5xf32>) -> (tensor<5xbf16>, tensor<5xf32>, tensor<5xf16>, tensor<5xi32>, tensor<5xi64>) {
      %b = mw.cast %x : tensor<5xf32> to tensor<5xbf16>
      %bb = mw.cast %b : tensor<5xbf16> to tensor<5xf32>
      %h = mw.cast %x : tensor<5xf32> to tensor<5xf16>
      %i = mw.cast %x : tensor<5xf32> to tensor<5xi32>
      %l = mw.cast %x : tensor<5xf32> to tensor<5xi64>
      return %b, %bb, %h, %i, %l : tensor<5xbf16>, tensor<5xf32>, tensor<5xf16>, tensor<5xi32>, tensor<5xi64>
    })mlir");
  Tensor x = Tensor::zeros(ElemKind::F32, {5});
  x.f = {bitsToFloat(0x3F808000), bitsToFloat(0x3F818000),
         bitsToFloat(0x3F808001), -2.75f, 1e9f};
  SmallVector<Tensor> r = run(f, {x});
  ASSERT_EQ(r.size(), 5u);
  expectType(r[0], ElemKind::BF16, {5});
  // 1 + 2^-8 ties to 1; 1 + 3*2^-8 ties to 1 + 2^-6; above the tie rounds
  // up to 1 + 2^-7; 1e9 = 0x4E6E6B28 rounds to 0x4E6E = 998244352.
  std::vector<double> bf = {1.0, 1.0 + 0x1p-6, 1.0 + 0x1p-7, -2.75,
                            998244352.0};
  expectExact(r[0], bf, "to bf16");
  expectExact(r[1], bf, "bf16 back to f32 is exact");
  // f16: 1 + 2^-8 and the others are exact at 10 mantissa bits except 1e9,
  // which overflows to +inf.
  expectExact(r[2], {1.0 + 0x1p-8, 1.0 + 0x3p-8, 1.0 + 0x1p-8, -2.75,
                     INFINITY},
              "to f16");
  // Float to integer truncates toward zero.
  expectExact(r[3], {1, 1, 1, -2, 1e9}, "to i32");
  expectExact(r[4], {1, 1, 1, -2, 1e9}, "to i64");

  func::FuncOp toInt = unaryFunc(
      "%x: tensor<4xf32>",
      "%r = mw.cast %x : tensor<4xf32> to tensor<4xi32>", "tensor<4xi32>");
  expectExact(run1(toInt, {f32({4}, {0.5, -0.5, -0.99, 2147483520.0})}),
              {0, 0, 0, 2147483520.0});
  for (float bad : {NAN, INFINITY, -INFINITY, 2147483648.0f, -2147483904.0f}) {
    Tensor t = f32({4}, {0, 1, 2, 3});
    t.f[2] = bad;
    std::string err = runError(toInt, {t});
    EXPECT_NE(err.find("cannot cast"), std::string::npos) << bad << ": " << err;
    EXPECT_NE(err.find("to i32"), std::string::npos) << err;
  }
  func::FuncOp toI64 = unaryFunc(
      "%x: tensor<2xf32>",
      "%r = mw.cast %x : tensor<2xf32> to tensor<2xi64>", "tensor<2xi64>");
  // -2^63 fits, 2^63 does not.
  expectExact(run1(toI64, {f32({2}, {-0x1p63, 0x1p62})}), {-0x1p63, 0x1p62});
  runError(toI64, {f32({2}, {0x1p63, 0})});
}

TEST_F(EvalTest, CastIntegers) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%i: tensor<4xi32>, %l: tensor<3xi64>)
        -> (tensor<4xf32>, tensor<4xbf16>, tensor<4xf16>, tensor<4xi64>, tensor<3xi32>, tensor<3xf32>, tensor<3xbf16>) {
      %a = mw.cast %i : tensor<4xi32> to tensor<4xf32>
      %b = mw.cast %i : tensor<4xi32> to tensor<4xbf16>
      %c = mw.cast %i : tensor<4xi32> to tensor<4xf16>
      %d = mw.cast %i : tensor<4xi32> to tensor<4xi64>
      %e = mw.cast %l : tensor<3xi64> to tensor<3xi32>
      %g = mw.cast %l : tensor<3xi64> to tensor<3xf32>
      %h = mw.cast %l : tensor<3xi64> to tensor<3xbf16>
      return %a, %b, %c, %d, %e, %g, %h : tensor<4xf32>, tensor<4xbf16>, tensor<4xf16>, tensor<4xi64>, tensor<3xi32>, tensor<3xf32>, tensor<3xbf16>
    })mlir");
  // 2^24 + 1 ties to 2^24 in f32; 2^25 + 2^17 + 1 is just above the bf16
  // tie between 2^25 and 2^25 + 2^18, so it rounds up. Rounding it to f32
  // first (to 2^25 + 2^17, exactly the tie) and then to bf16 would give 2^25:
  // integer to float must round once.
  const double big = 0x1p25 + 0x1p17 + 1;
  Tensor i = i32({4}, {0x1p24 + 1, big, -5, 2049});
  // 2^32 + 1 wraps to 1 in i32 and rounds to 2^32 in f32 (ulp 2^9).
  Tensor l = i64({3}, {0x1p32 + 1, -3, 0x1p40 + 0x1p32 + 1});
  SmallVector<Tensor> r = run(f, {i, l});
  ASSERT_EQ(r.size(), 7u);
  expectExact(r[0], {0x1p24, big - 1, -5, 2049}, "i32 to f32");
  expectExact(r[1], {0x1p24, 0x1p25 + 0x1p18, -5, 2048}, "i32 to bf16");
  // f16: 2^24 overflows (max 65504); 2049 ties to 2048.
  expectExact(r[2], {INFINITY, INFINITY, -5, 2048}, "i32 to f16");
  expectExact(r[3], {0x1p24 + 1, big, -5, 2049}, "i32 to i64");
  expectExact(r[4], {1, -3, 1}, "i64 to i32 wraps");
  expectExact(r[5], {0x1p32, -3, 0x1p40 + 0x1p32}, "i64 to f32");
  // 2^40 + 2^32 + 1 is above the bf16 tie at 2^40 + 2^32 (ulp 2^33).
  expectExact(r[6], {0x1p32, -3, 0x1p40 + 0x1p33}, "i64 to bf16");
}

//===----------------------------------------------------------------------===//
// 16-bit types: rounding after every op
//===----------------------------------------------------------------------===//

TEST_F(EvalTest, HalfTypesRoundAfterEveryOp) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%one: tensor<bf16>, %eps: tensor<bf16>, %v: tensor<4xbf16>, %ones: tensor<4x1xbf16>,
                 %h1: tensor<f16>, %heps: tensor<f16>)
        -> (tensor<bf16>, tensor<bf16>, tensor<bf16>, tensor<1x1xbf16>, tensor<f16>) {
      %a = mw.add %one, %eps : (tensor<bf16>, tensor<bf16>) -> tensor<bf16>
      %b = mw.add %a, %eps : (tensor<bf16>, tensor<bf16>) -> tensor<bf16>
      %c = mw.add %b, %eps : (tensor<bf16>, tensor<bf16>) -> tensor<bf16>
      %s = mw.reduce_sum %v axes = [0] : tensor<4xbf16> -> tensor<bf16>
      %row = mw.reshape %v : tensor<4xbf16> -> tensor<1x4xbf16>
      %m = mw.matmul %row, %ones : (tensor<1x4xbf16>, tensor<4x1xbf16>) -> tensor<1x1xbf16>
      %h = mw.add %h1, %heps : (tensor<f16>, tensor<f16>) -> tensor<f16>
      return %a, %c, %s, %m, %h : tensor<bf16>, tensor<bf16>, tensor<bf16>, tensor<1x1xbf16>, tensor<f16>
    })mlir");
  Tensor one = make(ElemKind::BF16, {}, {1.0});
  Tensor eps = make(ElemKind::BF16, {}, {0x1p-9});
  Tensor v = make(ElemKind::BF16, {4}, {1.0, 0x1p-9, 0x1p-9, 0x1p-9});
  Tensor ones = make(ElemKind::BF16, {4, 1}, {1, 1, 1, 1});
  Tensor h1 = make(ElemKind::F16, {}, {1.0});
  Tensor heps = make(ElemKind::F16, {}, {0x1p-12});
  SmallVector<Tensor> r = run(f, {one, eps, v, ones, h1, heps});
  ASSERT_EQ(r.size(), 5u);
  // bf16 has 7 mantissa bits: 1 + 2^-9 rounds to 1, after each add, so
  // three adds of 2^-9 still give 1.
  expectExact(r[0], {1.0}, "1 + 2^-9 in bf16");
  expectExact(r[1], {1.0}, "three rounded adds");
  // A reduction or a matmul accumulates in f32 (1 + 3*2^-9 exactly) and
  // rounds once: 3*2^-9 = 0.75 ulp, so up to 1 + 2^-7.
  expectExact(r[2], {1.0 + 0x1p-7}, "bf16 reduce_sum rounds once");
  expectType(r[3], ElemKind::BF16, {1, 1});
  expectExact(r[3], {1.0 + 0x1p-7}, "bf16 matmul rounds once");
  // f16 has 10 mantissa bits: 1 + 2^-12 rounds to 1.
  expectExact(r[4], {1.0}, "1 + 2^-12 in f16");
}

TEST_F(EvalTest, HalfTypesUnaryAndSoftmaxRound) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%x: tensor<3xbf16>, %h: tensor<3xf16>) -> (tensor<3xbf16>, tensor<3xf16>, tensor<3xbf16>) {
      %e = mw.exp %x : tensor<3xbf16>
      %t = mw.tanh %h : tensor<3xf16>
      %s = mw.softmax %x axis = 0 : tensor<3xbf16>
      return %e, %t, %s : tensor<3xbf16>, tensor<3xf16>, tensor<3xbf16>
    })mlir");
  Tensor x = make(ElemKind::BF16, {3}, {0.5, 1.0, -1.0});
  Tensor h = make(ElemKind::F16, {3}, {0.5, 1.0, -1.0});
  SmallVector<Tensor> r = run(f, {x, h});
  ASSERT_EQ(r.size(), 3u);
  double denom = std::exp(0.5) + std::exp(1.0) + std::exp(-1.0);
  for (int n = 0; n < 3; ++n) {
    double xv = x.f[n];
    // The f32 result rounded once to the type: equal to the correctly
    // rounded double unless the f32 result straddles a 16-bit tie, which
    // none of these points does.
    EXPECT_EQ(static_cast<double>(r[0].f[n]), bf16Ref(std::exp(xv))) << n;
    EXPECT_EQ(static_cast<double>(r[1].f[n]), f16Ref(std::tanh(xv))) << n;
    EXPECT_EQ(static_cast<double>(r[2].f[n]), bf16Ref(std::exp(xv) / denom))
        << n;
  }
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

/// result[b..., m, n] = sum_k A[b..., m, k] B[b..., k, n] in double, with
/// NumPy batch broadcasting, reading the operands through explicit index
/// arithmetic.
std::vector<double> matmulRef(const Tensor &a, const Tensor &b, bool ta,
                              bool tb, ArrayRef<int64_t> outShape) {
  size_t ar = a.shape.size(), br = b.shape.size(), orank = outShape.size();
  int64_t m = outShape[orank - 2], n = outShape[orank - 1];
  int64_t k = ta ? a.shape[ar - 2] : a.shape[ar - 1];
  ArrayRef<int64_t> batch = outShape.drop_back(2);
  int64_t batches = 1;
  for (int64_t d : batch)
    batches *= d;
  SmallVector<int64_t> as = rowMajorStrides(a.shape),
                       bs = rowMajorStrides(b.shape);
  std::vector<double> out;
  for (int64_t bi = 0; bi < batches; ++bi) {
    SmallVector<int64_t> idx = unflatten(bi, batch);
    // Offset of this batch in an operand: trailing-aligned, size-1 dims fixed.
    auto batchOffset = [&](const Tensor &t, ArrayRef<int64_t> strides,
                           size_t rank) {
      int64_t off = 0;
      size_t tb = rank - 2, lead = batch.size() - tb;
      for (size_t d = 0; d < tb; ++d)
        if (t.shape[d] != 1)
          off += idx[lead + d] * strides[d];
      return off;
    };
    int64_t ao = batchOffset(a, as, ar), bo = batchOffset(b, bs, br);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          double av = ta ? a.f[ao + p * as[ar - 2] + i * as[ar - 1]]
                         : a.f[ao + i * as[ar - 2] + p * as[ar - 1]];
          double bv = tb ? b.f[bo + j * bs[br - 2] + p * bs[br - 1]]
                         : b.f[bo + p * bs[br - 2] + j * bs[br - 1]];
          acc += av * bv;
        }
        out.push_back(acc);
      }
  }
  return out;
}

TEST_F(EvalTest, MatmulPlainAndTransposed) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>, %at: tensor<3x2xf32>, %bt: tensor<2x3xf32>)
        -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
      %0 = mw.matmul %a, %b : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
      %1 = mw.matmul %at, %b {transpose_lhs} : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
      %2 = mw.matmul %a, %bt {transpose_rhs} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2xf32>
      %3 = mw.matmul %at, %bt {transpose_lhs, transpose_rhs} : (tensor<3x2xf32>, tensor<2x3xf32>) -> tensor<2x2xf32>
      return %0, %1, %2, %3 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
    })mlir");
  // A = [[1, 2, 3], [4, 5, 6]], B = [[7, 8], [9, 10], [11, 12]]:
  // A B = [[1*7 + 2*9 + 3*11, 1*8 + 2*10 + 3*12], [4*7 + 5*9 + 6*11, ...]]
  //     = [[58, 64], [139, 154]]. The other operands hold A^T and B^T, so
  // every variant gives the same product.
  Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = f32({3, 2}, {7, 8, 9, 10, 11, 12});
  Tensor at = f32({3, 2}, {1, 4, 2, 5, 3, 6});
  Tensor bt = f32({2, 3}, {7, 9, 11, 8, 10, 12});
  SmallVector<Tensor> r = run(f, {a, b, at, bt});
  ASSERT_EQ(r.size(), 4u);
  for (int n = 0; n < 4; ++n)
    expectExact(r[n], {58, 64, 139, 154}, "variant " + std::to_string(n));
}

TEST_F(EvalTest, MatmulBatchedBroadcastAgainstDouble) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%a: tensor<2x1x3x4xf32>, %b: tensor<3x4x5xf32>, %c: tensor<5x3xf32>, %d: tensor<2x4x5xf32>)
        -> (tensor<2x3x3x5xf32>, tensor<2x3x3x3xf32>, tensor<2x5x5xf32>) {
      %0 = mw.matmul %a, %b : (tensor<2x1x3x4xf32>, tensor<3x4x5xf32>) -> tensor<2x3x3x5xf32>
      %1 = mw.matmul %0, %c : (tensor<2x3x3x5xf32>, tensor<5x3xf32>) -> tensor<2x3x3x3xf32>
      %2 = mw.matmul %d, %d {transpose_lhs} : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x5x5xf32>
      return %0, %1, %2 : tensor<2x3x3x5xf32>, tensor<2x3x3x3xf32>, tensor<2x5x5xf32>
    })mlir");
  std::mt19937 rng(7);
  Tensor a = random(ElemKind::F32, {2, 1, 3, 4}, rng);
  Tensor b = random(ElemKind::F32, {3, 4, 5}, rng);
  Tensor c = random(ElemKind::F32, {5, 3}, rng);
  Tensor d = random(ElemKind::F32, {2, 4, 5}, rng);
  SmallVector<Tensor> r = run(f, {a, b, c, d});
  ASSERT_EQ(r.size(), 3u);
  expectType(r[0], ElemKind::F32, {2, 3, 3, 5});
  // f32 accumulation of 4-5 products of magnitude <= 1.
  expectNear(r[0], matmulRef(a, b, false, false, {2, 3, 3, 5}), 1e-6, 1e-6);
  expectNear(r[1], matmulRef(r[0], c, false, false, {2, 3, 3, 3}), 1e-6,
             1e-6);
  expectNear(r[2], matmulRef(d, d, true, false, {2, 5, 5}), 1e-6, 1e-6);
}

TEST_F(EvalTest, MatmulRhsBatchBroadcastAndBothTransposes) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%a: tensor<3x2xf32>, %b: tensor<2x1x4x3xf32>) -> tensor<2x1x2x4xf32> {
      %r = mw.matmul %a, %b {transpose_lhs, transpose_rhs} : (tensor<3x2xf32>, tensor<2x1x4x3xf32>) -> tensor<2x1x2x4xf32>
      return %r : tensor<2x1x2x4xf32>
    })mlir");
  std::mt19937 rng(8);
  Tensor a = random(ElemKind::F32, {3, 2}, rng);
  Tensor b = random(ElemKind::F32, {2, 1, 4, 3}, rng);
  expectNear(run1(f, {a, b}), matmulRef(a, b, true, true, {2, 1, 2, 4}), 1e-6,
             1e-6);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// Reduction of `in` over `axes` in double, by visiting each input element's
/// multi-index and dropping the reduced coordinates. kind: 0 sum, 1 max,
/// 2 mean.
std::vector<double> reduceRef(const Tensor &in, ArrayRef<int64_t> axes,
                              int kind) {
  SmallVector<int64_t> outShape;
  for (size_t d = 0; d < in.shape.size(); ++d)
    if (!llvm::is_contained(axes, static_cast<int64_t>(d)))
      outShape.push_back(in.shape[d]);
  int64_t outCount = 1, group = in.numElements();
  for (int64_t s : outShape)
    outCount *= s;
  group /= outCount;
  std::vector<double> out(outCount, kind == 1 ? -INFINITY : 0.0);
  SmallVector<int64_t> os = rowMajorStrides(outShape);
  for (int64_t n = 0; n < in.numElements(); ++n) {
    SmallVector<int64_t> idx = unflatten(n, in.shape);
    int64_t o = 0, k = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      if (!llvm::is_contained(axes, static_cast<int64_t>(d)))
        o += idx[d] * os[k++];
    out[o] = kind == 1 ? std::max(out[o], in.at(n)) : out[o] + in.at(n);
  }
  if (kind == 2)
    for (double &x : out)
      x /= static_cast<double>(group);
  return out;
}

TEST_F(EvalTest, ReduceHandComputed) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%x: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<1x3xf32>, tensor<f32>, tensor<2x1xf32>, tensor<3xf32>) {
      %0 = mw.reduce_sum %x axes = [1] : tensor<2x3xf32> -> tensor<2xf32>
      %1 = mw.reduce_max %x axes = [0] {keepdims} : tensor<2x3xf32> -> tensor<1x3xf32>
      %2 = mw.reduce_mean %x axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
      %3 = mw.reduce_mean %x axes = [1] {keepdims} : tensor<2x3xf32> -> tensor<2x1xf32>
      %4 = mw.reduce_sum %x axes = [0] : tensor<2x3xf32> -> tensor<3xf32>
      return %0, %1, %2, %3, %4 : tensor<2xf32>, tensor<1x3xf32>, tensor<f32>, tensor<2x1xf32>, tensor<3xf32>
    })mlir");
  // x = [[1, -2, 4], [3, 5, -6]]
  SmallVector<Tensor> r = run(f, {f32({2, 3}, {1, -2, 4, 3, 5, -6})});
  ASSERT_EQ(r.size(), 5u);
  expectType(r[0], ElemKind::F32, {2});
  expectExact(r[0], {3, 2});       // 1 - 2 + 4, 3 + 5 - 6
  expectType(r[1], ElemKind::F32, {1, 3});
  expectExact(r[1], {3, 5, 4});    // column maxima
  expectType(r[2], ElemKind::F32, {});
  expectExact(r[2], {5.0f / 6.0f}); // (3 + 2) / 6, one f32 division
  expectType(r[3], ElemKind::F32, {2, 1});
  expectExact(r[3], {1, 2.0f / 3.0f}); // 3 / 3, 2 / 3
  expectExact(r[4], {4, 3, -2});   // column sums
}

TEST_F(EvalTest, ReduceEveryAxisAndSeveral) {
  // x[i][j][k] = 100 i + 10 j + k - 50: small integers, so sums are exact.
  Tensor x = Tensor::zeros(ElemKind::F32, {2, 3, 4});
  for (int64_t n = 0; n < 24; ++n) {
    SmallVector<int64_t> idx = unflatten(n, x.shape);
    x.f[n] = 100 * idx[0] + 10 * idx[1] + idx[2] - 50;
  }
  const SmallVector<SmallVector<int64_t>> axesList = {
      {0}, {1}, {2}, {0, 1}, {0, 2}, {1, 2}, {0, 1, 2}};
  const char *ops[] = {"reduce_sum", "reduce_max", "reduce_mean"};
  for (int kind = 0; kind < 3; ++kind)
    for (const SmallVector<int64_t> &axes : axesList)
      for (bool keep : {false, true}) {
        SmallVector<int64_t> shape;
        for (int64_t d = 0; d < 3; ++d) {
          bool reduced = llvm::is_contained(axes, d);
          if (!reduced)
            shape.push_back(x.shape[d]);
          else if (keep)
            shape.push_back(1);
        }
        std::string type = "tensor<";
        for (int64_t s : shape)
          type += std::to_string(s) + "x";
        type += "f32>";
        std::string axesStr;
        for (int64_t a : axes)
          axesStr += (axesStr.empty() ? "" : ", ") + std::to_string(a);
        std::string what = llvm::formatv("{0} axes=[{1}]{2}", ops[kind],
                                         axesStr, keep ? " keepdims" : "");
        func::FuncOp f = unaryFunc(
            "%x: tensor<2x3x4xf32>",
            llvm::formatv("%r = mw.{0} %x axes = [{1}] {2} : "
                          "tensor<2x3x4xf32> -> {3}",
                          ops[kind], axesStr, keep ? "{keepdims}" : "", type)
                .str(),
            type);
        Tensor r = run1(f, {x});
        expectType(r, ElemKind::F32, shape);
        // Exact for sum and max; a mean is one f32 division off.
        expectNear(r, reduceRef(x, axes, kind), 0, kind == 2 ? 1e-6 : 0,
                   what);
      }
}

TEST_F(EvalTest, ReduceIntegers) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%x: tensor<2x3xi32>, %y: tensor<2x2xi64>) -> (tensor<2xi32>, tensor<3xi32>, tensor<1x2xi64>) {
      %0 = mw.reduce_sum %x axes = [1] : tensor<2x3xi32> -> tensor<2xi32>
      %1 = mw.reduce_max %x axes = [0] : tensor<2x3xi32> -> tensor<3xi32>
      %2 = mw.reduce_max %y axes = [0] {keepdims} : tensor<2x2xi64> -> tensor<1x2xi64>
      return %0, %1, %2 : tensor<2xi32>, tensor<3xi32>, tensor<1x2xi64>
    })mlir");
  const double kMax = 2147483647.0;
  SmallVector<Tensor> r =
      run(f, {i32({2, 3}, {kMax, 1, 0, -4, -5, -6}),
              i64({2, 2}, {-0x1p40, -7, -0x1p41, -9})});
  ASSERT_EQ(r.size(), 3u);
  // INT32_MAX + 1 wraps to INT32_MIN; -4 - 5 - 6 = -15.
  expectExact(r[0], {-2147483648.0, -15});
  expectExact(r[1], {kMax, 1, 0});
  expectExact(r[2], {-0x1p40, -7});
}

//===----------------------------------------------------------------------===//
// Softmax and log-softmax
//===----------------------------------------------------------------------===//

/// (log-)softmax of `in` along `axis` in double.
std::vector<double> softmaxRef(const Tensor &in, int64_t axis, bool log) {
  std::vector<double> out(in.numElements());
  SmallVector<int64_t> st = rowMajorStrides(in.shape);
  for (int64_t n = 0; n < in.numElements(); ++n) {
    SmallVector<int64_t> idx = unflatten(n, in.shape);
    int64_t base = n - idx[axis] * st[axis];
    double sum = 0;
    for (int64_t j = 0; j < in.shape[axis]; ++j)
      sum += std::exp(in.at(base + j * st[axis]));
    out[n] = log ? in.at(n) - std::log(sum) : std::exp(in.at(n)) / sum;
  }
  return out;
}

TEST_F(EvalTest, SoftmaxHandComputed) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
      %s = mw.softmax %x axis = 1 : tensor<2x2xf32>
      %l = mw.log_softmax %x axis = 1 : tensor<2x2xf32>
      return %s, %l : tensor<2x2xf32>, tensor<2x2xf32>
    })mlir");
  // Row 0 = [0, ln 3]: exp = [1, 3], softmax = [1/4, 3/4].
  // Row 1 = [1000, 1000]: naive exp overflows; stable softmax = [1/2, 1/2],
  // log_softmax = -ln 2.
  SmallVector<Tensor> r = run(f, {f32({2, 2}, {0, std::log(3.0), 1000, 1000})});
  ASSERT_EQ(r.size(), 2u);
  expectNear(r[0], {0.25, 0.75, 0.5, 0.5}, 1e-7);
  expectNear(r[1], {std::log(0.25), std::log(0.75), -std::log(2.0),
                    -std::log(2.0)},
             1e-6);
}

TEST_F(EvalTest, SoftmaxOnEachAxis) {
  std::mt19937 rng(3);
  Tensor x = random(ElemKind::F32, {2, 3, 4}, rng, -3, 3);
  for (int64_t axis = 0; axis < 3; ++axis)
    for (bool log : {false, true}) {
      const char *op = log ? "log_softmax" : "softmax";
      func::FuncOp f = unaryFunc(
          "%x: tensor<2x3x4xf32>",
          llvm::formatv("%r = mw.{0} %x axis = {1} : tensor<2x3x4xf32>", op,
                        axis)
              .str(),
          "tensor<2x3x4xf32>");
      expectNear(run1(f, {x}), softmaxRef(x, axis, log), 1e-6, 1e-6,
                 llvm::formatv("{0} axis {1}", op, axis).str());
    }
}

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

TEST_F(EvalTest, LayerNormHandComputed) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%x: tensor<2x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>)
        -> (tensor<2x4xf32>, tensor<2xf32>, tensor<2xf32>) {
      %y, %mean, %rstd = mw.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f64}
          : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2xf32>, tensor<2xf32>)
      return %y, %mean, %rstd : tensor<2x4xf32>, tensor<2xf32>, tensor<2xf32>
    })mlir");
  // Row 0 = [1, 2, 3, 4]: mean 2.5, biased variance (2.25 + 0.25 + 0.25 +
  // 2.25) / 4 = 1.25, rstd = 1/sqrt(1.25 + 1e-5). Row 1 is constant: variance
  // 0, rstd = 1/sqrt(1e-5) ~ 316.2, y = beta.
  Tensor x = f32({2, 4}, {1, 2, 3, 4, 2, 2, 2, 2});
  Tensor g = f32({4}, {1, 2, 0.5, -1});
  Tensor b = f32({4}, {0, 0.5, 1, -1});
  SmallVector<Tensor> r = run(f, {x, g, b});
  ASSERT_EQ(r.size(), 3u);
  double rs0 = 1.0 / std::sqrt(1.25 + 1e-5), rs1 = 1.0 / std::sqrt(1e-5);
  expectNear(r[0],
             {-1.5 * rs0 * 1 + 0, -0.5 * rs0 * 2 + 0.5, 0.5 * rs0 * 0.5 + 1,
              1.5 * rs0 * -1 - 1, 0, 0.5, 1, -1},
             1e-6, 1e-6);
  expectType(r[1], ElemKind::F32, {2});
  expectExact(r[1], {2.5, 2});
  expectNear(r[2], {rs0, rs1}, 0, 1e-6);
}

TEST_F(EvalTest, LayerNormBF16KeepsF32Statistics) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%x: tensor<1x3xbf16>, %g: tensor<3xbf16>, %b: tensor<3xbf16>)
        -> (tensor<1x3xbf16>, tensor<1xf32>, tensor<1xf32>) {
      %y, %mean, %rstd = mw.layer_norm %x, %g, %b
          : (tensor<1x3xbf16>, tensor<3xbf16>, tensor<3xbf16>) -> (tensor<1x3xbf16>, tensor<1xf32>, tensor<1xf32>)
      return %y, %mean, %rstd : tensor<1x3xbf16>, tensor<1xf32>, tensor<1xf32>
    })mlir");
  // x = [1, 2, 4]: mean 7/3 is not a bf16 value, and stays f32.
  SmallVector<Tensor> r =
      run(f, {make(ElemKind::BF16, {1, 3}, {1, 2, 4}),
              make(ElemKind::BF16, {3}, {1, 1, 1}),
              make(ElemKind::BF16, {3}, {0, 0, 0})});
  ASSERT_EQ(r.size(), 3u);
  expectType(r[0], ElemKind::BF16, {1, 3});
  expectType(r[1], ElemKind::F32, {1});
  EXPECT_EQ(r[1].f[0], 7.0f / 3.0f);
  double var = (std::pow(1 - 7.0 / 3, 2) + std::pow(2 - 7.0 / 3, 2) +
                std::pow(4 - 7.0 / 3, 2)) / 3;
  double rs = 1 / std::sqrt(var + 1e-5);
  expectNear(r[2], {rs}, 0, 1e-6);
  for (int j = 0; j < 3; ++j) {
    double xv = j == 0 ? 1 : j == 1 ? 2 : 4;
    EXPECT_EQ(static_cast<double>(r[0].f[j]), bf16Ref((xv - 7.0 / 3) * rs))
        << j;
  }
}

TEST_F(EvalTest, RmsNormHandComputed) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%x: tensor<2x2xf32>, %g: tensor<2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>) {
      %y, %rstd = mw.rms_norm %x, %g : (tensor<2x2xf32>, tensor<2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>)
      return %y, %rstd : tensor<2x2xf32>, tensor<2xf32>
    })mlir");
  // Row 0 = [3, 4]: mean square 12.5, rstd = 1/sqrt(12.5 + 1e-6) (the default
  // epsilon). Row 1 = [0, 0]: rstd = 1/sqrt(1e-6) = 1000, y = 0.
  SmallVector<Tensor> r =
      run(f, {f32({2, 2}, {3, 4, 0, 0}), f32({2}, {2, -1})});
  ASSERT_EQ(r.size(), 2u);
  double rs0 = 1 / std::sqrt(12.5 + 1e-6);
  expectNear(r[0], {3 * rs0 * 2, 4 * rs0 * -1, 0, 0}, 1e-6, 1e-6);
  expectNear(r[1], {rs0, 1000}, 0, 1e-6);
}

//===----------------------------------------------------------------------===//
// Embedding and cross-entropy
//===----------------------------------------------------------------------===//

TEST_F(EvalTest, Embedding) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%t: tensor<4x3xf32>, %i: tensor<2x2xi32>) -> tensor<2x2x3xf32> {
      %r = mw.embedding %t, %i : (tensor<4x3xf32>, tensor<2x2xi32>) -> tensor<2x2x3xf32>
      return %r : tensor<2x2x3xf32>
    })mlir");
  // table[r][c] = 10 r + c; rows 3, 0, 1, 3.
  Tensor table = f32({4, 3}, {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32});
  Tensor r = run1(f, {table, i32({2, 2}, {3, 0, 1, 3})});
  expectType(r, ElemKind::F32, {2, 2, 3});
  expectExact(r, {30, 31, 32, 0, 1, 2, 10, 11, 12, 30, 31, 32});
  for (double bad : {4.0, -1.0}) {
    std::string err = runError(f, {table, i32({2, 2}, {0, 1, bad, 2})});
    std::string want = "embedding index " +
                       std::to_string(static_cast<int>(bad)) +
                       " is out of range [0, 4)";
    EXPECT_NE(err.find(want), std::string::npos) << err;
  }
}

TEST_F(EvalTest, CrossEntropy) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%l: tensor<3x4xf32>, %y: tensor<3xi64>) -> (tensor<f32>, tensor<f32>) {
      %a = mw.cross_entropy %l, %y : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<f32>
      %b = mw.cross_entropy %l, %y {ignore_index = 1 : i64} : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<f32>
      return %a, %b : tensor<f32>, tensor<f32>
    })mlir");
  // Row 0 is all zeros: its loss is ln 4 whatever the label. Rows 1 and 2
  // against a double log-sum-exp.
  Tensor logits = f32({3, 4}, {0, 0, 0, 0, 1, 2, 3, 4, -1, 0.5, 2, -3});
  auto rowLoss = [&](int t, int label) {
    double s = 0;
    for (int j = 0; j < 4; ++j)
      s += std::exp(logits.f[t * 4 + j]);
    return std::log(s) - logits.f[t * 4 + label];
  };
  // Labels [2, -100, 1]: the default ignore_index -100 drops row 1; with
  // ignore_index = 1 row 2 is dropped instead, and -100 is then out of range.
  SmallVector<Tensor> r = run(f, {logits, i64({3}, {2, 3, 1})});
  ASSERT_EQ(r.size(), 2u);
  expectType(r[0], ElemKind::F32, {});
  expectNear(r[0], {(std::log(4.0) + rowLoss(1, 3) + rowLoss(2, 1)) / 3}, 0,
             1e-6);
  expectNear(r[1], {(std::log(4.0) + rowLoss(1, 3)) / 2}, 0, 1e-6);

  func::FuncOp g = parse(R"mlir(
    func.func @g(%l: tensor<3x4xf32>, %y: tensor<3xi32>) -> tensor<f32> {
      %a = mw.cross_entropy %l, %y : (tensor<3x4xf32>, tensor<3xi32>) -> tensor<f32>
      return %a : tensor<f32>
    })mlir");
  expectNear(run1(g, {logits, i32({3}, {2, -100, 1})}),
             {(std::log(4.0) + rowLoss(2, 1)) / 2}, 0, 1e-6);
  // Every label ignored: the loss is 0, not 0/0.
  expectExact(run1(g, {logits, i32({3}, {-100, -100, -100})}), {0});
  std::string err = runError(g, {logits, i32({3}, {0, 4, 1})});
  EXPECT_NE(err.find("label 4 is out of range [0, 4)"), std::string::npos)
      << err;
  err = runError(f, {logits, i64({3}, {-100, 0, 0})});
  EXPECT_NE(err.find("label -100 is out of range [0, 4)"), std::string::npos)
      << err;
}

TEST_F(EvalTest, CrossEntropyBatchedLabelsBF16Logits) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%l: tensor<2x1x3xbf16>, %y: tensor<2x1xi32>) -> tensor<f32> {
      %a = mw.cross_entropy %l, %y : (tensor<2x1x3xbf16>, tensor<2x1xi32>) -> tensor<f32>
      return %a : tensor<f32>
    })mlir");
  // Logits [[0, 0, 0], [ln 2, 0, 0]] (ln 2 rounded to bf16), labels [1, 0]:
  // losses ln 3 and ln(2 + 2) - ln 2 ~ ln 2; computed in f32, not rounded.
  Tensor logits =
      make(ElemKind::BF16, {2, 1, 3}, {0, 0, 0, std::log(2.0), 0, 0});
  double l2 = logits.f[3];
  double expected =
      (std::log(3.0) + std::log(std::exp(l2) + 2.0) - l2) / 2.0;
  expectNear(run1(f, {logits, i32({2, 1}, {1, 0})}), {expected}, 0, 1e-6);
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// Attention and lse in double, directly from the op's definition.
void attentionRef(const Tensor &q, const Tensor &k, const Tensor &v,
                  bool causal, double scale, std::vector<double> &out,
                  std::vector<double> &lse) {
  int64_t b = q.shape[0], h = q.shape[1], s = q.shape[2], d = q.shape[3];
  int64_t sk = k.shape[2], dv = v.shape[3];
  out.assign(b * h * s * dv, 0.0);
  lse.assign(b * h * s, 0.0);
  for (int64_t bh = 0; bh < b * h; ++bh)
    for (int64_t i = 0; i < s; ++i) {
      std::vector<double> score(sk, -INFINITY);
      for (int64_t j = 0; j < sk; ++j) {
        if (causal && j > i)
          continue;
        double dot = 0;
        for (int64_t e = 0; e < d; ++e)
          dot += double(q.f[(bh * s + i) * d + e]) * k.f[(bh * sk + j) * d + e];
        score[j] = scale * dot;
      }
      double sum = 0;
      for (double sc : score)
        sum += std::exp(sc);
      lse[bh * s + i] = std::log(sum);
      for (int64_t j = 0; j < sk; ++j)
        for (int64_t e = 0; e < dv; ++e)
          out[(bh * s + i) * dv + e] +=
              std::exp(score[j]) / sum * v.f[(bh * sk + j) * dv + e];
    }
}

TEST_F(EvalTest, AttentionAgainstDouble) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%q: tensor<2x2x3x4xf32>, %k: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x2xf32>,
                 %kc: tensor<2x2x3x4xf32>, %vc: tensor<2x2x3x2xf32>)
        -> (tensor<2x2x3x2xf32>, tensor<2x2x3xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3xf32>,
            tensor<2x2x3x2xf32>, tensor<2x2x3xf32>) {
      %o0, %l0 = mw.attention %q, %k, %v
          : (tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x2xf32>) -> (tensor<2x2x3x2xf32>, tensor<2x2x3xf32>)
      %o1, %l1 = mw.attention %q, %kc, %vc {causal}
          : (tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32>, tensor<2x2x3x2xf32>) -> (tensor<2x2x3x2xf32>, tensor<2x2x3xf32>)
      %o2, %l2 = mw.attention %q, %k, %v {scale = 1.5 : f64}
          : (tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x2xf32>) -> (tensor<2x2x3x2xf32>, tensor<2x2x3xf32>)
      return %o0, %l0, %o1, %l1, %o2, %l2 : tensor<2x2x3x2xf32>, tensor<2x2x3xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3xf32>,
                                            tensor<2x2x3x2xf32>, tensor<2x2x3xf32>
    })mlir");
  std::mt19937 rng(11);
  Tensor q = random(ElemKind::F32, {2, 2, 3, 4}, rng, -2, 2);
  Tensor k = random(ElemKind::F32, {2, 2, 5, 4}, rng, -2, 2);
  Tensor v = random(ElemKind::F32, {2, 2, 5, 2}, rng, -2, 2);
  Tensor kc = random(ElemKind::F32, {2, 2, 3, 4}, rng, -2, 2);
  Tensor vc = random(ElemKind::F32, {2, 2, 3, 2}, rng, -2, 2);
  SmallVector<Tensor> r = run(f, {q, k, v, kc, vc});
  ASSERT_EQ(r.size(), 6u);
  std::vector<double> out, lse;
  attentionRef(q, k, v, false, 0.5, out, lse); // default scale 1/sqrt(4)
  expectType(r[0], ElemKind::F32, {2, 2, 3, 2});
  expectType(r[1], ElemKind::F32, {2, 2, 3});
  expectNear(r[0], out, 1e-6, 1e-5, "non-causal out");
  expectNear(r[1], lse, 1e-6, 1e-6, "non-causal lse");
  attentionRef(q, kc, vc, true, 0.5, out, lse);
  expectNear(r[2], out, 1e-6, 1e-5, "causal out");
  expectNear(r[3], lse, 1e-6, 1e-6, "causal lse");
  // Causal row 0 sees key 0 only: out = v[0], lse = score 0.
  for (int64_t bh = 0; bh < 4; ++bh)
    for (int e = 0; e < 2; ++e)
      EXPECT_EQ(r[2].f[bh * 6 + e], vc.f[bh * 6 + e]);
  attentionRef(q, k, v, false, 1.5, out, lse);
  expectNear(r[4], out, 1e-6, 1e-5, "scale 1.5 out");
  expectNear(r[5], lse, 1e-6, 1e-6, "scale 1.5 lse");
}

TEST_F(EvalTest, AttentionDefaultScaleIsOneOverSqrtD) {
  // D = 6: 1/sqrt(6) is not a float, so a forward and a backward pass that
  // computed it differently (f32 vs double) would disagree in the last bit.
  // Both must equal the explicit attribute 1/sqrt(6) rounded from double.
  std::string scale =
      llvm::formatv("{0:e16}", 1.0 / std::sqrt(6.0)).str();
  func::FuncOp f = parse(llvm::formatv(R"mlir(
    func.func @f(%q: tensor<1x1x3x6xf32>, %do: tensor<1x1x3x6xf32>)
        -> (tensor<1x1x3x6xf32>, tensor<1x1x3x6xf32>, tensor<1x1x3x6xf32>, tensor<1x1x3x6xf32>) {{
      %o, %l = mw.attention %q, %q, %q {{causal}
          : (tensor<1x1x3x6xf32>, tensor<1x1x3x6xf32>, tensor<1x1x3x6xf32>) -> (tensor<1x1x3x6xf32>, tensor<1x1x3xf32>)
      %o2, %l2 = mw.attention %q, %q, %q {{causal, scale = {0} : f64}
          : (tensor<1x1x3x6xf32>, tensor<1x1x3x6xf32>, tensor<1x1x3x6xf32>) -> (tensor<1x1x3x6xf32>, tensor<1x1x3xf32>)
      %dq, %dk, %dv = mw.attention_grad %q, %q, %q, %o, %l, %do {{causal}
          : (tensor<1x1x3x6xf32>, tensor<1x1x3x6xf32>, tensor<1x1x3x6xf32>, tensor<1x1x3x6xf32>, tensor<1x1x3xf32>, tensor<1x1x3x6xf32>)
          -> (tensor<1x1x3x6xf32>, tensor<1x1x3x6xf32>, tensor<1x1x3x6xf32>)
      %dq2, %dk2, %dv2 = mw.attention_grad %q, %q, %q, %o, %l, %do {{causal, scale = {0} : f64}
          : (tensor<1x1x3x6xf32>, tensor<1x1x3x6xf32>, tensor<1x1x3x6xf32>, tensor<1x1x3x6xf32>, tensor<1x1x3xf32>, tensor<1x1x3x6xf32>)
          -> (tensor<1x1x3x6xf32>, tensor<1x1x3x6xf32>, tensor<1x1x3x6xf32>)
      return %o, %o2, %dq, %dq2 : tensor<1x1x3x6xf32>, tensor<1x1x3x6xf32>, tensor<1x1x3x6xf32>, tensor<1x1x3x6xf32>
    })mlir",
                                       scale)
                             .str());
  std::mt19937 rng(5);
  Tensor q = random(ElemKind::F32, {1, 1, 3, 6}, rng, -3, 3);
  Tensor dout = random(ElemKind::F32, {1, 1, 3, 6}, rng);
  SmallVector<Tensor> r = run(f, {q, dout});
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].f, r[1].f) << "forward default scale";
  EXPECT_EQ(r[2].f, r[3].f) << "backward default scale";
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

TEST_F(EvalTest, ReshapeTransposeBroadcast) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%x: tensor<2x3xf32>, %i: tensor<2x3xi64>, %b: tensor<3xf32>, %c: tensor<2x1xi32>, %s: tensor<f32>)
        -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xi64>, tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x2xf32>, tensor<6xf32>) {
      %0 = mw.reshape %x : tensor<2x3xf32> -> tensor<3x2xf32>
      %1 = mw.transpose %x permutation = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
      %2 = mw.transpose %i permutation = [1, 0] : tensor<2x3xi64> -> tensor<3x2xi64>
      %3 = mw.broadcast_to %b : tensor<3xf32> -> tensor<2x3xf32>
      %4 = mw.broadcast_to %c : tensor<2x1xi32> -> tensor<2x3xi32>
      %5 = mw.broadcast_to %s : tensor<f32> -> tensor<2x2xf32>
      %6 = mw.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
      return %0, %1, %2, %3, %4, %5, %6 : tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xi64>, tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x2xf32>, tensor<6xf32>
    })mlir");
  // x = [[1, 2, 3], [4, 5, 6]].
  SmallVector<Tensor> r =
      run(f, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), i64({2, 3}, {1, 2, 3, 4, 5, 6}),
              f32({3}, {7, 8, 9}), i32({2, 1}, {-1, -2}), f32({}, {3.5})});
  ASSERT_EQ(r.size(), 7u);
  expectType(r[0], ElemKind::F32, {3, 2});
  expectExact(r[0], {1, 2, 3, 4, 5, 6});  // same row-major order
  expectExact(r[1], {1, 4, 2, 5, 3, 6});  // x^T
  expectType(r[2], ElemKind::I64, {3, 2});
  expectExact(r[2], {1, 4, 2, 5, 3, 6});
  expectExact(r[3], {7, 8, 9, 7, 8, 9});
  expectExact(r[4], {-1, -1, -1, -2, -2, -2});
  expectExact(r[5], {3.5, 3.5, 3.5, 3.5});
  expectType(r[6], ElemKind::F32, {6});
}

TEST_F(EvalTest, TransposeRank3AgainstIndexMap) {
  func::FuncOp f = unaryFunc(
      "%x: tensor<2x3x4xf32>",
      "%r = mw.transpose %x permutation = [2, 0, 1] : tensor<2x3x4xf32> -> "
      "tensor<4x2x3xf32>",
      "tensor<4x2x3xf32>");
  Tensor x = Tensor::zeros(ElemKind::F32, {2, 3, 4});
  for (int64_t n = 0; n < 24; ++n)
    x.f[n] = static_cast<float>(n);
  Tensor r = run1(f, {x});
  expectType(r, ElemKind::F32, {4, 2, 3});
  // result[a][b][c] = x[b][c][a]: result dim d is input dim permutation[d].
  std::vector<double> expected;
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 3; ++c)
        expected.push_back(b * 12 + c * 4 + a);
  expectExact(r, expected);
}

TEST_F(EvalTest, SliceWithStrides) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%x: tensor<4x5xf32>, %i: tensor<6xi32>) -> (tensor<2x2xf32>, tensor<3x5xf32>, tensor<2xi32>, tensor<4x1xf32>) {
      %0 = mw.slice %x offsets = [1, 0] sizes = [2, 2] strides = [2, 3] : tensor<4x5xf32> -> tensor<2x2xf32>
      %1 = mw.slice %x offsets = [1, 0] sizes = [3, 5] : tensor<4x5xf32> -> tensor<3x5xf32>
      %2 = mw.slice %i offsets = [1] sizes = [2] strides = [3] : tensor<6xi32> -> tensor<2xi32>
      %3 = mw.slice %x offsets = [0, 4] sizes = [4, 1] : tensor<4x5xf32> -> tensor<4x1xf32>
      return %0, %1, %2, %3 : tensor<2x2xf32>, tensor<3x5xf32>, tensor<2xi32>, tensor<4x1xf32>
    })mlir");
  // x[r][c] = 10 r + c.
  Tensor x = Tensor::zeros(ElemKind::F32, {4, 5});
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 5; ++c)
      x.f[r * 5 + c] = 10 * r + c;
  SmallVector<Tensor> r = run(f, {x, i32({6}, {0, 1, 2, 3, 4, 5})});
  ASSERT_EQ(r.size(), 4u);
  // Rows 1, 3 and columns 0, 3.
  expectExact(r[0], {10, 13, 30, 33});
  std::vector<double> rows1to3;
  for (int k = 5; k < 20; ++k)
    rows1to3.push_back(x.f[k]);
  expectExact(r[1], rows1to3);
  expectExact(r[2], {1, 4});
  expectExact(r[3], {4, 14, 24, 34});
}

TEST_F(EvalTest, ConcatAxis0And1) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%a: tensor<2x2xf32>, %b: tensor<1x2xf32>, %c: tensor<2x3xf32>, %i: tensor<2xi64>, %j: tensor<1xi64>)
        -> (tensor<3x2xf32>, tensor<2x5xf32>, tensor<3xi64>, tensor<2x7xf32>) {
      %0 = mw.concat %a, %b axis = 0 : (tensor<2x2xf32>, tensor<1x2xf32>) -> tensor<3x2xf32>
      %1 = mw.concat %a, %c axis = 1 : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x5xf32>
      %2 = mw.concat %j, %i axis = 0 : (tensor<1xi64>, tensor<2xi64>) -> tensor<3xi64>
      %3 = mw.concat %c, %a, %a axis = 1 : (tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x7xf32>
      return %0, %1, %2, %3 : tensor<3x2xf32>, tensor<2x5xf32>, tensor<3xi64>, tensor<2x7xf32>
    })mlir");
  SmallVector<Tensor> r =
      run(f, {f32({2, 2}, {1, 2, 3, 4}), f32({1, 2}, {5, 6}),
              f32({2, 3}, {7, 8, 9, 10, 11, 12}), i64({2}, {1, 2}),
              i64({1}, {-1})});
  ASSERT_EQ(r.size(), 4u);
  expectExact(r[0], {1, 2, 3, 4, 5, 6});
  // [[1, 2 | 7, 8, 9], [3, 4 | 10, 11, 12]].
  expectExact(r[1], {1, 2, 7, 8, 9, 3, 4, 10, 11, 12});
  expectExact(r[2], {-1, 1, 2});
  expectExact(r[3], {7, 8, 9, 1, 2, 1, 2, 10, 11, 12, 3, 4, 3, 4});
}

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

constexpr const char *kAdamW = R"mlir(
  func.func @f(%p: tensor<3xf32>, %g: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>, %t: tensor<i64>)
      -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
    %p1, %m1, %v1 = mw.adamw %p, %g, %m, %v, %t {lr = 1.0e-01 : f64, weight_decay = 1.0e-01 : f64}
        : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<i64>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
    return %p1, %m1, %v1 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  })mlir";

TEST_F(EvalTest, AdamWStepOneAndTwo) {
  func::FuncOp f = parse(kAdamW);
  // lr 0.1, betas (0.9, 0.999), eps 1e-8, weight decay 0.1, from zero
  // moments, p = [1, -0.5, 2], g = [0.1, -0.2, 0.3].
  // Step 1: m = 0.1 g, v = 0.001 g^2; the bias corrections 1 - 0.9 and
  // 1 - 0.999 give mhat = g, vhat = g^2, so the step is lr g / (|g| + eps)
  // = 0.1 sign(g) (the eps term is below 1e-7), after decaying p by
  // 1 - lr wd = 0.99:
  //   p = 0.99 [1, -0.5, 2] - 0.1 [1, -1, 1] = [0.89, -0.395, 1.88].
  Tensor p = f32({3}, {1, -0.5, 2});
  Tensor g = f32({3}, {0.1, -0.2, 0.3});
  Tensor zero = f32({3}, {0, 0, 0});
  SmallVector<Tensor> s1 = run(f, {p, g, zero, zero, i64({}, {1})});
  ASSERT_EQ(s1.size(), 3u);
  expectNear(s1[0], {0.89, -0.395, 1.88}, 2e-7, 2e-7, "p after step 1");
  expectNear(s1[1], {0.01, -0.02, 0.03}, 0, 1e-6, "m after step 1");
  expectNear(s1[2], {1e-5, 4e-5, 9e-5}, 0, 1e-6, "v after step 1");

  // Step 2 with the same gradient: m = 0.9*0.1 g + 0.1 g = 0.19 g and
  // bias correction 1 - 0.81 = 0.19 again give mhat = g; v = (0.999*0.001 +
  // 0.001) g^2 = 0.001999 g^2 over 1 - 0.999^2 = 0.001999, vhat = g^2:
  //   p = 0.99 [0.89, -0.395, 1.88] - 0.1 sign(g) = [0.7811, -0.29105, 1.7612].
  SmallVector<Tensor> s2 = run(f, {s1[0], g, s1[1], s1[2], i64({}, {2})});
  ASSERT_EQ(s2.size(), 3u);
  expectNear(s2[0], {0.7811, -0.29105, 1.7612}, 2e-7, 2e-7, "p after step 2");
  expectNear(s2[1], {0.019, -0.038, 0.057}, 0, 1e-6, "m after step 2");
  expectNear(s2[2], {1.999e-5, 7.996e-5, 17.991e-5}, 0, 1e-6,
             "v after step 2");

  // Step 2 with a different gradient g2 = [0.3, 0.2, -0.1], so the bias
  // correction does not cancel. Element 0: m = 0.09*0.1 + 0.1*0.3 = 0.039,
  // mhat = 0.039 / 0.19 = 0.2052631579; v = 0.999e-5 + 0.001*0.09 =
  // 9.999e-5, vhat = 9.999e-5 / 0.001999 = 0.05002001; sqrt = 0.2236515;
  // p = 0.99*0.89 - 0.1*0.2052632/0.2236515 = 0.8811 - 0.0917781 = 0.7893219.
  // Element 1: m = -0.018 + 0.02 = 0.002, mhat = 0.0105263158; v = 3.996e-5 +
  // 4e-5 = 7.996e-5, vhat = 0.04, sqrt = 0.2; p = -0.39105 - 0.00526316 =
  // -0.3963132. Element 2: m = 0.027 - 0.01 = 0.017, mhat = 0.0894736842;
  // v = 8.991e-5 + 1e-5 = 9.991e-5, vhat = 0.04997999, sqrt = 0.2235623;
  // p = 1.8612 - 0.0400219 = 1.8211781.
  Tensor g2 = f32({3}, {0.3, 0.2, -0.1});
  SmallVector<Tensor> s3 = run(f, {s1[0], g2, s1[1], s1[2], i64({}, {2})});
  ASSERT_EQ(s3.size(), 3u);
  expectNear(s3[0], {0.7893219, -0.3963132, 1.8211781}, 1e-6, 0,
             "p after step 2 with g2");
  expectNear(s3[1], {0.039, 0.002, 0.017}, 1e-8, 1e-6, "m with g2");
  expectNear(s3[2], {9.999e-5, 7.996e-5, 9.991e-5}, 0, 1e-6, "v with g2");

  std::string err = runError(f, {p, g, zero, zero, i64({}, {0})});
  EXPECT_NE(err.find("adamw step must be >= 1"), std::string::npos) << err;
}

TEST_F(EvalTest, AdamWMixedPrecisionAndFloatStep) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%p: tensor<2xf32>, %g: tensor<2xbf16>, %m: tensor<2xf32>, %v: tensor<2xf32>, %t: tensor<f32>)
        -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
      %p1, %m1, %v1 = mw.adamw %p, %g, %m, %v, %t {lr = 1.0e-01 : f64, weight_decay = 0.0 : f64}
          : (tensor<2xf32>, tensor<2xbf16>, tensor<2xf32>, tensor<2xf32>, tensor<f32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
      return %p1, %m1, %v1 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
    })mlir");
  // A bf16 gradient read in f32; step 1 moves each weight by lr sign(g).
  SmallVector<Tensor> r =
      run(f, {f32({2}, {1, 1}), make(ElemKind::BF16, {2}, {0.5, -0.25}),
              f32({2}, {0, 0}), f32({2}, {0, 0}), f32({}, {1})});
  ASSERT_EQ(r.size(), 3u);
  expectNear(r[0], {0.9, 1.1}, 2e-7);
  expectNear(r[1], {0.05, -0.025}, 0, 1e-6);
  runError(f, {f32({2}, {1, 1}), make(ElemKind::BF16, {2}, {0.5, -0.25}),
               f32({2}, {0, 0}), f32({2}, {0, 0}), f32({}, {0})});
}

TEST_F(EvalTest, Sgd) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%p: tensor<2xf32>, %g: tensor<2xf32>, %b: tensor<2xf32>)
        -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
      %plain = mw.sgd %p, %g {lr = 1.0e-01 : f64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      %wd = mw.sgd %p, %g {lr = 1.0e-01 : f64, weight_decay = 1.0e-01 : f64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      %pm, %bm = mw.sgd %p, %g, %b {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64}
          : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
      %pn, %bn = mw.sgd %p, %g, %b {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64, nesterov}
          : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
      %pd, %bd = mw.sgd %p, %g, %b {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64, dampening = 5.0e-01 : f64}
          : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
      return %plain, %wd, %pm, %bm, %pn, %pd, %bd : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
    })mlir");
  // p = [1, -2], g = [0.5, 0.25], buffer = [1, -1], lr = 0.1.
  SmallVector<Tensor> r = run(f, {f32({2}, {1, -2}), f32({2}, {0.5, 0.25}),
                                  f32({2}, {1, -1})});
  ASSERT_EQ(r.size(), 7u);
  const double tol = 2e-7;
  // p - lr g = [0.95, -2.025].
  expectNear(r[0], {0.95, -2.025}, tol, tol, "plain");
  // g + wd p = [0.6, 0.05]; p - 0.1 of that = [0.94, -2.005].
  expectNear(r[1], {0.94, -2.005}, tol, tol, "weight decay");
  // buf = 0.9 [1, -1] + [0.5, 0.25] = [1.4, -0.65]; p - 0.1 buf =
  // [0.86, -1.935].
  expectNear(r[2], {0.86, -1.935}, tol, tol, "momentum");
  expectNear(r[3], {1.4, -0.65}, tol, tol, "momentum buffer");
  // Nesterov: g + 0.9 buf = [0.5 + 1.26, 0.25 - 0.585] = [1.76, -0.335];
  // p = [1 - 0.176, -2 + 0.0335] = [0.824, -1.9665].
  expectNear(r[4], {0.824, -1.9665}, tol, tol, "nesterov");
  // Dampening 0.5: buf = 0.9 [1, -1] + 0.5 g = [1.15, -0.775];
  // p = [0.885, -1.9225].
  expectNear(r[5], {0.885, -1.9225}, tol, tol, "dampening");
  expectNear(r[6], {1.15, -0.775}, tol, tol, "dampened buffer");
}

//===----------------------------------------------------------------------===//
// Mixed precision: overflow checks and dynamic loss scaling
//===----------------------------------------------------------------------===//

TEST_F(EvalTest, FoundInf) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%a: tensor<3xf32>, %h: tensor<2xf16>, %b: tensor<bf16>) -> tensor<f32> {
      %r = mw.found_inf %a, %h, %b : (tensor<3xf32>, tensor<2xf16>, tensor<bf16>) -> tensor<f32>
      return %r : tensor<f32>
    })mlir");
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor finiteA = f32({3}, {1, -3.4e38, 0});
  // 65504 is f16's largest finite value, still finite.
  Tensor finiteH = make(ElemKind::F16, {2}, {65504, -1e-7});
  Tensor finiteB = make(ElemKind::BF16, {}, {3e38});
  expectExact(run1(f, {finiteA, finiteH, finiteB}), {0}, "all finite");
  expectExact(run1(f, {f32({3}, {1, inf, 0}), finiteH, finiteB}), {1}, "+inf");
  expectExact(run1(f, {f32({3}, {-inf, 2, 0}), finiteH, finiteB}), {1},
              "-inf");
  expectExact(run1(f, {f32({3}, {1, 2, nan}), finiteH, finiteB}), {1}, "NaN");
  // In a later operand: 1e5 rounds to +inf in f16; a bf16 NaN.
  expectExact(run1(f, {finiteA, make(ElemKind::F16, {2}, {0, 1e5}), finiteB}),
              {1}, "f16 overflow");
  expectExact(run1(f, {finiteA, finiteH, make(ElemKind::BF16, {}, {nan})}),
              {1}, "bf16 NaN");
}

TEST_F(EvalTest, SelectFloatAndInteger) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%c: tensor<f32>, %a: tensor<2xf32>, %b: tensor<2xf32>, %i: tensor<i64>, %j: tensor<i64>)
        -> (tensor<2xf32>, tensor<i64>) {
      %x = mw.select %c, %a, %b : (tensor<f32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      %k = mw.select %c, %i, %j : (tensor<f32>, tensor<i64>, tensor<i64>) -> tensor<i64>
      return %x, %k : tensor<2xf32>, tensor<i64>
    })mlir");
  Tensor a = f32({2}, {1, 2}), b = f32({2}, {-3, -4});
  Tensor i = i64({}, {7}), j = i64({}, {-9});
  auto check = [&](double cond, bool pickTrue, const std::string &what) {
    SmallVector<Tensor> r = run(f, {f32({}, {cond}), a, b, i, j});
    ASSERT_EQ(r.size(), 2u);
    expectExact(r[0], pickTrue ? ArrayRef<double>{1, 2}
                               : ArrayRef<double>{-3, -4}, what);
    expectExact(r[1], {pickTrue ? 7.0 : -9.0}, what);
  };
  check(1, true, "1 (found_inf's overflow flag)");
  check(0, false, "0");
  check(-0.0, false, "-0 equals 0");
  check(0.5, true, "any non-zero");
  check(std::numeric_limits<double>::quiet_NaN(), true, "NaN is != 0");
}

constexpr const char *kLossScaleUpdate = R"mlir(
  func.func @f(%o: tensor<f32>, %s: tensor<f32>, %n: tensor<i64>, %l: tensor<i64>, %h: tensor<i64>)
      -> (tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>) {
    %s1, %n1, %l1, %h1 = mw.loss_scale_update %o, %s, %n, %l, %h {ATTRS}
        : (tensor<f32>, tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>)
        -> (tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>)
    return %s1, %n1, %l1, %h1 : tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>
  })mlir";

/// One loss-scaling state and the step's overflow flag.
struct ScaleStep {
  bool overflow;
  double scale;
  int64_t iter, lastOverflow, hysteresis; // after the step
};

TEST_F(EvalTest, LossScaleScheduleAgainstHandWorkedSequence) {
  std::string ir = kLossScaleUpdate;
  ir.replace(ir.find("ATTRS"), 5, "window = 3 : i64");
  func::FuncOp f = parse(ir);
  // DeepSpeed's update_scale with scale_window 3, delayed_shift (hysteresis)
  // 2, min_scale 1, factor 2, from scale 16, cur_iter 0,
  // last_overflow_iter -1, cur_hysteresis 2. F: no overflow, O: overflow.
  // Worked by hand from the Python code:
  //  1 F iter 0: (0 - -1) % 3 = 1            -> 16, iter 1, last -1, hyst 2
  //  2 F iter 1: (1 - -1) % 3 = 2            -> 16, iter 2, last -1, hyst 2
  //  3 F iter 2: (2 - -1) % 3 = 0: grow      -> 32, iter 3, last -1, hyst 2
  //  4 O iter 3: hyst 2 != 1: hyst -= 1      -> 32, iter 4, last  3, hyst 1
  //    (DeepSpeed's hysteresis: the first overflow does not halve)
  //  5 F iter 4: (4 - 3) % 3 = 1             -> 32, iter 5, last  3, hyst 1
  //  6 O iter 5: hyst == 1: halve            -> 16, iter 6, last  5, hyst 1
  //  7 O iter 6: hyst == 1: halve            ->  8, iter 7, last  6, hyst 1
  //  8 F iter 7: (7 - 6) % 3 = 1             ->  8, iter 8, last  6, hyst 1
  //  9 F iter 8: (8 - 6) % 3 = 2             ->  8, iter 9, last  6, hyst 1
  // 10 F iter 9: (9 - 6) % 3 = 0: grow, hysteresis restored
  //                                          -> 16, iter 10, last 6, hyst 2
  // 11 F iter 10: (10 - 6) % 3 = 1           -> 16, iter 11, last 6, hyst 2
  // 12 O iter 11: hyst 2 != 1: hyst -= 1     -> 16, iter 12, last 11, hyst 1
  // 13 F iter 12: (12 - 11) % 3 = 1          -> 16, iter 13, last 11, hyst 1
  // 14 F iter 13: (13 - 11) % 3 = 2          -> 16, iter 14, last 11, hyst 1
  // 15 F iter 14: (14 - 11) % 3 = 0: grow    -> 32, iter 15, last 11, hyst 2
  const ScaleStep schedule[] = {
      {false, 16, 1, -1, 2},  {false, 16, 2, -1, 2},  {false, 32, 3, -1, 2},
      {true, 32, 4, 3, 1},    {false, 32, 5, 3, 1},   {true, 16, 6, 5, 1},
      {true, 8, 7, 6, 1},     {false, 8, 8, 6, 1},    {false, 8, 9, 6, 1},
      {false, 16, 10, 6, 2},  {false, 16, 11, 6, 2},  {true, 16, 12, 11, 1},
      {false, 16, 13, 11, 1}, {false, 16, 14, 11, 1}, {false, 32, 15, 11, 2},
  };
  Tensor scale = f32({}, {16}), iter = i64({}, {0}), last = i64({}, {-1}),
         hyst = i64({}, {2});
  for (auto [n, expected] : llvm::enumerate(schedule)) {
    std::string what = "after step " + std::to_string(n + 1);
    SmallVector<Tensor> r = run(
        f, {f32({}, {expected.overflow ? 1.0 : 0.0}), scale, iter, last, hyst});
    ASSERT_EQ(r.size(), 4u);
    expectType(r[0], ElemKind::F32, {});
    expectType(r[1], ElemKind::I64, {});
    expectExact(r[0], {expected.scale}, what + ": scale");
    expectExact(r[1], {static_cast<double>(expected.iter)}, what + ": iter");
    expectExact(r[2], {static_cast<double>(expected.lastOverflow)},
                what + ": last_overflow");
    expectExact(r[3], {static_cast<double>(expected.hysteresis)},
                what + ": hysteresis");
    scale = r[0];
    iter = r[1];
    last = r[2];
    hyst = r[3];
  }
}

TEST_F(EvalTest, LossScaleMinimumFactorAndSaturation) {
  // hysteresis 1 (delayed_shift == 1): every overflow halves, whatever the
  // cur_hysteresis operand says, down to min_scale 3, which is not a power
  // of two: 16 -> 8 -> 4 -> max(2, 3) = 3 -> max(1.5, 3) = 3.
  std::string ir = kLossScaleUpdate;
  ir.replace(ir.find("ATTRS"), 5,
             "hysteresis = 1 : i64, min_scale = 3.0 : f64");
  func::FuncOp f = parse(ir);
  Tensor scale = f32({}, {16});
  Tensor iter = i64({}, {40}), last = i64({}, {-1}), hyst = i64({}, {5});
  for (double expected : {8.0, 4.0, 3.0, 3.0}) {
    SmallVector<Tensor> r = run(f, {f32({}, {1}), scale, iter, last, hyst});
    ASSERT_EQ(r.size(), 4u);
    expectExact(r[0], {expected}, "scale");
    expectExact(r[2], {static_cast<double>(iter.i[0])}, "last_overflow");
    expectExact(r[3], {5}, "cur_hysteresis is untouched");
    scale = r[0];
    iter = r[1];
  }
  EXPECT_EQ(iter.i[0], 44);

  // A NaN flag counts as an overflow (it is != 0).
  SmallVector<Tensor> r =
      run(f, {f32({}, {std::numeric_limits<double>::quiet_NaN()}),
              f32({}, {64}), i64({}, {0}), i64({}, {-1}), i64({}, {1})});
  ASSERT_EQ(r.size(), 4u);
  expectExact(r[0], {32}, "NaN flag");

  // factor 4, window 1: every step without overflow grows the scale; the
  // growth saturates at the largest finite f32 instead of becoming inf.
  ir = kLossScaleUpdate;
  ir.replace(ir.find("ATTRS"), 5, "window = 1 : i64, factor = 4.0 : f64");
  func::FuncOp g = parse(ir);
  r = run(g, {f32({}, {0}), f32({}, {0.5}), i64({}, {7}), i64({}, {6}),
              i64({}, {1})});
  ASSERT_EQ(r.size(), 4u);
  expectExact(r[0], {2}, "0.5 * 4");
  expectExact(r[3], {2}, "hysteresis restored to 2");
  const double maxF32 = std::numeric_limits<float>::max();
  r = run(g, {f32({}, {0}), f32({}, {3e38}), i64({}, {7}), i64({}, {6}),
              i64({}, {1})});
  ASSERT_EQ(r.size(), 4u);
  expectExact(r[0], {maxF32}, "3e38 * 4 saturates");
  // ... and an overflow brings it down again (cur_hysteresis 1 halves, by
  // the factor 4).
  r = run(g, {f32({}, {1}), r[0], r[1], r[2], i64({}, {1})});
  ASSERT_EQ(r.size(), 4u);
  expectExact(r[0], {static_cast<double>(static_cast<float>(maxF32 / 4))},
              "saturated scale / 4");
}

//===----------------------------------------------------------------------===//
// Backward ops against central finite differences
//===----------------------------------------------------------------------===//
//
// For a forward function F and fixed random weights W, L(x) = sum(F(x) * W)
// has gradient dL/dx = backward(x, dy = W). The numerical gradient perturbs
// one element of x by +-h, evaluates F through the evaluator (f32), sums L
// in double, and divides by the actual distance between the two perturbed
// f32 values. With inputs and W of order 1 and h = 1e-2 (relative to
// max(1, |x|)):
//   - truncation error is h^2/6 |L'''|: ~2e-5 for these smooth ops;
//   - f32 rounding: the evaluator is deterministic, so outputs that do not
//     depend on the perturbed element cancel exactly in L+ - L-; the others
//     carry a few ulps (~1e-7 each) which, divided by 2h, gives ~1e-5; the
//     cross-entropy loss (~2, one ulp 2.4e-7, scaled by dloss = 2.5) is the
//     worst at ~3e-5.
// The largest difference measured over all checks below is 3.6e-5. The
// tolerance |analytic - numeric| <= 2e-4 + 2e-3 |numeric| keeps a 5x margin
// over that, yet fails a gradient off by 1% (each check also requires a
// gradient of order 1, so an all-zero or wrongly scaled backward fails).

class EvalFiniteDifferenceTest : public EvalTest {
protected:
  static constexpr double kStep = 1e-2;
  static constexpr double kAbsTol = 2e-4;
  static constexpr double kRelTol = 2e-3;

  /// L = sum over `outputs` of sum(F(args)[o] * weights[o]), in double.
  double objective(func::FuncOp fwd, ArrayRef<Tensor> args,
                   ArrayRef<unsigned> outputs, ArrayRef<Tensor> weights) {
    SmallVector<Tensor> r = run(fwd, args);
    double l = 0;
    for (auto [o, w] : llvm::zip(outputs, weights))
      for (int64_t n = 0; n < w.numElements(); ++n)
        l += r[o].at(n) * w.at(n);
    return l;
  }

  /// dL/d args[which] by central differences.
  std::vector<double> numericGrad(func::FuncOp fwd, SmallVector<Tensor> args,
                                  unsigned which, ArrayRef<unsigned> outputs,
                                  ArrayRef<Tensor> weights) {
    std::vector<double> grad;
    Tensor &x = args[which];
    for (int64_t n = 0; n < x.numElements(); ++n) {
      float saved = x.f[n];
      double h = kStep * std::max(1.0, std::fabs(static_cast<double>(saved)));
      float hi = static_cast<float>(saved + h);
      float lo = static_cast<float>(saved - h);
      x.f[n] = hi;
      double lhi = objective(fwd, args, outputs, weights);
      x.f[n] = lo;
      double llo = objective(fwd, args, outputs, weights);
      x.f[n] = saved;
      grad.push_back((lhi - llo) / (static_cast<double>(hi) - lo));
    }
    return grad;
  }
  std::vector<double> numericGrad(func::FuncOp fwd, SmallVector<Tensor> args,
                                  unsigned which, const Tensor &w) {
    return numericGrad(fwd, std::move(args), which, {0}, {w});
  }

  void expectGrad(const Tensor &analytic, ArrayRef<double> numeric,
                  const std::string &what) {
    ASSERT_EQ(analytic.numElements(), static_cast<int64_t>(numeric.size()))
        << what;
    double largest = 0;
    for (size_t n = 0; n < numeric.size(); ++n) {
      EXPECT_NEAR(analytic.f[n], numeric[n],
                  kAbsTol + kRelTol * std::fabs(numeric[n]))
          << what << " element " << n;
      largest = std::max(largest, std::fabs(numeric[n]));
    }
    EXPECT_GT(largest, 0.05) << what << ": the check needs a non-trivial "
                                        "gradient to mean anything";
  }
};

TEST_F(EvalFiniteDifferenceTest, ActivationGrads) {
  struct Case {
    const char *fwd, *bwd, *attr;
  };
  const Case cases[] = {
      {"relu", "relu_grad", ""},
      {"silu", "silu_grad", ""},
      {"gelu", "gelu_grad", ""},
      {"gelu", "gelu_grad", "{approximate = #mw.gelu_approximation<tanh>}"},
      // Kinks at -1 and 1.25, both further from the points than the step.
      {"clamp", "clamp_grad", "{min = -1.0, max = 1.25}"},
  };
  std::mt19937 rng(21);
  // Points away from relu's kink at 0 by more than the step.
  Tensor x = f32({2, 5}, {-2.5, -1.2, -0.6, -0.3, -0.05, 0.05, 0.3, 0.7, 1.4,
                          3.0});
  Tensor w = random(ElemKind::F32, {2, 5}, rng);
  for (const Case &c : cases) {
    func::FuncOp fwd = unaryFunc(
        "%x: tensor<2x5xf32>",
        llvm::formatv("%r = mw.{0} %x {1} : tensor<2x5xf32>", c.fwd, c.attr)
            .str(),
        "tensor<2x5xf32>");
    func::FuncOp bwd = unaryFunc(
        "%x: tensor<2x5xf32>, %dy: tensor<2x5xf32>",
        llvm::formatv("%r = mw.{0} %x, %dy {1} : tensor<2x5xf32>", c.bwd,
                      c.attr)
            .str(),
        "tensor<2x5xf32>");
    std::string what = std::string(c.bwd) + " " + c.attr;
    expectGrad(run1(bwd, {x, w}), numericGrad(fwd, {x}, 0, w), what);
  }
  // relu_grad is exactly 0 or dy.
  func::FuncOp bwd = unaryFunc(
      "%x: tensor<2x5xf32>, %dy: tensor<2x5xf32>",
      "%r = mw.relu_grad %x, %dy : tensor<2x5xf32>", "tensor<2x5xf32>");
  Tensor dr = run1(bwd, {x, w});
  for (int n = 0; n < 10; ++n)
    EXPECT_EQ(dr.f[n], x.f[n] > 0 ? w.f[n] : 0.0f) << n;
}

TEST_F(EvalFiniteDifferenceTest, SoftmaxGrads) {
  std::mt19937 rng(22);
  Tensor x = random(ElemKind::F32, {2, 3, 4}, rng, -2, 2);
  Tensor w = random(ElemKind::F32, {2, 3, 4}, rng);
  for (int64_t axis : {1, 2})
    for (bool log : {false, true}) {
      const char *op = log ? "log_softmax" : "softmax";
      func::FuncOp fwd = unaryFunc(
          "%x: tensor<2x3x4xf32>",
          llvm::formatv("%r = mw.{0} %x axis = {1} : tensor<2x3x4xf32>", op,
                        axis)
              .str(),
          "tensor<2x3x4xf32>");
      func::FuncOp bwd = unaryFunc(
          "%y: tensor<2x3x4xf32>, %dy: tensor<2x3x4xf32>",
          llvm::formatv("%r = mw.{0}_grad %y, %dy axis = {1} : "
                        "tensor<2x3x4xf32>",
                        op, axis)
              .str(),
          "tensor<2x3x4xf32>");
      Tensor y = run1(fwd, {x});
      expectGrad(run1(bwd, {y, w}), numericGrad(fwd, {x}, 0, w),
                 llvm::formatv("{0}_grad axis {1}", op, axis).str());
    }
}

TEST_F(EvalFiniteDifferenceTest, ReduceMaxGrad) {
  func::FuncOp m = parse(R"mlir(
    func.func @fwd(%x: tensor<2x3x4xf32>) -> (tensor<3xf32>, tensor<2x1x4xf32>) {
      %a = mw.reduce_max %x axes = [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>
      %b = mw.reduce_max %x axes = [1] {keepdims} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
      return %a, %b : tensor<3xf32>, tensor<2x1x4xf32>
    }
    func.func @bwd(%x: tensor<2x3x4xf32>, %a: tensor<3xf32>, %da: tensor<3xf32>,
                   %b: tensor<2x1x4xf32>, %db: tensor<2x1x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
      %ga = mw.reduce_max_grad %x, %a, %da axes = [0, 2]
          : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
      %gb = mw.reduce_max_grad %x, %b, %db axes = [1] {keepdims}
          : (tensor<2x3x4xf32>, tensor<2x1x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32>
      return %ga, %gb : tensor<2x3x4xf32>, tensor<2x3x4xf32>
    })mlir",
                         "fwd");
  func::FuncOp bwd = cast<func::FuncOp>(
      SymbolTable::lookupSymbolIn(m->getParentOp(), "bwd"));
  // A permutation of distinct values 0.1 apart: no ties, and a +-h step
  // (h = 1e-2) never changes which element is the maximum.
  Tensor x = Tensor::zeros(ElemKind::F32, {2, 3, 4});
  for (int64_t n = 0; n < 24; ++n)
    x.f[n] = 0.1f * static_cast<float>((n * 7) % 24) - 1.0f;
  std::mt19937 rng(23);
  Tensor wa = random(ElemKind::F32, {3}, rng, 0.5, 1.5);
  Tensor wb = random(ElemKind::F32, {2, 1, 4}, rng, 0.5, 1.5);
  SmallVector<Tensor> y = run(m, {x});
  SmallVector<Tensor> g = run(bwd, {x, y[0], wa, y[1], wb});
  ASSERT_EQ(g.size(), 2u);
  expectGrad(g[0], numericGrad(m, {x}, 0, {0}, {wa}), "axes [0, 2]");
  expectGrad(g[1], numericGrad(m, {x}, 0, {1}, {wb}), "axes [1] keepdims");
}

TEST_F(EvalTest, ReduceMaxGradTiesSplitEvenly) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%x: tensor<2x3xf32>, %y: tensor<2xf32>, %dy: tensor<2xf32>) -> tensor<2x3xf32> {
      %r = mw.reduce_max_grad %x, %y, %dy axes = [1] : (tensor<2x3xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x3xf32>
      return %r : tensor<2x3xf32>
    })mlir");
  // Row 0 = [3, 1, 3] has two maxima: each gets half of dy = 1 (PyTorch's
  // amax rule). Row 1's single maximum gets all of dy = 6.
  expectExact(run1(f, {f32({2, 3}, {3, 1, 3, 0, 5, 2}), f32({2}, {3, 5}),
                       f32({2}, {1, 6})}),
              {0.5, 0, 0.5, 0, 6, 0});
}

TEST_F(EvalFiniteDifferenceTest, LayerNormGrad) {
  func::FuncOp fwd = parse(R"mlir(
    func.func @fwd(%x: tensor<3x5xf32>, %g: tensor<5xf32>, %b: tensor<5xf32>)
        -> (tensor<3x5xf32>, tensor<3xf32>, tensor<3xf32>) {
      %y, %mean, %rstd = mw.layer_norm %x, %g, %b
          : (tensor<3x5xf32>, tensor<5xf32>, tensor<5xf32>) -> (tensor<3x5xf32>, tensor<3xf32>, tensor<3xf32>)
      return %y, %mean, %rstd : tensor<3x5xf32>, tensor<3xf32>, tensor<3xf32>
    }
    func.func @bwd(%x: tensor<3x5xf32>, %g: tensor<5xf32>, %mean: tensor<3xf32>, %rstd: tensor<3xf32>, %dy: tensor<3x5xf32>)
        -> (tensor<3x5xf32>, tensor<5xf32>, tensor<5xf32>) {
      %dx, %dg, %db = mw.layer_norm_grad %x, %g, %mean, %rstd, %dy
          : (tensor<3x5xf32>, tensor<5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3x5xf32>)
          -> (tensor<3x5xf32>, tensor<5xf32>, tensor<5xf32>)
      return %dx, %dg, %db : tensor<3x5xf32>, tensor<5xf32>, tensor<5xf32>
    })mlir",
                           "fwd");
  func::FuncOp bwd = cast<func::FuncOp>(
      SymbolTable::lookupSymbolIn(fwd->getParentOp(), "bwd"));
  std::mt19937 rng(24);
  Tensor x = random(ElemKind::F32, {3, 5}, rng, -2, 2);
  Tensor g = random(ElemKind::F32, {5}, rng, 0.5, 1.5);
  Tensor b = random(ElemKind::F32, {5}, rng);
  Tensor w = random(ElemKind::F32, {3, 5}, rng);
  SmallVector<Tensor> y = run(fwd, {x, g, b});
  SmallVector<Tensor> d = run(bwd, {x, g, y[1], y[2], w});
  ASSERT_EQ(d.size(), 3u);
  expectGrad(d[0], numericGrad(fwd, {x, g, b}, 0, w), "dx");
  expectGrad(d[1], numericGrad(fwd, {x, g, b}, 1, w), "dgamma");
  expectGrad(d[2], numericGrad(fwd, {x, g, b}, 2, w), "dbeta");
}

TEST_F(EvalFiniteDifferenceTest, RmsNormGrad) {
  func::FuncOp fwd = parse(R"mlir(
    func.func @fwd(%x: tensor<3x4xf32>, %g: tensor<4xf32>) -> (tensor<3x4xf32>, tensor<3xf32>) {
      %y, %rstd = mw.rms_norm %x, %g : (tensor<3x4xf32>, tensor<4xf32>) -> (tensor<3x4xf32>, tensor<3xf32>)
      return %y, %rstd : tensor<3x4xf32>, tensor<3xf32>
    }
    func.func @bwd(%x: tensor<3x4xf32>, %g: tensor<4xf32>, %rstd: tensor<3xf32>, %dy: tensor<3x4xf32>)
        -> (tensor<3x4xf32>, tensor<4xf32>) {
      %dx, %dg = mw.rms_norm_grad %x, %g, %rstd, %dy
          : (tensor<3x4xf32>, tensor<4xf32>, tensor<3xf32>, tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<4xf32>)
      return %dx, %dg : tensor<3x4xf32>, tensor<4xf32>
    })mlir",
                           "fwd");
  func::FuncOp bwd = cast<func::FuncOp>(
      SymbolTable::lookupSymbolIn(fwd->getParentOp(), "bwd"));
  std::mt19937 rng(25);
  Tensor x = random(ElemKind::F32, {3, 4}, rng, -2, 2);
  Tensor g = random(ElemKind::F32, {4}, rng, 0.5, 1.5);
  Tensor w = random(ElemKind::F32, {3, 4}, rng);
  SmallVector<Tensor> y = run(fwd, {x, g});
  SmallVector<Tensor> d = run(bwd, {x, g, y[1], w});
  ASSERT_EQ(d.size(), 2u);
  expectGrad(d[0], numericGrad(fwd, {x, g}, 0, w), "dx");
  expectGrad(d[1], numericGrad(fwd, {x, g}, 1, w), "dgamma");
}

TEST_F(EvalFiniteDifferenceTest, EmbeddingGrad) {
  func::FuncOp fwd = parse(R"mlir(
    func.func @fwd(%t: tensor<5x3xf32>, %i: tensor<2x3xi64>) -> tensor<2x3x3xf32> {
      %e = mw.embedding %t, %i : (tensor<5x3xf32>, tensor<2x3xi64>) -> tensor<2x3x3xf32>
      return %e : tensor<2x3x3xf32>
    }
    func.func @bwd(%i: tensor<2x3xi64>, %de: tensor<2x3x3xf32>) -> tensor<5x3xf32> {
      %dt = mw.embedding_grad %i, %de : (tensor<2x3xi64>, tensor<2x3x3xf32>) -> tensor<5x3xf32>
      return %dt : tensor<5x3xf32>
    })mlir",
                           "fwd");
  func::FuncOp bwd = cast<func::FuncOp>(
      SymbolTable::lookupSymbolIn(fwd->getParentOp(), "bwd"));
  std::mt19937 rng(26);
  Tensor table = random(ElemKind::F32, {5, 3}, rng);
  // Row 1 is used three times (its gradient sums three rows of dy), row 2
  // never (zero gradient).
  Tensor idx = i64({2, 3}, {1, 0, 1, 4, 3, 1});
  Tensor w = random(ElemKind::F32, {2, 3, 3}, rng);
  Tensor dt = run1(bwd, {idx, w});
  expectGrad(dt, numericGrad(fwd, {table, idx}, 0, w), "dtable");
  for (int j = 0; j < 3; ++j) {
    EXPECT_EQ(dt.f[2 * 3 + j], 0.0f);
    EXPECT_FLOAT_EQ(dt.f[1 * 3 + j], w.f[0 * 3 + j] + w.f[2 * 3 + j] +
                                         w.f[5 * 3 + j]);
  }
  std::string err = runError(bwd, {i64({2, 3}, {1, 0, 5, 4, 3, 1}), w});
  EXPECT_NE(err.find("embedding index 5 is out of range [0, 5)"),
            std::string::npos)
      << err;
}

TEST_F(EvalFiniteDifferenceTest, CrossEntropyGrad) {
  func::FuncOp fwd = parse(R"mlir(
    func.func @fwd(%l: tensor<4x5xf32>, %y: tensor<4xi32>) -> tensor<f32> {
      %loss = mw.cross_entropy %l, %y : (tensor<4x5xf32>, tensor<4xi32>) -> tensor<f32>
      return %loss : tensor<f32>
    }
    func.func @bwd(%l: tensor<4x5xf32>, %y: tensor<4xi32>, %dloss: tensor<f32>) -> tensor<4x5xf32> {
      %dl = mw.cross_entropy_grad %l, %y, %dloss : (tensor<4x5xf32>, tensor<4xi32>, tensor<f32>) -> tensor<4x5xf32>
      return %dl : tensor<4x5xf32>
    })mlir",
                           "fwd");
  func::FuncOp bwd = cast<func::FuncOp>(
      SymbolTable::lookupSymbolIn(fwd->getParentOp(), "bwd"));
  std::mt19937 rng(27);
  Tensor logits = random(ElemKind::F32, {4, 5}, rng, -2, 2);
  Tensor labels = i32({4}, {2, -100, 4, 0}); // token 1 ignored
  Tensor dloss = f32({}, {2.5});
  Tensor d = run1(bwd, {logits, labels, dloss});
  // dloss weights the scalar loss; the gradient is order 2.5 / 3.
  expectGrad(d, numericGrad(fwd, {logits, labels}, 0, dloss), "dlogits");
  for (int j = 0; j < 5; ++j)
    EXPECT_EQ(d.f[5 + j], 0.0f) << "the ignored token's row is zero";
  // All ignored: zero gradient, not NaN.
  Tensor none = run1(bwd, {logits, i32({4}, {-100, -100, -100, -100}), dloss});
  for (float v : none.f)
    EXPECT_EQ(v, 0.0f);
  std::string err = runError(bwd, {logits, i32({4}, {2, 5, 0, 0}), dloss});
  EXPECT_NE(err.find("label 5 is out of range [0, 5)"), std::string::npos)
      << err;
}

TEST_F(EvalFiniteDifferenceTest, AttentionGrad) {
  // Non-causal with Sk != S and Dv != D (catches swapped extents), and
  // causal with an explicit scale.
  for (bool causal : {false, true}) {
    int64_t sk = causal ? 3 : 4, dv = causal ? 4 : 2;
    std::string attrs = causal ? "{causal, scale = 0.7 : f64}" : "";
    std::string q = "tensor<1x2x3x4xf32>";
    std::string k = llvm::formatv("tensor<1x2x{0}x4xf32>", sk);
    std::string v = llvm::formatv("tensor<1x2x{0}x{1}xf32>", sk, dv);
    std::string o = llvm::formatv("tensor<1x2x3x{0}xf32>", dv);
    std::string lse = "tensor<1x2x3xf32>";
    func::FuncOp fwd = parse(
        llvm::formatv(R"mlir(
      func.func @fwd(%q: {0}, %k: {1}, %v: {2}) -> ({3}, {4}) {{
        %o, %lse = mw.attention %q, %k, %v {5} : ({0}, {1}, {2}) -> ({3}, {4})
        return %o, %lse : {3}, {4}
      }
      func.func @bwd(%q: {0}, %k: {1}, %v: {2}, %o: {3}, %lse: {4}, %do: {3}) -> ({0}, {1}, {2}) {{
        %dq, %dk, %dv = mw.attention_grad %q, %k, %v, %o, %lse, %do {5}
            : ({0}, {1}, {2}, {3}, {4}, {3}) -> ({0}, {1}, {2})
        return %dq, %dk, %dv : {0}, {1}, {2}
      })mlir",
                      q, k, v, o, lse, attrs)
            .str(),
        "fwd");
    if (!fwd)
      return;
    func::FuncOp bwd = cast<func::FuncOp>(
        SymbolTable::lookupSymbolIn(fwd->getParentOp(), "bwd"));
    std::mt19937 rng(causal ? 28 : 29);
    Tensor tq = random(ElemKind::F32, {1, 2, 3, 4}, rng, -1.5, 1.5);
    Tensor tk = random(ElemKind::F32, {1, 2, sk, 4}, rng, -1.5, 1.5);
    Tensor tv = random(ElemKind::F32, {1, 2, sk, dv}, rng, -1.5, 1.5);
    Tensor w = random(ElemKind::F32, {1, 2, 3, dv}, rng);
    SmallVector<Tensor> y = run(fwd, {tq, tk, tv});
    SmallVector<Tensor> d = run(bwd, {tq, tk, tv, y[0], y[1], w});
    ASSERT_EQ(d.size(), 3u);
    std::string what = causal ? "causal " : "non-causal ";
    expectGrad(d[0], numericGrad(fwd, {tq, tk, tv}, 0, w), what + "dq");
    expectGrad(d[1], numericGrad(fwd, {tq, tk, tv}, 1, w), what + "dk");
    expectGrad(d[2], numericGrad(fwd, {tq, tk, tv}, 2, w), what + "dv");
  }
}

//===----------------------------------------------------------------------===//
// Unsupported input and random inputs
//===----------------------------------------------------------------------===//

TEST_F(EvalTest, RandomInputsAreDeterministicAndInRange) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%wte: tensor<7x4xf32>, %tok: tensor<2x8xi32>, %ln: tensor<4xf32> {mw.name = "ln_1.weight"},
                 %lab: tensor<16xi64>, %other: tensor<5xi32>, %t: tensor<i64>, %h: tensor<3xbf16>)
        -> (tensor<2x8x4xf32>, tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
      %e = mw.embedding %wte, %tok : (tensor<7x4xf32>, tensor<2x8xi32>) -> tensor<2x8x4xf32>
      %flat = mw.reshape %e : tensor<2x8x4xf32> -> tensor<16x4xf32>
      %loss = mw.cross_entropy %flat, %lab : (tensor<16x4xf32>, tensor<16xi64>) -> tensor<f32>
      %p, %m, %v = mw.adamw %ln, %ln, %ln, %ln, %t
          : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
      return %e, %loss, %p, %m, %v : tensor<2x8x4xf32>, tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
    })mlir");
  SmallVector<Tensor> a = randomInputs(f, 42), b = randomInputs(f, 42),
                      c = randomInputs(f, 43);
  ASSERT_EQ(a.size(), 7u);
  for (size_t n = 0; n < a.size(); ++n) {
    EXPECT_TRUE(a[n].matches(f.getArgumentTypes()[n])) << n;
    EXPECT_EQ(a[n].f, b[n].f) << n;
    EXPECT_EQ(a[n].i, b[n].i) << n;
  }
  EXPECT_NE(a[0].f, c[0].f);
  for (int64_t v : a[1].i)
    EXPECT_TRUE(v >= 0 && v < 7) << "token " << v; // table rows
  for (int64_t v : a[3].i)
    EXPECT_TRUE(v >= 0 && v < 4) << "label " << v; // classes
  for (int64_t v : a[4].i)
    EXPECT_TRUE(v == 0 || v == 1) << v;
  EXPECT_EQ(a[5].i[0], 1) << "adamw step";
  for (float v : a[2].f) // "...weight" of rank 1: 1 + N(0, 0.02)
    EXPECT_NEAR(v, 1.0f, 0.15f);
  for (float v : a[0].f)
    EXPECT_NEAR(v, 0.0f, 0.15f);
  for (float v : a[6].f)
    EXPECT_EQ(v, roundToKind(ElemKind::BF16, v)) << "bf16 values are rounded";
  // The whole function runs on them.
  SmallVector<Tensor> r = run(f, a);
  ASSERT_EQ(r.size(), 5u);
  EXPECT_TRUE(std::isfinite(r[1].f[0]));
}

TEST_F(EvalTest, RandomInputsStartLossScalingLikeDeepSpeed) {
  // By use as an operand of mw.loss_scale_update (its hysteresis attribute
  // gives cur_hysteresis), else by the names --mw-autodiff gives the state;
  // the role does not matter.
  func::FuncOp f = parse(R"mlir(
    func.func @f(%o: tensor<f32>,
                 %s: tensor<f32> {mw.role = #mw.role<optimizer_state>},
                 %n: tensor<i64> {mw.role = #mw.role<optimizer_state>},
                 %l: tensor<i64>, %h: tensor<i64>,
                 %ns: tensor<f32> {mw.name = "loss_scale.scale"},
                 %ni: tensor<i64> {mw.name = "loss_scale.iter"},
                 %nl: tensor<i64> {mw.name = "loss_scale.last_overflow", mw.role = #mw.role<optimizer_state>},
                 %nh: tensor<i64> {mw.name = "loss_scale.hysteresis"})
        -> (tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>) {
      %s1, %n1, %l1, %h1 = mw.loss_scale_update %o, %s, %n, %l, %h {hysteresis = 3 : i64}
          : (tensor<f32>, tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>)
          -> (tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>)
      return %s1, %n1, %l1, %h1 : tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>
    })mlir");
  SmallVector<Tensor> a = randomInputs(f, 1);
  ASSERT_EQ(a.size(), 9u);
  expectExact(a[1], {65536}, "scale operand");
  expectExact(a[2], {0}, "iter operand");
  expectExact(a[3], {-1}, "last_overflow operand");
  expectExact(a[4], {3}, "cur_hysteresis operand: the op's hysteresis");
  expectExact(a[5], {65536}, "loss_scale.scale");
  expectExact(a[6], {0}, "loss_scale.iter");
  expectExact(a[7], {-1}, "loss_scale.last_overflow");
  expectExact(a[8], {2}, "loss_scale.hysteresis without a use");
}

TEST_F(EvalTest, UnsupportedOpIsAnError) {
  ctx.allowUnregisteredDialects();
  func::FuncOp f = parse(R"mlir(
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %r = "foo.bar"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      return %r : tensor<2xf32>
    })mlir");
  std::string err = runError(f, {f32({2}, {1, 2})});
  EXPECT_NE(err.find("does not support 'foo.bar'"), std::string::npos) << err;
}

} // namespace
