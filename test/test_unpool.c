/*
 * test_unpool.c - MaxUnpooling on the host backend and on the default OpenCL
 * device, against the naive reference (reference.c), bit-exactly.
 *
 * Indices come from a real max pooling run here on the host (2x2 stride 2, and
 * 3x3 stride 2 whose overlapping windows give duplicate indices with equal
 * values), flat over the whole tensor (batch and channel included), as
 * DirectML and ONNX define them. Then: bad indices (status, untouched host
 * output, cl_mem writes the good elements only), duplicates with different
 * values (last in row-major order wins, every run, every backend), empty
 * inputs, strided tensors.
 */
#include "test_unpool_common.h"

#include <math.h>

/* ---- a host max pooling ------------------------------------------------------------------- */
static double half_to_double(uint16_t h)
{
    int sign = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 0)
        v = ldexp((double)m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexp((double)(m + 1024), e - 25);
    return sign ? -v : v;
}

/* An integer element of `size` bytes (1, 2, 4 or 8), signed or not, as a double. */
static double int_key(const unsigned char *p, size_t size, int is_signed)
{
    uint64_t u;
    if (size == 1) {
        u = p[0];
    } else if (size == 2) {
        uint16_t v;
        memcpy(&v, p, 2);
        u = v;
    } else if (size == 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        u = v;
    } else {
        memcpy(&u, p, 8);
    }
    const unsigned bits = 8u * (unsigned)size;
    if (is_signed && bits < 64 && (u >> (bits - 1)) & 1)
        u |= UINT64_MAX << bits; /* sign-extend */
    return is_signed ? (double)(int64_t)u : (double)u;
}

/* The value an element compares by (complex: the real part); NaN sorts lowest. */
static double elem_key(clops_data_type t, const unsigned char *p)
{
    double d = 0;
    switch (t) {
    case CLOPS_DATA_TYPE_FLOAT32:
    case CLOPS_DATA_TYPE_COMPLEX64: {
        float f;
        memcpy(&f, p, 4);
        d = f;
        break;
    }
    case CLOPS_DATA_TYPE_FLOAT64:
    case CLOPS_DATA_TYPE_COMPLEX128:
        memcpy(&d, p, 8);
        break;
    case CLOPS_DATA_TYPE_FLOAT16: {
        uint16_t h;
        memcpy(&h, p, 2);
        d = half_to_double(h);
        break;
    }
    case CLOPS_DATA_TYPE_BFLOAT16: {
        uint16_t h;
        memcpy(&h, p, 2);
        uint32_t bits = (uint32_t)h << 16;
        float f;
        memcpy(&f, &bits, 4);
        d = f;
        break;
    }
    case CLOPS_DATA_TYPE_INT8:
    case CLOPS_DATA_TYPE_INT16:
    case CLOPS_DATA_TYPE_INT32:
    case CLOPS_DATA_TYPE_INT64:
        d = int_key(p, tc_type(t)->size, 1);
        break;
    default: /* the unsigned integers and BOOL; tc_type() fails on an unknown type */
        d = int_key(p, tc_type(t)->size, 0);
        break;
    }
    return isnan(d) ? -INFINITY : d;
}

/* Max pooling of packed NCHW `x` with a k x k window and stride s (no padding):
 * pooled values to `vals` (packed {N, C, Ho, Wo}) and the flat index of each
 * maximum over the whole input tensor to `idx`. Ties: the first in the window. */
static void max_pool(clops_data_type t, const unsigned char *x, const uint32_t xs[4], uint32_t k, uint32_t s,
                     unsigned char *vals, uint64_t *idx, uint32_t ps[4])
{
    size_t es = tc_type(t)->size;
    ps[0] = xs[0], ps[1] = xs[1], ps[2] = (xs[2] - k) / s + 1, ps[3] = (xs[3] - k) / s + 1;
    size_t o = 0;
    for (uint64_t n = 0; n < xs[0]; n++)
        for (uint64_t c = 0; c < xs[1]; c++)
            for (uint64_t ph = 0; ph < ps[2]; ph++)
                for (uint64_t pw = 0; pw < ps[3]; pw++, o++) {
                    uint64_t best = UINT64_MAX;
                    double best_key = 0;
                    for (uint64_t i = 0; i < k; i++)
                        for (uint64_t j = 0; j < k; j++) {
                            uint64_t flat = ((n * xs[1] + c) * xs[2] + ph * s + i) * xs[3] + pw * s + j;
                            double key = elem_key(t, x + flat * es);
                            if (best == UINT64_MAX || key > best_key)
                                best = flat, best_key = key;
                        }
                    idx[o] = best;
                    memcpy(vals + o * es, x + best * es, es);
                }
}

