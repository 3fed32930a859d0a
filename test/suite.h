/* Building and running a Check suite: the pieces every suite executable shares.
 *
 * Header only (everything static inline), needs nothing but Check and libc. */
#ifndef CLOPS_TEST_SUITE_H
#define CLOPS_TEST_SUITE_H

#include <check.h>
#include <stddef.h>
#include <stdlib.h>

/* Adds a new test case `name` to `s` and returns it; `timeout` in seconds, negative keeps
 * Check's default (0 is no limit). */
static inline TCase *tc_suite_case(Suite *s, const char *name, double timeout)
{
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

/* Runs every test of `s` (in this process when `nofork`) and returns how many failed. */
static inline int tc_run_failures(Suite *s, int nofork)
{
    SRunner *sr = srunner_create(s);
    if (nofork)
        srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed;
}

#endif
