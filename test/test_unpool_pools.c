/*
 * test_unpool_pools.c - MaxUnpooling on the indices real max pools produce
 * (issue 23), where windows overlap and neighbouring pooled elements may name the
 * same output element. The indices come from a small max_pool2d with argmax in
 * this file (kernel, stride, padding, ceil_mode as PyTorch and ONNX define them:
 * the first maximum of a window in row-major order), run on inputs with constant
 * regions, so overlapping windows share a maximum and the indices hold
 * duplicates; the unpooled values are random, so which duplicate wins shows.
 * Every result is compared bit for bit with the naive reference on every path
 * (test_unpool_common.h), and the device plan is checked to be `pool` where the
 * pool's shape allows it:
 *   2x2/2, 3x3/2 padding 1 (ceil_mode off and on, odd sizes), 3x3/2 padding 0
 *   with ceil_mode, 3x3/1 padding 1, 4x4/2 padding 1, and 4x4/2 padding 0 (whose
 *   argmax can lie two rows past its cell: the general path behind pool);
 *   an index one step outside its neighbourhood in each direction (general path,
 *   same bits), and one out of range;
 *   per-plane indices (PyTorch's convention) on the device against flat ones;
 *   rows wider than a work-item's chunk.
 */
#include <stdbool.h>

#include "test_unpool_common.h"
#include "ops/ops.h" /* clops_unpool_planes, the test seam of the planes plan */

typedef struct pool_shape {
    const char *what;
    uint32_t n, c, h, w; /* the pooled tensor's input: the unpooled output */
    uint32_t k, s, pad;
    bool ceil_mode;
    const char *plan; /* the kernel the device plan starts with: windows when the
                         output is a multiple of the input (pool runs after it
                         when an index is outside its window), else pool */
} pool_shape;

static const pool_shape shapes[] = {
    {"2x2/2", 2, 3, 64, 80, 2, 2, 0, false, "windows"},
    {"3x3/2 pad 1", 2, 3, 64, 80, 3, 2, 1, false, "windows"},
    {"3x3/2 pad 1 odd sizes", 2, 3, 67, 93, 3, 2, 1, false, "pool"},
    {"3x3/2 pad 1 ceil_mode", 2, 3, 66, 92, 3, 2, 1, true, "pool"},
    {"3x3/2 pad 0 ceil_mode", 2, 3, 64, 80, 3, 2, 0, true, "windows"},
    {"3x3/1 pad 1", 1, 3, 40, 50, 3, 1, 1, false, "windows"},
    {"4x4/2 pad 1", 2, 3, 64, 80, 4, 2, 1, false, "windows"},
    {"4x4/2 pad 0 (general path)", 2, 3, 64, 80, 4, 2, 0, false, "pool"},
    {"3x3/2 pad 1, 1x1 planes", 1, 5000, 1, 1, 3, 2, 1, false, "windows"},
    /* Rows of 1050 inputs: three chunks of a row per work-item unit (512 on
     * CPUs), so pool's vector form starts each chunk afresh (no codes carried). */
    {"3x3/2 pad 1 wide rows", 1, 2, 16, 2100, 3, 2, 1, false, "windows"},
};
#define NUM_SHAPES (sizeof shapes / sizeof shapes[0])

static const clops_data_type pool_types[] = {CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_FLOAT16, CLOPS_DATA_TYPE_FLOAT32,
                                             CLOPS_DATA_TYPE_FLOAT64, CLOPS_DATA_TYPE_COMPLEX128};
#define NUM_POOL_TYPES (sizeof pool_types / sizeof pool_types[0])

/* Pooled size of one axis (PyTorch's rule: with ceil_mode, the last window must
 * start inside the input or the left padding). */
static uint32_t pooled(uint32_t in, const pool_shape *s)
{
    const uint32_t span = in + 2 * s->pad - s->k;
    uint32_t out = (s->ceil_mode ? (span + s->s - 1) / s->s : span / s->s) + 1;
    if (s->ceil_mode && (out - 1) * s->s >= in + s->pad)
        out--;
    return out;
}

/* max_pool2d with argmax over `src` (n*c planes of h x w small integers):
 * per-plane indices of each window's first maximum, in `plane_idx`. */
