/* depth_space.c - the plan for DepthToSpace and SpaceToDepth on OpenCL.
 *
 * One program per (element width, block size, order, offset width), built once
 * per context; one launch over the output as (W, H, N*C). */
#include <stdio.h>
#include <string.h>

#include "cl/params.h"
#include "ops/ops.h"

/* Which axis the NDRange walks: the one both tensors have contiguous. W for
 * packed NCHW (and anything else without a unit C stride), C for NHWC. */
static bool channels_inner(const clops_op_params *p)
{
    return p->input.strides[1] == 1 && p->output.strides[1] == 1 && p->input.strides[3] != 1;
}

/* Inner-axis positions per work-item. CPUs, W inner: WHOLE_ROW_BYTES' worth, so
 * that rows up to that long are one work-item each (measured on PoCL with
 * notes/depth_space_ab2.c at 16 and 64 MiB against 1024-byte pieces: SpaceToDepth
 * 1.0-1.57x, DepthToSpace 1.02-1.24x at 16 MiB and 0.84-1.06x at 64 MiB: pieces
 * that do not divide a row leave a short last piece, and SpaceToDepth's item
 * moves b rows of it); longer rows and C inner: 1024 bytes' worth, long enough
 * for the loop to vectorise and amortise the item's index arithmetic, short
 * enough to leave many items for the threads. Other devices: one position, so
 * neighbouring work-items touch neighbouring addresses (coalescing); `clops
 * tune` finds better on a given device. */
#define WHOLE_ROW_BYTES 8192u
static unsigned chunk_positions(const clops_context *ctx, const clops_op_params *p)
{
    const size_t es = p->input.elem_size;
    const bool d2s = p->type == CLOPS_OPERATOR_DEPTH_TO_SPACE;
    const uint64_t narrow = d2s ? p->input.sizes[3] : p->output.sizes[3];
    const int long_rows = clops_program_list_case(CLOPS_LIST_LONG_ROWS); /* listing: every case (api/aot.c) */
    if (!(ctx->info.type & CL_DEVICE_TYPE_CPU)) return 1u;
    if (!channels_inner(p) && (long_rows >= 0 ? !long_rows : narrow * es <= WHOLE_ROW_BYTES))
        return (unsigned)(WHOLE_ROW_BYTES / es);
    return (unsigned)(1024 / es);
}

/* Whether the W-inner loop can move explicit vectors (kernels/depth_space.cl,
 * VEC): rows contiguous on both sides, a block with a written-out shuffle, and
 * elements that fit a vector lane (8-byte ones as ulong, which needs 64-bit
 * integers; 16-byte elements are a uint4 vector each already). */
static bool vector_rows(const clops_context *ctx, const clops_op_params *p)
{
    const uint32_t b = p->block_size;
    const size_t es = p->input.elem_size;
    return !channels_inner(p) && p->input.strides[3] == 1 && p->output.strides[3] == 1 &&
           (b == 2 || b == 3 || b == 4 || b == 8) && (es <= 4 || (es == 8 && ctx->info.has_int64));
}

/* Whether explicit vectors run as the vector-rows kernels (depth_space.cl ROWS:
 * one vector of each row per work-item, coalesced across a group): on every
 * device but CPUs, which run the chunked loop. */
static bool rows_form(const clops_context *ctx)
{
    return !(ctx->info.type & CL_DEVICE_TYPE_CPU);
}

/* The vector-rows kernels' lanes per vector (VW): the tuned bytes per vector
 * where they make 2, 4, 8 or 16 lanes of the element (the vector types the
 * kernels shuffle), else the device class's (cl/params.c) in elements, 2 to 16. */
static unsigned rows_lanes(const clops_context *ctx, size_t elem_size, unsigned tuned_bytes)
{
    const unsigned t = tuned_bytes / (unsigned)elem_size;
    if (tuned_bytes % elem_size == 0 && (t == 2 || t == 4 || t == 8 || t == 16)) return t;
    const unsigned v = clops_device_params_of(ctx)->depth_space.vector_bytes / (unsigned)elem_size;
    return v >= 16 ? 16 : v >= 8 ? 8 : v >= 4 ? 4 : 2;
}

