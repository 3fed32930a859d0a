/*
 * clops.h - DirectML-style tensor operators on any OpenCL device, or on the host.
 *
 * Operators: DepthToSpace and SpaceToDepth (orders DCR and CRD) and
 * MaxUnpooling, exactly as DirectML defines them, for every fixed-width type of
 * DirectML feature level 5.0 plus ONNX's BOOL, BFLOAT16, COMPLEX64 and
 * COMPLEX128. Results are bit-exact: these operators only move bits.
 *
 * Use:
 *   clops_context *ctx;   clops_context_create(&ctx);            // default device
 *   clops_operator *op;   clops_operator_create(ctx, &desc, &op); // validates, builds
 *   clops_operator_execute(op, &bufs, 0, NULL, &event);           // cl_mem, async
 *   clops_operator_execute_host(op, &host_bufs);                  // host pointers, blocking
 *   clops_operator_free(op); clops_context_free(ctx);
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
 *   - Nothing in clops is global; clops_last_error_message() is per-thread.
 *   - clops_operator_execute() on an operator that fell back to the host runs
 *     the host kernel on a thread of clops's own (one per execution, detached,
 *     ended when the work is).
 *   - The library never prints and never exits.
 */
#ifndef CLOPS_H
#define CLOPS_H

#include <stddef.h>
#include <stdint.h>

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include "clops_errors.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CLOPS_VERSION_MAJOR 0
#define CLOPS_VERSION_MINOR 1
#define CLOPS_VERSION_PATCH 0
#define CLOPS_VERSION_NUMBER (CLOPS_VERSION_MAJOR * 10000 + CLOPS_VERSION_MINOR * 100 + CLOPS_VERSION_PATCH)
#define CLOPS_VERSION_STRING "0.1.0"

/*! clops_version_number() : CLOPS_VERSION_NUMBER of the library actually linked. */
CLOPS_API unsigned clops_version_number(void);
/*! clops_version_string() : CLOPS_VERSION_STRING of the library actually linked. */
CLOPS_API const char *clops_version_string(void);

/* ---- data types ---------------------------------------------------------------
 * Values 0..11 are DML_TENSOR_DATA_TYPE's; the ONNX-only types start at 100. */
typedef enum clops_data_type {
    CLOPS_DATA_TYPE_UNKNOWN = 0,
    CLOPS_DATA_TYPE_FLOAT32 = 1,
    CLOPS_DATA_TYPE_FLOAT16 = 2,
    CLOPS_DATA_TYPE_UINT32 = 3,
    CLOPS_DATA_TYPE_UINT16 = 4,
    CLOPS_DATA_TYPE_UINT8 = 5,
    CLOPS_DATA_TYPE_INT32 = 6,
    CLOPS_DATA_TYPE_INT16 = 7,
    CLOPS_DATA_TYPE_INT8 = 8,
    CLOPS_DATA_TYPE_FLOAT64 = 9,
    CLOPS_DATA_TYPE_UINT64 = 10,
    CLOPS_DATA_TYPE_INT64 = 11,
    CLOPS_DATA_TYPE_BOOL = 100,
    CLOPS_DATA_TYPE_BFLOAT16 = 101,
    CLOPS_DATA_TYPE_COMPLEX64 = 102,
    CLOPS_DATA_TYPE_COMPLEX128 = 103
} clops_data_type;

/*! clops_data_type_size() : bytes per element (1, 2, 4, 8 or 16), 0 if unknown. */
CLOPS_API size_t clops_data_type_size(clops_data_type type);
/*! clops_data_type_name() : "FLOAT32", "BFLOAT16", ...; "UNKNOWN" if unknown. */
CLOPS_API const char *clops_data_type_name(clops_data_type type);

/* ---- tensors ------------------------------------------------------------------
 * As DML_BUFFER_TENSOR_DESC with four dimensions: sizes are { N, C, H, W };
 * strides are in elements, NULL means packed NCHW. A zero stride broadcasts an
 * input along that dimension (not allowed on outputs, whose elements must not
 * overlap). A zero size is valid and gives an empty tensor. */
typedef struct clops_tensor_desc {
    clops_data_type data_type;
    uint32_t sizes[4];
    const uint64_t *strides; /* 4 strides in elements, or NULL for packed */
} clops_tensor_desc;

