/* max_unpooling.cl - MaxUnpooling: one pass for pooling-shaped indices, a
 * bucketed scatter (bucket, tiles) for any others, and one serial kernel for tiny
 * tensors. The kernels for overlapping pools (pool, planes) are in
 * max_unpooling_pool.cl, which the program appends to this file (lib/cl/program.c).
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
 *   -DINTERLEAVE=1|0         1 (GPUs): FOR_ROWS deals units out round-robin (coalesced);
 *                            0 (CPUs): each work-item takes one contiguous run
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
 *   -DBUCKET=1|0             1 (CPU devices, every plan but serial): the general path
 *                            bucket, then tiles (entries bucketed by output tile in
 *                            scratch, each tile written whole)
 *   -DLOOP_BUDGET=n          loop iterations a work-item may run (tiles checks it), 0
 *                            where the device has no loop limit
 *   -DSORT=1|0               1 (devices that are not CPUs, 1- and 2-byte elements,
 *                            packed, 32-bit offsets): the general path bin, then
 *                            settle (max_unpooling_sort.cl, with -DSORT_SHIFT and
 *                            -DSORT_TILES), mark and place gated behind them on ST_HEAVY
 *   -DMARK=1|0               1 (every plan but serial; on CPUs gated behind tiles on
 *                            ST_HEAVY): the general path
 *                            mark, then place (the winning input position of every
 *                            output element through atomic_max, then a gather);
 *                            BUCKET and MARK both 0: serial, alone or after clear
 *
 * Status words `status` (the operator's, never reset on the host): each execution
 * has a generation number `gen`, larger than every earlier one, and the kernels
 * record an event by raising a word to gen, so a word equals `gen` exactly when
 * this execution raised it. The words a kernel raises and the words it reads are
 * never the same within one launch (launches are ordered, so a word an earlier
 * launch raised is read with a plain load): ST_GENERAL and ST_POOL come in pairs,
 * execution gen raising the one of gen's parity (ST_GENERAL and ST_POOL below
 * name it, from the kernel argument gen) and reading the other one for the
 * previous execution's state (PREVIOUS). No work-item reads a status word with
 * an atomic, and only a work-item that found something raises one. On CPU
 * devices (INTERLEAVE=0) windows, pool and planes also read the word they raise,
 * at a work-item's start, with a plain load (SKIP_RAISED below): a word already
 * at gen only ever stays there.
 *   status[0, 1]  (ST_GENERAL, by parity) an index was outside its window (or
 *              neighbourhood), or a gated kernel skipped itself: the general path
 *              must run
 *   status[2, 3]  (ST_POOL, by parity; POOL_GATED) an index was outside its
 *              window, or windows skipped itself: pool must run
 *   status[4]  an index was negative or past the output (never written)
 *   status[5]  (BUCKET) a tile had more entries than a work-item may loop over
 *              (LOOP_BUDGET), or (SORT) more than its slots: mark and place
 *              rewrite the whole output
 *   status[6], status[7]  the first bad index's position (ST_BAD, NEXT_BAD_CLEAR)
 *   status[8..14] the tiles' layout (BUCKET, SORT), mark's span and period, set
 *              by the host once (ST_TILE_SHIFT..), not generations
 * `scratch` (the operator's, general paths only) holds bucket's entries and
 * bounds, which every execution that runs bucket writes before tiles reads them,
 * so nothing needs clearing between executions; bin's counters and entries
 * (max_unpooling_sort.cl: settle zeroes the counters it read); and mark's words
 * (max_unpooling_general.cl MARK_BASE).
 *
 * NDRanges: 1-D; each kernel strides over its tensor's row chunks (FOR_ROWS),
 * serial runs on one work-item. The global size may be rounded up past the work-items
 * the host planned (to a multiple of the local size): every kernel takes its share
 * from the ids it was planned for and gives the others nothing (bucket's layout
 * counts exactly status[ST_GROUPS] work-items). The host launches enough
 * work-items that none runs more than about 32768 loop iterations in all
 * (max_unpooling.c ITEM_LOOP_BUDGET): Mesa's llvmpipe (rusticl) stops a work-item
 * after 65535 (its loop limiter), silently leaving the rest unwritten.
 */
