/* plan.c - what every operator's OpenCL plan shares: kernel launches into the
 * operator's slots (work sizes from cl/scheduler.c), kernel arguments in the
 * offset width the plan was built with, and an enqueue with nothing to compute. */
#include "ops/ops.h"

bool clops_fits_u32(const clops_op_params *p)
{
    /* Every offset a kernel forms is below a span, and every size product below a
     * count, so 32-bit arithmetic is exact when all of them fit; the margin covers
     * a work-item's chunk start past the end of a row (guarded, but computed). */
    const uint64_t limit = CLOPS_U32_OFFSET_LIMIT;
    const int listed = clops_program_list_case(CLOPS_LIST_WIDE_OFFSETS); /* listing: every case (api/aot.c) */
    if (listed >= 0) return !listed;
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
#ifdef CLOPS_TEST_HOOKS
    if (clops_test_skips_kernel(l->kernel)) { /* a broken kernel (cl_api.h): nothing written, nothing raised */
        const cl_int skipped = clEnqueueMarkerWithWaitList(op->ctx->queue, nwait, nwait ? wait : NULL, event);
        return skipped == CL_SUCCESS ? CLOPS_SUCCESS : clops_fail_cl(skipped, "clEnqueueMarkerWithWaitList");
    }
#endif
    const cl_int err = clEnqueueNDRangeKernel(op->ctx->queue, l->kernel, l->work_dim, NULL, l->global, l->local,
                                              nwait, nwait ? wait : NULL, event);
    return err == CL_SUCCESS ? CLOPS_SUCCESS : clops_fail_cl(err, "clEnqueueNDRangeKernel");
}


/* Nothing to compute: complete the caller's event after its wait list. */
clops_status clops_enqueue_nothing(clops_context *ctx, cl_uint nwait, const cl_event *wait, cl_event *event)
{
    if (!event) return CLOPS_SUCCESS;
    const cl_int err = clEnqueueMarkerWithWaitList(ctx->queue, nwait, nwait ? wait : NULL, event);
    return err == CL_SUCCESS ? CLOPS_SUCCESS : clops_fail_cl(err, "clEnqueueMarkerWithWaitList");
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
