/* cli_parse.c - the command line's shared parts: error lines, option parsers,
 * help printed from a command's option table, and the one parser every command
 * uses, driven by the same table (getopt_long: "--name value" or "--name=value",
 * unambiguous prefixes of names, each option at most once). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdarg.h>

#include "cli.h"

/* ---- small helpers ------------------------------------------------------------------------ */

/* ERR_SIZE holds any message whole (one path, or an argument of up to 8,000
 * bytes); a longer one ends in "..." so that it reads as cut. */
void set_err(char *err, size_t err_size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n >= err_size && err_size > 4) memcpy(err + err_size - 4, "...", 4);
}

/* Prints s to stderr on one line (newlines become blanks). */
static void put_one_line(const char *s)
{
    for (; *s != '\0'; s++)
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, stderr);
}

/* "clops: error: WHAT: HEAD DETAIL TAIL" on one line, each part whole (no
 * buffer between the message and stderr), and EXIT_FAIL. */
static int fail_parts(const char *what, const char *head, const char *detail, const char *tail)
{
    fputs("clops: error: ", stderr);
    put_one_line(what);
    fputs(": ", stderr);
    put_one_line(head);
    put_one_line(detail);
    put_one_line(tail);
    fputc('\n', stderr);
    return EXIT_FAIL;
}

int fail_line(const char *what, const char *detail)
{
    return fail_parts(what, "", detail, "");
}

int fail_clops(const char *what, clops_status st)
{
    const char *detail = clops_last_error_message();
    return fail_clops_detail(what, st, detail == NULL || detail[0] == '\0' ? clops_status_message(st) : detail,
                             NULL, 0);
}

int fail_clops_detail(const char *what, clops_status st, const char *detail, const char *const tail[], size_t ntail)
{
    if (detail == NULL) detail = clops_last_error_message();
    fputs("clops: error: ", stderr);
    put_one_line(what);
    fputs(": ", stderr);
    put_one_line(clops_status_name(st));
    if (strcmp(clops_status_name(st), "CLOPS_UNKNOWN_STATUS") == 0) fprintf(stderr, " (%d)", (int)st); /* a driver's own code */
    fputs(": ", stderr);
    put_one_line(detail);
    for (size_t i = 0; i < ntail; i++) put_one_line(tail[i]);
    fputc('\n', stderr);
    return EXIT_FAIL;
}

int fail_npy(const char *path, npy_status st, const char *msg)
{
    char tail[64];
    snprintf(tail, sizeof tail, " (%s)", npy_status_name(st));
    return fail_parts(path, "", msg[0] != '\0' ? msg : npy_status_message(st), tail);
}

/* A strict unsigned decimal: digits only, fully consumed, at most max. */
int parse_uint(const char *s, uint64_t max, uint64_t *out)
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

char *shell_command_line(const char *prefix, int argc, char *const argv[])
{
    size_t size = strlen(prefix) + 1;
    for (int i = 0; i < argc; i++) size += 3 + 4 * strlen(argv[i]); /* ' -> '\'' at worst */
    char *line = malloc(size), *o = line;
    if (!line) return NULL;
    o += sprintf(o, "%s", prefix);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        *o++ = ' ';
        if (a[0] != '\0' && strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-") ==
                                 strlen(a)) {
            o += sprintf(o, "%s", a);
            continue;
        }
        *o++ = '\'';
        for (; *a; a++) {
            if (*a == '\'') o += sprintf(o, "'\\''");
            else *o++ = *a;
        }
        *o++ = '\'';
    }
    *o = '\0';
    return line;
}

/* ---- option parsers ------------------------------------------------------------------------ */

int opt_block_size(cli_args *args, const char *value, char *err, size_t err_size)
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

int opt_order(cli_args *args, const char *value, char *err, size_t err_size)
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

int opt_device(cli_args *args, const char *value, char *err, size_t err_size)
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

int opt_fallback(cli_args *args, const char *value, char *err, size_t err_size)
{
    return run_settings_fallback(&args->settings, value, err, err_size);
}

int opt_timeout(cli_args *args, const char *value, char *err, size_t err_size)
{
    return run_settings_timeout(&args->settings, value, err, err_size);
}

