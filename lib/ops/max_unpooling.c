/* max_unpooling.c - the plan for MaxUnpooling on OpenCL.
 *
 * (unpool_exec.c enqueues the plan's launches and reads its status words.)
 *
 * Plans, chosen at create time from the shapes alone:
 *   serial   small inputs (up to SERIAL_MAX elements): one work-item scatters in
 *            input order, after zero-filling a small output itself (one launch
 *            in all) or after the clear kernel;
 *   windows  output H and W are multiples of the input's (what a non-overlapping
 *            max pool produces): the windows kernel writes every output element
 *            once and checks that each index lies in its own window; pool
 *            follows it where the cells allow, gated on an index outside its
 *            window (shape_plan);
 *   pool     output H and W near a small multiple of the input's (an
 *            overlapping max pool): the pool kernel gathers every output element
 *            from its candidates and checks each index's neighbourhood;
 *   planes   on CPU devices, in pool's place (and for shapes with neither windows
 *            nor pool), for packed tensors with enough planes: one pass per
 *            (n, c) plane, zero-fill then the plane's inputs in order, while the
 *            plane stays in the cache; an index outside its plane raises the
 *            general path (planes_plan);
 *   general  after windows, pool or planes (gated: it returns at once unless an
 *            index was outside its window or neighbourhood) or alone for any
 *            other shape. CPU devices: bucket, then tiles (max_unpooling.cl
 *            BUCKET), then mark and place only for a tile too crowded to write
 *            within the loop budget (ST_HEAVY); other devices: mark, then place
 *            (MARK).
 * The general path is deterministic on every device: bucket keeps each tile's
 * entries in input order and one work-item writes each tile whole, and mark
 * keeps the largest position with atomic_max, so the largest (last in
 * row-major order) input position naming an output element wins; mark's words
 * need clearing only once in a `period` of executions (max_unpooling.cl
 * MARK_BASE: each execution's words lie above the earlier ones'; after a failed
 * execution the next one zeroes them first).
 *
 * On a device that ends work-items after a number of loop iterations (Mesa's
 * llvmpipe; cl/profile.c, plan.max_loops), every kernel's work-items are planned
 * so that none loops past half of it (item_budget); everywhere each takes its
 * share only from the ids it was planned for
 * (the global size may be rounded up): correctness never depends on the device
 * type, compute units, local size or the order of work-groups, which a device
 * profile changes in CI (cl/profile.c; docs/semantics.md, "Bounded work").
 *
 * While programs are listed (clops kernels list), list_plans names the program
 * of every plan any shape could choose, from the same rule (plan_options).
 *
 * Nothing waits on the host. Bad indices raise a status word on the device;
 * clops_operator_last_status() reads it after the last execution's event. The
 * executions of one operator are chained (each waits for the previous one's
 * event), because they share the status words and the scratch buffer. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/params.h"
#include "ops/ops.h"
#include "ops/unpool.h"

/* The device class's chunk, windows' vector form and pool's tile form are in the
 * parameter table (lib/cl/params.c: unpool_params). */
/* At most this many under a loop limit (unpool_chunk). */
#define UNPOOL_LIMITED_CHUNK 64u
/* Largest input and output (elements) that the serial plan takes: below this a
 * launch costs more than the work. */
#define SERIAL_MAX 4096u
/* The pool plan (max_unpooling.cl pool): cells up to this many rows and columns
 * (a max pool's stride), neighbourhoods reaching one row and column around them
 * (kernel 2-4 with padding up to 1: the pools networks use). */
#define POOL_MAX_STEP 4u
#define POOL_REACH 1u
/* Loop iterations, all loops together, that a work-item may run, or 0 for no
 * limit: half the device's limit (cl/profile.c: Mesa's llvmpipe, rusticl, ends a
 * work-item after 65535, silently, which left the planes kernel's later planes
 * unwritten; issue 31), so that the estimates below (upper bounds per position)
 * keep a margin. Every kernel is then launched on enough work-items to stay
 * below it, at some cost in speed: without a limit the plans keep the few long
 * runs per work-item that CPUs are fastest with. */
static uint64_t item_budget(const clops_operator *op)
{
    return op->ctx->plan.max_loops / 2;
}
/* Work-items per compute unit of the row-striding kernels. */
#define ROWS_PER_UNIT_CPU 16u
#define ROWS_PER_UNIT_GPU 1024u
/* The bucketed general path (max_unpooling.cl bucket, tiles): tiles of about
 * this many output bytes (they stay in the L1 and L2 caches while tiles writes
 * them), at least TILES_PER_ITEM per bucket work-item (tiles' parallelism, down
 * to tiles of 2^TILE_SHIFT_MIN elements) and at most TILES_MAX (bucket's counters
 * per work-item). */
#define TILE_BYTES 131072u
#define TILES_PER_ITEM 4u
#define TILE_SHIFT_MIN 8u
#define TILES_MAX 8192u
/* Unused slots before each bucket (max_unpooling.cl ST_PAD) where buckets are
 * long (bucket_plan): 64 bytes of indices. */
#define BUCKET_PAD 16u

unsigned clops_unpool_tile_shift;

int clops_unpool_planes;

static bool windows_shaped(const clops_op_params *p)
{
    const uint64_t *in = p->input.sizes, *out = p->output.sizes;
    return in[2] && in[3] && out[2] % in[2] == 0 && out[3] % in[3] == 0;
}

/* The pool plan's cell of an input element: output rows (columns) per input row
 * (column), the nearest whole ratio of the sizes (what a max pool's stride
 * gives), 0 when the plan does not apply. */
static uint64_t pool_step(uint64_t in, uint64_t out)
{
    if (in == 0 || out < in) return 0;
    const uint64_t s = (out + in / 2) / in;
    return s <= POOL_MAX_STEP ? s : 0;
}

/* SERIAL_MAX, or a test profile's serial=N (cl/profile.c). */
static uint64_t serial_max(const clops_operator *op)
{
    return op->ctx->plan.serial_max ? op->ctx->plan.serial_max : SERIAL_MAX;
}

