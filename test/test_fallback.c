/*
 * test_fallback.c - which path each operator takes when capabilities are
 * missing (CLOPS_DISABLE=fp64,int64,fp16,compiler, any subset), and that every
 * path gives the same bits.
 *
 * For each of the 16 subsets, on a fresh context with an empty program cache
 * and again with a warm one, a conformance subset runs: DepthToSpace and
 * SpaceToDepth for all 15 data types, both orders, blocks 1, 2 and 3 on small
 * odd shapes; MaxUnpooling for all 15 data types with UINT32, UINT64 and INT64
 * indices, with and without out-of-range indices. Each result (execute_host,
 * and execute on cl_mem with a wait list and a returned event) is compared
 * bit-exactly with the naive reference, and each operator must report the
 * path the documented plan (clops_device_plan) gives:
 *   - fp64, fp16: never force the host (elements move as integer words);
 *   - int64: only matters past 2^32 elements (checked on descriptors of 4 GiB,
 *     which operator creation does not allocate);
 *   - compiler: the host kernels unless a binary is cached; a warm cache keeps
 *     the device in use.
 * Also: `clops devices` reports the disabled capabilities, and a host fallback
 * on cl_mem honours the wait list (a user event completed late by another
 * thread) and returns an event, on in-order and out-of-order queues.
 *
 * Each test restores the environment in its fixture's teardown (also after a
 * failure); cache directories are temporary and removed at exit.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "reference.h"
#include "test_common.h"
#include "test_fs.h"
#include "fixture.h"

/* ---- environment and directories ------------------------------------------------------------ */

static const char *const env_names[] = {"CLOPS_CACHE_DIR", "CLOPS_CACHE", "CLOPS_DISABLE", "CLOPS_TUNE"};
#define NUM_ENV (sizeof env_names / sizeof env_names[0])
static char *env_saved[NUM_ENV];
static int env_was_set[NUM_ENV];

static char g_suite_root[PATH_MAX]; /* warm cache directories shared by the subset tests */
static char g_root[PATH_MAX];       /* the test's own temporary directory */
static clops_context *g_ctx;        /* the test's context, freed by the teardown */


static void make_temp_dir(char *out, size_t size, const char *what)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(out, size, "%s/clops-test-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", what);
    if (!mkdtemp(out)) {
        fprintf(stderr, "FATAL: mkdtemp(%s) failed\n", out);
        exit(1);
    }
}

