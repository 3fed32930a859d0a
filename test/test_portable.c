/*
 * test_portable.c - the portable program (kernels/portable.cl, lib/ops/portable.c):
 *   - the application's own program (clops_context_use_program): one cl_program
 *     built from clops's portable source plus a kernel of the application's own
 *     (an FPGA board's one image) runs every operator, at network sizes, and the
 *     application's kernel beside them; a program lacking clops's kernels, or of
 *     another context, is refused with a message naming why;
 *   - a device without a compiler: with neither the specialised nor the portable
 *     binary the operator goes to the host, its reason naming both programs whole;
 *     with the portable binary in the cache it runs on the device from it, under
 *     the fallback policy never too.
 * Every result is compared bit for bit with the reference (fixture.c).
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "test_common.h"
#include "test_fs.h"

/* Network-sized cases, one per kernel family and element width of the portable program. */
static const tc_case cases[] = {
    {"d2s u8 dcr b2", CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT8, {1, 64, 56, 56}, 2,
     CLOPS_ORDER_DEPTH_COLUMN_ROW, 0, {0}},
    {"d2s f16 crd b3", CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_FLOAT16, {2, 36, 28, 28}, 3,
     CLOPS_ORDER_COLUMN_ROW_DEPTH, 0, {0}},
    {"s2d f32 dcr b2", CLOPS_OPERATOR_SPACE_TO_DEPTH, CLOPS_DATA_TYPE_FLOAT32, {1, 32, 112, 112}, 2,
     CLOPS_ORDER_DEPTH_COLUMN_ROW, 0, {0}},
    {"s2d c128 crd b4", CLOPS_OPERATOR_SPACE_TO_DEPTH, CLOPS_DATA_TYPE_COMPLEX128, {1, 3, 64, 64}, 4,
     CLOPS_ORDER_COLUMN_ROW_DEPTH, 0, {0}},
    {"d2s f64 dcr b17", CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_FLOAT64, {1, 289, 3, 5}, 17,
     CLOPS_ORDER_DEPTH_COLUMN_ROW, 0, {0}},
    {"unpool f32 2x2 i64", CLOPS_OPERATOR_MAX_UNPOOLING, CLOPS_DATA_TYPE_FLOAT32, {2, 64, 28, 28}, 0, 0,
     CLOPS_DATA_TYPE_INT64, {2, 64, 56, 56}},
    {"unpool u8 scattered u32", CLOPS_OPERATOR_MAX_UNPOOLING, CLOPS_DATA_TYPE_UINT8, {1, 128, 28, 28}, 0, 0,
     CLOPS_DATA_TYPE_UINT32, {1, 128, 55, 55}},
    {"unpool u16 3x3 windows i64", CLOPS_OPERATOR_MAX_UNPOOLING, CLOPS_DATA_TYPE_UINT16, {1, 16, 20, 20}, 0, 0,
     CLOPS_DATA_TYPE_INT64, {1, 16, 60, 60}},
};
#define NUM_CASES (sizeof cases / sizeof cases[0])

/* Runs case d on ctx's device through cl_mem buffers and compares with the
 * reference; the operator's info into *info (its strings live as long as ctx's
 * last operator: copied by the callers that need them). */
