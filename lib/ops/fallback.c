/* fallback.c - an operator the device cannot run, on the caller's cl_mem
 * buffers, without ever blocking the caller (clops.h, clops_operator_execute):
 *
 *   caller's queue   [marker `before`: after the wait list]  [marker `after`: after `done`]
 *   worker thread    takes the operator's jobs in execute order: waits for a
 *                    job's `before` (no deadline, as a device command has
 *                    none), maps the buffers on a queue of its own, runs the
 *                    host kernel, unmaps, finishes that queue, records a
 *                    failure, completes the job's user event `done`.
 *
 * One worker thread and one private queue per operator, created at its first
 * execution: executions run one after another, in the order of the execute
 * calls, on any queue (they may share an output; MaxUnpooling's promise). The
 * caller's event is `after`, a command on its queue: on an in-order queue
 * everything enqueued later waits for the host work, as for a device kernel.
 * The maps go on the private queue, so that commands the caller enqueues behind
 * `after` cannot hold them up. Each job holds references to its buffers and
 * events, the private queue to the cl_context: the operator and the context may
 * be freed before the work ran; the thread ends once its list is empty and the
 * operator is freed, and frees the worker then (free never waits for it).
 *
 * `done` always completes with CL_COMPLETE - on failure too, the output then
 * untouched: a negative status on a user event that commands wait on aborts PoCL
 * 3.1 (pocl_update_event_failed). Every failure of the host work is kept on the
 * worker (the first one's status and message, and how many) until
 * clops_operator_last_status() reported it and a new execution came; that call
 * waits, within one deadline, for every job enqueued so far. When the wait times
 * out, the jobs that have not started are given up (nothing written after that
 * return), which is a failure kept as the others. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ops/ops.h"

typedef struct host_job {
    struct host_job *next;
    uint64_t seq;           /* 1, 2, ... in execute order */
    clops_buffers b;        /* those the operator uses (retained), else NULL */
    cl_event before, done;  /* retained; `after` is the caller's and the operator's */
} host_job;

typedef struct clops_host_worker {
    pthread_mutex_t lock;
    pthread_cond_t cond;    /* a job queued or finished, the owner gone (CLOCK_MONOTONIC) */
    host_job *head, *tail;  /* the jobs not finished; the head is the one the thread is on */
    bool running;           /* the thread exists */
    bool owner_gone;        /* the operator was freed: the thread ends once the list is empty */
    bool idle;              /* the thread waits for a job, holding nothing else */
    bool owner_joins;       /* the freeing owner joins the thread and frees the worker */
    pthread_t thread;
    uint64_t queued, finished, started; /* the last job's seq of each kind */
    uint64_t cancel_upto;   /* jobs up to this seq, not started, are given up */
    uint64_t failures;      /* failed host work (and executions a last_status gave up) */
    clops_status failed;    /* the first of those */
    char message[512];
    uint64_t bad;           /* MaxUnpooling: bad indices skipped */
    bool reported;          /* last_status reported the above: the next execute forgets it */
    const clops_op_entry *entry;
    clops_op_params params;
    cl_command_queue queue; /* the private one */
    char device[128];
    /* The operator's side only (execute and last_status are one thread at a time). */
    cl_event last_after;    /* the last execution's `after` */
} clops_host_worker;

static void job_free(host_job *j)
{
    const cl_mem m[3] = {j->b.input, j->b.indices, j->b.output};
    for (int i = 0; i < 3; i++)
        if (m[i]) clReleaseMemObject(m[i]);
    if (j->before) clReleaseEvent(j->before);
    if (j->done) clReleaseEvent(j->done);
    free(j);
}

