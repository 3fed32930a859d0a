/* cl.h - the OpenCL runtime layer (lib/cl/): devices (device.c), programs
 * (program.c), work sizes (scheduler.c) and cl_mem buffers (buffers.c), on the
 * context record (internal.h). Not installed. */
#ifndef CLOPS_CL_H
#define CLOPS_CL_H

#include "internal.h"

/* ---- devices (device.c) ------------------------------------------------------------- */

/* Fills `info`; the capabilities in `disable` (CLOPS_CAPABILITY_*, from the
 * options or CLOPS_DISABLE) are reported absent, so every path can be tested anywhere. */
clops_status clops_query_device(cl_platform_id platform, cl_device_id device, unsigned index, unsigned disable,
                                clops_device_info *info);

/* Fills ctx->plan from ctx->device, then (test builds: CLOPS_TEST_HOOKS) applies
 * the device profile of CLOPS_TEST_DEVICE_PROFILE to ctx->info.type and
 * ctx->plan: "TYPE[,cu=N][,wg=N][,local=N][,loops=N]", TYPE gpu, cpu or
 * accelerator, cu the compute units, wg the largest work-group (capped by the
 * kernel's and the device's own), local the work-group size to aim for, loops
 * the loop iterations after which the device ends a work-item. A bad profile is
 * CLOPS_ERROR_INVALID_SETTING (cl/profile.c). */
clops_status clops_device_profile_apply(clops_context *ctx);

/* clops_device_list with the capabilities of `disable` reported absent. */
clops_status clops_device_list_masked(clops_device_info *infos, size_t capacity, size_t *count, unsigned disable);
/* Every device (with `disable` masked) in a new array `*infos` (freed by the
 * caller; NULL when there is none or on failure) of `*count` entries. */
clops_status clops_device_list_alloc(unsigned disable, clops_device_info **infos, size_t *count);

/* The device's identity for cache keys: platform name and version, device name,
 * vendor, version, driver version, address bits, extensions, and the disabled
 * capabilities of `disable` but the compiler. Freed by the caller. */
clops_status clops_device_identity(const clops_device_info *info, unsigned disable, char **out);

/* Waits for `events` with the context's deadline (clops.h, "Deadline"): flushes
 * the queue, then CLOPS_SUCCESS when all completed, CLOPS_ERROR_DEVICE_LOST when
 * one failed, CLOPS_ERROR_DEVICE_TIMEOUT past the deadline; `what` names the
 * work in the message. */
clops_status clops_wait_events(const clops_context *ctx, cl_uint n, const cl_event *events, const char *what);
/* The same without a context (the host fallback's worker, lib/ops/fallback.c):
 * nothing flushed; `deadline` from clops_deadline() (0: none), `timeout_seconds`
 * and `device` for the messages. */
clops_status clops_wait_until(const char *device, double deadline, double timeout_seconds, cl_uint n,
                              const cl_event *events, const char *what);
/* The monotonic time `timeout_seconds` from now, or 0 (no deadline) for 0. */
double clops_deadline(double timeout_seconds);
/* The negative execution status that made this thread's last wait fail (0: none),
 * cleared: what clops_context_after_wait looks at. */
cl_int clops_wait_take_failure(void);

/* ---- whether a context can reach its device (wait.c) ----------------------------------- */

/* CLOPS_SUCCESS, or CLOPS_ERROR_DEVICE_LOST with the reason when an OpenCL
 * context is used in a process forked after its creation, or after one of its
 * executions failed on the device (the place named). Host contexts: always
 * CLOPS_SUCCESS. Every entry point that reaches OpenCL through a context asks it first. */
clops_status clops_context_usable(const clops_context *ctx);
/* The OpenCL driver after fork: clops_driver_note_use() records, once, the process
 * that first reached the driver (every platform or device query of clops calls it
 * first); clops_driver_usable() is CLOPS_ERROR_DEVICE_LOST, saying what to do, in
 * a process forked after that (a new context there hangs in its first command on
 * PoCL: the driver's threads stayed in the parent), else CLOPS_SUCCESS. Creating
 * a context on a device asks it first. */
void clops_driver_note_use(void);
clops_status clops_driver_usable(void);
/* In a forked child that only creates contexts and builds or loads programs - no
 * command runs, so the driver's threads are not needed (pack_import.c's loaders,
 * which PoCL serves after fork) - takes the driver as this process's own. */
void clops_driver_adopt(void);
/* True for an OpenCL context in a process forked after it was created: freeing
 * it (or its operators) there must not call the driver (the objects are leaked). */
bool clops_context_forked(const clops_context *ctx);
/* After a wait on an operator's own kernels returned `st`: when that is
 * CLOPS_ERROR_DEVICE_LOST because a kernel's event ended with a negative status
 * (other than CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST: a failed event of the
 * caller's wait list loses no device), marks the context lost at operator `op`,
 * kernel `kernel` (may be ""), the first such place kept, and says so in the
 * message. Returns `st`. Clears this thread's wait failure either way. */
