/*
 * bench.c - `clops bench` (see bench.h; the method is in notes/bench.md).
 *
 * What is timed, per configuration (operator, order or index type, element
 * width, block size, size), after one untimed warm-up run of each:
 *   - the operator: on OpenCL the profiling of the event from
 *     clops_operator_execute (CL_PROFILING_COMMAND_START..END), except
 *     MaxUnpooling, which is several commands, timed by the wall clock around
 *     clops_operator_execute + clFinish; on the host the wall clock around
 *     clops_operator_execute_host;
 *   - baselines moving the same number of bytes: our copy kernel (uint4 loads
 *     and stores, COPY_PER_ITEM per work-item) and clEnqueueCopyBuffer, both
 *     profiled (in MaxUnpooling's rows, wall clock of enqueue + clFinish, like
 *     the operator); memcpy on the host.
 * The three are interleaved in every repetition, each finished before the
 * next starts; medians are reported. Bytes counted = bytes read + bytes
 * written: input + output for DepthToSpace and SpaceToDepth, input + indices +
 * output for MaxUnpooling, 2x the copied size for a copy.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <clops/clops.h>

#define MIB (1024.0 * 1024.0)
#define COPY_PER_ITEM 16
#define COPY_LOCAL_SIZE 256
/* Configurations whose output is at most this large are checked against the
 * host reference (clops_host_run) after the warm-up. */
#define VERIFY_MAX_BYTES ((uint64_t)4 << 20)
/* Below this many bytes moved, a run is cheap and noisy: take 3x the repetitions. */
#define SMALL_BYTES ((uint64_t)1 << 20)
/* Channels of the spatial (shallow) tensor of DepthToSpace/SpaceToDepth, and of MaxUnpooling. */
#define SPACE_CHANNELS 4
#define UNPOOL_CHANNELS 16
/* MaxUnpooling variants: UINT32 (else INT64) indices; scattered (else pooling-
 * shaped) indices, input position k of a plane going to k * SCATTER_STEP modulo
 * the output plane (4x the input plane): distinct, because the step is a prime
 * larger than any plane made here, and spread over the whole plane. */
#define UNPOOL_U32 1
#define UNPOOL_SCATTERED 2
#define SCATTER_STEP UINT64_C(2654435761)

/* ---- options ------------------------------------------------------------------------ */

typedef enum opt_id { OPT_DEVICE, OPT_JSON, OPT_QUICK, OPT_REPS, OPT_OPS, OPT_WIDTHS, OPT_BLOCKS, OPT_SIZES,
                      OPT_HELP } opt_id;

typedef struct bench_option {
    opt_id id;
    const char *name;
    const char *arg; /* NULL for a flag */
    const char *help;
} bench_option;

/* One table drives both parsing and --help. */
static const bench_option bench_options[] = {
    {OPT_DEVICE, "--device", "N|host",
     "device index from `clops devices`, or host (default: CLOPS_DEVICE, else the first GPU, else the first "
     "device, else host)"},
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
    {OPT_HELP, "--help", NULL, "show this help"},
};
#define NUM_OPTIONS (sizeof bench_options / sizeof bench_options[0])

#define MAX_LIST 32

typedef enum bench_op { BENCH_D2S, BENCH_S2D, BENCH_UNPOOL, BENCH_NUM_OPS } bench_op;

static const char *const op_names[BENCH_NUM_OPS] = {"DepthToSpace", "SpaceToDepth", "MaxUnpooling"};
static const char *const op_short[BENCH_NUM_OPS] = {"d2s", "s2d", "unpool"};

typedef struct bench_args {
    bool json, quick, help;
    const char *device; /* NULL: default */
    unsigned reps;
    bool ops[BENCH_NUM_OPS];
    bool ops_given;
    unsigned widths[MAX_LIST], num_widths;
    unsigned blocks[MAX_LIST], num_blocks;
    uint64_t sizes[MAX_LIST]; /* 0 = the specification's example */
    unsigned num_sizes;
} bench_args;

static void print_help(FILE *f)
{
    fprintf(f, "usage: clops bench [options]\n\n"
               "Throughput of DepthToSpace, SpaceToDepth (DCR and CRD) and MaxUnpooling (pooling-shaped\n"
               "and scattered distinct indices, INT64 and UINT32) in GB/s (bytes read + bytes written), against a copy of the same bytes on the same\n"
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
    case OPT_WIDTHS:
        if ((rc = split_list(name, val, items, &n)) != 0) return rc;
        for (unsigned i = 0; i < n; i++) {
            if ((rc = parse_uint(name, items[i], 16, &v)) != 0) return rc;
            if (v != 1 && v != 2 && v != 4 && v != 8 && v != 16)
                return usage_error("--widths: %llu is not one of 1, 2, 4, 8, 16", v);
            a->widths[i] = (unsigned)v;
        }
        a->num_widths = n;
        break;
    case OPT_BLOCKS:
        if ((rc = split_list(name, val, items, &n)) != 0) return rc;
        for (unsigned i = 0; i < n; i++) {
            if ((rc = parse_uint(name, items[i], 64, &v)) != 0) return rc;
            if (v == 0) return usage_error("--blocks: block sizes start at 1");
            a->blocks[i] = (unsigned)v;
        }
        a->num_blocks = n;
        break;
    case OPT_SIZES:
        if ((rc = split_list(name, val, items, &n)) != 0) return rc;
        for (unsigned i = 0; i < n; i++)
            if ((rc = parse_size(items[i], &a->sizes[i])) != 0) return rc;
        a->num_sizes = n;
        break;
    }
    return 0;
}

static int parse_args(int argc, char **argv, bench_args *a)
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
    return 0;
}

/* ---- small helpers ------------------------------------------------------------------- */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v). */
static double median(double *v, unsigned n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static uint64_t round_up(uint64_t x, uint64_t m)
{
    return (x + m - 1) / m * m;
}

/* splitmix64: deterministic pseudo-random data and index positions. */
static uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static void fill_random(void *p, size_t bytes, uint64_t seed)
{
    unsigned char *b = p;
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        const uint64_t v = mix64(seed + i);
        memcpy(b + i, &v, 8);
    }
    for (; i < bytes; i++) b[i] = (unsigned char)mix64(seed + i);
}

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) fprintf(stderr, "clops bench: out of host memory (%zu bytes)\n", bytes);
    return p;
}

static clops_data_type type_of_width(unsigned width)
{
    switch (width) {
    case 1: return CLOPS_DATA_TYPE_UINT8;
    case 2: return CLOPS_DATA_TYPE_FLOAT16;
    case 4: return CLOPS_DATA_TYPE_FLOAT32;
    case 8: return CLOPS_DATA_TYPE_FLOAT64;
    default: return CLOPS_DATA_TYPE_COMPLEX128;
    }
}

