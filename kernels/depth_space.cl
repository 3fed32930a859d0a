/* depth_space.cl - DepthToSpace and SpaceToDepth, both orders.
 *
 * Build options (besides clops_common.cl's):
 *   -DBLOCK=b            block size, a compile-time constant: / and % by it become
 *                        shifts or multiplies, and the loops over a block unroll
 *   -DORDER_DCR=1|0      1: depth-column-row; 0: column-row-depth
 *   -DCHUNK=k            positions of the inner axis each work-item walks
 *   -DCHANNELS_INNER=0|1 the inner axis: 0: W (packed NCHW), 1: C (NHWC through strides)
 *   -DUNIT_W=0|1         1: both tensors have W stride 1 (known to the compiler)
 *   -DUNIT_C=0|1         1: both tensors have C stride 1
 *   -DTILE=t             (optional) the local-memory tile kernels below, t work-items
 *                        per group along W (needs UNIT_W, CHANNELS_INNER=0, BLOCK <= 8)
 *   -DVEC=0|1            1: the W-inner loop moves whole vectors of VW elements with
 *                        explicit shuffles (needs UNIT_W, CHANNELS_INNER=0, BLOCK 2, 3,
 *                        4 or 8, ELEM_BYTES 1, 2, 4, or 8 on a device with 64-bit
 *                        integers: lib/depth_space.c checks)
 *   -DVW=v -DUNROLL=u    (VEC=1, optional) lanes per vector, vectors per row per step
 *   -DROWS=1             (VEC=1) also the vector-rows kernels (GPUs): one vector of
 *                        each row per work-item, CHUNK vectors per item
 *
 * A work-item walks CHUNK consecutive positions of the inner axis (a piece of a
 * row), moving a whole block at each. The loop nest is ordered so that the
 * innermost loop runs along memory on both sides where the layout allows (for
 * packed NCHW DepthToSpace: contiguous loads from b rows, one interleaved
 * contiguous store), which compilers turn into vector loads, shuffles and vector
 * stores; measured on PoCL this is 3 to 5 times faster than one element per
 * work-item, whose neighbouring work-items gather. The batch is folded into
 * NDRange dimension 2; the global size is rounded up to the work-group size and
 * every kernel guards its range (OpenCL 1.2: no non-uniform work-groups).
 */
#if UNIT_W
#define XS3 ((idx_t)1)
#define YS3 ((idx_t)1)
#else
#define XS3 DIM(xs, 3)
#define YS3 DIM(ys, 3)
#endif
#if UNIT_C
#define XS1 ((idx_t)1)
#define YS1 ((idx_t)1)
#else
#define XS1 DIM(xs, 1)
#define YS1 DIM(ys, 1)
#endif
#define XOFF(n, c, h, w) ((n) * DIM(xs, 0) + (c) * XS1 + (h) * DIM(xs, 2) + (w) * XS3)
#define YOFF(n, c, h, w) ((n) * DIM(ys, 0) + (c) * YS1 + (h) * DIM(ys, 2) + (w) * YS3)

/* Work-item coordinates. sizes = (N, C, H, W) of the axes items are indexed by.
 * W inner: range (ceil(W/CHUNK), H, N*C): the item walks w in [p0, p1), fixed c.
 * C inner: range (ceil(C/CHUNK), W, N*H): the item walks c in [p0, p1), fixed w. */
#if CHANNELS_INNER
#define ITEM_COORDS(sizes)                                                                       \
    const idx_t p0 = (idx_t)get_global_id(0) * CHUNK, w_ = (idx_t)get_global_id(1);           \
    const idx_t nh_ = (idx_t)get_global_id(2);                                                 \
    if (p0 >= DIM(sizes, 1) || w_ >= DIM(sizes, 3) || nh_ >= DIM(sizes, 0) * DIM(sizes, 2)) return;          \
    const idx_t n = nh_ / DIM(sizes, 2), h = nh_ % DIM(sizes, 2);                                     \
    const idx_t p1 = min(p0 + (idx_t)CHUNK, DIM(sizes, 1));
