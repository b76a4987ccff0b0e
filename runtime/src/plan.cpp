//===- plan.cpp - Reading, verifying and validating .mwplan files ---------===//
//
// A plan is checked in three layers before anything runs: the FlatBuffers
// verifier (with the "MWPL" identifier) proves every offset in the file is
// in bounds, so a truncated or garbage file is one clear error instead of a
// wild read; the version must be kMwPlanVersion; then every field is checked
// against what execution relies on: known op names and dtypes, every view
// inside its buffer (arena views inside arena_size and aligned to their
// element size, persistent views inside their buffer with its dtype), one
// stride per dimension, unique names, results that match the persistents
// they update. The plan is then decoded into plain structures (runtime.h) so
// the executor never reads the file again. Messages name the kernel index,
// the op and the operand.
//
//===----------------------------------------------------------------------===//

#include "fusion.h"
#include "mwrt/plan.h"
#include "mwrt/runtime.h"
#include "status.h"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

using namespace mwrt;

namespace {
/// Element counts and byte sizes are kept below this, so every offset the
/// executor and the kernels compute fits in int64 with room to spare.
constexpr int64_t kMaxBytes = int64_t(1) << 56;

/// Extents of views are computed in 128 bits, so that a corrupt stride or
/// offset cannot overflow its way back into range. (__extension__ keeps
/// -pedantic, which LLVM's build flags add, quiet.)
__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

bool toDType(mwplan::DType in, DType &out) {
  switch (in) {
  case mwplan::DType::F32:
    out = DType::F32;
    return true;
  case mwplan::DType::F16:
    out = DType::F16;
    return true;
  case mwplan::DType::BF16:
    out = DType::BF16;
    return true;
  case mwplan::DType::I32:
    out = DType::I32;
    return true;
  case mwplan::DType::I64:
    out = DType::I64;
    return true;
  case mwplan::DType::I8:
    out = DType::I8;
    return true;
  case mwplan::DType::F8E4M3FN:
    out = DType::F8_E4M3;
    return true;
  }
  return false;
}

bool toRole(mwplan::Role in, Role &out) {
  int v = static_cast<int>(in);
  if (v < 0 || v > static_cast<int>(Role::KvCache))
    return false;
  out = static_cast<Role>(v);
  return true;
}

/// Whether the elements of `v` are aligned for T. The FlatBuffers 2.0
/// verifier checks only 4-byte alignment of a vector, so a corrupt offset
/// could leave an int64 or double vector misaligned (the buffer's start is
/// 8-aligned: Plan::parse makes sure).
template <typename T> bool isAligned(const flatbuffers::Vector<T> *v) {
  return !v || v->size() == 0 ||
         reinterpret_cast<uintptr_t>(v->Data()) % alignof(T) == 0;
}

template <typename T>
bool readVector(const flatbuffers::Vector<T> *in, std::vector<T> &out,
                const char *what, std::string &error) {
  out.clear();
  if (!in)
    return true;
  if (!isAligned(in)) {
    error = std::string(what) + " vector is misaligned (corrupt plan)";
    return false;
  }
  out.assign(in->begin(), in->end());
  return true;
}

/// Length of the UTF-8 sequence starting at s[i] (0 when it is not one).
size_t utf8Length(std::string_view s, size_t i) {
  auto c = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xbf) {
    return k < s.size() && c(k) >= lo && c(k) <= hi;
  };
  unsigned b = c(i);
  if (b < 0x80)
    return 1;
  if (b >= 0xc2 && b <= 0xdf)
    return cont(i + 1) ? 2 : 0;
  if (b >= 0xe0 && b <= 0xef) {
    unsigned lo = b == 0xe0 ? 0xa0 : 0x80, hi = b == 0xed ? 0x9f : 0xbf;
    return cont(i + 1, lo, hi) && cont(i + 2) ? 3 : 0;
  }
  if (b >= 0xf0 && b <= 0xf4) {
    unsigned lo = b == 0xf0 ? 0x90 : 0x80, hi = b == 0xf4 ? 0x8f : 0xbf;
    return cont(i + 1, lo, hi) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  }
  return 0;
}

bool isControl(unsigned char c) { return c < 0x20 || c == 0x7f; }

/// Whether `s` is valid UTF-8 without control characters: names end up in
/// messages and in safetensors headers (which require UTF-8).
bool isPrintableUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8Length(s, i);
    if (n == 0 || isControl(static_cast<unsigned char>(s[i])))
      return false;
    i += n;
  }
  return true;
}

/// `s` for a message: control characters and bytes that are not UTF-8
/// become \xNN.
std::string displayText(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8Length(s, i);
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (n == 0 || isControl(c)) {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
      ++i;
      continue;
    }
    out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

/// Decodes a shape; false (with `error`) for a negative dimension or one
/// whose bytes would not fit.
bool readShape(const flatbuffers::Vector<int64_t> *in, size_t elemSize,
               std::vector<int64_t> &shape, std::string &error) {
  if (!readVector(in, shape, "shape", error))
    return false;
  int64_t bytes = static_cast<int64_t>(elemSize);
  for (int64_t d : shape) {
    if (d < 0) {
      error = "shape " + shapeText(shape) + " has a negative dimension";
      return false;
    }
  }
  for (int64_t d : shape) {
    if (d == 0)
      return true;
    if (bytes > kMaxBytes / d) {
      error = "shape " + shapeText(shape) + " is too large";
      return false;
    }
    bytes *= d;
  }
  return true;
}

std::string int128Text(Int128 v) {
  UInt128 u = v < 0 ? -static_cast<UInt128>(v) : static_cast<UInt128>(v);
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + int(u % 10)));
    u /= 10;
  } while (u);
  return v < 0 ? "-" + digits : digits;
}

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}
} // namespace

