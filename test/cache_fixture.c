/* cache_fixture.c - what the program cache suites share (cache_fixture.h). */
#define _GNU_SOURCE
#include "cache_fixture.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "test_fs.h"

/* ---- environment, directories and contexts of one test ------------------------------------ */

static const char *const env_names[] = {"CLOPS_CACHE_DIR", "CLOPS_CACHE", "CLOPS_CACHE_MAX_SIZE", "CLOPS_DISABLE",
                                        "CLOPS_TUNE"};
#define NUM_ENV (sizeof env_names / sizeof env_names[0])
static char *env_saved[NUM_ENV];
static int env_was_set[NUM_ENV];

char g_root[PATH_MAX];      /* the test's temporary directory */
char g_dir[PATH_MAX + 32];  /* g_root/cache: CLOPS_CACHE_DIR */

clops_context *g_ctx[MAX_CTX];


void setup(void)
{
    tc_env_save(env_names, NUM_ENV, env_saved, env_was_set, 1);
    const char *tmp = getenv("TMPDIR");
    snprintf(g_root, sizeof g_root, "%s/clops-test-cache-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    ck_assert_msg(mkdtemp(g_root) != NULL, "mkdtemp(%s): %s", g_root, strerror(errno));
    snprintf(g_dir, sizeof g_dir, "%s/cache", g_root);
    setenv("CLOPS_CACHE_DIR", g_dir, 1);
    clops_cl = clops_cl_real;
}

void teardown(void)
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

/* Keeps `c` for the teardown. */
static clops_context *keep_ctx(clops_context *c)
{
    for (int i = 0; i < MAX_CTX; i++)
        if (!g_ctx[i]) {
            g_ctx[i] = c;
            return c;
        }
    ck_abort_msg("test bug: more than %d contexts at once", MAX_CTX);
    return NULL;
}

clops_context *ctx_with_db(const char *db, const char *cache_dir)
{
    clops_context_options o;
    clops_context_options_init(&o, sizeof o);
    o.tuning_db = db;
    o.cache_dir = cache_dir;
    clops_context *c = NULL;
    const clops_status st = clops_context_create_with_options(&o, &c);
    ck_assert_msg(st == CLOPS_SUCCESS, "context: %s (%s)", clops_status_name(st), clops_last_error_message());
    return keep_ctx(c);
}

/* A context on the default device, freed by the teardown if the test does not. */
clops_context *new_ctx(void)
{
    clops_context *c = NULL;
    clops_status st = clops_context_create(&c);
    ck_assert_msg(st == CLOPS_SUCCESS && c, "clops_context_create: %s (%s)", clops_status_name(st),
                  clops_last_error_message());
    ck_assert_msg(clops_context_backend(c) == CLOPS_BACKEND_OPENCL, "clops_context_create chose the host backend");
    return keep_ctx(c);
}

void drop_ctx(clops_context *c)
{
    for (int i = 0; i < MAX_CTX; i++)
        if (g_ctx[i] == c)
            g_ctx[i] = NULL;
    clops_context_free(c);
}

/* ---- files ---------------------------------------------------------------------------------- */

unsigned char *read_all(const char *path, size_t *len)
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

void write_all(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot create %s: %s", path, strerror(errno));
    ck_assert_msg(fwrite(data, 1, len, f) == len && fclose(f) == 0, "cannot write %s", path);
}

void tune_file_path(const clops_context *ctx, char *out, size_t size)
{
    snprintf(out, size, "%s/tune-%016llx.txt", g_dir,
             (unsigned long long)clops_fnv1a(CLOPS_FNV_SEED, ctx->identity, strlen(ctx->identity)));
}

/* Temporary files (".tmp-*") in `dir`: their count, and the first `max` names. */
int temps_in(const char *dir, char names[][32], int max)
{
    int n = 0;
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "opendir(%s): %s", dir, strerror(errno));
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strncmp(e->d_name, ".tmp-", 5) == 0) {
            if (n < max)
                snprintf(names[n], 32, "%.31s", e->d_name);
            n++;
        }
    closedir(d);
    return n;
}

int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

void entry_file(const char *name, char *out, size_t size)
{
    ck_assert_msg(snprintf(out, size, "%s/%s", g_dir, name) < (int)size, "test bug: path of %s too long", name);
}

/* Sets a file's modification time (the cache's "last used") to `age` seconds ago. */
void age_file(const char *path, long age)
{
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= age;
    t[1] = t[0];
    ck_assert_msg(utimensat(AT_FDCWD, path, t, 0) == 0, "utimensat(%s): %s", path, strerror(errno));
}

