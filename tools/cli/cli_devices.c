/* cli_devices.c - clops devices: every device with its index and capabilities,
 * the path each operator takes on it, and the default device (the one a plain
 * call uses: clops_default_device_for_host_data) with the reason. */
#define _POSIX_C_SOURCE 200809L

#include <stdbool.h>

#include "cli.h"
#include "cli_json.h"

/* ---- devices ----------------------------------------------------------------------------------- */

static const char *device_type_name(cl_device_type type)
{
    if (type & CL_DEVICE_TYPE_GPU)
        return "GPU";
    if (type & CL_DEVICE_TYPE_CPU)
        return "CPU";
    if (type & CL_DEVICE_TYPE_ACCELERATOR)
        return "ACCELERATOR";
#ifdef CL_DEVICE_TYPE_CUSTOM
    if (type & CL_DEVICE_TYPE_CUSTOM)
        return "CUSTOM";
#endif
    return "OTHER";
}

static const char *yes_no(int v)
{
    return v ? "yes" : "no";
}

/* One identity string whole (clops_device_string), else the field's copy, then `suffix`. */
static void print_device_string(const char *label, const clops_device_info *d, clops_device_string_kind what,
                                const char *field, const char *suffix)
{
    size_t len = 0;
    char *s = NULL;
    if (clops_device_string(d, what, NULL, 0, &len) == CLOPS_SUCCESS && (s = malloc(len + 1)) != NULL &&
        clops_device_string(d, what, s, len + 1, NULL) == CLOPS_SUCCESS)
        field = s;
    printf("%s%s%s\n", label, field, suffix);
    free(s);
}

/* ---- the default device -------------------------------------------------------------- */

/* The device a plain call uses (clops_default_device_for_host_data), or why none:
 * status is its failure (CLOPS_DEVICE names no device, for one). */
typedef struct default_device {
    clops_status status;
    int host;
    unsigned index;
    clops_default_reason reason;
} default_device;

static default_device find_default(void)
{
    default_device d = {CLOPS_SUCCESS, 1, 0, CLOPS_DEFAULT_REASON_NO_DEVICE};
    d.status = clops_default_device_for_host_data(&d.host, &d.index, &d.reason);
    return d;
}

/* The reason as a word (--json) and as a clause (the text). */
static const char *reason_word(clops_default_reason r)
{
    switch (r) {
    case CLOPS_DEFAULT_REASON_ENVIRONMENT: return "CLOPS_DEVICE";
    case CLOPS_DEFAULT_REASON_GPU: return "first GPU";
    case CLOPS_DEFAULT_REASON_NOT_CPU: return "first device, not a CPU";
    case CLOPS_DEFAULT_REASON_CPU: return "first device is a CPU";
    case CLOPS_DEFAULT_REASON_NO_DEVICE: return "no OpenCL device";
    }
    return "";
}

static void print_default(const default_device *d)
{
    if (d->status != CLOPS_SUCCESS) {
        printf("default: none: %s (%s)\n", clops_last_error_message(), clops_status_name(d->status));
        return;
    }
    char where[40];
    if (d->host) snprintf(where, sizeof where, "the host backend");
    else snprintf(where, sizeof where, "device %u", d->index);
    const char *env = getenv("CLOPS_DEVICE");
    switch (d->reason) {
    case CLOPS_DEFAULT_REASON_ENVIRONMENT:
        printf("default: %s, as CLOPS_DEVICE=%s says\n", where, env ? env : "");
        break;
    case CLOPS_DEFAULT_REASON_GPU:
        printf("default: %s, the first GPU\n", where);
        break;
    case CLOPS_DEFAULT_REASON_NOT_CPU:
        printf("default: %s: no GPU, and the first device is not a CPU\n", where);
        break;
    case CLOPS_DEFAULT_REASON_CPU:
        printf("default: %s: no GPU, and the first device is a CPU, whose kernels would run on the same cores "
               "and copy each tensor in and out\n", where);
        break;
    case CLOPS_DEFAULT_REASON_NO_DEVICE:
        printf("default: %s: no OpenCL device\n", where);
        break;
    }
    puts("  (what run, bench, Python and clops.onnx use where no device is named; --device or CLOPS_DEVICE "
         "chooses another)");
}

