/* tune.c - the tuner, on top of the operators: for each DepthToSpace/SpaceToDepth
 * kernel variant (operator, order, element width, block size) it times candidate
 * parameters (chunk length x local size x loop: elements, explicit vectors, the
 * local-memory tile; then the vector-rows kernels' vector width), checks every
 * output against the host kernels, measures the default and the winner again
 * alternately, and keeps a winner that beats the default in the tuning database
 * (store/tune_db.c). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "cl/cl.h"
#include "store/cache.h"
#include "store/tune_db.h"

/* ---- the tuner ----------------------------------------------------------------------------------- */

static double seconds_of(cl_event e)
{
    cl_ulong start = 0, end = 0;
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL);
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL);
    return end > start ? (double)(end - start) * 1e-9 : 0.0;
}

static int compare_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define TUNE_REPS 5

/* Median seconds of TUNE_REPS profiled runs of `op`, after one warm-up; 0 and
 * a status on failure. */
static clops_status time_op(clops_operator *op, const clops_buffers *b, double *median)
{
    double t[TUNE_REPS];
    for (int r = -1; r < TUNE_REPS; r++) {
        cl_event e = NULL;
        clops_status st = clops_operator_execute(op, b, 0, NULL, &e);
        if (st != CLOPS_SUCCESS) return st;
        const cl_int err = clWaitForEvents(1, &e);
        if (r >= 0) t[r] = seconds_of(e);
        clReleaseEvent(e);
        if (err != CL_SUCCESS) return clops_fail_cl(err, "clWaitForEvents");
    }
    qsort(t, TUNE_REPS, sizeof t[0], compare_double);
    *median = t[TUNE_REPS / 2];
    return CLOPS_SUCCESS;
}

/* One variant to tune: operator, order, element type, block size. */
typedef struct tune_case {
    clops_operator_type type;
    clops_depth_space_order order;
    clops_data_type dtype;
    uint32_t block;
} tune_case;

/* The case's packed input and output: a spatial tensor {1, 4, side, side} of
 * about `bytes` and the deep tensor SpaceToDepth's rule makes of it, the deep
 * one as DepthToSpace's input, the spatial one as SpaceToDepth's. */
static clops_status case_shapes(const tune_case *c, size_t bytes, clops_tensor_desc *in, clops_tensor_desc *out)
{
    const uint32_t b = c->block, es = (uint32_t)clops_data_type_size(c->dtype);
    uint64_t hw = bytes / es / (4ull * b * b); /* elements per plane of the b*b*4-channel side */
    uint32_t side = 1;
    while ((uint64_t)(side + 1) * (side + 1) <= hw) side++;
    side = side / b * b;
    if (side < b) side = b;
    clops_tensor_desc wide = {c->dtype, {1, 4, side, side}, NULL}, deep = wide;
    const clops_space_to_depth_desc sd = {&wide, NULL, b, c->order};
    const clops_operator_desc s2d = {CLOPS_OPERATOR_SPACE_TO_DEPTH, &sd};
    const clops_status st = clops_operator_output_sizes(&s2d, deep.sizes);
    if (st != CLOPS_SUCCESS) return st;
    *in = c->type == CLOPS_OPERATOR_DEPTH_TO_SPACE ? deep : wide;
    *out = c->type == CLOPS_OPERATOR_DEPTH_TO_SPACE ? wide : deep;
    return CLOPS_SUCCESS;
}

/* The programs a case's candidates compiled (and so added to the disk cache),
 * by build options; the losers' entries are removed when the case is done. */
#define MAX_CANDIDATES 48
typedef struct compiled_set {
    char options[MAX_CANDIDATES][CLOPS_OPTIONS_MAX];
    size_t count;
} compiled_set;

/* Removes from the disk cache every program of `set` but the ones built with
 * `keep_a` or `keep_b` (the default's and the kept winner's; NULL: none). */
static void discard_losers(clops_context *ctx, const compiled_set *set, const char *keep_a, const char *keep_b)
{
    char *source = NULL;
    size_t source_len;
    if (set->count == 0 || clops_program_source("depth_space.cl", &source, &source_len) != CLOPS_SUCCESS) return;
    for (size_t i = 0; i < set->count; i++) {
        const char *o = set->options[i];
        if ((keep_a && strcmp(o, keep_a) == 0) || (keep_b && strcmp(o, keep_b) == 0)) continue;
        size_t key_len;
        char *key = clops_program_cache_key(ctx, o, source, &key_len);
        if (key) clops_cache_discard(&ctx->cache, key, key_len);
        free(key);
    }
    free(source);
}