static void max_pool2d(const pool_shape *s, const uint8_t *src, uint32_t ph, uint32_t pw, uint64_t *plane_idx)
{
    for (uint32_t p = 0; p < s->n * s->c; p++)
        for (uint32_t i = 0; i < ph; i++)
            for (uint32_t j = 0; j < pw; j++) {
                int best = -1;
                uint64_t at = 0;
                for (uint32_t a = 0; a < s->k; a++)
                    for (uint32_t b = 0; b < s->k; b++) {
                        const int64_t r = (int64_t)i * s->s - s->pad + a, q = (int64_t)j * s->s - s->pad + b;
                        if (r < 0 || q < 0 || r >= s->h || q >= s->w)
                            continue;
                        const int v = src[((uint64_t)p * s->h + (uint64_t)r) * s->w + (uint64_t)q];
                        if (v > best) {
                            best = v;
                            at = (uint64_t)r * s->w + (uint64_t)q;
                        }
                    }
                plane_idx[((uint64_t)p * ph + i) * pw + j] = at;
            }
}

/* Pooling input: small random integers (a window's maximum is often the
 * neighbouring window's too), with constant 8x8 regions among them (ties: the
 * first maximum in the window wins). */
static void blocky(const pool_shape *s, uint64_t seed, uint8_t *src)
{
    for (uint32_t p = 0; p < s->n * s->c; p++)
        for (uint32_t r = 0; r < s->h; r++)
            for (uint32_t q = 0; q < s->w; q++)
                src[((uint64_t)p * s->h + r) * s->w + q] =
                    (r / 8 + q / 8) % 3 == 0 ? 2 : (uint8_t)(tc_rng_next(&seed) % 5);
}

typedef struct pool_case {
    up_case c;
    uint64_t count, plane;
    uint64_t *plane_idx, *flat;
    unsigned char *x, *idx;
} pool_case;

static void make_case(const pool_shape *s, clops_data_type t, const index_type_info *it, uint64_t seed,
                      pool_case *pc)
{
    const uint32_t ph = pooled(s->h, s), pw = pooled(s->w, s);
    const size_t es = tc_type(t)->size;
    pc->count = (uint64_t)s->n * s->c * ph * pw;
    pc->plane = (uint64_t)s->h * s->w;
    uint8_t *src = tc_malloc((size_t)s->n * s->c * pc->plane);
    pc->plane_idx = tc_malloc(pc->count * sizeof *pc->plane_idx);
    pc->flat = tc_malloc(pc->count * sizeof *pc->flat);
    pc->x = tc_malloc(pc->count * es);
    pc->idx = tc_malloc(pc->count * it->size);
    blocky(s, seed, src);
    max_pool2d(s, src, ph, pw, pc->plane_idx);
    for (uint64_t k = 0; k < pc->count; k++)
        pc->flat[k] = k / ((uint64_t)ph * pw) * pc->plane + pc->plane_idx[k];
    tc_fill_random(pc->x, pc->count * es, seed + 1);
    store_indices(it, pc->flat, pc->count, pc->idx);
    pc->c = (up_case){t, it, {s->n, s->c, ph, pw}, NULL, NULL, {s->n, s->c, s->h, s->w}, NULL, 3};
    free(src);
}

static void free_case(pool_case *pc)
{
    free(pc->plane_idx);
    free(pc->flat);
    free(pc->x);
    free(pc->idx);
}

/* Which kernel the device plan starts with ("" without a device). */
static const char *plan_of(const up_case *c, clops_indices_layout layout)
{
    if (!tc_dev_ctx)
        return "";
    up_descs d;
    up_describe(c, &d);
    d.ud.indices_layout = layout;
    clops_operator *op = tc_create(tc_dev_ctx, &d.desc, "plan", "device");
    clops_operator_info info;
    ck_assert_int_eq(clops_operator_get_info(op, &info), CLOPS_SUCCESS);
    const char *name = info.backend == CLOPS_BACKEND_OPENCL ? info.kernel_name : "";
    clops_operator_free(op); /* kernel_name is a string literal of the plan */
    return name;
}

static bool has_duplicates(const uint64_t *flat, uint64_t n)
{
    for (uint64_t k = 1; k < n; k++)
        for (uint64_t j = k >= 8 ? k - 8 : 0; j < k; j++) /* neighbours in a row share maxima */
            if (flat[j] == flat[k])
                return true;
    return false;
}

