//===- kernels.cpp - The CPU kernel entry point and its checks ------------===//
//
// Implements the API of mwrt/kernels.h: op names, attributes, and
// runCpuKernel, which checks everything a kernel may rely on (arity,
// dtypes, shapes that fit in memory, layouts, aliasing, attribute names)
// before dispatching through one table with a row per op. The per-op checks
// of shapes and attribute values, mirroring the op verifiers, live with the
// kernels.
//
//===----------------------------------------------------------------------===//

#include "support.h"

#include <algorithm>
#include <limits>
#include <new>

using namespace mwrt;
using namespace mwrt::cpu;

namespace {
/// Which outputs may share memory with an input.
enum class Alias {
  None,    ///< no overlap at all
  InPlace, ///< an output may be exactly an input (same data, shape, strides)
  View,    ///< reshape: the output may be the input's own contiguous buffer
};

struct OpSpec {
  OpKind kind;
  const char *name;
  int minIns, maxIns; ///< maxIns < 0: variadic
  int minOuts, maxOuts;
  Alias alias;
  const char *attrs; ///< the op's attribute names, space-separated
  mwrt_status (*run)(KernelCall &);
};

// One row per op, in OpKind order: the generated op table's.
constexpr OpSpec specs[] = {
#define MWRT_OP_SPEC(kind, name, minIns, maxIns, minOuts, maxOuts, alias,      \
                     attrs, kernel)                                            \
  {OpKind::kind, name, minIns, maxIns, minOuts, maxOuts, Alias::alias, attrs,  \
   run##kernel},
    MWRT_FOR_EACH_OP(MWRT_OP_SPEC)
#undef MWRT_OP_SPEC
};

constexpr bool specsInOrder() {
  if (sizeof(specs) / sizeof(specs[0]) != kNumOpKinds)
    return false;
  for (int i = 0; i < kNumOpKinds; ++i)
    if (static_cast<int>(specs[i].kind) != i)
      return false;
  return true;
}
static_assert(specsInOrder(), "specs must have one row per OpKind, in order");

bool hasAttrName(const char *list, std::string_view name) {
  std::string_view rest(list);
  while (!rest.empty()) {
    size_t end = rest.find(' ');
    if (rest.substr(0, end) == name)
      return true;
    if (end == std::string_view::npos)
      break;
    rest.remove_prefix(end + 1);
  }
  return false;
}

/// Element offsets [lo, hi] a tensor touches; false when it has no elements.
bool offsetRange(const TensorRef &t, int64_t &lo, int64_t &hi) {
  if (t.numElements() == 0)
    return false;
  Shape strides = stridesOf(t);
  lo = hi = 0;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    int64_t span = (t.shape[d] - 1) * strides[d];
    (span < 0 ? lo : hi) += span;
  }
  return true;
}

bool overlaps(const TensorRef &a, const TensorRef &b) {
  int64_t aLo, aHi, bLo, bHi;
  if (!offsetRange(a, aLo, aHi) || !offsetRange(b, bLo, bHi))
    return false;
  auto base = [](const TensorRef &t) {
    return reinterpret_cast<uintptr_t>(t.data);
  };
  auto size = [](const TensorRef &t) {
    return static_cast<uintptr_t>(dtypeSize(t.dtype));
  };
  uintptr_t aBegin = base(a) + aLo * size(a),
            aEnd = base(a) + (aHi + 1) * size(a);
  uintptr_t bBegin = base(b) + bLo * size(b),
            bEnd = base(b) + (bHi + 1) * size(b);
  return aBegin < bEnd && bBegin < aEnd;
}

bool sameLayout(const TensorRef &a, const TensorRef &b) {
  return a.data == b.data && a.shape == b.shape &&
         dtypeSize(a.dtype) == dtypeSize(b.dtype) &&
         stridesOf(a) == stridesOf(b);
}

