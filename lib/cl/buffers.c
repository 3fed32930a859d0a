/* buffers.c - cl_mem buffers as the operators see them: checked against a
 * validated operator's spans, created from host memory, mapped for the host
 * kernels and unmapped again. */
#include <string.h>

#include "cl/cl.h"

/* CL_MEM_SIZE of a buffer and the buffer it is carved from (itself if none). */
static clops_status mem_extent(cl_mem m, size_t *size, cl_mem *parent, size_t *offset)
{
    cl_int err = clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof *size, size, NULL);
    if (err != CL_SUCCESS) return clops_fail_cl(err, "clGetMemObjectInfo(CL_MEM_SIZE)");
    *parent = NULL;
    *offset = 0;
    err = clGetMemObjectInfo(m, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof *parent, parent, NULL);
    if (err == CL_SUCCESS && *parent)
        err = clGetMemObjectInfo(m, CL_MEM_OFFSET, sizeof *offset, offset, NULL);
    if (err != CL_SUCCESS) return clops_fail_cl(err, "clGetMemObjectInfo(CL_MEM_OFFSET)");
    if (!*parent) *parent = m;
    return CLOPS_SUCCESS;
}


clops_status clops_check_cl_buffers(const clops_op_params *p, const clops_buffers *b)
{
    const clops_tensor *t[3] = {&p->input, &p->indices, &p->output};
    const cl_mem m[3] = {b->input, b->indices, b->output};
    static const char *names[3] = {"input", "indices", "output"};
    size_t size[3] = {0}, offset[3] = {0};
    cl_mem parent[3] = {NULL};
    for (int i = 0; i < 3; i++) {
        if (t[i]->span_bytes == 0) continue; /* no indices tensor: all zero */
        if (!m[i])
            return clops_fail(CLOPS_ERROR_MISSING_BUFFER, "%s cl_mem is NULL but the tensor spans %llu bytes",
                              names[i], (unsigned long long)t[i]->span_bytes);
        clops_status st = mem_extent(m[i], &size[i], &parent[i], &offset[i]);
        if (st != CLOPS_SUCCESS) return st;
        if (size[i] < t[i]->span_bytes)
            return clops_fail(CLOPS_ERROR_BUFFER_TOO_SMALL, "%s cl_mem has %zu bytes, its tensor spans %llu",
                              names[i], size[i], (unsigned long long)t[i]->span_bytes);
    }
    for (int i = 0; i < 2; i++) /* output against each input, through sub-buffers */
        if (parent[i] && parent[2] && parent[i] == parent[2] && offset[i] < offset[2] + t[2]->span_bytes &&
            offset[2] < offset[i] + t[i]->span_bytes)
            return clops_fail(CLOPS_ERROR_ALIASED_BUFFERS, "output cl_mem overlaps the %s cl_mem", names[i]);
    return CLOPS_SUCCESS;
}


/* Buffers and wait events must belong to the operator's cl_context: OpenCL
 * would refuse them only at an enqueue, after clops may have started work. */
clops_status clops_check_same_context(cl_context ctx, const clops_op_params *p, const clops_buffers *b,
                                      cl_uint nwait, const cl_event *wait)
{
    const clops_tensor *t[3] = {&p->input, &p->indices, &p->output};
    const cl_mem m[3] = {b->input, b->indices, b->output};
    static const char *names[3] = {"input", "indices", "output"};
    for (int i = 0; i < 3; i++) {
        cl_context c = NULL;
        if (t[i]->span_bytes == 0) continue; /* only the buffers the operator uses */
        const cl_int err = clGetMemObjectInfo(m[i], CL_MEM_CONTEXT, sizeof c, &c, NULL);
        if (err != CL_SUCCESS) return clops_fail_cl(err, "clGetMemObjectInfo(CL_MEM_CONTEXT)");
        if (c != ctx)
            return clops_fail((clops_status)CL_INVALID_CONTEXT, "the %s cl_mem belongs to another cl_context",
                              names[i]);
    }
    for (cl_uint i = 0; i < nwait; i++) {
        cl_context c = NULL;
        const cl_int err = wait[i] ? clGetEventInfo(wait[i], CL_EVENT_CONTEXT, sizeof c, &c, NULL) : CL_INVALID_EVENT;
        if (err != CL_SUCCESS) return clops_fail_cl(err, "clGetEventInfo(CL_EVENT_CONTEXT) of a wait event");
        if (c != ctx)
            return clops_fail((clops_status)CL_INVALID_CONTEXT, "wait event %u belongs to another cl_context", i);
    }
    return CLOPS_SUCCESS;
}


/* A device buffer holding `bytes` of `host` (or uninitialised when host is NULL). */
clops_status clops_device_buffer(clops_context *ctx, cl_mem_flags flags, const void *host, size_t bytes, cl_mem *out)
{
    cl_int err;
    *out = NULL;
    if (bytes == 0) return CLOPS_SUCCESS;
    *out = clCreateBuffer(ctx->cl_ctx, flags | (host ? CL_MEM_COPY_HOST_PTR : 0), bytes, (void *)host, &err);
    return *out ? CLOPS_SUCCESS : clops_fail_cl(err, "clCreateBuffer");
}


/* Maps `bytes` of `m` after the wait list (blocking). */
static clops_status map_buffer(cl_command_queue q, cl_mem m, cl_map_flags flags, size_t bytes, cl_uint nwait,
                               const cl_event *wait, void **out)
{
    cl_int err;
    *out = NULL;
    if (bytes == 0) return CLOPS_SUCCESS;
    *out = clEnqueueMapBuffer(q, m, CL_TRUE, flags, 0, bytes, nwait, nwait ? wait : NULL, NULL, &err);
    return *out ? CLOPS_SUCCESS : clops_fail_cl(err, "clEnqueueMapBuffer");
}

clops_status clops_map_buffers(cl_command_queue q, const clops_op_params *p, const clops_buffers *b, cl_uint nwait,
                               const cl_event *wait, clops_host_buffers *out)
{
    memset(out, 0, sizeof *out);
    void *x = NULL, *idx = NULL, *y = NULL;
    clops_status st = map_buffer(q, b->input, CL_MAP_READ, (size_t)p->input.span_bytes, nwait, wait, &x);
    if (st == CLOPS_SUCCESS)
        st = map_buffer(q, b->indices, CL_MAP_READ, (size_t)p->indices.span_bytes, nwait, wait, &idx);
    /* READ as well as WRITE: a strided output's gaps must come back unchanged. */
    if (st == CLOPS_SUCCESS)
        st = map_buffer(q, b->output, CL_MAP_READ | CL_MAP_WRITE, (size_t)p->output.span_bytes, nwait, wait, &y);
    *out = (clops_host_buffers){x, (size_t)p->input.span_bytes, idx, (size_t)p->indices.span_bytes, y,
                                (size_t)p->output.span_bytes};
    return st;
}

void clops_unmap_buffers(cl_command_queue q, const clops_buffers *b, const clops_host_buffers *mapped)
{
    if (mapped->output) clEnqueueUnmapMemObject(q, b->output, mapped->output, 0, NULL, NULL);
    if (mapped->indices) clEnqueueUnmapMemObject(q, b->indices, (void *)mapped->indices, 0, NULL, NULL);
    if (mapped->input) clEnqueueUnmapMemObject(q, b->input, (void *)mapped->input, 0, NULL, NULL);
}
