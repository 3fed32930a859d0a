/*
 * test_ops.c - DepthToSpace and SpaceToDepth on the host backend and on the
 * default OpenCL device, against the published examples (DirectML, ONNX) and
 * against the naive reference (reference.c), bit-exactly.
 *
 * Every case runs on: clops_host_run; the host context (execute_host); the
 * OpenCL context (execute_host, and execute on cl_mem buffers with a wait list
 * of the upload events and a returned event). The output buffer starts as a
 * sentinel and is compared whole, so writes into gaps or past the span fail.
 */
#include "reference.h"
#include "test_common.h"

static const uint32_t block_sizes[] = {1, 2, 3, 4, 8};
#define NUM_BLOCKS 5

static const char *op_name(clops_operator_type t)
{
    return t == CLOPS_OPERATOR_DEPTH_TO_SPACE ? "DepthToSpace" : "SpaceToDepth";
}

static void ds_out_sizes(clops_operator_type op, uint32_t b, const uint32_t in[4], uint32_t out[4])
{
    out[0] = in[0];
    if (op == CLOPS_OPERATOR_DEPTH_TO_SPACE) {
        out[1] = in[1] / (b * b);
        out[2] = in[2] * b;
        out[3] = in[3] * b;
    } else {
        out[1] = in[1] * b * b;
        out[2] = in[2] / b;
        out[3] = in[3] / b;
    }
}

/* Layouts through strides. */
typedef enum layout {
    LAYOUT_PACKED,
    LAYOUT_NHWC,    /* {H*W*C, 1, W*C, C} */
    LAYOUT_PADDED,  /* row stride W+3, plane stride H*(W+3)+5, batch stride C*plane+11 */
    LAYOUT_BCAST_N, /* zero stride on N (inputs only) */
    LAYOUT_BCAST_H, /* zero stride on H (inputs only) */
    LAYOUT_BCAST_C, /* zero stride on C (inputs only) */
    LAYOUT_BCAST_W  /* zero stride on W (inputs only) */
} layout;

static const char *layout_name(layout l)
{
    static const char *names[] = {"packed", "NHWC", "padded", "broadcast-N", "broadcast-H", "broadcast-C",
                                  "broadcast-W"};
    return names[l];
}

static const uint64_t *layout_strides(layout l, const uint32_t s[4], uint64_t st[4])
{
    const uint64_t N = s[0], C = s[1], H = s[2], W = s[3];
    (void)N;
    switch (l) {
    case LAYOUT_PACKED:
        return NULL;
    case LAYOUT_NHWC:
        st[0] = H * W * C, st[1] = 1, st[2] = W * C, st[3] = C;
        break;
    case LAYOUT_PADDED:
        st[3] = 1, st[2] = W + 3, st[1] = H * (W + 3) + 5, st[0] = C * st[1] + 11;
        break;
    case LAYOUT_BCAST_N:
        st[0] = 0, st[1] = H * W, st[2] = W, st[3] = 1;
        break;
    case LAYOUT_BCAST_H:
        st[0] = C * W, st[1] = W, st[2] = 0, st[3] = 1;
        break;
    case LAYOUT_BCAST_C:
        st[0] = H * W, st[1] = 0, st[2] = W, st[3] = 1;
        break;
    case LAYOUT_BCAST_W:
        st[0] = C * H, st[1] = H, st[2] = 1, st[3] = 0;
        break;
    }
    return st;
}

/* One DepthToSpace / SpaceToDepth case. */
typedef struct ds_case {
    clops_operator_type op;
    clops_data_type type;
    clops_depth_space_order order;
    uint32_t block;
    uint32_t in_sizes[4];
    layout in_layout;
    layout out_layout;
} ds_case;

static void ds_label(char *buf, size_t n, const ds_case *c, uint64_t seed)
{
    uint32_t os[4];
    char a[64], b[64];
    ds_out_sizes(c->op, c->block, c->in_sizes, os);
    snprintf(buf, n, "%s %s %s block %u: input %s (%s) -> output %s (%s), seed %" PRIu64, op_name(c->op),
             tc_type(c->type)->name, tc_order_name(c->order), c->block, tc_shape_str(a, sizeof a, c->in_sizes),
             layout_name(c->in_layout), tc_shape_str(b, sizeof b, os), layout_name(c->out_layout), seed);
}

/* Computes the expected output buffer with the reference: a copy of `out_init`
 * with the output elements written. */
static void ds_reference(const ds_case *c, const void *in, const uint64_t *in_st, void *want,
                         const uint64_t *out_st, const char *label)
{
    size_t es = tc_type(c->type)->size;
    uint32_t os[4];
    ds_out_sizes(c->op, c->block, c->in_sizes, os);
    ref_tensor x, y;
    ref_tensor_init(&x, (void *)(uintptr_t)in, es, c->in_sizes, in_st);
    ref_tensor_init(&y, want, es, os, out_st);
    ref_order ro = c->order == CLOPS_ORDER_DEPTH_COLUMN_ROW ? REF_ORDER_DCR : REF_ORDER_CRD;
    int r = c->op == CLOPS_OPERATOR_DEPTH_TO_SPACE ? ref_depth_to_space(&x, &y, c->block, ro)
                                                    : ref_space_to_depth(&x, &y, c->block, ro);
    ck_assert_msg(r == 0, "%s: test bug, reference rejected the sizes", label);
}

