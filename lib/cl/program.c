/* program.c - OpenCL programs: sources, build options, one build per context.
 *
 * A program is kernels/clops_common.cl followed by one operator file (and the
 * file that continues it, if any: continued_files), built
 * with the operator's specialisation as -D options. Each (file, options) pair is
 * built once per context and kept until the context is freed; across processes
 * the device binary comes from the on-disk cache (store/cache_entry.c) when it has one.
 * A thread can instead list the programs an operator would get, building none
 * (clops_program_list_begin: ahead-of-time kernels, api/aot.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/cl.h"
#include "kernel_sources.h"

struct clops_program_entry {
    clops_program_entry *next;
    char *key; /* "file\noptions" */
    cl_program program;
};

#ifdef CLOPS_KERNEL_DIR
/* Kernel development: read kernels/NAME from the source tree at run time. */
static clops_status load_source(const char *name, char **text, size_t *length)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", CLOPS_KERNEL_DIR, name);
    FILE *f = fopen(path, "rb");
    if (!f) return clops_fail(CLOPS_ERROR_KERNEL_SOURCE_UNAVAILABLE, "cannot open kernel source %s", path);
    clops_status st = CLOPS_SUCCESS;
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    *text = size >= 0 && fseek(f, 0, SEEK_SET) == 0 ? malloc((size_t)size + 1) : NULL;
    if (!*text || fread(*text, 1, (size_t)size, f) != (size_t)size) {
        free(*text);
        *text = NULL;
        st = clops_fail(CLOPS_ERROR_KERNEL_SOURCE_UNAVAILABLE, "cannot read kernel source %s", path);
    } else {
        (*text)[size] = '\0';
        *length = (size_t)size;
    }
    fclose(f);
    return st;
}
#define CLOPS_SOURCE_FREE(text) free(text)
#else
static clops_status load_source(const char *name, char **text, size_t *length)
{
    for (const clops_kernel_source *s = clops_kernel_sources; s->name; s++)
        if (strcmp(s->name, name) == 0) {
            *text = (char *)s->text;
            *length = s->length;
            return CLOPS_SUCCESS;
        }
    return clops_fail(CLOPS_ERROR_KERNEL_SOURCE_UNAVAILABLE, "no embedded kernel source named %s", name);
}
#define CLOPS_SOURCE_FREE(text) ((void)(text))
#endif

/* The program's whole build log (malloc'ed, NUL-terminated), or NULL. */
static char *build_log(cl_program program, cl_device_id device)
{
    size_t size = 0;
    if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) != CL_SUCCESS) return NULL;
    char *log = malloc(size + 1);
    if (log && clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log, NULL) != CL_SUCCESS) size = 0;
    if (log) log[size] = '\0';
    return log;
}

/* The build log's first lines, into the thread's error message. */
static clops_status build_failure(cl_program program, cl_device_id device, const char *name, const char *options,
                                  cl_int err)
{
    char *log = build_log(program, device);
    const clops_status st = clops_fail(CLOPS_ERROR_BUILD_FAILED, "building %s with \"%s\" failed (%s): %.767s", name,
                                       options, clops_status_name(err), log ? log : "");
    free(log);
    return st;
}

/* Whether builds show the compiler's warnings: kernel development (CLOPS_KERNELS_FROM_DISK builds), or
 * CLOPS_BUILD_LOG=1 in the environment (the CLI's --verbose sets it). Otherwise clBuildProgram gets
 * OpenCL's -w (no warnings): a driver's compiler may write to the process's stderr while it builds
 * (PoCL's clang: "N warnings generated."), which is not clops's to print. -w changes no binary: it goes
 * to clBuildProgram only, not into the cache key or the options an operator reports. */
static int show_build_log(void)
{
#ifdef CLOPS_KERNEL_DIR
    return 1;
#else
    return clops_options_build_log();
#endif
}

/* With show_build_log: a build's log, where it has one, on stderr. */
static void show_warnings(cl_program program, cl_device_id device, const char *name, const char *options)
{
    char *log = build_log(program, device);
    if (log && log[strspn(log, " \t\r\n")] != '\0')
        fprintf(stderr, "clops: building %s with \"%s\": the compiler's log:\n%s\n", name, options, log);
    free(log);
}

/* Each program's files, concatenated in this order (kept apart only to stay
 * readable, or shared: unpool_words.cl is MaxUnpooling's status words in both
 * max_unpooling.cl's specialised programs and the portable program). */
#define MAX_PARTS 6
static const struct {
    const char *name, *parts[MAX_PARTS];
} program_files[] = {
    {"depth_space.cl", {"clops_common.cl", "depth_space.cl"}},
    {"max_unpooling.cl",
     {"clops_common.cl", "unpool_words.cl", "max_unpooling.cl", "max_unpooling_sort.cl", "max_unpooling_general.cl",
      "max_unpooling_pool.cl"}},
    {CLOPS_PORTABLE_SOURCE, {"unpool_words.cl", "portable.cl"}},
};

