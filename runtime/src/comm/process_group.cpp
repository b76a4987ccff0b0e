//===- process_group.cpp - Joining the ranks (mwrt/comm.h) ----------------===//
//
// With Open MPI in the build (MWRT_HAVE_MPI), a process started by an MPI
// launcher initializes MPI (MPI_THREAD_MULTIPLE: the communicator's thread
// runs the collectives while the step computes) and takes its rank and size
// from MPI_COMM_WORLD. A process with torchrun's environment and no MPI
// launcher's takes its rank, size and local rank from RANK, WORLD_SIZE and
// LOCAL_RANK (engine "torchrun", no MPI); only CUDA ranks can run so, over
// NCCL bootstrapped by NCCL itself at MASTER_ADDR (nccl_communicator.cpp).
// Without MPI, or without a launcher, the process is a group of one.
//
//===----------------------------------------------------------------------===//

#include "mwrt/comm.h"

#include "status.h"

#if MWRT_HAVE_MPI
#include <mpi.h>
#endif

#include <cerrno>
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

namespace {

/// A decimal integer in [lo, hi], the whole string.
bool parseInt(const char *text, long lo, long hi, int &out) {
  if (!text || !*text)
    return false;
  for (const char *c = text; *c; ++c)
    if (*c < '0' || *c > '9')
      return false;
  errno = 0;
  char *end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (errno || *end || v < lo || v > hi)
    return false;
  out = static_cast<int>(v);
  return true;
}

struct Variable {
  const char *name;
  const char *value;
};

} // namespace

