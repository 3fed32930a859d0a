/* conformance_report.c - the conformance run's tally, its table and its JSON
 * report (cJSON: the tool's dependency, not the library's). */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_json.h"
#include "conformance.h"
#include "run_settings.h"
#include "store/file.h"

const clops_data_type conf_types[CONF_TYPES] = {
    CLOPS_DATA_TYPE_FLOAT64, CLOPS_DATA_TYPE_FLOAT32, CLOPS_DATA_TYPE_FLOAT16,  CLOPS_DATA_TYPE_INT64,
    CLOPS_DATA_TYPE_INT32,   CLOPS_DATA_TYPE_INT16,   CLOPS_DATA_TYPE_INT8,     CLOPS_DATA_TYPE_UINT64,
    CLOPS_DATA_TYPE_UINT32,  CLOPS_DATA_TYPE_UINT16,  CLOPS_DATA_TYPE_UINT8,    CLOPS_DATA_TYPE_BOOL,
    CLOPS_DATA_TYPE_BFLOAT16, CLOPS_DATA_TYPE_COMPLEX64, CLOPS_DATA_TYPE_COMPLEX128,
};

static const char *const row_names[CONF_ROWS] = {"DepthToSpace DCR", "DepthToSpace CRD", "SpaceToDepth DCR",
                                                  "SpaceToDepth CRD", "MaxUnpooling"};

const char *conf_row_name(int row)
{
    return row >= 0 && row < CONF_ROWS ? row_names[row] : "?";
}

/* Failures kept in the JSON report per device; the rest are counted. */
#define MAX_LISTED_FAILURES 200

struct conf_report {
    cJSON *root, *devices, *device, *failures, *skipped, *fallbacks;
    unsigned passed[CONF_ROWS][CONF_TYPES], failed[CONF_ROWS][CONF_TYPES];
    unsigned long long device_passed, device_failed, total_passed, total_failed, device_fallbacks;
    clops_file_writer json; /* --json FILE, from conf_report_open_json to conf_report_write_json */
    bool json_open;
    char *coverage_text; /* the device's coverage lines (conf_report_coverage), or NULL */
};

conf_report *conf_report_new(const char *command_line, bool quick)
{
    conf_report *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->root = cJSON_CreateObject();
    if (!r->root) {
        free(r);
        return NULL;
    }
    cJSON_AddStringToObject(r->root, "report", "clops conformance");
    cJSON_AddStringToObject(r->root, "clops_version", clops_version_string());
    cJSON_AddStringToObject(r->root, "command", command_line);
    cJSON_AddBoolToObject(r->root, "quick", quick);
    r->devices = cJSON_AddArrayToObject(r->root, "devices");
    return r;
}

void conf_report_free(conf_report *r)
{
    if (!r) return;
    if (r->json_open) clops_file_abort(&r->json); /* the run did not finish: the target stays as it was */
    cJSON_Delete(r->root);
    free(r->coverage_text);
    free(r);
}

void conf_report_begin_device(conf_report *r, const clops_device_info *info)
{
    memset(r->passed, 0, sizeof r->passed);
    memset(r->failed, 0, sizeof r->failed);
    r->device_passed = r->device_failed = r->device_fallbacks = 0;
    r->device = cJSON_CreateObject();
    cJSON_AddItemToArray(r->devices, r->device);
    cJSON_AddStringToObject(r->device, "backend", info ? "opencl" : "host");
    if (info) {
        cli_json_add_device(r->device, info);
    } else {
        cJSON_AddStringToObject(r->device, "device", "host");
    }
    r->failures = cJSON_AddArrayToObject(r->device, "failures");
    r->skipped = cJSON_AddArrayToObject(r->device, "skipped");
    r->fallbacks = cJSON_AddArrayToObject(r->device, "host_fallbacks");
}

/* Appends {"case": what, key: text} to list ("" for a NULL text) while it holds fewer than cap entries. */
static void list_case(cJSON *list, int cap, const char *what, const char *key, const char *text)
{
    if (cJSON_GetArraySize(list) >= cap) return;
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "case", what);
    cJSON_AddStringToObject(c, key, text ? text : "");
    cJSON_AddItemToArray(list, c);
}

void conf_report_check(conf_report *r, int row, int type_index, bool passed, const char *what, const char *detail)
{
    if (passed) {
        r->passed[row][type_index]++;
        r->device_passed++;
        r->total_passed++;
        return;
    }
    r->failed[row][type_index]++;
    r->device_failed++;
    r->total_failed++;
    list_case(r->failures, MAX_LISTED_FAILURES, what, "detail", detail);
}

void conf_report_skip(conf_report *r, const char *what, const char *why)
{
    list_case(r->skipped, INT_MAX, what, "reason", why);
}

void conf_report_fallback(conf_report *r, const char *what, const char *why)
{
    r->device_fallbacks++;
    list_case(r->fallbacks, MAX_LISTED_FAILURES, what, "reason", why);
}

void conf_report_coverage(conf_report *r, cJSON *json, const char *text)
{
    if (json) cJSON_AddItemToObject(r->device, "coverage", json);
    free(r->coverage_text);
    r->coverage_text = text ? strdup(text) : NULL;
}

