/*
 * test_deadline.c - the deadline of clops's waits (clops.h, "Deadline") and
 * device failures reported through event status, on a real device.
 *
 * A device that stops answering is made without a remote server: the work waits
 * behind a user event that is completed only after the call returned (or set to
 * a negative status: a failed command). The assertions are about the status and
 * the caller's memory, never about elapsed time.
 */
#define _POSIX_C_SOURCE 200809L
#include "fixture.h"

#define TIMEOUT_SECONDS 0.2

static cl_context g_cl;
static cl_device_id g_dev;
static cl_command_queue g_queue; /* in order: a blocked command holds back everything after it */
static clops_context *g_ctx;     /* around g_queue, with the deadline */

static clops_context *context_with(double timeout, unsigned disable, clops_cache_policy cache)
{
    clops_context_options o;
    ck_assert_int_eq(clops_context_options_init(&o, sizeof o), CLOPS_SUCCESS);
    o.timeout_seconds = timeout;
    o.disable = disable;
    o.cache = cache;
    clops_context *ctx = NULL;
    const clops_status st = clops_context_create_from_cl_with_options(g_cl, g_dev, g_queue, &o, &ctx);
    ck_assert_msg(st == CLOPS_SUCCESS, "context: %s (%s)", clops_status_name(st), clops_last_error_message());
    return ctx;
}

