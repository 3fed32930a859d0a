/* operator.c - operator objects: create (validate + prepare), execute, free. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

bool clops_fits_u32(const clops_op_params *p)
{
    /* Every offset a kernel forms is below a span, and every size product below a
     * count, so 32-bit arithmetic is exact when all of them fit; the margin covers
     * a work-item's chunk start past the end of a row (guarded, but computed). */
    const uint64_t limit = UINT32_MAX - (UINT64_C(1) << 24);
    const clops_tensor *t[3] = {&p->input, &p->indices, &p->output};
    for (int i = 0; i < 3; i++)
        if (t[i]->span > limit || t[i]->count > limit) return false;
    return true;
}

clops_status clops_set_arg(cl_kernel kernel, cl_uint index, size_t size, const void *value)
{
    const cl_int err = clSetKernelArg(kernel, index, size, value);
    return err == CL_SUCCESS ? CLOPS_SUCCESS : clops_fail_cl(err, "clSetKernelArg");
}

clops_status clops_operator_add_launch(clops_operator *op, cl_program program, const char *name, unsigned work_dim,
                                       const uint64_t items[3], const size_t *want)
{
    if (op->num_launches == CLOPS_MAX_LAUNCHES) return clops_fail(CLOPS_ERROR_INTERNAL, "too many launches");
    clops_launch *l = &op->launches[op->num_launches];
    cl_int err;
    l->kernel = clCreateKernel(program, name, &err);
    if (!l->kernel) return clops_fail_cl(err, "clCreateKernel");
    op->num_launches++;
    l->work_dim = work_dim;
    return clops_schedule(op->ctx, l->kernel, work_dim, items, want, l->global, l->local, &op->local_size_origin);
}

clops_status clops_enqueue_launch(const clops_operator *op, const clops_launch *l, cl_uint nwait,
                                  const cl_event *wait, cl_event *event)
{
    const cl_int err = clEnqueueNDRangeKernel(op->ctx->queue, l->kernel, l->work_dim, NULL, l->global, l->local,
                                              nwait, nwait ? wait : NULL, event);
    return err == CL_SUCCESS ? CLOPS_SUCCESS : clops_fail_cl(err, "clEnqueueNDRangeKernel");
}

static clops_status check_device_limits(const clops_operator *op)
{
    const clops_op_params *p = &op->params;
    const clops_tensor *t[3] = {&p->input, &p->indices, &p->output};
    static const char *names[3] = {"input", "indices", "output"};
    for (int i = 0; i < 3; i++)
        if (op->ctx->info.max_alloc_bytes && t[i]->span_bytes > op->ctx->info.max_alloc_bytes)
            return clops_fail(CLOPS_ERROR_TOO_LARGE_FOR_DEVICE,
                              "%s spans %llu bytes, more than the device's maximum allocation of %llu", names[i],
                              (unsigned long long)t[i]->span_bytes, (unsigned long long)op->ctx->info.max_alloc_bytes);
    return CLOPS_SUCCESS;
}

/* Releases what a failed prepare left and marks the operator for the host path. */
static void fall_back(clops_operator *op, const char *why)
{
    for (unsigned i = 0; i < op->num_launches; i++) clReleaseKernel(op->launches[i].kernel);
    op->num_launches = 0;
    if (op->flag) clReleaseMemObject(op->flag);
    op->flag = NULL;
    op->fallback = true;
    op->kernel_name = "";
    op->program_origin = "";
    op->local_size_origin = "";
    snprintf(op->fallback_reason, sizeof op->fallback_reason, "%s", why);
}

/* The OpenCL plan, or the host path where the device cannot run it: tensors
 * past 2^32 elements without 64-bit integers, no compiler and no cached binary,
 * or a failed build. Other failures are errors. */
static clops_status prepare_on_device(clops_operator *op)
{
    if (!clops_fits_u32(&op->params) && !op->ctx->info.has_int64) {
        char why[256];
        snprintf(why, sizeof why, "tensors past 2^32 elements need 64-bit integers, which %s lacks",
                 op->ctx->info.device_name);
        fall_back(op, why);
        return CLOPS_SUCCESS;
    }
    const clops_status st = op->params.type == CLOPS_OPERATOR_MAX_UNPOOLING ? clops_max_unpooling_prepare(op)
                                                                            : clops_depth_space_prepare(op);
    if (st == CLOPS_ERROR_COMPILER_UNAVAILABLE || st == CLOPS_ERROR_BUILD_FAILED) {
        fall_back(op, clops_last_error_message());
        return CLOPS_SUCCESS;
    }
    return st;
}

