/*
 * test_ops.c - DepthToSpace and SpaceToDepth on the host backend and on the
 * default OpenCL device, against the published examples (DirectML, ONNX) and
 * against the naive reference (reference.c), bit-exactly.
 *
 * Every case runs on: clops_host_run; the host context (execute_host); the
 * OpenCL context (execute_host, and execute on cl_mem buffers with a wait list
 * of the upload events and a returned event). The output buffer starts as a
 * sentinel and is compared whole, so writes into gaps or past the span fail.
 * Wait lists and out-of-order queues are in test_ops_queues.c.
 */
#include "test_depth_space_common.h"

static const uint32_t block_sizes[] = {1, 2, 3, 4, 8};
#define NUM_BLOCKS 5

/* The input sizes of a case whose shallow side is `base` {N, C, H, W} before the
 * block: DepthToSpace reads {N, C*b*b, H, W}, SpaceToDepth {N, C, H*b, W*b}. */
static void ds_in_sizes(clops_operator_type op, uint32_t b, const uint32_t base[4], uint32_t in[4])
{
    const int d2s = op == CLOPS_OPERATOR_DEPTH_TO_SPACE;
    in[0] = base[0];
    in[1] = d2s ? base[1] * b * b : base[1];
    in[2] = d2s ? base[2] : base[2] * b;
    in[3] = d2s ? base[3] : base[3] * b;
}

static void ds_run(const ds_case *c, const void *input, uint64_t seed, uint32_t tail)
{
    ds_run_on(c, input, seed, tail, NULL, TC_PATHS_ALL);
}

/* Runs a fixed example of packed case `c`: `input` and the `expected` output. Also
 * checks that the reference agrees with the published example. */
static void ds_example(const ds_case *c, const void *input, const void *expected, const char *what)
{
    ds_descs d;
    ds_describe(c, NULL, NULL, &d);
    char label[256];
    char a[64], b[64];
    snprintf(label, sizeof label, "%s: %s %s %s block %u, %s -> %s", what, op_name(c->op), tc_type(c->type)->name,
             tc_order_name(c->order), c->block, tc_shape_str(a, sizeof a, c->in_sizes),
             tc_shape_str(b, sizeof b, d.out.sizes));
    size_t es = tc_type(c->type)->size;
    size_t in_bytes = tc_tensor_bytes(&d.in), out_bytes = tc_tensor_bytes(&d.out);

    /* The reference reproduces the published example. */
    void *refout = tc_malloc(out_bytes);
    memset(refout, 0xEE, out_bytes);
    ds_reference(c, input, NULL, refout, NULL, label);
    tc_check_bytes(refout, expected, out_bytes, es, label, "reference.c against the spec example");
    free(refout);

    void *init = tc_malloc(out_bytes);
    tc_fill_sentinel(init, out_bytes);
    tc_bufs bufs = {input, in_bytes, NULL, 0, init, out_bytes};
    tc_check_all_paths(&d.desc, &bufs, expected, es, label);
    free(init);
}

/* ---- the published examples ------------------------------------------------------------ */
static const uint32_t dml_out_sizes[4] = {1, 2, 4, 6};

/* onnx_depth_to_space.txt: default_mode_example and crd_mode_example, float32,
 * written out as the spec prints them. */
static const float onnx_x[48] = {
    0., 1., 2., 3., 4., 5., 9., 10., 11., 12., 13., 14., 18., 19., 20., 21., 22., 23., 27., 28., 29., 30., 31., 32.,
    36., 37., 38., 39., 40., 41., 45., 46., 47., 48., 49., 50., 54., 55., 56., 57., 58., 59., 63., 64., 65., 66., 67., 68.,
};
static const float onnx_y_dcr[48] = {
    0., 18., 1., 19., 2., 20., 36., 54., 37., 55., 38., 56., 3., 21., 4., 22., 5., 23., 39., 57., 40., 58., 41., 59.,
    9., 27., 10., 28., 11., 29., 45., 63., 46., 64., 47., 65., 12., 30., 13., 31., 14., 32., 48., 66., 49., 67., 50., 68.,
};
static const float onnx_y_crd[48] = {
    0., 9., 1., 10., 2., 11., 18., 27., 19., 28., 20., 29., 3., 12., 4., 13., 5., 14., 21., 30., 22., 31., 23., 32.,
    36., 45., 37., 46., 38., 47., 54., 63., 55., 64., 56., 65., 39., 48., 40., 49., 41., 50., 57., 66., 58., 67., 59., 68.,
};

