//===- elementwise.cpp - Constants, elementwise ops, casts, select --------===//
//
// The evaluator's constant, splat, cast, found_inf and select kernels, and
// one kernel for every op with a formula (unary and binary ops, activation
// gradients), which computes each element with the generated op table's
// dispatch to mwrt/formulas.h. Each output element depends only on the
// input elements at its own index (broadcast operands aside) and is written
// after they are read, so an output may be exactly one of its inputs.
//
//===----------------------------------------------------------------------===//

#include "support.h"

#include <algorithm>
#include <cmath>

namespace mwrt::cpu {

//===----------------------------------------------------------------------===//
// constant and splat
//===----------------------------------------------------------------------===//

/// Whether the integral double `v` fits in integer type `t`.
static bool fitsInt(DType t, double v) {
  double limit = t == DType::I32 ? 2147483648.0 : 9223372036854775808.0;
  return v >= -limit && v < limit;
}

mwrt_status runConstant(KernelCall &c) {
  const TensorRef &out = c.out(0);
  int64_t n = out.numElements();
  const AttrValue *value = c.attrs.find("value");
  if (!value)
    return c.fail("missing attribute 'value'");
  // A list of n values, or of one value for a splat constant.
  auto checkCount = [&](size_t count) {
    if (static_cast<int64_t>(count) == n || count == 1)
      return MWRT_OK;
    return c.fail("'value' has ", count, " elements for result type ",
                  typeString(out.dtype, out.shape));
  };
  if (const auto *bytes = std::get_if<std::string>(value)) {
    // Raw little-endian elements of the result's dtype.
    size_t size = dtypeSize(out.dtype);
    if (bytes->size() % size)
      return c.fail("'value' has ", bytes->size(),
                    " bytes, not a whole number of ", typeName(out.dtype),
                    " elements");
    MWRT_TRY(checkCount(bytes->size() / size));
    Shape srcStrides = bytes->size() == size ? Shape(out.shape.size(), 0)
                                             : rowMajorStrides(out.shape);
    copyElements(out.data, stridesOf(out), bytes->data(), srcStrides, 0,
                 out.shape, size);
    return MWRT_OK;
  }
  if (isFloat(out.dtype)) {
    const auto *list = std::get_if<std::vector<double>>(value);
    if (!list)
      return c.fail("'value' of a ", typeName(out.dtype),
                    " constant must be a list of floats or raw bytes");
    MWRT_TRY(checkCount(list->size()));
    FloatDst dst(out);
    for (int64_t i = 0; i < n; ++i)
      dst[i] = roundOnceTo(out.dtype, (*list)[list->size() == 1 ? 0 : i]);
    dst.commit();
    return MWRT_OK;
  }
  const auto *list = std::get_if<std::vector<int64_t>>(value);
  if (!list)
    return c.fail("'value' of a ", typeName(out.dtype),
                  " constant must be a list of integers or raw bytes");
  MWRT_TRY(checkCount(list->size()));
  for (int64_t v : *list)
    if (wrapTo(out.dtype, v) != v)
      return c.fail("value ", v, " does not fit in ", typeName(out.dtype));
  IntDst dst(out);
  for (int64_t i = 0; i < n; ++i)
    dst[i] = (*list)[list->size() == 1 ? 0 : i];
  dst.commit();
  return MWRT_OK;
}

mwrt_status runSplat(KernelCall &c) {
  const TensorRef &out = c.out(0);
  double v;
  MWRT_TRY(c.getFloat("value", v));
  if (isFloat(out.dtype)) {
    FloatDst dst(out);
    std::fill(dst.data(), dst.data() + out.numElements(),
              roundOnceTo(out.dtype, v));
    dst.commit();
    return MWRT_OK;
  }
  if (std::trunc(v) != v || std::isinf(v))
    return c.fail("value ", v, " is not an integer, as element type ",
                  typeName(out.dtype), " requires");
  if (!fitsInt(out.dtype, v))
    return c.fail("value ", v, " does not fit in ", typeName(out.dtype));
  IntDst dst(out);
  std::fill(dst.data(), dst.data() + out.numElements(),
            wrapTo(out.dtype, static_cast<int64_t>(v)));
  dst.commit();
  return MWRT_OK;
}

//===----------------------------------------------------------------------===//
// Ops with a formula: unary, binary with broadcasting, activation gradients
//===----------------------------------------------------------------------===//

mwrt_status checkElementwise(const KernelCall &c, Shape &shape,
                             double *params) {
  const ElementwiseSpec &spec = *elementwiseSpec(c.op);
  const TensorRef &a = c.in(0), &out = c.out(0);
  const char *aName = spec.operandNames[0];
  if (!spec.acceptsIntegers)
    MWRT_TRY(c.expectFloat(a, aName));
  if (spec.arity == 1) {
    MWRT_TRY(c.expectSameType(out, "result", a, aName));
    shape = a.shape;
    return c.getFormulaParams(spec, params);
  }
  const TensorRef &b = c.in(1);
  const char *bName = spec.operandNames[1];
  if (spec.sameShape) {
    MWRT_TRY(c.expectSameType(b, bName, a, aName));
    MWRT_TRY(c.expectSameType(out, "result", a, aName));
    shape = a.shape;
  } else {
    if (a.dtype != b.dtype)
      return c.fail(bName, " element type ", typeName(b.dtype),
                    " differs from the ", aName, " element type ",
                    typeName(a.dtype));
    if (!broadcastShapes(a.shape, b.shape, shape))
      return c.fail("operand shapes ", shapeString(a.shape), " and ",
                    shapeString(b.shape), " are not broadcast-compatible");
    MWRT_TRY(c.expectType(out, "result", shape, a.dtype));
  }
  return c.getFormulaParams(spec, params);
}

mwrt_status runElementwise(KernelCall &c) {
  Shape shape;
  double p[kMaxFormulaParams] = {};
  MWRT_TRY(checkElementwise(c, shape, p));
  const TensorRef &a = c.in(0), &out = c.out(0);
  OpKind op = c.op;
  if (c.ins.size() == 1) {
    int64_t n = a.numElements();
    if (!isFloat(a.dtype)) {
      IntSrc x(a);
      IntDst r(out);
      for (int64_t i = 0; i < n; ++i)
        r[i] = wrapTo(out.dtype, applyUnaryFormula(op, x[i], p));
      r.commit();
      return MWRT_OK;
    }
    FloatSrc x(a);
    FloatDst r(out);
    parallelFor(c.options, n, kElementGrain, [&](int, int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i)
        r[i] = applyUnaryFormula(op, x[i], p);
    });
    r.commit();
    return MWRT_OK;
  }

