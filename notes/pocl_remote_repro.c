/* pocl_remote_repro.c - PoCL-Remote 6.0's client corrupting its caller's stack,
 * in plain OpenCL (no clops), ready to send upstream.
 *
 *   cc -O1 -g notes/pocl_remote_repro.c -lOpenCL -o /tmp/repro
 *   /tmp/repro DEVICE_A DEVICE_B ITERATIONS [reuse]
 *
 * One context per device (DEVICE_A may equal DEVICE_B: two contexts on one
 * device), one in-order queue each. Each iteration, on the two contexts in
 * turn: three buffers and (unless `reuse`) one program with two kernels, then
 * fill(flag), fill(y) after it, kernel a, kernel b chained by events, a blocking
 * 4-byte read of flag; then (unless `reuse`) everything is released. Creating
 * and releasing buffers, programs and kernels are PoCL-R's synchronous network
 * commands; `reuse` keeps them for the whole run, so that only asynchronous
 * commands (fills, kernels, reads) remain per iteration.
 *
 * The race (lib/CL/devices/remote/communication.c, PoCL 6.0): a synchronous
 * network_command lives on its caller's stack. The writer thread appends it to
 * the in-flight queue, writes it to the socket, and then stores
 * client_write_end_timestamp_ns into it. When the server's reply arrives first,
 * the reader thread marks the command finished, the caller returns, and the
 * writer's store lands in whatever the caller's stack holds by then: a return
 * address (SIGSEGV at a garbage address), a local (a garbage cl_mem in
 * can_run_command), or the mutex of the next synchronous command placed at the
 * same address (the writer then fails `mutex->__data.__owner == 0'). The
 * asynchronous path waits for that store before completing; the synchronous
 * one does not. tools/scripts/pocl-6.0-remote-sync-command.patch makes it wait.
 *
 * Measured 2026-12-07 (2 cores, two pocld on loopback, 200 iterations a run):
 * unpatched client: 2 SIGSEGV and a hang in 10 runs (devices 0 1), 0 in 10 with
 * `reuse`; patched: see notes/pocl_remote.md. */
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

enum { N = 4096 };

typedef struct side {
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue q;
    cl_program prog;
    cl_kernel k[2];
    cl_mem x, y, flag;
} side;

static void acquire(side *s, const cl_uint *host_x)
{
    cl_int err;
    if (!s->prog) {
        s->prog = clCreateProgramWithSource(s->ctx, 1, &src, NULL, &err);
        CHECK(err, "clCreateProgramWithSource");
        CHECK(clBuildProgram(s->prog, 1, &s->dev, "", NULL, NULL), "clBuildProgram");
        s->k[0] = clCreateKernel(s->prog, "a", &err);
        CHECK(err, "clCreateKernel(a)");
        s->k[1] = clCreateKernel(s->prog, "b", &err);
        CHECK(err, "clCreateKernel(b)");
    }
    if (!s->x) {
        s->flag = clCreateBuffer(s->ctx, CL_MEM_READ_WRITE, 4, NULL, &err);
        CHECK(err, "clCreateBuffer(flag)");
        s->x = clCreateBuffer(s->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * 4, (void *)host_x, &err);
        CHECK(err, "clCreateBuffer(x)");
        s->y = clCreateBuffer(s->ctx, CL_MEM_READ_WRITE, N * 4, NULL, &err);
        CHECK(err, "clCreateBuffer(y)");
    }
}

static void release(side *s)
{
    clReleaseMemObject(s->x);
    clReleaseMemObject(s->y);
    clReleaseMemObject(s->flag);
    clReleaseKernel(s->k[0]);
    clReleaseKernel(s->k[1]);
    clReleaseProgram(s->prog);
    s->x = s->y = s->flag = NULL;
    s->prog = NULL;
}

/* One iteration's commands; the flag read back (1 when kernel b saw kernel a's output). */
static cl_uint run(side *s)
{
    for (int k = 0; k < 2; k++) {
        CHECK(clSetKernelArg(s->k[k], 0, sizeof s->x, &s->x), "arg0");
        CHECK(clSetKernelArg(s->k[k], 1, sizeof s->y, &s->y), "arg1");
        CHECK(clSetKernelArg(s->k[k], 2, sizeof s->flag, &s->flag), "arg2");
    }
    cl_event ev[4];
    const cl_uint zero = 0;
    const unsigned char zero_byte = 0;
    const size_t global = N;
    CHECK(clEnqueueFillBuffer(s->q, s->flag, &zero, 4, 0, 4, 0, NULL, &ev[0]), "fill(flag)");
    CHECK(clEnqueueFillBuffer(s->q, s->y, &zero_byte, 1, 0, N * 4, 1, &ev[0], &ev[1]), "fill(y)");
    CHECK(clEnqueueNDRangeKernel(s->q, s->k[0], 1, NULL, &global, NULL, 1, &ev[1], &ev[2]), "kernel a");
    CHECK(clEnqueueNDRangeKernel(s->q, s->k[1], 1, NULL, &global, NULL, 1, &ev[2], &ev[3]), "kernel b");
    cl_uint result = 0;
    CHECK(clEnqueueReadBuffer(s->q, s->flag, CL_TRUE, 0, 4, &result, 1, &ev[3], NULL), "read(flag)");
    for (int e = 0; e < 4; e++) clReleaseEvent(ev[e]);
    return result;
}

int main(int argc, char **argv)
{
    if (argc != 4 && !(argc == 5 && strcmp(argv[4], "reuse") == 0)) {
        fprintf(stderr, "usage: repro DEVICE_A DEVICE_B ITERATIONS [reuse]\n");
        return 2;
    }
    const int reuse = argc == 5, iterations = atoi(argv[3]);
    cl_platform_id platform;
    cl_device_id devices[8];
    cl_uint ndev = 0;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 8, devices, &ndev), "clGetDeviceIDs");
    side sides[2];
    memset(sides, 0, sizeof sides);
    for (int i = 0; i < 2; i++) {
        const unsigned d = (unsigned)atoi(argv[1 + i]);
        if (d >= ndev) return 2;
        cl_int err;
        sides[i].dev = devices[d];
        sides[i].ctx = clCreateContext(NULL, 1, &sides[i].dev, NULL, NULL, &err);
        CHECK(err, "clCreateContext");
        sides[i].q = clCreateCommandQueue(sides[i].ctx, sides[i].dev, 0, &err);
        CHECK(err, "clCreateCommandQueue");
    }
    static cl_uint host_x[N];
    for (int i = 0; i < N; i++) host_x[i] = (cl_uint)i * 2654435761u;
    for (int it = 0; it < iterations; it++) {
        side *s = &sides[it % 2];
        acquire(s, host_x);
        const cl_uint flag = run(s);
        if (flag != 1u) {
            fprintf(stderr, "iteration %d: flag %u, want 1\n", it, flag);
            return 1;
        }
        if (!reuse) release(s);
    }
    for (int i = 0; i < 2; i++) {
        if (sides[i].prog) release(&sides[i]);
        clReleaseCommandQueue(sides[i].q);
        clReleaseContext(sides[i].ctx);
    }
    printf("%d iterations on devices %s and %s%s: no failure\n", iterations, argv[1], argv[2],
           reuse ? " (reuse)" : "");
    return 0;
}
