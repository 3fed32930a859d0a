/* max_unpooling.cl - MaxUnpooling: one pass for pooling-shaped indices, a
 * deterministic scatter for any others, and one serial kernel for tiny tensors.
 *
 * Build options (besides clops_common.cl's):
 *   -DINDEX_BYTES=4|8        width of the indices; 8-byte indices (UINT64 or INT64)
 *                            are read as uint2, so no 64-bit integer support is needed
 *                            unless OFFSET_64 is set
 *   -DOUT_PACKED=1|0         1: the output is packed NCHW, a flat index is its offset
 *   -DCHUNK=k                input positions (or output columns) each work-item walks
 *   -DKH=a -DKW=b            window height and width (output H, W / input H, W);
 *                            only for pooling-shaped plans
 *   -DGATED=1|0              1: the general kernels run only when the window kernel
 *                            of the same execution found an index outside its window
 *   -DCLAIMS=1|0             1: clear also zeroes the claims (claim/place plans)
 *   -DSERIAL_FILLS=1|0       1: serial zero-fills the output itself (no clear before it)
 *
 * Status words `status` (the operator's, never reset on the host): each execution
 * has a generation number `gen`, larger than every earlier one, and the kernels
 * record an event with atomic_max(word, gen), so a word equals `gen` exactly when
 * this execution raised it:
 *   status[0]  an index was outside its window: the general path must run
 *   status[1]  an index was negative or past the output (never written)
 * `scratch` (the operator's, one uint per output element) holds, per output
 * element, 1 + the largest row-major input position whose index names it.
 *
 * NDRanges: 1-D; each kernel strides over its tensor's row chunks (FOR_ROWS),
 * serial runs on one work-item.
 */
#define ST_GENERAL 0
#define ST_OUT_OF_RANGE 1

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
        __global elem_t *restrict y, volatile __global uint *restrict status,                    \
        __global uint *restrict scratch, dims4 in_sizes, dims4 x_strides, dims4 i_strides,       \
        dims4 out_sizes, dims4 y_strides, offs_t out_count, uint gen

/* The work-items walk the rows of `sizes` CHUNK positions at a time, the whole
 * range striding by the global size: a 1-D launch of any size covers the
 * tensor, so a gated kernel that has nothing to do costs a few work-items, not
 * one per row. Opens a loop body with n, c, h, nc and [w0, w1); END_ROWS closes it. */
