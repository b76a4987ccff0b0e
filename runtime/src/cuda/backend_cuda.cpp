//===- backend_cuda.cpp - The CUDA backend --------------------------------===//
//
// One device, one stream. Memory comes from cudaMalloc (the session allocates
// the arena and the persistents once); kernels are the launchers of
// kernels.cu plus cuBLASLt for matmul. Attributes are read and checked on the
// host with the CPU kernels' KernelCall helpers, so messages read the same.
// Scratch that a kernel needs (dense copies of strided matmul operands,
// attention scores, cross_entropy's row losses) comes from one workspace
// that grows during the first step and never after, so later steps allocate
// nothing; constants are computed once by the CPU kernel and kept on the
// device. Options (environment, since SessionOptions has no CUDA fields):
// MWRT_CUDA_TF32=1 lets f32 matmuls use TF32 tensor cores (off by default:
// CUBLAS_COMPUTE_32F); MWRT_CUDA_GRAPH=1 captures the second step's launches
// in a CUDA graph and replays it for every later step (not once the NCCL
// communicator orders its stream against this one: cudaBackendStream in
// backend_cuda.h). docs/runtime-cuda.md has the rest.
//
//===----------------------------------------------------------------------===//

#include "backend_cuda.h"
#include "cpu/support.h"
#include "cuda_kernels.h"
#include "executor.h"
#include "cuda/fused_codegen.h"
#include "cuda/fused_nvrtc.h"
#include "fusion.h"
#include "status.h"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace mwrt;
using namespace mwrt::detail;
using mwrt::cpu::KernelCall;
using mwrt::cpu::Shape;
using namespace mwrt::cuda;

