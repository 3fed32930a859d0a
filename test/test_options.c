/*
 * test_options.c - context options through the API, and the environment as their
 * defaults: every setting's API form, every CLOPS_* variable's strict parsing
 * (the values issue 15 found ignored among them), a caller compiled against an
 * older, shorter struct, `clops cache prune` refusing a bad size, and the
 * _with_options forms of the cache maintenance calls and the tuner. Issue 24:
 * only sizes of a released struct version (N8), CLOPS_IMPORT_LOAD_TIMEOUT as
 * strict as the rest (N15), the tuner's device list from the options (N7).
 */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "internal.h"
#include "test_fs.h"

static const char *const vars[] = {"CLOPS_DEVICE", "CLOPS_CACHE", "CLOPS_CACHE_DIR", "CLOPS_CACHE_MAX_SIZE",
                                   "CLOPS_TUNE", "CLOPS_DISABLE", "CLOPS_FALLBACK", "CLOPS_TIMEOUT",
                                   "CLOPS_IMPORT_LOAD_TIMEOUT"};
static char *saved[sizeof vars / sizeof vars[0]];
static char g_dir[64];

static void setup(void)
{
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        saved[i] = v ? strdup(v) : NULL;
    }
    snprintf(g_dir, sizeof g_dir, "/tmp/clops-options-XXXXXX");
    ck_assert(mkdtemp(g_dir) != NULL);
}

static void teardown(void)
{
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        tc_set_env(vars[i], saved[i]);
        free(saved[i]);
        saved[i] = NULL;
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    ck_assert_int_eq(system(cmd), 0);
}

static clops_context_options defaults(void)
{
    clops_context_options o;
    ck_assert_int_eq(clops_context_options_init(&o, sizeof o), CLOPS_SUCCESS);
    return o;
}

/* `name`=`value` parses to CLOPS_SUCCESS or to an error naming the variable. */
static clops_context_options env_case(const char *name, const char *value, clops_status want)
{
    tc_set_env(name, value);
    clops_context_options o = defaults();
    const clops_status st = clops_context_options_from_env(&o);
    ck_assert_msg(st == want, "%s=\"%s\": %s (%s), want %s", name, value, clops_status_name(st),
                  clops_last_error_message(), clops_status_name(want));
    if (st != CLOPS_SUCCESS) {
        ck_assert_msg(strstr(clops_last_error_message(), name) != NULL, "%s=\"%s\": the message \"%s\" does not "
                      "name the variable", name, value, clops_last_error_message());
        clops_context *ctx = NULL;
        ck_assert_msg(clops_context_create(&ctx) == want && !ctx, "clops_context_create accepted %s=\"%s\"", name,
                      value);
    }
    tc_set_env(name, NULL);
    return o;
}

/* The 17 values issue 15 found ignored, each now an error or honoured. */
START_TEST(bad_environment_values_are_errors)
{
    static const char *const cache_bad[] = {"readonly", "0", "false", "no", " ro", "ro "};
    for (size_t i = 0; i < sizeof cache_bad / sizeof *cache_bad; i++)
        env_case("CLOPS_CACHE", cache_bad[i], CLOPS_ERROR_INVALID_SETTING);
    static const char *const size_bad[] = {"abc", "-1", "1T", "5MB", " 5M", "5M ", "lots", "99999999999999999999",
                                           "20000000000G"};
    for (size_t i = 0; i < sizeof size_bad / sizeof *size_bad; i++)
        env_case("CLOPS_CACHE_MAX_SIZE", size_bad[i], CLOPS_ERROR_INVALID_SETTING);
    static const char *const disable_bad[] = {"FOO", "compiler ", "fp64,", ",fp64", "fp64;int64"};
    for (size_t i = 0; i < sizeof disable_bad / sizeof *disable_bad; i++)
        env_case("CLOPS_DISABLE", disable_bad[i], CLOPS_ERROR_INVALID_SETTING);
    static const char *const tune_bad[] = {"0", "no", "false", "yes", "offf"};
    for (size_t i = 0; i < sizeof tune_bad / sizeof *tune_bad; i++)
        env_case("CLOPS_TUNE", tune_bad[i], CLOPS_ERROR_INVALID_SETTING);
    static const char *const fallback_bad[] = {"no", "host", "Never ", "1"};
    for (size_t i = 0; i < sizeof fallback_bad / sizeof *fallback_bad; i++)
        env_case("CLOPS_FALLBACK", fallback_bad[i], CLOPS_ERROR_INVALID_SETTING);
    static const char *const timeout_bad[] = {"-1", "abc", "5s", "inf", "nan", "0x10", "2000000", " 1"};
    for (size_t i = 0; i < sizeof timeout_bad / sizeof *timeout_bad; i++)
        env_case("CLOPS_TIMEOUT", timeout_bad[i], CLOPS_ERROR_INVALID_SETTING);
    env_case("CLOPS_DEVICE", "gpu", CLOPS_ERROR_INVALID_DEVICE_SELECTION);
    env_case("CLOPS_DEVICE", "-1", CLOPS_ERROR_INVALID_DEVICE_SELECTION);
}
END_TEST

