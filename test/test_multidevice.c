/*
 * test_multidevice.c - several devices and several threads at once.
 *
 * ctest runs this suite with POCL_DEVICES="pthread basic", so PoCL shows two
 * devices. With fewer than two the suite skips loudly (exit 77), or fails under
 * CLOPS_REQUIRE_DEVICE=1.
 *   - a context per device, all alive at once, each device's programs cached
 *     under its own identity;
 *   - threads: per device, four threads sharing one context (each with its own
 *     operators: operators are not thread-safe, contexts are) and one thread
 *     with a private context, for a bounded number of iterations, on a cold
 *     cache and then on a warm one; every result is compared bit-exactly with
 *     the reference, and no program is compiled twice on one context (on
 *     PoCL's "basic" device before PoCL 5, which deadlocks when threads share
 *     a queue, every thread gets its own context instead; a watchdog turns any
 *     hang into a failure);
 *   - clops_context_create_from_cl on the second device with the caller's
 *     cl_context and an in-order and an out-of-order queue, and on a
 *     cl_context that holds both devices.
 * Threads never call Check: they record failures, which the main thread asserts.
 */
#define _GNU_SOURCE
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "reference.h"
#include "test_common.h"
#include "test_fs.h"
#include "fixture.h"

#define SHARED_THREADS 4 /* per device, on one context */
#define ITERATIONS 6
#define OPTS_MAX 512 /* build options as clops_operator_get_info reports them */

/* ---- environment ----------------------------------------------------------------------------- */

static const char *const env_names[] = {"CLOPS_CACHE_DIR"};
static char *env_saved[1];
static int env_was_set[1];
static char g_root[PATH_MAX];
static char g_dir[PATH_MAX + 16];
static clops_device_info g_dev[2];