#define MWRT_CUBLAS_CHECK(call)                                                \
  do {                                                                         \
    if (cublasStatus_t cublasStatus_ = (call);                                 \
        cublasStatus_ != CUBLAS_STATUS_SUCCESS)                                \
      return setError(MWRT_INTERNAL, std::string(#call) + " failed: " +       \
                                         cublasLtGetStatusString(cublasStatus_)); \
  } while (false)

namespace {

constexpr size_t kCublasWorkspace = 32u << 20;

bool envFlag(const char *name) {
  const char *v = std::getenv(name);
  return v && std::strcmp(v, "1") == 0;
}

bool envOff(const char *name) {
  const char *v = std::getenv(name);
  return v && std::strcmp(v, "0") == 0;
}

/// A cache op's scales (cpu::getCacheScales's) for the kernels.
mwrt_status cacheScales(const cpu::KernelCall &c,
                        const std::vector<float> &scales, CacheScales &out) {
  if (scales.size() > static_cast<size_t>(kMaxCacheScales))
    return setError(MWRT_UNAVAILABLE,
                    "'" + std::string(opKindName(c.op)) +
                        "': the CUDA backend takes at most " +
                        std::to_string(kMaxCacheScales) + " scales");
  out.count = static_cast<int>(scales.size());
  std::copy(scales.begin(), scales.end(), out.values);
  return MWRT_OK;
}

/// The bytes [first, last) a tensor's elements may touch.
std::pair<const char *, const char *> extent(const TDesc &t, int elemSize) {
  int64_t hi = 0;
  for (int d = 0; d < t.rank; ++d) {
    if (t.shape[d] == 0)
      return {t.data, t.data};
    hi += (t.shape[d] - 1) * (t.strides[d] < 0 ? -t.strides[d] : t.strides[d]);
  }
  return {t.data, t.data + (hi + 1) * elemSize};
}

bool overlap(const TDesc &a, const TDesc &b) {
  auto [a0, a1] = extent(a, static_cast<int>(dtypeSize(DType(a.dtype))));
  auto [b0, b1] = extent(b, static_cast<int>(dtypeSize(DType(b.dtype))));
  return a0 < b1 && b0 < a1;
}

int64_t elementsOf(const TDesc &t) {
  int64_t n = 1;
  for (int d = 0; d < t.rank; ++d)
    n *= t.shape[d];
  return n;
}

size_t alignUp(size_t v) { return (v + 255) & ~size_t(255); }

/// Scratch carved from the workspace in 256-byte aligned pieces.
struct Carve {
  size_t total = 0;
  size_t add(size_t bytes) {
    size_t at = total;
    total += alignUp(bytes);
    return at;
  }
};

/// Minimum operand and result counts per op (the generated op table's), so
/// no launch reads past them.
void arity(OpKind k, size_t &ins, size_t &outs) {
  static constexpr int counts[][2] = {
#define MWRT_OP_COUNTS(kind, name, minIns, maxIns, minOuts, maxOuts, alias,    \
                       attrs, kernel)                                          \
  {minIns, minOuts},
      MWRT_FOR_EACH_OP(MWRT_OP_COUNTS)
#undef MWRT_OP_COUNTS
  };
  ins = static_cast<size_t>(counts[static_cast<int>(k)][0]);
  outs = static_cast<size_t>(counts[static_cast<int>(k)][1]);
}

class CudaBackend final : public Backend {
public:
  CudaBackend() = default;
  ~CudaBackend() override {
    if (graphExec)
      cudaGraphExecDestroy(graphExec);
    for (auto &entry : constants)
      cudaFree(entry.second);
    for (auto &entry : adamGroups)
      cudaFree(entry.second.device);
    if (workspace)
      cudaFree(workspace);
    if (cublasWorkspace)
      cudaFree(cublasWorkspace);
    if (errorFlag)
      cudaFree(errorFlag);
    for (auto &entry : fusedModules)
      if (entry.second.library)
        cudaLibraryUnload(entry.second.library);
    if (lt)
      cublasLtDestroy(lt);
    for (std::vector<cudaEvent_t> *list : {&issueEvents, &startEvents,
                                            &doneEvents})
      for (cudaEvent_t e : *list)
        if (e)
          cudaEventDestroy(e);
    if (copyStream)
      cudaStreamDestroy(copyStream);
    if (stream)
      cudaStreamDestroy(stream);
  }

  mwrt_status init() {
    tf32 = envFlag("MWRT_CUDA_TF32");
    useGraph = envFlag("MWRT_CUDA_GRAPH");
    fuseAdam = !envOff("MWRT_CUDA_FUSED_ADAMW");
    MWRT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    MWRT_CUBLAS_CHECK(cublasLtCreate(&lt));
    MWRT_CUDA_CHECK(cudaMalloc(&cublasWorkspace, kCublasWorkspace));
    MWRT_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&errorFlag),
                               sizeof(int)));
    MWRT_CUDA_CHECK(cudaMemset(errorFlag, 0, sizeof(int)));
    return MWRT_OK;
  }

  const char *name() const override { return "cuda"; }

  mwrt_status allocate(uint64_t bytes, uint64_t alignment,
                       void *&ptr) override {
    ptr = nullptr;
    if (bytes == 0)
      return MWRT_OK;
    if (alignment > 256) // cudaMalloc aligns to 256 bytes
      return setError(MWRT_INVALID_ARGUMENT,
                      "the CUDA backend cannot align memory to " +
                          std::to_string(alignment) + " bytes (at most 256)");
    if (cudaError_t e = cudaMalloc(&ptr, bytes); e != cudaSuccess) {
      ptr = nullptr;
      return setError(MWRT_INTERNAL, "out of device memory allocating " +
                                         std::to_string(bytes) + " bytes: " +
                                         cudaGetErrorString(e));
    }
    MWRT_CUDA_CHECK(cudaMemsetAsync(ptr, 0, bytes, stream));
    MWRT_CUDA_CHECK(cudaStreamSynchronize(stream));
    return MWRT_OK;
  }

  void release(void *ptr) override {
    if (ptr)
      cudaFree(ptr);
  }

  mwrt_status upload(void *dst, const void *src, size_t bytes) override {
    MWRT_TRY(flushAdamW()); // kernels deferred by run() go first
    if (!bytes)
      return MWRT_OK;
    MWRT_CUDA_CHECK(
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
    MWRT_CUDA_CHECK(cudaStreamSynchronize(stream));
    return MWRT_OK;
  }

  mwrt_status download(void *dst, const void *src, size_t bytes) override {
    MWRT_TRY(flushAdamW()); // kernels deferred by run() go first
    if (!bytes)
      return MWRT_OK;
    MWRT_CUDA_CHECK(
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream));
    MWRT_CUDA_CHECK(cudaStreamSynchronize(stream));
    return MWRT_OK;
  }

  mwrt_status copy(const TensorRef &dst, const TensorRef &src) override {
    MWRT_TRY(flushAdamW()); // kernels deferred by run() go first
    if (dst.numElements() == 0)
      return MWRT_OK;
    size_t size = dtypeSize(dst.dtype);
    if (dst.isContiguous() && src.isContiguous()) {
      MWRT_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data,
                                      dst.numElements() * size,
                                      cudaMemcpyDeviceToDevice, stream));
      return MWRT_OK;
    }
    TDesc d, s;
    MWRT_TRY(desc(dst, d));
    MWRT_TRY(desc(src, s));
    MWRT_CUDA_CHECK(launchCopy(d, s, static_cast<int>(size), stream));
    return MWRT_OK;
  }

  mwrt_status run(const BoundKernel &k) override {
    ++pendingRuns;
    if (graphExec)
      return MWRT_OK; // the step replays as one graph in synchronize()
    if (useGraph && completedSteps == 1 && !capturing) {
      MWRT_CUDA_CHECK(
          cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
      capturing = true;
    }
    // Consecutive adamw kernels with the same hyperparameters and step wait
    // (dispatch defers them) and go as one multi-tensor launch when
    // anything else comes.
    mwrt_status status = fuseAdam && k.kind == OpKind::AdamW ? MWRT_OK
                                                              : flushAdamW();
    if (status == MWRT_OK)
      status = k.program ? runFused(k) : dispatch(k);
    if (status != MWRT_OK)
      abandonCapture();
    return status;
  }

  mwrt_status prepareFused(const FusedProgramDesc &program) override;
  uint64_t fusedScratchBytes(const FusedProgramDesc &program) const override;

  // Offloaded weights: pinned host memory, and a copy stream ordered
  // against the kernels' stream by events, one set per handle, made when
  // the session is created.
  mwrt_status allocateHost(uint64_t bytes, uint64_t alignment,
                           void *&ptr) override {
    ptr = nullptr;
    if (bytes == 0)
      return MWRT_OK;
    if (alignment > 4096) // cudaHostAlloc returns whole pages
      return setError(MWRT_INVALID_ARGUMENT,
                      "pinned host memory cannot be aligned to " +
                          std::to_string(alignment) + " bytes (at most 4096)");
    if (cudaError_t e = cudaHostAlloc(&ptr, bytes, cudaHostAllocDefault);
        e != cudaSuccess) {
      ptr = nullptr;
      return setError(MWRT_INTERNAL, "cannot pin " + std::to_string(bytes) +
                                         " bytes of host memory: " +
                                         cudaGetErrorString(e));
    }
    std::memset(ptr, 0, bytes);
    return MWRT_OK;
  }

  void releaseHost(void *ptr) override {
    if (ptr)
      cudaFreeHost(ptr);
  }

  mwrt_status prepareCopies(size_t count) override {
    // A replayed graph would not order itself against the copy stream.
    useGraph = false;
    if (!copyStream && count)
      MWRT_CUDA_CHECK(
          cudaStreamCreateWithFlags(&copyStream, cudaStreamNonBlocking));
    for (std::vector<cudaEvent_t> *list :
         {&issueEvents, &startEvents, &doneEvents}) {
      bool timing = list != &issueEvents;
      while (list->size() < count) {
        cudaEvent_t e = nullptr;
        MWRT_CUDA_CHECK(cudaEventCreateWithFlags(
            &e, timing ? cudaEventDefault : cudaEventDisableTiming));
        list->push_back(e);
      }
    }
    timed.assign(count, 0);
    return MWRT_OK;
  }

  mwrt_status markCopyIssue(size_t handle) override {
    MWRT_TRY(flushAdamW()); // the kernels before the issue point, launched
    MWRT_CUDA_CHECK(cudaEventRecord(issueEvents.at(handle), stream));
    return MWRT_OK;
  }

  mwrt_status copyToDevice(size_t handle, void *dst, const void *src,
                           size_t bytes) override {
    MWRT_CUDA_CHECK(cudaStreamWaitEvent(copyStream, issueEvents.at(handle), 0));
    MWRT_CUDA_CHECK(cudaEventRecord(startEvents.at(handle), copyStream));
    if (bytes)
      MWRT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice,
                                      copyStream));
    MWRT_CUDA_CHECK(cudaEventRecord(doneEvents.at(handle), copyStream));
    timed.at(handle) = 1;
    return MWRT_OK;
  }

  mwrt_status finishCopy(size_t handle) override {
    MWRT_CUDA_CHECK(cudaEventSynchronize(doneEvents.at(handle)));
    return MWRT_OK;
  }

  mwrt_status waitCopy(size_t handle) override {
    MWRT_TRY(flushAdamW());
    MWRT_CUDA_CHECK(cudaStreamWaitEvent(stream, doneEvents.at(handle), 0));
    return MWRT_OK;
  }

  double copySeconds() const override { return copyBusySeconds; }

  mwrt_status synchronize() override {
    if (mwrt_status status = flushAdamW(); status != MWRT_OK) {
      abandonCapture();
      return status;
    }
    if (capturing) {
      capturing = false;
      cudaGraph_t graph = nullptr;
      MWRT_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
      cudaError_t e = cudaGraphInstantiate(&graphExec, graph, 0);
      cudaGraphDestroy(graph);
      if (e != cudaSuccess) {
        graphExec = nullptr;
        return setError(MWRT_INTERNAL, std::string("cudaGraphInstantiate: ") +
                                           cudaGetErrorString(e));
      }
    }
    if (graphExec && pendingRuns > 0)
      MWRT_CUDA_CHECK(cudaGraphLaunch(graphExec, stream));
    MWRT_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (size_t h = 0; h < timed.size(); ++h) {
      if (!timed[h])
        continue;
      float ms = 0;
      MWRT_CUDA_CHECK(cudaEventSynchronize(doneEvents[h]));
      MWRT_CUDA_CHECK(cudaEventElapsedTime(&ms, startEvents[h], doneEvents[h]));
      copyBusySeconds += ms / 1000.0;
      timed[h] = 0;
    }
    if (pendingRuns > 0) {
      pendingRuns = 0;
      ++completedSteps;
    }
    int code = 0;
    MWRT_CUDA_CHECK(cudaMemcpy(&code, errorFlag, sizeof(int),
                               cudaMemcpyDeviceToHost));
    if (code == kErrNone)
      return MWRT_OK;
    MWRT_CUDA_CHECK(cudaMemset(errorFlag, 0, sizeof(int)));
    const char *what[] = {
        "", "'mw.embedding' or 'mw.embedding_grad': an index is out of range",
        "'mw.cross_entropy': a label is out of range",
        "integer division by zero",
        "'mw.cast': a value is not finite or out of range",
        "'mw.adamw': step must be >= 1 (the 1-based count of this update)",
        "'mw.kv_cache_write': a slot is outside the cache",
        "'mw.paged_attention': a context length or a block table entry is "
        "outside the cache"};
    return setError(MWRT_INVALID_ARGUMENT,
                    std::string("the CUDA kernels found bad data: ") +
                        what[code < 8 ? code : 0]);
  }

  /// cudaBackendStream (backend_cuda.h).
  mwrt_status shareStream(cudaStream_t &out) {
    if (graphExec)
      return setError(MWRT_INTERNAL,
                      "the CUDA backend replays its steps as a CUDA graph, "
                      "which collectives on another stream cannot join "
                      "(unset MWRT_CUDA_GRAPH)");
    useGraph = false;
    if (capturing) {
      // Begun by this step's first kernel: what it holds runs now, once, and
      // the rest of the step is launched as it comes.
      capturing = false;
      cudaGraph_t graph = nullptr;
      MWRT_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
      cudaGraphExec_t exec = nullptr;
      cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
      cudaGraphDestroy(graph);
      if (e == cudaSuccess) {
        e = cudaGraphLaunch(exec, stream);
        cudaGraphExecDestroy(exec); // freed once the launch completes
      }
      if (e != cudaSuccess)
        return setError(MWRT_INTERNAL,
                        std::string("running the kernels captured so far: ") +
                            cudaGetErrorString(e));
    }
    MWRT_TRY(flushAdamW());
    out = stream;
    return MWRT_OK;
  }

