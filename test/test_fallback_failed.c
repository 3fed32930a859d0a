/*
 * test_fallback_failed.c - a failed event before a host fallback execution (issue
 * 38, Q1; stop 42's CI). The operators and outputs are fallback_fixture.h's.
 *
 * - A wait-list event that fails (before and after execute, on in-order and
 *   out-of-order queues): that execution fails only (CLOPS_ERROR_DEVICE_LOST
 *   with the event's status), its output untouched, its event complete; the
 *   operator goes on.
 * - A failed event before an execution whose caller keeps no event (in its wait
 *   list, or the caller's own command before it on an in-order queue): reported
 *   by last_status, other outputs written, and no abort inside PoCL 3.1.
 * No timing is asserted.
 */
#define _POSIX_C_SOURCE 200809L
#define CLOPS_CL_API_NO_MACROS /* this file calls the real OpenCL by name */
#include <time.h>

#include "fallback_fixture.h"

/* Execution 1 waits for a gate that fails (-5), execution 2 for nothing: last_status says
 * CLOPS_ERROR_DEVICE_LOST with the gate's status (bounded: the context's deadline is a
 * generous 60 s, so b8552b2's hang ends as CLOPS_ERROR_DEVICE_TIMEOUT, a failure here),
 * output 1 untouched, output 2 written, both events complete, and the operator goes on.
 * PoCL and rusticl call no CL_COMPLETE callback for a command whose wait list failed. */
/* `e`'s execution status once it ended, polled for at most `seconds` (a bound on a hang, not a timing;
 * not clWaitForEvents, which PoCL 3.1 may abort in behind a failed event). */
static cl_int ended_status(cl_event e, int seconds)
{
    cl_int s = CL_QUEUED;
    for (int ms = 0; ms <= seconds * 1000; ms++) {
        ck_assert_int_eq(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL), CL_SUCCESS);
        if (s <= CL_COMPLETE) break;
        const struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
    return s;
}

static void failed_wait_list(cl_command_queue_properties props)
{
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(g_cl, g_dev, props, &err);
    ck_assert(q && err == CL_SUCCESS);
    clops_context *ctx = fallback_timed(q, 60);
    clops_operator *op = fallback_op(ctx);
    cl_mem in[2] = {input_with(11), input_with(12)}, out[2] = {output_new(), output_new()};
    cl_event gate = clCreateUserEvent(g_cl, &err);
    ck_assert(gate && err == CL_SUCCESS);
    cl_event e1 = execute(op, in[0], out[0], 1, &gate);
    ck_assert_int_eq(clSetUserEventStatus(gate, CL_OUT_OF_RESOURCES), CL_SUCCESS);
    cl_event e2 = execute(op, in[1], out[1], 0, NULL);
    clops_status st = clops_operator_last_status(op);
    const char *msg = clops_last_error_message();
    ck_assert_msg(st == CLOPS_ERROR_DEVICE_LOST && strstr(msg, "wait list") && strstr(msg, "(-5)"),
                  "queue %#llx: last_status after a failed wait list: %s (%s), want CLOPS_ERROR_DEVICE_LOST naming "
                  "the wait list and the event's status -5", (unsigned long long)props, clops_status_name(st), msg);
    ck_assert_msg(clops_operator_last_status(op) == CLOPS_ERROR_DEVICE_LOST, "asked again: %s",
                  clops_last_error_message());
    /* Both complete: no command of clops's waits for the gate (720bdf8's `before` did, and PoCL failed
     * execution 1's event, -1). The failure is last_status's. Execution 2's event has completed (last_status
     * waited for it); execution 1's has on an in-order queue, and on an out-of-order one it may still run. */
    const cl_int s2 = ended_status(e2, 0), s1 = ended_status(e1, 60);
    ck_assert_msg(s1 == CL_COMPLETE && s2 == CL_COMPLETE, "the executions' events: %d and %d, want both "
                  "complete (0)", (int)s1, (int)s2);
    expect_output(q, out[0], -1, "queue kind", (long)props);
    expect_output(q, out[1], 12, "queue kind", (long)props);
    cl_event e3 = execute(op, in[0], out[0], 0, NULL); /* the operator goes on */
    st = clops_operator_last_status(op);
    ck_assert_msg(st == CLOPS_SUCCESS, "an execution after the failed one: %s (%s)", clops_status_name(st),
                  clops_last_error_message());
    expect_output(q, out[0], 11, "queue kind", (long)props);
    /* Behind the gate that has already failed: PoCL 3.1 calls a callback set then at once, with
     * the status asked for (CL_COMPLETE), not the event's; the failure is still seen. */
    cl_mem late = output_new();
    cl_event e4 = execute(op, in[1], late, 1, &gate);
    st = clops_operator_last_status(op);
    msg = clops_last_error_message();
    ck_assert_msg(st == CLOPS_ERROR_DEVICE_LOST && strstr(msg, "(-5)"), "queue %#llx: last_status behind a gate "
                  "that had failed before execute: %s (%s)", (unsigned long long)props, clops_status_name(st), msg);
    expect_output(q, late, -1, "behind a gate failed before execute, queue kind", (long)props);
    clReleaseEvent(e1), clReleaseEvent(e2), clReleaseEvent(e3), clReleaseEvent(e4), clReleaseEvent(gate);
    clops_operator_free(op);
    clops_context_free(ctx);
    clReleaseMemObject(late);
    for (int i = 0; i < 2; i++) clReleaseMemObject(in[i]), clReleaseMemObject(out[i]);
    clReleaseCommandQueue(q);
}

