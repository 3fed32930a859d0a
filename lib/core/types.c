/* types.c - the data types clops moves: one table of names and widths. */
#include "core/core.h"

#define CLOPS_TYPE_TABLE(X)  \
    X(FLOAT32, 4)            \
    X(FLOAT16, 2)            \
    X(UINT32, 4)             \
    X(UINT16, 2)             \
    X(UINT8, 1)              \
    X(INT32, 4)              \
    X(INT16, 2)              \
    X(INT8, 1)               \
    X(FLOAT64, 8)            \
    X(UINT64, 8)             \
    X(INT64, 8)              \
    X(BOOL, 1)               \
    X(BFLOAT16, 2)           \
    X(COMPLEX64, 8)          \
    X(COMPLEX128, 16)

size_t clops_data_type_size(clops_data_type type)
{
    switch (type) {
#define CLOPS_X_SIZE(name, size) \
    case CLOPS_DATA_TYPE_##name: return size;
        CLOPS_TYPE_TABLE(CLOPS_X_SIZE)
#undef CLOPS_X_SIZE
    default: return 0;
    }
}

const char *clops_data_type_name(clops_data_type type)
{
    switch (type) {
#define CLOPS_X_NAME(name, size) \
    case CLOPS_DATA_TYPE_##name: return #name;
        CLOPS_TYPE_TABLE(CLOPS_X_NAME)
#undef CLOPS_X_NAME
    default: return "UNKNOWN";
    }
}

bool clops_data_type_valid(clops_data_type type)
{
    return clops_data_type_size(type) != 0;
}

bool clops_index_type_valid(clops_data_type type)
{
    return type == CLOPS_DATA_TYPE_UINT32 || type == CLOPS_DATA_TYPE_UINT64 || type == CLOPS_DATA_TYPE_INT64;
}