private:
  /// After a failure while capturing: give up on graphs for this session.
  void abandonCapture() {
    if (!capturing)
      return;
    cudaGraph_t graph = nullptr;
    cudaStreamEndCapture(stream, &graph);
    if (graph)
      cudaGraphDestroy(graph);
    capturing = false;
    useGraph = false;
  }
  mwrt_status desc(const TensorRef &t, TDesc &d) const {
    return descAs(t, t.shape, cpu::stridesOf(t), d);
  }
  mwrt_status descAs(const TensorRef &t, const Shape &shape,
                     const Shape &strides, TDesc &d,
                     int64_t offset = 0) const {
    if (shape.size() > static_cast<size_t>(kMaxRank))
      return setError(MWRT_UNAVAILABLE,
                      "the CUDA backend takes tensors of rank <= " +
                          std::to_string(kMaxRank) + ", got rank " +
                          std::to_string(shape.size()));
    d = TDesc();
    d.data = static_cast<char *>(t.data) + offset * dtypeSize(t.dtype);
    d.dtype = static_cast<int>(t.dtype);
    d.rank = static_cast<int>(shape.size());
    for (size_t i = 0; i < shape.size(); ++i) {
      d.shape[i] = shape[i];
      d.strides[i] = strides[i];
    }
    return MWRT_OK;
  }
  /// A dense row-major view of `bytes` at `data`.
  static TDesc dense(void *data, DType dtype, const Shape &shape) {
    TDesc d;
    d.data = static_cast<char *>(data);
    d.dtype = static_cast<int>(dtype);
    d.rank = static_cast<int>(shape.size());
    Shape strides = cpu::rowMajorStrides(shape);
    for (size_t i = 0; i < shape.size(); ++i) {
      d.shape[i] = shape[i];
      d.strides[i] = strides[i];
    }
    return d;
  }

  /// At least `bytes` of scratch; grows (synchronizing) only when a larger
  /// request than ever before comes, which is during the first step.
  mwrt_status scratch(size_t bytes, char *&base) {
    if (bytes > workspaceBytes) {
      if (capturing)
        return setError(MWRT_INTERNAL,
                        "CUDA workspace grew while capturing a graph");
      MWRT_CUDA_CHECK(cudaStreamSynchronize(stream));
      if (workspace)
        MWRT_CUDA_CHECK(cudaFree(workspace));
      workspace = nullptr;
      workspaceBytes = 0;
      MWRT_CUDA_CHECK(cudaMalloc(&workspace, bytes));
      workspaceBytes = bytes;
    }
    base = static_cast<char *>(workspace);
    return MWRT_OK;
  }

  mwrt_status dispatch(const BoundKernel &k);
  /// A fused kernel: its generated CUDA C, compiled at prepareFused.
  mwrt_status runFused(const BoundKernel &k);
  struct FusedModule {
    cudaLibrary_t library = nullptr;
    cudaKernel_t kernel = nullptr;
    FusedLaunch launch;
  };
  std::map<const FusedProgramDesc *, FusedModule> fusedModules;
  /// Adds adamw kernel `k` (t: param, grad, m, v, step, new param, new m,
  /// new v; hp: lr, beta1, beta2, eps, weight_decay) to the pending group,
  /// launching the group first when `k` cannot join it.
  mwrt_status deferAdamW(const BoundKernel &k, const TDesc (&t)[8],
                         const double (&hp)[5]);
  mwrt_status flushAdamW();
  mwrt_status runConstant(const BoundKernel &k, KernelCall &c);
  mwrt_status runMatmul(KernelCall &c);
  mwrt_status gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t kk,
                   DType dtype, const void *a, const void *b, void *c,
                   int64_t batch, int64_t strideA, int64_t strideB);

  cudaStream_t stream = nullptr;
  /// The copy engine (prepareCopies): its stream and, per handle, the issue
  /// point on `stream`, the copy's start and end on `copyStream`, and
  /// whether the copy's time is yet to be added to copyBusySeconds.
  cudaStream_t copyStream = nullptr;
  std::vector<cudaEvent_t> issueEvents, startEvents, doneEvents;
  std::vector<char> timed;
  double copyBusySeconds = 0;
  cublasLtHandle_t lt = nullptr;
  void *cublasWorkspace = nullptr;
  void *workspace = nullptr;
  size_t workspaceBytes = 0;
  int *errorFlag = nullptr;
  std::map<const BoundKernel *, void *> constants;
  /// transA, transB, m, n, k, dtype, batch count.
  using AlgoKey = std::array<int64_t, 7>;
  std::map<AlgoKey, cublasLtMatmulAlgo_t> algos;
  /// adamw kernels waiting to go as one launch: their tensors, and the
  /// hyperparameters and step they share.
  struct PendingAdam {
    TDesc t[8];
  };
  std::vector<PendingAdam> pendingAdam;
  double pendingHp[5] = {};
  /// Device copies of each group's AdamArgs and starts, by the group's first
  /// kernel, uploaded during the first step (before any graph capture).
  struct AdamGroup {
    void *device = nullptr;
    std::vector<AdamArgs> host;
    int64_t total = 0;
  };
  std::map<std::pair<const BoundKernel *, size_t>, AdamGroup> adamGroups;
  const BoundKernel *pendingFirst = nullptr;
  std::set<std::pair<const BoundKernel *, const BoundKernel *>> joinedBefore;
  bool tf32 = false, useGraph = false, capturing = false, fuseAdam = true;
  cudaGraphExec_t graphExec = nullptr;
  uint64_t pendingRuns = 0, completedSteps = 0;
};

mwrt_status CudaBackend::deferAdamW(const BoundKernel &k, const TDesc (&t)[8],
                                    const double (&hp)[5]) {
  PendingAdam next;
  std::copy(t, t + 8, next.t);
  // A kernel joins the group when it shares the hyperparameters and the
  // step, and touches nothing an earlier member writes (nor writes what one
  // reads): the group's kernels then commute, and one launch is the same.
  bool joins = !pendingAdam.empty() &&
               std::equal(hp, hp + 5, pendingHp) &&
               next.t[4].data == pendingAdam.front().t[4].data &&
               next.t[4].dtype == pendingAdam.front().t[4].dtype;
  // The overlap test is quadratic in the group; a kernel that joined the
  // same group in an earlier step (the tensors do not move) joins again.
  bool known = joins && joinedBefore.count({pendingFirst, &k});
  for (size_t j = 0; joins && !known && j < pendingAdam.size(); ++j) {
    const TDesc *was = pendingAdam[j].t;
    for (int w = 5; joins && w < 8; ++w) {
      for (int r = 0; r < 8; ++r)
        if (overlap(was[w], next.t[r]) || overlap(next.t[w], was[r]))
          joins = false;
    }
  }
  if (!joins) {
    MWRT_TRY(flushAdamW());
    pendingFirst = &k;
    std::copy(hp, hp + 5, pendingHp);
  } else if (!known) {
    joinedBefore.insert({pendingFirst, &k});
  }
  pendingAdam.push_back(next);
  return MWRT_OK;
}

mwrt_status CudaBackend::flushAdamW() {
  if (pendingAdam.empty())
    return MWRT_OK;
  std::vector<PendingAdam> group;
  group.swap(pendingAdam);
  char *base = nullptr;
  MWRT_TRY(scratch(256, base));
  float *scalars = reinterpret_cast<float *>(base);
  const double *hp = pendingHp;
  auto one = [&](const TDesc *t) -> mwrt_status {
    MWRT_CUDA_CHECK(launchAdamW(t[5], t[6], t[7], t[0], t[1], t[2], t[3],
                                t[4], hp[0], hp[1], hp[2], hp[3], hp[4],
                                scalars, errorFlag, stream));
    return MWRT_OK;
  };
  if (group.size() == 1)
    return one(group.front().t);
  std::vector<AdamArgs> args;
  std::vector<int64_t> starts;
  int64_t total = 0;
  for (const PendingAdam &p : group) {
    int64_t n = elementsOf(p.t[0]);
    if (n == 0)
      continue;
    const TDesc *t = p.t;
    args.push_back(AdamArgs{t[0], t[1], t[2], t[3], t[5], t[6], t[7]});
    starts.push_back(total);
    total += n;
  }
  // The device copy of the group's arguments, made once; the tensors do not
  // move between steps, so later steps find the same bytes. Anything new
  // while a graph is being captured (no uploads there) goes per tensor.
  AdamGroup &g = adamGroups[{pendingFirst, group.size()}];
  size_t argBytes = args.size() * sizeof(AdamArgs);
  bool same = g.device && g.host.size() == args.size() && g.total == total &&
              std::memcmp(g.host.data(), args.data(), argBytes) == 0;
  if (!same) {
    if (capturing) {
      for (const PendingAdam &p : group)
        MWRT_TRY(one(p.t));
      return MWRT_OK;
    }
    MWRT_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (g.device)
      MWRT_CUDA_CHECK(cudaFree(g.device));
    g.device = nullptr;
    MWRT_CUDA_CHECK(
        cudaMalloc(&g.device, argBytes + starts.size() * sizeof(int64_t)));
    MWRT_CUDA_CHECK(cudaMemcpy(g.device, args.data(), argBytes,
                               cudaMemcpyHostToDevice));
    MWRT_CUDA_CHECK(cudaMemcpy(static_cast<char *>(g.device) + argBytes,
                               starts.data(), starts.size() * sizeof(int64_t),
                               cudaMemcpyHostToDevice));
    g.host = args;
    g.total = total;
  }
  MWRT_CUDA_CHECK(launchMultiTensorAdamW(
      static_cast<const AdamArgs *>(g.device),
      reinterpret_cast<const int64_t *>(static_cast<char *>(g.device) +
                                        argBytes),
      static_cast<int>(args.size()), total, group.front().t[4], hp[0], hp[1],
      hp[2], hp[3], hp[4], scalars, errorFlag, stream));
  return MWRT_OK;
}


