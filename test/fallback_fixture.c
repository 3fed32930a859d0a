/* fallback_fixture.c - what the host fallback's suites share (fallback_fixture.h). */
#define _POSIX_C_SOURCE 200809L
#define CLOPS_CL_API_NO_MACROS /* this file calls the real OpenCL by name */
#include "fallback_fixture.h"

static clops_context *g_dflt; /* the default device's OpenCL objects */
cl_context g_cl;
cl_device_id g_dev;

void fb_setup(void)
{
    const clops_status st = tc_context_create_test_device(&g_dflt); /* rusticl in CI too */
    ck_assert_msg(st == CLOPS_SUCCESS && clops_context_backend(g_dflt) == CLOPS_BACKEND_OPENCL,
                  "clops_context_create: %s (%s)", clops_status_name(st), clops_last_error_message());
    g_cl = clops_context_cl_context(g_dflt);
    ck_assert_int_eq(clGetContextInfo(g_cl, CL_CONTEXT_DEVICES, sizeof g_dev, &g_dev, NULL), CL_SUCCESS);
}

void fb_teardown(void)
{
    clops_cl = clops_cl_real;
    clops_context_free(g_dflt);
    g_dflt = NULL;
}

/* A context around `q` whose operators fall back, with the deadline `timeout` (0: none). */
clops_context *fallback_timed(cl_command_queue q, double timeout)
{
    clops_context_options o;
    ck_assert_int_eq(clops_context_options_init(&o, sizeof o), CLOPS_SUCCESS);
    o.disable = CLOPS_CAPABILITY_COMPILER;
    o.cache = CLOPS_CACHE_POLICY_OFF;
    o.timeout_seconds = timeout;
    clops_context *ctx = NULL;
    const clops_status st = clops_context_create_from_cl_with_options(g_cl, g_dev, q, &o, &ctx);
    ck_assert_msg(st == CLOPS_SUCCESS, "context: %s (%s)", clops_status_name(st), clops_last_error_message());
    return ctx;
}

clops_context *fallback_around(cl_command_queue q)
{
    return fallback_timed(q, 0);
}

static const clops_tensor_desc g_x = {CLOPS_DATA_TYPE_UINT32, {1, 4, 2, 2}, NULL};
static const clops_tensor_desc g_y = {CLOPS_DATA_TYPE_UINT32, {1, 1, 4, 4}, NULL};
static const clops_depth_to_space_desc g_d2s = {&g_x, &g_y, 2, CLOPS_ORDER_DEPTH_COLUMN_ROW};

clops_operator *fallback_op(clops_context *ctx)
{
    const clops_operator_desc desc = {CLOPS_OPERATOR_DEPTH_TO_SPACE, &g_d2s};
    clops_operator *op = NULL;
    const clops_status st = clops_operator_create(ctx, &desc, &op);
    ck_assert_msg(st == CLOPS_SUCCESS, "create: %s (%s)", clops_status_name(st), clops_last_error_message());
    clops_operator_info info;
    ck_assert_int_eq(clops_operator_get_info(op, &info), CLOPS_SUCCESS);
    ck_assert_msg(info.backend == CLOPS_BACKEND_HOST, "the operator did not fall back to the host");
    return op;
}

/* Input `tag`: 16 values tag*16 + k. */
cl_mem input_with(uint32_t tag)
{
    uint32_t v[16];
    for (uint32_t k = 0; k < 16; k++) v[k] = tag * 16u + k;
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(g_cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof v, v, &err);
    ck_assert_msg(m && err == CL_SUCCESS, "clCreateBuffer: %d", (int)err);
    return m;
}

cl_mem output_new(void)
{
    uint32_t v[16];
    for (int k = 0; k < 16; k++) v[k] = SENTINEL;
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(g_cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof v, v, &err);
    ck_assert_msg(m && err == CL_SUCCESS, "clCreateBuffer: %d", (int)err);
    return m;
}

/* Output `out` holds DepthToSpace (DCR, block 2) of input `tag`: y[h][w] = x[(h%2)*2 + w%2][h/2][w/2];
 * with tag < 0, the sentinel. */
void expect_output(cl_command_queue q, cl_mem out, long tag, const char *what, long which)
{
    uint32_t got[16];
    ck_assert_int_eq(clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL), CL_SUCCESS);
    for (uint32_t h = 0; h < 4; h++)
        for (uint32_t w = 0; w < 4; w++) {
            const uint32_t c = (h % 2) * 2 + w % 2;
            const uint32_t want = tag < 0 ? SENTINEL : (uint32_t)tag * 16u + c * 4u + (h / 2) * 2u + w / 2;
            ck_assert_msg(got[h * 4 + w] == want, "%s %ld: y[%u][%u] = %#x, want %#x", what, which, h, w,
                          got[h * 4 + w], want);
        }
}

cl_event execute(clops_operator *op, cl_mem in, cl_mem out, cl_uint nwait, const cl_event *wait)
{
    const clops_buffers b = {in, NULL, out};
    cl_event ev = NULL;
    const clops_status st = clops_operator_execute(op, &b, nwait, wait, &ev);
    ck_assert_msg(st == CLOPS_SUCCESS && ev, "execute: %s (%s)", clops_status_name(st), clops_last_error_message());
    return ev;
}

/* Whether the device has out-of-order queues (rusticl 22.3 has none: those cases are skipped, saying so). */
int out_of_order_queues(const char *test)
{
    cl_command_queue_properties props = 0;
    ck_assert_int_eq(clGetDeviceInfo(g_dev, CL_DEVICE_QUEUE_PROPERTIES, sizeof props, &props, NULL), CL_SUCCESS);
    if (!(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE))
        fprintf(stderr, "%s: the device has no out-of-order queues: that part skipped\n", test);
    return (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0;
}
