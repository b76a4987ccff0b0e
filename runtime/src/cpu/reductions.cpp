//===- reductions.cpp - Reductions and the softmax family -----------------===//
//
// reduce_sum/max/mean, reduce_max_grad, softmax, log_softmax and their
// gradients. The evaluator walks a reduction's input in row-major order,
// accumulating into each output element; here each output element's group is
// walked in the same (row-major) order with a local accumulator, which adds
// the same values in the same order, so the bits agree without a scratch
// tensor of accumulators. The softmax family reads a whole row before
// writing it, so its result may be written over its input in place.
//
//===----------------------------------------------------------------------===//

#include "support.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mwrt::cpu {

namespace {
/// The input of a reduction split into the kept dimensions (one group per
/// output element, in output order) and the reduced ones (the members of a
/// group, in row-major order), as offsets into the dense input.
struct ReductionWalk {
  Shape keptShape, keptStrides, reducedShape, reducedStrides;
  int64_t count = 1; ///< members per group

  ReductionWalk(const Shape &shape, const Shape &axes) {
    Shape strides = rowMajorStrides(shape);
    for (size_t d = 0; d < shape.size(); ++d) {
      bool reduced = std::find(axes.begin(), axes.end(),
                               static_cast<int64_t>(d)) != axes.end();
      (reduced ? reducedShape : keptShape).push_back(shape[d]);
      (reduced ? reducedStrides : keptStrides).push_back(strides[d]);
      if (reduced)
        count *= shape[d];
    }
  }

  /// Calls group(outIndex, members) per output element, where
  /// members(fn) calls fn(inputOffset) for each member in order.
  template <typename Fn> void run(Fn &&group) const {
    Shape idx(reducedShape.size());
    forEachIndex<1>(keptShape, {keptStrides},
                    [&](int64_t n, const std::array<int64_t, 1> &base) {
                      auto members = [&](auto &&fn) {
                        walkGroup(base[0], idx, fn);
                      };
                      group(n, members);
                    });
  }

private:
  /// forEachIndex over the reduced dimensions without allocating.
  template <typename Fn>
  void walkGroup(int64_t base, Shape &idx, Fn &&fn) const {
    if (count == 0)
      return;
    std::fill(idx.begin(), idx.end(), 0);
    int64_t off = base, rank = static_cast<int64_t>(idx.size());
    for (int64_t n = 0; n < count; ++n) {
      fn(off);
      for (int64_t d = rank - 1; d >= 0; --d) {
        off += reducedStrides[d];
        if (++idx[d] < reducedShape[d])
          break;
        off -= reducedStrides[d] * reducedShape[d];
        idx[d] = 0;
      }
    }
  }
};

/// The shape a reduction of `shape` over `axes` produces.
Shape reducedShape(const Shape &shape, const Shape &axes, bool keepdims) {
  Shape out;
  for (size_t d = 0; d < shape.size(); ++d) {
    bool reduced = std::find(axes.begin(), axes.end(),
                             static_cast<int64_t>(d)) != axes.end();
    if (!reduced)
      out.push_back(shape[d]);
    else if (keepdims)
      out.push_back(1);
  }
  return out;
}
} // namespace

//===----------------------------------------------------------------------===//
// reduce_sum, reduce_max, reduce_mean, reduce_max_grad
//===----------------------------------------------------------------------===//

mwrt_status runReduce(KernelCall &c) {
  const TensorRef &in = c.in(0), &out = c.out(0);
  if (c.op == OpKind::ReduceMean)
    MWRT_TRY(c.expectFloat(in, "input"));
  Shape axes;
  bool keepdims;
  MWRT_TRY(c.getAxes(static_cast<int64_t>(in.shape.size()), axes));
  MWRT_TRY(c.getBool("keepdims", keepdims));
  MWRT_TRY(c.expectType(out, "result", reducedShape(in.shape, axes, keepdims),
                        in.dtype));
  ReductionWalk walk(in.shape, axes);
  bool isMax = c.op == OpKind::ReduceMax;
  if (!isFloat(in.dtype)) {
    IntSrc x(in);
    IntDst r(out);
    walk.run([&](int64_t n, auto members) {
      int64_t acc = 0;
      bool seen = false;
      members([&](int64_t off) {
        int64_t v = x[off];
        if (isMax)
          acc = !seen ? v : std::max(acc, v);
        else
          acc = static_cast<int64_t>(static_cast<uint64_t>(acc) +
                                     static_cast<uint64_t>(v));
        seen = true;
      });
      r[n] = wrapTo(out.dtype, acc);
    });
    r.commit();
    return MWRT_OK;
  }
  FloatSrc x(in);
  FloatDst r(out);
  float count = static_cast<float>(walk.count);
  walk.run([&](int64_t n, auto members) {
    float acc = 0.0f;
    bool seen = false;
    members([&](int64_t off) {
      acc = reduceStep(isMax, acc, x[off], seen);
      seen = true;
    });
    r[n] = c.op == OpKind::ReduceMean ? acc / count : acc;
  });
  r.commit();
  return MWRT_OK;
}

