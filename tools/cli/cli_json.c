/* cli_json.c - see cli_json.h. */
#include "cli_json.h"

#include <stdbool.h>
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

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0 if the byte there
 * does not start one (overlong forms, surrogates and code points past U+10FFFF
 * are invalid, as in RFC 3629). */
static size_t utf8_sequence(const unsigned char *s, size_t n)
{
    const unsigned c = s[0];
    size_t len;
    unsigned min;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) len = 2, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef) len = 3, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4) len = 4, min = 0x10000;
    else return 0;
    if (len > n) return 0;
    unsigned cp = c & (0x7fu >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3fu);
    }
    return cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ? 0 : len;
}

char *cli_json_utf8(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    const size_t n = strlen(s);
    char *out = malloc(2 * n + 1), *o = out; /* each byte becomes at most two */
    if (!out) return NULL;
    for (size_t i = 0; i < n;) {
        const size_t len = utf8_sequence(u + i, n - i);
        if (len > 0) {
            memcpy(o, u + i, len);
            o += len, i += len;
        } else { /* the byte as the character U+00XX of the same value */
            *o++ = (char)(0xc0 | u[i] >> 6);
            *o++ = (char)(0x80 | (u[i] & 0x3f));
            i++;
        }
    }
    *o = '\0';
    return out;
}

/* Every string and member name under `item` made valid UTF-8 (cli_json_utf8);
 * false when out of memory. */
static bool fix_utf8(cJSON *item)
{
    for (; item; item = item->next) {
        char **fields[2] = {&item->valuestring, &item->string};
        for (int f = 0; f < 2; f++) {
            char *old = *fields[f];
            if (!old || (f == 1 && (item->type & cJSON_StringIsConst))) continue;
            size_t i = 0, n = strlen(old);
            while (i < n && utf8_sequence((const unsigned char *)old + i, n - i) > 0)
                i += utf8_sequence((const unsigned char *)old + i, n - i);
            if (i == n) continue;
            char *fixed = cli_json_utf8(old);
            if (!fixed) return false;
            if (f == 0 && cJSON_IsString(item)) {
                if (!cJSON_SetValuestring(item, fixed)) {
                    free(fixed);
                    return false;
                }
                free(fixed);
            } else {
                cJSON_free(old); /* a member name: cJSON's own allocation */
                *fields[f] = fixed;
            }
        }
        if (item->child && !fix_utf8(item->child)) return false;
    }
    return true;
}

char *cli_json_text(cJSON *root)
{
    return root && fix_utf8(root) ? cJSON_Print(root) : NULL;
}

int cli_json_print(cJSON *root)
{
    char *text = cli_json_text(root);
    cJSON_Delete(root);
    if (!text) {
        fputs("clops: error: out of memory writing JSON\n", stderr);
        return 1;
    }
    puts(text);
    free(text);
    return 0;
}
