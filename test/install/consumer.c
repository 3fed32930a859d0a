/* consumer.c - a program outside the source tree that uses an installed clops.
 * Built twice by tools/scripts/check_install.sh: once through find_package(clops), once
 * through pkg-config, each with CL_TARGET_OPENCL_VERSION=300 set by the build
 * (as most OpenCL programs do) and -Wall -Werror. It calls OpenCL itself (the
 * platform count), so clops's package must bring OpenCL to the link. Runs the
 * specification's DepthToSpace example (DCR, block 2) on the host backend and
 * checks every element; exit 0 only if all match. */
#ifndef CL_TARGET_OPENCL_VERSION
#error "the build must set CL_TARGET_OPENCL_VERSION (to 300): that is what this consumer checks"
#endif
#include <CL/cl.h>
#include <clops/clops.h>
#include <stdio.h>

int main(void)
{
    cl_uint platforms = 0; /* OpenCL called directly: any count will do, even none */
    const cl_int err = clGetPlatformIDs(0, NULL, &platforms);
    printf("consumer: OpenCL %d, clGetPlatformIDs: %d, %u platforms\n", CL_TARGET_OPENCL_VERSION, (int)err,
           (unsigned)platforms);
    /* X = 0..47 as {1, 8, 2, 3}; Y[0, 0, h*2+i, w*2+j] = X[0, (i*2+j)*2 + 0, h, w]. */
    uint32_t in[48], out[48], want[48];
    for (uint32_t k = 0; k < 48; k++)
        in[k] = k;
    for (uint32_t c = 0; c < 2; c++)
        for (uint32_t y = 0; y < 4; y++)
            for (uint32_t x = 0; x < 6; x++) {
                const uint32_t i = y % 2, j = x % 2, h = y / 2, w = x / 2;
                want[(c * 4 + y) * 6 + x] = in[(((i * 2 + j) * 2 + c) * 2 + h) * 3 + w];
            }
    clops_tensor_desc x = {CLOPS_DATA_TYPE_UINT32, {1, 8, 2, 3}, NULL};
    clops_tensor_desc y = {CLOPS_DATA_TYPE_UINT32, {1, 2, 4, 6}, NULL};
    clops_depth_to_space_desc d2s = {&x, &y, 2, CLOPS_ORDER_DEPTH_COLUMN_ROW};
    clops_operator_desc desc = {CLOPS_OPERATOR_DEPTH_TO_SPACE, &d2s};
    clops_context *ctx = NULL;
    clops_operator *op = NULL;
    clops_status st = clops_context_create_host(&ctx);
    if (st == CLOPS_SUCCESS)
        st = clops_operator_create(ctx, &desc, &op);
    if (st == CLOPS_SUCCESS) {
        clops_host_buffers hb = {in, sizeof in, NULL, 0, out, sizeof out};
        st = clops_operator_execute_host(op, &hb);
    }
    clops_operator_free(op);
    clops_context_free(ctx);
    if (st != CLOPS_SUCCESS) {
        fprintf(stderr, "consumer: %s: %s\n", clops_status_name(st), clops_last_error_message());
        return 1;
    }
    for (int k = 0; k < 48; k++)
        if (out[k] != want[k]) {
            fprintf(stderr, "consumer: element %d is %u, want %u\n", k, out[k], want[k]);
            return 1;
        }
    printf("consumer: DepthToSpace through the installed clops: 48 of 48 elements right\n");
    return 0;
}
