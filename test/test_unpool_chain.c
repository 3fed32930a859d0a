/*
 * test_unpool_chain.c - one failed execution does not poison a MaxUnpooling
 * operator (issue 24, N5).
 *
 * The executions of one MaxUnpooling operator are chained: each waits for the
 * previous one's final event. When that event failed (the caller's wait-list
 * event failed, or the device lost the command), chaining on it fails - or, on
 * PoCL, never runs - every later execution. A failed user event cannot be used
 * on PoCL 3.1 (it aborts when one in a wait list fails), so the failure is made
 * at clops's seam (lib/cl_api.h, the static clops_testable): the final launch
 * of one execution runs, and its event is replaced by one that reports
 * CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, as when the caller's wait-list
 * event failed. That execution's last_status is CLOPS_ERROR_DEVICE_LOST; every
 * later execute and execute_host on the same operator must succeed with the
 * reference's bits, for each plan (serial, windows, general). (A kernel that
 * itself failed - any other negative status - loses the whole context since
 * issue 31: test_device_lost.)
 *
 * And execute never waits (issue 24): a launch the driver refuses, behind a
 * user event nobody has set yet, makes execute return the error at once (today's
 * main waits in clFinish for the event, forever).
 *
 * The context has a deadline, so that an operator that still chains on the
 * failed event (today's main) fails with CLOPS_ERROR_DEVICE_TIMEOUT instead of
 * hanging; the deadline is far above what the work needs.
 *
 * On an out-of-order queue, an execution after a failed one still follows the
 * execution the failed one chained on (it shares the status words).
 */
#define _POSIX_C_SOURCE 200809L
#define CLOPS_CL_API_NO_MACROS /* this file calls the real OpenCL by name */
#include <time.h>

#include "cl_api.h"
#include "fixture.h"
#include "ops/ops.h" /* the number of launches of an execution */

#define DEADLINE_SECONDS 20.0

static int g_fail_call;   /* the NDRange call (1-based) whose event fails; 0: none */
static int g_refuse_call; /* the NDRange call (1-based) refused with CL_OUT_OF_RESOURCES; 0: none */
static int g_lose_call;   /* the NDRange call (1-based) not enqueued, its event a failed one; 0: none */
static int g_calls;

/* The real launch; call g_fail_call's event is replaced by a failed one once
 * the command ran; call g_refuse_call is refused. */
static cl_int CL_API_CALL failing_launch(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *off,
                                         const size_t *global, const size_t *local, cl_uint n, const cl_event *wait,
                                         cl_event *ev)
{
    if (++g_calls == g_refuse_call) return CL_OUT_OF_RESOURCES;
    if (g_calls == g_lose_call) { /* a command the device lost before it ran */
        cl_context c = NULL;
        ck_assert_int_eq(clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof c, &c, NULL), CL_SUCCESS);
        cl_int e = CL_SUCCESS;
        *ev = clCreateUserEvent(c, &e);
        ck_assert_msg(*ev && e == CL_SUCCESS, "clCreateUserEvent: %d", (int)e);
        ck_assert_int_eq(clSetUserEventStatus(*ev, CL_OUT_OF_RESOURCES), CL_SUCCESS);
        return CL_SUCCESS;
    }
    const cl_int err = clops_cl_real.clEnqueueNDRangeKernel(q, k, dim, off, global, local, n, wait, ev);
    if (err != CL_SUCCESS || !ev || g_calls != g_fail_call) return err;
    ck_assert_int_eq(clWaitForEvents(1, ev), CL_SUCCESS);
    cl_context c = NULL;
    ck_assert_int_eq(clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof c, &c, NULL), CL_SUCCESS);
    cl_int e = CL_SUCCESS;
    cl_event failed = clCreateUserEvent(c, &e);
    ck_assert_msg(failed && e == CL_SUCCESS, "clCreateUserEvent: %d", (int)e);
    ck_assert_int_eq(clSetUserEventStatus(failed, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST), CL_SUCCESS);
    clReleaseEvent(*ev);
    *ev = failed;
    return CL_SUCCESS;
}

