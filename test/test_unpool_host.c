/*
 * test_unpool_host.c - MaxUnpooling's indices_layout and its host kernels on
 * several threads (issue 23).
 *
 *   layout      CLOPS_INDICES_PER_PLANE: the element of plane p = n*C + c with
 *               index i goes to flat output position p*H_out*W_out + i, valid
 *               iff 0 <= i < H_out*W_out; checked on every path (clops_host_run,
 *               execute_host and cl_mem on the host backend and the device,
 *               test_unpool_common.h) against the reference of the same indices
 *               made flat, and the flat indices themselves, with input and
 *               indices strided independently; an index one past its plane, a
 *               negative INT64 or a UINT64 of 2^32 plus a valid index is out of
 *               range (host output untouched, the cl_mem path writes the rest);
 *               an unknown layout is CLOPS_ERROR_INVALID_INDICES_LAYOUT.
 *   threads     tensors past the 4 MiB where the host kernels take threads, run
 *               on host contexts of 1, 2, 3 and 16 threads, each against the
 *               serial reference, each run on more than one thread when asked
 *               (the CLOPS_TEST_HOOKS seam clops_test_unpool_threads): indices
 *               from a real 3x3/2 (padding 1) and 2x2 max pool, random,
 *               duplicate-heavy (the last in input order wins across the
 *               threads' ranges), distinct scattered, per-plane, and strided
 *               tensors with gaps (input, indices and output each their own
 *               layout); bad indices (past the output, 2^32 plus a valid one,
 *               negative INT64) in a later thread's range leave the output
 *               untouched and name the first one. One tensor over 4 MiB with bad
 *               indices on every path, and on cl_mem through the host fallback
 *               (skip mode) on three threads.
 *   buckets     the scattered-index path (inputs bucketed by output tile, then
 *               replayed per tile in input order; CLOPS_TEST_HOOKS seams
 *               clops_test_unpool_force and clops_test_unpool_path): forced on
 *               every pattern above, widths 1-16, flat and per-plane, strided
 *               tensors, bad indices in a later thread's range (nothing written,
 *               the first named; skip mode on cl_mem), on 1, 2, 3 and 16
 *               threads against the serial reference; chosen unforced for
 *               random and distinct scattered indices on several threads (the
 *               bands for pooling-shaped ones); its allocation failed (the band
 *               path runs instead: the same bits, no error).
 *
 * Not covered: CLOPS_ERROR_OUT_OF_HOST_MEMORY from the host plan's malloc (more
 * than 64 chunks): clops has no allocation seam to fail it through (the
 * buckets' allocation has one, and its failure is no error).
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "test_unpool_common.h"

#include "host/host.h" /* clops_test_unpool_threads (clops_testable) */

/* Logical indices vals[k] (int64 bits) stored through the case's index strides; gaps 0xA5. */
static void *put_indices(const up_case *c, const uint64_t *vals)
{
    const size_t bytes = (size_t)tc_span(c->in_sizes, c->idx_strides) * c->it->size;
    unsigned char *buf = tc_malloc(bytes ? bytes : 1);
    memset(buf, 0xA5, bytes);
    const uint64_t n = ref_element_count(c->in_sizes);
    for (uint64_t k = 0; k < n; k++) store_indices(c->it, &vals[k], 1, buf + up_index_offset(c, k) * c->it->size);
    return buf;
}

/* up_run_layout for per-plane indices. On an OpenCL context they run on the host
 * until the device kernels take them (the fallback reason says so): only that
 * fallback is accepted (CLOPS_TEST_ALLOW_FALLBACK for the run), no other. */
static long run_per_plane(const up_case *c, const void *x, const void *idx, clops_status want, const char *what)
{
    bool allow = false;
    if (tc_dev_ctx) {
        up_descs d;
        up_describe_layout(c, CLOPS_INDICES_PER_PLANE, &d);
        clops_operator *op = NULL;
        clops_operator_info info;
        ck_assert_int_eq(clops_operator_create(tc_dev_ctx, &d.desc, &op), CLOPS_SUCCESS);
        ck_assert_int_eq(clops_operator_get_info(op, &info), CLOPS_SUCCESS);
        allow = info.backend == CLOPS_BACKEND_HOST && strstr(info.fallback_reason, "per-plane indices");
        clops_operator_free(op);
    }
    const char *was = getenv("CLOPS_TEST_ALLOW_FALLBACK");
    char *saved = was ? tc_memdup(was, strlen(was) + 1) : NULL;
    if (allow) setenv("CLOPS_TEST_ALLOW_FALLBACK", "1", 1);
    const long bad = up_run_layout(c, CLOPS_INDICES_PER_PLANE, x, idx, want, what, NULL);
    if (saved) setenv("CLOPS_TEST_ALLOW_FALLBACK", saved, 1);
    else unsetenv("CLOPS_TEST_ALLOW_FALLBACK");
    free(saved);
    return bad;
}

static size_t span_bytes(const uint32_t sizes[4], const uint64_t *strides, clops_data_type t)
{
    return (size_t)tc_span(sizes, strides) * tc_type(t)->size;
}

/* ---- per-plane against flat ------------------------------------------------------------------ */