/* The status words' names and protocol (WORD_OF, ST_*, PREVIOUS, NEXT_BAD_CLEAR,
 * RAISE_BAD, MARK_BASE) are in unpool_words.cl, which the program puts before this
 * file: the portable program (portable.cl) keeps the same words. */

/* (SKIP_RULE and SKIP_RAISING: unpool_words.cl) */
#define GENERAL_SKIP SKIP_RAISING(0u)

#if POOL_GATED
#define WINDOWS_WORD ST_POOL
/* windows skips itself (and leaves everything to pool) when the operator's
 * previous execution needed pool, except every 16th execution (the first
 * included), which tries it again: an operator's indices keep their kind from one
 * execution to the next, so a 2x2 pool costs the windows pass and a 3x3/2 pool
 * mostly the pool pass alone. A skip raises ST_POOL, so pool rewrites every
 * element (every work-item skips alike: SKIP_RULE). */
#define WINDOWS_SKIP                                                                             \
    GENERAL_SKIP                                                                                 \
    SKIP_RAISING(2u)
#else
#define WINDOWS_WORD ST_GENERAL
#define WINDOWS_SKIP GENERAL_SKIP
#endif

/* CPU devices (INTERLEAVE=0): few work-items, each a long contiguous run of rows,
 * so SKIP_RULE alone leaves a pass whose indices need the path behind it running
 * whole wherever the rule tries it (an operator's first execution and every
 * 16th): scattered indices paid a full windows pass for nothing, 0.6x of
 * b8552b2 on a fresh operator (notes/max_unpooling.md, firstexec). There a
 * work-item also returns at its start when this execution already raised the
 * word its kernel raises (SKIP_RAISED: an atomic read, atomic_or with 0, of the
 * word other work-items of this launch raise with atomic_max - a plain load of it
 * was a data race, which Oclgrind reports; the word is raised only ever to gen,
 * and the path behind rewrites every element whatever this launch left; one
 * atomic per work-item, few on a CPU), and ends its run at the first unit that raises it (STOP_RAISED, in a
 * FOR_ROWS body, or planes' loop). GPUs keep SKIP_RULE alone (issue 37). */
#if INTERLEAVE
#define SKIP_RAISED(word)
#define STOP_RAISED(cond)
#else
#define SKIP_RAISED(word)                                                                        \
    if (atomic_or(&status[word], 0u) == gen) return;
#define STOP_RAISED(cond)                                                                        \
    if (cond) break;
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

/* One index at packed position k, UINT_MAX where an 8-byte index is 2^32 or more
 * (negative INT64 included): the vector forms and bin (32-bit offsets). */
