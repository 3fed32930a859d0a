/*
 * test_cache.c - the on-disk program cache and the tuning database.
 *
 * Links clops_testable (the static build): files are crafted with the cache's
 * own internals (cache.h) where a test needs an entry that only a bug or another
 * identity could produce, and file-system calls are made to fail through the
 * clops_cl seam (cl_api.h). Everything else goes through the public API, and
 * every behaviour is asserted by value: the program_origin an operator reports
 * ("compiled", "disk cache", "in-process"), the files left in the directory,
 * the keys clops_cache_list_entries() reads back, and bit-exact results of
 * execute_host and of execute on cl_mem against the naive reference.
 *
 * Each test runs in a fresh temporary cache directory (CLOPS_CACHE_DIR, which
 * contexts read at creation). The checked fixture's teardown runs also after a
 * failed assertion (CK_NOFORK): it restores the seam (clops_cl = clops_cl_real)
 * and every environment variable a test changed, frees the test's contexts and
 * removes the directory.
 *
 * The concurrent-writers test forks processes that exec this same binary with
 * --cache-writer (an OpenCL runtime must not cross a fork()).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "reference.h"
#include "test_common.h"
#include "test_fs.h"

#define CLOPS_CL_API_NO_MACROS
#include "internal.h"

#define FNV_SEED 0xcbf29ce484222325ull
#define ENTRY_HEADER_BYTES 32 /* magic, version, key length, payload length, checksum */
#define WRITERS 6

/* ---- environment, directories and contexts of one test ------------------------------------ */

static const char *const env_names[] = {"CLOPS_CACHE_DIR", "CLOPS_CACHE", "CLOPS_CACHE_MAX_SIZE", "CLOPS_DISABLE",
                                        "CLOPS_TUNE"};
#define NUM_ENV (sizeof env_names / sizeof env_names[0])
static char *env_saved[NUM_ENV];
static int env_was_set[NUM_ENV];

static char g_root[PATH_MAX];      /* the test's temporary directory */
static char g_dir[PATH_MAX + 32];  /* g_root/cache: CLOPS_CACHE_DIR */

#define MAX_CTX 8
static clops_context *g_ctx[MAX_CTX];


static void setup(void)
{
    tc_env_save(env_names, NUM_ENV, env_saved, env_was_set, 1);
    const char *tmp = getenv("TMPDIR");
    snprintf(g_root, sizeof g_root, "%s/clops-test-cache-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    ck_assert_msg(mkdtemp(g_root) != NULL, "mkdtemp(%s): %s", g_root, strerror(errno));
    snprintf(g_dir, sizeof g_dir, "%s/cache", g_root);
    setenv("CLOPS_CACHE_DIR", g_dir, 1);
    clops_cl = clops_cl_real;
}

static void teardown(void)
{
    clops_cl = clops_cl_real;
    for (int i = 0; i < MAX_CTX; i++) {
        clops_context_free(g_ctx[i]);
        g_ctx[i] = NULL;
    }
    tc_env_restore(env_names, NUM_ENV, env_saved, env_was_set);
    if (g_root[0])
        tc_rm_rf(g_root);
    g_root[0] = '\0';
}

/* A context on the default device, freed by the teardown if the test does not. */
static clops_context *new_ctx(void)
{
    clops_context *c = NULL;
    clops_status st = clops_context_create(&c);
    ck_assert_msg(st == CLOPS_SUCCESS && c, "clops_context_create: %s (%s)", clops_status_name(st),
                  clops_last_error_message());
    ck_assert_msg(clops_context_backend(c) == CLOPS_BACKEND_OPENCL, "clops_context_create chose the host backend");
    for (int i = 0; i < MAX_CTX; i++)
        if (!g_ctx[i]) {
            g_ctx[i] = c;
            return c;
        }
    ck_abort_msg("test bug: more than %d contexts at once", MAX_CTX);
    return NULL;
}

static void drop_ctx(clops_context *c)
{
    for (int i = 0; i < MAX_CTX; i++)
        if (g_ctx[i] == c)
            g_ctx[i] = NULL;
    clops_context_free(c);
}

/* ---- files ---------------------------------------------------------------------------------- */

static unsigned char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s: %s", path, strerror(errno));
    unsigned char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 1 << 16;
            buf = realloc(buf, cap);
            ck_assert(buf != NULL);
        }
        const size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0)
            break;
    }
    fclose(f);
    *len = n;
    return buf;
}

static void write_all(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot create %s: %s", path, strerror(errno));
    ck_assert_msg(fwrite(data, 1, len, f) == len && fclose(f) == 0, "cannot write %s", path);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void entry_file(const char *name, char *out, size_t size)
{
    snprintf(out, size, "%s/%s", g_dir, name);
}

/* Sets a file's modification time (the cache's "last used") to `age` seconds ago. */
static void age_file(const char *path, long age)
{
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= age;
    t[1] = t[0];
    ck_assert_msg(utimensat(AT_FDCWD, path, t, 0) == 0, "utimensat(%s): %s", path, strerror(errno));
}

static struct timespec mtime_of(const char *path)
{
    struct stat st;
    ck_assert_msg(stat(path, &st) == 0, "stat(%s): %s", path, strerror(errno));
    return st.st_mtim;
}

/* What the cache directory holds, by file name. */
typedef struct dir_scan {
    int present;          /* the directory exists */
    int entries;          /* <16 hex>.bin */
    int temps;            /* .tmp-* (entries being written) and .tune-* */
    int tunes;            /* tune-*.txt */
    char entry[32][24];
    uint64_t entry_bytes[32];
    char tune[64];
} dir_scan;

static int is_entry_name(const char *n)
{
    return strlen(n) == 20 && strcmp(n + 16, ".bin") == 0 && strspn(n, "0123456789abcdef") == 16;
}

static dir_scan scan_dir(void)
{
    dir_scan s;
    memset(&s, 0, sizeof s);
    DIR *d = opendir(g_dir);
    if (!d)
        return s;
    s.present = 1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (is_entry_name(e->d_name)) {
            if (s.entries < 32) {
                snprintf(s.entry[s.entries], sizeof s.entry[0], "%s", e->d_name);
                char p[PATH_MAX + 64];
                entry_file(e->d_name, p, sizeof p);
                struct stat st;
                s.entry_bytes[s.entries] = stat(p, &st) == 0 ? (uint64_t)st.st_size : 0;
            }
            s.entries++;
        } else if (strncmp(e->d_name, ".tmp-", 5) == 0 || strncmp(e->d_name, ".tune-", 6) == 0) {
            s.temps++;
        } else if (strncmp(e->d_name, "tune-", 5) == 0) {
            snprintf(s.tune, sizeof s.tune, "%.60s", e->d_name);
            s.tunes++;
        }
    }
    closedir(d);
    return s;
}

static int scan_has(const dir_scan *s, const char *name)
{
    for (int i = 0; i < s->entries && i < 32; i++)
        if (strcmp(s->entry[i], name) == 0)
            return 1;
    return 0;
}

/* The entry that `after` has and `before` lacks (exactly one). */
static void new_entry(const dir_scan *before, const dir_scan *after, char *name, size_t size, uint64_t *bytes)
{
    int found = 0;
    for (int i = 0; i < after->entries && i < 32; i++)
        if (!scan_has(before, after->entry[i])) {
            snprintf(name, size, "%s", after->entry[i]);
            if (bytes)
                *bytes = after->entry_bytes[i];
            found++;
        }
    ck_assert_msg(found == 1, "%d new cache entries, want 1", found);
}

/* What clops_cache_list_entries() reads back. */
typedef struct listing {
    size_t n, invalid, misnamed;
    char file[32][24];
    char *key[32];
    size_t key_len[32];
    uint64_t bytes[32];
} listing;

static void list_cb(void *user, const char *file, uint64_t bytes, long long last_used, const char *key,
                    size_t key_len)
{
    (void)last_used;
    listing *l = user;
    if (l->n < 32) {
        snprintf(l->file[l->n], sizeof l->file[0], "%s", file);
        l->bytes[l->n] = bytes;
        l->key_len[l->n] = key_len;
        l->key[l->n] = key ? tc_memdup(key, key_len) : NULL;
    }
    if (!key) {
        l->invalid++;
    } else {
        char want[32];
        snprintf(want, sizeof want, "%016llx.bin", (unsigned long long)clops_fnv1a(FNV_SEED, key, key_len));
        if (strcmp(want, file) != 0)
            l->misnamed++;
    }
    l->n++;
}

static void list_entries(listing *l)
{
    memset(l, 0, sizeof *l);
    size_t count = 0;
    clops_status st = clops_cache_list_entries(list_cb, l, &count);
    ck_assert_msg(st == CLOPS_SUCCESS, "clops_cache_list_entries: %s (%s)", clops_status_name(st),
                  clops_last_error_message());
    ck_assert_msg(count == l->n, "clops_cache_list_entries counted %zu but visited %zu", count, l->n);
}

static void listing_free(listing *l)
{
    for (size_t i = 0; i < l->n && i < 32; i++)
        free(l->key[i]);
}

static const char *listed_key(const listing *l, const char *file, size_t *len)
{
    for (size_t i = 0; i < l->n && i < 32; i++)
        if (strcmp(l->file[i], file) == 0) {
            *len = l->key_len[i];
            return l->key[i];
        }
    ck_abort_msg("no listed entry %s", file);
    return NULL;
}

/* The directory holds exactly `want` entries, each of which parses (key read
 * back), is named after its key's hash, and no temporary file is left. */
static void expect_clean_cache(int want, const char *label)
{
    dir_scan s = scan_dir();
    ck_assert_msg(s.entries == want, "%s: %d entries in %s, want %d", label, s.entries, g_dir, want);
    ck_assert_msg(s.temps == 0, "%s: %d temporary files left in %s", label, s.temps, g_dir);
    if (!s.present)
        return;
    listing l;
    list_entries(&l);
    ck_assert_msg(l.n == (size_t)want, "%s: clops_cache_list_entries visited %zu entries, want %d", label, l.n, want);
    ck_assert_msg(l.invalid == 0, "%s: %zu entries do not parse (key NULL)", label, l.invalid);
    ck_assert_msg(l.misnamed == 0, "%s: %zu entries are not named after their key's hash", label, l.misnamed);
    listing_free(&l);
}

/* ---- operator cases ---------------------------------------------------------------------------- */

typedef struct case_def {
    const char *name;
    clops_operator_type type;
    clops_data_type dtype;
    uint32_t in[4];
    uint32_t block;                /* DepthToSpace, SpaceToDepth */
    clops_depth_space_order order; /* DepthToSpace, SpaceToDepth */
    clops_data_type itype;         /* MaxUnpooling: index type */
    uint32_t out[4];               /* MaxUnpooling: output sizes */
} case_def;

/* Four cases, each its own program. */
static const case_def CASE_A = {"DepthToSpace FLOAT32 b2 DCR", CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_FLOAT32,
                                {1, 8, 3, 5}, 2, CLOPS_ORDER_DEPTH_COLUMN_ROW, 0, {0, 0, 0, 0}};
static const case_def CASE_B = {"SpaceToDepth UINT8 b3 CRD", CLOPS_OPERATOR_SPACE_TO_DEPTH, CLOPS_DATA_TYPE_UINT8,
                                {2, 2, 6, 9}, 3, CLOPS_ORDER_COLUMN_ROW_DEPTH, 0, {0, 0, 0, 0}};
static const case_def CASE_C = {"DepthToSpace UINT16 b2 CRD", CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT16,
                                {1, 4, 5, 3}, 2, CLOPS_ORDER_COLUMN_ROW_DEPTH, 0, {0, 0, 0, 0}};
