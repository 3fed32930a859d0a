/*
 * test_ops_queues.c - DepthToSpace and SpaceToDepth behind the caller's wait
 * list (a user event) and on the caller's out-of-order queue, where clops must
 * order its own commands with events; bit-exact against the naive reference.
 */
#include "test_depth_space_common.h"

/* ---- events and queues ------------------------------------------------------------------------------------ */
/* The wait list is honoured: gated by a user event, the operator's event cannot
 * complete (and the output is not written) before the user event is set. */
START_TEST(test_wait_list_user_event)
{
    if (!tc_dev_ctx) {
        fprintf(stderr, "SKIP test_wait_list_user_event: no OpenCL device\n");
        return;
    }
    const char *label = "DepthToSpace UINT32 DML example 1 behind a user event";
    cl_context c = clops_context_cl_context(tc_dev_ctx);
    cl_command_queue q = clops_context_queue(tc_dev_ctx);
    const ds_case example = {CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT32, CLOPS_ORDER_DEPTH_COLUMN_ROW, 2,
                             {1, 8, 2, 3}, LAYOUT_PACKED, LAYOUT_PACKED};
    ds_descs d;
    ds_describe(&example, NULL, NULL, &d);
    clops_operator *op = tc_create(tc_dev_ctx, &d.desc, label, "OpenCL device");
    uint32_t init[48], got[48];
    tc_fill_sentinel(init, sizeof init);
    cl_int err;
    cl_mem in = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof dml_input, (void *)(uintptr_t)dml_input,
                               &err);
    ck_assert_msg(err == CL_SUCCESS, "%s: clCreateBuffer %d", label, (int)err);
    cl_mem out = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof init, init, &err);
    ck_assert_msg(err == CL_SUCCESS, "%s: clCreateBuffer %d", label, (int)err);
    cl_event gate = clCreateUserEvent(c, &err);
    ck_assert_msg(err == CL_SUCCESS, "%s: clCreateUserEvent %d", label, (int)err);

    clops_buffers bufs = {in, NULL, out};
    cl_event done = NULL;
    clops_status st = clops_operator_execute(op, &bufs, 1, &gate, &done);
    ck_assert_msg(st == CLOPS_SUCCESS && done, "%s: execute: %s (%s)", label, clops_status_name(st),
                  clops_last_error_message());
    cl_int es = CL_COMPLETE;
    TC_CL_CHECK(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof es, &es, NULL), label);
    ck_assert_msg(es > CL_COMPLETE, "%s: the returned event has status %d before the user event was set", label, (int)es);
    TC_CL_CHECK(clSetUserEventStatus(gate, CL_COMPLETE), label);
    TC_CL_CHECK(clWaitForEvents(1, &done), label);
    TC_CL_CHECK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL), label);
    tc_check_bytes(got, dml_output_dcr, sizeof got, 4, label, "OpenCL device, cl_mem behind a user event");
    clReleaseEvent(done);
    clReleaseEvent(gate);
    clops_operator_free(op);

    /* An empty operator has nothing to run, but its event still follows the wait list. */
    const char *label0 = "empty SpaceToDepth 0x2x4x6 behind a user event";
    const ds_case empty = {CLOPS_OPERATOR_SPACE_TO_DEPTH, CLOPS_DATA_TYPE_UINT32, CLOPS_ORDER_COLUMN_ROW_DEPTH, 2,
                           {0, 2, 4, 6}, LAYOUT_PACKED, LAYOUT_PACKED};
    ds_describe(&empty, NULL, NULL, &d);
    op = tc_create(tc_dev_ctx, &d.desc, label0, "OpenCL device");
    gate = clCreateUserEvent(c, &err);
    ck_assert_msg(err == CL_SUCCESS, "%s: clCreateUserEvent %d", label0, (int)err);
    clops_buffers none = {NULL, NULL, NULL};
    done = NULL;
    st = clops_operator_execute(op, &none, 1, &gate, &done);
    ck_assert_msg(st == CLOPS_SUCCESS && done, "%s: execute: %s (%s), event %p", label0, clops_status_name(st),
                  clops_last_error_message(), (void *)done);
    TC_CL_CHECK(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof es, &es, NULL), label0);
    ck_assert_msg(es > CL_COMPLETE, "%s: the returned event has status %d before the user event was set", label0,
                  (int)es);
    TC_CL_CHECK(clSetUserEventStatus(gate, CL_COMPLETE), label0);
    TC_CL_CHECK(clWaitForEvents(1, &done), label0);
    clReleaseEvent(done);
    clReleaseEvent(gate);
    clops_operator_free(op);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
}
END_TEST

/* A context around the caller's out-of-order queue: clops must order its own
 * commands (and the caller's wait list) with events. One test per path. */