  const TensorRef &b = c.in(1);
  std::array<Shape, 2> strides = {
      broadcastStrides(a.shape, rowMajorStrides(a.shape), shape),
      broadcastStrides(b.shape, rowMajorStrides(b.shape), shape)};
  if (isFloat(out.dtype)) {
    FloatSrc x(a), y(b);
    FloatDst r(out);
    if (a.shape == shape && b.shape == shape) { // no broadcast: by element
      parallelFor(c.options, out.numElements(), kElementGrain,
                  [&](int, int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i)
          r[i] = applyBinaryFormula(op, x[i], y[i], p);
      });
      r.commit();
      return MWRT_OK;
    }
    forEachIndex<2>(shape, strides,
                    [&](int64_t n, const std::array<int64_t, 2> &o) {
                      r[n] = applyBinaryFormula(op, x[o[0]], y[o[1]], p);
                    });
    r.commit();
    return MWRT_OK;
  }
  IntSrc x(a), y(b);
  // Checked before anything is written, as the evaluator fails the whole op.
  // Every element of rhs is used once the result has any element.
  if (op == OpKind::Div && out.numElements() > 0)
    for (int64_t i = 0, e = b.numElements(); i < e; ++i)
      if (y[i] == 0)
        return c.fail("integer division by zero");
  IntDst r(out);
  DType t = out.dtype;
  forEachIndex<2>(
      shape, strides, [&](int64_t n, const std::array<int64_t, 2> &o) {
        r[n] = wrapTo(t, applyBinaryFormula(op, x[o[0]], y[o[1]], p));
      });
  r.commit();
  return MWRT_OK;
}

//===----------------------------------------------------------------------===//
// cast
//===----------------------------------------------------------------------===//