/// The input's dimensions split into kept and reduced ones (the CPU's
/// ReductionWalk), with the tensor's own strides.
void splitAxes(const Shape &shape, const Shape &strides, const Shape &axes,
               Shape &keptShape, Shape &keptStrides, Shape &redShape,
               Shape &redStrides) {
  for (size_t d = 0; d < shape.size(); ++d) {
    bool reduced = false;
    for (int64_t a : axes)
      reduced |= a == static_cast<int64_t>(d);
    (reduced ? redShape : keptShape).push_back(shape[d]);
    (reduced ? redStrides : keptStrides).push_back(strides[d]);
  }
}

mwrt_status CudaBackend::runConstant(const BoundKernel &k, KernelCall &c) {
  const TensorRef &out = c.out(0);
  size_t bytes = out.numElements() * dtypeSize(out.dtype);
  auto it = constants.find(&k);
  if (it == constants.end()) {
    // The CPU kernel computes (and checks) the value once, densely.
    std::vector<char> host(bytes);
    TensorRef hostOut(out.dtype, out.shape, host.data());
    MWRT_TRY(runCpuKernel(k.kind, *k.attrs, k.ins, {hostOut}));
    void *dev = nullptr;
    if (bytes) {
      MWRT_CUDA_CHECK(cudaMalloc(&dev, bytes));
      MWRT_CUDA_CHECK(cudaMemcpy(dev, host.data(), bytes,
                                 cudaMemcpyHostToDevice));
    }
    it = constants.emplace(&k, dev).first;
  }
  if (!bytes)
    return MWRT_OK;
  TDesc d;
  MWRT_TRY(desc(out, d));
  MWRT_CUDA_CHECK(launchCopy(d, dense(it->second, out.dtype, out.shape),
                             static_cast<int>(dtypeSize(out.dtype)), stream));
  return MWRT_OK;
}

mwrt_status CudaBackend::gemm(bool transA, bool transB, int64_t m, int64_t n,
                              int64_t kk, DType dtype, const void *a,
                              const void *b, void *c, int64_t batch,
                              int64_t strideA, int64_t strideB) {
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: cuBLASLt
  // gets B first, and every matrix keeps its row-major storage.
  cudaDataType_t type = dtype == DType::F16    ? CUDA_R_16F
                        : dtype == DType::BF16 ? CUDA_R_16BF
                                               : CUDA_R_32F;
  cublasComputeType_t compute = dtype == DType::F32 && tf32
                                    ? CUBLAS_COMPUTE_32F_FAST_TF32
                                    : CUBLAS_COMPUTE_32F;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  mwrt_status status = [&]() -> mwrt_status {
    MWRT_CUBLAS_CHECK(cublasLtMatmulDescCreate(&op, compute, CUDA_R_32F));
    cublasOperation_t opA = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opB = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
    MWRT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
        op, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof(opA)));
    MWRT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
        op, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof(opB)));
    uint64_t aRows = transB ? kk : n, aCols = transB ? n : kk;
    uint64_t bRows = transA ? m : kk, bCols = transA ? kk : m;
    MWRT_CUBLAS_CHECK(
        cublasLtMatrixLayoutCreate(&la, type, aRows, aCols, aRows));
    MWRT_CUBLAS_CHECK(
        cublasLtMatrixLayoutCreate(&lb, type, bRows, bCols, bRows));
    MWRT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lc, type, n, m, n));
    if (batch > 1) {
      int32_t count = static_cast<int32_t>(batch);
      int64_t strides[3] = {strideB, strideA, m * n};
      cublasLtMatrixLayout_t layouts[3] = {la, lb, lc};
      for (int i = 0; i < 3; ++i) {
        MWRT_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
            layouts[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
            sizeof(count)));
        MWRT_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
            layouts[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
            &strides[i], sizeof(int64_t)));
      }
    }
    MWRT_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    uint64_t wsBytes = kCublasWorkspace;
    MWRT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsBytes,
        sizeof(wsBytes)));
    // Split-K reductions in place use atomics: not run to run repeatable.
    uint32_t schemes = CUBLASLT_REDUCTION_SCHEME_MASK &
                       ~static_cast<uint32_t>(CUBLASLT_REDUCTION_SCHEME_INPLACE);
    MWRT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &schemes,
        sizeof(schemes)));
    // One heuristic query per shape, in the first step; later steps reuse
    // it (the same algorithm every step also keeps results repeatable).
    AlgoKey key = {transA, transB, m, n, kk, static_cast<int64_t>(dtype),
                   batch};
    auto it = algos.find(key);
    if (it == algos.end()) {
      cublasLtMatmulHeuristicResult_t heuristic{};
      int found = 0;
      MWRT_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(
          lt, op, la, lb, lc, lc, pref, 1, &heuristic, &found));
      if (found == 0)
        return setError(MWRT_UNAVAILABLE,
                        "'mw.matmul': cuBLASLt has no algorithm for this shape");
      it = algos.emplace(key, heuristic.algo).first;
    }
    float alpha = 1.0f, beta = 0.0f;
    MWRT_CUBLAS_CHECK(cublasLtMatmul(lt, op, &alpha, b, la, a, lb, &beta, c,
                                     lc, c, lc, &it->second,
                                     cublasWorkspace, kCublasWorkspace,
                                     stream));
    return MWRT_OK;
  }();
  if (pref)
    cublasLtMatmulPreferenceDestroy(pref);
  for (cublasLtMatrixLayout_t l : {la, lb, lc})
    if (l)
      cublasLtMatrixLayoutDestroy(l);
  if (op)
    cublasLtMatmulDescDestroy(op);
  return status;
}

mwrt_status CudaBackend::runMatmul(KernelCall &c) {
  const TensorRef &a = c.in(0), &b = c.in(1), &out = c.out(0);
  MWRT_TRY(c.expectFloat(a, "lhs"));
  size_t ar = a.shape.size(), br = b.shape.size();
  if (ar < 2 || br < 2)
    return c.fail("operands must have rank >= 2");
  if (b.dtype != a.dtype)
    return c.fail("rhs element type differs from the lhs element type");
  bool transA, transB;
  MWRT_TRY(c.getBool("transpose_lhs", transA));
  MWRT_TRY(c.getBool("transpose_rhs", transB));
  int64_t m = transA ? a.shape[ar - 1] : a.shape[ar - 2];
  int64_t k = transA ? a.shape[ar - 2] : a.shape[ar - 1];
  int64_t k2 = transB ? b.shape[br - 1] : b.shape[br - 2];
  int64_t n = transB ? b.shape[br - 2] : b.shape[br - 1];
  if (k != k2)
    return c.fail("contracting dimensions differ: ", k, " vs ", k2);
  Shape aBatch(a.shape.begin(), a.shape.end() - 2);
  Shape bBatch(b.shape.begin(), b.shape.end() - 2), batch;
  if (!cpu::broadcastShapes(aBatch, bBatch, batch))
    return c.fail("batch dimensions are not broadcast-compatible");
  Shape shape = batch;
  shape.push_back(m);
  shape.push_back(n);
  MWRT_TRY(c.expectType(out, "result", shape, a.dtype));
  int64_t count = cpu::product(batch), aCount = cpu::product(aBatch),
          bCount = cpu::product(bBatch);
  if (m == 0 || n == 0 || count == 0)
    return MWRT_OK;
  size_t size = dtypeSize(a.dtype);
  // Strided operands and results go through dense scratch copies.
  Carve carve;
  size_t aAt = a.isContiguous() ? 0 : carve.add(a.numElements() * size);
  size_t bAt = b.isContiguous() ? 0 : carve.add(b.numElements() * size);
  size_t cAt = out.isContiguous() ? 0 : carve.add(out.numElements() * size);
  char *base = nullptr;
  if (carve.total)
    MWRT_TRY(scratch(carve.total, base));
  const void *pa = a.data, *pb = b.data;
  void *pc = out.data;
  for (auto [t, at, ptr] : {std::tuple{&a, aAt, &pa}, {&b, bAt, &pb}}) {
    if (t->isContiguous())
      continue;
    TDesc src;
    MWRT_TRY(desc(*t, src));
    MWRT_CUDA_CHECK(launchCopy(dense(base + at, t->dtype, t->shape), src,
                               static_cast<int>(size), stream));
    *ptr = base + at;
  }
  if (!out.isContiguous())
    pc = base + cAt;
  if (k == 0) {
    MWRT_CUDA_CHECK(cudaMemsetAsync(pc, 0, out.numElements() * size, stream));
  } else if (aCount == count && bCount == count) {
    MWRT_TRY(gemm(transA, transB, m, n, k, a.dtype, pa, pb, pc, count, m * k,
                  k * n));
  } else if (bCount == 1 && !transA) { // fold lhs batches into rows
    MWRT_TRY(gemm(false, transB, m * count, n, k, a.dtype, pa, pb, pc, 1, 0,
                  0));
  } else { // general broadcast: one product per batch element
    std::array<Shape, 2> strides = {
        cpu::broadcastStrides(aBatch, cpu::rowMajorStrides(aBatch), batch),
        cpu::broadcastStrides(bBatch, cpu::rowMajorStrides(bBatch), batch)};
    mwrt_status status = MWRT_OK;
    cpu::forEachIndex<2>(
        batch, strides, [&](int64_t bi, const std::array<int64_t, 2> &o) {
          if (status != MWRT_OK)
            return;
          status = gemm(transA, transB, m, n, k, a.dtype,
                        static_cast<const char *>(pa) + o[0] * m * k * size,
                        static_cast<const char *>(pb) + o[1] * k * n * size,
                        static_cast<char *>(pc) + bi * m * n * size, 1, 0, 0);
        });
    MWRT_TRY(status);
  }
  if (!out.isContiguous()) {
    TDesc d;
    MWRT_TRY(desc(out, d));
    MWRT_CUDA_CHECK(launchCopy(d, dense(pc, out.dtype, out.shape),
                               static_cast<int>(size), stream));
  }
  return MWRT_OK;
}