/* Local-memory tiles: whether the variant allows them (rows contiguous on both
 * sides; b*TILE elements of local memory; TILE from cl/params.c). */
static bool tile_rows(const clops_op_params *p)
{
    return !channels_inner(p) && p->input.strides[3] == 1 && p->output.strides[3] == 1 && p->block_size <= 8;
}

/* The default loop. CPUs: explicit vectors for 8-byte elements, where they beat
 * the element loop by 1.04-1.37x at every block size and order but one
 * (notes/depth_space_perf.md); for 1- to 4-byte elements PoCL's auto-vectorised
 * element loop is level or faster (1-byte block 3: 2x faster), so it stays.
 * GPUs: the vector-rows kernels for elements up to the class's rows_max_bytes
 * (cl/params.c; predicted 0.85 or more of a copy on an H200, where one element
 * per work-item through local memory was bound by instruction issue:
 * notes/d2s-gpu.md), else local-memory tiles (8-byte elements: 0.81-1.05 of a
 * copy measured on an H200). Other devices: the element loop over one position
 * per work-item. `clops tune` tries every loop the variant allows. */
static clops_loop default_loop(const clops_context *ctx, const clops_op_params *p)
{
    if (ctx->info.type & CL_DEVICE_TYPE_CPU)
        return vector_rows(ctx, p) && p->input.elem_size == 8 ? CLOPS_LOOP_VECTORS : CLOPS_LOOP_ELEMENTS;
    if (vector_rows(ctx, p) && p->input.elem_size <= clops_device_params_of(ctx)->depth_space.rows_max_bytes)
        return CLOPS_LOOP_VECTORS;
    if ((ctx->info.type & CL_DEVICE_TYPE_GPU) && tile_rows(p)) return CLOPS_LOOP_TILE;
    return CLOPS_LOOP_ELEMENTS;
}

/* The loop that runs: the wanted one where the variant allows it, else the default. */
static clops_loop resolve_loop(const clops_context *ctx, const clops_op_params *p, clops_loop want)
{
    if (want == CLOPS_LOOP_ELEMENTS || (want == CLOPS_LOOP_VECTORS && vector_rows(ctx, p)) ||
        (want == CLOPS_LOOP_TILE && tile_rows(p)))
        return want;
    return default_loop(ctx, p);
}

/* The kernel's size vector and range: (N, C, H_out, W) where C and W are the
 * axes a work-item is indexed by (C_out / W_in for DepthToSpace, C_in / W_out
 * for SpaceToDepth); range (W, H, N*C), or (C, W, N*H) with channels inner, or
 * for the vector-rows kernels (W / (chunk positions), H, C). */
static void kernel_sizes(const clops_operator *op, uint64_t sizes[4], uint64_t items[3])
{
    const clops_op_params *p = &op->params;
    const unsigned chunk = op->chunk;
    const bool d2s = p->type == CLOPS_OPERATOR_DEPTH_TO_SPACE;
    sizes[0] = p->output.sizes[0];
    sizes[1] = d2s ? p->output.sizes[1] : p->input.sizes[1];
    sizes[2] = p->output.sizes[2];
    sizes[3] = d2s ? p->input.sizes[3] : p->output.sizes[3];
    if (op->loop == CLOPS_LOOP_VECTORS && rows_form(op->ctx)) {
        items[0] = (sizes[3] + chunk - 1) / chunk, items[1] = sizes[2], items[2] = sizes[1];
    } else if (channels_inner(p)) {
        items[0] = (sizes[1] + chunk - 1) / chunk, items[1] = sizes[3], items[2] = sizes[0] * sizes[2];
    } else {
        items[0] = (sizes[3] + chunk - 1) / chunk, items[1] = sizes[2], items[2] = sizes[0] * sizes[1];
    }
}

/* Sets the operator's chunk, vector width, kernel and build options for `loop`
 * (resolved), from the tuned chunk and vector bytes (0: the defaults). */
