/* cli_run.c - clops run OPERATOR: reads the .npy inputs, runs the operator on
 * the chosen device (or the host) and writes the output atomically. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "cli.h"
#include "core/checked.h"

/* ---- option tables ---- */

static int opt_indices(cli_args *args, const char *value, char *err, size_t err_size)
{
    if (strcmp(value, "flat") == 0) args->indices_layout = CLOPS_INDICES_FLAT;
    else if (strcmp(value, "per-plane") == 0) args->indices_layout = CLOPS_INDICES_PER_PLANE;
    else {
        set_err(err, err_size, "--indices must be flat or per-plane, not '%s'", value);
        return -1;
    }
    return 0;
}

static const cli_option depth_space_options[] = {
    {"--block-size", "B", 1, opt_block_size, "block size, at least 1 (required)", 0},
    {"--order", "dcr|crd", 0, opt_order,
     "dcr: depth-column-row (DirectML's default, ONNX DCR); crd: column-row-depth (ONNX CRD, "
     "PyTorch pixel_shuffle). Default dcr", 0},
    OPT_DEVICE, OPT_TYPE, OPT_VERBOSE, OPT_FALLBACK, OPT_TIMEOUT, OPT_HELP, OPT_END};

static const cli_option unpool_options[] = {
    {"--output-shape", "N,C,H,W", 1, opt_output_shape,
     "sizes of the output; N and C must equal the input's (required)", 0},
    {"--indices", "flat|per-plane", 0, opt_indices,
     "flat: each index counts over the whole output, batch and channel included (DirectML, ONNX; "
     "default); per-plane: within its own (n, c) plane, 0 <= index < H*W of the output (PyTorch "
     "max_pool2d's return_indices)", 0},
    OPT_DEVICE, OPT_TYPE, OPT_VERBOSE, OPT_FALLBACK, OPT_TIMEOUT, OPT_HELP, OPT_END};


/* ---- running operators --------------------------------------------------------------------------- */

static const char *order_name(clops_depth_space_order order)
{
    return order == CLOPS_ORDER_COLUMN_ROW_DEPTH ? "crd" : "dcr";
}

/* Reads a .npy that must be 4-D with dimensions that fit 32 bits, as a tensor desc. */
static int load_tensor(const char *path, clops_data_type override, npy_array *array,
                       clops_tensor_desc *desc)
{
    char msg[NPY_MESSAGE_SIZE];
    npy_status st = npy_read(path, override, array, msg, sizeof msg);
    if (st != NPY_OK)
        return fail_npy(path, st, msg);
    if (array->ndim != 4) {
        snprintf(msg, sizeof msg, "the operators need a 4-D tensor (N, C, H, W), this one has %u "
                                  "dimensions",
                 array->ndim);
        return fail_line(path, msg);
    }
    desc->data_type = array->data_type;
    for (unsigned d = 0; d < 4; d++) {
        if (array->shape[d] > UINT32_MAX) {
            snprintf(msg, sizeof msg, "dimension %u (%" PRIu64 ") exceeds %" PRIu32, d,
                     array->shape[d], UINT32_MAX);
            return fail_line(path, msg);
        }
        desc->sizes[d] = (uint32_t)array->shape[d];
    }
    /* Fortran order goes to the operator as strides: no transposing copy */
    desc->strides = array->fortran_order ? array->strides : NULL;
    return EXIT_OK;
}

static void print_sizes(FILE *out, const uint32_t *s)
{
    fprintf(out, "{%" PRIu32 ", %" PRIu32 ", %" PRIu32 ", %" PRIu32 "}", s[0], s[1], s[2], s[3]);
}

static const char *or_none(const char *s)
{
    return s != NULL && s[0] != '\0' ? s : "(none)";
}

/* Without --verbose: an operator sent to the host because its device has no compiler and no binary
 * of the programs it needs is said once on stderr, with how to add one (a board without a compiler,
 * whose pack lacks them; docs/cache-and-tuning.md, "The portable program"). */
