/*
 * test_fallback_pool.c - the host fallback's one pool of threads (issue 32, P1 and P4).
 *
 * The operators and outputs are fallback_fixture.h's. A failed event before an
 * execution is test_fallback_failed.c's.
 *
 * - A pool thread that cannot start (EAGAIN, as at RLIMIT_NPROC, through the
 *   seam's thread_create): the execute fails with CL_OUT_OF_RESOURCES and a
 *   message naming RLIMIT_NPROC, not "out of host memory", and writes nothing.
 *   It runs first: only a pool without threads starts one at every execute.
 * - 10,000 fallback operators alive at once, executed back to back on one
 *   in-order queue: every output right, and the process's threads (entries of
 *   /proc/self/task) never more than before plus the pool's 4 and a margin.
 *   Today's main starts one polling thread per operator (10,000 threads, and
 *   minutes of polling).
 * - 64 operators executed 8 times each, interleaved, on an out-of-order queue,
 *   each operator's executions into one output: the first behind a gate set
 *   later, the others behind a complete event. No buffer of theirs is mapped
 *   (read or written) before the gate: each map is logged, through the seam,
 *   with whether the gate had been set then, so a map before it fails whenever
 *   it came; and none had come by the time a later ungated execution (a probe
 *   behind the same complete event) finished, which is the point the test waits
 *   for instead of a fixed time. After the gate each operator's inputs were
 *   mapped in execute order and its output holds its last execution's result.
 * - A last_status that times out behind an unset gate gives the executions up
 *   (while their callbacks have not come); nothing is written after the gate,
 *   also with the operator and context freed before it.
 * - fork: in a child of a process whose fallback operator ran, execute and
 *   last_status on that operator return CLOPS_ERROR_DEVICE_LOST instead of
 *   hanging (the child is killed by an alarm if they hang).
 * No timing is asserted, and none is waited for as evidence.
 *
 * The out-of-order queue cases are their own test case (ctest entry
 * test_fallback_pool:out_of_order): on a device without out-of-order queues
 * (rusticl 22.3) they report a skip (tc_skip), and the entry exits 77, SKIPPED.
 */
#define _POSIX_C_SOURCE 200809L
#define CLOPS_CL_API_NO_MACROS /* this file calls the real OpenCL by name */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fallback_fixture.h"

#define POOL_THREADS 5 /* lib/ops/fallback.h: the pool's 4 and the flusher */
#define MARGIN 4       /* threads the driver may start meanwhile */

static int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    ck_assert_msg(d != NULL, "/proc/self/task: %s", strerror(errno));
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

/* n fallback operators on a new in-order queue's context, each with its input
 * (tagged with its number) and output buffer. */
static void many_operators(int n, cl_command_queue *q, clops_context **ctx, clops_operator ***ops, cl_mem **in,
                           cl_mem **out)
{
    cl_int err;
    *q = clCreateCommandQueue(g_cl, g_dev, 0, &err);
    ck_assert(*q && err == CL_SUCCESS);
    *ctx = fallback_around(*q);
    *ops = tc_malloc((size_t)n * sizeof **ops);
    *in = tc_malloc((size_t)n * sizeof **in), *out = tc_malloc((size_t)n * sizeof **out);
    for (int i = 0; i < n; i++)
        (*ops)[i] = fallback_op(*ctx), (*in)[i] = input_with((uint32_t)i), (*out)[i] = output_new();
}

/* ---- a pool thread that cannot start ---------------------------------------------------------- */

static int refuse_thread(pthread_t *t, const pthread_attr_t *attr, void *(*run)(void *), void *arg)
{
    (void)t, (void)attr, (void)run, (void)arg;
    return EAGAIN;
}

