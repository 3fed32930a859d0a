/* host_unpool.c - MaxUnpooling on the host (the host backend and the fallback),
 * on several threads, with exactly the serial result: the output zero-filled,
 * then Y[pos(k)] = X[k] for every input element k in row-major order, so the
 * last of several elements naming one output element wins.
 *
 * Positions. Index I[k] names the flat (row-major) output position
 *   pos = I[k]                          CLOPS_INDICES_FLAT (DirectML, ONNX),
 *   pos = plane(k) * H_out*W_out + I[k] CLOPS_INDICES_PER_PLANE (PyTorch),
 * plane(k) = n*C + c of input element k. The index is valid iff, read as an
 * unsigned number, it is below the output's element count (flat) or below
 * H_out*W_out (per plane); a negative INT64 or a UINT64 past INT64_MAX is not.
 *
 * Two passes, each on the host kernels' threads:
 *   check    the input in chunks of CHUNK elements: the bad indices (how many,
 *            and the first), and each chunk's smallest and largest valid position;
 *   scatter  the output in one band per thread. A thread zero-fills its band and
 *            walks, in input order, the chunks whose positions reach into it,
 *            writing the elements that land in it. Every output element has one
 *            owner, which sees all its writers in input order: the serial result.
 *            The band goes in pieces of PIECE_BYTES (zeros, then values, while
 *            the piece is in cache) when the chunks are local enough that this
 *            costs at most twice the input's reads (pooling-shaped and per-plane
 *            indices: a chunk reaches into one or two pieces); otherwise
 *            (scattered indices reach everywhere) the band is one piece, and
 *            each thread reads every chunk that reaches into its band.
 * The first pass is what lets execute_host check every index before writing.
 * Scattered indices (a sample of chunks reaches far; several threads) take
 * another way, "buckets" below, in which the check pass also sorts the inputs
 * by output tile. */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "host/host.h"

#ifdef CLOPS_TEST_HOOKS
#include <pthread.h>
_Atomic unsigned clops_test_unpool_threads, clops_test_unpool_path, clops_test_unpool_force;
#define NOTE_THREAD(j, t) ((j)->tid[t] = pthread_self())
#define NOTE_PATH(v) (clops_test_unpool_path = (v))
#define FORCED clops_test_unpool_force
#else
#define NOTE_THREAD(j, t) ((void)0)
#define NOTE_PATH(v) ((void)0)
#define FORCED CLOPS_UNPOOL_AUTO
#endif
#define FAIL_ALLOC (FORCED == CLOPS_UNPOOL_BUCKETS_NO_MEMORY)

#define CHUNK 4096u           /* input elements per chunk of the check */
#define STACK_CHUNKS 64u      /* chunks whose spans fit on the stack */
#define NONE UINT64_MAX
static const uint64_t piece_bytes[] = {256u << 10, 2u << 20}; /* tried in order */

#if defined(__GNUC__)
#define HOT static inline __attribute__((always_inline))
#else
#define HOT static inline
#endif

typedef struct span {
    uint64_t lo, hi; /* smallest and largest valid position; lo > hi: none */
    bool clean;      /* no bad index */
} span;

typedef struct unpool_job {
    const clops_op_params *p;
    const uint8_t *in, *idx;
    uint8_t *out;
    size_t es, is;                /* element and index bytes */
    bool per_plane;
    bool in_packed, out_packed;   /* input and indices both packed; output packed */
    uint64_t plane_in, plane_out; /* elements per (n, c) plane */
    uint64_t limit;               /* an index is valid below this */
    uint64_t nchunks;
    span *spans;
    uint64_t *pmax, *smin;        /* prefix max of spans[].hi, suffix min of spans[].lo */
    uint64_t piece;               /* scatter piece, output elements */
    struct buckets *bk;           /* scattered indices: the buckets, else NULL */
    unsigned threads;
    uint64_t bad[CLOPS_HOST_MAX_THREADS], first_bad[CLOPS_HOST_MAX_THREADS];
#ifdef CLOPS_TEST_HOOKS
    pthread_t tid[CLOPS_HOST_MAX_THREADS]; /* the thread that ran each range of a pass */
    unsigned ran;                          /* the most distinct threads of a pass */
#endif
} unpool_job;

