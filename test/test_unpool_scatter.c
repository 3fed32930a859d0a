/*
 * test_unpool_scatter.c - MaxUnpooling's bucketed general path (issue 23, item 3:
 * max_unpooling.cl bucket and tiles): indices bucketed by output tile, each tile
 * written whole, the last input position naming an element winning. Every result
 * is compared bit for bit with the naive reference on every path
 * (test_unpool_common.h):
 *   scattered distinct indices, random ones with many duplicates, out-of-range
 *   ones mixed in, per-plane indices, strided outputs and inputs, every element
 *   width, on a shape of the general plan and on window-shaped ones (windows and
 *   pool run first, fail their check, and the general path rewrites everything);
 *   tiles of 16 and 256 elements forced through the test seam
 *   (clops_unpool_tile_shift), so that sizes cross many tile boundaries;
 *   one operator alternating scattered and pooling-shaped indices (windows and
 *   pool skip themselves while the general path runs: max_unpooling.cl
 *   GENERAL_SKIP), each execution against the reference, with mark's words
 *   cleared every 7th execution (MARK_BASE wraps 8 times in 60);
 *   network-sized scattered indices with many duplicates, 1- to 8-byte elements.
 */
#include <stdbool.h>

#include "ops/ops.h" /* clops_unpool_tile_shift, the test seam of the tile size */
#include "test_unpool_common.h"

static const clops_data_type widths[] = {CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_FLOAT16, CLOPS_DATA_TYPE_FLOAT32,
                                         CLOPS_DATA_TYPE_FLOAT64, CLOPS_DATA_TYPE_COMPLEX128};
#define NUM_WIDTHS (sizeof widths / sizeof widths[0])

/* CROWDED (not among the NUM_PATTERNS every test loops over): every index among
 * the first 256 elements, so one tile of the CPU's general path holds them all,
 * more than a work-item may loop over (max_unpooling.cl ST_HEAVY: mark and place
 * write the output instead). */
/* SPREAD (likewise): random over a third of the output, so that about a third
 * of the inputs share their element with another, all over the tensor. */
typedef enum pattern { DISTINCT, DUPLICATES, OUT_OF_RANGE, NUM_PATTERNS, CROWDED = NUM_PATTERNS, SPREAD } pattern;
static const char *const pattern_names[NUM_PATTERNS + 2] = {"scattered distinct", "random with many duplicates",
                                                             "random with out-of-range ones mixed in",
                                                             "crowded into one tile",
                                                             "scattered with many duplicates"};

typedef struct scat_shape {
    const char *what;
    uint32_t in[4], out[4];
    const char *plan; /* the kernel the device plan starts with */
} scat_shape;

static const scat_shape shapes[] = {
    {"general shape", {2, 3, 37, 45}, {2, 3, 190, 230}, "bucket"},     /* ratio 5.1: no pool, no windows */
    {"2x2 windows shape", {1, 4, 33, 40}, {1, 4, 66, 80}, "windows"},  /* windows, pool, then the general path */
    {"wide windows shape", {1, 2, 40, 60}, {1, 2, 240, 360}, "windows"}, /* windows alone (6x6), then the general path */
    {"single row", {1, 1, 1, 9000}, {1, 1, 1, 50000}, "bucket"},
};
#define NUM_SHAPES (sizeof shapes / sizeof shapes[0])