/* ---- indices from real pools, every path --------------------------------------------------------- */
START_TEST(test_real_pools)
{
    const pool_shape *s = &shapes[_i % NUM_SHAPES];
    const clops_data_type t = pool_types[_i / NUM_SHAPES % NUM_POOL_TYPES];
    const index_type_info *it = &index_types[(_i / NUM_SHAPES + _i) % 3]; /* each shape sees all three */
    pool_case pc;
    make_case(s, t, it, 1000u + (uint64_t)_i, &pc);
    char what[160];
    snprintf(what, sizeof what, "indices of a real %s max pool", s->what);
    ck_assert_msg(pc.count > 4096, "%s: test bug, %llu inputs would take the serial plan", what,
                  (unsigned long long)pc.count);
    if (s->s < s->k && s->h > 1)
        ck_assert_msg(has_duplicates(pc.flat, pc.count), "%s: test bug, no duplicates", what);
    const char *plan = plan_of(&pc.c, CLOPS_INDICES_FLAT);
    /* With planes on, planes takes pool's place (windows stays first). */
    const char *want = clops_unpool_planes == CLOPS_PLANES_ALWAYS && strcmp(s->plan, "pool") == 0 ? "planes" : s->plan;
    if (plan[0])
        ck_assert_msg(strcmp(plan, want) == 0, "%s: device plan %s, want %s", what, plan, want);
    up_run(&pc.c, pc.x, pc.idx, CLOPS_SUCCESS, what);
    free_case(&pc);
}
END_TEST

/* ---- one index moved: inside its neighbourhood but not its cell, outside it, out of range ---------- */
/* On the indices of a 2x2/2 pool (pool's vector form takes its one-candidate
 * path where every index is in its own cell) and of a 3x3/2 pad 1 pool: one
 * index moved to a neighbouring cell (pool gathers it), or one step outside its
 * neighbourhood, rows 2h-1 .. 2h+2 and columns 2w-1 .. 2w+2 (the general path, same
 * bits), or out of range (reported). */
START_TEST(test_outside_neighbourhood)
{
    const pool_shape *s = &shapes[_i / NUM_POOL_TYPES % 2];
    const clops_data_type t = pool_types[_i % NUM_POOL_TYPES];
    const index_type_info *it = &index_types[_i % 3];
    pool_case pc;
    make_case(s, t, it, 77u + (uint64_t)_i, &pc);
    const uint32_t ph = pc.c.in_sizes[2], pw = pc.c.in_sizes[3];
    /* Input (plane 1, h, w) and where its index goes, in output rows and columns
     * from its cell's top-left corner (2h, 2w). */
    const struct {
        uint32_t h, w;
        int dr, dq;
        const char *what;
    } cases[] = {
        {5, 7, -1, 0, "one row above its cell"},    {5, 7, 2, 1, "one row below its cell"},
        {5, 7, 1, -1, "one column left of its cell"}, {5, 7, 0, 2, "one column right of its cell"},
        {5, 7, -2, 0, "two rows above its cell"},  {5, 7, 3, 0, "three rows below its cell's top"},
        {5, 7, 0, -2, "two columns left"},         {5, 7, 0, 3, "three columns right"},
        {0, 0, 0, -1, "first element, one left (previous row's end)"},
        {6, 0, 0, -1, "row start, one left (previous row's end)"},
        {6, pw - 1, 0, 2, "row end, two right (next row's start)"},
        {ph - 1, 3, 2, 0, "last row, two rows down (next plane)"},
    };
    for (size_t o = 0; o < sizeof cases / sizeof cases[0]; o++) {
        const uint64_t k = ((uint64_t)1 * ph + cases[o].h) * pw + cases[o].w; /* plane 1 (n 0, c 1) */
        const uint64_t saved = pc.flat[k];
        pc.flat[k] = (uint64_t)((int64_t)pc.plane + ((int64_t)2 * cases[o].h + cases[o].dr) * s->w +
                                (int64_t)2 * cases[o].w + cases[o].dq);
        store_indices(it, pc.flat, pc.count, pc.idx);
        char what[160];
        snprintf(what, sizeof what, "%s pool, one index %s", s->what, cases[o].what);
        up_run(&pc.c, pc.x, pc.idx, CLOPS_SUCCESS, what);
        pc.flat[k] = saved;
    }
    pc.flat[pc.count / 3] = (uint64_t)s->n * s->c * pc.plane; /* the output count */
    store_indices(it, pc.flat, pc.count, pc.idx);
    up_run(&pc.c, pc.x, pc.idx, CLOPS_ERROR_INDEX_OUT_OF_RANGE, "one index == the output count");
    free_case(&pc);
}
END_TEST

