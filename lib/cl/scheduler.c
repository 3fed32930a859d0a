/* scheduler.c - work-group sizes from the device and the kernel.
 *
 * The local size respects the kernel's CL_KERNEL_WORK_GROUP_SIZE, the device's
 * per-dimension maxima and the kernel's preferred multiple; it targets a total
 * that suits the device type; and the global size is rounded up to a multiple of
 * it (kernels guard their range), so non-uniform work-groups are never needed. */
#include "cl/cl.h"
#include "cl/params.h"

static size_t pow2_at_least(uint64_t n)
{
    size_t p = 1;
    while (p < n && p < ((size_t)1 << 30)) p <<= 1;
    return p;
}

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* Work-items per group to aim for: the device class's (cl/params.c: 256 on GPUs,
 * several wavefronts, and on CPUs, where PoCL runs a group as a vectorised loop
 * and a few hundred items amortise the per-group overhead; 64 on accelerators
 * and other devices), or a device profile's own (cl/profile.c). */
static size_t target_group_size(const clops_context *ctx)
{
    if (ctx->plan.target_group) return ctx->plan.target_group;
    return clops_device_params_of(ctx)->group;
}

/* A tuned local size the device and kernel accept, or false. */
static bool accept_local(unsigned work_dim, const size_t *want, size_t kernel_max, const size_t dev_max[3])
{
    size_t total = 1;
    for (unsigned d = 0; d < 3; d++) {
        const size_t w = want[d];
        if (w == 0 || (d >= work_dim && w != 1) || w > (dev_max[d] ? dev_max[d] : 1)) return false;
        total *= w;
    }
    return total <= kernel_max;
}

/* Global size: items rounded up to whole groups. */
static clops_status round_up(unsigned work_dim, const uint64_t items[3], const size_t local[3], size_t global[3])
{
    for (unsigned d = 0; d < 3; d++) global[d] = 1;
    for (unsigned d = 0; d < work_dim; d++) {
        const uint64_t groups = (items[d] + local[d] - 1) / local[d];
        const uint64_t g = (groups ? groups : 1) * local[d];
        if (g > SIZE_MAX || g < items[d])
            return clops_fail(CLOPS_ERROR_TOO_LARGE_FOR_DEVICE, "global size %llu in dimension %u is too large",
                              (unsigned long long)items[d], d);
        global[d] = (size_t)g;
    }
    return CLOPS_SUCCESS;
}

clops_status clops_schedule(const clops_context *ctx, cl_kernel kernel, unsigned work_dim, const uint64_t items[3],
                            const size_t *want, size_t global[3], size_t local[3], const char **origin)
{
    size_t kernel_max = 1, multiple = 1, dev_max[3] = {1, 1, 1};
    cl_int err = clGetKernelWorkGroupInfo(kernel, ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof kernel_max,
                                          &kernel_max, NULL);
    if (err != CL_SUCCESS) return clops_fail_cl(err, "clGetKernelWorkGroupInfo(CL_KERNEL_WORK_GROUP_SIZE)");
    err = clGetKernelWorkGroupInfo(kernel, ctx->device, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                   sizeof multiple, &multiple, NULL);
    if (err != CL_SUCCESS || multiple == 0) multiple = 1;
    err = clGetDeviceInfo(ctx->device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof dev_max, dev_max, NULL);
    if (err != CL_SUCCESS) return clops_fail_cl(err, "clGetDeviceInfo(CL_DEVICE_MAX_WORK_ITEM_SIZES)");
    /* The kernel's own limit (its registers and local memory), never the
     * device's CL_DEVICE_MAX_WORK_GROUP_SIZE; a profile's work-group limit below it. */
    if (ctx->plan.max_group) {
        kernel_max = min_size(kernel_max, ctx->plan.max_group);
        for (unsigned d = 0; d < 3; d++) dev_max[d] = min_size(dev_max[d], ctx->plan.max_group);
    }

    if (want && accept_local(work_dim, want, kernel_max, dev_max)) {
        for (unsigned d = 0; d < 3; d++) local[d] = want[d];
        *origin = "tuned";
        return round_up(work_dim, items, local, global);
    }
    *origin = "heuristic";
    size_t budget = min_size(target_group_size(ctx), kernel_max ? kernel_max : 1);
    for (unsigned d = 0; d < 3; d++) local[d] = 1;
    for (unsigned d = 0; d < work_dim; d++) {
        size_t l = min_size(min_size(pow2_at_least(items[d]), budget), dev_max[d] ? dev_max[d] : 1);
        /* Dimension 0 prefers a whole multiple of the preferred size when it has the items. */
        if (d == 0 && l > multiple && l % multiple) l -= l % multiple;
        local[d] = l ? l : 1;
        budget /= local[d];
        if (budget == 0) budget = 1;
    }
    return round_up(work_dim, items, local, global);
}