#define C_AT(p) (p)
#define W_AT(p) (w_)
#else
#define ITEM_COORDS(sizes)                                                                       \
    const idx_t p0 = (idx_t)get_global_id(0) * CHUNK, h = (idx_t)get_global_id(1);            \
    const idx_t nc_ = (idx_t)get_global_id(2);                                                 \
    if (p0 >= DIM(sizes, 3) || h >= DIM(sizes, 2) || nc_ >= DIM(sizes, 0) * DIM(sizes, 1)) return;           \
    const idx_t n = nc_ / DIM(sizes, 1), c_ = nc_ % DIM(sizes, 1);                                    \
    const idx_t p1 = min(p0 + (idx_t)CHUNK, DIM(sizes, 3));
#define C_AT(p) (c_)
#define W_AT(p) (p)
#endif

/* Channel of X (DepthToSpace) or Y (SpaceToDepth) for block position (i, j) of
 * channel c of the other tensor, which has `cs` channels. */
#if ORDER_DCR
#define DEPTH_CHANNEL(i, j, c, cs) (((i) * B + (j)) * (cs) + (c))
#else
#define DEPTH_CHANNEL(i, j, c, cs) ((c) * (B * B) + (i) * B + (j))
#endif

/* ---- explicit vectors (VEC=1) ---------------------------------------------------------------
 * A work-item's piece of a row moves VW elements of each of the b rows at a time:
 * DepthToSpace loads one vector from each of its b input rows, interleaves them
 * into b vectors and stores those contiguously (one run of b*VW output
 * elements); SpaceToDepth loads b*VW contiguous input elements and
 * de-interleaves them into one vector per output row. Elements move as lanes of
 * integer vectors (8-byte elements as ulong), so the bits are untouched. By
 * default (the CPU loop) a vector is 16 lanes (8 of ulong), and narrow lanes take
 * UNROLL vectors per row per step, so that every step moves 64 bytes of each row;
 * the remainder of a piece goes element by element. -DVW=v and -DUNROLL=u set
 * them (the vector-rows kernels at the end of this file take VW from the
 * device's parameters, lib/cl/params.c). */
#if VEC
#if ELEM_BYTES == 1
#define LANE uchar
#elif ELEM_BYTES == 2
#define LANE ushort
#elif ELEM_BYTES == 4
#define LANE uint
#elif ELEM_BYTES == 8
#define LANE ulong
#else
#error "VEC needs ELEM_BYTES 1, 2, 4 or 8"
#endif
#ifndef VW /* the CPU loop's: 16 lanes (8 of ulong; a literal: it is pasted into type names) */
#if ELEM_BYTES == 8
#define VW 8
#else
#define VW 16
#endif
#endif
#ifndef UNROLL /* the CPU loop's vectors per row per step: 64 bytes */
#define UNROLL (64 / (VW * ELEM_BYTES))
#endif
#if !UNIT_W || CHANNELS_INNER || !(BLOCK == 2 || BLOCK == 3 || BLOCK == 4 || BLOCK == 8)
#error "VEC needs UNIT_W=1, CHANNELS_INNER=0 and BLOCK 2, 3, 4 or 8"
#endif
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
typedef CAT(LANE, VW) vec_t;

/* Rows start anywhere, so vectors are accessed unaligned. Clang (PoCL, most
 * vendors' compilers) lowers a dereference of a 1-aligned vector type to whole
 * vector moves; PoCL's vload8/vstore8 became byte-by-byte moves (measured: 1-byte
 * DepthToSpace at 0.3-0.4 of a copy). Other compilers get vloadn/vstoren. */
#ifdef __clang__
typedef vec_t __attribute__((aligned(1))) vec_u1;
#define VLOAD(p) (*(__global const vec_u1 *)(p))
#define VSTORE(v, p) (*(__global vec_u1 *)(p) = (v))
#else
#define VLOAD(p) CAT(vload, VW)(0, (p))
#define VSTORE(v, p) CAT(vstore, VW)((v), 0, (p))
#endif