static const uint64_t nhwc_in[4] = {5 * 4 * 3, 1, 4 * 3, 3};         /* {2, 3, 5, 4} as NHWC */
static const uint64_t rows6_in[4] = {3 * 5 * 6, 5 * 6, 6, 1};        /* {2, 3, 5, 4}, rows of 6 */
static const uint64_t padded_out[4] = {3 * 10 * 12, 10 * 12, 12, 1}; /* {2, 3, 10, 8}, rows of 12 */

static const struct {
    clops_data_type type;
    uint32_t in[4], out[4];
    const uint64_t *in_strides, *idx_strides, *out_strides;
} plane_shapes[] = {
    {CLOPS_DATA_TYPE_FLOAT32, {2, 3, 5, 4}, {2, 3, 10, 8}, NULL, NULL, NULL},               /* windows-shaped */
    {CLOPS_DATA_TYPE_UINT8, {2, 3, 5, 4}, {2, 3, 9, 7}, NULL, NULL, NULL},                  /* general shape */
    {CLOPS_DATA_TYPE_FLOAT16, {2, 3, 5, 4}, {2, 3, 10, 8}, nhwc_in, rows6_in, padded_out},  /* three layouts */
    {CLOPS_DATA_TYPE_INT32, {2, 3, 5, 4}, {2, 3, 10, 8}, NULL, nhwc_in, NULL},              /* indices NHWC only */
    {CLOPS_DATA_TYPE_FLOAT64, {3, 5, 40, 40}, {3, 5, 80, 80}, NULL, NULL, NULL},            /* past the serial plan */
    {CLOPS_DATA_TYPE_INT16, {2, 7, 33, 30}, {2, 7, 67, 61}, NULL, NULL, NULL},              /* general, past serial */
    {CLOPS_DATA_TYPE_COMPLEX128, {1, 2, 1, 1}, {1, 2, 1, 1}, NULL, NULL, NULL},             /* one element a plane */
};
#define PLANE_SHAPES (sizeof plane_shapes / sizeof plane_shapes[0])

/* Per-plane indices (duplicates included, some planes all on one element) on
 * every path, and the same indices made flat; then one bad index: one past its
 * plane (flat: past the output), -1 (INT64), 2^32 plus a valid index (UINT64,
 * whose low 32 bits alone would be valid). */
START_TEST(test_per_plane_against_flat)
{
    const int shape = _i / 3;
    const index_type_info *it = &index_types[_i % 3];
    up_case c = {plane_shapes[shape].type, it, {0}, plane_shapes[shape].in_strides, plane_shapes[shape].idx_strides,
                 {0}, plane_shapes[shape].out_strides, 3};
    memcpy(c.in_sizes, plane_shapes[shape].in, sizeof c.in_sizes);
    memcpy(c.out_sizes, plane_shapes[shape].out, sizeof c.out_sizes);
    const uint64_t n = ref_element_count(c.in_sizes), plane_in = (uint64_t)c.in_sizes[2] * c.in_sizes[3];
    const uint64_t plane_out = (uint64_t)c.out_sizes[2] * c.out_sizes[3];
    uint64_t *per = tc_malloc(n * 8), *flat = tc_malloc(n * 8), rng = 0x5eed + (uint64_t)_i;
    for (uint64_t k = 0; k < n; k++) {
        const uint64_t p = k / plane_in;
        per[k] = p % 4 == 3 ? plane_out - 1 : tc_rng_next(&rng) % plane_out; /* plane 3: all the same */
        flat[k] = p * plane_out + per[k];
    }
    const size_t xb = span_bytes(c.in_sizes, c.in_strides, c.type);
    void *x = tc_malloc(xb);
    tc_fill_random(x, xb, rng);
    static const char *const rounds[4] = {"", ", one index = H*W", ", index -1", ", index 2^32 + a valid one"};
    for (int round = 0; round < 4; round++) {
        if (round == 2 && it->type != CLOPS_DATA_TYPE_INT64) continue;
        if (round == 3 && it->type != CLOPS_DATA_TYPE_UINT64) continue;
        const uint64_t k_bad = n / 2, saved = per[k_bad], saved_flat = flat[k_bad];
        if (round == 1) per[k_bad] = plane_out, flat[k_bad] = ref_element_count(c.out_sizes);
        if (round == 2) per[k_bad] = flat[k_bad] = UINT64_MAX; /* -1 as INT64 bits */
        if (round == 3) per[k_bad] += UINT64_C(1) << 32, flat[k_bad] += UINT64_C(1) << 32;
        char what[96];
        snprintf(what, sizeof what, "per-plane against flat%s", rounds[round]);
        const clops_status want = round ? CLOPS_ERROR_INDEX_OUT_OF_RANGE : CLOPS_SUCCESS;
        void *idx = put_indices(&c, per), *fidx = put_indices(&c, flat);
        ck_assert_int_eq(run_per_plane(&c, x, idx, want, what), round ? 1 : 0);
        ck_assert_int_eq(up_run(&c, x, fidx, want, what), round ? 1 : 0);
        if (round) {
            up_descs d;
            up_describe_layout(&c, CLOPS_INDICES_PER_PLANE, &d);
            const size_t yb = span_bytes(c.out_sizes, c.out_strides, c.type);
            void *out = tc_malloc(yb);
            const clops_host_buffers hb = {x, xb, idx, tc_tensor_bytes(&d.i), out, yb};
            ck_assert_int_eq(clops_host_run(&d.desc, &hb), CLOPS_ERROR_INDEX_OUT_OF_RANGE);
            ck_assert_msg(strstr(clops_last_error_message(), "per-plane"), "%s: message \"%s\" does not say per-plane",
                          what, clops_last_error_message());
            free(out);
        }
        per[k_bad] = saved, flat[k_bad] = saved_flat;
        free(idx), free(fidx);
    }
    free(per), free(flat), free(x);
}
END_TEST

