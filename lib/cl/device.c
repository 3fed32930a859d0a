/* device.c - the devices: enumeration (clops_device_list), the capabilities
 * clops uses (after CLOPS_DISABLE), string properties, the identity that keys
 * the caches, and the plan `clops devices` prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl_ext.h>

#include "cl/cl.h"

/* A string property of the device (dev_param != 0) or of its platform, read at
 * its real length (size query first): *out is a new NUL-terminated string. */
static clops_status query_string(cl_platform_id platform, cl_device_id device, cl_device_info dev_param,
                                 cl_platform_info plat_param, char **out)
{
    size_t size = 0;
    *out = NULL;
    cl_int err = dev_param ? clGetDeviceInfo(device, dev_param, 0, NULL, &size)
                           : clGetPlatformInfo(platform, plat_param, 0, NULL, &size);
    if (err != CL_SUCCESS) return clops_fail_cl(err, dev_param ? "clGetDeviceInfo" : "clGetPlatformInfo");
    char *s = calloc(size + 1, 1);
    if (!s) return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "device property of %zu bytes", size);
    err = dev_param ? clGetDeviceInfo(device, dev_param, size, s, NULL)
                    : clGetPlatformInfo(platform, plat_param, size, s, NULL);
    if (err != CL_SUCCESS) {
        free(s);
        return clops_fail_cl(err, dev_param ? "clGetDeviceInfo" : "clGetPlatformInfo");
    }
    *out = s;
    return CLOPS_SUCCESS;
}

/* A string property into a fixed field of clops_device_info: read whole, then
 * cut to the field (a longer string keeps its beginning, never comes out empty). */
static clops_status copy_string(cl_platform_id platform, cl_device_id device, cl_device_info dev_param,
                                cl_platform_info plat_param, char *field, size_t size)
{
    char *s;
    const clops_status st = query_string(platform, device, dev_param, plat_param, &s);
    if (st != CLOPS_SUCCESS) return st;
    snprintf(field, size, "%s", s);
    free(s);
    return CLOPS_SUCCESS;
}

/* Whole-word match in a space-separated extension list. */
static bool has_extension(const char *list, const char *ext)
{
    const size_t n = strlen(ext);
    for (const char *p = list; (p = strstr(p, ext)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return true;
    return false;
}

clops_status clops_query_device(cl_platform_id platform, cl_device_id device, unsigned index, unsigned disable,
                                clops_device_info *info)
{
    memset(info, 0, sizeof *info);
    info->index = index;
    info->platform = platform;
    info->device = device;
    clops_status st = platform ? copy_string(platform, device, 0, CL_PLATFORM_NAME, info->platform_name,
                                             sizeof info->platform_name)
                               : CLOPS_SUCCESS;
    if (st == CLOPS_SUCCESS)
        st = copy_string(platform, device, CL_DEVICE_NAME, 0, info->device_name, sizeof info->device_name);
    if (st == CLOPS_SUCCESS)
        st = copy_string(platform, device, CL_DEVICE_VERSION, 0, info->device_version, sizeof info->device_version);
    if (st == CLOPS_SUCCESS)
        st = copy_string(platform, device, CL_DEVICE_OPENCL_C_VERSION, 0, info->opencl_c_version,
                         sizeof info->opencl_c_version);
    if (st != CLOPS_SUCCESS) return st;
    cl_int err = clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof info->type, &info->type, NULL);
    if (err != CL_SUCCESS) return clops_fail_cl(err, "clGetDeviceInfo(CL_DEVICE_TYPE)");

    char *profile = NULL, *ext = NULL;
    st = query_string(platform, device, CL_DEVICE_PROFILE, 0, &profile);
    if (st == CLOPS_SUCCESS) st = query_string(platform, device, CL_DEVICE_EXTENSIONS, 0, &ext);
    if (st != CLOPS_SUCCESS) {
        free(profile);
        return st;
    }
    info->has_fp16 = has_extension(ext, "cl_khr_fp16") && !(disable & CLOPS_CAPABILITY_FP16);
    info->has_fp64 = has_extension(ext, "cl_khr_fp64") && !(disable & CLOPS_CAPABILITY_FP64);
    /* FULL_PROFILE guarantees 64-bit integers; EMBEDDED_PROFILE only with cl_khr_int64. */
    info->has_int64 = (strcmp(profile, "FULL_PROFILE") == 0 || has_extension(ext, "cl_khr_int64")) && !(disable & CLOPS_CAPABILITY_INT64);
    free(ext);
    free(profile);

    cl_bool compiler = CL_FALSE;
    if (clGetDeviceInfo(device, CL_DEVICE_COMPILER_AVAILABLE, sizeof compiler, &compiler, NULL) != CL_SUCCESS)
        compiler = CL_FALSE;
    info->compiler_available = compiler == CL_TRUE && !(disable & CLOPS_CAPABILITY_COMPILER);
    cl_ulong max_alloc = 0;
    if (clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL) != CL_SUCCESS)
        max_alloc = 0;
    info->max_alloc_bytes = max_alloc;
    return CLOPS_SUCCESS;
}