/* ---- per-plane indices on the device ------------------------------------------------------------- */
/* The same pool's indices per plane (as PyTorch gives them) must give the bits
 * of the flat ones, on every device plan: pool (3x3/2), windows (2x2/2), the
 * general path (4x4/2 pad 0), and serial (a small tensor); an index past its
 * plane is reported as out of range and skipped. */
START_TEST(test_per_plane)
{
    if (tc_skip_without_device("test_per_plane"))
        return;
    const pool_shape small = {"3x3/2 pad 1, small", 1, 2, 12, 14, 3, 2, 1, false, "serial"};
    const pool_shape *cases[] = {&shapes[1], &shapes[0], &shapes[7], &shapes[2], &small};
    const pool_shape *s = cases[_i % 5];
    const clops_data_type t = pool_types[_i / 5 % NUM_POOL_TYPES];
    const index_type_info *it = &index_types[(_i / 5 + _i) % 3];
    pool_case pc;
    make_case(s, t, it, 555u + (uint64_t)_i, &pc);
    const size_t es = tc_type(t)->size;
    for (int bad = 0; bad < 2; bad++) {
        const uint64_t k = pc.count - 2;
        if (bad) { /* one past its plane: out of range, whatever the flat reading would be */
            pc.plane_idx[k] = pc.plane;
            pc.flat[k] = (uint64_t)s->n * s->c * pc.plane;
        }
        up_descs d;
        up_describe(&pc.c, &d);
        /* The reference and want from the flat indices. */
        store_indices(it, pc.flat, pc.count, pc.idx);
        const size_t yb = tc_tensor_bytes(&d.y) + (size_t)pc.c.tail * es;
        unsigned char *init = tc_malloc(yb), *want = tc_malloc(yb);
        tc_fill_sentinel(init, yb);
        memcpy(want, init, yb);
        ref_tensor rx, ri, ry;
        ref_tensor_init(&rx, pc.x, es, pc.c.in_sizes, NULL);
        ref_tensor_init(&ri, pc.idx, it->size, pc.c.in_sizes, NULL);
        ref_tensor_init(&ry, want, es, pc.c.out_sizes, NULL);
        ck_assert_int_eq(ref_max_unpooling(&rx, &ri, it->kind, &ry), bad);
        /* The device on the per-plane indices. */
        store_indices(it, pc.plane_idx, pc.count, pc.idx);
        d.ud.indices_layout = CLOPS_INDICES_PER_PLANE;
        char what[160];
        snprintf(what, sizeof what, "per-plane indices of a %s pool (%s plan)%s", s->what,
                 plan_of(&pc.c, CLOPS_INDICES_PER_PLANE), bad ? ", one past its plane" : "");
        tc_bufs bufs = {pc.x, pc.count * es, pc.idx, pc.count * it->size, init, yb};
        tc_check_context_paths(tc_dev_ctx, "device", TC_PATHS_ALL, &d.desc, &bufs,
                               bad ? CLOPS_ERROR_INDEX_OUT_OF_RANGE : CLOPS_SUCCESS, bad ? init : want, want, es,
                               what);
        free(init);
        free(want);
    }
    free_case(&pc);
}
END_TEST

/* ---- one operator, many executions ---------------------------------------------------------------- */
/* The windows plan skips its windows kernel while the operator's last execution
 * needed pool, trying it again every 16th execution (max_unpooling.cl
 * WINDOWS_SKIP): one operator runs 3x3/2 pool indices and 2x2 ones of the same
 * shapes in runs and alternately, each execution against the reference. */
