/*
 * test_default_device.c - clops_default_device_for_host_data (clops_devices.h):
 * the one default device that the CLI's run and bench, Python, clops.onnx and
 * `clops devices` take. CLOPS_DEVICE, else the first GPU, else the first device
 * unless it is a CPU (then the host backend), else the host backend.
 *
 * ctest runs it with POCL_DEVICES="pthread basic" (two CPU devices); the static
 * build's OpenCL table (cl_api.h) reports other device types for them
 * (CL_DEVICE_TYPE only), so that every branch runs without a GPU: GPU, an
 * accelerator, CPUs, and no platform at all. Without an OpenCL device the cases
 * that need one skip (exit 77), except under CLOPS_REQUIRE_DEVICE=1.
 */
#define _GNU_SOURCE
#define CLOPS_CL_API_NO_MACROS /* this file calls the real OpenCL by name */
#include <stdlib.h>
#include <string.h>

#include <CL/cl_ext.h>

#include "cl_api.h"
#include "fixture.h"
#include "test_fs.h"

/* ---- the faked device types ---------------------------------------------------------------- */

#define MAX_DEVICES 8
static cl_device_id real_ids[MAX_DEVICES];
static size_t real_count;
static cl_device_type fake_types[MAX_DEVICES]; /* 0: the device's own type */

static cl_int CL_API_CALL fake_device_info(cl_device_id device, cl_device_info what, size_t size, void *value,
                                           size_t *size_ret)
{
    if (what == CL_DEVICE_TYPE && value && size >= sizeof(cl_device_type))
        for (size_t i = 0; i < real_count; i++)
            if (real_ids[i] == device && fake_types[i]) {
                *(cl_device_type *)value = fake_types[i];
                if (size_ret) *size_ret = sizeof(cl_device_type);
                return CL_SUCCESS;
            }
    return clops_cl_real.clGetDeviceInfo(device, what, size, value, size_ret);
}

static cl_int CL_API_CALL no_platform(cl_uint n, cl_platform_id *platforms, cl_uint *count)
{
    (void)n, (void)platforms;
    if (count) *count = 0;
    return CL_PLATFORM_NOT_FOUND_KHR;
}

static const char *const env_names[] = {"CLOPS_DEVICE"};
static char *env_saved[1];
static int env_was_set[1];

static void setup(void)
{
    tc_env_save(env_names, 1, env_saved, env_was_set, 0); /* CLOPS_DEVICE unset */
    memset(fake_types, 0, sizeof fake_types);
    clops_device_info infos[MAX_DEVICES];
    real_count = 0;
    clops_cl = clops_cl_real;
    if (clops_device_list(infos, MAX_DEVICES, &real_count) != CLOPS_SUCCESS) real_count = 0;
    if (real_count > MAX_DEVICES) real_count = MAX_DEVICES;
    for (size_t i = 0; i < real_count; i++) real_ids[i] = infos[i].device;
    clops_cl.clGetDeviceInfo = fake_device_info;
}

static void teardown(void)
{
    clops_cl = clops_cl_real;
    tc_env_restore(env_names, 1, env_saved, env_was_set);
}

/* The default for host data: host flag, index, reason. */
typedef struct choice {
    clops_status st;
    int host;
    unsigned index;
    clops_default_reason reason;
} choice;

static choice ask(void)
{
    choice c = {CLOPS_SUCCESS, -1, 99, (clops_default_reason)0};
    c.st = clops_default_device_for_host_data(&c.host, &c.index, &c.reason);
    return c;
}

#define CHECK_CHOICE(c, want_host, want_index, want_reason)                                                          \
    ck_assert_msg((c).st == CLOPS_SUCCESS && (c).host == (want_host) && (c).index == (want_index) &&                \
                      (c).reason == (want_reason),                                                                   \
                  "got status %s host %d index %u reason %d, want host %d index %u reason %d (%s)",                  \
                  clops_status_name((c).st), (c).host, (c).index, (int)(c).reason, want_host, want_index,           \
                  (int)(want_reason), clops_last_error_message())

/* ---- tests ------------------------------------------------------------------------------------ */

START_TEST(test_null_arguments)
{
    int host;
    unsigned index;
    ck_assert_int_eq(clops_default_device_for_host_data(NULL, &index, NULL), CLOPS_ERROR_NULL_ARGUMENT);
    ck_assert_int_eq(clops_default_device_for_host_data(&host, NULL, NULL), CLOPS_ERROR_NULL_ARGUMENT);
    ck_assert_int_eq(clops_default_device_for_host_data(&host, &index, NULL), CLOPS_SUCCESS); /* reason optional */
}
END_TEST

/* The devices as they are (PoCL's are CPUs): the host backend, while clops_context_create()
 * and clops_default_device() keep their rule and take the CPU device. */
