/* fallback.c - an operator the device cannot run, on the caller's cl_mem
 * buffers, without ever blocking the caller (clops.h, clops_operator_execute):
 *
 *   caller's queue   [`before`: a 1-byte read of one of the job's buffers, after the wait list]
 *                    [`after`: the same read, after the job's user event `done`]
 *   the pool         learns that `before` ended (a callback on it, or the watcher
 *                    below), takes the operator's head job: maps the buffers on
 *                    the context's shared fallback queue, runs the host kernel,
 *                    unmaps, finishes that queue, records a failure, completes
 *                    `done`, then hands the operator back if its next job is
 *                    ready. A pool thread makes no call on the caller's queue:
 *                    rusticl's clFinish holds the queue's lock while it waits,
 *                    so a flush or release there from another thread waits for
 *                    it, and it waits for the pool.
 *
 * `before` and `after` are reads of one byte into a sink nobody reads, not
 * markers: PoCL handles a marker on an out-of-order queue in time proportional
 * to the commands pending (issue 38, Q3: 2,000 chained markers did not finish
 * in 60 s, 2,000 such reads take 0.05 s). On an in-order queue `before` waits for
 * every earlier command and everything enqueued later waits for `after`, as for
 * a device kernel; on an out-of-order queue only the events say what waits.
 *
 * Nothing relies on a callback: a driver calls none for a command ended by a
 * failed wait list (PoCL, rusticl: issue 38, Q1), and one may call none at all.
 * The callback on `before` is the fast path; its argument is a ticket (a slot
 * of a table and the slot's generation), never a pointer, so a callback that
 * comes late or never costs nothing. One pool thread at a time, when it has no
 * job to run, watches every execution still waiting (the pending list): it
 * reads their `before`'s execution status after an interval growing from
 * WATCH_MIN_NS to WATCH_MAX_NS, so its cost is one status query per pending
 * execution per interval, whatever the number of operators. A failed `before`
 * is taken at once; a complete one only when a second look finds it still
 * without its callback (the callback usually comes first, so the watcher
 * rarely races it). An operator whose job is not ready costs no thread.
 *
 * One process-wide pool of at most POOL_THREADS threads, started on demand,
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
/* The watcher's interval: from 2 ms, doubled while it finds nothing, to 64 ms. */
#define WATCH_MIN_NS 2000000L
#define WATCH_MAX_NS 64000000L
/* A ticket is a slot (the low SLOT_BITS bits) and the slot's generation. */
#define SLOT_BITS 24
#define SLOT_MAX ((uint32_t)1 << SLOT_BITS)

struct clops_host_worker;

/* The 1-byte reads `before` and `after` land here; nothing reads it. */
static unsigned char g_sink[64];

/* One shared fallback queue of a cl_context and device (under the pool's lock). */
typedef struct host_queue {
    struct host_queue *next;
    cl_context cl;
    cl_device_id device;
    cl_command_queue queue; /* retains cl */
    unsigned users;         /* operators' lists that use it */
} host_queue;

typedef struct host_job {
    struct host_job *next;  /* the operator's list */
    struct host_job *pend_prev, *pend_next; /* the pool's pending list, while `pending` */
    struct clops_host_worker *w;
    uint64_t seq;           /* 1, 2, ... in execute order */
    uintptr_t ticket;       /* the callback's argument */
    clops_buffers b;        /* those the operator uses (retained), else NULL */
    cl_event before, done;  /* retained; `after` is the caller's and the operator's */
    cl_uint nwait;
    cl_event *wait;         /* the caller's wait list (retained): a failure names its status */
    cl_int before_status;   /* CL_COMPLETE or a failure, once ready */
    bool ready;             /* `before` ended (callback or watcher) */
    bool pending;           /* in the pending list */
    bool seen_complete;     /* the watcher saw `before` complete once */
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
    host_queue *hq;         /* the shared queue of its context */
    char device[128];
    /* The operator's side only (execute and last_status are one thread at a time). */
    cl_event last_after;    /* the last execution's `after` */
} clops_host_worker;