/* A published example's tensors: `deep` {1, 8, 2, 3} and its DepthToSpace block 2,
 * `shallow[order]` {1, 2, 4, 6}, in DCR and CRD order. */
typedef struct example_pair {
    clops_data_type type;
    const void *deep, *shallow[2];
} example_pair;
static const example_pair dml_pair = {CLOPS_DATA_TYPE_UINT32, dml_input, {dml_output_dcr, dml_output_crd}};
static const example_pair onnx_pair = {CLOPS_DATA_TYPE_FLOAT32, onnx_x, {onnx_y_dcr, onnx_y_crd}};

/* The examples, block 2: DepthToSpace maps a pair's deep tensor to its shallow one,
 * SpaceToDepth the shallow one back. dml_space_to_depth.md's example, input
 * (Sizes:{1, 2, 4, 6}) -> output (Sizes:{1, 8, 2, 3}), prints DML example 1 the
 * other way round, which is the correct rule {N, C*b^2, H/b, W/b}; SpaceToDepth CRD
 * is the inverse of DepthToSpace CRD, so DML example 2 read backwards must hold too
 * (derived from the spec). */
static const struct example {
    const example_pair *pair;
    clops_operator_type op;
    clops_depth_space_order order;
    const char *what;
} examples[] = {
    {&dml_pair, CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_ORDER_DEPTH_COLUMN_ROW, "DML DEPTH_TO_SPACE1 example 1 (DCR)"},
    {&dml_pair, CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_ORDER_COLUMN_ROW_DEPTH, "DML DEPTH_TO_SPACE1 example 2 (CRD)"},
    {&dml_pair, CLOPS_OPERATOR_SPACE_TO_DEPTH, CLOPS_ORDER_DEPTH_COLUMN_ROW, "DML SPACE_TO_DEPTH example"},
    {&dml_pair, CLOPS_OPERATOR_SPACE_TO_DEPTH, CLOPS_ORDER_COLUMN_ROW_DEPTH, "inverse of DML example 2"},
    {&onnx_pair, CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_ORDER_DEPTH_COLUMN_ROW,
     "ONNX test_depthtospace_example (mode DCR)"},
    {&onnx_pair, CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_ORDER_COLUMN_ROW_DEPTH,
     "ONNX test_depthtospace_crd_mode_example (mode CRD)"},
};
#define NUM_EXAMPLES (sizeof examples / sizeof examples[0])

/* dml_space_to_depth.md's text formula {N, C/b^2, H*b, W*b} = {1, 2/4, 4*2, 6*2} is a
 * known error (spec README): SpaceToDepth must reject those output sizes. */
static const uint32_t dml_s2d_misprinted_out[4] = {1, 0, 8, 12};

START_TEST(test_published_example)
{
    const struct example *e = &examples[_i];
    const example_pair *p = e->pair;
    const void *shallow = p->shallow[e->order];
    const int d2s = e->op == CLOPS_OPERATOR_DEPTH_TO_SPACE;
    ds_case c = {e->op, p->type, e->order, 2, {0, 0, 0, 0}, LAYOUT_PACKED, LAYOUT_PACKED};
    memcpy(c.in_sizes, d2s ? dml_in_sizes : dml_out_sizes, sizeof c.in_sizes);
    ds_descs d;
    ds_describe(&c, NULL, NULL, &d);
    char a[64], b[64];
    ck_assert_msg(memcmp(d.out.sizes, d2s ? dml_out_sizes : dml_in_sizes, sizeof d.out.sizes) == 0,
                  "%s: test bug, ds_out_sizes gives %s, not the published output sizes", e->what,
                  tc_shape_str(a, sizeof a, d.out.sizes));
    ds_example(&c, d2s ? p->deep : shallow, d2s ? shallow : p->deep, e->what);
    if (d2s)
        return;

    memcpy(d.out.sizes, dml_s2d_misprinted_out, sizeof d.out.sizes);
    clops_status st = clops_operator_validate(&d.desc);
    ck_assert_msg(st == CLOPS_ERROR_OUTPUT_SIZE_MISMATCH,
                  "%s %s block 2 with the page's erroneous output sizes %s: got %s, want "
                  "CLOPS_ERROR_OUTPUT_SIZE_MISMATCH",
                  op_name(e->op), tc_shape_str(a, sizeof a, c.in_sizes), tc_shape_str(b, sizeof b, d.out.sizes),
                  clops_status_name(st));
}
END_TEST