static const case_def CASE_D = {"MaxUnpooling FLOAT32 INT64 indices", CLOPS_OPERATOR_MAX_UNPOOLING,
                                CLOPS_DATA_TYPE_FLOAT32, {1, 2, 3, 4}, 0, 0, CLOPS_DATA_TYPE_INT64, {1, 2, 6, 8}};
/* The variant clops_tune(quick) tunes: DepthToSpace UINT8, block 2, DCR, packed. */
static const case_def CASE_T = {"DepthToSpace UINT8 b2 DCR", CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT8,
                                {1, 8, 6, 7}, 2, CLOPS_ORDER_DEPTH_COLUMN_ROW, 0, {0, 0, 0, 0}};

/* One case's descriptors, data and expected output. Not movable (desc points inside). */
typedef struct prepared {
    const case_def *def;
    clops_tensor_desc x, i, y;
    clops_depth_to_space_desc d2s;
    clops_space_to_depth_desc s2d;
    clops_max_unpooling_desc mu;
    clops_operator_desc desc;
    size_t esize;
    void *in, *idx, *sentinel, *want;
    tc_bufs bufs;
} prepared;

static uint64_t count_of(const uint32_t s[4])
{
    return (uint64_t)s[0] * s[1] * s[2] * s[3];
}

static uint64_t seed_of(const char *name)
{
    return clops_fnv1a(FNV_SEED, name, strlen(name));
}

/* Builds the case; 0 on success, -1 if the reference rejects it (a test bug). */
static int prepare(prepared *p, const case_def *d)
{
    memset(p, 0, sizeof *p);
    p->def = d;
    const size_t es = clops_data_type_size(d->dtype);
    const uint32_t b = d->block;
    uint32_t out[4];
    if (d->type == CLOPS_OPERATOR_DEPTH_TO_SPACE) {
        const uint32_t o[4] = {d->in[0], d->in[1] / (b * b), d->in[2] * b, d->in[3] * b};
        memcpy(out, o, sizeof out);
    } else if (d->type == CLOPS_OPERATOR_SPACE_TO_DEPTH) {
        const uint32_t o[4] = {d->in[0], d->in[1] * b * b, d->in[2] / b, d->in[3] / b};
        memcpy(out, o, sizeof out);
    } else {
        memcpy(out, d->out, sizeof out);
    }
    p->esize = es;
    p->x.data_type = p->y.data_type = d->dtype;
    memcpy(p->x.sizes, d->in, sizeof p->x.sizes);
    memcpy(p->y.sizes, out, sizeof p->y.sizes);
    const size_t in_n = (size_t)count_of(d->in), out_n = (size_t)count_of(out);
    p->in = malloc(in_n * es + 1);
    p->sentinel = malloc(out_n * es + 1);
    p->want = malloc(out_n * es + 1);
    if (!p->in || !p->sentinel || !p->want)
        return -1;
    tc_fill_random(p->in, in_n * es, seed_of(d->name));
    tc_fill_sentinel(p->sentinel, out_n * es);
    memcpy(p->want, p->sentinel, out_n * es);
    ref_tensor rx, ry;
    ref_tensor_init(&rx, p->in, es, d->in, NULL);
    ref_tensor_init(&ry, p->want, es, out, NULL);
    int rc = 0;
    size_t idx_bytes = 0;
    switch (d->type) {
    case CLOPS_OPERATOR_DEPTH_TO_SPACE:
        p->d2s = (clops_depth_to_space_desc){&p->x, &p->y, b, d->order};
        p->desc = (clops_operator_desc){d->type, &p->d2s};
        rc = ref_depth_to_space(&rx, &ry, b, (ref_order)d->order);
        break;
    case CLOPS_OPERATOR_SPACE_TO_DEPTH:
        p->s2d = (clops_space_to_depth_desc){&p->x, &p->y, b, d->order};
        p->desc = (clops_operator_desc){d->type, &p->s2d};
        rc = ref_space_to_depth(&rx, &ry, b, (ref_order)d->order);
        break;
    case CLOPS_OPERATOR_MAX_UNPOOLING: {
        const size_t is = clops_data_type_size(d->itype);
        idx_bytes = in_n * is;
        p->idx = malloc(idx_bytes + 1);
        if (!p->idx)
            return -1;
        uint64_t s = seed_of(d->name) ^ 0x5bd1e995u;
        for (size_t k = 0; k < in_n; k++) {
            const uint64_t v = tc_rng_next(&s) % out_n;
            if (is == 4) {
                const uint32_t v32 = (uint32_t)v;
                memcpy((char *)p->idx + 4 * k, &v32, 4);
            } else {
                memcpy((char *)p->idx + 8 * k, &v, 8);
            }
        }
        p->i.data_type = d->itype;
        memcpy(p->i.sizes, d->in, sizeof p->i.sizes);
        p->mu = (clops_max_unpooling_desc){&p->x, &p->i, &p->y};
        p->desc = (clops_operator_desc){d->type, &p->mu};
        ref_tensor ri;
        ref_tensor_init(&ri, p->idx, is, d->in, NULL);
        const ref_index_kind kind = d->itype == CLOPS_DATA_TYPE_UINT32   ? REF_INDEX_UINT32
                                    : d->itype == CLOPS_DATA_TYPE_UINT64 ? REF_INDEX_UINT64
                                                                         : REF_INDEX_INT64;
        rc = ref_max_unpooling(&rx, &ri, kind, &ry) == 0 ? 0 : -1;
        break;
    }
    }
    p->bufs = (tc_bufs){p->in, in_n * es, p->idx, idx_bytes, p->sentinel, out_n * es};
    return rc;
}

static void release(prepared *p)
{
    free(p->in);
    free(p->idx);
    free(p->sentinel);
    free(p->want);
}

static void prepare_ok(prepared *p, const case_def *d)
{
    ck_assert_msg(prepare(p, d) == 0, "test bug: the reference rejects case %s", d->name);
}

/* Creates the case's operator and reads its info. */
static clops_operator *create_op(clops_context *ctx, prepared *p, clops_operator_info *info, const char *label)
{
    clops_operator *op = NULL;
    clops_status st = clops_operator_create(ctx, &p->desc, &op);
    ck_assert_msg(st == CLOPS_SUCCESS && op, "%s [%s]: clops_operator_create: %s (%s)", p->def->name, label,
                  clops_status_name(st), clops_last_error_message());
    st = clops_operator_get_info(op, info);
    ck_assert_msg(st == CLOPS_SUCCESS, "%s [%s]: clops_operator_get_info: %s", p->def->name, label,
                  clops_status_name(st));
    return op;
}

/* Which path ran: backend, and for OpenCL the program's origin (NULL: any). */
static void expect_path(const prepared *p, const clops_operator_info *info, clops_backend backend,
                        const char *origin, const char *label)
{
    const char *name = p->def->name;
    ck_assert_msg(info->backend == backend, "%s [%s]: backend %s, want %s (fallback reason \"%s\")", name, label,
                  info->backend == CLOPS_BACKEND_HOST ? "HOST" : "OPENCL",
                  backend == CLOPS_BACKEND_HOST ? "HOST" : "OPENCL", info->fallback_reason);
    if (backend == CLOPS_BACKEND_OPENCL) {
        ck_assert_msg(info->kernel_name[0] != '\0', "%s [%s]: OpenCL operator with an empty kernel_name", name, label);
        ck_assert_msg(info->fallback_reason[0] == '\0', "%s [%s]: OpenCL operator with fallback_reason \"%s\"", name,
                      label, info->fallback_reason);
        if (origin)
            ck_assert_msg(strcmp(info->program_origin, origin) == 0, "%s [%s]: program_origin \"%s\", want \"%s\"",
                          name, label, info->program_origin, origin);
    } else {
        ck_assert_msg(info->fallback_reason[0] != '\0', "%s [%s]: host fallback without a fallback_reason", name,
                      label);
        ck_assert_msg(info->kernel_name[0] == '\0' && info->program_origin[0] == '\0',
                      "%s [%s]: host fallback reports kernel \"%s\", program_origin \"%s\"", name, label,
                      info->kernel_name, info->program_origin);
    }
}

/* execute_host and execute on cl_mem (wait list, returned event), both bit-exact. */
static void run_and_compare(clops_context *ctx, clops_operator *op, prepared *p, const char *label)
{
    void *out = tc_malloc(p->bufs.out_bytes);
    char path[160];
    snprintf(path, sizeof path, "%s, execute_host", label);
    clops_status st = tc_run_execute_host(op, &p->bufs, out);
    ck_assert_msg(st == CLOPS_SUCCESS, "%s [%s]: %s (%s)", p->def->name, path, clops_status_name(st),
                  clops_last_error_message());
    tc_check_bytes(out, p->want, p->bufs.out_bytes, p->esize, p->def->name, path);
    snprintf(path, sizeof path, "%s, execute on cl_mem", label);
    st = tc_run_execute_cl(ctx, op, &p->bufs, out, path);
    ck_assert_msg(st == CLOPS_SUCCESS, "%s [%s]: %s (%s)", p->def->name, path, clops_status_name(st),
                  clops_last_error_message());
    tc_check_bytes(out, p->want, p->bufs.out_bytes, p->esize, p->def->name, path);
    free(out);
}

/* Creates the case on ctx, checks the path it took and its results. */
static void check_case(clops_context *ctx, const case_def *d, clops_backend backend, const char *origin,
                       const char *label)
{
    prepared p;
    prepare_ok(&p, d);
    clops_operator_info info;
    clops_operator *op = create_op(ctx, &p, &info, label);
    expect_path(&p, &info, backend, origin, label);
    run_and_compare(ctx, op, &p, label);
    clops_operator_free(op);
    release(&p);
}

/* The directory entry a case's program is stored in: built on a fresh context
 * (it must compile) and found as the one new file. */
static void build_and_name(const case_def *d, char *name, size_t size, uint64_t *bytes, const char *label)
{
    dir_scan before = scan_dir();
    clops_context *ctx = new_ctx();
    check_case(ctx, d, CLOPS_BACKEND_OPENCL, "compiled", label);
    drop_ctx(ctx);
    dir_scan after = scan_dir();
    new_entry(&before, &after, name, size, bytes);
}

/* ---- cold, warm, in-process --------------------------------------------------------------------- */

