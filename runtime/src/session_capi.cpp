//===- session_capi.cpp - The C API of plans and sessions -----------------===//
//
// Thin wrappers over mwrt/runtime.h: argument checks, handle ownership, and
// a guard that turns std::bad_alloc (the only exception the C++ core can
// raise) into MWRT_INTERNAL, so that nothing throws across the C boundary.
//
//===----------------------------------------------------------------------===//

#include "mwrt/mwrt.h"
#include "mwrt/runtime.h"
#include "status.h"

#include <cstring>
#include <new>

using namespace mwrt;

struct mwrt_plan {
  std::shared_ptr<const Plan> plan;
};

struct mwrt_session {
  std::unique_ptr<Session> session;
};

namespace {
template <typename Fn> mwrt_status guarded(Fn &&fn) {
  try {
    return fn();
  } catch (const std::bad_alloc &) {
    return setError(MWRT_INTERNAL, "out of host memory");
  } catch (...) {
    return setError(MWRT_INTERNAL, "unexpected internal error");
  }
}

mwrt_status nullArgument(const char *what) {
  return setError(MWRT_INVALID_ARGUMENT, std::string(what) + " is null");
}

bool toDType(mwrt_dtype in, DType &out) {
  switch (in) {
  case MWRT_F32:
    out = DType::F32;
    return true;
  case MWRT_F16:
    out = DType::F16;
    return true;
  case MWRT_BF16:
    out = DType::BF16;
    return true;
  case MWRT_I32:
    out = DType::I32;
    return true;
  case MWRT_I64:
    out = DType::I64;
    return true;
  case MWRT_I8:
    out = DType::I8;
    return true;
  case MWRT_F8E4M3:
    out = DType::F8_E4M3;
    return true;
  }
  return false;
}

mwrt_dtype fromDType(DType in) {
  switch (in) {
  case DType::F16:
    return MWRT_F16;
  case DType::BF16:
    return MWRT_BF16;
  case DType::I32:
    return MWRT_I32;
  case DType::I64:
    return MWRT_I64;
  case DType::I8:
    return MWRT_I8;
  case DType::F8_E4M3:
    return MWRT_F8E4M3;
  default:
    return MWRT_F32;
  }
}

void describe(DType dtype, const std::vector<int64_t> &shape,
              mwrt_tensor_info *info) {
  info->dtype = fromDType(dtype);
  info->rank = shape.size();
  info->shape = shape.data();
  size_t n = dtypeSize(dtype);
  for (int64_t d : shape)
    n *= static_cast<size_t>(d);
  info->nbytes = n;
}

/// Copies `t` into the caller's buffer of `nbytes`.
mwrt_status copyOut(const char *name, const TensorData &t, void *data,
                    size_t nbytes) {
  if (nbytes != t.bytes.size())
    return setError(MWRT_INVALID_ARGUMENT, std::string("'") + name + "' has " +
                                               std::to_string(t.bytes.size()) +
                                               " bytes, the buffer " +
                                               std::to_string(nbytes));
  if (nbytes && !data)
    return nullArgument("data");
  if (nbytes)
    std::memcpy(data, t.bytes.data(), nbytes);
  return MWRT_OK;
}
} // namespace

extern "C" mwrt_status mwrt_plan_load(const char *path, mwrt_plan **plan) {
  if (!path)
    return nullArgument("path");
  if (!plan)
    return nullArgument("plan");
  return guarded([&] {
    std::shared_ptr<const Plan> p;
    if (mwrt_status st = Plan::load(path, p))
      return st;
    *plan = new mwrt_plan{std::move(p)};
    return MWRT_OK;
  });
}

extern "C" mwrt_status mwrt_plan_load_memory(const void *data, size_t size,
                                             mwrt_plan **plan) {
  if (!data && size)
    return nullArgument("data");
  if (!plan)
    return nullArgument("plan");
  return guarded([&] {
    std::shared_ptr<const Plan> p;
    if (mwrt_status st = Plan::parse(data, size, p))
      return st;
    *plan = new mwrt_plan{std::move(p)};
    return MWRT_OK;
  });
}

extern "C" void mwrt_plan_free(mwrt_plan *plan) { delete plan; }

extern "C" const char *mwrt_plan_function(const mwrt_plan *plan) {
  return plan ? plan->plan->function().c_str() : "";
}

extern "C" void mwrt_session_options_init(mwrt_session_options *options) {
  if (!options)
    return;
  options->seed = 0;
  options->reference_matmul = 0;
  options->check_loss = 1;
}

extern "C" mwrt_status mwrt_session_create(const mwrt_plan *plan,
                                           const char *device,
                                           const mwrt_session_options *options,
                                           mwrt_session **session) {
  if (!plan)
    return nullArgument("plan");
  if (!device)
    return nullArgument("device");
  if (!session)
    return nullArgument("session");
  return guarded([&] {
    SessionOptions o;
    if (options) {
      o.seed = options->seed;
      o.referenceMatmul = options->reference_matmul != 0;
      o.checkLoss = options->check_loss != 0;
    }
    std::unique_ptr<Session> s;
    if (mwrt_status st = Session::create(plan->plan, device, o, s))
      return st;
    *session = new mwrt_session{std::move(s)};
    return MWRT_OK;
  });
}

extern "C" void mwrt_session_free(mwrt_session *session) { delete session; }

