/* Building and running a Check suite: the pieces every suite executable shares.
 *
 * Header only (everything static inline), needs nothing but Check and libc. */
#ifndef CLOPS_TEST_SUITE_H
#define CLOPS_TEST_SUITE_H

#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* CLOPS_TEST_LIST_CASES=1: the suite names its test cases and runs none. tc_suite_case prints
 * "tcase NAME" on stdout for each case it creates, tc_run_failures then returns 0 without running
 * (tc_main without creating a context). ctest runs a long suite as one entry per case,
 * SUITE:CASE with CK_RUN_CASE=CASE, and its SUITE:tcase-list entry compares this listing with
 * those entries (test/CMakeLists.txt, test/split_cases.cmake). */
static inline int tc_listing_cases(void)
{
    const char *v = getenv("CLOPS_TEST_LIST_CASES");
    return v != NULL && v[0] == '1' && v[1] == '\0';
}

/* Adds a new test case `name` to `s` and returns it; `timeout` in seconds, negative keeps
 * Check's default (0 is no limit). */
static inline TCase *tc_suite_case(Suite *s, const char *name, double timeout)
{
    if (tc_listing_cases())
        printf("tcase %s\n", name);
    TCase *tc = tcase_create(name);
    if (timeout >= 0)
        tcase_set_timeout(tc, timeout);
    suite_add_tcase(s, tc);
    return tc;
}

static inline void tc_add_tests(TCase *tc, const TTest *const *tests, size_t count)
{
    for (size_t i = 0; i < count; i++)
        tcase_add_test(tc, tests[i]);
}

/* TC_TESTS(tc, test_a, test_b, ...) adds the tests to `tc` in that order. */
#define TC_TESTS(tc, ...)                                                                                              \
    tc_add_tests((tc), (const TTest *const[]){__VA_ARGS__},                                                            \
                 sizeof((const TTest *const[]){__VA_ARGS__}) / sizeof(const TTest *))

/* Skips. Check has no skipped state: a test that cannot check what it is for here (no device, a
 * plan it cannot reach, CLOPS_TEST_NETWORK=0) calls tc_skip once and returns, or ends without its
 * claim. tc_run_failures counts the tests it ran; when every one of them skipped, the suite's main
 * exits 77, which ctest (SKIP_RETURN_CODE 77) reports as SKIPPED, not as a pass (tc_skip_status).
 * A run in which only some skipped passes and says how many did. */
static int tc_skipped_tests, tc_tests_ran;

static inline void tc_skip(const char *test, const char *why)
{
    fprintf(stderr, "SKIP %s: %s\n", test, why);
    tc_skipped_tests++;
}

/* After tc_run_failures found no failure: 77 (with a line saying so) when every test it ran was
 * skipped, else `pass`. */
static inline int tc_skip_status(int pass)
{
    if (tc_tests_ran > 0 && tc_skipped_tests >= tc_tests_ran) {
        fprintf(stderr, "SKIP: all %d test(s) of this run skipped (the SKIP lines above say why); exiting 77\n",
                tc_tests_ran);
        return 77;
    }
    if (tc_skipped_tests > 0)
        fprintf(stderr, "note: %d of %d test(s) skipped (the SKIP lines above say why)\n", tc_skipped_tests,
                tc_tests_ran);
    return pass;
}

/* Runs every test of `s` (in this process when `nofork`) and returns how many failed. Check runs
 * only the case CK_RUN_CASE names when it is set; one that names no case of `s` (a renamed case,
 * a typo) ran nothing, which counts as a failure rather than an empty pass. */
static inline int tc_run_failures(Suite *s, int nofork)
{
    SRunner *sr = srunner_create(s);
    if (tc_listing_cases()) {
        srunner_free(sr);
        return 0;
    }
    if (nofork)
        srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    tc_tests_ran = srunner_ntests_run(sr);
    const char *only = getenv("CK_RUN_CASE");
    if (only != NULL && srunner_ntests_run(sr) == 0) {
        fprintf(stderr, "FAIL: CK_RUN_CASE=%s names no test case of this suite: no test ran\n", only);
        failed++;
    }
    srunner_free(sr);
    return failed;
}

#endif
