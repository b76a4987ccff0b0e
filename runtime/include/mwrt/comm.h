//===- comm.h - The ranks a process runs with -------------------*- C++ -*-===//
//
// A plan compiled for N ranks (--mw-zero) runs as N processes started by an
// MPI launcher (`mpirun -np N mw-run ...`) or, for CUDA ranks, by torchrun
// (its RANK/WORLD_SIZE/LOCAL_RANK/MASTER_ADDR/MASTER_PORT environment): each
// joins the group once, before any session, and leaves it after the last.
// Sessions then talk through the group's engine: Open MPI for CPU ranks,
// NCCL (bootstrapped through MPI, or through NCCL's own bootstrap at
// MASTER_ADDR under torchrun) for CUDA ranks. A process not started by a
// launcher is a group of one, and everything works as before.
// docs/multi-rank.md describes the whole.
//
//===----------------------------------------------------------------------===//

#ifndef MWRT_COMM_H
#define MWRT_COMM_H

#include "mwrt/mwrt.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace mwrt {

/// This process's place among the ranks.
struct ProcessGroup {
  int rank = 0;
  int size = 1;
  /// The rank among the processes on this machine (picks the GPU).
  int localRank = 0;
  /// "single-process", "mpi", or "torchrun" (ranks from torchrun's
  /// environment, no MPI: CUDA ranks only, over NCCL).
  std::string engine = "single-process";
  /// torchrun: where NCCL's bootstrap root listens, "MASTER_ADDR:port" with
  /// port MASTER_PORT + 1 (torchrun's own store has MASTER_PORT); "" else.
  std::string bootstrap;
  /// torchrun: its variables as found ("RANK=1 WORLD_SIZE=2 ..."), for
  /// messages; "" else.
  std::string environment;
};

/// What a launcher's environment says about this process (parseLaunch).
struct LaunchEnvironment {
  /// The MPI launcher ("Open MPI", "PMIx", "PMI", "MVAPICH"), "torchrun",
  /// or "" when neither set its variables.
  std::string launcher;
  /// -1 where the launcher's variables do not say (PMIx has no size; the
  /// MPI group tells once joined).
  int rank = -1, size = -1, localRank = -1;
  /// torchrun only: MASTER_ADDR and MASTER_PORT.
  std::string masterAddress;
  int masterPort = -1;
  /// The launcher's variables as found, "NAME=value" joined by spaces.
  std::string variables;
};

/// Reads the launcher's variables through `lookup` (getenv's contract: null
/// when unset). MPI launchers: OMPI_COMM_WORLD_{RANK,SIZE,LOCAL_RANK},
/// MV2_COMM_WORLD_{RANK,SIZE,LOCAL_RANK}, PMI_{RANK,SIZE}, PMIX_RANK.
/// torchrun: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT (any
/// one of them set means all five must be). Both an MPI launcher's and
/// torchrun's variables are accepted when they agree (the MPI launcher
/// wins). MWRT_INVALID_ARGUMENT with one message naming the variable for a
/// malformed value (a rank or size that is not a decimal integer in range,
/// a rank not below the size, a port outside [1, 65534], an empty address),
/// a torchrun variable missing beside the others, or an MPI launcher and
/// torchrun that disagree on the rank or the size.
mwrt_status parseLaunch(const std::function<const char *(const char *)> &lookup,
                        LaunchEnvironment &out);

/// The MPI launcher whose environment this process runs in ("Open MPI",
/// "PMI", "PMIx", "MVAPICH"), or "" when none started it.
std::string detectLauncher();

/// Whether this build can run ranks over MPI (Open MPI was found at build
/// time).
bool mpiAvailable();

/// Joins the ranks this process was started with. `engine`:
///   - "auto": MPI when an MPI launcher started the process, the ranks of
///     torchrun's environment (engine "torchrun") when only it is there,
///     else a group of one; a malformed or conflicting environment is an
///     error (parseLaunch);
///   - "mpi": MPI (MWRT_UNAVAILABLE when this build has no MPI);
///   - "none": a group of one, even under a launcher.
/// Call once, before the first session; a second call returns the group
/// joined first.
mwrt_status joinProcessGroup(std::string_view engine, ProcessGroup &group);

/// The group joined (a group of one before joinProcessGroup).
const ProcessGroup &processGroup();

/// Leaves the group (MPI_Finalize) after every session is gone.
void leaveProcessGroup();

/// Collective over the group, for failures before or between steps: every
/// rank passes its own status (on failure with its message in
/// mwrt_last_error()). All return MWRT_OK when every rank passed MWRT_OK;
/// otherwise every rank returns the status of the lowest-numbered failing
/// rank, and mwrt_last_error() is "rank R: <its message>". A group of one
/// returns `local` unchanged.
mwrt_status agreeAcrossRanks(mwrt_status local);
/// As above, with the message passed in `message` (on failure) and, on
/// return, the failing rank's "rank R: <message>" in it.
mwrt_status agreeAcrossRanks(mwrt_status local, std::string &message);

/// Gives every rank rank `root`'s `text`.
mwrt_status broadcastAcrossRanks(std::string &text, int root);

/// Ends every rank of the group at once (MPI_Abort) with exit status `code`:
/// for a failure in a step, where the other ranks may be waiting in a
/// collective that will never complete. A group of one exits.
[[noreturn]] void abortProcessGroup(int code);

/// What a session's collectives moved, per kind, since it was created.
/// `elements` and `bytes` are the payload as the memory report of
/// --mw-zero counts it (an all_reduce's and reduce_scatter's input, an
/// all_gather's result; an all_slice, which takes the rank's piece locally,
/// has none); `sentBytes` what this rank handed the engine to deliver to
/// other ranks.
struct CommStats {
  struct Kind {
    uint64_t count = 0, elements = 0, bytes = 0, sentBytes = 0;
  };
  /// all_reduce, reduce_scatter, all_gather, all_slice.
  Kind kinds[4];
  /// Seconds the step spent blocked on collectives (a collective without
  /// overlap, or an mw.wait whose collective had not completed).
  double waitSeconds = 0;
  /// Seconds the engine spent in collectives.
  double commSeconds = 0;
  /// Bytes the communicator allocated for itself: staging for the
  /// deterministic reductions (not part of the plan's peak, like an
  /// engine's own buffers).
  uint64_t scratchBytes = 0;
};

/// "all_reduce", "reduce_scatter", "all_gather", "all_slice".
const char *collectiveKindName(int index);

} // namespace mwrt

#endif // MWRT_COMM_H
