/* fallback.c - an operator the device cannot run, on the caller's cl_mem
 * buffers, without ever blocking the caller (clops.h, clops_operator_execute):
 *
 *   caller's queue   [marker `before`: after the wait list]  [marker `after`: after `done`]
 *   `before`'s callback  (the driver's thread) marks the job ready and hands its
 *                    operator to the pool - nothing else: no OpenCL call there
 *   a pool thread    takes the operator's head job: maps the buffers on the
 *                    operator's queue, runs the host kernel, unmaps, finishes
 *                    that queue, records a failure, completes the job's user
 *                    event `done`, then hands the operator back if its next
 *                    job is ready.
 *
 * The host work starts when its wait list completes (clSetEventCallback on
 * `before`), never by polling: a pool thread never waits for the caller's
 * events, and an operator whose job is not ready costs no thread and no CPU.
 * One process-wide pool of at most POOL_THREADS threads, started on demand,
 * serves every fallback operator; each operator keeps its jobs in a list and is
 * served by one pool thread at a time, so its executions run one after another
 * in the order of the execute calls, on any queue (they may share an output;
 * MaxUnpooling's promise). Operators whose jobs are ready take turns (a FIFO of
 * operators), so N operators executed back to back cost N hops, each a callback
 * and a wake-up (issue 32, P1: polling threads, one per operator, made that
 * quadratic). The caller's event is `after`, a command on its queue: on an
 * in-order queue everything enqueued later waits for the host work, as for a
 * device kernel. The maps go on a private queue per operator (created at its
 * first execution), so that commands the caller enqueues behind `after` cannot
 * hold them up. Each job holds references to its buffers and events, the
 * private queue to the cl_context: the operator and the context may be freed
 * before the work ran; the operator's list is then freed by the pool thread
 * that finishes its last job (free never waits for it). A job given up before
 * its `before` completed stays as a husk holding `before` until the callback
 * came, which hands it to a pool thread to release (never released on the
 * driver's thread).
 *
 * `done` always completes with CL_COMPLETE - on failure too, the output then
 * untouched: a negative status on a user event that commands wait on aborts PoCL
 * 3.1 (pocl_update_event_failed). Every failure of the host work is kept on the
 * operator (the first one's status and message, and how many) until
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
 * waiters that no longer exist, and the driver's threads are gone). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "ops/ops.h"

/* The pool's size: the host kernels are memory-bound and short, and a pool
 * thread never waits for the caller's events, so a few threads keep up with
 * any number of operators. */
#define POOL_THREADS 4

struct clops_host_worker;

typedef struct host_job {
    struct host_job *next;  /* the operator's list; then, as a husk, the pool's */
    struct clops_host_worker *w; /* until finished */
    uint64_t seq;           /* 1, 2, ... in execute order */
    clops_buffers b;        /* those the operator uses (retained), else NULL */
    cl_event before, done;  /* retained; `after` is the caller's and the operator's */
    cl_int before_status;   /* what the callback reported: CL_COMPLETE or a failure */
    bool ready;             /* the callback came */
    bool finished;          /* out of the operator's list: the callback hands it to the pool */
} host_job;

/* An operator's jobs and failures. Every field but the owner's is under the pool's lock. */
typedef struct clops_host_worker {
    pthread_cond_t cond;    /* a job finished (CLOCK_MONOTONIC; with the pool's lock) */
    host_job *head, *tail;  /* the jobs not finished; the head is the next to run */
    struct clops_host_worker *next_ready; /* in the pool's FIFO of operators */
    bool scheduled;         /* in that FIFO, or a pool thread on its head */
    bool owner_gone;        /* the operator was freed: the list's last job frees this */
    unsigned generation;    /* the pool's generation (fork) it was made in */
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

/* The process-wide pool. The lock is never held across an OpenCL call: the
 * callback takes it on the driver's thread. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t work;             /* an operator ready, a husk to release */
    clops_host_worker *head, *tail;  /* operators whose head job is ready (or given up) */
    host_job *husks;                 /* given-up jobs whose callback came */
    unsigned threads, idle;          /* started; waiting for work */
    unsigned generation;             /* forks survived (the child's count) */
} g_pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, NULL, 0, 0, 0};

static pthread_once_t g_pool_once = PTHREAD_ONCE_INIT;

static void pool_prepare(void) { pthread_mutex_lock(&g_pool.lock); }
static void pool_parent(void) { pthread_mutex_unlock(&g_pool.lock); }