/* The process-wide pool. The lock is never held across an OpenCL call: the
 * callback takes it on the driver's thread. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t work;             /* an operator ready, or a job to watch */
    pthread_cond_t scanned;          /* the watcher's scan ended */
    clops_host_worker *head, *tail;  /* operators whose head job is ready (or given up) */
    host_job *pending;               /* jobs whose `before` has not been seen ending */
    size_t npending;
    bool watching, scanning;         /* a pool thread is the watcher; it is querying */
    long watch_ns;                   /* its current interval */
    host_job **slot_job;             /* the tickets' table */
    uint32_t *slot_gen, *slot_free;
    uint32_t slots, nfree;
    host_queue *queues;
    unsigned threads, idle;          /* started; waiting for work */
    unsigned generation;             /* forks survived (the child's count) */
} g_pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER,
            .scanned = PTHREAD_COND_INITIALIZER, .watch_ns = WATCH_MIN_NS};

static pthread_once_t g_pool_once = PTHREAD_ONCE_INIT;

static void pool_prepare(void) { pthread_mutex_lock(&g_pool.lock); }
static void pool_parent(void) { pthread_mutex_unlock(&g_pool.lock); }

/* The forking thread holds the lock (pool_prepare); the pool's threads and the
 * driver's are gone. What the lists held is leaked: freeing it would call OpenCL. */
static void pool_child(void)
{
    pthread_cond_init(&g_pool.work, NULL); /* its waiters were the pool's threads */
    pthread_cond_init(&g_pool.scanned, NULL);
    g_pool.head = g_pool.tail = NULL;
    g_pool.pending = NULL;
    g_pool.npending = 0;
    g_pool.watching = g_pool.scanning = false;
    g_pool.slot_job = NULL, g_pool.slot_gen = g_pool.slot_free = NULL;
    g_pool.slots = g_pool.nfree = 0;
    g_pool.queues = NULL;
    g_pool.threads = g_pool.idle = 0;
    g_pool.generation++;
    pthread_mutex_unlock(&g_pool.lock);
}

static void pool_init(void) { pthread_atfork(pool_prepare, pool_parent, pool_child); }

/* ---- tickets: what the callback gets instead of a pointer -------------------------------------- */

/* Under the lock: a slot for `j` (its ticket in j->ticket), false without memory. */
static bool slot_take(host_job *j)
{
    if (!g_pool.nfree) {
        const uint32_t n = g_pool.slots ? g_pool.slots * 2 : 64;
        if (g_pool.slots >= SLOT_MAX) return false;
        host_job **jobs = realloc(g_pool.slot_job, n * sizeof *jobs);
        if (jobs) g_pool.slot_job = jobs;
        uint32_t *gen = jobs ? realloc(g_pool.slot_gen, n * sizeof *gen) : NULL;
        if (gen) g_pool.slot_gen = gen;
        uint32_t *fr = gen ? realloc(g_pool.slot_free, n * sizeof *fr) : NULL;
        if (!fr) return false;
        g_pool.slot_free = fr;
        for (uint32_t i = g_pool.slots; i < n; i++) {
            g_pool.slot_job[i] = NULL;
            g_pool.slot_gen[i] = 0;
            g_pool.slot_free[g_pool.nfree++] = n - 1 - (i - g_pool.slots);
        }
        g_pool.slots = n;
    }
    const uint32_t s = g_pool.slot_free[--g_pool.nfree];
    g_pool.slot_job[s] = j;
    j->ticket = ((uintptr_t)g_pool.slot_gen[s] << SLOT_BITS) | s;
    return true;
}

/* Under the lock: the job of a ticket, NULL when its slot moved on. */
static host_job *slot_job(uintptr_t ticket)
{
    const uint32_t s = (uint32_t)(ticket & (SLOT_MAX - 1));
    if (s >= g_pool.slots || ((uintptr_t)g_pool.slot_gen[s] << SLOT_BITS) != (ticket & ~(uintptr_t)(SLOT_MAX - 1)))
        return NULL;
    return g_pool.slot_job[s];
}

/* Under the lock: the ticket no longer finds the job. */
static void slot_give(const host_job *j)
{
    const uint32_t s = (uint32_t)(j->ticket & (SLOT_MAX - 1));
    if (slot_job(j->ticket) != j) return;
    g_pool.slot_job[s] = NULL;
    g_pool.slot_gen[s] = (g_pool.slot_gen[s] + 1) & (uint32_t)(UINTPTR_MAX >> SLOT_BITS);
    g_pool.slot_free[g_pool.nfree++] = s;
}

/* ---- readiness ------------------------------------------------------------------------------- */

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

static void pending_remove(host_job *j)
{
    if (!j->pending) return;
    if (j->pend_prev) j->pend_prev->pend_next = j->pend_next;
    else g_pool.pending = j->pend_next;
    if (j->pend_next) j->pend_next->pend_prev = j->pend_prev;
    j->pending = false;
    g_pool.npending--;
}