static uint64_t count4(const uint32_t s[4])
{
    return (uint64_t)s[0] * s[1] * s[2] * s[3];
}

/* ---- configurations ---------------------------------------------------------------- */

typedef struct bench_config {
    bench_op op;
    int variant; /* d2s/s2d: clops_depth_space_order; unpool: UNPOOL_U32 | UNPOOL_SCATTERED bits */
    unsigned width;
    unsigned block; /* 0 for unpool */
    uint64_t target; /* requested size of the largest tensor; 0 = the specification's example */
    clops_data_type type, index_type;
    uint32_t in[4], out[4];
    uint64_t in_bytes, idx_bytes, out_bytes;
    uint64_t moved;      /* bytes read + bytes written by the operator */
    uint64_t copy_bytes; /* size of each baseline copy: moved / 2, rounded up to 16 */
} bench_config;

typedef struct bench_result {
    bench_config cfg;
    unsigned reps;
    double op_s, op_min_s, op_max_s; /* seconds per run (median, min, max) */
    double op_wall_s;                /* median wall clock of the same runs: execute + clFinish */
    double ck_s, cb_s;               /* copy kernel and clEnqueueCopyBuffer; memcpy in ck_s on the host */
    bool op_wall;                    /* op and baselines timed by the wall clock (not by profiling) */
    int verified;                    /* 1 matched the host reference, 0 not checked, -1 mismatch */
} bench_result;

static const char *variant_name(const bench_config *c)
{
    static const char *const unpool[4] = {"pool/i64", "pool/u32", "scat/i64", "scat/u32"};
    if (c->op == BENCH_UNPOOL) return unpool[c->variant & 3];
    return c->variant == CLOPS_ORDER_DEPTH_COLUMN_ROW ? "DCR" : "CRD";
}

/* Shapes: DepthToSpace goes deep {1, C*b*b, H, W} -> spatial {1, C, H*b, W*b} with
 * C = SPACE_CHANNELS and square H = W chosen to make `target` bytes (the spatial
 * and deep tensors hold the same elements); SpaceToDepth is the reverse. The
 * specification's example is DepthToSpace (1,8,2,3) -> (1,2,4,6) at b = 2, and
 * (1,2b*b,2,3) -> (1,2,2b,3b) at other b. MaxUnpooling: 2x2 windows of stride 2,
 * input {1, 16, H, W}, output {1, 16, 2H, 2W} of about `target` bytes; the
 * example is (1,8,2,3) -> (1,8,4,6). */
static void make_shapes(bench_config *c)
{
    const uint64_t w = c->width;
    if (c->op == BENCH_UNPOOL) {
        uint32_t ch = UNPOOL_CHANNELS, h = 2, wd = 3;
        if (c->target == 0) {
            ch = 8;
        } else {
            const double px = (double)c->target / (double)w / UNPOOL_CHANNELS / 4.0;
            h = wd = (uint32_t)fmax(1.0, floor(sqrt(px) + 0.5));
        }
        const uint32_t in[4] = {1, ch, h, wd}, out[4] = {1, ch, 2 * h, 2 * wd};
        memcpy(c->in, in, sizeof in);
        memcpy(c->out, out, sizeof out);
    } else {
        const uint32_t b = c->block;
        uint32_t ch = 2, hs = 2 * b, ws = 3 * b; /* spatial tensor */
        if (c->target != 0) {
            ch = SPACE_CHANNELS;
            const double side = sqrt((double)c->target / (double)w / SPACE_CHANNELS);
            hs = ws = b * (uint32_t)fmax(1.0, floor(side / b + 0.5));
        }
        const uint32_t deep[4] = {1, ch * b * b, hs / b, ws / b}, space[4] = {1, ch, hs, ws};
        memcpy(c->in, c->op == BENCH_D2S ? deep : space, sizeof deep);
        memcpy(c->out, c->op == BENCH_D2S ? space : deep, sizeof deep);
    }
    c->type = type_of_width(c->width);
    c->index_type = c->variant & UNPOOL_U32 ? CLOPS_DATA_TYPE_UINT32 : CLOPS_DATA_TYPE_INT64;
    c->in_bytes = count4(c->in) * w;
    c->out_bytes = count4(c->out) * w;
    c->idx_bytes = c->op == BENCH_UNPOOL ? count4(c->in) * (c->variant & UNPOOL_U32 ? 4 : 8) : 0;
    c->moved = c->in_bytes + c->idx_bytes + c->out_bytes;
    c->copy_bytes = round_up((c->moved + 1) / 2, 16);
}

/* Every configuration, sizes outermost (smallest first, as given). */
static bench_config *make_configs(const bench_args *a, size_t *count)
{
    size_t n = 0;
    for (int o = 0; o < BENCH_NUM_OPS; o++)
        if (a->ops[o]) n += (size_t)a->num_sizes * a->num_widths * (o == BENCH_UNPOOL ? 4 : 2 * a->num_blocks);
    bench_config *cfgs = calloc(n ? n : 1, sizeof *cfgs);
    if (!cfgs) return NULL;
    size_t k = 0;
    for (unsigned s = 0; s < a->num_sizes; s++)
        for (int o = 0; o < BENCH_NUM_OPS; o++) {
            if (!a->ops[o]) continue;
            for (int v = 0; v < (o == BENCH_UNPOOL ? 4 : 2); v++)
                for (unsigned wi = 0; wi < a->num_widths; wi++)
                    for (unsigned bi = 0; bi < (o == BENCH_UNPOOL ? 1 : a->num_blocks); bi++) {
                        bench_config *c = &cfgs[k++];
                        c->op = (bench_op)o;
                        c->variant = v;
                        c->width = a->widths[wi];
                        c->block = o == BENCH_UNPOOL ? 0 : a->blocks[bi];
                        c->target = a->sizes[s];
                        make_shapes(c);
                    }
        }
    *count = k;
    return cfgs;
}

/* The operator descriptor of a configuration, with the storage it points into. */
typedef struct desc_storage {
    clops_tensor_desc in, idx, out;
    clops_depth_to_space_desc ds;
    clops_space_to_depth_desc sd;
    clops_max_unpooling_desc mu;
    clops_operator_desc op;
} desc_storage;

