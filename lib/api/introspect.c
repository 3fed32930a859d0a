/* introspect.c - what an operator's OpenCL plan launched and which launches did
 * the work (api/introspect.h), for `clops conformance`'s coverage report. */
#include <stdio.h>
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
    if (op->params.type != CLOPS_OPERATOR_MAX_UNPOOLING || !out->count) return CLOPS_SUCCESS;
    char roles[CLOPS_LAUNCHED_MAX][64]; /* the portable program's kernels by their roles */
    for (unsigned i = 0; i < out->count; i++) clops_introspect_kernel_role(out->kernel[i], roles[i], sizeof roles[i]);
    return clops_max_unpooling_live(op, out->count, (const char (*)[64])roles, out->live);
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

const char *clops_introspect_kernel_role(const char *kernel, char *buf, size_t size)
{
    const char *role = strncmp(kernel, "clops_", 6) == 0 ? kernel + 6 : kernel;
    size_t len = strlen(role);
    const char *last = strrchr(role, '_');
    if (role != kernel && last && last[1] && strspn(last + 1, "0123456789") == strlen(last + 1))
        len = (size_t)(last - role);
    snprintf(buf, size, "%.*s", (int)len, role);
    return buf;
}