struct timespec mtime_of(const char *path)
{
    struct stat st;
    ck_assert_msg(stat(path, &st) == 0, "stat(%s): %s", path, strerror(errno));
    return st.st_mtim;
}


int is_entry_name(const char *n)
{
    return strlen(n) == 20 && strcmp(n + 16, ".bin") == 0 && strspn(n, "0123456789abcdef") == 16;
}

dir_scan scan_dir(void)
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
                snprintf(s.entry[s.entries], sizeof s.entry[0], "%.20s", e->d_name); /* entry names are 20 characters */
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

int scan_has(const dir_scan *s, const char *name)
{
    for (int i = 0; i < s->entries && i < 32; i++)
        if (strcmp(s->entry[i], name) == 0)
            return 1;
    return 0;
}

/* The entry that `after` has and `before` lacks (exactly one). */
void new_entry(const dir_scan *before, const dir_scan *after, char *name, size_t size, uint64_t *bytes)
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


void list_cb(void *user, const char *file, uint64_t bytes, long long last_used, const char *key,
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
        snprintf(want, sizeof want, "%016llx.bin", (unsigned long long)clops_fnv1a(CLOPS_FNV_SEED, key, key_len));
        if (strcmp(want, file) != 0)
            l->misnamed++;
    }
    l->n++;
}

void list_entries(listing *l)
{
    memset(l, 0, sizeof *l);
    size_t count = 0;
    clops_status st = clops_cache_list_entries(list_cb, l, &count);
    ck_assert_msg(st == CLOPS_SUCCESS, "clops_cache_list_entries: %s (%s)", clops_status_name(st),
                  clops_last_error_message());
    ck_assert_msg(count == l->n, "clops_cache_list_entries counted %zu but visited %zu", count, l->n);
}

void listing_free(listing *l)
{
    for (size_t i = 0; i < l->n && i < 32; i++)
        free(l->key[i]);
}

const char *listed_key(const listing *l, const char *file, size_t *len)
{
    for (size_t i = 0; i < l->n && i < 32; i++)
        if (strcmp(l->file[i], file) == 0) {
            *len = l->key_len[i];
            return l->key[i];
        }
    ck_abort_msg("no listed entry %s", file);
    return NULL;
}

/* clops_cache_list_entries() visits `n` files, of which `invalid` do not parse
 * and `misnamed` parse but are not named after their key's hash. */
void expect_listing(size_t n, size_t invalid, size_t misnamed, const char *label)
{
    listing l;
    list_entries(&l);
    ck_assert_msg(l.n == n, "%s: clops_cache_list_entries visited %zu entries, want %zu", label, l.n, n);
    ck_assert_msg(l.invalid == invalid, "%s: %zu entries do not parse (key NULL), want %zu", label, l.invalid,
                  invalid);
    ck_assert_msg(l.misnamed == misnamed, "%s: %zu entries are not named after their key's hash, want %zu", label,
                  l.misnamed, misnamed);
    listing_free(&l);
}

/* The directory holds exactly `want` entries, each of which parses (key read
 * back), is named after its key's hash, and no temporary file is left. */
void expect_clean_cache(int want, const char *label)
{
    dir_scan s = scan_dir();
    ck_assert_msg(s.entries == want, "%s: %d entries in %s, want %d", label, s.entries, g_dir, want);
    ck_assert_msg(s.temps == 0, "%s: %d temporary files left in %s", label, s.temps, g_dir);
    if (s.present)
        expect_listing((size_t)want, 0, 0, label);
}

/* ---- operator cases ---------------------------------------------------------------------------- */

/* Four cases, each its own program. */
const tc_case CASE_A = {"DepthToSpace FLOAT32 b2 DCR", CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_FLOAT32,
                                {1, 8, 3, 5}, 2, CLOPS_ORDER_DEPTH_COLUMN_ROW, 0, {0, 0, 0, 0}};
const tc_case CASE_B = {"SpaceToDepth UINT8 b3 CRD", CLOPS_OPERATOR_SPACE_TO_DEPTH, CLOPS_DATA_TYPE_UINT8,
                                {2, 2, 6, 9}, 3, CLOPS_ORDER_COLUMN_ROW_DEPTH, 0, {0, 0, 0, 0}};
const tc_case CASE_C = {"DepthToSpace UINT16 b2 CRD", CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT16,
                                {1, 4, 5, 3}, 2, CLOPS_ORDER_COLUMN_ROW_DEPTH, 0, {0, 0, 0, 0}};
