/* ops.h - the operators layer (lib/ops/): the operator object, validation, the
 * launch helpers (plan.c), the fallback on mapped buffers (fallback.c), and the
 * operator table: one entry per operator type, each filled in by the operator's
 * own file (depth_space.c, max_unpooling.c). Everything that differs between
 * operators is reached through this table, like ggml's backend table; adding an
 * operator adds its file, its kernel and one line in op_table.c. Not installed. */
#ifndef CLOPS_OPS_H
#define CLOPS_OPS_H

#include "cl/cl.h"
#include "host/host.h"

/* ---- operator objects (created by api/operator.c) ------------------------------------------ */
#define CLOPS_MAX_LAUNCHES 6

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
    const char *local_size_origin; /* "tuned", "heuristic" or "fixed by the tile kernel" */
    bool fallback;               /* runs on the host although the context is OpenCL */
    char *fallback_reason;       /* why (malloc'd, whole), or NULL */
    struct clops_host_worker *host_worker; /* fallback: its jobs and failures (fallback.c), or NULL */
    bool reading_back;           /* in execute_host on a device: last_status's messages say nothing was written */
    struct {                     /* the caller's wait-list events since the last last_status (ops.c) */
        cl_event *events;        /* retained; completed ones dropped at each execute and last_status */
        size_t count, cap;
        cl_int failed;           /* the first one seen failed (its execution status), or 0 */
    } waits;
    bool offset_64;              /* kernels use ulong offsets */
    bool forced;                 /* the tuner's candidate parameters below apply */
    clops_tuning force;
    unsigned chunk;              /* inner-axis positions per work-item (CHUNK) */
    clops_loop loop;             /* DepthToSpace/SpaceToDepth: the loop that runs (never DEFAULT) */
    unsigned vector_bytes;       /* DepthToSpace/SpaceToDepth: bytes per vector of the vector-rows kernels
                                    when they run (VW x element size), else 0 */
    bool portable;               /* the plan runs the portable program's kernels (portable.c) */
    char portable_kernels[CLOPS_MAX_LAUNCHES][32]; /* their names, kernel_name pointing at the first */
    struct {                     /* MaxUnpooling's device state (max_unpooling.c) */
        cl_mem status;           /* status words the kernels raise */
        cl_mem scratch;          /* the general path's buckets (bucket_plan) or mark's words, NULL for serial */
        bool mark;               /* the plan has mark and place (max_unpooling.c make_plan) */
        unsigned group_limit;    /* pool's tile kernel's CL_KERNEL_WORK_GROUP_SIZE where it refused the
                                    planned tile (its tiles are then planned within it), else 0 */
        cl_uint mark_period;     /* executions between clears of mark's words (mark_period) */
        cl_mem indices;          /* the last execution's indices (retained), for last_status's message */
        cl_uint gen;             /* generation number of the last execution */
        cl_event last;           /* the last execution's final event (retained), or NULL */
        cl_event chained;        /* the event `last`'s execution chained on (retained), or NULL */
        uint64_t bad;            /* without `last`: bad indices the host counted */
    } unpool;
};

/* ---- validation (validate.c) ---------------------------------------------------------------- */

/* Validates `desc` into `out` (docs/semantics.md, "Error model": the order of the checks). */
clops_status clops_validate_operator(const clops_operator_desc *desc, clops_op_params *out);

/* Checks host buffers against the spans (missing, too small, aliased). */
clops_status clops_check_host_buffers(const clops_op_params *p, const clops_host_buffers *b);

/* ---- the operators through their table (ops.c) ----------------------------------------------- */

/* The device plan of a validated operator (device limits first), or the host
 * path where the device cannot run it. */
clops_status clops_op_prepare(clops_operator *op);
/* Enqueues one execution on cl_mem buffers already checked. */
clops_status clops_op_enqueue(clops_operator *op, const clops_buffers *b, cl_uint nwait, const cl_event *wait,
                              cl_event *event);
