/*
 * bench_options.c - `clops bench`'s options: one table drives parsing and
 * --help; the device choice (bench_internal.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "bench_internal.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- options ------------------------------------------------------------------------ */

typedef enum opt_id { OPT_DEVICE, OPT_JSON, OPT_QUICK, OPT_REPS, OPT_OPS, OPT_WIDTHS, OPT_BLOCKS, OPT_SIZES,
                      OPT_PLANES, OPT_HELP } opt_id;

typedef struct bench_option {
    opt_id id;
    const char *name;
    const char *arg; /* NULL for a flag */
    const char *help;
} bench_option;

/* One table drives both parsing and --help. */
static const bench_option bench_options[] = {
    {OPT_DEVICE, "--device", "N|host",
     "device index from `clops devices`, or host (default: the one `clops devices` marks: CLOPS_DEVICE, else "
     "the first GPU, else the first device unless it is a CPU, else host)"},
    {OPT_JSON, "--json", NULL, "print one JSON document to stdout instead of the table"},
    {OPT_QUICK, "--quick", NULL, "few sizes, widths and blocks (a smoke test); explicit lists still win"},
    {OPT_REPS, "--reps", "N", "timed repetitions of each measurement, medians reported (default 7; 3x that "
                              "below 1 MiB moved)"},
    {OPT_OPS, "--ops", "LIST", "operators among d2s,s2d,unpool (default: all)"},
    {OPT_WIDTHS, "--widths", "LIST", "element widths in bytes among 1,2,4,8,16 (default: all; types UINT8, "
                                     "FLOAT16, FLOAT32, FLOAT64, COMPLEX128)"},
    {OPT_BLOCKS, "--blocks", "LIST", "block sizes of d2s and s2d (default 2,3,4,8)"},
    {OPT_SIZES, "--sizes", "LIST", "sizes of the largest tensor, in bytes with optional K, M or G (binary), or "
                                   "`spec` for the specification's 1x8x2x3 example (default spec,64K,1M,4M,16M,64M)"},
    {OPT_PLANES, "--planes", "LIST", "MaxUnpooling inputs NxCxHxW of many small planes (outputs 2H x 2W), each "
                                     "row also timed as a fresh operator's first execution ('1st'), or `none` "
                                     "(default 4x512x14x14,4x64x64x64; --quick 4x512x14x14)"},
    {OPT_HELP, "--help", NULL, "show this help"},
};
#define NUM_OPTIONS (sizeof bench_options / sizeof bench_options[0])

const char *const op_names[BENCH_NUM_OPS] = {"DepthToSpace", "SpaceToDepth", "MaxUnpooling"};
const char *const op_short[BENCH_NUM_OPS] = {"d2s", "s2d", "unpool"};

void print_help(FILE *f)
{
    fprintf(f, "usage: clops bench [options]\n\n"
               "Throughput of DepthToSpace, SpaceToDepth (DCR and CRD) and MaxUnpooling (2x2 windows, a real 3x3/2/1 max pool\n"
               "(overlapping windows) and scattered distinct indices, INT64 and UINT32; by size, and for networks' deep stages\n"
               "of many small planes, again and on a fresh operator) in GB/s (bytes read + bytes written), against a copy of the same bytes on the same\n"
               "device in the same run, medians of interleaved repetitions; then small-tensor latency\n"
               "against an empty kernel launch. Method: notes/bench.md.\n\noptions:\n");
    for (size_t i = 0; i < NUM_OPTIONS; i++) {
        char left[64];
        snprintf(left, sizeof left, "%s%s%s", bench_options[i].name, bench_options[i].arg ? " " : "",
                 bench_options[i].arg ? bench_options[i].arg : "");
        fprintf(f, "  %-18s %s\n", left, bench_options[i].help);
    }
}

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("clops bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\n(try: clops bench --help)\n", stderr);
    return 2;
}

static bool ascii_iequal(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a, y = *b;
        if (x >= 'A' && x <= 'Z') x = (char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = (char)(y - 'A' + 'a');
        if (x != y) return false;
    }
    return *a == *b;
}

/* Splits a comma-separated list into `out` (tokens of at most 31 characters). */
static int split_list(const char *opt, const char *list, char out[MAX_LIST][32], unsigned *count)
{
    *count = 0;
    const char *p = list;
    for (;;) {
        const char *end = strchr(p, ',');
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0 || len >= 32) return usage_error("%s: bad list element in '%s'", opt, list);
        if (*count == MAX_LIST) return usage_error("%s: more than %d elements", opt, MAX_LIST);
        memcpy(out[*count], p, len);
        out[*count][len] = '\0';
        (*count)++;
        if (!end) return 0;
        p = end + 1;
    }
}

