/*
 * clops_cli.c - the `clops` command: run the operators on .npy files, list
 * devices, print tensors.
 *
 *   clops run depth-to-space IN.npy OUT.npy --block-size B [--order dcr|crd]
 *   clops run space-to-depth IN.npy OUT.npy --block-size B [--order dcr|crd]
 *   clops run max-unpooling IN.npy INDICES.npy OUT.npy --output-shape N,C,H,W
 *   clops devices
 *   clops print FILE.npy
 *
 * Exit status: 0 success (and --help), 1 operator or file error (one line on
 * stderr: "clops: error: ..."), 2 usage error. Each command has one option
 * table that drives both its parser and its --help. Outputs are written
 * atomically: a failed run leaves no output file behind.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <clops/clops.h>

#include "bench.h"
#include "npy.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

#define ERR_SIZE 320

/* ---- parsed arguments --------------------------------------------------------------- */

typedef enum device_choice { DEVICE_DEFAULT = 0, DEVICE_HOST, DEVICE_INDEX } device_choice;

typedef struct cli_args {
    const char *positional[3];
    unsigned npositional;
    uint32_t block_size;
    clops_depth_space_order order;
    device_choice device;
    unsigned device_index;
    clops_data_type type_override;
    int verbose;
    uint32_t output_shape[4];
    int quick;
} cli_args;

/* Parses an option's value into args; 0, or -1 with a message in err. */
typedef int (*option_parser)(cli_args *args, const char *value, char *err, size_t err_size);

typedef struct cli_option {
    const char *name;    /* "--block-size" */
    const char *metavar; /* "B", or NULL for a flag */
    int required;
    option_parser parse; /* NULL for --help */
    const char *help;
} cli_option;

struct cli_command;
typedef int (*command_runner)(const struct cli_command *cmd, const cli_args *args);

typedef struct cli_command {
    const char *name;       /* "run depth-to-space" */
    const char *positional; /* "IN.npy OUT.npy" */
    unsigned npositional;
    const char *summary;
    const cli_option *options; /* ends with a NULL name */
    const char *notes;         /* extra help text, or NULL */
    command_runner run;
} cli_command;

/* ---- small helpers ------------------------------------------------------------------------ */

static void set_err(char *err, size_t err_size, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void set_err(char *err, size_t err_size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
}

/* Prints s to stderr on one line (newlines become blanks). */
static void put_one_line(const char *s)
{
    for (; *s != '\0'; s++)
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, stderr);
}

/* "clops: error: WHAT: DETAIL" and EXIT_FAIL. */
static int fail_line(const char *what, const char *detail)
{
    fputs("clops: error: ", stderr);
    put_one_line(what);
    fputs(": ", stderr);
    put_one_line(detail);
    fputc('\n', stderr);
    return EXIT_FAIL;
}

static int fail_clops(const char *what, clops_status st)
{
    const char *detail = clops_last_error_message();
    if (detail == NULL || detail[0] == '\0')
        detail = clops_status_message(st);
    char line[ERR_SIZE + 64];
    snprintf(line, sizeof line, "%s: %s", clops_status_name(st), detail);
    return fail_line(what, line);
}

static int fail_npy(const char *path, npy_status st, const char *msg)
{
    char line[ERR_SIZE + 64];
    snprintf(line, sizeof line, "%s (%s)", msg[0] != '\0' ? msg : npy_status_message(st),
             npy_status_name(st));
    return fail_line(path, line);
}

/* A strict unsigned decimal: digits only, fully consumed, at most max. */
static int parse_uint(const char *s, uint64_t max, uint64_t *out)
{
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE || end == NULL || *end != '\0' || v > max)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

static int checked_mul(uint64_t a, uint64_t b, uint64_t *out)
{
    if (a != 0 && b > UINT64_MAX / a)
        return -1;
    *out = a * b;
    return 0;
}

/* ---- option parsers ------------------------------------------------------------------------ */

static int opt_block_size(cli_args *args, const char *value, char *err, size_t err_size)
{
    uint64_t v;
    if (parse_uint(value, UINT32_MAX, &v) != 0 || v == 0) {
        set_err(err, err_size, "--block-size needs an integer from 1 to %" PRIu32 ", not '%s'",
                UINT32_MAX, value);
        return -1;
    }
    args->block_size = (uint32_t)v;
    return 0;
}

static int opt_order(cli_args *args, const char *value, char *err, size_t err_size)
{
    if (strcmp(value, "dcr") == 0 || strcmp(value, "DCR") == 0)
        args->order = CLOPS_ORDER_DEPTH_COLUMN_ROW;
    else if (strcmp(value, "crd") == 0 || strcmp(value, "CRD") == 0)
        args->order = CLOPS_ORDER_COLUMN_ROW_DEPTH;
    else {
        set_err(err, err_size, "--order must be dcr or crd, not '%s'", value);
        return -1;
    }
    return 0;
}

static int opt_device(cli_args *args, const char *value, char *err, size_t err_size)
{
    uint64_t v;
    if (strcmp(value, "host") == 0) {
        args->device = DEVICE_HOST;
    } else if (parse_uint(value, UINT32_MAX, &v) == 0) {
        args->device = DEVICE_INDEX;
        args->device_index = (unsigned)v;
    } else {
        set_err(err, err_size,
                "--device needs 'host' or a device index from 'clops devices', not '%s'", value);
        return -1;
    }
    return 0;
}

