/*
 * test_depth_space_common.h - what the DepthToSpace/SpaceToDepth suites share
 * (test_ops.c, test_ops_queues.c): the output sizes, layouts through strides,
 * one case run on every path against the naive reference (reference.c), the
 * round trip, and DirectML's first example. Included by one .c file each.
 */
#ifndef CLOPS_TEST_DEPTH_SPACE_COMMON_H
#define CLOPS_TEST_DEPTH_SPACE_COMMON_H

#include "reference.h"
#include "test_common.h"

static const char *op_name(clops_operator_type t)
{
    return t == CLOPS_OPERATOR_DEPTH_TO_SPACE ? "DepthToSpace" : "SpaceToDepth";
}

static void ds_out_sizes(clops_operator_type op, uint32_t b, const uint32_t in[4], uint32_t out[4])
{
    out[0] = in[0];
    if (op == CLOPS_OPERATOR_DEPTH_TO_SPACE) {
        out[1] = in[1] / (b * b);
        out[2] = in[2] * b;
        out[3] = in[3] * b;
    } else {
        out[1] = in[1] * b * b;
        out[2] = in[2] / b;
        out[3] = in[3] / b;
    }
}

/* Layouts through strides. */
typedef enum layout {
    LAYOUT_PACKED,
    LAYOUT_NHWC,    /* {H*W*C, 1, W*C, C} */
    LAYOUT_PADDED,  /* row stride W+3, plane stride H*(W+3)+5, batch stride C*plane+11 */
    LAYOUT_BCAST_N, /* zero stride on N (inputs only) */
    LAYOUT_BCAST_H, /* zero stride on H (inputs only) */
    LAYOUT_BCAST_C, /* zero stride on C (inputs only) */
    LAYOUT_BCAST_W  /* zero stride on W (inputs only) */
} layout;

static const char *layout_name(layout l)
{
    static const char *names[] = {"packed", "NHWC", "padded", "broadcast-N", "broadcast-H", "broadcast-C",
                                  "broadcast-W"};
    return names[l];
}

static const uint64_t *layout_strides(layout l, const uint32_t s[4], uint64_t st[4])
{
    const uint64_t N = s[0], C = s[1], H = s[2], W = s[3];
    (void)N;
    switch (l) {
    case LAYOUT_PACKED:
        return NULL;
    case LAYOUT_NHWC:
        st[0] = H * W * C, st[1] = 1, st[2] = W * C, st[3] = C;
        break;
    case LAYOUT_PADDED:
        st[3] = 1, st[2] = W + 3, st[1] = H * (W + 3) + 5, st[0] = C * st[1] + 11;
        break;
    case LAYOUT_BCAST_N:
        st[0] = 0, st[1] = H * W, st[2] = W, st[3] = 1;
        break;
    case LAYOUT_BCAST_H:
        st[0] = C * W, st[1] = W, st[2] = 0, st[3] = 1;
        break;
    case LAYOUT_BCAST_C:
        st[0] = H * W, st[1] = 0, st[2] = W, st[3] = 1;
        break;
    case LAYOUT_BCAST_W:
        st[0] = C * H, st[1] = H, st[2] = 1, st[3] = 0;
        break;
    }
    return st;
}

/* One DepthToSpace / SpaceToDepth case. */
typedef struct ds_case {
    clops_operator_type op;
    clops_data_type type;
    clops_depth_space_order order;
    uint32_t block;
    uint32_t in_sizes[4];
    layout in_layout;
    layout out_layout;
} ds_case;

static void ds_label(char *buf, size_t n, const ds_case *c, uint64_t seed)
{
    uint32_t os[4];
    char a[64], b[64];
    ds_out_sizes(c->op, c->block, c->in_sizes, os);
    snprintf(buf, n, "%s %s %s block %u: input %s (%s) -> output %s (%s), seed %" PRIu64, op_name(c->op),
             tc_type(c->type)->name, tc_order_name(c->order), c->block, tc_shape_str(a, sizeof a, c->in_sizes),
             layout_name(c->in_layout), tc_shape_str(b, sizeof b, os), layout_name(c->out_layout), seed);
}

