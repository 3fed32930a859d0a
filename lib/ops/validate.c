/* validate.c - every check on descriptors and buffers, before any work.
 *
 * The order of checks is part of the contract (docs/semantics.md, "Error model"): null
 * pointers, operator type, each tensor on its own (type, overflow, output
 * overlap), then the operator's rules. */
#include <string.h>

#include "ops/ops.h"

typedef enum clops_tensor_role { CLOPS_ROLE_INPUT, CLOPS_ROLE_INDICES, CLOPS_ROLE_OUTPUT } clops_tensor_role;

static const char *role_name(clops_tensor_role role)
{
    switch (role) {
    case CLOPS_ROLE_INPUT: return "input";
    case CLOPS_ROLE_INDICES: return "indices";
    default: return "output";
    }
}

/* Distinct output elements must never share an address: with the dimensions of
 * size > 1 sorted by stride, each stride must reach past everything the smaller
 * strides cover. */
static bool strides_overlap(const clops_tensor *t)
{
    int dims[4], n = 0;
    for (int d = 0; d < 4; d++)
        if (t->sizes[d] > 1) dims[n++] = d;
    for (int i = 1; i < n; i++) /* insertion sort by stride */
        for (int j = i; j > 0 && t->strides[dims[j]] < t->strides[dims[j - 1]]; j--) {
            int tmp = dims[j];
            dims[j] = dims[j - 1];
            dims[j - 1] = tmp;
        }
    uint64_t extent = 1; /* spans are already known not to overflow */
    for (int i = 0; i < n; i++) {
        const int d = dims[i];
        if (t->strides[d] < extent) return true;
        extent += (t->sizes[d] - 1) * t->strides[d];
    }
    return false;
}

static clops_status make_tensor(const clops_tensor_desc *desc, clops_tensor_role role, clops_tensor *t)
{
    const char *name = role_name(role);
    memset(t, 0, sizeof *t);
    if (role == CLOPS_ROLE_INDICES) {
        if (!clops_index_type_valid(desc->data_type))
            return clops_fail(CLOPS_ERROR_UNSUPPORTED_INDEX_TYPE,
                              "indices data type %d (%s) is not UINT32, UINT64 or INT64",
                              (int)desc->data_type, clops_data_type_name(desc->data_type));
    } else if (!clops_data_type_valid(desc->data_type)) {
        return clops_fail(CLOPS_ERROR_UNSUPPORTED_DATA_TYPE, "%s data type %d is not supported", name,
                          (int)desc->data_type);
    }
    t->type = desc->data_type;
    t->elem_size = clops_data_type_size(desc->data_type);

    /* An empty tensor (a zero size) is valid whatever its other sizes are. */
    const bool empty = !desc->sizes[0] || !desc->sizes[1] || !desc->sizes[2] || !desc->sizes[3];
    uint64_t packed = 1;
    for (int d = 3; d >= 0; d--) {
        t->sizes[d] = desc->sizes[d];
        t->strides[d] = desc->strides ? desc->strides[d] : packed;
        if (!clops_mul_u64(packed, desc->sizes[d], &packed) && !empty)
            return clops_fail(CLOPS_ERROR_SIZE_OVERFLOW,
                              "%s element count %u x %u x %u x %u overflows 64 bits", name,
                              desc->sizes[0], desc->sizes[1], desc->sizes[2], desc->sizes[3]);
    }
    if (empty) packed = 0;
    t->count = packed;
    t->packed = true;
    {
        uint64_t expect = 1;
        for (int d = 3; d >= 0; d--) {
            if (t->sizes[d] > 1 && t->strides[d] != expect) t->packed = false;
            expect *= t->sizes[d];
        }
    }
    uint64_t bytes;
    if (!clops_mul_u64(t->count, t->elem_size, &bytes) || bytes > SIZE_MAX)
        return clops_fail(CLOPS_ERROR_SIZE_OVERFLOW, "%s byte count (%llu elements of %zu bytes) overflows",
                          name, (unsigned long long)t->count, t->elem_size);
    if (t->count == 0) {
        t->span = 0;
    } else {
        uint64_t last = 0; /* offset of the last element */
        for (int d = 0; d < 4; d++) {
            uint64_t step;
            if (!clops_mul_u64(t->sizes[d] - 1, t->strides[d], &step) || !clops_add_u64(last, step, &last))
                return clops_fail(CLOPS_ERROR_SIZE_OVERFLOW, "%s stride %llu on dimension %d overflows the span",
                                  name, (unsigned long long)t->strides[d], d);
        }
        if (!clops_add_u64(last, 1, &t->span))
            return clops_fail(CLOPS_ERROR_SIZE_OVERFLOW, "%s span overflows", name);
    }
    if (!clops_mul_u64(t->span, t->elem_size, &t->span_bytes) || t->span_bytes > SIZE_MAX)
        return clops_fail(CLOPS_ERROR_SIZE_OVERFLOW, "%s span of %llu elements of %zu bytes overflows", name,
                          (unsigned long long)t->span, t->elem_size);
    if (role == CLOPS_ROLE_OUTPUT && t->count > 0 && strides_overlap(t))
        return clops_fail(CLOPS_ERROR_OVERLAPPING_OUTPUT,
                          "output strides {%llu, %llu, %llu, %llu} for sizes {%u, %u, %u, %u} make elements overlap",
                          (unsigned long long)t->strides[0], (unsigned long long)t->strides[1],
                          (unsigned long long)t->strides[2], (unsigned long long)t->strides[3], desc->sizes[0],
                          desc->sizes[1], desc->sizes[2], desc->sizes[3]);
    return CLOPS_SUCCESS;
}