static void setup(void)
{
    tc_env_save(env_names, 1, env_saved, env_was_set, 1);
    const char *tmp = getenv("TMPDIR");
    snprintf(g_root, sizeof g_root, "%s/clops-test-multi-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    ck_assert_msg(mkdtemp(g_root) != NULL, "mkdtemp(%s) failed", g_root);
    snprintf(g_dir, sizeof g_dir, "%s/cache", g_root);
    setenv("CLOPS_CACHE_DIR", g_dir, 1);
}

static void teardown(void)
{
    tc_env_restore(env_names, 1, env_saved, env_was_set);
    tc_rm_rf(g_root);
}

/* ---- cases (thread-safe: no Check calls) ----------------------------------------------------------- */

static const tc_case mcases[] = {
    {"DepthToSpace FLOAT32 b2 DCR", CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_FLOAT32, {2, 12, 5, 7}, 2,
     CLOPS_ORDER_DEPTH_COLUMN_ROW, 0, {0}},
    {"SpaceToDepth UINT8 b3 CRD", CLOPS_OPERATOR_SPACE_TO_DEPTH, CLOPS_DATA_TYPE_UINT8, {1, 3, 9, 15}, 3,
     CLOPS_ORDER_COLUMN_ROW_DEPTH, 0, {0}},
    {"DepthToSpace COMPLEX128 b3 CRD", CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_COMPLEX128, {1, 18, 3, 4}, 3,
     CLOPS_ORDER_COLUMN_ROW_DEPTH, 0, {0}},
    {"SpaceToDepth FLOAT16 b2 DCR", CLOPS_OPERATOR_SPACE_TO_DEPTH, CLOPS_DATA_TYPE_FLOAT16, {3, 5, 6, 10}, 2,
     CLOPS_ORDER_DEPTH_COLUMN_ROW, 0, {0}},
    {"MaxUnpooling FLOAT64 INT64 indices", CLOPS_OPERATOR_MAX_UNPOOLING, CLOPS_DATA_TYPE_FLOAT64, {2, 3, 4, 5},
     0, 0, CLOPS_DATA_TYPE_INT64, {2, 3, 8, 9}},
    {"MaxUnpooling INT16 UINT32 indices", CLOPS_OPERATOR_MAX_UNPOOLING, CLOPS_DATA_TYPE_INT16, {1, 4, 3, 3}, 0, 0,
     CLOPS_DATA_TYPE_UINT32, {1, 4, 6, 7}},
    /* each case above is its own program (element and index widths differ) */
    {"DepthToSpace BFLOAT16 b1 DCR", CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_BFLOAT16, {2, 3, 7, 3}, 1,
     CLOPS_ORDER_DEPTH_COLUMN_ROW, 0, {0}},
    {"MaxUnpooling UINT64 UINT32 indices", CLOPS_OPERATOR_MAX_UNPOOLING, CLOPS_DATA_TYPE_UINT64, {1, 2, 5, 5}, 0, 0,
     CLOPS_DATA_TYPE_UINT32, {1, 2, 10, 11}},
};
#define NUM_MCASES (sizeof mcases / sizeof mcases[0])

/* A cl_mem holding `src`, written without blocking; the write's event goes to ev[*n]. */
static cl_mem upload(clops_context *ctx, const void *src, size_t bytes, cl_event *ev, cl_uint *n, cl_int *err)
{
    if (!src || !bytes)
        return NULL;
    cl_mem m = clCreateBuffer(clops_context_cl_context(ctx), CL_MEM_READ_WRITE, bytes, NULL, err);
    if (!m)
        return NULL;
    *err = clEnqueueWriteBuffer(clops_context_queue(ctx), m, CL_FALSE, 0, bytes, src, 0, NULL, &ev[*n]);
    if (*err == CL_SUCCESS)
        (*n)++;
    return m;
}

/* execute_host, then execute on cl_mem (uploads as the wait list, returned
 * event waited on); 0 if both are bit-exact, else -1 with a message. */
static int run_case(clops_context *ctx, clops_operator *op, const tc_prepared *p, char *err, size_t size)
{
    void *out = malloc(p->bufs.out_bytes);
    if (!out) {
        snprintf(err, size, "out of memory");
        return -1;
    }
    memcpy(out, p->sentinel, p->bufs.out_bytes);
    clops_host_buffers hb = {p->in, p->bufs.in_bytes, p->idx, p->bufs.idx_bytes, out, p->bufs.out_bytes};
    clops_status st = clops_operator_execute_host(op, &hb);
    int rc = 0;
    if (st != CLOPS_SUCCESS) {
        snprintf(err, size, "%s: execute_host: %s (%s)", p->def->name, clops_status_name(st),
                 clops_last_error_message());
        rc = -1;
    } else if (memcmp(out, p->want, p->bufs.out_bytes) != 0) {
        snprintf(err, size, "%s: execute_host: wrong result", p->def->name);
        rc = -1;
    }
    cl_event waits[3], done = NULL;
    cl_uint nwait = 0;
    cl_int clerr = CL_SUCCESS;
    cl_mem in = NULL, idx = NULL, o = NULL;
    if (rc == 0) {
        in = upload(ctx, p->in, p->bufs.in_bytes, waits, &nwait, &clerr);
        if (clerr == CL_SUCCESS)
            idx = upload(ctx, p->idx, p->bufs.idx_bytes, waits, &nwait, &clerr);
        if (clerr == CL_SUCCESS)
            o = upload(ctx, p->sentinel, p->bufs.out_bytes, waits, &nwait, &clerr);
        if (clerr != CL_SUCCESS) {
            snprintf(err, size, "%s: uploads failed: %d", p->def->name, (int)clerr);
            rc = -1;
        }
    }
    if (rc == 0) {
        clops_buffers b = {in, idx, o};
        st = clops_operator_execute(op, &b, nwait, waits, &done);
        if (st != CLOPS_SUCCESS || !done) {
            snprintf(err, size, "%s: execute: %s (%s), event %p", p->def->name, clops_status_name(st),
                     clops_last_error_message(), (void *)done);
            rc = -1;
        }
    }
    if (done) {
        clerr = clWaitForEvents(1, &done);
        cl_int es = -1;
        if (clerr == CL_SUCCESS)
            clerr = clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof es, &es, NULL);
        if (rc == 0 && (clerr != CL_SUCCESS || es != CL_COMPLETE)) {
            snprintf(err, size, "%s: returned event: error %d, status %d", p->def->name, (int)clerr, (int)es);
            rc = -1;
        }
        clReleaseEvent(done);
    }
    if (rc == 0) {
        memset(out, 0, p->bufs.out_bytes);
        clerr = clEnqueueReadBuffer(clops_context_queue(ctx), o, CL_TRUE, 0, p->bufs.out_bytes, out, 0, NULL, NULL);
        if (clerr != CL_SUCCESS) {
            snprintf(err, size, "%s: read back: %d", p->def->name, (int)clerr);
            rc = -1;
        } else if (memcmp(out, p->want, p->bufs.out_bytes) != 0) {
            snprintf(err, size, "%s: execute on cl_mem: wrong result", p->def->name);
            rc = -1;
        }
    }
    clFinish(clops_context_queue(ctx));
    for (cl_uint i = 0; i < nwait; i++)
        clReleaseEvent(waits[i]);
    tc_release_buffers(in, idx, o);
    free(out);
    return rc;
}

