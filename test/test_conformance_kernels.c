/*
 * test_conformance_kernels.c - `clops conformance --quick` reaches every kernel:
 * with any one kernel of kernels/ broken, it fails.
 *
 * clops_testable's kernel seam (lib/cl_api.h clops_test_skip_kernel) turns every
 * launch of the named kernel into a marker: its output is left unwritten, its
 * status words unraised. For every kernel function in the embedded kernels/
 * sources, the conformance run (built into this suite against clops_testable)
 * must fail with a wrong result, where the device's plan rules can take that
 * kernel; with no kernel broken it passes, with complete plan coverage.
 *
 * The run repeats under each device profile of CLOPS_TEST_DEVICE_PROFILE (a
 * GPU as the H100 and a small integrated one) where the library honours it
 * (the planned device type in the report's coverage changes), so that the GPU
 * plans' kernels (pool, the tile loops) are broken there too; a profile the
 * library does not know yet is reported and left out. Every kernel must have
 * failed the run under some profile, except those that no profile run here
 * could take (listed as SKIP).
 */
#define _XOPEN_SOURCE 700
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "cl_api.h"
#include "conformance.h"
#include "kernel_sources.h"
#include "test_common.h"
#include "test_fs.h"

#define MAX_NAMES 32

/* The kernel functions of the embedded kernels/ files: "__kernel ... void NAME(" at a line's start. */
static int kernel_functions(char names[MAX_NAMES][64])
{
    int count = 0;
    for (const clops_kernel_source *s = clops_kernel_sources; s->name; s++)
        for (const char *p = strstr(s->text, "\n__kernel"); p; p = strstr(p + 1, "\n__kernel")) {
            const char *v = strstr(p, " void");
            ck_assert_ptr_nonnull(v);
            v += 5;
            while (*v == ' ' || *v == '\n') v++;
            size_t n = 0;
            while (n < 63 && (v[n] == '_' || (v[n] >= 'a' && v[n] <= 'z') || (v[n] >= '0' && v[n] <= '9'))) n++;
            char name[64];
            memcpy(name, v, n);
            name[n] = '\0';
            int seen = 0;
            for (int i = 0; i < count; i++) seen |= strcmp(names[i], name) == 0;
            if (!seen && count < MAX_NAMES) snprintf(names[count++], 64, "%s", name);
        }
    return count;
}

/* Runs `clops conformance --device D --quick --json` in this process with
 * kernel `broken` (NULL: none) skipped; the exit status, the report in *report. */
static int run_broken(const char *device, const char *broken, cJSON **report)
{
    char json[] = "/tmp/clops-conformance-kernels-XXXXXX";
    const int fd = mkstemp(json);
    ck_assert_msg(fd >= 0, "mkstemp failed");
    close(fd);
    char *argv[] = {"conformance", "--device", (char *)device, "--quick", "--json", json, NULL};
    clops_test_skip_kernel = broken;
    fflush(stdout);
    fflush(stderr);
    const int saved_err = dup(2), null = open("/dev/null", O_WRONLY); /* a broken kernel's failures: thousands of lines */
    if (null >= 0) dup2(null, 2);
    const int rc = clops_conformance_main(6, argv);
    fflush(stderr);
    if (saved_err >= 0) dup2(saved_err, 2), close(saved_err);
    if (null >= 0) close(null);
    clops_test_skip_kernel = NULL;
    FILE *f = fopen(json, "r");
    ck_assert_msg(f != NULL, "no JSON report at %s", json);
    static char text[1 << 23];
    const size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    remove(json);
    text[n] = '\0';
    *report = cJSON_Parse(text);
    ck_assert_msg(*report != NULL, "the JSON report does not parse");
    return rc;
}

static const cJSON *device_of(const cJSON *report)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(report, "devices"), 0);
}

/* Whether some group's "expected" kernels of the coverage name `kernel`. */
static int expected_somewhere(const cJSON *report, const char *kernel)
{
    const cJSON *g, *k;
    cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(
                              cJSON_GetObjectItemCaseSensitive(device_of(report), "coverage"), "groups"))
        cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(g, "expected")) if (strcmp(k->valuestring, kernel) == 0) return 1;
    return 0;
}

/* Failures that are wrong results (not the coverage check). */
static int wrong_results(const cJSON *report)
{
    int n = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(device_of(report), "failures"))
        n += strncmp(cJSON_GetObjectItemCaseSensitive(f, "case")->valuestring, "plan coverage", 13) != 0;
    return n;
}