static int parse_uint(const char *opt, const char *s, unsigned long long max, unsigned long long *out)
{
    char *end;
    if (*s < '0' || *s > '9') return usage_error("%s: '%s' is not a number", opt, s);
    const unsigned long long v = strtoull(s, &end, 10);
    if (*end != '\0' || v > max) return usage_error("%s: '%s' is not a number up to %llu", opt, s, max);
    *out = v;
    return 0;
}

/* "4096", "64K", "1M", "2G" (binary multiples, optional "iB"/"B"), or "spec" (0). */
static int parse_size(const char *s, uint64_t *out)
{
    if (ascii_iequal(s, "spec")) {
        *out = 0;
        return 0;
    }
    char *end;
    if (*s < '0' || *s > '9') return usage_error("--sizes: '%s' is not a size", s);
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    if (*end == 'k' || *end == 'K') shift = 10;
    else if (*end == 'm' || *end == 'M') shift = 20;
    else if (*end == 'g' || *end == 'G') shift = 30;
    if (shift) end++;
    if (ascii_iequal(end, "ib") && shift) end += 2;
    else if (ascii_iequal(end, "b")) end++;
    if (*end != '\0' || v == 0 || v > (1ull << 40) >> shift)
        return usage_error("--sizes: '%s' is not a size between 1 byte and 1 TiB", s);
    *out = (uint64_t)v << shift;
    return 0;
}

/* "NxCxHxW" (each 1 to 2^30: the output doubles H and W; at most 2^40 elements) into s[4]. */
static int parse_shape(const char *item, uint32_t s[4])
{
    const char *p = item;
    for (int i = 0; i < 4; i++) {
        char *end;
        if (*p < '0' || *p > '9') break;
        const unsigned long long v = strtoull(p, &end, 10);
        if (v == 0 || v > (1ull << 30) || *end != (i < 3 ? 'x' : '\0')) break;
        s[i] = (uint32_t)v;
        if (i == 3 && (double)s[0] * s[1] * s[2] * s[3] <= 1099511627776.0) return 0;
        p = end + 1;
    }
    return usage_error("--planes: '%s' is not NxCxHxW (each 1 to 2^30, at most 2^40 elements) nor none", item);
}

static int check_width(unsigned long long v)
{
    if (v != 1 && v != 2 && v != 4 && v != 8 && v != 16)
        return usage_error("--widths: %llu is not one of 1, 2, 4, 8, 16", v);
    return 0;
}

static int check_block(unsigned long long v)
{
    return v == 0 ? usage_error("--blocks: block sizes start at 1") : 0;
}

/* A comma-separated list of numbers up to max, each accepted by check (which
 * prints its own usage error), into out[] and *count; the first bad element
 * is the one reported. */
static int parse_uint_list(const char *opt, const char *list, unsigned long long max,
                           int (*check)(unsigned long long), unsigned out[MAX_LIST], unsigned *count)
{
    char items[MAX_LIST][32];
    unsigned n = 0;
    unsigned long long v = 0;
    int rc = split_list(opt, list, items, &n);
    for (unsigned i = 0; rc == 0 && i < n; i++)
        if ((rc = parse_uint(opt, items[i], max, &v)) == 0 && (rc = check(v)) == 0) out[i] = (unsigned)v;
    if (rc == 0) *count = n;
    return rc;
}

