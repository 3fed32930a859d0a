/* notes/unpool_host_bench.c - the host MaxUnpooling (clops_operator_execute_host on a
 * host context) against a memcpy of the same bytes split over as many threads as the
 * host kernels use, run alternately in one process. Bytes moved = input + indices +
 * output (as `clops bench` counts MaxUnpooling); the memcpy copies half of that, so
 * its read + write is the same number of bytes. Prints, per case, the median GB/s of
 * each, the median (and range) of the per-round ratios memcpy time / op time, and
 * the best round's GB/s of each (on a loaded machine the least disturbed).
 *
 *   usage: unpool_host_bench [THREADS [REPS [CASE]]]   (THREADS 0: one per processor;
 *                                                     CASE: only that row, from 0) 
 *
 * Build and run: see notes/max_unpooling.md ("Host kernels on threads"). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <clops/clops.h>

typedef struct part {
    unsigned char *dst;
    const unsigned char *src;
    size_t n;
} part;

static void *copy_part(void *arg)
{
    part *p = arg;
    memcpy(p->dst, p->src, p->n);
    return NULL;
}

static void parallel_memcpy(unsigned char *dst, const unsigned char *src, size_t n, int threads)
{
    pthread_t t[64];
    part p[64];
    for (int i = 0; i < threads; i++) {
        p[i] = (part){dst + n * i / threads, src + n * i / threads, n * (i + 1) / threads - n * i / threads};
        if (i) pthread_create(&t[i], NULL, copy_part, &p[i]);
    }
    copy_part(&p[0]);
    for (int i = 1; i < threads; i++) pthread_join(t[i], NULL);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmpd(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

enum { POOL3, POOL2, SCATTERED, DUPLICATES };
static const char *const kind_name[] = {"max_pool2d(3,2,1)", "2x2 windows", "scattered distinct", "random"};

typedef struct bcase {
    int kind;
    clops_data_type type;
    size_t es;
    clops_data_type itype;
    uint32_t in[4], out[4];
    clops_indices_layout layout;
} bcase;

/* Positions a real max pool of random values gives (PyTorch's tie rule: the first
 * maximum in the window), or scattered; written as flat or per-plane indices. */
static void make_indices(const bcase *c, void *idx)
{
    const uint64_t hw_in = (uint64_t)c->in[2] * c->in[3], hw_out = (uint64_t)c->out[2] * c->out[3];
    const uint64_t n = hw_in * c->in[0] * c->in[1], count = hw_out * c->out[0] * c->out[1];
    uint64_t s = 88172645463325252ull;
    uint16_t *v = malloc(count * sizeof *v);
    for (uint64_t e = 0; e < count; e++) v[e] = (uint16_t)rng(&s);
    for (uint64_t e = 0; e < n; e++) {
        const uint64_t p = e / hw_in, oh = e % hw_in / c->in[3], ow = e % c->in[3];
        uint64_t pos = 0;
        if (c->kind == SCATTERED) {
            pos = (e * 2654435761u + 12345) % count; /* distinct: count is a power of 2 */
        } else if (c->kind == DUPLICATES) {
            pos = rng(&s) % count;
        } else {
            const int k = c->kind == POOL3 ? 3 : 2, pad = c->kind == POOL3 ? 1 : 0;
            int best = -1;
            for (int dh = 0; dh < k; dh++)
                for (int dw = 0; dw < k; dw++) {
                    const int64_t h = (int64_t)oh * 2 - pad + dh, w = (int64_t)ow * 2 - pad + dw;
                    if (h < 0 || w < 0 || h >= c->out[2] || w >= c->out[3]) continue;
                    const uint64_t at = p * hw_out + (uint64_t)h * c->out[3] + (uint64_t)w;
                    if (v[at] > best) best = v[at], pos = at;
                }
        }
        if (c->layout == CLOPS_INDICES_PER_PLANE) pos -= p * hw_out;
        if (c->itype == CLOPS_DATA_TYPE_UINT32) ((uint32_t *)idx)[e] = (uint32_t)pos;
        else ((int64_t *)idx)[e] = (int64_t)pos;
    }
    free(v);
}

#define I64 CLOPS_DATA_TYPE_INT64
#define U32 CLOPS_DATA_TYPE_UINT32
#define F32 CLOPS_DATA_TYPE_FLOAT32
static const bcase cases[] = {
    {POOL3, F32, 4, I64, {4, 64, 64, 64}, {4, 64, 128, 128}, CLOPS_INDICES_FLAT},
    {POOL3, F32, 4, I64, {4, 64, 64, 64}, {4, 64, 128, 128}, CLOPS_INDICES_PER_PLANE},
    {POOL2, F32, 4, U32, {4, 64, 64, 64}, {4, 64, 128, 128}, CLOPS_INDICES_FLAT},
    {POOL2, F32, 4, U32, {4, 64, 128, 128}, {4, 64, 256, 256}, CLOPS_INDICES_FLAT},
    {POOL2, CLOPS_DATA_TYPE_UINT8, 1, U32, {4, 64, 128, 128}, {4, 64, 256, 256}, CLOPS_INDICES_FLAT},
    {POOL3, CLOPS_DATA_TYPE_FLOAT16, 2, I64, {4, 64, 64, 64}, {4, 64, 128, 128}, CLOPS_INDICES_PER_PLANE},
    {POOL2, CLOPS_DATA_TYPE_FLOAT64, 8, I64, {4, 64, 64, 64}, {4, 64, 128, 128}, CLOPS_INDICES_FLAT},
    {SCATTERED, F32, 4, I64, {4, 64, 64, 64}, {4, 64, 128, 128}, CLOPS_INDICES_FLAT},
    {DUPLICATES, F32, 4, U32, {4, 64, 64, 64}, {4, 64, 128, 128}, CLOPS_INDICES_FLAT},
    {SCATTERED, F32, 4, I64, {4, 64, 128, 128}, {4, 64, 256, 256}, CLOPS_INDICES_FLAT},
    {DUPLICATES, F32, 4, U32, {4, 64, 128, 128}, {4, 64, 256, 256}, CLOPS_INDICES_FLAT},
    {SCATTERED, CLOPS_DATA_TYPE_UINT8, 1, U32, {4, 64, 128, 128}, {4, 64, 256, 256}, CLOPS_INDICES_FLAT},
};