/* What every candidate of one case shares: the operator, its buffers, the
 * host kernels' output (`want`), room to read the device's back (`got`), and
 * the programs compiled so far. */
typedef struct case_run {
    clops_context *ctx;
    const clops_operator_desc *desc;
    const clops_buffers *b;
    size_t out_bytes;
    const unsigned char *want;
    unsigned char *got;
    compiled_set *compiled;
} case_run;

/* A candidate measured: its seconds (0: no candidate), the parameters it ran
 * with (`used`), its tuning key and build options. */
typedef struct measured {
    double seconds;
    clops_tuning used;
    char key[CLOPS_OPTIONS_MAX], options[CLOPS_OPTIONS_MAX];
} measured;

/* Builds and times one candidate, checking its output against `want` (the
 * output is filled with a pattern first, so a candidate that leaves any of it
 * unwritten fails); a program it compiled is added to `compiled`. A variant
 * that cannot take the forced loop or vector width is no candidate: success
 * with 0 seconds. A fallback to the host or a wrong output is an error. */
static clops_status try_candidate(const case_run *r, const clops_tuning *force, measured *m)
{
    clops_operator *op = NULL;
    clops_status st = clops_operator_create_forced(r->ctx, r->desc, force, &op);
    if (st == CLOPS_SUCCESS && !op->fallback && strcmp(op->program_origin, "compiled") == 0 &&
        r->compiled->count < MAX_CANDIDATES)
        snprintf(r->compiled->options[r->compiled->count++], CLOPS_OPTIONS_MAX, "%s", op->options);
    if (st == CLOPS_SUCCESS) snprintf(m->options, sizeof m->options, "%s", op->options);
    if (st == CLOPS_SUCCESS && op->fallback) st = clops_fail(CLOPS_ERROR_BUILD_FAILED, "%s", op->fallback_reason ? op->fallback_reason : "");
    m->seconds = 0;
    if (st == CLOPS_SUCCESS && ((force->loop != CLOPS_LOOP_DEFAULT && op->loop != force->loop) ||
                                (force->vector_bytes && op->vector_bytes != force->vector_bytes))) {
        clops_operator_free(op); /* the variant cannot take this loop or width: not a candidate (0 seconds) */
        return CLOPS_SUCCESS;
    }
    const unsigned char pattern = 0xa5;
    if (st == CLOPS_SUCCESS) {
        const cl_int err = clEnqueueFillBuffer(r->ctx->queue, r->b->output, &pattern, 1, 0, r->out_bytes, 0, NULL,
                                               NULL);
        if (err != CL_SUCCESS) st = clops_fail_cl(err, "clEnqueueFillBuffer");
    }
    if (st == CLOPS_SUCCESS) st = time_op(op, r->b, &m->seconds);
    if (st == CLOPS_SUCCESS) {
        const cl_int err = clEnqueueReadBuffer(r->ctx->queue, r->b->output, CL_TRUE, 0, r->out_bytes, r->got, 0,
                                               NULL, NULL);
        if (err != CL_SUCCESS) st = clops_fail_cl(err, "clEnqueueReadBuffer");
        else if (memcmp(r->got, r->want, r->out_bytes) != 0)
            st = clops_fail(CLOPS_ERROR_INTERNAL,
                            "candidate chunk %u local %zu,%zu,%zu loop %d vector bytes %u gave a wrong result",
                            op->chunk, op->launches[0].local[0], op->launches[0].local[1], op->launches[0].local[2],
                            (int)op->loop, op->vector_bytes);
    }
    if (st == CLOPS_SUCCESS) {
        snprintf(m->key, sizeof m->key, "%s", op->tune_key); /* as the operator looks itself up */
        m->used.chunk = op->chunk;
        for (int d = 0; d < 3; d++) m->used.local[d] = op->launches[0].local[d];
        m->used.loop = op->loop;
        m->used.vector_bytes = op->vector_bytes;
    }
    clops_operator_free(op);
    return st;
}

/* The search so far: the fastest candidate (`best`), and the fastest that ran
 * the vector-rows kernels, as forced (`rows_force`), whose vector width the
 * last round varies. */
