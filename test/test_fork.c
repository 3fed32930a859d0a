/*
 * test_fork.c - a process forked after clops used an OpenCL device (issue 32, P2).
 *
 * PoCL's device threads do not survive fork(): a child that called clops on a
 * context its parent had used hung for ever in its first call (Python's fork
 * start method, PyTorch DataLoader workers). Now every call that would reach
 * OpenCL through such a context returns CLOPS_ERROR_DEVICE_LOST in the child,
 * saying what to do; freeing the operators and the context there does not call
 * the driver (nor hang); host-backend contexts, the parent's included, keep
 * working; the parent's own context is unharmed.
 *
 * A NEW context on a device in such a child (issue 38 Q2) hung the same way in
 * its first execution: once this process has reached the OpenCL driver (any
 * platform or device query), context creation on a device in a child forked
 * after that fails at once with CLOPS_ERROR_DEVICE_LOST, naming the spawn start
 * method and the host backend; listing devices and the host backend still work.
 * A child forked from a process that never touched OpenCL is an ordinary
 * process: it creates a context on the device and runs (this program exec'ed
 * afresh, so that its parent has not touched OpenCL either).
 *
 * The child reports through its exit status (0: all as expected, else the
 * number of the first check that failed) and runs under alarm(): on today's
 * main it hangs and the alarm kills it, so the test fails rather than hangs.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

#define CHILD_SECONDS 20 /* the child's alarm: far above what its calls need */

static const tc_case D2S = {"d2s float32", CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_FLOAT32, {1, 8, 3, 5}, 2,
                            CLOPS_ORDER_DEPTH_COLUMN_ROW, CLOPS_DATA_TYPE_FLOAT32, {0, 0, 0, 0}};
static const tc_case UNPOOL = {"serial float32 int64", CLOPS_OPERATOR_MAX_UNPOOLING, CLOPS_DATA_TYPE_FLOAT32,
                               {1, 3, 4, 5}, 0, CLOPS_ORDER_DEPTH_COLUMN_ROW, CLOPS_DATA_TYPE_INT64, {1, 3, 8, 10}};

static clops_context *context_with(unsigned disable, clops_cache_policy cache)
{
    clops_context_options o;
    ck_assert_int_eq(clops_context_options_init(&o, sizeof o), CLOPS_SUCCESS);
    o.disable = disable;
    o.cache = cache;
    clops_context *ctx = NULL;
    const clops_status st = clops_context_create_with_options(&o, &ctx);
    ck_assert_msg(st == CLOPS_SUCCESS && clops_context_backend(ctx) == CLOPS_BACKEND_OPENCL, "context: %s (%s)",
                  clops_status_name(st), clops_last_error_message());
    return ctx;
}

static clops_operator *create(clops_context *ctx, const tc_prepared *p, const char *what)
{
    clops_operator *op = NULL;
    const clops_status st = clops_operator_create(ctx, &p->desc, &op);
    ck_assert_msg(st == CLOPS_SUCCESS, "%s: create: %s (%s)", what, clops_status_name(st), clops_last_error_message());
    return op;
}

/* execute_host in the parent, right: the device (and the fallback's worker) in use before fork. */
static void run_right(clops_operator *op, const tc_prepared *p, const char *what)
{
    void *got = tc_malloc(p->bufs.out_bytes);
    memcpy(got, p->sentinel, p->bufs.out_bytes);
    const clops_status st = tc_run_execute_host(op, &p->bufs, got);
    ck_assert_msg(st == CLOPS_SUCCESS, "%s: execute_host: %s (%s)", what, clops_status_name(st),
                  clops_last_error_message());
    tc_check_bytes(got, p->want, p->bufs.out_bytes, p->esize, p->def->name, what);
    free(got);
}

/* A new operator for `p` on `ctx`, run right (execute_host) and freed. */
static void create_run_free(clops_context *ctx, const tc_prepared *p, const char *what)
{
    clops_operator *op = create(ctx, p, what);
    run_right(op, p, what);
    clops_operator_free(op);
}

/* In the child: CLOPS_ERROR_DEVICE_LOST, saying it forked and what to do. */
static bool refused(clops_status st)
{
    const char *msg = clops_last_error_message();
    return st == CLOPS_ERROR_DEVICE_LOST && strstr(msg, "forked") && strstr(msg, "create contexts after fork") &&
           strstr(msg, "spawn");
}

