/*
 * test_validation.c - every rejected descriptor of notes/SEMANTICS.md, one test
 * each, asserting the specific status from clops_operator_validate, from
 * clops_operator_create (host context, and the OpenCL context when there is
 * one) and from clops_host_run, and that clops_last_error_message() names the
 * offending value. Buffers at execution and the tables: test_validation_exec.c.
 */
#include "validation_fixture.h"

/* ---- helpers -------------------------------------------------------------------------------- */

/* Checks that `desc` is rejected with `want` by validate, create (every
 * backend: *out must be NULL) and clops_host_run, each time with a detail
 * message containing one of `needle`'s alternatives (NULL: only non-empty). */
static void expect_invalid(const clops_operator_desc *desc, clops_status want, const char *needle, const char *what)
{
    clops_status st = clops_operator_validate(desc);
    ASSERT_STATUS(st, want, what, "clops_operator_validate");
    check_message(what, "clops_operator_validate", needle);

    for (int bi = 0; bi < tc_backend_count(); bi++) {
        clops_operator *op = (clops_operator *)(uintptr_t)0x10;
        char call[96];
        snprintf(call, sizeof call, "clops_operator_create (%s)", tc_backend_name(bi));
        st = clops_operator_create(tc_backend(bi), desc, &op);
        ASSERT_STATUS(st, want, what, call);
        ck_assert_msg(op == NULL, "%s: %s failed but did not set *out to NULL", what, call);
        check_message(what, call, needle);
    }

    /* Validation comes before the buffers are looked at. */
    clops_host_buffers hb = {NULL, 0, NULL, 0, NULL, 0};
    st = clops_host_run(desc, &hb);
    ASSERT_STATUS(st, want, what, "clops_host_run");
    check_message(what, "clops_host_run", needle);
}

static void expect_valid(const clops_operator_desc *desc, const char *what)
{
    clops_status st = clops_operator_validate(desc);
    ASSERT_STATUS(st, CLOPS_SUCCESS, what, "clops_operator_validate");
}

static const uint32_t d2s_in[4] = {1, 8, 2, 3}, d2s_out[4] = {1, 2, 4, 6};

/* ---- 1. NULL arguments ------------------------------------------------------------------------ */
START_TEST(test_null_argument)
{
    clops_status st = clops_operator_validate(NULL);
    ASSERT_STATUS(st, CLOPS_ERROR_NULL_ARGUMENT, "desc NULL", "clops_operator_validate");
    check_message("desc NULL", "clops_operator_validate", NULL);

    ds_desc d;
    make_ds(&d, D2S, F32, d2s_in, d2s_out, 2, DCR);
    clops_operator_desc nodesc = {D2S, NULL};
    expect_invalid(&nodesc, CLOPS_ERROR_NULL_ARGUMENT, NULL, "DepthToSpace desc->desc NULL");
    nodesc.type = S2D;
    expect_invalid(&nodesc, CLOPS_ERROR_NULL_ARGUMENT, NULL, "SpaceToDepth desc->desc NULL");
    nodesc.type = CLOPS_OPERATOR_MAX_UNPOOLING;
    expect_invalid(&nodesc, CLOPS_ERROR_NULL_ARGUMENT, NULL, "MaxUnpooling desc->desc NULL");

    d.d.input = NULL;
    expect_invalid(&d.op, CLOPS_ERROR_NULL_ARGUMENT, NULL, "DepthToSpace input tensor NULL");
    d.d.input = &d.in;
    d.d.output = NULL;
    expect_invalid(&d.op, CLOPS_ERROR_NULL_ARGUMENT, NULL, "DepthToSpace output tensor NULL");
    make_ds(&d, S2D, F32, d2s_out, d2s_in, 2, DCR);
    d.d.input = NULL;
    expect_invalid(&d.op, CLOPS_ERROR_NULL_ARGUMENT, NULL, "SpaceToDepth input tensor NULL");

    up_desc u;
    make_up(&u, F32, CLOPS_DATA_TYPE_UINT32, up_in, up_out);
    u.d.input = NULL;
    expect_invalid(&u.op, CLOPS_ERROR_NULL_ARGUMENT, NULL, "MaxUnpooling input tensor NULL");
    u.d.input = &u.in;
    u.d.indices = NULL;
    expect_invalid(&u.op, CLOPS_ERROR_NULL_ARGUMENT, NULL, "MaxUnpooling indices tensor NULL");
    u.d.indices = &u.idx;
    u.d.output = NULL;
    expect_invalid(&u.op, CLOPS_ERROR_NULL_ARGUMENT, NULL, "MaxUnpooling output tensor NULL");

    /* NULL takes precedence over a bad type (check 1 before check 3). */
    make_up(&u, (clops_data_type)42, CLOPS_DATA_TYPE_UINT32, up_in, up_out);
    u.d.output = NULL;
    expect_invalid(&u.op, CLOPS_ERROR_NULL_ARGUMENT, NULL, "MaxUnpooling output NULL and input type 42");

    /* Other entry points. */
    make_ds(&d, D2S, F32, d2s_in, d2s_out, 2, DCR);
    clops_operator *op = NULL;
    st = clops_operator_create(NULL, &d.op, &op);
    ASSERT_STATUS(st, CLOPS_ERROR_NULL_ARGUMENT, "context NULL", "clops_operator_create");
    ck_assert_msg(op == NULL, "clops_operator_create(NULL context) set *out");
    st = clops_operator_create(tc_host_ctx, &d.op, NULL);
    ASSERT_STATUS(st, CLOPS_ERROR_NULL_ARGUMENT, "out NULL", "clops_operator_create");
    st = clops_operator_create(tc_host_ctx, NULL, &op);
    ASSERT_STATUS(st, CLOPS_ERROR_NULL_ARGUMENT, "desc NULL", "clops_operator_create");

    clops_host_buffers hb = {NULL, 0, NULL, 0, NULL, 0};
    st = clops_operator_execute_host(NULL, &hb);
    ASSERT_STATUS(st, CLOPS_ERROR_NULL_ARGUMENT, "operator NULL", "clops_operator_execute_host");
    st = clops_host_run(NULL, &hb);
    ASSERT_STATUS(st, CLOPS_ERROR_NULL_ARGUMENT, "desc NULL", "clops_host_run");
    st = clops_host_run(&d.op, NULL);
    ASSERT_STATUS(st, CLOPS_ERROR_NULL_ARGUMENT, "buffers NULL", "clops_host_run");
    clops_buffers cb = {NULL, NULL, NULL};
    st = clops_operator_execute(NULL, &cb, 0, NULL, NULL);
    ASSERT_STATUS(st, CLOPS_ERROR_NULL_ARGUMENT, "operator NULL", "clops_operator_execute");

    op = tc_create(tc_host_ctx, &d.op, "NULL buffers struct", "host");
    st = clops_operator_execute_host(op, NULL);
    ASSERT_STATUS(st, CLOPS_ERROR_NULL_ARGUMENT, "buffers NULL", "clops_operator_execute_host");
    clops_operator_free(op);

    st = clops_context_create(NULL);
    ASSERT_STATUS(st, CLOPS_ERROR_NULL_ARGUMENT, "out NULL", "clops_context_create");
    st = clops_context_create_host(NULL);
    ASSERT_STATUS(st, CLOPS_ERROR_NULL_ARGUMENT, "out NULL", "clops_context_create_host");
    st = clops_device_list(NULL, 0, NULL);
    ASSERT_STATUS(st, CLOPS_ERROR_NULL_ARGUMENT, "count NULL", "clops_device_list");
    st = clops_operator_get_info(NULL, NULL);
    ASSERT_STATUS(st, CLOPS_ERROR_NULL_ARGUMENT, "operator NULL", "clops_operator_get_info");

    /* Frees accept NULL. */
    clops_operator_free(NULL);
    clops_context_free(NULL);
}
END_TEST

