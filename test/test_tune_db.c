/*
 * test_tune_db.c - the tuning database's writers: processes recording results
 * at once keep every result (lock, re-read, merge, atomic write), removal of a
 * variant's entry, a tuning run cut short keeps what it had measured, and the
 * vector-bytes field: written, read back, and absent from older files; a file
 * that is not a tuning database this version knows (or cannot be read) is
 * never replaced, by a record or by clops_tune_with_options (R3).
 * Shared fixtures: cache_fixture.h.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache_fixture.h"
#include "store/tune_db.h"

#define WRITERS 4
#define RESULTS_PER_WRITER 25

static clops_tuning_entry entry(int writer, int i)
{
    clops_tuning_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.key, sizeof e.key, "depth_to_space -DTEST_WRITER=%d -DTEST_RESULT=%d", writer, i);
    e.value.chunk = (unsigned)(writer * 100 + i + 1);
    e.value.local[0] = e.value.local[1] = e.value.local[2] = 1;
    e.value.loop = i % 4 ? CLOPS_LOOP_VECTORS : CLOPS_LOOP_ELEMENTS;
    e.value.vector_bytes = i % 4 ? 4u << (i % 4) : 0; /* 0 (the class's), 8, 16, 32 */
    e.gbps = 2.0, e.default_gbps = 1.0;
    return e;
}

/* The entry for `key` in the table, or NULL. */
static const clops_tuning_entry *find(const struct clops_tuning_table *t, const char *key)
{
    for (size_t i = 0; i < t->count; i++)
        if (strcmp(t->entries[i].key, key) == 0) return &t->entries[i];
    return NULL;
}

START_TEST(test_concurrent_writers_keep_every_result)
{
    clops_context *ctx = new_ctx();
    pid_t pids[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        pids[w] = fork();
        ck_assert_msg(pids[w] >= 0, "fork");
        if (pids[w] == 0) { /* each writer a process of its own, as separate tuners are; the parent's context
                               is copied (a new device context is refused in a forked child: issue 38 Q2), and
                               recording calls no OpenCL */
            for (int i = 0; i < RESULTS_PER_WRITER; i++) {
                const clops_tuning_entry e = entry(w, i);
                if (clops_tuning_record(ctx, &e, true) != CLOPS_SUCCESS) _exit(4);
            }
            _exit(0);
        }
    }
    for (int w = 0; w < WRITERS; w++) {
        int status = 0;
        ck_assert_msg(waitpid(pids[w], &status, 0) == pids[w] && WIFEXITED(status) && WEXITSTATUS(status) == 0,
                      "writer %d: status %#x", w, status);
    }
    struct clops_tuning_table *t = clops_tuning_table_load(ctx);
    ck_assert_ptr_nonnull(t);
    ck_assert_msg(t->count == WRITERS * RESULTS_PER_WRITER, "%zu entries after %d writers of %d results each",
                  t->count, WRITERS, RESULTS_PER_WRITER);
    for (int w = 0; w < WRITERS; w++)
        for (int i = 0; i < RESULTS_PER_WRITER; i++) {
            const clops_tuning_entry want = entry(w, i), *got = find(t, want.key);
            ck_assert_msg(got && got->value.chunk == want.value.chunk && got->value.loop == want.value.loop &&
                              got->value.vector_bytes == want.value.vector_bytes,
                          "writer %d result %d: %s", w, i, got ? "wrong chunk, loop or vector bytes" : "missing");
        }
    clops_tuning_table_free(t);
    const dir_scan s = scan_dir();
    ck_assert_msg(s.tunes == 1 && s.temps == 0, "%d tuning files, %d temporary files", s.tunes, s.temps);
}
END_TEST

START_TEST(test_record_replaces_and_removes)
{
    clops_context *ctx = new_ctx();
    clops_tuning_entry a = entry(0, 0), b = entry(0, 1);
    ck_assert_int_eq(clops_tuning_record(ctx, &a, true), CLOPS_SUCCESS);
    ck_assert_int_eq(clops_tuning_record(ctx, &b, true), CLOPS_SUCCESS);
    a.value.chunk = 77;
    a.value.loop = CLOPS_LOOP_VECTORS;
    a.value.vector_bytes = 4;
    ck_assert_int_eq(clops_tuning_record(ctx, &a, true), CLOPS_SUCCESS); /* a new winner for a's variant */
    ck_assert_int_eq(clops_tuning_record(ctx, &b, false), CLOPS_SUCCESS); /* b's winner no longer wins */
    struct clops_tuning_table *t = clops_tuning_table_load(ctx);
    const clops_tuning_entry *got = find(t, a.key);
    ck_assert_msg(t->count == 1 && got && got->value.chunk == 77 && got->value.vector_bytes == 4,
                  "%zu entries, a's chunk %u, vector bytes %u; want 1 entry, chunk 77, 4 bytes", t->count,
                  got ? got->value.chunk : 0, got ? got->value.vector_bytes : 0);
    clops_tuning_table_free(t);
    /* A read-only cache takes no results. */
    setenv("CLOPS_CACHE", "ro", 1);
    clops_context *ro = new_ctx();
    ck_assert_int_eq(clops_tuning_record(ro, &b, true), CLOPS_ERROR_CACHE_UNAVAILABLE);
}
END_TEST