/* Keywords in any case, sizes with units, lists, seconds. */
START_TEST(good_environment_values)
{
    ck_assert_int_eq(env_case("CLOPS_CACHE", "OFF", CLOPS_SUCCESS).cache, CLOPS_CACHE_POLICY_OFF);
    ck_assert_int_eq(env_case("CLOPS_CACHE", "RO", CLOPS_SUCCESS).cache, CLOPS_CACHE_POLICY_READ_ONLY);
    ck_assert_int_eq(env_case("CLOPS_CACHE", "rw", CLOPS_SUCCESS).cache, CLOPS_CACHE_POLICY_READ_WRITE);
    ck_assert_int_eq(env_case("CLOPS_CACHE", "", CLOPS_SUCCESS).cache, CLOPS_CACHE_POLICY_READ_WRITE);
    ck_assert_uint_eq(env_case("CLOPS_CACHE_MAX_SIZE", "5M", CLOPS_SUCCESS).cache_max_bytes, 5u << 20);
    ck_assert_uint_eq(env_case("CLOPS_CACHE_MAX_SIZE", "7k", CLOPS_SUCCESS).cache_max_bytes, 7u << 10);
    ck_assert_uint_eq(env_case("CLOPS_CACHE_MAX_SIZE", "2G", CLOPS_SUCCESS).cache_max_bytes, 2ull << 30);
    ck_assert_uint_eq(env_case("CLOPS_CACHE_MAX_SIZE", "12345", CLOPS_SUCCESS).cache_max_bytes, 12345);
    ck_assert_uint_eq(env_case("CLOPS_DISABLE", "FP64", CLOPS_SUCCESS).disable, CLOPS_CAPABILITY_FP64);
    ck_assert_uint_eq(env_case("CLOPS_DISABLE", "fp16,Compiler,int64", CLOPS_SUCCESS).disable,
                      CLOPS_CAPABILITY_FP16 | CLOPS_CAPABILITY_COMPILER | CLOPS_CAPABILITY_INT64);
    ck_assert_int_eq(env_case("CLOPS_TUNE", "Off", CLOPS_SUCCESS).tuning, 0);
    ck_assert_int_eq(env_case("CLOPS_TUNE", "on", CLOPS_SUCCESS).tuning, 1);
    ck_assert_int_eq(env_case("CLOPS_FALLBACK", "NEVER", CLOPS_SUCCESS).fallback, CLOPS_FALLBACK_NEVER);
    ck_assert_int_eq(env_case("CLOPS_FALLBACK", "allow", CLOPS_SUCCESS).fallback, CLOPS_FALLBACK_ALLOW);
    ck_assert(env_case("CLOPS_TIMEOUT", "2.5", CLOPS_SUCCESS).timeout_seconds == 2.5);
    ck_assert(env_case("CLOPS_TIMEOUT", "none", CLOPS_SUCCESS).timeout_seconds == 0);
    ck_assert_int_eq(env_case("CLOPS_DEVICE", "HOST", CLOPS_SUCCESS).device, CLOPS_DEVICE_HOST);
    ck_assert_int_eq(env_case("CLOPS_DEVICE", "3", CLOPS_SUCCESS).device, 3);
    ck_assert_str_eq(env_case("CLOPS_CACHE_DIR", "/x/y", CLOPS_SUCCESS).cache_dir, "/x/y");
    /* A bad value leaves the caller's struct as it was. */
    clops_context_options o = defaults();
    o.host_threads = 3;
    tc_set_env("CLOPS_FALLBACK", "never");
    tc_set_env("CLOPS_TIMEOUT", "soon");
    ck_assert_int_eq(clops_context_options_from_env(&o), CLOPS_ERROR_INVALID_SETTING);
    ck_assert(o.fallback == CLOPS_FALLBACK_ALLOW && o.host_threads == 3 && o.timeout_seconds == 0);
}
END_TEST

/* A shorter struct, as a caller compiled when the struct ended at `fallback`
 * would pass: no released version ends there (0.1.0 is the first), so it is
 * refused and nothing is written; the released size is written exactly, never
 * past its end. */
START_TEST(older_shorter_struct)
{
    unsigned char raw[sizeof(clops_context_options) + 16];
    memset(raw, 0xAB, sizeof raw);
    clops_context_options *o = (clops_context_options *)(void *)raw;
    const size_t old = offsetof(clops_context_options, host_threads);
    ck_assert_int_eq(clops_context_options_init(o, old), CLOPS_ERROR_INVALID_SETTING);
    for (size_t i = 0; i < sizeof raw; i++) ck_assert_msg(raw[i] == 0xAB, "a refused init wrote byte %zu", i);
    ck_assert_int_eq(clops_context_options_init(o, sizeof *o), CLOPS_SUCCESS);
    for (size_t i = sizeof *o; i < sizeof raw; i++)
        ck_assert_msg(raw[i] == 0xAB, "init wrote byte %zu past its size", i);
    o->device = CLOPS_DEVICE_HOST;
    clops_context *ctx = NULL;
    ck_assert_int_eq(clops_context_create_with_options(o, &ctx), CLOPS_SUCCESS);
    ck_assert_int_eq(clops_context_backend(ctx), CLOPS_BACKEND_HOST);
    clops_context_free(ctx);
    ck_assert_int_eq(clops_context_options_init(o, 3), CLOPS_ERROR_INVALID_SETTING);
    ck_assert_int_eq(clops_context_options_init(NULL, sizeof *o), CLOPS_ERROR_NULL_ARGUMENT);
}
END_TEST

