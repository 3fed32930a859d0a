/* cl_api.c - the table of real OpenCL and file-system entry points (cl_api.h). */
#define _POSIX_C_SOURCE 200809L
#define CLOPS_CL_API_NO_MACROS
#include <stdlib.h>
#include <stdio.h>
#include <unistd.h>

#include "cl_api.h"

#define CLOPS_REAL_TABLE                                                                           \
    {                                                                                              \
        CLOPS_CL_FUNCTIONS(CLOPS_X_INIT) write, fsync, rename, mkstemp, mkdir                      \
    }
#define CLOPS_X_INIT(f) f,

#ifdef CLOPS_TEST_HOOKS
const clops_cl_api clops_cl_real = CLOPS_REAL_TABLE;
clops_cl_api clops_cl = CLOPS_REAL_TABLE;
#else
const clops_cl_api clops_cl = CLOPS_REAL_TABLE;
#endif