mwrt_status CudaBackend::dispatch(const BoundKernel &k) {
  size_t minIns, minOuts;
  arity(k.kind, minIns, minOuts);
  CpuKernelOptions cpuOptions;
  KernelCall c{k.kind, *k.attrs, k.ins, k.outs, cpuOptions};
  if (k.ins.size() < minIns || k.outs.size() < minOuts)
    return c.fail("expects at least ", minIns, " operands and ", minOuts,
                  " results, got ", k.ins.size(), " and ", k.outs.size());
  bool cacheOp =
      k.kind == OpKind::KvCacheWrite || k.kind == OpKind::PagedAttention;
  for (const auto *list : {&k.ins, &k.outs})
    for (const TensorRef &t : *list) {
      if (!isKernelDType(t.dtype))
        return c.fail("unsupported element type");
      if (cpu::isQuantizedCache(t.dtype) && !cacheOp)
        return c.fail("has a ", cpu::typeName(t.dtype),
                      " tensor, which only the KV cache ops take");
    }
  auto in = [&](size_t i, TDesc &d) { return desc(k.ins[i], d); };
  auto out = [&](size_t i, TDesc &d) { return desc(k.outs[i], d); };
  const TensorRef &o0 = k.outs[0];
  int size0 = static_cast<int>(dtypeSize(o0.dtype));
  OpKind kind = k.kind;
  if (elementwiseSpec(kind)) { // an op with a formula (op_table.h)
    Shape shape;
    double params[kMaxFormulaParams] = {};
    MWRT_TRY(cpu::checkElementwise(c, shape, params));
    TDesc ds[2], d;
    for (size_t i = 0; i < k.ins.size() && i < 2; ++i)
      MWRT_TRY(descAs(k.ins[i], shape,
                      cpu::broadcastStrides(k.ins[i].shape,
                                            cpu::stridesOf(k.ins[i]), shape),
                      ds[i]));
    MWRT_TRY(out(0, d));
    MWRT_CUDA_CHECK(launchElementwise(static_cast<int>(kind), d, ds,
                                      static_cast<int>(k.ins.size()), params,
                                      errorFlag, stream));
    return MWRT_OK;
  }
  switch (kind) {
  case OpKind::Constant:
  case OpKind::Splat:
    return runConstant(k, c);
  case OpKind::Cast: {
    if (o0.shape != c.in(0).shape)
      return c.fail("result shape differs from the input shape");
    TDesc ds[1], d;
    MWRT_TRY(in(0, ds[0]));
    MWRT_TRY(out(0, d));
    MWRT_CUDA_CHECK(
        launchElementwise(kEwCast, d, ds, 1, nullptr, errorFlag, stream));
    return MWRT_OK;
  }
  case OpKind::Matmul:
    return runMatmul(c);
  case OpKind::ReduceSum: case OpKind::ReduceMax: case OpKind::ReduceMean:
  case OpKind::ReduceMaxGrad: {
    const TensorRef &x = c.in(0);
    if (kind != OpKind::ReduceSum && kind != OpKind::ReduceMax)
      MWRT_TRY(c.expectFloat(x, "input"));
    Shape axes, ks, kst, rs, rst;
    MWRT_TRY(c.getAxes(static_cast<int64_t>(x.shape.size()), axes));
    splitAxes(x.shape, cpu::stridesOf(x), axes, ks, kst, rs, rst);
    TDesc kept, red;
    MWRT_TRY(descAs(x, ks, kst, kept));
    MWRT_TRY(descAs(x, rs, rst, red));
    if (kind != OpKind::ReduceMaxGrad) {
      if (cpu::product(ks) != o0.numElements() || o0.dtype != x.dtype)
        return c.fail("result type does not match the reduction");
      TDesc d;
      MWRT_TRY(out(0, d));
      int op = kind == OpKind::ReduceSum ? 0 : kind == OpKind::ReduceMax ? 1
                                                                         : 2;
      MWRT_CUDA_CHECK(
          launchReduce(op, d, kept, red, static_cast<int>(x.dtype), stream));
      return MWRT_OK;
    }
    MWRT_TRY(c.expectSameType(o0, "result", x, "input"));
    Shape oks, okst, ors, orst;
    splitAxes(o0.shape, cpu::stridesOf(o0), axes, oks, okst, ors, orst);
    TDesc outKept, outRed, m, dm;
    MWRT_TRY(descAs(o0, oks, okst, outKept));
    MWRT_TRY(descAs(o0, ors, orst, outRed));
    MWRT_TRY(in(1, m));
    MWRT_TRY(in(2, dm));
    if (c.in(1).numElements() != cpu::product(ks) ||
        c.in(2).numElements() != cpu::product(ks))
      return c.fail("output and grad_output do not match the reduction");
    MWRT_CUDA_CHECK(launchReduceMaxGrad(kept, red, outKept, outRed, m, dm,
                                        static_cast<int>(x.dtype), stream));
    return MWRT_OK;
  }
  case OpKind::Softmax: case OpKind::LogSoftmax: case OpKind::SoftmaxGrad:
  case OpKind::LogSoftmaxGrad: {
    const TensorRef &x = c.in(0);
    MWRT_TRY(c.expectFloat(x, "input"));
    MWRT_TRY(c.expectSameType(o0, "result", x, "input"));
    int64_t axis;
    MWRT_TRY(c.getAxis(static_cast<int64_t>(x.shape.size()), axis));
    int64_t outer = cpu::product(Shape(x.shape.begin(), x.shape.begin() + axis));
    int64_t inner =
        cpu::product(Shape(x.shape.begin() + axis + 1, x.shape.end()));
    TDesc dx, d, dy;
    MWRT_TRY(in(0, dx));
    MWRT_TRY(out(0, d));
    if (kind == OpKind::Softmax || kind == OpKind::LogSoftmax) {
      MWRT_CUDA_CHECK(launchSoftmax(kind == OpKind::LogSoftmax, d, dx, outer,
                                    x.shape[axis], inner, stream));
      return MWRT_OK;
    }
    MWRT_TRY(c.expectSameType(c.in(1), "grad_output", x, "output"));
    MWRT_TRY(in(1, dy));
    MWRT_CUDA_CHECK(launchSoftmaxGrad(kind == OpKind::LogSoftmaxGrad, d, dx,
                                      dy, outer, x.shape[axis], inner,
                                      stream));
    return MWRT_OK;
  }
  case OpKind::LayerNorm: case OpKind::RmsNorm: case OpKind::LayerNormGrad:
  case OpKind::RmsNormGrad: {
    const TensorRef &x = c.in(0);
    MWRT_TRY(c.expectFloat(x, "input"));
    if (x.shape.empty())
      return c.fail("input must have rank >= 1, got 0");
    int64_t d = x.shape.back();
    int64_t rows = d ? x.numElements() / d : 0;
    MWRT_TRY(c.expectType(c.in(1), "gamma", {d}, x.dtype));
    MWRT_TRY(c.expectSameType(o0, "result", x, "input"));
    bool layer = kind == OpKind::LayerNorm || kind == OpKind::LayerNormGrad;
    TDesc tx, tg;
    MWRT_TRY(in(0, tx));
    MWRT_TRY(in(1, tg));
    if (kind == OpKind::LayerNorm || kind == OpKind::RmsNorm) {
      double eps;
      MWRT_TRY(c.getFloat("epsilon", eps, layer ? 1e-5 : 1e-6));
      TDesc y, mean, rstd, beta;
      MWRT_TRY(out(0, y));
      MWRT_TRY(out(layer ? 2 : 1, rstd));
      if (layer) {
        MWRT_TRY(c.expectType(c.in(2), "beta", {d}, x.dtype));
        MWRT_TRY(out(1, mean));
        MWRT_TRY(in(2, beta));
      }
      MWRT_CUDA_CHECK(launchNorm(y, layer ? &mean : nullptr, rstd, tx, tg,
                                 layer ? &beta : nullptr, rows, d,
                                 static_cast<float>(eps), stream));
      return MWRT_OK;
    }
    TDesc dx, dg, db, mean, rstd, dy;
    MWRT_TRY(out(0, dx));
    MWRT_TRY(out(1, dg));
    if (layer) {
      MWRT_TRY(out(2, db));
      MWRT_TRY(in(2, mean));
    }
    MWRT_TRY(in(layer ? 3 : 2, rstd));
    MWRT_TRY(in(layer ? 4 : 3, dy));
    MWRT_TRY(c.expectSameType(c.in(layer ? 4 : 3), "grad_output", x, "input"));
    MWRT_CUDA_CHECK(launchNormGrad(dx, dg, layer ? &db : nullptr, tx, tg,
                                   layer ? &mean : nullptr, rstd, dy, rows, d,
                                   stream));
    return MWRT_OK;
  }
  case OpKind::Embedding: {
    const TensorRef &table = c.in(0), &idx = c.in(1);
    MWRT_TRY(c.expectFloat(table, "table"));
    MWRT_TRY(c.expectInt(idx, "indices"));
    MWRT_TRY(c.expectRank(table, "table", 2, "[V, D]"));
    Shape shape = idx.shape;
    shape.push_back(table.shape[1]);
    MWRT_TRY(c.expectType(o0, "result", shape, table.dtype));
    TDesc t, i, d;
    MWRT_TRY(in(0, t));
    MWRT_TRY(in(1, i));
    MWRT_TRY(out(0, d));
    MWRT_CUDA_CHECK(launchEmbedding(d, t, i, idx.numElements(), table.shape[0],
                                    table.shape[1], size0, errorFlag, stream));
    return MWRT_OK;
  }
  case OpKind::EmbeddingGrad: {
    const TensorRef &idx = c.in(0), &dy = c.in(1);
    MWRT_TRY(c.expectInt(idx, "indices"));
    MWRT_TRY(c.expectFloat(dy, "grad_output"));
    MWRT_TRY(c.expectRank(o0, "result", 2, "[V, D]"));
    Shape shape = idx.shape;
    shape.push_back(o0.shape[1]);
    MWRT_TRY(c.expectType(dy, "grad_output", shape, o0.dtype));
    TDesc i, g, d;
    MWRT_TRY(in(0, i));
    MWRT_TRY(in(1, g));
    MWRT_TRY(out(0, d));
    MWRT_CUDA_CHECK(launchEmbeddingGrad(d, i, g, idx.numElements(),
                                        o0.shape[0], o0.shape[1], errorFlag,
                                        stream));
    return MWRT_OK;
  }
  case OpKind::CrossEntropy: case OpKind::CrossEntropyGrad: {
    bool grad = kind == OpKind::CrossEntropyGrad;
    const TensorRef &logits = c.in(0), &labels = c.in(1);
    MWRT_TRY(c.expectFloat(logits, "logits"));
    MWRT_TRY(c.expectInt(labels, "labels"));
    int64_t first;
    MWRT_TRY(cpu::checkCrossEntropyLabels(c, first));
    if (grad) {
      MWRT_TRY(c.expectType(c.in(2), "grad_loss", {}, DType::F32));
      MWRT_TRY(c.expectSameType(o0, "result", logits, "logits"));
    } else {
      MWRT_TRY(c.expectType(o0, "result", {}, DType::F32));
    }
    int64_t ignore;
    MWRT_TRY(c.getInt("ignore_index", ignore, -100));
    int64_t classes = logits.shape.back(), all = labels.numElements();
    int64_t rows = logits.numElements() / std::max<int64_t>(classes, 1);
    char *base = nullptr;
    MWRT_TRY(scratch(alignUp(rows * sizeof(float)) + 256, base));
    TDesc x, l, d;
    MWRT_TRY(in(0, x));
    MWRT_TRY(in(1, l));
    MWRT_TRY(out(0, d));
    MWRT_CUDA_CHECK(launchCrossEntropy(
        d, x, l, grad ? static_cast<const float *>(c.in(2).data) : nullptr, all,
        first, rows, classes, ignore, reinterpret_cast<float *>(base),
        errorFlag, stream));
    return MWRT_OK;
  }
  case OpKind::KvCacheWrite: {
    std::vector<float> scales;
    MWRT_TRY(cpu::checkKvCacheWrite(c, scales));
    CacheScales sc;
    MWRT_TRY(cacheScales(c, scales, sc));
    TDesc d, v, slots;
    MWRT_TRY(out(0, d));
    MWRT_TRY(in(1, v));
    MWRT_TRY(in(2, slots));
    if (o0.data != c.in(0).data) { // out of place: start from the old cache
      TDesc old;
      MWRT_TRY(in(0, old));
      MWRT_CUDA_CHECK(launchCopy(d, old, size0, stream));
    }
    MWRT_CUDA_CHECK(launchKvCacheWrite(d, v, slots, c.in(1).shape[0], sc,
                                       errorFlag, stream));
    return MWRT_OK;
  }
  case OpKind::PagedAttention: {
    cpu::PagedAttentionDims a;
    MWRT_TRY(cpu::checkPagedAttention(c, a));
    if (a.headDim > kMaxHeadDim)
      return setError(MWRT_UNAVAILABLE,
                      "'mw.paged_attention': the CUDA backend takes head "
                      "dimensions <= " +
                          std::to_string(kMaxHeadDim));
    CacheScales ks, vs;
    MWRT_TRY(cacheScales(c, a.kScale, ks));
    MWRT_TRY(cacheScales(c, a.vScale, vs));
    TDesc d, q, kc, vc, tables, lens;
    MWRT_TRY(out(0, d));
    MWRT_TRY(in(0, q));
    MWRT_TRY(in(1, kc));
    MWRT_TRY(in(2, vc));
    MWRT_TRY(in(3, tables));
    MWRT_TRY(in(4, lens));
    MWRT_CUDA_CHECK(launchPagedAttention(d, q, kc, vc, tables, lens, a.scale,
                                         ks, vs, errorFlag, stream));
    return MWRT_OK;
  }
  case OpKind::Attention: case OpKind::AttentionGrad: {
    const TensorRef &q = c.in(0), &kt = c.in(1), &v = c.in(2);
    MWRT_TRY(c.expectFloat(q, "query"));
    MWRT_TRY(c.expectRank(q, "query", 4, "[B, H, S, D]"));
    MWRT_TRY(c.expectRank(kt, "key", 4, "[B, H, Sk, D]"));
    MWRT_TRY(c.expectRank(v, "value", 4, "[B, H, Sk, Dv]"));
    const Shape &qs = q.shape, &ks = kt.shape, &vs = v.shape;
    if (ks[0] != qs[0] || ks[1] != qs[1] || ks[3] != qs[3] ||
        vs[0] != qs[0] || vs[1] != qs[1] || vs[2] != ks[2] ||
        kt.dtype != q.dtype || v.dtype != q.dtype)
      return c.fail("query, key and value shapes or types do not match");
    bool causal;
    double scale;
    MWRT_TRY(c.getBool("causal", causal));
    MWRT_TRY(c.getFloat("scale", scale,
                        1.0 / std::sqrt(static_cast<double>(qs[3]))));
    if (qs[3] > kMaxHeadDim || vs[3] > kMaxHeadDim)
      return setError(MWRT_UNAVAILABLE,
                      "'" + std::string(opKindName(kind)) +
                          "': the CUDA backend takes head dimensions <= " +
                          std::to_string(kMaxHeadDim));
    int64_t bh = qs[0] * qs[1], s = qs[2], sk = ks[2];
    Shape outShape = {qs[0], qs[1], qs[2], vs[3]};
    TDesc tq, tk, tv;
    MWRT_TRY(in(0, tq));
    MWRT_TRY(in(1, tk));
    MWRT_TRY(in(2, tv));
    char *base = nullptr;
    if (kind == OpKind::Attention) {
      MWRT_TRY(c.expectType(o0, "result", outShape, q.dtype));
      MWRT_TRY(c.expectType(c.out(1), "lse", {qs[0], qs[1], qs[2]},
                            DType::F32));
      MWRT_TRY(scratch(std::max<size_t>(bh * s * sk * sizeof(float), 1),
                       base));
      TDesc d, lse;
      MWRT_TRY(out(0, d));
      MWRT_TRY(out(1, lse));
      MWRT_CUDA_CHECK(launchAttention(d, lse, tq, tk, tv, bh, s, sk, qs[3],
                                      vs[3], static_cast<float>(scale), causal,
                                      reinterpret_cast<float *>(base),
                                      stream));
      return MWRT_OK;
    }
    MWRT_TRY(c.expectType(c.in(4), "lse", {qs[0], qs[1], qs[2]}, DType::F32));
    MWRT_TRY(c.expectType(c.in(5), "grad_output", outShape, q.dtype));
    MWRT_TRY(c.expectSameType(c.out(1), "grad_key", kt, "key"));
    MWRT_TRY(c.expectSameType(c.out(2), "grad_value", v, "value"));
    MWRT_TRY(c.expectSameType(o0, "grad_query", q, "query"));
    MWRT_TRY(scratch((2 * bh * s * sk + bh * s + 1) * sizeof(float), base));
    TDesc lse, dout, dq, dk, dv;
    MWRT_TRY(in(4, lse));
    MWRT_TRY(in(5, dout));
    MWRT_TRY(out(0, dq));
    MWRT_TRY(out(1, dk));
    MWRT_TRY(out(2, dv));
    MWRT_CUDA_CHECK(launchAttentionGrad(
        dq, dk, dv, tq, tk, tv, lse, dout, bh, s, sk, qs[3], vs[3],
        static_cast<float>(scale), causal, reinterpret_cast<float *>(base),
        stream));
    return MWRT_OK;
  }
  case OpKind::Reshape: case OpKind::Transpose: case OpKind::BroadcastTo:
  case OpKind::Slice: {
    const TensorRef &x = c.in(0);
    if (x.dtype != o0.dtype)
      return c.fail("result element type differs from the input's");
    Shape shape = x.shape, strides = cpu::stridesOf(x);
    int64_t offset = 0;
    if (kind == OpKind::Reshape) {
      if (x.numElements() != o0.numElements())
        return c.fail("element count changes from ", x.numElements(), " to ",
                      o0.numElements());
      if (x.data == o0.data && x.isContiguous() && o0.isContiguous())
        return MWRT_OK;
    } else if (kind == OpKind::Transpose) {
      Shape perm;
      MWRT_TRY(c.getInts("permutation", perm));
      if (perm.size() != x.shape.size())
        return c.fail("permutation has ", perm.size(), " entries for rank ",
                      x.shape.size());
      shape.clear();
      Shape s2;
      for (int64_t p : perm) {
        if (p < 0 || p >= static_cast<int64_t>(x.shape.size()))
          return c.fail("permutation is not a permutation");
        shape.push_back(x.shape[p]);
        s2.push_back(strides[p]);
      }
      strides = s2;
    } else if (kind == OpKind::BroadcastTo) {
      if (x.shape.size() > o0.shape.size())
        return c.fail("cannot broadcast rank ", x.shape.size(), " to rank ",
                      o0.shape.size());
      strides = cpu::broadcastStrides(x.shape, strides, o0.shape);
      shape = o0.shape;
    } else {
      Shape offsets, sizes, steps(x.shape.size(), 1);
      MWRT_TRY(c.getInts("offsets", offsets));
      MWRT_TRY(c.getInts("sizes", sizes));
      if (c.has("strides"))
        MWRT_TRY(c.getInts("strides", steps));
      if (offsets.size() != x.shape.size() || sizes.size() != x.shape.size() ||
          steps.size() != x.shape.size())
        return c.fail("offsets, sizes and strides must have one entry per "
                      "dimension");
      for (size_t i = 0; i < x.shape.size(); ++i) {
        if (offsets[i] < 0 || sizes[i] < 1 || steps[i] < 1 ||
            offsets[i] >= x.shape[i] ||
            (sizes[i] - 1) > (x.shape[i] - 1 - offsets[i]) / steps[i])
          return c.fail("slice along dimension ", i, " reads past its size");
        offset += offsets[i] * strides[i];
        strides[i] *= steps[i];
      }
      shape = sizes;
    }
    if (kind != OpKind::Reshape && shape != o0.shape)
      return c.fail("result shape does not match");
    TDesc src, d;
    MWRT_TRY(descAs(x, shape, strides, src, offset));
    MWRT_TRY(out(0, d));
    MWRT_CUDA_CHECK(launchCopy(d, src, size0, stream));
    return MWRT_OK;
  }
  case OpKind::Concat: {
    int64_t rank = static_cast<int64_t>(c.in(0).shape.size()), axis;
    MWRT_TRY(c.getAxis(rank, axis));
    Shape outStrides = cpu::stridesOf(o0);
    int64_t at = 0;
    for (size_t i = 0; i < k.ins.size(); ++i) {
      const TensorRef &x = c.in(i);
      if (x.dtype != o0.dtype || static_cast<int64_t>(x.shape.size()) != rank)
        return c.fail("input #", i, " does not match the result");
      if (at + x.shape[axis] > o0.shape[axis])
        return c.fail("inputs are longer than the result along the axis");
      TDesc src, d;
      MWRT_TRY(in(i, src));
      MWRT_TRY(descAs(o0, x.shape, outStrides, d, at * outStrides[axis]));
      MWRT_CUDA_CHECK(launchCopy(d, src, size0, stream));
      at += x.shape[axis];
    }
    return MWRT_OK;
  }
  case OpKind::AdamW: {
    for (size_t i = 1; i < 4; ++i)
      MWRT_TRY(c.expectSameType(c.in(i), "operand", c.in(0), "param"));
    for (size_t i = 0; i < 3; ++i)
      MWRT_TRY(c.expectSameType(c.out(i), "result", c.in(0), "param"));
    const TensorRef &step = c.in(4);
    if (!step.shape.empty() ||
        (step.dtype != DType::F32 && step.dtype != DType::I32 &&
         step.dtype != DType::I64))
      return c.fail("step must be a rank-0 f32, i32 or i64 tensor");
    cpu::AdamWAttrs attrs;
    MWRT_TRY(cpu::readAdamWAttrs(c, attrs));
    double hp[5] = {attrs.lr, attrs.beta1, attrs.beta2, attrs.eps,
                    attrs.weightDecay};
    TDesc t[8];
    for (size_t i = 0; i < 5; ++i)
      MWRT_TRY(in(i, t[i]));
    for (size_t i = 0; i < 3; ++i)
      MWRT_TRY(out(i, t[5 + i]));
    if (fuseAdam) // launched with its neighbours by flushAdamW
      return deferAdamW(k, t, hp);
    char *base = nullptr;
    MWRT_TRY(scratch(256, base));
    MWRT_CUDA_CHECK(launchAdamW(t[5], t[6], t[7], t[0], t[1], t[2], t[3], t[4],
                                hp[0], hp[1], hp[2], hp[3], hp[4],
                                reinterpret_cast<float *>(base), errorFlag,
                                stream));
    return MWRT_OK;
  }
  case OpKind::Sgd: {
    cpu::SgdAttrs attrs;
    MWRT_TRY(cpu::readSgdAttrs(c, attrs));
    double lr = attrs.lr, momentum = attrs.momentum,
           dampening = attrs.dampening, wd = attrs.weightDecay;
    bool nesterov = attrs.nesterov;
    bool hasBuffer = k.ins.size() == 3;
    if ((momentum != 0.0) != hasBuffer || hasBuffer != (k.outs.size() == 2))
      return c.fail("momentum_buffer operand and result must be present "
                    "exactly when momentum is non-zero");
    MWRT_TRY(c.expectSameType(c.in(1), "grad", c.in(0), "param"));
    MWRT_TRY(c.expectSameType(o0, "new_param", c.in(0), "param"));
    TDesc p, g, np, buf, nb;
    MWRT_TRY(in(0, p));
    MWRT_TRY(in(1, g));
    MWRT_TRY(out(0, np));
    if (hasBuffer) {
      MWRT_TRY(in(2, buf));
      MWRT_TRY(out(1, nb));
    }
    MWRT_CUDA_CHECK(launchSgd(
        np, hasBuffer ? &nb : nullptr, p, g, hasBuffer ? &buf : nullptr,
        static_cast<float>(lr), static_cast<float>(momentum),
        static_cast<float>(1.0 - dampening), static_cast<float>(wd), nesterov,
        stream));
    return MWRT_OK;
  }
  case OpKind::FoundInf: {
    MWRT_TRY(c.expectType(o0, "result", {}, DType::F32));
    MWRT_CUDA_CHECK(cudaMemsetAsync(o0.data, 0, sizeof(float), stream));
    for (size_t i = 0; i < k.ins.size(); ++i) {
      MWRT_TRY(c.expectFloat(c.in(i), "input"));
      TDesc d;
      MWRT_TRY(in(i, d));
      MWRT_CUDA_CHECK(
          launchFoundInf(static_cast<float *>(o0.data), d, stream));
    }
    return MWRT_OK;
  }
  case OpKind::Select: {
    MWRT_TRY(c.expectType(c.in(0), "condition", {}, DType::F32));
    MWRT_TRY(c.expectSameType(c.in(2), "false_value", c.in(1), "true_value"));
    MWRT_TRY(c.expectSameType(o0, "result", c.in(1), "true_value"));
    TDesc t, f, d;
    MWRT_TRY(in(1, t));
    MWRT_TRY(in(2, f));
    MWRT_TRY(out(0, d));
    MWRT_CUDA_CHECK(launchSelect(d, static_cast<const float *>(c.in(0).data),
                                 t, f, size0, stream));
    return MWRT_OK;
  }
  case OpKind::LossScaleUpdate: {
    for (size_t i = 0; i < 5; ++i)
      MWRT_TRY(c.expectType(c.in(i), "operand", {},
                            i < 2 ? DType::F32 : DType::I64));
    for (size_t i = 0; i < 4; ++i)
      MWRT_TRY(c.expectType(c.out(i), "result", {},
                            i < 1 ? DType::F32 : DType::I64));
    int64_t window, delayedShift;
    double minScale, factor;
    MWRT_TRY(c.getInt("window", window, 1000));
    MWRT_TRY(c.getInt("hysteresis", delayedShift, 2));
    MWRT_TRY(c.getFloat("min_scale", minScale, 1.0));
    MWRT_TRY(c.getFloat("factor", factor, 2.0));
    if (window < 1 || delayedShift < 1)
      return c.fail("window and hysteresis must be >= 1");
    auto f = [&](size_t i) { return static_cast<float *>(k.ins[i].data); };
    auto l = [&](size_t i) { return static_cast<int64_t *>(k.ins[i].data); };
    auto of = [&](size_t i) { return static_cast<float *>(k.outs[i].data); };
    auto ol = [&](size_t i) { return static_cast<int64_t *>(k.outs[i].data); };
    MWRT_CUDA_CHECK(launchLossScaleUpdate(of(0), ol(1), ol(2), ol(3), f(0),
                                          f(1), l(2), l(3), l(4), window,
                                          delayedShift, minScale, factor,
                                          stream));
    return MWRT_OK;
  }
  case OpKind::MeshAllReduce:
  case OpKind::MeshReduceScatter:
  case OpKind::MeshAllGather:
  case OpKind::MeshAllSlice:
  case OpKind::Fetch: {
    // A collective of one rank (the single-process communicator's) is the
    // identity on its tensor: a copy into its own buffer, as on the CPU.
    // mw.fetch's synchronous fallback is the same copy, of the host-visible
    // weight into its slot, on the compute stream where the fetch stands.
    MWRT_TRY(c.expectSameType(o0, "result", c.in(0), "input"));
    TDesc src, dst;
    MWRT_TRY(in(0, src));
    MWRT_TRY(out(0, dst));
    MWRT_CUDA_CHECK(launchCopy(dst, src, size0, stream));
    return MWRT_OK;
  }
  case OpKind::Wait: {
    // With NCCL the communicator has made the stream wait for the
    // collective's event before this runs; what is left is the copy.
    MWRT_TRY(c.expectSameType(o0, "result", c.in(0), "input"));
    if (o0.data == c.in(0).data &&
        cpu::stridesOf(o0) == cpu::stridesOf(c.in(0)))
      return MWRT_OK;
    TDesc src, dst;
    MWRT_TRY(in(0, src));
    MWRT_TRY(out(0, dst));
    MWRT_CUDA_CHECK(launchCopy(dst, src, size0, stream));
    return MWRT_OK;
  }
  default: // the ops with a formula, run above
    break;
  }
  return c.fail("has no CUDA kernel");
}