/* Issue 24 N8: only the sizeof of a released version of the struct is accepted
 * (0.1.0's, 72 bytes on LP64, is the only one): any other size - inside a field,
 * on padding, at a field's end inside the struct, past its end - is refused by
 * init and by every call that reads options, instead of copying part of the
 * struct (half of `cache_dir` crashed in the cache configuration at 17 and 20,
 * in strdup at 44). */
START_TEST(only_released_struct_sizes)
{
    const size_t released = sizeof(clops_context_options); /* 0.1.0 */
    ck_assert_uint_eq(offsetof(clops_context_options, timeout_seconds) + sizeof(double), released);
    unsigned char raw[sizeof(clops_context_options) + 16];
    for (size_t size = 0; size <= sizeof raw; size++) {
        clops_context_options *o = (clops_context_options *)(void *)raw;
        memset(raw, 0xAB, sizeof raw);
        const clops_status init = clops_context_options_init(o, size);
        ck_assert_msg(init == (size == released ? CLOPS_SUCCESS : CLOPS_ERROR_INVALID_SETTING),
                      "init with size %zu: %s", size, clops_status_name(init));
        /* A whole, valid struct whose size field says `size`. */
        clops_context_options full = defaults();
        full.cache_dir = g_dir;
        full.tuning_db = g_dir;
        full.device = CLOPS_DEVICE_HOST;
        full.size = size;
        clops_context_options out;
        const clops_status st = clops_options_resolve(&full, &out);
        if (size == released) {
            ck_assert_msg(st == CLOPS_SUCCESS, "size %zu: %s (%s)", size, clops_status_name(st),
                          clops_last_error_message());
            ck_assert_uint_eq(out.size, sizeof out);
            ck_assert(out.cache_dir == g_dir && out.tuning_db == g_dir && out.device == CLOPS_DEVICE_HOST);
            continue;
        }
        char want[32];
        snprintf(want, sizeof want, "size %zu", size);
        ck_assert_msg(st == CLOPS_ERROR_INVALID_SETTING && strstr(clops_last_error_message(), want),
                      "size %zu: %s (%s)", size, clops_status_name(st), clops_last_error_message());
        clops_context *ctx = NULL;
        ck_assert_int_eq(clops_context_create_with_options(&full, &ctx), CLOPS_ERROR_INVALID_SETTING);
        ck_assert_ptr_null(ctx);
        char buf[256];
        ck_assert_int_eq(clops_cache_prune_with_options(&full, NULL), CLOPS_ERROR_INVALID_SETTING);
        const char *status = clops_cache_status_with_options(&full, buf, sizeof buf);
        ck_assert_msg(status == buf && strncmp(buf, "off (", 5) == 0 && strstr(buf, want),
                      "cache status with size %zu: \"%s\"", size, status ? status : "(null)");
        ck_assert_int_eq(clops_context_options_from_env(&full), CLOPS_ERROR_INVALID_SETTING);
    }
    /* The sizes the review crashed with, and the ends of fields inside the
     * struct the previous rule accepted (8: `size` alone, 24: through cache_dir). */
    const size_t refused[] = {17, 20, 44, 8, 24, offsetof(clops_context_options, timeout_seconds)};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        clops_context_options o = defaults();
        o.cache_dir = g_dir;
        o.tuning_db = g_dir;
        o.size = refused[i];
        clops_context *ctx = NULL;
        ck_assert_int_eq(clops_context_create_with_options(&o, &ctx), CLOPS_ERROR_INVALID_SETTING);
        ck_assert_msg(strstr(clops_last_error_message(), "released versions"), "%s", clops_last_error_message());
    }
}
END_TEST

/* Issue 24 N15: CLOPS_IMPORT_LOAD_TIMEOUT is read in options.c as strictly as
 * the other variables (it silently meant 120 s for "abc", 5 for "5s", 1 for
 * "1e3"); the plain import refuses a bad value, the _with_options form reads
 * no environment. */