static int opt_type(cli_args *args, const char *value, char *err, size_t err_size)
{
    if (strcmp(value, "bfloat16") != 0 && strcmp(value, "BFLOAT16") != 0) {
        set_err(err, err_size, "--type supports only bfloat16, not '%s'", value);
        return -1;
    }
    args->type_override = CLOPS_DATA_TYPE_BFLOAT16;
    return 0;
}

static int opt_verbose(cli_args *args, const char *value, char *err, size_t err_size)
{
    (void)value;
    (void)err;
    (void)err_size;
    args->verbose = 1;
    return 0;
}

static int opt_quick(cli_args *args, const char *value, char *err, size_t err_size)
{
    (void)value;
    (void)err;
    (void)err_size;
    args->quick = 1;
    return 0;
}

static int opt_output_shape(cli_args *args, const char *value, char *err, size_t err_size)
{
    const char *p = value;
    for (unsigned d = 0; d < 4; d++) {
        const char *comma = strchr(p, ',');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
        char field[24];
        uint64_t v;
        int bad = len == 0 || len >= sizeof field || (d < 3) != (comma != NULL);
        if (!bad) {
            memcpy(field, p, len);
            field[len] = '\0';
            bad = parse_uint(field, UINT32_MAX, &v) != 0;
        }
        if (bad) {
            set_err(err, err_size,
                    "--output-shape needs four integers N,C,H,W (each at most %" PRIu32
                    "), not '%s'",
                    UINT32_MAX, value);
            return -1;
        }
        args->output_shape[d] = (uint32_t)v;
        p = comma != NULL ? comma + 1 : p + len;
    }
    return 0;
}

/* ---- option tables -------------------------------------------------------------------------- */

#define OPT_DEVICE                                                                              \
    {"--device", "N|host", 0, opt_device,                                                      \
     "run on device N of 'clops devices', or on the host backend (default: the default device, " \
     "CLOPS_DEVICE if set)"}
#define OPT_TYPE                                                                                \
    {"--type", "bfloat16", 0, opt_type,                                                        \
     "read 2-byte data ('<u2', '<i2', '<f2') as BFLOAT16; the output is written as '<u2' "      \
     "holding the bfloat16 bits (NumPy has no bfloat16 dtype)"}
#define OPT_VERBOSE                                                                             \
    {"--verbose", NULL, 0, opt_verbose,                                                        \
     "print the device, backend, kernel, work sizes and build options to stderr"}
#define OPT_HELP {"--help", NULL, 0, NULL, "show this help and exit"}
#define OPT_END {NULL, NULL, 0, NULL, NULL}

static const cli_option depth_space_options[] = {
    {"--block-size", "B", 1, opt_block_size, "block size, at least 1 (required)"},
    {"--order", "dcr|crd", 0, opt_order,
     "dcr: depth-column-row (DirectML's default, ONNX DCR); crd: column-row-depth (ONNX CRD, "
     "PyTorch pixel_shuffle). Default dcr"},
    OPT_DEVICE, OPT_TYPE, OPT_VERBOSE, OPT_HELP, OPT_END};

static const cli_option unpool_options[] = {
    {"--output-shape", "N,C,H,W", 1, opt_output_shape,
     "sizes of the output; N and C must equal the input's (required)"},
    OPT_DEVICE, OPT_TYPE, OPT_VERBOSE, OPT_HELP, OPT_END};

static const cli_option print_options[] = {
    {"--type", "bfloat16", 0, opt_type,
     "read 2-byte data ('<u2', '<i2', '<f2') as BFLOAT16 and show it as float"},
    OPT_HELP, OPT_END};

static const cli_option help_only_options[] = {OPT_HELP, OPT_END};

static const cli_option tune_options[] = {
    {"--device", "N", 0, opt_device, "tune device N of 'clops devices' (default: the default device)"},
    {"--quick", NULL, 0, opt_quick, "tune only uint8 and float32 at block size 2 (about a minute)"},
    OPT_HELP, OPT_END};

/* ---- help ------------------------------------------------------------------------------------- */

#define HELP_WIDTH 79
#define HELP_INDENT 27

/* Prints text word-wrapped to HELP_WIDTH columns, continuation lines indented. */
static void print_wrapped(FILE *out, const char *text, size_t col)
{
    const char *p = text;
    while (*p != '\0') {
        size_t len = strcspn(p, " ");
        if (col > HELP_INDENT && col + 1 + len > HELP_WIDTH) {
            fprintf(out, "\n%*s", HELP_INDENT, "");
            col = HELP_INDENT;
        } else if (col > HELP_INDENT) {
            fputc(' ', out);
            col++;
        }
        fwrite(p, 1, len, out);
        col += len;
        p += len;
        while (*p == ' ')
            p++;
    }
    fputc('\n', out);
}

