/*
 * test_fallback_wait.c - clops_operator_execute on an operator that fell back to
 * the host never waits (issue 24, N4).
 *
 * The operator falls back because its context has no compiler and no cache to
 * find a binary in (options.disable = CLOPS_CAPABILITY_COMPILER, cache off); a
 * caller cannot tell that in advance. Executed on cl_mem behind a user event
 * nobody has set yet, it must return at once with an event, write nothing while
 * the event is unset (read on a second queue: the operator's in-order queue is
 * held behind it), and once the event is set complete its event with the
 * reference's bits; clops_operator_last_status gives the host work's status
 * (MaxUnpooling's bad indices: CLOPS_ERROR_INDEX_OUT_OF_RANGE, every other
 * element written). Also with the operator and the context freed before the
 * event is set. No timing: an execute that waits never returns (today's main).
 *
 * The host work has no deadline of its own (a device command has none): behind
 * an event set after the context's deadline it still runs. A failed host work
 * (its map refused at clops's seam, lib/cl_api.h, the static clops_testable) is
 * reported by last_status although a later execution succeeded, and a failed
 * execute after it does not erase it. Executions run one after another, in
 * execute order, also on an out-of-order queue.
 *
 * The flusher's premise (lib/ops/fallback_flush.c): on this driver a clFlush
 * from another thread does not make the caller's clFinish or blocking read
 * return early (plain OpenCL; reported only on rusticl, which breaks it).
 */
#define _POSIX_C_SOURCE 200809L
#define CLOPS_CL_API_NO_MACROS /* this file calls the real OpenCL by name */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "cl_api.h"
#include "fixture.h"

static clops_context *g_dflt; /* the default device's OpenCL objects */

static void setup(void)
{
    const clops_status st = tc_context_create_test_device(&g_dflt); /* rusticl in CI too */
    ck_assert_msg(st == CLOPS_SUCCESS && clops_context_backend(g_dflt) == CLOPS_BACKEND_OPENCL,
                  "clops_context_create: %s (%s)", clops_status_name(st), clops_last_error_message());
}

static void teardown(void)
{
    clops_context_free(g_dflt);
    g_dflt = NULL;
}

/* A context around `q` whose operators fall back: no compiler, no cache; a deadline of `timeout` s (0: none). */
static clops_context *fallback_timed(cl_context c, cl_device_id d, cl_command_queue q, double timeout)
{
    clops_context_options o;
    ck_assert_int_eq(clops_context_options_init(&o, sizeof o), CLOPS_SUCCESS);
    o.timeout_seconds = timeout;
    o.disable = CLOPS_CAPABILITY_COMPILER;
    o.cache = CLOPS_CACHE_POLICY_OFF;
    clops_context *ctx = NULL;
    const clops_status st = clops_context_create_from_cl_with_options(c, d, q, &o, &ctx);
    ck_assert_msg(st == CLOPS_SUCCESS, "context: %s (%s)", clops_status_name(st), clops_last_error_message());
    return ctx;
}

static clops_context *fallback_around(cl_context c, cl_device_id d, cl_command_queue q)
{
    return fallback_timed(c, d, q, 0);
}

static cl_mem buffer_with(cl_context c, const void *data, size_t bytes)
{
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, (void *)data, &err);
    ck_assert_msg(m && err == CL_SUCCESS, "clCreateBuffer(%zu): %d", bytes, (int)err);
    return m;
}

static void read_back(cl_command_queue q, cl_mem m, void *got, size_t bytes)
{
    ck_assert_int_eq(clEnqueueReadBuffer(q, m, CL_TRUE, 0, bytes, got, 0, NULL, NULL), CL_SUCCESS);
}

/* Case `c` (with `bad` out-of-range indices for MaxUnpooling) behind an unset
 * user event; `free_early`: the operator and the context freed before it is set. */
