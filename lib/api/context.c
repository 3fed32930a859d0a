/* context.c - contexts: on a chosen device, around the caller's OpenCL objects, or the host,
 * with options (core/options.c resolves them and the environment). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cl/cl.h"
#include "ops/ops.h"
#include "store/tune_db.h"

static clops_status context_alloc(clops_backend backend, const clops_context_options *o, clops_context **out)
{
    clops_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "context of %zu bytes", sizeof *ctx);
    if (pthread_mutex_init(&ctx->lock, NULL) != 0) {
        free(ctx);
        return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "context mutex");
    }
    if (pthread_mutex_init(&ctx->lost_lock, NULL) != 0) {
        pthread_mutex_destroy(&ctx->lock);
        free(ctx);
        return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "context mutex");
    }
    ctx->pid = getpid(); /* a child forked later refuses to use it (cl/wait.c, clops_context_usable) */
    ctx->backend = backend;
    ctx->options = *o;
    ctx->options.cache_dir = NULL; /* copied into ctx->cache.dir below */
    ctx->options.tuning_db = NULL;
    if (o->tuning_db && !(ctx->tuning_db = strdup(o->tuning_db))) {
        clops_context_free(ctx);
        return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "tuning database path");
    }
    if (backend == CLOPS_BACKEND_OPENCL) {
        clops_cache_config_init(&ctx->cache, o);
    } else {
        ctx->cache.mode = CLOPS_CACHE_OFF;
        snprintf(ctx->cache.status, sizeof ctx->cache.status, "not used by the host backend");
    }
    *out = ctx;
    return CLOPS_SUCCESS;
}

static clops_status create_host(const clops_context_options *o, clops_context **out)
{
    clops_status st = context_alloc(CLOPS_BACKEND_HOST, o, out);
    if (st == CLOPS_SUCCESS) strcpy((*out)->info.device_name, "host");
    return st;
}

clops_status clops_context_create_host(clops_context **out)
{
    if (!out) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_context_create_host: out is NULL");
    *out = NULL;
    clops_context_options o;
    const clops_status st = clops_options_resolve(NULL, &o);
    return st == CLOPS_SUCCESS ? create_host(&o, out) : st;
}

/* A context around the caller's objects, with options already resolved. */
static clops_status create_from_cl(cl_context context, cl_device_id device, cl_command_queue queue,
                                   const clops_context_options *o, clops_context **out)
{
    clops_driver_note_use(); /* the caller's objects: its driver is started in this process, or refused below */
    clops_status st = clops_driver_usable();
    if (st != CLOPS_SUCCESS) return st;
    cl_platform_id platform = NULL;
    cl_int err = clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL);
    if (err != CL_SUCCESS) return clops_fail_cl(err, "clGetDeviceInfo(CL_DEVICE_PLATFORM)");
    clops_context *ctx = NULL;
    st = context_alloc(CLOPS_BACKEND_OPENCL, o, &ctx);
    if (st != CLOPS_SUCCESS) return st;
    ctx->device = device; /* not retained: a device of cl_ctx (the profile and the plans read it) */
    st = clops_query_device(platform, device, 0, o->disable, &ctx->info);
    if (st == CLOPS_SUCCESS) st = clops_device_identity(&ctx->info, o->disable, &ctx->identity);
    if (st == CLOPS_SUCCESS) st = clops_device_profile_apply(ctx); /* after the identity: same cache keys */
    if (st != CLOPS_SUCCESS) {
        clops_context_free(ctx);
        return st;
    }
    if ((err = clRetainContext(context)) != CL_SUCCESS) {
        clops_context_free(ctx);
        return clops_fail_cl(err, "clRetainContext");
    }
    ctx->cl_ctx = context;
    if ((err = clRetainCommandQueue(queue)) != CL_SUCCESS) {
        clops_context_free(ctx);
        return clops_fail_cl(err, "clRetainCommandQueue");
    }
    ctx->queue = queue;
    *out = ctx;
    return CLOPS_SUCCESS;
}

/* The queue must belong to `context` and `device`: a queue of another context
 * would fail only at the first execute, with a less clear error. */
static clops_status check_queue(cl_context context, cl_device_id device, cl_command_queue queue)
{
    cl_context qctx = NULL;
    cl_device_id qdev = NULL;
    cl_int err = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof qctx, &qctx, NULL);
    if (err == CL_SUCCESS) err = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof qdev, &qdev, NULL);
    if (err != CL_SUCCESS) return clops_fail_cl(err, "clGetCommandQueueInfo");
    if (qctx != context)
        return clops_fail((clops_status)CL_INVALID_CONTEXT,
                          "clops_context_create_from_cl: the queue belongs to another cl_context");
    if (qdev != device)
        return clops_fail((clops_status)CL_INVALID_DEVICE,
                          "clops_context_create_from_cl: the queue is for another device than the one given");
    return CLOPS_SUCCESS;
}

