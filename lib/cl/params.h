/* params.h - the kernel parameters of each device class (params.c), in one table.
 * Not installed. */
#ifndef CLOPS_PARAMS_H
#define CLOPS_PARAMS_H

#include "internal.h"

/* The classes a device is planned as: from its type (after a test device
 * profile), and for GPUs from CL_DEVICE_HOST_UNIFIED_MEMORY. */
typedef enum clops_device_class {
    CLOPS_CLASS_CPU,
    CLOPS_CLASS_DISCRETE_GPU,
    CLOPS_CLASS_INTEGRATED_GPU,
    CLOPS_CLASS_OTHER, /* accelerators, custom devices */
    CLOPS_CLASS_COUNT
} clops_device_class;

/* DepthToSpace/SpaceToDepth (lib/ops/depth_space.c, kernels/depth_space.cl). */
typedef struct clops_depth_space_params {
    unsigned rows_max_bytes; /* elements of at most this many bytes take the vector-rows kernels
                                (depth_space.cl ROWS) where the layout allows; 0: never */
    unsigned vector_bytes;   /* bytes per vector of the vector-rows kernels (VW = this / element size) */
    unsigned vectors_per_item; /* vectors of a row each vector-rows work-item moves (CHUNK) */
    unsigned tile_items;     /* work-items per group of the local-memory tile kernels (TILE) */
} clops_depth_space_params;

/* MaxUnpooling (lib/ops/max_unpooling.c, kernels/max_unpooling*.cl). */
typedef struct clops_max_unpooling_params {
    unsigned chunk;            /* input positions (or output columns) per work-item and row chunk of
                                  every row kernel but windows' vector form (CHUNK) */
    unsigned window_row_bytes; /* windows' vector form (WV) for 2-wide windows: positions per work-item
                                  such that each window row it writes is this many bytes; 0: off */
    unsigned pool_tile_x;      /* pool's tile form (POOL_TILE): input columns per work-group */
    unsigned pool_tile_items;  /* its work-items per group at most (rows = this / pool_tile_x); 0: off */
    unsigned pool_tile_bytes;  /* its consecutive inputs per work-item: this many bytes of elements of
                                  up to 4 bytes (one store of 2x them per output row), at least 1 */
    unsigned place_vector;     /* 1: place's vector form (PLACE_VEC: 4 outputs per unit, flat); 0: off */
    unsigned general_items;    /* work-items per compute unit of mark and place (enough to hide their
                                  gathers' latency); 0: as the other row kernels */
    unsigned sort_items;       /* work-items per group of bin and settle, the general path for 1- and
                                  2-byte elements (max_unpooling_sort.cl); 0: off (mark and place) */
    unsigned sort_groups;      /* bin's work-groups per compute unit (each bins a contiguous run of
                                  the inputs: fewer groups, fewer global atomics) */
} clops_max_unpooling_params;

/* One row of the table: a device class's parameters. */
typedef struct clops_device_params {
    const char *name;             /* the class, as docs and `clops tune` name it */
    size_t group;                 /* work-items per group the scheduler aims for */
    clops_depth_space_params depth_space;
    clops_max_unpooling_params max_unpooling;
} clops_device_params;

clops_device_class clops_device_class_of(const clops_context *ctx);

/* The parameters of the context's device class. */
const clops_device_params *clops_device_params_of(const clops_context *ctx);

#endif /* CLOPS_PARAMS_H */
