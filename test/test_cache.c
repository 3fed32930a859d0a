/*
 * test_cache.c - program cache entries: cold, disk and in-process loads,
 * corrupted entries, stale keys, concurrent writers, and unusable directories
 * and modes (CLOPS_CACHE=off|ro). Shared fixtures: cache_fixture.h.
 *
 * The concurrent-writers test forks processes that exec this same binary with
 * --cache-writer (an OpenCL runtime must not cross a fork()).
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

#define WRITERS 6

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
    tc_prepared p;
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
    tc_release(&p);
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


START_TEST(test_corrupt_entry)
{
    const int kind = _i;
    char label[96];
    snprintf(label, sizeof label, "corrupt entry: %s", corrupt_names[kind]);
    const built_entry e = build_entry(&CASE_A, "warming");
    const char *name = e.name, *path = e.path;
    listing before;
    list_entries(&before);
    size_t key_len = 0;
    const char *listed = listed_key(&before, name, &key_len);
    char *original_key = tc_memdup(listed, key_len);
    listing_free(&before);
    size_t len;
    unsigned char *data = read_all(path, &len);
    ck_assert_msg(len == e.bytes && len > ENTRY_HEADER_BYTES + 100, "entry of %zu bytes", len);
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
    case CORRUPT_LENGTH:
        put_le(data + 16, clops_get_u64(data + 16) + 1, 8);
        break;
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
    if (kind == CORRUPT_DRIVER_REFUSES)
        expect_listing(1, 0, 0, "the crafted entry");

    /* the bad entry is a miss: compiled again, correct, and replaced by a valid one */
    check_fresh(&CASE_A, "compiled", label);
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
    check_fresh(&CASE_A, "disk cache", "after the rewrite");
}
END_TEST

/* A directory where an entry file should be: never read, never replaced, no temporary left. */
START_TEST(test_entry_is_directory)
{
    const built_entry a = build_entry(&CASE_A, "warming");
    ck_assert(unlink(a.path) == 0);
    ck_assert(mkdir(a.path, 0700) == 0);
    for (int i = 0; i < 2; i++)
        check_fresh(&CASE_A, "compiled", "entry path is a directory");
    dir_scan s = scan_dir();
    ck_assert_msg(s.temps == 0, "%d temporary files left", s.temps);
    struct stat st;
    ck_assert(stat(a.path, &st) == 0 && S_ISDIR(st.st_mode));
}
END_TEST

/* ---- stale keys ---------------------------------------------------------------------------------------- */

/* A valid entry of program A under program B's file name (what a hash collision
 * or a stale file gives): a miss for B, which is rebuilt; A is not disturbed. */
START_TEST(test_stale_key_other_program)
{
    const built_entry a = build_entry(&CASE_A, "warming A"), b = build_entry(&CASE_B, "warming B");
    size_t len;
    unsigned char *data = read_all(a.path, &len);
    write_all(b.path, data, len);
    free(data);
    expect_listing(2, 0, 1, "crafted directory");

    clops_context *c = new_ctx();
    check_case(c, &CASE_B, CLOPS_BACKEND_OPENCL, "compiled", "B's file holds A's entry");
    check_case(c, &CASE_A, CLOPS_BACKEND_OPENCL, "disk cache", "A untouched");
    expect_clean_cache(2, "after rebuilding B"); /* B's file is B's again */
    drop_ctx(c);
    check_fresh(&CASE_B, "disk cache", "B rebuilt");
}
END_TEST

/* A valid entry under the right file name whose key differs only in the clops
 * version line: framed by hand (header, key, payload, FNV-1a checksum). */
START_TEST(test_stale_key_version)
{
    const built_entry a = build_entry(&CASE_A, "warming");
    size_t len;
    unsigned char *data = read_all(a.path, &len);
    const uint32_t klen = clops_get_u32(data + 12);
    char *key = (char *)data + ENTRY_HEADER_BYTES;
    char *ver = memmem(key, klen, "\nclops " CLOPS_VERSION_STRING "\n", strlen(CLOPS_VERSION_STRING) + 8);
    ck_assert_msg(ver != NULL, "the key has no \"clops %s\" line", CLOPS_VERSION_STRING);
    ver[7] = ver[7] == '9' ? '8' : '9'; /* another version of the same length */
    const size_t plen = len - ENTRY_HEADER_BYTES - klen;
    const uint64_t sum = clops_fnv1a(clops_fnv1a(CLOPS_FNV_SEED, key, klen), key + klen, plen);
    put_le(data + 24, sum, 8);
    write_all(a.path, data, len);
    free(data);
    expect_listing(1, 0, 1, "crafted entry");

    check_fresh(&CASE_A, "compiled", "stale version in the key");
    expect_clean_cache(1, "stale entry replaced");
}
END_TEST

