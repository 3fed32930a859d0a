/*
 * test_faults.c - injected OpenCL and file-system failures (lib/cl_api.h).
 *
 * The suite links clops_testable, whose table `clops_cl` of every OpenCL and
 * cache file-system call is writable. It installs a wrapper for every entry
 * that counts calls and can fail the Nth call of one chosen function with a
 * chosen code, then, for each public entry point (context create, operator
 * create, execute on cl_mem, execute_host):
 *
 *   1. a census run counts how often the entry point calls each function;
 *   2. for each function, each code and each N up to its count, one run fails
 *      exactly the Nth call (and one run fails every call from the first on);
 *   3. every run must end in a clean status: success with the right output
 *      (clops recovered, e.g. the host fallback after a failed build, or a
 *      silent cache-write failure), or the injected cl_int passed through, or a
 *      CLOPS_ERROR_* code, with a detail message and *out / *event NULL;
 *      execute_host must leave the caller's output untouched on failure;
 *   4. after the table is restored, the same call on the same objects works;
 *   5. nothing leaks: the wrappers count OpenCL objects and mappings clops
 *      creates and releases (contexts, queues, buffers, programs, kernels,
 *      events, maps), and each run must end balanced. Host memory leaks are
 *      LeakSanitizer's job (tools/scripts/sanitize.sh runs this suite under ASan).
 *
 * Release calls are never failed (a release fails only for an invalid
 * object); every other entry is. Problems are collected and reported together
 * at the end of each test, so one run shows every failing combination.
 *
 * Environment: CLOPS_FAULTS_MAX_N (default 48) bounds N per function;
 * CLOPS_FAULTS_VERBOSE=1 prints each census (which calls an entry point makes).
 */
#define _XOPEN_SOURCE 700 /* nftw, for tc_rm_rf */
#define CLOPS_CL_API_NO_MACROS /* this file calls the real OpenCL by name */

#include "fault_engine.h"
#include "test_fs.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- the operators under test ---------------------------------------------------------------- */

typedef struct op_case {
    const char *name;
    clops_tensor_desc in, idx, out;
    uint32_t block;
    clops_depth_space_order order;
    clops_operator_type type;
    int duplicates; /* MaxUnpooling: a duplicate index with different values */
} op_case;

static const uint64_t s2d_out_strides[4] = {111, 9, 4, 1}; /* padded: gaps between rows and planes */
static const uint64_t unpool_out_strides[4] = {100, 48, 7, 1};

static const op_case op_cases[] = {
    {"D2S uint8 DCR b2 packed", {CLOPS_DATA_TYPE_UINT8, {1, 8, 5, 7}, NULL}, {0, {0, 0, 0, 0}, NULL},
     {CLOPS_DATA_TYPE_UINT8, {1, 2, 10, 14}, NULL}, 2, CLOPS_ORDER_DEPTH_COLUMN_ROW, CLOPS_OPERATOR_DEPTH_TO_SPACE, 0},
    {"S2D float32 CRD b2 padded output", {CLOPS_DATA_TYPE_FLOAT32, {2, 3, 4, 6}, NULL}, {0, {0, 0, 0, 0}, NULL},
     {CLOPS_DATA_TYPE_FLOAT32, {2, 12, 2, 3}, s2d_out_strides}, 2, CLOPS_ORDER_COLUMN_ROW_DEPTH,
     CLOPS_OPERATOR_SPACE_TO_DEPTH, 0},
    {"MaxUnpooling float32 int64 packed, conflicting duplicates", {CLOPS_DATA_TYPE_FLOAT32, {1, 2, 3, 3}, NULL},
     {CLOPS_DATA_TYPE_INT64, {1, 2, 3, 3}, NULL}, {CLOPS_DATA_TYPE_FLOAT32, {1, 2, 6, 6}, NULL}, 0, 0,
     CLOPS_OPERATOR_MAX_UNPOOLING, 1},
    {"MaxUnpooling uint16 uint32 strided output", {CLOPS_DATA_TYPE_UINT16, {1, 2, 3, 3}, NULL},
     {CLOPS_DATA_TYPE_UINT32, {1, 2, 3, 3}, NULL}, {CLOPS_DATA_TYPE_UINT16, {1, 2, 6, 6}, unpool_out_strides}, 0, 0,
     CLOPS_OPERATOR_MAX_UNPOOLING, 0},
};
#define NUM_OPS ((int)(sizeof op_cases / sizeof op_cases[0]))