/* Main-thread wrapper: creates the case's operator on ctx, checks it runs on
 * the device with an allowed program origin, and its results. */
static void check_case(clops_context *ctx, const tc_case *d, const char *origin1, const char *origin2,
                       const char *label)
{
    tc_prepared p;
    ck_assert_msg(tc_prepare(&p, d, 17) == 0, "test bug: case %s", d->name);
    clops_operator *op = NULL;
    clops_status st = clops_operator_create(ctx, &p.desc, &op);
    ck_assert_msg(st == CLOPS_SUCCESS, "%s [%s]: clops_operator_create: %s (%s)", d->name, label,
                  clops_status_name(st), clops_last_error_message());
    clops_operator_info info;
    ck_assert_int_eq(clops_operator_get_info(op, &info), CLOPS_SUCCESS);
    ck_assert_msg(info.backend == CLOPS_BACKEND_OPENCL, "%s [%s]: fell back to the host: %s", d->name, label,
                  info.fallback_reason);
    ck_assert_msg(strcmp(info.program_origin, origin1) == 0 || (origin2 && strcmp(info.program_origin, origin2) == 0),
                  "%s [%s]: program_origin \"%s\", want \"%s\"%s%s", d->name, label, info.program_origin, origin1,
                  origin2 ? " or " : "", origin2 ? origin2 : "");
    char err[512] = "";
    const int rc = run_case(ctx, op, &p, err, sizeof err);
    ck_assert_msg(rc == 0, "%s [%s]: %s", d->name, label, err);
    clops_operator_free(op);
    tc_release(&p);
}

static clops_context *context_on(unsigned device, const char *label)
{
    clops_context *c = NULL;
    clops_status st = clops_context_create_device(device, &c);
    ck_assert_msg(st == CLOPS_SUCCESS && c, "%s: clops_context_create_device(%u): %s (%s)", label, device,
                  clops_status_name(st), clops_last_error_message());
    ck_assert_msg(clops_context_backend(c) == CLOPS_BACKEND_OPENCL, "%s: not an OpenCL context", label);
    ck_assert_msg(strcmp(clops_context_device_name(c), g_dev[device].device_name) == 0,
                  "%s: context on device %u is \"%s\", clops_device_list says \"%s\"", label, device,
                  clops_context_device_name(c), g_dev[device].device_name);
    return c;
}

typedef struct entry_tally {
    int valid, invalid;
    int per_device[2];
} entry_tally;

