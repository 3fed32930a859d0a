/*
 * fuzz_validate.c - descriptor validation and the host kernels, from bytes.
 *
 * The bytes choose an operator type (or a raw, usually invalid, value), data
 * types, sizes (small, or any 32-bit value), strides (NULL, packed-like, small,
 * zero, or any 64-bit value), the block size and the order; the output's sizes
 * either follow the operator's rule or are fuzzed too. Then:
 *   - clops_operator_validate, clops_operator_create (host context) and
 *     clops_host_run with no buffers must agree on the status;
 *   - when valid and its spans fit a few MiB, the operator runs on buffers of
 *     exactly the validated spans (ASan finds any access outside them) through
 *     clops_host_run and clops_operator_execute_host, and the whole output
 *     buffer, gaps between strided elements included, must equal the naive
 *     reference of test/reference.c run on a copy; MaxUnpooling indices are
 *     mostly in range, sometimes not, and a bad one must leave the output
 *     untouched with CLOPS_ERROR_INDEX_OUT_OF_RANGE;
 *   - one byte short of a span must give CLOPS_ERROR_BUFFER_TOO_SMALL.
 */
#define _XOPEN_SOURCE 700
#include "fuzz_common.h"

#include <clops/clops.h>

#include "reference.h"

#define MAX_SPAN_BYTES (4u << 20)
#define MAX_ELEMENTS (1u << 18)

static clops_context *host_ctx;
static unsigned long n_inputs, n_valid, n_run;

static void print_stats(void)
{
    fprintf(stderr, "fuzz_validate: %lu inputs, %lu valid descriptors, %lu run and compared with the reference\n",
            n_inputs, n_valid, n_run);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    if (clops_context_create_host(&host_ctx) != CLOPS_SUCCESS)
        abort();
    if (getenv("FUZZ_STATS"))
        atexit(print_stats);
    return 0;
}

static const clops_data_type types[15] = {
    CLOPS_DATA_TYPE_FLOAT32, CLOPS_DATA_TYPE_FLOAT16, CLOPS_DATA_TYPE_UINT32,   CLOPS_DATA_TYPE_UINT16,
    CLOPS_DATA_TYPE_UINT8,   CLOPS_DATA_TYPE_INT32,   CLOPS_DATA_TYPE_INT16,    CLOPS_DATA_TYPE_INT8,
    CLOPS_DATA_TYPE_FLOAT64, CLOPS_DATA_TYPE_UINT64,  CLOPS_DATA_TYPE_INT64,    CLOPS_DATA_TYPE_BOOL,
    CLOPS_DATA_TYPE_BFLOAT16, CLOPS_DATA_TYPE_COMPLEX64, CLOPS_DATA_TYPE_COMPLEX128};
static const clops_data_type index_types[3] = {CLOPS_DATA_TYPE_UINT32, CLOPS_DATA_TYPE_UINT64,
                                                CLOPS_DATA_TYPE_INT64};

static clops_data_type pick_type(fz_reader *r, int indices)
{
    uint8_t b = fz_u8(r);
    if (b >= 248)
        return (clops_data_type)fz_u32(r); /* anything, usually invalid */
    return indices ? index_types[b % 3] : types[b % 15];
}

static void pick_sizes(fz_reader *r, uint32_t s[4])
{
    uint8_t f = fz_u8(r);
    for (int d = 0; d < 4; d++)
        s[d] = (f >> d) & (f >> 4) & 1 ? fz_u32(r) : fz_u8(r) % 9;
}

/* NULL, or strides: packed-like with padding, small, zero (broadcast) or any. */
static const uint64_t *pick_strides(fz_reader *r, const uint32_t s[4], uint64_t out[4])
{
    uint8_t mode = fz_u8(r);
    if (mode % 4 == 0)
        return NULL;
    uint64_t packed = 1;
    for (int d = 3; d >= 0; d--) {
        switch (fz_u8(r) % 5) {
        case 0: out[d] = packed; break;
        case 1: out[d] = packed + fz_u8(r) % 3; break; /* padded */
        case 2: out[d] = fz_u8(r) % 24; break;
        case 3: out[d] = 0; break;
        default: out[d] = fz_u64(r); break;
        }
        packed = out[d] * (s[d] ? s[d] : 1);
        if (packed > (UINT64_C(1) << 40))
            packed = 1;
    }
    return out;
}