/* One operator's descriptor, buffers and expected output. */
typedef struct op_data {
    const op_case *c;
    clops_depth_to_space_desc ds;
    clops_max_unpooling_desc mu;
    clops_operator_desc desc;
    void *in, *idx, *sentinel, *want;
    size_t in_bytes, idx_bytes, out_bytes;
} op_data;

static void op_data_init(op_data *d, const op_case *c)
{
    memset(d, 0, sizeof *d);
    d->c = c;
    if (c->type == CLOPS_OPERATOR_MAX_UNPOOLING) {
        d->mu = (clops_max_unpooling_desc){&c->in, &c->idx, &c->out, CLOPS_INDICES_FLAT};
        d->desc = (clops_operator_desc){c->type, &d->mu};
    } else {
        d->ds = (clops_depth_to_space_desc){&c->in, &c->out, c->block, c->order};
        d->desc = (clops_operator_desc){c->type, &d->ds}; /* S2D's descriptor has the same layout */
    }
    d->in_bytes = tc_tensor_bytes(&c->in);
    d->out_bytes = tc_tensor_bytes(&c->out);
    d->in = tc_malloc(d->in_bytes);
    tc_fill_random(d->in, d->in_bytes, 0x5eed + (uint64_t)d->in_bytes);
    if (c->type == CLOPS_OPERATOR_MAX_UNPOOLING) {
        const uint64_t n = tc_span(c->idx.sizes, NULL), plane = (uint64_t)c->out.sizes[2] * c->out.sizes[3];
        const uint64_t per_c = (uint64_t)c->in.sizes[2] * c->in.sizes[3];
        d->idx_bytes = tc_tensor_bytes(&c->idx);
        d->idx = tc_malloc(d->idx_bytes);
        for (uint64_t k = 0; k < n; k++) {
            uint64_t ch = k / per_c, j = k % per_c;
            uint64_t v = ch * plane + (j * 4 + 1) % plane;
            if (c->duplicates && j == 1)
                v = ch * plane + (0 * 4 + 1) % plane; /* same target as element 0 */
            if (c->idx.data_type == CLOPS_DATA_TYPE_UINT32) {
                uint32_t v32 = (uint32_t)v;
                memcpy((char *)d->idx + k * 4, &v32, 4);
            } else {
                memcpy((char *)d->idx + k * 8, &v, 8);
            }
        }
    }
    d->sentinel = tc_malloc(d->out_bytes);
    tc_fill_sentinel(d->sentinel, d->out_bytes);
    d->want = tc_memdup(d->sentinel, d->out_bytes);
    clops_host_buffers hb = {d->in, d->in_bytes, d->idx, d->idx_bytes, d->want, d->out_bytes};
    clops_status st = clops_host_run(&d->desc, &hb);
    ck_assert_msg(st == CLOPS_SUCCESS, "%s: reference clops_host_run: %s (%s)", c->name, clops_status_name(st),
                  clops_last_error_message());
}

static void op_data_free(op_data *d)
{
    free(d->in);
    free(d->idx);
    free(d->sentinel);
    free(d->want);
}

/* ---- helpers that run unfaulted --------------------------------------------------------------- */

/* The device clops_context_create uses (tc_dev_ctx's). */
static unsigned default_device_index(void)
{
    int host = 0;
    unsigned index = 0;
    return clops_default_device(&host, &index) == CLOPS_SUCCESS && !host ? index : 0;
}

static unsigned dev_index;

/* The status after an injected fault is clean: the code passed through, or a
 * named CLOPS_ERROR_*, with a detail message. */
static int clean_status(clops_status st, int io_fault)
{
    if (st == CLOPS_SUCCESS)
        return 1;
    const char *msg = clops_last_error_message();
    if (!msg || !msg[0])
        return 0;
    if (!io_fault && (cl_int)st == fx.code)
        return 1;
    return (int)st <= -15000 && (int)st >= -15299 && strcmp(clops_status_name(st), "CLOPS_UNKNOWN_STATUS") != 0;
}

