/*
 * test_load.c - clops under concurrent load, for a bounded time.
 *
 *   shared context: 8 threads create operators on one context (the default
 *     device's, and one around an out-of-order queue of the caller's when the
 *     device has them), run them through execute_host and execute on cl_mem,
 *     check every output byte, and free them;
 *   separate contexts: 8 threads, each with its own context, doing the same;
 *   processes: 4 processes (fork + exec of this binary) building into one fresh
 *     program-cache directory at once, each creating fresh contexts so that
 *     every operator's program is either compiled and stored, or loaded from an
 *     entry another process may be writing or evicting at that moment (one of
 *     them bounds the cache small, so eviction races with loading); afterwards
 *     every entry left must load in a fresh context.
 *
 * Every result is checked against the host kernels (clops_host_run). The
 * counts of operations are printed ("load: ..."). CLOPS_LOAD_SECONDS (default
 * 20) is the total time, split 40/30/30 between the three phases.
 *
 * Worker threads never call Check (it is not thread-safe): they count
 * failures and keep the first message, which the test asserts on after join.
 */
#define _POSIX_C_SOURCE 200809L
#include "test_common.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NUM_THREADS 8
#define NUM_PROCESSES 4

/* ---- variants ----------------------------------------------------------------------------------- */

typedef struct variant {
    const char *name;
    clops_operator_type type;
    clops_data_type dt, it;
    uint32_t in[4], out[4];
    uint32_t block;
    clops_depth_space_order order;
    const uint64_t *out_strides;
} variant;

static const uint64_t padded_out[4] = {2000, 200, 20, 1}; /* for {2, 4, 8, 12}: gaps everywhere */

static const variant variants[] = {
    {"D2S uint8 DCR b2", CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT8, 0, {2, 16, 6, 10}, {2, 4, 12, 20}, 2,
     CLOPS_ORDER_DEPTH_COLUMN_ROW, NULL},
    {"D2S float32 CRD b2", CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_FLOAT32, 0, {1, 8, 9, 7}, {1, 2, 18, 14}, 2,
     CLOPS_ORDER_COLUMN_ROW_DEPTH, NULL},
    {"D2S float16 DCR b3", CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_FLOAT16, 0, {1, 18, 5, 4}, {1, 2, 15, 12}, 3,
     CLOPS_ORDER_DEPTH_COLUMN_ROW, NULL},
    {"D2S complex128 CRD b1", CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_COMPLEX128, 0, {1, 3, 4, 5}, {1, 3, 4, 5},
     1, CLOPS_ORDER_COLUMN_ROW_DEPTH, NULL},
    {"S2D uint16 DCR b2 padded output", CLOPS_OPERATOR_SPACE_TO_DEPTH, CLOPS_DATA_TYPE_UINT16, 0, {2, 1, 16, 24},
     {2, 4, 8, 12}, 2, CLOPS_ORDER_DEPTH_COLUMN_ROW, padded_out},
    {"S2D float64 CRD b2", CLOPS_OPERATOR_SPACE_TO_DEPTH, CLOPS_DATA_TYPE_FLOAT64, 0, {1, 3, 8, 6}, {1, 12, 4, 3}, 2,
     CLOPS_ORDER_COLUMN_ROW_DEPTH, NULL},
    {"S2D int8 DCR b4", CLOPS_OPERATOR_SPACE_TO_DEPTH, CLOPS_DATA_TYPE_INT8, 0, {1, 2, 8, 16}, {1, 32, 2, 4}, 4,
     CLOPS_ORDER_DEPTH_COLUMN_ROW, NULL},
    {"MaxUnpooling float32 int64 duplicates", CLOPS_OPERATOR_MAX_UNPOOLING, CLOPS_DATA_TYPE_FLOAT32,
     CLOPS_DATA_TYPE_INT64, {2, 3, 4, 4}, {2, 3, 8, 8}, 0, 0, NULL},
    {"MaxUnpooling uint8 uint32", CLOPS_OPERATOR_MAX_UNPOOLING, CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_UINT32,
     {1, 2, 5, 5}, {1, 2, 10, 10}, 0, 0, NULL},
    {"MaxUnpooling uint64 uint64", CLOPS_OPERATOR_MAX_UNPOOLING, CLOPS_DATA_TYPE_UINT64, CLOPS_DATA_TYPE_UINT64,
     {1, 1, 3, 7}, {1, 1, 6, 14}, 0, 0, NULL},
};
#define NUM_VARIANTS ((int)(sizeof variants / sizeof variants[0]))

