//===- kv_cache.cpp - The paged KV cache: writes and paged attention ------===//
//
// mw.kv_cache_write and mw.paged_attention, loop for loop the evaluator's
// (lib/Eval), so a float cache gives its bits: scores, softmax and the
// weighted sum in f32, keys in order. The cache is read and written in place
// through its strides and never copied (it may be most of the memory);
// quantized codes go through mwrt/formulas.h's quantize/dequantize, as in
// the evaluator and the CUDA backend. Every slot, context length and block
// table entry a call uses is checked before anything is written, so bad
// input is an error and never an access outside the cache.
//
//===----------------------------------------------------------------------===//

#include "support.h"

#include <cmath>
#include <limits>
#include <variant>

namespace mwrt::cpu {

bool isQuantizedCache(DType t) {
  return t == DType::I8 || t == DType::F8_E4M3;
}

mwrt_status getCacheScales(const KernelCall &c, const char *name, DType cache,
                           int64_t heads, std::vector<float> &scales) {
  scales.clear();
  const AttrValue *v = c.attrs.find(name);
  bool quantized = isQuantizedCache(cache);
  if (!v) {
    if (quantized)
      return c.fail("a ", typeName(cache), " cache needs '", name,
                    "': one f32 scale per key/value head or one for all");
    return MWRT_OK;
  }
  if (!quantized)
    return c.fail("'", name, "' is only for i8 and f8E4M3FN caches, not ",
                  typeName(cache));
  const auto *list = std::get_if<std::vector<double>>(v);
  if (!list)
    return c.fail("'", name, "' must be a list of floats");
  int64_t n = static_cast<int64_t>(list->size());
  if (n != 1 && n != heads)
    return c.fail("'", name, "' has ", n, " values, expected 1 or ", heads,
                  " (one per key/value head)");
  for (size_t i = 0; i < list->size(); ++i) {
    float s = static_cast<float>((*list)[i]);
    if (!(s > 0.0f) || !std::isfinite(s))
      return c.fail("'", name, "' value #", i,
                    " must be positive and finite, got ", (*list)[i]);
    scales.push_back(s);
  }
  return MWRT_OK;
}

/// The scale of head `h` (1 for a float cache).
static float headScale(const std::vector<float> &scales, int64_t h) {
  if (scales.empty())
    return 1.0f;
  return scales.size() == 1 ? scales[0] : scales[h];
}

/// Cache element at `off` (elements from data) as f32, dequantized.
static float loadCache(const TensorRef &t, int64_t off, float scale) {
  switch (t.dtype) {
  case DType::I8:
    return formulas::dequantizeI8(static_cast<const int8_t *>(t.data)[off],
                                  scale);
  case DType::F8_E4M3:
    return formulas::dequantizeF8E4M3(
        static_cast<const uint8_t *>(t.data)[off], scale);
  case DType::F16:
    return fromHalf(static_cast<const uint16_t *>(t.data)[off]);
  case DType::BF16:
    return fromBFloat(static_cast<const uint16_t *>(t.data)[off]);
  default:
    return static_cast<const float *>(t.data)[off];
  }
}

/// Stores `x` at `off` in the cache's element type, quantized with `scale`.
static void storeCache(const TensorRef &t, int64_t off, float x, float scale) {
  switch (t.dtype) {
  case DType::I8:
    static_cast<int8_t *>(t.data)[off] = formulas::quantizeI8(x, scale);
    break;
  case DType::F8_E4M3:
    static_cast<uint8_t *>(t.data)[off] = formulas::quantizeF8E4M3(x, scale);
    break;
  case DType::F16:
    static_cast<uint16_t *>(t.data)[off] = toHalf(x);
    break;
  case DType::BF16:
    static_cast<uint16_t *>(t.data)[off] = toBFloat(x);
    break;
  default:
    static_cast<float *>(t.data)[off] = x;
  }
}

/// A cache operand: [NB, BS, H, D] of a cache element type.
static mwrt_status expectCache(const KernelCall &c, const TensorRef &t,
                               const char *name, const char *layout) {
  if (!isFloat(t.dtype) && !isQuantizedCache(t.dtype))
    return c.fail(name, " must have a KV cache element type (f32, f16, bf16, "
                        "i8, f8E4M3FN), got ",
                  typeName(t.dtype));
  return c.expectRank(t, name, 4, layout);
}

mwrt_status checkKvCacheWrite(const KernelCall &c, std::vector<float> &scales) {
  const TensorRef &cache = c.in(0), &values = c.in(1), &slots = c.in(2);
  MWRT_TRY(expectCache(c, cache, "cache", "[NB, BS, H, D]"));
  MWRT_TRY(c.expectFloat(values, "values"));
  MWRT_TRY(c.expectRank(values, "values", 3, "[N, H, D]"));
  MWRT_TRY(c.expectRank(slots, "slot_mapping", 1, "[N]"));
  if (slots.dtype != DType::I32)
    return c.fail("slot_mapping must be i32, got ", typeName(slots.dtype));
  const Shape &cs = cache.shape, &vs = values.shape;
  if (vs[1] != cs[2] || vs[2] != cs[3])
    return c.fail("values shape ", shapeString(vs),
                  " does not match the cache shape ", shapeString(cs),
                  " in heads or head dimension");
  if (slots.shape[0] != vs[0])
    return c.fail("slot_mapping has ", slots.shape[0],
                  " entries, expected one per token of values (", vs[0], ")");
  MWRT_TRY(c.expectType(c.out(0), "result", cs, cache.dtype));
  return getCacheScales(c, "scale", cache.dtype, cs[2], scales);
}

mwrt_status checkSlots(const KernelCall &c, const int64_t *slots, int64_t n,
                       int64_t blocks, int64_t blockSize) {
  for (int64_t t = 0; t < n; ++t)
    if (slots[t] != -1 && (slots[t] < 0 || slots[t] >= blocks * blockSize))
      return c.fail("slot_mapping[", t, "] = ", slots[t],
                    " is outside the cache's ", blocks * blockSize, " slots (",
                    blocks, " blocks of ", blockSize, "; -1 skips a token)");
  return MWRT_OK;
}

mwrt_status runKvCacheWrite(KernelCall &c) {
  std::vector<float> scales;
  MWRT_TRY(checkKvCacheWrite(c, scales));
  const TensorRef &cache = c.in(0), &out = c.out(0);
  const Shape &cs = cache.shape;
  int64_t heads = cs[2], d = cs[3], n = c.in(1).shape[0];
  IntSrc slots(c.in(2));
  MWRT_TRY(checkSlots(c, slots.data(), n, cs[0], cs[1]));
  FloatSrc values(c.in(1));
  // Out of place (the compiler ties the result to the cache, so only a
  // direct call does this): the other slots keep the cache's values.
  if (out.data != cache.data)
    copyElements(out.data, stridesOf(out), cache.data, stridesOf(cache), 0,
                 cs, dtypeSize(cache.dtype));
  Shape st = stridesOf(out);
  for (int64_t t = 0; t < n; ++t) {
    int64_t slot = slots[t];
    if (slot == -1)
      continue;
    int64_t base = (slot / cs[1]) * st[0] + (slot % cs[1]) * st[1];
    for (int64_t h = 0; h < heads; ++h) {
      float scale = headScale(scales, h);
      for (int64_t e = 0; e < d; ++e)
        storeCache(out, base + h * st[2] + e * st[3],
                   values[(t * heads + h) * d + e], scale);
    }
  }
  return MWRT_OK;
}

mwrt_status checkPagedAttention(const KernelCall &c, PagedAttentionDims &a) {
  const TensorRef &q = c.in(0), &kc = c.in(1), &vc = c.in(2);
  const TensorRef &tables = c.in(3), &lens = c.in(4);
  MWRT_TRY(c.expectFloat(q, "query"));
  MWRT_TRY(c.expectRank(q, "query", 4, "[B, Hq, T, D]"));
  MWRT_TRY(expectCache(c, kc, "key_cache", "[NB, BS, Hkv, D]"));
  MWRT_TRY(c.expectSameType(vc, "value_cache", kc, "key_cache"));
  MWRT_TRY(c.expectRank(tables, "block_tables", 2, "[B, MB]"));
  MWRT_TRY(c.expectRank(lens, "context_lens", 1, "[B]"));
  for (const auto &[t, name] :
       {std::pair{&tables, "block_tables"}, {&lens, "context_lens"}})
    if (t->dtype != DType::I32)
      return c.fail(name, " must be i32, got ", typeName(t->dtype));
  const Shape &qs = q.shape, &cs = kc.shape;
  if (cs[3] != qs[3])
    return c.fail("key_cache head dimension ", cs[3], " differs from the query's ",
                  qs[3]);
  if (qs[1] % cs[2] != 0)
    return c.fail("query heads (", qs[1],
                  ") must be a multiple of the cache's key/value heads (",
                  cs[2], ")");
  if (tables.shape[0] != qs[0] || lens.shape[0] != qs[0])
    return c.fail("block_tables ", shapeString(tables.shape),
                  " and context_lens ", shapeString(lens.shape),
                  " must have one row per sequence of the query (", qs[0],
                  ")");
  MWRT_TRY(c.expectType(c.out(0), "result", qs, q.dtype));
  // The default 1/sqrt(D) in double, as PagedAttentionOp::getEffectiveScale.
  double scale;
  MWRT_TRY(
      c.getFloat("scale", scale, 1.0 / std::sqrt(static_cast<double>(qs[3]))));
  if (c.has("scale") && (!(scale > 0.0) || std::isinf(scale)))
    return c.fail("scale must be finite and positive, got ", scale);
  MWRT_TRY(getCacheScales(c, "k_scale", kc.dtype, cs[2], a.kScale));
  MWRT_TRY(getCacheScales(c, "v_scale", kc.dtype, cs[2], a.vScale));
  a.batch = qs[0];
  a.queryHeads = qs[1];
  a.tokens = qs[2];
  a.headDim = qs[3];
  a.blocks = cs[0];
  a.blockSize = cs[1];
  a.kvHeads = cs[2];
  a.maxBlocks = tables.shape[1];
  a.scale = static_cast<float>(scale);
  return MWRT_OK;
}

mwrt_status checkContexts(const KernelCall &c, const PagedAttentionDims &a,
                          const int64_t *tables, const int64_t *lens) {
  int64_t capacity = a.maxBlocks * a.blockSize;
  for (int64_t s = 0; s < a.batch; ++s) {
    int64_t len = lens[s];
    if (len < 0 || len > capacity)
      return c.fail("context_lens[", s, "] = ", len, " is outside [0, ",
                    capacity, "] (", a.maxBlocks, " blocks of ", a.blockSize,
                    " per sequence)");
    for (int64_t blk = 0; blk * a.blockSize < len; ++blk) {
      int64_t entry = tables[s * a.maxBlocks + blk];
      if (entry < 0 || entry >= a.blocks)
        return c.fail("block_tables[", s, ", ", blk, "] = ", entry,
                      " is outside the cache's ", a.blocks,
                      " blocks (sequence ", s, " holds ", len, " tokens)");
    }
  }
  return MWRT_OK;
}

mwrt_status runPagedAttention(KernelCall &c) {
  PagedAttentionDims a;
  MWRT_TRY(checkPagedAttention(c, a));
  IntSrc tables(c.in(3)), lens(c.in(4));
  MWRT_TRY(checkContexts(c, a, tables.data(), lens.data()));
  FloatSrc q(c.in(0));
  FloatDst out(c.out(0), /*zero=*/true);
  const TensorRef &kc = c.in(1), &vc = c.in(2);
  Shape ks = stridesOf(kc), vs = stridesOf(vc);
  int64_t d = a.headDim, t = a.tokens, group = a.queryHeads / a.kvHeads;
  std::vector<float> scores(a.maxBlocks * a.blockSize);
  // Offset of element 0 of head g of token j of sequence s in a cache.
  auto tokenOffset = [&](const Shape &st, int64_t s, int64_t g, int64_t j) {
    int64_t block = tables[s * a.maxBlocks + j / a.blockSize];
    return block * st[0] + (j % a.blockSize) * st[1] + g * st[2];
  };
  for (int64_t s = 0; s < a.batch; ++s)
    for (int64_t h = 0; h < a.queryHeads; ++h) {
      int64_t g = h / group;
      float kScale = headScale(a.kScale, g), vScale = headScale(a.vScale, g);
      for (int64_t i = 0; i < t; ++i) {
        int64_t pos = lens[s] - t + i;
        if (pos < 0)
          continue; // padding: nothing to attend to, zeros
        const float *pq = q.data() + ((s * a.queryHeads + h) * t + i) * d;
        float mx = -std::numeric_limits<float>::infinity();
        for (int64_t j = 0; j <= pos; ++j) {
          int64_t base = tokenOffset(ks, s, g, j);
          float dot = 0.0f;
          for (int64_t e = 0; e < d; ++e)
            dot += pq[e] * loadCache(kc, base + e * ks[3], kScale);
          scores[j] = a.scale * dot;
          mx = std::max(mx, scores[j]);
        }
        float sum = 0.0f;
        for (int64_t j = 0; j <= pos; ++j)
          sum += std::exp(scores[j] - mx);
        float *po = out.data() + ((s * a.queryHeads + h) * t + i) * d;
        for (int64_t j = 0; j <= pos; ++j) {
          float p = std::exp(scores[j] - mx) / sum;
          int64_t base = tokenOffset(vs, s, g, j);
          for (int64_t e = 0; e < d; ++e)
            po[e] += p * loadCache(vc, base + e * vs[3], vScale);
        }
      }
    }
  out.commit();
  return MWRT_OK;
}

} // namespace mwrt::cpu
