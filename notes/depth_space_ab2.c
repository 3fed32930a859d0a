/* notes/depth_space_ab2.c - A/B/C... of DepthToSpace/SpaceToDepth launch shapes against the library's
 * default and the bench's copy kernel, all in one context on the same buffers, run in alternating
 * rounds; prints each candidate's median GB/s and the medians of its per-round ratios to the copy
 * and to the default (> 1: faster). Shapes as `clops bench`: the spatial tensor is {1, 4, s, s}.
 *   depth_space_ab2 OP(d2s|s2d) BYTES BLOCK ORDER(dcr|crd) MIB ROUNDS CAND...
 * CAND: def (no tuning), or chunk,l0,l1,l2,loop (loop 0 elements, 1 vectors, 2 tile; 0 = default).
 * Needs the static clops_testable (clops_operator_create_forced). Build: see depth_space_perf.md. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api/api.h"
#define MAXC 16
static double secs(cl_event e)
{
    cl_ulong a = 0, b = 0;
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, 8, &a, NULL);
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, 8, &b, NULL);
    return (double)(b - a) * 1e-9;
}
static int cmpd(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmpd);
    return v[n / 2];
}
static const char copy_src[] =
    "__kernel void bench_copy(__global const uint4 *restrict src, __global uint4 *restrict dst, ulong n)\n"
    "{ ulong i = (ulong)get_global_id(0) * 16; for (int k = 0; k < 16; k++, i++) if (i < n) dst[i] = src[i]; }\n";
int main(int argc, char **argv)
{
    if (argc < 8) { fprintf(stderr, "usage: see the file's comment\n"); return 2; }
    const int s2d = !strcmp(argv[1], "s2d");
    const unsigned es = (unsigned)atoi(argv[2]), b = (unsigned)atoi(argv[3]);
    const int crd = !strcmp(argv[4], "crd");
    const double mib = atof(argv[5]);
    const int rounds = atoi(argv[6]), ncand = argc - 7;
    if (ncand > MAXC || rounds > 64) return 2;
    cl_platform_id pl; cl_device_id dev; cl_int err;
    clGetPlatformIDs(1, &pl, NULL);
    clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, 1, &dev, NULL);
    cl_context cc = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueue(cc, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    clops_context *ctx;
    if (clops_context_create_from_cl(cc, dev, q, &ctx)) return 1;
    const clops_data_type types[17] = {[1] = CLOPS_DATA_TYPE_UINT8, [2] = CLOPS_DATA_TYPE_FLOAT16,
                                       [4] = CLOPS_DATA_TYPE_FLOAT32, [8] = CLOPS_DATA_TYPE_FLOAT64, [16] = CLOPS_DATA_TYPE_COMPLEX128};
    const unsigned side = b * (unsigned)floor(sqrt(mib * 1048576.0 / es / 4) / b + 0.5);
    const uint32_t wide[4] = {1, 4, side, side}, deep[4] = {1, 4 * b * b, side / b, side / b};
    const size_t bytes = (size_t)4 * side * side * es;
    clops_tensor_desc in = {types[es], {0}, NULL}, out = in;
    memcpy(in.sizes, s2d ? wide : deep, 16);
    memcpy(out.sizes, s2d ? deep : wide, 16);
    clops_depth_to_space_desc d = {&in, &out, b, crd ? CLOPS_ORDER_COLUMN_ROW_DEPTH : CLOPS_ORDER_DEPTH_COLUMN_ROW};
    clops_operator_desc desc = {s2d ? CLOPS_OPERATOR_SPACE_TO_DEPTH : CLOPS_OPERATOR_DEPTH_TO_SPACE, &d};
    clops_operator *ops[MAXC];
    for (int c = 0; c < ncand; c++) {
        clops_tuning t = {0, {0, 0, 0}, CLOPS_LOOP_DEFAULT};
        int loop = 0;
        clops_status st;
        const char *spec = argv[7 + c];
        if (spec[0] == 'P') setenv("CLOPS_AB_PLANE", "1", 1), spec++; /* experiment switch, see depth_space.c */
        else unsetenv("CLOPS_AB_PLANE");
        if (!strcmp(spec, "def")) st = clops_operator_create(ctx, &desc, &ops[c]);
        else {
            if (sscanf(spec, "%u,%zu,%zu,%zu,%d", &t.chunk, &t.local[0], &t.local[1], &t.local[2], &loop) != 5)
                return 2;
            t.loop = loop == 0 ? CLOPS_LOOP_ELEMENTS : loop == 1 ? CLOPS_LOOP_VECTORS : CLOPS_LOOP_TILE;
            st = clops_operator_create_forced(ctx, &desc, &t, &ops[c]);
        }
        if (st) { fprintf(stderr, "create %s: %s\n", argv[7 + c], clops_last_error_message()); return 1; }
    }
    cl_mem bx = clCreateBuffer(cc, CL_MEM_READ_WRITE, bytes, NULL, &err);
    cl_mem by = clCreateBuffer(cc, CL_MEM_READ_WRITE, bytes, NULL, &err);
    cl_mem cx = clCreateBuffer(cc, CL_MEM_READ_WRITE, bytes, NULL, &err);
    cl_mem cy = clCreateBuffer(cc, CL_MEM_READ_WRITE, bytes, NULL, &err);
    const cl_uint pattern = 0x9e3779b9u; /* every buffer written once: unwritten pages read as the zero page */
    const cl_mem all[4] = {bx, by, cx, cy};
    for (int k = 0; k < 4; k++) clEnqueueFillBuffer(q, all[k], &pattern, 4, 0, bytes, 0, NULL, NULL);
    clFinish(q);
    cl_program prog = clCreateProgramWithSource(cc, 1, (const char *[]){copy_src}, NULL, &err);
    clBuildProgram(prog, 1, &dev, "", NULL, NULL);
    cl_kernel copy = clCreateKernel(prog, "bench_copy", &err);
    const cl_ulong n16 = bytes / 16;
    const size_t cl_local = 256, cl_global = (size_t)((n16 + 16 * 256 - 1) / (16 * 256)) * 256;
    clSetKernelArg(copy, 0, sizeof cx, &cx); /* its own buffers, as in clops bench */
    clSetKernelArg(copy, 1, sizeof cy, &cy);
    clSetKernelArg(copy, 2, sizeof n16, &n16);
    clops_buffers bb = {bx, NULL, by};
    double t[MAXC + 1][64];
    for (int r = -1; r < rounds; r++) {
        for (int c = 0; c <= ncand; c++) {
            cl_event e;
            if (c == ncand) clEnqueueNDRangeKernel(q, copy, 1, NULL, &cl_global, &cl_local, 0, NULL, &e);
            else if (clops_operator_execute(ops[c], &bb, 0, NULL, &e)) { fprintf(stderr, "%s\n", clops_last_error_message()); return 1; }
            clWaitForEvents(1, &e);
            if (r >= 0) t[c][r] = secs(e);
            clReleaseEvent(e);
        }
    }
    printf("%s %s w%u b%u %.0f MiB (side %u)\n", s2d ? "S2D" : "D2S", crd ? "CRD" : "DCR", es, b, mib, side);
    for (int c = 0; c <= ncand; c++) {
        double rc[64], rd[64], tt[64];
        for (int r = 0; r < rounds; r++) rc[r] = t[ncand][r] / t[c][r], rd[r] = t[0][r] / t[c][r], tt[r] = t[c][r];
        printf("  %-18s %5.1f GB/s  /copy %.2f  /first %.2f", c == ncand ? "copy" : argv[7 + c],
               2.0 * bytes / 1e9 / median(tt, rounds), median(rc, rounds), median(rd, rounds));
        if (c < ncand) {
            const clops_launch *l = &ops[c]->launches[0];
            printf("  global %zu,%zu,%zu local %zu,%zu,%zu %s", l->global[0], l->global[1], l->global[2], l->local[0],
                   l->local[1], l->local[2], strstr(ops[c]->options, "-DCHUNK"));
        }
        printf("\n");
    }
    return 0;
}