static void say_missing_program(const clops_context *ctx, const clops_operator *op)
{
    clops_operator_info info;
    if (clops_context_backend(ctx) != CLOPS_BACKEND_OPENCL || clops_operator_get_info(op, &info) != CLOPS_SUCCESS ||
        info.backend == CLOPS_BACKEND_OPENCL || !strstr(info.fallback_reason, "no cached binary"))
        return;
    fprintf(stderr,
            "clops: the operator runs on the host, not on device \"%s\": %s\n"
            "clops: to run it there, build the portable program offline ('clops kernels list --device N --portable') "
            "and add it with 'clops kernels pack-add' and 'clops cache import'\n",
            clops_context_device_name(ctx), info.fallback_reason);
}

/* --verbose: what the operator chose on its context (clops_operator_get_info). */
static void print_verbose(const clops_context *ctx, const clops_operator *op)
{
    clops_operator_info info;
    clops_status st = clops_operator_get_info(op, &info);
    int opencl_ctx = clops_context_backend(ctx) == CLOPS_BACKEND_OPENCL;
    fprintf(stderr, "clops: device: %s\n", clops_context_device_name(ctx));
    if (st != CLOPS_SUCCESS) {
        fprintf(stderr, "clops: backend: %s (operator info unavailable: %s)\n",
                opencl_ctx ? "opencl" : "host", clops_status_name(st));
        return;
    }
    if (info.backend != CLOPS_BACKEND_OPENCL) {
        if (opencl_ctx)
            fprintf(stderr, "clops: backend: host (fallback on the OpenCL context: %s)\n",
                    or_none(info.fallback_reason));
        else
            fputs("clops: backend: host\n", stderr);
        fputs("clops: kernel: (host kernels: no OpenCL kernel, work sizes or build options)\n",
              stderr);
        return;
    }
    fputs("clops: backend: opencl\n", stderr);
    fprintf(stderr, "clops: kernel: %s (program: %s)\n", or_none(info.kernel_name),
            or_none(info.program_origin));
    fprintf(stderr, "clops: work dim: %u\n", info.work_dim);
    fprintf(stderr, "clops: global work size: %zu, %zu, %zu\n", info.global_size[0],
            info.global_size[1], info.global_size[2]);
    int origin = info.local_size_origin != NULL && info.local_size_origin[0] != '\0';
    fprintf(stderr, "clops: local work size: %zu, %zu, %zu%s%s%s\n", info.local_size[0],
            info.local_size[1], info.local_size[2], origin ? " (" : "",
            origin ? info.local_size_origin : "", origin ? ")" : "");
    fprintf(stderr, "clops: build options: %s\n", or_none(info.build_options));
    fprintf(stderr, "clops: program cache: %s\n", or_none(clops_context_cache_status(ctx)));
}

static clops_status create_context(const cli_args *args, clops_context **ctx)
{
    if (args->device == DEVICE_INDEX && args->device_index > INT32_MAX) /* no such device */
        return clops_context_create_device(args->device_index, ctx);
    const int device = args->device == DEVICE_HOST    ? CLOPS_DEVICE_HOST
                       : args->device == DEVICE_INDEX ? (int)args->device_index
                                                      : CLOPS_DEVICE_DEFAULT;
    clops_context_options o;
    clops_status st = run_settings_options(&args->settings, device, &o);
    /* .npy files are host memory: where no device is named (--device, CLOPS_DEVICE),
     * the library's default device for host data (clops_devices.h: the host backend
     * rather than a CPU device), as bench, Python and clops.onnx take it. */
    if (st == CLOPS_SUCCESS && o.device == CLOPS_DEVICE_DEFAULT) {
        int host = 0;
        unsigned index = 0;
        st = clops_default_device_for_host_data(&host, &index, NULL);
        if (st == CLOPS_SUCCESS) o.device = host ? CLOPS_DEVICE_HOST : (int)index;
    }
    /* --verbose: the compiler's warnings too (lib/cl/program.c builds with -w unless CLOPS_BUILD_LOG=1). */
    if (args->verbose) setenv("CLOPS_BUILD_LOG", "1", 0);
    if (st == CLOPS_SUCCESS) run_watchdog_start(&args->settings);
    if (st == CLOPS_SUCCESS) st = clops_context_create_with_options(&o, ctx);
    if (st == CLOPS_SUCCESS) run_watchdog_device(clops_context_device_name(*ctx));
    return st;
}

