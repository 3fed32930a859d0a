/*
 * test_common.h - shared helpers of the clops Check suites: the type table, a
 * seeded PRNG, the two backends (host and the default OpenCL device), and
 * runners that execute one operator on every path and compare bytes exactly.
 *
 * Header only (everything static), so each suite executable includes it once.
 *
 * Backends: main() calls tc_main(), which creates the host context and the
 * default-device context once for the whole suite (program builds are
 * expensive), runs the suite without fork (an OpenCL context must not cross a
 * fork), and frees them. If clops_context_create() gives the host backend (no
 * OpenCL device), the OpenCL half of every test is skipped, a message says so,
 * and the program exits 77 (ctest: SKIPPED) unless a test failed; with
 * CLOPS_REQUIRE_DEVICE=1 a missing device is a failure instead.
 *
 * CLOPS_TEST_DEVICE chooses the OpenCL device instead of clops_context_create():
 * an index of clops_device_list(), or text found (ignoring case) in a device's
 * "platform: device" name, e.g. CLOPS_TEST_DEVICE=rusticl; the first match wins
 * and no match is a fatal error, never a silent substitute.
 */
#ifndef CLOPS_TEST_COMMON_H
#define CLOPS_TEST_COMMON_H

#include <check.h>
#include <clops/clops.h>

#include <ctype.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite.h"

/* ---- types -------------------------------------------------------------------- */
typedef struct tc_type_info {
    clops_data_type type;
    const char *name;
    size_t size;
} tc_type_info;

#define TC_NUM_TYPES 15
static const tc_type_info tc_types[TC_NUM_TYPES] = {
    {CLOPS_DATA_TYPE_FLOAT32, "FLOAT32", 4},     {CLOPS_DATA_TYPE_FLOAT16, "FLOAT16", 2},
    {CLOPS_DATA_TYPE_UINT32, "UINT32", 4},       {CLOPS_DATA_TYPE_UINT16, "UINT16", 2},
    {CLOPS_DATA_TYPE_UINT8, "UINT8", 1},         {CLOPS_DATA_TYPE_INT32, "INT32", 4},
    {CLOPS_DATA_TYPE_INT16, "INT16", 2},         {CLOPS_DATA_TYPE_INT8, "INT8", 1},
    {CLOPS_DATA_TYPE_FLOAT64, "FLOAT64", 8},     {CLOPS_DATA_TYPE_UINT64, "UINT64", 8},
    {CLOPS_DATA_TYPE_INT64, "INT64", 8},         {CLOPS_DATA_TYPE_BOOL, "BOOL", 1},
    {CLOPS_DATA_TYPE_BFLOAT16, "BFLOAT16", 2},   {CLOPS_DATA_TYPE_COMPLEX64, "COMPLEX64", 8},
    {CLOPS_DATA_TYPE_COMPLEX128, "COMPLEX128", 16},
};

static inline const tc_type_info *tc_type(clops_data_type t)
{
    for (int i = 0; i < TC_NUM_TYPES; i++)
        if (tc_types[i].type == t)
            return &tc_types[i];
    ck_abort_msg("test bug: unknown data type %d", (int)t);
    return NULL;
}

static inline const char *tc_order_name(clops_depth_space_order o)
{
    return o == CLOPS_ORDER_DEPTH_COLUMN_ROW ? "DCR" : o == CLOPS_ORDER_COLUMN_ROW_DEPTH ? "CRD" : "order?";
}

/* ---- PRNG (splitmix64) and fills --------------------------------------------------- */
static inline uint64_t tc_rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Random bit patterns: for float types NaNs with payloads, denormals, -0.0 and
 * infinities all turn up naturally. */
static inline void tc_fill_random(void *p, size_t n, uint64_t seed)
{
    unsigned char *b = p;
    uint64_t s = seed;
    size_t i = 0;
    while (i < n) {
        uint64_t r = tc_rng_next(&s);
        for (int k = 0; k < 8 && i < n; k++, i++)
            b[i] = (unsigned char)(r >> (8 * k));
    }
}

/* A position-dependent pattern for memory that must stay untouched. */
static inline void tc_fill_sentinel(void *p, size_t n)
{
    unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(0xA5u ^ (unsigned)(i * 0x3Bu));
}

static inline void *tc_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    ck_assert_msg(p != NULL, "test: out of memory (%zu bytes)", n);
    return p;
}

