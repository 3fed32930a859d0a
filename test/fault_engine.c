/* fault_engine.c - the fault engine of test_faults (fault_engine.h): a wrapper
 * for every entry of the clops_cl table that counts calls and live objects and
 * fails the chosen call, and the problems a test collects. */
#define _POSIX_C_SOURCE 200809L
#define CLOPS_CL_API_NO_MACROS /* this file calls the real OpenCL by name */
#include "fault_engine.h"

#include <errno.h>
#include <stdarg.h>
#include <unistd.h>

const char *const fn_names[F_COUNT] = {
#define FN_NAME(f) #f,
    FAULT_FUNCTIONS(FN_NAME)
#undef FN_NAME
};

int fn_is_release(fn_id f)
{
    return f == F_clReleaseContext || f == F_clReleaseCommandQueue || f == F_clReleaseMemObject ||
           f == F_clReleaseProgram || f == F_clReleaseKernel || f == F_clReleaseEvent ||
           f == F_clSetUserEventStatus; /* completing clops's own user event fails only for a bad one */
}

int fn_is_io(fn_id f)
{
    return f >= F_io_write;
}

const char *const kind_names[K_KINDS] = {"contexts", "queues", "buffers", "programs",
                                                 "kernels", "events", "maps"};

fault_state fx;

long total_runs, total_faults, total_recovered, total_errors;

static int fault_now(fn_id f)
{
    if (!fx.armed)
        return 0;
    long n = ++fx.calls[f];
    if (f == fx.also) {
        fx.hits++;
        return 2;
    }
    if (f != fx.target || n < fx.at || (n > fx.at && !fx.persist))
        return 0;
    fx.hits++;
    return 1;
}

static void live(int kind, int delta)
{
    __atomic_fetch_add(&fx.live[kind], delta, __ATOMIC_SEQ_CST); /* also from clops's fallback worker */
}

