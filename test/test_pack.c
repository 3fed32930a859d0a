/*
 * test_pack.c - kernel packs against hostile files and callers (issue 24):
 * import installs exactly the bytes it checked, although the pack is rewritten
 * while it is checked or between its two reads, and says so when its private
 * copy cannot be written (N6); it copies only what it may install: nothing for
 * a pack of other devices' entries, of entries already installed or too large
 * for the cache's bound, under a file size limit that any copy would pass; the
 * _with_options form of import reads no environment, its child included (N7);
 * import's duplicate check does O(n log n) compares whatever the keys (crafted
 * keys that made the old hash set probe quadratically included), binaries that
 * crash or hang the loader cost at most CLOPS_PACK_MAX_LOAD_FAILURES children
 * or time limits, and a pack holds at most CLOPS_PACK_MAX_ENTRIES, on import
 * and on export (CLOPS_ERROR_BAD_PACK; adding binaries: test_pack_add.c) (N9);
 * export on a live cache leaves out an entry removed while it runs, and its
 * count says what it holds, or the export fails cleanly if the count cannot be
 * patched (N19). Faults and rewrites happen at clops's own seams (cl_api.h's table,
 * the pack's name-compare counter), never by racing; the copy's failure comes
 * from a real file size limit. Shared fixtures: cache_fixture.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache_fixture.h"
#include "store/pack.h"
#include "test_fs.h"

/* Variables these tests set beyond the cache fixture's, restored by the teardown. */
static const char *const extra_env[] = {"CLOPS_TIMEOUT", "CLOPS_IMPORT_LOAD_TIMEOUT", "CLOPS_DEVICE",
                                        "CLOPS_FALLBACK", "CLOPS_TUNE"};
#define NUM_EXTRA (sizeof extra_env / sizeof extra_env[0])
static char *extra_saved[NUM_EXTRA];
static int extra_was_set[NUM_EXTRA];

static void pack_setup(void)
{
    tc_env_save(extra_env, NUM_EXTRA, extra_saved, extra_was_set, 0);
    setup();
}

static void pack_teardown(void)
{
    teardown();
    tc_env_restore(extra_env, NUM_EXTRA, extra_saved, extra_was_set);
}

/* ---- packs as bytes ------------------------------------------------------------------------------------------ */

/* Entry `which` of the pack in `pack` (`len` bytes): its offset and length. */
static size_t pack_entry(const unsigned char *pack, size_t len, uint64_t which, size_t *entry_len)
{
    ck_assert(len >= 16 && memcmp(pack, "CLOPSPAK", 8) == 0 && which < clops_get_u64(pack + 8));
    size_t pos = 16;
    for (uint64_t i = 0;; i++) {
        ck_assert(pos + 8 <= len);
        const size_t elen = (size_t)clops_get_u64(pack + pos);
        ck_assert(pos + 8 + elen <= len);
        if (i == which) {
            *entry_len = elen;
            return pos + 8;
        }
        pos += 8 + elen;
    }
}

/* The cache file name of an entry: the hash of its key. */
static void entry_name(const unsigned char *e, char *out, size_t size)
{
    const size_t klen = clops_get_u32(e + 12);
    snprintf(out, size, "%016llx.bin", (unsigned long long)clops_fnv1a(CLOPS_FNV_SEED, e + 32, klen));
}

/* An entry for `key` with an empty payload, appended at `out` (CLOPS_CACHE_ENTRY_HEADER_BYTES + key). */
static size_t put_entry(unsigned char *out, const char *key)
{
    const size_t klen = strlen(key);
    put_le(out, CLOPS_CACHE_ENTRY_HEADER_BYTES + klen, 8);
    clops_cache_entry_header(out + 8, (const unsigned char *)key, klen, NULL, 0);
    memcpy(out + 8 + CLOPS_CACHE_ENTRY_HEADER_BYTES, key, klen);
    return 8 + CLOPS_CACHE_ENTRY_HEADER_BYTES + klen;
}

/* An entry for `key` (`klen` bytes) with `plen` bytes of payload, appended at
 * `out` with its length in front; returns the bytes written. */
static size_t put_entry_with(unsigned char *out, const void *key, size_t klen, const void *payload, size_t plen)
{
    put_le(out, CLOPS_CACHE_ENTRY_HEADER_BYTES + klen + plen, 8);
    clops_cache_entry_header(out + 8, key, klen, payload, plen);
    memcpy(out + 8 + CLOPS_CACHE_ENTRY_HEADER_BYTES, key, klen);
    if (plen) memcpy(out + 8 + CLOPS_CACHE_ENTRY_HEADER_BYTES + klen, payload, plen);
    return 8 + CLOPS_CACHE_ENTRY_HEADER_BYTES + klen + plen;
}