/* An unknown layout: CLOPS_ERROR_INVALID_INDICES_LAYOUT everywhere a descriptor is checked. */
START_TEST(test_invalid_layout)
{
    const int bad_layouts[] = {2, -1, 0x7fffffff};
    const up_case c = {CLOPS_DATA_TYPE_FLOAT32, &index_types[2], {1, 1, 2, 2}, NULL, NULL, {1, 1, 4, 4}, NULL, 0};
    float x[4] = {1, 2, 3, 4}, y[16];
    int64_t idx[4] = {0, 1, 2, 3};
    for (size_t i = 0; i < sizeof bad_layouts / sizeof bad_layouts[0]; i++) {
        up_descs d;
        up_describe_layout(&c, (clops_indices_layout)bad_layouts[i], &d);
        ck_assert_int_eq(clops_operator_validate(&d.desc), CLOPS_ERROR_INVALID_INDICES_LAYOUT);
        ck_assert_msg(strstr(clops_last_error_message(), "indices_layout"), "message: %s", clops_last_error_message());
        memset(y, 0x5a, sizeof y);
        const clops_host_buffers hb = {x, sizeof x, idx, sizeof idx, y, sizeof y};
        ck_assert_int_eq(clops_host_run(&d.desc, &hb), CLOPS_ERROR_INVALID_INDICES_LAYOUT);
        for (size_t k = 0; k < sizeof y; k++) ck_assert_int_eq(((unsigned char *)y)[k], 0x5a);
        for (int bi = 0; bi < tc_backend_count(); bi++) {
            clops_operator *op = (clops_operator *)&d; /* must come back NULL */
            ck_assert_int_eq(clops_operator_create(tc_backend(bi), &d.desc, &op), CLOPS_ERROR_INVALID_INDICES_LAYOUT);
            ck_assert_ptr_null(op);
        }
    }
}
END_TEST

/* ---- several threads -------------------------------------------------------------------------- */

enum { PAT_POOL3, PAT_POOL2, PAT_RANDOM, PAT_DUPLICATES, PAT_DISTINCT, PAT_PLANE_RANDOM, PAT_COUNT };
static const char *const pat_names[PAT_COUNT] = {"max_pool2d(3, 2, 1)", "max_pool2d(2, 2)", "random",
                                                 "duplicate-heavy", "distinct scattered", "random in plane"};

/* Flat positions for pattern `pat` of an input `in` into output `out`. Pools run
 * on random small values over the output's shape (ties: the first in the window,
 * as PyTorch; overlapping windows then name one element from several inputs). */
static void make_positions(int pat, const uint32_t in[4], const uint32_t out[4], uint64_t seed, uint64_t *pos)
{
    const uint64_t n = ref_element_count(in), count = ref_element_count(out);
    const uint64_t hw_in = (uint64_t)in[2] * in[3], hw_out = (uint64_t)out[2] * out[3];
    uint64_t rng = seed;
    if (pat == PAT_POOL3 || pat == PAT_POOL2) {
        const int k = pat == PAT_POOL3 ? 3 : 2, s = 2, pad = pat == PAT_POOL3 ? 1 : 0;
        unsigned char *v = tc_malloc(count);
        for (uint64_t e = 0; e < count; e++) v[e] = (unsigned char)(tc_rng_next(&rng) % 5);
        for (uint64_t e = 0; e < n; e++) {
            const uint64_t p = e / hw_in, oh = e % hw_in / in[3], ow = e % in[3];
            int best = -1;
            uint64_t arg = 0;
            for (int dh = 0; dh < k; dh++)
                for (int dw = 0; dw < k; dw++) {
                    const int64_t h = (int64_t)(oh * s) - pad + dh, w = (int64_t)(ow * s) - pad + dw;
                    if (h < 0 || w < 0 || h >= (int64_t)out[2] || w >= (int64_t)out[3]) continue;
                    const uint64_t at = p * hw_out + (uint64_t)h * out[3] + (uint64_t)w;
                    if (v[at] > best) best = v[at], arg = at;
                }
            pos[e] = arg;
        }
        free(v);
        return;
    }
    for (uint64_t e = 0; e < n; e++) {
        const uint64_t r = tc_rng_next(&rng);
        switch (pat) {
        case PAT_RANDOM: pos[e] = r % count; break;
        case PAT_DUPLICATES: pos[e] = (r % 61) * (count / 61) + e % 2; break;
        case PAT_DISTINCT: /* a bijection: the factor is odd and no multiple of 3 */
            pos[e] = (e * 2654435761u + 12345) % count;
            break;
        default: pos[e] = e / hw_in * hw_out + r % hw_out; break;
        }
    }
}