/* ---- operators ---------------------------------------------------------------- */
typedef enum clops_depth_space_order {
    CLOPS_ORDER_DEPTH_COLUMN_ROW = 0, /* DCR: DML's default, ONNX mode "DCR" */
    CLOPS_ORDER_COLUMN_ROW_DEPTH = 1  /* CRD: ONNX mode "CRD", PyTorch pixel_(un)shuffle */
} clops_depth_space_order;

/* DML_DEPTH_TO_SPACE1_OPERATOR_DESC: output { N, C/b², H*b, W*b }. */
typedef struct clops_depth_to_space_desc {
    const clops_tensor_desc *input;
    const clops_tensor_desc *output;
    uint32_t block_size;
    clops_depth_space_order order;
} clops_depth_to_space_desc;

/* DML_SPACE_TO_DEPTH1_OPERATOR_DESC: output { N, C*b², H/b, W/b }. */
typedef struct clops_space_to_depth_desc {
    const clops_tensor_desc *input;
    const clops_tensor_desc *output;
    uint32_t block_size;
    clops_depth_space_order order;
} clops_space_to_depth_desc;

/* What a MaxUnpooling index counts from. */
typedef enum clops_indices_layout {
    CLOPS_INDICES_FLAT = 0,     /* DirectML, ONNX: over the whole packed output,
                                   batch and channel included */
    CLOPS_INDICES_PER_PLANE = 1 /* PyTorch max_pool2d(return_indices=True): within the
                                   output plane (n, c), 0 <= index < H_out * W_out */
} clops_indices_layout;

/* DML_MAX_UNPOOLING_OPERATOR_DESC. The output is zero-filled, then each input
 * value X.flat[k] is written at Y.flat[I.flat[k]], indices being flat over the
 * whole packed output (batch and channel included), or, with
 * CLOPS_INDICES_PER_PLANE, at Y[n, c].flat[I[n, c, h, w]]. Indices: UINT32,
 * UINT64 or INT64 (as ONNX and PyTorch emit). Duplicate indices: the input
 * element that comes last in row-major order wins, on every device and every run.
 * indices_layout is 0 (flat) when the descriptor is brace-initialised without it. */
typedef struct clops_max_unpooling_desc {
    const clops_tensor_desc *input;
    const clops_tensor_desc *indices;
    const clops_tensor_desc *output;
    clops_indices_layout indices_layout;
} clops_max_unpooling_desc;

typedef enum clops_operator_type {
    CLOPS_OPERATOR_DEPTH_TO_SPACE = 1,
    CLOPS_OPERATOR_SPACE_TO_DEPTH = 2,
    CLOPS_OPERATOR_MAX_UNPOOLING = 3
} clops_operator_type;

/* As DML_OPERATOR_DESC: a type and a pointer to that type's descriptor. */
typedef struct clops_operator_desc {
    clops_operator_type type;
    const void *desc;
} clops_operator_desc;

/*! clops_operator_validate() : checks a descriptor without any device: types,
 *  sizes against the operator's rules, strides, and overflow of every size
 *  product. @return CLOPS_SUCCESS or the specific CLOPS_ERROR_* code, with the
 *  offending value in clops_last_error_message(). */
CLOPS_API clops_status clops_operator_validate(const clops_operator_desc *desc);

/*! clops_operator_output_sizes() : the output sizes the operator's rule gives
 *  for `desc`'s input and attributes (DepthToSpace: {N, C/b^2, H*b, W*b};
 *  SpaceToDepth: {N, C*b^2, H/b, W/b}), checked as clops_operator_validate
 *  checks them; the output tensor descriptor is not read and may be NULL.
 *  @return CLOPS_SUCCESS with `sizes` filled; the validation's CLOPS_ERROR_*
 *  code; CLOPS_ERROR_SIZE_OVERFLOW when an output size would pass 2^32-1;
 *  CLOPS_ERROR_OUTPUT_NOT_DERIVED for MaxUnpooling, whose output height and
 *  width are the caller's. `sizes` is written only on success. */
CLOPS_API clops_status clops_operator_output_sizes(const clops_operator_desc *desc, uint32_t sizes[4]);

