/*
 * test_validation.c - every rejected input of notes/SEMANTICS.md, one test each,
 * asserting the specific status from clops_operator_validate, from
 * clops_operator_create (host context, and the OpenCL context when there is
 * one) and from clops_host_run, and that clops_last_error_message() names the
 * offending value. Then the buffer checks at execution, status names and
 * messages, and the data-type table.
 */
#include "test_common.h"

#include <limits.h>

/* ---- helpers -------------------------------------------------------------------------------- */
/* Whether `msg` contains one of the '|'-separated alternatives of `alts`. */
static int msg_has(const char *msg, const char *alts)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", alts);
    for (char *p = buf; p;) {
        char *bar = strchr(p, '|');
        if (bar)
            *bar = '\0';
        if (*p && strstr(msg, p))
            return 1;
        p = bar ? bar + 1 : NULL;
    }
    return 0;
}

static void check_message(const char *what, const char *call, const char *needle)
{
    const char *m = clops_last_error_message();
    ck_assert_msg(m != NULL, "%s: %s: clops_last_error_message() is NULL", what, call);
    ck_assert_msg(m[0] != '\0', "%s: %s failed but clops_last_error_message() is empty", what, call);
    if (needle)
        ck_assert_msg(msg_has(m, needle), "%s: %s: message \"%s\" does not name the offending value (%s)", what, call,
                      m, needle);
}

#define ASSERT_STATUS(st, want, what, call)                                                          \
    ck_assert_msg((st) == (want), "%s: %s returned %s (%d), want %s (%d); last error message: \"%s\"", (what), \
                  (call), clops_status_name(st), (int)(st), clops_status_name(want), (int)(want),      \
                  clops_last_error_message())

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

/* Descriptor builders. */
typedef struct ds_desc {
    clops_tensor_desc in, out;
    clops_depth_to_space_desc d;
    clops_operator_desc op;
} ds_desc;

static void make_ds(ds_desc *x, clops_operator_type type, clops_data_type t, const uint32_t in[4],
                    const uint32_t out[4], uint32_t block, clops_depth_space_order order)
{
    memset(x, 0, sizeof *x);
    x->in.data_type = t;
    x->out.data_type = t;
    memcpy(x->in.sizes, in, sizeof x->in.sizes);
    memcpy(x->out.sizes, out, sizeof x->out.sizes);
    x->d.input = &x->in;
    x->d.output = &x->out;
    x->d.block_size = block;
    x->d.order = order;
    x->op.type = type;
    x->op.desc = &x->d; /* clops_space_to_depth_desc has the same members */
}

typedef struct up_desc {
    clops_tensor_desc in, idx, out;
    clops_max_unpooling_desc d;
    clops_operator_desc op;
} up_desc;

static void make_up(up_desc *x, clops_data_type t, clops_data_type it, const uint32_t in[4], const uint32_t out[4])
{
    memset(x, 0, sizeof *x);
    x->in.data_type = t;
    x->idx.data_type = it;
    x->out.data_type = t;
    memcpy(x->in.sizes, in, sizeof x->in.sizes);
    memcpy(x->idx.sizes, in, sizeof x->idx.sizes);
    memcpy(x->out.sizes, out, sizeof x->out.sizes);
    x->d.input = &x->in;
    x->d.indices = &x->idx;
    x->d.output = &x->out;
    x->op.type = CLOPS_OPERATOR_MAX_UNPOOLING;
    x->op.desc = &x->d;
}

#define D2S CLOPS_OPERATOR_DEPTH_TO_SPACE
#define S2D CLOPS_OPERATOR_SPACE_TO_DEPTH
#define DCR CLOPS_ORDER_DEPTH_COLUMN_ROW
#define CRD CLOPS_ORDER_COLUMN_ROW_DEPTH
#define F32 CLOPS_DATA_TYPE_FLOAT32

static const uint32_t d2s_in[4] = {1, 8, 2, 3}, d2s_out[4] = {1, 2, 4, 6};
static const uint32_t up_in[4] = {1, 3, 2, 2}, up_out[4] = {1, 3, 4, 4};

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
START_TEST(test_invalid_block_size)
{
    ds_desc d;
    make_ds(&d, D2S, F32, d2s_in, d2s_in, 0, DCR);
    expect_invalid(&d.op, CLOPS_ERROR_INVALID_BLOCK_SIZE, "0", "DepthToSpace block size 0");
    make_ds(&d, S2D, F32, d2s_in, d2s_in, 0, CRD);
    expect_invalid(&d.op, CLOPS_ERROR_INVALID_BLOCK_SIZE, "0", "SpaceToDepth block size 0");
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
    ds_desc d;
    make_ds(&d, D2S, F32, d2s_in, d2s_out, 2, (clops_depth_space_order)2);
    expect_invalid(&d.op, CLOPS_ERROR_INVALID_ORDER, "2", "DepthToSpace order 2");
    make_ds(&d, S2D, F32, d2s_out, d2s_in, 2, (clops_depth_space_order)7);
    expect_invalid(&d.op, CLOPS_ERROR_INVALID_ORDER, "7", "SpaceToDepth order 7");
    make_ds(&d, S2D, F32, d2s_out, d2s_in, 2, (clops_depth_space_order)-1);
    expect_invalid(&d.op, CLOPS_ERROR_INVALID_ORDER, "-1|4294967295", "SpaceToDepth order -1");
}
END_TEST