extern "C" mwrt_status mwrt_session_load_weights(mwrt_session *session,
                                                 const char *path) {
  if (!session)
    return nullArgument("session");
  if (!path)
    return nullArgument("path");
  return guarded([&] { return session->session->loadWeights(path); });
}

extern "C" mwrt_status mwrt_session_load_inputs(mwrt_session *session,
                                                const char *path) {
  if (!session)
    return nullArgument("session");
  if (!path)
    return nullArgument("path");
  return guarded([&] { return session->session->loadInputs(path); });
}

extern "C" mwrt_status
mwrt_session_set_tensor(mwrt_session *session, const char *name,
                        mwrt_dtype dtype, const int64_t *shape, size_t rank,
                        const void *data, size_t nbytes) {
  if (!session)
    return nullArgument("session");
  if (!name)
    return nullArgument("name");
  if (rank && !shape)
    return nullArgument("shape");
  DType t;
  if (!toDType(dtype, t))
    return setError(MWRT_INVALID_ARGUMENT,
                    "unknown dtype " + std::to_string(int(dtype)));
  return guarded([&] {
    return session->session->setTensor(
        name, t, std::vector<int64_t>(shape, shape + rank), data, nbytes);
  });
}

extern "C" mwrt_status mwrt_session_step(mwrt_session *session) {
  if (!session)
    return nullArgument("session");
  return guarded([&] { return session->session->step(); });
}

extern "C" mwrt_status mwrt_session_loss(const mwrt_session *session,
                                         double *loss) {
  if (!session)
    return nullArgument("session");
  if (!loss)
    return nullArgument("loss");
  return session->session->loss(*loss);
}

extern "C" mwrt_status mwrt_session_result_info(const mwrt_session *session,
                                                const char *name,
                                                mwrt_tensor_info *info) {
  if (!session)
    return nullArgument("session");
  if (!name)
    return nullArgument("name");
  if (!info)
    return nullArgument("info");
  const Plan &plan = session->session->plan();
  int r = plan.findResult(name);
  if (r < 0)
    return setError(MWRT_NOT_FOUND, std::string("the plan has no result "
                                                "named '") +
                                        name + "'");
  const OperandDesc &v = plan.results()[r].value;
  describe(v.dtype, v.shape, info);
  return MWRT_OK;
}

extern "C" mwrt_status mwrt_session_tensor_info(const mwrt_session *session,
                                                const char *name,
                                                mwrt_tensor_info *info) {
  if (!session)
    return nullArgument("session");
  if (!name)
    return nullArgument("name");
  if (!info)
    return nullArgument("info");
  const Plan &plan = session->session->plan();
  int p = plan.findPersistent(name);
  if (p < 0)
    return setError(MWRT_NOT_FOUND, std::string("the plan has no persistent "
                                                "named '") +
                                        name + "'");
  const PersistentDesc &d = plan.persistents()[p];
  describe(d.dtype, d.shape, info);
  return MWRT_OK;
}

extern "C" mwrt_status mwrt_session_read_result(const mwrt_session *session,
                                                const char *name, void *data,
                                                size_t nbytes) {
  if (!session)
    return nullArgument("session");
  if (!name)
    return nullArgument("name");
  return guarded([&] {
    TensorData t;
    if (mwrt_status st = session->session->readResult(name, t))
      return st;
    return copyOut(name, t, data, nbytes);
  });
}

extern "C" mwrt_status mwrt_session_read_tensor(const mwrt_session *session,
                                                const char *name, void *data,
                                                size_t nbytes) {
  if (!session)
    return nullArgument("session");
  if (!name)
    return nullArgument("name");
  return guarded([&] {
    TensorData t;
    if (mwrt_status st = session->session->readPersistent(name, t))
      return st;
    return copyOut(name, t, data, nbytes);
  });
}

extern "C" mwrt_status mwrt_session_save_weights(const mwrt_session *session,
                                                 const char *path) {
  if (!session)
    return nullArgument("session");
  if (!path)
    return nullArgument("path");
  return guarded([&] { return session->session->saveWeights(path); });
}

extern "C" mwrt_status mwrt_session_get_stats(const mwrt_session *session,
                                              mwrt_session_stats *stats) {
  if (!session)
    return nullArgument("session");
  if (!stats)
    return nullArgument("stats");
  SessionStats s = session->session->stats();
  stats->arena_bytes = s.arenaBytes;
  stats->persistent_bytes = s.persistentBytes;
  stats->workspace_bytes = s.workspaceBytes;
  stats->planned_peak_bytes = s.plannedPeakBytes;
  stats->measured_peak_bytes = s.measuredPeakBytes;
  stats->lower_bound_bytes = s.lowerBoundBytes;
  stats->steps = s.steps;
  return MWRT_OK;
}

extern "C" mwrt_status
mwrt_session_get_offload_stats(const mwrt_session *session,
                               mwrt_offload_stats *stats) {
  if (!session)
    return nullArgument("session");
  if (!stats)
    return nullArgument("stats");
  OffloadStats s = session->session->offloadStats();
  stats->steps = s.steps;
  stats->fetches = s.fetches;
  stats->bytes_streamed = s.bytesStreamed;
  stats->bytes_read = s.bytesRead;
  stats->host_bytes = session->session->stats().hostBytes;
  stats->compute_s = s.computeSeconds;
  stats->copy_s = s.copySeconds;
  stats->wait_s = s.waitSeconds;
  stats->read_s = s.readSeconds;
  return MWRT_OK;
}
