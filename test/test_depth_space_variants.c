/*
 * test_depth_space_variants.c - every specialised DepthToSpace / SpaceToDepth
 * kernel variant on the default OpenCL device, bit-exactly against the naive
 * reference (reference.c).
 *
 * kernels/depth_space.cl has an element loop; for blocks 2, 3, 4 and 8 and
 * elements of 1, 2, 4 and 8 bytes, an explicit-vector loop (VEC); and for blocks
 * up to 8, local-memory tile kernels (TILE). Each case runs the variant the
 * device picks by default, the vector loop forced (as `clops tune` builds its
 * candidates, through the static clops_testable) with a piece of 80 positions per
 * work-item, so pieces start at unaligned offsets and end in a vector remainder
 * and an element remainder, and the tile forced (rows of 149 positions: two
 * whole tiles of 64 and a partial one); for every order, element width
 * (1, 2, 4, 8, 16 bytes), block 2, 3, 4, 8 and 5 (the general loop), packed and
 * padded (unit W stride, gaps between rows and planes). A channels-inner (NHWC)
 * layout checks that a forced vector loop or tile falls back to the element loop there.
 * The output starts as a sentinel and is compared whole, so a write into a gap
 * or past the span fails. The host backend runs every case too. Network sizes
 * (about 2 million elements, rows of 1000) run for 1-, 2- and 4-byte elements.
 */
#include "api/api.h"
#include "reference.h"
#include "test_common.h"

static const clops_data_type width_types[] = {CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_FLOAT16, CLOPS_DATA_TYPE_FLOAT32,
                                              CLOPS_DATA_TYPE_FLOAT64, CLOPS_DATA_TYPE_COMPLEX128};
#define NUM_WIDTHS 5
static const uint32_t blocks[] = {2, 3, 4, 8, 5};
#define NUM_BLOCKS 5
/* Positions of the inner axis: two unrolled vector steps of the widest step
 * (64 bytes of 1-byte elements), a partial one and an odd tail. */
#define POSITIONS 149u
#define FORCED_CHUNK 80u

typedef enum layout { LAYOUT_PACKED, LAYOUT_PADDED, LAYOUT_NHWC } layout;

static const uint64_t *strides_for(layout l, const uint32_t s[4], uint64_t st[4])
{
    if (l == LAYOUT_PACKED)
        return NULL;
    if (l == LAYOUT_NHWC) {
        st[1] = 1, st[3] = s[1], st[2] = (uint64_t)s[3] * s[1], st[0] = st[2] * s[2];
    } else { /* odd gaps: rows and planes start at unaligned addresses */
        st[3] = 1, st[2] = s[3] + 3, st[1] = st[2] * s[2] + 5, st[0] = st[1] * s[1] + 7;
    }
    return st;
}

/* Whether the device build of (width, block, layout) can take the vector loop. */
static int vectors_possible(size_t es, uint32_t b, layout l)
{
    return l != LAYOUT_NHWC && (b == 2 || b == 3 || b == 4 || b == 8) && es <= 8;
}

/* Whether (block, layout) can take the local-memory tile kernels. */
static int tile_possible(uint32_t b, layout l)
{
    return l != LAYOUT_NHWC && b <= 8;
}

/* Runs `desc` on `op` through execute_host and compares the whole output with `want`. */
static void check_op(clops_operator *op, const void *in, size_t in_bytes, const void *init, const void *want,
                     size_t out_bytes, size_t es, const char *label, const char *path)
{
    void *got = tc_memdup(init, out_bytes);
    clops_host_buffers hb = {in, in_bytes, NULL, 0, got, out_bytes};
    clops_status st = clops_operator_execute_host(op, &hb);
    ck_assert_msg(st == CLOPS_SUCCESS, "%s [%s]: execute_host: %s (%s)", label, path, clops_status_name(st),
                  clops_last_error_message());
    tc_check_bytes(got, want, out_bytes, es, label, path);
    free(got);
}

