/*
 * internal.h - the context record, the one struct whose parts belong to several
 * layers of lib/ (docs/architecture.md): the store keeps its cache
 * configuration and tuning table in it (store/tune_db.c), the OpenCL runtime its
 * device, queue and programs (cl/), the public API creates and frees it
 * (api/context.c). Included by store/tune_db.h and by cl/cl.h; the layers'
 * own declarations are in core/core.h, host/host.h, the store's headers, cl/cl.h,
 * ops/ops.h and api/api.h. Not installed.
 */
#ifndef CLOPS_INTERNAL_H
#define CLOPS_INTERNAL_H

#include <pthread.h>
#include <sys/types.h>

#include "core/core.h"
#include "store/cache.h"

/* Longest kernel build options, and tuning key, of an operator. */
#define CLOPS_OPTIONS_MAX 512

/* How DepthToSpace/SpaceToDepth work-items move a row (kernels/depth_space.cl):
 * the device's default, an element loop over a piece of the row, explicit
 * vectors and shuffles over the piece (VEC), or a work-group staging a run of the
 * row in local memory (TILE) so that reads and writes are both contiguous across
 * neighbouring work-items. The last two apply where the variant allows them. */
typedef enum clops_loop { CLOPS_LOOP_DEFAULT, CLOPS_LOOP_ELEMENTS, CLOPS_LOOP_VECTORS, CLOPS_LOOP_TILE } clops_loop;

/* A kernel variant's tunable parameters: positions per work-item (0: the
 * kernel's default), the local size (all 0: the heuristic's), the loop, and
 * the vector-rows kernels' bytes per vector (0: the device class's,
 * cl/params.c; DepthToSpace/SpaceToDepth's "vectors" loop on non-CPU devices). */
typedef struct clops_tuning {
    unsigned chunk;
    size_t local[3];
    clops_loop loop;
    unsigned vector_bytes;
} clops_tuning;

/* What the plans and the scheduler read of the device, besides info.type:
 * compute units, the loop iterations a work-item may run (0: no limit known),
 * the largest work-group (0: the device's own limit) and the work-group size to
 * aim for (0: the scheduler's default for the type). Filled
 * from the device, then from a device profile in test builds (cl/profile.c),
 * so that one device plans as another would. */
typedef struct clops_plan_device {
    unsigned compute_units;
    unsigned max_loops; /* loop iterations after which the device ends a work-item, 0: none known */
    size_t max_group;
    size_t target_group;
    uint64_t local_mem_bytes; /* CL_DEVICE_LOCAL_MEM_SIZE, 0 if the driver did not say */
    unsigned serial_max; /* test profiles only (serial=N): MaxUnpooling's serial-plan limit, 0: its own */
    char profile[96];    /* the profile in effect, "" for none */
} clops_plan_device;

/* ---- the context (created by api/context.c) ---------------------------------------------- */
typedef struct clops_program_entry clops_program_entry;

struct clops_context {
    clops_backend backend;
    clops_context_options options; /* as given, checked (strings below are the context's copies) */
    char *tuning_db;             /* options.tuning_db copied, or NULL */
    char *identity;              /* device identity for cache keys (OpenCL only) */
    clops_cache_config cache;
    cl_context cl_ctx;
    cl_device_id device;
    cl_command_queue queue;
    clops_device_info info;      /* device capabilities (zeroed for the host); info.type is the
                                    type clops plans for (a device profile may change it) */
    clops_plan_device plan;      /* what plans and work sizes are chosen from (cl/profile.c) */
    pthread_mutex_t lock;        /* guards the program table and the tuning table */
    clops_program_entry *programs;
    bool own_program;            /* the application's program is the portable program
                                    (clops_context_use_program): nothing else is built or loaded */
    struct clops_tuning_table *tuning; /* loaded on first lookup */
    /* Whether the context can still reach its device (cl/wait.c, clops_context_usable):
     * `pid` is getpid() at creation, set once (read without a lock): in a child
     * forked after that, every call that would reach OpenCL fails instead of
     * hanging in a driver whose threads stayed in the parent. `lost` is set once
     * by the first execution whose kernel ended with a negative status, with
     * `lost_where` naming it; both under `lost_lock` (any thread may set or read
     * them; its own mutex, so that no path holding `lock` can deadlock on it). */
    pid_t pid;
    pthread_mutex_t lost_lock;
    bool lost;
    char lost_where[512];
};

/* ---- tuning database (store/tune_db.c) ------------------------------------------------------ */

/* This device's tuned parameters for the kernel variant `key`, from the tuning
 * database beside the program cache (unless CLOPS_TUNE=off); false if none. */
bool clops_tuning_lookup(clops_context *ctx, const char *key, clops_tuning *out);
void clops_tuning_release(clops_context *ctx);

#endif /* CLOPS_INTERNAL_H */