static void gated_execute(const tc_case *c, int bad, int free_early)
{
    char label[160];
    snprintf(label, sizeof label, "%s%s%s", c->name, bad ? ", bad indices" : "",
             free_early ? ", operator and context freed before the gate" : "");
    cl_context cl = clops_context_cl_context(g_dflt);
    cl_device_id dev = NULL;
    ck_assert_int_eq(clGetContextInfo(cl, CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL), CL_SUCCESS);
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(cl, dev, 0, &err), side = clCreateCommandQueue(cl, dev, 0, &err);
    ck_assert(q && side);
    clops_context *ctx = fallback_around(cl, dev, q);
    tc_prepared p;
    ck_assert_int_eq(tc_prepare_bad(&p, c, tc_seed_of(label), bad) >= 0, 1);
    const clops_status want = bad ? CLOPS_ERROR_INDEX_OUT_OF_RANGE : CLOPS_SUCCESS;
    clops_operator *op = NULL;
    clops_status st = clops_operator_create(ctx, &p.desc, &op);
    ck_assert_msg(st == CLOPS_SUCCESS, "%s: create: %s (%s)", label, clops_status_name(st), clops_last_error_message());
    clops_operator_info info;
    ck_assert_int_eq(clops_operator_get_info(op, &info), CLOPS_SUCCESS);
    ck_assert_msg(info.backend == CLOPS_BACKEND_HOST, "%s: the operator did not fall back to the host", label);
    cl_mem in = buffer_with(cl, p.in, p.bufs.in_bytes);
    cl_mem idx = p.idx ? buffer_with(cl, p.idx, p.bufs.idx_bytes) : NULL;
    cl_mem out = buffer_with(cl, p.sentinel, p.bufs.out_bytes);
    cl_event gate = clCreateUserEvent(cl, &err), done = NULL;
    ck_assert_msg(gate && err == CL_SUCCESS, "clCreateUserEvent: %d", (int)err);
    const clops_buffers b = {in, idx, out};

    st = clops_operator_execute(op, &b, 1, &gate, &done);
    ck_assert_msg(st == CLOPS_SUCCESS && done, "%s: execute behind an unset user event: %s (%s)", label,
                  clops_status_name(st), clops_last_error_message());
    cl_int es = CL_COMPLETE;
    ck_assert_int_eq(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof es, &es, NULL), CL_SUCCESS);
    ck_assert_msg(es > CL_COMPLETE, "%s: the returned event has status %d before the gate", label, (int)es);
    void *got = tc_malloc(p.bufs.out_bytes);
    read_back(side, out, got, p.bufs.out_bytes);
    ck_assert_msg(memcmp(got, p.sentinel, p.bufs.out_bytes) == 0, "%s: output written before the gate", label);
    if (free_early) {
        clops_operator_free(op);
        clops_context_free(ctx);
        op = NULL, ctx = NULL;
    }

    ck_assert_int_eq(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    ck_assert_int_eq(clWaitForEvents(1, &done), CL_SUCCESS);
    ck_assert_int_eq(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof es, &es, NULL), CL_SUCCESS);
    ck_assert_msg(es == CL_COMPLETE, "%s: returned event status %d", label, (int)es);
    if (op) {
        st = clops_operator_last_status(op);
        ck_assert_msg(st == want, "%s: last_status %s (%s), want %s", label, clops_status_name(st),
                      clops_last_error_message(), clops_status_name(want));
    }
    memset(got, 0, p.bufs.out_bytes);
    read_back(side, out, got, p.bufs.out_bytes);
    tc_check_bytes(got, p.want, p.bufs.out_bytes, p.esize, label, "execute on cl_mem after the gate");

    free(got);
    clReleaseEvent(done);
    clReleaseEvent(gate);
    tc_release_buffers(in, idx, out);
    clops_operator_free(op);
    clops_context_free(ctx);
    clReleaseCommandQueue(side);
    clReleaseCommandQueue(q);
    tc_release(&p);
}

static const tc_case d2s = {"fallback DepthToSpace uint16 DCR b2", CLOPS_OPERATOR_DEPTH_TO_SPACE,
                            CLOPS_DATA_TYPE_UINT16, {2, 12, 3, 5}, 2, CLOPS_ORDER_DEPTH_COLUMN_ROW,
                            CLOPS_DATA_TYPE_UNKNOWN, {0, 0, 0, 0}};