static void setup(void)
{
    clops_context *dflt = NULL;
    ck_assert_int_eq(clops_context_create(&dflt), CLOPS_SUCCESS);
    g_cl = clops_context_cl_context(dflt);
    ck_assert_int_eq(clGetContextInfo(g_cl, CL_CONTEXT_DEVICES, sizeof g_dev, &g_dev, NULL), CL_SUCCESS);
    ck_assert_int_eq(clRetainContext(g_cl), CL_SUCCESS);
    clops_context_free(dflt);
    cl_int err;
    g_queue = clCreateCommandQueue(g_cl, g_dev, 0, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    g_ctx = context_with(TIMEOUT_SECONDS, 0, CLOPS_CACHE_POLICY_READ_WRITE);
}

static void teardown(void)
{
    clops_context_free(g_ctx);
    if (g_queue) clFinish(g_queue), clReleaseCommandQueue(g_queue);
    if (g_cl) clReleaseContext(g_cl);
    g_ctx = NULL, g_queue = NULL, g_cl = NULL;
}

static cl_event user_event(void)
{
    cl_int err;
    cl_event u = clCreateUserEvent(g_cl, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    return u;
}

static const tc_case D2S = {"d2s uint32", CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT32, {1, 8, 6, 5}, 2,
                            CLOPS_ORDER_DEPTH_COLUMN_ROW, CLOPS_DATA_TYPE_UNKNOWN, {0, 0, 0, 0}};
static const tc_case UNPOOL = {"unpool float32", CLOPS_OPERATOR_MAX_UNPOOLING, CLOPS_DATA_TYPE_FLOAT32, {1, 3, 4, 4},
                               0, CLOPS_ORDER_DEPTH_COLUMN_ROW, CLOPS_DATA_TYPE_INT64, {1, 3, 8, 8}};

static void expect_status(clops_status st, clops_status want, const char *what)
{
    ck_assert_msg(st == want, "%s: %s (%s), want %s", what, clops_status_name(st), clops_last_error_message(),
                  clops_status_name(want));
}

/* Prepares case `c` into *p and returns an operator for it on `ctx`. */
static clops_operator *prepared_operator(tc_prepared *p, const tc_case *c, clops_context *ctx)
{
    ck_assert_int_eq(tc_prepare(p, c, tc_seed_of(c->name)), 0);
    clops_operator *op = NULL;
    expect_status(clops_operator_create(ctx, &p->desc, &op), CLOPS_SUCCESS, "create");
    return op;
}

/* The run's cl_mem buffers on g_cl: the input and the indices (NULL when the
 * operator has none) hold p's data, the output p's sentinel. */
static clops_buffers upload(const tc_prepared *p)
{
    cl_int err;
    clops_buffers b = {NULL, NULL, NULL};
    b.input = clCreateBuffer(g_cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, p->bufs.in_bytes, p->in, &err);
    if (p->bufs.idx_bytes)
        b.indices = clCreateBuffer(g_cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, p->bufs.idx_bytes, p->idx, &err);
    b.output = clCreateBuffer(g_cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, p->bufs.out_bytes, p->sentinel, &err);
    ck_assert(b.input && (b.indices || !p->bufs.idx_bytes) && b.output);
    return b;
}

/* execute_host on an in-order queue held by a command that never starts: the
 * deadline ends the wait, the message names the device, the output is untouched;
 * once the queue moves again the same operator gives the right bytes. */
START_TEST(execute_host_times_out)
{
    tc_prepared p;
    clops_operator *op = prepared_operator(&p, &D2S, g_ctx);
    void *out = tc_memdup(p.sentinel, p.bufs.out_bytes);
    cl_event u = user_event();
    ck_assert_int_eq(clEnqueueMarkerWithWaitList(g_queue, 1, &u, NULL), CL_SUCCESS);
    expect_status(tc_run_execute_host(op, &p.bufs, out), CLOPS_ERROR_DEVICE_TIMEOUT, "execute_host behind a user event");
    ck_assert_msg(strstr(clops_last_error_message(), clops_context_device_name(g_ctx)) != NULL,
                  "the message \"%s\" does not name the device", clops_last_error_message());
    ck_assert_msg(memcmp(out, p.sentinel, p.bufs.out_bytes) == 0, "a timed-out run wrote the output");
    ck_assert_int_eq(clSetUserEventStatus(u, CL_COMPLETE), CL_SUCCESS);
    ck_assert_int_eq(clFinish(g_queue), CL_SUCCESS);
    ck_assert_msg(memcmp(out, p.sentinel, p.bufs.out_bytes) == 0, "the output was written after the timeout");
    expect_status(tc_run_execute_host(op, &p.bufs, out), CLOPS_SUCCESS, "execute_host after the queue moved");
    ck_assert_msg(memcmp(out, p.want, p.bufs.out_bytes) == 0, "wrong result after the timeout");
    clReleaseEvent(u);
    free(out);
    clops_operator_free(op);
    tc_release(&p);
}
END_TEST

/* MaxUnpooling on cl_mem behind a user event: execute returns at once;
 * clops_operator_last_status waits with the deadline; after the event completes
 * it gives the real status. */
START_TEST(last_status_times_out)
{
    tc_prepared p;
    clops_operator *op = prepared_operator(&p, &UNPOOL, g_ctx);
    const clops_buffers b = upload(&p);
    cl_event u = user_event(), done = NULL;
    expect_status(clops_operator_execute(op, &b, 1, &u, &done), CLOPS_SUCCESS, "execute behind a user event");
    expect_status(clops_operator_last_status(op), CLOPS_ERROR_DEVICE_TIMEOUT, "last_status before the event");
    ck_assert_int_eq(clSetUserEventStatus(u, CL_COMPLETE), CL_SUCCESS);
    expect_status(clops_operator_last_status(op), CLOPS_SUCCESS, "last_status after the event");
    void *got = tc_malloc(p.bufs.out_bytes);
    ck_assert_int_eq(clEnqueueReadBuffer(g_queue, b.output, CL_TRUE, 0, p.bufs.out_bytes, got, 1, &done, NULL),
                     CL_SUCCESS);
    ck_assert_msg(memcmp(got, p.want, p.bufs.out_bytes) == 0, "wrong result after the wait");
    free(got);
    clReleaseEvent(done);
    clReleaseEvent(u);
    tc_release_buffers(b.input, b.indices, b.output);
    clops_operator_free(op);
    tc_release(&p);
}
END_TEST

/* A command that failed (a negative execution status, as a lost device gives):
 * CLOPS_ERROR_DEVICE_LOST, with the deadline and without one. */
static void failed_command(double timeout)
{
    clops_context *ctx = context_with(timeout, 0, CLOPS_CACHE_POLICY_READ_WRITE);
    tc_prepared p;
    clops_operator *op = prepared_operator(&p, &UNPOOL, ctx);
    const clops_buffers b = upload(&p);
    cl_event u = user_event();
    expect_status(clops_operator_execute(op, &b, 1, &u, NULL), CLOPS_SUCCESS, "execute behind a user event");
    ck_assert_int_eq(clSetUserEventStatus(u, -1), CL_SUCCESS);
    expect_status(clops_operator_last_status(op), CLOPS_ERROR_DEVICE_LOST, "last_status after a failed event");
    ck_assert_msg(strstr(clops_last_error_message(), clops_context_device_name(ctx)) != NULL,
                  "the message \"%s\" does not name the device", clops_last_error_message());
    clReleaseEvent(u);
    tc_release_buffers(b.input, b.indices, b.output);
    clops_operator_free(op);
    clops_context_free(ctx);
    tc_release(&p);
}

START_TEST(failed_command_is_device_lost)
{
    failed_command(TIMEOUT_SECONDS);
    failed_command(0);
}
END_TEST

/* An operator running on the host over cl_mem (no compiler, no cache): execute
 * returns at once (issue 24, N4); the wait for the user event ends at the
 * deadline, reported by last_status, and nothing is written even after the
 * event is set. */
START_TEST(fallback_maps_time_out)
{
    clops_context *ctx = context_with(TIMEOUT_SECONDS, CLOPS_CAPABILITY_COMPILER, CLOPS_CACHE_POLICY_OFF);
    tc_prepared p;
    clops_operator *op = prepared_operator(&p, &D2S, ctx);
    clops_operator_info info;
    clops_operator_get_info(op, &info);
    ck_assert_msg(info.backend == CLOPS_BACKEND_HOST, "without a compiler the operator should run on the host");
    const clops_buffers b = upload(&p);
    cl_event u = user_event();
    cl_event done = NULL;
    expect_status(clops_operator_execute(op, &b, 1, &u, &done), CLOPS_SUCCESS, "fallback execute behind a user event");
    expect_status(clops_operator_last_status(op), CLOPS_ERROR_DEVICE_TIMEOUT, "last_status before the event");
    ck_assert_msg(strstr(clops_last_error_message(), clops_context_device_name(ctx)) != NULL,
                  "the message \"%s\" does not name the device", clops_last_error_message());
    ck_assert_int_eq(clSetUserEventStatus(u, CL_COMPLETE), CL_SUCCESS);
    ck_assert_int_eq(clWaitForEvents(1, &done), CL_SUCCESS);
    expect_status(clops_operator_last_status(op), CLOPS_ERROR_DEVICE_TIMEOUT, "last_status after the event");
    void *got = tc_malloc(p.bufs.out_bytes);
    ck_assert_int_eq(clEnqueueReadBuffer(g_queue, b.output, CL_TRUE, 0, p.bufs.out_bytes, got, 0, NULL, NULL),
                     CL_SUCCESS);
    ck_assert_msg(memcmp(got, p.sentinel, p.bufs.out_bytes) == 0, "a timed-out fallback wrote the output");
    free(got);
    clReleaseEvent(done);
    clReleaseEvent(u);
    tc_release_buffers(b.input, b.indices, b.output);
    clops_operator_free(op);
    clops_context_free(ctx);
    tc_release(&p);
}
END_TEST

int main(void)
{
    const int need = tc_need_devices(1, "the deadline applies to OpenCL devices");
    if (need >= 0) return need;
    Suite *s = suite_create("deadline");
    TCase *tc = tc_fixture_case(s, "deadline", setup, teardown);
    TC_TESTS(tc, execute_host_times_out, last_status_times_out, failed_command_is_device_lost, fallback_maps_time_out);
    return tc_run_nofork(s);
}