static void make_desc(const bench_config *c, desc_storage *d)
{
    memset(d, 0, sizeof *d);
    d->in.data_type = c->type;
    memcpy(d->in.sizes, c->in, sizeof c->in);
    d->out.data_type = c->type;
    memcpy(d->out.sizes, c->out, sizeof c->out);
    if (c->op == BENCH_UNPOOL) {
        d->idx.data_type = c->index_type;
        memcpy(d->idx.sizes, c->in, sizeof c->in);
        d->mu.input = &d->in;
        d->mu.indices = &d->idx;
        d->mu.output = &d->out;
        d->op.type = CLOPS_OPERATOR_MAX_UNPOOLING;
        d->op.desc = &d->mu;
    } else {
        d->ds.input = d->sd.input = &d->in;
        d->ds.output = d->sd.output = &d->out;
        d->ds.block_size = d->sd.block_size = c->block;
        d->ds.order = d->sd.order = (clops_depth_space_order)c->variant;
        if (c->op == BENCH_D2S) {
            d->op.type = CLOPS_OPERATOR_DEPTH_TO_SPACE;
            d->op.desc = &d->ds;
        } else {
            d->op.type = CLOPS_OPERATOR_SPACE_TO_DEPTH;
            d->op.desc = &d->sd;
        }
    }
}

/* Indices of a 2x2 stride-2 max-pooling: each input element's index points at a
 * pseudo-random position of its own window, flat over the whole output; or
 * (UNPOOL_SCATTERED) at distinct positions spread over its output plane. */
static void make_indices(const bench_config *c, void *dst)
{
    const uint64_t ch = (uint64_t)c->in[0] * c->in[1], h = c->in[2], w = c->in[3];
    const uint64_t oh = c->out[2], ow = c->out[3], plane = oh * ow;
    uint64_t k = 0;
    for (uint64_t p = 0; p < ch; p++)
        for (uint64_t y = 0; y < h; y++)
            for (uint64_t x = 0; x < w; x++, k++) {
                const uint64_t r = mix64(k) >> 62;
                uint64_t flat = (p * oh + 2 * y + (r >> 1)) * ow + 2 * x + (r & 1);
                if (c->variant & UNPOOL_SCATTERED) flat = p * plane + (y * w + x) * SCATTER_STEP % plane;
                if (c->variant & UNPOOL_U32) ((uint32_t *)dst)[k] = (uint32_t)flat;
                else ((int64_t *)dst)[k] = (int64_t)flat;
            }
}

/* ---- the progress line --------------------------------------------------------------- */

typedef struct progress {
    bool on;
    bool shown;
    double start;
} progress;

static void progress_clear(progress *p)
{
    if (p->on && p->shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        p->shown = false;
    }
}

static void progress_show(progress *p, size_t done, size_t total, const bench_config *c)
{
    if (!p->on) return;
    const double t = now_seconds() - p->start;
    char what[96];
    if (c)
        snprintf(what, sizeof what, "%s %s w%u%s%.0u %.2f MiB", op_names[c->op], variant_name(c), c->width,
                 c->block ? " b" : "", c->block, (double)(c->in_bytes > c->out_bytes ? c->in_bytes : c->out_bytes) / MIB);
    else
        snprintf(what, sizeof what, "latency");
    fprintf(stderr, "\r\033[K[%zu/%zu] %s  (%d:%02d elapsed)", done + 1, total, what, (int)t / 60, (int)t % 60);
    fflush(stderr);
    p->shown = true;
}

/* ---- OpenCL setup ------------------------------------------------------------------- */

/* The copy baseline: each work-item copies COPY_PER_ITEM consecutive uint4s (a
 * contiguous run per work-item measured fastest on PoCL's CPU device, ahead of
 * work-items interleaved within a group or across the range), and an empty kernel. */
#define STR_(x) #x
#define STR(x) STR_(x)
static const char copy_source[] =
    "#define PER " STR(COPY_PER_ITEM) "\n"
    "__kernel void bench_copy(__global const uint4 *restrict src, __global uint4 *restrict dst, ulong n)\n"
    "{\n"
    "    ulong i = (ulong)get_global_id(0) * PER;\n"
    "    for (int k = 0; k < PER; k++, i++)\n"
    "        if (i < n) dst[i] = src[i];\n"
    "}\n"
    "__kernel void bench_empty(void)\n"
    "{\n"
    "}\n";

typedef struct cl_env {
    clops_device_info info;
    cl_context context;
    cl_command_queue queue;
    cl_program program;
    cl_kernel copy, empty;
    size_t copy_local;
    clops_context *ctx;
} cl_env;

/* Buffers reused across configurations, grown as needed. Host mirrors hold the
 * input data, the indices and space for the reference output. */
typedef struct pool {
    cl_mem in, idx, out, csrc, cdst;
    size_t in_cap, idx_cap, out_cap, copy_cap;
    unsigned char *h_in, *h_idx, *h_out, *h_ref, *h_csrc, *h_cdst;
} pool;

static int cl_fail(cl_int err, const char *what)
{
    fprintf(stderr, "clops bench: %s failed (%d)\n", what, (int)err);
    return 1;
}

static int clops_fail_msg(clops_status st, const char *what)
{
    fprintf(stderr, "clops bench: %s: %s: %s\n", what, clops_status_name(st), clops_last_error_message());
    return 1;
}

/* The device to use: "host", an index below `n`, or the library's default rule
 * (clops_default_device). Sets *host or *index. */
static int choose_device(const char *spec, size_t n, bool *host, size_t *index)
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
    int is_host = 0;
    unsigned i = 0;
    const clops_status st = clops_default_device(&is_host, &i);
    if (st != CLOPS_SUCCESS) return clops_fail_msg(st, "clops_default_device");
    *host = is_host;
    *index = i;
    return 0;
}

static int cl_setup(cl_env *e, const clops_device_info *info)
{
    cl_int err;
    e->info = *info;
    const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)info->platform, 0};
    e->context = clCreateContext(props, 1, &info->device, NULL, NULL, &err);
    if (!e->context) return cl_fail(err, "clCreateContext");
    e->queue = clCreateCommandQueue(e->context, info->device, CL_QUEUE_PROFILING_ENABLE, &err);
    if (!e->queue) return cl_fail(err, "clCreateCommandQueue(CL_QUEUE_PROFILING_ENABLE)");
    const char *src = copy_source;
    e->program = clCreateProgramWithSource(e->context, 1, &src, NULL, &err);
    if (!e->program) return cl_fail(err, "clCreateProgramWithSource");
    err = clBuildProgram(e->program, 1, &info->device, "", NULL, NULL);
    if (err != CL_SUCCESS) return cl_fail(err, "clBuildProgram(copy kernel)");
    e->copy = clCreateKernel(e->program, "bench_copy", &err);
    if (!e->copy) return cl_fail(err, "clCreateKernel(bench_copy)");
    e->empty = clCreateKernel(e->program, "bench_empty", &err);
    if (!e->empty) return cl_fail(err, "clCreateKernel(bench_empty)");
    size_t kmax = 1;
    err = clGetKernelWorkGroupInfo(e->copy, info->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof kmax, &kmax, NULL);
    if (err != CL_SUCCESS) return cl_fail(err, "clGetKernelWorkGroupInfo");
    e->copy_local = kmax < COPY_LOCAL_SIZE ? kmax : COPY_LOCAL_SIZE;
    const clops_status st = clops_context_create_from_cl(e->context, info->device, e->queue, &e->ctx);
    if (st != CLOPS_SUCCESS) return clops_fail_msg(st, "clops_context_create_from_cl");
    return 0;
}