static const tc_case unpool = {"fallback MaxUnpooling float32 int64", CLOPS_OPERATOR_MAX_UNPOOLING,
                               CLOPS_DATA_TYPE_FLOAT32, {2, 3, 3, 5}, 0, CLOPS_ORDER_DEPTH_COLUMN_ROW,
                               CLOPS_DATA_TYPE_INT64, {2, 3, 5, 7}};

START_TEST(test_execute_does_not_wait)
{
    gated_execute(&d2s, 0, 0);
    gated_execute(&unpool, 0, 0);
    gated_execute(&unpool, 1, 0); /* the host run's status: bad indices */
}
END_TEST

START_TEST(test_freed_before_the_gate)
{
    gated_execute(&d2s, 0, 1);
    gated_execute(&unpool, 1, 1);
}
END_TEST

/* ---- the host work's status, order and deadline ------------------------------------------------ */

static pthread_mutex_t g_seam = PTHREAD_MUTEX_INITIALIZER; /* the worker thread maps */
static cl_mem g_refused;   /* maps of this buffer are refused with CL_OUT_OF_RESOURCES */
static cl_mem g_mapped[8]; /* the buffers mapped, in order */
static int g_nmapped;
static int g_refuse_reads; /* clEnqueueReadBuffer refused (execute's `before` and `after`) */

static void *CL_API_CALL watched_map(cl_command_queue q, cl_mem m, cl_bool blocking, cl_map_flags flags, size_t off,
                                     size_t size, cl_uint n, const cl_event *wait, cl_event *ev, cl_int *err)
{
    pthread_mutex_lock(&g_seam);
    if (g_nmapped < 8) g_mapped[g_nmapped++] = m;
    const int refuse = m == g_refused;
    pthread_mutex_unlock(&g_seam);
    if (refuse) {
        if (err) *err = CL_OUT_OF_RESOURCES;
        return NULL;
    }
    return clops_cl_real.clEnqueueMapBuffer(q, m, blocking, flags, off, size, n, wait, ev, err);
}

static cl_int CL_API_CALL refusable_read(cl_command_queue q, cl_mem m, cl_bool blocking, size_t off, size_t size,
                                         void *ptr, cl_uint n, const cl_event *wait, cl_event *ev)
{
    if (g_refuse_reads) return CL_OUT_OF_RESOURCES;
    return clops_cl_real.clEnqueueReadBuffer(q, m, blocking, off, size, ptr, n, wait, ev);
}

/* The position of the first map of `m`, -1 if none. */
static int first_map(cl_mem m)
{
    pthread_mutex_lock(&g_seam);
    int i = 0;
    while (i < g_nmapped && g_mapped[i] != m) i++;
    if (i == g_nmapped) i = -1;
    pthread_mutex_unlock(&g_seam);
    return i;
}

typedef struct rig {
    cl_context cl;
    cl_command_queue q;
    clops_context *ctx;
    clops_operator *op;
    tc_prepared p;
    cl_mem in, out[2];
} rig;

/* A fallback DepthToSpace on a new queue (`props`), outputs at the sentinel. */
static void rig_make(rig *r, cl_command_queue_properties props, double timeout)
{
    r->cl = clops_context_cl_context(g_dflt);
    cl_device_id dev = NULL;
    ck_assert_int_eq(clGetContextInfo(r->cl, CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL), CL_SUCCESS);
    cl_int err;
    r->q = clCreateCommandQueue(r->cl, dev, props, &err);
    ck_assert_msg(r->q && err == CL_SUCCESS, "clCreateCommandQueue(%#llx): %d", (unsigned long long)props, (int)err);
    r->ctx = fallback_timed(r->cl, dev, r->q, timeout);
    ck_assert_int_eq(tc_prepare(&r->p, &d2s, tc_seed_of(d2s.name)), 0);
    const clops_status st = clops_operator_create(r->ctx, &r->p.desc, &r->op);
    ck_assert_msg(st == CLOPS_SUCCESS, "create: %s (%s)", clops_status_name(st), clops_last_error_message());
    clops_operator_info info;
    ck_assert_int_eq(clops_operator_get_info(r->op, &info), CLOPS_SUCCESS);
    ck_assert_msg(info.backend == CLOPS_BACKEND_HOST, "the operator did not fall back to the host");
    r->in = buffer_with(r->cl, r->p.in, r->p.bufs.in_bytes);
    for (int i = 0; i < 2; i++) r->out[i] = buffer_with(r->cl, r->p.sentinel, r->p.bufs.out_bytes);
    pthread_mutex_lock(&g_seam);
    g_nmapped = 0, g_refused = NULL, g_refuse_reads = 0;
    pthread_mutex_unlock(&g_seam);
    clops_cl.clEnqueueMapBuffer = watched_map;
    clops_cl.clEnqueueReadBuffer = refusable_read;
}

