//===- communicator.cpp - What every communicator shares ------------------===//
//
// The single-process communicator, the choice of engine for a session, and
// the helpers the multi-rank engines share: pieces of a tensor along an
// axis, the checks of a collective's shapes, and the deterministic reduction
// of the ranks' blocks.
//
// Rank 0 of a group of one: with one rank every collective of a ZeRO step is
// the identity on its tensor (the sum over one rank, the only slice, the
// gather of one piece), which the backends' one-rank kernels compute as a
// copy into the collective's own buffer; so this communicator hands the
// kernel back to the backend.
//
//===----------------------------------------------------------------------===//

#include "comm/communicator.h"

#include "mwrt/formulas.h"
#include "status.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

using namespace mwrt;
using namespace mwrt::detail;

Communicator::~Communicator() = default;

const char *mwrt::collectiveKindName(int index) {
  static const char *const names[] = {"all_reduce", "reduce_scatter",
                                      "all_gather", "all_slice"};
  return index >= 0 && index < 4 ? names[index] : "?";
}

bool detail::isCollective(OpKind kind) { return collectiveIndex(kind) >= 0; }

int detail::collectiveIndex(OpKind kind) {
  switch (kind) {
  case OpKind::MeshAllReduce:
    return 0;
  case OpKind::MeshReduceScatter:
    return 1;
  case OpKind::MeshAllGather:
    return 2;
  case OpKind::MeshAllSlice:
    return 3;
  default:
    return -1;
  }
}

void Communicator::countPayload(const BoundKernel &k) {
  const TensorRef &payload =
      k.kind == OpKind::MeshAllGather ? k.outs[0] : k.ins[0];
  auto elements = k.kind == OpKind::MeshAllSlice
                      ? 0
                      : static_cast<uint64_t>(payload.numElements());
  uint64_t esz = dtypeSize(payload.dtype);
  uint64_t n = static_cast<uint64_t>(size()), sent = 0;
  switch (k.kind) {
  case OpKind::MeshAllReduce:
    sent = 2 * (n - 1) * ((elements + n - 1) / n) * esz;
    break;
  case OpKind::MeshReduceScatter:
  case OpKind::MeshAllGather:
    sent = (n - 1) * (elements / n) * esz;
    break;
  default:
    break;
  }
  CommStats::Kind &c = counters.kinds[collectiveIndex(k.kind)];
  ++c.count;
  c.elements += elements;
  c.bytes += elements * esz;
  c.sentBytes += sent;
}

namespace {
class SingleProcessCommunicator final : public Communicator {
public:
  const char *name() const override { return "single-process"; }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  mwrt_status run(const BoundKernel &kernel, Backend &backend,
                  bool) override {
    if (mwrt_status st = backend.run(kernel))
      return st;
    countPayload(kernel); // nothing is sent on a group of one
    return MWRT_OK;
  }
};
} // namespace

std::unique_ptr<Communicator> detail::createSingleProcessCommunicator() {
  return std::make_unique<SingleProcessCommunicator>();
}

#if MWRT_HAVE_MPI
namespace mwrt::detail {
std::unique_ptr<Communicator> createMpiCommunicator(double timeoutSeconds);
} // namespace mwrt::detail
#endif
#if MWRT_HAVE_NCCL
namespace mwrt::detail {
mwrt_status createNcclCommunicator(const SessionOptions &options,
                                   std::unique_ptr<Communicator> &comm);
} // namespace mwrt::detail
#endif

mwrt_status detail::createCommunicator(std::string_view device,
                                       const SessionOptions &options,
                                       std::unique_ptr<Communicator> &comm) {
  const ProcessGroup &group = processGroup();
  // A CPU group of one needs no engine: every collective is a copy. (CUDA
  // keeps NCCL even then, so that one GPU can test the NCCL path.)
  if (group.engine != "mpi" || (group.size == 1 && device != "cuda")) {
    comm = createSingleProcessCommunicator();
    return MWRT_OK;
  }
  if (device == "cuda") {
#if MWRT_HAVE_NCCL
    return createNcclCommunicator(options, comm);
#else
    return setError(MWRT_UNAVAILABLE,
                    "CUDA ranks need NCCL, which this build does not have "
                    "(rebuild with the CUDA toolkit's NCCL, or run the ranks "
                    "with --device cpu)");
#endif
  }
#if MWRT_HAVE_MPI
  comm = createMpiCommunicator(options.commTimeoutSeconds);
  return MWRT_OK;
#else
  (void)options;
  return setError(MWRT_UNAVAILABLE, "this build has no MPI");
#endif
}

