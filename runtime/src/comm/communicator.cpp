//===- communicator.cpp - The single-process communicator -----------------===//
//
// Rank 0 of a group of one. With one rank every collective of a ZeRO step is
// the identity on its tensor (the sum over one rank, the only slice, the
// gather of one piece), which the backends' one-rank kernels compute as a
// copy into the collective's own buffer; so this communicator hands the
// kernel back to the backend. A plan compiled for more ranks is refused
// before anything is allocated.
//
//===----------------------------------------------------------------------===//

#include "comm/communicator.h"

#include "status.h"

#include <string>

using namespace mwrt;
using namespace mwrt::detail;

Communicator::~Communicator() = default;

bool detail::isCollective(OpKind kind) {
  switch (kind) {
  case OpKind::MeshAllReduce:
  case OpKind::MeshReduceScatter:
  case OpKind::MeshAllGather:
  case OpKind::MeshAllSlice:
    return true;
  default:
    return false;
  }
}

namespace {
class SingleProcessCommunicator final : public Communicator {
public:
  const char *name() const override { return "single-process"; }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  mwrt_status run(const BoundKernel &kernel, Backend &backend) override {
    return backend.run(kernel);
  }
};
} // namespace

std::unique_ptr<Communicator> detail::createSingleProcessCommunicator() {
  return std::make_unique<SingleProcessCommunicator>();
}

mwrt_status detail::checkRanks(uint32_t ranks, const Communicator &comm) {
  if (ranks == static_cast<uint32_t>(comm.size()))
    return MWRT_OK;
  if (comm.size() == 1)
    return setError(MWRT_UNAVAILABLE,
                    "the plan was compiled for " + std::to_string(ranks) +
                        " ranks; multi-rank execution (MPI/NCCL) is not "
                        "built yet");
  return setError(MWRT_UNAVAILABLE,
                  "the plan was compiled for " + std::to_string(ranks) +
                      " ranks but runs on " + std::to_string(comm.size()) +
                      " (" + comm.name() + ")");
}