static void cl_teardown(cl_env *e)
{
    clops_context_free(e->ctx);
    if (e->copy) clReleaseKernel(e->copy);
    if (e->empty) clReleaseKernel(e->empty);
    if (e->program) clReleaseProgram(e->program);
    if (e->queue) clReleaseCommandQueue(e->queue);
    if (e->context) clReleaseContext(e->context);
}

/* Grows a device buffer (e != NULL) and/or its host mirror (mirror != NULL) to
 * `need` bytes. Every page is written: the mirror with pseudo-random bytes,
 * copied to the device buffer; a device buffer without mirror with a pattern. */
static int grow(cl_env *e, cl_mem *m, size_t *cap, unsigned char **mirror, size_t need, uint64_t seed)
{
    if (need <= *cap) return 0;
    need = (size_t)round_up(need, 1u << 16);
    if (e && *m) clReleaseMemObject(*m);
    *m = NULL;
    *cap = 0;
    if (mirror) {
        free(*mirror);
        *mirror = xmalloc(need);
        if (!*mirror) return 1;
        fill_random(*mirror, need, seed);
    }
    if (e) {
        cl_int err;
        *m = clCreateBuffer(e->context, CL_MEM_READ_WRITE, need, NULL, &err);
        if (!*m) return cl_fail(err, "clCreateBuffer");
        const cl_uint pattern = 0xA5C3E10Fu;
        err = mirror ? clEnqueueWriteBuffer(e->queue, *m, CL_TRUE, 0, need, *mirror, 0, NULL, NULL)
                     : clEnqueueFillBuffer(e->queue, *m, &pattern, sizeof pattern, 0, need, 0, NULL, NULL);
        if (err == CL_SUCCESS) err = clFinish(e->queue);
        if (err != CL_SUCCESS) return cl_fail(err, "initialising a buffer");
    }
    *cap = need;
    return 0;
}

static void pool_free(pool *p)
{
    cl_mem *m[] = {&p->in, &p->idx, &p->out, &p->csrc, &p->cdst};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (*m[i]) clReleaseMemObject(*m[i]);
    free(p->h_in);
    free(p->h_idx);
    free(p->h_out);
    free(p->h_ref);
    free(p->h_csrc);
    free(p->h_cdst);
    memset(p, 0, sizeof *p);
}

/* Sizes every buffer of the pool for configuration c. */
static int pool_fit(pool *p, cl_env *e, const bench_config *c)
{
    size_t ref_cap = p->out_cap, cdst_cap = p->copy_cap;
    cl_mem none = NULL;
    if (grow(e, &p->in, &p->in_cap, &p->h_in, (size_t)c->in_bytes, 1)) return 1;
    if (grow(e, &p->idx, &p->idx_cap, &p->h_idx, (size_t)c->idx_bytes, 2)) return 1;
    if (grow(e, &p->out, &p->out_cap, &p->h_out, (size_t)c->out_bytes, 3)) return 1;
    if (grow(NULL, &none, &ref_cap, &p->h_ref, (size_t)c->out_bytes, 4)) return 1;
    /* The copies' buffers: device buffers on OpenCL, host memory on the host. */
    if (grow(e, &p->csrc, &p->copy_cap, e ? NULL : &p->h_csrc, (size_t)c->copy_bytes, 5)) return 1;
    if (grow(e, &p->cdst, &cdst_cap, e ? NULL : &p->h_cdst, (size_t)c->copy_bytes, 6)) return 1;
    return 0;
}

static double event_seconds(cl_event ev)
{
    cl_ulong t0 = 0, t1 = 0;
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
    return t1 > t0 ? 1e-9 * (double)(t1 - t0) : 0.0;
}

/* One run of the operator, finished; *seconds by profiling or (unpool) wall clock,
 * and *wall_s (when not NULL) the wall clock of execute + clFinish. */
static int cl_run_op(cl_env *e, clops_operator *op, const clops_buffers *b, bool wall, double *seconds,
                     double *wall_s)
{
    cl_event ev = NULL;
    const double t0 = now_seconds();
    const clops_status st = clops_operator_execute(op, b, 0, NULL, wall ? NULL : &ev);
    const cl_int err = clFinish(e->queue);
    const double t1 = now_seconds();
    if (st != CLOPS_SUCCESS) {
        if (ev) clReleaseEvent(ev);
        return clops_fail_msg(st, "clops_operator_execute");
    }
    if (err != CL_SUCCESS) return cl_fail(err, "clFinish");
    *seconds = wall ? t1 - t0 : event_seconds(ev);
    if (wall_s) *wall_s = t1 - t0;
    if (ev) clReleaseEvent(ev);
    return 0;
}

/* The copies: *seconds by profiling, or (wall) by the wall clock of enqueue + clFinish. */
static int cl_run_copy_kernel(cl_env *e, cl_mem src, cl_mem dst, uint64_t bytes, bool wall, double *seconds)
{
    const cl_ulong n = bytes / 16;
    const size_t global = (size_t)round_up((n + COPY_PER_ITEM - 1) / COPY_PER_ITEM, e->copy_local);
    cl_int err = clSetKernelArg(e->copy, 0, sizeof src, &src);
    if (err == CL_SUCCESS) err = clSetKernelArg(e->copy, 1, sizeof dst, &dst);
    if (err == CL_SUCCESS) err = clSetKernelArg(e->copy, 2, sizeof n, &n);
    if (err != CL_SUCCESS) return cl_fail(err, "clSetKernelArg(bench_copy)");
    cl_event ev;
    const double t0 = now_seconds();
    err = clEnqueueNDRangeKernel(e->queue, e->copy, 1, NULL, &global, &e->copy_local, 0, NULL, &ev);
    if (err != CL_SUCCESS) return cl_fail(err, "clEnqueueNDRangeKernel(bench_copy)");
    err = clFinish(e->queue);
    *seconds = wall ? now_seconds() - t0 : event_seconds(ev);
    clReleaseEvent(ev);
    return err == CL_SUCCESS ? 0 : cl_fail(err, "clFinish");
}