/* ---- 5. shape rules ------------------------------------------------------------------------------------- */
START_TEST(test_channels_not_divisible)
{
    ds_desc d;
    const uint32_t in7[4] = {1, 7, 2, 3}, out7[4] = {1, 1, 4, 6};
    make_ds(&d, D2S, F32, in7, out7, 2, DCR);
    expect_invalid(&d.op, CLOPS_ERROR_CHANNELS_NOT_DIVISIBLE, "7", "DepthToSpace 7 channels, block 2");
    const uint32_t in18[4] = {1, 18, 2, 3}, out18[4] = {1, 1, 8, 12};
    make_ds(&d, D2S, F32, in18, out18, 4, CRD);
    expect_invalid(&d.op, CLOPS_ERROR_CHANNELS_NOT_DIVISIBLE, "18", "DepthToSpace 18 channels, block 4");
}
END_TEST

START_TEST(test_spatial_not_divisible)
{
    ds_desc d;
    const uint32_t inh[4] = {1, 2, 5, 6}, outh[4] = {1, 8, 2, 3};
    make_ds(&d, S2D, F32, inh, outh, 2, DCR);
    expect_invalid(&d.op, CLOPS_ERROR_SPATIAL_NOT_DIVISIBLE, "5", "SpaceToDepth height 5, block 2");
    const uint32_t inw[4] = {1, 2, 4, 7}, outw[4] = {1, 8, 2, 3};
    make_ds(&d, S2D, F32, inw, outw, 2, CRD);
    expect_invalid(&d.op, CLOPS_ERROR_SPATIAL_NOT_DIVISIBLE, "7", "SpaceToDepth width 7, block 2");
    const uint32_t in9[4] = {1, 1, 9, 9}, out9[4] = {1, 1, 9, 9};
    make_ds(&d, S2D, F32, in9, out9, 2, DCR);
    expect_invalid(&d.op, CLOPS_ERROR_SPATIAL_NOT_DIVISIBLE, "9", "SpaceToDepth 9x9, block 2");
}
END_TEST