/* first, second = the lanes of a and b interleaved (a0 b0 a1 b1 ...), in two halves. */
#define ZIP(a, b, first, second)                                                                 \
    do {                                                                                         \
        vec_t z_;                                                                                \
        z_.even = (a).lo;                                                                        \
        z_.odd = (b).lo;                                                                         \
        (first) = z_;                                                                            \
        z_.even = (a).hi;                                                                        \
        z_.odd = (b).hi;                                                                         \
        (second) = z_;                                                                           \
    } while (0)
/* ev, od = the even and the odd lanes of a followed by b: ZIP undone. (Written
 * with swizzle stores like ZIP: Oclgrind 21.10 crashes on the equivalent vector
 * literal (vec_t)(a.even, b.even).) */
#define UNZIP(a, b, ev, od)                                                                      \
    do {                                                                                         \
        vec_t u_;                                                                                \
        u_.lo = (a).even;                                                                        \
        u_.hi = (b).even;                                                                        \
        (ev) = u_;                                                                               \
        u_.lo = (a).odd;                                                                         \
        u_.hi = (b).odd;                                                                         \
        (od) = u_;                                                                               \
    } while (0)

/* v[0..b) holds one vector per row; afterwards (inverse 0) the b*VW elements
 * interleaved (row 0's lane 0, row 1's lane 0, ...), VW per vector; inverse 1
 * undoes that. A power-of-two block is log2(b) rounds of a perfect shuffle: pair
 * vector k with vector k + b/2 and zip them (ZIP), the halves becoming vectors 2k
 * and 2k+1 (UNZIP runs the inverse round). Block 3 is one fixed permutation of
 * 3*VW lanes, written as lane copies through private arrays with constant
 * indices, which compilers turn into shuffles. `inverse` is a constant at every
 * call. */
inline void shuffle_rows(vec_t v[BLOCK], const int inverse)
{
#if BLOCK == 3
    LANE in[BLOCK * VW], out[BLOCK * VW];
#pragma unroll
    for (int k = 0; k < BLOCK; k++) CAT(vstore, VW)(v[k], k, in);
#pragma unroll
    for (int o = 0; o < BLOCK * VW; o++)
        out[o] = inverse ? in[(o % VW) * BLOCK + o / VW] : in[(o % BLOCK) * VW + o / BLOCK];
#pragma unroll
    for (int k = 0; k < BLOCK; k++) v[k] = CAT(vload, VW)(k, out);
#else
#pragma unroll
    for (int round = 1; round < BLOCK; round *= 2) {
        vec_t t[BLOCK];
#pragma unroll
        for (int k = 0; k < BLOCK / 2; k++) {
            if (inverse) UNZIP(v[2 * k], v[2 * k + 1], t[k], t[k + BLOCK / 2]);
            else ZIP(v[k], v[k + BLOCK / 2], t[2 * k], t[2 * k + 1]);
        }
#pragma unroll
        for (int k = 0; k < BLOCK; k++) v[k] = t[k];
    }
#endif
}

/* One vector of each of the b narrow rows (narrow[j] + q) against the wide run of
 * b*VW interleaved elements at `wide`: DepthToSpace (to_wide 1) gathers the rows
 * and stores the run, SpaceToDepth (0) the reverse. */
#define MOVE_VECTORS(narrow, q, wide, to_wide)                                                   \
    do {                                                                                         \
        vec_t v_[BLOCK];                                                                         \
        _Pragma("unroll") for (int k_ = 0; k_ < BLOCK; k_++) v_[k_] =                            \
            (to_wide) ? VLOAD(xl + (narrow)[k_] + (q)) : VLOAD(xl + (wide) + k_ * VW);           \
        shuffle_rows(v_, !(to_wide));                                                            \
        _Pragma("unroll") for (int k_ = 0; k_ < BLOCK; k_++) {                                   \
            if (to_wide) VSTORE(v_[k_], yl + (wide) + k_ * VW);                                  \
            else VSTORE(v_[k_], yl + (narrow)[k_] + (q));                                        \
        }                                                                                        \
    } while (0)