/* The forking thread holds the lock (pool_prepare); the pool's threads and the
 * driver's are gone. What the lists held is leaked: freeing it would call OpenCL. */
static void pool_child(void)
{
    pthread_cond_init(&g_pool.work, NULL); /* its waiters were the pool's threads */
    g_pool.head = g_pool.tail = NULL;
    g_pool.husks = NULL;
    g_pool.threads = g_pool.idle = 0;
    g_pool.generation++;
    pthread_mutex_unlock(&g_pool.lock);
}

static void pool_init(void) { pthread_atfork(pool_prepare, pool_parent, pool_child); }

/* Under the lock: hands `w` to the pool if its head job can be taken. */
static void schedule(clops_host_worker *w)
{
    const host_job *j = w->head;
    if (w->scheduled || !j || !(j->ready || j->seq <= w->cancel_upto)) return;
    w->scheduled = true;
    w->next_ready = NULL;
    if (g_pool.tail) g_pool.tail->next_ready = w;
    else g_pool.head = w;
    g_pool.tail = w;
    pthread_cond_signal(&g_pool.work);
}

/* `before` completed (or failed): on the driver's thread, which must not block,
 * so only the hand-over. */
static void CL_CALLBACK before_done(cl_event event, cl_int status, void *arg)
{
    (void)event;
    host_job *j = arg;
    pthread_mutex_lock(&g_pool.lock);
    j->ready = true;
    j->before_status = status;
    if (j->finished) { /* given up meanwhile: a pool thread releases `before` */
        j->next = g_pool.husks;
        g_pool.husks = j;
        pthread_cond_signal(&g_pool.work);
    } else {
        schedule(j->w);
    }
    pthread_mutex_unlock(&g_pool.lock);
}

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
    free(w);
}

/* One job: its status; *bad the bad indices it skipped. */
static clops_status run_job(clops_host_worker *w, host_job *j, uint64_t *bad)
{
    if (j->before_status < 0)
        return clops_fail(CLOPS_ERROR_DEVICE_LOST, "device \"%s\": the commands before the host fallback's maps "
                          "failed with execution status %d; the output was not written", w->device,
                          (int)j->before_status);
    clops_host_buffers mapped = {0};
    clops_status st = clops_map_buffers(w->queue, &w->params, &j->b, 1, &j->before, &mapped);
    if (st == CLOPS_SUCCESS)
        st = w->entry->run_mapped ? w->entry->run_mapped(&w->params, &mapped, bad)
                                  : w->entry->host_run(&w->params, &mapped);
    clops_unmap_buffers(w->queue, &j->b, &mapped);
    const cl_int err = clFinish(w->queue); /* the output written back before `done` */
    if (st == CLOPS_SUCCESS && err != CL_SUCCESS) st = clops_fail_cl(err, "clFinish(host fallback)");
    return st;
}

/* Takes `w`'s head job (ready, or given up), runs it, finishes it. Called and
 * returns with the lock held. */
static void serve(clops_host_worker *w)
{
    host_job *j = w->head;
    const bool cancelled = j->seq <= w->cancel_upto; /* decided under the lock: last_status sees `started` */
    if (!cancelled) w->started = j->seq;
    pthread_mutex_unlock(&g_pool.lock);
    uint64_t bad = 0;
    const clops_status st = cancelled ? CLOPS_SUCCESS : run_job(w, j, &bad);
    pthread_mutex_lock(&g_pool.lock);
    if (st != CLOPS_SUCCESS && w->failures++ == 0) {
        w->failed = st;
        snprintf(w->message, sizeof w->message, "%s", clops_last_error_message());
    }
    if (st == CLOPS_SUCCESS && !cancelled) w->bad += bad;
    w->head = j->next;
    if (!w->head) w->tail = NULL;
    w->finished = j->seq;
    pthread_cond_broadcast(&w->cond);
    w->scheduled = false;
    schedule(w); /* to the FIFO's end: operators with ready jobs take turns */
    const bool free_w = w->owner_gone && !w->head;
    /* Out of the list: what the job still holds is this thread's, apart from a
     * given-up job's `before` when its callback has not come (the callback hands
     * the husk back, and then nothing else refers to it). */
    host_job own = *j;
    const bool husk = !j->ready;
    j->finished = true;
    j->w = NULL;
    j->b = (clops_buffers){0};
    j->done = NULL;
    if (!husk) own.before = j->before, j->before = NULL;
    else own.before = NULL;
    pthread_mutex_unlock(&g_pool.lock);
    /* No lock held: a driver may run callbacks inside. */
    clSetUserEventStatus(own.done, CL_COMPLETE); /* fails only for an invalid event */
    const cl_mem m[3] = {own.b.input, own.b.indices, own.b.output};
    for (int i = 0; i < 3; i++)
        if (m[i]) clReleaseMemObject(m[i]);
    clReleaseEvent(own.done);
    if (own.before) clReleaseEvent(own.before);
    if (!husk) free(j);
    if (free_w) worker_free(w); /* the owner is gone and the list empty: nobody else refers to it */
    pthread_mutex_lock(&g_pool.lock);
}

