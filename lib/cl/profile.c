/* profile.c - what clops plans from: the device's type, compute units and
 * work-group limits, and in test builds a device profile that replaces them.
 *
 * Device type and compute units are performance hints: every plan must give the
 * same bits whatever they say. A profile makes a CPU device (PoCL, rusticl,
 * Oclgrind) choose the plans, local sizes and work-item counts a GPU would, so
 * that the plans other devices take run in CI (issue 31; docs/conformance.md,
 * "Device profiles"):
 *
 *   CLOPS_TEST_DEVICE_PROFILE=gpu,cu=132,wg=1024,local=256   a discrete GPU
 *   CLOPS_TEST_DEVICE_PROFILE=gpu,cu=24,wg=256,local=64      a small integrated GPU
 *   CLOPS_TEST_DEVICE_PROFILE=cpu,loops=65535                 a CPU device that ends a
 *                                                            work-item after 65535 loop
 *                                                            iterations (as llvmpipe)
 *
 * and serial=N lowers MaxUnpooling's serial-plan limit (4096 elements) to N, so that
 * Oclgrind, which simulates every work-item, reaches the other plans on small inputs;
 * alloc=BYTES lowers the device's maximum allocation (plans that size scratch by it).
 *
 * Read only by test builds (CLOPS_TEST_HOOKS: clops_testable), never by the
 * installed library. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/cl.h"

#ifdef CLOPS_TEST_HOOKS
/* "key=N" with N a whole number in [1, max] into *out; false if not. */
static bool parse_field(const char *field, size_t len, const char *key, unsigned long max, unsigned long *out)
{
    const size_t k = strlen(key);
    if (len <= k + 1 || strncmp(field, key, k) != 0 || field[k] != '=') return false;
    char digits[24];
    if (len - k - 1 >= sizeof digits) return false;
    memcpy(digits, field + k + 1, len - k - 1);
    digits[len - k - 1] = '\0';
    char *end;
    errno = 0;
    const unsigned long v = strtoul(digits, &end, 10);
    if (errno || *end || digits[0] < '0' || digits[0] > '9' || v == 0 || v > max) return false;
    *out = v;
    return true;
}

static clops_status apply_profile(clops_context *ctx, const char *text)
{
    cl_device_type type = 0;
    unsigned long cu = 0, wg = 0, local = 0, loops = 0, serial = 0, alloc = 0;
    const char *at = text;
    for (int first = 1;; first = 0) {
        const char *comma = strchr(at, ',');
        const size_t len = comma ? (size_t)(comma - at) : strlen(at);
        bool ok;
        if (first) {
            ok = true;
            if (len == 3 && strncmp(at, "gpu", 3) == 0) type = CL_DEVICE_TYPE_GPU;
            else if (len == 3 && strncmp(at, "cpu", 3) == 0) type = CL_DEVICE_TYPE_CPU;
            else if (len == 11 && strncmp(at, "accelerator", 11) == 0) type = CL_DEVICE_TYPE_ACCELERATOR;
            else ok = false;
        } else {
            ok = parse_field(at, len, "cu", 1u << 20, &cu) || parse_field(at, len, "wg", 1u << 16, &wg) ||
                 parse_field(at, len, "local", 1u << 16, &local) ||
                 parse_field(at, len, "loops", 1ul << 31, &loops) || parse_field(at, len, "serial", 1ul << 30, &serial) ||
                 parse_field(at, len, "alloc", ULONG_MAX, &alloc);
        }
        if (!ok)
            return clops_fail(CLOPS_ERROR_INVALID_SETTING,
                              "CLOPS_TEST_DEVICE_PROFILE=\"%.64s\": \"%.*s\" is not gpu, cpu or accelerator first, then "
                              "cu=N, wg=N, local=N, loops=N, serial=N or alloc=BYTES",
                              text, (int)(len < 32 ? len : 32), at);
        if (!comma) break;
        at = comma + 1;
    }
    if (local && wg && local > wg)
        return clops_fail(CLOPS_ERROR_INVALID_SETTING, "CLOPS_TEST_DEVICE_PROFILE=\"%.64s\": local %lu above wg %lu",
                          text, local, wg);
    ctx->info.type = type;
    if (cu) ctx->plan.compute_units = (unsigned)cu;
    if (loops) ctx->plan.max_loops = (unsigned)loops;
    ctx->plan.serial_max = (unsigned)serial;
    if (alloc && (!ctx->info.max_alloc_bytes || alloc < ctx->info.max_alloc_bytes)) ctx->info.max_alloc_bytes = alloc;
    ctx->plan.max_group = wg;
    ctx->plan.target_group = local;
    snprintf(ctx->plan.profile, sizeof ctx->plan.profile, "%s", text);
    return CLOPS_SUCCESS;
}
#endif

clops_status clops_device_profile_apply(clops_context *ctx)
{
    cl_uint units = 1;
    if (clGetDeviceInfo(ctx->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL) != CL_SUCCESS)
        units = 1;
    ctx->plan.compute_units = units ? units : 1;
    cl_ulong local = 0;
    if (clGetDeviceInfo(ctx->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local, &local, NULL) != CL_SUCCESS) local = 0;
    ctx->plan.local_mem_bytes = local;
    /* Mesa's llvmpipe (rusticl; gallivm's loop limiter) ends a work-item after
     * 65535 loop iterations, all loops together, silently: measured on rusticl
     * 22.3 (issue 31: the planes kernel stopped after 65531 inner and 4 outer
     * iterations). Devices that do not say so are taken to have no limit. */
    ctx->plan.max_loops = strstr(ctx->info.device_name, "llvmpipe") ? 65535u : 0u;
    ctx->plan.max_group = ctx->plan.target_group = 0;
    ctx->plan.serial_max = 0;
    ctx->plan.profile[0] = '\0';
#ifdef CLOPS_TEST_HOOKS
    const char *text = getenv("CLOPS_TEST_DEVICE_PROFILE");
    if (text && text[0]) return apply_profile(ctx, text);
#endif
    return CLOPS_SUCCESS;
}