static void print_options_help(FILE *out, const cli_option *options)
{
    fputs("\noptions:\n", out);
    for (const cli_option *o = options; o->name != NULL; o++) {
        char left[64];
        if (o->parse == NULL)
            snprintf(left, sizeof left, "-h, %s", o->name);
        else if (o->metavar != NULL)
            snprintf(left, sizeof left, "%s %s", o->name, o->metavar);
        else
            snprintf(left, sizeof left, "%s", o->name);
        fprintf(out, "  %-*s", HELP_INDENT - 2, left);
        print_wrapped(out, o->help, HELP_INDENT);
    }
}

/* "clops run depth-to-space IN.npy OUT.npy --block-size B [options]" */
static void print_command_usage(FILE *out, const char *prefix, const cli_command *cmd)
{
    fprintf(out, "%sclops %s%s%s", prefix, cmd->name, cmd->positional[0] != '\0' ? " " : "",
            cmd->positional);
    for (const cli_option *o = cmd->options; o->name != NULL; o++)
        if (o->required)
            fprintf(out, " %s %s", o->name, o->metavar);
    fputs(" [options]\n", out);
}

static void print_command_help(const cli_command *cmd)
{
    print_command_usage(stdout, "usage: ", cmd);
    printf("\n%s\n", cmd->summary);
    print_options_help(stdout, cmd->options);
    if (cmd->notes != NULL)
        printf("\n%s\n", cmd->notes);
}

static int usage_error(const cli_command *cmd, const char *message)
{
    fprintf(stderr, "clops: %s\n", message);
    if (cmd != NULL)
        fprintf(stderr, "Try 'clops %s --help'.\n", cmd->name);
    else
        fputs("Try 'clops --help'.\n", stderr);
    return EXIT_USAGE;
}

/* ---- argument parsing ------------------------------------------------------------------------- */

static int is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

/* Looks "--name" or "--name=value" up in the table. */
static const cli_option *find_option(const cli_option *options, const char *arg, const char **value)
{
    const char *eq = strchr(arg, '=');
    size_t len = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
    *value = eq != NULL ? eq + 1 : NULL;
    for (const cli_option *o = options; o->name != NULL; o++)
        if (strlen(o->name) == len && strncmp(o->name, arg, len) == 0)
            return o;
    return NULL;
}

/* Handles one option at argv[*i] (advancing *i past its value). 0 or EXIT_USAGE. */
static int parse_one_option(const cli_command *cmd, int argc, char **argv, int *i, cli_args *args,
                            unsigned *seen)
{
    char err[ERR_SIZE];
    const char *value;
    const cli_option *o = find_option(cmd->options, argv[*i], &value);
    if (o == NULL || o->parse == NULL) {
        set_err(err, sizeof err, "unknown option '%s' for 'clops %s'", argv[*i], cmd->name);
        return usage_error(cmd, err);
    }
    unsigned bit = 1u << (unsigned)(o - cmd->options);
    if (*seen & bit) {
        set_err(err, sizeof err, "option %s given twice", o->name);
        return usage_error(cmd, err);
    }
    *seen |= bit;
    if (o->metavar == NULL && value != NULL) {
        set_err(err, sizeof err, "option %s takes no value", o->name);
        return usage_error(cmd, err);
    }
    if (o->metavar != NULL && value == NULL) {
        if (*i + 1 >= argc) {
            set_err(err, sizeof err, "option %s needs a value (%s)", o->name, o->metavar);
            return usage_error(cmd, err);
        }
        value = argv[++*i];
    }
    if (o->parse(args, value != NULL ? value : "", err, sizeof err) != 0)
        return usage_error(cmd, err);
    return 0;
}

