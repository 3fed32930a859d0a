/** @file
 * clops_max_unpooling.h - MaxUnpooling's descriptor: what its indices count
 * from (flat, as DirectML and ONNX, or per plane, as PyTorch) and the
 * ::clops_max_unpooling_desc a ::clops_operator_desc of type
 * ::CLOPS_OPERATOR_MAX_UNPOOLING points to.
 *
 * Part of the API of clops.h, which includes this header; it includes clops.h
 * in turn (for ::clops_tensor_desc), so either may be included first.
 */
#ifndef CLOPS_PUBLIC_MAX_UNPOOLING_H
#define CLOPS_PUBLIC_MAX_UNPOOLING_H

#include "clops.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @addtogroup descriptors
 *  @{ */
/** What a MaxUnpooling index counts from. The input element of plane
 *  p = n*C + c whose index is i goes to flat output position
 *  - i, with ::CLOPS_INDICES_FLAT: valid iff 0 <= i < N*C*H_out*W_out;
 *  - p*H_out*W_out + i, with ::CLOPS_INDICES_PER_PLANE: valid iff 0 <= i < H_out*W_out.
 *
 *  An index outside that range (a negative INT64 included) is out of range,
 *  ::CLOPS_ERROR_INDEX_OUT_OF_RANGE, on every path. Any other value of the field
 *  is ::CLOPS_ERROR_INVALID_INDICES_LAYOUT from validate and create. */
typedef enum clops_indices_layout {
    CLOPS_INDICES_FLAT = 0,     /**< DirectML, ONNX: over the whole packed output,
                                   batch and channel included */
    CLOPS_INDICES_PER_PLANE = 1 /**< PyTorch max_pool2d(return_indices=True): within the
                                   output plane (n, c), 0 <= index < H_out * W_out */
} clops_indices_layout;

/** DML_MAX_UNPOOLING_OPERATOR_DESC. The output is zero-filled, then each input
 * value X.flat[k] is written at Y.flat[I.flat[k]], indices being flat over the
 * whole packed output (batch and channel included), or, with
 * CLOPS_INDICES_PER_PLANE, at Y[n, c].flat[I[n, c, h, w]]. Indices: UINT32,
 * UINT64 or INT64 (as ONNX and PyTorch emit). Duplicate indices: the input
 * element that comes last in row-major order wins, on every device and every run.
 * indices_layout is 0 (flat) when the descriptor is brace-initialised without it. */
typedef struct clops_max_unpooling_desc {
    const clops_tensor_desc *input;    /**< X, { N, C, H, W } */
    const clops_tensor_desc *indices;  /**< I: X's sizes; UINT32, UINT64 or INT64 */
    const clops_tensor_desc *output;   /**< Y: X's N and C and type; H and W are the caller's */
    clops_indices_layout indices_layout; /**< what an index counts from; 0: flat */
} clops_max_unpooling_desc;

/** @} */

#ifdef __cplusplus
}
#endif
#endif /* CLOPS_PUBLIC_MAX_UNPOOLING_H */
