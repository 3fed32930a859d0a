/* max_unpooling.cl - MaxUnpooling: one pass for pooling-shaped indices, a
 * deterministic scatter for any others, and one serial kernel for tiny tensors.
 *
 * Build options (besides clops_common.cl's):
 *   -DINDEX_BYTES=4|8        width of the indices; 8-byte indices (UINT64 or INT64)
 *                            are read as uint2, so no 64-bit integer support is needed
 *                            unless OFFSET_64 is set
 *   -DOUT_PACKED=1|0         1: the output is packed NCHW, a flat index is its offset
 *   -DIN_PACKED=1|0          1: the input and the indices are packed NCHW
 *   -DCHUNK=k                input positions (or output columns) each work-item walks
 *   -DKH=a -DKW=b            window height and width (output H, W / input H, W);
 *                            only for pooling-shaped plans
 *   -DGATED=1|0              1: the general kernels run only when the window kernel
 *                            of the same execution found an index outside its window
 *   -DSERIAL_FILLS=1|0       1: serial zero-fills the output itself (no clear before it)
 *
 * Status words `status` (the operator's, never reset on the host): each execution
 * has a generation number `gen`, larger than every earlier one, and the kernels
 * record an event with atomic_max(word, gen), so a word equals `gen` exactly when
 * this execution raised it:
 *   status[0]  an index was outside its window: the general path must run
 *   status[1]  an index was negative or past the output (never written)
 *   status[2]  two indices named one output element: place must run
 * `scratch` (the operator's, one uint per output element) holds claims: input
 * position k of this execution claims element v with atomic_max(scratch[v],
 * base + k + 1). Every claim of an earlier execution is at most `base` (the host
 * raises base by the input's element count per execution and zeroes scratch
 * before base would wrap), so nothing needs clearing between executions.
 *
 * NDRanges: 1-D; each kernel strides over its tensor's row chunks (FOR_ROWS),
 * serial runs on one work-item.
 */
#define ST_GENERAL 0
#define ST_OUT_OF_RANGE 1
#define ST_DUPLICATES 2

/* The flat output index at offset k of the indices, or `count` if it is out of
 * range (negative INT64 and UINT64 past 2^32 included when !OFFSET_64). */
