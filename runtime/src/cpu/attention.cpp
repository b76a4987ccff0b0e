//===- attention.cpp - Scaled dot-product attention and its gradient ------===//
//
// Two paths. The reference path (CpuKernelOptions::referenceMatmul, and every
// call in a build without OpenBLAS) is the evaluator's attention and
// attention_grad loop for loop: one query row at a time, scores and
// probabilities in f32, the output accumulated over keys in order; the
// backward pass recomputes the probabilities from lse (FlashAttention's
// backward). It agrees with the evaluator bit for bit.
//
// The blocked path computes the same quantities on blocks of queries x keys
// with cblas_sgemm: the forward pass FlashAttention's way (scores of a block,
// the row maximum and sum carried across key blocks and the output rescaled
// when the maximum grows, then the probabilities times V), the backward pass
// a block of query rows against all the keys it sees (P and dP by sgemm,
// then dQ, dK and dV by sgemm). Its sums run in other orders, so it agrees
// with the reference within the bound docs/runtime-kernels.md states.
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

/// The evaluator's loop; `out` starts zeroed.
static void referenceAttention(const AttentionDims &a, const FloatSrc &q,
                               const FloatSrc &k, const FloatSrc &v,
                               FloatDst &out, FloatDst &lse) {
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
}

/// The evaluator's loop; the gradients start zeroed.
static void referenceAttentionGrad(const AttentionDims &a, const FloatSrc &pq0,
                                   const FloatSrc &pk0, const FloatSrc &pv0,
                                   const FloatSrc &lse, const FloatSrc &dout,
                                   FloatDst &dq, FloatDst &dk, FloatDst &dv) {
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
}

/// Whether the blocked path runs: OpenBLAS is there, not asked for the
/// reference, and every dimension is non-zero and fits sgemm's ints (the
/// reference loop handles the empty cases).
static bool useBlocked(const KernelCall &c, const AttentionDims &a) {
  if (c.options.referenceMatmul || !cpuMatmulUsesBlas())
    return false;
  int64_t lo = std::min({a.bh, a.s, a.sk, a.d, a.dv});
  int64_t hi = std::max({a.s, a.sk, a.d, a.dv});
  return lo > 0 && hi <= std::numeric_limits<int>::max();
}

namespace {
/// Query rows per block and keys per block of the blocked path: a block of
/// scores (kBlockQ x kBlockK floats, 64 KB) stays in L2 with its operands.
constexpr int64_t kBlockQ = 64, kBlockK = 256;
} // namespace

/// FlashAttention's forward pass over blocks: for each block of query rows,
/// the scores of each key block by sgemm; per row the running maximum `m` and
/// sum `l` of exp(score - m), the output rows rescaled by exp(m_old - m_new)
/// when the maximum grows; then out += P V_block by sgemm. At the end the
/// rows are divided by `l` and lse = m + log(l). `out` starts zeroed.
static void blockedAttention(const AttentionDims &a, const float *q,
                             const float *k, const float *v, float *out,
                             float *lse) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> sp(kBlockQ * kBlockK), m(kBlockQ), l(kBlockQ);
  for (int64_t h = 0; h < a.bh; ++h)
    for (int64_t i0 = 0; i0 < a.s; i0 += kBlockQ) {
      int64_t rows = std::min(kBlockQ, a.s - i0);
      // Causal: row i sees keys 0..i, so the block sees keys below i0 + rows.
      int64_t keys = a.causal ? std::min(a.sk, i0 + rows) : a.sk;
      const float *qb = q + (h * a.s + i0) * a.d;
      float *ob = out + (h * a.s + i0) * a.dv;
      std::fill(m.begin(), m.end(), -inf);
      std::fill(l.begin(), l.end(), 0.0f);
      for (int64_t j0 = 0; j0 < keys; j0 += kBlockK) {
        int64_t cols = std::min(kBlockK, keys - j0);
        blasGemm(false, true, rows, cols, a.d, a.scale, qb, a.d,
                 k + (h * a.sk + j0) * a.d, a.d, 0.0f, sp.data(), cols);
        for (int64_t r = 0; r < rows; ++r) {
          float *row = sp.data() + r * cols;
          // Keys j0 + n for n < seen are allowed for this row.
          int64_t seen = a.causal ? std::clamp<int64_t>(i0 + r - j0 + 1, 0, cols)
                                  : cols;
          float bm = -inf;
          for (int64_t n = 0; n < seen; ++n)
            bm = std::max(bm, row[n]);
          float mNew = std::max(m[r], bm);
          if (mNew == -inf) { // nothing seen yet (or only -inf scores)
            std::fill(row, row + cols, 0.0f);
            continue;
          }
          float sum = 0.0f;
          for (int64_t n = 0; n < seen; ++n) {
            row[n] = std::exp(row[n] - mNew);
            sum += row[n];
          }
          std::fill(row + seen, row + cols, 0.0f);
          if (mNew != m[r] && m[r] != -inf) {
            float corr = std::exp(m[r] - mNew);
            l[r] *= corr;
            for (int64_t e = 0; e < a.dv; ++e)
              ob[r * a.dv + e] *= corr;
          }
          l[r] += sum;
          m[r] = mNew;
        }
        blasGemm(false, false, rows, a.dv, cols, 1.0f, sp.data(), cols,
                 v + (h * a.sk + j0) * a.dv, a.dv, 1.0f, ob, a.dv);
      }
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t e = 0; e < a.dv; ++e)
          ob[r * a.dv + e] /= l[r];
        lse[h * a.s + i0 + r] = m[r] + std::log(l[r]);
      }
    }
}