/* `deep` is the deep side's sizes (DepthToSpace's input, SpaceToDepth's output). */
static void shape_case(clops_operator_type type, clops_depth_space_order order, int wi, uint32_t b, layout l,
                       const uint32_t deep[4])
{
    const clops_data_type dt = width_types[wi];
    const size_t es = clops_data_type_size(dt);
    const int d2s = type == CLOPS_OPERATOR_DEPTH_TO_SPACE;
    const uint32_t wide[4] = {deep[0], deep[1] / (b * b), deep[2] * b, deep[3] * b};
    const uint32_t *is = d2s ? deep : wide, *os = d2s ? wide : deep;
    uint64_t ist[4], ost[4];
    const uint64_t *in_st = strides_for(l, is, ist), *out_st = strides_for(l, os, ost);
    clops_tensor_desc tin = {dt, {is[0], is[1], is[2], is[3]}, in_st};
    clops_tensor_desc tout = {dt, {os[0], os[1], os[2], os[3]}, out_st};
    clops_depth_to_space_desc dd = {&tin, &tout, b, order};
    clops_operator_desc desc = {type, &dd}; /* D2S and S2D descriptors have the same layout */
    char label[160];
    snprintf(label, sizeof label, "%s %s %zu-byte block %u %s {%u, %u, %u, %u}", d2s ? "DepthToSpace" : "SpaceToDepth",
             tc_order_name(order), es, b, l == LAYOUT_PACKED ? "packed" : l == LAYOUT_PADDED ? "padded" : "NHWC",
             is[0], is[1], is[2], is[3]);

    const size_t in_bytes = tc_tensor_bytes(&tin), out_bytes = tc_tensor_bytes(&tout);
    void *in = tc_malloc(in_bytes), *init = tc_malloc(out_bytes);
    tc_fill_random(in, in_bytes, 0x5eed0000u + 1000u * (uint64_t)wi + 10u * b + (uint64_t)l);
    tc_fill_sentinel(init, out_bytes);
    void *want = tc_memdup(init, out_bytes);
    ref_tensor x, y;
    ref_tensor_init(&x, in, es, is, in_st);
    ref_tensor_init(&y, want, es, os, out_st);
    const ref_order ro = order == CLOPS_ORDER_DEPTH_COLUMN_ROW ? REF_ORDER_DCR : REF_ORDER_CRD;
    ck_assert_msg((d2s ? ref_depth_to_space(&x, &y, b, ro) : ref_space_to_depth(&x, &y, b, ro)) == 0,
                  "%s: test bug, reference rejected the sizes", label);

    /* The host backend. */
    void *got = tc_memdup(init, out_bytes);
    clops_host_buffers hb = {in, in_bytes, NULL, 0, got, out_bytes};
    clops_status st = clops_host_run(&desc, &hb);
    ck_assert_msg(st == CLOPS_SUCCESS, "%s: clops_host_run: %s (%s)", label, clops_status_name(st),
                  clops_last_error_message());
    tc_check_bytes(got, want, out_bytes, es, label, "clops_host_run");
    free(got);

    if (tc_dev_ctx) {
        clops_operator *op = tc_create(tc_dev_ctx, &desc, label, "OpenCL device, default variant");
        check_op(op, in, in_bytes, init, want, out_bytes, es, label, "OpenCL device, default variant");
        clops_operator_free(op);

        /* The vector loop and the local-memory tile, forced; where the variant
         * cannot take one, the default loop runs instead. */
        static const clops_loop forced[2] = {CLOPS_LOOP_VECTORS, CLOPS_LOOP_TILE};
        for (int f = 0; f < 2; f++) {
            const clops_tuning force = {FORCED_CHUNK, {0, 0, 0}, forced[f], 0};
            const char *path = f ? "OpenCL device, local-memory tile forced" : "OpenCL device, vector loop forced, chunk 80";
            op = NULL;
            st = clops_operator_create_forced(tc_dev_ctx, &desc, &force, &op);
            ck_assert_msg(st == CLOPS_SUCCESS && op, "%s [%s]: create: %s (%s)", label, path, clops_status_name(st),
                          clops_last_error_message());
            ck_assert_msg(!op->fallback, "%s [%s]: runs on the host (%s)", label, path, op->fallback_reason);
            const int can = f ? tile_possible(b, l)
                              : vectors_possible(es, b, l) && (es < 8 || tc_dev_ctx->info.has_int64);
            ck_assert_msg((op->loop == forced[f]) == (can != 0), "%s [%s]: loop %d ran (options %s)", label, path,
                          (int)op->loop, op->options);
            check_op(op, in, in_bytes, init, want, out_bytes, es, label, path);
            clops_operator_free(op);
        }
    }
    free(in);
    free(init);
    free(want);
}

/* D2S {2, 2b^2, 3, P} -> {2, 2, 3b, Pb}; S2D {2, 2, 3b, Pb} -> {2, 2b^2, 3, P}. */
static void variant_case(clops_operator_type type, clops_depth_space_order order, int wi, uint32_t b, layout l)
{
    const uint32_t deep[4] = {2, 2 * b * b, 3, POSITIONS};
    shape_case(type, order, wi, b, l, deep);
}

/* _i = ((op * 2 + order) * NUM_WIDTHS + width) * NUM_BLOCKS + block. */
#define VARIANT_CASES (2 * 2 * NUM_WIDTHS * NUM_BLOCKS)

