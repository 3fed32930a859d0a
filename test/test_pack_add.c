/*
 * test_pack_add.c - adding device binaries to a kernel pack
 * (clops_pack_add_binaries, clops_pack_add_binary its case of one), on the
 * default device: a batch replaces the old entries with its keys, the last of
 * its own duplicates wins, the entry limit (CLOPS_PACK_MAX_ENTRIES) counts the
 * pack as it would be afterwards and is refused before a byte is written, and
 * a bad item (NULL, empty or oversized binary, unknown source) is refused by
 * its index with the pack unchanged and no file left behind; adders running at
 * once on one pack (processes and threads) keep every entry (R8). Shared
 * fixtures: cache_fixture.h.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache_fixture.h"
#include "store/pack.h"

/* ---- packs as entries ---------------------------------------------------------------------------------------- */

/* The payload of the entry of `pack` (`len` bytes) whose key has the build
 * options `options` (NULL: none has), and how many such entries there are. */
static const unsigned char *payload_for(const unsigned char *pack, size_t len, const char *options, size_t *plen,
                                        int *matches)
{
    char want[64];
    snprintf(want, sizeof want, "\noptions: %s\n", options);
    ck_assert(len >= 16 && memcmp(pack, "CLOPSPAK", 8) == 0);
    const unsigned char *found = NULL;
    *matches = 0;
    size_t pos = 16;
    for (uint64_t i = 0; i < clops_get_u64(pack + 8); i++) {
        ck_assert(pos + 8 <= len);
        const size_t elen = (size_t)clops_get_u64(pack + pos);
        const unsigned char *key, *payload;
        size_t klen, n;
        ck_assert(pos + 8 + elen <= len && clops_cache_entry_parse(pack + pos + 8, elen, &key, &klen, &payload, &n));
        if (memmem(key, klen, want, strlen(want))) {
            found = payload, *plen = n;
            ++*matches;
        }
        pos += 8 + elen;
    }
    ck_assert_msg(pos == len, "trailing bytes after the pack's entries");
    return found;
}

/* The pack holds the entry for depth_space.cl `options` once, with `payload`. */
static void expect_entry(const char *pack, const char *options, const char *payload)
{
    size_t len, plen = 0;
    int matches;
    unsigned char *p = read_all(pack, &len);
    const unsigned char *got = payload_for(p, len, options, &plen, &matches);
    ck_assert_msg(matches == 1 && plen == strlen(payload) && memcmp(got, payload, plen) == 0,
                  "%s: %d entries, payload '%.*s', not '%s'", options, matches, (int)plen, got ? (const char *)got : "",
                  payload);
    free(p);
}

static clops_pack_binary bin(const char *options, const char *payload)
{
    return (clops_pack_binary){"depth_space.cl", options, payload, strlen(payload)};
}

/* A batch added to a pack that must succeed with `want` entries. */
static void add_ok(const char *pack, const clops_pack_binary *b, size_t n, size_t want)
{
    size_t count = 0;
    const clops_status st = clops_pack_add_binaries(pack, 0, b, n, &count);
    ck_assert_msg(st == CLOPS_SUCCESS && count == want, "%zu binaries: %s (%s), %zu entries, not %zu", n,
                  clops_status_name(st), clops_last_error_message(), count, want);
}

/* ---- the tests ----------------------------------------------------------------------------------------------- */

/* A batch replaces an old entry with the same key and keeps the others; a
 * binary added alone afterwards replaces a batch's. */
START_TEST(test_batch_replaces_same_key)
{
    char pack[PATH_MAX + 32];
    pack_path(pack, sizeof pack);
    const clops_pack_binary first[] = {bin("-DA", "a1"), bin("-DB", "b1"),
                                       {"max_unpooling.cl", "-DC", "c1", 2}};
    add_ok(pack, first, 3, 3);
    const clops_pack_binary second[] = {bin("-DB", "b2"), bin("-DD", "d2")};
    add_ok(pack, second, 2, 4);
    expect_entry(pack, "-DA", "a1");
    expect_entry(pack, "-DB", "b2");
    expect_entry(pack, "-DC", "c1");
    expect_entry(pack, "-DD", "d2");
    size_t count = 0;
    ck_assert(clops_pack_add_binary(pack, 0, "depth_space.cl", "-DD", "d3", 2, &count) == CLOPS_SUCCESS);
    ck_assert_uint_eq(count, 4);
    expect_entry(pack, "-DD", "d3");
    expect_entry(pack, "-DB", "b2");
    ck_assert_int_eq(temps_in(g_root, NULL, 0), 0);
}
END_TEST