/* The child's checks; its exit status is 0 or the first failed check's number. */
static int child(clops_context *ctx, clops_operator *op, clops_context *fb_ctx, clops_operator *fb_op,
                 clops_context *host_ctx, clops_operator *host_op, const tc_prepared *p, const tc_prepared *u)
{
    signal(SIGALRM, SIG_DFL); /* Check's handler would SIGKILL the whole process group */
    alarm(CHILD_SECONDS);
    void *got = malloc(p->bufs.out_bytes);
    if (!got) return 100;
    /* The parent's device context: refused, at once. */
    if (!refused(tc_run_execute_host(op, &p->bufs, got))) return 1;
    if (!refused(clops_operator_last_status(op))) return 2;
    clops_operator *op2 = NULL;
    if (!refused(clops_operator_create(ctx, &u->desc, &op2)) || op2) return 3;
    if (!refused(clops_operator_create(ctx, &p->desc, &op2)) || op2) return 4;
    /* A fallback operator (host work over cl_mem, behind the parent's worker) on cl_mem buffers. */
    cl_mem none = NULL;
    const clops_buffers b = {none, none, none};
    if (!refused(clops_operator_execute(fb_op, &b, 0, NULL, NULL))) return 5;
    if (!refused(tc_run_execute_host(fb_op, &p->bufs, got))) return 6;
    if (!refused(clops_operator_last_status(fb_op))) return 7;
    /* Freeing them calls no driver: no hang. */
    clops_operator_free(op);
    clops_operator_free(fb_op);
    clops_context_free(ctx);
    clops_context_free(fb_ctx);
    /* The parent's host context, and a new one: they work. */
    memcpy(got, p->sentinel, p->bufs.out_bytes);
    if (tc_run_execute_host(host_op, &p->bufs, got) != CLOPS_SUCCESS) return 8;
    if (memcmp(got, p->want, p->bufs.out_bytes) != 0) return 9;
    clops_operator_free(host_op);
    clops_context_free(host_ctx);
    clops_context *h = NULL;
    clops_operator *hop = NULL;
    if (clops_context_create_host(&h) != CLOPS_SUCCESS || clops_operator_create(h, &u->desc, &hop) != CLOPS_SUCCESS)
        return 10;
    void *ugot = malloc(u->bufs.out_bytes);
    if (!ugot) return 100;
    memcpy(ugot, u->sentinel, u->bufs.out_bytes);
    if (tc_run_execute_host(hop, &u->bufs, ugot) != CLOPS_SUCCESS) return 11;
    if (memcmp(ugot, u->want, u->bufs.out_bytes) != 0) return 12;
    clops_operator_free(hop);
    clops_context_free(h);
    free(ugot);
    free(got);
    return 0;
}

/* Waits for child `pid`, which must have exited 0 (else the number of its failed check in `fn`). */
static void expect_child_passed(pid_t pid, const char *fn)
{
    int status = 0;
    ck_assert(waitpid(pid, &status, 0) == pid);
    ck_assert_msg(!WIFSIGNALED(status), "the child was killed by signal %d%s", WTERMSIG(status),
                  WTERMSIG(status) == SIGALRM ? " (its alarm: a call hung after fork)" : "");
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's check %d failed (see %s() in test_fork.c)",
                  WEXITSTATUS(status), fn);
}