static void rig_free(rig *r)
{
    clops_operator_free(r->op);
    clops_context_free(r->ctx);
    clFinish(r->q);
    clReleaseCommandQueue(r->q);
    tc_release_buffers(r->in, NULL, r->out[0]);
    clReleaseMemObject(r->out[1]);
    tc_release(&r->p);
    /* The worker ends on its own once its jobs ran (nothing left: the queue finished). */
    clops_cl.clEnqueueMapBuffer = clops_cl_real.clEnqueueMapBuffer;
    clops_cl.clEnqueueReadBuffer = clops_cl_real.clEnqueueReadBuffer;
}

static cl_event rig_execute(rig *r, int out, cl_uint nwait, const cl_event *wait)
{
    const clops_buffers b = {r->in, NULL, r->out[out]};
    cl_event ev = NULL;
    const clops_status st = clops_operator_execute(r->op, &b, nwait, wait, &ev);
    ck_assert_msg(st == CLOPS_SUCCESS && ev, "execute into output %d: %s (%s)", out, clops_status_name(st),
                  clops_last_error_message());
    return ev;
}

static void expect_last(rig *r, clops_status want, const char *what)
{
    const clops_status st = clops_operator_last_status(r->op);
    ck_assert_msg(st == want, "%s: last_status %s (%s), want %s", what, clops_status_name(st),
                  clops_last_error_message(), clops_status_name(want));
}

/* Output `out` holds the reference's bits (`written`) or the sentinel. */
static void expect_output(rig *r, int out, int written, const char *what)
{
    void *got = tc_malloc(r->p.bufs.out_bytes);
    read_back(r->q, r->out[out], got, r->p.bufs.out_bytes);
    if (written) tc_check_bytes(got, r->p.want, r->p.bufs.out_bytes, r->p.esize, d2s.name, what);
    else ck_assert_msg(memcmp(got, r->p.sentinel, r->p.bufs.out_bytes) == 0, "%s: output %d was written", what, out);
    free(got);
}

static void wait_release(cl_event ev)
{
    ck_assert_int_eq(clWaitForEvents(1, &ev), CL_SUCCESS);
    clReleaseEvent(ev);
}

/* Execution 1's host work fails (its output's map refused), execution 2's
 * succeeds: last_status reports the failure (today's main kept only the last
 * one's status), again when asked again, and forgets it once a new execution
 * came. A failed execute in between erases nothing. */
START_TEST(test_failure_not_forgotten)
{
    rig r;
    rig_make(&r, 0, 0);
    g_refused = r.out[0];
    cl_event e1 = rig_execute(&r, 0, 0, NULL), e2 = rig_execute(&r, 1, 0, NULL);
    wait_release(e1);
    wait_release(e2);
    g_refused = NULL;
    expect_output(&r, 0, 0, "the failed execution");
    expect_output(&r, 1, 1, "the execution after the failed one");
    g_refuse_reads = 1; /* a failed execute: its status is its return */
    const clops_buffers b = {r.in, NULL, r.out[1]};
    cl_event ev = (cl_event)&ev;
    ck_assert_int_eq(clops_operator_execute(r.op, &b, 0, NULL, &ev), CL_OUT_OF_RESOURCES);
    ck_assert_msg(ev == NULL, "a failed execute returned an event");
    g_refuse_reads = 0;
    expect_last(&r, CL_OUT_OF_RESOURCES, "after a failed host work, a good one and a failed execute");
    expect_last(&r, CL_OUT_OF_RESOURCES, "asked again");
    wait_release(rig_execute(&r, 0, 0, NULL));
    expect_last(&r, CLOPS_SUCCESS, "after a new execution");
    expect_output(&r, 0, 1, "the new execution");
    rig_free(&r);
}
END_TEST