typedef struct search {
    double best_s, rows_s;
    clops_tuning rows_force;
    unsigned rows_width; /* the vector bytes it ran with */
    char best_options[CLOPS_OPTIONS_MAX];
} search;

/* Tries `force` and keeps it in `best` and `s` where it is the fastest so far. */
static clops_status consider(const case_run *r, const clops_tuning *force, search *s, clops_tuning_entry *best,
                             measured *m)
{
    const clops_status st = try_candidate(r, force, m);
    if (st != CLOPS_SUCCESS || m->seconds <= 0) return st;
    if (s->best_s == 0 || m->seconds < s->best_s) {
        s->best_s = m->seconds;
        snprintf(best->key, sizeof best->key, "%s", m->key);
        best->value = m->used;
        memcpy(s->best_options, m->options, sizeof m->options);
    }
    if (m->used.vector_bytes && (s->rows_s == 0 || m->seconds < s->rows_s)) {
        s->rows_s = m->seconds;
        s->rows_force = *force;
        s->rows_width = m->used.vector_bytes;
    }
    return st;
}

/* Times the candidates of one case into `best` and `s`: the heuristic first
 * (the baseline, `*dflt`), then the local-memory tile (its group size is
 * fixed), then chunk x local size x element loop or explicit vectors (where the
 * variant allows them), and last the vector-rows kernels' other vector widths
 * at the chunk and local size of the fastest candidate that ran them (a
 * coordinate step, not the whole cross: at most 3 candidates more per
 * variant, none where those kernels do not run, as on CPUs). */
static clops_status search_case(const case_run *r, size_t es, clops_tuning_entry *best, search *s, measured *dflt)
{
    /* 1 position per work-item is the non-CPU default; the others suit CPUs. */
    static const unsigned chunk_bytes[] = {0, 128, 512, 2048};
    static const size_t locals[][3] = {{1, 16, 1}, {1, 64, 1}, {4, 64, 1}, {1, 256, 1}};
    /* Bytes per vector; one that the variant's elements cannot take (the plan
     * keeps the kernels' vector types: 2, 4, 8 or 16 lanes) is no candidate. */
    static const unsigned widths[] = {4, 8, 16, 32};
    const clops_tuning none = {0, {0, 0, 0}, CLOPS_LOOP_DEFAULT, 0};
    clops_status st = consider(r, &none, s, best, dflt);
    measured m;
    const clops_tuning tile = {0, {0, 0, 0}, CLOPS_LOOP_TILE, 0};
    if (st == CLOPS_SUCCESS) st = consider(r, &tile, s, best, &m);
    for (size_t ci = 0; st == CLOPS_SUCCESS && ci < sizeof chunk_bytes / sizeof chunk_bytes[0]; ci++)
        for (size_t k = 0; st == CLOPS_SUCCESS && k < 2 * sizeof locals / sizeof locals[0]; k++) {
            clops_tuning force = {chunk_bytes[ci] > es ? (unsigned)(chunk_bytes[ci] / es) : 1,
                                  {locals[k / 2][0], locals[k / 2][1], locals[k / 2][2]},
                                  k % 2 ? CLOPS_LOOP_VECTORS : CLOPS_LOOP_ELEMENTS, 0};
            if (force.loop == CLOPS_LOOP_VECTORS && force.chunk < 8) continue; /* shorter than any vector */
            st = consider(r, &force, s, best, &m);
        }
    /* the fastest vector-rows candidate before this round (consider() may replace it during it) */
    const double rows_s = s->rows_s;
    const clops_tuning rows = s->rows_force;
    const unsigned rows_width = s->rows_width;
    for (size_t w = 0; st == CLOPS_SUCCESS && rows_s > 0 && w < sizeof widths / sizeof widths[0]; w++) {
        if (widths[w] == rows_width) continue; /* measured already */
        clops_tuning force = rows;
        force.vector_bytes = widths[w];
        st = consider(r, &force, s, best, &m);
    }
    return st;
}

