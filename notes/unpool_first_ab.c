/* unpool_first_ab.c - MaxUnpooling kernel time by profiling events, for A/B runs of
 * two builds (notes/max_unpooling.md, firstexec). FLOAT32 input, INT64 per-plane
 * indices: `scat` distinct positions spread over each output plane (k * 2654435761
 * mod plane), `ovl` a real max_pool2d(3, 2, 1)'s argmax; input N x C x H x W,
 * output N x C x 2H x 2W, on the first OpenCL device of the first platform.
 * Every clEnqueueNDRangeKernel that libclops makes is intercepted here (the
 * executable exports the symbol, -rdynamic) to keep its event: the time of an
 * execution is the sum of its kernels' START..END. `fresh`: each repetition on a
 * new operator (its first execution; the creation untimed), else one operator
 * executed again and again after a warm-up; `cold`: the host writes 64 MiB
 * before each execution (the caches hold none of the tensors). Prints the
 * medians and each kernel's mean.
 *
 *   gcc -O2 -rdynamic -o ab_new notes/unpool_first_ab.c -Iinclude -Lbuild -lclops -lOpenCL -ldl \
 *       -Wl,-rpath,$PWD/build
 *   ./ab_new scat 4 64 128 128 9 fresh   (same source built against the other tree's
 *                                           include/ and library as ab_old; alternate them)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <clops/clops.h>

#define MAXEV 256
static cl_event evs[MAXEV];
static cl_kernel kers[MAXEV];
static int nev;

typedef cl_int (*enq_fn)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *,
                         cl_uint, const cl_event *, cl_event *);

cl_int clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint d, const size_t *o, const size_t *g,
                              const size_t *l, cl_uint n, const cl_event *w, cl_event *e)
{
    static enq_fn real;
    if (!real) real = (enq_fn)dlsym(RTLD_NEXT, "clEnqueueNDRangeKernel");
    cl_event mine;
    const cl_int r = real(q, k, d, o, g, l, n, w, &mine);
    if (r != CL_SUCCESS) return r;
    if (e) {
        *e = mine;
        clRetainEvent(mine);
    }
    if (nev < MAXEV) {
        evs[nev] = mine;
        kers[nev++] = k;
        clRetainKernel(k);
    } else {
        clReleaseEvent(mine);
    }
    return r;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static unsigned long long mix64(unsigned long long x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: %s scat|ovl N C H W reps [fresh] [cold]\n", argv[0]);
        return 2;
    }
    int fresh = 0, cold = 0;
    for (int i = 7; i < argc; i++) fresh |= !strcmp(argv[i], "fresh"), cold |= !strcmp(argv[i], "cold");
    const int ovl = !strcmp(argv[1], "ovl");
    const unsigned N = (unsigned)atoi(argv[2]), C = (unsigned)atoi(argv[3]), H = (unsigned)atoi(argv[4]),
                   W = (unsigned)atoi(argv[5]), reps = (unsigned)atoi(argv[6]);
    const unsigned OH = 2 * H, OW = 2 * W;
    const size_t planes = (size_t)N * C, in_n = planes * H * W, out_n = planes * OH * OW, plane = (size_t)OH * OW;
    float *x = malloc(in_n * 4);
    long long *ix = malloc(in_n * 8);
    for (size_t k = 0; k < in_n; k++) x[k] = (float)(mix64(k) & 0xffff);
    size_t k = 0;
    for (size_t p = 0; p < planes; p++)
        for (unsigned y = 0; y < H; y++)
            for (unsigned xx = 0; xx < W; xx++, k++) {
                if (!ovl) {
                    ix[k] = (long long)(((unsigned long long)(y * W + xx) * 2654435761ull) % plane);
                    continue;
                }
                unsigned long long best = 0, at = 0;
                for (unsigned r = y ? 2 * y - 1 : 0; r <= 2 * y + 1 && r < OH; r++)
                    for (unsigned q = xx ? 2 * xx - 1 : 0; q <= 2 * xx + 1 && q < OW; q++) {
                        const unsigned long long flat = (p * OH + r) * OW + q, v = (mix64(flat) >> 61) + 1;
                        if (v > best) best = v, at = (unsigned long long)r * OW + q;
                    }
                ix[k] = (long long)at;
            }
    cl_platform_id pl;
    cl_device_id dev;
    cl_int err;
    clGetPlatformIDs(1, &pl, NULL);
    clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, 1, &dev, NULL);
    cl_context cx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueue(cx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    cl_mem bi = clCreateBuffer(cx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, in_n * 4, x, &err);
    cl_mem bx = clCreateBuffer(cx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, in_n * 8, ix, &err);
    cl_mem bo = clCreateBuffer(cx, CL_MEM_READ_WRITE, out_n * 4, NULL, &err);
    clops_context *ctx;
    clops_status st = clops_context_create_from_cl(cx, dev, q, &ctx);
    if (st) {
        fprintf(stderr, "context: %s\n", clops_last_error_message());
        return 1;
    }
    clops_tensor_desc ti = {CLOPS_DATA_TYPE_FLOAT32, {N, C, H, W}, NULL};
    clops_tensor_desc tx = {CLOPS_DATA_TYPE_INT64, {N, C, H, W}, NULL};
    clops_tensor_desc to = {CLOPS_DATA_TYPE_FLOAT32, {N, C, OH, OW}, NULL};
    clops_max_unpooling_desc mu = {&ti, &tx, &to, CLOPS_INDICES_PER_PLANE};
    clops_operator_desc od = {CLOPS_OPERATOR_MAX_UNPOOLING, &mu};
    clops_operator *op;
    const clops_buffers b = {bi, bx, bo};
    double *kt = calloc(reps, sizeof *kt), *wt = calloc(reps, sizeof *wt), per[32] = {0};
    char names[32][64];
    int nn = 0;
    volatile unsigned char *junk = cold ? calloc(64u << 20, 1) : NULL;
    if ((st = clops_operator_create(ctx, &od, &op)) != CLOPS_SUCCESS) return 1;
    for (unsigned r = 0; r <= reps; r++) { /* 0: warm-up */
        if (fresh && r) {
            clops_operator_free(op);
            if ((st = clops_operator_create(ctx, &od, &op)) != CLOPS_SUCCESS) return 1;
        }
        for (size_t j = 0; junk && j < (64u << 20); j += 64) junk[j] = (unsigned char)(junk[j] + 1);
        nev = 0;
        const double t0 = now();
        st = clops_operator_execute(op, &b, 0, NULL, NULL);
        clFinish(q);
        const double t1 = now();
        if (st) {
            fprintf(stderr, "execute: %s\n", clops_last_error_message());
            return 1;
        }
        double sum = 0;
        for (int i = 0; i < nev; i++) {
            cl_ulong s, e;
            char nm[64] = "";
            clGetEventProfilingInfo(evs[i], CL_PROFILING_COMMAND_START, sizeof s, &s, NULL);
            clGetEventProfilingInfo(evs[i], CL_PROFILING_COMMAND_END, sizeof e, &e, NULL);
            clGetKernelInfo(kers[i], CL_KERNEL_FUNCTION_NAME, sizeof nm, nm, NULL);
            sum += (double)(e - s) * 1e-9;
            if (r) {
                int j = 0;
                while (j < nn && strcmp(names[j], nm)) j++;
                if (j == nn && nn < 32) strcpy(names[nn++], nm);
                if (j < 32) per[j] += (double)(e - s) * 1e-9;
            }
            clReleaseEvent(evs[i]);
            clReleaseKernel(kers[i]);
        }
        if (r) kt[r - 1] = sum, wt[r - 1] = t1 - t0;
    }
    qsort(kt, reps, sizeof *kt, cmp);
    qsort(wt, reps, sizeof *wt, cmp);
    printf("kernel_ms %.3f wall_ms %.3f", 1e3 * kt[reps / 2], 1e3 * wt[reps / 2]);
    for (int j = 0; j < nn; j++) printf(" %s %.3f", names[j], 1e3 * per[j] / reps);
    printf("\n");
    clops_operator_free(op);
    clops_context_free(ctx);
    return 0;
}