static void worker_free(clops_host_worker *w)
{
    if (w->queue) clReleaseCommandQueue(w->queue);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

/* Waits for the job's `before` without a deadline, polling (as wait.c does) so
 * that a last_status that timed out can give the job up meanwhile. */
static clops_status wait_before(clops_host_worker *w, const host_job *j, bool *cancelled)
{
    long sleep_ns = 20000;
    for (;;) {
        pthread_mutex_lock(&w->lock);
        *cancelled = j->seq <= w->cancel_upto;
        pthread_mutex_unlock(&w->lock);
        if (*cancelled) return CLOPS_SUCCESS;
        cl_int s = CL_COMPLETE;
        const cl_int err = clGetEventInfo(j->before, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL);
        if (err != CL_SUCCESS) return clops_fail_cl(err, "clGetEventInfo(before the host fallback)");
        if (s < 0)
            return clops_fail(CLOPS_ERROR_DEVICE_LOST, "device \"%s\": the commands before the host fallback's maps "
                              "failed with execution status %d; the output was not written", w->device, (int)s);
        if (s == CL_COMPLETE) return CLOPS_SUCCESS;
        const struct timespec pause = {0, sleep_ns};
        nanosleep(&pause, NULL);
        if (sleep_ns < 2000000) sleep_ns *= 2;
    }
}

/* One job: its status; *bad the bad indices it skipped. */
static clops_status run_job(clops_host_worker *w, host_job *j, uint64_t *bad, bool *cancelled)
{
    clops_status st = wait_before(w, j, cancelled);
    pthread_mutex_lock(&w->lock);
    *cancelled = j->seq <= w->cancel_upto; /* decided under the lock: last_status sees `started` */
    if (st == CLOPS_SUCCESS && !*cancelled) w->started = j->seq;
    pthread_mutex_unlock(&w->lock);
    if (st != CLOPS_SUCCESS || *cancelled) return st;
    clops_host_buffers mapped = {0};
    st = clops_map_buffers(w->queue, &w->params, &j->b, 1, &j->before, &mapped);
    if (st == CLOPS_SUCCESS)
        st = w->entry->run_mapped ? w->entry->run_mapped(&w->params, &mapped, bad)
                                  : w->entry->host_run(&w->params, &mapped);
    clops_unmap_buffers(w->queue, &j->b, &mapped);
    const cl_int err = clFinish(w->queue); /* the output written back before `done` */
    if (st == CLOPS_SUCCESS && err != CL_SUCCESS) st = clops_fail_cl(err, "clFinish(host fallback)");
    return st;
}

static void *worker(void *arg)
{
    clops_host_worker *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        w->idle = true;
        while (!w->head && !w->owner_gone) pthread_cond_wait(&w->cond, &w->lock);
        w->idle = false;
        host_job *j = w->head;
        if (!j) break;
        pthread_mutex_unlock(&w->lock);
        uint64_t bad = 0;
        bool cancelled = false;
        const clops_status st = run_job(w, j, &bad, &cancelled);
        pthread_mutex_lock(&w->lock);
        if (st != CLOPS_SUCCESS && !cancelled && w->failures++ == 0) { /* a given-up job: last_status said so */
            w->failed = st;
            snprintf(w->message, sizeof w->message, "%s", clops_last_error_message());
        }
        if (st == CLOPS_SUCCESS && !cancelled) w->bad += bad;
        w->head = j->next;
        if (!w->head) w->tail = NULL;
        w->finished = j->seq;
        pthread_cond_broadcast(&w->cond);
        pthread_mutex_unlock(&w->lock);
        /* No lock held: a driver may run callbacks inside. */
        clSetUserEventStatus(j->done, CL_COMPLETE); /* fails only for an invalid event */
        job_free(j);
        pthread_mutex_lock(&w->lock);
    }
    w->running = false;
    const bool owner_frees = w->owner_joins;
    pthread_mutex_unlock(&w->lock);
    if (!owner_frees) worker_free(w); /* the owner is gone and the list empty: nobody else refers to it */
    return NULL;
}