static void tally(void *user, const char *file, uint64_t bytes, long long last_used, const char *key, size_t key_len)
{
    (void)file, (void)bytes, (void)last_used;
    entry_tally *t = user;
    if (!key) {
        t->invalid++;
        return;
    }
    t->valid++;
    for (int d = 0; d < 2; d++) {
        char line[192];
        snprintf(line, sizeof line, "\ndevice: %s\n", g_dev[d].device_name);
        if (memmem(key, key_len, line, strlen(line)))
            t->per_device[d]++;
    }
}

static entry_tally list_cache(void)
{
    entry_tally t;
    memset(&t, 0, sizeof t);
    size_t count = 0;
    clops_status st = clops_cache_list_entries(tally, &t, &count);
    ck_assert_msg(st == CLOPS_SUCCESS, "clops_cache_list_entries: %s", clops_status_name(st));
    ck_assert_msg((int)count == t.valid + t.invalid, "listed %zu, visited %d", count, t.valid + t.invalid);
    return t;
}

/* ---- the default device ------------------------------------------------------------------------- */

/* clops_default_device names the device clops_context_create uses, under each form of CLOPS_DEVICE. */
START_TEST(test_default_device)
{
    static const char *const names[] = {"CLOPS_DEVICE"};
    char *saved[1];
    int was_set[1];
    tc_env_save(names, 1, saved, was_set, 0);
    clops_device_info infos[8];
    size_t count = 0;
    ck_assert_int_eq(clops_device_list(infos, 8, &count), CLOPS_SUCCESS);
    unsigned want = 0;
    for (size_t i = count; i-- > 0;)
        if (infos[i].type & CL_DEVICE_TYPE_GPU) want = (unsigned)i;
    int host = -1;
    unsigned index = 99;
    ck_assert_int_eq(clops_default_device(NULL, &index), CLOPS_ERROR_NULL_ARGUMENT);
    ck_assert_int_eq(clops_default_device(&host, NULL), CLOPS_ERROR_NULL_ARGUMENT);
    unsetenv("CLOPS_DEVICE");
    ck_assert_int_eq(clops_default_device(&host, &index), CLOPS_SUCCESS);
    ck_assert_msg(host == 0 && index == want, "default: host %d index %u, want device %u", host, index, want);
    clops_context *ctx = NULL;
    ck_assert_int_eq(clops_context_create(&ctx), CLOPS_SUCCESS);
    ck_assert_str_eq(clops_context_device_name(ctx), infos[want].device_name);
    clops_context_free(ctx);
    tc_set_env("CLOPS_DEVICE", "1");
    ck_assert_int_eq(clops_default_device(&host, &index), CLOPS_SUCCESS);
    ck_assert_msg(host == 0 && index == 1, "CLOPS_DEVICE=1: host %d index %u", host, index);
    tc_set_env("CLOPS_DEVICE", "host");
    ck_assert_int_eq(clops_default_device(&host, &index), CLOPS_SUCCESS);
    ck_assert_int_eq(host, 1);
    char past[32];
    snprintf(past, sizeof past, "%zu", count);
    tc_set_env("CLOPS_DEVICE", past);
    ck_assert_int_eq(clops_default_device(&host, &index), CLOPS_ERROR_INVALID_DEVICE_SELECTION);
    ck_assert_int_eq(clops_context_create(&ctx), CLOPS_ERROR_INVALID_DEVICE_SELECTION);
    tc_set_env("CLOPS_DEVICE", "gpu");
    ck_assert_int_eq(clops_default_device(&host, &index), CLOPS_ERROR_INVALID_DEVICE_SELECTION);
    tc_env_restore(names, 1, saved, was_set);
}
END_TEST

/* ---- a context per device ------------------------------------------------------------------------ */

