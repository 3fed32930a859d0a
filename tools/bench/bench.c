/*
 * bench.c - `clops bench` (see bench.h; the method is in notes/bench.md): the
 * configurations, the timed runs and main; the other files in bench_internal.h.
 *
 * What is timed, per configuration (operator, order or index type, element
 * width, block size, size), after one untimed warm-up run of each:
 *   - the operator: on OpenCL the profiling of the event from
 *     clops_operator_execute (CL_PROFILING_COMMAND_START..END), except
 *     MaxUnpooling, which is several commands, timed by the wall clock around
 *     clops_operator_execute + clFinish; on the host the wall clock around
 *     clops_operator_execute_host;
 *   - baselines moving the same number of bytes: our copy kernel (uint4 loads
 *     and stores, COPY_PER_ITEM per work-item) and clEnqueueCopyBuffer, both
 *     profiled (in MaxUnpooling's rows, wall clock of enqueue + clFinish, like
 *     the operator); memcpy on the host.
 * The three are interleaved in every repetition, each finished before the
 * next starts; medians are reported. Bytes counted = bytes read + bytes
 * written: input + output for DepthToSpace and SpaceToDepth, input + indices +
 * output for MaxUnpooling, 2x the copied size for a copy.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"
#include "bench_internal.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Configurations whose output is at most this large are checked against the
 * host reference (clops_host_run) after the warm-up. */
#define VERIFY_MAX_BYTES ((uint64_t)4 << 20)
/* Below this many bytes moved, a run is cheap and noisy: take 3x the repetitions. */
#define SMALL_BYTES ((uint64_t)1 << 20)
/* Channels of the spatial (shallow) tensor of DepthToSpace/SpaceToDepth, and of MaxUnpooling. */
#define SPACE_CHANNELS 4
#define UNPOOL_CHANNELS 16

/* ---- configurations ---------------------------------------------------------------- */

static clops_data_type type_of_width(unsigned width)
{
    switch (width) {
    case 1: return CLOPS_DATA_TYPE_UINT8;
    case 2: return CLOPS_DATA_TYPE_FLOAT16;
    case 4: return CLOPS_DATA_TYPE_FLOAT32;
    case 8: return CLOPS_DATA_TYPE_FLOAT64;
    default: return CLOPS_DATA_TYPE_COMPLEX128;
    }
}

static uint64_t count4(const uint32_t s[4])
{
    return (uint64_t)s[0] * s[1] * s[2] * s[3];
}

const char *variant_name(const bench_config *c)
{
    static const char *const unpool[2][UNPOOL_VARIANTS] = {
        {"pool/i64", "pool/u32", "scat/i64", "scat/u32", "ovl/i64", "ovl/u32"},
        {"pool/i64 1st", "pool/u32 1st", "scat/i64 1st", "scat/u32 1st", "ovl/i64 1st", "ovl/u32 1st"}};
    if (c->op == BENCH_UNPOOL) return unpool[c->first][c->variant % UNPOOL_VARIANTS];
    return c->variant == CLOPS_ORDER_DEPTH_COLUMN_ROW ? "DCR" : "CRD";
}

/* Shapes: DepthToSpace goes deep {1, C*b*b, H, W} -> spatial {1, C, H*b, W*b} with
 * C = SPACE_CHANNELS and square H = W chosen to make `target` bytes (the spatial
 * and deep tensors hold the same elements); SpaceToDepth is the reverse. The
 * specification's example is DepthToSpace (1,8,2,3) -> (1,2,4,6) at b = 2, and
 * (1,2b*b,2,3) -> (1,2,2b,3b) at other b. MaxUnpooling: 2x2 windows of stride 2,
 * input {1, 16, H, W}, output {1, 16, 2H, 2W} of about `target` bytes; the
 * example is (1,8,2,3) -> (1,8,4,6); a --planes row (fixed) has its input
 * {N, C, H, W} given and the output {N, C, 2H, 2W}. Returns 0, or 1 after a
 * message when the library rejects a shape. */
