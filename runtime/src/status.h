//===- status.h - Runtime-internal error reporting ------------------------===//
//
// Private helper: records the message of a failed call for mwrt_last_error.

#ifndef MWRT_SRC_STATUS_H
#define MWRT_SRC_STATUS_H

#include "mwrt/mwrt.h"

#include <string>

namespace mwrt {
/// Records `message` as this thread's last error and returns `status`.
mwrt_status setError(mwrt_status status, std::string message);
} // namespace mwrt

#endif // MWRT_SRC_STATUS_H
