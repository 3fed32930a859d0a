/*
 * test_validation_exec.c - the buffer checks at execution (host memory and
 * cl_mem), status names and messages, the data-type table and the version.
 */
#include "validation_fixture.h"

/* ---- buffers at execution (host memory) ------------------------------------------------------------------ */
/* DepthToSpace FLOAT32 1x4x2x2 -> 1x1x4x4: 64 bytes in, 64 bytes out. */
static void small_d2s(ds_desc *d)
{
    const uint32_t in[4] = {1, 4, 2, 2}, out[4] = {1, 1, 4, 4};
    make_ds(d, D2S, F32, in, out, 2, DCR);
}

/* Runs hb on clops_host_run and on each backend's execute_host, expecting `want`
 * and (on failure) an output left as it was. */
static void expect_host_exec(const clops_operator_desc *desc, const clops_host_buffers *hb, clops_status want,
                             const char *needle, const char *what)
{
    unsigned char before[256];
    size_t check = hb->output && hb->output_bytes <= sizeof before ? hb->output_bytes : 0;
    if (check)
        memcpy(before, hb->output, check);

    clops_status st = clops_host_run(desc, hb);
    ASSERT_STATUS(st, want, what, "clops_host_run");
    if (want != CLOPS_SUCCESS) {
        check_message(what, "clops_host_run", needle);
        if (check)
            ck_assert_msg(memcmp(before, hb->output, check) == 0, "%s: clops_host_run wrote the output on failure",
                          what);
    }
    for (int bi = 0; bi < tc_backend_count(); bi++) {
        char call[96];
        snprintf(call, sizeof call, "clops_operator_execute_host (%s)", tc_backend_name(bi));
        clops_operator *op = tc_create(tc_backend(bi), desc, what, tc_backend_name(bi));
        st = clops_operator_execute_host(op, hb);
        ASSERT_STATUS(st, want, what, call);
        if (want != CLOPS_SUCCESS) {
            check_message(what, call, needle);
            if (check)
                ck_assert_msg(memcmp(before, hb->output, check) == 0, "%s: %s wrote the output on failure", what,
                              call);
        }
        clops_operator_free(op);
    }
}

START_TEST(test_host_buffer_too_small)
{
    ds_desc d;
    small_d2s(&d);
    float in[16] = {0}, out[16] = {0};
    tc_fill_sentinel(out, sizeof out);
    clops_host_buffers hb = {in, 63, NULL, 0, out, 64};
    expect_host_exec(&d.op, &hb, CLOPS_ERROR_BUFFER_TOO_SMALL, "63|64", "input 63 bytes, span 64");
    hb.input_bytes = 64;
    hb.output_bytes = 60;
    expect_host_exec(&d.op, &hb, CLOPS_ERROR_BUFFER_TOO_SMALL, "60|64", "output 60 bytes, span 64");
    hb.output_bytes = 0;
    expect_host_exec(&d.op, &hb, CLOPS_ERROR_BUFFER_TOO_SMALL, "0|64", "output 0 bytes, span 64");

    /* Strided: the span, not the element count, decides. Padded input rows of 5:
     * span = 1 + 3*10 + 1*5 + 1 = 37 elements = 148 bytes > 64. */
    const uint64_t padded[4] = {40, 10, 5, 1};
    d.in.strides = padded;
    float inp[40] = {0};
    hb.input = inp;
    hb.input_bytes = 144;
    hb.output_bytes = 64;
    expect_host_exec(&d.op, &hb, CLOPS_ERROR_BUFFER_TOO_SMALL, "144|148", "padded input 144 bytes, span 148");
    hb.input_bytes = 148;
    expect_host_exec(&d.op, &hb, CLOPS_SUCCESS, NULL, "padded input of exactly its span");

    /* MaxUnpooling indices too small. */
    up_desc u;
    make_up(&u, F32, CLOPS_DATA_TYPE_INT64, up_in, up_out);
    float x[12] = {0}, y[48] = {0};
    int64_t idx[12] = {0};
    clops_host_buffers uh = {x, sizeof x, idx, sizeof idx - 1, y, sizeof y};
    expect_host_exec(&u.op, &uh, CLOPS_ERROR_BUFFER_TOO_SMALL, "95|96", "INT64 indices 95 bytes, span 96");
}
END_TEST

