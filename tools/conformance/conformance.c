/* conformance.c - `clops conformance`: builds every case, runs it through the
 * public API (host memory, and cl_mem buffers on an OpenCL device), and checks
 * every byte of the output span against conformance_ref.c. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "conformance.h"
#include "conformance_spec.h"
#include "run_settings.h"

/* ---- data -------------------------------------------------------------------------- */

static uint64_t rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Random bits: NaN payloads, -0.0, denormals and infinities turn up by themselves. */
static void fill_random(unsigned char *p, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(rng(&seed) >> 29);
}

/* The pattern an output starts with: gaps must keep it. */
static void fill_sentinel(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(0x5Au ^ (i * 0x2Du));
}

static void describe(char *buf, size_t size, const conf_case *k, const char *path)
{
    const conf_layout *in = &k->x;
    int n = snprintf(buf, size, "%s %s", k->op == CLOPS_OPERATOR_MAX_UNPOOLING ? "MaxUnpooling" :
                                         k->op == CLOPS_OPERATOR_DEPTH_TO_SPACE ? "DepthToSpace" : "SpaceToDepth",
                     clops_data_type_name(k->type));
    if (n < 0 || (size_t)n >= size) return;
    if (k->op == CLOPS_OPERATOR_MAX_UNPOOLING)
        n += snprintf(buf + n, size - (size_t)n, " indices %s%s %s", clops_data_type_name(k->index_type),
                      k->per_plane ? " per-plane" : "", k->indices);
    else
        n += snprintf(buf + n, size - (size_t)n, " %s block %u", k->order == CLOPS_ORDER_DEPTH_COLUMN_ROW ? "DCR" : "CRD",
                      k->block);
    if (n < 0 || (size_t)n >= size) return;
    snprintf(buf + n, size - (size_t)n, ", %s, %s, input %ux%ux%ux%u, %s", k->shape, k->layout, in->sizes[0],
             in->sizes[1], in->sizes[2], in->sizes[3], path);
}

/* "element E (n,c,h,w): got 0x.. want 0x.." for the first differing element. */
static void first_difference(char *buf, size_t size, const unsigned char *got, const unsigned char *want,
                             size_t bytes, size_t esize)
{
    size_t e = 0, bad = 0;
    for (size_t i = 0; i < bytes; i += esize)
        if (memcmp(got + i, want + i, esize) != 0 && bad++ == 0) e = i / esize;
    int n = snprintf(buf, size, "%zu elements of the output span differ; first at element offset %zu: got 0x", bad, e);
    for (size_t b = esize; b-- > 0 && n > 0 && (size_t)n + 3 < size;) n += snprintf(buf + n, size - n, "%02x", got[e * esize + b]);
    if (n > 0 && (size_t)n + 12 < size) n += snprintf(buf + n, size - n, ", want 0x");
    for (size_t b = esize; b-- > 0 && n > 0 && (size_t)n + 3 < size;) n += snprintf(buf + n, size - n, "%02x", want[e * esize + b]);
}

/* ---- running one case -------------------------------------------------------------- */

typedef struct conf_data {
    unsigned char *input, *indices, *start, *expected, *got;
    size_t in_bytes, ind_bytes, out_bytes;
    clops_status want_status;
} conf_data;

static void check(conf_run *run, const conf_case *k, const char *path, bool ok, const char *detail)
{
    char what[320];
    describe(what, sizeof what, k, path);
    if (!ok) fprintf(stderr, "FAIL: %s: %s\n", what, detail);
    conf_report_check(run->report, run->row, run->type_index, ok, what, detail);
}

/* Compares an execution's status and output with the expected ones. */
static void judge(conf_run *run, const conf_case *k, const conf_data *d, const char *path, clops_status st,
                  clops_status want, const unsigned char *want_bytes)
{
    char detail[512];
    if (st != want) {
        snprintf(detail, sizeof detail, "status %s (%s), expected %s", clops_status_name(st),
                 clops_last_error_message(), clops_status_name(want));
        check(run, k, path, false, detail);
    } else if (d->out_bytes && memcmp(d->got, want_bytes, d->out_bytes) != 0) {
        first_difference(detail, sizeof detail, d->got, want_bytes, d->out_bytes, run->esize);
        check(run, k, path, false, detail);
    } else {
        check(run, k, path, true, NULL);
    }
}

/* A device buffer holding `bytes` of `host`; NULL for an empty tensor. */
static cl_mem device_buffer(cl_context c, const void *host, size_t bytes, cl_int *err)
{
    *err = CL_SUCCESS;
    if (bytes == 0) return NULL;
    return clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, (void *)host, err);
}

/* Runs the operator on cl_mem buffers and reads the output span into d->got;
 * the status is execute's, then the operator's last status once the output is
 * read (where MaxUnpooling reports bad indices: execute does not wait). */