/* CLOPS_DISABLE is part of the device identity: an entry built without it is
 * not used with it, and both entries live side by side. */
START_TEST(test_stale_key_identity)
{
    build_entry(&CASE_A, "warming");
    setenv("CLOPS_DISABLE", "fp64", 1);
    check_fresh(&CASE_A, "compiled", "CLOPS_DISABLE=fp64");
    expect_clean_cache(2, "two identities");
    listing l;
    list_entries(&l);
    int with_fp64 = 0;
    for (size_t i = 0; i < l.n; i++)
        with_fp64 += memmem(l.key[i], l.key_len[i], "disabled: fp64\n", 15) != NULL;
    ck_assert_msg(with_fp64 == 1, "%d entries with \"disabled: fp64\" in the key, want 1", with_fp64);
    listing_free(&l);
    check_fresh(&CASE_A, "disk cache", "CLOPS_DISABLE=fp64, warm");
    unsetenv("CLOPS_DISABLE");
    check_fresh(&CASE_A, "disk cache", "no CLOPS_DISABLE, warm");
}
END_TEST

/* ---- concurrent writers ----------------------------------------------------------------------------- */

static const tc_case *const writer_cases[] = {&CASE_A, &CASE_B, &CASE_D};
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
        tc_prepared p;
        if (tc_prepare(&p, writer_cases[i], tc_seed_of(writer_cases[i]->name)) != 0)
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
        tc_release(&p);
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
    check_fresh(&CASE_A, "compiled", "cache on");
    setenv("CLOPS_CACHE", "off", 1);
    check_fresh(&CASE_A, "compiled", "CLOPS_CACHE=off, warm directory");
}
END_TEST

START_TEST(test_cache_read_only)
{
    const built_entry a = build_entry(&CASE_A, "warming");
    const char *pa = a.path;
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
    check_fresh(&CASE_B, "compiled", "CLOPS_CACHE=ro, still cold");

    /* read-only never removes, even a bad entry */
    write_all(pa, "CLOPSBIN", 8);
    check_fresh(&CASE_A, "compiled", "CLOPS_CACHE=ro, corrupt entry");
    struct stat st;
    ck_assert_msg(stat(pa, &st) == 0 && st.st_size == 8, "CLOPS_CACHE=ro removed or rewrote a bad entry");

    /* maintenance that writes is refused; listing works */
    size_t removed = 99, n = 0;
    ck_assert_int_eq(clops_cache_clear_all(&removed), CLOPS_ERROR_CACHE_UNAVAILABLE);
    ck_assert_int_eq(clops_cache_prune(&removed), CLOPS_ERROR_CACHE_UNAVAILABLE);
    char pack[PATH_MAX + 16];
    snprintf(pack, sizeof pack, "%s/pack", g_root);
    ck_assert_int_eq(clops_cache_import_pack(pack, &n), CLOPS_ERROR_CACHE_UNAVAILABLE);
    expect_listing(1, 1, 0, "ro listing");

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

/* ---- suite ---------------------------------------------------------------------------------------------------- */

static Suite *cache_suite(void)
{
    Suite *s = suite_create("cache");
    TCase *tc;
    tc = cache_case(s, "entries");
    tcase_add_test(tc, test_cold_disk_inprocess);
    tcase_add_loop_test(tc, test_corrupt_entry, 0, CORRUPT_CASES);
    TC_TESTS(tc, test_entry_is_directory, test_stale_key_other_program, test_stale_key_version, test_stale_key_identity,
             test_concurrent_writers);

    tc = cache_case(s, "directory");
    TC_TESTS(tc, test_dir_under_regular_file, test_dir_is_regular_file, test_missing_dir_created, test_cache_off,
             test_cache_read_only);
    return s;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--cache-writer") == 0)
        return writer_child(atoi(argv[2]), atoi(argv[3]));
    return cache_suite_main(cache_suite());
}