static void setup(void)
{
    tc_env_save(env_names, NUM_ENV, env_saved, env_was_set, 1);
    make_temp_dir(g_root, sizeof g_root, "fallback");
    char dir[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s/cache", g_root);
    setenv("CLOPS_CACHE_DIR", dir, 1);
}

static void teardown(void)
{
    clops_context_free(g_ctx);
    g_ctx = NULL;
    tc_env_restore(env_names, NUM_ENV, env_saved, env_was_set);
    tc_rm_rf(g_root);
}

static clops_context *fresh_context(const char *label)
{
    clops_context_free(g_ctx);
    g_ctx = NULL;
    clops_status st = clops_context_create(&g_ctx);
    ck_assert_msg(st == CLOPS_SUCCESS && g_ctx, "%s: clops_context_create: %s (%s)", label, clops_status_name(st),
                  clops_last_error_message());
    ck_assert_msg(clops_context_backend(g_ctx) == CLOPS_BACKEND_OPENCL, "%s: clops_context_create chose the host",
                  label);
    return g_ctx;
}

/* ---- the conformance subset ----------------------------------------------------------------- */

typedef struct conf_case {
    clops_operator_type type;
    clops_data_type dtype;
    uint32_t block;                /* DepthToSpace, SpaceToDepth */
    clops_depth_space_order order; /* DepthToSpace, SpaceToDepth */
    clops_data_type itype;         /* MaxUnpooling */
    int bad;                       /* MaxUnpooling: with out-of-range indices */
} conf_case;

#define MAX_CASES 300
static conf_case g_cases[MAX_CASES];
static int g_ncases;

static void make_cases(void)
{
    static const clops_data_type itypes[3] = {CLOPS_DATA_TYPE_UINT32, CLOPS_DATA_TYPE_UINT64,
                                              CLOPS_DATA_TYPE_INT64};
    g_ncases = 0;
    for (int t = 0; t < TC_NUM_TYPES; t++) {
        for (int op = 0; op < 2; op++)
            for (int o = 0; o < 2; o++)
                for (uint32_t b = 1; b <= 3; b++)
                    g_cases[g_ncases++] = (conf_case){op ? CLOPS_OPERATOR_SPACE_TO_DEPTH : CLOPS_OPERATOR_DEPTH_TO_SPACE,
                                                      tc_types[t].type, b, (clops_depth_space_order)o, 0, 0};
        for (int i = 0; i < 3; i++)
            for (int bad = 0; bad < 2; bad++)
                g_cases[g_ncases++] =
                    (conf_case){CLOPS_OPERATOR_MAX_UNPOOLING, tc_types[t].type, 0, 0, itypes[i], bad};
    }
}

static void case_name(const conf_case *c, char *buf, size_t size)
{
    if (c->type == CLOPS_OPERATOR_MAX_UNPOOLING)
        snprintf(buf, size, "MaxUnpooling %s, %s indices%s", clops_data_type_name(c->dtype),
                 clops_data_type_name(c->itype), c->bad ? ", some out of range" : "");
    else
        snprintf(buf, size, "%s %s b%u %s",
                 c->type == CLOPS_OPERATOR_DEPTH_TO_SPACE ? "DepthToSpace" : "SpaceToDepth",
                 clops_data_type_name(c->dtype), c->block, tc_order_name(c->order));
}

/* One case's descriptors, data and expectations. Not movable (t points at c). */
typedef struct prepared {
    char name[96];
    tc_case c;             /* the case with its shapes */
    tc_prepared t;         /* descriptors, data and the reference's output (what execute on cl_mem gives) */
    const void *want_host; /* the sentinel when an error leaves host memory untouched */
    clops_status want_status;
} prepared;

static void prepare(prepared *p, const conf_case *c, uint64_t seed)
{
    memset(p, 0, sizeof *p);
    case_name(c, p->name, sizeof p->name);
    const uint32_t b = c->block;
    const uint32_t d2s_in[4] = {2, 3 * b * b, 3, 5}, s2d_in[4] = {2, 3, 3 * b, 5 * b};
    const uint32_t mu_in[4] = {2, 3, 3, 5}, mu_out[4] = {2, 3, 5, 7};
    p->c = (tc_case){p->name, c->type, c->dtype, {0}, b, c->order, c->itype, {0}};
    memcpy(p->c.in, c->type == CLOPS_OPERATOR_DEPTH_TO_SPACE   ? d2s_in
                    : c->type == CLOPS_OPERATOR_SPACE_TO_DEPTH ? s2d_in
                                                               : mu_in,
           sizeof p->c.in);
    memcpy(p->c.out, mu_out, sizeof p->c.out);
    const long bad = tc_prepare_bad(&p->t, &p->c, seed, c->bad);
    ck_assert_msg(bad == (c->bad ? 2 : 0), "test bug: %ld bad indices in %s", bad, p->name);
    p->want_status = c->bad ? CLOPS_ERROR_INDEX_OUT_OF_RANGE : CLOPS_SUCCESS;
    p->want_host = c->bad ? p->t.sentinel : p->t.want; /* execute_host leaves the output untouched on error */
}

static void release(prepared *p)
{
    tc_release(&p->t);
}

/* What a run must see. */
typedef struct expectation {
    int host;             /* every operator falls back to the host kernels */
    const char *reason;   /* ... with this word in fallback_reason */
    const char *origin1;  /* else: the allowed program origins */
    const char *origin2;
} expectation;

typedef struct origin_counts {
    int compiled, disk, in_process, host;
} origin_counts;

static clops_operator *create_checked(clops_context *ctx, prepared *p, const expectation *e, origin_counts *n,
                                      const char *label)
{
    clops_operator *op = NULL;
    clops_status st = clops_operator_create(ctx, &p->t.desc, &op);
    ck_assert_msg(st == CLOPS_SUCCESS && op, "%s [%s]: clops_operator_create: %s (%s)", p->name, label,
                  clops_status_name(st), clops_last_error_message());
    clops_operator_info info;
    ck_assert_int_eq(clops_operator_get_info(op, &info), CLOPS_SUCCESS);
    if (e->host) {
        ck_assert_msg(info.backend == CLOPS_BACKEND_HOST, "%s [%s]: backend OPENCL (kernel %s, %s), want the host "
                      "fallback", p->name, label, info.kernel_name, info.program_origin);
        ck_assert_msg(strstr(info.fallback_reason, e->reason) != NULL, "%s [%s]: fallback_reason \"%s\" does not "
                      "mention \"%s\"", p->name, label, info.fallback_reason, e->reason);
        ck_assert_msg(info.kernel_name[0] == '\0' && info.program_origin[0] == '\0',
                      "%s [%s]: host fallback reports kernel \"%s\", origin \"%s\"", p->name, label, info.kernel_name,
                      info.program_origin);
        n->host++;
    } else {
        ck_assert_msg(info.backend == CLOPS_BACKEND_OPENCL, "%s [%s]: backend HOST (\"%s\"), want OpenCL kernels",
                      p->name, label, info.fallback_reason);
        ck_assert_msg(info.kernel_name[0] != '\0' && info.fallback_reason[0] == '\0',
                      "%s [%s]: OpenCL operator with kernel \"%s\", fallback_reason \"%s\"", p->name, label,
                      info.kernel_name, info.fallback_reason);
        ck_assert_msg(strcmp(info.program_origin, e->origin1) == 0 || strcmp(info.program_origin, e->origin2) == 0,
                      "%s [%s]: program_origin \"%s\", want \"%s\" or \"%s\"", p->name, label, info.program_origin,
                      e->origin1, e->origin2);
        n->compiled += strcmp(info.program_origin, "compiled") == 0;
        n->disk += strcmp(info.program_origin, "disk cache") == 0;
        n->in_process += strcmp(info.program_origin, "in-process") == 0;
    }
    return op;
}

/* execute_host, then execute on cl_mem (uploads as the wait list, returned event). */
static void run_paths(clops_context *ctx, clops_operator *op, prepared *p, const char *label)
{
    void *out = tc_malloc(p->t.bufs.out_bytes);
    char path[160];
    snprintf(path, sizeof path, "%s, execute_host", label);
    clops_status st = tc_run_execute_host(op, &p->t.bufs, out);
    ck_assert_msg(st == p->want_status, "%s [%s]: %s (%s), want %s", p->name, path, clops_status_name(st),
                  clops_last_error_message(), clops_status_name(p->want_status));
    tc_check_bytes(out, p->want_host, p->t.bufs.out_bytes, p->t.esize, p->name, path);
    snprintf(path, sizeof path, "%s, execute on cl_mem", label);
    st = tc_run_execute_cl(ctx, op, &p->t.bufs, out, path);
    ck_assert_msg(st == p->want_status, "%s [%s]: %s (%s), want %s", p->name, path, clops_status_name(st),
                  clops_last_error_message(), clops_status_name(p->want_status));
    tc_check_bytes(out, p->t.want, p->t.bufs.out_bytes, p->t.esize, p->name, path);
    free(out);
}

static origin_counts run_conformance(clops_context *ctx, const expectation *e, const char *label)
{
    origin_counts n = {0, 0, 0, 0};
    for (int k = 0; k < g_ncases; k++) {
        prepared p;
        prepare(&p, &g_cases[k], 1000u + (uint64_t)k);
        clops_operator *op = create_checked(ctx, &p, e, &n, label);
        run_paths(ctx, op, &p, label);
        clops_operator_free(op);
        release(&p);
    }
    return n;
}

/* ---- the 16 subsets of CLOPS_DISABLE ------------------------------------------------------------ */

static const char *const caps[4] = {"fp64", "int64", "fp16", "compiler"};
#define CAP_FP64 1u
#define CAP_INT64 2u
#define CAP_FP16 4u
#define CAP_COMPILER 8u

static void subset_string(unsigned mask, char *buf, size_t size)
{
    buf[0] = '\0';
    for (int i = 0; i < 4; i++)
        if (mask & (1u << i))
            snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", buf[0] ? "," : "", caps[i]);
}

/* The capabilities clops_device_list and clops_device_plan report under the subset. */
static void check_reported_capabilities(unsigned mask, const char *label)
{
    size_t count = 0;
    ck_assert_int_eq(clops_device_list(NULL, 0, &count), CLOPS_SUCCESS);
    ck_assert_msg(count > 0, "no devices");
    clops_device_info *infos = tc_malloc(count * sizeof *infos);
    ck_assert_int_eq(clops_device_list(infos, count, &count), CLOPS_SUCCESS);
    for (size_t i = 0; i < count; i++) {
        const clops_device_info *d = &infos[i];
        if (mask & CAP_FP64)
            ck_assert_msg(!d->has_fp64, "%s: device %zu reports fp64", label, i);
        if (mask & CAP_INT64)
            ck_assert_msg(!d->has_int64, "%s: device %zu reports int64", label, i);
        if (mask & CAP_FP16)
            ck_assert_msg(!d->has_fp16, "%s: device %zu reports fp16", label, i);
        if (mask & CAP_COMPILER)
            ck_assert_msg(!d->compiler_available, "%s: device %zu reports a compiler", label, i);
        char plan[1024];
        clops_device_plan(d, plan, sizeof plan);
        if (mask & CAP_COMPILER)
            ck_assert_msg(strstr(plan, "cached or imported binaries only") != NULL, "%s: plan without the compiler:"
                          "\n%s", label, plan);
        else if (d->compiler_available)
            ck_assert_msg(strstr(plan, "compiled at first use") != NULL, "%s: plan with a compiler:\n%s", label, plan);
        if (mask & CAP_INT64)
            ck_assert_msg(strstr(plan, "past 2^32 elements: the host kernels") != NULL, "%s: plan without int64:\n%s",
                          label, plan);
        ck_assert_msg(strstr(plan, "FLOAT64 and COMPLEX128 too") != NULL, "%s: plan:\n%s", label, plan);
    }
    free(infos);
}

/* Cache entries (<16 hex digits>.bin) in a directory; 0 if it does not exist. */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strlen(e->d_name) == 20 && strcmp(e->d_name + 16, ".bin") == 0;
    closedir(d);
    return n;
}