static const struct {
    clops_data_type type;
    uint32_t in[4], out[4];
} big_shapes[] = {
    {CLOPS_DATA_TYPE_UINT8, {4, 16, 128, 128}, {4, 16, 256, 256}},   /* 4 MiB output */
    {CLOPS_DATA_TYPE_FLOAT32, {2, 8, 128, 128}, {2, 8, 256, 256}},   /* 4 MiB */
    {CLOPS_DATA_TYPE_COMPLEX128, {1, 3, 128, 256}, {1, 3, 256, 512}}, /* 6 MiB */
};
#define BIG_SHAPES (sizeof big_shapes / sizeof big_shapes[0])
static const unsigned thread_counts[] = {1, 2, 3, 16};

static clops_context *host_context(unsigned threads)
{
    clops_context_options o;
    ck_assert_int_eq(clops_context_options_init(&o, sizeof o), CLOPS_SUCCESS);
    o.device = CLOPS_DEVICE_HOST;
    o.host_threads = threads;
    clops_context *ctx = NULL;
    ck_assert_int_eq(clops_context_create_with_options(&o, &ctx), CLOPS_SUCCESS);
    return ctx;
}

/* The host kernels of the last run took `threads` when asked for them: more
 * than one distinct thread ran a pass (one when one was asked). */
static void check_threads_ran(unsigned threads, const char *label, const char *path)
{
    const unsigned ran = clops_test_unpool_threads;
    ck_assert_msg(threads > 1 ? ran > 1 && ran <= threads : ran == 1, "%s [%s]: the host kernels ran on %u threads",
                  label, path, ran);
}

/* The path each run must take (0: either), set by the bucket tests. */
static unsigned want_path;

static void check_path(const char *label, const char *path)
{
    const unsigned got = clops_test_unpool_path;
    ck_assert_msg(!want_path || got == want_path, "%s [%s]: took the %s path", label, path,
                  got == CLOPS_UNPOOL_BUCKETS ? "buckets" : "bands");
}

/* Executes case `c` (indices in `layout`) on host contexts of each thread
 * count; every result against `want` (and the status, and `want_text` in the
 * message). */
static void run_threads(const up_case *c, clops_indices_layout layout, const tc_bufs *b, clops_status want_st,
                        const void *want, const char *label, const char *want_text)
{
    up_descs d;
    up_describe_layout(c, layout, &d);
    void *out = tc_malloc(b->out_bytes);
    for (size_t t = 0; t < sizeof thread_counts / sizeof thread_counts[0]; t++) {
        char path[64];
        snprintf(path, sizeof path, "host, %u threads", thread_counts[t]);
        clops_context *ctx = host_context(thread_counts[t]);
        clops_operator *op = tc_create(ctx, &d.desc, label, path);
        clops_test_unpool_threads = 0;
        const clops_status st = tc_run_execute_host(op, b, out);
        ck_assert_msg(st == want_st, "%s [%s]: %s (%s)", label, path, clops_status_name(st),
                      clops_last_error_message());
        if (want_text)
            ck_assert_msg(strstr(clops_last_error_message(), want_text), "%s [%s]: message \"%s\" lacks \"%s\"", label,
                          path, clops_last_error_message(), want_text);
        tc_check_bytes(out, want, b->out_bytes, tc_type(c->type)->size, label, path);
        check_threads_ran(thread_counts[t], label, path);
        check_path(label, path);
        clops_operator_free(op);
        clops_context_free(ctx);
    }
    free(out);
}

/* Case `c` with logical indices `given` (`layout`) against the serial reference
 * on every thread count; returns the indices' buffer (the caller frees it). */
static void *check_threads(const up_case *c, clops_indices_layout layout, const uint64_t *given, const void *x,
                           const char *label)
{
    const size_t xb = span_bytes(c->in_sizes, c->in_strides, c->type);
    const size_t ib = (size_t)tc_span(c->in_sizes, c->idx_strides) * c->it->size;
    const size_t yb = span_bytes(c->out_sizes, c->out_strides, c->type);
    void *idx = put_indices(c, given), *init = tc_malloc(yb), *want = tc_malloc(yb);
    tc_fill_sentinel(init, yb);
    memcpy(want, init, yb);
    ck_assert_int_eq(up_reference(c, layout, x, idx, want), 0);
    const tc_bufs b = {x, xb, idx, ib, init, yb};
    run_threads(c, layout, &b, CLOPS_SUCCESS, want, label, NULL);
    free(init), free(want);
    return idx;
}

/* Positions of pattern `pat` for case `c`, per-plane when `per_plane`. */
static uint64_t *positions(const up_case *c, int pat, bool per_plane, uint64_t seed)
{
    const uint64_t n = ref_element_count(c->in_sizes), plane_in = (uint64_t)c->in_sizes[2] * c->in_sizes[3];
    const uint64_t plane_out = (uint64_t)c->out_sizes[2] * c->out_sizes[3];
    uint64_t *pos = tc_malloc(n * 8);
    make_positions(pat, c->in_sizes, c->out_sizes, seed, pos);
    if (per_plane)
        for (uint64_t k = 0; k < n; k++) pos[k] -= k / plane_in * plane_out;
    return pos;
}

