/* portable.cl - the portable program: every operator clops offers, from one build
 * with no build option at all.
 *
 * For devices that compile nothing at run time (FPGA boards: Intel's FPGA SDK for
 * OpenCL, AMD Vitis), where every -D is another offline compile into another board
 * image, and as the fallback of every device whose specialised program can be
 * neither loaded nor built. Shapes, strides, element widths, block sizes, orders,
 * index widths and layouts, windows and generations are kernel arguments; only the
 * element width chooses a kernel (each kernel moves one width as one OpenCL type,
 * so no byte loops). OpenCL C 1.2 (it builds as 1.1 too); no extension; sizes and
 * offsets are 32-bit (lib/ops/portable.c plans it for tensors whose offsets fit
 * 32 bits: clops_fits_u32), so 64-bit integers are never needed. The only atomics
 * are MaxUnpooling's: atomic_max on global uints (mark's words, the status words).
 *
 * Kernels (every name starts with clops_, so they cannot collide with a vendor's
 * kernels in one image; W is the element width in bytes, 1, 2, 4, 8 or 16):
 *   clops_permute_W   DepthToSpace and SpaceToDepth, both orders, any block and
 *                     layout: a copy over six axes with run-time strides
 *   clops_windows_W   MaxUnpooling whose output H, W are multiples of the input's
 *                     (non-overlapping pools): every output element once
 *   clops_planes_W    MaxUnpooling of other shapes on CPUs and accelerators: a
 *                     plane per work-item, its inputs in order (no atomics)
 *   clops_mark        MaxUnpooling's general path, any indices: each output
 *                     element's largest input position naming it (atomic_max)
 *   clops_place_W     ... then every output element from that position, or zero
 * All are NDRange kernels over two or three axes: each work-item finds its place
 * with a few divisions once, then walks a run of positions with counters (no
 * division per element). On an FPGA an NDRange kernel is one pipeline that
 * work-items stream through; the loops carry no dependence from one iteration to
 * the next but mark's atomics. The global size may be rounded up past the planned
 * work-items: every kernel guards its ranges.
 */

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

/* ---- DepthToSpace and SpaceToDepth ----------------------------------------------------------
 * Both are the same walk: a destination element at axes (k0 .. k5) takes the
 * source element at sum(k_i * src_i). The host (lib/ops/portable.c) gives the
 * six axes' sizes and both tensors' strides (elements) in the operator's terms,
 * so that the last two axes are a row's w and, innermost, the block column j
 * (size b): DepthToSpace walks (n, c, h, i, w, j) of its output, SpaceToDepth
 * (n, i, c, h, w, j) for DCR or (n, c, i, h, w, j) for CRD. A work-item takes a
 * run of w, every j of each: for packed rows one side is then contiguous (the
 * output of DepthToSpace, the input of SpaceToDepth) and the other is b
 * contiguous rows, which compilers turn into vector loads, shuffles and vector
 * stores where b is known (the forms below for b = 2, 3, 4 and 8).
 * NDRange (axis 4 in runs of `run`, axis 3, axes 0 x 1 x 2). */
typedef struct {
    uint size[6];
    uint src[6];
    uint dst[6];
    uint run;  /* positions of axis 4 per work-item */
    uint runs; /* work-items along axis 4: ceil(size[4] / run) */
} clops_walk;

/* One run: every j of each w, with the strides the caller names (constants where known). */
#define WALK_RUN(B, S4, S5, D4, D5)                                                              \
    for (size_t t = 0; t < n; t++)                                                               \
        for (size_t j = 0; j < (B); j++) yd[t * (D4) + j * (D5)] = xs[t * (S4) + j * (S5)];
/* DepthToSpace's packed rows (output contiguous), SpaceToDepth's (input contiguous), else any. */
#define WALK_BLOCKS(B)                                                                           \
    if (d5 == 1 && d4 == (B) && s4 == 1) WALK_RUN(B, 1, s5, B, 1)                                \
    else if (s5 == 1 && s4 == (B) && d4 == 1) WALK_RUN(B, B, 1, 1, d5)                           \
    else WALK_RUN(B, s4, s5, d4, d5)