inline idx_t load_index(__global const void *indices, idx_t k, idx_t count)
{
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

/* Offsets of input position (n, c, h, w) in x and in the indices; k0 + w when
 * both are packed (k0: the packed offset of (n, c, h, 0)). */
#if IN_PACKED
#define X_AT(w) (k0 + (w))
#define I_AT(w) (k0 + (w))
#else
#define X_AT(w) offset4(x_strides, n, c, h, w)
#define I_AT(w) offset4(i_strides, n, c, h, w)
#endif

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
        dims4 out_sizes, dims4 y_strides, offs_t out_count, uint gen, uint base

/* The work-items walk the rows of `sizes` CHUNK positions at a time, each taking
 * one contiguous run of row chunks (so its reads and writes stream through
 * memory): a 1-D launch of any size covers the tensor, and a gated kernel that
 * has nothing to do costs a few work-items, not one per row. Opens a loop body
 * with n, c, h, nc and [w0, w1); END_ROWS closes it. */
#define FOR_ROWS(sizes)                                                                          \
    const idx_t chunks_ = (DIM(sizes, 3) + CHUNK - 1) / CHUNK;                                   \
    const idx_t units_ = chunks_ * DIM(sizes, 2) * DIM(sizes, 0) * DIM(sizes, 1);                \
    const idx_t run_ = (units_ + get_global_size(0) - 1) / get_global_size(0);                   \
    const idx_t end_ = min(units_, ((idx_t)get_global_id(0) + 1) * run_);                        \
    for (idx_t u_ = (idx_t)get_global_id(0) * run_; u_ < end_; u_++) {                           \
        const idx_t w0 = u_ % chunks_ * CHUNK, h = u_ / chunks_ % DIM(sizes, 2);                 \
        const idx_t nc = u_ / chunks_ / DIM(sizes, 2);                                           \
        const idx_t n = nc / DIM(sizes, 1), c = nc % DIM(sizes, 1);                              \
        const idx_t w1 = min(w0 + (idx_t)CHUNK, DIM(sizes, 3));
#define END_ROWS }

/* claim in a gated plan returns at once unless this execution's window kernel
 * asked for the general path (place runs only after claim found duplicates). */
#if GATED
#define GENERAL_GATE                                                                             \
    if (status[ST_GENERAL] != gen) return;
#else
#define GENERAL_GATE
#endif

#ifdef KW
#if OUT_PACKED && IN_PACKED && !OFFSET_64 && KW == 2
/* The vector form of windows (x, indices and y packed, KW = 2): elements move as
 * words (word_t: uchar, ushort or uint; WORDS of them per element), LANES input
 * positions at a time: 16 words of x, 32 words of each output row. */
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#if ELEM_BYTES <= 4
#define WORDS 1
typedef elem_t word_t;
#elif ELEM_BYTES == 8
#define WORDS 2
typedef uint word_t;
#else
#define WORDS 4
typedef uint word_t;
#endif
#if ELEM_BYTES == 1
#define WORD(n) CAT(uchar, n)
#elif ELEM_BYTES == 2
#define WORD(n) CAT(ushort, n)
#else
#define WORD(n) CAT(uint, n)
#endif
#if WORDS == 1
#define LANES 16
typedef uint16 lane_u;
typedef int16 lane_i;
#define LANE_IDS ((lane_u)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
#define VLOAD_LANES vload16
#elif WORDS == 2
#define LANES 8
typedef uint8 lane_u;
typedef int8 lane_i;
typedef uint16 lane_u2;
#define LANE_IDS ((lane_u)(0, 1, 2, 3, 4, 5, 6, 7))
#define VLOAD_LANES vload8
#define VLOAD_LANES2 vload16
#else
#define LANES 4
typedef uint4 lane_u;
typedef int4 lane_i;
typedef uint8 lane_u2;
#define LANE_IDS ((lane_u)(0, 1, 2, 3))
#define VLOAD_LANES vload4
#define VLOAD_LANES2 vload8
#endif
/* 1- and 2-byte elements: a window row's two elements as one word of twice the
 * width (PAIR), its mask type (PAIR_MASK), and which half of it element t of the
 * pair is in memory order. */
#if ELEM_BYTES == 1
#define PAIR(n) CAT(ushort, n)
#define PAIR_MASK(n) CAT(short, n)
#elif ELEM_BYTES == 2
#define PAIR(n) CAT(uint, n)
#define PAIR_MASK(n) CAT(int, n)
#endif
#ifdef __ENDIAN_LITTLE__
#define PAIR_HALF(t) ((t) & 1)
#else
#define PAIR_HALF(t) (~(t) & 1)
#endif
/* A lane mask (0 or -1 per input position) spread over the 16 words of its lanes. */
#if WORDS == 1
#define SPREAD(m) (m)
#elif WORDS == 2
#define SPREAD(m) shuffle(m, (uint16)(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7))
#else
#define SPREAD(m) shuffle(m, (uint16)(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3))
#endif
/* Element by element, the 8 words of a and of b alternating (16 words). */
#if WORDS == 1
#define INTERLEAVE(a, b) shuffle2(a, b, (WORD(16))(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15))
#elif WORDS == 2
#define INTERLEAVE(a, b) shuffle2(a, b, (WORD(16))(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15))
#else
#define INTERLEAVE(a, b) shuffle2(a, b, (WORD(16))(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15))
#endif

/* LANES indices from packed position k; UINT_MAX (in no window) where an 8-byte
 * index is 2^32 or more. */
inline lane_u load_lanes(__global const void *indices, idx_t k)
{
    __global const uint *p = (__global const uint *)indices;
#if INDEX_BYTES == 4
    return VLOAD_LANES(0, p + k);
#elif LANES == 16
    const uint16 lo = vload16(0, p + 2 * k), hi = vload16(1, p + 2 * k);
    return select((uint16)(lo.even, hi.even), (uint16)(UINT_MAX), (uint16)(lo.odd, hi.odd) != 0);
#else
    const lane_u2 raw = VLOAD_LANES2(0, p + 2 * k);
    return select(raw.even, (lane_u)(UINT_MAX), raw.odd != 0);
#endif
}

/* One index at packed position k, UINT_MAX where an 8-byte index is 2^32 or more. */
inline uint load_one(__global const void *indices, idx_t k)
{
#if INDEX_BYTES == 4
    return ((__global const uint *)indices)[k];
#else
    const uint2 raw = ((__global const uint2 *)indices)[k];
    return raw.y ? UINT_MAX : raw.x;
#endif
}

/* Pooling-shaped indices in one pass (see the generic form below); each index and
 * each input element is loaded once, each output row written as vectors. */
__kernel void windows(UNPOOL_ARGS)
{
    const idx_t win = DIM(in_sizes, 3), wout = DIM(out_sizes, 3);
    uint outside = 0;
    lane_i lanes_outside = 0;
    FOR_ROWS(in_sizes)
    const idx_t in_row = (nc * DIM(in_sizes, 2) + h) * win;
    /* Flat output index of the window row h*KH, column 0. */
    const idx_t out_row = (nc * DIM(out_sizes, 2) + h * KH) * wout;
    /* Row after row of the windows (one output stream at a time: measured 2x
     * faster on PoCL than writing the KH rows side by side), LANES positions at a
     * time; the window check runs with the first row. */
    const idx_t wv = w0 + (w1 - w0) / LANES * LANES;
    for (uint r = 0; r < KH; r++) {
        const idx_t o_row = out_row + r * wout;
        for (idx_t w = w0; w < wv; w += LANES) {
            /* d: each index relative to its window's top-left corner (wraps if before it). */
            const lane_u d = load_lanes(indices, in_row + w) - ((uint)(out_row + w * KW) + LANE_IDS * KW);
            const WORD(16) xv = vload16(0, (__global const word_t *)x + (in_row + w) * WORDS);
            if (r == 0) {
                lane_i inside = 0;
                for (uint s = 0; s < KH; s++) inside |= d - s * (uint)wout < (uint)KW;
                lanes_outside |= ~inside;
            }
            const lane_u t = d - r * (uint)wout;
            const idx_t o = o_row + w * KW;
#if ELEM_BYTES <= 2
            /* Each window row pair y[o + 2i], y[o + 2i + 1] as one word of twice the
             * width: x shifted into the half that t names (o is even). */
            const PAIR(16) shift = CAT(convert_, PAIR(16))(PAIR_HALF(t)) * (PAIR())(ELEM_BYTES * 8);
            const PAIR(16) keep = CAT(as_, PAIR(16))(CAT(convert_, PAIR_MASK(16))(t < (uint)KW));
            vstore16((CAT(convert_, PAIR(16))(xv) << shift) & keep, 0, (__global PAIR() *)(y + o));
#else
            const WORD(16) m0 = (WORD(16))(0) - CAT(convert_, WORD(16))(SPREAD(t == 0) & 1);
            const WORD(16) m1 = (WORD(16))(0) - CAT(convert_, WORD(16))(SPREAD(t == 1) & 1);
            const WORD(16) a0 = xv & m0, a1 = xv & m1;
            __global word_t *yo = (__global word_t *)y + o * WORDS;
            vstore16(INTERLEAVE(a0.lo, a1.lo), 0, yo);
            vstore16(INTERLEAVE(a0.hi, a1.hi), 1, yo);
#endif
        }
    }
    for (idx_t w = wv; w < w1; w++) {
        const uint d = load_one(indices, in_row + w) - (uint)(out_row + w * KW);
        const elem_t v = x[in_row + w];
        uint inside = 0;
        for (uint r = 0; r < KH; r++) {
            const uint t = d - r * (uint)wout;
            inside |= t < KW;
            for (uint q = 0; q < KW; q++) y[out_row + r * wout + w * KW + q] = t == q ? v : (elem_t)(0);
        }
        outside |= !inside;
    }
    END_ROWS
    if (outside || any(lanes_outside)) atomic_max(&status[ST_GENERAL], gen);
}
#else
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
        const idx_t d = load_index(indices, offset4(i_strides, n, c, h, w), count) - (row0 + w * KW);
        uint inside = 0;
        for (idx_t r = 0; r < KH; r++) inside |= d - r * wout < KW;
        outside |= !inside;
    }
    for (idx_t r = 0; r < KH; r++) {
        const idx_t yrow = offset4(y_strides, n, c, h * KH + r, 0), ys = DIM(y_strides, 3);
        for (idx_t w = w0; w < w1; w++) {
            const idx_t t = load_index(indices, offset4(i_strides, n, c, h, w), count) - (row0 + w * KW) - r * wout;
            const elem_t v = x[offset4(x_strides, n, c, h, w)];
            for (idx_t q = 0; q < KW; q++) y[yrow + (w * KW + q) * ys] = t == q ? v : (elem_t)(0);
        }
    }
    END_ROWS
    if (outside) atomic_max(&status[ST_GENERAL], gen);
}
#endif /* vector windows */
#endif