/* A UINT64 index past INT64_MAX is reported as the caller wrote it, not as a negative number. */
START_TEST(test_host_uint64_index_message)
{
    up_desc u;
    make_up(&u, F32, CLOPS_DATA_TYPE_UINT64, up_in, up_out);
    float x[12] = {0}, y[48] = {0};
    uint64_t idx[12] = {0};
    idx[5] = (UINT64_C(1) << 63) + 3;
    clops_host_buffers uh = {x, sizeof x, idx, sizeof idx, y, sizeof y};
    /* the host kernels name the index (the device path reports a count, without values) */
    const clops_status st = clops_host_run(&u.op, &uh);
    ASSERT_STATUS(st, CLOPS_ERROR_INDEX_OUT_OF_RANGE, "UINT64 index 2^63+3", "clops_host_run");
    check_message("UINT64 index 2^63+3", "clops_host_run", "index 9223372036854775811 at input [0, 1, 0, 1]");
}
END_TEST

START_TEST(test_host_missing_buffer)
{
    ds_desc d;
    small_d2s(&d);
    float in[16] = {0}, out[16] = {0};
    clops_host_buffers hb = {NULL, 64, NULL, 0, out, 64};
    expect_host_exec(&d.op, &hb, CLOPS_ERROR_MISSING_BUFFER, NULL, "input NULL");
    hb.input = in;
    hb.output = NULL;
    expect_host_exec(&d.op, &hb, CLOPS_ERROR_MISSING_BUFFER, NULL, "output NULL");

    up_desc u;
    make_up(&u, F32, CLOPS_DATA_TYPE_UINT32, up_in, up_out);
    float x[12] = {0}, y[48] = {0};
    clops_host_buffers uh = {x, sizeof x, NULL, 48, y, sizeof y};
    expect_host_exec(&u.op, &uh, CLOPS_ERROR_MISSING_BUFFER, NULL, "MaxUnpooling indices NULL");

    /* DepthToSpace ignores the indices entirely. */
    hb.output = out;
    hb.indices = NULL;
    hb.indices_bytes = 12345;
    expect_host_exec(&d.op, &hb, CLOPS_SUCCESS, NULL, "DepthToSpace with indices NULL of 12345 bytes");
}
END_TEST

START_TEST(test_host_aliased_buffers)
{
    ds_desc d;
    small_d2s(&d);
    float mem[64] = {0};
    clops_host_buffers hb = {mem, 64, NULL, 0, mem, 64};
    expect_host_exec(&d.op, &hb, CLOPS_ERROR_ALIASED_BUFFERS, NULL, "output == input");
    hb.output = mem + 2;
    expect_host_exec(&d.op, &hb, CLOPS_ERROR_ALIASED_BUFFERS, NULL, "output = input + 8 bytes");
    hb.input = mem + 15;
    hb.output = mem;
    expect_host_exec(&d.op, &hb, CLOPS_ERROR_ALIASED_BUFFERS, NULL, "input's first element is the output's last");
    /* Adjacent but disjoint is fine; so is an "indices" pointer (ignored) inside the output. */
    hb.input = mem;
    hb.output = mem + 16;
    hb.indices = mem + 16;
    hb.indices_bytes = 64;
    expect_host_exec(&d.op, &hb, CLOPS_SUCCESS, NULL, "output right after the input");

    /* MaxUnpooling: output overlapping the indices, or the input. */
    up_desc u;
    make_up(&u, F32, CLOPS_DATA_TYPE_UINT32, up_in, up_out);
    uint32_t big[128] = {0};
    /* bytes: input [0,48), indices [80,128), output [96,288) */
    clops_host_buffers uh = {big, 48, big + 20, 48, big + 24, 192};
    expect_host_exec(&u.op, &uh, CLOPS_ERROR_ALIASED_BUFFERS, NULL, "MaxUnpooling output overlapping the indices");
    /* input [0,48), indices [320,368), output [32,224) */
    uh.indices = big + 80;
    uh.output = big + 8;
    expect_host_exec(&u.op, &uh, CLOPS_ERROR_ALIASED_BUFFERS, NULL, "MaxUnpooling output overlapping the input");
    /* input [0,48), indices [48,96), output [96,288) */
    uh.indices = big + 12;
    uh.output = big + 24;
    expect_host_exec(&u.op, &uh, CLOPS_SUCCESS, NULL, "MaxUnpooling three disjoint ranges of one array");
}
END_TEST

