/* max_unpooling_general.cl - MaxUnpooling's general path, for indices anywhere in
 * their plane: bucket and tiles (CPU devices: no atomics, no clear) and mark and
 * place (GPUs, and CPUs under a loop limit behind tiles: max_unpooling.cl ST_HEAVY).
 *
 * Not a program of its own: lib/cl/program.c appends it to max_unpooling.cl,
 * whose header lists the build options (BUCKET, MARK, PLACE_VEC, INTERLEAVE, ...)
 * and whose definitions these kernels use (UNPOOL_ARGS, FOR_ROWS, load_index,
 * the status words, the vector definitions, GENERAL_SKIP). */
#if BUCKET && INTERLEAVE
#error "bucket takes contiguous runs of rows (INTERLEAVE=0)"
#endif
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
#define ST_TILE_SHIFT 8
#define ST_GROUPS 9
#define ST_TILES 10
#define ST_PAD 11

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
    NEXT_BAD_CLEAR
    GENERAL_GATE
    const idx_t groups = status[ST_GROUPS];
    if (get_global_id(0) >= groups) return; /* past the planned work-items: no bounds row */
    const uint shift = status[ST_TILE_SHIFT], pad = status[ST_PAD];
    const idx_t tiles = status[ST_TILES], count = (idx_t)out_count, plane = DIM(out_sizes, 2) * DIM(out_sizes, 3);
    __global elem_t *values = BUCKET_VALUES(in_sizes);
    __global uint *slots = BUCKET_INDICES(in_sizes);
    __global uint *bounds = BUCKET_BOUNDS(in_sizes) + (idx_t)get_global_id(0) * (tiles + 1);
    for (idx_t t = 1; t <= tiles; t++) bounds[t] = 0;
    uint first_bad = UINT_MAX;
    { /* counts, in bounds[t + 1] */
        FOR_ROWS_OF(in_sizes, groups)
        const idx_t k0 = (nc * DIM(in_sizes, 2) + h) * DIM(in_sizes, 3);
        for (idx_t w = w0; w < w1; w++) {
            const idx_t v = load_flat(indices, I_AT(w), nc, plane, count);
            if (v == count) first_bad = min(first_bad, (uint)(k0 + w));
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
    RAISE_BAD(first_bad)
    { /* entries: bounds[t + 1] moves from tile t's start to its end */
        FOR_ROWS_OF(in_sizes, groups)
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
    NEXT_BAD_CLEAR
    GENERAL_GATE
    const uint shift = status[ST_TILE_SHIFT], pad = status[ST_PAD];
    const idx_t groups = status[ST_GROUPS], tiles = status[ST_TILES], count = (idx_t)out_count;
    __global const elem_t *values = BUCKET_VALUES(in_sizes);
    __global const uint *slots = BUCKET_INDICES(in_sizes), *bounds = BUCKET_BOUNDS(in_sizes);
#if LOOP_BUDGET
    idx_t spent = 0; /* loop iterations so far (the header: bounded work) */
#endif
    for (idx_t t = get_global_id(0); t < tiles; t += get_global_size(0)) {
        const idx_t t0 = t << shift, t1 = min(count, t0 + ((idx_t)1 << shift));
#if LOOP_BUDGET
        idx_t entries = 0;
        for (idx_t g = 0; g < groups; g++) {
            __global const uint *b = bounds + g * (tiles + 1) + t;
            entries += b[1] - b[0] - pad;
        }
        spent += groups * 2 + ((t1 - t0) >> 4) + 16 + entries;
        if (spent > LOOP_BUDGET) { /* duplicates crowd this tile: mark and place write the output */
            atomic_max(&status[ST_HEAVY], gen);
            return;
        }
#endif
#if OUT_PACKED
        __global elem_t *tile = y + t0;
        zero_fill(tile, t1 - t0);
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

#if MARK
/* General path, MARK plans (devices that are not CPUs, and on CPUs behind tiles
 * for crowded tiles; two launches, bounded work
 * per work-item, any order of work-groups): `mark` gives every output element
 * the largest row-major input position whose index names it, with atomic_max
 * on its word of scratch (`win`: one uint per output element); `place` then
 * writes every output element from that position's input, zero where none
 * named it. The last input position naming an element wins, as everywhere.
 * Input positions are below 2^32 - 1 (the host's rule, max_unpooling.c
 * needs_host).
 *
 * Nothing clears the words between executions: execution gen writes
 * base + k + 1 for input position k, where base = ((gen - 1) % period) * span,
 * span (status[ST_MARK_SPAN]) is the input's element count and period
 * (status[ST_MARK_PERIOD]) = (2^32 - 1) / span, set once by the host. Words of
 * earlier executions are smaller than this one's (so atomic_max replaces them)
 * and read as "none" (outside [base + 1, base + span]), until the base wraps to
 * 0: the host zeroes the words before every execution with (gen - 1) % period
 * == 0 but the first (max_unpooling.c enqueue_chain). place therefore reads
 * the words and writes nothing back (it zeroed every word it read before:
 * scattered stores, a quarter of its memory traffic in the GPU model). */
/* (ST_MARK_SPAN, ST_MARK_PERIOD and MARK_BASE: unpool_words.cl) */
#if BUCKET && INTERLEAVE
#error "bucket takes contiguous runs of rows (INTERLEAVE=0)"
#endif
#if BUCKET || SORT
/* Behind bucket and tiles (CPUs) mark and place run only where tiles found a
 * tile too crowded to write within LOOP_BUDGET, behind bin and settle (GPUs)
 * where bin found a tile full (max_unpooling_sort.cl); their words follow the
 * other kernels' scratch. */
#define MARK_GATE                                                                                \
    if (status[ST_HEAVY] != gen) return;
#if BUCKET
#define MARK_WORDS(in_sizes) (BUCKET_BOUNDS(in_sizes) + (idx_t)status[ST_GROUPS] * (status[ST_TILES] + 1))
#else
#define MARK_WORDS(in_sizes) SORT_MARK_WORDS
#endif
#else
#define MARK_GATE GENERAL_GATE
#define MARK_WORDS(in_sizes) (scratch)
#endif

__kernel void mark(UNPOOL_ARGS)
{
    NEXT_BAD_CLEAR
    MARK_GATE
    const idx_t count = (idx_t)out_count, plane = DIM(out_sizes, 2) * DIM(out_sizes, 3);
    volatile __global uint *win = (volatile __global uint *)MARK_WORDS(in_sizes);
    const uint base = MARK_BASE + 1u;
    uint first_bad = UINT_MAX;
    FOR_ROWS(in_sizes)
    const idx_t k0 = (nc * DIM(in_sizes, 2) + h) * DIM(in_sizes, 3); /* row-major position of (n, c, h, 0) */
    for (idx_t w = w0; w < w1; w++) {
        const idx_t v = load_flat(indices, I_AT(w), nc, plane, count);
        if (v == count) first_bad = min(first_bad, (uint)(k0 + w));
        else atomic_max(&win[v], base + (uint)(k0 + w));
    }
    END_ROWS
    RAISE_BAD(first_bad)
}

/* x at row-major input position k. */
inline elem_t place_x(__global const elem_t *x, idx_t k, dims4 in_sizes, dims4 x_strides)
{
#if IN_PACKED
    (void)in_sizes;
    (void)x_strides;
    return x[k];
#else
    const idx_t kw = k % DIM(in_sizes, 3), kh = k / DIM(in_sizes, 3) % DIM(in_sizes, 2);
    const idx_t knc = k / DIM(in_sizes, 3) / DIM(in_sizes, 2);
    return x[offset4(x_strides, knc / DIM(in_sizes, 1), knc % DIM(in_sizes, 1), kh, kw)];
#endif
}
/* The output element of scratch word `word`: x at its position if this
 * execution wrote it (k = word - base below span), else zero. The load is
 * unconditional (x[0] for none, every plan with mark has inputs), so that a
 * vector of these stays one store rather than one per element. */
#define PLACE_ONE(word)                                                                          \
    ((word) - base < span ? place_x(x, (word) - base, in_sizes, x_strides) : (elem_t)(0))

#if PLACE_VEC
#if !INTERLEAVE || !OUT_PACKED || OFFSET_64 || ELEM_BYTES > 8
#error "place's vector form: GPUs, a packed output, 32-bit offsets, elements of at most 8 bytes"
#endif
/* place's GPU form (-DPLACE_VEC=1, the parameter table's place_vector): the
 * output and the words as one flat range, PV elements per unit (16 bytes of
 * output, at least 4 elements), neighbouring work-items neighbouring units:
 * each unit loads its PV words as one vector, gathers the (independent)
 * inputs and stores the PV elements as one vector. 32-bit offsets, no division
 * per element; the last count % PV elements go to work-item 0. */
#if ELEM_BYTES == 1
#define PV 16
typedef uint16 place_wordv;
typedef uchar16 place_elemv;
#elif ELEM_BYTES == 2
#define PV 8
typedef uint8 place_wordv;
typedef ushort8 place_elemv;
#elif ELEM_BYTES == 4
#define PV 4
typedef uint4 place_wordv;
typedef uint4 place_elemv;
#else
#define PV 4
typedef uint4 place_wordv;
typedef uint8 place_elemv;
#endif
typedef place_wordv __attribute__((aligned(4))) place_words;
typedef place_elemv __attribute__((aligned(ELEM_BYTES < 4 ? ELEM_BYTES : 4))) place_elems;
/* A mask of the words (-1: this execution's) as a mask of the elements. */
#if ELEM_BYTES == 1
#define PLACE_MASK(m) convert_char16(m)
#elif ELEM_BYTES == 2
#define PLACE_MASK(m) convert_short8(m)
#elif ELEM_BYTES == 4
#define PLACE_MASK(m) (m)
#else
#define PLACE_MASK(m) shuffle(m, (uint8)(0, 0, 1, 1, 2, 2, 3, 3))
#endif
#if PV == 16
#define PLACE_ELEMS(e)                                                                           \
    (place_elemv)(e(s0), e(s1), e(s2), e(s3), e(s4), e(s5), e(s6), e(s7), e(s8), e(s9), e(sa), e(sb), e(sc), e(sd), \
                  e(se), e(sf))
#elif PV == 8
#define PLACE_ELEMS(e) (place_elemv)(e(s0), e(s1), e(s2), e(s3), e(s4), e(s5), e(s6), e(s7))
#else
#define PLACE_ELEMS(e) (place_elemv)(e(s0), e(s1), e(s2), e(s3))
#endif
#endif

__kernel void place(UNPOOL_ARGS)
{
    NEXT_BAD_CLEAR
    MARK_GATE
    __global const uint *win = MARK_WORDS(in_sizes);
    const uint base = MARK_BASE + 1u, span = status[ST_MARK_SPAN];
#if PLACE_VEC
    const uint count = (uint)out_count, units = count / PV, items = (uint)get_global_size(0);
    for (uint u = (uint)get_global_id(0); u < units; u += items) {
        const place_wordv k = *(__global const place_words *)(win + PV * u) - base;
        const place_wordv at = select((place_wordv)(0), k, k < span); /* x[0] for none */
#define PLACE_W(c) place_x(x, at.c, in_sizes, x_strides)
        const place_elemv got = PLACE_ELEMS(PLACE_W);
#undef PLACE_W
        *(__global place_elems *)(y + PV * u) = select((place_elemv)(0), got, PLACE_MASK(k < span));
    }
    if (get_global_id(0) == 0)
        for (uint v = units * PV; v < count; v++) y[v] = PLACE_ONE(win[v]);
#else
    FOR_ROWS(out_sizes)
    const idx_t v0 = (nc * DIM(out_sizes, 2) + h) * DIM(out_sizes, 3);
#if OUT_PACKED
    const idx_t yrow = v0, ys = 1;
#else
    const idx_t yrow = offset4(y_strides, n, c, h, 0), ys = DIM(y_strides, 3);
#endif
    for (idx_t q = w0; q < w1; q++) y[yrow + q * ys] = PLACE_ONE(win[v0 + q]);
    END_ROWS
#endif
}
#endif /* MARK */
