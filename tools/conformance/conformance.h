/*
 * conformance.h - `clops conformance`: every operator, order, type, block size,
 * index type and layout on one device, checked against a plain reference.
 *
 * conformance.c builds and runs the cases through the public API,
 * conformance_ref.c is the per-element reference (it shares no code with the
 * kernels or the host kernels), conformance_report.c prints the table and
 * writes the JSON report.
 */
#ifndef CLOPS_TOOLS_CONFORMANCE_H
#define CLOPS_TOOLS_CONFORMANCE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <clops/clops.h>

#ifdef __cplusplus
extern "C" {
#endif

/*! clops_conformance_main() : `clops conformance [--device N|host|all] [--quick]
 *  [--json FILE]` (argv[0] is "conformance"). Progress on stderr, the table and
 *  the final line "N passed, M failed" on stdout.
 *  @return 0 when nothing failed, 1 when a check failed or the run could not
 *  be made, 2 on a usage error. */
int clops_conformance_main(int argc, char **argv);

/* ---- the reference (conformance_ref.c) ----------------------------------------- */

/* A tensor as the reference sees it: sizes and strides in elements. */
typedef struct conf_layout {
    uint32_t sizes[4];
    uint64_t strides[4];
} conf_layout;

/* Packed NCHW strides for `sizes`. */
void conf_packed(conf_layout *t, uint32_t n, uint32_t c, uint32_t h, uint32_t w);
/* Elements of the tensor, and elements its strides span (0 when empty). */
uint64_t conf_count(const conf_layout *t);
uint64_t conf_span(const conf_layout *t);

/* DepthToSpace or SpaceToDepth by the specification's formulas, one output
 * element at a time. compare == false: writes every element of y into ydata.
 * compare == true: compares ydata with what it should hold and returns the
 * number of wrong elements, the first one's element offset in *first_bad. */
uint64_t conf_ref_depth_space(clops_operator_type op, clops_depth_space_order order, uint32_t block,
                              const conf_layout *x, const void *xdata, const conf_layout *y, void *ydata,
                              size_t esize, bool compare, uint64_t *first_bad);

/* MaxUnpooling: zero every output element, then Y.flat[I.flat[k]] = X.flat[k]
 * for every k in row-major order. Returns the number of bad indices (negative,
 * or at or past the output's element count); with bad ones, writes nothing
 * unless `partial` (then every good index is applied). */
/* per_plane: indices count within their (n, c) output plane (CLOPS_INDICES_PER_PLANE);
 * bad ones are negative or at or past H_out * W_out. */
uint64_t conf_ref_max_unpooling(const conf_layout *x, const void *xdata, const conf_layout *ind, const void *idata,
                                clops_data_type index_type, const conf_layout *y, void *ydata, size_t esize,
                                bool partial, bool per_plane);

/* ---- cases (conformance.c) and plan coverage (conformance_cover.c) ------------------ */

/* One case: an operator on one layout of one shape. */
typedef struct conf_case {
    clops_operator_type op;
    clops_depth_space_order order;
    clops_data_type type;
    uint32_t block;
    clops_data_type index_type; /* MaxUnpooling */
    const char *layout;         /* "packed", "NHWC", "padded", "broadcast input" */
    const char *shape;          /* "odd sizes", "one element", ... */
    const char *indices;        /* "pooling", "scattered", "repeated", "out of range", ... */
    conf_layout x, ind, y;
    bool packed;                    /* pass NULL strides (packed NCHW) */
    bool per_plane;                 /* MaxUnpooling: CLOPS_INDICES_PER_PLANE */
    const void *input, *expected;   /* the specification's examples: fixed data */
    const void *index_data;         /* fixed indices over ind's span (conformance_cover.c), or NULL */
} conf_case;

typedef struct conf_cover conf_cover;
typedef struct conf_report conf_report;
typedef struct conf_programs conf_programs;

typedef struct conf_run {
    clops_context *ctx;
    bool opencl;
    conf_report *report;
    uint64_t seed;
    size_t esize;
    int row, type_index;
    conf_cover *cover; /* the device's plan coverage (NULL: not tracked) */
    conf_programs *programs; /* counting mode: each case names its program here and runs nothing */
    bool counting;     /* (programs may be NULL: out of memory) */
} conf_run;

/* Runs one case on host memory and, on an OpenCL device, on cl_mem buffers. */
void conf_run_case(conf_run *run, const conf_case *k);

/* The device's plan coverage: what each group (row, type) launched, and the
 * kernels the device's plan rules could take (by the device type clops plans
 * for, ctx->info.type). NULL on the host backend. */
conf_cover *conf_cover_new(clops_context *ctx);
void conf_cover_free(conf_cover *c);
/* After an execution of `op` in group (run->row, run->type_index). */
void conf_cover_record(conf_run *run, clops_operator *op);
/* The cases that reach every MaxUnpooling plan: serial (the small cases are
 * elsewhere), clear+serial, windows, pool, planes, the general path, per-plane
 * and flat, packed and strided, out-of-range and duplicate indices. */
void conf_cover_unpool_cases(conf_run *run, clops_data_type type, clops_data_type index_type);
/* DepthToSpace/SpaceToDepth on rows past 8 KiB (CPUs move them in 1 KiB pieces,
 * shorter ones whole: lib/ops/depth_space.c chunk_positions), packed (the tile
 * loop on GPUs, vectors on CPUs for 8-byte elements) and NHWC (the element loop). */
void conf_cover_depth_space_cases(conf_run *run, clops_operator_type op, clops_depth_space_order order,
                                  clops_data_type type);
/* Ends the device: a coverage check per group (failing, naming the kernels the
 * device could take that no case reached), the lines for the report and the
 * JSON "coverage" object. */
void conf_cover_finish(conf_run *run);

/* ---- the programs a run will build (conformance_count.c) ---------------------------- */

/* A count on ctx's device (an OpenCL context); NULL when out of memory. */
conf_programs *conf_programs_new(clops_context *ctx);
void conf_programs_free(conf_programs *c);
/* In counting mode, each case: the program its operator's own plan asks for first. */
void conf_programs_case(conf_programs *c, const clops_operator_desc *desc);
/* After every case was counted: looks each distinct program up in the disk cache
 * (building nothing), prints "conformance: N of M programs to build on device D
 * ..." on stderr and puts the numbers into the report (conf_report_programs). */
void conf_programs_finish(conf_programs *c, conf_report *report, const clops_device_info *info);

/* ---- results (conformance_report.c) --------------------------------------------- */

#define CONF_ROWS 5 /* DepthToSpace DCR, CRD, SpaceToDepth DCR, CRD, MaxUnpooling */
#define CONF_TYPES 15

extern const clops_data_type conf_types[CONF_TYPES];
const char *conf_row_name(int row);

conf_report *conf_report_new(const char *command_line, bool quick);
void conf_report_free(conf_report *r);
/* Starts a device's section: `info` NULL for the host backend. */
void conf_report_begin_device(conf_report *r, const clops_device_info *info);
/* One check's outcome: row (CONF_ROWS) and type index (CONF_TYPES); `what`
 * names the case and `detail` says what went wrong (failures only). */
void conf_report_check(conf_report *r, int row, int type_index, bool passed, const char *what, const char *detail);
/* A case that could not run here (not enough memory, ...): not a failure. */
void conf_report_skip(conf_report *r, const char *what, const char *why);
/* An operator on an OpenCL device that runs on the host instead (counted; the
 * first ones listed as "host_fallbacks" with the library's reason). */
void conf_report_fallback(conf_report *r, const char *what, const char *why);
/* The device's plan coverage: `json` goes into the device's JSON object as
 * "coverage" (owned from now on), `text` is printed after the table. */
struct cJSON;
void conf_report_coverage(conf_report *r, struct cJSON *json, const char *text);
/* The device's programs: `total` distinct ones its cases ask for, `to_build` of them
 * to compile (0 without a compiler), `not_cached` not in the disk cache, and the
 * count's time: the device's JSON object's "programs". */
void conf_report_programs(conf_report *r, size_t total, size_t to_build, size_t not_cached, double seconds);
/* Prints the device's table to `out` and closes its section. */
void conf_report_end_device(conf_report *r, FILE *out);
/* Totals over every device. */
unsigned long long conf_report_passed(const conf_report *r);
unsigned long long conf_report_failed(const conf_report *r);
/* Opens the JSON report FILE before the run (the library's file writer,
 * lib/store/file.c), so that a target that cannot take it is refused at once;
 * false with a message on stderr. */
bool conf_report_open_json(conf_report *r, const char *path);
/* Writes the JSON report to the file opened above and commits it; false (with a
 * message on stderr) if it cannot. conf_report_free abandons an unwritten one. */
bool conf_report_write_json(conf_report *r);

#ifdef __cplusplus
}
#endif
#endif /* CLOPS_TOOLS_CONFORMANCE_H */
