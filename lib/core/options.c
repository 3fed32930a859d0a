/* options.c - context options: the built-in defaults, the environment variables
 * that override them (the one place clops reads CLOPS_* settings), and the check
 * of a caller's struct (clops.h, "context options").
 *
 * Environment values are strict: keywords are compared without regard to case,
 * nothing else is forgiven (no surrounding spaces, no unknown words, no junk
 * after a number); a bad value is CLOPS_ERROR_INVALID_SETTING naming the
 * variable, its value and what was expected. An empty variable counts as unset. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

/* The longest deadline accepted: about 11.5 days, far past any sensible wait. */
#define MAX_TIMEOUT_SECONDS 1e6
/* CLOPS_IMPORT_LOAD_TIMEOUT: whole seconds, 1 to an hour; 120 when unset. */
#define IMPORT_LOAD_DEFAULT_SECONDS 120
#define IMPORT_LOAD_MAX_SECONDS 3600

/* The struct's sizes a caller may pass (clops.h: it grows at its end only): the
 * sizeof of each released version of the struct, as that version's header gave
 * it on this ABI, and nothing else (a size inside the struct would leave the
 * caller's later fields at their defaults; inside a field, half a pointer would
 * be copied). The versions:
 *   0.1.0  size .. timeout_seconds (sizeof(clops_context_options) today; 72 on LP64).
 * A caller compiled against a version keeps working with later libraries. A new
 * field is appended to the struct, and the sizeof of the struct up to it is
 * added here as the next version. */
#define FIELD_END(f) (offsetof(clops_context_options, f) + sizeof(((clops_context_options *)0)->f))
/* sizeof of a struct whose last field is `f`: its end, rounded up to the struct's alignment. */
#define VERSION_SIZE(f) ((FIELD_END(f) + _Alignof(clops_context_options) - 1) / _Alignof(clops_context_options) * \
                         _Alignof(clops_context_options))
static const size_t released_sizes[] = {
    VERSION_SIZE(timeout_seconds), /* 0.1.0 */
};
_Static_assert(sizeof(clops_context_options) == VERSION_SIZE(timeout_seconds),
               "a field was added to clops_context_options: add its version to released_sizes");

static bool released_size(size_t size)
{
    for (size_t i = 0; i < sizeof released_sizes / sizeof released_sizes[0]; i++)
        if (size == released_sizes[i]) return true;
    return false;
}

static clops_status bad_size(const char *who, size_t size)
{
    return clops_fail(CLOPS_ERROR_INVALID_SETTING,
                      "%s: size %zu is not one of clops_context_options' released versions (the sizeof of one; "
                      "this version's is %zu): call clops_context_options_init(&o, sizeof o)",
                      who, size, sizeof(clops_context_options));
}

void clops_options_defaults(clops_context_options *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->device = CLOPS_DEVICE_DEFAULT;
    o->cache = CLOPS_CACHE_POLICY_READ_WRITE;
    o->cache_max_bytes = CLOPS_CACHE_DEFAULT_MAX_BYTES;
    o->tuning = 1;
    o->fallback = CLOPS_FALLBACK_ALLOW;
}

clops_status clops_context_options_init(clops_context_options *opts, size_t size)
{
    if (!opts) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_context_options_init: opts is NULL");
    if (!released_size(size)) return bad_size("clops_context_options_init", size);
    clops_context_options d;
    clops_options_defaults(&d);
    memcpy(opts, &d, size < sizeof d ? size : sizeof d);
    opts->size = size;
    return CLOPS_SUCCESS;
}

static clops_status bad(const char *name, const char *value, const char *why)
{
    return clops_fail(CLOPS_ERROR_INVALID_SETTING, "%s=\"%s\": %s", name, value, why);
}

/* The index of `value` in the NULL-terminated `words` (case-insensitive), or -1. */
static int keyword(const char *value, const char *const *words)
{
    for (int i = 0; words[i]; i++)
        if (strcasecmp(value, words[i]) == 0) return i;
    return -1;
}