/* ---- unpooling a real max pooling -------------------------------------------------------------------- */
#define POOL_CASES (TC_NUM_TYPES * 3)

/* Pools random data of `xs` with a k x k / stride s window, unpools into `xs`
 * again, and checks (besides the reference) that every output element is
 * either the original input element at an index the pooling chose, or zero. */
static void pool_unpool(clops_data_type t, const index_type_info *it, const uint32_t xs[4], uint32_t k,
                        uint32_t s, uint64_t seed, int expect_duplicates)
{
    size_t es = tc_type(t)->size;
    uint64_t xcount = (uint64_t)xs[0] * xs[1] * xs[2] * xs[3];
    unsigned char *x = tc_malloc(xcount * es);
    tc_fill_random(x, xcount * es, seed);
    if (t == CLOPS_DATA_TYPE_BOOL)
        for (uint64_t i = 0; i < xcount; i++)
            x[i] &= 1;

    uint32_t ps[4];
    uint64_t pcount = (uint64_t)xs[0] * xs[1] * ((xs[2] - k) / s + 1) * ((xs[3] - k) / s + 1);
    unsigned char *vals = tc_malloc(pcount * es);
    uint64_t *flat = tc_malloc(pcount * sizeof *flat);
    max_pool(t, x, xs, k, s, vals, flat, ps);
    unsigned char *idx = tc_malloc(pcount * it->size);
    store_indices(it, flat, pcount, idx);

    /* Count duplicate indices (overlapping windows that chose the same element). */
    unsigned char *chosen = calloc(xcount, 1);
    ck_assert(chosen != NULL);
    uint64_t dups = 0;
    for (uint64_t i = 0; i < pcount; i++)
        dups += chosen[flat[i]]++ > 0;
    char what[160];
    snprintf(what, sizeof what, "unpool of a %ux%u stride-%u max pool (%" PRIu64 " duplicate indices), seed %" PRIu64,
             k, k, s, dups, seed);
    if (expect_duplicates)
        ck_assert_msg(dups > 0, "%s: test bug, the overlapping pool chose no element twice", what);
    else
        ck_assert_msg(dups == 0, "%s: test bug, a non-overlapping pool gave duplicates", what);

    up_case c = {t, it, {ps[0], ps[1], ps[2], ps[3]}, NULL, NULL, {xs[0], xs[1], xs[2], xs[3]}, NULL, 5};
    up_run(&c, vals, idx, CLOPS_SUCCESS, what);

    /* Independent of reference.c: unpooling puts each chosen element back. */
    unsigned char *y = tc_malloc(xcount * es);
    up_descs d;
    up_describe(&c, &d);
    clops_host_buffers hb = {vals, pcount * es, idx, pcount * it->size, y, xcount * es};
    clops_status st = clops_host_run(&d.desc, &hb);
    ck_assert_msg(st == CLOPS_SUCCESS, "%s: clops_host_run %s", what, clops_status_name(st));
    static const unsigned char zero[16];
    for (uint64_t p = 0; p < xcount; p++) {
        const unsigned char *want = chosen[p] ? x + p * es : zero;
        ck_assert_msg(memcmp(y + p * es, want, es) == 0,
                      "%s, %s %s indices: output flat element %" PRIu64 " should be %s", what, tc_type(t)->name,
                      it->name, p, chosen[p] ? "the pooled maximum put back" : "zero");
    }
    free(y);
    free(chosen);
    free(idx);
    free(flat);
    free(vals);
    free(x);
}

START_TEST(test_unpool_from_max_pool)
{
    clops_data_type t = tc_types[_i % TC_NUM_TYPES].type;
    const index_type_info *it = &index_types[_i / TC_NUM_TYPES];
    const uint32_t xs2[4] = {2, 3, 8, 10};
    pool_unpool(t, it, xs2, 2, 2, 100u + (uint64_t)_i, 0);
    const uint32_t xs3[4] = {2, 3, 9, 11};
    pool_unpool(t, it, xs3, 3, 2, 200u + (uint64_t)_i, 1);
}
END_TEST

