/* fallback.c - an operator the device cannot run, on the caller's cl_mem
 * buffers: map them (after the wait list), run the operator's host kernel on
 * the mapped memory, unmap, and complete the caller's event. */
#include "ops/ops.h"

clops_status clops_host_execute_cl(clops_operator *op, const clops_buffers *b, cl_uint nwait, const cl_event *wait,
                                   cl_event *event)
{
    const clops_op_entry *e = clops_op_lookup(op->params.type);
    cl_command_queue q = op->ctx->queue;
    clops_host_buffers mapped = {0};
    uint64_t bad = 0;
    /* Everything before the maps, waited for with the deadline: a marker after the
     * wait list (and, on an in-order queue, after every earlier command). */
    cl_event before = NULL;
    const cl_int marked = clEnqueueMarkerWithWaitList(q, nwait, wait, &before);
    clops_status st = marked == CL_SUCCESS ? clops_wait_events(op->ctx, 1, &before, "the commands before the host "
                                                                                 "fallback's maps")
                                        : clops_fail_cl(marked, "clEnqueueMarkerWithWaitList");
    if (before) clReleaseEvent(before);
    if (st != CLOPS_SUCCESS) {
        if (e->record_host) e->record_host(op, NULL, 0);
        return st;
    }
    st = clops_map_buffers(q, &op->params, b, nwait, wait, &mapped);
    if (st == CLOPS_SUCCESS)
        st = e->run_mapped ? e->run_mapped(&op->params, &mapped, &bad) : e->host_run(&op->params, &mapped);
    clops_unmap_buffers(q, b, &mapped);
    if (st == CLOPS_SUCCESS) st = clops_enqueue_nothing(op->ctx, 0, NULL, event);
    if (st == CLOPS_SUCCESS && !event) {
        const cl_int err = clFinish(q); /* unmaps done before the caller reuses the buffers */
        if (err != CL_SUCCESS) st = clops_fail_cl(err, "clFinish");
    }
    if (e->record_host) e->record_host(op, NULL, st == CLOPS_SUCCESS ? bad : 0); /* clops_operator_last_status */
    return st;
}