/* Bytes: digits, optionally followed by one of K, M, G (either case; powers of 1024). */
static clops_status parse_bytes(const char *name, const char *s, uint64_t *out)
{
    if (*s < '0' || *s > '9') return bad(name, s, "expected a number of bytes, optionally followed by K, M or G");
    char *end;
    errno = 0;
    const unsigned long long v = strtoull(s, &end, 10);
    if (errno) return bad(name, s, "the number is too large");
    uint64_t mul = 1;
    if (*end) {
        const char *units = "KMG";
        const char *u = strchr(units, *end >= 'a' && *end <= 'z' ? *end - 'a' + 'A' : *end);
        if (!u || !*u) return bad(name, s, "unknown unit (K, M or G: powers of 1024)");
        mul = 1ull << (10 * (unsigned)(u - units + 1));
        if (end[1]) return bad(name, s, "nothing may follow the unit K, M or G");
    }
    if (v && mul > UINT64_MAX / v) return bad(name, s, "the size overflows 64 bits");
    *out = v * mul;
    return CLOPS_SUCCESS;
}

/* Seconds: a decimal number >= 0 (0 means none), or "none". */
static clops_status parse_seconds(const char *name, const char *s, double *out)
{
    if (strcasecmp(s, "none") == 0) {
        *out = 0;
        return CLOPS_SUCCESS;
    }
    if (((*s < '0' || *s > '9') && *s != '.') || strpbrk(s, "xX")) return bad(name, s, "expected seconds (for example 2.5) or none");
    char *end;
    errno = 0;
    const double v = strtod(s, &end);
    if (errno || *end || !isfinite(v)) return bad(name, s, "expected seconds (for example 2.5) or none");
    if (v > MAX_TIMEOUT_SECONDS) return bad(name, s, "more than 1000000 seconds");
    *out = v;
    return CLOPS_SUCCESS;
}

/* A comma-separated list of capabilities, no spaces. */
static clops_status parse_disable(const char *name, const char *s, unsigned *out)
{
    static const char *const caps[] = {"fp64", "int64", "fp16", "compiler", "specialised", NULL};
    unsigned mask = 0;
    for (const char *p = s;;) {
        const size_t len = strcspn(p, ",");
        char word[16];
        int i = -1;
        if (len < sizeof word) {
            memcpy(word, p, len);
            word[len] = '\0';
            i = keyword(word, caps);
        }
        if (i < 0) return bad(name, s, "expected a comma-separated list of fp64, int64, fp16, compiler, specialised");
        mask |= 1u << i; /* CLOPS_CAPABILITY_* in the order of caps */
        p += len;
        if (!*p) break;
        p++;
    }
    *out = mask;
    return CLOPS_SUCCESS;
}

static clops_status parse_device(const char *name, const char *s, int *out)
{
    if (strcasecmp(s, "host") == 0) {
        *out = CLOPS_DEVICE_HOST;
        return CLOPS_SUCCESS;
    }
    char *end;
    errno = 0;
    const unsigned long v = strtoul(s, &end, 10);
    if (*s < '0' || *s > '9' || errno || *end || v > INT32_MAX)
        return clops_fail(CLOPS_ERROR_INVALID_DEVICE_SELECTION, "%s=\"%s\" is neither \"host\" nor a device index",
                          name, s);
    *out = (int)v;
    return CLOPS_SUCCESS;
}

/* The variable's value, or NULL when unset or empty. */
static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

clops_status clops_options_env(clops_context_options *o)
{
    static const char *const cache_words[] = {"rw", "ro", "off", NULL}; /* clops_cache_policy's order */
    static const char *const tune_words[] = {"off", "on", NULL};
    static const char *const fallback_words[] = {"allow", "never", NULL}; /* clops_fallback_policy's order */
    clops_context_options n = *o;
    clops_status st = CLOPS_SUCCESS;
    const char *v;
    if ((v = env("CLOPS_DEVICE"))) st = parse_device("CLOPS_DEVICE", v, &n.device);
    if (st == CLOPS_SUCCESS && (v = env("CLOPS_CACHE"))) {
        const int i = keyword(v, cache_words);
        if (i < 0) st = bad("CLOPS_CACHE", v, "expected rw, ro or off");
        else n.cache = (clops_cache_policy)i;
    }
    if (st == CLOPS_SUCCESS && (v = env("CLOPS_CACHE_DIR"))) n.cache_dir = v;
    if (st == CLOPS_SUCCESS && (v = env("CLOPS_CACHE_MAX_SIZE")))
        st = parse_bytes("CLOPS_CACHE_MAX_SIZE", v, &n.cache_max_bytes);
    if (st == CLOPS_SUCCESS && (v = env("CLOPS_TUNE"))) {
        n.tuning = keyword(v, tune_words);
        if (n.tuning < 0) st = bad("CLOPS_TUNE", v, "expected on or off");
    }
    if (st == CLOPS_SUCCESS && (v = env("CLOPS_DISABLE"))) st = parse_disable("CLOPS_DISABLE", v, &n.disable);
    if (st == CLOPS_SUCCESS && (v = env("CLOPS_FALLBACK"))) {
        const int i = keyword(v, fallback_words);
        if (i < 0) st = bad("CLOPS_FALLBACK", v, "expected allow or never");
        else n.fallback = (clops_fallback_policy)i;
    }
    if (st == CLOPS_SUCCESS && (v = env("CLOPS_TIMEOUT"))) st = parse_seconds("CLOPS_TIMEOUT", v, &n.timeout_seconds);
    if (st == CLOPS_SUCCESS) *o = n;
    return st;
}