mwrt_status runReduceMaxGrad(KernelCall &c) {
  const TensorRef &in = c.in(0), &m = c.in(1), &dm = c.in(2), &out = c.out(0);
  MWRT_TRY(c.expectFloat(in, "input"));
  Shape axes;
  bool keepdims;
  MWRT_TRY(c.getAxes(static_cast<int64_t>(in.shape.size()), axes));
  MWRT_TRY(c.getBool("keepdims", keepdims));
  Shape reduced = reducedShape(in.shape, axes, keepdims);
  MWRT_TRY(c.expectType(m, "output", reduced, in.dtype));
  MWRT_TRY(c.expectType(dm, "grad_output", reduced, in.dtype));
  MWRT_TRY(c.expectSameType(out, "result", in, "input"));
  FloatSrc x(in), mx(m), g(dm);
  FloatDst r(out);
  ReductionWalk(in.shape, axes).run([&](int64_t n, auto members) {
    // Ties counted in f32 as the evaluator does.
    float ties = 0.0f;
    members([&](int64_t off) {
      if (x[off] == mx[n])
        ties += 1.0f;
    });
    members(
        [&](int64_t off) { r[off] = x[off] == mx[n] ? g[n] / ties : 0.0f; });
  });
  r.commit();
  return MWRT_OK;
}

//===----------------------------------------------------------------------===//
// softmax, log_softmax and their gradients
//===----------------------------------------------------------------------===//

namespace {
/// `shape` around `axis` as (outer, axis size, inner), the evaluator's
/// AxisSplit.
struct AxisSplit {
  int64_t outer, size, inner;
  AxisSplit(const Shape &shape, int64_t axis)
      : outer(product(Shape(shape.begin(), shape.begin() + axis))),
        size(shape[axis]),
        inner(product(Shape(shape.begin() + axis + 1, shape.end()))) {}
};
} // namespace

mwrt_status runSoftmax(KernelCall &c) {
  const TensorRef &in = c.in(0), &out = c.out(0);
  MWRT_TRY(c.expectFloat(in, "input"));
  MWRT_TRY(c.expectSameType(out, "result", in, "input"));
  int64_t axis;
  MWRT_TRY(c.getAxis(static_cast<int64_t>(in.shape.size()), axis));
  bool log = c.op == OpKind::LogSoftmax;
  FloatSrc x(in);
  FloatDst r(out);
  AxisSplit s(in.shape, axis);
  // Rows (each (outer, inner) pair) across the workers; each row in order.
  parallelFor(c.options, s.outer * s.inner, rowGrain(s.size),
              [&](int, int64_t r0, int64_t r1) {
    for (int64_t row = r0; row < r1; ++row) {
      int64_t o = row / s.inner, k = row % s.inner;
      auto idx = [&](int64_t j) { return (o * s.size + j) * s.inner + k; };
      float mx = -std::numeric_limits<float>::infinity();
      for (int64_t j = 0; j < s.size; ++j)
        mx = std::max(mx, x[idx(j)]);
      float sum = 0.0f;
      for (int64_t j = 0; j < s.size; ++j)
        sum += std::exp(x[idx(j)] - mx);
      for (int64_t j = 0; j < s.size; ++j)
        r[idx(j)] = log ? x[idx(j)] - mx - std::log(sum)
                        : std::exp(x[idx(j)] - mx) / sum;
    }
  });
  r.commit();
  return MWRT_OK;
}

mwrt_status runSoftmaxGrad(KernelCall &c) {
  const TensorRef &y = c.in(0), &dy = c.in(1), &out = c.out(0);
  MWRT_TRY(c.expectFloat(y, "output"));
  MWRT_TRY(c.expectSameType(dy, "grad_output", y, "output"));
  MWRT_TRY(c.expectSameType(out, "result", y, "output"));
  int64_t axis;
  MWRT_TRY(c.getAxis(static_cast<int64_t>(y.shape.size()), axis));
  bool log = c.op == OpKind::LogSoftmaxGrad;
  FloatSrc py(y), pdy(dy);
  FloatDst r(out);
  AxisSplit s(y.shape, axis);
  parallelFor(c.options, s.outer * s.inner, rowGrain(s.size),
              [&](int, int64_t r0, int64_t r1) {
    for (int64_t row = r0; row < r1; ++row) {
      int64_t o = row / s.inner, k = row % s.inner;
      auto idx = [&](int64_t j) { return (o * s.size + j) * s.inner + k; };
      float sum = 0.0f;
      for (int64_t j = 0; j < s.size; ++j)
        sum += log ? pdy[idx(j)] : pdy[idx(j)] * py[idx(j)];
      for (int64_t j = 0; j < s.size; ++j)
        r[idx(j)] = log ? pdy[idx(j)] - std::exp(py[idx(j)]) * sum
                        : py[idx(j)] * (pdy[idx(j)] - sum);
    }
  });
  r.commit();
  return MWRT_OK;
}

} // namespace mwrt::cpu