static clops_status tune_case_run(clops_context *ctx, const tune_case *c, size_t bytes, clops_tuning_entry *best,
                                  clops_tune_result *report, bool *keep, compiled_set *compiled)
{
    clops_tensor_desc in, out;
    clops_status st = case_shapes(c, bytes, &in, &out);
    if (st != CLOPS_SUCCESS) return st;
    const clops_depth_to_space_desc d = {&in, &out, c->block, c->order}; /* same layout as space_to_depth's */
    const clops_operator_desc desc = {c->type, &d};
    clops_op_params p;
    st = clops_validate_operator(&desc, &p);
    if (st != CLOPS_SUCCESS) return st;
    const size_t in_bytes = (size_t)p.input.span_bytes, out_bytes = (size_t)p.output.span_bytes;
    unsigned char *x = malloc(in_bytes), *want = malloc(out_bytes), *got = malloc(out_bytes);
    clops_buffers b = {NULL, NULL, NULL};
    cl_int err = CL_SUCCESS;
    if (!x || !want || !got) st = clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "tuning buffers of %zu bytes", out_bytes);
    if (st == CLOPS_SUCCESS) {
        uint64_t s = 0x9e3779b97f4a7c15ull; /* any bits: the check is bitwise */
        for (size_t i = 0; i < in_bytes; i++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            x[i] = (unsigned char)s;
        }
        const clops_host_buffers hb = {x, in_bytes, NULL, 0, want, out_bytes};
        st = clops_op_host_run(&p, &hb);
    }
    if (st == CLOPS_SUCCESS) {
        b.input = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, in_bytes, x, &err);
        if (b.input) b.output = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_WRITE, out_bytes, NULL, &err);
        if (!b.output) st = clops_fail_cl(err, "clCreateBuffer");
    }
    const case_run r = {ctx, &desc, &b, out_bytes, want, got, compiled};
    search s;
    memset(&s, 0, sizeof s);
    measured dflt;
    memset(&dflt, 0, sizeof dflt);
    if (st == CLOPS_SUCCESS) st = search_case(&r, clops_data_type_size(c->dtype), best, &s, &dflt);
    double best_s = s.best_s, default_s = dflt.seconds;
    /* The reported pair is measured afresh, default and winner alternating: the
     * best of many noisy candidates is biased upwards by the choosing itself. */
    double again_best = 0, again_default = 0;
    for (int i = 0; st == CLOPS_SUCCESS && i < 3; i++) {
        const clops_tuning none = {0, {0, 0, 0}, CLOPS_LOOP_DEFAULT, 0};
        measured m_default, m_best;
        st = try_candidate(&r, &none, &m_default);
        if (st == CLOPS_SUCCESS) st = try_candidate(&r, &best->value, &m_best);
        if (st == CLOPS_SUCCESS && (again_default == 0 || m_default.seconds < again_default))
            again_default = m_default.seconds;
        if (st == CLOPS_SUCCESS && (again_best == 0 || m_best.seconds < again_best)) again_best = m_best.seconds;
    }
    if (st == CLOPS_SUCCESS && again_best > 0 && again_default > 0) {
        best_s = again_best;
        default_s = again_default;
    }
    /* A winner that does not beat the default when measured again is not kept:
     * the variant stays on the heuristic. */
    *keep = best_s > 0 && best_s < default_s;
    /* The cache keeps the default's program and a kept winner's; the other
     * candidates were compiled for this run only. */
    discard_losers(ctx, compiled, dflt.options[0] ? dflt.options : NULL, *keep ? s.best_options : NULL);
    if (st == CLOPS_SUCCESS) {
        const double moved = 2.0 * (double)out_bytes;
        best->gbps = best_s > 0 ? moved / best_s * 1e-9 : 0;
        best->default_gbps = default_s > 0 ? moved / default_s * 1e-9 : 0;
        report->chunk = best->value.chunk;
        memcpy(report->local, best->value.local, sizeof report->local);
        report->vector_bytes = best->value.vector_bytes;
        report->gbps = best->gbps;
        report->default_gbps = best->default_gbps;
    }
    if (b.input) clReleaseMemObject(b.input);
    if (b.output) clReleaseMemObject(b.output);
    free(x);
    free(want);
    free(got);
    return st;
}