static void set_loop(clops_operator *op, const char *variant, const clops_tuning *tuned, clops_loop loop)
{
    const bool d2s = op->params.type == CLOPS_OPERATOR_DEPTH_TO_SPACE;
    const clops_depth_space_params *dp = &clops_device_params_of(op->ctx)->depth_space;
    const unsigned tuned_chunk = tuned->chunk;
    op->loop = loop;
    op->vector_bytes = 0;
    if (loop == CLOPS_LOOP_TILE) {
        op->chunk = 1; /* one position per work-item, tile_items per group */
        op->kernel_name = d2s ? "depth_to_space_tile" : "space_to_depth_tile";
        snprintf(op->options, sizeof op->options, "%s -DCHUNK=1u -DVEC=0 -DTILE=%uu", variant, dp->tile_items);
        return;
    }
    if (loop == CLOPS_LOOP_VECTORS && rows_form(op->ctx)) {
        /* chunk: whole vectors' positions (tuned ones rounded down, at least one vector) */
        const unsigned lanes = rows_lanes(op->ctx, op->params.input.elem_size, tuned->vector_bytes);
        const unsigned vectors = tuned_chunk >= lanes ? tuned_chunk / lanes : tuned_chunk ? 1 : dp->vectors_per_item;
        op->chunk = vectors * lanes;
        op->vector_bytes = lanes * (unsigned)op->params.input.elem_size;
        op->kernel_name = d2s ? "depth_to_space_rows" : "space_to_depth_rows";
        snprintf(op->options, sizeof op->options, "%s -DCHUNK=%uu -DVEC=1 -DROWS=1 -DVW=%u -DUNROLL=1", variant,
                 vectors, lanes);
        return;
    }
    op->chunk = tuned_chunk ? tuned_chunk : chunk_positions(op->ctx, &op->params);
    op->kernel_name = d2s ? "depth_to_space" : "space_to_depth";
    snprintf(op->options, sizeof op->options, "%s -DCHUNK=%uu -DVEC=%d", variant, op->chunk,
             loop == CLOPS_LOOP_VECTORS);
}

/* Builds (or reuses) the program for `loop` and adds its launch; `*tile_refused`
 * when the tile kernel's group size is not accepted (the launch is then unusable). */
static clops_status launch_loop(clops_operator *op, const char *variant, const clops_tuning *tuned, clops_loop loop,
                                bool *tile_refused)
{
    *tile_refused = false;
    set_loop(op, variant, tuned, loop);
    cl_program program;
    clops_status st = clops_program_get(op->ctx, "depth_space.cl", op->options, &program, &op->program_origin);
    if (st != CLOPS_SUCCESS) return st;
    uint64_t sizes[4], items[3];
    kernel_sizes(op, sizes, items);
    /* the tile kernels' reqd_work_group_size */
    const size_t tile_local[3] = {clops_device_params_of(op->ctx)->depth_space.tile_items, 1, 1};
    const size_t *local = loop == CLOPS_LOOP_TILE ? tile_local : tuned->local[0] ? tuned->local : NULL;
    st = clops_operator_add_launch(op, program, op->kernel_name, 3, items, local);
    if (st != CLOPS_SUCCESS || loop != CLOPS_LOOP_TILE) return st;
    /* The scheduler takes a wanted local size only if the device and kernel accept it. */
    *tile_refused = strcmp(op->local_size_origin, "tuned") != 0;
    op->local_size_origin = "fixed by the tile kernel";
    return st;
}

