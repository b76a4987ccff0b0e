//===- communicator.h - The ranks of an SPMD plan ---------------*- C++ -*-===//
//
// Private to the runtime. A plan that --mw-zero compiled for N ranks runs as
// N processes, one per rank, each executing the same kernels on its own
// shard; the collectives (mesh.all_reduce, mesh.reduce_scatter,
// mesh.all_gather, mesh.all_slice) are where they meet. A Communicator is one
// process's view of that group: its rank, the group's size, and the
// collectives. The executor hands every collective kernel to it and every
// other kernel to the backend, so the MPI (CPU ranks) and NCCL (GPU ranks)
// implementations of DESIGN.md decision 9 slot in here without touching the
// backends or the executor. This build has only the single-process
// communicator: one rank, where each collective is its one-rank kernel in the
// backend (a copy, exact).
//
//===----------------------------------------------------------------------===//

#ifndef MWRT_SRC_COMM_COMMUNICATOR_H
#define MWRT_SRC_COMM_COMMUNICATOR_H

#include "executor.h"

#include <cstdint>
#include <memory>

namespace mwrt::detail {

/// Whether `kind` is a collective (a mesh op of the op table).
bool isCollective(OpKind kind);

class Communicator {
public:
  virtual ~Communicator();
  /// "single-process"; later "mpi", "nccl".
  virtual const char *name() const = 0;
  virtual int rank() const = 0;
  /// The number of ranks in the group.
  virtual int size() const = 0;
  /// Runs collective `kernel` (isCollective(kernel.kind)) on this rank's
  /// tensors, which live in `backend`'s memory. It may return before the
  /// result is complete only where the plan waits for it with mw.wait.
  virtual mwrt_status run(const BoundKernel &kernel, Backend &backend) = 0;
};

/// The group of one process: rank 0 of 1.
std::unique_ptr<Communicator> createSingleProcessCommunicator();

/// MWRT_OK when a plan compiled for `ranks` ranks can run on `comm`'s group;
/// otherwise MWRT_UNAVAILABLE with a message that says why.
mwrt_status checkRanks(uint32_t ranks, const Communicator &comm);

} // namespace mwrt::detail

#endif // MWRT_SRC_COMM_COMMUNICATOR_H