/// The backward pass over blocks of query rows, each against every key it
/// sees: S = scale Q_b K^T and dP = dO_b V^T by sgemm, P = exp(S - lse) and
/// dS = P (dP - rowDot) scale with rowDot = sum_j P dP over the row (as the
/// reference computes it), then dQ_b = dS K, dK += dS^T Q_b and
/// dV += P^T dO_b by sgemm. The gradients start zeroed.
static void blockedAttentionGrad(const AttentionDims &a, const float *q,
                                 const float *k, const float *v,
                                 const float *lse, const float *dout,
                                 float *dq, float *dk, float *dv) {
  std::vector<float> p(kBlockQ * a.sk), dp(kBlockQ * a.sk);
  for (int64_t h = 0; h < a.bh; ++h) {
    const float *kh = k + h * a.sk * a.d, *vh = v + h * a.sk * a.dv;
    float *dkh = dk + h * a.sk * a.d, *dvh = dv + h * a.sk * a.dv;
    for (int64_t i0 = 0; i0 < a.s; i0 += kBlockQ) {
      int64_t rows = std::min(kBlockQ, a.s - i0);
      int64_t keys = a.causal ? std::min(a.sk, i0 + rows) : a.sk;
      const float *qb = q + (h * a.s + i0) * a.d;
      const float *dob = dout + (h * a.s + i0) * a.dv;
      blasGemm(false, true, rows, keys, a.d, a.scale, qb, a.d, kh, a.d, 0.0f,
               p.data(), keys);
      blasGemm(false, true, rows, keys, a.dv, 1.0f, dob, a.dv, vh, a.dv, 0.0f,
               dp.data(), keys);
      for (int64_t r = 0; r < rows; ++r) {
        float *pr = p.data() + r * keys, *dpr = dp.data() + r * keys;
        int64_t seen = a.causal ? std::min(keys, i0 + r + 1) : keys;
        float rowLse = lse[h * a.s + i0 + r], rowDot = 0.0f;
        for (int64_t j = 0; j < seen; ++j) {
          pr[j] = std::exp(pr[j] - rowLse);
          rowDot += pr[j] * dpr[j];
        }
        for (int64_t j = 0; j < seen; ++j)
          dpr[j] = pr[j] * (dpr[j] - rowDot) * a.scale; // dS
        std::fill(pr + seen, pr + keys, 0.0f);
        std::fill(dpr + seen, dpr + keys, 0.0f);
      }
      blasGemm(false, false, rows, a.d, keys, 1.0f, dp.data(), keys, kh, a.d,
               0.0f, dq + (h * a.s + i0) * a.d, a.d);
      blasGemm(true, false, keys, a.d, rows, 1.0f, dp.data(), keys, qb, a.d,
               1.0f, dkh, a.d);
      blasGemm(true, false, keys, a.dv, rows, 1.0f, p.data(), keys, dob, a.dv,
               1.0f, dvh, a.dv);
    }
  }
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
  if (useBlocked(c, a))
    blockedAttention(a, q.data(), k.data(), v.data(), out.data(), lse.data());
  else
    referenceAttention(a, q, k, v, out, lse);
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
  if (useBlocked(c, a))
    blockedAttentionGrad(a, pq0.data(), pk0.data(), pv0.data(), lse.data(),
                         dout.data(), dq.data(), dk.data(), dv.data());
  else
    referenceAttentionGrad(a, pq0, pk0, pv0, lse, dout, dq, dk, dv);
  dq.commit();
  dk.commit();
  dv.commit();
  return MWRT_OK;
}

} // namespace mwrt::cpu
