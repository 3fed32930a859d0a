/*
 * test_pack_add.c - adding device binaries to a kernel pack
 * (clops_pack_add_binaries, clops_pack_add_binary its case of one), on
 * device 0: a batch replaces the old entries with its keys, the last of
 * its own duplicates wins, the entry limit (CLOPS_PACK_MAX_ENTRIES) counts the
 * pack as it would be afterwards and is refused before a byte is written, and
 * a bad item (NULL, empty or oversized binary, unknown source) is refused by
 * its index with the pack unchanged and no file left behind; adders running at
 * once on one pack (processes and threads) keep every entry (R8); a binary
 * whose source and options are not a program clops asks for on the device is
 * refused, and every program clops lists is accepted (R7). The binaries'
 * options are real programs of device 0 (program(k)). Shared fixtures:
 * cache_fixture.h.
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
    char want[1100];
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

/* ---- programs clops asks for on device 0 --------------------------------------------------------------------- */

/* The programs clops_programs_list names on device 0 for `sel`, as (source, options) pairs, each once. */
typedef struct programs {
    char **source, **options;
    size_t count;
} programs;

static void listed(void *user, const char *source, const char *options)
{
    programs *l = user;
    for (size_t i = 0; i < l->count; i++) /* a program is named once per descriptor that needs it */
        if (strcmp(l->options[i], options) == 0 && strcmp(l->source[i], source) == 0) return;
    l->source = realloc(l->source, (l->count + 1) * sizeof *l->source);
    l->options = realloc(l->options, (l->count + 1) * sizeof *l->options);
    ck_assert(l->source && l->options);
    l->source[l->count] = strdup(source);
    l->options[l->count] = strdup(options);
    ck_assert(l->source[l->count] && l->options[l->count]);
    l->count++;
}

static programs list_programs(const clops_program_selection *sel)
{
    clops_context *ctx = NULL;
    clops_status st = clops_context_create_device(0, &ctx);
    ck_assert_msg(st == CLOPS_SUCCESS, "device 0: %s (%s)", clops_status_name(st), clops_last_error_message());
    programs l = {NULL, NULL, 0};
    st = clops_programs_list(ctx, sel, listed, &l);
    clops_context_free(ctx);
    ck_assert_msg(st == CLOPS_SUCCESS && l.count > 0, "clops_programs_list: %s, %zu programs", clops_status_name(st),
                  l.count);
    return l;
}

static void programs_free(programs *l)
{
    for (size_t i = 0; i < l->count; i++) free(l->source[i]), free(l->options[i]);
    free(l->source);
    free(l->options);
}

/* The options of device 0's k-th DepthToSpace/SpaceToDepth program of UINT8 (depth_space.cl); kept for the process. */
static const char *program(size_t k)
{
    static programs l;
    if (!l.count) {
        static const clops_data_type u8[] = {CLOPS_DATA_TYPE_UINT8};
        const clops_program_selection sel = {CLOPS_SELECT_DEPTH_TO_SPACE | CLOPS_SELECT_SPACE_TO_DEPTH, u8, 1,
                                             NULL, 0, 0, NULL, 0};
        l = list_programs(&sel);
        for (size_t i = 0; i < l.count; i++) ck_assert_str_eq(l.source[i], "depth_space.cl");
    }
    ck_assert_msg(k < l.count, "device 0 lists %zu programs, not %zu", l.count, k + 1);
    return l.options[k];
}

/* The options of one of device 0's MaxUnpooling programs (max_unpooling.cl). */
static const char *unpool_program(void)
{
    static programs l;
    if (!l.count) {
        static const clops_data_type u8[] = {CLOPS_DATA_TYPE_UINT8};
        const clops_program_selection sel = {CLOPS_SELECT_MAX_UNPOOLING, u8, 1, NULL, 0, CLOPS_SELECT_PACKED, NULL, 0};
        l = list_programs(&sel);
        ck_assert_str_eq(l.source[0], "max_unpooling.cl");
    }
    return l.options[0];
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
    const char *A = program(0), *B = program(1), *C = unpool_program(), *D = program(2);
    const clops_pack_binary first[] = {bin(A, "a1"), bin(B, "b1"), {"max_unpooling.cl", C, "c1", 2}};
    add_ok(pack, first, 3, 3);
    const clops_pack_binary second[] = {bin(B, "b2"), bin(D, "d2")};
    add_ok(pack, second, 2, 4);
    expect_entry(pack, A, "a1");
    expect_entry(pack, B, "b2");
    expect_entry(pack, C, "c1");
    expect_entry(pack, D, "d2");
    size_t count = 0;
    ck_assert(clops_pack_add_binary(pack, 0, "depth_space.cl", D, "d3", 2, &count) == CLOPS_SUCCESS);
    ck_assert_uint_eq(count, 4);
    expect_entry(pack, D, "d3");
    expect_entry(pack, B, "b2");
    ck_assert_int_eq(temps_in(g_root, NULL, 0), 0);
}
END_TEST

