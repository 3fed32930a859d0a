/* prepare.c - a selection of operators x types x block sizes x layouts, the
 * programs it names on a device (clops_programs_list: what `clops kernels list`
 * prints), and building those programs into the disk cache on several threads
 * (clops_programs_prepare: `clops kernels build`, Python's clops.prepare), so
 * that a service pays no compile on its first calls.
 *
 * Which programs a descriptor needs is decided by the library's own rules, once
 * per descriptor: clops_operator_programs (aot.c) walks every size-dependent case
 * of those rules (row lengths, 64-bit offsets: cl/cl.h clops_list_case;
 * MaxUnpooling's plans: max_unpooling.c list_plans). What the selection must
 * still vary is what the rules read from the layout: the tables below name one
 * descriptor per case, crossed with the requested types, blocks, layouts and
 * index types. A new DepthToSpace variant chosen from the layout needs one line
 * in the table. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/aot.h"
#include "api/api.h"
#include "cl/cl.h"
#include "store/cache.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const clops_data_type all_types[] = {
    CLOPS_DATA_TYPE_FLOAT64, CLOPS_DATA_TYPE_FLOAT32, CLOPS_DATA_TYPE_FLOAT16,   CLOPS_DATA_TYPE_INT64,
    CLOPS_DATA_TYPE_INT32,   CLOPS_DATA_TYPE_INT16,   CLOPS_DATA_TYPE_INT8,      CLOPS_DATA_TYPE_UINT64,
    CLOPS_DATA_TYPE_UINT32,  CLOPS_DATA_TYPE_UINT16,  CLOPS_DATA_TYPE_UINT8,     CLOPS_DATA_TYPE_BOOL,
    CLOPS_DATA_TYPE_BFLOAT16, CLOPS_DATA_TYPE_COMPLEX64, CLOPS_DATA_TYPE_COMPLEX128};
static const uint32_t default_blocks[] = {1, 2, 3, 4, 5, 6, 7, 8};

/* A tensor of `type` with `sizes`, in a layout: packed (NULL strides), NHWC
 * (channels innermost) or strided (every element two apart). */
typedef struct tensor {
    clops_tensor_desc desc;
    uint64_t strides[4];
} tensor;

static void make_tensor(tensor *t, clops_data_type type, const uint32_t sizes[4], unsigned layout)
{
    memset(t, 0, sizeof *t);
    t->desc.data_type = type;
    memcpy(t->desc.sizes, sizes, sizeof t->desc.sizes);
    const uint64_t c = sizes[1], h = sizes[2], w = sizes[3];
    if (layout == CLOPS_SELECT_NHWC) {
        const uint64_t s[4] = {h * w * c, 1, w * c, c};
        memcpy(t->strides, s, sizeof s);
    } else if (layout == CLOPS_SELECT_STRIDED) {
        const uint64_t s[4] = {2 * c * h * w, 2 * h * w, 2 * w, 2};
        memcpy(t->strides, s, sizeof s);
    }
    t->desc.strides = layout == CLOPS_SELECT_PACKED ? NULL : t->strides;
}

/* DepthToSpace/SpaceToDepth: the spatial side {1, c, h*b, w*b} and deep side
 * {1, c*b*b, h, w} of each shape. */
static const uint32_t depth_space_cases[][4] = {
    {1, 3, 3, 5}, /* any sizes (the general case) */
    {1, 1, 1, 1}, /* one position: channels are one element apart too */
};

/* MaxUnpooling: the library names the program of every plan any shape can choose
 * (serial, general, windows up to 4x4, every pool cell), so one shape per layout
 * case is enough; windows with a side over 4 (no pool) are named per window size. */
static const uint32_t unpool_in[4] = {1, 2, 3, 5}, unpool_out[4] = {1, 2, 6, 10};
static const clops_indices_layout unpool_index_layouts[] = {CLOPS_INDICES_FLAT, CLOPS_INDICES_PER_PLANE};
static const clops_data_type unpool_index_types[] = {CLOPS_DATA_TYPE_UINT32, CLOPS_DATA_TYPE_UINT64,
                                                     CLOPS_DATA_TYPE_INT64};

