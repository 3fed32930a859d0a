/* params.c - the kernel parameters of each device class: the one place where
 * they are set (docs/cache-and-tuning.md, "Device parameters"). A vendor tunes
 * its class's row, or `clops tune` finds better ones for one device and records
 * them in the tuning database, which takes precedence per kernel variant. */
#include "cl/params.h"

/* MaxUnpooling on CPUs: a work-item walks 512 input positions, one work-item per
 * group, so the compiler vectorises along the row instead of across work-items
 * (measured on PoCL); the vector windows and pool tile forms are off. On other
 * devices (issue 37, notes/gpu_plans.md, notes/unpool-pool.md): one position per
 * work-item (side by side: coalesced), windows' vector form writing 16-byte
 * window rows, pool's tile form on 32-column groups of up to 256 items. */
#define UNPOOL_CPU {.chunk = 512, .window_row_bytes = 0, .pool_tile_x = 0, .pool_tile_items = 0, .pool_tile_bytes = 0}
#define UNPOOL_GPU {.chunk = 1, .window_row_bytes = 16, .pool_tile_x = 32, .pool_tile_items = 256, .pool_tile_bytes = 4, \
                    UNPOOL_GENERAL_GPU}
/* The general path (mark, place) on GPUs (notes/unpool-scat.md): place's vector
 * form, mark and place on 2048 work-items per compute unit (an H100's or H200's
 * resident threads per SM: their gathers and atomics are latency-bound). CPUs
 * leave both 0 (the row form, as many work-items as the other kernels). For 1-
 * and 2-byte elements bin and settle instead (notes/gpu_plans.md, 2026-11-28
 * third session): groups of 256, bin on 2 groups per compute unit. */
#define UNPOOL_GENERAL_GPU .place_vector = 1, .general_items = 2048, .sort_items = 256, .sort_groups = 2

static const clops_device_params TABLE[CLOPS_CLASS_COUNT] = {
    /* CPUs (PoCL): groups run as vectorised loops, a few hundred items amortise a
     * group's overhead; the element loop and 8-byte vectors (depth_space.c) beat
     * the vector-rows kernels there, so those are off. */
    [CLOPS_CLASS_CPU] = {"cpu", 256, {.rows_max_bytes = 0, .vector_bytes = 16, .vectors_per_item = 1, .tile_items = 64},
                         UNPOOL_CPU},
    /* Discrete GPUs: vector rows for 1- to 4-byte elements (16-byte accesses,
     * gpumodel's H200 prediction 0.85 or more of a copy: notes/d2s-gpu.md); the
     * tile for 8-byte elements (0.81-1.05 measured on an H200). */
    [CLOPS_CLASS_DISCRETE_GPU] = {"discrete-gpu", 256,
                                  {.rows_max_bytes = 4, .vector_bytes = 16, .vectors_per_item = 1, .tile_items = 64},
                                  UNPOOL_GPU},
    /* Integrated GPUs: as discrete ones until measured otherwise. */
    [CLOPS_CLASS_INTEGRATED_GPU] = {"integrated-gpu", 256,
                                    {.rows_max_bytes = 4, .vector_bytes = 16, .vectors_per_item = 1, .tile_items = 64},
                                    UNPOOL_GPU},
    /* Accelerators and other devices: small groups, the element loop; MaxUnpooling
     * as on GPUs (coalesced side-by-side work-items). */
    [CLOPS_CLASS_OTHER] = {"other", 64, {.rows_max_bytes = 0, .vector_bytes = 16, .vectors_per_item = 1, .tile_items = 64},
                           UNPOOL_GPU},
};

clops_device_class clops_device_class_of(const clops_context *ctx)
{
    if (ctx->info.type & CL_DEVICE_TYPE_CPU) return CLOPS_CLASS_CPU;
    if (!(ctx->info.type & CL_DEVICE_TYPE_GPU)) return CLOPS_CLASS_OTHER;
    /* A test device profile (cl/profile.c) models a discrete GPU on a CPU device,
     * which shares the host's memory. */
    cl_bool unified = CL_FALSE;
    if (ctx->plan.profile[0] || !ctx->device ||
        clGetDeviceInfo(ctx->device, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, NULL) != CL_SUCCESS)
        unified = CL_FALSE;
    return unified ? CLOPS_CLASS_INTEGRATED_GPU : CLOPS_CLASS_DISCRETE_GPU;
}

const clops_device_params *clops_device_params_of(const clops_context *ctx)
{
    return &TABLE[clops_device_class_of(ctx)];
}