#endif /* VEC */

/* DepthToSpace: Y[n, c, h*b+i, w*b+j] = X[n, DEPTH_CHANNEL(i, j, c, C_out), h, w].
 * sizes = (N, C_out, H_out, W_in); the item writes output row h (i = h % b). */
#define D2S_MOVE(p, j) \
    y[YOFF(n, C_AT(p), h, W_AT(p) * B + (j))] = x[XOFF(n, DEPTH_CHANNEL(i, (j), C_AT(p), cout), hi, W_AT(p))]

__kernel void depth_to_space(__global const elem_t *restrict x, __global elem_t *restrict y,
                             dims4 sizes, dims4 xs, dims4 ys)
{
    ITEM_COORDS(sizes)
    const idx_t cout = DIM(sizes, 1), i = h % B, hi = h / B;
#if CHANNELS_INNER
    for (idx_t j = 0; j < B; j++)
        for (idx_t p = p0; p < p1; p++) D2S_MOVE(p, j);
#else
    idx_t p = p0;
#if VEC
    __global const LANE *xl = (__global const LANE *)x;
    __global LANE *yl = (__global LANE *)y + YOFF(n, c_, h, 0);
    idx_t row[BLOCK];
#pragma unroll
    for (int j = 0; j < BLOCK; j++) row[j] = XOFF(n, DEPTH_CHANNEL(i, (idx_t)j, c_, cout), hi, 0);
    for (; p + VW * UNROLL <= p1; p += VW * UNROLL)
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const idx_t q = p + u * VW;
            MOVE_VECTORS(row, q, q * B, 1);
        }
#endif
    for (; p < p1; p++)
#pragma unroll
        for (idx_t j = 0; j < B; j++) D2S_MOVE(p, j);
#endif
}

/* SpaceToDepth: Y[n, DEPTH_CHANNEL(i, j, c, C_in), h, w] = X[n, c, h*b+i, w*b+j].
 * sizes = (N, C_in, H_out, W_out). */
#define S2D_MOVE(p, i, j) \
    y[YOFF(n, DEPTH_CHANNEL((i), (j), C_AT(p), cin), h, W_AT(p))] = x[XOFF(n, C_AT(p), h * B + (i), W_AT(p) * B + (j))]

__kernel void space_to_depth(__global const elem_t *restrict x, __global elem_t *restrict y,
                             dims4 sizes, dims4 xs, dims4 ys)
{
    ITEM_COORDS(sizes)
    const idx_t cin = DIM(sizes, 1);
    for (idx_t i = 0; i < B; i++) {
#if CHANNELS_INNER
        for (idx_t j = 0; j < B; j++)
            for (idx_t p = p0; p < p1; p++) S2D_MOVE(p, i, j);
#else
        idx_t p = p0;
#if VEC
        __global const LANE *xl = (__global const LANE *)x + XOFF(n, c_, h * B + i, 0);
        __global LANE *yl = (__global LANE *)y;
        idx_t row[BLOCK];
#pragma unroll
        for (int j = 0; j < BLOCK; j++) row[j] = YOFF(n, DEPTH_CHANNEL(i, (idx_t)j, c_, cin), h, 0);
        for (; p + VW * UNROLL <= p1; p += VW * UNROLL)
#pragma unroll
            for (int u = 0; u < UNROLL; u++) {
                const idx_t q = p + u * VW;
                MOVE_VECTORS(row, q, q * B, 0);
            }
#endif
        for (; p < p1; p++)
#pragma unroll
            for (idx_t j = 0; j < B; j++) S2D_MOVE(p, i, j);
#endif
    }
}

/* ---- local-memory tiles (TILE=t) -------------------------------------------------------------
 * For devices whose neighbouring work-items should touch neighbouring addresses
 * on both sides (GPUs: coalescing). A group of t work-items handles t positions of
 * the narrow side of one row: DepthToSpace reads t elements of each of its b input
 * rows (item k reads element k of each: contiguous across the group), then writes
 * the b*t output elements (item k writes elements k, t+k, 2t+k, ...: contiguous
 * across the group); SpaceToDepth the reverse, once per row i of the block. The
 * group's range is (t, 1, 1), fixed by reqd_work_group_size; one barrier between
 * the reads and the writes (two per block row for SpaceToDepth). */