/* Runs the import with the process's file size limit at 64 bytes (EFBIG, not
 * SIGXFSZ): any copy of an entry, or any install, would fail. */
static clops_status import_under_fsize_limit(const clops_context_options *o, const char *pack, clops_pack_report *r)
{
    struct rlimit old;
    ck_assert(getrlimit(RLIMIT_FSIZE, &old) == 0);
    struct rlimit small = {64, old.rlim_max};
    void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
    ck_assert(setrlimit(RLIMIT_FSIZE, &small) == 0);
    const clops_status st = clops_cache_import_pack_report_with_options(o, pack, r);
    ck_assert(setrlimit(RLIMIT_FSIZE, &old) == 0);
    signal(SIGXFSZ, was);
    return st;
}

/* ---- N6: the bytes checked are the bytes installed ------------------------------------------------------------ */

static char g_pack[PATH_MAX + 32];

/* Overwrites every entry of the pack in place with the same key and an
 * all-zero payload of the same length, checksum recomputed, as the review's
 * forger did (inside the import's child: _exit on a failure). */
static void rewrite_pack(void)
{
    size_t len;
    unsigned char *p = read_all(g_pack, &len);
    for (uint64_t i = 0; i < clops_get_u64(p + 8); i++) {
        size_t elen;
        unsigned char *en = p + pack_entry(p, len, i, &elen);
        const size_t klen = clops_get_u32(en + 12), plen = (size_t)clops_get_u64(en + 16);
        memset(en + 32 + klen, 0, plen);
        put_le(en + 24, clops_fnv1a(clops_fnv1a(CLOPS_FNV_SEED, en + 32, klen), en + 32 + klen, plen), 8);
    }
    const int fd = open(g_pack, O_WRONLY);
    if (fd < 0 || pwrite(fd, p, len, 0) != (ssize_t)len || close(fd) != 0) _exit(3);
    free(p);
}

/* Inside the import's loading child, at its first load (after it read the
 * first entry, before it read the second): rewrites the pack. Then loads as
 * the driver would. */
static cl_program rewrite_pack_then_load(cl_context c, cl_uint n, const cl_device_id *d, const size_t *l,
                                         const unsigned char **b, cl_int *bs, cl_int *e)
{
    static int done;
    if (!done++) rewrite_pack();
    return clops_cl_real.clCreateProgramWithBinary(c, n, d, l, b, bs, e);
}

/* The review rewrote a pack while import's children checked it: the rewritten,
 * unchecked binary was installed and every later run aborted in the driver. */
START_TEST(test_import_installs_checked_bytes)
{
    char names[2][32];
    make_pack(names);
    pack_path(g_pack, sizeof g_pack);
    size_t len;
    unsigned char *orig = read_all(g_pack, &len);
    clops_cl.clCreateProgramWithBinary = rewrite_pack_then_load;
    clops_pack_report r;
    const clops_status st = clops_cache_import_pack_report(g_pack, &r);
    clops_cl = clops_cl_real;
    size_t now_len;
    unsigned char *now = read_all(g_pack, &now_len);
    ck_assert_msg(now_len == len && memcmp(now, orig, len) != 0, "test bug: the pack was not rewritten");
    ck_assert_msg(st == CLOPS_SUCCESS && r.entries == 2 && r.imported == 2 && r.rejected == 0,
                  "%s (%s): %zu imported, %zu rejected (%s)", clops_status_name(st), clops_last_error_message(),
                  r.imported, r.rejected, r.reason);
    for (uint64_t i = 0; i < 2; i++) {
        size_t elen, flen;
        const unsigned char *e = orig + pack_entry(orig, len, i, &elen);
        char name[32], path[PATH_MAX + 64];
        entry_name(e, name, sizeof name);
        entry_file(name, path, sizeof path);
        unsigned char *installed = read_all(path, &flen);
        ck_assert_msg(flen == elen && memcmp(installed, e, elen) == 0,
                      "entry %llu (%s): the cache holds other bytes than the pack had when it was checked",
                      (unsigned long long)i + 1, name);
        free(installed);
    }
    expect_clean_cache(2, "imported from a pack rewritten during the check"); /* the private copy is gone too */
    clops_context *ctx = new_ctx();
    check_case(ctx, &CASE_A, CLOPS_BACKEND_OPENCL, "disk cache", "A after the rewrite");
    check_case(ctx, &CASE_D, CLOPS_BACKEND_OPENCL, "disk cache", "D after the rewrite");
    free(orig);
    free(now);
}
END_TEST