static int cl_run_copy_buffer(cl_env *e, cl_mem src, cl_mem dst, uint64_t bytes, bool wall, double *seconds)
{
    cl_event ev;
    const double t0 = now_seconds();
    cl_int err = clEnqueueCopyBuffer(e->queue, src, dst, 0, 0, (size_t)bytes, 0, NULL, &ev);
    if (err != CL_SUCCESS) return cl_fail(err, "clEnqueueCopyBuffer");
    err = clFinish(e->queue);
    *seconds = wall ? now_seconds() - t0 : event_seconds(ev);
    clReleaseEvent(ev);
    return err == CL_SUCCESS ? 0 : cl_fail(err, "clFinish");
}

/* Checks the device output against clops_host_run on the same input. */
static int cl_verify(cl_env *e, pool *p, const clops_operator_desc *desc, const bench_config *c, int *verified)
{
    cl_int err = clEnqueueReadBuffer(e->queue, p->out, CL_TRUE, 0, (size_t)c->out_bytes, p->h_out, 0, NULL, NULL);
    if (err != CL_SUCCESS) return cl_fail(err, "clEnqueueReadBuffer");
    const clops_host_buffers hb = {p->h_in, (size_t)c->in_bytes, p->h_idx, (size_t)c->idx_bytes, p->h_ref,
                                   (size_t)c->out_bytes};
    const clops_status st = clops_host_run(desc, &hb);
    if (st != CLOPS_SUCCESS) return clops_fail_msg(st, "clops_host_run (reference)");
    *verified = memcmp(p->h_out, p->h_ref, (size_t)c->out_bytes) == 0 ? 1 : -1;
    return 0;
}

static unsigned reps_for(const bench_args *a, const bench_config *c)
{
    return c->moved < SMALL_BYTES ? 3 * a->reps : a->reps;
}

static int cl_bench_config(cl_env *e, pool *p, const bench_args *a, const bench_config *c, bench_result *r)
{
    desc_storage d;
    make_desc(c, &d);
    if (pool_fit(p, e, c)) return 1;
    if (c->op == BENCH_UNPOOL) {
        make_indices(c, p->h_idx);
        const cl_int err = clEnqueueWriteBuffer(e->queue, p->idx, CL_TRUE, 0, (size_t)c->idx_bytes, p->h_idx, 0,
                                                NULL, NULL);
        if (err != CL_SUCCESS) return cl_fail(err, "clEnqueueWriteBuffer(indices)");
    }
    clops_operator *op = NULL;
    clops_status st = clops_operator_create(e->ctx, &d.op, &op);
    if (st != CLOPS_SUCCESS) return clops_fail_msg(st, "clops_operator_create");
    const clops_buffers bufs = {p->in, c->op == BENCH_UNPOOL ? p->idx : NULL, p->out};
    const unsigned reps = reps_for(a, c);
    double *t = calloc(4 * (size_t)reps, sizeof *t);
    int rc = t ? 0 : 1;
    r->cfg = *c;
    r->reps = reps;
    r->op_wall = c->op == BENCH_UNPOOL;
    double warm;
    /* Warm-up of each (first launch, page faults, caches), then the check. */
    if (!rc) rc = cl_run_op(e, op, &bufs, r->op_wall, &warm, NULL);
    if (!rc) rc = cl_run_copy_kernel(e, p->csrc, p->cdst, c->copy_bytes, r->op_wall, &warm);
    if (!rc) rc = cl_run_copy_buffer(e, p->csrc, p->cdst, c->copy_bytes, r->op_wall, &warm);
    if (!rc && c->out_bytes <= VERIFY_MAX_BYTES) rc = cl_verify(e, p, &d.op, c, &r->verified);
    for (unsigned i = 0; !rc && i < reps; i++) {
        rc = cl_run_op(e, op, &bufs, r->op_wall, &t[i], &t[3 * reps + i]);
        if (!rc) rc = cl_run_copy_kernel(e, p->csrc, p->cdst, c->copy_bytes, r->op_wall, &t[reps + i]);
        if (!rc) rc = cl_run_copy_buffer(e, p->csrc, p->cdst, c->copy_bytes, r->op_wall, &t[2 * reps + i]);
    }
    if (!rc) {
        r->op_s = median(t, reps);
        r->op_min_s = t[0];
        r->op_max_s = t[reps - 1];
        r->ck_s = median(t + reps, reps);
        r->cb_s = median(t + 2 * reps, reps);
        r->op_wall_s = median(t + 3 * reps, reps);
    }
    free(t);
    clops_operator_free(op);
    return rc;
}

/* ---- host path ------------------------------------------------------------------------- */

/* Through a volatile pointer, so the compiler cannot drop or merge the copies. */
static void *(*volatile bench_memcpy)(void *, const void *, size_t) = memcpy;

static int host_run_op(clops_operator *op, const clops_host_buffers *hb, double *seconds)
{
    const double t0 = now_seconds();
    const clops_status st = clops_operator_execute_host(op, hb);
    *seconds = now_seconds() - t0;
    return st == CLOPS_SUCCESS ? 0 : clops_fail_msg(st, "clops_operator_execute_host");
}

static double host_run_memcpy(pool *p, uint64_t bytes)
{
    const double t0 = now_seconds();
    bench_memcpy(p->h_cdst, p->h_csrc, (size_t)bytes);
    return now_seconds() - t0;
}

static int host_bench_config(clops_context *ctx, pool *p, const bench_args *a, const bench_config *c,
                             bench_result *r)
{
    desc_storage d;
    make_desc(c, &d);
    if (pool_fit(p, NULL, c)) return 1;
    if (c->op == BENCH_UNPOOL) make_indices(c, p->h_idx);
    clops_operator *op = NULL;
    clops_status st = clops_operator_create(ctx, &d.op, &op);
    if (st != CLOPS_SUCCESS) return clops_fail_msg(st, "clops_operator_create");
    const clops_host_buffers hb = {p->h_in, (size_t)c->in_bytes, p->h_idx, (size_t)c->idx_bytes, p->h_out,
                                   (size_t)c->out_bytes};
    const unsigned reps = reps_for(a, c);
    double *t = calloc(2 * (size_t)reps, sizeof *t);
    int rc = t ? 0 : 1;
    r->cfg = *c;
    r->reps = reps;
    r->op_wall = true;
    double warm;
    if (!rc) rc = host_run_op(op, &hb, &warm);
    if (!rc) (void)host_run_memcpy(p, c->copy_bytes);
    for (unsigned i = 0; !rc && i < reps; i++) {
        rc = host_run_op(op, &hb, &t[i]);
        t[reps + i] = host_run_memcpy(p, c->copy_bytes);
    }
    if (!rc) {
        r->op_s = median(t, reps);
        r->op_min_s = t[0];
        r->op_max_s = t[reps - 1];
        r->ck_s = median(t + reps, reps);
        r->cb_s = 0;
        r->op_wall_s = r->op_s;
    }
    free(t);
    clops_operator_free(op);
    return rc;
}