/* ---- devices ------------------------------------------------------------------ */
typedef struct clops_device_info {
    unsigned index;               /* as used by CLOPS_DEVICE and the CLI's --device */
    cl_platform_id platform;
    cl_device_id device;
    cl_device_type type;
    /* The next four are read at their real length and cut to their field (a
     * longer string keeps its beginning); clops_device_string() gives them whole. */
    char platform_name[128];
    char device_name[128];
    char device_version[128];     /* "OpenCL 3.0 PoCL ..." */
    char opencl_c_version[64];
    int has_fp16;                 /* cl_khr_fp16 */
    int has_fp64;                 /* cl_khr_fp64 */
    int has_int64;                /* 64-bit integers: FULL_PROFILE, or cl_khr_int64 on EMBEDDED */
    int compiler_available;
    uint64_t max_alloc_bytes;
} clops_device_info;

/*! clops_device_list() : every device of every platform, in platform order.
 *  Writes up to `capacity` entries to `infos` (may be NULL when capacity is 0)
 *  and the total count to `*count`. No platform at all gives *count = 0 and
 *  CLOPS_SUCCESS. */
CLOPS_API clops_status clops_device_list(clops_device_info *infos, size_t capacity, size_t *count);

/* Identity strings of a device, for clops_device_string(). */
typedef enum clops_device_string_kind {
    CLOPS_DEVICE_STRING_PLATFORM_NAME = 1,    /* CL_PLATFORM_NAME */
    CLOPS_DEVICE_STRING_PLATFORM_VERSION = 2, /* CL_PLATFORM_VERSION */
    CLOPS_DEVICE_STRING_DEVICE_NAME = 3,      /* CL_DEVICE_NAME */
    CLOPS_DEVICE_STRING_VENDOR = 4,           /* CL_DEVICE_VENDOR */
    CLOPS_DEVICE_STRING_DEVICE_VERSION = 5,   /* CL_DEVICE_VERSION */
    CLOPS_DEVICE_STRING_DRIVER_VERSION = 6,   /* CL_DRIVER_VERSION */
    CLOPS_DEVICE_STRING_OPENCL_C_VERSION = 7  /* CL_DEVICE_OPENCL_C_VERSION */
} clops_device_string_kind;

/*! clops_device_string() : one identity string of a device of clops_device_list(),
 *  read at its real length (however long the driver makes it). Writes it to
 *  `buf` (always NUL-terminated when size > 0; cut to fit) and its whole length,
 *  without the NUL, to `*length` (may be NULL): a caller whose buffer was too
 *  small calls again with *length + 1 bytes. An unknown `what` gives
 *  CLOPS_ERROR_INVALID_DEVICE_SELECTION. */
CLOPS_API clops_status clops_device_string(const clops_device_info *info, clops_device_string_kind what, char *buf,
                                           size_t size, size_t *length);

/*! clops_device_plan() : which path each operator and type takes on this device,
 *  as lines of text ("DepthToSpace, SpaceToDepth: ..."), written to `buf` (always
 *  NUL-terminated). @return the full length, as snprintf. */
CLOPS_API size_t clops_device_plan(const clops_device_info *info, char *buf, size_t size);

/* ---- contexts ----------------------------------------------------------------- */
typedef struct clops_context clops_context;

/* ---- context options --------------------------------------------------------------
 * Every setting of a context, through the API. The environment variables named
 * beside each field are defaults only: clops_context_options_from_env() reads
 * them (all of them, in one place, strictly), and a context made without options
 * uses them. Fields set after that call win.
 *
 *   clops_context_options o;
 *   clops_context_options_init(&o, sizeof o);      // built-in defaults
 *   st = clops_context_options_from_env(&o);        // optional: honour CLOPS_*
 *   o.fallback = CLOPS_FALLBACK_NEVER;
 *   o.timeout_seconds = 5;
 *   st = clops_context_create_with_options(&o, &ctx);
 *
 * The struct grows at its end only: `size` (set by clops_context_options_init
 * to the caller's sizeof) tells the library which fields the caller knows, and
 * fields past it keep their built-in defaults. Strings are copied when the
 * context is made. Environment values: keywords are case-insensitive ("off",
 * "OFF"); anything else (spaces, unknown words, numbers with junk) is an error
 * naming the variable and why, never ignored. An empty variable counts as unset. */
typedef enum clops_cache_policy {
    CLOPS_CACHE_POLICY_READ_WRITE = 0, /* CLOPS_CACHE=rw (the default) */
    CLOPS_CACHE_POLICY_READ_ONLY = 1,  /* CLOPS_CACHE=ro: load, never store */
    CLOPS_CACHE_POLICY_OFF = 2         /* CLOPS_CACHE=off */
} clops_cache_policy;