/* Under the lock: `before` ended with `status`. */
static void job_ready(host_job *j, cl_int status)
{
    if (j->ready) return;
    j->ready = true;
    j->before_status = status;
    pending_remove(j);
    schedule(j->w);
}

/* `before` completed: on the driver's thread, which must not block, so only the hand-over. */
static void CL_CALLBACK before_done(cl_event event, cl_int status, void *ticket)
{
    (void)event;
    pthread_mutex_lock(&g_pool.lock);
    host_job *j = slot_job((uintptr_t)ticket);
    if (j) job_ready(j, status);
    pthread_mutex_unlock(&g_pool.lock);
}

/* The watcher's look at every pending job (a pool thread with nothing to run).
 * Called and returns with the lock held; while it queries, no job is freed
 * (serve waits for `scanning` to end). */
static void watch(void)
{
    const size_t n = g_pool.npending;
    uintptr_t *tickets = malloc(n * (sizeof *tickets + sizeof(cl_event) + sizeof(cl_int)) + 1);
    if (!tickets) return; /* the next interval tries again */
    cl_event *events = (cl_event *)(tickets + n);
    cl_int *status = (cl_int *)(events + n);
    size_t k = 0;
    for (host_job *j = g_pool.pending; j && k < n; j = j->pend_next, k++) tickets[k] = j->ticket, events[k] = j->before;
    g_pool.scanning = true;
    pthread_mutex_unlock(&g_pool.lock);
    for (size_t i = 0; i < k; i++)
        if (clGetEventInfo(events[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status[i], &status[i], NULL) !=
            CL_SUCCESS)
            status[i] = CL_QUEUED; /* no answer: look again later */
    pthread_mutex_lock(&g_pool.lock);
    g_pool.scanning = false;
    pthread_cond_broadcast(&g_pool.scanned);
    bool found = false;
    for (size_t i = 0; i < k; i++) {
        host_job *j = slot_job(tickets[i]);
        if (!j || j->ready) continue;
        if (status[i] < 0 || (status[i] == CL_COMPLETE && j->seen_complete)) {
            job_ready(j, status[i]);
            found = true;
        } else if (status[i] == CL_COMPLETE) {
            j->seen_complete = true;
        }
    }
    free(tickets);
    g_pool.watch_ns = found ? WATCH_MIN_NS : g_pool.watch_ns * 2 > WATCH_MAX_NS ? WATCH_MAX_NS : g_pool.watch_ns * 2;
}

/* ---- the host work --------------------------------------------------------------------------- */

static void job_free(host_job *j)
{
    const cl_mem m[3] = {j->b.input, j->b.indices, j->b.output};
    for (int i = 0; i < 3; i++)
        if (m[i]) clReleaseMemObject(m[i]);
    for (cl_uint i = 0; i < j->nwait; i++) clReleaseEvent(j->wait[i]);
    free(j->wait);
    if (j->before) clReleaseEvent(j->before);
    if (j->done) clReleaseEvent(j->done);
    free(j);
}

/* The shared queue of `cl` and `device` in *out, one more user. */
static clops_status queue_get(cl_context cl, cl_device_id device, host_queue **out)
{
    pthread_mutex_lock(&g_pool.lock);
    for (host_queue *h = g_pool.queues; h; h = h->next)
        if (h->cl == cl && h->device == device) {
            h->users++;
            pthread_mutex_unlock(&g_pool.lock);
            *out = h;
            return CLOPS_SUCCESS;
        }
    pthread_mutex_unlock(&g_pool.lock);
    host_queue *h = calloc(1, sizeof *h);
    if (!h) return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "the host fallback's queue record");
    cl_int err = CL_SUCCESS;
    cl_command_queue q = clCreateCommandQueue(cl, device, 0, &err);
    if (!q) {
        free(h);
        return clops_fail_cl(err, "clCreateCommandQueue(host fallback)");
    }
    pthread_mutex_lock(&g_pool.lock);
    host_queue *other = g_pool.queues;
    while (other && !(other->cl == cl && other->device == device)) other = other->next;
    if (other) { /* another thread made one meanwhile */
        other->users++;
    } else {
        *h = (host_queue){g_pool.queues, cl, device, q, 1};
        g_pool.queues = h;
    }
    pthread_mutex_unlock(&g_pool.lock);
    if (other) clReleaseCommandQueue(q), free(h);
    *out = other ? other : h;
    return CLOPS_SUCCESS;
}

