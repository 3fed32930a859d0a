/*
 * test_conformance_count.c - `clops conformance` says, before its cases run, how
 * many programs it will compile on the device (issue 46): "conformance: N of M
 * programs to build on device D ..." on stderr, and "programs" in the JSON
 * report. The count must be exact: on an empty program cache the run leaves
 * exactly `to_build` new entries, a second run counts 0 to build and adds none,
 * and with K entries removed the next run counts K and puts K back.
 *
 * Each case runs in a fresh cache directory (CLOPS_CACHE_DIR, read when the run
 * creates its context). The conformance sources are built into this suite against
 * clops_testable (as test_conformance), so that CLOPS_TEST_DEVICE_PROFILE plans
 * the device as a GPU: other plans, other programs (pool, mark, place, bin and
 * settle). Cases: portable (CLOPS_DISABLE=specialised: one program) and native
 * (every specialised program the quick run needs, about 300 compiles on an empty
 * cache; under CLOPS_TEST_DEVICE_PROFILE=gpu,cu=132,wg=1024,local=256 the GPU's
 * 300, which took 334 s in CI with PoCL's own cache cold, so CI runs it natively
 * only). Second tier (test/CMakeLists.txt).
 */
#define _XOPEN_SOURCE 700
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conformance.h"
#include "test_common.h"
#include "test_fs.h"

static char g_root[PATH_MAX];

/* What a case changes, put back by the teardown (also after a failed assertion). */
static const char *const env_names[] = {"CLOPS_CACHE_DIR", "CLOPS_TEST_DEVICE_PROFILE", "CLOPS_DISABLE"};
#define NUM_ENV (sizeof env_names / sizeof env_names[0])
static char *env_saved[NUM_ENV];
static int env_was_set[NUM_ENV];

static void setup(void)
{
    tc_env_save(env_names, NUM_ENV, env_saved, env_was_set, NUM_ENV);
    g_root[0] = '\0';
}

static void teardown(void)
{
    tc_env_restore(env_names, NUM_ENV, env_saved, env_was_set);
    if (g_root[0]) tc_rm_rf(g_root);
    g_root[0] = '\0';
}

/* A fresh, empty cache directory for the case. */
static void fresh_cache(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(g_root, sizeof g_root, "%s/clops-conformance-count-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    ck_assert_msg(mkdtemp(g_root) != NULL, "mkdtemp(%s): %s", g_root, strerror(errno));
    char dir[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s/cache", g_root);
    setenv("CLOPS_CACHE_DIR", dir, 1);
}

typedef struct entries {
    size_t valid, invalid;
    char first[4][64]; /* the first valid entries' files */
} entries;

static void count_entry(void *user, const char *file, uint64_t bytes, long long last_used, const char *key,
                        size_t key_len)
{
    (void)bytes, (void)last_used, (void)key_len;
    entries *e = user;
    if (!key) {
        e->invalid++;
        return;
    }
    if (e->valid < 4) snprintf(e->first[e->valid], sizeof e->first[0], "%s", file);
    e->valid++;
}

/* The program entries in the case's cache directory (clops_cache_list_entries). */
static entries cache_entries(void)
{
    entries e = {0};
    size_t visited = 0;
    ck_assert_msg(clops_cache_list_entries(count_entry, &e, &visited) == CLOPS_SUCCESS, "clops_cache_list_entries: %s",
                  clops_last_error_message());
    ck_assert_msg(e.invalid == 0, "%zu invalid entries (or temporary files) in the cache", e.invalid);
    return e;
}

/* Runs `clops conformance --device D --quick --json F` in this process; the
 * device's "programs" numbers from the report. */
static void run_counted(const char *device, double *total, double *to_build, double *not_cached)
{
    char json[PATH_MAX + 16];
    snprintf(json, sizeof json, "%s/report.json", g_root);
    char *argv[] = {"conformance", "--device", (char *)device, "--quick", "--json", json, NULL};
    fflush(stdout);
    const int rc = clops_conformance_main(6, argv);
    ck_assert_msg(rc == 0, "clops conformance --device %s --quick exited %d", device, rc);
    FILE *f = fopen(json, "r");
    ck_assert_msg(f != NULL, "no JSON report at %s", json);
    static char text[1 << 22];
    const size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    cJSON *report = cJSON_Parse(text);
    ck_assert_msg(report != NULL, "the JSON report does not parse");
    const cJSON *dev = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(report, "devices"), 0);
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(dev, "programs");
    ck_assert_msg(cJSON_IsObject(p), "the report's device has no \"programs\"");
    const char *keys[3] = {"total", "to_build", "not_cached"};
    double *out[3] = {total, to_build, not_cached};
    for (int i = 0; i < 3; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, keys[i]);
        ck_assert_msg(cJSON_IsNumber(v), "programs.%s is not a number", keys[i]);
        *out[i] = v->valuedouble;
    }
    const cJSON *secs = cJSON_GetObjectItemCaseSensitive(p, "count_seconds");
    ck_assert_msg(cJSON_IsNumber(secs), "programs.count_seconds is not a number");
    fprintf(stderr, "  the count took %.3f s\n", secs->valuedouble);
    cJSON_Delete(report);
}