/* A tuner stopped after its third result (as by a kill: _exit, no cleanup):
 * the database holds exactly the kept ones among the three. The tuner runs in a
 * fresh process (this program again, TEST_TUNE_CHILD=device): a forked copy of
 * a process that has used PoCL's threads cannot run kernels. */
static int g_report_fd = -1;

static void stop_after_three(void *user, const clops_tune_result *r, unsigned done, unsigned total)
{
    (void)user, (void)total;
    const char kept = r->kept ? 'k' : '-';
    if (write(g_report_fd, &kept, 1) != 1) _exit(5);
    if (done == 3) _exit(0);
}

/* The child: tunes quickly, reporting each result's kept flag on stdout. */
static int tune_child(unsigned device)
{
    g_report_fd = STDOUT_FILENO;
    clops_tune(device, 1, stop_after_three, NULL);
    return 6; /* not stopped: fewer than three results */
}

START_TEST(test_interrupted_tune_keeps_results)
{
    clops_context *ctx = new_ctx();
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    const pid_t pid = fork();
    ck_assert_msg(pid >= 0, "fork");
    if (pid == 0) {
        char device[16];
        snprintf(device, sizeof device, "%u", ctx->info.index);
        setenv("TEST_TUNE_CHILD", device, 1);
        dup2(fds[1], STDOUT_FILENO);
        execl("/proc/self/exe", "test_tune_db", (char *)NULL);
        _exit(7);
    }
    close(fds[1]);
    char kept[3];
    size_t got = 0;
    for (ssize_t n; got < 3 && (n = read(fds[0], kept + got, 3 - got)) > 0;) got += (size_t)n;
    close(fds[0]);
    int status = 0;
    ck_assert_msg(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "tuner: status %#x", status);
    ck_assert_msg(got == 3, "the tuner reported %zu results before it stopped", got);
    const int want = (kept[0] == 'k') + (kept[1] == 'k') + (kept[2] == 'k');
    struct clops_tuning_table *t = clops_tuning_table_load(ctx);
    ck_assert_msg(t && (int)t->count == want, "%zu entries after an interrupted tune, want %d (kept: %.3s)",
                  t ? t->count : 0, want, kept);
    clops_tuning_table_free(t);
    const dir_scan s = scan_dir();
    ck_assert_msg(s.temps == 0, "%d temporary files left", s.temps);
}
END_TEST

/* A database written before the loop and the vector bytes existed loads (they
 * read as 0: the default loop, the device class's width), a bad width refuses
 * its line only, and the next result recorded rewrites every line with both. */