mwrt_status CudaBackend::prepareFused(const FusedProgramDesc &program) {
  if (program.kind == FusionKind::Horizontal ||
      fusedModules.count(&program))
    return MWRT_OK;
  FusedModule m;
  std::string source = generateFusedCuda(program, m.launch);
  int device = 0, major = 0, minor = 0;
  MWRT_CUDA_CHECK(cudaGetDevice(&device));
  MWRT_CUDA_CHECK(cudaDeviceGetAttribute(
      &major, cudaDevAttrComputeCapabilityMajor, device));
  MWRT_CUDA_CHECK(cudaDeviceGetAttribute(
      &minor, cudaDevAttrComputeCapabilityMinor, device));
  std::string ptx;
  MWRT_TRY(compileFusedCuda(source, major * 10 + minor, ptx));
  MWRT_CUDA_CHECK(cudaLibraryLoadData(&m.library, ptx.c_str(), nullptr,
                                      nullptr, 0, nullptr, nullptr, 0));
  MWRT_CUDA_CHECK(cudaLibraryGetKernel(&m.kernel, m.library, kFusedEntry));
  fusedModules[&program] = m;
  return MWRT_OK;
}

uint64_t
CudaBackend::fusedScratchBytes(const FusedProgramDesc &program) const {
  // A matmul kernel's matmul result, which cuBLASLt writes and the
  // generated epilogue reads.
  if (program.kind != FusionKind::Matmul)
    return 0;
  const FusionAnalysis &a = *program.analysis;
  return static_cast<uint64_t>(a.rows * a.cols) *
         dtypeSize(program.instructions[0].dtypes[0]);
}