#define PERMUTE(W, T)                                                                            \
    __kernel void CAT(clops_permute_, W)(__global const T *restrict x, __global T *restrict y, clops_walk a) \
    {                                                                                            \
        const uint g0 = get_global_id(0), k3 = get_global_id(1), g2 = get_global_id(2);          \
        if (g0 >= a.runs || k3 >= a.size[3] || g2 >= a.size[0] * a.size[1] * a.size[2]) return; \
        const uint k01 = g2 / a.size[2], k2 = g2 - k01 * a.size[2];                              \
        const uint k0 = k01 / a.size[1], k1 = k01 - k0 * a.size[1];                              \
        const uint k4 = g0 * a.run, n = min(a.run, a.size[4] - k4);                              \
        const uint s = k0 * a.src[0] + k1 * a.src[1] + k2 * a.src[2] + k3 * a.src[3] + k4 * a.src[4]; \
        const uint d = k0 * a.dst[0] + k1 * a.dst[1] + k2 * a.dst[2] + k3 * a.dst[3] + k4 * a.dst[4]; \
        /* size_t steps from the run's start: with 32-bit offsets in the loop compilers cannot    \
         * prove that consecutive elements do not wrap, and do not vectorise (clops_common.cl) */  \
        __global const T *xs = x + s;                                                            \
        __global T *yd = y + d;                                                                  \
        const size_t s4 = a.src[4], s5 = a.src[5], d4 = a.dst[4], d5 = a.dst[5];                 \
        switch (a.size[5]) {                                                                     \
        case 2: WALK_BLOCKS(2) break;                                                            \
        case 3: WALK_BLOCKS(3) break;                                                            \
        case 4: WALK_BLOCKS(4) break;                                                            \
        case 8: WALK_BLOCKS(8) break;                                                            \
        default: WALK_RUN(a.size[5], s4, s5, d4, d5)                                             \
        }                                                                                        \
    }

PERMUTE(1, uchar)
PERMUTE(2, ushort)
PERMUTE(4, uint)
PERMUTE(8, uint2)
PERMUTE(16, uint4)

/* ---- MaxUnpooling ----------------------------------------------------------------------------
 * The specialised programs' arguments (max_unpooling.cl UNPOOL_ARGS, with 32-bit
 * sizes), then the plan's: index width in words (1: 4-byte, 2: 8-byte indices,
 * read as uint pairs), indices per plane (PyTorch) or flat, window height and
 * width (windows), whether mark and place wait for windows or planes (gated),
 * whether the input is packed (place), positions per work-item (`run`),
 * whether input, indices and output are all packed (windows' 2 x 2 form), and
 * whether planes waits for windows (pool_gated: windows raises ST_POOL). The status
 * words, the bad-index report and mark's words are the specialised programs'
 * (unpool_words.cl), so the host reads them alike (lib/ops/unpool_exec.c). */
typedef struct { uint v[4]; } clops_dims;

typedef struct {
    uint index_words, per_plane, kh, kw, gated, x_packed, run, packed, pool_gated, pad[3];
} clops_unpool_plan;

#define UNPOOL_ARGS(T)                                                                           \
    __global const T *restrict x, __global const uint *restrict indices, __global T *restrict y, \
        volatile __global uint *restrict status, __global uint *restrict scratch, clops_dims in_sizes, \
        clops_dims x_strides, clops_dims i_strides, clops_dims out_sizes, clops_dims y_strides,  \
        uint out_count, uint gen, clops_unpool_plan pl

/* The index at offset k of the indices (in elements), UINT_MAX where an 8-byte
 * one is 2^32 or more (a negative INT64 included; a negative INT32 reads as
 * 2^31 or more, past every output). */
inline uint load_index(__global const uint *indices, uint k, uint words)
{
    if (words == 1) return indices[k];
    const uint2 v = vload2(k, indices);
    return v.y ? UINT_MAX : v.x;
}

/* The flat output index named by index v of input plane nc, or `count` if it
 * is out of range (per plane: v counts within the plane). */
inline uint flat_index(uint v, uint nc, uint plane, uint count, uint per_plane)
{
    if (per_plane) return v < plane ? nc * plane + v : count;
    return v < count ? v : count;
}

/* A row kernel's work-item: input or output row g1 (of N*C*H rows of `sz`), its
 * positions [w0, w1) and coordinates; false past the planned rows. */
#define ROW_ITEM(sz)                                                                             \
    const uint g0 = get_global_id(0), g1 = get_global_id(1);                                     \
    const uint rows_ = sz.v[0] * sz.v[1] * sz.v[2];                                              \
    const uint w0 = g0 * pl.run;                                                                 \
    if (g1 >= rows_ || w0 >= sz.v[3]) return;                                                    \
    const uint w1 = min(w0 + pl.run, sz.v[3]);                                                   \
    const uint nc = g1 / sz.v[2], h = g1 - nc * sz.v[2];                                         \
    const uint n = nc / sz.v[1], c = nc - n * sz.v[1];