void conf_report_programs(conf_report *r, size_t total, size_t to_build, size_t not_cached, double seconds)
{
    cJSON *p = cJSON_CreateObject();
    if (!p) return;
    cJSON_AddNumberToObject(p, "total", (double)total);
    cJSON_AddNumberToObject(p, "to_build", (double)to_build);
    cJSON_AddNumberToObject(p, "not_cached", (double)not_cached);
    cJSON_AddNumberToObject(p, "count_seconds", (double)(long long)(seconds * 1000 + 0.5) / 1000);
    cJSON_DeleteItemFromObjectCaseSensitive(r->device, "programs");
    cJSON_AddItemToObject(r->device, "programs", p);
}

void conf_report_end_device(conf_report *r, FILE *out)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(r->device, "device");
    fprintf(out, "\nconformance on %s: passed/total by operator and data type\n",
            cJSON_IsString(name) ? name->valuestring : "?");
    fprintf(out, "%-11s", "type");
    for (int row = 0; row < CONF_ROWS; row++) fprintf(out, " %17s", row_names[row]);
    fputc('\n', out);
    cJSON *table = cJSON_AddArrayToObject(r->device, "table");
    for (int t = 0; t < CONF_TYPES; t++) {
        fprintf(out, "%-11s", clops_data_type_name(conf_types[t]));
        for (int row = 0; row < CONF_ROWS; row++) {
            const unsigned p = r->passed[row][t], f = r->failed[row][t];
            char cell[32];
            snprintf(cell, sizeof cell, "%u/%u%s", p, p + f, f ? " FAIL" : "");
            fprintf(out, " %17s", cell);
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "operator", row_names[row]);
            cJSON_AddStringToObject(e, "data_type", clops_data_type_name(conf_types[t]));
            cJSON_AddNumberToObject(e, "passed", p);
            cJSON_AddNumberToObject(e, "failed", f);
            cJSON_AddItemToArray(table, e);
        }
        fputc('\n', out);
    }
    const int skipped = cJSON_GetArraySize(r->skipped);
    for (int i = 0; i < skipped; i++) {
        const cJSON *s = cJSON_GetArrayItem(r->skipped, i);
        fprintf(out, "skipped: %s: %s\n", cJSON_GetObjectItemCaseSensitive(s, "case")->valuestring,
                cJSON_GetObjectItemCaseSensitive(s, "reason")->valuestring);
    }
    if (r->coverage_text) fputs(r->coverage_text, out);
    free(r->coverage_text);
    r->coverage_text = NULL;
    if (r->device_fallbacks)
        fprintf(out, "%llu operators ran on the host instead of the device (\"host_fallbacks\" in the JSON report)\n",
                r->device_fallbacks);
    fprintf(out, "%s: %llu passed, %llu failed\n", cJSON_IsString(name) ? name->valuestring : "?", r->device_passed,
            r->device_failed);
    cJSON_AddNumberToObject(r->device, "host_fallback_count", (double)r->device_fallbacks);
    cJSON_AddNumberToObject(r->device, "passed", (double)r->device_passed);
    cJSON_AddNumberToObject(r->device, "failed", (double)r->device_failed);
}

unsigned long long conf_report_passed(const conf_report *r)
{
    return r->total_passed;
}

unsigned long long conf_report_failed(const conf_report *r)
{
    return r->total_failed;
}

/* The target is checked at the start - what cannot take the report (a FIFO no
 * process reads, a directory, a missing or unwritable directory) is refused at
 * once - by beginning the write (lib/store/file.c). A regular file's temporary
 * is removed again at once and made anew at the end, so that a run stopped
 * half-way (Ctrl-C, the watchdog) leaves nothing beside the target; a
 * character device or a FIFO with a reader stays open and is written in place. */
bool conf_report_open_json(conf_report *r, const char *path)
{
    if (clops_file_begin(&r->json, path, 0666, CLOPS_FILE_IN_PLACE) != 0) {
        char why[512];
        clops_file_describe(&r->json, why, sizeof why);
        fprintf(stderr, "clops: conformance: cannot write the JSON report to %s: %s\n", path, why);
        return false;
    }
    if (!r->json.in_place) clops_file_abort(&r->json); /* begun again by conf_report_write_json */
    r->json_open = true;
    return true;
}

bool conf_report_write_json(conf_report *r)
{
    if (!r->json_open) return false;
    r->json_open = false;
    cJSON_DeleteItemFromObjectCaseSensitive(r->root, "passed");
    cJSON_DeleteItemFromObjectCaseSensitive(r->root, "failed");
    cJSON_AddNumberToObject(r->root, "passed", (double)r->total_passed);
    cJSON_AddNumberToObject(r->root, "failed", (double)r->total_failed);
    char *text = cli_json_text(r->root);
    if (!text) {
        clops_file_abort(&r->json);
        fprintf(stderr, "clops: conformance: out of memory writing the JSON report\n");
        return false;
    }
    if (!r->json.in_place) {
        char path[sizeof r->json.path];
        snprintf(path, sizeof path, "%s", r->json.path);
        if (clops_file_begin(&r->json, path, 0666, CLOPS_FILE_IN_PLACE) == 0 && !r->json.in_place)
            run_watchdog_remove(r->json.tmp); /* a watchdog firing during the write removes it */
    }
    clops_file_write(&r->json, text, strlen(text));
    clops_file_write(&r->json, "\n", 1);
    free(text);
    const int rc = clops_file_commit(&r->json);
    run_watchdog_remove(NULL);
    if (rc == 0) return true;
    char why[512];
    clops_file_describe(&r->json, why, sizeof why);
    fprintf(stderr, "clops: conformance: cannot write the JSON report to %s: %s\n", r->json.path, why);
    return false;
}
