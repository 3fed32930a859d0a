/** @file
 * clops_devices.h - the OpenCL devices clops sees: listing them, their identity
 * strings, and the path each operator takes on each.
 *
 * Part of the API of clops.h, which includes this header; it includes clops.h
 * in turn, so either may be included first.
 */
#ifndef CLOPS_PUBLIC_DEVICES_H
#define CLOPS_PUBLIC_DEVICES_H

#include "clops.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @defgroup devices Devices
 *  The OpenCL devices of every platform, what clops uses of each, and the path
 *  each operator takes there.
 *  @{ */

/* ---- devices ------------------------------------------------------------------ */
/** One device, as clops_device_list() reports it. The four strings are read at
 *  their real length and cut to their field (a longer string keeps its
 *  beginning); clops_device_string() gives them whole. */
typedef struct clops_device_info {
    unsigned index;               /**< as used by CLOPS_DEVICE and the CLI's --device */
    cl_platform_id platform;      /**< its OpenCL platform */
    cl_device_id device;          /**< the OpenCL device */
    cl_device_type type;          /**< CL_DEVICE_TYPE (GPU, CPU, accelerator, ... bits) */
    char platform_name[128];      /**< CL_PLATFORM_NAME, cut to 127 bytes */
    char device_name[128];        /**< CL_DEVICE_NAME, cut to 127 bytes */
    char device_version[128];     /**< CL_DEVICE_VERSION, "OpenCL 3.0 PoCL ...", cut to 127 bytes */
    char opencl_c_version[64];    /**< CL_DEVICE_OPENCL_C_VERSION, cut to 63 bytes */
    int has_fp16;                 /**< cl_khr_fp16 (0 under CLOPS_DISABLE=fp16) */
    int has_fp64;                 /**< cl_khr_fp64 (0 under CLOPS_DISABLE=fp64) */
    int has_int64;                /**< 64-bit integers: FULL_PROFILE, or cl_khr_int64 on EMBEDDED
                                       (0 under CLOPS_DISABLE=int64) */
    int compiler_available;       /**< CL_DEVICE_COMPILER_AVAILABLE (0 under CLOPS_DISABLE=compiler) */
    uint64_t max_alloc_bytes;     /**< CL_DEVICE_MAX_MEM_ALLOC_SIZE; 0 if the driver did not say */
} clops_device_info;

/** Every device of every platform, in platform order. Writes up to `capacity`
 *  entries to `infos` and the total count to `*count`: call with capacity 0 to
 *  count, then again with room for them. No platform at all (no OpenCL ICD)
 *  gives *count = 0 and CLOPS_SUCCESS. The capabilities are reported after the
 *  CLOPS_DISABLE environment variable.
 *  @param[out] infos room for `capacity` entries; may be NULL when capacity is 0.
 *  @param capacity how many entries `infos` holds.
 *  @param[out] count the number of devices (0 on failure).
 *  @return ::CLOPS_SUCCESS, or:
 *  @retval CLOPS_ERROR_NULL_ARGUMENT `count` is NULL, or `infos` is NULL with capacity > 0.
 *  @retval CLOPS_ERROR_INVALID_SETTING a CLOPS_* environment variable has a bad
 *          value (they are all read, as by clops_context_options_from_env()).
 *  @retval CLOPS_ERROR_INVALID_DEVICE_SELECTION CLOPS_DEVICE is neither "host" nor an index.
 *  @retval CLOPS_ERROR_OUT_OF_HOST_MEMORY an allocation failed.
 *  @retval other OpenCL errors of clGetPlatformIDs, clGetDeviceIDs, clGetDeviceInfo.
 *  @threadsafety Any thread; reads the environment.
 *  @blocking The OpenCL ICD loader and drivers (the first call in a process
 *  loads them; a remote device may answer over the network). */
CLOPS_API clops_status clops_device_list(clops_device_info *infos, size_t capacity, size_t *count);

/** Identity strings of a device, for clops_device_string(). */
typedef enum clops_device_string_kind {
    CLOPS_DEVICE_STRING_PLATFORM_NAME = 1,    /**< CL_PLATFORM_NAME */
    CLOPS_DEVICE_STRING_PLATFORM_VERSION = 2, /**< CL_PLATFORM_VERSION */
    CLOPS_DEVICE_STRING_DEVICE_NAME = 3,      /**< CL_DEVICE_NAME */
    CLOPS_DEVICE_STRING_VENDOR = 4,           /**< CL_DEVICE_VENDOR */
    CLOPS_DEVICE_STRING_DEVICE_VERSION = 5,   /**< CL_DEVICE_VERSION */
    CLOPS_DEVICE_STRING_DRIVER_VERSION = 6,   /**< CL_DRIVER_VERSION */
    CLOPS_DEVICE_STRING_OPENCL_C_VERSION = 7  /**< CL_DEVICE_OPENCL_C_VERSION */
} clops_device_string_kind;

/** One identity string of a device of clops_device_list(), read at its real
 *  length (however long the driver makes it). Writes it to `buf` (always
 *  NUL-terminated when size > 0; cut to fit) and its whole length, without the
 *  NUL, to `*length`: a caller whose buffer was too small calls again with
 *  *length + 1 bytes. On failure `buf` holds "" and `*length` 0.
 *  @param info a device of clops_device_list().
 *  @param what which string.
 *  @param[out] buf room for `size` bytes; may be NULL when size is 0.
 *  @param size bytes at `buf`.
 *  @param[out] length the string's whole length; may be NULL.
 *  @return ::CLOPS_SUCCESS, or:
 *  @retval CLOPS_ERROR_NULL_ARGUMENT `info` is NULL, or `buf` is NULL with size > 0.
 *  @retval CLOPS_ERROR_INVALID_DEVICE_SELECTION an unknown `what`.
 *  @retval CLOPS_ERROR_OUT_OF_HOST_MEMORY an allocation failed.
 *  @retval other OpenCL errors of clGetDeviceInfo or clGetPlatformInfo.
 *  @threadsafety Any thread. @blocking The driver's answer to the query. */
CLOPS_API clops_status clops_device_string(const clops_device_info *info, clops_device_string_kind what, char *buf,
                                           size_t size, size_t *length);

/** Which path each operator and type takes on this device, as lines of text
 *  ("DepthToSpace, SpaceToDepth: ..."), from `info`'s fields alone, written to
 *  `buf` as snprintf writes (always NUL-terminated when size > 0).
 *  @param info a device of clops_device_list(); NULL gives "".
 *  @param[out] buf room for `size` bytes; may be NULL when size is 0.
 *  @param size bytes at `buf`.
 *  @return the full length, as snprintf.
 *  @threadsafety Any thread. @blocking Nothing (no driver call). */
CLOPS_API size_t clops_device_plan(const clops_device_info *info, char *buf, size_t size);

/* ---- the default device ------------------------------------------------------------ */

/** Why clops_default_device_for_host_data() chose its device. */
typedef enum clops_default_reason {
    CLOPS_DEFAULT_REASON_ENVIRONMENT = 1, /**< CLOPS_DEVICE names it ("host" or an index) */
    CLOPS_DEFAULT_REASON_GPU = 2,         /**< the first GPU of clops_device_list() */
    CLOPS_DEFAULT_REASON_NOT_CPU = 3,     /**< no GPU: the first device, which is not a CPU (an accelerator, ...) */
    CLOPS_DEFAULT_REASON_CPU = 4,         /**< no GPU, and the first device is a CPU: the host backend */
    CLOPS_DEFAULT_REASON_NO_DEVICE = 5    /**< no OpenCL device: the host backend */
} clops_default_reason;

/** The default device for tensors in host memory: the one device a plain call
 *  uses, where the caller names none. The CLI's `run` and `bench`, the Python
 *  package (NumPy arrays and torch tensors, `device=None`) and clops.onnx all
 *  take it from here, and `clops devices` marks it with the reason. The rule:
 *  1. CLOPS_DEVICE, when set ("host" or an index);
 *  2. else the first GPU;
 *  3. else the first device, unless it is a CPU: then the host backend. A CPU
 *     device's kernels run on the same cores and memory as the host kernels,
 *     and cost a copy of the tensor in and of the result out besides (on PoCL
 *     at 128 MiB float32, DepthToSpace took 130 ms on the device against 11.4 ms
 *     on the host backend: docs/performance.md);
 *  4. else (no OpenCL device) the host backend.
 *  This differs from clops_context_create() and clops_default_device() in step
 *  3 only: they take the CPU device (a caller of the C API may run the context's
 *  own cl_mem buffers on its queue, which a host context does not have).
 *  @param[out] is_host 1 for the host backend, else 0.
 *  @param[out] index the device's index in clops_device_list() when not the host (0 for the host).
 *  @param[out] reason why (::clops_default_reason); may be NULL.
 *  @return ::CLOPS_SUCCESS, or as clops_default_device():
 *  @retval CLOPS_ERROR_NULL_ARGUMENT `is_host` or `index` is NULL.
 *  @retval CLOPS_ERROR_INVALID_SETTING a bad CLOPS_* variable.
 *  @retval CLOPS_ERROR_INVALID_DEVICE_SELECTION CLOPS_DEVICE names no device
 *          (or is neither "host" nor an index).
 *  @retval CLOPS_ERROR_NO_DEVICE CLOPS_DEVICE names an index and no platform has a device.
 *  @retval other as clops_device_list().
 *  @threadsafety Any thread; reads the environment.
 *  @blocking As clops_device_list(). */
CLOPS_API clops_status clops_default_device_for_host_data(int *is_host, unsigned *index,
                                                          clops_default_reason *reason);
/** @} */

#ifdef __cplusplus
}
#endif
#endif /* CLOPS_PUBLIC_DEVICES_H */