/* Runs `op` on host memory (unfaulted) and compares with the expected output. */
static int output_ok_host(clops_operator *op, const op_data *d, const char *label)
{
    void *out = tc_memdup(d->sentinel, d->out_bytes);
    clops_host_buffers hb = {d->in, d->in_bytes, d->idx, d->idx_bytes, out, d->out_bytes};
    clops_status st = clops_operator_execute_host(op, &hb);
    int ok = st == CLOPS_SUCCESS && memcmp(out, d->want, d->out_bytes) == 0;
    if (!ok)
        problem("%s: follow-up execute_host gave %s (%s)%s", label, clops_status_name(st), clops_last_error_message(),
                st == CLOPS_SUCCESS ? ", wrong output" : "");
    free(out);
    return ok;
}

/* cl_mem buffers holding an op's data, made with the real OpenCL. */
typedef struct cl_bufs {
    cl_mem in, idx, out;
    cl_event ready;
} cl_bufs;

static void cl_bufs_make(clops_context *ctx, const op_data *d, cl_bufs *b)
{
    cl_context c = clops_context_cl_context(ctx);
    cl_command_queue q = clops_context_queue(ctx);
    cl_int err;
    memset(b, 0, sizeof *b);
    b->in = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, d->in_bytes, d->in, &err);
    ck_assert_msg(b->in != NULL, "clCreateBuffer: %d", (int)err);
    if (d->idx) {
        b->idx = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, d->idx_bytes, d->idx, &err);
        ck_assert_msg(b->idx != NULL, "clCreateBuffer: %d", (int)err);
    }
    b->out = clCreateBuffer(c, CL_MEM_READ_WRITE, d->out_bytes, NULL, &err);
    ck_assert_msg(b->out != NULL, "clCreateBuffer: %d", (int)err);
    /* The output starts as the sentinel; its write event is the wait list. */
    err = clEnqueueWriteBuffer(q, b->out, CL_FALSE, 0, d->out_bytes, d->sentinel, 0, NULL, &b->ready);
    ck_assert_msg(err == CL_SUCCESS, "clEnqueueWriteBuffer: %d", (int)err);
}

static void cl_bufs_free(cl_bufs *b)
{
    if (b->ready)
        clReleaseEvent(b->ready);
    if (b->in)
        clReleaseMemObject(b->in);
    if (b->idx)
        clReleaseMemObject(b->idx);
    if (b->out)
        clReleaseMemObject(b->out);
}

static int read_out(clops_context *ctx, const cl_bufs *b, void *out, size_t bytes)
{
    cl_command_queue q = clops_context_queue(ctx);
    return clFinish(q) == CL_SUCCESS && clEnqueueReadBuffer(q, b->out, CL_TRUE, 0, bytes, out, 0, NULL, NULL) == CL_SUCCESS;
}

/* Runs `op` on cl_mem buffers (unfaulted) and compares with the expected output. */
static int output_ok_cl(clops_context *ctx, clops_operator *op, const op_data *d, const char *label)
{
    cl_bufs b;
    cl_bufs_make(ctx, d, &b);
    clops_buffers cb = {b.in, b.idx, b.out};
    cl_event ev = NULL;
    clops_status st = clops_operator_execute(op, &cb, 1, &b.ready, &ev);
    void *out = tc_malloc(d->out_bytes);
    int ok = st == CLOPS_SUCCESS && ev && clWaitForEvents(1, &ev) == CL_SUCCESS && read_out(ctx, &b, out, d->out_bytes) &&
             memcmp(out, d->want, d->out_bytes) == 0;
    if (!ok)
        problem("%s: follow-up execute on cl_mem gave %s (%s)%s", label, clops_status_name(st),
                clops_last_error_message(), st == CLOPS_SUCCESS ? ", wrong output" : "");
    if (ev)
        clops_cl.clReleaseEvent(ev);
    free(out);
    cl_bufs_free(&b);
    return ok;
}

static clops_context *new_context(void)
{
    clops_context *ctx = NULL;
    clops_status st = clops_context_create_device(dev_index, &ctx);
    ck_assert_msg(st == CLOPS_SUCCESS, "clops_context_create_device(%u): %s (%s)", dev_index, clops_status_name(st),
                  clops_last_error_message());
    return ctx;
}