/* Inside the import's sorting child, as it makes its first context (after
 * pass 1 checked the pack, before pass 2 copies it): rewrites the pack. */
static cl_context rewrite_pack_then_context(const cl_context_properties *pr, cl_uint n, const cl_device_id *d,
                                            void(CL_CALLBACK *f)(const char *, const void *, size_t, void *), void *u,
                                            cl_int *e)
{
    static int done;
    if (!done++) rewrite_pack();
    return clops_cl_real.clCreateContext(pr, n, d, f, u, e);
}

/* The pack is rewritten between the read that checked it and the read that
 * copies it: pass 2 finds the entry changed (its checksum is not the one pass 1
 * saw) and the import installs nothing. */
START_TEST(test_import_pack_changed_before_copy)
{
    char names[2][32];
    make_pack(names);
    pack_path(g_pack, sizeof g_pack);
    clops_cl.clCreateContext = rewrite_pack_then_context;
    clops_pack_report r;
    const clops_status st = clops_cache_import_pack_report(g_pack, &r);
    clops_cl = clops_cl_real;
    ck_assert_msg(st == CLOPS_ERROR_BAD_PACK && strstr(clops_last_error_message(), "entry 1 (") &&
                      strstr(clops_last_error_message(), "changed while the pack was imported") &&
                      strstr(clops_last_error_message(), "installed nothing"),
                  "%s (%s)", clops_status_name(st), clops_last_error_message());
    expect_clean_cache(0, "an import whose pack changed before its copy");
}
END_TEST

static int create_enospc(const char *path, mode_t mode)
{
    (void)path, (void)mode;
    errno = ENOSPC;
    return -1;
}

/* The private copy cannot be written (here: past the process's file size
 * limit): a clear error, nothing installed, nothing left behind. */
START_TEST(test_import_copy_fails)
{
    char names[2][32];
    make_pack(names);
    pack_path(g_pack, sizeof g_pack);
    struct rlimit old;
    ck_assert(getrlimit(RLIMIT_FSIZE, &old) == 0);
    struct rlimit small = {64, old.rlim_max};
    void (*was)(int) = signal(SIGXFSZ, SIG_IGN); /* EFBIG instead of the signal */
    ck_assert(setrlimit(RLIMIT_FSIZE, &small) == 0);
    const clops_status st = clops_cache_import_pack_report(g_pack, NULL);
    ck_assert(setrlimit(RLIMIT_FSIZE, &old) == 0);
    signal(SIGXFSZ, was);
    ck_assert_msg(st == CLOPS_ERROR_CACHE_IO && strstr(clops_last_error_message(), "cannot copy entry 1") &&
                      strstr(clops_last_error_message(), strerror(EFBIG)) &&
                      strstr(clops_last_error_message(), "installed nothing"),
                  "%s (%s)", clops_status_name(st), clops_last_error_message());
    expect_clean_cache(0, "an import whose copy failed");

    /* The copy cannot even be created (through the file seam). */
    clops_cl.io_create = create_enospc;
    const clops_status st2 = clops_cache_import_pack_report(g_pack, NULL);
    clops_cl = clops_cl_real;
    ck_assert_msg(st2 == CLOPS_ERROR_CACHE_IO && strstr(clops_last_error_message(), "cannot create a file in") &&
                      strstr(clops_last_error_message(), strerror(ENOSPC)),
                  "%s (%s)", clops_status_name(st2), clops_last_error_message());
    expect_clean_cache(0, "an import whose copy could not be created");
}
END_TEST

/* ---- N7: with options, no environment ------------------------------------------------------------------------- */

/* Options naming the test's cache, with `disable`. */
static clops_context_options cache_options(unsigned disable)
{
    clops_context_options o;
    ck_assert_int_eq(clops_context_options_init(&o, sizeof o), CLOPS_SUCCESS);
    o.cache_dir = g_dir;
    o.disable = disable;
    return o;
}

static void expect_imported(const clops_context_options *o, const char *pack, size_t want, const char *label)
{
    clops_pack_report r;
    const clops_status st = clops_cache_import_pack_report_with_options(o, pack, &r);
    ck_assert_msg(st == CLOPS_SUCCESS && r.entries == want && r.imported == want,
                  "%s: %s (%s): %zu of %zu imported, %zu for another device, %zu rejected", label,
                  clops_status_name(st), clops_last_error_message(), r.imported, r.entries, r.other_device,
                  r.rejected);
}

/* The review: a bad CLOPS_TIMEOUT made the child's device list fail and every
 * entry "another device"; the child took CLOPS_DISABLE from the environment, so
 * a pack made with the options' mask never matched. */