static bool serial_plan(const clops_operator *op)
{
    return op->params.input.count <= serial_max(op);
}

/* Compute units of the operator's device as clops plans for it (cl/profile.c). */
static cl_uint compute_units(const clops_operator *op)
{
    return op->ctx->plan.compute_units;
}

/* Input positions (or output columns) per work-item and row chunk (CHUNK). */
/* Whether the operator's device is planned for as a CPU (cl/profile.c). */
static bool cpu_device(const clops_operator *op)
{
    return (op->ctx->info.type & CL_DEVICE_TYPE_CPU) != 0;
}

/* The device class's MaxUnpooling parameters (lib/cl/params.c). */
static const clops_max_unpooling_params *unpool_params(const clops_operator *op)
{
    return &clops_device_params_of(op->ctx)->max_unpooling;
}

static unsigned unpool_chunk(const clops_operator *op)
{
    const unsigned chunk = op->forced && op->force.chunk ? op->force.chunk : unpool_params(op)->chunk;
    /* Under a loop limit a row chunk must fit a work-item whatever the plan: the
     * costliest position (pool's 4 x 4 cells, about 264 iterations) times
     * LIMITED_CHUNK stays within half the budget. */
    return item_budget(op) && chunk > UNPOOL_LIMITED_CHUNK ? UNPOOL_LIMITED_CHUNK : chunk;
}

/* Row chunks of a tensor of `sizes` (max_unpooling.cl FOR_ROWS). */
static uint64_t row_chunks(const clops_operator *op, const uint64_t *sizes)
{
    const unsigned chunk = unpool_chunk(op);
    return (sizes[3] + chunk - 1) / chunk * sizes[2] * sizes[0] * sizes[1];
}

/* The bucketed general path's layout (max_unpooling.cl BUCKET): work-items of
 * bucket (each a run of input rows, as FOR_ROWS), the tile shift, the tiles, and
 * the scratch bytes: values and indices of every input position and BUCKET_PAD
 * unused slots after each (work-item, tile) bucket (counts rounded up to 4),
 * then tiles + 1 bounds per work-item. */
typedef struct bucket_layout {
    uint64_t groups, tiles, slots, bytes;
    unsigned shift, pad;
} bucket_layout;

static bucket_layout bucket_plan(const clops_operator *op)
{
    const clops_op_params *p = &op->params;
    bucket_layout b = {0};
    const uint64_t rows = row_chunks(op, p->input.sizes), cap = (uint64_t)compute_units(op) * ROWS_PER_UNIT_CPU;
    b.groups = rows < cap ? rows : cap;
    /* bucket's loops: two over its positions, two over the tiles (at most TILES_MAX) */
    const uint64_t budget = item_budget(op);
    const uint64_t per_group = budget > 2 * TILES_MAX + 1024 ? (budget - 2 * TILES_MAX) / 2 : 512;
    const uint64_t least = budget ? (p->input.count + per_group - 1) / per_group : 0;
    if (b.groups < least) b.groups = least < rows ? least : rows;
    if (b.groups == 0) b.groups = 1;
    const uint64_t out = p->output.count ? p->output.count : 1;
    unsigned shift = 0;
    while (((uint64_t)p->input.elem_size << (shift + 1)) <= TILE_BYTES) shift++;
    while (shift > TILE_SHIFT_MIN && ((out - 1) >> shift) + 1 < TILES_PER_ITEM * b.groups) shift--;
    /* an even spread of the inputs leaves a tile at most an eighth of a work-item's loop budget */
    while (budget && shift > TILE_SHIFT_MIN && ((out - 1) >> shift) + 1 < TILES_MAX / 2 &&
           p->input.count / (((out - 1) >> shift) + 1) > budget / 8)
        shift--;
    if (clops_unpool_tile_shift) shift = clops_unpool_tile_shift;
    while (((out - 1) >> shift) + 1 > TILES_MAX && !clops_unpool_tile_shift && shift < 32) shift++;
    b.shift = shift;
    b.tiles = ((out - 1) >> shift) + 1;
    /* Pads only where buckets are long enough to fall into step (64 entries on
     * average); many small buckets need none and would double the scratch. */
    b.pad = p->input.count / (b.groups * b.tiles) >= 64 ? BUCKET_PAD : 0;
    b.slots = p->input.count + b.groups * b.tiles * b.pad;
    const uint64_t n = (b.slots + 3) / 4 * 4;
    b.bytes = n * (p->input.elem_size + 4) + b.groups * (b.tiles + 1) * 4;
    return b;
}

/* The general path for 1- and 2-byte elements on devices that are not CPUs
 * (max_unpooling_sort.cl: bin, settle; mark and place behind them): tiles of
 * 2^shift outputs and bin's counters (`hist`, the most tiles), each in 7/8 of
 * the device's local memory and at most SORT_MAX; slots per tile (`cap`: twice
 * what an even spread gives, and 64, or the inputs' count where that is less:
 * indices crowded more than that into a tile go to mark and place); bin's
 * work-groups (`groups`:
 * sort_groups per compute unit, more under a loop limit); the scratch bytes
 * before mark's words. All zero where it does not apply: CPUs, other element
 * widths, strided tensors, 64-bit offsets, more tiles than counters, or a loop
 * limit too low for a tile. */
#define SORT_MAX 8192u
#define SORT_SHIFT_MAX 13u /* 2^13 = SORT_MAX */
#define SORT_U 8u          /* max_unpooling_sort.cl SORT_U */
/* settle's work-groups per compute unit at most: a launch gated off costs one
 * wave (the GPU model: pool/u32 w1 0.97 -> 0.84 with a group per tile). */
#define SETTLE_GROUPS 8u
typedef struct sort_layout { /* tiles == 0: bin and settle do not run */
    unsigned shift, hist;
    uint64_t tiles, cap, groups, bytes;
} sort_layout;

/* The device's side of sort_plan: whether bin and settle can run for op's types
 * and layouts at all (some shape), with the tile shift and counters they then
 * take (which depend on the device's local memory alone). */