static clops_status run_cl(conf_run *run, clops_operator *op, conf_data *d, char *detail, size_t size)
{
    cl_context c = clops_context_cl_context(run->ctx);
    cl_command_queue q = clops_context_queue(run->ctx);
    cl_int e1, e2, e3;
    clops_buffers b = {device_buffer(c, d->input, d->in_bytes, &e1), device_buffer(c, d->indices, d->ind_bytes, &e2),
                       device_buffer(c, d->start, d->out_bytes, &e3)};
    clops_status st = CLOPS_ERROR_INTERNAL;
    if (e1 != CL_SUCCESS || e2 != CL_SUCCESS || e3 != CL_SUCCESS) {
        snprintf(detail, size, "clCreateBuffer failed (%d %d %d)", e1, e2, e3);
    } else {
        cl_event done = NULL;
        st = clops_operator_execute(op, &b, 0, NULL, &done);
        if (d->got != d->start) memcpy(d->got, d->start, d->out_bytes);
        if (d->out_bytes && (st == CLOPS_SUCCESS || st == CLOPS_ERROR_INDEX_OUT_OF_RANGE)) {
            const cl_int err = clEnqueueReadBuffer(q, b.output, CL_TRUE, 0, d->out_bytes, d->got, done ? 1 : 0,
                                                   done ? &done : NULL, NULL);
            if (err != CL_SUCCESS) {
                snprintf(detail, size, "clEnqueueReadBuffer of the output failed (%d)", err);
                st = CLOPS_ERROR_INTERNAL;
            }
        }
        if (st == CLOPS_SUCCESS) st = clops_operator_last_status(op);
        if (done) clReleaseEvent(done);
    }
    if (b.input) clReleaseMemObject(b.input);
    if (b.indices) clReleaseMemObject(b.indices);
    if (b.output) clReleaseMemObject(b.output);
    return st;
}

/* MaxUnpooling with out-of-range indices on cl_mem buffers: clops_operator_execute
 * enqueues without waiting, clops_operator_last_status (read by run_cl) then says
 * CLOPS_ERROR_INDEX_OUT_OF_RANGE, and every element with a good index is written
 * as usual. */
static void check_unpool_out_of_range_cl(conf_run *run, const conf_case *k, clops_operator *op, conf_data *d)
{
    unsigned char *partial = malloc(d->out_bytes ? d->out_bytes : 1);
    char detail[512] = "";
    if (!partial) {
        check(run, k, "cl_mem", false, "out of host memory");
        return;
    }
    memcpy(partial, d->start, d->out_bytes);
    conf_ref_max_unpooling(&k->x, d->input, &k->ind, d->indices, k->index_type, &k->y, partial, run->esize, true,
                           k->per_plane);
    const clops_status st = run_cl(run, op, d, detail, sizeof detail);
    if (detail[0])
        check(run, k, "cl_mem", false, detail);
    else
        judge(run, k, d, "cl_mem", st, CLOPS_ERROR_INDEX_OUT_OF_RANGE, partial);
    free(partial);
}

/* Element offset of (n, c, h, w) in a layout. */
static uint64_t offset_of(const conf_layout *t, uint64_t n, uint64_t c, uint64_t h, uint64_t w)
{
    return n * t->strides[0] + c * t->strides[1] + h * t->strides[2] + w * t->strides[3];
}

/* MaxUnpooling indices for k->indices: "pooling" (one position of each 2x2
 * window), "scattered" (anywhere), "repeated" (a few positions, many times),
 * "out of range" (scattered, with the first past the end and, for INT64, one
 * negative; UINT64 one past 2^63). Gaps in a strided indices tensor hold junk. */
static void make_indices(const conf_case *k, unsigned char *idata, size_t bytes, uint64_t seed)
{
    const size_t isize = clops_data_type_size(k->index_type);
    const conf_layout *x = &k->x, *y = &k->y;
    const uint64_t ycount = conf_count(y);
    fill_random(idata, bytes, seed ^ 0xABCDEF);
    uint64_t r = seed, kth = 0;
    for (uint64_t n = 0; n < x->sizes[0]; n++)
        for (uint64_t c = 0; c < x->sizes[1]; c++)
            for (uint64_t h = 0; h < x->sizes[2]; h++)
                for (uint64_t w = 0; w < x->sizes[3]; w++, kth++) {
                    int64_t v;
                    if (strcmp(k->indices, "pooling") == 0) {
                        const uint64_t bits = rng(&r);
                        v = (int64_t)(((n * y->sizes[1] + c) * y->sizes[2] + 2 * h + (bits & 1)) * y->sizes[3] + 2 * w +
                                      (bits >> 1 & 1));
                    } else if (strcmp(k->indices, "repeated") == 0) {
                        v = (int64_t)(rng(&r) % (ycount < 3 ? ycount : 3));
                    } else {
                        v = (int64_t)(rng(&r) % ycount);
                    }
                    if (strcmp(k->indices, "out of range") == 0 && kth < 3) {
                        const int64_t bad[3][3] = {{(int64_t)ycount, (int64_t)ycount + 1000, 0},
                                                   {(int64_t)ycount, (int64_t)(UINT64_C(1) << 63 | 5), 0},
                                                   {(int64_t)ycount, -1, INT64_MIN}};
                        const int which = k->index_type == CLOPS_DATA_TYPE_UINT32   ? 0
                                          : k->index_type == CLOPS_DATA_TYPE_UINT64 ? 1
                                                                                    : 2;
                        if (kth < 2 || which == 2) v = bad[which][kth];
                    }
                    const uint64_t at = offset_of(&k->ind, n, c, h, w) * isize;
                    if (isize == 4) {
                        const uint32_t u = (uint32_t)v;
                        memcpy(idata + at, &u, 4);
                    } else {
                        memcpy(idata + at, &v, 8);
                    }
                }
}

