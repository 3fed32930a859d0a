/* host_kernels.c - the operators in plain C: the host backend and the fallback.
 *
 * Elements are moved as fixed-width words through memcpy (which compiles to a
 * single load and store), so every type is bit-exact and no alignment is
 * assumed of the caller's pointers. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "host/host.h"


/* ---- row kernels -------------------------------------------------------------------------
 * DepthToSpace interleaves b input rows into one output row; SpaceToDepth
 * deinterleaves one input row into b output rows:
 *   weave:   dst[(w*b + j)*ds] = src[j][w*ss]
 *   unweave: dst[j][w*ds]      = src[(w*b + j)*ss]       for w < n, j < b
 * with steps ds, ss in elements. One instance per element width, with the
 * common block sizes and unit steps made constants so the compiler unrolls and
 * vectorises them. Both walk memory sequentially on every stream. */
#define MAX_FAST_BLOCK 64

/* The row pointers are copied into a local array first: stores through a byte
 * pointer may alias anything the compiler cannot see is private, and a reload of
 * each pointer per element stops vectorisation. */
#define CLOPS_WEAVE_BODY(T, B, DS, SS)                                                             \
    {                                                                                              \
        const uint8_t *rows[MAX_FAST_BLOCK];                                                       \
        for (uint64_t j = 0; j < (B); j++) rows[j] = src[j];                                       \
        for (uint64_t w = 0; w < n; w++)                                                           \
            for (uint64_t j = 0; j < (B); j++) {                                                   \
                T v;                                                                               \
                memcpy(&v, rows[j] + (size_t)(w * (SS)) * sizeof(T), sizeof(T));                  \
                memcpy(dst + (size_t)((w * (B) + j) * (DS)) * sizeof(T), &v, sizeof(T));           \
            }                                                                                      \
    }
#define CLOPS_UNWEAVE_BODY(T, B, DS, SS)                                                           \
    {                                                                                              \
        uint8_t *rows[MAX_FAST_BLOCK];                                                             \
        for (uint64_t j = 0; j < (B); j++) rows[j] = dst[j];                                       \
        for (uint64_t w = 0; w < n; w++)                                                           \
            for (uint64_t j = 0; j < (B); j++) {                                                   \
                T v;                                                                               \
                memcpy(&v, src + (size_t)((w * (B) + j) * (SS)) * sizeof(T), sizeof(T));           \
                memcpy(rows[j] + (size_t)(w * (DS)) * sizeof(T), &v, sizeof(T));                   \
            }                                                                                      \
    }
/* Dispatches a body on the block size and unit steps. */
#define CLOPS_WEAVE_CASES(BODY, T)                                                                 \
    if (ds == 1 && ss == 1) {                                                                      \
        switch (b) {                                                                               \
        case 1: BODY(T, 1, 1, 1) return;                                                           \
        case 2: BODY(T, 2, 1, 1) return;                                                           \
        case 3: BODY(T, 3, 1, 1) return;                                                           \
        case 4: BODY(T, 4, 1, 1) return;                                                           \
        case 8: BODY(T, 8, 1, 1) return;                                                           \
        default: BODY(T, b, 1, 1) return;                                                          \
        }                                                                                          \
    }                                                                                              \
    BODY(T, b, ds, ss)

/* On x86-64 with GCC, each row kernel is also compiled for AVX2 and picked at load
 * time (an ifunc, CLOPS_ROW_CLONES in host.h): byte and halfword permutes for
 * blocks 3 and 8 need SSSE3/AVX2 shuffles, which the x86-64 baseline (SSE2) lacks
 * (measured: 1-byte blocks 3 and 8 ran at 0.2-0.6 of a two-thread memcpy without them). */

#define CLOPS_DEFINE_WEAVE(T, SUFFIX)                                                              \
    CLOPS_ROW_CLONES static void weave_##SUFFIX(uint8_t *dst, uint64_t ds, const uint8_t *const *src, uint64_t ss,  \
                               uint64_t b, uint64_t n)                                             \
    {                                                                                              \
        CLOPS_WEAVE_CASES(CLOPS_WEAVE_BODY, T)                                                     \
    }                                                                                              \
    CLOPS_ROW_CLONES static void unweave_##SUFFIX(uint8_t *const *dst, uint64_t ds, const uint8_t *src, uint64_t ss, \
                                 uint64_t b, uint64_t n)                                           \
    {                                                                                              \
        CLOPS_WEAVE_CASES(CLOPS_UNWEAVE_BODY, T)                                                   \
    }