static int make_shapes(bench_config *c)
{
    const uint64_t w = c->width;
    if (c->op == BENCH_UNPOOL && c->fixed) {
        memcpy(c->out, c->in, sizeof c->out);
        c->out[2] *= 2;
        c->out[3] *= 2;
    } else if (c->op == BENCH_UNPOOL) {
        uint32_t ch = UNPOOL_CHANNELS, h = 2, wd = 3;
        if (c->target == 0) {
            ch = 8;
        } else {
            const double px = (double)c->target / (double)w / UNPOOL_CHANNELS / 4.0;
            h = wd = (uint32_t)fmax(1.0, floor(sqrt(px) + 0.5));
        }
        const uint32_t in[4] = {1, ch, h, wd}, out[4] = {1, ch, 2 * h, 2 * wd};
        memcpy(c->in, in, sizeof in);
        memcpy(c->out, out, sizeof out);
    } else {
        const uint32_t b = c->block;
        uint32_t ch = 2, hs = 2 * b, ws = 3 * b; /* spatial tensor */
        if (c->target != 0) {
            ch = SPACE_CHANNELS;
            const double side = sqrt((double)c->target / (double)w / SPACE_CHANNELS);
            hs = ws = b * (uint32_t)fmax(1.0, floor(side / b + 0.5));
        }
        /* The deep tensor by the library's rule: SpaceToDepth of the spatial one. */
        clops_tensor_desc space = {type_of_width(c->width), {1, ch, hs, ws}, NULL}, deep = space;
        const clops_space_to_depth_desc sd = {&space, NULL, b, CLOPS_ORDER_DEPTH_COLUMN_ROW};
        const clops_operator_desc op = {CLOPS_OPERATOR_SPACE_TO_DEPTH, &sd};
        const clops_status st = clops_operator_output_sizes(&op, deep.sizes);
        if (st != CLOPS_SUCCESS) return clops_fail_msg(st, "clops_operator_output_sizes");
        memcpy(c->in, c->op == BENCH_D2S ? deep.sizes : space.sizes, sizeof c->in);
        memcpy(c->out, c->op == BENCH_D2S ? space.sizes : deep.sizes, sizeof c->out);
    }
    c->type = type_of_width(c->width);
    c->index_type = c->variant & UNPOOL_U32 ? CLOPS_DATA_TYPE_UINT32 : CLOPS_DATA_TYPE_INT64;
    c->in_bytes = count4(c->in) * w;
    c->out_bytes = count4(c->out) * w;
    c->idx_bytes = c->op == BENCH_UNPOOL ? count4(c->in) * (c->variant & UNPOOL_U32 ? 4 : 8) : 0;
    c->moved = c->in_bytes + c->idx_bytes + c->out_bytes;
    c->copy_bytes = round_up((c->moved + 1) / 2, 16);
    return 0;
}

/* Every configuration, sizes outermost (smallest first, as given); then
 * MaxUnpooling's --planes shapes, each variant and width twice: the operator run
 * again and again, as the size rows, then a fresh operator per repetition. */
static bench_config *make_configs(const bench_args *a, size_t *count)
{
    size_t n = 0;
    for (int o = 0; o < BENCH_NUM_OPS; o++)
        if (a->ops[o]) n += (size_t)a->num_sizes * a->num_widths * (o == BENCH_UNPOOL ? UNPOOL_VARIANTS : 2 * a->num_blocks);
    if (a->ops[BENCH_UNPOOL]) n += (size_t)a->num_planes * UNPOOL_VARIANTS * a->num_widths * 2;
    bench_config *cfgs = calloc(n ? n : 1, sizeof *cfgs);
    if (!cfgs) return NULL;
    size_t k = 0;
    for (unsigned s = 0; s < a->num_sizes; s++)
        for (int o = 0; o < BENCH_NUM_OPS; o++) {
            if (!a->ops[o]) continue;
            for (int v = 0; v < (o == BENCH_UNPOOL ? UNPOOL_VARIANTS : 2); v++)
                for (unsigned wi = 0; wi < a->num_widths; wi++)
                    for (unsigned bi = 0; bi < (o == BENCH_UNPOOL ? 1 : a->num_blocks); bi++) {
                        bench_config *c = &cfgs[k++];
                        c->op = (bench_op)o;
                        c->variant = v;
                        c->width = a->widths[wi];
                        c->block = o == BENCH_UNPOOL ? 0 : a->blocks[bi];
                        c->target = a->sizes[s];
                        if (make_shapes(c)) {
                            free(cfgs);
                            return NULL;
                        }
                    }
        }
    for (unsigned s = 0; a->ops[BENCH_UNPOOL] && s < a->num_planes; s++)
        for (int v = 0; v < UNPOOL_VARIANTS; v++)
            for (unsigned wi = 0; wi < a->num_widths; wi++)
                for (int first = 0; first < 2; first++) {
                    bench_config *c = &cfgs[k++];
                    c->op = BENCH_UNPOOL;
                    c->variant = v;
                    c->width = a->widths[wi];
                    c->fixed = true;
                    c->first = first != 0;
                    memcpy(c->in, a->planes[s], sizeof c->in);
                    if (make_shapes(c)) {
                        free(cfgs);
                        return NULL;
                    }
                }
    *count = k;
    return cfgs;
}

