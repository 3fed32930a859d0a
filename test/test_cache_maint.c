/*
 * test_cache_maint.c - the cache directory as a whole: the size bound and LRU
 * eviction, prune and clear, kernel packs (export, import, bad packs), a device
 * without a compiler, and file-system faults injected through the clops_cl seam
 * while entries are written. Shared fixtures: cache_fixture.h.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cache_fixture.h"
#include "reference.h"
#include "test_fs.h"

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
    snprintf(name, size, "%016llx.bin", (unsigned long long)clops_fnv1a(CLOPS_FNV_SEED, key, (size_t)klen));
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
    build_entry(&CASE_A, "a build under the bound");
    const dir_scan after = scan_dir();
    ck_assert_msg(!scan_has(&after, big), "the build did not evict the older entry");
    expect_clean_cache(1, "a build under the bound");
    check_fresh(&CASE_A, "disk cache", "the built entry was kept");
}
END_TEST

START_TEST(test_prune_and_clear_counts)
{
    const built_entry a = build_entry(&CASE_A, "A"), b = build_entry(&CASE_B, "B"), c = build_entry(&CASE_C, "C");
    age_file(a.path, 3000);
    age_file(b.path, 2000);
    size_t removed = 99;
    ck_assert_int_eq(clops_cache_prune(&removed), CLOPS_SUCCESS); /* default bound: 256M */
    ck_assert_msg(removed == 0, "prune under the bound removed %zu", removed);
    expect_clean_cache(3, "prune under the bound");

    set_max_size(c.bytes + 100);
    ck_assert_int_eq(clops_cache_prune(&removed), CLOPS_SUCCESS);
    ck_assert_msg(removed == 2, "prune to one entry removed %zu, want 2", removed);
    expect_only((const char *const[]){c.name}, 1, "pruned to the most recently used");
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
    check_fresh(&CASE_A, "compiled", "after clear");
}
END_TEST

/* ---- export and import ----------------------------------------------------------------------------------- */

START_TEST(test_export_import)
{
    char names[2][32];
    make_pack(names);
    char pack[PATH_MAX + 32];
    pack_path(pack, sizeof pack);
    expect_pack_call(clops_cache_import_pack, pack, 2, "clops_cache_import_pack");
    expect_only((const char *const[]){names[0], names[1]}, 2, "imported");
    expect_clean_cache(2, "imported");
    clops_context *ctx = new_ctx();
    check_case(ctx, &CASE_A, CLOPS_BACKEND_OPENCL, "disk cache", "imported A");
    check_case(ctx, &CASE_D, CLOPS_BACKEND_OPENCL, "disk cache", "imported D");
    drop_ctx(ctx);

    /* importing the same entries again installs nothing and says they were there */
    clops_pack_report r;
    clops_status st = clops_cache_import_pack_report(pack, &r);
    ck_assert_msg(st == CLOPS_SUCCESS && r.entries == 2 && r.imported == 0 && r.duplicates == 2 && r.rejected == 0 &&
                      r.other_device == 0 && r.over_limit == 0,
                  "re-import: %s, %zu entries, %zu imported, %zu duplicates", clops_status_name(st), r.entries,
                  r.imported, r.duplicates);
    expect_clean_cache(2, "re-imported");

    /* an empty cache exports an empty pack, which imports as nothing */
    size_t n = 0;
    ck_assert_int_eq(clops_cache_clear_all(&n), CLOPS_SUCCESS);
    char empty[PATH_MAX + 32];
    snprintf(empty, sizeof empty, "%s/empty.pack", g_root);
    expect_pack_call(clops_cache_export_pack, empty, 0, "empty export");
    expect_pack_call(clops_cache_import_pack, empty, 0, "empty import");
    expect_clean_cache(0, "empty pack");

    /* export skips invalid entries */
    expect_pack_call(clops_cache_import_pack, pack, 2, "import again");
    char bad[PATH_MAX + 64];
    snprintf(bad, sizeof bad, "%s/00000000deadbeef.bin", g_dir);
    write_all(bad, "CLOPSBIN garbage", 16);
    char again[PATH_MAX + 32];
    snprintf(again, sizeof again, "%s/again.pack", g_root);
    expect_pack_call(clops_cache_export_pack, again, 2, "export with an invalid entry");

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
    const uint64_t len1 = clops_get_u64(data + 16);
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
    /* a missing file is an I/O error with the system's reason, not "a bad pack" */
    const clops_status want = kind == PACK_MISSING ? CLOPS_ERROR_CACHE_IO : CLOPS_ERROR_BAD_PACK;
    ck_assert_msg(st == want, "import of a pack with %s: %s, want %s", pack_names[kind], clops_status_name(st),
                  clops_status_name(want));
    if (kind == PACK_MISSING)
        ck_assert_msg(strstr(clops_last_error_message(), "No such file or directory") != NULL, "message: %s",
                      clops_last_error_message());
    ck_assert_msg(n == 12345, "a failed import wrote the count %zu", n);
    /* nothing of a rejected pack is installed, not even its good entries */
    expect_clean_cache(0, pack_names[kind]);
    check_fresh(&CASE_A, "compiled", "after a rejected pack");
}
END_TEST