static clops_operator *new_operator(clops_context *ctx, const op_data *d)
{
    clops_operator *op = NULL;
    clops_status st = clops_operator_create(ctx, &d->desc, &op);
    ck_assert_msg(st == CLOPS_SUCCESS, "%s: clops_operator_create: %s (%s)", d->c->name, clops_status_name(st),
                  clops_last_error_message());
    return op;
}

/* ---- scenarios: one run with the fault armed around one entry point ------------------------------ */

typedef enum scenario {
    SC_CONTEXT_CREATE,   /* clops_context_create_device */
    SC_OPERATOR_CREATE,  /* clops_operator_create, program from the warm disk cache */
    SC_OPERATOR_COLD,    /* context + operator create, cold cache: compile and store */
    SC_EXECUTE_CL,       /* clops_operator_execute on cl_mem */
    SC_EXECUTE_FALLBACK, /* clops_operator_execute on a host-fallback operator (maps) */
    SC_EXECUTE_HOST      /* clops_operator_execute_host on an OpenCL context */
} scenario;

static const char *const scenario_names[] = {"context create", "operator create", "context+operator create (cold cache)",
                                             "execute on cl_mem", "execute on cl_mem (host fallback)",
                                             "execute_host"};

static char cold_root[256];
static unsigned cold_serial;

/* A fallback operator: every clBuildProgram fails to build, on a cache-less context. */
static clops_context *fallback_context(const op_data *d, clops_operator **op)
{
    const char *old = getenv("CLOPS_CACHE");
    char saved[32] = "";
    if (old)
        snprintf(saved, sizeof saved, "%s", old);
    setenv("CLOPS_CACHE", "off", 1);
    clops_context *ctx = new_context();
    if (old)
        setenv("CLOPS_CACHE", saved, 1);
    else
        unsetenv("CLOPS_CACHE");
    arm(F_clBuildProgram, 1, 1, CL_BUILD_PROGRAM_FAILURE);
    clops_status st = clops_operator_create(ctx, &d->desc, op);
    disarm();
    clops_operator_info info;
    ck_assert_msg(st == CLOPS_SUCCESS && clops_operator_get_info(*op, &info) == CLOPS_SUCCESS &&
                      info.backend == CLOPS_BACKEND_HOST,
                  "%s: a failed build must give a host-fallback operator, got %s (%s)", d->c->name,
                  clops_status_name(st), clops_last_error_message());
    return ctx;
}

/* A fallback operator's worker thread releases its references once its work
 * ran, also after clops_operator_free returned (which never waits for it):
 * waits for the live counts to come back (or 60 s, then the check reports them). */
