//===- norms.cpp - Norms, embedding and cross-entropy ---------------------===//
//
// layer_norm, rms_norm, embedding, cross_entropy and their gradients, as the
// evaluator computes them: per row of the last dimension, statistics
// accumulated in f32 in index order. Index and label operands are checked
// against their range before anything is written.
//
//===----------------------------------------------------------------------===//

#include "support.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace mwrt::cpu {

/// Shared checks of the norms (the verifiers' verifyNormOperands): input of
/// rank >= 1 and float type, weights of shape [D] and the input's dtype.
/// Sets `stats` to the shape of the saved statistics.
static mwrt_status checkNorm(const KernelCall &c, size_t numWeights,
                             Shape &stats) {
  const TensorRef &x = c.in(0);
  MWRT_TRY(c.expectFloat(x, "input"));
  if (x.shape.empty())
    return c.fail("input must have rank >= 1, got 0");
  const char *names[] = {"gamma", "beta"};
  for (size_t i = 0; i < numWeights; ++i)
    MWRT_TRY(c.expectType(c.in(1 + i), names[i], {x.shape.back()}, x.dtype));
  stats.assign(x.shape.begin(), x.shape.end() - 1);
  return MWRT_OK;
}

/// Number of rows and their length D, as the evaluator splits the input.
static void rowsOf(const TensorRef &x, int64_t &rows, int64_t &d) {
  d = x.shape.back();
  rows = x.numElements() / std::max<int64_t>(d, 1);
}

mwrt_status runLayerNorm(KernelCall &c) {
  Shape stats;
  MWRT_TRY(checkNorm(c, 2, stats));
  const TensorRef &x = c.in(0);
  double epsilon;
  MWRT_TRY(c.getFloat("epsilon", epsilon, 1e-5));
  MWRT_TRY(c.expectSameType(c.out(0), "result", x, "input"));
  MWRT_TRY(c.expectType(c.out(1), "mean", stats, DType::F32));
  MWRT_TRY(c.expectType(c.out(2), "rstd", stats, DType::F32));
  FloatSrc px(x), g(c.in(1)), b(c.in(2));
  // Zeroed statistics: with D = 0 there are rows but no row loop, and the
  // evaluator's are zeros then.
  FloatDst y(c.out(0)), mean(c.out(1), /*zero=*/true), rstd(c.out(2), true);
  int64_t rows, d;
  rowsOf(x, rows, d);
  float eps = static_cast<float>(epsilon);
  parallelFor(c.options, rows, rowGrain(d), [&](int, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      formulas::layerNormRow(px.data() + r * d, g.data(), b.data(), d, eps,
                             y.data() + r * d, mean[r], rstd[r]);
  });
  y.commit();
  mean.commit();
  rstd.commit();
  return MWRT_OK;
}

mwrt_status runRmsNorm(KernelCall &c) {
  Shape stats;
  MWRT_TRY(checkNorm(c, 1, stats));
  const TensorRef &x = c.in(0);
  double epsilon;
  MWRT_TRY(c.getFloat("epsilon", epsilon, 1e-6));
  MWRT_TRY(c.expectSameType(c.out(0), "result", x, "input"));
  MWRT_TRY(c.expectType(c.out(1), "rstd", stats, DType::F32));
  FloatSrc px(x), g(c.in(1));
  FloatDst y(c.out(0)), rstd(c.out(1), /*zero=*/true); // as in layer_norm
  int64_t rows, d;
  rowsOf(x, rows, d);
  float eps = static_cast<float>(epsilon);
  parallelFor(c.options, rows, rowGrain(d), [&](int, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      formulas::rmsNormRow(px.data() + r * d, g.data(), d, eps,
                           y.data() + r * d, rstd[r]);
  });
  y.commit();
  rstd.commit();
  return MWRT_OK;
}

mwrt_status runLayerNormGrad(KernelCall &c) {
  Shape stats;
  MWRT_TRY(checkNorm(c, 1, stats));
  const TensorRef &x = c.in(0), &gamma = c.in(1);
  MWRT_TRY(c.expectType(c.in(2), "mean", stats, DType::F32));
  MWRT_TRY(c.expectType(c.in(3), "rstd", stats, DType::F32));
  MWRT_TRY(c.expectSameType(c.in(4), "grad_output", x, "input"));
  MWRT_TRY(c.expectSameType(c.out(0), "grad_input", x, "input"));
  MWRT_TRY(c.expectSameType(c.out(1), "grad_gamma", gamma, "gamma"));
  MWRT_TRY(c.expectSameType(c.out(2), "grad_beta", gamma, "gamma"));
  FloatSrc px(x), g(gamma), mean(c.in(2)), rstd(c.in(3)), dy(c.in(4));
  FloatDst dx(c.out(0)), dg(c.out(1), /*zero=*/true), db(c.out(2), true);
  int64_t rows, d;
  rowsOf(x, rows, d);
  for (int64_t r = 0; r < rows; ++r)
    formulas::layerNormGradRow(px.data() + r * d, g.data(), dy.data() + r * d,
                               mean[r], rstd[r], d, dx.data() + r * d,
                               dg.data(), db.data());
  dx.commit();
  dg.commit();
  db.commit();
  return MWRT_OK;
}