START_TEST(import_load_timeout_strict)
{
    static const char *const bad_values[] = {"abc", "0x10", "-5", "5s", "1e3", "0", "3601", " 5", "5 ", "1.5",
                                             "99999999999999999999"};
    char missing[96];
    snprintf(missing, sizeof missing, "%s/no-such.pack", g_dir);
    tc_set_env("CLOPS_CACHE_DIR", g_dir);
    for (size_t i = 0; i < sizeof bad_values / sizeof *bad_values; i++) {
        tc_set_env("CLOPS_IMPORT_LOAD_TIMEOUT", bad_values[i]);
        int seconds = -1;
        ck_assert_int_eq(clops_options_import_timeout(true, &seconds), CLOPS_ERROR_INVALID_SETTING);
        ck_assert_msg(strstr(clops_last_error_message(), "CLOPS_IMPORT_LOAD_TIMEOUT"), "\"%s\": %s", bad_values[i],
                      clops_last_error_message());
        const clops_status st = clops_cache_import_pack_report(missing, NULL);
        ck_assert_msg(st == CLOPS_ERROR_INVALID_SETTING && strstr(clops_last_error_message(), bad_values[i]),
                      "import with CLOPS_IMPORT_LOAD_TIMEOUT=\"%s\": %s (%s)", bad_values[i], clops_status_name(st),
                      clops_last_error_message());
        clops_context_options o = defaults();
        o.cache_dir = g_dir;
        ck_assert_int_eq(clops_cache_import_pack_report_with_options(&o, missing, NULL), CLOPS_ERROR_CACHE_IO);
        ck_assert_int_eq(clops_options_import_timeout(false, &seconds), CLOPS_SUCCESS);
        ck_assert_int_eq(seconds, 120);
    }
    static const struct { const char *value; int seconds; } good[] = {{"1", 1}, {"3600", 3600}, {"007", 7}, {"", 120}};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        tc_set_env("CLOPS_IMPORT_LOAD_TIMEOUT", good[i].value);
        int seconds = -1;
        ck_assert_int_eq(clops_options_import_timeout(true, &seconds), CLOPS_SUCCESS);
        ck_assert_int_eq(seconds, good[i].seconds);
    }
    tc_set_env("CLOPS_IMPORT_LOAD_TIMEOUT", NULL);
    int seconds = -1;
    ck_assert_int_eq(clops_options_import_timeout(true, &seconds), CLOPS_SUCCESS);
    ck_assert_int_eq(seconds, 120);
}
END_TEST

/* Values out of range in the struct itself. */
START_TEST(bad_option_values)
{
    clops_context_options o;
    clops_context *ctx = NULL;
#define EXPECT_BAD(field, value, status)                                                                          \
    do {                                                                                                          \
        o = defaults();                                                                                           \
        o.field = value;                                                                                          \
        ck_assert_int_eq(clops_context_create_with_options(&o, &ctx), status);                                    \
        ck_assert_ptr_null(ctx);                                                                                  \
    } while (0)
    EXPECT_BAD(cache, (clops_cache_policy)7, CLOPS_ERROR_INVALID_SETTING);
    EXPECT_BAD(fallback, (clops_fallback_policy)2, CLOPS_ERROR_INVALID_SETTING);
    EXPECT_BAD(tuning, 2, CLOPS_ERROR_INVALID_SETTING);
    EXPECT_BAD(disable, 32u, CLOPS_ERROR_INVALID_SETTING); /* 16: CLOPS_CAPABILITY_SPECIALISED */
    EXPECT_BAD(timeout_seconds, -1.0, CLOPS_ERROR_INVALID_SETTING);
    EXPECT_BAD(host_threads, 17u, CLOPS_ERROR_INVALID_SETTING);
    EXPECT_BAD(device, -3, CLOPS_ERROR_INVALID_DEVICE_SELECTION);
    EXPECT_BAD(device, 100000, CLOPS_ERROR_INVALID_DEVICE_SELECTION);
    EXPECT_BAD(size, (size_t)0, CLOPS_ERROR_INVALID_SETTING);
#undef EXPECT_BAD
}
END_TEST

static clops_context *device_context(clops_context_options *o)
{
    clops_context *ctx = NULL;
    const clops_status st = clops_context_create_with_options(o, &ctx);
    ck_assert_msg(st == CLOPS_SUCCESS, "context: %s (%s)", clops_status_name(st), clops_last_error_message());
    ck_assert_int_eq(clops_context_backend(ctx), CLOPS_BACKEND_OPENCL);
    return ctx;
}

/* How many files in `dir` match the grep pattern `pattern`. */
static size_t files_in(const char *dir, const char *pattern)
{
    char cmd[192];
    snprintf(cmd, sizeof cmd, "ls '%s' 2>/dev/null | grep -c '%s'", dir, pattern);
    FILE *p = popen(cmd, "r");
    unsigned n = 0;
    ck_assert(p && fscanf(p, "%u", &n) == 1);
    pclose(p);
    return n;
}

static size_t entries_in(const char *dir)
{
    return files_in(dir, "\\.bin$");
}

static const tc_case D2S = {"d2s uint16", CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT16, {1, 12, 3, 5}, 2,
                            CLOPS_ORDER_COLUMN_ROW_DEPTH, CLOPS_DATA_TYPE_UNKNOWN, {0, 0, 0, 0}};

/* Runs D2S on `ctx`, checks the bytes, returns the operator's info origin. */
static const char *run_d2s(clops_context *ctx, clops_status want_create)
{
    tc_prepared p;
    ck_assert_int_eq(tc_prepare(&p, &D2S, tc_seed_of(D2S.name)), 0);
    clops_operator *op = NULL;
    const clops_status st = clops_operator_create(ctx, &p.desc, &op);
    ck_assert_msg(st == want_create, "create: %s (%s)", clops_status_name(st), clops_last_error_message());
    static char origin[64];
    origin[0] = '\0';
    if (op) {
        void *out = tc_memdup(p.sentinel, p.bufs.out_bytes);
        ck_assert_int_eq(tc_run_execute_host(op, &p.bufs, out), CLOPS_SUCCESS);
        ck_assert_msg(memcmp(out, p.want, p.bufs.out_bytes) == 0, "wrong result");
        clops_operator_info info;
        clops_operator_get_info(op, &info);
        snprintf(origin, sizeof origin, "%s", info.backend == CLOPS_BACKEND_HOST ? "host" : info.program_origin);
        free(out);
    }
    clops_operator_free(op);
    tc_release(&p);
    return origin;
}