START_TEST(test_repeated_executions)
{
    if (tc_skip_without_device("test_repeated_executions"))
        return;
    const clops_data_type t = pool_types[_i];
    pool_case pc[2];
    make_case(&shapes[1], t, &index_types[0], 4711u, &pc[0]); /* 3x3/2 pad 1 */
    make_case(&shapes[0], t, &index_types[0], 4712u, &pc[1]); /* 2x2/2, the same sizes */
    ck_assert(memcmp(pc[0].c.in_sizes, pc[1].c.in_sizes, sizeof pc[0].c.in_sizes) == 0);
    memcpy(pc[1].x, pc[0].x, pc[0].count * tc_type(t)->size);
    up_descs d;
    up_describe(&pc[0].c, &d);
    clops_operator *op = tc_create(tc_dev_ctx, &d.desc, "repeated executions", "device");
    const size_t es = tc_type(t)->size, yb = tc_tensor_bytes(&d.y);
    unsigned char *want[2];
    for (int k = 0; k < 2; k++) {
        want[k] = tc_malloc(yb);
        memset(want[k], 0, yb);
        ref_tensor rx, ri, ry;
        ref_tensor_init(&rx, pc[k].x, es, pc[k].c.in_sizes, NULL);
        ref_tensor_init(&ri, pc[k].idx, 4, pc[k].c.in_sizes, NULL);
        ref_tensor_init(&ry, want[k], es, pc[k].c.out_sizes, NULL);
        ck_assert_int_eq(ref_max_unpooling(&rx, &ri, REF_INDEX_UINT32, &ry), 0);
    }
    const void *const xs[2] = {pc[0].x, pc[1].x}, *const idxs[2] = {pc[0].idx, pc[1].idx};
    const unsigned char *const wants[2] = {want[0], want[1]};
    static const char *const names[2] = {"3x3/2", "2x2/2"};
    up_run_alternating(op, xs, pc[0].count * es, idxs, pc[0].count * 4, wants, yb, es, names);
    clops_operator_free(op);
    for (int k = 0; k < 2; k++) {
        free(want[k]);
        free_case(&pc[k]);
    }
}
END_TEST

/* ---- the sizes real networks use ------------------------------------------------------------------ */
/* Real pool `s` of type `t` with `it` indices in `layout` (seeded), through every path. */
static void network_case(const pool_shape *s, clops_data_type t, const index_type_info *it,
                         clops_indices_layout layout, uint64_t seed)
{
    pool_case pc;
    make_case(s, t, it, seed, &pc);
    if (layout == CLOPS_INDICES_PER_PLANE)
        store_indices(it, pc.plane_idx, pc.count, pc.idx);
    char what[160];
    snprintf(what, sizeof what, "network-sized %ux%ux%ux%u %s, indices of a real %s max pool (%s plan)", s->n, s->c,
             s->h, s->w, tc_type(t)->name, s->what, plan_of(&pc.c, layout));
    up_run_layout(&pc.c, layout, pc.x, pc.idx, CLOPS_SUCCESS, what, NULL);
    free_case(&pc);
}

/* SegNet-style decoders: the indices of real 2x2/2, 3x3/2/1, 3x3/1/1 and 4x4/2/1
 * max pools of (1, 64, 128, 128) and (2, 32, 128, 128) tensors, 1 to 4 million
 * output elements, per-plane (PyTorch's) and flat, on every path. Small shapes
 * never reach what these do: enough work-items and work-groups that a device
 * runs them side by side (rusticl left every 4th plane partly zero here while
 * the small cases passed: issue 31). */
START_TEST(test_network_sizes)
{
    if (tc_skip_network_sizes("test_network_sizes"))
        return;
    static const pool_shape nets[] = {
        {"2x2/2", 1, 64, 128, 128, 2, 2, 0, false, ""},     {"3x3/2 pad 1", 2, 32, 128, 128, 3, 2, 1, false, ""},
        {"3x3/1 pad 1", 1, 64, 128, 128, 3, 1, 1, false, ""}, {"4x4/2 pad 1", 2, 32, 128, 128, 4, 2, 1, false, ""},
        {"2x2/2", 2, 32, 128, 128, 2, 2, 0, false, ""},     {"3x3/2 pad 1", 1, 64, 127, 127, 3, 2, 1, false, ""},
        {"3x3/1 pad 1", 2, 32, 128, 128, 3, 1, 1, false, ""}, {"4x4/2 pad 1", 1, 64, 128, 128, 4, 2, 1, false, ""},
    };
    static const clops_data_type types[] = {CLOPS_DATA_TYPE_FLOAT32, CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_FLOAT16,
                                            CLOPS_DATA_TYPE_FLOAT64};
    network_case(&nets[_i], types[_i % 4], &index_types[_i % 3],
                 _i % 2 ? CLOPS_INDICES_FLAT : CLOPS_INDICES_PER_PLANE, 9000u + (uint64_t)_i);
}
END_TEST

/* Narrow elements (1 and 2 bytes) at network sizes, 3 to 5 million output
 * elements, through the plan the device's own rule picks (on GPUs pool's tile
 * form with several inputs per work-item, notes/unpool-pool.md): real 3x3/2/1
 * pools (duplicates where windows share a maximum) whose pooled rows are not a
 * multiple of a work-item's inputs (125) or exactly a work-group's (128), and
 * whose output is a multiple of the input or one short of it (windows first,
 * or pool alone), per-plane and flat, every index type. */