clops_status clops_context_create_from_cl_with_options(cl_context context, cl_device_id device,
                                                       cl_command_queue queue, const clops_context_options *opts,
                                                       clops_context **out)
{
    if (!out) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_context_create_from_cl: out is NULL");
    *out = NULL;
    if (!context || !device || !queue)
        return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_context_create_from_cl: context, device and queue are required");
    clops_status st = check_queue(context, device, queue);
    if (st != CLOPS_SUCCESS) return st;
    clops_context_options o;
    st = clops_options_resolve(opts, &o);
    return st == CLOPS_SUCCESS ? create_from_cl(context, device, queue, &o, out) : st;
}

clops_status clops_context_create_from_cl(cl_context context, cl_device_id device, cl_command_queue queue,
                                          clops_context **out)
{
    return clops_context_create_from_cl_with_options(context, device, queue, NULL, out);
}

static clops_status context_on_device(const clops_device_info *info, const clops_context_options *o,
                                      clops_context **out)
{
    const clops_status usable = clops_driver_usable(); /* forked after the driver started: refused at once */
    if (usable != CLOPS_SUCCESS) return usable;
    cl_int err;
    const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)info->platform, 0};
    cl_context cl_ctx = clCreateContext(props, 1, &info->device, NULL, NULL, &err);
    if (!cl_ctx) return clops_fail_cl(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(cl_ctx, info->device, 0, &err);
    if (!queue) {
        clReleaseContext(cl_ctx);
        return clops_fail_cl(err, "clCreateCommandQueue");
    }
    clops_status st = create_from_cl(cl_ctx, info->device, queue, o, out);
    /* The clops context holds its own references now. */
    clReleaseCommandQueue(queue);
    clReleaseContext(cl_ctx);
    if (st == CLOPS_SUCCESS) (*out)->info.index = info->index;
    return st;
}

/* Device `index` of `count`, or why not (messages shared by every way of naming a device). */
static clops_status check_index(unsigned index, size_t count)
{
    if (count == 0)
        return clops_fail(CLOPS_ERROR_NO_DEVICE, "device %u requested, but no OpenCL platform has a device", index);
    if (index >= count)
        return clops_fail(CLOPS_ERROR_INVALID_DEVICE_SELECTION, "device %u requested, %zu device%s available", index,
                          count, count == 1 ? "" : "s");
    return CLOPS_SUCCESS;
}

/* The device of `o` (clops.h, clops_context_create): the one it names, else the
 * first GPU, else device 0, else the host. Fills `*infos` (freed by the caller)
 * with every device unless the host was named. */
static clops_status pick_device(const clops_context_options *o, int *is_host, unsigned *index,
                                clops_device_info **infos, size_t *count)
{
    *infos = NULL;
    *count = 0;
    *is_host = o->device == CLOPS_DEVICE_HOST;
    *index = 0;
    if (*is_host) return CLOPS_SUCCESS;
    clops_status st = clops_device_list_alloc(o->disable, infos, count);
    if (st != CLOPS_SUCCESS) return st; /* a failing OpenCL stack is an error, not "no device" */
    if (o->device >= 0) {
        *index = (unsigned)o->device;
        return check_index(*index, *count);
    }
    *is_host = *count == 0;
    for (size_t i = 0; i < *count; i++)
        if ((*infos)[i].type & CL_DEVICE_TYPE_GPU) {
            *index = (unsigned)i;
            break;
        }
    return CLOPS_SUCCESS;
}

clops_status clops_default_device(int *is_host, unsigned *index)
{
    if (!is_host || !index) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_default_device: is_host and index are required");
    clops_device_info *infos = NULL;
    size_t count;
    clops_context_options o;
    clops_status st = clops_options_resolve(NULL, &o);
    if (st == CLOPS_SUCCESS) st = pick_device(&o, is_host, index, &infos, &count);
    free(infos);
    return st;
}

/* The default device for host data (clops_devices.h): pick_device's, but the
 * host backend instead of a CPU device. */
clops_status clops_default_device_for_host_data(int *is_host, unsigned *index, clops_default_reason *reason)
{
    if (!is_host || !index)
        return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_default_device_for_host_data: is_host and index are required");
    clops_device_info *infos = NULL;
    size_t count = 0;
    clops_context_options o;
    clops_status st = clops_options_resolve(NULL, &o);
    if (st == CLOPS_SUCCESS) st = pick_device(&o, is_host, index, &infos, &count);
    if (st == CLOPS_SUCCESS) {
        clops_default_reason why;
        if (o.device != CLOPS_DEVICE_DEFAULT) why = CLOPS_DEFAULT_REASON_ENVIRONMENT;
        else if (*is_host) why = CLOPS_DEFAULT_REASON_NO_DEVICE;
        else if (infos[*index].type & CL_DEVICE_TYPE_GPU) why = CLOPS_DEFAULT_REASON_GPU;
        else if (infos[*index].type & CL_DEVICE_TYPE_CPU) why = CLOPS_DEFAULT_REASON_CPU;
        else why = CLOPS_DEFAULT_REASON_NOT_CPU;
        if (why == CLOPS_DEFAULT_REASON_CPU) *is_host = 1;
        if (*is_host) *index = 0;
        if (reason) *reason = why;
    }
    free(infos);
    return st;
}

