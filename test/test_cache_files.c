/*
 * test_cache_files.c - hostile files and faults around the program cache: a
 * failed export keeps the old pack; a writer killed before its rename leaves a
 * temporary file that the cache lists, counts and removes; FIFOs in place of an
 * entry, the tuning database or a pack hang nothing; a 3 GiB sparse non-pack is
 * refused without being read; import as a transaction (a full disk installs
 * nothing, the size bound, another device's entries, a payload cut short with a
 * recomputed checksum, a driver that crashes or hangs loading a binary); the
 * cache directory's messages. Faults are injected at clops's own seams
 * (cl_api.h); files, FIFOs and sparse files are real. Shared fixtures:
 * cache_fixture.h.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache_fixture.h"

/* ---- helpers ------------------------------------------------------------------------------------------- */

/* g_calls, write_enospc and write_half_then_enospc are the fixture's (cache_fixture.h). */

/* Writes the first file's bytes, then the disk is full. */
static ssize_t write_one_then_enospc(int fd, const void *buf, size_t n)
{
    if (g_calls++ == 0) return clops_cl_real.io_write(fd, buf, n);
    errno = ENOSPC;
    return -1;
}

static int rename_exdev(const char *from, const char *to)
{
    (void)from, (void)to;
    errno = EXDEV;
    return -1;
}

/* The process is killed between writing its temporary file and renaming it. */
static int rename_then_die(const char *from, const char *to)
{
    (void)from, (void)to;
    raise(SIGKILL);
    return -1;
}

static void set_env_size(const char *v)
{
    setenv("CLOPS_CACHE_MAX_SIZE", v, 1);
}

/* Runs `fn` in a child process with an alarm as a watchdog: a hang fails the
 * test (SIGALRM) instead of hanging the suite. The child's assertions count. */
static void in_child(void (*fn)(void), const char *label)
{
    fflush(NULL);
    const pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        alarm(120);
        fn();
        _exit(0);
    }
    int status;
    ck_assert(waitpid(pid, &status, 0) == pid);
    ck_assert_msg(!(WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM), "%s: hung (killed by the watchdog)", label);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: the child failed (status 0x%x)", label, status);
}

/* ---- export: the old pack survives every fault ------------------------------------------------------------ */

enum { EXPORT_FULL, EXPORT_SHORT, EXPORT_RENAME, EXPORT_CASES };

START_TEST(test_export_fault_keeps_pack)
{
    char pack[PATH_MAX + 32];
    build_entry(&CASE_A, "export: A");
    pack_path(pack, sizeof pack);
    expect_pack_call(clops_cache_export_pack, pack, 1, "export: A");
    size_t n = 0, old_len, new_len;
    ck_assert(chmod(pack, 0640) == 0);
    unsigned char *old = read_all(pack, &old_len);
    build_entry(&CASE_D, "export: D"); /* the next pack would differ */
    g_calls = 0;
    const char *want = NULL;
    switch (_i) {
    case EXPORT_FULL: clops_cl.io_write = write_enospc, want = strerror(ENOSPC); break;
    case EXPORT_SHORT: clops_cl.io_write = write_half_then_enospc, want = strerror(ENOSPC); break;
    case EXPORT_RENAME: clops_cl.io_rename = rename_exdev, want = strerror(EXDEV); break;
    }
    const clops_status st = clops_cache_export_pack(pack, &n);
    clops_cl = clops_cl_real;
    ck_assert_msg(st == CLOPS_ERROR_CACHE_IO, "export under a fault: %s", clops_status_name(st));
    ck_assert_msg(strstr(clops_last_error_message(), want) != NULL, "message \"%s\" lacks \"%s\"",
                  clops_last_error_message(), want);
    unsigned char *now = read_all(pack, &new_len);
    ck_assert_msg(new_len == old_len && memcmp(now, old, old_len) == 0, "a failed export changed the old pack");
    free(now);
    free(old);
    /* a successful export replaces it and keeps its mode */
    expect_pack_call(clops_cache_export_pack, pack, 2, "export after the fault");
    struct stat st_pack;
    ck_assert(stat(pack, &st_pack) == 0);
    ck_assert_msg((st_pack.st_mode & 07777) == 0640, "the pack's mode is %o, want 640",
                  (unsigned)(st_pack.st_mode & 07777));
}
END_TEST

/* ---- a writer killed between write and rename ---------------------------------------------------------- */