/* ---- the table: 15 types x 2 orders x block sizes 1,2,3,4,8 x shapes ------------------------ */
/* Shapes before the block is applied: D2S input is {N, C*b*b, H, W}, S2D input
 * {N, C, H*b, W*b}. N > 1, H = 1, W = 1, odd sizes, H != W. */
static const uint32_t table_shapes[][4] = {
    {1, 1, 1, 1}, {2, 3, 2, 5}, {1, 2, 1, 7}, {3, 1, 5, 1}, {2, 5, 3, 4},
};
#define NUM_TABLE_SHAPES (sizeof table_shapes / sizeof table_shapes[0])
#define TABLE_CASES (TC_NUM_TYPES * 2 * NUM_BLOCKS)

static void table_case(int i, clops_operator_type op)
{
    const tc_type_info *t = &tc_types[i % TC_NUM_TYPES];
    clops_depth_space_order order = (clops_depth_space_order)((i / TC_NUM_TYPES) % 2);
    uint32_t b = block_sizes[i / (TC_NUM_TYPES * 2)];
    for (size_t s = 0; s < NUM_TABLE_SHAPES; s++) {
        ds_case c = {op, t->type, order, b, {0, 0, 0, 0}, LAYOUT_PACKED, LAYOUT_PACKED};
        ds_in_sizes(op, b, table_shapes[s], c.in_sizes);
        ds_run(&c, NULL, 1000u * (uint64_t)i + s + (op == CLOPS_OPERATOR_SPACE_TO_DEPTH ? 500000u : 0u), 7);
    }
}

START_TEST(test_depth_to_space_table)
{
    table_case(_i, CLOPS_OPERATOR_DEPTH_TO_SPACE);
}
END_TEST

START_TEST(test_space_to_depth_table)
{
    table_case(_i, CLOPS_OPERATOR_SPACE_TO_DEPTH);
}
END_TEST

/* ---- round trips -------------------------------------------------------------------------- */
static const clops_data_type round_trip_types[] = {
    CLOPS_DATA_TYPE_UINT8,   CLOPS_DATA_TYPE_FLOAT16, CLOPS_DATA_TYPE_BFLOAT16,  CLOPS_DATA_TYPE_FLOAT32,
    CLOPS_DATA_TYPE_FLOAT64, CLOPS_DATA_TYPE_BOOL,    CLOPS_DATA_TYPE_COMPLEX128,
};
#define NUM_RT_TYPES (sizeof round_trip_types / sizeof round_trip_types[0])
static const uint32_t round_trip_blocks[] = {2, 3};
#define RT_CASES (NUM_RT_TYPES * 2 * 2)

START_TEST(test_round_trip)
{
    clops_data_type type = round_trip_types[_i % NUM_RT_TYPES];
    clops_depth_space_order order = (clops_depth_space_order)((_i / NUM_RT_TYPES) % 2);
    uint32_t b = round_trip_blocks[_i / (NUM_RT_TYPES * 2)];
    const uint32_t xs_d2s[4] = {2, 2 * b * b, 3, 5};
    const uint32_t xs_s2d[4] = {2, 3, 2 * b, 5 * b};
    round_trip(type, order, b, xs_d2s, 1, 7000u + (uint64_t)_i, NULL, TC_PATHS_ALL);
    round_trip(type, order, b, xs_s2d, 0, 8000u + (uint64_t)_i, NULL, TC_PATHS_ALL);
}
END_TEST

/* ---- strided inputs and outputs ----------------------------------------------------------------- */
/* One type per element size. */
static const clops_data_type strided_types[] = {
    CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_FLOAT16, CLOPS_DATA_TYPE_FLOAT32, CLOPS_DATA_TYPE_FLOAT64,
    CLOPS_DATA_TYPE_COMPLEX128,
};
#define NUM_STRIDED_TYPES (sizeof strided_types / sizeof strided_types[0])
#define STRIDED_CASES (NUM_STRIDED_TYPES * 2 * 2)