/* The host kernel of a validated operator on host buffers already checked. */
clops_status clops_op_host_run(const clops_op_params *p, const clops_host_buffers *b);
clops_status clops_op_last_status(clops_operator *op);
/* After a wait on the operator's own kernels that returned `st` on this thread:
 * a kernel that ended with a negative execution status marks the context lost,
 * at this operator and kernel (cl/cl.h, clops_context_after_wait) - unless an
 * event of the caller's wait list of an execution since the last last_status
 * failed (rusticl gives a command behind it that event's own status, not
 * CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST): then CLOPS_ERROR_DEVICE_LOST
 * naming that event's status, and the context goes on. Returns `st` otherwise. */
clops_status clops_op_after_wait(clops_operator *op, clops_status st);
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
/* For the `count` launches of op's plan, named by role in kernel[] (api/introspect.h
 * clops_introspect_kernel_role: the portable program's clops_windows_4 as windows):
 * whether each one's work reached the output of the last execution, from the
 * status words: the general path when it ran, windows, pool or planes when
 * nothing after them rewrote the output. */
clops_status clops_max_unpooling_live(clops_operator *op, unsigned count, const char (*kernel)[64], bool *live);
/* Releases the device state (status words, scratch, last event). */
void clops_max_unpooling_release(clops_operator *op);
/* The fallback on mapped buffers: skips bad indices as the device does, counting them. */
/* Test seam: when not 0, the tile shift of MaxUnpooling's bucketed general path
 * (tiles of 2^shift output elements) for operators created after it is set. */
extern unsigned clops_unpool_tile_shift;
/* Test seam: when not 0 and below the rule's, the executions between clears of
 * mark's words (max_unpooling.c mark_period) for operators created after it is set. */
extern unsigned clops_unpool_mark_period;
/* Test seam: MaxUnpooling's planes plan (max_unpooling.cl planes) for operators
 * created after it is set: CLOPS_PLANES_AUTO (0, the rule), CLOPS_PLANES_NEVER,
 * or CLOPS_PLANES_ALWAYS (packed tensors, on any device, any number of planes). */
enum { CLOPS_PLANES_AUTO, CLOPS_PLANES_NEVER, CLOPS_PLANES_ALWAYS };
extern int clops_unpool_planes;
clops_status clops_max_unpooling_run_mapped(const clops_op_params *p, const clops_host_buffers *m, uint64_t *bad);

/* ---- the fallback (fallback.c) and the launch helpers (plan.c) ------------------------------ */

/* Runs a fallback operator on cl_mem buffers without waiting: once the wait list
 * completed, a thread of the process-wide pool maps them, runs the host kernel
 * and unmaps, the operator's executions one after another in execute order;
 * `*event` completes after that (fallback.c). */
clops_status clops_host_execute_cl(clops_operator *op, const clops_buffers *b, cl_uint nwait, const cl_event *wait,
                                   cl_event *event);
/* The status of a fallback operator's executions on cl_mem since the last call:
 * waits for all of them within one deadline (on timeout, those not started are
 * given up); any failure among them, else the last one's report. */
clops_status clops_host_last_status(clops_operator *op);
/* The operator is freed: its jobs still run, then the pool frees its list (never waits). */
void clops_host_release(clops_operator *op);

/* Creates kernel `name` of `program` into the next launch slot of `op`, with
 * `want` (may be NULL) as the tuned local size. */
clops_status clops_operator_add_launch(clops_operator *op, cl_program program, const char *name,
                                       unsigned work_dim, const uint64_t items[3], const size_t *want);

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

/* Whether offsets into this operator's buffers fit 32-bit unsigned arithmetic:
 * every span and count at most CLOPS_U32_OFFSET_LIMIT elements. */
bool clops_fits_u32(const clops_op_params *p);
#define CLOPS_U32_OFFSET_LIMIT (UINT32_MAX - (UINT64_C(1) << 24))

