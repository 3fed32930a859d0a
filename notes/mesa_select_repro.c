/*
 * mesa_select_repro.c - a Mesa 22.3 rusticl (llvmpipe) miscompile, found through
 * MaxUnpooling's windows kernel (notes/gpu_plans.md, 2026-11-28, item 2).
 *
 * A vector select on 64-bit lanes whose mask is a 32-bit comparison widened by
 * convert_longN picks its first operand in every lane: select(0, 1, mask) gives 0
 * where the comparison holds. The same mask stored to memory is right (-1), and a
 * mask that comes from a 64-bit comparison, from memory, or a scalar select is
 * right; `?:` on the vectors fails the same way. PoCL gives the spec's result
 * (OpenCL C 6.15.6: a vector select takes b where the mask's MSB is set).
 *
 *   cc -std=c11 -Wall -Wextra notes/mesa_select_repro.c -lOpenCL -o /tmp/mesa_select_repro
 *   RUSTICL_ENABLE=llvmpipe /tmp/mesa_select_repro
 *
 * Debian 12, mesa-opencl-icd 22.3.6 (llvmpipe, LLVM 15.0.6), 2026-11-28:
 *   rusticl: llvmpipe (LLVM 15.0.6, 256 bits) (driver 22.3.6)
 *     select ulong2,  mask convert_long2(uint2 == 0u)       43 of  128 lanes wrong
 *     select ulong4,  mask convert_long4(uint4 == 0u)       86 of  256 lanes wrong
 *     select ulong16, mask convert_long16(uint16 == 0u)    342 of 1024 lanes wrong
 *     select ulong2,  mask convert_long2(int2 < 1)          43 of  128 lanes wrong
 *     ulong2 ?:, condition convert_long2(uint2 == 0u) < 0   43 of  128 lanes wrong
 *     the mask itself, stored as long2                       0 of  128 lanes wrong
 *     select ulong2,  mask convert_ulong2(uint2) == 0ul      0 of  128 lanes wrong
 *     select ulong2,  mask long2 loaded from memory          0 of  128 lanes wrong
 *     scalar select ulong, mask (long)(uint == 0u)           0 of  128 lanes wrong
 *   (the wrong lanes are exactly those whose comparison holds: 1 in 3 here). PoCL 3.1: 0 everywhere.
 * Returns 1 if any device gave a wrong lane.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <string.h>

static const char *src =
    "#define CASE(k, n, expr) if (v == k) { vstore##n(expr, g, y); return; }\n"
    "__kernel void k(__global const uint *t, __global const long *mem, __global ulong *y, int v)\n"
    "{\n"
    "    const uint g = get_global_id(0);\n"
    "    CASE(0, 2, select((ulong2)(0), (ulong2)(1), convert_long2(vload2(g, t) == 0u)))\n"
    "    CASE(1, 4, select((ulong4)(0), (ulong4)(1), convert_long4(vload4(g, t) == 0u)))\n"
    "    CASE(2, 16, select((ulong16)(0), (ulong16)(1), convert_long16(vload16(g, t) == 0u)))\n"
    "    CASE(3, 2, select((ulong2)(0), (ulong2)(1), convert_long2(as_int2(vload2(g, t)) < 1)))\n"
    "    CASE(4, 2, convert_long2(vload2(g, t) == 0u) < 0 ? (ulong2)(1) : (ulong2)(0))\n"
    "    CASE(5, 2, as_ulong2(convert_long2(vload2(g, t) == 0u)))\n"
    "    CASE(6, 2, select((ulong2)(0), (ulong2)(1), convert_ulong2(vload2(g, t)) == 0ul))\n"
    "    CASE(7, 2, select((ulong2)(0), (ulong2)(1), vload2(g, mem)))\n"
    "    if (v == 8) y[g] = select((ulong)0, (ulong)1, (long)(t[g] == 0u));\n"
    "}\n";

enum { ITEMS = 64, CASES = 9 };
static const struct {
    int width;        /* lanes per work-item */
    cl_ulong if_true; /* the lane's value where t == 0 (else 0) */
    const char *what;
} cases[CASES] = {
    {2, 1, "select ulong2,  mask convert_long2(uint2 == 0u)"},
    {4, 1, "select ulong4,  mask convert_long4(uint4 == 0u)"},
    {16, 1, "select ulong16, mask convert_long16(uint16 == 0u)"},
    {2, 1, "select ulong2,  mask convert_long2(int2 < 1)"},
    {2, 1, "ulong2 ?:, condition convert_long2(uint2 == 0u) < 0"},
    {2, ~(cl_ulong)0, "the mask itself, stored as long2"},
    {2, 1, "select ulong2,  mask convert_ulong2(uint2) == 0ul"},
    {2, 1, "select ulong2,  mask long2 loaded from memory"},
    {1, 1, "scalar select ulong, mask (long)(uint == 0u)"},
};

static int run_device(cl_platform_id platform, cl_device_id dev)
{
    char pname[256], dname[256], dver[64];
    clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof pname, pname, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dname, dname, NULL);
    clGetDeviceInfo(dev, CL_DRIVER_VERSION, sizeof dver, dver, NULL);
    printf("%s: %s (driver %s)\n", pname, dname, dver);
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS) {
        char log[8192] = "";
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        printf("  build failed: %s\n", log);
        return 1;
    }
    cl_kernel k = clCreateKernel(prog, "k", &err);
    static cl_uint t[16 * ITEMS];
    static cl_long mem[16 * ITEMS];
    static cl_ulong y[16 * ITEMS];
    for (int i = 0; i < 16 * ITEMS; i++) {
        t[i] = (cl_uint)(i % 3);
        mem[i] = t[i] == 0 ? -1 : 0;
    }
    cl_mem bt = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof t, t, &err);
    cl_mem bm = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof mem, mem, &err);
    cl_mem by = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof y, NULL, &err);
    int any = 0;
    for (int v = 0; v < CASES; v++) {
        memset(y, 0xab, sizeof y);
        clEnqueueWriteBuffer(q, by, CL_TRUE, 0, sizeof y, y, 0, NULL, NULL);
        clSetKernelArg(k, 0, sizeof bt, &bt);
        clSetKernelArg(k, 1, sizeof bm, &bm);
        clSetKernelArg(k, 2, sizeof by, &by);
        clSetKernelArg(k, 3, sizeof v, &v);
        const size_t items = ITEMS;
        clEnqueueNDRangeKernel(q, k, 1, NULL, &items, NULL, 0, NULL, NULL);
        clEnqueueReadBuffer(q, by, CL_TRUE, 0, sizeof y, y, 0, NULL, NULL);
        int bad = 0;
        for (int i = 0; i < cases[v].width * ITEMS; i++) bad += y[i] != (t[i] == 0 ? cases[v].if_true : 0);
        printf("  %-52s %4d of %4d lanes wrong\n", cases[v].what, bad, cases[v].width * ITEMS);
        any |= bad != 0;
    }
    clReleaseMemObject(bt);
    clReleaseMemObject(bm);
    clReleaseMemObject(by);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return any;
}

int main(void)
{
    cl_platform_id platforms[8];
    cl_uint np = 0;
    clGetPlatformIDs(8, platforms, &np);
    int any = 0;
    for (cl_uint p = 0; p < np && p < 8; p++) {
        cl_device_id dev;
        cl_uint nd = 0;
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 1, &dev, &nd) == CL_SUCCESS && nd)
            any |= run_device(platforms[p], dev);
    }
    return any;
}