const tc_case CASE_D = {"MaxUnpooling FLOAT32 INT64 indices", CLOPS_OPERATOR_MAX_UNPOOLING,
                                CLOPS_DATA_TYPE_FLOAT32, {1, 2, 3, 4}, 0, 0, CLOPS_DATA_TYPE_INT64, {1, 2, 6, 8}};
/* The variant clops_tune(quick) tunes: DepthToSpace UINT8, block 2, DCR, packed. */
const tc_case CASE_T = {"DepthToSpace UINT8 b2 DCR", CLOPS_OPERATOR_DEPTH_TO_SPACE, CLOPS_DATA_TYPE_UINT8,
                                {1, 8, 6, 7}, 2, CLOPS_ORDER_DEPTH_COLUMN_ROW, 0, {0, 0, 0, 0}};

void prepare_ok(tc_prepared *p, const tc_case *d)
{
    ck_assert_msg(tc_prepare(p, d, tc_seed_of(d->name)) == 0, "test bug: the reference rejects case %s", d->name);
}

/* Creates the case's operator and reads its info. */
clops_operator *create_op(clops_context *ctx, tc_prepared *p, clops_operator_info *info, const char *label)
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
void expect_path(const tc_prepared *p, const clops_operator_info *info, clops_backend backend,
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
void run_and_compare(clops_context *ctx, clops_operator *op, tc_prepared *p, const char *label)
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
void check_case(clops_context *ctx, const tc_case *d, clops_backend backend, const char *origin,
                       const char *label)
{
    tc_prepared p;
    prepare_ok(&p, d);
    clops_operator_info info;
    clops_operator *op = create_op(ctx, &p, &info, label);
    expect_path(&p, &info, backend, origin, label);
    run_and_compare(ctx, op, &p, label);
    clops_operator_free(op);
    tc_release(&p);
}

/* check_case on the OpenCL backend of a new context, freed afterwards. */
void check_fresh(const tc_case *d, const char *origin, const char *label)
{
    clops_context *ctx = new_ctx();
    check_case(ctx, d, CLOPS_BACKEND_OPENCL, origin, label);
    drop_ctx(ctx);
}

/* The directory entry a case's program is stored in: built on a fresh context
 * (it must compile) and found as the one new file. */
built_entry build_entry(const tc_case *d, const char *label)
{
    built_entry e;
    dir_scan before = scan_dir();
    check_fresh(d, "compiled", label);
    dir_scan after = scan_dir();
    new_entry(&before, &after, e.name, sizeof e.name, &e.bytes);
    entry_file(e.name, e.path, sizeof e.path);
    return e;
}

int cache_suite_main(Suite *s)
{
    const int skip = tc_need_devices(1, "the program cache is only used on OpenCL devices");
    return skip >= 0 ? skip : tc_run_nofork(s);
}

TCase *cache_case(Suite *s, const char *name)
{
    return tc_fixture_case(s, name, setup, teardown);
}

void put_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* ---- packs ---- */

void pack_path(char *out, size_t size)
{
    snprintf(out, size, "%s/kernels.pack", g_root);
}

/* A pack call (export or import) on `path` that must succeed with `want` entries. */
void expect_pack_call(clops_status (*call)(const char *, size_t *), const char *path, size_t want, const char *label)
{
    size_t n = 0;
    clops_status st = call(path, &n);
    ck_assert_msg(st == CLOPS_SUCCESS && n == want, "%s: %s (%s), %zu entries, want %zu", label,
                  clops_status_name(st), clops_last_error_message(), n, want);
}

/* Warms A and D, exports them, and clears the directory. */
void make_pack(char names[2][32])
{
    snprintf(names[0], 32, "%s", build_entry(&CASE_A, "pack: A").name);
    snprintf(names[1], 32, "%s", build_entry(&CASE_D, "pack: D").name);
    char pack[PATH_MAX + 32];
    pack_path(pack, sizeof pack);
    expect_pack_call(clops_cache_export_pack, pack, 2, "clops_cache_export_pack");
    size_t n = 0;
    ck_assert_int_eq(clops_cache_clear_all(&n), CLOPS_SUCCESS);
    ck_assert_msg(n == 2, "clear removed %zu", n);
    expect_clean_cache(0, "cleared after export");
}

/* ---- faults injected through the clops_cl seam ---- */

int g_calls;

ssize_t write_enospc(int fd, const void *buf, size_t n)
{
    (void)fd, (void)buf, (void)n;
    errno = ENOSPC;
    return -1;
}

ssize_t write_half_then_enospc(int fd, const void *buf, size_t n)
{
    if (g_calls++ == 0)
        return clops_cl_real.io_write(fd, buf, n > 1 ? n / 2 : n);
    errno = ENOSPC;
    return -1;
}