#ifdef TILE
#if !UNIT_W || CHANNELS_INNER || BLOCK > 8
#error "TILE needs UNIT_W=1, CHANNELS_INNER=0 and BLOCK <= 8"
#endif
#define T ((idx_t)TILE)

/* The group's row and first position; items past the row's end still take part in
 * the barriers. sizes as the kernels above: (N, C, H_out, W). */
#define TILE_COORDS(sizes)                                                                       \
    const idx_t k = (idx_t)get_local_id(0), w0 = (idx_t)get_group_id(0) * T;                    \
    const idx_t h = (idx_t)get_global_id(1), nc_ = (idx_t)get_global_id(2);                    \
    const bool row_ok = h < DIM(sizes, 2) && nc_ < DIM(sizes, 0) * DIM(sizes, 1);                \
    const idx_t n = row_ok ? nc_ / DIM(sizes, 1) : 0, c_ = row_ok ? nc_ % DIM(sizes, 1) : 0;     \
    const idx_t len = row_ok && w0 < DIM(sizes, 3) ? min(T, DIM(sizes, 3) - w0) : 0;

__kernel __attribute__((reqd_work_group_size(TILE, 1, 1))) void
depth_to_space_tile(__global const elem_t *restrict x, __global elem_t *restrict y, dims4 sizes, dims4 xs, dims4 ys)
{
    __local elem_t tile[BLOCK * TILE];
    TILE_COORDS(sizes)
    const idx_t cout = DIM(sizes, 1), i = h % B, hi = h / B;
    if (k < len)
#pragma unroll
        for (idx_t j = 0; j < B; j++) tile[j * T + k] = x[XOFF(n, DEPTH_CHANNEL(i, j, c_, cout), hi, w0 + k)];
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (idx_t m = 0; m < B; m++) {
        const idx_t o = m * T + k; /* output element of the group's run; source row o % b, position o / b */
        if (o < len * B) y[YOFF(n, c_, h, w0 * B + o)] = tile[(o % B) * T + o / B];
    }
}