void conf_run_case(conf_run *run, const conf_case *k)
{
    clops_tensor_desc x = {k->type, {0}, k->packed ? NULL : k->x.strides};
    clops_tensor_desc y = {k->type, {0}, k->packed ? NULL : k->y.strides};
    clops_tensor_desc ind = {k->index_type, {0}, k->packed ? NULL : k->ind.strides};
    memcpy(x.sizes, k->x.sizes, sizeof x.sizes);
    memcpy(y.sizes, k->y.sizes, sizeof y.sizes);
    memcpy(ind.sizes, k->ind.sizes, sizeof ind.sizes);
    clops_depth_to_space_desc ds = {&x, &y, k->block, k->order};
    clops_max_unpooling_desc mu = {&x, &ind, &y, k->per_plane ? CLOPS_INDICES_PER_PLANE : CLOPS_INDICES_FLAT};
    const bool unpool = k->op == CLOPS_OPERATOR_MAX_UNPOOLING;
    const clops_operator_desc desc = {k->op, unpool ? (const void *)&mu : (const void *)&ds};
    if (run->counting) { /* the program it will ask for, and nothing else */
        conf_programs_case(run->programs, &desc);
        return;
    }
    clops_operator *op = NULL;
    char detail[512] = "";

    conf_data d = {0};
    d.in_bytes = (size_t)conf_span(&k->x) * run->esize;
    d.ind_bytes = unpool ? (size_t)conf_span(&k->ind) * clops_data_type_size(k->index_type) : 0;
    d.out_bytes = (size_t)conf_span(&k->y) * run->esize;
    d.input = malloc(d.in_bytes + 1);
    d.indices = malloc(d.ind_bytes + 1);
    d.start = malloc(d.out_bytes + 1);
    d.expected = malloc(d.out_bytes + 1);
    d.got = malloc(d.out_bytes + 1);
    if (!d.input || !d.indices || !d.start || !d.expected || !d.got) {
        check(run, k, "setup", false, "out of host memory");
        goto done;
    }
    if (k->input)
        memcpy(d.input, k->input, d.in_bytes);
    else
        fill_random(d.input, d.in_bytes, run->seed);
    if (unpool && k->index_data)
        memcpy(d.indices, k->index_data, d.ind_bytes);
    else if (unpool)
        make_indices(k, d.indices, d.ind_bytes, run->seed);
    run->seed++;
    fill_sentinel(d.start, d.out_bytes);
    memcpy(d.expected, d.start, d.out_bytes);
    d.want_status = CLOPS_SUCCESS;
    if (unpool) {
        if (conf_ref_max_unpooling(&k->x, d.input, &k->ind, d.indices, k->index_type, &k->y, d.expected, run->esize,
                                   false, k->per_plane))
            d.want_status = CLOPS_ERROR_INDEX_OUT_OF_RANGE; /* and the output untouched */
    } else {
        conf_ref_depth_space(k->op, k->order, k->block, &k->x, d.input, &k->y, d.expected, run->esize, false, NULL);
    }
    if (k->expected) /* The reference must agree with the specification's own example. */
        check(run, k, "reference", memcmp(d.expected, k->expected, d.out_bytes) == 0,
              "the tool's reference disagrees with the specification's example");

    clops_status st = clops_operator_create(run->ctx, &desc, &op);
    if (st != CLOPS_SUCCESS) {
        snprintf(detail, sizeof detail, "clops_operator_create: %s (%s)", clops_status_name(st),
                 clops_last_error_message());
        check(run, k, "create", false, detail);
        goto done;
    }
    clops_operator_info info;
    if (run->opencl && clops_operator_get_info(op, &info) == CLOPS_SUCCESS && info.backend == CLOPS_BACKEND_HOST) {
        char what[320];
        describe(what, sizeof what, k, "create");
        conf_report_fallback(run->report, what, info.fallback_reason);
    }
    /* Host memory: the caller's output is untouched on any error. */
    memcpy(d.got, d.start, d.out_bytes);
    const clops_host_buffers hb = {d.input, d.in_bytes, d.indices, d.ind_bytes, d.got, d.out_bytes};
    judge(run, k, &d, "host memory", clops_operator_execute_host(op, &hb), d.want_status, d.expected);
    if (!run->opencl) goto done;
    conf_cover_record(run, op);
    if (d.want_status == CLOPS_ERROR_INDEX_OUT_OF_RANGE) {
        check_unpool_out_of_range_cl(run, k, op, &d);
    } else {
        st = run_cl(run, op, &d, detail, sizeof detail);
        if (detail[0])
            check(run, k, "cl_mem", false, detail);
        else
            judge(run, k, &d, "cl_mem", st, CLOPS_SUCCESS, d.expected);
    }
    conf_cover_record(run, op);
done:
    clops_operator_free(op);
    free(d.input);
    free(d.indices);
    free(d.start);
    free(d.expected);
    free(d.got);
}

