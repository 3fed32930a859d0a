/* cli_json.h - the JSON output of the CLI's commands (devices, cache list, tune,
 * kernels list) and of the conformance report: one way to describe a device and
 * to print a document (cJSON, a dependency of the tools, not of the library). */
#ifndef CLOPS_CLI_JSON_H
#define CLOPS_CLI_JSON_H

#include <cjson/cJSON.h>
#include <clops/clops.h>

/* Adds a device's index, identity strings (whole), capabilities and plan to `obj`. */
void cli_json_add_device(cJSON *obj, const clops_device_info *info);
/* Prints `root` to stdout and deletes it; 0 (exit status OK), or 1 when out of memory. */
int cli_json_print(cJSON *root);

#endif