static void *pool_thread(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&g_pool.lock);
    for (;;) {
        g_pool.idle++;
        while (!g_pool.head && !g_pool.husks) pthread_cond_wait(&g_pool.work, &g_pool.lock);
        g_pool.idle--;
        if (g_pool.husks) {
            host_job *j = g_pool.husks;
            g_pool.husks = j->next;
            pthread_mutex_unlock(&g_pool.lock);
            job_free(j);
            pthread_mutex_lock(&g_pool.lock);
            continue;
        }
        clops_host_worker *w = g_pool.head;
        g_pool.head = w->next_ready;
        if (!g_pool.head) g_pool.tail = NULL;
        serve(w);
    }
    return NULL;
}

/* A pool thread could not start: `e` from pthread_create. */
static clops_status thread_failed(int e)
{
    if (e != EAGAIN)
        return clops_fail(CLOPS_ERROR_INTERNAL, "cannot start the host fallback's pool thread (pthread_create "
                          "error %d)", e);
    struct rlimit rl;
    char limit[32] = "unknown";
    if (getrlimit(RLIMIT_NPROC, &rl) == 0) {
        if (rl.rlim_cur == RLIM_INFINITY) snprintf(limit, sizeof limit, "unlimited");
        else snprintf(limit, sizeof limit, "%llu", (unsigned long long)rl.rlim_cur);
    }
    return clops_fail(CL_OUT_OF_RESOURCES, "cannot start the host fallback's pool thread: resource temporarily "
                      "unavailable (EAGAIN): the per-user limit on processes and threads (RLIMIT_NPROC, `ulimit "
                      "-u`: %s) or the system's thread limit is reached; clops itself needs at most %d such "
                      "threads for all fallback operators", limit, POOL_THREADS);
}

/* Under the lock: one more pool thread when none waits and the pool is not
 * full. Fails only when the pool has no thread at all. */
static clops_status pool_grow(void)
{
    if (g_pool.idle > 0 || g_pool.threads >= POOL_THREADS) return CLOPS_SUCCESS;
    /* The pool's threads take no signal: they belong to the library, not the caller. */
    sigset_t all, old;
    sigfillset(&all);
    const bool masked = pthread_sigmask(SIG_SETMASK, &all, &old) == 0;
    pthread_attr_t attr;
    int e = pthread_attr_init(&attr);
    if (e == 0) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_t t;
        e = clops_cl.thread_create(&t, &attr, pool_thread, NULL);
        pthread_attr_destroy(&attr);
    }
    if (masked) pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e == 0) {
        g_pool.threads++;
        return CLOPS_SUCCESS;
    }
    return g_pool.threads > 0 ? CLOPS_SUCCESS : thread_failed(e);
}

