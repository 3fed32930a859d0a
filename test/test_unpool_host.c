/*
 * test_unpool_host.c - MaxUnpooling's indices_layout and its host kernels on
 * several threads (issue 23).
 *
 *   layout      CLOPS_INDICES_PER_PLANE: the element of plane p = n*C + c with
 *               index i goes to flat output position p*H_out*W_out + i, valid
 *               iff 0 <= i < H_out*W_out; checked on every path (clops_host_run,
 *               execute_host and cl_mem on the host backend and the device)
 *               against the same indices made flat; an index one past its plane,
 *               or negative, is out of range (host output untouched, the cl_mem
 *               path writes the rest); an unknown layout is
 *               CLOPS_ERROR_INVALID_INDICES_LAYOUT.
 *   threads     tensors past the 4 MiB where the host kernels take threads, run
 *               on host contexts of 1, 2, 3 and 16 threads, each against the
 *               serial reference: indices from a real 3x3/2 (padding 1) and 2x2
 *               max pool, random, duplicate-heavy (the last in input order wins
 *               across the threads' ranges), distinct scattered, per-plane, and
 *               strided tensors with gaps; bad indices in a later thread's range
 *               leave the output untouched and name the first one.
 */
#include "reference.h"
#include "test_common.h"

typedef struct index_type_info {
    clops_data_type type;
    const char *name;
    size_t size;
} index_type_info;

static const index_type_info index_types[3] = {
    {CLOPS_DATA_TYPE_UINT32, "UINT32", 4},
    {CLOPS_DATA_TYPE_UINT64, "UINT64", 8},
    {CLOPS_DATA_TYPE_INT64, "INT64", 8},
};

/* Writes n logical indices as the given index type (UINT32: the low 32 bits). */
static void store_indices(const index_type_info *it, const uint64_t *vals, size_t n, void *dst)
{
    unsigned char *d = dst;
    for (size_t k = 0; k < n; k++) {
        if (it->size == 4) {
            const uint32_t v = (uint32_t)vals[k];
            memcpy(d + k * 4, &v, 4);
        } else {
            memcpy(d + k * 8, &vals[k], 8);
        }
    }
}

typedef struct up_descs {
    clops_tensor_desc x, i, y;
    clops_max_unpooling_desc ud;
    clops_operator_desc desc;
} up_descs;

/* ---- descriptors and indices ---------------------------------------------------------------- */

typedef struct lcase {
    clops_data_type type;
    const index_type_info *it;
    uint32_t in[4], out[4];
    const uint64_t *in_strides, *out_strides;
    clops_indices_layout layout;
} lcase;

static void describe(const lcase *c, up_descs *d)
{
    d->x = (clops_tensor_desc){c->type, {c->in[0], c->in[1], c->in[2], c->in[3]}, c->in_strides};
    d->i = (clops_tensor_desc){c->it->type, {c->in[0], c->in[1], c->in[2], c->in[3]}, c->in_strides};
    d->y = (clops_tensor_desc){c->type, {c->out[0], c->out[1], c->out[2], c->out[3]}, c->out_strides};
    d->ud = (clops_max_unpooling_desc){&d->x, &d->i, &d->y, c->layout};
    d->desc = (clops_operator_desc){CLOPS_OPERATOR_MAX_UNPOOLING, &d->ud};
}

/* Logical element k of a tensor of `sizes` -> element offset through `strides` (NULL: packed). */
static uint64_t offset_of(const uint32_t sizes[4], const uint64_t *strides, uint64_t k)
{
    if (!strides) return k;
    uint64_t off = 0;
    for (int d = 3; d >= 0; d--) {
        off += k % sizes[d] * strides[d];
        k /= sizes[d];
    }
    return off;
}

/* Stores logical indices vals[k] (as int64 bits) through the case's input strides. */
static void *store_strided(const lcase *c, const uint64_t *vals, size_t bytes)
{
    unsigned char *buf = tc_malloc(bytes ? bytes : 1);
    memset(buf, 0xA5, bytes);
    const uint64_t n = ref_element_count(c->in);
    for (uint64_t k = 0; k < n; k++)
        store_indices(c->it, &vals[k], 1, buf + offset_of(c->in, c->in_strides, k) * c->it->size);
    return buf;
}

/* The flat reference of `vals` (positions, UINT64_MAX for out of range) into a
 * copy of `init`; returns the number of skipped indices. */
