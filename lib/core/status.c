/* status.c - names and messages of status codes; the per-thread detail message. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"

/* OpenCL's own codes, which clops passes through unchanged. */
#define CLOPS_CL_STATUS_TABLE(X)                                                                   \
    X(CL_DEVICE_NOT_FOUND, "no OpenCL device of the requested type")                               \
    X(CL_DEVICE_NOT_AVAILABLE, "the OpenCL device is not available")                               \
    X(CL_COMPILER_NOT_AVAILABLE, "the OpenCL device has no compiler")                              \
    X(CL_MEM_OBJECT_ALLOCATION_FAILURE, "the device could not allocate a buffer")                  \
    X(CL_OUT_OF_RESOURCES, "the device ran out of resources")                                      \
    X(CL_OUT_OF_HOST_MEMORY, "the OpenCL implementation ran out of host memory")                   \
    X(CL_PROFILING_INFO_NOT_AVAILABLE, "profiling information is not available")                  \
    X(CL_MEM_COPY_OVERLAP, "copy regions overlap")                                                 \
    X(CL_BUILD_PROGRAM_FAILURE, "the OpenCL program failed to build")                              \
    X(CL_MAP_FAILURE, "mapping a buffer failed")                                                   \
    X(CL_MISALIGNED_SUB_BUFFER_OFFSET, "sub-buffer offset is misaligned")                          \
    X(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, "an event in the wait list failed")            \
    X(CL_INVALID_VALUE, "invalid value")                                                           \
    X(CL_INVALID_DEVICE_TYPE, "invalid device type")                                               \
    X(CL_INVALID_PLATFORM, "invalid platform")                                                     \
    X(CL_INVALID_DEVICE, "invalid device")                                                         \
    X(CL_INVALID_CONTEXT, "invalid context")                                                       \
    X(CL_INVALID_QUEUE_PROPERTIES, "invalid queue properties")                                     \
    X(CL_INVALID_COMMAND_QUEUE, "invalid command queue")                                           \
    X(CL_INVALID_HOST_PTR, "invalid host pointer")                                                 \
    X(CL_INVALID_MEM_OBJECT, "invalid memory object")                                              \
    X(CL_INVALID_BINARY, "invalid program binary")                                                 \
    X(CL_INVALID_BUILD_OPTIONS, "invalid build options")                                           \
    X(CL_INVALID_PROGRAM, "invalid program")                                                       \
    X(CL_INVALID_PROGRAM_EXECUTABLE, "program not built for the device")                           \
    X(CL_INVALID_KERNEL_NAME, "invalid kernel name")                                               \
    X(CL_INVALID_KERNEL, "invalid kernel")                                                         \
    X(CL_INVALID_ARG_INDEX, "invalid kernel argument index")                                       \
    X(CL_INVALID_ARG_VALUE, "invalid kernel argument value")                                       \
    X(CL_INVALID_ARG_SIZE, "invalid kernel argument size")                                         \
    X(CL_INVALID_KERNEL_ARGS, "kernel arguments not set")                                          \
    X(CL_INVALID_WORK_DIMENSION, "invalid work dimension")                                         \
    X(CL_INVALID_WORK_GROUP_SIZE, "invalid work-group size")                                       \
    X(CL_INVALID_WORK_ITEM_SIZE, "invalid work-item size")                                         \
    X(CL_INVALID_GLOBAL_OFFSET, "invalid global offset")                                           \
    X(CL_INVALID_EVENT_WAIT_LIST, "invalid event wait list")                                       \
    X(CL_INVALID_EVENT, "invalid event")                                                           \
    X(CL_INVALID_OPERATION, "invalid operation")                                                   \
    X(CL_INVALID_BUFFER_SIZE, "invalid buffer size")                                               \
    X(CL_INVALID_GLOBAL_WORK_SIZE, "invalid global work size")

const char *clops_status_name(int status)
{
    switch (status) {
#define CLOPS_X_NAME(name, value, msg) \
    case value: return #name;
        CLOPS_STATUS_TABLE(CLOPS_X_NAME)
#undef CLOPS_X_NAME
#define CLOPS_X_CL_NAME(name, msg) \
    case name: return #name;
        CLOPS_CL_STATUS_TABLE(CLOPS_X_CL_NAME)
#undef CLOPS_X_CL_NAME
    default: return "CLOPS_UNKNOWN_STATUS";
    }
}

const char *clops_status_message(int status)
{
    switch (status) {
#define CLOPS_X_MSG(name, value, msg) \
    case value: return msg;
        CLOPS_STATUS_TABLE(CLOPS_X_MSG)
#undef CLOPS_X_MSG
#define CLOPS_X_CL_MSG(name, msg) \
    case name: return msg;
        CLOPS_CL_STATUS_TABLE(CLOPS_X_CL_MSG)
#undef CLOPS_X_CL_MSG
    default: return "unknown status code";
    }
}

/* The detail of the last failure on this thread, like errno: not shared state. */
static _Thread_local char last_message[8192]; /* a message with a whole path (at most 4200 bytes) */

const char *clops_last_error_message(void)
{
    return last_message;
}

clops_status clops_fail(clops_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    return status;
}

const char *clops_status_label(int status, char *buf, size_t size)
{
    if (strcmp(clops_status_name(status), "CLOPS_UNKNOWN_STATUS") != 0)
        snprintf(buf, size, "%s (%d)", clops_status_name(status), status);
    else
        snprintf(buf, size, "%d (which OpenCL does not define: the driver's own code; NVIDIA's -9999 is an illegal "
                 "memory access by a kernel, which loses the device)", status);
    return buf;
}

clops_status clops_fail_cl(cl_int err, const char *what)
{
    char label[256];
    return clops_fail((clops_status)err, "%s failed: %s", what, clops_status_label(err, label, sizeof label));
}

unsigned clops_version_number(void)
{
    return CLOPS_VERSION_NUMBER;
}

const char *clops_version_string(void)
{
    return CLOPS_VERSION_STRING;
}