clops_status clops_tune_with_options(const clops_context_options *opts, unsigned device_index, int quick,
                                    clops_tune_progress_fn progress, void *user)
{
    clops_device_info *infos = NULL;
    size_t count = 0;
    /* The caller's options, resolved once: with opts, no environment is read. */
    clops_context_options o;
    clops_status st = clops_options_resolve(opts, &o);
    if (st == CLOPS_SUCCESS) st = clops_device_list_alloc(o.disable, &infos, &count);
    if (st == CLOPS_SUCCESS && device_index >= count)
        st = clops_fail(CLOPS_ERROR_INVALID_DEVICE_SELECTION, "device %u requested, %zu available", device_index, count);
    if (st != CLOPS_SUCCESS) {
        free(infos);
        return st;
    }
    /* Its own context and a profiling queue on the device. */
    cl_int err;
    const clops_device_info *info = &infos[device_index];
    cl_context cl_ctx = clCreateContext(NULL, 1, &info->device, NULL, NULL, &err);
    cl_command_queue q = cl_ctx ? clCreateCommandQueue(cl_ctx, info->device, CL_QUEUE_PROFILING_ENABLE, &err) : NULL;
    clops_context *ctx = NULL;
    if (!q) st = clops_fail_cl(err, cl_ctx ? "clCreateCommandQueue" : "clCreateContext");
    else st = clops_context_create_from_cl_with_options(cl_ctx, info->device, q, &o, &ctx);
    if (q) clReleaseCommandQueue(q);
    if (cl_ctx) clReleaseContext(cl_ctx);
    free(infos);
    if (st != CLOPS_SUCCESS) return st;
    if (ctx->cache.mode != CLOPS_CACHE_READ_WRITE)
        st = clops_fail(CLOPS_ERROR_CACHE_UNAVAILABLE, "cannot store tuning results: program cache %s",
                        ctx->cache.status);
    else /* a file that is not a tuning database fails now, not after the first measurement (R3) */
        st = clops_tuning_db_check(ctx);
    if (st != CLOPS_SUCCESS) {
        clops_context_free(ctx);
        return st;
    }

    static const clops_data_type all_types[] = {CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_FLOAT16,
                                                CLOPS_DATA_TYPE_FLOAT32, CLOPS_DATA_TYPE_FLOAT64,
                                                CLOPS_DATA_TYPE_COMPLEX128};
    static const clops_data_type quick_types[] = {CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_FLOAT32};
    static const uint32_t all_blocks[] = {2, 3, 4, 8}, quick_blocks[] = {2};
    const clops_data_type *types = quick ? quick_types : all_types;
    const uint32_t *blocks = quick ? quick_blocks : all_blocks;
    const size_t ntypes = quick ? 2 : 5, nblocks = quick ? 1 : 4;
    /* Well past the caches (a 2-core EPYC VM ran 16 MiB in+out at 100+ GB/s, i.e.
     * from cache): a winner measured in cache lost to the default in DRAM. */
    const size_t bytes = 64u << 20;
    const unsigned total = (unsigned)(2 * 2 * ntypes * nblocks);

    /* Each result goes into the database as soon as it is measured (an
     * interrupted run keeps them), merged with what other tuners wrote. */
    compiled_set *compiled = malloc(sizeof *compiled);
    if (!compiled) st = clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "tuning candidates");
    unsigned done = 0;
    for (int op = 0; st == CLOPS_SUCCESS && op < 2; op++)
        for (int order = 0; st == CLOPS_SUCCESS && order < 2; order++)
            for (size_t ti = 0; st == CLOPS_SUCCESS && ti < ntypes; ti++)
                for (size_t bi = 0; st == CLOPS_SUCCESS && bi < nblocks; bi++) {
                    const tune_case c = {op ? CLOPS_OPERATOR_SPACE_TO_DEPTH : CLOPS_OPERATOR_DEPTH_TO_SPACE,
                                         (clops_depth_space_order)order, types[ti], blocks[bi]};
                    clops_tuning_entry best;
                    memset(&best, 0, sizeof best);
                    clops_tune_result report;
                    memset(&report, 0, sizeof report);
                    report.operator_type = c.type;
                    report.order = c.order;
                    report.data_type = c.dtype;
                    report.block_size = c.block;
                    bool keep = false;
                    compiled->count = 0;
                    st = tune_case_run(ctx, &c, bytes, &best, &report, &keep, compiled);
                    report.kept = keep;
                    /* A variant whose winner does not win any more loses its old entry too. */
                    if (st == CLOPS_SUCCESS && best.key[0]) st = clops_tuning_record(ctx, &best, keep);
                    if (st == CLOPS_SUCCESS && progress) progress(user, &report, ++done, total);
                }
    free(compiled);
    clops_context_free(ctx);
    return st;
}

clops_status clops_tune(unsigned device_index, int quick, clops_tune_progress_fn progress, void *user)
{
    return clops_tune_with_options(NULL, device_index, quick, progress, user);
}