clops_status clops_device_list(clops_device_info *infos, size_t capacity, size_t *count)
{
    clops_context_options o;
    const clops_status st = clops_options_resolve(NULL, &o); /* CLOPS_DISABLE */
    return st == CLOPS_SUCCESS ? clops_device_list_masked(infos, capacity, count, o.disable) : st;
}

clops_status clops_device_list_masked(clops_device_info *infos, size_t capacity, size_t *count, unsigned disable)
{
    if (!count || (capacity && !infos)) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_device_list: NULL argument");
    *count = 0;
    cl_uint nplat = 0;
    clops_driver_note_use(); /* a child forked from now on cannot start a device (cl/wait.c) */
    cl_int err = clGetPlatformIDs(0, NULL, &nplat);
    if (err == CL_PLATFORM_NOT_FOUND_KHR) return CLOPS_SUCCESS; /* no ICD or no platform: no devices */
    if (err != CL_SUCCESS) return clops_fail_cl(err, "clGetPlatformIDs");
    if (nplat == 0) return CLOPS_SUCCESS;
    cl_platform_id *plats = calloc(nplat, sizeof *plats);
    if (!plats) return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "platform list of %u entries", nplat);
    clops_status st = CLOPS_SUCCESS;
    err = clGetPlatformIDs(nplat, plats, NULL);
    if (err != CL_SUCCESS) st = clops_fail_cl(err, "clGetPlatformIDs");
    size_t total = 0;
    for (cl_uint pi = 0; st == CLOPS_SUCCESS && pi < nplat; pi++) {
        cl_uint ndev = 0;
        err = clGetDeviceIDs(plats[pi], CL_DEVICE_TYPE_ALL, 0, NULL, &ndev);
        if (err == CL_DEVICE_NOT_FOUND || ndev == 0) continue;
        if (err != CL_SUCCESS) {
            st = clops_fail_cl(err, "clGetDeviceIDs");
            break;
        }
        cl_device_id *devs = calloc(ndev, sizeof *devs);
        if (!devs) {
            st = clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "device list of %u entries", ndev);
            break;
        }
        err = clGetDeviceIDs(plats[pi], CL_DEVICE_TYPE_ALL, ndev, devs, NULL);
        if (err != CL_SUCCESS) st = clops_fail_cl(err, "clGetDeviceIDs");
        for (cl_uint di = 0; st == CLOPS_SUCCESS && di < ndev; di++, total++)
            if (total < capacity) st = clops_query_device(plats[pi], devs[di], (unsigned)total, disable, &infos[total]);
        free(devs);
    }
    free(plats);
    if (st == CLOPS_SUCCESS) *count = total;
    return st;
}

clops_status clops_device_list_alloc(unsigned disable, clops_device_info **infos, size_t *count)
{
    *infos = NULL;
    clops_status st = clops_device_list_masked(NULL, 0, count, disable);
    if (st != CLOPS_SUCCESS || *count == 0) return st;
    *infos = calloc(*count, sizeof **infos);
    if (!*infos) return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "device list of %zu entries", *count);
    st = clops_device_list_masked(*infos, *count, count, disable);
    if (st != CLOPS_SUCCESS) {
        free(*infos);
        *infos = NULL;
    }
    return st;
}

/* Appends "label: value\n" to the growing string *buf; when it cannot grow,
 * frees it and leaves *buf NULL (the caller reports the lack of memory). */
static void append_info(char **buf, size_t *len, size_t *cap, const char *label, const char *value)
{
    const size_t need = strlen(label) + strlen(value) + 3;
    if (!*buf) return;
    if (*len + need + 1 > *cap) {
        size_t grown = (*cap + need + 1) * 2;
        char *b = realloc(*buf, grown);
        if (!b) {
            free(*buf);
            *buf = NULL;
            return;
        }
        *buf = b;
        *cap = grown;
    }
    *len += (size_t)snprintf(*buf + *len, *cap - *len, "%s: %s\n", label, value);
}

