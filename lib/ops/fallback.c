/* fallback.c - an operator the device cannot run, on the caller's cl_mem
 * buffers, without ever blocking the caller (clops.h, clops_operator_execute):
 *
 *   caller's queue   [marker `before`: after the wait list]  [marker `after`: after `done`]
 *   worker thread    waits for `before` (with the deadline), maps the buffers on
 *                    a queue of its own, runs the host kernel, unmaps, finishes
 *                    that queue, records the status, completes the user event `done`.
 *
 * The caller's event is `after`, a command on its queue: on an in-order queue
 * everything enqueued later waits for the host work, as for a device kernel.
 * The maps go on the worker's own queue, so that commands the caller enqueues
 * behind `after` cannot hold them up. A job holds references to everything the
 * worker uses (its queue holds the cl_context, the buffers, the events), so the
 * operator and the context may be freed before it ran.
 *
 * `done` always completes with CL_COMPLETE - on failure too, the output then
 * untouched: a negative status on a user event that commands wait on aborts PoCL
 * 3.1 (pocl_update_event_failed). The host work's status is
 * clops_operator_last_status(), which waits for the job; when that wait ends at
 * the deadline before the worker started, the worker gives up (nothing is
 * written after that return). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ops/ops.h"

typedef struct clops_host_job {
    pthread_mutex_t lock;
    pthread_cond_t cond;    /* `finished` set, or the worker's reference dropped */
    int refs;               /* the worker's and the operator's (its last execution) */
    pthread_t worker;       /* the worker thread, once `finished` */
    bool started;           /* the worker is past its wait: it maps and writes */
    bool cancelled;         /* last_status timed out first: the worker must not start */
    bool finished;          /* status, bad and message are final */
    clops_status status;
    uint64_t bad;           /* MaxUnpooling: bad indices skipped */
    char message[512];      /* the failure's message (the worker's thread) */
    /* The worker's inputs, each retained. */
    const clops_op_entry *entry;
    clops_op_params params;
    clops_buffers b;        /* those the operator uses, else NULL */
    cl_command_queue queue; /* the worker's own */
    cl_event before, done;
    cl_event after;         /* the caller's event: the operator's side waits on it and releases it */
    double deadline, timeout_seconds;
    char device[128];
} clops_host_job;

/* Releases what the worker uses (all but `done`). */
static void release_inputs(clops_host_job *j)
{
    if (j->queue) clReleaseCommandQueue(j->queue);
    if (j->before) clReleaseEvent(j->before);
    const cl_mem m[3] = {j->b.input, j->b.indices, j->b.output};
    for (int i = 0; i < 3; i++)
        if (m[i]) clReleaseMemObject(m[i]);
    j->queue = NULL, j->before = NULL;
    j->b = (clops_buffers){NULL, NULL, NULL};
}

static void job_free(clops_host_job *j)
{
    release_inputs(j);
    if (j->done) clReleaseEvent(j->done);
    if (j->after) clReleaseEvent(j->after);
    pthread_cond_destroy(&j->cond);
    pthread_mutex_destroy(&j->lock);
    free(j);
}

/* Drops one reference. The operator's side, once the job finished, first waits
 * for the worker to drop its own (the worker then only completes `done`), so
 * that everything is released when clops_operator_free returns - unless it runs
 * on the worker thread itself (a callback the completion ran there). */
static void job_unref(clops_host_job *j, bool worker)
{
    pthread_mutex_lock(&j->lock);
    while (!worker && j->finished && j->refs > 1 && !pthread_equal(j->worker, pthread_self()))
        pthread_cond_wait(&j->cond, &j->lock);
    const bool last = --j->refs == 0;
    if (worker) pthread_cond_broadcast(&j->cond);
    pthread_mutex_unlock(&j->lock);
    if (last) job_free(j);
}