typedef struct { uint64_t w[2]; } u128;
CLOPS_DEFINE_WEAVE(uint8_t, 1)
CLOPS_DEFINE_WEAVE(uint16_t, 2)
CLOPS_DEFINE_WEAVE(uint32_t, 4)
CLOPS_DEFINE_WEAVE(uint64_t, 8)
CLOPS_DEFINE_WEAVE(u128, 16)

typedef void (*weave_fn)(uint8_t *, uint64_t, const uint8_t *const *, uint64_t, uint64_t, uint64_t);
typedef void (*unweave_fn)(uint8_t *const *, uint64_t, const uint8_t *, uint64_t, uint64_t, uint64_t);

static weave_fn weave_for(size_t elem_size)
{
    switch (elem_size) {
    case 1: return weave_1;
    case 2: return weave_2;
    case 4: return weave_4;
    case 8: return weave_8;
    default: return weave_16;
    }
}

static unweave_fn unweave_for(size_t elem_size)
{
    switch (elem_size) {
    case 1: return unweave_1;
    case 2: return unweave_2;
    case 4: return unweave_4;
    case 8: return unweave_8;
    default: return unweave_16;
    }
}

static size_t byte_offset(const clops_tensor *t, uint64_t n, uint64_t c, uint64_t h, uint64_t w)
{
    return (size_t)((n * t->strides[0] + c * t->strides[1] + h * t->strides[2] + w * t->strides[3]) * t->elem_size);
}

/* ---- threads ------------------------------------------------------------------------------ */

#define MAX_THREADS CLOPS_HOST_MAX_THREADS
#define PARALLEL_MIN_BYTES (4u << 20)

unsigned clops_host_threads(const clops_op_params *p, uint64_t bytes)
{
    const long cpus = bytes < PARALLEL_MIN_BYTES ? 1
                      : p->host_threads         ? (long)p->host_threads
                                                : sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus <= 1) return 1;
    return cpus > (long)MAX_THREADS ? MAX_THREADS : (unsigned)cpus;
}

typedef struct range_job {
    clops_range_fn fn;
    void *arg;
    unsigned thread;
    uint64_t begin, end;
} range_job;

static void *range_thread(void *arg)
{
    const range_job *j = arg;
    j->fn(j->arg, j->thread, j->begin, j->end);
    return NULL;
}

/* A thread that cannot be started leaves its range to the calling thread. */
void clops_host_parallel(clops_range_fn fn, void *arg, uint64_t units, unsigned threads)
{
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    if (threads > units) threads = units ? (unsigned)units : 1;
    if (threads == 0) threads = 1;
    range_job jobs[MAX_THREADS];
    pthread_t tids[MAX_THREADS];
    bool started[MAX_THREADS] = {false};
    for (unsigned t = 0; t < threads; t++) {
        jobs[t] = (range_job){fn, arg, t, units * t / threads, units * (t + 1) / threads};
        if (t > 0) started[t] = pthread_create(&tids[t], NULL, range_thread, &jobs[t]) == 0;
    }
    range_thread(&jobs[0]);
    for (unsigned t = 1; t < threads; t++) {
        if (started[t]) pthread_join(tids[t], NULL);
        else range_thread(&jobs[t]);
    }
}

/* ---- parallel rows -------------------------------------------------------------------------- */

typedef void (*rows_fn)(const clops_op_params *p, const uint8_t *in, uint8_t *out, uint64_t begin, uint64_t end);

typedef struct rows_job {
    rows_fn fn;
    const clops_op_params *p;
    const uint8_t *in;
    uint8_t *out;
} rows_job;

static void rows_range(void *arg, unsigned thread, uint64_t begin, uint64_t end)
{
    const rows_job *j = arg;
    (void)thread;
    j->fn(j->p, j->in, j->out, begin, end);
}

/* Runs fn over [0, units) split across threads when the tensor is large enough
 * to pay for them (one memory stream per core is what reaches copy speed). */
static void parallel_rows(rows_fn fn, const clops_op_params *p, const uint8_t *in, uint8_t *out, uint64_t units)
{
    rows_job job = {fn, p, in, out};
    clops_host_parallel(rows_range, &job, units, clops_host_threads(p, p->output.span_bytes));
}

