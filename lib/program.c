/* program.c - OpenCL programs: sources, build options, one build per context.
 *
 * A program is kernels/clops_common.cl followed by one operator file, built
 * with the operator's specialisation as -D options. Each (file, options) pair is
 * built once per context and kept until the context is freed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
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

/* The build log's first lines, into the thread's error message. */
static clops_status build_failure(cl_program program, cl_device_id device, const char *name, const char *options,
                                  cl_int err)
{
    char log[768] = "";
    size_t size = 0;
    if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, &size) != CL_SUCCESS &&
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) == CL_SUCCESS) {
        /* Log longer than our buffer: read all of it and keep the start. */
        char *all = malloc(size + 1);
        if (all && clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, all, NULL) == CL_SUCCESS) {
            all[size] = '\0';
            snprintf(log, sizeof log, "%s", all);
        }
        free(all);
    }
    log[sizeof log - 1] = '\0';
    return clops_fail(CLOPS_ERROR_BUILD_FAILED, "building %s with \"%s\" failed (%s): %s", name, options,
                      clops_status_name(err), log);
}

static clops_status build(clops_context *ctx, const char *name, const char *options, cl_program *out)
{
    char *common = NULL, *text = NULL;
    size_t common_len = 0, text_len = 0;
    clops_status st = load_source("clops_common.cl", &common, &common_len);
    if (st != CLOPS_SUCCESS) return st;
    st = load_source(name, &text, &text_len);
    if (st != CLOPS_SUCCESS) {
        CLOPS_SOURCE_FREE(common);
        return st;
    }
    const char *strings[2] = {common, text};
    const size_t lengths[2] = {common_len, text_len};
    cl_int err;
    cl_program program = clCreateProgramWithSource(ctx->cl_ctx, 2, strings, lengths, &err);
    CLOPS_SOURCE_FREE(common);
    CLOPS_SOURCE_FREE(text);
    if (!program) return clops_fail_cl(err, "clCreateProgramWithSource");
    err = clBuildProgram(program, 1, &ctx->device, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        st = err == CL_BUILD_PROGRAM_FAILURE ? build_failure(program, ctx->device, name, options, err)
                                             : clops_fail_cl(err, "clBuildProgram");
        clReleaseProgram(program);
        return st;
    }
    *out = program;
    return CLOPS_SUCCESS;
}

clops_status clops_program_get(clops_context *ctx, const char *source_name, const char *options, cl_program *out)
{
    const size_t key_len = strlen(source_name) + 1 + strlen(options) + 1;
    char *key = malloc(key_len);
    if (!key) return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "program key of %zu bytes", key_len);
    snprintf(key, key_len, "%s\n%s", source_name, options);

    clops_status st = CLOPS_SUCCESS;
    pthread_mutex_lock(&ctx->lock);
    clops_program_entry *e = ctx->programs;
    while (e && strcmp(e->key, key) != 0) e = e->next;
    if (!e) {
        /* Built under the lock, so two threads never compile the same program. */
        cl_program program = NULL;
        st = build(ctx, source_name, options, &program);
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
