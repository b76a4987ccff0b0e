/*===- mwrt.h - Memwall runtime C API ------------------------------------===*
 *
 * The runtime's public C API: status codes and messages, device queries,
 * plans (.mwplan files) and sessions that execute them. Every call returns a
 * status and, when it fails, leaves a one-line message for mwrt_last_error();
 * no exception crosses this boundary. docs/runtime.md describes the rules
 * (initialization, synthetic data, memory accounting, errors); the C++ core
 * behind it is mwrt/runtime.h.
 *
 *===---------------------------------------------------------------------===*/

#ifndef MWRT_MWRT_H
#define MWRT_MWRT_H

#include <stddef.h>
#include <stdint.h>

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

/*===--------------------------------------------------------------------===*
 * Plans and sessions
 *===--------------------------------------------------------------------===*/

/* Element types, numbered as in the plan schema (mwplan.DType). */
typedef enum mwrt_dtype {
  MWRT_F32 = 0,
  MWRT_F16 = 1,
  MWRT_BF16 = 2,
  MWRT_I32 = 3,
  MWRT_I64 = 4,
  /* The quantized KV cache's codes (docs/inference.md). */
  MWRT_I8 = 5,
  MWRT_F8E4M3 = 6,
} mwrt_dtype;

/* A loaded, verified and validated plan; immutable. */
typedef struct mwrt_plan mwrt_plan;
/* A plan bound to a device's memory, ready to run steps. */
typedef struct mwrt_session mwrt_session;

/* Reads the .mwplan file at `path` and checks it: FlatBuffers verification,
 * identifier "MWPL", version, and every kernel, operand and result (messages
 * name the kernel index, op and operand). MWRT_NOT_FOUND when the file cannot
 * be opened, MWRT_INVALID_ARGUMENT when it is not a valid plan. */
mwrt_status mwrt_plan_load(const char *path, mwrt_plan **plan);
/* As mwrt_plan_load, from `size` bytes in memory (not kept after the call). */
mwrt_status mwrt_plan_load_memory(const void *data, size_t size,
                                  mwrt_plan **plan);
/* Frees `plan` (null is a no-op). Sessions created from it stay valid. */
void mwrt_plan_free(mwrt_plan *plan);
/* The planned function's name (valid while `plan` lives). */
const char *mwrt_plan_function(const mwrt_plan *plan);

typedef struct mwrt_session_options {
  /* Seed of the default initialization of weights and synthetic inputs. */
  uint64_t seed;
  /* Nonzero: matmul with the evaluator's loops (bit-exact with mw-eval)
   * instead of OpenBLAS. */
  int reference_matmul;
  /* Nonzero: a step whose loss is NaN or infinite fails, naming the step. */
  int check_loss;
} mwrt_session_options;

/* Defaults: seed 0, OpenBLAS matmul, loss checked. */
void mwrt_session_options_init(mwrt_session_options *options);

/* Creates a session running `plan` on `device` ("cpu"; "cuda" fails with
 * MWRT_UNAVAILABLE in this version). Allocates the arena and every
 * persistent buffer once, binds every kernel, and initializes the
 * persistents by the default rules from options->seed. `options` may be
 * null (the defaults). */
mwrt_status mwrt_session_create(const mwrt_plan *plan, const char *device,
                                const mwrt_session_options *options,
                                mwrt_session **session);
/* Frees `session` and all its memory (null is a no-op). */
void mwrt_session_free(mwrt_session *session);

/* Sets Param and OptimizerState buffers that are function arguments
 * (argument >= 0) from a safetensors file by name.
 * A missing param, or a tensor of the wrong dtype or shape, is an error
 * naming it, and then nothing changes; optimizer state absent from the file
 * keeps its default (a fresh optimizer). */
mwrt_status mwrt_session_load_weights(mwrt_session *session, const char *path);
/* Sets Input and Label buffers from a safetensors file by name (each must be
 * there); a tensor named like any other persistent sets it too. */
mwrt_status mwrt_session_load_inputs(mwrt_session *session, const char *path);
/* Sets persistent `name` from `nbytes` row-major little-endian bytes. */
mwrt_status mwrt_session_set_tensor(mwrt_session *session, const char *name,
                                    mwrt_dtype dtype, const int64_t *shape,
                                    size_t rank, const void *data,
                                    size_t nbytes);

/* Runs one step: every kernel in order, then copies each result named like a
 * Param or OptimizerState argument into it. A kernel's failure names the
 * step, kernel index, op and location. After a failed step the state is
 * unspecified. */
mwrt_status mwrt_session_step(mwrt_session *session);
/* The last step's loss (MWRT_NOT_FOUND when the plan has none or no step has
 * run). */
mwrt_status mwrt_session_loss(const mwrt_session *session, double *loss);

/* Where to find a tensor and how big it is. `shape` points into the plan
 * and stays valid while the session lives. */
typedef struct mwrt_tensor_info {
  mwrt_dtype dtype;
  size_t rank;
  const int64_t *shape;
  size_t nbytes; /* row-major bytes */
} mwrt_tensor_info;

/* Describes result `name` / persistent `name`; MWRT_NOT_FOUND if absent. */
mwrt_status mwrt_session_result_info(const mwrt_session *session,
                                     const char *name, mwrt_tensor_info *info);
mwrt_status mwrt_session_tensor_info(const mwrt_session *session,
                                     const char *name, mwrt_tensor_info *info);
/* Copies result `name` (its value after the last step) / persistent `name`
 * into `data`, row-major; `nbytes` must be the tensor's size. */
mwrt_status mwrt_session_read_result(const mwrt_session *session,
                                     const char *name, void *data,
                                     size_t nbytes);
mwrt_status mwrt_session_read_tensor(const mwrt_session *session,
                                     const char *name, void *data,
                                     size_t nbytes);

/* Writes every Param and OptimizerState argument to a safetensors file,
 * atomically (temporary file, fsync, rename): an existing file is replaced
 * only by a complete new one. */
mwrt_status mwrt_session_save_weights(const mwrt_session *session,
                                      const char *path);

/* Memory in bytes. planned_peak = arena + persistent + workspace, fixed at
 * creation from the plan; measured_peak = the bytes the session actually
 * allocated (it allocates only at creation). Kernels' internal scratch is not
 * counted. */
typedef struct mwrt_session_stats {
  uint64_t arena_bytes;
  uint64_t persistent_bytes; /* every persistent, each 64-byte aligned */
  uint64_t workspace_bytes;  /* staging for overlapping result copies */
  uint64_t planned_peak_bytes;
  uint64_t measured_peak_bytes;
  uint64_t lower_bound_bytes; /* the packer's lower bound for the arena */
  uint64_t steps;             /* steps completed */
} mwrt_session_stats;

mwrt_status mwrt_session_get_stats(const mwrt_session *session,
                                   mwrt_session_stats *stats);

/* Offloaded weights (--mw-offload), summed over the steps completed; all
 * zero for a plan without fetches. compute = the steps' wall time less the
 * time the kernels waited for weights; copy = the copy engine's busy time;
 * read = the file reader's time; host_bytes = the host store and staging
 * (host memory, outside the device peak). */
typedef struct mwrt_offload_stats {
  uint64_t steps;
  uint64_t fetches;
  uint64_t bytes_streamed; /* copied into the arena's weight slots */
  uint64_t bytes_read;     /* read from the weights file */
  uint64_t host_bytes;
  double compute_s;
  double copy_s;
  double wait_s;
  double read_s;
} mwrt_offload_stats;

mwrt_status mwrt_session_get_offload_stats(const mwrt_session *session,
                                           mwrt_offload_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* MWRT_MWRT_H */
