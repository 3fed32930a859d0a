/* aot.h - what `clops conformance` asks before its run (tools/conformance/
 * conformance_count.c): the one program each operator's own plan asks for, and
 * whether its binary is in the disk cache already, so that the tool can say how
 * many programs its run will compile. Exported from the library so that the CLI
 * can call them, but declared only here (as api/introspect.h): not installed,
 * not part of the public API. Defined in aot.c. */
#ifndef CLOPS_AOT_H
#define CLOPS_AOT_H

#include <stdbool.h>

#include "clops/clops.h"

/* Calls `fn` at most once: with the program that clops_operator_create(ctx, desc)
 * asks for first on ctx's device, as the descriptor's own sizes choose it (its
 * plan only: not every plan any sizes could choose, which clops_operator_programs
 * names), building nothing. Not at all where it asks for none (empty tensors, a
 * type the device cannot take). A program a plan asks for only after its first one
 * was built (a pool tile the built kernel cannot take: docs/cache-and-tuning.md)
 * or failed (the portable program) is not named. CLOPS_SUCCESS where the
 * descriptor is valid. */
CLOPS_API clops_status clops_operator_own_program(clops_context *ctx, const clops_operator_desc *desc,
                                                 clops_program_fn fn, void *user);

/* Whether ctx's disk cache holds a valid binary of the program (`source_name` and
 * `build_options` as clops_program_fn names them) under the key clops_operator_create
 * would look for on ctx's device: loading it then costs no compile. Reads the
 * entry (and, as a load does, marks it recently used); builds and loads nothing
 * into the device. False where the cache is off. Not the context's own table of
 * programs already built (a new context's is empty). */
CLOPS_API bool clops_program_in_cache(clops_context *ctx, const char *source_name, const char *build_options);

#endif /* CLOPS_AOT_H */