/* The operator's worker, created at its first execution (the thread too). */
static clops_status worker_get(clops_operator *op, clops_host_worker **out)
{
    clops_host_worker *w = op->host_worker;
    *out = w;
    if (w) return CLOPS_SUCCESS;
    w = calloc(1, sizeof *w);
    if (!w) return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "host fallback worker of %zu bytes", sizeof *w);
    pthread_condattr_t attr;
    bool cond = false, lock = pthread_mutex_init(&w->lock, NULL) == 0;
    if (lock && pthread_condattr_init(&attr) == 0) {
        cond = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0 && pthread_cond_init(&w->cond, &attr) == 0;
        pthread_condattr_destroy(&attr);
    }
    if (!cond) {
        if (lock) pthread_mutex_destroy(&w->lock);
        free(w);
        return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "the host fallback's lock");
    }
    w->entry = clops_op_lookup(op->params.type);
    w->params = op->params;
    snprintf(w->device, sizeof w->device, "%s", op->ctx->info.device_name);
    cl_int err = CL_SUCCESS;
    w->queue = clCreateCommandQueue(op->ctx->cl_ctx, op->ctx->device, 0, &err);
    clops_status st = w->queue ? CLOPS_SUCCESS : clops_fail_cl(err, "clCreateCommandQueue(host fallback)");
    if (st == CLOPS_SUCCESS) {
        w->running = true; /* before the thread reads it */
        const int e = pthread_create(&w->thread, NULL, worker, w);
        if (e != 0) {
            w->running = false;
            st = clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "the host fallback's worker thread (error %d)", e);
        }
    }
    if (st != CLOPS_SUCCESS) {
        worker_free(w);
        return st;
    }
    op->host_worker = *out = w;
    return CLOPS_SUCCESS;
}

/* A job's own references to the buffers and its user event. */
static clops_status job_new(clops_operator *op, const clops_buffers *b, host_job **out)
{
    const clops_op_params *p = &op->params;
    host_job *j = calloc(1, sizeof *j);
    *out = NULL;
    if (!j) return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "host fallback job of %zu bytes", sizeof *j);
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
    /* On failure the earlier executions' jobs and failures stay as they are. */
    cl_command_queue q = op->ctx->queue;
    clops_host_worker *w = NULL;
    host_job *j = NULL;
    clops_status st = worker_get(op, &w);
    if (st == CLOPS_SUCCESS) st = job_new(op, b, &j);
    if (st != CLOPS_SUCCESS) return st;
    /* `before`: after the wait list (and, on an in-order queue, after every earlier command). */
    cl_int err = clEnqueueMarkerWithWaitList(q, nwait, wait, &j->before);
    if (err != CL_SUCCESS) st = clops_fail_cl(err, "clEnqueueMarkerWithWaitList(before the host fallback)");
    /* Submitted for the worker's wait and its maps (another queue). Before `after`
     * is enqueued: Oclgrind's clFlush runs the queue to its end. */
    if (st == CLOPS_SUCCESS && (err = clFlush(q)) != CL_SUCCESS) st = clops_fail_cl(err, "clFlush");
    cl_event after = NULL;
    if (st == CLOPS_SUCCESS) {
        err = clEnqueueMarkerWithWaitList(q, 1, &j->done, &after);
        if (err != CL_SUCCESS) st = clops_fail_cl(err, "clEnqueueMarkerWithWaitList(after the host fallback)");
    }
    if (st == CLOPS_SUCCESS && event && (err = clRetainEvent(after)) != CL_SUCCESS)
        st = clops_fail_cl(err, "clRetainEvent(host fallback)");
    if (st != CLOPS_SUCCESS) {
        if (after) { /* nothing will run: let `after` complete */
            clSetUserEventStatus(j->done, CL_COMPLETE);
            clReleaseEvent(after);
        }
        job_free(j);
        return st;
    }
    /* The thread takes it from here: this thread makes no more OpenCL call on the job. */
    pthread_mutex_lock(&w->lock);
    if (w->reported) w->failures = 0, w->bad = 0, w->reported = false;
    j->seq = ++w->queued;
    if (w->tail) w->tail->next = j;
    else w->head = j;
    w->tail = j;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    if (w->last_after) clReleaseEvent(w->last_after);
    w->last_after = after;
    if (event) *event = after;
    return CLOPS_SUCCESS;
}

/* `until`: `deadline` (clops_deadline, CLOCK_MONOTONIC seconds) as a timespec. */
static struct timespec abs_time(double deadline)
{
    struct timespec t;
    t.tv_sec = (time_t)deadline;
    t.tv_nsec = (long)((deadline - (double)t.tv_sec) * 1e9);
    if (t.tv_nsec >= 1000000000L) t.tv_sec++, t.tv_nsec -= 1000000000L;
    if (t.tv_nsec < 0) t.tv_nsec = 0;
    return t;
}