START_TEST(test_context_per_device)
{
    ck_assert_int_eq(clops_cache_list_entries(NULL, NULL, NULL), CLOPS_ERROR_NULL_ARGUMENT);
    clops_context *c0 = context_on(0, "device 0");
    clops_context *c1 = context_on(1, "device 1");
    ck_assert_msg(clops_context_cl_context(c0) != clops_context_cl_context(c1), "one cl_context for two devices");
    for (size_t i = 0; i < NUM_MCASES; i++) {
        check_case(c0, &mcases[i], "compiled", NULL, "device 0, cold");
        check_case(c1, &mcases[i], "compiled", NULL, "device 1, cold");
    }
    const entry_tally t = list_cache();
    ck_assert_msg(t.invalid == 0 && t.valid == 2 * (int)NUM_MCASES && t.per_device[0] == (int)NUM_MCASES &&
                      t.per_device[1] == (int)NUM_MCASES,
                  "%d valid entries (%d for device 0, %d for device 1), %d invalid; want %zu per device", t.valid,
                  t.per_device[0], t.per_device[1], t.invalid, NUM_MCASES);
    /* warm, interleaved: each device loads its own binaries */
    clops_context *w0 = context_on(0, "device 0, warm");
    clops_context *w1 = context_on(1, "device 1, warm");
    for (size_t i = 0; i < NUM_MCASES; i++) {
        check_case(w1, &mcases[i], "disk cache", NULL, "device 1, warm");
        check_case(w0, &mcases[i], "disk cache", NULL, "device 0, warm");
        check_case(c0, &mcases[i], "in-process", NULL, "device 0, first context");
    }
    clops_context_free(w0);
    clops_context_free(w1);
    clops_context_free(c0);
    clops_context_free(c1);
}
END_TEST

/* ---- threads --------------------------------------------------------------------------------------- */

typedef struct worker {
    clops_context *ctx; /* shared; NULL: the worker makes its own on `device` */
    unsigned device;
    int id, round;
    int runs, compiled, disk, in_process;
    char compiled_opts[NUM_MCASES + 1][OPTS_MAX];
    char err[512];
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    clops_context *own = NULL;
    clops_context *ctx = w->ctx;
    if (!ctx) {
        clops_status st = clops_context_create_device(w->device, &own);
        if (st != CLOPS_SUCCESS) {
            snprintf(w->err, sizeof w->err, "clops_context_create_device(%u): %s", w->device, clops_status_name(st));
            return NULL;
        }
        ctx = own;
    }
    /* one operator kept for the whole run, and one made per iteration */
    tc_prepared keep_p;
    clops_operator *keep = NULL;
    const tc_case *kd = &mcases[(size_t)w->id % NUM_MCASES];
    if (tc_prepare(&keep_p, kd, 100u + (uint64_t)w->id) != 0) {
        snprintf(w->err, sizeof w->err, "test bug: case %s", kd->name);
        tc_release(&keep_p);
        clops_context_free(own);
        return NULL;
    }
    for (int it = 0; it <= ITERATIONS && !w->err[0]; it++) {
        tc_prepared p;
        const tc_case *d = it == 0 ? kd : &mcases[((size_t)w->id * 3 + (size_t)it) % NUM_MCASES];
        if (tc_prepare(&p, d, (uint64_t)(w->id * 1000 + it)) != 0) {
            snprintf(w->err, sizeof w->err, "test bug: case %s", d->name);
            tc_release(&p);
            break;
        }
        clops_operator *op = NULL;
        clops_status st = clops_operator_create(ctx, &p.desc, &op);
        clops_operator_info info;
        if (st == CLOPS_SUCCESS)
            st = clops_operator_get_info(op, &info);
        if (st != CLOPS_SUCCESS) {
            snprintf(w->err, sizeof w->err, "%s: clops_operator_create: %s (%s)", d->name, clops_status_name(st),
                     clops_last_error_message());
        } else if (info.backend != CLOPS_BACKEND_OPENCL) {
            snprintf(w->err, sizeof w->err, "%s: fell back to the host: %s", d->name, info.fallback_reason);
        } else {
            if (strcmp(info.program_origin, "compiled") == 0) {
                if (w->compiled < (int)NUM_MCASES + 1)
                    snprintf(w->compiled_opts[w->compiled], sizeof w->compiled_opts[0], "%s", info.build_options);
                w->compiled++;
            }
            w->disk += strcmp(info.program_origin, "disk cache") == 0;
            w->in_process += strcmp(info.program_origin, "in-process") == 0;
            if (run_case(ctx, op, &p, w->err, sizeof w->err) == 0)
                w->runs++;
        }
        if (it == 0)
            keep = op; /* the kept operator: run again every iteration below */
        else
            clops_operator_free(op);
        tc_release(&p);
        if (keep && it > 0 && !w->err[0] && run_case(ctx, keep, &keep_p, w->err, sizeof w->err) == 0)
            w->runs++;
    }
    clops_operator_free(keep);
    tc_release(&keep_p);
    clops_context_free(own);
    return NULL;
}