__kernel __attribute__((reqd_work_group_size(TILE, 1, 1))) void
space_to_depth_tile(__global const elem_t *restrict x, __global elem_t *restrict y, dims4 sizes, dims4 xs, dims4 ys)
{
    __local elem_t tile[BLOCK * TILE];
    TILE_COORDS(sizes)
    const idx_t cin = DIM(sizes, 1);
    for (idx_t i = 0; i < B; i++) {
#pragma unroll
        for (idx_t m = 0; m < B; m++) {
            const idx_t o = m * T + k; /* input element of the group's run */
            if (o < len * B) tile[o] = x[XOFF(n, c_, h * B + i, w0 * B + o)];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (k < len)
#pragma unroll
            for (idx_t j = 0; j < B; j++) y[YOFF(n, DEPTH_CHANNEL(i, j, c_, cin), h, w0 + k)] = tile[k * B + j];
        barrier(CLK_LOCAL_MEM_FENCE); /* the tile is refilled for the next block row */
    }
}
#endif /* TILE */

/* ---- vector rows (VEC=1, ROWS=1): GPUs ------------------------------------------------------
 * A work-item moves one vector (VW elements, 16 bytes by default) of each of its b
 * narrow rows against the run of b*VW interleaved elements of the wide row, so
 * that neighbouring work-items touch neighbouring vectors on both sides
 * (coalesced) and every load and store moves a whole vector; the rows are
 * rearranged in registers (shuffle_rows), with no local memory or barrier. Range
 * (ceil(ceil(W/VW)/CHUNK), H_out, C), W the narrow rows' length: no division by a
 * run-time value (h / b and h % b are by the compile-time block); the item walks
 * the batch and CHUNK vectors of its row, strided by the range's width. Offsets
 * are 32-bit unless OFFSET_64. A row whose length is not a multiple of VW ends in
 * element moves by the item that holds its last vector. */
#if VEC && ROWS
#if OFFSET_64
typedef ulong ridx_t;
#else
typedef uint ridx_t;
#endif
#undef B
#define B ((ridx_t)BLOCK) /* DEPTH_CHANNEL's block, in 32-bit arithmetic where it can be */
#define RD(s, d) ((ridx_t)(s).v[d])

/* Positions [q, q+VW) of the narrow rows (as MOVE_VECTORS), cut at the rows' length. */
#define MOVE_PIECE(narrow, wide0, q, len, to_wide)                                                \
    do {                                                                                          \
        if ((q) + VW <= (len)) {                                                                  \
            MOVE_VECTORS(narrow, q, (wide0) + (q) * B, to_wide);                                  \
        } else {                                                                                  \
            for (ridx_t p_ = (q); p_ < (len); p_++)                                               \
                _Pragma("unroll") for (int k_ = 0; k_ < BLOCK; k_++) {                            \
                    if (to_wide) yl[(wide0) + p_ * B + k_] = xl[(narrow)[k_] + p_];               \
                    else yl[(narrow)[k_] + p_] = xl[(wide0) + p_ * B + k_];                       \
                }                                                                                 \
        }                                                                                         \
    } while (0)

/* The item's row (h, c) and its vectors' stride; sizes as the kernels above: (N, C, H_out, W). */
#define ROW_ITEM(sizes)                                                                           \
    const ridx_t q0 = (ridx_t)get_global_id(0) * VW, qstep = (ridx_t)get_global_size(0) * VW;   \
    const ridx_t h = (ridx_t)get_global_id(1), c_ = (ridx_t)get_global_id(2), len = RD(sizes, 3); \
    if (h >= RD(sizes, 2) || c_ >= RD(sizes, 1)) return;                                          \
    __global const LANE *xl = (__global const LANE *)x;                                           \
    __global LANE *yl = (__global LANE *)y;

__kernel void depth_to_space_rows(__global const elem_t *restrict x, __global elem_t *restrict y, dims4 sizes,
                                  dims4 xs, dims4 ys)
{
    ROW_ITEM(sizes)
    const ridx_t i = h % B, hi = h / B;
    for (ridx_t n = 0; n < RD(sizes, 0); n++) {
        ridx_t narrow[BLOCK];
#pragma unroll
        for (int j = 0; j < BLOCK; j++)
            narrow[j] = n * RD(xs, 0) + DEPTH_CHANNEL(i, (ridx_t)j, c_, RD(sizes, 1)) * RD(xs, 1) + hi * RD(xs, 2);
        const ridx_t wide0 = n * RD(ys, 0) + c_ * RD(ys, 1) + h * RD(ys, 2);
        for (int s = 0; s < CHUNK; s++) MOVE_PIECE(narrow, wide0, q0 + s * qstep, len, 1);
    }
}

__kernel void space_to_depth_rows(__global const elem_t *restrict x, __global elem_t *restrict y, dims4 sizes,
                                  dims4 xs, dims4 ys)
{
    ROW_ITEM(sizes)
    for (ridx_t n = 0; n < RD(sizes, 0); n++)
        for (int i = 0; i < BLOCK; i++) {
            ridx_t narrow[BLOCK];
#pragma unroll
            for (int j = 0; j < BLOCK; j++)
                narrow[j] = n * RD(ys, 0) + DEPTH_CHANNEL((ridx_t)i, (ridx_t)j, c_, RD(sizes, 1)) * RD(ys, 1) +
                            h * RD(ys, 2);
            const ridx_t wide0 = n * RD(xs, 0) + c_ * RD(xs, 1) + (h * B + (ridx_t)i) * RD(xs, 2);
            for (int s = 0; s < CHUNK; s++) MOVE_PIECE(narrow, wide0, q0 + s * qstep, len, 0);
        }
}
#endif /* ROWS */
