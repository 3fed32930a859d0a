/** @file
 * clops.h - DirectML-style tensor operators on any OpenCL device, or on the host.
 *
 * Operators: DepthToSpace and SpaceToDepth (orders DCR and CRD) and
 * MaxUnpooling, exactly as DirectML defines them, for every fixed-width type of
 * DirectML feature level 5.0 plus ONNX's BOOL, BFLOAT16, COMPLEX64 and
 * COMPLEX128. Results are bit-exact: these operators only move bits.
 *
 * Use:
 * @code
 *   clops_context *ctx;   clops_context_create(&ctx);            // default device
 *   clops_operator *op;   clops_operator_create(ctx, &desc, &op); // validates, builds
 *   clops_operator_execute(op, &bufs, 0, NULL, &event);           // cl_mem, async
 *   clops_operator_execute_host(op, &host_bufs);                  // host pointers, blocking
 *   clops_operator_free(op); clops_context_free(ctx);
 * @endcode
 *
 * Thread safety:
 *   - clops_context: may be shared by threads. Creating and freeing operators on
 *     one context from several threads at once is safe (the program table is
 *     locked). A context created around the caller's queue enqueues on that
 *     queue; OpenCL queues are thread-safe for enqueueing (OpenCL 1.1+).
 *   - clops_operator: one thread at a time. An operator owns its cl_kernel
 *     objects, whose arguments are set per execution; run one operator per thread,
 *     or serialise calls on a shared one.
 *   - Free a context only after every operator created on it is freed.
 *   - clops_last_error_message() is per-thread. Process-wide: the fallback's
 *     threads below, the locks between this process's writers of one pack or
 *     tuning database, and which process first reached the driver (fork).
 *   - An operator that fell back to the host hands each execution to one
 *     process-wide pool (at most 4 threads, started on demand; callbacks on the
 *     caller's wait list hand the work over), then one flusher thread flushes
 *     the caller's queue. They block every signal, live as long as the process
 *     and run pending work after its operator and context were freed; a forked
 *     child has none of them.
 *   - Unloading: libclops is linked with -z nodelete, so dlclose() never unmaps it
 *     and pending work completes. A shared library linking clops's objects needs
 *     -z nodelete too, or no fallback work pending at dlclose().
 *   - The library never prints and never exits.
 *   - Calls that read CLOPS_* environment variables (each says so) call getenv:
 *     as with any libc caller, no other thread may change the environment
 *     (setenv, putenv) meanwhile.
 *
 * Every function's reference says what it may block on. Each status it names is
 * a ::clops_status; "OpenCL errors" are the driver's codes passed through
 * unchanged (clops_errors.h), with the failing call named in
 * clops_last_error_message().
 */
#ifndef CLOPS_H
#define CLOPS_H

#include <stddef.h>
#include <stdint.h>