/* Of binaries in one batch for one program, the last wins, and the pack holds it once. */
START_TEST(test_batch_duplicates_last_wins)
{
    char pack[PATH_MAX + 32];
    pack_path(pack, sizeof pack);
    const clops_pack_binary b[] = {bin("-DX", "first"), bin("-DY", "y"), bin("-DX", "second"), bin("-DX", "last")};
    add_ok(pack, b, 4, 2);
    expect_entry(pack, "-DX", "last");
    expect_entry(pack, "-DY", "y");
}
END_TEST

/* A pack of `n` crafted entries (empty payloads) at `pack`; its bytes in `*bytes`. */
static size_t write_full_pack(const char *pack, size_t n, unsigned char **bytes)
{
    unsigned char *p = malloc(16 + n * (8 + CLOPS_CACHE_ENTRY_HEADER_BYTES + 40));
    ck_assert(p != NULL);
    memcpy(p, "CLOPSPAK", 8);
    put_le(p + 8, n, 8);
    size_t len = 16;
    for (size_t i = 0; i < n; i++) {
        char key[40];
        const int klen = snprintf(key, sizeof key, "test_pack_add bound %zu", i);
        put_le(p + len, CLOPS_CACHE_ENTRY_HEADER_BYTES + (size_t)klen, 8);
        clops_cache_entry_header(p + len + 8, (const unsigned char *)key, (size_t)klen, NULL, 0);
        memcpy(p + len + 8 + CLOPS_CACHE_ENTRY_HEADER_BYTES, key, (size_t)klen);
        len += 8 + CLOPS_CACHE_ENTRY_HEADER_BYTES + (size_t)klen;
    }
    write_all(pack, p, len);
    *bytes = p;
    return len;
}

/* The pack at `pack` is still the `len` bytes at `was`, and no temporary file is left. */
static void expect_unchanged(const char *pack, const unsigned char *was, size_t len, const char *label)
{
    size_t now_len;
    unsigned char *now = read_all(pack, &now_len);
    ck_assert_msg(now && now_len == len && memcmp(now, was, len) == 0, "%s: the pack was changed", label);
    ck_assert_int_eq(temps_in(g_root, NULL, 0), 0);
    free(now);
}

/* The limit counts the pack as it would be: 65,535 entries and two new ones are
 * refused with the old pack unchanged (as a malformed pack is, and 65,536 and
 * one); two binaries for one program are one entry, and make exactly 65,536. */
START_TEST(test_batch_entry_limit)
{
    char pack[PATH_MAX + 32];
    pack_path(pack, sizeof pack);
    size_t count = 99;
    write_all(pack, "NOTAPACK", 8);
    const clops_pack_binary two[] = {bin("-DX", "x"), bin("-DY", "y")};
    clops_status st = clops_pack_add_binaries(pack, 0, two, 2, &count);
    ck_assert_msg(st == CLOPS_ERROR_BAD_PACK && strstr(clops_last_error_message(), "no CLOPSPAK header") && count == 0,
                  "%s (%s)", clops_status_name(st), clops_last_error_message());

    unsigned char *p;
    size_t len = write_full_pack(pack, CLOPS_PACK_MAX_ENTRIES, &p);
    st = clops_pack_add_binary(pack, 0, "depth_space.cl", "-DX", "x", 1, &count);
    ck_assert_msg(st == CLOPS_ERROR_BAD_PACK && strstr(clops_last_error_message(), "65536 other entries already") &&
                      strstr(clops_last_error_message(), "at most 65536"),
                  "%s (%s)", clops_status_name(st), clops_last_error_message());
    expect_unchanged(pack, p, len, "65,536 and one");
    free(p);

    len = write_full_pack(pack, CLOPS_PACK_MAX_ENTRIES - 1, &p);
    st = clops_pack_add_binaries(pack, 0, two, 2, &count);
    ck_assert_msg(st == CLOPS_ERROR_BAD_PACK && strstr(clops_last_error_message(), "65535 other entries already") &&
                      strstr(clops_last_error_message(), "2 would be added") && count == 0,
                  "%s (%s)", clops_status_name(st), clops_last_error_message());
    expect_unchanged(pack, p, len, "65,535 and two");
    free(p);
    const clops_pack_binary same[] = {bin("-DX", "x1"), bin("-DX", "x2")};
    add_ok(pack, same, 2, CLOPS_PACK_MAX_ENTRIES);
    expect_entry(pack, "-DX", "x2");
}
END_TEST

/* A bad item anywhere in a batch is refused by its index before the device is
 * opened, with its own status; the pack is unchanged (or not created) and no
 * file is left behind. */