/* Windows: each input position (n, c, h, w) owns the kh x kw window of output
 * rows h*kh.., columns w*kw..; its value goes where its index points inside the
 * window and zeros everywhere else. An index outside its window (or bad) raises
 * ST_GENERAL, or ST_POOL where planes follows (pool_gated): planes, or mark and
 * place, then rewrite the whole output; while the indices keep needing them,
 * windows skips itself (SKIP_RAISING). 2 x 2 windows of packed
 * tensors (max pools of stride 2) take a written-out form that compilers vectorise. */
/* A window row's two elements at t (x in the one h names: 0 or 1; anything
 * else: zeros). 1- and 2-byte elements as one word of twice the width (P: yo and
 * ow are even), one store per row and position; wider ones as two elements. */
#define PAIR_1(v, h) ((h) < 2u ? (ushort)((ushort)(v) << ((h) * 8u)) : (ushort)0)
#define PAIR_2(v, h) ((h) < 2u ? (uint)(v) << ((h) * 16u) : 0u)
#define ROW_PAIR_1(T, row, t, v, h) ((__global ushort *)(row))[t] = PAIR_1(v, h)
#define ROW_PAIR_2(T, row, t, v, h) ((__global uint *)(row))[t] = PAIR_2(v, h)
#define ROW_PAIR_WIDE(T, row, t, v, h)                                                           \
    (row)[2 * (t)] = (h) == 0u ? (v) : (T)(0), (row)[2 * (t) + 1] = (h) == 1u ? (v) : (T)(0)
/* 8- and 16-byte elements (uint2, uint4) through masks: a select of vectors kept them scalar */
#define ROW_PAIR_MASKED(T, row, t, v, h)                                                         \
    (row)[2 * (t)] = (v) & (T)((h) == 0u ? ~0u : 0u), (row)[2 * (t) + 1] = (v) & (T)((h) == 1u ? ~0u : 0u)
#define ROW_PAIR_4 ROW_PAIR_WIDE
#define ROW_PAIR_8 ROW_PAIR_MASKED
#define ROW_PAIR_16 ROW_PAIR_MASKED
/* 1- and 2-byte elements: both rows in one loop (measured faster on PoCL); wider
 * ones: a loop per row (in one loop the rows' stores, which may alias as far as
 * the compiler knows, kept it from vectorising: 0.11 against 0.28 of a copy). */
#define WINDOWS_2X2_ONE(W, T, LOAD)                                                                 \
    for (size_t t = 0; t < (size_t)(w1 - w0); t++) {                                             \
        const uint v = (LOAD) - base - (r0 + 2u * (uint)t); /* the index within its window */   \
        CAT(ROW_PAIR_, W)(T, y0, t, xr[t], v);                                                      \
        CAT(ROW_PAIR_, W)(T, y1, t, xr[t], v - ow);                                                 \
        outside |= v >= 2u && v - ow >= 2u;                                                      \
    }
#define WINDOWS_2X2_TWO(W, T, LOAD)                                                                 \
    for (size_t t = 0; t < (size_t)(w1 - w0); t++) {                                             \
        const uint v = (LOAD) - base - (r0 + 2u * (uint)t);                                      \
        CAT(ROW_PAIR_, W)(T, y0, t, xr[t], v);                                                      \
    }                                                                                            \
    for (size_t t = 0; t < (size_t)(w1 - w0); t++) {                                             \
        const uint v = (LOAD) - base - (r0 + 2u * (uint)t);                                      \
        CAT(ROW_PAIR_, W)(T, y1, t, xr[t], v - ow);                                                 \
        outside |= v >= 2u && v - ow >= 2u;                                                      \
    }