/* ---- the cases ------------------------------------------------------------------------- */

/* `layout` of {n, c, h, w}: "packed", "NHWC", "padded" (gaps after every row,
 * plane and batch), or "broadcast input" (inputs repeat along N: stride 0). */
static void set_layout(conf_layout *t, const char *layout, bool input, uint32_t n, uint32_t c, uint32_t h, uint32_t w)
{
    conf_packed(t, n, c, h, w);
    if (strcmp(layout, "NHWC") == 0) {
        t->strides[3] = c;
        t->strides[2] = (uint64_t)w * c;
        t->strides[1] = 1;
        t->strides[0] = (uint64_t)h * w * c;
    } else if (strcmp(layout, "padded") == 0) {
        t->strides[2] = (uint64_t)w + 3;
        t->strides[1] = (uint64_t)h * t->strides[2] + 5;
        t->strides[0] = (uint64_t)c * t->strides[1] + 7;
    } else if (strcmp(layout, "broadcast input") == 0 && input) {
        t->strides[0] = 0;
    }
}

static const char *const layouts[] = {"packed", "NHWC", "padded", "broadcast input"};

/* Shapes of the spatial side divided by the block size: {n, c, h, w} gives
 * the deep side {n, c*b², h, w} and the spatial side {n, c, h*b, w*b}; "odd
 * sizes" runs in every layout, the others packed. */
static const struct {
    const char *name;
    uint32_t n, c, h, w;
} shapes[] = {
    {"odd sizes", 2, 3, 3, 5}, {"one element", 1, 1, 1, 1}, {"empty batch", 0, 1, 2, 3},
    {"empty width", 1, 2, 2, 0}, {"long rows", 1, 2, 2, 131},
};