static int apply_option(bench_args *a, opt_id id, const char *name, const char *val)
{
    char items[MAX_LIST][32];
    unsigned n = 0;
    unsigned long long v = 0;
    int rc = 0;
    switch (id) {
    case OPT_DEVICE: a->device = val; break;
    case OPT_JSON: a->json = true; break;
    case OPT_QUICK: a->quick = true; break;
    case OPT_HELP: a->help = true; break;
    case OPT_REPS:
        if ((rc = parse_uint(name, val, 1000, &v)) != 0) return rc;
        if (v == 0) return usage_error("--reps: at least 1");
        a->reps = (unsigned)v;
        break;
    case OPT_OPS:
        if ((rc = split_list(name, val, items, &n)) != 0) return rc;
        memset(a->ops, 0, sizeof a->ops);
        for (unsigned i = 0; i < n; i++) {
            int k = -1;
            for (int o = 0; o < BENCH_NUM_OPS; o++)
                if (ascii_iequal(items[i], op_short[o]) || ascii_iequal(items[i], op_names[o])) k = o;
            if (ascii_iequal(items[i], "depth_to_space")) k = BENCH_D2S;
            if (ascii_iequal(items[i], "space_to_depth")) k = BENCH_S2D;
            if (ascii_iequal(items[i], "max_unpooling") || ascii_iequal(items[i], "max_unpool")) k = BENCH_UNPOOL;
            if (k < 0) return usage_error("--ops: unknown operator '%s' (d2s, s2d, unpool)", items[i]);
            a->ops[k] = true;
        }
        a->ops_given = true;
        break;
    case OPT_WIDTHS: return parse_uint_list(name, val, 16, check_width, a->widths, &a->num_widths);
    case OPT_BLOCKS: return parse_uint_list(name, val, 64, check_block, a->blocks, &a->num_blocks);
    case OPT_SIZES:
        if ((rc = split_list(name, val, items, &n)) != 0) return rc;
        for (unsigned i = 0; i < n; i++)
            if ((rc = parse_size(items[i], &a->sizes[i])) != 0) return rc;
        a->num_sizes = n;
        break;
    case OPT_PLANES:
        if ((rc = split_list(name, val, items, &n)) != 0) return rc;
        a->num_planes = 0;
        for (unsigned i = 0; i < n; i++) {
            if (ascii_iequal(items[i], "none")) {
                if (n > 1) return usage_error("--planes: none stands alone");
                break;
            }
            if ((rc = parse_shape(items[i], a->planes[i])) != 0) return rc;
            a->num_planes = i + 1;
        }
        a->planes_given = true;
        break;
    }
    return 0;
}

int parse_args(int argc, char **argv, bench_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *eq = strchr(arg, '=');
        const size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        const bench_option *o = NULL;
        for (size_t k = 0; k < NUM_OPTIONS; k++)
            if (strlen(bench_options[k].name) == len && strncmp(bench_options[k].name, arg, len) == 0)
                o = &bench_options[k];
        if (!o) return usage_error("unknown option '%s'", arg);
        const char *val = NULL;
        if (o->arg) {
            if (eq) val = eq + 1;
            else if (i + 1 < argc) val = argv[++i];
            else return usage_error("%s needs a value (%s)", o->name, o->arg);
        } else if (eq) {
            return usage_error("%s takes no value", o->name);
        }
        const int rc = apply_option(a, o->id, o->name, val);
        if (rc) return rc;
    }
    if (!a->ops_given)
        for (int o = 0; o < BENCH_NUM_OPS; o++) a->ops[o] = true;
    if (!a->reps) a->reps = 7;
    if (!a->num_widths) {
        static const unsigned all[] = {1, 2, 4, 8, 16}, quick[] = {1, 4, 16};
        const unsigned *w = a->quick ? quick : all;
        a->num_widths = a->quick ? 3 : 5;
        memcpy(a->widths, w, a->num_widths * sizeof *w);
    }
    if (!a->num_blocks) {
        static const unsigned all[] = {2, 3, 4, 8}, quick[] = {2, 3};
        const unsigned *b = a->quick ? quick : all;
        a->num_blocks = a->quick ? 2 : 4;
        memcpy(a->blocks, b, a->num_blocks * sizeof *b);
    }
    if (!a->num_sizes) {
        static const uint64_t all[] = {0, 64u << 10, 1u << 20, 4u << 20, 16u << 20, 64u << 20},
                              quick[] = {0, 1u << 20};
        const uint64_t *s = a->quick ? quick : all;
        a->num_sizes = a->quick ? 2 : 6;
        memcpy(a->sizes, s, a->num_sizes * sizeof *s);
    }
    if (!a->planes_given) {
        static const uint32_t deep[2][4] = {{4, 512, 14, 14}, {4, 64, 64, 64}};
        a->num_planes = a->quick ? 1 : 2;
        memcpy(a->planes, deep, a->num_planes * sizeof deep[0]);
    }
    return 0;
}

/* The device choice (bench_internal.h). */
int choose_device(const char *spec, size_t n, bool *host, size_t *index)
{
    if (spec && *spec) {
        if (ascii_iequal(spec, "host")) {
            *host = true;
            return 0;
        }
        char *end;
        const unsigned long long v = strtoull(spec, &end, 10);
        if (*spec < '0' || *spec > '9' || *end != '\0' || v >= n)
            return usage_error("--device: '%s' is not host nor a device index below %zu", spec, n);
        *index = (size_t)v;
        *host = false;
        return 0;
    }
    int is_host = 0; /* the default device for host data, as run, Python and clops.onnx take it */
    unsigned i = 0;
    const clops_status st = clops_default_device_for_host_data(&is_host, &i, NULL);
    if (st != CLOPS_SUCCESS) return clops_fail_msg(st, "clops_default_device_for_host_data");
    *host = is_host;
    *index = i;
    return 0;
}