mwrt_status runCast(KernelCall &c) {
  const TensorRef &in = c.in(0), &out = c.out(0);
  if (out.shape != in.shape)
    return c.fail("result shape ", shapeString(out.shape),
                  " differs from the input shape ", shapeString(in.shape));
  int64_t n = in.numElements();
  if (isFloat(out.dtype)) {
    FloatDst r(out);
    if (isFloat(in.dtype)) {
      FloatSrc x(in);
      for (int64_t i = 0; i < n; ++i)
        r[i] = roundTo(out.dtype, x[i]);
    } else {
      IntSrc x(in);
      for (int64_t i = 0; i < n; ++i)
        r[i] = intTo(out.dtype, x[i]);
    }
    r.commit();
    return MWRT_OK;
  }
  if (!isFloat(in.dtype)) {
    IntSrc x(in);
    IntDst r(out);
    for (int64_t i = 0; i < n; ++i)
      r[i] = wrapTo(out.dtype, x[i]);
    r.commit();
    return MWRT_OK;
  }
  // Float to integer truncates toward zero; anything that does not fit fails
  // the whole op, checked before any element is written.
  FloatSrc x(in);
  double lo = out.dtype == DType::I32 ? -2147483648.0 : -9.2233720368547758e18;
  double hi = out.dtype == DType::I32 ? 2147483647.0 : 9.2233720368547748e18;
  for (int64_t i = 0; i < n; ++i) {
    double v = std::trunc(static_cast<double>(x[i]));
    if (!(v >= lo && v <= hi))
      return c.fail("cannot cast ", x[i], " to ", typeName(out.dtype),
                    ": not finite or out of range");
  }
  IntDst r(out);
  for (int64_t i = 0; i < n; ++i)
    r[i] = static_cast<int64_t>(std::trunc(static_cast<double>(x[i])));
  r.commit();
  return MWRT_OK;
}

//===----------------------------------------------------------------------===//
// found_inf and select
//===----------------------------------------------------------------------===//

mwrt_status runFoundInf(KernelCall &c) {
  for (size_t i = 0; i < c.ins.size(); ++i)
    MWRT_TRY(c.expectFloat(c.in(i), ("input #" + std::to_string(i)).c_str()));
  MWRT_TRY(c.expectType(c.out(0), "result", {}, DType::F32));
  bool found = false;
  for (const TensorRef &t : c.ins) {
    FloatSrc x(t);
    for (int64_t i = 0, n = t.numElements(); i < n && !found; ++i)
      found = !std::isfinite(x[i]);
  }
  *static_cast<float *>(c.out(0).data) = found ? 1.0f : 0.0f;
  return MWRT_OK;
}

mwrt_status runSelect(KernelCall &c) {
  const TensorRef &cond = c.in(0), &t = c.in(1), &f = c.in(2), &out = c.out(0);
  MWRT_TRY(c.expectType(cond, "condition", {}, DType::F32));
  MWRT_TRY(c.expectSameType(f, "false_value", t, "true_value"));
  MWRT_TRY(c.expectSameType(out, "result", t, "true_value"));
  // NaN is != 0, so a NaN flag selects the true value.
  const TensorRef &chosen =
      *static_cast<const float *>(cond.data) != 0.0f ? t : f;
  if (chosen.data == out.data && stridesOf(chosen) == stridesOf(out))
    return MWRT_OK; // already in place
  copyElements(out.data, stridesOf(out), chosen.data, stridesOf(chosen), 0,
               out.shape, dtypeSize(out.dtype));
  return MWRT_OK;
}

mwrt_status runWait(KernelCall &c) {
  const TensorRef &in = c.in(0), &out = c.out(0);
  MWRT_TRY(c.expectSameType(out, "result", in, "input"));
  // The CPU backend runs collectives to completion where they stand, so a
  // wait has nothing to wait for; in place it moves nothing either.
  if (in.data == out.data && stridesOf(in) == stridesOf(out))
    return MWRT_OK;
  copyElements(out.data, stridesOf(out), in.data, stridesOf(in), 0, out.shape,
               dtypeSize(out.dtype));
  return MWRT_OK;
}

mwrt_status runFetch(KernelCall &c) {
  const TensorRef &in = c.in(0), &out = c.out(0);
  MWRT_TRY(c.expectSameType(out, "result", in, "input"));
  int64_t layer;
  MWRT_TRY(c.getInt("layer", layer, 0));
  if (layer < 0)
    return c.fail("layer must be >= 0");
  // The synchronous fallback: the copy from the host (or staged file) weight
  // into its slot, where the fetch stands; its wait then finds it done.
  copyElements(out.data, stridesOf(out), in.data, stridesOf(in), 0, out.shape,
               dtypeSize(out.dtype));
  return MWRT_OK;
}

} // namespace mwrt::cpu