/* The descriptors of case `c` with the given strides (NULL: packed); the output
 * sizes follow the operator's rule. `desc` points into `d`. */
typedef struct ds_descs {
    clops_tensor_desc in, out;
    clops_depth_to_space_desc d2s;
    clops_space_to_depth_desc s2d;
    clops_operator_desc desc;
} ds_descs;

static void ds_describe(const ds_case *c, const uint64_t *in_st, const uint64_t *out_st, ds_descs *d)
{
    uint32_t os[4];
    ds_out_sizes(c->op, c->block, c->in_sizes, os);
    d->in = (clops_tensor_desc){c->type, {c->in_sizes[0], c->in_sizes[1], c->in_sizes[2], c->in_sizes[3]}, in_st};
    d->out = (clops_tensor_desc){c->type, {os[0], os[1], os[2], os[3]}, out_st};
    d->d2s = (clops_depth_to_space_desc){&d->in, &d->out, c->block, c->order};
    d->s2d = (clops_space_to_depth_desc){&d->in, &d->out, c->block, c->order};
    d->desc = (clops_operator_desc){c->op, c->op == CLOPS_OPERATOR_DEPTH_TO_SPACE ? (const void *)&d->d2s
                                                                                 : (const void *)&d->s2d};
}

/* Computes the expected output buffer with the reference: a copy of `out_init`
 * with the output elements written. */
static void ds_reference(const ds_case *c, const void *in, const uint64_t *in_st, void *want,
                         const uint64_t *out_st, const char *label)
{
    size_t es = tc_type(c->type)->size;
    uint32_t os[4];
    ds_out_sizes(c->op, c->block, c->in_sizes, os);
    ref_tensor x, y;
    ref_tensor_init(&x, (void *)(uintptr_t)in, es, c->in_sizes, in_st);
    ref_tensor_init(&y, want, es, os, out_st);
    ref_order ro = c->order == CLOPS_ORDER_DEPTH_COLUMN_ROW ? REF_ORDER_DCR : REF_ORDER_CRD;
    int r = c->op == CLOPS_OPERATOR_DEPTH_TO_SPACE ? ref_depth_to_space(&x, &y, c->block, ro)
                                                    : ref_space_to_depth(&x, &y, c->block, ro);
    ck_assert_msg(r == 0, "%s: test bug, reference rejected the sizes", label);
}

/* Runs a case on every path against the reference (or, when `only` is not NULL,
 * on that context only). The input is random bits from `seed` (or `input` when
 * given, of the input span). `tail` extra elements after the output span belong
 * to the buffer and must keep their sentinel. */
static void ds_run_on(const ds_case *c, const void *input, uint64_t seed, uint32_t tail, clops_context *only,
                      unsigned paths)
{
    char label[256];
    ds_label(label, sizeof label, c, seed);
    size_t es = tc_type(c->type)->size;
    uint32_t os[4];
    ds_out_sizes(c->op, c->block, c->in_sizes, os);
    uint64_t ist[4], ost[4];
    const uint64_t *in_st = layout_strides(c->in_layout, c->in_sizes, ist);
    const uint64_t *out_st = layout_strides(c->out_layout, os, ost);

    ds_descs d;
    ds_describe(c, in_st, out_st, &d);

    size_t in_bytes = tc_tensor_bytes(&d.in);
    size_t out_span_bytes = tc_tensor_bytes(&d.out);
    size_t out_bytes = out_span_bytes + (size_t)tail * es;
    void *in = tc_malloc(in_bytes);
    if (input)
        memcpy(in, input, in_bytes);
    else
        tc_fill_random(in, in_bytes, seed);
    void *init = tc_malloc(out_bytes);
    tc_fill_sentinel(init, out_bytes);
    void *want = tc_memdup(init, out_bytes);
    ds_reference(c, in, in_st, want, out_st, label);

    clops_status vs = clops_operator_validate(&d.desc);
    ck_assert_msg(vs == CLOPS_SUCCESS, "%s: clops_operator_validate returned %s (%s)", label,
                  clops_status_name(vs), clops_last_error_message());

    tc_bufs b = {in, in_bytes, NULL, 0, init, out_bytes};
    if (only)
        tc_check_context_paths(only, "caller's out-of-order queue", paths, &d.desc, &b, CLOPS_SUCCESS, want, want,
                               es, label);
    else
        tc_check_all_paths(&d.desc, &b, want, es, label);
    free(in);
    free(init);
    free(want);
}