/* Runs a case on every path against the reference (or, when `only` is not NULL,
 * on that context only). The input is random bits from `seed` (or `input` when
 * given, of the input span). `tail` extra elements after the output span belong
 * to the buffer and must keep their sentinel. */
static void ds_run_on(const ds_case *c, const void *input, uint64_t seed, uint32_t tail, clops_context *only,
                      unsigned paths)
{
    char label[256];
    ds_label(label, sizeof label, c, seed);
    size_t es = tc_type(c->type)->size;
    uint32_t os[4];
    ds_out_sizes(c->op, c->block, c->in_sizes, os);
    uint64_t ist[4], ost[4];
    const uint64_t *in_st = layout_strides(c->in_layout, c->in_sizes, ist);
    const uint64_t *out_st = layout_strides(c->out_layout, os, ost);

    clops_tensor_desc tin = {c->type, {c->in_sizes[0], c->in_sizes[1], c->in_sizes[2], c->in_sizes[3]}, in_st};
    clops_tensor_desc tout = {c->type, {os[0], os[1], os[2], os[3]}, out_st};
    clops_depth_to_space_desc dd = {&tin, &tout, c->block, c->order};
    clops_operator_desc desc = {c->op, &dd}; /* D2S and S2D descriptors have the same layout */
    clops_space_to_depth_desc sd = {&tin, &tout, c->block, c->order};
    if (c->op == CLOPS_OPERATOR_SPACE_TO_DEPTH)
        desc.desc = &sd;

    size_t in_bytes = tc_tensor_bytes(&tin);
    size_t out_span_bytes = tc_tensor_bytes(&tout);
    size_t out_bytes = out_span_bytes + (size_t)tail * es;
    void *in = tc_malloc(in_bytes);
    if (input)
        memcpy(in, input, in_bytes);
    else
        tc_fill_random(in, in_bytes, seed);
    void *init = tc_malloc(out_bytes);
    tc_fill_sentinel(init, out_bytes);
    void *want = tc_memdup(init, out_bytes);
    ds_reference(c, in, in_st, want, out_st, label);

    clops_status vs = clops_operator_validate(&desc);
    ck_assert_msg(vs == CLOPS_SUCCESS, "%s: clops_operator_validate returned %s (%s)", label,
                  clops_status_name(vs), clops_last_error_message());

    tc_bufs b = {in, in_bytes, NULL, 0, init, out_bytes};
    if (only)
        tc_check_context_paths(only, "caller's out-of-order queue", paths, &desc, &b, CLOPS_SUCCESS, want, want, es,
                               label);
    else
        tc_check_all_paths(&desc, &b, want, es, label);
    free(in);
    free(init);
    free(want);
}

static void ds_run(const ds_case *c, const void *input, uint64_t seed, uint32_t tail)
{
    ds_run_on(c, input, seed, tail, NULL, TC_PATHS_ALL);
}

/* Runs a fixed example: `input` packed, `expected` packed output. Also checks
 * that the reference agrees with the published example. */
static void ds_example(clops_operator_type op, clops_data_type type, clops_depth_space_order order,
                       uint32_t block, const uint32_t in_sizes[4], const void *input,
                       const uint32_t out_sizes[4], const void *expected, const char *what)
{
    char label[256];
    char a[64], b[64];
    snprintf(label, sizeof label, "%s: %s %s %s block %u, %s -> %s", what, op_name(op), tc_type(type)->name,
             tc_order_name(order), block, tc_shape_str(a, sizeof a, in_sizes), tc_shape_str(b, sizeof b, out_sizes));
    size_t es = tc_type(type)->size;
    clops_tensor_desc tin = {type, {in_sizes[0], in_sizes[1], in_sizes[2], in_sizes[3]}, NULL};
    clops_tensor_desc tout = {type, {out_sizes[0], out_sizes[1], out_sizes[2], out_sizes[3]}, NULL};
    clops_depth_to_space_desc dd = {&tin, &tout, block, order};
    clops_space_to_depth_desc sd = {&tin, &tout, block, order};
    clops_operator_desc desc = {op, op == CLOPS_OPERATOR_DEPTH_TO_SPACE ? (const void *)&dd : (const void *)&sd};
    size_t in_bytes = tc_tensor_bytes(&tin), out_bytes = tc_tensor_bytes(&tout);

    /* The reference reproduces the published example. */
    void *refout = tc_malloc(out_bytes);
    memset(refout, 0xEE, out_bytes);
    ds_case c = {op, type, order, block, {in_sizes[0], in_sizes[1], in_sizes[2], in_sizes[3]},
                 LAYOUT_PACKED, LAYOUT_PACKED};
    ds_reference(&c, input, NULL, refout, NULL, label);
    tc_check_bytes(refout, expected, out_bytes, es, label, "reference.c against the spec example");
    free(refout);

    void *init = tc_malloc(out_bytes);
    tc_fill_sentinel(init, out_bytes);
    tc_bufs bufs = {input, in_bytes, NULL, 0, init, out_bytes};
    tc_check_all_paths(&desc, &bufs, expected, es, label);
    free(init);
}

