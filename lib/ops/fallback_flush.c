/* fallback_flush.c - the host fallback's flusher, and how its threads start.
 *
 * A fallback execution's `after` (fallback.c) waits on the caller's queue for
 * the user event `done`, which a pool thread completes once the host work is
 * written back. A driver may hold a command behind a user event until its queue
 * is flushed after clSetUserEventStatus (issue 38, the first hypothesis for the
 * hang on NVIDIA's driver); then `after` would wait for a flush that the caller
 * may never make (its clFinish or clWaitForEvents flushes when it begins, which
 * may be before `done` is set). So every `done` the pool completes is followed by a
 * clFlush of the caller's queue - on this one thread per process, never on a
 * pool thread: rusticl's clFinish holds its queue's lock while it waits, so a
 * clFlush (or a clReleaseCommandQueue, which flushes) of that queue from
 * another thread waits for the clFinish, which may wait for the pool.
 *
 * The flusher may block in clFlush for as long as such a clFinish lasts; that
 * is no deadlock because nothing waits for the flusher: the pool hands it a
 * request under the flusher's own lock (a leaf lock, never held across an
 * OpenCL call) and goes on, and the caller's clFinish waits only for the pool.
 * Each request holds its own reference to the queue, taken on the caller's
 * thread by the execute that enqueued `after` and released here after the
 * flush, so a queue released by the caller (its context freed) is flushed
 * while still alive, and its last release - which flushes too - happens here,
 * not on a pool thread. Requests are kept in posting order; a batch flushes a
 * queue once per run of requests for it (its references are all held until
 * the batch's flushes are done, so two requests with the same pointer are the
 * same queue).
 *
 * Not on Mesa's rusticl (clops_fb_flush_wanted): there a clFlush from another
 * thread makes the caller's clFinish, or a blocking read, on the same queue
 * return before its commands completed (Mesa 22.3: a flush moves the pending
 * commands to the queue's worker, and a clFinish waits only for those it moved
 * itself; a plain program, one thread reading 64 buffers back with blocking
 * reads and clFinish, another calling clFlush in a loop: 1,177 of 12,800
 * blocking reads and 2,657 of 12,800 clFinish calls returned early; none on
 * PoCL, none without the second thread). clops's own test of 1,000 operators
 * read stale outputs there. rusticl needs no such flush: a command behind a
 * user event runs once the event is set, flushed before or not. Nor on
 * Oclgrind: its clFlush runs the queue's commands to the end on the calling
 * thread (a clFinish), so it would run the caller's commands on the flusher,
 * beside the caller's own clFinish; there a command runs in the caller's next
 * flush or finish, whenever its events were set.
 *
 * The flusher starts with the first fallback execution (clops_fb_flusher_start),
 * is stopped and joined at process exit (a destructor: it flushes what was
 * posted and ends; libclops is linked with -z nodelete, so dlclose neither
 * unmaps it nor runs the destructor while work may be pending: R1 in
 * notes/fallback.md), and does not exist in a forked child: the child's handler
 * forgets the parent's thread and requests (leaked; the driver's threads are
 * gone there), and a new one starts only if the child executes. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "ops/fallback.h"

/* How long process exit waits for the flusher to end (it may be in a clFlush
 * behind a caller's clFinish); past that the thread is left as it is. */
#define STOP_WAIT_S 5

struct clops_fb_flush {
    struct clops_fb_flush *next;
    cl_command_queue queue; /* retained */
};

static struct {
    pthread_mutex_t lock;        /* a leaf: never held across an OpenCL call or another lock */
    pthread_cond_t work, ended;  /* a request or the stop; the thread ended (CLOCK_MONOTONIC) */
    clops_fb_flush *head, *tail; /* posted, not yet flushed */
    pthread_t thread;
    bool running, stop;
} g_fl = {.lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER};

static pthread_once_t g_fl_once = PTHREAD_ONCE_INIT;

static void fl_prepare(void) { pthread_mutex_lock(&g_fl.lock); }
static void fl_parent(void) { pthread_mutex_unlock(&g_fl.lock); }

/* In the child: no flusher thread; the parent's requests are the parent's. */
static void fl_child(void)
{
    pthread_cond_init(&g_fl.work, NULL);
    g_fl.head = g_fl.tail = NULL;
    g_fl.running = false;
    pthread_mutex_unlock(&g_fl.lock);
}

static void fl_init(void)
{
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) == 0) {
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&g_fl.ended, &attr);
        pthread_condattr_destroy(&attr);
    } else {
        pthread_cond_init(&g_fl.ended, NULL);
    }
    pthread_atfork(fl_prepare, fl_parent, fl_child);
}

bool clops_fb_flush_wanted(const char *platform_name)
{
    return strcmp(platform_name, "rusticl") != 0 && strcmp(platform_name, "Oclgrind") != 0;
}

clops_status clops_fb_flush_new(cl_command_queue queue, clops_fb_flush **out)
{
    *out = NULL;
    clops_fb_flush *f = malloc(sizeof *f);
    if (!f) return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "the host fallback's flush request");
    const cl_int err = clRetainCommandQueue(queue);
    if (err != CL_SUCCESS) {
        free(f);
        return clops_fail_cl(err, "clRetainCommandQueue(host fallback)");
    }
    *f = (clops_fb_flush){NULL, queue};
    *out = f;
    return CLOPS_SUCCESS;
}

