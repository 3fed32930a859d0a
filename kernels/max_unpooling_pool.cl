/* max_unpooling_pool.cl - MaxUnpooling's kernels for the indices of overlapping max
 * pools: pool (a gather from each output element's few candidates, GPUs and any
 * device without planes) and planes (CPU devices: one pass per (n, c) plane).
 *
 * Not a program of its own: lib/cl/program.c appends it to max_unpooling.cl,
 * whose header lists the build options (SH, SW, NA, NB, POOL_VEC, POOL_GATED,
 * PLANES) and whose definitions these kernels use (UNPOOL_ARGS, FOR_ROWS,
 * load_index, the status words, the vector definitions, GENERAL_SKIP). */
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

/* Whether plane-relative index i lies in the neighbourhood of input (h, w), in
 * offsets of type T (pool_inside: idx_t; pool_inside32: uint, for POOL_TILE). */
#define POOL_INSIDE(name, T)                                                                     \
    inline uint name(T i, T h, T w, T hout, T wout)                                              \
    {                                                                                            \
        const T r0 = h * SH >= NA ? h * SH - NA : 0, r1 = min(hout, h * SH + SH + NB);           \
        const T c0 = w * SW >= NA ? w * SW - NA : 0, c1 = min(wout, w * SW + SW + NB);           \
        uint inside = 0;                                                                         \
        if (c1 > c0)                                                                             \
            for (T r = r0; r < r1; r++) inside |= i - r * wout - c0 < c1 - c0;                   \
        return inside;                                                                           \
    }
POOL_INSIDE(pool_inside, idx_t)
POOL_INSIDE(pool_inside32, uint)

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