/* Parses argv (after the command words) into args. 0 or EXIT_USAGE. */
static int parse_args(const cli_command *cmd, int argc, char **argv, cli_args *args)
{
    char err[ERR_SIZE];
    unsigned seen = 0;
    int options_done = 0;
    memset(args, 0, sizeof *args);
    args->order = CLOPS_ORDER_DEPTH_COLUMN_ROW;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (!options_done && strcmp(arg, "--") == 0) {
            options_done = 1;
        } else if (!options_done && arg[0] == '-' && arg[1] != '\0') {
            int rc = parse_one_option(cmd, argc, argv, &i, args, &seen);
            if (rc != 0)
                return rc;
        } else if (args->npositional < cmd->npositional) {
            args->positional[args->npositional++] = arg;
        } else {
            set_err(err, sizeof err, "unexpected argument '%s'", arg);
            return usage_error(cmd, err);
        }
    }
    if (args->npositional < cmd->npositional) {
        set_err(err, sizeof err, "missing arguments: 'clops %s' needs %s", cmd->name,
                cmd->positional);
        return usage_error(cmd, err);
    }
    for (const cli_option *o = cmd->options; o->name != NULL; o++) {
        if (o->required && !(seen & (1u << (unsigned)(o - cmd->options)))) {
            set_err(err, sizeof err, "missing required option %s %s", o->name, o->metavar);
            return usage_error(cmd, err);
        }
    }
    return 0;
}

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
    if (args->device == DEVICE_HOST)
        return clops_context_create_host(ctx);
    if (args->device == DEVICE_INDEX)
        return clops_context_create_device(args->device_index, ctx);
    return clops_context_create(ctx);
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
    for (unsigned d = 0; d < 4; d++) {
        shape[d] = out_desc->sizes[d];
        if (checked_mul(count, shape[d], &count) != 0)
            count = UINT64_MAX;
    }
    if (checked_mul(count, clops_data_type_size(out_desc->data_type), &bytes) != 0 ||
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

/* Output sizes of DepthToSpace / SpaceToDepth. When the divisibility rule fails the input
 * sizes stand in, so that validation reports that rule rather than some size. */
static int depth_space_output(int to_space, const uint32_t *in, uint32_t b, uint32_t *out)
{
    uint64_t bb = (uint64_t)b * b;
    uint64_t s[4];
    int divisible = to_space ? in[1] % bb == 0 : (in[2] % b == 0 && in[3] % b == 0);
    if (!divisible) {
        memcpy(out, in, 4 * sizeof *out);
        return 0;
    }
    s[0] = in[0];
    s[1] = to_space ? in[1] / bb : in[1] * bb;
    s[2] = to_space ? (uint64_t)in[2] * b : in[2] / b;
    s[3] = to_space ? (uint64_t)in[3] * b : in[3] / b;
    for (unsigned d = 0; d < 4; d++) {
        if (s[d] > UINT32_MAX)
            return -1;
        out[d] = (uint32_t)s[d];
    }
    return 0;
}

static int run_depth_space(const cli_command *cmd, const cli_args *args, int to_space)
{
    const char *what = to_space ? "depth-to-space" : "space-to-depth";
    npy_array input;
    memset(&input, 0, sizeof input);
    clops_tensor_desc in_desc, out_desc;
    (void)cmd;
    int rc = load_tensor(args->positional[0], args->type_override, &input, &in_desc);
    if (rc == EXIT_OK) {
        out_desc.data_type = in_desc.data_type;
        out_desc.strides = NULL;
        if (depth_space_output(to_space, in_desc.sizes, args->block_size, out_desc.sizes) != 0)
            rc = fail_line(what, "an output dimension exceeds 4294967295");
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
        /* both descriptors have the same layout; one of them is used */
        clops_depth_to_space_desc d2s = {&in_desc, &out_desc, args->block_size, args->order};
        clops_space_to_depth_desc s2d = {&in_desc, &out_desc, args->block_size, args->order};
        clops_operator_desc desc = {to_space ? CLOPS_OPERATOR_DEPTH_TO_SPACE
                                             : CLOPS_OPERATOR_SPACE_TO_DEPTH,
                                    to_space ? (const void *)&d2s : (const void *)&s2d};
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
            fputc('\n', stderr);
        }
        clops_max_unpooling_desc unpool = {&in_desc, &idx_desc, &out_desc};
        clops_operator_desc desc = {CLOPS_OPERATOR_MAX_UNPOOLING, &unpool};
        clops_host_buffers buffers = {input.data, input.nbytes, indices.data, indices.nbytes,
                                      NULL, 0};
        rc = execute_and_write(what, args, &desc, &buffers, &out_desc, args->positional[2]);
    }
    npy_free(&indices);
    npy_free(&input);
    return rc;
}

/* ---- devices ----------------------------------------------------------------------------------- */

static const char *device_type_name(cl_device_type type)
{
    if (type & CL_DEVICE_TYPE_GPU)
        return "GPU";
    if (type & CL_DEVICE_TYPE_CPU)
        return "CPU";
    if (type & CL_DEVICE_TYPE_ACCELERATOR)
        return "ACCELERATOR";
#ifdef CL_DEVICE_TYPE_CUSTOM
    if (type & CL_DEVICE_TYPE_CUSTOM)
        return "CUSTOM";
#endif
    return "OTHER";
}

static const char *yes_no(int v)
{
    return v ? "yes" : "no";
}

static void print_device(const clops_device_info *d)
{
    printf("  device %u: %s\n", d->index, d->device_name);
    printf("    type:             %s\n", device_type_name(d->type));
    printf("    OpenCL version:   %s\n", d->device_version);
    printf("    OpenCL C version: %s\n", d->opencl_c_version);
    printf("    fp16: %s  fp64: %s  int64: %s  compiler: %s\n", yes_no(d->has_fp16),
           yes_no(d->has_fp64), yes_no(d->has_int64), yes_no(d->compiler_available));
    printf("    max allocation:   %" PRIu64 " bytes (%" PRIu64 " MiB)\n", d->max_alloc_bytes,
           d->max_alloc_bytes >> 20);
    const char *disabled = getenv("CLOPS_DISABLE");
    if (disabled != NULL && disabled[0] != '\0')
        printf("    (CLOPS_DISABLE=%s: those capabilities are reported absent)\n", disabled);
    char plan[1024];
    clops_device_plan(d, plan, sizeof plan);
    printf("    plan:\n");
    for (const char *line = plan; *line != '\0';) {
        const size_t len = strcspn(line, "\n");
        printf("      - %.*s\n", (int)len, line);
        line += len;
        if (*line == '\n')
            line++;
    }
}