/* Warm directories: one per subset of {fp64, int64, fp16} (CLOPS_DISABLE is
 * part of the device identity, so each has its own entries). */
static char g_warm_dir[8][PATH_MAX + 32];
static int g_warm_programs[8]; /* programs compiled into it; 0 = not warmed yet */

static const expectation expect_cold = {0, NULL, "compiled", "in-process"};
static const expectation expect_warm = {0, NULL, "disk cache", "in-process"};
static const expectation expect_host = {1, "compiler", NULL, NULL};

/* The empty-cache run of a subset that has a compiler, into its warm directory. */
static void warm_base(unsigned base)
{
    char dis[64], label[128];
    subset_string(base, dis, sizeof dis);
    snprintf(label, sizeof label, "CLOPS_DISABLE=%s, empty cache", dis);
    snprintf(g_warm_dir[base], sizeof g_warm_dir[base], "%s/warm-%u", g_suite_root, base);
    tc_rm_rf(g_warm_dir[base]);
    tc_set_env("CLOPS_DISABLE", dis);
    setenv("CLOPS_CACHE_DIR", g_warm_dir[base], 1);
    check_reported_capabilities(base, label);
    clops_context *ctx = fresh_context(label);
    const origin_counts n = run_conformance(ctx, &expect_cold, label);
    ck_assert_msg(n.compiled > 0 && n.disk == 0 && n.compiled + n.in_process == g_ncases,
                  "%s: %d compiled, %d from disk, %d in-process", label, n.compiled, n.disk, n.in_process);
    g_warm_programs[base] = n.compiled;
}