/* ---- buffers at execution (cl_mem) -------------------------------------------------------------------------- */
static cl_mem make_mem(size_t bytes)
{
    cl_int err;
    cl_mem m = clCreateBuffer(clops_context_cl_context(tc_dev_ctx), CL_MEM_READ_WRITE, bytes, NULL, &err);
    ck_assert_msg(err == CL_SUCCESS && m, "clCreateBuffer(%zu) failed: %d", bytes, (int)err);
    return m;
}

static void expect_cl_exec(clops_operator *op, cl_mem in, cl_mem idx, cl_mem out, clops_status want, const char *needle,
                           const char *what)
{
    clops_buffers cb = {in, idx, out};
    cl_event ev = NULL;
    clops_status st = clops_operator_execute(op, &cb, 0, NULL, &ev);
    ASSERT_STATUS(st, want, what, "clops_operator_execute");
    if (want != CLOPS_SUCCESS)
        check_message(what, "clops_operator_execute", needle);
    if (ev) {
        clWaitForEvents(1, &ev);
        clReleaseEvent(ev);
    }
    clFinish(clops_context_queue(tc_dev_ctx));
}

START_TEST(test_cl_buffer_errors)
{
    if (tc_skip_without_device("test_cl_buffer_errors"))
        return;
    ds_desc d;
    small_d2s(&d);
    clops_operator *op = tc_create(tc_dev_ctx, &d.op, "cl_mem buffer errors", "OpenCL");
    cl_mem a = make_mem(64), b = make_mem(64), small = make_mem(60);
    const unsigned char zero60[60] = {0};
    TC_CL_CHECK(clEnqueueWriteBuffer(clops_context_queue(tc_dev_ctx), small, CL_TRUE, 0, 60, zero60, 0, NULL, NULL),
                "zero upload");

    expect_cl_exec(op, NULL, NULL, b, CLOPS_ERROR_MISSING_BUFFER, NULL, "cl_mem input NULL");
    expect_cl_exec(op, a, NULL, NULL, CLOPS_ERROR_MISSING_BUFFER, NULL, "cl_mem output NULL");
    expect_cl_exec(op, small, NULL, b, CLOPS_ERROR_BUFFER_TOO_SMALL, "60|64", "cl_mem input of 60 bytes, span 64");
    expect_cl_exec(op, a, NULL, small, CLOPS_ERROR_BUFFER_TOO_SMALL, "60|64", "cl_mem output of 60 bytes, span 64");
    expect_cl_exec(op, a, NULL, a, CLOPS_ERROR_ALIASED_BUFFERS, NULL, "cl_mem output == input");
    expect_cl_exec(op, a, b, b, CLOPS_SUCCESS, NULL, "DepthToSpace ignores the indices cl_mem (== output)");
    clops_operator_free(op);

    up_desc u;
    make_up(&u, F32, CLOPS_DATA_TYPE_UINT32, up_in, up_out); /* 48 bytes in, 48 indices, 192 out */
    op = tc_create(tc_dev_ctx, &u.op, "cl_mem MaxUnpooling buffer errors", "OpenCL");
    cl_mem x = make_mem(48), ix = make_mem(48), y = make_mem(192);
    const uint32_t zeros[12] = {0};
    TC_CL_CHECK(clEnqueueWriteBuffer(clops_context_queue(tc_dev_ctx), ix, CL_TRUE, 0, 48, zeros, 0, NULL, NULL),
                "indices upload");
    expect_cl_exec(op, x, NULL, y, CLOPS_ERROR_MISSING_BUFFER, NULL, "cl_mem MaxUnpooling indices NULL");
    expect_cl_exec(op, x, small, y, CLOPS_SUCCESS, NULL, "cl_mem MaxUnpooling indices of 60 >= 48 bytes");
    expect_cl_exec(op, x, ix, a, CLOPS_ERROR_BUFFER_TOO_SMALL, "64|192", "cl_mem MaxUnpooling output 64 bytes, span 192");
    cl_mem big = make_mem(192);
    expect_cl_exec(op, x, big, big, CLOPS_ERROR_ALIASED_BUFFERS, NULL, "cl_mem MaxUnpooling output == indices");
    clReleaseMemObject(big);
    expect_cl_exec(op, y, ix, y, CLOPS_ERROR_ALIASED_BUFFERS, NULL, "cl_mem MaxUnpooling output == input");
    expect_cl_exec(op, x, ix, y, CLOPS_SUCCESS, NULL, "cl_mem MaxUnpooling, good buffers");
    clops_operator_free(op);

    TC_RELEASE_MEMS(x, ix, y, a, b, small);
}
END_TEST