START_TEST(test_forked_child_refuses_and_frees)
{
    tc_prepared p, u;
    ck_assert_int_eq(tc_prepare(&p, &D2S, tc_seed_of(D2S.name)), 0);
    ck_assert_int_eq(tc_prepare(&u, &UNPOOL, tc_seed_of(UNPOOL.name)), 0);
    clops_context *ctx = context_with(0, CLOPS_CACHE_POLICY_READ_WRITE);
    clops_operator *op = create(ctx, &p, "device operator");
    run_right(op, &p, "device operator, before fork");
    /* No compiler, no cache: the operator runs on the host over cl_mem (a worker thread). */
    clops_context *fb_ctx = context_with(CLOPS_CAPABILITY_COMPILER, CLOPS_CACHE_POLICY_OFF);
    clops_operator *fb_op = create(fb_ctx, &p, "fallback operator");
    clops_operator_info info;
    ck_assert_int_eq(clops_operator_get_info(fb_op, &info), CLOPS_SUCCESS);
    ck_assert_msg(info.backend == CLOPS_BACKEND_HOST, "without a compiler the operator should fall back");
    {
        cl_context cl = clops_context_cl_context(fb_ctx);
        cl_command_queue q = clops_context_queue(fb_ctx);
        cl_int err;
        cl_mem in = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, p.bufs.in_bytes, p.in, &err);
        cl_mem out = clCreateBuffer(cl, CL_MEM_READ_WRITE, p.bufs.out_bytes, NULL, &err);
        ck_assert(in && out);
        const clops_buffers b = {in, NULL, out};
        cl_event done = NULL;
        clops_status st = clops_operator_execute(fb_op, &b, 0, NULL, &done);
        ck_assert_msg(st == CLOPS_SUCCESS, "fallback execute: %s (%s)", clops_status_name(st),
                      clops_last_error_message());
        ck_assert_int_eq(clWaitForEvents(1, &done), CL_SUCCESS);
        st = clops_operator_last_status(fb_op);
        ck_assert_msg(st == CLOPS_SUCCESS, "fallback last_status: %s (%s)", clops_status_name(st),
                      clops_last_error_message());
        void *got = tc_malloc(p.bufs.out_bytes);
        ck_assert_int_eq(clEnqueueReadBuffer(q, out, CL_TRUE, 0, p.bufs.out_bytes, got, 0, NULL, NULL), CL_SUCCESS);
        tc_check_bytes(got, p.want, p.bufs.out_bytes, p.esize, D2S.name, "fallback before fork");
        free(got);
        clReleaseEvent(done);
        clReleaseMemObject(in);
        clReleaseMemObject(out);
    }
    clops_context *host_ctx = NULL;
    ck_assert_int_eq(clops_context_create_host(&host_ctx), CLOPS_SUCCESS);
    clops_operator *host_op = create(host_ctx, &p, "host operator");
    run_right(host_op, &p, "host operator, before fork");

    fflush(NULL);
    const pid_t pid = fork();
    ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) _exit(child(ctx, op, fb_ctx, fb_op, host_ctx, host_op, &p, &u)); /* no atexit handlers */
    expect_child_passed(pid, "child");

    /* The parent goes on. */
    run_right(op, &p, "device operator, after the child");
    create_run_free(ctx, &u, "a new operator in the parent");
    clops_operator_free(op);
    clops_operator_free(fb_op);
    clops_operator_free(host_op);
    clops_context_free(ctx);
    clops_context_free(fb_ctx);
    clops_context_free(host_ctx);
    tc_release(&p);
    tc_release(&u);
}
END_TEST

/* The suites' device (CLOPS_TEST_DEVICE, else clops_context_create's), as a context and its index. */
static clops_context *chosen_context(unsigned *index)
{
    const char *want = getenv("CLOPS_TEST_DEVICE");
    clops_context *ctx = NULL;
    const clops_status st = want && *want ? tc_context_create_chosen(want, &ctx) : clops_context_create(&ctx);
    if (st != CLOPS_SUCCESS || clops_context_backend(ctx) != CLOPS_BACKEND_OPENCL) {
        clops_context_free(ctx);
        return NULL;
    }
    cl_device_id dev = NULL;
    clops_device_info infos[64];
    size_t count = 0;
    if (clGetCommandQueueInfo(clops_context_queue(ctx), CL_QUEUE_DEVICE, sizeof dev, &dev, NULL) != CL_SUCCESS ||
        clops_device_list(infos, 64, &count) != CLOPS_SUCCESS) {
        clops_context_free(ctx);
        return NULL;
    }
    for (size_t i = 0; i < count && i < 64; i++)
        if (infos[i].device == dev) *index = (unsigned)i;
    return ctx;
}

/* A new context on a device, in a child forked after the driver started: refused at once, saying what to do. */
static bool refused_new(clops_status st, const clops_context *made)
{
    const char *msg = clops_last_error_message();
    return st == CLOPS_ERROR_DEVICE_LOST && !made && strstr(msg, "was forked after process") &&
           strstr(msg, "spawn (or forkserver) start method") && strstr(msg, "host backend");
}

/* Runs D2S in a new host context and checks it: 0, or `fail`. */
static int host_works(const tc_prepared *p, int fail)
{
    clops_context *h = NULL;
    clops_operator *op = NULL;
    void *got = malloc(p->bufs.out_bytes);
    int rc = fail;
    if (got && clops_context_create_host(&h) == CLOPS_SUCCESS && clops_operator_create(h, &p->desc, &op) == CLOPS_SUCCESS &&
        tc_run_execute_host(op, &p->bufs, got) == CLOPS_SUCCESS && memcmp(got, p->want, p->bufs.out_bytes) == 0)
        rc = 0;
    clops_operator_free(op);
    clops_context_free(h);
    free(got);
    return rc;
}