/* Validates, runs `desc` on the chosen device into a new buffer, and writes it to out_path. */
static int execute_and_write(const char *what, const cli_args *args, const clops_operator_desc *desc,
                             clops_host_buffers *buffers, const clops_tensor_desc *out_desc,
                             const char *out_path)
{
    clops_context *ctx = NULL;
    clops_operator *op = NULL;
    int rc = EXIT_OK;
    uint64_t count = 1, bytes = 0;
    uint64_t shape[4];
    char msg[NPY_MESSAGE_SIZE];
    npy_status nst;

    clops_status st = clops_operator_validate(desc);
    if (st == CLOPS_SUCCESS)
        st = create_context(args, &ctx);
    if (st == CLOPS_SUCCESS)
        st = clops_operator_create(ctx, desc, &op);
    if (st != CLOPS_SUCCESS) {
        rc = fail_clops(what, st);
        goto cleanup;
    }
    if (args->verbose)
        print_verbose(ctx, op);
    else
        say_missing_program(ctx, op);
    for (unsigned d = 0; d < 4; d++) {
        shape[d] = out_desc->sizes[d];
        if (!clops_mul_u64(count, shape[d], &count))
            count = UINT64_MAX;
    }
    if (!clops_mul_u64(count, clops_data_type_size(out_desc->data_type), &bytes) ||
        bytes > SIZE_MAX) {
        rc = fail_line(what, "the output's byte count overflows");
        goto cleanup;
    }
    buffers->output_bytes = (size_t)bytes;
    buffers->output = malloc(bytes > 0 ? (size_t)bytes : 1);
    if (buffers->output == NULL) {
        rc = fail_line(what, "out of memory for the output");
        goto cleanup;
    }
    st = clops_operator_execute_host(op, buffers);
    run_watchdog_stop(); /* the device work is done: what follows writes the file */
    if (st == CLOPS_ERROR_INDEX_OUT_OF_RANGE) {
        /* The host kernels check every index before writing and name the first bad
         * one and its input position (a device reports only that one was bad): the
         * same rule, run again for its message. Nothing is written in either case. */
        const char *detail = NULL; /* the library's message */
        if (clops_context_backend(ctx) != CLOPS_BACKEND_HOST &&
            clops_host_run(desc, buffers) != CLOPS_ERROR_INDEX_OUT_OF_RANGE)
            detail = "an index is negative or not below the output's element count";
        const char *const tail[] = {"; nothing was written (", out_path, " was not created, or left as it was)"};
        rc = fail_clops_detail(what, CLOPS_ERROR_INDEX_OUT_OF_RANGE, detail, tail, 3);
        goto cleanup;
    }
    if (st != CLOPS_SUCCESS) {
        rc = fail_clops(what, st);
        goto cleanup;
    }
    nst = npy_write_atomic(out_path, out_desc->data_type, 4, shape, buffers->output, (size_t)bytes,
                           msg, sizeof msg);
    if (nst != NPY_OK)
        rc = fail_npy(out_path, nst, msg);

cleanup:
    free(buffers->output);
    buffers->output = NULL;
    clops_operator_free(op);
    clops_context_free(ctx);
    return rc;
}