static inline void *tc_memdup(const void *src, size_t n)
{
    void *p = tc_malloc(n);
    if (n)
        memcpy(p, src, n);
    return p;
}

/* ---- tensors ------------------------------------------------------------------------ */
static inline uint64_t tc_span(const uint32_t sizes[4], const uint64_t *strides)
{
    uint64_t packed[4];
    if (!strides) {
        packed[3] = 1;
        packed[2] = sizes[3];
        packed[1] = (uint64_t)sizes[2] * sizes[3];
        packed[0] = (uint64_t)sizes[1] * sizes[2] * sizes[3];
        strides = packed;
    }
    uint64_t span = 1;
    for (int d = 0; d < 4; d++) {
        if (sizes[d] == 0)
            return 0;
        span += (uint64_t)(sizes[d] - 1) * strides[d];
    }
    return span;
}

static inline size_t tc_tensor_bytes(const clops_tensor_desc *t)
{
    return (size_t)tc_span(t->sizes, t->strides) * tc_type(t->data_type)->size;
}

/* "N,C,H,W" into buf. */
static inline const char *tc_shape_str(char *buf, size_t n, const uint32_t s[4])
{
    snprintf(buf, n, "%" PRIu32 "x%" PRIu32 "x%" PRIu32 "x%" PRIu32, s[0], s[1], s[2], s[3]);
    return buf;
}

/* ---- backends ------------------------------------------------------------------------- */
static clops_context *tc_host_ctx;  /* clops_context_create_host() */
static clops_context *tc_dev_ctx;   /* clops_context_create(), NULL when it is the host */
static int tc_device_missing;

#define TC_MAX_BACKENDS 2
static inline int tc_backend_count(void)
{
    return tc_dev_ctx ? 2 : 1;
}

static inline clops_context *tc_backend(int i)
{
    return i == 0 ? tc_host_ctx : tc_dev_ctx;
}

/* The index in clops_device_list() of the suites' OpenCL device, as --device
 * takes it (the CLI's tests run the suite's device by number). */
static inline void tc_device_index_arg(char *buf, size_t size)
{
    cl_device_id dev = NULL;
    ck_assert_int_eq(clGetContextInfo(clops_context_cl_context(tc_dev_ctx), CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL),
                     CL_SUCCESS);
    clops_device_info infos[64];
    size_t count = 0;
    ck_assert_int_eq(clops_device_list(infos, 64, &count), CLOPS_SUCCESS);
    for (size_t i = 0; i < count && i < 64; i++)
        if (infos[i].device == dev) {
            snprintf(buf, size, "%zu", i);
            return;
        }
    ck_abort_msg("the suite's device is not in clops_device_list()");
}

static inline const char *tc_backend_name(int i)
{
    return i == 0 ? "host backend" : "OpenCL device";
}

/* Whether `text` contains `want`, ignoring case. */
static inline int tc_contains_nocase(const char *text, const char *want)
{
    for (; *text; text++) {
        size_t i = 0;
        while (want[i] && text[i] && tolower((unsigned char)text[i]) == tolower((unsigned char)want[i]))
            i++;
        if (!want[i])
            return 1;
    }
    return !*want;
}

/* The device CLOPS_TEST_DEVICE names (see the top of this file); exits on no match. */
static inline clops_status tc_context_create_chosen(const char *want, clops_context **out)
{
    size_t count = 0;
    clops_device_info infos[64];
    clops_status st = clops_device_list(infos, 64, &count);
    if (st != CLOPS_SUCCESS)
        return st;
    char *end;
    const unsigned long index = strtoul(want, &end, 10);
    for (size_t i = 0; i < count && i < 64; i++) {
        char name[300];
        snprintf(name, sizeof name, "%s: %s", infos[i].platform_name, infos[i].device_name);
        if ((*end == '\0' && end != want && index == i) || (*end != '\0' && tc_contains_nocase(name, want)))
            return clops_context_create_device((unsigned)i, out);
    }
    fprintf(stderr, "FATAL: CLOPS_TEST_DEVICE=%s names none of the %zu OpenCL devices\n", want, count);
    exit(1);
}

/* A context on the suites' device: the one CLOPS_TEST_DEVICE names, else clops_context_create's. */
static inline clops_status tc_context_create_test_device(clops_context **out)
{
    const char *chosen = getenv("CLOPS_TEST_DEVICE");
    return chosen && *chosen ? tc_context_create_chosen(chosen, out) : clops_context_create(out);
}