/* ---- bad indices --------------------------------------------------------------------------------------- */
/* 1x2x2x2 input into 1x2x4x4 (32 elements); index 5 of 8 is replaced by `bad`. */
static void bad_index_case(const index_type_info *it, uint64_t bad, const char *bad_desc, const uint64_t *out_st,
                           uint32_t tail, clops_context *only)
{
    const uint32_t xs[4] = {1, 2, 2, 2}, ys[4] = {1, 2, 4, 4};
    float x[8];
    for (int k = 0; k < 8; k++)
        x[k] = 1.5f + (float)k;
    uint64_t flat[8] = {0, 5, 10, 15, 16, 0, 26, 31};
    flat[5] = bad;
    unsigned char idx[64];
    if (it->kind == REF_INDEX_UINT32)
        ck_assert_msg(bad <= UINT32_MAX, "test bug");
    store_indices(it, flat, 8, idx);
    char what[160];
    snprintf(what, sizeof what, "bad index %s at input element 5", bad_desc);
    up_case c = {CLOPS_DATA_TYPE_FLOAT32, it, {xs[0], xs[1], xs[2], xs[3]}, NULL, NULL, {ys[0], ys[1], ys[2], ys[3]},
                 out_st, tail};
    long nbad = up_run_on(&c, x, idx, CLOPS_ERROR_INDEX_OUT_OF_RANGE, what, only);
    ck_assert_msg(nbad == 1, "%s: test bug, reference counted %ld bad indices", what, nbad);
}

START_TEST(test_unpool_bad_indices)
{
    const index_type_info *it = &index_types[_i];
    const uint64_t padded[4] = {2 * (4 * 7 + 3) + 1, 4 * 7 + 3, 7, 1}; /* rows of 7 for W = 4 */
    static const struct {
        uint64_t v;
        const char *desc;
        int kinds; /* bit per ref_index_kind it applies to */
    } bads[] = {
        {32, "== output count 32", 7},
        {33, "output count + 1 = 33", 7},
        {UINT32_MAX, "UINT32_MAX", 7},
        {(uint64_t)1 << 32, "2^32 (0 if truncated to 32 bits)", 6},
        {((uint64_t)1 << 32) + 3, "2^32 + 3 (3 if truncated to 32 bits)", 6},
        {(uint64_t)1 << 63, "2^63 (INT64_MIN as signed)", 6},
        {UINT64_MAX, "UINT64_MAX / INT64 -1", 6},
        {(uint64_t)INT64_MAX, "INT64_MAX", 6},
        {(uint64_t)-2, "INT64 -2 / UINT64_MAX - 1", 6},
        {(uint64_t)(int64_t)-32, "INT64 -32 (flat 0 if wrapped by the count)", 6},
    };
    for (size_t k = 0; k < sizeof bads / sizeof bads[0]; k++) {
        if (!(bads[k].kinds & (1 << it->kind)))
            continue;
        bad_index_case(it, bads[k].v, bads[k].desc, NULL, 3, NULL);
        bad_index_case(it, bads[k].v, bads[k].desc, padded, 3, NULL);
    }
}
END_TEST

/* After a bad-index failure the operator still works, on every backend. */
START_TEST(test_unpool_usable_after_bad_index)
{
    const up_case c = {CLOPS_DATA_TYPE_INT32, &index_types[2], {1, 1, 2, 2}, NULL, NULL, {1, 1, 3, 3}, NULL, 0};
    up_descs d;
    up_describe(&c, &d);
    const int32_t x[4] = {11, 22, 33, 44};
    const int64_t bad[4] = {0, 4, -1, 8}, good[4] = {8, 4, 0, 2};
    const int32_t want[9] = {33, 0, 44, 0, 22, 0, 0, 0, 11};
    for (int bi = 0; bi < tc_backend_count(); bi++) {
        clops_operator *op = tc_create(tc_backend(bi), &d.desc, "usable after bad index", tc_backend_name(bi));
        int32_t y[9];
        for (int i = 0; i < 9; i++)
            y[i] = -7;
        clops_host_buffers hb = {x, sizeof x, bad, sizeof bad, y, sizeof y};
        clops_status st = clops_operator_execute_host(op, &hb);
        ck_assert_msg(st == CLOPS_ERROR_INDEX_OUT_OF_RANGE, "[%s] bad index -1: %s", tc_backend_name(bi),
                      clops_status_name(st));
        for (int i = 0; i < 9; i++)
            ck_assert_msg(y[i] == -7, "[%s] output element %d written (%d) despite the error", tc_backend_name(bi), i,
                          (int)y[i]);
        hb.indices = good;
        st = clops_operator_execute_host(op, &hb);
        ck_assert_msg(st == CLOPS_SUCCESS, "[%s] good indices after a failure: %s (%s)", tc_backend_name(bi),
                      clops_status_name(st), clops_last_error_message());
        ck_assert_msg(memcmp(y, want, sizeof want) == 0, "[%s] wrong output after recovering from a bad index",
                      tc_backend_name(bi));
        clops_operator_free(op);
    }
}
END_TEST