START_TEST(test_import_with_options_reads_no_environment)
{
    char names[2][32], pack[PATH_MAX + 32];
    pack_path(pack, sizeof pack);
    setenv("CLOPS_DISABLE", "fp64", 1); /* entries whose identity carries the mask */
    make_pack(names);
    unsetenv("CLOPS_DISABLE");
    setenv("CLOPS_TIMEOUT", "junk", 1);
    setenv("CLOPS_DEVICE", "gpu", 1);
    setenv("CLOPS_DISABLE", "everything", 1);
    setenv("CLOPS_CACHE_MAX_SIZE", "lots", 1);
    setenv("CLOPS_IMPORT_LOAD_TIMEOUT", "abc", 1);
    clops_context_options o = cache_options(CLOPS_CAPABILITY_FP64);
    expect_imported(&o, pack, 2, "mask fp64 in the options, junk in the environment");
    /* The plain form reads it (CLOPS_DEVICE first). */
    ck_assert_int_eq(clops_cache_import_pack_report(pack, NULL), CLOPS_ERROR_INVALID_DEVICE_SELECTION);

    /* The other way round: the environment's valid mask is not the options'. */
    unsetenv("CLOPS_TIMEOUT");
    unsetenv("CLOPS_DEVICE");
    unsetenv("CLOPS_DISABLE");
    unsetenv("CLOPS_CACHE_MAX_SIZE");
    unsetenv("CLOPS_IMPORT_LOAD_TIMEOUT");
    size_t n = 0;
    ck_assert_int_eq(clops_cache_clear_all(&n), CLOPS_SUCCESS);
    ck_assert_uint_eq(n, 2);
    make_pack(names); /* no mask */
    setenv("CLOPS_DISABLE", "fp64", 1);
    o = cache_options(0);
    expect_imported(&o, pack, 2, "no mask in the options, fp64 in the environment");
}
END_TEST

/* The review: import copied the whole pack into the cache directory before it
 * decided anything, so a 4 MiB pack of other devices' entries under
 * `ulimit -f 2048` was killed by SIGXFSZ, and re-importing an installed pack
 * rewrote it all. Now nothing is copied for entries for no device here, entries
 * already installed or entries that cannot fit under the cache's bound: each
 * import below succeeds under a 64-byte file size limit. */
START_TEST(test_import_copies_only_what_it_may_install)
{
    char pack[PATH_MAX + 32];
    pack_path(pack, sizeof pack);
    clops_context_options o = cache_options(0);
    clops_pack_report r;
    /* Four entries of 64 KiB for a device this machine does not have. */
    static unsigned char payload[64 << 10];
    memset(payload, 0x5A, sizeof payload);
    unsigned char *p = malloc(16 + 4 * (8 + CLOPS_CACHE_ENTRY_HEADER_BYTES + 64 + sizeof payload));
    ck_assert(p != NULL);
    memcpy(p, "CLOPSPAK", 8);
    put_le(p + 8, 4, 8);
    size_t len = 16;
    for (int i = 0; i < 4; i++) {
        char key[64];
        const int klen = snprintf(key, sizeof key, "clops-cache-format 1\nclops 0.0.0\nanother device %d\n", i);
        len += put_entry_with(p + len, key, (size_t)klen, payload, sizeof payload);
    }
    write_all(pack, p, len);
    free(p);
    clops_status st = import_under_fsize_limit(&o, pack, &r);
    ck_assert_msg(st == CLOPS_SUCCESS && r.entries == 4 && r.other_device == 4 && r.imported == 0,
                  "other devices' entries: %s (%s): %zu of %zu for another device", clops_status_name(st),
                  clops_last_error_message(), r.other_device, r.entries);
    expect_clean_cache(0, "a pack of other devices' entries");

    /* A pack already installed: every entry a duplicate, nothing copied again. */
    char names[2][32];
    make_pack(names);
    expect_imported(&o, pack, 2, "the first import");
    st = import_under_fsize_limit(&o, pack, &r);
    ck_assert_msg(st == CLOPS_SUCCESS && r.entries == 2 && r.duplicates == 2 && r.imported == 0,
                  "re-import: %s (%s): %zu duplicates", clops_status_name(st), clops_last_error_message(),
                  r.duplicates);
    expect_clean_cache(2, "a re-imported pack");

    /* Entries larger than the room under the bound: over the limit, never copied. */
    size_t n = 0;
    ck_assert_int_eq(clops_cache_clear_all(&n), CLOPS_SUCCESS);
    o.cache_max_bytes = 100;
    st = import_under_fsize_limit(&o, pack, &r);
    ck_assert_msg(st == CLOPS_SUCCESS && r.entries == 2 && r.over_limit == 2 && r.imported == 0,
                  "a 100-byte bound: %s (%s): %zu over the limit", clops_status_name(st), clops_last_error_message(),
                  r.over_limit);
    expect_clean_cache(0, "a pack over the bound");
}
END_TEST