/** @def CL_TARGET_OPENCL_VERSION
 *  The OpenCL API version the OpenCL headers expose: the includer's choice (clops
 *  uses only OpenCL 1.2 types here); 120 (OpenCL 1.2) only where the includer set
 *  none, which keeps the headers quiet. */
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include "clops_errors.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @defgroup version Version
 *  The version of the headers (macros) and of the library actually linked.
 *  @{ */
/** Major version of these headers. */
#define CLOPS_VERSION_MAJOR 0
/** Minor version of these headers. */
#define CLOPS_VERSION_MINOR 1
/** Patch version of these headers. */
#define CLOPS_VERSION_PATCH 0
/** The version as one number, MAJOR * 10000 + MINOR * 100 + PATCH (0.1.0 is 100). */
#define CLOPS_VERSION_NUMBER (CLOPS_VERSION_MAJOR * 10000 + CLOPS_VERSION_MINOR * 100 + CLOPS_VERSION_PATCH)
/** The version as text, "MAJOR.MINOR.PATCH". */
#define CLOPS_VERSION_STRING "0.1.0"

/** CLOPS_VERSION_NUMBER of the library actually linked (compare it with the
 *  macro to detect a header and library mismatch).
 *  @return the linked library's version number.
 *  @threadsafety Any thread. @blocking Nothing. */
CLOPS_API unsigned clops_version_number(void);
/** CLOPS_VERSION_STRING of the library actually linked.
 *  @return a static string, never NULL.
 *  @threadsafety Any thread. @blocking Nothing. */
CLOPS_API const char *clops_version_string(void);
/** @} */

/** @defgroup tensors Data types and tensors
 *  What the operators move: elements of a fixed-width type in four-dimensional
 *  tensors, as DirectML describes them.
 *  @{ */

/* ---- data types --------------------------------------------------------------- */
/** The element types. Values 0..11 are DML_TENSOR_DATA_TYPE's; the ONNX-only
 *  types start at 100. The operators move elements as 1- to 16-byte words, so
 *  every type runs on every device (no fp16 or fp64 support is needed). */
typedef enum clops_data_type {
    CLOPS_DATA_TYPE_UNKNOWN = 0,     /**< not a type: rejected by every operator */
    CLOPS_DATA_TYPE_FLOAT32 = 1,     /**< 4 bytes */
    CLOPS_DATA_TYPE_FLOAT16 = 2,     /**< 2 bytes */
    CLOPS_DATA_TYPE_UINT32 = 3,      /**< 4 bytes; also a MaxUnpooling index type */
    CLOPS_DATA_TYPE_UINT16 = 4,      /**< 2 bytes */
    CLOPS_DATA_TYPE_UINT8 = 5,       /**< 1 byte */
    CLOPS_DATA_TYPE_INT32 = 6,       /**< 4 bytes */
    CLOPS_DATA_TYPE_INT16 = 7,       /**< 2 bytes */
    CLOPS_DATA_TYPE_INT8 = 8,        /**< 1 byte */
    CLOPS_DATA_TYPE_FLOAT64 = 9,     /**< 8 bytes */
    CLOPS_DATA_TYPE_UINT64 = 10,     /**< 8 bytes; also a MaxUnpooling index type */
    CLOPS_DATA_TYPE_INT64 = 11,      /**< 8 bytes; also a MaxUnpooling index type */
    CLOPS_DATA_TYPE_BOOL = 100,      /**< ONNX BOOL, 1 byte */
    CLOPS_DATA_TYPE_BFLOAT16 = 101,  /**< ONNX BFLOAT16, 2 bytes */
    CLOPS_DATA_TYPE_COMPLEX64 = 102, /**< ONNX COMPLEX64, 8 bytes */
    CLOPS_DATA_TYPE_COMPLEX128 = 103 /**< ONNX COMPLEX128, 16 bytes */
} clops_data_type;

/** Bytes per element of a type.
 *  @param type any value.
 *  @return 1, 2, 4, 8 or 16; 0 if `type` is not a ::clops_data_type clops knows
 *          (::CLOPS_DATA_TYPE_UNKNOWN included).
 *  @threadsafety Any thread. @blocking Nothing. */
CLOPS_API size_t clops_data_type_size(clops_data_type type);
/** The name of a type.
 *  @param type any value.
 *  @return "FLOAT32", "BFLOAT16", ...; "UNKNOWN" if unknown. A static string,
 *          never NULL.
 *  @threadsafety Any thread. @blocking Nothing. */
CLOPS_API const char *clops_data_type_name(clops_data_type type);

/* ---- tensors ------------------------------------------------------------------ */
/** A tensor, as DML_BUFFER_TENSOR_DESC with four dimensions: sizes are
 *  { N, C, H, W }; strides are in elements, NULL means packed NCHW. A zero stride
 *  broadcasts an input along that dimension (not allowed on outputs, whose
 *  elements must not overlap). A zero size is valid and gives an empty tensor.
 *  Calls read descriptors only while they run (clops_operator_create copies what
 *  it keeps), so they may be freed or reused afterwards. */
typedef struct clops_tensor_desc {
    clops_data_type data_type; /**< the element type */
    uint32_t sizes[4];         /**< { N, C, H, W } */
    const uint64_t *strides;   /**< 4 strides in elements, or NULL for packed */
} clops_tensor_desc;
/** @} */

/** @defgroup descriptors Operator descriptors
 *  What an operator computes, checked without any device by
 *  clops_operator_validate(). Everything is validated before any work, in this
 *  order: null pointers, operator type, each tensor on its own (type, overflow
 *  of every size product, byte count and strided span, output overlap),
 *  input/output type agreement, then the operator's rules; the first failure
 *  is returned.
 *  @{ */

/* ---- operators ---------------------------------------------------------------- */
/** How DepthToSpace and SpaceToDepth order the block within the channels. */
typedef enum clops_depth_space_order {
    CLOPS_ORDER_DEPTH_COLUMN_ROW = 0, /**< DCR: DML's default, ONNX mode "DCR" */
    CLOPS_ORDER_COLUMN_ROW_DEPTH = 1  /**< CRD: ONNX mode "CRD", PyTorch pixel_(un)shuffle */
} clops_depth_space_order;

/** DML_DEPTH_TO_SPACE1_OPERATOR_DESC: output { N, C/b², H*b, W*b }. */
typedef struct clops_depth_to_space_desc {
    const clops_tensor_desc *input;  /**< { N, C, H, W }; C divisible by block_size² */
    const clops_tensor_desc *output; /**< { N, C/b², H*b, W*b }, the input's type */
    uint32_t block_size;             /**< b, at least 1 */
    clops_depth_space_order order;   /**< DCR or CRD */
} clops_depth_to_space_desc;

/** DML_SPACE_TO_DEPTH1_OPERATOR_DESC: output { N, C*b², H/b, W/b }. */
typedef struct clops_space_to_depth_desc {
    const clops_tensor_desc *input;  /**< { N, C, H, W }; H and W divisible by block_size */
    const clops_tensor_desc *output; /**< { N, C*b², H/b, W/b }, the input's type */
    uint32_t block_size;             /**< b, at least 1 */
    clops_depth_space_order order;   /**< DCR or CRD */
} clops_space_to_depth_desc;

/* MaxUnpooling's descriptor, clops_max_unpooling_desc, and its clops_indices_layout:
 * clops_max_unpooling.h (included below). */

/** Which operator a ::clops_operator_desc describes. */
typedef enum clops_operator_type {
    CLOPS_OPERATOR_DEPTH_TO_SPACE = 1, /**< desc is a ::clops_depth_to_space_desc */
    CLOPS_OPERATOR_SPACE_TO_DEPTH = 2, /**< desc is a ::clops_space_to_depth_desc */
    CLOPS_OPERATOR_MAX_UNPOOLING = 3   /**< desc is a ::clops_max_unpooling_desc */
} clops_operator_type;

/** As DML_OPERATOR_DESC: a type and a pointer to that type's descriptor. */
typedef struct clops_operator_desc {
    clops_operator_type type; /**< the operator */
    const void *desc;         /**< the descriptor of that type */
} clops_operator_desc;

/** Checks a descriptor without any device: types, sizes against the operator's
 *  rules, strides, and overflow of every size product (in the order of @ref descriptors).
 *  @param desc the operator's descriptor.
 *  @return ::CLOPS_SUCCESS or the specific CLOPS_ERROR_* code, with the
 *          offending value in clops_last_error_message():
 *  @retval CLOPS_ERROR_NULL_ARGUMENT `desc`, its descriptor, or a tensor
 *          descriptor it needs (input, output, MaxUnpooling's indices) is NULL.
 *  @retval CLOPS_ERROR_INVALID_OPERATOR_TYPE unknown `desc->type`.
 *  @retval CLOPS_ERROR_UNSUPPORTED_DATA_TYPE an input or output type clops does not know.
 *  @retval CLOPS_ERROR_UNSUPPORTED_INDEX_TYPE indices not UINT32, UINT64 or INT64.
 *  @retval CLOPS_ERROR_SIZE_OVERFLOW an element count, byte count or strided span overflows.
 *  @retval CLOPS_ERROR_OVERLAPPING_OUTPUT output strides make distinct elements share an address.
 *  @retval CLOPS_ERROR_DATA_TYPE_MISMATCH the output's type differs from the input's.
 *  @retval CLOPS_ERROR_INVALID_BLOCK_SIZE DepthToSpace/SpaceToDepth: block size 0.
 *  @retval CLOPS_ERROR_INVALID_ORDER DepthToSpace/SpaceToDepth: order neither DCR nor CRD.
 *  @retval CLOPS_ERROR_CHANNELS_NOT_DIVISIBLE DepthToSpace: C not divisible by b².
 *  @retval CLOPS_ERROR_SPATIAL_NOT_DIVISIBLE SpaceToDepth: H or W not divisible by b.
 *  @retval CLOPS_ERROR_OUTPUT_SIZE_MISMATCH DepthToSpace/SpaceToDepth: output sizes not the rule's.
 *  @retval CLOPS_ERROR_INDICES_SIZE_MISMATCH MaxUnpooling: indices sizes differ from the input's.
 *  @retval CLOPS_ERROR_BATCH_CHANNEL_MISMATCH MaxUnpooling: output N or C differs from the input's.
 *  @threadsafety Any thread. @blocking Nothing (no device, no allocation). */
CLOPS_API clops_status clops_operator_validate(const clops_operator_desc *desc);

/** The output sizes the operator's rule gives for `desc`'s input and attributes
 *  (DepthToSpace: {N, C/b^2, H*b, W*b}; SpaceToDepth: {N, C*b^2, H/b, W/b}),
 *  checked as clops_operator_validate checks them; the output tensor
 *  descriptor is not read and may be NULL. `sizes` is written only on success.
 *  @param desc the operator's descriptor (its output may be NULL).
 *  @param[out] sizes the output's { N, C, H, W } on success.
 *  @return ::CLOPS_SUCCESS with `sizes` filled, or:
 *  @retval CLOPS_ERROR_NULL_ARGUMENT `desc`, its descriptor, its input or `sizes` is NULL.
 *  @retval CLOPS_ERROR_INVALID_OPERATOR_TYPE unknown `desc->type`.
 *  @retval CLOPS_ERROR_OUTPUT_NOT_DERIVED MaxUnpooling, whose output height and
 *          width are the caller's.
 *  @retval CLOPS_ERROR_SIZE_OVERFLOW an output size would pass 2^32-1 (or the
 *          input's own counts overflow).
 *  @retval other the validation's CLOPS_ERROR_* code for the input and
 *          attributes (type, block size, order, divisibility).
 *  @threadsafety Any thread. @blocking Nothing. */
CLOPS_API clops_status clops_operator_output_sizes(const clops_operator_desc *desc, uint32_t sizes[4]);
/** @} */

/** @defgroup contexts Contexts
 *  A context is a device (its cl_context and queue), or the host backend, with
 *  its settings, program table and program cache. Every operator is created on
 *  one. A context may be shared by threads; free it after its operators.
 *  @{ */

/* ---- contexts ----------------------------------------------------------------- */
/** A device, or the host backend, with its settings (opaque). Made by the
 *  clops_context_create*() calls, freed by clops_context_free(). */
typedef struct clops_context clops_context;
/** @} */

/* ---- context options -------------------------------------------------------------- */
/** @defgroup context_options Context options
 * @ingroup contexts
 * Every setting of a context, through the API. The environment variables named
 * beside each field are defaults only: clops_context_options_from_env() reads
 * them (all of them, in one place, strictly), and a context made without options
 * uses them. Fields set after that call win.
 *
 * @code
 *   clops_context_options o;
 *   clops_context_options_init(&o, sizeof o);      // built-in defaults
 *   st = clops_context_options_from_env(&o);        // optional: honour CLOPS_*
 *   o.fallback = CLOPS_FALLBACK_NEVER;
 *   o.timeout_seconds = 5;
 *   st = clops_context_create_with_options(&o, &ctx);
 * @endcode
 *
 * The struct grows at its end only: `size` (set by clops_context_options_init
 * to the caller's sizeof) tells the library which fields the caller knows, and
 * fields past it keep their built-in defaults. Strings are copied when the
 * context is made. Environment values: keywords are case-insensitive ("off",
 * "OFF"); anything else (spaces, unknown words, numbers with junk) is an error
 * naming the variable and why, never ignored. An empty variable counts as unset.
 * @{ */
/** How a context uses the on-disk program cache. */
typedef enum clops_cache_policy {
    CLOPS_CACHE_POLICY_READ_WRITE = 0, /**< CLOPS_CACHE=rw (the default) */
    CLOPS_CACHE_POLICY_READ_ONLY = 1,  /**< CLOPS_CACHE=ro: load, never store */
    CLOPS_CACHE_POLICY_OFF = 2         /**< CLOPS_CACHE=off */
} clops_cache_policy;

/** What clops_operator_create() does with an operator the OpenCL device cannot run. */
typedef enum clops_fallback_policy {
    CLOPS_FALLBACK_ALLOW = 0, /**< CLOPS_FALLBACK=allow (default): an operator the OpenCL device
                                 cannot run (no compiler and no binary, failed build, tensors
                                 past 2^32 elements without 64-bit integers) runs on the host */
    CLOPS_FALLBACK_NEVER = 1  /**< CLOPS_FALLBACK=never: clops_operator_create fails with
                                 CLOPS_ERROR_FALLBACK_REFUSED instead */
} clops_fallback_policy;

/** clops_context_options::disable bit: treat cl_khr_fp64 as absent (CLOPS_DISABLE=fp64). */
#define CLOPS_CAPABILITY_FP64 1u
/** clops_context_options::disable bit: treat 64-bit integers as absent (CLOPS_DISABLE=int64). */
#define CLOPS_CAPABILITY_INT64 2u
/** clops_context_options::disable bit: treat cl_khr_fp16 as absent (CLOPS_DISABLE=fp16). */
#define CLOPS_CAPABILITY_FP16 4u
/** clops_context_options::disable bit: never compile; load cached or imported
 *  binaries only (CLOPS_DISABLE=compiler). */
#define CLOPS_CAPABILITY_COMPILER 8u
/** clops_context_options::disable bit: never use the programs specialised per
 *  shape; every operator runs the portable program (CLOPS_DISABLE=specialised). */
#define CLOPS_CAPABILITY_SPECIALISED 16u

/** clops_context_options::device: the default rule of clops_context_create(). */
#define CLOPS_DEVICE_DEFAULT (-1)
/** clops_context_options::device: the host backend. */
#define CLOPS_DEVICE_HOST (-2)

/** Every setting of a context (see @ref context_options). Fill it with
 *  clops_context_options_init() first. */
typedef struct clops_context_options {
    size_t size;                     /**< sizeof(clops_context_options) as the caller compiled it */
    int device;                      /**< CLOPS_DEVICE: "host" or an index; default CLOPS_DEVICE_DEFAULT.
                                          An index of clops_device_list(), CLOPS_DEVICE_DEFAULT or
                                          CLOPS_DEVICE_HOST */
    clops_cache_policy cache;        /**< CLOPS_CACHE: rw, ro or off */
    const char *cache_dir;           /**< CLOPS_CACHE_DIR; NULL: $XDG_CACHE_HOME/clops, else ~/.cache/clops */
    uint64_t cache_max_bytes;        /**< CLOPS_CACHE_MAX_SIZE: bytes, or digits with K, M or G
                                        (powers of 1024); default 256 MiB; 0 keeps nothing */
    int tuning;                      /**< CLOPS_TUNE: on (1, default) or off (0): use the tuning database */
    const char *tuning_db;           /**< the tuning database file; NULL: per device beside the cache */
    unsigned disable;                /**< CLOPS_DISABLE: CLOPS_CAPABILITY_* reported absent */
    clops_fallback_policy fallback;  /**< CLOPS_FALLBACK: allow or never */
    unsigned host_threads;           /**< threads of the host kernels for tensors of 4 MiB and
                                        more (at most 16); 0 (default): one per processor */
    double timeout_seconds;          /**< CLOPS_TIMEOUT: seconds, or 0 / "none" (default): no deadline.
                                        See "Deadline" below (@ref deadline); at most 1000000 */
} clops_context_options;

/** The built-in defaults (no environment) into the first `size` bytes of
 *  `opts`, and opts->size = size. Pass sizeof *opts. A size that is not the
 *  sizeof of a released version of the struct (0.1.0's, 72 bytes on LP64, is
 *  the only one so far) is CLOPS_ERROR_INVALID_SETTING, here and from every
 *  call that takes options.
 *  @param[out] opts the options to fill.
 *  @param size sizeof *opts as the caller compiled it.
 *  @return ::CLOPS_SUCCESS, or:
 *  @retval CLOPS_ERROR_NULL_ARGUMENT `opts` is NULL.
 *  @retval CLOPS_ERROR_INVALID_SETTING `size` is not a released version's.
 *  @threadsafety Any thread. @blocking Nothing. */
CLOPS_API clops_status clops_context_options_init(clops_context_options *opts, size_t size);

/** Overwrites the fields whose environment variable is set (CLOPS_DEVICE,
 *  CLOPS_CACHE, CLOPS_CACHE_DIR, CLOPS_CACHE_MAX_SIZE, CLOPS_TUNE,
 *  CLOPS_DISABLE, CLOPS_FALLBACK, CLOPS_TIMEOUT), within the caller's opts->size.
 *  A bad value is CLOPS_ERROR_INVALID_SETTING with a message naming the variable
 *  and why; `opts` is then unchanged. cache_dir points into the environment.
 *  @param[in,out] opts options filled by clops_context_options_init().
 *  @return ::CLOPS_SUCCESS, or:
 *  @retval CLOPS_ERROR_NULL_ARGUMENT `opts` is NULL.
 *  @retval CLOPS_ERROR_INVALID_SETTING a variable has a bad value, or a field
 *          of `opts` is out of range (opts->size not a released version's included).
 *  @retval CLOPS_ERROR_INVALID_DEVICE_SELECTION CLOPS_DEVICE is neither "host"
 *          nor an index, or opts->device is below CLOPS_DEVICE_HOST.
 *  @threadsafety Any thread; reads the environment. @blocking Nothing. */
CLOPS_API clops_status clops_context_options_from_env(clops_context_options *opts);

/** @defgroup deadline Deadline
 * @ingroup context_options
 * With timeout_seconds > 0, every wait clops itself does for the
 * device ends by then: clops_operator_execute_host() waiting for its kernels,
 * and clops_operator_last_status() (one deadline for the whole call; for an
 * operator running on the host over cl_mem buffers, the host work not started
 * by then is given up, nothing written, and that call says so). The host work
 * itself has no deadline, as a device command has none. A wait that ends there
 * returns CLOPS_ERROR_DEVICE_TIMEOUT
 * (the message names the device); the commands stay queued, and the caller's
 * host memory is never written after that return. A command the device reports
 * failed (a negative execution status, as a lost remote device gives) is
 * CLOPS_ERROR_DEVICE_LOST, with or without a deadline. What a library cannot
 * bound: a call blocked inside the driver (a blocking read of a finished
 * kernel's output, clFinish, releasing objects) - a process that must end on
 * time enforces the deadline whole, as the CLI's --timeout does. */

/** A context as `opts` says (NULL: the built-in defaults and the environment,
 *  as clops_context_create). Values out of range are
 *  CLOPS_ERROR_INVALID_SETTING. The device is opts->device: an index, the
 *  host, or the default rule of clops_context_create(). A cache directory that
 *  cannot be used is not an error: the context runs uncached and
 *  clops_context_cache_status() says why.
 *  @param opts the settings, or NULL.
 *  @param[out] out the new context; NULL on failure.
 *  @return ::CLOPS_SUCCESS, or:
 *  @retval CLOPS_ERROR_NULL_ARGUMENT `out` is NULL.
 *  @retval CLOPS_ERROR_INVALID_SETTING a field out of range, or (opts NULL) a
 *          bad CLOPS_* variable.
 *  @retval CLOPS_ERROR_INVALID_DEVICE_SELECTION the device named does not exist.
 *  @retval CLOPS_ERROR_NO_DEVICE a device index was named and no platform has a device.
 *  @retval CLOPS_ERROR_DEVICE_LOST an OpenCL device, in a process forked after
 *          this one's OpenCL driver was started (by a device listing or query of
 *          clops): the driver does not work there; the message says what to do
 *          (the spawn start method, or the host backend). docs/integrating.md, "Fork".
 *  @retval CLOPS_ERROR_OUT_OF_HOST_MEMORY an allocation failed.
 *  @retval other OpenCL errors (listing devices, clCreateContext, clCreateCommandQueue, ...).
 *  @threadsafety Any thread; reads the environment when `opts` is NULL.
 *  @blocking The driver: listing the devices, creating the cl_context and its
 *  queue (a remote device connects); creating the cache directory. Nothing is
 *  compiled here. */
CLOPS_API clops_status clops_context_create_with_options(const clops_context_options *opts, clops_context **out);

/** clops_context_create_from_cl with options (opts->device is ignored: the
 *  device is the caller's).
 *  @param context the caller's cl_context; retained by clops.
 *  @param device a device of `context`.
 *  @param queue a queue of `context` on `device`, in-order or out-of-order; retained.
 *  @param opts the settings, or NULL (the defaults and the environment).
 *  @param[out] out the new context; NULL on failure.
 *  @return ::CLOPS_SUCCESS, or:
 *  @retval CLOPS_ERROR_NULL_ARGUMENT `out`, `context`, `device` or `queue` is NULL.
 *  @retval CL_INVALID_CONTEXT `queue` belongs to another cl_context.
 *  @retval CL_INVALID_DEVICE `queue` is for another device than `device`.
 *  @retval CLOPS_ERROR_INVALID_SETTING a field out of range, or (opts NULL) a bad CLOPS_* variable.
 *  @retval CLOPS_ERROR_DEVICE_LOST in a process forked after the OpenCL driver
 *          was started, as clops_context_create_with_options().
 *  @retval CLOPS_ERROR_OUT_OF_HOST_MEMORY an allocation failed.
 *  @retval other OpenCL errors of the queries and retains.
 *  @threadsafety Any thread; reads the environment when `opts` is NULL.
 *  @blocking The driver's answers to the device queries; creating the cache
 *  directory. */
CLOPS_API clops_status clops_context_create_from_cl_with_options(cl_context context, cl_device_id device,
                                                                 cl_command_queue queue,
                                                                 const clops_context_options *opts,
                                                                 clops_context **out);
/** @} */

/** @addtogroup contexts
 *  @{ */
/** Where a context runs its operators. */
typedef enum clops_backend {
    CLOPS_BACKEND_OPENCL = 1, /**< an OpenCL device */
    CLOPS_BACKEND_HOST = 2    /**< the host kernels (plain C, no OpenCL) */
} clops_backend;

/** A context on the default device, with the settings of the environment
 *  (clops_context_options_from_env; a bad value is an error): the variable
 *  CLOPS_DEVICE if set ("host", or an index from clops_device_list()), else the
 *  first GPU, else the first device of any type, else the host. A CLOPS_DEVICE
 *  naming a device that does not exist is an error
 *  (CLOPS_ERROR_INVALID_DEVICE_SELECTION), never a silent substitute. This
 *  takes a CPU device where there is one (the caller may run the context's own
 *  cl_mem buffers on its queue); the default for tensors in host memory, which
 *  the CLI's run and bench, Python and clops.onnx use, is the host backend
 *  instead: clops_default_device_for_host_data() (clops_devices.h).
 *  @param[out] out the new context; NULL on failure.
 *  @return as clops_context_create_with_options() with NULL options.
 *  @threadsafety Any thread; reads the environment.
 *  @blocking As clops_context_create_with_options(). */
CLOPS_API clops_status clops_context_create(clops_context **out);

/** The device clops_context_create() would use, without creating anything
 *  (clops_default_device_for_host_data() gives the default for host data):
 *  `*is_host` = 1 for the host backend, else 0 with `*index` its position in
 *  clops_device_list(). Fails as clops_context_create() does
 *  (CLOPS_ERROR_INVALID_DEVICE_SELECTION for a CLOPS_DEVICE that names no device).
 *  @param[out] is_host 1 for the host backend, else 0.
 *  @param[out] index the device's index when not the host.
 *  @return ::CLOPS_SUCCESS, or:
 *  @retval CLOPS_ERROR_NULL_ARGUMENT `is_host` or `index` is NULL.
 *  @retval CLOPS_ERROR_INVALID_SETTING a bad CLOPS_* variable.
 *  @retval CLOPS_ERROR_INVALID_DEVICE_SELECTION CLOPS_DEVICE names no device
 *          (or is neither "host" nor an index).
 *  @retval CLOPS_ERROR_NO_DEVICE CLOPS_DEVICE names an index and no platform has a device.
 *  @retval other as clops_device_list().
 *  @threadsafety Any thread; reads the environment.
 *  @blocking As clops_device_list(). */
CLOPS_API clops_status clops_default_device(int *is_host, unsigned *index);

/** A context (with its own cl_context and in-order queue) on device `index`
 *  of clops_device_list(), with the environment's other settings.
 *  @param index the device's index.
 *  @param[out] out the new context; NULL on failure.
 *  @return ::CLOPS_SUCCESS, or:
 *  @retval CLOPS_ERROR_NULL_ARGUMENT `out` is NULL.
 *  @retval CLOPS_ERROR_NO_DEVICE no platform has a device.
 *  @retval CLOPS_ERROR_INVALID_DEVICE_SELECTION `index` is past the list.
 *  @retval other as clops_context_create_with_options().
 *  @threadsafety Any thread; reads the environment.
 *  @blocking As clops_context_create_with_options(). */
CLOPS_API clops_status clops_context_create_device(unsigned index, clops_context **out);

/** A context that runs the host kernels, with the environment's other settings.
 *  @param[out] out the new context; NULL on failure.
 *  @return ::CLOPS_SUCCESS, or:
 *  @retval CLOPS_ERROR_NULL_ARGUMENT `out` is NULL.
 *  @retval CLOPS_ERROR_INVALID_SETTING a bad CLOPS_* variable.
 *  @retval CLOPS_ERROR_INVALID_DEVICE_SELECTION CLOPS_DEVICE is neither "host" nor an index.
 *  @retval CLOPS_ERROR_OUT_OF_HOST_MEMORY an allocation failed.
 *  @threadsafety Any thread; reads the environment. @blocking Nothing (no OpenCL). */
CLOPS_API clops_status clops_context_create_host(clops_context **out);

/** Wraps the caller's context, device and queue (clops retains them and
 *  releases them on free). Work is enqueued on `queue`, which may be in-order
 *  or out-of-order: clops orders its own commands with events. Settings come
 *  from the environment.
 *  @param context the caller's cl_context.
 *  @param device a device of `context`.
 *  @param queue a queue of `context` on `device`.
 *  @param[out] out the new context; NULL on failure.
 *  @return as clops_context_create_from_cl_with_options() with NULL options.
 *  @threadsafety Any thread; reads the environment.
 *  @blocking As clops_context_create_from_cl_with_options(). */
CLOPS_API clops_status clops_context_create_from_cl(cl_context context, cl_device_id device,
                                          cl_command_queue queue, clops_context **out);

/** Releases everything the context holds: its programs, and its references to
 *  the cl_context and queue. NULL is fine. In a process forked after the
 *  context was created it calls no OpenCL function (the driver's threads stayed
 *  in the parent): the OpenCL objects are left to the process's exit
 *  (clops_operator_free() likewise).
 *  @param ctx the context, or NULL.
 *  @threadsafety Only once every operator created on it is freed and no other
 *  thread uses it.
 *  @blocking Releasing OpenCL objects (inside the driver; not bounded by the
 *  deadline). */
CLOPS_API void clops_context_free(clops_context *ctx);

/** Where the context runs its operators.
 *  @param ctx the context.
 *  @return CLOPS_BACKEND_OPENCL or CLOPS_BACKEND_HOST (also for NULL).
 *  @threadsafety Any thread. @blocking Nothing. */
CLOPS_API clops_backend clops_context_backend(const clops_context *ctx);

/** The device's name, or "host".
 *  @param ctx the context.
 *  @return the name, valid while `ctx` lives; "" for NULL.
 *  @threadsafety Any thread. @blocking Nothing. */
CLOPS_API const char *clops_context_device_name(const clops_context *ctx);

/** One line saying where the on-disk program cache is and whether it is
 *  read-write or read-only, or why it is off.
 *  @param ctx the context.
 *  @return the line, valid while `ctx` lives; "" for NULL.
 *  @threadsafety Any thread. @blocking Nothing. */
CLOPS_API const char *clops_context_cache_status(const clops_context *ctx);

/** The file of ctx's tuning database (the tuning_db option, else the device's
 *  file beside the program cache), whether or not it exists yet.
 *  @param ctx the context.
 *  @param buf receives the path, NUL-terminated, cut to `size`; "" on the host
 *         backend or for NULL `ctx`.
 *  @param size bytes at `buf`.
 *  @return `buf`.
 *  @threadsafety Any thread. @blocking Nothing. */
CLOPS_API const char *clops_context_tuning_db(const clops_context *ctx, char *buf, size_t size);

/** The queue clops enqueues on (NULL on the host). Not retained for the caller.
 *  @param ctx the context.
 *  @return the queue, valid while `ctx` lives (retain it to keep it longer); NULL
 *          on the host backend or for NULL.
 *  @threadsafety Any thread. @blocking Nothing. */
CLOPS_API cl_command_queue clops_context_queue(const clops_context *ctx);
/** The cl_context (NULL on the host). Not retained for the caller.
 *  @param ctx the context.
 *  @return the cl_context, valid while `ctx` lives; NULL on the host backend or for NULL.
 *  @threadsafety Any thread. @blocking Nothing. */
CLOPS_API cl_context clops_context_cl_context(const clops_context *ctx);
/** @} */

/** @defgroup operators Operators
 *  An operator is a validated descriptor prepared on a context: its program
 *  built (or loaded) and its kernels created, or the host path chosen. It runs
 *  on cl_mem buffers (clops_operator_execute(), asynchronous) or on host memory
 *  (clops_operator_execute_host(), blocking). One thread at a time per operator.
 *  @{ */

/* ---- operator objects --------------------------------------------------------- */
/** A prepared operator (opaque). Made by clops_operator_create(), freed by
 *  clops_operator_free(). */
typedef struct clops_operator clops_operator;

/** Validates `desc` (as clops_operator_validate), copies it, and prepares it on
 *  `ctx`: builds (or reuses) the program specialised for it and creates its
 *  kernels. Each program is compiled once per context. Under the fallback
 *  policy allow, an operator the device cannot run (no compiler and no binary,
 *  a failed build, tensors past 2^32 elements without 64-bit integers, a
 *  MaxUnpooling too large for the device's plan) is created for the host path
 *  and clops_operator_get_info() says why.
 *  @param ctx the context.
 *  @param desc the operator's descriptor; not kept.
 *  @param[out] out the new operator; NULL on failure.
 *  @return ::CLOPS_SUCCESS and *out, or an error and *out = NULL:
 *  @retval CLOPS_ERROR_NULL_ARGUMENT `out` or `ctx` is NULL.
 *  @retval CLOPS_ERROR_TOO_LARGE_FOR_DEVICE a tensor spans more than the
 *          device's maximum allocation.
 *  @retval CLOPS_ERROR_FALLBACK_REFUSED the device cannot run it and the
 *          context's fallback policy is never.
 *  @retval CLOPS_ERROR_OUT_OF_HOST_MEMORY an allocation failed.
 *  @retval other the validation's CLOPS_ERROR_* codes (clops_operator_validate());
 *          OpenCL errors (loading a cached binary, clCreateKernel, clCreateBuffer, ...).
 *  @threadsafety Any thread; several threads may create operators on one
 *  context at once.
 *  @blocking Building the program on first use in the context: the disk cache
 *  (file reads, and on a store its writes and eviction), else the driver's
 *  compiler (seconds). The build holds the context's program lock, so other
 *  threads creating operators on the same context wait for it. Also the
 *  driver's kernel and buffer creation, and the tuning database's read. */
CLOPS_API clops_status clops_operator_create(clops_context *ctx, const clops_operator_desc *desc,
                                   clops_operator **out);

/** Releases the operator's kernels, buffers and events. NULL is fine.
 *  Commands already enqueued still complete (OpenCL keeps what they use), and
 *  so does the host work of an operator on the host path: clops's pool of
 *  threads runs it and then releases what it held (free does not wait for it).
 *  The pool (at most 4 threads for the whole process, shared by every fallback
 *  operator) outlives the operators; its idle threads hold nothing.
 *  @param op the operator, or NULL.
 *  @threadsafety Not while another thread uses `op`.
 *  @blocking Releasing OpenCL objects (inside the driver). Never on the
 *  caller's events. */
CLOPS_API void clops_operator_free(clops_operator *op);

/** Buffers for an execution. `indices` only for MaxUnpooling. Each buffer must
 * hold its tensor's whole span (checked against CL_MEM_SIZE). */
typedef struct clops_buffers {
    cl_mem input;   /**< the input tensor's buffer (or sub-buffer) */
    cl_mem indices; /**< MaxUnpooling's indices; ignored by the other operators */
    cl_mem output;  /**< the output's buffer; must not overlap an input's (sub-buffers included) */
} clops_buffers;

/** Enqueues the operator on the context's queue, after the events in
 *  `wait_list`, and returns without waiting (the wait list may hold user events
 *  completed later); `*event` (if not NULL) receives an event that completes
 *  when the output is written (release it with clReleaseEvent). The returned
 *  status is about enqueuing; MaxUnpooling's bad indices are found on the
 *  device and reported by clops_operator_last_status(). Executions of one
 *  MaxUnpooling operator run one after another, even on an out-of-order queue
 *  (they share the operator's status words and scratch); one that failed (a
 *  wait-list event that failed) does not hold back the next. An operator that
 *  fell back to the host does not wait either: a thread of clops's one pool
 *  (at most 4 threads for all fallback operators of the process) runs the
 *  host kernel once the wait list completed (an event callback hands it over;
 *  nothing polls); the event still completes after
 *  the output is written, and always with CL_COMPLETE - the host work's status
 *  (a failed wait list, a failed map: the output untouched) is
 *  clops_operator_last_status(). Its executions run one after another, in the
 *  order of the execute calls. The operator and the context may be freed
 *  before that work ran. Needs an OpenCL context (else CLOPS_ERROR_WRONG_BACKEND).
 *  When execute fails, commands it already enqueued may still run (they are
 *  never waited for): finish the queue before reusing the buffers.
 *  @param op the operator.
 *  @param buffers the cl_mem buffers, of the operator's cl_context.
 *  @param num_events_in_wait_list how many events `wait_list` holds.
 *  @param wait_list events to wait for, of the operator's cl_context; NULL when
 *         num_events_in_wait_list is 0.
 *  @param[out] event the execution's event, or NULL (set to NULL on failure).
 *  @return ::CLOPS_SUCCESS, or:
 *  @retval CLOPS_ERROR_NULL_ARGUMENT `op` or `buffers` is NULL, or the wait
 *          list's pointer and count disagree.
 *  @retval CLOPS_ERROR_WRONG_BACKEND the operator's context is the host backend.
 *  @retval CLOPS_ERROR_MISSING_BUFFER a buffer the operator needs is NULL.
 *  @retval CLOPS_ERROR_BUFFER_TOO_SMALL a buffer is smaller than its tensor's span.
 *  @retval CLOPS_ERROR_ALIASED_BUFFERS the output overlaps an input.
 *  @retval CL_INVALID_CONTEXT a buffer or wait event of another cl_context.
 *  @retval CLOPS_ERROR_OUT_OF_HOST_MEMORY an allocation failed.
 *  @retval CL_OUT_OF_RESOURCES an operator on the host path, and clops's pool
 *          has no thread and cannot start one (EAGAIN: the message names the
 *          per-user limit RLIMIT_NPROC).
 *  @retval CLOPS_ERROR_DEVICE_LOST an operator on the host path used before
 *          this process forked, executed in the child.
 *  @retval other OpenCL errors (buffer and event queries, clSetKernelArg, the enqueues).
 *  @threadsafety One thread at a time per operator; the queue may be shared.
 *  @blocking Never: enqueue calls only, on every path (an operator on the host
 *  path enqueues a 1-byte read; once it and the wait list ended - callbacks,
 *  or the pool's watcher reading their status - clops's pool maps the buffers
 *  and runs the host kernel; the first execution may start a pool thread). */
CLOPS_API clops_status clops_operator_execute(clops_operator *op, const clops_buffers *buffers,
                                    cl_uint num_events_in_wait_list, const cl_event *wait_list,
                                    cl_event *event);

/** The status of the operator's last clops_operator_execute(), once its
 *  commands have completed (it waits for them: call it after the returned event
 *  completed to wait for nothing). MaxUnpooling: CLOPS_ERROR_INDEX_OUT_OF_RANGE
 *  if an index was negative or past the output (such elements are never written
 *  anywhere; every other element was written as usual), or an OpenCL error if
 *  the status could not be read. CLOPS_SUCCESS before any execution, after a
 *  successful one, and for DepthToSpace and SpaceToDepth (which have nothing to
 *  report later). For an operator that fell back to the host: the status of
 *  its host work since the last execute before the previous call - any
 *  execution's failure, not only the last one's (CLOPS_ERROR_DEVICE_LOST when
 *  a wait list failed, CLOPS_ERROR_DEVICE_TIMEOUT when a call timed out and
 *  gave up executions not started; such an output is untouched); it is
 *  reported again until the next execute.
 *  @param op the operator.
 *  @return ::CLOPS_SUCCESS, or:
 *  @retval CLOPS_ERROR_NULL_ARGUMENT `op` is NULL.
 *  @retval CLOPS_ERROR_INDEX_OUT_OF_RANGE MaxUnpooling: a bad index was skipped.
 *  @retval CLOPS_ERROR_DEVICE_TIMEOUT the commands did not finish within the deadline.
 *  @retval CLOPS_ERROR_DEVICE_LOST the device reported a command failed (a
 *          kernel's own failure marks the context lost: every later call on it
 *          returns this, naming the operator and kernel; a failed event of the
 *          caller's wait list fails that execution only, named with its
 *          status, and the operator and context go on), or the context was
 *          lost earlier, or this process was forked after the context was created.
 *  @retval other OpenCL errors (waiting, reading the status words).
 *  @threadsafety One thread at a time per operator.
 *  @blocking MaxUnpooling on a device: the last execution's commands (within
 *  the deadline), then a blocking read of its status words; an operator on the
 *  host path: its worker's host work for every execution so far, then the
 *  last one's event (within the deadline). Nothing otherwise. */
CLOPS_API clops_status clops_operator_last_status(clops_operator *op);

/** Host memory for clops_operator_execute_host(); sizes in bytes. */
typedef struct clops_host_buffers {
    const void *input;    /**< the input tensor's memory */
    size_t input_bytes;   /**< bytes at `input`: at least the input's span */
    const void *indices;  /**< MaxUnpooling's indices (else ignored) */
    size_t indices_bytes; /**< bytes at `indices` */
    void *output;         /**< the output's memory; must not overlap an input */
    size_t output_bytes;  /**< bytes at `output`: at least the output's span */
} clops_host_buffers;

/** Runs the operator on host memory and waits. On an OpenCL context the data
 *  goes through device buffers; on the host context the host kernels run in
 *  place. On any error the caller's output memory is left untouched (for
 *  MaxUnpooling too: bad indices are found before the output is written). The
 *  output must not overlap an input.
 *  @param op the operator.
 *  @param buffers the host memory.
 *  @return ::CLOPS_SUCCESS, or:
 *  @retval CLOPS_ERROR_NULL_ARGUMENT `op` or `buffers` is NULL.
 *  @retval CLOPS_ERROR_MISSING_BUFFER a pointer the operator needs is NULL.
 *  @retval CLOPS_ERROR_BUFFER_TOO_SMALL a byte count is below its tensor's span.
 *  @retval CLOPS_ERROR_ALIASED_BUFFERS the output overlaps an input.
 *  @retval CLOPS_ERROR_INDEX_OUT_OF_RANGE MaxUnpooling: an index is negative or
 *          past the output; nothing was written.
 *  @retval CLOPS_ERROR_OUT_OF_HOST_MEMORY the host kernels' MaxUnpooling plan
 *          (large inputs) could not be allocated; nothing was written.
 *  @retval CLOPS_ERROR_DEVICE_TIMEOUT the kernels did not finish within the deadline.
 *  @retval CLOPS_ERROR_DEVICE_LOST the device reported a command failed (a
 *          kernel's own failure marks the context lost: every later call on it
 *          returns this, naming the operator and kernel; a failed event of the
 *          caller's wait list fails that execution only, named with its
 *          status, and the operator and context go on), or the context was
 *          lost earlier, or this process was forked after the context was created.
 *  @retval other OpenCL errors (clCreateBuffer, the enqueues, the read back).
 *  @threadsafety One thread at a time per operator.
 *  @blocking Until the output is written: the host kernels (threads of their
 *  own for tensors of 4 MiB and more), or, on a device, copying the data in,
 *  the kernels (within the deadline) and a blocking read of the output (not
 *  bounded by the deadline). */
CLOPS_API clops_status clops_operator_execute_host(clops_operator *op, const clops_host_buffers *buffers);

/** What an operator chose on its context, for diagnostics (the CLI's --verbose). */
typedef struct clops_operator_info {
    clops_backend backend;        /**< where it runs: the host for an operator on the host path */
    const char *kernel_name;      /**< the first kernel launched; "" on the host */
    size_t global_size[3];        /**< that launch's global work size (0 on the host) */
    size_t local_size[3];         /**< that launch's local work size (0 on the host) */
    unsigned work_dim;            /**< that launch's dimensions (0 on the host) */
    const char *build_options;    /**< the program's build options; "" on the host */
    const char *program_origin;   /**< "compiled", "disk cache", "in-process" or "" (host) */
    const char *local_size_origin; /**< "tuned" (from the tuning database, never with tuning
                                      off) or "heuristic" (clops's own choice) ("" on the host);
                                      "fixed by the tile kernel" for DepthToSpace/SpaceToDepth's
                                      tile loop */
    const char *fallback_reason;  /**< why an OpenCL context runs this operator on the
                                     host ("" when it does not) */
} clops_operator_info;

/** Fills `info` (pointers stay valid while op lives).
 *  @param op the operator.
 *  @param[out] info what it chose.
 *  @return ::CLOPS_SUCCESS, or CLOPS_ERROR_NULL_ARGUMENT if `op` or `info` is NULL.
 *  @threadsafety Any thread, while no other thread frees `op`. @blocking Nothing. */
CLOPS_API clops_status clops_operator_get_info(const clops_operator *op, clops_operator_info *info);
/** @} */

/* ---- host kernels --------------------------------------------------------------- */
/** @defgroup host Host kernels
 *  The plain C implementation used by the host backend, callable directly.
 *  @{ */
/** Runs the host kernels on host memory, without a context. The descriptor is
 *  validated first; the byte counts are checked against the spans. The output
 *  is untouched on any error.
 *  @param desc the operator's descriptor.
 *  @param buffers the host memory.
 *  @return ::CLOPS_SUCCESS, or:
 *  @retval CLOPS_ERROR_NULL_ARGUMENT `buffers` is NULL (or as clops_operator_validate()).
 *  @retval CLOPS_ERROR_MISSING_BUFFER a pointer the operator needs is NULL.
 *  @retval CLOPS_ERROR_BUFFER_TOO_SMALL a byte count is below its tensor's span.
 *  @retval CLOPS_ERROR_ALIASED_BUFFERS the output overlaps an input.
 *  @retval CLOPS_ERROR_INDEX_OUT_OF_RANGE MaxUnpooling: a bad index; nothing was written.
 *  @retval CLOPS_ERROR_OUT_OF_HOST_MEMORY MaxUnpooling: its plan (large inputs)
 *          could not be allocated; nothing was written.
 *  @retval other the validation's CLOPS_ERROR_* codes (clops_operator_validate()).
 *  @threadsafety Any thread. @blocking The host kernels (threads of their own,
 *  one per processor up to 16, for tensors of 4 MiB and more). */
CLOPS_API clops_status clops_host_run(const clops_operator_desc *desc, const clops_host_buffers *buffers);
/** @} */

#ifdef __cplusplus
}
#endif

/* The rest of the API, by subject; each of these includes clops.h itself. */
#include "clops_max_unpooling.h"
#include "clops_devices.h"
#include "clops_cache.h"
#endif /* CLOPS_H */