static bool sort_sizes(const clops_operator *op, unsigned *shift_out, unsigned *hist_out)
{
    const clops_op_params *p = &op->params;
    const uint64_t e = p->input.elem_size, local = op->ctx->plan.local_mem_bytes / 8 * 7;
    if (!unpool_params(op)->sort_items || cpu_device(op) || e > 2 || !p->input.packed || !p->indices.packed ||
        !p->output.packed || !clops_fits_u32(p))
        return false;
    unsigned hist = SORT_MAX, shift = SORT_SHIFT_MAX;
    while (hist > 256 && hist * 4u > local) hist /= 2;
    while (shift > 8 && ((uint64_t)1 << shift) * (4 + e) + 16 > local) shift--;
    *shift_out = shift, *hist_out = hist;
    return hist * 4u <= local && ((uint64_t)1 << shift) * (4 + e) + 16 <= local;
}

static sort_layout sort_plan(const clops_operator *op)
{
    const clops_op_params *p = &op->params;
    const clops_max_unpooling_params *up = unpool_params(op);
    const uint64_t e = p->input.elem_size, in = p->input.count, out = p->output.count;
    sort_layout s = {0};
    unsigned hist, shift;
    if (serial_plan(op) || !in || !out || !sort_sizes(op, &shift, &hist)) return s;
    const uint64_t tile = (uint64_t)1 << shift, tiles = (out + tile - 1) / tile;
    if (tiles > hist) return s;
    const uint64_t even = (in * tile + out - 1) / out;
    /* no tile receives more entries than there are inputs (a tile wider than the output: one tile) */
    const uint64_t spread = (2 * even + 64 + 3) / 4 * 4, all = (in + 3) / 4 * 4, cap = spread < all ? spread : all;
    /* Under a loop limit, as if on groups of one work-item: bin's two passes over
     * the counters and its steps, settle's clears, passes and stores per tile. */
    const uint64_t budget = item_budget(op), per_tile = 3 * tile + 2 * cap / SORT_U + tile * e / 16 + 16;
    if (budget && (budget <= 2 * hist + 64 || per_tile > budget)) return s;
    const uint64_t step = (uint64_t)up->sort_items * SORT_U, most = (in + step - 1) / step;
    uint64_t groups = (uint64_t)compute_units(op) * up->sort_groups;
    if (budget) {
        const uint64_t steps = (budget - 2 * hist) / 2, least = (in + SORT_U * steps - 1) / (SORT_U * steps);
        if (groups < least) groups = least;
    }
    s.shift = shift, s.hist = hist, s.tiles = tiles, s.cap = cap;
    s.groups = groups < most ? groups : most;
    s.bytes = (((tiles + 1) & ~(uint64_t)1) + 2 * tiles * cap) * 4;
    /* bin's scratch and mark's words in one buffer past the device's maximum allocation: mark and
     * place alone (their words may fit), rather than the host (needs_host) */
    const uint64_t most_alloc = op->ctx->info.max_alloc_bytes;
    if (most_alloc && s.bytes + clops_unpool_mark_bytes(p) > most_alloc) return (sort_layout){0};
    return s;
}

/* Whether place takes its vector form (max_unpooling.cl PLACE_VEC): the device
 * class's choice, for a packed output with 32-bit offsets and elements of at
 * most 8 bytes. */
static bool place_vec(const clops_operator *op)
{
    const clops_op_params *p = &op->params;
    return unpool_params(op)->place_vector && !cpu_device(op) && p->output.packed && clops_fits_u32(p) &&
           p->input.elem_size <= 8;
}

/* Whether a general path on op's device has mark and place: on every device but
 * CPUs, and on CPUs behind tiles (for tiles too crowded to write) only under a
 * loop limit (max_unpooling.cl ST_HEAVY). */
static bool uses_mark(const clops_operator *op)
{
    return !cpu_device(op) || item_budget(op);
}

bool clops_max_unpooling_needs_host(const clops_operator *op, char *why, size_t size)
{
    const clops_op_params *p = &op->params;
    if (serial_plan(op) || p->output.count == 0) return false;
    const bool cpu = cpu_device(op);
    const bucket_layout bl = cpu ? bucket_plan(op) : (bucket_layout){0};
    const sort_layout sl = sort_plan(op);
    if (p->input.count >= UINT32_MAX || bl.slots >= UINT32_MAX) {
        snprintf(why, size, "MaxUnpooling of %llu input elements: the device's scratch positions are 32-bit",
                 (unsigned long long)p->input.count);
        return true;
    }
    /* < 2^64: slots < 2^32, tiles of up to 2^32; outputs below 2^62 elements (validation) */
    const uint64_t scratch = bl.bytes + sl.bytes + (uses_mark(op) ? clops_unpool_mark_bytes(p) : 0);
    if (op->ctx->info.max_alloc_bytes && scratch > op->ctx->info.max_alloc_bytes) {
        snprintf(why, size, "MaxUnpooling needs %llu bytes of scratch, more than the device's maximum allocation",
                 (unsigned long long)scratch);
        return true;
    }
    return false;
}

/* A plan's shape-dependent choices (the header's plans), from which its build
 * options follow (plan_options). */
typedef struct unpool_plan {
    bool serial, serial_fills, windows, pool, vec, bucket, mark, planes;
    uint64_t kh, kw, sh, sw; /* windows: output rows (columns) per input row (column); pool: its cell */
    unsigned tx, ty, px;     /* pool on GPUs (POOL_TILE): the work-group's tile and inputs per item, else 0 */
    sort_layout sort;        /* bin and settle (sort_plan), all zero where they do not run */
} unpool_plan;

/* Pool's vector form: 2 x 2 cells, packed, 32-bit offsets, elements of 1, 2, 4
 * bytes or 8 (as ulong); 1- and 2-byte pairs are stored as one word, so their
 * rows must start at even offsets (`even_width`: the output's width is even).
 * 8-byte indices load as ulong lanes (INT64_OK) or word pairs, for every
 * element width (notes/max_unpooling.md, poolfast: the Oclgrind finding). */