/* The operator descriptor of a configuration, with the storage it points into. */
typedef struct desc_storage {
    clops_tensor_desc in, idx, out;
    clops_depth_to_space_desc ds;
    clops_space_to_depth_desc sd;
    clops_max_unpooling_desc mu;
    clops_operator_desc op;
} desc_storage;

static void make_desc(const bench_config *c, desc_storage *d)
{
    memset(d, 0, sizeof *d);
    d->in.data_type = c->type;
    memcpy(d->in.sizes, c->in, sizeof c->in);
    d->out.data_type = c->type;
    memcpy(d->out.sizes, c->out, sizeof c->out);
    if (c->op == BENCH_UNPOOL) {
        d->idx.data_type = c->index_type;
        memcpy(d->idx.sizes, c->in, sizeof c->in);
        d->mu.input = &d->in;
        d->mu.indices = &d->idx;
        d->mu.output = &d->out;
        d->op.type = CLOPS_OPERATOR_MAX_UNPOOLING;
        d->op.desc = &d->mu;
    } else {
        d->ds.input = d->sd.input = &d->in;
        d->ds.output = d->sd.output = &d->out;
        d->ds.block_size = d->sd.block_size = c->block;
        d->ds.order = d->sd.order = (clops_depth_space_order)c->variant;
        if (c->op == BENCH_D2S) {
            d->op.type = CLOPS_OPERATOR_DEPTH_TO_SPACE;
            d->op.desc = &d->ds;
        } else {
            d->op.type = CLOPS_OPERATOR_SPACE_TO_DEPTH;
            d->op.desc = &d->sd;
        }
    }
}

/* The flat index of the first maximum of window (y, x) of a max_pool2d(3, 2, 1)
 * over plane p of pseudo-random values 0..7 (UNPOOL_OVERLAP). */
static uint64_t overlap_argmax(uint64_t p, uint64_t y, uint64_t x, uint64_t oh, uint64_t ow)
{
    uint64_t best = 0, at = 0;
    for (uint64_t r = y ? 2 * y - 1 : 0; r <= 2 * y + 1 && r < oh; r++)
        for (uint64_t q = x ? 2 * x - 1 : 0; q <= 2 * x + 1 && q < ow; q++) {
            const uint64_t flat = (p * oh + r) * ow + q, v = (mix64(flat) >> 61) + 1;
            if (v > best) best = v, at = flat;
        }
    return at;
}

/* Indices of a 2x2 stride-2 max-pooling: each input element's index points at a
 * pseudo-random position of its own window, flat over the whole output; or
 * (UNPOOL_SCATTERED) at distinct positions spread over its output plane; or
 * (UNPOOL_OVERLAP) those of a real 3x3 stride-2 padding-1 max pool. */
