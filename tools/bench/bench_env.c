/*
 * bench_env.c - `clops bench`'s environment: timing and data helpers, the
 * progress line, the OpenCL setup with the copy baseline and empty kernel,
 * and the buffers reused across configurations (bench_internal.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "bench_internal.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- small helpers ------------------------------------------------------------------- */

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median(double *v, unsigned n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

uint64_t round_up(uint64_t x, uint64_t m)
{
    return (x + m - 1) / m * m;
}

uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static void fill_random(void *p, size_t bytes, uint64_t seed)
{
    unsigned char *b = p;
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        const uint64_t v = mix64(seed + i);
        memcpy(b + i, &v, 8);
    }
    for (; i < bytes; i++) b[i] = (unsigned char)mix64(seed + i);
}

void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) fprintf(stderr, "clops bench: out of host memory (%zu bytes)\n", bytes);
    return p;
}

/* ---- the progress line --------------------------------------------------------------- */


void progress_clear(progress *p)
{
    if (p->on && p->shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        p->shown = false;
    }
}

void progress_show(progress *p, size_t done, size_t total, const bench_config *c)
{
    if (!p->on) return;
    const double t = now_seconds() - p->start;
    char what[96];
    if (c)
        snprintf(what, sizeof what, "%s %s w%u%s%.0u %.2f MiB", op_names[c->op], variant_name(c), c->width,
                 c->block ? " b" : "", c->block, (double)(c->in_bytes > c->out_bytes ? c->in_bytes : c->out_bytes) / MIB);
    else
        snprintf(what, sizeof what, "latency");
    fprintf(stderr, "\r\033[K[%zu/%zu] %s  (%d:%02d elapsed)", done + 1, total, what, (int)t / 60, (int)t % 60);
    fflush(stderr);
    p->shown = true;
}


/* ---- OpenCL setup ------------------------------------------------------------------- */

/* The copy baseline, COPY_PER_ITEM uint4s per work-item: on CPU devices each
 * work-item copies a contiguous run (measured fastest on PoCL's CPU device, ahead
 * of work-items interleaved within a group or across the range: 61 against 18 GB/s
 * for the interleaved form below, 16 MiB); elsewhere a group's work-items take
 * neighbouring uint4s at every step (bench_copy_coalesced: the runs' form reached
 * 460 GB/s on an H100 against ~2,600 for clEnqueueCopyBuffer, neighbouring
 * work-items being 256 bytes apart). And an empty kernel. */
static const char copy_source[] =
    "#define PER " STR(COPY_PER_ITEM) "\n"
    "__kernel void bench_copy(__global const uint4 *restrict src, __global uint4 *restrict dst, ulong n)\n"
    "{\n"
    "    ulong i = (ulong)get_global_id(0) * PER;\n"
    "    for (int k = 0; k < PER; k++, i++)\n"
    "        if (i < n) dst[i] = src[i];\n"
    "}\n"
    "__kernel void bench_copy_coalesced(__global const uint4 *restrict src, __global uint4 *restrict dst, ulong n)\n"
    "{\n"
    "    const ulong local_size = get_local_size(0);\n"
    "    ulong i = (ulong)get_group_id(0) * PER * local_size + get_local_id(0);\n"
    "    for (int k = 0; k < PER; k++, i += local_size)\n"
    "        if (i < n) dst[i] = src[i];\n"
    "}\n"
    "__kernel void bench_empty(void)\n"
    "{\n"
    "}\n";



int cl_fail(cl_int err, const char *what)
{
    fprintf(stderr, "clops bench: %s failed (%d)\n", what, (int)err);
    return 1;
}

int clops_fail_msg(clops_status st, const char *what)
{
    fprintf(stderr, "clops bench: %s: %s: %s\n", what, clops_status_name(st), clops_last_error_message());
    return 1;
}