/* cache_dir, cache policy and size bound through the API, with the environment
 * pointing elsewhere (the API wins over the environment it was not asked to read). */
START_TEST(cache_settings)
{
    tc_set_env("CLOPS_CACHE", "off");
    clops_context_options o = defaults();
    o.cache_dir = g_dir;
    clops_context *ctx = device_context(&o);
    ck_assert_msg(strstr(clops_context_cache_status(ctx), g_dir) && strstr(clops_context_cache_status(ctx),
                  "read-write"), "status: %s", clops_context_cache_status(ctx));
    run_d2s(ctx, CLOPS_SUCCESS);
    ck_assert_uint_eq(entries_in(g_dir), 1);
    clops_context_free(ctx);

    o.cache = CLOPS_CACHE_POLICY_READ_ONLY; /* loads the entry, stores nothing */
    ctx = device_context(&o);
    ck_assert_msg(strstr(clops_context_cache_status(ctx), "read-only"), "status: %s", clops_context_cache_status(ctx));
    ck_assert_str_eq(run_d2s(ctx, CLOPS_SUCCESS), "disk cache");
    clops_context_free(ctx);

    o.cache = CLOPS_CACHE_POLICY_OFF;
    ctx = device_context(&o);
    ck_assert_msg(strstr(clops_context_cache_status(ctx), "off"), "status: %s", clops_context_cache_status(ctx));
    ck_assert_str_eq(run_d2s(ctx, CLOPS_SUCCESS), "compiled");
    clops_context_free(ctx);

    o.cache = CLOPS_CACHE_POLICY_READ_WRITE; /* a bound smaller than any entry keeps none */
    o.cache_max_bytes = 1;
    char sub[96];
    snprintf(sub, sizeof sub, "%s/small", g_dir);
    o.cache_dir = sub;
    ctx = device_context(&o);
    run_d2s(ctx, CLOPS_SUCCESS);
    ck_assert_uint_eq(entries_in(sub), 0);
    clops_context_free(ctx);
}
END_TEST

/* disable + fallback: without a compiler (and no cache) the operator runs on the
 * host under allow, and fails clearly under never. */
START_TEST(fallback_policy)
{
    clops_context_options o = defaults();
    o.cache = CLOPS_CACHE_POLICY_OFF;
    o.disable = CLOPS_CAPABILITY_COMPILER;
    clops_context *ctx = device_context(&o);
    ck_assert_str_eq(run_d2s(ctx, CLOPS_SUCCESS), "host");
    clops_context_free(ctx);
    o.fallback = CLOPS_FALLBACK_NEVER;
    ctx = device_context(&o);
    run_d2s(ctx, CLOPS_ERROR_FALLBACK_REFUSED);
    ck_assert_msg(strstr(clops_last_error_message(), clops_context_device_name(ctx)) &&
                  strstr(clops_last_error_message(), "DepthToSpace"), "message: %s", clops_last_error_message());
    clops_context_free(ctx);
    /* The same through the environment. */
    tc_set_env("CLOPS_CACHE", "off");
    tc_set_env("CLOPS_DISABLE", "compiler");
    tc_set_env("CLOPS_FALLBACK", "never");
    ck_assert_int_eq(clops_context_create(&ctx), CLOPS_SUCCESS);
    run_d2s(ctx, CLOPS_ERROR_FALLBACK_REFUSED);
    clops_context_free(ctx);
}
END_TEST

/* tuning_db names the file (CRLF line endings read as LF); tuning = 0 ignores it. */
START_TEST(tuning_database_option)
{
    clops_context_options o = defaults();
    o.cache = CLOPS_CACHE_POLICY_OFF; /* the file is used even without a cache */
    char path[96];
    snprintf(path, sizeof path, "%s/tune.txt", g_dir);
    o.tuning_db = path;
    clops_context *ctx = device_context(&o);
    FILE *f = fopen(path, "w");
    ck_assert(f);
    fprintf(f, "clops-tune 1\r\ndevice %s\r\nsome_kernel -DX=1\t4\t8,1,1\t2.000\t1.000\t1\r\n",
            clops_context_device_name(ctx));
    fclose(f);
    clops_tuning t;
    ck_assert_msg(clops_tuning_lookup(ctx, "some_kernel -DX=1", &t), "the CRLF database was not read");
    ck_assert(t.chunk == 4 && t.local[0] == 8 && t.loop == CLOPS_LOOP_ELEMENTS);
    clops_context_free(ctx);
    o.tuning = 0;
    ctx = device_context(&o);
    ck_assert_msg(!clops_tuning_lookup(ctx, "some_kernel -DX=1", &t), "tuning off still used the database");
    clops_context_free(ctx);
}
END_TEST

/* The local size's origin that get_info (and `clops run --verbose`) reports: never "tuned" with
 * tuning off, and never for MaxUnpooling, whose one-work-item groups on a CPU device are its plan's
 * own size (issue 33: the CLI said "(tuned)" under CLOPS_TUNE=off). A 512x512 plane is past the
 * serial plan, so windows runs with that size on a CPU device. */