/* The program's whole source: its files (program_files) one after another. */
clops_status clops_program_source(const char *name, char **out, size_t *out_len)
{
    const char *const *names = NULL;
    for (size_t i = 0; i < sizeof program_files / sizeof program_files[0] && !names; i++)
        if (strcmp(program_files[i].name, name) == 0) names = program_files[i].parts;
    if (!names) return clops_fail(CLOPS_ERROR_KERNEL_SOURCE_UNAVAILABLE, "no program named %s", name);
    size_t nparts = 0;
    while (nparts < MAX_PARTS && names[nparts]) nparts++;
    char *parts[MAX_PARTS] = {NULL};
    size_t lens[MAX_PARTS] = {0}, total = 0;
    clops_status st = CLOPS_SUCCESS;
    for (size_t i = 0; i < nparts && st == CLOPS_SUCCESS; i++) {
        st = load_source(names[i], &parts[i], &lens[i]);
        total += lens[i] + 1; /* and a newline between parts, or the final NUL */
    }
    if (st == CLOPS_SUCCESS) {
        *out = malloc(total);
        if (!*out) {
            st = clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "kernel source of %zu bytes", total);
        } else {
            size_t at = 0;
            for (size_t i = 0; i < nparts; i++) {
                memcpy(*out + at, parts[i], lens[i]);
                at += lens[i];
                if (i + 1 < nparts) (*out)[at++] = '\n';
            }
            (*out)[at] = '\0';
            *out_len = at;
        }
    }
    for (size_t i = 0; i < nparts; i++)
        if (parts[i]) CLOPS_SOURCE_FREE(parts[i]);
    return st;
}

/* The cache key: everything that decides the binary, as text. */
char *clops_program_cache_key(const clops_context *ctx, const char *options, const char *source, size_t *len)
{
    const size_t n = strlen(ctx->identity) + strlen(options) + strlen(source) + 96;
    char *key = malloc(n);
    if (!key) return NULL;
    const int w = snprintf(key, n, "clops-cache-format %u\nclops %s\n%s\noptions: %s\nsource:\n%s",
                           CLOPS_CACHE_FORMAT_VERSION, CLOPS_VERSION_STRING, ctx->identity, options, source);
    *len = w > 0 ? (size_t)w : 0;
    return key;
}

clops_status clops_program_from_binary(clops_context *ctx, const char *options, const unsigned char *bin, size_t len,
                                       cl_program *out)
{
    cl_int err, bin_status = CL_SUCCESS;
    cl_program program = clCreateProgramWithBinary(ctx->cl_ctx, 1, &ctx->device, &len, &bin, &bin_status, &err);
    if (!program || bin_status != CL_SUCCESS) {
        if (program) clReleaseProgram(program);
        return clops_fail_cl(program ? bin_status : err, "clCreateProgramWithBinary");
    }
    err = clBuildProgram(program, 1, &ctx->device, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        clReleaseProgram(program);
        return clops_fail_cl(err, "clBuildProgram(binary)");
    }
    *out = program;
    return CLOPS_SUCCESS;
}

static clops_status build_from_source(clops_context *ctx, const char *name, const char *options, const char *source,
                                      size_t source_len, cl_program *out)
{
    cl_int err;
    const char *strings[1] = {source};
    const int show = show_build_log();
    const size_t quiet_len = strlen(options) + 4;
    char *quiet = malloc(quiet_len);
    if (!quiet) return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "build options of %zu bytes", quiet_len);
    snprintf(quiet, quiet_len, "%s%s", show ? "" : "-w ", options);
    cl_program program = clCreateProgramWithSource(ctx->cl_ctx, 1, strings, &source_len, &err);
    if (program) err = clBuildProgram(program, 1, &ctx->device, quiet, NULL, NULL);
    free(quiet);
    if (!program) return clops_fail_cl(err, "clCreateProgramWithSource");
    if (err == CL_SUCCESS && show) show_warnings(program, ctx->device, name, options);
    if (err != CL_SUCCESS) {
        const clops_status st = err == CL_BUILD_PROGRAM_FAILURE ? build_failure(program, ctx->device, name, options, err)
                                                                : clops_fail_cl(err, "clBuildProgram");
        clReleaseProgram(program);
        return st;
    }
    *out = program;
    return CLOPS_SUCCESS;
}

/* Keeps the device binary of a freshly compiled program on disk. Reading
 * CL_PROGRAM_BINARIES costs no compile (measured on PoCL: under 1 ms). */
static void store_binary(const clops_context *ctx, cl_program program, const char *key, size_t key_len)
{
    size_t size = 0;
    if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS || size == 0)
        return;
    unsigned char *bin = malloc(size);
    if (bin && clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) == CL_SUCCESS)
        clops_cache_store(&ctx->cache, key, key_len, bin, size);
    free(bin);
}