START_TEST(test_cold_disk_inprocess)
{
    clops_context *c1 = new_ctx();
    const char *status = clops_context_cache_status(c1);
    ck_assert_msg(strstr(status, g_dir) && strstr(status, "read-write"), "cache status \"%s\", want %s (read-write)",
                  status, g_dir);
    char buf[PATH_MAX + 256];
    ck_assert_str_eq(clops_cache_status(buf, sizeof buf), status);
    expect_clean_cache(0, "fresh directory");

    /* cold: compiled, and one entry written whose key names the build options */
    prepared p;
    prepare_ok(&p, &CASE_A);
    clops_operator_info info;
    clops_operator *op = create_op(c1, &p, &info, "cold");
    expect_path(&p, &info, CLOPS_BACKEND_OPENCL, "compiled", "cold");
    run_and_compare(c1, op, &p, "cold");
    expect_clean_cache(1, "after the first build");
    dir_scan s = scan_dir();
    listing l;
    list_entries(&l);
    ck_assert_str_eq(l.file[0], s.entry[0]);
    ck_assert_msg(l.bytes[0] == s.entry_bytes[0], "listed size %llu, file size %llu",
                  (unsigned long long)l.bytes[0], (unsigned long long)s.entry_bytes[0]);
    ck_assert_msg(strncmp(l.key[0], "clops-cache-format ", 19) == 0, "entry key starts \"%.40s\"", l.key[0]);
    char want_opts[CLOPS_OPTIONS_MAX + 16];
    snprintf(want_opts, sizeof want_opts, "options: %s\n", info.build_options);
    ck_assert_msg(memmem(l.key[0], l.key_len[0], want_opts, strlen(want_opts)) != NULL,
                  "the entry's key does not name the build options \"%s\"", info.build_options);
    ck_assert_msg(memmem(l.key[0], l.key_len[0], clops_context_device_name(c1),
                         strlen(clops_context_device_name(c1))) != NULL,
                  "the entry's key does not name the device \"%s\"", clops_context_device_name(c1));
    listing_free(&l);
    clops_operator_free(op);

    /* a second operator on the same context: the context's own table */
    check_case(c1, &CASE_A, CLOPS_BACKEND_OPENCL, "in-process", "same context");

    /* a second context in the same process: the disk */
    clops_context *c2 = new_ctx();
    check_case(c2, &CASE_A, CLOPS_BACKEND_OPENCL, "disk cache", "second context");
    check_case(c2, &CASE_A, CLOPS_BACKEND_OPENCL, "in-process", "second context, second operator");

    /* the context's table does not need the file any more */
    char path[PATH_MAX + 64];
    entry_file(s.entry[0], path, sizeof path);
    ck_assert(unlink(path) == 0);
    check_case(c1, &CASE_A, CLOPS_BACKEND_OPENCL, "in-process", "entry removed, same context");
    expect_clean_cache(0, "entry removed, in-process hit");
    clops_context *c3 = new_ctx();
    check_case(c3, &CASE_A, CLOPS_BACKEND_OPENCL, "compiled", "entry removed, new context");
    expect_clean_cache(1, "entry rebuilt");

    /* a different program on a warm directory still compiles, and adds an entry */
    check_case(c3, &CASE_D, CLOPS_BACKEND_OPENCL, "compiled", "another program");
    expect_clean_cache(2, "two programs");
    release(&p);
}
END_TEST

/* ---- corrupted entries ------------------------------------------------------------------------------ */

enum {
    CORRUPT_FLIP_PAYLOAD,
    CORRUPT_FLIP_KEY,
    CORRUPT_TRUNCATE_HALF,
    CORRUPT_TRUNCATE_HEADER,
    CORRUPT_EMPTY,
    CORRUPT_GARBAGE,
    CORRUPT_FOREIGN_MAGIC,
    CORRUPT_VERSION,
    CORRUPT_LENGTH,
    CORRUPT_APPENDED,
    CORRUPT_DRIVER_REFUSES, /* valid framing and checksum, junk binary */
    CORRUPT_CASES
};
static const char *const corrupt_names[CORRUPT_CASES] = {
    "payload byte flipped", "key byte flipped",      "truncated to half", "truncated inside the header",
    "empty file",           "garbage of same size",  "foreign magic",     "format version 2",
    "payload length + 1",   "bytes appended",        "binary the driver refuses"};

static void put_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

START_TEST(test_corrupt_entry)
{
    const int kind = _i;
    char label[96];
    snprintf(label, sizeof label, "corrupt entry: %s", corrupt_names[kind]);
    char name[32], path[PATH_MAX + 64];
    uint64_t bytes = 0;
    build_and_name(&CASE_A, name, sizeof name, &bytes, "warming");
    entry_file(name, path, sizeof path);
    listing before;
    list_entries(&before);
    size_t key_len = 0;
    const char *listed = listed_key(&before, name, &key_len);
    char *original_key = tc_memdup(listed, key_len);
    listing_free(&before);
    size_t len;
    unsigned char *data = read_all(path, &len);
    ck_assert_msg(len == bytes && len > ENTRY_HEADER_BYTES + 100, "entry of %zu bytes", len);
    size_t new_len = len;
    switch (kind) {
    case CORRUPT_FLIP_PAYLOAD:
        data[len - 7] ^= 0x10;
        break;
    case CORRUPT_FLIP_KEY:
        data[ENTRY_HEADER_BYTES + 40] ^= 0x01;
        break;
    case CORRUPT_TRUNCATE_HALF:
        new_len = len / 2;
        break;
    case CORRUPT_TRUNCATE_HEADER:
        new_len = 20;
        break;
    case CORRUPT_EMPTY:
        new_len = 0;
        break;
    case CORRUPT_GARBAGE:
        tc_fill_random(data, len, 77);
        break;
    case CORRUPT_FOREIGN_MAGIC:
        memcpy(data, "CLOPSPAK", 8);
        break;
    case CORRUPT_VERSION:
        put_le(data + 8, 2, 4);
        break;
    case CORRUPT_LENGTH: {
        uint64_t plen = 0;
        for (int i = 7; i >= 0; i--)
            plen = plen << 8 | data[16 + i];
        put_le(data + 16, plen + 1, 8);
        break;
    }
    case CORRUPT_APPENDED:
        data = realloc(data, len + 5);
        ck_assert(data != NULL);
        memcpy(data + len, "extra", 5);
        new_len = len + 5;
        break;
    case CORRUPT_DRIVER_REFUSES: {
        /* The same key with a junk payload, stored the way clops stores. */
        listing l;
        list_entries(&l);
        size_t klen;
        const char *key = listed_key(&l, name, &klen);
        unsigned char junk[4096];
        tc_fill_random(junk, sizeof junk, 99);
        clops_cache_config cfg;
        clops_cache_config_from_env(&cfg);
        clops_cache_store(&cfg, key, klen, junk, sizeof junk);
        listing_free(&l);
        free(data);
        data = read_all(path, &len);
        new_len = len;
        ck_assert_msg(len == ENTRY_HEADER_BYTES + klen + sizeof junk, "crafted entry of %zu bytes", len);
        break;
    }
    }
    if (kind != CORRUPT_DRIVER_REFUSES)
        write_all(path, data, new_len);
    free(data);
    if (kind == CORRUPT_DRIVER_REFUSES) {
        listing l;
        list_entries(&l);
        ck_assert_msg(l.n == 1 && l.invalid == 0, "the crafted entry does not parse");
        listing_free(&l);
    }

    /* the bad entry is a miss: compiled again, correct, and replaced by a valid one */
    clops_context *c = new_ctx();
    check_case(c, &CASE_A, CLOPS_BACKEND_OPENCL, "compiled", label);
    drop_ctx(c);
    expect_clean_cache(1, label);
    ck_assert_msg(exists(path), "%s: the entry %s was not rewritten", label, name);
    /* the rewritten entry holds the original's key (its size may differ: PoCL's
     * binary carries the work-group variants compiled so far) */
    listing after;
    list_entries(&after);
    size_t after_len;
    const char *after_key = listed_key(&after, name, &after_len);
    ck_assert_msg(after_len == key_len && memcmp(after_key, original_key, key_len) == 0,
                  "%s: the rewritten entry's key differs from the original's", label);
    listing_free(&after);
    free(original_key);
    c = new_ctx();
    check_case(c, &CASE_A, CLOPS_BACKEND_OPENCL, "disk cache", "after the rewrite");
}
END_TEST