static void *worker(void *arg)
{
    clops_host_job *j = arg;
    clops_host_buffers mapped = {0};
    uint64_t bad = 0;
    clops_status st = clops_wait_until(j->device, j->deadline, j->timeout_seconds, 1, &j->before,
                                       "the commands before the host fallback's maps");
    pthread_mutex_lock(&j->lock);
    if (st == CLOPS_SUCCESS && j->cancelled)
        st = clops_fail(CLOPS_ERROR_DEVICE_TIMEOUT, "device \"%s\": the host fallback was given up when "
                        "clops_operator_last_status timed out waiting for it; the output was not written", j->device);
    j->started = st == CLOPS_SUCCESS;
    pthread_mutex_unlock(&j->lock);
    if (st == CLOPS_SUCCESS) {
        st = clops_map_buffers(j->queue, &j->params, &j->b, 1, &j->before, &mapped);
        if (st == CLOPS_SUCCESS)
            st = j->entry->run_mapped ? j->entry->run_mapped(&j->params, &mapped, &bad)
                                      : j->entry->host_run(&j->params, &mapped);
        clops_unmap_buffers(j->queue, &j->b, &mapped);
        const cl_int err = clFinish(j->queue); /* the output written back before `done` */
        if (st == CLOPS_SUCCESS && err != CL_SUCCESS) st = clops_fail_cl(err, "clFinish(host fallback)");
    }
    release_inputs(j);
    pthread_mutex_lock(&j->lock);
    j->status = st;
    j->bad = st == CLOPS_SUCCESS ? bad : 0;
    if (st != CLOPS_SUCCESS) snprintf(j->message, sizeof j->message, "%s", clops_last_error_message());
    j->worker = pthread_self();
    j->finished = true;
    pthread_cond_broadcast(&j->cond);
    pthread_mutex_unlock(&j->lock);
    clSetUserEventStatus(j->done, CL_COMPLETE); /* fails only for an invalid event */
    job_unref(j, true);
    return NULL;
}

/* A job for one execution, its own references taken; NULL and a status on failure. */
static clops_status job_new(clops_operator *op, const clops_buffers *b, clops_host_job **out)
{
    const clops_op_params *p = &op->params;
    clops_host_job *j = calloc(1, sizeof *j);
    *out = NULL;
    if (!j) return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "host fallback job of %zu bytes", sizeof *j);
    pthread_condattr_t attr;
    bool cond = false, lock = pthread_mutex_init(&j->lock, NULL) == 0;
    if (lock && pthread_condattr_init(&attr) == 0) {
        cond = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0 && pthread_cond_init(&j->cond, &attr) == 0;
        pthread_condattr_destroy(&attr);
    }
    if (!cond) {
        if (lock) pthread_mutex_destroy(&j->lock);
        free(j);
        return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "the host fallback's lock");
    }
    j->refs = 1;
    j->entry = clops_op_lookup(p->type);
    j->params = *p;
    j->timeout_seconds = op->ctx->options.timeout_seconds;
    j->deadline = clops_deadline(j->timeout_seconds);
    snprintf(j->device, sizeof j->device, "%s", op->ctx->info.device_name);
    const cl_mem m[3] = {b->input, b->indices, b->output};
    const uint64_t spans[3] = {p->input.span_bytes, p->indices.span_bytes, p->output.span_bytes};
    cl_mem *kept[3] = {&j->b.input, &j->b.indices, &j->b.output};
    clops_status st = CLOPS_SUCCESS;
    for (int i = 0; st == CLOPS_SUCCESS && i < 3; i++) {
        if (!spans[i]) continue; /* not used (no indices): not mapped */
        const cl_int err = clRetainMemObject(m[i]);
        if (err == CL_SUCCESS) *kept[i] = m[i];
        else st = clops_fail_cl(err, "clRetainMemObject(host fallback)");
    }
    cl_int err = CL_SUCCESS;
    if (st == CLOPS_SUCCESS) {
        j->queue = clCreateCommandQueue(op->ctx->cl_ctx, op->ctx->device, 0, &err);
        if (!j->queue) st = clops_fail_cl(err, "clCreateCommandQueue(host fallback)");
    }
    if (st == CLOPS_SUCCESS) {
        j->done = clCreateUserEvent(op->ctx->cl_ctx, &err);
        if (!j->done) st = clops_fail_cl(err, "clCreateUserEvent(host fallback)");
    }
    if (st != CLOPS_SUCCESS) {
        job_free(j);
        return st;
    }
    *out = j;
    return CLOPS_SUCCESS;
}