typedef enum clops_fallback_policy {
    CLOPS_FALLBACK_ALLOW = 0, /* CLOPS_FALLBACK=allow (default): an operator the OpenCL device
                                 cannot run (no compiler and no binary, failed build, tensors
                                 past 2^32 elements without 64-bit integers) runs on the host */
    CLOPS_FALLBACK_NEVER = 1  /* CLOPS_FALLBACK=never: clops_operator_create fails with
                                 CLOPS_ERROR_FALLBACK_REFUSED instead */
} clops_fallback_policy;

/* Capabilities a context treats as absent (CLOPS_DISABLE=fp64,int64,fp16,compiler). */
#define CLOPS_CAPABILITY_FP64 1u
#define CLOPS_CAPABILITY_INT64 2u
#define CLOPS_CAPABILITY_FP16 4u
#define CLOPS_CAPABILITY_COMPILER 8u

/* clops_context_options.device: the default rule (clops_context_create), the host
 * backend, or an index of clops_device_list(). */
#define CLOPS_DEVICE_DEFAULT (-1)
#define CLOPS_DEVICE_HOST (-2)

typedef struct clops_context_options {
    size_t size;                     /* sizeof(clops_context_options) as the caller compiled it */
    int device;                      /* CLOPS_DEVICE: "host" or an index; default CLOPS_DEVICE_DEFAULT */
    clops_cache_policy cache;        /* CLOPS_CACHE: rw, ro or off */
    const char *cache_dir;           /* CLOPS_CACHE_DIR; NULL: $XDG_CACHE_HOME/clops, else ~/.cache/clops */
    uint64_t cache_max_bytes;        /* CLOPS_CACHE_MAX_SIZE: bytes, or digits with K, M or G
                                        (powers of 1024); default 256 MiB; 0 keeps nothing */
    int tuning;                      /* CLOPS_TUNE: on (1, default) or off (0): use the tuning database */
    const char *tuning_db;           /* the tuning database file; NULL: per device beside the cache */
    unsigned disable;                /* CLOPS_DISABLE: CLOPS_CAPABILITY_* reported absent */
    clops_fallback_policy fallback;  /* CLOPS_FALLBACK: allow or never */
    unsigned host_threads;           /* threads of the host kernels for tensors of 4 MiB and
                                        more (at most 16); 0 (default): one per processor */
    double timeout_seconds;          /* CLOPS_TIMEOUT: seconds, or 0 / "none" (default): no deadline.
                                        See "Deadline" below. */
} clops_context_options;

/*! clops_context_options_init() : the built-in defaults (no environment) into the
 *  first `size` bytes of `opts`, and opts->size = size. Pass sizeof *opts. */
CLOPS_API clops_status clops_context_options_init(clops_context_options *opts, size_t size);

/*! clops_context_options_from_env() : overwrites the fields whose environment
 *  variable is set (CLOPS_DEVICE, CLOPS_CACHE, CLOPS_CACHE_DIR,
 *  CLOPS_CACHE_MAX_SIZE, CLOPS_TUNE, CLOPS_DISABLE, CLOPS_FALLBACK, CLOPS_TIMEOUT).
 *  A bad value is CLOPS_ERROR_INVALID_SETTING with a message naming the variable
 *  and why; `opts` is then unchanged. cache_dir points into the environment. */
CLOPS_API clops_status clops_context_options_from_env(clops_context_options *opts);

/* Deadline. With timeout_seconds > 0, every wait clops itself does for the
 * device ends by then: clops_operator_execute_host() waiting for its kernels,
 * clops_operator_last_status(), and the wait of an operator running on the host
 * over cl_mem buffers for its wait list (from clops_operator_execute; then the
 * host work is given up, nothing written, and clops_operator_last_status() says
 * so). A wait that ends there returns CLOPS_ERROR_DEVICE_TIMEOUT
 * (the message names the device); the commands stay queued, and the caller's
 * host memory is never written after that return. A command the device reports
 * failed (a negative execution status, as a lost remote device gives) is
 * CLOPS_ERROR_DEVICE_LOST, with or without a deadline. What a library cannot
 * bound: a call blocked inside the driver (a blocking read of a finished
 * kernel's output, clFinish, releasing objects) - a process that must end on
 * time enforces the deadline whole, as the CLI's --timeout does. */