int cl_setup(cl_env *e, const clops_device_info *info)
{
    cl_int err;
    e->info = *info;
    const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)info->platform, 0};
    e->context = clCreateContext(props, 1, &info->device, NULL, NULL, &err);
    if (!e->context) return cl_fail(err, "clCreateContext");
    e->queue = clCreateCommandQueue(e->context, info->device, CL_QUEUE_PROFILING_ENABLE, &err);
    if (!e->queue) return cl_fail(err, "clCreateCommandQueue(CL_QUEUE_PROFILING_ENABLE)");
    const char *src = copy_source;
    e->program = clCreateProgramWithSource(e->context, 1, &src, NULL, &err);
    if (!e->program) return cl_fail(err, "clCreateProgramWithSource");
    err = clBuildProgram(e->program, 1, &info->device, "", NULL, NULL);
    if (err != CL_SUCCESS) return cl_fail(err, "clBuildProgram(copy kernel)");
    const char *copy_name = info->type & CL_DEVICE_TYPE_CPU ? "bench_copy" : "bench_copy_coalesced";
    e->copy = clCreateKernel(e->program, copy_name, &err);
    if (!e->copy) return cl_fail(err, "clCreateKernel(bench_copy)");
    e->empty = clCreateKernel(e->program, "bench_empty", &err);
    if (!e->empty) return cl_fail(err, "clCreateKernel(bench_empty)");
    size_t kmax = 1;
    err = clGetKernelWorkGroupInfo(e->copy, info->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof kmax, &kmax, NULL);
    if (err != CL_SUCCESS) return cl_fail(err, "clGetKernelWorkGroupInfo");
    e->copy_local = kmax < COPY_LOCAL_SIZE ? kmax : COPY_LOCAL_SIZE;
    const clops_status st = clops_context_create_from_cl(e->context, info->device, e->queue, &e->ctx);
    if (st != CLOPS_SUCCESS) return clops_fail_msg(st, "clops_context_create_from_cl");
    return 0;
}

void cl_teardown(cl_env *e)
{
    clops_context_free(e->ctx);
    if (e->copy) clReleaseKernel(e->copy);
    if (e->empty) clReleaseKernel(e->empty);
    if (e->program) clReleaseProgram(e->program);
    if (e->queue) clReleaseCommandQueue(e->queue);
    if (e->context) clReleaseContext(e->context);
}

/* Grows a device buffer (e != NULL) and/or its host mirror (mirror != NULL) to
 * `need` bytes. Every page is written: the mirror with pseudo-random bytes,
 * copied to the device buffer; a device buffer without mirror with a pattern. */
static int grow(cl_env *e, cl_mem *m, size_t *cap, unsigned char **mirror, size_t need, uint64_t seed)
{
    if (need <= *cap) return 0;
    need = (size_t)round_up(need, 1u << 16);
    if (e && *m) clReleaseMemObject(*m);
    *m = NULL;
    *cap = 0;
    if (mirror) {
        free(*mirror);
        *mirror = xmalloc(need);
        if (!*mirror) return 1;
        fill_random(*mirror, need, seed);
    }
    if (e) {
        cl_int err;
        *m = clCreateBuffer(e->context, CL_MEM_READ_WRITE, need, NULL, &err);
        if (!*m) return cl_fail(err, "clCreateBuffer");
        const cl_uint pattern = 0xA5C3E10Fu;
        err = mirror ? clEnqueueWriteBuffer(e->queue, *m, CL_TRUE, 0, need, *mirror, 0, NULL, NULL)
                     : clEnqueueFillBuffer(e->queue, *m, &pattern, sizeof pattern, 0, need, 0, NULL, NULL);
        if (err == CL_SUCCESS) err = clFinish(e->queue);
        if (err != CL_SUCCESS) return cl_fail(err, "initialising a buffer");
    }
    *cap = need;
    return 0;
}

void pool_free(pool *p)
{
    cl_mem *m[] = {&p->in, &p->idx, &p->out, &p->csrc, &p->cdst};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (*m[i]) clReleaseMemObject(*m[i]);
    free(p->h_in);
    free(p->h_idx);
    free(p->h_out);
    free(p->h_ref);
    free(p->h_csrc);
    free(p->h_cdst);
    memset(p, 0, sizeof *p);
}

int pool_fit(pool *p, cl_env *e, const bench_config *c)
{
    size_t ref_cap = p->out_cap, cdst_cap = p->copy_cap;
    cl_mem none = NULL;
    if (grow(e, &p->in, &p->in_cap, &p->h_in, (size_t)c->in_bytes, 1)) return 1;
    if (grow(e, &p->idx, &p->idx_cap, &p->h_idx, (size_t)c->idx_bytes, 2)) return 1;
    if (grow(e, &p->out, &p->out_cap, &p->h_out, (size_t)c->out_bytes, 3)) return 1;
    if (grow(NULL, &none, &ref_cap, &p->h_ref, (size_t)c->out_bytes, 4)) return 1;
    /* The copies' buffers: device buffers on OpenCL, host memory on the host. */
    if (grow(e, &p->csrc, &p->copy_cap, e ? NULL : &p->h_csrc, (size_t)c->copy_bytes, 5)) return 1;
    if (grow(e, &p->cdst, &cdst_cap, e ? NULL : &p->h_cdst, (size_t)c->copy_bytes, 6)) return 1;
    return 0;
}


double event_seconds(cl_event ev)
{
    cl_ulong t0 = 0, t1 = 0;
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
    return t1 > t0 ? 1e-9 * (double)(t1 - t0) : 0.0;
}