/// Whether distinct indices of `t` address distinct elements: sorted by
/// stride, each dimension must step past everything the smaller ones span.
bool isNonOverlapping(const TensorRef &t) {
  if (t.strides.empty() || t.numElements() <= 1)
    return true;
  std::vector<std::pair<int64_t, int64_t>> dims; // (|stride|, size)
  for (size_t d = 0; d < t.shape.size(); ++d)
    if (t.shape[d] > 1)
      dims.push_back({std::abs(t.strides[d]), t.shape[d]});
  std::sort(dims.begin(), dims.end());
  int64_t span = 0; // largest offset reachable with the dimensions so far
  for (auto [stride, size] : dims) {
    if (stride <= span)
      return false;
    span += stride * (size - 1);
  }
  return true;
}

/// Checks what every kernel relies on about one tensor.
mwrt_status checkTensor(const KernelCall &c, const TensorRef &t,
                        const std::string &what, bool isOutput) {
  if (!isKernelDType(t.dtype))
    return c.fail(what, " has dtype ", dtypeName(t.dtype),
                  "; the kernels take f32, f16, bf16, i32 and i64");
  if (isQuantizedCache(t.dtype) && c.op != OpKind::KvCacheWrite &&
      c.op != OpKind::PagedAttention)
    return c.fail(what, " has dtype ", typeName(t.dtype),
                  ", which only the KV cache ops take");
  if (!t.strides.empty() && t.strides.size() != t.shape.size())
    return c.fail(what, " has ", t.strides.size(), " strides for rank ",
                  t.shape.size());
  // Element count and the span of offsets must fit in int64 bytes, so that
  // no later offset computation can overflow.
  constexpr int64_t limit = std::numeric_limits<int64_t>::max() / 8;
  int64_t count = 1, span = 0;
  bool empty = false;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    int64_t size = t.shape[d];
    if (size < 0)
      return c.fail(what, " has a negative dimension in ",
                    shapeString(t.shape));
    empty |= size == 0;
  }
  for (size_t d = 0; d < t.shape.size() && !empty; ++d) {
    int64_t size = t.shape[d];
    int64_t stride = t.strides.empty() ? 0 : std::abs(t.strides[d]);
    if (count > limit / size ||
        (stride && (stride > limit / size || span > limit - stride * size)))
      return c.fail(what, " of shape ", shapeString(t.shape),
                    " is too large to address");
    count *= size;
    span += stride * size;
  }
  if (count > limit)
    return c.fail(what, " of shape ", shapeString(t.shape),
                  " is too large to address");
  if (!t.data && !empty)
    return c.fail(what, " has no data");
  if (isOutput && !isNonOverlapping(t))
    return c.fail(what, " has strides ", shapeString(t.strides),
                  " under which its elements overlap");
  return MWRT_OK;
}

