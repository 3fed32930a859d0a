/* fault_engine.h - how test_faults fails one call of clops's seam (lib/cl_api.h):
 * every entry of the writable clops_cl table (clops_testable) is wrapped; an
 * armed run counts each function's calls (the census), fails call `at` of the
 * target (and every later one if `persist`) with `code`, and counts the OpenCL
 * objects and mappings clops holds. Problems are collected over a test and
 * reported together at its end. */
#ifndef CLOPS_TEST_FAULT_ENGINE_H
#define CLOPS_TEST_FAULT_ENGINE_H

#include "cl_api.h"
#include "test_common.h"

/* Every entry of the clops_cl table: its OpenCL calls, then its file-system calls. */
#define FAULT_FUNCTIONS(X) \
    CLOPS_CL_FUNCTIONS(X) X(io_write) X(io_fsync) X(io_rename) X(io_create) X(io_mkdir)

typedef enum fn_id {
#define FN_ENUM(f) F_##f,
    FAULT_FUNCTIONS(FN_ENUM)
#undef FN_ENUM
    F_COUNT
} fn_id;

extern const char *const fn_names[F_COUNT];
/* Release calls (and clSetUserEventStatus) are never failed (they fail only for an invalid object). */
int fn_is_release(fn_id f);
/* The file-system entries (io_*). */
int fn_is_io(fn_id f);

/* Live objects clops made through the table (creations + retains - releases). */
enum { K_CONTEXT, K_QUEUE, K_MEM, K_PROGRAM, K_KERNEL, K_EVENT, K_MAP, K_KINDS };
extern const char *const kind_names[K_KINDS];

typedef struct fault_state {
    int armed;           /* faults only inside the window under test */
    fn_id target;
    long at;             /* fail call number `at` (1-based) of `target` ... */
    int persist;         /* ... and, if set, every later one */
    cl_int code;
    fn_id also;          /* a second function that fails on every call (F_COUNT: none) */
    cl_int also_code;
    long calls[F_COUNT]; /* calls while armed (the census) */
    long hits;           /* faults injected in this run */
    long live[K_KINDS];
} fault_state;
extern fault_state fx;

/* Over the whole suite: runs, faults injected, runs that recovered, clean errors. */
extern long total_runs, total_faults, total_recovered, total_errors;

void install_wrappers(void);
/* The real table back, nothing armed. */
void restore_table(void);
void arm(fn_id target, long at, int persist, cl_int code);
void disarm(void);
/* Codes each function is failed with; returns how many. */
int codes_for(fn_id f, cl_int codes[4]);

void problem(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* Fails the test with every problem collected since reset_problems(). */
void report_problems(const char *test);
void reset_problems(void);

#endif