#ifdef CLOPS_TEST_HOOKS
/* After a pass of `used` ranges: how many distinct threads ran them. */
static void count_threads(unpool_job *j, uint64_t used)
{
    unsigned distinct = 0;
    for (uint64_t t = 0; t < used && t < CLOPS_HOST_MAX_THREADS; t++) {
        uint64_t u = 0;
        while (u < t && !pthread_equal(j->tid[u], j->tid[t])) u++;
        distinct += u == t;
    }
    if (distinct > j->ran) j->ran = distinct;
}
#define COUNT_THREADS(j, used) count_threads(j, used)
#define REPORT_THREADS(j) (clops_test_unpool_threads = (j)->ran)
#else
#define COUNT_THREADS(j, used) ((void)0)
#define REPORT_THREADS(j) ((void)0)
#endif

uint64_t clops_elem_offset(const uint64_t sizes[4], const uint64_t strides[4], uint64_t e)
{
    uint64_t off = 0;
    for (int d = 3; d >= 0; d--) {
        off += e % sizes[d] * strides[d];
        e /= sizes[d];
    }
    return off;
}

HOT uint64_t load_index(const uint8_t *p, size_t is)
{
    if (is == 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    uint64_t v; /* INT64 shares the bits: a negative one is past any limit */
    memcpy(&v, p, 8);
    return v;
}

/* The plane segment of [k, e) that starts at k: its end and the position of its
 * plane's first output element. */
static uint64_t segment(const unpool_job *j, uint64_t k, uint64_t e, uint64_t *base)
{
    if (!j->per_plane) {
        *base = 0;
        return e;
    }
    const uint64_t plane = k / j->plane_in, end = (plane + 1) * j->plane_in;
    *base = plane * j->plane_out;
    return end < e ? end : e;
}

/* ---- check ---------------------------------------------------------------------------------- */

/* The smallest and largest of n packed indices: two plain reductions, which
 * vectorise (most chunks have no bad index, and then these are the span). */
CLOPS_ROW_CLONES static void minmax_4(const uint8_t *idx, uint64_t n, uint64_t *mn, uint64_t *mx)
{
    uint32_t a = UINT32_MAX, b = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, idx + i * 4, 4);
        a = u < a ? u : a;
        b = u > b ? u : b;
    }
    *mn = a, *mx = b;
}

CLOPS_ROW_CLONES static void minmax_8(const uint8_t *idx, uint64_t n, uint64_t *mn, uint64_t *mx)
{
    uint64_t a = UINT64_MAX, b = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t u;
        memcpy(&u, idx + i * 8, 8);
        a = u < a ? u : a;
        b = u > b ? u : b;
    }
    *mn = a, *mx = b;
}

typedef struct check_acc {
    uint64_t bad, first; /* this thread's bad indices and the first of them */
} check_acc;

/* Index of logical element i (any strides). */
static uint64_t index_at(const unpool_job *j, uint64_t i)
{
    const clops_tensor *x = &j->p->input, *ti = &j->p->indices;
    return load_index(j->idx + (j->in_packed ? i : clops_elem_offset(x->sizes, ti->strides, i)) * j->is, j->is);
}

static void check_chunk(unpool_job *j, uint64_t c, check_acc *a)
{
    const uint64_t b = c * CHUNK, e = b + CHUNK < j->p->input.count ? b + CHUNK : j->p->input.count;
    span sp = {NONE, 0, true};
    for (uint64_t k = b; k < e;) {
        uint64_t base, mn = NONE, mx = 0;
        const uint64_t end = segment(j, k, e, &base);
        if (j->in_packed && j->is == 4) minmax_4(j->idx + k * 4, end - k, &mn, &mx);
        else if (j->in_packed) minmax_8(j->idx + k * 8, end - k, &mn, &mx);
        if (!j->in_packed || mx >= j->limit) { /* strided, or a bad index: element by element */
            mn = NONE, mx = 0;
            for (uint64_t i = k; i < end; i++) {
                const uint64_t u = index_at(j, i);
                if (u < j->limit) {
                    mn = u < mn ? u : mn;
                    mx = u > mx ? u : mx;
                } else {
                    if (a->first == NONE) a->first = i;
                    a->bad++;
                    sp.clean = false;
                }
            }
        }
        if (mn <= mx) {
            sp.lo = base + mn < sp.lo ? base + mn : sp.lo;
            sp.hi = base + mx > sp.hi ? base + mx : sp.hi;
        }
        k = end;
    }
    j->spans[c] = sp;
}

static void check_range(void *arg, unsigned t, uint64_t begin, uint64_t end)
{
    unpool_job *j = arg;
    check_acc a = {0, NONE};
    NOTE_THREAD(j, t);
    for (uint64_t c = begin; c < end; c++) check_chunk(j, c, &a);
    j->bad[t] = a.bad;
    j->first_bad[t] = a.first;
}