/* ---- the published examples ------------------------------------------------------------ */
/* dml_depth_to_space1.txt: InputTensor (Sizes:{1, 8, 2, 3}, DataType:UINT32) */
static const uint32_t dml_input[1 * 8 * 2 * 3] = {
    0,  1,  2,  3,  4,  5,  /* c0 */
    9,  10, 11, 12, 13, 14, /* c1 */
    18, 19, 20, 21, 22, 23, /* c2 */
    27, 28, 29, 30, 31, 32, /* c3 */
    36, 37, 38, 39, 40, 41, /* c4 */
    45, 46, 47, 48, 49, 50, /* c5 */
    54, 55, 56, 57, 58, 59, /* c6 */
    63, 64, 65, 66, 67, 68, /* c7 */
};
/* Example 1. Depth-column-row order, OutputTensor (Sizes:{1, 2, 4, 6}) */
static const uint32_t dml_output_dcr[1 * 2 * 4 * 6] = {
    0,  18, 1,  19, 2,  20, 36, 54, 37, 55, 38, 56, 3,  21, 4,  22, 5,  23, 39, 57, 40, 58, 41, 59,
    9,  27, 10, 28, 11, 29, 45, 63, 46, 64, 47, 65, 12, 30, 13, 31, 14, 32, 48, 66, 49, 67, 50, 68,
};
/* Example 2. Column-row-depth order, OutputTensor (Sizes:{1, 2, 4, 6}) */
static const uint32_t dml_output_crd[1 * 2 * 4 * 6] = {
    0,  9,  1,  10, 2,  11, 18, 27, 19, 28, 20, 29, 3,  12, 4,  13, 5,  14, 21, 30, 22, 31, 23, 32,
    36, 45, 37, 46, 38, 47, 54, 63, 55, 64, 56, 65, 39, 48, 40, 49, 41, 50, 57, 66, 58, 67, 59, 68,
};
static const uint32_t dml_in_sizes[4] = {1, 8, 2, 3};
static const uint32_t dml_out_sizes[4] = {1, 2, 4, 6};

START_TEST(test_dml_depth_to_space_dcr_example)
{
    ds_example(CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT32, CLOPS_ORDER_DEPTH_COLUMN_ROW, 2, dml_in_sizes,
               dml_input, dml_out_sizes, dml_output_dcr, "DML DEPTH_TO_SPACE1 example 1 (DCR)");
}
END_TEST

START_TEST(test_dml_depth_to_space_crd_example)
{
    ds_example(CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT32, CLOPS_ORDER_COLUMN_ROW_DEPTH, 2, dml_in_sizes,
               dml_input, dml_out_sizes, dml_output_crd, "DML DEPTH_TO_SPACE1 example 2 (CRD)");
}
END_TEST

/* dml_space_to_depth.md: input (Sizes:{1, 2, 4, 6}) -> output (Sizes:{1, 8, 2, 3}),
 * which is the correct rule {N, C*b^2, H/b, W/b}; the page's text formula
 * {N, C/b^2, H*b, W*b} is a known error (spec README) and must be rejected. */
static const uint32_t dml_s2d_input[1 * 2 * 4 * 6] = {
    0,  18, 1,  19, 2,  20, 36, 54, 37, 55, 38, 56, 3,  21, 4,  22, 5,  23, 39, 57, 40, 58, 41, 59,
    9,  27, 10, 28, 11, 29, 45, 63, 46, 64, 47, 65, 12, 30, 13, 31, 14, 32, 48, 66, 49, 67, 50, 68,
};
static const uint32_t dml_s2d_output[1 * 8 * 2 * 3] = {
    0,  1,  2,  3,  4,  5,  9,  10, 11, 12, 13, 14, 18, 19, 20, 21, 22, 23, 27, 28, 29, 30, 31, 32,
    36, 37, 38, 39, 40, 41, 45, 46, 47, 48, 49, 50, 54, 55, 56, 57, 58, 59, 63, 64, 65, 66, 67, 68,
};

START_TEST(test_dml_space_to_depth_example)
{
    ds_example(CLOPS_OPERATOR_SPACE_TO_DEPTH, CLOPS_DATA_TYPE_UINT32, CLOPS_ORDER_DEPTH_COLUMN_ROW, 2, dml_out_sizes,
               dml_s2d_input, dml_in_sizes, dml_s2d_output, "DML SPACE_TO_DEPTH example");

    /* The erroneous published formula: {1, 2/4, 4*2, 6*2} = {1, 0, 8, 12}. */
    clops_tensor_desc tin = {CLOPS_DATA_TYPE_UINT32, {1, 2, 4, 6}, NULL};
    clops_tensor_desc tbad = {CLOPS_DATA_TYPE_UINT32, {1, 0, 8, 12}, NULL};
    clops_space_to_depth_desc sd = {&tin, &tbad, 2, CLOPS_ORDER_DEPTH_COLUMN_ROW};
    clops_operator_desc desc = {CLOPS_OPERATOR_SPACE_TO_DEPTH, &sd};
    clops_status st = clops_operator_validate(&desc);
    ck_assert_msg(st == CLOPS_ERROR_OUTPUT_SIZE_MISMATCH,
                  "SpaceToDepth 1x2x4x6 block 2 with the page's erroneous output sizes 1x0x8x12: got %s, want "
                  "CLOPS_ERROR_OUTPUT_SIZE_MISMATCH",
                  clops_status_name(st));
}
END_TEST

