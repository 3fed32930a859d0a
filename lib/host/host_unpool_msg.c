/* host_unpool_msg.c - the messages of MaxUnpooling's bad indices, one text for
 * every path: the host kernel's (host_unpool.c) and, from the ops layer above,
 * the device's and the fallback's (lib/ops/max_unpooling.c). */
#include <stdio.h>

#include "host/host.h"

/* The limit an index of `p` must be below, as the messages name it. */
static void index_limit(const clops_op_params *p, char *buf, size_t size)
{
    if (p->indices_layout == CLOPS_INDICES_PER_PLANE)
        snprintf(buf, size, "its output plane's %llu elements (per-plane indices)",
                 (unsigned long long)(p->output.sizes[2] * p->output.sizes[3]));
    else
        snprintf(buf, size, "the output's %llu elements", (unsigned long long)p->output.count);
}

clops_status clops_unpool_bad_index(const clops_op_params *p, uint64_t e, uint64_t v, const char *tail)
{
    const uint64_t *s = p->input.sizes;
    char text[24], limit[96];
    if (p->indices.type == CLOPS_DATA_TYPE_INT64) snprintf(text, sizeof text, "%lld", (long long)(int64_t)v);
    else snprintf(text, sizeof text, "%llu", (unsigned long long)v);
    const unsigned long long w = e % s[3], h = e / s[3] % s[2], c = e / s[3] / s[2] % s[1],
                             n = e / s[3] / s[2] / s[1];
    index_limit(p, limit, sizeof limit);
    return clops_fail(CLOPS_ERROR_INDEX_OUT_OF_RANGE, "index %s at input [%llu, %llu, %llu, %llu] is outside %s%s",
                      text, n, c, h, w, limit, tail);
}

clops_status clops_unpool_bad_count(const clops_op_params *p, uint64_t bad)
{
    char limit[96];
    index_limit(p, limit, sizeof limit);
    if (bad == 0)
        return clops_fail(CLOPS_ERROR_INDEX_OUT_OF_RANGE,
                          "an index is negative or not below %s; the elements of such indices were skipped, the rest "
                          "written", limit);
    return clops_fail(CLOPS_ERROR_INDEX_OUT_OF_RANGE,
                      "%llu ind%s negative or not below %s; %s skipped, the rest written", (unsigned long long)bad,
                      bad == 1 ? "ex is" : "ices are", limit, bad == 1 ? "it was" : "those were");
}