static const char *planned_type(const cJSON *report)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(device_of(report), "coverage"),
                                                      "planned_device_type");
    ck_assert_msg(cJSON_IsString(t), "the report has no coverage.planned_device_type");
    return t->valuestring;
}

START_TEST(test_every_kernel_broken_fails)
{
    if (!tc_dev_ctx) {
        fprintf(stderr, "SKIP: no OpenCL device: conformance's kernel coverage not tested\n");
        return;
    }
    char names[MAX_NAMES][64], device[32];
    const int count = kernel_functions(names);
    ck_assert_msg(count >= 11, "only %d kernel functions found in the embedded kernels/ sources", count);
    tc_device_index_arg(device, sizeof device);
    int detected[MAX_NAMES] = {0};
    /* The device as it is, then as GPUs (CLOPS_TEST_DEVICE_PROFILE, where the library has it). */
    static const struct {
        const char *profile, *type;
    } profiles[] = {{NULL, NULL},
                    {"gpu,cu=132,wg=1024,local=256", "GPU"},
                    {"gpu,cu=24,wg=256,local=64", "GPU"},
                    {"cpu,cu=16", "CPU"}};
    int skipped_profiles = 0;
    char plain_type[32] = "";
    double plain_units = -1;
    const char *saved = getenv("CLOPS_TEST_DEVICE_PROFILE");
    char *saved_copy = saved ? strdup(saved) : NULL;
    for (size_t p = 0; p < sizeof profiles / sizeof profiles[0]; p++) {
        tc_set_env("CLOPS_TEST_DEVICE_PROFILE", profiles[p].profile);
        cJSON *clean;
        const int rc = run_broken(device, NULL, &clean);
        const char *type = planned_type(clean);
        const double units =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(device_of(clean), "coverage"), "compute_units")
                ->valuedouble;
        if (!profiles[p].profile) snprintf(plain_type, sizeof plain_type, "%s", type), plain_units = units;
        /* Not honoured: another type than asked for, or the device exactly as without a profile. */
        if (profiles[p].type && (strcmp(type, profiles[p].type) != 0 || (strcmp(type, plain_type) == 0 && units == plain_units))) {
            fprintf(stderr, "SKIP: CLOPS_TEST_DEVICE_PROFILE=%s: the library plans for a %s (no profile seam yet)\n",
                    profiles[p].profile, type);
            skipped_profiles++;
            cJSON_Delete(clean);
            continue;
        }
        const cJSON *cov = cJSON_GetObjectItemCaseSensitive(device_of(clean), "coverage");
        ck_assert_msg(rc == 0 && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cov, "complete")),
                      "profile %s: the clean run failed (exit %d) or its coverage is incomplete",
                      profiles[p].profile ? profiles[p].profile : "(none)", rc);
        for (int i = 0; i < count; i++) {
            if (!expected_somewhere(clean, names[i])) continue; /* this device never takes it */
            cJSON *broken;
            const int brc = run_broken(device, names[i], &broken);
            fprintf(stderr, "profile %s: kernel %s broken: exit %d, %d wrong results\n",
                    profiles[p].profile ? profiles[p].profile : "(none)", names[i], brc, wrong_results(broken));
            ck_assert_msg(brc == 1 && wrong_results(broken) > 0,
                          "profile %s: conformance passed with kernel %s broken (its launches skipped)",
                          profiles[p].profile ? profiles[p].profile : "(none)", names[i]);
            detected[i] = 1;
            cJSON_Delete(broken);
        }
        cJSON_Delete(clean);
    }
    tc_set_env("CLOPS_TEST_DEVICE_PROFILE", saved_copy);
    free(saved_copy);
    int untested = 0;
    for (int i = 0; i < count; i++)
        if (!detected[i]) {
            fprintf(stderr, "SKIP: kernel %s: no device profile run here takes it\n", names[i]);
            untested++;
        }
    /* With every profile honoured, each kernel was broken under one that takes it. */
    ck_assert_msg(untested == 0 || skipped_profiles > 0, "%d kernels of kernels/ were never broken", untested);
}
END_TEST

static Suite *conformance_kernels_suite(void)
{
    Suite *s = suite_create("conformance_kernels");
    TCase *tc = tc_suite_case(s, "conformance_kernels", 1200);
    TC_TESTS(tc, test_every_kernel_broken_fails);
    return s;
}

int main(void)
{
    return tc_main(conformance_kernels_suite());
}