/* Case `i` of a loop over strided_types x orders x operators (block and sizes
 * still 0, layouts packed). */
static ds_case strided_case(int i)
{
    ds_case c = {(i / (NUM_STRIDED_TYPES * 2)) == 0 ? CLOPS_OPERATOR_DEPTH_TO_SPACE : CLOPS_OPERATOR_SPACE_TO_DEPTH,
                 strided_types[i % NUM_STRIDED_TYPES], (clops_depth_space_order)((i / NUM_STRIDED_TYPES) % 2), 0,
                 {0, 0, 0, 0}, LAYOUT_PACKED, LAYOUT_PACKED};
    return c;
}

START_TEST(test_strided)
{
    /* (input layout, output layout, block) */
    static const struct {
        layout in, out;
        uint32_t b;
    } combos[] = {
        {LAYOUT_NHWC, LAYOUT_NHWC, 2},     {LAYOUT_NHWC, LAYOUT_PACKED, 3},  {LAYOUT_PACKED, LAYOUT_NHWC, 2},
        {LAYOUT_PADDED, LAYOUT_PADDED, 2}, {LAYOUT_PACKED, LAYOUT_PADDED, 3}, {LAYOUT_PADDED, LAYOUT_NHWC, 2},
        {LAYOUT_BCAST_N, LAYOUT_PACKED, 2}, {LAYOUT_BCAST_H, LAYOUT_PADDED, 2}, {LAYOUT_BCAST_C, LAYOUT_NHWC, 3},
        {LAYOUT_BCAST_W, LAYOUT_PACKED, 2},
    };
    static const uint32_t base[4] = {3, 2, 3, 5};
    for (size_t k = 0; k < sizeof combos / sizeof combos[0]; k++) {
        ds_case c = strided_case(_i);
        c.block = combos[k].b, c.in_layout = combos[k].in, c.out_layout = combos[k].out;
        ds_in_sizes(c.op, c.block, base, c.in_sizes);
        ds_run(&c, NULL, 9000u + 100u * (uint64_t)_i + k, 5);
    }
}
END_TEST

/* ---- long rows and many channels ---------------------------------------------------------------------- */
/* Rows (and, through NHWC strides, channel runs) longer than a few hundred
 * elements, so that an implementation splitting them into pieces (per
 * work-item, per vector) must handle several pieces and a ragged last one:
 * 2*L + 5 positions with L = 512 / element size, for each element size. */
#define WIDE_CASES (NUM_STRIDED_TYPES * 2 * 2)

START_TEST(test_wide)
{
    const ds_case base = strided_case(_i);
    const uint32_t L = 2 * (uint32_t)(512 / tc_type(base.type)->size) + 5;
    const uint32_t rows[4] = {2, 1, 2, L}, channels[4] = {1, L, 2, 3};
    for (uint32_t b = 2; b <= 3; b++) {
        /* Long rows, packed. */
        ds_case c = base;
        c.block = b;
        ds_in_sizes(c.op, b, rows, c.in_sizes);
        ds_run(&c, NULL, 12000u + 10u * (uint64_t)_i + b, 9);
        /* Many channels, NHWC on both sides (channels contiguous). */
        ds_case n = base;
        n.block = b, n.in_layout = LAYOUT_NHWC, n.out_layout = LAYOUT_NHWC;
        ds_in_sizes(n.op, b, channels, n.in_sizes);
        ds_run(&n, NULL, 13000u + 10u * (uint64_t)_i + b, 9);
    }
}
END_TEST

/* ---- big blocks ----------------------------------------------------------------------------------------- */
static const clops_data_type big_block_types[] = {CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_FLOAT32,
                                                  CLOPS_DATA_TYPE_COMPLEX128};
#define BIG_BLOCK_CASES (3 * 2 * 2)

START_TEST(test_big_blocks)
{
    clops_data_type type = big_block_types[_i % 3];
    clops_depth_space_order order = (clops_depth_space_order)((_i / 3) % 2);
    uint32_t b = (_i / 6) == 0 ? 16 : 64;
    ds_case d2s = {CLOPS_OPERATOR_DEPTH_TO_SPACE, type, order, b, {1, 2 * b * b, 2, 1}, LAYOUT_PACKED, LAYOUT_PACKED};
    ds_run(&d2s, NULL, 15000u + (uint64_t)_i, 3);
    ds_case s2d = {CLOPS_OPERATOR_SPACE_TO_DEPTH, type, order, b, {1, 2, b, 2 * b}, LAYOUT_PACKED, LAYOUT_PADDED};
    ds_run(&s2d, NULL, 16000u + (uint64_t)_i, 3);
}
END_TEST