/* ---- 2. operator type ---------------------------------------------------------------------------- */
START_TEST(test_invalid_operator_type)
{
    ds_desc d;
    make_ds(&d, (clops_operator_type)7, F32, d2s_in, d2s_out, 2, DCR);
    expect_invalid(&d.op, CLOPS_ERROR_INVALID_OPERATOR_TYPE, "7", "operator type 7");
    d.op.type = (clops_operator_type)0;
    expect_invalid(&d.op, CLOPS_ERROR_INVALID_OPERATOR_TYPE, "0", "operator type 0");
    d.op.type = (clops_operator_type)-3;
    expect_invalid(&d.op, CLOPS_ERROR_INVALID_OPERATOR_TYPE, "-3|4294967293", "operator type -3");
}
END_TEST

/* ---- 3. data types -------------------------------------------------------------------------------- */
START_TEST(test_unsupported_data_type)
{
    ds_desc d;
    make_ds(&d, D2S, (clops_data_type)42, d2s_in, d2s_out, 2, DCR);
    expect_invalid(&d.op, CLOPS_ERROR_UNSUPPORTED_DATA_TYPE, "42", "DepthToSpace input and output type 42");
    make_ds(&d, D2S, CLOPS_DATA_TYPE_UNKNOWN, d2s_in, d2s_out, 2, DCR);
    expect_invalid(&d.op, CLOPS_ERROR_UNSUPPORTED_DATA_TYPE, "UNKNOWN|0", "DepthToSpace type UNKNOWN (0)");
    make_ds(&d, D2S, (clops_data_type)12, d2s_in, d2s_out, 2, DCR);
    expect_invalid(&d.op, CLOPS_ERROR_UNSUPPORTED_DATA_TYPE, "12", "DepthToSpace type 12 (gap after INT64)");
    make_ds(&d, S2D, (clops_data_type)104, d2s_out, d2s_in, 2, DCR);
    expect_invalid(&d.op, CLOPS_ERROR_UNSUPPORTED_DATA_TYPE, "104", "SpaceToDepth type 104 (past COMPLEX128)");

    /* Output type unknown: an unsupported type (check 3) comes before the mismatch (check 4). */
    make_ds(&d, D2S, F32, d2s_in, d2s_out, 2, DCR);
    d.out.data_type = (clops_data_type)99;
    expect_invalid(&d.op, CLOPS_ERROR_UNSUPPORTED_DATA_TYPE, "99", "DepthToSpace FLOAT32 input, output type 99");

    up_desc u;
    make_up(&u, (clops_data_type)77, CLOPS_DATA_TYPE_UINT32, up_in, up_out);
    expect_invalid(&u.op, CLOPS_ERROR_UNSUPPORTED_DATA_TYPE, "77", "MaxUnpooling input type 77");
    make_up(&u, F32, CLOPS_DATA_TYPE_UINT32, up_in, up_out);
    u.out.data_type = (clops_data_type)55;
    expect_invalid(&u.op, CLOPS_ERROR_UNSUPPORTED_DATA_TYPE, "55", "MaxUnpooling output type 55");
}
END_TEST