bool clops_options_build_log(void)
{
    const char *v = env("CLOPS_BUILD_LOG");
    return v && strcmp(v, "1") == 0;
}

clops_status clops_options_import_timeout(bool from_env, int *seconds)
{
    static const char name[] = "CLOPS_IMPORT_LOAD_TIMEOUT";
    const char *v = from_env ? env(name) : NULL;
    *seconds = IMPORT_LOAD_DEFAULT_SECONDS;
    if (!v) return CLOPS_SUCCESS;
    unsigned long s = 0;
    const char *p = v;
    for (; *p >= '0' && *p <= '9' && s <= IMPORT_LOAD_MAX_SECONDS; p++) s = s * 10 + (unsigned long)(*p - '0');
    if (p == v || *p || s < 1 || s > IMPORT_LOAD_MAX_SECONDS)
        return bad(name, v, "expected whole seconds from 1 to 3600");
    *seconds = (int)s;
    return CLOPS_SUCCESS;
}

clops_status clops_context_options_from_env(clops_context_options *opts)
{
    if (!opts) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_context_options_from_env: opts is NULL");
    clops_context_options full;
    clops_status st = clops_options_resolve(opts, &full);
    if (st == CLOPS_SUCCESS) st = clops_options_env(&full);
    if (st == CLOPS_SUCCESS) memcpy(opts, &full, opts->size < sizeof full ? opts->size : sizeof full);
    return st;
}

clops_status clops_options_resolve(const clops_context_options *in, clops_context_options *out)
{
    clops_options_defaults(out);
    if (!in) return clops_options_env(out);
    if (!released_size(in->size)) return bad_size("options", in->size);
    const size_t size = out->size;
    memcpy(out, in, in->size);
    out->size = size;
    if (out->device < CLOPS_DEVICE_HOST)
        return clops_fail(CLOPS_ERROR_INVALID_DEVICE_SELECTION, "options: device %d is neither an index, "
                          "CLOPS_DEVICE_DEFAULT nor CLOPS_DEVICE_HOST", out->device);
    if ((unsigned)out->cache > CLOPS_CACHE_POLICY_OFF)
        return clops_fail(CLOPS_ERROR_INVALID_SETTING, "options: cache policy %d is unknown", (int)out->cache);
    if ((unsigned)out->fallback > CLOPS_FALLBACK_NEVER)
        return clops_fail(CLOPS_ERROR_INVALID_SETTING, "options: fallback policy %d is unknown", (int)out->fallback);
    if (out->tuning != 0 && out->tuning != 1)
        return clops_fail(CLOPS_ERROR_INVALID_SETTING, "options: tuning %d is neither 0 nor 1", out->tuning);
    const unsigned all = CLOPS_CAPABILITY_FP64 | CLOPS_CAPABILITY_INT64 | CLOPS_CAPABILITY_FP16 |
                         CLOPS_CAPABILITY_COMPILER | CLOPS_CAPABILITY_SPECIALISED;
    if (out->disable & ~all)
        return clops_fail(CLOPS_ERROR_INVALID_SETTING, "options: disable 0x%x names unknown capabilities",
                          out->disable);
    if (!(out->timeout_seconds >= 0 && out->timeout_seconds <= MAX_TIMEOUT_SECONDS))
        return clops_fail(CLOPS_ERROR_INVALID_SETTING, "options: timeout of %g seconds (0 to 1000000)",
                          out->timeout_seconds);
    if (out->host_threads > CLOPS_HOST_MAX_THREADS)
        return clops_fail(CLOPS_ERROR_INVALID_SETTING, "options: %u host threads, at most %u", out->host_threads,
                          CLOPS_HOST_MAX_THREADS);
    return CLOPS_SUCCESS;
}