/* A variant's descriptors, data and expected output (read-only once made). */
typedef struct prepared {
    const variant *v;
    clops_tensor_desc in, idx, out;
    clops_depth_to_space_desc ds;
    clops_max_unpooling_desc mu;
    clops_operator_desc desc;
    void *x, *i, *init, *want;
    size_t x_bytes, i_bytes, y_bytes;
} prepared;

static prepared preps[NUM_VARIANTS];

static void prepare(prepared *p, const variant *v, uint64_t seed)
{
    memset(p, 0, sizeof *p);
    p->v = v;
    p->in = (clops_tensor_desc){v->dt, {v->in[0], v->in[1], v->in[2], v->in[3]}, NULL};
    p->out = (clops_tensor_desc){v->dt, {v->out[0], v->out[1], v->out[2], v->out[3]}, v->out_strides};
    p->x_bytes = tc_tensor_bytes(&p->in);
    p->y_bytes = tc_tensor_bytes(&p->out);
    p->x = tc_malloc(p->x_bytes);
    tc_fill_random(p->x, p->x_bytes, seed);
    if (v->type == CLOPS_OPERATOR_MAX_UNPOOLING) {
        p->idx = (clops_tensor_desc){v->it, {v->in[0], v->in[1], v->in[2], v->in[3]}, NULL};
        p->mu = (clops_max_unpooling_desc){&p->in, &p->idx, &p->out, CLOPS_INDICES_FLAT};
        p->desc = (clops_operator_desc){v->type, &p->mu};
        p->i_bytes = tc_tensor_bytes(&p->idx);
        p->i = tc_malloc(p->i_bytes);
        const uint64_t n = tc_span(p->idx.sizes, NULL), out_count = tc_span(p->out.sizes, NULL);
        const size_t isz = tc_type(v->it)->size;
        uint64_t s = seed ^ 0xabcdef;
        for (uint64_t k = 0; k < n; k++) {
            /* Random targets over the whole output: duplicates come naturally. */
            uint64_t t = tc_rng_next(&s) % out_count;
            if (isz == 4) {
                uint32_t t32 = (uint32_t)t;
                memcpy((char *)p->i + k * 4, &t32, 4);
            } else {
                memcpy((char *)p->i + k * 8, &t, 8);
            }
        }
    } else {
        p->ds = (clops_depth_to_space_desc){&p->in, &p->out, v->block, v->order};
        p->desc = (clops_operator_desc){v->type, &p->ds};
    }
    p->init = tc_malloc(p->y_bytes);
    tc_fill_sentinel(p->init, p->y_bytes);
    p->want = tc_memdup(p->init, p->y_bytes);
    clops_host_buffers hb = {p->x, p->x_bytes, p->i, p->i_bytes, p->want, p->y_bytes};
    clops_status st = clops_host_run(&p->desc, &hb);
    ck_assert_msg(st == CLOPS_SUCCESS, "%s: clops_host_run: %s", v->name, clops_status_name(st));
}

static void unprepare(prepared *p)
{
    free(p->x);
    free(p->i);
    free(p->init);
    free(p->want);
}

/* ---- failures from any thread ---------------------------------------------------------------------- */

static atomic_long failures;
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;
static char first_failure[512];