START_TEST(test_subset)
{
    const unsigned mask = (unsigned)_i, base = mask & 7u;
    char dis[64], label[128];
    subset_string(mask, dis, sizeof dis);

    /* empty cache */
    if (mask & CAP_COMPILER) {
        snprintf(label, sizeof label, "CLOPS_DISABLE=%s, empty cache", dis);
        tc_set_env("CLOPS_DISABLE", dis);
        check_reported_capabilities(mask, label);
        clops_context *ctx = fresh_context(label);
        const origin_counts n = run_conformance(ctx, &expect_host, label);
        ck_assert_msg(n.host == g_ncases, "%s: %d of %d on the host", label, n.host, g_ncases);
        if (!g_warm_programs[base]) {
            const char *keep = getenv("CLOPS_CACHE_DIR");
            char dir[PATH_MAX + 16];
            snprintf(dir, sizeof dir, "%s", keep);
            warm_base(base); /* run alone: warm the cache its warm run uses */
            setenv("CLOPS_CACHE_DIR", dir, 1);
        }
    } else {
        warm_base(base);
    }
    /* nothing was written by a run without a compiler */
    if (mask & CAP_COMPILER) {
        char dir[PATH_MAX + 32];
        snprintf(dir, sizeof dir, "%s/cache", g_root);
        const int entries = count_entries(dir);
        ck_assert_msg(entries == 0, "CLOPS_DISABLE=%s wrote %d cache entries without a compiler", dis, entries);
    }

    /* warm cache: the entries of the same device and options, built where a
     * compiler was (for a subset with compiler: by the subset without it) */
    snprintf(label, sizeof label, "CLOPS_DISABLE=%s, warm cache", dis);
    tc_set_env("CLOPS_DISABLE", dis);
    setenv("CLOPS_CACHE_DIR", g_warm_dir[base], 1);
    clops_context *ctx = fresh_context(label);
    const origin_counts n = run_conformance(ctx, &expect_warm, label);
    ck_assert_msg(n.compiled == 0 && n.disk == g_warm_programs[base], "%s: %d compiled, %d from disk (want 0, %d)",
                  label, n.compiled, n.disk, g_warm_programs[base]);
}
END_TEST

/* ---- past 2^32 elements: the int64 decision, without allocating ----------------------------------- */

static uint64_t device0_max_alloc(void)
{
    size_t count = 0;
    ck_assert_int_eq(clops_device_list(NULL, 0, &count), CLOPS_SUCCESS);
    clops_device_info *infos = tc_malloc(count * sizeof *infos);
    ck_assert_int_eq(clops_device_list(infos, count, &count), CLOPS_SUCCESS);
    const uint64_t max = infos[0].max_alloc_bytes;
    const char *dis = getenv("CLOPS_DISABLE");
    if (dis && strstr(dis, "int64"))
        ck_assert_msg(!infos[0].has_int64, "CLOPS_DISABLE=%s: device 0 still reports int64", dis);
    free(infos);
    return max;
}