START_TEST(test_batch_bad_item)
{
    char pack[PATH_MAX + 32];
    pack_path(pack, sizeof pack);
    const clops_pack_binary good = bin("-DA", "a");
    size_t count = 99;
    struct {
        clops_pack_binary item;
        clops_status want;
        const char *message;
    } bad[] = {
        {{"depth_space.cl", "-DZ", "z", 0}, CLOPS_ERROR_BAD_PACK,
         "binaries[2] (depth_space.cl -DZ): a binary of 0 bytes"},
        {{"depth_space.cl", "-DZ", "z", (1024ull << 20) + 1}, CLOPS_ERROR_BAD_PACK,
         "binaries[2] (depth_space.cl -DZ): a binary of 1073741825 bytes"},
        {{"nope.cl", "-DZ", "z", 1}, CLOPS_ERROR_KERNEL_SOURCE_UNAVAILABLE, "binaries[2] (nope.cl -DZ): "},
        {{NULL, "-DZ", "z", 1}, CLOPS_ERROR_NULL_ARGUMENT, "binaries[2]: its source_name is NULL"},
        {{"depth_space.cl", NULL, "z", 1}, CLOPS_ERROR_NULL_ARGUMENT, "binaries[2]: its build_options is NULL"},
        {{"depth_space.cl", "-DZ", NULL, 1}, CLOPS_ERROR_NULL_ARGUMENT, "binaries[2]: its binary is NULL"},
    };
    for (int exists = 0; exists < 2; exists++) {
        unlink(pack);
        if (exists) add_ok(pack, &good, 1, 1);
        size_t len = 0;
        unsigned char *was = exists ? read_all(pack, &len) : NULL;
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            const clops_pack_binary batch[] = {bin("-DB", "b"), bin("-DC", "c"), bad[i].item, bin("-DD", "d")};
            const clops_status st = clops_pack_add_binaries(pack, 0, batch, 4, &count);
            ck_assert_msg(st == bad[i].want && strstr(clops_last_error_message(), bad[i].message) && count == 0,
                          "case %zu: %s (%s)", i, clops_status_name(st), clops_last_error_message());
            if (exists) expect_unchanged(pack, was, len, "a bad item");
            else ck_assert_msg(access(pack, F_OK) != 0, "case %zu created the pack", i);
            ck_assert_int_eq(temps_in(g_root, NULL, 0), 0);
        }
        free(was);
    }
    clops_status st = clops_pack_add_binaries(pack, 0, &good, 0, &count);
    ck_assert_msg(st == CLOPS_ERROR_BAD_PACK && strstr(clops_last_error_message(), "0 binaries"), "n == 0: %s (%s)",
                  clops_status_name(st), clops_last_error_message());
    st = clops_pack_add_binaries(pack, 0, NULL, 1, &count);
    ck_assert_int_eq(st, CLOPS_ERROR_NULL_ARGUMENT);
    st = clops_pack_add_binaries(NULL, 0, &good, 1, &count);
    ck_assert_int_eq(st, CLOPS_ERROR_NULL_ARGUMENT);
    expect_entry(pack, "-DA", "a");
}
END_TEST

/* ---- R8: adders running at once ------------------------------------------------------------------------------ */

#define ADDERS 4
#define ADDER_ROUNDS 25
#define THREAD_ROUNDS 6

/* How many entries of the pack `pack` (`len` bytes) have the key `key` (the
 * whole key) and the payload `key`, and the pack's entry count. */
static int key_count(const unsigned char *pack, size_t len, const char *key, uint64_t *entries)
{
    ck_assert(len >= 16 && memcmp(pack, "CLOPSPAK", 8) == 0);
    *entries = clops_get_u64(pack + 8);
    int matches = 0;
    size_t pos = 16;
    for (uint64_t i = 0; i < *entries; i++) {
        ck_assert(pos + 8 <= len);
        const size_t elen = (size_t)clops_get_u64(pack + pos);
        const unsigned char *k, *payload;
        size_t klen, n;
        ck_assert(pos + 8 + elen <= len && clops_cache_entry_parse(pack + pos + 8, elen, &k, &klen, &payload, &n));
        matches += klen == strlen(key) && memcmp(k, key, klen) == 0 && n == klen && memcmp(payload, key, n) == 0;
        pos += 8 + elen;
    }
    ck_assert_msg(pos == len, "trailing bytes after the pack's entries");
    return matches;
}

/* No lock file stays beside the pack, and no temporary file. */
static void expect_no_leftovers(const char *pack)
{
    char lock[PATH_MAX + 64];
    snprintf(lock, sizeof lock, "%s.lock", pack);
    ck_assert_msg(!exists(lock), "%s stayed", lock);
    ck_assert_int_eq(temps_in(g_root, NULL, 0), 0);
}

/* Processes adding entries to one pack at once, one entry per call, each many
 * times (clops_pack_add: no device is needed, so the children of this process
 * may call it), keep every entry: each read-merge-rename waits for the others'.
 * A lock file left by a killed adder is taken over and removed. */