static bool pool_vec(const clops_operator *op, uint64_t sh, uint64_t sw, bool even_width)
{
    const clops_op_params *p = &op->params;
    return sh == 2 && sw == 2 && POOL_REACH == 1 && p->input.packed && p->indices.packed && p->output.packed &&
           clops_fits_u32(p) &&
           (p->input.elem_size == 4 || (p->input.elem_size == 8 && op->ctx->info.has_int64) ||
            (p->input.elem_size <= 2 && even_width));
}

/* Pool's GPU form (POOL_TILE): on devices other than CPUs, for packed tensors
 * with 32-bit offsets; its tile (the work-group: pool_tile_x columns or fewer
 * by as many rows as the device's group size allows, powers of 2) in *tx, *ty,
 * and the consecutive inputs per work-item in *px (pool_tile_bytes of them, for
 * elements of up to 4 bytes; 1 for wider ones). */
static bool pool_tile(const clops_operator *op, unsigned *tx, unsigned *ty, unsigned *px)
{
    const clops_op_params *p = &op->params;
    *tx = *ty = *px = 0;
    /* Every element width (16-byte ones since 2026-11-28: the GPU model put overlapping pools of them
     * at 0.43 of a copy on the row kernel, 0.96 here). Oclgrind 21.10 itself crashes in this kernel
     * with 8- and 16-byte elements under --uninitialized (tools/scripts/oclgrind.sh checks those
     * cases without it). */
    const unsigned tile_x = unpool_params(op)->pool_tile_x, tile_items = unpool_params(op)->pool_tile_items;
    if (!tile_items || !tile_x || cpu_device(op) || POOL_REACH != 1 || !p->input.packed || !p->indices.packed || !p->output.packed ||
        !clops_fits_u32(p))
        return false;
    size_t most = op->ctx->plan.target_group ? op->ctx->plan.target_group : tile_items, dev = 0;
    if (op->ctx->plan.max_group && op->ctx->plan.max_group < most) most = op->ctx->plan.max_group;
    if (op->unpool.group_limit && op->unpool.group_limit < most) most = op->unpool.group_limit;
    if (clGetDeviceInfo(op->ctx->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof dev, &dev, NULL) == CL_SUCCESS &&
        dev && dev < most)
        most = dev;
    unsigned items = 1;
    while (items * 2 <= most && items * 2 <= tile_items) items *= 2;
    *tx = items < tile_x ? items : tile_x;
    *ty = items / *tx;
    const size_t e = p->input.elem_size, bytes = unpool_params(op)->pool_tile_bytes;
    *px = 1;
    while (e <= 4 && *px * 2 * e <= bytes && *px < 8) *px *= 2;
    return true;
}

/* Positions per work-item of windows' GPU form (max_unpooling.cl WV), 0 where
 * it does not apply: devices that are not CPUs, windows 2 wide, packed, 32-bit
 * offsets (its VECTOR_DEFS), elements of 1, 2, 4 bytes or 8 (as ulong: 64-bit
 * integers needed). 8-byte elements were off here for a while (2026-11-28): on
 * Mesa 22.3's rusticl every value came out 0, a driver bug that the kernel's
 * WV_IS now steps around (notes/gpu_plans.md). */
static unsigned windows_vec(const clops_operator *op, const unpool_plan *pl)
{
    const clops_op_params *p = &op->params;
    const size_t e = p->input.elem_size;
    if (!unpool_params(op)->window_row_bytes || cpu_device(op) || !pl->windows || pl->kw != 2 || !p->input.packed ||
        !p->indices.packed || !p->output.packed || !clops_fits_u32(p) || e > 8 || (e == 8 && !op->ctx->info.has_int64))
        return 0;
    const unsigned v = unpool_params(op)->window_row_bytes / (unsigned)(2 * e);
    return v < 2 ? 2 : v;
}

/* The plan of a serial, general (kh = kw = 0), windows (kh x kw) or pool (sh x
 * sw) shape: what every choice implies. */
static unpool_plan make_plan(const clops_operator *op, bool serial, bool serial_fills, uint64_t kh, uint64_t kw,
                             uint64_t sh, uint64_t sw, bool even_width)
{
    unpool_plan pl = {.serial = serial, .serial_fills = serial && serial_fills};
    pl.windows = !serial && kh && kw;
    pl.kh = pl.windows ? kh : 0, pl.kw = pl.windows ? kw : 0;
    pl.pool = !serial && sh && sw;
    pl.sh = pl.pool ? sh : 0, pl.sw = pl.pool ? sw : 0;
    pl.vec = pl.pool && !pool_tile(op, &pl.tx, &pl.ty, &pl.px) && pool_vec(op, sh, sw, even_width);
    if (!pl.pool) pl.tx = pl.ty = pl.px = 0;
    /* The general path: on CPUs bucketed (bucket, tiles: measured faster than
     * claims and atomics there, notes/max_unpooling.md, scatdev); elsewhere mark
     * and place (atomic_max per output element, then a gather: every work-item's
     * work bounded whatever the indices, coalesced where they are). */
    pl.bucket = !serial && cpu_device(op);
    pl.mark = !serial && uses_mark(op);
    /* For 1- and 2-byte elements on GPUs bin and settle, mark and place behind them
     * for crowded tiles (sort_plan: the GPU model put mark and place at 0.21 of a
     * copy for scattered 1-byte indices; notes/gpu_plans.md). */
    if (!serial) pl.sort = sort_plan(op);
    return pl;
}

/* Plan pl with planes instead of pool (windows kept: for 2x2 indices the windows
 * kernel is as fast, and it skips itself while the indices need more). */
static unpool_plan with_planes(unpool_plan pl)
{
    pl.pool = pl.vec = false, pl.sh = pl.sw = 0, pl.tx = pl.ty = pl.px = 0;
    pl.planes = true;
    return pl;
}