/* The message of a bad index names it, its input position and the limit it
 * broke (its plane's elements for per-plane indices), on the host and on the
 * device, on the serial plan and the general path (issue 33: the device said "not
 * below the output's 384 elements" where the limit was the plane's 24). */
START_TEST(test_unpool_bad_index_message)
{
    const int per_plane = _i % 2, large = _i / 2 % 2;
    const index_type_info *it = &index_types[_i / 4 % 3];
    /* 16 planes; small: 2x3 into 4x6 (24 per plane, 384 in all); large: 40x40 into 170x170 (general path) */
    const uint32_t h = large ? 40 : 2, w = large ? 40 : 3, oh = large ? 170 : 4, ow = large ? 170 : 6;
    const up_case c = {CLOPS_DATA_TYPE_UINT16, it, {1, 16, h, w}, NULL, NULL, {1, 16, oh, ow}, NULL, 0};
    up_descs d;
    up_describe_layout(&c, per_plane ? CLOPS_INDICES_PER_PLANE : CLOPS_INDICES_FLAT, &d);
    const uint64_t n = 16ull * h * w, plane = (uint64_t)oh * ow, count = 16 * plane;
    const uint64_t first = (5ull * h + 1) * w + 2, later = n - 1; /* input [0, 5, 1, 2], then the last */
    uint64_t *flat = tc_malloc(n * 8);
    for (uint64_t k = 0; k < n; k++)
        flat[k] = per_plane ? k * 7 % plane : (k / (h * w)) * plane + k * 7 % plane;
    const uint64_t bad = per_plane ? plane + 3 : count + 3;
    flat[first] = bad;
    flat[later] = bad + 1;
    unsigned char *idx = tc_malloc(n * it->size), *x = tc_malloc(n * 2), *y = tc_malloc(count * 2);
    store_indices(it, flat, n, idx);
    tc_fill_random(x, n * 2, 77);
    char want[160];
    if (per_plane)
        snprintf(want, sizeof want, "index %llu at input [0, 5, 1, 2] is outside its output plane's %llu elements",
                 (unsigned long long)bad, (unsigned long long)plane);
    else
        snprintf(want, sizeof want, "index %llu at input [0, 5, 1, 2] is outside the output's %llu elements",
                 (unsigned long long)bad, (unsigned long long)count);
    /* execute_host writes nothing after a bad index, and says so on the device too
     * (issue 38 Q9: the device's message said "the rest written" there) */
    for (int bi = 0; bi < tc_backend_count(); bi++) {
        clops_operator *op = tc_create(tc_backend(bi), &d.desc, "bad index message", tc_backend_name(bi));
        clops_host_buffers hb = {x, n * 2, idx, n * it->size, y, count * 2};
        memset(y, 0xA5, count * 2);
        const clops_status st = clops_operator_execute_host(op, &hb);
        ck_assert_msg(st == CLOPS_ERROR_INDEX_OUT_OF_RANGE, "[%s] %s", tc_backend_name(bi), clops_status_name(st));
        ck_assert_msg(strstr(clops_last_error_message(), want) != NULL, "[%s] %s %s indices, %s: message \"%s\", want \"%s\"",
                      tc_backend_name(bi), it->name, per_plane ? "per-plane" : "flat", large ? "large" : "small",
                      clops_last_error_message(), want);
        ck_assert_msg(strstr(clops_last_error_message(), "; nothing was written to the output") &&
                          !strstr(clops_last_error_message(), "the rest written"),
                      "[%s] %s", tc_backend_name(bi), clops_last_error_message());
        for (uint64_t k = 0; k < count * 2; k++)
            ck_assert_msg(y[k] == 0xA5, "[%s] output byte %llu written", tc_backend_name(bi), (unsigned long long)k);
        clops_operator_free(op);
    }
    free(flat);
    free(idx);
    free(x);
    free(y);
}
END_TEST

/* Issue 38 Q8: on the host fallback over cl_mem (no compiler, no cache) a bad
 * index is counted, and the count's message names the limit of the layout: a
 * per-plane index 20 in planes of 16 (32 elements in all) was reported as "not
 * below the output's 32 elements". The good elements are written, the bad one
 * skipped, on both layouts. */