START_TEST(test_cpu_device_gives_way_to_the_host)
{
    clops_cl.clGetDeviceInfo = clops_cl_real.clGetDeviceInfo;
    clops_device_info infos[MAX_DEVICES];
    size_t count = 0;
    ck_assert_int_eq(clops_device_list(infos, MAX_DEVICES, &count), CLOPS_SUCCESS);
    unsigned first = 0;
    int gpu = 0;
    for (size_t i = 0; i < count && i < MAX_DEVICES && !gpu; i++)
        if (infos[i].type & CL_DEVICE_TYPE_GPU) first = (unsigned)i, gpu = 1;
    const choice c = ask();
    if (gpu) CHECK_CHOICE(c, 0, first, CLOPS_DEFAULT_REASON_GPU);
    else if (infos[0].type & CL_DEVICE_TYPE_CPU) CHECK_CHOICE(c, 1, 0u, CLOPS_DEFAULT_REASON_CPU);
    else CHECK_CHOICE(c, 0, 0u, CLOPS_DEFAULT_REASON_NOT_CPU);
    int host = -1;
    unsigned index = 99;
    ck_assert_int_eq(clops_default_device(&host, &index), CLOPS_SUCCESS);
    ck_assert_msg(host == 0 && index == first, "clops_default_device: host %d index %u, want device %u", host,
                  index, first);
}
END_TEST

START_TEST(test_first_gpu)
{
    fake_types[0] = CL_DEVICE_TYPE_CPU;
    fake_types[1] = CL_DEVICE_TYPE_GPU;
    CHECK_CHOICE(ask(), 0, 1u, CLOPS_DEFAULT_REASON_GPU);
    fake_types[0] = CL_DEVICE_TYPE_GPU;
    CHECK_CHOICE(ask(), 0, 0u, CLOPS_DEFAULT_REASON_GPU);
    fake_types[0] = CL_DEVICE_TYPE_ACCELERATOR; /* a GPU after an accelerator still wins */
    CHECK_CHOICE(ask(), 0, 1u, CLOPS_DEFAULT_REASON_GPU);
}
END_TEST

START_TEST(test_first_device_unless_cpu)
{
    fake_types[0] = CL_DEVICE_TYPE_ACCELERATOR;
    fake_types[1] = CL_DEVICE_TYPE_CPU;
    CHECK_CHOICE(ask(), 0, 0u, CLOPS_DEFAULT_REASON_NOT_CPU);
    fake_types[0] = CL_DEVICE_TYPE_CPU; /* the first device decides: an accelerator after a CPU does not */
    fake_types[1] = CL_DEVICE_TYPE_ACCELERATOR;
    CHECK_CHOICE(ask(), 1, 0u, CLOPS_DEFAULT_REASON_CPU);
    fake_types[1] = CL_DEVICE_TYPE_CPU;
    CHECK_CHOICE(ask(), 1, 0u, CLOPS_DEFAULT_REASON_CPU);
}
END_TEST

START_TEST(test_clops_device_decides)
{
    fake_types[0] = CL_DEVICE_TYPE_CPU;
    fake_types[1] = CL_DEVICE_TYPE_GPU;
    tc_set_env("CLOPS_DEVICE", "host");
    CHECK_CHOICE(ask(), 1, 0u, CLOPS_DEFAULT_REASON_ENVIRONMENT);
    tc_set_env("CLOPS_DEVICE", "0"); /* named: even a CPU device */
    CHECK_CHOICE(ask(), 0, 0u, CLOPS_DEFAULT_REASON_ENVIRONMENT);
    char past[32];
    snprintf(past, sizeof past, "%zu", real_count);
    tc_set_env("CLOPS_DEVICE", past);
    ck_assert_int_eq(ask().st, CLOPS_ERROR_INVALID_DEVICE_SELECTION);
    tc_set_env("CLOPS_DEVICE", "gpu");
    ck_assert_int_eq(ask().st, CLOPS_ERROR_INVALID_DEVICE_SELECTION);
    tc_set_env("CLOPS_DEVICE", ""); /* empty: unset */
    CHECK_CHOICE(ask(), 0, 1u, CLOPS_DEFAULT_REASON_GPU);
}
END_TEST

START_TEST(test_no_device)
{
    clops_cl.clGetPlatformIDs = no_platform;
    CHECK_CHOICE(ask(), 1, 0u, CLOPS_DEFAULT_REASON_NO_DEVICE);
    tc_set_env("CLOPS_DEVICE", "host");
    CHECK_CHOICE(ask(), 1, 0u, CLOPS_DEFAULT_REASON_ENVIRONMENT);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("default_device");
    TCase *tc = tc_fixture_case(s, "any machine", setup, teardown);
    tcase_add_test(tc, test_null_arguments);
    tcase_add_test(tc, test_no_device);
    const int need = tc_need_devices(2, "the device types are faked on two devices (ctest sets "
                                        "POCL_DEVICES=\"pthread basic\")");
    if (need < 0) {
        tc = tc_fixture_case(s, "devices", setup, teardown);
        tcase_add_test(tc, test_cpu_device_gives_way_to_the_host);
        tcase_add_test(tc, test_first_gpu);
        tcase_add_test(tc, test_first_device_unless_cpu);
        tcase_add_test(tc, test_clops_device_decides);
    } else if (need != 77) {
        return need;
    }
    const int rc = tc_run_nofork(s);
    return rc == EXIT_SUCCESS && need == 77 ? 77 : rc;
}