/* The planes plan (max_unpooling.cl planes) on CPU devices: packed tensors with
 * enough planes to keep every compute unit busy, each output plane small enough
 * to stay in a core's cache while its inputs are written into it. Measured on
 * PoCL (notes/max_unpooling.md, planes): 3x3/2/1 pool indices 1.6x and scattered
 * in-plane indices 2x the pool and bucketed paths; on a GPU one work-item per
 * plane would idle the device, so there pool stays. */
#define PLANES_PER_UNIT 2u
#define PLANE_MAX_BYTES (2u << 20)
/* Whether any shape of op's layouts can take planes on op's device (the seam included). */
static bool planes_allowed(const clops_operator *op)
{
    const clops_op_params *p = &op->params;
    return clops_unpool_planes != CLOPS_PLANES_NEVER && p->input.packed && p->indices.packed && p->output.packed &&
           ((op->ctx->info.type & CL_DEVICE_TYPE_CPU) || clops_unpool_planes == CLOPS_PLANES_ALWAYS);
}

static bool planes_plan(const clops_operator *op)
{
    const clops_op_params *p = &op->params;
    const uint64_t planes = p->input.sizes[0] * p->input.sizes[1];
    /* a plane's loops: its zero fill, 16 elements an iteration, and its inputs */
    const uint64_t per_plane = p->output.sizes[2] * p->output.sizes[3] / 16 + 16 + p->input.sizes[2] * p->input.sizes[3];
    return planes_allowed(op) && (!item_budget(op) || per_plane <= item_budget(op)) &&
           (clops_unpool_planes == CLOPS_PLANES_ALWAYS ||
            (planes >= (uint64_t)compute_units(op) * PLANES_PER_UNIT &&
             p->output.sizes[2] * p->output.sizes[3] * p->input.elem_size <= PLANE_MAX_BYTES));
}

/* The plan the operator's shapes choose. Window-shaped: the windows kernel,
 * then pool only if an index is outside its window (windows skips itself while
 * the operator's indices need pool: max_unpooling.cl WINDOWS_SKIP). Measured:
 * for 2x2 indices the windows kernel beats pool's one-candidate path
 * (notes/max_unpooling.md; again after pool's codes, section poolfast: 4- and
 * 8-byte elements about 0.5 of a copy through pool, 0.75-1.05 through windows). */
static unpool_plan shape_plan(const clops_operator *op)
{
    const clops_op_params *p = &op->params;
    const uint64_t *in = p->input.sizes, *out = p->output.sizes;
    const bool windows = windows_shaped(p);
    unpool_plan pl = make_plan(op, serial_plan(op), p->output.count <= serial_max(op), windows ? out[2] / in[2] : 0,
                               windows ? out[3] / in[3] : 0, pool_step(in[2], out[2]), pool_step(in[3], out[3]),
                               out[3] % 2 == 0);
    /* planes where pool would run, and for shapes with neither windows nor pool;
     * windows wider than a pool's cell keep windows alone (as listed). */
    return !pl.serial && (pl.pool || !pl.windows) && planes_plan(op) ? with_planes(pl) : pl;
}

/* The build options of plan `pl` (op->options). */
static void plan_options(const clops_operator *op, const unpool_plan *pl, char *buf, size_t size)
{
    const clops_op_params *p = &op->params;
    int n = snprintf(buf, size,
                     "-DELEM_BYTES=%zu -DOFFSET_64=%d -DINDEX_BYTES=%zu -DIN_PACKED=%d -DOUT_PACKED=%d -DCHUNK=%uu "
                     "-DGATED=%d -DSERIAL_FILLS=%d -DINT64_OK=%d -DPER_PLANE=%d -DPOOL_GATED=%d -DBUCKET=%d -DMARK=%d "
                     "-DPLANES=%d -DLOOP_BUDGET=%uu -DINTERLEAVE=%d -DPLACE_VEC=%d -DSORT=%d",
                     p->input.elem_size, op->offset_64, p->indices.elem_size, p->input.packed && p->indices.packed,
                     p->output.packed, op->chunk, pl->windows || pl->pool || pl->planes, pl->serial_fills,
                     op->ctx->info.has_int64, p->indices_layout == CLOPS_INDICES_PER_PLANE,
                     pl->windows && (pl->pool || pl->planes), pl->bucket, pl->mark, pl->planes, (unsigned)item_budget(op), !cpu_device(op),
                     pl->mark && place_vec(op), pl->sort.tiles != 0);
    if (pl->sort.tiles)
        n += snprintf(buf + n, size - (size_t)n, " -DSORT_SHIFT=%u -DSORT_TILES=%uu", pl->sort.shift, pl->sort.hist);
    if (pl->windows)
        n += snprintf(buf + n, size - (size_t)n, " -DKH=%lluu -DKW=%lluu -DWV=%u", (unsigned long long)pl->kh,
                      (unsigned long long)pl->kw, windows_vec(op, pl));
    if (pl->pool)
        snprintf(buf + n, size - (size_t)n,
                 " -DSH=%lluu -DSW=%lluu -DNA=%uu -DNB=%uu -DPOOL_VEC=%d -DPOOL_TILE=%d -DPOOL_TX=%uu -DPOOL_TY=%uu"
                 " -DPOOL_PX=%u",
                 (unsigned long long)pl->sh, (unsigned long long)pl->sw, POOL_REACH, POOL_REACH, pl->vec,
                 pl->tx != 0, pl->tx, pl->ty, pl->px);
}

/* While programs are listed (api/aot.c): names the program of every plan any
 * shape of the operator's types, layouts and indices layout can choose, after
 * its own: serial (with and without the fill), general, windows up to the pool's
 * cells (each with pool, and on CPU devices with planes instead), planes alone,
 * and pool alone for every cell, of even and odd output width. Windows wider
 * than a pool's cell are named only for the operator's own shape (clops kernels
 * list --windows). Each request is refused (nothing is built). */