static void store_and_die(void)
{
    clops_cl.io_rename = rename_then_die;
    clops_cache_config cfg;
    clops_cache_config_from_env(&cfg);
    unsigned char payload[5000];
    memset(payload, 0x5a, sizeof payload);
    clops_cache_store(&cfg, "clops-test killed writer", 24, payload, sizeof payload);
    _exit(3); /* not reached: the rename killed us */
}

START_TEST(test_killed_writer_leftovers)
{
    fflush(NULL);
    const pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) store_and_die();
    int status;
    ck_assert(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    char names[4][32];
    ck_assert_int_eq(temps_in(g_dir, names, 4), 1);
    char tmp[PATH_MAX + 64];
    entry_file(names[0], tmp, sizeof tmp);
    struct stat st;
    ck_assert(stat(tmp, &st) == 0 && st.st_size == 32 + 24 + 5000);

    /* listed */
    listing l;
    list_entries(&l);
    ck_assert_msg(l.n == 1 && strcmp(l.file[0], names[0]) == 0 && l.key[0] == NULL, "listing has %zu files", l.n);
    listing_free(&l);
    /* young: a write may be in progress, so clear leaves it */
    size_t removed = 99;
    ck_assert_int_eq(clops_cache_clear_all(&removed), CLOPS_SUCCESS);
    ck_assert_uint_eq(removed, 0);
    ck_assert(exists(tmp));

    /* it counts against the bound: with room for entry A alone, A does not stay
     * beside the leftover; once the leftover is stale it goes first and A stays */
    const uint64_t a_bytes = build_entry(&CASE_A, "bound: A").bytes;
    ck_assert_int_eq(clops_cache_clear_all(&removed), CLOPS_SUCCESS);
    ck_assert_uint_eq(removed, 1);
    char v[32];
    snprintf(v, sizeof v, "%llu", (unsigned long long)a_bytes + 1024);
    set_env_size(v);
    check_fresh(&CASE_A, "compiled", "bound: A beside a young leftover");
    ck_assert_msg(scan_dir().entries == 0 && exists(tmp), "A stayed beside a leftover that leaves no room for it");
    age_file(tmp, 2 * 3600);
    check_fresh(&CASE_A, "compiled", "bound: A beside a stale leftover");
    ck_assert_msg(scan_dir().entries == 1 && !exists(tmp), "the stale leftover was not evicted before A");
    ck_assert_int_eq(clops_cache_clear_all(&removed), CLOPS_SUCCESS);
    ck_assert_uint_eq(removed, 1);

    /* a stale leftover is removed by clear, and listed until then */
    fflush(NULL);
    const pid_t again = fork();
    ck_assert(again >= 0);
    if (again == 0) store_and_die();
    ck_assert(waitpid(again, &status, 0) == again);
    ck_assert_int_eq(temps_in(g_dir, names, 4), 1);
    entry_file(names[0], tmp, sizeof tmp);
    age_file(tmp, 2 * 3600);
    ck_assert_int_eq(clops_cache_clear_all(&removed), CLOPS_SUCCESS);
    ck_assert_msg(removed == 1 && !exists(tmp), "clear removed %zu, the stale leftover %s", removed,
                  exists(tmp) ? "stays" : "is gone");
}
END_TEST

START_TEST(test_clear_empty_entries)
{
    clops_cache_config cfg;
    clops_cache_config_from_env(&cfg); /* creates the directory */
    for (int i = 0; i < 3; i++) {
        char name[32], path[PATH_MAX + 64];
        snprintf(name, sizeof name, "%016x.bin", 0xabc0 + i);
        entry_file(name, path, sizeof path);
        write_all(path, "", 0);
    }
    size_t removed = 0;
    ck_assert_int_eq(clops_cache_clear_all(&removed), CLOPS_SUCCESS);
    ck_assert_msg(removed == 3, "clear removed %zu zero-length entries, want 3", removed);
    ck_assert_int_eq(scan_dir().entries, 0);
}
END_TEST

/* ---- FIFOs never hang a command -------------------------------------------------------------------------- */

static char g_fifo_entry[PATH_MAX + 64], g_fifo_tune[PATH_MAX + 64], g_fifo_pack[PATH_MAX + 64];