void clops_fb_flush_drop(clops_fb_flush *f)
{
    if (!f) return;
    clReleaseCommandQueue(f->queue);
    free(f);
}

void clops_fb_flush_post(clops_fb_flush *f)
{
    if (!f) return; /* none wanted */
    pthread_mutex_lock(&g_fl.lock);
    f->next = NULL;
    if (g_fl.tail) g_fl.tail->next = f;
    else g_fl.head = f;
    g_fl.tail = f;
    pthread_cond_signal(&g_fl.work);
    pthread_mutex_unlock(&g_fl.lock); /* after a stop nobody takes it: the process is ending */
}

/* One batch, in posting order: every queue flushed, then every reference released. */
static void flush_batch(clops_fb_flush *list)
{
    cl_command_queue last = NULL;
    for (const clops_fb_flush *f = list; f; f = f->next) {
        if (f->queue != last) clFlush(f->queue); /* a failure is the caller's to see: it has nobody to go to here */
        last = f->queue;
    }
    while (list) {
        clops_fb_flush *next = list->next;
        clops_fb_flush_drop(list); /* a last reference's release flushes too: here, not on a pool thread */
        list = next;
    }
}

static void *flusher(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&g_fl.lock);
    for (;;) {
        while (!g_fl.head && !g_fl.stop) pthread_cond_wait(&g_fl.work, &g_fl.lock);
        if (!g_fl.head) break; /* stopped, and nothing left */
        clops_fb_flush *list = g_fl.head;
        g_fl.head = g_fl.tail = NULL;
        pthread_mutex_unlock(&g_fl.lock);
        flush_batch(list);
        pthread_mutex_lock(&g_fl.lock);
    }
    g_fl.running = false;
    pthread_cond_broadcast(&g_fl.ended);
    pthread_mutex_unlock(&g_fl.lock);
    return NULL;
}

/* `e` from pthread_create for the `what` thread: the failure's status and message. */
static clops_status thread_failed(int e, const char *what)
{
    if (e != EAGAIN)
        return clops_fail(CLOPS_ERROR_INTERNAL, "cannot start the host fallback's %s thread (pthread_create "
                          "error %d)", what, e);
    struct rlimit rl;
    char limit[32] = "unknown";
    if (getrlimit(RLIMIT_NPROC, &rl) == 0) {
        if (rl.rlim_cur == RLIM_INFINITY) snprintf(limit, sizeof limit, "unlimited");
        else snprintf(limit, sizeof limit, "%llu", (unsigned long long)rl.rlim_cur);
    }
    return clops_fail(CL_OUT_OF_RESOURCES, "cannot start the host fallback's %s thread: resource temporarily "
                      "unavailable (EAGAIN): the per-user limit on processes and threads (RLIMIT_NPROC, `ulimit "
                      "-u`: %s) or the system's thread limit is reached; clops itself needs at most %d such "
                      "threads for all fallback operators (a pool of %d and one flusher)", what, limit,
                      CLOPS_FB_POOL_THREADS + 1, CLOPS_FB_POOL_THREADS);
}

clops_status clops_fb_thread_start(void *(*run)(void *), bool joinable, const char *what, pthread_t *out)
{
    /* The library's threads take no signal: they belong to the library, not the caller. */
    sigset_t all, old;
    sigfillset(&all);
    const bool masked = pthread_sigmask(SIG_SETMASK, &all, &old) == 0;
    pthread_attr_t attr;
    int e = pthread_attr_init(&attr);
    if (e == 0) {
        pthread_attr_setdetachstate(&attr, joinable ? PTHREAD_CREATE_JOINABLE : PTHREAD_CREATE_DETACHED);
        e = clops_cl.thread_create(out, &attr, run, NULL);
        pthread_attr_destroy(&attr);
    }
    if (masked) pthread_sigmask(SIG_SETMASK, &old, NULL);
    return e == 0 ? CLOPS_SUCCESS : thread_failed(e, what);
}

clops_status clops_fb_flusher_start(void)
{
    pthread_once(&g_fl_once, fl_init);
    pthread_mutex_lock(&g_fl.lock);
    clops_status st = CLOPS_SUCCESS;
    if (!g_fl.running && !g_fl.stop) {
        st = clops_fb_thread_start(flusher, true, "flusher", &g_fl.thread);
        g_fl.running = st == CLOPS_SUCCESS;
    }
    pthread_mutex_unlock(&g_fl.lock);
    return st;
}

/* Process exit (never dlclose: -z nodelete): the flusher flushes what was posted, ends, and is joined. */
__attribute__((destructor)) static void flusher_stop(void)
{
    pthread_mutex_lock(&g_fl.lock);
    g_fl.stop = true;
    if (!g_fl.running) { /* never started, or in a forked child */
        pthread_mutex_unlock(&g_fl.lock);
        return;
    }
    pthread_cond_signal(&g_fl.work);
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += STOP_WAIT_S;
    int e = 0;
    while (g_fl.running && e == 0) e = pthread_cond_timedwait(&g_fl.ended, &g_fl.lock, &until);
    const bool ended = !g_fl.running;
    pthread_mutex_unlock(&g_fl.lock);
    if (ended) pthread_join(g_fl.thread, NULL);
}
