/* max_unpooling_sort.cl - MaxUnpooling's general path on GPUs for 1- and 2-byte
 * elements (-DSORT=1): bin, then settle, with mark and place behind them for an
 * execution whose indices crowd a tile (ST_HEAVY, as behind bucket and tiles).
 *
 * Not a program of its own: lib/cl/program.c appends it to max_unpooling.cl
 * (after it, before max_unpooling_general.cl), whose header lists the build
 * options and whose definitions these kernels use (UNPOOL_ARGS, load_index,
 * GENERAL_GATE, load_one, the status words).
 *
 * Why: mark and place cost one random atomic per input and a 4-byte word per
 * output, 4x a 1-byte output's own bytes, and the GPU model put scattered 1-byte
 * indices at 0.21 of a copy with them (notes/gpu_plans.md). Here every input is
 * binned by output tile (2^SORT_SHIFT outputs) into scratch, and each tile is
 * then settled in local memory and written whole, so global memory sees
 * coalesced reads, short runs of entries and whole-tile writes, and one global
 * atomic per (work-group, tile), not per input.
 *
 * scratch (uint words): fill[tiles] (entries each tile holds this execution;
 * zero between executions: settle zeroes what it read), then from word
 * SORT_E0 each tile's `cap` slots of entries (uint2: input position + 1, and the
 * output's offset in its tile | the value << 16), then mark's words (MARK_WORDS).
 * An entry carries its input position, so the order of entries in a tile does not
 * matter: the largest position naming an output wins, as everywhere. The host
 * sets cap (ST_SORT_CAP) to twice what an even spread gives a tile, and 64, or
 * the inputs' count where that is less (max_unpooling.c sort_plan); a work-group that finds a tile full writes no
 * entry past it and raises ST_HEAVY, and mark and place then write the whole
 * output instead (settle writes nothing, but still zeroes the fill counters).
 *
 * Build options: -DSORT_SHIFT=s (tiles of 2^s outputs; settle's local arrays),
 * -DSORT_TILES=h (bin's local counters: tiles at most h). */
#if SORT
#if !IN_PACKED || !OUT_PACKED || OFFSET_64 || ELEM_BYTES > 2 || !MARK || BUCKET
#error "bin and settle: packed tensors, 32-bit offsets, 1- and 2-byte elements, mark and place behind them"
#endif
#define ST_SORT_GROUPS 9 /* bin's work-groups (ST_GROUPS) */
#define ST_SORT_TILES 10 /* tiles (ST_TILES) */
#define ST_SORT_CAP 14   /* slots per tile */
#define SORT_TILE (1u << SORT_SHIFT)
/* Inputs (bin) or entries (settle) per work-item per loop step: independent loads in flight. */
#define SORT_U 8
#define SORT_E0(tiles) (((tiles) + 1u) & ~1u)
#define SORT_FILL ((volatile __global uint *)scratch)
#define SORT_ENTRIES(tiles) ((__global uint2 *)(scratch + SORT_E0(tiles)))
#define SORT_MARK_WORDS                                                                          \
    (scratch + SORT_E0(status[ST_SORT_TILES]) + (idx_t)2 * status[ST_SORT_TILES] * status[ST_SORT_CAP])

/* An entry stored as one 8-byte access where the device has 64-bit integers. */
#if INT64_OK && defined(__ENDIAN_LITTLE__)
#define SORT_PUT(p, a, b) (*(__global ulong *)(p) = ((ulong)(b) << 32) | (a))
#else
#define SORT_PUT(p, a, b) (*(p) = (uint2)((a), (b)))
#endif

/* The step of SORT_U inputs at positions s, s + items, ... (neighbouring
 * work-items neighbouring positions), loaded before any is used (independent
 * loads in flight): their indices (UINT_MAX at and past k1) and, where xs is
 * not NULL, their values. */
