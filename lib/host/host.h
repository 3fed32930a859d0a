/* host.h - the host kernels (host_kernels.c): every operator in plain C on
 * validated parameters, with no OpenCL in them. Not installed. */
#ifndef CLOPS_HOST_H
#define CLOPS_HOST_H

#include "core/core.h"

/* Each operator on a validated operator's buffers, already checked. For
 * MaxUnpooling, every index is checked before anything is written. */
clops_status clops_host_depth_to_space(const clops_op_params *p, const clops_host_buffers *b);
clops_status clops_host_space_to_depth(const clops_op_params *p, const clops_host_buffers *b);
clops_status clops_host_max_unpooling(const clops_op_params *p, const clops_host_buffers *b);

/* MaxUnpooling: the number of indices that are negative or past the output. */
uint64_t clops_host_unpool_bad_indices(const clops_op_params *p, const void *idx);

/* MaxUnpooling's zero-fill and scatter in input order (the last duplicate wins),
 * skipping out-of-range indices: the reference result on any backend. */
void clops_host_unpool_scatter(const clops_op_params *p, const void *in, const void *idx, void *out);

/* Reads index k (logical row-major over the indices tensor) as int64; values
 * past INT64_MAX from UINT64 indices come back negative (= out of range). */
int64_t clops_read_index(const clops_tensor *t, const void *base, const uint64_t coord[4]);

#endif /* CLOPS_HOST_H */
