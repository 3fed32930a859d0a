/* depth_space.c - the plan for DepthToSpace and SpaceToDepth on OpenCL.
 *
 * One program per (element width, block size, order, offset width), built once
 * per context; one launch over the output as (W, H, N*C). */
#include <stdio.h>

#include "internal.h"

clops_status clops_depth_space_prepare(clops_operator *op)
{
    const clops_op_params *p = &op->params;
    const bool d2s = p->type == CLOPS_OPERATOR_DEPTH_TO_SPACE;
    op->offset_64 = !clops_fits_u32(p);
    op->kernel_name = d2s ? "depth_to_space" : "space_to_depth";
    snprintf(op->options, sizeof op->options, "-DELEM_BYTES=%zu -DOFFSET_64=%d -DBLOCK=%uu -DORDER_DCR=%d",
             p->input.elem_size, op->offset_64, p->block_size, p->order == CLOPS_ORDER_DEPTH_COLUMN_ROW);
    if (p->output.count == 0) return CLOPS_SUCCESS; /* nothing to launch */
    cl_program program;
    clops_status st = clops_program_get(op->ctx, "depth_space.cl", op->options, &program);
    if (st != CLOPS_SUCCESS) return st;
    const uint64_t items[3] = {p->output.sizes[3], p->output.sizes[2], p->output.sizes[0] * p->output.sizes[1]};
    return clops_operator_add_launch(op, program, op->kernel_name, 3, items);
}

clops_status clops_depth_space_enqueue(clops_operator *op, const clops_buffers *b, cl_uint nwait,
                                       const cl_event *wait, cl_event *event)
{
    const clops_op_params *p = &op->params;
    const clops_launch *l = &op->launches[0];
    const uint64_t *const dims[3] = {p->output.sizes, p->input.strides, p->output.strides};
    clops_status st = clops_set_arg(l->kernel, 0, sizeof(cl_mem), &b->input);
    if (st == CLOPS_SUCCESS) st = clops_set_arg(l->kernel, 1, sizeof(cl_mem), &b->output);
    if (st == CLOPS_SUCCESS) st = clops_set_dims_args(op, l->kernel, 2, 3, dims);
    if (st == CLOPS_SUCCESS && p->type == CLOPS_OPERATOR_SPACE_TO_DEPTH)
        st = clops_set_offset_arg(op, l->kernel, 5, p->input.sizes[1]);
    if (st == CLOPS_SUCCESS) st = clops_enqueue_launch(op, l, nwait, wait, event);
    return st;
}