/* Buffers, wait events and a queue of another cl_context are refused by clops,
 * with CL_INVALID_CONTEXT and a message naming what is foreign. */
START_TEST(test_cl_other_context)
{
    if (tc_skip_without_device("test_cl_other_context"))
        return;
    cl_device_id dev = NULL;
    TC_CL_CHECK(clGetCommandQueueInfo(clops_context_queue(tc_dev_ctx), CL_QUEUE_DEVICE, sizeof dev, &dev, NULL),
                "the context's device");
    cl_int err;
    cl_context other = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    ck_assert_msg(other && err == CL_SUCCESS, "clCreateContext: %d", (int)err);
    cl_mem foreign = clCreateBuffer(other, CL_MEM_READ_WRITE, 64, NULL, &err);
    ck_assert(foreign && err == CL_SUCCESS);
    ds_desc d;
    small_d2s(&d);
    clops_operator *op = tc_create(tc_dev_ctx, &d.op, "other context", "OpenCL");
    cl_mem a = make_mem(64), b = make_mem(64);
    expect_cl_exec(op, foreign, NULL, b, (clops_status)CL_INVALID_CONTEXT, "input cl_mem belongs to another",
                   "input of another cl_context");
    expect_cl_exec(op, a, NULL, foreign, (clops_status)CL_INVALID_CONTEXT, "output cl_mem belongs to another",
                   "output of another cl_context");
    cl_event user = clCreateUserEvent(other, &err);
    ck_assert(user && err == CL_SUCCESS);
    clops_buffers cb = {a, NULL, b};
    clops_status st = clops_operator_execute(op, &cb, 1, &user, NULL);
    ASSERT_STATUS(st, (clops_status)CL_INVALID_CONTEXT, "wait event of another cl_context", "clops_operator_execute");
    check_message("wait event of another cl_context", "clops_operator_execute", "wait event 0 belongs to another");
    clSetUserEventStatus(user, CL_COMPLETE);
    clReleaseEvent(user);
    clops_operator_free(op);

    cl_command_queue q = clCreateCommandQueue(other, dev, 0, &err);
    ck_assert(q && err == CL_SUCCESS);
    clops_context *ctx = NULL;
    st = clops_context_create_from_cl(clops_context_cl_context(tc_dev_ctx), dev, q, &ctx);
    ASSERT_STATUS(st, (clops_status)CL_INVALID_CONTEXT, "queue of another cl_context", "clops_context_create_from_cl");
    check_message("queue of another cl_context", "clops_context_create_from_cl", "queue belongs to another cl_context");
    ck_assert_ptr_null(ctx);
    clReleaseCommandQueue(q);
    TC_RELEASE_MEMS(a, b, foreign);
    clReleaseContext(other);
}
END_TEST