/* "index V at input [n, c, h, w]" for logical input element k holding value v. */
static void bad_text(char *buf, size_t size, const up_case *c, uint64_t k, uint64_t v)
{
    const uint32_t *in = c->in_sizes;
    char value[24];
    if (c->it->type == CLOPS_DATA_TYPE_INT64) snprintf(value, sizeof value, "%lld", (long long)(int64_t)v);
    else snprintf(value, sizeof value, "%llu", (unsigned long long)v);
    snprintf(buf, size, "index %s at input [%llu, %llu, %llu, %llu]", value,
             (unsigned long long)(k / in[3] / in[2] / in[1]), (unsigned long long)(k / in[3] / in[2] % in[1]),
             (unsigned long long)(k / in[3] % in[2]), (unsigned long long)(k % in[3]));
}

START_TEST(test_threads_match_serial)
{
    const int shape = _i / PAT_COUNT, pat = _i % PAT_COUNT;
    const clops_indices_layout layouts[2] = {CLOPS_INDICES_FLAT, CLOPS_INDICES_PER_PLANE};
    for (int li = 0; li < 2; li++) {
        /* per-plane indices need positions inside each input's own plane */
        if (li == 1 && pat != PAT_POOL3 && pat != PAT_POOL2 && pat != PAT_PLANE_RANDOM) continue;
        const index_type_info *it = &index_types[(size_t)(_i + li) % 3];
        up_case c = {big_shapes[shape].type, it, {0}, NULL, NULL, {0}, NULL, 0};
        memcpy(c.in_sizes, big_shapes[shape].in, sizeof c.in_sizes);
        memcpy(c.out_sizes, big_shapes[shape].out, sizeof c.out_sizes);
        const uint64_t n = ref_element_count(c.in_sizes), plane_out = (uint64_t)c.out_sizes[2] * c.out_sizes[3];
        const size_t xb = span_bytes(c.in_sizes, NULL, c.type), yb = span_bytes(c.out_sizes, NULL, c.type);
        uint64_t *given = positions(&c, pat, li, 0xabc + (uint64_t)_i);
        void *x = tc_malloc(xb), *init = tc_malloc(yb);
        tc_fill_random(x, xb, (uint64_t)_i);
        tc_fill_sentinel(init, yb);
        char label[200], sa[64];
        snprintf(label, sizeof label, "%s indices, %s, %s, %s, %s", pat_names[pat], li ? "per-plane" : "flat",
                 tc_type(c.type)->name, it->name, tc_shape_str(sa, sizeof sa, c.in_sizes));
        void *idx = check_threads(&c, layouts[li], given, x, label);

        /* Two bad indices in the second half (another thread's range): nothing
         * written, the first one named. UINT32: past the output (plane);
         * UINT64: 2^32 plus a valid index; INT64: negative. */
        const uint64_t k1 = n / 2 + n / 5, k2 = n - 3;
        const uint64_t limit = li ? plane_out : ref_element_count(c.out_sizes);
        uint64_t v[2] = {limit, limit + 1};
        if (it->type == CLOPS_DATA_TYPE_UINT64)
            v[0] = (UINT64_C(1) << 32) + given[k1], v[1] = (UINT64_C(1) << 32) + given[k2];
        if (it->type == CLOPS_DATA_TYPE_INT64) v[0] = UINT64_MAX, v[1] = (uint64_t)INT64_MIN + given[k2];
        store_indices(it, &v[0], 1, (unsigned char *)idx + k1 * it->size);
        store_indices(it, &v[1], 1, (unsigned char *)idx + k2 * it->size);
        char where[128];
        bad_text(where, sizeof where, &c, k1, v[0]);
        const tc_bufs b = {x, xb, idx, (size_t)n * it->size, init, yb};
        run_threads(&c, layouts[li], &b, CLOPS_ERROR_INDEX_OUT_OF_RANGE, init, label, where);
        free(given), free(x), free(init), free(idx);
    }
}
END_TEST

/* Input, indices and output each in their own layout (NHWC, rows with gaps,
 * packed), on threads; bands start inside the output's padded rows. */
START_TEST(test_threads_strided)
{
    static const uint64_t nhwc[4] = {128 * 128 * 8, 1, 128 * 8, 8};         /* {2, 8, 128, 128} as NHWC */
    static const uint64_t rows[4] = {8 * 128 * 132, 128 * 132, 132, 1};      /* {2, 8, 128, 128}, rows of 132 */
    static const uint64_t out_rows[4] = {8 * 256 * 260, 256 * 260, 260, 1}; /* {2, 8, 256, 256}, rows of 260 */
    static const struct {
        int it;
        const uint64_t *in, *idx, *out;
        clops_indices_layout layout;
    } v[] = {
        {0, nhwc, rows, out_rows, CLOPS_INDICES_FLAT},
        {2, NULL, nhwc, out_rows, CLOPS_INDICES_PER_PLANE},
        {1, rows, NULL, NULL, CLOPS_INDICES_FLAT},
        {2, nhwc, nhwc, out_rows, CLOPS_INDICES_PER_PLANE},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        const up_case c = {CLOPS_DATA_TYPE_FLOAT32, &index_types[v[i].it], {2, 8, 128, 128}, v[i].in, v[i].idx,
                           {2, 8, 256, 256}, v[i].out, 0};
        const size_t xb = span_bytes(c.in_sizes, c.in_strides, c.type);
        uint64_t *given = positions(&c, PAT_POOL3, v[i].layout == CLOPS_INDICES_PER_PLANE, 77 + i);
        void *x = tc_malloc(xb);
        tc_fill_random(x, xb, 5 + i);
        char label[128];
        snprintf(label, sizeof label, "strided layouts %zu, %s, %s", i, c.it->name,
                 v[i].layout == CLOPS_INDICES_PER_PLANE ? "per-plane" : "flat");
        free(check_threads(&c, v[i].layout, given, x, label));
        free(given), free(x);
    }
}
END_TEST