namespace mwrt {

const char *roleName(Role role) {
  switch (role) {
  case Role::None:
    return "none";
  case Role::Param:
    return "param";
  case Role::Input:
    return "input";
  case Role::Label:
    return "label";
  case Role::OptimizerState:
    return "optimizer_state";
  case Role::Grad:
    return "grad";
  case Role::Output:
    return "output";
  case Role::KvCache:
    return "kv_cache";
  }
  return "unknown";
}

/// Validates a verified flatbuffer and fills a Plan.
class PlanReader {
public:
  PlanReader(Plan &plan, const mwplan::Plan &fb) : plan(plan), fb(fb) {}

  /// False with `error` (without the source prefix) on the first problem.
  bool read(std::string &error);

private:
  bool readPersistents(std::string &error);
  bool readShard(const mwplan::Persistent &p, PersistentDesc &d,
                 std::string &error);
  bool checkWriteBacks(std::string &error);
  bool checkArenaLiveness(std::string &error);
  bool readKernel(size_t index, const mwplan::Kernel &k, std::string &error);
  bool readProgram(const mwplan::FusedProgram &fp, FusedProgramDesc &p,
                   std::string &error);
  bool readAttr(const mwplan::Attr &a, KernelAttrs &attrs, std::string &error);
  bool readOperand(const mwplan::Operand &op, OperandDesc &out,
                   std::string &error);
  bool readResults(std::string &error);