static void make_indices(const bench_config *c, void *dst)
{
    const uint64_t ch = (uint64_t)c->in[0] * c->in[1], h = c->in[2], w = c->in[3];
    const uint64_t oh = c->out[2], ow = c->out[3], plane = oh * ow;
    uint64_t k = 0;
    for (uint64_t p = 0; p < ch; p++)
        for (uint64_t y = 0; y < h; y++)
            for (uint64_t x = 0; x < w; x++, k++) {
                const uint64_t r = mix64(k) >> 62;
                uint64_t flat = (p * oh + 2 * y + (r >> 1)) * ow + 2 * x + (r & 1);
                if (c->variant & UNPOOL_SCATTERED) flat = p * plane + (y * w + x) * SCATTER_STEP % plane;
                if (c->variant & UNPOOL_OVERLAP) flat = overlap_argmax(p, y, x, oh, ow);
                if (c->variant & UNPOOL_U32) ((uint32_t *)dst)[k] = (uint32_t)flat;
                else ((int64_t *)dst)[k] = (int64_t)flat;
            }
}


/* ---- runs ---------------------------------------------------------------------------- */


/* One run of the operator, finished; *seconds by profiling or (unpool) wall clock,
 * and *wall_s (when not NULL) the wall clock of execute + clFinish. */
static int cl_run_op(cl_env *e, clops_operator *op, const clops_buffers *b, bool wall, double *seconds,
                     double *wall_s)
{
    cl_event ev = NULL;
    const double t0 = now_seconds();
    const clops_status st = clops_operator_execute(op, b, 0, NULL, wall ? NULL : &ev);
    const cl_int err = clFinish(e->queue);
    const double t1 = now_seconds();
    if (st != CLOPS_SUCCESS) {
        if (ev) clReleaseEvent(ev);
        return clops_fail_msg(st, "clops_operator_execute");
    }
    if (err != CL_SUCCESS) return cl_fail(err, "clFinish");
    *seconds = wall ? t1 - t0 : event_seconds(ev);
    if (wall_s) *wall_s = t1 - t0;
    if (ev) clReleaseEvent(ev);
    return 0;
}

/* The copies: *seconds by profiling, or (wall) by the wall clock of enqueue + clFinish. */
static int cl_run_copy_kernel(cl_env *e, cl_mem src, cl_mem dst, uint64_t bytes, bool wall, double *seconds)
{
    const cl_ulong n = bytes / 16;
    const size_t global = (size_t)round_up((n + COPY_PER_ITEM - 1) / COPY_PER_ITEM, e->copy_local);
    cl_int err = clSetKernelArg(e->copy, 0, sizeof src, &src);
    if (err == CL_SUCCESS) err = clSetKernelArg(e->copy, 1, sizeof dst, &dst);
    if (err == CL_SUCCESS) err = clSetKernelArg(e->copy, 2, sizeof n, &n);
    if (err != CL_SUCCESS) return cl_fail(err, "clSetKernelArg(bench_copy)");
    cl_event ev;
    const double t0 = now_seconds();
    err = clEnqueueNDRangeKernel(e->queue, e->copy, 1, NULL, &global, &e->copy_local, 0, NULL, &ev);
    if (err != CL_SUCCESS) return cl_fail(err, "clEnqueueNDRangeKernel(bench_copy)");
    err = clFinish(e->queue);
    *seconds = wall ? now_seconds() - t0 : event_seconds(ev);
    clReleaseEvent(ev);
    return err == CL_SUCCESS ? 0 : cl_fail(err, "clFinish");
}

static int cl_run_copy_buffer(cl_env *e, cl_mem src, cl_mem dst, uint64_t bytes, bool wall, double *seconds)
{
    cl_event ev;
    const double t0 = now_seconds();
    cl_int err = clEnqueueCopyBuffer(e->queue, src, dst, 0, 0, (size_t)bytes, 0, NULL, &ev);
    if (err != CL_SUCCESS) return cl_fail(err, "clEnqueueCopyBuffer");
    err = clFinish(e->queue);
    *seconds = wall ? now_seconds() - t0 : event_seconds(ev);
    clReleaseEvent(ev);
    return err == CL_SUCCESS ? 0 : cl_fail(err, "clFinish");
}