static void list_depth_space(clops_context *ctx, clops_program_fn fn, void *user, clops_operator_type op,
                             clops_data_type type, uint32_t b, unsigned layout)
{
    for (size_t s = 0; s < COUNT(depth_space_cases); s++)
        for (int order = 0; order < 2; order++) {
            const uint32_t *q = depth_space_cases[s];
            const uint32_t deep_sizes[4] = {q[0], q[1] * b * b, q[2], q[3]};
            const uint32_t space_sizes[4] = {q[0], q[1], q[2] * b, q[3] * b};
            const bool d2s = op == CLOPS_OPERATOR_DEPTH_TO_SPACE;
            tensor x, y;
            make_tensor(&x, type, d2s ? deep_sizes : space_sizes, layout);
            make_tensor(&y, type, d2s ? space_sizes : deep_sizes, layout);
            clops_depth_to_space_desc d = {&x.desc, &y.desc, b, (clops_depth_space_order)order};
            const clops_operator_desc desc = {op, &d};
            clops_operator_programs(ctx, &desc, fn, user); /* a type the device refuses names nothing */
        }
}

/* One MaxUnpooling shape in `layout`, with the output in that layout and packed. */
static void list_unpool_shape(clops_context *ctx, clops_program_fn fn, void *user, clops_data_type type,
                              clops_data_type index_type, unsigned layout, const uint32_t in[4],
                              const uint32_t outs[4])
{
    for (int out_packed = 0; out_packed < 2; out_packed++) {
        if (!out_packed && layout == CLOPS_SELECT_PACKED) continue;
        for (size_t l = 0; l < COUNT(unpool_index_layouts); l++) {
            tensor x, ind, y;
            make_tensor(&x, type, in, layout);
            make_tensor(&ind, index_type, in, layout);
            make_tensor(&y, type, outs, out_packed ? CLOPS_SELECT_PACKED : layout);
            clops_max_unpooling_desc d = {&x.desc, &ind.desc, &y.desc, unpool_index_layouts[l]};
            const clops_operator_desc desc = {CLOPS_OPERATOR_MAX_UNPOOLING, &d};
            clops_operator_programs(ctx, &desc, fn, user);
        }
    }
}

static bool valid_selection(const clops_program_selection *sel)
{
    if (sel->ops & ~(unsigned)(CLOPS_SELECT_DEPTH_TO_SPACE | CLOPS_SELECT_SPACE_TO_DEPTH | CLOPS_SELECT_MAX_UNPOOLING))
        return false;
    if (sel->layouts & ~(unsigned)(CLOPS_SELECT_PACKED | CLOPS_SELECT_NHWC | CLOPS_SELECT_STRIDED)) return false;
    if ((sel->type_count && !sel->types) || (sel->block_count && !sel->blocks) ||
        (sel->window_count && !sel->windows))
        return false;
    for (size_t i = 0; i < sel->block_count; i++)
        if (sel->blocks[i] == 0) return false;
    for (size_t i = 0; i < sel->type_count; i++) {
        size_t k = 0;
        while (k < COUNT(all_types) && all_types[k] != sel->types[i]) k++;
        if (k == COUNT(all_types)) return false;
    }
    for (size_t i = 0; i < 2 * sel->window_count; i++)
        if (sel->windows[i] == 0 || sel->windows[i] > 64) return false;
    return true;
}