static void check_case(clops_context *ctx, const tc_case *d, const char *want_origin, const char *label)
{
    tc_prepared p;
    ck_assert_msg(tc_prepare(&p, d, tc_seed_of(d->name)) == 0, "test bug: case %s", d->name);
    clops_operator *op = NULL;
    clops_status st = clops_operator_create(ctx, &p.desc, &op);
    ck_assert_msg(st == CLOPS_SUCCESS, "%s, %s: create: %s (%s)", label, d->name, clops_status_name(st),
                  clops_last_error_message());
    clops_operator_info info;
    ck_assert_int_eq(clops_operator_get_info(op, &info), CLOPS_SUCCESS);
    ck_assert_msg(info.backend == CLOPS_BACKEND_OPENCL && strncmp(info.kernel_name, "clops_", 6) == 0 &&
                      strcmp(info.program_origin, want_origin) == 0 && strcmp(info.build_options, "-cl-std=CL1.2") == 0,
                  "%s, %s: kernel \"%s\", origin \"%s\" (want %s), options \"%s\", fallback \"%s\"", label, d->name,
                  info.kernel_name, info.program_origin, want_origin, info.build_options, info.fallback_reason);
    cl_context cl = clops_context_cl_context(ctx);
    clops_buffers b = tc_cl_buffers(cl, &p);
    ck_assert_msg(b.input && b.output, "%s: buffers", d->name);
    cl_event done = NULL;
    st = clops_operator_execute(op, &b, 0, NULL, &done);
    ck_assert_msg(st == CLOPS_SUCCESS, "%s, %s: execute: %s (%s)", label, d->name, clops_status_name(st),
                  clops_last_error_message());
    ck_assert_int_eq(clWaitForEvents(1, &done), CL_SUCCESS);
    clReleaseEvent(done);
    ck_assert_int_eq(clops_operator_last_status(op), CLOPS_SUCCESS);
    void *out = tc_malloc(p.bufs.out_bytes);
    ck_assert_int_eq(clEnqueueReadBuffer(clops_context_queue(ctx), b.output, CL_TRUE, 0, p.bufs.out_bytes, out, 0,
                                         NULL, NULL),
                     CL_SUCCESS);
    tc_check_bytes(out, p.want, p.bufs.out_bytes, p.esize, d->name, label);
    free(out);
    tc_release_buffers(b.input, b.indices, b.output);
    clops_operator_free(op);
    tc_release(&p);
}

/* The first OpenCL device, a cl_context and an in-order queue on it. */
static cl_device_id g_dev;
static cl_context g_cl;
static cl_command_queue g_queue;

static void setup(void)
{
    cl_platform_id platform;
    cl_int err = clGetPlatformIDs(1, &platform, NULL);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &g_dev, NULL), CL_SUCCESS);
    g_cl = clCreateContext(NULL, 1, &g_dev, NULL, NULL, &err);
    ck_assert_msg(g_cl && err == CL_SUCCESS, "clCreateContext: %d", (int)err);
    g_queue = clCreateCommandQueue(g_cl, g_dev, 0, &err);
    ck_assert_msg(g_queue && err == CL_SUCCESS, "clCreateCommandQueue: %d", (int)err);
}

static void teardown(void)
{
    if (g_queue) clReleaseCommandQueue(g_queue);
    if (g_cl) clReleaseContext(g_cl);
    g_queue = NULL, g_cl = NULL;
}

/* A program of `extra` alone, or clops's portable source followed by it, built for g_dev. */
static const char vendor_kernel[] =
    "\n__kernel void vendor_twice(__global uint *p) { p[get_global_id(0)] *= 2u; }\n";

static cl_program build_program(bool with_clops)
{
    size_t len = 0;
    char *text = NULL;
    if (with_clops) {
        ck_assert_int_eq(clops_program_source_text(CLOPS_PORTABLE_SOURCE, NULL, 0, &len), CLOPS_SUCCESS);
        text = tc_malloc(len + sizeof vendor_kernel);
        ck_assert_int_eq(clops_program_source_text(CLOPS_PORTABLE_SOURCE, text, len + 1, &len), CLOPS_SUCCESS);
    } else {
        text = tc_malloc(sizeof vendor_kernel);
        text[0] = '\0';
    }
    strcat(text, vendor_kernel);
    const char *strings[1] = {text};
    cl_int err;
    cl_program prog = clCreateProgramWithSource(g_cl, 1, strings, NULL, &err);
    ck_assert_msg(prog && err == CL_SUCCESS, "clCreateProgramWithSource: %d", (int)err);
    ck_assert_int_eq(clBuildProgram(prog, 1, &g_dev, CLOPS_PORTABLE_OPTIONS, NULL, NULL), CL_SUCCESS);
    free(text);
    return prog;
}