/* x -> first -> second -> must equal x. `d2s_first`: SpaceToDepth(DepthToSpace(x)),
 * else DepthToSpace(SpaceToDepth(x)). */
static void round_trip(clops_data_type type, clops_depth_space_order order, uint32_t b, const uint32_t xs[4],
                       int d2s_first, uint64_t seed, clops_context *only, unsigned paths)
{
    char label[256], a[64];
    snprintf(label, sizeof label, "round trip %s(%s(x)) %s %s block %u, x %s, seed %" PRIu64,
             d2s_first ? "SpaceToDepth" : "DepthToSpace", d2s_first ? "DepthToSpace" : "SpaceToDepth",
             tc_type(type)->name, tc_order_name(order), b, tc_shape_str(a, sizeof a, xs), seed);
    size_t es = tc_type(type)->size;
    clops_operator_type first = d2s_first ? CLOPS_OPERATOR_DEPTH_TO_SPACE : CLOPS_OPERATOR_SPACE_TO_DEPTH;
    clops_operator_type second = d2s_first ? CLOPS_OPERATOR_SPACE_TO_DEPTH : CLOPS_OPERATOR_DEPTH_TO_SPACE;
    ds_case first_case = {first, type, order, b, {xs[0], xs[1], xs[2], xs[3]}, LAYOUT_PACKED, LAYOUT_PACKED};
    ds_descs d1, d2;
    ds_describe(&first_case, NULL, NULL, &d1);
    ds_case second_case = {second, type, order, b, {0, 0, 0, 0}, LAYOUT_PACKED, LAYOUT_PACKED};
    memcpy(second_case.in_sizes, d1.out.sizes, sizeof second_case.in_sizes);
    ds_describe(&second_case, NULL, NULL, &d2);
    size_t xb = tc_tensor_bytes(&d1.in), mb = tc_tensor_bytes(&d1.out);

    unsigned char *x = tc_malloc(xb), *mid = tc_malloc(mb), *back = tc_malloc(xb);
    tc_fill_random(x, xb, seed);

    for (int bi = 0; bi < (only ? 1 : tc_backend_count()); bi++) {
        clops_context *ctx = only ? only : tc_backend(bi);
        const char *ctx_name = only ? "caller's out-of-order queue" : tc_backend_name(bi);
        clops_operator *op1 = tc_create(ctx, &d1.desc, label, ctx_name);
        clops_operator *op2 = tc_create(ctx, &d2.desc, label, ctx_name);
        char path[96];

        if (paths & TC_PATH_EXECUTE_HOST) {
            memset(back, 0, xb);
            clops_host_buffers h1 = {x, xb, NULL, 0, mid, mb}, h2 = {mid, mb, NULL, 0, back, xb};
            clops_status st = clops_operator_execute_host(op1, &h1);
            ck_assert_msg(st == CLOPS_SUCCESS, "%s [%s]: first execute_host: %s (%s)", label, ctx_name,
                          clops_status_name(st), clops_last_error_message());
            st = clops_operator_execute_host(op2, &h2);
            ck_assert_msg(st == CLOPS_SUCCESS, "%s [%s]: second execute_host: %s (%s)", label, ctx_name,
                          clops_status_name(st), clops_last_error_message());
            snprintf(path, sizeof path, "%s, execute_host twice", ctx_name);
            tc_check_bytes(back, x, xb, es, label, path);
        }

        if ((paths & TC_PATH_CL_MEM) && clops_context_backend(ctx) == CLOPS_BACKEND_OPENCL) {
            /* Device chain: upload -> op1 -> op2, each waiting on the previous event. */
            cl_command_queue q = clops_context_queue(ctx);
            cl_int err;
            cl_mem bx = clCreateBuffer(clops_context_cl_context(ctx), CL_MEM_READ_WRITE, xb, NULL, &err);
            ck_assert_msg(err == CL_SUCCESS, "%s: clCreateBuffer %d", label, (int)err);
            cl_mem bm = clCreateBuffer(clops_context_cl_context(ctx), CL_MEM_READ_WRITE, mb, NULL, &err);
            ck_assert_msg(err == CL_SUCCESS, "%s: clCreateBuffer %d", label, (int)err);
            cl_mem bb = clCreateBuffer(clops_context_cl_context(ctx), CL_MEM_READ_WRITE, xb, NULL, &err);
            ck_assert_msg(err == CL_SUCCESS, "%s: clCreateBuffer %d", label, (int)err);
            cl_event up = NULL, e1 = NULL, e2 = NULL;
            TC_CL_CHECK(clEnqueueWriteBuffer(q, bx, CL_FALSE, 0, xb, x, 0, NULL, &up), label);
            clops_buffers c1 = {bx, NULL, bm}, c2 = {bm, NULL, bb};
            clops_status st = clops_operator_execute(op1, &c1, 1, &up, &e1);
            ck_assert_msg(st == CLOPS_SUCCESS && e1, "%s [cl_mem chain]: first execute: %s (%s)", label,
                          clops_status_name(st), clops_last_error_message());
            st = clops_operator_execute(op2, &c2, 1, &e1, &e2);
            ck_assert_msg(st == CLOPS_SUCCESS && e2, "%s [cl_mem chain]: second execute: %s (%s)", label,
                          clops_status_name(st), clops_last_error_message());
            memset(back, 0, xb);
            TC_CL_CHECK(clEnqueueReadBuffer(q, bb, CL_TRUE, 0, xb, back, 1, &e2, NULL), label);
            tc_check_bytes(back, x, xb, es, label, "OpenCL device, cl_mem chain with events");
            clReleaseEvent(up);
            clReleaseEvent(e1);
            clReleaseEvent(e2);
            clReleaseMemObject(bx);
            clReleaseMemObject(bm);
            clReleaseMemObject(bb);
        }
        clops_operator_free(op1);
        clops_operator_free(op2);
    }
    free(x);
    free(mid);
    free(back);
}