/* ---- scatter -------------------------------------------------------------------------------- */

/* Packed tensors, a run whose positions all lie in the piece: element i goes
 * to piece[u + off]. */
HOT void place_run(uint8_t *piece, const uint8_t *in, const uint8_t *idx, uint64_t n, size_t is, size_t es,
                   uint64_t off)
{
    for (uint64_t i = 0; i < n; i++) memcpy(piece + (load_index(idx + i * is, is) + off) * es, in + i * es, es);
}

#define PLACE_WIDTHS(IS)                                                                           \
    switch (es) {                                                                                  \
    case 1: place_run(piece, in, idx, n, IS, 1, off); return;                                      \
    case 2: place_run(piece, in, idx, n, IS, 2, off); return;                                      \
    case 4: place_run(piece, in, idx, n, IS, 4, off); return;                                      \
    case 8: place_run(piece, in, idx, n, IS, 8, off); return;                                      \
    default: place_run(piece, in, idx, n, IS, 16, off); return;                                    \
    }

CLOPS_ROW_CLONES static void place_packed(uint8_t *piece, const uint8_t *in, const uint8_t *idx, uint64_t n, size_t is,
                                          size_t es, uint64_t off)
{
    if (is == 4) PLACE_WIDTHS(4)
    PLACE_WIDTHS(8)
}

/* Packed tensors: element i of the run goes to piece[u + off] when that is
 * inside the piece's len elements (and the index is valid). Scattered indices
 * land outside half the time or more at random, so the choice is a select. */
HOT void scatter_run(uint8_t *piece, const uint8_t *in, const uint8_t *idx, uint64_t n, size_t is, size_t es,
                     uint64_t limit, uint64_t off, uint64_t len)
{
    uint8_t sink[16]; /* where elements outside the piece go: no branch to mispredict */
    const uintptr_t at = (uintptr_t)piece, away = (uintptr_t)sink;
    for (uint64_t i = 0; i < n; i++) {
        const uint64_t u = load_index(idx + i * is, is), r = u + off;
        const uintptr_t keep = (uintptr_t)0 - (uintptr_t)((u < limit) & (r < len)); /* all ones or zero */
        memcpy((uint8_t *)(away ^ ((away ^ (at + (uintptr_t)(r * es))) & keep)), in + i * es, es);
    }
}

#define SCATTER_WIDTHS(IS)                                                                         \
    switch (es) {                                                                                  \
    case 1: scatter_run(piece, in, idx, n, IS, 1, limit, off, len); return;                       \
    case 2: scatter_run(piece, in, idx, n, IS, 2, limit, off, len); return;                       \
    case 4: scatter_run(piece, in, idx, n, IS, 4, limit, off, len); return;                       \
    case 8: scatter_run(piece, in, idx, n, IS, 8, limit, off, len); return;                       \
    default: scatter_run(piece, in, idx, n, IS, 16, limit, off, len); return;                     \
    }

CLOPS_ROW_CLONES static void scatter_packed(uint8_t *piece, const uint8_t *in, const uint8_t *idx, uint64_t n,
                                            size_t is, size_t es, uint64_t limit, uint64_t off, uint64_t len)
{
    if (is == 4) SCATTER_WIDTHS(4)
    SCATTER_WIDTHS(8)
}

/* Writes the elements of chunk c whose positions lie in [s, s + len). */
static void scatter_chunk(const unpool_job *j, uint64_t c, uint64_t s, uint64_t len)
{
    const clops_tensor *x = &j->p->input, *ti = &j->p->indices, *y = &j->p->output;
    const uint64_t b = c * CHUNK, e = b + CHUNK < x->count ? b + CHUNK : x->count;
    const span *sp = &j->spans[c];
    const bool inside = sp->clean && sp->lo >= s && sp->hi - s < len; /* every element lands in the piece */
    for (uint64_t k = b; k < e;) {
        uint64_t base;
        const uint64_t end = segment(j, k, e, &base);
        if (j->in_packed && j->out_packed && inside) {
            place_packed(j->out + s * j->es, j->in + k * j->es, j->idx + k * j->is, end - k, j->is, j->es, base - s);
        } else if (j->in_packed && j->out_packed) {
            scatter_packed(j->out + s * j->es, j->in + k * j->es, j->idx + k * j->is, end - k, j->is, j->es, j->limit,
                           base - s, len);
        } else {
            for (uint64_t i = k; i < end; i++) {
                const uint64_t u = load_index(j->idx + clops_elem_offset(x->sizes, ti->strides, i) * j->is, j->is);
                const uint64_t r = u + base - s;
                if (u < j->limit && r < len)
                    memcpy(j->out + clops_elem_offset(y->sizes, y->strides, s + r) * j->es,
                           j->in + clops_elem_offset(x->sizes, x->strides, i) * j->es, j->es);
            }
        }
        k = end;
    }
}

