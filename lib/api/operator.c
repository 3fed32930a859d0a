/* operator.c - operator objects: create (validate + prepare), execute, free. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

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
    const clops_status usable = clops_context_usable(ctx); /* forked, or the device lost */
    if (usable != CLOPS_SUCCESS) return usable;
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
    op->params.host_threads = ctx->options.host_threads;
    if (st == CLOPS_SUCCESS && ctx->backend == CLOPS_BACKEND_OPENCL) st = clops_op_prepare(op);
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
    /* In a forked child: no release that would call the driver (cl/wait.c,
     * clops_context_forked), its kernels, events and worker state are left. */
    if (!clops_context_forked(op->ctx)) clops_op_release(op);
    free(op->fallback_reason);
    free(op);
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
    clops_status st = clops_context_usable(op->ctx);
    if (st != CLOPS_SUCCESS) return st;
    st = clops_check_cl_buffers(&op->params, buffers);
    if (st == CLOPS_SUCCESS) st = clops_check_same_context(op->ctx->cl_ctx, &op->params, buffers, nwait, wait);
    return st == CLOPS_SUCCESS ? clops_op_enqueue(op, buffers, nwait, wait, event) : st;
}

clops_status clops_operator_execute(clops_operator *op, const clops_buffers *buffers, cl_uint nwait,
                                    const cl_event *wait, cl_event *event)
{
    const clops_status st = execute_cl(op, buffers, nwait, wait, event);
    if (st == CLOPS_SUCCESS) CLOPS_TEST_CORRUPT_CL(op->ctx->queue, buffers->output, op->params.output.span_bytes, event);
    return st;
}

clops_status clops_operator_last_status(clops_operator *op)
{
    if (!op) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_operator_last_status: operator is NULL");
    const clops_status st = clops_context_usable(op->ctx);
    return st == CLOPS_SUCCESS ? clops_op_last_status(op) : st;
}

/* Host memory through device buffers: the output is copied back only on success,
 * so a failed run (a timed-out one included) leaves the caller's memory as it was. An output with gaps
 * (strided) is first copied in, so the gaps come back unchanged. */
static clops_status execute_via_device(clops_operator *op, const clops_host_buffers *b)
{
    const clops_op_params *p = &op->params;
    const size_t out_bytes = (size_t)p->output.span_bytes;
    clops_buffers d = {NULL, NULL, NULL};
    cl_event done = NULL;
    cl_int err;
    clops_status st = clops_device_buffer(op->ctx, CL_MEM_READ_ONLY, b->input, (size_t)p->input.span_bytes, &d.input);
    if (st != CLOPS_SUCCESS) goto cleanup;
    /* no buffer for an operator without indices (0 bytes) */
    st = clops_device_buffer(op->ctx, CL_MEM_READ_ONLY, b->indices, (size_t)p->indices.span_bytes, &d.indices);
    if (st != CLOPS_SUCCESS) goto cleanup;
    st = clops_device_buffer(op->ctx, CL_MEM_READ_WRITE, p->output.packed ? NULL : b->output, out_bytes, &d.output);
    if (st != CLOPS_SUCCESS) goto cleanup;
    /* The read waits on the operator's event: the caller's queue may be out of order. */
    st = clops_operator_execute(op, &d, 0, NULL, &done);
    if (st != CLOPS_SUCCESS) goto cleanup;
    /* The deadline ends this wait; the read below starts only after the kernels finished. */
    if (done) {
        clops_wait_take_failure();
        st = clops_wait_events(op->ctx, 1, &done, "the operator's kernels");
        if (!op->fallback) st = clops_op_after_wait(op, st); /* a failed kernel loses the context */
    }
    if (st != CLOPS_SUCCESS) goto cleanup;
    op->reading_back = true; /* bad indices: nothing copied back, and the message says so */
    st = clops_operator_last_status(op);
    op->reading_back = false;
    if (st != CLOPS_SUCCESS || out_bytes == 0) goto cleanup;
    err = clEnqueueReadBuffer(op->ctx->queue, d.output, CL_TRUE, 0, out_bytes, b->output, done ? 1 : 0,
                              done ? &done : NULL, NULL);
    if (err != CL_SUCCESS) st = clops_fail_cl(err, "clEnqueueReadBuffer");

cleanup:
    if (done) clReleaseEvent(done);
    if (d.input) clReleaseMemObject(d.input);
    if (d.indices) clReleaseMemObject(d.indices);
    if (d.output) clReleaseMemObject(d.output);
    return st;
}

clops_status clops_operator_execute_host(clops_operator *op, const clops_host_buffers *buffers)
{
    if (!op) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_operator_execute_host: operator is NULL");
    clops_status st = clops_context_usable(op->ctx); /* host contexts: always usable */
    if (st == CLOPS_SUCCESS) st = clops_check_host_buffers(&op->params, buffers);
    if (st != CLOPS_SUCCESS) return st;
    if (op->ctx->backend == CLOPS_BACKEND_HOST || op->fallback) {
        st = clops_op_host_run(&op->params, buffers);
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
    info->fallback_reason = op->fallback_reason ? op->fallback_reason : "";
    /* The first launch: the one named by kernel_name. */
    if (op->num_launches) {
        const clops_launch *l = &op->launches[0];
        info->work_dim = l->work_dim;
        for (int d = 0; d < 3; d++) {
            info->global_size[d] = l->global[d];
            info->local_size[d] = l->local[d];
        }
    }
    return CLOPS_SUCCESS;
}

clops_status clops_host_run(const clops_operator_desc *desc, const clops_host_buffers *buffers)
{
    clops_op_params p;
    clops_status st = clops_validate_operator(desc, &p);
    if (st == CLOPS_SUCCESS) st = clops_check_host_buffers(&p, buffers);
    if (st == CLOPS_SUCCESS) st = clops_op_host_run(&p, buffers);
    return st;
}