START_TEST(local_size_origin_untuned)
{
    static const uint32_t in_sizes[4] = {1, 1, 512, 512}, out_sizes[4] = {1, 1, 1024, 1024};
    const clops_tensor_desc x = {CLOPS_DATA_TYPE_FLOAT32, {in_sizes[0], in_sizes[1], in_sizes[2], in_sizes[3]}, NULL};
    const clops_tensor_desc i = {CLOPS_DATA_TYPE_INT64, {in_sizes[0], in_sizes[1], in_sizes[2], in_sizes[3]}, NULL};
    const clops_tensor_desc y = {CLOPS_DATA_TYPE_FLOAT32, {out_sizes[0], out_sizes[1], out_sizes[2], out_sizes[3]},
                                 NULL};
    clops_max_unpooling_desc ud = {&x, &i, &y, CLOPS_INDICES_FLAT};
    const clops_operator_desc unpool = {CLOPS_OPERATOR_MAX_UNPOOLING, &ud};
    const clops_tensor_desc dx = {CLOPS_DATA_TYPE_FLOAT32, {1, 16, 64, 64}, NULL};
    const clops_tensor_desc dy = {CLOPS_DATA_TYPE_FLOAT32, {1, 4, 128, 128}, NULL};
    clops_depth_to_space_desc dd = {&dx, &dy, 2, CLOPS_ORDER_DEPTH_COLUMN_ROW};
    const clops_operator_desc d2s = {CLOPS_OPERATOR_DEPTH_TO_SPACE, &dd};
    for (int tuning = 0; tuning < 2; tuning++) {
        clops_context_options o = defaults();
        char db[96]; /* the suite's program cache, and a tuning database that does not exist */
        snprintf(db, sizeof db, "%s/no-tune.txt", g_dir);
        o.tuning_db = db;
        o.tuning = tuning;
        clops_context *ctx = device_context(&o);
        const clops_operator_desc *descs[2] = {&unpool, &d2s};
        for (int k = 0; k < 2; k++) {
            clops_operator *op = NULL;
            clops_status st = clops_operator_create(ctx, descs[k], &op);
            ck_assert_msg(st == CLOPS_SUCCESS, "create: %s (%s)", clops_status_name(st), clops_last_error_message());
            clops_operator_info info;
            ck_assert_int_eq(clops_operator_get_info(op, &info), CLOPS_SUCCESS);
            if (info.backend == CLOPS_BACKEND_OPENCL) {
                /* No tuning database: nothing is tuned, tuning on or off. */
                ck_assert_msg(strcmp(info.local_size_origin, "heuristic") == 0 ||
                                  strcmp(info.local_size_origin, "fixed by the tile kernel") == 0,
                              "%s, tuning %s: local size origin \"%s\" (kernel %s)",
                              k ? "DepthToSpace" : "MaxUnpooling", tuning ? "on" : "off", info.local_size_origin,
                              info.kernel_name);
            }
            clops_operator_free(op);
        }
        clops_context_free(ctx);
    }
}
END_TEST

/* host_threads: the host kernels give the same bytes with 1 and 16 threads (the
 * tensor is past the 4 MiB where threads start). */
START_TEST(host_threads_option)
{
    static const tc_case big = {"d2s big", CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT8, {1, 64, 256, 320},
                                4, CLOPS_ORDER_DEPTH_COLUMN_ROW, CLOPS_DATA_TYPE_UNKNOWN, {0, 0, 0, 0}};
    tc_prepared p;
    ck_assert_int_eq(tc_prepare(&p, &big, 7), 0);
    const unsigned threads[] = {1, 3, 16};
    for (size_t i = 0; i < 3; i++) {
        clops_context_options o = defaults();
        o.device = CLOPS_DEVICE_HOST;
        o.host_threads = threads[i];
        clops_context *ctx = NULL;
        ck_assert_int_eq(clops_context_create_with_options(&o, &ctx), CLOPS_SUCCESS);
        clops_operator *op = NULL;
        ck_assert_int_eq(clops_operator_create(ctx, &p.desc, &op), CLOPS_SUCCESS);
        void *out = tc_memdup(p.sentinel, p.bufs.out_bytes);
        ck_assert_int_eq(tc_run_execute_host(op, &p.bufs, out), CLOPS_SUCCESS);
        ck_assert_msg(memcmp(out, p.want, p.bufs.out_bytes) == 0, "wrong result with %u threads", threads[i]);
        free(out);
        clops_operator_free(op);
        clops_context_free(ctx);
    }
    tc_release(&p);
}
END_TEST

/* The device setting: host, an index, one past the list. */
START_TEST(device_option)
{
    clops_context_options o = defaults();
    o.device = 0;
    clops_context *ctx = device_context(&o);
    clops_context_free(ctx);
    size_t count = 0;
    ck_assert_int_eq(clops_device_list(NULL, 0, &count), CLOPS_SUCCESS);
    o.device = (int)count;
    ck_assert_int_eq(clops_context_create_with_options(&o, &ctx), CLOPS_ERROR_INVALID_DEVICE_SELECTION);
    tc_set_env("CLOPS_DISABLE", "bogus"); /* clops_device_list reads the environment */
    ck_assert_int_eq(clops_device_list(NULL, 0, &count), CLOPS_ERROR_INVALID_SETTING);
}
END_TEST

