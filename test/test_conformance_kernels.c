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
 * GPU as the H100 and a small integrated one), so that the GPU plans' kernels
 * (pool, the tile loops) are broken there too. Each profile must be honoured
 * (the report's coverage plans for the profile's device type and cu=N compute
 * units; lib/cl/profile.c): one that is not fails, since it would leave its
 * kernels unbroken. Every kernel must have failed the run under some profile.
 * An entry PROFILE:KERNEL whose profile never takes KERNEL reports a skip
 * (tc_skip: the entry exits 77, SKIPPED in ctest), not a pass.
 *
 * ctest runs it as one entry per profile and kernel (CLOPS_TEST_CONFORMANCE_PART, below), each one
 * conformance run, and a "clean" entry: as one process it printed nothing for 39 minutes on a busy
 * 2-core machine.
 */
#define _XOPEN_SOURCE 700
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "api/introspect.h"
#include "cl_api.h"
#include "conformance.h"
#include "kernel_sources.h"
#include "test_common.h"
#include "test_fs.h"

#define MAX_NAMES 32

/* The kernel functions of the embedded kernels/ files: "__kernel ... void NAME(" at a line's start.
 * Not the portable program's (portable.cl): no device profile here runs them; test_aot_portable runs
 * the whole conformance on that program alone (three profiles) and test_portable checks it. */
