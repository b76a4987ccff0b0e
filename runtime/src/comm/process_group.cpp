//===- process_group.cpp - Joining the ranks (mwrt/comm.h) ----------------===//
//
// With Open MPI in the build (MWRT_HAVE_MPI), a process started by an MPI
// launcher initializes MPI (MPI_THREAD_MULTIPLE: the communicator's thread
// runs the collectives while the step computes) and takes its rank and size
// from MPI_COMM_WORLD. Without it, or without a launcher, the process is a
// group of one.
//
//===----------------------------------------------------------------------===//

#include "mwrt/comm.h"

#include "status.h"

#if MWRT_HAVE_MPI
#include <mpi.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace mwrt;

namespace {
ProcessGroup theGroup;
bool joined = false;
} // namespace

std::string mwrt::detectLauncher() {
  auto has = [](const char *name) { return std::getenv(name) != nullptr; };
  if (has("OMPI_COMM_WORLD_SIZE"))
    return "Open MPI";
  if (has("PMIX_RANK"))
    return "PMIx";
  if (has("PMI_SIZE") || has("PMI_RANK"))
    return "PMI";
  if (has("MV2_COMM_WORLD_SIZE"))
    return "MVAPICH";
  return "";
}

bool mwrt::mpiAvailable() {
#if MWRT_HAVE_MPI
  return true;
#else
  return false;
#endif
}

const ProcessGroup &mwrt::processGroup() { return theGroup; }

mwrt_status mwrt::joinProcessGroup(std::string_view engine,
                                   ProcessGroup &group) {
  if (joined) {
    group = theGroup;
    return MWRT_OK;
  }
  if (engine != "auto" && engine != "mpi" && engine != "none")
    return setError(MWRT_INVALID_ARGUMENT,
                    "unknown communication engine '" + std::string(engine) +
                        "' (expected auto, mpi or none)");
  bool useMpi = engine == "mpi" || (engine == "auto" && !detectLauncher().empty());
  if (!useMpi) {
    joined = true;
    group = theGroup;
    return MWRT_OK;
  }
#if MWRT_HAVE_MPI
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) !=
      MPI_SUCCESS)
    return setError(MWRT_UNAVAILABLE, "MPI_Init_thread failed");
  if (provided < MPI_THREAD_MULTIPLE) {
    MPI_Finalize();
    return setError(MWRT_UNAVAILABLE,
                    "this MPI does not support MPI_THREAD_MULTIPLE, which "
                    "the communicator's thread needs");
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &theGroup.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &theGroup.size);
  MPI_Comm local;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, theGroup.rank,
                          MPI_INFO_NULL, &local) == MPI_SUCCESS) {
    MPI_Comm_rank(local, &theGroup.localRank);
    MPI_Comm_free(&local);
  }
  theGroup.engine = "mpi";
  joined = true;
  group = theGroup;
  return MWRT_OK;
#else
  return setError(MWRT_UNAVAILABLE,
                  "this build has no MPI (install libopenmpi-dev and "
                  "rebuild); " +
                      (detectLauncher().empty()
                           ? std::string("no MPI launcher started this process")
                           : detectLauncher() + " started this process"));
#endif
}

void mwrt::leaveProcessGroup() {
#if MWRT_HAVE_MPI
  if (theGroup.engine == "mpi") {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized)
      MPI_Finalize();
  }
#endif
}

mwrt_status mwrt::agreeAcrossRanks(mwrt_status local) {
  std::string message = local == MWRT_OK ? "" : mwrt_last_error();
  mwrt_status st = agreeAcrossRanks(local, message);
  if (st != MWRT_OK)
    return setError(st, message);
  return MWRT_OK;
}

mwrt_status mwrt::agreeAcrossRanks(mwrt_status local, std::string &message) {
  if (theGroup.engine != "mpi")
    return local;
#if MWRT_HAVE_MPI
  std::string mine = local == MWRT_OK ? "" : message;
  int status = static_cast<int>(local);
  std::vector<int> all(theGroup.size);
  if (MPI_Allgather(&status, 1, MPI_INT, all.data(), 1, MPI_INT,
                    MPI_COMM_WORLD) != MPI_SUCCESS) {
    message = "the ranks could not agree (MPI_Allgather failed)";
    return MWRT_UNAVAILABLE;
  }
  int failed = -1;
  for (int r = 0; r < theGroup.size && failed < 0; ++r)
    if (all[r] != MWRT_OK)
      failed = r;
  if (failed < 0)
    return MWRT_OK;
  if (theGroup.size == 1) {
    message = mine;
    return local;
  }
  // The failing rank's message, to every rank.
  int length = failed == theGroup.rank ? static_cast<int>(mine.size()) : 0;
  MPI_Bcast(&length, 1, MPI_INT, failed, MPI_COMM_WORLD);
  std::string text(static_cast<size_t>(length), '\0');
  if (failed == theGroup.rank)
    text = mine;
  if (length)
    MPI_Bcast(text.data(), length, MPI_CHAR, failed, MPI_COMM_WORLD);
  message = "rank " + std::to_string(failed) + ": " + text;
  return static_cast<mwrt_status>(all[failed]);
#else
  return local;
#endif
}

mwrt_status mwrt::broadcastAcrossRanks(std::string &text, int root) {
#if MWRT_HAVE_MPI
  if (theGroup.engine != "mpi")
    return MWRT_OK;
  int length = static_cast<int>(text.size());
  if (MPI_Bcast(&length, 1, MPI_INT, root, MPI_COMM_WORLD) != MPI_SUCCESS)
    return setError(MWRT_UNAVAILABLE, "MPI_Bcast failed");
  text.resize(static_cast<size_t>(length));
  if (length &&
      MPI_Bcast(text.data(), length, MPI_CHAR, root, MPI_COMM_WORLD) !=
          MPI_SUCCESS)
    return setError(MWRT_UNAVAILABLE, "MPI_Bcast failed");
#else
  (void)text;
  (void)root;
#endif
  return MWRT_OK;
}

void mwrt::abortProcessGroup(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
#if MWRT_HAVE_MPI
  if (theGroup.engine == "mpi")
    MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::_Exit(code);
}
