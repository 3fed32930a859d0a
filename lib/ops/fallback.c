/* fallback.c - an operator the device cannot run, on the caller's cl_mem
 * buffers, without ever blocking the caller (clops.h, clops_operator_execute):
 *
 *   caller's queue   [`before`: a 1-byte read of one of the job's buffers]
 *                    [`after`: the same read, after the job's user event `done`]
 *   the pool         learns that `before` and every event of the caller's wait
 *                    list ended (callbacks on them, or the watcher below), or
 *                    that one failed, takes the operator's head job: maps the buffers on
 *                    the context's shared fallback queue, runs the host kernel,
 *                    unmaps, finishes that queue, records a failure, completes
 *                    `done`, then hands the operator back if its next job is
 *                    ready. A pool thread makes no call on the caller's queue:
 *                    rusticl's clFinish holds the queue's lock while it waits,
 *                    so a flush or release there from another thread waits for
 *                    it, and it waits for the pool.
 *   the flusher      after each `done`, flushes the caller's queue (a driver
 *                    may hold `after` behind a user event until a flush after
 *                    it was set): one thread per process, which may block
 *                    there behind a caller's clFinish because nothing - the
 *                    pool least of all - waits for it (fallback_flush.c).
 *
 * `before` and `after` are reads of one byte of clops's own probe (a buffer of
 * the shared queue's, never written) into a sink nobody reads, not markers:
 * PoCL handles a marker on an out-of-order queue in time proportional to the
 * commands pending (issue 38, Q3: 2,000 chained markers did not finish in 60 s,
 * 2,000 such reads take 0.05 s). Not of the caller's buffers: on an
 * out-of-order queue `before` runs at once, while an earlier execution may
 * still be writing them. On an in-order queue `before` waits for
 * every earlier command and everything enqueued later waits for `after`, as for
 * a device kernel; on an out-of-order queue only the events say what waits.
 *
 * No command of clops's waits for the caller's wait list: `before` waits for
 * nothing but, on an in-order queue, the command before it. PoCL 3.1 fails a
 * command as soon as one event it waits for fails, and leaves it listed on the
 * others; when one of those ends after the failed command's last release, PoCL
 * locks a freed event and aborts ("pocl_lock_events_inorder(): Invalid
 * argument", stop 42's CI). So each of clops's commands waits for at most one
 * event that can fail: `before` for the command before it, `after` for `done`
 * (which never fails) and the command before it. The job holds `after` until
 * it has set `done`, since `after` may fail (behind a failed `before`) while
 * listed on `done`.
 *
 * Nothing relies on a callback: a driver calls none for a command ended by a
 * failed wait list (PoCL, rusticl: issue 38, Q1), and one may call none at all.
 * The callbacks on `before` and on the wait list's events are the fast path;
 * their argument is a ticket (a slot of a table and the slot's generation),
 * never a pointer, so a callback that comes late or never costs nothing. One
 * pool thread at a time, when it has no job to run, watches every execution
 * still waiting (the pending list): it reads the execution status of the
 * events each still waits for after an interval growing from WATCH_MIN_NS to
 * WATCH_MAX_NS, so its cost is one status query per such event per interval,
 * whatever the number of operators. A failed event is taken at once; a complete
 * one only when a second look finds it still without its callback (the
 * callback usually comes first, so the watcher rarely races it). PoCL 3.1 calls
 * a callback set on an event that has already ended at once with CL_COMPLETE,
 * even when the event failed, so execute reads the events' status once after
 * setting the callbacks, before the job can run. An operator whose job is not
 * ready costs no thread.
 *
 * One process-wide pool of at most CLOPS_FB_POOL_THREADS threads, started on demand,
 * serves every fallback operator; each operator keeps its jobs in a list and is
 * served by one pool thread at a time, so its executions run one after another
 * in the order of the execute calls, on any queue (they may share an output;
 * MaxUnpooling's promise). Operators whose jobs are ready take turns (a FIFO of
 * operators). The maps go on one queue per cl_context and device, shared by
 * every fallback operator there (issue 38, Q4: a rusticl queue is an OS thread,
 * so a queue per operator was a thread per operator), made at the first
 * execution and released with the last operator that used it. The maps wait
 * for nothing: the pool maps only after it saw `before` complete, so no map
 * waits for another queue's commands. Each job holds references to its buffers
 * and events, the shared queue to the cl_context: the
 * operator and the context may be freed before the work ran; the operator's
 * list is then freed by the pool thread that finishes its last job.
 *
 * `done` always completes with CL_COMPLETE - on failure too, the output then
 * untouched: a negative status on a user event that commands wait on aborts PoCL
 * 3.1 (pocl_update_event_failed). A failed wait list fails that execution only
 * (CLOPS_ERROR_DEVICE_LOST with the failed event's status); the operator's later
 * executions run. Every failure of the host work is kept on the operator (the
 * first one's status and message, and how many) until
 * clops_operator_last_status() reported it and a new execution came; that call
 * waits, within one deadline, for every job enqueued so far. When the wait times
 * out, the jobs that have not started are given up (nothing written after that
 * return), which is a failure kept as the others.
 *
 * A thread that cannot start (EAGAIN: RLIMIT_NPROC, issue 32, P4) fails the
 * execute only when the pool has no thread at all, with CL_OUT_OF_RESOURCES and
 * a message naming the limit; a pool that has one goes on with what it has.
 *
 * fork: a pthread_atfork handler holds the pool's lock across fork and, in the
 * child, empties the pool (its threads are gone there) and starts a new
 * generation. An operator whose list belongs to an older generation refuses
 * execute and last_status with CLOPS_ERROR_DEVICE_LOST and is leaked by free:
 * in the child nothing of it is touched (its condition variable may have had
 * waiters that no longer exist, and the driver's threads are gone).
 *
 * The units (fallback.h): this file is the operator's side (execute,
 * last_status, release); fallback_pool.c the pool, its watcher and the shared
 * queues; fallback_flush.c the flusher and how the library's threads start. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ops/fallback.h"

/* The 1-byte reads `before` and `after` land here; nothing reads it. */
static unsigned char g_sink[64];