static int kernel_functions(char names[MAX_NAMES][64])
{
    int count = 0;
    for (const clops_kernel_source *s = clops_kernel_sources; s->name; s++)
        for (const char *p = strcmp(s->name, "portable.cl") == 0 ? NULL : strstr(s->text, "\n__kernel"); p;
             p = strstr(p + 1, "\n__kernel")) {
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

/* The device as it is, then as GPUs and a bigger CPU (CLOPS_TEST_DEVICE_PROFILE, where the library
 * has it). PROFILE's first word names the profile in ctest's entries (test/CMakeLists.txt reads them). */
#define PROFILE(name, profile, type) {name, profile, type}
static const struct {
    const char *name, *profile, *type;
} profiles[] = {PROFILE("device", NULL, NULL), PROFILE("gpu_discrete", "gpu,cu=132,wg=1024,local=256", "GPU"),
                PROFILE("gpu_integrated", "gpu,cu=24,wg=256,local=64", "GPU"), PROFILE("cpu16", "cpu,cu=16", "CPU")};
#define NPROFILES (sizeof profiles / sizeof profiles[0])

/* Asserts that the library honoured profile p in a report: it planned for the profile's device type and,
 * where the profile says cu=N, for N compute units. A profile not honoured is a failure: its run would
 * break the device's own plans' kernels again and leave the profile's own unbroken. */
static void assert_honoured(size_t p, const cJSON *report)
{
    if (!profiles[p].profile) return;
    const char *type = planned_type(report);
    const cJSON *u =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(device_of(report), "coverage"), "compute_units");
    ck_assert_msg(cJSON_IsNumber(u), "the report has no coverage.compute_units");
    const char *cu = strstr(profiles[p].profile, "cu=");
    const double want_units = cu ? strtod(cu + 3, NULL) : -1;
    ck_assert_msg(strcmp(type, profiles[p].type) == 0 && (want_units < 0 || u->valuedouble == want_units),
                  "CLOPS_TEST_DEVICE_PROFILE=%s not honoured: the library planned for a %s with %g compute units, "
                  "want a %s%s", profiles[p].profile, type, u->valuedouble, profiles[p].type, cu ? " with cu's units" : "");
}

/* Runs profile p's conformance with kernel `name` broken (one its plans take) and asserts that it
 * failed with wrong results. */
static void assert_broken_fails(const char *device, size_t p, const char *name)
{
    cJSON *broken;
    const int brc = run_broken(device, name, &broken);
    const char *label = profiles[p].profile ? profiles[p].profile : "(none)";
    fprintf(stderr, "profile %s: kernel %s broken: exit %d, %d wrong results\n", label, name, brc, wrong_results(broken));
    ck_assert_msg(brc == 1 && wrong_results(broken) > 0,
                  "profile %s: conformance passed with kernel %s broken (its launches skipped)", label, name);
    cJSON_Delete(broken);
}

/* CLOPS_TEST_CONFORMANCE_PART, ctest's entries of this suite (test/CMakeLists.txt), so that each prints
 * its line within a minute or so: "clean" runs each profile's clean run only (passes with complete
 * coverage; every kernel is taken under some profile; CLOPS_TEST_CONFORMANCE_KERNELS, the kernels that
 * have entries, is exactly this suite's list); "PROFILE:KERNEL" runs that profile with that kernel broken,
 * when the plan takes it (one conformance run). Unset: all of it in one process (about 45 runs). */
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
    const char *part = getenv("CLOPS_TEST_CONFORMANCE_PART");
    const int clean_only = part && strcmp(part, "clean") == 0;
    const char *part_kernel = part && !clean_only ? strchr(part, ':') : NULL;
    ck_assert_msg(!part || clean_only || part_kernel, "CLOPS_TEST_CONFORMANCE_PART=%s: expected clean or PROFILE:KERNEL", part);
    if (clean_only) { /* the entries' kernels (test/CMakeLists.txt reads kernels/ at configure time) are the suite's */
        const char *listed = getenv("CLOPS_TEST_CONFORMANCE_KERNELS");
        ck_assert_msg(listed != NULL, "CLOPS_TEST_CONFORMANCE_KERNELS is not set");
        char within[MAX_NAMES * 64 + 3];
        snprintf(within, sizeof within, ",%s,", listed);
        int n_listed = 1;
        for (const char *c = listed; *c; c++) n_listed += *c == ',';
        for (int i = 0; i < count; i++) {
            char item[68];
            snprintf(item, sizeof item, ",%.63s,", names[i]);
            ck_assert_msg(strstr(within, item) != NULL, "kernel %s has no ctest entries (they break %s): configure again",
                          names[i], listed);
        }
        ck_assert_msg(n_listed == count, "the ctest entries break kernels %s, the sources have %d: configure again", listed,
                      count);
    }
    int detected[MAX_NAMES] = {0}, ran = 0;
    const char *saved = getenv("CLOPS_TEST_DEVICE_PROFILE");
    char *saved_copy = saved ? strdup(saved) : NULL;
    for (size_t p = 0; p < NPROFILES; p++) {
        if (part_kernel && (strncmp(part, profiles[p].name, (size_t)(part_kernel - part)) != 0 ||
                            profiles[p].name[part_kernel - part] != '\0'))
            continue;
        ran = 1;
        tc_set_env("CLOPS_TEST_DEVICE_PROFILE", profiles[p].profile);
        if (part_kernel) { /* one run: the kernel broken, where the plan takes it */
            int k = 0;
            while (k < count && strcmp(names[k], part_kernel + 1) != 0) k++;
            ck_assert_msg(k < count, "CLOPS_TEST_CONFORMANCE_PART=%s: no kernel %s in kernels/", part, part_kernel + 1);
            cJSON *broken;
            const int brc = run_broken(device, names[k], &broken);
            assert_honoured(p, broken);
            if (expected_somewhere(broken, names[k])) {
                fprintf(stderr, "profile %s: kernel %s broken: exit %d, %d wrong results\n", profiles[p].name, names[k], brc,
                        wrong_results(broken));
                ck_assert_msg(brc == 1 && wrong_results(broken) > 0,
                              "profile %s: conformance passed with kernel %s broken (its launches skipped)",
                              profiles[p].name, names[k]);
            } else {
                char why[160];
                snprintf(why, sizeof why, "profile %.24s: the plans never take kernel %.63s here: nothing to break",
                         profiles[p].name, names[k]);
                tc_skip(part, why);
            }
            cJSON_Delete(broken);
            continue;
        }
        cJSON *clean;
        const int rc = run_broken(device, NULL, &clean);
        assert_honoured(p, clean);
        const cJSON *cov = cJSON_GetObjectItemCaseSensitive(device_of(clean), "coverage");
        ck_assert_msg(rc == 0 && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cov, "complete")),
                      "profile %s: the clean run failed (exit %d) or its coverage is incomplete", profiles[p].name, rc);
        for (int i = 0; i < count; i++) {
            if (!expected_somewhere(clean, names[i])) continue; /* this device never takes it */
            if (!clean_only) assert_broken_fails(device, p, names[i]);
            detected[i] = 1;
        }
        cJSON_Delete(clean);
    }
    tc_set_env("CLOPS_TEST_DEVICE_PROFILE", saved_copy);
    free(saved_copy);
    ck_assert_msg(ran, "CLOPS_TEST_CONFORMANCE_PART=%s: no such profile in this suite", part);
    if (part_kernel) return;
    int untested = 0;
    for (int i = 0; i < count; i++)
        if (!detected[i]) {
            fprintf(stderr, "kernel %s: no device profile run here takes it\n", names[i]);
            untested++;
        }
    /* Every profile was honoured (asserted): each kernel was broken (or, "clean", is taken) under one. */
    ck_assert_msg(untested == 0,
                  "%d kernels of kernels/ were never broken: no profile's coverage expects them (a new kernel goes "
                  "into the plan rules of tools/conformance/conformance_cover.c, expected())",
                  untested);
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