/* PoCL before 5.0: its "basic" device deadlocks when several threads drive one
 * queue (an event notified while locked is locked again: pocl/pocl#1323, fixed
 * in 5.0). Threads on such a device get their own contexts (queues) instead of
 * sharing one; CLOPS_TEST_SHARED_BASIC=1 shares anyway. */
static int shared_queue_deadlocks(unsigned device)
{
    const char *force = getenv("CLOPS_TEST_SHARED_BASIC");
    if (force && strcmp(force, "1") == 0)
        return 0;
    if (strncmp(g_dev[device].device_name, "basic", 5) != 0)
        return 0;
    char version[256] = "";
    clGetPlatformInfo(g_dev[device].platform, CL_PLATFORM_VERSION, sizeof version, version, NULL);
    const char *v = strstr(version, "PoCL ");
    int major = 0;
    return v && sscanf(v + 5, "%d", &major) == 1 && major < 5;
}

/* Joins the workers, or ends the process if they do not finish in time (a
 * deadlock must fail the suite, not hang it until ctest's timeout). */
static void join_all(pthread_t *t, int n, int seconds)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += seconds;
    for (int i = 0; i < n; i++)
        if (pthread_timedjoin_np(t[i], NULL, &deadline) != 0) {
            fprintf(stderr, "FAIL: test_threads: worker %d did not finish within %d s (deadlock?)\n", i, seconds);
            fflush(stderr);
            _exit(EXIT_FAILURE);
        }
}

START_TEST(test_threads)
{
    enum { PER_DEVICE = SHARED_THREADS + 1, TOTAL = 2 * PER_DEVICE };
    for (int round = 0; round < 2; round++) {
        clops_context *shared[2] = {context_on(0, "shared, device 0"), context_on(1, "shared, device 1")};
        for (unsigned d = 0; d < 2; d++)
            if (shared_queue_deadlocks(d) && round == 0)
                fprintf(stderr, "note: device %u \"%s\" is PoCL's basic device before PoCL 5, which deadlocks "
                        "when threads share a queue (pocl/pocl#1323): its threads get their own contexts\n", d,
                        g_dev[d].device_name);
        worker w[TOTAL];
        pthread_t t[TOTAL];
        memset(w, 0, sizeof w);
        for (int i = 0; i < TOTAL; i++) {
            w[i].device = (unsigned)(i / PER_DEVICE);
            w[i].ctx = i % PER_DEVICE < SHARED_THREADS && !shared_queue_deadlocks(w[i].device) ? shared[w[i].device]
                                                                                                  : NULL;
            w[i].id = i;
            w[i].round = round;
            ck_assert(pthread_create(&t[i], NULL, work, &w[i]) == 0);
        }
        join_all(t, TOTAL, 900);
        for (int i = 0; i < TOTAL; i++) {
            const char *kind = w[i].ctx ? "shared context" : "private context";
            ck_assert_msg(!w[i].err[0], "round %d, thread %d (device %u, %s): %s", round, i, w[i].device, kind,
                          w[i].err);
            ck_assert_msg(w[i].runs == 2 * ITERATIONS + 1, "round %d, thread %d: %d runs, want %d", round, i,
                          w[i].runs, 2 * ITERATIONS + 1);
            if (round == 1)
                ck_assert_msg(w[i].compiled == 0, "round %d (warm cache), thread %d (device %u, %s) compiled %d "
                              "programs", round, i, w[i].device, kind, w[i].compiled);
        }
        /* on one context each program is built once, whichever thread asks first */
        for (unsigned d = 0; d < 2; d++)
            for (int i = 0; i < SHARED_THREADS && w[d * PER_DEVICE].ctx; i++)
                for (int a = 0; a < w[d * PER_DEVICE + i].compiled && a <= (int)NUM_MCASES; a++)
                    for (int j = i; j < SHARED_THREADS; j++)
                        for (int b = j == i ? a + 1 : 0; b < w[d * PER_DEVICE + j].compiled && b <= (int)NUM_MCASES;
                             b++)
                            ck_assert_msg(strcmp(w[d * PER_DEVICE + i].compiled_opts[a],
                                                 w[d * PER_DEVICE + j].compiled_opts[b]) != 0,
                                          "round %d, device %u: \"%s\" compiled twice on one context", round, d,
                                          w[d * PER_DEVICE + i].compiled_opts[a]);
        clops_context_free(shared[0]);
        clops_context_free(shared[1]);
    }
    const entry_tally tl = list_cache();
    ck_assert_msg(tl.invalid == 0 && tl.per_device[0] > 0 && tl.per_device[1] > 0,
                  "after the threads: %d valid entries (%d, %d per device), %d invalid", tl.valid, tl.per_device[0],
                  tl.per_device[1], tl.invalid);
}
END_TEST