clops_status clops_operator_create(clops_context *ctx, const clops_operator_desc *desc, clops_operator **out)
{
    return clops_operator_create_forced(ctx, desc, NULL, out);
}

clops_status clops_operator_create_forced(clops_context *ctx, const clops_operator_desc *desc,
                                          const clops_tuning *force, clops_operator **out)
{
    if (!out) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_operator_create: out is NULL");
    *out = NULL;
    if (!ctx) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_operator_create: context is NULL");
    clops_operator *op = calloc(1, sizeof *op);
    if (!op) return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "operator of %zu bytes", sizeof *op);
    op->ctx = ctx;
    op->kernel_name = "";
    op->program_origin = "";
    op->local_size_origin = "";
    if (force) {
        op->forced = true;
        op->force = *force;
    }
    clops_status st = clops_validate_operator(desc, &op->params);
    if (st == CLOPS_SUCCESS && ctx->backend == CLOPS_BACKEND_OPENCL) {
        st = check_device_limits(op);
        if (st == CLOPS_SUCCESS) st = prepare_on_device(op);
    }
    if (st != CLOPS_SUCCESS) {
        clops_operator_free(op);
        return st;
    }
    *out = op;
    return CLOPS_SUCCESS;
}

void clops_operator_free(clops_operator *op)
{
    if (!op) return;
    for (unsigned i = 0; i < op->num_launches; i++) clReleaseKernel(op->launches[i].kernel);
    if (op->flag) clReleaseMemObject(op->flag);
    free(op);
}

/* CL_MEM_SIZE of a buffer and the buffer it is carved from (itself if none). */
static clops_status mem_extent(cl_mem m, size_t *size, cl_mem *parent, size_t *offset)
{
    cl_int err = clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof *size, size, NULL);
    if (err != CL_SUCCESS) return clops_fail_cl(err, "clGetMemObjectInfo(CL_MEM_SIZE)");
    *parent = NULL;
    *offset = 0;
    err = clGetMemObjectInfo(m, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof *parent, parent, NULL);
    if (err == CL_SUCCESS && *parent)
        err = clGetMemObjectInfo(m, CL_MEM_OFFSET, sizeof *offset, offset, NULL);
    if (err != CL_SUCCESS) return clops_fail_cl(err, "clGetMemObjectInfo(CL_MEM_OFFSET)");
    if (!*parent) *parent = m;
    return CLOPS_SUCCESS;
}

static clops_status check_cl_buffers(const clops_op_params *p, const clops_buffers *b)
{
    const bool unpool = p->type == CLOPS_OPERATOR_MAX_UNPOOLING;
    const clops_tensor *t[3] = {&p->input, &p->indices, &p->output};
    const cl_mem m[3] = {b->input, b->indices, b->output};
    static const char *names[3] = {"input", "indices", "output"};
    size_t size[3] = {0}, offset[3] = {0};
    cl_mem parent[3] = {NULL};
    for (int i = 0; i < 3; i++) {
        if ((i == 1 && !unpool) || t[i]->span_bytes == 0) continue;
        if (!m[i])
            return clops_fail(CLOPS_ERROR_MISSING_BUFFER, "%s cl_mem is NULL but the tensor spans %llu bytes",
                              names[i], (unsigned long long)t[i]->span_bytes);
        clops_status st = mem_extent(m[i], &size[i], &parent[i], &offset[i]);
        if (st != CLOPS_SUCCESS) return st;
        if (size[i] < t[i]->span_bytes)
            return clops_fail(CLOPS_ERROR_BUFFER_TOO_SMALL, "%s cl_mem has %zu bytes, its tensor spans %llu",
                              names[i], size[i], (unsigned long long)t[i]->span_bytes);
    }
    for (int i = 0; i < 2; i++) /* output against each input, through sub-buffers */
        if (parent[i] && parent[2] && parent[i] == parent[2] && offset[i] < offset[2] + t[2]->span_bytes &&
            offset[2] < offset[i] + t[i]->span_bytes)
            return clops_fail(CLOPS_ERROR_ALIASED_BUFFERS, "output cl_mem overlaps the %s cl_mem", names[i]);
    return CLOPS_SUCCESS;
}

/* Buffers and wait events must belong to the operator's cl_context: OpenCL
 * would refuse them only at an enqueue, after clops may have started work. */