int opt_type(cli_args *args, const char *value, char *err, size_t err_size)
{
    if (strcmp(value, "bfloat16") != 0 && strcmp(value, "BFLOAT16") != 0) {
        set_err(err, err_size, "--type supports only bfloat16, not '%s'", value);
        return -1;
    }
    args->type_override = CLOPS_DATA_TYPE_BFLOAT16;
    return 0;
}

int opt_output_shape(cli_args *args, const char *value, char *err, size_t err_size)
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

/* ---- option tables ---- */

const cli_option help_only_options[] = {OPT_HELP, OPT_END};
const cli_option json_options[] = {OPT_JSON, OPT_HELP, OPT_END};

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

/* --help: the one entry that neither parses a value nor sets a flag. */
static int is_help_option(const cli_option *o)
{
    return o->parse == NULL && o->flag == 0;
}

static void print_options_help(FILE *out, const cli_option *options)
{
    fputs("\noptions:\n", out);
    for (const cli_option *o = options; o->name != NULL; o++) {
        char left[64];
        if (is_help_option(o))
            snprintf(left, sizeof left, "-h, %s", o->name);
        else if (o->metavar != NULL)
            snprintf(left, sizeof left, "%s %s", o->name, o->metavar);
        else
            snprintf(left, sizeof left, "%s", o->name);
        fprintf(out, "  %-*s", HELP_INDENT - 2, left);
        print_wrapped(out, o->help, HELP_INDENT);
    }
}

/* "clops run depth-to-space IN.npy OUT.npy --block-size B [--order dcr|crd] ...":
 * every option of the table (the optional ones in brackets, --help left out),
 * the optional ones wrapped at HELP_WIDTH under the command's first argument. */
void print_command_usage(FILE *out, const char *prefix, const cli_command *cmd)
{
    size_t col = (size_t)fprintf(out, "%sclops %s", prefix, cmd->name);
    const size_t indent = col + 1;
    char word[160];
    const char *rest = cmd->positional;
    for (int pass = 0; pass < 3; pass++) {
        /* pass 0: the operands, 1: required options, 2: optional ones */
        for (const cli_option *o = cmd->options; pass > 0 && o->name != NULL; o++) {
            if (is_help_option(o) || (o->required != 0) != (pass == 1)) continue;
            snprintf(word, sizeof word, "%s%s%s%s%s", pass == 2 ? "[" : "", o->name, o->metavar ? " " : "",
                     o->metavar ? o->metavar : "", pass == 2 ? "]" : "");
            if (pass == 2 && col + 1 + strlen(word) > HELP_WIDTH) col = (size_t)fprintf(out, "\n%*s", (int)indent - 1, "");
            col += (size_t)fprintf(out, " %s", word);
        }
        if (pass == 0 && rest[0] != '\0') col += (size_t)fprintf(out, " %s", rest);
    }
    fputc('\n', out);
}

void print_command_help(const cli_command *cmd)
{
    print_command_usage(stdout, "usage: ", cmd);
    printf("\n%s\n", cmd->summary);
    print_options_help(stdout, cmd->options);
    if (cmd->notes != NULL)
        printf("\n%s\n", cmd->notes);
}

int usage_error(const cli_command *cmd, const char *message)
{
    fprintf(stderr, "clops: %s\n", message);
    if (cmd != NULL)
        fprintf(stderr, "Try 'clops %s --help'.\n", cmd->name);
    else
        fputs("Try 'clops --help'.\n", stderr);
    return EXIT_USAGE;
}

/* ---- argument parsing ------------------------------------------------------------------------- */

int is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

/* Every command's options are parsed here, by getopt_long over a `struct option`
 * table made from the command's cli_option table: "--name value" and
 * "--name=value" alike, an unambiguous prefix of a name accepted for it (as
 * every GNU tool does), arguments in any order, "--" ending the options. */
#define MAX_OPTIONS 32

/* How many names of the table start with the first `len` bytes of `name`. */
static int prefix_matches(const cli_option *options, const char *name, size_t len)
{
    int n = 0;
    for (const cli_option *o = options; o->name != NULL; o++)
        if (!is_help_option(o) && strncmp(o->name + 2, name, len) == 0) n++;
    return n;
}

