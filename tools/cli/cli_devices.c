/* cli_devices.c - clops devices: every device with its index and capabilities,
 * and the path each operator takes on it. */
#define _POSIX_C_SOURCE 200809L

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

/* One identity string whole (clops_device_string), else the field's copy. */
static void print_device_string(const char *label, const clops_device_info *d, clops_device_string_kind what,
                                const char *field)
{
    size_t len = 0;
    char *s = NULL;
    if (clops_device_string(d, what, NULL, 0, &len) == CLOPS_SUCCESS && (s = malloc(len + 1)) != NULL &&
        clops_device_string(d, what, s, len + 1, NULL) == CLOPS_SUCCESS)
        field = s;
    printf("%s%s\n", label, field);
    free(s);
}

static void print_device(const clops_device_info *d)
{
    char head[32];
    snprintf(head, sizeof head, "  device %u: ", d->index);
    print_device_string(head, d, CLOPS_DEVICE_STRING_DEVICE_NAME, d->device_name);
    printf("    type:             %s\n", device_type_name(d->type));
    print_device_string("    OpenCL version:   ", d, CLOPS_DEVICE_STRING_DEVICE_VERSION, d->device_version);
    print_device_string("    driver version:   ", d, CLOPS_DEVICE_STRING_DRIVER_VERSION, "");
    print_device_string("    OpenCL C version: ", d, CLOPS_DEVICE_STRING_OPENCL_C_VERSION, d->opencl_c_version);
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

/* --json: {"devices": [...]} with conformance's device objects plus the type. */
static int print_devices_json(const clops_device_info *infos, size_t count)
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
    return cli_json_print(root) == 0 ? EXIT_OK : EXIT_FAIL;
}

static int run_devices(const cli_command *cmd, const cli_args *args)
{
    size_t count = 0;
    (void)cmd;
    clops_status st = clops_device_list(NULL, 0, &count);
    if (st != CLOPS_SUCCESS)
        return fail_clops("devices", st);
    if (count == 0 && args->json) return print_devices_json(NULL, 0);
    if (count == 0) {
        puts("no OpenCL devices (the host backend is always available)");
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
        const int rc = print_devices_json(infos, count);
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
        print_device(&infos[i]);
    }
    puts("host backend: always available (--device host)");
    free(infos);
    return EXIT_OK;
}

const cli_command cli_devices_command = {
    "devices", "", 0,
    "Lists every OpenCL platform and device with the index that --device and\n"
    "CLOPS_DEVICE take, its type, OpenCL and OpenCL C versions, fp16/fp64/int64\n"
    "support, whether a compiler is available, and the largest allocation.",
    json_options, NULL, run_devices};

