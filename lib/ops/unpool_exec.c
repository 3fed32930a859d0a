/* unpool_exec.c - MaxUnpooling's executions on OpenCL: the plan's launches
 * (max_unpooling.c clops_max_unpooling_prepare) enqueued in order after the
 * caller's wait list, with the execution's generation, and the status words read
 * back for clops_operator_last_status and the conformance coverage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"
#include "ops/unpool.h"

void clops_max_unpooling_record(clops_operator *op, cl_event last, uint64_t bad)
{
    if (op->unpool.last) clReleaseEvent(op->unpool.last);
    op->unpool.last = last;
    op->unpool.bad = bad;
}

static clops_status set_args(const clops_operator *op, const clops_buffers *b)
{
    const clops_op_params *p = &op->params;
    const uint64_t *const dims[5] = {p->input.sizes, p->input.strides, p->indices.strides, p->output.sizes,
                                     p->output.strides};
    const cl_mem scratch = op->unpool.scratch ? op->unpool.scratch : op->unpool.status; /* serial: unused */
    clops_status st = CLOPS_SUCCESS;
    for (unsigned i = 0; st == CLOPS_SUCCESS && i < op->num_launches; i++) {
        cl_kernel k = op->launches[i].kernel;
        st = clops_set_arg(k, ARG_X, sizeof(cl_mem), &b->input);
        if (st == CLOPS_SUCCESS) st = clops_set_arg(k, ARG_INDICES, sizeof(cl_mem), &b->indices);
        if (st == CLOPS_SUCCESS) st = clops_set_arg(k, ARG_Y, sizeof(cl_mem), &b->output);
        if (st == CLOPS_SUCCESS) st = clops_set_arg(k, ARG_STATUS, sizeof(cl_mem), &op->unpool.status);
        if (st == CLOPS_SUCCESS) st = clops_set_arg(k, ARG_SCRATCH, sizeof(cl_mem), &scratch);
        if (st == CLOPS_SUCCESS) st = clops_set_dims_args(op, k, ARG_DIMS, 5, dims);
        if (st == CLOPS_SUCCESS) st = clops_set_offset_arg(op, k, ARG_COUNT, p->output.count);
    }
    return st;
}

/* The caller's wait list plus the previous execution's event (in `*merged`,
 * freed by the caller, when both exist). */
static clops_status wait_list(const clops_operator *op, cl_uint nwait, const cl_event *wait, cl_uint *n,
                              const cl_event **list, cl_event **merged)
{
    *merged = NULL;
    *n = nwait;
    *list = nwait ? wait : NULL;
    if (!op->unpool.last) return CLOPS_SUCCESS;
    if (nwait == 0) {
        *n = 1;
        *list = &op->unpool.last;
        return CLOPS_SUCCESS;
    }
    *merged = malloc(((size_t)nwait + 1) * sizeof(cl_event));
    if (!*merged) return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "wait list of %u events", nwait + 1);
    for (cl_uint i = 0; i < nwait; i++) (*merged)[i] = wait[i];
    (*merged)[nwait] = op->unpool.last;
    *n = nwait + 1;
    *list = *merged;
    return CLOPS_SUCCESS;
}

/* Whether `e` failed (a query that fails: not known to, it may still run). */
static bool event_failed(cl_event e)
{
    cl_int s = CL_COMPLETE;
    return clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL) == CL_SUCCESS && s < 0;
}

/* A previous execution that failed (a wait-list event of the caller's that
 * failed, a command the device lost) is not chained on: OpenCL would fail every
 * later execution with it (PoCL never runs them). The next execution chains on
 * what that one chained on instead - an earlier execution that may still run
 * on an out-of-order queue, using the status words and the scratch - unless it
 * failed too, and zeroes the words first (enqueue_chain's wrap path), since a
 * failed zero fill may have left them stale. */
static void drop_failed_last(clops_operator *op)
{
    if (!op->unpool.last || !event_failed(op->unpool.last)) return;
    cl_event earlier = op->unpool.chained;
    op->unpool.chained = NULL;
    if (earlier && event_failed(earlier)) clReleaseEvent(earlier), earlier = NULL;
    clops_max_unpooling_record(op, earlier, 0); /* its reference moves to `last` */
    op->unpool.gen = UINT32_MAX;
}

/* Enqueues the launches after the wait list, each after the one before (the
 * caller's queue may be out of order); `*last` is the final command's event -
 * on failure the last one enqueued (or NULL), which still runs. */