clops_status clops_programs_list(clops_context *ctx, const clops_program_selection *sel, clops_program_fn fn,
                                 void *user)
{
    if (!ctx || !fn) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_programs_list: NULL argument");
    if (ctx->backend != CLOPS_BACKEND_OPENCL)
        return clops_fail(CLOPS_ERROR_WRONG_BACKEND, "clops_programs_list: the host context has no programs");
    const clops_program_selection none = {0};
    if (!sel) sel = &none;
    if (!valid_selection(sel))
        return clops_fail(CLOPS_ERROR_INVALID_SETTING, "clops_programs_list: an unknown operator, layout bit or data "
                          "type, a block size of 0, a window side outside 1..64, or a NULL array with a count");
    const unsigned ops = sel->ops ? sel->ops : CLOPS_SELECT_DEPTH_TO_SPACE | CLOPS_SELECT_SPACE_TO_DEPTH |
                                                   CLOPS_SELECT_MAX_UNPOOLING;
    const unsigned layouts = sel->layouts ? sel->layouts : CLOPS_SELECT_PACKED | CLOPS_SELECT_NHWC |
                                                               CLOPS_SELECT_STRIDED;
    const clops_data_type *types = sel->type_count ? sel->types : all_types;
    const size_t ntypes = sel->type_count ? sel->type_count : COUNT(all_types);
    const uint32_t *blocks = sel->block_count ? sel->blocks : default_blocks;
    const size_t nblocks = sel->block_count ? sel->block_count : COUNT(default_blocks);
    for (size_t t = 0; t < ntypes; t++)
        for (unsigned layout = CLOPS_SELECT_PACKED; layout <= CLOPS_SELECT_STRIDED; layout <<= 1) {
            if (!(layouts & layout)) continue;
            for (size_t b = 0; b < nblocks; b++) {
                if (ops & CLOPS_SELECT_DEPTH_TO_SPACE)
                    list_depth_space(ctx, fn, user, CLOPS_OPERATOR_DEPTH_TO_SPACE, types[t], blocks[b], layout);
                if (ops & CLOPS_SELECT_SPACE_TO_DEPTH)
                    list_depth_space(ctx, fn, user, CLOPS_OPERATOR_SPACE_TO_DEPTH, types[t], blocks[b], layout);
            }
            if (!(ops & CLOPS_SELECT_MAX_UNPOOLING)) continue;
            for (size_t i = 0; i < COUNT(unpool_index_types); i++) {
                list_unpool_shape(ctx, fn, user, types[t], unpool_index_types[i], layout, unpool_in, unpool_out);
                for (size_t w = 0; w < sel->window_count; w++) { /* a windows plan past the pool's cells */
                    const uint32_t in[4] = {1, 2, 64, 64};
                    const uint32_t o[4] = {1, 2, 64 * sel->windows[2 * w], 64 * sel->windows[2 * w + 1]};
                    list_unpool_shape(ctx, fn, user, types[t], unpool_index_types[i], layout, in, o);
                }
            }
        }
    return CLOPS_SUCCESS;
}

/* ---- building them ------------------------------------------------------------------------ */

typedef struct job {
    char *source, *options;
} job;

typedef struct prepare_run {
    unsigned device;
    job *jobs;
    size_t count, capacity, next, done;
    bool oom;
    pthread_mutex_t lock;
    clops_prepare_fn fn;
    void *user;
    clops_prepare_report *report;
} prepare_run;

/* The listing's callback: each program once (the portable program only where a
 * selected block is past CLOPS_SPECIALISED_BLOCK_MAX: what such blocks run). */
static void add_job(void *user, const char *source, const char *options)
{
    prepare_run *r = user;
    for (size_t i = 0; i < r->count; i++)
        if (strcmp(r->jobs[i].source, source) == 0 && strcmp(r->jobs[i].options, options) == 0) return;
    if (r->count == r->capacity) {
        const size_t cap = r->capacity ? 2 * r->capacity : 64;
        job *grown = realloc(r->jobs, cap * sizeof *grown);
        if (!grown) {
            r->oom = true;
            return;
        }
        r->jobs = grown, r->capacity = cap;
    }
    job *j = &r->jobs[r->count];
    j->source = strdup(source);
    j->options = strdup(options);
    if (j->source && j->options) {
        r->count++;
    } else {
        free(j->source), free(j->options);
        r->oom = true;
    }
}

/* Builds one program on ctx: "disk cache" when its binary was there already,
 * "compiled" when it was built and is now stored; else a failure. */
static clops_status build_one(clops_context *ctx, const job *j, const char **origin)
{
    cl_program program = NULL;
    clops_status st = clops_program_get(ctx, j->source, j->options, &program, origin);
    if (st != CLOPS_SUCCESS || strcmp(*origin, "compiled") != 0) return st;
    /* The store is silent about failures (a full disk, a bound that evicts it): look. */
    if (!clops_program_in_cache(ctx, j->source, j->options))
        return clops_fail(CLOPS_ERROR_CACHE_IO, "compiled, but its binary is not in the cache %s afterwards (a full "
                          "disk, or a size bound that evicted it)", ctx->cache.dir);
    return CLOPS_SUCCESS;
}