static long reference(const lcase *c, const void *x, const uint64_t *flat, const void *init, size_t yb, void **want)
{
    const index_type_info *u64 = &index_types[1];
    lcase fc = *c;
    fc.it = u64;
    void *idx = store_strided(&fc, flat, (size_t)tc_span(c->in, c->in_strides) * 8);
    *want = tc_memdup(init, yb);
    ref_tensor rx, ri, ry;
    ref_tensor_init(&rx, (void *)(uintptr_t)x, tc_type(c->type)->size, c->in, c->in_strides);
    ref_tensor_init(&ri, idx, 8, c->in, c->in_strides);
    ref_tensor_init(&ry, *want, tc_type(c->type)->size, c->out, c->out_strides);
    const long bad = ref_max_unpooling(&rx, &ri, REF_INDEX_UINT64, &ry);
    free(idx);
    return bad;
}

/* Runs `desc` on every path: clops_host_run, and execute_host and (OpenCL) cl_mem on
 * each backend. The operator may run on the host on an OpenCL context (per-plane
 * indices until the kernels take them): the result is what is checked here. */
static void run_paths(const clops_operator_desc *desc, const tc_bufs *b, clops_status want_status,
                      const void *want_host, const void *want_cl, size_t es, const char *label)
{
    void *out = tc_malloc(b->out_bytes);
    clops_status st = tc_run_host_run(desc, b, out);
    ck_assert_msg(st == want_status, "%s [clops_host_run]: %s (%s), want %s", label, clops_status_name(st),
                  clops_last_error_message(), clops_status_name(want_status));
    tc_check_bytes(out, want_host, b->out_bytes, es, label, "clops_host_run");
    for (int bi = 0; bi < tc_backend_count(); bi++) {
        clops_context *ctx = tc_backend(bi);
        clops_operator *op = NULL;
        st = clops_operator_create(ctx, desc, &op);
        ck_assert_msg(st == CLOPS_SUCCESS, "%s [%s]: create: %s (%s)", label, tc_backend_name(bi),
                      clops_status_name(st), clops_last_error_message());
        st = tc_run_execute_host(op, b, out);
        ck_assert_msg(st == want_status, "%s [%s, execute_host]: %s (%s), want %s", label, tc_backend_name(bi),
                      clops_status_name(st), clops_last_error_message(), clops_status_name(want_status));
        tc_check_bytes(out, want_host, b->out_bytes, es, label, tc_backend_name(bi));
        if (clops_context_backend(ctx) == CLOPS_BACKEND_OPENCL) {
            st = tc_run_execute_cl(ctx, op, b, out, label);
            ck_assert_msg(st == want_status, "%s [%s, cl_mem]: %s (%s), want %s", label, tc_backend_name(bi),
                          clops_status_name(st), clops_last_error_message(), clops_status_name(want_status));
            tc_check_bytes(out, want_cl, b->out_bytes, es, label, "OpenCL device, cl_mem");
        }
        clops_operator_free(op);
    }
    free(out);
}

/* ---- per-plane against flat ------------------------------------------------------------------ */

static const uint64_t nhwc_in[4] = {5 * 4 * 3, 1, 4 * 3, 3};    /* {2, 3, 5, 4} as NHWC */
static const uint64_t padded_out[4] = {3 * 10 * 12, 10 * 12, 12, 1}; /* {2, 3, 10, 8}, rows of 12 */

static const struct {
    clops_data_type type;
    uint32_t in[4], out[4];
    const uint64_t *in_strides, *out_strides;
} plane_shapes[] = {
    {CLOPS_DATA_TYPE_FLOAT32, {2, 3, 5, 4}, {2, 3, 10, 8}, NULL, NULL},           /* windows-shaped, serial size */
    {CLOPS_DATA_TYPE_UINT8, {2, 3, 5, 4}, {2, 3, 9, 7}, NULL, NULL},              /* general shape */
    {CLOPS_DATA_TYPE_FLOAT16, {2, 3, 5, 4}, {2, 3, 10, 8}, nhwc_in, padded_out},  /* strided, gaps */
    {CLOPS_DATA_TYPE_FLOAT64, {3, 5, 40, 40}, {3, 5, 80, 80}, NULL, NULL},        /* past the serial plan */
    {CLOPS_DATA_TYPE_INT16, {2, 7, 33, 30}, {2, 7, 67, 61}, NULL, NULL},          /* general, past serial */
    {CLOPS_DATA_TYPE_COMPLEX128, {1, 2, 1, 1}, {1, 2, 1, 1}, NULL, NULL},         /* one element a plane */
};
#define PLANE_SHAPES (sizeof plane_shapes / sizeof plane_shapes[0])

