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
 * A failed event of the caller's wait list loses no device: test_unpool_chain.
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

static clops_context *new_context(void)
{
    clops_context_options o;
    ck_assert_int_eq(clops_context_options_init(&o, sizeof o), CLOPS_SUCCESS);
    o.timeout_seconds = DEADLINE_SECONDS;
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
    clops_context *ctx = new_context();
    tc_prepared p, q;
    ck_assert_int_eq(tc_prepare(&p, &UNPOOL, tc_seed_of(UNPOOL.name)), 0);
    ck_assert_int_eq(tc_prepare(&q, &D2S_NEW, tc_seed_of(D2S_NEW.name)), 0);
    clops_operator *op = NULL;
    clops_status st = clops_operator_create(ctx, &p.desc, &op);
    ck_assert_msg(st == CLOPS_SUCCESS && !op->fallback && op->num_launches > 0, "create: %s (%s)",
                  clops_status_name(st), clops_last_error_message());
    char kernel[128];
    snprintf(kernel, sizeof kernel, "\"%s\"", op->kernel_name);
    const char *const place[] = {"MaxUnpooling", kernel, "-9999", NULL};

    cl_context cl = clops_context_cl_context(ctx);
    clops_buffers b = tc_cl_buffers(cl, &p);
    ck_assert(b.input && b.indices && b.output);

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
    tc_release_buffers(b.input, b.indices, b.output);
    clops_operator_free(op);
    clops_context_free(ctx);
    tc_release(&p);
    tc_release(&q);
}
END_TEST

/* The failure seen by execute_host's own wait (the CLI's path, `clops run`): the
 * same, with DepthToSpace named. */
START_TEST(test_failed_execute_host_loses_the_context)
{
    clops_context *ctx = new_context();
    tc_prepared p;
    ck_assert_int_eq(tc_prepare(&p, &D2S, tc_seed_of(D2S.name)), 0);
    clops_operator *op = NULL;
    clops_status st = clops_operator_create(ctx, &p.desc, &op);
    ck_assert_msg(st == CLOPS_SUCCESS && !op->fallback && op->num_launches > 0, "create: %s (%s)",
                  clops_status_name(st), clops_last_error_message());
    char kernel[128];
    snprintf(kernel, sizeof kernel, "\"%s\"", op->kernel_name);
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
    } else if (need != 77) {
        return need;
    }
    return tc_run_nofork(s);
}