#define FOR_ROWS(sizes)                                                                          \
    const idx_t chunks_ = (DIM(sizes, 3) + CHUNK - 1) / CHUNK;                                   \
    const idx_t units_ = chunks_ * DIM(sizes, 2) * DIM(sizes, 0) * DIM(sizes, 1);                \
    for (idx_t u_ = (idx_t)get_global_id(0); u_ < units_; u_ += (idx_t)get_global_size(0)) {     \
        const idx_t w0 = u_ % chunks_ * CHUNK, h = u_ / chunks_ % DIM(sizes, 2);                 \
        const idx_t nc = u_ / chunks_ / DIM(sizes, 2);                                           \
        const idx_t n = nc / DIM(sizes, 1), c = nc % DIM(sizes, 1);                              \
        const idx_t w1 = min(w0 + (idx_t)CHUNK, DIM(sizes, 3));
#define END_ROWS }

/* The general kernels of a gated plan return at once unless this execution's
 * window kernel asked for them. */
#if GATED
#define GENERAL_GATE                                                                             \
    if (status[ST_GENERAL] != gen) return;
#else
#define GENERAL_GATE
#endif

#ifdef KW
/* Pooling-shaped indices in one pass: output H, W are KH, KW times the input's,
 * and index (n, c, h, w) should lie in window (h, w), rows h*KH.., columns w*KW...
 * The work-item writes the KH x (w1-w0)*KW output elements of its windows, row
 * after row, each exactly once: the input element where the index points, zero
 * elsewhere. An index outside its window (out of range included) is written
 * nowhere here and raises status[ST_GENERAL]: the general path then rewrites
 * the whole output. */
__kernel void windows(UNPOOL_ARGS)
{
    const idx_t count = (idx_t)out_count, wout = DIM(out_sizes, 3);
    uint outside = 0;
    FOR_ROWS(in_sizes)
    /* Flat output index of the window row h*KH, column 0. */
    const idx_t row0 = (nc * DIM(out_sizes, 2) + h * KH) * wout;
    for (idx_t w = w0; w < w1; w++) {
        /* d: the index relative to its window's top-left corner (wraps if before it). */
        const idx_t d = load_index(indices, i_strides, n, c, h, w, count) - (row0 + w * KW);
        uint inside = 0;
        for (idx_t r = 0; r < KH; r++) inside |= d - r * wout < KW;
        outside |= !inside;
    }
    for (idx_t r = 0; r < KH; r++) {
        const idx_t yrow = offset4(y_strides, n, c, h * KH + r, 0), ys = DIM(y_strides, 3);
        for (idx_t w = w0; w < w1; w++) {
            const idx_t t = load_index(indices, i_strides, n, c, h, w, count) - (row0 + w * KW) - r * wout;
            const elem_t v = x[offset4(x_strides, n, c, h, w)];
            for (idx_t q = 0; q < KW; q++) y[yrow + (w * KW + q) * ys] = t == q ? v : (elem_t)(0);
        }
    }
    END_ROWS
    if (outside) atomic_max(&status[ST_GENERAL], gen);
}
#endif

/* General path, 1 of 3: zero the output (and the claims). */
__kernel void clear(UNPOOL_ARGS)
{
    GENERAL_GATE
    FOR_ROWS(out_sizes)
#if CLAIMS
    const idx_t flat = (nc * DIM(out_sizes, 2) + h) * DIM(out_sizes, 3);
#endif
    const idx_t yrow = offset4(y_strides, n, c, h, 0), ys = DIM(y_strides, 3);
    for (idx_t w = w0; w < w1; w++) {
        y[yrow + w * ys] = (elem_t)(0);
#if CLAIMS
        scratch[flat + w] = 0;
#endif
    }
    END_ROWS
}

/* General path, 2 of 3: each input position claims the output element its index
 * names; the largest position wins, whatever order the work-items run in. */
__kernel void claim(UNPOOL_ARGS)
{
    GENERAL_GATE
    const idx_t count = (idx_t)out_count;
    uint bad = 0;
    FOR_ROWS(in_sizes)
    const idx_t k0 = (nc * DIM(in_sizes, 2) + h) * DIM(in_sizes, 3);
    for (idx_t w = w0; w < w1; w++) {
        const idx_t v = load_index(indices, i_strides, n, c, h, w, count);
        if (v == count) bad = 1;
        else atomic_max(&scratch[v], (uint)(k0 + w + 1));
    }
    END_ROWS
    if (bad) atomic_max(&status[ST_OUT_OF_RANGE], gen);
}

/* General path, 3 of 3: only the winning input position writes its element. */
__kernel void place(UNPOOL_ARGS)
{
    GENERAL_GATE
    const idx_t count = (idx_t)out_count;
    FOR_ROWS(in_sizes)
    const idx_t k0 = (nc * DIM(in_sizes, 2) + h) * DIM(in_sizes, 3);
    for (idx_t w = w0; w < w1; w++) {
        const idx_t v = load_index(indices, i_strides, n, c, h, w, count);
        if (v != count && scratch[v] == (uint)(k0 + w + 1))
            y[flat_offset(v, out_sizes, y_strides)] = x[offset4(x_strides, n, c, h, w)];
    }
    END_ROWS
}

/* Small inputs: one work-item scatters in row-major input order (the last
 * duplicate wins by order), after zero-filling the output itself when it is
 * small too (one launch in all), else after clear. */
__kernel void serial(UNPOOL_ARGS)
{
    if (get_global_id(0) != 0) return;
    const idx_t count = (idx_t)out_count;
#if SERIAL_FILLS
    for (idx_t nc = 0; nc < DIM(out_sizes, 0) * DIM(out_sizes, 1); nc++)
        for (idx_t h = 0; h < DIM(out_sizes, 2); h++)
            for (idx_t w = 0; w < DIM(out_sizes, 3); w++)
                y[offset4(y_strides, nc / DIM(out_sizes, 1), nc % DIM(out_sizes, 1), h, w)] = (elem_t)(0);
#endif
    uint bad = 0;
    for (idx_t nc = 0; nc < DIM(in_sizes, 0) * DIM(in_sizes, 1); nc++) {
        const idx_t n = nc / DIM(in_sizes, 1), c = nc % DIM(in_sizes, 1);
        for (idx_t h = 0; h < DIM(in_sizes, 2); h++)
            for (idx_t w = 0; w < DIM(in_sizes, 3); w++) {
                const idx_t v = load_index(indices, i_strides, n, c, h, w, count);
                if (v == count) bad = 1;
                else y[flat_offset(v, out_sizes, y_strides)] = x[offset4(x_strides, n, c, h, w)];
            }
    }
    if (bad) atomic_max(&status[ST_OUT_OF_RANGE], gen);
}