static inline void tc_contexts_create(void)
{
    clops_status st = clops_context_create_host(&tc_host_ctx);
    if (st != CLOPS_SUCCESS || !tc_host_ctx) {
        fprintf(stderr, "FATAL: clops_context_create_host failed: %s (%s)\n", clops_status_name(st),
                clops_last_error_message());
        exit(1);
    }
    clops_context *dev = NULL;
    st = tc_context_create_test_device(&dev);
    if (st != CLOPS_SUCCESS || !dev) {
        fprintf(stderr, "FATAL: clops_context_create failed: %s (%s)\n", clops_status_name(st),
                clops_last_error_message());
        exit(1);
    }
    if (clops_context_backend(dev) == CLOPS_BACKEND_HOST) {
        clops_context_free(dev);
        tc_device_missing = 1;
        fprintf(stderr,
                "SKIP: no OpenCL device (clops_context_create() chose the host backend); the OpenCL "
                "half of every test is SKIPPED, only the host backend is tested.\n");
    } else {
        tc_dev_ctx = dev;
        fprintf(stderr, "testing the host backend and OpenCL device \"%s\"\n",
                clops_context_device_name(dev));
    }
}

/* A context around the caller's own out-of-order queue on the default device
 * (clops_context_create_from_cl), made on first use; NULL (with a message) when
 * there is no device or the device has no out-of-order queues. */
static clops_context *tc_ooo_ctx;
static int tc_ooo_tried;

