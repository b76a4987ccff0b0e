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