static int new_context_child(unsigned index, clops_context *parent, const tc_prepared *p)
{
    signal(SIGALRM, SIG_DFL);
    alarm(CHILD_SECONDS);
    clops_context *c = NULL;
    if (!refused_new(clops_context_create_device(index, &c), c)) return 1;
    clops_context_options o;
    if (clops_context_options_init(&o, sizeof o) != CLOPS_SUCCESS) return 100;
    o.device = (int)index;
    if (!refused_new(clops_context_create_with_options(&o, &c), c)) return 2;
    /* the parent's cl_context and queue, wrapped anew: the same driver */
    cl_device_id dev = NULL;
    if (clGetCommandQueueInfo(clops_context_queue(parent), CL_QUEUE_DEVICE, sizeof dev, &dev, NULL) != CL_SUCCESS)
        return 101;
    if (!refused_new(clops_context_create_from_cl(clops_context_cl_context(parent), dev, clops_context_queue(parent), &c), c))
        return 3;
    size_t count = 0; /* listing the devices asks the driver nothing that hangs */
    if (clops_device_list(NULL, 0, &count) != CLOPS_SUCCESS || count <= index) return 4;
    return host_works(p, 5);
}

START_TEST(test_forked_child_new_context_refused)
{
    tc_prepared p;
    ck_assert_int_eq(tc_prepare(&p, &D2S, tc_seed_of(D2S.name)), 0);
    unsigned index = 0;
    clops_context *ctx = chosen_context(&index);
    ck_assert_msg(ctx != NULL, "no OpenCL context on the suites' device: %s", clops_last_error_message());
    clops_operator *op = create(ctx, &p, "device operator");
    run_right(op, &p, "device operator, before fork"); /* the driver's threads run in this process */
    fflush(NULL);
    const pid_t pid = fork();
    ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) _exit(new_context_child(index, ctx, &p));
    expect_child_passed(pid, "new_context_child");
    /* The parent makes new contexts on the device as before. */
    clops_context *again = NULL;
    ck_assert_int_eq(clops_context_create_device(index, &again), CLOPS_SUCCESS);
    create_run_free(again, &p, "a new context in the parent");
    clops_context_free(again);
    clops_operator_free(op);
    clops_context_free(ctx);
    tc_release(&p);
}
END_TEST

#define FRESH_ENV "CLOPS_TEST_FORK_FRESH"

/* This program run with FRESH_ENV=1: forks before anything touches OpenCL; the
 * child uses the suites' device. Exit status: the child's (0: it ran and was right). */
static int fresh_main(void)
{
    tc_prepared p;
    if (tc_prepare(&p, &D2S, tc_seed_of(D2S.name)) != 0) return 100;
    fflush(NULL);
    const pid_t pid = fork();
    if (pid < 0) return 101;
    if (pid == 0) {
        signal(SIGALRM, SIG_DFL);
        alarm(CHILD_SECONDS);
        unsigned index = 0;
        clops_context *ctx = chosen_context(&index);
        clops_operator *op = NULL;
        if (!ctx) _exit(1);
        if (clops_operator_create(ctx, &p.desc, &op) != CLOPS_SUCCESS) _exit(2);
        void *got = malloc(p.bufs.out_bytes);
        if (!got || tc_run_execute_host(op, &p.bufs, got) != CLOPS_SUCCESS) _exit(3);
        if (memcmp(got, p.want, p.bufs.out_bytes) != 0) _exit(4);
        _exit(0);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return 102;
    if (WIFSIGNALED(status)) return 110 + WTERMSIG(status) % 100;
    tc_release(&p);
    return WEXITSTATUS(status);
}

START_TEST(test_child_of_fresh_process_uses_device)
{
    fflush(NULL);
    const pid_t pid = fork();
    ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) { /* exec: a process that has not touched OpenCL */
        setenv(FRESH_ENV, "1", 1);
        execl("/proc/self/exe", "test_fork", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    ck_assert(waitpid(pid, &status, 0) == pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "a child of a process that never touched OpenCL: exit %d, signal %d (fresh_main() in test_fork.c: "
                  "1-4 the child's checks, 110+ a signal, 127 no exec)",
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
END_TEST

int main(void)
{
    if (getenv(FRESH_ENV)) return fresh_main(); /* before anything touches OpenCL */
    const int need = tc_need_devices(1, "fork after using an OpenCL device");
    if (need >= 0) return need;
    Suite *s = suite_create("fork");
    TCase *tc = tc_suite_case(s, "fork", -1);
    tcase_add_test(tc, test_forked_child_refuses_and_frees);
    tcase_add_test(tc, test_forked_child_new_context_refused);
    tcase_add_test(tc, test_child_of_fresh_process_uses_device);
    return tc_run_nofork(s);
}
