//===- attention.cpp - Scaled dot-product attention and its gradient ------===//
//
// The evaluator's attention and attention_grad, loop for loop: one query row
// at a time, scores and probabilities in f32, the output accumulated over
// keys in order; the backward pass recomputes the probabilities from lse
// (FlashAttention's backward). No BLAS here, so both agree with the
// evaluator bit for bit.
//
//===----------------------------------------------------------------------===//

#include "support.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mwrt::cpu {

namespace {
struct AttentionDims {
  int64_t bh, s, sk, d, dv;
  float scale;
  bool causal;
};

/// Whether query row i may attend to key column j.
bool allowed(bool causal, int64_t i, int64_t j) { return !causal || j <= i; }
} // namespace

/// The verifier's verifyAttentionOperands plus the attributes; sets the
/// output shape [B, H, S, Dv].
static mwrt_status checkAttention(const KernelCall &c, AttentionDims &dims,
                                  Shape &outShape) {
  const TensorRef &q = c.in(0), &k = c.in(1), &v = c.in(2);
  MWRT_TRY(c.expectFloat(q, "query"));
  MWRT_TRY(c.expectRank(q, "query", 4, "[B, H, S, D]"));
  MWRT_TRY(c.expectRank(k, "key", 4, "[B, H, Sk, D]"));
  MWRT_TRY(c.expectRank(v, "value", 4, "[B, H, Sk, Dv]"));
  const Shape &qs = q.shape, &ks = k.shape, &vs = v.shape;
  if (ks[0] != qs[0] || ks[1] != qs[1] || ks[3] != qs[3])
    return c.fail("key shape ", shapeString(ks), " does not match query shape ",
                  shapeString(qs), " in batch, heads or head dimension");
  if (vs[0] != qs[0] || vs[1] != qs[1] || vs[2] != ks[2])
    return c.fail("value shape ", shapeString(vs), " does not match key shape ",
                  shapeString(ks), " in batch, heads or sequence length");
  for (const auto &[t, name] : {std::pair{&k, "key"}, {&v, "value"}})
    if (t->dtype != q.dtype)
      return c.fail(name, " element type ", typeName(t->dtype),
                    " differs from the query element type ", typeName(q.dtype));
  MWRT_TRY(c.getBool("causal", dims.causal));
  // The default 1/sqrt(D) in double, as AttentionOp::getEffectiveScale.
  double scale;
  MWRT_TRY(
      c.getFloat("scale", scale, 1.0 / std::sqrt(static_cast<double>(qs[3]))));
  if (c.has("scale") && (!(scale > 0.0) || std::isinf(scale)))
    return c.fail("scale must be finite and positive, got ", scale);
  dims = {qs[0] * qs[1], qs[2], ks[2], qs[3], vs[3], static_cast<float>(scale),
          dims.causal};
  outShape = {qs[0], qs[1], qs[2], vs[3]};
  return MWRT_OK;
}

mwrt_status runAttention(KernelCall &c) {
  AttentionDims a;
  Shape outShape;
  MWRT_TRY(checkAttention(c, a, outShape));
  MWRT_TRY(c.expectType(c.out(0), "result", outShape, c.in(0).dtype));
  MWRT_TRY(c.expectType(c.out(1), "lse",
                        {outShape[0], outShape[1], outShape[2]}, DType::F32));
  FloatSrc q(c.in(0)), k(c.in(1)), v(c.in(2));
  FloatDst out(c.out(0), /*zero=*/true), lse(c.out(1));
  std::vector<float> scores(a.sk);
  for (int64_t h = 0; h < a.bh; ++h)
    for (int64_t i = 0; i < a.s; ++i) {
      const float *pq = q.data() + (h * a.s + i) * a.d;
      float mx = -std::numeric_limits<float>::infinity();
      for (int64_t j = 0; j < a.sk; ++j) {
        if (!allowed(a.causal, i, j))
          continue;
        const float *pk = k.data() + (h * a.sk + j) * a.d;
        float dot = 0.0f;
        for (int64_t e = 0; e < a.d; ++e)
          dot += pq[e] * pk[e];
        scores[j] = a.scale * dot;
        mx = std::max(mx, scores[j]);
      }
      float sum = 0.0f;
      for (int64_t j = 0; j < a.sk; ++j)
        if (allowed(a.causal, i, j))
          sum += std::exp(scores[j] - mx);
      float *po = out.data() + (h * a.s + i) * a.dv;
      for (int64_t j = 0; j < a.sk; ++j) {
        if (!allowed(a.causal, i, j))
          continue;
        float p = std::exp(scores[j] - mx) / sum;
        const float *pv = v.data() + (h * a.sk + j) * a.dv;
        for (int64_t e = 0; e < a.dv; ++e)
          po[e] += p * pv[e];
      }
      lse[h * a.s + i] = mx + std::log(sum);
    }
  out.commit();
  lse.commit();
  return MWRT_OK;
}

