/* fixture.h - what several suites share (test_common.h has the rest):
 *   - one operator case made ready to run: descriptors, random input, random
 *     indices, the sentinel-filled output and the reference's expected result
 *     (test_cache*, test_tuning, test_multidevice, test_fallback; thread-safe:
 *     no Check calls);
 *   - running a suite that needs OpenCL devices: skip (exit 77) or fail without
 *     them, test cases with a checked fixture, no fork. */
#ifndef CLOPS_TEST_FIXTURE_H
#define CLOPS_TEST_FIXTURE_H

#include "test_common.h"

/* A case: packed NCHW tensors; `out` only for MaxUnpooling (the others derive it). */
typedef struct tc_case {
    const char *name;
    clops_operator_type type;
    clops_data_type dtype;
    uint32_t in[4];
    uint32_t block;                /* DepthToSpace / SpaceToDepth */
    clops_depth_space_order order; /* DepthToSpace / SpaceToDepth */
    clops_data_type itype;         /* MaxUnpooling: index type */
    uint32_t out[4];               /* MaxUnpooling: output sizes */
} tc_case;

/* One case's descriptors, data and expected output. Not movable (desc points inside). */
typedef struct tc_prepared {
    const tc_case *def;
    clops_tensor_desc x, i, y;
    clops_depth_to_space_desc d2s;
    clops_space_to_depth_desc s2d;
    clops_max_unpooling_desc mu;
    clops_operator_desc desc;
    size_t esize;
    void *in, *idx, *sentinel, *want;
    tc_bufs bufs; /* in, idx, sentinel and their sizes */
} tc_prepared;

/* A seed made from a case's name. */
uint64_t tc_seed_of(const char *name);
/* Builds the case with data from `seed`: 0, or -1 (out of memory, or the
 * reference rejects the case: a test bug). Release it either way. */
int tc_prepare(tc_prepared *p, const tc_case *d, uint64_t seed);
/* As tc_prepare, and for MaxUnpooling with `bad` set, with out-of-range indices
 * among the random ones (the reference skips them, leaving its zeros): returns
 * how many the reference skipped, or -1. */
long tc_prepare_bad(tc_prepared *p, const tc_case *d, uint64_t seed, int bad);
void tc_release(tc_prepared *p);
/* The case's tensors as buffers of `cl`: input and indices (MaxUnpooling) holding
 * its data, the output uninitialised; a member is NULL where it was not created. */
clops_buffers tc_cl_buffers(cl_context cl, const tc_prepared *p);

/* ---- suites on OpenCL devices ---- */

/* -1 if there are at least `need` OpenCL devices; else says why the suite cannot
 * run (`why`) and returns its exit status: 77 (skipped), or EXIT_FAILURE under
 * CLOPS_REQUIRE_DEVICE=1. */
int tc_need_devices(size_t need, const char *why);
/* A test case of `s` with the checked fixture setup/teardown (run also after a
 * failed assertion, since suites run without fork). */
TCase *tc_fixture_case(Suite *s, const char *name, void (*setup)(void), void (*teardown)(void));
/* Runs `s` without fork; EXIT_SUCCESS or EXIT_FAILURE. */
int tc_run_nofork(Suite *s);

#endif