static int run_devices(const cli_command *cmd, const cli_args *args)
{
    size_t count = 0;
    (void)cmd;
    (void)args;
    clops_status st = clops_device_list(NULL, 0, &count);
    if (st != CLOPS_SUCCESS)
        return fail_clops("devices", st);
    if (count == 0) {
        puts("no OpenCL devices (the host backend is always available)");
        return EXIT_OK;
    }
    clops_device_info *infos = calloc(count, sizeof *infos);
    if (infos == NULL)
        return fail_line("devices", "out of memory");
    size_t again = 0;
    st = clops_device_list(infos, count, &again);
    if (st != CLOPS_SUCCESS) {
        free(infos);
        return fail_clops("devices", st);
    }
    if (again < count)
        count = again;
    unsigned platform = 0;
    for (size_t i = 0; i < count; i++) {
        if (i == 0 || infos[i].platform != infos[i - 1].platform) {
            if (i > 0)
                platform++;
            printf("platform %u: %s\n", platform, infos[i].platform_name);
        }
        print_device(&infos[i]);
    }
    puts("host backend: always available (--device host)");
    free(infos);
    return EXIT_OK;
}

/* ---- print ------------------------------------------------------------------------------------- */

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31;
    uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, bits;
    if (exp == 0 && mant == 0) {
        bits = sign;
    } else if (exp == 0) { /* subnormal: normalise */
        exp = 113;
        while (!(mant & 0x400u)) {
            mant <<= 1;
            exp--;
        }
        bits = sign | exp << 23 | (mant & 0x3ffu) << 13;
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | mant << 13;
    } else {
        bits = sign | (exp + 112) << 23 | mant << 13;
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static float bfloat16_to_float(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Precision a float is shown at: the shortest text that reads back as the same value
 * of its own type. */
typedef enum float_kind { FLOAT_HALF, FLOAT_BFLOAT16, FLOAT_SINGLE, FLOAT_DOUBLE } float_kind;

/* float to IEEE half, rounding to nearest even. */
static uint16_t float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000u, absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) /* inf, NaN */
        return (uint16_t)(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
    if (absx >= 0x477ff000u) /* 65520 and up round to inf */
        return (uint16_t)(sign | 0x7c00u);
    if (absx < 0x38800000u) { /* below 2^-14: a subnormal half, in units of 2^-24 */
        float a;
        memcpy(&a, &absx, sizeof a);
        float scaled = a * 16777216.0f;
        uint32_t m = (uint32_t)scaled;
        float frac = scaled - (float)m;
        if (frac > 0.5f || (frac == 0.5f && (m & 1u)))
            m++;
        return (uint16_t)(sign | m);
    }
    uint32_t h = ((absx >> 23) - 112u) << 10 | (absx & 0x7fffffu) >> 13;
    uint32_t rem = absx & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
        h++;
    return (uint16_t)(sign | h);
}

/* float to bfloat16, rounding to nearest even. */
static uint16_t float_to_bfloat16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

static int reads_back(double back, double v, float_kind kind)
{
    switch (kind) {
    case FLOAT_HALF: return float_to_half((float)back) == float_to_half((float)v);
    case FLOAT_BFLOAT16: return float_to_bfloat16((float)back) == float_to_bfloat16((float)v);
    case FLOAT_SINGLE: return (float)back == (float)v;
    default: return back == v;
    }
}

/* The shortest %g that reads back as the same value; plain notation from 1e-4 up to
 * 1e16 and "1." for integral values, as numpy. */
static void format_float(double v, float_kind kind, char *buf, size_t size)
{
    if (v != v) {
        snprintf(buf, size, "nan");
        return;
    }
    if (v > DBL_MAX || v < -DBL_MAX) {
        snprintf(buf, size, v < 0 ? "-inf" : "inf");
        return;
    }
    int prec = 1;
    for (; prec < 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (reads_back(strtod(buf, NULL), v, kind))
            break;
    }
    char sci[48];
    snprintf(sci, sizeof sci, "%.*e", prec - 1, v);
    const char *e = strchr(sci, 'e');
    int exp10 = e != NULL ? atoi(e + 1) : 0;
    if (exp10 >= -4 && exp10 < 16)
        snprintf(buf, size, "%.*g", prec > exp10 + 1 ? prec : exp10 + 1, v);
    else
        snprintf(buf, size, "%.*g", prec, v);
    if (strpbrk(buf, ".en") == NULL && strlen(buf) + 2 <= size)
        strcat(buf, ".");
}

static void format_complex(double re, double im, float_kind kind, char *buf, size_t size)
{
    char a[40], b[40];
    format_float(re, kind, a, sizeof a);
    format_float(im, kind, b, sizeof b);
    snprintf(buf, size, "%s%s%sj", a, b[0] == '-' ? "" : "+", b);
}

/* Formats element `index` (in elements from the start of the data). */
static void format_element(const npy_array *a, uint64_t index, char *buf, size_t size)
{
    const unsigned char *p = (const unsigned char *)a->data + index * a->itemsize;
    union {
        int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32;
        int64_t i64; uint64_t u64; float f32[2]; double f64[2];
    } v;
    memcpy(&v, p, a->itemsize);
    switch (a->data_type) {
    case CLOPS_DATA_TYPE_BOOL: snprintf(buf, size, "%s", v.u8 ? "True" : "False"); break;
    case CLOPS_DATA_TYPE_INT8: snprintf(buf, size, "%d", v.i8); break;
    case CLOPS_DATA_TYPE_UINT8: snprintf(buf, size, "%u", v.u8); break;
    case CLOPS_DATA_TYPE_INT16: snprintf(buf, size, "%d", v.i16); break;
    case CLOPS_DATA_TYPE_UINT16: snprintf(buf, size, "%u", v.u16); break;
    case CLOPS_DATA_TYPE_INT32: snprintf(buf, size, "%" PRId32, v.i32); break;
    case CLOPS_DATA_TYPE_UINT32: snprintf(buf, size, "%" PRIu32, v.u32); break;
    case CLOPS_DATA_TYPE_INT64: snprintf(buf, size, "%" PRId64, v.i64); break;
    case CLOPS_DATA_TYPE_UINT64: snprintf(buf, size, "%" PRIu64, v.u64); break;
    case CLOPS_DATA_TYPE_FLOAT16: format_float(half_to_float(v.u16), FLOAT_HALF, buf, size); break;
    case CLOPS_DATA_TYPE_BFLOAT16: format_float(bfloat16_to_float(v.u16), FLOAT_BFLOAT16, buf, size); break;
    case CLOPS_DATA_TYPE_FLOAT32: format_float(v.f32[0], FLOAT_SINGLE, buf, size); break;
    case CLOPS_DATA_TYPE_FLOAT64: format_float(v.f64[0], FLOAT_DOUBLE, buf, size); break;
    case CLOPS_DATA_TYPE_COMPLEX64: format_complex(v.f32[0], v.f32[1], FLOAT_SINGLE, buf, size); break;
    case CLOPS_DATA_TYPE_COMPLEX128: format_complex(v.f64[0], v.f64[1], FLOAT_DOUBLE, buf, size); break;
    default: snprintf(buf, size, "?"); break;
    }
}

/* Walks every element in logical (row-major) order; width < 0 measures, else prints. */
static void walk(const npy_array *a, unsigned depth, uint64_t offset, int *width, int measure)
{
    char buf[96];
    if (depth == a->ndim) {
        format_element(a, offset, buf, sizeof buf);
        int len = (int)strlen(buf);
        if (measure && len > *width)
            *width = len;
        else if (!measure)
            printf("%*s", *width, buf);
        return;
    }
    if (!measure)
        putchar('[');
    for (uint64_t i = 0; i < a->shape[depth]; i++) {
        if (i > 0 && !measure) {
            if (depth + 1 == a->ndim)
                putchar(' ');
            for (unsigned k = depth + 1; k < a->ndim; k++)
                putchar('\n');
            for (unsigned k = 0; depth + 1 < a->ndim && k <= depth; k++)
                putchar(' ');
        }
        walk(a, depth + 1, offset + i * a->strides[depth], width, measure);
    }
    if (!measure)
        putchar(']');
}

static int run_print(const cli_command *cmd, const cli_args *args)
{
    npy_array a;
    char msg[NPY_MESSAGE_SIZE];
    (void)cmd;
    npy_status st = npy_read(args->positional[0], args->type_override, &a, msg, sizeof msg);
    if (st != NPY_OK)
        return fail_npy(args->positional[0], st, msg);
    if (a.count == 0) {
        puts("[]");
    } else {
        int width = 0;
        walk(&a, 0, 0, &width, 1);
        walk(&a, 0, 0, &width, 0);
        putchar('\n');
    }
    npy_free(&a);
    if (fflush(stdout) != 0)
        return fail_line("print", "cannot write to standard output");
    return EXIT_OK;
}

/* ---- commands ---------------------------------------------------------------------------------- */

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
     "being flat over the whole output (batch and channel included). INDICES has\n"
     "IN's sizes and dtype '<u4', '<u8' or '<i8'.",
     unpool_options,
     "An index that is negative or past the output is an error\n"
     "(CLOPS_ERROR_INDEX_OUT_OF_RANGE) and no OUT is written.\n"
     "--type applies to IN only, never to INDICES.",
     run_max_unpooling},
};
#define RUN_COMMAND_COUNT (sizeof(run_commands) / sizeof(run_commands[0]))