mwrt_status runAttentionGrad(KernelCall &c) {
  AttentionDims a;
  Shape outShape;
  MWRT_TRY(checkAttention(c, a, outShape));
  const TensorRef &q = c.in(0), &k = c.in(1), &v = c.in(2);
  MWRT_TRY(c.expectType(c.in(3), "output", outShape, q.dtype));
  MWRT_TRY(c.expectType(c.in(4), "lse", {outShape[0], outShape[1], outShape[2]},
                        DType::F32));
  MWRT_TRY(c.expectSameType(c.in(5), "grad_output", c.in(3), "output"));
  MWRT_TRY(c.expectSameType(c.out(0), "grad_query", q, "query"));
  MWRT_TRY(c.expectSameType(c.out(1), "grad_key", k, "key"));
  MWRT_TRY(c.expectSameType(c.out(2), "grad_value", v, "value"));
  FloatSrc pq0(q), pk0(k), pv0(v), lse(c.in(4)), dout(c.in(5));
  FloatDst dq(c.out(0), /*zero=*/true), dk(c.out(1), true), dv(c.out(2), true);
  std::vector<float> p(a.sk), dp(a.sk);
  for (int64_t h = 0; h < a.bh; ++h)
    for (int64_t i = 0; i < a.s; ++i) {
      const float *pq = pq0.data() + (h * a.s + i) * a.d;
      const float *pdo = dout.data() + (h * a.s + i) * a.dv;
      float rowDot = 0.0f; // sum_j p_ij * dp_ij
      for (int64_t j = 0; j < a.sk; ++j) {
        if (!allowed(a.causal, i, j))
          continue;
        const float *pk = pk0.data() + (h * a.sk + j) * a.d;
        const float *pv = pv0.data() + (h * a.sk + j) * a.dv;
        float dot = 0.0f;
        for (int64_t e = 0; e < a.d; ++e)
          dot += pq[e] * pk[e];
        p[j] = std::exp(a.scale * dot - lse[h * a.s + i]);
        float g = 0.0f;
        for (int64_t e = 0; e < a.dv; ++e)
          g += pdo[e] * pv[e];
        dp[j] = g;
        rowDot += p[j] * dp[j];
      }
      for (int64_t j = 0; j < a.sk; ++j) {
        if (!allowed(a.causal, i, j))
          continue;
        const float *pk = pk0.data() + (h * a.sk + j) * a.d;
        float *pdv = dv.data() + (h * a.sk + j) * a.dv;
        float *pdk = dk.data() + (h * a.sk + j) * a.d;
        float *pdq = dq.data() + (h * a.s + i) * a.d;
        for (int64_t e = 0; e < a.dv; ++e)
          pdv[e] += p[j] * pdo[e];
        float ds = p[j] * (dp[j] - rowDot) * a.scale;
        for (int64_t e = 0; e < a.d; ++e) {
          pdq[e] += ds * pk[e];
          pdk[e] += ds * pq[e];
        }
      }
    }
  dq.commit();
  dk.commit();
  dv.commit();
  return MWRT_OK;
}

} // namespace mwrt::cpu
