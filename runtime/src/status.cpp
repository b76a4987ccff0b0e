//===- status.cpp - Status codes and the per-thread error message ---------===//

#include "mwrt/mwrt.h"
#include "status.h"

#include <string>

namespace {
thread_local std::string lastError;
} // namespace

mwrt_status mwrt::setError(mwrt_status status, std::string message) {
  lastError = std::move(message);
  return status;
}

extern "C" const char *mwrt_version(void) { return "0.1.0"; }

extern "C" const char *mwrt_status_string(mwrt_status status) {
  switch (status) {
  case MWRT_OK:
    return "ok";
  case MWRT_INVALID_ARGUMENT:
    return "invalid argument";
  case MWRT_NOT_FOUND:
    return "not found";
  case MWRT_UNAVAILABLE:
    return "unavailable";
  case MWRT_INTERNAL:
    return "internal error";
  }
  return "unknown status";
}

extern "C" const char *mwrt_last_error(void) { return lastError.c_str(); }