/* ---- N9: linear work, bounded entries -------------------------------------------------------------------------- */

/* The slot of a key's hash in the review's hash set of names (item hashes folded
 * to 17 bits for a pack of 50,000 entries, then linear probing). */
static uint32_t old_slot(const char *key)
{
    const uint64_t h = clops_fnv1a(CLOPS_FNV_SEED, key, strlen(key));
    return (uint32_t)((h ^ h >> 32) & ((1u << 17) - 1));
}

/* Imports a pack of 50,000 entries, each of 25,000 keys twice (25,000
 * duplicates within the pack), none for a device here: every entry is decided,
 * and the duplicate check's name compares stay within 2 n log2 n. With
 * `crafted`, every key lands in the first 1,024 of the old set's 131,072 slots:
 * one run of occupied slots, in which the old set compared each key with about
 * every earlier one (hundreds of millions of compares; 160,000 ordinary entries
 * took it 35 s before the hash set). */
static void import_many(bool crafted)
{
    static const size_t N = 50000, DISTINCT = 25000;
    const size_t room = 16 + (size_t)N * (8 + CLOPS_CACHE_ENTRY_HEADER_BYTES + 40);
    unsigned char *p = malloc(room);
    char(*keys)[40] = malloc(DISTINCT * sizeof *keys);
    ck_assert(p != NULL && keys != NULL);
    for (size_t i = 0, tries = 0; i < DISTINCT; tries++) {
        snprintf(keys[i], sizeof *keys, "test_pack many entries %zu", tries);
        if (!crafted || old_slot(keys[i]) < 1024) i++;
    }
    memcpy(p, "CLOPSPAK", 8);
    put_le(p + 8, N, 8);
    size_t len = 16;
    for (size_t i = 0; i < N; i++) len += put_entry(p + len, keys[i % DISTINCT]);
    free(keys);
    char pack[PATH_MAX + 32];
    pack_path(pack, sizeof pack);
    write_all(pack, p, len);
    free(p);
    clops_pack_name_compares = 0;
    clops_pack_report r;
    const clops_status st = clops_cache_import_pack_report(pack, &r);
    ck_assert_msg(st == CLOPS_SUCCESS && r.entries == N && r.duplicates == N - DISTINCT &&
                      r.other_device == DISTINCT && r.imported == 0 && r.rejected == 0,
                  "%s (%s): %zu entries, %zu duplicates, %zu other device, %zu imported, %zu rejected",
                  clops_status_name(st), clops_last_error_message(), r.entries, r.duplicates, r.other_device,
                  r.imported, r.rejected);
    /* Sorting n names compares at least n - 1 pairs and, in any O(n log n) sort,
     * no more than a small multiple of n log2 n (16 for 50,000). */
    ck_assert_msg(clops_pack_name_compares >= N - 1 && clops_pack_name_compares <= 2ull * N * 16,
                  "%s keys: %llu name comparisons for %zu entries", crafted ? "crafted" : "ordinary",
                  clops_pack_name_compares, N);
    expect_clean_cache(0, "a pack of 50,000 entries for no device here");
}

START_TEST(test_import_many_entries)
{
    import_many(false);
    import_many(true);
}
END_TEST

/* A pack of 10 entries for this device whose binaries crash or hang the loader
 * (the 1st, 3rd, ... load kills its child, the 2nd, 4th, ... never returns):
 * after CLOPS_PACK_MAX_LOAD_FAILURES (4) such entries the other 6 are not tried,
 * all 10 are rejected, and the report says so. The review: a fresh child per
 * crashing entry (65,536 took 50 min) and the full time limit per hung one. */
static char g_loads[PATH_MAX + 32];

static cl_program crash_or_hang(cl_context c, cl_uint n, const cl_device_id *d, const size_t *l,
                                const unsigned char **b, cl_int *bs, cl_int *e)
{
    (void)c, (void)n, (void)d, (void)l, (void)b, (void)bs, (void)e;
    const int fd = open(g_loads, O_WRONLY | O_APPEND | O_CREAT, 0600);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || write(fd, "x", 1) != 1) _exit(4);
    close(fd);
    if (st.st_size % 2 == 0) raise(SIGKILL);
    for (;;) pause(); /* until the parent's time limit kills it */
}

