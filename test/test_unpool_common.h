/*
 * test_unpool_common.h - what the MaxUnpooling suites share: index types, and one
 * case run on every path (clops_host_run, execute_host and cl_mem on every
 * backend) against the naive reference, flat indices or (up_run_layout) per-plane
 * ones through a flat copy. Included by one .c file each.
 */
#ifndef CLOPS_TEST_UNPOOL_COMMON_H
#define CLOPS_TEST_UNPOOL_COMMON_H

#include "reference.h"
#include "test_common.h"
#include "internal.h" /* the context's planned device type (up_plan_name) */

typedef struct index_type_info {
    clops_data_type type;
    ref_index_kind kind;
    const char *name;
    size_t size;
} index_type_info;

static const index_type_info index_types[3] = {
    {CLOPS_DATA_TYPE_UINT32, REF_INDEX_UINT32, "UINT32", 4},
    {CLOPS_DATA_TYPE_UINT64, REF_INDEX_UINT64, "UINT64", 8},
    {CLOPS_DATA_TYPE_INT64, REF_INDEX_INT64, "INT64", 8},
};

/* Writes n flat indices as the given index type (values must fit). */
static void store_indices(const index_type_info *it, const uint64_t *flat, size_t n, void *dst)
{
    unsigned char *d = dst;
    for (size_t k = 0; k < n; k++) {
        if (it->kind == REF_INDEX_UINT32) {
            uint32_t v = (uint32_t)flat[k];
            memcpy(d + k * 4, &v, 4);
        } else {
            memcpy(d + k * 8, &flat[k], 8); /* UINT64 and INT64 share the bits */
        }
    }
}


/* ---- one unpooling case on every path ---------------------------------------------------------------- */
typedef struct up_case {
    clops_data_type type;
    const index_type_info *it;
    uint32_t in_sizes[4]; /* input and indices */
    const uint64_t *in_strides;
    const uint64_t *idx_strides;
    uint32_t out_sizes[4];
    const uint64_t *out_strides;
    uint32_t tail; /* output buffer elements past the span, must stay untouched */
} up_case;

/* The descriptors of case `c` (the operator descriptor points into `d`). */
typedef struct up_descs {
    clops_tensor_desc x, i, y;
    clops_max_unpooling_desc ud;
    clops_operator_desc desc;
} up_descs;

/* As up_describe, with indices in `layout`. */
/* The kernel a general-path plan starts with on the suites' OpenCL device, as
 * clops plans for it (a device profile may change its type: lib/cl/profile.c):
 * bucket on CPU devices, on the others bin for 1- and 2-byte elements and mark for
 * wider ones (max_unpooling.c make_plan). Other
 * plan names are the same everywhere. The suites link clops_testable. */
static inline const char *up_plan_name(const char *plan, size_t elem_size)
{
    if (strcmp(plan, "bucket") == 0 && tc_dev_ctx && !(tc_dev_ctx->info.type & CL_DEVICE_TYPE_CPU))
        return elem_size <= 2 ? "bin" : "mark"; /* packed tensors: max_unpooling.c sort_plan */
    return plan;
}

static inline void up_describe_layout(const up_case *c, clops_indices_layout layout, up_descs *d)
{
    d->x = (clops_tensor_desc){c->type, {c->in_sizes[0], c->in_sizes[1], c->in_sizes[2], c->in_sizes[3]},
                               c->in_strides};
    d->i = (clops_tensor_desc){c->it->type, {c->in_sizes[0], c->in_sizes[1], c->in_sizes[2], c->in_sizes[3]},
                               c->idx_strides};
    d->y = (clops_tensor_desc){c->type, {c->out_sizes[0], c->out_sizes[1], c->out_sizes[2], c->out_sizes[3]},
                               c->out_strides};
    d->ud = (clops_max_unpooling_desc){&d->x, &d->i, &d->y, layout};
    d->desc = (clops_operator_desc){CLOPS_OPERATOR_MAX_UNPOOLING, &d->ud};
}

static inline void up_describe(const up_case *c, up_descs *d)
{
    up_describe_layout(c, CLOPS_INDICES_FLAT, d);
}

/* Element offset of logical element k of the indices (c->idx_strides; NULL: packed). */
static inline uint64_t up_index_offset(const up_case *c, uint64_t k)
{
    if (!c->idx_strides) return k;
    uint64_t off = 0;
    for (int d = 3; d >= 0; d--) {
        off += k % c->in_sizes[d] * c->idx_strides[d];
        k /= c->in_sizes[d];
    }
    return off;
}

/* The reference result of case `c` with indices in `layout` (`indices` through
 * c->idx_strides) into `want`, which holds the output's initial bytes; returns
 * the number of bad indices (-1: inconsistent sizes). Per-plane indices go
 * through a flat copy: index i of plane p = n*C + c is p*H_out*W_out + i when
 * i (unsigned, all its bits) is below H_out*W_out, else bad. */