/* DepthToSpace or SpaceToDepth, every block size 1-8, every shape and layout. */
static void depth_space_cases(conf_run *run, clops_operator_type op, clops_depth_space_order order, clops_data_type type)
{
    for (uint32_t b = 1; b <= 8; b++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (size_t l = 0; l < (s == 0 ? sizeof layouts / sizeof layouts[0] : 1); l++) {
                conf_case k = {.op = op, .order = order, .type = type, .block = b, .layout = layouts[l],
                               .shape = shapes[s].name, .indices = "", .packed = l == 0};
                const uint32_t n = shapes[s].n, c = shapes[s].c, h = shapes[s].h, w = shapes[s].w;
                /* Deep side {n, c*b², h, w}, spatial side {n, c, h*b, w*b}. */
                const bool d2s = op == CLOPS_OPERATOR_DEPTH_TO_SPACE;
                set_layout(&k.x, layouts[l], true, n, d2s ? c * b * b : c, d2s ? h : h * b, d2s ? w : w * b);
                set_layout(&k.y, layouts[l], false, n, d2s ? c : c * b * b, d2s ? h * b : h, d2s ? w * b : w);
                conf_run_case(run, &k);
            }
}

/* MaxUnpooling with one index type: pooling-shaped indices in every layout,
 * then scattered, repeated and out-of-range ones, and the edge shapes. */
static void unpool_cases(conf_run *run, clops_data_type type, clops_data_type index_type)
{
    static const struct {
        const char *indices, *shape;
        uint32_t n, c, h, w, oh, ow; /* output {n, c, oh, ow} */
        bool all_layouts;
    } u[] = {
        {"pooling", "odd sizes", 2, 3, 3, 5, 6, 10, true},      {"pooling", "long rows", 1, 2, 2, 131, 4, 262, false},
        {"scattered", "odd sizes", 2, 3, 4, 7, 5, 9, false},    {"repeated", "odd sizes", 2, 3, 4, 7, 5, 9, false},
        {"out of range", "odd sizes", 2, 3, 4, 7, 5, 9, false}, {"scattered", "one element", 1, 1, 1, 1, 1, 1, false},
        {"scattered", "empty input", 1, 3, 0, 2, 4, 4, false},  {"scattered", "empty tensors", 0, 3, 2, 2, 4, 4, false},
    };
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
        for (size_t l = 0; l < (u[i].all_layouts ? sizeof layouts / sizeof layouts[0] : 1); l++) {
            conf_case k = {.op = CLOPS_OPERATOR_MAX_UNPOOLING, .type = type, .index_type = index_type,
                           .layout = layouts[l], .shape = u[i].shape, .indices = u[i].indices, .packed = l == 0};
            set_layout(&k.x, layouts[l], true, u[i].n, u[i].c, u[i].h, u[i].w);
            set_layout(&k.ind, layouts[l], false, u[i].n, u[i].c, u[i].h, u[i].w);
            set_layout(&k.y, layouts[l], false, u[i].n, u[i].c, u[i].oh, u[i].ow);
            conf_run_case(run, &k);
        }
}

/* The specification's examples (DirectML DepthToSpace1 both orders, its
 * SpaceToDepth, ONNX DepthToSpace both modes), with their printed outputs
 * (conformance_spec.h). */
static void spec_cases(conf_run *run, int type_index)
{
    const bool f32 = conf_types[type_index] == CLOPS_DATA_TYPE_FLOAT32;
    float fin[CONF_SPEC_COUNT], fdcr[CONF_SPEC_COUNT], fcrd[CONF_SPEC_COUNT]; /* ONNX's examples: the same values as float32 */
    for (int i = 0; i < CONF_SPEC_COUNT; i++) {
        fin[i] = (float)conf_spec_input[i];
        fdcr[i] = (float)conf_spec_dcr[i];
        fcrd[i] = (float)conf_spec_crd[i];
    }
    const struct {
        clops_operator_type op;
        clops_depth_space_order order;
        const char *name;
        const void *in, *out;
    } ex[] = {
        {CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_ORDER_DEPTH_COLUMN_ROW, f32 ? "ONNX DepthToSpace DCR example" : "DirectML DepthToSpace1 example 1",
         f32 ? (const void *)fin : conf_spec_input, f32 ? (const void *)fdcr : conf_spec_dcr},
        {CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_ORDER_COLUMN_ROW_DEPTH, f32 ? "ONNX DepthToSpace CRD example" : "DirectML DepthToSpace1 example 2",
         f32 ? (const void *)fin : conf_spec_input, f32 ? (const void *)fcrd : conf_spec_crd},
        {CLOPS_OPERATOR_SPACE_TO_DEPTH, CLOPS_ORDER_DEPTH_COLUMN_ROW, "DirectML SpaceToDepth example",
         f32 ? (const void *)fdcr : conf_spec_dcr, f32 ? (const void *)fin : conf_spec_input},
        {CLOPS_OPERATOR_SPACE_TO_DEPTH, CLOPS_ORDER_COLUMN_ROW_DEPTH, "inverse of DirectML DepthToSpace1 example 2",
         f32 ? (const void *)fcrd : conf_spec_crd, f32 ? (const void *)fin : conf_spec_input},
    };
    for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
        const bool d2s = ex[i].op == CLOPS_OPERATOR_DEPTH_TO_SPACE;
        conf_case k = {.op = ex[i].op, .order = ex[i].order, .type = conf_types[type_index], .block = 2,
                       .layout = "packed", .shape = ex[i].name, .indices = "", .packed = true, .input = ex[i].in,
                       .expected = ex[i].out};
        conf_packed(&k.x, 1, d2s ? 8 : 2, d2s ? 2 : 4, d2s ? 3 : 6);
        conf_packed(&k.y, 1, d2s ? 2 : 8, d2s ? 4 : 2, d2s ? 6 : 3);
        run->row = (d2s ? 0 : 2) + (ex[i].order == CLOPS_ORDER_COLUMN_ROW_DEPTH);
        conf_run_case(run, &k);
    }
}

/* ---- tensors near the allocation limit and past 2^32 elements (not --quick) ------------ */

/* Bytes of memory the system can still give, from /proc/meminfo where there is one. */
static uint64_t available_memory(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) break;
    if (f) fclose(f);
    if (kib) return (uint64_t)kib * 1024;
    const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

/* One big UINT8 DepthToSpace (DCR, block 2, input {1, 4, h, w}), compared
 * element by element with the reference without an expected copy. */