/*! clops_context_create_with_options() : a context as `opts` says (NULL: the
 *  built-in defaults and the environment, as clops_context_create). Values out of
 *  range are CLOPS_ERROR_INVALID_SETTING. */
CLOPS_API clops_status clops_context_create_with_options(const clops_context_options *opts, clops_context **out);

/*! clops_context_create_from_cl_with_options() : clops_context_create_from_cl with
 *  options (opts->device is ignored: the device is the caller's). */
CLOPS_API clops_status clops_context_create_from_cl_with_options(cl_context context, cl_device_id device,
                                                                 cl_command_queue queue,
                                                                 const clops_context_options *opts,
                                                                 clops_context **out);

typedef enum clops_backend {
    CLOPS_BACKEND_OPENCL = 1,
    CLOPS_BACKEND_HOST = 2
} clops_backend;

/*! clops_context_create() : a context on the default device, with the settings
 *  of the environment (clops_context_options_from_env; a bad value is an error):
 *  the variable CLOPS_DEVICE if set ("host", or an index from clops_device_list()),
 *  else the first GPU, else the first device of any type, else the host.
 *  A CLOPS_DEVICE naming a device that does not exist is an error
 *  (CLOPS_ERROR_INVALID_DEVICE_SELECTION), never a silent substitute. */
CLOPS_API clops_status clops_context_create(clops_context **out);

/*! clops_default_device() : the device clops_context_create() would use, without
 *  creating anything: `*is_host` = 1 for the host backend, else 0 with `*index`
 *  its position in clops_device_list(). Fails as clops_context_create() does
 *  (CLOPS_ERROR_INVALID_DEVICE_SELECTION for a CLOPS_DEVICE that names no device). */
CLOPS_API clops_status clops_default_device(int *is_host, unsigned *index);

/*! clops_context_create_device() : a context (with its own cl_context and
 *  in-order queue) on device `index` of clops_device_list(). */
CLOPS_API clops_status clops_context_create_device(unsigned index, clops_context **out);

/*! clops_context_create_host() : a context that runs the host kernels. */
CLOPS_API clops_status clops_context_create_host(clops_context **out);

/*! clops_context_create_from_cl() : wraps the caller's context, device and
 *  queue (clops retains them and releases them on free). Work is enqueued on
 *  `queue`, which may be in-order or out-of-order: clops orders its own
 *  commands with events. */
CLOPS_API clops_status clops_context_create_from_cl(cl_context context, cl_device_id device,
                                          cl_command_queue queue, clops_context **out);

/*! clops_context_free() : releases everything the context holds. NULL is fine. */
CLOPS_API void clops_context_free(clops_context *ctx);

/*! clops_context_backend() : CLOPS_BACKEND_OPENCL or CLOPS_BACKEND_HOST. */
CLOPS_API clops_backend clops_context_backend(const clops_context *ctx);

/*! clops_context_device_name() : the device's name, or "host". */
CLOPS_API const char *clops_context_device_name(const clops_context *ctx);

/*! clops_context_cache_status() : one line saying where the on-disk program
 *  cache is and whether it is read-write or read-only, or why it is off. */
CLOPS_API const char *clops_context_cache_status(const clops_context *ctx);

/*! clops_context_queue() : the queue clops enqueues on (NULL on the host). */
CLOPS_API cl_command_queue clops_context_queue(const clops_context *ctx);
/*! clops_context_cl_context() : the cl_context (NULL on the host). */
CLOPS_API cl_context clops_context_cl_context(const clops_context *ctx);

/* ---- operator objects --------------------------------------------------------- */
typedef struct clops_operator clops_operator;

/*! clops_operator_create() : validates `desc` (as clops_operator_validate),
 *  copies it, and prepares it on `ctx`: builds (or reuses) the program
 *  specialised for it and creates its kernels. Each program is compiled once
 *  per context. @return CLOPS_SUCCESS and *out, or an error and *out = NULL. */
CLOPS_API clops_status clops_operator_create(clops_context *ctx, const clops_operator_desc *desc,
                                   clops_operator **out);

/*! clops_operator_free() : NULL is fine. */
CLOPS_API void clops_operator_free(clops_operator *op);

