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
uint64_t conf_ref_max_unpooling(const conf_layout *x, const void *xdata, const conf_layout *ind, const void *idata,
                                clops_data_type index_type, const conf_layout *y, void *ydata, size_t esize,
                                bool partial);

/* ---- results (conformance_report.c) --------------------------------------------- */

#define CONF_ROWS 5 /* DepthToSpace DCR, CRD, SpaceToDepth DCR, CRD, MaxUnpooling */
#define CONF_TYPES 15

extern const clops_data_type conf_types[CONF_TYPES];
const char *conf_row_name(int row);

typedef struct conf_report conf_report;

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