/* ---- DepthToSpace and SpaceToDepth -------------------------------------------------------------- */

/* DepthToSpace over output rows r = (n, co, ho) in [begin, end): i = ho % b is
 * fixed, and the row interleaves the b input rows of channels ci(i, j). Blocks
 * wider than MAX_FAST_BLOCK go one column phase at a time. */
static void depth_to_space_rows(const clops_op_params *p, const uint8_t *in, uint8_t *out, uint64_t begin,
                                uint64_t end)
{
    const clops_tensor *x = &p->input, *y = &p->output;
    const uint64_t b = p->block_size, cout = y->sizes[1], hout = y->sizes[2], win = x->sizes[3];
    const bool dcr = p->order == CLOPS_ORDER_DEPTH_COLUMN_ROW;
    const weave_fn weave = weave_for(x->elem_size);
    const uint8_t *src[MAX_FAST_BLOCK];
    for (uint64_t r = begin; r < end; r++) {
        const uint64_t ho = r % hout, co = (r / hout) % cout, n = r / hout / cout;
        const uint64_t h = ho / b, i = ho % b;
        uint8_t *dst = out + byte_offset(y, n, co, ho, 0);
        if (b <= MAX_FAST_BLOCK) {
            for (uint64_t j = 0; j < b; j++)
                src[j] = in + byte_offset(x, n, dcr ? (i * b + j) * cout + co : co * b * b + i * b + j, h, 0);
            weave(dst, y->strides[3], src, x->strides[3], b, win);
            continue;
        }
        for (uint64_t j = 0; j < b; j++) {
            src[0] = in + byte_offset(x, n, dcr ? (i * b + j) * cout + co : co * b * b + i * b + j, h, 0);
            weave(dst + byte_offset(y, 0, 0, 0, j), y->strides[3] * b, src, x->strides[3], 1, win);
        }
    }
}

/* SpaceToDepth over input rows u = (n, c, ho, i) in [begin, end): the row
 * deinterleaves into the b output rows of channels co(i, j). */
static void space_to_depth_rows(const clops_op_params *p, const uint8_t *in, uint8_t *out, uint64_t begin,
                                uint64_t end)
{
    const clops_tensor *x = &p->input, *y = &p->output;
    const uint64_t b = p->block_size, cin = x->sizes[1], hout = y->sizes[2], wout = y->sizes[3];
    const bool dcr = p->order == CLOPS_ORDER_DEPTH_COLUMN_ROW;
    const unweave_fn unweave = unweave_for(x->elem_size);
    uint8_t *dst[MAX_FAST_BLOCK];
    for (uint64_t u = begin; u < end; u++) {
        const uint64_t i = u % b, ho = (u / b) % hout, c = (u / b / hout) % cin, n = u / b / hout / cin;
        const uint8_t *src = in + byte_offset(x, n, c, ho * b + i, 0);
        if (b <= MAX_FAST_BLOCK) {
            for (uint64_t j = 0; j < b; j++)
                dst[j] = out + byte_offset(y, n, dcr ? (i * b + j) * cin + c : c * b * b + i * b + j, ho, 0);
            unweave(dst, y->strides[3], src, x->strides[3], b, wout);
            continue;
        }
        for (uint64_t j = 0; j < b; j++) {
            dst[0] = out + byte_offset(y, n, dcr ? (i * b + j) * cin + c : c * b * b + i * b + j, ho, 0);
            unweave(dst, y->strides[3], src + byte_offset(x, 0, 0, 0, j), x->strides[3] * b, 1, wout);
        }
    }
}

clops_status clops_host_depth_to_space(const clops_op_params *p, const clops_host_buffers *b)
{
    if (p->output.count)
        parallel_rows(depth_to_space_rows, p, b->input, b->output,
                      p->output.sizes[0] * p->output.sizes[1] * p->output.sizes[2]);
    return CLOPS_SUCCESS;
}

clops_status clops_host_space_to_depth(const clops_op_params *p, const clops_host_buffers *b)
{
    if (p->output.count)
        parallel_rows(space_to_depth_rows, p, b->input, b->output,
                      p->input.sizes[0] * p->input.sizes[1] * p->output.sizes[2] * p->block_size);
    return CLOPS_SUCCESS;
}