static void print_device(const clops_device_info *d, const default_device *dflt)
{
    char head[32];
    snprintf(head, sizeof head, "  device %u: ", d->index);
    const bool is_default = dflt->status == CLOPS_SUCCESS && !dflt->host && dflt->index == d->index;
    print_device_string(head, d, CLOPS_DEVICE_STRING_DEVICE_NAME, d->device_name, is_default ? " (default)" : "");
    printf("    type:             %s\n", device_type_name(d->type));
    print_device_string("    OpenCL version:   ", d, CLOPS_DEVICE_STRING_DEVICE_VERSION, d->device_version, "");
    print_device_string("    driver version:   ", d, CLOPS_DEVICE_STRING_DRIVER_VERSION, "", "");
    print_device_string("    OpenCL C version: ", d, CLOPS_DEVICE_STRING_OPENCL_C_VERSION, d->opencl_c_version, "");
    printf("    fp16: %s  fp64: %s  int64: %s  compiler: %s\n", yes_no(d->has_fp16),
           yes_no(d->has_fp64), yes_no(d->has_int64), yes_no(d->compiler_available));
    printf("    max allocation:   %" PRIu64 " bytes (%" PRIu64 " MiB)\n", d->max_alloc_bytes,
           d->max_alloc_bytes >> 20);
    const char *disabled = getenv("CLOPS_DISABLE");
    if (disabled != NULL && disabled[0] != '\0')
        printf("    (CLOPS_DISABLE=%s: those capabilities are reported absent)\n", disabled);
    char plan[1024];
    clops_device_plan(d, plan, sizeof plan);
    printf("    plan:\n");
    for (const char *line = plan; *line != '\0';) {
        const size_t len = strcspn(line, "\n");
        printf("      - %.*s\n", (int)len, line);
        line += len;
        if (*line == '\n')
            line++;
    }
}

/* --json: {"devices": [...]} with conformance's device objects plus the type, and
 * "default": {"device": index or "host", "reason": ...} (null when CLOPS_DEVICE names none). */
static int print_devices_json(const clops_device_info *infos, size_t count, const default_device *dflt)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "clops_version", clops_version_string());
    cJSON *list = cJSON_AddArrayToObject(root, "devices");
    for (size_t i = 0; i < count; i++) {
        cJSON *d = cJSON_CreateObject();
        cli_json_add_device(d, &infos[i]);
        cJSON_AddStringToObject(d, "type", device_type_name(infos[i].type));
        cJSON_AddItemToArray(list, d);
    }
    const char *disabled = getenv("CLOPS_DISABLE");
    cJSON_AddStringToObject(root, "disabled", disabled ? disabled : "");
    cJSON_AddBoolToObject(root, "host_backend", 1);
    if (dflt->status != CLOPS_SUCCESS) {
        cJSON_AddNullToObject(root, "default");
    } else {
        cJSON *d = cJSON_AddObjectToObject(root, "default");
        if (dflt->host) cJSON_AddStringToObject(d, "device", "host");
        else cJSON_AddNumberToObject(d, "device", dflt->index);
        cJSON_AddStringToObject(d, "reason", reason_word(dflt->reason));
    }
    return cli_json_print(root) == 0 ? EXIT_OK : EXIT_FAIL;
}

static int run_devices(const cli_command *cmd, const cli_args *args)
{
    size_t count = 0;
    (void)cmd;
    clops_status st = clops_device_list(NULL, 0, &count);
    if (st != CLOPS_SUCCESS)
        return fail_clops("devices", st);
    const default_device dflt = find_default();
    if (count == 0 && args->json) return print_devices_json(NULL, 0, &dflt);
    if (count == 0) {
        puts("no OpenCL devices (the host backend is always available)");
        print_default(&dflt);
        return EXIT_OK;
    }
    clops_device_info *infos = calloc(count, sizeof *infos);
    if (infos == NULL)
        return fail_line("devices", "out of memory");
    size_t again = 0;
    st = clops_device_list(infos, count, &again);
    if (st != CLOPS_SUCCESS) {
        free(infos);
        return fail_clops("devices", st);
    }
    if (again < count)
        count = again;
    if (args->json) {
        const int rc = print_devices_json(infos, count, &dflt);
        free(infos);
        return rc;
    }
    unsigned platform = 0;
    for (size_t i = 0; i < count; i++) {
        if (i == 0 || infos[i].platform != infos[i - 1].platform) {
            if (i > 0)
                platform++;
            printf("platform %u: %s\n", platform, infos[i].platform_name);
        }
        print_device(&infos[i], &dflt);
    }
    puts(dflt.status == CLOPS_SUCCESS && dflt.host ? "host backend: always available (--device host), the default"
                                                   : "host backend: always available (--device host)");
    print_default(&dflt);
    free(infos);
    return EXIT_OK;
}

const cli_command cli_devices_command = {
    "devices", "", 0,
    "Lists every OpenCL platform and device with the index that --device and\n"
    "CLOPS_DEVICE take, its type, OpenCL and OpenCL C versions, fp16/fp64/int64\n"
    "support, whether a compiler is available, and the largest allocation; then\n"
    "marks the default device, the one run, bench, Python and clops.onnx use\n"
    "where none is named, and says why.",
    json_options, NULL, run_devices};