START_TEST(test_concurrent_processes_keep_every_entry)
{
    char pack[PATH_MAX + 32], lock[PATH_MAX + 64];
    pack_path(pack, sizeof pack);
    snprintf(lock, sizeof lock, "%s.lock", pack);
    write_all(lock, "", 0); /* a killed adder's */
    pid_t pids[ADDERS];
    for (int w = 0; w < ADDERS; w++) {
        pids[w] = fork();
        ck_assert_msg(pids[w] >= 0, "fork");
        if (pids[w] == 0) {
            for (int r = 0; r < ADDER_ROUNDS; r++) {
                char key[64], why[512];
                const int klen = snprintf(key, sizeof key, "test_pack_add adder %d round %d", w, r);
                const clops_pack_new e = {key, (size_t)klen, (const unsigned char *)key, (size_t)klen};
                clops_status st;
                if (clops_pack_add(pack, &e, 1, &st, why, sizeof why) < 0) {
                    fprintf(stderr, "adder %d round %d: %s\n", w, r, why);
                    _exit(4);
                }
            }
            _exit(0);
        }
    }
    for (int w = 0; w < ADDERS; w++) {
        int status = 0;
        ck_assert_msg(waitpid(pids[w], &status, 0) == pids[w] && WIFEXITED(status) && WEXITSTATUS(status) == 0,
                      "adder %d: status %#x", w, status);
    }
    size_t len;
    unsigned char *p = read_all(pack, &len);
    uint64_t entries = 0;
    int missing = 0;
    for (int w = 0; w < ADDERS; w++)
        for (int r = 0; r < ADDER_ROUNDS; r++) {
            char key[64];
            snprintf(key, sizeof key, "test_pack_add adder %d round %d", w, r);
            missing += key_count(p, len, key, &entries) != 1;
        }
    free(p);
    ck_assert_msg(missing == 0 && entries == ADDERS * ADDER_ROUNDS, "%d of %d entries lost; the pack holds %llu",
                  missing, ADDERS * ADDER_ROUNDS, (unsigned long long)entries);
    expect_no_leftovers(pack);
}
END_TEST

typedef struct adder_thread {
    const char *pack;
    int index;
    clops_status st;
    char message[512];
} adder_thread;

static void *add_binaries(void *arg)
{
    adder_thread *a = arg;
    for (int r = 0; r < THREAD_ROUNDS && a->st == CLOPS_SUCCESS; r++) {
        char options[64], payload[64];
        snprintf(options, sizeof options, "-DTEST_THREAD=%d -DTEST_ROUND=%d", a->index, r);
        snprintf(payload, sizeof payload, "thread %d round %d", a->index, r);
        a->st = clops_pack_add_binary(a->pack, 0, "depth_space.cl", options, payload, strlen(payload), NULL);
        if (a->st != CLOPS_SUCCESS) snprintf(a->message, sizeof a->message, "%s", clops_last_error_message());
    }
    return NULL;
}

/* Threads of one process adding binaries to one pack at once through the
 * public API keep every binary. */
START_TEST(test_concurrent_threads_keep_every_binary)
{
    char pack[PATH_MAX + 32];
    pack_path(pack, sizeof pack);
    pthread_t threads[ADDERS];
    adder_thread a[ADDERS];
    for (int t = 0; t < ADDERS; t++) {
        a[t] = (adder_thread){pack, t, CLOPS_SUCCESS, ""};
        ck_assert(pthread_create(&threads[t], NULL, add_binaries, &a[t]) == 0);
    }
    for (int t = 0; t < ADDERS; t++) ck_assert(pthread_join(threads[t], NULL) == 0);
    for (int t = 0; t < ADDERS; t++)
        ck_assert_msg(a[t].st == CLOPS_SUCCESS, "thread %d: %s (%s)", t, clops_status_name(a[t].st), a[t].message);
    for (int t = 0; t < ADDERS; t++)
        for (int r = 0; r < THREAD_ROUNDS; r++) {
            char options[64], payload[64];
            snprintf(options, sizeof options, "-DTEST_THREAD=%d -DTEST_ROUND=%d", t, r);
            snprintf(payload, sizeof payload, "thread %d round %d", t, r);
            expect_entry(pack, options, payload);
        }
    size_t len;
    unsigned char *p = read_all(pack, &len);
    ck_assert_uint_eq(clops_get_u64(p + 8), ADDERS * THREAD_ROUNDS);
    free(p);
    expect_no_leftovers(pack);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pack_add");
    TCase *tc = tc_fixture_case(s, "adding binaries to a pack", setup, teardown);
    TC_TESTS(tc, test_batch_replaces_same_key, test_batch_duplicates_last_wins, test_batch_entry_limit,
             test_batch_bad_item, test_concurrent_processes_keep_every_entry,
             test_concurrent_threads_keep_every_binary);
    return cache_suite_main(s);
}