static const cli_command devices_command = {
    "devices", "", 0,
    "Lists every OpenCL platform and device with the index that --device and\n"
    "CLOPS_DEVICE take, its type, OpenCL and OpenCL C versions, fp16/fp64/int64\n"
    "support, whether a compiler is available, and the largest allocation.",
    help_only_options, NULL, run_devices};

static const cli_command print_command = {
    "print", "FILE.npy", 1,
    "Prints a .npy tensor numpy-style: nested brackets, integers plainly, floats\n"
    "(float16 and bfloat16 too) in the shortest form that reads back exactly,\n"
    "complex as a+bj, bool as True/False.",
    print_options, NULL, run_print};

/* ---- cache and tune ---------------------------------------------------------------------- */

static int dispatch(const cli_command *cmd, int argc, char **argv);

static void print_entry(void *user, const char *file, uint64_t bytes, long long last_used, const char *key,
                        size_t key_len)
{
    (void)user;
    char when[32] = "?";
    const time_t t = (time_t)last_used;
    struct tm tm;
    if (gmtime_r(&t, &tm)) strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    if (!key) {
        printf("%s  %10" PRIu64 "  %s  (invalid entry: removed when next read)\n", file, bytes, when);
        return;
    }
    /* The key's "device:" and "options:" lines say what the binary is for. */
    const char *dev = NULL, *opt = NULL;
    size_t dev_len = 0, opt_len = 0;
    for (const char *p = key; p < key + key_len;) {
        const char *nl = memchr(p, '\n', (size_t)(key + key_len - p));
        const size_t len = nl ? (size_t)(nl - p) : (size_t)(key + key_len - p);
        if (len > 8 && strncmp(p, "device: ", 8) == 0) dev = p + 8, dev_len = len - 8;
        if (len > 9 && strncmp(p, "options: ", 9) == 0) opt = p + 9, opt_len = len - 9;
        if (strncmp(p, "source:", 7) == 0) break;
        p += len + 1;
    }
    printf("%s  %10" PRIu64 "  %s  %.*s  %.*s\n", file, bytes, when, (int)dev_len, dev ? dev : "", (int)opt_len,
           opt ? opt : "");
}