/* Per-plane indices (duplicates included, some planes all on one element) on
 * every path against the same indices made flat; then one index one past its
 * plane (INT64: also -1): out of range on every path. */
START_TEST(test_per_plane_against_flat)
{
    const int shape = _i / 3;
    const index_type_info *it = &index_types[_i % 3];
    lcase c = {plane_shapes[shape].type, it, {0}, {0}, plane_shapes[shape].in_strides,
               plane_shapes[shape].out_strides, CLOPS_INDICES_PER_PLANE};
    memcpy(c.in, plane_shapes[shape].in, sizeof c.in);
    memcpy(c.out, plane_shapes[shape].out, sizeof c.out);
    const size_t es = tc_type(c.type)->size;
    const uint64_t n = ref_element_count(c.in), plane_in = (uint64_t)c.in[2] * c.in[3];
    const uint64_t plane_out = (uint64_t)c.out[2] * c.out[3];
    uint64_t *per = tc_malloc(n * 8), *flat = tc_malloc(n * 8), rng = 0x5eed + (uint64_t)_i;
    for (uint64_t k = 0; k < n; k++) {
        const uint64_t p = k / plane_in;
        per[k] = p % 4 == 3 ? plane_out - 1 : tc_rng_next(&rng) % plane_out; /* plane 3: all the same */
        flat[k] = p * plane_out + per[k];
    }
    up_descs d;
    const size_t xb = (size_t)tc_span(c.in, c.in_strides) * es, ib = (size_t)tc_span(c.in, c.in_strides) * it->size;
    const size_t yb = (size_t)tc_span(c.out, c.out_strides) * es;
    void *x = tc_malloc(xb), *init = tc_malloc(yb), *want, *want_bad;
    tc_fill_random(x, xb, rng);
    tc_fill_sentinel(init, yb);
    char label[200], sa[64], sb[64];

    for (int round = 0; round < 3; round++) {
        /* round 0: all valid; 1: element k_bad one past its plane; 2 (INT64): negative */
        if (round == 2 && it->type != CLOPS_DATA_TYPE_INT64) break;
        const uint64_t k_bad = n / 2, saved = per[k_bad], saved_flat = flat[k_bad];
        if (round) {
            per[k_bad] = round == 1 ? plane_out : UINT64_MAX; /* -1 as INT64 bits */
            flat[k_bad] = UINT64_MAX;
        }
        snprintf(label, sizeof label, "per-plane %s, %s indices, %s -> %s%s%s", tc_type(c.type)->name, it->name,
                 tc_shape_str(sa, sizeof sa, c.in), tc_shape_str(sb, sizeof sb, c.out),
                 c.in_strides ? " (strided)" : "", round == 1 ? ", one index = H*W" : round ? ", index -1" : "");
        const long bad = reference(&c, x, flat, init, yb, &want);
        ck_assert_int_eq(bad, round ? 1 : 0);
        void *idx = store_strided(&c, per, ib);
        describe(&c, &d);
        const tc_bufs b = {x, xb, idx, ib, init, yb};
        const clops_status want_st = round ? CLOPS_ERROR_INDEX_OUT_OF_RANGE : CLOPS_SUCCESS;
        want_bad = round ? init : want;
        run_paths(&d.desc, &b, want_st, want_bad, want, es, label);
        if (round) {
            void *out = tc_malloc(yb);
            ck_assert_int_eq(tc_run_host_run(&d.desc, &b, out), CLOPS_ERROR_INDEX_OUT_OF_RANGE);
            ck_assert_msg(strstr(clops_last_error_message(), "per-plane"), "%s: message \"%s\" does not say per-plane",
                          label, clops_last_error_message());
            free(out);
        } else {
            /* The same through flat indices: the same bytes. */
            lcase fc = c;
            fc.layout = CLOPS_INDICES_FLAT;
            void *fidx = store_strided(&fc, flat, ib);
            up_descs fd;
            describe(&fc, &fd);
            const tc_bufs fb = {x, xb, fidx, ib, init, yb};
            run_paths(&fd.desc, &fb, CLOPS_SUCCESS, want, want, es, label);
            free(fidx);
        }
        per[k_bad] = saved, flat[k_bad] = saved_flat;
        free(idx);
        free(want);
    }
    free(per), free(flat), free(x), free(init);
}
END_TEST

