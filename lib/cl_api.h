/* cl_api.h - every OpenCL and file-system call clops makes, through one table.
 *
 * lib/ calls OpenCL by its usual names; after this header those names mean the
 * table's entries (clops_cl.clCreateBuffer, ...), which point at the real
 * functions. In the shared library the table is const. The test build
 * (CLOPS_TEST_HOOKS, the static clops_testable library) makes it writable so
 * that tests can make any call fail - out of resources, out of host memory, a
 * failed build or enqueue, a full or vanishing cache directory - and check that
 * clops ends in a clean status with nothing leaked, without a special device. */
#ifndef CLOPS_CL_API_H
#define CLOPS_CL_API_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "clops/clops.h"

#define CLOPS_CL_FUNCTIONS(X)                                                                      \
    X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs) X(clGetDeviceInfo)                  \
    X(clCreateContext) X(clRetainContext) X(clReleaseContext)                                       \
    X(clCreateCommandQueue) X(clRetainCommandQueue) X(clReleaseCommandQueue) X(clFinish)           \
    X(clGetCommandQueueInfo) X(clGetEventInfo)                                                      \
    X(clCreateBuffer) X(clReleaseMemObject) X(clGetMemObjectInfo)                                   \
    X(clCreateProgramWithSource) X(clCreateProgramWithBinary) X(clBuildProgram)                     \
    X(clGetProgramInfo) X(clGetProgramBuildInfo) X(clReleaseProgram)                                \
    X(clCreateKernel) X(clReleaseKernel) X(clSetKernelArg) X(clGetKernelWorkGroupInfo) X(clGetKernelInfo)              \
    X(clEnqueueNDRangeKernel) X(clEnqueueReadBuffer) X(clEnqueueFillBuffer)                         \
    X(clEnqueueMapBuffer) X(clEnqueueUnmapMemObject) X(clEnqueueMarkerWithWaitList)                 \
    X(clWaitForEvents) X(clRetainEvent) X(clReleaseEvent) X(clGetEventProfilingInfo)                \
    X(clCreateUserEvent) X(clSetUserEventStatus) X(clRetainMemObject)                               \
    X(clFlush) X(clSetEventCallback)

typedef struct clops_cl_api {
#define CLOPS_X_MEMBER(f) __typeof__(f) *f;
    CLOPS_CL_FUNCTIONS(CLOPS_X_MEMBER)
#undef CLOPS_X_MEMBER
    /* File system calls of the store (lib/store/file.c; store/cache_config.c's mkdir). io_create
     * creates a new file for writing, exclusively (O_CREAT | O_EXCL). */
    ssize_t (*io_write)(int fd, const void *buf, size_t n);
    int (*io_fsync)(int fd);
    int (*io_rename)(const char *from, const char *to);
    int (*io_create)(const char *path, mode_t mode);
    int (*io_mkdir)(const char *path, mode_t mode);
    int (*io_open)(const char *path, int flags); /* an existing file (file.c's writes in place) */
    /* Starts a thread (pthread_create): the host fallback's pool (ops/fallback.c), so that
     * tests can refuse it as RLIMIT_NPROC does (EAGAIN). */
    int (*thread_create)(pthread_t *thread, const pthread_attr_t *attr, void *(*run)(void *), void *arg);
} clops_cl_api;

#ifdef CLOPS_TEST_HOOKS
extern clops_cl_api clops_cl;
/* The real entry points, for tests to restore the table. */
extern const clops_cl_api clops_cl_real;
/* A device that computes wrong results, for tests of `clops conformance`: with
 * CLOPS_TEST_CORRUPT_OUTPUT=1 in the environment, every successful execution
 * flips the lowest bit of the first byte of its output (on cl_mem after the
 * operator's event, on host memory in place). The shared library has no such
 * code: there the macros below are empty. */
void clops_test_corrupt_cl(cl_command_queue queue, cl_mem output, size_t output_bytes, cl_event *event);
void clops_test_corrupt_host(void *output, size_t output_bytes);
/* A kernel execution that fails as on a lost device (issue 31: NVIDIA's -9999,
 * an illegal memory access): the `nth` clEnqueueNDRangeKernel from now (1: the
 * next; a launch that asks for no event passes it on to the next that does)
 * runs, then its event is replaced by one that ended with execution status
 * `status` (negative). The table's entry is restored after that launch, or at
 * once by nth = 0. Not thread-safe: a test's own seam. */