clops_status clops_context_create_with_options(const clops_context_options *opts, clops_context **out)
{
    if (!out) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_context_create: out is NULL");
    *out = NULL;
    int host;
    unsigned index;
    clops_device_info *infos = NULL;
    size_t count;
    clops_context_options o;
    clops_status st = clops_options_resolve(opts, &o);
    if (st == CLOPS_SUCCESS) st = pick_device(&o, &host, &index, &infos, &count);
    if (st == CLOPS_SUCCESS) st = host ? create_host(&o, out) : context_on_device(&infos[index], &o, out);
    free(infos);
    return st;
}

clops_status clops_context_create_device(unsigned index, clops_context **out)
{
    if (!out) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_context_create_device: out is NULL");
    *out = NULL;
    clops_context_options o;
    clops_status st = clops_options_resolve(NULL, &o);
    if (st != CLOPS_SUCCESS) return st;
    if (index > INT32_MAX) { /* past any list (options hold an int): refused as any index past it is */
        clops_device_info *infos = NULL;
        size_t count = 0;
        st = clops_device_list_alloc(o.disable, &infos, &count);
        free(infos);
        return st == CLOPS_SUCCESS ? check_index(index, count) : st;
    }
    o.device = (int)index;
    return clops_context_create_with_options(&o, out);
}

clops_status clops_context_create(clops_context **out)
{
    return clops_context_create_with_options(NULL, out);
}

void clops_context_free(clops_context *ctx)
{
    if (!ctx) return;
    /* In a child forked after the context was created, the driver's threads are
     * gone and a release may wait for them for ever: the OpenCL objects (and the
     * program table holding them) are left to the process's exit. The mutexes are
     * not touched either: another thread of the parent may have held one at fork. */
    if (clops_context_forked(ctx)) {
        clops_tuning_release(ctx);
        free(ctx->tuning_db);
        free(ctx->identity);
        free(ctx);
        return;
    }
    clops_programs_release(ctx);
    clops_tuning_release(ctx);
    if (ctx->queue) clReleaseCommandQueue(ctx->queue);
    if (ctx->cl_ctx) clReleaseContext(ctx->cl_ctx);
    pthread_mutex_destroy(&ctx->lock);
    pthread_mutex_destroy(&ctx->lost_lock);
    free(ctx->tuning_db);
    free(ctx->identity);
    free(ctx);
}

clops_backend clops_context_backend(const clops_context *ctx)
{
    return ctx ? ctx->backend : CLOPS_BACKEND_HOST;
}

const char *clops_context_device_name(const clops_context *ctx)
{
    return ctx ? ctx->info.device_name : "";
}

cl_command_queue clops_context_queue(const clops_context *ctx)
{
    return ctx ? ctx->queue : NULL;
}

cl_context clops_context_cl_context(const clops_context *ctx)
{
    return ctx ? ctx->cl_ctx : NULL;
}

const char *clops_context_cache_status(const clops_context *ctx)
{
    return ctx ? ctx->cache.status : "";
}

const char *clops_context_tuning_db(const clops_context *ctx, char *buf, size_t size)
{
    if (!buf || !size) return buf;
    buf[0] = '\0';
    if (ctx && ctx->backend == CLOPS_BACKEND_OPENCL) clops_tuning_db_file(ctx, buf, size);
    return buf;
}

clops_status clops_context_use_program(clops_context *ctx, cl_program program)
{
    if (!ctx || !program) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_context_use_program: NULL argument");
    if (ctx->backend != CLOPS_BACKEND_OPENCL)
        return clops_fail(CLOPS_ERROR_INVALID_DEVICE_SELECTION, "clops_context_use_program: the context is the host "
                          "backend, which runs no OpenCL program");
    cl_context owner = NULL;
    cl_int err = clGetProgramInfo(program, CL_PROGRAM_CONTEXT, sizeof owner, &owner, NULL);
    if (err != CL_SUCCESS) return clops_fail_cl(err, "clGetProgramInfo(CL_PROGRAM_CONTEXT)");
    if (owner != ctx->cl_ctx)
        return clops_fail(CLOPS_ERROR_BUILD_FAILED, "clops_context_use_program: the program belongs to another "
                          "cl_context than the clops context's");
    cl_build_status built = CL_BUILD_NONE;
    err = clGetProgramBuildInfo(program, ctx->device, CL_PROGRAM_BUILD_STATUS, sizeof built, &built, NULL);
    if (err != CL_SUCCESS || built != CL_BUILD_SUCCESS)
        return clops_fail(CLOPS_ERROR_BUILD_FAILED, "clops_context_use_program: the program is not built for "
                          "device \"%s\"", ctx->info.device_name);
    clops_status st = clops_portable_check(program);
    if (st == CLOPS_SUCCESS) st = clops_program_adopt(ctx, program);
    if (st == CLOPS_SUCCESS) ctx->own_program = true;
    return st;
}