START_TEST(test_thread_limit_named)
{
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(g_cl, g_dev, 0, &err);
    ck_assert(q && err == CL_SUCCESS);
    clops_context *ctx = fallback_around(q);
    clops_operator *op = fallback_op(ctx);
    cl_mem in = input_with(7), out = output_new();
    const clops_buffers b = {in, NULL, out};
    clops_cl.thread_create = refuse_thread;
    cl_event ev = (cl_event)&ev;
    const clops_status st = clops_operator_execute(op, &b, 0, NULL, &ev);
    clops_cl.thread_create = clops_cl_real.thread_create;
    const char *msg = clops_last_error_message();
    ck_assert_msg(st == CL_OUT_OF_RESOURCES && strstr(msg, "RLIMIT_NPROC") && strstr(msg, "EAGAIN"),
                  "execute with no pool thread able to start: %s (%s), want CL_OUT_OF_RESOURCES naming "
                  "RLIMIT_NPROC (this test runs first in its suite: a pool that has a thread goes on)",
                  clops_status_name(st), msg);
    ck_assert_msg(ev == NULL, "a failed execute returned an event");
    ck_assert_int_eq(clFinish(q), CL_SUCCESS);
    expect_output(q, out, -1, "the refused execution", 0);
    clReleaseEvent(execute(op, in, out, 0, NULL)); /* the next one starts its thread */
    ck_assert_int_eq(clops_operator_last_status(op), CLOPS_SUCCESS);
    expect_output(q, out, 7, "the execution after it", 1);
    clops_operator_free(op);
    clops_context_free(ctx);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseCommandQueue(q);
}
END_TEST

/* ---- 10,000 operators back to back ------------------------------------------------------------ */

START_TEST(test_ten_thousand_operators)
{
    enum { N = 10000 };
    cl_command_queue q;
    clops_context *ctx;
    clops_operator **ops;
    cl_mem *in, *out;
    many_operators(N, &q, &ctx, &ops, &in, &out);
    const int before = thread_count();
    int most = before;
    for (int i = 0; i < N; i++) {
        const clops_buffers b = {in[i], NULL, out[i]};
        const clops_status st = clops_operator_execute(ops[i], &b, 0, NULL, NULL);
        ck_assert_msg(st == CLOPS_SUCCESS, "execute %d: %s (%s)", i, clops_status_name(st), clops_last_error_message());
        if (i % 500 == 499) {
            const int t = thread_count();
            most = t > most ? t : most;
            ck_assert_msg(t <= before + POOL_THREADS + MARGIN, "after %d executes on as many operators: %d threads, "
                          "%d before (a thread per operator?)", i + 1, t, before);
        }
    }
    ck_assert_int_eq(clFinish(q), CL_SUCCESS);
    for (int i = 0; i < N; i++) expect_output(q, out[i], i, "operator", i);
    for (int i = 0; i < N; i += 97) ck_assert_int_eq(clops_operator_last_status(ops[i]), CLOPS_SUCCESS);
    for (int i = 0; i < N; i++) clops_operator_free(ops[i]), clReleaseMemObject(in[i]), clReleaseMemObject(out[i]);
    const int after = thread_count();
    ck_assert_msg(after <= before + POOL_THREADS + MARGIN, "after the operators were freed: %d threads, %d before",
                  after, before);
    fprintf(stderr, "10,000 fallback operators: threads %d before, at most %d while executing, %d after\n", before,
            most, after);
    free(ops), free(in), free(out);
    clops_context_free(ctx);
    clReleaseCommandQueue(q);
}
END_TEST

/* ---- FIFO per operator, many operators interleaved -------------------------------------------- */

enum { OPS = 64, RUNS = 8, LOG = 2 * OPS * RUNS + 64 };
static pthread_mutex_t g_seam = PTHREAD_MUTEX_INITIALIZER; /* the pool threads map */
static cl_mem g_mapped[LOG];                               /* the buffers mapped, in order */
static bool g_mapped_gated[LOG];                          /* ... whether the gate was still unset then */
static int g_nmapped, g_gate_set;                         /* g_gate_set: atomic, set just before the gate */

static void *CL_API_CALL watched_map(cl_command_queue q, cl_mem m, cl_bool blocking, cl_map_flags flags, size_t off,
                                     size_t size, cl_uint n, const cl_event *wait, cl_event *ev, cl_int *err)
{
    pthread_mutex_lock(&g_seam);
    if (g_nmapped < LOG) {
        g_mapped_gated[g_nmapped] = !__atomic_load_n(&g_gate_set, __ATOMIC_SEQ_CST);
        g_mapped[g_nmapped++] = m;
    }
    pthread_mutex_unlock(&g_seam);
    return clops_cl_real.clEnqueueMapBuffer(q, m, blocking, flags, off, size, n, wait, ev, err);
}

static int first_map(cl_mem m)
{
    pthread_mutex_lock(&g_seam);
    int i = 0;
    while (i < g_nmapped && g_mapped[i] != m) i++;
    if (i == g_nmapped) i = -1;
    pthread_mutex_unlock(&g_seam);
    return i;
}