/* Checks the device output against clops_host_run on the same input. */
static int cl_verify(cl_env *e, pool *p, const clops_operator_desc *desc, const bench_config *c, int *verified)
{
    cl_int err = clEnqueueReadBuffer(e->queue, p->out, CL_TRUE, 0, (size_t)c->out_bytes, p->h_out, 0, NULL, NULL);
    if (err != CL_SUCCESS) return cl_fail(err, "clEnqueueReadBuffer");
    const clops_host_buffers hb = {p->h_in, (size_t)c->in_bytes, p->h_idx, (size_t)c->idx_bytes, p->h_ref,
                                   (size_t)c->out_bytes};
    const clops_status st = clops_host_run(desc, &hb);
    if (st != CLOPS_SUCCESS) return clops_fail_msg(st, "clops_host_run (reference)");
    *verified = memcmp(p->h_out, p->h_ref, (size_t)c->out_bytes) == 0 ? 1 : -1;
    return 0;
}

/* A first-execution row (bench_config.first): *op replaced by a new operator of
 * the same descriptor before a timed run, untimed (the context keeps the built
 * program): its status words start afresh, as in a process that runs it once. */
static int fresh_operator(clops_context *ctx, const clops_operator_desc *desc, clops_operator **op)
{
    clops_operator_free(*op);
    *op = NULL;
    const clops_status st = clops_operator_create(ctx, desc, op);
    return st == CLOPS_SUCCESS ? 0 : clops_fail_msg(st, "clops_operator_create");
}

static unsigned reps_for(const bench_args *a, const bench_config *c)
{
    return c->moved < SMALL_BYTES ? 3 * a->reps : a->reps;
}

static int cl_bench_config(cl_env *e, pool *p, const bench_args *a, const bench_config *c, bench_result *r)
{
    desc_storage d;
    make_desc(c, &d);
    if (pool_fit(p, e, c)) return 1;
    if (c->op == BENCH_UNPOOL) {
        make_indices(c, p->h_idx);
        const cl_int err = clEnqueueWriteBuffer(e->queue, p->idx, CL_TRUE, 0, (size_t)c->idx_bytes, p->h_idx, 0,
                                                NULL, NULL);
        if (err != CL_SUCCESS) return cl_fail(err, "clEnqueueWriteBuffer(indices)");
    }
    clops_operator *op = NULL;
    clops_status st = clops_operator_create(e->ctx, &d.op, &op);
    if (st != CLOPS_SUCCESS) return clops_fail_msg(st, "clops_operator_create");
    const clops_buffers bufs = {p->in, c->op == BENCH_UNPOOL ? p->idx : NULL, p->out};
    const unsigned reps = reps_for(a, c);
    double *t = calloc(4 * (size_t)reps, sizeof *t);
    int rc = t ? 0 : 1;
    r->cfg = *c;
    r->reps = reps;
    r->op_wall = c->op == BENCH_UNPOOL;
    double warm;
    /* Warm-up of each (first launch, page faults, caches), then the check. */
    if (!rc) rc = cl_run_op(e, op, &bufs, r->op_wall, &warm, NULL);
    if (!rc) rc = cl_run_copy_kernel(e, p->csrc, p->cdst, c->copy_bytes, r->op_wall, &warm);
    if (!rc) rc = cl_run_copy_buffer(e, p->csrc, p->cdst, c->copy_bytes, r->op_wall, &warm);
    if (!rc && c->out_bytes <= VERIFY_MAX_BYTES) rc = cl_verify(e, p, &d.op, c, &r->verified);
    for (unsigned i = 0; !rc && i < reps; i++) {
        if (c->first) rc = fresh_operator(e->ctx, &d.op, &op);
        if (!rc) rc = cl_run_op(e, op, &bufs, r->op_wall, &t[i], &t[3 * reps + i]);
        if (!rc) rc = cl_run_copy_kernel(e, p->csrc, p->cdst, c->copy_bytes, r->op_wall, &t[reps + i]);
        if (!rc) rc = cl_run_copy_buffer(e, p->csrc, p->cdst, c->copy_bytes, r->op_wall, &t[2 * reps + i]);
    }
    if (!rc) {
        r->op_s = median(t, reps);
        r->op_min_s = t[0];
        r->op_max_s = t[reps - 1];
        r->ck_s = median(t + reps, reps);
        r->cb_s = median(t + 2 * reps, reps);
        r->op_wall_s = median(t + 3 * reps, reps);
    }
    free(t);
    clops_operator_free(op);
    return rc;
}

