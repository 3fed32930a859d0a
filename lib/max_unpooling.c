/* max_unpooling.c - the plan for MaxUnpooling on OpenCL.
 *
 * Launches: zero_fill over the output, scatter over the input, verify over the
 * input; then one 4-byte read of the status word. Bit 0 reports out-of-range
 * indices (never written anywhere). Bit 1 means two input elements with
 * different bits shared an index: the device's write order is unspecified, so
 * the host redoes the scatter in input order (the last duplicate wins), which
 * makes the result the same on every run and every device. Duplicates that
 * carry identical bits, as overlapping max-pooling windows produce, cost only
 * the verify pass. */
#include <stdio.h>

#include "internal.h"

enum { LAUNCH_ZERO, LAUNCH_SCATTER, LAUNCH_VERIFY };
/* CPUs: a work-item walks 512 input positions, one work-item per group, so the
 * compiler vectorises along the row instead of across work-items (measured on
 * PoCL). Other devices: one position per work-item, the coalesced pattern. */
#define UNPOOL_CPU_CHUNK 512u
#define FLAG_OUT_OF_RANGE 1u
#define FLAG_CONFLICT 2u

clops_status clops_max_unpooling_prepare(clops_operator *op)
{
    const clops_op_params *p = &op->params;
    op->offset_64 = !clops_fits_u32(p);
    op->kernel_name = "scatter";
    const bool cpu = (op->ctx->info.type & CL_DEVICE_TYPE_CPU) != 0;
    op->chunk = cpu ? UNPOOL_CPU_CHUNK : 1u;
    snprintf(op->options, sizeof op->options,
             "-DELEM_BYTES=%zu -DOFFSET_64=%d -DINDEX_BYTES=%zu -DOUT_PACKED=%d -DCHUNK=%uu", p->input.elem_size,
             op->offset_64, p->indices.elem_size, p->output.packed, op->chunk);
    if (p->output.count == 0) return CLOPS_SUCCESS; /* nothing can be written */
    cl_int err;
    op->flag = clCreateBuffer(op->ctx->cl_ctx, CL_MEM_READ_WRITE, sizeof(cl_uint), NULL, &err);
    if (!op->flag) return clops_fail_cl(err, "clCreateBuffer(status word)");
    cl_program program;
    clops_status st = clops_program_get(op->ctx, "max_unpooling.cl", op->options, &program, &op->program_origin);
    if (st != CLOPS_SUCCESS) return st;
    const uint64_t out_items[3] = {p->output.sizes[3], p->output.sizes[2], p->output.sizes[0] * p->output.sizes[1]};
    const uint64_t in_items[3] = {(p->input.sizes[3] + op->chunk - 1) / op->chunk, p->input.sizes[2],
                                  p->input.sizes[0] * p->input.sizes[1]};
    static const size_t row_local[3] = {1, 1, 1};
    const size_t *scatter_local = cpu ? row_local : NULL;
    st = clops_operator_add_launch(op, program, "zero_fill", 3, out_items, NULL);
    if (st == CLOPS_SUCCESS && p->input.count) st = clops_operator_add_launch(op, program, "scatter", 3, in_items, scatter_local);
    if (st == CLOPS_SUCCESS && p->input.count) st = clops_operator_add_launch(op, program, "verify", 3, in_items, scatter_local);
    return st;
}

static clops_status set_args(const clops_operator *op, const clops_buffers *b)
{
    const clops_op_params *p = &op->params;
    const clops_launch *zero = &op->launches[LAUNCH_ZERO];
    const uint64_t *const out_dims[2] = {p->output.sizes, p->output.strides};
    clops_status st = clops_set_arg(zero->kernel, 0, sizeof(cl_mem), &b->output);
    if (st == CLOPS_SUCCESS) st = clops_set_dims_args(op, zero->kernel, 1, 2, out_dims);
    const uint64_t *const dims[5] = {p->input.sizes, p->input.strides, p->indices.strides, p->output.sizes,
                                     p->output.strides};
    for (unsigned i = LAUNCH_SCATTER; st == CLOPS_SUCCESS && i < op->num_launches; i++) {
        cl_kernel k = op->launches[i].kernel;
        st = clops_set_arg(k, 0, sizeof(cl_mem), &b->input);
        if (st == CLOPS_SUCCESS) st = clops_set_arg(k, 1, sizeof(cl_mem), &b->indices);
        if (st == CLOPS_SUCCESS) st = clops_set_arg(k, 2, sizeof(cl_mem), &b->output);
        if (st == CLOPS_SUCCESS) st = clops_set_arg(k, 3, sizeof(cl_mem), &op->flag);
        if (st == CLOPS_SUCCESS) st = clops_set_dims_args(op, k, 4, 5, dims);
        if (st == CLOPS_SUCCESS) st = clops_set_offset_arg(op, k, 9, p->output.count);
    }
    return st;
}

