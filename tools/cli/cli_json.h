/* cli_json.h - the JSON output of the CLI's commands (devices, cache list, tune,
 * kernels list) and of the conformance report: one way to describe a device and
 * to print a document (cJSON, a dependency of the tools, not of the library). */
#ifndef CLOPS_CLI_JSON_H
#define CLOPS_CLI_JSON_H

#include <cjson/cJSON.h>
#include <clops/clops.h>

/* Adds a device's index, identity strings (whole), capabilities and plan to `obj`. */
void cli_json_add_device(cJSON *obj, const clops_device_info *info);
/* `s` as valid UTF-8 (malloc'd; NULL when out of memory): every byte that is not
 * part of a valid UTF-8 sequence (a path or a driver string in another encoding)
 * becomes the character U+00XX of the same value, which JSON readers see exactly
 * as "\u00XX". Valid UTF-8 is copied unchanged. */
char *cli_json_utf8(const char *s);
/* The document as text (cJSON_Print, malloc'd), every string and member name
 * first made valid UTF-8 by cli_json_utf8: the one way a JSON document of the
 * tools becomes text, so that every output parses as UTF-8 JSON. NULL when out
 * of memory. */
char *cli_json_text(cJSON *root);
/* Prints `root` (cli_json_text) to stdout and deletes it; 0 (exit status OK), or 1 when out of memory. */
int cli_json_print(cJSON *root);

#endif
