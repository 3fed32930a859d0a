/*
 * internal.h - what the layers of lib/ share (README, "Architecture"). Not installed.
 * Each section names the file that defines it; a layer calls only the sections of
 * its own or lower layers: core, host, store, cl, ops, api, tune (tools/check_layers.sh).
 * The operator table itself is in ops/ops.h.
 */
#ifndef CLOPS_INTERNAL_H
#define CLOPS_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include "store/cache.h"
#include "cl_api.h"
#include "clops/clops.h"

/* ---- status reporting (status.c) ------------------------------------------------ */

/* Records a formatted detail message for this thread and returns `status`. */
clops_status clops_fail(clops_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* A cl_int error from `what` as a status, with the call named in the message. */
clops_status clops_fail_cl(cl_int err, const char *what);

/* ---- checked arithmetic (validate.c) ---------------------------------------------- */
static inline bool clops_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}
static inline bool clops_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}

/* ---- tensors (validate.c) ---------------------------------------------------------- */

/* A validated tensor: sizes, strides made explicit, and the derived counts. */
typedef struct clops_tensor {
    clops_data_type type;
    size_t elem_size;
    uint64_t sizes[4];
    uint64_t strides[4];   /* in elements; packed strides filled in when absent */
    bool packed;           /* strides equal the packed NCHW strides */
    uint64_t count;        /* product of sizes */
    uint64_t span;         /* elements from the first to one past the last addressed */
    uint64_t span_bytes;
} clops_tensor;

typedef enum clops_tensor_role { CLOPS_ROLE_INPUT, CLOPS_ROLE_INDICES, CLOPS_ROLE_OUTPUT } clops_tensor_role;

/* A validated operator: the descriptor copied into plain values. */
typedef struct clops_op_params {
    clops_operator_type type;
    clops_tensor input;
    clops_tensor indices; /* MaxUnpooling only */
    clops_tensor output;
    uint32_t block_size;  /* DepthToSpace / SpaceToDepth */
    clops_depth_space_order order;
} clops_op_params;

clops_status clops_validate_operator(const clops_operator_desc *desc, clops_op_params *out);

/* Checks host buffers against the spans (missing, too small, aliased). */
clops_status clops_check_host_buffers(const clops_op_params *p, const clops_host_buffers *b);

bool clops_data_type_valid(clops_data_type type);
bool clops_index_type_valid(clops_data_type type);

/* ---- host kernels (host/host_kernels.c): plain C, no OpenCL ------------------------ */

/* Each operator on a validated operator's buffers, already checked. For
 * MaxUnpooling, every index is checked before anything is written. */
clops_status clops_host_depth_to_space(const clops_op_params *p, const clops_host_buffers *b);
clops_status clops_host_space_to_depth(const clops_op_params *p, const clops_host_buffers *b);
clops_status clops_host_max_unpooling(const clops_op_params *p, const clops_host_buffers *b);

/* MaxUnpooling: the number of indices that are negative or past the output. */
uint64_t clops_host_unpool_bad_indices(const clops_op_params *p, const void *idx);

/* MaxUnpooling's zero-fill and scatter in input order (the last duplicate wins),
 * skipping out-of-range indices: the reference result on any backend. */
void clops_host_unpool_scatter(const clops_op_params *p, const void *in, const void *idx, void *out);

/* Reads index k (logical row-major over the indices tensor) as int64; values
 * past INT64_MAX from UINT64 indices come back negative (= out of range). */
int64_t clops_read_index(const clops_tensor *t, const void *base, const uint64_t coord[4]);

/* ---- devices (device.c) ------------------------------------------------------------- */

/* Fills `info`; capabilities named in CLOPS_DISABLE (fp64, int64, fp16, compiler,
 * comma-separated) are reported absent, so every path can be tested anywhere. */
clops_status clops_query_device(cl_platform_id platform, cl_device_id device, unsigned index,
                                clops_device_info *info);

/* The device's identity for cache keys: platform name and version, device name,
 * vendor, version, driver version, address bits, extensions, and the disabled
 * capabilities. Freed by the caller. */
clops_status clops_device_identity(const clops_device_info *info, char **out);

/* ---- contexts (context.c) ------------------------------------------------------------ */
typedef struct clops_program_entry clops_program_entry;

struct clops_context {
    clops_backend backend;
    char *identity;              /* device identity for cache keys (OpenCL only) */
    clops_cache_config cache;
    cl_context cl_ctx;
    cl_device_id device;
    cl_command_queue queue;
    clops_device_info info;      /* device capabilities (zeroed for the host) */
    pthread_mutex_t lock;        /* guards the program table and the tuning table */
    clops_program_entry *programs;
    struct clops_tuning_table *tuning; /* loaded on first lookup */
};

/* ---- programs (program.c) -------------------------------------------------------------- */

/* The program built from `source_name` (one of kernels/ .cl files, after clops_common.cl)
 * with `options`: from the context's table, else from the on-disk cache, else
 * compiled (and stored on disk); kept for the life of the context and owned by it.
 * `*origin` says which ("in-process", "disk cache", "compiled"). */