  Plan &plan;
  const mwplan::Plan &fb;
  std::map<std::string, int, std::less<>> persistentNames;
};

bool PlanReader::read(std::string &error) {
  if (fb.function())
    plan.functionName = displayText(fb.function()->str());
  plan.arenaBytes = fb.arena_size();
  plan.arenaAlign = fb.arena_alignment();
  plan.lowerBoundBytes = fb.lower_bound();
  if (plan.arenaBytes > static_cast<uint64_t>(kMaxBytes)) {
    error = "arena_size " + std::to_string(plan.arenaBytes) + " is too large";
    return false;
  }
  uint64_t align = plan.arenaAlign;
  if (align != 0 && ((align & (align - 1)) != 0 || align > (1u << 30))) {
    error = "arena_alignment " + std::to_string(align) +
            " is not a power of two up to 2^30";
    return false;
  }
  plan.rankCount = fb.ranks();
  if (plan.rankCount == 0) {
    error = "ranks is 0; a plan runs on at least one rank";
    return false;
  }
  if (const auto *buffers = fb.arena_buffers()) {
    for (flatbuffers::uoffset_t i = 0; i < buffers->size(); ++i) {
      const mwplan::ArenaBuffer &b = *buffers->Get(i);
      if (b.size() > plan.arenaBytes || b.offset() > plan.arenaBytes - b.size()) {
        error = "arena buffer " + std::to_string(i) + " at [" +
                std::to_string(b.offset()) + ", +" + std::to_string(b.size()) +
                ") is outside the arena of " + std::to_string(plan.arenaBytes) +
                " bytes";
        return false;
      }
      plan.arenaBufferList.push_back({b.offset(), b.size()});
    }
  }
  if (!readPersistents(error))
    return false;
  if (fb.offload_path()) {
    plan.offloadDir = fb.offload_path()->str();
    if (!isPrintableUtf8(plan.offloadDir)) {
      error = "offload_path is not printable UTF-8: '" +
              displayText(plan.offloadDir) + "'";
      return false;
    }
  }
  plan.offloadPrefetchDepth = fb.offload_prefetch();
  plan.peakBudgetBytes = fb.peak_budget();
  if (plan.peakBudgetBytes) {
    // Offloaded weights are host memory or a file, not device memory.
    uint64_t peak = plan.arenaBytes;
    for (const PersistentDesc &d : plan.persists)
      if (d.placement == Placement::Device)
        peak += d.bytes;
    if (peak > plan.peakBudgetBytes) {
      error = "the plan peaks at " + std::to_string(peak) + " bytes (arena " +
              std::to_string(plan.arenaBytes) + " + persistents " +
              std::to_string(peak - plan.arenaBytes) +
              "), over its peak_budget " +
              std::to_string(plan.peakBudgetBytes);
      return false;
    }
  }
  if (const auto *kernels = fb.kernels()) {
    plan.kernelList.resize(kernels->size());
    for (flatbuffers::uoffset_t i = 0; i < kernels->size(); ++i)
      if (!readKernel(i, *kernels->Get(i), error))
        return false;
  }
  return readResults(error);
}

bool PlanReader::readPersistents(std::string &error) {
  const auto *list = fb.persistents();
  if (!list)
    return true;
  plan.persists.resize(list->size());
  uint64_t total = 0; // as the session lays them out, 64-byte aligned
  for (flatbuffers::uoffset_t i = 0; i < list->size(); ++i) {
    const mwplan::Persistent &p = *list->Get(i);
    PersistentDesc &d = plan.persists[i];
    d.name = p.name()->str();
    if (d.name.empty() || !isPrintableUtf8(d.name)) {
      error = "persistent " + std::to_string(i) + " has " +
              (d.name.empty() ? "an empty name"
                              : "a name that is not printable UTF-8: '" +
                                    displayText(d.name) + "'");
      return false;
    }
    std::string where =
        "persistent " + std::to_string(i) + " ('" + d.name + "'): ";
    if (!toDType(p.dtype(), d.dtype)) {
      error = where + "unknown dtype " + std::to_string(int(p.dtype()));
      return false;
    }
    if (!toRole(p.role(), d.role)) {
      error = where + "unknown role " + std::to_string(int(p.role()));
      return false;
    }
    if (!readShape(p.shape(), dtypeSize(d.dtype), d.shape, error)) {
      error = where + error;
      return false;
    }
    d.argument = p.argument();
    if (d.argument < -1) {
      error = where + "argument index " + std::to_string(d.argument) +
              " is negative";
      return false;
    }
    d.bytes = static_cast<uint64_t>(numElements(d.shape)) * dtypeSize(d.dtype);
    switch (p.placement()) {
    case mwplan::Placement::Device:
      d.placement = Placement::Device;
      break;
    case mwplan::Placement::Host:
      d.placement = Placement::Host;
      break;
    case mwplan::Placement::File:
      d.placement = Placement::File;
      break;
    default:
      error = where + "unknown placement " + std::to_string(int(p.placement()));
      return false;
    }
    if (d.placement != Placement::Device &&
        (d.argument < 0 || d.role != Role::Param)) {
      error = where + "is offloaded (placement " +
              (d.placement == Placement::Host ? "Host" : "File") +
              ") but is not a parameter argument: only weights are offloaded";
      return false;
    }
    if (!readShard(p, d, error)) {
      error = where + error;
      return false;
    }
    total += (d.bytes + 63) / 64 * 64;
    if (total > static_cast<uint64_t>(kMaxBytes)) {
      error = where + "the persistents up to this one take more than 2^56 "
                      "bytes";
      return false;
    }
    auto [it, inserted] = persistentNames.emplace(d.name, int(i));
    if (!inserted) {
      error = where + "the name is also persistent " +
              std::to_string(it->second) +
              "'s (names bind tensors, so they "
              "must be unique)";
      return false;
    }
  }
  return true;
}

bool PlanReader::readShard(const mwplan::Persistent &p, PersistentDesc &d,
                           std::string &error) {
  d.splitBatch = p.split_batch();
  if (d.splitBatch && (plan.rankCount < 2 || d.shape.empty() ||
                       d.shape[0] == 0)) {
    error = plan.rankCount < 2
                ? "split_batch on a plan of one rank"
                : "split_batch on a tensor without rows to split";
    return false;
  }
  if (!p.shard() || p.shard()->size() == 0)
    return true;
  int64_t total = 0;
  for (const mwplan::ShardMember *m : *p.shard()) {
    ShardMemberDesc member;
    member.source = m->source()->str();
    if (member.source.empty() || !isPrintableUtf8(member.source)) {
      error = "a shard member has an empty or unprintable name";
      return false;
    }
    if (!readShape(m->shape(), dtypeSize(d.dtype), member.shape, error)) {
      error = "shard member '" + member.source + "': " + error;
      return false;
    }
    member.elements = numElements(member.shape);
    total += member.elements;
    if (total > kMaxBytes) {
      error = "the shard's members are too large";
      return false;
    }
    d.shard.push_back(std::move(member));
  }
  int64_t n = plan.rankCount;
  if (d.shape.size() != 1 || d.shape[0] != (total + n - 1) / n) {
    error = "a piece of " + std::to_string(total) + " elements over " +
            std::to_string(n) + " ranks has " +
            std::to_string((total + n - 1) / n) +
            " elements in one dimension, but the persistent's shape is not that";
    return false;
  }
  return true;
}

bool PlanReader::readOperand(const mwplan::Operand &op, OperandDesc &out,
                             std::string &error) {
  if (!toDType(op.dtype(), out.dtype)) {
    error = "unknown dtype " + std::to_string(int(op.dtype()));
    return false;
  }
  const int64_t elemSize = static_cast<int64_t>(dtypeSize(out.dtype));
  if (!readShape(op.shape(), elemSize, out.shape, error))
    return false;
  size_t rank = out.shape.size();
  if (op.strides() && op.strides()->size() != 0) {
    if (!readVector(op.strides(), out.strides, "strides", error))
      return false;
    if (out.strides.size() != rank) {
      error = "has " + std::to_string(out.strides.size()) +
              " strides for shape " + shapeText(out.shape);
      return false;
    }
  } else {
    // No strides: row-major.
    out.strides.assign(rank, 1);
    for (size_t d = rank; d-- > 1;)
      out.strides[d - 1] = out.strides[d] * out.shape[d];
  }
  out.offset = op.offset();
  // Lowest and highest element the view addresses, relative to its base.
  bool empty = numElements(out.shape) == 0;
  Int128 lo = out.offset, hi = out.offset;
  for (size_t d = 0; d < rank && !empty; ++d) {
    Int128 span = static_cast<Int128>(out.shape[d] - 1) * out.strides[d];
    (span < 0 ? lo : hi) += span;
  }
  auto num = int128Text;
  switch (op.space()) {
  case mwplan::Space::Arena: {
    out.inArena = true;
    out.arenaOffset = op.arena_offset();
    if (out.arenaOffset % static_cast<uint64_t>(elemSize) != 0) {
      error = "arena offset " + std::to_string(out.arenaOffset) +
              " is not a multiple of the element size " +
              std::to_string(elemSize);
      return false;
    }
    out.buffer = op.buffer();
    if (out.buffer < -1 ||
        out.buffer >= static_cast<int>(plan.arenaBufferList.size())) {
      error = "arena buffer " + std::to_string(out.buffer) + " of " +
              std::to_string(plan.arenaBufferList.size()) + " does not exist";
      return false;
    }
    if (empty)
      return true;
    Int128 first = static_cast<Int128>(out.arenaOffset) + lo * elemSize;
    Int128 end = static_cast<Int128>(out.arenaOffset) + (hi + 1) * elemSize;
    if (first < 0 || end > static_cast<Int128>(plan.arenaBytes)) {
      error = "arena view at offset " + std::to_string(out.arenaOffset) +
              " covers bytes [" + num(first) + ", " + num(end) +
              "), outside the arena of " + std::to_string(plan.arenaBytes) +
              " bytes";
      return false;
    }
    if (out.buffer >= 0) {
      const ArenaBufferDesc &b = plan.arenaBufferList[out.buffer];
      if (first < static_cast<Int128>(b.offset) ||
          end > static_cast<Int128>(b.offset) + static_cast<Int128>(b.size)) {
        error = "arena view covers bytes [" + num(first) + ", " + num(end) +
                "), outside its buffer " + std::to_string(out.buffer) +
                " at [" + std::to_string(b.offset) + ", " +
                std::to_string(b.offset + b.size) + ")";
        return false;
      }
    }
    return true;
  }
  case mwplan::Space::Persistent: {
    out.inArena = false;
    out.persistent = op.persistent();
    int count = static_cast<int>(plan.persists.size());
    if (out.persistent < 0 || out.persistent >= count) {
      error = "persistent index " + std::to_string(out.persistent) +
              " out of range (the plan has " + std::to_string(count) +
              " persistents)";
      return false;
    }
    const PersistentDesc &p = plan.persists[out.persistent];
    if (p.dtype != out.dtype) {
      error = "has dtype " + std::string(dtypeName(out.dtype)) +
              " but persistent '" + p.name + "' is " + dtypeName(p.dtype);
      return false;
    }
    if (empty)
      return true;
    int64_t n = numElements(p.shape);
    if (lo < 0 || hi >= n) {
      error = "view covers elements [" + num(lo) + ", " + num(hi) +
              "] of persistent '" + p.name + "', which has " +
              std::to_string(n);
      return false;
    }
    return true;
  }
  }
  error = "unknown space " + std::to_string(int(op.space()));
  return false;
}

bool PlanReader::readAttr(const mwplan::Attr &a, KernelAttrs &attrs,
                          std::string &error) {
  std::string name = a.name()->str();
  if (name.empty()) {
    error = "an attribute has an empty name";
    return false;
  }
  if (!isPrintableUtf8(name)) {
    error = "attribute name '" + displayText(name) + "' is not printable UTF-8";
    return false;
  }
  if (attrs.find(name)) {
    error = "attribute '" + name + "' appears twice";
    return false;
  }
  switch (a.kind()) {
  case mwplan::AttrKind::Int:
    attrs.setInt(name, a.i());
    return true;
  case mwplan::AttrKind::Float:
    attrs.setFloat(name, a.f());
    return true;
  case mwplan::AttrKind::Bool:
    // The schema gives bools no field of their own: `i`, non-zero is true.
    attrs.setBool(name, a.i() != 0);
    return true;
  case mwplan::AttrKind::String:
    // Dense constants hold raw elements in `bytes`; other strings in `s`.
    if (a.bytes() && a.bytes()->size() != 0)
      attrs.setString(
          name, std::string(reinterpret_cast<const char *>(a.bytes()->data()),
                            a.bytes()->size()));
    else
      attrs.setString(name, a.s() ? a.s()->str() : std::string());
    return true;
  case mwplan::AttrKind::Ints: {
    std::vector<int64_t> ints;
    if (!readVector(a.ints(), ints, "ints", error))
      return false;
    attrs.setInts(name, std::move(ints));
    return true;
  }
  case mwplan::AttrKind::Floats: {
    std::vector<double> floats;
    if (!readVector(a.floats(), floats, "floats", error))
      return false;
    attrs.setFloats(name, std::move(floats));
    return true;
  }
  }
  error = "attribute '" + name + "' has unknown kind " +
          std::to_string(int(a.kind()));
  return false;
}

bool PlanReader::readProgram(const mwplan::FusedProgram &fp,
                             FusedProgramDesc &p, std::string &error) {
  if (fp.version() != kFusedProgramVersion) {
    error = "program version " + std::to_string(fp.version()) +
            ", this runtime reads " + std::to_string(kFusedProgramVersion);
    return false;
  }
  auto ref = [](const mwplan::ValueRef *r) {
    return FusedValueRef{r->instruction(), r->index()};
  };
  if (const auto *list = fp.instructions()) {
    p.instructions.resize(list->size());
    for (flatbuffers::uoffset_t i = 0; i < list->size(); ++i) {
      const mwplan::Instruction &fi = *list->Get(i);
      FusedInstructionDesc &in = p.instructions[i];
      std::string where = "instruction " + std::to_string(i) + ": ";
      std::string op = fi.op()->str();
      if (!parseOpKind(op, in.kind)) {
        error = where + "unknown op '" + displayText(op) + "'";
        return false;
      }
      if (fi.loc())
        in.loc = displayText(fi.loc()->str());
      if (const auto *attrs = fi.attrs())
        for (const mwplan::Attr *a : *attrs)
          if (!readAttr(*a, in.attrs, error)) {
            error = where + error;
            return false;
          }
      if (const auto *operands = fi.operands())
        for (const mwplan::ValueRef *r : *operands)
          in.operands.push_back(ref(r));
      if (const auto *dtypes = fi.result_dtypes())
        for (flatbuffers::uoffset_t r = 0; r < dtypes->size(); ++r) {
          DType t;
          if (!toDType(static_cast<mwplan::DType>(dtypes->Get(r)), t)) {
            error = where + "result #" + std::to_string(r) + " has unknown dtype";
            return false;
          }
          in.dtypes.push_back(t);
        }
      if (const auto *shapes = fi.result_shapes())
        for (flatbuffers::uoffset_t r = 0; r < shapes->size(); ++r) {
          std::vector<int64_t> shape;
          size_t size = r < in.dtypes.size() ? dtypeSize(in.dtypes[r]) : 1;
          if (!readShape(shapes->Get(r)->dims(), size, shape, error)) {
            error = where + "result #" + std::to_string(r) + ": " + error;
            return false;
          }
          in.shapes.push_back(std::move(shape));
        }
    }
  }
  if (const auto *yields = fp.yields())
    for (const mwplan::ValueRef *r : *yields)
      p.yields.push_back(ref(r));
  return true;
}

bool PlanReader::readKernel(size_t index, const mwplan::Kernel &k,
                            std::string &error) {
  KernelDesc &d = plan.kernelList[index];
  std::string op = k.op()->str();
  // The location only ever appears in messages.
  if (k.loc())
    d.loc = displayText(k.loc()->str());
  std::shared_ptr<FusedProgramDesc> program;
  std::string where;
  if (op == kFusionOpName) {
    // A fused kernel (docs/fusion.md): its program instead of an op.
    where = "kernel " + std::to_string(index) + " ('" + op + "'" +
            (d.loc.empty() ? "" : " at " + d.loc) + "): ";
    program = std::make_shared<FusedProgramDesc>();
    if (!k.program())
      error = "a fused kernel without its program";
    else if (k.attrs() && k.attrs()->size())
      error = "a fused kernel has no attributes of its own";
    if (!error.empty() || !readProgram(*k.program(), *program, error)) {
      error = where + error;
      return false;
    }
  } else {
    if (!parseOpKind(op, d.kind) || k.program()) {
      error = "kernel " + std::to_string(index) + ": " +
              (k.program() ? "op '" + displayText(op) +
                                 "' with a fused program (only 'mw.fusion' "
                                 "has one)"
                           : "unknown op '" + displayText(op) + "'") +
              (d.loc.empty() ? "" : " at " + d.loc);
      return false;
    }
    where = plan.describeKernel(index) + ": ";
    if (const auto *attrs = k.attrs())
      for (const mwplan::Attr *a : *attrs)
        if (!readAttr(*a, d.attrs, error)) {
          error = where + error;
          return false;
        }
  }
  auto operands = [&](const auto *list, std::vector<OperandDesc> &out,
                      const char *what) {
    if (!list)
      return true;
    out.resize(list->size());
    for (flatbuffers::uoffset_t i = 0; i < list->size(); ++i)
      if (!readOperand(*list->Get(i), out[i], error)) {
        error = where + what + std::to_string(i) + ": " + error;
        return false;
      }
    return true;
  };
  if (!operands(k.ins(), d.ins, "operand #") ||
      !operands(k.outs(), d.outs, "result #"))
    return false;
  // Offloaded weights (docs/offload.md): only a fetch reads one, and a fetch
  // copies one into device memory.
  auto offloaded = [&](const OperandDesc &o) -> const PersistentDesc * {
    if (o.inArena || o.persistent < 0 ||
        o.persistent >= static_cast<int>(plan.persists.size()))
      return nullptr;
    const PersistentDesc &p = plan.persists[o.persistent];
    return p.placement == Placement::Device ? nullptr : &p;
  };
  if (!program && d.kind == OpKind::Fetch) {
    if (d.ins.size() != 1 || !offloaded(d.ins[0])) {
      error = where + "an mw.fetch whose input is not an offloaded (Host or "
                      "File) persistent";
      return false;
    }
    for (const OperandDesc &o : d.outs)
      if (const PersistentDesc *p = offloaded(o)) {
        error = where + "an mw.fetch writes '" + p->name +
                "', which is offloaded: a fetch writes device memory";
        return false;
      }
  } else {
    for (const auto *list : {&d.ins, &d.outs})
      for (const OperandDesc &o : *list)
        if (const PersistentDesc *p = offloaded(o)) {
          error = where + "reads '" + p->name + "', which is offloaded (" +
                  (p->placement == Placement::Host ? "Host" : "File") +
                  "): only an mw.fetch may read it";
          return false;
        }
  }
  if (!program)
    return true;
  if (!detail::analyzeFusedProgram(*program, d.ins, d.outs, error)) {
    error = where + error;
    return false;
  }
  d.program = std::move(program);
  return true;
}

bool PlanReader::readResults(std::string &error) {
  const auto *list = fb.results();
  if (!list)
    return true;
  plan.resultList.resize(list->size());
  std::map<std::string, size_t, std::less<>> names;
  for (flatbuffers::uoffset_t i = 0; i < list->size(); ++i) {
    const mwplan::Result &r = *list->Get(i);
    ResultDesc &d = plan.resultList[i];
    d.name = r.name()->str();
    if (d.name.empty() || !isPrintableUtf8(d.name)) {
      error = "result " + std::to_string(i) + " has " +
              (d.name.empty() ? "an empty name"
                              : "a name that is not printable UTF-8: '" +
                                    displayText(d.name) + "'");
      return false;
    }
    std::string where = "result " + std::to_string(i) + " ('" + d.name + "'): ";
    if (!names.emplace(d.name, i).second) {
      error = where + "another result has the same name";
      return false;
    }
    if (!toRole(r.role(), d.role)) {
      error = where + "unknown role " + std::to_string(int(r.role()));
      return false;
    }
    if (!readOperand(*r.value(), d.value, error)) {
      error = where + error;
      return false;
    }
    // A result named like a parameter or optimizer state is its next value:
    // it is copied over that persistent after each step.
    int p = plan.findPersistent(d.name);
    if (p >= 0 && (plan.persists[p].role == Role::Param ||
                   plan.persists[p].role == Role::OptimizerState ||
                   plan.persists[p].role == Role::KvCache)) {
      const PersistentDesc &pd = plan.persists[p];
      if (pd.argument >= 0 && d.role != pd.role) {
        error = where + "it updates " + roleName(pd.role) + " '" + pd.name +
                "' but its role is " + roleName(d.role);
        return false;
      }
      if (pd.dtype != d.value.dtype || pd.shape != d.value.shape) {
        error = where + "its value is " + dtypeName(d.value.dtype) + " " +
                shapeText(d.value.shape) + " but it updates persistent '" +
                pd.name + "', which is " + dtypeName(pd.dtype) + " " +
                shapeText(pd.shape);
        return false;
      }
    }
  }
  auto isScalarFloat = [](const OperandDesc &v) {
    return (v.dtype == DType::F32 || v.dtype == DType::F16 ||
            v.dtype == DType::BF16) &&
           numElements(v.shape) == 1;
  };
  int loss = plan.findResult("loss");
  if (loss >= 0 && !isScalarFloat(plan.resultList[loss].value))
    loss = -1;
  for (size_t i = 0; i < plan.resultList.size() && loss < 0; ++i)
    if (plan.resultList[i].role == Role::Output &&
        isScalarFloat(plan.resultList[i].value))
      loss = static_cast<int>(i);
  plan.lossIndex = loss;
  return checkWriteBacks(error) && checkArenaLiveness(error);
}

bool PlanReader::checkArenaLiveness(std::string &error) {
  // A buffer lives from the first kernel that uses it to the last (to the
  // step's end when a result is in it). Two that live at the same kernel
  // must not share a byte: the static arena's invariant, checked here from
  // the plan alone (--mw-verify-plan checks it in the compiler).
  const size_t n = plan.arenaBufferList.size();
  if (n == 0)
    return true;
  const int64_t end = static_cast<int64_t>(plan.kernelList.size());
  std::vector<int64_t> first(n, -1), last(n, -1);
  auto use = [&](const OperandDesc &o, int64_t at) {
    if (!o.inArena || o.buffer < 0)
      return;
    if (first[o.buffer] < 0)
      first[o.buffer] = at;
    last[o.buffer] = std::max(last[o.buffer], at);
  };
  for (size_t k = 0; k < plan.kernelList.size(); ++k) {
    for (const OperandDesc &o : plan.kernelList[k].ins)
      use(o, static_cast<int64_t>(k));
    for (const OperandDesc &o : plan.kernelList[k].outs)
      use(o, static_cast<int64_t>(k));
  }
  for (const ResultDesc &r : plan.resultList)
    use(r.value, end);
  // Sweep over time; the live buffers, by offset, never overlap (else the
  // first overlap is the error), so a new one need only be checked against
  // its neighbours there.
  std::vector<size_t> order;
  for (size_t b = 0; b < n; ++b)
    if (first[b] >= 0 && plan.arenaBufferList[b].size > 0)
      order.push_back(b);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return first[a] != first[b] ? first[a] < first[b] : a < b;
  });
  std::map<uint64_t, size_t> live; // offset -> buffer
  std::multimap<int64_t, size_t> ends;
  for (size_t b : order) {
    // Buffers whose last use is before this one's first are dead.
    while (!ends.empty() && ends.begin()->first < first[b]) {
      size_t dead = ends.begin()->second;
      live.erase(plan.arenaBufferList[dead].offset);
      ends.erase(ends.begin());
    }
    const ArenaBufferDesc &mine = plan.arenaBufferList[b];
    auto clash = [&](size_t other) {
      const ArenaBufferDesc &o = plan.arenaBufferList[other];
      error = "arena buffers " + std::to_string(other) + " at [" +
              std::to_string(o.offset) + ", " + std::to_string(o.offset + o.size) +
              ") (kernels " + std::to_string(first[other]) + "-" +
              std::to_string(last[other]) + ") and " + std::to_string(b) +
              " at [" + std::to_string(mine.offset) + ", " +
              std::to_string(mine.offset + mine.size) + ") (kernels " +
              std::to_string(first[b]) + "-" + std::to_string(last[b]) +
              ") share bytes while both are live";
      return false;
    };
    auto next = live.lower_bound(mine.offset);
    if (next != live.end() && next->first < mine.offset + mine.size)
      return clash(next->second);
    if (next != live.begin()) {
      auto prev = std::prev(next);
      const ArenaBufferDesc &p = plan.arenaBufferList[prev->second];
      if (p.offset + p.size > mine.offset)
        return clash(prev->second);
    }
    live.emplace(mine.offset, b);
    ends.emplace(last[b], b);
  }
  return true;
}