/* Over 4 MiB with bad indices (-1, one past its plane, INT64_MIN plus a valid
 * index) on every path; then on cl_mem through the host fallback (an OpenCL
 * context with no compiler and no cache: the host path for any layout) on
 * three threads: skip mode, every good element written. */
START_TEST(test_big_bad_indices)
{
    const up_case c = {CLOPS_DATA_TYPE_FLOAT32, &index_types[2], {2, 8, 128, 128}, NULL, NULL, {2, 8, 256, 256},
                       NULL, 4};
    const uint64_t n = ref_element_count(c.in_sizes), plane_out = 256 * 256;
    uint64_t *given = positions(&c, PAT_POOL3, true, 99);
    given[n / 3] = UINT64_MAX, given[n / 2] = plane_out, given[n - 1] = (uint64_t)INT64_MIN + given[n - 1];
    const size_t xb = span_bytes(c.in_sizes, NULL, c.type), ib = (size_t)n * 8;
    const size_t yb = span_bytes(c.out_sizes, NULL, c.type) + c.tail * 4;
    void *x = tc_malloc(xb), *idx = put_indices(&c, given);
    tc_fill_random(x, xb, 42);
    const char *label = "over 4 MiB, per-plane, three bad indices";
    ck_assert_int_eq(run_per_plane(&c, x, idx, CLOPS_ERROR_INDEX_OUT_OF_RANGE, label), 3);
    if (!tc_skip_without_device("test_big_bad_indices, cl_mem fallback")) {
        clops_context_options o;
        ck_assert_int_eq(clops_context_options_init(&o, sizeof o), CLOPS_SUCCESS);
        o.disable = CLOPS_CAPABILITY_COMPILER;
        o.cache = CLOPS_CACHE_POLICY_OFF;
        o.host_threads = 3;
        clops_context *ctx = NULL;
        ck_assert_int_eq(clops_context_create_with_options(&o, &ctx), CLOPS_SUCCESS);
        up_descs d;
        up_describe_layout(&c, CLOPS_INDICES_PER_PLANE, &d);
        clops_operator *op = NULL;
        ck_assert_int_eq(clops_operator_create(ctx, &d.desc, &op), CLOPS_SUCCESS);
        clops_operator_info info;
        ck_assert_int_eq(clops_operator_get_info(op, &info), CLOPS_SUCCESS);
        ck_assert_msg(info.fallback_reason[0], "%s: the operator is not on the host path", label);
        void *init = tc_malloc(yb), *want = tc_malloc(yb), *out = tc_malloc(yb);
        tc_fill_sentinel(init, yb);
        memcpy(want, init, yb);
        ck_assert_int_eq(up_reference(&c, CLOPS_INDICES_PER_PLANE, x, idx, want), 3);
        const tc_bufs b = {x, xb, idx, ib, init, yb};
        for (unsigned force = CLOPS_UNPOOL_AUTO; force <= CLOPS_UNPOOL_BUCKETS; force++) {
            if (force == CLOPS_UNPOOL_BANDS) continue; /* AUTO takes the bands here */
            const char *path = force ? "cl_mem fallback, 3 threads, buckets" : "cl_mem fallback, 3 threads";
            clops_test_unpool_force = force;
            clops_test_unpool_threads = clops_test_unpool_path = 0;
            const clops_status st = tc_run_execute_cl(ctx, op, &b, out, label);
            ck_assert_msg(st == CLOPS_ERROR_INDEX_OUT_OF_RANGE, "%s [%s]: %s (%s)", label, path,
                          clops_status_name(st), clops_last_error_message());
            tc_check_bytes(out, want, yb, 4, label, path);
            check_threads_ran(3, label, path);
            ck_assert_msg(clops_test_unpool_path == (force ? CLOPS_UNPOOL_BUCKETS : CLOPS_UNPOOL_BANDS),
                          "%s [%s]: path %u", label, path, clops_test_unpool_path);
            clops_test_unpool_force = CLOPS_UNPOOL_AUTO;
        }
        clops_operator_free(op);
        clops_context_free(ctx);
        free(init), free(want), free(out);
    }
    free(given), free(x), free(idx);
}
END_TEST

/* ---- buckets (scattered indices) ------------------------------------------------------------ */

static void reset_force(void)
{
    clops_test_unpool_force = CLOPS_UNPOOL_AUTO;
    want_path = 0;
}

