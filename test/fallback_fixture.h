/* fallback_fixture.h - what the host fallback's suites share (test_fallback_pool.c,
 * test_fallback_failed.c). The operators fall back because their context has no
 * compiler and no cache to find a binary in (options.disable =
 * CLOPS_CAPABILITY_COMPILER, cache off); each is a DepthToSpace uint32 1x4x2x2,
 * block 2, whose output is checked bit for bit against the rule written out in
 * expect_output. */
#ifndef CLOPS_TEST_FALLBACK_FIXTURE_H
#define CLOPS_TEST_FALLBACK_FIXTURE_H

#include "cl_api.h"
#include "fixture.h"

/* The default test device's context and device (fb_setup). */
extern cl_context g_cl;
extern cl_device_id g_dev;

#define SENTINEL 0xA5A5A5A5u /* what a new output holds */

/* Each test's fixture: the default test device (rusticl in CI too); the seam restored after. */
void fb_setup(void);
void fb_teardown(void);
/* A context around `q` whose operators fall back, with the deadline `timeout` (0: none). */
clops_context *fallback_timed(cl_command_queue q, double timeout);
clops_context *fallback_around(cl_command_queue q);
/* A DepthToSpace operator of `ctx` that fell back to the host (asserted). */
clops_operator *fallback_op(clops_context *ctx);
/* Input `tag`: 16 values tag*16 + k. */
cl_mem input_with(uint32_t tag);
/* 16 words of SENTINEL. */
cl_mem output_new(void);
/* Output `out` holds DepthToSpace of input `tag` (tag < 0: the sentinel), read on `q`. */
void expect_output(cl_command_queue q, cl_mem out, long tag, const char *what, long which);
/* Executes `op` on `in` and `out` after the wait list; the event it returned (asserted). */
cl_event execute(clops_operator *op, cl_mem in, cl_mem out, cl_uint nwait, const cl_event *wait);
/* Whether the device has out-of-order queues (rusticl 22.3 has none: those cases are skipped, saying so). */
int out_of_order_queues(const char *test);

#endif