mwrt_status CudaBackend::runFused(const BoundKernel &k) {
  const FusedProgramDesc &p = *k.program;
  MWRT_TRY(mwrt::detail::checkFusedAliasing(k));
  auto sub = [&](const FusedInstructionDesc &in, std::vector<TensorRef> ins,
                 std::vector<TensorRef> outs) {
    BoundKernel b;
    b.kind = in.kind;
    b.attrs = &in.attrs;
    b.ins = std::move(ins);
    b.outs = std::move(outs);
    return dispatch(b);
  };
  if (p.kind == FusionKind::Horizontal) {
    // Each update as its own kernel would run (consecutive AdamW updates go
    // as one multi-tensor launch there).
    for (size_t i = 0; i < p.instructions.size(); ++i)
      MWRT_TRY(sub(p.instructions[i], k.groupIns[i], k.groupOuts[i]));
    return MWRT_OK;
  }
  auto it = fusedModules.find(&p);
  if (it == fusedModules.end())
    return setError(MWRT_INTERNAL, "'mw.fusion': not compiled at load");
  const FusedModule &m = it->second;
  const FusionAnalysis &a = *p.analysis;
  std::vector<void *> pointers;
  for (const TensorRef &t : k.ins)
    pointers.push_back(t.data);
  for (const TensorRef &t : k.outs)
    pointers.push_back(t.data);
  if (m.launch.needsMatmul) {
    // cuBLASLt's matmul into the scratch, then the generated epilogue.
    const FusedInstructionDesc &mm = p.instructions[0];
    TensorRef result(mm.dtypes[0], mm.shapes[0], k.scratch);
    MWRT_TRY(sub(mm, {k.ins[a.matmul.lhs], k.ins[a.matmul.rhs]}, {result}));
    pointers.push_back(k.scratch);
  }
  std::vector<void *> args;
  for (void *&ptr : pointers)
    args.push_back(&ptr);
  int64_t blocks = (m.launch.threads + kFusedBlock - 1) / kFusedBlock;
  if (blocks == 0)
    return MWRT_OK;
  MWRT_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void *>(m.kernel),
                                   dim3(static_cast<unsigned>(blocks)),
                                   dim3(kFusedBlock), args.data(), 0, stream));
  return MWRT_OK;
}

} // namespace