/* One shape per element width, outputs of 4-6 MiB (past the threads' 4 MiB). */
static const struct {
    clops_data_type type;
    uint32_t in[4], out[4];
} width_shapes[] = {
    {CLOPS_DATA_TYPE_UINT8, {4, 16, 128, 128}, {4, 16, 256, 256}},
    {CLOPS_DATA_TYPE_FLOAT16, {2, 16, 128, 128}, {2, 16, 256, 256}},
    {CLOPS_DATA_TYPE_FLOAT32, {2, 8, 128, 128}, {2, 8, 256, 256}},
    {CLOPS_DATA_TYPE_FLOAT64, {1, 8, 128, 128}, {1, 8, 256, 256}},
    {CLOPS_DATA_TYPE_COMPLEX128, {1, 3, 128, 256}, {1, 3, 256, 512}},
};
#define WIDTH_SHAPES (sizeof width_shapes / sizeof width_shapes[0])

/* Every pattern, forced through the buckets, each width, flat and (where the
 * pattern keeps to its plane) per-plane, against the serial reference; then two
 * bad indices in a later thread's range: nothing written, the first named. */
START_TEST(test_buckets_match_serial)
{
    const int shape = _i / PAT_COUNT, pat = _i % PAT_COUNT;
    const clops_indices_layout layouts[2] = {CLOPS_INDICES_FLAT, CLOPS_INDICES_PER_PLANE};
    clops_test_unpool_force = CLOPS_UNPOOL_BUCKETS;
    want_path = CLOPS_UNPOOL_BUCKETS;
    for (int li = 0; li < 2; li++) {
        if (li == 1 && pat != PAT_POOL3 && pat != PAT_POOL2 && pat != PAT_PLANE_RANDOM) continue;
        const index_type_info *it = &index_types[(size_t)(_i + li + 1) % 3];
        up_case c = {width_shapes[shape].type, it, {0}, NULL, NULL, {0}, NULL, 0};
        memcpy(c.in_sizes, width_shapes[shape].in, sizeof c.in_sizes);
        memcpy(c.out_sizes, width_shapes[shape].out, sizeof c.out_sizes);
        const uint64_t n = ref_element_count(c.in_sizes), plane_out = (uint64_t)c.out_sizes[2] * c.out_sizes[3];
        const size_t xb = span_bytes(c.in_sizes, NULL, c.type), yb = span_bytes(c.out_sizes, NULL, c.type);
        uint64_t *given = positions(&c, pat, li, 0xb0c + (uint64_t)_i);
        void *x = tc_malloc(xb), *init = tc_malloc(yb);
        tc_fill_random(x, xb, 7 + (uint64_t)_i);
        tc_fill_sentinel(init, yb);
        char label[200], sa[64];
        snprintf(label, sizeof label, "buckets, %s indices, %s, %s, %s, %s", pat_names[pat],
                 li ? "per-plane" : "flat", tc_type(c.type)->name, it->name, tc_shape_str(sa, sizeof sa, c.in_sizes));
        void *idx = check_threads(&c, layouts[li], given, x, label);
        const uint64_t k1 = n - n / 4 + 1, k2 = n - 2;
        const uint64_t limit = li ? plane_out : ref_element_count(c.out_sizes);
        uint64_t v[2] = {limit + 5, limit};
        if (it->type == CLOPS_DATA_TYPE_UINT64)
            v[0] = (UINT64_C(1) << 32) + given[k1], v[1] = (UINT64_C(1) << 33) + given[k2];
        if (it->type == CLOPS_DATA_TYPE_INT64) v[0] = (uint64_t)INT64_MIN + given[k1], v[1] = UINT64_MAX;
        store_indices(it, &v[0], 1, (unsigned char *)idx + k1 * it->size);
        store_indices(it, &v[1], 1, (unsigned char *)idx + k2 * it->size);
        char where[128];
        bad_text(where, sizeof where, &c, k1, v[0]);
        const tc_bufs b = {x, xb, idx, (size_t)n * it->size, init, yb};
        run_threads(&c, layouts[li], &b, CLOPS_ERROR_INDEX_OUT_OF_RANGE, init, label, where);
        free(given), free(x), free(init), free(idx);
    }
    reset_force();
}
END_TEST

/* Input, indices and output each in their own layout, random indices with
 * duplicates, forced through the buckets. */
START_TEST(test_buckets_strided)
{
    static const uint64_t nhwc[4] = {128 * 128 * 8, 1, 128 * 8, 8};
    static const uint64_t rows[4] = {8 * 128 * 132, 128 * 132, 132, 1};
    static const uint64_t out_rows[4] = {8 * 256 * 260, 256 * 260, 260, 1};
    static const struct {
        int it, pat;
        const uint64_t *in, *idx, *out;
        clops_indices_layout layout;
    } v[] = {
        {0, PAT_RANDOM, nhwc, rows, out_rows, CLOPS_INDICES_FLAT},
        {2, PAT_PLANE_RANDOM, NULL, nhwc, out_rows, CLOPS_INDICES_PER_PLANE},
        {1, PAT_DUPLICATES, rows, NULL, NULL, CLOPS_INDICES_FLAT},
        {2, PAT_DISTINCT, NULL, NULL, out_rows, CLOPS_INDICES_FLAT},
    };
    clops_test_unpool_force = CLOPS_UNPOOL_BUCKETS;
    want_path = CLOPS_UNPOOL_BUCKETS;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        const up_case c = {CLOPS_DATA_TYPE_FLOAT32, &index_types[v[i].it], {2, 8, 128, 128}, v[i].in, v[i].idx,
                           {2, 8, 256, 256}, v[i].out, 0};
        const size_t xb = span_bytes(c.in_sizes, c.in_strides, c.type);
        uint64_t *given = positions(&c, v[i].pat, v[i].layout == CLOPS_INDICES_PER_PLANE, 91 + i);
        void *x = tc_malloc(xb);
        tc_fill_random(x, xb, 15 + i);
        char label[128];
        snprintf(label, sizeof label, "buckets, strided layouts %zu, %s indices, %s", i, pat_names[v[i].pat],
                 c.it->name);
        free(check_threads(&c, v[i].layout, given, x, label));
        free(given), free(x);
    }
    reset_force();
}
END_TEST