/* ---- host path ------------------------------------------------------------------------- */

/* Through a volatile pointer, so the compiler cannot drop or merge the copies. */
static void *(*volatile bench_memcpy)(void *, const void *, size_t) = memcpy;

static int host_run_op(clops_operator *op, const clops_host_buffers *hb, double *seconds)
{
    const double t0 = now_seconds();
    const clops_status st = clops_operator_execute_host(op, hb);
    *seconds = now_seconds() - t0;
    return st == CLOPS_SUCCESS ? 0 : clops_fail_msg(st, "clops_operator_execute_host");
}

static double host_run_memcpy(pool *p, uint64_t bytes)
{
    const double t0 = now_seconds();
    bench_memcpy(p->h_cdst, p->h_csrc, (size_t)bytes);
    return now_seconds() - t0;
}

static int host_bench_config(clops_context *ctx, pool *p, const bench_args *a, const bench_config *c,
                             bench_result *r)
{
    desc_storage d;
    make_desc(c, &d);
    if (pool_fit(p, NULL, c)) return 1;
    if (c->op == BENCH_UNPOOL) make_indices(c, p->h_idx);
    clops_operator *op = NULL;
    clops_status st = clops_operator_create(ctx, &d.op, &op);
    if (st != CLOPS_SUCCESS) return clops_fail_msg(st, "clops_operator_create");
    const clops_host_buffers hb = {p->h_in, (size_t)c->in_bytes, p->h_idx, (size_t)c->idx_bytes, p->h_out,
                                   (size_t)c->out_bytes};
    const unsigned reps = reps_for(a, c);
    double *t = calloc(2 * (size_t)reps, sizeof *t);
    int rc = t ? 0 : 1;
    r->cfg = *c;
    r->reps = reps;
    r->op_wall = true;
    double warm;
    if (!rc) rc = host_run_op(op, &hb, &warm);
    if (!rc) (void)host_run_memcpy(p, c->copy_bytes);
    for (unsigned i = 0; !rc && i < reps; i++) {
        if (c->first) rc = fresh_operator(ctx, &d.op, &op);
        if (!rc) rc = host_run_op(op, &hb, &t[i]);
        t[reps + i] = host_run_memcpy(p, c->copy_bytes);
    }
    if (!rc) {
        r->op_s = median(t, reps);
        r->op_min_s = t[0];
        r->op_max_s = t[reps - 1];
        r->ck_s = median(t + reps, reps);
        r->cb_s = 0;
        r->op_wall_s = r->op_s;
    }
    free(t);
    clops_operator_free(op);
    return rc;
}

/* ---- latency -------------------------------------------------------------------------- */


static int cl_run_empty(cl_env *e, double *profiled, double *wall)
{
    const size_t one = 1;
    cl_event ev;
    const double t0 = now_seconds();
    cl_int err = clEnqueueNDRangeKernel(e->queue, e->empty, 1, NULL, &one, &one, 0, NULL, &ev);
    if (err != CL_SUCCESS) return cl_fail(err, "clEnqueueNDRangeKernel(bench_empty)");
    err = clFinish(e->queue);
    *wall = now_seconds() - t0;
    *profiled = event_seconds(ev);
    clReleaseEvent(ev);
    return err == CL_SUCCESS ? 0 : cl_fail(err, "clFinish");
}

