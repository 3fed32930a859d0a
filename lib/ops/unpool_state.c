/* unpool_state.c - MaxUnpooling's device state, which its specialised plans
 * (max_unpooling.c) and its portable plan (portable.c) both keep: the status
 * buffer (words: kernels/unpool_words.cl) and the scratch buffer with mark's
 * words and their period. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ops/ops.h"
#include "ops/unpool.h"

unsigned clops_unpool_mark_period; /* the test seam (ops.h) */

/* Scratch bytes of the mark plans' general path: one word per output element. */
uint64_t clops_unpool_mark_bytes(const clops_op_params *p)
{
    return (p->output.count + 3) / 4 * 16;
}

/* Executions between clears of mark's words (max_unpooling.cl MARK_BASE): each
 * writes its positions above base = ((gen - 1) % period) * span, span being the
 * input's element count, below 2^32 - 1 (needs_host). */
static cl_uint mark_period(const clops_op_params *p)
{
    const uint64_t span = p->input.count ? p->input.count : 1, most = UINT32_MAX / span;
    return (cl_uint)(clops_unpool_mark_period && clops_unpool_mark_period < most ? clops_unpool_mark_period : most);
}

/* A device buffer of `bytes`, a copy of `init` unless NULL. */
static clops_status new_buffer(clops_operator *op, uint64_t bytes, const void *init, cl_mem *out)
{
    cl_int err = CL_OUT_OF_HOST_MEMORY;
    *out = bytes <= SIZE_MAX ? clCreateBuffer(op->ctx->cl_ctx, CL_MEM_READ_WRITE | (init ? CL_MEM_COPY_HOST_PTR : 0),
                                              (size_t)bytes, (void *)(uintptr_t)init, &err)
                             : NULL;
    if (*out) return CLOPS_SUCCESS;
    char what[96];
    snprintf(what, sizeof what, "clCreateBuffer(MaxUnpooling state, %llu bytes)", (unsigned long long)bytes);
    return clops_fail_cl(err, what);
}

/* Creates the general path's scratch buffer of `want` bytes, all zero. */
static clops_status zeroed_scratch(clops_operator *op, uint64_t want)
{
    const size_t bytes = want <= SIZE_MAX ? (size_t)want : 0;
    /* The bucketed path writes before it reads and needs no zeros, but Oclgrind
     * 21.10 then reports its counters as uninitialised on buffers after the
     * first of a process (measured: clean when zeroed; notes/max_unpooling.md). */
    void *zeros = bytes ? calloc(bytes, 1) : NULL;
    if (!zeros)
        return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "%llu bytes for MaxUnpooling's scratch",
                          (unsigned long long)want);
    cl_int err;
    op->unpool.scratch =
        clCreateBuffer(op->ctx->cl_ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, zeros, &err);
    free(zeros);
    return op->unpool.scratch ? CLOPS_SUCCESS : clops_fail_cl(err, "clCreateBuffer(MaxUnpooling scratch)");
}

clops_status clops_max_unpooling_state(clops_operator *op, cl_uint words[ST_BUFFER_WORDS], uint64_t scratch,
                                       bool mark)
{
    const clops_op_params *p = &op->params;
    op->unpool.mark_period = mark_period(p);
    op->unpool.mark = mark;
    words[ST_MARK_SPAN] = (cl_uint)p->input.count, words[ST_MARK_PERIOD] = op->unpool.mark_period;
    clops_status st = new_buffer(op, ST_BUFFER_WORDS * sizeof(cl_uint), words, &op->unpool.status);
    if (st == CLOPS_SUCCESS && (scratch || mark)) st = zeroed_scratch(op, scratch + (mark ? clops_unpool_mark_bytes(p) : 0));
    return st;
}