static void zero_fill(const unpool_job *j, uint64_t s, uint64_t len)
{
    const clops_tensor *y = &j->p->output;
    if (j->out_packed) {
        memset(j->out + s * j->es, 0, (size_t)(len * j->es));
        return;
    }
    /* Row by row (gaps between elements stay as they are): one division per row. */
    const uint64_t *n = y->sizes, *st = y->strides;
    uint64_t w = s % n[3], h = s / n[3] % n[2], c = s / n[3] / n[2] % n[1], b = s / n[3] / n[2] / n[1];
    for (uint64_t left = len; left;) {
        const uint64_t run = n[3] - w < left ? n[3] - w : left;
        uint8_t *q = j->out + (b * st[0] + c * st[1] + h * st[2] + w * st[3]) * j->es;
        for (uint64_t i = 0; i < run; i++) memset(q + i * st[3] * j->es, 0, j->es);
        left -= run, w = 0;
        if (++h == n[2]) {
            h = 0;
            if (++c == n[1]) c = 0, b++;
        }
    }
}

/* Output pieces [s, s + len): zeros, then every chunk that may reach in, in order. */
static void scatter_piece(const unpool_job *j, uint64_t s, uint64_t len)
{
    zero_fill(j, s, len);
    /* Chunks before c0 end below s (prefix max), from c1 on start at or past s + len (suffix min). */
    uint64_t a = 0, b = j->nchunks;
    while (a < b) {
        const uint64_t m = a + (b - a) / 2;
        if (j->pmax[m] >= s) b = m;
        else a = m + 1;
    }
    const uint64_t c0 = a;
    b = j->nchunks;
    while (a < b) {
        const uint64_t m = a + (b - a) / 2;
        if (j->smin[m] >= s + len) b = m;
        else a = m + 1;
    }
    for (uint64_t c = c0; c < a; c++)
        if (j->spans[c].lo <= j->spans[c].hi && j->spans[c].lo < s + len && j->spans[c].hi >= s)
            scatter_chunk(j, c, s, len);
}

static void scatter_range(void *arg, unsigned t, uint64_t begin, uint64_t end)
{
    unpool_job *j = arg;
    const uint64_t count = j->p->output.count;
    (void)t;
    NOTE_THREAD(j, t);
    for (uint64_t band = begin; band < end; band++) {
        const uint64_t lo = count / j->threads * band + count % j->threads * band / j->threads;
        const uint64_t hi = count / j->threads * (band + 1) + count % j->threads * (band + 1) / j->threads;
        const uint64_t piece = j->piece < hi - lo ? j->piece : hi - lo; /* NONE: the whole band */
        for (uint64_t s = lo; s < hi; s += piece) scatter_piece(j, s, hi - s < piece ? hi - s : piece);
    }
}

/* The smallest piece whose extra reads (a chunk read once per piece it reaches
 * into) stay within twice the input; the whole band when none does. */
static uint64_t choose_piece(const unpool_job *j)
{
    const uint64_t count = j->p->input.count;
    for (size_t i = 0; i < sizeof piece_bytes / sizeof piece_bytes[0]; i++) {
        const uint64_t piece = piece_bytes[i] / j->es;
        uint64_t reads = 0;
        for (uint64_t c = 0; c < j->nchunks && reads <= 2 * count; c++) {
            const span *sp = &j->spans[c];
            if (sp->lo <= sp->hi) reads += CHUNK * (sp->hi / piece - sp->lo / piece + 1);
        }
        if (reads <= 2 * count + CHUNK) return piece;
    }
    return NONE;
}

/* ---- buckets (scattered indices) ------------------------------------------------------------ */

/* Scattered indices reach into every band, so the band scan above would have
 * every thread read every input. Instead, each thread takes its own input range
 * (whole chunks, in order) and appends (offset in tile, value) to one bucket per
 * output tile of TILE_BYTES, checking the indices as it goes (this is the check
 * pass: nothing is written to the output before it ends); then each tile's owner
 * zero-fills the tile and replays its buckets in thread order (input order: the
 * last writer wins) while the tile stays in cache. A bucket is a chain of blocks
 * of BLOCK entries from its thread's share of one allocation, which holds every
 * entry with at most one part-filled block per bucket. */