START_TEST(test_output_size_mismatch)
{
    static const struct {
        clops_operator_type op;
        uint32_t in[4], out[4];
        const char *needle, *what;
    } cases[] = {
        {D2S, {2, 8, 2, 3}, {3, 2, 4, 6}, "3", "DepthToSpace 2x8x2x3 b2 -> N 3 (want 2)"},
        {D2S, {2, 8, 2, 3}, {2, 9, 4, 6}, "9", "DepthToSpace 2x8x2x3 b2 -> C 9 (want 2)"},
        {D2S, {2, 8, 2, 3}, {2, 2, 13, 6}, "13", "DepthToSpace 2x8x2x3 b2 -> H 13 (want 4)"},
        {D2S, {2, 8, 2, 3}, {2, 2, 4, 17}, "17", "DepthToSpace 2x8x2x3 b2 -> W 17 (want 6)"},
        {D2S, {1, 8, 2, 3}, {1, 8, 2, 3}, "8|2", "DepthToSpace output = input sizes"},
        {S2D, {2, 2, 4, 6}, {5, 8, 2, 3}, "5", "SpaceToDepth 2x2x4x6 b2 -> N 5 (want 2)"},
        {S2D, {2, 2, 4, 6}, {2, 11, 2, 3}, "11", "SpaceToDepth 2x2x4x6 b2 -> C 11 (want 8)"},
        {S2D, {2, 2, 4, 6}, {2, 8, 19, 3}, "19", "SpaceToDepth 2x2x4x6 b2 -> H 19 (want 2)"},
        {S2D, {2, 2, 4, 6}, {2, 8, 2, 23}, "23", "SpaceToDepth 2x2x4x6 b2 -> W 23 (want 3)"},
        /* the erroneous published S2D formula {N, C/b^2, H*b, W*b} */
        {S2D, {1, 8, 4, 6}, {1, 2, 8, 12}, "2|8|12", "SpaceToDepth with DepthToSpace's output rule"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ds_desc d;
        make_ds(&d, cases[k].op, F32, cases[k].in, cases[k].out, 2, (clops_depth_space_order)(k % 2));
        expect_invalid(&d.op, CLOPS_ERROR_OUTPUT_SIZE_MISMATCH, cases[k].needle, cases[k].what);
    }
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

/* ---- buffers at execution (host memory) ------------------------------------------------------------------ */
/* DepthToSpace FLOAT32 1x4x2x2 -> 1x1x4x4: 64 bytes in, 64 bytes out. */
static void small_d2s(ds_desc *d)
{
    const uint32_t in[4] = {1, 4, 2, 2}, out[4] = {1, 1, 4, 4};
    make_ds(d, D2S, F32, in, out, 2, DCR);
}

/* Runs hb on clops_host_run and on each backend's execute_host, expecting `want`
 * and (on failure) an output left as it was. */
static void expect_host_exec(const clops_operator_desc *desc, const clops_host_buffers *hb, clops_status want,
                             const char *needle, const char *what)
{
    unsigned char before[256];
    size_t check = hb->output && hb->output_bytes <= sizeof before ? hb->output_bytes : 0;
    if (check)
        memcpy(before, hb->output, check);

    clops_status st = clops_host_run(desc, hb);
    ASSERT_STATUS(st, want, what, "clops_host_run");
    if (want != CLOPS_SUCCESS) {
        check_message(what, "clops_host_run", needle);
        if (check)
            ck_assert_msg(memcmp(before, hb->output, check) == 0, "%s: clops_host_run wrote the output on failure",
                          what);
    }
    for (int bi = 0; bi < tc_backend_count(); bi++) {
        char call[96];
        snprintf(call, sizeof call, "clops_operator_execute_host (%s)", tc_backend_name(bi));
        clops_operator *op = tc_create(tc_backend(bi), desc, what, tc_backend_name(bi));
        st = clops_operator_execute_host(op, hb);
        ASSERT_STATUS(st, want, what, call);
        if (want != CLOPS_SUCCESS) {
            check_message(what, call, needle);
            if (check)
                ck_assert_msg(memcmp(before, hb->output, check) == 0, "%s: %s wrote the output on failure", what,
                              call);
        }
        clops_operator_free(op);
    }
}

START_TEST(test_host_buffer_too_small)
{
    ds_desc d;
    small_d2s(&d);
    float in[16] = {0}, out[16] = {0};
    tc_fill_sentinel(out, sizeof out);
    clops_host_buffers hb = {in, 63, NULL, 0, out, 64};
    expect_host_exec(&d.op, &hb, CLOPS_ERROR_BUFFER_TOO_SMALL, "63|64", "input 63 bytes, span 64");
    hb.input_bytes = 64;
    hb.output_bytes = 60;
    expect_host_exec(&d.op, &hb, CLOPS_ERROR_BUFFER_TOO_SMALL, "60|64", "output 60 bytes, span 64");
    hb.output_bytes = 0;
    expect_host_exec(&d.op, &hb, CLOPS_ERROR_BUFFER_TOO_SMALL, "0|64", "output 0 bytes, span 64");

    /* Strided: the span, not the element count, decides. Padded input rows of 5:
     * span = 1 + 3*10 + 1*5 + 1 = 37 elements = 148 bytes > 64. */
    const uint64_t padded[4] = {40, 10, 5, 1};
    d.in.strides = padded;
    float inp[40] = {0};
    hb.input = inp;
    hb.input_bytes = 144;
    hb.output_bytes = 64;
    expect_host_exec(&d.op, &hb, CLOPS_ERROR_BUFFER_TOO_SMALL, "144|148", "padded input 144 bytes, span 148");
    hb.input_bytes = 148;
    expect_host_exec(&d.op, &hb, CLOPS_SUCCESS, NULL, "padded input of exactly its span");

    /* MaxUnpooling indices too small. */
    up_desc u;
    make_up(&u, F32, CLOPS_DATA_TYPE_INT64, up_in, up_out);
    float x[12] = {0}, y[48] = {0};
    int64_t idx[12] = {0};
    clops_host_buffers uh = {x, sizeof x, idx, sizeof idx - 1, y, sizeof y};
    expect_host_exec(&u.op, &uh, CLOPS_ERROR_BUFFER_TOO_SMALL, "95|96", "INT64 indices 95 bytes, span 96");
}
END_TEST

START_TEST(test_host_missing_buffer)
{
    ds_desc d;
    small_d2s(&d);
    float in[16] = {0}, out[16] = {0};
    clops_host_buffers hb = {NULL, 64, NULL, 0, out, 64};
    expect_host_exec(&d.op, &hb, CLOPS_ERROR_MISSING_BUFFER, NULL, "input NULL");
    hb.input = in;
    hb.output = NULL;
    expect_host_exec(&d.op, &hb, CLOPS_ERROR_MISSING_BUFFER, NULL, "output NULL");

    up_desc u;
    make_up(&u, F32, CLOPS_DATA_TYPE_UINT32, up_in, up_out);
    float x[12] = {0}, y[48] = {0};
    clops_host_buffers uh = {x, sizeof x, NULL, 48, y, sizeof y};
    expect_host_exec(&u.op, &uh, CLOPS_ERROR_MISSING_BUFFER, NULL, "MaxUnpooling indices NULL");

    /* DepthToSpace ignores the indices entirely. */
    hb.output = out;
    hb.indices = NULL;
    hb.indices_bytes = 12345;
    expect_host_exec(&d.op, &hb, CLOPS_SUCCESS, NULL, "DepthToSpace with indices NULL of 12345 bytes");
}
END_TEST

START_TEST(test_host_aliased_buffers)
{
    ds_desc d;
    small_d2s(&d);
    float mem[64] = {0};
    clops_host_buffers hb = {mem, 64, NULL, 0, mem, 64};
    expect_host_exec(&d.op, &hb, CLOPS_ERROR_ALIASED_BUFFERS, NULL, "output == input");
    hb.output = mem + 2;
    expect_host_exec(&d.op, &hb, CLOPS_ERROR_ALIASED_BUFFERS, NULL, "output = input + 8 bytes");
    hb.input = mem + 15;
    hb.output = mem;
    expect_host_exec(&d.op, &hb, CLOPS_ERROR_ALIASED_BUFFERS, NULL, "input's first element is the output's last");
    /* Adjacent but disjoint is fine; so is an "indices" pointer (ignored) inside the output. */
    hb.input = mem;
    hb.output = mem + 16;
    hb.indices = mem + 16;
    hb.indices_bytes = 64;
    expect_host_exec(&d.op, &hb, CLOPS_SUCCESS, NULL, "output right after the input");

    /* MaxUnpooling: output overlapping the indices, or the input. */
    up_desc u;
    make_up(&u, F32, CLOPS_DATA_TYPE_UINT32, up_in, up_out);
    uint32_t big[128] = {0};
    /* bytes: input [0,48), indices [80,128), output [96,288) */
    clops_host_buffers uh = {big, 48, big + 20, 48, big + 24, 192};
    expect_host_exec(&u.op, &uh, CLOPS_ERROR_ALIASED_BUFFERS, NULL, "MaxUnpooling output overlapping the indices");
    /* input [0,48), indices [320,368), output [32,224) */
    uh.indices = big + 80;
    uh.output = big + 8;
    expect_host_exec(&u.op, &uh, CLOPS_ERROR_ALIASED_BUFFERS, NULL, "MaxUnpooling output overlapping the input");
    /* input [0,48), indices [48,96), output [96,288) */
    uh.indices = big + 12;
    uh.output = big + 24;
    expect_host_exec(&u.op, &uh, CLOPS_SUCCESS, NULL, "MaxUnpooling three disjoint ranges of one array");
}
END_TEST

/* ---- buffers at execution (cl_mem) -------------------------------------------------------------------------- */
static cl_mem make_mem(size_t bytes)
{
    cl_int err;
    cl_mem m = clCreateBuffer(clops_context_cl_context(tc_dev_ctx), CL_MEM_READ_WRITE, bytes, NULL, &err);
    ck_assert_msg(err == CL_SUCCESS && m, "clCreateBuffer(%zu) failed: %d", bytes, (int)err);
    return m;
}

static void expect_cl_exec(clops_operator *op, cl_mem in, cl_mem idx, cl_mem out, clops_status want, const char *needle,
                           const char *what)
{
    clops_buffers cb = {in, idx, out};
    cl_event ev = NULL;
    clops_status st = clops_operator_execute(op, &cb, 0, NULL, &ev);
    ASSERT_STATUS(st, want, what, "clops_operator_execute");
    if (want != CLOPS_SUCCESS)
        check_message(what, "clops_operator_execute", needle);
    if (ev) {
        clWaitForEvents(1, &ev);
        clReleaseEvent(ev);
    }
    clFinish(clops_context_queue(tc_dev_ctx));
}

START_TEST(test_cl_buffer_errors)
{
    if (!tc_dev_ctx) {
        fprintf(stderr, "SKIP test_cl_buffer_errors: no OpenCL device\n");
        return;
    }
    ds_desc d;
    small_d2s(&d);
    clops_operator *op = tc_create(tc_dev_ctx, &d.op, "cl_mem buffer errors", "OpenCL");
    cl_mem a = make_mem(64), b = make_mem(64), small = make_mem(60);
    const unsigned char zero60[60] = {0};
    TC_CL_CHECK(clEnqueueWriteBuffer(clops_context_queue(tc_dev_ctx), small, CL_TRUE, 0, 60, zero60, 0, NULL, NULL),
                "zero upload");

    expect_cl_exec(op, NULL, NULL, b, CLOPS_ERROR_MISSING_BUFFER, NULL, "cl_mem input NULL");
    expect_cl_exec(op, a, NULL, NULL, CLOPS_ERROR_MISSING_BUFFER, NULL, "cl_mem output NULL");
    expect_cl_exec(op, small, NULL, b, CLOPS_ERROR_BUFFER_TOO_SMALL, "60|64", "cl_mem input of 60 bytes, span 64");
    expect_cl_exec(op, a, NULL, small, CLOPS_ERROR_BUFFER_TOO_SMALL, "60|64", "cl_mem output of 60 bytes, span 64");
    expect_cl_exec(op, a, NULL, a, CLOPS_ERROR_ALIASED_BUFFERS, NULL, "cl_mem output == input");
    expect_cl_exec(op, a, b, b, CLOPS_SUCCESS, NULL, "DepthToSpace ignores the indices cl_mem (== output)");
    clops_operator_free(op);

    up_desc u;
    make_up(&u, F32, CLOPS_DATA_TYPE_UINT32, up_in, up_out); /* 48 bytes in, 48 indices, 192 out */
    op = tc_create(tc_dev_ctx, &u.op, "cl_mem MaxUnpooling buffer errors", "OpenCL");
    cl_mem x = make_mem(48), ix = make_mem(48), y = make_mem(192);
    const uint32_t zeros[12] = {0};
    TC_CL_CHECK(clEnqueueWriteBuffer(clops_context_queue(tc_dev_ctx), ix, CL_TRUE, 0, 48, zeros, 0, NULL, NULL),
                "indices upload");
    expect_cl_exec(op, x, NULL, y, CLOPS_ERROR_MISSING_BUFFER, NULL, "cl_mem MaxUnpooling indices NULL");
    expect_cl_exec(op, x, small, y, CLOPS_SUCCESS, NULL, "cl_mem MaxUnpooling indices of 60 >= 48 bytes");
    expect_cl_exec(op, x, ix, a, CLOPS_ERROR_BUFFER_TOO_SMALL, "64|192", "cl_mem MaxUnpooling output 64 bytes, span 192");
    cl_mem big = make_mem(192);
    expect_cl_exec(op, x, big, big, CLOPS_ERROR_ALIASED_BUFFERS, NULL, "cl_mem MaxUnpooling output == indices");
    clReleaseMemObject(big);
    expect_cl_exec(op, y, ix, y, CLOPS_ERROR_ALIASED_BUFFERS, NULL, "cl_mem MaxUnpooling output == input");
    expect_cl_exec(op, x, ix, y, CLOPS_SUCCESS, NULL, "cl_mem MaxUnpooling, good buffers");
    clops_operator_free(op);

    clReleaseMemObject(x);
    clReleaseMemObject(ix);
    clReleaseMemObject(y);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseMemObject(small);
}
END_TEST

/* "Same memory" includes sub-buffers of one parent whose touched ranges overlap. */
START_TEST(test_cl_sub_buffer_aliasing)
{
    if (!tc_dev_ctx) {
        fprintf(stderr, "SKIP test_cl_sub_buffer_aliasing: no OpenCL device\n");
        return;
    }
    cl_context c = clops_context_cl_context(tc_dev_ctx);
    cl_device_id dev = NULL;
    TC_CL_CHECK(clGetContextInfo(c, CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL), "CL_CONTEXT_DEVICES");
    cl_uint align_bits = 0;
    TC_CL_CHECK(clGetDeviceInfo(dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL),
                "CL_DEVICE_MEM_BASE_ADDR_ALIGN");
    size_t A = align_bits / 8 < 64 ? 64 : align_bits / 8; /* aligned, and >= the 64-byte spans */

    ds_desc d;
    small_d2s(&d); /* 64 bytes in, 64 bytes out */
    clops_operator *op = tc_create(tc_dev_ctx, &d.op, "sub-buffer aliasing", "OpenCL");
    cl_mem parent = make_mem(4 * A);
    const unsigned char zeros[64] = {0};
    TC_CL_CHECK(clEnqueueWriteBuffer(clops_context_queue(tc_dev_ctx), parent, CL_TRUE, 0, 64, zeros, 0, NULL, NULL),
                "zero upload");
    cl_int err;
    cl_buffer_region r0 = {0, 2 * A}, r1 = {A, 64}, r2 = {0, 64};
    cl_mem sub0 = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r0, &err);
    ck_assert_msg(err == CL_SUCCESS, "clCreateSubBuffer [0, %zu): %d", 2 * A, (int)err);
    cl_mem sub1 = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r1, &err);
    ck_assert_msg(err == CL_SUCCESS, "clCreateSubBuffer [%zu, +64): %d", A, (int)err);
    cl_mem sub2 = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r2, &err);
    ck_assert_msg(err == CL_SUCCESS, "clCreateSubBuffer [0, 64): %d", (int)err);

    expect_cl_exec(op, parent, NULL, sub2, CLOPS_ERROR_ALIASED_BUFFERS, NULL,
                   "input = parent, output = its sub-buffer [0, 64)");
    expect_cl_exec(op, sub2, NULL, parent, CLOPS_ERROR_ALIASED_BUFFERS, NULL,
                   "input = sub-buffer [0, 64), output = the parent");
    expect_cl_exec(op, sub0, NULL, sub2, CLOPS_ERROR_ALIASED_BUFFERS, NULL,
                   "input = sub-buffer [0, 2A), output = sub-buffer [0, 64)");
    expect_cl_exec(op, sub2, NULL, sub1, CLOPS_SUCCESS, NULL, "disjoint sub-buffers [0, 64) and [A, A+64)");
    clReleaseMemObject(sub0);
    clReleaseMemObject(sub1);
    clReleaseMemObject(sub2);
    clReleaseMemObject(parent);
    clops_operator_free(op);
}
END_TEST