static void list_plans(const clops_operator *op)
{
    if (clops_program_list_case(CLOPS_LIST_WIDE_OFFSETS) < 0) return;
    unpool_plan plans[2 * (4 + 4 * POOL_MAX_STEP * POOL_MAX_STEP)]; /* and each with bin and settle */
    size_t n = 0;
    plans[n++] = make_plan(op, true, true, 0, 0, 0, 0, true);
    plans[n++] = make_plan(op, true, false, 0, 0, 0, 0, true);
    plans[n++] = make_plan(op, false, false, 0, 0, 0, 0, true);
    const bool planes = planes_allowed(op);
    if (planes) plans[n] = with_planes(plans[n - 1]), n++;
    for (uint64_t a = 1; a <= POOL_MAX_STEP; a++)
        for (uint64_t b = 1; b <= POOL_MAX_STEP; b++) {
            plans[n++] = make_plan(op, false, false, a, b, a, b, b % 2 == 0); /* windows: width b x input's */
            if (planes) plans[n] = with_planes(plans[n - 1]), n++;
            plans[n++] = make_plan(op, false, false, 0, 0, a, b, true);
            plans[n++] = make_plan(op, false, false, 0, 0, a, b, false);
        }
    /* bin and settle where the device can take them: the same plans with -DSORT=1 (its
     * shift and counters are the device's), which shapes with few enough tiles choose */
    unsigned shift, hist;
    const size_t listed = n;
    if (sort_sizes(op, &shift, &hist))
        for (size_t i = 0; i < listed; i++)
            if (!plans[i].serial) {
                plans[n] = plans[i];
                plans[n].sort = (sort_layout){.shift = shift, .hist = hist, .tiles = 1};
                n++;
            }
    for (size_t i = 0; i < n; i++) {
        char options[sizeof op->options];
        cl_program program;
        const char *origin;
        plan_options(op, &plans[i], options, sizeof options);
        (void)clops_program_get(op->ctx, "max_unpooling.cl", options, &program, &origin); /* named, refused */
    }
}

/* Pool's GPU form's NDRange (pl->tx x pl->ty groups, max_unpooling_pool.cl
 * POOL_TILE): every tile column of the rows, then as many tile rows and planes
 * as keep the items within `cap` (0: every tile its own group), each group
 * looping over the rest, so a gated launch with nothing to do starts few groups. */
static void pool_tile_items(const clops_op_params *p, const unpool_plan *pl, uint64_t cap, uint64_t items[3])
{
    const uint64_t per_group = (uint64_t)pl->tx * pl->px, tiles_y = (p->input.sizes[2] + pl->ty - 1) / pl->ty;
    const uint64_t planes = p->input.sizes[0] * p->input.sizes[1];
    items[0] = (p->input.sizes[3] + per_group - 1) / per_group * pl->tx;
    uint64_t gy = tiles_y, gz = planes;
    if (cap) {
        const uint64_t row = items[0] * pl->ty; /* the items of one tile row */
        gy = cap / row < tiles_y ? cap / row : tiles_y;
        if (!gy) gy = 1;
        gz = cap / (row * gy) < planes ? cap / (row * gy) : planes;
        if (!gz) gz = 1;
    }
    items[1] = gy * pl->ty, items[2] = gz;
}

/* Work-items for `rows` units of `per_row` loop iterations each: `cap` (enough
 * to balance), more where a work-item's run would pass the loop budget (if
 * any), never more than the units. */
static uint64_t row_items(uint64_t rows, uint64_t per_row, uint64_t cap, uint64_t budget)
{
    if (!budget) return rows < cap ? (rows ? rows : 1) : cap;
    const uint64_t per_item = budget / (per_row ? per_row : 1);
    const uint64_t least = per_item ? (rows + per_item - 1) / per_item : rows;
    const uint64_t items = rows < cap ? rows : cap > least ? cap : least;
    return items ? items : 1;
}

/* A launch of `groups` work-groups of the device class's sort_items (bin, settle): as many groups
 * if the scheduler takes a smaller group for the kernel. */
static clops_status add_group_launch(clops_operator *op, cl_program program, const char *name, uint64_t groups)
{
    const size_t group[3] = {unpool_params(op)->sort_items, 1, 1};
    const uint64_t items[3] = {groups * group[0], 1, 1};
    const clops_status st = clops_operator_add_launch(op, program, name, 1, items, group);
    if (st == CLOPS_SUCCESS) { /* the launch just added */
        clops_launch *l = &op->launches[op->num_launches - 1];
        l->global[0] = (size_t)(groups * l->local[0]);
    }
    return st;
}

/* The plan's buffers and launches; `*tile_refused` when pool's tile kernel cannot take the planned
 * tile as its work-group (op->unpool.group_limit then says what it takes; the launches are unusable). */