mwrt_status
mwrt::parseLaunch(const std::function<const char *(const char *)> &lookup,
                  LaunchEnvironment &out) {
  LaunchEnvironment env;
  auto bad = [](const std::string &what) {
    return setError(MWRT_INVALID_ARGUMENT, "launcher environment: " + what);
  };
  auto show = [](const std::vector<Variable> &vars) {
    std::string text;
    for (const Variable &v : vars)
      if (v.value)
        text += (text.empty() ? "" : " ") + std::string(v.name) + "=" + v.value;
    return text;
  };
  // Reads rank, size and local rank from the first three of `vars` (null
  // names: the launcher has none).
  auto readRanks = [&](const std::vector<Variable> &vars, int &rank, int &size,
                       int &local) -> mwrt_status {
    const long most = 1 << 24;
    if (vars[1].value && !parseInt(vars[1].value, 1, most, size))
      return bad(std::string(vars[1].name) + "='" + vars[1].value +
                 "' is not a number of ranks (a decimal integer >= 1)");
    if (vars[0].value && !parseInt(vars[0].value, 0, most, rank))
      return bad(std::string(vars[0].name) + "='" + vars[0].value +
                 "' is not a rank (a decimal integer >= 0)");
    if (vars[2].name && vars[2].value &&
        !parseInt(vars[2].value, 0, most, local))
      return bad(std::string(vars[2].name) + "='" + vars[2].value +
                 "' is not a local rank (a decimal integer >= 0)");
    if (rank >= 0 && size > 0 && rank >= size)
      return bad(std::string(vars[0].name) + "=" + vars[0].value +
                 " is not below " + vars[1].name + "=" + vars[1].value);
    if (local >= 0 && size > 0 && local >= size)
      return bad(std::string(vars[2].name) + "=" + vars[2].value +
                 " is not below " + vars[1].name + "=" + vars[1].value);
    return MWRT_OK;
  };

  // The MPI launchers, in detectLauncher's order.
  struct Mpi {
    const char *launcher, *rank, *size, *local;
  };
  const Mpi launchers[] = {
      {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
       "OMPI_COMM_WORLD_LOCAL_RANK"},
      {"PMIx", "PMIX_RANK", nullptr, nullptr},
      {"PMI", "PMI_RANK", "PMI_SIZE", nullptr},
      {"MVAPICH", "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE",
       "MV2_COMM_WORLD_LOCAL_RANK"},
  };
  auto get = [&](const char *name) { return name ? lookup(name) : nullptr; };
  for (const Mpi &m : launchers) {
    std::vector<Variable> vars = {{m.rank, get(m.rank)},
                                  {m.size ? m.size : "", get(m.size)},
                                  {m.local, get(m.local)}};
    if (!vars[0].value && !vars[1].value)
      continue;
    env.launcher = m.launcher;
    env.variables = show(vars);
    if (mwrt_status st = readRanks(vars, env.rank, env.size, env.localRank))
      return st;
    break;
  }

  std::vector<Variable> torch = {{"RANK", lookup("RANK")},
                                 {"WORLD_SIZE", lookup("WORLD_SIZE")},
                                 {"LOCAL_RANK", lookup("LOCAL_RANK")},
                                 {"MASTER_ADDR", lookup("MASTER_ADDR")},
                                 {"MASTER_PORT", lookup("MASTER_PORT")}};
  bool anyTorch = false;
  for (const Variable &v : torch)
    anyTorch |= v.value != nullptr;
  if (!anyTorch) {
    out = std::move(env);
    return MWRT_OK;
  }
  std::string found = show(torch);
  for (const Variable &v : torch)
    if (!v.value)
      return bad("torchrun's " + std::string(v.name) + " is not set beside " +
                 found + " (a torchrun-style launcher sets RANK, WORLD_SIZE, "
                 "LOCAL_RANK, MASTER_ADDR and MASTER_PORT)");
  int rank = -1, size = -1, local = -1, port = -1;
  if (mwrt_status st = readRanks(torch, rank, size, local))
    return st;
  if (!*torch[3].value)
    return bad("MASTER_ADDR is empty");
  if (!parseInt(torch[4].value, 1, 65534, port))
    return bad("MASTER_PORT='" + std::string(torch[4].value) +
               "' is not a port in [1, 65534] (NCCL's bootstrap listens on "
               "MASTER_PORT + 1)");
  if (!env.launcher.empty()) {
    // Both: fine when they say the same (a wrapper that exports RANK from
    // MPI's variables); the MPI launcher started the process.
    if ((env.rank >= 0 && env.rank != rank) ||
        (env.size >= 0 && env.size != size))
      return bad(env.launcher + "'s " + env.variables + " and torchrun's " +
                 found + " disagree; start the ranks with one launcher");
    out = std::move(env);
    return MWRT_OK;
  }
  env.launcher = "torchrun";
  env.rank = rank;
  env.size = size;
  env.localRank = local;
  env.masterAddress = torch[3].value;
  env.masterPort = port;
  env.variables = found;
  out = std::move(env);
  return MWRT_OK;
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
  LaunchEnvironment launch;
  if (engine == "auto")
    if (mwrt_status st = parseLaunch(
            [](const char *name) { return std::getenv(name); }, launch))
      return st;
  bool useMpi = engine == "mpi" ||
                (engine == "auto" && !detectLauncher().empty());
  if (!useMpi && launch.launcher == "torchrun") {
    // No MPI: NCCL bootstraps itself (CUDA ranks); CPU ranks are refused
    // when a session is made (detail::checkGroup).
    theGroup.rank = launch.rank;
    theGroup.size = launch.size;
    theGroup.localRank = launch.localRank;
    theGroup.engine = "torchrun";
    const std::string &host = launch.masterAddress;
    bool ipv6 = host.find(':') != std::string::npos && host.front() != '[';
    theGroup.bootstrap = (ipv6 ? "[" + host + "]" : host) + ":" +
                         std::to_string(launch.masterPort + 1);
    theGroup.environment = launch.variables;
    joined = true;
    group = theGroup;
    return MWRT_OK;
  }
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
  // torchrun's ranks have no MPI and NCCL carries device memory only: each
  // rank keeps its own text.
  if (theGroup.engine == "torchrun" && theGroup.size > 1)
    return setError(MWRT_UNAVAILABLE,
                    "ranks started by torchrun cannot exchange host data "
                    "(no MPI)");
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