static clops_status enqueue_chain(clops_operator *op, cl_uint nwait, const cl_event *wait, cl_event *last)
{
    cl_event prev = NULL;
    *last = NULL;
    clops_status st = CLOPS_SUCCESS;
    const cl_uint zero = 0;
    const bool wrap = op->unpool.gen == UINT32_MAX;
    if (wrap) { /* generations wrap, or a failure: zero the words first */
        cl_int err = clEnqueueFillBuffer(op->ctx->queue, op->unpool.status, &zero, sizeof zero, 0,
                                         ST_WORDS * sizeof zero, nwait, nwait ? wait : NULL, &prev);
        if (err != CL_SUCCESS) return clops_fail_cl(err, "clEnqueueFillBuffer(status words)");
        op->unpool.gen = 0;
    }
    /* mark's words too: after a failure (a failed execution may have left them set), and
     * before every execution whose base wraps to 0 but the first (max_unpooling.cl MARK_BASE) */
    const cl_uint gen = op->unpool.gen + 1;
    if (op->unpool.mark && (wrap || (gen > 1 && (gen - 1) % op->unpool.mark_period == 0))) {
        cl_event filled = NULL;
        size_t bytes = 0;
        cl_int err = clGetMemObjectInfo(op->unpool.scratch, CL_MEM_SIZE, sizeof bytes, &bytes, NULL);
        if (err == CL_SUCCESS)
            err = prev ? clEnqueueFillBuffer(op->ctx->queue, op->unpool.scratch, &zero, sizeof zero, 0, bytes, 1,
                                             &prev, &filled)
                       : clEnqueueFillBuffer(op->ctx->queue, op->unpool.scratch, &zero, sizeof zero, 0, bytes,
                                             nwait, nwait ? wait : NULL, &filled);
        if (prev) clReleaseEvent(prev);
        prev = filled;
        if (err != CL_SUCCESS) {
            if (wrap) op->unpool.gen = UINT32_MAX; /* the status words may be zero: zero both again */
            return clops_fail_cl(err, "clEnqueueFillBuffer(MaxUnpooling scratch)");
        }
    }
    op->unpool.gen++;
    for (unsigned i = 0; st == CLOPS_SUCCESS && i < op->num_launches; i++)
        st = clops_set_arg(op->launches[i].kernel, ARG_GEN, sizeof(cl_uint), &op->unpool.gen);
    for (unsigned i = 0; st == CLOPS_SUCCESS && i < op->num_launches; i++) {
        cl_event next = NULL;
        st = prev ? clops_enqueue_launch(op, &op->launches[i], 1, &prev, &next)
                      : clops_enqueue_launch(op, &op->launches[i], nwait, wait, &next);
        if (st != CLOPS_SUCCESS) {
            if (i > 0 || prev) op->unpool.gen = UINT32_MAX; /* a part ran: the next execution zeroes first */
            break;
        }
        if (prev) clReleaseEvent(prev);
        prev = next;
    }
    *last = prev;
    return st;
}

clops_status clops_max_unpooling_enqueue(clops_operator *op, const clops_buffers *b, cl_uint nwait,
                                         const cl_event *wait, cl_event *event)
{
    const clops_op_params *p = &op->params;
    if (p->output.count == 0) { /* every index is out of range, nothing to write */
        clops_max_unpooling_record(op, NULL, p->input.count);
        return clops_enqueue_nothing(op->ctx, nwait, wait, event);
    }
    drop_failed_last(op);
    clops_status st = set_args(op, b);
    cl_uint n = 0;
    const cl_event *list = NULL;
    cl_event *merged = NULL, last = NULL;
    if (st == CLOPS_SUCCESS) st = wait_list(op, nwait, wait, &n, &list, &merged);
    if (st == CLOPS_SUCCESS) st = enqueue_chain(op, n, list, &last);
    free(merged);
    /* Never waited for here (execute does not block): what a failed chain
     * enqueued still runs after the wait list, and the next execution chains on
     * it (on the previous execution when nothing was enqueued). */
    if (last && b->indices && clRetainMemObject(b->indices) == CL_SUCCESS) { /* for last_status's message */
        if (op->unpool.indices) clReleaseMemObject(op->unpool.indices);
        op->unpool.indices = b->indices;
    }
    if (last) { /* what this execution chained on stays retained for drop_failed_last */
        if (op->unpool.chained) clReleaseEvent(op->unpool.chained);
        op->unpool.chained = op->unpool.last;
        op->unpool.last = NULL;
        clops_max_unpooling_record(op, last, 0);
    }
    if (st != CLOPS_SUCCESS) return st;
    if (event) {
        const cl_int err = clRetainEvent(last);
        if (err != CL_SUCCESS) return clops_fail_cl(err, "clRetainEvent");
        *event = last;
    }
    return CLOPS_SUCCESS;
}