mwrt_status runRmsNormGrad(KernelCall &c) {
  Shape stats;
  MWRT_TRY(checkNorm(c, 1, stats));
  const TensorRef &x = c.in(0), &gamma = c.in(1);
  MWRT_TRY(c.expectType(c.in(2), "rstd", stats, DType::F32));
  MWRT_TRY(c.expectSameType(c.in(3), "grad_output", x, "input"));
  MWRT_TRY(c.expectSameType(c.out(0), "grad_input", x, "input"));
  MWRT_TRY(c.expectSameType(c.out(1), "grad_gamma", gamma, "gamma"));
  FloatSrc px(x), g(gamma), rstd(c.in(2)), dy(c.in(3));
  FloatDst dx(c.out(0)), dg(c.out(1), /*zero=*/true);
  int64_t rows, d;
  rowsOf(x, rows, d);
  for (int64_t r = 0; r < rows; ++r)
    formulas::rmsNormGradRow(px.data() + r * d, g.data(), dy.data() + r * d,
                             rstd[r], d, dx.data() + r * d, dg.data());
  dx.commit();
  dg.commit();
  return MWRT_OK;
}

//===----------------------------------------------------------------------===//
// embedding and embedding_grad
//===----------------------------------------------------------------------===//

/// Checks that every index lies in [0, bound), as the evaluator's checkIndex.
static mwrt_status checkIndices(const KernelCall &c, const IntSrc &idx,
                                int64_t count, int64_t bound) {
  for (int64_t n = 0; n < count; ++n)
    if (idx[n] < 0 || idx[n] >= bound)
      return c.fail("embedding index ", idx[n], " is out of range [0, ", bound,
                    ")");
  return MWRT_OK;
}

mwrt_status runEmbedding(KernelCall &c) {
  const TensorRef &table = c.in(0), &indices = c.in(1), &out = c.out(0);
  MWRT_TRY(c.expectFloat(table, "table"));
  MWRT_TRY(c.expectInt(indices, "indices"));
  MWRT_TRY(c.expectRank(table, "table", 2, "[V, D]"));
  Shape shape = indices.shape;
  shape.push_back(table.shape[1]);
  MWRT_TRY(c.expectType(out, "result", shape, table.dtype));
  int64_t v = table.shape[0], d = table.shape[1], n = indices.numElements();
  IntSrc idx(indices);
  MWRT_TRY(checkIndices(c, idx, n, v));
  // Rows are copied as they are: the result has the table's dtype.
  size_t size = dtypeSize(out.dtype);
  if (table.isContiguous() && out.isContiguous()) {
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(static_cast<char *>(out.data) + i * d * size,
                  static_cast<const char *>(table.data) + idx[i] * d * size,
                  d * size);
    return MWRT_OK;
  }
  Shape tableStrides = stridesOf(table), outStrides = stridesOf(out);
  Shape rowShape = {d}, outRow = {outStrides.back()};
  Shape outIndexStrides(outStrides.begin(), outStrides.end() - 1);
  forEachIndex<1>(indices.shape, {outIndexStrides},
                  [&](int64_t i, const std::array<int64_t, 1> &o) {
                    copyElements(static_cast<char *>(out.data) + o[0] * size,
                                 outRow, table.data, {tableStrides[1]},
                                 idx[i] * tableStrides[0], rowShape, size);
                  });
  return MWRT_OK;
}

mwrt_status runEmbeddingGrad(KernelCall &c) {
  const TensorRef &indices = c.in(0), &dy = c.in(1), &out = c.out(0);
  MWRT_TRY(c.expectInt(indices, "indices"));
  MWRT_TRY(c.expectFloat(dy, "grad_output"));
  MWRT_TRY(c.expectRank(out, "result", 2, "[V, D]"));
  Shape shape = indices.shape;
  shape.push_back(out.shape[1]);
  MWRT_TRY(c.expectType(dy, "grad_output", shape, dy.dtype));
  if (out.dtype != dy.dtype)
    return c.fail("result element type ", typeName(out.dtype),
                  " differs from the grad_output element type ",
                  typeName(dy.dtype));
  int64_t v = out.shape[0], d = out.shape[1], n = indices.numElements();
  IntSrc idx(indices);
  MWRT_TRY(checkIndices(c, idx, n, v));
  FloatSrc g(dy);
  FloatDst r(out, /*zero=*/true);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j)
      r[idx[i] * d + j] += g[i * d + j];
  r.commit();
  return MWRT_OK;
}