mwrt_status checkCall(const OpSpec &spec, const KernelCall &c) {
  auto arity = [&](const char *what, size_t got, int lo, int hi) {
    if (static_cast<int>(got) >= lo && (hi < 0 || static_cast<int>(got) <= hi))
      return MWRT_OK;
    if (hi < 0)
      return c.fail("expects at least ", lo, " ", what, "s, got ", got);
    if (lo == hi)
      return c.fail("expects ", lo, " ", what, lo == 1 ? "" : "s", ", got ",
                    got);
    return c.fail("expects ", lo, " to ", hi, " ", what, "s, got ", got);
  };
  MWRT_TRY(arity("operand", c.ins.size(), spec.minIns, spec.maxIns));
  MWRT_TRY(arity("result", c.outs.size(), spec.minOuts, spec.maxOuts));
  for (const auto &entry : c.attrs.entries())
    if (!hasAttrName(spec.attrs, entry.first))
      return c.fail("has no attribute '", entry.first, "'");
  for (size_t i = 0; i < c.ins.size(); ++i)
    MWRT_TRY(checkTensor(c, c.ins[i], "operand #" + std::to_string(i), false));
  for (size_t i = 0; i < c.outs.size(); ++i)
    MWRT_TRY(checkTensor(c, c.outs[i], "result #" + std::to_string(i), true));
  for (size_t i = 0; i < c.outs.size(); ++i) {
    const TensorRef &out = c.outs[i];
    for (size_t j = i + 1; j < c.outs.size(); ++j)
      if (overlaps(out, c.outs[j]))
        return c.fail("results #", i, " and #", j, " overlap");
    for (size_t j = 0; j < c.ins.size(); ++j) {
      const TensorRef &in = c.ins[j];
      if (!overlaps(out, in))
        continue;
      if (spec.alias == Alias::InPlace && sameLayout(out, in))
        continue;
      if (spec.alias == Alias::View && out.data == in.data &&
          out.isContiguous() && in.isContiguous())
        continue;
      if (spec.alias == Alias::None)
        return c.fail("result #", i, " overlaps operand #", j,
                      ", and this op does not compute in place");
      return c.fail("result #", i, " overlaps operand #", j,
                    " without being exactly the same buffer and layout");
    }
  }
  return MWRT_OK;
}
} // namespace

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

bool mwrt::isKernelDType(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16 ||
         dtype == DType::I32 || dtype == DType::I64 || dtype == DType::I8 ||
         dtype == DType::F8_E4M3;
}

int64_t TensorRef::numElements() const { return product(shape); }

bool TensorRef::isContiguous() const {
  if (strides.empty())
    return true;
  if (strides.size() != shape.size())
    return false;
  int64_t expected = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    if (shape[d] != 1 && strides[d] != expected)
      return false;
    expected *= shape[d];
  }
  return true;
}

KernelAttrs &KernelAttrs::set(std::string name, AttrValue value) {
  for (auto &entry : items) {
    if (entry.first == name) {
      entry.second = std::move(value);
      return *this;
    }
  }
  items.emplace_back(std::move(name), std::move(value));
  return *this;
}

KernelAttrs &KernelAttrs::setInt(std::string name, int64_t value) {
  return set(std::move(name), value);
}
KernelAttrs &KernelAttrs::setFloat(std::string name, double value) {
  return set(std::move(name), value);
}
KernelAttrs &KernelAttrs::setBool(std::string name, bool value) {
  return set(std::move(name), value);
}
KernelAttrs &KernelAttrs::setString(std::string name, std::string value) {
  return set(std::move(name), std::move(value));
}
KernelAttrs &KernelAttrs::setInts(std::string name,
                                  std::vector<int64_t> value) {
  return set(std::move(name), std::move(value));
}
KernelAttrs &KernelAttrs::setFloats(std::string name,
                                    std::vector<double> value) {
  return set(std::move(name), std::move(value));
}

const AttrValue *KernelAttrs::find(std::string_view name) const {
  for (const auto &entry : items)
    if (entry.first == name)
      return &entry.second;
  return nullptr;
}

mwrt_status mwrt::runCpuKernel(OpKind kind, const KernelAttrs &attrs,
                               ArrayView<const TensorRef> ins,
                               ArrayView<const TensorRef> outs,
                               const CpuKernelOptions &options) {
  int index = static_cast<int>(kind);
  if (index < 0 || index >= kNumOpKinds)
    return setError(MWRT_INVALID_ARGUMENT,
                    "unknown op kind " + std::to_string(index));
  const OpSpec &spec = specs[index];
  KernelCall call{kind, attrs, ins, outs, options};
  // Scratch buffers are the only allocations; nothing else can throw.
  try {
    MWRT_TRY(checkCall(spec, call));
    return spec.run(call);
  } catch (const std::bad_alloc &) {
    return setError(MWRT_INTERNAL, std::string("'") + spec.name +
                                       "': out of host memory for scratch "
                                       "buffers");
  }
}