START_TEST(test_variants)
{
    const int bi = _i % NUM_BLOCKS, wi = (_i / NUM_BLOCKS) % NUM_WIDTHS;
    const clops_depth_space_order order = (clops_depth_space_order)((_i / (NUM_BLOCKS * NUM_WIDTHS)) % 2);
    const clops_operator_type type =
        _i / (NUM_BLOCKS * NUM_WIDTHS * 2) ? CLOPS_OPERATOR_SPACE_TO_DEPTH : CLOPS_OPERATOR_DEPTH_TO_SPACE;
    variant_case(type, order, wi, blocks[bi], LAYOUT_PACKED);
    variant_case(type, order, wi, blocks[bi], LAYOUT_PADDED);
}
END_TEST

/* NHWC through strides walks channels; a forced vector loop must not apply. */
START_TEST(test_channels_inner)
{
    const clops_operator_type type = _i % 2 ? CLOPS_OPERATOR_SPACE_TO_DEPTH : CLOPS_OPERATOR_DEPTH_TO_SPACE;
    variant_case(type, (clops_depth_space_order)(_i / 2 % 2), 2, 2, LAYOUT_NHWC);
}
END_TEST

/* Network sizes, about 2 million elements, for 1-, 2- and 4-byte elements and blocks
 * 2, 3, 4, 8 (the vector-rows kernels' on GPU profiles, the CPU plans natively):
 * deep side {1, 2b^2, 1024/b^2, 1000}, rows of 1000 positions (not a multiple of
 * any vector: each ends in element moves), packed and padded. _i = (op * 3 +
 * width) * 4 + block, DepthToSpace in DCR order, SpaceToDepth in CRD. */
START_TEST(test_network)
{
    const uint32_t b = blocks[_i % 4];
    const int wi = _i / 4 % 3, s2d = _i / 12;
    const uint32_t deep[4] = {1, 2 * b * b, 1024 / (b * b), 1000};
    const clops_operator_type type = s2d ? CLOPS_OPERATOR_SPACE_TO_DEPTH : CLOPS_OPERATOR_DEPTH_TO_SPACE;
    const clops_depth_space_order order = s2d ? CLOPS_ORDER_COLUMN_ROW_DEPTH : CLOPS_ORDER_DEPTH_COLUMN_ROW;
    shape_case(type, order, wi, b, LAYOUT_PACKED, deep);
    shape_case(type, order, wi, b, LAYOUT_PADDED, deep);
}
END_TEST

/* Adds the variant cases of operator `op` (0 DepthToSpace, 1 SpaceToDepth) and element width `wi`,
 * both orders and every block, to `tc`: two ranges of test_variants's index. */
static void add_variants(TCase *tc, int op, int wi)
{
    for (int order = 0; order < 2; order++) {
        const int base = ((op * 2 + order) * NUM_WIDTHS + wi) * NUM_BLOCKS;
        tcase_add_loop_test(tc, test_variants, base, base + NUM_BLOCKS);
    }
}

/* One test case per operator and element width (issue 33: ctest runs each as its own entry,
 * test_depth_space_variants:CASE, so that it prints a line as each ends). The names are literals:
 * test/CMakeLists.txt reads them from this file. */
#define CASE_TIMEOUT 3600
static Suite *variants_suite(void)
{
    Suite *s = suite_create("depth_space_variants");
    add_variants(tc_suite_case(s, "d2s_1byte", CASE_TIMEOUT), 0, 0);
    add_variants(tc_suite_case(s, "d2s_2byte", CASE_TIMEOUT), 0, 1);
    add_variants(tc_suite_case(s, "d2s_4byte", CASE_TIMEOUT), 0, 2);
    add_variants(tc_suite_case(s, "d2s_8byte", CASE_TIMEOUT), 0, 3);
    add_variants(tc_suite_case(s, "d2s_16byte", CASE_TIMEOUT), 0, 4);
    add_variants(tc_suite_case(s, "s2d_1byte", CASE_TIMEOUT), 1, 0);
    add_variants(tc_suite_case(s, "s2d_2byte", CASE_TIMEOUT), 1, 1);
    add_variants(tc_suite_case(s, "s2d_4byte", CASE_TIMEOUT), 1, 2);
    add_variants(tc_suite_case(s, "s2d_8byte", CASE_TIMEOUT), 1, 3);
    add_variants(tc_suite_case(s, "s2d_16byte", CASE_TIMEOUT), 1, 4);
    TCase *tc = tc_suite_case(s, "channels_inner", CASE_TIMEOUT);
    tcase_add_loop_test(tc, test_channels_inner, 0, 4);
    tcase_add_loop_test(tc_suite_case(s, "network", CASE_TIMEOUT), test_network, 0, 24);
    return s;
}

int main(void)
{
    return tc_main(variants_suite());
}