#define WINDOWS_2X2_1 WINDOWS_2X2_ONE
#define WINDOWS_2X2_2 WINDOWS_2X2_ONE
#define WINDOWS_2X2_4 WINDOWS_2X2_TWO
#define WINDOWS_2X2_8 WINDOWS_2X2_TWO
#define WINDOWS_2X2_16 WINDOWS_2X2_TWO
#define WINDOWS(W, T)                                                                         \
    __kernel void CAT(clops_windows_, W)(UNPOOL_ARGS(T))                                        \
    {                                                                                            \
        NEXT_BAD_CLEAR                                                                           \
        SKIP_RAISING(0u)                                                                         \
        if (pl.pool_gated) SKIP_RAISING(2u) /* planes behind: skipped while they were needed */ \
        ROW_ITEM(in_sizes)                                                                       \
        const uint ow = out_sizes.v[3], plane = out_sizes.v[2] * ow;                            \
        const uint base = pl.per_plane ? 0u : nc * plane;                                        \
        uint xo = n * x_strides.v[0] + c * x_strides.v[1] + h * x_strides.v[2] + w0 * x_strides.v[3]; \
        uint io = n * i_strides.v[0] + c * i_strides.v[1] + h * i_strides.v[2] + w0 * i_strides.v[3]; \
        uint yo = n * y_strides.v[0] + c * y_strides.v[1] + h * pl.kh * y_strides.v[2] + w0 * pl.kw * y_strides.v[3]; \
        uint r0 = h * pl.kh * ow + w0 * pl.kw; /* the window's first element in its plane */   \
        bool outside = false;                                                                    \
        if (pl.packed && pl.kh == 2u && pl.kw == 2u) { /* rows of pairs: yo and ow are even */   \
            __global const T *xr = x + xo;                                                       \
            __global T *y0 = y + yo, *y1 = y0 + ow;                                              \
            __global const uint *ir = indices + (size_t)io * pl.index_words;                     \
            if (pl.index_words == 1u) {                                                          \
                CAT(WINDOWS_2X2_, W)(W, T, ir[t])                                                \
            } else {                                                                             \
                CAT(WINDOWS_2X2_, W)(W, T, ir[2 * t + 1] ? UINT_MAX : ir[2 * t])                 \
            }                                                                                    \
        } else {                                                                                 \
            for (uint w = w0; w < w1; w++) {                                                     \
                const uint r = load_index(indices, io, pl.index_words) - base;                   \
                const T v = x[xo];                                                               \
                bool found = false;                                                              \
                for (uint i = 0; i < pl.kh; i++) {                                               \
                    const uint ri = r0 + i * ow, yi = yo + i * y_strides.v[2];                   \
                    for (uint j = 0; j < pl.kw; j++) {                                           \
                        const bool here = r == ri + j;                                           \
                        y[yi + j * y_strides.v[3]] = here ? v : (T)(0);                          \
                        found |= here;                                                           \
                    }                                                                            \
                }                                                                                \
                outside |= !found;                                                               \
                xo += x_strides.v[3], io += i_strides.v[3], yo += pl.kw * y_strides.v[3], r0 += pl.kw; \
            }                                                                                    \
        }                                                                                        \
        if (outside) atomic_max(&status[pl.pool_gated ? ST_POOL : ST_GENERAL], gen);             \
    }

/* Planes (CPUs and accelerators; behind windows, pool_gated, where windows found an
 * index outside its window): one work-item per
 * (n, c) plane zero-fills its output plane, then writes its inputs in row-major
 * order, so the last one naming an element wins, without atomics, while the plane
 * stays in the cache. An index outside its own plane (or bad) raises ST_GENERAL:
 * mark and place then rewrite the whole output (and planes skips itself while
 * the indices keep needing them). */
/* A packed plane's inputs in order (pl.packed: input, indices and output packed). */
#define PLANE_RUN(LOAD)                                                                          \
    for (size_t k = 0; k < count; k++) {                                                         \
        const uint v = (LOAD) - base;                                                            \
        if (v < plane) yp[v] = xp[k];                                                            \
        else outside = true;                                                                     \
    }
