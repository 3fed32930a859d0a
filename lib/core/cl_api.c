/* cl_api.c - the table of real OpenCL and file-system entry points (cl_api.h). */
#define _POSIX_C_SOURCE 200809L
#define CLOPS_CL_API_NO_MACROS
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cl_api.h"

static int create_exclusive(const char *path, mode_t mode)
{
    return open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
}

static int open_existing(const char *path, int flags)
{
    return open(path, flags);
}

#define CLOPS_REAL_TABLE                                                                           \
    {                                                                                              \
        CLOPS_CL_FUNCTIONS(CLOPS_X_INIT) write, fsync, rename, create_exclusive, mkdir, open_existing, \
            pthread_create  \
    }
#define CLOPS_X_INIT(f) f,

#ifdef CLOPS_TEST_HOOKS
const clops_cl_api clops_cl_real = CLOPS_REAL_TABLE;
clops_cl_api clops_cl = CLOPS_REAL_TABLE;

static int corrupting(size_t output_bytes)
{
    const char *env = getenv("CLOPS_TEST_CORRUPT_OUTPUT");
    return output_bytes > 0 && env && env[0] == '1';
}

void clops_test_corrupt_host(void *output, size_t output_bytes)
{
    if (corrupting(output_bytes)) ((unsigned char *)output)[0] ^= 1;
}

void clops_test_corrupt_cl(cl_command_queue queue, cl_mem output, size_t output_bytes, cl_event *event)
{
    unsigned char byte;
    if (!corrupting(output_bytes)) return;
    if (event && *event)
        clWaitForEvents(1, event);
    else
        clFinish(queue);
    if (clEnqueueReadBuffer(queue, output, CL_TRUE, 0, 1, &byte, 0, NULL, NULL) != CL_SUCCESS) return;
    byte ^= 1;
    clEnqueueWriteBuffer(queue, output, CL_TRUE, 0, 1, &byte, 0, NULL, NULL);
}

/* clops_test_fail_launch: the launch (counted from 1) whose event fails, and the status it ends with. */
static unsigned fail_launch_left;
static cl_int fail_launch_status;

static cl_int CL_API_CALL failing_launch(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *off,
                                         const size_t *global, const size_t *local, cl_uint n, const cl_event *wait,
                                         cl_event *ev)
{
    const cl_int err = clEnqueueNDRangeKernel(q, k, dim, off, global, local, n, wait, ev);
    if (err != CL_SUCCESS || fail_launch_left == 0) return err;
    if (fail_launch_left > 1 || !ev) { /* not yet, or a launch without an event: the next one with one */
        if (fail_launch_left > 1) fail_launch_left--;
        return err;
    }
    fail_launch_left = 0;
    clops_cl.clEnqueueNDRangeKernel = clEnqueueNDRangeKernel;
    /* The command ran; its event is replaced by one that ended as a lost device's does. */
    cl_context c = NULL;
    cl_int e = clWaitForEvents(1, ev);
    if (e == CL_SUCCESS) e = clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof c, &c, NULL);
    cl_event failed = e == CL_SUCCESS ? clCreateUserEvent(c, &e) : NULL;
    if (!failed) return e;
    if ((e = clSetUserEventStatus(failed, fail_launch_status)) != CL_SUCCESS) {
        clReleaseEvent(failed);
        return e;
    }
    clReleaseEvent(*ev);
    *ev = failed;
    return CL_SUCCESS;
}

void clops_test_fail_launch(unsigned nth, cl_int status)
{
    fail_launch_left = nth;
    fail_launch_status = status;
    clops_cl.clEnqueueNDRangeKernel = nth ? failing_launch : clEnqueueNDRangeKernel;
}

const char *clops_test_skip_kernel;

bool clops_test_skips_kernel(cl_kernel kernel)
{
    const char *skip = clops_test_skip_kernel ? clops_test_skip_kernel : getenv("CLOPS_TEST_SKIP_KERNEL");
    char name[128];
    if (!skip || !skip[0]) return false;
    if (clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL) != CL_SUCCESS) return false;
    return strcmp(name, skip) == 0;
}
#else
const clops_cl_api clops_cl = CLOPS_REAL_TABLE;
#endif