static clops_status check_same_context(const clops_operator *op, const clops_buffers *b, cl_uint nwait,
                                       const cl_event *wait)
{
    const clops_context *ctx = op->ctx;
    const clops_op_params *p = &op->params;
    const clops_tensor *t[3] = {&p->input, &p->indices, &p->output};
    const cl_mem m[3] = {b->input, b->indices, b->output};
    static const char *names[3] = {"input", "indices", "output"};
    for (int i = 0; i < 3; i++) {
        cl_context c = NULL;
        /* only the buffers the operator uses (check_cl_buffers' rule) */
        if ((i == 1 && p->type != CLOPS_OPERATOR_MAX_UNPOOLING) || t[i]->span_bytes == 0) continue;
        const cl_int err = clGetMemObjectInfo(m[i], CL_MEM_CONTEXT, sizeof c, &c, NULL);
        if (err != CL_SUCCESS) return clops_fail_cl(err, "clGetMemObjectInfo(CL_MEM_CONTEXT)");
        if (c != ctx->cl_ctx)
            return clops_fail((clops_status)CL_INVALID_CONTEXT, "the %s cl_mem belongs to another cl_context",
                              names[i]);
    }
    for (cl_uint i = 0; i < nwait; i++) {
        cl_context c = NULL;
        const cl_int err = wait[i] ? clGetEventInfo(wait[i], CL_EVENT_CONTEXT, sizeof c, &c, NULL) : CL_INVALID_EVENT;
        if (err != CL_SUCCESS) return clops_fail_cl(err, "clGetEventInfo(CL_EVENT_CONTEXT) of a wait event");
        if (c != ctx->cl_ctx)
            return clops_fail((clops_status)CL_INVALID_CONTEXT, "wait event %u belongs to another cl_context", i);
    }
    return CLOPS_SUCCESS;
}

/* Nothing to compute: complete the caller's event after its wait list. */
clops_status clops_enqueue_nothing(clops_context *ctx, cl_uint nwait, const cl_event *wait, cl_event *event)
{
    if (!event) return CLOPS_SUCCESS;
    const cl_int err = clEnqueueMarkerWithWaitList(ctx->queue, nwait, nwait ? wait : NULL, event);
    return err == CL_SUCCESS ? CLOPS_SUCCESS : clops_fail_cl(err, "clEnqueueMarkerWithWaitList");
}

static clops_status execute_cl(clops_operator *op, const clops_buffers *buffers, cl_uint nwait, const cl_event *wait,
                               cl_event *event)
{
    if (event) *event = NULL;
    if (!op || !buffers) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_operator_execute: NULL argument");
    if ((nwait > 0) != (wait != NULL))
        return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "wait list of %u events given as %p", nwait, (const void *)wait);
    if (op->ctx->backend != CLOPS_BACKEND_OPENCL)
        return clops_fail(CLOPS_ERROR_WRONG_BACKEND, "clops_operator_execute on the host context: use "
                                                     "clops_operator_execute_host");
    clops_status st = check_cl_buffers(&op->params, buffers);
    if (st == CLOPS_SUCCESS) st = check_same_context(op, buffers, nwait, wait);
    if (st != CLOPS_SUCCESS) return st;
    if (op->fallback) return clops_host_execute_cl(op, buffers, nwait, wait, event);
    if (op->params.type == CLOPS_OPERATOR_MAX_UNPOOLING)
        return clops_max_unpooling_enqueue(op, buffers, nwait, wait, event);
    if (op->num_launches == 0) return clops_enqueue_nothing(op->ctx, nwait, wait, event);
    return clops_depth_space_enqueue(op, buffers, nwait, wait, event);
}

clops_status clops_operator_execute(clops_operator *op, const clops_buffers *buffers, cl_uint nwait,
                                    const cl_event *wait, cl_event *event)
{
    const clops_status st = execute_cl(op, buffers, nwait, wait, event);
    if (st == CLOPS_SUCCESS) CLOPS_TEST_CORRUPT_CL(op->ctx->queue, buffers->output, op->params.output.span_bytes, event);
    return st;
}

/* A device buffer holding `bytes` of `host` (or uninitialised when host is NULL). */
static clops_status device_buffer(clops_context *ctx, cl_mem_flags flags, const void *host, size_t bytes, cl_mem *out)
{
    cl_int err;
    *out = NULL;
    if (bytes == 0) return CLOPS_SUCCESS;
    *out = clCreateBuffer(ctx->cl_ctx, flags | (host ? CL_MEM_COPY_HOST_PTR : 0), bytes, (void *)host, &err);
    return *out ? CLOPS_SUCCESS : clops_fail_cl(err, "clCreateBuffer");
}

/* Host memory through device buffers: the output is copied back only on success,
 * so a failed run leaves the caller's memory as it was. An output with gaps
 * (strided) is first copied in, so the gaps come back unchanged. */