/* ---- latency -------------------------------------------------------------------------- */

typedef struct latency_result {
    bench_op op;
    const char *what;       /* e.g. "DCR b2 FLOAT32 1x8x2x3" */
    double op_profiled_s;   /* 0 when not profiled (MaxUnpooling, host) */
    double op_wall_s;       /* execute + clFinish */
    double empty_profiled_s, empty_wall_s; /* empty kernel (OpenCL); host: memcpy of the same bytes */
    unsigned reps;
} latency_result;

static int cl_run_empty(cl_env *e, double *profiled, double *wall)
{
    const size_t one = 1;
    cl_event ev;
    const double t0 = now_seconds();
    cl_int err = clEnqueueNDRangeKernel(e->queue, e->empty, 1, NULL, &one, &one, 0, NULL, &ev);
    if (err != CL_SUCCESS) return cl_fail(err, "clEnqueueNDRangeKernel(bench_empty)");
    err = clFinish(e->queue);
    *wall = now_seconds() - t0;
    *profiled = event_seconds(ev);
    clReleaseEvent(ev);
    return err == CL_SUCCESS ? 0 : cl_fail(err, "clFinish");
}

/* The specification's example, FLOAT32, b = 2: op vs an empty kernel, interleaved. */
static int bench_latency(cl_env *e, clops_context *host_ctx, pool *p, const bench_args *a, bench_op which,
                         latency_result *out)
{
    bench_config c;
    memset(&c, 0, sizeof c);
    c.op = which;
    c.variant = 0;
    c.width = 4;
    c.block = which == BENCH_UNPOOL ? 0 : 2;
    c.target = 0;
    make_shapes(&c);
    desc_storage d;
    make_desc(&c, &d);
    if (pool_fit(p, e, &c)) return 1;
    if (which == BENCH_UNPOOL) {
        make_indices(&c, p->h_idx);
        if (e) {
            const cl_int err = clEnqueueWriteBuffer(e->queue, p->idx, CL_TRUE, 0, (size_t)c.idx_bytes, p->h_idx, 0,
                                                    NULL, NULL);
            if (err != CL_SUCCESS) return cl_fail(err, "clEnqueueWriteBuffer(indices)");
        }
    }
    clops_operator *op = NULL;
    clops_status st = clops_operator_create(e ? e->ctx : host_ctx, &d.op, &op);
    if (st != CLOPS_SUCCESS) return clops_fail_msg(st, "clops_operator_create");
    const unsigned reps = 5 * (a->reps < 7 ? 7 : a->reps);
    double *t = calloc(4 * (size_t)reps, sizeof *t);
    int rc = t ? 0 : 1;
    const clops_buffers bufs = {e ? p->in : NULL, e && which == BENCH_UNPOOL ? p->idx : NULL, e ? p->out : NULL};
    const clops_host_buffers hb = {p->h_in, (size_t)c.in_bytes, p->h_idx, (size_t)c.idx_bytes, p->h_out,
                                   (size_t)c.out_bytes};
    const bool profiled = e && which != BENCH_UNPOOL;
    double w0, w1;
    for (unsigned i = 0; !rc && i <= reps; i++) { /* run 0 is the warm-up */
        const unsigned k = i ? i - 1 : 0;
        if (e) {
            rc = cl_run_op(e, op, &bufs, true, &t[reps + k], NULL);
            if (!rc && profiled) rc = cl_run_op(e, op, &bufs, false, &t[k], NULL);
            if (!rc) rc = cl_run_empty(e, &t[2 * reps + k], &t[3 * reps + k]);
        } else {
            rc = host_run_op(op, &hb, &t[reps + k]);
            w0 = now_seconds();
            bench_memcpy(p->h_cdst, p->h_csrc, (size_t)c.copy_bytes);
            w1 = now_seconds();
            t[3 * reps + k] = w1 - w0;
        }
    }
    if (!rc) {
        static char what[3][64];
        snprintf(what[which], sizeof what[which], "%s w4 %ux%ux%ux%u", variant_name(&c), c.in[0], c.in[1], c.in[2],
                 c.in[3]);
        out->op = which;
        out->what = what[which];
        out->reps = reps;
        out->op_profiled_s = profiled ? median(t, reps) : 0;
        out->op_wall_s = median(t + reps, reps);
        out->empty_profiled_s = e ? median(t + 2 * reps, reps) : 0;
        out->empty_wall_s = median(t + 3 * reps, reps);
    }
    free(t);
    clops_operator_free(op);
    return rc;
}

/* ---- output ----------------------------------------------------------------------------- */

static double gbps(uint64_t bytes, double seconds)
{
    return seconds > 0 ? (double)bytes / seconds / 1e9 : 0.0;
}

static double best_copy_gbps(const bench_result *r)
{
    const double k = gbps(2 * r->cfg.copy_bytes, r->ck_s), b = gbps(2 * r->cfg.copy_bytes, r->cb_s);
    return k > b ? k : b;
}

static void shape_str(char *buf, size_t n, const uint32_t s[4])
{
    snprintf(buf, n, "%ux%ux%ux%u", s[0], s[1], s[2], s[3]);
}

/* "96 B", "64.0 KiB", "16.0 MiB". */
static void human_bytes(char *buf, size_t n, uint64_t bytes)
{
    if (bytes < 1024) snprintf(buf, n, "%llu B", (unsigned long long)bytes);
    else if (bytes < (1u << 20)) snprintf(buf, n, "%.1f KiB", (double)bytes / 1024.0);
    else snprintf(buf, n, "%.1f MiB", (double)bytes / MIB);
}

static void print_table_header(bool host)
{
    printf("%-12s %-8s %5s %5s %-16s %10s %10s %9s %9s %9s %6s\n", "op", "order", "width", "block", "input shape",
           "size", "moved", "op GB/s", host ? "memcpy" : "copy-kern", host ? "-" : "copyBuf", "ratio");
}

static void print_row(const bench_result *r, bool host)
{
    const bench_config *c = &r->cfg;
    char shape[48], block[8], ck[16], cb[16];
    shape_str(shape, sizeof shape, c->in);
    snprintf(block, sizeof block, c->block ? "%u" : "-", c->block);
    const uint64_t copy_moved = 2 * c->copy_bytes;
    snprintf(ck, sizeof ck, "%.3f", gbps(copy_moved, r->ck_s));
    snprintf(cb, sizeof cb, host ? "-" : "%.3f", gbps(copy_moved, r->cb_s));
    char size[24], moved[24];
    human_bytes(size, sizeof size, c->in_bytes > c->out_bytes ? c->in_bytes : c->out_bytes);
    human_bytes(moved, sizeof moved, c->moved);
    const double best = best_copy_gbps(r), opg = gbps(c->moved, r->op_s);
    printf("%-12s %-8s %5u %5s %-16s %10s %10s %9.3f %9s %9s %6.2f%s\n", op_names[c->op], variant_name(c),
           c->width, block, shape, size, moved, opg, ck, cb,
           best > 0 ? opg / best : 0.0, r->verified < 0 ? "  WRONG RESULT" : r->op_wall && !host ? " *" : "");
    fflush(stdout);
}