/* SpaceToDepth CRD is the inverse of DepthToSpace CRD: applied to DML example 2's
 * output it must give the example's input back (derived from the spec). */
START_TEST(test_dml_space_to_depth_crd_inverts_example)
{
    ds_example(CLOPS_OPERATOR_SPACE_TO_DEPTH, CLOPS_DATA_TYPE_UINT32, CLOPS_ORDER_COLUMN_ROW_DEPTH, 2, dml_out_sizes,
               dml_output_crd, dml_in_sizes, dml_input, "inverse of DML example 2");
}
END_TEST

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

START_TEST(test_onnx_depth_to_space_dcr_example)
{
    ds_example(CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_FLOAT32, CLOPS_ORDER_DEPTH_COLUMN_ROW, 2, dml_in_sizes,
               onnx_x, dml_out_sizes, onnx_y_dcr, "ONNX test_depthtospace_example (mode DCR)");
}
END_TEST

START_TEST(test_onnx_depth_to_space_crd_example)
{
    ds_example(CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_FLOAT32, CLOPS_ORDER_COLUMN_ROW_DEPTH, 2, dml_in_sizes,
               onnx_x, dml_out_sizes, onnx_y_crd, "ONNX test_depthtospace_crd_mode_example (mode CRD)");
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
        const uint32_t *sh = table_shapes[s];
        ds_case c = {op, t->type, order, b, {0, 0, 0, 0}, LAYOUT_PACKED, LAYOUT_PACKED};
        if (op == CLOPS_OPERATOR_DEPTH_TO_SPACE) {
            c.in_sizes[0] = sh[0], c.in_sizes[1] = sh[1] * b * b, c.in_sizes[2] = sh[2], c.in_sizes[3] = sh[3];
        } else {
            c.in_sizes[0] = sh[0], c.in_sizes[1] = sh[1], c.in_sizes[2] = sh[2] * b, c.in_sizes[3] = sh[3] * b;
        }
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

/* x -> first -> second -> must equal x. `d2s_first`: SpaceToDepth(DepthToSpace(x)),
 * else DepthToSpace(SpaceToDepth(x)). */
static void round_trip(clops_data_type type, clops_depth_space_order order, uint32_t b, const uint32_t xs[4],
                       int d2s_first, uint64_t seed, clops_context *only, unsigned paths)
{
    char label[256], a[64];
    snprintf(label, sizeof label, "round trip %s(%s(x)) %s %s block %u, x %s, seed %" PRIu64,
             d2s_first ? "SpaceToDepth" : "DepthToSpace", d2s_first ? "DepthToSpace" : "SpaceToDepth",
             tc_type(type)->name, tc_order_name(order), b, tc_shape_str(a, sizeof a, xs), seed);
    size_t es = tc_type(type)->size;
    clops_operator_type first = d2s_first ? CLOPS_OPERATOR_DEPTH_TO_SPACE : CLOPS_OPERATOR_SPACE_TO_DEPTH;
    clops_operator_type second = d2s_first ? CLOPS_OPERATOR_SPACE_TO_DEPTH : CLOPS_OPERATOR_DEPTH_TO_SPACE;
    uint32_t ms[4];
    ds_out_sizes(first, b, xs, ms);
    clops_tensor_desc tx = {type, {xs[0], xs[1], xs[2], xs[3]}, NULL};
    clops_tensor_desc tm = {type, {ms[0], ms[1], ms[2], ms[3]}, NULL};
    clops_depth_to_space_desc d1 = {&tx, &tm, b, order}, d2 = {&tm, &tx, b, order};
    clops_operator_desc o1 = {first, &d1}, o2 = {second, &d2};
    size_t xb = tc_tensor_bytes(&tx), mb = tc_tensor_bytes(&tm);

    unsigned char *x = tc_malloc(xb), *mid = tc_malloc(mb), *back = tc_malloc(xb);
    tc_fill_random(x, xb, seed);

    for (int bi = 0; bi < (only ? 1 : tc_backend_count()); bi++) {
        clops_context *ctx = only ? only : tc_backend(bi);
        const char *ctx_name = only ? "caller's out-of-order queue" : tc_backend_name(bi);
        clops_operator *op1 = tc_create(ctx, &o1, label, ctx_name);
        clops_operator *op2 = tc_create(ctx, &o2, label, ctx_name);
        char path[96];

        if (paths & TC_PATH_EXECUTE_HOST) {
            memset(back, 0, xb);
            clops_host_buffers h1 = {x, xb, NULL, 0, mid, mb}, h2 = {mid, mb, NULL, 0, back, xb};
            clops_status st = clops_operator_execute_host(op1, &h1);
            ck_assert_msg(st == CLOPS_SUCCESS, "%s [%s]: first execute_host: %s (%s)", label, ctx_name,
                          clops_status_name(st), clops_last_error_message());
            st = clops_operator_execute_host(op2, &h2);
            ck_assert_msg(st == CLOPS_SUCCESS, "%s [%s]: second execute_host: %s (%s)", label, ctx_name,
                          clops_status_name(st), clops_last_error_message());
            snprintf(path, sizeof path, "%s, execute_host twice", ctx_name);
            tc_check_bytes(back, x, xb, es, label, path);
        }

        if ((paths & TC_PATH_CL_MEM) && clops_context_backend(ctx) == CLOPS_BACKEND_OPENCL) {
            /* Device chain: upload -> op1 -> op2, each waiting on the previous event. */
            cl_command_queue q = clops_context_queue(ctx);
            cl_int err;
            cl_mem bx = clCreateBuffer(clops_context_cl_context(ctx), CL_MEM_READ_WRITE, xb, NULL, &err);
            ck_assert_msg(err == CL_SUCCESS, "%s: clCreateBuffer %d", label, (int)err);
            cl_mem bm = clCreateBuffer(clops_context_cl_context(ctx), CL_MEM_READ_WRITE, mb, NULL, &err);
            ck_assert_msg(err == CL_SUCCESS, "%s: clCreateBuffer %d", label, (int)err);
            cl_mem bb = clCreateBuffer(clops_context_cl_context(ctx), CL_MEM_READ_WRITE, xb, NULL, &err);
            ck_assert_msg(err == CL_SUCCESS, "%s: clCreateBuffer %d", label, (int)err);
            cl_event up = NULL, e1 = NULL, e2 = NULL;
            TC_CL_CHECK(clEnqueueWriteBuffer(q, bx, CL_FALSE, 0, xb, x, 0, NULL, &up), label);
            clops_buffers c1 = {bx, NULL, bm}, c2 = {bm, NULL, bb};
            clops_status st = clops_operator_execute(op1, &c1, 1, &up, &e1);
            ck_assert_msg(st == CLOPS_SUCCESS && e1, "%s [cl_mem chain]: first execute: %s (%s)", label,
                          clops_status_name(st), clops_last_error_message());
            st = clops_operator_execute(op2, &c2, 1, &e1, &e2);
            ck_assert_msg(st == CLOPS_SUCCESS && e2, "%s [cl_mem chain]: second execute: %s (%s)", label,
                          clops_status_name(st), clops_last_error_message());
            memset(back, 0, xb);
            TC_CL_CHECK(clEnqueueReadBuffer(q, bb, CL_TRUE, 0, xb, back, 1, &e2, NULL), label);
            tc_check_bytes(back, x, xb, es, label, "OpenCL device, cl_mem chain with events");
            clReleaseEvent(up);
            clReleaseEvent(e1);
            clReleaseEvent(e2);
            clReleaseMemObject(bx);
            clReleaseMemObject(bm);
            clReleaseMemObject(bb);
        }
        clops_operator_free(op1);
        clops_operator_free(op2);
    }
    free(x);
    free(mid);
    free(back);
}

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

START_TEST(test_strided)
{
    clops_data_type type = strided_types[_i % NUM_STRIDED_TYPES];
    clops_depth_space_order order = (clops_depth_space_order)((_i / NUM_STRIDED_TYPES) % 2);
    clops_operator_type op = (_i / (NUM_STRIDED_TYPES * 2)) == 0 ? CLOPS_OPERATOR_DEPTH_TO_SPACE
                                                                 : CLOPS_OPERATOR_SPACE_TO_DEPTH;
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
    for (size_t k = 0; k < sizeof combos / sizeof combos[0]; k++) {
        uint32_t b = combos[k].b;
        ds_case c = {op, type, order, b, {0, 0, 0, 0}, combos[k].in, combos[k].out};
        if (op == CLOPS_OPERATOR_DEPTH_TO_SPACE) {
            c.in_sizes[0] = 3, c.in_sizes[1] = 2 * b * b, c.in_sizes[2] = 3, c.in_sizes[3] = 5;
        } else {
            c.in_sizes[0] = 3, c.in_sizes[1] = 2, c.in_sizes[2] = 3 * b, c.in_sizes[3] = 5 * b;
        }
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
    clops_data_type type = strided_types[_i % NUM_STRIDED_TYPES];
    clops_depth_space_order order = (clops_depth_space_order)((_i / NUM_STRIDED_TYPES) % 2);
    clops_operator_type op = (_i / (NUM_STRIDED_TYPES * 2)) == 0 ? CLOPS_OPERATOR_DEPTH_TO_SPACE
                                                                 : CLOPS_OPERATOR_SPACE_TO_DEPTH;
    const uint32_t L = 2 * (uint32_t)(512 / tc_type(type)->size) + 5;
    for (uint32_t b = 2; b <= 3; b++) {
        /* Long rows, packed. */
        ds_case c = {op, type, order, b, {0, 0, 0, 0}, LAYOUT_PACKED, LAYOUT_PACKED};
        if (op == CLOPS_OPERATOR_DEPTH_TO_SPACE) {
            c.in_sizes[0] = 2, c.in_sizes[1] = b * b, c.in_sizes[2] = 2, c.in_sizes[3] = L;
        } else {
            c.in_sizes[0] = 2, c.in_sizes[1] = 1, c.in_sizes[2] = 2 * b, c.in_sizes[3] = L * b;
        }
        ds_run(&c, NULL, 12000u + 10u * (uint64_t)_i + b, 9);
        /* Many channels, NHWC on both sides (channels contiguous). */
        ds_case n = {op, type, order, b, {0, 0, 0, 0}, LAYOUT_NHWC, LAYOUT_NHWC};
        if (op == CLOPS_OPERATOR_DEPTH_TO_SPACE) {
            n.in_sizes[0] = 1, n.in_sizes[1] = L * b * b, n.in_sizes[2] = 2, n.in_sizes[3] = 3;
        } else {
            n.in_sizes[0] = 1, n.in_sizes[1] = L, n.in_sizes[2] = 2 * b, n.in_sizes[3] = 3 * b;
        }
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
    const uint32_t s_deep[4] = {1, 16, 1, 1}, s_flat[4] = {1, 1, 4, 4};
    for (int o = 0; o < 2; o++) {
        char w[160];
        snprintf(w, sizeof w, "%s bit patterns (identity permutation)", what);
        ds_example(CLOPS_OPERATOR_DEPTH_TO_SPACE, type, (clops_depth_space_order)o, 4, s_deep, in16, s_flat, in16, w);
        ds_example(CLOPS_OPERATOR_SPACE_TO_DEPTH, type, (clops_depth_space_order)o, 4, s_flat, in16, s_deep, in16, w);
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

START_TEST(test_bit_patterns_float32)
{
    bit_pattern_case(CLOPS_DATA_TYPE_FLOAT32, pat_f32, "FLOAT32 NaN payloads / sNaN / -0.0 / denormals");
}
END_TEST

START_TEST(test_bit_patterns_float64)
{
    bit_pattern_case(CLOPS_DATA_TYPE_FLOAT64, pat_f64, "FLOAT64 NaN payloads / sNaN / -0.0 / denormals");
}
END_TEST

START_TEST(test_bit_patterns_float16)
{
    bit_pattern_case(CLOPS_DATA_TYPE_FLOAT16, pat_f16, "FLOAT16 NaN payloads / sNaN / -0.0 / denormals");
}
END_TEST

START_TEST(test_bit_patterns_bfloat16)
{
    bit_pattern_case(CLOPS_DATA_TYPE_BFLOAT16, pat_bf16, "BFLOAT16 NaN payloads / sNaN / -0.0 / denormals");
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
                const uint32_t b = 2;
                uint32_t os[4];
                ds_out_sizes(cases[k].op, b, cases[k].in, os);
                char label[200], a[64], bb[64];
                snprintf(label, sizeof label, "empty %s %s %s block 2: %s -> %s", op_name(cases[k].op),
                         tc_type(types[t])->name, tc_order_name((clops_depth_space_order)o),
                         tc_shape_str(a, sizeof a, cases[k].in), tc_shape_str(bb, sizeof bb, os));
                clops_tensor_desc tin = {types[t], {cases[k].in[0], cases[k].in[1], cases[k].in[2], cases[k].in[3]},
                                         NULL};
                clops_tensor_desc tout = {types[t], {os[0], os[1], os[2], os[3]}, NULL};
                clops_depth_to_space_desc dd = {&tin, &tout, b, (clops_depth_space_order)o};
                clops_operator_desc desc = {cases[k].op, &dd};
                ck_assert_msg(tc_tensor_bytes(&tin) == 0 && tc_tensor_bytes(&tout) == 0, "%s: test bug", label);
                clops_status st = clops_operator_validate(&desc);
                ck_assert_msg(st == CLOPS_SUCCESS, "%s: validate gave %s (%s), want success", label,
                              clops_status_name(st), clops_last_error_message());

                unsigned char inb[64], init[64];
                tc_fill_random(inb, sizeof inb, 5);
                tc_fill_sentinel(init, sizeof init);

                /* NULL buffers of 0 bytes: fine, nothing to read or write. */
                tc_bufs none = {NULL, 0, NULL, 0, NULL, 0};
                tc_check_all_paths(&desc, &none, init, 1, label);

                /* Real buffers: the output must stay untouched. */
                tc_bufs some = {inb, sizeof inb, NULL, 0, init, sizeof init};
                tc_check_all_paths(&desc, &some, init, 1, label);
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

/* ---- events and queues ------------------------------------------------------------------------------------ */
/* The wait list is honoured: gated by a user event, the operator's event cannot
 * complete (and the output is not written) before the user event is set. */
START_TEST(test_wait_list_user_event)
{
    if (!tc_dev_ctx) {
        fprintf(stderr, "SKIP test_wait_list_user_event: no OpenCL device\n");
        return;
    }
    const char *label = "DepthToSpace UINT32 DML example 1 behind a user event";
    cl_context c = clops_context_cl_context(tc_dev_ctx);
    cl_command_queue q = clops_context_queue(tc_dev_ctx);
    clops_tensor_desc tin = {CLOPS_DATA_TYPE_UINT32, {1, 8, 2, 3}, NULL}, tout = {CLOPS_DATA_TYPE_UINT32, {1, 2, 4, 6}, NULL};
    clops_depth_to_space_desc dd = {&tin, &tout, 2, CLOPS_ORDER_DEPTH_COLUMN_ROW};
    clops_operator_desc desc = {CLOPS_OPERATOR_DEPTH_TO_SPACE, &dd};
    clops_operator *op = tc_create(tc_dev_ctx, &desc, label, "OpenCL device");
    uint32_t init[48], got[48];
    tc_fill_sentinel(init, sizeof init);
    cl_int err;
    cl_mem in = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof dml_input, (void *)(uintptr_t)dml_input,
                               &err);
    ck_assert_msg(err == CL_SUCCESS, "%s: clCreateBuffer %d", label, (int)err);
    cl_mem out = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof init, init, &err);
    ck_assert_msg(err == CL_SUCCESS, "%s: clCreateBuffer %d", label, (int)err);
    cl_event gate = clCreateUserEvent(c, &err);
    ck_assert_msg(err == CL_SUCCESS, "%s: clCreateUserEvent %d", label, (int)err);

    clops_buffers bufs = {in, NULL, out};
    cl_event done = NULL;
    clops_status st = clops_operator_execute(op, &bufs, 1, &gate, &done);
    ck_assert_msg(st == CLOPS_SUCCESS && done, "%s: execute: %s (%s)", label, clops_status_name(st),
                  clops_last_error_message());
    cl_int es = CL_COMPLETE;
    TC_CL_CHECK(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof es, &es, NULL), label);
    ck_assert_msg(es > CL_COMPLETE, "%s: the returned event has status %d before the user event was set", label, (int)es);
    TC_CL_CHECK(clSetUserEventStatus(gate, CL_COMPLETE), label);
    TC_CL_CHECK(clWaitForEvents(1, &done), label);
    TC_CL_CHECK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL), label);
    tc_check_bytes(got, dml_output_dcr, sizeof got, 4, label, "OpenCL device, cl_mem behind a user event");
    clReleaseEvent(done);
    clReleaseEvent(gate);
    clops_operator_free(op);

    /* An empty operator has nothing to run, but its event still follows the wait list. */
    const char *label0 = "empty SpaceToDepth 0x2x4x6 behind a user event";
    clops_tensor_desc tin0 = {CLOPS_DATA_TYPE_UINT32, {0, 2, 4, 6}, NULL}, tout0 = {CLOPS_DATA_TYPE_UINT32, {0, 8, 2, 3}, NULL};
    clops_space_to_depth_desc sd = {&tin0, &tout0, 2, CLOPS_ORDER_COLUMN_ROW_DEPTH};
    clops_operator_desc desc0 = {CLOPS_OPERATOR_SPACE_TO_DEPTH, &sd};
    op = tc_create(tc_dev_ctx, &desc0, label0, "OpenCL device");
    gate = clCreateUserEvent(c, &err);
    ck_assert_msg(err == CL_SUCCESS, "%s: clCreateUserEvent %d", label0, (int)err);
    clops_buffers none = {NULL, NULL, NULL};
    done = NULL;
    st = clops_operator_execute(op, &none, 1, &gate, &done);
    ck_assert_msg(st == CLOPS_SUCCESS && done, "%s: execute: %s (%s), event %p", label0, clops_status_name(st),
                  clops_last_error_message(), (void *)done);
    TC_CL_CHECK(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof es, &es, NULL), label0);
    ck_assert_msg(es > CL_COMPLETE, "%s: the returned event has status %d before the user event was set", label0,
                  (int)es);
    TC_CL_CHECK(clSetUserEventStatus(gate, CL_COMPLETE), label0);
    TC_CL_CHECK(clWaitForEvents(1, &done), label0);
    clReleaseEvent(done);
    clReleaseEvent(gate);
    clops_operator_free(op);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
}
END_TEST