START_TEST(test_unpool_fallback_bad_count_message)
{
    if (!tc_dev_ctx) return;
    clops_context_options o;
    ck_assert_int_eq(clops_context_options_init(&o, sizeof o), CLOPS_SUCCESS);
    o.disable = CLOPS_CAPABILITY_COMPILER;
    o.cache = CLOPS_CACHE_POLICY_OFF;
    cl_context cl = clops_context_cl_context(tc_dev_ctx);
    cl_command_queue q = clops_context_queue(tc_dev_ctx);
    cl_device_id dev = NULL;
    ck_assert_int_eq(clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL), CL_SUCCESS);
    clops_context *ctx = NULL;
    ck_assert_int_eq(clops_context_create_from_cl_with_options(cl, dev, q, &o, &ctx), CLOPS_SUCCESS);
    const float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    /* input [0, 1, 0, 1] (element 5) is the bad one: 20 per plane (planes of 16), 40 flat (32 in all) */
    static const uint32_t idx[2][8] = {{0, 5, 10, 15, 1, 20, 6, 11}, {0, 5, 10, 15, 17, 40, 22, 27}};
    static const char *const limit[2] = {"not below its output plane's 16 elements (per-plane indices)",
                                         "not below the output's 32 elements"};
    const up_case c = {CLOPS_DATA_TYPE_FLOAT32, &index_types[0], {1, 2, 2, 2}, NULL, NULL, {1, 2, 4, 4}, NULL, 0};
    cl_int err;
    cl_mem bx = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof x, (void *)x, &err);
    cl_mem by = clCreateBuffer(cl, CL_MEM_READ_WRITE, 32 * sizeof(float), NULL, &err);
    ck_assert(bx && by);
    for (int flat = 0; flat < 2; flat++) {
        up_descs d;
        up_describe_layout(&c, flat ? CLOPS_INDICES_FLAT : CLOPS_INDICES_PER_PLANE, &d);
        clops_operator *op = NULL;
        ck_assert_int_eq(clops_operator_create(ctx, &d.desc, &op), CLOPS_SUCCESS);
        clops_operator_info info;
        ck_assert_int_eq(clops_operator_get_info(op, &info), CLOPS_SUCCESS);
        ck_assert_msg(info.backend == CLOPS_BACKEND_HOST, "without a compiler the operator should fall back");
        cl_mem bi = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof idx[flat], (void *)idx[flat],
                                   &err);
        ck_assert(bi);
        const clops_buffers b = {bx, bi, by};
        clops_status st = clops_operator_execute(op, &b, 0, NULL, NULL);
        ck_assert_msg(st == CLOPS_SUCCESS, "execute: %s (%s)", clops_status_name(st), clops_last_error_message());
        st = clops_operator_last_status(op);
        const char *msg = clops_last_error_message();
        ck_assert_msg(st == CLOPS_ERROR_INDEX_OUT_OF_RANGE && strstr(msg, "1 index is negative or ") &&
                          strstr(msg, limit[flat]) && strstr(msg, "it was skipped, the rest written"),
                      "%s: %s (%s)", flat ? "flat" : "per-plane", clops_status_name(st), msg);
        float y[32], want[32] = {0};
        ck_assert_int_eq(clEnqueueReadBuffer(q, by, CL_TRUE, 0, sizeof y, y, 0, NULL, NULL), CL_SUCCESS);
        for (int k = 0; k < 8; k++)
            if (k != 5) want[(flat ? 0 : k / 4 * 16) + idx[flat][k]] = x[k];
        ck_assert_msg(memcmp(y, want, sizeof y) == 0, "%s: the good elements not written as they should be",
                      flat ? "flat" : "per-plane");
        clReleaseMemObject(bi);
        clops_operator_free(op);
    }
    clReleaseMemObject(bx);
    clReleaseMemObject(by);
    clops_context_free(ctx);
}
END_TEST

/* Empty output (count 0) with a non-empty input: every index is out of range. */
START_TEST(test_unpool_empty_output)
{
    const float x[4] = {1, 2, 3, 4};
    const uint32_t idx[4] = {0, 0, 0, 0};
    up_case c = {CLOPS_DATA_TYPE_FLOAT32, &index_types[0], {1, 1, 2, 2}, NULL, NULL, {1, 1, 0, 0}, NULL, 2};
    up_run(&c, x, idx, CLOPS_ERROR_INDEX_OUT_OF_RANGE, "empty output, index 0 is past it");
}
END_TEST

/* ---- duplicates with different values --------------------------------------------------------------- */
static const clops_data_type dup_types[] = {
    CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_FLOAT16, CLOPS_DATA_TYPE_FLOAT32, CLOPS_DATA_TYPE_FLOAT64,
    CLOPS_DATA_TYPE_INT64, CLOPS_DATA_TYPE_COMPLEX128, CLOPS_DATA_TYPE_BOOL,
};
#define NUM_DUP_TYPES (sizeof dup_types / sizeof dup_types[0])
#define DUP_CASES (NUM_DUP_TYPES * 3)