bool PlanReader::checkWriteBacks(std::string &error) {
  // A result with the role of a parameter or optimizer state is the next
  // value of the argument of its name, which the session copies over it
  // after each step (a kernel that updates one in place keeps its update in
  // the persistent anyway). One that names no such argument would drop the
  // update silently: a renamed or corrupted result.
  for (size_t r = 0; r < plan.resultList.size(); ++r) {
    const ResultDesc &d = plan.resultList[r];
    if (d.role != Role::Param && d.role != Role::OptimizerState &&
        d.role != Role::KvCache)
      continue;
    int p = plan.findPersistent(d.name);
    if (p >= 0 && plan.persists[p].argument >= 0 &&
        plan.persists[p].role == d.role)
      continue;
    error = "result " + std::to_string(r) + " ('" + d.name + "') is the next " +
            "value of a " + roleName(d.role) + ", but no " +
            roleName(d.role) + " argument is named '" + d.name +
            "': the update would be lost";
    return false;
  }
  // An optimizer kernel's new values (mw.adamw, mw.sgd: parameters and
  // their moments) must outlive the step: written into a param or
  // optimizer-state persistent (in place), or into the arena where a later
  // kernel reads them or a result returns them. An out moved anywhere else
  // (a corrupted operand kind or offset) would drop the update silently.
  auto sameArenaRange = [](const OperandDesc &a, const OperandDesc &b) {
    return a.inArena && b.inArena && a.arenaOffset == b.arenaOffset &&
           a.offset == b.offset;
  };
  const std::vector<KernelDesc> &kernels = plan.kernelList;
  for (size_t k = 0; k < kernels.size(); ++k) {
    if (kernels[k].kind != OpKind::AdamW && kernels[k].kind != OpKind::Sgd)
      continue;
    for (size_t o = 0; o < kernels[k].outs.size(); ++o) {
      const OperandDesc &out = kernels[k].outs[o];
      bool kept = false;
      if (!out.inArena) {
        const PersistentDesc &p = plan.persists[out.persistent];
        kept = p.role == Role::Param || p.role == Role::OptimizerState;
        // Or a result the step allocates and returns, updated in place (the
        // kernel reads the same persistent): the caller reads the update.
        if (!kept && p.argument < 0) {
          bool inPlace = false, returned = false, laterWrite = false;
          for (const OperandDesc &in : kernels[k].ins)
            inPlace |= !in.inArena && in.persistent == out.persistent;
          for (const ResultDesc &d : plan.resultList)
            returned |= !d.value.inArena && d.value.persistent == out.persistent;
          for (size_t later = k + 1; later < kernels.size(); ++later)
            for (const OperandDesc &w : kernels[later].outs)
              laterWrite |= !w.inArena && w.persistent == out.persistent;
          kept = inPlace && returned && !laterWrite;
        }
      } else {
        for (size_t later = k + 1; later < kernels.size() && !kept; ++later)
          for (const OperandDesc &in : kernels[later].ins)
            kept |= sameArenaRange(in, out);
        for (const ResultDesc &d : plan.resultList)
          kept |= sameArenaRange(d.value, out);
      }
      if (kept)
        continue;
      error = plan.describeKernel(k) + ": out " + std::to_string(o) +
              " (a new " + (o == 0 ? "parameter" : "optimizer state") +
              ") goes " +
              (out.inArena ? "to the arena at byte " +
                                 std::to_string(out.arenaOffset) +
                                 ", which no later kernel reads and no "
                                 "result returns"
                           : "to persistent '" +
                                 plan.persists[out.persistent].name +
                                 "', which holds no param or optimizer "
                                 "state") +
              ": the update would be lost";
      return false;
    }
  }
  return true;
}

} // namespace mwrt