static void load_fail(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

static void load_fail(const char *fmt, ...)
{
    va_list ap;
    if (atomic_fetch_add(&failures, 1) == 0) {
        pthread_mutex_lock(&fail_lock);
        va_start(ap, fmt);
        vsnprintf(first_failure, sizeof first_failure, fmt, ap);
        va_end(ap);
        pthread_mutex_unlock(&fail_lock);
    }
    va_start(ap, fmt);
    fputs("FAIL: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double load_seconds(void)
{
    const char *e = getenv("CLOPS_LOAD_SECONDS");
    double v = e ? strtod(e, NULL) : 0;
    return v > 0 ? v : 20.0;
}

/* ---- one operation --------------------------------------------------------------------------------- */

typedef struct counts {
    long creates, host_runs, cl_runs;
} counts;

/* Creates `p`'s operator on `ctx`, runs it on host memory and (OpenCL contexts)
 * on cl_mem, checks both outputs whole, frees it. */
static void one_operation(clops_context *ctx, const prepared *p, const char *who, counts *n)
{
    clops_operator *op = NULL;
    clops_status st = clops_operator_create(ctx, &p->desc, &op);
    if (st != CLOPS_SUCCESS) {
        load_fail("%s: %s: create: %s (%s)", who, p->v->name, clops_status_name(st), clops_last_error_message());
        return;
    }
    n->creates++;
    void *y = tc_memdup(p->init, p->y_bytes);
    clops_host_buffers hb = {p->x, p->x_bytes, p->i, p->i_bytes, y, p->y_bytes};
    st = clops_operator_execute_host(op, &hb);
    if (st != CLOPS_SUCCESS)
        load_fail("%s: %s: execute_host: %s (%s)", who, p->v->name, clops_status_name(st), clops_last_error_message());
    else if (memcmp(y, p->want, p->y_bytes) != 0)
        load_fail("%s: %s: execute_host: wrong output", who, p->v->name);
    else
        n->host_runs++;

    if (clops_context_backend(ctx) == CLOPS_BACKEND_OPENCL) {
        cl_context c = clops_context_cl_context(ctx);
        cl_command_queue q = clops_context_queue(ctx);
        cl_int err = CL_SUCCESS;
        cl_mem bx = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, p->x_bytes, p->x, &err);
        cl_mem bi = p->i ? clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, p->i_bytes, p->i, &err) : NULL;
        cl_mem by = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, p->y_bytes, p->init, &err);
        if (!bx || !by || (p->i && !bi)) {
            load_fail("%s: clCreateBuffer: %d", who, (int)err);
        } else {
            clops_buffers b = {bx, bi, by};
            cl_event ev = NULL;
            st = clops_operator_execute(op, &b, 0, NULL, &ev);
            memset(y, 0, p->y_bytes);
            if (st != CLOPS_SUCCESS) {
                load_fail("%s: %s: execute: %s (%s)", who, p->v->name, clops_status_name(st), clops_last_error_message());
            } else if ((err = clEnqueueReadBuffer(q, by, CL_TRUE, 0, p->y_bytes, y, 1, &ev, NULL)) != CL_SUCCESS) {
                load_fail("%s: %s: clEnqueueReadBuffer after the event: %d", who, p->v->name, (int)err);
            } else if (memcmp(y, p->want, p->y_bytes) != 0) {
                load_fail("%s: %s: execute on cl_mem: wrong output", who, p->v->name);
            } else {
                n->cl_runs++;
            }
            if (ev)
                clReleaseEvent(ev);
        }
        tc_release_buffers(bx, bi, by);
    }
    free(y);
    clops_operator_free(op);
}

/* ---- threads ------------------------------------------------------------------------------------------ */

