/*
 * test_limits.c - sizes at and past the limits.
 *
 *   - Sizes whose element count, byte count or strided span overflow 64 bits:
 *     CLOPS_ERROR_SIZE_OVERFLOW from validate, create (every backend) and
 *     clops_host_run, before anything is allocated; the largest sizes that do
 *     not overflow are valid, and fail only later, at the buffer checks.
 *   - A tensor spanning more than the device's CL_DEVICE_MAX_MEM_ALLOC_SIZE:
 *     CLOPS_ERROR_TOO_LARGE_FOR_DEVICE at create, on the device only.
 *   - Empty MaxUnpooling tensors whose other sizes are huge return at once.
 *   - A huge block size builds no program of its own (issue 38 Q5).
 *   - Real tensors past 2^31 and past 2^32 elements (uint8 DepthToSpace, then
 *     SpaceToDepth back): values at sampled positions (the first, the last,
 *     around 2^31 and 2^32, random) against the formula, then the whole round
 *     trip. On the host backend, and on the device when its maximum allocation
 *     allows. Each big case first checks /proc/meminfo's MemAvailable and skips
 *     loudly (a "SKIP:" line on stderr) when the machine has too little;
 *     CLOPS_LIMITS_REQUIRE_BIG=1 turns those skips into failures and
 *     CLOPS_LIMITS_BIG=0 skips them on purpose.
 */
#define _POSIX_C_SOURCE 200809L
#include "test_common.h"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers ---------------------------------------------------------------------------------- */

#define ASSERT_STATUS(st, want, what)                                                                \
    ck_assert_msg((st) == (want), "%s: got %s (%d), want %s; message \"%s\"", (what), clops_status_name(st), \
                  (int)(st), clops_status_name(want), clops_last_error_message())

typedef struct ds_case {
    clops_tensor_desc in, out;
    clops_depth_to_space_desc d;
    clops_operator_desc op;
} ds_case;

static void ds_make(ds_case *c, clops_operator_type type, clops_data_type t, const uint32_t in[4], const uint32_t out[4],
                    const uint64_t *in_strides, const uint64_t *out_strides, uint32_t block)
{
    memset(c, 0, sizeof *c);
    c->in.data_type = c->out.data_type = t;
    memcpy(c->in.sizes, in, sizeof c->in.sizes);
    memcpy(c->out.sizes, out, sizeof c->out.sizes);
    c->in.strides = in_strides;
    c->out.strides = out_strides;
    c->d = (clops_depth_to_space_desc){&c->in, &c->out, block, CLOPS_ORDER_DEPTH_COLUMN_ROW};
    c->op = (clops_operator_desc){type, &c->d};
}

/* `desc` is rejected with `want` by validate, create on every backend and
 * clops_host_run (given no buffers: validation comes first). */
static void expect_rejected(const clops_operator_desc *desc, clops_status want, const char *what)
{
    ASSERT_STATUS(clops_operator_validate(desc), want, what);
    for (int bi = 0; bi < tc_backend_count(); bi++) {
        clops_operator *op = (clops_operator *)(uintptr_t)0x10;
        ASSERT_STATUS(clops_operator_create(tc_backend(bi), desc, &op), want, what);
        ck_assert_msg(op == NULL, "%s: failed create left *out set", what);
    }
    clops_host_buffers hb = {NULL, 0, NULL, 0, NULL, 0};
    ASSERT_STATUS(clops_host_run(desc, &hb), want, what);
    ck_assert_msg(clops_last_error_message()[0] != '\0', "%s: no detail message", what);
}

static uint64_t mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    uint64_t kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %" SCNu64 " kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb * 1024;
}

static uint64_t device_max_alloc(void)
{
    if (!tc_dev_ctx)
        return 0;
    cl_device_id dev = NULL;
    cl_ulong max = 0;
    clGetContextInfo(clops_context_cl_context(tc_dev_ctx), CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max, &max, NULL);
    return max;
}

static int skipped_big;