/* The specification's example, FLOAT32, b = 2: op vs an empty kernel, interleaved. */
static int bench_latency(cl_env *e, clops_context *host_ctx, pool *p, const bench_args *a, bench_op which,
                         latency_result *out)
{
    bench_config c;
    memset(&c, 0, sizeof c);
    c.op = which;
    c.variant = 0;
    c.width = 4;
    c.block = which == BENCH_UNPOOL ? 0 : 2;
    c.target = 0;
    if (make_shapes(&c)) return 1;
    desc_storage d;
    make_desc(&c, &d);
    if (pool_fit(p, e, &c)) return 1;
    if (which == BENCH_UNPOOL) {
        make_indices(&c, p->h_idx);
        if (e) {
            const cl_int err = clEnqueueWriteBuffer(e->queue, p->idx, CL_TRUE, 0, (size_t)c.idx_bytes, p->h_idx, 0,
                                                    NULL, NULL);
            if (err != CL_SUCCESS) return cl_fail(err, "clEnqueueWriteBuffer(indices)");
        }
    }
    clops_operator *op = NULL;
    clops_status st = clops_operator_create(e ? e->ctx : host_ctx, &d.op, &op);
    if (st != CLOPS_SUCCESS) return clops_fail_msg(st, "clops_operator_create");
    const unsigned reps = 5 * (a->reps < 7 ? 7 : a->reps);
    double *t = calloc(4 * (size_t)reps, sizeof *t);
    int rc = t ? 0 : 1;
    const clops_buffers bufs = {e ? p->in : NULL, e && which == BENCH_UNPOOL ? p->idx : NULL, e ? p->out : NULL};
    const clops_host_buffers hb = {p->h_in, (size_t)c.in_bytes, p->h_idx, (size_t)c.idx_bytes, p->h_out,
                                   (size_t)c.out_bytes};
    const bool profiled = e && which != BENCH_UNPOOL;
    double w0, w1;
    for (unsigned i = 0; !rc && i <= reps; i++) { /* run 0 is the warm-up */
        const unsigned k = i ? i - 1 : 0;
        if (e) {
            rc = cl_run_op(e, op, &bufs, true, &t[reps + k], NULL);
            if (!rc && profiled) rc = cl_run_op(e, op, &bufs, false, &t[k], NULL);
            if (!rc) rc = cl_run_empty(e, &t[2 * reps + k], &t[3 * reps + k]);
        } else {
            rc = host_run_op(op, &hb, &t[reps + k]);
            w0 = now_seconds();
            bench_memcpy(p->h_cdst, p->h_csrc, (size_t)c.copy_bytes);
            w1 = now_seconds();
            t[3 * reps + k] = w1 - w0;
        }
    }
    if (!rc) {
        static char what[3][64];
        snprintf(what[which], sizeof what[which], "%s w4 %ux%ux%ux%u", variant_name(&c), c.in[0], c.in[1], c.in[2],
                 c.in[3]);
        out->op = which;
        out->what = what[which];
        out->reps = reps;
        out->op_profiled_s = profiled ? median(t, reps) : 0;
        out->op_wall_s = median(t + reps, reps);
        out->empty_profiled_s = e ? median(t + 2 * reps, reps) : 0;
        out->empty_wall_s = median(t + 3 * reps, reps);
    }
    free(t);
    clops_operator_free(op);
    return rc;
}


/* ---- main --------------------------------------------------------------------------------- */