typedef struct huge_case {
    const char *name;
    clops_operator_type type;
    uint32_t in[4];
    uint32_t out[4];
    int broadcast_input;
} huge_case;

static const huge_case huge_cases[] = {
    /* exactly 2^32 UINT8 elements: 4 GiB, the largest a 4 GiB device allocation holds */
    {"DepthToSpace b1, 1x1x65536x65536 UINT8", CLOPS_OPERATOR_DEPTH_TO_SPACE, {1, 1, 65536, 65536},
     {1, 1, 65536, 65536}, 1},
    {"MaxUnpooling into 1x1x65536x65536 UINT8", CLOPS_OPERATOR_MAX_UNPOOLING, {1, 1, 1, 2}, {1, 1, 65536, 65536}, 0},
    /* past 2^32 elements (and past 4 GiB) */
    {"DepthToSpace b1, 1x1x65536x65537 UINT8", CLOPS_OPERATOR_DEPTH_TO_SPACE, {1, 1, 65536, 65537},
     {1, 1, 65536, 65537}, 1},
    /* control: below the 32-bit limit */
    {"DepthToSpace b1, 1x1x4096x4096 UINT8", CLOPS_OPERATOR_DEPTH_TO_SPACE, {1, 1, 4096, 4096}, {1, 1, 4096, 4096},
     1},
};
#define NUM_HUGE (sizeof huge_cases / sizeof huge_cases[0])

START_TEST(test_past_2_32_elements)
{
    const int int64_off = _i % 2;
    const huge_case *h = &huge_cases[_i / 2];
    tc_set_env("CLOPS_DISABLE", int64_off ? "int64" : NULL);
    char label[160];
    snprintf(label, sizeof label, "%s, %s", h->name, int64_off ? "CLOPS_DISABLE=int64" : "int64 available");
    const uint64_t max_alloc = device0_max_alloc();
    clops_status st = clops_context_create_device(0, &g_ctx);
    ck_assert_msg(st == CLOPS_SUCCESS, "clops_context_create_device(0): %s", clops_status_name(st));

    static const uint64_t zero[4] = {0, 0, 0, 0};
    clops_tensor_desc x = {CLOPS_DATA_TYPE_UINT8, {h->in[0], h->in[1], h->in[2], h->in[3]},
                           h->broadcast_input ? zero : NULL};
    clops_tensor_desc y = {CLOPS_DATA_TYPE_UINT8, {h->out[0], h->out[1], h->out[2], h->out[3]}, NULL};
    clops_tensor_desc idx = {CLOPS_DATA_TYPE_INT64, {h->in[0], h->in[1], h->in[2], h->in[3]}, NULL};
    clops_depth_to_space_desc d2s = {&x, &y, 1, CLOPS_ORDER_DEPTH_COLUMN_ROW};
    clops_max_unpooling_desc mu = {&x, &idx, &y, CLOPS_INDICES_FLAT};
    clops_operator_desc desc = {h->type, h->type == CLOPS_OPERATOR_MAX_UNPOOLING ? (const void *)&mu
                                                                                 : (const void *)&d2s};
    const uint64_t out_elems = ref_element_count(h->out), out_bytes = out_elems; /* UINT8 */
    const int past_32 = out_elems > UINT32_MAX - (1ull << 24); /* clops's margin below 2^32 */
    clops_operator *op = NULL;
    st = clops_operator_create(g_ctx, &desc, &op);
    if (max_alloc && out_bytes > max_alloc) {
        ck_assert_msg(st == CLOPS_ERROR_TOO_LARGE_FOR_DEVICE && op == NULL, "%s: %llu bytes on a device of at most "
                      "%llu per allocation: %s, want CLOPS_ERROR_TOO_LARGE_FOR_DEVICE", label,
                      (unsigned long long)out_bytes, (unsigned long long)max_alloc, clops_status_name(st));
        return;
    }
    ck_assert_msg(st == CLOPS_SUCCESS && op, "%s: clops_operator_create: %s (%s)", label, clops_status_name(st),
                  clops_last_error_message());
    clops_operator_info info;
    ck_assert_int_eq(clops_operator_get_info(op, &info), CLOPS_SUCCESS);
    if (past_32 && int64_off) {
        ck_assert_msg(info.backend == CLOPS_BACKEND_HOST && strstr(info.fallback_reason, "64-bit") != NULL,
                      "%s: backend %d, fallback_reason \"%s\"; want the host, for want of 64-bit integers", label,
                      (int)info.backend, info.fallback_reason);
    } else {
        ck_assert_msg(info.backend == CLOPS_BACKEND_OPENCL && info.kernel_name[0] != '\0',
                      "%s: backend %d (\"%s\"), want OpenCL kernels", label, (int)info.backend, info.fallback_reason);
        const char *want = past_32 ? "-DOFFSET_64=1" : "-DOFFSET_64=0";
        ck_assert_msg(strstr(info.build_options, want) != NULL, "%s: build options \"%s\" lack %s", label,
                      info.build_options, want);
    }
    clops_operator_free(op);
}
END_TEST