/* Disk cache first (an entry the driver refuses is removed), then the compiler. */
static clops_status build(clops_context *ctx, const char *name, const char *options, cl_program *out,
                          const char **origin)
{
    char *source = NULL, *key = NULL;
    size_t source_len = 0, key_len = 0;
    clops_status st = clops_program_source(name, &source, &source_len);
    if (st != CLOPS_SUCCESS) return st;
    if (ctx->cache.mode != CLOPS_CACHE_OFF) key = clops_program_cache_key(ctx, options, source, &key_len);
    unsigned char *bin = NULL;
    size_t bin_len = 0;
    st = CLOPS_ERROR_CACHE_UNAVAILABLE;
    if (key && clops_cache_load(&ctx->cache, key, key_len, &bin, &bin_len)) {
        st = clops_program_from_binary(ctx, options, bin, bin_len, out);
        if (st == CLOPS_SUCCESS) *origin = "disk cache";
        else clops_cache_discard(&ctx->cache, key, key_len);
        free(bin);
    }
    if (st != CLOPS_SUCCESS) {
        if (!ctx->info.compiler_available) {
            st = clops_fail(CLOPS_ERROR_COMPILER_UNAVAILABLE,
                            "%s has no compiler and no cached binary of %s with \"%s\" (import a kernel pack)",
                            ctx->info.device_name, name, options);
        } else {
            st = build_from_source(ctx, name, options, source, source_len, out);
            if (st == CLOPS_SUCCESS) {
                *origin = "compiled";
                if (key) store_binary(ctx, *out, key, key_len);
            }
        }
    }
    free(key);
    free(source);
    return st;
}

/* This thread's listing (clops_program_list_begin), or NULL. */
static _Thread_local struct {
    clops_program_fn fn;
    void *user;
    unsigned cases; /* clops_list_case bits of this pass */
} listing;

void clops_program_list_cases(unsigned cases)
{
    listing.cases = cases;
}

int clops_program_list_case(clops_list_case c)
{
    if (!listing.fn || (listing.cases & CLOPS_LIST_OWN)) return -1; /* the sizes decide */
    return (listing.cases & (unsigned)c) != 0;
}

void clops_program_list_begin(clops_program_fn fn, void *user)
{
    listing.fn = fn;
    listing.user = user;
}

void clops_program_list_end(void)
{
    listing.fn = NULL;
    listing.user = NULL;
    listing.cases = 0;
}

clops_status clops_program_get(clops_context *ctx, const char *source_name, const char *options, cl_program *out,
                               const char **origin)
{
    if (listing.fn) { /* name the program, build nothing: the caller goes on as without a compiler */
        listing.fn(listing.user, source_name, options);
        return clops_fail(CLOPS_ERROR_COMPILER_UNAVAILABLE, "listing programs only: %s with \"%s\" not built",
                          source_name, options);
    }
    const clops_status usable = clops_context_usable(ctx); /* no build on a lost device, or after fork */
    if (usable != CLOPS_SUCCESS) return usable;
    const size_t key_len = strlen(source_name) + 1 + strlen(options) + 1;
    char *key = malloc(key_len);
    if (!key) return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "program key of %zu bytes", key_len);
    snprintf(key, key_len, "%s\n%s", source_name, options);

    clops_status st = CLOPS_SUCCESS;
    pthread_mutex_lock(&ctx->lock);
    clops_program_entry *e = ctx->programs;
    while (e && strcmp(e->key, key) != 0) e = e->next;
    *origin = "in-process";
    if (!e) {
        /* Built under the lock, so two threads never compile the same program. */
        cl_program program = NULL;
        st = build(ctx, source_name, options, &program, origin);
        if (st == CLOPS_SUCCESS) {
            e = malloc(sizeof *e);
            if (!e) {
                clReleaseProgram(program);
                st = clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "program table entry");
            } else {
                e->key = key, key = NULL;
                e->program = program;
                e->next = ctx->programs;
                ctx->programs = e;
            }
        }
    }
    if (st == CLOPS_SUCCESS) *out = e->program;
    pthread_mutex_unlock(&ctx->lock);
    free(key);
    return st;
}

clops_status clops_program_adopt(clops_context *ctx, cl_program program)
{
    static const char key[] = CLOPS_PORTABLE_SOURCE "\n" CLOPS_PORTABLE_OPTIONS;
    const cl_int err = clRetainProgram(program);
    if (err != CL_SUCCESS) return clops_fail_cl(err, "clRetainProgram");
    pthread_mutex_lock(&ctx->lock);
    clops_program_entry *e = ctx->programs;
    while (e && strcmp(e->key, key) != 0) e = e->next;
    if (!e && (e = calloc(1, sizeof *e)) && !(e->key = malloc(sizeof key))) free(e), e = NULL;
    if (e && !e->program) {
        memcpy(e->key, key, sizeof key);
        e->next = ctx->programs;
        ctx->programs = e;
    }
    if (e) {
        if (e->program) clReleaseProgram(e->program);
        e->program = program;
    }
    pthread_mutex_unlock(&ctx->lock);
    if (e) return CLOPS_SUCCESS;
    clReleaseProgram(program);
    return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "program table entry");
}

void clops_programs_release(clops_context *ctx)
{
    clops_program_entry *e = ctx->programs;
    while (e) {
        clops_program_entry *next = e->next;
        clReleaseProgram(e->program);
        free(e->key);
        free(e);
        e = next;
    }
    ctx->programs = NULL;
}