/* Buffers for an execution. `indices` only for MaxUnpooling. Each buffer must
 * hold its tensor's whole span (checked against CL_MEM_SIZE). */
typedef struct clops_buffers {
    cl_mem input;
    cl_mem indices;
    cl_mem output;
} clops_buffers;

/*! clops_operator_execute() : enqueues the operator on the context's queue,
 *  after the events in `wait_list`, and returns without waiting (the wait list
 *  may hold user events completed later); `*event` (if not NULL) receives an
 *  event that completes when the output is written (release it with
 *  clReleaseEvent). The returned status is about enqueuing; MaxUnpooling's bad
 *  indices are found on the device and reported by clops_operator_last_status().
 *  Executions of one MaxUnpooling operator run one after another, even on an
 *  out-of-order queue (they share the operator's status words and scratch); one
 *  that failed (a wait-list event that failed) does not hold back the next.
 *  An operator that fell back to the host does not wait either: a clops worker
 *  thread runs the host kernel once the wait list completed; the event still
 *  completes after the output is written, and always with CL_COMPLETE - the host
 *  work's status (a failed wait list, the deadline, a failed map: the output
 *  untouched) is clops_operator_last_status(). The operator and the context may
 *  be freed before that work ran.
 *  Needs an OpenCL context (else CLOPS_ERROR_WRONG_BACKEND). */
CLOPS_API clops_status clops_operator_execute(clops_operator *op, const clops_buffers *buffers,
                                    cl_uint num_events_in_wait_list, const cl_event *wait_list,
                                    cl_event *event);

/*! clops_operator_last_status() : the status of the operator's last
 *  clops_operator_execute(), once its commands have completed (it waits for
 *  them: call it after the returned event completed to wait for nothing); for
 *  an operator that fell back to the host, the status of its host work.
 *  MaxUnpooling: CLOPS_ERROR_INDEX_OUT_OF_RANGE if an index was negative or past
 *  the output (such elements are never written anywhere; every other element
 *  was written as usual), or an OpenCL error if the status could not be read.
 *  CLOPS_SUCCESS before any execution, after a successful one, and for
 *  DepthToSpace and SpaceToDepth (which have nothing to report later). */
CLOPS_API clops_status clops_operator_last_status(clops_operator *op);

/* Host memory for clops_operator_execute_host(); sizes in bytes. */
typedef struct clops_host_buffers {
    const void *input;
    size_t input_bytes;
    const void *indices;
    size_t indices_bytes;
    void *output;
    size_t output_bytes;
} clops_host_buffers;

/*! clops_operator_execute_host() : runs the operator on host memory and waits.
 *  On an OpenCL context the data goes through device buffers; on the host
 *  context the host kernels run in place. On any error the caller's output
 *  memory is left untouched (for MaxUnpooling too: bad indices are found before
 *  the output is written). The output must not overlap an input. */
CLOPS_API clops_status clops_operator_execute_host(clops_operator *op, const clops_host_buffers *buffers);

/* What an operator chose on its context, for diagnostics (the CLI's --verbose). */
typedef struct clops_operator_info {
    clops_backend backend;
    const char *kernel_name;      /* "" on the host */
    size_t global_size[3];
    size_t local_size[3];
    unsigned work_dim;
    const char *build_options;    /* "" on the host */
    const char *program_origin;   /* "compiled", "disk cache", "in-process" or "" (host) */
    const char *local_size_origin; /* "tuned" or "heuristic" ("" on the host) */
    const char *fallback_reason;  /* why an OpenCL context runs this operator on the
                                     host ("" when it does not) */
} clops_operator_info;

/*! clops_operator_get_info() : fills `info` (pointers stay valid while op lives). */
CLOPS_API clops_status clops_operator_get_info(const clops_operator *op, clops_operator_info *info);

/* ---- on-disk program cache ----------------------------------------------------------
 * Built programs are kept per device in $CLOPS_CACHE_DIR, else $XDG_CACHE_HOME/clops,
 * else ~/.cache/clops. CLOPS_CACHE=off disables it, CLOPS_CACHE=ro only reads it,
 * CLOPS_CACHE_MAX_SIZE (bytes, or with K, M or G) bounds it (default 256M; least
 * recently used entries are evicted). These calls read the same variables; each has
 * a `_with_options` form that takes the settings of a clops_context_options instead
 * (cache_dir, cache, cache_max_bytes; NULL: the defaults and the environment, as the
 * plain call), so a library can maintain the cache of the contexts it made. A bad
 * options value is CLOPS_ERROR_INVALID_SETTING, as for a context. */