static uint64_t count4(const uint32_t *s)
{
    return (uint64_t)s[0] * s[1] * s[2] * s[3];
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        const uint64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* Flat indices of `pattern` for n inputs into `out` output elements: distinct
 * (a multiplicative scatter by an odd step coprime to the count, so no two
 * inputs share an element), or drawn from a few hundred elements (many
 * duplicates), or random with every 97th out of range. Per-plane (`plane` != 0):
 * relative to the input's plane, `plane` elements each. */
static void make_indices(pattern pat, uint64_t n, uint64_t out, uint64_t plane_in, uint64_t plane, uint64_t seed,
                         uint64_t *flat)
{
    uint64_t step = 2654435761u % out;
    while (step < 2 || gcd(step, out) != 1)
        step++;
    for (uint64_t k = 0; k < n; k++) {
        const uint64_t r = tc_rng_next(&seed);
        uint64_t v;
        if (pat == DISTINCT)
            v = (k * step + 17) % out;
        else if (pat == DUPLICATES)
            v = (r % 300) * (out / 300); /* 300 elements for all the inputs */
        else if (pat == CROWDED)
            v = r % 256;
        else if (pat == SPREAD)
            v = r % (out / 3 + 1);
        else
            v = k % 97 == 50 ? out + r % 5 : r % out;
        if (plane) /* per-plane: relative to the input's own plane, out of range past it */
            v = pat == OUT_OF_RANGE && k % 97 == 50 ? plane + r % 3 : v % plane;
        (void)plane_in;
        flat[k] = v;
    }
}

/* Whether the values of flat[0..n) below `out` are distinct (a test check). */
static bool all_distinct(const uint64_t *flat, uint64_t n, uint64_t out)
{
    unsigned char *seen = calloc(out, 1);
    ck_assert(seen);
    bool ok = true;
    for (uint64_t k = 0; k < n && ok; k++)
        if (flat[k] < out) ok = !seen[flat[k]]++;
    free(seen);
    return ok;
}

/* Which kernel the device plan starts with ("" without a device or on the host). */
static const char *plan_of(const up_case *c)
{
    if (!tc_dev_ctx)
        return "";
    up_descs d;
    up_describe(c, &d);
    clops_operator *op = tc_create(tc_dev_ctx, &d.desc, "plan", "device");
    clops_operator_info info;
    ck_assert_int_eq(clops_operator_get_info(op, &info), CLOPS_SUCCESS);
    const char *name = info.backend == CLOPS_BACKEND_OPENCL ? info.kernel_name : "";
    clops_operator_free(op); /* kernel_name is a string literal of the plan */
    return name;
}

/* One case: shape, width, index type, pattern, layout, strided output or not, at
 * tile shift `shift` (0: the library's choice). */
static void run_case(const scat_shape *s, clops_data_type t, const index_type_info *it, pattern pat,
                     clops_indices_layout layout, bool strided, unsigned shift, uint64_t seed)
{
    const size_t es = tc_type(t)->size;
    const uint64_t n = count4(s->in), out = count4(s->out), plane = (uint64_t)s->out[2] * s->out[3];
    uint64_t *flat = tc_malloc(n * sizeof *flat);
    unsigned char *x = tc_malloc(n * es), *idx = tc_malloc(n * it->size);
    make_indices(pat, n, out, (uint64_t)s->in[2] * s->in[3], layout == CLOPS_INDICES_PER_PLANE ? plane : 0, seed,
                 flat);
    if (pat == DISTINCT && layout == CLOPS_INDICES_FLAT)
        ck_assert_msg(all_distinct(flat, n, out), "%s: test bug, distinct indices repeat", s->what);
    tc_fill_random(x, n * es, seed + 1);
    store_indices(it, flat, n, idx);
    /* Strided output: rows padded by 3 elements, planes by 5, batches by 7. */
    const uint64_t row = (uint64_t)s->out[3] + 3, pl = s->out[2] * row + 5, batch = s->out[1] * pl + 7;
    const uint64_t padded[4] = {batch, pl, row, 1};
    up_case c = {t, it, {s->in[0], s->in[1], s->in[2], s->in[3]}, NULL, NULL,
                 {s->out[0], s->out[1], s->out[2], s->out[3]}, strided ? padded : NULL, 5};
    char what[200];
    snprintf(what, sizeof what, "%s indices, %s, %s output, tile shift %u", pattern_names[pat], s->what,
             strided ? "padded" : "packed", shift);
    clops_unpool_tile_shift = shift;
    if (!strided && layout == CLOPS_INDICES_FLAT) {
        const char *plan = plan_of(&c);
        if (plan[0])
            ck_assert_msg(strcmp(plan, up_plan_name(s->plan, es)) == 0, "%s: device plan %s, want %s", what, plan,
                          up_plan_name(s->plan, es));
    }
    up_run_layout(&c, layout, x, idx, pat == OUT_OF_RANGE ? CLOPS_ERROR_INDEX_OUT_OF_RANGE : CLOPS_SUCCESS, what,
                  NULL);
    clops_unpool_tile_shift = 0;
    free(flat);
    free(x);
    free(idx);
}

/* ---- every shape, width, pattern; flat indices, packed output ------------------------------------------ */
START_TEST(test_patterns)
{
    const scat_shape *s = &shapes[_i % NUM_SHAPES];
    const pattern pat = (pattern)(_i / NUM_SHAPES % NUM_PATTERNS);
    const clops_data_type t = widths[_i / (NUM_SHAPES * NUM_PATTERNS) % NUM_WIDTHS];
    const index_type_info *it = &index_types[_i % 3];
    run_case(s, t, it, pat, CLOPS_INDICES_FLAT, false, 0, 100u + (uint64_t)_i);
}
END_TEST

/* ---- tiny tiles (the seam): 16 and 256 elements, sizes crossing many tiles ---------------------------- */
START_TEST(test_tiny_tiles)
{
    const scat_shape *s = &shapes[_i % 2];
    const pattern pat = (pattern)(_i / 2 % NUM_PATTERNS);
    const clops_data_type t = widths[_i / (2 * NUM_PATTERNS) % NUM_WIDTHS];
    const unsigned shift = _i % 3 ? 4 : 8; /* 16 or 256 elements */
    run_case(s, t, &index_types[(_i / 2) % 3], pat, CLOPS_INDICES_FLAT, false, shift, 200u + (uint64_t)_i);
}
END_TEST

/* ---- strided output, and strided input and indices ------------------------------------------------------ */
START_TEST(test_strided)
{
    const scat_shape *s = &shapes[_i % 2];
    const pattern pat = (pattern)(_i / 2 % NUM_PATTERNS);
    const clops_data_type t = widths[_i / (2 * NUM_PATTERNS) % NUM_WIDTHS];
    run_case(s, t, &index_types[_i % 3], pat, CLOPS_INDICES_FLAT, true, _i % 2 ? 5 : 0, 300u + (uint64_t)_i);
}
END_TEST

/* Strided input and indices (NHWC values, padded indices), scattered distinct
 * and duplicate-heavy, on the general shape. */
START_TEST(test_strided_input)
{
    const scat_shape *s = &shapes[0];
    const clops_data_type t = widths[_i % NUM_WIDTHS];
    const index_type_info *it = &index_types[_i % 3];
    const pattern pat = _i / NUM_WIDTHS ? DUPLICATES : DISTINCT;
    const size_t es = tc_type(t)->size;
    const uint32_t *in = s->in;
    const uint64_t n = count4(in), out = count4(s->out);
    const uint64_t x_nhwc[4] = {(uint64_t)in[1] * in[2] * in[3], 1, (uint64_t)in[3] * in[1], in[1]};
    const uint64_t i_pad[4] = {in[1] * ((uint64_t)in[2] * (in[3] + 2) + 1), (uint64_t)in[2] * (in[3] + 2) + 1,
                               in[3] + 2, 1};
    const size_t xspan = (size_t)tc_span(in, x_nhwc), ispan = (size_t)tc_span(in, i_pad);
    uint64_t *flat = tc_malloc(n * sizeof *flat), *spread = tc_malloc(ispan * sizeof *spread);
    unsigned char *x = tc_malloc(xspan * es), *idx = tc_malloc(ispan * it->size);
    make_indices(pat, n, out, 0, 0, 400u + (uint64_t)_i, flat);
    for (size_t k = 0; k < ispan; k++)
        spread[k] = UINT32_MAX; /* gaps: out-of-range indices that must not be read */
    up_case c = {t, it, {in[0], in[1], in[2], in[3]}, x_nhwc, i_pad, {s->out[0], s->out[1], s->out[2], s->out[3]},
                 NULL, 4};
    for (uint64_t k = 0; k < n; k++)
        spread[up_index_offset(&c, k)] = flat[k];
    store_indices(it, spread, ispan, idx);
    tc_fill_random(x, xspan * es, 401u + (uint64_t)_i);
    up_run(&c, x, idx, CLOPS_SUCCESS, pat == DISTINCT ? "scattered distinct, NHWC input, padded indices"
                                                      : "duplicates, NHWC input, padded indices");
    free(flat);
    free(spread);
    free(x);
    free(idx);
}
END_TEST

/* ---- per-plane indices ---------------------------------------------------------------------------------- */
START_TEST(test_per_plane)
{
    const scat_shape *s = &shapes[_i % 2];
    const pattern pat = (pattern)(_i / 2 % NUM_PATTERNS);
    const clops_data_type t = widths[_i / (2 * NUM_PATTERNS) % NUM_WIDTHS];
    run_case(s, t, &index_types[_i % 3], pat, CLOPS_INDICES_PER_PLANE, _i % 4 == 3, _i % 5 == 0 ? 6 : 0,
             500u + (uint64_t)_i);
}
END_TEST

/* ---- the sizes real networks use, and a crowded tile ------------------------------------------------------ */
/* Scattered distinct indices from a (4, 64, 128, 128) input into a (4, 64, 256,
 * 256) output, 16 million elements (on the H100 this lost the device: issue 31),
 * flat and per plane; and 200,000 inputs all naming the first 256 output
 * elements, flat and per plane, past what one work-item may loop over. */
START_TEST(test_large)
{
    if (tc_skip_network_sizes("test_large"))
        return;
    static const scat_shape large[] = {
        {"network-sized scattered", {4, 64, 128, 128}, {4, 64, 256, 256}, "windows"},
        {"crowded tile", {1, 1, 1, 200000}, {1, 1, 1, 1020001}, "bucket"},
        {"crowded tiles, two planes", {1, 2, 1, 100000}, {1, 2, 1, 510001}, "bucket"},
    };
    static const clops_data_type types[] = {CLOPS_DATA_TYPE_FLOAT32, CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_FLOAT16,
                                            CLOPS_DATA_TYPE_COMPLEX128};
    const scat_shape *s = &large[_i / 2 % 3];
    const clops_indices_layout layout = _i % 2 ? CLOPS_INDICES_PER_PLANE : CLOPS_INDICES_FLAT;
    run_case(s, types[_i % 4], &index_types[_i % 3], _i < 2 ? DISTINCT : CROWDED, layout, false, 0,
             600u + (uint64_t)_i);
}
END_TEST

/* Scattered indices with many duplicates (SPREAD) from a (2, 32, 128, 128)
 * input, a million elements, into a (2, 32, 256, 256) output, 4 million
 * (window-shaped: windows and pool fail their checks, then the general path;
 * on GPUs mark and place), for 1-, 2-, 4- and 8-byte elements, flat and per
 * plane: the last input position naming an element wins, bit for bit as the
 * host path. */
START_TEST(test_large_duplicates)
{
    if (tc_skip_network_sizes("test_large_duplicates"))
        return;
    static const scat_shape s = {"network-sized, duplicates", {2, 32, 128, 128}, {2, 32, 256, 256}, "windows"};
    static const clops_data_type types[] = {CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_FLOAT16, CLOPS_DATA_TYPE_FLOAT32,
                                            CLOPS_DATA_TYPE_FLOAT64};
    const clops_indices_layout layout = _i % 2 ? CLOPS_INDICES_PER_PLANE : CLOPS_INDICES_FLAT;
    run_case(&s, types[_i / 2], &index_types[_i % 3], SPREAD, layout, false, 0, 700u + (uint64_t)_i);
}
END_TEST

/* ---- one operator, scattered and pooling-shaped indices in turn ------------------------------------------- */
/* Windows and pool skip themselves while the operator's previous execution
 * needed the general path, except every 16th execution (max_unpooling.cl
 * GENERAL_SKIP): runs of scattered, then 2x2 window, then alternating indices,
 * each execution against the reference. */
START_TEST(test_repeated_executions)
{
    if (tc_skip_without_device("test_repeated_executions"))
        return;
    const clops_data_type t = widths[_i];
    const scat_shape *s = &shapes[1];
    const size_t es = tc_type(t)->size;
    const uint64_t n = count4(s->in), out = count4(s->out);
    uint64_t *flat = tc_malloc(n * sizeof *flat);
    unsigned char *x = tc_malloc(n * es), *idx[2];
    tc_fill_random(x, n * es, 4711u);
    for (int k = 0; k < 2; k++) {
        idx[k] = tc_malloc(n * 4);
        if (k == 0) {
            make_indices(DUPLICATES, n, out, 0, 0, 4712u, flat);
        } else { /* 2x2 windows: a pseudo-random position of each input's own window */
            uint64_t seed = 4713u;
            for (uint64_t j = 0; j < n; j++) {
                const uint64_t w = j % s->in[3], h = j / s->in[3] % s->in[2], p = j / s->in[3] / s->in[2];
                const uint64_t r = tc_rng_next(&seed) % 4;
                flat[j] = (p * s->out[2] + 2 * h + r / 2) * s->out[3] + 2 * w + r % 2;
            }
        }
        store_indices(&index_types[0], flat, n, idx[k]);
    }
    up_case c = {t, &index_types[0], {s->in[0], s->in[1], s->in[2], s->in[3]}, NULL, NULL,
                 {s->out[0], s->out[1], s->out[2], s->out[3]}, NULL, 0};
    up_descs d;
    up_describe(&c, &d);
    clops_unpool_mark_period = 7; /* mark's words cleared every 7th execution (max_unpooling.cl MARK_BASE) */
    clops_operator *op = tc_create(tc_dev_ctx, &d.desc, "repeated executions", "device");
    clops_unpool_mark_period = 0;
    const size_t yb = tc_tensor_bytes(&d.y);
    unsigned char *want[2];
    for (int k = 0; k < 2; k++) {
        want[k] = tc_malloc(yb);
        memset(want[k], 0, yb);
        ck_assert_int_eq(up_reference(&c, CLOPS_INDICES_FLAT, x, idx[k], want[k]), 0);
    }
    const void *const xs[2] = {x, x}, *const idxs[2] = {idx[0], idx[1]};
    const unsigned char *const wants[2] = {want[0], want[1]};
    static const char *const names[2] = {"scattered", "2x2 window"};
    up_run_alternating(op, xs, n * es, idxs, n * 4, wants, yb, es, names);
    clops_operator_free(op);
    for (int k = 0; k < 2; k++) {
        free(want[k]);
        free(idx[k]);
    }
    free(flat);
    free(x);
}
END_TEST

static Suite *scatter_suite(void)
{
    Suite *s = suite_create("unpool_scatter");
    TCase *tc = tc_suite_case(s, "patterns", -1);
    tcase_add_loop_test(tc, test_patterns, 0, (int)(NUM_SHAPES * NUM_PATTERNS * NUM_WIDTHS));
    tc = tc_suite_case(s, "tiny_tiles", -1);
    tcase_add_loop_test(tc, test_tiny_tiles, 0, (int)(2 * NUM_PATTERNS * NUM_WIDTHS));
    tc = tc_suite_case(s, "strided", -1);
    tcase_add_loop_test(tc, test_strided, 0, (int)(2 * NUM_PATTERNS * NUM_WIDTHS));
    tc = tc_suite_case(s, "strided_input", -1);
    tcase_add_loop_test(tc, test_strided_input, 0, (int)(2 * NUM_WIDTHS));
    tc = tc_suite_case(s, "per_plane", -1);
    tcase_add_loop_test(tc, test_per_plane, 0, (int)(2 * NUM_PATTERNS * NUM_WIDTHS));
    tc = tc_suite_case(s, "large", -1);
    tcase_add_loop_test(tc, test_large, 0, 6);
    tc = tc_suite_case(s, "large_duplicates", -1);
    tcase_add_loop_test(tc, test_large_duplicates, 0, 8);
    tc = tc_suite_case(s, "repeated", -1);
    tcase_add_loop_test(tc, test_repeated_executions, 0, (int)NUM_WIDTHS);
    return s;
}

int main(void)
{
    clops_unpool_planes = CLOPS_PLANES_NEVER; /* these plans on every device (test_unpool_pools runs planes) */
    return tc_main(scatter_suite());
}
