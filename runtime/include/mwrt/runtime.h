//===- runtime.h - Plans and sessions: the runtime's C++ API ----*- C++ -*-===//
//
// The C++ core behind the C API of mwrt.h. A Plan is a .mwplan file read,
// verified (FlatBuffers verifier, identifier "MWPL", kMwPlanVersion) and
// validated (every op known, every operand inside its buffer, every result
// well formed), then decoded into plain C++ structures, so nothing later
// touches unverified bytes. A Session executes one Plan on one device: it
// allocates the arena and the persistent buffers once, binds every kernel's
// tensors once, initializes the persistents (deterministically from a seed,
// or from safetensors files, or by name from memory) and runs steps. Like
// the kernels, every call returns an mwrt_status and leaves a one-line
// message in mwrt_last_error(); nothing throws except std::bad_alloc when
// host memory runs out (the C API turns that into MWRT_INTERNAL).
// docs/runtime.md describes the rules (initialization, synthetic data,
// memory accounting, errors).
//
//===---------------------------------------------------------------------===//

#ifndef MWRT_RUNTIME_H
#define MWRT_RUNTIME_H

#include "mwrt/kernels.h"
#include "mwrt/mwrt.h"
#include "mwrt/comm.h"
#include "mwrt/safetensors.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mwrt {

/// What a persistent buffer or result holds (mwplan.Role).
/// KvCache: an inference step's paged KV cache (docs/inference.md).
enum class Role {
  None, Param, Input, Label, OptimizerState, Grad, Output, KvCache
};

/// Where a persistent's storage is (docs/offload.md): device memory, host
/// memory, or a weights file under Plan::offloadPath(). Only an mw.fetch
/// kernel reads a Host or File persistent (checked at load).
enum class Placement { Device, Host, File };

/// "param", "input", ... as the mw dialect spells the role.
const char *roleName(Role role);

/// A tensor view into the arena or into a persistent buffer: element `index`
/// lives at base + (offset + sum(index[d] * strides[d])) * dtypeSize(dtype).
struct OperandDesc {
  bool inArena = true;
  uint64_t arenaOffset = 0; ///< bytes from the arena's start (arena only)
  int persistent = -1;      ///< index into Plan::persistents() (else -1)
  int64_t offset = 0;       ///< elements
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides; ///< one per dimension (row-major if absent)
  int buffer = -1; ///< the arena buffer it views (Plan::arenaBuffers), or -1
};

/// One transient buffer of the arena: bytes [offset, offset + size).
struct ArenaBufferDesc {
  uint64_t offset = 0;
  uint64_t size = 0;
};

/// A whole tensor whose elements a sharded persistent holds a piece of.
struct ShardMemberDesc {
  std::string source;         ///< its name in a checkpoint of whole tensors
  std::vector<int64_t> shape; ///< its shape there
  int64_t elements = 0;       ///< the product of `shape`
};

/// A buffer outside the arena, bound by name.
struct PersistentDesc {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  Role role = Role::None;
  int argument = -1;  ///< function argument index; -1: a result's storage
  uint64_t bytes = 0; ///< numElements * dtypeSize
  /// A ZeRO piece (--mw-zero's mw.shard): the members' elements flattened in
  /// order, zero-padded to a multiple of Plan::ranks() and cut into that
  /// many equal 1-D pieces, of which rank r holds piece r. Empty for a
  /// tensor every rank holds whole.
  std::vector<ShardMemberDesc> shard;
  /// Dimension 0 is 1/Plan::ranks() of the global batch's: rank r holds
  /// rows [r*d0, (r+1)*d0) of the global tensor (inputs and labels of a
  /// --mw-zero step).
  bool splitBatch = false;
  /// Device, or Host/File for a weight --mw-offload streams into the arena.
  Placement placement = Placement::Device;
};

/// A value of a fused kernel's program: kernel input `index` when
/// `instruction` is -1, else result `index` of that (earlier) instruction.
struct FusedValueRef {
  int instruction = -1;
  int index = 0;
};

/// One op of a fused kernel's body.
struct FusedInstructionDesc {
  OpKind kind = OpKind::Constant;
  KernelAttrs attrs;
  std::vector<FusedValueRef> operands;
  std::vector<DType> dtypes;               ///< one per result
  std::vector<std::vector<int64_t>> shapes; ///< one per result
  std::string loc;
};