static void use_fifos(void)
{
    clops_driver_adopt(); /* a forked child that builds and runs no command (a new context is refused otherwise) */
    clops_context *ctx = NULL;
    CHILD_CHECK(clops_context_create(&ctx) == CLOPS_SUCCESS, "context: %s", clops_last_error_message());
    tc_prepared p;
    prepare_ok(&p, &CASE_A);
    clops_operator_info info;
    clops_operator *op = NULL; /* reads the FIFO entry and the tuning FIFO */
    CHILD_CHECK(clops_operator_create(ctx, &p.desc, &op) == CLOPS_SUCCESS &&
                    clops_operator_get_info(op, &info) == CLOPS_SUCCESS,
                "operator: %s", clops_last_error_message());
    CHILD_CHECK(strcmp(info.program_origin, "compiled") == 0, "origin %s", info.program_origin);
    clops_operator_free(op);
    tc_release(&p);
    clops_context_free(ctx);
    size_t n;
    CHILD_CHECK(clops_cache_list_entries(list_cb, &(listing){0}, &n) == CLOPS_SUCCESS, "list");
    char out[PATH_MAX + 64];
    snprintf(out, sizeof out, "%s/out.pack", g_root);
    CHILD_CHECK(clops_cache_export_pack(out, &n) == CLOPS_SUCCESS, "export: %s", clops_last_error_message());
    const clops_status st = clops_cache_import_pack(g_fifo_pack, &n);
    CHILD_CHECK(st == CLOPS_ERROR_BAD_PACK && strstr(clops_last_error_message(), "not a regular file"),
                "import of a FIFO: %s %s", clops_status_name(st), clops_last_error_message());
    CHILD_CHECK(clops_cache_export_pack(g_fifo_pack, &n) == CLOPS_ERROR_CACHE_IO &&
                    strstr(clops_last_error_message(), "no process is reading"),
                "export to a FIFO without a reader: %s", clops_last_error_message());
}