/* ---- the CLI reports disabled capabilities ----------------------------------------------------- */

static char *run_cli_devices(const char *disable, int *status)
{
    const char *cli = getenv("CLOPS_CLI");
    ck_assert_msg(cli && *cli, "CLOPS_CLI is not set (ctest sets it to the clops binary)");
    tc_set_env("CLOPS_DISABLE", disable);
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "'%s' devices", cli);
    FILE *f = popen(cmd, "r");
    ck_assert_msg(f != NULL, "popen(%s) failed", cmd);
    size_t cap = 1 << 16, n = 0;
    char *out = tc_malloc(cap);
    size_t r;
    while ((r = fread(out + n, 1, cap - 1 - n, f)) > 0) {
        n += r;
        if (n + 1 == cap) {
            cap *= 2;
            out = realloc(out, cap);
            ck_assert(out != NULL);
        }
    }
    out[n] = '\0';
    *status = pclose(f);
    return out;
}

/* The "fp16: .. fp64: .. int64: .. compiler: .." lines, one per device. */
static int count_lines_with(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

START_TEST(test_cli_devices)
{
    size_t count = 0;
    unsetenv("CLOPS_DISABLE");
    ck_assert_int_eq(clops_device_list(NULL, 0, &count), CLOPS_SUCCESS);
    clops_device_info *infos = tc_malloc((count ? count : 1) * sizeof *infos);
    ck_assert_int_eq(clops_device_list(infos, count, &count), CLOPS_SUCCESS);

    int status = 0;
    char *out = run_cli_devices("fp64,int64", &status);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "clops devices exited with 0x%x:\n%s", status, out);
    ck_assert_msg(count_lines_with(out, "fp16: ") == (int)count, "clops devices lists %d capability lines for %zu "
                  "devices:\n%s", count_lines_with(out, "fp16: "), count, out);
    ck_assert_msg(count_lines_with(out, "fp64: no  int64: no") == (int)count, "CLOPS_DISABLE=fp64,int64: not every "
                  "device says \"fp64: no  int64: no\":\n%s", out);
    ck_assert_msg(count_lines_with(out, "(CLOPS_DISABLE=fp64,int64: those capabilities are reported absent)") ==
                      (int)count, "CLOPS_DISABLE not noted per device:\n%s", out);
    ck_assert_msg(count_lines_with(out, "tensors past 2^32 elements: the host kernels") == (int)count,
                  "the plan of a device without int64 does not send huge tensors to the host:\n%s", out);
    for (size_t i = 0; i < count; i++) {
        char want[64];
        snprintf(want, sizeof want, "compiler: %s", infos[i].compiler_available ? "yes" : "no");
        ck_assert_msg(strstr(out, want) != NULL, "device %zu: \"%s\" missing:\n%s", i, want, out);
    }
    free(out);

    out = run_cli_devices("compiler", &status);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "clops devices exited with 0x%x", status);
    ck_assert_msg(count_lines_with(out, "compiler: no") == (int)count, "CLOPS_DISABLE=compiler:\n%s", out);
    ck_assert_msg(count_lines_with(out, "cached or imported binaries only") == (int)count,
                  "CLOPS_DISABLE=compiler: the plan does not say so:\n%s", out);
    free(out);

    /* without CLOPS_DISABLE: what the devices have */
    out = run_cli_devices(NULL, &status);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "clops devices exited with 0x%x", status);
    ck_assert_msg(strstr(out, "CLOPS_DISABLE") == NULL, "CLOPS_DISABLE noted while unset:\n%s", out);
    const char *p = out;
    for (size_t i = 0; i < count; i++) {
        char want[128];
        snprintf(want, sizeof want, "fp16: %s  fp64: %s  int64: %s  compiler: %s", infos[i].has_fp16 ? "yes" : "no",
                 infos[i].has_fp64 ? "yes" : "no", infos[i].has_int64 ? "yes" : "no",
                 infos[i].compiler_available ? "yes" : "no");
        const char *q = strstr(p, want);
        ck_assert_msg(q != NULL, "device %zu: \"%s\" not found in order:\n%s", i, want, out);
        p = q + strlen(want);
    }
    free(out);
    free(infos);
}
END_TEST