static void restore(void);

static void expect_status(clops_status st, clops_status want, const char *label, const char *what)
{
    ck_assert_msg(st == want, "%s: %s: %s (%s), want %s", label, what, clops_status_name(st),
                  clops_last_error_message(), clops_status_name(want));
}

/* Execute on cl_mem (output reset to the sentinel first), then the output's bytes. */
static void execute_once(clops_operator *op, cl_command_queue q, const clops_buffers *b, const tc_prepared *p,
                         void *got, clops_status want_last, const char *label)
{
    ck_assert_int_eq(clEnqueueWriteBuffer(q, b->output, CL_TRUE, 0, p->bufs.out_bytes, p->sentinel, 0, NULL, NULL),
                     CL_SUCCESS);
    cl_event done = NULL;
    expect_status(clops_operator_execute(op, b, 0, NULL, &done), CLOPS_SUCCESS, label, "execute");
    ck_assert_msg(done != NULL, "%s: no event", label);
    expect_status(clops_operator_last_status(op), want_last, label, "last_status");
    if (want_last == CLOPS_SUCCESS) {
        ck_assert_int_eq(clWaitForEvents(1, &done), CL_SUCCESS);
        ck_assert_int_eq(clEnqueueReadBuffer(q, b->output, CL_TRUE, 0, p->bufs.out_bytes, got, 0, NULL, NULL),
                         CL_SUCCESS);
    }
    clReleaseEvent(done);
}

/* With `refuse`, the failure is instead a launch the driver refuses while the
 * execution waits behind a user event nobody has set: execute returns the error
 * at once (what was enqueued still runs after the event; nothing waits for it). */