#define TILE_BYTES (512u << 10)
#define BLOCK 256u         /* entries per bucket block */
#define HUGE_BYTES ((size_t)2 << 20)
/* Larger buckets are not asked for (the band path runs: same bits): a scattered
 * input of billions of elements must not commit tens of GiB at once. */
#define BUCKETS_MAX_BYTES ((size_t)1 << 30)
#define SAMPLE_CHUNKS 8u   /* chunks looked at to choose the buckets */

typedef struct bucket {
    uint8_t *cur, *end; /* where the next entry goes, the end of the current block */
    size_t head, last;  /* the chain's first and current block */
} bucket;

typedef struct buckets {
    unsigned shift;      /* tile = position >> shift */
    uint64_t tiles;
    size_t entry;        /* 4 + element bytes */
    uint8_t *blocks;     /* BLOCK entries each */
    size_t *next;        /* next[b]: the block after b in its chain */
    bucket *b;           /* per writer, per tile */
    unsigned writers;    /* ranges of the input (clops_host_parallel's, in order) */
    size_t first_block[CLOPS_HOST_MAX_THREADS]; /* per writer: its first block */
} buckets;

/* Appends (off, element) to its bucket; a full block links the thread's next one. */
HOT void append(buckets *bk, bucket *bu, size_t *free_block, uint32_t off, const uint8_t *v, size_t es)
{
    uint8_t *w = bu->cur;
    memcpy(w, &off, 4);
    memcpy(w + 4, v, es);
    w += 4 + es;
    if (w == bu->end) {
        const size_t nb = (*free_block)++;
        bk->next[bu->last] = nb;
        bu->last = nb;
        w = bk->blocks + nb * BLOCK * bk->entry;
        bu->end = w + BLOCK * bk->entry;
    }
    bu->cur = w;
}

/* Packed input and indices: elements [0, n) of a plane segment whose positions start at base. */
HOT void bucket_run(buckets *bk, bucket *bu, size_t *free_block, const uint8_t *in, const uint8_t *idx, uint64_t n,
                    size_t is, size_t es, uint64_t base, uint64_t limit, uint64_t k0, check_acc *a)
{
    const uint64_t mask = ((uint64_t)1 << bk->shift) - 1;
    for (uint64_t i = 0; i < n; i++) {
        const uint64_t u = load_index(idx + i * is, is);
        if (u >= limit) {
            if (a->first == NONE) a->first = k0 + i;
            a->bad++;
            continue;
        }
        const uint64_t pos = base + u;
        append(bk, &bu[pos >> bk->shift], free_block, (uint32_t)(pos & mask), in + i * es, es);
    }
}

#define BUCKET_WIDTHS(IS)                                                                           \
    switch (es) {                                                                                   \
    case 1: bucket_run(bk, bu, fb, in, idx, n, IS, 1, base, limit, k0, a); return;                  \
    case 2: bucket_run(bk, bu, fb, in, idx, n, IS, 2, base, limit, k0, a); return;                  \
    case 4: bucket_run(bk, bu, fb, in, idx, n, IS, 4, base, limit, k0, a); return;                  \
    case 8: bucket_run(bk, bu, fb, in, idx, n, IS, 8, base, limit, k0, a); return;                  \
    default: bucket_run(bk, bu, fb, in, idx, n, IS, 16, base, limit, k0, a); return;                \
    }

static void bucket_packed(buckets *bk, bucket *bu, size_t *fb, const uint8_t *in, const uint8_t *idx, uint64_t n,
                          size_t is, size_t es, uint64_t base, uint64_t limit, uint64_t k0, check_acc *a)
{
    if (is == 4) BUCKET_WIDTHS(4)
    BUCKET_WIDTHS(8)
}