/* The operator's entry and its tensor descriptors, `p` holding its attributes;
 * fails on a NULL descriptor, an unknown type or a missing input. */
static clops_status unpack_operator(const clops_operator_desc *desc, clops_op_params *p, const clops_op_entry **e,
                                    const clops_tensor_desc **in, const clops_tensor_desc **idx,
                                    const clops_tensor_desc **out)
{
    memset(p, 0, sizeof *p);
    *in = *idx = *out = NULL;
    if (!desc || !desc->desc) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "operator descriptor is NULL");
    *e = clops_op_lookup(desc->type);
    if (!*e) return clops_fail(CLOPS_ERROR_INVALID_OPERATOR_TYPE, "operator type %d is unknown", (int)desc->type);
    const clops_status st = (*e)->unpack(desc->desc, p, in, idx, out);
    if (st != CLOPS_SUCCESS) return st;
    p->type = desc->type;
    if (!*in) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "input tensor descriptor is NULL");
    return CLOPS_SUCCESS;
}

clops_status clops_validate_operator(const clops_operator_desc *desc, clops_op_params *p)
{
    const clops_op_entry *e = NULL;
    const clops_tensor_desc *in, *idx, *out;
    clops_status st = unpack_operator(desc, p, &e, &in, &idx, &out);
    if (st != CLOPS_SUCCESS) return st;
    if (!out) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "output tensor descriptor is NULL");

    st = make_tensor(in, CLOPS_ROLE_INPUT, &p->input);
    if (st == CLOPS_SUCCESS && idx) st = make_tensor(idx, CLOPS_ROLE_INDICES, &p->indices);
    if (st == CLOPS_SUCCESS) st = make_tensor(out, CLOPS_ROLE_OUTPUT, &p->output);
    if (st != CLOPS_SUCCESS) return st;
    if (p->output.type != p->input.type)
        return clops_fail(CLOPS_ERROR_DATA_TYPE_MISMATCH, "output data type %s differs from input data type %s",
                          clops_data_type_name(p->output.type), clops_data_type_name(p->input.type));
    return e->check(p);
}

clops_status clops_operator_validate(const clops_operator_desc *desc)
{
    clops_op_params p;
    return clops_validate_operator(desc, &p);
}

clops_status clops_operator_output_sizes(const clops_operator_desc *desc, uint32_t sizes[4])
{
    clops_op_params p;
    const clops_op_entry *e = NULL;
    const clops_tensor_desc *in, *idx, *out;
    clops_status st = unpack_operator(desc, &p, &e, &in, &idx, &out);
    if (st != CLOPS_SUCCESS) return st;
    if (!sizes) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "sizes is NULL");
    if (!e->output_sizes)
        return clops_fail(CLOPS_ERROR_OUTPUT_NOT_DERIVED,
                          "operator type %d takes its output sizes from the caller (MaxUnpooling's output_shape)",
                          (int)desc->type);
    st = make_tensor(in, CLOPS_ROLE_INPUT, &p.input);
    if (st == CLOPS_SUCCESS && idx) st = make_tensor(idx, CLOPS_ROLE_INDICES, &p.indices);
    uint64_t want[4];
    if (st == CLOPS_SUCCESS) st = e->output_sizes(&p, want);
    if (st != CLOPS_SUCCESS) return st;
    for (int d = 0; d < 4; d++)
        if (want[d] > UINT32_MAX)
            return clops_fail(CLOPS_ERROR_SIZE_OVERFLOW, "output size %llu on dimension %d passes 2^32-1",
                              (unsigned long long)want[d], d);
    for (int d = 0; d < 4; d++) sizes[d] = (uint32_t)want[d];
    return CLOPS_SUCCESS;
}

/* Half-open byte ranges [a, a+na) and [b, b+nb) intersect. */
static bool ranges_overlap(const void *a, size_t na, const void *b, size_t nb)
{
    const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return na && nb && x < y + nb && y < x + na;
}

static clops_status check_host_buffer(const clops_tensor *t, const char *name, const void *ptr, size_t bytes)
{
    if (t->span_bytes == 0) return CLOPS_SUCCESS;
    if (!ptr) return clops_fail(CLOPS_ERROR_MISSING_BUFFER, "%s buffer is NULL but the tensor spans %llu bytes",
                                name, (unsigned long long)t->span_bytes);
    if (bytes < t->span_bytes)
        return clops_fail(CLOPS_ERROR_BUFFER_TOO_SMALL, "%s buffer has %zu bytes, its tensor spans %llu", name,
                          bytes, (unsigned long long)t->span_bytes);
    return CLOPS_SUCCESS;
}

/* An operator without indices has an all-zero indices tensor: nothing to check. */
clops_status clops_check_host_buffers(const clops_op_params *p, const clops_host_buffers *b)
{
    if (!b) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "buffers argument is NULL");
    clops_status st = check_host_buffer(&p->input, "input", b->input, b->input_bytes);
    if (st == CLOPS_SUCCESS) st = check_host_buffer(&p->indices, "indices", b->indices, b->indices_bytes);
    if (st == CLOPS_SUCCESS) st = check_host_buffer(&p->output, "output", b->output, b->output_bytes);
    if (st != CLOPS_SUCCESS) return st;
    const size_t out_bytes = (size_t)p->output.span_bytes;
    if (ranges_overlap(b->output, out_bytes, b->input, (size_t)p->input.span_bytes) ||
        (ranges_overlap(b->output, out_bytes, b->indices, (size_t)p->indices.span_bytes)))
        return clops_fail(CLOPS_ERROR_ALIASED_BUFFERS, "output memory %p..+%zu overlaps an input", b->output,
                          out_bytes);
    return CLOPS_SUCCESS;
}