inline uint load_one(__global const void *indices, idx_t k)
{
#if INDEX_BYTES == 4
    return ((__global const uint *)indices)[k];
#else
    const uint2 raw = ((__global const uint2 *)indices)[k];
    return raw.y ? UINT_MAX : raw.x;
#endif
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

/* Zeroes n elements at p: under a loop limit 16 per loop iteration (bounded loop
 * counts: see the header), else as one plain loop (which PoCL turns into wide
 * stores; the unrolled form measured 3-4x slower there for 4-byte elements). */
inline void zero_fill(__global elem_t *p, idx_t n)
{
    idx_t v = 0;
#if LOOP_BUDGET
    for (; v + 16 <= n; v += 16) {
#pragma unroll
        for (uint j = 0; j < 16; j++) p[v + j] = (elem_t)(0);
    }
#endif
    for (; v < n; v++) p[v] = (elem_t)(0);
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
#define FOR_ROWS(sizes) FOR_ROWS_OF(sizes, (idx_t)get_global_size(0))
/* FOR_ROWS over `items_` work-items (ids 0 .. items_-1 take a run each; any others
 * none), for a layout that depends on how many there are (bucket). */
#if INTERLEAVE
/* GPUs: work-item g takes units g, g + items, g + 2 items, ...: neighbouring
 * work-items touch neighbouring units at every step (coalesced). A unit's
 * coordinates (chunk, h, c, n) step by the digits of `items` in the same mixed
 * radix, carries included: the divisions run once per work-item, not per unit
 * (a 64-bit division by a run-time value cost 160 of windows' 259 issue slots per
 * unit in the GPU model), and in 32 bits where every offset fits (ridx_t). */
#if OFFSET_64
typedef ulong ridx_t;
#else
typedef uint ridx_t;
#endif
#define FOR_ROWS_OF(sizes, items_) FOR_ROWS_CHUNKED(sizes, items_, CHUNK)
#define FOR_ROWS_CHUNKED(sizes, items_, chunk_)                                                  \
    const ridx_t w_ = (ridx_t)((DIM(sizes, 3) + (chunk_) - 1) / (chunk_));                     \
    const ridx_t cw_ = max(w_, (ridx_t)1), ch_ = max((ridx_t)DIM(sizes, 2), (ridx_t)1);           \
    const ridx_t cc_ = max((ridx_t)DIM(sizes, 1), (ridx_t)1);                                    \
    const ridx_t cn_ = w_ && DIM(sizes, 2) && DIM(sizes, 1) ? (ridx_t)DIM(sizes, 0) : 0; /* 0: no units */ \
    ridx_t q_ = (ridx_t)get_global_id(0), h_ = q_ / cw_, c_ = h_ / ch_, n_ = c_ / cc_;            \
    q_ -= h_ * cw_, h_ -= c_ * ch_, c_ -= n_ * cc_;                                              \
    const ridx_t s3_ = (ridx_t)(items_), s2_ = s3_ / cw_, s1_ = s2_ / ch_, s0_ = s1_ / cc_;      \
    const ridx_t dq_ = s3_ - s2_ * cw_, dh_ = s2_ - s1_ * ch_, dc_ = s1_ - s0_ * cc_;             \
    for (; n_ < cn_; q_ += dq_, h_ += dh_ + (q_ >= cw_), q_ -= q_ >= cw_ ? cw_ : 0, \
                                          c_ += dc_ + (h_ >= ch_), h_ -= h_ >= ch_ ? ch_ : 0,     \
                                          n_ += s0_ + (c_ >= cc_), c_ -= c_ >= cc_ ? cc_ : 0) {   \
        const idx_t n = n_, c = c_, h = h_, nc = (idx_t)(n_ * cc_ + c_);                          \
        const idx_t w0 = (idx_t)(q_ * (chunk_)), w1 = min(w0 + (idx_t)(chunk_), DIM(sizes, 3));
#else
#define FOR_ROWS_OF(sizes, items_)                                                               \
    const idx_t chunks_ = (DIM(sizes, 3) + CHUNK - 1) / CHUNK;                                   \
    const idx_t units_ = chunks_ * DIM(sizes, 2) * DIM(sizes, 0) * DIM(sizes, 1);                \
    const idx_t run_ = (units_ + (items_) - 1) / (items_);                                       \
    const idx_t end_ = min(units_, ((idx_t)get_global_id(0) + 1) * run_);                        \
    for (idx_t u_ = (idx_t)get_global_id(0) * run_; u_ < end_; u_++) {                           \
        const idx_t w0 = u_ % chunks_ * CHUNK, h = u_ / chunks_ % DIM(sizes, 2);                 \
        const idx_t nc = u_ / chunks_ / DIM(sizes, 2);                                           \
        const idx_t n = nc / DIM(sizes, 1), c = nc % DIM(sizes, 1);                              \
        const idx_t w1 = min(w0 + (idx_t)CHUNK, DIM(sizes, 3));
#endif
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
 * them and reports their results as uninitialised). The narrowing saturates
 * (convert_*_sat): Oclgrind 21.10 gives wrong lanes for min(ulongN, ulong), which
 * sent every 8-byte-index window to the general path there (load_wv too). */
inline lane_u load_lanes(__global const void *indices, idx_t k)
{
#if INDEX_BYTES == 4
    return LOADU(CAT(uint, LANES), (__global const uint *)indices + k);
#elif INT64_OK
    const CAT(ulong, LANES) raw = LOADU(CAT(ulong, LANES), (__global const ulong *)indices + k);
    return CAT(CAT(convert_uint, LANES), _sat)(raw);
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

#endif /* vector definitions */

#ifdef KW
#if VECTOR_DEFS && KW == 2
/* Positions [w, w1) of the packed input row at in_row, one at a time, into the
 * output rows from y_row (their windows' top-left corners name out_row + w * KW):
 * the vector forms' row ends. Returns 1 if an index was outside its window. No
 * `restrict` here: inlined, it becomes llvm.experimental.noalias.scope.decl,
 * which Oclgrind 21.10 cannot run. */
inline uint windows_tail(__global const elem_t *x, __global const void *indices, __global elem_t *y, idx_t in_row,
                         idx_t y_row, idx_t out_row, idx_t wout, idx_t w, idx_t w1)
{
    uint outside = 0;
    for (; w < w1; w++) {
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
    return outside;
}
#endif

#if VECTOR_DEFS && KW == 2 && WV
/* The GPU form (INTERLEAVE; the host's -DWV=n, max_unpooling.c GPU_WINDOW_*):
 * each unit is WV input positions of a row, neighbouring work-items on
 * neighbouring units, so every load and store of a warp is one contiguous run:
 * a work-item loads WV elements and WV indices as vectors and writes each of its
 * KH window rows as one vector of 2 WV elements (16 bytes for 1-, 2- and 4-byte
 * elements, 32 for 8-byte ones), zeros and the input where the index points. All
 * offsets in 32 bits (VECTOR_DEFS: the tensors fit). Elements move as unsigned
 * integers of their width (GT), masked by select on GM, the signed type of the
 * same width. */
#if ELEM_BYTES == 1
#define GT(n) CAT(uchar, n)
#define GT1 uchar
#define GM(n) CAT(char, n)
#elif ELEM_BYTES == 2
#define GT(n) CAT(ushort, n)
#define GT1 ushort
#define GM(n) CAT(short, n)
#elif ELEM_BYTES == 4
#define GT(n) CAT(uint, n)
#define GT1 uint
#define GM(n) CAT(int, n)
#else
#define GT(n) CAT(ulong, n)
#define GT1 ulong
#define GM(n) CAT(long, n)
#endif
#if WV == 2
#define WV2 4
#define WV_IDS ((uint2)(0, 1))
#define WV_PAIRS(a, b) shuffle2(a, b, (GT(4))(0, 2, 1, 3))
#elif WV == 4
#define WV2 8
#define WV_IDS ((uint4)(0, 1, 2, 3))
#define WV_PAIRS(a, b) shuffle2(a, b, (GT(8))(0, 4, 1, 5, 2, 6, 3, 7))
#else
#define WV2 16
#define WV_IDS ((uint8)(0, 1, 2, 3, 4, 5, 6, 7))
#define WV_PAIRS(a, b) shuffle2(a, b, (GT(16))(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15))
#endif
#define WV_VLOAD CAT(vload, WV)
#define WV_VSTORE2 CAT(vstore, WV2)
/* The GM(WV) mask of the lanes of t (uint) equal to q. 8-byte elements compare
 * in 64 bits: Mesa 22.3's rusticl (llvmpipe) picks the first operand in every
 * lane of a 64-bit vector select whose mask is a 32-bit comparison widened by
 * convert_long (every window value came out 0; notes/gpu_plans.md 2026-11-28). */
#if ELEM_BYTES == 8
#define WV_IS(t, q) (CAT(convert_ulong, WV)(t) == (ulong)(q))
#else
#define WV_IS(t, q) CAT(convert_, GM(WV))((t) == (q))
#endif

/* WV indices from packed position k; UINT_MAX (in no window) where an 8-byte
 * index is 2^32 or more (negative INT64 included). */
inline CAT(uint, WV) load_wv(__global const void *indices, uint k)
{
#if INDEX_BYTES == 4
    return WV_VLOAD(0, (__global const uint *)indices + k);
#elif INT64_OK
    return CAT(CAT(convert_uint, WV), _sat)(WV_VLOAD(0, (__global const ulong *)indices + k));
#else
    const CAT(uint, WV2) raw = CAT(vload, WV2)(0, (__global const uint *)indices + 2 * k);
    return select(raw.even, (CAT(uint, WV))(UINT_MAX), raw.odd != 0);
#endif
}

__kernel void windows(UNPOOL_ARGS)
{
    NEXT_BAD_CLEAR
    WINDOWS_SKIP
    const uint win = (uint)DIM(in_sizes, 3), wout = (uint)DIM(out_sizes, 3), hin = (uint)DIM(in_sizes, 2);
    uint outside = 0;
    FOR_ROWS_CHUNKED(in_sizes, get_global_size(0), WV)
    const uint row = (uint)nc * hin + (uint)h, in_row = row * win, y_row = row * KH * wout;
    /* the index that names the window row h*KH, column 0 */
    const uint out_row = PER_PLANE ? (uint)h * KH * wout : y_row;
    if (w1 - w0 == WV) {
        /* d: each index relative to its window's top-left corner (wraps if before it) */
        const CAT(uint, WV) d = load_wv(indices, in_row + (uint)w0) - (out_row + (uint)w0 * KW + WV_IDS * KW);
        const GT(WV) xv = WV_VLOAD(0, (__global const GT1 *)x + in_row + (uint)w0);
        CAT(int, WV) inside = 0;
        for (uint r = 0; r < KH; r++) {
            const CAT(uint, WV) t = d - r * wout;
            inside |= t < (uint)KW;
            const GT(WV) a0 = select((GT(WV))(0), xv, WV_IS(t, 0u));
            const GT(WV) a1 = select((GT(WV))(0), xv, WV_IS(t, 1u));
            WV_VSTORE2(WV_PAIRS(a0, a1), 0, (__global GT1 *)y + y_row + r * wout + (uint)w0 * KW);
        }
        outside |= any(inside == 0);
    } else {
        outside |= windows_tail(x, indices, y, in_row, y_row, out_row, wout, w0, w1);
    }
    END_ROWS
    if (outside) atomic_max(&status[WINDOWS_WORD], gen);
}
#elif VECTOR_DEFS && KW == 2
/* Pooling-shaped indices in one pass (see the generic form below); each index and
 * each input element is loaded once, each output row written as vectors. */
__kernel void windows(UNPOOL_ARGS)
{
    NEXT_BAD_CLEAR
    WINDOWS_SKIP
    SKIP_RAISED(WINDOWS_WORD)
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
    outside |= windows_tail(x, indices, y, in_row, y_row, out_row, wout, wv, w1);
    STOP_RAISED(outside || any(lanes_outside))
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
    NEXT_BAD_CLEAR
    WINDOWS_SKIP
    SKIP_RAISED(WINDOWS_WORD)
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
    STOP_RAISED(outside)
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

/* Serial plans whose output is too large for serial to fill: zero the output
 * first (the other plans' kernels write every output element themselves). */
__kernel void clear(UNPOOL_ARGS)
{
    NEXT_BAD_CLEAR
    FOR_ROWS(out_sizes)
#if OUT_PACKED
    const idx_t yrow = (nc * DIM(out_sizes, 2) + h) * DIM(out_sizes, 3), ys = 1;
#else
    const idx_t yrow = offset4(y_strides, n, c, h, 0), ys = DIM(y_strides, 3);
#endif
    for (idx_t w = w0; w < w1; w++) y[yrow + w * ys] = (elem_t)(0);
    END_ROWS
}

/* Small inputs: one work-item scatters in row-major input order (the last
 * duplicate wins by order), after zero-filling the output itself when it is
 * small too (one launch in all), else after clear. */
__kernel void serial(UNPOOL_ARGS)
{
    NEXT_BAD_CLEAR
    if (get_global_id(0) != 0) return;
    const idx_t count = (idx_t)out_count, plane = DIM(out_sizes, 2) * DIM(out_sizes, 3);
#if SERIAL_FILLS
    for (idx_t nc = 0; nc < DIM(out_sizes, 0) * DIM(out_sizes, 1); nc++)
        for (idx_t h = 0; h < DIM(out_sizes, 2); h++)
            for (idx_t w = 0; w < DIM(out_sizes, 3); w++)
                y[offset4(y_strides, nc / DIM(out_sizes, 1), nc % DIM(out_sizes, 1), h, w)] = (elem_t)(0);
#endif
    uint first_bad = UINT_MAX;
    for (idx_t nc = 0; nc < DIM(in_sizes, 0) * DIM(in_sizes, 1); nc++) {
        const idx_t n = nc / DIM(in_sizes, 1), c = nc % DIM(in_sizes, 1);
        for (idx_t h = 0; h < DIM(in_sizes, 2); h++)
            for (idx_t w = 0; w < DIM(in_sizes, 3); w++) {
                const idx_t v = load_flat(indices, offset4(i_strides, n, c, h, w), nc, plane, count);
                if (v == count)
                    first_bad = min(first_bad, (uint)((nc * DIM(in_sizes, 2) + h) * DIM(in_sizes, 3) + w));
                else y[flat_offset(v, out_sizes, y_strides)] = x[offset4(x_strides, n, c, h, w)];
            }
    }
    RAISE_BAD(first_bad)
}