/* "Same memory" includes sub-buffers of one parent whose touched ranges overlap. */
START_TEST(test_cl_sub_buffer_aliasing)
{
    if (tc_skip_without_device("test_cl_sub_buffer_aliasing"))
        return;
    cl_context c = clops_context_cl_context(tc_dev_ctx);
    cl_device_id dev = NULL;
    TC_CL_CHECK(clGetContextInfo(c, CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL), "CL_CONTEXT_DEVICES");
    cl_uint align_bits = 0;
    TC_CL_CHECK(clGetDeviceInfo(dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL),
                "CL_DEVICE_MEM_BASE_ADDR_ALIGN");
    size_t A = align_bits / 8 < 64 ? 64 : align_bits / 8; /* aligned, and >= the 64-byte spans */

    ds_desc d;
    small_d2s(&d); /* 64 bytes in, 64 bytes out */
    clops_operator *op = tc_create(tc_dev_ctx, &d.op, "sub-buffer aliasing", "OpenCL");
    cl_mem parent = make_mem(4 * A);
    const unsigned char zeros[64] = {0};
    TC_CL_CHECK(clEnqueueWriteBuffer(clops_context_queue(tc_dev_ctx), parent, CL_TRUE, 0, 64, zeros, 0, NULL, NULL),
                "zero upload");
    cl_int err;
    cl_buffer_region r0 = {0, 2 * A}, r1 = {A, 64}, r2 = {0, 64};
    cl_mem sub0 = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r0, &err);
    ck_assert_msg(err == CL_SUCCESS, "clCreateSubBuffer [0, %zu): %d", 2 * A, (int)err);
    cl_mem sub1 = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r1, &err);
    ck_assert_msg(err == CL_SUCCESS, "clCreateSubBuffer [%zu, +64): %d", A, (int)err);
    cl_mem sub2 = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r2, &err);
    ck_assert_msg(err == CL_SUCCESS, "clCreateSubBuffer [0, 64): %d", (int)err);

    expect_cl_exec(op, parent, NULL, sub2, CLOPS_ERROR_ALIASED_BUFFERS, NULL,
                   "input = parent, output = its sub-buffer [0, 64)");
    expect_cl_exec(op, sub2, NULL, parent, CLOPS_ERROR_ALIASED_BUFFERS, NULL,
                   "input = sub-buffer [0, 64), output = the parent");
    expect_cl_exec(op, sub0, NULL, sub2, CLOPS_ERROR_ALIASED_BUFFERS, NULL,
                   "input = sub-buffer [0, 2A), output = sub-buffer [0, 64)");
    expect_cl_exec(op, sub2, NULL, sub1, CLOPS_SUCCESS, NULL, "disjoint sub-buffers [0, 64) and [A, A+64)");
    TC_RELEASE_MEMS(sub0, sub1, sub2, parent);
    clops_operator_free(op);
}
END_TEST

START_TEST(test_execute_wrong_backend)
{
    /* An empty tensor: NULL cl_mem buffers are valid, so only the backend is wrong. */
    const uint32_t in0[4] = {0, 4, 2, 2}, out0[4] = {0, 1, 4, 4};
    ds_desc d;
    make_ds(&d, D2S, F32, in0, out0, 2, DCR);
    clops_operator *op = tc_create(tc_host_ctx, &d.op, "execute on the host context", "host");
    clops_buffers cb = {NULL, NULL, NULL};
    cl_event ev = NULL;
    clops_status st = clops_operator_execute(op, &cb, 0, NULL, &ev);
    ASSERT_STATUS(st, CLOPS_ERROR_WRONG_BACKEND, "empty DepthToSpace on the host context", "clops_operator_execute");
    check_message("empty DepthToSpace on the host context", "clops_operator_execute", NULL);
    ck_assert_msg(ev == NULL, "clops_operator_execute on the host context returned an event");
    clops_operator_free(op);

    /* Non-empty, with real cl_mem buffers from the device context. */
    if (tc_dev_ctx) {
        ds_desc d2;
        small_d2s(&d2);
        op = tc_create(tc_host_ctx, &d2.op, "execute on the host context", "host");
        cl_mem a = make_mem(64), b = make_mem(64);
        clops_buffers cb2 = {a, NULL, b};
        st = clops_operator_execute(op, &cb2, 0, NULL, NULL);
        ASSERT_STATUS(st, CLOPS_ERROR_WRONG_BACKEND, "DepthToSpace with cl_mem on the host context",
                      "clops_operator_execute");
        clops_operator_free(op);

        up_desc u;
        make_up(&u, F32, CLOPS_DATA_TYPE_UINT32, up_in, up_out);
        op = tc_create(tc_host_ctx, &u.op, "execute on the host context", "host");
        clops_buffers cb3 = {a, a, b};
        st = clops_operator_execute(op, &cb3, 0, NULL, NULL);
        ASSERT_STATUS(st, CLOPS_ERROR_WRONG_BACKEND, "MaxUnpooling with cl_mem on the host context",
                      "clops_operator_execute");
        clops_operator_free(op);
        TC_RELEASE_MEMS(a, b);
    }
}
END_TEST

