/* conformance_count.c - before a device's cases run, how many programs the run
 * will compile there: the cases are walked once in counting mode (conf_run.counting:
 * conf_run_case names the operator's program and runs nothing), the library
 * names the one program each operator's own plan asks for (api/aot.h
 * clops_operator_own_program: not every plan of its types, which `clops kernels
 * list` names), and each distinct program is looked up in the disk cache under
 * the key the build would look for (clops_program_in_cache), building nothing.
 * The line on stderr tells a first-time user why the first run takes long. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/aot.h"
#include "conformance.h"

typedef struct counted {
    uint64_t hash;
    char *source, *options;
} counted;

struct conf_programs {
    clops_context *ctx;
    counted *programs;
    size_t count, capacity;
    bool oom;
    struct timespec start;
};

static uint64_t fnv1a(uint64_t h, const char *s)
{
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001B3ull;
    return (h ^ 0xFF) * 0x100000001B3ull; /* a separator: ("ab", "c") is not ("a", "bc") */
}

conf_programs *conf_programs_new(clops_context *ctx)
{
    conf_programs *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->ctx = ctx;
    clock_gettime(CLOCK_MONOTONIC, &c->start);
    return c;
}

void conf_programs_free(conf_programs *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->count; i++) free(c->programs[i].source), free(c->programs[i].options);
    free(c->programs);
    free(c);
}

/* clops_program_fn: one program, kept once. */
static void add_program(void *user, const char *source, const char *options)
{
    conf_programs *c = user;
    const uint64_t h = fnv1a(fnv1a(0xCBF29CE484222325ull, source), options);
    for (size_t i = 0; i < c->count; i++)
        if (c->programs[i].hash == h && strcmp(c->programs[i].source, source) == 0 &&
            strcmp(c->programs[i].options, options) == 0)
            return;
    if (c->count == c->capacity) {
        const size_t cap = c->capacity ? 2 * c->capacity : 256;
        counted *grown = realloc(c->programs, cap * sizeof *grown);
        if (!grown) {
            c->oom = true;
            return;
        }
        c->programs = grown, c->capacity = cap;
    }
    counted *p = &c->programs[c->count];
    p->hash = h;
    p->source = strdup(source);
    p->options = strdup(options);
    if (p->source && p->options) {
        c->count++;
    } else {
        free(p->source), free(p->options);
        c->oom = true;
    }
}

void conf_programs_case(conf_programs *c, const clops_operator_desc *desc)
{
    if (c) (void)clops_operator_own_program(c->ctx, desc, add_program, c); /* an invalid one is create's to report */
}

void conf_programs_finish(conf_programs *c, conf_report *report, const clops_device_info *info)
{
    if (!c) {
        fprintf(stderr, "conformance: out of memory counting the programs to build\n");
        return;
    }
    size_t missing = 0;
    for (size_t i = 0; i < c->count; i++)
        if (!clops_program_in_cache(c->ctx, c->programs[i].source, c->programs[i].options)) missing++;
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    const double seconds = (double)(end.tv_sec - c->start.tv_sec) + (double)(end.tv_nsec - c->start.tv_nsec) * 1e-9;
    const char *name = clops_context_device_name(c->ctx);
    const char *cache = clops_context_cache_status(c->ctx);
    static const char rw[] = " (read-write)";
    const size_t len = strlen(cache);
    const bool kept = len >= sizeof rw - 1 && strcmp(cache + len - (sizeof rw - 1), rw) == 0;
    const bool compiler = info && info->compiler_available;
    if (c->oom)
        fprintf(stderr, "conformance: out of memory counting the programs to build: the count is short\n");
    if (!compiler)
        fprintf(stderr, "conformance: %zu of %zu programs are not in the program cache of device %s, which has no "
                "compiler: their cases run the portable program, or on the host\n", missing, c->count, name);
    else if (!kept)
        fprintf(stderr, "conformance: %zu of %zu programs to build on device %s (the program cache is %s: they are "
                "compiled again on every run)\n", missing, c->count, name, cache);
    else if (missing)
        fprintf(stderr, "conformance: %zu of %zu programs to build on device %s (first use compiles; cached after)\n",
                missing, c->count, name);
    else
        fprintf(stderr, "conformance: 0 of %zu programs to build on device %s (all in the program cache)\n", c->count,
                name);
    conf_report_programs(report, c->count, compiler ? missing : 0, missing, seconds);
}