/* ---- no compiler ------------------------------------------------------------------------------------------- */

START_TEST(test_no_compiler_empty_cache)
{
    setenv("CLOPS_DISABLE", "compiler", 1);
    clops_context *ctx = new_ctx();
    const tc_case *cases[] = {&CASE_A, &CASE_B, &CASE_D};
    for (int i = 0; i < 3; i++) {
        tc_prepared p;
        prepare_ok(&p, cases[i]);
        clops_operator_info info;
        clops_operator *op = create_op(ctx, &p, &info, "no compiler, empty cache");
        expect_path(&p, &info, CLOPS_BACKEND_HOST, NULL, "no compiler, empty cache");
        ck_assert_msg(strstr(info.fallback_reason, "compiler") != NULL, "fallback_reason \"%s\" does not mention "
                      "the compiler", info.fallback_reason);
        run_and_compare(ctx, op, &p, "no compiler, host fallback");
        clops_operator_free(op);
        tc_release(&p);
    }
    expect_clean_cache(0, "no compiler wrote nothing");
}
END_TEST

/* An entry crafted for the no-compiler identity (a compiled entry whose key's
 * "disabled:" line is rewritten): loaded from disk, run on the device. */
START_TEST(test_no_compiler_crafted_entry)
{
    const built_entry a = build_entry(&CASE_A, "warming");
    listing l;
    list_entries(&l);
    size_t klen;
    const char *key = listed_key(&l, a.name, &klen);
    const char *line = memmem(key, klen, "\ndisabled: \n", 12);
    ck_assert_msg(line != NULL, "the key has no empty \"disabled:\" line");
    const size_t head = (size_t)(line - key) + 11, nk = klen + strlen("compiler");
    char *k2 = tc_malloc(nk);
    memcpy(k2, key, head);
    memcpy(k2 + head, "compiler", 8);
    memcpy(k2 + head + 8, key + head, klen - head);
    size_t len;
    unsigned char *data = read_all(a.path, &len);
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
    tc_prepared p;
    prepare_ok(&p, &CASE_B);
    clops_operator_info info;
    clops_operator *op = create_op(ctx, &p, &info, "no compiler, other program");
    expect_path(&p, &info, CLOPS_BACKEND_HOST, NULL, "no compiler, other program");
    run_and_compare(ctx, op, &p, "no compiler, other program");
    clops_operator_free(op);
    tc_release(&p);
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
        expect_pack_call(clops_cache_import_pack, pack, 2, "import");
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

/* write_enospc and write_half_then_enospc are the fixture's (cache_fixture.h). */

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

/* One injected fault: the seam calls it replaces (NULL: the real one). */
typedef struct fault_case {
    const char *name;
    ssize_t (*io_write)(int fd, const void *buf, size_t n);
    int (*io_rename)(const char *from, const char *to);
    int (*io_fsync)(int fd);
    int (*io_create)(const char *path, mode_t mode);
    int (*io_mkdir)(const char *path, mode_t mode);
    int counts;          /* the fault counts its calls in g_calls: the test must reach it */
    int removes_dir;     /* the cache directory is gone afterwards */
} fault_case;

static const fault_case faults[] = {
    {"write fails (ENOSPC)", .io_write = write_enospc},
    {"half written, then ENOSPC", .io_write = write_half_then_enospc, .counts = 1},
    {"write returns 0", .io_write = write_zero},
    {"rename fails (ENOENT)", .io_rename = rename_enoent},
    {"fsync fails (EIO)", .io_fsync = fsync_eio},
    {"creating the temporary file fails (ENOSPC)", .io_create = create_enospc},
    {"mkdir fails (EACCES)", .io_mkdir = mkdir_eacces},
    {"directory removed mid-write", .io_write = write_after_rmdir, .counts = 1, .removes_dir = 1},
};
#define FAULT_CASES (int)(sizeof faults / sizeof faults[0])

START_TEST(test_fault)
{
    const fault_case *f = &faults[_i];
    const char *label = f->name;
    g_calls = 0;
    if (f->io_write)
        clops_cl.io_write = f->io_write;
    if (f->io_rename)
        clops_cl.io_rename = f->io_rename;
    if (f->io_fsync)
        clops_cl.io_fsync = f->io_fsync;
    if (f->io_create)
        clops_cl.io_create = f->io_create;
    if (f->io_mkdir)
        clops_cl.io_mkdir = f->io_mkdir;
    clops_context *ctx = new_ctx();
    if (f->io_mkdir)
        ck_assert_msg(strncmp(clops_context_cache_status(ctx), "unavailable", 11) == 0 &&
                          strstr(clops_context_cache_status(ctx), strerror(EACCES)),
                      "mkdir failing: cache status \"%s\"", clops_context_cache_status(ctx));
    else
        ck_assert_msg(strstr(clops_context_cache_status(ctx), "read-write") != NULL, "cache status \"%s\"",
                      clops_context_cache_status(ctx));
    check_case(ctx, &CASE_A, CLOPS_BACKEND_OPENCL, "compiled", label);
    check_case(ctx, &CASE_D, CLOPS_BACKEND_OPENCL, "compiled", label);
    check_case(ctx, &CASE_A, CLOPS_BACKEND_OPENCL, "in-process", label);
    if (f->counts)
        ck_assert_msg(g_calls > 0, "%s: the fault was never reached", label);
    dir_scan s = scan_dir();
    ck_assert_msg(s.entries == 0 && s.temps == 0, "%s: %d entries and %d temporary files left", label, s.entries,
                  s.temps);
    if (f->removes_dir)
        ck_assert_msg(!s.present, "the removed directory came back");
    drop_ctx(ctx);

    /* the seam restored: the same programs compile (nothing was cached) and are stored */
    clops_cl = clops_cl_real;
    check_fresh(&CASE_A, "compiled", "after the fault");
    expect_clean_cache(1, "after the fault");
}
END_TEST

/* ---- what an export writes over ------------------------------------------------------------------------------ */

/* A failed export leaves the old pack byte for byte; a FIFO in place of the pack is refused, not replaced. */
START_TEST(test_export_keeps_target)
{
    build_entry(&CASE_A, "export: A");
    char pack[PATH_MAX + 32];
    pack_path(pack, sizeof pack);
    expect_pack_call(clops_cache_export_pack, pack, 1, "export: A");
    size_t n = 0;
    size_t old_len, new_len;
    unsigned char *old = read_all(pack, &old_len);

    clops_cl.io_write = write_enospc;
    clops_status st = clops_cache_export_pack(pack, &n);
    clops_cl = clops_cl_real;
    ck_assert_msg(st == CLOPS_ERROR_CACHE_IO, "export on a full disk: %s, want CLOPS_ERROR_CACHE_IO",
                  clops_status_name(st));
    unsigned char *now = read_all(pack, &new_len);
    ck_assert_msg(new_len == old_len && memcmp(now, old, old_len) == 0, "a failed export changed the old pack");
    free(now);
    free(old);
    ck_assert_int_eq(temps_in(g_root, NULL, 0), 0);

    char fifo[PATH_MAX + 32];
    snprintf(fifo, sizeof fifo, "%s/pack.fifo", g_root);
    ck_assert_msg(mkfifo(fifo, 0600) == 0, "mkfifo: %s", strerror(errno));
    st = clops_cache_export_pack(fifo, &n);
    ck_assert_msg(st == CLOPS_ERROR_CACHE_IO, "export to a FIFO: %s, want CLOPS_ERROR_CACHE_IO", clops_status_name(st));
    struct stat sb;
    ck_assert_msg(stat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode), "the FIFO was replaced");
    ck_assert_int_eq(temps_in(g_root, NULL, 0), 0);
}
END_TEST

/* ---- suite ---------------------------------------------------------------------------------------------------- */

static Suite *maint_suite(void)
{
    Suite *s = suite_create("cache_maint");
    TCase *tc;
    tc = cache_case(s, "maintenance");
    TC_TESTS(tc, test_eviction, test_prune_and_clear_counts, test_export_import);
    tcase_add_loop_test(tc, test_bad_pack, 0, PACK_CASES);
    tcase_add_test(tc, test_export_keeps_target);

    tc = cache_case(s, "no_compiler");
    TC_TESTS(tc, test_no_compiler_empty_cache, test_no_compiler_crafted_entry);
    tcase_add_loop_test(tc, test_no_compiler_warm_cache, 0, 2);

    tc = cache_case(s, "faults");
    tcase_add_loop_test(tc, test_fault, 0, FAULT_CASES);
    return s;
}

int main(void)
{
    return cache_suite_main(maint_suite());
}
