/*
 * test_device_lost.c - a lost device is reported as one (issue 31, item 4).
 *
 * On an NVIDIA H100 an illegal memory access in a kernel ended its event with
 * status -9999 and lost the CUDA context: every later build and launch failed
 * with -9999, reported as "CLOPS_UNKNOWN_STATUS (clBuildProgram failed ...)".
 * Here one execution fails at clops's own seam (clops_test_fail_launch in
 * lib/cl_api.h: the launch runs, then its event ends with -9999), and:
 *   - the wait that sees it (last_status, or execute_host's) returns
 *     CLOPS_ERROR_DEVICE_LOST naming the operator, its kernel and -9999;
 *   - every later call on that context - execute, execute_host, last_status,
 *     operator create, a program build, from another thread too - returns
 *     CLOPS_ERROR_DEVICE_LOST naming the same place, and nothing calls
 *     clBuildProgram again or blames it;
 *   - another context on the same device is not affected, and freeing works;
 *   - a status neither OpenCL nor clops defines is printed with its number.
 * A failed event of the caller's wait list loses no device: test_unpool_chain
 * (CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, CL_OUT_OF_RESOURCES) and
 * test_failed_wait_list_keeps_the_context here (issue 38, Q10: a status of the
 * caller's own, which rusticl gives the command behind the event).
 */
#define _POSIX_C_SOURCE 200809L
#define CLOPS_CL_API_NO_MACROS /* this file calls the real OpenCL by name */
#include <pthread.h>

#include "cl_api.h"
#include "fixture.h"
#include "ops/ops.h"

#define NV_ILLEGAL_ADDRESS (-9999) /* NVIDIA's execution status after a kernel's illegal memory access */
#define DEADLINE_SECONDS 20.0      /* a regression fails rather than hangs */

static int g_builds;

static cl_int CL_API_CALL counting_build(cl_program p, cl_uint n, const cl_device_id *d, const char *o,
                                         void(CL_CALLBACK *f)(cl_program, void *), void *u)
{
    g_builds++;
    return clops_cl_real.clBuildProgram(p, n, d, o, f, u);
}

static void restore(void)
{
    clops_test_fail_launch(0, 0);
    clops_cl = clops_cl_real;
}

static const tc_case UNPOOL = {"serial float32 int64", CLOPS_OPERATOR_MAX_UNPOOLING, CLOPS_DATA_TYPE_FLOAT32,
                               {1, 3, 4, 5}, 0, CLOPS_ORDER_DEPTH_COLUMN_ROW, CLOPS_DATA_TYPE_INT64, {1, 3, 8, 10}};
static const tc_case D2S = {"d2s float32", CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_FLOAT32, {1, 8, 3, 5}, 2,
                            CLOPS_ORDER_DEPTH_COLUMN_ROW, CLOPS_DATA_TYPE_FLOAT32, {0, 0, 0, 0}};
/* A shape no other call here built, so that creating it would need a new program. */
static const tc_case D2S_NEW = {"d2s uint16 crd", CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT16,
                                {1, 27, 2, 3}, 3, CLOPS_ORDER_COLUMN_ROW_DEPTH, CLOPS_DATA_TYPE_UINT16, {0, 0, 0, 0}};

/* The index in clops_device_list() of the device CLOPS_TEST_DEVICE names
 * (test_common.h: rusticl in CI too), or CLOPS_DEVICE_DEFAULT without it. */
static int chosen_device(void)
{
    const char *chosen = getenv("CLOPS_TEST_DEVICE");
    if (!chosen || !*chosen) return CLOPS_DEVICE_DEFAULT;
    clops_context *c = NULL;
    clops_status st = tc_context_create_chosen(chosen, &c);
    ck_assert_msg(st == CLOPS_SUCCESS, "CLOPS_TEST_DEVICE=%s: %s (%s)", chosen, clops_status_name(st),
                  clops_last_error_message());
    cl_device_id dev = NULL;
    ck_assert_int_eq(clGetContextInfo(clops_context_cl_context(c), CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL),
                     CL_SUCCESS);
    clops_context_free(c);
    clops_device_info infos[64];
    size_t count = 0;
    ck_assert_int_eq(clops_device_list(infos, 64, &count), CLOPS_SUCCESS);
    for (size_t i = 0; i < count && i < 64; i++)
        if (infos[i].device == dev) return (int)i;
    ck_abort_msg("CLOPS_TEST_DEVICE=%s is not in clops_device_list()", chosen);
    return CLOPS_DEVICE_DEFAULT;
}

