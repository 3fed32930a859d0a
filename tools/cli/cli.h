/*
 * cli.h - what the files of the `clops` command (tools/cli/) share.
 *
 *   clops run depth-to-space IN.npy OUT.npy --block-size B [--order dcr|crd]
 *   clops run space-to-depth IN.npy OUT.npy --block-size B [--order dcr|crd]
 *   clops run max-unpooling IN.npy INDICES.npy OUT.npy --output-shape N,C,H,W
 *   clops devices | print FILE.npy | cache SUBCOMMAND | tune | bench | bench-startup
 *
 * One file per command (cli_run.c, cli_devices.c, cli_print.c, cli_cache.c,
 * cli_tune.c); cli_main.c lists them (the one place a command is registered)
 * and cli_parse.c parses arguments and prints help from each command's option
 * table. Exit status: 0 success (and --help), 1 operator or file error (one
 * line on stderr: "clops: error: ..."), 2 usage error. Outputs are written
 * atomically: a failed run leaves no output file behind.
 */
#ifndef CLOPS_CLI_H
#define CLOPS_CLI_H

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <clops/clops.h>

#include "npy.h"
#include "run_settings.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

#define ERR_SIZE 8192 /* any message whole, as NPY_MESSAGE_SIZE */

/* ---- parsed arguments --------------------------------------------------------------- */

typedef enum device_choice { DEVICE_DEFAULT = 0, DEVICE_HOST, DEVICE_INDEX, DEVICE_ALL } device_choice;

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
    run_settings settings; /* --fallback, --timeout */
    int json; /* --json: one JSON document on stdout instead of text */
    clops_indices_layout indices_layout; /* run max-unpooling --indices (0: flat) */
    /* conformance (tools/conformance/conformance.c) and kernels (cli_kernels.c): */
    const char *json_file;     /* conformance --json FILE */
    const char *list_words[5]; /* kernels list --ops, --types, --blocks, --layouts, --windows */
    int portable;              /* kernels list --portable */
    unsigned jobs;             /* kernels build --jobs (0: one per core) */
    const char *source, *build_options, *binary, *list; /* kernels pack-add */
    int argc;    /* the arguments after the command's words, as given */
    char **argv;
} cli_args;

/* Parses an option's value into args; 0, or -1 with a message in err. */
typedef int (*option_parser)(cli_args *args, const char *value, char *err, size_t err_size);

typedef struct cli_option {
    const char *name;    /* "--block-size" */
    const char *metavar; /* "B", or NULL for a flag */
    int required;
    option_parser parse; /* NULL for a flag and for --help */
    const char *help;
    size_t flag; /* a flag: offsetof(cli_args, the int it sets to 1); else 0, which is
                    no flag's offset (cli_args starts with positional) */
} cli_option;

/* The entry of a flag that sets args->field. */
#define CLI_FLAG(name, field, help) {name, NULL, 0, NULL, help, offsetof(cli_args, field)}

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

/* ---- messages and numbers (cli_parse.c) ---- */

void set_err(char *err, size_t err_size, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* "clops: error: WHAT: DETAIL" on stderr, and EXIT_FAIL. */
int fail_line(const char *what, const char *detail);
/* fail_line with the status's name and the library's detail message. */
int fail_clops(const char *what, clops_status st);
/* fail_clops with `detail` (NULL: the library's message) followed by the
 * `ntail` strings of `tail`, each whole. */
int fail_clops_detail(const char *what, clops_status st, const char *detail, const char *const tail[], size_t ntail);
int fail_npy(const char *path, npy_status st, const char *msg);
/* A strict unsigned decimal: digits only, fully consumed, at most max. */
int parse_uint(const char *s, uint64_t max, uint64_t *out);

/* `argc` arguments as one shell command line after `prefix` ("clops conformance"):
 * each quoted where a POSIX shell would split or expand it, so that pasting the
 * line runs the same command. malloc'd; NULL when out of memory. */
char *shell_command_line(const char *prefix, int argc, char *const argv[]);

/* ---- options, help and parsing (cli_parse.c) ---- */

int opt_block_size(cli_args *args, const char *value, char *err, size_t err_size);
int opt_order(cli_args *args, const char *value, char *err, size_t err_size);
int opt_device(cli_args *args, const char *value, char *err, size_t err_size);
int opt_type(cli_args *args, const char *value, char *err, size_t err_size);
int opt_output_shape(cli_args *args, const char *value, char *err, size_t err_size);
int opt_fallback(cli_args *args, const char *value, char *err, size_t err_size);
int opt_timeout(cli_args *args, const char *value, char *err, size_t err_size);

/* Option table entries several commands share. */
#define OPT_DEVICE                                                                              \
    {"--device", "N|host", 0, opt_device,                                                      \
     "run on device N of 'clops devices', or on the host backend (default: the default device, " \
     "CLOPS_DEVICE if set)", 0}
#define OPT_TYPE                                                                                \
    {"--type", "bfloat16", 0, opt_type,                                                        \
     "read 2-byte data ('<u2', '<i2', '<f2') as BFLOAT16; the output is written as '<u2' "      \
     "holding the bfloat16 bits (NumPy has no bfloat16 dtype)", 0}
#define OPT_VERBOSE \
    CLI_FLAG("--verbose", verbose, "print the device, backend, kernel, work sizes and build options to stderr")
#define OPT_FALLBACK                                                                            \
    {"--fallback", "allow|never", 0, opt_fallback,                                             \
     "allow: an operator the device cannot run runs on the host (default, or CLOPS_FALLBACK); " \
     "never: that is an error (CLOPS_ERROR_FALLBACK_REFUSED)", 0}
#define OPT_TIMEOUT                                                                             \
    {"--timeout", "SECONDS", 0, opt_timeout,                                                   \
     "fail (exit 1, naming the device, no OUT written) if the device work has not finished "    \
     "within SECONDS (default: CLOPS_TIMEOUT, else none)", 0}
#define OPT_JSON CLI_FLAG("--json", json, "write one JSON document to stdout instead of text")
#define OPT_HELP {"--help", NULL, 0, NULL, "show this help and exit", 0}
#define OPT_END {NULL, NULL, 0, NULL, NULL, 0}
extern const cli_option help_only_options[];
extern const cli_option json_options[]; /* --json and --help */

/* "-h" or "--help". */
int is_help(const char *arg);
/* "PREFIXclops run depth-to-space IN.npy OUT.npy --block-size B [options]" */
void print_command_usage(FILE *out, const char *prefix, const cli_command *cmd);
void print_command_help(const cli_command *cmd);
/* "clops: MESSAGE" and where to get help on stderr, and EXIT_USAGE. */
int usage_error(const cli_command *cmd, const char *message);
/* Runs a command on the arguments after its words: help if asked for anywhere
 * before "--", else parse them and run. */
int dispatch(const cli_command *cmd, int argc, char **argv);

/* ---- the commands ---- */

/* Commands with words of their own: argv[0] is "run" or "cache". */
int cli_run_main(int argc, char **argv);
void cli_run_usage(FILE *out);
int cli_cache_main(int argc, char **argv);
void cli_cache_usage(FILE *out);
int cli_kernels_main(int argc, char **argv); /* cli_kernels.c: list, source, pack-add */
void cli_kernels_usage(FILE *out);
extern const cli_command cli_devices_command, cli_print_command, cli_tune_command;
extern const cli_command cli_conformance_command; /* tools/conformance/conformance.c */

/* The whole command line (argv[0] is the program): cli_main.c. */
int clops_cli_main(int argc, char **argv);

#endif
