//===- shape_ops.cpp - reshape, transpose, broadcast_to, slice, concat ----===//
//
// The data-movement ops: elements are copied unchanged (no rounding: the
// result has the input's dtype), reading each input through strides derived
// from its own layout, so strided inputs and outputs cost no extra copy.
// reshape on an input that is the output's own buffer is a no-op: after
// bufferization a reshape is a view.
//
//===----------------------------------------------------------------------===//

#include "support.h"

namespace mwrt::cpu {

static mwrt_status expectSameElement(const KernelCall &c, const TensorRef &t,
                                     const char *name, const TensorRef &like,
                                     const char *likeName) {
  if (t.dtype != like.dtype)
    return c.fail(name, " element type ", typeName(t.dtype),
                  " differs from the ", likeName, " element type ",
                  typeName(like.dtype));
  return MWRT_OK;
}

/// Copies `in` (read at `base` with `srcStrides`, one per result dimension)
/// into the result.
static void copyInto(const TensorRef &out, const TensorRef &in,
                     const Shape &srcStrides, int64_t base = 0) {
  copyElements(out.data, stridesOf(out), in.data, srcStrides, base, out.shape,
               dtypeSize(out.dtype));
}

mwrt_status runReshape(KernelCall &c) {
  const TensorRef &in = c.in(0), &out = c.out(0);
  MWRT_TRY(expectSameElement(c, out, "result", in, "input"));
  if (in.numElements() != out.numElements())
    return c.fail("element count changes from ", in.numElements(), " to ",
                  out.numElements());
  if (in.data == out.data && in.isContiguous() && out.isContiguous())
    return MWRT_OK; // a view of its own input
  if (in.isContiguous()) {
    // Row-major elements of the input, read under the output's shape.
    copyInto(out, in, rowMajorStrides(out.shape));
    return MWRT_OK;
  }
  // A strided input is walked in its own shape, into the row-major output
  // or, for a strided output too, through a dense copy.
  size_t size = dtypeSize(in.dtype);
  if (out.isContiguous()) {
    copyElements(out.data, rowMajorStrides(in.shape), in.data, stridesOf(in), 0,
                 in.shape, size);
    return MWRT_OK;
  }
  std::vector<char> dense(in.numElements() * size);
  copyElements(dense.data(), rowMajorStrides(in.shape), in.data, stridesOf(in),
               0, in.shape, size);
  copyElements(out.data, stridesOf(out), dense.data(),
               rowMajorStrides(out.shape), 0, out.shape, size);
  return MWRT_OK;
}

mwrt_status runTranspose(KernelCall &c) {
  const TensorRef &in = c.in(0), &out = c.out(0);
  Shape perm;
  MWRT_TRY(c.getInts("permutation", perm));
  size_t rank = in.shape.size();
  if (perm.size() != rank)
    return c.fail("permutation has ", perm.size(), " entries for rank ", rank);
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[p])
      return c.fail("permutation ", shapeString(perm),
                    " is not a permutation of [0, ", rank, ")");
    seen[p] = true;
  }
  Shape shape, srcStrides, inStrides = stridesOf(in);
  for (int64_t p : perm) {
    shape.push_back(in.shape[p]);
    srcStrides.push_back(inStrides[p]);
  }
  MWRT_TRY(c.expectType(out, "result", shape, in.dtype));
  copyInto(out, in, srcStrides);
  return MWRT_OK;
}

mwrt_status runBroadcastTo(KernelCall &c) {
  const TensorRef &in = c.in(0), &out = c.out(0);
  MWRT_TRY(expectSameElement(c, out, "result", in, "input"));
  if (in.shape.size() > out.shape.size())
    return c.fail("cannot broadcast rank ", in.shape.size(), " to rank ",
                  out.shape.size());
  size_t lead = out.shape.size() - in.shape.size();
  for (size_t i = 0; i < in.shape.size(); ++i)
    if (in.shape[i] != 1 && in.shape[i] != out.shape[lead + i])
      return c.fail("input dimension ", i, " of size ", in.shape[i],
                    " cannot broadcast to size ", out.shape[lead + i]);
  copyInto(out, in, broadcastStrides(in.shape, stridesOf(in), out.shape));
  return MWRT_OK;
}

mwrt_status runSlice(KernelCall &c) {
  const TensorRef &in = c.in(0), &out = c.out(0);
  size_t rank = in.shape.size();
  Shape offsets, sizes, steps(rank, 1);
  MWRT_TRY(c.getInts("offsets", offsets));
  MWRT_TRY(c.getInts("sizes", sizes));
  if (c.has("strides"))
    MWRT_TRY(c.getInts("strides", steps));
  for (const auto &[name, list] :
       {std::pair<const char *, const Shape *>{"offsets", &offsets},
        {"sizes", &sizes},
        {"strides", &steps}})
    if (list->size() != rank)
      return c.fail(name, " has ", list->size(), " entries for rank ", rank);
  Shape inStrides = stridesOf(in), srcStrides(rank);
  int64_t base = 0;
  for (size_t i = 0; i < rank; ++i) {
    if (offsets[i] < 0 || sizes[i] < 1 || steps[i] < 1)
      return c.fail("dimension ", i, " has offset ", offsets[i], ", size ",
                    sizes[i], ", stride ", steps[i],
                    "; offsets must be >= 0, sizes and strides >= 1");
    // Compared without forming offset + (size - 1) * stride, which may
    // overflow for hostile values.
    if (offsets[i] >= in.shape[i] ||
        (sizes[i] - 1) > (in.shape[i] - 1 - offsets[i]) / steps[i])
      return c.fail("slice along dimension ", i, " (offset ", offsets[i],
                    ", size ", sizes[i], ", stride ", steps[i],
                    ") reads past its size ", in.shape[i]);
    base += offsets[i] * inStrides[i];
    srcStrides[i] = steps[i] * inStrides[i];
  }
  MWRT_TRY(c.expectType(out, "result", sizes, in.dtype));
  copyInto(out, in, srcStrides, base);
  return MWRT_OK;
}

mwrt_status runConcat(KernelCall &c) {
  const TensorRef &first = c.in(0), &out = c.out(0);
  int64_t rank = static_cast<int64_t>(first.shape.size()), axis;
  MWRT_TRY(c.getAxis(rank, axis));
  Shape shape = first.shape;
  for (size_t i = 1; i < c.ins.size(); ++i) {
    const TensorRef &in = c.in(i);
    MWRT_TRY(expectSameElement(c, in, "input", first, "first input"));
    bool ok = static_cast<int64_t>(in.shape.size()) == rank;
    for (int64_t d = 0; ok && d < rank; ++d)
      ok = d == axis || in.shape[d] == shape[d];
    if (!ok)
      return c.fail("input #", i, " has shape ", shapeString(in.shape),
                    ", which differs from input #0's ",
                    shapeString(first.shape), " outside axis ", axis);
    shape[axis] += in.shape[axis];
  }
  MWRT_TRY(c.expectType(out, "result", shape, first.dtype));
  // Each input goes to its own window of the result along `axis`.
  Shape outStrides = stridesOf(out);
  size_t size = dtypeSize(out.dtype);
  int64_t at = 0;
  for (const TensorRef &in : c.ins) {
    char *dst = static_cast<char *>(out.data) + at * outStrides[axis] * size;
    copyElements(dst, outStrides, in.data, stridesOf(in), 0, in.shape, size);
    at += in.shape[axis];
  }
  return MWRT_OK;
}

} // namespace mwrt::cpu