static inline clops_context *tc_ooo_context(void)
{
    if (tc_ooo_tried || !tc_dev_ctx)
        return tc_ooo_ctx;
    tc_ooo_tried = 1;
    cl_context c = clops_context_cl_context(tc_dev_ctx);
    cl_device_id dev = NULL;
    cl_int err = clGetContextInfo(c, CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL);
    ck_assert_msg(err == CL_SUCCESS && dev, "clGetContextInfo(CL_CONTEXT_DEVICES) failed: %d", (int)err);
    cl_command_queue_properties props = 0;
    clGetDeviceInfo(dev, CL_DEVICE_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    if (!(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)) {
        fprintf(stderr, "note: the device has no out-of-order queues; the out-of-order queue cases are skipped\n");
        return NULL;
    }
    cl_command_queue q = clCreateCommandQueue(c, dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
    ck_assert_msg(err == CL_SUCCESS && q, "clCreateCommandQueue(out of order) failed: %d", (int)err);
    clops_status st = clops_context_create_from_cl(c, dev, q, &tc_ooo_ctx);
    clReleaseCommandQueue(q); /* clops retains it */
    ck_assert_msg(st == CLOPS_SUCCESS && tc_ooo_ctx, "clops_context_create_from_cl(out-of-order queue): %s (%s)",
                  clops_status_name(st), clops_last_error_message());
    ck_assert_msg(clops_context_queue(tc_ooo_ctx) == q, "clops_context_queue is not the caller's queue");
    return tc_ooo_ctx;
}

/* Runs the suite and returns the exit code for main(). */
static inline int tc_main(Suite *s)
{
    if (tc_listing_cases())
        return tc_run_failures(s, 1); /* names the cases only: no context, no test */
    tc_contexts_create();
    /* Never fork: the OpenCL contexts above must not cross a fork(). */
    const int failed = tc_run_failures(s, 1);
    clops_context_free(tc_ooo_ctx);
    clops_context_free(tc_dev_ctx);
    clops_context_free(tc_host_ctx);
    tc_ooo_ctx = NULL;
    tc_dev_ctx = tc_host_ctx = NULL;
    if (failed)
        return EXIT_FAILURE;
    if (tc_device_missing) {
        const char *req = getenv("CLOPS_REQUIRE_DEVICE");
        if (req && strcmp(req, "1") == 0) {
            fprintf(stderr, "FAIL: CLOPS_REQUIRE_DEVICE=1 but no OpenCL device was found\n");
            return EXIT_FAILURE;
        }
        fprintf(stderr, "SKIP: OpenCL half skipped (no device); exiting 77\n");
        return 77;
    }
    return tc_skip_status(EXIT_SUCCESS);
}

/* ---- comparisons ---------------------------------------------------------------------- */
static inline void tc_hex(char *buf, size_t n, const unsigned char *p, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = len; i-- > 0 && o + 3 < n;) /* most significant byte first */
        o += (size_t)snprintf(buf + o, n - o, "%02x", p[i]);
}

/* Bit-exact comparison of two buffers of `bytes`; on a mismatch fails with the
 * element index, both values in hex, and how many elements differ. */
static inline void tc_check_bytes(const void *got, const void *want, size_t bytes, size_t esize,
                                  const char *label, const char *path)
{
    const unsigned char *g = got, *w = want;
    if (bytes == 0 || memcmp(g, w, bytes) == 0)
        return;
    size_t first = SIZE_MAX, ndiff = 0;
    for (size_t e = 0; e * esize < bytes; e++) {
        size_t len = bytes - e * esize < esize ? bytes - e * esize : esize;
        if (memcmp(g + e * esize, w + e * esize, len) != 0) {
            if (first == SIZE_MAX)
                first = e;
            ndiff++;
        }
    }
    char hg[40], hw[40];
    size_t len = bytes - first * esize < esize ? bytes - first * esize : esize;
    tc_hex(hg, sizeof hg, g + first * esize, len);
    tc_hex(hw, sizeof hw, w + first * esize, len);
    ck_abort_msg("%s [%s]: output buffer differs at element %zu (byte %zu of %zu): got 0x%s, "
                 "want 0x%s; %zu of %zu element slots differ",
                 label, path, first, first * esize, bytes, hg, hw, ndiff, (bytes + esize - 1) / esize);
}

/* ---- execution paths ------------------------------------------------------------------- */
/* Buffers of one execution. `out_init` is what the output buffer holds before
 * the run (a sentinel), `out_bytes` the size of the output buffer given to clops. */
typedef struct tc_bufs {
    const void *in;
    size_t in_bytes;
    const void *idx;
    size_t idx_bytes;
    const void *out_init;
    size_t out_bytes;
} tc_bufs;

#define TC_CL_CHECK(call, label)                                                                   \
    do {                                                                                           \
        cl_int tc_err_ = (call);                                                                   \
        ck_assert_msg(tc_err_ == CL_SUCCESS, "%s: OpenCL call %s failed with %d", (label), #call,  \
                      (int)tc_err_);                                                               \
    } while (0)

/* clops_operator_execute_host into `out` (initialised from out_init). */
static inline clops_status tc_run_execute_host(clops_operator *op, const tc_bufs *b, void *out)
{
    if (b->out_bytes)
        memcpy(out, b->out_init, b->out_bytes);
    clops_host_buffers hb = {b->in, b->in_bytes, b->idx, b->idx_bytes, b->out_bytes ? out : NULL,
                             b->out_bytes};
    return clops_operator_execute_host(op, &hb);
}

/* clops_host_run (no context at all) into `out`. */
static inline clops_status tc_run_host_run(const clops_operator_desc *desc, const tc_bufs *b, void *out)
{
    if (b->out_bytes)
        memcpy(out, b->out_init, b->out_bytes);
    clops_host_buffers hb = {b->in, b->in_bytes, b->idx, b->idx_bytes, b->out_bytes ? out : NULL,
                             b->out_bytes};
    return clops_host_run(desc, &hb);
}

/* Makes a cl_mem of `bytes` (NULL when 0) and enqueues a non-blocking write of
 * `src` into it; the write's event goes to events[*nev]. */
/* Releases the input, indices and output buffers of one run; NULL ones are skipped. */
static inline void tc_release_buffers(cl_mem in, cl_mem idx, cl_mem out)
{
    const cl_mem bufs[3] = {in, idx, out};
    for (int i = 0; i < 3; i++)
        if (bufs[i])
            clReleaseMemObject(bufs[i]);
}

static inline cl_mem tc_cl_upload(clops_context *ctx, const void *src, size_t bytes, cl_event *events,
                                  cl_uint *nev, const char *label)
{
    if (bytes == 0)
        return NULL;
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(clops_context_cl_context(ctx), CL_MEM_READ_WRITE, bytes, NULL, &err);
    ck_assert_msg(err == CL_SUCCESS && m, "%s: clCreateBuffer(%zu) failed with %d", label, bytes, (int)err);
    if (src) {
        cl_event ev = NULL;
        TC_CL_CHECK(clEnqueueWriteBuffer(clops_context_queue(ctx), m, CL_FALSE, 0, bytes, src, 0, NULL, &ev),
                    label);
        events[(*nev)++] = ev;
    }
    return m;
}

/* clops_operator_execute on cl_mem buffers made here: the uploads are
 * non-blocking and their events form the wait list; the returned event is
 * waited on and must be CL_COMPLETE. The output buffer is read back into `out`
 * (also after a failing status, once the queue is finished). */
static inline clops_status tc_run_execute_cl(clops_context *ctx, clops_operator *op, const tc_bufs *b,
                                             void *out, const char *label)
{
    cl_event waits[3];
    cl_uint nwait = 0;
    cl_mem in = tc_cl_upload(ctx, b->in, b->in_bytes, waits, &nwait, label);
    cl_mem idx = tc_cl_upload(ctx, b->idx, b->idx_bytes, waits, &nwait, label);
    cl_mem o = tc_cl_upload(ctx, b->out_init, b->out_bytes, waits, &nwait, label);
    clops_buffers cb = {in, idx, o};
    cl_event done = NULL;
    clops_status st = clops_operator_execute(op, &cb, nwait, nwait ? waits : NULL, &done);
    if (st == CLOPS_SUCCESS) {
        ck_assert_msg(done != NULL, "%s: clops_operator_execute succeeded but returned no event", label);
    }
    if (done) {
        TC_CL_CHECK(clWaitForEvents(1, &done), label);
        cl_int es = 0;
        TC_CL_CHECK(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof es, &es, NULL), label);
        ck_assert_msg(es == CL_COMPLETE, "%s: returned event status %d after clWaitForEvents", label, (int)es);
        clReleaseEvent(done);
    }
    /* Bad MaxUnpooling indices come through the asynchronous status. */
    if (st == CLOPS_SUCCESS) st = clops_operator_last_status(op);
    TC_CL_CHECK(clFinish(clops_context_queue(ctx)), label);
    if (o)
        TC_CL_CHECK(clEnqueueReadBuffer(clops_context_queue(ctx), o, CL_TRUE, 0, b->out_bytes, out, 0,
                                        NULL, NULL),
                    label);
    for (cl_uint i = 0; i < nwait; i++)
        clReleaseEvent(waits[i]);
    tc_release_buffers(in, idx, o);
    return st;
}

