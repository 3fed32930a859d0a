/* max_unpooling.cl - MaxUnpooling: one pass for pooling-shaped indices, a
 * bucketed scatter (bucket, tiles) for any others, and one serial kernel for tiny
 * tensors.
 *
 * Build options (besides clops_common.cl's):
 *   -DINDEX_BYTES=4|8        width of the indices; 8-byte indices (UINT64 or INT64)
 *                            are read as uint2, so no 64-bit integer support is needed
 *                            unless OFFSET_64 is set
 *   -DOUT_PACKED=1|0         1: the output is packed NCHW, a flat index is its offset
 *   -DIN_PACKED=1|0          1: the input and the indices are packed NCHW
 *   -DINT64_OK=1|0           1: the device has 64-bit integers (the vector windows
 *                            kernel then loads 8-byte indices as ulong)
 *   -DCHUNK=k                input positions (or output columns) each work-item walks
 *   -DKH=a -DKW=b            window height and width (output H, W / input H, W);
 *                            only for pooling-shaped plans
 *   -DGATED=1|0              1: bucket and tiles run only when the windows or pool
 *                            kernel of the same execution found an index outside
 *                            its window or neighbourhood
 *   -DSERIAL_FILLS=1|0       1: serial zero-fills the output itself (no clear before it)
 *   -DPER_PLANE=1|0          1: an index counts within its own (n, c) output plane
 *                            (PyTorch): input plane p with index i names flat output
 *                            position p*H_out*W_out + i, valid iff i < H_out*W_out
 *   -DSH=a -DSW=b -DNA=c -DNB=d   the pool plan: input (h, w)'s cell is output rows
 *                            h*SH.., columns w*SW.., and its neighbourhood reaches NA
 *                            before and NB after the cell on each axis
 *   -DPOOL_VEC=1|0           1: pool's vector form (SH = SW = 2, NA = NB = 1, packed)
 *   -DPOOL_GATED=1|0         1: windows runs first and pool only after an index
 *                            outside its window (status[ST_POOL]); windows skips
 *                            itself while the last execution needed pool (WINDOWS_SKIP)
 *   -DPLANES=1|0             1: the planes kernel (CPU devices, packed, indices inside
 *                            their own plane) instead of pool (after windows, gated
 *                            like pool, for exact multiples)
 *   -DBUCKET=1|0             1 (every plan but serial): the general path bucket, then
 *                            tiles (entries bucketed by output tile in scratch, each
 *                            tile written whole); 0: serial, alone or after clear
 *
 * Status words `status` (the operator's, never reset on the host): each execution
 * has a generation number `gen`, larger than every earlier one, and the kernels
 * record an event with atomic_max(word, gen), so a word equals `gen` exactly when
 * this execution raised it:
 *   status[0]  an index was outside its window (or neighbourhood): the general
 *              path must run
 *   status[1]  an index was negative or past the output (never written)
 *   status[2]  (POOL_GATED) an index was outside its window: pool must run
 *   status[3..6] (BUCKET) the tiles' layout, set by the host once (ST_TILE_SHIFT),
 *              not generations
 * `scratch` (the operator's, BUCKET plans only) holds bucket's entries and bounds,
 * which every execution that runs bucket writes before tiles reads them, so
 * nothing needs clearing between executions.
 *
 * NDRanges: 1-D; each kernel strides over its tensor's row chunks (FOR_ROWS),
 * serial runs on one work-item.
 */
#define ST_GENERAL 0
#define ST_OUT_OF_RANGE 1
#define ST_POOL 2

/* The word windows raises for an index outside its window: with POOL_GATED, the
 * pool kernel runs next (it raises ST_GENERAL in turn). */
/* Windows and pool (only BUCKET plans have them) skip themselves when the
 * general path runs in this execution anyway (status[ST_GENERAL] == gen: it
 * rewrites every element) or ran in the operator's previous one, except every
 * 16th execution (the first included), which tries them again: scattered indices
 * then cost the bucketed general path alone. Unlike a test of gen - 1 alone, a
 * work-item that comes after one that skipped skips too. */
#define GENERAL_SKIP                                                                             \
    {                                                                                            \
        const uint general_ = atomic_max(&status[ST_GENERAL], 0u); /* an atomic read */          \
        if (general_ == gen || ((gen & 15u) != 1u && general_ == gen - 1u)) {                    \
            atomic_max(&status[ST_GENERAL], gen);                                                \
            return;                                                                              \
        }                                                                                        \
    }

#if POOL_GATED
#define WINDOWS_WORD ST_POOL
/* windows skips itself (and leaves everything to pool) when the operator's
 * previous execution needed pool, except every 16th execution (the first
 * included), which tries it again: an operator's indices keep their kind from one
 * execution to the next, so a 2x2 pool costs the windows pass and a 3x3/2 pool
 * mostly the pool pass alone. A work-item that skips raises ST_POOL, so pool
 * rewrites every element whatever the others did; for the same reason a
 * work-item that finds ST_POOL raised by this execution already (by a skip or an
 * index outside its window) skips too (before, only gen - 1 was tested, so every
 * work-item after the first skip ran the whole windows pass for nothing). */
