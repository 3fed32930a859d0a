/** @file
 * clops_errors.h - status codes of clops.
 *
 * Values are pinned: callers may store and compare them across versions.
 * Zero is success. OpenCL's own negative codes (CL_OUT_OF_RESOURCES = -5,
 * CL_BUILD_PROGRAM_FAILURE = -11, ...) are passed through unchanged, so a
 * status may be any cl_int error; clops's own codes live at -15000 to -15299,
 * clear of the ranges OpenCL and its extensions use (down to -1200).
 *
 * Every call that can fail returns a ::clops_status and, on failure, leaves a
 * message naming the offending value in clops_last_error_message() (per thread).
 * clops_status_name() and clops_status_message() name any code, OpenCL's too.
 *
 * ::CLOPS_ERROR_DEVICE_LOST is final for its context: a kernel of one of its
 * operators ended with a negative execution status (NVIDIA's -9999 for an
 * illegal memory access; a failed event of the caller's wait list does not
 * count), and from then on every call on that context - operator create,
 * execute, execute_host, last_status, program builds - returns it at once,
 * its message naming the operator and kernel where the device was lost. It is
 * also what every such call returns in a process forked after the context was
 * created (the driver's threads stayed in the parent), and what creating a
 * context on a device returns in a process forked after the driver was started
 * at all: use the spawn start method, or the host backend, which keeps working.
 * Free the context (that never calls a lost driver from a forked child) and
 * create a new one (docs/integrating.md, "A lost device loses the context", "Fork").
 */
#ifndef CLOPS_ERRORS_H
#define CLOPS_ERRORS_H

/** @def CLOPS_API
 * Marks the library's exported functions: default symbol visibility with GCC
 * and Clang (the library is built with hidden visibility), empty elsewhere.
 * Defined only if the includer has not defined it already. */
#ifndef CLOPS_API
#if defined(__GNUC__) || defined(__clang__)
#define CLOPS_API __attribute__((visibility("default")))
#else
#define CLOPS_API
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** X(name, value, message): one table makes the enum, the names and the
 *  messages, so they cannot drift apart. Expands `X` once per status, in value
 *  order within each group; a caller may expand it too (for example into a
 *  switch of its own). The message is the one clops_status_message() returns. */