START_TEST(test_execute_wrong_backend)
{
    /* An empty tensor: NULL cl_mem buffers are valid, so only the backend is wrong. */
    const uint32_t in0[4] = {0, 4, 2, 2}, out0[4] = {0, 1, 4, 4};
    ds_desc d;
    make_ds(&d, D2S, F32, in0, out0, 2, DCR);
    clops_operator *op = tc_create(tc_host_ctx, &d.op, "execute on the host context", "host");
    clops_buffers cb = {NULL, NULL, NULL};
    cl_event ev = NULL;
    clops_status st = clops_operator_execute(op, &cb, 0, NULL, &ev);
    ASSERT_STATUS(st, CLOPS_ERROR_WRONG_BACKEND, "empty DepthToSpace on the host context", "clops_operator_execute");
    check_message("empty DepthToSpace on the host context", "clops_operator_execute", NULL);
    ck_assert_msg(ev == NULL, "clops_operator_execute on the host context returned an event");
    clops_operator_free(op);

    /* Non-empty, with real cl_mem buffers from the device context. */
    if (tc_dev_ctx) {
        ds_desc d2;
        small_d2s(&d2);
        op = tc_create(tc_host_ctx, &d2.op, "execute on the host context", "host");
        cl_mem a = make_mem(64), b = make_mem(64);
        clops_buffers cb2 = {a, NULL, b};
        st = clops_operator_execute(op, &cb2, 0, NULL, NULL);
        ASSERT_STATUS(st, CLOPS_ERROR_WRONG_BACKEND, "DepthToSpace with cl_mem on the host context",
                      "clops_operator_execute");
        clops_operator_free(op);

        up_desc u;
        make_up(&u, F32, CLOPS_DATA_TYPE_UINT32, up_in, up_out);
        op = tc_create(tc_host_ctx, &u.op, "execute on the host context", "host");
        clops_buffers cb3 = {a, a, b};
        st = clops_operator_execute(op, &cb3, 0, NULL, NULL);
        ASSERT_STATUS(st, CLOPS_ERROR_WRONG_BACKEND, "MaxUnpooling with cl_mem on the host context",
                      "clops_operator_execute");
        clops_operator_free(op);
        clReleaseMemObject(a);
        clReleaseMemObject(b);
    }
}
END_TEST