/* ---- explicit bit patterns ----------------------------------------------------------------------- */
static const uint32_t pat_f32[16] = {
    0x7fc12345u, /* quiet NaN with payload */
    0xffc00001u, /* negative quiet NaN with payload */
    0x7f800001u, /* signalling NaN */
    0xff812345u, /* negative signalling NaN with payload */
    0x80000000u, /* -0.0 */
    0x00000001u, /* smallest denormal */
    0x807fffffu, /* largest negative denormal */
    0x7f800000u, /* +inf */
    0xff800000u, /* -inf */
    0x3f800000u, /* 1.0 */
    0x00400000u, /* denormal */
    0x7fbfffffu, /* signalling NaN, full payload */
    0x7fffffffu, /* quiet NaN, full payload */
    0xffffffffu, /* negative quiet NaN, full payload */
    0x00000000u, /* +0.0 */
    0x80000001u, /* negative smallest denormal */
};
static const uint64_t pat_f64[16] = {
    0x7ff8000000000001ull, 0xfff8000000000001ull, 0x7ff0000000000001ull, 0x7ff4000000000000ull,
    0xfff0000000000001ull, 0x8000000000000000ull, 0x0000000000000001ull, 0x800fffffffffffffull,
    0x7ff0000000000000ull, 0xfff0000000000000ull, 0x7ff7ffffffffffffull, 0x7fffffffffffffffull,
    0xffffffffffffffffull, 0x0008000000000000ull, 0x3ff0000000000000ull, 0x0000000000000000ull,
};
static const uint16_t pat_f16[16] = {
    0x7e01, /* quiet NaN with payload */
    0xfe01, /* negative quiet NaN with payload */
    0x7c01, /* signalling NaN */
    0xfd55, /* negative signalling NaN with payload */
    0x7d55, /* signalling NaN with payload */
    0x8000, /* -0.0 */
    0x0001, /* smallest denormal */
    0x83ff, /* largest negative denormal */
    0x7c00, /* +inf */
    0xfc00, /* -inf */
    0x3c00, /* 1.0 */
    0x7fff, 0xffff, 0x0000, 0x0200, 0x8001,
};
static const uint16_t pat_bf16[16] = {
    0x7fc1, /* quiet NaN with payload */
    0xffc1, 0x7f81, /* signalling NaN */
    0xff81, 0x7fa5, 0x8000, /* -0.0 */
    0x0001, /* denormal */
    0x807f, 0x7f80, 0xff80, 0x3f80, 0x7fff, 0xffff, 0x0000, 0x0040, 0x8001,
};

static void bit_pattern_case(clops_data_type type, const void *patterns, const char *what)
{
    size_t es = tc_type(type)->size;
    unsigned char in16[16 * 16];
    memcpy(in16, patterns, 16 * es);

    /* 1x16x1x1 -> DepthToSpace block 4 -> 1x1x4x4: with one output channel both
     * orders keep the elements in memory order, so the output is the input. */
    for (int o = 0; o < 2; o++) {
        char w[160];
        snprintf(w, sizeof w, "%s bit patterns (identity permutation)", what);
        ds_case deep = {CLOPS_OPERATOR_DEPTH_TO_SPACE, type, (clops_depth_space_order)o, 4, {1, 16, 1, 1},
                        LAYOUT_PACKED, LAYOUT_PACKED};
        ds_example(&deep, in16, in16, w);
        ds_case flat = {CLOPS_OPERATOR_SPACE_TO_DEPTH, type, (clops_depth_space_order)o, 4, {1, 1, 4, 4},
                        LAYOUT_PACKED, LAYOUT_PACKED};
        ds_example(&flat, in16, in16, w);
    }

    /* A real permutation of the patterns, against the reference: 2x8x2x2, block 2. */
    unsigned char big[2 * 8 * 2 * 2 * 16];
    for (int k = 0; k < 64; k++)
        memcpy(big + (size_t)k * es, (const unsigned char *)patterns + (size_t)((k * 7 + k / 16) % 16) * es, es);
    for (int o = 0; o < 2; o++) {
        ds_case c1 = {CLOPS_OPERATOR_DEPTH_TO_SPACE, type, (clops_depth_space_order)o, 2, {2, 8, 2, 2},
                      LAYOUT_PACKED, LAYOUT_PACKED};
        ds_run(&c1, big, 0, 3);
        ds_case c2 = {CLOPS_OPERATOR_SPACE_TO_DEPTH, type, (clops_depth_space_order)o, 2, {2, 2, 4, 4},
                      LAYOUT_PACKED, LAYOUT_PADDED};
        ds_run(&c2, big, 0, 3);
    }
}