/* A context around the caller's out-of-order queue: clops must order its own
 * commands (and the caller's wait list) with events. One test per path. */
static void out_of_order_cases(unsigned paths)
{
    clops_context *ooo = tc_ooo_context();
    if (!ooo) {
        fprintf(stderr, "SKIP out-of-order queue tests: no OpenCL device or no out-of-order queues\n");
        return;
    }
    for (int o = 0; o < 2; o++) {
        const clops_depth_space_order order = (clops_depth_space_order)o;
        ds_case d2s = {CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_FLOAT32, order, 2, {2, 12, 3, 5},
                       LAYOUT_PACKED, LAYOUT_PADDED};
        ds_run_on(&d2s, NULL, 17000u + (uint64_t)o, 5, ooo, paths);
        ds_case s2d = {CLOPS_OPERATOR_SPACE_TO_DEPTH, CLOPS_DATA_TYPE_UINT16, order, 3, {2, 2, 6, 9},
                       LAYOUT_NHWC, LAYOUT_PACKED};
        ds_run_on(&s2d, NULL, 17100u + (uint64_t)o, 5, ooo, paths);
        ds_case big = {CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_FLOAT32, order, 2, {2, 64, 64, 64},
                       LAYOUT_PACKED, LAYOUT_PACKED};
        ds_run_on(&big, NULL, 17200u + (uint64_t)o, 5, ooo, paths);
        ds_case empty = {CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_FLOAT32, order, 2, {1, 4, 0, 2},
                         LAYOUT_PACKED, LAYOUT_PACKED};
        ds_run_on(&empty, NULL, 0, 5, ooo, paths);
        const uint32_t xs[4] = {2, 8, 32, 48};
        round_trip(CLOPS_DATA_TYPE_FLOAT32, order, 2, xs, 1, 17300u + (uint64_t)o, ooo, paths);
    }
}