static inline long up_reference(const up_case *c, clops_indices_layout layout, const void *x, const void *indices,
                                void *want)
{
    const size_t es = tc_type(c->type)->size;
    const uint32_t *in = c->in_sizes;
    ref_tensor rx, ri, ry;
    uint64_t *flat = NULL;
    ref_tensor_init(&rx, (void *)(uintptr_t)x, es, c->in_sizes, c->in_strides);
    ref_tensor_init(&ry, want, es, c->out_sizes, c->out_strides);
    if (layout == CLOPS_INDICES_PER_PLANE) {
        const uint64_t n = ref_element_count(in), plane_in = (uint64_t)in[2] * in[3];
        const uint64_t plane_out = (uint64_t)c->out_sizes[2] * c->out_sizes[3];
        flat = tc_malloc(n ? n * 8 : 8);
        for (uint64_t k = 0; k < n; k++) {
            uint64_t v = 0;
            const unsigned char *at = (const unsigned char *)indices + up_index_offset(c, k) * c->it->size;
            if (c->it->size == 4) {
                uint32_t u;
                memcpy(&u, at, 4);
                v = u;
            } else {
                memcpy(&v, at, 8);
            }
            flat[k] = v < plane_out ? k / plane_in * plane_out + v : UINT64_MAX;
        }
        ref_tensor_init(&ri, flat, 8, in, NULL);
    } else {
        ref_tensor_init(&ri, (void *)(uintptr_t)indices, c->it->size, in, c->idx_strides);
    }
    const long bad = ref_max_unpooling(&rx, &ri, flat ? REF_INDEX_UINT64 : c->it->kind, &ry);
    free(flat);
    return bad;
}

/* `x` and `indices` hold the input and indices spans (through their strides),
 * the indices in `layout`. Checks every path against the reference and returns
 * the number of bad indices. */
static inline long up_run_layout(const up_case *c, clops_indices_layout layout, const void *x, const void *indices,
                                 clops_status want_status, const char *what, clops_context *only)
{
    char label[320], a[64], b[64];
    const size_t es = tc_type(c->type)->size;
    snprintf(label, sizeof label, "%s: MaxUnpooling %s, %s%s indices%s, input %s%s, output %s%s", what,
             tc_type(c->type)->name, layout == CLOPS_INDICES_PER_PLANE ? "per-plane " : "", c->it->name,
             c->idx_strides ? " (strided)" : "", tc_shape_str(a, sizeof a, c->in_sizes),
             c->in_strides ? " (strided)" : "", tc_shape_str(b, sizeof b, c->out_sizes),
             c->out_strides ? " (strided)" : "");

    up_descs d;
    up_describe_layout(c, layout, &d);
    clops_status vs = clops_operator_validate(&d.desc);
    ck_assert_msg(vs == CLOPS_SUCCESS, "%s: validate gave %s (%s)", label, clops_status_name(vs),
                  clops_last_error_message());

    size_t xb = tc_tensor_bytes(&d.x), ib = tc_tensor_bytes(&d.i);
    size_t yb = tc_tensor_bytes(&d.y) + (size_t)c->tail * es;
    unsigned char *init = tc_malloc(yb), *want = tc_malloc(yb);
    tc_fill_sentinel(init, yb);
    memcpy(want, init, yb);

    long bad = up_reference(c, layout, x, indices, want);
    ck_assert_msg(bad >= 0, "%s: test bug, reference rejected the sizes", label);
    ck_assert_msg((bad > 0) == (want_status == CLOPS_ERROR_INDEX_OUT_OF_RANGE),
                  "%s: test bug, %ld bad indices but expecting %s", label, bad, clops_status_name(want_status));

    tc_bufs bufs = {xb ? x : NULL, xb, ib ? indices : NULL, ib, init, yb};
    /* On a bad index the host-memory paths leave the output untouched, the
     * cl_mem path writes every good element (and the zeros). */
    if (only)
        tc_check_context_paths(only, "caller's out-of-order queue", TC_PATHS_ALL, &d.desc, &bufs, want_status,
                               bad ? init : want, want, es, label);
    else
        tc_check_all_paths_status(&d.desc, &bufs, want_status, bad ? init : want, want, es, label);
    if (want_status != CLOPS_SUCCESS)
        ck_assert_msg(clops_last_error_message()[0] != '\0', "%s: empty clops_last_error_message() after %s", label,
                      clops_status_name(want_status));
    free(init);
    free(want);
    return bad;
}

static long up_run_on(const up_case *c, const void *x, const void *indices, clops_status want_status,
                      const char *what, clops_context *only)
{
    return up_run_layout(c, CLOPS_INDICES_FLAT, x, indices, want_status, what, only);
}

static long up_run(const up_case *c, const void *x, const void *indices, clops_status want_status,
                   const char *what)
{
    return up_run_on(c, x, indices, want_status, what, NULL);
}


/* 60 executions of one operator on the host buffers of two index sets (20 of
 * the first, 20 of the second, then alternating), each checked against its
 * expected output want[k]; name[k] says which set in failure messages. The
 * plans keep state between executions (which path the last one needed). */
static inline void up_run_alternating(clops_operator *op, const void *const x[2], size_t x_bytes,
                                      const void *const idx[2], size_t idx_bytes, const unsigned char *const want[2],
                                      size_t yb, size_t es, const char *const name[2])
{
    unsigned char *got = tc_malloc(yb);
    for (int run = 0; run < 60; run++) {
        const int k = run < 20 ? 0 : run < 40 ? 1 : run % 2;
        clops_host_buffers hb = {x[k], x_bytes, idx[k], idx_bytes, got, yb};
        tc_fill_sentinel(got, yb);
        const clops_status st = clops_operator_execute_host(op, &hb);
        ck_assert_msg(st == CLOPS_SUCCESS, "execution %d: %s (%s)", run, clops_status_name(st),
                      clops_last_error_message());
        char what[96];
        snprintf(what, sizeof what, "execution %d of one operator, %s indices", run, name[k]);
        tc_check_bytes(got, want[k], yb, es, what, "execute_host");
    }
    free(got);
}

#endif /* CLOPS_TEST_UNPOOL_COMMON_H */
