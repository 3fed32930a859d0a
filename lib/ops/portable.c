/* portable.c - the plans on the portable program (kernels/portable.cl): one
 * program, built with CLOPS_PORTABLE_OPTIONS whatever the operator, whose kernels
 * take every shape, type, block, order, layout and index type as arguments.
 *
 * A device runs it where the specialised program can be neither loaded nor
 * built (a board without a compiler whose cache or pack lacks it, a failed
 * build), for blocks past CLOPS_SPECIALISED_BLOCK_MAX, and always under
 * CLOPS_DISABLE=specialised or with a program of the application's
 * (clops_context_use_program): ops.c chooses, this file plans. It takes tensors
 * whose offsets fit 32 bits (clops_fits_u32); larger ones need the specialised
 * programs' 64-bit offsets, or the host.
 *
 * Work per work-item: a run of positions along a row (RUN_CPU on CPUs, where a
 * work-item streams through memory; 1 elsewhere, so that neighbouring work-items
 * touch neighbouring elements), and under a device's loop limit (cl/profile.c)
 * at most half of it. */
#include <stdio.h>
#include <string.h>

#include "ops/ops.h"
#include "ops/unpool.h"

#define RUN_CPU 1024u

bool clops_portable_only(const clops_context *ctx)
{
    return (ctx->options.disable & CLOPS_CAPABILITY_SPECIALISED) != 0 || ctx->own_program;
}

/* The portable program's kernels: these by element width, and clops_mark. */
static const char *const width_kernels[] = {"clops_permute", "clops_windows", "clops_planes", "clops_place"};
static const unsigned widths[] = {1, 2, 4, 8, 16};

clops_status clops_portable_check(cl_program program)
{
    char name[64];
    for (size_t b = 0; b <= sizeof width_kernels / sizeof width_kernels[0]; b++)
        for (size_t w = 0; w < (b < 4 ? sizeof widths / sizeof widths[0] : 1); w++) {
            if (b < 4) snprintf(name, sizeof name, "%s_%u", width_kernels[b], widths[w]);
            else snprintf(name, sizeof name, "clops_mark");
            cl_int err;
            cl_kernel k = clCreateKernel(program, name, &err);
            if (!k)
                return clops_fail(CLOPS_ERROR_BUILD_FAILED, "the program has no kernel %s of the portable program "
                                  "(%s), or is not built for the context's device: clCreateKernel gave %s",
                                  name, CLOPS_PORTABLE_SOURCE, clops_status_name(err));
            clReleaseKernel(k);
        }
    return CLOPS_SUCCESS;
}

/* Positions per work-item along rows of `len`, each costing `loops` iterations. */
static uint32_t run_length(const clops_operator *op, uint64_t len, uint64_t loops)
{
    uint64_t run = (op->ctx->info.type & CL_DEVICE_TYPE_CPU) ? RUN_CPU : 1;
    const uint64_t budget = op->ctx->plan.max_loops / 2;
    if (budget && run * loops > budget) run = budget / loops ? budget / loops : 1;
    if (run > len) run = len ? len : 1;
    return (uint32_t)run;
}

/* The portable program (the context's table, the disk cache, a pack, the
 * application's program, or compiled) and kernel `base`_W for op's element width W. */
static clops_status add_kernel(clops_operator *op, const char *base, bool by_width, unsigned dims,
                               const uint64_t items[3])
{
    cl_program program;
    clops_status st = clops_program_get(op->ctx, CLOPS_PORTABLE_SOURCE, CLOPS_PORTABLE_OPTIONS, &program,
                                        &op->program_origin);
    if (st != CLOPS_SUCCESS) return st;
    char name[sizeof op->portable_kernels[0]];
    if (by_width) snprintf(name, sizeof name, "%s_%zu", base, op->params.input.elem_size);
    else snprintf(name, sizeof name, "%s", base);
    snprintf(op->portable_kernels[op->num_launches], sizeof op->portable_kernels[0], "%s", name);
    if (op->num_launches == 0) op->kernel_name = op->portable_kernels[0];
    return clops_operator_add_launch(op, program, op->portable_kernels[op->num_launches], dims, items, NULL);
}

/* Why the portable program cannot take op's tensors, or NULL. */
static const char *too_large(const clops_op_params *p)
{
    if (!clops_fits_u32(p)) return "the portable program takes tensors whose offsets fit 32 bits";
    if (p->type == CLOPS_OPERATOR_MAX_UNPOOLING && p->input.count >= UINT32_MAX)
        return "the portable program's MaxUnpooling takes inputs of fewer than 2^32 - 1 elements";
    return NULL;
}

