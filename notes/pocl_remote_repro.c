/* pocl_remote_repro.c - the command pattern of clops's MaxUnpooling in plain
 * OpenCL, to reproduce the SIGSEGV in PoCL-Remote's pocl_create_command_full
 * (pocl_create_migration_commands) without clops.
 *
 *   cc -O1 -g notes/pocl_remote_repro.c -lOpenCL -o /tmp/repro
 *   /tmp/repro DEVICE ITERATIONS MODE
 *
 * MODE early: each event is released right after the next command that waits
 *             on it is enqueued (what clops does today);
 *      late:  every event is kept until the blocking read has returned.
 * Per iteration: four buffers and one program, then fill(flag), fill(output)
 * after it, kernel "a" and kernel "b" (both write output and flag) chained by
 * events, a blocking 4-byte read of flag; then everything is released. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src =
    "kernel void a(global const uint *x, global uint *y, global uint *flag) {\n"
    "  size_t i = get_global_id(0); y[i] = x[i]; if (i == 0) atomic_or(flag, 1u); }\n"
    "kernel void b(global const uint *x, global uint *y, global uint *flag) {\n"
    "  size_t i = get_global_id(0); if (y[i] != x[i]) atomic_or(flag, 2u); }\n";

#define CHECK(e, what)                                                                            \
    do {                                                                                          \
        if ((e) != CL_SUCCESS) {                                                                  \
            fprintf(stderr, "%s failed: %d\n", what, (int)(e));                                   \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: repro DEVICE ITERATIONS early|late\n");
        return 2;
    }
    const unsigned dev_index = (unsigned)atoi(argv[1]);
    const int iterations = atoi(argv[2]);
    const int late = strcmp(argv[3], "late") == 0;
    cl_platform_id platform;
    cl_device_id devices[8];
    cl_uint ndev = 0;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 8, devices, &ndev), "clGetDeviceIDs");
    if (dev_index >= ndev) return 2;
    cl_device_id dev = devices[dev_index];
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(err, "clCreateCommandQueue");
    enum { N = 4096 };
    static cl_uint host_x[N];
    for (int i = 0; i < N; i++) host_x[i] = (cl_uint)i * 2654435761u;
    for (int it = 0; it < iterations; it++) {
        cl_mem flag = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4, NULL, &err);
        CHECK(err, "clCreateBuffer(flag)");
        cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
        CHECK(err, "clCreateProgramWithSource");
        CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL), "clBuildProgram");
        cl_kernel ka = clCreateKernel(prog, "a", &err);
        CHECK(err, "clCreateKernel(a)");
        cl_kernel kb = clCreateKernel(prog, "b", &err);
        CHECK(err, "clCreateKernel(b)");
        cl_mem x = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof host_x, host_x, &err);
        CHECK(err, "clCreateBuffer(x)");
        cl_mem y = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof host_x, NULL, &err);
        CHECK(err, "clCreateBuffer(y)");
        cl_kernel ks[2] = {ka, kb};
        for (int k = 0; k < 2; k++) {
            CHECK(clSetKernelArg(ks[k], 0, sizeof x, &x), "arg0");
            CHECK(clSetKernelArg(ks[k], 1, sizeof y, &y), "arg1");
            CHECK(clSetKernelArg(ks[k], 2, sizeof flag, &flag), "arg2");
        }
        cl_event ev[4];
        const cl_uint zero = 0;
        const unsigned char zero_byte = 0;
        const size_t global = N;
        CHECK(clEnqueueFillBuffer(q, flag, &zero, 4, 0, 4, 0, NULL, &ev[0]), "fill(flag)");
        CHECK(clEnqueueFillBuffer(q, y, &zero_byte, 1, 0, sizeof host_x, 1, &ev[0], &ev[1]), "fill(y)");
        if (!late) clReleaseEvent(ev[0]);
        CHECK(clEnqueueNDRangeKernel(q, ka, 1, NULL, &global, NULL, 1, &ev[1], &ev[2]), "kernel a");
        if (!late) clReleaseEvent(ev[1]);
        CHECK(clEnqueueNDRangeKernel(q, kb, 1, NULL, &global, NULL, 1, &ev[2], &ev[3]), "kernel b");
        if (!late) clReleaseEvent(ev[2]);
        cl_uint result = 0;
        CHECK(clEnqueueReadBuffer(q, flag, CL_TRUE, 0, 4, &result, 1, &ev[3], NULL), "read(flag)");
        if (late)
            for (int e = 0; e < 3; e++) clReleaseEvent(ev[e]);
        clReleaseEvent(ev[3]);
        if (result != 1u) {
            fprintf(stderr, "iteration %d: flag %u, want 1\n", it, result);
            return 1;
        }
        clReleaseMemObject(x);
        clReleaseMemObject(y);
        clReleaseKernel(ka);
        clReleaseKernel(kb);
        clReleaseProgram(prog);
        clReleaseMemObject(flag);
    }
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    printf("%d iterations on device %u (%s): no failure\n", iterations, dev_index, argv[3]);
    return 0;
}