/* Of binaries in one batch for one program, the last wins, and the pack holds it once. */
START_TEST(test_batch_duplicates_last_wins)
{
    char pack[PATH_MAX + 32];
    pack_path(pack, sizeof pack);
    const char *X = program(0), *Y = program(1);
    const clops_pack_binary b[] = {bin(X, "first"), bin(Y, "y"), bin(X, "second"), bin(X, "last")};
    add_ok(pack, b, 4, 2);
    expect_entry(pack, X, "last");
    expect_entry(pack, Y, "y");
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
    const char *X = program(0), *Y = program(1);
    const clops_pack_binary two[] = {bin(X, "x"), bin(Y, "y")};
    clops_status st = clops_pack_add_binaries(pack, 0, two, 2, &count);
    ck_assert_msg(st == CLOPS_ERROR_BAD_PACK && strstr(clops_last_error_message(), "no CLOPSPAK header") && count == 0,
                  "%s (%s)", clops_status_name(st), clops_last_error_message());

    unsigned char *p;
    size_t len = write_full_pack(pack, CLOPS_PACK_MAX_ENTRIES, &p);
    st = clops_pack_add_binary(pack, 0, "depth_space.cl", X, "x", 1, &count);
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
    const clops_pack_binary same[] = {bin(X, "x1"), bin(X, "x2")};
    add_ok(pack, same, 2, CLOPS_PACK_MAX_ENTRIES);
    expect_entry(pack, X, "x2");
}
END_TEST

/* A bad item anywhere in a batch is refused by its index before the device is
 * opened, with its own status; the pack is unchanged (or not created) and no
 * file is left behind. */
START_TEST(test_batch_bad_item)
{
    char pack[PATH_MAX + 32];
    pack_path(pack, sizeof pack);
    const clops_pack_binary good = bin(program(0), "a");
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
            const clops_pack_binary batch[] = {bin(program(1), "b"), bin(program(2), "c"), bad[i].item,
                                               bin(program(3), "d")};
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
    expect_entry(pack, program(0), "a");
}
END_TEST

/* R7: a binary whose (source, options) is not a program clops asks for on the
 * device - a listed line with one typo, words that are no build options, none,
 * another source's options, a block past the specialised ones (those run the
 * portable program), the portable program with other options - is refused by
 * its index, naming its options, with CLOPS_ERROR_INVALID_SETTING; the pack is
 * unchanged (or not created). It said CLOPS_SUCCESS, and the entry was never
 * looked up. */
START_TEST(test_batch_not_a_program)
{
    char pack[PATH_MAX + 32];
    pack_path(pack, sizeof pack);
    char typo[1100], block17[1100];
    snprintf(typo, sizeof typo, "%s", program(0));
    char *chunk = strstr(typo, "-DCHUNK=");
    ck_assert(chunk != NULL);
    chunk[8] = chunk[8] == '9' ? '8' : (char)(chunk[8] + 1); /* one digit off */
    snprintf(block17, sizeof block17, "%s", program(0));
    char *block = strstr(block17, "-DBLOCK=");
    ck_assert(block != NULL);
    memmove(block + 10, block + 9, strlen(block + 9) + 1); /* -DBLOCK=1u... -> -DBLOCK=17u... */
    memcpy(block + 8, "17", 2);
    ck_assert_msg(strstr(block17, "-DBLOCK=17u ") != NULL, "%s", block17);
    const clops_pack_binary bad[] = {
        {"depth_space.cl", typo, "z", 1},
        {"depth_space.cl", "these are not build options", "z", 1},
        {"depth_space.cl", "", "z", 1},
        {"depth_space.cl", unpool_program(), "z", 1},
        {"max_unpooling.cl", program(0), "z", 1},
        {"depth_space.cl", block17, "z", 1},
        {CLOPS_PORTABLE_SOURCE, "-cl-std=CL2.0", "z", 1},
        {CLOPS_PORTABLE_SOURCE, "", "z", 1},
    };
    size_t count = 99;
    for (int exists = 0; exists < 2; exists++) {
        unlink(pack);
        if (exists) add_ok(pack, (const clops_pack_binary[]){bin(program(0), "a")}, 1, 1);
        size_t len = 0;
        unsigned char *was = exists ? read_all(pack, &len) : NULL;
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            const clops_pack_binary batch[] = {bin(program(1), "b"), {CLOPS_PORTABLE_SOURCE, CLOPS_PORTABLE_OPTIONS,
                                               "p", 1}, bad[i], bin(program(3), "d")};
            const clops_status st = clops_pack_add_binaries(pack, 0, batch, 4, &count);
            char want[1200];
            snprintf(want, sizeof want, "binaries[2] (%s %.400s): not a program clops asks for", bad[i].source_name,
                     bad[i].build_options);
            ck_assert_msg(st == CLOPS_ERROR_INVALID_SETTING && strstr(clops_last_error_message(), want) && count == 0,
                          "case %zu (%s \"%s\"): %s (%s)", i, bad[i].source_name, bad[i].build_options,
                          clops_status_name(st), clops_last_error_message());
            /* alone, through the call of one */
            const clops_status one = clops_pack_add_binary(pack, 0, bad[i].source_name, bad[i].build_options, "z", 1,
                                                           &count);
            ck_assert_msg(one == CLOPS_ERROR_INVALID_SETTING && strstr(clops_last_error_message(), "the binary (") &&
                              count == 0,
                          "case %zu alone: %s (%s)", i, clops_status_name(one), clops_last_error_message());
            if (exists) expect_unchanged(pack, was, len, "a binary that is no program");
            else ck_assert_msg(access(pack, F_OK) != 0, "case %zu created the pack", i);
            ck_assert_int_eq(temps_in(g_root, NULL, 0), 0);
        }
        free(was);
    }
}
END_TEST