clops_status clops_host_execute_cl(clops_operator *op, const clops_buffers *b, cl_uint nwait, const cl_event *wait,
                                   cl_event *event)
{
    cl_command_queue q = op->ctx->queue;
    clops_host_release(op); /* a new last execution (and no clops call races the worker below) */
    clops_host_job *j = NULL;
    clops_status st = job_new(op, b, &j);
    if (st != CLOPS_SUCCESS) return st;
    /* `before`: after the wait list (and, on an in-order queue, after every earlier command). */
    cl_int err = clEnqueueMarkerWithWaitList(q, nwait, wait, &j->before);
    if (err != CL_SUCCESS) st = clops_fail_cl(err, "clEnqueueMarkerWithWaitList(before the host fallback)");
    /* Submitted for the worker's wait and its maps (another queue). Before `after`
     * is enqueued: Oclgrind's clFlush runs the queue to its end. */
    if (st == CLOPS_SUCCESS && (err = clFlush(q)) != CL_SUCCESS) st = clops_fail_cl(err, "clFlush");
    bool enqueued = false;
    if (st == CLOPS_SUCCESS) {
        err = clEnqueueMarkerWithWaitList(q, 1, &j->done, &j->after);
        if (err != CL_SUCCESS) st = clops_fail_cl(err, "clEnqueueMarkerWithWaitList(after the host fallback)");
        enqueued = err == CL_SUCCESS;
    }
    bool retained = false; /* the caller's reference to `after` */
    if (st == CLOPS_SUCCESS && event) {
        err = clRetainEvent(j->after);
        if (err != CL_SUCCESS) st = clops_fail_cl(err, "clRetainEvent(host fallback)");
        retained = err == CL_SUCCESS;
    }
    /* The worker starts last: from here on this thread makes no OpenCL call. */
    pthread_attr_t attr;
    pthread_t thread;
    if (st == CLOPS_SUCCESS) {
        int e = pthread_attr_init(&attr);
        if (e == 0) {
            e = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
            j->refs = 2; /* the worker's and the operator's */
            if (e == 0) e = pthread_create(&thread, &attr, worker, j);
            if (e != 0) j->refs = 1;
            pthread_attr_destroy(&attr);
        }
        if (e != 0) st = clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "the host fallback's worker thread (error %d)", e);
    }
    if (st != CLOPS_SUCCESS) {
        if (enqueued) clSetUserEventStatus(j->done, CL_COMPLETE); /* nothing will run: let `after` complete */
        if (retained) clReleaseEvent(j->after);
        job_free(j);
        return st;
    }
    op->host_last = j;
    if (event) *event = j->after;
    return CLOPS_SUCCESS;
}

clops_status clops_host_last_status(clops_operator *op)
{
    clops_host_job *j = op->host_last;
    if (!j) return CLOPS_SUCCESS; /* no execution yet */
    const double timeout = op->ctx->options.timeout_seconds;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    if (timeout > 0) { /* at most 10^6 s (options.c) */
        until.tv_sec += (time_t)timeout;
        until.tv_nsec += (long)((timeout - (double)(time_t)timeout) * 1e9);
        if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&j->lock);
    int e = 0;
    while (!j->finished && e == 0)
        e = timeout > 0 ? pthread_cond_timedwait(&j->cond, &j->lock, &until) : pthread_cond_wait(&j->cond, &j->lock);
    const bool finished = j->finished, started = j->started;
    if (!finished && !started) j->cancelled = true; /* timed out: the worker will not start any more */
    const clops_status st = j->status;
    const uint64_t bad = j->bad;
    char message[sizeof j->message];
    snprintf(message, sizeof message, "%s", j->message);
    pthread_mutex_unlock(&j->lock);
    if (!finished)
        return clops_fail(CLOPS_ERROR_DEVICE_TIMEOUT, "device \"%s\": the host fallback did not %s within %g s%s",
                          op->ctx->info.device_name, started ? "finish" : "start", timeout,
                          started ? "" : "; it will not write the output");
    if (st != CLOPS_SUCCESS) return clops_fail(st, "%s", message);
    /* As on the device: once this returns, the caller's event has completed. */
    const clops_status waited = clops_wait_events(op->ctx, 1, &j->after, "the host fallback's last command");
    if (waited != CLOPS_SUCCESS) return waited;
    const clops_op_entry *entry = clops_op_lookup(op->params.type);
    if (!entry->record_host || !entry->last_status) return CLOPS_SUCCESS;
    entry->record_host(op, NULL, bad); /* the operator's own report of bad indices */
    return entry->last_status(op);
}

void clops_host_release(clops_operator *op)
{
    if (op->host_last) job_unref(op->host_last, false);
    op->host_last = NULL;
}