START_TEST(test_network_narrow)
{
    if (tc_skip_network_sizes("test_network_narrow"))
        return;
    static const pool_shape nets[] = {
        {"3x3/2 pad 1", 2, 64, 130, 250, 3, 2, 1, false, ""},
        {"3x3/2 pad 1", 1, 96, 127, 255, 3, 2, 1, false, ""},
        {"3x3/2 pad 1", 1, 96, 128, 256, 3, 2, 1, false, ""},
        {"3x3/2 pad 1", 3, 40, 129, 249, 3, 2, 1, false, ""},
    };
    network_case(&nets[_i], _i % 2 ? CLOPS_DATA_TYPE_FLOAT16 : CLOPS_DATA_TYPE_UINT8, &index_types[_i % 3],
                 _i / 2 ? CLOPS_INDICES_FLAT : CLOPS_INDICES_PER_PLANE, 9100u + (uint64_t)_i);
}
END_TEST

/* Wide elements at network sizes (8 and 16 bytes: on GPUs windows' 8-byte vector form and pool's
 * tile form, 16-byte since 2026-11-28), 2 to 8 million output elements: a 2x2 pool and real 3x3/2/1
 * pools whose output is a multiple of the input or one short of it (windows first, or pool alone). */
START_TEST(test_network_wide)
{
    if (tc_skip_network_sizes("test_network_wide"))
        return;
    static const pool_shape nets[] = {
        {"2x2/2", 1, 32, 128, 128, 2, 2, 0, false, ""},
        {"3x3/2 pad 1", 1, 32, 128, 128, 3, 2, 1, false, ""},
        {"3x3/2 pad 1", 2, 16, 127, 127, 3, 2, 1, false, ""},
        {"2x2/2", 2, 32, 96, 128, 2, 2, 0, false, ""},
    };
    network_case(&nets[_i], _i == 3 ? CLOPS_DATA_TYPE_FLOAT64 : CLOPS_DATA_TYPE_COMPLEX128, &index_types[_i % 3],
                 _i % 2 ? CLOPS_INDICES_FLAT : CLOPS_INDICES_PER_PLANE, 9200u + (uint64_t)_i);
}
END_TEST

/* Every test runs twice: with the planes plan off, so that pool (the GPU's
 * path) is tested on every device whatever its compute units, and forced on
 * (max_unpooling.cl planes; an index outside its plane takes the general path).
 * Checked fixtures: set in the forked child of each test. */
static void planes_never(void)
{
    clops_unpool_planes = CLOPS_PLANES_NEVER;
}

static void planes_always(void)
{
    clops_unpool_planes = CLOPS_PLANES_ALWAYS;
}

static void planes_auto(void)
{
    clops_unpool_planes = CLOPS_PLANES_AUTO;
}

static Suite *pools_suite(void)
{
    Suite *s = suite_create("unpool_pools");
    for (int planes = 0; planes < 2; planes++) {
        /* Check keeps the name pointers: string literals. */
        static const char *const names[2][4] = {{"real_pools", "outside", "per_plane", "repeated"},
                                                {"real_pools_planes", "outside_planes", "per_plane_planes",
                                                 "repeated_planes"}};
        const char *const *name = names[planes];
        TCase *tc[4];
        for (int k = 0; k < 4; k++) {
            tc[k] = tc_suite_case(s, name[k], -1);
            tcase_add_checked_fixture(tc[k], planes ? planes_always : planes_never, planes_auto);
        }
        tcase_add_loop_test(tc[0], test_real_pools, 0, (int)(NUM_SHAPES * NUM_POOL_TYPES));
        tcase_add_loop_test(tc[1], test_outside_neighbourhood, 0, (int)(2 * NUM_POOL_TYPES));
        tcase_add_loop_test(tc[2], test_per_plane, 0, (int)(5 * NUM_POOL_TYPES));
        tcase_add_loop_test(tc[3], test_repeated_executions, 0, (int)NUM_POOL_TYPES);
    }
    /* The network sizes with the plans the device's own rule picks (planes on CPUs). */
    tcase_add_loop_test(tc_suite_case(s, "network", -1), test_network_sizes, 0, 8);
    tcase_add_loop_test(tc_suite_case(s, "network_narrow", -1), test_network_narrow, 0, 4);
    tcase_add_loop_test(tc_suite_case(s, "network_wide", -1), test_network_wide, 0, 4);
    return s;
}

int main(void)
{
    return tc_main(pools_suite());
}