static clops_status prepare_plan(clops_operator *op, bool *tile_refused)
{
    *tile_refused = false;
    const clops_op_params *p = &op->params;
    const unpool_plan pl = shape_plan(op);
    const bool serial = pl.serial, serial_fills = pl.serial_fills, windows = pl.windows, pool = pl.pool;
    const bool bucket = pl.bucket;
    const bool cpu = cpu_device(op);
    op->offset_64 = !clops_fits_u32(p);
    op->chunk = unpool_chunk(op);
    const bucket_layout bl = bucket ? bucket_plan(op) : (bucket_layout){0};
    const sort_layout sl = pl.sort;
    plan_options(op, &pl, op->options, sizeof op->options);
    op->kernel_name = serial_fills ? "serial"
                      : windows  ? "windows"
                      : pl.planes ? "planes"
                      : pool     ? "pool"
                      : bucket   ? "bucket"
                      : sl.tiles ? "bin"
                      : pl.mark  ? "mark"
                                 : "clear";
    if (p->output.count == 0) return CLOPS_SUCCESS; /* nothing can be written */
    cl_uint words[ST_BUFFER_WORDS] = {0};
    words[ST_TILE_SHIFT] = bl.shift, words[ST_GROUPS] = (cl_uint)(bucket ? bl.groups : sl.groups);
    words[ST_TILES] = (cl_uint)(bucket ? bl.tiles : sl.tiles), words[ST_PAD] = bl.pad, words[ST_SORT_CAP] = (cl_uint)sl.cap;
    clops_status st = clops_max_unpooling_state(op, words, bucket || pl.mark ? bl.bytes + sl.bytes : 0, pl.mark);
    cl_program program;
    if (st == CLOPS_SUCCESS)
        st = clops_program_get(op->ctx, "max_unpooling.cl", op->options, &program, &op->program_origin);
    if (st == CLOPS_ERROR_COMPILER_UNAVAILABLE) list_plans(op); /* a listing: every other plan's program */
    if (st != CLOPS_SUCCESS) return st;
    static const uint64_t one[3] = {1, 1, 1};
    if (serial_fills) return clops_operator_add_launch(op, program, "serial", 1, one, NULL);
    /* Every kernel strides over its rows (max_unpooling.cl FOR_ROWS): launch as
     * many work-items as there are row chunks, up to ROWS_PER_UNIT per compute unit
     * (enough to balance; a gated kernel with nothing to do costs no more). */
    const uint64_t cap = (uint64_t)compute_units(op) * (cpu ? ROWS_PER_UNIT_CPU : ROWS_PER_UNIT_GPU);
    const uint64_t budget = item_budget(op);
    const uint64_t out_rows = row_chunks(op, p->output.sizes), in_rows = row_chunks(op, p->input.sizes);
    /* Loop iterations per row chunk, upper bounds: windows KH x (KW + 2) per
     * input position, pool 16 per output element of its cell and 8 more, clear 1. */
    const uint64_t chunk = op->chunk < p->input.sizes[3] ? op->chunk : p->input.sizes[3];
    const uint64_t out_chunk = op->chunk < p->output.sizes[3] ? op->chunk : p->output.sizes[3];
    const uint64_t per_window = pl.kh * (pl.kw + 2), per_pool = pl.sh * pl.sw * 16 + 8;
    const uint64_t per_in = (per_window > per_pool ? per_window : per_pool) * chunk + 1;
    const uint64_t out_items[3] = {row_items(out_rows, out_chunk + 1, cap, budget), 1, 1};
    const uint64_t in_items[3] = {row_items(in_rows, per_in, cap, budget), 1, 1};
    /* tiles: a tile's zero fill (16 per iteration), the groups' bounds twice and
     * twice the entries of an even spread, per tile (past the budget, tiles hands
     * the execution to mark and place: max_unpooling.cl ST_HEAVY) */
    const uint64_t per_tile = (((uint64_t)1 << bl.shift) >> 4) + 16 + 2 * bl.groups +
                              (bl.tiles ? 2 * ((p->input.count + bl.tiles - 1) / bl.tiles) : 0);
    const uint64_t bucket_items[3] = {bl.groups, 1, 1}, tile_items[3] = {row_items(bl.tiles, per_tile, cap, budget), 1, 1};
    static const size_t row_local[3] = {1, 1, 1};
    const size_t *local = cpu ? row_local : NULL;
    if (serial) { /* after clear: a serial plan whose output serial does not fill */
        st = clops_operator_add_launch(op, program, "clear", 1, out_items, local);
        if (st == CLOPS_SUCCESS && p->input.count) st = clops_operator_add_launch(op, program, "serial", 1, one, NULL);
        return st;
    }
    /* Every other plan has more than SERIAL_MAX input elements (shape_plan). */
    /* windows' GPU form: units of WV positions */
    const unsigned wv = windows_vec(op, &pl);
    const uint64_t vec_rows = wv ? (p->input.sizes[3] + wv - 1) / wv * p->input.sizes[2] * p->input.sizes[0] * p->input.sizes[1] : 0;
    const uint64_t vec_items[3] = {row_items(vec_rows, per_window * wv + 1, cap, budget), 1, 1};
    if (windows) st = clops_operator_add_launch(op, program, "windows", 1, wv ? vec_items : in_items, local);
    if (st == CLOPS_SUCCESS && pl.planes) {
        /* runs of planes; under a loop limit one plane per work-item (planes_plan
         * keeps a plane within the budget) */
        const uint64_t planes = p->input.sizes[0] * p->input.sizes[1], most = compute_units(op) * PLANES_PER_UNIT;
        const uint64_t plane_items[3] = {budget || planes < most ? planes : most, 1, 1};
        st = clops_operator_add_launch(op, program, "planes", 1, plane_items, local);
    }
    if (st == CLOPS_SUCCESS && pool && !pl.tx) st = clops_operator_add_launch(op, program, "pool", 1, in_items, local);
    if (st == CLOPS_SUCCESS && pool && pl.tx) { /* pool on GPUs: tiles per group, planes on the third axis */
        const size_t tile[3] = {pl.tx, pl.ty, 1};
        uint64_t items[3];
        pool_tile_items(p, &pl, budget ? 0 : cap, items);
        st = clops_operator_add_launch(op, program, "pool", 3, items, tile);
        if (st == CLOPS_SUCCESS && strcmp(op->local_size_origin, "tuned") != 0) { /* the scheduler took another size */
            size_t most = 0;
            clGetKernelWorkGroupInfo(op->launches[op->num_launches - 1].kernel, op->ctx->device,
                                     CL_KERNEL_WORK_GROUP_SIZE, sizeof most, &most, NULL);
            if (op->unpool.group_limit || most == 0 || most >= (size_t)pl.tx * pl.ty)
                return clops_fail(CLOPS_ERROR_INTERNAL, "MaxUnpooling's pool kernel refused its %ux%u work-group "
                                  "(the kernel takes %zu work-items)", pl.tx, pl.ty, most);
            op->unpool.group_limit = (unsigned)(most < UINT_MAX ? most : UINT_MAX);
            *tile_refused = true;
            return CLOPS_SUCCESS;
        }
    }
    if (st == CLOPS_SUCCESS && bucket) st = clops_operator_add_launch(op, program, "bucket", 1, bucket_items, local);
    if (st == CLOPS_SUCCESS && bucket) st = clops_operator_add_launch(op, program, "tiles", 1, tile_items, local);
    /* bin: sl.groups groups; settle: SETTLE_GROUPS per compute unit (a gated launch starts few), each
     * looping over tiles, or under a loop limit a group per tile */
    const uint64_t settle_most = (uint64_t)compute_units(op) * SETTLE_GROUPS;
    const uint64_t settle_groups = budget || sl.tiles < settle_most ? sl.tiles : settle_most;
    if (st == CLOPS_SUCCESS && sl.tiles) st = add_group_launch(op, program, "bin", sl.groups);
    if (st == CLOPS_SUCCESS && sl.tiles) st = add_group_launch(op, program, "settle", settle_groups);
    /* mark: one run of input rows per work-item (on GPUs one position: side by side, coalesced);
     * place: as the other row kernels, or in its vector form units of PV outputs (work-item 0
     * takes the last count % PV too); on GPUs both on general_items work-items per compute unit */
    const uint64_t general_cap =
        unpool_params(op)->general_items ? (uint64_t)compute_units(op) * unpool_params(op)->general_items : cap;
    const uint64_t mark_items[3] = {row_items(in_rows, chunk + 1, general_cap, budget), 1, 1};
    const unsigned pv = p->input.elem_size < 4 ? 16 / (unsigned)p->input.elem_size : 4; /* max_unpooling.cl PV */
    const uint64_t place_units = (p->output.count + pv - 1) / pv;
    const uint64_t place_items[3] = {place_vec(op) ? row_items(place_units, pv + 1, general_cap, budget)
                                                   : row_items(out_rows, out_chunk + 1, general_cap, budget),
                                     1, 1};
    if (st == CLOPS_SUCCESS && pl.mark) st = clops_operator_add_launch(op, program, "mark", 1, mark_items, local);
    if (st == CLOPS_SUCCESS && pl.mark) st = clops_operator_add_launch(op, program, "place", 1, place_items, local);
    return st;
}