//===----------------------------------------------------------------------===//
// cross_entropy and cross_entropy_grad
//===----------------------------------------------------------------------===//

mwrt_status checkCrossEntropyLabels(const KernelCall &c, int64_t &first) {
  const TensorRef &logits = c.in(0), &labels = c.in(1);
  if (logits.shape.empty())
    return c.fail("logits must have rank >= 1, got 0");
  first = 0;
  if (!c.has("label_offset"))
    return c.expectType(labels, "labels",
                        Shape(logits.shape.begin(), logits.shape.end() - 1),
                        labels.dtype);
  // A chunk of a larger batch: rows [first, first + n) of its N labels.
  MWRT_TRY(c.getInt("label_offset", first, 0));
  if (logits.shape.size() != 2 || labels.shape.size() != 1)
    return c.fail("with label_offset, logits must be [n, C] and labels [N]");
  if (first < 0 || first > labels.shape[0] ||
      logits.shape[0] > labels.shape[0] - first)
    return c.fail("label_offset ", first, " + ", logits.shape[0],
                  " rows exceeds the ", labels.shape[0], " labels");
  return MWRT_OK;
}

mwrt_status runCrossEntropy(KernelCall &c) {
  bool grad = c.op == OpKind::CrossEntropyGrad;
  const TensorRef &logits = c.in(0), &labels = c.in(1), &out = c.out(0);
  MWRT_TRY(c.expectFloat(logits, "logits"));
  MWRT_TRY(c.expectInt(labels, "labels"));
  int64_t first;
  MWRT_TRY(checkCrossEntropyLabels(c, first));
  if (grad) {
    MWRT_TRY(c.expectType(c.in(2), "grad_loss", {}, DType::F32));
    MWRT_TRY(c.expectSameType(out, "result", logits, "logits"));
  } else {
    MWRT_TRY(c.expectType(out, "result", {}, DType::F32));
  }
  int64_t ignore;
  MWRT_TRY(c.getInt("ignore_index", ignore, -100));
  int64_t classes = logits.shape.back(), all = labels.numElements();
  int64_t rows = logits.numElements() / std::max<int64_t>(classes, 1);
  IntSrc labelAt(labels);
  // Row t's label; the mean divides by the count of every label given.
  auto label = [&](int64_t t) { return labelAt[first + t]; };
  int64_t count = 0;
  for (int64_t t = 0; t < all; ++t) {
    if (labelAt[t] == ignore)
      continue;
    if (labelAt[t] < 0 || labelAt[t] >= classes)
      return c.fail("label ", labelAt[t], " is out of range [0, ", classes,
                    ")");
    ++count;
  }
  FloatSrc x(logits);
  // Per-row max and log-sum-exp, as log_softmax computes them.
  auto rowStats = [&](int64_t t, float &mx, float &sum) {
    const float *p = x.data() + t * classes;
    mx = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < classes; ++j)
      mx = std::max(mx, p[j]);
    sum = 0.0f;
    for (int64_t j = 0; j < classes; ++j)
      sum += std::exp(p[j] - mx);
  };
  if (!grad) {
    float total = 0.0f;
    for (int64_t t = 0; t < rows; ++t) {
      if (label(t) == ignore)
        continue;
      float mx, sum;
      rowStats(t, mx, sum);
      total += mx + std::log(sum) - x[t * classes + label(t)];
    }
    *static_cast<float *>(out.data) =
        count ? total / static_cast<float>(count) : 0.0f;
    return MWRT_OK;
  }
  float g = *static_cast<const float *>(c.in(2).data);
  // The result may be the logits' own buffer (the op table's InPlace): each
  // row's logits are read (its statistics, then element j) before element j
  // is written, and an ignored row is zeroed without being read.
  FloatDst r(out);
  parallelFor(c.options, rows, rowGrain(classes), [&](int, int64_t t0,
                                                      int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      if (!count || label(t) == ignore) {
        std::fill(r.data() + t * classes, r.data() + (t + 1) * classes, 0.0f);
        continue;
      }
      float mx, sum;
      rowStats(t, mx, sum);
      for (int64_t j = 0; j < classes; ++j) {
        float p = std::exp(x[t * classes + j] - mx) / sum;
        float onehot = j == label(t) ? 1.0f : 0.0f;
        r[t * classes + j] = g * (p - onehot) / static_cast<float>(count);
      }
    }
  });
  r.commit();
  return MWRT_OK;
}

} // namespace mwrt::cpu