clops_status clops_device_string(const clops_device_info *info, clops_device_string_kind what, char *buf,
                                 size_t size, size_t *length)
{
    static const struct {
        cl_device_info dev;
        cl_platform_info plat;
    } params[] = {
        [CLOPS_DEVICE_STRING_PLATFORM_NAME] = {0, CL_PLATFORM_NAME},
        [CLOPS_DEVICE_STRING_PLATFORM_VERSION] = {0, CL_PLATFORM_VERSION},
        [CLOPS_DEVICE_STRING_DEVICE_NAME] = {CL_DEVICE_NAME, 0},
        [CLOPS_DEVICE_STRING_VENDOR] = {CL_DEVICE_VENDOR, 0},
        [CLOPS_DEVICE_STRING_DEVICE_VERSION] = {CL_DEVICE_VERSION, 0},
        [CLOPS_DEVICE_STRING_DRIVER_VERSION] = {CL_DRIVER_VERSION, 0},
        [CLOPS_DEVICE_STRING_OPENCL_C_VERSION] = {CL_DEVICE_OPENCL_C_VERSION, 0},
    };
    if (length) *length = 0;
    if (size && buf) buf[0] = '\0';
    if (!info || (size && !buf)) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_device_string: NULL argument");
    if ((int)what < CLOPS_DEVICE_STRING_PLATFORM_NAME || (int)what > CLOPS_DEVICE_STRING_OPENCL_C_VERSION)
        return clops_fail(CLOPS_ERROR_INVALID_DEVICE_SELECTION, "clops_device_string: unknown string kind %d", (int)what);
    char *s;
    const clops_status st = query_string(info->platform, info->device, params[what].dev, params[what].plat, &s);
    if (st != CLOPS_SUCCESS) return st;
    if (size) snprintf(buf, size, "%s", s);
    if (length) *length = strlen(s);
    free(s);
    return CLOPS_SUCCESS;
}

clops_status clops_device_identity(const clops_device_info *info, unsigned disable, char **out)
{
    size_t len = 0, cap = 1024;
    char *buf = calloc(cap, 1);
    struct {
        const char *label;
        cl_device_info dev;
        cl_platform_info plat;
    } const fields[] = {
        {"platform", 0, CL_PLATFORM_NAME},          {"platform version", 0, CL_PLATFORM_VERSION},
        {"device", CL_DEVICE_NAME, 0},              {"vendor", CL_DEVICE_VENDOR, 0},
        {"device version", CL_DEVICE_VERSION, 0},   {"driver version", CL_DRIVER_VERSION, 0},
        {"extensions", CL_DEVICE_EXTENSIONS, 0},
    };
    if (!buf) return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "device identity");
    for (size_t i = 0; buf && i < sizeof fields / sizeof fields[0]; i++) {
        char *v;
        const clops_status st = query_string(info->platform, info->device, fields[i].dev, fields[i].plat, &v);
        if (st != CLOPS_SUCCESS) {
            free(buf);
            return st;
        }
        append_info(&buf, &len, &cap, fields[i].label, v);
        free(v);
    }
    cl_uint bits = 0;
    const cl_int err = clGetDeviceInfo(info->device, CL_DEVICE_ADDRESS_BITS, sizeof bits, &bits, NULL);
    if (err != CL_SUCCESS) {
        free(buf);
        return clops_fail_cl(err, "clGetDeviceInfo(CL_DEVICE_ADDRESS_BITS)");
    }
    char num[32];
    snprintf(num, sizeof num, "%u", bits);
    append_info(&buf, &len, &cap, "address bits", num);
    /* Capabilities treated as absent, in a fixed order. "compiler" is left out:
     * it decides whether clops may compile, not what a binary is, so a device
     * without a compiler can load binaries built where one was available. */
    char dis[32] = "";
    static const char *const caps[] = {"fp64", "int64", "fp16"}; /* CLOPS_CAPABILITY_* bits 0-2 */
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
        if (disable & (1u << i)) {
            if (dis[0]) strcat(dis, ",");
            strcat(dis, caps[i]);
        }
    append_info(&buf, &len, &cap, "disabled", dis);
    if (!buf) return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "device identity");
    *out = buf;
    return CLOPS_SUCCESS;
}

size_t clops_device_plan(const clops_device_info *info, char *buf, size_t size)
{
    if (!info) return (size_t)snprintf(buf, size, "%s", "");
    const char *kernels = info->compiler_available
                              ? "OpenCL kernels, compiled at first use and cached on disk"
                              : "OpenCL kernels from cached or imported binaries only (no compiler); "
                                "without one, the host kernels";
    const char *big = info->has_int64 ? "OpenCL kernels with 64-bit offsets"
                                      : "the host kernels (64-bit offsets need 64-bit integers)";
    const int n = snprintf(buf, size,
                           "all operators, every type (FLOAT64 and COMPLEX128 too: elements move as 1-16 byte "
                           "integer words, so no fp16 or fp64 is needed): %s\n"
                           "MaxUnpooling UINT64/INT64 indices: read as two 32-bit words, no 64-bit integers "
                           "needed below 2^32 output elements\n"
                           "tensors past 2^32 elements: %s\n"
                           "a failed build: the host kernels, with the reason in --verbose",
                           kernels, big);
    return n < 0 ? 0 : (size_t)n;
}