/* ---- status names and messages ----------------------------------------------------------------------------- */
/* Values this suite pins (callers store them); any later addition to the header is
 * checked through the header's own table below. */
#define STATUS_ROW(name, value) {name, value, #name}
static const struct {
    int code;
    int pinned;
    const char *name;
} pinned_statuses[] = {
    STATUS_ROW(CLOPS_SUCCESS, 0),
    STATUS_ROW(CLOPS_ERROR_NULL_ARGUMENT, -15000),
    STATUS_ROW(CLOPS_ERROR_INVALID_OPERATOR_TYPE, -15001),
    STATUS_ROW(CLOPS_ERROR_UNSUPPORTED_DATA_TYPE, -15002),
    STATUS_ROW(CLOPS_ERROR_DATA_TYPE_MISMATCH, -15003),
    STATUS_ROW(CLOPS_ERROR_INVALID_BLOCK_SIZE, -15004),
    STATUS_ROW(CLOPS_ERROR_INVALID_ORDER, -15005),
    STATUS_ROW(CLOPS_ERROR_CHANNELS_NOT_DIVISIBLE, -15006),
    STATUS_ROW(CLOPS_ERROR_SPATIAL_NOT_DIVISIBLE, -15007),
    STATUS_ROW(CLOPS_ERROR_OUTPUT_SIZE_MISMATCH, -15008),
    STATUS_ROW(CLOPS_ERROR_INDICES_SIZE_MISMATCH, -15009),
    STATUS_ROW(CLOPS_ERROR_UNSUPPORTED_INDEX_TYPE, -15010),
    STATUS_ROW(CLOPS_ERROR_BATCH_CHANNEL_MISMATCH, -15011),
    STATUS_ROW(CLOPS_ERROR_SIZE_OVERFLOW, -15012),
    STATUS_ROW(CLOPS_ERROR_OVERLAPPING_OUTPUT, -15013),
    STATUS_ROW(CLOPS_ERROR_BUFFER_TOO_SMALL, -15014),
    STATUS_ROW(CLOPS_ERROR_ALIASED_BUFFERS, -15015),
    STATUS_ROW(CLOPS_ERROR_MISSING_BUFFER, -15016),
    STATUS_ROW(CLOPS_ERROR_OUTPUT_NOT_DERIVED, -15017),
    STATUS_ROW(CLOPS_ERROR_INDEX_OUT_OF_RANGE, -15100),
    STATUS_ROW(CLOPS_ERROR_WRONG_BACKEND, -15101),
    STATUS_ROW(CLOPS_ERROR_TOO_LARGE_FOR_DEVICE, -15102),
    STATUS_ROW(CLOPS_ERROR_NO_DEVICE, -15200),
    STATUS_ROW(CLOPS_ERROR_INVALID_DEVICE_SELECTION, -15201),
    STATUS_ROW(CLOPS_ERROR_OUT_OF_HOST_MEMORY, -15202),
    STATUS_ROW(CLOPS_ERROR_BUILD_FAILED, -15203),
    STATUS_ROW(CLOPS_ERROR_KERNEL_SOURCE_UNAVAILABLE, -15204),
    STATUS_ROW(CLOPS_ERROR_INTERNAL, -15299),
};

/* Every code of the header's table, with its message. */
#define HEADER_ROW(name, value, msg) {value, #name, msg},
static const struct {
    int code;
    const char *name;
    const char *message;
} header_statuses[] = {CLOPS_STATUS_TABLE(HEADER_ROW)};
#undef HEADER_ROW
#define NUM_HEADER_STATUSES (sizeof header_statuses / sizeof header_statuses[0])

static int in_header_table(int code)
{
    for (size_t k = 0; k < NUM_HEADER_STATUSES; k++)
        if (header_statuses[k].code == code)
            return 1;
    return 0;
}