static void queue_put(host_queue *h)
{
    pthread_mutex_lock(&g_pool.lock);
    const bool last = --h->users == 0;
    if (last) {
        host_queue **p = &g_pool.queues;
        while (*p != h) p = &(*p)->next;
        *p = h->next;
    }
    pthread_mutex_unlock(&g_pool.lock);
    if (!last) return;
    clReleaseCommandQueue(h->queue);
    free(h);
}

static void worker_free(clops_host_worker *w)
{
    if (w->hq) queue_put(w->hq);
    pthread_cond_destroy(&w->cond);
    free(w);
}

/* A failed wait list: the first failed event's status (the driver may give
 * `before` another one: -14, or PoCL's -1). */
static clops_status wait_list_failed(const clops_host_worker *w, const host_job *j)
{
    cl_int status = j->before_status;
    for (cl_uint i = 0; i < j->nwait; i++) {
        cl_int s = CL_COMPLETE;
        if (clGetEventInfo(j->wait[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL) == CL_SUCCESS && s < 0) {
            status = s;
            break;
        }
    }
    char label[256];
    return clops_fail(CLOPS_ERROR_DEVICE_LOST, "device \"%s\": an event of the host fallback's wait list failed "
                      "with execution status %s; that execution did not run and its output was not written",
                      w->device, clops_status_label(status, label, sizeof label));
}

/* One job: its status; *bad the bad indices it skipped. */
static clops_status run_job(clops_host_worker *w, host_job *j, uint64_t *bad)
{
    if (j->before_status < 0) return wait_list_failed(w, j);
    cl_command_queue q = w->hq->queue;
    clops_host_buffers mapped = {0};
    clops_status st = clops_map_buffers(q, &w->params, &j->b, 0, NULL, &mapped); /* `before` ended: no wait list */
    if (st == CLOPS_SUCCESS)
        st = w->entry->run_mapped ? w->entry->run_mapped(&w->params, &mapped, bad)
                                  : w->entry->host_run(&w->params, &mapped);
    clops_unmap_buffers(q, &j->b, &mapped);
    const cl_int err = clFinish(q); /* the output written back before `done` */
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
    pending_remove(j); /* a given-up job may still be pending */
    slot_give(j);      /* a late callback finds nothing */
    while (g_pool.scanning) pthread_cond_wait(&g_pool.scanned, &g_pool.lock); /* it may query `before` */
    pthread_mutex_unlock(&g_pool.lock);
    /* No lock held: a driver may run callbacks inside. */
    clSetUserEventStatus(j->done, CL_COMPLETE); /* fails only for an invalid event */
    job_free(j);
    if (free_w) worker_free(w); /* the owner is gone and the list empty: nobody else refers to it */
    pthread_mutex_lock(&g_pool.lock);
}

static void *pool_thread(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&g_pool.lock);
    for (;;) {
        g_pool.idle++;
        while (!g_pool.head) {
            if (g_pool.pending && !g_pool.watching) { /* this thread watches until it has a job */
                g_pool.watching = true;
                struct timespec t;
                clock_gettime(CLOCK_REALTIME, &t);
                t.tv_nsec += g_pool.watch_ns;
                if (t.tv_nsec >= 1000000000L) t.tv_sec++, t.tv_nsec -= 1000000000L;
                const int e = pthread_cond_timedwait(&g_pool.work, &g_pool.lock, &t);
                if (e == ETIMEDOUT && g_pool.pending) watch();
                g_pool.watching = false;
            } else {
                pthread_cond_wait(&g_pool.work, &g_pool.lock);
            }
        }
        g_pool.idle--;
        clops_host_worker *w = g_pool.head;
        g_pool.head = w->next_ready;
        if (!g_pool.head) g_pool.tail = NULL;
        if (g_pool.head || (g_pool.pending && !g_pool.watching)) pthread_cond_signal(&g_pool.work);
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
    const clops_status st = queue_get(op->ctx->cl_ctx, op->ctx->device, &w->hq);
    if (st != CLOPS_SUCCESS) {
        worker_free(w);
        return st;
    }
    pthread_mutex_lock(&g_pool.lock);
    w->generation = g_pool.generation;
    pthread_mutex_unlock(&g_pool.lock);
    op->host_worker = *out = w;
    return CLOPS_SUCCESS;
}

/* A job's own references to the buffers and the caller's wait list, and its user event. */
static clops_status job_new(clops_operator *op, const clops_buffers *b, cl_uint nwait, const cl_event *wait,
                            host_job **out)
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
    if (st == CLOPS_SUCCESS && nwait) {
        j->wait = malloc(nwait * sizeof *j->wait);
        if (!j->wait) st = clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "the host fallback's wait list of %u events",
                                      (unsigned)nwait);
        while (st == CLOPS_SUCCESS && j->nwait < nwait) {
            if ((err = clRetainEvent(wait[j->nwait])) == CL_SUCCESS) j->wait[j->nwait] = wait[j->nwait], j->nwait++;
            else st = clops_fail_cl(err, "clRetainEvent(host fallback)");
        }
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

/* `before` or `after`: a read of one byte of `probe` into the sink, after `wait`
 * (a marker only when the operator uses no buffer at all). */
static cl_int enqueue_probe(cl_command_queue q, cl_mem probe, cl_uint nwait, const cl_event *wait, size_t at,
                            cl_event *event)
{
    if (!probe) return clEnqueueMarkerWithWaitList(q, nwait, nwait ? wait : NULL, event);
    return clEnqueueReadBuffer(q, probe, CL_FALSE, 0, 1, g_sink + at, nwait, nwait ? wait : NULL, event);
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
    if (st == CLOPS_SUCCESS) st = job_new(op, b, nwait, wait, &j);
    if (st != CLOPS_SUCCESS) return st;
    j->w = w;
    pthread_mutex_lock(&g_pool.lock);
    const bool ticket = slot_take(j);
    pthread_mutex_unlock(&g_pool.lock);
    if (!ticket) {
        job_free(j);
        return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "the host fallback's table of pending executions");
    }
    const cl_mem probe = j->b.input ? j->b.input : j->b.output ? j->b.output : j->b.indices;
    /* `before`: after the wait list (and, on an in-order queue, after every earlier command). */
    cl_int err = enqueue_probe(q, probe, nwait, wait, 0, &j->before);
    if (err != CL_SUCCESS) st = clops_fail_cl(err, "clEnqueueReadBuffer(before the host fallback)");
    /* Submitted, so that it completes. Before `after` is enqueued: Oclgrind's
     * clFlush runs the queue to its end. */
    if (st == CLOPS_SUCCESS && (err = clFlush(q)) != CL_SUCCESS) st = clops_fail_cl(err, "clFlush");
    cl_event after = NULL;
    if (st == CLOPS_SUCCESS && (err = enqueue_probe(q, probe, 1, &j->done, 1, &after)) != CL_SUCCESS)
        st = clops_fail_cl(err, "clEnqueueReadBuffer(after the host fallback)");
    if (st == CLOPS_SUCCESS && event && (err = clRetainEvent(after)) != CL_SUCCESS)
        st = clops_fail_cl(err, "clRetainEvent(host fallback)");
    if (st != CLOPS_SUCCESS) {
        pthread_mutex_lock(&g_pool.lock);
        slot_give(j);
        pthread_mutex_unlock(&g_pool.lock);
        if (after) { /* nothing will run: let `after` complete */
            clSetUserEventStatus(j->done, CL_COMPLETE);
            clReleaseEvent(after);
        }
        job_free(j);
        return st;
    }
    /* The fast path; without it (it failed, or the driver never calls it) the
     * watcher finds `before` ended. It may come at once, on this thread or
     * another, before the job is listed: the job is then ready and the listing
     * below schedules it. */
    clSetEventCallback(j->before, CL_COMPLETE, before_done, (void *)j->ticket);
    /* The pool takes it from here: this thread makes no more OpenCL call on the job. */
    pthread_mutex_lock(&g_pool.lock);
    if (w->reported) w->failures = 0, w->bad = 0, w->reported = false;
    j->seq = ++w->queued;
    if (w->tail) w->tail->next = j;
    else w->head = j;
    w->tail = j;
    if (!j->ready) { /* watched */
        j->pending = true;
        j->pend_prev = NULL;
        j->pend_next = g_pool.pending;
        if (g_pool.pending) g_pool.pending->pend_prev = j;
        g_pool.pending = j;
        g_pool.npending++;
        if (!g_pool.watching) pthread_cond_signal(&g_pool.work);
    }
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
    pthread_mutex_lock(&g_pool.lock);
    const clops_status forked = check_generation(w);
    pthread_mutex_unlock(&g_pool.lock);
    if (forked != CLOPS_SUCCESS) return forked;
    cl_int err = clFlush(op->ctx->queue); /* the `before` reads submitted */
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