static clops_status prepare(clops_operator *op)
{
    const clops_op_params *p = &op->params;
    const bool d2s = p->type == CLOPS_OPERATOR_DEPTH_TO_SPACE;
    const clops_tensor *x = &p->input, *y = &p->output;
    op->offset_64 = !clops_fits_u32(p);
    op->kernel_name = d2s ? "depth_to_space" : "space_to_depth";
    /* The variant: everything but the tunable CHUNK and VEC. */
    char variant[CLOPS_OPTIONS_MAX - 64];
    snprintf(variant, sizeof variant,
             "-DELEM_BYTES=%zu -DOFFSET_64=%d -DBLOCK=%uu -DORDER_DCR=%d -DCHANNELS_INNER=%d -DUNIT_W=%d -DUNIT_C=%d",
             x->elem_size, op->offset_64, p->block_size, p->order == CLOPS_ORDER_DEPTH_COLUMN_ROW, channels_inner(p),
             x->strides[3] == 1 && y->strides[3] == 1, x->strides[1] == 1 && y->strides[1] == 1);
    snprintf(op->tune_key, sizeof op->tune_key, "%s %s", op->kernel_name, variant);
    clops_tuning tuned = {0, {0, 0, 0}, CLOPS_LOOP_DEFAULT, 0};
    if (op->forced) tuned = op->force;
    else if (y->count) clops_tuning_lookup(op->ctx, op->tune_key, &tuned);
    op->loop = resolve_loop(op->ctx, p, tuned.loop);
    if (y->count == 0) { /* nothing to launch: the options still say what would run */
        set_loop(op, variant, &tuned, op->loop);
        return CLOPS_SUCCESS;
    }
    /* Past the block sizes networks use, the portable program (portable.c): the
     * specialised one unrolls over the block, and its build time grows with it (16 s at
     * 256, minutes at 3000: a model's blocksize attribute would stall creation); the
     * portable one is built once, whatever the operator. */
    if (p->block_size > CLOPS_SPECIALISED_BLOCK_MAX && !op->forced) return clops_portable_depth_space(op);
    bool refused;
    clops_status st = launch_loop(op, variant, &tuned, op->loop, &refused);
    if (st == CLOPS_ERROR_COMPILER_UNAVAILABLE && op->loop == CLOPS_LOOP_TILE &&
        clops_program_list_case(CLOPS_LIST_LONG_ROWS) >= 0) /* listing: a device refusing the tile's group size */
        launch_loop(op, variant, &tuned, CLOPS_LOOP_ELEMENTS, &refused);
    if (st == CLOPS_SUCCESS && refused) {
        /* The device or kernel cannot take the tile's group size: the element loop instead. */
        clReleaseKernel(op->launches[0].kernel);
        op->launches[0].kernel = NULL;
        op->num_launches = 0;
        st = launch_loop(op, variant, &tuned, CLOPS_LOOP_ELEMENTS, &refused);
    }
    return st;
}

static clops_status enqueue(clops_operator *op, const clops_buffers *b, cl_uint nwait, const cl_event *wait,
                            cl_event *event)
{
    if (op->num_launches == 0) return clops_enqueue_nothing(op->ctx, nwait, wait, event); /* empty tensors */
    if (op->portable) return clops_portable_depth_space_enqueue(op, b, nwait, wait, event);
    const clops_op_params *p = &op->params;
    const clops_launch *l = &op->launches[0];
    uint64_t sizes[4], items[3];
    kernel_sizes(op, sizes, items);
    const uint64_t *const dims[3] = {sizes, p->input.strides, p->output.strides};
    clops_status st = clops_set_arg(l->kernel, 0, sizeof(cl_mem), &b->input);
    if (st == CLOPS_SUCCESS) st = clops_set_arg(l->kernel, 1, sizeof(cl_mem), &b->output);
    if (st == CLOPS_SUCCESS) st = clops_set_dims_args(op, l->kernel, 2, 3, dims);
    if (st == CLOPS_SUCCESS) st = clops_enqueue_launch(op, l, nwait, wait, event);
    return st;
}

/* ---- validation: the output shape ---------------------------------------------------------- */

/* DepthToSpace's and SpaceToDepth's descriptors have the same layout. */
static clops_status unpack(const void *desc, clops_op_params *p, const clops_tensor_desc **in,
                           const clops_tensor_desc **idx, const clops_tensor_desc **out)
{
    const clops_depth_to_space_desc *d = desc;
    (void)idx;
    *in = d->input, *out = d->output, p->block_size = d->block_size, p->order = d->order;
    return CLOPS_SUCCESS;
}