/* cl_int functions: fail, or call the real one. */
#define W_INT(name, params, args)                                                                  \
    static cl_int CL_API_CALL w_##name params                                                      \
    {                                                                                              \
        int fault_ = fault_now(F_##name);                                                          \
        if (fault_)                                                                                \
            return fault_ == 2 ? fx.also_code : fx.code;                                           \
        return clops_cl_real.name args;                                                            \
    }

W_INT(clGetPlatformIDs, (cl_uint n, cl_platform_id *p, cl_uint *np), (n, p, np))
W_INT(clGetPlatformInfo, (cl_platform_id p, cl_platform_info i, size_t s, void *v, size_t *r), (p, i, s, v, r))
W_INT(clGetDeviceIDs, (cl_platform_id p, cl_device_type t, cl_uint n, cl_device_id *d, cl_uint *nd),
      (p, t, n, d, nd))
W_INT(clGetDeviceInfo, (cl_device_id d, cl_device_info i, size_t s, void *v, size_t *r), (d, i, s, v, r))
W_INT(clFinish, (cl_command_queue q), (q))
W_INT(clGetCommandQueueInfo, (cl_command_queue q, cl_command_queue_info i, size_t s, void *v, size_t *r),
      (q, i, s, v, r))
W_INT(clGetEventInfo, (cl_event e, cl_event_info i, size_t s, void *v, size_t *r), (e, i, s, v, r))
W_INT(clGetMemObjectInfo, (cl_mem m, cl_mem_info i, size_t s, void *v, size_t *r), (m, i, s, v, r))
W_INT(clBuildProgram,
      (cl_program p, cl_uint n, const cl_device_id *d, const char *o, void(CL_CALLBACK *cb)(cl_program, void *),
       void *u),
      (p, n, d, o, cb, u))
W_INT(clGetProgramInfo, (cl_program p, cl_program_info i, size_t s, void *v, size_t *r), (p, i, s, v, r))
W_INT(clGetProgramBuildInfo, (cl_program p, cl_device_id d, cl_program_build_info i, size_t s, void *v, size_t *r),
      (p, d, i, s, v, r))
W_INT(clSetKernelArg, (cl_kernel k, cl_uint i, size_t s, const void *v), (k, i, s, v))
W_INT(clGetKernelWorkGroupInfo,
      (cl_kernel k, cl_device_id d, cl_kernel_work_group_info i, size_t s, void *v, size_t *r), (k, d, i, s, v, r))
W_INT(clGetKernelInfo, (cl_kernel k, cl_kernel_info i, size_t s, void *v, size_t *r), (k, i, s, v, r))
W_INT(clWaitForEvents, (cl_uint n, const cl_event *e), (n, e))
W_INT(clGetEventProfilingInfo, (cl_event e, cl_profiling_info i, size_t s, void *v, size_t *r), (e, i, s, v, r))
W_INT(clFlush, (cl_command_queue q), (q))
W_INT(clSetEventCallback, (cl_event e, cl_int t, void(CL_CALLBACK *cb)(cl_event, cl_int, void *), void *u),
      (e, t, cb, u))

/* Retains and releases: counted; retains may fail, releases never do. */
#define W_RETAIN(name, type, kind)                                                                 \
    static cl_int CL_API_CALL w_##name(type o)                                                     \
    {                                                                                              \
        if (fault_now(F_##name))                                                                   \
            return fx.code;                                                                        \
        cl_int err = clops_cl_real.name(o);                                                        \
        if (err == CL_SUCCESS)                                                                     \
            live(kind, +1);                                                                        \
        return err;                                                                                \
    }
#define W_RELEASE(name, type, kind)                                                                \
    static cl_int CL_API_CALL w_##name(type o)                                                     \
    {                                                                                              \
        if (fx.armed)                                                                              \
            fx.calls[F_##name]++;                                                                  \
        cl_int err = clops_cl_real.name(o);                                                        \
        if (err == CL_SUCCESS)                                                                     \
            live(kind, -1);                                                                        \
        return err;                                                                                \
    }
W_RETAIN(clRetainContext, cl_context, K_CONTEXT)
W_RETAIN(clRetainCommandQueue, cl_command_queue, K_QUEUE)
W_RETAIN(clRetainEvent, cl_event, K_EVENT)
W_RETAIN(clRetainMemObject, cl_mem, K_MEM)
W_RELEASE(clReleaseContext, cl_context, K_CONTEXT)
W_RELEASE(clReleaseCommandQueue, cl_command_queue, K_QUEUE)
W_RELEASE(clReleaseMemObject, cl_mem, K_MEM)
W_RELEASE(clReleaseProgram, cl_program, K_PROGRAM)
W_RELEASE(clReleaseKernel, cl_kernel, K_KERNEL)
W_RELEASE(clReleaseEvent, cl_event, K_EVENT)

/* Functions that create an object and report errors through errcode_ret. */
#define W_CREATE(type, name, kind, params, args, errp)                                             \
    static type CL_API_CALL w_##name params                                                        \
    {                                                                                              \
        if (fault_now(F_##name)) {                                                                 \
            if (errp)                                                                              \
                *(errp) = fx.code;                                                                 \
            return NULL;                                                                           \
        }                                                                                          \
        type o = clops_cl_real.name args;                                                          \
        if (o)                                                                                     \
            live(kind, +1);                                                                        \
        return o;                                                                                  \
    }

W_CREATE(cl_context, clCreateContext, K_CONTEXT,
         (const cl_context_properties *p, cl_uint n, const cl_device_id *d,
          void(CL_CALLBACK *cb)(const char *, const void *, size_t, void *), void *u, cl_int *e),
         (p, n, d, cb, u, e), e)
W_CREATE(cl_command_queue, clCreateCommandQueue, K_QUEUE,
         (cl_context c, cl_device_id d, cl_command_queue_properties p, cl_int *e), (c, d, p, e), e)
W_CREATE(cl_mem, clCreateBuffer, K_MEM, (cl_context c, cl_mem_flags f, size_t s, void *h, cl_int *e),
         (c, f, s, h, e), e)
W_CREATE(cl_program, clCreateProgramWithSource, K_PROGRAM,
         (cl_context c, cl_uint n, const char **s, const size_t *l, cl_int *e), (c, n, s, l, e), e)
W_CREATE(cl_program, clCreateProgramWithBinary, K_PROGRAM,
         (cl_context c, cl_uint n, const cl_device_id *d, const size_t *l, const unsigned char **b, cl_int *bs,
          cl_int *e),
         (c, n, d, l, b, bs, e), e)
W_CREATE(cl_kernel, clCreateKernel, K_KERNEL, (cl_program p, const char *n, cl_int *e), (p, n, e), e)
W_CREATE(cl_event, clCreateUserEvent, K_EVENT, (cl_context c, cl_int *e), (c, e), e)

/* Never failed (fn_is_release), only counted. */
static cl_int CL_API_CALL w_clSetUserEventStatus(cl_event ev, cl_int status)
{
    if (fx.armed)
        fx.calls[F_clSetUserEventStatus]++;
    return clops_cl_real.clSetUserEventStatus(ev, status);
}

/* Enqueues: an event handed out is a live object. */
static void count_event(cl_int err, cl_event *ev)
{
    if (err == CL_SUCCESS && ev && *ev)
        live(K_EVENT, +1);
}

static cl_int CL_API_CALL w_clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint d, const size_t *o,
                                                   const size_t *g, const size_t *l, cl_uint n, const cl_event *w,
                                                   cl_event *ev)
{
    if (fault_now(F_clEnqueueNDRangeKernel))
        return fx.code;
    cl_int err = clops_cl_real.clEnqueueNDRangeKernel(q, k, d, o, g, l, n, w, ev);
    count_event(err, ev);
    return err;
}

static cl_int CL_API_CALL w_clEnqueueReadBuffer(cl_command_queue q, cl_mem m, cl_bool b, size_t o, size_t s, void *p,
                                                cl_uint n, const cl_event *w, cl_event *ev)
{
    if (fault_now(F_clEnqueueReadBuffer))
        return fx.code;
    cl_int err = clops_cl_real.clEnqueueReadBuffer(q, m, b, o, s, p, n, w, ev);
    count_event(err, ev);
    return err;
}

static cl_int CL_API_CALL w_clEnqueueFillBuffer(cl_command_queue q, cl_mem m, const void *pat, size_t ps, size_t o,
                                                size_t s, cl_uint n, const cl_event *w, cl_event *ev)
{
    if (fault_now(F_clEnqueueFillBuffer))
        return fx.code;
    cl_int err = clops_cl_real.clEnqueueFillBuffer(q, m, pat, ps, o, s, n, w, ev);
    count_event(err, ev);
    return err;
}

static void *CL_API_CALL w_clEnqueueMapBuffer(cl_command_queue q, cl_mem m, cl_bool b, cl_map_flags f, size_t o,
                                              size_t s, cl_uint n, const cl_event *w, cl_event *ev, cl_int *e)
{
    if (fault_now(F_clEnqueueMapBuffer)) {
        if (e)
            *e = fx.code;
        return NULL;
    }
    cl_int err = CL_SUCCESS;
    void *p = clops_cl_real.clEnqueueMapBuffer(q, m, b, f, o, s, n, w, ev, &err);
    if (e)
        *e = err;
    if (p)
        live(K_MAP, +1);
    count_event(err, ev);
    return p;
}

static cl_int CL_API_CALL w_clEnqueueUnmapMemObject(cl_command_queue q, cl_mem m, void *p, cl_uint n,
                                                    const cl_event *w, cl_event *ev)
{
    if (fault_now(F_clEnqueueUnmapMemObject))
        return fx.code;
    cl_int err = clops_cl_real.clEnqueueUnmapMemObject(q, m, p, n, w, ev);
    if (err == CL_SUCCESS)
        live(K_MAP, -1);
    count_event(err, ev);
    return err;
}

static cl_int CL_API_CALL w_clEnqueueMarkerWithWaitList(cl_command_queue q, cl_uint n, const cl_event *w,
                                                        cl_event *ev)
{
    if (fault_now(F_clEnqueueMarkerWithWaitList))
        return fx.code;
    cl_int err = clops_cl_real.clEnqueueMarkerWithWaitList(q, n, w, ev);
    count_event(err, ev);
    return err;
}

/* File-system calls: -1 with errno, as a full disk or a vanished directory gives. */
static ssize_t w_io_write(int fd, const void *buf, size_t n)
{
    if (fault_now(F_io_write)) {
        errno = ENOSPC;
        return -1;
    }
    return clops_cl_real.io_write(fd, buf, n);
}

static int w_io_fsync(int fd)
{
    if (fault_now(F_io_fsync)) {
        errno = EIO;
        return -1;
    }
    return clops_cl_real.io_fsync(fd);
}

static int w_io_rename(const char *from, const char *to)
{
    if (fault_now(F_io_rename)) {
        errno = ENOENT;
        return -1;
    }
    return clops_cl_real.io_rename(from, to);
}

static int w_io_create(const char *path, mode_t mode)
{
    if (fault_now(F_io_create)) {
        errno = EACCES;
        return -1;
    }
    return clops_cl_real.io_create(path, mode);
}

static int w_io_mkdir(const char *path, mode_t mode)
{
    if (fault_now(F_io_mkdir)) {
        errno = EACCES;
        return -1;
    }
    return clops_cl_real.io_mkdir(path, mode);
}

static int w_io_open(const char *path, int flags)
{
    if (fault_now(F_io_open)) {
        errno = EACCES;
        return -1;
    }
    return clops_cl_real.io_open(path, flags);
}

void install_wrappers(void)
{
#define FN_INSTALL(f) clops_cl.f = w_##f;
    FAULT_FUNCTIONS(FN_INSTALL)
#undef FN_INSTALL
}

void restore_table(void)
{
    clops_cl = clops_cl_real;
    fx.armed = 0;
}

void arm(fn_id target, long at, int persist, cl_int code)
{
    memset(fx.calls, 0, sizeof fx.calls);
    fx.target = target;
    fx.at = at;
    fx.persist = persist;
    fx.code = code;
    fx.hits = 0;
    fx.also = F_COUNT;
    fx.armed = 1;
}

void disarm(void)
{
    fx.armed = 0;
}

/* Codes each function is failed with. */
int codes_for(fn_id f, cl_int codes[4])
{
    int n = 0;
    if (fn_is_io(f)) {
        codes[n++] = 0; /* the errno is fixed per function */
        return n;
    }
    codes[n++] = CL_OUT_OF_RESOURCES;
    codes[n++] = CL_OUT_OF_HOST_MEMORY;
    switch (f) {
    case F_clBuildProgram: codes[n++] = CL_BUILD_PROGRAM_FAILURE; break;
    case F_clEnqueueNDRangeKernel:
        codes[n++] = CL_INVALID_WORK_GROUP_SIZE;
        codes[n++] = CL_INVALID_KERNEL_ARGS;
        break;
    case F_clCreateBuffer: codes[n++] = CL_MEM_OBJECT_ALLOCATION_FAILURE; break;
    case F_clEnqueueMapBuffer: codes[n++] = CL_MAP_FAILURE; break;
    case F_clCreateProgramWithBinary: codes[n++] = CL_INVALID_BINARY; break;
    default: break;
    }
    return n;
}

/* ---- problems, collected over a test and reported together -------------------------------- */

static char problems[8192];
static int nproblems;

void problem(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "PROBLEM: %s\n", line);
    if (nproblems++ < 20) {
        size_t len = strlen(problems);
        snprintf(problems + len, sizeof problems - len, "\n  %s", line);
    }
}

void report_problems(const char *test)
{
    if (nproblems)
        ck_abort_msg("%s: %d problem(s):%s", test, nproblems, problems);
}

void reset_problems(void)
{
    problems[0] = '\0';
    nproblems = 0;
}