/*! clops_cache_status() : the cache's one-line status, as clops_context_cache_status(). */
CLOPS_API const char *clops_cache_status(char *buf, size_t size);
CLOPS_API const char *clops_cache_status_with_options(const clops_context_options *opts, char *buf, size_t size);

/* One entry: its file, size, last use (seconds since the epoch), and the first
 * lines of its key (device and build options), or NULL for an unreadable entry. */
typedef void (*clops_cache_entry_fn)(void *user, const char *file, uint64_t bytes, long long last_used,
                                     const char *key, size_t key_len);
/*! clops_cache_list_entries() : visits every entry, least recently used first. */
CLOPS_API clops_status clops_cache_list_entries(clops_cache_entry_fn fn, void *user, size_t *count);
CLOPS_API clops_status clops_cache_list_entries_with_options(const clops_context_options *opts,
                                                             clops_cache_entry_fn fn, void *user, size_t *count);
/*! clops_cache_prune() : evicts least recently used entries past the size bound. */
CLOPS_API clops_status clops_cache_prune(size_t *removed);
CLOPS_API clops_status clops_cache_prune_with_options(const clops_context_options *opts, size_t *removed);
/*! clops_cache_clear_all() : removes every entry, and the tuner's lock files that no
 *  running tuner holds (the tuning databases stay). */
CLOPS_API clops_status clops_cache_clear_all(size_t *removed);
CLOPS_API clops_status clops_cache_clear_all_with_options(const clops_context_options *opts, size_t *removed);
/*! clops_cache_export_pack() : writes every valid entry to one pack file, for a
 *  device that cannot compile at run time (an FPGA whose toolchain builds offline). */
CLOPS_API clops_status clops_cache_export_pack(const char *path, size_t *count);
CLOPS_API clops_status clops_cache_export_pack_with_options(const clops_context_options *opts, const char *path,
                                                            size_t *count);
/*! clops_cache_import_pack() : checks and installs every entry of a pack file;
 *  `*count` (may be NULL) is how many were installed. As
 *  clops_cache_import_pack_report(). */
CLOPS_API clops_status clops_cache_import_pack(const char *path, size_t *count);

/* What an import did with each entry of a pack. */
typedef struct clops_pack_report {
    size_t entries;      /* in the pack */
    size_t imported;     /* installed */
    size_t duplicates;   /* already in the cache, or earlier in the pack */
    size_t other_device; /* for a device (or clops version) this machine does not have */
    size_t rejected;     /* the device refused the binary, or its driver crashed or hung loading it */
    size_t over_limit;   /* skipped: the cache would exceed CLOPS_CACHE_MAX_SIZE */
    char reason[256];    /* why the first rejected entry was rejected ("" if none was) */
} clops_pack_report;
/*! clops_cache_import_pack_report() : a transaction. The pack is read entry by
 *  entry (never whole) and every entry's framing and checksum are checked before
 *  anything is installed: a malformed pack installs nothing (CLOPS_ERROR_BAD_PACK);
 *  a missing or unreadable file is CLOPS_ERROR_CACHE_IO with the system's reason.
 *  Each remaining entry is then loaded on its device in a child process (a binary
 *  that crashes or hangs the driver harms only the child and is rejected), and
 *  the entries that loaded are installed atomically, within CLOPS_CACHE_MAX_SIZE.
 *  If installing fails (a full disk), the entries this import installed are
 *  removed again and CLOPS_ERROR_CACHE_IO says why. `report` may be NULL. */
CLOPS_API clops_status clops_cache_import_pack_report(const char *path, clops_pack_report *report);
CLOPS_API clops_status clops_cache_import_pack_report_with_options(const clops_context_options *opts,
                                                                   const char *path, clops_pack_report *report);
/* ---- ahead-of-time kernels ------------------------------------------------------------------
 * For devices that load only binaries compiled offline (FPGA flows): list the
 * programs an operator needs on a device, write out their sources, compile them
 * with the vendor's tools, and add the binaries to a pack (README, "Ahead-of-time
 * kernels"). A program is a kernel source file (clops_program_source_text) built with
 * build options. */

