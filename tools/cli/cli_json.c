/* cli_json.c - see cli_json.h. */
#include "cli_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A whole identity string, or "" when the driver does not give it. */
static void add_device_string(cJSON *obj, const char *key, const clops_device_info *info, clops_device_string_kind what)
{
    size_t len = 0;
    char *s = NULL;
    if (clops_device_string(info, what, NULL, 0, &len) == CLOPS_SUCCESS && (s = malloc(len + 1)) != NULL &&
        clops_device_string(info, what, s, len + 1, NULL) == CLOPS_SUCCESS)
        cJSON_AddStringToObject(obj, key, s);
    else
        cJSON_AddStringToObject(obj, key, "");
    free(s);
}

void cli_json_add_device(cJSON *obj, const clops_device_info *info)
{
    cJSON_AddNumberToObject(obj, "index", info->index);
    add_device_string(obj, "platform", info, CLOPS_DEVICE_STRING_PLATFORM_NAME);
    add_device_string(obj, "platform_version", info, CLOPS_DEVICE_STRING_PLATFORM_VERSION);
    add_device_string(obj, "device", info, CLOPS_DEVICE_STRING_DEVICE_NAME);
    add_device_string(obj, "vendor", info, CLOPS_DEVICE_STRING_VENDOR);
    add_device_string(obj, "device_version", info, CLOPS_DEVICE_STRING_DEVICE_VERSION);
    add_device_string(obj, "driver_version", info, CLOPS_DEVICE_STRING_DRIVER_VERSION);
    add_device_string(obj, "opencl_c_version", info, CLOPS_DEVICE_STRING_OPENCL_C_VERSION);
    cJSON *caps = cJSON_AddObjectToObject(obj, "capabilities");
    cJSON_AddBoolToObject(caps, "fp16", info->has_fp16);
    cJSON_AddBoolToObject(caps, "fp64", info->has_fp64);
    cJSON_AddBoolToObject(caps, "int64", info->has_int64);
    cJSON_AddBoolToObject(caps, "compiler", info->compiler_available);
    cJSON_AddNumberToObject(caps, "max_alloc_bytes", (double)info->max_alloc_bytes);
    const size_t need = clops_device_plan(info, NULL, 0) + 1;
    char *plan = malloc(need);
    if (plan) {
        clops_device_plan(info, plan, need);
        cJSON *lines = cJSON_AddArrayToObject(obj, "plan");
        for (char *line = strtok(plan, "\n"); line; line = strtok(NULL, "\n"))
            cJSON_AddItemToArray(lines, cJSON_CreateString(line));
        free(plan);
    }
}

int cli_json_print(cJSON *root)
{
    char *text = root ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!text) {
        fputs("clops: error: out of memory writing JSON\n", stderr);
        return 1;
    }
    puts(text);
    free(text);
    return 0;
}