#define CLOPS_STATUS_TABLE(X)                                                                      \
    X(CLOPS_SUCCESS, 0, "success")                                                                 \
    /* arguments and descriptors */                                                                \
    X(CLOPS_ERROR_NULL_ARGUMENT, -15000, "a required pointer argument is NULL")                    \
    X(CLOPS_ERROR_INVALID_OPERATOR_TYPE, -15001, "unknown operator type")                          \
    X(CLOPS_ERROR_UNSUPPORTED_DATA_TYPE, -15002, "data type not supported by this operator")       \
    X(CLOPS_ERROR_DATA_TYPE_MISMATCH, -15003, "input and output data types differ")                \
    X(CLOPS_ERROR_INVALID_BLOCK_SIZE, -15004, "block size must be at least 1")                     \
    X(CLOPS_ERROR_INVALID_ORDER, -15005, "unknown depth/space order")                              \
    X(CLOPS_ERROR_CHANNELS_NOT_DIVISIBLE, -15006, "channel count not divisible by block size squared") \
    X(CLOPS_ERROR_SPATIAL_NOT_DIVISIBLE, -15007, "height or width not divisible by block size")    \
    X(CLOPS_ERROR_OUTPUT_SIZE_MISMATCH, -15008, "output sizes do not match the operator's rule")   \
    X(CLOPS_ERROR_INDICES_SIZE_MISMATCH, -15009, "indices sizes differ from the input's")          \
    X(CLOPS_ERROR_UNSUPPORTED_INDEX_TYPE, -15010, "indices must be UINT32, UINT64 or INT64")       \
    X(CLOPS_ERROR_BATCH_CHANNEL_MISMATCH, -15011, "output batch or channel count differs from the input's") \
    X(CLOPS_ERROR_SIZE_OVERFLOW, -15012, "a size, element count or byte count overflows")         \
    X(CLOPS_ERROR_OVERLAPPING_OUTPUT, -15013, "output strides make distinct elements overlap")     \
    X(CLOPS_ERROR_BUFFER_TOO_SMALL, -15014, "a buffer is smaller than its tensor's strides span")  \
    X(CLOPS_ERROR_ALIASED_BUFFERS, -15015, "the output buffer is also an input buffer")            \
    X(CLOPS_ERROR_MISSING_BUFFER, -15016, "a buffer the operator needs was not given")             \
    X(CLOPS_ERROR_OUTPUT_NOT_DERIVED, -15017, "the operator's output sizes are the caller's, not derived") \
    X(CLOPS_ERROR_INVALID_INDICES_LAYOUT, -15018, "unknown MaxUnpooling indices layout")           \
    /* execution */                                                                                \
    X(CLOPS_ERROR_INDEX_OUT_OF_RANGE, -15100, "an unpooling index is negative or past the output") \
    X(CLOPS_ERROR_WRONG_BACKEND, -15101, "this call needs an OpenCL context, not the host backend") \
    X(CLOPS_ERROR_TOO_LARGE_FOR_DEVICE, -15102, "a buffer exceeds the device's maximum allocation") \
    X(CLOPS_ERROR_FALLBACK_REFUSED, -15103, "the device cannot run the operator and the fallback policy is never") \
    X(CLOPS_ERROR_DEVICE_TIMEOUT, -15104, "the device did not finish within the deadline")           \
    X(CLOPS_ERROR_DEVICE_LOST, -15105, "the device failed a command, or the context was lost earlier or is used after fork") \
    /* devices, programs and resources */                                                          \
    X(CLOPS_ERROR_NO_DEVICE, -15200, "no OpenCL device is available")                              \
    X(CLOPS_ERROR_INVALID_DEVICE_SELECTION, -15201, "the requested device does not exist")         \
    X(CLOPS_ERROR_OUT_OF_HOST_MEMORY, -15202, "host memory allocation failed")                     \
    X(CLOPS_ERROR_BUILD_FAILED, -15203, "the OpenCL program failed to build")                      \
    X(CLOPS_ERROR_KERNEL_SOURCE_UNAVAILABLE, -15204, "a kernel source file could not be read")     \
    X(CLOPS_ERROR_COMPILER_UNAVAILABLE, -15205, "the device has no compiler and no prebuilt binary is cached") \
    X(CLOPS_ERROR_CACHE_UNAVAILABLE, -15206, "the program cache is off or its directory is unusable") \
    X(CLOPS_ERROR_CACHE_IO, -15207, "reading or writing a cache file failed")                      \
    X(CLOPS_ERROR_BAD_PACK, -15208, "a kernel pack file is malformed")                             \
    X(CLOPS_ERROR_INVALID_SETTING, -15209, "a setting (option or environment variable) has a bad value") \
    X(CLOPS_ERROR_INTERNAL, -15299, "internal error")

/** What every fallible call returns: ::CLOPS_SUCCESS (0), one of clops's own
 *  codes below (-15000 to -15299), or an OpenCL error code (negative, above
 *  -1200) passed through unchanged. Each enumerator's text is its
 *  clops_status_message(). */
typedef enum clops_status {
#define CLOPS_X_ENUM(name, value, msg) name = value,
    CLOPS_STATUS_TABLE(CLOPS_X_ENUM)
#undef CLOPS_X_ENUM
} clops_status;

/** The enumerator's name of a status code.
 *  @param status a ::clops_status or an OpenCL error code.
 *  @return "CLOPS_ERROR_SIZE_OVERFLOW", "CL_OUT_OF_RESOURCES", ...; for a code
 *          clops does not know (neither its own nor a common OpenCL error),
 *          "CLOPS_UNKNOWN_STATUS". Never NULL; a static string.
 *  @threadsafety Any thread. @blocking Nothing. */
CLOPS_API const char *clops_status_name(int status);

/** A fixed English sentence for a status code. For the specific values behind
 *  a failure, see clops_last_error_message().
 *  @param status a ::clops_status or an OpenCL error code.
 *  @return the sentence ("a size, element count or byte count overflows"), or
 *          "unknown status code". Never NULL; a static string.
 *  @threadsafety Any thread. @blocking Nothing. */
CLOPS_API const char *clops_status_message(int status);

/** The detailed message of the last call on this thread that failed (it names
 *  the offending value, for example "input channels 7 not divisible by block
 *  size squared 4"). Thread-local, like errno: calls on other threads never
 *  change it. Read it right after the call that returned an error: a call
 *  that succeeds may leave it as it was or change it.
 *  @return the message, "" when no call on this thread has failed. Never NULL;
 *          it stays valid for the thread's life and is overwritten by the
 *          thread's next failure.
 *  @threadsafety Any thread (each has its own). @blocking Nothing. */
CLOPS_API const char *clops_last_error_message(void);

#ifdef __cplusplus
}
#endif
#endif /* CLOPS_ERRORS_H */