/// The four kinds of fused kernel (docs/fusion.md): elementwise over the
/// iteration space (with column reductions), row reductions and
/// normalizations with their prologue and epilogue, a matmul with its
/// epilogue, and several optimizer updates in one launch.
enum class FusionKind { Loop, Row, Matmul, Horizontal };

/// "loop", "row", "matmul", "horizontal".
const char *fusionKindName(FusionKind kind);

namespace detail {
struct FusionAnalysis; // src/fusion.h
}

/// A fused kernel's program, checked and analysed when the plan is loaded:
/// its kind, iteration space and the index map of every operand read.
struct FusedProgramDesc {
  std::vector<FusedInstructionDesc> instructions;
  std::vector<FusedValueRef> yields; ///< one per KernelDesc::outs
  FusionKind kind = FusionKind::Loop;
  std::shared_ptr<const detail::FusionAnalysis> analysis;
};

/// One kernel launch. A fused kernel (op "mw.fusion") has `program`; its
/// `kind` is then meaningless and `attrs` empty.
struct KernelDesc {
  OpKind kind = OpKind::Constant;
  KernelAttrs attrs;
  std::vector<OperandDesc> ins, outs;
  std::string loc;
  std::shared_ptr<const FusedProgramDesc> program;
};

/// A named function result: where its value is when a step ends.
struct ResultDesc {
  std::string name;
  Role role = Role::None;
  OperandDesc value;
};

/// A verified, validated plan. Immutable; sessions share it.
class Plan {
public:
  /// Reads the .mwplan file at `path`. MWRT_NOT_FOUND when it cannot be
  /// opened, MWRT_INVALID_ARGUMENT for anything wrong inside, each with a
  /// message that starts with the path.
  static mwrt_status load(const std::string &path,
                          std::shared_ptr<const Plan> &plan);
  /// As load, from the `size` bytes at `data`; `source` names them in
  /// messages.
  static mwrt_status parse(const void *data, size_t size,
                           std::shared_ptr<const Plan> &plan,
                           const std::string &source = "<memory>");

  const std::string &source() const { return sourceName; }
  const std::string &function() const { return functionName; }
  uint64_t arenaSize() const { return arenaBytes; }
  /// The plan's arena_alignment (0 when the plan gives none).
  uint64_t arenaAlignment() const { return arenaAlign; }
  uint64_t lowerBound() const { return lowerBoundBytes; }
  /// The peak budget the step was rematerialized under, 0 for none; the
  /// arena plus the persistents' bytes fit it (checked at load).
  uint64_t peakBudget() const { return peakBudgetBytes; }
  /// The number of ranks the plan was compiled for (its collectives' mesh
  /// size; 1 without collectives).
  uint32_t ranks() const { return rankCount; }
  /// --mw-offload's directory for the File persistents' weights file ("" for
  /// none) and its prefetch depth K (0 without offload).
  const std::string &offloadPath() const { return offloadDir; }
  uint32_t offloadPrefetch() const { return offloadPrefetchDepth; }
  const std::vector<PersistentDesc> &persistents() const { return persists; }
  const std::vector<KernelDesc> &kernels() const { return kernelList; }
  const std::vector<ResultDesc> &results() const { return resultList; }
  /// The arena's buffers (empty for a plan without a buffer table).
  const std::vector<ArenaBufferDesc> &arenaBuffers() const {
    return arenaBufferList;
  }

  /// Index of the persistent or result called `name`, or -1.
  int findPersistent(std::string_view name) const;
  int findResult(std::string_view name) const;
  /// The result that is the loss: the one named "loss", else the first with
  /// role Output; either way a floating-point tensor of one element. -1 when
  /// there is none (an inference plan).
  int lossResult() const { return lossIndex; }