static clops_context *new_context(void)
{
    clops_context_options o;
    ck_assert_int_eq(clops_context_options_init(&o, sizeof o), CLOPS_SUCCESS);
    o.timeout_seconds = DEADLINE_SECONDS;
    o.device = chosen_device();
    clops_context *ctx = NULL;
    const clops_status st = clops_context_create_with_options(&o, &ctx);
    ck_assert_msg(st == CLOPS_SUCCESS, "context: %s (%s)", clops_status_name(st), clops_last_error_message());
    ck_assert_msg(clops_context_backend(ctx) == CLOPS_BACKEND_OPENCL, "the default context is not on a device");
    return ctx;
}

/* `st` is CLOPS_ERROR_DEVICE_LOST and the message names every one of `want` (NULL-terminated). */
static void expect_lost(clops_status st, const char *what, const char *const *want)
{
    const char *msg = clops_last_error_message();
    ck_assert_msg(st == CLOPS_ERROR_DEVICE_LOST, "%s: %s (%s), want CLOPS_ERROR_DEVICE_LOST", what,
                  clops_status_name(st), msg);
    for (; *want; want++) ck_assert_msg(strstr(msg, *want) != NULL, "%s: \"%s\" does not say \"%s\"", what, msg, *want);
    ck_assert_msg(strstr(msg, "clBuildProgram") == NULL, "%s: \"%s\" blames clBuildProgram", what, msg);
}

/* A device operator (not the fallback) for `p`; its kernel's name, quoted, in `kernel`. */
static clops_operator *device_operator(clops_context *ctx, const tc_prepared *p, char kernel[128])
{
    clops_operator *op = NULL;
    const clops_status st = clops_operator_create(ctx, &p->desc, &op);
    ck_assert_msg(st == CLOPS_SUCCESS && !op->fallback && op->num_launches > 0, "create: %s (%s)",
                  clops_status_name(st), clops_last_error_message());
    snprintf(kernel, 128, "\"%s\"", op->kernel_name);
    return op;
}

/* What the MaxUnpooling tests use: a context, the MaxUnpooling case `p` on the
 * device with its cl_mem buffers `b`, and the case `q` (a new program). */
typedef struct unpool_setup {
    clops_context *ctx;
    tc_prepared p, q;
    char kernel[128];
    clops_operator *op;
    clops_buffers b;
} unpool_setup;

static void unpool_setup_make(unpool_setup *u)
{
    u->ctx = new_context();
    ck_assert_int_eq(tc_prepare(&u->p, &UNPOOL, tc_seed_of(UNPOOL.name)), 0);
    ck_assert_int_eq(tc_prepare(&u->q, &D2S_NEW, tc_seed_of(D2S_NEW.name)), 0);
    u->op = device_operator(u->ctx, &u->p, u->kernel);
    u->b = tc_cl_buffers(clops_context_cl_context(u->ctx), &u->p);
    ck_assert(u->b.input && u->b.indices && u->b.output);
}

static void unpool_setup_free(unpool_setup *u)
{
    tc_release_buffers(u->b.input, u->b.indices, u->b.output);
    clops_operator_free(u->op);
    clops_context_free(u->ctx);
    tc_release(&u->p);
    tc_release(&u->q);
}

typedef struct create_job {
    clops_context *ctx;
    const clops_operator_desc *desc;
    clops_status st;
    char msg[1024];
} create_job;

static void *create_elsewhere(void *arg)
{
    create_job *j = arg;
    clops_operator *op = NULL;
    j->st = clops_operator_create(j->ctx, j->desc, &op);
    snprintf(j->msg, sizeof j->msg, "%s", clops_last_error_message());
    clops_operator_free(op);
    return NULL;
}