static void print_latency_table(const latency_result *l, size_t n, bool host)
{
    printf("\n# latency, specification-sized tensors (FLOAT32, b=2; MaxUnpooling INT64 indices), medians of %u\n",
           n ? l[0].reps : 0);
    if (host) {
        printf("%-12s %-18s %12s %14s\n", "op", "what", "op wall us", "memcpy wall us");
        for (size_t i = 0; i < n; i++)
            printf("%-12s %-18s %12.2f %14.2f\n", op_names[l[i].op], l[i].what, 1e6 * l[i].op_wall_s,
                   1e6 * l[i].empty_wall_s);
        return;
    }
    printf("%-12s %-18s %14s %14s %12s %14s %10s\n", "op", "what", "op profiled us", "empty prof. us", "op wall us",
           "empty wall us", "wall ratio");
    for (size_t i = 0; i < n; i++) {
        char prof[32];
        snprintf(prof, sizeof prof, l[i].op_profiled_s > 0 ? "%.2f" : "-", 1e6 * l[i].op_profiled_s);
        printf("%-12s %-18s %14s %14.2f %12.2f %14.2f %10.2f\n", op_names[l[i].op], l[i].what, prof,
               1e6 * l[i].empty_profiled_s, 1e6 * l[i].op_wall_s, 1e6 * l[i].empty_wall_s,
               l[i].empty_wall_s > 0 ? l[i].op_wall_s / l[i].empty_wall_s : 0.0);
    }
}

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        const unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') printf("\\%c", ch);
        else if (ch < 0x20) printf("\\u%04x", ch);
        else putchar(ch);
    }
    putchar('"');
}

static void json_shape(const char *key, const uint32_t s[4])
{
    printf("\"%s\": [%u, %u, %u, %u]", key, s[0], s[1], s[2], s[3]);
}

/* A number, or null for "not measured". */
static void json_num(const char *key, double v, bool present)
{
    if (present) printf("\"%s\": %.9g", key, v);
    else printf("\"%s\": null", key);
}

static void print_json(const bench_args *a, bool host, const cl_env *e, const bench_result *res, size_t nres,
                       const latency_result *lat, size_t nlat, double elapsed)
{
    printf("{\n  \"tool\": \"clops bench\",\n  \"clops_version\": ");
    json_string(clops_version_string());
    printf(",\n  \"device\": {\"backend\": \"%s\", \"name\": ", host ? "host" : "opencl");
    json_string(host ? "host" : e->info.device_name);
    printf(", \"platform\": ");
    json_string(host ? "" : e->info.platform_name);
    printf(", \"version\": ");
    json_string(host ? "" : e->info.device_version);
    printf(", \"index\": ");
    if (host) printf("null");
    else printf("%u", e->info.index);
    printf("},\n  \"reps\": %u,\n  \"reps_below_1MiB_moved\": %u,\n  \"elapsed_seconds\": %.3f,\n", a->reps,
           3 * a->reps, elapsed);
    printf("  \"method\": {\"bytes\": \"read + written: input + output; MaxUnpooling input + indices + output; "
           "copies 2 x copy_bytes\", \"timing\": \"%s\", \"baselines\": \"%s\", \"statistic\": \"median of "
           "interleaved repetitions after one warm-up of each\", \"ratio\": \"op GB/s / best baseline GB/s\", "
           "\"op_wall_seconds\": \"wall clock of execute + clFinish in the same runs\"},\n",
           host ? "wall clock around clops_operator_execute_host and memcpy"
                : "profiled: OpenCL profiling (START..END) of the event from clops_operator_execute and of each "
                  "baseline's command; wall (MaxUnpooling: several commands): wall clock of "
                  "execute + clFinish, and of each baseline's enqueue + clFinish",
           host ? "memcpy"
                : "bench_copy kernel (uint4, " STR(COPY_PER_ITEM) " consecutive per work-item) and clEnqueueCopyBuffer");
    printf("  \"results\": [");
    for (size_t i = 0; i < nres; i++) {
        const bench_result *r = &res[i];
        const bench_config *c = &r->cfg;
        const double opg = gbps(c->moved, r->op_s), best = best_copy_gbps(r);
        printf("%s\n    {\"op\": \"%s\", \"op_short\": \"%s\", ", i ? "," : "", op_names[c->op], op_short[c->op]);
        if (c->op == BENCH_UNPOOL)
            printf("\"order\": null, \"index_type\": \"%s\", \"indices\": \"%s\", \"block\": null, ",
                   clops_data_type_name(c->index_type), c->variant & UNPOOL_SCATTERED ? "scattered" : "pooling");
        else
            printf("\"order\": \"%s\", \"index_type\": null, \"block\": %u, ", variant_name(c), c->block);
        printf("\"width\": %u, \"data_type\": \"%s\", \"size_requested\": ", c->width, clops_data_type_name(c->type));
        if (c->target) printf("%llu, ", (unsigned long long)c->target);
        else printf("\"spec\", ");
        json_shape("input_shape", c->in);
        printf(", ");
        if (c->op == BENCH_UNPOOL) json_shape("indices_shape", c->in);
        else printf("\"indices_shape\": null");
        printf(", ");
        json_shape("output_shape", c->out);
        printf(",\n     \"input_bytes\": %llu, \"indices_bytes\": %llu, \"output_bytes\": %llu, \"bytes_moved\": %llu, "
               "\"copy_bytes\": %llu, \"reps\": %u, \"timing\": \"%s\",\n     ",
               (unsigned long long)c->in_bytes, (unsigned long long)c->idx_bytes, (unsigned long long)c->out_bytes,
               (unsigned long long)c->moved, (unsigned long long)c->copy_bytes, r->reps,
               r->op_wall ? "wall" : "profiled");
        json_num("op_seconds", r->op_s, true);
        printf(", ");
        json_num("op_seconds_min", r->op_min_s, true);
        printf(", ");
        json_num("op_seconds_max", r->op_max_s, true);
        printf(", ");
        json_num("op_gbps", opg, true);
        printf(", ");
        json_num("op_wall_seconds", r->op_wall_s, true);
        printf(", ");
        json_num("op_wall_gbps", gbps(c->moved, r->op_wall_s), true);
        printf(",\n     ");
        json_num("copy_kernel_gbps", gbps(2 * c->copy_bytes, r->ck_s), !host);
        printf(", ");
        json_num("copy_buffer_gbps", gbps(2 * c->copy_bytes, r->cb_s), !host);
        printf(", ");
        json_num("memcpy_gbps", gbps(2 * c->copy_bytes, r->ck_s), host);
        printf(", ");
        json_num("best_copy_gbps", best, true);
        printf(", ");
        json_num("ratio", best > 0 ? opg / best : 0, best > 0);
        printf(", \"verified\": %s}", r->verified > 0 ? "true" : r->verified < 0 ? "false" : "null");
    }
    printf("\n  ],\n  \"latency\": [");
    for (size_t i = 0; i < nlat; i++) {
        const latency_result *l = &lat[i];
        printf("%s\n    {\"op\": \"%s\", \"what\": ", i ? "," : "", op_names[l->op]);
        json_string(l->what);
        printf(", \"reps\": %u, ", l->reps);
        json_num("op_profiled_seconds", l->op_profiled_s, l->op_profiled_s > 0);
        printf(", ");
        json_num("op_wall_seconds", l->op_wall_s, true);
        printf(", ");
        json_num("empty_kernel_profiled_seconds", l->empty_profiled_s, !host);
        printf(", ");
        json_num(host ? "memcpy_wall_seconds" : "empty_kernel_wall_seconds", l->empty_wall_s, true);
        printf("}");
    }
    printf("\n  ]\n}\n");
}