/* Whether `m` is one of the n buffers of `set`. */
static bool among(cl_mem m, const cl_mem *set, int n)
{
    for (int i = 0; i < n; i++)
        if (set[i] == m) return true;
    return false;
}

START_TEST(test_fifo_per_operator_interleaved)
{
    if (!out_of_order_queues("test_fifo_per_operator_interleaved")) {
        tc_skip("test_fifo_per_operator_interleaved", "the device has no out-of-order queues");
        return;
    }
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(g_cl, g_dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
    ck_assert_msg(q && err == CL_SUCCESS, "out-of-order queue: %d", (int)err);
    cl_command_queue side = clCreateCommandQueue(g_cl, g_dev, 0, &err);
    ck_assert(side && err == CL_SUCCESS);
    clops_context *ctx = fallback_around(q);
    clops_operator *ops[OPS];
    cl_mem out[OPS], in[OPS][RUNS];
    cl_event ev[OPS][RUNS];
    for (int i = 0; i < OPS; i++) {
        ops[i] = fallback_op(ctx), out[i] = output_new();
        for (int k = 0; k < RUNS; k++) in[i][k] = input_with((uint32_t)(i * RUNS + k));
    }
    cl_event gate = clCreateUserEvent(g_cl, &err), ready = clCreateUserEvent(g_cl, &err);
    ck_assert(gate && ready);
    ck_assert_int_eq(clSetUserEventStatus(ready, CL_COMPLETE), CL_SUCCESS);
    /* The probe: one more operator, behind the complete event only, executed after them all. */
    clops_operator *probe = fallback_op(ctx);
    cl_mem probe_in = input_with(OPS * RUNS), probe_out = output_new();
    g_nmapped = 0;
    g_gate_set = 0;
    clops_cl.clEnqueueMapBuffer = watched_map;
    for (int k = 0; k < RUNS; k++) /* round robin: operator 0's run k, operator 1's run k, ... */
        for (int i = 0; i < OPS; i++) ev[i][k] = execute(ops[i], in[i][k], out[i], 1, k == 0 ? &gate : &ready);
    cl_event probed = execute(probe, probe_in, probe_out, 1, &ready);
    ck_assert_int_eq(clWaitForEvents(1, &probed), CL_SUCCESS);
    clReleaseEvent(probed);
    ck_assert_int_eq(clops_operator_last_status(probe), CLOPS_SUCCESS);
    expect_output(side, probe_out, OPS * RUNS, "the probe behind the complete event", 0);
    ck_assert_msg(first_map(probe_in) >= 0, "the probe ran without mapping its input (the seam saw no map)");
    for (int i = 0; i < OPS; i++) {
        for (int k = 0; k < RUNS; k++)
            ck_assert_msg(first_map(in[i][k]) < 0, "operator %d: run %d was mapped before run 0's gate was set (by the "
                          "time a later execution behind a complete event had finished)", i, k);
        expect_output(side, out[i], -1, "before the gate, operator", i);
    }
    __atomic_store_n(&g_gate_set, 1, __ATOMIC_SEQ_CST);
    ck_assert_int_eq(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    for (int i = 0; i < OPS; i++) {
        ck_assert_int_eq(clWaitForEvents(RUNS, ev[i]), CL_SUCCESS);
        for (int k = 0; k < RUNS; k++) clReleaseEvent(ev[i][k]);
        ck_assert_int_eq(clops_operator_last_status(ops[i]), CLOPS_SUCCESS);
    }
    clops_cl.clEnqueueMapBuffer = clops_cl_real.clEnqueueMapBuffer;
    ck_assert_msg(g_nmapped < LOG, "%d maps logged: more than this test's (another test's work mapped too?)", g_nmapped);
    for (int n = 0; n < g_nmapped; n++) /* every map of the gated operators' buffers, whenever it came */
        ck_assert_msg(!g_mapped_gated[n] || !(among(g_mapped[n], &in[0][0], OPS * RUNS) || among(g_mapped[n], out, OPS)),
                      "map %d of %d: a gated operator's buffer was mapped before the gate was set", n, g_nmapped);
    for (int i = 0; i < OPS; i++) {
        int prev = -1;
        for (int k = 0; k < RUNS; k++) {
            const int at = first_map(in[i][k]);
            ck_assert_msg(at > prev, "operator %d: run %d mapped at %d, after run %d's at %d (not in execute order)",
                          i, k, at, k - 1, prev);
            prev = at;
        }
        expect_output(side, out[i], i * RUNS + RUNS - 1, "the last run's output, operator", i);
    }
    for (int i = 0; i < OPS; i++) {
        clops_operator_free(ops[i]);
        clReleaseMemObject(out[i]);
        for (int k = 0; k < RUNS; k++) clReleaseMemObject(in[i][k]);
    }
    clops_operator_free(probe);
    clReleaseMemObject(probe_in), clReleaseMemObject(probe_out);
    clReleaseEvent(gate), clReleaseEvent(ready);
    clops_context_free(ctx);
    clReleaseCommandQueue(side);
    clReleaseCommandQueue(q);
}
END_TEST

/* ---- given up behind a gate ------------------------------------------------------------------ */

/* A last_status that times out gives up the executions not started; behind a
 * gate never set before then, each is given up while its callback has not come
 * (the job stays a husk until the gate is set). After the gate their events
 * complete and their outputs are untouched; the timeout is reported again, and a
 * new execution runs clean. `free_early`: the operator and context freed before the gate. */
static void given_up(int free_early)
{
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(g_cl, g_dev, 0, &err), side = clCreateCommandQueue(g_cl, g_dev, 0, &err);
    ck_assert(q && side);
    clops_context *ctx = fallback_timed(q, 0.1);
    clops_operator *op = fallback_op(ctx);
    cl_mem in = input_with(5), out[2] = {output_new(), output_new()};
    cl_event gate = clCreateUserEvent(g_cl, &err);
    ck_assert(gate && err == CL_SUCCESS);
    cl_event e0 = execute(op, in, out[0], 1, &gate), e1 = execute(op, in, out[1], 0, NULL);
    clops_status st = clops_operator_last_status(op);
    ck_assert_msg(st == CLOPS_ERROR_DEVICE_TIMEOUT && strstr(clops_last_error_message(), "2 execution(s)"),
                  "last_status behind an unset gate: %s (%s)", clops_status_name(st), clops_last_error_message());
    if (free_early) {
        clops_operator_free(op);
        clops_context_free(ctx);
        op = NULL, ctx = NULL;
    }
    ck_assert_int_eq(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    /* The events are markers on the in-order queue: they complete after the gate. */
    ck_assert_int_eq(clWaitForEvents(1, &e0), CL_SUCCESS);
    ck_assert_int_eq(clWaitForEvents(1, &e1), CL_SUCCESS);
    ck_assert_int_eq(clFinish(q), CL_SUCCESS);
    for (int k = 0; k < 2; k++) expect_output(side, out[k], -1, "a given-up execution", k);
    if (op) {
        st = clops_operator_last_status(op);
        ck_assert_msg(st == CLOPS_ERROR_DEVICE_TIMEOUT, "asked again: %s", clops_status_name(st));
        clReleaseEvent(execute(op, in, out[0], 0, NULL));
        st = clops_operator_last_status(op);
        ck_assert_msg(st == CLOPS_SUCCESS, "a new execution: %s (%s)", clops_status_name(st), clops_last_error_message());
        expect_output(side, out[0], 5, "the new execution", 0);
    }
    clReleaseEvent(e0), clReleaseEvent(e1), clReleaseEvent(gate);
    clops_operator_free(op);
    clops_context_free(ctx);
    clReleaseMemObject(in), clReleaseMemObject(out[0]), clReleaseMemObject(out[1]);
    clReleaseCommandQueue(side);
    clReleaseCommandQueue(q);
}

START_TEST(test_given_up_behind_a_gate)
{
    given_up(0);
    given_up(1);
}
END_TEST

/* ---- commands: no markers, one shared queue (issue 38, Q3 and Q4) ----------------------------- */

static int g_markers, g_queues; /* calls clops made, counted through the seam */

static cl_int CL_API_CALL counted_marker(cl_command_queue q, cl_uint n, const cl_event *wait, cl_event *ev)
{
    __atomic_fetch_add(&g_markers, 1, __ATOMIC_SEQ_CST);
    return clops_cl_real.clEnqueueMarkerWithWaitList(q, n, wait, ev);
}

static cl_command_queue CL_API_CALL counted_queue(cl_context c, cl_device_id d, cl_command_queue_properties p,
                                                  cl_int *err)
{
    __atomic_fetch_add(&g_queues, 1, __ATOMIC_SEQ_CST);
    return clops_cl_real.clCreateCommandQueue(c, d, p, err);
}

/* 2,000 operators chained on an out-of-order queue (each after the previous one's
 * event, on its output): no marker enqueued (PoCL handles markers there in time
 * proportional to the commands pending: b8552b2's two per execution made such a
 * chain quadratic, 800 in 31 s), and every output right. The time is not asserted;
 * the markers, which made it, are counted. */
START_TEST(test_out_of_order_chain_without_markers)
{
    enum { N = 2000 };
    if (!out_of_order_queues("test_out_of_order_chain_without_markers")) {
        tc_skip("test_out_of_order_chain_without_markers", "the device has no out-of-order queues");
        return;
    }
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(g_cl, g_dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
    ck_assert(q && err == CL_SUCCESS);
    clops_context *ctx = fallback_around(q);
    clops_operator **ops = tc_malloc(N * sizeof *ops);
    cl_mem *buf = tc_malloc((N + 1) * sizeof *buf);
    buf[0] = input_with(0);
    for (int i = 0; i < N; i++) ops[i] = fallback_op(ctx), buf[i + 1] = output_new();
    g_markers = 0;
    clops_cl.clEnqueueMarkerWithWaitList = counted_marker;
    cl_event prev = NULL;
    for (int i = 0; i < N; i++) { /* DepthToSpace 1x4x2x2 -> 1x1x4x4: the same 16 words, permuted */
        cl_event ev = execute(ops[i], buf[i], buf[i + 1], prev ? 1 : 0, prev ? &prev : NULL);
        if (prev) clReleaseEvent(prev);
        prev = ev;
        if (g_markers) break; /* b8552b2's chain would take minutes */
    }
    clops_cl.clEnqueueMarkerWithWaitList = clops_cl_real.clEnqueueMarkerWithWaitList;
    ck_assert_msg(g_markers == 0, "%d markers enqueued for the first execution(s) on an out-of-order queue", g_markers);
    ck_assert_int_eq(clWaitForEvents(1, &prev), CL_SUCCESS);
    clReleaseEvent(prev);
    /* Step i applies the permutation P (y[h][w] = x[(h%2)*2 + w%2][h/2][w/2], flat
     * y[h*4+w] = x[((h%2)*2 + w%2)*4 + (h/2)*2 + w/2]) to step i-1's output. */
    uint32_t want[16], next[16];
    for (uint32_t k = 0; k < 16; k++) want[k] = k;
    for (int i = 0; i < N; i++) {
        for (uint32_t h = 0; h < 4; h++)
            for (uint32_t w = 0; w < 4; w++) next[h * 4 + w] = want[((h % 2) * 2 + w % 2) * 4 + (h / 2) * 2 + w / 2];
        memcpy(want, next, sizeof want);
        if (i % 199 != 0 && i != N - 1) continue;
        uint32_t got[16];
        ck_assert_int_eq(clEnqueueReadBuffer(q, buf[i + 1], CL_TRUE, 0, sizeof got, got, 0, NULL, NULL), CL_SUCCESS);
        ck_assert_msg(memcmp(got, want, sizeof got) == 0, "chain step %d: wrong output", i);
    }
    for (int i = 0; i < N; i += 101) ck_assert_int_eq(clops_operator_last_status(ops[i]), CLOPS_SUCCESS);
    for (int i = 0; i < N; i++) clops_operator_free(ops[i]), clReleaseMemObject(buf[i + 1]);
    clReleaseMemObject(buf[0]);
    free(ops), free(buf);
    clops_context_free(ctx);
    clReleaseCommandQueue(q);
}
END_TEST

/* 1,000 fallback operators alive with an execution each behind one gate: clops made
 * at most one command queue for them all (b8552b2 made one per operator, and a
 * rusticl queue is an OS thread: 1,010 threads, and an abort under `ulimit -u`), and
 * the process never has more threads than before plus the pool's 4 and a margin,
 * on PoCL and on rusticl. Then the gate: every output right. */
START_TEST(test_thousand_operators_behind_a_gate)
{
    enum { N = 1000 };
    cl_command_queue q;
    clops_context *ctx;
    clops_operator **ops;
    cl_mem *in, *out;
    many_operators(N, &q, &ctx, &ops, &in, &out);
    cl_int err;
    cl_event gate = clCreateUserEvent(g_cl, &err);
    ck_assert(gate && err == CL_SUCCESS);
    const int before = thread_count();
    g_queues = 0;
    clops_cl.clCreateCommandQueue = counted_queue;
    for (int i = 0; i < N; i++) clReleaseEvent(execute(ops[i], in[i], out[i], 1, &gate));
    clops_cl.clCreateCommandQueue = clops_cl_real.clCreateCommandQueue;
    const int during = thread_count();
    ck_assert_msg(g_queues <= 1, "%d command queues made for %d operators' first executions", g_queues, N);
    ck_assert_msg(during <= before + POOL_THREADS + MARGIN, "%d live fallback operators behind a gate: %d threads, %d "
                  "before", N, during, before);
    ck_assert_int_eq(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    ck_assert_int_eq(clFinish(q), CL_SUCCESS);
    for (int i = 0; i < N; i++) expect_output(q, out[i], i, "operator", i);
    for (int i = 0; i < N; i++) clops_operator_free(ops[i]), clReleaseMemObject(in[i]), clReleaseMemObject(out[i]);
    fprintf(stderr, "1,000 gated fallback operators: threads %d before, %d behind the gate, %d queue(s) made\n",
            before, during, g_queues);
    clReleaseEvent(gate);
    free(ops), free(in), free(out);
    clops_context_free(ctx);
    clReleaseCommandQueue(q);
}
END_TEST

/* ---- the flusher ------------------------------------------------------------------------------ */

/* What clops's calls on the caller's queue, and its clSetUserEventStatus calls, saw (through the seam). */
enum { FLUSH_LOG = 4096, THREADS_SEEN = 16 };
static pthread_mutex_t g_flog_lock = PTHREAD_MUTEX_INITIALIZER;
static cl_command_queue g_flog_queue; /* the caller's queue */
static pthread_t g_main;              /* the test's thread: execute's own flushes */
typedef struct {
    pthread_t thread;
    int sets;           /* user events clops had set when the flush began */
    int held;           /* clops's references to the queue then (its retains less its releases) */
} flush_seen;
static flush_seen g_flog[FLUSH_LOG];
static int g_nflog, g_flog_lost, g_sets, g_held;
static pthread_t g_setters[THREADS_SEEN], g_releasers[THREADS_SEEN]; /* threads that set `done`, released the queue */
static int g_nsetters, g_nreleasers;

/* Under g_flog_lock: `t` added to `seen` once. */
static void thread_seen(pthread_t *seen, int *n, pthread_t t)
{
    int k = 0;
    while (k < *n && !pthread_equal(seen[k], t)) k++;
    if (k == *n && k < THREADS_SEEN) seen[(*n)++] = t;
}

static cl_int CL_API_CALL logged_flush(cl_command_queue q)
{
    if (q == g_flog_queue && !pthread_equal(pthread_self(), g_main)) {
        pthread_mutex_lock(&g_flog_lock);
        if (g_nflog < FLUSH_LOG) g_flog[g_nflog++] = (flush_seen){pthread_self(), g_sets, g_held};
        else g_flog_lost++;
        pthread_mutex_unlock(&g_flog_lock);
    }
    return clops_cl_real.clFlush(q);
}

static cl_int CL_API_CALL logged_retain(cl_command_queue q)
{
    const cl_int err = clops_cl_real.clRetainCommandQueue(q);
    pthread_mutex_lock(&g_flog_lock);
    if (q == g_flog_queue && err == CL_SUCCESS) g_held++;
    pthread_mutex_unlock(&g_flog_lock);
    return err;
}

static cl_int CL_API_CALL logged_release(cl_command_queue q)
{
    pthread_mutex_lock(&g_flog_lock);
    if (q == g_flog_queue) g_held--, thread_seen(g_releasers, &g_nreleasers, pthread_self());
    pthread_mutex_unlock(&g_flog_lock);
    return clops_cl_real.clReleaseCommandQueue(q);
}

static cl_int CL_API_CALL logged_set(cl_event e, cl_int status)
{
    pthread_mutex_lock(&g_flog_lock);
    thread_seen(g_setters, &g_nsetters, pthread_self());
    pthread_mutex_unlock(&g_flog_lock);
    const cl_int err = clops_cl_real.clSetUserEventStatus(e, status);
    pthread_mutex_lock(&g_flog_lock);
    g_sets++; /* after the set: a flush that saw this count began after it */
    pthread_mutex_unlock(&g_flog_lock);
    return err;
}

static void *open_gate(void *gate)
{
    const struct timespec nudge = {0, 20000000}; /* lets the test's clFinish begin first, most times */
    nanosleep(&nudge, NULL);
    ck_assert_int_eq(clSetUserEventStatus((cl_event)gate, CL_COMPLETE), CL_SUCCESS);
    return NULL;
}

static int held(void)
{
    pthread_mutex_lock(&g_flog_lock);
    const int n = g_held;
    pthread_mutex_unlock(&g_flog_lock);
    return n;
}

/* Issue 38, NVIDIA's first hypothesis: a driver may hold `after` behind its user
 * event `done` until the queue is flushed after the event was set. N operators
 * behind a gate, freed with their context before it opens; the gate opened on
 * another thread while this one is in clFinish of the queue (rusticl's clFinish
 * holds the queue's lock: a flush from a pool thread deadlocked there). Through
 * the seam: the caller's queue is flushed, by a thread other than the caller's,
 * after the last `done` was set; every such flush is on one thread, which never
 * set a user event (not a pool thread), and while clops held a reference of its
 * own (the context's was released before the gate); no pool thread released the
 * queue (a release flushes); in the end clops holds none. Every output right.
 * On rusticl no thread but the caller's flushes its queue at all: there a flush
 * from another thread makes the caller's clFinish return early (fallback_flush.c). */
START_TEST(test_flusher_flushes_the_callers_queue)
{
    enum { N = 64 };
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(g_cl, g_dev, 0, &err);
    ck_assert(q && err == CL_SUCCESS);
    g_main = pthread_self();
    g_flog_queue = q;
    g_nflog = g_flog_lost = g_sets = g_held = g_nsetters = g_nreleasers = 0;
    clops_cl.clFlush = logged_flush;
    clops_cl.clRetainCommandQueue = logged_retain;
    clops_cl.clReleaseCommandQueue = logged_release;
    clops_cl.clSetUserEventStatus = logged_set;
    clops_context *ctx = fallback_around(q);
    clops_operator *ops[N];
    cl_mem in[N], out[N];
    for (int i = 0; i < N; i++) ops[i] = fallback_op(ctx), in[i] = input_with((uint32_t)i), out[i] = output_new();
    cl_event gate = clCreateUserEvent(g_cl, &err);
    ck_assert(gate && err == CL_SUCCESS);
    for (int i = 0; i < N; i++) clReleaseEvent(execute(ops[i], in[i], out[i], 1, &gate));
    for (int i = 0; i < N; i++) clops_operator_free(ops[i]);
    clops_context_free(ctx);
    pthread_t opener;
    ck_assert_int_eq(pthread_create(&opener, NULL, open_gate, gate), 0);
    ck_assert_int_eq(clFinish(q), CL_SUCCESS);
    ck_assert_int_eq(pthread_join(opener, NULL), 0);
    for (int i = 0; i < N; i++) expect_output(q, out[i], i, "operator", i);
    /* The flusher works after `done`, so after clFinish may have returned: until it released every
     * reference (a minute at most: not a timing, a bound on a hang). */
    for (int ms = 0; held() > 0 && ms < 60000; ms++) {
        const struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
    clops_cl = clops_cl_real;
    ck_assert_msg(g_held == 0, "clops's references to the caller's queue after its work: %d (retains less releases)",
                  g_held);
    ck_assert_msg(g_sets == N, "clops set %d user events for %d executions", g_sets, N);
    cl_platform_id platform;
    char name[128] = "";
    ck_assert_int_eq(clGetDeviceInfo(g_dev, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL), CL_SUCCESS);
    ck_assert_int_eq(clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name, name, NULL), CL_SUCCESS);
    const bool rusticl = !strcmp(name, "rusticl");
    if (rusticl)
        ck_assert_msg(g_nflog == 0, "rusticl: another thread flushed the caller's queue %d time(s)", g_nflog);
    else
        ck_assert_msg(g_nflog > 0, "the caller's queue was never flushed after its executions' `done`");
    if (g_nflog)
        ck_assert_msg(g_flog[g_nflog - 1].sets == N, "the last flush of the caller's queue began after %d of %d "
                      "`done` were set", g_flog[g_nflog - 1].sets, N);
    for (int i = 0; i < g_nflog; i++) {
        ck_assert_msg(pthread_equal(g_flog[i].thread, g_flog[0].thread), "flush %d of the caller's queue on a second "
                      "thread (one flusher per process)", i);
        ck_assert_msg(g_flog[i].held > 0, "flush %d of the caller's queue while clops held no reference to it", i);
    }
    for (int k = 0; k < g_nsetters; k++) {
        ck_assert_msg(!g_nflog || !pthread_equal(g_setters[k], g_flog[0].thread), "a thread that sets `done` (a pool "
                      "thread) flushed the caller's queue");
        for (int r = 0; r < g_nreleasers; r++)
            ck_assert_msg(!pthread_equal(g_setters[k], g_releasers[r]), "a pool thread released the caller's queue");
    }
    fprintf(stderr, "flusher (%s): %d flush(es) of the caller's queue for %d executions (%d not logged), %d thread(s) "
            "set `done`, %d released the queue\n", name, g_nflog, N, g_flog_lost, g_nsetters, g_nreleasers);
    for (int i = 0; i < N; i++) clReleaseMemObject(in[i]), clReleaseMemObject(out[i]);
    clReleaseEvent(gate);
    clReleaseCommandQueue(q);
}
END_TEST

/* ---- fork ------------------------------------------------------------------------------------- */

START_TEST(test_forked_child_does_not_hang)
{
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(g_cl, g_dev, 0, &err);
    ck_assert(q && err == CL_SUCCESS);
    clops_context *ctx = fallback_around(q);
    clops_operator *op = fallback_op(ctx);
    cl_mem in = input_with(3), out = output_new();
    clReleaseEvent(execute(op, in, out, 0, NULL));
    ck_assert_int_eq(clops_operator_last_status(op), CLOPS_SUCCESS);
    fflush(NULL);
    const pid_t pid = fork();
    ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) { /* no Check call here: exit codes only */
        alarm(60);  /* a hang ends as SIGALRM, which the parent reports */
        const clops_buffers b = {in, NULL, out};
        cl_event ev = NULL;
        const clops_status st = clops_operator_execute(op, &b, 0, NULL, &ev);
        if (st != CLOPS_ERROR_DEVICE_LOST || ev) _exit(10);
        if (clops_operator_last_status(op) != CLOPS_ERROR_DEVICE_LOST) _exit(11);
        if (!strstr(clops_last_error_message(), "fork")) _exit(12);
        _exit(0); /* the child leaves its OpenCL objects alone: the driver's threads are gone */
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "the child: %s %d (10: execute not DEVICE_LOST, 11: last_status not DEVICE_LOST, 12: the message "
                  "does not say fork, SIGALRM: hung)", WIFEXITED(status) ? "exit" : "signal",
                  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    /* The parent's pool still serves. */
    clReleaseEvent(execute(op, in, out, 0, NULL));
    ck_assert_int_eq(clops_operator_last_status(op), CLOPS_SUCCESS);
    expect_output(q, out, 3, "the parent's execution after the fork", 0);
    clops_operator_free(op);
    clops_context_free(ctx);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseCommandQueue(q);
}
END_TEST

int main(void)
{
    const int need = tc_need_devices(1, "the fallback from a device cannot be tested");
    if (need >= 0) return need;
    Suite *s = suite_create("fallback_pool");
    TCase *tc = tc_fixture_case(s, "pool", fb_setup, fb_teardown);
    /* test_thread_limit_named first: later ones leave the pool with threads. */
    TC_TESTS(tc, test_thread_limit_named, test_ten_thousand_operators, test_given_up_behind_a_gate,
             test_thousand_operators_behind_a_gate, test_flusher_flushes_the_callers_queue,
             test_forked_child_does_not_hang);
    /* On out-of-order queues: skipped where the device has none (the entry then exits 77). */
    tc = tc_fixture_case(s, "out_of_order", fb_setup, fb_teardown);
    TC_TESTS(tc, test_fifo_per_operator_interleaved, test_out_of_order_chain_without_markers);
    return tc_run_failures(s, 1) ? EXIT_FAILURE : tc_skip_status(EXIT_SUCCESS);
}