static void run_big(conf_run *run, const clops_device_info *info, const char *shape, uint32_t h, uint32_t w)
{
    conf_case k = {.op = CLOPS_OPERATOR_DEPTH_TO_SPACE, .order = CLOPS_ORDER_DEPTH_COLUMN_ROW,
                   .type = CLOPS_DATA_TYPE_UINT8, .block = 2, .layout = "packed", .shape = shape, .indices = "",
                   .packed = true};
    conf_packed(&k.x, 1, 4, h, w);
    conf_packed(&k.y, 1, 1, 2 * h, 2 * w);
    char what[320], why[256];
    describe(what, sizeof what, &k, run->opencl ? "cl_mem" : "host memory");
    const uint64_t bytes = conf_count(&k.x), need = (run->opencl ? 4 : 2) * bytes, avail = available_memory();
    if (info && bytes > info->max_alloc_bytes) {
        snprintf(why, sizeof why, "%" PRIu64 " bytes exceed the device's maximum allocation of %" PRIu64, bytes,
                 info->max_alloc_bytes);
        if (!run->counting) conf_report_skip(run->report, what, why);
        return;
    }
    if (need > avail / 10 * 8 || bytes > SIZE_MAX / 2) {
        snprintf(why, sizeof why, "needs %" PRIu64 " MiB of memory, %" PRIu64 " MiB available", need >> 20, avail >> 20);
        if (!run->counting) conf_report_skip(run->report, what, why);
        return;
    }
    clops_tensor_desc x = {k.type, {1, 4, h, w}, NULL}, y = {k.type, {1, 1, 2 * h, 2 * w}, NULL};
    clops_depth_to_space_desc ds = {&x, &y, 2, k.order};
    const clops_operator_desc desc = {k.op, &ds};
    if (run->counting) {
        conf_programs_case(run->programs, &desc);
        return;
    }
    fprintf(stderr, "conformance: %s (%" PRIu64 " MiB)\n", what, bytes >> 20);
    run->row = 0;
    run->type_index = 10; /* UINT8 */
    conf_data d = {0};
    d.in_bytes = d.out_bytes = (size_t)bytes;
    d.input = malloc(d.in_bytes);
    d.got = malloc(d.out_bytes);
    d.start = d.got; /* the device's output starts from it: any content */
    clops_operator *op = NULL;
    char detail[512] = "";
    clops_status st = CLOPS_ERROR_OUT_OF_HOST_MEMORY;
    if (d.input && d.got) {
        for (size_t i = 0; i < d.in_bytes; i++) d.input[i] = (unsigned char)(i * 0x9E3779B1u >> 13);
        memset(d.got, 0xEE, d.out_bytes);
        st = clops_operator_create(run->ctx, &desc, &op);
    }
    if (st == CLOPS_SUCCESS && run->opencl) {
        st = run_cl(run, op, &d, detail, sizeof detail);
    } else if (st == CLOPS_SUCCESS) {
        const clops_host_buffers hb = {d.input, d.in_bytes, NULL, 0, d.got, d.out_bytes};
        st = clops_operator_execute_host(op, &hb);
    }
    if (st != CLOPS_SUCCESS && !detail[0])
        snprintf(detail, sizeof detail, "%s (%s)", clops_status_name(st), clops_last_error_message());
    if (st == CLOPS_SUCCESS) {
        uint64_t first = 0;
        const uint64_t bad = conf_ref_depth_space(k.op, k.order, 2, &k.x, d.input, &k.y, d.got, 1, true, &first);
        if (bad)
            snprintf(detail, sizeof detail, "%" PRIu64 " elements differ, the first at element offset %" PRIu64, bad,
                     first);
    }
    check(run, &k, run->opencl ? "cl_mem" : "host memory", !detail[0], detail);
    clops_operator_free(op);
    free(d.input);
    free(d.got);
}

static void big_cases(conf_run *run, const clops_device_info *info)
{
    if (info) {
        /* The largest such tensor at least 64 KiB below the device's maximum allocation. */
        const uint32_t w = 4096;
        const uint64_t h = info->max_alloc_bytes / (4u * w);
        if (h > 16 && h - 16 <= UINT32_MAX / 2)
            run_big(run, info, "near the maximum allocation", (uint32_t)(h - 16), w);
    }
    run_big(run, info, "past 2^32 elements", 32768, 32769); /* 4 * 32768 * 32769 > 2^32 */
}

/* ---- one device, the command ----------------------------------------------------------- */

static int type_index_of(clops_data_type t)
{
    for (int i = 0; i < CONF_TYPES; i++)
        if (conf_types[i] == t) return i;
    return 0;
}

/* Every case of the run, in order: run, or in counting mode (run->counting) only named. */
static void all_cases(conf_run *run, const clops_device_info *info, bool quick)
{
    conf_report *report = run->report;
    const char *name = clops_context_device_name(run->ctx);
    static const clops_data_type index_types[] = {CLOPS_DATA_TYPE_UINT32, CLOPS_DATA_TYPE_UINT64, CLOPS_DATA_TYPE_INT64};
    const int groups = CONF_ROWS * CONF_TYPES;
    /* Progress on a terminal, or for a group that failed or took over a second:
     * a quick run on the host (75 groups in a fraction of a second) prints none. */
    const bool tty = isatty(STDERR_FILENO);
    for (int row = 0; row < CONF_ROWS; row++)
        for (int t = 0; t < CONF_TYPES; t++) {
            const unsigned long long failed = conf_report_failed(report);
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            run->row = row;
            run->type_index = t;
            run->esize = clops_data_type_size(conf_types[t]);
            if (row < 4) {
                const clops_operator_type op = row < 2 ? CLOPS_OPERATOR_DEPTH_TO_SPACE : CLOPS_OPERATOR_SPACE_TO_DEPTH;
                const clops_depth_space_order order = row % 2 ? CLOPS_ORDER_COLUMN_ROW_DEPTH : CLOPS_ORDER_DEPTH_COLUMN_ROW;
                depth_space_cases(run, op, order, conf_types[t]);
                conf_cover_depth_space_cases(run, op, order, conf_types[t]);
            } else
                for (size_t i = 0; i < sizeof index_types / sizeof index_types[0]; i++) {
                    unpool_cases(run, conf_types[t], index_types[i]);
                    conf_cover_unpool_cases(run, conf_types[t], index_types[i]);
                }
            if (run->counting) continue;
            clock_gettime(CLOCK_MONOTONIC, &t1);
            const double seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
            const bool slow = seconds > 1.0;
            const bool group_failed = conf_report_failed(report) > failed;
            /* A slow group's line says how long it took (test_conformance_quiet_progress reads that). */
            char took[32] = "";
            if (slow) snprintf(took, sizeof took, " (%.1f s)", seconds);
            if (tty || slow || group_failed)
                fprintf(stderr, "conformance: %s: [%2d/%d] %s %s%s%s\n", name, row * CONF_TYPES + t + 1, groups,
                        conf_row_name(row), clops_data_type_name(conf_types[t]), group_failed ? ": FAILED" : "", took);
        }
    for (int i = 0; i < 2; i++) {
        run->type_index = type_index_of(i ? CLOPS_DATA_TYPE_FLOAT32 : CLOPS_DATA_TYPE_UINT32);
        run->esize = 4;
        spec_cases(run, run->type_index);
    }
    run->esize = 1;
    if (!quick) big_cases(run, info);
}