/* A directory where an entry file should be: never read, never replaced, no temporary left. */
START_TEST(test_entry_is_directory)
{
    char name[32], path[PATH_MAX + 64];
    build_and_name(&CASE_A, name, sizeof name, NULL, "warming");
    entry_file(name, path, sizeof path);
    ck_assert(unlink(path) == 0);
    ck_assert(mkdir(path, 0700) == 0);
    for (int i = 0; i < 2; i++) {
        clops_context *c = new_ctx();
        check_case(c, &CASE_A, CLOPS_BACKEND_OPENCL, "compiled", "entry path is a directory");
        drop_ctx(c);
    }
    dir_scan s = scan_dir();
    ck_assert_msg(s.temps == 0, "%d temporary files left", s.temps);
    struct stat st;
    ck_assert(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
}
END_TEST

/* ---- stale keys ---------------------------------------------------------------------------------------- */

/* A valid entry of program A under program B's file name (what a hash collision
 * or a stale file gives): a miss for B, which is rebuilt; A is not disturbed. */
START_TEST(test_stale_key_other_program)
{
    char a[32], b[32], pa[PATH_MAX + 64], pb[PATH_MAX + 64];
    build_and_name(&CASE_A, a, sizeof a, NULL, "warming A");
    build_and_name(&CASE_B, b, sizeof b, NULL, "warming B");
    entry_file(a, pa, sizeof pa);
    entry_file(b, pb, sizeof pb);
    size_t len;
    unsigned char *data = read_all(pa, &len);
    write_all(pb, data, len);
    free(data);
    listing l;
    list_entries(&l);
    ck_assert_msg(l.n == 2 && l.invalid == 0 && l.misnamed == 1, "crafted directory: %zu entries, %zu invalid, "
                  "%zu misnamed", l.n, l.invalid, l.misnamed);
    listing_free(&l);

    clops_context *c = new_ctx();
    check_case(c, &CASE_B, CLOPS_BACKEND_OPENCL, "compiled", "B's file holds A's entry");
    check_case(c, &CASE_A, CLOPS_BACKEND_OPENCL, "disk cache", "A untouched");
    expect_clean_cache(2, "after rebuilding B"); /* B's file is B's again */
    drop_ctx(c);
    c = new_ctx();
    check_case(c, &CASE_B, CLOPS_BACKEND_OPENCL, "disk cache", "B rebuilt");
}
END_TEST

/* A valid entry under the right file name whose key differs only in the clops
 * version line: framed by hand (header, key, payload, FNV-1a checksum). */
START_TEST(test_stale_key_version)
{
    char a[32], pa[PATH_MAX + 64];
    build_and_name(&CASE_A, a, sizeof a, NULL, "warming");
    entry_file(a, pa, sizeof pa);
    size_t len;
    unsigned char *data = read_all(pa, &len);
    uint32_t klen = 0;
    for (int i = 3; i >= 0; i--)
        klen = klen << 8 | data[12 + i];
    char *key = (char *)data + ENTRY_HEADER_BYTES;
    char *ver = memmem(key, klen, "\nclops " CLOPS_VERSION_STRING "\n", strlen(CLOPS_VERSION_STRING) + 8);
    ck_assert_msg(ver != NULL, "the key has no \"clops %s\" line", CLOPS_VERSION_STRING);
    ver[7] = ver[7] == '9' ? '8' : '9'; /* another version of the same length */
    const size_t plen = len - ENTRY_HEADER_BYTES - klen;
    const uint64_t sum = clops_fnv1a(clops_fnv1a(FNV_SEED, key, klen), key + klen, plen);
    put_le(data + 24, sum, 8);
    write_all(pa, data, len);
    free(data);
    listing l;
    list_entries(&l);
    ck_assert_msg(l.n == 1 && l.invalid == 0 && l.misnamed == 1, "crafted entry: %zu entries, %zu invalid, %zu "
                  "misnamed (want 1, 0, 1)", l.n, l.invalid, l.misnamed);
    listing_free(&l);

    clops_context *c = new_ctx();
    check_case(c, &CASE_A, CLOPS_BACKEND_OPENCL, "compiled", "stale version in the key");
    expect_clean_cache(1, "stale entry replaced");
}
END_TEST

/* CLOPS_DISABLE is part of the device identity: an entry built without it is
 * not used with it, and both entries live side by side. */
START_TEST(test_stale_key_identity)
{
    char a[32];
    build_and_name(&CASE_A, a, sizeof a, NULL, "warming");
    setenv("CLOPS_DISABLE", "fp64", 1);
    clops_context *c = new_ctx();
    check_case(c, &CASE_A, CLOPS_BACKEND_OPENCL, "compiled", "CLOPS_DISABLE=fp64");
    drop_ctx(c);
    expect_clean_cache(2, "two identities");
    listing l;
    list_entries(&l);
    int with_fp64 = 0;
    for (size_t i = 0; i < l.n; i++)
        with_fp64 += memmem(l.key[i], l.key_len[i], "disabled: fp64\n", 15) != NULL;
    ck_assert_msg(with_fp64 == 1, "%d entries with \"disabled: fp64\" in the key, want 1", with_fp64);
    listing_free(&l);
    c = new_ctx();
    check_case(c, &CASE_A, CLOPS_BACKEND_OPENCL, "disk cache", "CLOPS_DISABLE=fp64, warm");
    drop_ctx(c);
    unsetenv("CLOPS_DISABLE");
    c = new_ctx();
    check_case(c, &CASE_A, CLOPS_BACKEND_OPENCL, "disk cache", "no CLOPS_DISABLE, warm");
}
END_TEST

/* ---- concurrent writers ----------------------------------------------------------------------------- */

static const case_def *const writer_cases[] = {&CASE_A, &CASE_B, &CASE_D};
#define NUM_WRITER_CASES 3

/* A child process: a fresh context, then (after the barrier) the same programs
 * as every other child; exit 0 if every result is right. */
static int writer_child(int ready_fd, int barrier_fd)
{
    clops_context *ctx = NULL;
    clops_status st = clops_context_create(&ctx);
    if (st != CLOPS_SUCCESS || clops_context_backend(ctx) != CLOPS_BACKEND_OPENCL) {
        fprintf(stderr, "writer %d: clops_context_create: %s\n", (int)getpid(), clops_status_name(st));
        return 2;
    }
    char c = 1;
    if (write(ready_fd, &c, 1) != 1)
        return 3;
    close(ready_fd);
    while (read(barrier_fd, &c, 1) > 0) {
    }
    int bad = 0;
    for (int i = 0; i < NUM_WRITER_CASES; i++) {
        prepared p;
        if (prepare(&p, writer_cases[i]) != 0)
            return 4;
        clops_operator *op = NULL;
        st = clops_operator_create(ctx, &p.desc, &op);
        clops_operator_info info;
        if (st == CLOPS_SUCCESS)
            st = clops_operator_get_info(op, &info);
        if (st == CLOPS_SUCCESS && (info.backend != CLOPS_BACKEND_OPENCL ||
                                    (strcmp(info.program_origin, "compiled") != 0 &&
                                     strcmp(info.program_origin, "disk cache") != 0))) {
            fprintf(stderr, "writer %d: %s: backend %d, origin \"%s\"\n", (int)getpid(), p.def->name,
                    (int)info.backend, info.program_origin);
            bad = 1;
        }
        void *out = malloc(p.bufs.out_bytes);
        if (st == CLOPS_SUCCESS && out) {
            memcpy(out, p.sentinel, p.bufs.out_bytes);
            clops_host_buffers hb = {p.in, p.bufs.in_bytes, p.idx, p.bufs.idx_bytes, out, p.bufs.out_bytes};
            st = clops_operator_execute_host(op, &hb);
            if (st == CLOPS_SUCCESS && memcmp(out, p.want, p.bufs.out_bytes) != 0) {
                fprintf(stderr, "writer %d: %s: wrong result\n", (int)getpid(), p.def->name);
                bad = 1;
            }
        }
        if (st != CLOPS_SUCCESS) {
            fprintf(stderr, "writer %d: %s: %s (%s)\n", (int)getpid(), p.def->name, clops_status_name(st),
                    clops_last_error_message());
            bad = 1;
        }
        free(out);
        clops_operator_free(op);
        release(&p);
    }
    clops_context_free(ctx);
    return bad;
}

START_TEST(test_concurrent_writers)
{
    int ready[2], barrier[2];
    ck_assert(pipe(ready) == 0 && pipe(barrier) == 0);
    pid_t pids[WRITERS];
    fflush(stdout);
    fflush(stderr);
    for (int i = 0; i < WRITERS; i++) {
        pids[i] = fork();
        ck_assert_msg(pids[i] >= 0, "fork: %s", strerror(errno));
        if (pids[i] == 0) {
            close(ready[0]);
            close(barrier[1]);
            char rfd[16], bfd[16];
            snprintf(rfd, sizeof rfd, "%d", ready[1]);
            snprintf(bfd, sizeof bfd, "%d", barrier[0]);
            execl("/proc/self/exe", "test_cache", "--cache-writer", rfd, bfd, (char *)NULL);
            _exit(127);
        }
    }
    close(ready[1]);
    close(barrier[0]);
    int n_ready = 0;
    char c;
    while (n_ready < WRITERS && read(ready[0], &c, 1) == 1)
        n_ready++;
    close(barrier[1]); /* every child starts building now */
    close(ready[0]);
    int failed = 0;
    for (int i = 0; i < WRITERS; i++) {
        int status = 0;
        ck_assert(waitpid(pids[i], &status, 0) == pids[i]);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "writer %d ended with status 0x%x\n", (int)pids[i], status);
            failed++;
        }
    }
    ck_assert_msg(n_ready == WRITERS, "only %d of %d writers got a context", n_ready, WRITERS);
    ck_assert_msg(failed == 0, "%d of %d concurrent writers failed (see stderr)", failed, WRITERS);
    expect_clean_cache(NUM_WRITER_CASES, "after concurrent writers");
    clops_context *ctx = new_ctx();
    for (int i = 0; i < NUM_WRITER_CASES; i++)
        check_case(ctx, writer_cases[i], CLOPS_BACKEND_OPENCL, "disk cache", "after concurrent writers");
}
END_TEST

/* ---- unusable directories and modes ------------------------------------------------------------------ */

static void expect_unusable_listing(const char *label)
{
    listing l;
    memset(&l, 0, sizeof l);
    clops_status st = clops_cache_list_entries(list_cb, &l, NULL);
    ck_assert_msg(st == CLOPS_ERROR_CACHE_UNAVAILABLE, "%s: clops_cache_list_entries gave %s, want "
                  "CLOPS_ERROR_CACHE_UNAVAILABLE", label, clops_status_name(st));
    size_t removed = 99;
    st = clops_cache_clear_all(&removed);
    ck_assert_msg(st == CLOPS_ERROR_CACHE_UNAVAILABLE, "%s: clops_cache_clear_all gave %s", label,
                  clops_status_name(st));
    st = clops_cache_prune(&removed);
    ck_assert_msg(st == CLOPS_ERROR_CACHE_UNAVAILABLE, "%s: clops_cache_prune gave %s", label, clops_status_name(st));
}

START_TEST(test_dir_under_regular_file)
{
    char file[PATH_MAX + 16], dir[PATH_MAX + 32];
    snprintf(file, sizeof file, "%s/file", g_root);
    write_all(file, "not a directory\n", 16);
    snprintf(dir, sizeof dir, "%s/cache", file);
    setenv("CLOPS_CACHE_DIR", dir, 1);
    clops_context *c = new_ctx();
    const char *status = clops_context_cache_status(c);
    ck_assert_msg(strncmp(status, "unavailable", 11) == 0 && strstr(status, strerror(ENOTDIR)),
                  "cache status \"%s\", want \"unavailable ... %s\"", status, strerror(ENOTDIR));
    char buf[PATH_MAX + 256];
    ck_assert_str_eq(clops_cache_status(buf, sizeof buf), status);
    check_case(c, &CASE_A, CLOPS_BACKEND_OPENCL, "compiled", "unavailable cache");
    check_case(c, &CASE_A, CLOPS_BACKEND_OPENCL, "in-process", "unavailable cache, same context");
    check_case(c, &CASE_D, CLOPS_BACKEND_OPENCL, "compiled", "unavailable cache");
    clops_context *c2 = new_ctx();
    check_case(c2, &CASE_A, CLOPS_BACKEND_OPENCL, "compiled", "unavailable cache, second context");
    expect_unusable_listing("unavailable cache");
    size_t len;
    unsigned char *data = read_all(file, &len);
    ck_assert_msg(len == 16 && memcmp(data, "not a directory\n", 16) == 0, "the regular file was changed");
    free(data);
}
END_TEST

/* A CLOPS_CACHE_DIR that is itself a regular file (executable, so that even
 * root's access(X_OK) passes): not a usable directory. */
START_TEST(test_dir_is_regular_file)
{
    char file[PATH_MAX + 16];
    snprintf(file, sizeof file, "%s/file", g_root);
    write_all(file, "x", 1);
    ck_assert(chmod(file, 0755) == 0);
    setenv("CLOPS_CACHE_DIR", file, 1);
    clops_context *c = new_ctx();
    const char *status = clops_context_cache_status(c);
    check_case(c, &CASE_A, CLOPS_BACKEND_OPENCL, "compiled", "cache dir is a file");
    ck_assert_msg(strncmp(status, "unavailable", 11) == 0, "cache status \"%s\" for a regular file, want "
                  "\"unavailable ...\"", status);
}
END_TEST