/* Unpools `n` random values (from `seed`) through the `n` flat indices `flat` with
 * case `c` (n: the elements of its input and index spans), `runs` times, on every
 * path or on `only`: every run must match the reference's last writer. */
static void unpool_runs(const up_case *c, const uint64_t *flat, size_t n, uint64_t seed, int runs, const char *what,
                        clops_context *only)
{
    const size_t es = tc_type(c->type)->size;
    unsigned char *x = tc_malloc(n * es), *idx = tc_malloc(n * c->it->size);
    tc_fill_random(x, n * es, seed);
    store_indices(c->it, flat, n, idx);
    for (int run = 0; run < runs; run++) {
        char label[128];
        snprintf(label, sizeof label, "%s, run %d of %d", what, run + 1, runs);
        up_run_on(c, x, idx, CLOPS_SUCCESS, label, only);
    }
    free(x);
    free(idx);
}

START_TEST(test_unpool_duplicates_last_wins)
{
    clops_data_type t = dup_types[_i % NUM_DUP_TYPES];
    const index_type_info *it = &index_types[_i / NUM_DUP_TYPES];
    uint64_t *flat = tc_malloc(4096 * sizeof *flat);

    /* 2x3x8x8 = 384 random values into 2x3x2x2 = 24 places, ~16 writers each. */
    uint64_t s = 31337u + (uint64_t)_i;
    for (size_t k = 0; k < 384; k++)
        flat[k] = tc_rng_next(&s) % 24;
    up_case r = {t, it, {2, 3, 8, 8}, NULL, NULL, {2, 3, 2, 2}, NULL, 4};
    unpool_runs(&r, flat, 384, 31337u + (uint64_t)_i, 5, "duplicates (random, 16 per place)", NULL);

    /* 1x1x64x64 = 4096 writers on the same two places (alternating). */
    for (size_t k = 0; k < 4096; k++)
        flat[k] = k % 2 ? 3 : 0;
    up_case two = {t, it, {1, 1, 64, 64}, NULL, NULL, {1, 1, 2, 2}, NULL, 4};
    unpool_runs(&two, flat, 4096, 999u + (uint64_t)_i, 5, "duplicates (4096 writers on 2 places)", NULL);

    /* NHWC input and indices: "last" is in logical row-major (n, c, h, w)
     * order, not memory order. 1x3x4x4 into 1x3x2x2, 4 writers per place. */
    const uint64_t nhwc[4] = {48, 1, 12, 3};
    for (size_t k = 0; k < 48; k++)
        flat[k] = (k * 5) % 12; /* in memory order; spread over the 12 places */
    up_case h = {t, it, {1, 3, 4, 4}, nhwc, nhwc, {1, 3, 2, 2}, NULL, 4};
    unpool_runs(&h, flat, 48, 4242u + (uint64_t)_i, 5, "duplicates through NHWC strides", NULL);
    free(flat);
}
END_TEST

/* Hand-checked: the last writer in row-major order wins. */
START_TEST(test_unpool_duplicates_explicit)
{
    const uint16_t x[6] = {0x1111, 0x2222, 0x3333, 0x4444, 0x5555, 0x6666}; /* 1x1x2x3 UINT16 */
    const uint32_t idx[6] = {2, 0, 2, 1, 0, 2};
    const uint16_t want[4] = {0x5555, 0x4444, 0x6666, 0}; /* 1x1x2x2 */
    const up_case c = {CLOPS_DATA_TYPE_UINT16, &index_types[0], {1, 1, 2, 3}, NULL, NULL, {1, 1, 2, 2}, NULL, 0};
    up_descs d;
    up_describe(&c, &d);
    for (int bi = 0; bi < tc_backend_count(); bi++) {
        clops_operator *op = tc_create(tc_backend(bi), &d.desc, "explicit duplicates", tc_backend_name(bi));
        for (int run = 0; run < 5; run++) {
            uint16_t y[4] = {0xdead, 0xdead, 0xdead, 0xdead};
            clops_host_buffers hb = {x, sizeof x, idx, sizeof idx, y, sizeof y};
            clops_status st = clops_operator_execute_host(op, &hb);
            ck_assert_msg(st == CLOPS_SUCCESS, "[%s] %s", tc_backend_name(bi), clops_status_name(st));
            for (int k = 0; k < 4; k++)
                ck_assert_msg(y[k] == want[k],
                              "[%s] run %d: indices {2,0,2,1,0,2}, values {1111..6666}: y[%d] = %04x, want %04x "
                              "(last writer in row-major order)",
                              tc_backend_name(bi), run, k, y[k], want[k]);
        }
        clops_operator_free(op);
    }
}
END_TEST