static int run_cache_path(const cli_command *cmd, const cli_args *args)
{
    (void)cmd;
    (void)args;
    char status[4300];
    puts(clops_cache_status(status, sizeof status));
    return EXIT_OK;
}

static int run_cache_list(const cli_command *cmd, const cli_args *args)
{
    (void)cmd;
    (void)args;
    size_t n = 0;
    const clops_status st = clops_cache_list_entries(print_entry, NULL, &n);
    if (st != CLOPS_SUCCESS) return fail_clops("cache list", st);
    printf("%zu entr%s\n", n, n == 1 ? "y" : "ies");
    return EXIT_OK;
}

static int run_cache_clear(const cli_command *cmd, const cli_args *args)
{
    (void)cmd;
    (void)args;
    size_t n = 0;
    const clops_status st = clops_cache_clear_all(&n);
    if (st != CLOPS_SUCCESS) return fail_clops("cache clear", st);
    printf("removed %zu entr%s\n", n, n == 1 ? "y" : "ies");
    return EXIT_OK;
}

static int run_cache_prune(const cli_command *cmd, const cli_args *args)
{
    (void)cmd;
    (void)args;
    size_t n = 0;
    const clops_status st = clops_cache_prune(&n);
    if (st != CLOPS_SUCCESS) return fail_clops("cache prune", st);
    printf("evicted %zu entr%s\n", n, n == 1 ? "y" : "ies");
    return EXIT_OK;
}

static int run_cache_export(const cli_command *cmd, const cli_args *args)
{
    (void)cmd;
    size_t n = 0;
    const clops_status st = clops_cache_export_pack(args->positional[0], &n);
    if (st != CLOPS_SUCCESS) return fail_clops("cache export", st);
    printf("exported %zu entr%s to %s\n", n, n == 1 ? "y" : "ies", args->positional[0]);
    return EXIT_OK;
}

static int run_cache_import(const cli_command *cmd, const cli_args *args)
{
    (void)cmd;
    size_t n = 0;
    const clops_status st = clops_cache_import_pack(args->positional[0], &n);
    if (st != CLOPS_SUCCESS) return fail_clops("cache import", st);
    printf("imported %zu entr%s from %s\n", n, n == 1 ? "y" : "ies", args->positional[0]);
    return EXIT_OK;
}

static const cli_command cache_commands[] = {
    {"cache path", "", 0, "Prints where the program cache is (read-write or read-only), or why it is off.",
     help_only_options, NULL, run_cache_path},
    {"cache list", "", 0, "Lists the cached program binaries, least recently used first.", help_only_options, NULL,
     run_cache_list},
    {"cache clear", "", 0, "Removes every cached program binary.", help_only_options, NULL, run_cache_clear},
    {"cache prune", "", 0,
     "Evicts least recently used entries until the cache is within CLOPS_CACHE_MAX_SIZE (default 256M).",
     help_only_options, NULL, run_cache_prune},
    {"cache export", "FILE", 1,
     "Writes every valid cached binary to one kernel pack FILE, to give a device that\n"
     "cannot compile at run time (an FPGA built offline) its prebuilt programs.",
     help_only_options, NULL, run_cache_export},
    {"cache import", "FILE", 1, "Checks and installs every entry of a kernel pack FILE into the cache.",
     help_only_options, NULL, run_cache_import},
};
#define CACHE_COMMAND_COUNT (sizeof(cache_commands) / sizeof(cache_commands[0]))

static void print_tune_progress(void *user, const clops_tune_result *r, unsigned done, unsigned total)
{
    (void)user;
    printf("[%2u/%u] %-14s %s %-10s block %u: chunk %4u local %zu,%zu,%zu  %7.2f GB/s (default %7.2f, x%.2f)%s\n",
           done, total, r->operator_type == CLOPS_OPERATOR_DEPTH_TO_SPACE ? "depth-to-space" : "space-to-depth",
           r->order == CLOPS_ORDER_DEPTH_COLUMN_ROW ? "dcr" : "crd", clops_data_type_name(r->data_type),
           r->block_size, r->chunk, r->local[0], r->local[1], r->local[2], r->gbps, r->default_gbps,
           r->default_gbps > 0 ? r->gbps / r->default_gbps : 0.0, r->kept ? "" : "  default kept");
    fflush(stdout);
}