mwrt_status detail::checkRanks(uint32_t ranks, const Communicator &comm) {
  if (ranks == static_cast<uint32_t>(comm.size()))
    return MWRT_OK;
  if (comm.size() == 1)
    return setError(MWRT_UNAVAILABLE,
                    "the plan was compiled for " + std::to_string(ranks) +
                        " ranks; start it with " + std::to_string(ranks) +
                        " processes (mpirun -np " + std::to_string(ranks) +
                        " mw-run ...)" +
                        (mpiAvailable() ? ""
                                        : "; this build has no MPI, which "
                                          "multi-rank runs need"));
  return setError(MWRT_UNAVAILABLE,
                  "the plan was compiled for " + std::to_string(ranks) +
                      " ranks but runs on " + std::to_string(comm.size()) +
                      " (" + comm.name() +
                      "); recompile it with --mw-zero=\"ranks=" +
                      std::to_string(comm.size()) + " ...\" or start " +
                      std::to_string(ranks) + " processes");
}

static std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

TensorRef detail::pieceOf(const TensorRef &t, int64_t axis, int64_t index,
                          int64_t count) {
  std::vector<int64_t> strides =
      t.strides.empty() ? rowMajorStrides(t.shape) : t.strides;
  TensorRef piece(t.dtype, t.shape, t.data, strides);
  int64_t size = t.shape[axis] / count;
  piece.shape[axis] = size;
  if (t.data)
    piece.data = static_cast<uint8_t *>(t.data) +
                 index * size * strides[axis] *
                     static_cast<int64_t>(dtypeSize(t.dtype));
  return piece;
}

bool detail::piecesAreConsecutive(const TensorRef &t, int64_t axis) {
  if (!t.isContiguous())
    return false;
  for (int64_t d = 0; d < axis; ++d)
    if (t.shape[d] != 1)
      return false;
  return true;
}

namespace {
float loadFloat(DType dtype, const uint8_t *p, int64_t i) {
  switch (dtype) {
  case DType::F32: {
    float f;
    std::memcpy(&f, p + i * 4, 4);
    return f;
  }
  case DType::F16: {
    uint16_t h;
    std::memcpy(&h, p + i * 2, 2);
    return formulas::halfBitsToFloat(h);
  }
  default: {
    uint16_t h;
    std::memcpy(&h, p + i * 2, 2);
    return formulas::bfloatBitsToFloat(h);
  }
  }
}

void storeFloat(DType dtype, uint8_t *p, int64_t i, float v) {
  switch (dtype) {
  case DType::F32:
    std::memcpy(p + i * 4, &v, 4);
    return;
  case DType::F16: {
    uint16_t h = formulas::floatToHalfBits(v);
    std::memcpy(p + i * 2, &h, 2);
    return;
  }
  default: {
    uint16_t h = formulas::floatToBFloatBits(v);
    std::memcpy(p + i * 2, &h, 2);
    return;
  }
  }
}

int64_t loadInt(DType dtype, const uint8_t *p, int64_t i) {
  if (dtype == DType::I32) {
    int32_t v;
    std::memcpy(&v, p + i * 4, 4);
    return v;
  }
  int64_t v;
  std::memcpy(&v, p + i * 8, 8);
  return v;
}

void storeInt(DType dtype, uint8_t *p, int64_t i, int64_t v) {
  if (dtype == DType::I32) {
    auto w = static_cast<int32_t>(static_cast<uint32_t>(v));
    std::memcpy(p + i * 4, &w, 4);
    return;
  }
  std::memcpy(p + i * 8, &v, 8);
}
} // namespace

