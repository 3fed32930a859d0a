/*
 * bench_internal.h - what the files of `clops bench` share (bench.h has the
 * command; the method is in bench.c's opening comment and notes/bench.md):
 *   bench.c          configurations (shapes, descriptors, MaxUnpooling's indices),
 *                    the timed runs, latency, main
 *   bench_options.c  the option table, parsing, --help, the device choice
 *   bench_env.c      timing and data helpers, the progress line, the OpenCL
 *                    setup (copy baseline, empty kernel) and the buffer pool
 *   bench_report.c   the table and the JSON document
 */
#ifndef CLOPS_TOOLS_BENCH_INTERNAL_H
#define CLOPS_TOOLS_BENCH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <clops/clops.h>

#define MIB (1024.0 * 1024.0)
#define COPY_PER_ITEM 16
#define COPY_LOCAL_SIZE 256
#define STR_(x) #x
#define STR(x) STR_(x)

/* MaxUnpooling variants: UINT32 (else INT64) indices; scattered (else pooling-
 * shaped) indices, input position k of a plane going to k * SCATTER_STEP modulo
 * the output plane (4x the input plane): distinct, because the step is a prime
 * larger than any plane made here, and spread over the whole plane. */
#define UNPOOL_U32 1
#define UNPOOL_SCATTERED 2
/* Overlapping (else 2x2 windows): the indices of a real max_pool2d(3, 2, 1) (the
 * first maximum of each 3x3 window, stride 2, padding 1) of pseudo-random values
 * with ties, so neighbouring windows share maxima. */
#define UNPOOL_OVERLAP 4
#define UNPOOL_VARIANTS 6
#define SCATTER_STEP UINT64_C(2654435761)

/* ---- options (bench_options.c) ---------------------------------------------------------- */

#define MAX_LIST 32

typedef enum bench_op { BENCH_D2S, BENCH_S2D, BENCH_UNPOOL, BENCH_NUM_OPS } bench_op;

/* The operators' names, and their names in --ops and the JSON (bench_options.c). */
extern const char *const op_names[BENCH_NUM_OPS];
extern const char *const op_short[BENCH_NUM_OPS];

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
    /* --planes: MaxUnpooling inputs {N, C, H, W} of many small planes (outputs
     * {N, C, 2H, 2W}), each also timed on a fresh operator (bench_config.first) */
    uint32_t planes[MAX_LIST][4];
    unsigned num_planes;
    bool planes_given;
} bench_args;

/* Parses the command line into `a` (defaults filled in); 0, or 2 after a usage message. */
int parse_args(int argc, char **argv, bench_args *a);
void print_help(FILE *f);
/* The device to use: "host", an index below `n`, or the library's default device for
 * host data (clops_default_device_for_host_data). Sets *host or *index; 0, 1 on a failure,
 * 2 on a usage error. */
int choose_device(const char *spec, size_t n, bool *host, size_t *index);

/* ---- configurations and results (bench.c) ---------------------------------------------- */

typedef struct bench_config {
    bench_op op;
    int variant; /* d2s/s2d: clops_depth_space_order; unpool: UNPOOL_U32 | UNPOOL_SCATTERED | UNPOOL_OVERLAP bits */
    unsigned width;
    unsigned block; /* 0 for unpool */
    uint64_t target; /* requested size of the largest tensor; 0 = the specification's example */
    bool fixed;      /* unpool: the shape is --planes' (in[] given), not made from target */
    bool first;      /* each repetition a fresh operator's first execution (--planes rows) */
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

typedef struct latency_result {
    bench_op op;
    const char *what;       /* e.g. "DCR b2 FLOAT32 1x8x2x3" */
    double op_profiled_s;   /* 0 when not profiled (MaxUnpooling, host) */
    double op_wall_s;       /* execute + clFinish */
    double empty_profiled_s, empty_wall_s; /* empty kernel (OpenCL); host: memcpy of the same bytes */
    unsigned reps;
} latency_result;

/* "DCR"/"CRD", or MaxUnpooling's "pool/i64" ... "ovl/u32" ("scat/i64 1st" for a
 * fresh operator's first execution). */
const char *variant_name(const bench_config *c);

/* ---- helpers, progress, OpenCL setup and buffers (bench_env.c) -------------------------- */

double now_seconds(void);
/* Median of v[0..n) (sorts v). */
double median(double *v, unsigned n);
uint64_t round_up(uint64_t x, uint64_t m);
/* splitmix64: deterministic pseudo-random data and index positions. */
uint64_t mix64(uint64_t x);
/* malloc that says on stderr when it fails. */
void *xmalloc(size_t bytes);

typedef struct progress {
    bool on;
    bool shown;
    double start;
} progress;
void progress_clear(progress *p);
/* Shows configuration `done` of `total` (c == NULL: the latency runs). */
void progress_show(progress *p, size_t done, size_t total, const bench_config *c);

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

/* "clops bench: what failed (err)" on stderr; returns 1. */
int cl_fail(cl_int err, const char *what);
/* "clops bench: what: STATUS: message" on stderr; returns 1. */
int clops_fail_msg(clops_status st, const char *what);
/* The context, profiling queue, baseline kernels and clops context on `info`'s device. */
int cl_setup(cl_env *e, const clops_device_info *info);
void cl_teardown(cl_env *e);
void pool_free(pool *p);
/* Sizes every buffer of the pool for configuration c (e == NULL: host memory only). */
int pool_fit(pool *p, cl_env *e, const bench_config *c);
/* CL_PROFILING_COMMAND_START..END of a finished event, in seconds. */
double event_seconds(cl_event ev);

/* ---- output (bench_report.c) ------------------------------------------------------------ */

void print_table_header(bool host);
void print_row(const bench_result *r, bool host);
void print_latency_table(const latency_result *l, size_t n, bool host);
void print_json(const bench_args *a, bool host, const cl_env *e, const bench_result *res, size_t nres,
                const latency_result *lat, size_t nlat, double elapsed);

#endif /* CLOPS_TOOLS_BENCH_INTERNAL_H */