static pthread_once_t g_once = PTHREAD_ONCE_INIT; /* the pool's fork handlers */

/* The operator's list, created at its first execution. */
static clops_status worker_get(clops_operator *op, clops_host_worker **out)
{
    clops_host_worker *w = op->host_worker;
    *out = w;
    if (w) return CLOPS_SUCCESS;
    w = calloc(1, sizeof *w);
    if (!w) return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "host fallback worker of %zu bytes", sizeof *w);
    pthread_condattr_t attr;
    bool cond = false;
    if (pthread_condattr_init(&attr) == 0) {
        cond = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0 && pthread_cond_init(&w->cond, &attr) == 0;
        pthread_condattr_destroy(&attr);
    }
    if (!cond) {
        free(w);
        return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "the host fallback's condition variable");
    }
    w->entry = clops_op_lookup(op->params.type);
    w->params = op->params;
    snprintf(w->device, sizeof w->device, "%s", op->ctx->info.device_name);
    const clops_status st = clops_fb_queue_get(op->ctx->cl_ctx, op->ctx->device, &w->hq);
    if (st != CLOPS_SUCCESS) {
        clops_fb_worker_free(w);
        return st;
    }
    pthread_mutex_lock(&clops_fb_lock);
    w->generation = clops_fb_generation();
    pthread_mutex_unlock(&clops_fb_lock);
    op->host_worker = *out = w;
    return CLOPS_SUCCESS;
}

/* A job's own references to the buffers and the caller's wait list, and its user event. */
static clops_status job_new(clops_operator *op, const clops_buffers *b, cl_uint nwait, const cl_event *wait,
                            host_job **out)
{
    const clops_op_params *p = &op->params;
    host_job *j = calloc(1, sizeof *j + (size_t)nwait + 1); /* seen[]: `before` and the wait list */
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
    if (st == CLOPS_SUCCESS && nwait) {
        j->wait = malloc(nwait * sizeof *j->wait);
        if (!j->wait) st = clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "the host fallback's wait list of %u events",
                                      (unsigned)nwait);
        while (st == CLOPS_SUCCESS && j->nwait < nwait) {
            if ((err = clRetainEvent(wait[j->nwait])) == CL_SUCCESS) j->wait[j->nwait] = wait[j->nwait], j->nwait++;
            else st = clops_fail_cl(err, "clRetainEvent(host fallback)");
        }
    }
    if (st == CLOPS_SUCCESS && clops_fb_flush_wanted(op->ctx->info.platform_name))
        st = clops_fb_flush_new(op->ctx->queue, &j->flush); /* a reference of its own */
    if (st == CLOPS_SUCCESS) {
        j->done = clCreateUserEvent(op->ctx->cl_ctx, &err);
        if (!j->done) st = clops_fail_cl(err, "clCreateUserEvent(host fallback)");
    }
    if (st != CLOPS_SUCCESS) {
        clops_fb_job_free(j);
        return st;
    }
    j->left = nwait + 1; /* none seen ending yet; wait_status CL_COMPLETE (0) */
    *out = j;
    return CLOPS_SUCCESS;
}