START_TEST(test_failed_wait_list)
{
    failed_wait_list(0);
    if (out_of_order_queues("test_failed_wait_list")) failed_wait_list(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
}
END_TEST

/* Whether the driver fails a command behind a failed one on the in-order queue `q`
 * (PoCL 3.1 does, rusticl 22.3 does not): the test's own two reads, the first behind a
 * gate set to -5. */
static bool fails_behind_a_failed_command(cl_command_queue q)
{
    cl_int err;
    cl_event gate = clCreateUserEvent(g_cl, &err), ev[2];
    ck_assert(gate && err == CL_SUCCESS);
    cl_mem m = input_with(0);
    unsigned char sink[2];
    ck_assert_int_eq(clEnqueueReadBuffer(q, m, CL_FALSE, 0, 1, sink, 1, &gate, &ev[0]), CL_SUCCESS);
    ck_assert_int_eq(clEnqueueReadBuffer(q, m, CL_FALSE, 1, 1, sink + 1, 0, NULL, &ev[1]), CL_SUCCESS);
    ck_assert_int_eq(clSetUserEventStatus(gate, CL_OUT_OF_RESOURCES), CL_SUCCESS);
    ck_assert_int_eq(clFlush(q), CL_SUCCESS);
    const cl_int s = ended_status(ev[1], 60);
    ck_assert_msg(s <= CL_COMPLETE, "a read behind a failed one on an in-order queue has not ended in 60 s");
    clReleaseEvent(ev[0]), clReleaseEvent(ev[1]), clReleaseEvent(gate);
    clReleaseMemObject(m);
    return s < 0;
}

/* A failed event before a fallback execution, with the caller keeping no event,
 * on an in-order queue, ROUNDS times: (a) in its wait list, (b) as the caller's
 * own command just before it (a read behind a gate, its event kept; the queue
 * finished first, so that the read waits for nothing else). Each is followed by
 * an execution behind nothing, whose execute releases clops's reference to the
 * failed one's `after`. PoCL 3.1 fails a command as soon as one event it waits
 * for fails and leaves it listed on the others: 720bdf8's `before` waited for
 * the wait list and for the previous execution's `after` (not yet complete), and
 * its `after` for `done` (not yet set), so PoCL locked freed events and aborted
 * ("PTHREAD ERROR in pocl_lock_events_inorder(): Invalid argument", stop 42's CI
 * under ASan). (a) fails its execution everywhere; (b) where the driver fails a
 * command behind a failed one (PoCL), else it runs. Every failed execution is
 * reported, the others' outputs written. */
START_TEST(test_failed_event_no_event_kept)
{
    enum { ROUNDS = 16 };
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(g_cl, g_dev, 0, &err);
    ck_assert(q && err == CL_SUCCESS);
    const bool behind = fails_behind_a_failed_command(q);
    clops_context *ctx = fallback_timed(q, 60);
    clops_operator *op = fallback_op(ctx);
    cl_mem in[2] = {input_with(21), input_with(22)}, out[4 * ROUNDS + 1];
    unsigned char sink[4];
    /* The test's own reads keep their events: PoCL 3.1 frees a command without one that fails
     * after a later command on its buffer, and aborts (no clops call needed for that). */
    cl_event read[ROUNDS + 1];
    for (int r = 0; r < ROUNDS; r++) {
        for (int k = 0; k < 4; k++) out[4 * r + k] = output_new();
        cl_event gate[2] = {clCreateUserEvent(g_cl, &err), clCreateUserEvent(g_cl, &err)};
        ck_assert(gate[0] && gate[1] && err == CL_SUCCESS);
        const clops_buffers b[4] = {{in[0], NULL, out[4 * r]}, {in[1], NULL, out[4 * r + 1]},
                                    {in[0], NULL, out[4 * r + 2]}, {in[1], NULL, out[4 * r + 3]}};
        ck_assert_int_eq(clops_operator_execute(op, &b[0], 1, &gate[0], NULL), CLOPS_SUCCESS); /* (a) */
        ck_assert_int_eq(clSetUserEventStatus(gate[0], CL_OUT_OF_RESOURCES), CL_SUCCESS);
        ck_assert_int_eq(clops_operator_execute(op, &b[1], 0, NULL, NULL), CLOPS_SUCCESS);
        ck_assert_int_eq(clFinish(q), CL_SUCCESS); /* (b) */
        ck_assert_int_eq(clEnqueueReadBuffer(q, in[1], CL_FALSE, 0, sizeof sink, sink, 1, &gate[1], &read[r]),
                         CL_SUCCESS);
        ck_assert_int_eq(clops_operator_execute(op, &b[2], 0, NULL, NULL), CLOPS_SUCCESS);
        ck_assert_int_eq(clSetUserEventStatus(gate[1], CL_OUT_OF_RESOURCES), CL_SUCCESS);
        ck_assert_int_eq(clops_operator_execute(op, &b[3], 0, NULL, NULL), CLOPS_SUCCESS);
        clReleaseEvent(gate[0]), clReleaseEvent(gate[1]);
    }
    clops_status st = clops_operator_last_status(op);
    const char *msg = clops_last_error_message();
    char want[64];
    snprintf(want, sizeof want, "host work of %d executions failed", ROUNDS * (behind ? 2 : 1));
    ck_assert_msg(st == CLOPS_ERROR_DEVICE_LOST && strstr(msg, want) && strstr(msg, "event 0 of the host "
                  "fallback's wait list failed with execution status CL_OUT_OF_RESOURCES (-5)"),
                  "last_status after %d failed events: %s (%s)", 2 * ROUNDS, clops_status_name(st), msg);
    /* (b) alone: where it fails, named as the command before it. */
    out[4 * ROUNDS] = output_new();
    cl_event gate = clCreateUserEvent(g_cl, &err);
    ck_assert(gate && err == CL_SUCCESS);
    ck_assert_int_eq(clFinish(q), CL_SUCCESS);
    ck_assert_int_eq(clEnqueueReadBuffer(q, in[1], CL_FALSE, 0, sizeof sink, sink, 1, &gate, &read[ROUNDS]),
                     CL_SUCCESS);
    const clops_buffers alone = {in[1], NULL, out[4 * ROUNDS]};
    ck_assert_int_eq(clops_operator_execute(op, &alone, 0, NULL, NULL), CLOPS_SUCCESS);
    ck_assert_int_eq(clSetUserEventStatus(gate, CL_OUT_OF_RESOURCES), CL_SUCCESS);
    clReleaseEvent(gate);
    st = clops_operator_last_status(op);
    msg = clops_last_error_message();
    ck_assert_msg(behind ? st == CLOPS_ERROR_DEVICE_LOST && strstr(msg, "a command before the host fallback on its "
                  "in-order queue failed") : st == CLOPS_SUCCESS, "last_status after (b) alone: %s (%s), the "
                  "driver %s a command behind a failed one", clops_status_name(st), msg, behind ? "fails" : "runs");
    expect_output(q, out[4 * ROUNDS], behind ? -1 : 22, "(b) alone", 0);
    for (int r = 0; r < ROUNDS; r++) {
        expect_output(q, out[4 * r], -1, "(a) the execution behind the failed event, round", r);
        expect_output(q, out[4 * r + 1], 22, "(a) the execution after it, round", r);
        expect_output(q, out[4 * r + 2], behind ? -1 : 21, "(b) the execution behind the failed command, round", r);
        expect_output(q, out[4 * r + 3], 22, "(b) the execution after it, round", r);
    }
    for (int r = 0; r <= ROUNDS; r++) clReleaseEvent(read[r]);
    clops_operator_free(op);
    clops_context_free(ctx);
    for (int i = 0; i <= 4 * ROUNDS; i++) clReleaseMemObject(out[i]);
    clReleaseMemObject(in[0]), clReleaseMemObject(in[1]);
    clReleaseCommandQueue(q);
}
END_TEST

int main(void)
{
    const int need = tc_need_devices(1, "the fallback from a device cannot be tested");
    if (need >= 0) return need;
    Suite *s = suite_create("fallback_failed");
    TCase *tc = tc_fixture_case(s, "failed", fb_setup, fb_teardown);
    TC_TESTS(tc, test_failed_wait_list, test_failed_event_no_event_kept);
    return tc_run_nofork(s);
}
