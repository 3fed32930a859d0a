/* checked.h - checked arithmetic on sizes: the one rule for multiplying and
 * adding counts that may overflow 64 bits, in the library and in the tools
 * (the CLI and the .npy reader include it too). Header-only, plain C11. */
#ifndef CLOPS_CORE_CHECKED_H
#define CLOPS_CORE_CHECKED_H

#include <stdbool.h>
#include <stdint.h>

/* *out = a * b; false (and *out untouched) when the product passes 2^64-1. */
static inline bool clops_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    if (a != 0 && b > UINT64_MAX / a) return false;
    *out = a * b;
    return true;
}

/* *out = a + b; false (and *out untouched) when the sum passes 2^64-1. */
static inline bool clops_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    if (b > UINT64_MAX - a) return false;
    *out = a + b;
    return true;
}

#endif /* CLOPS_CORE_CHECKED_H */