/* ---- the published examples ------------------------------------------------------------ */
/* dml_depth_to_space1.txt: InputTensor (Sizes:{1, 8, 2, 3}, DataType:UINT32) */
static const uint32_t dml_input[1 * 8 * 2 * 3] = {
    0,  1,  2,  3,  4,  5,  /* c0 */
    9,  10, 11, 12, 13, 14, /* c1 */
    18, 19, 20, 21, 22, 23, /* c2 */
    27, 28, 29, 30, 31, 32, /* c3 */
    36, 37, 38, 39, 40, 41, /* c4 */
    45, 46, 47, 48, 49, 50, /* c5 */
    54, 55, 56, 57, 58, 59, /* c6 */
    63, 64, 65, 66, 67, 68, /* c7 */
};
/* Example 1. Depth-column-row order, OutputTensor (Sizes:{1, 2, 4, 6}) */
static const uint32_t dml_output_dcr[1 * 2 * 4 * 6] = {
    0,  18, 1,  19, 2,  20, 36, 54, 37, 55, 38, 56, 3,  21, 4,  22, 5,  23, 39, 57, 40, 58, 41, 59,
    9,  27, 10, 28, 11, 29, 45, 63, 46, 64, 47, 65, 12, 30, 13, 31, 14, 32, 48, 66, 49, 67, 50, 68,
};
/* Example 2. Column-row-depth order, OutputTensor (Sizes:{1, 2, 4, 6}) */
static const uint32_t dml_output_crd[1 * 2 * 4 * 6] = {
    0,  9,  1,  10, 2,  11, 18, 27, 19, 28, 20, 29, 3,  12, 4,  13, 5,  14, 21, 30, 22, 31, 23, 32,
    36, 45, 37, 46, 38, 47, 54, 63, 55, 64, 56, 65, 39, 48, 40, 49, 41, 50, 57, 66, 58, 67, 59, 68,
};
static const uint32_t dml_in_sizes[4] = {1, 8, 2, 3};

#endif /* CLOPS_TEST_DEPTH_SPACE_COMMON_H */
