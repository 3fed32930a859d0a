/* fallback_pool.c - the host fallback's process-wide pool (fallback.h; the design is
 * fallback.c's top comment): the tickets the callback on `before` gets, the
 * pending executions and the watcher that reads the status of the events they
 * wait for (`before` and the caller's wait list), the
 * host work itself (map on the context's shared queue, host kernel, unmap,
 * finish, complete `done`, then a flush request to the flusher), the pool's
 * threads, the shared queues, and the pool's side of fork. A pool thread makes
 * no call on the caller's queue (fallback_flush.c says why). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ops/fallback.h"

/* The watcher's interval: from 2 ms, doubled while it finds nothing, to 64 ms. */
#define WATCH_MIN_NS 2000000L
#define WATCH_MAX_NS 64000000L
/* A ticket is a slot (the low SLOT_BITS bits) and the slot's generation. */
#define SLOT_BITS 24
#define SLOT_MAX ((uint32_t)1 << SLOT_BITS)

/* The process-wide pool. The lock is never held across an OpenCL call: the
 * callback takes it on the driver's thread. */
pthread_mutex_t clops_fb_lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
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
} g_pool = {.work = PTHREAD_COND_INITIALIZER,
            .scanned = PTHREAD_COND_INITIALIZER, .watch_ns = WATCH_MIN_NS};

static void pool_prepare(void) { pthread_mutex_lock(&clops_fb_lock); }
static void pool_parent(void) { pthread_mutex_unlock(&clops_fb_lock); }

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
    pthread_mutex_unlock(&clops_fb_lock);
}

void clops_fb_pool_init(void) { pthread_atfork(pool_prepare, pool_parent, pool_child); }

/* ---- tickets: what the callback gets instead of a pointer -------------------------------------- */

/* Under the lock: a slot for `j` (its ticket in j->ticket), false without memory. */
bool clops_fb_slot_take(host_job *j)
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
void clops_fb_slot_give(const host_job *j)
{
    const uint32_t s = (uint32_t)(j->ticket & (SLOT_MAX - 1));
    if (slot_job(j->ticket) != j) return;
    g_pool.slot_job[s] = NULL;
    g_pool.slot_gen[s] = (g_pool.slot_gen[s] + 1) & (uint32_t)(UINTPTR_MAX >> SLOT_BITS);
    g_pool.slot_free[g_pool.nfree++] = s;
}

/* ---- readiness ------------------------------------------------------------------------------- */

/* Under the lock: hands `w` to the pool if its head job can be taken. */
void clops_fb_schedule(clops_host_worker *w)
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

/* A watched event's state (host_job.seen): not seen ending, seen complete once by
 * the watcher (which takes it at its second look), ended. */
enum { SEEN_NOT, SEEN_COMPLETE_ONCE, SEEN_ENDED };

/* The job's watched event k: `before`, then the wait list. */
static cl_event watched(const host_job *j, cl_uint k) { return k ? j->wait[k - 1] : j->before; }

/* Under the lock: `j`'s watched event k ended with `status` (a failure also for
 * an event a callback said complete: clops_fb_failed_by_now). The job is ready
 * once every one ended, or at the first failure (that execution then fails,
 * and nothing it would do waits for the rest). */
static void event_ended(host_job *j, cl_uint k, cl_int status)
{
    if (status < 0 && j->wait_status == CL_COMPLETE) j->wait_status = status, j->failed_at = k;
    if (j->seen[k] != SEEN_ENDED) j->seen[k] = SEEN_ENDED, j->left--;
    if (j->ready || (j->left && j->wait_status == CL_COMPLETE)) return;
    j->ready = true;
    pending_remove(j);
    clops_fb_schedule(j->w);
}

/* A watched event completed: on the driver's thread, which must not block, so only the hand-over. */
void CL_CALLBACK clops_fb_event_ended(cl_event event, cl_int status, void *ticket)
{
    pthread_mutex_lock(&clops_fb_lock);
    host_job *j = slot_job((uintptr_t)ticket);
    for (cl_uint k = 0; j && k <= j->nwait; k++) /* an event listed twice ended twice */
        if (watched(j, k) == event) event_ended(j, k, status);
    pthread_mutex_unlock(&clops_fb_lock);
}

/* Before `j` is listed (so before it can run): the events that have failed by
 * now. PoCL 3.1 calls a callback set on an event that has ended at once, with
 * the status it was set for (CL_COMPLETE), even when the event failed; one
 * that fails later gets no callback, and the watcher sees it. */
void clops_fb_failed_by_now(host_job *j)
{
    for (cl_uint k = 0; k <= j->nwait; k++) {
        cl_int s = CL_COMPLETE;
        if (clGetEventInfo(watched(j, k), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL) != CL_SUCCESS ||
            s >= 0)
            continue;
        pthread_mutex_lock(&clops_fb_lock);
        event_ended(j, k, s);
        pthread_mutex_unlock(&clops_fb_lock);
    }
}

/* The watcher's look at every event a pending job still waits for (a pool thread
 * with nothing to run). Called and returns with the lock held; while it queries,
 * no job is freed (serve waits for `scanning` to end). */
