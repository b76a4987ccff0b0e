//===- OffloadModel.h - Predicted throughput of weight offload --*- C++ -*-===//
//
// The analytic model --mw-offload=auto plans with (docs/offload.md, "auto"):
// given a decode step's per-layer weights and op costs, what stays on the
// device, the KV cache per token, the device memory and the host link, it
// simulates the planned schedule of one step (one copy engine, one compute
// stream, K+1 weight slots) for a generation workload (prefill of P tokens,
// then decode steps until G tokens per sequence are generated) and predicts
// the time per step, tokens/s and the device bytes. The search weighs every
// pinned-layer count L, prefetch depth K and the largest batch that fits.
//
// Plain C++ (no MLIR): MwOffloadAuto.cpp gathers the inputs from the IR and
// the target table; test/unit/OffloadModelTest.cpp checks the schedule and
// the search against hand-worked cases.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_ANALYSIS_OFFLOADMODEL_H
#define MEMWALL_ANALYSIS_OFFLOADMODEL_H

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::mw {

/// One op's cost in the reference step (the decode step at its own batch):
/// FLOPs and bytes by the op's CostOpInterface, the bytes split into the
/// weights it reads (constant in the batch) and the rest (activations, KV
/// cache, outputs: linear in the tokens of the step).
struct OffloadOpCost {
  double flops = 0;
  double weightBytes = 0;
  double otherBytes = 0;
  /// The part that grows with the context each query attends to (paged
  /// attention: its FLOPs and the KV cache it reads), priced at
  /// OffloadModelInputs::referenceContextTokens of context.
  double contextFlops = 0;
  double contextBytes = 0;
};

/// One layer: the bytes of its parameters (what streaming it copies) and the
/// ops that compute it, in program order.
struct OffloadLayer {
  int64_t weightBytes = 0;
  std::vector<OffloadOpCost> ops;
};

/// The generation workload a prediction is for: every sequence of the batch
/// is prefilled with `promptTokens` tokens (one step of P tokens per
/// sequence, which yields the first generated token) and then decoded one
/// token per step until `generateTokens` are generated (G - 1 decode steps).
struct OffloadWorkload {
  int64_t promptTokens = 64;
  int64_t generateTokens = 32;
  /// The KV cache's block size: a sequence of P + G tokens holds
  /// ceil((P + G) / block) blocks.
  int64_t blockTokens = 16;
  /// A step without a KV cache (a forward): the prediction is of that one
  /// step of P tokens per sequence, and tokens/s counts the tokens it
  /// processes, batch * P / step.
  bool singleStep = false;
};

/// Everything the model needs; sizes in bytes, rates per second.
struct OffloadModelInputs {
  /// The layers in execution order (the order of their first use).
  std::vector<OffloadLayer> layers;
  /// Ops outside the layers before the first (embeddings) and after the
  /// last (final norm, lm_head); their weights are resident.
  std::vector<OffloadOpCost> headOps, tailOps;
  /// Device bytes independent of the batch and of the offload: parameters
  /// outside the layers, constants, the runtime's workspace.
  int64_t residentBytes = 0;
  /// KV cache bytes per token of one sequence, every layer, K and V.
  int64_t kvBytesPerToken = 0;
  /// The tokens of the reference step (its batch times its tokens per
  /// sequence: the batch for a decode step), which the op costs are for.
  /// FLOPs and non-weight bytes of a step of n tokens are the reference's
  /// times n / referenceTokens, and so is its arena:
  /// referenceTransientBytes * n / referenceTokens.
  int64_t referenceTokens = 1;
  int64_t referenceTransientBytes = 0;
  /// The context the ops' context costs are for (paged attention's: the
  /// block tables' capacity); 0 when no op has any.
  int64_t referenceContextTokens = 0;
  int64_t deviceBytes = 0;
  /// The roofline: peak dense FLOP/s and device memory bandwidth.
  double peakFlopsPerSecond = 0;
  double deviceBytesPerSecond = 0;
  /// Host-to-device copy bandwidth of streamed weights.
  double hostLinkBytesPerSecond = 0;
  OffloadWorkload workload;
};

/// One point the search weighed.
struct OffloadCandidate {
  int64_t pinnedLayers = 0, prefetch = 0, batch = 0;
  bool fits = false;
  /// Resident + pinned + K+1 slots + KV cache + the prefill's arena.
  int64_t deviceBytes = 0;
  /// The predicted time of the prefill step and of one decode step.
  double prefillSeconds = 0, decodeSeconds = 0;
  /// batch * G / (prefill + (G - 1) * decode); batch * P / prefill for a
  /// single step.
  double tokensPerSecond = 0;
};

/// The device bytes of L pinned layers, prefetch K and `batch`.
int64_t offloadDeviceBytes(const OffloadModelInputs &in, int64_t pinned,
                           int64_t prefetch, int64_t batch);

/// The simulated time of one step of `tokensPerSequence` tokens for `batch`
/// sequences attending to `contextTokens` tokens of context each, with the
/// first `pinned` layers resident and prefetch depth K:
/// the copy of streamed layer j starts when the copy engine is done with the
/// previous one and layer j - K - 1 has finished computing (its slot is
/// free; the fetch is issued before layer j - K computes); layer j computes
/// after layer j - 1 and after its copy arrived; pinned layers need no copy;
/// every op takes the slower of its FLOPs at peak and its bytes at the
/// device bandwidth, FLOPs and non-weight bytes scaled by the step's tokens
/// (and the context parts by the context, too). The prefill is a step of P
/// tokens with context P; a decode step one token with the decode steps'
/// mean context P + G / 2 (attention is linear in the context, so the mean
/// step's time times G - 1 is their sum).
double offloadStepSeconds(const OffloadModelInputs &in, int64_t pinned,
                          int64_t prefetch, int64_t batch,
                          int64_t tokensPerSequence, double contextTokens);

/// Evaluates one candidate (fits, bytes, times, tokens/s).
OffloadCandidate evaluateOffload(const OffloadModelInputs &in, int64_t pinned,
                                 int64_t prefetch, int64_t batch);

/// The largest batch in 1..maxBatch (0: no cap) whose candidate fits, or 0.
int64_t largestFittingBatch(const OffloadModelInputs &in, int64_t pinned,
                            int64_t prefetch, int64_t maxBatch);

struct OffloadSearchOptions {
  /// Prefetch depths 0..maxPrefetch are weighed.
  int64_t maxPrefetch = 3;
  /// The largest batch weighed (0: as large as fits).
  int64_t maxBatch = 0;
};

struct OffloadSearchResult {
  /// One candidate per (L, K), L = 0..layers, K = 0..maxPrefetch (one K for
  /// L = layers, where nothing streams), each at its largest fitting batch
  /// (tokens/s never drops as the batch grows; docs/offload.md) or, when
  /// not even one sequence fits, at batch 1 with fits = false.
  std::vector<OffloadCandidate> candidates;
  /// The index of the choice in `candidates`, -1 when none fits: the most
  /// tokens/s; ties (within 1e-9 relative) to fewer pinned layers, then the
  /// smaller prefetch, then the smaller batch.
  int64_t choice = -1;
};

OffloadSearchResult searchOffload(const OffloadModelInputs &in,
                                  const OffloadSearchOptions &options);

/// The candidates as a table (one line each, the choice marked), for the
/// pass's output and the docs.
std::string formatOffloadTable(const OffloadSearchResult &result);

} // namespace mlir::mw

#endif // MEMWALL_ANALYSIS_OFFLOADMODEL_H