static void prepare_common(clops_operator *op)
{
    op->portable = true;
    op->offset_64 = false;
    op->vector_bytes = 0;
    op->chunk = 1;
    op->loop = CLOPS_LOOP_ELEMENTS;
    op->local_size_origin = "heuristic";
    op->program_origin = "";
    snprintf(op->options, sizeof op->options, "%s", CLOPS_PORTABLE_OPTIONS);
    snprintf(op->tune_key, sizeof op->tune_key, "portable");
}

/* ---- DepthToSpace and SpaceToDepth (portable.cl clops_permute_W) ---- */

/* portable.cl clops_walk: six axes' sizes, source and destination strides, run. */
typedef struct {
    cl_uint size[6], src[6], dst[6], run, runs;
} walk_arg;

/* The walk of the operator's output in the axes portable.cl's header names (the
 * last two: w, then the block column j); every value below 2^32 (clops_fits_u32:
 * each product is at most a span). */
static walk_arg make_walk(const clops_op_params *p)
{
    const uint64_t b = p->block_size, *xs = p->input.strides, *ys = p->output.strides;
    const bool dcr = p->order == CLOPS_ORDER_DEPTH_COLUMN_ROW;
    walk_arg a;
    uint64_t size[6], src[6], dst[6];
    if (p->type == CLOPS_OPERATOR_DEPTH_TO_SPACE) { /* (n, c, h, i, w, j) of the output */
        const uint64_t c = p->output.sizes[1];
        const uint64_t s[6] = {p->input.sizes[0], c, p->input.sizes[2], b, p->input.sizes[3], b};
        const uint64_t d[6] = {ys[0], ys[1], b * ys[2], ys[2], b * ys[3], ys[3]};
        const uint64_t x[6] = {xs[0], dcr ? xs[1] : b * b * xs[1], xs[2], dcr ? b * c * xs[1] : b * xs[1], xs[3],
                               dcr ? c * xs[1] : xs[1]};
        memcpy(size, s, sizeof s), memcpy(dst, d, sizeof d), memcpy(src, x, sizeof x);
    } else { /* DCR (n, i, c, h, w, j), CRD (n, c, i, h, w, j) of the output */
        const uint64_t c = p->input.sizes[1], h = p->output.sizes[2], w = p->output.sizes[3];
        const uint64_t sd[6] = {p->input.sizes[0], b, c, h, w, b}, sc[6] = {p->input.sizes[0], c, b, h, w, b};
        const uint64_t dd[6] = {ys[0], b * c * ys[1], ys[1], ys[2], ys[3], c * ys[1]};
        const uint64_t dc[6] = {ys[0], b * b * ys[1], b * ys[1], ys[2], ys[3], ys[1]};
        const uint64_t xd[6] = {xs[0], xs[2], xs[1], b * xs[2], b * xs[3], xs[3]};
        const uint64_t xc[6] = {xs[0], xs[1], xs[2], b * xs[2], b * xs[3], xs[3]};
        memcpy(size, dcr ? sd : sc, sizeof sd), memcpy(dst, dcr ? dd : dc, sizeof dd);
        memcpy(src, dcr ? xd : xc, sizeof xd);
    }
    for (int i = 0; i < 6; i++) a.size[i] = (cl_uint)size[i], a.src[i] = (cl_uint)src[i], a.dst[i] = (cl_uint)dst[i];
    a.run = a.runs = 0;
    return a;
}

clops_status clops_portable_depth_space(clops_operator *op)
{
    const clops_op_params *p = &op->params;
    prepare_common(op);
    const char *why = too_large(p);
    op->kernel_name = "clops_permute";
    if (why) return clops_fail(CLOPS_ERROR_COMPILER_UNAVAILABLE, "%s", why);
    if (p->output.count == 0) return CLOPS_SUCCESS; /* nothing to launch */
    walk_arg a = make_walk(p);
    a.run = run_length(op, a.size[4], a.size[5]);
    a.runs = (a.size[4] + a.run - 1) / a.run;
    const uint64_t items[3] = {a.runs, a.size[3], (uint64_t)a.size[0] * a.size[1] * a.size[2]};
    clops_status st = add_kernel(op, "clops_permute", true, 3, items);
    if (st == CLOPS_SUCCESS) st = clops_set_arg(op->launches[0].kernel, 2, sizeof a, &a);
    return st;
}

clops_status clops_portable_depth_space_enqueue(clops_operator *op, const clops_buffers *b, cl_uint nwait,
                                                const cl_event *wait, cl_event *event)
{
    const clops_launch *l = &op->launches[0];
    clops_status st = clops_set_arg(l->kernel, 0, sizeof(cl_mem), &b->input);
    if (st == CLOPS_SUCCESS) st = clops_set_arg(l->kernel, 1, sizeof(cl_mem), &b->output);
    return st == CLOPS_SUCCESS ? clops_enqueue_launch(op, l, nwait, wait, event) : st;
}