/* DepthToSpace/SpaceToDepth: the largest block size built into a specialised
 * program (-DBLOCK=b, its loops unrolled over b); past it the portable
 * program, built once whatever the block (depth_space.c prepare). Networks use
 * 2 to 8, 16 at most; a hostile model's blocksize must not cost minutes of builds. */
#define CLOPS_SPECIALISED_BLOCK_MAX 16u

/* ---- the portable program (portable.c) -------------------------------------------------------- */

/* Whether every operator of ctx runs the portable program: CLOPS_DISABLE=specialised,
 * or the application's own program (clops_context_use_program). */
bool clops_portable_only(const clops_context *ctx);
/* The portable plans of a validated operator (an entry's `portable`); COMPILER_UNAVAILABLE
 * where the portable program cannot take its tensors (offsets past 32 bits). */
clops_status clops_portable_depth_space(clops_operator *op);
clops_status clops_portable_max_unpooling(clops_operator *op);
/* Whether `program` has every kernel of the portable program (BUILD_FAILED naming one it lacks). */
clops_status clops_portable_check(cl_program program);
clops_status clops_portable_depth_space_enqueue(clops_operator *op, const clops_buffers *b, cl_uint nwait,
                                                const cl_event *wait, cl_event *event);

/* ---- the table ------------------------------------------------------------------------------- */

typedef struct clops_op_entry {
    clops_operator_type type;
    /* Copies the descriptor's attributes into `p` and names its tensors (`*idx`
     * stays NULL for an operator without indices); NULL_ARGUMENT for a missing one. */
    clops_status (*unpack)(const void *desc, clops_op_params *p, const clops_tensor_desc **in,
                           const clops_tensor_desc **idx, const clops_tensor_desc **out);
    /* The output sizes the operator's rule gives for a validated input and the
     * attributes (failing on a broken rule); NULL where the caller gives them. */
    clops_status (*output_sizes)(const clops_op_params *p, uint64_t out[4]);
    /* The operator's own rules on validated tensors, the output shape included. */
    clops_status (*check)(const clops_op_params *p);
    /* The host kernel (lib/host/) on buffers already checked. */
    clops_status (*host_run)(const clops_op_params *p, const clops_host_buffers *b);
    /* On mapped device buffers instead of host_run (NULL: host_run), counting
     * the bad indices that record_host keeps for clops_operator_last_status. */
    clops_status (*run_mapped)(const clops_op_params *p, const clops_host_buffers *m, uint64_t *bad);
    void (*record_host)(clops_operator *op, cl_event last, uint64_t bad);
    /* Whether prepare may pass a local size from the tuning database (or a forced tuning) to the
     * scheduler. clops_schedule calls any wanted local size it accepts "tuned"; an operator without
     * this flag wants only sizes of its own plan (MaxUnpooling's one work-item groups on a CPU), which
     * clops_op_prepare reports as "heuristic" instead, tuning on or off (issue 33). */
    bool tunes_local_size;
    /* Whether the device cannot take this operator (reason in `why`); NULL: it can. */
    bool (*needs_host)(const clops_operator *op, char *why, size_t size);
    /* The OpenCL plan: program, kernels and work sizes; then one execution. */
    clops_status (*prepare)(clops_operator *op);
    /* The plan on the portable program (portable.c), where the specialised one cannot be had. */
    clops_status (*portable)(clops_operator *op);
    clops_status (*enqueue)(clops_operator *op, const clops_buffers *b, cl_uint nwait, const cl_event *wait,
                            cl_event *event);
    /* The last execution's status (NULL: always success); the plan's own state freed. */
    clops_status (*last_status)(clops_operator *op);
    void (*release)(clops_operator *op);
} clops_op_entry;

/* The entries, each defined in the operator's file. */
extern const clops_op_entry clops_depth_to_space_op, clops_space_to_depth_op; /* depth_space.c */
extern const clops_op_entry clops_max_unpooling_op;                           /* max_unpooling.c */

/* The entry for `type`, or NULL for an unknown type (op_table.c). */
const clops_op_entry *clops_op_lookup(clops_operator_type type);

#endif /* CLOPS_OPS_H */