/* The same large operator run 20 times on the out-of-order queue: a missing
 * dependency between clops's own commands shows only when the queue happens to
 * reorder them, which a single run may not. */
static void out_of_order_repeat(unsigned paths)
{
    clops_context *ooo = tc_ooo_context();
    if (!ooo)
        return;
    const char *label = "DepthToSpace FLOAT32 DCR block 2, 2x64x128x128 -> 2x16x256x256, 20 runs on the caller's "
                        "out-of-order queue";
    clops_tensor_desc tin = {CLOPS_DATA_TYPE_FLOAT32, {2, 64, 128, 128}, NULL};
    clops_tensor_desc tout = {CLOPS_DATA_TYPE_FLOAT32, {2, 16, 256, 256}, NULL};
    clops_depth_to_space_desc dd = {&tin, &tout, 2, CLOPS_ORDER_DEPTH_COLUMN_ROW};
    clops_operator_desc desc = {CLOPS_OPERATOR_DEPTH_TO_SPACE, &dd};
    const size_t bytes = tc_tensor_bytes(&tin);
    unsigned char *x = tc_malloc(bytes), *want = tc_malloc(bytes), *init = tc_malloc(bytes), *out = tc_malloc(bytes);
    tc_fill_random(x, bytes, 18000u);
    tc_fill_sentinel(init, bytes);
    ds_case c = {CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_FLOAT32, CLOPS_ORDER_DEPTH_COLUMN_ROW, 2,
                 {2, 64, 128, 128}, LAYOUT_PACKED, LAYOUT_PACKED};
    ds_reference(&c, x, NULL, want, NULL, label);
    clops_operator *op = tc_create(ooo, &desc, label, "caller's out-of-order queue");
    tc_bufs b = {x, bytes, NULL, 0, init, bytes};
    for (int run = 0; run < 20; run++) {
        char path[96];
        clops_status st;
        if (paths & TC_PATH_EXECUTE_HOST) {
            snprintf(path, sizeof path, "out-of-order queue, execute_host, run %d of 20", run + 1);
            st = tc_run_execute_host(op, &b, out);
        } else {
            snprintf(path, sizeof path, "out-of-order queue, execute on cl_mem, run %d of 20", run + 1);
            st = tc_run_execute_cl(ooo, op, &b, out, label);
        }
        ck_assert_msg(st == CLOPS_SUCCESS, "%s [%s]: %s (%s)", label, path, clops_status_name(st),
                      clops_last_error_message());
        tc_check_bytes(out, want, bytes, 4, label, path);
    }
    clops_operator_free(op);
    free(x);
    free(want);
    free(init);
    free(out);
}

