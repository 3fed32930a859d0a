/* introspect.c - what an operator's OpenCL plan launched and which launches did
 * the work (api/introspect.h), for `clops conformance`'s coverage report. */
#include <string.h>

#include "api/introspect.h"
#include "ops/ops.h"

clops_status clops_introspect_launches(clops_operator *op, clops_launched *out)
{
    if (!op || !out) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_introspect_launches: NULL argument");
    memset(out, 0, sizeof *out);
    if (op->ctx->backend != CLOPS_BACKEND_OPENCL || op->fallback) return CLOPS_SUCCESS;
    for (unsigned i = 0; i < op->num_launches && i < CLOPS_LAUNCHED_MAX; i++) {
        const cl_int err = clGetKernelInfo(op->launches[i].kernel, CL_KERNEL_FUNCTION_NAME, CLOPS_KERNEL_NAME_MAX,
                                           out->kernel[i], NULL);
        if (err != CL_SUCCESS) return clops_fail_cl(err, "clGetKernelInfo(CL_KERNEL_FUNCTION_NAME)");
        out->live[i] = true;
        out->count++;
    }
    return op->params.type == CLOPS_OPERATOR_MAX_UNPOOLING && out->count
               ? clops_max_unpooling_live(op, out->count, out->kernel, out->live)
               : CLOPS_SUCCESS;
}

clops_status clops_introspect_device(const clops_context *ctx, cl_device_type *type, unsigned *compute_units,
                                     unsigned *max_loops)
{
    if (!ctx || !type || !compute_units || !max_loops)
        return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_introspect_device: NULL argument");
    *type = 0;
    *compute_units = *max_loops = 0;
    if (ctx->backend != CLOPS_BACKEND_OPENCL) return CLOPS_SUCCESS;
    *type = ctx->info.type; /* as planned for (cl/profile.c) */
    *compute_units = ctx->plan.compute_units;
    *max_loops = ctx->plan.max_loops;
    return CLOPS_SUCCESS;
}

bool clops_introspect_portable(const clops_context *ctx)
{
    return ctx && ctx->backend == CLOPS_BACKEND_OPENCL && clops_portable_only(ctx);
}

const char *clops_introspect_kernel_role(const char *kernel, char *buf, size_t size)
{
    return clops_kernel_role(kernel, buf, size);
}
