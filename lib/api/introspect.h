/* introspect.h - what an operator's OpenCL plan launched and which of those
 * launches did the work, for `clops conformance`'s coverage report
 * (tools/conformance/conformance_cover.c). The functions are exported from the
 * library so that the CLI can call them, but declared only here: not installed,
 * not part of the public API, free to change with the plans. */
#ifndef CLOPS_INTROSPECT_H
#define CLOPS_INTROSPECT_H

#include <stdbool.h>

#include "clops/clops.h"

#define CLOPS_LAUNCHED_MAX 8
#define CLOPS_KERNEL_NAME_MAX 64

/* An operator's launches in launch order, with their kernel functions as the
 * driver names them (clGetKernelInfo(CL_KERNEL_FUNCTION_NAME)), and for each
 * whether its work reached the output of the operator's last execution on the
 * device: always for a plain launch; for MaxUnpooling's gated kernels (the
 * status words of kernels/max_unpooling.cl) only when their gate was open in
 * that execution, and for windows, pool and planes only when no later kernel
 * rewrote the output after them. `count` is 0 on the host backend and for an
 * operator that runs on the host (fallback). */
typedef struct clops_launched {
    unsigned count;
    char kernel[CLOPS_LAUNCHED_MAX][CLOPS_KERNEL_NAME_MAX];
    bool live[CLOPS_LAUNCHED_MAX];
} clops_launched;

/* Fills `out` for `op`; call it after an execution's output was read (it waits
 * for the last execution and reads MaxUnpooling's status words). */
CLOPS_API clops_status clops_introspect_launches(clops_operator *op, clops_launched *out);

/* The device as clops plans for it (lib/internal.h ctx->info.type and
 * ctx->plan: the compute units the plans divide work by, and the loop
 * iterations after which it ends a work-item, 0 for none known);
 * CL_DEVICE_TYPE_DEFAULT (0) and zeros on the host backend. */
CLOPS_API clops_status clops_introspect_device(const clops_context *ctx, cl_device_type *type,
                                               unsigned *compute_units, unsigned *max_loops);

/* A kernel's role in its plan, into `buf`: the name itself, or for the portable
 * program's kernels (clops_windows_4) the name without its prefix and width
 * (windows); the portable DepthToSpace/SpaceToDepth kernel is "permute". */
CLOPS_API const char *clops_introspect_kernel_role(const char *kernel, char *buf, size_t size);

#endif /* CLOPS_INTROSPECT_H */