/* ---- MaxUnpooling (portable.cl clops_windows_W, clops_mark, clops_place_W) ---- */

/* portable.cl clops_unpool_plan */
typedef struct {
    cl_uint index_words, per_plane, kh, kw, gated, x_packed, run, packed, pool_gated, pad[3];
} unpool_arg;

/* Window height and width where the output's H and W are whole multiples of
 * the input's and a run of one position fits the loop limit, else 0. */
static void window_shape(const clops_operator *op, uint64_t *kh, uint64_t *kw)
{
    const uint64_t *in = op->params.input.sizes, *out = op->params.output.sizes;
    const uint64_t budget = op->ctx->plan.max_loops / 2;
    *kh = *kw = 0;
    if (!in[2] || !in[3] || out[2] % in[2] || out[3] % in[3]) return;
    if (budget && (out[2] / in[2]) * (out[3] / in[3]) > budget) return;
    *kh = out[2] / in[2], *kw = out[3] / in[3];
}

/* Whether planes (portable.cl clops_planes_W, behind windows where the shape has
 * them) takes op's shape: on devices that
 * are not GPUs (a plane per work-item idles a GPU), with at least two planes per
 * compute unit, each output plane small enough to stay in a cache (2 MiB) and a
 * plane's loops (its zero fill and its inputs) within the loop limit. */
#define PLANE_MAX_BYTES (2u << 20)
static bool planes_shape(const clops_operator *op)
{
    const clops_op_params *p = &op->params;
    const uint64_t planes = p->input.sizes[0] * p->input.sizes[1];
    const uint64_t out = p->output.sizes[2] * p->output.sizes[3], in = p->input.sizes[2] * p->input.sizes[3];
    const uint64_t budget = op->ctx->plan.max_loops / 2;
    return !(op->ctx->info.type & CL_DEVICE_TYPE_GPU) && planes >= 2u * op->ctx->plan.compute_units &&
           out * p->input.elem_size <= PLANE_MAX_BYTES && (!budget || out + in <= budget);
}

/* Adds kernel `base` over the rows of `sizes` with its plan argument. */
static clops_status add_rows(clops_operator *op, const char *base, bool by_width, const uint64_t *sizes,
                             uint64_t loops, unpool_arg a)
{
    a.run = run_length(op, sizes[3], loops);
    const uint64_t items[3] = {(sizes[3] + a.run - 1) / a.run, sizes[0] * sizes[1] * sizes[2], 1};
    if (items[0] == 0 || items[1] == 0) return CLOPS_SUCCESS; /* no rows: nothing to do */
    clops_status st = add_kernel(op, base, by_width, 2, items);
    if (st == CLOPS_SUCCESS) st = clops_set_arg(op->launches[op->num_launches - 1].kernel, ARG_GEN + 1, sizeof a, &a);
    return st;
}

clops_status clops_portable_max_unpooling(clops_operator *op)
{
    const clops_op_params *p = &op->params;
    prepare_common(op);
    op->kernel_name = "clops_mark";
    const char *why = too_large(p);
    if (why) return clops_fail(CLOPS_ERROR_COMPILER_UNAVAILABLE, "%s", why);
    if (p->output.count == 0) return CLOPS_SUCCESS; /* nothing can be written */
    cl_uint words[ST_BUFFER_WORDS] = {0};
    clops_status st = clops_max_unpooling_state(op, words, 0, true);
    uint64_t kh, kw;
    window_shape(op, &kh, &kw);
    const bool planes = planes_shape(op);
    unpool_arg a = {(cl_uint)(p->indices.elem_size / 4), p->indices_layout == CLOPS_INDICES_PER_PLANE,
                    (cl_uint)kh, (cl_uint)kw, kh || planes, p->input.packed, 0,
                    p->input.packed && p->indices.packed && p->output.packed, kh && planes, {0, 0, 0}};
    if (st == CLOPS_SUCCESS && kh) st = add_rows(op, "clops_windows", true, p->input.sizes, kh * kw, a);
    if (st == CLOPS_SUCCESS && planes) {
        const uint64_t items[3] = {p->input.sizes[0] * p->input.sizes[1], 1, 1};
        st = add_kernel(op, "clops_planes", true, 1, items);
        if (st == CLOPS_SUCCESS) st = clops_set_arg(op->launches[op->num_launches - 1].kernel, ARG_GEN + 1, sizeof a, &a);
    }
    if (st == CLOPS_SUCCESS) st = add_rows(op, "clops_mark", false, p->input.sizes, 1, a);
    if (st == CLOPS_SUCCESS) st = add_rows(op, "clops_place", true, p->output.sizes, 1, a);
    return st;
}
