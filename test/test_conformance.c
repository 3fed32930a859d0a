/*
 * test_conformance.c - `clops conformance`: passes on the host backend and on
 * the OpenCL device, and fails on a device that computes wrong results.
 *
 * The conformance sources are built into this suite against clops_testable,
 * whose CLOPS_TEST_CORRUPT_OUTPUT=1 seam (lib/cl_api.h) flips a bit of every
 * output clops produces. The CLI is run end to end for its exit status and
 * its final line.
 */
#define _XOPEN_SOURCE 700
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cl_api.h"
#include "conformance.h"
#include "test_common.h"
#include "test_fs.h"

/* Runs clops_conformance_main in this process with the seam on or off and
 * returns its exit status; the parsed JSON report in *report. */
static int run_conformance(const char *device, int corrupt, cJSON **report)
{
    char json[] = "/tmp/clops-conformance-XXXXXX";
    const int fd = mkstemp(json);
    ck_assert_msg(fd >= 0, "mkstemp failed");
    close(fd);
    char *argv[] = {"conformance", "--device", (char *)device, "--quick", "--json", json, NULL};
    tc_set_env("CLOPS_TEST_CORRUPT_OUTPUT", corrupt ? "1" : NULL);
    fflush(stdout);
    const int rc = clops_conformance_main(6, argv);
    tc_set_env("CLOPS_TEST_CORRUPT_OUTPUT", NULL);
    FILE *f = fopen(json, "r");
    ck_assert_msg(f != NULL, "no JSON report at %s", json);
    static char text[1 << 22];
    const size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    remove(json);
    text[n] = '\0';
    *report = cJSON_Parse(text);
    ck_assert_msg(*report != NULL, "the JSON report does not parse");
    return rc;
}

static double number(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    ck_assert_msg(cJSON_IsNumber(v), "report: %s is not a number", key);
    return v->valuedouble;
}

static const char *string(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    ck_assert_msg(cJSON_IsString(v), "report: %s is not a string", key);
    return v->valuestring;
}

/* Whether some failure's case description mentions `path`. */
static int failures_mention(const cJSON *device, const char *path)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(device, "failures"))
        if (strstr(string(f, "case"), path)) return 1;
    return 0;
}

/* The device string `device` for --device: the suite's OpenCL device, or "host". */
static void device_arg(char *buf, size_t size, int opencl)
{
    if (!opencl) {
        snprintf(buf, size, "host");
        return;
    }
    tc_device_index_arg(buf, size);
}

static void passes_and_fails_when_corrupted(int opencl)
{
    char device[32];
    device_arg(device, sizeof device, opencl);
    cJSON *good, *bad;
    ck_assert_int_eq(run_conformance(device, 0, &good), 0);
    const cJSON *dev = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(good, "devices"), 0);
    ck_assert_msg(number(good, "failed") == 0 && number(good, "passed") > 4000, "clean run: %.0f passed, %.0f failed",
                  number(good, "passed"), number(good, "failed"));
    ck_assert_str_eq(string(dev, "backend"), opencl ? "opencl" : "host");
    ck_assert_str_eq(string(good, "clops_version"), clops_version_string());
    if (opencl) {
        /* The identity strings are the driver's, whole. */
        char name[1024];
        size_t len = 0;
        clops_device_info info;
        size_t count = 0;
        clops_device_info infos[64];
        ck_assert_int_eq(clops_device_list(infos, 64, &count), CLOPS_SUCCESS);
        info = infos[strtoul(device, NULL, 10)];
        ck_assert_int_eq(clops_device_string(&info, CLOPS_DEVICE_STRING_DEVICE_VERSION, name, sizeof name, &len),
                         CLOPS_SUCCESS);
        ck_assert_uint_eq(strlen(name), len);
        ck_assert_str_eq(string(dev, "device_version"), name);
        ck_assert_msg(strlen(string(dev, "driver_version")) > 0, "no driver version in the report");
        ck_assert_msg(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(dev, "plan")) > 0, "no plan in the report");
        /* Plan coverage: every kernel the device could take was reached, MaxUnpooling's among them. */
        const cJSON *cov = cJSON_GetObjectItemCaseSensitive(dev, "coverage");
        ck_assert_msg(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cov, "complete")), "the plan coverage is incomplete");
        const cJSON *g;
        int unpool_kernels = 0;
        cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(cov, "groups"))
            if (strcmp(string(g, "operator"), "MaxUnpooling") == 0 && strcmp(string(g, "data_type"), "FLOAT32") == 0)
                unpool_kernels = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(g, "kernels"));
        ck_assert_msg(unpool_kernels >= 6, "MaxUnpooling FLOAT32 reached only %d kernels", unpool_kernels);
    } else {
        ck_assert_msg(cJSON_GetObjectItemCaseSensitive(dev, "coverage") == NULL, "the host backend has plan coverage");
    }

    ck_assert_int_eq(run_conformance(device, 1, &bad), 1);
    dev = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(bad, "devices"), 0);
    ck_assert_msg(number(bad, "failed") > 1000, "a corrupting device failed only %.0f checks", number(bad, "failed"));
    ck_assert_msg(failures_mention(dev, "host memory"), "no host-memory check failed on a corrupting device");
    if (opencl) ck_assert_msg(failures_mention(dev, "cl_mem"), "no cl_mem check failed on a corrupting device");
    /* Every operator and type fails somewhere. */
    const cJSON *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(dev, "table"))
        ck_assert_msg(number(row, "failed") > 0, "%s %s passed on a corrupting device", string(row, "operator"),
                      string(row, "data_type"));
    cJSON_Delete(good);
    cJSON_Delete(bad);
}

