/*
 * reference.h - a deliberately naive reference for the clops operators, written
 * straight from the formulas in shared/spec/README.md. It never calls clops: it
 * works on raw bytes with an element size (1, 2, 4, 8 or 16), so one routine
 * covers all fifteen data types, and it addresses every element through explicit
 * strides, one element at a time. Slow on purpose; it is only ever run on test
 * sized tensors.
 */
#ifndef CLOPS_TEST_REFERENCE_H
#define CLOPS_TEST_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

/* A 4-D tensor { N, C, H, W } in memory. `strides` are in elements and always
 * explicit (use ref_packed_strides() for packed NCHW). */
typedef struct ref_tensor {
    void *data;
    size_t elem_size;
    uint32_t sizes[4];
    uint64_t strides[4];
} ref_tensor;

typedef enum ref_order {
    REF_ORDER_DCR = 0, /* depth, column, row */
    REF_ORDER_CRD = 1  /* column, row, depth */
} ref_order;

typedef enum ref_index_kind {
    REF_INDEX_UINT32 = 0,
    REF_INDEX_UINT64 = 1,
    REF_INDEX_INT64 = 2
} ref_index_kind;

/* Packed row-major NCHW strides for `sizes`. */
void ref_packed_strides(const uint32_t sizes[4], uint64_t strides[4]);

/* Product of the four sizes. */
uint64_t ref_element_count(const uint32_t sizes[4]);

/* Fills a ref_tensor (strides NULL = packed). */
void ref_tensor_init(ref_tensor *t, void *data, size_t elem_size, const uint32_t sizes[4],
                     const uint64_t *strides);

/* DepthToSpace: Y[n, c, h*b+i, w*b+j] = X[n, (i*b+j)*Cout + c, h, w]       (DCR)
 *                                     = X[n, c*b*b + i*b + j, h, w]        (CRD)
 * Writes only the output's elements (gaps between strided elements keep their
 * bytes). Returns 0, or -1 if the sizes do not follow the operator's rule. */
int ref_depth_to_space(const ref_tensor *x, const ref_tensor *y, uint32_t block, ref_order order);

/* SpaceToDepth: Y[n, (i*b+j)*C + c, h, w] = X[n, c, h*b+i, w*b+j]          (DCR)
 *               Y[n, c*b*b + i*b + j, h, w] = X[n, c, h*b+i, w*b+j]        (CRD)
 * Returns 0, or -1 if the sizes do not follow the operator's rule. */
int ref_space_to_depth(const ref_tensor *x, const ref_tensor *y, uint32_t block, ref_order order);

/* MaxUnpooling: every element of Y (through its strides) becomes zero bytes, then
 * for every k in row-major order of X's logical sizes, Y.flat[I.flat[k]] = X.flat[k],
 * flat indices being over Y's logical packed sizes. An index that is negative
 * (INT64) or >= Y's element count is skipped. Returns the number of skipped
 * (bad) indices, or -1 if the sizes are inconsistent. */
long ref_max_unpooling(const ref_tensor *x, const ref_tensor *indices, ref_index_kind kind,
                       const ref_tensor *y);

#endif /* CLOPS_TEST_REFERENCE_H */
