/* unpool.h - what MaxUnpooling's plan (max_unpooling.c) and its execution
 * (unpool_exec.c) share with kernels/max_unpooling.cl: the kernels' arguments and
 * the status buffer's words. */
#ifndef CLOPS_OPS_UNPOOL_H
#define CLOPS_OPS_UNPOOL_H

#include "ops/ops.h"

/* Kernel arguments (max_unpooling.cl UNPOOL_ARGS). */
enum { ARG_X, ARG_INDICES, ARG_Y, ARG_STATUS, ARG_SCRATCH, ARG_DIMS, ARG_COUNT = ARG_DIMS + 5, ARG_GEN };
/* Status words (max_unpooling.cl ST_*): ST_GENERAL and ST_POOL are pairs, one
 * word per parity of the generation (clops_unpool_word). */
enum { ST_GENERAL, ST_POOL = 2, ST_OUT_OF_RANGE = 4, ST_HEAVY, ST_BAD, ST_BAD_ODD, ST_WORDS };
/* After the status words in the same buffer, set once at create time (max_unpooling.cl
 * ST_TILE_SHIFT): the bucketed path's tile shift, bucket work-items (bin's work-groups),
 * tiles, pad, mark's span and period, and bin's slots per tile (max_unpooling_sort.cl). */
enum { ST_TILE_SHIFT = ST_WORDS, ST_GROUPS, ST_TILES, ST_PAD, ST_MARK_SPAN, ST_MARK_PERIOD, ST_SORT_CAP, ST_BUFFER_WORDS };

/* Scratch bytes of the general path's mark words: one word per output element (unpool_state.c). */
uint64_t clops_unpool_mark_bytes(const clops_op_params *p);
/* MaxUnpooling's device state for a plan (unpool_state.c): the status buffer from
 * `words` (mark's span and period filled in here), and a zeroed scratch buffer of
 * `scratch` bytes, followed with `mark` by mark's words (op->unpool.mark). */
clops_status clops_max_unpooling_state(clops_operator *op, cl_uint words[ST_BUFFER_WORDS], uint64_t scratch,
                                       bool mark);

/* The word of pair `w` that execution `gen` raises (max_unpooling.cl WORD_OF). */
static inline unsigned clops_unpool_word(unsigned w, cl_uint gen)
{
    return w + (gen & 1u);
}

#endif