typedef struct worker {
    pthread_t thread;
    int id;
    clops_context *ctx; /* shared, or NULL: the thread makes its own */
    double deadline;
    counts n;
    long contexts;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    char who[64];
    snprintf(who, sizeof who, "thread %d%s", w->id, w->ctx ? " (shared context)" : "");
    uint64_t seed = 1000 + (uint64_t)w->id;
    clops_context *own = NULL;
    if (!w->ctx) {
        clops_status st = clops_context_create(&own);
        if (st != CLOPS_SUCCESS) {
            load_fail("%s: clops_context_create: %s (%s)", who, clops_status_name(st), clops_last_error_message());
            return NULL;
        }
        w->contexts++;
    }
    clops_context *ctx = w->ctx ? w->ctx : own;
    while (now_s() < w->deadline) {
        const prepared *p = &preps[tc_rng_next(&seed) % NUM_VARIANTS];
        one_operation(ctx, p, who, &w->n);
        /* Now and then, a thread with its own context starts over with a new one. */
        if (own && tc_rng_next(&seed) % 16 == 0) {
            clops_context_free(own);
            own = NULL;
            clops_status st = clops_context_create(&own);
            if (st != CLOPS_SUCCESS) {
                load_fail("%s: clops_context_create: %s", who, clops_status_name(st));
                return NULL;
            }
            ctx = own;
            w->contexts++;
        }
    }
    clops_context_free(own);
    return NULL;
}

static void run_threads(const char *phase, clops_context *shared_a, clops_context *shared_b, double seconds)
{
    worker w[NUM_THREADS];
    memset(w, 0, sizeof w);
    const double t0 = now_s();
    for (int t = 0; t < NUM_THREADS; t++) {
        w[t].id = t;
        w[t].ctx = shared_a ? (t % 2 && shared_b ? shared_b : shared_a) : NULL;
        w[t].deadline = t0 + seconds;
        ck_assert_int_eq(pthread_create(&w[t].thread, NULL, worker_main, &w[t]), 0);
    }
    counts total = {0, 0, 0};
    long contexts = 0;
    for (int t = 0; t < NUM_THREADS; t++) {
        pthread_join(w[t].thread, NULL);
        total.creates += w[t].n.creates;
        total.host_runs += w[t].n.host_runs;
        total.cl_runs += w[t].n.cl_runs;
        contexts += w[t].contexts;
    }
    const double dt = now_s() - t0;
    fprintf(stderr,
            "load: %s: %d threads for %.1f s: %ld operators created, %ld execute_host and %ld execute (cl_mem) "
            "runs checked (%.0f runs/s), %ld failures\n",
            phase, NUM_THREADS, dt, total.creates, total.host_runs, total.cl_runs,
            (double)(total.host_runs + total.cl_runs) / dt, atomic_load(&failures));
    if (contexts)
        fprintf(stderr, "load: %s: %ld contexts created by the threads\n", phase, contexts);
    ck_assert_msg(atomic_load(&failures) == 0, "%s: %ld failures, the first: %s", phase, atomic_load(&failures),
                  first_failure);
    ck_assert_msg(total.host_runs + total.cl_runs > 0, "%s: no operation completed in %.1f s", phase, dt);
}

static void setup(void)
{
    atomic_store(&failures, 0);
    first_failure[0] = '\0';
    for (int i = 0; i < NUM_VARIANTS; i++)
        prepare(&preps[i], &variants[i], 77 + (uint64_t)i);
}

static void teardown(void)
{
    for (int i = 0; i < NUM_VARIANTS; i++)
        unprepare(&preps[i]);
}

START_TEST(test_threads_shared_context)
{
    if (!tc_dev_ctx)
        fprintf(stderr, "SKIP: no OpenCL device: the shared-context threads use the host backend only\n");
    clops_context *a = tc_dev_ctx ? tc_dev_ctx : tc_host_ctx;
    clops_context *b = tc_dev_ctx ? tc_ooo_context() : NULL;
    if (b)
        fprintf(stderr, "load: odd threads share a context around an out-of-order queue\n");
    run_threads("shared context", a, b, load_seconds() * 0.4);
}
END_TEST

START_TEST(test_threads_separate_contexts)
{
    run_threads("separate contexts", NULL, NULL, load_seconds() * 0.3);
}
END_TEST

/* ---- processes ------------------------------------------------------------------------------------------ */

static char self_path[4096];

static void count_entry(void *user, const char *file, uint64_t bytes, long long last_used, const char *key,
                        size_t key_len)
{
    (void)file, (void)bytes, (void)last_used, (void)key_len;
    long *c = user;
    c[0]++;
    if (!key)
        c[1]++;
}