/* ---- a fallback operator on cl_mem: wait list and returned event ---------------------------------- */

typedef struct late_event {
    cl_event ev;
    atomic_int completed;
} late_event;

static void *complete_late(void *arg)
{
    late_event *l = arg;
    struct timespec ts = {0, 150 * 1000000L};
    nanosleep(&ts, NULL);
    atomic_store(&l->completed, 1);
    clSetUserEventStatus(l->ev, CL_COMPLETE);
    return NULL;
}

static cl_mem buffer_with(clops_context *ctx, const void *data, size_t bytes)
{
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(clops_context_cl_context(ctx), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes,
                              (void *)data, &err);
    ck_assert_msg(m && err == CL_SUCCESS, "clCreateBuffer(%zu): %d", bytes, (int)err);
    return m;
}

/* Runs a fallback operator on cl_mem after a user event another thread completes
 * 150 ms later; the returned event completes after it, with the right output. */
static void fallback_after_user_event(clops_context *ctx, const conf_case *c, const char *label)
{
    prepared p;
    prepare(&p, c, 4242);
    const expectation e = expect_host;
    origin_counts n = {0, 0, 0, 0};
    clops_operator *op = create_checked(ctx, &p, &e, &n, label);
    cl_mem in = buffer_with(ctx, p.t.in, p.t.bufs.in_bytes);
    cl_mem idx = p.t.idx ? buffer_with(ctx, p.t.idx, p.t.bufs.idx_bytes) : NULL;
    cl_mem out = buffer_with(ctx, p.t.sentinel, p.t.bufs.out_bytes);
    cl_int err;
    late_event late;
    late.ev = clCreateUserEvent(clops_context_cl_context(ctx), &err);
    ck_assert_msg(late.ev && err == CL_SUCCESS, "clCreateUserEvent: %d", (int)err);
    atomic_init(&late.completed, 0);
    pthread_t t;
    ck_assert(pthread_create(&t, NULL, complete_late, &late) == 0);
    clops_buffers b = {in, idx, out};
    cl_event done = NULL;
    clops_status st = clops_operator_execute(op, &b, 1, &late.ev, &done);
    if (st == CLOPS_SUCCESS) st = clops_operator_last_status(op); /* bad indices, after the late event */
    const clops_status want = p.want_status;
    ck_assert_msg(st == want, "%s: clops_operator_execute: %s (%s), want %s", label, clops_status_name(st),
                  clops_last_error_message(), clops_status_name(want));
    if (want == CLOPS_SUCCESS)
        ck_assert_msg(done != NULL, "%s: no event returned", label);
    if (done) {
        ck_assert_int_eq(clWaitForEvents(1, &done), CL_SUCCESS);
        cl_int es = -1;
        ck_assert_int_eq(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof es, &es, NULL), CL_SUCCESS);
        ck_assert_msg(es == CL_COMPLETE, "%s: returned event status %d", label, (int)es);
        ck_assert_msg(atomic_load(&late.completed) == 1, "%s: the returned event completed before the wait list",
                      label);
    }
    pthread_join(t, NULL);
    ck_assert_int_eq(clFinish(clops_context_queue(ctx)), CL_SUCCESS);
    void *got = tc_malloc(p.t.bufs.out_bytes);
    ck_assert_int_eq(clEnqueueReadBuffer(clops_context_queue(ctx), out, CL_TRUE, 0, p.t.bufs.out_bytes, got, 0, NULL,
                                         NULL), CL_SUCCESS);
    tc_check_bytes(got, p.t.want, p.t.bufs.out_bytes, p.t.esize, p.name, label);

    /* again after a completed marker, without a returned event */
    cl_event marker = NULL;
    ck_assert_int_eq(clEnqueueMarkerWithWaitList(clops_context_queue(ctx), 0, NULL, &marker), CL_SUCCESS);
    ck_assert_int_eq(clWaitForEvents(1, &marker), CL_SUCCESS);
    ck_assert_int_eq(clEnqueueWriteBuffer(clops_context_queue(ctx), out, CL_TRUE, 0, p.t.bufs.out_bytes, p.t.sentinel, 0,
                                          NULL, NULL), CL_SUCCESS);
    st = clops_operator_execute(op, &b, 1, &marker, NULL);
    if (st == CLOPS_SUCCESS) st = clops_operator_last_status(op);
    ck_assert_msg(st == want, "%s (marker): %s, want %s", label, clops_status_name(st), clops_status_name(want));
    ck_assert_int_eq(clEnqueueReadBuffer(clops_context_queue(ctx), out, CL_TRUE, 0, p.t.bufs.out_bytes, got, 0, NULL,
                                         NULL), CL_SUCCESS);
    tc_check_bytes(got, p.t.want, p.t.bufs.out_bytes, p.t.esize, p.name, label);

    free(got);
    clReleaseEvent(marker);
    if (done)
        clReleaseEvent(done);
    clReleaseEvent(late.ev);
    clReleaseMemObject(in);
    if (idx)
        clReleaseMemObject(idx);
    clReleaseMemObject(out);
    clops_operator_free(op);
    release(&p);
}

