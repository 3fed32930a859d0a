/* conformance_ref.c - the conformance run's reference: the specification's
 * formulas applied one element at a time, written for clarity, not speed. It
 * shares no code with the kernels or lib/host_kernels.c. */
#include <string.h>

#include "conformance.h"

void conf_packed(conf_layout *t, uint32_t n, uint32_t c, uint32_t h, uint32_t w)
{
    t->sizes[0] = n;
    t->sizes[1] = c;
    t->sizes[2] = h;
    t->sizes[3] = w;
    t->strides[3] = 1;
    t->strides[2] = w;
    t->strides[1] = (uint64_t)h * w;
    t->strides[0] = (uint64_t)c * h * w;
}

uint64_t conf_count(const conf_layout *t)
{
    return (uint64_t)t->sizes[0] * t->sizes[1] * t->sizes[2] * t->sizes[3];
}

uint64_t conf_span(const conf_layout *t)
{
    uint64_t span = 1;
    for (int d = 0; d < 4; d++) {
        if (t->sizes[d] == 0) return 0;
        span += (uint64_t)(t->sizes[d] - 1) * t->strides[d];
    }
    return span;
}

/* Element offset of (n, c, h, w). */
static uint64_t at(const conf_layout *t, uint64_t n, uint64_t c, uint64_t h, uint64_t w)
{
    return n * t->strides[0] + c * t->strides[1] + h * t->strides[2] + w * t->strides[3];
}

uint64_t conf_ref_depth_space(clops_operator_type op, clops_depth_space_order order, uint32_t block,
                              const conf_layout *x, const void *xdata, const conf_layout *y, void *ydata,
                              size_t esize, bool compare, uint64_t *first_bad)
{
    const unsigned char *src = xdata;
    unsigned char *dst = ydata;
    const uint64_t b = block;
    const bool dcr = order == CLOPS_ORDER_DEPTH_COLUMN_ROW;
    uint64_t bad = 0;
    for (uint64_t n = 0; n < y->sizes[0]; n++)
        for (uint64_t c = 0; c < y->sizes[1]; c++)
            for (uint64_t h = 0; h < y->sizes[2]; h++)
                for (uint64_t w = 0; w < y->sizes[3]; w++) {
                    uint64_t from;
                    if (op == CLOPS_OPERATOR_DEPTH_TO_SPACE) {
                        /* Y[n, c, h, w] = X[n, channel, h / b, w / b], i = h % b, j = w % b:
                         * DCR channel (i*b + j)*C_out + c, CRD channel c*b² + i*b + j. */
                        const uint64_t i = h % b, j = w % b, cout = y->sizes[1];
                        const uint64_t channel = dcr ? (i * b + j) * cout + c : c * b * b + i * b + j;
                        from = at(x, n, channel, h / b, w / b);
                    } else {
                        /* Y[n, c, h, w] = X[n, channel, h*b + i, w*b + j], where the output
                         * channel is (i*b + j)*C_in + channel (DCR) or channel*b² + i*b + j (CRD). */
                        const uint64_t cin = x->sizes[1];
                        const uint64_t channel = dcr ? c % cin : c / (b * b);
                        const uint64_t ij = dcr ? c / cin : c % (b * b);
                        from = at(x, n, channel, h * b + ij / b, w * b + ij % b);
                    }
                    const uint64_t to = at(y, n, c, h, w);
                    if (!compare) {
                        memcpy(dst + to * esize, src + from * esize, esize);
                    } else if (memcmp(dst + to * esize, src + from * esize, esize) != 0) {
                        if (bad == 0 && first_bad) *first_bad = to;
                        bad++;
                    }
                }
    return bad;
}

/* Index k of the indices tensor (element offset `off`) as a signed value;
 * UINT64 values past INT64_MAX come back as -1 (out of range either way). */
static int64_t read_index(const unsigned char *idata, clops_data_type type, uint64_t off)
{
    if (type == CLOPS_DATA_TYPE_UINT32) {
        uint32_t v;
        memcpy(&v, idata + off * 4, 4);
        return v;
    }
    if (type == CLOPS_DATA_TYPE_UINT64) {
        uint64_t v;
        memcpy(&v, idata + off * 8, 8);
        return v > (uint64_t)INT64_MAX ? -1 : (int64_t)v;
    }
    int64_t v;
    memcpy(&v, idata + off * 8, 8);
    return v;
}

uint64_t conf_ref_max_unpooling(const conf_layout *x, const void *xdata, const conf_layout *ind, const void *idata,
                                clops_data_type index_type, const conf_layout *y, void *ydata, size_t esize,
                                bool partial, bool per_plane)
{
    const unsigned char *src = xdata;
    unsigned char *dst = ydata;
    const uint64_t yh = y->sizes[2], yw = y->sizes[3], yc = y->sizes[1];
    const uint64_t limit = per_plane ? yh * yw : conf_count(y);
    uint64_t bad = 0;
    for (uint64_t n = 0; n < x->sizes[0]; n++)
        for (uint64_t c = 0; c < x->sizes[1]; c++)
            for (uint64_t h = 0; h < x->sizes[2]; h++)
                for (uint64_t w = 0; w < x->sizes[3]; w++) {
                    const int64_t v = read_index(idata, index_type, at(ind, n, c, h, w));
                    if (v < 0 || (uint64_t)v >= limit) bad++;
                }
    if (bad && !partial) return bad;
    for (uint64_t n = 0; n < y->sizes[0]; n++)
        for (uint64_t c = 0; c < y->sizes[1]; c++)
            for (uint64_t h = 0; h < y->sizes[2]; h++)
                for (uint64_t w = 0; w < y->sizes[3]; w++) memset(dst + at(y, n, c, h, w) * esize, 0, esize);
    for (uint64_t n = 0; n < x->sizes[0]; n++)
        for (uint64_t c = 0; c < x->sizes[1]; c++)
            for (uint64_t h = 0; h < x->sizes[2]; h++)
                for (uint64_t w = 0; w < x->sizes[3]; w++) {
                    const int64_t v = read_index(idata, index_type, at(ind, n, c, h, w));
                    if (v < 0 || (uint64_t)v >= limit) continue;
                    /* The flat index is over the packed output, row-major; a
                     * per-plane one over its own (n, c) plane. */
                    const uint64_t f = per_plane ? (n * yc + c) * yh * yw + (uint64_t)v : (uint64_t)v;
                    const uint64_t to = at(y, f / (yc * yh * yw), f / (yh * yw) % yc, f / yw % yh, f % yw);
                    memcpy(dst + to * esize, src + at(x, n, c, h, w) * esize, esize);
                }
    return bad;
}
