/* aot.c - ahead-of-time kernels: the programs an operator needs on a device and
 * the sources to compile offline. Adding the binaries to kernel packs is
 * pack_import.c's: it checks them against clops_programs_list (prepare.c),
 * which calls this file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/aot.h"
#include "api/api.h"
#include "cl/cl.h"
#include "store/cache.h"

/* Whether a tensor of desc's narrowest element type can pass 32-bit offsets
 * (clops_fits_u32) within the device's maximum allocation. */
static bool wide_offsets_possible(const clops_context *ctx, const clops_operator_desc *desc)
{
    const clops_op_entry *e = clops_op_lookup(desc->type);
    clops_op_params p;
    memset(&p, 0, sizeof p);
    p.type = desc->type;
    const clops_tensor_desc *t[3] = {NULL, NULL, NULL};
    if (!e || !desc->desc || e->unpack(desc->desc, &p, &t[0], &t[1], &t[2]) != CLOPS_SUCCESS) return false;
    size_t es = 0;
    for (int i = 0; i < 3; i++) {
        const size_t size = t[i] ? clops_data_type_size(t[i]->data_type) : 0;
        if (size && (!es || size < es)) es = size;
    }
    const uint64_t max = ctx->info.max_alloc_bytes;
    return es && (max == 0 || (CLOPS_U32_OFFSET_LIMIT + 1) <= max / es);
}

/* The listing's callback: each program once, whichever pass named it. */
typedef struct seen_programs {
    clops_program_fn fn;
    void *user;
    char **keys;
    size_t count;
    bool failed;
} seen_programs;

static void name_once(void *user, const char *source_name, const char *build_options)
{
    seen_programs *s = user;
    const size_t len = strlen(source_name) + 1 + strlen(build_options) + 1;
    char *key = malloc(len);
    if (!key) {
        s->failed = true;
        return;
    }
    snprintf(key, len, "%s\n%s", source_name, build_options);
    for (size_t i = 0; i < s->count; i++)
        if (strcmp(s->keys[i], key) == 0) {
            free(key);
            return;
        }
    char **grown = realloc(s->keys, (s->count + 1) * sizeof *grown);
    if (!grown) {
        free(key);
        s->failed = true;
        return;
    }
    s->keys = grown;
    s->keys[s->count++] = key;
    s->fn(s->user, source_name, build_options);
}

/* The arguments of a listing function `what`: all given, on an OpenCL context. */
static clops_status listing_arguments(const clops_context *ctx, const clops_operator_desc *desc, clops_program_fn fn,
                                      const char *what)
{
    if (!ctx || !desc || !fn) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "%s: NULL argument", what);
    if (ctx->backend != CLOPS_BACKEND_OPENCL)
        return clops_fail(CLOPS_ERROR_WRONG_BACKEND, "%s: the host context has no programs", what);
    return CLOPS_SUCCESS;
}

clops_status clops_operator_programs(clops_context *ctx, const clops_operator_desc *desc, clops_program_fn fn,
                                     void *user)
{
    const clops_status usable = listing_arguments(ctx, desc, fn, "clops_operator_programs");
    if (usable != CLOPS_SUCCESS) return usable;
    /* The operator is planned as usual, once per combination of the size-dependent
     * cases its rules know (cl/cl.h clops_list_case) that the device allows; each
     * program it asks for is named and refused, so it goes on to the next (or to
     * the host), and is freed. The first pass is the descriptor's own sizes'
     * narrowest case, so a small descriptor's programs come first. */
    const bool wide = wide_offsets_possible(ctx, desc);
    seen_programs seen = {fn, user, NULL, 0, false};
    clops_status st = CLOPS_SUCCESS;
    for (unsigned cases = 0; cases <= (CLOPS_LIST_WIDE_OFFSETS | CLOPS_LIST_LONG_ROWS); cases++) {
        if ((cases & CLOPS_LIST_WIDE_OFFSETS) && !wide) continue;
        clops_operator *op = NULL;
        clops_program_list_begin(name_once, &seen);
        clops_program_list_cases(cases);
        const clops_status pass = clops_operator_create(ctx, desc, &op);
        clops_program_list_end();
        clops_operator_free(op);
        if (cases == 0) st = pass; /* a descriptor the operator refuses fails in every pass */
        if (pass != CLOPS_SUCCESS && pass != CLOPS_ERROR_COMPILER_UNAVAILABLE &&
            pass != CLOPS_ERROR_FALLBACK_REFUSED)
            break;
    }
    for (size_t i = 0; i < seen.count; i++) free(seen.keys[i]);
    free(seen.keys);
    if (seen.failed && st == CLOPS_SUCCESS)
        st = clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "clops_operator_programs: out of memory");
    return st;
}

