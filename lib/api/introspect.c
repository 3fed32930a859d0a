/* introspect.c - what an operator's OpenCL plan launched and which launches did
 * the work (api/introspect.h), for `clops conformance`'s coverage report. */
#include <stdio.h>
#include <string.h>

#include "api/introspect.h"
#include "ops/ops.h"

/* MaxUnpooling's status words (kernels/max_unpooling.cl ST_GENERAL, ST_POOL; the
 * same numbers as lib/ops/max_unpooling.c's enum): a word equals the execution's
 * generation when a kernel of that execution raised it. */
enum { INTROSPECT_ST_GENERAL = 0, INTROSPECT_ST_POOL = 2, INTROSPECT_ST_WORDS = 3 };

/* Whether the operator's build options hold "-DNAME=1". */
static bool option_on(const clops_operator *op, const char *name)
{
    char want[64];
    snprintf(want, sizeof want, "-D%s=1", name);
    const char *at = strstr(op->options, want);
    const char end = at ? at[strlen(want)] : '\0';
    return at && (end == ' ' || end == '\0');
}

/* Which MaxUnpooling launches did the work of the last execution, from the
 * status words: bucket and tiles when ungated or their gate (ST_GENERAL) was
 * raised; pool and planes when ungated or raised (ST_POOL) and no general path
 * ran after them; windows when neither pool nor the general path ran after it. */
static clops_status unpool_live(clops_operator *op, clops_launched *out)
{
    cl_uint words[INTROSPECT_ST_WORDS] = {0};
    if (op->unpool.last && op->unpool.status) {
        const cl_int err = clEnqueueReadBuffer(op->ctx->queue, op->unpool.status, CL_TRUE, 0, sizeof words, words, 1,
                                               &op->unpool.last, NULL);
        if (err != CL_SUCCESS) return clops_fail_cl(err, "clEnqueueReadBuffer(status words)");
    }
    const cl_uint gen = op->unpool.gen;
    const bool gated = option_on(op, "GATED"), pool_gated = option_on(op, "POOL_GATED");
    const bool general = !gated || words[INTROSPECT_ST_GENERAL] == gen;
    const bool pool = !pool_gated || words[INTROSPECT_ST_POOL] == gen;
    bool has_pool = false;
    for (unsigned i = 0; i < out->count; i++)
        has_pool |= strcmp(out->kernel[i], "pool") == 0 || strcmp(out->kernel[i], "planes") == 0;
    for (unsigned i = 0; i < out->count; i++) {
        const char *k = out->kernel[i];
        if (strcmp(k, "bucket") == 0 || strcmp(k, "tiles") == 0)
            out->live[i] = general;
        else if (strcmp(k, "pool") == 0 || strcmp(k, "planes") == 0)
            out->live[i] = pool && !(gated && general);
        else if (strcmp(k, "windows") == 0)
            out->live[i] = !(has_pool && pool) && !(gated && general);
        else
            out->live[i] = true; /* serial, clear */
    }
    return CLOPS_SUCCESS;
}

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
    return op->params.type == CLOPS_OPERATOR_MAX_UNPOOLING && out->count ? unpool_live(op, out) : CLOPS_SUCCESS;
}

clops_status clops_introspect_device(const clops_context *ctx, cl_device_type *type, unsigned *compute_units)
{
    if (!ctx || !type || !compute_units) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_introspect_device: NULL argument");
    *type = 0;
    *compute_units = 0;
    if (ctx->backend != CLOPS_BACKEND_OPENCL) return CLOPS_SUCCESS;
    *type = ctx->info.type;
    cl_uint units = 1;
    if (clGetDeviceInfo(ctx->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL) != CL_SUCCESS) units = 1;
    *compute_units = units ? units : 1;
    return CLOPS_SUCCESS;
}