inline void sort_load(__global const void *indices, __global const elem_t *x, idx_t s, uint items, uint k1,
                      uint *raw, elem_t *xs)
{
#pragma unroll
    for (uint q = 0; q < SORT_U; q++) {
        const idx_t at = s + (idx_t)q * items;
        raw[q] = at < k1 ? load_one(indices, at) : UINT_MAX;
        if (xs) xs[q] = at < k1 ? x[at] : (elem_t)(0);
    }
}

/* The flat output index that index i at the current position names (count if
 * out of range). With per-plane indices each work-item carries its position's
 * plane along, one step of `items` positions at a time (SORT_PLANE_NEXT): no
 * division per input. */
#if PER_PLANE
#define SORT_PLANE_START                                                                         \
    const uint ip_ = (uint)(DIM(in_sizes, 2) * DIM(in_sizes, 3));                                \
    const uint op_ = (uint)(DIM(out_sizes, 2) * DIM(out_sizes, 3));                              \
    const uint dn_ = items / ip_, dr_ = items % ip_;                                             \
    uint nc_ = (k0 + lid) / ip_, r_ = (k0 + lid) % ip_;
#define SORT_FLAT(i) ((i) < op_ ? nc_ * op_ + (i) : count)
#define SORT_PLANE_NEXT                                                                          \
    r_ += dr_, nc_ += dn_;                                                                       \
    if (r_ >= ip_) r_ -= ip_, nc_++;
#else
#define SORT_PLANE_START
#define SORT_FLAT(i) ((i) < count ? (i) : count)
#define SORT_PLANE_NEXT
#endif

/* settle's step of SORT_U entries of a tile at j0, j0 + items, ... ((0, 0), no
 * entry, at and past n), loaded before any is used. */
inline void settle_load(__global const uint2 *e, uint j0, uint items, uint n, uint2 *en)
{
#pragma unroll
    for (uint q = 0; q < SORT_U; q++) en[q] = j0 + q * items < n ? e[j0 + q * items] : (uint2)(0u);
}

/* Bin: work-group g takes a contiguous run of the inputs. It counts them per
 * tile in local memory, reserves each tile's share of slots with one global
 * atomic_add per tile it touched, then reads its inputs again and writes their
 * entries into the reserved slots. */