int Plan::findPersistent(std::string_view name) const {
  for (size_t i = 0; i < persists.size(); ++i)
    if (persists[i].name == name)
      return static_cast<int>(i);
  return -1;
}

int Plan::findResult(std::string_view name) const {
  for (size_t i = 0; i < resultList.size(); ++i)
    if (resultList[i].name == name)
      return static_cast<int>(i);
  return -1;
}

std::string Plan::describeKernel(size_t index) const {
  std::string s = "kernel " + std::to_string(index);
  if (index >= kernelList.size())
    return s;
  const KernelDesc &k = kernelList[index];
  s += std::string(" ('") + (k.program ? kFusionOpName : opKindName(k.kind)) +
       "'";
  if (!k.loc.empty())
    s += " at " + k.loc;
  return s + ")";
}

mwrt_status Plan::parse(const void *data, size_t size,
                        std::shared_ptr<const Plan> &out,
                        const std::string &source) {
  auto fail = [&](const std::string &message) {
    return setError(MWRT_INVALID_ARGUMENT, source + ": " + message);
  };
  const auto *bytes = static_cast<const uint8_t *>(data);
  // FlatBuffers aligns scalars relative to the buffer's start; reading them
  // needs the start itself 8-aligned, so copy a buffer that is not.
  std::vector<uint64_t> aligned;
  if (reinterpret_cast<uintptr_t>(bytes) % alignof(uint64_t) != 0) {
    aligned.resize((size + 7) / 8);
    std::memcpy(aligned.data(), bytes, size);
    bytes = reinterpret_cast<const uint8_t *>(aligned.data());
  }
  // The checksum trailer (mwrt/plan.h): required in files (load), checked
  // wherever it is present.
  if (bytes && size >= kPlanTrailerSize + 8 &&
      std::memcmp(bytes + size - kPlanTrailerSize, kPlanChecksumMagic,
                  sizeof kPlanChecksumMagic) == 0) {
    uint64_t stored = 0;
    for (size_t i = 0; i < 8; ++i)
      stored |= uint64_t(bytes[size - 8 + i]) << (8 * i);
    size -= kPlanTrailerSize;
    if (planChecksum(bytes, size) != stored)
      return fail("checksum mismatch: the plan's bytes changed after "
                  "mw-translate wrote them (corrupt file); recompile it");
  }
    // A FlatBuffer starts with the root offset and the 4-byte identifier.
  if (!bytes || size < 8)
    return fail("truncated: " + std::to_string(size) +
                " bytes, not a .mwplan file");
  if (!mwplan::PlanBufferHasIdentifier(bytes)) {
    std::string id;
    for (int i = 4; i < 8; ++i) {
      char c = static_cast<char>(bytes[i]);
      id += (c >= 32 && c < 127) ? std::string(1, c) : "\\x" + [&] {
        char hex[3];
        std::snprintf(hex, sizeof hex, "%02x", bytes[i]);
        return std::string(hex);
      }();
    }
    return fail("not a .mwplan file (identifier '" + id + "', expected '" +
                mwplan::PlanIdentifier() + "')");
  }
  // max_tables: every table takes at least 4 bytes, so the file's size
  // bounds it; the default (10^6) would reject large models' plans.
  flatbuffers::Verifier verifier(
      bytes, size, /*max_depth=*/64,
      static_cast<flatbuffers::uoffset_t>(
          std::min<size_t>(size / 4 + 16, 0x7fffffff)));
  if (!mwplan::VerifyPlanBuffer(verifier))
    return fail("corrupt or truncated plan (" + std::to_string(size) +
                " bytes fail FlatBuffers verification)");
  const mwplan::Plan *fb = mwplan::GetPlan(bytes);
  if (fb->version() != kMwPlanVersion)
    return fail("plan version " + std::to_string(fb->version()) +
                ", this runtime reads " + std::to_string(kMwPlanVersion));
  auto plan = std::make_shared<Plan>();
  plan->sourceName = source;
  PlanReader reader(*plan, *fb);
  std::string error;
  if (!reader.read(error))
    return fail(error);
  out = std::move(plan);
  return MWRT_OK;
}