START_TEST(test_import_load_failure_budget)
{
    char names[2][32];
    make_pack(names);
    pack_path(g_pack, sizeof g_pack);
    size_t len, elen;
    unsigned char *orig = read_all(g_pack, &len);
    const unsigned char *e = orig + pack_entry(orig, len, 0, &elen);
    const size_t klen = clops_get_u32(e + 12), plen = (size_t)clops_get_u64(e + 16);
    unsigned char *p = malloc(16 + 10 * (8 + elen + 32));
    ck_assert(p != NULL);
    memcpy(p, "CLOPSPAK", 8);
    put_le(p + 8, 10, 8);
    size_t at = 16;
    for (int i = 0; i < 10; i++) { /* entry 1's key and binary, each key made its own */
        char *key = malloc(klen + 32);
        ck_assert(key != NULL);
        memcpy(key, e + 32, klen);
        const int extra = snprintf(key + klen, 32, "\n// variant %d", i);
        at += put_entry_with(p + at, key, klen + (size_t)extra, e + 32 + klen, plen);
        free(key);
    }
    write_all(g_pack, p, at);
    free(p);
    free(orig);
    snprintf(g_loads, sizeof g_loads, "%s/loads", g_root);
    setenv("CLOPS_IMPORT_LOAD_TIMEOUT", "1", 1);
    clops_cl.clCreateProgramWithBinary = crash_or_hang;
    clops_pack_report r;
    const clops_status st = clops_cache_import_pack_report(g_pack, &r);
    clops_cl = clops_cl_real;
    ck_assert_msg(st == CLOPS_SUCCESS && r.entries == 10 && r.rejected == 10 && r.imported == 0 &&
                      strstr(r.reason, "entry 1 (") && strstr(r.reason, "crashed") &&
                      strstr(r.reason, "6 entries not tried after 4"),
                  "%s (%s): %zu of %zu rejected (%s)", clops_status_name(st), clops_last_error_message(), r.rejected,
                  r.entries, r.reason);
    size_t loads;
    free(read_all(g_loads, &loads));
    ck_assert_msg(loads == CLOPS_PACK_MAX_LOAD_FAILURES, "%zu binaries were loaded", loads);
    expect_clean_cache(0, "a pack of crashing and hanging binaries");
}
END_TEST

/* Issue 32 P5: a pack holding one valid entry 1,000 times, imported into an
 * empty cache, reported its 999 repeats as "already in the cache". The report
 * now counts them apart (within_pack), `duplicates` still counts both kinds,
 * and a second import finds the one entry in the cache. */
START_TEST(test_import_duplicates_within_pack)
{
    static const size_t N = 1000;
    char names[2][32];
    make_pack(names); /* clears the directory after the export */
    pack_path(g_pack, sizeof g_pack);
    size_t len, elen;
    unsigned char *orig = read_all(g_pack, &len);
    const size_t at0 = pack_entry(orig, len, 0, &elen);
    unsigned char *p = malloc(16 + N * (8 + elen));
    ck_assert(p != NULL);
    memcpy(p, "CLOPSPAK", 8);
    put_le(p + 8, N, 8);
    size_t at = 16;
    for (size_t i = 0; i < N; i++) {
        memcpy(p + at, orig + at0 - 8, 8 + elen);
        at += 8 + elen;
    }
    write_all(g_pack, p, at);
    free(p);
    free(orig);
    expect_clean_cache(0, "before importing the pack of repeats");
    clops_pack_report r;
    clops_status st = clops_cache_import_pack_report(g_pack, &r);
    ck_assert_msg(st == CLOPS_SUCCESS && r.entries == N && r.imported == 1 && r.duplicates == N - 1 &&
                      r.within_pack == N - 1 && r.other_device == 0 && r.rejected == 0,
                  "into an empty cache: %s (%s): %zu entries, %zu imported, %zu duplicates, %zu within the pack",
                  clops_status_name(st), clops_last_error_message(), r.entries, r.imported, r.duplicates,
                  r.within_pack);
    expect_clean_cache(1, "the pack of repeats imported");
    st = clops_cache_import_pack_report(g_pack, &r);
    ck_assert_msg(st == CLOPS_SUCCESS && r.entries == N && r.imported == 0 && r.duplicates == N &&
                      r.within_pack == N - 1,
                  "again: %s (%s): %zu entries, %zu imported, %zu duplicates, %zu within the pack",
                  clops_status_name(st), clops_last_error_message(), r.entries, r.imported, r.duplicates,
                  r.within_pack);
    expect_clean_cache(1, "the pack of repeats imported twice");
}
END_TEST

/* A pack announcing more than CLOPS_PACK_MAX_ENTRIES is refused before any entry
 * is read (a sparse file with room for all of them). */