static void bucket_range(void *arg, unsigned t, uint64_t begin, uint64_t end)
{
    unpool_job *j = arg;
    buckets *bk = j->bk;
    const clops_tensor *x = &j->p->input;
    bucket *bu = bk->b + (size_t)t * bk->tiles;
    size_t free_block = bk->first_block[t];
    check_acc a = {0, NONE};
    NOTE_THREAD(j, t);
    for (uint64_t tl = 0; tl < bk->tiles; tl++) { /* one block per bucket to start with */
        bu[tl].head = bu[tl].last = free_block;
        bu[tl].cur = bk->blocks + free_block++ * BLOCK * bk->entry;
        bu[tl].end = bu[tl].cur + BLOCK * bk->entry;
    }
    const uint64_t e = end * CHUNK < x->count ? end * CHUNK : x->count;
    const uint64_t mask = ((uint64_t)1 << bk->shift) - 1;
    for (uint64_t k = begin * CHUNK; k < e;) {
        uint64_t base;
        const uint64_t stop = segment(j, k, e, &base);
        if (j->in_packed) {
            bucket_packed(bk, bu, &free_block, j->in + k * j->es, j->idx + k * j->is, stop - k, j->is, j->es, base,
                          j->limit, k, &a);
        } else {
            for (uint64_t i = k; i < stop; i++) {
                const uint64_t u = index_at(j, i), pos = base + u;
                if (u >= j->limit) {
                    if (a.first == NONE) a.first = i;
                    a.bad++;
                    continue;
                }
                append(bk, &bu[pos >> bk->shift], &free_block, (uint32_t)(pos & mask),
                       j->in + clops_elem_offset(x->sizes, x->strides, i) * j->es, j->es);
            }
        }
        k = stop;
    }
    j->bad[t] = a.bad;
    j->first_bad[t] = a.first;
}

/* Entries [0, n) of one block into a packed tile. */
HOT void replay_run(uint8_t *tile, const uint8_t *blk, size_t n, size_t es)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t off;
        memcpy(&off, blk + i * (4 + es), 4);
        memcpy(tile + (size_t)off * es, blk + i * (4 + es) + 4, es);
    }
}

/* Entries [0, n) of one block into the tile at output position s. */
static void replay_block(const unpool_job *j, const uint8_t *blk, size_t n, uint64_t s)
{
    const size_t es = j->es;
    if (j->out_packed) {
        uint8_t *tile = j->out + s * es;
        switch (es) {
        case 1: replay_run(tile, blk, n, 1); return;
        case 2: replay_run(tile, blk, n, 2); return;
        case 4: replay_run(tile, blk, n, 4); return;
        case 8: replay_run(tile, blk, n, 8); return;
        default: replay_run(tile, blk, n, 16); return;
        }
    }
    const clops_tensor *y = &j->p->output;
    for (size_t i = 0; i < n; i++) {
        uint32_t off;
        memcpy(&off, blk + i * (4 + es), 4);
        memcpy(j->out + clops_elem_offset(y->sizes, y->strides, s + off) * es, blk + i * (4 + es) + 4, es);
    }
}

static void replay_range(void *arg, unsigned t, uint64_t begin, uint64_t end)
{
    unpool_job *j = arg;
    const buckets *bk = j->bk;
    const uint64_t count = j->p->output.count;
    (void)t;
    NOTE_THREAD(j, t);
    for (uint64_t tl = begin; tl < end; tl++) {
        const uint64_t s = tl << bk->shift, len = count - s < ((uint64_t)1 << bk->shift) ? count - s
                                                                                           : (uint64_t)1 << bk->shift;
        zero_fill(j, s, len);
        for (unsigned w = 0; w < bk->writers; w++) { /* the writers' ranges in input order */
            const bucket *bu = &bk->b[(size_t)w * bk->tiles + tl];
            const size_t full = BLOCK * bk->entry;
            for (size_t blk = bu->head; blk != bu->last; blk = bk->next[blk])
                replay_block(j, bk->blocks + blk * full, BLOCK, s);
            const uint8_t *lb = bk->blocks + bu->last * full;
            replay_block(j, lb, (size_t)(bu->cur - lb) / bk->entry, s);
        }
    }
}

/* Whether a few chunks spread over the input reach as far as scattered
 * indices do: into more than one thread's band on average (each would be read
 * by every thread whose band it reaches; pooling-shaped chunks reach one). */
static bool looks_scattered(unpool_job *j)
{
    const uint64_t band = j->p->output.count / j->threads + 1;
    uint64_t looked = 0, bands = 0;
    for (uint64_t i = 0; i < SAMPLE_CHUNKS && i < j->nchunks; i++) {
        const uint64_t c = j->nchunks * i / SAMPLE_CHUNKS;
        check_acc a = {0, NONE};
        check_chunk(j, c, &a);
        const span *sp = &j->spans[c];
        if (sp->lo > sp->hi) continue;
        looked++, bands += sp->hi / band - sp->lo / band + 1;
    }
    return looked && 2 * bands > 3 * looked;
}

/* Memory for the buckets, in huge pages where the system gives them on request
 * (Linux's transparent huge pages in "madvise" mode): the buckets are written
 * once per execution, and 4 KiB page faults on fresh memory cost about as much
 * as filling them (measured: notes/max_unpooling.md, hostscat). The huge pages
 * come from a mapping of our own (*mapped: its length, for scratch_free), never
 * from malloc's heap, whose pages the hint would otherwise mark for the caller's
 * later allocations too. */
