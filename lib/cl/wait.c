/* wait.c - waiting for the device with the context's deadline (clops.h, "Deadline").
 *
 * Without a deadline, clWaitForEvents. With one, the events' execution status is
 * polled (after a flush, so the commands are sure to be submitted) with a sleep
 * that grows from 20 us to 2 ms: OpenCL has no wait with a timeout, and a
 * callback would not fire either when a remote device is gone. Either way a
 * negative execution status - a command that failed, or a device lost under it -
 * is CLOPS_ERROR_DEVICE_LOST. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "cl/cl.h"

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static clops_status lost(const char *device, cl_int status, const char *what)
{
    return clops_fail(CLOPS_ERROR_DEVICE_LOST, "device \"%s\": %s failed with execution status %d", device, what,
                      (int)status);
}

/* The first event of `events` not complete: its index, or n when all are; a
 * failed one (negative status, or a failed query) is reported through *failed. */
static cl_uint first_pending(cl_uint n, const cl_event *events, cl_int *failed)
{
    for (cl_uint i = 0; i < n; i++) {
        cl_int s = CL_COMPLETE;
        const cl_int err = clGetEventInfo(events[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL);
        if (err != CL_SUCCESS || s < 0) {
            *failed = err != CL_SUCCESS ? err : s;
            return i;
        }
        if (s != CL_COMPLETE) return i;
    }
    return n;
}

double clops_deadline(double timeout_seconds)
{
    return timeout_seconds > 0 ? now_seconds() + timeout_seconds : 0;
}

clops_status clops_wait_until(const char *device, double deadline, double timeout_seconds, cl_uint n,
                              const cl_event *events, const char *what)
{
    if (n == 0) return CLOPS_SUCCESS;
    cl_int failed = CL_SUCCESS;
    if (deadline <= 0) {
        const cl_int err = clWaitForEvents(n, events);
        if (err == CL_SUCCESS) return CLOPS_SUCCESS;
        if (first_pending(n, events, &failed) < n && failed != CL_SUCCESS) return lost(device, failed, what);
        return clops_fail_cl(err, "clWaitForEvents");
    }
    long sleep_ns = 20000;
    for (cl_uint i = 0;;) {
        i += first_pending(n - i, events + i, &failed);
        if (failed != CL_SUCCESS) return lost(device, failed, what);
        if (i == n) return CLOPS_SUCCESS;
        if (now_seconds() >= deadline)
            return clops_fail(CLOPS_ERROR_DEVICE_TIMEOUT, "device \"%s\": %s did not finish within %g s", device,
                              what, timeout_seconds);
        const struct timespec pause = {0, sleep_ns};
        nanosleep(&pause, NULL);
        if (sleep_ns < 2000000) sleep_ns *= 2;
    }
}

clops_status clops_wait_events(const clops_context *ctx, cl_uint n, const cl_event *events, const char *what)
{
    if (n == 0) return CLOPS_SUCCESS;
    const cl_int err = clFlush(ctx->queue);
    if (err != CL_SUCCESS) return clops_fail_cl(err, "clFlush");
    return clops_wait_until(ctx->info.device_name, clops_deadline(ctx->options.timeout_seconds),
                            ctx->options.timeout_seconds, n, events, what);
}