static int run_tune(const cli_command *cmd, const cli_args *args)
{
    (void)cmd;
    if (args->device == DEVICE_HOST) return fail_line("tune", "the host backend has nothing to tune");
    unsigned index = args->device_index;
    if (args->device == DEVICE_DEFAULT) {
        int host = 0;
        const clops_status st = clops_default_device(&host, &index);
        if (st != CLOPS_SUCCESS) return fail_clops("tune", st);
        if (host) return fail_line("tune", "the default device is the host backend; nothing to tune");
    }
    char status[4300];
    printf("tuning device %u; results go to %s\n", index, clops_cache_status(status, sizeof status));
    const clops_status st = clops_tune(index, args->quick, print_tune_progress, NULL);
    if (st != CLOPS_SUCCESS) return fail_clops("tune", st);
    puts("tuning database written");
    return EXIT_OK;
}

static const cli_command tune_command = {
    "tune", "", 0,
    "Times candidate work-group sizes and per-work-item chunk lengths of DepthToSpace\n"
    "and SpaceToDepth on a device (median of 5 profiled runs each, every candidate's\n"
    "output checked) and stores the winners in the device's tuning database beside\n"
    "the program cache. CLOPS_TUNE=off makes operators ignore it.",
    tune_options, NULL, run_tune};

static int main_cache(int argc, char **argv)
{
    if (argc < 1 || is_help(argv[0])) {
        FILE *out = argc < 1 ? stderr : stdout;
        fputs("usage: clops cache SUBCOMMAND\n\nsubcommands:\n", out);
        for (size_t i = 0; i < CACHE_COMMAND_COUNT; i++) print_command_usage(out, "  ", &cache_commands[i]);
        return argc < 1 ? EXIT_USAGE : EXIT_OK;
    }
    for (size_t i = 0; i < CACHE_COMMAND_COUNT; i++)
        if (strcmp(argv[0], cache_commands[i].name + 6) == 0)
            return dispatch(&cache_commands[i], argc - 1, argv + 1);
    char err[ERR_SIZE];
    set_err(err, sizeof err, "unknown cache subcommand '%s' (path, list, clear, prune, export, import)", argv[0]);
    fprintf(stderr, "clops: %s\nTry 'clops cache --help'.\n", err);
    return EXIT_USAGE;
}

static void print_top_help(FILE *out)
{
    fprintf(out,
            "usage: clops COMMAND [ARGS] [options]\n"
            "\n"
            "clops %s: DirectML-style tensor operators on OpenCL devices or the host.\n"
            "\n"
            "commands:\n",
            clops_version_string());
    for (size_t i = 0; i < RUN_COMMAND_COUNT; i++)
        print_command_usage(out, "  ", &run_commands[i]);
    print_command_usage(out, "  ", &devices_command);
    print_command_usage(out, "  ", &print_command);
    for (size_t i = 0; i < CACHE_COMMAND_COUNT; i++)
        print_command_usage(out, "  ", &cache_commands[i]);
    print_command_usage(out, "  ", &tune_command);
    fputs("  clops bench [options]\n", out);
    fputs("  clops bench-startup [options]\n", out);
    fputs("\nEvery command takes -h/--help. Exit status: 0 success, 1 operator or file\n"
          "error, 2 usage error.\n",
          out);
}

static void print_run_help(FILE *out)
{
    fputs("usage: clops run OPERATOR ARGS [options]\n\noperators:\n", out);
    for (size_t i = 0; i < RUN_COMMAND_COUNT; i++)
        print_command_usage(out, "  ", &run_commands[i]);
    fputs("\nSee 'clops run OPERATOR --help' for each operator's options.\n", out);
}

/* Runs a command: help if asked for anywhere before "--", else parse and run. */
static int dispatch(const cli_command *cmd, int argc, char **argv)
{
    for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (is_help(argv[i])) {
            print_command_help(cmd);
            return EXIT_OK;
        }
    }
    cli_args args;
    int rc = parse_args(cmd, argc, argv, &args);
    if (rc != 0)
        return rc;
    return cmd->run(cmd, &args);
}

static int main_run(int argc, char **argv)
{
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

int main(int argc, char **argv)
{
    char err[ERR_SIZE];
    if (argc < 2) {
        print_top_help(stderr);
        return EXIT_USAGE;
    }
    const char *command = argv[1];
    if (is_help(command) || strcmp(command, "help") == 0) {
        print_top_help(stdout);
        return EXIT_OK;
    }
    if (strcmp(command, "--version") == 0) {
        printf("clops %s\n", clops_version_string());
        return EXIT_OK;
    }
    if (strcmp(command, "run") == 0)
        return main_run(argc - 2, argv + 2);
    if (strcmp(command, "devices") == 0)
        return dispatch(&devices_command, argc - 2, argv + 2);
    if (strcmp(command, "print") == 0)
        return dispatch(&print_command, argc - 2, argv + 2);
    if (strcmp(command, "cache") == 0)
        return main_cache(argc - 2, argv + 2);
    if (strcmp(command, "tune") == 0)
        return dispatch(&tune_command, argc - 2, argv + 2);
    if (strcmp(command, "bench") == 0)
        return clops_bench_main(argc - 1, argv + 1);
    if (strcmp(command, "bench-startup") == 0)
        return clops_bench_startup_main(argc - 1, argv + 1);
    set_err(err, sizeof err, "unknown command '%s'", command);
    return usage_error(NULL, err);
}