clops_status clops_max_unpooling_status(clops_operator *op)
{
    const clops_op_params *p = &op->params;
    if (!op->unpool.last) {
        return op->unpool.bad ? clops_unpool_bad_count(p, op->unpool.bad) : CLOPS_SUCCESS; /* the fallback's count */
    }
    cl_uint words[ST_WORDS];
    const clops_status st = clops_wait_events(op->ctx, 1, &op->unpool.last, "MaxUnpooling");
    if (st != CLOPS_SUCCESS) return st;
    const cl_int err = clEnqueueReadBuffer(op->ctx->queue, op->unpool.status, CL_TRUE, 0, sizeof words, words, 1,
                                           &op->unpool.last, NULL);
    if (err != CL_SUCCESS) return clops_fail_cl(err, "clEnqueueReadBuffer(status words)");
    if (words[ST_OUT_OF_RANGE] != op->unpool.gen) return CLOPS_SUCCESS;
    /* The first bad index's input position (max_unpooling.cl ST_BAD) and the
     * index there, read back: the host path's message. */
    const cl_uint slot = words[ST_BAD + (op->unpool.gen & 1u)];
    const uint64_t e = (cl_uint)~slot;
    unsigned char raw[8] = {0};
    const size_t is = p->indices.elem_size;
    const uint64_t at = e < p->input.count ? clops_elem_offset(p->input.sizes, p->indices.strides, e) * is : 0;
    if (slot && op->unpool.indices && e < p->input.count &&
        clEnqueueReadBuffer(op->ctx->queue, op->unpool.indices, CL_TRUE, (size_t)at, is, raw, 0, NULL, NULL) ==
            CL_SUCCESS) {
        uint64_t v = 0;
        if (is == 4) {
            uint32_t u;
            memcpy(&u, raw, 4);
            v = u;
        } else {
            memcpy(&v, raw, 8);
        }
        /* execute_host reads nothing back after a bad index (operator.c execute_via_device) */
        return clops_unpool_bad_index(p, e, v, op->reading_back ? CLOPS_UNPOOL_NOTHING_WRITTEN
                                                                : "; it and any other bad index were skipped, "
                                                                  "the rest written");
    }
    return clops_unpool_bad_count(p, 0);
}

clops_status clops_max_unpooling_live(clops_operator *op, unsigned count, const char (*kernel)[64], bool *live)
{
    cl_uint words[ST_WORDS] = {0};
    if (op->unpool.last && op->unpool.status) {
        const cl_int err = clEnqueueReadBuffer(op->ctx->queue, op->unpool.status, CL_TRUE, 0, sizeof words, words, 1,
                                               &op->unpool.last, NULL);
        if (err != CL_SUCCESS) return clops_fail_cl(err, "clEnqueueReadBuffer(status words)");
    }
    const cl_uint gen = op->unpool.gen;
    bool gated = false, bucketed = false, has_pool = false;
    for (unsigned i = 0; i < count; i++) {
        gated |= strcmp(kernel[i], "windows") == 0 || strcmp(kernel[i], "pool") == 0 || strcmp(kernel[i], "planes") == 0;
        bucketed |= strcmp(kernel[i], "bucket") == 0 || strcmp(kernel[i], "bin") == 0;
        has_pool |= strcmp(kernel[i], "pool") == 0 || strcmp(kernel[i], "planes") == 0;
    }
    const bool windows_first = count && strcmp(kernel[0], "windows") == 0;
    /* the general path ran (ST_GENERAL: gated behind windows, pool or planes), and mark and
     * place behind tiles (CPUs) or settle (GPUs) for a crowded tile (ST_HEAVY), rewriting
     * every element */
    const bool general = !gated || words[clops_unpool_word(ST_GENERAL, gen)] == gen;
    const bool heavy = bucketed && words[ST_HEAVY] == gen;
    const bool pool = !(windows_first && has_pool) || words[clops_unpool_word(ST_POOL, gen)] == gen; /* POOL_GATED */
    for (unsigned i = 0; i < count; i++) {
        const char *k = kernel[i];
        if (strcmp(k, "bucket") == 0 || strcmp(k, "tiles") == 0 || strcmp(k, "bin") == 0 || strcmp(k, "settle") == 0)
            live[i] = general && !heavy;
        else if (strcmp(k, "mark") == 0 || strcmp(k, "place") == 0) live[i] = general && (!bucketed || heavy);
        else if (strcmp(k, "pool") == 0 || strcmp(k, "planes") == 0) live[i] = pool && !(gated && general);
        else if (strcmp(k, "windows") == 0) live[i] = !(has_pool && pool) && !(gated && general);
        else live[i] = true; /* serial, clear */
    }
    return CLOPS_SUCCESS;
}