static int run_depth_space(const cli_command *cmd, const cli_args *args, int to_space)
{
    const char *what = to_space ? "depth-to-space" : "space-to-depth";
    npy_array input;
    memset(&input, 0, sizeof input);
    clops_tensor_desc in_desc, out_desc;
    (void)cmd;
    int rc = load_tensor(args->positional[0], args->type_override, &input, &in_desc);
    /* both descriptors have the same layout; one of them is used */
    clops_depth_to_space_desc d2s = {&in_desc, &out_desc, args->block_size, args->order};
    clops_space_to_depth_desc s2d = {&in_desc, &out_desc, args->block_size, args->order};
    clops_operator_desc desc = {to_space ? CLOPS_OPERATOR_DEPTH_TO_SPACE : CLOPS_OPERATOR_SPACE_TO_DEPTH,
                                to_space ? (const void *)&d2s : (const void *)&s2d};
    if (rc == EXIT_OK) {
        out_desc.data_type = in_desc.data_type;
        out_desc.strides = NULL;
        const clops_status st = clops_operator_output_sizes(&desc, out_desc.sizes);
        if (st != CLOPS_SUCCESS)
            rc = fail_clops(what, st);
    }
    if (rc == EXIT_OK) {
        if (args->verbose) {
            fprintf(stderr, "clops: %s %s ", what, clops_data_type_name(in_desc.data_type));
            print_sizes(stderr, in_desc.sizes);
            fputs(" -> ", stderr);
            print_sizes(stderr, out_desc.sizes);
            fprintf(stderr, ", block size %" PRIu32 ", order %s%s\n", args->block_size,
                    order_name(args->order), input.fortran_order ? ", input in Fortran order" : "");
        }
        clops_host_buffers buffers = {input.data, input.nbytes, NULL, 0, NULL, 0};
        rc = execute_and_write(what, args, &desc, &buffers, &out_desc, args->positional[1]);
    }
    npy_free(&input);
    return rc;
}

static int run_depth_to_space(const cli_command *cmd, const cli_args *args)
{
    return run_depth_space(cmd, args, 1);
}

static int run_space_to_depth(const cli_command *cmd, const cli_args *args)
{
    return run_depth_space(cmd, args, 0);
}

/* After a run with flat indices: warns (stderr; the exit status stays 0) when every index falls in
 * the first plane of an output of several planes, which is what per-plane indices (PyTorch's
 * max_pool2d) read as flat look like: every value lands in plane (0, 0). The Python package's rule
 * (python/clops/__init__.py, _warn_if_per_plane). One pass over the indices, which the run has
 * already checked: none is negative. */
static void warn_if_per_plane(const npy_array *indices, const uint32_t out_sizes[4])
{
    const uint64_t planes = (uint64_t)out_sizes[0] * out_sizes[1], plane = (uint64_t)out_sizes[2] * out_sizes[3];
    if (planes < 2 || plane == 0 || indices->count == 0) return;
    const unsigned char *p = indices->data;
    for (uint64_t k = 0; k < indices->count; k++, p += indices->itemsize) {
        uint64_t v;
        if (indices->itemsize == 4) {
            uint32_t v32;
            memcpy(&v32, p, 4);
            v = v32;
        } else
            memcpy(&v, p, 8); /* '<u8', or '<i8' that the run found non-negative */
        if (v >= plane) return;
    }
    fprintf(stderr,
            "clops: warning: max-unpooling: indices read as flat (--indices flat, the default), but every index is below %" PRIu64
            ", the size of one output plane, in an output of %" PRIu64 " planes: every value landed in plane "
            "(0, 0). Indices that count within each (n, c) plane, as PyTorch's max_pool2d(..., "
            "return_indices=True) gives them, need --indices per-plane\n",
            plane, planes);
}

static int run_max_unpooling(const cli_command *cmd, const cli_args *args)
{
    const char *what = "max-unpooling";
    npy_array input, indices;
    memset(&input, 0, sizeof input);
    memset(&indices, 0, sizeof indices);
    clops_tensor_desc in_desc, idx_desc, out_desc;
    (void)cmd;
    int rc = load_tensor(args->positional[0], args->type_override, &input, &in_desc);
    if (rc == EXIT_OK) /* indices are never reinterpreted by --type */
        rc = load_tensor(args->positional[1], CLOPS_DATA_TYPE_UNKNOWN, &indices, &idx_desc);
    if (rc == EXIT_OK) {
        out_desc.data_type = in_desc.data_type;
        memcpy(out_desc.sizes, args->output_shape, sizeof out_desc.sizes);
        out_desc.strides = NULL;
        if (args->verbose) {
            fprintf(stderr, "clops: %s %s ", what, clops_data_type_name(in_desc.data_type));
            print_sizes(stderr, in_desc.sizes);
            fprintf(stderr, " with %s indices -> ", clops_data_type_name(idx_desc.data_type));
            print_sizes(stderr, out_desc.sizes);
            fputs(args->indices_layout == CLOPS_INDICES_PER_PLANE ? ", per-plane indices\n" : "\n", stderr);
        }
        clops_max_unpooling_desc unpool = {&in_desc, &idx_desc, &out_desc, args->indices_layout};
        clops_operator_desc desc = {CLOPS_OPERATOR_MAX_UNPOOLING, &unpool};
        clops_host_buffers buffers = {input.data, input.nbytes, indices.data, indices.nbytes,
                                      NULL, 0};
        rc = execute_and_write(what, args, &desc, &buffers, &out_desc, args->positional[2]);
        if (rc == EXIT_OK && args->indices_layout == CLOPS_INDICES_FLAT) /* a failed run says what is wrong itself */
            warn_if_per_plane(&indices, out_desc.sizes);
    }
    npy_free(&indices);
    npy_free(&input);
    return rc;
}