/* R7, the other side: every program clops lists on device 0 is accepted - the
 * whole default listing, blocks past 8 (9 to 16, listed with --blocks), windows
 * past 4x4 (listed with --windows) and the portable program - in one batch. */
START_TEST(test_batch_every_listed_program)
{
    char pack[PATH_MAX + 32];
    pack_path(pack, sizeof pack);
    static const uint32_t blocks[] = {9, 16}, windows[] = {9, 9, 1, 7};
    static const clops_data_type u16[] = {CLOPS_DATA_TYPE_UINT16};
    const clops_program_selection sels[] = {
        {0, NULL, 0, NULL, 0, 0, NULL, 0},
        {CLOPS_SELECT_DEPTH_TO_SPACE | CLOPS_SELECT_SPACE_TO_DEPTH, NULL, 0, blocks, 2, 0, NULL, 0},
        {CLOPS_SELECT_MAX_UNPOOLING, u16, 1, NULL, 0, 0, windows, 2},
    };
    size_t total = 0, cap = 1;
    clops_pack_binary *b = malloc(sizeof *b);
    ck_assert(b != NULL);
    b[total++] = (clops_pack_binary){CLOPS_PORTABLE_SOURCE, CLOPS_PORTABLE_OPTIONS, "p", 1};
    programs l[3];
    for (int s = 0; s < 3; s++) {
        l[s] = list_programs(&sels[s]);
        for (size_t i = 0; i < l[s].count; i++) {
            if (total == cap) b = realloc(b, (cap *= 2) * sizeof *b);
            ck_assert(b != NULL);
            b[total++] = (clops_pack_binary){l[s].source[i], l[s].options[i], "x", 1};
        }
    }
    ck_assert_msg(l[1].count > 0 && l[2].count > 0, "blocks 9 and 16: %zu programs; windows: %zu", l[1].count,
                  l[2].count);
    size_t count = 0;
    const clops_status st = clops_pack_add_binaries(pack, 0, b, total, &count);
    ck_assert_msg(st == CLOPS_SUCCESS && count > 1000, "%zu listed programs: %s (%s), %zu entries", total,
                  clops_status_name(st), clops_last_error_message(), count);
    for (int s = 0; s < 3; s++) programs_free(&l[s]);
    free(b);
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
    const char *options[THREAD_ROUNDS]; /* programs of device 0: program() is not called from the threads */
    clops_status st;
    char message[512];
} adder_thread;

static void *add_binaries(void *arg)
{
    adder_thread *a = arg;
    for (int r = 0; r < THREAD_ROUNDS && a->st == CLOPS_SUCCESS; r++) {
        char payload[64];
        snprintf(payload, sizeof payload, "thread %d round %d", a->index, r);
        a->st = clops_pack_add_binary(a->pack, 0, "depth_space.cl", a->options[r], payload, strlen(payload), NULL);
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
        a[t] = (adder_thread){pack, t, {NULL}, CLOPS_SUCCESS, ""};
        for (int r = 0; r < THREAD_ROUNDS; r++) a[t].options[r] = program((size_t)(t * THREAD_ROUNDS + r));
        ck_assert(pthread_create(&threads[t], NULL, add_binaries, &a[t]) == 0);
    }
    for (int t = 0; t < ADDERS; t++) ck_assert(pthread_join(threads[t], NULL) == 0);
    for (int t = 0; t < ADDERS; t++)
        ck_assert_msg(a[t].st == CLOPS_SUCCESS, "thread %d: %s (%s)", t, clops_status_name(a[t].st), a[t].message);
    for (int t = 0; t < ADDERS; t++)
        for (int r = 0; r < THREAD_ROUNDS; r++) {
            char payload[64];
            snprintf(payload, sizeof payload, "thread %d round %d", t, r);
            expect_entry(pack, a[t].options[r], payload);
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
             test_batch_bad_item, test_batch_not_a_program, test_batch_every_listed_program,
             test_concurrent_processes_keep_every_entry,
             test_concurrent_threads_keep_every_binary);
    return cache_suite_main(s);
}