/* ---- the caller's OpenCL objects on the second device ---------------------------------------------- */

static void from_cl(cl_context c, cl_device_id dev, cl_command_queue_properties props, const char *label)
{
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(c, dev, props, &err);
    ck_assert_msg(q && err == CL_SUCCESS, "%s: clCreateCommandQueue: %d", label, (int)err);
    clops_context *ctx = NULL;
    clops_status st = clops_context_create_from_cl(c, dev, q, &ctx);
    ck_assert_msg(st == CLOPS_SUCCESS && ctx, "%s: clops_context_create_from_cl: %s (%s)", label,
                  clops_status_name(st), clops_last_error_message());
    ck_assert_msg(clops_context_queue(ctx) == q && clops_context_cl_context(ctx) == c,
                  "%s: the clops context does not use the caller's queue and context", label);
    ck_assert_str_eq(clops_context_device_name(ctx), g_dev[1].device_name);
    for (size_t i = 0; i < NUM_MCASES; i++)
        check_case(ctx, &mcases[i], "compiled", "disk cache", label);
    for (size_t i = 0; i < NUM_MCASES; i++)
        check_case(ctx, &mcases[i], "in-process", NULL, label);
    clops_context_free(ctx);
    /* clops released only its own references */
    cl_event m = NULL;
    ck_assert_int_eq(clEnqueueMarkerWithWaitList(q, 0, NULL, &m), CL_SUCCESS);
    ck_assert_int_eq(clWaitForEvents(1, &m), CL_SUCCESS);
    clReleaseEvent(m);
    ck_assert_int_eq(clReleaseCommandQueue(q), CL_SUCCESS);
}

START_TEST(test_from_cl_second_device)
{
    cl_device_id dev = g_dev[1].device;
    cl_int err;
    const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)g_dev[1].platform, 0};
    cl_context c = clCreateContext(props, 1, &dev, NULL, NULL, &err);
    ck_assert_msg(c && err == CL_SUCCESS, "clCreateContext: %d", (int)err);
    from_cl(c, dev, 0, "caller's in-order queue, device 1");
    cl_command_queue_properties qp = 0;
    clGetDeviceInfo(dev, CL_DEVICE_QUEUE_PROPERTIES, sizeof qp, &qp, NULL);
    if (qp & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
        from_cl(c, dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, "caller's out-of-order queue, device 1");
    else
        fprintf(stderr, "note: device 1 (%s) has no out-of-order queues; that case is skipped\n",
                g_dev[1].device_name);
    ck_assert_int_eq(clReleaseContext(c), CL_SUCCESS);
}
END_TEST

