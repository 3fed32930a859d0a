/* ops.c - what the operator objects do through the table of operators
 * (op_table.c): prepare on the device (or fall back to the host, fallback.c),
 * enqueue, run on the host, report the last status, release. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"

static clops_status check_device_limits(const clops_operator *op)
{
    const clops_op_params *p = &op->params;
    const clops_tensor *t[3] = {&p->input, &p->indices, &p->output};
    static const char *names[3] = {"input", "indices", "output"};
    for (int i = 0; i < 3; i++)
        if (op->ctx->info.max_alloc_bytes && t[i]->span_bytes > op->ctx->info.max_alloc_bytes)
            return clops_fail(CLOPS_ERROR_TOO_LARGE_FOR_DEVICE,
                              "%s spans %llu bytes, more than the device's maximum allocation of %llu", names[i],
                              (unsigned long long)t[i]->span_bytes, (unsigned long long)op->ctx->info.max_alloc_bytes);
    return CLOPS_SUCCESS;
}


static const char *op_name(clops_operator_type type)
{
    return type == CLOPS_OPERATOR_DEPTH_TO_SPACE   ? "DepthToSpace"
           : type == CLOPS_OPERATOR_SPACE_TO_DEPTH ? "SpaceToDepth"
                                                   : "MaxUnpooling";
}

/* Releases what a failed prepare left and marks the operator for the host path,
 * or, under the fallback policy never, fails with the reason. */
static clops_status fall_back(clops_operator *op, const char *why)
{
    clops_op_release(op);
    if (op->ctx->options.fallback == CLOPS_FALLBACK_NEVER)
        return clops_fail(CLOPS_ERROR_FALLBACK_REFUSED, "%s cannot run on device \"%s\" (%s) and the fallback "
                          "policy is never", op_name(op->params.type), op->ctx->info.device_name, why);
    free(op->fallback_reason);
    op->fallback_reason = strdup(why);
    if (!op->fallback_reason)
        return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "the fallback's reason (%zu bytes)", strlen(why));
    op->fallback = true;
    op->portable = false;
    op->kernel_name = "";
    op->program_origin = "";
    op->local_size_origin = "";
    return CLOPS_SUCCESS;
}

/* Releases a plan's launches and state, for another plan. */
static void release_plan(clops_operator *op)
{
    for (unsigned i = 0; i < op->num_launches; i++) clReleaseKernel(op->launches[i].kernel);
    op->num_launches = 0;
    const clops_op_entry *e = clops_op_lookup(op->params.type);
    if (e->release) e->release(op);
}

/* The specialised plan, else the portable program's (portable.c): always under
 * clops_portable_only, and where the specialised program can be neither loaded
 * nor built (not while programs are listed: a listing names the specialised
 * programs). A failure of both says why for each, whole. */
static clops_status prepare_plan(clops_operator *op, const clops_op_entry *e)
{
    if (clops_portable_only(op->ctx)) return e->portable(op);
    const clops_status st = e->prepare(op);
    if ((st != CLOPS_ERROR_COMPILER_UNAVAILABLE && st != CLOPS_ERROR_BUILD_FAILED) ||
        clops_program_list_case(CLOPS_LIST_WIDE_OFFSETS) >= 0)
        return st;
    char *specialised = strdup(clops_last_error_message());
    if (!specialised) return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "a build's message");
    release_plan(op);
    const clops_status portable = e->portable(op);
    char *why = portable != CLOPS_SUCCESS && portable != CLOPS_ERROR_OUT_OF_HOST_MEMORY
                    ? strdup(clops_last_error_message()) /* clops_fail formats into the same buffer */
                    : NULL;
    if (why) clops_fail(st, "%s; nor the portable program: %s", specialised, why);
    free(why);
    free(specialised);
    return portable == CLOPS_SUCCESS ? CLOPS_SUCCESS : portable == CLOPS_ERROR_OUT_OF_HOST_MEMORY ? portable : st;
}

/* The OpenCL plan, or the host path where the device cannot run it: tensors
 * past 2^32 elements without 64-bit integers, no compiler and no binary of
 * either the specialised or the portable program, or failed builds (errors
 * under the fallback policy never). Other failures are errors. */
static clops_status prepare_on_device(clops_operator *op)
{
    if (!clops_fits_u32(&op->params) && !op->ctx->info.has_int64) {
        char why[256];
        snprintf(why, sizeof why, "tensors past 2^32 elements need 64-bit integers, which %s lacks",
                 op->ctx->info.device_name);
        return fall_back(op, why);
    }
    const clops_op_entry *e = clops_op_lookup(op->params.type);
    char why[256];
    if (e->needs_host && e->needs_host(op, why, sizeof why)) {
        return fall_back(op, why);
    }
    const clops_status st = prepare_plan(op, e);
    if (st == CLOPS_SUCCESS && !e->tunes_local_size && strcmp(op->local_size_origin, "tuned") == 0)
        op->local_size_origin = "heuristic"; /* the plan's own size, not the tuner's (ops.h) */
    if (st == CLOPS_ERROR_COMPILER_UNAVAILABLE || st == CLOPS_ERROR_BUILD_FAILED) {
        char *msg = strdup(clops_last_error_message());
        if (!msg) return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "a build's message");
        const clops_status fb = fall_back(op, msg);
        free(msg);
        return fb;
    }
    return st;
}