/* `clops cache prune` with CLOPS_CACHE_MAX_SIZE=lots: exit 1 and a message. */
START_TEST(cli_prune_bad_size)
{
    const char *cli = getenv("CLOPS_CLI");
    ck_assert_msg(cli != NULL, "CLOPS_CLI is not set");
    char cmd[512], errfile[96];
    snprintf(errfile, sizeof errfile, "%s/stderr.txt", g_dir);
    snprintf(cmd, sizeof cmd, "CLOPS_CACHE_DIR='%s' CLOPS_CACHE_MAX_SIZE=lots '%s' cache prune 2>'%s' >/dev/null",
             g_dir, cli, errfile);
    const int rc = system(cmd);
    ck_assert_msg(WIFEXITED(rc) && WEXITSTATUS(rc) == 1, "exit status %d, want 1", WEXITSTATUS(rc));
    FILE *f = fopen(errfile, "r");
    char line[512] = "";
    ck_assert(f && fgets(line, sizeof line, f));
    fclose(f);
    ck_assert_msg(strstr(line, "CLOPS_CACHE_MAX_SIZE") && strstr(line, "lots"), "stderr: %s", line);
}
END_TEST

/* `clops run --fallback never` on a device without a compiler (named: with no
 * device named, a CPU default device gives way to the host backend): exit 1, the
 * status on stderr, no output file; --fallback allow overrides CLOPS_FALLBACK. */
START_TEST(cli_fallback_never)
{
    const char *cli = getenv("CLOPS_CLI"), *data = getenv("CLOPS_TEST_DATA");
    ck_assert(cli && data);
    char cmd[1024], out[96], errfile[96];
    snprintf(out, sizeof out, "%s/out.npy", g_dir);
    snprintf(errfile, sizeof errfile, "%s/stderr.txt", g_dir);
    const char *flags[2] = {"--fallback never", "--fallback allow"};
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "CLOPS_CACHE=off CLOPS_DISABLE=compiler CLOPS_FALLBACK=%s '%s' run depth-to-space "
                 "'%s/dml_input_u32.npy' '%s' --block-size 2 --device 0 %s 2>'%s'", i ? "never" : "allow", cli, data, out,
                 flags[i], errfile);
        const int rc = system(cmd);
        ck_assert_msg(WIFEXITED(rc) && WEXITSTATUS(rc) == (i ? 0 : 1), "%s: exit status %d", flags[i],
                      WEXITSTATUS(rc));
        ck_assert_msg((access(out, F_OK) == 0) == (i == 1), "%s: output file %s", flags[i],
                      i ? "missing" : "left behind");
    }
    remove(out);
}
END_TEST

static void count_entry(void *user, const char *file, uint64_t bytes, long long used, const char *key, size_t len)
{
    (void)file, (void)bytes, (void)used, (void)key, (void)len;
    ++*(size_t *)user;
}

/* Options whose cache is `mine` (g_dir/mine) while CLOPS_CACHE_DIR names another,
 * `env_dir` (g_dir/env): the calls must act on the first only. */
static clops_context_options two_caches(char mine[96], char env_dir[96])
{
    snprintf(mine, 96, "%s/mine", g_dir);
    snprintf(env_dir, 96, "%s/env", g_dir);
    tc_set_env("CLOPS_CACHE_DIR", env_dir);
    clops_context_options o = defaults();
    o.cache_dir = mine;
    return o;
}

/* Every cache maintenance call's _with_options form acts on the options' cache
 * directory, not the environment's. */
START_TEST(cache_calls_with_options)
{
    char mine[96], env_dir[96], pack[96], buf[256];
    clops_context_options o = two_caches(mine, env_dir);
    snprintf(pack, sizeof pack, "%s/all.pack", g_dir);
    clops_context *ctx = device_context(&o);
    run_d2s(ctx, CLOPS_SUCCESS);
    clops_context_free(ctx);
    ck_assert_uint_eq(entries_in(mine), 1);

    ck_assert_msg(strstr(clops_cache_status_with_options(&o, buf, sizeof buf), mine), "status: %s", buf);
    ck_assert_msg(strstr(clops_cache_status(buf, sizeof buf), env_dir), "environment's status: %s", buf);
    size_t visited = 0, n = 0;
    ck_assert_int_eq(clops_cache_list_entries_with_options(&o, count_entry, &visited, &n), CLOPS_SUCCESS);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(visited, 1);
    ck_assert_int_eq(clops_cache_export_pack_with_options(&o, pack, &n), CLOPS_SUCCESS);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(clops_cache_clear_all_with_options(&o, &n), CLOPS_SUCCESS);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(entries_in(mine), 0);
    clops_pack_report r;
    ck_assert_int_eq(clops_cache_import_pack_report_with_options(&o, pack, &r), CLOPS_SUCCESS);
    ck_assert_uint_eq(r.imported, 1);
    ck_assert_uint_eq(entries_in(mine), 1);
    o.cache_max_bytes = 0; /* a bound of 0 keeps nothing */
    ck_assert_int_eq(clops_cache_prune_with_options(&o, &n), CLOPS_SUCCESS);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(entries_in(mine), 0);
    ck_assert_uint_eq(entries_in(env_dir), 0); /* made by clops_cache_status above, never filled */

    o = defaults();
    o.cache = (clops_cache_policy)7; /* not a policy */
    ck_assert_int_eq(clops_cache_list_entries_with_options(&o, count_entry, &visited, NULL), CLOPS_ERROR_INVALID_SETTING);
    ck_assert_int_eq(clops_cache_prune_with_options(&o, NULL), CLOPS_ERROR_INVALID_SETTING);
    ck_assert_int_eq(clops_cache_clear_all_with_options(&o, NULL), CLOPS_ERROR_INVALID_SETTING);
    ck_assert_int_eq(clops_cache_export_pack_with_options(&o, pack, NULL), CLOPS_ERROR_INVALID_SETTING);
    ck_assert_int_eq(clops_cache_import_pack_report_with_options(&o, pack, NULL), CLOPS_ERROR_INVALID_SETTING);
    ck_assert_int_eq(clops_tune_with_options(&o, 0, 1, NULL, NULL), CLOPS_ERROR_INVALID_SETTING);
}
END_TEST