START_TEST(test_fifos_do_not_hang)
{
    snprintf(g_fifo_entry, sizeof g_fifo_entry, "%s", build_entry(&CASE_A, "FIFO: A").path);
    ck_assert(unlink(g_fifo_entry) == 0 && mkfifo(g_fifo_entry, 0600) == 0);
    clops_context *ctx = new_ctx();
    tune_file_path(ctx, g_fifo_tune, sizeof g_fifo_tune);
    drop_ctx(ctx);
    ck_assert(mkfifo(g_fifo_tune, 0600) == 0);
    snprintf(g_fifo_pack, sizeof g_fifo_pack, "%s/in.pack", g_root);
    ck_assert(mkfifo(g_fifo_pack, 0600) == 0);
    in_child(use_fifos, "FIFOs in place of an entry, the tuning database and a pack");
    struct stat st;
    ck_assert_msg(stat(g_fifo_entry, &st) == 0 && S_ISREG(st.st_mode), "the FIFO entry was not replaced by the build");
    ck_assert_msg(stat(g_fifo_pack, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO pack was replaced");
}
END_TEST

/* ---- a 3 GiB sparse non-pack -------------------------------------------------------------------------------- */

static char g_sparse[PATH_MAX + 64];

static long max_rss_kib(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
}

static void import_sparse(void)
{
    const long before = max_rss_kib();
    size_t n = 7;
    const clops_status st = clops_cache_import_pack(g_sparse, &n);
    const long after = max_rss_kib();
    CHILD_CHECK(st == CLOPS_ERROR_BAD_PACK && n == 7, "import of a sparse non-pack: %s", clops_status_name(st));
    CHILD_CHECK(strstr(clops_last_error_message(), "not a clops kernel pack"), "%s", clops_last_error_message());
    CHILD_CHECK(after - before < 64 * 1024, "importing a 3 GiB non-pack grew the peak resident size by %ld KiB",
                after - before);
}

START_TEST(test_sparse_non_pack)
{
    snprintf(g_sparse, sizeof g_sparse, "%s/sparse.pack", g_root);
    const int fd = open(g_sparse, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert(fd >= 0);
    ck_assert_msg(ftruncate(fd, 3ll << 30) == 0, "ftruncate: %s", strerror(errno));
    close(fd);
    in_child(import_sparse, "a 3 GiB sparse non-pack");
    unlink(g_sparse);
}
END_TEST

/* ---- import as a transaction ---------------------------------------------------------------------------------- */

/* Rewrites entry `which` of the pack at `path`: its key's device line replaced by
 * `device` (if not NULL) and its payload cut to `cut` bytes (if not 0), with its
 * checksum recomputed, as a careful forger would. */
static void forge_pack(const char *path, int which, const char *device, size_t cut)
{
    size_t len;
    unsigned char *in = read_all(path, &len), *out = malloc(len + 4096);
    ck_assert(out != NULL && len >= 16);
    memcpy(out, in, 16);
    size_t pos = 16, o = 16;
    for (uint64_t i = 0, n = clops_get_u64(in + 8); i < n; i++) {
        const uint64_t elen = clops_get_u64(in + pos);
        const unsigned char *e = in + pos + 8;
        size_t klen = clops_get_u32(e + 12), plen = (size_t)clops_get_u64(e + 16);
        /* room for the key and a longer device line (keys hold the program's source: past 64 KiB for
         * MaxUnpooling's two files) */
        const size_t room = klen + (device ? strlen(device) : 0) + 64;
        unsigned char *key = malloc(room);
        ck_assert(key != NULL);
        memcpy(key, e + 32, klen);
        const unsigned char *payload = e + 32 + klen;
        if ((int)i == which && device) {
            char *d = memmem(key, klen, "device: ", 8);
            ck_assert(d != NULL);
            char *nl = memchr(d, '\n', klen - (size_t)((unsigned char *)d - key));
            const size_t tail = klen - (size_t)((unsigned char *)nl - key), dl = strlen(device);
            memmove(d + 8 + dl, nl, tail);
            memcpy(d + 8, device, dl);
            klen = (size_t)((unsigned char *)d - key) + 8 + dl + tail;
        }
        if ((int)i == which && cut) plen = cut;
        unsigned char *ne = out + o + 8;
        memcpy(ne, "CLOPSBIN", 8);
        put_le(ne + 8, 1, 4);
        put_le(ne + 12, klen, 4);
        put_le(ne + 16, plen, 8);
        put_le(ne + 24, clops_fnv1a(clops_fnv1a(CLOPS_FNV_SEED, key, klen), payload, plen), 8);
        memcpy(ne + 32, key, klen);
        memcpy(ne + 32 + klen, payload, plen);
        put_le(out + o, 32 + klen + plen, 8);
        o += 8 + 32 + klen + plen;
        pos += 8 + (size_t)elen;
        free(key);
    }
    write_all(path, out, o);
    free(in);
    free(out);
}

static cl_program binary_aborts(cl_context c, cl_uint n, const cl_device_id *d, const size_t *l,
                                const unsigned char **b, cl_int *bs, cl_int *e)
{
    (void)c, (void)n, (void)d, (void)l, (void)b, (void)bs, (void)e;
    abort();
}

static cl_program binary_hangs(cl_context c, cl_uint n, const cl_device_id *d, const size_t *l,
                               const unsigned char **b, cl_int *bs, cl_int *e)
{
    (void)c, (void)n, (void)d, (void)l, (void)b, (void)bs, (void)e;
    for (;;) pause();
    return NULL;
}

enum { IMPORT_FULL_DISK, IMPORT_OVER_LIMIT, IMPORT_OTHER_DEVICE, IMPORT_CUT_PAYLOAD, IMPORT_CRASH, IMPORT_HANG,
       IMPORT_CASES };
static const char *const import_names[IMPORT_CASES] = {"full disk", "over the size bound", "another device",
                                                       "payload cut short, checksum recomputed",
                                                       "driver crashes", "driver hangs"};

START_TEST(test_import_transaction)
{
    const int kind = _i;
    const char *label = import_names[kind];
    char names[2][32], pack[PATH_MAX + 32];
    make_pack(names);
    pack_path(pack, sizeof pack);
    size_t len0;
    free(read_all(pack, &len0));
    g_calls = 0;
    switch (kind) {
    case IMPORT_FULL_DISK: clops_cl.io_write = write_one_then_enospc; break;
    case IMPORT_OVER_LIMIT: { /* room for the larger of the two entries only */
        char v[32];
        snprintf(v, sizeof v, "%zu", len0 - 16 - 16 - 1000);
        set_env_size(v);
        break;
    }
    case IMPORT_OTHER_DEVICE: forge_pack(pack, 1, "Another Accelerator 9000", 0); break;
    case IMPORT_CUT_PAYLOAD: forge_pack(pack, 1, NULL, 100); break;
    case IMPORT_CRASH: clops_cl.clCreateProgramWithBinary = binary_aborts; break;
    case IMPORT_HANG:
        clops_cl.clCreateProgramWithBinary = binary_hangs;
        setenv("CLOPS_IMPORT_LOAD_TIMEOUT", "1", 1);
        break;
    }
    clops_pack_report r;
    const clops_status st = clops_cache_import_pack_report(pack, &r);
    clops_cl = clops_cl_real;
    unsetenv("CLOPS_IMPORT_LOAD_TIMEOUT");
    dir_scan s = scan_dir();
    ck_assert_msg(s.temps == 0, "%s: %d temporary files left", label, s.temps);
    if (kind == IMPORT_FULL_DISK) {
        ck_assert_msg(st == CLOPS_ERROR_CACHE_IO && strstr(clops_last_error_message(), strerror(ENOSPC)) &&
                          strstr(clops_last_error_message(), "installed nothing"),
                      "%s: %s %s", label, clops_status_name(st), clops_last_error_message());
        ck_assert_msg(g_calls >= 2 && s.entries == 0, "%s: %d entries left after %d writes", label, s.entries,
                      g_calls);
        return;
    }
    ck_assert_msg(st == CLOPS_SUCCESS && r.entries == 2, "%s: %s (%s)", label, clops_status_name(st),
                  clops_last_error_message());
    const size_t want_rejected = kind == IMPORT_CUT_PAYLOAD ? 1 : kind >= IMPORT_CRASH ? 2 : 0;
    ck_assert_msg(r.imported + r.over_limit + r.other_device + r.rejected == 2 && r.duplicates == 0 &&
                      r.over_limit == (kind == IMPORT_OVER_LIMIT) && r.other_device == (kind == IMPORT_OTHER_DEVICE) &&
                      r.rejected == want_rejected,
                  "%s: imported %zu, over the bound %zu, other device %zu, rejected %zu", label, r.imported,
                  r.over_limit, r.other_device, r.rejected);
    ck_assert_msg(s.entries == (int)r.imported, "%s: %d entries installed, report says %zu", label, s.entries,
                  r.imported);
    const char *why = kind == IMPORT_CRASH ? "crashed" : kind == IMPORT_HANG ? "did not return" : "";
    if (r.rejected) ck_assert_msg(strstr(r.reason, why) != NULL, "%s: reason \"%s\"", label, r.reason);
    /* what was not installed is compiled again, correctly; what was is used */
    set_env_size("256M");
    clops_context *ctx = new_ctx();
    check_case(ctx, &CASE_A, CLOPS_BACKEND_OPENCL, scan_has(&s, names[0]) ? "disk cache" : "compiled", label);
    check_case(ctx, &CASE_D, CLOPS_BACKEND_OPENCL, scan_has(&s, names[1]) ? "disk cache" : "compiled", label);
}
END_TEST

/* ---- the directory's messages ---------------------------------------------------------------------------------- */

START_TEST(test_directory_messages)
{
    char file[PATH_MAX + 32], status[8192];
    snprintf(file, sizeof file, "%s/a-file", g_root);
    write_all(file, "x", 1);
    setenv("CLOPS_CACHE_DIR", file, 1);
    clops_cache_status(status, sizeof status);
    ck_assert_msg(strstr(status, strerror(ENOTDIR)) != NULL, "cache directory that is a file: \"%s\"", status);
    char long_dir[5001];
    memset(long_dir, 'd', sizeof long_dir - 1);
    long_dir[0] = '/';
    long_dir[sizeof long_dir - 1] = '\0';
    setenv("CLOPS_CACHE_DIR", long_dir, 1);
    clops_cache_status(status, sizeof status);
    ck_assert_msg(strstr(status, "5000 bytes") != NULL, "a 5,000-character CLOPS_CACHE_DIR: \"%s\"", status);
}
END_TEST

static Suite *files_suite(void)
{
    Suite *s = suite_create("cache_files");
    TCase *tc = cache_case(s, "hostile files and faults");
    tcase_add_loop_test(tc, test_export_fault_keeps_pack, 0, EXPORT_CASES);
    TC_TESTS(tc, test_killed_writer_leftovers, test_clear_empty_entries, test_fifos_do_not_hang, test_sparse_non_pack);
    tcase_add_loop_test(tc, test_import_transaction, 0, IMPORT_CASES);
    tcase_add_test(tc, test_directory_messages);
    return s;
}

int main(void)
{
    return cache_suite_main(files_suite());
}