/* `before` or `after`: a read of one byte of the context's probe into the sink, after `wait`. */
static cl_int enqueue_probe(cl_command_queue q, const host_queue *hq, cl_uint nwait, const cl_event *wait, size_t at,
                            cl_event *event)
{
    return clEnqueueReadBuffer(q, hq->probe, CL_FALSE, 0, 1, g_sink + at, nwait, nwait ? wait : NULL, event);
}

clops_status clops_host_execute_cl(clops_operator *op, const clops_buffers *b, cl_uint nwait, const cl_event *wait,
                                   cl_event *event)
{
    /* On failure the earlier executions' jobs and failures stay as they are. */
    cl_command_queue q = op->ctx->queue;
    clops_host_worker *w = NULL;
    host_job *j = NULL;
    pthread_once(&g_once, clops_fb_pool_init);
    clops_status st = worker_get(op, &w);
    if (st == CLOPS_SUCCESS) {
        pthread_mutex_lock(&clops_fb_lock);
        st = clops_fb_check_generation(w);
        if (st == CLOPS_SUCCESS) st = clops_fb_pool_grow(); /* before anything is enqueued: a failure leaves nothing */
        pthread_mutex_unlock(&clops_fb_lock);
    }
    if (st == CLOPS_SUCCESS) st = clops_fb_flusher_start();
    if (st == CLOPS_SUCCESS) st = job_new(op, b, nwait, wait, &j);
    if (st != CLOPS_SUCCESS) return st;
    j->w = w;
    pthread_mutex_lock(&clops_fb_lock);
    const bool ticket = clops_fb_slot_take(j);
    pthread_mutex_unlock(&clops_fb_lock);
    if (!ticket) {
        clops_fb_job_free(j);
        return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "the host fallback's table of pending executions");
    }
    /* `before`: on an in-order queue, after every earlier command. The wait list is
     * the pool's to watch, not `before`'s (the top comment says why). */
    cl_int err = enqueue_probe(q, w->hq, 0, NULL, 0, &j->before);
    if (err != CL_SUCCESS) st = clops_fail_cl(err, "clEnqueueReadBuffer(before the host fallback)");
    /* Submitted, so that it completes. Before `after` is enqueued: Oclgrind's
     * clFlush runs the queue to its end. */
    if (st == CLOPS_SUCCESS && (err = clFlush(q)) != CL_SUCCESS) st = clops_fail_cl(err, "clFlush");
    cl_event after = NULL;
    if (st == CLOPS_SUCCESS && (err = enqueue_probe(q, w->hq, 1, &j->done, 1, &after)) != CL_SUCCESS)
        st = clops_fail_cl(err, "clEnqueueReadBuffer(after the host fallback)");
    if (st == CLOPS_SUCCESS) { /* the job's reference (until `done` is set), then the caller's */
        if ((err = clRetainEvent(after)) == CL_SUCCESS) j->after = after;
        if (err == CL_SUCCESS && event) err = clRetainEvent(after);
        if (err != CL_SUCCESS) st = clops_fail_cl(err, "clRetainEvent(host fallback)");
    }
    if (st != CLOPS_SUCCESS) {
        pthread_mutex_lock(&clops_fb_lock);
        clops_fb_slot_give(j);
        pthread_mutex_unlock(&clops_fb_lock);
        if (after) { /* nothing will run: let `after` complete (flushed here: the caller's thread) */
            clSetUserEventStatus(j->done, CL_COMPLETE);
            clFlush(q);
            clReleaseEvent(after);
        }
        clops_fb_job_free(j);
        return st;
    }
    /* The fast path; without it (it failed, or the driver never calls it) the
     * watcher finds the events ended. They may come at once, on this thread or
     * another, before the job is listed: the job is then ready and the listing
     * below schedules it. */
    for (cl_uint k = 0; k <= nwait; k++)
        clSetEventCallback(k ? wait[k - 1] : j->before, CL_COMPLETE, clops_fb_event_ended, (void *)j->ticket);
    clops_fb_failed_by_now(j);
    /* The pool takes it from here: this thread makes no more OpenCL call on the job. */
    pthread_mutex_lock(&clops_fb_lock);
    if (w->reported) w->failures = 0, w->bad = 0, w->reported = false;
    j->seq = ++w->queued;
    if (w->tail) w->tail->next = j;
    else w->head = j;
    w->tail = j;
    if (!j->ready) clops_fb_pending_add(j); /* watched */
    clops_fb_schedule(w);
    pthread_mutex_unlock(&clops_fb_lock);
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