/* Maps a buffer's first `bytes` (blocking). */
static clops_status map(cl_command_queue q, cl_mem m, cl_map_flags flags, size_t bytes, void **out)
{
    cl_int err;
    *out = clEnqueueMapBuffer(q, m, CL_TRUE, flags, 0, bytes, 0, NULL, NULL, &err);
    return *out ? CLOPS_SUCCESS : clops_fail_cl(err, "clEnqueueMapBuffer");
}

/* Different values met on one index: redo the scatter on the host, in input order. */
static clops_status resolve_on_host(const clops_operator *op, const clops_buffers *b)
{
    const clops_op_params *p = &op->params;
    cl_command_queue q = op->ctx->queue;
    void *x = NULL, *idx = NULL, *y = NULL;
    clops_status st = map(q, b->input, CL_MAP_READ, (size_t)p->input.span_bytes, &x);
    if (st == CLOPS_SUCCESS) st = map(q, b->indices, CL_MAP_READ, (size_t)p->indices.span_bytes, &idx);
    if (st == CLOPS_SUCCESS) st = map(q, b->output, CL_MAP_READ | CL_MAP_WRITE, (size_t)p->output.span_bytes, &y);
    if (st == CLOPS_SUCCESS) clops_host_unpool_scatter(p, x, idx, y);
    if (y) clEnqueueUnmapMemObject(q, b->output, y, 0, NULL, NULL);
    if (idx) clEnqueueUnmapMemObject(q, b->indices, idx, 0, NULL, NULL);
    if (x) clEnqueueUnmapMemObject(q, b->input, x, 0, NULL, NULL);
    const cl_int err = clFinish(q);
    if (st == CLOPS_SUCCESS && err != CL_SUCCESS) st = clops_fail_cl(err, "clFinish");
    return st;
}

clops_status clops_max_unpooling_enqueue(clops_operator *op, const clops_buffers *b, cl_uint nwait,
                                         const cl_event *wait, cl_event *event)
{
    const clops_op_params *p = &op->params;
    if (p->output.count == 0) {
        if (p->input.count)
            return clops_fail(CLOPS_ERROR_INDEX_OUT_OF_RANGE,
                              "all %llu indices are out of range: the output has no elements",
                              (unsigned long long)p->input.count);
        return clops_enqueue_nothing(op->ctx, nwait, wait, event);
    }
    cl_command_queue q = op->ctx->queue;
    clops_status st = set_args(op, b);
    if (st != CLOPS_SUCCESS) return st;
    /* The caller's queue may be out of order: chain every command by events. */
    cl_event prev = NULL, next = NULL;
    const cl_uint zero = 0;
    cl_int err = clEnqueueFillBuffer(q, op->flag, &zero, sizeof zero, 0, sizeof zero, nwait, nwait ? wait : NULL, &prev);
    if (err != CL_SUCCESS) return clops_fail_cl(err, "clEnqueueFillBuffer(status word)");
    for (unsigned i = 0; st == CLOPS_SUCCESS && i < op->num_launches; i++) {
        if (i == LAUNCH_ZERO && p->output.packed) {
            /* A packed output is one contiguous span: the driver's fill zeroes it
             * fastest (on PoCL a 1-byte pattern is a memset: 34 GB/s against 7 to
             * 29 GB/s for 2- to 128-byte patterns, 16 MiB). */
            const unsigned char zero_byte = 0;
            err = clEnqueueFillBuffer(q, b->output, &zero_byte, 1, 0, (size_t)p->output.span_bytes, 1, &prev,
                                      &next);
            if (err != CL_SUCCESS) st = clops_fail_cl(err, "clEnqueueFillBuffer(output)");
        } else {
            st = clops_enqueue_launch(op, &op->launches[i], 1, &prev, &next);
        }
        if (st == CLOPS_SUCCESS) {
            clReleaseEvent(prev);
            prev = next;
        }
    }
    cl_uint flag = 0;
    err = clEnqueueReadBuffer(q, op->flag, CL_TRUE, 0, sizeof flag, &flag, 1, &prev, NULL);
    clReleaseEvent(prev);
    if (st != CLOPS_SUCCESS) {
        clFinish(q); /* nothing of ours may still run on the caller's buffers */
        return st;
    }
    if (err != CL_SUCCESS) {
        clFinish(q); /* the kernels may still be writing the caller's output */
        return clops_fail_cl(err, "clEnqueueReadBuffer(status word)");
    }
    if (flag & FLAG_CONFLICT) st = resolve_on_host(op, b);
    if (st == CLOPS_SUCCESS && event) st = clops_enqueue_nothing(op->ctx, 0, NULL, event);
    if (st == CLOPS_SUCCESS && (flag & FLAG_OUT_OF_RANGE))
        st = clops_fail(CLOPS_ERROR_INDEX_OUT_OF_RANGE,
                        "an index is negative or not below the output's %llu elements; those elements were skipped",
                        (unsigned long long)p->output.count);
    return st;
}