/* ---- empty inputs ------------------------------------------------------------------------------------- */
START_TEST(test_unpool_empty_input)
{
    static const clops_data_type types[] = {CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_FLOAT32, CLOPS_DATA_TYPE_COMPLEX128};
    static const uint32_t empties[][4] = {{1, 2, 0, 3}, {1, 2, 3, 0}, {1, 2, 0, 0}};
    const uint64_t padded[4] = {2 * (4 * 6 + 2), 4 * 6 + 2, 6, 1};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (size_t e = 0; e < sizeof empties / sizeof empties[0]; e++)
            for (int k = 0; k < 3; k++) {
                const uint32_t *s = empties[e];
                up_case c = {types[t], &index_types[k], {s[0], s[1], s[2], s[3]}, NULL, NULL, {1, 2, 4, 4}, NULL, 3};
                up_run(&c, NULL, NULL, CLOPS_SUCCESS, "empty input, non-empty output: all zeros");
                c.out_strides = padded;
                up_run(&c, NULL, NULL, CLOPS_SUCCESS, "empty input, padded output: zeros, gaps untouched");
            }
}
END_TEST

/* ---- strided tensors ---------------------------------------------------------------------------------- */
static const clops_data_type strided_types[] = {
    CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_FLOAT16, CLOPS_DATA_TYPE_FLOAT32,
    CLOPS_DATA_TYPE_FLOAT64, CLOPS_DATA_TYPE_COMPLEX128, CLOPS_DATA_TYPE_BOOL,
};
#define NUM_STRIDED_TYPES (sizeof strided_types / sizeof strided_types[0])
#define STRIDED_CASES (NUM_STRIDED_TYPES * 3)

START_TEST(test_unpool_strided)
{
    clops_data_type t = strided_types[_i % NUM_STRIDED_TYPES];
    const index_type_info *it = &index_types[_i / NUM_STRIDED_TYPES];
    size_t es = tc_type(t)->size;
    const uint32_t xs[4] = {2, 3, 8, 10};
    uint64_t xcount = 2 * 3 * 8 * 10;

    unsigned char *x = tc_malloc(xcount * es);
    tc_fill_random(x, xcount * es, 555u + (uint64_t)_i);
    uint32_t ps[4];
    unsigned char *vals = tc_malloc(120 * es);
    uint64_t flat[120];
    max_pool(t, x, xs, 2, 2, vals, flat, ps);
    unsigned char idx[120 * 8];
    store_indices(it, flat, 120, idx);

    /* Output: padded rows (stride 13 for W 10, plane gap 4, batch gap 9) and NHWC. */
    const uint64_t y_padded[4] = {3 * (8 * 13 + 4) + 9, 8 * 13 + 4, 13, 1};
    const uint64_t y_nhwc[4] = {8 * 10 * 3, 1, 10 * 3, 3};
    up_case c = {t, it, {ps[0], ps[1], ps[2], ps[3]}, NULL, NULL, {xs[0], xs[1], xs[2], xs[3]}, y_padded, 6};
    up_run(&c, vals, idx, CLOPS_SUCCESS, "2x2 pool, padded-row output");
    c.out_strides = y_nhwc;
    up_run(&c, vals, idx, CLOPS_SUCCESS, "2x2 pool, NHWC output");

    /* Strided input and indices too: NHWC values, padded indices (gathered from the packed ones). */
    const uint64_t x_nhwc[4] = {4 * 5 * 3, 1, 5 * 3, 3};
    const uint64_t i_pad[4] = {3 * (4 * 8 + 1) + 2, 4 * 8 + 1, 8, 1};
    size_t xspan = (size_t)tc_span(ps, x_nhwc), ispan = (size_t)tc_span(ps, i_pad);
    unsigned char *xs_buf = tc_malloc(xspan * es), *is_buf = tc_malloc(ispan * it->size);
    tc_fill_random(xs_buf, xspan * es, 1);
    memset(is_buf, 0xFF, ispan * it->size); /* gaps hold out-of-range indices that must not be read */
    for (uint32_t n = 0; n < ps[0]; n++)
        for (uint32_t ch = 0; ch < ps[1]; ch++)
            for (uint32_t h = 0; h < ps[2]; h++)
                for (uint32_t w = 0; w < ps[3]; w++) {
                    size_t k = ((n * ps[1] + ch) * ps[2] + h) * ps[3] + w;
                    size_t xo = n * x_nhwc[0] + ch * x_nhwc[1] + h * x_nhwc[2] + w * x_nhwc[3];
                    size_t io = n * i_pad[0] + ch * i_pad[1] + h * i_pad[2] + w * i_pad[3];
                    memcpy(xs_buf + xo * es, vals + k * es, es);
                    memcpy(is_buf + io * it->size, idx + k * it->size, it->size);
                }
    up_case c2 = {t, it, {ps[0], ps[1], ps[2], ps[3]}, x_nhwc, i_pad, {xs[0], xs[1], xs[2], xs[3]}, y_padded, 6};
    up_run(&c2, xs_buf, is_buf, CLOPS_SUCCESS, "NHWC input, padded indices (gaps 0xFF..), padded output");

    free(xs_buf);
    free(is_buf);
    free(vals);
    free(x);
}
END_TEST