static size_t type_size(clops_data_type t)
{
    return clops_data_type_size(t);
}

/* Span in bytes through `strides` (NULL: packed); UINT64_MAX if it overflows. */
static uint64_t span_bytes(const clops_tensor_desc *t)
{
    uint64_t st[4];
    ref_packed_strides(t->sizes, st);
    const uint64_t *s = t->strides ? t->strides : st;
    uint64_t span = 1;
    for (int d = 0; d < 4; d++)
        if (t->sizes[d] == 0)
            return 0; /* empty, whatever its strides */
    for (int d = 0; d < 4; d++) {
        uint64_t step;
        if (__builtin_mul_overflow((uint64_t)(t->sizes[d] - 1), s[d], &step) ||
            __builtin_add_overflow(span, step, &span))
            return UINT64_MAX;
    }
    uint64_t bytes;
    return __builtin_mul_overflow(span, (uint64_t)type_size(t->data_type), &bytes) ? UINT64_MAX : bytes;
}

static void *alloc_exact(uint64_t bytes)
{
    /* Exactly the span: ASan reports a single byte outside it. NULL for 0. */
    if (bytes == 0)
        return NULL;
    void *p = malloc((size_t)bytes);
    if (!p)
        abort();
    return p;
}

static void fill(void *p, uint64_t n, uint64_t seed)
{
    unsigned char *b = p;
    for (uint64_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        b[i] = (unsigned char)(seed >> 56);
    }
}

/* memcpy that accepts NULL when there is nothing to copy (empty tensors). */
static void copy(void *dst, const void *src, uint64_t n)
{
    if (n)
        memcpy(dst, src, (size_t)n);
}