int clops_bench_main(int argc, char **argv)
{
    bench_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc;
    if (a.help) {
        print_help(stdout);
        return 0;
    }

    size_t ndev = 0;
    clops_device_info *infos = NULL;
    clops_status st = clops_device_list(NULL, 0, &ndev);
    if (st != CLOPS_SUCCESS) return clops_fail_msg(st, "clops_device_list");
    if (ndev) {
        infos = calloc(ndev, sizeof *infos);
        if (!infos) return 1;
        st = clops_device_list(infos, ndev, &ndev);
        if (st != CLOPS_SUCCESS) {
            free(infos);
            return clops_fail_msg(st, "clops_device_list");
        }
    }
    bool host = false;
    size_t dev = 0;
    rc = choose_device(a.device, ndev, &host, &dev);
    cl_env e;
    memset(&e, 0, sizeof e);
    clops_context *host_ctx = NULL;
    if (!rc && host) {
        st = clops_context_create_host(&host_ctx);
        if (st != CLOPS_SUCCESS) rc = clops_fail_msg(st, "clops_context_create_host");
    } else if (!rc) {
        rc = cl_setup(&e, &infos[dev]);
    }
    free(infos);

    size_t ncfg = 0;
    bench_config *cfgs = rc ? NULL : make_configs(&a, &ncfg);
    bench_result *res = cfgs ? calloc(ncfg ? ncfg : 1, sizeof *res) : NULL;
    if (!rc && !res) rc = 1;
    pool p;
    memset(&p, 0, sizeof p);
    progress prog = {isatty(fileno(stderr)) != 0, false, now_seconds()};
    latency_result lat[BENCH_NUM_OPS];
    size_t nres = 0, nlat = 0;
    int wrong = 0;

    if (!rc && !a.json) {
        if (host)
            printf("# clops %s bench on the host backend; baseline memcpy; wall clock; medians of %u reps "
                   "(%u below 1 MiB moved)\n",
                   clops_version_string(), a.reps, 3 * a.reps);
        else
            printf("# clops %s bench on device %u: %s (%s, %s)\n# op and baselines (copy kernel, clEnqueueCopyBuffer "
                   "of the same bytes) timed by event profiling;\n# * = MaxUnpooling: several commands, "
                   "so it and its baselines by wall clock (enqueue + clFinish)\n# medians "
                   "of %u interleaved reps (%u below 1 MiB moved); GB/s = (bytes read + written) / s; ratio = op / "
                   "best copy\n# MaxUnpooling '1st': each rep a fresh operator's first execution (--planes rows)\n",
                   clops_version_string(), e.info.index, e.info.device_name, e.info.platform_name,
                   e.info.device_version, a.reps, 3 * a.reps);
        print_table_header(host);
    }
    for (size_t i = 0; !rc && i < ncfg; i++) {
        const bench_config *c = &cfgs[i];
        const uint64_t biggest = c->idx_bytes > c->copy_bytes ? c->idx_bytes : c->copy_bytes;
        if (!host && (biggest > e.info.max_alloc_bytes || c->in_bytes > e.info.max_alloc_bytes ||
                      c->out_bytes > e.info.max_alloc_bytes)) {
            progress_clear(&prog);
            fprintf(stderr, "clops bench: skipping %s %s w%u at %llu bytes: a buffer exceeds the device's maximum "
                            "allocation (%llu bytes)\n",
                    op_names[c->op], variant_name(c), c->width, (unsigned long long)c->moved,
                    (unsigned long long)e.info.max_alloc_bytes);
            continue;
        }
        progress_show(&prog, i, ncfg + 1, c);
        bench_result *r = &res[nres];
        rc = host ? host_bench_config(host_ctx, &p, &a, c, r) : cl_bench_config(&e, &p, &a, c, r);
        if (rc) break;
        nres++;
        if (r->verified < 0) wrong++;
        progress_clear(&prog);
        if (!a.json) print_row(r, host);
        if (r->verified < 0)
            fprintf(stderr, "clops bench: %s %s w%u b%u %ux%ux%ux%u: the output differs from the host reference\n",
                    op_names[c->op], variant_name(c), c->width, c->block, c->in[0], c->in[1], c->in[2], c->in[3]);
    }
    for (int o = 0; !rc && o < BENCH_NUM_OPS; o++) {
        if (!a.ops[o]) continue;
        progress_show(&prog, ncfg, ncfg + 1, NULL);
        rc = bench_latency(host ? NULL : &e, host_ctx, &p, &a, (bench_op)o, &lat[nlat]);
        if (!rc) nlat++;
    }
    progress_clear(&prog);
    if (!rc) {
        if (a.json) print_json(&a, host, &e, res, nres, lat, nlat, now_seconds() - prog.start);
        else print_latency_table(lat, nlat, host);
    }
    if (!rc && !a.json)
        printf("# %zu configurations in %.1f s\n", nres, now_seconds() - prog.start);
    pool_free(&p);
    free(res);
    free(cfgs);
    clops_context_free(host_ctx);
    if (!host) cl_teardown(&e);
    if (!rc && wrong) {
        fprintf(stderr, "clops bench: %d configuration(s) gave a wrong result\n", wrong);
        rc = 1;
    }
    return rc;
}

