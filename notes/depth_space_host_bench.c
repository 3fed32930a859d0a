/* notes/depth_space_host_bench.c - the host kernels (clops_host_run) for DepthToSpace and
 * SpaceToDepth at 64 MiB against a memcpy of the same bytes split over as many threads as the
 * host kernels use (one per online CPU), run alternately in one process; prints the median
 * GB/s (bytes read + written) of each and the median of per-round time ratios memcpy/op.
 * Build and run: see notes/depth_space_perf.md. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <clops/clops.h>

typedef struct { unsigned char *dst; const unsigned char *src; size_t n; } part;

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

int main(void)
{
    const size_t bytes = 64u << 20;
    const int reps = 9, threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    static const unsigned widths[4] = {1, 2, 4, 8}, blocks[4] = {2, 3, 4, 8};
    static const clops_data_type types[4] = {CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_FLOAT16, CLOPS_DATA_TYPE_FLOAT32,
                                             CLOPS_DATA_TYPE_FLOAT64};
    unsigned char *a = malloc(bytes + 4096), *b = malloc(bytes + 4096);
    if (!a || !b) return 1;
    memset(a, 1, bytes + 4096);
    memset(b, 2, bytes + 4096);
    for (int op = 0; op < 2; op++)
        for (int ord = 0; ord < 2; ord++)
            for (int wi = 0; wi < 4; wi++)
                for (int bi = 0; bi < 4; bi++) {
                    const unsigned bs = blocks[bi], es = widths[wi];
                    unsigned side = 1;
                    while ((size_t)(side + 1) * (side + 1) <= bytes / es / 4) side++;
                    side = side / bs * bs;
                    const uint32_t deep[4] = {1, 4 * bs * bs, side / bs, side / bs}, wide[4] = {1, 4, side, side};
                    clops_tensor_desc in = {types[wi], {0, 0, 0, 0}, NULL}, out = {types[wi], {0, 0, 0, 0}, NULL};
                    memcpy(in.sizes, op ? wide : deep, sizeof deep);
                    memcpy(out.sizes, op ? deep : wide, sizeof deep);
                    clops_depth_to_space_desc d = {&in, &out, bs, (clops_depth_space_order)ord};
                    clops_operator_desc desc = {op ? CLOPS_OPERATOR_SPACE_TO_DEPTH : CLOPS_OPERATOR_DEPTH_TO_SPACE, &d};
                    const size_t n = (size_t)4 * side * side * es;
                    clops_host_buffers hb = {a, n, NULL, 0, b, n};
                    double to[32], tc[32], r[32];
                    clops_host_run(&desc, &hb);
                    parallel_memcpy(b, a, n, threads);
                    for (int k = 0; k < reps; k++) {
                        double t0 = now();
                        if (clops_host_run(&desc, &hb) != CLOPS_SUCCESS) {
                            fprintf(stderr, "clops_host_run: %s\n", clops_last_error_message());
                            return 1;
                        }
                        double t1 = now();
                        parallel_memcpy(b, a, n, threads);
                        double t2 = now();
                        to[k] = t1 - t0, tc[k] = t2 - t1, r[k] = tc[k] / to[k];
                    }
                    qsort(to, reps, sizeof to[0], cmpd);
                    qsort(tc, reps, sizeof tc[0], cmpd);
                    qsort(r, reps, sizeof r[0], cmpd);
                    printf("%s %s w%u b%u  op %.1f GB/s  memcpy x%d %.1f GB/s  ratio %.2f\n", op ? "S2D" : "D2S",
                           ord ? "CRD" : "DCR", es, bs, 2e-9 * n / to[reps / 2], threads, 2e-9 * n / tc[reps / 2],
                           r[reps / 2]);
                    fflush(stdout);
                }
    free(a);
    free(b);
    return 0;
}
