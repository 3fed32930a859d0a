/* fallback.h - the host fallback's units, shared among them only (lib/ops/fallback*.c;
 * the rest of the library sees ops.h's clops_host_* calls). Three units, each calling
 * only the ones below it:
 *   fallback.c        the operator's side: execute, last_status, release
 *   fallback_pool.c   the process-wide pool, its watcher, the shared queues, fork
 *   fallback_flush.c  the flusher thread, and how the library's threads start
 * The design is fallback.c's top comment; notes/fallback.md has its history. */
#ifndef CLOPS_OPS_FALLBACK_H
#define CLOPS_OPS_FALLBACK_H

#include <pthread.h>

#include "ops/ops.h"

/* The pool's size: the host kernels are memory-bound and short, and a pool
 * thread never waits for the caller's events, so a few threads keep up with
 * any number of operators. */
#define CLOPS_FB_POOL_THREADS 4

/* ---- the flusher (fallback_flush.c) ---------------------------------------------------------- */

/* A request to flush one caller's queue, holding its own reference to it. */
typedef struct clops_fb_flush clops_fb_flush;
/* Whether the caller's queues on a platform of that name are flushed by the
 * flusher: not on rusticl, whose clFinish a flush from another thread breaks,
 * nor on Oclgrind, whose clFlush runs the queue on the calling thread. */
bool clops_fb_flush_wanted(const char *platform_name);
/* Made by execute on the caller's thread (retains `queue`), before anything is enqueued. */
clops_status clops_fb_flush_new(cl_command_queue queue, clops_fb_flush **out);
/* The pool, after completing the job's `done`: hands the request to the flusher,
 * which flushes the queue and releases it. Never blocks, never calls OpenCL. NULL: nothing. */
void clops_fb_flush_post(clops_fb_flush *f);
/* A request never posted (execute failed): released on the caller's thread. NULL: nothing. */
void clops_fb_flush_drop(clops_fb_flush *f);
/* Starts the flusher if it is not running; fails only when it cannot start. */
clops_status clops_fb_flusher_start(void);
/* Starts one of the library's threads, `what` ("pool", "flusher"), through
 * clops_cl.thread_create with signals blocked; a failure names RLIMIT_NPROC
 * when that is the likely cause. */
clops_status clops_fb_thread_start(void *(*run)(void *), bool joinable, const char *what, pthread_t *out);

/* ---- the pool (fallback_pool.c) -------------------------------------------------------------- */

struct clops_host_worker;

/* One shared fallback queue of a cl_context and device, and its probe (under the pool's lock). */
typedef struct host_queue {
    struct host_queue *next;
    cl_context cl;
    cl_device_id device;
    cl_command_queue queue; /* retains cl */
    cl_mem probe;           /* what `before` and `after` read a byte of (fallback.c) */
    unsigned users;         /* operators' lists that use it */
} host_queue;

typedef struct host_job {
    struct host_job *next;  /* the operator's list */
    struct host_job *pend_prev, *pend_next; /* the pool's pending list, while `pending` */
    struct clops_host_worker *w;
    uint64_t seq;           /* 1, 2, ... in execute order */
    uintptr_t ticket;       /* the callbacks' argument */
    clops_buffers b;        /* those the operator uses (retained), else NULL */
    cl_event before, done;  /* retained */
    cl_event after;         /* retained until `done` is set (fallback.c's top comment says why) */
    cl_uint nwait;
    cl_event *wait;         /* the caller's wait list (retained), watched by the pool, not by `before` */
    clops_fb_flush *flush;  /* the caller's queue, flushed after `done` (posted by the pool) */
    cl_int wait_status;     /* CL_COMPLETE, or the first failure seen among `before` and the wait list */
    cl_uint failed_at;      /* that failure's event: 0 `before`, k wait[k - 1] */
    cl_uint left;           /* of those, how many have not been seen ending */
    bool ready;             /* every one ended, or one failed (a callback or the watcher) */
    bool pending;           /* in the pending list */
    unsigned char seen[];   /* per watched event (0: `before`, k: wait[k - 1]): SEEN_* (fallback_pool.c) */
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

/* The pool's lock, never held across an OpenCL call (the callback takes it on
 * the driver's thread); what else the pool keeps is fallback_pool.c's. */
extern pthread_mutex_t clops_fb_lock;

/* Once per process, before the first use: the fork handlers. */
void clops_fb_pool_init(void);
/* Under the lock: one more pool thread when none waits and the pool is not full;
 * fails only when the pool has no thread at all. */
clops_status clops_fb_pool_grow(void);
/* Under the lock: a failure for an operator whose list was made before the process forked. */
clops_status clops_fb_check_generation(const clops_host_worker *w);
/* Under the lock: whether it was (then nothing of it may be touched), and the current generation. */
bool clops_fb_forked(const clops_host_worker *w);
unsigned clops_fb_generation(void);
/* Under the lock: a ticket for `j` (in j->ticket); false without memory. */
bool clops_fb_slot_take(host_job *j);
/* Under the lock: the ticket no longer finds the job. */
void clops_fb_slot_give(const host_job *j);
/* Under the lock: `j`, just listed on its operator, is watched until it is ready. */
void clops_fb_pending_add(host_job *j);
/* Under the lock: hands `w` to the pool if its head job can be taken. */
void clops_fb_schedule(clops_host_worker *w);
/* The callback on `before` and on each event of the wait list; its argument is the job's ticket. */
void CL_CALLBACK clops_fb_event_ended(cl_event event, cl_int status, void *ticket);
/* After the callbacks are set, before the job is listed: the events that have failed by now. */
void clops_fb_failed_by_now(host_job *j);
/* The shared queue of `cl` and `device` in *out, one more user. */
clops_status clops_fb_queue_get(cl_context cl, cl_device_id device, host_queue **out);
/* Releases what a job holds (a flush request not posted included) and frees it. */
void clops_fb_job_free(host_job *j);
/* Frees an operator's list (its shared queue one user less). */
void clops_fb_worker_free(clops_host_worker *w);

#endif