/* ---- status names and messages ----------------------------------------------------------------------------- */
/* Values this suite pins (callers store them); any later addition to the header is
 * checked through the header's own table below. */
#define STATUS_ROW(name, value) {name, value, #name}
static const struct {
    int code;
    int pinned;
    const char *name;
} pinned_statuses[] = {
    STATUS_ROW(CLOPS_SUCCESS, 0),
    STATUS_ROW(CLOPS_ERROR_NULL_ARGUMENT, -15000),
    STATUS_ROW(CLOPS_ERROR_INVALID_OPERATOR_TYPE, -15001),
    STATUS_ROW(CLOPS_ERROR_UNSUPPORTED_DATA_TYPE, -15002),
    STATUS_ROW(CLOPS_ERROR_DATA_TYPE_MISMATCH, -15003),
    STATUS_ROW(CLOPS_ERROR_INVALID_BLOCK_SIZE, -15004),
    STATUS_ROW(CLOPS_ERROR_INVALID_ORDER, -15005),
    STATUS_ROW(CLOPS_ERROR_CHANNELS_NOT_DIVISIBLE, -15006),
    STATUS_ROW(CLOPS_ERROR_SPATIAL_NOT_DIVISIBLE, -15007),
    STATUS_ROW(CLOPS_ERROR_OUTPUT_SIZE_MISMATCH, -15008),
    STATUS_ROW(CLOPS_ERROR_INDICES_SIZE_MISMATCH, -15009),
    STATUS_ROW(CLOPS_ERROR_UNSUPPORTED_INDEX_TYPE, -15010),
    STATUS_ROW(CLOPS_ERROR_BATCH_CHANNEL_MISMATCH, -15011),
    STATUS_ROW(CLOPS_ERROR_SIZE_OVERFLOW, -15012),
    STATUS_ROW(CLOPS_ERROR_OVERLAPPING_OUTPUT, -15013),
    STATUS_ROW(CLOPS_ERROR_BUFFER_TOO_SMALL, -15014),
    STATUS_ROW(CLOPS_ERROR_ALIASED_BUFFERS, -15015),
    STATUS_ROW(CLOPS_ERROR_MISSING_BUFFER, -15016),
    STATUS_ROW(CLOPS_ERROR_INDEX_OUT_OF_RANGE, -15100),
    STATUS_ROW(CLOPS_ERROR_WRONG_BACKEND, -15101),
    STATUS_ROW(CLOPS_ERROR_TOO_LARGE_FOR_DEVICE, -15102),
    STATUS_ROW(CLOPS_ERROR_NO_DEVICE, -15200),
    STATUS_ROW(CLOPS_ERROR_INVALID_DEVICE_SELECTION, -15201),
    STATUS_ROW(CLOPS_ERROR_OUT_OF_HOST_MEMORY, -15202),
    STATUS_ROW(CLOPS_ERROR_BUILD_FAILED, -15203),
    STATUS_ROW(CLOPS_ERROR_KERNEL_SOURCE_UNAVAILABLE, -15204),
    STATUS_ROW(CLOPS_ERROR_INTERNAL, -15299),
};