clops_status clops_host_last_status(clops_operator *op)
{
    clops_host_worker *w = op->host_worker;
    if (!w) return CLOPS_SUCCESS; /* no execution yet */
    const double timeout = op->ctx->options.timeout_seconds;
    const double deadline = clops_deadline(timeout); /* one deadline for both waits below */
    const struct timespec until = abs_time(deadline);
    cl_int err = clFlush(op->ctx->queue); /* the `before` markers submitted */
    if (err != CL_SUCCESS) return clops_fail_cl(err, "clFlush");
    pthread_mutex_lock(&w->lock);
    const uint64_t target = w->queued;
    int e = 0;
    while (w->finished < target && e == 0)
        e = deadline > 0 ? pthread_cond_timedwait(&w->cond, &w->lock, &until) : pthread_cond_wait(&w->cond, &w->lock);
    const bool finished = w->finished >= target;
    const bool running = !finished && w->started > w->finished; /* the job the thread is on has started */
    uint64_t given_up = 0, failures = w->failures, bad = w->bad;
    clops_status failed = w->failed;
    char message[sizeof w->message] = "";
    if (!finished) { /* timed out: the jobs not started will not start any more */
        w->cancel_upto = target;
        given_up = target - w->finished - (running ? 1 : 0);
        clops_fail(CLOPS_ERROR_DEVICE_TIMEOUT, "device \"%s\": the host fallback did not finish within %g s; "
                   "%llu execution(s) not started were given up and will not write their output",
                   w->device, timeout, (unsigned long long)given_up);
        if (given_up && w->failures++ == 0) { /* kept: a later call reports it too */
            w->failed = CLOPS_ERROR_DEVICE_TIMEOUT;
            snprintf(w->message, sizeof w->message, "%s", clops_last_error_message());
        }
    } else {
        snprintf(message, sizeof message, "%s", w->message);
        w->reported = true;
    }
    pthread_mutex_unlock(&w->lock);
    if (!finished) return CLOPS_ERROR_DEVICE_TIMEOUT; /* the message set above */
    if (failures == 1) return clops_fail(failed, "%s", message);
    if (failures > 1)
        return clops_fail(failed, "the host work of %llu executions failed (their outputs were not written); "
                          "the first: %s", (unsigned long long)failures, message);
    /* As on the device: once this returns, the caller's event has completed. */
    const clops_status waited = clops_wait_until(w->device, deadline, timeout, 1, &w->last_after,
                                                 "the host fallback's last command");
    if (waited != CLOPS_SUCCESS) return waited;
    const clops_op_entry *entry = clops_op_lookup(op->params.type);
    if (!entry->record_host || !entry->last_status) return CLOPS_SUCCESS;
    entry->record_host(op, NULL, bad); /* the operator's own report of bad indices */
    return entry->last_status(op);
}

void clops_host_release(clops_operator *op)
{
    clops_host_worker *w = op->host_worker;
    op->host_worker = NULL;
    if (!w) return;
    if (w->last_after) clReleaseEvent(w->last_after);
    w->last_after = NULL;
    pthread_mutex_lock(&w->lock);
    w->owner_gone = true;
    /* An idle thread (no job left, waiting on the condition only) ends at once: join it, so
     * that no clops thread outlives the operator when nothing is pending (a process that
     * exits next has no thread half-way out). A thread with jobs left may wait for the
     * caller's events for ever: it is detached and frees the worker itself. */
    w->owner_joins = w->running && w->idle && !w->head;
    const bool running = w->running, joins = w->owner_joins;
    const pthread_t thread = w->thread; /* w may be freed by its thread once unlocked */
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    if (joins) {
        pthread_join(thread, NULL);
        worker_free(w);
    } else if (running) {
        pthread_detach(thread);
    } else {
        worker_free(w); /* never so far: a worker exists only with its thread */
    }
}