mwrt_status Plan::load(const std::string &path,
                       std::shared_ptr<const Plan> &out) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return setError(errno == ENOENT ? MWRT_NOT_FOUND : MWRT_INVALID_ARGUMENT,
                    path + ": cannot open: " + std::strerror(errno));
  std::vector<uint8_t> bytes;
  uint8_t chunk[1 << 16];
  size_t got;
  while ((got = std::fread(chunk, 1, sizeof chunk, f)) > 0)
    bytes.insert(bytes.end(), chunk, chunk + got);
  bool readError = std::ferror(f);
  int err = errno;
  std::fclose(f);
  if (readError)
    return setError(MWRT_INVALID_ARGUMENT,
                    path + ": cannot read: " + std::strerror(err));
  // A file must carry the checksum trailer (mwrt/plan.h).
  auto fail = [&](const std::string &why) {
    return setError(MWRT_INVALID_ARGUMENT, path + ": " + why);
  };
  // (Checked after the identifier: a file that is no plan at all is told
  // so by parse.)
  if ((bytes.size() < kPlanTrailerSize ||
       std::memcmp(bytes.data() + bytes.size() - kPlanTrailerSize,
                   kPlanChecksumMagic, sizeof kPlanChecksumMagic) != 0) &&
      bytes.size() >= 8 && mwplan::PlanBufferHasIdentifier(bytes.data()))
    return fail("no checksum trailer: not a plan written by mw-translate "
                "--mw-to-plan (version " + std::to_string(kMwPlanVersion) +
                "), or a truncated one");
  return parse(bytes.data(), bytes.size(), out, path);
}