/* Whether a big case needing `need` bytes may run; otherwise says why, loudly. */
static int big_case_allowed(const char *what, uint64_t need)
{
    const char *big = getenv("CLOPS_LIMITS_BIG");
    const char *req = getenv("CLOPS_LIMITS_REQUIRE_BIG");
    const int required = req && strcmp(req, "1") == 0;
    if (big && strcmp(big, "0") == 0) {
        fprintf(stderr, "SKIP: %s: CLOPS_LIMITS_BIG=0\n", what);
        ck_assert_msg(!required, "%s: skipped but CLOPS_LIMITS_REQUIRE_BIG=1", what);
        skipped_big++;
        return 0;
    }
    const uint64_t avail = mem_available();
    if (avail < need) {
        fprintf(stderr, "SKIP: %s needs %.1f GiB of MemAvailable, the machine has %.1f GiB\n", what,
                (double)need / (1 << 30), (double)avail / (1 << 30));
        ck_assert_msg(!required, "%s: skipped (too little memory) but CLOPS_LIMITS_REQUIRE_BIG=1", what);
        skipped_big++;
        return 0;
    }
    return 1;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- overflow --------------------------------------------------------------------------------- */

START_TEST(test_overflow_before_allocating)
{
    const uint32_t M = UINT32_MAX;
    ds_case c;
    /* Element count past 2^64: 65536^4 = 2^64. */
    {
        const uint32_t s[4] = {65536, 65536, 65536, 65536};
        ds_make(&c, CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT8, s, s, NULL, NULL, 1);
        expect_rejected(&c.op, CLOPS_ERROR_SIZE_OVERFLOW, "uint8 65536^4 elements");
    }
    /* Count fits (2^60), bytes do not (x16). */
    {
        const uint32_t s[4] = {1u << 15, 1u << 15, 1u << 15, 1u << 15};
        ds_make(&c, CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_COMPLEX128, s, s, NULL, NULL, 1);
        expect_rejected(&c.op, CLOPS_ERROR_SIZE_OVERFLOW, "complex128 2^60 elements");
    }
    /* The largest uint8 tensor: (2^32-1)^2 elements fits 64 bits; 2 bytes each does not. */
    {
        const uint32_t s[4] = {M, M, 1, 1};
        ds_make(&c, CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT16, s, s, NULL, NULL, 1);
        expect_rejected(&c.op, CLOPS_ERROR_SIZE_OVERFLOW, "uint16 (2^32-1)^2 elements");
    }
    /* Small counts, spans past 2^64 through strides, on the input and the output. */
    {
        const uint32_t s[4] = {1, 1, 3, 3};
        static const uint64_t big[4] = {1, 1, UINT64_C(1) << 63, 1};
        ds_make(&c, CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT8, s, s, big, NULL, 1);
        expect_rejected(&c.op, CLOPS_ERROR_SIZE_OVERFLOW, "input H stride 2^63, 3 rows");
        ds_make(&c, CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT8, s, s, NULL, big, 1);
        expect_rejected(&c.op, CLOPS_ERROR_SIZE_OVERFLOW, "output H stride 2^63, 3 rows");
        static const uint64_t sum[4] = {1, 1, UINT64_C(1) << 62, UINT64_C(1) << 62};
        ds_make(&c, CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT8, s, s, sum, NULL, 1);
        expect_rejected(&c.op, CLOPS_ERROR_SIZE_OVERFLOW, "input strides 2^62 + 2^62 over 3 rows and columns");
        /* Span fits in elements (2^62 * 2 + 1), not in bytes (x4). */
        ds_make(&c, CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_FLOAT32, s, s, sum, NULL, 1);
        expect_rejected(&c.op, CLOPS_ERROR_SIZE_OVERFLOW, "float32 span of 2^63+1 elements");
    }
    /* MaxUnpooling: the indices tensor's span overflows. */
    {
        clops_tensor_desc in = {CLOPS_DATA_TYPE_FLOAT32, {1, 1, 2, 2}, NULL};
        static const uint64_t huge[4] = {1, 1, UINT64_MAX / 2, 1};
        clops_tensor_desc idx = {CLOPS_DATA_TYPE_INT64, {1, 1, 2, 2}, huge};
        clops_tensor_desc out = {CLOPS_DATA_TYPE_FLOAT32, {1, 1, 4, 4}, NULL};
        clops_max_unpooling_desc mu = {&in, &idx, &out, CLOPS_INDICES_FLAT};
        clops_operator_desc op = {CLOPS_OPERATOR_MAX_UNPOOLING, &mu};
        expect_rejected(&op, CLOPS_ERROR_SIZE_OVERFLOW, "MaxUnpooling indices span 8 x 2^63 bytes");
    }
}
END_TEST

/* The largest sizes that do not overflow are valid descriptors: nothing is
 * allocated for them, and running them with real (small) buffers fails at the
 * buffer check, not with a crash or an allocation. */
START_TEST(test_largest_valid_sizes)
{
    const uint32_t M = UINT32_MAX;
    const uint32_t s[4] = {M, M, 1, 1};
    ds_case c;
    ds_make(&c, CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT8, s, s, NULL, NULL, 1);
    ASSERT_STATUS(clops_operator_validate(&c.op), CLOPS_SUCCESS, "uint8 (2^32-1)^2 elements");
    unsigned char small_in[64] = {0}, small_out[64] = {0};
    clops_host_buffers hb = {small_in, sizeof small_in, NULL, 0, small_out, sizeof small_out};
    ASSERT_STATUS(clops_host_run(&c.op, &hb), CLOPS_ERROR_BUFFER_TOO_SMALL, "host_run (2^32-1)^2 with 64 bytes");

    clops_operator *op = NULL;
    ASSERT_STATUS(clops_operator_create(tc_host_ctx, &c.op, &op), CLOPS_SUCCESS, "create on the host");
    ASSERT_STATUS(clops_operator_execute_host(op, &hb), CLOPS_ERROR_BUFFER_TOO_SMALL, "execute_host (2^32-1)^2");
    clops_operator_free(op);
    if (tc_dev_ctx) {
        op = (clops_operator *)(uintptr_t)0x10;
        ASSERT_STATUS(clops_operator_create(tc_dev_ctx, &c.op, &op), CLOPS_ERROR_TOO_LARGE_FOR_DEVICE,
                      "create (2^32-1)^2 bytes on the device");
        ck_assert_ptr_null(op);
    }

    /* Largest strides: a span of exactly 2^64 - 1 elements... of 1 byte. */
    static const uint64_t st[4] = {1, 1, UINT64_MAX / 2, 1};
    const uint32_t s3[4] = {1, 1, 3, 1};
    ds_make(&c, CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT8, s3, s3, st, NULL, 1);
    ASSERT_STATUS(clops_operator_validate(&c.op), CLOPS_SUCCESS, "uint8 span 2^64-1");
    hb = (clops_host_buffers){small_in, sizeof small_in, NULL, 0, small_out, sizeof small_out};
    ASSERT_STATUS(clops_host_run(&c.op, &hb), CLOPS_ERROR_BUFFER_TOO_SMALL, "host_run span 2^64-1");
}
END_TEST

START_TEST(test_too_large_for_device)
{
    if (!tc_dev_ctx) {
        fprintf(stderr, "SKIP: no OpenCL device: CLOPS_ERROR_TOO_LARGE_FOR_DEVICE not tested\n");
        return;
    }
    const uint64_t max = device_max_alloc();
    ck_assert_msg(max > 0, "device reports no CL_DEVICE_MAX_MEM_ALLOC_SIZE");
    fprintf(stderr, "device maximum allocation: %" PRIu64 " bytes\n", max);
    ds_case c;
    /* Two uint8 elements exactly `max` apart: span max + 1 bytes; then exactly max. */
    const uint32_t s[4] = {1, 1, 1, 2};
    uint64_t over[4] = {1, 1, 1, max}, at[4] = {1, 1, 1, max - 1};
    struct {
        const uint64_t *in, *out;
        clops_status want;
        const char *what;
    } rows[] = {
        {over, NULL, CLOPS_ERROR_TOO_LARGE_FOR_DEVICE, "input span max + 1 bytes"},
        {NULL, over, CLOPS_ERROR_TOO_LARGE_FOR_DEVICE, "output span max + 1 bytes"},
        {at, NULL, CLOPS_SUCCESS, "input span exactly max bytes"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ds_make(&c, CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT8, s, s, rows[i].in, rows[i].out, 1);
        clops_operator *op = (clops_operator *)(uintptr_t)0x10;
        clops_status st = clops_operator_create(tc_dev_ctx, &c.op, &op);
        ASSERT_STATUS(st, rows[i].want, rows[i].what);
        if (st == CLOPS_SUCCESS)
            clops_operator_free(op);
        else
            ck_assert_ptr_null(op);
        /* The host backend has no such limit. */
        op = NULL;
        ASSERT_STATUS(clops_operator_create(tc_host_ctx, &c.op, &op), CLOPS_SUCCESS, rows[i].what);
        clops_operator_free(op);
    }
    /* A packed uint8 tensor one row past the maximum. */
    if (max <= UINT64_C(1) << 40) {
        /* 4 x H x 16384 = 65536 H bytes, one 64 KiB row past the maximum. */
        const uint32_t in[4] = {1, 4, (uint32_t)(max / 65536 + 1), 16384};
        const uint32_t out[4] = {1, 1, in[2] * 2, 32768};
        ds_make(&c, CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT8, in, out, NULL, NULL, 2);
        clops_operator *op = (clops_operator *)(uintptr_t)0x10;
        ASSERT_STATUS(clops_operator_create(tc_dev_ctx, &c.op, &op), CLOPS_ERROR_TOO_LARGE_FOR_DEVICE,
                      "packed uint8 D2S past the maximum allocation");
        ck_assert_ptr_null(op);
        ck_assert_msg(strstr(clops_last_error_message(), "maximum allocation") != NULL, "message: %s",
                      clops_last_error_message());
    }
    /* MaxUnpooling whose output alone is past the maximum. */
    {
        const uint64_t w = max / 4 / 65536 + 1; /* float32 elements per row of 65536 rows */
        clops_tensor_desc in = {CLOPS_DATA_TYPE_FLOAT32, {1, 1, 2, 2}, NULL};
        clops_tensor_desc idx = {CLOPS_DATA_TYPE_UINT32, {1, 1, 2, 2}, NULL};
        clops_tensor_desc out = {CLOPS_DATA_TYPE_FLOAT32, {1, 1, 65536, (uint32_t)w}, NULL};
        clops_max_unpooling_desc mu = {&in, &idx, &out, CLOPS_INDICES_FLAT};
        clops_operator_desc op_desc = {CLOPS_OPERATOR_MAX_UNPOOLING, &mu};
        clops_operator *op = (clops_operator *)(uintptr_t)0x10;
        ASSERT_STATUS(clops_operator_create(tc_dev_ctx, &op_desc, &op), CLOPS_ERROR_TOO_LARGE_FOR_DEVICE,
                      "MaxUnpooling output past the maximum allocation");
        ck_assert_ptr_null(op);
    }
}
END_TEST

/* Empty tensors may have any other sizes: an empty MaxUnpooling input of
 * {2^32-1, 2^32-1, 0, 1} (empty output {2^32-1, 2^32-1, 0, 0}) is valid and has
 * nothing to do. The host kernels used to walk the empty input's sizes loop by
 * loop, 2^64 iterations that never ended (found while fuzzing descriptors:
 * test/fuzz/regressions/fuzz_validate/empty_unpool_huge_dims; fixed in 5625620).
 * Run in a child process with a 120 s alarm, a hang guard for a call that takes
 * microseconds (the child touches no OpenCL: only
 * the host backend). */
static int run_with_alarm(const clops_operator_desc *desc, unsigned seconds, clops_status *got)
{
    int fd[2];
    ck_assert_int_eq(pipe(fd), 0);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_msg(pid >= 0, "fork failed");
    if (pid == 0) {
        close(fd[0]);
        /* Check's own SIGALRM handler would kill the whole process group. */
        signal(SIGALRM, SIG_DFL);
        alarm(seconds);
        clops_host_buffers hb = {NULL, 0, NULL, 0, NULL, 0};
        clops_status sts[2];
        sts[0] = clops_host_run(desc, &hb);
        clops_context *host = NULL;
        clops_operator *op = NULL;
        sts[1] = clops_context_create_host(&host);
        if (sts[1] == CLOPS_SUCCESS)
            sts[1] = clops_operator_create(host, desc, &op);
        if (sts[1] == CLOPS_SUCCESS)
            sts[1] = clops_operator_execute_host(op, &hb);
        if (write(fd[1], sts, sizeof sts) != (ssize_t)sizeof sts)
            _exit(3);
        _exit(0);
    }
    close(fd[1]);
    clops_status sts[2] = {CLOPS_ERROR_INTERNAL, CLOPS_ERROR_INTERNAL};
    ssize_t n = read(fd[0], sts, sizeof sts);
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    got[0] = sts[0];
    got[1] = sts[1];
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        return -1; /* still running after `seconds` */
    return n == (ssize_t)sizeof sts && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -2;
}

START_TEST(test_empty_unpool_huge_sizes)
{
    static const struct {
        uint32_t in[4], out[4];
        const char *what;
    } rows[] = {
        {{1, 1, 0, 1}, {1, 1, 0, 0}, "{1, 1, 0, 1}"},
        {{UINT32_MAX, 0, 1, 1}, {UINT32_MAX, 0, 5, 5}, "{2^32-1, 0, 1, 1}"},
        {{UINT32_MAX, UINT32_MAX, 0, 1}, {UINT32_MAX, UINT32_MAX, 0, 0}, "{2^32-1, 2^32-1, 0, 1}"},
        {{1, UINT32_MAX, UINT32_MAX, 0}, {1, UINT32_MAX, 3, 0}, "{1, 2^32-1, 2^32-1, 0}"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        clops_tensor_desc in = {CLOPS_DATA_TYPE_FLOAT32, {0, 0, 0, 0}, NULL};
        clops_tensor_desc idx = {CLOPS_DATA_TYPE_INT64, {0, 0, 0, 0}, NULL};
        clops_tensor_desc out = {CLOPS_DATA_TYPE_FLOAT32, {0, 0, 0, 0}, NULL};
        memcpy(in.sizes, rows[i].in, sizeof in.sizes);
        memcpy(idx.sizes, rows[i].in, sizeof idx.sizes);
        memcpy(out.sizes, rows[i].out, sizeof out.sizes);
        clops_max_unpooling_desc mu = {&in, &idx, &out, CLOPS_INDICES_FLAT};
        clops_operator_desc desc = {CLOPS_OPERATOR_MAX_UNPOOLING, &mu};
        ASSERT_STATUS(clops_operator_validate(&desc), CLOPS_SUCCESS, rows[i].what);
        clops_status got[2];
        double t0 = now_s();
        int rc = run_with_alarm(&desc, 120, got);
        ck_assert_msg(rc != -1,
                      "MaxUnpooling with the empty input %s: clops_host_run did not return within 120 s (the host "
                      "kernels walk the empty input's sizes: lib/host_kernels.c max_unpooling and "
                      "clops_host_unpool_scatter need an early return when the input has no elements)",
                      rows[i].what);
        ck_assert_msg(rc == 0, "MaxUnpooling with the empty input %s: the child failed", rows[i].what);
        ASSERT_STATUS(got[0], CLOPS_SUCCESS, rows[i].what);
        ASSERT_STATUS(got[1], CLOPS_SUCCESS, rows[i].what);
        fprintf(stderr, "limits: empty MaxUnpooling input %s: %.2f s\n", rows[i].what, now_s() - t0);
    }
}
END_TEST

/* ---- big tensors ---------------------------------------------------------------------------------- */

/* The input's byte at flat index i: every position gets its own mix of bits. */
static inline uint8_t pattern(uint64_t i)
{
    return (uint8_t)((i * UINT64_C(0x9E3779B97F4A7C15)) >> 56);
}

static void fill_pattern(uint8_t *p, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        p[i] = pattern(i);
}

/* DepthToSpace DCR, packed: the input flat index that output flat index o reads. */
static uint64_t d2s_source(const uint32_t in[4], uint32_t b, uint64_t o)
{
    const uint64_t cout = in[1] / ((uint64_t)b * b), hout = (uint64_t)in[2] * b, wout = (uint64_t)in[3] * b;
    const uint64_t wo = o % wout, ho = (o / wout) % hout, c = (o / wout / hout) % cout, n = o / wout / hout / cout;
    const uint64_t i = ho % b, j = wo % b, ci = (i * b + j) * cout + c;
    return ((n * in[1] + ci) * in[2] + ho / b) * in[3] + wo / b;
}

/* Checks output positions: the first and last 4096, 4096 around 2^31 and 2^32
 * (when inside), and 20000 random ones. Returns the number checked. */
static uint64_t spot_check(const uint8_t *out, uint64_t count, const uint32_t in[4], uint32_t b, const char *what)
{
    uint64_t checked = 0, seed = 42;
    const uint64_t centres[] = {0, UINT64_C(1) << 31, UINT64_C(1) << 32, count};
    for (size_t k = 0; k < sizeof centres / sizeof centres[0]; k++) {
        const uint64_t lo = centres[k] > 4096 ? centres[k] - 4096 : 0;
        for (uint64_t o = lo; o < centres[k] + 4096 && o < count; o++, checked++) {
            const uint64_t src = d2s_source(in, b, o);
            ck_assert_msg(out[o] == pattern(src), "%s: output[%" PRIu64 "] = %u, want input[%" PRIu64 "] = %u", what,
                          o, out[o], src, pattern(src));
        }
    }
    for (int r = 0; r < 20000; r++, checked++) {
        const uint64_t o = tc_rng_next(&seed) % count, src = d2s_source(in, b, o);
        ck_assert_msg(out[o] == pattern(src), "%s: output[%" PRIu64 "] = %u, want input[%" PRIu64 "] = %u", what, o,
                      out[o], src, pattern(src));
    }
    return checked;
}

/* uint8 DepthToSpace of `in` sizes (block 2, DCR) on `ctx`, spot-checked, then
 * SpaceToDepth back into the zeroed input buffer and checked whole. */
static void big_round_trip(clops_context *ctx, const char *ctx_name, const uint32_t in[4])
{
    const uint32_t b = 2;
    const uint32_t out[4] = {in[0], in[1] / 4, in[2] * 2, in[3] * 2};
    const uint64_t count = (uint64_t)in[0] * in[1] * in[2] * in[3];
    char what[160];
    snprintf(what, sizeof what, "uint8 %ux%ux%ux%u (%.3f x 2^31 elements) on %s", in[0], in[1], in[2], in[3],
             (double)count / (UINT64_C(1) << 31), ctx_name);
    double t0 = now_s();
    uint8_t *x = malloc(count), *y = malloc(count);
    ck_assert_msg(x && y, "%s: cannot allocate 2 x %" PRIu64 " bytes", what, count);
    fill_pattern(x, count);
    memset(y, 0xEE, count);
    double t1 = now_s();

    ds_case c;
    ds_make(&c, CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT8, in, out, NULL, NULL, b);
    clops_operator *op = NULL;
    ASSERT_STATUS(clops_operator_create(ctx, &c.op, &op), CLOPS_SUCCESS, what);
    clops_operator_info info;
    clops_operator_get_info(op, &info);
    /* info's strings live as long as the operator: keep what the report needs. */
    const int on_device = info.backend == CLOPS_BACKEND_OPENCL;
    char kernel[64], path[96];
    snprintf(kernel, sizeof kernel, "%s", on_device ? info.kernel_name : "host kernels");
    snprintf(path, sizeof path, "%s%s", kernel,
             on_device && strstr(info.build_options, "OFFSET_64=1") ? ", 64-bit offsets" : "");
    clops_host_buffers hb = {x, count, NULL, 0, y, count};
    ASSERT_STATUS(clops_operator_execute_host(op, &hb), CLOPS_SUCCESS, what);
    clops_operator_free(op);
    double t2 = now_s();
    uint64_t checked = spot_check(y, count, in, b, what);

    /* SpaceToDepth back: every byte of the input must come back. */
    memset(x, 0, count);
    ds_make(&c, CLOPS_OPERATOR_SPACE_TO_DEPTH, CLOPS_DATA_TYPE_UINT8, out, in, NULL, NULL, b);
    ASSERT_STATUS(clops_operator_create(ctx, &c.op, &op), CLOPS_SUCCESS, what);
    hb = (clops_host_buffers){y, count, NULL, 0, x, count};
    ASSERT_STATUS(clops_operator_execute_host(op, &hb), CLOPS_SUCCESS, what);
    clops_operator_free(op);
    double t3 = now_s();
    for (uint64_t i = 0; i < count; i++)
        if (x[i] != pattern(i))
            ck_abort_msg("%s: SpaceToDepth round trip differs at input[%" PRIu64 "]: %u, want %u", what, i, x[i],
                         pattern(i));
    double t4 = now_s();
    fprintf(stderr,
            "limits: %s [%s]: fill %.1f s, DepthToSpace %.1f s, %" PRIu64
            " positions spot-checked, SpaceToDepth %.1f s, round trip of %" PRIu64 " bytes checked in %.1f s\n",
            what, path, t1 - t0, t2 - t1, checked, t3 - t2, count, t4 - t3);
    free(x);
    free(y);
}

/* Past 2^31 elements: 1x4x32768x16385 = 2^31 + 2^17. */
static const uint32_t over_2g[4] = {1, 4, 32768, 16385};
/* Past 2^32 elements: 1x4x32768x32769 = 2^32 + 2^17. */
static const uint32_t over_4g[4] = {1, 4, 32768, 32769};

static uint64_t elements(const uint32_t s[4])
{
    return (uint64_t)s[0] * s[1] * s[2] * s[3];
}

/* big_round_trip of uint8 sizes `s` on the host backend, when the machine allows. */
static void big_on_host(const char *what, const uint32_t s[4])
{
    if (big_case_allowed(what, 3 * elements(s)))
        big_round_trip(tc_host_ctx, "the host backend", s);
}

/* The same on the OpenCL device: host input and output, and the device's copies of both. */
static void big_on_device(const char *what, const uint32_t s[4])
{
    if (big_case_allowed(what, 9 * elements(s) / 2))
        big_round_trip(tc_dev_ctx, clops_context_device_name(tc_dev_ctx), s);
}

START_TEST(test_past_2g_host)
{
    big_on_host("uint8 past 2^31 elements on the host backend", over_2g);
}
END_TEST

START_TEST(test_past_2g_device)
{
    const uint64_t n = elements(over_2g);
    if (!tc_dev_ctx) {
        fprintf(stderr, "SKIP: no OpenCL device: past 2^31 elements on a device not tested\n");
        return;
    }
    if (device_max_alloc() < n) {
        fprintf(stderr, "SKIP: the device's maximum allocation (%" PRIu64 ") is below %" PRIu64 " bytes\n",
                device_max_alloc(), n);
        return;
    }
    big_on_device("uint8 past 2^31 elements on the OpenCL device", over_2g);
}
END_TEST

START_TEST(test_past_4g_host)
{
    big_on_host("uint8 past 2^32 elements on the host backend", over_4g);
}
END_TEST

START_TEST(test_past_4g_device)
{
    const uint64_t n = elements(over_4g);
    if (!tc_dev_ctx)
        return;
    if (device_max_alloc() < n) {
        /* Then the operator must say so rather than try. */
        const uint32_t out[4] = {1, 1, over_4g[2] * 2, over_4g[3] * 2};
        ds_case c;
        ds_make(&c, CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT8, over_4g, out, NULL, NULL, 2);
        clops_operator *op = NULL;
        ASSERT_STATUS(clops_operator_create(tc_dev_ctx, &c.op, &op), CLOPS_ERROR_TOO_LARGE_FOR_DEVICE,
                      "uint8 past 2^32 elements on the device");
        fprintf(stderr,
                "note: past 2^32 uint8 elements exceeds the device's maximum allocation (%" PRIu64
                " bytes): CLOPS_ERROR_TOO_LARGE_FOR_DEVICE, as it should\n",
                device_max_alloc());
        return;
    }
    big_on_device("uint8 past 2^32 elements on the OpenCL device", over_4g);
}
END_TEST

/* The programs clops_operator_programs names for a packed uint8 DepthToSpace/SpaceToDepth of block b, one string. */
static void list_of(void *user, const char *source, const char *options)
{
    char *buf = user;
    const size_t n = strlen(buf);
    snprintf(buf + n, 4096 - n, "%s %s\n", source, options);
}

static void programs_at_block(clops_operator_type type, uint32_t b, char list[4096])
{
    const uint32_t deep[4] = {1, b * b, 1, 1}, space[4] = {1, 1, b, b};
    const int d2s = type == CLOPS_OPERATOR_DEPTH_TO_SPACE;
    ds_case c;
    ds_make(&c, type, CLOPS_DATA_TYPE_UINT8, d2s ? deep : space, d2s ? space : deep, NULL, NULL, b);
    list[0] = '\0';
    const clops_status st = clops_operator_programs(tc_dev_ctx, &c.op, list_of, list);
    ck_assert_msg(st == CLOPS_SUCCESS && list[0], "programs at block %u: %s (%s)", b, clops_status_name(st),
                  clops_last_error_message());
}

/* Issue 38 Q5: a block size past what networks use (a hostile ONNX blocksize)
 * cost builds that grew with it (16 s at 256, minutes at 3000: the specialised
 * program unrolls over the block). Past CLOPS_SPECIALISED_BLOCK_MAX (16) every
 * block names the same program, the portable one (kernels/portable.cl), and a huge
 * block's operator reuses the one a block of 17 built (origin "in-process": nothing compiled), and runs
 * right on 9 million elements. Blocks up to 16 keep their specialised programs. */
START_TEST(test_huge_block_builds_nothing_new)
{
    if (!tc_dev_ctx) return;
    static const clops_operator_type types[2] = {CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_OPERATOR_SPACE_TO_DEPTH};
    for (int t = 0; t < 2; t++) {
        static char moderate[4096], huge[4096], small[4096];
        programs_at_block(types[t], 17, moderate);
        programs_at_block(types[t], 3000, huge);
        programs_at_block(types[t], 16, small);
        ck_assert_msg(strcmp(moderate, huge) == 0, "block 17 names\n%sblock 3000 names\n%s", moderate, huge);
        ck_assert_msg(strstr(huge, CLOPS_PORTABLE_SOURCE) && !strstr(huge, "-DBLOCK="), "block 3000: %s", huge);
        ck_assert_msg(strstr(small, "-DBLOCK=16u"), "block 16 should keep its specialised program: %s", small);
    }
    const uint32_t b = 3000, m = 17;
    ds_case c17, c;
    ds_make(&c17, CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT8, (const uint32_t[4]){1, m * m, 2, 3},
            (const uint32_t[4]){1, 1, 2 * m, 3 * m}, NULL, NULL, m);
    ds_make(&c, CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT8, (const uint32_t[4]){1, b * b, 1, 1},
            (const uint32_t[4]){1, 1, b, b}, NULL, NULL, b);
    clops_operator *op17 = tc_create(tc_dev_ctx, &c17.op, "block 17", "device");
    clops_operator *op = tc_create(tc_dev_ctx, &c.op, "block 3000", "device");
    clops_operator_info i17, info;
    ck_assert_int_eq(clops_operator_get_info(op17, &i17), CLOPS_SUCCESS);
    ck_assert_int_eq(clops_operator_get_info(op, &info), CLOPS_SUCCESS);
    ck_assert_msg(info.backend == CLOPS_BACKEND_OPENCL && strcmp(info.build_options, i17.build_options) == 0 &&
                      strcmp(info.program_origin, "in-process") == 0,
                  "block 3000: options \"%s\" (%s), block 17's \"%s\"", info.build_options, info.program_origin,
                  i17.build_options);
    /* 1 x b^2 x 1 x 1 into 1 x 1 x b x b: output element (h, w) is input channel h*b + w, in both orders */
    const size_t n = (size_t)b * b;
    unsigned char *x = tc_malloc(n), *y = tc_malloc(n);
    tc_fill_random(x, n, 38);
    memset(y, 0xA5, n);
    const clops_host_buffers hb = {x, n, NULL, 0, y, n};
    const clops_status st = clops_operator_execute_host(op, &hb);
    ck_assert_msg(st == CLOPS_SUCCESS, "block 3000: %s (%s)", clops_status_name(st), clops_last_error_message());
    ck_assert_msg(memcmp(x, y, n) == 0, "block 3000: wrong output");
    free(x);
    free(y);
    clops_operator_free(op);
    clops_operator_free(op17);
}
END_TEST

static Suite *limits_suite(void)
{
    Suite *s = suite_create("limits");
    TCase *tc = tc_suite_case(s, "validation", -1);
    TC_TESTS(tc, test_overflow_before_allocating, test_largest_valid_sizes, test_too_large_for_device,
             test_empty_unpool_huge_sizes, test_huge_block_builds_nothing_new);

    tc = tc_suite_case(s, "big", 0);
    TC_TESTS(tc, test_past_2g_host, test_past_2g_device, test_past_4g_host, test_past_4g_device);
    return s;
}

int main(void)
{
    int rc = tc_main(limits_suite());
    if (skipped_big)
        fprintf(stderr, "SKIP: %d big-tensor case(s) were skipped (see the SKIP lines above)\n", skipped_big);
    return rc;
}