START_TEST(test_fallback_cl_mem_events)
{
    setenv("CLOPS_DISABLE", "compiler", 1);
    clops_context *ctx = fresh_context("fallback on cl_mem");
    const conf_case d2s = {CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_FLOAT32, 2, CLOPS_ORDER_COLUMN_ROW_DEPTH, 0,
                           0};
    const conf_case s2d = {CLOPS_OPERATOR_SPACE_TO_DEPTH, CLOPS_DATA_TYPE_COMPLEX128, 3, CLOPS_ORDER_DEPTH_COLUMN_ROW,
                           0, 0};
    const conf_case unpool = {CLOPS_OPERATOR_MAX_UNPOOLING, CLOPS_DATA_TYPE_FLOAT16, 0, 0, CLOPS_DATA_TYPE_INT64, 0};
    const conf_case unpool_bad = {CLOPS_OPERATOR_MAX_UNPOOLING, CLOPS_DATA_TYPE_UINT8, 0, 0, CLOPS_DATA_TYPE_UINT64,
                                  1};
    fallback_after_user_event(ctx, &d2s, "fallback DepthToSpace after a user event");
    fallback_after_user_event(ctx, &s2d, "fallback SpaceToDepth after a user event");
    fallback_after_user_event(ctx, &unpool, "fallback MaxUnpooling after a user event");
    fallback_after_user_event(ctx, &unpool_bad, "fallback MaxUnpooling, bad indices, after a user event");
}
END_TEST

/* A fallback operator on a context around the caller's out-of-order queue. */
START_TEST(test_fallback_out_of_order_queue)
{
    setenv("CLOPS_DISABLE", "compiler", 1);
    clops_context *dev = fresh_context("out-of-order queue");
    cl_context c = clops_context_cl_context(dev);
    cl_device_id d = NULL;
    ck_assert_int_eq(clGetContextInfo(c, CL_CONTEXT_DEVICES, sizeof d, &d, NULL), CL_SUCCESS);
    cl_command_queue_properties props = 0;
    clGetDeviceInfo(d, CL_DEVICE_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    if (!(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)) {
        fprintf(stderr, "note: no out-of-order queues on this device; test_fallback_out_of_order_queue skipped\n");
        return;
    }
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(c, d, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
    ck_assert_msg(q && err == CL_SUCCESS, "clCreateCommandQueue(out of order): %d", (int)err);
    clops_context *ctx = NULL;
    clops_status st = clops_context_create_from_cl(c, d, q, &ctx);
    clReleaseCommandQueue(q);
    ck_assert_msg(st == CLOPS_SUCCESS, "clops_context_create_from_cl: %s", clops_status_name(st));
    const expectation e = expect_host;
    for (int k = 0; k < g_ncases; k += 7) { /* a spread of the conformance cases */
        prepared p;
        prepare(&p, &g_cases[k], 77u + (uint64_t)k);
        origin_counts n = {0, 0, 0, 0};
        clops_operator *op = create_checked(ctx, &p, &e, &n, "out-of-order queue");
        run_paths(ctx, op, &p, "out-of-order queue");
        clops_operator_free(op);
        release(&p);
    }
    clops_context_free(ctx);
}
END_TEST

/* ---- suite ------------------------------------------------------------------------------------------ */

static Suite *fallback_suite(void)
{
    Suite *s = suite_create("fallback");
    TCase *tc = tc_fixture_case(s, "subsets", setup, teardown);
    tcase_add_loop_test(tc, test_subset, 0, 16);

    tc = tc_fixture_case(s, "past_2_32", setup, teardown);
    tcase_add_loop_test(tc, test_past_2_32_elements, 0, (int)(2 * NUM_HUGE));

    tc = tc_fixture_case(s, "cli", setup, teardown);
    tcase_add_test(tc, test_cli_devices);

    tc = tc_fixture_case(s, "cl_mem", setup, teardown);
    TC_TESTS(tc, test_fallback_cl_mem_events, test_fallback_out_of_order_queue);
    return s;
}

int main(void)
{
    const int skip = tc_need_devices(1, "the fallback from a device cannot be tested");
    if (skip >= 0)
        return skip;
    make_cases();
    make_temp_dir(g_suite_root, sizeof g_suite_root, "fallback-warm");
    const int rc = tc_run_nofork(fallback_suite());
    tc_rm_rf(g_suite_root);
    return rc;
}