/* Child: fresh contexts in a loop until the deadline, every operation checked.
 * Prints "child: ..." counts on stdout; returns the number of failures. */
static long child_work(const char *dir, int id, double seconds)
{
    setenv("CLOPS_CACHE_DIR", dir, 1);
    unsetenv("CLOPS_CACHE");
    if (id == NUM_PROCESSES - 1)
        setenv("CLOPS_CACHE_MAX_SIZE", "2M", 1); /* about half the entries: it evicts while the others load */
    for (int i = 0; i < NUM_VARIANTS; i++)
        prepare(&preps[i], &variants[i], 77 + (uint64_t)i);
    const double deadline = now_s() + seconds;
    uint64_t seed = 5000 + (uint64_t)id;
    counts n = {0, 0, 0};
    long contexts = 0, compiled = 0, from_disk = 0, in_process = 0, lists = 0;
    char who[32];
    snprintf(who, sizeof who, "process %d", id);
    while (now_s() < deadline) {
        clops_context *ctx = NULL;
        clops_status st = clops_context_create(&ctx);
        if (st != CLOPS_SUCCESS) {
            load_fail("%s: clops_context_create: %s", who, clops_status_name(st));
            break;
        }
        contexts++;
        for (int k = 0; k < 4 && now_s() < deadline; k++) {
            const prepared *p = &preps[tc_rng_next(&seed) % NUM_VARIANTS];
            clops_operator *op = NULL;
            if (clops_operator_create(ctx, &p->desc, &op) == CLOPS_SUCCESS) {
                clops_operator_info info;
                clops_operator_get_info(op, &info);
                compiled += strcmp(info.program_origin, "compiled") == 0;
                from_disk += strcmp(info.program_origin, "disk cache") == 0;
                in_process += strcmp(info.program_origin, "in-process") == 0;
                clops_operator_free(op);
            }
            one_operation(ctx, p, who, &n);
        }
        /* Process 0 lists the cache while the others write it; process 1 prunes it. */
        if (id == 0) {
            long c[2] = {0, 0};
            if (clops_cache_list_entries(count_entry, c, NULL) != CLOPS_SUCCESS)
                load_fail("%s: clops_cache_list_entries: %s", who, clops_last_error_message());
            lists++;
        } else if (id == 1 && tc_rng_next(&seed) % 4 == 0) {
            size_t removed = 0;
            if (clops_cache_prune(&removed) != CLOPS_SUCCESS)
                load_fail("%s: clops_cache_prune: %s", who, clops_last_error_message());
        }
        clops_context_free(ctx);
    }
    for (int i = 0; i < NUM_VARIANTS; i++)
        unprepare(&preps[i]);
    printf("child %d: %ld contexts, %ld operators created, %ld execute_host and %ld execute runs checked; programs: "
           "%ld compiled, %ld from the disk cache, %ld in-process; %ld cache listings; %ld failures\n",
           id, contexts, n.creates, n.host_runs, n.cl_runs, compiled, from_disk, in_process, lists,
           atomic_load(&failures));
    fflush(stdout);
    return atomic_load(&failures);
}

/* The child's work runs as a Check test of its own (the helpers assert). */
static const char *child_dir;
static int child_id;
static double child_seconds;

START_TEST(test_child)
{
    long n = child_work(child_dir, child_id, child_seconds);
    ck_assert_msg(n == 0, "process %d: %ld failures, the first: %s", child_id, n, first_failure);
}
END_TEST

static int child_main(const char *dir, int id, double seconds)
{
    child_dir = dir;
    child_id = id;
    child_seconds = seconds;
    Suite *s = suite_create("load child");
    TCase *tc = tc_suite_case(s, "child", 0);
    tcase_add_test(tc, test_child);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_SILENT);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