START_TEST(test_out_of_order_queue_cl_mem)
{
    out_of_order_cases(TC_PATH_CL_MEM);
    out_of_order_repeat(TC_PATH_CL_MEM);
}
END_TEST

START_TEST(test_out_of_order_queue_execute_host)
{
    out_of_order_repeat(TC_PATH_EXECUTE_HOST);
    out_of_order_cases(TC_PATH_EXECUTE_HOST);
}
END_TEST

static Suite *ops_suite(void)
{
    Suite *s = suite_create("ops");

    TCase *tc = tcase_create("examples");
    tcase_add_test(tc, test_dml_depth_to_space_dcr_example);
    tcase_add_test(tc, test_dml_depth_to_space_crd_example);
    tcase_add_test(tc, test_dml_space_to_depth_example);
    tcase_add_test(tc, test_dml_space_to_depth_crd_inverts_example);
    tcase_add_test(tc, test_onnx_depth_to_space_dcr_example);
    tcase_add_test(tc, test_onnx_depth_to_space_crd_example);
    suite_add_tcase(s, tc);

    tc = tcase_create("table");
    tcase_add_loop_test(tc, test_depth_to_space_table, 0, (int)TABLE_CASES);
    tcase_add_loop_test(tc, test_space_to_depth_table, 0, (int)TABLE_CASES);
    suite_add_tcase(s, tc);

    tc = tcase_create("round_trip");
    tcase_add_loop_test(tc, test_round_trip, 0, (int)RT_CASES);
    suite_add_tcase(s, tc);

    tc = tcase_create("strided");
    tcase_add_loop_test(tc, test_strided, 0, (int)STRIDED_CASES);
    suite_add_tcase(s, tc);

    tc = tcase_create("wide");
    tcase_add_loop_test(tc, test_wide, 0, (int)WIDE_CASES);
    suite_add_tcase(s, tc);

    tc = tcase_create("big_blocks");
    tcase_add_loop_test(tc, test_big_blocks, 0, BIG_BLOCK_CASES);
    suite_add_tcase(s, tc);

    tc = tcase_create("bit_patterns");
    tcase_add_test(tc, test_bit_patterns_float32);
    tcase_add_test(tc, test_bit_patterns_float64);
    tcase_add_test(tc, test_bit_patterns_float16);
    tcase_add_test(tc, test_bit_patterns_bfloat16);
    tcase_add_test(tc, test_bit_patterns_complex);
    suite_add_tcase(s, tc);

    tc = tcase_create("events");
    tcase_add_test(tc, test_wait_list_user_event);
    tcase_add_test(tc, test_out_of_order_queue_cl_mem);
    tcase_add_test(tc, test_out_of_order_queue_execute_host);
    suite_add_tcase(s, tc);

    tc = tcase_create("empty");
    tcase_add_test(tc, test_empty);
    suite_add_tcase(s, tc);

    tc = tcase_create("large");
    tcase_add_test(tc, test_large);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tc_main(ops_suite());
}
