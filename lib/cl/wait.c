/* wait.c - waiting for the device with the context's deadline (clops.h, "Deadline").
 *
 * Without a deadline, clWaitForEvents. With one, the events' execution status is
 * polled (after a flush, so the commands are sure to be submitted) with a sleep
 * that grows from 20 us to 2 ms: OpenCL has no wait with a timeout, and a
 * callback would not fire either when a remote device is gone. Either way a
 * negative execution status - a command that failed, or a device lost under it -
 * is CLOPS_ERROR_DEVICE_LOST.
 *
 * And whether a context can still reach its device (clops_context_usable): not
 * in a process forked after it was created, and not once one of its operators'
 * kernels failed (a lost device: NVIDIA's -9999, an illegal memory access, loses
 * the whole CUDA context, so every later build and launch would fail with it). */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cl/cl.h"

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The execution status of this thread's last failed wait (0: none since the
 * last clops_wait_take_failure). */
static _Thread_local cl_int wait_failure;

static clops_status lost(const char *device, cl_int status, const char *what)
{
    char label[256];
    wait_failure = status;
    return clops_fail(CLOPS_ERROR_DEVICE_LOST, "device \"%s\": %s failed with execution status %s", device, what,
                      clops_status_label(status, label, sizeof label));
}

cl_int clops_wait_take_failure(void)
{
    const cl_int s = wait_failure;
    wait_failure = 0;
    return s;
}

/* The process that first reached the OpenCL driver through clops (a platform or
 * device query); 0 until then. Set once: a forked child inherits its parent's
 * value, which is how it knows that the driver was started elsewhere. */
static _Atomic pid_t driver_pid;

void clops_driver_note_use(void)
{
    pid_t none = 0;
    atomic_compare_exchange_strong(&driver_pid, &none, getpid());
}

void clops_driver_adopt(void)
{
    atomic_store(&driver_pid, getpid());
}

clops_status clops_driver_usable(void)
{
    const pid_t first = atomic_load(&driver_pid);
    if (first == 0 || first == getpid()) return CLOPS_SUCCESS;
    return clops_fail(CLOPS_ERROR_DEVICE_LOST,
                      "no OpenCL device can be used in this process (%ld): it was forked after process %ld had "
                      "started the OpenCL driver, whose threads stayed there (a context made here would hang in "
                      "its first command); start such processes with the spawn (or forkserver) start method, or "
                      "use the host backend in them (clops_context_create_host, CLOPS_DEVICE=host, "
                      "device=\"host\" in Python)",
                      (long)getpid(), (long)first);
}

bool clops_context_forked(const clops_context *ctx)
{
    return ctx->backend == CLOPS_BACKEND_OPENCL && ctx->pid != getpid();
}

clops_status clops_context_usable(const clops_context *ctx)
{
    if (ctx->backend != CLOPS_BACKEND_OPENCL) return CLOPS_SUCCESS;
    if (clops_context_forked(ctx))
        return clops_fail(CLOPS_ERROR_DEVICE_LOST,
                          "device \"%s\": this process was forked after the context was created (by process %ld), "
                          "and the OpenCL driver's threads stayed in that process; create contexts after fork, or "
                          "use the spawn start method (the host backend works after fork)",
                          ctx->info.device_name, (long)ctx->pid);
    clops_context *c = (clops_context *)ctx; /* the lost state is the one part of a const context that changes */
    char where[sizeof c->lost_where];
    pthread_mutex_lock(&c->lost_lock);
    const bool was_lost = c->lost;
    if (was_lost) memcpy(where, c->lost_where, sizeof where);
    pthread_mutex_unlock(&c->lost_lock);
    if (!was_lost) return CLOPS_SUCCESS;
    return clops_fail(CLOPS_ERROR_DEVICE_LOST,
                      "device \"%s\" was lost on this context, at %s; every call on the context fails now: free it "
                      "and create a new context (after a lost device the driver may need a new process)",
                      ctx->info.device_name, where);
}

clops_status clops_context_after_wait(clops_context *ctx, clops_status st, const char *op, const char *kernel)
{
    const cl_int failure = clops_wait_take_failure();
    if (st != CLOPS_ERROR_DEVICE_LOST || failure == 0 || failure == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST ||
        ctx->backend != CLOPS_BACKEND_OPENCL)
        return st;
    char label[256];
    clops_status_label(failure, label, sizeof label);
    pthread_mutex_lock(&ctx->lost_lock);
    if (!ctx->lost) {
        ctx->lost = true;
        if (kernel && kernel[0])
            snprintf(ctx->lost_where, sizeof ctx->lost_where, "operator %s, kernel \"%s\" (execution status %s)", op,
                     kernel, label);
        else
            snprintf(ctx->lost_where, sizeof ctx->lost_where, "operator %s (execution status %s)", op, label);
    }
    char where[sizeof ctx->lost_where];
    memcpy(where, ctx->lost_where, sizeof where);
    pthread_mutex_unlock(&ctx->lost_lock);
    return clops_fail(CLOPS_ERROR_DEVICE_LOST,
                      "device \"%s\" was lost at %s; every later call on this context fails with "
                      "CLOPS_ERROR_DEVICE_LOST: free it and create a new context",
                      ctx->info.device_name, where);
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