START_TEST(test_older_lines_load)
{
    clops_context *ctx = new_ctx();
    char path[PATH_MAX + 64], text[1024];
    tune_file_path(ctx, path, sizeof path);
    snprintf(text, sizeof text,
             "clops-tune 1\ndevice %s\n"
             "k5 -DA=1\t5\t1,2,1\t2.000\t1.000\n"            /* before the loop */
             "k6 -DA=1\t6\t1,2,1\t2.000\t1.000\t2\n"         /* before the vector bytes */
             "k7 -DA=1\t7\t1,2,1\t2.000\t1.000\t2\t8\n"      /* this version */
             "k8 -DA=1\t8\t1,2,1\t2.000\t1.000\t2\t12\n",    /* a bad width: refused */
             clops_context_device_name(ctx));
    write_all(path, text, strlen(text));
    static const unsigned want_loop[3] = {CLOPS_LOOP_DEFAULT, CLOPS_LOOP_VECTORS, CLOPS_LOOP_VECTORS};
    static const unsigned want_bytes[3] = {0, 0, 8};
    for (int round = 0; round < 2; round++) {
        struct clops_tuning_table *t = clops_tuning_table_load(ctx);
        ck_assert_msg(t && t->count == 3 + (size_t)round && !find(t, "k8 -DA=1"),
                      "round %d: %zu entries (k8 %s), want %d without k8", round, t ? t->count : 0,
                      t && find(t, "k8 -DA=1") ? "read" : "refused", 3 + round);
        for (int k = 0; k < 3; k++) {
            char key[16];
            snprintf(key, sizeof key, "k%d -DA=1", 5 + k);
            const clops_tuning_entry *e = find(t, key);
            ck_assert_msg(e && e->value.chunk == 5u + (unsigned)k && e->value.local[1] == 2 &&
                              (unsigned)e->value.loop == want_loop[k] && e->value.vector_bytes == want_bytes[k],
                          "round %d, %s: %s chunk %u loop %d vector bytes %u; want %d, %u, %u", round, key,
                          e ? "read," : "missing", e ? e->value.chunk : 0, e ? (int)e->value.loop : -1,
                          e ? e->value.vector_bytes : 0, 5 + k, want_loop[k], want_bytes[k]);
        }
        clops_tuning_table_free(t);
        if (round == 0) { /* a result recorded by this version rewrites the file in its format */
            const clops_tuning_entry e = entry(0, 1);
            ck_assert_int_eq(clops_tuning_record(ctx, &e, true), CLOPS_SUCCESS);
        }
    }
    size_t len = 0;
    char *now = (char *)read_all(path, &len);
    now = realloc(now, len + 1);
    now[len] = '\0';
    ck_assert_msg(strstr(now, "k5 -DA=1\t5\t1,2,1\t2.000\t1.000\t0\t0\n") &&
                      strstr(now, "k7 -DA=1\t7\t1,2,1\t2.000\t1.000\t2\t8\n") && !strstr(now, "k8 "),
                  "the database after a record: %s", now);
    free(now);
}
END_TEST

/* ---- R3: files that are not tuning databases ------------------------------------------------------------------ */

/* `path` holds exactly the `len` bytes at `was` (a NULL `was`: `len` zero bytes). */
static void expect_bytes(const char *path, const void *was, size_t len, const char *label)
{
    size_t now_len = 0;
    unsigned char *now = read_all(path, &now_len);
    bool same = now && now_len == len;
    for (size_t i = 0; same && i < len; i++) same = now[i] == (was ? ((const unsigned char *)was)[i] : 0);
    ck_assert_msg(same, "%s: %s was changed (%zu bytes, was %zu)", label, path, now_len, len);
    free(now);
}

/* Recording into `path` (the database of `ctx`) fails with CLOPS_ERROR_CACHE_IO,
 * naming the file and `why`, and leaves it as `was` (`len` bytes), with no
 * temporary file beside it; lookups read it as empty. */
static void expect_refused(clops_context *ctx, const char *path, const void *was, size_t len, const char *why,
                           const char *label)
{
    const clops_tuning_entry e = entry(0, 0);
    const clops_status st = clops_tuning_record(ctx, &e, true);
    const char *msg = clops_last_error_message();
    ck_assert_msg(st == CLOPS_ERROR_CACHE_IO && strstr(msg, path) && strstr(msg, why) && strstr(msg, "not replaced"),
                  "%s: %s (%s)", label, clops_status_name(st), msg);
    expect_bytes(path, was, len, label);
    ck_assert_int_eq(temps_in(g_root, NULL, 0), 0);
    ck_assert_int_eq(temps_in(g_dir, NULL, 0), 0);
    struct clops_tuning_table *t = clops_tuning_table_load(ctx);
    ck_assert_msg(t && t->count == 0, "%s: lookups read %zu entries", label, t ? t->count : 0);
    clops_tuning_table_free(t);
}

