/*
 * reference.c - naive reference operators for the tests (see reference.h).
 * Element by element, through strides, from the spec formulas; no clops calls.
 */
#include "reference.h"

#include <string.h>

void ref_packed_strides(const uint32_t sizes[4], uint64_t strides[4])
{
    strides[3] = 1;
    strides[2] = (uint64_t)sizes[3];
    strides[1] = (uint64_t)sizes[2] * sizes[3];
    strides[0] = (uint64_t)sizes[1] * sizes[2] * sizes[3];
}

uint64_t ref_element_count(const uint32_t sizes[4])
{
    return (uint64_t)sizes[0] * sizes[1] * sizes[2] * sizes[3];
}

void ref_tensor_init(ref_tensor *t, void *data, size_t elem_size, const uint32_t sizes[4],
                     const uint64_t *strides)
{
    t->data = data;
    t->elem_size = elem_size;
    memcpy(t->sizes, sizes, sizeof t->sizes);
    if (strides)
        memcpy(t->strides, strides, sizeof t->strides);
    else
        ref_packed_strides(sizes, t->strides);
}

/* Address of element (n, c, h, w). */
static unsigned char *at(const ref_tensor *t, uint64_t n, uint64_t c, uint64_t h, uint64_t w)
{
    uint64_t off = n * t->strides[0] + c * t->strides[1] + h * t->strides[2] + w * t->strides[3];
    return (unsigned char *)t->data + off * t->elem_size;
}

/* The element pairs both operators move, between the deep tensor {N, C*b*b, H, W}
 * and the shallow one {N, C, H*b, W*b}: deep channel (i*b+j)*C + c (DCR) or
 * c*b*b + i*b + j (CRD) at (h, w) is shallow channel c at (h*b+i, w*b+j).
 * Copies deep to shallow (DepthToSpace) or shallow to deep (SpaceToDepth). */
static void move_blocks(const ref_tensor *deep, const ref_tensor *shallow, uint64_t b, ref_order order,
                        int to_shallow)
{
    const uint64_t N = deep->sizes[0], C = shallow->sizes[1], H = deep->sizes[2], W = deep->sizes[3];
    for (uint64_t n = 0; n < N; n++)
        for (uint64_t c = 0; c < C; c++)
            for (uint64_t h = 0; h < H; h++)
                for (uint64_t w = 0; w < W; w++)
                    for (uint64_t i = 0; i < b; i++)
                        for (uint64_t j = 0; j < b; j++) {
                            uint64_t dc = order == REF_ORDER_DCR ? (i * b + j) * C + c : c * b * b + i * b + j;
                            unsigned char *d = at(deep, n, dc, h, w), *s = at(shallow, n, c, h * b + i, w * b + j);
                            if (to_shallow)
                                memcpy(s, d, deep->elem_size);
                            else
                                memcpy(d, s, deep->elem_size);
                        }
}

int ref_depth_to_space(const ref_tensor *x, const ref_tensor *y, uint32_t block, ref_order order)
{
    const uint64_t b = block;
    if (b == 0 || x->elem_size != y->elem_size)
        return -1;
    const uint64_t N = x->sizes[0], C = x->sizes[1], H = x->sizes[2], W = x->sizes[3];
    if (C % (b * b) != 0)
        return -1;
    if (y->sizes[0] != N || y->sizes[1] != C / (b * b) || y->sizes[2] != H * b || y->sizes[3] != W * b)
        return -1;
    move_blocks(x, y, b, order, 1);
    return 0;
}

int ref_space_to_depth(const ref_tensor *x, const ref_tensor *y, uint32_t block, ref_order order)
{
    const uint64_t b = block;
    if (b == 0 || x->elem_size != y->elem_size)
        return -1;
    const uint64_t N = x->sizes[0], C = x->sizes[1], H = x->sizes[2], W = x->sizes[3];
    if (H % b != 0 || W % b != 0)
        return -1;
    if (y->sizes[0] != N || y->sizes[1] != C * b * b || y->sizes[2] != H / b || y->sizes[3] != W / b)
        return -1;
    move_blocks(y, x, b, order, 0);
    return 0;
}

long ref_max_unpooling(const ref_tensor *x, const ref_tensor *indices, ref_index_kind kind,
                       const ref_tensor *y)
{
    if (x->elem_size != y->elem_size)
        return -1;
    for (int d = 0; d < 4; d++)
        if (x->sizes[d] != indices->sizes[d])
            return -1;
    if (x->sizes[0] != y->sizes[0] || x->sizes[1] != y->sizes[1])
        return -1;

    const size_t es = y->elem_size;
    const uint64_t count = ref_element_count(y->sizes);

    /* Y = 0 */
    for (uint64_t n = 0; n < y->sizes[0]; n++)
        for (uint64_t c = 0; c < y->sizes[1]; c++)
            for (uint64_t h = 0; h < y->sizes[2]; h++)
                for (uint64_t w = 0; w < y->sizes[3]; w++)
                    memset(at(y, n, c, h, w), 0, es);

    /* Y.flat[I.flat[k]] = X.flat[k], k in row-major order */
    long bad = 0;
    for (uint64_t n = 0; n < x->sizes[0]; n++)
        for (uint64_t c = 0; c < x->sizes[1]; c++)
            for (uint64_t h = 0; h < x->sizes[2]; h++)
                for (uint64_t w = 0; w < x->sizes[3]; w++) {
                    const unsigned char *ip = at(indices, n, c, h, w);
                    uint64_t flat;
                    int negative = 0;
                    if (kind == REF_INDEX_UINT32) {
                        uint32_t v;
                        memcpy(&v, ip, sizeof v);
                        flat = v;
                    } else if (kind == REF_INDEX_UINT64) {
                        memcpy(&flat, ip, sizeof flat);
                    } else {
                        int64_t v;
                        memcpy(&v, ip, sizeof v);
                        negative = v < 0;
                        flat = (uint64_t)v;
                    }
                    if (negative || flat >= count) {
                        bad++;
                        continue;
                    }
                    uint64_t ow = flat % y->sizes[3];
                    uint64_t rest = flat / y->sizes[3];
                    uint64_t oh = rest % y->sizes[2];
                    rest /= y->sizes[2];
                    uint64_t oc = rest % y->sizes[1];
                    uint64_t on = rest / y->sizes[1];
                    memcpy(at(y, on, oc, oh, ow), at(x, n, c, h, w), es);
                }
    return bad;
}
