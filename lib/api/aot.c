/* aot.c - ahead-of-time kernels: the programs an operator needs on a device, the
 * sources to compile offline, and binaries added to kernel packs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "cl/cl.h"
#include "store/cache.h"
#include "store/file.h"
#include "store/pack.h"

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

clops_status clops_operator_programs(clops_context *ctx, const clops_operator_desc *desc, clops_program_fn fn,
                                     void *user)
{
    if (!ctx || !desc || !fn) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_operator_programs: NULL argument");
    if (ctx->backend != CLOPS_BACKEND_OPENCL)
        return clops_fail(CLOPS_ERROR_WRONG_BACKEND, "clops_operator_programs: the host context has no programs");
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

/* "binaries[i] (SOURCE OPTIONS)" of a batch, or "the binary (SOURCE OPTIONS)" alone, for messages. */
static const char *item_name(char *buf, size_t size, const clops_pack_binary *b, size_t i, size_t n)
{
    char index[32] = "the binary";
    if (n > 1) snprintf(index, sizeof index, "binaries[%zu]", i);
    snprintf(buf, size, "%s (%.64s %.400s)", index, b->source_name, b->build_options);
    return buf;
}

/* Checks every item of a batch, before anything is read or opened. */
static clops_status check_binaries(const clops_pack_binary *binaries, size_t n)
{
    if (n == 0 || n > CLOPS_PACK_MAX_ENTRIES)
        return clops_fail(CLOPS_ERROR_BAD_PACK, "%zu binaries cannot be added to a pack at once (1 to %u)", n,
                          CLOPS_PACK_MAX_ENTRIES);
    for (size_t i = 0; i < n; i++) {
        const clops_pack_binary *b = &binaries[i];
        if (!b->source_name || !b->build_options || !b->binary)
            return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "binaries[%zu]: its %s is NULL", i,
                              !b->source_name ? "source_name" : !b->build_options ? "build_options" : "binary");
        char name[512];
        if (b->binary_size == 0 || b->binary_size > CLOPS_CACHE_MAX_PAYLOAD_BYTES)
            return clops_fail(CLOPS_ERROR_BAD_PACK, "%s: a binary of %zu bytes cannot go in a pack (1 to %llu)",
                              item_name(name, sizeof name, b, i, n), b->binary_size,
                              (unsigned long long)CLOPS_CACHE_MAX_PAYLOAD_BYTES);
    }
    return CLOPS_SUCCESS;
}

/* The kernel sources a batch names, each read once. */
typedef struct batch_sources {
    const char **names;
    char **texts;
    size_t count;
} batch_sources;

/* `*out`: the source of item `i`, read into `s` if new. */
static clops_status source_of(batch_sources *s, const clops_pack_binary *binaries, size_t i, size_t n,
                              const char **out)
{
    const char *name = binaries[i].source_name;
    for (size_t k = 0; k < s->count; k++)
        if (strcmp(s->names[k], name) == 0) return *out = s->texts[k], CLOPS_SUCCESS;
    char *text;
    size_t len;
    const clops_status st = clops_program_source(name, &text, &len);
    if (st != CLOPS_SUCCESS) {
        char why[1024], item[512];
        snprintf(why, sizeof why, "%s", clops_last_error_message());
        return clops_fail(st, "%s: %s", item_name(item, sizeof item, &binaries[i], i, n), why);
    }
    const char **names = realloc(s->names, (s->count + 1) * sizeof *names);
    if (names) s->names = names;
    char **texts = names ? realloc(s->texts, (s->count + 1) * sizeof *texts) : NULL;
    if (!texts) {
        free(text);
        return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "clops_pack_add_binaries: out of memory");
    }
    s->texts = texts;
    s->names[s->count] = name;
    s->texts[s->count++] = text;
    return *out = text, CLOPS_SUCCESS;
}

clops_status clops_pack_add_binaries(const char *pack_path, unsigned device_index, const clops_pack_binary *binaries,
                                     size_t n, size_t *count)
{
    if (count) *count = 0;
    if (!pack_path || !binaries) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_pack_add_binaries: NULL argument");
    clops_status st = check_binaries(binaries, n);
    if (st != CLOPS_SUCCESS) return st;
    batch_sources sources = {NULL, NULL, 0};
    const char **texts = calloc(n, sizeof *texts);
    clops_pack_new *entries = calloc(n, sizeof *entries);
    if (!texts || !entries) st = clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "clops_pack_add_binaries: out of memory");
    for (size_t i = 0; st == CLOPS_SUCCESS && i < n; i++) st = source_of(&sources, binaries, i, n, &texts[i]);
    clops_context *ctx = NULL;
    if (st == CLOPS_SUCCESS) /* one context: the device's identity is part of each key */
        st = clops_context_create_device(device_index, &ctx);
    for (size_t i = 0; st == CLOPS_SUCCESS && i < n; i++) {
        entries[i].key = clops_program_cache_key(ctx, binaries[i].build_options, texts[i], &entries[i].key_len);
        entries[i].payload = binaries[i].binary;
        entries[i].payload_len = binaries[i].binary_size;
        if (!entries[i].key)
            st = clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "cache key for %s", binaries[i].source_name);
    }
    if (st == CLOPS_SUCCESS) {
        char why[CLOPS_FILE_PATH_MAX + 256];
        clops_status why_st;
        const int added = clops_pack_add(pack_path, entries, n, &why_st, why, sizeof why);
        if (added < 0)
            st = clops_fail(why_st, "cannot add %s to the pack %s: %s", n == 1 ? "the binary" : "the binaries",
                            pack_path, why);
        else if (count)
            *count = (size_t)added;
    }
    for (size_t i = 0; entries && i < n; i++) free((char *)entries[i].key);
    for (size_t k = 0; k < sources.count; k++) free(sources.texts[k]);
    free(sources.names);
    free(sources.texts);
    free(entries);
    free(texts);
    clops_context_free(ctx);
    return st;
}

clops_status clops_pack_add_binary(const char *pack_path, unsigned device_index, const char *source_name,
                                   const char *build_options, const void *binary, size_t binary_size, size_t *count)
{
    if (count) *count = 0;
    if (!pack_path || !source_name || !build_options || !binary)
        return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_pack_add_binary: NULL argument");
    const clops_pack_binary one = {source_name, build_options, binary, binary_size};
    return clops_pack_add_binaries(pack_path, device_index, &one, 1, count);
}