START_TEST(test_host_passes_and_corrupt_fails)
{
    passes_and_fails_when_corrupted(0);
}
END_TEST

START_TEST(test_device_passes_and_corrupt_fails)
{
    if (!tc_dev_ctx) {
        fprintf(stderr, "SKIP: no OpenCL device: conformance on the device not tested\n");
        return;
    }
    passes_and_fails_when_corrupted(1);
}
END_TEST

/* Runs the CLI with `args`, its stdout into `out`; returns the exit status. */
static int run_cli(const char *args, char *out, size_t size)
{
    const char *cli = getenv("CLOPS_CLI");
    ck_assert_msg(cli != NULL, "CLOPS_CLI is not set");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>/dev/null", cli, args);
    FILE *p = popen(cmd, "r");
    ck_assert_msg(p != NULL, "popen failed");
    const size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    const int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

START_TEST(test_cli_last_line_and_status)
{
    static char out[1 << 16];
    ck_assert_int_eq(run_cli("conformance --device host --quick", out, sizeof out), 0);
    size_t len = strlen(out);
    ck_assert_msg(len > 0 && out[len - 1] == '\n', "output does not end with a line");
    out[--len] = '\0';
    const char *last = strrchr(out, '\n');
    last = last ? last + 1 : out;
    unsigned long long passed = 0, failed = 1;
    char tail = 0;
    ck_assert_msg(sscanf(last, "%llu passed, %llu failed%c", &passed, &failed, &tail) == 2,
                  "last line is not \"N passed, M failed\": \"%s\"", last);
    ck_assert_msg(passed > 4000 && failed == 0, "last line: %s", last);
    ck_assert_int_eq(run_cli("conformance --device bogus", out, sizeof out), 2);
    ck_assert_int_eq(run_cli("conformance --frobnicate", out, sizeof out), 2);
    ck_assert_int_eq(run_cli("conformance --device 9999 --quick", out, sizeof out), 2); /* past the devices: usage */
    ck_assert_int_eq(run_cli("conformance --device host --quick --json /nonexistent-dir/report.json", out, sizeof out),
                     1);
    ck_assert_int_eq(run_cli("conformance --help", out, sizeof out), 0);
    ck_assert_msg(strstr(out, "usage: clops conformance") != NULL, "--help prints no usage");
}
END_TEST

/* clops_device_string: the whole string, its length, cut to a small buffer, errors. */
START_TEST(test_device_strings)
{
    ck_assert_int_eq(clops_device_string(NULL, CLOPS_DEVICE_STRING_DEVICE_NAME, NULL, 0, NULL),
                     CLOPS_ERROR_NULL_ARGUMENT);
    clops_device_info infos[64];
    size_t count = 0;
    ck_assert_int_eq(clops_device_list(infos, 64, &count), CLOPS_SUCCESS);
    for (size_t i = 0; i < count && i < 64; i++) {
        char whole[1024], cut[8];
        size_t len = 0, len_cut = 0;
        ck_assert_int_eq(clops_device_string(&infos[i], CLOPS_DEVICE_STRING_DEVICE_VERSION, whole, sizeof whole, &len),
                         CLOPS_SUCCESS);
        ck_assert_uint_eq(strlen(whole), len);
        ck_assert_msg(strncmp(infos[i].device_version, whole, sizeof infos[i].device_version - 1) == 0,
                      "device_version field \"%s\" is not the start of \"%s\"", infos[i].device_version, whole);
        ck_assert_int_eq(clops_device_string(&infos[i], CLOPS_DEVICE_STRING_DEVICE_VERSION, cut, sizeof cut, &len_cut),
                         CLOPS_SUCCESS);
        ck_assert_uint_eq(len_cut, len);
        ck_assert_msg(strlen(cut) == (len < sizeof cut ? len : sizeof cut - 1) && strncmp(cut, whole, strlen(cut)) == 0,
                      "cut string \"%s\" of \"%s\"", cut, whole);
        ck_assert_int_eq(clops_device_string(&infos[i], (clops_device_string_kind)99, whole, sizeof whole, NULL),
                         CLOPS_ERROR_INVALID_DEVICE_SELECTION);
    }
}
END_TEST

/* ---- the JSON report through the library's file writer ---------------------------------------- */

static size_t disk_left; /* bytes full_disk_write still takes */

/* io_write of a disk that fills up after disk_left bytes (lib/cl_api.h's seam). */
static ssize_t full_disk_write(int fd, const void *buf, size_t n)
{
    if (disk_left == 0) {
        errno = ENOSPC;
        return -1;
    }
    const ssize_t w = clops_cl_real.io_write(fd, buf, n < disk_left ? n : disk_left);
    if (w > 0) disk_left -= (size_t)w;
    return w;
}

/* A disk that fills up while the report is written: the run fails, saying so,
 * and the old report is still there whole, with no temporary file beside it (the
 * report went through fopen before, which left a torn 8 KiB one). */
START_TEST(test_report_full_disk)
{
    char dir[] = "/tmp/clops-conformance-full-XXXXXX", path[128];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/report.json", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("old report\n", f);
    fclose(f);
    char *argv[] = {"conformance", "--device", "host", "--quick", "--json", path, NULL};
    disk_left = 8192;
    clops_cl.io_write = full_disk_write;
    fflush(stdout);
    const int rc = clops_conformance_main(6, argv);
    clops_cl.io_write = clops_cl_real.io_write;
    ck_assert_int_eq(rc, 1);
    char text[64] = "";
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    const size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    ck_assert_str_eq(text, "old report\n");
    unlink(path);
    ck_assert_msg(rmdir(dir) == 0, "something was left beside the report in %s", dir);
}
END_TEST

/* The report's directory and how often, while the run was under way, a file
 * other than the report was in it (the run reaches io_mkdir when its OpenCL
 * context makes the cache directory: after --json was checked, before any case
 * ran). */
static char report_dir[64];
static int mid_run_calls, mid_run_extra;

static int mkdir_and_look(const char *path, mode_t mode)
{
    mid_run_calls++;
    DIR *d = opendir(report_dir);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        mid_run_extra += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "report.json");
    if (d) closedir(d);
    return clops_cl_real.io_mkdir(path, mode);
}

