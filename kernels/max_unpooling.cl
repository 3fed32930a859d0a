/* max_unpooling.cl - MaxUnpooling: zero-fill, scatter, and a check for duplicates.
 *
 * Build options (besides clops_common.cl's):
 *   -DINDEX_BYTES=4|8        width of the indices; 8-byte indices (UINT64 or INT64)
 *                            are read as uint2, so no 64-bit integer support is needed
 *                            unless OFFSET_64 is set
 *   -DOUT_PACKED=1|0         1: the output is packed NCHW, a flat index is its offset
 *                            (and the host zero-fills it with clEnqueueFillBuffer)
 *   -DCHUNK=k                input positions each scatter/verify work-item walks
 *
 * Status word `flag` (atomic_or): bit 0, an index was out of range (never written);
 * bit 1, an element does not hold the value its index sent (two different values
 * collided on one index: the host then redoes the scatter in input order).
 *
 * NDRange: zero_fill (W, H, N*C) of the output, one element per work-item (used
 * only for strided outputs); scatter and verify (ceil(W/CHUNK), H, N*C) of the input.
 */
#define FLAG_OUT_OF_RANGE 1u
#define FLAG_CONFLICT 2u

/* Zero every element of y. */
__kernel void zero_fill(__global elem_t *restrict y, dims4 sizes, dims4 strides)
{
    const idx_t w = (idx_t)get_global_id(0), h = (idx_t)get_global_id(1), nc = (idx_t)get_global_id(2);
    if (w >= DIM(sizes, 3) || h >= DIM(sizes, 2) || nc >= DIM(sizes, 0) * DIM(sizes, 1)) return;
    y[offset4(strides, nc / DIM(sizes, 1), nc % DIM(sizes, 1), h, w)] = (elem_t)(0);
}

/* The flat output index at input position (n, c, h, w), or `count` if it is out
 * of range (negative INT64 and UINT64 past 2^32 included when !OFFSET_64). */
inline idx_t load_index(__global const void *indices, dims4 s, idx_t n, idx_t c, idx_t h, idx_t w, idx_t count)
{
    const idx_t k = offset4(s, n, c, h, w);
#if INDEX_BYTES == 4
    const idx_t v = ((__global const uint *)indices)[k];
#else
    const uint2 raw = ((__global const uint2 *)indices)[k];
#if OFFSET_64
    const idx_t v = ((idx_t)raw.y << 32) | raw.x; /* INT64 < 0 reads as >= 2^63 > count */
#else
    const idx_t v = raw.y ? count : raw.x;
#endif
#endif
    return v < count ? v : count;
}

/* Offset in y of the flat (row-major, packed) index v. */
inline idx_t flat_offset(idx_t v, dims4 sizes, dims4 strides)
{
#if OUT_PACKED
    (void)sizes;
    (void)strides;
    return v;
#else
    const idx_t w = v % DIM(sizes, 3);
    v /= DIM(sizes, 3);
    const idx_t h = v % DIM(sizes, 2);
    v /= DIM(sizes, 2);
    return offset4(strides, v / DIM(sizes, 1), v % DIM(sizes, 1), h, w);
#endif
}

#define UNPOOL_ARGS                                                                              \
    __global const elem_t *restrict x, __global const void *restrict indices,                    \
        __global elem_t *restrict y, __global uint *restrict flag, dims4 in_sizes,               \
        dims4 x_strides, dims4 i_strides, dims4 out_sizes, dims4 y_strides, offs_t out_count

/* A work-item walks CHUNK input positions of one row: range (ceil(W/CHUNK), H, N*C).
 * Reads of x and the indices are contiguous; writes go where the indices say. */
#define UNPOOL_ROW                                                                               \
    const idx_t w0 = (idx_t)get_global_id(0) * CHUNK, h = (idx_t)get_global_id(1);              \
    const idx_t nc = (idx_t)get_global_id(2), count = (idx_t)out_count;                          \
    if (w0 >= DIM(in_sizes, 3) || h >= DIM(in_sizes, 2) ||                                      \
        nc >= DIM(in_sizes, 0) * DIM(in_sizes, 1))                                               \
        return;                                                                                  \
    const idx_t n = nc / DIM(in_sizes, 1), c = nc % DIM(in_sizes, 1);                            \
    const idx_t w1 = min(w0 + (idx_t)CHUNK, DIM(in_sizes, 3));

/* y.flat[I[k]] = x[k]; out-of-range indices set bit 0 and write nothing. */
__kernel void scatter(UNPOOL_ARGS)
{
    UNPOOL_ROW
    uint bad = 0;
    for (idx_t w = w0; w < w1; w++) {
        const idx_t v = load_index(indices, i_strides, n, c, h, w, count);
        if (v == count) bad = 1;
        else y[flat_offset(v, out_sizes, y_strides)] = x[offset4(x_strides, n, c, h, w)];
    }
    if (bad) atomic_or(flag, FLAG_OUT_OF_RANGE);
}

/* After scatter: each element must hold what its index sent, bit for bit. The
 * loop stops at the first difference; that early exit also keeps compilers from
 * turning the data-dependent loads of y into vector gathers, which measured 4x
 * slower than scalar loads on PoCL (AVX-512, AMD EPYC). */
__kernel void verify(UNPOOL_ARGS)
{
    UNPOOL_ROW
    for (idx_t w = w0; w < w1; w++) {
        const idx_t v = load_index(indices, i_strides, n, c, h, w, count);
        if (v == count) continue;
        const elem_t got = y[flat_offset(v, out_sizes, y_strides)], want = x[offset4(x_strides, n, c, h, w)];
#if ELEM_BYTES <= 4
        if (got != want) {
#else
        if (any(got != want)) {
#endif
            atomic_or(flag, FLAG_CONFLICT);
            return;
        }
    }
}