/* One cl_context holding both devices (same platform), a clops context per device's queue. */
START_TEST(test_from_cl_two_device_context)
{
    if (g_dev[0].platform != g_dev[1].platform) {
        fprintf(stderr, "note: devices 0 and 1 are on different platforms; no shared cl_context to test\n");
        return;
    }
    cl_device_id devs[2] = {g_dev[0].device, g_dev[1].device};
    cl_int err;
    const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)g_dev[0].platform, 0};
    cl_context c = clCreateContext(props, 2, devs, NULL, NULL, &err);
    ck_assert_msg(c && err == CL_SUCCESS, "clCreateContext(2 devices): %d", (int)err);
    clops_context *ctx[2];
    cl_command_queue q[2];
    for (int d = 0; d < 2; d++) {
        q[d] = clCreateCommandQueue(c, devs[d], 0, &err);
        ck_assert_msg(q[d] && err == CL_SUCCESS, "clCreateCommandQueue(device %d): %d", d, (int)err);
        clops_status st = clops_context_create_from_cl(c, devs[d], q[d], &ctx[d]);
        ck_assert_msg(st == CLOPS_SUCCESS, "clops_context_create_from_cl(device %d): %s (%s)", d,
                      clops_status_name(st), clops_last_error_message());
        clReleaseCommandQueue(q[d]);
    }
    for (size_t i = 0; i < NUM_MCASES; i++)
        for (int d = 0; d < 2; d++)
            check_case(ctx[d], &mcases[i], "compiled", "disk cache", d ? "two-device cl_context, device 1"
                                                                     : "two-device cl_context, device 0");
    clops_context_free(ctx[0]);
    clops_context_free(ctx[1]);
    /* again on fresh clops contexts: whatever was cached for each device runs right on it */
    for (int d = 0; d < 2; d++) {
        q[d] = clCreateCommandQueue(c, devs[d], 0, &err);
        ck_assert_msg(q[d] && err == CL_SUCCESS, "clCreateCommandQueue(device %d): %d", d, (int)err);
        ck_assert_int_eq(clops_context_create_from_cl(c, devs[d], q[d], &ctx[d]), CLOPS_SUCCESS);
        clReleaseCommandQueue(q[d]);
    }
    for (size_t i = 0; i < NUM_MCASES; i++)
        for (int d = 1; d >= 0; d--)
            check_case(ctx[d], &mcases[i], "disk cache", "compiled", d ? "two-device cl_context again, device 1"
                                                                     : "two-device cl_context again, device 0");
    clops_context_free(ctx[0]);
    clops_context_free(ctx[1]);
    ck_assert_int_eq(clReleaseContext(c), CL_SUCCESS);
}
END_TEST

static Suite *multidevice_suite(void)
{
    Suite *s = suite_create("multidevice");
    TCase *tc = tc_fixture_case(s, "devices", setup, teardown);
    TC_TESTS(tc, test_context_per_device, test_default_device, test_threads, test_from_cl_second_device,
             test_from_cl_two_device_context);
    return s;
}

int main(void)
{
    const int skip = tc_need_devices(2, "this suite needs two (ctest sets POCL_DEVICES=\"pthread basic\")");
    if (skip >= 0)
        return skip;
    size_t count = 0;
    if (clops_device_list(g_dev, 2, &count) != CLOPS_SUCCESS) {
        fprintf(stderr, "FAIL: clops_device_list: %s\n", clops_last_error_message());
        return EXIT_FAILURE;
    }
    fprintf(stderr, "testing devices 0 \"%s\" and 1 \"%s\"\n", g_dev[0].device_name, g_dev[1].device_name);
    return tc_run_nofork(multidevice_suite());
}
