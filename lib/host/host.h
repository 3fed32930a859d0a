/* host.h - the host kernels (host_kernels.c, host_unpool.c, host_unpool_msg.c): every operator in
 * plain C on validated parameters, with no OpenCL in them. Not installed. */
#ifndef CLOPS_HOST_H
#define CLOPS_HOST_H

#include "core/core.h"

/* Each operator on a validated operator's buffers, already checked. For
 * MaxUnpooling, every index is checked before anything is written. */
clops_status clops_host_depth_to_space(const clops_op_params *p, const clops_host_buffers *b);
clops_status clops_host_space_to_depth(const clops_op_params *p, const clops_host_buffers *b);
clops_status clops_host_max_unpooling(const clops_op_params *p, const clops_host_buffers *b);

/* MaxUnpooling as the device does it (the fallback on mapped buffers): the
 * zero-fill and the scatter with out-of-range indices skipped, their number in
 * *bad. Fails only when host memory for its plan runs out (output untouched). */
clops_status clops_host_unpool_skip(const clops_op_params *p, const clops_host_buffers *b, uint64_t *bad);

/* Element offset of logical (row-major) element e of a tensor through its
 * strides; `sizes` are the logical sizes (the indices' are the input's). */
uint64_t clops_elem_offset(const uint64_t sizes[4], const uint64_t strides[4], uint64_t e);

/* (host_unpool_msg.c) CLOPS_ERROR_INDEX_OUT_OF_RANGE naming bad index `v` (as the caller wrote it) at
 * row-major input position `e`, its coordinates and the limit it broke (the
 * output's elements, or its plane's for per-plane indices), then `tail`: the one
 * message of the host and the device paths. */
clops_status clops_unpool_bad_index(const clops_op_params *p, uint64_t e, uint64_t v, const char *tail);
/* The tail of clops_unpool_bad_index's message where the call wrote nothing
 * (execute_host: the host path and the read back from a device). */
#define CLOPS_UNPOOL_NOTHING_WRITTEN "; nothing was written to the output"
/* The same without the index (only a count, `bad`, or 0 when not known): the
 * non-strict paths, which skipped the bad indices' elements and wrote the rest. */
clops_status clops_unpool_bad_count(const clops_op_params *p, uint64_t bad);

/* A test seam (CLOPS_TEST_HOOKS builds only): how many distinct threads ran the
 * busiest pass of the last MaxUnpooling on the host (any caller's, any thread). */
#ifdef CLOPS_TEST_HOOKS
extern _Atomic unsigned clops_test_unpool_threads;
#endif

/* The host MaxUnpooling's two ways of scattering (host_unpool.c): the output in
 * bands, each thread scanning the inputs that reach its band, or scattered
 * inputs in buckets per output tile. Test seams (CLOPS_TEST_HOOKS builds):
 * clops_test_unpool_path says which one the last run took (any caller's);
 * clops_test_unpool_force, when not AUTO, makes every run take the one named,
 * or fail the buckets' allocation (then the bands run: the same bits). */
enum { CLOPS_UNPOOL_AUTO, CLOPS_UNPOOL_BANDS, CLOPS_UNPOOL_BUCKETS, CLOPS_UNPOOL_BUCKETS_NO_MEMORY };
#ifdef CLOPS_TEST_HOOKS
extern _Atomic unsigned clops_test_unpool_path, clops_test_unpool_force;
#endif

/* A hot loop also compiled for AVX2, picked at load time (an ifunc), on x86-64 with GCC. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define CLOPS_ROW_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CLOPS_ROW_CLONES
#endif

/* ---- threads (host_kernels.c) ---------------------------------------------------------------- */

/* The host kernels' threads for an operator moving `bytes`: one below 4 MiB,
 * else the context's host_threads, else one per processor, at most
 * CLOPS_HOST_MAX_THREADS. */
unsigned clops_host_threads(const clops_op_params *p, uint64_t bytes);

/* Runs fn(arg, t, begin, end) over [0, units) split into `threads` contiguous
 * ranges in order (thread t gets the t-th), the calling thread taking the
 * first; returns when all are done. */
typedef void (*clops_range_fn)(void *arg, unsigned thread, uint64_t begin, uint64_t end);
void clops_host_parallel(clops_range_fn fn, void *arg, uint64_t units, unsigned threads);

#endif /* CLOPS_HOST_H */