void clops_test_fail_launch(unsigned nth, cl_int status);
#define CLOPS_TEST_CORRUPT_CL(queue, output, bytes, event) clops_test_corrupt_cl(queue, output, bytes, event)
#define CLOPS_TEST_CORRUPT_HOST(output, bytes) clops_test_corrupt_host(output, bytes)
/* A device with one broken kernel, for tests of `clops conformance`'s coverage:
 * while clops_test_skip_kernel (or, when that is NULL, CLOPS_TEST_SKIP_KERNEL in
 * the environment) names a kernel function of the kernels/ files, every launch of that
 * kernel (ops/plan.c clops_enqueue_launch) enqueues a marker with the same wait
 * list and event instead: its output is left unwritten, its status words
 * unraised. The shared library has no such code. */
extern const char *clops_test_skip_kernel;
bool clops_test_skips_kernel(cl_kernel kernel);
#else
extern const clops_cl_api clops_cl;
#define CLOPS_TEST_CORRUPT_CL(queue, output, bytes, event) ((void)0)
#define CLOPS_TEST_CORRUPT_HOST(output, bytes) ((void)0)
#endif

#ifndef CLOPS_CL_API_NO_MACROS
#define clGetPlatformIDs clops_cl.clGetPlatformIDs
#define clGetPlatformInfo clops_cl.clGetPlatformInfo
#define clGetDeviceIDs clops_cl.clGetDeviceIDs
#define clGetDeviceInfo clops_cl.clGetDeviceInfo
#define clCreateContext clops_cl.clCreateContext
#define clRetainContext clops_cl.clRetainContext
#define clReleaseContext clops_cl.clReleaseContext
#define clCreateCommandQueue clops_cl.clCreateCommandQueue
#define clRetainCommandQueue clops_cl.clRetainCommandQueue
#define clReleaseCommandQueue clops_cl.clReleaseCommandQueue
#define clFinish clops_cl.clFinish
#define clGetCommandQueueInfo clops_cl.clGetCommandQueueInfo
#define clGetEventInfo clops_cl.clGetEventInfo
#define clCreateBuffer clops_cl.clCreateBuffer
#define clReleaseMemObject clops_cl.clReleaseMemObject
#define clGetMemObjectInfo clops_cl.clGetMemObjectInfo
#define clCreateProgramWithSource clops_cl.clCreateProgramWithSource
#define clCreateProgramWithBinary clops_cl.clCreateProgramWithBinary
#define clBuildProgram clops_cl.clBuildProgram
#define clGetProgramInfo clops_cl.clGetProgramInfo
#define clGetProgramBuildInfo clops_cl.clGetProgramBuildInfo
#define clReleaseProgram clops_cl.clReleaseProgram
#define clCreateKernel clops_cl.clCreateKernel
#define clReleaseKernel clops_cl.clReleaseKernel
#define clSetKernelArg clops_cl.clSetKernelArg
#define clGetKernelWorkGroupInfo clops_cl.clGetKernelWorkGroupInfo
#define clGetKernelInfo clops_cl.clGetKernelInfo
#define clEnqueueNDRangeKernel clops_cl.clEnqueueNDRangeKernel
#define clEnqueueReadBuffer clops_cl.clEnqueueReadBuffer
#define clEnqueueFillBuffer clops_cl.clEnqueueFillBuffer
#define clEnqueueMapBuffer clops_cl.clEnqueueMapBuffer
#define clEnqueueUnmapMemObject clops_cl.clEnqueueUnmapMemObject
#define clEnqueueMarkerWithWaitList clops_cl.clEnqueueMarkerWithWaitList
#define clWaitForEvents clops_cl.clWaitForEvents
#define clRetainEvent clops_cl.clRetainEvent
#define clReleaseEvent clops_cl.clReleaseEvent
#define clGetEventProfilingInfo clops_cl.clGetEventProfilingInfo
#define clCreateUserEvent clops_cl.clCreateUserEvent
#define clSetUserEventStatus clops_cl.clSetUserEventStatus
#define clRetainMemObject clops_cl.clRetainMemObject
#define clFlush clops_cl.clFlush
#define clSetEventCallback clops_cl.clSetEventCallback
#endif

#endif /* CLOPS_CL_API_H */