/* The listing's callback of clops_operator_own_program: the first program only
 * (after the operator's own, a refused one is followed by the portable program). */
typedef struct first_program {
    clops_program_fn fn;
    void *user;
    bool named;
} first_program;

static void name_first(void *user, const char *source_name, const char *build_options)
{
    first_program *f = user;
    if (f->named) return;
    f->named = true;
    f->fn(f->user, source_name, build_options);
}

clops_status clops_operator_own_program(clops_context *ctx, const clops_operator_desc *desc, clops_program_fn fn,
                                        void *user)
{
    const clops_status usable = listing_arguments(ctx, desc, fn, "clops_operator_own_program");
    if (usable != CLOPS_SUCCESS) return usable;
    /* One pass in which every rule reads the sizes (CLOPS_LIST_OWN): the operator is
     * planned as clops_operator_create plans it, its program is named and refused. */
    first_program f = {fn, user, false};
    clops_operator *op = NULL;
    clops_program_list_begin(name_first, &f);
    clops_program_list_cases(CLOPS_LIST_OWN);
    const clops_status st = clops_operator_create(ctx, desc, &op);
    clops_program_list_end();
    clops_operator_free(op);
    return st == CLOPS_ERROR_COMPILER_UNAVAILABLE || st == CLOPS_ERROR_FALLBACK_REFUSED ? CLOPS_SUCCESS : st;
}

bool clops_program_in_cache(clops_context *ctx, const char *source_name, const char *build_options)
{
    if (!ctx || !source_name || !build_options || ctx->backend != CLOPS_BACKEND_OPENCL ||
        ctx->cache.mode == CLOPS_CACHE_OFF)
        return false;
    char *source = NULL;
    size_t source_len = 0, key_len = 0;
    if (clops_program_source(source_name, &source, &source_len) != CLOPS_SUCCESS) return false;
    char *key = clops_program_cache_key(ctx, build_options, source, &key_len); /* program.c build()'s key */
    unsigned char *bin = NULL;
    size_t bin_len = 0;
    const bool hit = key && clops_cache_load(&ctx->cache, key, key_len, &bin, &bin_len);
    free(bin);
    free(key);
    free(source);
    return hit;
}

clops_status clops_program_source_text(const char *source_name, char *buf, size_t size, size_t *length)
{
    if (length) *length = 0;
    if (size && buf) buf[0] = '\0';
    if (!source_name || (size && !buf)) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_program_source_text: NULL argument");
    if (strcmp(source_name, "clops_common.cl") == 0 || strchr(source_name, '/'))
        return clops_fail(CLOPS_ERROR_KERNEL_SOURCE_UNAVAILABLE, "%s is not an operator's kernel file", source_name);
    char *text;
    size_t len;
    const clops_status st = clops_program_source(source_name, &text, &len);
    if (st != CLOPS_SUCCESS) return st;
    if (size) {
        const size_t n = len < size - 1 ? len : size - 1;
        memcpy(buf, text, n);
        buf[n] = '\0';
    }
    if (length) *length = len;
    free(text);
    return CLOPS_SUCCESS;
}