/* clops_tune_with_options writes the options' tuning database and its lock beside
 * it (not in the options' cache directory); clearing that cache removes the lock nobody holds and
 * keeps one another process holds. */
START_TEST(tune_with_options_and_locks)
{
    char mine[96], env_dir[96], db[96], held[160];
    clops_context_options o = two_caches(mine, env_dir);
    snprintf(db, sizeof db, "%s/tune.txt", g_dir);
    o.tuning_db = db;
    /* Issue 24 N7: the form with options reads no environment, its device list
     * included (a bad CLOPS_* made it fail naming the variable). */
    tc_set_env("CLOPS_CACHE_MAX_SIZE", "lots");
    tc_set_env("CLOPS_DISABLE", "everything");
    tc_set_env("CLOPS_TIMEOUT", "junk");
    const clops_status st = clops_tune_with_options(&o, 0, 1, NULL, NULL);
    ck_assert_msg(st == CLOPS_SUCCESS, "tune: %s (%s)", clops_status_name(st), clops_last_error_message());
    FILE *f = fopen(db, "r");
    char line[64] = "";
    ck_assert_msg(f && fgets(line, sizeof line, f), "no tuning database at %s", db);
    fclose(f);
    ck_assert_str_eq(line, "clops-tune 1\n");
    ck_assert_uint_eq(files_in(mine, "^lock-tune-"), 0); /* the lock sits beside the database (N18) */
    ck_assert_uint_eq(files_in(g_dir, "^tune\\.txt\\.lock$"), 1);
    ck_assert_msg(access(env_dir, F_OK) != 0, "the environment's cache directory was touched");

    snprintf(held, sizeof held, "%s/lock-tune-0123456789abcdef", mine);
    int ready[2], go[2];
    ck_assert(pipe(ready) == 0 && pipe(go) == 0);
    const pid_t child = fork();
    ck_assert(child >= 0);
    if (child == 0) { /* holds the lock until told */
        const int fd = open(held, O_RDWR | O_CREAT, 0600);
        struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
        char c = fd >= 0 && fcntl(fd, F_SETLKW, &lk) == 0 ? 'y' : 'n';
        if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1) _exit(1);
        _exit(0);
    }
    char c = 0;
    ck_assert(read(ready[0], &c, 1) == 1 && c == 'y');
    size_t n = 0;
    ck_assert_int_eq(clops_cache_clear_all_with_options(&o, &n), CLOPS_SUCCESS);
    ck_assert_uint_eq(files_in(mine, "^lock-tune-"), 1); /* the free one is gone, the held one stays */
    ck_assert_msg(access(held, F_OK) == 0, "a lock another process holds was removed");
    ck_assert(write(go[1], "x", 1) == 1);
    int status;
    ck_assert(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_int_eq(clops_cache_clear_all_with_options(&o, &n), CLOPS_SUCCESS);
    ck_assert_uint_eq(files_in(mine, "^lock-tune-"), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("options");
    TCase *tc = tc_fixture_case(s, "environment", setup, teardown);
    tcase_add_test(tc, bad_environment_values_are_errors);
    tcase_add_test(tc, good_environment_values);
    tcase_add_test(tc, older_shorter_struct);
    tcase_add_test(tc, only_released_struct_sizes);
    tcase_add_test(tc, import_load_timeout_strict);
    tcase_add_test(tc, bad_option_values);
    tcase_add_test(tc, cli_prune_bad_size);
    tcase_add_test(tc, host_threads_option);
    const int need = tc_need_devices(1, "the cache, fallback, tuning and device options need an OpenCL device");
    if (need < 0) {
        TCase *dev = tc_fixture_case(s, "device", setup, teardown);
        tcase_add_test(dev, cache_settings);
        tcase_add_test(dev, fallback_policy);
        tcase_add_test(dev, tuning_database_option);
        tcase_add_test(dev, local_size_origin_untuned);
        tcase_add_test(dev, device_option);
        tcase_add_test(dev, cli_fallback_never);
        tcase_add_test(dev, cache_calls_with_options);
        tcase_add_test(dev, tune_with_options_and_locks);
    }
    return tc_run_nofork(s);
}
