//===- support.cpp - Shared machinery of the CPU kernels ------------------===//
//
// Implements support.h: index walks, the dense
// f32/int64 views of operands and results, and KernelCall's attribute and
// type checks.
//
//===----------------------------------------------------------------------===//

#include "support.h"

#include <cmath>

namespace mwrt::cpu {

//===----------------------------------------------------------------------===//
// Shapes and index walks
//===----------------------------------------------------------------------===//

const char *typeName(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  case DType::I8:
    return "i8";
  case DType::F8_E4M3:
    return "f8E4M3FN";
  default:
    return dtypeName(t);
  }
}

std::string typeString(DType t, const Shape &shape) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + typeName(t) + ">";
}

std::string shapeString(const Shape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

int64_t product(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

Shape rowMajorStrides(const Shape &shape) {
  Shape s(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    s[d] = s[d + 1] * shape[d + 1];
  return s;
}

Shape stridesOf(const TensorRef &t) {
  return t.strides.empty() ? rowMajorStrides(t.shape) : t.strides;
}

Shape broadcastStrides(const Shape &in, const Shape &inStrides,
                       const Shape &out) {
  Shape s(out.size(), 0);
  size_t lead = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d)
    s[lead + d] = in[d] == 1 ? 0 : inStrides[d];
  return s;
}

bool broadcastShapes(const Shape &a, const Shape &b, Shape &out) {
  size_t rank = std::max(a.size(), b.size());
  out.assign(rank, 0);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t r = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (l != r && l != 1 && r != 1)
      return false;
    out[rank - 1 - i] = l == 1 ? r : l;
  }
  return true;
}

template <typename Elem>
static void copyTyped(void *dst, const Shape &dstStrides, const void *src,
                      const Shape &srcStrides, int64_t srcBase,
                      const Shape &shape) {
  auto *d = static_cast<Elem *>(dst);
  const auto *s = static_cast<const Elem *>(src) + srcBase;
  forEachIndex<2>(
      shape, {dstStrides, srcStrides},
      [&](int64_t, const std::array<int64_t, 2> &o) { d[o[0]] = s[o[1]]; });
}

void copyElements(void *dst, const Shape &dstStrides, const void *src,
                  const Shape &srcStrides, int64_t srcBase, const Shape &shape,
                  size_t elemSize) {
  Shape dense = rowMajorStrides(shape);
  if (dstStrides == dense && srcStrides == dense) {
    // Callers never pass overlapping buffers (the dispatcher rejects them).
    if (int64_t n = product(shape))
      std::memcpy(dst, static_cast<const char *>(src) + srcBase * elemSize,
                  n * elemSize);
    return;
  }
  switch (elemSize) {
  case 2:
    return copyTyped<uint16_t>(dst, dstStrides, src, srcStrides, srcBase,
                               shape);
  case 4:
    return copyTyped<uint32_t>(dst, dstStrides, src, srcStrides, srcBase,
                               shape);
  default:
    return copyTyped<uint64_t>(dst, dstStrides, src, srcStrides, srcBase,
                               shape);
  }
}

//===----------------------------------------------------------------------===//
// Dense views
//===----------------------------------------------------------------------===//

static float loadFloat(const TensorRef &t, int64_t offset) {
  switch (t.dtype) {
  case DType::F16:
    return fromHalf(static_cast<const uint16_t *>(t.data)[offset]);
  case DType::BF16:
    return fromBFloat(static_cast<const uint16_t *>(t.data)[offset]);
  default:
    return static_cast<const float *>(t.data)[offset];
  }
}

static int64_t loadInt(const TensorRef &t, int64_t offset) {
  if (t.dtype == DType::I32)
    return static_cast<const int32_t *>(t.data)[offset];
  return static_cast<const int64_t *>(t.data)[offset];
}

double elementAsDouble(const TensorRef &t, int64_t offset) {
  return isFloat(t.dtype) ? static_cast<double>(loadFloat(t, offset))
                          : static_cast<double>(loadInt(t, offset));
}

FloatSrc::FloatSrc(const TensorRef &t) {
  if (t.dtype == DType::F32 && t.isContiguous()) {
    ptr = static_cast<const float *>(t.data);
    return;
  }
  scratch.resize(t.numElements());
  forEachIndex<1>(t.shape, {stridesOf(t)},
                  [&](int64_t n, const std::array<int64_t, 1> &o) {
                    scratch[n] = loadFloat(t, o[0]);
                  });
  ptr = scratch.data();
}

FloatDst::FloatDst(const TensorRef &t, bool zero) : out(t) {
  if (t.dtype == DType::F32 && t.isContiguous()) {
    ptr = static_cast<float *>(t.data);
    if (zero && ptr)
      std::fill(ptr, ptr + t.numElements(), 0.0f);
    return;
  }
  scratch.assign(t.numElements(), 0.0f);
  ptr = scratch.data();
}

void FloatDst::commit() {
  if (scratch.empty())
    return;
  forEachIndex<1>(out.shape, {stridesOf(out)},
                  [&](int64_t n, const std::array<int64_t, 1> &o) {
                    float v = scratch[n];
                    switch (out.dtype) {
                    case DType::F16:
                      static_cast<uint16_t *>(out.data)[o[0]] = toHalf(v);
                      break;
                    case DType::BF16:
                      static_cast<uint16_t *>(out.data)[o[0]] = toBFloat(v);
                      break;
                    default:
                      static_cast<float *>(out.data)[o[0]] = v;
                    }
                  });
}

IntSrc::IntSrc(const TensorRef &t) {
  if (t.dtype == DType::I64 && t.isContiguous()) {
    ptr = static_cast<const int64_t *>(t.data);
    return;
  }
  scratch.resize(t.numElements());
  forEachIndex<1>(t.shape, {stridesOf(t)},
                  [&](int64_t n, const std::array<int64_t, 1> &o) {
                    scratch[n] = loadInt(t, o[0]);
                  });
  ptr = scratch.data();
}

IntDst::IntDst(const TensorRef &t) : out(t) {
  if (t.dtype == DType::I64 && t.isContiguous()) {
    ptr = static_cast<int64_t *>(t.data);
    return;
  }
  scratch.assign(t.numElements(), 0);
  ptr = scratch.data();
}

void IntDst::commit() {
  if (scratch.empty())
    return;
  forEachIndex<1>(out.shape, {stridesOf(out)},
                  [&](int64_t n, const std::array<int64_t, 1> &o) {
                    if (out.dtype == DType::I32)
                      static_cast<int32_t *>(out.data)[o[0]] =
                          static_cast<int32_t>(wrapTo(DType::I32, scratch[n]));
                    else
                      static_cast<int64_t *>(out.data)[o[0]] = scratch[n];
                  });
}

//===----------------------------------------------------------------------===//
// KernelCall
//===----------------------------------------------------------------------===//

mwrt_status KernelCall::getInt(const char *name, int64_t &value,
                               std::optional<int64_t> byDefault) const {
  const AttrValue *v = attrs.find(name);
  if (!v) {
    if (!byDefault)
      return fail("missing attribute '", name, "'");
    value = *byDefault;
    return MWRT_OK;
  }
  if (const auto *i = std::get_if<int64_t>(v)) {
    value = *i;
    return MWRT_OK;
  }
  return fail("attribute '", name, "' must be an integer");
}

mwrt_status KernelCall::getFloat(const char *name, double &value,
                                 std::optional<double> byDefault) const {
  const AttrValue *v = attrs.find(name);
  if (!v) {
    if (!byDefault)
      return fail("missing attribute '", name, "'");
    value = *byDefault;
    return MWRT_OK;
  }
  if (const auto *f = std::get_if<double>(v)) {
    value = *f;
    return MWRT_OK;
  }
  if (const auto *i = std::get_if<int64_t>(v)) {
    value = static_cast<double>(*i);
    return MWRT_OK;
  }
  return fail("attribute '", name, "' must be a number");
}

mwrt_status KernelCall::getBool(const char *name, bool &value) const {
  const AttrValue *v = attrs.find(name);
  value = false;
  if (!v)
    return MWRT_OK;
  if (const auto *b = std::get_if<bool>(v)) {
    value = *b;
    return MWRT_OK;
  }
  return fail("attribute '", name, "' must be a bool");
}

mwrt_status KernelCall::getInts(const char *name, Shape &value) const {
  const AttrValue *v = attrs.find(name);
  if (!v)
    return fail("missing attribute '", name, "'");
  if (const auto *list = std::get_if<std::vector<int64_t>>(v)) {
    value = *list;
    return MWRT_OK;
  }
  return fail("attribute '", name, "' must be a list of integers");
}

mwrt_status KernelCall::getFormulaParams(const ElementwiseSpec &spec,
                                         double *params) const {
  for (int i = 0; i < spec.numParams; ++i) {
    const ParamSpec &param = spec.params[i];
    double &p = params[i];
    if (param.required && !has(param.name))
      return fail("missing attribute '", param.name, "'");
    switch (param.kind) {
    case ParamKind::Float:
      MWRT_TRY(getFloat(param.name, p, param.byDefault));
      break;
    case ParamKind::Int: {
      int64_t v = 0;
      MWRT_TRY(getInt(param.name, v, static_cast<int64_t>(param.byDefault)));
      p = static_cast<double>(v);
      break;
    }
    case ParamKind::Bool: {
      bool v = false;
      MWRT_TRY(getBool(param.name, v));
      p = has(param.name) ? (v ? 1.0 : 0.0) : param.byDefault;
      break;
    }
    case ParamKind::Enum: {
      // The plan spells an enum by its case name; its number is accepted too.
      std::vector<std::string> cases;
      std::istringstream words(param.cases);
      for (std::string w; words >> w;)
        cases.push_back(w);
      const AttrValue *v = attrs.find(param.name);
      p = param.byDefault;
      if (!v)
        break;
      bool ok = false;
      if (const auto *str = std::get_if<std::string>(v)) {
        for (size_t c = 0; c < cases.size() && !ok; ++c)
          if (*str == cases[c])
            p = static_cast<double>(c), ok = true;
      } else if (const auto *n = std::get_if<int64_t>(v)) {
        ok = *n >= 0 && *n < static_cast<int64_t>(cases.size());
        p = static_cast<double>(*n);
      }
      if (ok)
        break;
      std::string allowed;
      for (size_t c = 0; c < cases.size(); ++c)
        allowed += (c == 0 ? "" : c + 1 == cases.size() ? " or " : ", ") +
                   ("\"" + cases[c] + "\"");
      return fail("attribute '", param.name, "' must be ", allowed);
    }
    }
  }
  return MWRT_OK;
}

mwrt_status KernelCall::getAxis(int64_t rank, int64_t &axis) const {
  MWRT_TRY(getInt("axis", axis));
  if (axis < 0 || axis >= rank)
    return fail("axis ", axis, " is out of range for rank ", rank);
  return MWRT_OK;
}

mwrt_status KernelCall::getAxes(int64_t rank, Shape &axes) const {
  MWRT_TRY(getInts("axes", axes));
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= rank)
      return fail("axis ", axes[i], " is out of range for rank ", rank);
    if (i && axes[i] <= axes[i - 1])
      return fail("axes must be strictly increasing, got ", shapeString(axes));
  }
  return MWRT_OK;
}