static void *worker(void *arg)
{
    prepare_run *r = arg;
    clops_context *ctx = NULL;
    const clops_status ctx_st = clops_context_create_device(r->device, &ctx); /* its own lock and program table */
    char ctx_why[512];
    snprintf(ctx_why, sizeof ctx_why, "%s", ctx_st == CLOPS_SUCCESS ? "" : clops_last_error_message());
    for (;;) {
        pthread_mutex_lock(&r->lock);
        const size_t i = r->next < r->count ? r->next++ : r->count;
        pthread_mutex_unlock(&r->lock);
        if (i == r->count) break;
        const char *origin = "";
        clops_status st = ctx_st;
        const char *why = ctx_why;
        if (st == CLOPS_SUCCESS) {
            st = build_one(ctx, &r->jobs[i], &origin);
            why = st == CLOPS_SUCCESS ? "" : clops_last_error_message();
        }
        pthread_mutex_lock(&r->lock);
        r->done++;
        if (st != CLOPS_SUCCESS) r->report->failed++;
        else if (strcmp(origin, "compiled") == 0) r->report->built++;
        else r->report->cached++;
        if (r->fn) {
            const clops_prepared_program p = {r->jobs[i].source, r->jobs[i].options,
                                              st == CLOPS_SUCCESS ? origin : "", st, why ? why : "",
                                              r->done, r->count};
            r->fn(r->user, &p);
        }
        pthread_mutex_unlock(&r->lock);
    }
    clops_context_free(ctx);
    return NULL;
}

clops_status clops_programs_prepare(unsigned device_index, const clops_program_selection *sel, unsigned jobs,
                                    clops_prepare_fn fn, void *user, clops_prepare_report *report)
{
    clops_prepare_report scratch;
    if (!report) report = &scratch;
    memset(report, 0, sizeof *report);
    clops_context *ctx = NULL;
    clops_status st = clops_context_create_device(device_index, &ctx);
    if (st != CLOPS_SUCCESS) return st;
    if (ctx->cache.mode != CLOPS_CACHE_READ_WRITE) {
        st = clops_fail(CLOPS_ERROR_CACHE_UNAVAILABLE, "the program cache is not writable, nothing to prepare: %s",
                        ctx->cache.status);
        clops_context_free(ctx);
        return st;
    }
    prepare_run r;
    memset(&r, 0, sizeof r);
    r.device = device_index, r.fn = fn, r.user = user, r.report = report;
    st = clops_programs_list(ctx, sel, add_job, &r);
    clops_context_free(ctx);
    if (st == CLOPS_SUCCESS && r.oom) st = clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "clops_programs_prepare: out of memory");
    report->total = r.count;
    if (st == CLOPS_SUCCESS && r.count) {
        if (!jobs) {
            const long cores = sysconf(_SC_NPROCESSORS_ONLN);
            jobs = cores > 0 ? (unsigned)cores : 1;
        }
        if (jobs > r.count) jobs = (unsigned)r.count;
        if (jobs > 256) jobs = 256;
        pthread_t threads[256];
        unsigned started = 0;
        pthread_mutex_init(&r.lock, NULL);
        for (; started < jobs; started++)
            if (pthread_create(&threads[started], NULL, worker, &r) != 0) break;
        if (started == 0) worker(&r); /* no thread to be had: this one builds them all */
        for (unsigned t = 0; t < started; t++) pthread_join(threads[t], NULL);
        pthread_mutex_destroy(&r.lock);
        if (report->failed)
            st = clops_fail(CLOPS_ERROR_BUILD_FAILED, "%zu of %zu programs could not be prepared", report->failed,
                            report->total);
    }
    for (size_t i = 0; i < r.count; i++) free(r.jobs[i].source), free(r.jobs[i].options);
    free(r.jobs);
    return st;
}