static void out_of_order_cases(unsigned paths)
{
    clops_context *ooo = tc_ooo_context();
    if (!ooo) {
        fprintf(stderr, "SKIP out-of-order queue tests: no OpenCL device or no out-of-order queues\n");
        return;
    }
    for (int o = 0; o < 2; o++) {
        const clops_depth_space_order order = (clops_depth_space_order)o;
        ds_case d2s = {CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_FLOAT32, order, 2, {2, 12, 3, 5},
                       LAYOUT_PACKED, LAYOUT_PADDED};
        ds_run_on(&d2s, NULL, 17000u + (uint64_t)o, 5, ooo, paths);
        ds_case s2d = {CLOPS_OPERATOR_SPACE_TO_DEPTH, CLOPS_DATA_TYPE_UINT16, order, 3, {2, 2, 6, 9},
                       LAYOUT_NHWC, LAYOUT_PACKED};
        ds_run_on(&s2d, NULL, 17100u + (uint64_t)o, 5, ooo, paths);
        ds_case big = {CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_FLOAT32, order, 2, {2, 64, 64, 64},
                       LAYOUT_PACKED, LAYOUT_PACKED};
        ds_run_on(&big, NULL, 17200u + (uint64_t)o, 5, ooo, paths);
        ds_case empty = {CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_FLOAT32, order, 2, {1, 4, 0, 2},
                         LAYOUT_PACKED, LAYOUT_PACKED};
        ds_run_on(&empty, NULL, 0, 5, ooo, paths);
        const uint32_t xs[4] = {2, 8, 32, 48};
        round_trip(CLOPS_DATA_TYPE_FLOAT32, order, 2, xs, 1, 17300u + (uint64_t)o, ooo, paths);
    }
}

/* The same large operator run 20 times on the out-of-order queue: a missing
 * dependency between clops's own commands shows only when the queue happens to
 * reorder them, which a single run may not. */
static void out_of_order_repeat(unsigned paths)
{
    clops_context *ooo = tc_ooo_context();
    if (!ooo)
        return;
    const char *label = "DepthToSpace FLOAT32 DCR block 2, 2x64x128x128 -> 2x16x256x256, 20 runs on the caller's "
                        "out-of-order queue";
    const ds_case c = {CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_FLOAT32, CLOPS_ORDER_DEPTH_COLUMN_ROW, 2,
                       {2, 64, 128, 128}, LAYOUT_PACKED, LAYOUT_PACKED};
    ds_descs d;
    ds_describe(&c, NULL, NULL, &d);
    const size_t bytes = tc_tensor_bytes(&d.in);
    unsigned char *x = tc_malloc(bytes), *want = tc_malloc(bytes), *init = tc_malloc(bytes), *out = tc_malloc(bytes);
    tc_fill_random(x, bytes, 18000u);
    tc_fill_sentinel(init, bytes);
    ds_reference(&c, x, NULL, want, NULL, label);
    clops_operator *op = tc_create(ooo, &d.desc, label, "caller's out-of-order queue");
    tc_bufs b = {x, bytes, NULL, 0, init, bytes};
    for (int run = 0; run < 20; run++) {
        char path[96];
        clops_status st;
        if (paths & TC_PATH_EXECUTE_HOST) {
            snprintf(path, sizeof path, "out-of-order queue, execute_host, run %d of 20", run + 1);
            st = tc_run_execute_host(op, &b, out);
        } else {
            snprintf(path, sizeof path, "out-of-order queue, execute on cl_mem, run %d of 20", run + 1);
            st = tc_run_execute_cl(ooo, op, &b, out, label);
        }
        ck_assert_msg(st == CLOPS_SUCCESS, "%s [%s]: %s (%s)", label, path, clops_status_name(st),
                      clops_last_error_message());
        tc_check_bytes(out, want, bytes, 4, label, path);
    }
    clops_operator_free(op);
    free(x);
    free(want);
    free(init);
    free(out);
}

START_TEST(test_out_of_order_queue_cl_mem)
{
    out_of_order_cases(TC_PATH_CL_MEM);
    out_of_order_repeat(TC_PATH_CL_MEM);
}
END_TEST

START_TEST(test_out_of_order_queue_execute_host)
{
    out_of_order_repeat(TC_PATH_EXECUTE_HOST);
    out_of_order_cases(TC_PATH_EXECUTE_HOST);
}
END_TEST

static Suite *ops_queues_suite(void)
{
    Suite *s = suite_create("ops_queues");
    TCase *tc = tc_suite_case(s, "events", -1);
    TC_TESTS(tc, test_wait_list_user_event, test_out_of_order_queue_cl_mem, test_out_of_order_queue_execute_host);
    return s;
}

int main(void)
{
    return tc_main(ops_queues_suite());
}
