/* notes/fallback_bench.c - N fallback operators (DepthToSpace uint32 1x4x2x2, block 2, each
 * with its own input and output) executed on one queue (in order, or out of order with a
 * third argument `ooo`); prints the seconds from the
 * first execute to the end of the final clFinish, the most threads the process had
 * (/proc/self/task, counted after the executes) and whether every output is right.
 * The operators fall back because the context has no compiler and no cache
 * (options.disable = CLOPS_CAPABILITY_COMPILER, cache off). Public API only, so it links
 * against any build of libclops (the old one of 4e7619b too).
 *   fallback_bench N MODE [ooo]
 *     MODE 0: the N executes back to back, one clFinish at the end
 *     MODE 2: a clFinish after each execute
 *     MODE 1: one operator executed N times back to back
 *     MODE 3: a chain: operator i after operator i-1's event, on its output (issue 38, Q3)
 * Build and run: see notes/fallback.md (issue 32, P1; issue 38, Q3). */
#define _POSIX_C_SOURCE 200809L
#define CL_TARGET_OPENCL_VERSION 120
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <clops/clops.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int threads(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(2); } } while (0)

int main(int argc, char **argv)
{
    CHECK(argc == 3 || (argc == 4 && strcmp(argv[3], "ooo") == 0),
          "usage: %s N MODE [ooo] (0 back to back, 2 clFinish after each, 1 one operator N times, 3 a chain)", argv[0]);
    const int n = atoi(argv[1]), mode = atoi(argv[2]), ooo = argc == 4;
    CHECK(n > 0 && mode >= 0 && mode <= 3, "bad N or MODE");
    clops_context *dflt = NULL;
    CHECK(clops_context_create(&dflt) == CLOPS_SUCCESS, "context: %s", clops_last_error_message());
    cl_context cl = clops_context_cl_context(dflt);
    cl_device_id dev = NULL;
    CHECK(clGetContextInfo(cl, CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL) == CL_SUCCESS, "device");
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(cl, dev, ooo ? CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0, &err);
    CHECK(q, "queue: %d", (int)err);
    clops_context_options o;
    clops_context_options_init(&o, sizeof o);
    o.disable = CLOPS_CAPABILITY_COMPILER;
    o.cache = CLOPS_CACHE_POLICY_OFF;
    clops_context *ctx = NULL;
    CHECK(clops_context_create_from_cl_with_options(cl, dev, q, &o, &ctx) == CLOPS_SUCCESS, "fallback context: %s",
          clops_last_error_message());
    const clops_tensor_desc x = {CLOPS_DATA_TYPE_UINT32, {1, 4, 2, 2}, NULL}, y = {CLOPS_DATA_TYPE_UINT32, {1, 1, 4, 4}, NULL};
    const clops_depth_to_space_desc d2s = {&x, &y, 2, CLOPS_ORDER_DEPTH_COLUMN_ROW};
    const clops_operator_desc desc = {CLOPS_OPERATOR_DEPTH_TO_SPACE, &d2s};
    const int nops = mode == 1 ? 1 : n;
    clops_operator **ops = calloc((size_t)nops, sizeof *ops);
    cl_mem *in = calloc((size_t)n, sizeof *in), *out = calloc((size_t)n, sizeof *out);
    for (int i = 0; i < nops; i++) {
        CHECK(clops_operator_create(ctx, &desc, &ops[i]) == CLOPS_SUCCESS, "create %d: %s", i, clops_last_error_message());
        clops_operator_info info;
        clops_operator_get_info(ops[i], &info);
        CHECK(info.backend == CLOPS_BACKEND_HOST, "operator %d did not fall back", i);
    }
    for (int i = 0; i < n; i++) {
        uint32_t v[16];
        for (int k = 0; k < 16; k++) v[k] = (uint32_t)i * 16u + (uint32_t)k;
        in[i] = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof v, v, &err);
        out[i] = clCreateBuffer(cl, CL_MEM_READ_WRITE, sizeof v, NULL, &err);
        CHECK(in[i] && out[i], "buffers");
    }
    const int before = threads();
    int most = before;
    const double t0 = now();
    cl_event prev = NULL;
    for (int i = 0; i < n; i++) {
        const clops_buffers b = {mode == 3 && i ? out[i - 1] : in[i], NULL, out[i]};
        cl_event ev = NULL;
        const clops_status st = clops_operator_execute(ops[mode == 1 ? 0 : i], &b, prev ? 1 : 0, prev ? &prev : NULL,
                                                       mode == 3 ? &ev : NULL);
        CHECK(st == CLOPS_SUCCESS, "execute %d: %s: %s", i, clops_status_name(st), clops_last_error_message());
        if (prev) clReleaseEvent(prev);
        prev = ev;
        if (mode == 2) clFinish(q);
        if (i % 256 == 255 || i == n - 1) {
            const int t = threads();
            if (t > most) most = t;
        }
    }
    clFinish(q);
    const double seconds = now() - t0;
    if (prev) clReleaseEvent(prev);
    int wrong = 0;
    uint32_t chain[16], next[16]; /* MODE 3: input 0 permuted i + 1 times */
    for (int k = 0; k < 16; k++) chain[k] = (uint32_t)k;
    for (int i = 0; i < n; i++) {
        uint32_t got[16];
        clEnqueueReadBuffer(q, out[i], CL_TRUE, 0, sizeof got, got, 0, NULL, NULL);
        /* DCR, block 2, C=4 -> 1: y[h*2+bh][w*2+bw] = x[(bh*2+bw)][h][w] */
        for (int h = 0; h < 4; h++)
            for (int w = 0; w < 4; w++) {
                const uint32_t c = (uint32_t)((h % 2) * 2 + w % 2), want = (uint32_t)i * 16u + c * 4u + (uint32_t)(h / 2) * 2u + (uint32_t)(w / 2);
                next[h * 4 + w] = chain[c * 4 + (h / 2) * 2 + w / 2];
                if (got[h * 4 + w] != (mode == 3 ? next[h * 4 + w] : want)) wrong++;
            }
        memcpy(chain, next, sizeof chain);
    }
    printf("N=%d mode=%d%s seconds=%.3f threads_before=%d threads_most=%d wrong=%d\n", n, mode, ooo ? " ooo" : "", seconds, before, most, wrong);
    for (int i = 0; i < nops; i++) clops_operator_free(ops[i]);
    for (int i = 0; i < n; i++) clReleaseMemObject(in[i]), clReleaseMemObject(out[i]);
    clops_context_free(ctx);
    clReleaseCommandQueue(q);
    clops_context_free(dflt);
    return wrong != 0;
}