static const struct {
    clops_data_type type;
    const void *patterns;
    const char *what;
} bit_pattern_types[] = {
    {CLOPS_DATA_TYPE_FLOAT32, pat_f32, "FLOAT32 NaN payloads / sNaN / -0.0 / denormals"},
    {CLOPS_DATA_TYPE_FLOAT64, pat_f64, "FLOAT64 NaN payloads / sNaN / -0.0 / denormals"},
    {CLOPS_DATA_TYPE_FLOAT16, pat_f16, "FLOAT16 NaN payloads / sNaN / -0.0 / denormals"},
    {CLOPS_DATA_TYPE_BFLOAT16, pat_bf16, "BFLOAT16 NaN payloads / sNaN / -0.0 / denormals"},
};
#define NUM_BIT_PATTERN_TYPES (sizeof bit_pattern_types / sizeof bit_pattern_types[0])

START_TEST(test_bit_patterns)
{
    bit_pattern_case(bit_pattern_types[_i].type, bit_pattern_types[_i].patterns, bit_pattern_types[_i].what);
}
END_TEST

START_TEST(test_bit_patterns_complex)
{
    /* COMPLEX64 = pairs of float32 patterns, COMPLEX128 = pairs of float64 patterns. */
    uint32_t c64[32];
    uint64_t c128[32];
    for (int k = 0; k < 16; k++) {
        c64[2 * k] = pat_f32[k], c64[2 * k + 1] = pat_f32[15 - k];
        c128[2 * k] = pat_f64[k], c128[2 * k + 1] = pat_f64[15 - k];
    }
    bit_pattern_case(CLOPS_DATA_TYPE_COMPLEX64, c64, "COMPLEX64 of float32 NaN/-0.0/denormal parts");
    bit_pattern_case(CLOPS_DATA_TYPE_COMPLEX128, c128, "COMPLEX128 of float64 NaN/-0.0/denormal parts");
}
END_TEST

/* ---- empty tensors --------------------------------------------------------------------------------- */
START_TEST(test_empty)
{
    static const struct {
        clops_operator_type op;
        uint32_t in[4];
    } cases[] = {
        {CLOPS_OPERATOR_DEPTH_TO_SPACE, {0, 4, 2, 2}}, {CLOPS_OPERATOR_DEPTH_TO_SPACE, {1, 0, 2, 2}},
        {CLOPS_OPERATOR_DEPTH_TO_SPACE, {1, 4, 0, 2}}, {CLOPS_OPERATOR_DEPTH_TO_SPACE, {1, 4, 2, 0}},
        {CLOPS_OPERATOR_SPACE_TO_DEPTH, {0, 1, 4, 4}}, {CLOPS_OPERATOR_SPACE_TO_DEPTH, {1, 0, 4, 4}},
        {CLOPS_OPERATOR_SPACE_TO_DEPTH, {1, 1, 0, 4}}, {CLOPS_OPERATOR_SPACE_TO_DEPTH, {1, 1, 4, 0}},
    };
    static const clops_data_type types[] = {CLOPS_DATA_TYPE_FLOAT32, CLOPS_DATA_TYPE_COMPLEX128, CLOPS_DATA_TYPE_UINT8};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
            for (int o = 0; o < 2; o++) {
                const uint32_t *in = cases[k].in;
                ds_case c = {cases[k].op, types[t], (clops_depth_space_order)o, 2, {in[0], in[1], in[2], in[3]},
                             LAYOUT_PACKED, LAYOUT_PACKED};
                ds_descs d;
                ds_describe(&c, NULL, NULL, &d);
                char label[200], a[64], bb[64];
                snprintf(label, sizeof label, "empty %s %s %s block 2: %s -> %s", op_name(c.op),
                         tc_type(c.type)->name, tc_order_name(c.order), tc_shape_str(a, sizeof a, in),
                         tc_shape_str(bb, sizeof bb, d.out.sizes));
                ck_assert_msg(tc_tensor_bytes(&d.in) == 0 && tc_tensor_bytes(&d.out) == 0, "%s: test bug", label);
                clops_status st = clops_operator_validate(&d.desc);
                ck_assert_msg(st == CLOPS_SUCCESS, "%s: validate gave %s (%s), want success", label,
                              clops_status_name(st), clops_last_error_message());

                unsigned char inb[64], init[64];
                tc_fill_random(inb, sizeof inb, 5);
                tc_fill_sentinel(init, sizeof init);

                /* NULL buffers of 0 bytes: fine, nothing to read or write. */
                tc_bufs none = {NULL, 0, NULL, 0, NULL, 0};
                tc_check_all_paths(&d.desc, &none, init, 1, label);

                /* Real buffers: the output must stay untouched. */
                tc_bufs some = {inb, sizeof inb, NULL, 0, init, sizeof init};
                tc_check_all_paths(&d.desc, &some, init, 1, label);
            }
}
END_TEST