#define WINDOWS_SKIP                                                                             \
    GENERAL_SKIP                                                                                 \
    {                                                                                            \
        const uint pool_ = atomic_max(&status[ST_POOL], 0u); /* an atomic read */                \
        if (pool_ == gen || ((gen & 15u) != 1u && pool_ == gen - 1u)) {                          \
            atomic_max(&status[ST_POOL], gen);                                                   \
            return;                                                                              \
        }                                                                                        \
    }
#else
#define WINDOWS_WORD ST_GENERAL
#define WINDOWS_SKIP GENERAL_SKIP
#endif

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

/* The flat output index named at offset k of the indices of input plane nc
 * (plane: H_out*W_out elements), or `count` if it is out of range. */
inline idx_t load_flat(__global const void *indices, idx_t k, idx_t nc, idx_t plane, idx_t count)
{
#if PER_PLANE
    const idx_t i = load_index(indices, k, plane);
    return i < plane ? nc * plane + i : count;
#else
    (void)nc;
    (void)plane;
    return load_index(indices, k, count);
#endif
}

/* Where plane nc's indices count from (flat: its first element; per plane: 0),
 * and the bound an index is read against (load_index). */
#if PER_PLANE
#define PLANE_BASE(nc, plane) ((idx_t)0)
#define INDEX_LIMIT(plane, count) (plane)
#else
#define PLANE_BASE(nc, plane) ((nc) * (plane))
#define INDEX_LIMIT(plane, count) (count)
#endif

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
        dims4 out_sizes, dims4 y_strides, offs_t out_count, uint gen

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

/* bucket and tiles in a gated plan return at once unless this execution's windows
 * or pool kernel asked for the general path. */
#if GATED
#define GENERAL_GATE                                                                             \
    if (status[ST_GENERAL] != gen) return;
#else
#define GENERAL_GATE
#endif

#if OUT_PACKED && IN_PACKED && !OFFSET_64 && ((defined(KW) && KW == 2) || POOL_VEC)
#define VECTOR_DEFS 1
/* For the vector forms of windows and pool (x, indices and y packed). Windows
 * (KW = 2): elements move as
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
#elif WORDS == 2
#define LANES 8
typedef uint8 lane_u;
typedef int8 lane_i;
typedef uint16 lane_u2;
#define LANE_IDS ((lane_u)(0, 1, 2, 3, 4, 5, 6, 7))
#define VLOAD_LANES2 vload16
#else
#define LANES 4
typedef uint4 lane_u;
typedef int4 lane_i;
typedef uint8 lane_u2;
#define LANE_IDS ((lane_u)(0, 1, 2, 3))
#define VLOAD_LANES2 vload8
#endif
/* Vectors at any element-aligned address: PoCL 3.1 lowers vloadn and vstoren on
 * pointers it cannot prove aligned to pieces (one vstore16 of ushort became 16
 * two-byte stores, a vload16 of uchar four 4-byte loads and shuffles); through
 * a type of alignment 1 the same access is one unaligned move. LOADU/STOREU for
 * __global, LOADP/STOREP for __private; T is a vector type name (or a macro for
 * one). */
typedef uchar16 __attribute__((aligned(1))) uchar16_u;
typedef ushort16 __attribute__((aligned(1))) ushort16_u;
typedef uint4 __attribute__((aligned(1))) uint4_u;
typedef uint8 __attribute__((aligned(1))) uint8_u;
typedef uint16 __attribute__((aligned(1))) uint16_u;
typedef ulong4 __attribute__((aligned(1))) ulong4_u;
typedef ulong8 __attribute__((aligned(1))) ulong8_u;
typedef ulong16 __attribute__((aligned(1))) ulong16_u;
#define LOADU(T, p) (*(__global const CAT(T, _u) *)(p))
#define STOREU(T, p, v) (*(__global CAT(T, _u) *)(p) = (v))
#define LOADP(T, p) (*(__private const CAT(T, _u) *)(p))
#define STOREP(T, p, v) (*(__private CAT(T, _u) *)(p) = (v))
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
/* Element by element, a's and b's elements alternating: the first (LO) or last
 * (HI) 16 words of the 32. */
#if WORDS == 1
#define INTERLEAVE_LO(a, b) shuffle2(a, b, (WORD(16))(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23))
#define INTERLEAVE_HI(a, b) shuffle2(a, b, (WORD(16))(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31))
#elif WORDS == 2
#define INTERLEAVE_LO(a, b) shuffle2(a, b, (WORD(16))(0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23))
#define INTERLEAVE_HI(a, b) shuffle2(a, b, (WORD(16))(8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31))
#else
#define INTERLEAVE_LO(a, b) shuffle2(a, b, (WORD(16))(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23))
#define INTERLEAVE_HI(a, b) shuffle2(a, b, (WORD(16))(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31))
#endif

/* LANES indices from packed position k; UINT_MAX (in no window) where an 8-byte
 * index is 2^32 or more. With 64-bit integers, 8-byte indices load as ulong and
 * narrow lane by lane (measured 1.6x faster on PoCL than splitting words with
 * shuffle2; swizzles such as .even are as fast, but Oclgrind 21.10 mis-tracks
 * them and reports their results as uninitialised). */