mwrt_status detail::reduceBlocks(const std::string &reduction, DType dtype,
                                 const void *blocks, int64_t count,
                                 int64_t elements, void *dst) {
  const auto *in = static_cast<const uint8_t *>(blocks);
  auto *out = static_cast<uint8_t *>(dst);
  size_t esz = dtypeSize(dtype);
  bool isFloat =
      dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16;
  bool isInt = dtype == DType::I32 || dtype == DType::I64;
  bool known = reduction == "sum" || reduction == "max" ||
               reduction == "min" || reduction == "product" ||
               (isFloat && reduction == "average");
  if ((!isFloat && !isInt) || !known)
    return setError(MWRT_INVALID_ARGUMENT,
                    "reduction '" + reduction + "' of " + dtypeName(dtype) +
                        " is not supported across ranks (sum, max, min, "
                        "product, and average on floats)");
  const uint64_t blockBytes = static_cast<uint64_t>(elements) * esz;
  for (int64_t i = 0; i < elements; ++i) {
    if (isFloat) {
      float a = loadFloat(dtype, in, i);
      for (int64_t r = 1; r < count; ++r) {
        float x = loadFloat(dtype, in + r * blockBytes, i);
        if (reduction == "max" || reduction == "min")
          a = (std::isnan(a) || std::isnan(x)) ? NAN
              : reduction == "max"             ? std::max(a, x)
                                               : std::min(a, x);
        else if (reduction == "product")
          a = a * x;
        else
          a = a + x;
      }
      if (reduction == "average")
        a /= static_cast<float>(count);
      storeFloat(dtype, out, i, a);
      continue;
    }
    int64_t a = loadInt(dtype, in, i);
    for (int64_t r = 1; r < count; ++r) {
      int64_t x = loadInt(dtype, in + r * blockBytes, i);
      auto ua = static_cast<uint64_t>(a), ux = static_cast<uint64_t>(x);
      if (reduction == "max")
        a = std::max(a, x);
      else if (reduction == "min")
        a = std::min(a, x);
      else if (reduction == "product")
        a = static_cast<int64_t>(ua * ux);
      else
        a = static_cast<int64_t>(ua + ux);
    }
    storeInt(dtype, out, i, a);
  }
  return MWRT_OK;
}

mwrt_status detail::checkCollective(const BoundKernel &kernel, int64_t ranks,
                                    std::string &reduction, int64_t &axis) {
  if (kernel.ins.size() != 1 || kernel.outs.size() != 1)
    return setError(MWRT_INVALID_ARGUMENT,
                    "a collective takes one operand and one result");
  const TensorRef &in = kernel.ins[0], &out = kernel.outs[0];
  reduction = "sum";
  if (const AttrValue *v = kernel.attrs ? kernel.attrs->find("reduction")
                                        : nullptr;
      v && std::holds_alternative<std::string>(*v))
    reduction = std::get<std::string>(*v);
  const char *axisName = kernel.kind == OpKind::MeshReduceScatter
                             ? "scatter_axis"
                         : kernel.kind == OpKind::MeshAllGather ? "gather_axis"
                         : kernel.kind == OpKind::MeshAllSlice  ? "slice_axis"
                                                                : nullptr;
  axis = 0;
  if (in.dtype != out.dtype)
    return setError(MWRT_INVALID_ARGUMENT,
                    "the result's element type differs from the operand's");
  if (!axisName) {
    if (in.shape != out.shape)
      return setError(MWRT_INVALID_ARGUMENT,
                      "an all_reduce's result must have its operand's shape");
    return MWRT_OK;
  }
  if (const AttrValue *v = kernel.attrs ? kernel.attrs->find(axisName)
                                        : nullptr;
      v && std::holds_alternative<int64_t>(*v))
    axis = std::get<int64_t>(*v);
  // all_gather: the result is the big one; otherwise the operand.
  const TensorRef &big = kernel.kind == OpKind::MeshAllGather ? out : in;
  const TensorRef &small = kernel.kind == OpKind::MeshAllGather ? in : out;
  if (axis < 0 || axis >= static_cast<int64_t>(big.shape.size()) ||
      big.shape.size() != small.shape.size())
    return setError(MWRT_INVALID_ARGUMENT,
                    std::string(axisName) + " " + std::to_string(axis) +
                        " is out of range for rank " +
                        std::to_string(big.shape.size()));
  for (size_t d = 0; d < big.shape.size(); ++d) {
    bool ok = static_cast<int64_t>(d) == axis
                  ? big.shape[d] == small.shape[d] * ranks
                  : big.shape[d] == small.shape[d];
    if (!ok)
      return setError(MWRT_INVALID_ARGUMENT,
                      "on " + std::to_string(ranks) +
                          " ranks, the operand and result shapes must differ "
                          "by a factor " +
                          std::to_string(ranks) + " along axis " +
                          std::to_string(axis));
  }
  return MWRT_OK;
}