/* Every code of the header's table, with its message. */
#define HEADER_ROW(name, value, msg) {value, #name, msg},
static const struct {
    int code;
    const char *name;
    const char *message;
} header_statuses[] = {CLOPS_STATUS_TABLE(HEADER_ROW)};
#undef HEADER_ROW
#define NUM_HEADER_STATUSES (sizeof header_statuses / sizeof header_statuses[0])

static int in_header_table(int code)
{
    for (size_t k = 0; k < NUM_HEADER_STATUSES; k++)
        if (header_statuses[k].code == code)
            return 1;
    return 0;
}

START_TEST(test_status_names_and_messages)
{
    for (size_t k = 0; k < sizeof pinned_statuses / sizeof pinned_statuses[0]; k++)
        ck_assert_msg(pinned_statuses[k].code == pinned_statuses[k].pinned, "%s is %d, pinned value %d",
                      pinned_statuses[k].name, pinned_statuses[k].code, pinned_statuses[k].pinned);

    for (size_t k = 0; k < NUM_HEADER_STATUSES; k++) {
        const int code = header_statuses[k].code;
        const char *n = clops_status_name(code);
        ck_assert_msg(n != NULL && strcmp(n, header_statuses[k].name) == 0,
                      "clops_status_name(%d) = \"%s\", want \"%s\"", code, n ? n : "(NULL)", header_statuses[k].name);
        const char *m = clops_status_message(code);
        ck_assert_msg(m != NULL && strcmp(m, header_statuses[k].message) == 0,
                      "clops_status_message(%s) = \"%s\", want the header's \"%s\"", header_statuses[k].name,
                      m ? m : "(NULL)", header_statuses[k].message);
        ck_assert_msg(m[0] != '\0', "clops_status_message(%s) is empty", header_statuses[k].name);
        ck_assert_msg(code == 0 || code <= -15000, "%s = %d is inside OpenCL's range", header_statuses[k].name, code);
        for (size_t j = 0; j < k; j++) {
            ck_assert_msg(code != header_statuses[j].code, "%s and %s share the value %d", header_statuses[k].name,
                          header_statuses[j].name, code);
            ck_assert_msg(strcmp(m, header_statuses[j].message) != 0, "%s and %s share the message \"%s\"",
                          header_statuses[k].name, header_statuses[j].name, m);
        }
    }

    /* OpenCL's codes pass through with their names. */
    static const struct {
        int code;
        const char *name;
    } cl_codes[] = {
        {CL_DEVICE_NOT_FOUND, "CL_DEVICE_NOT_FOUND"},
        {CL_MEM_OBJECT_ALLOCATION_FAILURE, "CL_MEM_OBJECT_ALLOCATION_FAILURE"},
        {CL_OUT_OF_RESOURCES, "CL_OUT_OF_RESOURCES"},
        {CL_OUT_OF_HOST_MEMORY, "CL_OUT_OF_HOST_MEMORY"},
        {CL_BUILD_PROGRAM_FAILURE, "CL_BUILD_PROGRAM_FAILURE"},
        {CL_INVALID_VALUE, "CL_INVALID_VALUE"},
        {CL_INVALID_MEM_OBJECT, "CL_INVALID_MEM_OBJECT"},
        {CL_INVALID_KERNEL_ARGS, "CL_INVALID_KERNEL_ARGS"},
        {CL_INVALID_WORK_GROUP_SIZE, "CL_INVALID_WORK_GROUP_SIZE"},
        {CL_INVALID_EVENT_WAIT_LIST, "CL_INVALID_EVENT_WAIT_LIST"},
    };
    for (size_t k = 0; k < sizeof cl_codes / sizeof cl_codes[0]; k++) {
        const char *n = clops_status_name(cl_codes[k].code);
        ck_assert_msg(n != NULL && strcmp(n, cl_codes[k].name) == 0, "clops_status_name(%d) = \"%s\", want \"%s\"",
                      cl_codes[k].code, n ? n : "(NULL)", cl_codes[k].name);
        const char *m = clops_status_message(cl_codes[k].code);
        ck_assert_msg(m != NULL && m[0] != '\0', "clops_status_message(%s) is empty", cl_codes[k].name);
    }

    /* Unknown codes (those the header does not define). */
    static const int unknown[] = {1,      77,     -14999, -15017, -15099, -15103, -15199,
                                  -15298, -15300, -20000, -99999, INT_MIN, INT_MAX};
    int tested = 0;
    for (size_t k = 0; k < sizeof unknown / sizeof unknown[0]; k++) {
        if (in_header_table(unknown[k]))
            continue;
        tested++;
        const char *n = clops_status_name(unknown[k]);
        ck_assert_msg(n != NULL && strcmp(n, "CLOPS_UNKNOWN_STATUS") == 0,
                      "clops_status_name(%d) = \"%s\", want \"CLOPS_UNKNOWN_STATUS\"", unknown[k], n ? n : "(NULL)");
        const char *m = clops_status_message(unknown[k]);
        ck_assert_msg(m != NULL && m[0] != '\0', "clops_status_message(%d) is NULL or empty", unknown[k]);
    }
    ck_assert_msg(tested >= 8, "test bug: too few unknown codes left to test");
}
END_TEST