static void chain_survives(const tc_case *c, int refuse)
{
    clops_context_options o;
    ck_assert_int_eq(clops_context_options_init(&o, sizeof o), CLOPS_SUCCESS);
    o.timeout_seconds = DEADLINE_SECONDS;
    clops_context *ctx = NULL;
    clops_status st = clops_context_create_with_options(&o, &ctx);
    ck_assert_msg(st == CLOPS_SUCCESS, "context: %s (%s)", clops_status_name(st), clops_last_error_message());
    tc_prepared p;
    ck_assert_int_eq(tc_prepare(&p, c, tc_seed_of(c->name)), 0);
    clops_operator *op = NULL;
    expect_status(clops_operator_create(ctx, &p.desc, &op), CLOPS_SUCCESS, c->name, "create");
    ck_assert_msg(!op->fallback && op->num_launches > 0, "%s: the operator does not run on the device (%s)", c->name,
                  op->fallback_reason);
    cl_context cl = clops_context_cl_context(ctx);
    cl_command_queue q = clops_context_queue(ctx);
    cl_int err;
    clops_buffers b = tc_cl_buffers(cl, &p);
    ck_assert(b.input && b.indices && b.output);
    void *got = tc_malloc(p.bufs.out_bytes);

    g_calls = 0;
    clops_cl.clEnqueueNDRangeKernel = failing_launch;
    if (refuse) { /* the final launch refused, behind an unset user event */
        g_refuse_call = (int)op->num_launches;
        cl_event gate = clCreateUserEvent(cl, &err), ev = NULL;
        ck_assert(gate && err == CL_SUCCESS);
        expect_status(clops_operator_execute(op, &b, 1, &gate, &ev), CL_OUT_OF_RESOURCES, c->name,
                      "execute with a refused launch behind an unset user event");
        ck_assert_msg(ev == NULL, "%s: a failed execute returned an event", c->name);
        ck_assert_int_eq(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
        clReleaseEvent(gate);
    } else { /* the failed execution: its final launch's event reports a lost command */
        g_fail_call = (int)op->num_launches;
        execute_once(op, q, &b, &p, got, CLOPS_ERROR_DEVICE_LOST, c->name);
    }
    clops_cl.clEnqueueNDRangeKernel = clops_cl_real.clEnqueueNDRangeKernel;
    g_fail_call = g_refuse_call = 0;
    ck_assert_msg(g_calls == (int)op->num_launches, "%s: %d launches, want %u", c->name, g_calls, op->num_launches);

    /* Later executions, with no wait list, and execute_host: as if nothing happened. */
    for (int i = 0; i < 2; i++) {
        memset(got, 0, p.bufs.out_bytes);
        execute_once(op, q, &b, &p, got, CLOPS_SUCCESS, c->name);
        tc_check_bytes(got, p.want, p.bufs.out_bytes, p.esize, c->name, "execute after a failed execution");
    }
    memcpy(got, p.sentinel, p.bufs.out_bytes);
    expect_status(tc_run_execute_host(op, &p.bufs, got), CLOPS_SUCCESS, c->name, "execute_host");
    tc_check_bytes(got, p.want, p.bufs.out_bytes, p.esize, c->name, "execute_host after a failed execution");

    free(got);
    tc_release_buffers(b.input, b.indices, b.output);
    clops_operator_free(op);
    clops_context_free(ctx);
    tc_release(&p);
}

/* One case per plan of max_unpooling.c: serial (up to 4096 input elements),
 * windows (output H, W multiples of the input's), general (any other). */
static const tc_case cases[] = {
    {"serial float32 int64", CLOPS_OPERATOR_MAX_UNPOOLING, CLOPS_DATA_TYPE_FLOAT32, {1, 3, 4, 5}, 0,
     CLOPS_ORDER_DEPTH_COLUMN_ROW, CLOPS_DATA_TYPE_INT64, {1, 3, 8, 10}},
    {"windows uint16 uint32", CLOPS_OPERATOR_MAX_UNPOOLING, CLOPS_DATA_TYPE_UINT16, {2, 3, 24, 40}, 0,
     CLOPS_ORDER_DEPTH_COLUMN_ROW, CLOPS_DATA_TYPE_UINT32, {2, 3, 48, 120}},
    {"general float64 uint64", CLOPS_OPERATOR_MAX_UNPOOLING, CLOPS_DATA_TYPE_FLOAT64, {2, 3, 24, 40}, 0,
     CLOPS_ORDER_DEPTH_COLUMN_ROW, CLOPS_DATA_TYPE_UINT64, {2, 3, 50, 83}},
};
#define NUM_CASES (int)(sizeof cases / sizeof cases[0])

START_TEST(test_failed_execution_does_not_poison)
{
    chain_survives(&cases[_i], 0);
}
END_TEST

START_TEST(test_refused_launch_does_not_wait)
{
    chain_survives(&cases[_i], 1);
}
END_TEST

/* On an out-of-order queue: execution A waits behind an unset user event,
 * execution B (chained on A) is lost by the device, execution C must still
 * follow A, which shares its status words: not run before the event is set
 * (today's main chained C on nothing), and both outputs right after it. The
 * serial plan: one launch, so that nothing of B runs. */
START_TEST(test_dropped_failure_keeps_the_chain)
{
    const tc_case *c = &cases[0];
    clops_context *dflt = NULL;
    ck_assert_int_eq(clops_context_create(&dflt), CLOPS_SUCCESS);
    cl_context cl = clops_context_cl_context(dflt);
    cl_device_id dev = NULL;
    ck_assert_int_eq(clGetContextInfo(cl, CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL), CL_SUCCESS);
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(cl, dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
    ck_assert_msg(q && err == CL_SUCCESS, "an out-of-order queue: %d", (int)err);
    clops_context_options o;
    ck_assert_int_eq(clops_context_options_init(&o, sizeof o), CLOPS_SUCCESS);
    o.timeout_seconds = DEADLINE_SECONDS;
    clops_context *ctx = NULL;
    clops_status st = clops_context_create_from_cl_with_options(cl, dev, q, &o, &ctx);
    ck_assert_msg(st == CLOPS_SUCCESS, "context: %s (%s)", clops_status_name(st), clops_last_error_message());
    tc_prepared p;
    ck_assert_int_eq(tc_prepare(&p, c, tc_seed_of(c->name)), 0);
    clops_operator *op = NULL;
    expect_status(clops_operator_create(ctx, &p.desc, &op), CLOPS_SUCCESS, c->name, "create");
    ck_assert_msg(!op->fallback && op->num_launches == 1, "%s: not the serial plan on the device (%u launches; %s)",
                  c->name, op->num_launches, op->fallback_reason);
    cl_mem in = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, p.bufs.in_bytes, p.in, &err);
    cl_mem idx = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, p.bufs.idx_bytes, p.idx, &err);
    cl_mem out[3];
    for (int i = 0; i < 3; i++) {
        out[i] = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, p.bufs.out_bytes, p.sentinel, &err);
        ck_assert(out[i]);
    }
    cl_event gate = clCreateUserEvent(cl, &err), ev[3] = {NULL, NULL, NULL};
    ck_assert(in && idx && gate);
    clops_cl.clEnqueueNDRangeKernel = failing_launch;
    g_calls = 0;
    g_lose_call = 2;
    for (int i = 0; i < 3; i++) {
        const clops_buffers b = {in, idx, out[i]};
        expect_status(clops_operator_execute(op, &b, i == 0, i == 0 ? &gate : NULL, &ev[i]), CLOPS_SUCCESS, c->name,
                      i == 0 ? "execute A behind an unset user event" : i == 1 ? "execute B (lost)" : "execute C");
    }
    restore();
    const struct timespec a_while = {0, 200000000}; /* time for an execution that does not wait to run */
    nanosleep(&a_while, NULL);
    cl_int s = CL_COMPLETE;
    ck_assert_int_eq(clGetEventInfo(ev[2], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL), CL_SUCCESS);
    ck_assert_msg(s > CL_COMPLETE, "%s: execution C has status %d before A's event was set", c->name, (int)s);
    ck_assert_int_eq(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    ck_assert_int_eq(clWaitForEvents(1, &ev[0]), CL_SUCCESS);
    ck_assert_int_eq(clWaitForEvents(1, &ev[2]), CL_SUCCESS);
    expect_status(clops_operator_last_status(op), CLOPS_SUCCESS, c->name, "last_status after C");
    void *got = tc_malloc(p.bufs.out_bytes);
    for (int i = 0; i < 3; i += 2) {
        ck_assert_int_eq(clEnqueueReadBuffer(q, out[i], CL_TRUE, 0, p.bufs.out_bytes, got, 0, NULL, NULL), CL_SUCCESS);
        tc_check_bytes(got, p.want, p.bufs.out_bytes, p.esize, c->name, i ? "execution C" : "execution A");
    }
    free(got);
    for (int i = 0; i < 3; i++) clReleaseEvent(ev[i]);
    clReleaseEvent(gate);
    clops_operator_free(op);
    clops_context_free(ctx);
    clFinish(q);
    clReleaseCommandQueue(q);
    tc_release_buffers(in, idx, out[0]);
    clReleaseMemObject(out[1]);
    clReleaseMemObject(out[2]);
    clops_context_free(dflt);
    tc_release(&p);
}
END_TEST

static void restore(void)
{
    clops_cl = clops_cl_real;
    g_fail_call = g_refuse_call = g_lose_call = 0;
}

int main(void)
{
    const int need = tc_need_devices(1, "MaxUnpooling's chain is on OpenCL devices");
    if (need >= 0) return need;
    Suite *s = suite_create("unpool_chain");
    TCase *tc = tc_fixture_case(s, "chain", restore, restore);
    tcase_add_loop_test(tc, test_failed_execution_does_not_poison, 0, NUM_CASES);
    tcase_add_loop_test(tc, test_refused_launch_does_not_wait, 0, NUM_CASES);
    tcase_add_test(tc, test_dropped_failure_keeps_the_chain);
    return tc_run_nofork(s);
}