/* The CLI's first line on stderr, run on the case's cache: what a user sees. */
static void cli_first_line(const char *device, char *line, size_t size)
{
    const char *cli = getenv("CLOPS_CLI");
    ck_assert_msg(cli != NULL, "CLOPS_CLI is not set");
    char cmd[PATH_MAX + 128];
    snprintf(cmd, sizeof cmd, "'%s' conformance --device %s --quick 2>&1 >/dev/null", cli, device);
    FILE *p = popen(cmd, "r");
    ck_assert_msg(p != NULL, "popen failed");
    line[0] = '\0';
    if (!fgets(line, (int)size, p)) line[0] = '\0';
    char rest[4096];
    while (fgets(rest, sizeof rest, p)) {}
    const int status = pclose(p);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the CLI's conformance run failed: %s", line);
}

/* Empty cache: N of N to build, N entries after; again: 0 to build, N entries;
 * K entries removed: K to build, N entries again. `expect_total` 0: any. */
static void check_count(const char *profile, const char *disable, double expect_total, bool cli)
{
    if (!tc_dev_ctx) {
        fprintf(stderr, "SKIP: no OpenCL device: the program count not tested\n");
        return;
    }
    char device[32];
    tc_device_index_arg(device, sizeof device);
    tc_set_env("CLOPS_TEST_DEVICE_PROFILE", profile);
    tc_set_env("CLOPS_DISABLE", disable);
    fresh_cache();
    double total, to_build, not_cached;
    run_counted(device, &total, &to_build, &not_cached);
    entries e = cache_entries();
    fprintf(stderr, "  empty cache: %.0f of %.0f programs to build; %zu entries after the run\n", to_build, total,
            e.valid);
    ck_assert_msg(total > 0 && to_build == total && not_cached == total,
                  "on an empty cache: %.0f of %.0f programs to build (%.0f not cached)", to_build, total, not_cached);
    if (expect_total > 0) ck_assert_msg(total == expect_total, "%.0f programs, expected %.0f", total, expect_total);
    ck_assert_msg((double)e.valid == to_build, "%.0f programs to build, but the run left %zu entries in the cache",
                  to_build, e.valid);

    double total2, to_build2, not_cached2;
    run_counted(device, &total2, &to_build2, &not_cached2);
    ck_assert_msg(total2 == total && to_build2 == 0 && not_cached2 == 0,
                  "second run: %.0f of %.0f programs to build (%.0f not cached), expected 0 of %.0f", to_build2, total2,
                  not_cached2, total);
    ck_assert_msg((double)cache_entries().valid == total, "the second run changed the cache's entries");

    const size_t removed = e.valid < 3 ? e.valid : 3;
    for (size_t i = 0; i < removed; i++) {
        char path[PATH_MAX + 96];
        snprintf(path, sizeof path, "%s/cache/%s", g_root, e.first[i]);
        ck_assert_msg(unlink(path) == 0, "unlink(%s): %s", path, strerror(errno));
    }
    double total3, to_build3, not_cached3;
    run_counted(device, &total3, &to_build3, &not_cached3);
    ck_assert_msg(total3 == total && to_build3 == (double)removed,
                  "with %zu entries removed: %.0f of %.0f programs to build", removed, to_build3, total3);
    ck_assert_msg((double)cache_entries().valid == total, "the run did not put back the %zu removed entries", removed);

    if (cli) { /* the line a user reads, from the CLI itself (libclops, no device profile) */
        char line[1024], want[512];
        cli_first_line(device, line, sizeof line);
        snprintf(want, sizeof want, "conformance: 0 of %.0f programs to build on device ", total);
        ck_assert_msg(strncmp(line, want, strlen(want)) == 0, "the CLI's first line on stderr: %s", line);
    }
}

/* Only the portable program (CLOPS_DISABLE=specialised): exactly one. */
START_TEST(test_count_portable)
{
    check_count(NULL, "specialised", 1, false);
}
END_TEST

/* The device's own plans: the specialised programs of every case. */
START_TEST(test_count_native)
{
    check_count(getenv("CLOPS_TEST_DEVICE_PROFILE"), NULL, 0, getenv("CLOPS_TEST_DEVICE_PROFILE") == NULL);
}
END_TEST

static Suite *count_suite(void)
{
    Suite *s = suite_create("conformance_count");
    TCase *tc[2] = {tc_suite_case(s, "portable", 1200), tc_suite_case(s, "native", 3000)};
    const TTest *tests[2] = {test_count_portable, test_count_native};
    for (int i = 0; i < 2; i++) {
        tcase_add_checked_fixture(tc[i], setup, teardown);
        tcase_add_test(tc[i], tests[i]);
    }
    return s;
}

int main(void)
{
    return tc_main(count_suite());
}