  /// "kernel 3 ('mw.matmul' at loc)", for messages.
  std::string describeKernel(size_t index) const;

private:
  friend class PlanReader;
  std::string sourceName, functionName;
  uint64_t arenaBytes = 0, arenaAlign = 0, lowerBoundBytes = 0;
  uint64_t peakBudgetBytes = 0;
  uint32_t rankCount = 1;
  std::string offloadDir;
  uint32_t offloadPrefetchDepth = 0;
  std::vector<PersistentDesc> persists;
  std::vector<KernelDesc> kernelList;
  std::vector<ResultDesc> resultList;
  std::vector<ArenaBufferDesc> arenaBufferList;
  int lossIndex = -1;
};

class Session;

/// Choices for a session.
struct SessionOptions {
  /// Seed of the default initialization (docs/runtime.md).
  uint64_t seed = 0;
  /// Computes matmul and attention with the evaluator's loops (bit-exact) on
  /// the CPU.
  bool referenceMatmul = false;
  /// Threads of the CPU backend's kernels (the caller's included): 0 takes
  /// MW_NUM_THREADS when it is set to a positive integer, else the
  /// hardware's concurrency. Results are bit-identical for any count.
  int threads = 0;
  /// A step whose loss is NaN or infinite fails, naming the step.
  bool checkLoss = true;
  /// How long a rank waits for a collective before the step fails (a rank
  /// that died or stopped); multi-rank plans only.
  double commTimeoutSeconds = 300;
  /// Another session of the same device whose memory this one uses instead
  /// of allocating its own (mw-run --generate: @prefill and @decode,
  /// docs/inference.md "Serving"): its arena, which must be at least this
  /// plan's arena size (create the larger-arena session first), and every
  /// Param or KvCache argument persistent of the same name, dtype and shape
  /// (the weights and the caches: one copy, written by either session).
  /// Shared persistents keep the other session's values (they are not
  /// reinitialized). The sessions must run their steps one at a time, and
  /// the other session must outlive this one. Single-rank plans only.
  const Session *shareWith = nullptr;
};

/// Memory a session holds, in bytes. planned = arena + persistent +
/// workspace, all known from the plan at load; measured = what the session
/// actually allocated (the sum of its allocations, which it never frees
/// before it is destroyed, so this is also its peak). Kernels' own scratch
/// (docs/runtime-kernels.md) is not included.
struct SessionStats {
  uint64_t arenaBytes = 0;
  uint64_t persistentBytes = 0; ///< every persistent, each 64-byte aligned
  uint64_t workspaceBytes = 0;  ///< staging for result copies that overlap,
                                ///< and the fused kernels' scratch
  uint64_t plannedPeakBytes = 0;
  uint64_t measuredPeakBytes = 0;
  uint64_t lowerBoundBytes = 0; ///< the packer's lower bound for the arena
  uint64_t steps = 0;           ///< steps completed
  /// Bytes this session uses from SessionOptions::shareWith's memory (its
  /// arena and the shared persistents) rather than its own; they are in
  /// neither measuredPeakBytes nor persistentBytes.
  uint64_t sharedBytes = 0;
  /// Host memory for offloaded weights (docs/offload.md): the host store of
  /// Host persistents and the file reader's staging buffers. Not device
  /// memory: in neither peak (nor are File persistents, which stay in
  /// their file).
  uint64_t hostBytes = 0;
  /// Persistent bytes given their default value (docs/runtime.md,
  /// "Initialization"), the defaults' file of File persistents included;
  /// and bytes that loads (files, setTensor) wrote first, whose defaults
  /// were therefore never drawn (a File persistent bound to its --weights
  /// file counts its size).
  uint64_t initializedBytes = 0;
  uint64_t loadedBytes = 0;
};

/// What the offloaded weights cost a session's steps, summed over the steps
/// completed (docs/runtime.md "Offloaded weights"). compute = the steps'
/// wall time less the time the kernels waited for a fetch; copy = the copy
/// engine's busy time (the CPU's copy thread, the CUDA copy stream), which
/// overlaps compute; read = the file reader's time in pread, which overlaps
/// both.
struct OffloadStats {
  uint64_t steps = 0;
  uint64_t fetches = 0;
  uint64_t bytesStreamed = 0; ///< copied into the arena's weight slots
  uint64_t bytesRead = 0;     ///< read from the weights file
  double computeSeconds = 0;
  double copySeconds = 0;
  double waitSeconds = 0;
  double readSeconds = 0;
  /// The File persistents' weights file ("" when none), and whether every
  /// read of it went through O_DIRECT.
  std::string file;
  bool direct = false;
};