__kernel void bin(UNPOOL_ARGS)
{
    NEXT_BAD_CLEAR
    GENERAL_GATE
    __local uint hist[SORT_TILES];
    const uint groups = status[ST_SORT_GROUPS], tiles = status[ST_SORT_TILES], cap = status[ST_SORT_CAP];
    const uint g = (uint)get_group_id(0), lid = (uint)get_local_id(0), items = (uint)get_local_size(0);
    if (g >= groups) return; /* past the planned groups: the whole group, before any barrier */
    const uint n = (uint)(DIM(in_sizes, 0) * DIM(in_sizes, 1) * DIM(in_sizes, 2) * DIM(in_sizes, 3));
    const uint count = (uint)out_count;
    /* runs of whole steps (items * SORT_U inputs), the last one shorter */
    const idx_t step = (idx_t)items * SORT_U, per = ((idx_t)n / groups + step) / step * step;
    const uint k0 = (uint)min((idx_t)n, g * per), k1 = (uint)min((idx_t)n, k0 + per);
    volatile __global uint *fill = SORT_FILL;
    __global uint2 *entries = SORT_ENTRIES(tiles);
    for (uint t = lid; t < tiles; t += items) hist[t] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint first_bad = UINT_MAX, raw[SORT_U];
    elem_t xs[SORT_U];
    bool full = false;
    for (uint pass = 0;; pass++) { /* 0: count per tile; 1: write the entries */
        SORT_PLANE_START
        for (idx_t s = (idx_t)k0 + lid; s < k1; s += step) {
            sort_load(indices, x, s, items, k1, raw, pass ? xs : NULL);
#pragma unroll
            for (uint q = 0; q < SORT_U; q++) {
                const uint k = (uint)(s + (idx_t)q * items), v = SORT_FLAT(raw[q]);
                if (k >= k1) {
                } else if (v == count) {
                    first_bad = min(first_bad, k);
                } else if (pass == 0) {
                    atomic_inc(&hist[v >> SORT_SHIFT]);
                } else {
                    const uint t = v >> SORT_SHIFT, slot = atomic_inc(&hist[t]);
                    if (slot < cap)
                        SORT_PUT(entries + (idx_t)t * cap + slot, k + 1u, (v & (SORT_TILE - 1u)) | ((uint)xs[q] << 16));
                }
                SORT_PLANE_NEXT
            }
        }
        if (pass == 1) break;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint t = lid; t < tiles; t += items) { /* hist[t]: the group's next slot in tile t */
            const uint c = hist[t];
            if (c == 0u) continue;
            const uint at = atomic_add(&fill[t], c);
            hist[t] = at;
            full |= at + c > cap;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (full) atomic_max(&status[ST_HEAVY], gen);
    RAISE_BAD(first_bad)
}

/* Settle: work-group by work-group, tile by tile: the largest input position of
 * each output through atomic_max in local memory, then the winners' values into
 * a local copy of the tile (zero where none), then the tile written whole with
 * 16-byte stores (element stores for an unaligned output and the last tile's
 * tail). */
__kernel void settle(UNPOOL_ARGS)
{
    NEXT_BAD_CLEAR
    GENERAL_GATE
    __local uint4 win4[SORT_TILE / 4], got4[SORT_TILE * ELEM_BYTES / 16];
    __local uint *win = (__local uint *)win4;
    __local uint held;
    __local elem_t *got = (__local elem_t *)got4;
    const uint tiles = status[ST_SORT_TILES], cap = status[ST_SORT_CAP], count = (uint)out_count;
    const uint lid = (uint)get_local_id(0), items = (uint)get_local_size(0);
    volatile __global uint *fill = SORT_FILL;
    __global const uint2 *entries = SORT_ENTRIES(tiles);
    const bool aligned = ((size_t)y & 15u) == 0u;
    if (status[ST_HEAVY] == gen) { /* raised by bin: mark and place write the output; only zero the counters */
        for (uint t = (uint)get_global_id(0); t < tiles; t += (uint)get_global_size(0)) fill[t] = 0u;
        return;
    }
    for (uint t = (uint)get_group_id(0); t < tiles; t += (uint)get_num_groups(0)) {
        if (lid == 0u) held = fill[t];
        for (uint o = lid; o < SORT_TILE / 4u; o += items) win4[o] = (uint4)(0u);
        for (uint o = lid; o < SORT_TILE * ELEM_BYTES / 16u; o += items) got4[o] = (uint4)(0u);
        barrier(CLK_LOCAL_MEM_FENCE);
        const uint n = min(held, cap);
        if (lid == 0u) fill[t] = 0u; /* the next execution's bin starts from zero */
        __global const uint2 *e = entries + (idx_t)t * cap;
        uint2 en[SORT_U];
        for (uint j0 = lid; j0 < n; j0 += items * SORT_U) {
            settle_load(e, j0, items, n, en);
#pragma unroll
            for (uint q = 0; q < SORT_U; q++)
                if (en[q].x) atomic_max(&win[en[q].y & (SORT_TILE - 1u)], en[q].x);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint j0 = lid; j0 < n; j0 += items * SORT_U) {
            settle_load(e, j0, items, n, en);
#pragma unroll
            for (uint q = 0; q < SORT_U; q++) {
                const uint o = en[q].y & (SORT_TILE - 1u);
                if (en[q].x && win[o] == en[q].x) got[o] = (elem_t)(en[q].y >> 16);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const uint t0 = t << SORT_SHIFT, here = min(SORT_TILE, count - t0);
        const uint vecs = aligned ? here * ELEM_BYTES / 16u : 0u;
        for (uint i = lid; i < vecs; i += items) ((__global uint4 *)(y + t0))[i] = got4[i];
        for (uint o = vecs * (16u / ELEM_BYTES) + lid; o < here; o += items) y[t0 + o] = got[o];
        barrier(CLK_LOCAL_MEM_FENCE); /* before the next tile's clear */
    }
}
#endif /* SORT */
