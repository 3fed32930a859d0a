/* depth_space.cl - DepthToSpace and SpaceToDepth, both orders.
 *
 * Build options (besides clops_common.cl's):
 *   -DBLOCK=b            block size, a compile-time constant: / and % by it become
 *                        shifts or multiplies, and the loops over a block unroll
 *   -DORDER_DCR=1|0      1: depth-column-row; 0: column-row-depth
 *   -DCHUNK=k            positions of the inner axis each work-item walks
 *   -DCHANNELS_INNER=0|1 the inner axis: 0: W (packed NCHW), 1: C (NHWC through strides)
 *   -DUNIT_W=0|1         1: both tensors have W stride 1 (known to the compiler)
 *   -DUNIT_C=0|1         1: both tensors have C stride 1
 *
 * A work-item walks CHUNK consecutive positions of the inner axis (a piece of a
 * row), moving a whole block at each. The loop nest is ordered so that the
 * innermost loop runs along memory on both sides where the layout allows (for
 * packed NCHW DepthToSpace: contiguous loads from b rows, one interleaved
 * contiguous store), which compilers turn into vector loads, shuffles and vector
 * stores; measured on PoCL this is 3 to 5 times faster than one element per
 * work-item, whose neighbouring work-items gather. The batch is folded into
 * NDRange dimension 2; the global size is rounded up to the work-group size and
 * every kernel guards its range (OpenCL 1.2: no non-uniform work-groups).
 */
#if UNIT_W
#define XS3 ((idx_t)1)
#define YS3 ((idx_t)1)
#else
#define XS3 DIM(xs, 3)
#define YS3 DIM(ys, 3)
#endif
#if UNIT_C
#define XS1 ((idx_t)1)
#define YS1 ((idx_t)1)
#else
#define XS1 DIM(xs, 1)
#define YS1 DIM(ys, 1)
#endif
#define XOFF(n, c, h, w) ((n) * DIM(xs, 0) + (c) * XS1 + (h) * DIM(xs, 2) + (w) * XS3)
#define YOFF(n, c, h, w) ((n) * DIM(ys, 0) + (c) * YS1 + (h) * DIM(ys, 2) + (w) * YS3)

/* Work-item coordinates. sizes = (N, C, H, W) of the axes items are indexed by.
 * W inner: range (ceil(W/CHUNK), H, N*C): the item walks w in [p0, p1), fixed c.
 * C inner: range (ceil(C/CHUNK), W, N*H): the item walks c in [p0, p1), fixed w. */
#if CHANNELS_INNER
#define ITEM_COORDS(sizes)                                                                       \
    const idx_t p0 = (idx_t)get_global_id(0) * CHUNK, w_ = (idx_t)get_global_id(1);           \
    const idx_t nh_ = (idx_t)get_global_id(2);                                                 \
    if (p0 >= DIM(sizes, 1) || w_ >= DIM(sizes, 3) || nh_ >= DIM(sizes, 0) * DIM(sizes, 2)) return;          \
    const idx_t n = nh_ / DIM(sizes, 2), h = nh_ % DIM(sizes, 2);                                     \
    const idx_t p1 = min(p0 + (idx_t)CHUNK, DIM(sizes, 1));
#define C_AT(p) (p)
#define W_AT(p) (w_)
#else
#define ITEM_COORDS(sizes)                                                                       \
    const idx_t p0 = (idx_t)get_global_id(0) * CHUNK, h = (idx_t)get_global_id(1);            \
    const idx_t nc_ = (idx_t)get_global_id(2);                                                 \
    if (p0 >= DIM(sizes, 3) || h >= DIM(sizes, 2) || nc_ >= DIM(sizes, 0) * DIM(sizes, 1)) return;           \
    const idx_t n = nc_ / DIM(sizes, 1), c_ = nc_ % DIM(sizes, 1);                                    \
    const idx_t p1 = min(p0 + (idx_t)CHUNK, DIM(sizes, 3));
#define C_AT(p) (c_)
#define W_AT(p) (p)
#endif

/* Channel of X (DepthToSpace) or Y (SpaceToDepth) for block position (i, j) of
 * channel c of the other tensor, which has `cs` channels. */
#if ORDER_DCR
#define DEPTH_CHANNEL(i, j, c, cs) (((i) * B + (j)) * (cs) + (c))
#else
#define DEPTH_CHANNEL(i, j, c, cs) ((c) * (B * B) + (i) * B + (j))
#endif

/* DepthToSpace: Y[n, c, h*b+i, w*b+j] = X[n, DEPTH_CHANNEL(i, j, c, C_out), h, w].
 * sizes = (N, C_out, H_out, W_in); the item writes output row h (i = h % b). */
#define D2S_MOVE(p, j) \
    y[YOFF(n, C_AT(p), h, W_AT(p) * B + (j))] = x[XOFF(n, DEPTH_CHANNEL(i, (j), C_AT(p), cout), hi, W_AT(p))]

__kernel void depth_to_space(__global const elem_t *restrict x, __global elem_t *restrict y,
                             dims4 sizes, dims4 xs, dims4 ys)
{
    ITEM_COORDS(sizes)
    const idx_t cout = DIM(sizes, 1), i = h % B, hi = h / B;
#if CHANNELS_INNER
    for (idx_t j = 0; j < B; j++)
        for (idx_t p = p0; p < p1; p++) D2S_MOVE(p, j);
#else
    for (idx_t p = p0; p < p1; p++)
#pragma unroll
        for (idx_t j = 0; j < B; j++) D2S_MOVE(p, j);
#endif
}

/* SpaceToDepth: Y[n, DEPTH_CHANNEL(i, j, c, C_in), h, w] = X[n, c, h*b+i, w*b+j].
 * sizes = (N, C_in, H_out, W_out). */
#define S2D_MOVE(p, i, j) \
    y[YOFF(n, DEPTH_CHANNEL((i), (j), C_AT(p), cin), h, W_AT(p))] = x[XOFF(n, C_AT(p), h * B + (i), W_AT(p) * B + (j))]

__kernel void space_to_depth(__global const elem_t *restrict x, __global elem_t *restrict y,
                             dims4 sizes, dims4 xs, dims4 ys)
{
    ITEM_COORDS(sizes)
    const idx_t cin = DIM(sizes, 1);
    for (idx_t i = 0; i < B; i++) {
#if CHANNELS_INNER
        for (idx_t j = 0; j < B; j++)
            for (idx_t p = p0; p < p1; p++) S2D_MOVE(p, i, j);
#else
        for (idx_t p = p0; p < p1; p++)
#pragma unroll
            for (idx_t j = 0; j < B; j++) S2D_MOVE(p, i, j);
#endif
    }
}