START_TEST(test_failed_execution_loses_the_context)
{
    unpool_setup u;
    unpool_setup_make(&u);
    clops_context *ctx = u.ctx;
    clops_operator *op = u.op;
    const tc_prepared p = u.p, q = u.q;
    const char *kernel = u.kernel;
    clops_buffers b = u.b;
    clops_status st;
    const char *const place[] = {"MaxUnpooling", kernel, "-9999", NULL};

    g_builds = 0;
    clops_cl.clBuildProgram = counting_build;
    clops_test_fail_launch(op->num_launches, NV_ILLEGAL_ADDRESS); /* this execution's final launch */
    cl_event done = NULL;
    st = clops_operator_execute(op, &b, 0, NULL, &done);
    ck_assert_msg(st == CLOPS_SUCCESS && done, "execute: %s (%s)", clops_status_name(st), clops_last_error_message());
    clReleaseEvent(done);
    expect_lost(clops_operator_last_status(op), "last_status after the failed execution", place);

    /* Every later call on the context. */
    const char *const later[] = {"MaxUnpooling", kernel, "-9999", "was lost", NULL};
    done = NULL;
    expect_lost(clops_operator_execute(op, &b, 0, NULL, &done), "a later execute", later);
    ck_assert_msg(done == NULL, "a refused execute returned an event");
    expect_lost(clops_operator_last_status(op), "a later last_status", later);
    void *got = tc_malloc(p.bufs.out_bytes);
    expect_lost(tc_run_execute_host(op, &p.bufs, got), "a later execute_host", later);
    clops_operator *op2 = NULL;
    expect_lost(clops_operator_create(ctx, &q.desc, &op2), "a later operator create (a new program)", later);
    ck_assert(op2 == NULL);
    expect_lost(clops_operator_create(ctx, &p.desc, &op2), "a later operator create (a built program)", later);
    cl_program prog = NULL;
    const char *origin = NULL;
    expect_lost(clops_program_get(ctx, "depth_space.cl", "-DCLOPS_TEST_DEVICE_LOST=1", &prog, &origin),
                "a later program build", later);
    create_job job = {ctx, &q.desc, CLOPS_SUCCESS, ""};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, create_elsewhere, &job), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_msg(job.st == CLOPS_ERROR_DEVICE_LOST && strstr(job.msg, "MaxUnpooling") && strstr(job.msg, "-9999"),
                  "create on another thread: %s (%s)", clops_status_name(job.st), job.msg);
    ck_assert_msg(g_builds == 0, "%d programs were built on the lost context", g_builds);

    /* Another context on the device goes on. */
    clops_context *other = new_context();
    clops_operator *fresh = NULL;
    st = clops_operator_create(other, &p.desc, &fresh);
    ck_assert_msg(st == CLOPS_SUCCESS, "create on another context: %s (%s)", clops_status_name(st),
                  clops_last_error_message());
    memcpy(got, p.sentinel, p.bufs.out_bytes);
    st = tc_run_execute_host(fresh, &p.bufs, got);
    ck_assert_msg(st == CLOPS_SUCCESS, "execute_host on another context: %s (%s)", clops_status_name(st),
                  clops_last_error_message());
    tc_check_bytes(got, p.want, p.bufs.out_bytes, p.esize, UNPOOL.name, "on another context");
    restore();

    free(got);
    clops_operator_free(fresh);
    clops_context_free(other);
    unpool_setup_free(&u);
}
END_TEST

/* The failure seen by execute_host's own wait (the CLI's path, `clops run`): the
 * same, with DepthToSpace named. */
START_TEST(test_failed_execute_host_loses_the_context)
{
    clops_context *ctx = new_context();
    tc_prepared p;
    ck_assert_int_eq(tc_prepare(&p, &D2S, tc_seed_of(D2S.name)), 0);
    char kernel[128];
    clops_operator *op = device_operator(ctx, &p, kernel);
    const char *const place[] = {"DepthToSpace", kernel, "-9999", NULL};
    void *got = tc_malloc(p.bufs.out_bytes);
    memcpy(got, p.sentinel, p.bufs.out_bytes);
    clops_test_fail_launch(op->num_launches, NV_ILLEGAL_ADDRESS);
    expect_lost(tc_run_execute_host(op, &p.bufs, got), "execute_host with a failed kernel", place);
    restore();
    ck_assert_msg(memcmp(got, p.sentinel, p.bufs.out_bytes) == 0, "a failed execute_host wrote its output");
    expect_lost(tc_run_execute_host(op, &p.bufs, got), "the next execute_host", place);
    expect_lost(clops_operator_last_status(op), "last_status", place);
    free(got);
    clops_operator_free(op);
    clops_context_free(ctx);
    tc_release(&p);
}
END_TEST

