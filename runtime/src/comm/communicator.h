//===- communicator.h - The ranks of an SPMD plan ---------------*- C++ -*-===//
//
// Private to the runtime. A plan that --mw-zero compiled for N ranks runs as
// N processes, one per rank, each executing the same kernels on its own
// shard; the collectives (mesh.all_reduce, mesh.reduce_scatter,
// mesh.all_gather, mesh.all_slice) are where they meet. A Communicator is one
// process's view of that group: its rank, the group's size, and the
// collectives. The executor hands every collective kernel, and every mw.wait
// that completes one, to it and every other kernel to the backend, so the
// engines of DESIGN.md decision 9 slot in here without touching the backends
// or the executor:
//   - single-process: one rank, each collective its one-rank kernel in the
//     backend (a copy, exact);
//   - mpi (mpi_communicator.cpp, with Open MPI): CPU ranks, one process each;
//   - nccl (nccl_communicator.cpp, with NCCL; bootstrapped through MPI or,
//     under torchrun, by NCCL itself): CUDA ranks.
//
//===----------------------------------------------------------------------===//

#ifndef MWRT_SRC_COMM_COMMUNICATOR_H
#define MWRT_SRC_COMM_COMMUNICATOR_H

#include "executor.h"
#include "mwrt/comm.h"

#include <cstdint>
#include <memory>

namespace mwrt::detail {

/// Whether `kind` is a collective (a mesh op of the op table).
bool isCollective(OpKind kind);

/// The index of collective `kind` in CommStats::kinds (all_reduce,
/// reduce_scatter, all_gather, all_slice).
int collectiveIndex(OpKind kind);

class Communicator {
public:
  virtual ~Communicator();
  /// "single-process", "mpi", "nccl".
  virtual const char *name() const = 0;
  virtual int rank() const = 0;
  /// The number of ranks in the group.
  virtual int size() const = 0;
  /// Runs collective `kernel` (isCollective(kernel.kind)) on this rank's
  /// tensors, which live in `backend`'s memory. With `deferred` (the plan
  /// completes it with an mw.wait, which reaches wait()) it may return
  /// before the result is complete; otherwise the result is complete when
  /// it returns.
  virtual mwrt_status run(const BoundKernel &kernel, Backend &backend,
                          bool deferred) = 0;
  /// Runs mw.wait `kernel`: waits for the deferred collective whose result
  /// is its operand, then lets the backend run it (a copy when not in
  /// place).
  virtual mwrt_status wait(const BoundKernel &kernel, Backend &backend) {
    return backend.run(kernel);
  }
  /// Waits for every collective started so far (the end of a step).
  virtual mwrt_status finish() { return MWRT_OK; }
  /// What the collectives moved since the communicator was created.
  const CommStats &stats() const { return counters; }

protected:
  /// Counts collective `kernel` on a group of size(): its payload as the
  /// memory report counts it (an all_reduce's and reduce_scatter's operand,
  /// an all_gather's result, nothing for an all_slice, which takes the
  /// rank's piece locally) and the bytes this rank sends, a ring's volumes:
  /// 2(N-1) pieces of ceil(C/N) elements for an all_reduce of C, (N-1)/N of
  /// the payload for a reduce_scatter or all_gather.
  void countPayload(const BoundKernel &kernel);
  CommStats counters;
};

/// The group of one process: rank 0 of 1.
std::unique_ptr<Communicator> createSingleProcessCommunicator();

/// The communicator for `device` ("cpu", "cuda") over the process group
/// this process joined (mwrt::joinProcessGroup): single-process for a group
/// of one, else MPI for the CPU and NCCL for CUDA; MWRT_UNAVAILABLE when the
/// engine it needs is not built in.
mwrt_status createCommunicator(std::string_view device,
                               const SessionOptions &options,
                               std::unique_ptr<Communicator> &comm);

/// Before the communicator: MWRT_UNAVAILABLE, with a message that says why,
/// for a group torchrun started (no MPI) on the CPU with more than one rank,
/// or with a WORLD_SIZE other than the plan's `ranks`; MWRT_OK otherwise.
mwrt_status checkGroup(std::string_view device, uint32_t ranks);

/// MWRT_OK when a plan compiled for `ranks` ranks can run on `comm`'s group;
/// otherwise MWRT_UNAVAILABLE with a message that says why.
mwrt_status checkRanks(uint32_t ranks, const Communicator &comm);

/// The piece `index` of `count` equal pieces of `t` along `axis`: a view
/// into the same memory.
TensorRef pieceOf(const TensorRef &t, int64_t axis, int64_t index,
                  int64_t count);

/// Whether the pieces of `t` along `axis` are each contiguous and laid out
/// one after the other (`t` is contiguous and every dimension before `axis`
/// is 1).
bool piecesAreConsecutive(const TensorRef &t, int64_t axis);

/// Reduces `count` consecutive blocks of `elements` elements of `dtype` at
/// `blocks` into `dst` (contiguous), in rank order and with the evaluator's
/// arithmetic (mw-eval --ranks): floats accumulate in f32 from block 0 on and
/// round to `dtype` once; integers wrap. `reduction` is the mesh reduction
/// ("sum", "max", "min", "product", "average"; "average" for floats only).
mwrt_status reduceBlocks(const std::string &reduction, DType dtype,
                         const void *blocks, int64_t count, int64_t elements,
                         void *dst);

/// The `reduction` attribute of collective `kernel` ("sum" when absent) and
/// its axis attribute (`axisName`, 0 when absent), checked against the
/// kernel's tensors for a group of `ranks`: the input and result differ by a
/// factor `ranks` along the axis as the collective says.
mwrt_status checkCollective(const BoundKernel &kernel, int64_t ranks,
                            std::string &reduction, int64_t &axis);

} // namespace mwrt::detail

#endif // MWRT_SRC_COMM_COMMUNICATOR_H
