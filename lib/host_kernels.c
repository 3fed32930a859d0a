/* host_kernels.c - the operators in plain C: the host backend and the fallback.
 *
 * Elements are moved as fixed-width words through memcpy (which compiles to a
 * single load and store), so every type is bit-exact and no alignment is
 * assumed of the caller's pointers. */
#include <string.h>

#include "internal.h"

typedef struct { uint64_t w[2]; } u128;

/* Strided row copies, one instance per element width:
 *   dst[k * dst_step] = src[k * src_step] for k in [0, n). Steps in elements. */
#define CLOPS_DEFINE_ROW_COPY(T, NAME)                                                               \
    static void NAME(uint8_t *dst, uint64_t dst_step, const uint8_t *src, uint64_t src_step,         \
                     uint64_t n)                                                                     \
    {                                                                                                \
        if (dst_step == 1 && src_step == 1) {                                                        \
            memcpy(dst, src, (size_t)n * sizeof(T));                                                 \
            return;                                                                                  \
        }                                                                                            \
        for (uint64_t k = 0; k < n; k++) {                                                           \
            T v;                                                                                     \
            memcpy(&v, src + (size_t)(k * src_step) * sizeof(T), sizeof(T));                         \
            memcpy(dst + (size_t)(k * dst_step) * sizeof(T), &v, sizeof(T));                         \
        }                                                                                            \
    }
CLOPS_DEFINE_ROW_COPY(uint8_t, copy_row_1)
CLOPS_DEFINE_ROW_COPY(uint16_t, copy_row_2)
CLOPS_DEFINE_ROW_COPY(uint32_t, copy_row_4)
CLOPS_DEFINE_ROW_COPY(uint64_t, copy_row_8)
CLOPS_DEFINE_ROW_COPY(u128, copy_row_16)

typedef void (*row_copy_fn)(uint8_t *, uint64_t, const uint8_t *, uint64_t, uint64_t);

static row_copy_fn row_copy_for(size_t elem_size)
{
    switch (elem_size) {
    case 1: return copy_row_1;
    case 2: return copy_row_2;
    case 4: return copy_row_4;
    case 8: return copy_row_8;
    default: return copy_row_16;
    }
}

static size_t byte_offset(const clops_tensor *t, uint64_t n, uint64_t c, uint64_t h, uint64_t w)
{
    return (size_t)((n * t->strides[0] + c * t->strides[1] + h * t->strides[2] + w * t->strides[3]) * t->elem_size);
}

/* DepthToSpace: for output row (n, co, ho), i = ho % b is fixed; for each column
 * phase j the output elements wo = w*b + j come from one input row. */
static void depth_to_space(const clops_op_params *p, const uint8_t *in, uint8_t *out)
{
    const clops_tensor *x = &p->input, *y = &p->output;
    const uint64_t b = p->block_size, cout = y->sizes[1], win = x->sizes[3];
    const row_copy_fn copy = row_copy_for(x->elem_size);
    for (uint64_t n = 0; n < y->sizes[0]; n++)
        for (uint64_t co = 0; co < cout; co++)
            for (uint64_t ho = 0; ho < y->sizes[2]; ho++) {
                const uint64_t h = ho / b, i = ho % b;
                for (uint64_t j = 0; j < b; j++) {
                    const uint64_t ci = p->order == CLOPS_ORDER_DEPTH_COLUMN_ROW ? (i * b + j) * cout + co
                                                                                 : co * b * b + i * b + j;
                    copy(out + byte_offset(y, n, co, ho, j), y->strides[3] * b, in + byte_offset(x, n, ci, h, 0),
                         x->strides[3], win);
                }
            }
}