clops_status clops_program_get(clops_context *ctx, const char *source_name, const char *options,
                               cl_program *out, const char **origin);
void clops_programs_release(clops_context *ctx);
/* clops_common.cl followed by `source_name` (malloc'd, NUL-terminated). */
clops_status clops_program_source(const char *source_name, char **out, size_t *out_len);
/* The disk-cache key of the program built from `source` with `options` on ctx's
 * device (malloc'd; NULL when out of memory). */
char *clops_program_cache_key(const clops_context *ctx, const char *options, const char *source, size_t *len);
/* Until clops_program_list_end, this thread's clops_program_get calls `fn` with
 * the program it was asked for and fails with CLOPS_ERROR_COMPILER_UNAVAILABLE
 * (as on a device without a compiler or binary), building nothing. */
void clops_program_list_begin(clops_program_fn fn, void *user);
void clops_program_list_end(void);

/* ---- scheduler (scheduler.c) and tuning database (store/tune_db.c) ------------------------------- */

/* How DepthToSpace/SpaceToDepth work-items move a row (kernels/depth_space.cl):
 * the device's default, an element loop over a piece of the row, explicit
 * vectors and shuffles over the piece (VEC), or a work-group staging a run of the
 * row in local memory (TILE) so that reads and writes are both contiguous across
 * neighbouring work-items. The last two apply where the variant allows them. */
typedef enum clops_loop { CLOPS_LOOP_DEFAULT, CLOPS_LOOP_ELEMENTS, CLOPS_LOOP_VECTORS, CLOPS_LOOP_TILE } clops_loop;

/* A kernel variant's tunable parameters: positions per work-item (0: the
 * kernel's default), the local size (all 0: the heuristic's) and the loop. */
typedef struct clops_tuning {
    unsigned chunk;
    size_t local[3];
    clops_loop loop;
} clops_tuning;

/* Chooses a local size for `kernel` over a `work_dim`-dimensional range of
 * `items` work-items, and the global size rounded up to it. `want` (may be NULL)
 * is a tuned local size, used when the device and kernel accept it. Never relies
 * on non-uniform work-groups. `*origin` is "tuned" or "heuristic". */
clops_status clops_schedule(const clops_context *ctx, cl_kernel kernel, unsigned work_dim,
                            const uint64_t items[3], const size_t *want, size_t global[3], size_t local[3],
                            const char **origin);

/* This device's tuned parameters for the kernel variant `key`, from the tuning
 * database beside the program cache (unless CLOPS_TUNE=off); false if none. */
bool clops_tuning_lookup(clops_context *ctx, const char *key, clops_tuning *out);
void clops_tuning_release(clops_context *ctx);

/* ---- operator objects (operator.c) ---------------------------------------------------------- */
#define CLOPS_MAX_LAUNCHES 4
#define CLOPS_OPTIONS_MAX 512

/* One kernel launch: kernel, work sizes; arguments are set at execute time. */
typedef struct clops_launch {
    cl_kernel kernel;
    unsigned work_dim;
    size_t global[3];
    size_t local[3];
} clops_launch;

struct clops_operator {
    clops_context *ctx;
    clops_op_params params;
    char options[CLOPS_OPTIONS_MAX];
    char tune_key[CLOPS_OPTIONS_MAX]; /* kernel and variant options (all but CHUNK) */
    const char *kernel_name;
    clops_launch launches[CLOPS_MAX_LAUNCHES];
    unsigned num_launches;
    const char *program_origin;  /* "compiled", "disk cache", "in-process" */
    const char *local_size_origin; /* "tuned" or "heuristic" */
    bool fallback;               /* runs on the host although the context is OpenCL */
    char fallback_reason[512];
    bool offset_64;              /* kernels use ulong offsets */
    bool forced;                 /* the tuner's candidate parameters below apply */
    clops_tuning force;
    unsigned chunk;              /* inner-axis positions per work-item (CHUNK) */
    clops_loop loop;             /* DepthToSpace/SpaceToDepth: the loop that runs (never DEFAULT) */
    bool block_arg;              /* DepthToSpace/SpaceToDepth: the block size is a kernel argument */
    struct {                     /* MaxUnpooling's device state (max_unpooling.c) */
        cl_mem status;           /* status words the kernels raise */
        cl_mem scratch;          /* one uint per output element: the general path's claims */
        cl_uint gen;             /* generation number of the last execution */
        cl_uint claims;          /* every claim in scratch is at most this (max_unpooling.cl) */
        cl_event last;           /* the last execution's final event (retained), or NULL */
        uint64_t bad;            /* without `last`: bad indices the host counted */
    } unpool;
};

/* ---- buffers (cl/buffers.c) ------------------------------------------------------------------ */

