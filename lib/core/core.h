/* core.h - the bottom layer of lib/ (docs/architecture.md), which every other
 * layer may include: status reporting (status.c), data types (types.c), checked
 * arithmetic (checked.h) and the validated tensor and operator records the host
 * kernels and the operators share. Not installed. */
#ifndef CLOPS_CORE_H
#define CLOPS_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "cl_api.h"
#include "clops/clops.h"
#include "core/checked.h"

/* ---- status reporting (status.c) ------------------------------------------------ */

/* Records a formatted detail message for this thread and returns `status`. */
clops_status clops_fail(clops_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* A cl_int error from `what` as a status, with the call named in the message
 * (a code neither OpenCL nor clops defines with its number: clops_status_label). */
clops_status clops_fail_cl(cl_int err, const char *what);
/* `status` for a message, in `buf`: its name and number ("CL_OUT_OF_RESOURCES
 * (-5)"), or for a code neither OpenCL nor clops defines, the number and what it
 * is ("-9999 (which OpenCL does not define: the driver's own code; NVIDIA's -9999
 * is an illegal memory access by a kernel, which loses the device)"). */
const char *clops_status_label(int status, char *buf, size_t size);

/* ---- context options (core/options.c) ---------------------------------------------- */

#define CLOPS_HOST_MAX_THREADS 16u

/* The built-in defaults (clops.h, clops_context_options_init). */
void clops_options_defaults(clops_context_options *o);
/* The environment over `o` (the one place CLOPS_* variables are read); `o` is
 * unchanged on a bad value. */
clops_status clops_options_env(clops_context_options *o);
/* How long import waits for one entry to load in its child: with `from_env`,
 * CLOPS_IMPORT_LOAD_TIMEOUT, read as strictly as the variables above (whole
 * seconds, 1 to 3600); unset, empty or without `from_env` (the _with_options
 * forms read no environment): 120. */
clops_status clops_options_import_timeout(bool from_env, int *seconds);
/* CLOPS_BUILD_LOG=1: builds show the compiler's log (lib/cl/program.c). */
bool clops_options_build_log(void);
/* A caller's options (NULL: the defaults and the environment) as a whole current
 * struct, checked: fields past in->size keep their defaults. */
clops_status clops_options_resolve(const clops_context_options *in, clops_context_options *out);

/* ---- data types (types.c) ------------------------------------------------------------ */

/* Whether `type` is one of the element types, or one of the index types. */
bool clops_data_type_valid(clops_data_type type);
bool clops_index_type_valid(clops_data_type type);

/* ---- validated tensors (made by ops/validate.c) ----------------------------------- */

/* A validated tensor: sizes, strides made explicit, and the derived counts. */
typedef struct clops_tensor {
    clops_data_type type;
    size_t elem_size;
    uint64_t sizes[4];
    uint64_t strides[4];   /* in elements; packed strides filled in when absent */
    bool packed;           /* strides equal the packed NCHW strides */
    uint64_t count;        /* product of sizes */
    uint64_t span;         /* elements from the first to one past the last addressed */
    uint64_t span_bytes;
} clops_tensor;

/* A validated operator: the descriptor copied into plain values. */
typedef struct clops_op_params {
    clops_operator_type type;
    clops_tensor input;
    clops_tensor indices; /* MaxUnpooling only */
    clops_tensor output;
    uint32_t block_size;  /* DepthToSpace / SpaceToDepth */
    clops_depth_space_order order;
    clops_indices_layout indices_layout; /* MaxUnpooling: what an index counts from */
    unsigned host_threads; /* the host kernels' threads (0: one per processor); from the context */
} clops_op_params;

#endif /* CLOPS_CORE_H */