/* --json's target is checked at the start, but nothing is put beside it until
 * the run is over: a run stopped half-way (Ctrl-C) leaves no .tmp-XXXXXX file. */
START_TEST(test_report_no_temporary_mid_run)
{
    if (!tc_dev_ctx) { /* the host backend makes no cache directory */
        fprintf(stderr, "SKIP: no OpenCL device: the report mid-run not looked at\n");
        return;
    }
    char path[128], cache[128];
    const char *env_cache = getenv("CLOPS_CACHE"), *env_dir = getenv("CLOPS_CACHE_DIR");
    char *saved_cache = env_cache ? strdup(env_cache) : NULL, *saved_dir = env_dir ? strdup(env_dir) : NULL;
    snprintf(report_dir, sizeof report_dir, "%s", "/tmp/clops-conformance-mid-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(report_dir));
    snprintf(path, sizeof path, "%s/report.json", report_dir);
    snprintf(cache, sizeof cache, "%s-cache", report_dir);
    tc_set_env("CLOPS_CACHE", "rw");
    tc_set_env("CLOPS_CACHE_DIR", cache);
    char *argv[] = {"conformance", "--device", "0", "--quick", "--json", path, NULL};
    mid_run_calls = mid_run_extra = 0;
    clops_cl.io_mkdir = mkdir_and_look;
    fflush(stdout);
    const int rc = clops_conformance_main(6, argv);
    clops_cl.io_mkdir = clops_cl_real.io_mkdir;
    tc_set_env("CLOPS_CACHE", saved_cache);
    tc_set_env("CLOPS_CACHE_DIR", saved_dir);
    free(saved_cache);
    free(saved_dir);
    tc_rm_rf(cache);
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(mid_run_calls > 0, "the run never made its cache directory: nothing was looked at");
    ck_assert_msg(mid_run_extra == 0, "a file stood beside the report while the run was under way");
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "no report at the end");
    fclose(f);
    unlink(path);
    ck_assert_msg(rmdir(report_dir) == 0, "something was left beside the report in %s", report_dir);
}
END_TEST

static Suite *conformance_suite(void)
{
    Suite *s = suite_create("conformance");
    TCase *tc = tc_suite_case(s, "conformance", 1200);
    TC_TESTS(tc, test_device_strings, test_host_passes_and_corrupt_fails, test_device_passes_and_corrupt_fails,
             test_cli_last_line_and_status, test_report_full_disk, test_report_no_temporary_mid_run);
    return s;
}

int main(void)
{
    return tc_main(conformance_suite());
}