/* The usage error for the argument getopt_long refused (`code` '?' or ':'). */
static int refused_option(const cli_command *cmd, const char *arg, int code, int index)
{
    char err[ERR_SIZE];
    const cli_option *o = index >= 0 ? &cmd->options[index] : NULL;
    if (code == ':' && o)
        set_err(err, sizeof err, "option %s needs a value (%s)", o->name, o->metavar);
    else if (o && o->metavar == NULL)
        set_err(err, sizeof err, "option %s takes no value", o->name);
    else if (strncmp(arg, "--", 2) == 0 &&
             prefix_matches(cmd->options, arg + 2, strcspn(arg + 2, "=")) > 1)
        set_err(err, sizeof err, "ambiguous option '%s' for 'clops %s' (it begins several options' names)", arg,
                cmd->name);
    else
        set_err(err, sizeof err, "unknown option '%s' for 'clops %s'", arg, cmd->name);
    return usage_error(cmd, err);
}

/* Parses argv (after the command words) into args. 0 or EXIT_USAGE. */
static int parse_args(const cli_command *cmd, int argc, char **argv, cli_args *args)
{
    char err[ERR_SIZE];
    struct option longopts[MAX_OPTIONS + 1];
    int n = 0;
    for (const cli_option *o = cmd->options; o->name != NULL && n < MAX_OPTIONS; o++, n++) {
        const int help = is_help_option(o); /* never parsed: dispatch answers --help first */
        longopts[n] = (struct option){help ? "\x01help" : o->name + 2, o->metavar ? required_argument : no_argument,
                                      NULL, 256 + n};
    }
    longopts[n] = (struct option){NULL, 0, NULL, 0};
    unsigned seen = 0;
    memset(args, 0, sizeof *args);
    args->order = CLOPS_ORDER_DEPTH_COLUMN_ROW;
    /* getopt_long wants argv[0] to be the program: the command's words stand in. */
    char **av = malloc(((size_t)argc + 2) * sizeof *av);
    if (!av) return fail_line(cmd->name, "out of memory");
    av[0] = (char *)cmd->name;
    memcpy(av + 1, argv, (size_t)argc * sizeof *av);
    av[argc + 1] = NULL;
    opterr = 0;
    optind = 0; /* a full restart: the parser may run more than once in a process */
    int rc = 0, c, index = -1;
    /* "-": operands come back in order as code 1; ":": a missing value is ':'. */
    while (rc == 0 && (index = -1, c = getopt_long(argc + 1, av, "-:", longopts, &index)) != -1) {
        if (c == 1) {
            if (args->npositional < cmd->npositional) {
                args->positional[args->npositional++] = optarg;
            } else {
                set_err(err, sizeof err, "unexpected argument '%s'", optarg);
                rc = usage_error(cmd, err);
            }
            continue;
        }
        if (c == '?' || c == ':') {
            const int known = optopt >= 256 && optopt < 256 + n ? optopt - 256 : -1;
            /* "-x": no command has one-letter options. glibc's optopt for a
             * short option is a signed char's value: -128..-1 for bytes past 127. */
            const bool short_opt = optopt != 0 && optopt >= CHAR_MIN && optopt <= UCHAR_MAX;
            char shortopt[3] = {'-', (char)(unsigned char)optopt, '\0'};
            rc = refused_option(cmd, short_opt ? shortopt : av[optind - 1], c, known);
            continue;
        }
        const cli_option *o = &cmd->options[c - 256];
        const unsigned bit = 1u << (unsigned)(c - 256);
        if (seen & bit) {
            set_err(err, sizeof err, "option %s given twice", o->name);
            rc = usage_error(cmd, err);
        } else if (is_help_option(o)) {
            rc = refused_option(cmd, av[optind - 1], '?', -1);
        } else {
            seen |= bit;
            if (o->flag != 0)
                *(int *)((char *)args + o->flag) = 1;
            else if (o->parse(args, optarg != NULL ? optarg : "", err, sizeof err) != 0)
                rc = usage_error(cmd, err);
        }
    }
    for (int i = optind; rc == 0 && i < argc + 1; i++) { /* after "--": operands */
        if (args->npositional < cmd->npositional) {
            args->positional[args->npositional++] = av[i];
        } else {
            set_err(err, sizeof err, "unexpected argument '%s'", av[i]);
            rc = usage_error(cmd, err);
        }
    }
    free(av);
    if (rc != 0) return rc;
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

/* Runs a command: help if asked for anywhere before "--", else parse and run. */
int dispatch(const cli_command *cmd, int argc, char **argv)
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
    args.argc = argc, args.argv = argv;
    return cmd->run(cmd, &args);
}