static void settle(const long *live_before, int skip_maps)
{
    for (int i = 0; i < 60000; i++) {
        int same = 1;
        for (int k = 0; k < K_KINDS; k++)
            if (!(k == K_MAP && skip_maps) && __atomic_load_n(&fx.live[k], __ATOMIC_SEQ_CST) != live_before[k])
                same = 0;
        if (same)
            return;
        const struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

/* One run: fault `f` (call `at`, `persist`) with `code` around the entry point.
 * Returns the number of faults injected. */
static long run_once(scenario sc, const op_data *d, fn_id f, long at, int persist, cl_int code)
{
    char label[256];
    snprintf(label, sizeof label, "[%s] %s: %s call %ld%s fails with %s", scenario_names[sc], d ? d->c->name : "-",
             fn_names[f], at, persist ? "+" : "", fn_is_io(f) ? "errno" : clops_status_name(code));
    long live_before[K_KINDS];
    memcpy(live_before, fx.live, sizeof live_before);
    clops_context *ctx = NULL;
    clops_operator *op = NULL;
    clops_status st = CLOPS_SUCCESS;
    long hits = 0;
    const int io = fn_is_io(f);

    switch (sc) {
    case SC_CONTEXT_CREATE: {
        ctx = (clops_context *)&ctx; /* must become NULL on failure */
        arm(f, at, persist, code);
        st = clops_context_create_device(dev_index, &ctx);
        disarm();
        hits = fx.hits;
        if (st != CLOPS_SUCCESS) {
            if (ctx != NULL)
                problem("%s: failed with %s but *out is not NULL", label, clops_status_name(st));
            ctx = new_context(); /* the next call works */
        } else if (clops_context_backend(ctx) != CLOPS_BACKEND_OPENCL) {
            problem("%s: succeeded on the host backend", label);
        }
        op = new_operator(ctx, d);
        output_ok_cl(ctx, op, d, label);
        break;
    }
    case SC_OPERATOR_CREATE:
    case SC_OPERATOR_COLD: {
        char dir[300] = "", old_dir[1024] = "";
        if (sc == SC_OPERATOR_COLD) {
            const char *o = getenv("CLOPS_CACHE_DIR");
            snprintf(old_dir, sizeof old_dir, "%s", o ? o : "");
            snprintf(dir, sizeof dir, "%s/run%u/cache", cold_root, cold_serial++);
            setenv("CLOPS_CACHE_DIR", dir, 1);
        } else {
            ctx = new_context();
        }
        op = (clops_operator *)&op;
        arm(f, at, persist, code);
        if (sc == SC_OPERATOR_COLD)
            st = clops_context_create_device(dev_index, &ctx);
        if (st == CLOPS_SUCCESS)
            st = clops_operator_create(ctx, &d->desc, &op);
        else
            op = NULL;
        disarm();
        hits = fx.hits;
        if (st != CLOPS_SUCCESS && op != NULL)
            problem("%s: failed with %s but *out is not NULL", label, clops_status_name(st));
        if (st != CLOPS_SUCCESS) {
            if (!ctx)
                ctx = new_context();
            op = new_operator(ctx, d); /* the next call works */
        } else if (io) {
            /* A cache write that failed is silent, and leaves no temporary behind. */
            char tmp_found[300] = "";
            DIR *dp = opendir(dir);
            struct dirent *e;
            while (dp && (e = readdir(dp)) != NULL)
                if (strncmp(e->d_name, ".tmp-", 5) == 0)
                    snprintf(tmp_found, sizeof tmp_found, "%s", e->d_name);
            if (dp)
                closedir(dp);
            if (tmp_found[0])
                problem("%s: temporary file %s left in the cache directory", label, tmp_found);
        }
        output_ok_host(op, d, label);
        output_ok_cl(ctx, op, d, label);
        if (sc == SC_OPERATOR_COLD) {
            /* The entry stored (if any) must load in a fresh context - unless the failed build sent
             * the operator to the portable program (lib/ops/portable.c): the entry stored is then
             * that program's, which a fresh operator asks for only after its specialised one. */
            clops_operator_info first;
            const bool portable = clops_operator_get_info(op, &first) == CLOPS_SUCCESS &&
                                  strncmp(first.kernel_name, "clops_", 6) == 0;
            clops_operator_free(op);
            clops_context_free(ctx);
            int entries = 0;
            DIR *dp = opendir(dir);
            struct dirent *e;
            while (dp && (e = readdir(dp)) != NULL)
                entries += strlen(e->d_name) > 4 && strcmp(e->d_name + strlen(e->d_name) - 4, ".bin") == 0;
            if (dp)
                closedir(dp);
            ctx = new_context();
            op = new_operator(ctx, d);
            clops_operator_info info;
            if (entries && !portable && (clops_operator_get_info(op, &info) != CLOPS_SUCCESS ||
                            strcmp(info.program_origin, "disk cache") != 0))
                problem("%s: the stored cache entry did not load (program origin \"%s\")", label,
                        info.program_origin);
            output_ok_cl(ctx, op, d, label);
            if (old_dir[0])
                setenv("CLOPS_CACHE_DIR", old_dir, 1);
            else
                unsetenv("CLOPS_CACHE_DIR");
            char run_dir[300];
            snprintf(run_dir, sizeof run_dir, "%s/run%u", cold_root, cold_serial - 1);
            tc_rm_rf(run_dir);
        }
        break;
    }
    case SC_EXECUTE_CL:
    case SC_EXECUTE_FALLBACK: {
        if (sc == SC_EXECUTE_FALLBACK) {
            ctx = fallback_context(d, &op);
        } else {
            ctx = new_context();
            op = new_operator(ctx, d);
        }
        cl_bufs b;
        cl_bufs_make(ctx, d, &b);
        clops_buffers cb = {b.in, b.idx, b.out};
        cl_event ev = (cl_event)&ev;
        arm(f, at, persist, code);
        st = clops_operator_execute(op, &cb, 1, &b.ready, &ev);
        /* A fallback's host work runs on clops's worker thread after execute
         * returned (issue 24, N4): faulted too, its status from last_status. */
        clops_status host_st = CLOPS_SUCCESS;
        const int executed = st == CLOPS_SUCCESS;
        if (sc == SC_EXECUTE_FALLBACK && executed && (!ev || clWaitForEvents(1, &ev) != CL_SUCCESS))
            problem("%s: no event, or the returned event failed", label);
        disarm();
        if (sc == SC_EXECUTE_FALLBACK && executed)
            host_st = clops_operator_last_status(op);
        hits = fx.hits;
        void *out = tc_malloc(d->out_bytes);
        if (host_st != CLOPS_SUCCESS) {
            /* untouched, or whole when only the write-back's clFinish failed */
            if (!read_out(ctx, &b, out, d->out_bytes) ||
                (memcmp(out, d->sentinel, d->out_bytes) != 0 &&
                 (f != F_clFinish || memcmp(out, d->want, d->out_bytes) != 0)))
                problem("%s: the host work failed with %s but changed the output", label, clops_status_name(host_st));
            st = host_st;
        } else if (st == CLOPS_SUCCESS) {
            if (!ev)
                problem("%s: succeeded without an event", label);
            else if (clWaitForEvents(1, &ev) != CL_SUCCESS)
                problem("%s: the returned event failed", label);
            if (!read_out(ctx, &b, out, d->out_bytes) || memcmp(out, d->want, d->out_bytes) != 0)
                problem("%s: succeeded with a wrong output", label);
        } else if (ev != NULL) {
            problem("%s: failed with %s but *event is not NULL", label, clops_status_name(st));
        }
        if (ev && executed)
            clops_cl.clReleaseEvent(ev);
        clFinish(clops_context_queue(ctx));
        /* The next call on the same operator works. */
        if (hits) {
            clops_buffers cb2 = {b.in, b.idx, b.out};
            cl_event ev2 = NULL;
            clops_status st2 = clops_operator_execute(op, &cb2, 0, NULL, &ev2);
            if (st2 != CLOPS_SUCCESS || !ev2 || clWaitForEvents(1, &ev2) != CL_SUCCESS ||
                !read_out(ctx, &b, out, d->out_bytes) || memcmp(out, d->want, d->out_bytes) != 0)
                problem("%s: the next execute gave %s (%s)%s", label, clops_status_name(st2), clops_last_error_message(),
                        st2 == CLOPS_SUCCESS ? ", wrong output" : "");
            if (ev2)
                clops_cl.clReleaseEvent(ev2);
        }
        free(out);
        cl_bufs_free(&b);
        break;
    }
    case SC_EXECUTE_HOST: {
        ctx = new_context();
        op = new_operator(ctx, d);
        void *out = tc_memdup(d->sentinel, d->out_bytes);
        clops_host_buffers hb = {d->in, d->in_bytes, d->idx, d->idx_bytes, out, d->out_bytes};
        arm(f, at, persist, code);
        st = clops_operator_execute_host(op, &hb);
        disarm();
        hits = fx.hits;
        if (st == CLOPS_SUCCESS && memcmp(out, d->want, d->out_bytes) != 0)
            problem("%s: succeeded with a wrong output", label);
        if (st != CLOPS_SUCCESS && memcmp(out, d->sentinel, d->out_bytes) != 0)
            problem("%s: failed with %s but changed the caller's output", label, clops_status_name(st));
        free(out);
        if (hits)
            output_ok_host(op, d, label);
        break;
    }
    }

    if (!hits && st != CLOPS_SUCCESS)
        problem("%s: no fault was injected, yet the call failed with %s (%s)", label, clops_status_name(st),
                clops_last_error_message());
    if (hits && !clean_status(st, io))
        problem("%s: unclean status %d (%s), message \"%s\"", label, (int)st, clops_status_name(st),
                clops_last_error_message());
    if (hits && io && st != CLOPS_SUCCESS)
        problem("%s: a cache file-system failure must be silent, got %s (%s)", label, clops_status_name(st),
                clops_last_error_message());
    clops_operator_free(op);
    clops_context_free(ctx);
    if (sc == SC_EXECUTE_FALLBACK)
        settle(live_before, f == F_clEnqueueUnmapMemObject && hits);
    for (int k = 0; k < K_KINDS; k++) {
        if (k == K_MAP && f == F_clEnqueueUnmapMemObject && hits)
            continue; /* the injected unmap failure itself leaves the mapping */
        if (fx.live[k] != live_before[k])
            problem("%s: %ld %s leaked", label, fx.live[k] - live_before[k], kind_names[k]);
    }
    total_runs++;
    total_faults += hits;
    if (hits)
        st == CLOPS_SUCCESS ? total_recovered++ : total_errors++;
    return hits;
}

static long max_n(void)
{
    const char *e = getenv("CLOPS_FAULTS_MAX_N");
    long v = e ? strtol(e, NULL, 10) : 0;
    return v > 0 ? v : 48;
}

/* Census, then every function x code x N (and "every call") for one scenario and op. */
static void sweep(scenario sc, const op_data *d, const fn_id *only, int nonly)
{
    run_once(sc, d, F_COUNT - 1, LONG_MAX, 0, 0); /* census: nothing fails */
    long census[F_COUNT];
    memcpy(census, fx.calls, sizeof census);
    if (getenv("CLOPS_FAULTS_VERBOSE")) {
        fprintf(stderr, "census: %s, %s:", scenario_names[sc], d->c->name);
        for (int fi = 0; fi < F_COUNT; fi++)
            if (census[fi])
                fprintf(stderr, " %s x%ld", fn_names[fi], census[fi]);
        fputc('\n', stderr);
    }
    long runs = 0, faults = 0;
    for (int fi = 0; fi < F_COUNT; fi++) {
        fn_id f = (fn_id)fi;
        if (nonly) {
            int listed = 0;
            for (int i = 0; i < nonly; i++)
                listed |= only[i] == f;
            if (!listed)
                continue;
        }
        if (fn_is_release(f) || census[f] == 0)
            continue;
        cl_int codes[4];
        int ncodes = codes_for(f, codes);
        const long last = census[f] < max_n() ? census[f] : max_n();
        for (int ci = 0; ci < ncodes; ci++) {
            for (long n = 1; n <= last; n++) {
                faults += run_once(sc, d, f, n, 0, codes[ci]);
                runs++;
            }
            if (census[f] > 1) {
                faults += run_once(sc, d, f, 1, 1, codes[ci]);
                runs++;
            }
        }
    }
    fprintf(stderr, "faults: %-40s %-55s %4ld runs, %4ld faults injected\n", scenario_names[sc], d ? d->c->name : "",
            runs, faults);
}

/* ---- setup --------------------------------------------------------------------------------------- */

static op_data ops[NUM_OPS];

static int have_device(void)
{
    if (!tc_dev_ctx) {
        fprintf(stderr, "SKIP: no OpenCL device: the fault-injection tests need one\n");
        return 0;
    }
    return 1;
}

static void setup(void)
{
    restore_table();
    reset_problems();
    if (!tc_dev_ctx)
        return;
    dev_index = default_device_index();
    for (int i = 0; i < NUM_OPS; i++)
        op_data_init(&ops[i], &op_cases[i]);
    /* Warm the disk cache with every operator's program (unfaulted). */
    clops_context *ctx = new_context();
    for (int i = 0; i < NUM_OPS; i++)
        clops_operator_free(new_operator(ctx, &ops[i]));
    clops_context_free(ctx);
    install_wrappers();
}

static void teardown(void)
{
    restore_table();
    if (!tc_dev_ctx)
        return;
    for (int i = 0; i < NUM_OPS; i++)
        op_data_free(&ops[i]);
}

/* ---- tests --------------------------------------------------------------------------------------- */

START_TEST(test_context_create)
{
    if (!have_device())
        return;
    sweep(SC_CONTEXT_CREATE, &ops[0], NULL, 0);
    report_problems("context create");
}
END_TEST

START_TEST(test_operator_create)
{
    if (!have_device())
        return;
    sweep(SC_OPERATOR_CREATE, &ops[_i], NULL, 0);
    report_problems(op_cases[_i].name);
}
END_TEST

/* Functions only a cold build reaches: compiling, reading the binary, storing it. */
static const fn_id cold_functions[] = {F_clCreateProgramWithSource, F_clBuildProgram, F_clGetProgramInfo,
                                       F_clGetProgramBuildInfo,     F_io_mkdir,       F_io_create,
                                       F_io_write,                  F_io_fsync,       F_io_rename};

START_TEST(test_operator_create_cold)
{
    if (!have_device())
        return;
    static const int cold_ops[] = {0, 2};
    snprintf(cold_root, sizeof cold_root, "%s", "/tmp/clops-faults-XXXXXX");
    ck_assert_msg(mkdtemp(cold_root) != NULL, "mkdtemp: %s", strerror(errno));
    sweep(SC_OPERATOR_COLD, &ops[cold_ops[_i]], cold_functions,
          (int)(sizeof cold_functions / sizeof cold_functions[0]));
    tc_rm_rf(cold_root);
    report_problems(op_cases[cold_ops[_i]].name);
}
END_TEST

/* A failed build whose log cannot be read either still gives the host fallback. */
START_TEST(test_build_failure_without_log)
{
    if (!have_device())
        return;
    long live_before[K_KINDS];
    memcpy(live_before, fx.live, sizeof live_before);
    setenv("CLOPS_CACHE", "off", 1);
    clops_context *ctx = new_context();
    unsetenv("CLOPS_CACHE");
    /* clBuildProgram fails to build; the build log query then fails too. */
    arm(F_clBuildProgram, 1, 1, CL_BUILD_PROGRAM_FAILURE);
    fx.also = F_clGetProgramBuildInfo;
    fx.also_code = CL_OUT_OF_HOST_MEMORY;
    clops_operator *op = NULL;
    clops_status st = clops_operator_create(ctx, &ops[0].desc, &op);
    disarm();
    ck_assert_msg(st == CLOPS_SUCCESS && op, "status %s (%s)", clops_status_name(st), clops_last_error_message());
    clops_operator_info info;
    ck_assert_int_eq(clops_operator_get_info(op, &info), CLOPS_SUCCESS);
    ck_assert_int_eq(info.backend, CLOPS_BACKEND_HOST);
    ck_assert_msg(strstr(info.fallback_reason, "CL_BUILD_PROGRAM_FAILURE") != NULL, "fallback reason: %s",
                  info.fallback_reason);
    output_ok_host(op, &ops[0], "build failure fallback");
    output_ok_cl(ctx, op, &ops[0], "build failure fallback");
    clops_operator_free(op);
    clops_context_free(ctx);
    settle(live_before, 0);
    for (int k = 0; k < K_KINDS; k++)
        ck_assert_msg(fx.live[k] == live_before[k], "%ld %s leaked", fx.live[k] - live_before[k], kind_names[k]);
    report_problems("build failure without log");
}
END_TEST

/* Every execute scenario on every operator: _i is scenario * NUM_OPS + operator. */
static const scenario execute_scenarios[] = {SC_EXECUTE_CL, SC_EXECUTE_FALLBACK, SC_EXECUTE_HOST};
#define NUM_EXECUTE_RUNS (int)(sizeof execute_scenarios / sizeof execute_scenarios[0] * NUM_OPS)

START_TEST(test_execute)
{
    if (!have_device())
        return;
    const int op = _i % NUM_OPS;
    sweep(execute_scenarios[_i / NUM_OPS], &ops[op], NULL, 0);
    report_problems(op_cases[op].name);
}
END_TEST

static Suite *faults_suite(void)
{
    Suite *s = suite_create("faults");
    TCase *tc = tc_suite_case(s, "context", 0);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_context_create);

    tc = tc_suite_case(s, "operator_create", 0);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_operator_create, 0, NUM_OPS);
    tcase_add_loop_test(tc, test_operator_create_cold, 0, 2);
    tcase_add_test(tc, test_build_failure_without_log);

    tc = tc_suite_case(s, "execute", 0);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_execute, 0, NUM_EXECUTE_RUNS);
    return s;
}

int main(void)
{
    int rc = tc_main(faults_suite());
    fprintf(stderr, "faults: %ld runs, %ld faults injected: %ld recovered (success, right output), %ld clean errors\n",
            total_runs, total_faults, total_recovered, total_errors);
    return rc;
}
