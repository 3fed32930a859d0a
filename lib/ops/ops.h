/* ops.h - the operator table: one entry per operator type, each filled in by the
 * operator's own file (depth_space.c, max_unpooling.c). Everything that differs
 * between operators is reached through this table, like ggml's backend table;
 * adding an operator adds its file, its kernel and one line in ops.c. Internal. */
#ifndef CLOPS_OPS_H
#define CLOPS_OPS_H

#include "internal.h"

typedef struct clops_op_entry {
    clops_operator_type type;
    /* Copies the descriptor's attributes into `p` and names its tensors (`*idx`
     * stays NULL for an operator without indices); NULL_ARGUMENT for a missing one. */
    clops_status (*unpack)(const void *desc, clops_op_params *p, const clops_tensor_desc **in,
                           const clops_tensor_desc **idx, const clops_tensor_desc **out);
    /* The output sizes the operator's rule gives for a validated input and the
     * attributes (failing on a broken rule); NULL where the caller gives them. */
    clops_status (*output_sizes)(const clops_op_params *p, uint64_t out[4]);
    /* The operator's own rules on validated tensors, the output shape included. */
    clops_status (*check)(const clops_op_params *p);
    /* The host kernel (lib/host/) on buffers already checked. */
    clops_status (*host_run)(const clops_op_params *p, const clops_host_buffers *b);
    /* On mapped device buffers instead of host_run (NULL: host_run), counting
     * the bad indices that record_host keeps for clops_operator_last_status. */
    clops_status (*run_mapped)(const clops_op_params *p, const clops_host_buffers *m, uint64_t *bad);
    void (*record_host)(clops_operator *op, cl_event last, uint64_t bad);
    /* Whether the device cannot take this operator (reason in `why`); NULL: it can. */
    bool (*needs_host)(const clops_operator *op, char *why, size_t size);
    /* The OpenCL plan: program, kernels and work sizes; then one execution. */
    clops_status (*prepare)(clops_operator *op);
    clops_status (*enqueue)(clops_operator *op, const clops_buffers *b, cl_uint nwait, const cl_event *wait,
                            cl_event *event);
    /* The last execution's status (NULL: always success); the plan's own state freed. */
    clops_status (*last_status)(clops_operator *op);
    void (*release)(clops_operator *op);
} clops_op_entry;

/* The entries, each defined in the operator's file. */
extern const clops_op_entry clops_depth_to_space_op, clops_space_to_depth_op; /* depth_space.c */
extern const clops_op_entry clops_max_unpooling_op;                           /* max_unpooling.c */

/* The entry for `type`, or NULL for an unknown type. */
const clops_op_entry *clops_op_lookup(clops_operator_type type);

#endif /* CLOPS_OPS_H */
