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

#include "cpu/support.h"
#include "status.h"

#include <algorithm>

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
  // torchrun's ranks are CUDA ranks over NCCL (checkGroup refused the
  // others).
  const bool ranked = group.engine == "mpi" ||
                      (group.engine == "torchrun" && device == "cuda");
  if (!ranked || (group.size == 1 && device != "cuda")) {
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

mwrt_status detail::checkGroup(std::string_view device, uint32_t ranks) {
  const ProcessGroup &group = processGroup();
  if (group.engine != "torchrun")
    return MWRT_OK;
  if (device != "cuda" && group.size > 1)
    return setError(
        MWRT_UNAVAILABLE,
        "CPU ranks run over Open MPI, which cannot join processes that it "
        "did not start, and this process has torchrun's environment (" +
            group.environment +
            ") and no MPI launcher's; start the CPU ranks with mpirun -np " +
            std::to_string(group.size) +
            " mw-run ..., or run CUDA ranks (--device cuda), which torchrun "
            "can start (NCCL bootstraps at " + group.bootstrap + ")");
  // Before NCCL's bootstrap, which would wait for ranks that never come.
  if (ranks != static_cast<uint32_t>(group.size))
    return setError(MWRT_UNAVAILABLE,
                    "the plan was compiled for " + std::to_string(ranks) +
                        " ranks but runs on " + std::to_string(group.size) +
                        " (torchrun: " + group.environment +
                        "); recompile it with --mw-zero=\"ranks=" +
                        std::to_string(group.size) + " ...\" or start " +
                        std::to_string(ranks) + " processes");
  return MWRT_OK;
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

TensorRef detail::pieceOf(const TensorRef &t, int64_t axis, int64_t index,
                          int64_t count) {
  std::vector<int64_t> strides = cpu::stridesOf(t);
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

mwrt_status detail::reduceBlocks(const std::string &reduction, DType dtype,
                                 const void *blocks, int64_t count,
                                 int64_t elements, void *dst) {
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
  const auto *in = static_cast<const uint8_t *>(blocks);
  const size_t blockBytes = static_cast<size_t>(elements) * dtypeSize(dtype);
  auto block = [&](int64_t r) {
    return TensorRef(dtype, {elements}, in + r * blockBytes);
  };
  TensorRef out(dtype, {elements}, dst);
  // The CPU kernels' dense views: floats as f32, rounded to the dtype once
  // on commit, integers as int64, wrapped on commit (the evaluator's
  // arithmetic, in rank order from block 0).
  if (isFloat) {
    cpu::FloatDst acc(out);
    cpu::FloatSrc first(block(0));
    std::copy_n(first.data(), elements, acc.data());
    for (int64_t r = 1; r < count; ++r) {
      cpu::FloatSrc x(block(r));
      for (int64_t i = 0; i < elements; ++i) {
        float &a = acc[i];
        if (reduction == "max" || reduction == "min")
          a = (std::isnan(a) || std::isnan(x[i])) ? NAN
              : reduction == "max"                ? std::max(a, x[i])
                                                  : std::min(a, x[i]);
        else if (reduction == "product")
          a = a * x[i];
        else
          a = a + x[i];
      }
    }
    if (reduction == "average")
      for (int64_t i = 0; i < elements; ++i)
        acc[i] /= static_cast<float>(count);
    acc.commit();
    return MWRT_OK;
  }
  cpu::IntDst acc(out);
  cpu::IntSrc first(block(0));
  std::copy_n(first.data(), elements, acc.data());
  for (int64_t r = 1; r < count; ++r) {
    cpu::IntSrc x(block(r));
    for (int64_t i = 0; i < elements; ++i) {
      int64_t &a = acc[i];
      auto ua = static_cast<uint64_t>(a), ux = static_cast<uint64_t>(x[i]);
      if (reduction == "max")
        a = std::max(a, x[i]);
      else if (reduction == "min")
        a = std::min(a, x[i]);
      else if (reduction == "product")
        a = static_cast<int64_t>(ua * ux);
      else
        a = static_cast<int64_t>(ua + ux);
    }
  }
  acc.commit();
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