/* The host work behind an event set after the context's deadline passed still
 * runs (today's main dropped it, its event CL_COMPLETE, last_status SUCCESS). */
START_TEST(test_no_deadline_on_the_host_work)
{
    rig r;
    rig_make(&r, 0, 0.05);
    cl_int err;
    cl_event gate = clCreateUserEvent(r.cl, &err);
    ck_assert(gate && err == CL_SUCCESS);
    cl_event e1 = rig_execute(&r, 0, 1, &gate);
    const struct timespec past_the_deadline = {0, 300000000};
    nanosleep(&past_the_deadline, NULL);
    ck_assert_int_eq(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    cl_event e2 = rig_execute(&r, 1, 0, NULL);
    wait_release(e1);
    wait_release(e2);
    expect_output(&r, 0, 1, "the execution behind the late event");
    expect_output(&r, 1, 1, "the execution after it");
    expect_last(&r, CLOPS_SUCCESS, "both ran");
    clReleaseEvent(gate);
    rig_free(&r);
}
END_TEST

/* On an out-of-order queue, execution 2 (behind a complete event) runs after execution 1
 * (behind an unset user event): not before the event is set, and mapped after. */
START_TEST(test_executions_in_order)
{
    cl_command_queue_properties props = 0;
    cl_device_id dev = NULL;
    ck_assert_int_eq(clGetContextInfo(clops_context_cl_context(g_dflt), CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL),
                     CL_SUCCESS);
    ck_assert_int_eq(clGetDeviceInfo(dev, CL_DEVICE_QUEUE_PROPERTIES, sizeof props, &props, NULL), CL_SUCCESS);
    if (!(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)) { /* rusticl 22.3 */
        fprintf(stderr, "test_executions_in_order: the device has no out-of-order queues: skipped\n");
        return;
    }
    rig r;
    rig_make(&r, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0);
    cl_int err;
    cl_event gate = clCreateUserEvent(r.cl, &err);
    ck_assert(gate && err == CL_SUCCESS);
    /* Execution 2 waits for a complete event (an empty wait list would wait for every earlier command). */
    cl_event ready = clCreateUserEvent(r.cl, &err);
    ck_assert(ready && err == CL_SUCCESS);
    ck_assert_int_eq(clSetUserEventStatus(ready, CL_COMPLETE), CL_SUCCESS);
    cl_event e1 = rig_execute(&r, 0, 1, &gate), e2 = rig_execute(&r, 1, 1, &ready);
    const struct timespec a_while = {0, 200000000}; /* time for an execution that does not wait to run */
    nanosleep(&a_while, NULL);
    cl_int s2 = CL_COMPLETE;
    ck_assert_int_eq(clGetEventInfo(e2, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s2, &s2, NULL), CL_SUCCESS);
    ck_assert_msg(s2 > CL_COMPLETE && first_map(r.out[1]) < 0,
                  "execution 2 ran before execution 1 (event status %d)", (int)s2);
    ck_assert_int_eq(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    wait_release(e1);
    wait_release(e2);
    ck_assert_msg(first_map(r.out[0]) >= 0 && first_map(r.out[0]) < first_map(r.out[1]), "execution 2 was mapped before execution 1");
    expect_output(&r, 0, 1, "execution 1");
    expect_output(&r, 1, 1, "execution 2");
    expect_last(&r, CLOPS_SUCCESS, "both ran");
    clReleaseEvent(ready);
    clReleaseEvent(gate);
    rig_free(&r);
}
END_TEST

/* ---- the flusher's premise ------------------------------------------------------------------- */

static cl_command_queue g_race_q;
static atomic_int g_race_stop;

static void *flush_loop(void *arg)
{
    (void)arg;
    while (!atomic_load(&g_race_stop)) clFlush(g_race_q);
    return NULL;
}

/* lib/ops/fallback_flush.c flushes the caller's queue from its own thread after
 * each fallback execution. That is safe only if a clFlush from another thread
 * never makes the caller's clFinish, or a blocking read, on the same queue
 * return before its commands completed. Checked on this driver with plain
 * OpenCL: N buffers read back R times each, with a blocking read and with a
 * read and clFinish, while a second thread flushes the queue in a loop; every
 * read must have landed when the call returned. Mesa's rusticl (22.3) breaks
 * it - clops flushes no caller's queue there, so its count is printed, not
 * asserted. On NVIDIA's driver this says whether the flusher is safe there. */
START_TEST(test_flush_from_another_thread_keeps_finish)
{
    enum { N = 16, R = 50, WORDS = 1 << 14 };
    cl_context cl = clops_context_cl_context(g_dflt);
    cl_device_id dev = NULL;
    ck_assert_int_eq(clGetContextInfo(cl, CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL), CL_SUCCESS);
    cl_int err;
    g_race_q = clCreateCommandQueue(cl, dev, 0, &err);
    ck_assert(g_race_q && err == CL_SUCCESS);
    uint32_t *got = tc_malloc(WORDS * sizeof *got);
    cl_mem m[N];
    for (uint32_t i = 0; i < N; i++) {
        for (uint32_t k = 0; k < WORDS; k++) got[k] = i * WORDS + k;
        m[i] = buffer_with(cl, got, WORDS * sizeof *got);
    }
    atomic_store(&g_race_stop, 0);
    pthread_t flusher;
    ck_assert_int_eq(pthread_create(&flusher, NULL, flush_loop, NULL), 0);
    int early_read = 0, early_finish = 0;
    for (int r = 0; r < R; r++)
        for (uint32_t i = 0; i < N; i++) {
            const uint32_t last = i * WORDS + WORDS - 1;
            memset(got, 0xff, WORDS * sizeof *got);
            ck_assert_int_eq(clEnqueueReadBuffer(g_race_q, m[i], CL_TRUE, 0, WORDS * sizeof *got, got, 0, NULL, NULL),
                             CL_SUCCESS);
            early_read += got[WORDS - 1] != last;
            memset(got, 0xff, WORDS * sizeof *got);
            ck_assert_int_eq(clEnqueueReadBuffer(g_race_q, m[i], CL_FALSE, 0, WORDS * sizeof *got, got, 0, NULL,
                                                 NULL), CL_SUCCESS);
            ck_assert_int_eq(clFinish(g_race_q), CL_SUCCESS);
            early_finish += got[WORDS - 1] != last;
        }
    atomic_store(&g_race_stop, 1);
    ck_assert_int_eq(pthread_join(flusher, NULL), 0);
    cl_platform_id platform;
    char name[128] = "";
    ck_assert_int_eq(clGetDeviceInfo(dev, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL), CL_SUCCESS);
    ck_assert_int_eq(clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name, name, NULL), CL_SUCCESS);
    fprintf(stderr, "%s, a second thread flushing: %d of %d blocking reads and %d of %d clFinish returned early\n",
            name, early_read, N * R, early_finish, N * R);
    if (strcmp(name, "rusticl") != 0)
        ck_assert_msg(!early_read && !early_finish, "%s: a clFlush from another thread made %d blocking read(s) "
                      "and %d clFinish return before the read completed: clops's flusher "
                      "(lib/ops/fallback_flush.c) is unsafe on this driver", name, early_read, early_finish);
    for (int i = 0; i < N; i++) clReleaseMemObject(m[i]);
    clReleaseCommandQueue(g_race_q);
    free(got);
}
END_TEST

int main(void)
{
    const int need = tc_need_devices(1, "the fallback from a device cannot be tested");
    if (need >= 0) return need;
    Suite *s = suite_create("fallback_wait");
    TCase *tc = tc_fixture_case(s, "no_wait", setup, teardown);
    TC_TESTS(tc, test_execute_does_not_wait, test_freed_before_the_gate, test_failure_not_forgotten,
             test_no_deadline_on_the_host_work, test_executions_in_order, test_flush_from_another_thread_keeps_finish);
    return tc_run_nofork(s);
}