/* Creates the operator; on an OpenCL context it must really run on the device:
 * a silent fallback to the host kernels (after a failed build, say) would let
 * the device half of a test pass without testing the device. Set
 * CLOPS_TEST_ALLOW_FALLBACK=1 to accept fallbacks. */
static inline clops_operator *tc_create(clops_context *ctx, const clops_operator_desc *desc,
                                        const char *label, const char *backend)
{
    clops_operator *op = NULL;
    clops_status st = clops_operator_create(ctx, desc, &op);
    ck_assert_msg(st == CLOPS_SUCCESS && op,
                  "%s [%s]: clops_operator_create returned %s (%s), want CLOPS_SUCCESS", label, backend,
                  clops_status_name(st), clops_last_error_message());
    if (clops_context_backend(ctx) == CLOPS_BACKEND_OPENCL) {
        clops_operator_info info;
        memset(&info, 0, sizeof info);
        st = clops_operator_get_info(op, &info);
        ck_assert_msg(st == CLOPS_SUCCESS, "%s [%s]: clops_operator_get_info: %s", label, backend,
                      clops_status_name(st));
        const char *allow = getenv("CLOPS_TEST_ALLOW_FALLBACK");
        ck_assert_msg(info.backend == CLOPS_BACKEND_OPENCL || (allow && strcmp(allow, "1") == 0),
                      "%s [%s]: the operator fell back to the host kernels on an OpenCL context (%s); the device "
                      "was not tested",
                      label, backend, info.fallback_reason ? info.fallback_reason : "no reason given");
    }
    return op;
}

/* Which execution paths tc_check_context_paths takes. */
#define TC_PATH_EXECUTE_HOST 1u
#define TC_PATH_CL_MEM 2u
#define TC_PATHS_ALL 3u

/* Runs `desc` on one context: execute_host, and on an OpenCL context also
 * execute on cl_mem (as `paths` selects); checks the status and the whole
 * output buffer. */