static clops_status check_output_sizes(const clops_op_params *p, const uint64_t want[4])
{
    for (int d = 0; d < 4; d++)
        if (p->output.sizes[d] != want[d])
            return clops_fail(CLOPS_ERROR_OUTPUT_SIZE_MISMATCH,
                              "output sizes {%llu, %llu, %llu, %llu} should be {%llu, %llu, %llu, %llu} "
                              "(dimension %d differs)",
                              (unsigned long long)p->output.sizes[0], (unsigned long long)p->output.sizes[1],
                              (unsigned long long)p->output.sizes[2], (unsigned long long)p->output.sizes[3],
                              (unsigned long long)want[0], (unsigned long long)want[1],
                              (unsigned long long)want[2], (unsigned long long)want[3], d);
    return CLOPS_SUCCESS;
}

/* DepthToSpace {N, C/b^2, H*b, W*b}, SpaceToDepth {N, C*b^2, H/b, W/b}, after
 * the block size, the order and the divisibility rule. */
static clops_status output_sizes(const clops_op_params *p, uint64_t want[4])
{
    const uint64_t b = p->block_size, bb = b * b; /* b < 2^32, so b*b fits */
    const uint64_t *in = p->input.sizes;
    if (b == 0) return clops_fail(CLOPS_ERROR_INVALID_BLOCK_SIZE, "block size 0 is invalid (must be >= 1)");
    if (p->order != CLOPS_ORDER_DEPTH_COLUMN_ROW && p->order != CLOPS_ORDER_COLUMN_ROW_DEPTH)
        return clops_fail(CLOPS_ERROR_INVALID_ORDER, "order %d is neither DCR (0) nor CRD (1)", (int)p->order);
    want[0] = in[0];
    if (p->type == CLOPS_OPERATOR_DEPTH_TO_SPACE) {
        if (in[1] % bb != 0)
            return clops_fail(CLOPS_ERROR_CHANNELS_NOT_DIVISIBLE,
                              "input channels %llu not divisible by block size squared %llu (block size %llu)",
                              (unsigned long long)in[1], (unsigned long long)bb, (unsigned long long)b);
        want[1] = in[1] / bb;
        want[2] = in[2] * b;
        want[3] = in[3] * b;
    } else {
        if (in[2] % b != 0 || in[3] % b != 0)
            return clops_fail(CLOPS_ERROR_SPATIAL_NOT_DIVISIBLE,
                              "input height %llu and width %llu must both be divisible by block size %llu",
                              (unsigned long long)in[2], (unsigned long long)in[3], (unsigned long long)b);
        /* C * b^2 can pass 2^64; then no uint32 output size can match it. */
        if (!clops_mul_u64(in[1], bb, &want[1]))
            return clops_fail(CLOPS_ERROR_OUTPUT_SIZE_MISMATCH,
                              "output channels would be %llu x %llu, which overflows 64 bits",
                              (unsigned long long)in[1], (unsigned long long)bb);
        want[2] = in[2] / b;
        want[3] = in[3] / b;
    }
    return CLOPS_SUCCESS;
}

static clops_status check(const clops_op_params *p)
{
    uint64_t want[4];
    const clops_status st = output_sizes(p, want);
    return st == CLOPS_SUCCESS ? check_output_sizes(p, want) : st;
}

const clops_op_entry clops_depth_to_space_op = {
    .type = CLOPS_OPERATOR_DEPTH_TO_SPACE, .unpack = unpack, .output_sizes = output_sizes, .check = check,
    .host_run = clops_host_depth_to_space, .prepare = prepare, .enqueue = enqueue, .tunes_local_size = true,
    .portable = clops_portable_depth_space,
};
const clops_op_entry clops_space_to_depth_op = {
    .type = CLOPS_OPERATOR_SPACE_TO_DEPTH, .unpack = unpack, .output_sizes = output_sizes, .check = check,
    .host_run = clops_host_space_to_depth, .prepare = prepare, .enqueue = enqueue, .tunes_local_size = true,
    .portable = clops_portable_depth_space,
};