START_TEST(test_unsupported_index_type)
{
    static const struct {
        clops_data_type t;
        const char *needle;
    } bad[] = {
        {CLOPS_DATA_TYPE_FLOAT32, "FLOAT32|1"}, {CLOPS_DATA_TYPE_INT32, "INT32|6"},
        {CLOPS_DATA_TYPE_UINT16, "UINT16|4"},   {CLOPS_DATA_TYPE_UINT8, "UINT8|5"},
        {CLOPS_DATA_TYPE_INT16, "INT16|7"},     {CLOPS_DATA_TYPE_INT8, "INT8|8"},
        {CLOPS_DATA_TYPE_FLOAT64, "FLOAT64|9"}, {CLOPS_DATA_TYPE_BOOL, "BOOL|100"},
        {CLOPS_DATA_TYPE_COMPLEX64, "COMPLEX64|102"}, {CLOPS_DATA_TYPE_UNKNOWN, "UNKNOWN|0"},
        {(clops_data_type)77, "77"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        up_desc u;
        make_up(&u, F32, bad[k].t, up_in, up_out);
        char what[96];
        snprintf(what, sizeof what, "MaxUnpooling indices type %d", (int)bad[k].t);
        expect_invalid(&u.op, CLOPS_ERROR_UNSUPPORTED_INDEX_TYPE, bad[k].needle, what);
    }
    /* The three index types are accepted. */
    const clops_data_type good[] = {CLOPS_DATA_TYPE_UINT32, CLOPS_DATA_TYPE_UINT64, CLOPS_DATA_TYPE_INT64};
    for (size_t k = 0; k < 3; k++) {
        up_desc u;
        make_up(&u, F32, good[k], up_in, up_out);
        expect_valid(&u.op, "MaxUnpooling with a supported index type");
    }
}
END_TEST

/* ---- 3. overflow ----------------------------------------------------------------------------------- */
START_TEST(test_size_overflow)
{
    const uint32_t M = UINT32_MAX;
    const uint32_t huge[4] = {M, M, M, M};
    ds_desc d;

    /* Element count: (2^32-1)^4 overflows uint64 (the brief's complex128 case). */
    make_ds(&d, D2S, CLOPS_DATA_TYPE_COMPLEX128, huge, huge, 1, DCR);
    expect_invalid(&d.op, CLOPS_ERROR_SIZE_OVERFLOW, "4294967295",
                   "DepthToSpace COMPLEX128 sizes {UINT32_MAX x4}");
    make_ds(&d, S2D, CLOPS_DATA_TYPE_COMPLEX128, huge, huge, 1, CRD);
    expect_invalid(&d.op, CLOPS_ERROR_SIZE_OVERFLOW, "4294967295",
                   "SpaceToDepth COMPLEX128 sizes {UINT32_MAX x4}");
    up_desc u;
    make_up(&u, CLOPS_DATA_TYPE_COMPLEX128, CLOPS_DATA_TYPE_INT64, huge, huge);
    expect_invalid(&u.op, CLOPS_ERROR_SIZE_OVERFLOW, "4294967295", "MaxUnpooling COMPLEX128 sizes {UINT32_MAX x4}");

    /* Byte count only: 2^60 elements fit uint64, 2^60 * 16 bytes do not. */
    const uint32_t s60[4] = {65536, 65536, 65536, 4096};
    const uint32_t s60_d2s[4] = {65536, 16384, 131072, 8192};
    make_ds(&d, D2S, CLOPS_DATA_TYPE_COMPLEX128, s60, s60_d2s, 2, DCR);
    expect_invalid(&d.op, CLOPS_ERROR_SIZE_OVERFLOW, NULL, "DepthToSpace COMPLEX128 2^60 elements (bytes overflow)");
    /* ... while the same sizes in UINT8 are valid (validate allocates nothing). */
    make_ds(&d, D2S, CLOPS_DATA_TYPE_UINT8, s60, s60_d2s, 2, DCR);
    expect_valid(&d.op, "DepthToSpace UINT8 2^60 elements (fits)");

    /* Strided span: 1 + 2^63 + 2^63 overflows. */
    const uint32_t small[4] = {1, 4, 2, 2}, small_out[4] = {1, 1, 4, 4};
    const uint64_t st_span[4] = {16, 4, (uint64_t)1 << 63, (uint64_t)1 << 63};
    make_ds(&d, D2S, F32, small, small_out, 2, DCR);
    d.in.strides = st_span;
    expect_invalid(&d.op, CLOPS_ERROR_SIZE_OVERFLOW, "9223372036854775808|span|stride",
                   "DepthToSpace input strides {16,4,2^63,2^63}: span overflows");

    /* Span fits (2^62 + 1 elements), span bytes do not (x 8). */
    const uint64_t st_bytes[4] = {0, 0, 0, (uint64_t)1 << 62};
    make_ds(&d, D2S, CLOPS_DATA_TYPE_FLOAT64, small, small_out, 2, DCR);
    d.in.strides = st_bytes;
    expect_invalid(&d.op, CLOPS_ERROR_SIZE_OVERFLOW, NULL, "DepthToSpace FLOAT64 input W stride 2^62: span bytes overflow");

    /* On the output: overflow, not overlap, is reported (same check 3, overflow first). */
    const uint64_t out_span[4] = {16, 16, (uint64_t)1 << 63, (uint64_t)1 << 63};
    make_ds(&d, D2S, F32, small, small_out, 2, DCR);
    d.out.strides = out_span;
    expect_invalid(&d.op, CLOPS_ERROR_SIZE_OVERFLOW, NULL, "DepthToSpace output strides {16,16,2^63,2^63}");

    /* On the indices tensor. */
    make_up(&u, F32, CLOPS_DATA_TYPE_UINT64, up_in, up_out);
    const uint64_t idx_span[4] = {0, (uint64_t)1 << 62, (uint64_t)1 << 62, 1};
    u.idx.strides = idx_span;
    expect_invalid(&u.op, CLOPS_ERROR_SIZE_OVERFLOW, NULL, "MaxUnpooling UINT64 indices strides {0,2^62,2^62,1}");
}
END_TEST

/* ---- 3. overlapping output ------------------------------------------------------------------------- */
START_TEST(test_overlapping_output)
{
    ds_desc d;
    /* Zero stride on H (size 4) of the output. */
    const uint64_t zero_h[4] = {48, 24, 0, 1};
    make_ds(&d, D2S, F32, d2s_in, d2s_out, 2, DCR);
    d.out.strides = zero_h;
    expect_invalid(&d.op, CLOPS_ERROR_OVERLAPPING_OUTPUT, NULL, "DepthToSpace output strides {48,24,0,1}");

    /* Interleaved: H stride 5 < W span 6, so (h=1, w=0) and (h=0, w=5) share an address. */
    const uint64_t inter[4] = {48, 24, 5, 1};
    d.out.strides = inter;
    expect_invalid(&d.op, CLOPS_ERROR_OVERLAPPING_OUTPUT, "5", "DepthToSpace output strides {48,24,5,1}");

    /* Equal strides on C and W. */
    const uint64_t same[4] = {48, 1, 12, 1};
    d.out.strides = same;
    expect_invalid(&d.op, CLOPS_ERROR_OVERLAPPING_OUTPUT, NULL, "DepthToSpace output strides {48,1,12,1}");

    /* Channel plane overlapping the next row block: C stride 23 < H*W span 24. */
    const uint64_t chan[4] = {48, 23, 6, 1};
    d.out.strides = chan;
    expect_invalid(&d.op, CLOPS_ERROR_OVERLAPPING_OUTPUT, "23", "DepthToSpace output strides {48,23,6,1}");

    /* SpaceToDepth output, batch overlapping channels: N=2, N stride 5 < C span. */
    const uint32_t s_in[4] = {2, 2, 4, 6}, s_out[4] = {2, 8, 2, 3};
    const uint64_t batch[4] = {5, 6, 3, 1};
    make_ds(&d, S2D, F32, s_in, s_out, 2, CRD);
    d.out.strides = batch;
    expect_invalid(&d.op, CLOPS_ERROR_OVERLAPPING_OUTPUT, NULL, "SpaceToDepth output strides {5,6,3,1}, N=2");

    /* MaxUnpooling output with a zero stride on W. */
    up_desc u;
    make_up(&u, F32, CLOPS_DATA_TYPE_INT64, up_in, up_out);
    const uint64_t zero_w[4] = {48, 16, 4, 0};
    u.out.strides = zero_w;
    expect_invalid(&u.op, CLOPS_ERROR_OVERLAPPING_OUTPUT, NULL, "MaxUnpooling output strides {48,16,4,0}");

    /* Valid: zero stride on a size-1 dimension, permuted (NHWC) strides, gaps,
     * and overlapping strides on an input (broadcast). */
    const uint64_t zero_n[4] = {0, 24, 6, 1};
    make_ds(&d, D2S, F32, d2s_in, d2s_out, 2, DCR);
    d.out.strides = zero_n;
    expect_valid(&d.op, "output N=1 with stride 0");
    const uint64_t nhwc[4] = {48, 1, 12, 2};
    d.out.strides = nhwc;
    expect_valid(&d.op, "output NHWC strides {48,1,12,2}");
    const uint64_t gaps[4] = {1000, 100, 10, 1};
    d.out.strides = gaps;
    expect_valid(&d.op, "output strides with gaps {1000,100,10,1}");
    d.out.strides = NULL;
    const uint64_t bcast[4] = {0, 0, 0, 0};
    d.in.strides = bcast;
    expect_valid(&d.op, "input all-zero strides (broadcast scalar)");
    d.in.strides = inter;
    expect_valid(&d.op, "input interleaved strides");
}
END_TEST

/* ---- 4. type mismatch -------------------------------------------------------------------------------- */
START_TEST(test_data_type_mismatch)
{
    ds_desc d;
    make_ds(&d, D2S, F32, d2s_in, d2s_out, 2, DCR);
    d.out.data_type = CLOPS_DATA_TYPE_FLOAT16;
    expect_invalid(&d.op, CLOPS_ERROR_DATA_TYPE_MISMATCH, "FLOAT16|2", "DepthToSpace FLOAT32 -> FLOAT16");
    make_ds(&d, S2D, CLOPS_DATA_TYPE_UINT64, d2s_out, d2s_in, 2, CRD);
    d.out.data_type = CLOPS_DATA_TYPE_INT64;
    expect_invalid(&d.op, CLOPS_ERROR_DATA_TYPE_MISMATCH, "INT64|11", "SpaceToDepth UINT64 -> INT64");
    up_desc u;
    make_up(&u, CLOPS_DATA_TYPE_INT8, CLOPS_DATA_TYPE_UINT32, up_in, up_out);
    u.out.data_type = CLOPS_DATA_TYPE_BOOL;
    expect_invalid(&u.op, CLOPS_ERROR_DATA_TYPE_MISMATCH, "BOOL|100", "MaxUnpooling INT8 -> BOOL");
    /* The indices type is not compared with the data type. */
    make_up(&u, CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_INT64, up_in, up_out);
    expect_valid(&u.op, "MaxUnpooling UINT8 data with INT64 indices");
}
END_TEST

/* ---- 5. block size and order ------------------------------------------------------------------------- */
/* DepthToSpace and SpaceToDepth descriptors that must be rejected with `want`, each
 * differing from a valid one in its block size, order, channels, spatial sizes or
 * output sizes; one test per status below runs its rows in this order. */
typedef struct ds_reject {
    clops_operator_type op;
    clops_data_type type;
    uint32_t in[4], out[4], block;
    clops_depth_space_order order;
    clops_status want;
    const char *needle, *what;
} ds_reject;

static const ds_reject ds_rejects[] = {
    {D2S, F32, {1, 8, 2, 3}, {1, 8, 2, 3}, 0, DCR, CLOPS_ERROR_INVALID_BLOCK_SIZE,
     "0", "DepthToSpace block size 0"},
    {S2D, F32, {1, 8, 2, 3}, {1, 8, 2, 3}, 0, CRD, CLOPS_ERROR_INVALID_BLOCK_SIZE,
     "0", "SpaceToDepth block size 0"},
    {D2S, F32, {1, 8, 2, 3}, {1, 2, 4, 6}, 2, (clops_depth_space_order)2, CLOPS_ERROR_INVALID_ORDER,
     "2", "DepthToSpace order 2"},
    {S2D, F32, {1, 2, 4, 6}, {1, 8, 2, 3}, 2, (clops_depth_space_order)7, CLOPS_ERROR_INVALID_ORDER,
     "7", "SpaceToDepth order 7"},
    {S2D, F32, {1, 2, 4, 6}, {1, 8, 2, 3}, 2, (clops_depth_space_order)-1, CLOPS_ERROR_INVALID_ORDER,
     "-1|4294967295", "SpaceToDepth order -1"},
    {D2S, F32, {1, 7, 2, 3}, {1, 1, 4, 6}, 2, DCR, CLOPS_ERROR_CHANNELS_NOT_DIVISIBLE,
     "7", "DepthToSpace 7 channels, block 2"},
    {D2S, F32, {1, 18, 2, 3}, {1, 1, 8, 12}, 4, CRD, CLOPS_ERROR_CHANNELS_NOT_DIVISIBLE,
     "18", "DepthToSpace 18 channels, block 4"},
    {S2D, F32, {1, 2, 5, 6}, {1, 8, 2, 3}, 2, DCR, CLOPS_ERROR_SPATIAL_NOT_DIVISIBLE,
     "5", "SpaceToDepth height 5, block 2"},
    {S2D, F32, {1, 2, 4, 7}, {1, 8, 2, 3}, 2, CRD, CLOPS_ERROR_SPATIAL_NOT_DIVISIBLE,
     "7", "SpaceToDepth width 7, block 2"},
    {S2D, F32, {1, 1, 9, 9}, {1, 1, 9, 9}, 2, DCR, CLOPS_ERROR_SPATIAL_NOT_DIVISIBLE,
     "9", "SpaceToDepth 9x9, block 2"},
    {D2S, F32, {2, 8, 2, 3}, {3, 2, 4, 6}, 2, DCR, CLOPS_ERROR_OUTPUT_SIZE_MISMATCH,
     "3", "DepthToSpace 2x8x2x3 b2 -> N 3 (want 2)"},
    {D2S, F32, {2, 8, 2, 3}, {2, 9, 4, 6}, 2, CRD, CLOPS_ERROR_OUTPUT_SIZE_MISMATCH,
     "9", "DepthToSpace 2x8x2x3 b2 -> C 9 (want 2)"},
    {D2S, F32, {2, 8, 2, 3}, {2, 2, 13, 6}, 2, DCR, CLOPS_ERROR_OUTPUT_SIZE_MISMATCH,
     "13", "DepthToSpace 2x8x2x3 b2 -> H 13 (want 4)"},
    {D2S, F32, {2, 8, 2, 3}, {2, 2, 4, 17}, 2, CRD, CLOPS_ERROR_OUTPUT_SIZE_MISMATCH,
     "17", "DepthToSpace 2x8x2x3 b2 -> W 17 (want 6)"},
    {D2S, F32, {1, 8, 2, 3}, {1, 8, 2, 3}, 2, DCR, CLOPS_ERROR_OUTPUT_SIZE_MISMATCH,
     "8|2", "DepthToSpace output = input sizes"},
    {S2D, F32, {2, 2, 4, 6}, {5, 8, 2, 3}, 2, CRD, CLOPS_ERROR_OUTPUT_SIZE_MISMATCH,
     "5", "SpaceToDepth 2x2x4x6 b2 -> N 5 (want 2)"},
    {S2D, F32, {2, 2, 4, 6}, {2, 11, 2, 3}, 2, DCR, CLOPS_ERROR_OUTPUT_SIZE_MISMATCH,
     "11", "SpaceToDepth 2x2x4x6 b2 -> C 11 (want 8)"},
    {S2D, F32, {2, 2, 4, 6}, {2, 8, 19, 3}, 2, CRD, CLOPS_ERROR_OUTPUT_SIZE_MISMATCH,
     "19", "SpaceToDepth 2x2x4x6 b2 -> H 19 (want 2)"},
    {S2D, F32, {2, 2, 4, 6}, {2, 8, 2, 23}, 2, DCR, CLOPS_ERROR_OUTPUT_SIZE_MISMATCH,
     "23", "SpaceToDepth 2x2x4x6 b2 -> W 23 (want 3)"},
    /* the erroneous published S2D formula {N, C/b^2, H*b, W*b} */
    {S2D, F32, {1, 8, 4, 6}, {1, 2, 8, 12}, 2, CRD, CLOPS_ERROR_OUTPUT_SIZE_MISMATCH,
     "2|8|12", "SpaceToDepth with DepthToSpace's output rule"},
};

/* expect_invalid for every row of ds_rejects whose status is `want`. */
static void expect_ds_rejects(clops_status want)
{
    int rows = 0;
    for (size_t k = 0; k < sizeof ds_rejects / sizeof ds_rejects[0]; k++) {
        const ds_reject *c = &ds_rejects[k];
        if (c->want != want)
            continue;
        ds_desc d;
        make_ds(&d, c->op, c->type, c->in, c->out, c->block, c->order);
        expect_invalid(&d.op, c->want, c->needle, c->what);
        rows++;
    }
    ck_assert_msg(rows > 0, "no descriptor in ds_rejects is meant to give %s", clops_status_name(want));
}

START_TEST(test_invalid_block_size)
{
    expect_ds_rejects(CLOPS_ERROR_INVALID_BLOCK_SIZE);
}
END_TEST

/* Huge block sizes: b*b and H*b must be computed in 64 bits; a clean error, no crash. */
START_TEST(test_huge_block_size)
{
    const uint32_t M = UINT32_MAX;
    ds_desc d;

    /* b^2 = (2^32-1)^2; in 32 bits it would be 1 and 4 % 1 == 0. */
    const uint32_t in4[4] = {1, 4, 2, 2}, out4[4] = {1, 4, 2, 2};
    make_ds(&d, D2S, F32, in4, out4, M, DCR);
    expect_invalid(&d.op, CLOPS_ERROR_CHANNELS_NOT_DIVISIBLE, "4294967295|4",
                   "DepthToSpace C=4 block UINT32_MAX");

    /* b = 65536: b^2 = 2^32, 0 in 32 bits (division by zero). */
    const uint32_t out65[4] = {1, 0, 131072, 131072};
    make_ds(&d, D2S, F32, in4, out65, 65536, CRD);
    expect_invalid(&d.op, CLOPS_ERROR_CHANNELS_NOT_DIVISIBLE, "65536|4294967296|4", "DepthToSpace C=4 block 65536");

    /* C = 0 is divisible by anything: block 65536 on an empty tensor is valid... */
    const uint32_t in0[4] = {1, 0, 1, 1}, out0[4] = {1, 0, 65536, 65536};
    make_ds(&d, D2S, F32, in0, out0, 65536, DCR);
    expect_valid(&d.op, "DepthToSpace 1x0x1x1 block 65536 -> 1x0x65536x65536");
    /* ... and runs (nothing to do) on every backend. */
    for (int bi = 0; bi < tc_backend_count(); bi++) {
        clops_operator *op = tc_create(tc_backend(bi), &d.op, "DepthToSpace empty, block 65536", tc_backend_name(bi));
        clops_host_buffers hb = {NULL, 0, NULL, 0, NULL, 0};
        clops_status st = clops_operator_execute_host(op, &hb);
        ASSERT_STATUS(st, CLOPS_SUCCESS, "DepthToSpace empty, block 65536", tc_backend_name(bi));
        clops_operator_free(op);
    }
    /* ... block UINT32_MAX too: output H = W = UINT32_MAX still fits. */
    const uint32_t outM[4] = {1, 0, M, M};
    make_ds(&d, D2S, F32, in0, outM, M, CRD);
    expect_valid(&d.op, "DepthToSpace 1x0x1x1 block UINT32_MAX -> 1x0xUINT32_MAXxUINT32_MAX");

    /* H*b overflows uint32: input H = 2^31, b = 2 -> H*b = 2^32 (0 in 32 bits). */
    const uint32_t inH[4] = {1, 4, 1u << 31, 2}, outH[4] = {1, 1, 0, 4};
    make_ds(&d, D2S, CLOPS_DATA_TYPE_UINT8, inH, outH, 2, DCR);
    expect_invalid(&d.op, CLOPS_ERROR_OUTPUT_SIZE_MISMATCH, NULL,
                   "DepthToSpace 1x4x2^31x2 block 2: output H 2^32 does not fit (given 0)");

    /* SpaceToDepth: H, W not divisible by UINT32_MAX. */
    const uint32_t in8[4] = {1, 1, 8, 8}, out8[4] = {1, 1, 8, 8};
    make_ds(&d, S2D, F32, in8, out8, M, DCR);
    expect_invalid(&d.op, CLOPS_ERROR_SPATIAL_NOT_DIVISIBLE, "8|4294967295", "SpaceToDepth 1x1x8x8 block UINT32_MAX");

    /* SpaceToDepth H = W = b = UINT32_MAX: output C = b^2 does not fit uint32
     * (in 32 bits it would be 1, matching the given {1,1,1,1}). */
    const uint32_t inM[4] = {1, 1, M, M}, outM1[4] = {1, 1, 1, 1};
    make_ds(&d, S2D, CLOPS_DATA_TYPE_UINT8, inM, outM1, M, DCR);
    expect_invalid(&d.op, CLOPS_ERROR_OUTPUT_SIZE_MISMATCH, NULL,
                   "SpaceToDepth UINT8 1x1xUINT32_MAXxUINT32_MAX block UINT32_MAX: output C = b^2 cannot fit");

    /* SpaceToDepth 1x0xMxM, block M: output 1x0x1x1 is valid (empty) and runs everywhere. */
    const uint32_t inZ[4] = {1, 0, M, M}, outZ[4] = {1, 0, 1, 1};
    make_ds(&d, S2D, CLOPS_DATA_TYPE_COMPLEX128, inZ, outZ, M, CRD);
    expect_valid(&d.op, "SpaceToDepth 1x0xUINT32_MAXxUINT32_MAX block UINT32_MAX -> 1x0x1x1");
    for (int bi = 0; bi < tc_backend_count(); bi++) {
        clops_operator *op = tc_create(tc_backend(bi), &d.op, "SpaceToDepth empty, block UINT32_MAX",
                                       tc_backend_name(bi));
        clops_host_buffers hb = {NULL, 0, NULL, 0, NULL, 0};
        clops_status st = clops_operator_execute_host(op, &hb);
        ASSERT_STATUS(st, CLOPS_SUCCESS, "SpaceToDepth empty, block UINT32_MAX", tc_backend_name(bi));
        clops_operator_free(op);
    }

    /* SpaceToDepth C*b^2 = 2^32: 0 in 32 bits. */
    const uint32_t inC[4] = {1, 1u << 30, 2, 2}, outC[4] = {1, 0, 1, 1};
    make_ds(&d, S2D, CLOPS_DATA_TYPE_UINT8, inC, outC, 2, CRD);
    expect_invalid(&d.op, CLOPS_ERROR_OUTPUT_SIZE_MISMATCH, NULL,
                   "SpaceToDepth 1x2^30x2x2 block 2: output C 2^32 does not fit (given 0)");
}
END_TEST

/* The output rule must not wrap in 64 bits either. SpaceToDepth on an empty
 * input (H = 0, so no element count is formed) with b = UINT32_MAX: the rule's
 * output C = 2^31 * b^2 is about 2^95, which no uint32 holds, so every output
 * is wrong; in wrapping 64-bit arithmetic it is exactly 2^31, the C given here. */
START_TEST(test_output_rule_wraps_64_bits)
{
    const uint32_t M = UINT32_MAX;
    ds_desc d;
    const uint32_t inE[4] = {1, 1u << 31, 0, M}, outE[4] = {1, 1u << 31, 0, 1};
    make_ds(&d, S2D, F32, inE, outE, M, DCR);
    expect_invalid(&d.op, CLOPS_ERROR_OUTPUT_SIZE_MISMATCH, NULL,
                   "SpaceToDepth 1x2^31x0xUINT32_MAX block UINT32_MAX -> 1x2^31x0x1: C*b^2 wraps 64 bits to 2^31");
}
END_TEST

START_TEST(test_invalid_order)
{
    expect_ds_rejects(CLOPS_ERROR_INVALID_ORDER);
}
END_TEST

/* ---- 5. shape rules ------------------------------------------------------------------------------------- */
START_TEST(test_channels_not_divisible)
{
    expect_ds_rejects(CLOPS_ERROR_CHANNELS_NOT_DIVISIBLE);
}
END_TEST

START_TEST(test_spatial_not_divisible)
{
    expect_ds_rejects(CLOPS_ERROR_SPATIAL_NOT_DIVISIBLE);
}
END_TEST

START_TEST(test_output_size_mismatch)
{
    expect_ds_rejects(CLOPS_ERROR_OUTPUT_SIZE_MISMATCH);
}
END_TEST

/* ---- 6. MaxUnpooling shapes --------------------------------------------------------------------------------- */
START_TEST(test_indices_size_mismatch)
{
    up_desc u;
    const uint32_t in[4] = {1, 3, 4, 4}, out[4] = {1, 3, 8, 8};
    static const uint32_t bad[][4] = {{1, 3, 4, 9}, {1, 3, 11, 4}, {1, 13, 4, 4}, {6, 3, 4, 4}};
    static const char *needle[] = {"9", "11", "13", "6"};
    for (int k = 0; k < 4; k++) {
        make_up(&u, F32, CLOPS_DATA_TYPE_UINT32, in, out);
        memcpy(u.idx.sizes, bad[k], sizeof u.idx.sizes);
        char what[96];
        snprintf(what, sizeof what, "MaxUnpooling input 1x3x4x4, indices %ux%ux%ux%u", bad[k][0], bad[k][1], bad[k][2],
                 bad[k][3]);
        expect_invalid(&u.op, CLOPS_ERROR_INDICES_SIZE_MISMATCH, needle[k], what);
    }
}
END_TEST

START_TEST(test_batch_channel_mismatch)
{
    up_desc u;
    const uint32_t in[4] = {1, 3, 4, 4};
    const uint32_t outn[4] = {6, 3, 8, 8}, outc[4] = {1, 5, 8, 8};
    make_up(&u, F32, CLOPS_DATA_TYPE_UINT64, in, outn);
    expect_invalid(&u.op, CLOPS_ERROR_BATCH_CHANNEL_MISMATCH, "6", "MaxUnpooling input N 1, output N 6");
    make_up(&u, F32, CLOPS_DATA_TYPE_UINT64, in, outc);
    expect_invalid(&u.op, CLOPS_ERROR_BATCH_CHANNEL_MISMATCH, "5", "MaxUnpooling input C 3, output C 5");

    /* Output H and W are free. */
    const uint32_t small[4] = {1, 3, 2, 1}, big[4] = {1, 3, 100, 3};
    make_up(&u, F32, CLOPS_DATA_TYPE_UINT64, in, small);
    expect_valid(&u.op, "MaxUnpooling 1x3x4x4 -> 1x3x2x1 (output smaller than input)");
    make_up(&u, F32, CLOPS_DATA_TYPE_UINT64, in, big);
    expect_valid(&u.op, "MaxUnpooling 1x3x4x4 -> 1x3x100x3");
}
END_TEST

/* ---- 6. the output-size rule, public (clops_operator_output_sizes) ----------------------------------- */

/* `d`'s output sizes must be `want`, written whatever the output descriptor
 * holds (here NULL), and validation must accept them as the output. */
static void expect_output_sizes(ds_desc *d, const uint32_t want[4], const char *what)
{
    uint32_t got[4] = {7, 7, 7, 7};
    d->d.output = NULL;
    clops_status st = clops_operator_output_sizes(&d->op, got);
    ASSERT_STATUS(st, CLOPS_SUCCESS, what, "clops_operator_output_sizes");
    for (int k = 0; k < 4; k++)
        ck_assert_msg(got[k] == want[k], "%s: output size %d is %u, want %u", what, k, got[k], want[k]);
    memcpy(d->out.sizes, got, sizeof d->out.sizes);
    d->d.output = &d->out;
    expect_valid(&d->op, what);
}

/* `d`'s output sizes are refused with `want` (message containing `needle`)
 * and `sizes` is left as it was. */
static void expect_no_output_sizes(const clops_operator_desc *desc, clops_status want, const char *needle,
                                   const char *what)
{
    uint32_t got[4] = {7, 7, 7, 7};
    clops_status st = clops_operator_output_sizes(desc, got);
    ASSERT_STATUS(st, want, what, "clops_operator_output_sizes");
    check_message(what, "clops_operator_output_sizes", needle);
    for (int k = 0; k < 4; k++)
        ck_assert_msg(got[k] == 7, "%s: a failed call wrote output size %d (%u)", what, k, got[k]);
}

START_TEST(test_output_sizes)
{
    const uint32_t none[4] = {0, 0, 0, 0};
    ds_desc d;
    make_ds(&d, D2S, F32, d2s_in, none, 2, DCR);
    expect_output_sizes(&d, d2s_out, "DepthToSpace 1x8x2x3 block 2");
    make_ds(&d, S2D, F32, d2s_out, none, 2, CRD);
    expect_output_sizes(&d, d2s_in, "SpaceToDepth 1x2x4x6 block 2");
    const uint32_t in3[4] = {2, 18, 5, 7}, out3[4] = {2, 2, 15, 21};
    make_ds(&d, D2S, CLOPS_DATA_TYPE_UINT8, in3, none, 3, CRD);
    expect_output_sizes(&d, out3, "DepthToSpace 2x18x5x7 block 3");
    make_ds(&d, S2D, CLOPS_DATA_TYPE_UINT8, out3, none, 3, DCR);
    expect_output_sizes(&d, in3, "SpaceToDepth 2x2x15x21 block 3");
    const uint32_t empty[4] = {0, 4, 3, 5}, empty_out[4] = {0, 1, 6, 10};
    make_ds(&d, D2S, F32, empty, none, 2, DCR);
    expect_output_sizes(&d, empty_out, "DepthToSpace 0x4x3x5 block 2 (empty)");
    const uint32_t one[4] = {1, 5, 3, 4};
    make_ds(&d, D2S, F32, one, none, 1, DCR);
    expect_output_sizes(&d, one, "DepthToSpace block 1");

    /* The rules, as validation reports them. */
    const uint32_t in7[4] = {1, 7, 2, 3}, inh[4] = {1, 2, 5, 6};
    make_ds(&d, D2S, F32, in7, none, 2, DCR);
    expect_no_output_sizes(&d.op, CLOPS_ERROR_CHANNELS_NOT_DIVISIBLE, "7", "DepthToSpace 7 channels, block 2");
    make_ds(&d, S2D, F32, inh, none, 2, DCR);
    expect_no_output_sizes(&d.op, CLOPS_ERROR_SPATIAL_NOT_DIVISIBLE, "5", "SpaceToDepth height 5, block 2");
    make_ds(&d, D2S, F32, d2s_in, none, 0, DCR);
    expect_no_output_sizes(&d.op, CLOPS_ERROR_INVALID_BLOCK_SIZE, "0", "DepthToSpace block 0");
    make_ds(&d, D2S, F32, d2s_in, none, 2, (clops_depth_space_order)5);
    expect_no_output_sizes(&d.op, CLOPS_ERROR_INVALID_ORDER, "5", "DepthToSpace order 5");
    make_ds(&d, D2S, CLOPS_DATA_TYPE_UNKNOWN, d2s_in, none, 2, DCR);
    expect_no_output_sizes(&d.op, CLOPS_ERROR_UNSUPPORTED_DATA_TYPE, NULL, "DepthToSpace input type UNKNOWN");

    /* Sizes no uint32 holds. */
    const uint32_t wide[4] = {1, 4, 3, 1u << 31}, deep[4] = {1, 1u << 20, 128, 128};
    make_ds(&d, D2S, CLOPS_DATA_TYPE_UINT8, wide, none, 2, DCR);
    expect_no_output_sizes(&d.op, CLOPS_ERROR_SIZE_OVERFLOW, "4294967296", "DepthToSpace width 2^31 block 2");
    make_ds(&d, S2D, CLOPS_DATA_TYPE_UINT8, deep, none, 128, DCR);
    expect_no_output_sizes(&d.op, CLOPS_ERROR_SIZE_OVERFLOW, "17179869184", "SpaceToDepth 2^20 channels block 128");
    const uint32_t M = UINT32_MAX, inE[4] = {1, 1u << 31, 0, M};
    make_ds(&d, S2D, F32, inE, none, M, DCR);
    expect_no_output_sizes(&d.op, CLOPS_ERROR_OUTPUT_SIZE_MISMATCH, "overflows 64 bits",
                           "SpaceToDepth C*b^2 past 2^64");

    /* MaxUnpooling's output sizes are the caller's; NULL arguments; unknown types. */
    up_desc u;
    make_up(&u, F32, CLOPS_DATA_TYPE_INT64, up_in, up_out);
    expect_no_output_sizes(&u.op, CLOPS_ERROR_OUTPUT_NOT_DERIVED, "caller", "MaxUnpooling");
    expect_no_output_sizes(NULL, CLOPS_ERROR_NULL_ARGUMENT, NULL, "NULL descriptor");
    make_ds(&d, D2S, F32, d2s_in, none, 2, DCR);
    d.d.input = NULL;
    expect_no_output_sizes(&d.op, CLOPS_ERROR_NULL_ARGUMENT, "input", "NULL input");
    make_ds(&d, D2S, F32, d2s_in, none, 2, DCR);
    d.op.type = (clops_operator_type)99;
    expect_no_output_sizes(&d.op, CLOPS_ERROR_INVALID_OPERATOR_TYPE, "99", "operator type 99");
    d.op.type = D2S;
    clops_status st = clops_operator_output_sizes(&d.op, NULL);
    ASSERT_STATUS(st, CLOPS_ERROR_NULL_ARGUMENT, "NULL sizes", "clops_operator_output_sizes");
}
END_TEST

/* ---- the order of the checks: the first failing one is reported ------------------------------------------ */
START_TEST(test_validation_order)
{
    ds_desc d;
    up_desc u;
    const uint64_t zero_h[4] = {48, 24, 0, 1};

    /* 2 before 3: bad operator type with a bad data type. */
    make_ds(&d, (clops_operator_type)9, (clops_data_type)42, d2s_in, d2s_out, 2, DCR);
    expect_invalid(&d.op, CLOPS_ERROR_INVALID_OPERATOR_TYPE, "9", "operator type 9 and data type 42");
    /* 3: input before output. */
    make_ds(&d, D2S, (clops_data_type)42, d2s_in, d2s_out, 2, DCR);
    d.out.data_type = (clops_data_type)43;
    expect_invalid(&d.op, CLOPS_ERROR_UNSUPPORTED_DATA_TYPE, "42", "input type 42 and output type 43");
    /* 3: the input's overflow before the output's bad type. */
    const uint32_t M = UINT32_MAX, huge[4] = {M, M, M, M};
    make_ds(&d, D2S, CLOPS_DATA_TYPE_COMPLEX128, huge, d2s_out, 2, DCR);
    d.out.data_type = (clops_data_type)43;
    expect_invalid(&d.op, CLOPS_ERROR_SIZE_OVERFLOW, NULL, "input overflow and output type 43");
    /* 3 (per tensor: type, overflow, overlap) before 4: overlapping output and a type mismatch. */
    make_ds(&d, D2S, F32, d2s_in, d2s_out, 2, DCR);
    d.out.data_type = CLOPS_DATA_TYPE_FLOAT64;
    d.out.strides = zero_h;
    expect_invalid(&d.op, CLOPS_ERROR_OVERLAPPING_OUTPUT, NULL, "overlapping output and type mismatch");
    /* 4 before 5: type mismatch and block size 0. */
    make_ds(&d, D2S, F32, d2s_in, d2s_out, 0, DCR);
    d.out.data_type = CLOPS_DATA_TYPE_INT32;
    expect_invalid(&d.op, CLOPS_ERROR_DATA_TYPE_MISMATCH, NULL, "type mismatch and block size 0");
    /* 5: block size before order. */
    make_ds(&d, D2S, F32, d2s_in, d2s_out, 0, (clops_depth_space_order)5);
    expect_invalid(&d.op, CLOPS_ERROR_INVALID_BLOCK_SIZE, "0", "block size 0 and order 5");
    /* 5: order before divisibility. */
    const uint32_t in7[4] = {1, 7, 2, 3}, bad_out[4] = {9, 9, 9, 9};
    make_ds(&d, D2S, F32, in7, bad_out, 2, (clops_depth_space_order)5);
    expect_invalid(&d.op, CLOPS_ERROR_INVALID_ORDER, "5", "order 5 and 7 channels");
    /* 5: divisibility before the output sizes. */
    make_ds(&d, D2S, F32, in7, bad_out, 2, DCR);
    expect_invalid(&d.op, CLOPS_ERROR_CHANNELS_NOT_DIVISIBLE, "7", "7 channels and wrong output sizes");
    const uint32_t in5[4] = {1, 2, 5, 6};
    make_ds(&d, S2D, F32, in5, bad_out, 2, CRD);
    expect_invalid(&d.op, CLOPS_ERROR_SPATIAL_NOT_DIVISIBLE, "5", "height 5 and wrong output sizes");

    /* MaxUnpooling: input, indices, output tensors in that order. */
    make_up(&u, (clops_data_type)42, CLOPS_DATA_TYPE_FLOAT32, up_in, up_out);
    expect_invalid(&u.op, CLOPS_ERROR_UNSUPPORTED_DATA_TYPE, "42", "input type 42 and FLOAT32 indices");
    make_up(&u, F32, CLOPS_DATA_TYPE_FLOAT32, up_in, up_out);
    u.out.data_type = (clops_data_type)43;
    expect_invalid(&u.op, CLOPS_ERROR_UNSUPPORTED_INDEX_TYPE, NULL, "FLOAT32 indices and output type 43");
    make_up(&u, F32, CLOPS_DATA_TYPE_INT32, up_in, up_out);
    u.out.data_type = CLOPS_DATA_TYPE_FLOAT16;
    expect_invalid(&u.op, CLOPS_ERROR_UNSUPPORTED_INDEX_TYPE, NULL, "INT32 indices and output type mismatch");
    /* 6: indices sizes before batch/channel. */
    const uint32_t outnc[4] = {7, 7, 4, 4};
    make_up(&u, F32, CLOPS_DATA_TYPE_UINT32, up_in, outnc);
    u.idx.sizes[3] = 3;
    expect_invalid(&u.op, CLOPS_ERROR_INDICES_SIZE_MISMATCH, "3", "indices W 3 and output N, C 7");
    /* 4 before 6. */
    make_up(&u, F32, CLOPS_DATA_TYPE_UINT32, up_in, outnc);
    u.out.data_type = CLOPS_DATA_TYPE_UINT32;
    expect_invalid(&u.op, CLOPS_ERROR_DATA_TYPE_MISMATCH, NULL, "type mismatch and output N, C 7");
}
END_TEST

static Suite *validation_suite(void)
{
    Suite *s = suite_create("validation");
    TCase *tc = tc_suite_case(s, "descriptors", -1);
    TC_TESTS(tc, test_null_argument, test_invalid_operator_type, test_unsupported_data_type,
             test_unsupported_index_type, test_size_overflow, test_overlapping_output, test_data_type_mismatch,
             test_invalid_block_size, test_huge_block_size, test_output_rule_wraps_64_bits, test_invalid_order,
             test_channels_not_divisible, test_spatial_not_divisible, test_output_size_mismatch,
             test_indices_size_mismatch, test_batch_channel_mismatch, test_validation_order, test_output_sizes);
    return s;
}

int main(void)
{
    return tc_main(validation_suite());
}