START_TEST(test_foreign_file_not_replaced)
{
    char db[PATH_MAX + 32];
    snprintf(db, sizeof db, "%s/notes.txt", g_root);
    clops_context *ctx = ctx_with_db(db, g_dir);
    static const struct {
        const char *text, *why, *label;
    } foreign[] = {
        {"my own notes\n", "is not a clops tuning database", "a text file"},
        {"my own notes", "is not a clops tuning database", "one line without a newline"},
        {"#clops-tune 1\nclops-tune 1\n", "is not a clops tuning database", "the magic on the second line"},
        {"clops-tune 2\ndevice x\nk -DA=1\t5\t1,2,1\t2.000\t1.000\n", "\"clops-tune 2\"", "a newer format"},
        {"clops-tune-shared 2\ndevice x\n", "\"clops-tune-shared 2\"", "a newer shared format"},
        {"clops-tune 1x\n", "\"clops-tune 1x\"", "an unknown format line"},
    };
    for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++) {
        write_all(db, foreign[i].text, strlen(foreign[i].text));
        expect_refused(ctx, db, foreign[i].text, strlen(foreign[i].text), foreign[i].why, foreign[i].label);
    }
    /* a file that cannot be read: past the 16 MiB a database may take (sparse) */
    write_all(db, "clops-tune 1\n", 13);
    ck_assert(truncate(db, (17 << 20)) == 0);
    unsigned char *big = calloc(1, 17 << 20);
    ck_assert(big != NULL);
    memcpy(big, "clops-tune 1\n", 13);
    expect_refused(ctx, db, big, 17 << 20, "larger than 16 MiB", "a file of 17 MiB");
    free(big);
    if (geteuid() != 0) { /* root reads any file */
        write_all(db, "my own notes\n", 13);
        ck_assert(chmod(db, 0) == 0);
        const clops_tuning_entry e = entry(0, 0);
        const clops_status st = clops_tuning_record(ctx, &e, true);
        ck_assert_msg(st == CLOPS_ERROR_CACHE_IO && strstr(clops_last_error_message(), db),
                      "an unreadable file: %s (%s)", clops_status_name(st), clops_last_error_message());
        ck_assert(chmod(db, 0600) == 0);
        expect_bytes(db, "my own notes\n", 13, "an unreadable file");
    }
    /* the database in the cache directory is refused the same way */
    clops_context *plain = new_ctx();
    char own[PATH_MAX + 64];
    tune_file_path(plain, own, sizeof own);
    write_all(own, "my own notes\n", 13);
    expect_refused(plain, own, "my own notes\n", 13, "is not a clops tuning database", "the cache's database");
    /* a missing file is created, an empty one filled (nothing to lose) */
    for (int empty = 0; empty < 2; empty++) {
        unlink(db);
        if (empty) write_all(db, "", 0);
        const clops_tuning_entry e = entry(0, 1);
        ck_assert_msg(clops_tuning_record(ctx, &e, true) == CLOPS_SUCCESS, "%s file: %s",
                      empty ? "an empty" : "a missing", clops_last_error_message());
        struct clops_tuning_table *t = clops_tuning_table_load(ctx);
        ck_assert_msg(t && t->count == 1 && find(t, e.key), "%s file: %zu entries", empty ? "an empty" : "a missing",
                      t ? t->count : 0);
        clops_tuning_table_free(t);
    }
}
END_TEST

static void count_progress(void *user, const clops_tune_result *r, unsigned done, unsigned total)
{
    (void)r, (void)done, (void)total;
    ++*(unsigned *)user;
}

/* clops_tune_with_options into a tuning_db naming a user's file fails before it
 * measures anything, naming the file, and the file is as it was. */
START_TEST(test_tune_refuses_foreign_file)
{
    const clops_context *ctx = new_ctx();
    char db[PATH_MAX + 32];
    snprintf(db, sizeof db, "%s/notes.txt", g_root);
    static const char notes[] = "my own notes\n";
    write_all(db, notes, strlen(notes));
    clops_context_options o;
    clops_context_options_init(&o, sizeof o);
    o.tuning_db = db;
    o.cache_dir = g_dir;
    unsigned progress = 0;
    const clops_status st = clops_tune_with_options(&o, ctx->info.index, 1, count_progress, &progress);
    ck_assert_msg(st == CLOPS_ERROR_CACHE_IO && strstr(clops_last_error_message(), db) && progress == 0,
                  "%s (%s), %u variants tuned", clops_status_name(st), clops_last_error_message(), progress);
    expect_bytes(db, notes, strlen(notes), "clops_tune_with_options");
    const dir_scan d = scan_dir(); /* a variant measured would have left its default's program */
    ck_assert_msg(d.entries == 0, "%d programs compiled before the refusal", d.entries);
}
END_TEST

static Suite *tune_db_suite(void)
{
    Suite *s = suite_create("tune_db");
    TCase *tc = cache_case(s, "tune_db");
    tcase_add_test(tc, test_concurrent_writers_keep_every_result);
    tcase_add_test(tc, test_record_replaces_and_removes);
    tcase_add_test(tc, test_interrupted_tune_keeps_results);
    tcase_add_test(tc, test_older_lines_load);
    tcase_add_test(tc, test_foreign_file_not_replaced);
    tcase_add_test(tc, test_tune_refuses_foreign_file);
    return s;
}

int main(void)
{
    const char *child = getenv("TEST_TUNE_CHILD");
    if (child) return tune_child((unsigned)strtoul(child, NULL, 10));
    return cache_suite_main(tune_db_suite());
}