/* Issue 38, Q10: rusticl ends a command behind a failed wait-list event with that
 * event's own status, which is not CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
 * on b8552b2 the MaxUnpooling kernel's failed event marked the context lost. The
 * caller's event ends with -1 (PoCL 3.1 aborts with -5). Twice: one execution
 * behind the event, then two (the second chained on the first, no wait list of
 * its own). Each time last_status names the event's status, nothing is written,
 * and the operator, a new operator and execute_host go on with the right bits;
 * then a genuine failure still loses the context. */
#define CALLER_STATUS (-1)
START_TEST(test_failed_wait_list_keeps_the_context)
{
    unpool_setup u;
    unpool_setup_make(&u);
    clops_status st;
    cl_context cl = clops_context_cl_context(u.ctx);
    cl_command_queue queue = u.op->ctx->queue;
    void *got = tc_malloc(u.p.bufs.out_bytes);
    char label[64];
    snprintf(label, sizeof label, "(%d)", CALLER_STATUS);

    for (int chained = 1; chained <= 2; chained++) {
        ck_assert_int_eq(clEnqueueWriteBuffer(queue, u.b.output, CL_TRUE, 0, u.p.bufs.out_bytes, u.p.sentinel, 0, NULL,
                                              NULL),
                         CL_SUCCESS);
        cl_int err;
        cl_event gate = clCreateUserEvent(cl, &err), done = NULL;
        ck_assert(gate && err == CL_SUCCESS);
        st = clops_operator_execute(u.op, &u.b, 1, &gate, &done);
        ck_assert_msg(st == CLOPS_SUCCESS && done, "execute behind the gate: %s (%s)", clops_status_name(st),
                      clops_last_error_message());
        for (int i = 1; i < chained; i++) {
            clReleaseEvent(done);
            st = clops_operator_execute(u.op, &u.b, 0, NULL, &done);
            ck_assert_msg(st == CLOPS_SUCCESS && done, "execute after it: %s (%s)", clops_status_name(st),
                          clops_last_error_message());
        }
        ck_assert_int_eq(clSetUserEventStatus(gate, CALLER_STATUS), CL_SUCCESS);
        clReleaseEvent(gate);
        st = clops_operator_last_status(u.op);
        const char *msg = clops_last_error_message();
        ck_assert_msg(st == CLOPS_ERROR_DEVICE_LOST && strstr(msg, "wait list") && strstr(msg, label) &&
                          !strstr(msg, "was lost"),
                      "%d execution(s) behind a failed event: %s (%s)", chained, clops_status_name(st), msg);
        cl_int s = CL_COMPLETE;
        ck_assert_int_eq(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL), CL_SUCCESS);
        ck_assert_msg(s < 0, "the execution behind the failed event ended with %d", (int)s);
        clReleaseEvent(done);
        ck_assert_int_eq(clEnqueueReadBuffer(queue, u.b.output, CL_TRUE, 0, u.p.bufs.out_bytes, got, 0, NULL, NULL),
                         CL_SUCCESS);
        ck_assert_msg(memcmp(got, u.p.sentinel, u.p.bufs.out_bytes) == 0, "an execution behind a failed event wrote");

        /* The same operator on cl_mem, then through execute_host. */
        done = NULL;
        st = clops_operator_execute(u.op, &u.b, 0, NULL, &done);
        ck_assert_msg(st == CLOPS_SUCCESS && done, "the next execute: %s (%s)", clops_status_name(st),
                      clops_last_error_message());
        st = clops_operator_last_status(u.op);
        ck_assert_msg(st == CLOPS_SUCCESS, "the next last_status: %s (%s)", clops_status_name(st),
                      clops_last_error_message());
        ck_assert_int_eq(clEnqueueReadBuffer(queue, u.b.output, CL_TRUE, 0, u.p.bufs.out_bytes, got, 1, &done, NULL),
                         CL_SUCCESS);
        clReleaseEvent(done);
        tc_check_bytes(got, u.p.want, u.p.bufs.out_bytes, u.p.esize, UNPOOL.name, "the next execution");
        memcpy(got, u.p.sentinel, u.p.bufs.out_bytes);
        st = tc_run_execute_host(u.op, &u.p.bufs, got);
        ck_assert_msg(st == CLOPS_SUCCESS, "execute_host: %s (%s)", clops_status_name(st), clops_last_error_message());
        tc_check_bytes(got, u.p.want, u.p.bufs.out_bytes, u.p.esize, UNPOOL.name, "execute_host after");
    }

    /* The kept wait-list events are bounded: those that ended go at each execution. */
    for (int i = 0; i < 100; i++) {
        cl_int err;
        cl_event ready = clCreateUserEvent(cl, &err), done = NULL;
        ck_assert(ready && err == CL_SUCCESS);
        ck_assert_int_eq(clSetUserEventStatus(ready, CL_COMPLETE), CL_SUCCESS);
        st = clops_operator_execute(u.op, &u.b, 1, &ready, &done);
        ck_assert_msg(st == CLOPS_SUCCESS && done, "execute %d: %s (%s)", i, clops_status_name(st),
                      clops_last_error_message());
        clReleaseEvent(ready);
        clReleaseEvent(done);
        ck_assert_msg(u.op->waits.count <= 1, "%zu wait-list events kept after %d executions", u.op->waits.count,
                      i + 1);
    }
    ck_assert_int_eq(clops_operator_last_status(u.op), CLOPS_SUCCESS);
    ck_assert_msg(u.op->waits.count == 0, "%zu wait-list events kept after last_status", u.op->waits.count);

    /* A new operator (a new program) on the context. */
    clops_operator *op2 = NULL;
    st = clops_operator_create(u.ctx, &u.q.desc, &op2);
    ck_assert_msg(st == CLOPS_SUCCESS, "a new operator: %s (%s)", clops_status_name(st), clops_last_error_message());
    void *got2 = tc_malloc(u.q.bufs.out_bytes);
    memcpy(got2, u.q.sentinel, u.q.bufs.out_bytes);
    st = tc_run_execute_host(op2, &u.q.bufs, got2);
    ck_assert_msg(st == CLOPS_SUCCESS, "the new operator: %s (%s)", clops_status_name(st), clops_last_error_message());
    tc_check_bytes(got2, u.q.want, u.q.bufs.out_bytes, u.q.esize, D2S_NEW.name, "a new operator");

    /* A kernel that fails on its own still loses the context. */
    const char *const place[] = {"MaxUnpooling", u.kernel, "-9999", NULL};
    clops_test_fail_launch(u.op->num_launches, NV_ILLEGAL_ADDRESS);
    cl_event done = NULL;
    st = clops_operator_execute(u.op, &u.b, 0, NULL, &done);
    ck_assert_msg(st == CLOPS_SUCCESS && done, "execute: %s (%s)", clops_status_name(st), clops_last_error_message());
    clReleaseEvent(done);
    expect_lost(clops_operator_last_status(u.op), "last_status after a failed kernel", place);
    restore();

    free(got);
    free(got2);
    clops_operator_free(op2);
    unpool_setup_free(&u);
}
END_TEST