static void fatal(const char *what, clops_status st, clops_status want)
{
    fprintf(stderr, "fuzz_validate: %s: got %s (%d), want %s; message \"%s\"\n", what, clops_status_name(st), (int)st,
            clops_status_name(want), clops_last_error_message());
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_reader r = {data, size};
    n_inputs++;
    const uint8_t opb = fz_u8(&r);
    clops_operator_type type = (opb & 3) == 3 ? (clops_operator_type)fz_u32(&r) : (clops_operator_type)((opb & 3) + 1);
    const int unpool = type == CLOPS_OPERATOR_MAX_UNPOOLING;

    clops_tensor_desc in, idx, out;
    uint64_t in_st[4], idx_st[4], out_st[4];
    in.data_type = pick_type(&r, 0);
    pick_sizes(&r, in.sizes);
    in.strides = pick_strides(&r, in.sizes, in_st);

    const uint8_t rule = fz_u8(&r);
    uint32_t block = fz_u8(&r);
    block = block >= 250 ? fz_u32(&r) : block % 5 + (block % 37 != 0); /* 0 now and then */
    uint32_t order = fz_u8(&r);
    order = order >= 250 ? fz_u32(&r) : order % 2;

    idx.data_type = pick_type(&r, 1);
    if (rule & 2)
        memcpy(idx.sizes, in.sizes, sizeof idx.sizes);
    else
        pick_sizes(&r, idx.sizes);
    idx.strides = pick_strides(&r, idx.sizes, idx_st);

    out.data_type = rule & 4 ? pick_type(&r, 0) : in.data_type;
    if (rule & 1) { /* the operator's rule, computed like a caller would (may wrap) */
        const uint64_t b = block;
        memcpy(out.sizes, in.sizes, sizeof out.sizes);
        if (type == CLOPS_OPERATOR_DEPTH_TO_SPACE && b) {
            out.sizes[1] = (uint32_t)(in.sizes[1] / (b * b));
            out.sizes[2] = (uint32_t)(in.sizes[2] * b);
            out.sizes[3] = (uint32_t)(in.sizes[3] * b);
        } else if (type == CLOPS_OPERATOR_SPACE_TO_DEPTH && b) {
            out.sizes[1] = (uint32_t)(in.sizes[1] * b * b);
            out.sizes[2] = (uint32_t)(in.sizes[2] / b);
            out.sizes[3] = (uint32_t)(in.sizes[3] / b);
        } else if (unpool) {
            out.sizes[2] = fz_u8(&r) % 12;
            out.sizes[3] = fz_u8(&r) % 12;
        }
    } else {
        pick_sizes(&r, out.sizes);
    }
    out.strides = pick_strides(&r, out.sizes, out_st);

    clops_depth_to_space_desc ds = {&in, &out, block, (clops_depth_space_order)order};
    clops_max_unpooling_desc mu = {&in, &idx, &out, CLOPS_INDICES_FLAT};
    clops_operator_desc desc = {type, unpool ? (const void *)&mu : (const void *)&ds};

    /* Three entry points, one verdict. */
    const clops_status st = clops_operator_validate(&desc);
    clops_operator *op = NULL;
    clops_status st2 = clops_operator_create(host_ctx, &desc, &op);
    if (st2 != st)
        fatal("clops_operator_create disagrees with clops_operator_validate", st2, st);
    if ((st == CLOPS_SUCCESS) != (op != NULL))
        fatal("clops_operator_create: *out and status disagree", st2, st);
    clops_host_buffers none = {NULL, 0, NULL, 0, NULL, 0};
    st2 = clops_host_run(&desc, &none);
    if (st != CLOPS_SUCCESS && st2 != st)
        fatal("clops_host_run without buffers disagrees with clops_operator_validate", st2, st);
    if (st != CLOPS_SUCCESS) {
        if (!clops_last_error_message()[0])
            fatal("no detail message", st, st);
        return 0;
    }

    /* Valid: the spans are known not to overflow. Run it when small enough. */
    n_valid++;
    const uint64_t in_b = span_bytes(&in), idx_b = unpool ? span_bytes(&idx) : 0, out_b = span_bytes(&out);
    const uint64_t in_n = ref_element_count(in.sizes), out_n = ref_element_count(out.sizes);
    if (in_b == UINT64_MAX || idx_b == UINT64_MAX || out_b == UINT64_MAX)
        fatal("validated, but a span overflows", st, CLOPS_ERROR_SIZE_OVERFLOW);
    if (in_b > MAX_SPAN_BYTES || idx_b > MAX_SPAN_BYTES || out_b > MAX_SPAN_BYTES || in_n > MAX_ELEMENTS ||
        out_n > MAX_ELEMENTS) {
        /* Too big to run here; a buffer one byte short of a (nonzero) span must be refused. */
        if (out_b > 0 && out_b <= (UINT64_C(1) << 40)) {
            unsigned char tiny[16];
            clops_host_buffers hb = {tiny, in_b > 16 ? 16 : (size_t)in_b, tiny, unpool ? 16 : 0, tiny + 8,
                                     (size_t)out_b - 1};
            st2 = clops_host_run(&desc, &hb);
            if (st2 != CLOPS_ERROR_BUFFER_TOO_SMALL && st2 != CLOPS_ERROR_ALIASED_BUFFERS &&
                st2 != CLOPS_ERROR_MISSING_BUFFER)
                fatal("big tensor with small buffers", st2, CLOPS_ERROR_BUFFER_TOO_SMALL);
        }
        clops_operator_free(op);
        return 0;
    }

    n_run++;
    const size_t es = type_size(in.data_type);
    void *x = alloc_exact(in_b), *ix = alloc_exact(idx_b), *y = alloc_exact(out_b);
    void *y_ref = alloc_exact(out_b), *y_init = alloc_exact(out_b), *y2 = alloc_exact(out_b);
    const uint64_t seed = fz_u64(&r);
    fill(x, in_b, seed);
    fill(y_init, out_b, ~seed);
    if (unpool) {
        /* Each index: in range (mostly), or raw bytes. */
        const size_t isz = type_size(idx.data_type);
        const uint8_t bad_rate = fz_u8(&r);
        uint64_t s = seed;
        for (uint64_t k = 0; k < idx_b / isz; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t v = (s >> 16) % (out_n ? out_n : 1);
            if (bad_rate > 200 && (s >> 8) % 64 == 0)
                v = s; /* anything: past the output, or negative as INT64 */
            memcpy((char *)ix + k * isz, &v, isz);
        }
    }
    copy(y_ref, y_init, out_b);
    ref_tensor rx, ri, ry;
    ref_tensor_init(&rx, x, es, in.sizes, in.strides);
    ref_tensor_init(&ri, ix, unpool ? type_size(idx.data_type) : 1, idx.sizes, idx.strides);
    ref_tensor_init(&ry, y_ref, es, out.sizes, out.strides);
    long bad = 0;
    int ref_rc = 0;
    if (in_n == 0 || out_n == 0) {
        /* Empty tensors may have huge other sizes, which the reference would walk
         * dimension by dimension: the expected result is known without it. An
         * empty output takes nothing (every index of a non-empty input is out of
         * range); an empty input leaves a zero-filled output. */
        if (unpool && out_n == 0)
            bad = (long)(in_n != 0);
        if (unpool && out_n != 0) {
            uint64_t st4[4];
            ref_packed_strides(out.sizes, st4);
            const uint64_t *os = out.strides ? out.strides : st4;
            for (uint64_t k = 0; k < out_n; k++) {
                uint64_t w = k % out.sizes[3], h = k / out.sizes[3] % out.sizes[2];
                uint64_t c = k / out.sizes[3] / out.sizes[2] % out.sizes[1];
                uint64_t n = k / out.sizes[3] / out.sizes[2] / out.sizes[1];
                memset((char *)y_ref + (n * os[0] + c * os[1] + h * os[2] + w * os[3]) * es, 0, es);
            }
        }
    } else if (type == CLOPS_OPERATOR_DEPTH_TO_SPACE)
        ref_rc = ref_depth_to_space(&rx, &ry, block, (ref_order)order);
    else if (type == CLOPS_OPERATOR_SPACE_TO_DEPTH)
        ref_rc = ref_space_to_depth(&rx, &ry, block, (ref_order)order);
    else {
        ref_index_kind kind = idx.data_type == CLOPS_DATA_TYPE_UINT32   ? REF_INDEX_UINT32
                              : idx.data_type == CLOPS_DATA_TYPE_UINT64 ? REF_INDEX_UINT64
                                                                        : REF_INDEX_INT64;
        bad = ref_max_unpooling(&rx, &ri, kind, &ry);
        ref_rc = bad < 0 ? -1 : 0;
    }
    if (ref_rc != 0)
        fatal("validated, but the reference finds the sizes inconsistent", st, CLOPS_ERROR_OUTPUT_SIZE_MISMATCH);
    const clops_status want = bad ? CLOPS_ERROR_INDEX_OUT_OF_RANGE : CLOPS_SUCCESS;
    const void *want_y = bad ? y_init : y_ref; /* a bad index leaves the output untouched */

    copy(y, y_init, out_b);
    clops_host_buffers hb = {x, (size_t)in_b, ix, (size_t)idx_b, y, (size_t)out_b};
    st2 = clops_host_run(&desc, &hb);
    if (st2 != want)
        fatal("clops_host_run", st2, want);
    if (out_b && memcmp(y, want_y, out_b) != 0)
        fatal("clops_host_run: output differs from the reference", st2, want);

    copy(y2, y_init, out_b);
    hb.output = y2;
    st2 = clops_operator_execute_host(op, &hb);
    if (st2 != want)
        fatal("clops_operator_execute_host", st2, want);
    if (out_b && memcmp(y2, want_y, out_b) != 0)
        fatal("clops_operator_execute_host: output differs from the reference", st2, want);

    /* One byte short of each nonzero span. */
    if (in_b) {
        hb.input_bytes = (size_t)in_b - 1;
        if ((st2 = clops_host_run(&desc, &hb)) != CLOPS_ERROR_BUFFER_TOO_SMALL)
            fatal("input one byte short", st2, CLOPS_ERROR_BUFFER_TOO_SMALL);
        hb.input_bytes = (size_t)in_b;
    }
    if (out_b) {
        hb.output_bytes = (size_t)out_b - 1;
        if ((st2 = clops_host_run(&desc, &hb)) != CLOPS_ERROR_BUFFER_TOO_SMALL)
            fatal("output one byte short", st2, CLOPS_ERROR_BUFFER_TOO_SMALL);
    }
    clops_operator_free(op);
    free(x);
    free(ix);
    free(y);
    free(y_ref);
    free(y_init);
    free(y2);
    return 0;
}