START_TEST(test_missing_dir_created)
{
    char dir[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s/a/b/c", g_root);
    setenv("CLOPS_CACHE_DIR", dir, 1);
    clops_context *c = new_ctx();
    struct stat st;
    ck_assert_msg(stat(dir, &st) == 0 && S_ISDIR(st.st_mode), "%s was not created", dir);
    ck_assert_msg(strstr(clops_context_cache_status(c), "read-write") != NULL, "cache status \"%s\"",
                  clops_context_cache_status(c));
    check_case(c, &CASE_A, CLOPS_BACKEND_OPENCL, "compiled", "created directory");
    snprintf(g_dir, sizeof g_dir, "%s", dir);
    expect_clean_cache(1, "created directory");
}
END_TEST

START_TEST(test_cache_off)
{
    setenv("CLOPS_CACHE", "off", 1);
    clops_context *c = new_ctx();
    const char *status = clops_context_cache_status(c);
    ck_assert_msg(strncmp(status, "off", 3) == 0, "cache status \"%s\", want \"off ...\"", status);
    check_case(c, &CASE_A, CLOPS_BACKEND_OPENCL, "compiled", "CLOPS_CACHE=off");
    check_case(c, &CASE_A, CLOPS_BACKEND_OPENCL, "in-process", "CLOPS_CACHE=off, same context");
    clops_context *c2 = new_ctx();
    check_case(c2, &CASE_A, CLOPS_BACKEND_OPENCL, "compiled", "CLOPS_CACHE=off, second context");
    ck_assert_msg(!exists(g_dir), "CLOPS_CACHE=off created %s", g_dir);
    expect_unusable_listing("CLOPS_CACHE=off");
    char pack[PATH_MAX + 16];
    snprintf(pack, sizeof pack, "%s/pack", g_root);
    size_t n = 0;
    ck_assert_int_eq(clops_cache_export_pack(pack, &n), CLOPS_ERROR_CACHE_UNAVAILABLE);
    ck_assert_int_eq(clops_cache_import_pack(pack, &n), CLOPS_ERROR_CACHE_UNAVAILABLE);
    ck_assert_msg(!exists(pack), "export with the cache off wrote %s", pack);

    /* the warm directory is ignored while off */
    unsetenv("CLOPS_CACHE");
    clops_context *c3 = new_ctx();
    check_case(c3, &CASE_A, CLOPS_BACKEND_OPENCL, "compiled", "cache on");
    drop_ctx(c3);
    setenv("CLOPS_CACHE", "off", 1);
    c3 = new_ctx();
    check_case(c3, &CASE_A, CLOPS_BACKEND_OPENCL, "compiled", "CLOPS_CACHE=off, warm directory");
}
END_TEST

START_TEST(test_cache_read_only)
{
    char a[32], pa[PATH_MAX + 64];
    build_and_name(&CASE_A, a, sizeof a, NULL, "warming");
    entry_file(a, pa, sizeof pa);
    age_file(pa, 5000);
    const struct timespec before = mtime_of(pa);

    setenv("CLOPS_CACHE", "ro", 1);
    clops_context *c = new_ctx();
    const char *status = clops_context_cache_status(c);
    ck_assert_msg(strstr(status, g_dir) && strstr(status, "read-only"), "cache status \"%s\", want %s (read-only)",
                  status, g_dir);
    check_case(c, &CASE_A, CLOPS_BACKEND_OPENCL, "disk cache", "CLOPS_CACHE=ro, warm");
    check_case(c, &CASE_B, CLOPS_BACKEND_OPENCL, "compiled", "CLOPS_CACHE=ro, cold");
    drop_ctx(c);
    expect_clean_cache(1, "CLOPS_CACHE=ro wrote nothing");
    const struct timespec after = mtime_of(pa);
    ck_assert_msg(after.tv_sec == before.tv_sec && after.tv_nsec == before.tv_nsec,
                  "CLOPS_CACHE=ro changed the entry's last-used time");
    c = new_ctx();
    check_case(c, &CASE_B, CLOPS_BACKEND_OPENCL, "compiled", "CLOPS_CACHE=ro, still cold");
    drop_ctx(c);

    /* read-only never removes, even a bad entry */
    write_all(pa, "CLOPSBIN", 8);
    c = new_ctx();
    check_case(c, &CASE_A, CLOPS_BACKEND_OPENCL, "compiled", "CLOPS_CACHE=ro, corrupt entry");
    drop_ctx(c);
    struct stat st;
    ck_assert_msg(stat(pa, &st) == 0 && st.st_size == 8, "CLOPS_CACHE=ro removed or rewrote a bad entry");

    /* maintenance that writes is refused; listing works */
    size_t removed = 99, n = 0;
    ck_assert_int_eq(clops_cache_clear_all(&removed), CLOPS_ERROR_CACHE_UNAVAILABLE);
    ck_assert_int_eq(clops_cache_prune(&removed), CLOPS_ERROR_CACHE_UNAVAILABLE);
    char pack[PATH_MAX + 16];
    snprintf(pack, sizeof pack, "%s/pack", g_root);
    ck_assert_int_eq(clops_cache_import_pack(pack, &n), CLOPS_ERROR_CACHE_UNAVAILABLE);
    listing l;
    list_entries(&l);
    ck_assert_msg(l.n == 1 && l.invalid == 1, "ro listing: %zu entries, %zu invalid (want 1, 1)", l.n, l.invalid);
    listing_free(&l);

    /* read-only on a missing directory: unavailable, and nothing created */
    char dir[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s/missing", g_root);
    setenv("CLOPS_CACHE_DIR", dir, 1);
    c = new_ctx();
    ck_assert_msg(strncmp(clops_context_cache_status(c), "unavailable", 11) == 0, "ro on a missing directory: "
                  "status \"%s\"", clops_context_cache_status(c));
    check_case(c, &CASE_A, CLOPS_BACKEND_OPENCL, "compiled", "CLOPS_CACHE=ro, missing directory");
    ck_assert_msg(!exists(dir), "CLOPS_CACHE=ro created %s", dir);
}
END_TEST

/* ---- size bound and LRU eviction ---------------------------------------------------------------------- */

static void set_max_size(uint64_t bytes)
{
    char v[32];
    if (bytes % 1024 == 0)
        snprintf(v, sizeof v, "%lluK", (unsigned long long)(bytes / 1024));
    else
        snprintf(v, sizeof v, "%llu", (unsigned long long)bytes);
    setenv("CLOPS_CACHE_MAX_SIZE", v, 1);
}

static void expect_only(const char *const names[], int n, const char *label)
{
    dir_scan s = scan_dir();
    char have[256] = "";
    for (int i = 0; i < s.entries && i < 8; i++)
        snprintf(have + strlen(have), sizeof have - strlen(have), " %s (%llu bytes)", s.entry[i],
                 (unsigned long long)s.entry_bytes[i]);
    ck_assert_msg(s.entries == n && s.temps == 0, "%s: %d entries (%s) and %d temporary files, want %d and 0", label,
                  s.entries, have, s.temps, n);
    for (int i = 0; i < n; i++)
        ck_assert_msg(scan_has(&s, names[i]), "%s: entry %s is missing", label, names[i]);
}

/* An entry of known size, stored the way a build stores one (clops_cache_store:
 * write, then evict past the bound); returns its file name and size on disk. */
static uint64_t store_sized(const char *tag, size_t payload_bytes, char *name, size_t size)
{
    char key[64];
    const int klen = snprintf(key, sizeof key, "clops-test eviction entry %s", tag);
    unsigned char *payload = malloc(payload_bytes);
    ck_assert(payload != NULL);
    tc_fill_random(payload, payload_bytes, (unsigned)payload_bytes);
    clops_cache_config cfg;
    clops_cache_config_from_env(&cfg);
    clops_cache_store(&cfg, key, (size_t)klen, payload, payload_bytes);
    free(payload);
    snprintf(name, size, "%016llx.bin", (unsigned long long)clops_fnv1a(FNV_SEED, key, (size_t)klen));
    char path[PATH_MAX + 64];
    entry_file(name, path, sizeof path);
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* A disk-cache hit on a stored entry (what a new context's build does). */
static void load_sized(const char *tag)
{
    char key[64];
    const int klen = snprintf(key, sizeof key, "clops-test eviction entry %s", tag);
    clops_cache_config cfg;
    clops_cache_config_from_env(&cfg);
    unsigned char *payload = NULL;
    size_t len = 0;
    ck_assert_msg(clops_cache_load(&cfg, key, (size_t)klen, &payload, &len), "entry %s: a miss", tag);
    free(payload);
}

/* The least-recently-used bound, on entries whose sizes the test chooses
 * (a device binary's size changes with what the driver has compiled so far). */
START_TEST(test_eviction)
{
    enum { KB = 1024 };
    char a[32], b[32], c[32], pa[PATH_MAX + 64], pb[PATH_MAX + 64];
    /* sizes: any one fits in 100 KiB, no two do; any two fit in 140 KiB, three do not */
    set_max_size(100 * KB);
    const uint64_t sa = store_sized("A", 50 * KB, a, sizeof a);
    entry_file(a, pa, sizeof pa);
    ck_assert_msg(sa > 50 * KB && sa < 51 * KB, "entry A has %llu bytes", (unsigned long long)sa);
    expect_only((const char *const[]){a}, 1, "bound of one entry, after A");
    age_file(pa, 3000);
    store_sized("B", 60 * KB, b, sizeof b);
    entry_file(b, pb, sizeof pb);
    expect_only((const char *const[]){b}, 1, "bound of one entry, after B");
    age_file(pb, 2000);
    store_sized("C", 70 * KB, c, sizeof c);
    expect_only((const char *const[]){c}, 1, "bound of one entry, after C");
    size_t removed = 0;
    ck_assert_int_eq(clops_cache_clear_all(&removed), CLOPS_SUCCESS);
    ck_assert_msg(removed == 1, "clops_cache_clear_all removed %zu, want 1", removed);

    /* room for two: a hit on A makes B the least recently used */
    set_max_size(140 * KB);
    store_sized("A", 50 * KB, a, sizeof a);
    age_file(pa, 3000);
    store_sized("B", 60 * KB, b, sizeof b);
    age_file(pb, 2000);
    expect_only((const char *const[]){a, b}, 2, "bound of two, A and B");
    load_sized("A");
    ck_assert_msg(mtime_of(pa).tv_sec > mtime_of(pb).tv_sec, "a disk-cache hit did not refresh A's last-used time");
    store_sized("C", 70 * KB, c, sizeof c);
    expect_only((const char *const[]){a, c}, 2, "bound of two: B, the least recently used, evicted");
    load_sized("A");
    load_sized("C");

    /* without a hit: the oldest goes first */
    ck_assert_int_eq(clops_cache_clear_all(&removed), CLOPS_SUCCESS);
    store_sized("A", 50 * KB, a, sizeof a);
    age_file(pa, 3000);
    store_sized("B", 60 * KB, b, sizeof b);
    age_file(pb, 2000);
    store_sized("C", 70 * KB, c, sizeof c);
    expect_only((const char *const[]){b, c}, 2, "control: A, the oldest, evicted");
    ck_assert_int_eq(clops_cache_clear_all(&removed), CLOPS_SUCCESS);

    /* A real build obeys the bound: a 16 MiB entry fills it, so storing the
     * program evicts that older entry and keeps the program (any binary up to
     * 16 MiB). */
    char big[32], pbig[PATH_MAX + 64];
    set_max_size(16 * KB * KB + 4 * KB);
    store_sized("big", 16 * KB * KB, big, sizeof big);
    entry_file(big, pbig, sizeof pbig);
    expect_only((const char *const[]){big}, 1, "the 16 MiB entry fits the bound");
    age_file(pbig, 3000);
    char built[32];
    dir_scan before = scan_dir();
    clops_context *ctx = new_ctx();
    check_case(ctx, &CASE_A, CLOPS_BACKEND_OPENCL, "compiled", "a build under the bound");
    drop_ctx(ctx);
    dir_scan after = scan_dir();
    ck_assert_msg(!scan_has(&after, big), "the build did not evict the older entry");
    new_entry(&before, &after, built, sizeof built, NULL);
    expect_clean_cache(1, "a build under the bound");
    ctx = new_ctx();
    check_case(ctx, &CASE_A, CLOPS_BACKEND_OPENCL, "disk cache", "the built entry was kept");
    drop_ctx(ctx);
}
END_TEST

START_TEST(test_prune_and_clear_counts)
{
    char a[32], b[32], c[32], pa[PATH_MAX + 64], pb[PATH_MAX + 64];
    uint64_t sa, sb, sc;
    build_and_name(&CASE_A, a, sizeof a, &sa, "A");
    build_and_name(&CASE_B, b, sizeof b, &sb, "B");
    build_and_name(&CASE_C, c, sizeof c, &sc, "C");
    entry_file(a, pa, sizeof pa);
    entry_file(b, pb, sizeof pb);
    age_file(pa, 3000);
    age_file(pb, 2000);
    size_t removed = 99;
    ck_assert_int_eq(clops_cache_prune(&removed), CLOPS_SUCCESS); /* default bound: 256M */
    ck_assert_msg(removed == 0, "prune under the bound removed %zu", removed);
    expect_clean_cache(3, "prune under the bound");

    set_max_size(sc + 100);
    ck_assert_int_eq(clops_cache_prune(&removed), CLOPS_SUCCESS);
    ck_assert_msg(removed == 2, "prune to one entry removed %zu, want 2", removed);
    expect_only((const char *const[]){c}, 1, "pruned to the most recently used");
    ck_assert_int_eq(clops_cache_prune(&removed), CLOPS_SUCCESS);
    ck_assert_msg(removed == 0, "second prune removed %zu, want 0", removed);

    /* clear removes entries only */
    char other[PATH_MAX + 64], tmp_like[PATH_MAX + 64];
    snprintf(other, sizeof other, "%s/notes.txt", g_dir);
    snprintf(tmp_like, sizeof tmp_like, "%s/0123456789abcdef.bak", g_dir);
    write_all(other, "keep", 4);
    write_all(tmp_like, "keep", 4);
    ck_assert_int_eq(clops_cache_clear_all(&removed), CLOPS_SUCCESS);
    ck_assert_msg(removed == 1, "clops_cache_clear_all removed %zu, want 1", removed);
    expect_clean_cache(0, "cleared");
    ck_assert_msg(exists(other) && exists(tmp_like), "clops_cache_clear_all removed a file that is not an entry");
    ck_assert_int_eq(clops_cache_clear_all(&removed), CLOPS_SUCCESS);
    ck_assert_msg(removed == 0, "clearing an empty cache removed %zu", removed);
    ck_assert_int_eq(clops_cache_clear_all(NULL), CLOPS_SUCCESS);
    ck_assert_int_eq(clops_cache_prune(NULL), CLOPS_SUCCESS);
    clops_context *ctx = new_ctx();
    check_case(ctx, &CASE_A, CLOPS_BACKEND_OPENCL, "compiled", "after clear");
}
END_TEST

/* ---- export and import ----------------------------------------------------------------------------------- */

static void pack_path(char *out, size_t size)
{
    snprintf(out, size, "%s/kernels.pack", g_root);
}

/* Warms A and D, exports them, and clears the directory. */
static void make_pack(char names[2][32])
{
    build_and_name(&CASE_A, names[0], sizeof names[0], NULL, "pack: A");
    build_and_name(&CASE_D, names[1], sizeof names[1], NULL, "pack: D");
    char pack[PATH_MAX + 32];
    pack_path(pack, sizeof pack);
    size_t n = 0;
    clops_status st = clops_cache_export_pack(pack, &n);
    ck_assert_msg(st == CLOPS_SUCCESS && n == 2, "clops_cache_export_pack: %s (%s), %zu entries, want 2",
                  clops_status_name(st), clops_last_error_message(), n);
    ck_assert_int_eq(clops_cache_clear_all(&n), CLOPS_SUCCESS);
    ck_assert_msg(n == 2, "clear removed %zu", n);
    expect_clean_cache(0, "cleared after export");
}

START_TEST(test_export_import)
{
    char names[2][32];
    make_pack(names);
    char pack[PATH_MAX + 32];
    pack_path(pack, sizeof pack);
    size_t n = 0;
    clops_status st = clops_cache_import_pack(pack, &n);
    ck_assert_msg(st == CLOPS_SUCCESS && n == 2, "clops_cache_import_pack: %s (%s), %zu entries, want 2",
                  clops_status_name(st), clops_last_error_message(), n);
    expect_only((const char *const[]){names[0], names[1]}, 2, "imported");
    expect_clean_cache(2, "imported");
    clops_context *ctx = new_ctx();
    check_case(ctx, &CASE_A, CLOPS_BACKEND_OPENCL, "disk cache", "imported A");
    check_case(ctx, &CASE_D, CLOPS_BACKEND_OPENCL, "disk cache", "imported D");
    drop_ctx(ctx);

    /* importing over existing entries replaces them with the same */
    st = clops_cache_import_pack(pack, &n);
    ck_assert_msg(st == CLOPS_SUCCESS && n == 2, "re-import: %s, %zu", clops_status_name(st), n);
    expect_clean_cache(2, "re-imported");

    /* an empty cache exports an empty pack, which imports as nothing */
    ck_assert_int_eq(clops_cache_clear_all(&n), CLOPS_SUCCESS);
    char empty[PATH_MAX + 32];
    snprintf(empty, sizeof empty, "%s/empty.pack", g_root);
    st = clops_cache_export_pack(empty, &n);
    ck_assert_msg(st == CLOPS_SUCCESS && n == 0, "empty export: %s, %zu", clops_status_name(st), n);
    st = clops_cache_import_pack(empty, &n);
    ck_assert_msg(st == CLOPS_SUCCESS && n == 0, "empty import: %s, %zu", clops_status_name(st), n);
    expect_clean_cache(0, "empty pack");

    /* export skips invalid entries */
    st = clops_cache_import_pack(pack, &n);
    ck_assert_int_eq(st, CLOPS_SUCCESS);
    char bad[PATH_MAX + 64];
    snprintf(bad, sizeof bad, "%s/00000000deadbeef.bin", g_dir);
    write_all(bad, "CLOPSBIN garbage", 16);
    char again[PATH_MAX + 32];
    snprintf(again, sizeof again, "%s/again.pack", g_root);
    st = clops_cache_export_pack(again, &n);
    ck_assert_msg(st == CLOPS_SUCCESS && n == 2, "export with an invalid entry: %s, %zu entries, want 2",
                  clops_status_name(st), n);

    ck_assert_int_eq(clops_cache_export_pack(NULL, &n), CLOPS_ERROR_NULL_ARGUMENT);
    ck_assert_int_eq(clops_cache_import_pack(NULL, &n), CLOPS_ERROR_NULL_ARGUMENT);
}
END_TEST

enum {
    PACK_TRUNCATED_SECOND,
    PACK_TRUNCATED_HEADER,
    PACK_GARBAGE,
    PACK_MAGIC,
    PACK_FLIP_SECOND,
    PACK_COUNT_PLUS_ONE,
    PACK_HUGE_LENGTH,
    PACK_EMPTY_FILE,
    PACK_MISSING,
    PACK_CASES
};
static const char *const pack_names[PACK_CASES] = {
    "truncated in the second entry", "truncated in the header", "garbage", "foreign magic",
    "byte flipped in the second entry", "count one too many", "entry length 2^40", "empty file", "missing file"};

START_TEST(test_bad_pack)
{
    const int kind = _i;
    char names[2][32];
    make_pack(names);
    char pack[PATH_MAX + 32];
    pack_path(pack, sizeof pack);
    size_t len;
    unsigned char *data = read_all(pack, &len);
    uint64_t len1 = 0;
    for (int i = 7; i >= 0; i--)
        len1 = len1 << 8 | data[16 + i];
    const size_t second = 16 + 8 + (size_t)len1 + 8; /* the second entry's first byte */
    ck_assert_msg(memcmp(data, "CLOPSPAK", 8) == 0 && second < len, "unexpected pack layout");
    size_t new_len = len;
    switch (kind) {
    case PACK_TRUNCATED_SECOND:
        new_len = second + (len - second) / 2;
        break;
    case PACK_TRUNCATED_HEADER:
        new_len = 12;
        break;
    case PACK_GARBAGE:
        tc_fill_random(data, len, 5);
        break;
    case PACK_MAGIC:
        memcpy(data, "CLOPSBIN", 8);
        break;
    case PACK_FLIP_SECOND:
        data[len - 100] ^= 0x04;
        break;
    case PACK_COUNT_PLUS_ONE:
        put_le(data + 8, 3, 8);
        break;
    case PACK_HUGE_LENGTH:
        put_le(data + 16, 1ull << 40, 8);
        break;
    case PACK_EMPTY_FILE:
        new_len = 0;
        break;
    }
    if (kind == PACK_MISSING)
        ck_assert(unlink(pack) == 0);
    else
        write_all(pack, data, new_len);
    free(data);
    size_t n = 12345;
    clops_status st = clops_cache_import_pack(pack, &n);
    ck_assert_msg(st == CLOPS_ERROR_BAD_PACK, "import of a pack with %s: %s, want CLOPS_ERROR_BAD_PACK",
                  pack_names[kind], clops_status_name(st));
    ck_assert_msg(n == 12345, "a failed import wrote the count %zu", n);
    /* nothing of a rejected pack is installed, not even its good entries */
    expect_clean_cache(0, pack_names[kind]);
    clops_context *ctx = new_ctx();
    check_case(ctx, &CASE_A, CLOPS_BACKEND_OPENCL, "compiled", "after a rejected pack");
}
END_TEST

/* ---- no compiler ------------------------------------------------------------------------------------------- */

START_TEST(test_no_compiler_empty_cache)
{
    setenv("CLOPS_DISABLE", "compiler", 1);
    clops_context *ctx = new_ctx();
    const case_def *cases[] = {&CASE_A, &CASE_B, &CASE_D};
    for (int i = 0; i < 3; i++) {
        prepared p;
        prepare_ok(&p, cases[i]);
        clops_operator_info info;
        clops_operator *op = create_op(ctx, &p, &info, "no compiler, empty cache");
        expect_path(&p, &info, CLOPS_BACKEND_HOST, NULL, "no compiler, empty cache");
        ck_assert_msg(strstr(info.fallback_reason, "compiler") != NULL, "fallback_reason \"%s\" does not mention "
                      "the compiler", info.fallback_reason);
        run_and_compare(ctx, op, &p, "no compiler, host fallback");
        clops_operator_free(op);
        release(&p);
    }
    expect_clean_cache(0, "no compiler wrote nothing");
}
END_TEST

/* An entry crafted for the no-compiler identity (a compiled entry whose key's
 * "disabled:" line is rewritten): loaded from disk, run on the device. */
START_TEST(test_no_compiler_crafted_entry)
{
    char a[32];
    build_and_name(&CASE_A, a, sizeof a, NULL, "warming");
    listing l;
    list_entries(&l);
    size_t klen;
    const char *key = listed_key(&l, a, &klen);
    const char *line = memmem(key, klen, "\ndisabled: \n", 12);
    ck_assert_msg(line != NULL, "the key has no empty \"disabled:\" line");
    const size_t head = (size_t)(line - key) + 11, nk = klen + strlen("compiler");
    char *k2 = tc_malloc(nk);
    memcpy(k2, key, head);
    memcpy(k2 + head, "compiler", 8);
    memcpy(k2 + head + 8, key + head, klen - head);
    char pa[PATH_MAX + 64];
    entry_file(a, pa, sizeof pa);
    size_t len;
    unsigned char *data = read_all(pa, &len);
    clops_cache_config cfg;
    clops_cache_config_from_env(&cfg);
    clops_cache_store(&cfg, k2, nk, data + ENTRY_HEADER_BYTES + klen, len - ENTRY_HEADER_BYTES - klen);
    free(data);
    free(k2);
    listing_free(&l);
    expect_clean_cache(2, "crafted entry stored");

    setenv("CLOPS_DISABLE", "compiler", 1);
    clops_context *ctx = new_ctx();
    check_case(ctx, &CASE_A, CLOPS_BACKEND_OPENCL, "disk cache", "no compiler, crafted entry");
    prepared p;
    prepare_ok(&p, &CASE_B);
    clops_operator_info info;
    clops_operator *op = create_op(ctx, &p, &info, "no compiler, other program");
    expect_path(&p, &info, CLOPS_BACKEND_HOST, NULL, "no compiler, other program");
    run_and_compare(ctx, op, &p, "no compiler, other program");
    clops_operator_free(op);
    release(&p);
}
END_TEST

/* The documented story: entries built where a compiler exists (directly, or
 * through a kernel pack) serve a device without one. */
START_TEST(test_no_compiler_warm_cache)
{
    const int via_pack = _i;
    if (via_pack) {
        char names[2][32], pack[PATH_MAX + 32];
        make_pack(names);
        pack_path(pack, sizeof pack);
        setenv("CLOPS_DISABLE", "compiler", 1);
        size_t n = 0;
        clops_status st = clops_cache_import_pack(pack, &n);
        ck_assert_msg(st == CLOPS_SUCCESS && n == 2, "import: %s, %zu", clops_status_name(st), n);
    } else {
        clops_context *ctx = new_ctx();
        check_case(ctx, &CASE_A, CLOPS_BACKEND_OPENCL, "compiled", "warming with a compiler");
        check_case(ctx, &CASE_D, CLOPS_BACKEND_OPENCL, "compiled", "warming with a compiler");
        drop_ctx(ctx);
        setenv("CLOPS_DISABLE", "compiler", 1);
    }
    const char *label = via_pack ? "no compiler, entries from an imported pack" : "no compiler, warm cache";
    clops_context *ctx = new_ctx();
    check_case(ctx, &CASE_A, CLOPS_BACKEND_OPENCL, "disk cache", label);
    check_case(ctx, &CASE_D, CLOPS_BACKEND_OPENCL, "disk cache", label);
}
END_TEST

/* ---- injected file-system faults ------------------------------------------------------------------------- */

static int g_calls;

static ssize_t write_enospc(int fd, const void *buf, size_t n)
{
    (void)fd, (void)buf, (void)n;
    errno = ENOSPC;
    return -1;
}

static ssize_t write_half_then_enospc(int fd, const void *buf, size_t n)
{
    if (g_calls++ == 0)
        return clops_cl_real.io_write(fd, buf, n > 1 ? n / 2 : n);
    errno = ENOSPC;
    return -1;
}

static ssize_t write_zero(int fd, const void *buf, size_t n)
{
    (void)fd, (void)buf, (void)n;
    return 0;
}

static int rename_enoent(const char *from, const char *to)
{
    (void)from, (void)to;
    errno = ENOENT;
    return -1;
}

static int fsync_eio(int fd)
{
    (void)fd;
    errno = EIO;
    return -1;
}

static int create_enospc(const char *p, mode_t m)
{
    (void)p, (void)m;
    errno = ENOSPC;
    return -1;
}

static int mkdir_eacces(const char *p, mode_t m)
{
    (void)p, (void)m;
    errno = EACCES;
    return -1;
}

/* The directory vanishes while an entry is being written. */
static ssize_t write_after_rmdir(int fd, const void *buf, size_t n)
{
    if (g_calls++ == 0)
        tc_rm_rf(g_dir);
    return clops_cl_real.io_write(fd, buf, n);
}

enum {
    FAULT_WRITE,
    FAULT_SHORT_WRITE,
    FAULT_WRITE_ZERO,
    FAULT_RENAME,
    FAULT_FSYNC,
    FAULT_MKSTEMP,
    FAULT_MKDIR,
    FAULT_VANISH,
    FAULT_CASES
};
static const char *const fault_names[FAULT_CASES] = {
    "write fails (ENOSPC)", "half written, then ENOSPC", "write returns 0", "rename fails (ENOENT)",
    "fsync fails (EIO)",    "creating the temporary file fails (ENOSPC)",    "mkdir fails (EACCES)", "directory removed mid-write"};

START_TEST(test_fault)
{
    const int kind = _i;
    g_calls = 0;
    switch (kind) {
    case FAULT_WRITE: clops_cl.io_write = write_enospc; break;
    case FAULT_SHORT_WRITE: clops_cl.io_write = write_half_then_enospc; break;
    case FAULT_WRITE_ZERO: clops_cl.io_write = write_zero; break;
    case FAULT_RENAME: clops_cl.io_rename = rename_enoent; break;
    case FAULT_FSYNC: clops_cl.io_fsync = fsync_eio; break;
    case FAULT_MKSTEMP: clops_cl.io_create = create_enospc; break;
    case FAULT_MKDIR: clops_cl.io_mkdir = mkdir_eacces; break;
    case FAULT_VANISH: clops_cl.io_write = write_after_rmdir; break;
    }
    const char *label = fault_names[(unsigned)kind % FAULT_CASES];
    clops_context *ctx = new_ctx();
    if (kind == FAULT_MKDIR)
        ck_assert_msg(strncmp(clops_context_cache_status(ctx), "unavailable", 11) == 0 &&
                          strstr(clops_context_cache_status(ctx), strerror(EACCES)),
                      "mkdir failing: cache status \"%s\"", clops_context_cache_status(ctx));
    else
        ck_assert_msg(strstr(clops_context_cache_status(ctx), "read-write") != NULL, "cache status \"%s\"",
                      clops_context_cache_status(ctx));
    check_case(ctx, &CASE_A, CLOPS_BACKEND_OPENCL, "compiled", label);
    check_case(ctx, &CASE_D, CLOPS_BACKEND_OPENCL, "compiled", label);
    check_case(ctx, &CASE_A, CLOPS_BACKEND_OPENCL, "in-process", label);
    if (kind == FAULT_SHORT_WRITE || kind == FAULT_VANISH)
        ck_assert_msg(g_calls > 0, "%s: the fault was never reached", label);
    dir_scan s = scan_dir();
    ck_assert_msg(s.entries == 0 && s.temps == 0, "%s: %d entries and %d temporary files left", label, s.entries,
                  s.temps);
    if (kind == FAULT_VANISH)
        ck_assert_msg(!s.present, "the removed directory came back");
    drop_ctx(ctx);

    /* the seam restored: the same programs compile (nothing was cached) and are stored */
    clops_cl = clops_cl_real;
    ctx = new_ctx();
    check_case(ctx, &CASE_A, CLOPS_BACKEND_OPENCL, "compiled", "after the fault");
    expect_clean_cache(1, "after the fault");
}
END_TEST

/* ---- tuning database ------------------------------------------------------------------------------------------ */

static void tune_file_path(const clops_context *ctx, char *out, size_t size)
{
    snprintf(out, size, "%s/tune-%016llx.txt", g_dir,
             (unsigned long long)clops_fnv1a(FNV_SEED, ctx->identity, strlen(ctx->identity)));
}

/* The case's operator: its local size, origin and build options. */
typedef struct op_choice {
    char origin[16];
    size_t local[3];
    char options[CLOPS_OPTIONS_MAX];
    char tune_key[CLOPS_OPTIONS_MAX];
} op_choice;

static op_choice choose(clops_context *ctx, const case_def *d, const char *label)
{
    prepared p;
    prepare_ok(&p, d);
    clops_operator_info info;
    clops_operator *op = create_op(ctx, &p, &info, label);
    expect_path(&p, &info, CLOPS_BACKEND_OPENCL, NULL, label);
    op_choice c;
    snprintf(c.origin, sizeof c.origin, "%s", info.local_size_origin);
    memcpy(c.local, info.local_size, sizeof c.local);
    snprintf(c.options, sizeof c.options, "%s", info.build_options);
    snprintf(c.tune_key, sizeof c.tune_key, "%s", op->tune_key);
    run_and_compare(ctx, op, &p, label);
    clops_operator_free(op);
    release(&p);
    return c;
}

static void expect_heuristic(const op_choice *got, const op_choice *base, const char *label)
{
    ck_assert_msg(strcmp(got->origin, "heuristic") == 0, "%s: local_size_origin \"%s\", want \"heuristic\"", label,
                  got->origin);
    ck_assert_msg(memcmp(got->local, base->local, sizeof got->local) == 0 && strcmp(got->options, base->options) == 0,
                  "%s: local %zu,%zu,%zu options \"%s\", want the untuned %zu,%zu,%zu \"%s\"", label, got->local[0],
                  got->local[1], got->local[2], got->options, base->local[0], base->local[1], base->local[2],
                  base->options);
}

static void expect_tuned(const op_choice *got, unsigned chunk, const size_t local[3], const char *label)
{
    ck_assert_msg(strcmp(got->origin, "tuned") == 0, "%s: local_size_origin \"%s\", want \"tuned\"", label,
                  got->origin);
    ck_assert_msg(memcmp(got->local, local, 3 * sizeof local[0]) == 0, "%s: local %zu,%zu,%zu, want tuned %zu,%zu,%zu",
                  label, got->local[0], got->local[1], got->local[2], local[0], local[1], local[2]);
    char want[32];
    snprintf(want, sizeof want, "-DCHUNK=%uu", chunk);
    ck_assert_msg(strstr(got->options, want) != NULL, "%s: build options \"%s\" lack the tuned %s", label, got->options,
                  want);
}

typedef struct tune_log {
    unsigned calls, last_done, total;
    int order_ok;
    clops_tune_result r[16];
} tune_log;

static void tune_progress(void *user, const clops_tune_result *r, unsigned done, unsigned total)
{
    tune_log *log = user;
    if (done != log->calls + 1)
        log->order_ok = 0;
    if (log->calls < 16)
        log->r[log->calls] = *r;
    log->calls++;
    log->last_done = done;
    log->total = total;
}

START_TEST(test_tune_quick)
{
    clops_context *ctx = new_ctx();
    const unsigned dev = ctx->info.index;
    tune_log log;
    memset(&log, 0, sizeof log);
    log.order_ok = 1;
    clops_status st = clops_tune(dev, 1, tune_progress, &log);
    ck_assert_msg(st == CLOPS_SUCCESS, "clops_tune(%u, quick): %s (%s)", dev, clops_status_name(st),
                  clops_last_error_message());
    ck_assert_msg(log.calls == 8 && log.total == 8 && log.last_done == 8 && log.order_ok,
                  "progress: %u calls, done %u of %u, in order %d; want 8 calls, 8 of 8", log.calls, log.last_done,
                  log.total, log.order_ok);
    dir_scan s = scan_dir();
    ck_assert_msg(s.tunes == 1 && s.temps == 0, "%d tuning files and %d temporary files", s.tunes, s.temps);
    char path[PATH_MAX + 64];
    tune_file_path(ctx, path, sizeof path);
    ck_assert_msg(exists(path), "no tuning database %s (found %s)", path, s.tune);
    size_t len;
    char *text = (char *)read_all(path, &len);
    text = realloc(text, len + 1);
    text[len] = '\0';
    char head[256];
    snprintf(head, sizeof head, "clops-tune 1\ndevice %s\n", clops_context_device_name(ctx));
    ck_assert_msg(strncmp(text, head, strlen(head)) == 0, "tuning database starts \"%.80s\"", text);
    int lines = 0;
    for (const char *q = text; *q; q++)
        lines += *q == '\n';
    /* One line per variant whose winner beat the default when measured again. */
    int kept = 0;
    for (unsigned i = 0; i < 8; i++)
        kept += log.r[i].kept != 0;
    ck_assert_msg(lines == 2 + kept, "tuning database has %d lines, want %d (2 + %d kept variants)", lines, 2 + kept,
                  kept);
    free(text);
    drop_ctx(ctx);

    for (unsigned i = 0; i < 8; i++) {
        const clops_tune_result *r = &log.r[i];
        ck_assert_msg(r->block_size == 2 && (r->data_type == CLOPS_DATA_TYPE_UINT8 ||
                                             r->data_type == CLOPS_DATA_TYPE_FLOAT32),
                      "tuned variant %u: block %u type %d", i, r->block_size, (int)r->data_type);
        ck_assert_msg(r->chunk >= 1 && r->local[0] && r->local[1] && r->local[2] && r->gbps > 0 &&
                          r->default_gbps > 0,
                      "tuned variant %u: chunk %u local %zu,%zu,%zu %.3f GB/s (default %.3f)", i, r->chunk,
                      r->local[0], r->local[1], r->local[2], r->gbps, r->default_gbps);
        const uint32_t in_d2s[4] = {1, 8, 3, 5}, in_s2d[4] = {1, 2, 6, 10};
        case_def d;
        memset(&d, 0, sizeof d);
        char name[96];
        snprintf(name, sizeof name, "tuned %s %s %s b2", r->operator_type == CLOPS_OPERATOR_DEPTH_TO_SPACE ?
                 "DepthToSpace" : "SpaceToDepth", clops_data_type_name(r->data_type), tc_order_name(r->order));
        d.name = name;
        d.type = r->operator_type;
        d.dtype = r->data_type;
        memcpy(d.in, r->operator_type == CLOPS_OPERATOR_DEPTH_TO_SPACE ? in_d2s : in_s2d, sizeof d.in);
        d.block = 2;
        d.order = r->order;
        ctx = new_ctx();
        op_choice got = choose(ctx, &d, name);
        drop_ctx(ctx);
        if (r->kept)
            expect_tuned(&got, r->chunk, r->local, name);
        else
            ck_assert_msg(strcmp(got.origin, "heuristic") == 0, "%s: not kept by the tuner, but local_size_origin \"%s\"",
                          name, got.origin);
        setenv("CLOPS_TUNE", "off", 1);
        ctx = new_ctx();
        op_choice off = choose(ctx, &d, name);
        drop_ctx(ctx);
        unsetenv("CLOPS_TUNE");
        ck_assert_msg(strcmp(off.origin, "heuristic") == 0, "%s with CLOPS_TUNE=off: local_size_origin \"%s\"", name,
                      off.origin);
    }
    /* a variant the quick tuner does not cover */
    ctx = new_ctx();
    op_choice other = choose(ctx, &CASE_B, "untuned variant");
    ck_assert_msg(strcmp(other.origin, "heuristic") == 0, "untuned variant: local_size_origin \"%s\"", other.origin);
}
END_TEST

enum {
    TUNE_VALID,
    TUNE_VALID_TUNE_OFF,
    TUNE_GARBAGE,
    TUNE_WRONG_DEVICE,
    TUNE_WRONG_MAGIC,
    TUNE_GARBAGE_LINES,
    TUNE_OVERLONG_LINE,
    TUNE_LOCAL_ZERO,
    TUNE_CHUNK_ZERO,
    TUNE_CHUNK_TEXT,
    TUNE_LOCAL_TOO_BIG,
    TUNE_FOUR_FIELDS,
    TUNE_LOCAL_FOUR,
    TUNE_TRUNCATED,
    TUNE_EMPTY,
    TUNE_CASES
};
static const char *const tune_names[TUNE_CASES] = {
    "valid database",           "valid, CLOPS_TUNE=off",   "binary garbage",        "another device's name",
    "another format version",   "garbage lines around",    "an overlong line first", "local size 0",
    "chunk 0",                  "chunk not a number",      "local size past the device's", "four fields",
    "four local sizes",         "truncated line",          "empty file"};

START_TEST(test_tune_database_file)
{
    const int kind = _i;
    const char *label = tune_names[kind];
    /* the untuned choice, and the variant's key */
    setenv("CLOPS_TUNE", "off", 1);
    clops_context *ctx = new_ctx();
    const op_choice base = choose(ctx, &CASE_T, "untuned");
    ck_assert_str_eq(base.origin, "heuristic");
    unsetenv("CLOPS_TUNE");
    char path[PATH_MAX + 64];
    tune_file_path(ctx, path, sizeof path);
    char device[160];
    snprintf(device, sizeof device, "%s", clops_context_device_name(ctx));
    drop_ctx(ctx);

    static const size_t local[3] = {1, 16, 1};
    const unsigned chunk = 64;
    char line[CLOPS_OPTIONS_MAX + 64], text[8192];
    snprintf(line, sizeof line, "%s\t%u\t%zu,%zu,%zu\t12.500\t10.000\n", base.tune_key, chunk, local[0], local[1],
             local[2]);
    const char *k = base.tune_key;
    int tuned = 0;
    switch (kind) {
    case TUNE_VALID:
        snprintf(text, sizeof text, "clops-tune 1\ndevice %s\n%s", device, line);
        tuned = 1;
        break;
    case TUNE_VALID_TUNE_OFF:
        snprintf(text, sizeof text, "clops-tune 1\ndevice %s\n%s", device, line);
        setenv("CLOPS_TUNE", "off", 1);
        break;
    case TUNE_GARBAGE: {
        unsigned char junk[600];
        tc_fill_random(junk, sizeof junk, 3);
        for (size_t i = 0; i < sizeof junk; i++)
            text[i] = junk[i] ? (char)junk[i] : '\n';
        text[sizeof junk] = '\0';
        break;
    }
    case TUNE_WRONG_DEVICE:
        snprintf(text, sizeof text, "clops-tune 1\ndevice %s-other\n%s", device, line);
        break;
    case TUNE_WRONG_MAGIC:
        snprintf(text, sizeof text, "clops-tune 2\ndevice %s\n%s", device, line);
        break;
    case TUNE_GARBAGE_LINES:
        snprintf(text, sizeof text, "clops-tune 1\ndevice %s\n\x01\x02 garbage\n\t\t\t\t\n%s not\ta\tline\n%s"
                 "more garbage\t1\t2\n", device, k, line);
        tuned = 1; /* malformed lines are skipped one by one */
        break;
    case TUNE_OVERLONG_LINE: {
        char longline[2100];
        memset(longline, 'x', sizeof longline - 1);
        longline[sizeof longline - 1] = '\0';
        snprintf(text, sizeof text, "clops-tune 1\ndevice %s\n%s\t1\t1,1,1\t1\t1\n%s", device, longline, line);
        tuned = 1;
        break;
    }
    case TUNE_LOCAL_ZERO:
        snprintf(text, sizeof text, "clops-tune 1\ndevice %s\n%s\t%u\t0,16,1\t1\t1\n", device, k, chunk);
        break;
    case TUNE_CHUNK_ZERO:
        snprintf(text, sizeof text, "clops-tune 1\ndevice %s\n%s\t0\t1,16,1\t1\t1\n", device, k);
        break;
    case TUNE_CHUNK_TEXT:
        snprintf(text, sizeof text, "clops-tune 1\ndevice %s\n%s\t64x\t1,16,1\t1\t1\n", device, k);
        break;
    case TUNE_LOCAL_TOO_BIG:
        snprintf(text, sizeof text, "clops-tune 1\ndevice %s\n%s\t%u\t65536,1,1\t1\t1\n", device, k, chunk);
        break;
    case TUNE_FOUR_FIELDS:
        snprintf(text, sizeof text, "clops-tune 1\ndevice %s\n%s\t%u\t1,16,1\t1\n", device, k, chunk);
        break;
    case TUNE_LOCAL_FOUR:
        snprintf(text, sizeof text, "clops-tune 1\ndevice %s\n%s\t%u\t1,16,1,1\t1\t1\n", device, k, chunk);
        break;
    case TUNE_TRUNCATED:
        snprintf(text, sizeof text, "clops-tune 1\ndevice %s\n%s\t%u\t1,1", device, k, chunk);
        break;
    case TUNE_EMPTY:
        text[0] = '\0';
        break;
    }
    write_all(path, text, strlen(text));
    ctx = new_ctx();
    const op_choice got = choose(ctx, &CASE_T, label);
    drop_ctx(ctx);
    if (tuned) {
        expect_tuned(&got, chunk, local, label);
    } else if (kind == TUNE_LOCAL_TOO_BIG) {
        /* The line parses; the scheduler refuses its local size and picks its own
         * (the line's chunk length, a valid one, is still used). */
        ck_assert_msg(strcmp(got.origin, "heuristic") == 0 && memcmp(got.local, base.local, sizeof got.local) == 0,
                      "%s: local %zu,%zu,%zu (%s), want the heuristic's %zu,%zu,%zu", label, got.local[0],
                      got.local[1], got.local[2], got.origin, base.local[0], base.local[1], base.local[2]);
    } else {
        expect_heuristic(&got, &base, label);
    }
}
END_TEST

START_TEST(test_tune_refused)
{
    size_t count = 0;
    ck_assert_int_eq(clops_device_list(NULL, 0, &count), CLOPS_SUCCESS);
    clops_status st = clops_tune((unsigned)count, 1, NULL, NULL);
    ck_assert_msg(st == CLOPS_ERROR_INVALID_DEVICE_SELECTION, "clops_tune(%zu of %zu devices): %s", count, count,
                  clops_status_name(st));
    st = clops_tune(UINT_MAX, 0, NULL, NULL);
    ck_assert_msg(st == CLOPS_ERROR_INVALID_DEVICE_SELECTION, "clops_tune(UINT_MAX): %s", clops_status_name(st));
    dir_scan s = scan_dir();
    ck_assert_msg(s.tunes == 0 && s.temps == 0 && s.entries == 0, "a refused tune left files");

    setenv("CLOPS_CACHE", "off", 1);
    st = clops_tune(0, 1, NULL, NULL);
    ck_assert_msg(st == CLOPS_ERROR_CACHE_UNAVAILABLE, "clops_tune with CLOPS_CACHE=off: %s", clops_status_name(st));
    setenv("CLOPS_CACHE", "ro", 1);
    ck_assert(mkdir(g_dir, 0700) == 0);
    st = clops_tune(0, 1, NULL, NULL);
    ck_assert_msg(st == CLOPS_ERROR_CACHE_UNAVAILABLE, "clops_tune with CLOPS_CACHE=ro: %s", clops_status_name(st));
    s = scan_dir();
    ck_assert_msg(s.tunes == 0 && s.temps == 0 && s.entries == 0, "a refused tune left files");
}
END_TEST

/* ---- suite ---------------------------------------------------------------------------------------------------- */

static Suite *cache_suite(void)
{
    Suite *s = suite_create("cache");
    TCase *tc = tcase_create("entries");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_cold_disk_inprocess);
    tcase_add_loop_test(tc, test_corrupt_entry, 0, CORRUPT_CASES);
    tcase_add_test(tc, test_entry_is_directory);
    tcase_add_test(tc, test_stale_key_other_program);
    tcase_add_test(tc, test_stale_key_version);
    tcase_add_test(tc, test_stale_key_identity);
    tcase_add_test(tc, test_concurrent_writers);
    suite_add_tcase(s, tc);

    tc = tcase_create("directory");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_dir_under_regular_file);
    tcase_add_test(tc, test_dir_is_regular_file);
    tcase_add_test(tc, test_missing_dir_created);
    tcase_add_test(tc, test_cache_off);
    tcase_add_test(tc, test_cache_read_only);
    suite_add_tcase(s, tc);

    tc = tcase_create("maintenance");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_eviction);
    tcase_add_test(tc, test_prune_and_clear_counts);
    tcase_add_test(tc, test_export_import);
    tcase_add_loop_test(tc, test_bad_pack, 0, PACK_CASES);
    suite_add_tcase(s, tc);

    tc = tcase_create("no_compiler");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_no_compiler_empty_cache);
    tcase_add_test(tc, test_no_compiler_crafted_entry);
    tcase_add_loop_test(tc, test_no_compiler_warm_cache, 0, 2);
    suite_add_tcase(s, tc);

    tc = tcase_create("faults");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_fault, 0, FAULT_CASES);
    suite_add_tcase(s, tc);

    tc = tcase_create("tuning");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_tune_database_file, 0, TUNE_CASES);
    tcase_add_test(tc, test_tune_refused);
    tcase_add_test(tc, test_tune_quick);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--cache-writer") == 0)
        return writer_child(atoi(argv[2]), atoi(argv[3]));
    size_t count = 0;
    clops_status st = clops_device_list(NULL, 0, &count);
    if (st != CLOPS_SUCCESS || count == 0) {
        const char *req = getenv("CLOPS_REQUIRE_DEVICE");
        fprintf(stderr, "%s: no OpenCL device (%s); the program cache is only used on OpenCL devices\n",
                req && strcmp(req, "1") == 0 ? "FAIL" : "SKIP", clops_status_name(st));
        return req && strcmp(req, "1") == 0 ? EXIT_FAILURE : 77;
    }
    SRunner *sr = srunner_create(cache_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