/* One program: its kernel source file ("depth_space.cl") and build options. */
typedef void (*clops_program_fn)(void *user, const char *source_name, const char *build_options);
/*! clops_operator_programs() : calls `fn` for each program an operator of `desc`
 *  would load (from the disk cache) or compile on ctx's OpenCL device, in the
 *  order it tries them, building nothing. DepthToSpace and SpaceToDepth name two:
 *  the specialised program (-DBLOCK=b), then its block-argument variant
 *  (-DBLOCK_ARG=1, one binary for every block size), which is used only where
 *  the first is neither in the cache nor compilable. An operator that would run
 *  on the host whatever the binaries (see clops_operator_info) names none. */
CLOPS_API clops_status clops_operator_programs(clops_context *ctx, const clops_operator_desc *desc,
                                               clops_program_fn fn, void *user);
/*! clops_program_source_text() : the whole source of programs built from `source_name`
 *  (the exact text clops passes to clCreateProgramWithSource), into `buf` as
 *  clops_device_string() does (NUL-terminated, cut to fit; whole length in
 *  `*length`). An unknown name gives CLOPS_ERROR_KERNEL_SOURCE_UNAVAILABLE. */
CLOPS_API clops_status clops_program_source_text(const char *source_name, char *buf, size_t size, size_t *length);
/*! clops_pack_add_binary() : adds a device binary of the program (`source_name`,
 *  `build_options`) for device `device_index` of clops_device_list() to the pack
 *  file `pack_path` (created if missing; an entry for the same program and device
 *  is replaced; written atomically). The binary is what clGetProgramInfo
 *  (CL_PROGRAM_BINARIES) gives, or a vendor's offline compiler writes for the
 *  same source and options; it is checked when loaded, not here. `*count` (may be
 *  NULL): the pack's entries afterwards. */
CLOPS_API clops_status clops_pack_add_binary(const char *pack_path, unsigned device_index, const char *source_name,
                                             const char *build_options, const void *binary, size_t binary_size,
                                             size_t *count);

/* ---- tuning ------------------------------------------------------------------------------
 * clops_tune() times candidate work-group sizes and per-work-item chunk lengths
 * for DepthToSpace and SpaceToDepth on one device (profiling events, median of 5
 * runs each, every candidate's output checked against the host kernels) and
 * stores the winners in a per-device database beside the program cache. Later
 * operators on that exact device use them (CLOPS_TUNE=off ignores them; the
 * heuristic applies to anything not tuned). MaxUnpooling is not tuned. */
typedef struct clops_tune_result {
    clops_operator_type operator_type;
    clops_depth_space_order order;
    clops_data_type data_type;
    uint32_t block_size;
    unsigned chunk;               /* winner: inner-axis positions per work-item */
    size_t local[3];              /* winner: local work size */
    double gbps;                  /* winner's throughput (bytes read + written) */
    double default_gbps;          /* the untuned choice's, measured in the same run */
    int kept;                     /* 1: stored; 0: the winner did not beat the default when
                                     measured again, so the variant keeps the heuristic */
} clops_tune_result;
typedef void (*clops_tune_progress_fn)(void *user, const clops_tune_result *result, unsigned done, unsigned total);

/*! clops_tune() : tunes device `device_index` of clops_device_list(); `quick`
 *  tunes a small subset (uint8 and float32, block 2). Calls `progress` (may be
 *  NULL) after each variant. Needs a writable cache directory. */
CLOPS_API clops_status clops_tune(unsigned device_index, int quick, clops_tune_progress_fn progress, void *user);
/*! clops_tune_with_options() : clops_tune on a context made with `opts` (its cache
 *  directory, policy and size bound, tuning_db, disabled capabilities; NULL: as
 *  clops_tune). The results go to opts->tuning_db when it is set. */
CLOPS_API clops_status clops_tune_with_options(const clops_context_options *opts, unsigned device_index, int quick,
                                               clops_tune_progress_fn progress, void *user);

/* ---- host kernels ---------------------------------------------------------------
 * The plain C implementation used by the host backend, callable directly. The
 * descriptor is validated first; the byte counts are checked against the spans. */
CLOPS_API clops_status clops_host_run(const clops_operator_desc *desc, const clops_host_buffers *buffers);

#ifdef __cplusplus
}
#endif
#endif /* CLOPS_H */