namespace mwrt::detail {

/// The CUDA backend on the current device (the rank's, when the NCCL
/// communicator, created first, chose it; else device 0), or
/// MWRT_UNAVAILABLE ("no CUDA device: ...").
mwrt_status createCudaBackend(const SessionOptions &options,
                              std::unique_ptr<Backend> &backend) {
  (void)options;
  // Ask the driver first (device.cpp): on a machine without a GPU there is
  // no libcuda, and the CUDA runtime would call that an insufficient
  // driver version.
  int count = 0;
  if (mwrt_cuda_device_count(&count) != MWRT_OK)
    return setError(MWRT_UNAVAILABLE,
                    std::string("no CUDA device: none found, ") + mwrt_last_error());
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0)
    return setError(MWRT_UNAVAILABLE,
                    std::string("no CUDA device: ") +
                        (e != cudaSuccess ? cudaGetErrorString(e)
                                          : "no device found"));
  auto cuda = std::make_unique<CudaBackend>();
  MWRT_TRY(cuda->init());
  backend = std::move(cuda);
  return MWRT_OK;
}

mwrt_status cudaBackendStream(Backend &backend, cudaStream_t &stream) {
  if (std::string_view(backend.name()) != "cuda")
    return setError(MWRT_INTERNAL, std::string("NCCL collectives need the "
                                               "CUDA backend, not '") +
                                       backend.name() + "'");
  return static_cast<CudaBackend &>(backend).shareStream(stream);
}

} // namespace mwrt::detail