START_TEST(test_import_entry_bound)
{
    char pack[PATH_MAX + 32];
    pack_path(pack, sizeof pack);
    const uint64_t n = CLOPS_PACK_MAX_ENTRIES + 1ull;
    unsigned char head[16];
    memcpy(head, "CLOPSPAK", 8);
    put_le(head + 8, n, 8);
    write_all(pack, head, sizeof head);
    ck_assert(truncate(pack, (off_t)(16 + n * (8 + CLOPS_CACHE_ENTRY_HEADER_BYTES))) == 0);
    const clops_status st = clops_cache_import_pack_report(pack, NULL);
    ck_assert_msg(st == CLOPS_ERROR_BAD_PACK && strstr(clops_last_error_message(), "65537 entries") &&
                      strstr(clops_last_error_message(), "65536 a pack may hold"),
                  "%s (%s)", clops_status_name(st), clops_last_error_message());
    expect_clean_cache(0, "a pack past the entry bound");
}
END_TEST

/* Export never writes a pack import would refuse: a cache of 65,537 valid
 * entries is refused with the reason and a status of its own kind
 * (CLOPS_ERROR_BAD_PACK: trying again will not help; it was CACHE_IO), and no
 * pack is written. */
START_TEST(test_export_entry_bound)
{
    ck_assert(mkdir(g_dir, 0700) == 0);
    const size_t n = CLOPS_PACK_MAX_ENTRIES + 1u;
    for (size_t i = 0; i < n; i++) {
        char key[48], name[32], path[PATH_MAX + 64];
        unsigned char e[8 + CLOPS_CACHE_ENTRY_HEADER_BYTES + sizeof key];
        snprintf(key, sizeof key, "test_pack export bound %zu", i);
        const size_t len = put_entry(e, key) - 8;
        entry_name(e + 8, name, sizeof name);
        entry_file(name, path, sizeof path);
        write_all(path, e + 8, len);
    }
    char pack[PATH_MAX + 32];
    pack_path(pack, sizeof pack);
    size_t count = 0;
    const clops_status st = clops_cache_export_pack(pack, &count);
    ck_assert_msg(st == CLOPS_ERROR_BAD_PACK && strstr(clops_last_error_message(), "65537 entries") &&
                      strstr(clops_last_error_message(), "65536 a pack may hold"),
                  "%s (%s), %zu exported", clops_status_name(st), clops_last_error_message(), count);
    ck_assert_msg(!exists(pack), "a pack was written");
}
END_TEST

/* ---- N19: export on a live cache ------------------------------------------------------------------------------- */

static char g_victim[PATH_MAX + 64];

/* io_write: before the pack's first bytes (its count, taken already), another
 * process's prune removes an entry. */
static ssize_t remove_then_write(int fd, const void *buf, size_t n)
{
    if (g_calls++ == 0) unlink(g_victim);
    return clops_cl_real.io_write(fd, buf, n);
}

START_TEST(test_export_skips_removed_entry)
{
    const built_entry a = build_entry(&CASE_A, "A"), d = build_entry(&CASE_D, "D");
    size_t dlen;
    unsigned char *dbytes = read_all(d.path, &dlen);
    char pack[PATH_MAX + 32];
    pack_path(pack, sizeof pack);
    snprintf(g_victim, sizeof g_victim, "%s", a.path);
    g_calls = 0;
    clops_cl.io_write = remove_then_write;
    size_t n = 0, removed = 0;
    clops_status st = clops_cache_export_pack_report_with_options(NULL, pack, &n, &removed);
    clops_cl = clops_cl_real;
    ck_assert_msg(st == CLOPS_SUCCESS && n == 1 && removed == 1, "%s (%s): %zu exported, %zu removed",
                  clops_status_name(st), clops_last_error_message(), n, removed);
    size_t len, elen;
    unsigned char *p = read_all(pack, &len);
    ck_assert_msg(clops_get_u64(p + 8) == 1 && len == 16 + 8 + dlen, "the pack says %llu entries in %zu bytes",
                  (unsigned long long)clops_get_u64(p + 8), len);
    const size_t at = pack_entry(p, len, 0, &elen);
    ck_assert(elen == dlen && memcmp(p + at, dbytes, dlen) == 0);
    free(p);
    free(dbytes);
    ck_assert_int_eq(temps_in(g_root, NULL, 0) + temps_in(g_dir, NULL, 0), 0);

    /* The plain call too (it failed: "removed or changed during the export"). */
    build_entry(&CASE_A, "A again");
    g_calls = 0;
    clops_cl.io_write = remove_then_write;
    st = clops_cache_export_pack(pack, &n);
    clops_cl = clops_cl_real;
    ck_assert_msg(st == CLOPS_SUCCESS && n == 1, "%s (%s): %zu exported", clops_status_name(st),
                  clops_last_error_message(), n);
    /* The pack imports whole. */
    ck_assert_int_eq(clops_cache_clear_all(&n), CLOPS_SUCCESS);
    expect_pack_call(clops_cache_import_pack, pack, 1, "import of the export that lost an entry");
}
END_TEST