static void watch(void)
{
    size_t n = 0;
    for (const host_job *j = g_pool.pending; j; j = j->pend_next) n += j->left;
    struct look {
        uintptr_t ticket;
        cl_event event;
        cl_uint k;
        cl_int status;
    } *looks = malloc(n * sizeof *looks + 1);
    if (!looks) return; /* the next interval tries again */
    size_t m = 0;
    for (const host_job *j = g_pool.pending; j; j = j->pend_next)
        for (cl_uint k = 0; k <= j->nwait && m < n; k++)
            if (j->seen[k] != SEEN_ENDED) looks[m++] = (struct look){j->ticket, watched(j, k), k, CL_QUEUED};
    g_pool.scanning = true;
    pthread_mutex_unlock(&clops_fb_lock);
    for (size_t i = 0; i < m; i++)
        if (clGetEventInfo(looks[i].event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof looks[i].status,
                           &looks[i].status, NULL) != CL_SUCCESS)
            looks[i].status = CL_QUEUED; /* no answer: look again later */
    pthread_mutex_lock(&clops_fb_lock);
    g_pool.scanning = false;
    pthread_cond_broadcast(&g_pool.scanned);
    bool found = false;
    for (size_t i = 0; i < m; i++) {
        host_job *j = slot_job(looks[i].ticket);
        const cl_int s = looks[i].status;
        if (!j || j->ready) continue;
        unsigned char *seen = &j->seen[looks[i].k];
        if (*seen == SEEN_ENDED) continue; /* its callback came while this thread queried */
        if (s < 0 || (s == CL_COMPLETE && *seen == SEEN_COMPLETE_ONCE)) {
            event_ended(j, looks[i].k, s);
            found = true;
        } else if (s == CL_COMPLETE) {
            *seen = SEEN_COMPLETE_ONCE;
        }
    }
    free(looks);
    g_pool.watch_ns = found ? WATCH_MIN_NS : g_pool.watch_ns * 2 > WATCH_MAX_NS ? WATCH_MAX_NS : g_pool.watch_ns * 2;
}

/* ---- the host work --------------------------------------------------------------------------- */

void clops_fb_job_free(host_job *j)
{
    const cl_mem m[3] = {j->b.input, j->b.indices, j->b.output};
    for (int i = 0; i < 3; i++)
        if (m[i]) clReleaseMemObject(m[i]);
    for (cl_uint i = 0; i < j->nwait; i++) clReleaseEvent(j->wait[i]);
    free(j->wait);
    if (j->before) clReleaseEvent(j->before);
    if (j->done) clReleaseEvent(j->done);
    if (j->after) clReleaseEvent(j->after); /* after `done`: set by now, or never listed */
    clops_fb_flush_drop(j->flush); /* only on the caller's thread: the pool posts it */
    free(j);
}

/* The shared queue of `cl` and `device` in *out, one more user. */
clops_status clops_fb_queue_get(cl_context cl, cl_device_id device, host_queue **out)
{
    pthread_mutex_lock(&clops_fb_lock);
    for (host_queue *h = g_pool.queues; h; h = h->next)
        if (h->cl == cl && h->device == device) {
            h->users++;
            pthread_mutex_unlock(&clops_fb_lock);
            *out = h;
            return CLOPS_SUCCESS;
        }
    pthread_mutex_unlock(&clops_fb_lock);
    host_queue *h = calloc(1, sizeof *h);
    if (!h) return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "the host fallback's queue record");
    cl_int err = CL_SUCCESS;
    cl_command_queue q = clCreateCommandQueue(cl, device, 0, &err);
    if (!q) {
        free(h);
        return clops_fail_cl(err, "clCreateCommandQueue(host fallback)");
    }
    /* Never written, so never migrated (a buffer with a host copy would be, at its first read). */
    cl_mem probe = clCreateBuffer(cl, CL_MEM_READ_ONLY, 64, NULL, &err);
    if (!probe) {
        clReleaseCommandQueue(q), free(h);
        return clops_fail_cl(err, "clCreateBuffer(the host fallback's probe)");
    }
    pthread_mutex_lock(&clops_fb_lock);
    host_queue *other = g_pool.queues;
    while (other && !(other->cl == cl && other->device == device)) other = other->next;
    if (other) { /* another thread made one meanwhile */
        other->users++;
    } else {
        *h = (host_queue){g_pool.queues, cl, device, q, probe, 1};
        g_pool.queues = h;
    }
    pthread_mutex_unlock(&clops_fb_lock);
    if (other) clReleaseMemObject(probe), clReleaseCommandQueue(q), free(h);
    *out = other ? other : h;
    return CLOPS_SUCCESS;
}

static void queue_put(host_queue *h)
{
    pthread_mutex_lock(&clops_fb_lock);
    const bool last = --h->users == 0;
    if (last) {
        host_queue **p = &g_pool.queues;
        while (*p != h) p = &(*p)->next;
        *p = h->next;
    }
    pthread_mutex_unlock(&clops_fb_lock);
    if (!last) return;
    clReleaseMemObject(h->probe);
    clReleaseCommandQueue(h->queue);
    free(h);
}