/* A status neither OpenCL nor clops defines: its number in the message. */
START_TEST(test_unknown_status_has_its_number)
{
    const clops_status st = clops_fail_cl(NV_ILLEGAL_ADDRESS, "clEnqueueNDRangeKernel");
    ck_assert_int_eq((int)st, NV_ILLEGAL_ADDRESS);
    const char *msg = clops_last_error_message();
    ck_assert_msg(strstr(msg, "clEnqueueNDRangeKernel failed") && strstr(msg, "-9999") &&
                      strstr(msg, "does not define"),
                  "%s", msg);
    char label[256];
    ck_assert_str_eq(clops_status_label(CL_OUT_OF_RESOURCES, label, sizeof label), "CL_OUT_OF_RESOURCES (-5)");
    ck_assert_msg(strncmp(clops_status_label(-12345, label, sizeof label), "-12345 (which OpenCL does not define", 36) == 0, "%s",
                  label);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("device_lost");
    TCase *tc = tc_fixture_case(s, "unknown status", restore, restore);
    tcase_add_test(tc, test_unknown_status_has_its_number);
    const int need = tc_need_devices(1, "a lost device is an OpenCL device's");
    if (need < 0) {
        tc = tc_fixture_case(s, "lost device", restore, restore);
        tcase_add_test(tc, test_failed_execution_loses_the_context);
        tcase_add_test(tc, test_failed_execute_host_loses_the_context);
        tcase_add_test(tc, test_failed_wait_list_keeps_the_context);
    } else if (need != 77) {
        return need;
    }
    return tc_run_nofork(s);
}