/* ---- data types ----------------------------------------------------------------------------------------------- */
START_TEST(test_data_type_table)
{
    static const struct {
        clops_data_type t;
        int value;
        const char *name;
        size_t size;
    } types[] = {
        {CLOPS_DATA_TYPE_FLOAT32, 1, "FLOAT32", 4},     {CLOPS_DATA_TYPE_FLOAT16, 2, "FLOAT16", 2},
        {CLOPS_DATA_TYPE_UINT32, 3, "UINT32", 4},       {CLOPS_DATA_TYPE_UINT16, 4, "UINT16", 2},
        {CLOPS_DATA_TYPE_UINT8, 5, "UINT8", 1},         {CLOPS_DATA_TYPE_INT32, 6, "INT32", 4},
        {CLOPS_DATA_TYPE_INT16, 7, "INT16", 2},         {CLOPS_DATA_TYPE_INT8, 8, "INT8", 1},
        {CLOPS_DATA_TYPE_FLOAT64, 9, "FLOAT64", 8},     {CLOPS_DATA_TYPE_UINT64, 10, "UINT64", 8},
        {CLOPS_DATA_TYPE_INT64, 11, "INT64", 8},        {CLOPS_DATA_TYPE_BOOL, 100, "BOOL", 1},
        {CLOPS_DATA_TYPE_BFLOAT16, 101, "BFLOAT16", 2}, {CLOPS_DATA_TYPE_COMPLEX64, 102, "COMPLEX64", 8},
        {CLOPS_DATA_TYPE_COMPLEX128, 103, "COMPLEX128", 16},
    };
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        ck_assert_msg((int)types[k].t == types[k].value, "%s is %d, pinned %d", types[k].name, (int)types[k].t,
                      types[k].value);
        size_t s = clops_data_type_size(types[k].t);
        ck_assert_msg(s == types[k].size, "clops_data_type_size(%s) = %zu, want %zu", types[k].name, s, types[k].size);
        const char *n = clops_data_type_name(types[k].t);
        ck_assert_msg(n != NULL && strcmp(n, types[k].name) == 0, "clops_data_type_name(%d) = \"%s\", want \"%s\"",
                      types[k].value, n ? n : "(NULL)", types[k].name);
    }
    static const int unknown[] = {0, 12, 13, 50, 99, 104, 200, -1, INT_MAX};
    for (size_t k = 0; k < sizeof unknown / sizeof unknown[0]; k++) {
        size_t s = clops_data_type_size((clops_data_type)unknown[k]);
        ck_assert_msg(s == 0, "clops_data_type_size(%d) = %zu, want 0", unknown[k], s);
        const char *n = clops_data_type_name((clops_data_type)unknown[k]);
        ck_assert_msg(n != NULL && strcmp(n, "UNKNOWN") == 0, "clops_data_type_name(%d) = \"%s\", want \"UNKNOWN\"",
                      unknown[k], n ? n : "(NULL)");
    }
}
END_TEST