clops_status clops_context_after_wait(clops_context *ctx, clops_status st, const char *op, const char *kernel);

/* ---- programs (program.c) -------------------------------------------------------------- */

/* Creates and builds a program from a device binary (a cache entry's payload). */
clops_status clops_program_from_binary(clops_context *ctx, const char *options, const unsigned char *bin, size_t len,
                                       cl_program *out);

/* The program built from `source_name` (one of kernels/ .cl files, after clops_common.cl)
 * with `options`: from the context's table, else from the on-disk cache, else
 * compiled (and stored on disk); kept for the life of the context and owned by it.
 * `*origin` says which ("in-process", "disk cache", "compiled"). */
clops_status clops_program_get(clops_context *ctx, const char *source_name, const char *options,
                               cl_program *out, const char **origin);
void clops_programs_release(clops_context *ctx);
/* The portable program (kernels/portable.cl): CLOPS_PORTABLE_SOURCE built with
 * CLOPS_PORTABLE_OPTIONS whatever the operator (clops_cache.h). Puts `program`
 * (retained) in ctx's table under that key, in place of one built before. */
clops_status clops_program_adopt(clops_context *ctx, cl_program program);
/* The whole source of program `source_name`: its kernels/ files one after another
 * (program.c program_files; malloc'd, NUL-terminated). */
clops_status clops_program_source(const char *source_name, char **out, size_t *out_len);
/* The disk-cache key of the program built from `source` with `options` on ctx's
 * device (malloc'd; NULL when out of memory). */
char *clops_program_cache_key(const clops_context *ctx, const char *options, const char *source, size_t *len);
/* Until clops_program_list_end, this thread's clops_program_get calls `fn` with
 * the program it was asked for and fails with CLOPS_ERROR_COMPILER_UNAVAILABLE
 * (as on a device without a compiler or binary), building nothing. */
void clops_program_list_begin(clops_program_fn fn, void *user);
void clops_program_list_end(void);
/* The size-dependent cases of the rules that choose a program (lib/ops): while a
 * listing is on, each rule asks clops_program_list_case instead of the sizes, and
 * clops_operator_programs walks every combination the device allows, so that the
 * one rule names every program it can produce (api/aot.c). */
typedef enum clops_list_case {
    CLOPS_LIST_WIDE_OFFSETS = 1u, /* a tensor past 32-bit offsets (plan.c clops_fits_u32) */
    CLOPS_LIST_LONG_ROWS = 2u,    /* rows longer than a whole-row work-item (depth_space.c chunk) */
    CLOPS_LIST_OWN = 4u /* no case is walked: every rule reads the operator's own sizes, as when not
                         * listing, and names nothing past its own plan (api/aot.c clops_operator_own_program) */
} clops_list_case;
/* The cases that hold in this listing pass (a set of clops_list_case bits). */
void clops_program_list_cases(unsigned cases);
/* -1 when this thread is not listing, or lists with CLOPS_LIST_OWN (the rule looks
 * at the sizes), else 1 or 0: whether case `c` holds in this pass. */
int clops_program_list_case(clops_list_case c);

/* ---- work sizes (scheduler.c) ------------------------------------------------------------------ */

/* Chooses a local size for `kernel` over a `work_dim`-dimensional range of
 * `items` work-items, and the global size rounded up to it. `want` (may be NULL)
 * is a tuned local size, used when the device and kernel accept it. Never relies
 * on non-uniform work-groups. `*origin` is "tuned" or "heuristic". */
clops_status clops_schedule(const clops_context *ctx, cl_kernel kernel, unsigned work_dim,
                            const uint64_t items[3], const size_t *want, size_t global[3], size_t local[3],
                            const char **origin);

/* ---- buffers (cl/buffers.c) ------------------------------------------------------------------ */

/* Checks cl_mem buffers against the spans (missing, too small, aliased through sub-buffers). */
clops_status clops_check_cl_buffers(const clops_op_params *p, const clops_buffers *b);
/* Refuses buffers (those the operator uses) and wait events of another cl_context. */
clops_status clops_check_same_context(cl_context ctx, const clops_op_params *p, const clops_buffers *b,
                                      cl_uint nwait, const cl_event *wait);
/* A device buffer holding `bytes` of `host` (or uninitialised when host is NULL); NULL for 0 bytes. */
clops_status clops_device_buffer(clops_context *ctx, cl_mem_flags flags, const void *host, size_t bytes,
                                 cl_mem *out);
/* Maps the operator's buffers for the host after the wait list (blocking): inputs
 * for reading, the output for reading and writing; unmapped by clops_unmap_buffers
 * (which takes what a failed map left too). */
clops_status clops_map_buffers(cl_command_queue q, const clops_op_params *p, const clops_buffers *b, cl_uint nwait,
                               const cl_event *wait, clops_host_buffers *out);
void clops_unmap_buffers(cl_command_queue q, const clops_buffers *b, const clops_host_buffers *mapped);

#endif /* CLOPS_CL_H */