void clops_fb_worker_free(clops_host_worker *w)
{
    if (w->hq) queue_put(w->hq);
    pthread_cond_destroy(&w->cond);
    free(w);
}

/* The execution behind a failed event: which one, and its status. */
static clops_status wait_failed(const clops_host_worker *w, const host_job *j)
{
    char label[256];
    clops_status_label(j->wait_status, label, sizeof label);
    if (j->failed_at)
        return clops_fail(CLOPS_ERROR_DEVICE_LOST, "device \"%s\": event %u of the host fallback's wait list failed "
                          "with execution status %s; that execution did not run and its output was not written",
                          w->device, (unsigned)j->failed_at - 1, label);
    return clops_fail(CLOPS_ERROR_DEVICE_LOST, "device \"%s\": a command before the host fallback on its in-order "
                      "queue failed (the fallback's first command then ended with execution status %s); that "
                      "execution did not run and its output was not written", w->device, label);
}

/* One job: its status; *bad the bad indices it skipped. */
static clops_status run_job(clops_host_worker *w, host_job *j, uint64_t *bad)
{
    if (j->wait_status < 0) return wait_failed(w, j);
    cl_command_queue q = w->hq->queue;
    clops_host_buffers mapped = {0};
    clops_status st = clops_map_buffers(q, &w->params, &j->b, 0, NULL, &mapped); /* all ended: no wait list */
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
    pthread_mutex_unlock(&clops_fb_lock);
    uint64_t bad = 0;
    const clops_status st = cancelled ? CLOPS_SUCCESS : run_job(w, j, &bad);
    pthread_mutex_lock(&clops_fb_lock);
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
    clops_fb_schedule(w); /* to the FIFO's end: operators with ready jobs take turns */
    const bool free_w = w->owner_gone && !w->head;
    pending_remove(j); /* a given-up job may still be pending */
    clops_fb_slot_give(j); /* a late callback finds nothing */
    while (g_pool.scanning) pthread_cond_wait(&g_pool.scanned, &clops_fb_lock); /* it may query `before` */
    pthread_mutex_unlock(&clops_fb_lock);
    /* No lock held: a driver may run callbacks inside. */
    clSetUserEventStatus(j->done, CL_COMPLETE); /* fails only for an invalid event */
    /* The caller's queue flushed after that (a driver may hold `after` until
     * then), by the flusher: never here (fallback_flush.c). */
    clops_fb_flush_post(j->flush);
    j->flush = NULL;
    clops_fb_job_free(j);
    if (free_w) clops_fb_worker_free(w); /* the owner is gone and the list empty: nobody else refers to it */
    pthread_mutex_lock(&clops_fb_lock);
}

static void *pool_thread(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&clops_fb_lock);
    for (;;) {
        g_pool.idle++;
        while (!g_pool.head) {
            if (g_pool.pending && !g_pool.watching) { /* this thread watches until it has a job */
                g_pool.watching = true;
                struct timespec t;
                clock_gettime(CLOCK_REALTIME, &t);
                t.tv_nsec += g_pool.watch_ns;
                if (t.tv_nsec >= 1000000000L) t.tv_sec++, t.tv_nsec -= 1000000000L;
                const int e = pthread_cond_timedwait(&g_pool.work, &clops_fb_lock, &t);
                if (e == ETIMEDOUT && g_pool.pending) watch();
                g_pool.watching = false;
            } else {
                pthread_cond_wait(&g_pool.work, &clops_fb_lock);
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

clops_status clops_fb_pool_grow(void)
{
    if (g_pool.idle > 0 || g_pool.threads >= CLOPS_FB_POOL_THREADS) return CLOPS_SUCCESS;
    pthread_t t;
    const clops_status st = clops_fb_thread_start(pool_thread, false, "pool", &t);
    if (st == CLOPS_SUCCESS) g_pool.threads++;
    return st == CLOPS_SUCCESS || g_pool.threads == 0 ? st : CLOPS_SUCCESS; /* a pool with threads goes on */
}

/* Under the lock: refuses an operator made before this process forked. */
clops_status clops_fb_check_generation(const clops_host_worker *w)
{
    if (!clops_fb_forked(w)) return CLOPS_SUCCESS;
    return clops_fail(CLOPS_ERROR_DEVICE_LOST, "device \"%s\": this operator's host fallback was used before the "
                      "process forked, and its work cannot run in the child; create contexts and operators "
                      "after fork (or use the spawn start method)", w->device);
}

bool clops_fb_forked(const clops_host_worker *w) { return w->generation != g_pool.generation; }

unsigned clops_fb_generation(void) { return g_pool.generation; }

void clops_fb_pending_add(host_job *j)
{
    j->pending = true;
    j->pend_prev = NULL;
    j->pend_next = g_pool.pending;
    if (g_pool.pending) g_pool.pending->pend_prev = j;
    g_pool.pending = j;
    g_pool.npending++;
    if (!g_pool.watching) pthread_cond_signal(&g_pool.work);
}