class SessionImpl;

/// One plan on one device, with its memory and bindings.
class Session {
public:
  /// Creates a session on `device` ("cpu"; "cuda" reports that this build
  /// has no CUDA backend, or that there is no device), allocates its memory,
  /// binds every kernel; the persistents take the default rules' values
  /// from options.seed where no load writes them (initializeRest).
  static mwrt_status create(std::shared_ptr<const Plan> plan,
                            std::string_view device,
                            const SessionOptions &options,
                            std::unique_ptr<Session> &session);
  ~Session();

  const Plan &plan() const;

  /// Binds Param and OptimizerState persistents that are function
  /// arguments (argument >= 0) from the safetensors file at `path` by name.
  /// Every Param must be there; an OptimizerState that is not keeps its default
  /// value (a fresh optimizer). `missingState`, when given, receives the names
  /// of those. Other tensors in the file are ignored. Nothing changes when any
  /// tensor has the wrong dtype or shape.
  ///
  /// A plan of several ranks reads only this rank's part: a ZeRO piece
  /// (PersistentDesc::shard) from its members' whole tensors, by offset, or
  /// from a tensor under the piece's own name and shape. `path` may also be
  /// a sharded checkpoint directory that saveWeights wrote
  /// (docs/multi-rank.md), whose rank file this rank reads.
  mwrt_status loadWeights(const std::string &path,
                          std::vector<std::string> *missingState = nullptr);
  /// Binds Input and Label argument persistents from the file at `path` by
  /// name; every one must be there. A plan of several ranks takes this
  /// rank's rows of the global batch (PersistentDesc::splitBatch). A tensor named like another persistent
  /// (e.g. loss_scale.scale) sets it too.
  mwrt_status loadInputs(const std::string &path);
  /// Sets persistent `name` from `bytes` (row-major, little-endian) after
  /// checking its dtype and shape.
  mwrt_status setTensor(std::string_view name, DType dtype,
                        const std::vector<int64_t> &shape, const void *bytes,
                        size_t size);
  mwrt_status setTensor(std::string_view name, const TensorData &tensor);

  /// Gives every persistent that no load (loadWeights, loadInputs,
  /// setTensor) has written yet its default value (docs/runtime.md,
  /// "Initialization"); a loaded one's values are never drawn. The first
  /// step() and read do it when it has not been done; loads after it still
  /// override. Call it after the loads to keep the drawing out of the first
  /// step's time.
  mwrt_status initializeRest();

  /// Runs one step: every kernel in order, then copies each result named
  /// like a Param or OptimizerState argument persistent into it.
  mwrt_status step();
  /// The last step's loss (MWRT_NOT_FOUND before the first step or when the
  /// plan has none).
  mwrt_status loss(double &value) const;

  /// The value of result `name` (after a step) or persistent `name`, as a
  /// row-major tensor.
  mwrt_status readResult(std::string_view name, TensorData &out) const;
  mwrt_status readPersistent(std::string_view name, TensorData &out) const;

  /// Every Param and OptimizerState argument persistent, by name.
  mwrt_status collectWeights(SafeTensors &out) const;
  /// Writes collectWeights() to `path` atomically (an existing file is
  /// replaced only by a complete new one). A plan of several ranks writes a
  /// sharded checkpoint into directory `path` instead, every rank its own
  /// file, and a manifest (collective: every rank calls it); the previous
  /// checkpoint there stays loadable until the new one is complete.
  mwrt_status saveWeights(const std::string &path) const;

  SessionStats stats() const;
  /// The offloaded weights' traffic (all zero for a plan without fetches).
  OffloadStats offloadStats() const;
  /// What the collectives moved, per kind (mwrt/comm.h).
  CommStats commStats() const;
  /// The steps the sharded checkpoint loadWeights read had run (0 when
  /// none), so that a resumed run can number its steps on from there.
  uint64_t resumedSteps() const;
  /// This session's rank and the plan's ranks.
  int rank() const;
  int ranks() const;

private:
  friend class SessionImpl;
  Session();
  std::unique_ptr<SessionImpl> impl;
};

} // namespace mwrt

#endif // MWRT_RUNTIME_H