/* Until `e` ended (complete or failed) or the deadline (0: none) passed: its
 * status polled, as clops_wait_until does, but a failure is no news here (the
 * execution's own failure is reported) and PoCL 3.1 may abort in
 * clWaitForEvents on a command behind a failed event. */
static void ended(cl_event e, double deadline)
{
    long pause_ns = 20000;
    for (;;) {
        cl_int s = CL_COMPLETE;
        if (clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL) != CL_SUCCESS || s <= CL_COMPLETE)
            return;
        if (deadline > 0 && clops_deadline(1) - 1 >= deadline) return; /* clops_deadline(1) - 1: now */
        const struct timespec pause = {0, pause_ns};
        nanosleep(&pause, NULL);
        if (pause_ns < 2000000) pause_ns *= 2;
    }
}

clops_status clops_host_last_status(clops_operator *op)
{
    clops_host_worker *w = op->host_worker;
    if (!w) return CLOPS_SUCCESS; /* no execution yet */
    const double timeout = op->ctx->options.timeout_seconds;
    const double deadline = clops_deadline(timeout); /* one deadline for both waits below */
    const struct timespec until = abs_time(deadline);
    pthread_mutex_lock(&clops_fb_lock);
    const clops_status forked = clops_fb_check_generation(w);
    pthread_mutex_unlock(&clops_fb_lock);
    if (forked != CLOPS_SUCCESS) return forked;
    cl_int err = clFlush(op->ctx->queue); /* the `before` reads submitted */
    if (err != CL_SUCCESS) return clops_fail_cl(err, "clFlush");
    pthread_mutex_lock(&clops_fb_lock);
    const uint64_t target = w->queued;
    int e = 0;
    while (w->finished < target && e == 0)
        e = deadline > 0 ? pthread_cond_timedwait(&w->cond, &clops_fb_lock, &until)
                         : pthread_cond_wait(&w->cond, &clops_fb_lock);
    const bool finished = w->finished >= target;
    const bool running = !finished && w->started > w->finished; /* the head job has started */
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
        clops_fb_schedule(w); /* a head job waiting for its `before` is given up now */
    } else {
        snprintf(message, sizeof message, "%s", w->message);
        w->reported = true;
    }
    pthread_mutex_unlock(&clops_fb_lock);
    if (!finished) return CLOPS_ERROR_DEVICE_TIMEOUT; /* the message set above */
    if (failures) ended(w->last_after, deadline); /* its status may be a failure: not clWaitForEvents */
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
    const cl_event last_after = w->last_after; /* read first: once unlocked, a pool thread may free w */
    pthread_mutex_lock(&clops_fb_lock);
    const bool forked = clops_fb_forked(w);
    /* A list with jobs left (they may wait for the caller's events for ever) is
     * freed by the pool thread that finishes its last job. */
    const bool free_now = !forked && !w->head && !w->scheduled;
    if (!forked) w->owner_gone = true;
    pthread_mutex_unlock(&clops_fb_lock);
    if (forked) return; /* in a forked child: leaked, nothing of it touched (see the top) */
    if (last_after) clReleaseEvent(last_after);
    if (free_now) clops_fb_worker_free(w);
}