static void *scratch_alloc(size_t bytes, size_t *mapped)
{
    *mapped = 0;
#if defined(MADV_HUGEPAGE) && defined(MAP_ANONYMOUS)
    if (bytes >= 2 * HUGE_BYTES && bytes <= SIZE_MAX - 2 * HUGE_BYTES) {
        const size_t len = (bytes + HUGE_BYTES - 1) / HUGE_BYTES * HUGE_BYTES;
        uint8_t *m = mmap(NULL, len + HUGE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return NULL;
        /* Keep the 2 MiB-aligned len bytes inside, unmap the rest. */
        const size_t head = (HUGE_BYTES - (uintptr_t)m % HUGE_BYTES) % HUGE_BYTES;
        if (head) (void)munmap(m, head);
        if (HUGE_BYTES - head) (void)munmap(m + head + len, HUGE_BYTES - head);
        (void)madvise(m + head, len, MADV_HUGEPAGE); /* a hint: no matter if refused */
        *mapped = len;
        return m + head;
    }
#endif
    return malloc(bytes);
}

static void scratch_free(void *p, size_t mapped)
{
    if (mapped) (void)munmap(p, mapped);
    else free(p);
}

static size_t mul_sat(size_t a, size_t b)
{
    return b && a > SIZE_MAX / b ? SIZE_MAX : a * b;
}

static size_t add_size(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

/* Lays out the buckets for j's threads in one allocation (*mem, freed by the
 * caller with scratch_free); false when the tiles' part-filled blocks could
 * take more than half as many entries as the input has (so the whole is at most
 * about 1.5x the input's and indices' bytes), when it would pass
 * BUCKETS_MAX_BYTES, or when the memory is not there (then the band scan runs:
 * same bits). */
static bool plan_buckets(unpool_job *j, buckets *bk, void **mem, size_t *mapped)
{
    const uint64_t count = j->p->output.count, n = j->p->input.count;
    unsigned shift = 0;
    while (((uint64_t)j->es << (shift + 1)) <= TILE_BYTES) shift++;
    const uint64_t tiles = (count >> shift) + ((count & (((uint64_t)1 << shift) - 1)) != 0);
    if (mul_sat(mul_sat(2 * j->threads, tiles), BLOCK) > n) return false;
    size_t nblocks = 0, first[CLOPS_HOST_MAX_THREADS];
    const unsigned ranges = j->nchunks < j->threads ? (unsigned)j->nchunks : j->threads;
    for (unsigned t = 0; t < ranges; t++) { /* clops_host_parallel's ranges of chunks */
        const uint64_t b = j->nchunks * t / ranges * CHUNK, e = j->nchunks * (t + 1) / ranges * CHUNK;
        first[t] = nblocks;
        nblocks += (size_t)tiles + (size_t)(((e < n ? e : n) - b) / BLOCK + 1);
    }
    const size_t entry = 4 + j->es;
    const size_t bytes = add_size(add_size(mul_sat(mul_sat(ranges, tiles), sizeof(bucket)),
                                           mul_sat(nblocks, sizeof(size_t))),
                                  mul_sat(mul_sat(nblocks, BLOCK), entry));
    uint8_t *m = bytes > BUCKETS_MAX_BYTES || FAIL_ALLOC ? NULL : scratch_alloc(bytes, mapped);
    if (!m) return false;
    bk->shift = shift, bk->tiles = tiles, bk->entry = entry, bk->writers = ranges;
    bk->b = (bucket *)m; /* pointers and sizes first: every part stays aligned */
    bk->next = (size_t *)(bk->b + (size_t)ranges * tiles);
    bk->blocks = (uint8_t *)(bk->next + nblocks);
    memcpy(bk->first_block, first, sizeof first);
    *mem = m;
    return true;
}

/* ---- the operator --------------------------------------------------------------------------- */

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

/* The first bad index, as the caller wrote it, with its input coordinates. */
static clops_status report_bad(const unpool_job *j, uint64_t e)
{
    const clops_op_params *p = j->p;
    const uint64_t v = load_index(j->idx + clops_elem_offset(p->input.sizes, p->indices.strides, e) * j->is, j->is);
    return clops_unpool_bad_index(p, e, v, CLOPS_UNPOOL_NOTHING_WRITTEN);
}

/* strict: fail on the first bad index before writing anything; else skip them. */
static clops_status unpool(const clops_op_params *p, const clops_host_buffers *b, bool strict, uint64_t *bad_out)
{
    const clops_tensor *x = &p->input, *y = &p->output;
    unpool_job j;
    memset(&j, 0, sizeof j);
    j.p = p;
    j.in = b->input, j.idx = b->indices, j.out = b->output;
    j.es = x->elem_size, j.is = p->indices.elem_size;
    j.per_plane = p->indices_layout == CLOPS_INDICES_PER_PLANE;
    j.in_packed = x->packed && p->indices.packed, j.out_packed = y->packed;
    j.plane_in = x->sizes[2] * x->sizes[3]; /* each below 2^32: no overflow */
    j.plane_out = y->sizes[2] * y->sizes[3];
    j.limit = j.per_plane ? j.plane_out : y->count;
    j.nchunks = x->count / CHUNK + (x->count % CHUNK != 0);
    j.threads = clops_host_threads(p, add_sat(add_sat(x->span_bytes, p->indices.span_bytes), y->span_bytes));

    span stack_spans[STACK_CHUNKS];
    uint64_t stack_bounds[2 * STACK_CHUNKS];
    void *heap = NULL;
    if (j.nchunks <= STACK_CHUNKS) {
        j.spans = stack_spans, j.pmax = stack_bounds, j.smin = stack_bounds + STACK_CHUNKS;
    } else {
        heap = malloc((size_t)j.nchunks * (sizeof(span) + 2 * sizeof(uint64_t)));
        if (!heap)
            return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "%llu bytes for MaxUnpooling's plan on the host",
                              (unsigned long long)j.nchunks * (sizeof(span) + 2 * sizeof(uint64_t)));
        j.spans = heap, j.pmax = (uint64_t *)(j.spans + j.nchunks), j.smin = j.pmax + j.nchunks;
    }
    buckets bk;
    void *bucket_mem = NULL;
    size_t bucket_mapped = 0;
    const unsigned forced = FORCED;
    if (j.nchunks && y->count && forced != CLOPS_UNPOOL_BANDS &&
        (forced != CLOPS_UNPOOL_AUTO || (j.threads > 1 && looks_scattered(&j))) && plan_buckets(&j, &bk, &bucket_mem, &bucket_mapped)) {
        j.bk = &bk; /* the check pass fills the buckets */
        clops_host_parallel(bucket_range, &j, j.nchunks, bk.writers);
        COUNT_THREADS(&j, bk.writers);
    } else if (j.nchunks) {
        clops_host_parallel(check_range, &j, j.nchunks, j.threads);
        COUNT_THREADS(&j, j.nchunks < j.threads ? j.nchunks : j.threads);
    }
    NOTE_PATH(j.bk ? CLOPS_UNPOOL_BUCKETS : CLOPS_UNPOOL_BANDS);
    uint64_t bad = 0, first = NONE;
    for (unsigned t = 0; t < CLOPS_HOST_MAX_THREADS; t++) { /* threads took the chunks in order */
        bad += j.bad[t];
        if (first == NONE && j.bad[t]) first = j.first_bad[t];
    }
    if (strict && bad) {
        const clops_status st = report_bad(&j, first);
        REPORT_THREADS(&j);
        scratch_free(bucket_mem, bucket_mapped);
        free(heap);
        return st;
    }
    if (j.bk) {
        clops_host_parallel(replay_range, &j, bk.tiles, j.threads);
        COUNT_THREADS(&j, bk.tiles < j.threads ? bk.tiles : j.threads);
    } else if (y->count) {
        uint64_t m = 0;
        for (uint64_t c = 0; c < j.nchunks; c++) {
            if (j.spans[c].lo <= j.spans[c].hi && j.spans[c].hi > m) m = j.spans[c].hi;
            j.pmax[c] = m;
        }
        m = NONE;
        for (uint64_t c = j.nchunks; c-- > 0;) {
            if (j.spans[c].lo < m) m = j.spans[c].lo;
            j.smin[c] = m;
        }
        j.piece = choose_piece(&j);
        clops_host_parallel(scatter_range, &j, j.threads, j.threads);
        COUNT_THREADS(&j, j.threads);
    }
    scratch_free(bucket_mem, bucket_mapped);
    REPORT_THREADS(&j);
    free(heap);
    *bad_out = bad;
    return CLOPS_SUCCESS;
}

clops_status clops_host_max_unpooling(const clops_op_params *p, const clops_host_buffers *b)
{
    uint64_t bad;
    return unpool(p, b, true, &bad);
}

clops_status clops_host_unpool_skip(const clops_op_params *p, const clops_host_buffers *b, uint64_t *bad)
{
    *bad = 0;
    return unpool(p, b, false, bad);
}