/* ---- the caller's out-of-order queue ------------------------------------------------------------------- */
/* MaxUnpooling runs several commands (zero fill, scatter, verify, status read,
 * and the host fix-up of conflicting duplicates): on an out-of-order queue clops
 * must chain them with events. */
START_TEST(test_unpool_out_of_order_queue)
{
    clops_context *ooo = tc_ooo_context();
    if (!ooo) {
        fprintf(stderr, "SKIP test_unpool_out_of_order_queue: no OpenCL device or no out-of-order queues\n");
        return;
    }
    for (int k = 0; k < 3; k++) {
        const index_type_info *it = &index_types[k];
        /* Duplicates with different values: 2x3x16x16 into 2x3x4x4. */
        const size_t n = 2 * 3 * 16 * 16;
        uint64_t *flat = tc_malloc(n * sizeof *flat);
        uint64_t s = 777u + (uint64_t)k;
        for (size_t i = 0; i < n; i++)
            flat[i] = tc_rng_next(&s) % 96;
        up_case c = {CLOPS_DATA_TYPE_FLOAT32, it, {2, 3, 16, 16}, NULL, NULL, {2, 3, 4, 4}, NULL, 4};
        unpool_runs(&c, flat, n, 777u + (uint64_t)k, 3, "duplicates, out-of-order queue", ooo);
        /* No duplicates: a permutation (index i -> n-1-i) into a padded output. */
        for (size_t i = 0; i < n; i++)
            flat[i] = n - 1 - i;
        const uint64_t padded[4] = {3 * (16 * 19 + 2) + 1, 16 * 19 + 2, 19, 1};
        up_case p = {CLOPS_DATA_TYPE_FLOAT32, it, {2, 3, 16, 16}, NULL, NULL, {2, 3, 16, 16}, padded, 4};
        unpool_runs(&p, flat, n, 777u + (uint64_t)k, 1, "reversal permutation, padded output, out-of-order queue",
                    ooo);
        /* A bad index. */
        bad_index_case(it, 32, "== output count 32 (out-of-order queue)", NULL, 3, ooo);
        /* Empty input. */
        up_case e = {CLOPS_DATA_TYPE_FLOAT32, it, {2, 3, 0, 16}, NULL, NULL, {2, 3, 4, 4}, NULL, 4};
        up_run_on(&e, NULL, NULL, CLOPS_SUCCESS, "empty input, out-of-order queue", ooo);
        free(flat);
    }
}
END_TEST

static Suite *unpool_suite(void)
{
    Suite *s = suite_create("unpool");
    TCase *tc = tc_suite_case(s, "from_max_pool", -1);
    tcase_add_loop_test(tc, test_unpool_from_max_pool, 0, (int)POOL_CASES);

    tc = tc_suite_case(s, "bad_indices", -1);
    tcase_add_loop_test(tc, test_unpool_bad_indices, 0, 3);
    TC_TESTS(tc, test_unpool_usable_after_bad_index, test_unpool_empty_output);
    tcase_add_loop_test(tc, test_unpool_bad_index_message, 0, 12);
    tcase_add_test(tc, test_unpool_fallback_bad_count_message);

    tc = tc_suite_case(s, "duplicates", -1);
    tcase_add_loop_test(tc, test_unpool_duplicates_last_wins, 0, (int)DUP_CASES);
    tcase_add_test(tc, test_unpool_duplicates_explicit);

    tc = tc_suite_case(s, "out_of_order_queue", -1);
    tcase_add_test(tc, test_unpool_out_of_order_queue);

    tc = tc_suite_case(s, "empty", -1);
    tcase_add_test(tc, test_unpool_empty_input);

    tc = tc_suite_case(s, "strided", -1);
    tcase_add_loop_test(tc, test_unpool_strided, 0, (int)STRIDED_CASES);
    return s;
}

int main(void)
{
    return tc_main(unpool_suite());
}