/* Under the lock: refuses an operator made before this process forked. */
static clops_status check_generation(const clops_host_worker *w)
{
    if (w->generation == g_pool.generation) return CLOPS_SUCCESS;
    return clops_fail(CLOPS_ERROR_DEVICE_LOST, "device \"%s\": this operator's host fallback was used before the "
                      "process forked, and its work cannot run in the child; create contexts and operators "
                      "after fork (or use the spawn start method)", w->device);
}

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
    cl_int err = CL_SUCCESS;
    w->queue = clCreateCommandQueue(op->ctx->cl_ctx, op->ctx->device, 0, &err);
    if (!w->queue) {
        worker_free(w);
        return clops_fail_cl(err, "clCreateCommandQueue(host fallback)");
    }
    pthread_mutex_lock(&g_pool.lock);
    w->generation = g_pool.generation;
    pthread_mutex_unlock(&g_pool.lock);
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
    pthread_once(&g_pool_once, pool_init);
    clops_status st = worker_get(op, &w);
    if (st == CLOPS_SUCCESS) {
        pthread_mutex_lock(&g_pool.lock);
        st = check_generation(w);
        if (st == CLOPS_SUCCESS) st = pool_grow(); /* before anything is enqueued: a failure leaves nothing */
        pthread_mutex_unlock(&g_pool.lock);
    }
    if (st == CLOPS_SUCCESS) st = job_new(op, b, &j);
    if (st != CLOPS_SUCCESS) return st;
    j->w = w;
    /* `before`: after the wait list (and, on an in-order queue, after every earlier command). */
    cl_int err = clEnqueueMarkerWithWaitList(q, nwait, wait, &j->before);
    if (err != CL_SUCCESS) st = clops_fail_cl(err, "clEnqueueMarkerWithWaitList(before the host fallback)");
    /* Submitted, so that it completes and its callback comes. Before `after` is
     * enqueued: Oclgrind's clFlush runs the queue to its end. */
    if (st == CLOPS_SUCCESS && (err = clFlush(q)) != CL_SUCCESS) st = clops_fail_cl(err, "clFlush");
    cl_event after = NULL;
    if (st == CLOPS_SUCCESS) {
        err = clEnqueueMarkerWithWaitList(q, 1, &j->done, &after);
        if (err != CL_SUCCESS) st = clops_fail_cl(err, "clEnqueueMarkerWithWaitList(after the host fallback)");
    }
    if (st == CLOPS_SUCCESS && event && (err = clRetainEvent(after)) != CL_SUCCESS)
        st = clops_fail_cl(err, "clRetainEvent(host fallback)");
    /* Last: once registered, the callback may refer to the job at any time. It
     * may come at once, on this thread or another, before the job is listed:
     * the job is then ready and the listing below schedules it. */
    if (st == CLOPS_SUCCESS && (err = clSetEventCallback(j->before, CL_COMPLETE, before_done, j)) != CL_SUCCESS) {
        if (event) clReleaseEvent(after);
        st = clops_fail_cl(err, "clSetEventCallback(before the host fallback)");
    }
    if (st != CLOPS_SUCCESS) {
        if (after) { /* nothing will run: let `after` complete */
            clSetUserEventStatus(j->done, CL_COMPLETE);
            clReleaseEvent(after);
        }
        job_free(j);
        return st;
    }
    /* The pool takes it from here: this thread makes no more OpenCL call on the job. */
    pthread_mutex_lock(&g_pool.lock);
    if (w->reported) w->failures = 0, w->bad = 0, w->reported = false;
    j->seq = ++w->queued;
    if (w->tail) w->tail->next = j;
    else w->head = j;
    w->tail = j;
    schedule(w);
    pthread_mutex_unlock(&g_pool.lock);
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
    pthread_mutex_lock(&g_pool.lock);
    const clops_status forked = check_generation(w);
    pthread_mutex_unlock(&g_pool.lock);
    if (forked != CLOPS_SUCCESS) return forked;
    cl_int err = clFlush(op->ctx->queue); /* the `before` markers submitted */
    if (err != CL_SUCCESS) return clops_fail_cl(err, "clFlush");
    pthread_mutex_lock(&g_pool.lock);
    const uint64_t target = w->queued;
    int e = 0;
    while (w->finished < target && e == 0)
        e = deadline > 0 ? pthread_cond_timedwait(&w->cond, &g_pool.lock, &until)
                         : pthread_cond_wait(&w->cond, &g_pool.lock);
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
        schedule(w); /* a head job waiting for its `before` is given up now */
    } else {
        snprintf(message, sizeof message, "%s", w->message);
        w->reported = true;
    }
    pthread_mutex_unlock(&g_pool.lock);
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
    const cl_event last_after = w->last_after; /* read first: once unlocked, a pool thread may free w */
    pthread_mutex_lock(&g_pool.lock);
    const bool forked = w->generation != g_pool.generation;
    /* A list with jobs left (they may wait for the caller's events for ever) is
     * freed by the pool thread that finishes its last job. */
    const bool free_now = !forked && !w->head && !w->scheduled;
    if (!forked) w->owner_gone = true;
    pthread_mutex_unlock(&g_pool.lock);
    if (forked) return; /* in a forked child: leaked, nothing of it touched (see the top) */
    if (last_after) clReleaseEvent(last_after);
    if (free_now) worker_free(w);
}