/* SpaceToDepth: output row (n, co, ho) reads every b-th element of one input row. */
static void space_to_depth(const clops_op_params *p, const uint8_t *in, uint8_t *out)
{
    const clops_tensor *x = &p->input, *y = &p->output;
    const uint64_t b = p->block_size, bb = b * b, cin = x->sizes[1];
    const row_copy_fn copy = row_copy_for(x->elem_size);
    for (uint64_t n = 0; n < y->sizes[0]; n++)
        for (uint64_t co = 0; co < y->sizes[1]; co++) {
            const bool dcr = p->order == CLOPS_ORDER_DEPTH_COLUMN_ROW;
            const uint64_t c = dcr ? co % cin : co / bb, blk = dcr ? co / cin : co % bb;
            const uint64_t i = blk / b, j = blk % b;
            for (uint64_t ho = 0; ho < y->sizes[2]; ho++)
                copy(out + byte_offset(y, n, co, ho, 0), y->strides[3], in + byte_offset(x, n, c, ho * b + i, j),
                     x->strides[3] * b, y->sizes[3]);
        }
}

int64_t clops_read_index(const clops_tensor *t, const void *base, const uint64_t coord[4])
{
    const uint8_t *p = (const uint8_t *)base + byte_offset(t, coord[0], coord[1], coord[2], coord[3]);
    if (t->type == CLOPS_DATA_TYPE_UINT32) {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    int64_t v; /* UINT64 past INT64_MAX reads as negative: out of range either way */
    memcpy(&v, p, 8);
    return v;
}

/* Calls body for each logical element (row-major) with coords c[4]. */
#define CLOPS_FOR_EACH_ELEMENT(sizes, c)                                                             \
    for (c[0] = 0; c[0] < (sizes)[0]; c[0]++)                                                        \
        for (c[1] = 0; c[1] < (sizes)[1]; c[1]++)                                                    \
            for (c[2] = 0; c[2] < (sizes)[2]; c[2]++)                                                \
                for (c[3] = 0; c[3] < (sizes)[3]; c[3]++)

/* Flat output index -> byte offset through the output's strides. */
static size_t unflatten_offset(const clops_tensor *y, uint64_t flat)
{
    if (y->packed) return (size_t)(flat * y->elem_size);
    const uint64_t w = flat % y->sizes[3];
    flat /= y->sizes[3];
    const uint64_t h = flat % y->sizes[2];
    flat /= y->sizes[2];
    const uint64_t c = flat % y->sizes[1];
    return byte_offset(y, flat / y->sizes[1], c, h, w);
}

static clops_status max_unpooling(const clops_op_params *p, const uint8_t *in, const uint8_t *idx, uint8_t *out)
{
    const clops_tensor *x = &p->input, *y = &p->output;
    uint64_t c[4];
    /* Every index is checked before the output is touched. */
    CLOPS_FOR_EACH_ELEMENT(x->sizes, c) {
        const int64_t k = clops_read_index(&p->indices, idx, c);
        if (k < 0 || (uint64_t)k >= y->count)
            return clops_fail(CLOPS_ERROR_INDEX_OUT_OF_RANGE,
                              "index %lld at input [%llu, %llu, %llu, %llu] is outside the output's %llu elements",
                              (long long)k, (unsigned long long)c[0], (unsigned long long)c[1],
                              (unsigned long long)c[2], (unsigned long long)c[3], (unsigned long long)y->count);
    }
    clops_host_unpool_scatter(p, in, idx, out);
    return CLOPS_SUCCESS;
}

void clops_host_unpool_scatter(const clops_op_params *p, const void *in_, const void *idx, void *out_)
{
    const clops_tensor *x = &p->input, *y = &p->output;
    const uint8_t *in = in_;
    uint8_t *out = out_;
    uint64_t c[4];
    if (y->count == 0) return;
    if (y->packed) {
        memset(out, 0, (size_t)y->span_bytes);
    } else {
        CLOPS_FOR_EACH_ELEMENT(y->sizes, c) memset(out + byte_offset(y, c[0], c[1], c[2], c[3]), 0, y->elem_size);
    }
    /* In row-major input order, so the last duplicate wins. */
    CLOPS_FOR_EACH_ELEMENT(x->sizes, c) {
        const int64_t k = clops_read_index(&p->indices, idx, c);
        if (k >= 0 && (uint64_t)k < y->count)
            memcpy(out + unflatten_offset(y, (uint64_t)k), in + byte_offset(x, c[0], c[1], c[2], c[3]), x->elem_size);
    }
}

clops_status clops_host_execute(const clops_op_params *p, const clops_host_buffers *b)
{
    switch (p->type) {
    case CLOPS_OPERATOR_DEPTH_TO_SPACE:
        if (p->output.count) depth_to_space(p, b->input, b->output);
        return CLOPS_SUCCESS;
    case CLOPS_OPERATOR_SPACE_TO_DEPTH:
        if (p->output.count) space_to_depth(p, b->input, b->output);
        return CLOPS_SUCCESS;
    case CLOPS_OPERATOR_MAX_UNPOOLING:
        return max_unpooling(p, b->input, b->indices, b->output);
    }
    return clops_fail(CLOPS_ERROR_INTERNAL, "host_execute: operator type %d", (int)p->type);
}

clops_status clops_host_run(const clops_operator_desc *desc, const clops_host_buffers *buffers)
{
    clops_op_params p;
    clops_status st = clops_validate_operator(desc, &p);
    if (st == CLOPS_SUCCESS) st = clops_check_host_buffers(&p, buffers);
    if (st == CLOPS_SUCCESS) st = clops_host_execute(&p, buffers);
    return st;
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

/* Counts the indices that are negative or past the output. */
static uint64_t bad_indices(const clops_op_params *p, const void *idx)
{
    uint64_t c[4], bad = 0;
    CLOPS_FOR_EACH_ELEMENT(p->input.sizes, c) {
        const int64_t k = clops_read_index(&p->indices, idx, c);
        bad += k < 0 || (uint64_t)k >= p->output.count;
    }
    return bad;
}

clops_status clops_host_execute_cl(clops_operator *op, const clops_buffers *b, cl_uint nwait, const cl_event *wait,
                                   cl_event *event)
{
    const clops_op_params *p = &op->params;
    const bool unpool = p->type == CLOPS_OPERATOR_MAX_UNPOOLING;
    cl_command_queue q = op->ctx->queue;
    void *x = NULL, *idx = NULL, *y = NULL;
    clops_status st = map_buffer(q, b->input, CL_MAP_READ, (size_t)p->input.span_bytes, nwait, wait, &x);
    if (st == CLOPS_SUCCESS && unpool)
        st = map_buffer(q, b->indices, CL_MAP_READ, (size_t)p->indices.span_bytes, nwait, wait, &idx);
    /* READ as well as WRITE: a strided output's gaps must come back unchanged. */
    if (st == CLOPS_SUCCESS)
        st = map_buffer(q, b->output, CL_MAP_READ | CL_MAP_WRITE, (size_t)p->output.span_bytes, nwait, wait, &y);
    uint64_t bad = 0;
    if (st == CLOPS_SUCCESS) {
        if (unpool) {
            /* As on the device: bad indices are skipped, everything else written. */
            bad = bad_indices(p, idx);
            clops_host_unpool_scatter(p, x, idx, y);
        } else {
            const clops_host_buffers hb = {x, (size_t)p->input.span_bytes, NULL, 0, y, (size_t)p->output.span_bytes};
            st = clops_host_execute(p, &hb);
        }
    }
    if (y) clEnqueueUnmapMemObject(q, b->output, y, 0, NULL, NULL);
    if (idx) clEnqueueUnmapMemObject(q, b->indices, idx, 0, NULL, NULL);
    if (x) clEnqueueUnmapMemObject(q, b->input, x, 0, NULL, NULL);
    if (st == CLOPS_SUCCESS) st = clops_enqueue_nothing(op->ctx, 0, NULL, event);
    if (st == CLOPS_SUCCESS && !event) {
        const cl_int err = clFinish(q); /* unmaps done before the caller reuses the buffers */
        if (err != CL_SUCCESS) st = clops_fail_cl(err, "clFinish");
    }
    if (st == CLOPS_SUCCESS && bad)
        st = clops_fail(CLOPS_ERROR_INDEX_OUT_OF_RANGE,
                        "%llu indices are negative or not below the output's %llu elements; those were skipped",
                        (unsigned long long)bad, (unsigned long long)p->output.count);
    return st;
}