static void run_device(conf_report *report, clops_context *ctx, const clops_device_info *info, bool quick)
{
    conf_run run = {ctx, clops_context_backend(ctx) == CLOPS_BACKEND_OPENCL, report, 0x5EED, 0, 0, 0, NULL, NULL, false};
    run.cover = run.opencl ? conf_cover_new(ctx) : NULL;
    conf_report_begin_device(report, info);
    if (run.opencl) { /* first, what the run will compile there (conformance_count.c) */
        conf_run counting = run;
        counting.counting = true;
        counting.programs = conf_programs_new(ctx);
        all_cases(&counting, info, quick);
        conf_programs_finish(counting.programs, report, info);
        conf_programs_free(counting.programs);
    }
    all_cases(&run, info, quick);
    conf_cover_finish(&run);
    conf_cover_free(run.cover);
    conf_report_end_device(report, stdout);
}

/* The clops_device_info of an OpenCL context's device (false if not listed). */
static bool find_info(clops_context *ctx, clops_device_info *out)
{
    cl_device_id dev = NULL;
    if (clGetContextInfo(clops_context_cl_context(ctx), CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL) != CL_SUCCESS)
        return false;
    size_t count = 0;
    if (clops_device_list(NULL, 0, &count) != CLOPS_SUCCESS || count == 0) return false;
    clops_device_info *all = calloc(count, sizeof *all);
    bool found = false;
    if (all && clops_device_list(all, count, &count) == CLOPS_SUCCESS)
        for (size_t i = 0; i < count && !found; i++)
            if (all[i].device == dev) {
                *out = all[i];
                found = true;
            }
    free(all);
    return found;
}

/* Opens a context on `index` (a device of clops_device_list, CLOPS_DEVICE_HOST
 * or CLOPS_DEVICE_DEFAULT; `label` names it) and runs everything on it; false
 * when the context cannot be made. */
static bool run_on(conf_report *report, int index, const char *label, bool quick, const run_settings *settings)
{
    clops_context *ctx = NULL;
    clops_context_options o;
    clops_status st = run_settings_options(settings, index, &o);
    if (st == CLOPS_SUCCESS) st = clops_context_create_with_options(&o, &ctx);
    if (st == CLOPS_SUCCESS) run_watchdog_device(clops_context_device_name(ctx));
    if (st != CLOPS_SUCCESS) {
        fprintf(stderr, "clops: conformance: device %s: %s: %s\n", label,
                clops_status_name(st), clops_last_error_message());
        return false;
    }
    clops_device_info info;
    const bool opencl = clops_context_backend(ctx) == CLOPS_BACKEND_OPENCL;
    if (opencl && !find_info(ctx, &info)) {
        fprintf(stderr, "clops: conformance: the context's device is not in clops_device_list()\n");
        clops_context_free(ctx);
        return false;
    }
    run_device(report, ctx, opencl ? &info : NULL, quick);
    clops_context_free(ctx);
    return true;
}

/* Whether device `index` is one of clops_device_list()'s (parsed by opt_device,
 * the parser of every command's --device); -1 with "device N requested, M
 * devices available" in err where it is not. */
static int device_index_check(unsigned index, char *err, size_t err_size)
{
    size_t count = 0;
    if (clops_device_list(NULL, 0, &count) != CLOPS_SUCCESS) count = 0;
    if (index < count) return 0;
    if (count == 0)
        set_err(err, err_size, "device %u requested, but no OpenCL platform has a device", index);
    else
        set_err(err, err_size, "device %u requested, %zu device%s available ('clops devices' lists them)", index,
                count, count == 1 ? "" : "s");
    return -1;
}

/* --device N|host|all */
static int opt_conformance_device(cli_args *args, const char *value, char *err, size_t err_size)
{
    if (strcmp(value, "all") == 0) {
        args->device = DEVICE_ALL;
        return 0;
    }
    if (opt_device(args, value, err, err_size) == 0) return 0;
    set_err(err, err_size, "--device needs N (a device of 'clops devices'), host or all, not '%s'", value);
    return -1;
}