/* Unforced: random and distinct scattered indices take the buckets on several
 * threads, pooling-shaped ones the bands; the buckets' allocation failing
 * leaves the bands to do it (the same bits, no error). */
START_TEST(test_buckets_chosen)
{
    static const struct {
        int pat;
        unsigned force, path;
    } v[] = {
        {PAT_RANDOM, CLOPS_UNPOOL_AUTO, CLOPS_UNPOOL_BUCKETS},
        {PAT_DISTINCT, CLOPS_UNPOOL_AUTO, CLOPS_UNPOOL_BUCKETS},
        {PAT_POOL3, CLOPS_UNPOOL_AUTO, CLOPS_UNPOOL_BANDS},
        {PAT_POOL2, CLOPS_UNPOOL_AUTO, CLOPS_UNPOOL_BANDS},
        {PAT_RANDOM, CLOPS_UNPOOL_BUCKETS_NO_MEMORY, CLOPS_UNPOOL_BANDS},
        {PAT_DUPLICATES, CLOPS_UNPOOL_BUCKETS_NO_MEMORY, CLOPS_UNPOOL_BANDS},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        const up_case c = {CLOPS_DATA_TYPE_FLOAT32, &index_types[i % 3], {2, 8, 128, 128}, NULL, NULL,
                           {2, 8, 256, 256}, NULL, 0};
        const size_t xb = span_bytes(c.in_sizes, NULL, c.type), yb = span_bytes(c.out_sizes, NULL, c.type);
        const size_t ib = (size_t)ref_element_count(c.in_sizes) * c.it->size;
        uint64_t *given = positions(&c, v[i].pat, false, 300 + i);
        void *x = tc_malloc(xb), *init = tc_malloc(yb), *want = tc_malloc(yb), *out = tc_malloc(yb);
        tc_fill_random(x, xb, 3 + i);
        tc_fill_sentinel(init, yb);
        memcpy(want, init, yb);
        void *idx = put_indices(&c, given);
        ck_assert_int_eq(up_reference(&c, CLOPS_INDICES_FLAT, x, idx, want), 0);
        char label[128];
        snprintf(label, sizeof label, "%s indices, %s, forced %u", pat_names[v[i].pat], c.it->name, v[i].force);
        up_descs d;
        up_describe_layout(&c, CLOPS_INDICES_FLAT, &d);
        const tc_bufs b = {x, xb, idx, ib, init, yb};
        for (unsigned threads = 1; threads <= 3; threads += 2) {
            clops_test_unpool_force = v[i].force;
            clops_context *ctx = host_context(threads);
            clops_operator *op = tc_create(ctx, &d.desc, label, "host");
            clops_test_unpool_path = 0;
            const clops_status st = tc_run_execute_host(op, &b, out);
            ck_assert_msg(st == CLOPS_SUCCESS, "%s: %s (%s)", label, clops_status_name(st), clops_last_error_message());
            tc_check_bytes(out, want, yb, 4, label, threads == 1 ? "host, 1 thread" : "host, 3 threads");
            const unsigned path = threads > 1 ? v[i].path : CLOPS_UNPOOL_BANDS; /* one thread: the bands */
            ck_assert_msg(clops_test_unpool_path == path, "%s, %u threads: took path %u, not %u", label, threads,
                          clops_test_unpool_path, path);
            clops_operator_free(op);
            clops_context_free(ctx);
        }
        reset_force();
        free(given), free(x), free(init), free(want), free(out), free(idx);
    }
}
END_TEST

static Suite *unpool_host_suite(void)
{
    Suite *s = suite_create("unpool_host");
    TCase *tc = tc_suite_case(s, "layout", -1);
    tcase_add_loop_test(tc, test_per_plane_against_flat, 0, (int)(PLANE_SHAPES * 3));
    tcase_add_test(tc, test_invalid_layout);
    tc = tc_suite_case(s, "threads", 600);
    tcase_add_checked_fixture(tc, NULL, reset_force);
    tcase_add_loop_test(tc, test_threads_match_serial, 0, (int)(BIG_SHAPES * PAT_COUNT));
    tcase_add_test(tc, test_threads_strided);
    tcase_add_test(tc, test_big_bad_indices);
    tc = tc_suite_case(s, "buckets", 600);
    tcase_add_checked_fixture(tc, NULL, reset_force);
    tcase_add_loop_test(tc, test_buckets_match_serial, 0, (int)(WIDTH_SHAPES * PAT_COUNT));
    tcase_add_test(tc, test_buckets_strided);
    tcase_add_test(tc, test_buckets_chosen);
    return s;
}

int main(void)
{
    return tc_main(unpool_host_suite());
}
