//===- session.cpp - One plan on one device: memory, bindings, steps ------===//
//
// A session makes every allocation it will ever make when it is created:
// the arena (arena_size bytes, aligned to max(arena_alignment, 64)), one
// block holding every persistent buffer (each at a multiple of 64 bytes),
// and, only when a result to copy back overlaps another copy's destination,
// a staging workspace, and the scratch of fused kernels (the largest one's).
// Kernels are bound once (Executor); a step runs them,
// reads the loss, and copies each result named like a parameter or an
// optimizer state into that persistent unless the kernels already updated it
// in place. Persistents start from the deterministic default initialization
// (docs/runtime.md: "Initialization"), which files and setTensor override.
// The defaults are drawn once, before the first step or read, and only for
// the persistents no file or setTensor wrote by then: a loaded one is
// skipped (its variates passed over, so the others get today's values), so
// a full --weights file costs no drawing at all.
//
//===----------------------------------------------------------------------===//

#include "executor.h"
#include "checkpoint.h"
#include "comm/communicator.h"
#include "cpu/thread_pool.h"
#include "mwrt/initial_values.h"
#include "offload.h"
#include "status.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string_view>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

using namespace mwrt;
using namespace mwrt::detail;

namespace {

constexpr uint64_t kBufferAlignment = 64;

uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string typeText(DType dtype, const std::vector<int64_t> &shape) {
  return std::string(dtypeName(dtype)) + " " + shapeText(shape);
}

std::vector<int64_t> rowMajor(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

int64_t countOf(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Parameters and optimizer state that the caller binds: function arguments
/// (a persistent with argument -1 is storage for a result the step
/// allocates, such as mw-translate's "resultN" for the next optimizer.step).
bool isState(const PersistentDesc &d) {
  return (d.role == Role::Param || d.role == Role::OptimizerState) &&
         d.argument >= 0;
}

bool onDevice(const PersistentDesc &d) {
  return d.placement == Placement::Device;
}

/// Inputs and labels that the caller binds.
bool isData(const PersistentDesc &d) {
  return (d.role == Role::Input || d.role == Role::Label) && d.argument >= 0;
}

bool isFloatType(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}

/// Stores `v` as element `i` of a dense `dtype` array: floats rounded to f32
/// and then to the 16-bit types, integers truncated.
void storeValue(DType dtype, uint8_t *data, int64_t i, double v) {
  switch (dtype) {
  case DType::F32: {
    float f = static_cast<float>(v);
    std::memcpy(data + 4 * i, &f, 4);
    return;
  }
  case DType::F16: {
    uint16_t h = floatToHalfBits(static_cast<float>(v));
    std::memcpy(data + 2 * i, &h, 2);
    return;
  }
  case DType::BF16: {
    uint16_t h = floatToBFloatBits(static_cast<float>(v));
    std::memcpy(data + 2 * i, &h, 2);
    return;
  }
  case DType::I32: {
    int32_t x = static_cast<int32_t>(v);
    std::memcpy(data + 4 * i, &x, 4);
    return;
  }
  case DType::I64: {
    int64_t x = static_cast<int64_t>(v);
    std::memcpy(data + 8 * i, &x, 8);
    return;
  }
  default:
    return;
  }
}

/// Element `i` of a dense float array of `dtype` (f32, f16 or bf16).
float loadFloat(DType dtype, const uint8_t *data, int64_t i) {
  if (dtype == DType::F32) {
    float f;
    std::memcpy(&f, data + 4 * i, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, data + 2 * i, 2);
  return dtype == DType::F16 ? halfBitsToFloat(h) : bfloatBitsToFloat(h);
}

using initial::NormalGenerator;

bool sameView(const TensorRef &a, const TensorRef &b) {
  return a.data == b.data && a.shape == b.shape && a.strides == b.strides;
}

/// The bytes of a view within its buffer, for the token-bound analysis (the
/// plan was validated, so they fit in int64).
struct Span {
  bool inArena;
  int persistent;
  int64_t begin, end;
};

Span spanOf(const OperandDesc &o) {
  Span s{o.inArena, o.persistent, 0, 0};
  if (countOf(o.shape) == 0)
    return s;
  int64_t lo = o.offset, hi = o.offset;
  for (size_t d = 0; d < o.shape.size(); ++d) {
    int64_t span = static_cast<int64_t>(o.shape[d] - 1) * o.strides[d];
    (span < 0 ? lo : hi) += span;
  }
  int64_t size = dtypeSize(o.dtype);
  int64_t base = o.inArena ? static_cast<int64_t>(o.arenaOffset) : 0;
  s.begin = base + lo * size;
  s.end = base + (hi + 1) * size;
  return s;
}

bool spansOverlap(const Span &a, const Span &b) {
  return a.inArena == b.inArena &&
         (a.inArena || a.persistent == b.persistent) && a.begin < b.end &&
         b.begin < a.end;
}

} // namespace

/// Whether two paths name one file.
static bool sameFile(const std::string &a, const std::string &b) {
  struct stat sa, sb;
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0)
    return a == b;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

namespace mwrt {

class SessionImpl {
public:
  ~SessionImpl();

  mwrt_status init(std::string_view device);
  mwrt_status allocate(uint64_t bytes, uint64_t alignment, void *&ptr,
                       const char *what);
  void planCopies();
  /// Gives every persistent that no load wrote its default value (once;
  /// later calls do nothing). The shared session's first.
  mwrt_status initializeDefaults();
  /// The variates fillDefault(p) draws from each generator.
  void defaultDraws(int p, uint64_t &weightVariates,
                    uint64_t &dataVariates) const;
  /// Draws, in plan order, the defaults of the persistents `wanted` picks
  /// and hands each to `use`; the others are passed over without computing
  /// their values, so each wanted one gets exactly what it gets when all
  /// are drawn.
  mwrt_status drawDefaults(
      const std::function<bool(size_t)> &wanted,
      const std::function<mwrt_status(size_t, std::vector<uint8_t> &)> &use)
      const;
  /// Persistent `p` was written by a load (a file, setTensor): its default
  /// is not drawn, here or in the session it is shared from.
  void markLoaded(int p);
  /// Reads tensor `p` whole (its name, dtype and shape checked) from `file`
  /// straight into its buffer when that is host memory, else through
  /// `scratch`.
  mwrt_status readWhole(const SafeTensorsFile &file, int p,
                        std::vector<uint8_t> &scratch);
  /// Writes persistent `p`'s bytes (no bookkeeping).
  mwrt_status store(int p, const void *bytes);
  std::optional<double> lossScaleValue(int p) const;
  bool isAdamStep(int p) const;
  int64_t tokenBound(int p) const;
  /// An f32 master (initial::masterOf) from the parameters in `drawn`.
  void fillMaster(const PersistentDesc &d,
                  const std::map<std::string,
                                 std::pair<DType, std::vector<uint8_t>>,
                                 std::less<>> &drawn,
                  std::vector<uint8_t> &bytes) const;
  /// Persistent `p`'s default bytes; a weight's normal variates are
  /// transformed on `pool`'s threads (the same values, drawn in order).
  void fillDefault(int p, NormalGenerator &weights, NormalGenerator &data,
                   std::vector<uint8_t> &bytes, cpu::ThreadPool &pool) const;
  mwrt_status checkTensor(const std::string &source, int p,
                          const TensorData &t) const;
  mwrt_status upload(int p, const void *bytes);
  /// Whether loading reads parts of tensors: a plan of several ranks, or one
  /// with ZeRO pieces.
  bool readsParts() const;
  /// This rank's bytes of persistent `p` from `file`: the tensor under its
  /// own name and shape, or its part of the global one (split_batch), or its
  /// piece of the members' whole tensors (shard). `found` is false when the
  /// file has none of them.
  mwrt_status readPart(const SafeTensorsFile &file, int p,
                       std::vector<uint8_t> &bytes, bool &found) const;
  mwrt_status loadParts(const std::string &path, bool weights,
                        std::vector<std::string> *missingState);
  mwrt_status gather(const TensorRef &t, TensorData &out) const;
  mwrt_status step();
  /// Sets offloaded File persistent `p` to be read from `offset` in `file`.
  void bindFile(int p, const std::shared_ptr<OffloadFile> &file,
                uint64_t offset);
  /// Before the first step: File persistents that no --weights file gave
  /// take the shared session's file, or else the deterministic defaults,
  /// written to <offload_path>/<function>.weights.safetensors.
  mwrt_status ensureFileWeights();
  /// The bytes of offloaded persistent `p` (Host: the host store; File: its
  /// file).
  mwrt_status readOffloaded(int p, TensorData &out) const;

  std::shared_ptr<const Plan> plan;
  SessionOptions options;
  /// The weights file each persistent was bound from ("" when none), so
  /// that an inputs file naming the same tensor is an error, not a silent
  /// override.
  std::vector<std::string> weightsSource;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Communicator> comm;
  std::unique_ptr<Executor> executor;

  void *arena = nullptr, *persistBlock = nullptr, *staging = nullptr;
  void *fused = nullptr; ///< the fused kernels' scratch
  uint64_t persistBytes = 0, stagingBytes = 0, fusedBytes = 0, measured = 0;
  /// SessionOptions::shareWith: the arena is the other session's (not
  /// released here), and persistents marked shared live in its block.
  bool sharedArena = false;
  std::vector<bool> sharedPersist;
  uint64_t sharedBytes = 0;
  /// Per persistent: its index in the shared session's plan, or -1.
  std::vector<int> sharedFrom;
  const SessionImpl *other = nullptr;

  /// Offloaded weights (docs/offload.md): the host store of Host
  /// persistents, the engine that streams them and File persistents into
  /// the arena, and each File persistent's file and offset there.
  std::unique_ptr<OffloadEngine> offload;
  void *hostBlock = nullptr;
  uint64_t hostBytes = 0;
  struct FileSource {
    std::shared_ptr<OffloadFile> file;
    uint64_t offset = 0;
  };
  std::vector<FileSource> fileSources;

  std::vector<void *> persistData;
  std::vector<TensorRef> persistRefs; ///< each persistent, row-major
  std::vector<TensorRef> resultRefs;

  struct CopyBack {
    TensorRef src, dst, stage;
    bool staged = false;
  };
  std::vector<CopyBack> copies;

  /// Per persistent: written by a load, so not default-initialized.
  std::vector<bool> written;
  bool defaultsDone = false;
  /// Bytes given their default value (the session's memory and the
  /// defaults' weights file), and bytes loaded from files or setTensor
  /// (File persistents bound to the --weights file count their size).
  uint64_t initializedBytes = 0, loadedBytes = 0;

  std::optional<double> lastLoss;
  uint64_t steps = 0;
  /// The steps a sharded checkpoint loaded by loadWeights was saved after.
  uint64_t firstStep = 0;
};

SessionImpl::~SessionImpl() {
  executor.reset();
  offload.reset();
  if (backend) {
    for (void *p : {sharedArena ? nullptr : arena, persistBlock, staging, fused})
      if (p)
        backend->release(p);
    backend->releaseHost(hostBlock);
  }
}

mwrt_status SessionImpl::allocate(uint64_t bytes, uint64_t alignment,
                                  void *&ptr, const char *what) {
  if (backend->allocate(bytes, alignment, ptr) != MWRT_OK)
    return setError(MWRT_INTERNAL, std::string("cannot allocate the ") + what +
                                       " (" + std::to_string(bytes) +
                                       " bytes): " + mwrt_last_error());
  measured += bytes;
  return MWRT_OK;
}

mwrt_status SessionImpl::init(std::string_view device) {
  const Plan &p = *plan;
  // Refused before any allocation: a plan for N ranks computes one shard of
  // the step, which alone would be wrong, not merely slow.
  if (mwrt_status st = checkGroup(device, p.ranks()))
    return setError(st, p.source() + ": " + mwrt_last_error());
  if (mwrt_status st = createCommunicator(device, options, comm))
    return st;
  if (mwrt_status st = checkRanks(p.ranks(), *comm))
    return setError(st, p.source() + ": " + mwrt_last_error());
  if (mwrt_status st = createBackend(device, options, backend))
    return st;
  uint64_t arenaAlign =
      std::max<uint64_t>(p.arenaAlignment(), kBufferAlignment);
  other = options.shareWith ? options.shareWith->impl.get() : nullptr;
  sharedPersist.assign(p.persistents().size(), false);
  sharedFrom.assign(p.persistents().size(), -1);
  fileSources.assign(p.persistents().size(), FileSource());
  bool offloaded = false;
  for (const PersistentDesc &d : p.persistents())
    offloaded |= !onDevice(d);
  if (offloaded && p.ranks() != 1)
    return setError(MWRT_UNAVAILABLE,
                    p.source() + ": offloaded weights are for plans of one "
                                 "rank");
  std::vector<void *> sharedData(p.persistents().size(), nullptr);
  if (other) {
    const Plan &q = *other->plan;
    if (p.ranks() != 1 || q.ranks() != 1)
      return setError(MWRT_INVALID_ARGUMENT,
                      p.source() + ": sharing memory between sessions is for "
                                   "plans of one rank");
    if (std::string(other->backend->name()) != backend->name())
      return setError(MWRT_INVALID_ARGUMENT,
                      p.source() + ": cannot share memory with a session on " +
                          other->backend->name());
    if (q.arenaSize() < p.arenaSize() ||
        std::max<uint64_t>(q.arenaAlignment(), kBufferAlignment) % arenaAlign)
      return setError(MWRT_INVALID_ARGUMENT,
                      p.source() + ": its arena (" +
                          std::to_string(p.arenaSize()) + " bytes) does not "
                          "fit the shared arena of " + q.source() + " (" +
                          std::to_string(q.arenaSize()) +
                          " bytes); create the larger one first");
    arena = other->arena;
    sharedArena = true;
    sharedBytes += p.arenaSize();
    for (size_t i = 0; i < p.persistents().size(); ++i) {
      const PersistentDesc &d = p.persistents()[i];
      if (d.argument < 0 || (d.role != Role::Param && d.role != Role::KvCache))
        continue;
      int j = q.findPersistent(d.name);
      if (j < 0)
        continue;
      const PersistentDesc &e = q.persistents()[j];
      if (e.argument < 0 || e.role != d.role || e.dtype != d.dtype ||
          e.shape != d.shape || e.placement != d.placement)
        return setError(MWRT_INVALID_ARGUMENT,
                        p.source() + ": '" + d.name + "' (" +
                            roleName(d.role) + ", " + shapeText(d.shape) +
                            (onDevice(d) ? "" : ", offloaded") +
                            ") differs from " + q.source() +
                            "'s, so the two cannot share it");
      sharedPersist[i] = true;
      sharedFrom[i] = j;
      sharedData[i] = other->persistData[j];
      fileSources[i] = other->fileSources[j];
      if (onDevice(d))
        sharedBytes += d.bytes;
    }
  } else if (mwrt_status st =
                 allocate(p.arenaSize(), arenaAlign, arena, "arena")) {
    return st;
  }

  // Device persistents in one device block, Host ones in the host store;
  // File ones have no memory (a fetch reads them from their file).
  std::vector<uint64_t> offsets;
  for (size_t i = 0; i < p.persistents().size(); ++i) {
    const PersistentDesc &d = p.persistents()[i];
    uint64_t &total = d.placement == Placement::Host ? hostBytes : persistBytes;
    offsets.push_back(total);
    if (!sharedPersist[i] && d.placement != Placement::File)
      total += alignUp(d.bytes, kBufferAlignment);
  }
  if (mwrt_status st = allocate(persistBytes, kBufferAlignment, persistBlock,
                                "persistent buffers"))
    return st;
  if (mwrt_status st =
          backend->allocateHost(hostBytes, kBufferAlignment, hostBlock))
    return setError(st, p.source() + ": cannot allocate the host store of "
                                     "offloaded weights (" +
                            std::to_string(hostBytes) +
                            " bytes): " + mwrt_last_error());
  for (size_t i = 0; i < p.persistents().size(); ++i) {
    const PersistentDesc &d = p.persistents()[i];
    void *block =
        d.placement == Placement::Host ? hostBlock : persistBlock;
    void *base = sharedPersist[i]                ? sharedData[i]
                 : d.placement == Placement::File ? nullptr
                 : block ? static_cast<uint8_t *>(block) + offsets[i]
                         : nullptr;
    persistData.push_back(base);
    persistRefs.emplace_back(d.dtype, d.shape, d.bytes ? base : nullptr,
                             rowMajor(d.shape));
  }

  executor =
      std::make_unique<Executor>(p, *backend, *comm, arena, persistData);
  // Fused kernels: compiled (CUDA) and given their scratch, part of the
  // workspace, allocated once.
  if (mwrt_status st = executor->prepareFused())
    return setError(st, p.source() + ": " + mwrt_last_error());
  fusedBytes = executor->fusedScratchBytes();
  if (fusedBytes) {
    if (mwrt_status st =
            allocate(fusedBytes, kBufferAlignment, fused, "fused-kernel scratch"))
      return st;
    executor->setFusedScratch(fused);
  }
  std::vector<FetchDesc> fetches;
  if (mwrt_status st = executor->fetches(fetches))
    return setError(st, p.source() + ": " + mwrt_last_error());
  if (!fetches.empty()) {
    offload = std::make_unique<OffloadEngine>(*backend);
    if (mwrt_status st = offload->prepare(std::move(fetches)))
      return setError(st, p.source() + ": " + mwrt_last_error());
    hostBytes += offload->stagingBytes();
    for (size_t i = 0; i < p.persistents().size(); ++i)
      if (fileSources[i].file)
        offload->setSource(static_cast<int>(i), fileSources[i].file,
                           fileSources[i].offset);
    executor->setOffload(offload.get());
  }
  for (const ResultDesc &r : p.results())
    resultRefs.push_back(executor->bind(r.value));
  planCopies();
  written.assign(p.persistents().size(), false);
  if (stagingBytes) {
    if (mwrt_status st =
            allocate(stagingBytes, kBufferAlignment, staging, "staging"))
      return st;
    uint64_t offset = 0;
    for (CopyBack &c : copies) {
      if (!c.staged)
        continue;
      c.stage.data = static_cast<uint8_t *>(staging) + offset;
      offset += alignUp(static_cast<uint64_t>(c.src.numElements()) *
                            dtypeSize(c.src.dtype),
                        kBufferAlignment);
    }
  }
  // The defaults wait for the first step or read (initializeDefaults), so
  // that what the loads write is never drawn.
  return MWRT_OK;
}

void SessionImpl::planCopies() {
  const Plan &p = *plan;
  for (size_t r = 0; r < p.results().size(); ++r) {
    int target = p.findPersistent(p.results()[r].name);
    if (target < 0)
      continue;
    // Parameters and optimizer state, and a KV cache (updated in place by
    // mw.kv_cache_write, so normally nothing to copy).
    const PersistentDesc &td = p.persistents()[target];
    if (!isState(td) && !(td.role == Role::KvCache && td.argument >= 0))
      continue;
    const TensorRef &src = resultRefs[r], &dst = persistRefs[target];
    if (src.numElements() == 0 || sameView(src, dst))
      continue; // updated in place, the usual case
    CopyBack c;
    c.src = src;
    c.dst = dst;
    copies.push_back(std::move(c));
  }
  // A source that another copy (or its own) would overwrite before it is
  // read goes through staging first.
  for (CopyBack &c : copies) {
    for (const CopyBack &other : copies)
      c.staged |= overlaps(c.src, other.dst);
    if (!c.staged)
      continue;
    c.stage =
        TensorRef(c.src.dtype, c.src.shape, nullptr, rowMajor(c.src.shape));
    stagingBytes += alignUp(static_cast<uint64_t>(c.src.numElements()) *
                                dtypeSize(c.src.dtype),
                            kBufferAlignment);
  }
}

std::optional<double> SessionImpl::lossScaleValue(int p) const {
  // DeepSpeed's initial dynamic loss-scaling state, as mw-eval has it: by
  // use in mw.loss_scale_update (scale, iter, last_overflow, cur_hysteresis)
  // first, then by the names --mw-autodiff gives the state.
  for (const KernelDesc &k : plan->kernels()) {
    if (k.kind != OpKind::LossScaleUpdate || k.ins.size() != 5)
      continue;
    for (size_t j = 1; j < 5; ++j) {
      if (k.ins[j].inArena || k.ins[j].persistent != p)
        continue;
      using initial::LossScaleSlot;
      auto slot = static_cast<LossScaleSlot>(j - 1);
      double hysteresis = 2.0;
      if (slot == LossScaleSlot::Hysteresis) {
        const AttrValue *h = k.attrs.find("hysteresis");
        if (h && std::holds_alternative<int64_t>(*h))
          hysteresis = static_cast<double>(std::get<int64_t>(*h));
        if (h && std::holds_alternative<double>(*h))
          hysteresis = std::get<double>(*h);
      }
      return initial::lossScaleInitialValue(slot, hysteresis);
    }
  }
  if (auto slot = initial::lossScaleSlotOfName(plan->persistents()[p].name))
    return initial::lossScaleInitialValue(*slot);
  return std::nullopt;
}

bool SessionImpl::isAdamStep(int p) const {
  // AdamW reads the argument itself as its step counter. When a kernel
  // writes the persistent first (the step's own `step + 1`, written into
  // the counter's buffer), the argument is the count of steps done and
  // starts at 0 like any other state.
  for (const KernelDesc &k : plan->kernels()) {
    if (k.kind == OpKind::AdamW && k.ins.size() == 5 && !k.ins[4].inArena &&
        k.ins[4].persistent == p)
      return true;
    for (const OperandDesc &o : k.outs)
      if (!o.inArena && o.persistent == p)
        return false;
  }
  return false;
}

int64_t SessionImpl::tokenBound(int p) const {
  // Follow the persistent's values through data-movement kernels (which
  // copy indices unchanged) to the kernels that bound them. A region stops
  // carrying them once a kernel overwrites it.
  std::vector<Span> carriers;
  const PersistentDesc &pd = plan->persistents()[p];
  carriers.push_back({false, p, 0, static_cast<int64_t>(pd.bytes)});
  auto reads = [&](const std::vector<OperandDesc> &list, size_t i) {
    if (i >= list.size())
      return false;
    Span s = spanOf(list[i]);
    for (const Span &c : carriers)
      if (spansOverlap(s, c))
        return true;
    return false;
  };
  int64_t bound = -1;
  auto consider = [&](int64_t v) {
    if (v >= 0 && (bound < 0 || v < bound))
      bound = v;
  };
  for (const KernelDesc &k : plan->kernels()) {
    switch (k.kind) {
    case OpKind::Embedding:
      if (reads(k.ins, 1) && !k.ins[0].shape.empty())
        consider(k.ins[0].shape[0]);
      break;
    case OpKind::EmbeddingGrad:
      if (reads(k.ins, 0) && !k.outs.empty() && !k.outs[0].shape.empty())
        consider(k.outs[0].shape[0]);
      break;
    case OpKind::CrossEntropy:
    case OpKind::CrossEntropyGrad:
      if (reads(k.ins, 1) && !k.ins[0].shape.empty())
        consider(k.ins[0].shape.back());
      break;
    default:
      break;
    }
    bool moves = false;
    switch (k.kind) {
    case OpKind::Reshape:
    case OpKind::Transpose:
    case OpKind::Slice:
    case OpKind::BroadcastTo:
    case OpKind::Concat:
    case OpKind::Cast:
      for (size_t i = 0; i < k.ins.size(); ++i)
        moves |= reads(k.ins, i);
      break;
    default:
      break;
    }
    for (const OperandDesc &out : k.outs) {
      Span s = spanOf(out);
      carriers.erase(
          std::remove_if(carriers.begin(), carriers.end(),
                         [&](const Span &c) { return spansOverlap(s, c); }),
          carriers.end());
    }
    if (moves)
      for (const OperandDesc &out : k.outs)
        carriers.push_back(spanOf(out));
  }
  return bound < 0 ? 2 : bound;
}

void SessionImpl::fillDefault(int p, NormalGenerator &weights,
                              NormalGenerator &data,
                              std::vector<uint8_t> &bytes,
                              cpu::ThreadPool &pool) const {
  const PersistentDesc &d = plan->persistents()[p];
  bytes.assign(d.bytes, 0);
  int64_t n = countOf(d.shape);
  if (n == 0)
    return;
  if (std::optional<double> v = lossScaleValue(p)) {
    for (int64_t i = 0; i < n; ++i)
      storeValue(d.dtype, bytes.data(), i, *v);
    return;
  }
  if (isAdamStep(p)) {
    for (int64_t i = 0; i < n; ++i)
      storeValue(d.dtype, bytes.data(), i, initial::kInitialAdamStep);
    return;
  }
  bool isFloat = isFloatType(d.dtype);
  const int64_t rank = comm ? comm->rank() : 0;
  const int64_t ranks = plan->ranks();
  // Elements [first, first + count) of a parameter named `name` of rank
  // `r`, stored at `at + i - first` where that is in [0, n): zeros, ones
  // (norm scales) or N(0, kWeightStd) variates, drawn in order.
  auto param = [&](std::string_view name, size_t r, int64_t count,
                   int64_t offset) {
    auto put = [&](int64_t i, double v) {
      int64_t j = offset + i;
      if (j >= 0 && j < n)
        storeValue(d.dtype, bytes.data(), j, v);
    };
    if (!isFloat || initial::endsWith(name, "bias"))
      return; // zeros, drawing nothing
    if (!initial::drawsParamValue(name, r)) {
      for (int64_t i = 0; i < count; ++i)
        put(i, initial::defaultParamValue(name, r, weights));
      return;
    }
    weights.fill(
        count,
        [&](int64_t m, auto &&fn) {
          pool.parallelFor(m, int64_t{1} << 14,
                           [&](int, int64_t b, int64_t e) { fn(b, e); });
        },
        [&](int64_t i, double v) { put(i, initial::kWeightStd * v); });
  };
  switch (d.role) {
  case Role::Param:
    if (!d.shard.empty()) {
      // A ZeRO piece: every rank draws every member whole, as one rank
      // would, and keeps its piece, so the pieces make up whole tensors.
      int64_t at = -rank * n;
      for (const ShardMemberDesc &m : d.shard) {
        param(m.source, m.shape.size(), m.elements, at);
        at += m.elements;
      }
      return;
    }
    param(d.name, d.shape.size(), n, 0);
    return;
  case Role::Input:
  case Role::Label: {
    // A rank's rows of the global batch: every rank draws the whole batch
    // and keeps its rows, so the ranks stay in step for what follows.
    const int64_t first = d.splitBatch ? rank * n : 0;
    const int64_t drawn = d.splitBatch ? ranks * n : n;
    const int64_t rowOffset =
        d.splitBatch && !d.shape.empty() ? rank * d.shape[0] : 0;
    if (isFloat) {
      for (int64_t i = 0; i < drawn; ++i) {
        double v = data.next();
        if (i >= first && i < first + n)
          storeValue(d.dtype, bytes.data(), i - first, v);
      }
      return;
    }
    // A learnable sequence: row b is b*7, b*7+1, ... modulo V, and labels
    // are the next token.
    int64_t vocab = tokenBound(p);
    if (vocab <= 0)
      return;
    int64_t cols = d.shape.empty() ? 1 : d.shape.back();
    int64_t shift = d.role == Role::Label ? 1 : 0;
    for (int64_t i = 0; i < n; ++i) {
      int64_t b = rowOffset + i / cols, t = i % cols;
      storeValue(d.dtype, bytes.data(), i,
                 static_cast<double>((b * 7 + t + shift) % vocab));
    }
    return;
  }
  default:
    return; // optimizer state, gradients, outputs: zeros
  }
}

void SessionImpl::defaultDraws(int p, uint64_t &weightVariates,
                               uint64_t &dataVariates) const {
  // fillDefault's rules, counting instead of drawing.
  weightVariates = dataVariates = 0;
  const PersistentDesc &d = plan->persistents()[p];
  const int64_t n = countOf(d.shape);
  if (n == 0 || lossScaleValue(p) || isAdamStep(p))
    return;
  const bool isFloat = isFloatType(d.dtype);
  auto draws = [&](const std::string &name, size_t rank) {
    return isFloat && initial::drawsParamValue(name, rank);
  };
  switch (d.role) {
  case Role::Param:
    if (!d.shard.empty()) {
      for (const ShardMemberDesc &m : d.shard)
        if (draws(m.source, m.shape.size()))
          weightVariates += static_cast<uint64_t>(m.elements);
      return;
    }
    if (draws(d.name, d.shape.size()))
      weightVariates = static_cast<uint64_t>(n);
    return;
  case Role::Input:
  case Role::Label:
    if (isFloat)
      dataVariates = static_cast<uint64_t>(d.splitBatch ? plan->ranks() * n : n);
    return;
  default:
    return;
  }
}

mwrt_status SessionImpl::drawDefaults(
    const std::function<bool(size_t)> &wanted,
    const std::function<mwrt_status(size_t, std::vector<uint8_t> &)> &use)
    const {
  NormalGenerator weights(options.seed);
  NormalGenerator data(options.seed ^ 0x9e3779b97f4a7c15ull);
  // The weights' variates are transformed on as many threads as the CPU
  // backend's kernels use (the same values for any count).
  cpu::ThreadPool pool(options.threads > 0 ? options.threads
                                           : cpu::ThreadPool::defaultThreads());
  // Variates of passed-over persistents, skipped only when a wanted one
  // draws after them (none after the last wanted one).
  uint64_t passedWeights = 0, passedData = 0;
  std::vector<uint8_t> bytes;
  // f32 masters (--mw-autodiff's master-weights=optimizer) start as their
  // parameters widened (initial::masterOf), drawn here or loaded: the
  // parameters they name are kept once drawn. Masters are optimizer state,
  // which draws no variates, so they go last without moving the others'.
  auto isMaster = [](const PersistentDesc &d) {
    return d.role == Role::OptimizerState && isFloatType(d.dtype) &&
           initial::masterOf(d.name).has_value();
  };
  std::vector<size_t> masters;
  std::set<std::string, std::less<>> sources;
  for (size_t p = 0; p < plan->persistents().size(); ++p) {
    const PersistentDesc &d = plan->persistents()[p];
    if (!isMaster(d) || !wanted(p))
      continue;
    masters.push_back(p);
    std::string_view of = *initial::masterOf(d.name);
    sources.emplace(of);
    sources.emplace(std::string(of) + ".param");
    for (const ShardMemberDesc &m : d.shard)
      if (std::optional<std::string_view> src = initial::masterOf(m.source))
        sources.emplace(*src);
  }
  std::map<std::string, std::pair<DType, std::vector<uint8_t>>, std::less<>>
      drawn;
  for (size_t p = 0; p < plan->persistents().size(); ++p) {
    const PersistentDesc &d = plan->persistents()[p];
    if (isMaster(d))
      continue;
    uint64_t w = 0, dv = 0;
    defaultDraws(static_cast<int>(p), w, dv);
    if (!wanted(p)) {
      passedWeights += w;
      passedData += dv;
      continue;
    }
    if (w) {
      weights.skip(passedWeights);
      passedWeights = 0;
    }
    if (dv) {
      data.skip(passedData);
      passedData = 0;
    }
    fillDefault(static_cast<int>(p), weights, data, bytes, pool);
    if (d.role == Role::Param && isFloatType(d.dtype) && sources.count(d.name))
      drawn[d.name] = {d.dtype, bytes};
    if (mwrt_status st = use(p, bytes))
      return st;
  }
  if (masters.empty())
    return MWRT_OK;
  // The parameters a load (or the session sharing them) wrote: their values.
  for (size_t q = 0; q < plan->persistents().size(); ++q) {
    const PersistentDesc &d = plan->persistents()[q];
    if (d.role != Role::Param || !isFloatType(d.dtype) ||
        !sources.count(d.name) || drawn.count(d.name) || !onDevice(d))
      continue;
    TensorData t;
    if (mwrt_status st = gather(persistRefs[q], t))
      return st;
    drawn[d.name] = {d.dtype, std::move(t.bytes)};
  }
  for (size_t p : masters) {
    fillDefault(static_cast<int>(p), weights, data, bytes, pool);
    fillMaster(plan->persistents()[p], drawn, bytes);
    if (mwrt_status st = use(p, bytes))
      return st;
  }
  return MWRT_OK;
}

void SessionImpl::fillMaster(
    const PersistentDesc &d,
    const std::map<std::string, std::pair<DType, std::vector<uint8_t>>,
                   std::less<>> &drawn,
    std::vector<uint8_t> &bytes) const {
  std::optional<std::string_view> of = initial::masterOf(d.name);
  if (!of)
    return;
  const int64_t n = countOf(d.shape);
  auto widen = [&](const std::pair<DType, std::vector<uint8_t>> &from,
                   int64_t first, int64_t count, int64_t to) {
    for (int64_t i = 0; i < count; ++i)
      storeValue(d.dtype, bytes.data(), to + i,
                 loadFloat(from.first, from.second.data(), first + i));
  };
  // A whole master, or a stage-3 piece beside its parameters' piece.
  for (std::string name : {std::string(*of), std::string(*of) + ".param"}) {
    auto it = drawn.find(name);
    if (it != drawn.end() &&
        static_cast<int64_t>(it->second.second.size()) ==
            n * static_cast<int64_t>(dtypeSize(it->second.first))) {
      widen(it->second, 0, n, 0);
      return;
    }
  }
  // A piece of whole parameters (stages 1-2): the rank's part of them.
  if (d.shard.empty())
    return;
  const int64_t begin = (comm ? comm->rank() : 0) * n;
  int64_t at = 0;
  for (const ShardMemberDesc &m : d.shard) {
    std::optional<std::string_view> src = initial::masterOf(m.source);
    auto it = src ? drawn.find(*src) : drawn.end();
    int64_t lo = std::max(at, begin), hi = std::min(at + m.elements, begin + n);
    if (it != drawn.end() && lo < hi &&
        static_cast<int64_t>(it->second.second.size()) ==
            m.elements * static_cast<int64_t>(dtypeSize(it->second.first)))
      widen(it->second, lo - at, hi - lo, lo - begin);
    at += m.elements;
  }
}

mwrt_status SessionImpl::initializeDefaults() {
  if (defaultsDone)
    return MWRT_OK;
  // A shared persistent is the other session's: its defaults (or what was
  // loaded into it) come from there.
  if (other)
    if (mwrt_status st = const_cast<SessionImpl *>(other)->initializeDefaults())
      return st;
  // Passed over when shared or loaded, so the others get the values they
  // would get alone; File persistents stay in their file (ensureFileWeights).
  mwrt_status st = drawDefaults(
      [&](size_t p) {
        const PersistentDesc &d = plan->persistents()[p];
        return !sharedPersist[p] && !written[p] && d.bytes != 0 &&
               d.placement != Placement::File;
      },
      [&](size_t p, std::vector<uint8_t> &bytes) {
        initializedBytes += plan->persistents()[p].bytes;
        return store(static_cast<int>(p), bytes.data());
      });
  if (st == MWRT_OK)
    defaultsDone = true;
  return st;
}

void SessionImpl::markLoaded(int p) {
  if (!written[p])
    loadedBytes += plan->persistents()[p].bytes;
  written[p] = true;
  if (sharedPersist[p] && other && sharedFrom[p] >= 0)
    const_cast<SessionImpl *>(other)->written[sharedFrom[p]] = true;
}

mwrt_status SessionImpl::upload(int p, const void *bytes) {
  markLoaded(p);
  return store(p, bytes);
}

mwrt_status SessionImpl::readWhole(const SafeTensorsFile &file, int p,
                                   std::vector<uint8_t> &scratch) {
  const PersistentDesc &d = plan->persistents()[p];
  markLoaded(p);
  if (d.bytes == 0)
    return MWRT_OK;
  std::string error;
  // Host store and the CPU backend's memory: no copy in between.
  if (d.placement == Placement::Host ||
      std::string_view(backend->name()) == "cpu")
    return file.read(d.name, 0, persistData[p], d.bytes, error)
               ? MWRT_OK
               : setError(MWRT_INVALID_ARGUMENT, error);
  scratch.resize(d.bytes);
  if (!file.read(d.name, 0, scratch.data(), d.bytes, error))
    return setError(MWRT_INVALID_ARGUMENT, error);
  return backend->upload(persistData[p], scratch.data(), d.bytes);
}

mwrt_status SessionImpl::store(int p, const void *bytes) {
  const PersistentDesc &d = plan->persistents()[p];
  if (d.bytes == 0 || d.placement == Placement::File)
    return MWRT_OK; // a File persistent's bytes stay in its file
  if (d.placement == Placement::Host) {
    std::memcpy(persistData[p], bytes, d.bytes);
    return MWRT_OK;
  }
  return backend->upload(persistData[p], bytes, d.bytes);
}

bool SessionImpl::readsParts() const {
  if (plan->ranks() > 1)
    return true;
  // File persistents are never read whole from --weights: by parts, each
  // tensor's range is read on its own, and theirs only when fetched.
  for (const PersistentDesc &d : plan->persistents())
    if (!d.shard.empty() || d.placement == Placement::File)
      return true;
  return false;
}

void SessionImpl::bindFile(int p, const std::shared_ptr<OffloadFile> &file,
                           uint64_t offset) {
  fileSources[p] = FileSource{file, offset};
  if (offload)
    offload->setSource(p, file, offset);
}

mwrt_status SessionImpl::ensureFileWeights() {
  if (!offload)
    return MWRT_OK;
  const Plan &p = *plan;
  // A shared File persistent reads the shared session's file, whichever it
  // has now (its --weights, or its defaults).
  if (other && other->offload) {
    if (mwrt_status st = const_cast<SessionImpl *>(other)->ensureFileWeights())
      return st;
    for (size_t i = 0; i < p.persistents().size(); ++i) {
      if (sharedFrom[i] < 0 || p.persistents()[i].placement != Placement::File)
        continue;
      const FileSource &theirs = other->fileSources[sharedFrom[i]];
      if (theirs.file && (theirs.file != fileSources[i].file ||
                          theirs.offset != fileSources[i].offset))
        bindFile(static_cast<int>(i), theirs.file, theirs.offset);
    }
  }
  if (offload->ready())
    return MWRT_OK;
  // The defaults, drawn as initializeDefaults draws them (the others passed
  // over), into one file written atomically (a killed run leaves no
  // partial file).
  SafeTensors file;
  std::string error;
  if (mwrt_status st = drawDefaults(
          [&](size_t i) {
            return p.persistents()[i].placement == Placement::File;
          },
          [&](size_t i, std::vector<uint8_t> &bytes) {
            const PersistentDesc &d = p.persistents()[i];
            TensorData t;
            t.dtype = d.dtype;
            t.shape = d.shape;
            t.bytes = std::move(bytes);
            initializedBytes += d.bytes;
            return file.add(d.name, std::move(t), error)
                       ? MWRT_OK
                       : setError(MWRT_INTERNAL, error);
          }))
    return st;
  std::string dir = p.offloadPath().empty() ? "." : p.offloadPath();
  for (size_t at = 1; at <= dir.size(); ++at)
    if (at == dir.size() || dir[at] == '/')
      if (::mkdir(dir.substr(0, at).c_str(), 0777) != 0 && errno != EEXIST)
        return setError(MWRT_INVALID_ARGUMENT,
                        "offload path " + dir + ": cannot create " +
                            dir.substr(0, at) + ": " + std::strerror(errno));
  struct stat info;
  if (::stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    return setError(MWRT_INVALID_ARGUMENT,
                    "offload path " + dir + " is not a directory (the plan's "
                    "File weights are written there without --weights)");
  std::string path =
      dir + "/" + (p.function().empty() ? "plan" : p.function()) +
      ".weights.safetensors";
  if (!writeSafeTensors(path, file, error))
    return setError(MWRT_INVALID_ARGUMENT,
                    "writing the offloaded weights' defaults: " + error);
  auto opened = std::make_shared<OffloadFile>();
  if (mwrt_status st = opened->open(path, /*direct=*/true))
    return st;
  for (size_t i = 0; i < p.persistents().size(); ++i)
    if (p.persistents()[i].placement == Placement::File)
      bindFile(static_cast<int>(i), opened,
               opened->tensors().find(p.persistents()[i].name)->offset);
  return MWRT_OK;
}

mwrt_status SessionImpl::readOffloaded(int p, TensorData &out) const {
  const PersistentDesc &d = plan->persistents()[p];
  out.dtype = d.dtype;
  out.shape = d.shape;
  out.bytes.assign(d.bytes, 0);
  if (d.placement == Placement::Host) {
    if (d.bytes)
      std::memcpy(out.bytes.data(), persistData[p], d.bytes);
    return MWRT_OK;
  }
  // Before the first step and without --weights: the defaults' file.
  if (mwrt_status st = const_cast<SessionImpl *>(this)->ensureFileWeights())
    return st;
  const FileSource &src = fileSources[p];
  if (!src.file)
    return setError(MWRT_INTERNAL, "'" + d.name + "' has no weights file");
  void *staging = nullptr;
  if (posix_memalign(&staging, kDirectAlignment, stagingBytesFor(d.bytes)) != 0)
    return setError(MWRT_INTERNAL, "out of host memory");
  uint64_t delta = 0;
  mwrt_status st = src.file->read(d.name, src.offset, d.bytes,
                                  static_cast<uint8_t *>(staging), delta);
  if (st == MWRT_OK && d.bytes)
    std::memcpy(out.bytes.data(), static_cast<uint8_t *>(staging) + delta,
                d.bytes);
  std::free(staging);
  return st;
}

mwrt_status SessionImpl::readPart(const SafeTensorsFile &file, int p,
                                  std::vector<uint8_t> &bytes,
                                  bool &found) const {
  const PersistentDesc &d = plan->persistents()[p];
  const std::string &path = file.path();
  const int64_t rank = comm->rank(), ranks = plan->ranks();
  const size_t esz = dtypeSize(d.dtype);
  bytes.assign(d.bytes, 0);
  found = false;
  std::string error;
  auto readFailed = [&] { return setError(MWRT_INVALID_ARGUMENT, error); };
  if (const SafeTensorsFile::Tensor *t = file.find(d.name)) {
    found = true;
    if (t->dtype == d.dtype && t->shape == d.shape)
      return file.read(d.name, 0, bytes.data(), bytes.size(), error)
                 ? MWRT_OK
                 : readFailed();
    if (d.splitBatch && t->dtype == d.dtype && !t->shape.empty() &&
        t->shape.size() == d.shape.size() &&
        t->shape[0] == d.shape[0] * ranks &&
        std::equal(t->shape.begin() + 1, t->shape.end(), d.shape.begin() + 1))
      return file.read(d.name, static_cast<uint64_t>(rank) * d.bytes,
                       bytes.data(), bytes.size(), error)
                 ? MWRT_OK
                 : readFailed();
    std::vector<int64_t> global = d.shape;
    if (d.splitBatch)
      global[0] *= ranks;
    return setError(MWRT_INVALID_ARGUMENT,
                    path + ": tensor '" + d.name + "' is " +
                        typeText(t->dtype, t->shape) + ", but the plan's " +
                        roleName(d.role) + " '" + d.name + "' " +
                        (d.splitBatch
                             ? "takes the global batch, " +
                                   typeText(d.dtype, global) + " (" +
                                   std::to_string(ranks) + " ranks of " +
                                   shapeText(d.shape) + ")"
                             : "is " + typeText(d.dtype, d.shape)));
  }
  if (d.shard.empty())
    return MWRT_OK;
  // A piece: rank r holds elements [r*n, (r+1)*n) of the members flattened
  // one after the other (and zero padding after the last).
  const std::string *present = nullptr, *absent = nullptr;
  for (const ShardMemberDesc &m : d.shard)
    (file.find(m.source) ? present : absent) = &m.source;
  if (!present)
    return MWRT_OK;
  if (absent)
    return setError(MWRT_NOT_FOUND,
                    path + ": has '" + *present + "' but not '" + *absent +
                        "', which the plan's piece '" + d.name +
                        "' also holds");
  found = true;
  const int64_t n = countOf(d.shape), begin = rank * n;
  int64_t at = 0;
  for (const ShardMemberDesc &m : d.shard) {
    const SafeTensorsFile::Tensor *t = file.find(m.source);
    if (t->dtype != d.dtype || t->shape != m.shape)
      return setError(MWRT_INVALID_ARGUMENT,
                      path + ": tensor '" + m.source + "' is " +
                          typeText(t->dtype, t->shape) + ", but the plan's " +
                          roleName(d.role) + " piece '" + d.name +
                          "' holds it as " + typeText(d.dtype, m.shape));
    int64_t lo = std::max(at, begin), hi = std::min(at + m.elements, begin + n);
    if (lo < hi &&
        !file.read(m.source, static_cast<uint64_t>(lo - at) * esz,
                   bytes.data() + (lo - begin) * esz,
                   static_cast<size_t>(hi - lo) * esz, error))
      return readFailed();
    at += m.elements;
  }
  return MWRT_OK;
}

mwrt_status SessionImpl::loadParts(const std::string &path, bool weights,
                                   std::vector<std::string> *missingState) {
  SafeTensorsFile file;
  std::string error;
  if (!file.open(path, error))
    return setError(::access(path.c_str(), F_OK) != 0 ? MWRT_NOT_FOUND
                                                      : MWRT_INVALID_ARGUMENT,
                    error);
  const Plan &p = *plan;
  std::vector<std::pair<int, std::vector<uint8_t>>> bind;
  std::vector<std::string> missing;
  std::vector<std::pair<int, uint64_t>> fileBind;
  // Whole tensors under their own name, dtype and shape: read once every
  // tensor is checked, straight into their buffers.
  std::vector<int> whole;
  for (size_t i = 0; i < p.persistents().size(); ++i) {
    const PersistentDesc &d = p.persistents()[i];
    if (weights && !isState(d))
      continue;
    std::vector<uint8_t> bytes;
    bool found = false, isWhole = false;
    const SafeTensorsFile::Tensor *inFile = nullptr;
    const SafeTensorsFile::Tensor *same = file.find(d.name);
    if (same && d.shard.empty() && d.placement != Placement::File &&
        same->dtype == d.dtype && same->shape == d.shape) {
      found = isWhole = true;
    } else if (d.placement == Placement::File) {
      // Checked now, read when a fetch needs it.
      inFile = file.find(d.name);
      found = inFile != nullptr;
      if (found && (inFile->dtype != d.dtype || inFile->shape != d.shape))
        return setError(MWRT_INVALID_ARGUMENT,
                        path + ": tensor '" + d.name + "' is " +
                            typeText(inFile->dtype, inFile->shape) +
                            ", but the plan's " + roleName(d.role) + " '" +
                            d.name + "' is " + typeText(d.dtype, d.shape));
    } else if (mwrt_status st =
                   readPart(file, static_cast<int>(i), bytes, found)) {
      return st;
    }
    if (!found) {
      if (weights && d.role == Role::Param)
        return setError(MWRT_NOT_FOUND,
                        path + ": no tensor '" +
                            (d.shard.empty() ? d.name : d.shard.front().source) +
                            "' for the plan's param '" + d.name + "' (" +
                            typeText(d.dtype, d.shape) + ")");
      if (!weights && isData(d))
        return setError(MWRT_NOT_FOUND,
                        path + ": no tensor '" + d.name + "' for the plan's " +
                            roleName(d.role) + " '" + d.name + "'");
      if (weights)
        missing.push_back(d.name);
      continue;
    }
    if (!weights && i < weightsSource.size() && !weightsSource[i].empty() &&
        !sameFile(weightsSource[i], path))
      return setError(MWRT_INVALID_ARGUMENT,
                      path + ": tensor '" + d.name + "' is also in the "
                             "weights file " + weightsSource[i] +
                             "; a tensor comes from one file only");
    if (inFile)
      fileBind.emplace_back(static_cast<int>(i), inFile->offset);
    else if (isWhole)
      whole.push_back(static_cast<int>(i));
    else
      bind.emplace_back(static_cast<int>(i), std::move(bytes));
  }
  if (!fileBind.empty()) {
    auto opened = std::make_shared<OffloadFile>();
    if (mwrt_status st = opened->open(path, /*direct=*/true))
      return st;
    for (auto [index, offset] : fileBind) {
      bindFile(index, opened, offset);
      markLoaded(index);
    }
  }
  std::vector<uint8_t> scratch;
  for (int index : whole)
    if (mwrt_status st = readWhole(file, index, scratch))
      return st;
  for (auto &[index, bytes] : bind)
    if (mwrt_status st = upload(index, bytes.data()))
      return st;
  if (weights) {
    weightsSource.resize(p.persistents().size());
    for (auto &[index, bytes] : bind)
      weightsSource[index] = path;
    for (auto [index, offset] : fileBind)
      weightsSource[index] = path;
    for (int index : whole)
      weightsSource[index] = path;
    if (missingState)
      *missingState = std::move(missing);
  }
  return MWRT_OK;
}

mwrt_status SessionImpl::checkTensor(const std::string &source, int p,
                                     const TensorData &t) const {
  const PersistentDesc &d = plan->persistents()[p];
  if (t.dtype == d.dtype && t.shape == d.shape)
    return MWRT_OK;
  return setError(MWRT_INVALID_ARGUMENT,
                  source + ": tensor '" + d.name + "' is " +
                      typeText(t.dtype, t.shape) + ", but the plan's " +
                      roleName(d.role) + " '" + d.name + "' is " +
                      typeText(d.dtype, d.shape));
}

mwrt_status SessionImpl::gather(const TensorRef &t, TensorData &out) const {
  TensorData result;
  result.dtype = t.dtype;
  result.shape = t.shape;
  size_t elemSize = dtypeSize(t.dtype);
  result.bytes.assign(static_cast<size_t>(t.numElements()) * elemSize, 0);
  if (!result.bytes.empty()) {
    if (t.isContiguous()) {
      if (mwrt_status st = backend->download(result.bytes.data(), t.data,
                                             result.bytes.size()))
        return st;
    } else {
      // Download the bytes the view spans, then gather on the host.
      uintptr_t begin, end;
      byteSpan(t, begin, end);
      std::vector<uint8_t> span(end - begin);
      if (mwrt_status st = backend->download(
              span.data(), reinterpret_cast<const void *>(begin), span.size()))
        return st;
      TensorRef host = t;
      host.data = span.data() + (reinterpret_cast<uintptr_t>(t.data) - begin);
      copyHostTensor(
          TensorRef(t.dtype, t.shape, result.bytes.data(), rowMajor(t.shape)),
          host);
    }
  }
  out = std::move(result);
  return MWRT_OK;
}

mwrt_status SessionImpl::step() {
  uint64_t number = steps + 1;
  if (mwrt_status st = initializeDefaults())
    return st;
  if (mwrt_status st = ensureFileWeights())
    return st;
  if (mwrt_status st = executor->run(number))
    return st;
  int lossIndex = plan->lossResult();
  if (lossIndex >= 0) {
    const TensorRef &ref = resultRefs[lossIndex];
    uint8_t raw[4] = {0, 0, 0, 0};
    if (mwrt_status st = backend->download(raw, ref.data, dtypeSize(ref.dtype)))
      return st;
    double value;
    if (ref.dtype == DType::F32) {
      float f;
      std::memcpy(&f, raw, 4);
      value = f;
    } else {
      uint16_t h;
      std::memcpy(&h, raw, 2);
      value =
          ref.dtype == DType::F16 ? halfBitsToFloat(h) : bfloatBitsToFloat(h);
    }
    lastLoss = value;
    if (options.checkLoss && !std::isfinite(value))
      return setError(MWRT_INVALID_ARGUMENT,
                      "step " + std::to_string(number) + ": the loss ('" +
                          plan->results()[lossIndex].name + "') is " +
                          (std::isnan(value) ? "NaN" : "infinite") +
                          "; stopping");
  }
  for (CopyBack &c : copies)
    if (c.staged)
      if (mwrt_status st = backend->copy(c.stage, c.src))
        return st;
  for (CopyBack &c : copies)
    if (mwrt_status st = backend->copy(c.dst, c.staged ? c.stage : c.src))
      return st;
  if (mwrt_status st = backend->synchronize())
    return st;
  steps = number;
  return MWRT_OK;
}

//===----------------------------------------------------------------------===//
// Session
//===----------------------------------------------------------------------===//

Session::Session() : impl(std::make_unique<SessionImpl>()) {}
Session::~Session() = default;

const Plan &Session::plan() const { return *impl->plan; }

mwrt_status Session::create(std::shared_ptr<const Plan> plan,
                            std::string_view device,
                            const SessionOptions &options,
                            std::unique_ptr<Session> &session) {
  if (!plan)
    return setError(MWRT_INVALID_ARGUMENT, "no plan");
  std::unique_ptr<Session> s(new Session());
  s->impl->plan = std::move(plan);
  s->impl->options = options;
  if (mwrt_status st = s->impl->init(device))
    return st;
  session = std::move(s);
  return MWRT_OK;
}

/// Reads a safetensors file, telling a missing file (MWRT_NOT_FOUND) from a
/// bad one.
static mwrt_status readFile(const std::string &path, SafeTensors &file) {
  std::string error;
  if (readSafeTensors(path, file, error))
    return MWRT_OK;
  return setError(::access(path.c_str(), F_OK) != 0 ? MWRT_NOT_FOUND
                                                    : MWRT_INVALID_ARGUMENT,
                  error);
}

mwrt_status Session::loadWeights(const std::string &path,
                                 std::vector<std::string> *missingState) {
  struct stat info;
  if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    std::string rankFile;
    uint64_t step = 0;
    if (mwrt_status st = findShardedCheckpoint(
            path, impl->plan->ranks(), impl->comm->rank(), rankFile, step))
      return st;
    if (mwrt_status st = impl->loadParts(rankFile, true, missingState))
      return st;
    impl->firstStep = step;
    return MWRT_OK;
  }
  // The header first, every tensor checked, then each read straight into
  // its buffer (never the whole file in memory at once).
  return impl->loadParts(path, true, missingState);
}

mwrt_status Session::loadInputs(const std::string &path) {
  if (impl->readsParts())
    return impl->loadParts(path, false, nullptr);
  SafeTensors file;
  if (mwrt_status st = readFile(path, file))
    return st;
  const Plan &p = *impl->plan;
  std::vector<std::pair<int, const TensorData *>> bind;
  for (size_t i = 0; i < p.persistents().size(); ++i) {
    const PersistentDesc &d = p.persistents()[i];
    const TensorData *t = file.find(d.name);
    if (!t) {
      if (isData(d))
        return setError(MWRT_NOT_FOUND,
                        path + ": no tensor '" + d.name + "' for the plan's " +
                            roleName(d.role) + " '" + d.name + "' (" +
                            typeText(d.dtype, d.shape) + ")");
      continue;
    }
    // The same file for both (mw-eval --save-inputs writes one) is fine.
    if (i < impl->weightsSource.size() && !impl->weightsSource[i].empty() &&
        !sameFile(impl->weightsSource[i], path))
      return setError(MWRT_INVALID_ARGUMENT,
                      path + ": tensor '" + d.name + "' is also in the "
                             "weights file " + impl->weightsSource[i] +
                             "; a tensor comes from one file only");
    if (mwrt_status st = impl->checkTensor(path, static_cast<int>(i), *t))
      return st;
    bind.push_back({static_cast<int>(i), t});
  }
  for (auto [index, t] : bind)
    if (mwrt_status st = impl->upload(index, t->bytes.data()))
      return st;
  return MWRT_OK;
}

mwrt_status Session::setTensor(std::string_view name, DType dtype,
                               const std::vector<int64_t> &shape,
                               const void *bytes, size_t size) {
  int p = impl->plan->findPersistent(name);
  if (p < 0)
    return setError(MWRT_NOT_FOUND,
                    "set tensor: the plan has no persistent named '" +
                        std::string(name) + "'");
  const PersistentDesc &d = impl->plan->persistents()[p];
  if (d.placement == Placement::File)
    return setError(MWRT_INVALID_ARGUMENT,
                    "set tensor: '" + d.name + "' is offloaded to a weights "
                    "file; give its value in the --weights file");
  TensorData probe;
  probe.dtype = dtype;
  probe.shape = shape;
  if (mwrt_status st = impl->checkTensor("set tensor", p, probe))
    return st;
  if (size != d.bytes)
    return setError(MWRT_INVALID_ARGUMENT,
                    "set tensor: '" + d.name + "' (" +
                        typeText(d.dtype, d.shape) + ") takes " +
                        std::to_string(d.bytes) + " bytes, got " +
                        std::to_string(size));
  if (size && !bytes)
    return setError(MWRT_INVALID_ARGUMENT,
                    "set tensor: no data for '" + d.name + "'");
  return impl->upload(p, bytes);
}

mwrt_status Session::setTensor(std::string_view name,
                               const TensorData &tensor) {
  return setTensor(name, tensor.dtype, tensor.shape, tensor.bytes.data(),
                   tensor.bytes.size());
}

mwrt_status Session::step() { return impl->step(); }

mwrt_status Session::initializeRest() { return impl->initializeDefaults(); }

mwrt_status Session::loss(double &value) const {
  if (impl->plan->lossResult() < 0)
    return setError(MWRT_NOT_FOUND, "the plan has no loss");
  if (!impl->lastLoss)
    return setError(MWRT_NOT_FOUND, "no step has run yet");
  value = *impl->lastLoss;
  return MWRT_OK;
}

mwrt_status Session::readResult(std::string_view name, TensorData &out) const {
  int r = impl->plan->findResult(name);
  if (r < 0)
    return setError(MWRT_NOT_FOUND,
                    "the plan has no result named '" + std::string(name) + "'");
  if (mwrt_status st = impl->initializeDefaults())
    return st;
  return impl->gather(impl->resultRefs[r], out);
}

mwrt_status Session::readPersistent(std::string_view name,
                                    TensorData &out) const {
  int p = impl->plan->findPersistent(name);
  if (p < 0)
    return setError(MWRT_NOT_FOUND, "the plan has no persistent named '" +
                                        std::string(name) + "'");
  if (mwrt_status st = impl->initializeDefaults())
    return st;
  if (!onDevice(impl->plan->persistents()[p]))
    return impl->readOffloaded(p, out);
  return impl->gather(impl->persistRefs[p], out);
}

mwrt_status Session::collectWeights(SafeTensors &out) const {
  SafeTensors result;
  for (const PersistentDesc &d : impl->plan->persistents()) {
    if (!isState(d))
      continue;
    TensorData t;
    if (mwrt_status st = readPersistent(d.name, t))
      return st;
    std::string error;
    if (!result.add(d.name, std::move(t), error))
      return setError(MWRT_INTERNAL, error);
  }
  out = std::move(result);
  return MWRT_OK;
}

mwrt_status Session::saveWeights(const std::string &path) const {
  SafeTensors weights;
  mwrt_status collected = collectWeights(weights);
  if (impl->plan->ranks() > 1)
    return writeShardedCheckpoint(path, *impl->plan, impl->comm->rank(),
                                  impl->firstStep + impl->steps, collected,
                                  weights);
  if (mwrt_status st = collected)
    return st;
  std::string error;
  if (!writeSafeTensors(path, weights, error))
    return setError(MWRT_INVALID_ARGUMENT, error);
  return MWRT_OK;
}

CommStats Session::commStats() const { return impl->comm->stats(); }
int Session::rank() const { return impl->comm->rank(); }
uint64_t Session::resumedSteps() const { return impl->firstStep; }
int Session::ranks() const { return static_cast<int>(impl->plan->ranks()); }

SessionStats Session::stats() const {
  SessionStats s;
  s.arenaBytes = impl->plan->arenaSize();
  s.persistentBytes = impl->persistBytes;
  s.workspaceBytes = impl->stagingBytes + impl->fusedBytes;
  s.plannedPeakBytes = s.arenaBytes + s.persistentBytes + s.workspaceBytes;
  s.measuredPeakBytes = impl->measured;
  s.lowerBoundBytes = impl->plan->lowerBound();
  s.steps = impl->steps;
  s.sharedBytes = impl->sharedBytes;
  s.hostBytes = impl->hostBytes;
  s.initializedBytes = impl->initializedBytes;
  s.loadedBytes = impl->loadedBytes;
  return s;
}

OffloadStats Session::offloadStats() const {
  OffloadStats s;
  if (!impl->offload)
    return s;
  OffloadCounters c = impl->offload->counters();
  s.steps = c.steps;
  s.fetches = c.fetches;
  s.bytesStreamed = c.bytesStreamed;
  s.bytesRead = c.bytesRead;
  s.computeSeconds = c.stepSeconds - c.waitSeconds;
  s.copySeconds = impl->backend->copySeconds();
  s.waitSeconds = c.waitSeconds;
  s.readSeconds = c.readSeconds;
  for (const SessionImpl::FileSource &f : impl->fileSources)
    if (f.file) {
      s.file = f.file->path();
      break;
    }
  s.direct = !s.file.empty() && impl->offload->allDirect();
  return s;
}

} // namespace mwrt