/* General path, 1 of 3: zero the output (the windows plan needs no clear: its
 * window kernel wrote every element, zero wherever no index points). */
__kernel void clear(UNPOOL_ARGS)
{
    FOR_ROWS(out_sizes)
#if OUT_PACKED
    const idx_t yrow = (nc * DIM(out_sizes, 2) + h) * DIM(out_sizes, 3), ys = 1;
#else
    const idx_t yrow = offset4(y_strides, n, c, h, 0), ys = DIM(y_strides, 3);
#endif
    for (idx_t w = w0; w < w1; w++) y[yrow + w * ys] = (elem_t)(0);
    END_ROWS
}

/* General path, 2 of 3: each input position claims the output element its index
 * names, and writes it unless a larger position claimed it first. Distinct
 * indices are then done; where two positions named one element (status
 * ST_DUPLICATES), the writes may have landed in any order, and place rewrites
 * the element from the largest position: the winner whatever order the
 * work-items ran in. */
__kernel void claim(UNPOOL_ARGS)
{
    GENERAL_GATE
    const idx_t count = (idx_t)out_count;
    uint bad = 0, shared = 0;
    FOR_ROWS(in_sizes)
    const idx_t k0 = (nc * DIM(in_sizes, 2) + h) * DIM(in_sizes, 3);
    for (idx_t w = w0; w < w1; w++) {
        const idx_t v = load_index(indices, I_AT(w), count);
        if (v == count) {
            bad = 1;
            continue;
        }
        const uint mine = base + (uint)(k0 + w) + 1, before = atomic_max(&scratch[v], mine);
        shared |= before > base;
        if (before < mine) y[flat_offset(v, out_sizes, y_strides)] = x[X_AT(w)];
    }
    END_ROWS
    if (bad) atomic_max(&status[ST_OUT_OF_RANGE], gen);
    if (shared) atomic_max(&status[ST_DUPLICATES], gen);
}

/* General path, 3 of 3, only after duplicates: the largest position naming an
 * element writes it again. */
__kernel void place(UNPOOL_ARGS)
{
    if (status[ST_DUPLICATES] != gen) return;
    const idx_t count = (idx_t)out_count;
    FOR_ROWS(in_sizes)
    const idx_t k0 = (nc * DIM(in_sizes, 2) + h) * DIM(in_sizes, 3);
    for (idx_t w = w0; w < w1; w++) {
        const idx_t v = load_index(indices, I_AT(w), count);
        if (v != count && scratch[v] == base + (uint)(k0 + w) + 1)
            y[flat_offset(v, out_sizes, y_strides)] = x[X_AT(w)];
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
                const idx_t v = load_index(indices, offset4(i_strides, n, c, h, w), count);
                if (v == count) bad = 1;
                else y[flat_offset(v, out_sizes, y_strides)] = x[offset4(x_strides, n, c, h, w)];
            }
    }
    if (bad) atomic_max(&status[ST_OUT_OF_RANGE], gen);
}