/* io_write: an entry is removed before the pack's first bytes (as above), and
 * the write that patches the count at offset 8 fails for want of space. */
static ssize_t remove_then_fail_patch(int fd, const void *buf, size_t n)
{
    if (g_calls++ == 0) unlink(g_victim);
    if (n == 8 && lseek(fd, 0, SEEK_CUR) == 8) {
        errno = ENOSPC;
        return -1;
    }
    return clops_cl_real.io_write(fd, buf, n);
}

/* The count cannot be patched: the export fails with the system's reason (the
 * patch once went around the writer with a raw pwrite: a short write left
 * errno stale), the old pack stays byte for byte, no temporary file stays. */
START_TEST(test_export_count_patch_fails)
{
    const built_entry a = build_entry(&CASE_A, "A");
    build_entry(&CASE_D, "D");
    char pack[PATH_MAX + 32];
    pack_path(pack, sizeof pack);
    write_all(pack, "the old pack", 12);
    snprintf(g_victim, sizeof g_victim, "%s", a.path);
    g_calls = 0;
    clops_cl.io_write = remove_then_fail_patch;
    size_t n = 0, removed = 0;
    const clops_status st = clops_cache_export_pack_report_with_options(NULL, pack, &n, &removed);
    clops_cl = clops_cl_real;
    ck_assert_msg(st == CLOPS_ERROR_CACHE_IO && strstr(clops_last_error_message(), "write failed") &&
                      strstr(clops_last_error_message(), strerror(ENOSPC)),
                  "%s (%s)", clops_status_name(st), clops_last_error_message());
    size_t len;
    unsigned char *p = read_all(pack, &len);
    ck_assert_msg(len == 12 && memcmp(p, "the old pack", 12) == 0, "the old pack was changed");
    free(p);
    ck_assert_int_eq(temps_in(g_root, NULL, 0) + temps_in(g_dir, NULL, 0), 0);
}
END_TEST

/* A pack written to a FIFO has sent its count before the entries: an entry
 * removed after that fails the export, saying so, and never hangs. */
START_TEST(test_export_fifo_removed_entry)
{
    const built_entry a = build_entry(&CASE_A, "A");
    build_entry(&CASE_D, "D");
    char fifo[PATH_MAX + 32];
    snprintf(fifo, sizeof fifo, "%s/pack.fifo", g_root);
    ck_assert(mkfifo(fifo, 0600) == 0);
    fflush(NULL);
    const pid_t reader = fork();
    ck_assert(reader >= 0);
    if (reader == 0) { /* reads the FIFO to its end, touching nothing else */
        alarm(60);
        const int fd = open(fifo, O_RDONLY);
        char buf[4096];
        while (fd >= 0 && read(fd, buf, sizeof buf) > 0) {}
        _exit(fd >= 0 ? 0 : 1);
    }
    snprintf(g_victim, sizeof g_victim, "%s", a.path);
    g_calls = 0;
    clops_cl.io_write = remove_then_write;
    clops_status st = CLOPS_SUCCESS;
    for (int tries = 0; tries < 500; tries++) { /* the reader may not have opened its end yet */
        st = clops_cache_export_pack(fifo, NULL);
        if (st == CLOPS_SUCCESS || !strstr(clops_last_error_message(), "no process is reading")) break;
        usleep(10000);
    }
    clops_cl = clops_cl_real;
    ck_assert_msg(st == CLOPS_ERROR_CACHE_IO && strstr(clops_last_error_message(), "removed during the export") &&
                      strstr(clops_last_error_message(), "try again"),
                  "%s (%s)", clops_status_name(st), clops_last_error_message());
    int status;
    ck_assert(waitpid(reader, &status, 0) == reader && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pack");
    TCase *tc = tc_fixture_case(s, "hostile packs and callers", pack_setup, pack_teardown);
    TC_TESTS(tc, test_import_installs_checked_bytes, test_import_pack_changed_before_copy, test_import_copy_fails,
             test_import_with_options_reads_no_environment, test_import_copies_only_what_it_may_install,
             test_import_many_entries, test_import_load_failure_budget, test_import_entry_bound,
             test_export_entry_bound, test_export_skips_removed_entry,
             test_export_count_patch_fails, test_export_fifo_removed_entry, test_import_duplicates_within_pack);
    return cache_suite_main(s);
}
