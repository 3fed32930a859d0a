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
 */
#define _POSIX_C_SOURCE 200809L
#include "fixture.h"

static clops_context *g_dflt; /* the default device's OpenCL objects */

static void setup(void)
{
    const clops_status st = clops_context_create(&g_dflt);
    ck_assert_msg(st == CLOPS_SUCCESS && clops_context_backend(g_dflt) == CLOPS_BACKEND_OPENCL,
                  "clops_context_create: %s (%s)", clops_status_name(st), clops_last_error_message());
}

static void teardown(void)
{
    clops_context_free(g_dflt);
    g_dflt = NULL;
}

/* A context around `q` whose operators fall back: no compiler, no cache. */
static clops_context *fallback_around(cl_context c, cl_device_id d, cl_command_queue q)
{
    clops_context_options o;
    ck_assert_int_eq(clops_context_options_init(&o, sizeof o), CLOPS_SUCCESS);
    o.disable = CLOPS_CAPABILITY_COMPILER;
    o.cache = CLOPS_CACHE_POLICY_OFF;
    clops_context *ctx = NULL;
    const clops_status st = clops_context_create_from_cl_with_options(c, d, q, &o, &ctx);
    ck_assert_msg(st == CLOPS_SUCCESS, "context: %s (%s)", clops_status_name(st), clops_last_error_message());
    return ctx;
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

int main(void)
{
    const int need = tc_need_devices(1, "the fallback from a device cannot be tested");
    if (need >= 0) return need;
    Suite *s = suite_create("fallback_wait");
    TCase *tc = tc_fixture_case(s, "no_wait", setup, teardown);
    TC_TESTS(tc, test_execute_does_not_wait, test_freed_before_the_gate);
    return tc_run_nofork(s);
}