/* ---- main --------------------------------------------------------------------------------- */

int clops_bench_main(int argc, char **argv)
{
    bench_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc;
    if (a.help) {
        print_help(stdout);
        return 0;
    }

    size_t ndev = 0;
    clops_device_info *infos = NULL;
    clops_status st = clops_device_list(NULL, 0, &ndev);
    if (st != CLOPS_SUCCESS) return clops_fail_msg(st, "clops_device_list");
    if (ndev) {
        infos = calloc(ndev, sizeof *infos);
        if (!infos) return 1;
        st = clops_device_list(infos, ndev, &ndev);
        if (st != CLOPS_SUCCESS) {
            free(infos);
            return clops_fail_msg(st, "clops_device_list");
        }
    }
    bool host = false;
    size_t dev = 0;
    rc = choose_device(a.device, ndev, &host, &dev);
    cl_env e;
    memset(&e, 0, sizeof e);
    clops_context *host_ctx = NULL;
    if (!rc && host) {
        st = clops_context_create_host(&host_ctx);
        if (st != CLOPS_SUCCESS) rc = clops_fail_msg(st, "clops_context_create_host");
    } else if (!rc) {
        rc = cl_setup(&e, &infos[dev]);
    }
    free(infos);

    size_t ncfg = 0;
    bench_config *cfgs = rc ? NULL : make_configs(&a, &ncfg);
    bench_result *res = cfgs ? calloc(ncfg ? ncfg : 1, sizeof *res) : NULL;
    if (!rc && !res) rc = 1;
    pool p;
    memset(&p, 0, sizeof p);
    progress prog = {isatty(fileno(stderr)) != 0, false, now_seconds()};
    latency_result lat[BENCH_NUM_OPS];
    size_t nres = 0, nlat = 0;
    int wrong = 0;

    if (!rc && !a.json) {
        if (host)
            printf("# clops %s bench on the host backend; baseline memcpy; wall clock; medians of %u reps "
                   "(%u below 1 MiB moved)\n",
                   clops_version_string(), a.reps, 3 * a.reps);
        else
            printf("# clops %s bench on device %u: %s (%s, %s)\n# op and baselines (copy kernel, clEnqueueCopyBuffer "
                   "of the same bytes) timed by event profiling;\n# * = MaxUnpooling: several commands, "
                   "so it and its baselines by wall clock (enqueue + clFinish)\n# medians "
                   "of %u interleaved reps (%u below 1 MiB moved); GB/s = (bytes read + written) / s; ratio = op / "
                   "best copy\n",
                   clops_version_string(), e.info.index, e.info.device_name, e.info.platform_name,
                   e.info.device_version, a.reps, 3 * a.reps);
        print_table_header(host);
    }
    for (size_t i = 0; !rc && i < ncfg; i++) {
        const bench_config *c = &cfgs[i];
        const uint64_t biggest = c->idx_bytes > c->copy_bytes ? c->idx_bytes : c->copy_bytes;
        if (!host && (biggest > e.info.max_alloc_bytes || c->in_bytes > e.info.max_alloc_bytes ||
                      c->out_bytes > e.info.max_alloc_bytes)) {
            progress_clear(&prog);
            fprintf(stderr, "clops bench: skipping %s %s w%u at %llu bytes: a buffer exceeds the device's maximum "
                            "allocation (%llu bytes)\n",
                    op_names[c->op], variant_name(c), c->width, (unsigned long long)c->moved,
                    (unsigned long long)e.info.max_alloc_bytes);
            continue;
        }
        progress_show(&prog, i, ncfg + 1, c);
        bench_result *r = &res[nres];
        rc = host ? host_bench_config(host_ctx, &p, &a, c, r) : cl_bench_config(&e, &p, &a, c, r);
        if (rc) break;
        nres++;
        if (r->verified < 0) wrong++;
        progress_clear(&prog);
        if (!a.json) print_row(r, host);
        if (r->verified < 0)
            fprintf(stderr, "clops bench: %s %s w%u b%u %ux%ux%ux%u: the output differs from the host reference\n",
                    op_names[c->op], variant_name(c), c->width, c->block, c->in[0], c->in[1], c->in[2], c->in[3]);
    }
    for (int o = 0; !rc && o < BENCH_NUM_OPS; o++) {
        if (!a.ops[o]) continue;
        progress_show(&prog, ncfg, ncfg + 1, NULL);
        rc = bench_latency(host ? NULL : &e, host_ctx, &p, &a, (bench_op)o, &lat[nlat]);
        if (!rc) nlat++;
    }
    progress_clear(&prog);
    if (!rc) {
        if (a.json) print_json(&a, host, &e, res, nres, lat, nlat, now_seconds() - prog.start);
        else print_latency_table(lat, nlat, host);
    }
    if (!rc && !a.json)
        printf("# %zu configurations in %.1f s\n", nres, now_seconds() - prog.start);
    pool_free(&p);
    free(res);
    free(cfgs);
    clops_context_free(host_ctx);
    if (!host) cl_teardown(&e);
    if (!rc && wrong) {
        fprintf(stderr, "clops bench: %d configuration(s) gave a wrong result\n", wrong);
        rc = 1;
    }
    return rc;
}