clops_status clops_op_prepare(clops_operator *op)
{
    const clops_status st = check_device_limits(op);
    return st == CLOPS_SUCCESS ? prepare_on_device(op) : st;
}

/* ---- the caller's wait-list events (ops.h, clops_op_after_wait) ---- */

/* Drops the caller's wait-list events that ended - every one (`all`), or the
 * leading ones - keeping the first failed one's status in waits.failed. One
 * whose status cannot be read is dropped: it cannot be told from the kernel's. */
static void prune_waits(clops_operator *op, bool all)
{
    size_t keep = 0;
    for (size_t i = 0; i < op->waits.count; i++) {
        cl_event e = op->waits.events[i];
        cl_int s = CL_COMPLETE;
        const bool pending = (keep > 0 && !all) ||
                             (clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL) == CL_SUCCESS &&
                              s > CL_COMPLETE);
        if (pending) {
            op->waits.events[keep++] = e;
            continue;
        }
        if (s < 0 && op->waits.failed == 0) op->waits.failed = s;
        clReleaseEvent(e);
    }
    op->waits.count = keep;
}

/* Keeps (retained) the wait list of an execution of a device operator with a
 * last_status. Bounded by the events still pending: those that ended go at
 * each execution (the leading ones) and when the array is full (all). */
static clops_status note_waits(clops_operator *op, cl_uint nwait, const cl_event *wait)
{
    prune_waits(op, false);
    if (nwait == 0) return CLOPS_SUCCESS;
    if (op->waits.count + nwait > op->waits.cap) prune_waits(op, true);
    if (op->waits.count + nwait > op->waits.cap) {
        size_t cap = op->waits.cap ? op->waits.cap * 2 : 8;
        if (cap < op->waits.count + nwait) cap = op->waits.count + nwait;
        cl_event *grown = realloc(op->waits.events, cap * sizeof *grown);
        if (!grown) return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "the wait list's %zu events", cap);
        op->waits.events = grown;
        op->waits.cap = cap;
    }
    for (cl_uint i = 0; i < nwait; i++) {
        const cl_int err = clRetainEvent(wait[i]);
        if (err != CL_SUCCESS) return clops_fail_cl(err, "clRetainEvent(wait list)");
        op->waits.events[op->waits.count++] = wait[i];
    }
    return CLOPS_SUCCESS;
}

static void release_waits(clops_operator *op)
{
    for (size_t i = 0; i < op->waits.count; i++) clReleaseEvent(op->waits.events[i]);
    free(op->waits.events);
    memset(&op->waits, 0, sizeof op->waits);
}

void clops_op_release(clops_operator *op)
{
    release_waits(op);
    for (unsigned i = 0; i < op->num_launches; i++) clReleaseKernel(op->launches[i].kernel);
    op->num_launches = 0;
    const clops_op_entry *e = clops_op_lookup(op->params.type);
    if (e && e->release) e->release(op);
    clops_host_release(op);
}

clops_status clops_op_enqueue(clops_operator *op, const clops_buffers *b, cl_uint nwait, const cl_event *wait,
                              cl_event *event)
{
    if (op->fallback) return clops_host_execute_cl(op, b, nwait, wait, event);
    const clops_op_entry *e = clops_op_lookup(op->params.type);
    if (e->last_status) {
        const clops_status st = note_waits(op, nwait, wait);
        if (st != CLOPS_SUCCESS) return st;
    }
    return e->enqueue(op, b, nwait, wait, event);
}

clops_status clops_op_host_run(const clops_op_params *p, const clops_host_buffers *b)
{
    return clops_op_lookup(p->type)->host_run(p, b);
}

clops_status clops_op_after_wait(clops_operator *op, clops_status st)
{
    if (st == CLOPS_ERROR_DEVICE_LOST && (op->waits.count || op->waits.failed)) prune_waits(op, true);
    const cl_int failure = st == CLOPS_ERROR_DEVICE_LOST && op->waits.failed ? clops_wait_take_failure() : 0;
    if (failure == 0) return clops_context_after_wait(op->ctx, st, op_name(op->params.type), op->kernel_name);
    char label[256], kernel_label[256];
    clops_status_label(op->waits.failed, label, sizeof label);
    clops_status_label(failure, kernel_label, sizeof kernel_label);
    return clops_fail(CLOPS_ERROR_DEVICE_LOST,
                      "device \"%s\": an event of the caller's wait list failed with execution status %s, so the "
                      "%s execution behind it did not run (its command ended with %s); the operator and the context "
                      "go on", op->ctx->info.device_name, label, op_name(op->params.type), kernel_label);
}

clops_status clops_op_last_status(clops_operator *op)
{
    const clops_op_entry *e = clops_op_lookup(op->params.type);
    if (op->fallback) return clops_host_last_status(op);
    if (op->ctx->backend != CLOPS_BACKEND_OPENCL || !e->last_status) return CLOPS_SUCCESS;
    clops_wait_take_failure();
    const clops_status st = clops_op_after_wait(op, e->last_status(op)); /* a failed kernel loses the context */
    prune_waits(op, true);
    if (st != CLOPS_ERROR_DEVICE_TIMEOUT) op->waits.failed = 0; /* reported: forgotten */
    return st;
}
