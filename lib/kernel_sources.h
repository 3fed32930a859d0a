/* kernel_sources.h - the table of embedded kernels/ .cl files, generated at build time. */
#ifndef CLOPS_KERNEL_SOURCES_H
#define CLOPS_KERNEL_SOURCES_H
#include <stddef.h>

typedef struct clops_kernel_source {
    const char *name;   /* file name in kernels/, e.g. "depth_space.cl" */
    const char *text;   /* NUL-terminated */
    size_t length;
} clops_kernel_source;

/* Terminated by an entry whose name is NULL. */
extern const clops_kernel_source clops_kernel_sources[];

#endif
