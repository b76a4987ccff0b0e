/*===- mwrt.h - Memwall runtime C API ------------------------------------===*
 *
 * The runtime's public C API: status codes and messages, and device queries.
 * Plans, bindings and steps join it as the runtime grows (see the Runtime
 * issue). No exceptions cross this boundary.
 *
 *===---------------------------------------------------------------------===*/

#ifndef MWRT_MWRT_H
#define MWRT_MWRT_H

#ifdef __cplusplus
extern "C" {
#endif

/* Result of every runtime call. */
typedef enum mwrt_status {
  MWRT_OK = 0,
  MWRT_INVALID_ARGUMENT = 1,
  MWRT_NOT_FOUND = 2,
  MWRT_UNAVAILABLE = 3, /* e.g. no CUDA driver or device */
  MWRT_INTERNAL = 4,
} mwrt_status;

/* Version of the runtime library, "MAJOR.MINOR.PATCH". */
const char *mwrt_version(void);

/* A static, human-readable name of `status`. */
const char *mwrt_status_string(mwrt_status status);

/* Message of the most recent failed call on this thread ("" when none). */
const char *mwrt_last_error(void);

/* Whether this build contains the CUDA backend. */
int mwrt_built_with_cuda(void);

/* Number of CUDA devices, through the driver loaded at run time. Returns
 * MWRT_UNAVAILABLE (count 0) with a message when there is no driver or no
 * device. */
mwrt_status mwrt_cuda_device_count(int *count);

#ifdef __cplusplus
}
#endif

#endif /* MWRT_MWRT_H */