/* Checks cl_mem buffers against the spans (missing, too small, aliased through sub-buffers). */
clops_status clops_check_cl_buffers(const clops_op_params *p, const clops_buffers *b);
/* A device buffer holding `bytes` of `host` (or uninitialised when host is NULL); NULL for 0 bytes. */
clops_status clops_device_buffer(clops_context *ctx, cl_mem_flags flags, const void *host, size_t bytes,
                                 cl_mem *out);
/* Maps the operator's buffers for the host after the wait list (blocking): inputs
 * for reading, the output for reading and writing; unmapped by clops_unmap_buffers
 * (which takes what a failed map left too). */
clops_status clops_map_buffers(cl_command_queue q, const clops_op_params *p, const clops_buffers *b, cl_uint nwait,
                               const cl_event *wait, clops_host_buffers *out);
void clops_unmap_buffers(cl_command_queue q, const clops_buffers *b, const clops_host_buffers *mapped);

/* ---- the operators through their table (ops/ops.c) --------------------------------------------- */

/* The device plan of a validated operator (device limits first), or the host
 * path where the device cannot run it. */
clops_status clops_op_prepare(clops_operator *op);
/* Enqueues one execution on cl_mem buffers already checked. */
clops_status clops_op_enqueue(clops_operator *op, const clops_buffers *b, cl_uint nwait, const cl_event *wait,
                              cl_event *event);
/* The host kernel of a validated operator on host buffers already checked. */
clops_status clops_op_host_run(const clops_op_params *p, const clops_host_buffers *b);
clops_status clops_op_last_status(clops_operator *op);
/* Releases the kernels and the plan's own state. */
void clops_op_release(clops_operator *op);

/* MaxUnpooling's plan (ops/max_unpooling.c), in its table entry. */
clops_status clops_max_unpooling_prepare(clops_operator *op);
clops_status clops_max_unpooling_enqueue(clops_operator *op, const clops_buffers *b, cl_uint nwait,
                                         const cl_event *wait, cl_event *event);
/* Whether MaxUnpooling must run on the host here (a reason in `why`): inputs of
 * 2^32-1 elements or more, or scratch past the device's maximum allocation. */
bool clops_max_unpooling_needs_host(const clops_operator *op, char *why, size_t size);
/* Records the last execution: its final event (owned from now on), or NULL and
 * the number of bad indices the host counted. */
void clops_max_unpooling_record(clops_operator *op, cl_event last, uint64_t bad);
/* The status of the last execution (waits for its event). */
clops_status clops_max_unpooling_status(clops_operator *op);
/* Releases the device state (status words, scratch, last event). */
void clops_max_unpooling_release(clops_operator *op);
/* The fallback on mapped buffers: skips bad indices as the device does, counting them. */
clops_status clops_max_unpooling_run_mapped(const clops_op_params *p, const clops_host_buffers *m, uint64_t *bad);

/* Runs a fallback operator on cl_mem buffers (ops/fallback.c): maps them (after
 * the wait list), runs the host kernel, unmaps, and returns an event for the unmaps. */
clops_status clops_host_execute_cl(clops_operator *op, const clops_buffers *b, cl_uint nwait, const cl_event *wait,
                                   cl_event *event);

/* Creates kernel `name` of `program` into the next launch slot of `op`, with
 * `want` (may be NULL) as the tuned local size. */
clops_status clops_operator_add_launch(clops_operator *op, cl_program program, const char *name,
                                       unsigned work_dim, const uint64_t items[3], const size_t *want);

/* An operator whose kernel variant uses `force` instead of the tuned or default
 * parameters: how the tuner builds its candidates. */
clops_status clops_operator_create_forced(clops_context *ctx, const clops_operator_desc *desc,
                                          const clops_tuning *force, clops_operator **out);

/* Sets kernel argument `index`, turning a failure into a status. */
clops_status clops_set_arg(cl_kernel kernel, cl_uint index, size_t size, const void *value);

/* Enqueues launch `l`; `nwait`/`wait` and `event` as clEnqueueNDRangeKernel. */
clops_status clops_enqueue_launch(const clops_operator *op, const clops_launch *l, cl_uint nwait,
                                  const cl_event *wait, cl_event *event);

/* Completes `*event` (if wanted) after the wait list, with nothing to compute. */
clops_status clops_enqueue_nothing(clops_context *ctx, cl_uint nwait, const cl_event *wait, cl_event *event);

/* Sets kernel arguments `first`, `first+1`, ...: four-element size or stride
 * vectors as the kernel's dims4 (uint or ulong per OFFSET_64). */
clops_status clops_set_dims_args(const clops_operator *op, cl_kernel kernel, cl_uint first, unsigned count,
                                 const uint64_t *const dims[]);
/* Sets one offs_t scalar argument. */
clops_status clops_set_offset_arg(const clops_operator *op, cl_kernel kernel, cl_uint index, uint64_t value);

/* Whether offsets into this operator's buffers fit 32-bit unsigned arithmetic. */
bool clops_fits_u32(const clops_op_params *p);

#endif /* CLOPS_INTERNAL_H */