static clops_status execute_via_device(clops_operator *op, const clops_host_buffers *b)
{
    const clops_op_params *p = &op->params;
    const bool unpool = p->type == CLOPS_OPERATOR_MAX_UNPOOLING;
    const size_t out_bytes = (size_t)p->output.span_bytes;
    clops_buffers d = {NULL, NULL, NULL};
    clops_status st = device_buffer(op->ctx, CL_MEM_READ_ONLY, b->input, (size_t)p->input.span_bytes, &d.input);
    if (st == CLOPS_SUCCESS && unpool)
        st = device_buffer(op->ctx, CL_MEM_READ_ONLY, b->indices, (size_t)p->indices.span_bytes, &d.indices);
    if (st == CLOPS_SUCCESS)
        st = device_buffer(op->ctx, CL_MEM_READ_WRITE, p->output.packed ? NULL : b->output, out_bytes, &d.output);
    /* The read waits on the operator's event: the caller's queue may be out of order. */
    cl_event done = NULL;
    if (st == CLOPS_SUCCESS) st = clops_operator_execute(op, &d, 0, NULL, &done);
    if (st == CLOPS_SUCCESS && out_bytes) {
        const cl_int err = clEnqueueReadBuffer(op->ctx->queue, d.output, CL_TRUE, 0, out_bytes, b->output,
                                               done ? 1 : 0, done ? &done : NULL, NULL);
        if (err != CL_SUCCESS) st = clops_fail_cl(err, "clEnqueueReadBuffer");
    }
    if (done) clReleaseEvent(done);
    if (d.input) clReleaseMemObject(d.input);
    if (d.indices) clReleaseMemObject(d.indices);
    if (d.output) clReleaseMemObject(d.output);
    return st;
}

clops_status clops_operator_execute_host(clops_operator *op, const clops_host_buffers *buffers)
{
    if (!op) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_operator_execute_host: operator is NULL");
    clops_status st = clops_check_host_buffers(&op->params, buffers);
    if (st != CLOPS_SUCCESS) return st;
    if (op->ctx->backend == CLOPS_BACKEND_HOST || op->fallback) {
        st = clops_host_execute(&op->params, buffers);
        if (st == CLOPS_SUCCESS) CLOPS_TEST_CORRUPT_HOST(buffers->output, op->params.output.span_bytes);
        return st;
    }
    return execute_via_device(op, buffers);
}

clops_status clops_operator_get_info(const clops_operator *op, clops_operator_info *info)
{
    if (!op || !info) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_operator_get_info: NULL argument");
    memset(info, 0, sizeof *info);
    info->backend = op->fallback ? CLOPS_BACKEND_HOST : op->ctx->backend;
    info->kernel_name = op->kernel_name;
    info->build_options = op->fallback ? "" : op->options;
    info->program_origin = op->program_origin;
    info->local_size_origin = op->local_size_origin;
    info->fallback_reason = op->fallback_reason;
    /* The launch that does the operator's work: the last one (after any zero-fill). */
    if (op->num_launches) {
        const clops_launch *l = &op->launches[op->params.type == CLOPS_OPERATOR_MAX_UNPOOLING ? 1 : 0];
        info->work_dim = l->work_dim;
        for (int d = 0; d < 3; d++) {
            info->global_size[d] = l->global[d];
            info->local_size[d] = l->local[d];
        }
    }
    return CLOPS_SUCCESS;
}

clops_status clops_set_dims_args(const clops_operator *op, cl_kernel kernel, cl_uint first, unsigned count,
                                 const uint64_t *const dims[])
{
    for (unsigned a = 0; a < count; a++) {
        clops_status st;
        if (op->offset_64) {
            cl_ulong v[4];
            for (int d = 0; d < 4; d++) v[d] = dims[a][d];
            st = clops_set_arg(kernel, first + a, sizeof v, v);
        } else {
            cl_uint v[4];
            for (int d = 0; d < 4; d++) v[d] = (cl_uint)dims[a][d]; /* < 2^32: clops_fits_u32 */
            st = clops_set_arg(kernel, first + a, sizeof v, v);
        }
        if (st != CLOPS_SUCCESS) return st;
    }
    return CLOPS_SUCCESS;
}

clops_status clops_set_offset_arg(const clops_operator *op, cl_kernel kernel, cl_uint index, uint64_t value)
{
    if (op->offset_64) {
        const cl_ulong v = value;
        return clops_set_arg(kernel, index, sizeof v, &v);
    }
    const cl_uint v = (cl_uint)value;
    return clops_set_arg(kernel, index, sizeof v, &v);
}