inline lane_u load_lanes(__global const void *indices, idx_t k)
{
#if INDEX_BYTES == 4
    return LOADU(CAT(uint, LANES), (__global const uint *)indices + k);
#elif INT64_OK
    const CAT(ulong, LANES) raw = LOADU(CAT(ulong, LANES), (__global const ulong *)indices + k);
    return CAT(convert_uint, LANES)(min(raw, (ulong)UINT_MAX));
#elif LANES == 16
    __global const uint *p = (__global const uint *)indices;
    const uint16 lo = vload16(0, p + 2 * k), hi = vload16(1, p + 2 * k);
    const uint16 low = shuffle2(lo, hi, (uint16)(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30));
    const uint16 high = shuffle2(lo, hi, (uint16)(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31));
    return select(low, (uint16)(UINT_MAX), high != 0);
#else
    const lane_u2 raw = VLOAD_LANES2(0, (__global const uint *)indices + 2 * k);
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

#endif /* vector definitions */

#ifdef KW
#if VECTOR_DEFS && KW == 2
/* Pooling-shaped indices in one pass (see the generic form below); each index and
 * each input element is loaded once, each output row written as vectors. */
__kernel void windows(UNPOOL_ARGS)
{
    WINDOWS_SKIP
    const idx_t win = DIM(in_sizes, 3), wout = DIM(out_sizes, 3);
    uint outside = 0;
    lane_i lanes_outside = 0;
    FOR_ROWS(in_sizes)
    const idx_t in_row = (nc * DIM(in_sizes, 2) + h) * win;
    /* Output offset of the window row h*KH, column 0, and the index that names it. */
    const idx_t y_row = (nc * DIM(out_sizes, 2) + h * KH) * wout;
    const idx_t out_row = PLANE_BASE(nc, DIM(out_sizes, 2) * wout) + h * KH * wout;
    /* Row after row of the windows (one output stream at a time: measured 2x
     * faster on PoCL than writing the KH rows side by side), LANES positions at a
     * time; the window check runs with the first row. */
    const idx_t wv = w0 + (w1 - w0) / LANES * LANES;
    for (uint r = 0; r < KH; r++) {
        const idx_t o_row = y_row + r * wout;
        for (idx_t w = w0; w < wv; w += LANES) {
            /* d: each index relative to its window's top-left corner (wraps if before it). */
            const lane_u d = load_lanes(indices, in_row + w) - ((uint)(out_row + w * KW) + LANE_IDS * KW);
            #if ELEM_BYTES <= 2 /* 1- and 2-byte elements through LOADU/STOREU: measured 2x faster for 1-byte */
            const WORD(16) xv = LOADU(WORD(16), (__global const word_t *)x + (in_row + w) * WORDS);
#else
            const WORD(16) xv = vload16(0, (__global const word_t *)x + (in_row + w) * WORDS);
#endif
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
            STOREU(PAIR(16), y + o, (CAT(convert_, PAIR(16))(xv) << shift) & keep);
#else
            const WORD(16) m0 = (WORD(16))(0) - CAT(convert_, WORD(16))(SPREAD(t == 0) & 1);
            const WORD(16) m1 = (WORD(16))(0) - CAT(convert_, WORD(16))(SPREAD(t == 1) & 1);
            const WORD(16) a0 = xv & m0, a1 = xv & m1;
            __global word_t *yo = (__global word_t *)y + o * WORDS;
            vstore16(INTERLEAVE_LO(a0, a1), 0, yo);
            vstore16(INTERLEAVE_HI(a0, a1), 1, yo);
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
            for (uint q = 0; q < KW; q++) y[y_row + r * wout + w * KW + q] = t == q ? v : (elem_t)(0);
        }
        outside |= !inside;
    }
    END_ROWS
    if (outside || any(lanes_outside)) atomic_max(&status[WINDOWS_WORD], gen);
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
    WINDOWS_SKIP
    const idx_t wout = DIM(out_sizes, 3), plane = DIM(out_sizes, 2) * wout;
    const idx_t count = INDEX_LIMIT(plane, (idx_t)out_count);
    uint outside = 0;
    FOR_ROWS(in_sizes)
    /* The index that names the window row h*KH, column 0. */
    const idx_t row0 = PLANE_BASE(nc, plane) + h * KH * wout;
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
    if (outside) atomic_max(&status[WINDOWS_WORD], gen);
}
#endif /* vector windows */
#endif

#ifdef SH
/* ---- pool: indices from a max pool whose windows may overlap ---------------------------------------
 * Input (h, w)'s cell is output rows h*SH .. h*SH+SH-1 and columns w*SW .. w*SW+SW-1;
 * its neighbourhood reaches NA rows and columns before the cell and NB after it
 * (clipped to the output). A max pool of kernel K, stride S, padding P puts each
 * argmax within [h*S - P, h*S - P + K - 1]: inside the neighbourhood whenever
 * P <= NA and K - S - P <= NB. Output element (r, q) then has a small fixed set of
 * candidates, the input elements whose neighbourhood holds it (for SH = SW = 2,
 * NA = NB = 1: two rows by two columns), and takes the value of the last of them in
 * row-major input order whose index names it, zero if none does: every output
 * element is written once, by the work-item that owns it, with no atomics and no
 * clear. Work-item unit (nc, h, [w0, w1)) checks that each of those inputs' index
 * lies in its neighbourhood (else status[ST_GENERAL]: the gated general path
 * rewrites the whole output, with the same bits), and writes output
 * rows h*SH.. (the last input row: to the end) by columns w0*SW.. (the last chunk
 * of a row: to the end). */

/* Plane nc's index at offset k relative to the plane's first element, or `plane`
 * if it names no element of that plane (out of range included). */
inline idx_t plane_index(__global const void *indices, idx_t k, idx_t nc, idx_t plane, idx_t count)
{
#if PER_PLANE
    (void)nc;
    (void)count;
    return load_index(indices, k, plane);
#else
    const idx_t v = load_index(indices, k, count) - nc * plane; /* wraps when before the plane */
    return v < plane ? v : plane;
#endif
}

/* First and last input row (or column) whose neighbourhood holds output row (or
 * column) r, before clipping to the input: lo..hi, lo > hi when none. */
#define POOL_LO(r, s) ((r) + NB * ((s) - 1) >= NB * (s) ? ((r) + NB * ((s) - 1)) / (s) - NB : 0)
#define POOL_HI(r, s, n) min((idx_t)(n) - 1, ((r) + NA) / (s))

/* Whether plane-relative index i lies in the neighbourhood of input (h, w). */
inline uint pool_inside(idx_t i, idx_t h, idx_t w, idx_t hout, idx_t wout)
{
    const idx_t r0 = h * SH >= NA ? h * SH - NA : 0, r1 = min(hout, h * SH + SH + NB);
    const idx_t c0 = w * SW >= NA ? w * SW - NA : 0, c1 = min(wout, w * SW + SW + NB);
    uint inside = 0;
    if (c1 > c0)
        for (idx_t r = r0; r < r1; r++) inside |= i - r * wout - c0 < c1 - c0;
    return inside;
}

/* Output (r, q) of plane (n, c) gathered from its candidates. */
inline elem_t pool_gather(__global const elem_t *x, __global const void *indices, dims4 in_sizes, dims4 x_strides,
                          dims4 i_strides, idx_t n, idx_t c, idx_t nc, idx_t r, idx_t q, idx_t wout, idx_t plane,
                          idx_t count)
{
    const idx_t target = r * wout + q;
    const idx_t h1 = POOL_HI(r, SH, DIM(in_sizes, 2)), w1 = POOL_HI(q, SW, DIM(in_sizes, 3));
    elem_t v = (elem_t)(0);
    for (idx_t h = POOL_LO(r, SH); h <= h1; h++)
        for (idx_t w = POOL_LO(q, SW); w <= w1; w++)
            if (plane_index(indices, offset4(i_strides, n, c, h, w), nc, plane, count) == target)
                v = x[offset4(x_strides, n, c, h, w)];
    return v;
}

#if POOL_VEC
/* The vector form (SH = SW = 2, NA = NB = 1, x, indices and y packed, 32-bit
 * offsets): LANES input columns w.. at a time give output columns 2w.. of row
 * r; even column 2m's candidates are columns m-1 and m, odd column 2m+1's m and
 * m+1, so three loads (at w-1, w, w+1) of each candidate row's codes (below:
 * each index turned once into its place in its 4 x 4 neighbourhood, kept in
 * private memory) and values serve both, without shuffles. */
#if ELEM_BYTES == 1
#define POOL_T uchar
#elif ELEM_BYTES == 2
#define POOL_T ushort
#elif ELEM_BYTES == 4
#define POOL_T uint
#else
#define POOL_T ulong /* needs INT64_OK (the host sets POOL_VEC so) */
#endif
typedef POOL_T pool_t;
#define PV(n) CAT(POOL_T, n)
#define PVL PV(LANES)

/* Even (e) and odd (o) output columns 2w.. of one output row, interleaved and
 * stored at y + yo (yo even for 1- and 2-byte elements: the host asks so). */
inline void pool_store(PVL e, PVL o, __global elem_t *y, idx_t yo)
{
#if ELEM_BYTES <= 2
#ifdef __ENDIAN_LITTLE__
    const PAIR(16) lo = CAT(convert_, PAIR(16))(e), hi = CAT(convert_, PAIR(16))(o);
#else
    const PAIR(16) lo = CAT(convert_, PAIR(16))(o), hi = CAT(convert_, PAIR(16))(e);
#endif
    STOREU(PAIR(16), y + yo, lo | (hi << (PAIR())(ELEM_BYTES * 8)));
#elif ELEM_BYTES == 4
    __global uint *p = (__global uint *)(y + yo);
    STOREU(uint16, p, shuffle2(e, o, (uint16)(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23)));
    STOREU(uint16, p + 16, shuffle2(e, o, (uint16)(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31)));
#else
    STOREU(ulong16, y + yo, shuffle2(e, o, (ulong16)(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15)));
#endif
}
#endif /* POOL_VEC */

#if POOL_VEC
/* Codes (the vector form): where the index of input (hh, w) lies in its
 * neighbourhood, rows 2hh-1 .. 2hh+2 by columns 2w-1 .. 2w+2, as row * 4 +
 * column of that 4 x 4 square (0 .. 15), else POOL_NONE; 5, 6, 9, 10 are its own
 * cell. Stored as pool_t, so comparing them gives masks of the elements' width. */
#define POOL_NONE 255u
/* Columns of codes a work-item keeps per row (its chunk and one either side, at
 * most 1026: past that the rest of a longer chunk goes through the scalar gather). */
#define POOL_SPAN (CHUNK < 1024u ? CHUNK + 2u : 1026u)

/* The code of plane-relative index i (plane: none) for input (hh, w). */
inline uint pool_code_one(idx_t i, idx_t hh, idx_t w, idx_t hout, idx_t wout)
{
    if (i >= hout * wout) return POOL_NONE;
    const idx_t r = i / wout + 1 - 2 * hh, q = i % wout + 1 - 2 * w; /* wrap when before */
    return r < 4 && q < 4 ? (uint)(r * 4 + q) : POOL_NONE;
}

/* The codes of input row hh, columns wa-1 .. wb, into c[0 .. wb-wa+1] (wb >=
 * wa + LANES; every neighbourhood column of wa .. wb-1 lies in the output, the
 * two ends are clipped one by one). Bit 0 of the result: every code is in its
 * own cell; bit 1: one of columns wa .. wb-1 is outside its neighbourhood. */
inline uint pool_row_codes(__private pool_t *c, __global const void *indices, idx_t nc, idx_t hh, idx_t wa, idx_t wb,
                           idx_t hin, idx_t win, idx_t hout, idx_t wout, idx_t pb, idx_t plane, idx_t count)
{
    const idx_t k0 = (nc * hin + hh) * win;
    const uint base = (uint)(pb + 2 * hh * wout) - (uint)wout - 1u; /* index of (2hh-1, -1), mod 2^32 */
    const uint wo = (uint)wout;
    const uint r0 = hh > 0, r1 = 2 * hh < hout, r2 = 2 * hh + 1 < hout, r3 = 2 * hh + 2 < hout;
    lane_i cells = -1, outside = 0;
    for (idx_t s = wa; s < wb; s += LANES) {
        const idx_t w = min(s, wb - LANES); /* the last step overlaps the one before */
        const lane_u d = load_lanes(indices, k0 + w) - ((base + 2 * (uint)w) + LANE_IDS * 2);
        lane_u code = (lane_u)(POOL_NONE);
        if (r0) code = select(code, d, d < 4u);
        if (r1) code = select(code, d - wo + 4u, d - wo < 4u);
        if (r2) code = select(code, d - 2u * wo + 8u, d - 2u * wo < 4u);
        if (r3) code = select(code, d - 3u * wo + 12u, d - 3u * wo < 4u);
        outside |= code == POOL_NONE;
        cells &= ((code - 5u) & ~5u) == 0u;
        STOREP(PVL, c + (w - wa + 1), CAT(convert_, PVL)(code));
    }
    uint ends = 1;
    for (idx_t w = wa - 1; w <= wb; w += wb - wa + 1) {
        const uint code = pool_code_one(plane_index(indices, k0 + w, nc, plane, count), hh, w, hout, wout);
        c[w - wa + 1] = (pool_t)code;
        ends &= ((code - 5u) & ~5u) == 0u;
    }
    return (uint)(ends && all(cells)) | (uint)any(outside) << 1;
}

/* pool_gather for packed tensors: output (r, q) of plane nc, whose flat (or
 * plane-relative) index is `target`. */
inline elem_t pool_gather_packed(__global const elem_t *x, __global const void *indices, idx_t nc, idx_t hin,
                                 idx_t win, idx_t r, idx_t q, uint target)
{
    const idx_t h1 = POOL_HI(r, 2, hin), w1 = POOL_HI(q, 2, win);
    elem_t v = (elem_t)(0);
    for (idx_t h = POOL_LO(r, 2); h <= h1; h++) {
        const idx_t k = (nc * hin + h) * win;
        for (idx_t w = POOL_LO(q, 2); w <= w1; w++)
            if (load_one(indices, k + w) == target) v = x[k + w];
    }
    return v;
}
#endif /* POOL_VEC */

__kernel void pool(UNPOOL_ARGS)
{
#if POOL_GATED
    if (status[ST_POOL] != gen) return; /* windows found every index in its window */
#endif
    GENERAL_SKIP
    const idx_t hin = DIM(in_sizes, 2), win = DIM(in_sizes, 3), hout = DIM(out_sizes, 2), wout = DIM(out_sizes, 3);
    const idx_t plane = hout * wout, count = (idx_t)out_count;
    uint outside = 0;
#if POOL_VEC
    /* The codes of input rows h-1 .. h+1 (row hh in codes[hh % 3]); a unit that
     * follows row h-1 of the same plane and chunk (a work-item walks its units in
     * order) keeps rows h-1 and h and computes row h+1 alone, so each index is
     * loaded about once. cells: bit hh % 3 when every code of row hh is in its
     * own cell. */
    pool_t codes[3][POOL_SPAN];
    idx_t held_nc = (idx_t)-1, held_h = 0, held_w0 = 0;
    uint cells = 0, outs = 0; /* outs: bit hh % 3 when an index of row hh is outside */
#endif
    FOR_ROWS(in_sizes)
    /* Columns [wa, wb) go LANES at a time (the last step overlapping the one
     * before: its outputs are written twice with the same bits, by this
     * work-item): every candidate column w-1 .. w+LANES exists and every
     * neighbourhood column 2w-1 .. 2(w+LANES) lies in the output. */
    uint far = 0; /* an index of this unit lies outside its neighbourhood */
#if POOL_VEC
    const idx_t wend = min(min(min(w1, win - 1), (wout - 1) / 2), w0 + (idx_t)POOL_SPAN - 2);
    const idx_t wa = max(w0, (idx_t)1), wb = wend >= wa + LANES ? wend : wa;
    const idx_t pb = PLANE_BASE(nc, plane);
    /* strict: every code of rows h-1 .. h+1, columns wa-1 .. wb, is in its own cell
     * (as a 2x2/2 pool gives): output rows 2h, 2h+1, columns 2wa .. 2wb-1, then
     * come from row h alone, one candidate each. */
    uint strict = 0;
    if (wb > wa) {
        const idx_t hs0 = h ? h - 1 : 0, hs1 = min(h + 2, hin);
        const idx_t from = held_nc == nc && held_w0 == w0 && held_h + 1 == h ? h + 1 : hs0;
        for (idx_t hh = from; hh < hs1; hh++) {
            const uint got = pool_row_codes(codes[hh % 3], indices, nc, hh, wa, wb, hin, win, hout, wout, pb,
                                            plane, INDEX_LIMIT(plane, count));
            cells = (cells & ~(1u << hh % 3)) | (got & 1u) << hh % 3;
            outs = (outs & ~(1u << hh % 3)) | (got >> 1) << hh % 3;
        }
        far = outs >> h % 3 & 1u;
        held_nc = nc, held_h = h, held_w0 = w0;
        strict = 1;
        for (idx_t hh = hs0; hh < hs1; hh++) strict &= cells >> hh % 3;
    } else {
        held_nc = (idx_t)-1;
    }
#else
    const idx_t wa = w0, wb = w0;
#endif
    for (idx_t w = w0; w < w1; w++) {
        if (w == wa) w = wb;
        if (w >= w1) break;
        far |= !pool_inside(plane_index(indices, offset4(i_strides, n, c, h, w), nc, plane, count), h, w, hout, wout);
    }
    const idx_t r0 = min(hout, h * SH), r1 = h + 1 == hin ? hout : min(hout, (h + 1) * SH);
    const idx_t q0 = min(wout, w0 * SW), q1 = w1 == win ? wout : min(wout, w1 * SW);
    outside |= far;
    if (far) { /* the general path rewrites the whole output: zeros here, no gather */
        for (idx_t r = r0; r < r1; r++) {
            const idx_t yrow = offset4(y_strides, n, c, r, 0), ys = DIM(y_strides, 3);
            for (idx_t q = q0; q < q1; q++) y[yrow + q * ys] = (elem_t)(0);
        }
        continue;
    }
    for (idx_t r = r0; r < r1; r++) {
        const idx_t yrow = offset4(y_strides, n, c, r, 0), ys = DIM(y_strides, 3);
        for (idx_t q = q0; q < q1; q++) {
            if (q == 2 * wa && wb > wa) q = 2 * wb;
            if (q >= q1) break;
#if POOL_VEC
            y[yrow + q] = pool_gather_packed(x, indices, nc, hin, win, r, q, (uint)(pb + r * wout + q));
#else
            y[yrow + q * ys] = pool_gather(x, indices, in_sizes, x_strides, i_strides, n, c, nc, r, q, wout, plane, count);
#endif
        }
#if POOL_VEC
        const idx_t h_lo = POOL_LO(r, 2), h_hi = POOL_HI(r, 2, hin);
        if (strict && r - 2 * h < 2) { /* from row h alone: codes 5, 6 (row 2h) or 9, 10 (row 2h+1) */
            const pool_t ce = (pool_t)(4 * (r - 2 * h) + 5);
            for (idx_t s = wa; s < wb; s += LANES) {
                const idx_t w = min(s, wb - LANES), k = (nc * hin + h) * win + w;
                const PVL cv = LOADP(PVL, codes[h % 3] + (w - wa + 1)), z = 0;
                const PVL xv = LOADU(PVL, (__global const pool_t *)x + k);
                pool_store(select(z, xv, cv == ce), select(z, xv, cv == (pool_t)(ce + 1)), y, yrow + 2 * w);
            }
            continue;
        }
        for (idx_t s = wa; s < wb; s += LANES) {
            const idx_t w = min(s, wb - LANES);
            PVL e = 0, o = 0;
            for (idx_t hh = h_lo; hh <= h_hi; hh++) {
                /* Row hh's codes for output row r: 4 * (r - 2hh + 1) + column. */
                const pool_t cb = (pool_t)(4 * (r + 1 - 2 * hh));
                __private const pool_t *cr = codes[hh % 3] + (w - wa + 1);
                const PVL cm = LOADP(PVL, cr - 1), c0 = LOADP(PVL, cr), cp = LOADP(PVL, cr + 1);
                __global const pool_t *xp = (__global const pool_t *)x + (nc * hin + hh) * win + w;
                const PVL xm = LOADU(PVL, xp - 1), x0 = LOADU(PVL, xp), x1 = LOADU(PVL, xp + 1);
                e = select(e, xm, cm == (pool_t)(cb + 3));
                e = select(e, x0, c0 == (pool_t)(cb + 1));
                o = select(o, x0, c0 == (pool_t)(cb + 2));
                o = select(o, x1, cp == cb);
            }
            pool_store(e, o, y, yrow + 2 * w);
        }
#endif
    }
    END_ROWS
    if (outside) atomic_max(&status[ST_GENERAL], gen);
}
#endif /* SH */

#if PLANES
/* ---- planes: CPU devices, indices that stay inside their own (n, c) plane ------------------------
 * Every index a max pool gives (any kernel, stride, padding) names an element of
 * its own plane. Each work-item takes a contiguous run of planes and, plane
 * after plane, zero-fills the output plane and writes the plane's inputs into it
 * in input order (the last writer wins), while the plane stays in the CPU's
 * cache: one pass, no atomics, no index arithmetic beyond a subtraction. An index
 * outside its plane (out of range included) is written nowhere here and raises
 * status[ST_GENERAL]: the bucketed general path behind it rewrites the whole
 * output, with the same bits. Packed tensors only. */
__kernel void planes(UNPOOL_ARGS)
{
#if POOL_GATED
    if (status[ST_POOL] != gen) return; /* windows found every index in its window */
#endif
    GENERAL_SKIP
    const idx_t per_in = DIM(in_sizes, 2) * DIM(in_sizes, 3), plane = DIM(out_sizes, 2) * DIM(out_sizes, 3);
    const idx_t count = (idx_t)out_count, planes = DIM(in_sizes, 0) * DIM(in_sizes, 1);
    const idx_t run = (planes + get_global_size(0) - 1) / get_global_size(0);
    const idx_t p0 = min(planes, (idx_t)get_global_id(0) * run), p1 = min(planes, p0 + run);
    uint outside = 0;
    for (idx_t nc = p0; nc < p1; nc++) {
        __global elem_t *restrict yp = y + nc * plane;
        for (idx_t v = 0; v < plane; v++) yp[v] = (elem_t)(0);
        const idx_t k0 = nc * per_in, first = PLANE_BASE(nc, plane);
        for (idx_t k = k0; k < k0 + per_in; k++) {
            const idx_t i = load_index(indices, k, INDEX_LIMIT(plane, count)) - first; /* wraps below the plane */
            if (i < plane) yp[i] = x[k];
            else outside = 1;
        }
    }
    if (outside) atomic_max(&status[ST_GENERAL], gen);
}
#endif

/* Serial plans whose output is too large for serial to fill: zero the output
 * first (the other plans' kernels write every output element themselves). */
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

#if BUCKET
/* General path, BUCKET plans (two launches, no atomics, no clear): the input
 * positions' entries (tile-relative index, value) bucketed by output tile (a
 * range of 2^shift flat output indices), then each tile written whole.
 *
 * scratch holds, from its start (idx_t arithmetic; N = the input's elements
 * rounded up to 4): N values (elem_t), N tile-relative indices (uint), then per
 * work-item g of `bucket` a row of tiles + 1 bounds: g's entries for tile t
 * end at row g's word t + 1 (word 0: where g's region starts, its input
 * positions before its run of rows plus the pads before them). The
 * host puts the tile shift, the number of bucket work-items and of tiles in the
 * status buffer after the status words (ST_TILE_SHIFT..), once, at create time.
 * Each bucket starts after `pad` unused slots (tile t's entries of work-item g:
 * row g's word t + pad .. word t + 1): with evenly spread indices the
 * buckets' sizes are alike, and streams a multiple of 4 KiB apart would share
 * one set of the L1 cache (measured: 14 ms against 1.3 ms for bucket on PoCL). */
#define ST_TILE_SHIFT 3
#define ST_GROUPS 4
#define ST_TILES 5
#define ST_PAD 6

inline idx_t bucket_rounded(dims4 in_sizes, volatile __global const uint *status)
{
    const idx_t n = DIM(in_sizes, 0) * DIM(in_sizes, 1) * DIM(in_sizes, 2) * DIM(in_sizes, 3);
    return (n + (idx_t)status[ST_GROUPS] * status[ST_TILES] * status[ST_PAD] + 3) & ~(idx_t)3;
}
#define BUCKET_VALUES(in_sizes) ((__global elem_t *)scratch)
#define BUCKET_INDICES(in_sizes) (scratch + bucket_rounded(in_sizes, status) * ELEM_BYTES / 4)
#define BUCKET_BOUNDS(in_sizes) (BUCKET_INDICES(in_sizes) + bucket_rounded(in_sizes, status))

/* Bucket: each work-item counts its valid indices per tile (flagging those out of
 * range), turns the counts into slot ranges inside its own region of scratch
 * (its input positions, in order), and writes its entries there in input order:
 * one sequential stream per tile. */
__kernel void bucket(UNPOOL_ARGS)
{
    GENERAL_GATE
    const uint shift = status[ST_TILE_SHIFT], pad = status[ST_PAD];
    const idx_t tiles = status[ST_TILES], count = (idx_t)out_count, plane = DIM(out_sizes, 2) * DIM(out_sizes, 3);
    __global elem_t *values = BUCKET_VALUES(in_sizes);
    __global uint *slots = BUCKET_INDICES(in_sizes);
    __global uint *bounds = BUCKET_BOUNDS(in_sizes) + (idx_t)get_global_id(0) * (tiles + 1);
    for (idx_t t = 1; t <= tiles; t++) bounds[t] = 0;
    uint bad = 0;
    { /* counts, in bounds[t + 1] */
        FOR_ROWS(in_sizes)
        const idx_t k0 = (nc * DIM(in_sizes, 2) + h) * DIM(in_sizes, 3);
        for (idx_t w = w0; w < w1; w++) {
            const idx_t v = load_flat(indices, I_AT(w), nc, plane, count);
            if (v == count) bad = 1;
            else bounds[(v >> shift) + 1]++;
        }
        END_ROWS
        /* this run starts at unit u0: the input positions before it, and the pads of
         * the work-items before it */
        const idx_t u0 = min(units_, (idx_t)get_global_id(0) * run_);
        uint at = (uint)(u0 / chunks_ * DIM(in_sizes, 3) + u0 % chunks_ * CHUNK + get_global_id(0) * tiles * pad);
        bounds[0] = at;
        for (idx_t t = 1; t <= tiles; t++) { /* bounds[t]: where tile t - 1's entries start */
            const uint n = bounds[t];
            bounds[t] = at + pad;
            at += pad + n;
        }
    }
    if (bad) atomic_max(&status[ST_OUT_OF_RANGE], gen);
    { /* entries: bounds[t + 1] moves from tile t's start to its end */
        FOR_ROWS(in_sizes)
        const idx_t k0 = (nc * DIM(in_sizes, 2) + h) * DIM(in_sizes, 3);
        for (idx_t w = w0; w < w1; w++) {
            const idx_t v = load_flat(indices, I_AT(w), nc, plane, count);
            if (v == count) continue;
            const idx_t t = v >> shift, s = bounds[t + 1]++;
            slots[s] = (uint)(v - (t << shift));
            values[s] = x[X_AT(w)];
        }
        END_ROWS
    }
}

/* Tiles: each tile of the output written whole by one work-item: zeros, then the
 * entries of bucket's work-items 0, 1, ... in order, each in input order (the
 * last position naming an element wins, as everywhere). Every output element is
 * written, so the plan needs no clear, and nothing the windows or pool kernel
 * left survives. */
__kernel void tiles(UNPOOL_ARGS)
{
    GENERAL_GATE
    const uint shift = status[ST_TILE_SHIFT], pad = status[ST_PAD];
    const idx_t groups = status[ST_GROUPS], tiles = status[ST_TILES], count = (idx_t)out_count;
    __global const elem_t *values = BUCKET_VALUES(in_sizes);
    __global const uint *slots = BUCKET_INDICES(in_sizes), *bounds = BUCKET_BOUNDS(in_sizes);
    for (idx_t t = get_global_id(0); t < tiles; t += get_global_size(0)) {
        const idx_t t0 = t << shift, t1 = min(count, t0 + ((idx_t)1 << shift));
#if OUT_PACKED
        __global elem_t *tile = y + t0;
        for (idx_t v = 0; v < t1 - t0; v++) tile[v] = (elem_t)(0);
        for (idx_t g = 0; g < groups; g++) {
            __global const uint *b = bounds + g * (tiles + 1) + t;
            for (idx_t s = b[0] + pad; s < b[1]; s++) tile[slots[s]] = values[s];
        }
#else
        for (idx_t v = t0; v < t1; v++) y[flat_offset(v, out_sizes, y_strides)] = (elem_t)(0);
        for (idx_t g = 0; g < groups; g++) {
            __global const uint *b = bounds + g * (tiles + 1) + t;
            for (idx_t s = b[0] + pad; s < b[1]; s++) y[flat_offset(t0 + slots[s], out_sizes, y_strides)] = values[s];
        }
#endif
    }
}
#endif /* BUCKET */

/* Small inputs: one work-item scatters in row-major input order (the last
 * duplicate wins by order), after zero-filling the output itself when it is
 * small too (one launch in all), else after clear. */
__kernel void serial(UNPOOL_ARGS)
{
    if (get_global_id(0) != 0) return;
    const idx_t count = (idx_t)out_count, plane = DIM(out_sizes, 2) * DIM(out_sizes, 3);
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
                const idx_t v = load_flat(indices, offset4(i_strides, n, c, h, w), nc, plane, count);
                if (v == count) bad = 1;
                else y[flat_offset(v, out_sizes, y_strides)] = x[offset4(x_strides, n, c, h, w)];
            }
    }
    if (bad) atomic_max(&status[ST_OUT_OF_RANGE], gen);
}
