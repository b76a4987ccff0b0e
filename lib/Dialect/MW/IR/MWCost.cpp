//===- MWCost.cpp - CostOpInterface of the non-elementwise mw ops ---------===//
//
// FLOP counts of the ops whose cost is not a fixed count per element (those
// are inline in MWOps.td). Conventions: docs/cost-model.md.
//
//===----------------------------------------------------------------------===//

#include "memwall/Dialect/MW/IR/MWOps.h"

using namespace mlir;
using namespace mlir::mw;

int64_t MatmulOp::getFlops() {
  auto lhs = getLhs().getType();
  int64_t k = getTransposeLhs() ? lhs.getShape()[lhs.getRank() - 2]
                                : lhs.getShape().back();
  return 2 * k * mw::detail::numElements(getResult().getType());
}

/// Scores [B, H, S, Sk] that attention computes: all of them, or the lower
/// triangle S*(S+1)/2 per head when causal and S == Sk.
static int64_t attentionScores(RankedTensorType q, RankedTensorType k,
                               bool causal) {
  int64_t bh = q.getShape()[0] * q.getShape()[1];
  int64_t s = q.getShape()[2], sk = k.getShape()[2];
  if (causal && s == sk)
    return bh * s * (s + 1) / 2;
  return bh * s * sk;
}

int64_t AttentionOp::getFlops() {
  int64_t scores =
      attentionScores(getQuery().getType(), getKey().getType(), getCausal());
  int64_t d = getQuery().getType().getShape()[3];
  int64_t dv = getValue().getType().getShape()[3];
  // Q K^T and P V, then the softmax over every score.
  return 2 * scores * (d + dv) + 5 * scores;
}

int64_t AttentionGradOp::getFlops() {
  int64_t scores =
      attentionScores(getQuery().getType(), getKey().getType(), getCausal());
  int64_t d = getQuery().getType().getShape()[3];
  int64_t dv = getValue().getType().getShape()[3];
  // Recompute S = Q K^T (2d), dV = P^T dO and dP = dO V^T (2dv each),
  // dQ = dS K and dK = dS^T Q (2d each), and the softmax backward per score.
  return scores * (6 * d + 4 * dv) + 5 * scores;
}

int64_t EmbeddingOp::getBytesRead() {
  // The gathered rows and the indices, not the whole table.
  return mw::detail::tensorBytes(getIndices().getType()) +
         mw::detail::tensorBytes(getResult().getType());
}

int64_t SgdOp::getFlops() {
  int64_t perElement = 2;
  if (!getWeightDecay().isZero())
    perElement += 2;
  if (getMomentumBuffer())
    perElement += 3;
  return perElement * mw::detail::numElements(getParam().getType());
}

int64_t FoundInfOp::getFlops() {
  // One classification per input element.
  int64_t n = 0;
  for (Type t : getInputs().getTypes())
    n += mw::detail::numElements(t);
  return n;
}

int64_t KvCacheWriteOp::getFlops() {
  Type elem = getCache().getType().getElementType();
  bool quantized = elem.isSignlessInteger(8) || isa<Float8E4M3FNType>(elem);
  return quantized ? mw::detail::numElements(getValues().getType()) : 0;
}

int64_t KvCacheWriteOp::getBytesRead() {
  // The new tokens and their slots; the cache's other slots are untouched.
  return mw::detail::tensorBytes(getValues().getType()) +
         mw::detail::tensorBytes(getSlotMapping().getType());
}

int64_t KvCacheWriteOp::getBytesWritten() {
  // N*H*D cache elements (all mw element types are whole bytes).
  return mw::detail::numElements(getValues().getType()) *
         (getCache().getType().getElementTypeBitWidth() / 8);
}

/// Tokens of context each query of mw.paged_attention may attend to: the
/// block tables' capacity MB*BS (an upper bound).
static int64_t pagedContext(PagedAttentionOp op) {
  return op.getBlockTables().getType().getShape()[1] *
         op.getKeyCache().getType().getShape()[1];
}

int64_t PagedAttentionOp::getFlops() {
  auto q = getQuery().getType();
  int64_t queries = mw::detail::numElements(q) / q.getShape()[3];
  int64_t scores = queries * pagedContext(*this);
  // q . k and p v (2 FLOPs per element each), then the softmax per score.
  return 4 * scores * q.getShape()[3] + 5 * scores;
}

int64_t PagedAttentionOp::getBytesRead() {
  auto cache = getKeyCache().getType();
  // Each sequence reads at most MB*BS tokens of each cache, and no more
  // than the whole cache.
  int64_t perToken = cache.getShape()[2] * cache.getShape()[3] *
                     (cache.getElementTypeBitWidth() / 8);
  int64_t tokens =
      std::min(getQuery().getType().getShape()[0] * pagedContext(*this),
               cache.getShape()[0] * cache.getShape()[1]);
  return mw::detail::tensorBytes(getQuery().getType()) +
         mw::detail::tensorBytes(getBlockTables().getType()) +
         mw::detail::tensorBytes(getContextLens().getType()) +
         2 * tokens * perToken;
}