static inline void tc_check_context_paths(clops_context *ctx, const char *ctx_name, unsigned paths,
                                          const clops_operator_desc *desc, const tc_bufs *b, clops_status want_status,
                                          const void *want_host, const void *want_cl, size_t esize, const char *label)
{
    void *out = tc_malloc(b->out_bytes);
    char path[128];
    clops_operator *op = tc_create(ctx, desc, label, ctx_name);
    clops_status st;

    if (paths & TC_PATH_EXECUTE_HOST) {
        snprintf(path, sizeof path, "%s, execute_host", ctx_name);
        st = tc_run_execute_host(op, b, out);
        ck_assert_msg(st == want_status, "%s [%s]: status %s (%s), want %s", label, path, clops_status_name(st),
                      clops_last_error_message(), clops_status_name(want_status));
        tc_check_bytes(out, want_host, b->out_bytes, esize, label, path);
    }

    if ((paths & TC_PATH_CL_MEM) && clops_context_backend(ctx) == CLOPS_BACKEND_OPENCL) {
        snprintf(path, sizeof path, "%s, execute on cl_mem", ctx_name);
        st = tc_run_execute_cl(ctx, op, b, out, label);
        ck_assert_msg(st == want_status, "%s [%s]: status %s (%s), want %s", label, path, clops_status_name(st),
                      clops_last_error_message(), clops_status_name(want_status));
        tc_check_bytes(out, want_cl, b->out_bytes, esize, label, path);
    }
    clops_operator_free(op);
    free(out);
}

/* Runs `desc` on every path and checks the status and the whole output buffer:
 *   no context: clops_host_run
 *   host backend: clops_operator_execute_host
 *   OpenCL device: clops_operator_execute_host, clops_operator_execute (cl_mem)
 * `want_host` is the expected output buffer for the host-memory paths and
 * `want_cl` for the cl_mem path (they differ only when an error leaves host
 * memory untouched but the device writes the good elements). */
static inline void tc_check_all_paths_status(const clops_operator_desc *desc, const tc_bufs *b,
                                             clops_status want_status, const void *want_host,
                                             const void *want_cl, size_t esize, const char *label)
{
    void *out = tc_malloc(b->out_bytes);
    clops_status st = tc_run_host_run(desc, b, out);
    ck_assert_msg(st == want_status, "%s [clops_host_run]: status %s (%s), want %s", label,
                  clops_status_name(st), clops_last_error_message(), clops_status_name(want_status));
    tc_check_bytes(out, want_host, b->out_bytes, esize, label, "clops_host_run");
    free(out);

    for (int bi = 0; bi < tc_backend_count(); bi++)
        tc_check_context_paths(tc_backend(bi), tc_backend_name(bi), TC_PATHS_ALL, desc, b, want_status, want_host,
                               want_cl, esize, label);
}

static inline void tc_check_all_paths(const clops_operator_desc *desc, const tc_bufs *b, const void *want,
                                      size_t esize, const char *label)
{
    tc_check_all_paths_status(desc, b, CLOPS_SUCCESS, want, want, esize, label);
}

/* ---- dupd ---- */

/* For a test that needs an OpenCL device: 1 when there is none (it says on
 * stderr that `test` was skipped; the caller returns), else 0. */
static inline int tc_skip_without_device(const char *test)
{
    if (tc_dev_ctx)
        return 0;
    tc_skip(test, "no OpenCL device");
    return 1;
}

/* CLOPS_TEST_NETWORK=0: the network-sized cases (millions of elements) return at once, saying so (a
 * skip: tc_skip; a ctest entry of such cases alone reports SKIPPED). CI
 * sets it where the same plans' network sizes ran already and a device profile only multiplies the
 * cost: PoCL running a GPU plan's work-item per position (.ci/run: the integrated-GPU and 2-item
 * profiles, rusticl as a GPU, ASan). */
static inline int tc_skip_network_sizes(const char *test)
{
    const char *v = getenv("CLOPS_TEST_NETWORK");
    if (!v || strcmp(v, "0") != 0)
        return 0;
    tc_skip(test, "CLOPS_TEST_NETWORK=0 (network-sized case)");
    return 1;
}

/* Releases `n` cl_mem objects; NULL ones are skipped. */
static inline void tc_release_mems(const cl_mem *mems, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (mems[i])
            clReleaseMemObject(mems[i]);
}

/* TC_RELEASE_MEMS(a, b, ...) releases the cl_mem objects a, b, ... */
#define TC_RELEASE_MEMS(...)                                                                                           \
    tc_release_mems((const cl_mem[]){__VA_ARGS__}, sizeof((const cl_mem[]){__VA_ARGS__}) / sizeof(cl_mem))

#endif /* CLOPS_TEST_COMMON_H */