#define PLANES(W, T)                                                                             \
    __kernel void CAT(clops_planes_, W)(UNPOOL_ARGS(T))                                         \
    {                                                                                            \
        NEXT_BAD_CLEAR                                                                           \
        if (pl.pool_gated && status[ST_POOL] != gen) return; /* windows found every index */     \
        SKIP_RAISING(0u)                                                                         \
        const uint p = get_global_id(0), cs = in_sizes.v[1];                                     \
        if (p >= in_sizes.v[0] * cs) return;                                                     \
        const uint n = p / cs, c = p - n * cs, ih = in_sizes.v[2], iw = in_sizes.v[3];           \
        const uint ow = out_sizes.v[3], plane = out_sizes.v[2] * ow;                             \
        __global T *yp = y + (n * y_strides.v[0] + c * y_strides.v[1]);                          \
        const bool packed = y_strides.v[3] == 1u && y_strides.v[2] == ow;                        \
        if (packed)                                                                              \
            for (size_t v = 0; v < plane; v++) yp[v] = (T)(0);                                   \
        else                                                                                     \
            for (uint v = 0; v < plane; v++) yp[v / ow * y_strides.v[2] + v % ow * y_strides.v[3]] = (T)(0); \
        const uint base = pl.per_plane ? 0u : p * plane;                                         \
        bool outside = false;                                                                    \
        if (pl.packed) { /* the plane's inputs and indices in one run */                         \
            const size_t k0 = (size_t)p * ih * iw, count = (size_t)ih * iw;                      \
            __global const T *xp = x + k0;                                                       \
            __global const uint *ip = indices + k0 * pl.index_words;                             \
            if (pl.index_words == 1u) PLANE_RUN(ip[k])                                           \
            else PLANE_RUN(ip[2 * k + 1] ? UINT_MAX : ip[2 * k])                                 \
        } else {                                                                                 \
            for (uint h = 0; h < ih; h++) {                                                      \
                uint xo = n * x_strides.v[0] + c * x_strides.v[1] + h * x_strides.v[2];          \
                uint io = n * i_strides.v[0] + c * i_strides.v[1] + h * i_strides.v[2];          \
                for (uint w = 0; w < iw; w++, xo += x_strides.v[3], io += i_strides.v[3]) {      \
                    const uint v = load_index(indices, io, pl.index_words) - base;               \
                    if (v < plane) yp[packed ? v : v / ow * y_strides.v[2] + v % ow * y_strides.v[3]] = x[xo]; \
                    else outside = true;                                                         \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
        if (outside) atomic_max(&status[ST_GENERAL], gen);                                       \
    }

/* mark and place return at once in a gated plan unless windows asked for them. */
#define GATE                                                                                     \
    if (pl.gated && status[ST_GENERAL] != gen) return;

/* Mark: every valid index's output word keeps the largest input position
 * naming it (base + position + 1); bad indices are reported, never written. */
__kernel void clops_mark(UNPOOL_ARGS(uint))
{
    NEXT_BAD_CLEAR
    GATE
    ROW_ITEM(in_sizes)
    const uint plane = out_sizes.v[2] * out_sizes.v[3], base = MARK_BASE + 1u;
    const uint k0 = g1 * in_sizes.v[3]; /* row-major position of (n, c, h, 0) */
    uint io = n * i_strides.v[0] + c * i_strides.v[1] + h * i_strides.v[2] + w0 * i_strides.v[3];
    uint first_bad = UINT_MAX;
    for (uint w = w0; w < w1; w++, io += i_strides.v[3]) {
        const uint v = flat_index(load_index(indices, io, pl.index_words), nc, plane, out_count,
                                  pl.per_plane);
        if (v == out_count) first_bad = min(first_bad, k0 + w);
        else atomic_max(&scratch[v], base + k0 + w);
    }
    RAISE_BAD(first_bad)
}

/* Offset in x of row-major input position k. */
inline uint input_offset(uint k, clops_dims sz, clops_dims st, uint packed)
{
    if (packed) return k;
    const uint w = k % sz.v[3], r = k / sz.v[3], h = r % sz.v[2], nc = r / sz.v[2];
    return nc / sz.v[1] * st.v[0] + nc % sz.v[1] * st.v[1] + h * st.v[2] + w * st.v[3];
}

/* Place: every output element of a row from the input position its word names,
 * zero where this execution named none. */
#define PLACE(W, T)                                                                              \
    __kernel void CAT(clops_place_, W)(UNPOOL_ARGS(T))                                          \
    {                                                                                            \
        NEXT_BAD_CLEAR                                                                           \
        GATE                                                                                     \
        ROW_ITEM(out_sizes)                                                                      \
        const uint base = MARK_BASE + 1u, span = status[ST_MARK_SPAN];                          \
        const uint v0 = g1 * out_sizes.v[3];                                                     \
        uint yo = n * y_strides.v[0] + c * y_strides.v[1] + h * y_strides.v[2] + w0 * y_strides.v[3]; \
        for (uint w = w0; w < w1; w++, yo += y_strides.v[3]) {                                   \
            const uint k = scratch[v0 + w] - base;                                               \
            y[yo] = k < span ? x[input_offset(k, in_sizes, x_strides, pl.x_packed)] : (T)(0);   \
        }                                                                                        \
    }

PLANES(1, uchar)
PLANES(2, ushort)
PLANES(4, uint)
PLANES(8, uint2)
PLANES(16, uint4)
WINDOWS(1, uchar)
WINDOWS(2, ushort)
WINDOWS(4, uint)
WINDOWS(8, uint2)
WINDOWS(16, uint4)
PLACE(1, uchar)
PLACE(2, ushort)
PLACE(4, uint)
PLACE(8, uint2)
PLACE(16, uint4)