/* An unknown layout: CLOPS_ERROR_INVALID_INDICES_LAYOUT everywhere a descriptor is checked. */
START_TEST(test_invalid_layout)
{
    const int bad_layouts[] = {2, -1, 0x7fffffff};
    lcase c = {CLOPS_DATA_TYPE_FLOAT32, &index_types[2], {1, 1, 2, 2}, {1, 1, 4, 4}, NULL, NULL, CLOPS_INDICES_FLAT};
    float x[4] = {1, 2, 3, 4}, y[16];
    int64_t idx[4] = {0, 1, 2, 3};
    for (size_t i = 0; i < sizeof bad_layouts / sizeof bad_layouts[0]; i++) {
        c.layout = (clops_indices_layout)bad_layouts[i];
        up_descs d;
        describe(&c, &d);
        ck_assert_int_eq(clops_operator_validate(&d.desc), CLOPS_ERROR_INVALID_INDICES_LAYOUT);
        ck_assert_msg(strstr(clops_last_error_message(), "indices_layout"), "message: %s", clops_last_error_message());
        memset(y, 0x5a, sizeof y);
        const clops_host_buffers hb = {x, sizeof x, idx, sizeof idx, y, sizeof y};
        ck_assert_int_eq(clops_host_run(&d.desc, &hb), CLOPS_ERROR_INVALID_INDICES_LAYOUT);
        for (size_t k = 0; k < sizeof y; k++) ck_assert_int_eq(((unsigned char *)y)[k], 0x5a);
        for (int bi = 0; bi < tc_backend_count(); bi++) {
            clops_operator *op = (clops_operator *)&c; /* must come back NULL */
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
    const uint64_t *in_strides, *out_strides;
} big_shapes[] = {
    {CLOPS_DATA_TYPE_UINT8, {4, 16, 128, 128}, {4, 16, 256, 256}, NULL, NULL},   /* 4 MiB output */
    {CLOPS_DATA_TYPE_FLOAT32, {2, 8, 128, 128}, {2, 8, 256, 256}, NULL, NULL},   /* 4 MiB */
    {CLOPS_DATA_TYPE_COMPLEX128, {1, 3, 128, 256}, {1, 3, 256, 512}, NULL, NULL}, /* 6 MiB */
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

/* Executes on host contexts of each thread count; every result against `want`
 * (and the status). */
static void run_threads(const clops_operator_desc *desc, const tc_bufs *b, clops_status want_st, const void *want,
                        size_t es, const char *label, const char *want_text)
{
    void *out = tc_malloc(b->out_bytes);
    for (size_t t = 0; t < sizeof thread_counts / sizeof thread_counts[0]; t++) {
        char path[64];
        snprintf(path, sizeof path, "host, %u threads", thread_counts[t]);
        clops_context *ctx = host_context(thread_counts[t]);
        clops_operator *op = NULL;
        ck_assert_int_eq(clops_operator_create(ctx, desc, &op), CLOPS_SUCCESS);
        const clops_status st = tc_run_execute_host(op, b, out);
        ck_assert_msg(st == want_st, "%s [%s]: %s (%s)", label, path, clops_status_name(st),
                      clops_last_error_message());
        if (want_text)
            ck_assert_msg(strstr(clops_last_error_message(), want_text), "%s [%s]: message \"%s\" lacks \"%s\"", label,
                          path, clops_last_error_message(), want_text);
        tc_check_bytes(out, want, b->out_bytes, es, label, path);
        clops_operator_free(op);
        clops_context_free(ctx);
    }
    free(out);
}

START_TEST(test_threads_match_serial)
{
    const int shape = _i / PAT_COUNT, pat = _i % PAT_COUNT;
    const clops_indices_layout layouts[2] = {CLOPS_INDICES_FLAT, CLOPS_INDICES_PER_PLANE};
    for (int li = 0; li < 2; li++) {
        /* per-plane indices need positions inside each input's own plane */
        if (li == 1 && pat != PAT_POOL3 && pat != PAT_POOL2 && pat != PAT_PLANE_RANDOM) continue;
        const index_type_info *it = &index_types[(size_t)(_i + li) % 3];
        lcase c = {big_shapes[shape].type, it, {0}, {0}, NULL, NULL, layouts[li]};
        memcpy(c.in, big_shapes[shape].in, sizeof c.in);
        memcpy(c.out, big_shapes[shape].out, sizeof c.out);
        const size_t es = tc_type(c.type)->size;
        const uint64_t n = ref_element_count(c.in), plane_in = (uint64_t)c.in[2] * c.in[3];
        const uint64_t plane_out = (uint64_t)c.out[2] * c.out[3];
        const size_t xb = (size_t)n * es, ib = (size_t)n * it->size, yb = (size_t)ref_element_count(c.out) * es;
        uint64_t *flat = tc_malloc(n * 8), *given = tc_malloc(n * 8);
        make_positions(pat, c.in, c.out, 0xabc + (uint64_t)_i, flat);
        for (uint64_t k = 0; k < n; k++) given[k] = li ? flat[k] - k / plane_in * plane_out : flat[k];
        void *x = tc_malloc(xb), *init = tc_malloc(yb), *want;
        tc_fill_random(x, xb, (uint64_t)_i);
        tc_fill_sentinel(init, yb);
        ck_assert_int_eq(reference(&c, x, flat, init, yb, &want), 0);
        void *idx = store_strided(&c, given, ib);
        up_descs d;
        describe(&c, &d);
        char label[200], sa[64];
        snprintf(label, sizeof label, "%s indices, %s, %s, %s, %s", pat_names[pat],
                 li ? "per-plane" : "flat", tc_type(c.type)->name, it->name, tc_shape_str(sa, sizeof sa, c.in));
        const tc_bufs b = {x, xb, idx, ib, init, yb};
        run_threads(&d.desc, &b, CLOPS_SUCCESS, want, es, label, NULL);

        /* Two bad indices in the second half (another thread's range): nothing
         * written, the first one named. */
        const uint64_t k1 = n / 2 + n / 5, k2 = n - 3;
        const uint64_t bad_value = li ? plane_out : ref_element_count(c.out);
        given[k1] = given[k2] = bad_value;
        store_indices(it, &given[k1], 1, (unsigned char *)idx + k1 * it->size);
        store_indices(it, &given[k2], 1, (unsigned char *)idx + k2 * it->size);
        char where[96];
        snprintf(where, sizeof where, "at input [%llu, %llu, %llu, %llu]",
                 (unsigned long long)(k1 / plane_in / c.in[1]), (unsigned long long)(k1 / plane_in % c.in[1]),
                 (unsigned long long)(k1 % plane_in / c.in[3]), (unsigned long long)(k1 % c.in[3]));
        run_threads(&d.desc, &b, CLOPS_ERROR_INDEX_OUT_OF_RANGE, init, es, label, where);
        free(flat), free(given), free(x), free(init), free(want), free(idx);
    }
}
END_TEST

/* Strided input and indices (NHWC) and an output with gaps (rows padded), on threads. */
START_TEST(test_threads_strided)
{
    static const uint64_t in_nhwc[4] = {128 * 128 * 8, 1, 128 * 8, 8};      /* {2, 8, 128, 128} */
    static const uint64_t out_rows[4] = {8 * 256 * 260, 256 * 260, 260, 1}; /* {2, 8, 256, 256}, rows of 260 */
    for (int li = 0; li < 2; li++) {
        lcase c = {CLOPS_DATA_TYPE_FLOAT32, &index_types[li ? 2 : 0], {2, 8, 128, 128}, {2, 8, 256, 256},
                   in_nhwc, out_rows, li ? CLOPS_INDICES_PER_PLANE : CLOPS_INDICES_FLAT};
        const size_t es = 4;
        const uint64_t n = ref_element_count(c.in), plane_in = 128 * 128, plane_out = 256 * 256;
        const size_t xb = (size_t)tc_span(c.in, c.in_strides) * es, ib = (size_t)tc_span(c.in, c.in_strides) * 8;
        const size_t yb = (size_t)tc_span(c.out, c.out_strides) * es;
        uint64_t *flat = tc_malloc(n * 8), *given = tc_malloc(n * 8);
        make_positions(PAT_POOL3, c.in, c.out, 77, flat);
        for (uint64_t k = 0; k < n; k++) given[k] = li ? flat[k] - k / plane_in * plane_out : flat[k];
        void *x = tc_malloc(xb), *init = tc_malloc(yb), *want;
        tc_fill_random(x, xb, 5);
        tc_fill_sentinel(init, yb);
        ck_assert_int_eq(reference(&c, x, flat, init, yb, &want), 0);
        void *idx = store_strided(&c, given, ib);
        up_descs d;
        describe(&c, &d);
        const tc_bufs b = {x, xb, idx, ib, init, yb};
        run_threads(&d.desc, &b, CLOPS_SUCCESS, want, es, li ? "strided, per-plane" : "strided, flat", NULL);
        free(flat), free(given), free(x), free(init), free(want), free(idx);
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
    tcase_add_loop_test(tc, test_threads_match_serial, 0, (int)(BIG_SHAPES * PAT_COUNT));
    tcase_add_test(tc, test_threads_strided);
    return s;
}

int main(void)
{
    return tc_main(unpool_host_suite());
}
