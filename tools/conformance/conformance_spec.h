/*
 * conformance_spec.h - the values the specification prints for DirectML's
 * DEPTH_TO_SPACE1 (spec/dml_depth_to_space1.txt): InputTensor {1, 8, 2, 3}
 * UINT32, and OutputTensor {1, 2, 4, 6} of Example 1 (DCR) and Example 2 (CRD).
 * `clops conformance` runs every device on them; test_cli checks its .npy
 * fixtures against them. One copy, included by both.
 */
#ifndef CLOPS_CONFORMANCE_SPEC_H
#define CLOPS_CONFORMANCE_SPEC_H

#include <stdint.h>

#define CONF_SPEC_COUNT 48 /* elements of each tensor */

static const uint32_t conf_spec_input[CONF_SPEC_COUNT] = {
    0,  1,  2,  3,  4,  5,  9,  10, 11, 12, 13, 14, 18, 19, 20, 21, 22, 23, 27, 28, 29, 30, 31, 32,
    36, 37, 38, 39, 40, 41, 45, 46, 47, 48, 49, 50, 54, 55, 56, 57, 58, 59, 63, 64, 65, 66, 67, 68};
static const uint32_t conf_spec_dcr[CONF_SPEC_COUNT] = {
    0,  18, 1,  19, 2,  20, 36, 54, 37, 55, 38, 56, 3,  21, 4,  22, 5,  23, 39, 57, 40, 58, 41, 59,
    9,  27, 10, 28, 11, 29, 45, 63, 46, 64, 47, 65, 12, 30, 13, 31, 14, 32, 48, 66, 49, 67, 50, 68};
static const uint32_t conf_spec_crd[CONF_SPEC_COUNT] = {
    0,  9,  1,  10, 2,  11, 18, 27, 19, 28, 20, 29, 3,  12, 4,  13, 5,  14, 21, 30, 22, 31, 23, 32,
    36, 45, 37, 46, 38, 47, 54, 63, 55, 64, 56, 65, 39, 48, 40, 49, 41, 50, 57, 66, 58, 67, 59, 68};

#endif /* CLOPS_CONFORMANCE_SPEC_H */
