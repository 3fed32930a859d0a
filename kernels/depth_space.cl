/* depth_space.cl - DepthToSpace and SpaceToDepth, both orders.
 *
 * Build options (besides clops_common.cl's):
 *   -DBLOCK=b                block size, a compile-time constant so that / and %
 *                            by it become shifts or multiplies
 *   -DORDER_DCR=1|0          1: depth-column-row; 0: column-row-depth
 *
 * NDRange: dimension 0 runs along the output's W (the contiguous axis of a packed
 * output), 1 along its H, 2 over N * C_out: the batch is folded in, one launch for
 * the whole tensor. The global size is rounded up to the work-group size, so every
 * kernel guards its range (no reliance on non-uniform work-groups).
 */

/* Y[n, c, h*b+i, w*b+j] = X[n, ci, h, w],  ci = DCR ? (i*b+j)*C_out + c : c*b*b + i*b + j */
__kernel void depth_to_space(__global const elem_t *restrict x, __global elem_t *restrict y,
                             dims4 out_sizes, dims4 x_strides, dims4 y_strides)
{
    const offs_t wo = (offs_t)get_global_id(0), ho = (offs_t)get_global_id(1), nc = (offs_t)get_global_id(2);
    const offs_t cout = out_sizes.v[1];
    if (wo >= out_sizes.v[3] || ho >= out_sizes.v[2] || nc >= out_sizes.v[0] * cout) return;
    const offs_t n = nc / cout, co = nc % cout;
    const offs_t i = ho % B, j = wo % B;
#if ORDER_DCR
    const offs_t ci = (i * B + j) * cout + co;
#else
    const offs_t ci = co * (B * B) + i * B + j;
#endif
    y[offset4(y_strides, n, co, ho, wo)] = x[offset4(x_strides, n, ci, ho / B, wo / B)];
}

/* Y[n, co, h, w] = X[n, c, h*b+i, w*b+j],  co = DCR ? (i*b+j)*C_in + c : c*b*b + i*b + j */
__kernel void space_to_depth(__global const elem_t *restrict x, __global elem_t *restrict y,
                             dims4 out_sizes, dims4 x_strides, dims4 y_strides, offs_t cin)
{
    const offs_t wo = (offs_t)get_global_id(0), ho = (offs_t)get_global_id(1), nc = (offs_t)get_global_id(2);
    const offs_t cout = out_sizes.v[1];
    if (wo >= out_sizes.v[3] || ho >= out_sizes.v[2] || nc >= out_sizes.v[0] * cout) return;
    const offs_t n = nc / cout, co = nc % cout;
#if ORDER_DCR
    const offs_t blk = co / cin, c = co % cin;
#else
    const offs_t blk = co % (B * B), c = co / (B * B);
#endif
    const offs_t i = blk / B, j = blk % B;
    y[offset4(y_strides, n, co, ho, wo)] = x[offset4(x_strides, n, c, ho * B + i, wo * B + j)];
}