START_TEST(test_version)
{
    ck_assert_uint_eq(clops_version_number(), CLOPS_VERSION_NUMBER);
    ck_assert_str_eq(clops_version_string(), CLOPS_VERSION_STRING);
}
END_TEST

static Suite *validation_suite(void)
{
    Suite *s = suite_create("validation");
    TCase *tc = tcase_create("descriptors");
    tcase_add_test(tc, test_null_argument);
    tcase_add_test(tc, test_invalid_operator_type);
    tcase_add_test(tc, test_unsupported_data_type);
    tcase_add_test(tc, test_unsupported_index_type);
    tcase_add_test(tc, test_size_overflow);
    tcase_add_test(tc, test_overlapping_output);
    tcase_add_test(tc, test_data_type_mismatch);
    tcase_add_test(tc, test_invalid_block_size);
    tcase_add_test(tc, test_huge_block_size);
    tcase_add_test(tc, test_output_rule_wraps_64_bits);
    tcase_add_test(tc, test_invalid_order);
    tcase_add_test(tc, test_channels_not_divisible);
    tcase_add_test(tc, test_spatial_not_divisible);
    tcase_add_test(tc, test_output_size_mismatch);
    tcase_add_test(tc, test_indices_size_mismatch);
    tcase_add_test(tc, test_batch_channel_mismatch);
    tcase_add_test(tc, test_validation_order);
    suite_add_tcase(s, tc);

    tc = tcase_create("buffers");
    tcase_add_test(tc, test_host_buffer_too_small);
    tcase_add_test(tc, test_host_missing_buffer);
    tcase_add_test(tc, test_host_aliased_buffers);
    tcase_add_test(tc, test_cl_buffer_errors);
    tcase_add_test(tc, test_cl_sub_buffer_aliasing);
    tcase_add_test(tc, test_execute_wrong_backend);
    suite_add_tcase(s, tc);

    tc = tcase_create("tables");
    tcase_add_test(tc, test_status_names_and_messages);
    tcase_add_test(tc, test_data_type_table);
    tcase_add_test(tc, test_version);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tc_main(validation_suite());
}