/* ---- the run commands ---- */

static const cli_command run_commands[] = {
    {"run depth-to-space", "IN.npy OUT.npy", 2,
     "DepthToSpace (DirectML DEPTH_TO_SPACE1, ONNX DepthToSpace): moves blocks of\n"
     "channels into space: IN {N, C, H, W} gives OUT {N, C/B^2, H*B, W*B}.",
     depth_space_options,
     "IN may be in C or Fortran order; OUT is written in C order.\n"
     "A failed run leaves no OUT.",
     run_depth_to_space},
    {"run space-to-depth", "IN.npy OUT.npy", 2,
     "SpaceToDepth (DirectML SPACE_TO_DEPTH1, ONNX SpaceToDepth): moves blocks of\n"
     "space into channels: IN {N, C, H, W} gives OUT {N, C*B^2, H/B, W/B}.",
     depth_space_options,
     "IN may be in C or Fortran order; OUT is written in C order.\n"
     "A failed run leaves no OUT.",
     run_space_to_depth},
    {"run max-unpooling", "IN.npy INDICES.npy OUT.npy", 3,
     "MaxUnpooling (DirectML MAX_UNPOOLING, ONNX MaxUnpool): OUT starts as zeros,\n"
     "then each IN element k is written at OUT.flat[INDICES.flat[k]], the indices\n"
     "being flat over the whole output (batch and channel included), or with\n"
     "--indices per-plane at OUT[n, c].flat[INDICES[n, c, h, w]]. INDICES has\n"
     "IN's sizes and dtype '<u4', '<u8' or '<i8'.",
     unpool_options,
     "An index that is negative or past the output is an error\n"
     "(CLOPS_ERROR_INDEX_OUT_OF_RANGE) and no OUT is written.\n"
     "--type applies to IN only, never to INDICES.",
     run_max_unpooling},
};
#define RUN_COMMAND_COUNT (sizeof(run_commands) / sizeof(run_commands[0]))

static void print_run_help(FILE *out)
{
    fputs("usage: clops run OPERATOR ARGS [options]\n\noperators:\n", out);
    for (size_t i = 0; i < RUN_COMMAND_COUNT; i++)
        print_command_usage(out, "  ", &run_commands[i]);
    fputs("\nSee 'clops run OPERATOR --help' for each operator's options.\n", out);
}

void cli_run_usage(FILE *out)
{
    for (size_t i = 0; i < RUN_COMMAND_COUNT; i++)
        print_command_usage(out, "  ", &run_commands[i]);
}

int cli_run_main(int argc, char **argv)
{
    argc--, argv++; /* after "run" */
    char err[ERR_SIZE];
    if (argc < 1) {
        print_run_help(stderr);
        return EXIT_USAGE;
    }
    if (is_help(argv[0])) {
        print_run_help(stdout);
        return EXIT_OK;
    }
    for (size_t i = 0; i < RUN_COMMAND_COUNT; i++)
        if (strcmp(argv[0], run_commands[i].name + 4) == 0)
            return dispatch(&run_commands[i], argc - 1, argv + 1);
    set_err(err, sizeof err,
            "unknown operator '%s' (depth-to-space, space-to-depth or max-unpooling)", argv[0]);
    fprintf(stderr, "clops: %s\nTry 'clops run --help'.\n", err);
    return EXIT_USAGE;
}