/* clops options: cache in `dir` (NULL: off), capabilities `disable`, fallback `never`. */
static clops_context_options options_for(const char *dir, unsigned disable, bool never)
{
    clops_context_options o;
    ck_assert_int_eq(clops_context_options_init(&o, sizeof o), CLOPS_SUCCESS);
    o.cache = dir ? CLOPS_CACHE_POLICY_READ_WRITE : CLOPS_CACHE_POLICY_OFF;
    o.cache_dir = dir;
    o.disable = disable;
    o.fallback = never ? CLOPS_FALLBACK_NEVER : CLOPS_FALLBACK_ALLOW;
    o.tuning = 0;
    return o;
}

START_TEST(test_own_program_runs_every_operator)
{
    cl_program prog = build_program(true);
    const clops_context_options o = options_for(NULL, CLOPS_CAPABILITY_COMPILER, true); /* nothing else to build */
    clops_context *ctx = NULL;
    ck_assert_int_eq(clops_context_create_from_cl_with_options(g_cl, g_dev, g_queue, &o, &ctx), CLOPS_SUCCESS);
    const clops_status st = clops_context_use_program(ctx, prog);
    ck_assert_msg(st == CLOPS_SUCCESS, "use_program: %s (%s)", clops_status_name(st), clops_last_error_message());
    for (size_t i = 0; i < NUM_CASES; i++) check_case(ctx, &cases[i], "in-process", "the application's program");
    /* the application's own kernel in the same program */
    cl_uint host[64];
    for (cl_uint i = 0; i < 64; i++) host[i] = i;
    cl_int err;
    cl_mem m = clCreateBuffer(g_cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
    cl_kernel k = clCreateKernel(prog, "vendor_twice", &err);
    ck_assert_msg(m && k, "vendor kernel: %d", (int)err);
    const size_t global = 64;
    ck_assert_int_eq(clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);
    ck_assert_int_eq(clEnqueueNDRangeKernel(g_queue, k, 1, NULL, &global, NULL, 0, NULL, NULL), CL_SUCCESS);
    ck_assert_int_eq(clEnqueueReadBuffer(g_queue, m, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL), CL_SUCCESS);
    for (cl_uint i = 0; i < 64; i++) ck_assert_uint_eq(host[i], 2 * i);
    clReleaseKernel(k);
    clReleaseMemObject(m);
    clops_context_free(ctx);
    clReleaseProgram(prog); /* clops kept its own reference while the context lived */
}
END_TEST

START_TEST(test_own_program_refusals)
{
    clops_context *ctx = NULL, *host = NULL;
    const clops_context_options o = options_for(NULL, 0, false);
    ck_assert_int_eq(clops_context_create_from_cl_with_options(g_cl, g_dev, g_queue, &o, &ctx), CLOPS_SUCCESS);
    cl_program vendor_only = build_program(false);
    clops_status st = clops_context_use_program(ctx, vendor_only);
    ck_assert_msg(st == CLOPS_ERROR_BUILD_FAILED && strstr(clops_last_error_message(), "clops_permute_1"),
                  "a program without clops's kernels: %s (%s)", clops_status_name(st), clops_last_error_message());
    ck_assert_int_eq(clops_context_use_program(ctx, NULL), CLOPS_ERROR_NULL_ARGUMENT);
    ck_assert_int_eq(clops_context_use_program(NULL, vendor_only), CLOPS_ERROR_NULL_ARGUMENT);
    ck_assert_int_eq(clops_context_create_host(&host), CLOPS_SUCCESS);
    ck_assert_int_eq(clops_context_use_program(host, vendor_only), CLOPS_ERROR_INVALID_DEVICE_SELECTION);
    /* a program of another cl_context */
    cl_int err;
    cl_context other = clCreateContext(NULL, 1, &g_dev, NULL, NULL, &err);
    const char *src = vendor_kernel;
    cl_program foreign = clCreateProgramWithSource(other, 1, &src, NULL, &err);
    ck_assert_int_eq(clBuildProgram(foreign, 1, &g_dev, NULL, NULL, NULL), CL_SUCCESS);
    st = clops_context_use_program(ctx, foreign);
    ck_assert_msg(st == CLOPS_ERROR_BUILD_FAILED && strstr(clops_last_error_message(), "another cl_context"),
                  "a foreign program: %s (%s)", clops_status_name(st), clops_last_error_message());
    /* refused: the context goes on with its own programs (here: the specialised ones) */
    tc_prepared p;
    ck_assert_int_eq(tc_prepare(&p, &cases[0], 3), 0);
    clops_operator *op = NULL;
    ck_assert_int_eq(clops_operator_create(ctx, &p.desc, &op), CLOPS_SUCCESS);
    clops_operator_info info;
    ck_assert_int_eq(clops_operator_get_info(op, &info), CLOPS_SUCCESS);
    ck_assert_msg(strncmp(info.kernel_name, "clops_", 6) != 0, "after refusals: kernel %s", info.kernel_name);
    clops_operator_free(op);
    tc_release(&p);
    clReleaseProgram(foreign);
    clReleaseContext(other);
    clReleaseProgram(vendor_only);
    clops_context_free(host);
    clops_context_free(ctx);
}
END_TEST

/* A device without a compiler whose cache lacks both programs: the host, saying
 * why for each program whole; with the portable binary in its cache: the device. */
START_TEST(test_no_compiler_portable_before_host)
{
    char dir[] = "/tmp/clops-portable-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const tc_case *d = &cases[0];
    tc_prepared p;
    ck_assert_int_eq(tc_prepare(&p, d, 5), 0);
    const clops_context_options board = options_for(dir, CLOPS_CAPABILITY_COMPILER, false);
    clops_context *ctx = NULL;
    ck_assert_int_eq(clops_context_create_from_cl_with_options(g_cl, g_dev, g_queue, &board, &ctx), CLOPS_SUCCESS);
    clops_operator *op = NULL;
    ck_assert_int_eq(clops_operator_create(ctx, &p.desc, &op), CLOPS_SUCCESS);
    clops_operator_info info;
    ck_assert_int_eq(clops_operator_get_info(op, &info), CLOPS_SUCCESS);
    ck_assert_msg(info.backend == CLOPS_BACKEND_HOST || info.fallback_reason[0], "no fallback on an empty cache");
    ck_assert_msg(strstr(info.fallback_reason, "depth_space.cl") && strstr(info.fallback_reason, "-DCHUNK=") &&
                      strstr(info.fallback_reason, "nor the portable program") &&
                      strstr(info.fallback_reason, "portable.cl with \"-cl-std=CL1.2\""),
                  "the reason should name both programs whole: %s", info.fallback_reason);
    clops_operator_free(op);
    /* the portable binary into the cache, from a context that compiles only it */
    clops_context *builder = NULL;
    const clops_context_options b = options_for(dir, CLOPS_CAPABILITY_SPECIALISED, true);
    ck_assert_int_eq(clops_context_create_from_cl_with_options(g_cl, g_dev, g_queue, &b, &builder), CLOPS_SUCCESS);
    check_case(builder, d, "compiled", "the builder");
    clops_context_free(builder);
    clops_context_free(ctx);
    const clops_context_options never = options_for(dir, CLOPS_CAPABILITY_COMPILER, true);
    ck_assert_int_eq(clops_context_create_from_cl_with_options(g_cl, g_dev, g_queue, &never, &ctx), CLOPS_SUCCESS);
    for (size_t i = 0; i < NUM_CASES; i++)
        check_case(ctx, &cases[i], i == 0 ? "disk cache" : "in-process", "no compiler, the portable binary cached");
    clops_context_free(ctx);
    tc_release(&p);
    tc_rm_rf(dir);
}
END_TEST

static Suite *portable_suite(void)
{
    Suite *s = suite_create("portable");
    TCase *tc = tc_fixture_case(s, "portable", setup, teardown);
    TC_TESTS(tc, test_own_program_runs_every_operator, test_own_program_refusals, test_no_compiler_portable_before_host);
    return s;
}

int main(void)
{
    const int skip = tc_need_devices(1, "the portable program runs on an OpenCL device");
    return skip >= 0 ? skip : tc_run_nofork(portable_suite());
}