#if !POOL_TILE
__kernel void pool(UNPOOL_ARGS)
{
    NEXT_BAD_CLEAR
#if POOL_GATED
    if (status[ST_POOL] != gen) return; /* windows found every index in its window */
#endif
    GENERAL_SKIP
    SKIP_RAISED(ST_GENERAL)
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
    STOP_RAISED(far)
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
#endif /* !POOL_TILE */

#if POOL_TILE
/* ---- pool on GPUs: tiles of input rows per work-group (POOL_TILE) -----------------------------------
 * The rule above (each output element takes the value of the last of its
 * candidates in row-major input order whose index names it, zero if none does;
 * an index outside its neighbourhood, bad ones included, hands the execution to
 * the general path), for packed tensors with 32-bit offsets and NA = NB = 1 (the
 * host plans so). A 3-D NDRange of POOL_TX x POOL_TY work-groups: group (gx, gy, z)
 * takes the tiles of input columns gx*POOL_TX*POOL_PX.. and rows ty*POOL_TY.. of
 * plane nc for ty = gy, gy + groups(1).. and nc = z, z + groups(2).. (the host
 * launches no more groups than keep the device busy, so a gated launch that has
 * nothing to do costs few groups). Per tile the group loads its indices, each
 * turned once into its code (below), and values, with one row and column of
 * halo around, into local memory, PX consecutive inputs per access; each
 * work-item then gathers the cells of POOL_PX neighbouring inputs (one store
 * of PX*SW elements per output row for SW = 2) from the 3 x (PX + 2) codes around
 * them, and checks its inputs' own codes. No division by a run-time value but
 * one per work-item; no atomic but one raise per group. */
#if NA != 1 || NB != 1 || !IN_PACKED || !OUT_PACKED || OFFSET_64
#error "POOL_TILE needs NA = NB = 1, packed tensors and 32-bit offsets"
#endif
#define PT_W ((POOL_TX + 2) * POOL_PX)   /* a tile row: PX - 1 pad, halo, POOL_TX * PX, halo, PX - 1 pad */
#define PT_SLOTS ((POOL_TY + 2) * PT_W) /* entries of the tile */
#define PT_UNITS ((POOL_TY + 2) * (POOL_TX + 2)) /* loads of a tile: per row two halo entries, POOL_TX runs of PX */
#define PT_SQ (SW + 2)                  /* a code's row length */
#define PT_NONE 255u
/* Candidate rows (columns) of row (column) a of a cell relative to its input:
 * a max pool's neighbourhoods (NA = NB = 1) give -1 .. 0 for the first, 0 .. 1
 * for the last, 0 between (-1 .. 1 for a cell of one). */
#define PT_LO(a) ((a) == 0 ? -1 : 0)
#define PT_HI(a, s) ((a) == (s) - 1 ? 1 : 0)
#define PT_CAT_(a, b) a##b
#define PT_CAT(a, b) PT_CAT_(a, b)
#if POOL_PX == 1
#define PT_V(T) T
#define PT_VLOAD(p) (*(p))
#define PT_VSTORE(v, p) (*(p) = (v))
#else
#define PT_V(T) PT_CAT(T, POOL_PX)
#define PT_VLOAD(p) PT_CAT(vload, POOL_PX)(0, p)
#define PT_VSTORE(v, p) PT_CAT(vstore, POOL_PX)(v, 0, p)
#endif

/* The code of plane-relative index i (plane: none) for input (hh, ww): where it
 * lies in the input's neighbourhood, output rows hh*SH-1 .. hh*SH+SH by columns
 * ww*SW-1 .. ww*SW+SW, as row * PT_SQ + column, else PT_NONE. The output row is
 * i / wout through recip = (2^32 - 1) / wout (low by at most one: one step
 * corrects it); being an output element, it is clipped to the output already. */
inline uint pool_tile_code(uint i, uint hh, uint ww, uint wout, uint recip, uint plane)
{
    uint r = mul_hi(i, recip), q = i - r * wout;
    if (q >= wout) r++, q -= wout;
    const uint dr = r - (hh * SH - 1u), dc = q - (ww * SW - 1u); /* wrap when before */
    return i < plane && dr < SH + 2u && dc < PT_SQ ? dr * PT_SQ + dc : PT_NONE;
}

/* The plane-relative index at offset k (plane: none; as plane_index, 32-bit). */
inline uint pool_tile_index(__global const void *indices, uint k, uint first, uint plane)
{
#if INDEX_BYTES == 4
    const uint v = ((__global const uint *)indices)[k];
#else
    const uint2 raw = ((__global const uint2 *)indices)[k];
    const uint v = raw.y ? UINT_MAX : raw.x;
#endif
    const uint i = v - first; /* wraps when before the plane */
    return i < plane ? i : plane;
}

/* Run by one work-item per group: *skip = 1 when the group has nothing to do
 * (windows found every index in its window, or the general path runs anyway). */
inline void pool_tile_enter(volatile __global uint *status, uint gen, __local uint *skip)
{
    *skip = 1u;
    if (get_global_id(0) == 0 && get_global_id(1) == 0 && get_global_id(2) == 0) {
        NEXT_BAD_CLEAR
    }
#if POOL_GATED
    if (status[ST_POOL] != gen) return;
#endif
    GENERAL_SKIP
    *skip = 0u;
}

/* Tile entry `at` (input (hh, ww), k its offset): its code and value, or none. */
#define PT_ONE(at, hh, ww, k)                                                                    \
    do {                                                                                         \
        uint c_ = PT_NONE;                                                                       \
        elem_t v_ = (elem_t)(0);                                                                 \
        if ((hh) < hin && (ww) < win) {                                                          \
            c_ = pool_tile_code(pool_tile_index(indices, k, first, plane), hh, ww, wout, recip, plane); \
            v_ = x[k];                                                                           \
        }                                                                                        \
        lc[at] = (uchar)c_;                                                                      \
        lv[at] = v_;                                                                             \
    } while (0)

/* Output (r, q) past the last cell, of input (h, w) at tile entry `at`, from its
 * candidates (at most 3 x 3 around): the same rule through the codes. */
inline elem_t pool_tile_gather(__local const uchar *lc, __local const elem_t *lv, int at, uint h, uint w, uint r,
                               uint q, uint hin, uint win)
{
    const uint hl = max(h ? h - 1 : 0u, r ? (r + SH - 1) / SH - 1 : 0u), hh = min(min(hin - 1, h + 1), (r + 1) / SH);
    const uint wl = max(w ? w - 1 : 0u, q ? (q + SW - 1) / SW - 1 : 0u), wh = min(min(win - 1, w + 1), (q + 1) / SW);
    int found = -1;
    for (uint a = hl; a <= hh; a++)
        for (uint b = wl; b <= wh; b++) {
            const int s = at + ((int)a - (int)h) * PT_W + (int)b - (int)w;
            if (lc[s] == (r + 1 - a * SH) * PT_SQ + q + 1 - b * SW) found = s;
        }
    return found >= 0 ? lv[found] : (elem_t)(0);
}

/* A cell row of the work-item's PX inputs (SW = 2: PT_N elements) as one store. */
#define PT_N (POOL_PX * SW)
#if ELEM_BYTES == 1
#define PT_S uchar
#define PT_K PT_N
#elif ELEM_BYTES == 2
#define PT_S ushort
#define PT_K PT_N
#elif ELEM_BYTES == 4
#define PT_S uint
#define PT_K PT_N
#else /* 8- and 16-byte elements (uint2, uint4): PX = 1, stored as 32-bit words */
#define PT_S uint
#define PT_K (ELEM_BYTES / 4u * PT_N)
#endif
#if PT_N == 2
#define PT_ROW(v) (v[0], v[1])
#elif PT_N == 4
#define PT_ROW(v) (v[0], v[1], v[2], v[3])
#elif PT_N == 8
#define PT_ROW(v) (v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7])
#elif PT_N == 16
#define PT_ROW(v) (v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13], v[14], v[15])
#endif
#if SW == 2 && PT_K == 2
#define PT_KL 2
#elif SW == 2 && PT_K == 4
#define PT_KL 4
#elif SW == 2 && PT_K == 8
#define PT_KL 8
#elif SW == 2 && PT_K == 16
#define PT_KL 16
#endif

__kernel __attribute__((reqd_work_group_size(POOL_TX, POOL_TY, 1))) void pool(UNPOOL_ARGS)
{
    __local uchar lc[PT_SLOTS];
    __local elem_t lv[PT_SLOTS];
    __local uint flag;
    const uint lx = get_local_id(0), ly = get_local_id(1);
    if (lx == 0 && ly == 0) pool_tile_enter(status, gen, &flag);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (flag) return; /* the whole group */
    const uint hin = DIM(in_sizes, 2), win = DIM(in_sizes, 3), hout = DIM(out_sizes, 2), wout = DIM(out_sizes, 3);
    const uint plane = hout * wout, planes = DIM(in_sizes, 0) * DIM(in_sizes, 1), recip = UINT_MAX / wout;
    const uint w0 = get_group_id(0) * (POOL_TX * POOL_PX), wb = w0 + lx * POOL_PX; /* wb: the item's first input */
    const int at = (int)((ly + 1) * PT_W + (lx + 1) * POOL_PX);                   /* its tile entry */
    for (uint nc = get_group_id(2); nc < planes; nc += get_num_groups(2))
        for (uint h0 = get_group_id(1) * POOL_TY; h0 < hin; h0 += get_num_groups(1) * POOL_TY) {
            const uint k0 = nc * hin * win, first = PLANE_BASE(nc, plane);
            barrier(CLK_LOCAL_MEM_FENCE); /* the tile before is read */
            for (uint u = ly * POOL_TX + lx; u < PT_UNITS; u += POOL_TX * POOL_TY) {
                const uint row = u / (POOL_TX + 2), col = u % (POOL_TX + 2), hh = h0 + row - 1; /* wraps before row 0 */
                const uint k = k0 + hh * win;
                if (col == 0) { /* the halo before */
                    PT_ONE(row * PT_W + POOL_PX - 1, hh, w0 - 1, k + w0 - 1);
                } else if (col == POOL_TX + 1) { /* and after */
                    const uint ww = w0 + POOL_TX * POOL_PX;
                    PT_ONE(row * PT_W + (POOL_TX + 1) * POOL_PX, hh, ww, k + ww);
                } else { /* PX inputs */
                    const uint ww = w0 + (col - 1) * POOL_PX, s = row * PT_W + col * POOL_PX;
                    if (hh < hin && ww + POOL_PX <= win) {
#if INDEX_BYTES == 4
                        const PT_V(uint) raw = PT_VLOAD((__global const uint *)indices + k + ww);
                        uchar cs[POOL_PX];
#pragma unroll
                        for (uint j = 0; j < POOL_PX; j++) {
                            const uint i = ((const uint *)&raw)[j] - first; /* wraps when before the plane */
                            cs[j] = (uchar)pool_tile_code(i, hh, ww + j, wout, recip, plane);
                        }
#else
                        uchar cs[POOL_PX];
#pragma unroll
                        for (uint j = 0; j < POOL_PX; j++)
                            cs[j] = (uchar)pool_tile_code(pool_tile_index(indices, k + ww + j, first, plane), hh,
                                                          ww + j, wout, recip, plane);
#endif
#pragma unroll
                        for (uint j = 0; j < POOL_PX; j++) lc[s + j] = cs[j];
#if POOL_PX == 1
                        lv[s] = x[k + ww];
#else
                        PT_VSTORE(PT_VLOAD(x + k + ww), lv + s);
#endif
                    } else {
#pragma unroll
                        for (uint j = 0; j < POOL_PX; j++) PT_ONE(s + j, hh, ww + j, k + ww + j);
                    }
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            const uint h = h0 + ly;
            if (h >= hin || wb >= win) continue;
            uint cd[3][POOL_PX + 2];
            elem_t vv[3][POOL_PX + 2];
#pragma unroll
            for (int a = 0; a < 3; a++) {
                const int e = at + (a - 1) * PT_W;
#pragma unroll
                for (int j = 0; j < POOL_PX + 2; j++) cd[a][j] = lc[e + j - 1], vv[a][j] = lv[e + j - 1];
            }
            const uint nj = min((uint)POOL_PX, win - wb); /* the item's inputs */
            uint bad = 0;
#pragma unroll
            for (uint j = 0; j < POOL_PX; j++) bad |= j < nj && cd[1][1 + j] == PT_NONE;
            if (bad) atomic_or(&flag, 1u);
            __global elem_t *yp = y + nc * plane;
            const uint q0 = wb * SW, r1 = h + 1 == hin ? hout : min(hout, h * SH + SH);
            const uint q1 = wb + nj == win ? wout : min(wout, q0 + nj * SW);
#pragma unroll
            for (uint a = 0; a < SH; a++) { /* the cells */
                const uint r = h * SH + a, t = r * wout + q0;
                if (r >= hout) break;
                elem_t row[PT_N];
#pragma unroll
                for (uint j = 0; j < POOL_PX; j++)
#pragma unroll
                    for (uint b = 0; b < SW; b++) {
                        elem_t v = (elem_t)(0);
#pragma unroll
                        for (int dr = PT_LO(a); dr <= PT_HI(a, SH); dr++)
#pragma unroll
                            for (int dc = PT_LO(b); dc <= PT_HI(b, SW); dc++)
                                if (cd[1 + dr][1 + j + dc] == (a + 1 - dr * SH) * PT_SQ + b + 1 - dc * SW)
                                    v = vv[1 + dr][1 + j + dc];
                        row[j * SW + b] = v;
                    }
#ifdef PT_KL
                if (q0 + PT_N <= wout && nj == POOL_PX) {
                    PT_CAT(vstore, PT_KL)((PT_CAT(PT_S, PT_KL))PT_ROW(row), 0, (__global PT_S *)(yp + t));
                    continue;
                }
#endif
#pragma unroll
                for (uint b = 0; b < PT_N; b++)
                    if (b < nj * SW && q0 + b < wout) yp[t + b] = row[b];
            }
            /* past the last cell: columns of the last input column, rows of the last input row */
            for (uint r = h * SH; r < r1; r++)
                for (uint q = r < h * SH + SH ? q0 + nj * SW : q0; q < q1; q++) {
                    const uint w = min(q / SW, win - 1); /* the cell's input, or the last */
                    yp[r * wout + q] = pool_tile_gather(lc, lv, at + (int)(w - wb), h, w, r, q, hin, win);
                }
        }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lx == 0 && ly == 0 && flag) atomic_max(&status[ST_GENERAL], gen);
}
#endif /* POOL_TILE */
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
    NEXT_BAD_CLEAR
#if POOL_GATED
    if (status[ST_POOL] != gen) return; /* windows found every index in its window */
#endif
    GENERAL_SKIP
    SKIP_RAISED(ST_GENERAL)
    const idx_t per_in = DIM(in_sizes, 2) * DIM(in_sizes, 3), plane = DIM(out_sizes, 2) * DIM(out_sizes, 3);
    const idx_t count = (idx_t)out_count, planes = DIM(in_sizes, 0) * DIM(in_sizes, 1);
    const idx_t run = (planes + get_global_size(0) - 1) / get_global_size(0);
    const idx_t p0 = min(planes, (idx_t)get_global_id(0) * run), p1 = min(planes, p0 + run);
    uint outside = 0;
    for (idx_t nc = p0; nc < p1; nc++) {
        __global elem_t *restrict yp = y + nc * plane;
        zero_fill(yp, plane);
        const idx_t k0 = nc * per_in, first = PLANE_BASE(nc, plane);
        for (idx_t k = k0; k < k0 + per_in; k++) {
            const idx_t i = load_index(indices, k, INDEX_LIMIT(plane, count)) - first; /* wraps below the plane */
            if (i < plane) yp[i] = x[k];
            else outside = 1;
        }
        STOP_RAISED(outside)
    }
    if (outside) atomic_max(&status[ST_GENERAL], gen);
}
#endif