static int opt_json_file(cli_args *args, const char *value, char *err, size_t err_size)
{
    if (value[0] == '\0') {
        set_err(err, err_size, "--json needs a file name");
        return -1;
    }
    args->json_file = value;
    return 0;
}

static int run_conformance(const cli_command *cmd, const cli_args *args)
{
    /* An index past the devices is refused before anything runs: as an int it
     * could read as CLOPS_DEVICE_HOST or CLOPS_DEVICE_DEFAULT (4294967294, 4294967295). */
    char err[ERR_SIZE];
    if (args->device == DEVICE_INDEX && device_index_check(args->device_index, err, sizeof err) != 0)
        return usage_error(cmd, err);
    const bool quick = args->quick != 0;
    /* What the report says it ran: this very command line, quoted for a shell. */
    char *command = shell_command_line("clops conformance", args->argc, args->argv);
    conf_report *report = command ? conf_report_new(command, quick) : NULL;
    free(command);
    if (!report) {
        fprintf(stderr, "clops: conformance: out of memory\n");
        return 1;
    }
    bool ok = !args->json_file || conf_report_open_json(report, args->json_file);
    if (!ok) {
        conf_report_free(report);
        return 1;
    }
    run_watchdog_start(&args->settings);
    if (args->device == DEVICE_ALL) {
        size_t count = 0;
        ok = clops_device_list(NULL, 0, &count) == CLOPS_SUCCESS && count <= INT32_MAX;
        for (size_t i = 0; ok && i < count; i++) {
            char label[24];
            snprintf(label, sizeof label, "%zu", i);
            ok = run_on(report, (int)i, label, quick, &args->settings);
        }
        if (ok) ok = run_on(report, CLOPS_DEVICE_HOST, "host", quick, &args->settings);
    } else if (args->device == DEVICE_INDEX) { /* checked above: below the count, so an int */
        char label[24];
        snprintf(label, sizeof label, "%u", args->device_index);
        ok = run_on(report, (int)args->device_index, label, quick, &args->settings);
    } else {
        ok = args->device == DEVICE_HOST ? run_on(report, CLOPS_DEVICE_HOST, "host", quick, &args->settings)
                                         : run_on(report, CLOPS_DEVICE_DEFAULT, "(default)", quick, &args->settings);
    }
    run_watchdog_stop(); /* the device work is done: what follows writes the report */
    if (ok && args->json_file) ok = conf_report_write_json(report);
    const unsigned long long passed = conf_report_passed(report), failed = conf_report_failed(report);
    printf("\n%llu passed, %llu failed\n", passed, failed);
    conf_report_free(report);
    return ok && failed == 0 && passed > 0 ? 0 : 1;
}

static const cli_option conformance_options[] = {
    {"--device", "N|host|all", 0, opt_conformance_device,
     "device N of 'clops devices', the host backend, or every device and then the host (default: as "
     "CLOPS_DEVICE, else the first GPU, else any device, else the host)", 0},
    CLI_FLAG("--quick", quick, "leave out the big tensors"),
    {"--json", "FILE", 0, opt_json_file,
     "write a report: device identity, plan, the command line, table, failures, plan coverage (FILE is "
     "checked before the run; a regular file is replaced when the run ends)", 0},
    {"--fallback", "allow|never", 0, opt_fallback,
     "whether an operator the device cannot run may run on the host (default: CLOPS_FALLBACK, else allow); "
     "under never those checks fail", 0},
    {"--timeout", "SECONDS", 0, opt_timeout,
     "end the whole run (exit 1, naming the device, no report written) if it has not finished within "
     "SECONDS (default: CLOPS_TIMEOUT, else none)", 0},
    OPT_HELP, OPT_END};

const cli_command cli_conformance_command = {
    "conformance", "", 0,
    "Runs every operator, order, data type, block size 1-8 and index type, in packed,\n"
    "NHWC, padded and broadcast layouts, with pooling-shaped, scattered, repeated and\n"
    "out-of-range indices, empty, one-element and odd-sized tensors and the\n"
    "specification's examples, on host memory and on cl_mem buffers, and checks every\n"
    "output byte against a plain per-element reference. MaxUnpooling also runs shapes\n"
    "that reach every plan the device would choose (clear+serial, windows, pool,\n"
    "planes, the general path); on a device the report lists the kernels each group\n"
    "reached and fails where a kernel the device could take was not. Without --quick,\n"
    "also tensors near the device's maximum allocation and past 2^32 elements where\n"
    "the device and memory can hold them.",
    conformance_options,
    "Progress on stderr; a table and the plan coverage per device on stdout, then\n"
    "\"N passed, M failed\".\n"
    "Exit status: 0 when nothing failed, 1 when a check failed, 2 on a usage error.",
    run_conformance};

int clops_conformance_main(int argc, char **argv)
{
    return dispatch(&cli_conformance_command, argc - 1, argv + 1);
}