START_TEST(test_status_names_and_messages)
{
    for (size_t k = 0; k < sizeof pinned_statuses / sizeof pinned_statuses[0]; k++)
        ck_assert_msg(pinned_statuses[k].code == pinned_statuses[k].pinned, "%s is %d, pinned value %d",
                      pinned_statuses[k].name, pinned_statuses[k].code, pinned_statuses[k].pinned);

    for (size_t k = 0; k < NUM_HEADER_STATUSES; k++) {
        const int code = header_statuses[k].code;
        const char *n = clops_status_name(code);
        ck_assert_msg(n != NULL && strcmp(n, header_statuses[k].name) == 0,
                      "clops_status_name(%d) = \"%s\", want \"%s\"", code, n ? n : "(NULL)", header_statuses[k].name);
        const char *m = clops_status_message(code);
        ck_assert_msg(m != NULL && strcmp(m, header_statuses[k].message) == 0,
                      "clops_status_message(%s) = \"%s\", want the header's \"%s\"", header_statuses[k].name,
                      m ? m : "(NULL)", header_statuses[k].message);
        ck_assert_msg(m[0] != '\0', "clops_status_message(%s) is empty", header_statuses[k].name);
        ck_assert_msg(code == 0 || code <= -15000, "%s = %d is inside OpenCL's range", header_statuses[k].name, code);
        for (size_t j = 0; j < k; j++) {
            ck_assert_msg(code != header_statuses[j].code, "%s and %s share the value %d", header_statuses[k].name,
                          header_statuses[j].name, code);
            ck_assert_msg(strcmp(m, header_statuses[j].message) != 0, "%s and %s share the message \"%s\"",
                          header_statuses[k].name, header_statuses[j].name, m);
        }
    }

    /* OpenCL's codes pass through with their names. */
    static const struct {
        int code;
        const char *name;
    } cl_codes[] = {
        {CL_DEVICE_NOT_FOUND, "CL_DEVICE_NOT_FOUND"},
        {CL_MEM_OBJECT_ALLOCATION_FAILURE, "CL_MEM_OBJECT_ALLOCATION_FAILURE"},
        {CL_OUT_OF_RESOURCES, "CL_OUT_OF_RESOURCES"},
        {CL_OUT_OF_HOST_MEMORY, "CL_OUT_OF_HOST_MEMORY"},
        {CL_BUILD_PROGRAM_FAILURE, "CL_BUILD_PROGRAM_FAILURE"},
        {CL_INVALID_VALUE, "CL_INVALID_VALUE"},
        {CL_INVALID_MEM_OBJECT, "CL_INVALID_MEM_OBJECT"},
        {CL_INVALID_KERNEL_ARGS, "CL_INVALID_KERNEL_ARGS"},
        {CL_INVALID_WORK_GROUP_SIZE, "CL_INVALID_WORK_GROUP_SIZE"},
        {CL_INVALID_EVENT_WAIT_LIST, "CL_INVALID_EVENT_WAIT_LIST"},
    };
    for (size_t k = 0; k < sizeof cl_codes / sizeof cl_codes[0]; k++) {
        const char *n = clops_status_name(cl_codes[k].code);
        ck_assert_msg(n != NULL && strcmp(n, cl_codes[k].name) == 0, "clops_status_name(%d) = \"%s\", want \"%s\"",
                      cl_codes[k].code, n ? n : "(NULL)", cl_codes[k].name);
        const char *m = clops_status_message(cl_codes[k].code);
        ck_assert_msg(m != NULL && m[0] != '\0', "clops_status_message(%s) is empty", cl_codes[k].name);
    }

    /* Unknown codes (those the header does not define). */
    static const int unknown[] = {1,      77,     -14999, -15017, -15099, -15103, -15199,
                                  -15298, -15300, -20000, -99999, INT_MIN, INT_MAX};
    int tested = 0;
    for (size_t k = 0; k < sizeof unknown / sizeof unknown[0]; k++) {
        if (in_header_table(unknown[k]))
            continue;
        tested++;
        const char *n = clops_status_name(unknown[k]);
        ck_assert_msg(n != NULL && strcmp(n, "CLOPS_UNKNOWN_STATUS") == 0,
                      "clops_status_name(%d) = \"%s\", want \"CLOPS_UNKNOWN_STATUS\"", unknown[k], n ? n : "(NULL)");
        const char *m = clops_status_message(unknown[k]);
        ck_assert_msg(m != NULL && m[0] != '\0', "clops_status_message(%d) is NULL or empty", unknown[k]);
    }
    ck_assert_msg(tested >= 8, "test bug: too few unknown codes left to test");
}
END_TEST