int main(int argc, char **argv)
{
    const unsigned want = argc > 1 ? (unsigned)atoi(argv[1]) : 0;
    int reps = argc > 2 ? atoi(argv[2]) : 9;
    if (reps < 1) reps = 1;
    if (reps > 64) reps = 64; /* the per-round arrays hold 64 */
    const int threads = want ? (int)want : (int)sysconf(_SC_NPROCESSORS_ONLN);
    clops_context_options o;
    clops_context *ctx = NULL;
    if (clops_context_options_init(&o, sizeof o) != CLOPS_SUCCESS) return 1;
    o.device = CLOPS_DEVICE_HOST;
    o.host_threads = want;
    if (clops_context_create_with_options(&o, &ctx) != CLOPS_SUCCESS) return 1;
    const int only = argc > 3 ? atoi(argv[3]) : -1;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const bcase *c = &cases[ci];
        if (only >= 0 && (size_t)only != ci) continue;
        const size_t n = (size_t)c->in[0] * c->in[1] * c->in[2] * c->in[3];
        const size_t count = (size_t)c->out[0] * c->out[1] * c->out[2] * c->out[3];
        const size_t is = c->itype == U32 ? 4 : 8, xb = n * c->es, ib = n * is, yb = count * c->es;
        const size_t moved = xb + ib + yb;
        unsigned char *x = malloc(xb), *idx = malloc(ib), *y = malloc(yb), *a = malloc(moved / 2), *b = malloc(moved / 2);
        if (!x || !idx || !y || !a || !b) return 1;
        memset(x, 3, xb), memset(y, 1, yb), memset(a, 1, moved / 2), memset(b, 2, moved / 2);
        make_indices(c, idx);
        clops_tensor_desc tx = {c->type, {c->in[0], c->in[1], c->in[2], c->in[3]}, NULL};
        clops_tensor_desc ti = {c->itype, {c->in[0], c->in[1], c->in[2], c->in[3]}, NULL};
        clops_tensor_desc ty = {c->type, {c->out[0], c->out[1], c->out[2], c->out[3]}, NULL};
        clops_max_unpooling_desc d = {&tx, &ti, &ty, c->layout};
        clops_operator_desc desc = {CLOPS_OPERATOR_MAX_UNPOOLING, &d};
        clops_operator *op = NULL;
        if (clops_operator_create(ctx, &desc, &op) != CLOPS_SUCCESS) {
            fprintf(stderr, "create: %s\n", clops_last_error_message());
            return 1;
        }
        const clops_host_buffers hb = {x, xb, idx, ib, y, yb};
        double to[64], tc[64], r[64];
        if (clops_operator_execute_host(op, &hb) != CLOPS_SUCCESS) { /* a library without the layout */
            printf("%-19s %-9s w%zu: %s\n", kind_name[c->kind],
                   c->layout == CLOPS_INDICES_PER_PLANE ? "per-plane" : "flat", c->es, clops_last_error_message());
            clops_operator_free(op);
            free(x), free(idx), free(y), free(a), free(b);
            continue;
        }
        parallel_memcpy(b, a, moved / 2, threads);
        for (int k = 0; k < reps; k++) {
            const double t0 = now();
            (void)clops_operator_execute_host(op, &hb);
            const double t1 = now();
            parallel_memcpy(b, a, moved / 2, threads);
            const double t2 = now();
            to[k] = t1 - t0, tc[k] = t2 - t1, r[k] = tc[k] / to[k];
        }
        qsort(to, (size_t)reps, sizeof to[0], cmpd);
        qsort(tc, (size_t)reps, sizeof tc[0], cmpd);
        qsort(r, (size_t)reps, sizeof r[0], cmpd);
        printf("%-19s %-9s w%zu %s %4.0f MiB  op %5.1f GB/s  memcpy x%d %5.1f GB/s  ratio %.2f (%.2f-%.2f)"
               "  best op %5.1f memcpy %5.1f GB/s\n",
               kind_name[c->kind], c->layout == CLOPS_INDICES_PER_PLANE ? "per-plane" : "flat", c->es,
               c->itype == U32 ? "u32" : "i64", moved / 1048576.0, 1e-9 * moved / to[reps / 2], threads,
               1e-9 * moved / tc[reps / 2], r[reps / 2], r[0], r[reps - 1], 1e-9 * moved / to[0],
               1e-9 * moved / tc[0]);
        fflush(stdout);
        clops_operator_free(op);
        free(x), free(idx), free(y), free(a), free(b);
    }
    clops_context_free(ctx);
    return 0;
}