clops_status clops_max_unpooling_prepare(clops_operator *op)
{
    bool refused;
    clops_status st = prepare_plan(op, &refused);
    if (st != CLOPS_SUCCESS || !refused) return st;
    /* A kernel's own work-group limit may be below the device's (rusticl's llvmpipe takes 32 work-items
     * for pool's tile kernel, a GPU with many registers per item fewer than its maximum): the plan again,
     * with tiles within it (a smaller tile is another program). */
    for (unsigned i = 0; i < op->num_launches; i++) clReleaseKernel(op->launches[i].kernel);
    op->num_launches = 0;
    clops_max_unpooling_release(op);
    st = prepare_plan(op, &refused);
    return st != CLOPS_SUCCESS || !refused ? st
                                           : clops_fail(CLOPS_ERROR_INTERNAL, "MaxUnpooling's pool kernel refused a "
                                                                              "tile within its own work-group limit");
}

void clops_max_unpooling_release(clops_operator *op)
{
    if (op->unpool.status) clReleaseMemObject(op->unpool.status);
    if (op->unpool.scratch) clReleaseMemObject(op->unpool.scratch);
    if (op->unpool.last) clReleaseEvent(op->unpool.last);
    if (op->unpool.chained) clReleaseEvent(op->unpool.chained);
    if (op->unpool.indices) clReleaseMemObject(op->unpool.indices);
    op->unpool.status = op->unpool.scratch = op->unpool.indices = NULL;
    op->unpool.last = op->unpool.chained = NULL;
}

clops_status clops_max_unpooling_run_mapped(const clops_op_params *p, const clops_host_buffers *m, uint64_t *bad)
{
    return clops_host_unpool_skip(p, m, bad); /* as on the device: bad indices skipped, counted */
}

/* ---- validation ------------------------------------------------------------------------------ */

static clops_status unpack(const void *desc, clops_op_params *p, const clops_tensor_desc **in,
                           const clops_tensor_desc **idx, const clops_tensor_desc **out)
{
    const clops_max_unpooling_desc *d = desc;
    *in = d->input, *idx = d->indices, *out = d->output, p->indices_layout = d->indices_layout;
    return *idx ? CLOPS_SUCCESS : clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "indices tensor descriptor is NULL");
}

static clops_status check(const clops_op_params *p)
{
    if (p->indices_layout != CLOPS_INDICES_FLAT && p->indices_layout != CLOPS_INDICES_PER_PLANE)
        return clops_fail(CLOPS_ERROR_INVALID_INDICES_LAYOUT,
                          "indices_layout %d is neither CLOPS_INDICES_FLAT (0) nor CLOPS_INDICES_PER_PLANE (1)",
                          (int)p->indices_layout);
    for (int d = 0; d < 4; d++)
        if (p->indices.sizes[d] != p->input.sizes[d])
            return clops_fail(CLOPS_ERROR_INDICES_SIZE_MISMATCH,
                              "indices size %llu on dimension %d differs from the input's %llu",
                              (unsigned long long)p->indices.sizes[d], d, (unsigned long long)p->input.sizes[d]);
    for (int d = 0; d < 2; d++)
        if (p->output.sizes[d] != p->input.sizes[d])
            return clops_fail(CLOPS_ERROR_BATCH_CHANNEL_MISMATCH, "output %s %llu differs from the input's %llu",
                              d == 0 ? "batch" : "channels", (unsigned long long)p->output.sizes[d],
                              (unsigned long long)p->input.sizes[d]);
    return CLOPS_SUCCESS;
}

const clops_op_entry clops_max_unpooling_op = {
    .type = CLOPS_OPERATOR_MAX_UNPOOLING, .unpack = unpack, .check = check,
    .host_run = clops_host_max_unpooling, .run_mapped = clops_max_unpooling_run_mapped,
    .record_host = clops_max_unpooling_record, .needs_host = clops_max_unpooling_needs_host,
    .prepare = clops_max_unpooling_prepare, .portable = clops_portable_max_unpooling,
    .enqueue = clops_max_unpooling_enqueue,
    .last_status = clops_max_unpooling_status, .release = clops_max_unpooling_release,
};