mwrt_status KernelCall::expectType(const TensorRef &t, const char *name,
                                   const Shape &shape, DType dtype) const {
  if (t.dtype != dtype || t.shape != shape)
    return fail(name, " type ", typeString(t.dtype, t.shape),
                " does not match the expected ", typeString(dtype, shape));
  return MWRT_OK;
}

mwrt_status KernelCall::expectSameType(const TensorRef &t, const char *name,
                                       const TensorRef &like,
                                       const char *likeName) const {
  if (t.dtype != like.dtype || t.shape != like.shape)
    return fail(name, " type ", typeString(t.dtype, t.shape),
                " differs from the ", likeName, " type ",
                typeString(like.dtype, like.shape));
  return MWRT_OK;
}

mwrt_status KernelCall::expectFloat(const TensorRef &t,
                                    const char *name) const {
  if (!isFloat(t.dtype))
    return fail(name, " must have a float element type (f32, f16, bf16), got ",
                typeName(t.dtype));
  return MWRT_OK;
}

mwrt_status KernelCall::expectInt(const TensorRef &t, const char *name) const {
  if (isFloat(t.dtype))
    return fail(name, " must have an integer element type (i32, i64), got ",
                typeName(t.dtype));
  return MWRT_OK;
}

mwrt_status KernelCall::expectRank(const TensorRef &t, const char *name,
                                   size_t rank, const char *layout) const {
  if (t.shape.size() == rank)
    return MWRT_OK;
  if (layout)
    return fail(name, " must have rank ", rank, " (", layout, "), got ",
                t.shape.size());
  return fail(name, " must have rank ", rank, ", got ", t.shape.size());
}

} // namespace mwrt::cpu