/* ---- large: many work-groups ------------------------------------------------------------------------- */
START_TEST(test_large)
{
    for (int o = 0; o < 2; o++) {
        ds_case d2s = {CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_FLOAT32, (clops_depth_space_order)o, 2,
                       {2, 64, 64, 64}, LAYOUT_PACKED, LAYOUT_PACKED};
        ds_run(&d2s, NULL, 424242u + (uint64_t)o, 16);
        ds_case s2d = {CLOPS_OPERATOR_SPACE_TO_DEPTH, CLOPS_DATA_TYPE_FLOAT32, (clops_depth_space_order)o, 2,
                       {2, 64, 64, 64}, LAYOUT_PACKED, LAYOUT_PACKED};
        ds_run(&s2d, NULL, 434343u + (uint64_t)o, 16);
    }
    /* 16-byte elements, block 4, NHWC output. */
    ds_case big = {CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_COMPLEX128, CLOPS_ORDER_COLUMN_ROW_DEPTH, 4,
                   {2, 32, 33, 31}, LAYOUT_PACKED, LAYOUT_NHWC};
    ds_run(&big, NULL, 454545u, 16);
}
END_TEST

static Suite *ops_suite(void)
{
    Suite *s = suite_create("ops");

    TCase *tc = tc_suite_case(s, "examples", -1);
    tcase_add_loop_test(tc, test_published_example, 0, (int)NUM_EXAMPLES);

    /* Two cases, two ctest entries (test/CMakeLists.txt SPLIT): on empty caches one "table" case
     * was test_ops's longest entry (5 min 42 s on a busy machine). */
    tc = tc_suite_case(s, "table_d2s", -1);
    tcase_add_loop_test(tc, test_depth_to_space_table, 0, (int)TABLE_CASES);
    tc = tc_suite_case(s, "table_s2d", -1);
    tcase_add_loop_test(tc, test_space_to_depth_table, 0, (int)TABLE_CASES);

    tc = tc_suite_case(s, "round_trip", -1);
    tcase_add_loop_test(tc, test_round_trip, 0, (int)RT_CASES);

    tc = tc_suite_case(s, "strided", -1);
    tcase_add_loop_test(tc, test_strided, 0, (int)STRIDED_CASES);

    tc = tc_suite_case(s, "wide", -1);
    tcase_add_loop_test(tc, test_wide, 0, (int)WIDE_CASES);

    tc = tc_suite_case(s, "big_blocks", -1);
    tcase_add_loop_test(tc, test_big_blocks, 0, BIG_BLOCK_CASES);

    tc = tc_suite_case(s, "bit_patterns", -1);
    tcase_add_loop_test(tc, test_bit_patterns, 0, (int)NUM_BIT_PATTERN_TYPES);
    tcase_add_test(tc, test_bit_patterns_complex);

    tc = tc_suite_case(s, "empty", -1);
    tcase_add_test(tc, test_empty);

    tc = tc_suite_case(s, "large", -1);
    tcase_add_test(tc, test_large);
    return s;
}

int main(void)
{
    return tc_main(ops_suite());
}