START_TEST(test_processes_one_cache)
{
    if (!tc_dev_ctx) {
        fprintf(stderr, "SKIP: no OpenCL device: the cache processes test needs one\n");
        return;
    }
    char dir[] = "/tmp/clops-load-XXXXXX";
    ck_assert_msg(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
    char cache[sizeof dir + 8];
    snprintf(cache, sizeof cache, "%s/cache", dir); /* created by the processes themselves, at once */
    const double seconds = load_seconds() * 0.3;
    char secs[32];
    snprintf(secs, sizeof secs, "%.2f", seconds);
    pid_t pids[NUM_PROCESSES];
    int pipes[NUM_PROCESSES];
    const double t0 = now_s();
    for (int i = 0; i < NUM_PROCESSES; i++) {
        int fd[2];
        ck_assert_int_eq(pipe(fd), 0);
        fflush(NULL);
        pids[i] = fork();
        ck_assert_msg(pids[i] >= 0, "fork: %s", strerror(errno));
        if (pids[i] == 0) {
            /* A fresh process image: no OpenCL state crosses the fork. */
            dup2(fd[1], STDOUT_FILENO);
            close(fd[0]);
            close(fd[1]);
            char idbuf[16];
            snprintf(idbuf, sizeof idbuf, "%d", i);
            execl(self_path, self_path, "--load-child", cache, idbuf, secs, (char *)NULL);
            _exit(127);
        }
        close(fd[1]);
        pipes[i] = fd[0];
    }
    int bad = 0;
    for (int i = 0; i < NUM_PROCESSES; i++) {
        char buf[1024];
        ssize_t got = 0, r;
        while ((r = read(pipes[i], buf + got, sizeof buf - 1 - (size_t)got)) > 0)
            got += r;
        buf[got > 0 ? got : 0] = '\0';
        close(pipes[i]);
        int status = 0;
        waitpid(pids[i], &status, 0);
        fprintf(stderr, "load: %s", got > 0 ? buf : "(a child printed nothing)\n");
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "FAIL: process %d ended with status 0x%x\n", i, status);
            bad++;
        }
    }
    fprintf(stderr, "load: processes: %d processes for %.1f s on one fresh cache directory\n", NUM_PROCESSES,
            now_s() - t0);

    /* Whatever the processes left must be whole: list it, then load every variant. */
    setenv("CLOPS_CACHE_DIR", cache, 1);
    long c[2] = {0, 0};
    size_t n = 0;
    ck_assert_int_eq(clops_cache_list_entries(count_entry, c, &n), CLOPS_SUCCESS);
    fprintf(stderr, "load: processes: %ld cache entries left, %ld invalid\n", c[0], c[1]);
    ck_assert_msg(c[1] == 0, "%ld invalid cache entries left after the processes", c[1]);
    clops_context *ctx = NULL;
    ck_assert_int_eq(clops_context_create(&ctx), CLOPS_SUCCESS);
    counts cnt = {0, 0, 0};
    for (int i = 0; i < NUM_VARIANTS; i++)
        one_operation(ctx, &preps[i], "after the processes", &cnt);
    clops_context_free(ctx);
    unsetenv("CLOPS_CACHE_DIR");
    char cmd[sizeof dir + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "note: could not remove %s\n", dir);
    ck_assert_msg(bad == 0, "%d of %d processes failed (see FAIL lines)", bad, NUM_PROCESSES);
    ck_assert_msg(atomic_load(&failures) == 0, "after the processes: %s", first_failure);
}
END_TEST

static Suite *load_suite(void)
{
    Suite *s = suite_create("load");
    TCase *tc = tc_suite_case(s, "load", 0);
    tcase_add_checked_fixture(tc, setup, teardown);
    TC_TESTS(tc, test_threads_shared_context, test_threads_separate_contexts, test_processes_one_cache);
    return s;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "--load-child") == 0)
        return child_main(argv[2], atoi(argv[3]), strtod(argv[4], NULL));
    ssize_t len = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    if (len <= 0) {
        fprintf(stderr, "FATAL: readlink(/proc/self/exe): %s\n", strerror(errno));
        return 1;
    }
    self_path[len] = '\0';
    return tc_main(load_suite());
}