/* ---- data types ----------------------------------------------------------------------------------------------- */
START_TEST(test_data_type_table)
{
    static const struct {
        clops_data_type t;
        int value;
        const char *name;
        size_t size;
    } types[] = {
        {CLOPS_DATA_TYPE_FLOAT32, 1, "FLOAT32", 4},     {CLOPS_DATA_TYPE_FLOAT16, 2, "FLOAT16", 2},
        {CLOPS_DATA_TYPE_UINT32, 3, "UINT32", 4},       {CLOPS_DATA_TYPE_UINT16, 4, "UINT16", 2},
        {CLOPS_DATA_TYPE_UINT8, 5, "UINT8", 1},         {CLOPS_DATA_TYPE_INT32, 6, "INT32", 4},
        {CLOPS_DATA_TYPE_INT16, 7, "INT16", 2},         {CLOPS_DATA_TYPE_INT8, 8, "INT8", 1},
        {CLOPS_DATA_TYPE_FLOAT64, 9, "FLOAT64", 8},     {CLOPS_DATA_TYPE_UINT64, 10, "UINT64", 8},
        {CLOPS_DATA_TYPE_INT64, 11, "INT64", 8},        {CLOPS_DATA_TYPE_BOOL, 100, "BOOL", 1},
        {CLOPS_DATA_TYPE_BFLOAT16, 101, "BFLOAT16", 2}, {CLOPS_DATA_TYPE_COMPLEX64, 102, "COMPLEX64", 8},
        {CLOPS_DATA_TYPE_COMPLEX128, 103, "COMPLEX128", 16},
    };
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        ck_assert_msg((int)types[k].t == types[k].value, "%s is %d, pinned %d", types[k].name, (int)types[k].t,
                      types[k].value);
        size_t s = clops_data_type_size(types[k].t);
        ck_assert_msg(s == types[k].size, "clops_data_type_size(%s) = %zu, want %zu", types[k].name, s, types[k].size);
        const char *n = clops_data_type_name(types[k].t);
        ck_assert_msg(n != NULL && strcmp(n, types[k].name) == 0, "clops_data_type_name(%d) = \"%s\", want \"%s\"",
                      types[k].value, n ? n : "(NULL)", types[k].name);
    }
    static const int unknown[] = {0, 12, 13, 50, 99, 104, 200, -1, INT_MAX};
    for (size_t k = 0; k < sizeof unknown / sizeof unknown[0]; k++) {
        size_t s = clops_data_type_size((clops_data_type)unknown[k]);
        ck_assert_msg(s == 0, "clops_data_type_size(%d) = %zu, want 0", unknown[k], s);
        const char *n = clops_data_type_name((clops_data_type)unknown[k]);
        ck_assert_msg(n != NULL && strcmp(n, "UNKNOWN") == 0, "clops_data_type_name(%d) = \"%s\", want \"UNKNOWN\"",
                      unknown[k], n ? n : "(NULL)");
    }
}
END_TEST

START_TEST(test_version)
{
    ck_assert_uint_eq(clops_version_number(), CLOPS_VERSION_NUMBER);
    ck_assert_str_eq(clops_version_string(), CLOPS_VERSION_STRING);
}
END_TEST

static Suite *validation_exec_suite(void)
{
    Suite *s = suite_create("validation_exec");
    TCase *tc = tc_suite_case(s, "buffers", -1);
    TC_TESTS(tc, test_host_buffer_too_small, test_host_missing_buffer, test_host_uint64_index_message,
             test_host_aliased_buffers, test_cl_buffer_errors, test_cl_sub_buffer_aliasing, test_cl_other_context,
             test_execute_wrong_backend);

    tc = tc_suite_case(s, "tables", -1);
    TC_TESTS(tc, test_status_names_and_messages, test_data_type_table, test_version);
    return s;
}

int main(void)
{
    return tc_main(validation_exec_suite());
}
